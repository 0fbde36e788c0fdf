#pragma once
/// @file
/// Jacobians of bodies, frames and points, and their velocity-product
/// accelerations a^vp = J̇ q̇ (Featherstone eq. 11.30 needs them).
///
/// A 6-D Jacobian J maps q̇ to a spatial velocity [ω; v] (angular first):
/// - ReferenceFrame::Local — in the body's (or frame's) own coordinates;
/// - ReferenceFrame::World — in world coordinates, at the world origin
///   (Featherstone's absolute coordinates, used for contact forces);
/// - ReferenceFrame::LocalWorldAligned — at the body's (or frame's) origin,
///   with world axes: v is the velocity of that origin in the world.
///
/// Functions taking q compute the kinematics of the support chain only. The
/// overloads without q use the placements (and velocities) already in Data,
/// from forward_kinematics, and write into the caller's matrix.

#include "plume/algorithms/kinematics.hpp"

namespace plume {

enum class ReferenceFrame { Local, World, LocalWorldAligned };

/// J of body i: data.J (6×nv). Columns outside the support chain are zero.
const Matrix6X& body_jacobian(const Model& model, Data& data, const VecRef& q, int body,
                              ReferenceFrame ref = ReferenceFrame::Local);
/// J of a frame: data.J (6×nv).
const Matrix6X& frame_jacobian(const Model& model, Data& data, const VecRef& q, int frame,
                               ReferenceFrame ref = ReferenceFrame::LocalWorldAligned);
/// Linear-velocity Jacobian of a point fixed on a body, given in body
/// coordinates: data.Jp (3×nv), world axes (or body axes for Local).
const Matrix3X& point_jacobian(const Model& model, Data& data, const VecRef& q, int body,
                               const Vec3& point, ReferenceFrame ref = ReferenceFrame::LocalWorldAligned);

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
                            ReferenceFrame ref = ReferenceFrame::LocalWorldAligned);

/// Spatial velocity of a body in the requested frame (after forward_kinematics(q, v)).
Motion body_velocity(const Model& model, const Data& data, int body, ReferenceFrame ref);
/// Velocity of a body point (body coordinates), world axes or body axes for Local.
Vec3 point_velocity(const Model& model, const Data& data, int body, const Vec3& point,
                    ReferenceFrame ref = ReferenceFrame::LocalWorldAligned);

namespace unchecked {
const Matrix6X& frame_jacobian(const Model& model, Data& data, const VecRef& q, int frame,
                               ReferenceFrame ref = ReferenceFrame::LocalWorldAligned);
const Matrix6X& body_jacobian(const Model& model, Data& data, const VecRef& q, int body,
                              ReferenceFrame ref = ReferenceFrame::Local);
}  // namespace unchecked

}  // namespace plume
