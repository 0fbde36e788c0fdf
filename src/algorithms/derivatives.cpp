// Analytic derivatives of RNEA and ABA (Carpentier & Mansard, RSS 2018), with
// world axes about each subtree root's origin (Data::orel), like aba.cpp.
//
// Derivation (all quantities with world axes about a point held fixed while
// differentiating; s = oS_k the world column of dof k of body b):
// - a perturbation of q_k moves the subtree of b rigidly with the twist s:
//   a quantity attached to a body of that subtree changes as s × (motion),
//   s ×* (force), s ×* I − I s× (inertia). The columns of b's own joint are
//   attached to b (revolute, prismatic, free-flyer, the θ of a planar joint)
//   or to the parent (the x, y translations of a planar joint).
// - ν, α: the velocity and acceleration the joint rides on (the parent's,
//   plus the parent-attached columns' share for a planar joint). Then for
//   every body j in the subtree of b
//     ∂v_j/∂q_k = s × (v_j − ν),
//     ∂a_j/∂q_k = s × a_j − s × α − (s × ν) × (v_j − ν),
//     ∂v_j/∂q̇_k = s,  ∂a_j/∂q̇_k = s × v_j + (ν + v_att) × s,
//   with v_att the velocity of the body the column is attached to.
// - f_j = I_j a_j + v_j ×* I_j v_j summed over a subtree Σ_j (the composite
//   force F, inertia Yc, and Bc = Σ_j B_j with B_j u = ∂f_j/∂v_j u =
//   v_j ×* I_j u − I_j (v_j × u) + u ×* (I_j v_j), which only sees u's angular
//   part, see body_B11) gives, for dof l of a body at or
//   below b (and b' the deeper of the two bodies):
//     ∂τ_l/∂q_k = S_lᵀ (Yc_b' dAdq_k + Bc_b' dVdq_k) [+ S_lᵀ (s ×* F_b') when S_l does
//                 not move with q_k: l above k, or a planar x, y column of b],
//     ∂τ_l/∂q̇_k = S_lᵀ (Yc_b' dAdv_k + Bc_b' s),   ∂τ_l/∂q̈_k = S_lᵀ Yc_b' s = H_lk,
//   with dVdq_k = ν × s, dAdq_k = α × s + ν × (ν × s), dAdv_k = (ν + v_att) × s.
//   Gravity enters as α = −g at the root (RBDA §5.3).
#include "plume/algorithms/derivatives.hpp"

#include <cmath>
#include <type_traits>

#include "checks.hpp"
#include "joint_kernels.hpp"
#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/cholesky.hpp"

