// The forward and backward passes of rnea_derivatives and aba_derivatives.
// No include guard: derivatives.cpp includes this file twice, in namespace
// `portable` (the build's own instruction set) and, on x86-64 with GCC, in
// namespace `avx2` under `#pragma GCC target("avx2")`, and picks one at run
// time (see derivatives.cpp). Both builds perform the same operations in the
// same order: AVX2 only packs more of them per instruction (no fused
// multiply-adds, which the build does not contract), so their results are
// bit for bit the same.

// Forward step of body i (kernel K), kinematic half: placement, world
// columns, velocity and acceleration.
// sc: the revolute joints' sines and cosines (detail::revolute_sin_cos).
template <class K>
PLUME_FLATTEN void forward_kinematics_body(const Model& model, Data& data, const double* q, const double* v,
                                           const double* a, const double* sc, int i) {
  const Joint& j = model.joint(i);
  const int p = model.parent(i);
  constexpr int nv = K::nv;
  detail::position_from<K>(j, model.Xtree(i), q + j.q_index, sc, i, data.Xup[i], detail::S_cols(data.S, j));
  const Vec3 rel = detail::world_placement<K>(model, data, i);
  const Mat3& E = data.X0[i].E();
  const double* S = detail::S_cols(data.S, j);
  double* oS = detail::S_cols(data.oS, j);
  const double* qd = v + j.v_index;
  const double* qdd = a + j.v_index;
  double vJ[6], aJ[6];
  if constexpr (nv == 1) {
    // The world column kept in registers: stored, and used from there.
    double w[6];
    K::world_subspace(E, rel, S, w);
    for (int k = 0; k < 6; ++k) {
      oS[k] = w[k];
      vJ[k] = w[k] * qd[0];
      aJ[k] = w[k] * qdd[0];
    }
  } else {
    K::world_subspace(E, rel, S, oS);
    Eigen::Map<Vec6>(vJ).noalias() = detail::SMap<nv>(oS) * detail::VMap<nv>(qd);
    Eigen::Map<Vec6>(aJ).noalias() = detail::SMap<nv>(oS) * detail::VMap<nv>(qdd);
  }
  double* ov = data.ov[i].vector().data();
  const double* ovp = data.ov[p].vector().data();
  double vi[6];
  for (int k = 0; k < 6; ++k) vi[k] = ovp[k] + vJ[k];
  double c[6];
  if (std::is_same_v<K, detail::FreeFlyer> && p == 0) {
    // A free-flyer on the world: v = vJ, and vJ × vJ = 0.
    for (int k = 0; k < 6; ++k) c[k] = 0.0;
  } else {
    motion_cross(vi, vJ, c);
  }
  if constexpr (K::has_bias) {
    const Motion cb = Transform(E, rel).apply_inverse(K::bias(S, qd));
    for (int k = 0; k < 6; ++k) c[k] += cb.vector()[k];
  }
  const double* oap = data.oa[p].vector().data();
  double* oa = data.oa[i].vector().data();
  for (int k = 0; k < 6; ++k) {
    ov[k] = vi[k];
    oa[k] = (oap[k] + c[k]) + aJ[k];
  }
}

