#pragma once
/// @file
/// Model: the immutable description of a kinematic tree.
///
/// Bodies are numbered 0 … nbodies()−1 with `parent(i) < i`; body 0 is the
/// fixed world. Body i ≥ 1 is connected to its parent by joint i. A Model is
/// built once (by urdf::load or ModelBuilder), never changes afterwards, and can
/// be shared by any number of threads, each with its own Data.

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "plume/contact/shapes.hpp"
#include "plume/joint.hpp"
#include "plume/spatial.hpp"

namespace plume {

/// A named coordinate frame rigidly attached to a body: every URDF link
/// (including links merged through fixed joints) and any user frame.
struct Frame {
  std::string name;
  int body = 0;          ///< body the frame moves with
  Transform placement;   ///< X_frame_body: body coordinates → frame coordinates
};

/// A configuration with a name, e.g. a robot's reference posture from its
/// SRDF `<group_state>` (urdf::LoadOptions::srdf).
struct NamedConfiguration {
  std::string name;
  std::string group;                ///< the SRDF group it was given for (may be empty)
  VectorX q;                        ///< nq values: the named joints set, every other joint neutral
  std::vector<std::string> joints;  ///< the joints it sets, in the order given
};

class ModelBuilder;

class Model {
 public:
  /// An empty model: only the world body.
  Model();

  const std::string& name() const { return name_; }
  /// Number of configuration coordinates (a free-flyer counts 7).
  int nq() const { return nq_; }
  /// Number of velocity coordinates (degrees of freedom).
  int nv() const { return nv_; }
  /// Number of bodies including the world body 0.
  int nbodies() const { return static_cast<int>(parent_.size()); }

  // ---- tree ------------------------------------------------------------
  /// λ(i), the parent of body i (−1 for the world).
  int parent(int i) const { return parent_[body(i)]; }
  const std::vector<int>& parents() const { return parent_; }
  const std::string& body_name(int i) const { return body_names_[body(i)]; }
  /// Xtree[i]: from the parent body frame to joint i's predecessor frame.
  const Transform& Xtree(int i) const { return Xtree_[body(i)]; }
  /// Inertia of body i in its own frame (fixed-joint children merged in).
  /// Body 0 holds the links welded to the world; it never moves.
  const RigidInertia& inertia(int i) const { return inertia_[body(i)]; }
  /// Centre of mass of body i in its own frame, and its rotational inertia
  /// about that point (the same information as inertia(i), in the form the
  /// world-coordinate algorithms transform cheaply).
  const Vec3& body_com(int i) const { return com_[body(i)]; }
  const Mat3& body_inertia_about_com(int i) const { return Ic_[body(i)]; }
  /// Joint i connects body i to parent(i); joint 0 is a placeholder (Fixed).
  const Joint& joint(int i) const { return joints_[body(i)]; }
  /// Is body j in the subtree rooted at body i (i itself included)?
  bool in_subtree(int i, int j) const;
  /// The root body (child of the world) of the subtree that holds body i
  /// (0 for the world itself).
  int subtree_root(int i) const { return subtree_root_[body(i)]; }

  // ---- degrees of freedom --------------------------------------------------
  /// The body that velocity coordinate k belongs to.
  int dof_body(int k) const { return dof_body_[k]; }
  /// The nearest velocity coordinate below k in the tree (−1 if none): the
  /// sparsity pattern of H, λ of the LTDL factorisation (RBDA §6.5).
  int dof_parent(int k) const { return dof_parent_[k]; }
  /// The first dof s ≤ k of the run s, s+1, …, k in which each dof's parent is
  /// the one before it. The ancestors of k (and k itself) are a few such
  /// contiguous runs: [dof_run_start(k), k], then the run ending at
  /// dof_parent(dof_run_start(k)), and so on.
  int dof_run_start(int k) const { return dof_run_start_[k]; }
  /// The largest dof in the subtree of dof k (k itself included): every dof
  /// that has k among its ancestors is in (k, dof_subtree_end(k)], but that
  /// range may hold other dofs too when bodies are not numbered depth first.
  int dof_subtree_end(int k) const { return dof_subtree_end_[k]; }
  /// Are the dofs numbered depth first (every subtree's dofs one contiguous
  /// range [k, dof_subtree_end(k)])? True for the URDF loader's numbering.
  bool dofs_depth_first() const { return dofs_depth_first_; }