namespace plume {

namespace {

/// Columns of the joint's motion subspace that are attached to the parent
/// body (they do not move when the joint's own coordinates change): the first
/// two (x, y translations) of a planar joint, none for the other kinds.
template <class K>
constexpr int parent_attached = std::is_same_v<K, detail::Planar> ? 2 : 0;

/// B = ∂f/∂v of a body's f = I a + v ×* I v in the directions u, the sum
/// v ×* I u − I (v × u) + u ×* (I v). With I = [Ī h×; h×ᵀ m1], v = [ω; v_o]
/// and the momentum I v = [n; p] (p = m v_o + ω × h), skew(a) skew(b) =
/// b aᵀ − (a·b) 1 gives B = [B11 0; −2 p× 0] with
///   B11 = ω× Ī − Ī ω× − (v_o hᵀ + h v_oᵀ) + 2 (h·v_o) 1 − n×:
/// B only sees the angular part of u.
PLUME_INLINE Mat3 body_B11(const RigidInertia& I, const Motion& v, const Force& momentum) {
  const Vec3 w = v.angular(), vo = v.linear();
  const Vec3& h = I.h();
  const Mat3 W = skew(w);
  Mat3 B11 = W * I.Ibar() - I.Ibar() * W;
  B11.noalias() -= vo * h.transpose() + h * vo.transpose();
  B11.diagonal().array() += 2.0 * h.dot(vo);
  B11 -= skew(momentum.angular());
  return B11;
}

PLUME_INLINE Eigen::Index nv_total(const Data& data) { return data.nv; }

/// Y X for a rigid inertia Y and 6×N motions X, column by column.
template <int N>
PLUME_INLINE Eigen::Matrix<double, 6, N> inertia_cols(const RigidInertia& Y, const double* X) {
  Eigen::Matrix<double, 6, N> out;
  for (int k = 0; k < N; ++k) detail::inertia_times(Y, X + 6 * k, out.data() + 6 * k);
  return out;
}

// Forward step of body i (kernel K): placement, world columns, velocity and
// acceleration, the body's force and its ∂/∂v matrix B, the per-dof columns.
template <class K>
PLUME_FLATTEN void forward_body(const Model& model, Data& data, const double* q, const double* v, const double* a,
                                int i) {
  const Joint& j = model.joint(i);
  const int p = model.parent(i);
  constexpr int nv = K::nv;
  constexpr int npa = parent_attached<K>;
  K::position(j, model.Xtree(i), q + j.q_index, data.Xup[i], detail::S_cols(data.S, j));
  detail::world_placement<K>(model, data, i);
  const Mat3& E = data.X0[i].E();
  const Vec3& rel = data.orel[i];
  const double* S = detail::S_cols(data.S, j);
  double* oSp = detail::S_cols(data.oS, j);
  K::world_subspace(E, rel, S, oSp);
  const auto oS = detail::SMap<nv>(oSp);
  const double* qd = v + j.v_index;
  const double* qdd = a + j.v_index;
  // ν, α: what the joint rides on.
  Motion nu = data.ov[p];
  Motion alpha = data.oa[p];
  if constexpr (npa > 0) {
    const Motion t(Vec6(oS.template leftCols<npa>() * detail::VMap<npa>(qd)));
    alpha += Motion(Vec6(oS.template leftCols<npa>() * detail::VMap<npa>(qdd))) + nu.cross(t);
    nu += t;
  }
  const Motion vJ(Vec6(oS * detail::VMap<nv>(qd)));
  Motion& ov = data.ov[i];
  ov = data.ov[p] + vJ;
  Motion c = ov.cross(vJ);
  if constexpr (K::has_bias) c += Transform(E, rel).apply_inverse(K::bias(S, qd));
  Motion& oa = data.oa[i];
  oa = data.oa[p] + c;
  oa.vector().noalias() += oS * detail::VMap<nv>(qdd);
  // The body's own inertia, force and B; the backward pass adds the children.
  const RigidInertia oI = detail::world_inertia(model, i, E, rel);
  const Force h = detail::inertia_times(oI, ov);
  data.oFc[i] = detail::inertia_times(oI, oa) + ov.cross(h);
  data.oYc[i] = oI;
  data.oBc[i] = body_B11(oI, ov, h);
  data.opc[i] = h.linear();
  for (int k = 0; k < nv; ++k) {
    const int col = j.v_index + k;
    const Motion s(Vec6(oS.col(k)));
    const Motion dV = nu.cross(s);
    data.dVdq.col(col) = dV.vector();
    data.dAdq.col(col) = (alpha.cross(s) + nu.cross(dV)).vector();
    const Motion& vatt = k < npa ? data.ov[p] : ov;
    data.dAdv.col(col) = (nu + vatt).cross(s).vector();
  }
}

// Backward step of body i: its rows and columns against its own and every
// ancestor dof, then its composite quantities handed to the parent.
template <class K>
PLUME_FLATTEN void backward_body(const Model& model, Data& data, int i) {
  const Joint& j = model.joint(i);
  const int p = model.parent(i);
  constexpr int nv = K::nv;
  constexpr int npa = parent_attached<K>;
  const int v0 = j.v_index;
  const RigidInertia& Y = data.oYc[i];
  const Mat3& B11 = data.oBc[i];
  const Vec3& pc = data.opc[i];
  const Force& F = data.oFc[i];
  const auto oS = detail::SMap<nv>(detail::S_cols(data.oS, j));
  const auto dAdq = data.dAdq.template middleCols<nv>(v0);
  const auto dVdq = data.dVdq.template middleCols<nv>(v0);
  const auto dAdv = data.dAdv.template middleCols<nv>(v0);
  // Per own dof k: M1 = Yc s (H's column), M2 = (Bcᵀ s)'s angular part (the
  // linear one is zero), and the forces P, Q whose projections on the
  // ancestors' columns give their rows; Bc x = [B11 x_ω; −2 p × x_ω].
  const Mat3 pcx = skew(pc);
  Eigen::Matrix<double, 6, nv> M1 = inertia_cols<nv>(Y, oS.data());
  Eigen::Matrix<double, 3, nv> M2;
  M2.noalias() = B11.transpose() * oS.template topRows<3>();
  M2.noalias() += 2.0 * pcx * oS.template bottomRows<3>();
  Eigen::Matrix<double, 6, nv> P = inertia_cols<nv>(Y, data.dAdq.data() + 6 * v0);
  P.template topRows<3>().noalias() += B11 * dVdq.template topRows<3>();
  P.template bottomRows<3>().noalias() -= 2.0 * pcx * dVdq.template topRows<3>();
  Eigen::Matrix<double, 6, nv> Q = inertia_cols<nv>(Y, data.dAdv.data() + 6 * v0);
  Q.template topRows<3>().noalias() += B11 * oS.template topRows<3>();
  Q.template bottomRows<3>().noalias() -= 2.0 * pcx * oS.template topRows<3>();
  for (int k = 0; k < nv; ++k) P.col(k) += Motion(Vec6(oS.col(k))).cross(F).vector();
  data.tau.template segment<nv>(v0).noalias() = oS.transpose() * F.vector();
  // Own block: ∂τ_l/∂x_k = M1_lᵀ (…)_k + M2_lᵀ (…)_k, plus S_lᵀ (s_k ×* F) for the
  // parent-attached columns l (a planar joint's x, y).
  using MatN = Eigen::Matrix<double, nv, nv>;
  MatN own_q, own_v;
  own_q.noalias() = M1.transpose() * dAdq;
  own_q.noalias() += M2.transpose() * dVdq.template topRows<3>();
  own_v.noalias() = M1.transpose() * dAdv;
  own_v.noalias() += M2.transpose() * oS.template topRows<3>();
  if constexpr (npa > 0) {
    for (int k = 0; k < nv; ++k) {
      const Vec6 sF = Motion(Vec6(oS.col(k))).cross(F).vector();
      for (int l = 0; l < npa; ++l) own_q(l, k) += oS.col(l).dot(sF);
    }
  }
  data.dtau_dq.template block<nv, nv>(v0, v0) = own_q;
  data.dtau_dv.template block<nv, nv>(v0, v0) = own_v;
  data.H.template block<nv, nv>(v0, v0).noalias() = M1.transpose() * oS;
  // Ancestor dofs: the rows of the ancestors (τ_l against this joint's q, q̇)
  // and their columns (this joint's τ against q_l, q̇_l); one run of
  // consecutive ancestor dofs [s, e] at a time for multi-dof joints.
  if constexpr (nv == 1) {
    // One dof (most joints): fixed-size dot products, ancestor by ancestor.
    const Vec6 m1 = M1.col(0), pk = P.col(0), qk = Q.col(0);
    const Vec3 m2 = M2.col(0);
    double* rq = data.dtau_dq.data() + static_cast<Eigen::Index>(v0) * nv_total(data);
    double* rv = data.dtau_dv.data() + static_cast<Eigen::Index>(v0) * nv_total(data);
    double* rh = data.H.data() + static_cast<Eigen::Index>(v0) * nv_total(data);
    for (int l = model.dof_parent(v0); l >= 0; l = model.dof_parent(l)) {
      const Eigen::Map<const Vec6> sl(data.oS.data() + 6 * l);
      const Eigen::Map<const Vec6> aq(data.dAdq.data() + 6 * l), vq(data.dVdq.data() + 6 * l),
          av(data.dAdv.data() + 6 * l);
      rq[l] = sl.dot(pk);
      rv[l] = sl.dot(qk);
      const double hl = sl.dot(m1);
      rh[l] = hl;
      data.H(v0, l) = hl;
      data.dtau_dq(v0, l) = m1.dot(aq) + m2.dot(vq.head<3>());
      data.dtau_dv(v0, l) = m1.dot(av) + m2.dot(sl.head<3>());
    }
  } else {
    for (int e = model.dof_parent(v0); e >= 0;) {
      const int s = model.dof_run_start(e);
      const int len = e - s + 1;
      const auto Sl = data.oS.middleCols(s, len);
      data.dtau_dq.block(s, v0, len, nv).noalias() = Sl.transpose().lazyProduct(P);
      data.dtau_dv.block(s, v0, len, nv).noalias() = Sl.transpose().lazyProduct(Q);
      data.H.block(s, v0, len, nv).noalias() = Sl.transpose().lazyProduct(M1);
      data.dtau_dq.block(v0, s, nv, len).noalias() =
          M1.transpose().lazyProduct(data.dAdq.middleCols(s, len)) +
          M2.transpose().lazyProduct(data.dVdq.middleCols(s, len).template topRows<3>());
      data.dtau_dv.block(v0, s, nv, len).noalias() =
          M1.transpose().lazyProduct(data.dAdv.middleCols(s, len)) + M2.transpose().lazyProduct(Sl.template topRows<3>());
      data.H.block(v0, s, nv, len) = data.H.block(s, v0, len, nv).transpose();
      e = model.dof_parent(s);
    }
  }
  if (p > 0) {
    data.oYc[p] += Y;
    data.oBc[p] += B11;
    data.opc[p] += pc;
    data.oFc[p] += F;
  }
}

// Forward pass, root to leaves: placements, world columns, velocities,
// accelerations (with the −g offset) and their per-dof derivative columns.
void derivative_forward_pass(const Model& model, Data& data, const double* q, const double* v, const double* a) {
  const int nb = model.nbodies();
  data.ov[0] = Motion::Zero();
  data.oa[0] = Motion(Vec3::Zero(), -model.gravity());
  for (int i = 1; i < nb; ++i) {
    detail::visit_kind(model.joint(i).kind, [&](auto jk) PLUME_LAMBDA_INLINE { forward_body<decltype(jk)>(model, data, q, v, a, i); });
  }
}

void rnea_derivative_passes(const Model& model, Data& data, const double* q, const double* v, const double* a) {
  const int nb = model.nbodies();
  derivative_forward_pass(model, data, q, v, a);
  // Backward pass, leaves to root.
  data.dtau_dq.setZero();
  data.dtau_dv.setZero();
  data.H.setZero();
  for (int i = nb - 1; i > 0; --i) {
    detail::visit_kind(model.joint(i).kind, [&](auto jk) PLUME_LAMBDA_INLINE { backward_body<decltype(jk)>(model, data, i); });
  }
}

}  // namespace

namespace unchecked {

void rnea_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a) {
  rnea_derivative_passes(model, data, q.data(), v.data(), a.data());
}

void kinematics_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a) {
  derivative_forward_pass(model, data, q.data(), v.data(), a.data());
}