// Forward step of body i, dynamic half (after the kinematic half): the
// body's force and its ∂/∂v matrix B, the per-dof derivative columns.
template <class K>
PLUME_FLATTEN void forward_dynamics_body(const Model& model, Data& data, const double* v, const double* a, int i) {
  const Joint& j = model.joint(i);
  const int p = model.parent(i);
  constexpr int nv = K::nv;
  constexpr int npa = parent_attached<K>;
  const Mat3& E = data.X0[i].E();
  const Vec3& rel = data.orel[i];
  const double* oS = detail::S_cols(data.oS, j);
  // ν, α: what the joint rides on.
  double nu[6], alpha[6];
  for (int k = 0; k < 6; ++k) {
    nu[k] = data.ov[p].vector()[k];
    alpha[k] = data.oa[p].vector()[k];
  }
  if constexpr (npa > 0) {
    const double* qd = v + j.v_index;
    const double* qdd = a + j.v_index;
    double t[6], tt[6];
    for (int k = 0; k < 6; ++k) t[k] = oS[k] * qd[0] + oS[6 + k] * qd[1];
    motion_cross(nu, t, tt);
    for (int k = 0; k < 6; ++k) {
      alpha[k] += (oS[k] * qdd[0] + oS[6 + k] * qdd[1]) + tt[k];
      nu[k] += t[k];
    }
  }
  const double* ov = data.ov[i].vector().data();
  const double* oa = data.oa[i].vector().data();
  // The body's own inertia, force and B; the backward pass adds the children.
  const RigidInertia oI = detail::world_inertia(model, i, E, rel);
  double h[6];
  detail::inertia_times(oI, ov, h);
  double* F = data.oFc[i].vector().data();
  detail::inertia_times(oI, oa, F);
  add_force_cross(ov, h, F);
  data.oYc[i] = oI;
  body_B11_scalar(oI, ov, h, data.oBc[i]);
  data.opc[i] = Vec3(h[3], h[4], h[5]);
  for (int k = 0; k < nv; ++k) {
    const int col = j.v_index + k;
    const double* s = oS + 6 * k;
    double* dV = data.dVdq.data() + 6 * col;
    double* dA = data.dAdq.data() + 6 * col;
    double* dAv = data.dAdv.data() + 6 * col;
    double t1[6], t2[6];
    motion_cross(alpha, s, t2);
    if (std::is_same_v<K, detail::FreeFlyer> && p == 0) {
      // A free-flyer on the world: ν = 0, so ν × s and ν × (ν × s) vanish.
      for (int c = 0; c < 6; ++c) {
        t1[c] = 0.0;
        dV[c] = 0.0;
        dA[c] = t2[c];
      }
    } else {
      motion_cross(nu, s, t1);
      double t3[6];
      motion_cross(nu, t1, t3);
      for (int c = 0; c < 6; ++c) {
        dV[c] = t1[c];
        dA[c] = t2[c] + t3[c];
      }
    }
    if constexpr (nv == 1) {
      // v = ν + s q̇, and s × s = 0: (ν + v) × s = 2 ν × s.
      for (int c = 0; c < 6; ++c) dAv[c] = t1[c] + t1[c];
    } else {
      const double* vatt = k < npa ? data.ov[p].vector().data() : ov;
      double w[6];
      for (int c = 0; c < 6; ++c) w[c] = nu[c] + vatt[c];
      motion_cross(w, s, dAv);
    }
  }
}

// Forward step of a one-dof body (most joints), both halves at once, on
// plain arrays. With ν, α the parent's velocity and acceleration and s the
// world column: dVdq = ν × s, and since v = ν + s q̇ and s × s = 0, the
// velocity product v × (s q̇) is q̇ dVdq (no cross product of its own), and
// dAdv = 2 dVdq. ν, α, v and a stay in registers for the body's force and B.
template <class K>
PLUME_FLATTEN void forward_body_1(const Model& model, Data& data, const double* q, const double* v, const double* a,
                                  const double* sc, int i) {
  const Joint& j = model.joint(i);
  const int p = model.parent(i);
  detail::position_from<K>(j, model.Xtree(i), q + j.q_index, sc, i, data.Xup[i], detail::S_cols(data.S, j));
  const Vec3 rel = detail::world_placement<K>(model, data, i);
  const Mat3& E = data.X0[i].E();
  const int col = j.v_index;
  double s[6];
  K::world_subspace(E, rel, detail::S_cols(data.S, j), s);
  const double qd = v[col], qdd = a[col];
  const double* nu = data.ov[p].vector().data();
  const double* alpha = data.oa[p].vector().data();
  double t1[6], t2[6], t3[6], vi[6], ai[6];
  motion_cross(nu, s, t1);
  motion_cross(alpha, s, t2);
  motion_cross(nu, t1, t3);
  double* oS = data.oS.data() + 6 * col;
  double* dV = data.dVdq.data() + 6 * col;
  double* dA = data.dAdq.data() + 6 * col;
  double* dAv = data.dAdv.data() + 6 * col;
  double* ov = data.ov[i].vector().data();
  double* oa = data.oa[i].vector().data();
  for (int k = 0; k < 6; ++k) {
    vi[k] = nu[k] + s[k] * qd;
    ai[k] = (alpha[k] + t1[k] * qd) + s[k] * qdd;
    oS[k] = s[k];
    dV[k] = t1[k];
    dA[k] = t2[k] + t3[k];
    dAv[k] = t1[k] + t1[k];
    ov[k] = vi[k];
    oa[k] = ai[k];
  }
  const RigidInertia oI = detail::world_inertia(model, i, E, rel);
  double h[6];
  detail::inertia_times(oI, vi, h);
  double* F = data.oFc[i].vector().data();
  double f[6];
  detail::inertia_times(oI, ai, f);
  add_force_cross(vi, h, f);
  for (int k = 0; k < 6; ++k) F[k] = f[k];
  data.oYc[i] = oI;
  body_B11_scalar(oI, vi, h, data.oBc[i]);
  data.opc[i] = Vec3(h[3], h[4], h[5]);
}

