// Derivatives of the contact-constrained forward dynamics (see the header).
//
// The point terms, with world axes about the subtree root's origin (the
// frame of rnea_derivatives), p the point, ω and v_b the body's spatial
// velocity, a_b its spatial acceleration, ṗ = v_lin + ω × p, and for a dof k
// on the point's support chain with column s = [s_ω; s_v]:
//   the point moves with s:            ∂p/∂q_k = u_k = s_v + s_ω × p,
//   the body's velocity, acceleration:  ∂v_b/∂q_k = s × v_b + dVdq_k,
//                                       ∂a_b/∂q_k = s × a_b + dVdq_k × v_b + dAdq_k,
//                                       ∂a_b/∂q̇_k = s × v_b + dAdv_k  (∂v_b/∂q̇_k = s),
//   and p̈ = a_lin + a_ω × p + ω × ṗ differentiated by the product rule.
// Jᵀλ: its entry l is f · u_l(p) for the world force f = D λ at p; u_l(p), a
// vector carried by the bodies that move with q_k, turns with s_ω:
//   ∂(f · u_l)/∂q_k = f · (s_ω,k × u_l)   if column l moves with q_k (l below k),
//                   = f · (s_ω,l × u_k)   otherwise (only the point moves).
#include "plume/dynamics/constrained_derivatives.hpp"

#include <cmath>
#include <string>

#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/derivatives.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/configuration.hpp"
#include "plume/error.hpp"

