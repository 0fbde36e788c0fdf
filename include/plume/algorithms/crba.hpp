#pragma once
/// @file
/// Composite-rigid-body algorithm (RBDA Table 6.2): the joint-space inertia
/// matrix H(q), symmetric, with both triangles filled.

#include "plume/algorithms/kinematics.hpp"

namespace plume {

/// Writes data.H, both triangles, and the workspace it is built from: the joint
/// transforms data.Xup and the motion subspaces data.S at q (which
/// unchecked::bias_forces_after_crba reuses) and the composite inertias
/// data.Ic. It computes no placements: data.X0, the velocities and the frame
/// placements keep what the last call that wrote them left, at whatever q that
/// was. Before reading placements after crba() (body_position,
/// update_frame_placements, contact detection, contact_jacobian,
/// refresh_contact) call forward_kinematics(model, data, q), before or after
/// crba(): crba() does not touch them.
/// @returns data.H.
const MatrixX& crba(const Model& model, Data& data, const VecRef& q);

namespace unchecked {
const MatrixX& crba(const Model& model, Data& data, const VecRef& q);
}  // namespace unchecked

}  // namespace plume