// ---- aba_derivatives without ABA ------------------------------------------
//
// aba_derivatives needs q̈ before its backward pass (∂τ/∂q depends on q̈
// through the forces and the accelerations α). Instead of running ABA for it:
// the forward pass at q̈ = 0, composite_pass (the composites, H and τ − C, C
// the forces at q̈ = 0), q̈ = H⁻¹ (τ − C) by the factor the solves need anyway,
// then a linear update of what depends on q̈: with Δa_i = Δa_λ + S_i q̈_i (the
// acceleration q̈ adds to body i), α moves by Δa_λ (plus a planar joint's
// parent-attached columns' share), so dAdq_k += Δα × s_k, and the composite
// force of body i's subtree moves by Σ_j I_j Δa_j = Yc_i Δa_i + R_i with
// R_i = Σ_children (R_c + Yc_c S_c q̈_c) (composite_force_at_ddq).

/// Leaves to root, before q̈ is known: each body's composite inertia, B11,
/// momentum and force (at q̈ = 0) handed to the parent, H from the composite
/// inertias (H_lk = s_l · Yc s_k for l at or above k; the columns Yc s_k kept
/// in data.U for the backward pass), and the right-hand side τ − C of
/// H q̈ = τ − C in data.ddq (C_k = s_k · Fc at q̈ = 0).
/// ff: root_free_flyer(model) (its columns are blockdiag(Eᵀ, Eᵀ)).
template <class K>
PLUME_FLATTEN void composite_body(const Model& model, Data& data, const double* tau, int i, bool ff) {
  const Joint& j = model.joint(i);
  const int p = model.parent(i);
  constexpr int nv = K::nv;
  const int v0 = j.v_index;
  const RigidInertia& Y = data.oYc[i];
  const double* F = data.oFc[i].vector().data();
  const double* s = detail::S_cols(data.oS, j);
  const Eigen::Index n = nv_total(data);
  double* m1 = data.U.data() + 6 * static_cast<Eigen::Index>(v0);
  if constexpr (nv == 1) {
    detail::inertia_times(Y, s, m1);
    data.ddq[v0] = tau[v0] - dot6(s, F);
    double* rh = data.H.data() + static_cast<Eigen::Index>(v0) * n;
    rh[v0] = dot6(m1, s);
    const int lo = ff ? 6 : 0;
    int l = model.dof_parent(v0);
    for (; l >= lo; l = model.dof_parent(l)) {
      const double hl = dot6(data.oS.data() + 6 * l, m1);
      rh[l] = hl;
      data.H(v0, l) = hl;
    }
    if (ff && l == 5) {
      const double* S = data.oS.data();  // S[6 l + c] = E(l, c) for l, c < 3
      for (int r = 0; r < 3; ++r) {
        const double hw = dot3(S + 6 * r, m1), hv = dot3(S + 6 * r, m1 + 3);
        rh[r] = hw;
        rh[r + 3] = hv;
        data.H(v0, r) = hw;
        data.H(v0, r + 3) = hv;
      }
    }
  } else {
    const auto oS = detail::SMap<nv>(s);
    const Eigen::Matrix<double, 6, nv> M1 = inertia_cols<nv>(Y, s);
    Eigen::Map<Eigen::Matrix<double, 6, nv>> M1s(m1);
    M1s = M1;
    data.ddq.template segment<nv>(v0) = detail::VMap<nv>(tau + v0) - oS.transpose() * data.oFc[i].vector();
    data.H.template block<nv, nv>(v0, v0).noalias() = M1.transpose() * oS;
    for (int e = model.dof_parent(v0); e >= 0;) {
      const int st = model.dof_run_start(e);
      const int len = e - st + 1;
      data.H.block(st, v0, len, nv).noalias() = data.oS.middleCols(st, len).transpose().lazyProduct(M1);
      data.H.block(v0, st, nv, len) = data.H.block(st, v0, len, nv).transpose();
      e = model.dof_parent(st);
    }
  }
  if (p > 0) {
    data.oYc[p] += Y;
    data.oBc[p] += data.oBc[i];
    data.opc[p] += data.opc[i];
    data.oFc[p] += data.oFc[i];
  }
}