  // ---- limits and passive forces (from the URDF) ------------------------------
  /// Lower position limit per configuration coordinate (−inf when none).
  const VectorX& lower_position_limit() const { return lower_; }
  /// Upper position limit per configuration coordinate (+inf when none).
  const VectorX& upper_position_limit() const { return upper_; }
  /// Velocity limit per velocity coordinate (+inf when none).
  const VectorX& velocity_limit() const { return velocity_limit_; }
  /// Effort (torque or force) limit per velocity coordinate (+inf when none).
  const VectorX& effort_limit() const { return effort_limit_; }
  /// Viscous damping per velocity coordinate [N·m·s/rad or N·s/m].
  const VectorX& damping() const { return damping_; }
  /// Coulomb (dry) friction per velocity coordinate [N·m or N].
  const VectorX& friction() const { return friction_; }

  // ---- frames, collision shapes ------------------------------------------------
  const std::vector<Frame>& frames() const { return frames_; }
  const std::vector<CollisionShape>& collisions() const { return collisions_; }

  // ---- global --------------------------------------------------------------
  /// Gravity acceleration in world coordinates [m/s²].
  const Vec3& gravity() const { return gravity_; }
  /// Sum of every link's mass, including links welded to the world.
  double total_mass() const { return total_mass_; }
  // ---- semantics (SRDF) ----------------------------------------------------------
  /// Named configurations (SRDF group states), in file order.
  const std::vector<NamedConfiguration>& named_configurations() const { return named_configurations_; }
  /// The named configuration `name`.
  /// @throws ArgumentError, as every look-up by name, listing the names there are (or, when there are none,
  /// saying how to load them: urdf::LoadOptions::srdf, `<model srdf>`).
  const NamedConfiguration& named_configuration(const std::string& name) const;
  /// Link pairs excluded from self-collision (SRDF `<disable_collisions>`),
  /// by link (frame) name.
  const std::vector<std::pair<std::string, std::string>>& disabled_collisions() const { return disabled_collisions_; }
  /// Is contact between shapes of links `a` and `b` disabled (either order)?
  bool collision_disabled(const std::string& a, const std::string& b) const;
  /// Things the loader accepted but the user should know (mimic joints, …).
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// Index in q of the first coefficient (x) of each free-flyer quaternion
  /// (x, y, z, w), in body order: the coordinates whose norm the checked
  /// algorithms verify.
  const std::vector<int>& quaternion_q_indices() const { return quaternion_q_; }
  /// Identifies this model's structure; Data checks it cheaply.
  std::uint64_t uid() const { return uid_; }

  // ---- look-ups by name (−1 when absent) -------------------------------------
  // Every accessor taking a body index (parent, body_name, Xtree, inertia,
  // body_com, body_inertia_about_com, joint, subtree_root) throws
  // ArgumentError for an index outside [0, nbodies()), so a −1 from these
  // look-ups passed on unchecked is reported, not undefined behaviour.
  int body_index(const std::string& name) const;
  int joint_index(const std::string& name) const;
  int frame_index(const std::string& name) const;
  /// As above but throw ArgumentError (a plume::Error) naming the missing item
  /// and suggesting the name meant: the same name with or without a model
  /// prefix ("quad/LF_foot" for "LF_foot" in a World), else the closest names.
  int get_body(const std::string& name) const;
  int get_joint(const std::string& name) const;
  int get_frame(const std::string& name) const;

 private:
  friend class ModelBuilder;
  int body(int i) const {
    if (__builtin_expect(i < 0 || i >= static_cast<int>(parent_.size()), 0)) bad_index("body", i, nbodies());
    return i;
  }
  [[noreturn]] static void bad_index(const char* what, int i, int n);

  std::string name_;
  int nq_ = 0;
  int nv_ = 0;
  std::vector<int> parent_;
  std::vector<std::string> body_names_;
  std::vector<Transform> Xtree_;
  std::vector<RigidInertia> inertia_;
  std::vector<Vec3> com_;
  std::vector<Mat3> Ic_;
  std::vector<Joint> joints_;
  std::vector<int> subtree_root_;
  std::vector<int> dof_body_;
  std::vector<int> dof_parent_;
  std::vector<int> dof_run_start_;
  std::vector<int> dof_subtree_end_;
  bool dofs_depth_first_ = true;
  std::vector<int> quaternion_q_;
  VectorX lower_, upper_, velocity_limit_, effort_limit_, damping_, friction_;
  std::vector<Frame> frames_;
  std::vector<CollisionShape> collisions_;
  Vec3 gravity_ = Vec3(0.0, 0.0, -9.81);
  double total_mass_ = 0.0;
  std::vector<std::string> warnings_;
  std::vector<NamedConfiguration> named_configurations_;
  std::vector<std::pair<std::string, std::string>> disabled_collisions_;
  std::uint64_t uid_ = 0;
};

}  // namespace plume
