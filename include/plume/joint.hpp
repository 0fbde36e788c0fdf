#pragma once
/// @file
/// Joint kinds, their coordinates, and jcalc (RBDA Table 4.1, §4.4).
///
/// Each body i ≥ 1 hangs from its parent λ(i) through exactly one joint. The
/// joint frame is the body frame: `Xup[i] = XJ(q_i) * Xtree[i]`, where Xtree is
/// the constant transform from the parent body frame to the joint's
/// predecessor frame. Coordinates per kind:
///
/// | kind        | nq | nv | q                           | v                          |
/// |-------------|----|----|-----------------------------|----------------------------|
/// | revolute    | 1  | 1  | angle about `axis`          | q̇                          |
/// | continuous  | 1  | 1  | angle (unbounded)           | q̇                          |
/// | prismatic   | 1  | 1  | displacement along `axis`   | q̇                          |
/// | planar      | 3  | 3  | x, y, θ about z             | ẋ, ẏ, θ̇                     |
/// | free-flyer  | 7  | 6  | position, quaternion (x,y,z,w) | [ω; v] in the body frame |
///
/// The free-flyer position is expressed in the parent frame and the quaternion
/// gives the body orientation relative to the parent; q̇ = G(q) v. Fixed URDF
/// joints never reach a Model: they are merged into their parent body.
/// Dispatch over kinds happens here, in one switch per operation.

#include <cstdint>
#include <string>

#include "plume/spatial.hpp"

namespace plume {

enum class JointType : std::uint8_t { Fixed, Revolute, Continuous, Prismatic, Planar, FreeFlyer };

/// Lower-case name used in output: "fixed", "revolute", "continuous",
/// "prismatic", "planar", "free-flyer".
const char* to_string(JointType type);

/// Number of configuration coordinates of a joint kind.
constexpr int joint_nq(JointType t) {
  switch (t) {
    case JointType::Fixed: return 0;
    case JointType::Revolute:
    case JointType::Continuous:
    case JointType::Prismatic: return 1;
    case JointType::Planar: return 3;
    case JointType::FreeFlyer: return 7;
  }
  return 0;
}

/// Number of velocity coordinates (degrees of freedom) of a joint kind.
constexpr int joint_nv(JointType t) {
  switch (t) {
    case JointType::Fixed: return 0;
    case JointType::Revolute:
    case JointType::Continuous:
    case JointType::Prismatic: return 1;
    case JointType::Planar: return 3;
    case JointType::FreeFlyer: return 6;
  }
  return 0;
}

/// The computational kernel a joint dispatches to: joint types refined by
/// their axis (an axis-aligned revolute joint rotates two rows of a matrix).
enum class JointKind : std::uint8_t {
  None,          ///< the world placeholder
  RevoluteX,     ///< revolute or continuous about +x
  RevoluteY,     ///< … about +y
  RevoluteZ,     ///< … about +z
  RevoluteAxis,  ///< … about any other unit axis
  Prismatic,     ///< prismatic along any other unit axis
  PrismaticX,    ///< prismatic along +x
  PrismaticY,    ///< … along +y
  PrismaticZ,    ///< … along +z
  Planar,
  FreeFlyer
};

/// A joint as stored in a Model.
struct Joint {
  std::string name;
  JointType type = JointType::Fixed;
  JointKind kind = JointKind::None;
  /// Unit axis in the joint frame (revolute, continuous, prismatic).
  Vec3 axis = Vec3::UnitZ();
  int q_index = 0;  ///< first index of this joint's coordinates in q
  int v_index = 0;  ///< first index of this joint's coordinates in v
  int nq = 0;
  int nv = 0;
  /// Xtree's rotation is exactly the identity (the URDF joint origin has no
  /// rotation): the rotation of an axis-aligned revolute joint's Xup is then
  /// a plane rotation, which the algorithms apply to two rows or components.
  bool tree_rotation_identity = false;
  /// Xtree's rotation is a signed permutation other than the identity (each
  /// row one ±1: the ±90° and 180° offsets of URDF arms, stored exactly when
  /// within 1e-10 rad, see
  /// ModelBuilder::build). An axis-aligned revolute joint's Xup rotation then
  /// has five nonzero entries: row A's in column tree_cols[0], rows A + 1 and
  /// A + 2 (mod 3) in columns tree_cols[1] and tree_cols[2].
  bool tree_rotation_permutation = false;
  int tree_cols[3] = {0, 1, 2};
};

/// Rotation matrix R(axis, angle) of a rotation by `angle` about the unit `axis`.
inline Mat3 axis_rotation(const Vec3& axis, double angle) {
  return Eigen::AngleAxisd(angle, axis).toRotationMatrix();
}

}  // namespace plume