void composite_pass(const Model& model, Data& data, const double* tau) {
  data.H.setZero();
  const bool ff = root_free_flyer(model);
  for (int i = model.nbodies() - 1; i > 0; --i) {
    detail::visit_kind(model.joint(i).kind, [&](auto jk) PLUME_PASS_LAMBDA {
      composite_body<decltype(jk)>(model, data, tau, i, ff);
    });
  }
}

/// Root to leaves, once q̈ is in data.ddq: Δa_i (kept in data.oc), data.oa
/// moved to q̈, dAdq_k += Δα × s_k, and R (kept in data.opA) zeroed.
template <class K>
PLUME_INLINE void acceleration_update_body(const Model& model, Data& data, int i) {
  const Joint& j = model.joint(i);
  constexpr int nv = K::nv;
  constexpr int npa = parent_attached<K>;
  const int v0 = j.v_index;
  const double* s = detail::S_cols(data.oS, j);
  const double* qdd = data.ddq.data() + v0;
  const double* dap = data.oc[model.parent(i)].vector().data();
  double alpha[6], da[6];
  for (int k = 0; k < 6; ++k) alpha[k] = dap[k];
  if constexpr (npa > 0) {
    for (int k = 0; k < 6; ++k) alpha[k] += s[k] * qdd[0] + s[6 + k] * qdd[1];
  }
  for (int c = 0; c < nv; ++c) {
    double t[6];
    motion_cross(alpha, s + 6 * c, t);
    double* dA = data.dAdq.data() + 6 * (v0 + c);
    for (int k = 0; k < 6; ++k) dA[k] += t[k];
  }
  for (int k = 0; k < 6; ++k) da[k] = dap[k];
  for (int c = 0; c < nv; ++c) {
    for (int k = 0; k < 6; ++k) da[k] += s[6 * c + k] * qdd[c];
  }
  double* oc = data.oc[i].vector().data();
  double* oa = data.oa[i].vector().data();
  for (int k = 0; k < 6; ++k) {
    oc[k] = da[k];
    oa[k] += da[k];
  }
  data.opA[i] = Force::Zero();
}

void acceleration_update(const Model& model, Data& data) {
  data.oc[0] = Motion::Zero();
  for (int i = 1; i < model.nbodies(); ++i) {
    detail::visit_kind(model.joint(i).kind, [&](auto jk) PLUME_PASS_LAMBDA {
      acceleration_update_body<decltype(jk)>(model, data, i);
    });
  }
}

/// Body i's composite force at q̈ (data.oFc[i] += Yc_i Δa_i + R_i), and its
/// share of the parent's R: R_λ += R_i + Σ_k M1_k q̈_k (M1 = Yc_i S_i, 6 × nv).
template <int nv>
PLUME_INLINE void composite_force_at_ddq(Data& data, int i, int p, const double* M1, int v0) {
  double* F = data.oFc[i].vector().data();
  const double* R = data.opA[i].vector().data();
  double y[6];
  detail::inertia_times(data.oYc[i], data.oc[i].vector().data(), y);
  for (int k = 0; k < 6; ++k) F[k] += y[k] + R[k];
  if (p > 0) {
    double* Rp = data.opA[p].vector().data();
    const double* qdd = data.ddq.data() + v0;
    for (int k = 0; k < 6; ++k) {
      double r = R[k];
      for (int c = 0; c < nv; ++c) r += M1[6 * c + k] * qdd[c];
      Rp[k] += r;
    }
  }
}

