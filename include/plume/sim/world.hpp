#pragma once
/// @file
/// World: everything a simulation needs to know about the physical scene.
///
/// One Model holds every robot and free body as a separate subtree of the
/// world body (so one q and one v describe the whole scene), plus the static
/// environment (ground planes, boxes …), contact parameters per pair of
/// surfaces, and the initial state. World files (world_file.hpp) and code
/// build it the same way:
///
/// ```cpp
/// plume::WorldBuilder wb;
/// wb.add_model("quad", plume::urdf::load("quadruped.urdf", {plume::urdf::RootJoint::FreeFlyer}));
/// wb.add_environment(plume::ground_plane());
/// wb.set_default_contact({/*mu=*/1.0, /*restitution=*/0.0});
/// plume::World world = wb.build();
/// ```

#include <optional>
#include <string>
#include <vector>

#include "plume/contact/environment.hpp"
#include "plume/model.hpp"

namespace plume {

/// Parameters of the contact between two surfaces.
struct ContactParameters {
  double mu = 0.5;            ///< Coulomb friction coefficient
  double restitution = 0.0;   ///< Newton restitution e ∈ [0, 1]
  double stiffness = 2e5;     ///< compliant model: normal stiffness K [N/m]
  double damping = 2e3;       ///< compliant model: normal damping D [N·s/m] (the default's K and D also act on joint limits, per radian, D capped at 2√(K·H_jj))
  double tangential_stiffness = 2e5;  ///< compliant model: K_t [N/m]
  double tangential_damping = 2e3;    ///< compliant model: D_t [N·s/m]
};

/// A per-pair override: applies to contacts between a surface matching `a`
/// and one matching `b` (either order). A name matches a model name, a link
/// name ("model/link"), a collision shape name, or an environment shape name.
struct ContactPairParameters {
  std::string a, b;
  ContactParameters parameters;
};

/// One robot or free body of the world: its bodies, q and v ranges.
struct WorldModel {
  std::string name;
  int first_body = 0;  ///< its bodies are [first_body, first_body + nbodies)
  int nbodies = 0;
  int q_index = 0, nq = 0;
  int v_index = 0, nv = 0;
  std::string source;  ///< URDF path (or "<code>")
};

class World {
 public:
  /// The combined model (each WorldModel's names prefixed with "name/").
  const Model& model() const { return model_; }
  const std::vector<WorldModel>& models() const { return models_; }
  /// Index of a model by name (−1 if absent).
  int model_index(const std::string& name) const;
  const std::vector<EnvironmentShape>& environment() const { return environment_; }
  const ContactParameters& default_contact() const { return default_contact_; }
  const std::vector<ContactPairParameters>& pair_contacts() const { return pair_contacts_; }
  const VectorX& q0() const { return q0_; }
  const VectorX& v0() const { return v0_; }
  const Vec3& gravity() const { return model_.gravity(); }
  /// Self-collision between bodies of one robot (never parent–child).
  bool self_collision() const { return self_collision_; }

  /// A copy that starts from `q0` [nq] and `v0` [nv] where given (the layout
  /// of q0() and v0()); everything else is shared by value.
  /// @throws WorldError naming the wrong size, the non-finite entry or the
  /// non-unit quaternion.
  World with_initial_state(const std::optional<VectorX>& q0, const std::optional<VectorX>& v0) const;
  /// A copy with another default contact (pair overrides and URDF materials
  /// still refine it). @throws WorldError on invalid parameters (μ < 0, …).
  World with_default_contact(const ContactParameters& parameters) const;
  /// A copy in which `pair` is tried before the world's own pair overrides
  /// (the first match wins). @throws WorldError on invalid parameters.
  World with_pair_contact(const ContactPairParameters& pair) const;

  /// The parameters of the contact between detector shapes named `a` and `b`
  /// (ContactDetector::shapes() names, links and model prefixes), applying
  /// pair overrides over material values over the world default.
  ContactParameters contact_parameters(const std::string& shape_a, const std::string& link_a,
                                       const ContactMaterial& material_a, const std::string& shape_b,
                                       const std::string& link_b, const ContactMaterial& material_b) const;

 private:
  friend class WorldBuilder;
  Model model_;
  std::vector<WorldModel> models_;
  std::vector<EnvironmentShape> environment_;
  ContactParameters default_contact_;
  std::vector<ContactPairParameters> pair_contacts_;
  VectorX q0_, v0_;
  bool self_collision_ = false;
};

class WorldBuilder {
 public:
  WorldBuilder();
  /// Adds a robot or free body. Its root joint (fixed, free-flyer, planar)
  /// is whatever `model` has; names are prefixed with "name/".
  /// `q0`/`v0` default to the neutral configuration and zero.
  /// @throws WorldError on a duplicate name or a wrong-size state.
  int add_model(const std::string& name, const Model& model, const std::optional<VectorX>& q0 = std::nullopt,
                const std::optional<VectorX>& v0 = std::nullopt, const std::string& source = "<code>");
  /// Takes a model out of contact (`enabled` false: its collision shapes are
  /// left out of the world), or back in. A world file says
  /// `<model collision="none">`.
  /// @throws WorldError if no model has that name.
  void set_collision(const std::string& name, bool enabled);
  /// Sets the initial state of an added model.
  void set_state(const std::string& name, const std::optional<VectorX>& q0, const std::optional<VectorX>& v0);
  void add_environment(const EnvironmentShape& shape);
  void set_gravity(const Vec3& g);
  void set_default_contact(const ContactParameters& parameters);
  void add_pair_contact(const ContactPairParameters& pair);
  void set_self_collision(bool on);
  /// @throws WorldError on invalid parameters (μ < 0, e ∉ [0, 1], …), a
  /// non-unit quaternion in the initial state, or a model in contact whose
  /// collision geometry cannot be used: a mesh that was not found, read or
  /// hulled (the message names the link, the file and why), or moving bodies
  /// with no collision shape at all. Such a model needs usable shapes or
  /// set_collision(name, false).
  World build() const;

 private:
  struct Entry {
    std::string name;
    Model model;
    VectorX q0, v0;
    std::string source;
    bool collision = true;
  };
  std::vector<Entry> entries_;
  std::vector<EnvironmentShape> environment_;
  ContactParameters default_contact_;
  std::vector<ContactPairParameters> pair_contacts_;
  Vec3 gravity_ = Vec3(0.0, 0.0, -9.81);
  bool self_collision_ = false;
};

}  // namespace plume
