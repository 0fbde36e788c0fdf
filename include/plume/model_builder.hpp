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

class ModelBuilder {
 public:
  explicit ModelBuilder(std::string name = "model");

  /// Adds a body hanging from `parent` (an existing body, 0 = world) through
  /// `joint`. `Xtree` is the transform from the parent body frame to the
  /// joint frame at q = 0, which is also the new body's frame; `inertia` is
  /// expressed in that frame. build() adds a frame with the body's name at the
  /// body origin unless a frame of that name was added explicitly.
  /// @returns the new body's index.
  /// @throws ModelError on an unknown parent or a fixed joint kind.
  int add_body(const std::string& name, int parent, const JointSpec& joint, const Transform& Xtree,
              const RigidInertia& inertia);

  /// Adds rigidly attached mass to a body (inertia in that body's frame),
  /// e.g. a link merged through a fixed joint. Body 0 accumulates links welded
  /// to the world: they count in the total mass but never move.
  void add_inertia(int body, const RigidInertia& inertia);

  /// Adds a frame attached to `body`; placement is X_frame_body.
  int add_frame(const std::string& name, int body, const Transform& placement);

  /// Adds a collision shape (its `body` and `placement` must be set).
  void add_collision(const CollisionShape& shape);

  /// Appends every body, frame and shape of `model` below `parent`. Bodies
  /// attached to the model's world are attached to `parent` with their Xtree
  /// preceded by `placement` (X_modelworld_parent); names get `prefix`.
  /// Collision shapes come along unless `with_collisions` is false.
  /// @returns the index in the new model of each body of `model` (entry 0 is
  /// `parent`).
  std::vector<int> append_model(const Model& model, int parent, const Transform& placement,
                               const std::string& prefix, bool with_collisions = true);

  void set_gravity(const Vec3& g);
  void add_warning(const std::string& warning);
  int nbodies() const { return static_cast<int>(bodies_.size()); }
  const std::string& body_name(int i) const { return bodies_[i].name; }

  /// Validates everything and returns the Model.
  /// @throws ModelError naming the body, joint or frame at fault: duplicate
  /// names, non-finite data, negative mass, an inertia that is not positive
  /// semi-definite or violates the triangle inequality, a movable subtree with
  /// no mass (H would be singular), inconsistent limits.
  Model build() const;

 private:
  struct BodyRecord {
    std::string name;
    int parent = -1;
    JointSpec joint;
    Transform Xtree;
    RigidInertia inertia;
  };
  std::string name_;
  std::vector<BodyRecord> bodies_;
  std::vector<Frame> frames_;
  std::vector<CollisionShape> collisions_;
  std::vector<std::string> warnings_;
  Vec3 gravity_ = Vec3(0.0, 0.0, -9.81);
};

}  // namespace plume