// Backward step of body i: its rows and columns against its own and every
// ancestor dof, then its composite quantities handed to the parent. Tr
// (aba_derivatives): Dq, Dv receive (∂τ/∂q)ᵀ and (∂τ/∂q̇)ᵀ (the layout of the
// row solves) instead of ∂τ/∂q and ∂τ/∂q̇; composite_pass has summed the
// composites and formed H, and the force at q̈ is formed here
// (composite_force_at_ddq).
template <class K, bool Tr>
PLUME_FLATTEN void backward_body(const Model& model, Data& data, MatrixX& Dq, MatrixX& Dv, int i) {
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
  Eigen::Matrix<double, 6, nv> M1;
  if constexpr (Tr) {
    M1 = Eigen::Map<const Eigen::Matrix<double, 6, nv>>(data.U.data() + 6 * static_cast<Eigen::Index>(v0));
  } else {
    M1 = inertia_cols<nv>(Y, oS.data());
  }
  if constexpr (Tr) composite_force_at_ddq<nv>(data, i, p, M1.data(), v0);
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
  if constexpr (Tr) {
    Dq.template block<nv, nv>(v0, v0) = own_q.transpose();
    Dv.template block<nv, nv>(v0, v0) = own_v.transpose();
  } else {
    Dq.template block<nv, nv>(v0, v0) = own_q;
    Dv.template block<nv, nv>(v0, v0) = own_v;
  }
  if constexpr (!Tr) data.H.template block<nv, nv>(v0, v0).noalias() = M1.transpose() * oS;
  // Ancestor dofs: the rows of the ancestors (τ_l against this joint's q, q̇)
  // and their columns (this joint's τ against q_l, q̇_l); one run of
  // consecutive ancestor dofs [s, e] at a time for multi-dof joints.
  if constexpr (nv == 1) {
    // One dof (most joints): fixed-size dot products, ancestor by ancestor.
    const Vec6 m1 = M1.col(0), pk = P.col(0), qk = Q.col(0);
    const Vec3 m2 = M2.col(0);
    ancestor_terms_1<Tr>(model, data, Dq, Dv, v0, m1.data(), m2.data(), pk.data(), qk.data(), false);
  } else {
    for (int e = model.dof_parent(v0); e >= 0;) {
      const int s = model.dof_run_start(e);
      const int len = e - s + 1;
      const auto Sl = data.oS.middleCols(s, len);
      if constexpr (Tr) {
        Dq.block(v0, s, nv, len).noalias() = P.transpose().lazyProduct(Sl);
        Dv.block(v0, s, nv, len).noalias() = Q.transpose().lazyProduct(Sl);
        Dq.block(s, v0, len, nv).noalias() =
            data.dAdq.middleCols(s, len).transpose().lazyProduct(M1) +
            data.dVdq.middleCols(s, len).template topRows<3>().transpose().lazyProduct(M2);
        Dv.block(s, v0, len, nv).noalias() =
            data.dAdv.middleCols(s, len).transpose().lazyProduct(M1) + Sl.template topRows<3>().transpose().lazyProduct(M2);
      } else {
        data.H.block(s, v0, len, nv).noalias() = Sl.transpose().lazyProduct(M1);
        data.H.block(v0, s, nv, len) = data.H.block(s, v0, len, nv).transpose();
        Dq.block(s, v0, len, nv).noalias() = Sl.transpose().lazyProduct(P);
        Dv.block(s, v0, len, nv).noalias() = Sl.transpose().lazyProduct(Q);
        Dq.block(v0, s, nv, len).noalias() =
            M1.transpose().lazyProduct(data.dAdq.middleCols(s, len)) +
            M2.transpose().lazyProduct(data.dVdq.middleCols(s, len).template topRows<3>());
        Dv.block(v0, s, nv, len).noalias() =
            M1.transpose().lazyProduct(data.dAdv.middleCols(s, len)) + M2.transpose().lazyProduct(Sl.template topRows<3>());
      }
      e = model.dof_parent(s);
    }
  }
  if (!Tr && p > 0) {
    data.oYc[p] += Y;
    data.oBc[p] += B11;
    data.opc[p] += pc;
    data.oFc[p] += F;
  }
}

