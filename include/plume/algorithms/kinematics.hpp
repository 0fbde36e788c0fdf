#pragma once
/// @file
/// Forward kinematics: body placements, spatial velocities and accelerations,
/// frame placements.
///
/// Checked entry points (namespace plume) validate sizes, finiteness and unit
/// quaternions and throw ArgumentError naming the argument and index. The
/// functions in plume::unchecked skip those checks: they assume valid input
/// (q of size nq with unit quaternions, vectors of size nv, all finite, and
/// `data` built for `model`) and are what a controller calls in its loop once
/// its inputs are known to be good.

#include "plume/data.hpp"

namespace plume {

using VecRef = Eigen::Ref<const VectorX>;

/// Placements: data.Xup, data.X0.
void forward_kinematics(const Model& model, Data& data, const VecRef& q);
/// Placements and velocities: also data.v.
void forward_kinematics(const Model& model, Data& data, const VecRef& q, const VecRef& v);
/// Placements, velocities and accelerations (true accelerations, no gravity):
/// also data.a. With a = 0, data.a[i] is the velocity-product acceleration J̇ᵢq̇.
void forward_kinematics(const Model& model, Data& data, const VecRef& q, const VecRef& v,
                        const VecRef& a);
/// Frame placements data.Xframe from data.X0 (call forward_kinematics first).
void update_frame_placements(const Model& model, Data& data);

/// World position of body i's origin (after forward_kinematics).
inline Vec3 body_position(const Data& data, int i) { return data.X0[i].r(); }
/// World orientation of body i (after forward_kinematics).
inline Mat3 body_rotation(const Data& data, int i) { return data.X0[i].E().transpose(); }

namespace unchecked {
void forward_kinematics(const Model& model, Data& data, const VecRef& q);
void forward_kinematics(const Model& model, Data& data, const VecRef& q, const VecRef& v);
void forward_kinematics(const Model& model, Data& data, const VecRef& q, const VecRef& v,
                        const VecRef& a);
/// Velocities and accelerations (data.v, data.a) from the placements already
/// in `data` (data.Xup, data.X0 and the motion subspaces of a placement
/// pass at the q meant: forward_kinematics(q) or one of its overloads):
/// the same values as forward_kinematics(q, v, a), without recomputing the
/// placements.
void forward_kinematics_motion(const Model& model, Data& data, const VecRef& v, const VecRef& a);
/// Velocities only (data.v) from the placements already in `data`, as
/// forward_kinematics_motion: the same data.v as forward_kinematics(q, v)
/// (data.a is left as it was).
void forward_kinematics_velocities(const Model& model, Data& data, const VecRef& v);
}  // namespace unchecked

}  // namespace plume
