#pragma once
/// @file
/// Composite-rigid-body algorithm (RBDA Table 6.2): the joint-space inertia
/// matrix H(q), symmetric, with both triangles filled.

#include "plume/algorithms/kinematics.hpp"

namespace plume {

/// Writes data.H (and data.Xup, data.X0, data.S, data.Ic). @returns data.H.
const MatrixX& crba(const Model& model, Data& data, const VecRef& q);

namespace unchecked {
const MatrixX& crba(const Model& model, Data& data, const VecRef& q);
}  // namespace unchecked

}  // namespace plume