// Backward step of a one-dof body (most joints) on plain arrays, as
// backward_body: M1 = Yc s, M2, P, Q formed coefficient by coefficient.
template <bool Tr>
PLUME_FLATTEN void backward_body_1(const Model& model, Data& data, MatrixX& Dq, MatrixX& Dv, int i, bool ff) {
  const int p = model.parent(i);
  const int v0 = model.joint(i).v_index;
  const RigidInertia& Y = data.oYc[i];
  const Mat3& B = data.oBc[i];
  const double* pc = data.opc[i].data();
  const double* F = data.oFc[i].vector().data();
  const double* s = data.oS.data() + 6 * v0;
  const double* aq = data.dAdq.data() + 6 * v0;
  const double* vq = data.dVdq.data() + 6 * v0;
  const double* av = data.dAdv.data() + 6 * v0;
  alignas(16) double m1[6], m2[4], P[6], Q[6];
  if constexpr (Tr) {
    const double* u = data.U.data() + 6 * static_cast<Eigen::Index>(v0);
    for (int k = 0; k < 6; ++k) m1[k] = u[k];
    composite_force_at_ddq<1>(data, i, p, m1, v0);
  } else {
    detail::inertia_times(Y, s, m1);
  }
  detail::inertia_times(Y, aq, P);
  detail::inertia_times(Y, av, Q);
  // M2 = B11ᵀ s_ω + 2 pc × s_v; P += [B11 vq_ω; −2 pc × vq_ω] + s ×* F;
  // Q += [B11 s_ω; −2 pc × s_ω].
  const double p2[3] = {2.0 * pc[0], 2.0 * pc[1], 2.0 * pc[2]};
  for (int r = 0; r < 3; ++r) {
    m2[r] = (B(0, r) * s[0] + B(1, r) * s[1]) + B(2, r) * s[2];
    P[r] += (B(r, 0) * vq[0] + B(r, 1) * vq[1]) + B(r, 2) * vq[2];
    Q[r] += (B(r, 0) * s[0] + B(r, 1) * s[1]) + B(r, 2) * s[2];
  }
  m2[3] = 0.0;
  m2[0] += p2[1] * s[5] - p2[2] * s[4];
  m2[1] += p2[2] * s[3] - p2[0] * s[5];
  m2[2] += p2[0] * s[4] - p2[1] * s[3];
  P[3] -= p2[1] * vq[2] - p2[2] * vq[1];
  P[4] -= p2[2] * vq[0] - p2[0] * vq[2];
  P[5] -= p2[0] * vq[1] - p2[1] * vq[0];
  Q[3] -= p2[1] * s[2] - p2[2] * s[1];
  Q[4] -= p2[2] * s[0] - p2[0] * s[2];
  Q[5] -= p2[0] * s[1] - p2[1] * s[0];
  add_force_cross(s, F, P);
  data.tau[v0] = dot6(s, F);
  Dq(v0, v0) = dot6(m1, aq) + dot3(m2, vq);
  Dv(v0, v0) = dot6(m1, av) + dot3(m2, s);
  if constexpr (!Tr) data.H(v0, v0) = dot6(m1, s);
  ancestor_terms_1<Tr>(model, data, Dq, Dv, v0, m1, m2, P, Q, ff);
  if (!Tr && p > 0) {
    data.oYc[p] += Y;
    data.oBc[p] += B;
    data.opc[p] += data.opc[i];
    data.oFc[p] += data.oFc[i];
  }
}