void aba_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau) {
  unchecked::aba(model, data, q, v, tau);
  rnea_derivative_passes(model, data, q.data(), v.data(), data.ddq.data());
  unchecked::ltdl(model, data);
  // ∂q̈/∂x = −H⁻¹ ∂τ/∂x at q̈ (differentiate H q̈ + C = τ): sparse solves on
  // the rows of (∂τ/∂x)ᵀ with the factor of H, and H⁻¹ itself.
  ltdl_inverse(model, data, data.Minv);
  data.ddq_dq = -data.dtau_dq.transpose();
  data.ddq_dv = -data.dtau_dv.transpose();
  ltdl_solve_rows(model, data, data.ddq_dq);
  ltdl_solve_rows(model, data, data.ddq_dv);
  data.ddq_dq.transposeInPlace();
  data.ddq_dv.transposeInPlace();
}

}  // namespace unchecked

void rnea_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a) {
  detail::check_state(model, data, q);
  detail::check_vector_fast(v, model.nv(), "v");
  detail::check_vector_fast(a, model.nv(), "a");
  unchecked::rnea_derivatives(model, data, q, v, a);
}

void kinematics_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a) {
  detail::check_state(model, data, q);
  detail::check_vector_fast(v, model.nv(), "v");
  detail::check_vector_fast(a, model.nv(), "a");
  unchecked::kinematics_derivatives(model, data, q, v, a);
}

void aba_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau) {
  detail::check_state(model, data, q);
  detail::check_vector_fast(v, model.nv(), "v");
  detail::check_vector_fast(tau, model.nv(), "tau");
  unchecked::aba_derivatives(model, data, q, v, tau);
}

}  // namespace plume
