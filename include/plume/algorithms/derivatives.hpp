#pragma once
/// @file
/// Analytic derivatives of inverse dynamics (RNEA) and forward dynamics (ABA)
/// with respect to q, q̇ and τ, in the spatial-algebra style of Carpentier &
/// Mansard, "Analytical derivatives of rigid body dynamics algorithms" (RSS
/// 2018): one forward pass with world axes and one backward pass over the
/// composite quantities, O(n d) for n dofs and tree depth d.
///
/// **Tangent-space convention.** A derivative with respect to q is taken
/// along the velocity coordinates: column k of ∂τ/∂q is
///
///     d/dε τ(integrate(q, e_k ε), q̇, q̈) at ε = 0,
///
/// so every ∂/∂q has nv columns, like ∂/∂q̇. For revolute, prismatic and
/// planar joints this is the ordinary partial derivative in q. For a
/// free-flyer, direction k moves the body by the **body-frame twist** e_k
/// (angular first: [δω; δv], right perturbation (R, p) · exp(ε e_k)), exactly
/// as integrate(q, v, dt) defines it, and q̇, q̈ are held fixed (the body twist
/// and its rate).
///
/// Usage (a controller's loop):
///
///     plume::rnea_derivatives(model, data, q, v, a);  // data.dtau_dq, data.dtau_dv, data.H
///     plume::aba_derivatives(model, data, q, v, tau); // data.ddq_dq, data.ddq_dv, data.Minv
///
/// No allocation after Data is built. See kinematics.hpp for the checked /
/// unchecked convention.

#include "plume/algorithms/kinematics.hpp"

namespace plume {

/// ∂τ/∂q and ∂τ/∂q̇ of τ = RNEA(q, q̇, q̈) (both nv × nv), and ∂τ/∂q̈ = H.
/// Writes data.dtau_dq, data.dtau_dv, data.H (both triangles), data.tau and
/// the world-axis workspace (data.oS, ov, oa, …).
/// @throws ArgumentError on wrong sizes, non-finite entries or a quaternion
/// that is not unit.
void rnea_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a);

/// ∂q̈/∂q, ∂q̈/∂q̇ and ∂q̈/∂τ = H⁻¹ of q̈ = ABA(q, q̇, τ). Computed as
/// ∂q̈/∂x = −H⁻¹ ∂τ/∂x at q̈ = ABA(q, q̇, τ) with H factorised by ltdl().
/// Writes data.ddq, data.ddq_dq, data.ddq_dv, data.Minv (and everything
/// rnea_derivatives and ltdl write).
/// @throws ArgumentError as above; Error if H is not positive definite.
void aba_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau);

namespace unchecked {
void rnea_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a);
void aba_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau);
}  // namespace unchecked

}  // namespace plume
