#pragma once
/// @file
/// Articulated-body algorithm (RBDA Table 7.1): forward dynamics
/// q̈ = FD(q, q̇, τ) = H⁻¹(τ − C) in O(n).

#include <vector>

#include "plume/algorithms/kinematics.hpp"

namespace plume {

/// Writes data.ddq. @returns data.ddq.
const VectorX& aba(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau);
/// With external spatial forces, `fext[i]` on body i in world coordinates
/// (nbodies entries, entry 0 ignored).
const VectorX& aba(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau,
                   const std::vector<Force>& fext);

namespace unchecked {
const VectorX& aba(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau);
const VectorX& aba(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau,
                   const std::vector<Force>& fext);
}  // namespace unchecked

}  // namespace plume