namespace plume {

namespace {

// Does column l move when q_k changes (both on one support chain)?
bool moves_with(const Model& model, int l, int k) {
  const int bl = model.dof_body(l), bk = model.dof_body(k);
  if (bl != bk) return bl > bk;  // bodies along a chain are numbered root first
  const Joint& j = model.joint(bl);
  return !(j.type == JointType::Planar && l - j.v_index < 2);  // a planar joint's x, y ride on the parent
}

}  // namespace

ConstrainedDerivatives::ConstrainedDerivatives(const Model& model, std::vector<PointConstraint> constraints)
    : constraints_(std::move(constraints)) {
  for (std::size_t c = 0; c < constraints_.size(); ++c) {
    const PointConstraint& pc = constraints_[c];
    const std::string what = "constraint " + std::to_string(c);
    if (pc.body < 1 || pc.body >= model.nbodies()) {
      throw ArgumentError(what + ": body " + std::to_string(pc.body) + " is not a moving body of model '" +
                          model.name() + "' (1 … " + std::to_string(model.nbodies() - 1) + ")");
    }
    if (pc.directions.cols() < 1 || pc.directions.cols() > 3 || !pc.directions.allFinite() ||
        !pc.point.allFinite()) {
      throw ArgumentError(what + ": needs 1 to 3 finite directions and a finite point");
    }
    row0_.push_back(rows_);
    rows_ += static_cast<int>(pc.directions.cols());
  }
  const int nv = model.nv(), m = rows_;
  ddq = VectorX::Zero(nv);
  lambda = VectorX::Zero(m);
  J = MatrixX::Zero(m, nv);
  gamma = VectorX::Zero(m);
  ddq_dq = ddq_dv = ddq_dtau = MatrixX::Zero(nv, nv);
  dlambda_dq = dlambda_dv = dlambda_dtau = MatrixX::Zero(m, nv);
  zero_ = VectorX::Zero(nv);
  rhs_ = VectorX::Zero(nv);
  tmp_m_ = VectorX::Zero(m);
  Jp_ = Matrix3X::Zero(3, nv);
  JMinv_ = MatrixX::Zero(m, nv);
  W_ = MatrixX::Zero(m, m);
  Rq_ = MatrixX::Zero(nv, nv);
  Pq_ = Pv_ = tmp_mn_ = MatrixX::Zero(m, nv);
  Wllt_ = Eigen::LLT<MatrixX>(m);
  chain_.assign(nv, 0);
}

void ConstrainedDerivatives::compute(const Model& model, Data& data, const Eigen::Ref<const VectorX>& q,
                                     const Eigen::Ref<const VectorX>& v, const Eigen::Ref<const VectorX>& tau) {
  check_data(model, data);
  check_configuration(model, q, "q");
  check_vector(v, model.nv(), "v");
  check_vector(tau, model.nv(), "tau");
  // The constrained dynamics: J, γ (kinematics with q̈ = 0), H, C, H⁻¹.
  unchecked::forward_kinematics(model, data, q, v, zero_);
  for (std::size_t c = 0; c < constraints_.size(); ++c) {
    const PointConstraint& pc = constraints_[c];
    const int m = static_cast<int>(pc.directions.cols());
    point_jacobian(model, data, pc.body, pc.point, ReferenceFrame::LocalWorldAligned, Jp_);
    J.middleRows(row0_[c], m).noalias() = pc.directions.transpose() * Jp_;
    gamma.segment(row0_[c], m).noalias() =
        pc.directions.transpose() * point_velocity_product(model, data, pc.body, pc.point, ReferenceFrame::LocalWorldAligned);
  }
  unchecked::crba(model, data, q);
  unchecked::bias_forces_after_crba(model, data, v);
  unchecked::ltdl(model, data);
  MatrixX& Minv = data.Minv;
  ltdl_inverse(model, data, Minv);
  // W λ = −(J H⁻¹ (τ − C) + γ), q̈ = H⁻¹ (τ − C + Jᵀ λ).
  JMinv_.noalias() = J * Minv;
  W_.noalias() = JMinv_ * J.transpose();
  Wllt_.compute(W_);
  if (Wllt_.info() != Eigen::Success) {
    throw Error("ConstrainedDerivatives: the constraints are dependent (J H⁻¹ Jᵀ is singular); hold fewer directions");
  }
  rhs_ = tau - data.C;
  tmp_m_.noalias() = JMinv_ * rhs_;
  tmp_m_ += gamma;
  lambda = -tmp_m_;
  Wllt_.solveInPlace(lambda);
  rhs_.noalias() += J.transpose() * lambda;
  ddq.noalias() = Minv * rhs_;
  // ∂ of ID at (q, q̇, q̈), and the point terms.
  unchecked::rnea_derivatives(model, data, q, v, ddq);
  Rq_ = data.dtau_dq;
  Pq_.setZero();
  Pv_.setZero();
  for (std::size_t c = 0; c < constraints_.size(); ++c) {
    const PointConstraint& pc = constraints_[c];
    const int m = static_cast<int>(pc.directions.cols());
    const int b = pc.body;
    const Vec3 p = data.orel[b] + data.X0[b].E().transpose() * pc.point;
    const Motion& vb = data.ov[b];
    const Motion& ab = data.oa[b];  // with the −g offset: a pure translation, gone from every product below
    const Vec3 w = vb.angular();
    const Vec3 pd = vb.linear() + w.cross(p);
    const Vec3 f = pc.directions * lambda.segment(row0_[c], m);
    // The dofs of the support chain, the body's own last.
    int n = 0;
    for (int k = model.joint(b).v_index + model.joint(b).nv - 1; k >= 0; k = model.dof_parent(k)) chain_[n++] = k;
    for (int ik = 0; ik < n; ++ik) {
      const int k = chain_[ik];
      const Motion s(Vec6(data.oS.col(k)));
      const Vec3 u = s.linear() + s.angular().cross(p);
      const Motion dVq = s.cross(vb) + Motion(Vec6(data.dVdq.col(k)));
      const Motion dAq = s.cross(ab) + Motion(Vec6(data.dVdq.col(k))).cross(vb) + Motion(Vec6(data.dAdq.col(k)));
      const Vec3 dpd = dVq.linear() + dVq.angular().cross(p) + w.cross(u);
      const Vec3 dpdd_q = dAq.linear() + dAq.angular().cross(p) + ab.angular().cross(u) + dVq.angular().cross(pd) + w.cross(dpd);
      const Motion dAv = s.cross(vb) + Motion(Vec6(data.dAdv.col(k)));
      const Vec3 dpdd_v = dAv.linear() + dAv.angular().cross(p) + s.angular().cross(pd) + w.cross(u);
      Pq_.block(row0_[c], k, m, 1).noalias() = pc.directions.transpose() * dpdd_q;
      Pv_.block(row0_[c], k, m, 1).noalias() = pc.directions.transpose() * dpdd_v;
      for (int il = 0; il < n; ++il) {
        const int l = chain_[il];
        const Motion sl(Vec6(data.oS.col(l)));
        const Vec3 ul = sl.linear() + sl.angular().cross(p);
        Rq_(l, k) -= moves_with(model, l, k) ? f.dot(s.angular().cross(ul)) : f.dot(sl.angular().cross(u));
      }
    }
  }
  // W ∂λ = J H⁻¹ R − P,  ∂q̈ = −H⁻¹ R + (J H⁻¹)ᵀ ∂λ;  for τ: R = −1, P = 0.
  dlambda_dq.noalias() = JMinv_ * Rq_;
  dlambda_dq -= Pq_;
  Wllt_.solveInPlace(dlambda_dq);
  ddq_dq.noalias() = -Minv * Rq_;
  ddq_dq.noalias() += JMinv_.transpose() * dlambda_dq;
  dlambda_dv.noalias() = JMinv_ * data.dtau_dv;
  dlambda_dv -= Pv_;
  Wllt_.solveInPlace(dlambda_dv);
  ddq_dv.noalias() = -Minv * data.dtau_dv;
  ddq_dv.noalias() += JMinv_.transpose() * dlambda_dv;
  dlambda_dtau = -JMinv_;
  Wllt_.solveInPlace(dlambda_dtau);
  ddq_dtau = Minv;
  ddq_dtau.noalias() += JMinv_.transpose() * dlambda_dtau;
}

}  // namespace plume
