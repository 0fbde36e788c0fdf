#pragma once
/// @file
/// ModelBuilder: assembling a Model in code (tests, free bodies, worlds) and
/// the target the URDF parser drives.

#include <limits>
#include <string>
#include <vector>

#include "plume/model.hpp"

namespace plume {

/// Description of a joint to add; limits apply to 1-DoF joints only.
struct JointSpec {
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  std::string name;
  JointType type = JointType::Revolute;
  Vec3 axis = Vec3::UnitZ();  ///< normalised by the builder; must not be zero
  double lower = -kInf;       ///< position limits (revolute, prismatic)
  double upper = kInf;
  double velocity = kInf;     ///< velocity limit
  double effort = kInf;       ///< effort limit
  double damping = 0.0;       ///< viscous damping coefficient
  double friction = 0.0;      ///< Coulomb friction

  static JointSpec revolute(std::string name, const Vec3& axis, double lower = -kInf,
                            double upper = kInf);
  static JointSpec continuous(std::string name, const Vec3& axis);
  static JointSpec prismatic(std::string name, const Vec3& axis, double lower = -kInf,
                             double upper = kInf);
  /// Motion in the x–y plane of the joint frame and rotation about its z axis.
  static JointSpec planar(std::string name);
  static JointSpec free_flyer(std::string name);
};

/// What ModelBuilder::build does with mass properties the dynamics can use
/// but no rigid body has: principal moments that violate the triangle
/// inequality (p0 + p1 < p2), and a moving subtree whose mass is a placeholder
/// (below 1e-6 of the model's total mass: a joint that accelerates without
/// bound under any torque). Checked per body, after fixed joints are merged:
/// a 1e-6 kg link welded to a trunk is harmless and not reported. Errors that
/// make the algorithms fail (non-finite numbers, negative mass, an indefinite
/// inertia, a moving subtree with no mass at all) are refused under every
/// policy, every culprit named.
enum class InertiaPolicy {
  Strict,  ///< refuse the model, naming every offending body
  Warn,    ///< load it as written; every offending body listed in Model::warnings()
  Repair   ///< raise the middle principal moment of each body that breaks the triangle
           ///< inequality to p2 − p0 (the smallest single change that makes it a rigid
           ///< body), each repair listed in Model::warnings(); placeholders are warned about
};

/// Parses "strict", "warn" and "repair". @throws plume::Error on anything else.
InertiaPolicy parse_inertia_policy(const std::string& text);
const char* to_string(InertiaPolicy policy);

/// A named configuration to add (ModelBuilder::add_named_configuration):
/// values for some joints by name, the others neutral.
struct NamedConfigurationSpec {
  struct JointValues {
    std::string joint;
    std::vector<double> values;  ///< as many as the joint has coordinates (nq)
    std::string where;           ///< e.g. "robot.srdf:14", starts the messages about this joint
  };
  std::string name;
  std::string group;
  std::vector<JointValues> joints;
};

class ModelBuilder {
 public:
  explicit ModelBuilder(std::string name = "model");

  /// Adds a body hanging from `parent` (an existing body, 0 = world) through
  /// `joint`. `Xtree` is the transform from the parent body frame to the
  /// joint frame at q = 0, which is also the new body's frame; `inertia` is
  /// expressed in that frame. build() adds a frame with the body's name at the
  /// body origin unless a frame of that name was added explicitly.
  /// A rotation of `Xtree` within 1e-10 rad of a signed permutation (a
  /// multiple of 90° about the axes, also when written with rounded angles
  /// such as URDF's rpy = 1.57079632679) is stored as that permutation
  /// exactly; rotations farther off are kept as given.
  /// @returns the new body's index.
  /// @throws ModelError on an unknown parent or a fixed joint kind.
  int add_body(const std::string& name, int parent, const JointSpec& joint, const Transform& Xtree,
              const RigidInertia& inertia);

  /// Adds rigidly attached mass to a body (inertia in that body's frame),
  /// e.g. a link merged through a fixed joint. Body 0 accumulates links welded
  /// to the world: they count in the total mass but never move.
  /// `source` names where the mass comes from (e.g. "link 'foot' (robot.urdf:12)")
  /// in the messages of build(); empty: the body's name.
  void add_inertia(int body, const RigidInertia& inertia, const std::string& source = {});

  /// How build() treats unphysical but usable inertias (default Strict; the
  /// URDF loader and world files set LoadOptions::inertia, default Warn).
  void set_inertia_policy(InertiaPolicy policy) { inertia_policy_ = policy; }
  InertiaPolicy inertia_policy() const { return inertia_policy_; }

  /// Adds a frame attached to `body`; placement is X_frame_body.
  int add_frame(const std::string& name, int body, const Transform& placement);

  /// Adds a collision shape (its `body` and `placement` must be set).
  void add_collision(const CollisionShape& shape);

  /// Appends every body, frame and shape of `model` below `parent`, and its
  /// disabled collision pairs (its named configurations are not: they are
  /// configurations of `model` alone). Bodies
  /// attached to the model's world are attached to `parent` with their Xtree
  /// preceded by `placement` (X_modelworld_parent); names get `prefix`.
  /// Collision shapes come along unless `with_collisions` is false.
  /// @returns the index in the new model of each body of `model` (entry 0 is
  /// `parent`).
  std::vector<int> append_model(const Model& model, int parent, const Transform& placement,
                               const std::string& prefix, bool with_collisions = true);

  /// Adds a named configuration; build() resolves its joints. A joint the
  /// model does not move (unknown, or fixed and merged) is skipped with a
  /// warning, as is a value outside the joint's limits; a wrong number of
  /// values is an error.
  void add_named_configuration(const NamedConfigurationSpec& spec);
  /// Leaves contact between the shapes of links `a` and `b` out of
  /// self-collision. A link that is not a frame of the model is skipped with
  /// a warning at build(); `where` starts that warning.
  void disable_collision(const std::string& a, const std::string& b, const std::string& where = {});
  void set_gravity(const Vec3& g);
  void add_warning(const std::string& warning);
  int nbodies() const { return static_cast<int>(bodies_.size()); }
  const std::string& body_name(int i) const { return bodies_[i].name; }

  /// Validates everything and returns the Model.
  /// @throws ModelError naming the body, joint or frame at fault: duplicate
  /// names, non-finite data, negative mass, an inertia that is not positive
  /// semi-definite, a movable subtree with no mass (H would be singular),
  /// inconsistent limits; under InertiaPolicy::Strict also the inertias the
  /// policy governs. Inertia errors list every offending body.
  Model build() const;

 private:
  void check_inertias(Model& m) const;
  void resolve_semantics(Model& m) const;
  struct BodyRecord {
    std::string name;
    int parent = -1;
    JointSpec joint;
    Transform Xtree;
    RigidInertia inertia;
    std::vector<std::string> sources;  // where its mass comes from, for messages
    bool inertia_checked = false;      // appended from a built Model: policy already applied
  };
  std::string name_;
  std::vector<BodyRecord> bodies_;
  std::vector<Frame> frames_;
  std::vector<CollisionShape> collisions_;
  std::vector<std::string> warnings_;
  std::vector<NamedConfigurationSpec> named_configurations_;
  struct DisabledPair {
    std::string a, b, where;
  };
  std::vector<DisabledPair> disabled_collisions_;
  Vec3 gravity_ = Vec3(0.0, 0.0, -9.81);
  InertiaPolicy inertia_policy_ = InertiaPolicy::Strict;
};

}  // namespace plume