// Backward step of the root free-flyer (body 1 when root_free_flyer(model)),
// in closed form. Its columns are S = blockdiag(Eᵀ, Eᵀ) (E = X0[1].E(); body
// 1's origin is its subtree root) and it rides on the world: ν = 0,
// α = [0; γ] with γ = −g, so dVdq = 0, dAdq_k = [0; γ × Eᵀe_k] for the
// rotations (0 for the translations) and dAdv_k = v_1 × s_k. S is orthogonal
// and commutes with the cross products, so on the body's axes (x_b = Sᵀ x,
// Y_b = Sᵀ Y S: Ī_b = E Ī Eᵀ, h_b = E h) its block of each result is
//   H = Y_b,  ∂τ/∂q = [Y_b [0; γ_b×]  0],  ∂τ/∂q̇ = Y_b (v_b×) + [B_b 0; −2 pc_b× 0],
//   τ = F_b   (B_b = E B11 Eᵀ, pc_b = E pc),
// instead of backward_body's 6-column products with the zero dVdq. It has no
// ancestors and hands nothing up. Tr as backward_body.
template <bool Tr>
PLUME_FLATTEN void root_free_flyer_backward(Data& data, MatrixX& Dq, MatrixX& Dv) {
  const Mat3& E = data.X0[1].E();
  const RigidInertia& Y = data.oYc[1];
  if constexpr (Tr) composite_force_at_ddq<6>(data, 1, 0, data.U.data(), 0);
  double Ib[3][3], Bb[3][3], hb[3], pb[3], gb[3], vb[6], T[3][3], U[3][3];
  const double m = Y.mass();
  const Mat3& J = Y.Ibar();
  const Mat3& B = data.oBc[1];
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      T[r][c] = (E(r, 0) * J(0, c) + E(r, 1) * J(1, c)) + E(r, 2) * J(2, c);
      U[r][c] = (E(r, 0) * B(0, c) + E(r, 1) * B(1, c)) + E(r, 2) * B(2, c);
    }
  }
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      if (c >= r) Ib[r][c] = (T[r][0] * E(c, 0) + T[r][1] * E(c, 1)) + T[r][2] * E(c, 2);
      Bb[r][c] = (U[r][0] * E(c, 0) + U[r][1] * E(c, 1)) + U[r][2] * E(c, 2);
    }
  }
  Ib[1][0] = Ib[0][1];
  Ib[2][0] = Ib[0][2];
  Ib[2][1] = Ib[1][2];
  // x_b = E x for 3-vectors.
  const auto rot3 = [&E](const double* x, double* o) PLUME_LAMBDA_INLINE {
    for (int r = 0; r < 3; ++r) o[r] = (E(r, 0) * x[0] + E(r, 1) * x[1]) + E(r, 2) * x[2];
  };
  rot3(Y.h().data(), hb);
  rot3(data.opc[1].data(), pb);
  rot3(data.oa[0].vector().data() + 3, gb);
  rot3(data.ov[1].vector().data(), vb);
  rot3(data.ov[1].vector().data() + 3, vb + 3);
  const double* F = data.oFc[1].vector().data();
  rot3(F, data.tau.data());
  rot3(F + 3, data.tau.data() + 3);
  // Y_b x for a 6-vector x (inertia_times on the body's axes).
  const auto Yb = [&](const double* x, double* o) PLUME_LAMBDA_INLINE {
    for (int r = 0; r < 3; ++r) o[r] = (Ib[r][0] * x[0] + Ib[r][1] * x[1]) + Ib[r][2] * x[2];
    o[0] += hb[1] * x[5] - hb[2] * x[4];
    o[1] += hb[2] * x[3] - hb[0] * x[5];
    o[2] += hb[0] * x[4] - hb[1] * x[3];
    o[3] = m * x[3] - (hb[1] * x[2] - hb[2] * x[1]);
    o[4] = m * x[4] - (hb[2] * x[0] - hb[0] * x[2]);
    o[5] = m * x[5] - (hb[0] * x[1] - hb[1] * x[0]);
  };
  // Column k of each block (c3: the unit vector e_k's cross products).
  double dq[6][6], dv[6][6];  // [k][l]: column k
  for (int k = 0; k < 6; ++k) {
    const int a = k % 3, b = (k + 1) % 3, c = (k + 2) % 3;  // x × e_a = [.., x_c at b, −x_b at c]
    double x[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    if (k < 3) {
      // v_b × [e_a; 0] = [ω × e_a; u × e_a]
      x[b] = vb[c];
      x[c] = -vb[b];
      x[3 + b] = vb[3 + c];
      x[3 + c] = -vb[3 + b];
    } else {
      // v_b × [0; e_a] = [0; ω × e_a]
      x[3 + b] = vb[c];
      x[3 + c] = -vb[b];
    }
    Yb(x, dv[k]);
    if (k < 3) {
      for (int r = 0; r < 3; ++r) dv[k][r] += Bb[r][a];
      // −2 pc_b × e_a
      dv[k][3 + b] -= 2.0 * pb[c];
      dv[k][3 + c] += 2.0 * pb[b];
      double y[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
      y[3 + b] = gb[c];
      y[3 + c] = -gb[b];
      Yb(y, dq[k]);
    }
  }
  for (int k = 0; k < 6; ++k) {
    for (int l = 0; l < 6; ++l) {
      if constexpr (Tr) {
        if (k < 3) Dq(k, l) = dq[k][l];
        Dv(k, l) = dv[k][l];
      } else {
        if (k < 3) Dq(l, k) = dq[k][l];
        Dv(l, k) = dv[k][l];
      }
    }
  }
  if constexpr (!Tr) {
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) {
        data.H(r, c) = Ib[r][c];
        data.H(r + 3, c + 3) = r == c ? m : 0.0;
      }
    }
    const double hx[3][3] = {{0.0, -hb[2], hb[1]}, {hb[2], 0.0, -hb[0]}, {-hb[1], hb[0], 0.0}};
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) {
        data.H(r, c + 3) = hx[r][c];
        data.H(r + 3, c) = -hx[r][c];
      }
    }
  }
}

