#pragma once
/// @file
/// Recursive Newton–Euler inverse dynamics (RBDA Table 5.1): τ = ID(q, q̇, q̈),
/// the bias forces C(q, q̇) and the gravity torques.
///
/// Gravity enters as a fictitious acceleration −g of the world (RBDA §5.3).
/// See kinematics.hpp for the checked / unchecked convention.

#include <vector>

#include "plume/algorithms/kinematics.hpp"

namespace plume {

/// τ = H(q) q̈ + C(q, q̇). Writes data.tau (and kinematics, data.f).
const VectorX& rnea(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a);
/// As above with external spatial forces on bodies, `fext[i]` acting on body i
/// and expressed in **world** coordinates (moment about the world origin);
/// fext has nbodies entries (entry 0 ignored).
const VectorX& rnea(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a,
                    const std::vector<Force>& fext);
/// C(q, q̇): Coriolis, centrifugal and gravity forces (rnea with q̈ = 0). Writes data.C.
const VectorX& bias_forces(const Model& model, Data& data, const VecRef& q, const VecRef& v);
/// Gravity torques g(q) (rnea with q̇ = q̈ = 0). Writes data.g.
const VectorX& gravity_torques(const Model& model, Data& data, const VecRef& q);
/// Passive joint forces from the URDF's `<dynamics damping>`: −damping ∘ q̇.
/// (Coulomb friction is set-valued and is left to the caller.)
VectorX passive_torques(const Model& model, const VecRef& v);

namespace unchecked {
const VectorX& rnea(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a);
const VectorX& rnea(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a,
                    const std::vector<Force>& fext);
const VectorX& bias_forces(const Model& model, Data& data, const VecRef& q, const VecRef& v);
const VectorX& gravity_torques(const Model& model, Data& data, const VecRef& q);
/// C(q, q̇) right after crba(model, data, q) at the same q: reuses the joint
/// transforms data.Xup and subspaces data.S that CRBA left, so the joint
/// angles' sines and cosines are not computed twice (a controller or a
/// simulator that needs H and C at every tick). The same C as
/// bias_forces(q, v) up to rounding. Writes data.C, data.v, data.a, data.f.
/// @pre crba(model, data, q) was the last call that wrote data.Xup.
const VectorX& bias_forces_after_crba(const Model& model, Data& data, const VecRef& v);
}  // namespace unchecked

}  // namespace plume
