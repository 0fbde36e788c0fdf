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
///     plume::kinematics_derivatives(model, data, q, v, a);
///     plume::frame_velocity_derivatives(model, data, foot, plume::ReferenceFrame::LocalWorldAligned,
///                                       dv_dq, dv_dv);  // the caller's 6×nv matrices
///
/// No allocation after Data is built. See kinematics.hpp for the checked /
/// unchecked convention.

#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/kinematics.hpp"

namespace plume {

/// ∂τ/∂q and ∂τ/∂q̇ of τ = RNEA(q, q̇, q̈) (both nv × nv), and ∂τ/∂q̈ = H.
/// Writes data.dtau_dq, data.dtau_dv, data.H (both triangles), data.tau and
/// the world-axis workspace (data.oS, ov, oa, …).
/// @throws ArgumentError on wrong sizes, non-finite entries or a quaternion
/// that is not unit.
void rnea_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a);

/// ∂q̈/∂q, ∂q̈/∂q̇ and ∂q̈/∂τ = H⁻¹ of q̈ = ABA(q, q̇, τ). Computed as
/// ∂q̈/∂x = −H⁻¹ ∂τ/∂x at q̈ with H factorised by ltdl(); q̈ itself (in
/// data.ddq) solves H q̈ = τ − C(q, q̇) with the same factor (aba()'s q̈ up to
/// roundings).
/// Writes data.ddq, data.ddq_dq, data.ddq_dv, data.Minv, data.H, data.tau,
/// the factor of ltdl and the world-axis workspace; not data.dtau_dq,
/// data.dtau_dv (∂τ/∂x is formed, transposed, in ddq_dq and ddq_dv).
/// @throws ArgumentError as above; Error if H is not positive definite.
void aba_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau);

/// Kinematics derivatives: the forward pass of rnea_derivatives alone, at
/// (q, q̇, q̈). Writes the placements and the world-axis velocities,
/// accelerations and per-dof derivative columns that
/// frame_velocity_derivatives and frame_acceleration_derivatives read.
/// @throws ArgumentError as rnea_derivatives.
void kinematics_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a);

/// Derivatives of a frame's spatial velocity (J q̇ with J = frame_jacobian in
/// `ref`), after kinematics_derivatives: dv_dq = ∂v/∂q (tangent space, as
/// above) and dv_dv = ∂v/∂q̇, which is the frame Jacobian itself. Both 6×nv,
/// the caller's (no allocation). The placement's own derivative along
/// direction k is column k of frame_jacobian(…, ReferenceFrame::Local) (the
/// frame's body twist) or, with world axes, of LocalWorldAligned.
/// @throws ArgumentError for a frame index out of range or a result that is
/// not 6×nv.
void frame_velocity_derivatives(const Model& model, const Data& data, int frame, ReferenceFrame ref,
                                Eigen::Ref<Matrix6X> dv_dq, Eigen::Ref<Matrix6X> dv_dv);

/// Derivatives of a frame's acceleration a = d/dt (J q̇) = J q̈ + J̇ q̇ in
/// `ref` (the same quantity as frame_velocity_product plus J q̈: the spatial
/// acceleration for Local and World, the classical one, [ω̇; p̈] of the
/// frame's origin p, for LocalWorldAligned), after kinematics_derivatives at
/// (q, q̇, q̈): da_dq, da_dv and da_da = ∂a/∂q̈ (the frame Jacobian), 6×nv each.
/// @throws ArgumentError as frame_velocity_derivatives.
void frame_acceleration_derivatives(const Model& model, const Data& data, int frame, ReferenceFrame ref,
                                    Eigen::Ref<Matrix6X> da_dq, Eigen::Ref<Matrix6X> da_dv,
                                    Eigen::Ref<Matrix6X> da_da);

namespace detail {
/// Whether rnea_derivatives, aba_derivatives and kinematics_derivatives may
/// run their AVX2 builds (and aba_derivatives its AVX2/FMA solves) on CPUs
/// that have them: true by default. Switched off, the portable (SSE2) code
/// runs on every CPU; tests use it to check that code too. Returns the
/// previous setting. Not synchronised: set it before computing.
bool set_derivatives_simd(bool enabled);
}  // namespace detail

namespace unchecked {
void kinematics_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a);
void frame_velocity_derivatives(const Model& model, const Data& data, int frame, ReferenceFrame ref,
                                Eigen::Ref<Matrix6X> dv_dq, Eigen::Ref<Matrix6X> dv_dv);
void frame_acceleration_derivatives(const Model& model, const Data& data, int frame, ReferenceFrame ref,
                                    Eigen::Ref<Matrix6X> da_dq, Eigen::Ref<Matrix6X> da_dv,
                                    Eigen::Ref<Matrix6X> da_da);
void rnea_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a);
void aba_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau);
}  // namespace unchecked

}  // namespace plume
