#pragma once
/// @file
/// Derivatives of the contact-constrained forward dynamics for a given set of
/// active contacts (sticking, or frictionless along fixed world directions).
///
/// Each constraint holds a point fixed on a body (body coordinates) so that
/// its world acceleration has no component along the constraint's world
/// directions D (3 × m, m ≤ 3; the identity for a sticking point contact, the
/// normal for a frictionless one on a flat surface):
///
///     H q̈ + C = τ + Jᵀ λ,    J q̈ + γ = 0,                         (11.41 with T = Jᵀ)
///
/// J = Dᵀ J_p (the point Jacobian, world axes), γ = Dᵀ J̇_p q̇, λ the force
/// components along D (world axes, acting on the body at the point). For x ∈
/// {q, q̇, τ} (∂/∂q along the velocity coordinates, see derivatives.hpp):
///
///     H ∂q̈ − Jᵀ ∂λ = −∂ₓ(ID(q, q̇, q̈) − Jᵀλ − τ),   J ∂q̈ = −∂ₓ(J q̈ + γ)   (q̈, λ held)
///
/// the right-hand sides from rnea_derivatives and the analytic derivatives of
/// the points' accelerations and of Jᵀλ; then the Schur complement
/// W = J H⁻¹ Jᵀ (the constraints must be independent: W positive definite).
///
/// Usage:
///
///     plume::ConstrainedDerivatives cd(model, {{foot, p, Mat3::Identity()}, …});
///     cd.compute(model, data, q, v, tau);  // cd.ddq, cd.lambda, cd.ddq_dq, cd.dlambda_dq, …
///
/// compute() does not allocate.

#include <vector>

#include <Eigen/Cholesky>

#include "plume/data.hpp"

namespace plume {

/// An active contact: a point on `body` held along world `directions`.
struct PointConstraint {
  int body = 0;
  Vec3 point = Vec3::Zero();               ///< body coordinates
  Matrix3X directions = Mat3::Identity();  ///< world axes, 3 × m (m ≥ 1): the rows held
};

class ConstrainedDerivatives {
 public:
  /// @throws ArgumentError on a body out of range, an empty or non-finite
  /// direction set.
  ConstrainedDerivatives(const Model& model, std::vector<PointConstraint> constraints);

  /// q̈, λ and their derivatives at (q, q̇, τ). Also writes data (rnea
  /// derivatives, H and its factor, Minv).
  /// @throws ArgumentError on wrong sizes; Error if the constraints are
  /// dependent (W not positive definite) or H is not.
  void compute(const Model& model, Data& data, const Eigen::Ref<const VectorX>& q,
               const Eigen::Ref<const VectorX>& v, const Eigen::Ref<const VectorX>& tau);

  const std::vector<PointConstraint>& constraints() const { return constraints_; }
  /// Number of constraint rows m (the size of λ).
  int rows() const { return rows_; }

  VectorX ddq;           ///< [nv]
  VectorX lambda;        ///< [m] constraint forces along the directions [N]
  MatrixX J;             ///< [m×nv] constraint Jacobian Dᵀ J_p
  VectorX gamma;         ///< [m] Dᵀ J̇_p q̇
  MatrixX ddq_dq, ddq_dv, ddq_dtau;           ///< [nv×nv]
  MatrixX dlambda_dq, dlambda_dv, dlambda_dtau;  ///< [m×nv]

 private:
  std::vector<PointConstraint> constraints_;
  std::vector<int> row0_;  ///< first row of each constraint
  int rows_ = 0;
  // workspace
  VectorX zero_, rhs_, tmp_m_;
  Matrix3X Jp_;
  MatrixX JMinv_, W_, Rq_, Pq_, Pv_, tmp_mn_;
  Eigen::LLT<MatrixX> Wllt_;
  std::vector<int> chain_;  ///< [nv] the dofs supporting one point
};

}  // namespace plume
