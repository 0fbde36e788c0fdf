#pragma once
/// @file
/// Jacobians of bodies, frames and points, their velocity-product
/// accelerations a^vp = J̇ q̇ (docs/theory.md eq. 11.30 needs them), and frame
/// placements by index or name.
///
/// **One rule for reference frames: every function takes the frame
/// explicitly**; none has a default. A 6-D Jacobian J maps q̇ to a spatial
/// velocity [ω; v] (angular first):
/// - ReferenceFrame::Local — in the body's (or frame's) own coordinates;
/// - ReferenceFrame::World — in world coordinates, at the world origin
///   (Featherstone's absolute coordinates, used for contact forces);
/// - ReferenceFrame::LocalWorldAligned — at the body's (or frame's) origin,
///   with world axes: v is the velocity of that origin in the world.
///
/// **Results are the caller's.** A Jacobian is either returned by value (one
/// allocation for the result) or written into the caller's matrix (no
/// allocation; sized 6×nv or 3×nv, else ArgumentError). Nothing returns a
/// reference into Data, so a second call never changes the result of a first.
///
/// Functions taking q compute the kinematics of the support chain only. The
/// overloads without q use the placements (and velocities) already in Data,
/// from forward_kinematics.

#include <string>

#include "plume/algorithms/kinematics.hpp"

namespace plume {

enum class ReferenceFrame { Local, World, LocalWorldAligned };
/// "local", "world", "local_world_aligned".
const char* to_string(ReferenceFrame ref);
/// The inverse of to_string. @throws ArgumentError listing the three names.
ReferenceFrame parse_reference_frame(const std::string& text);

/// J of body i (6×nv). Columns outside the support chain are zero.
/// @throws ArgumentError on a bad q, body index or J size.
Matrix6X body_jacobian(const Model& model, Data& data, const VecRef& q, int body, ReferenceFrame ref);
void body_jacobian(const Model& model, Data& data, const VecRef& q, int body, ReferenceFrame ref,
                   Eigen::Ref<Matrix6X> J);
/// J of a frame (6×nv), by index or by name (Model::get_frame).
Matrix6X frame_jacobian(const Model& model, Data& data, const VecRef& q, int frame, ReferenceFrame ref);
Matrix6X frame_jacobian(const Model& model, Data& data, const VecRef& q, const std::string& frame,
                        ReferenceFrame ref);
void frame_jacobian(const Model& model, Data& data, const VecRef& q, int frame, ReferenceFrame ref,
                    Eigen::Ref<Matrix6X> J);
/// Linear-velocity Jacobian (3×nv) of a point fixed on a body, given in body
/// coordinates: world axes, or body axes for Local (World and
/// LocalWorldAligned give the same matrix: the velocity of the point).
Matrix3X point_jacobian(const Model& model, Data& data, const VecRef& q, int body, const Vec3& point,
                        ReferenceFrame ref);
void point_jacobian(const Model& model, Data& data, const VecRef& q, int body, const Vec3& point,
                    ReferenceFrame ref, Eigen::Ref<Matrix3X> J);

/// Placement X_{frame←0} of a frame (world → frame coordinates; its
/// pose_rotation() has the frame's axes in world coordinates as columns and
/// pose_translation() is the frame's origin in the world), computing the
/// kinematics of its support chain from q.
Transform frame_placement(const Model& model, Data& data, const VecRef& q, int frame);
Transform frame_placement(const Model& model, Data& data, const VecRef& q, const std::string& frame);
/// World position of a frame's origin.
Vec3 frame_position(const Model& model, Data& data, const VecRef& q, int frame);
Vec3 frame_position(const Model& model, Data& data, const VecRef& q, const std::string& frame);

/// From existing placements (forward_kinematics(q) done): J of body i.
void body_jacobian(const Model& model, const Data& data, int body, ReferenceFrame ref,
                   Eigen::Ref<Matrix6X> J);
void frame_jacobian(const Model& model, const Data& data, int frame, ReferenceFrame ref,
                    Eigen::Ref<Matrix6X> J);
void point_jacobian(const Model& model, const Data& data, int body, const Vec3& point,
                    ReferenceFrame ref, Eigen::Ref<Matrix3X> J);

/// Velocity-product accelerations, after forward_kinematics(q, q̇, 0) (so
/// that data.a holds J̇ᵢq̇ in body coordinates):
/// spatial J̇q̇ of a body or frame in the requested reference frame …
Motion body_velocity_product(const Model& model, const Data& data, int body, ReferenceFrame ref);
Motion frame_velocity_product(const Model& model, const Data& data, int frame, ReferenceFrame ref);
/// … and the classical acceleration of a body point with q̈ = 0 (J̇_p q̇ of
/// the point Jacobian), world axes or body axes for Local.
Vec3 point_velocity_product(const Model& model, const Data& data, int body, const Vec3& point,
                            ReferenceFrame ref);

/// Spatial velocity of a body in the requested frame (after forward_kinematics(q, v)).
Motion body_velocity(const Model& model, const Data& data, int body, ReferenceFrame ref);
/// Velocity of a body point (body coordinates), world axes or body axes for Local.
Vec3 point_velocity(const Model& model, const Data& data, int body, const Vec3& point, ReferenceFrame ref);

namespace unchecked {
/// As the checked versions, without argument checks; write into J (6×nv).
void frame_jacobian(const Model& model, Data& data, const VecRef& q, int frame, ReferenceFrame ref,
                    Eigen::Ref<Matrix6X> J);
void body_jacobian(const Model& model, Data& data, const VecRef& q, int body, ReferenceFrame ref,
                   Eigen::Ref<Matrix6X> J);
}  // namespace unchecked

}  // namespace plume