// Forward pass, root to leaves: placements, world columns, velocities,
// accelerations (with the −g offset) and their per-dof derivative columns.
void derivative_forward_pass(const Model& model, Data& data, const double* q, const double* v, const double* a) {
  const int nb = model.nbodies();
  double* sc = data.qsc.data();
  detail::revolute_sin_cos(model, q, sc);
  data.ov[0] = Motion::Zero();
  data.oa[0] = Motion(Vec3::Zero(), -model.gravity());
  for (int i = 1; i < nb; ++i) {
    detail::visit_kind(model.joint(i).kind, [&](auto jk) PLUME_PASS_LAMBDA {
      using K = decltype(jk);
      if constexpr (K::nv == 1 && !K::has_bias) {
        forward_body_1<K>(model, data, q, v, a, sc, i);
      } else {
        forward_kinematics_body<K>(model, data, q, v, a, sc, i);
        forward_dynamics_body<K>(model, data, v, a, i);
      }
    });
  }
}

// Backward pass, leaves to root, into Dq, Dv (transposed when Tr).
template <bool Tr>
void derivative_backward_pass(const Model& model, Data& data, MatrixX& Dq, MatrixX& Dv) {
  Dq.setZero();
  Dv.setZero();
  if (!Tr) data.H.setZero();
  const bool ff = root_free_flyer(model);
  for (int i = model.nbodies() - 1; i > 0; --i) {
    detail::visit_kind(model.joint(i).kind,
                       [&](auto jk) PLUME_PASS_LAMBDA {
                         using K = decltype(jk);
                         if constexpr (K::nv == 1) {
                           backward_body_1<Tr>(model, data, Dq, Dv, i, ff);
                         } else if (std::is_same_v<K, detail::FreeFlyer> && ff && i == 1) {
                           root_free_flyer_backward<Tr>(data, Dq, Dv);
                         } else {
                           backward_body<K, Tr>(model, data, Dq, Dv, i);
                         }
                       });
  }
}

/// rnea_derivatives' passes.
inline void rnea_derivatives_passes(const Model& model, Data& data, const double* q, const double* v,
                                    const double* a) {
  derivative_forward_pass(model, data, q, v, a);
  derivative_backward_pass<false>(model, data, data.dtau_dq, data.dtau_dv);
}

/// aba_derivatives up to the solves: the forward pass at q̈ = 0, the
/// composites with H and τ − C, q̈ by the factor of H, the q̈-dependent
/// quantities moved to q̈ (see composite_pass), then the backward pass, which
/// writes (∂τ/∂q)ᵀ, (∂τ/∂q̇)ᵀ straight into ddq_dq, ddq_dv.
inline void aba_derivatives_passes(const Model& model, Data& data, const double* q, const double* v,
                                   const double* tau) {
  data.ddq.setZero();
  derivative_forward_pass(model, data, q, v, data.ddq.data());
  composite_pass(model, data, tau);
  unchecked::ltdl(model, data);
  ltdl_solve(model, data, data.ddq);
  acceleration_update(model, data);
  derivative_backward_pass<true>(model, data, data.ddq_dq, data.ddq_dv);
}
