// Articulated-body algorithm (RBDA Table 7.1), with world axes (about each
// subtree root's origin, see Data::orel): the articulated inertia of a child
// adds to its parent's without a transform.
#include "plume/algorithms/aba.hpp"

#include <Eigen/Cholesky>

#include "checks.hpp"
#include "joint_kernels.hpp"
#include "root_leaves.hpp"

namespace plume {

namespace {

// A free-flyer body without children (a box, a ball, a free leaf of a
// tree): its articulated inertia is its own rigid inertia, so
// q̈ = I⁻¹(τ − pA) − S⁻¹a with I its constant inertia in body coordinates,
// solved through the rotational inertia about the centre of mass instead of
// a 6×6 factorisation of D = SᵀIS at every call.
bool free_leaf(const Model& model, int i) {
  if (model.inertia(i).mass() <= 0.0) return false;
  for (int j = i + 1; j < model.nbodies(); ++j) {
    if (model.parent(j) == i) return false;
  }
  return true;
}

// x = I⁻¹ r for a body's rigid inertia I (mass m, centre of mass c,
// rotational inertia Ic about it) and a force r = [n; f] in body coordinates:
// α = Ic⁻¹ (n − c × f), a = f / m + c × α (the Schur complement of m 1 is Ic).
PLUME_INLINE Vec6 solve_rigid_inertia(const Model& model, int i, const Vec6& r) {
  const double m = model.inertia(i).mass();
  const Vec3& c = model.body_com(i);
  const Vec3 f = r.tail<3>();
  const Vec3 alpha = model.body_inertia_about_com(i).ldlt().solve(r.head<3>() - c.cross(f));
  Vec6 x;
  x << alpha, f / m + c.cross(alpha);
  return x;
}

/// a · b for 6-vectors, summed as Eigen's vectorised inner product does
/// (the 1×6 by 6×1 products of a one-dof joint, which GCC called out of line).
PLUME_INLINE double dot6(const double* a, const double* b) {
  return (a[0] * b[0] + (a[2] * b[2] + a[4] * b[4])) + (a[1] * b[1] + (a[3] * b[3] + a[5] * b[5]));
}

/// q̈ of a one-dof body on the world without children (a pendulum, a lone
/// slider), in its body coordinates: its articulated inertia is its rigid
/// inertia I, its parent's velocity is zero, so c = v × vJ = 0, and
/// Sᵀ(v ×* I v) = q̇² Sᵀ(S ×* I S) = 0; with U = I S, D = Sᵀ U and the
/// parent's acceleration [0; E(−g)] (E = Xup's rotation),
/// q̈ = (τ − U_linᵀ E(−g)) / D. For an axis-aligned revolute joint S = e_A:
/// D = Ī(A, A) and U_lin = e_A × h, constant in body coordinates (no
/// products); for one along a coordinate axis, S = [0; e_A]: D = m, U_lin = m e_A.
template <class K>
PLUME_INLINE double root_leaf_qdd(const RigidInertia& I, const Mat3& E, const Vec3& g, const double* S, double tau) {
  const double g0 = g[0], g1 = g[1], g2 = g[2];
  // a = E (−g), row r of E times −g.
  auto a_row = [&](int r) PLUME_LAMBDA_INLINE { return -((E(r, 0) * g0 + E(r, 1) * g1) + E(r, 2) * g2); };
  if constexpr (detail::is_revolute_aligned<K>) {
    constexpr int A = K::axis;
    constexpr int i1 = (A + 1) % 3;
    constexpr int i2 = (A + 2) % 3;
    const Vec3& h = I.h();
    const double Ua = h[i1] * a_row(i2) - h[i2] * a_row(i1);
    return (tau - Ua) / I.Ibar()(A, A);
  } else if constexpr (detail::is_prismatic_aligned<K>) {
    // S = [0; e_A]: U_lin = m e_A, D = m.
    const double m = I.mass();
    return (tau - m * a_row(K::axis)) / m;
  } else {
    double U[6];
    detail::inertia_times(I, S, U);
    const double Ua = (U[3] * a_row(0) + U[4] * a_row(1)) + U[5] * a_row(2);
    return (tau - Ua) / dot6(S, U);
  }
}

PLUME_FLATTEN void aba_passes(const Model& model, Data& data, const double* q, const double* v, const double* tau,
                              const std::vector<Force>* fext) {
  const int nb = model.nbodies();
  double* sc = data.qsc.data();
  detail::revolute_sin_cos(model, q, sc);
  // Every body a one-dof body on the world without children (a pendulum, a
  // row of sliders): q̈ of each from root_leaf_qdd, no articulated-body
  // passes. (Tested up to the first other body: one body on most models.)
  if (!fext && detail::all_root_leaves(model)) {
    for (int i = 1; i < nb; ++i) {
      const Joint& j = model.joint(i);
      detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
        using K = decltype(jk);
        if constexpr (K::nv == 1) {
          detail::position_from<K>(j, model.Xtree(i), q + j.q_index, sc, i, data.Xup[i], detail::S_cols(data.S, j));
          data.ddq[j.v_index] = root_leaf_qdd<K>(model.inertia(i), data.Xup[i].E(), model.gravity(),
                                                 detail::S_cols(data.S, j), tau[j.v_index]);
        }
      });
    }
    return;
  }
  // Pass 1, root to leaves: placements, world subspaces, velocities,
  // velocity-product terms c = v × vJ (+ cJ), rigid inertias and bias forces.
  data.ov[0] = Motion::Zero();
  for (int i = 1; i < nb; ++i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      constexpr int nv = K::nv;
      detail::position_from<K>(j, model.Xtree(i), q + j.q_index, sc, i, data.Xup[i], detail::S_cols(data.S, j));
      const Vec3 rel = detail::world_placement<K>(model, data, i);
      const Mat3& E = data.X0[i].E();
      const double* S = detail::S_cols(data.S, j);
      double* oS = detail::S_cols(data.oS, j);
      Motion vJ;
      if constexpr (nv == 1) {
        // The world column kept in registers: stored, and used from there
        // (a 16-byte load of coefficients just stored one by one stalls).
        double w[6];
        K::world_subspace(E, rel, S, w);
        const double qd = v[j.v_index];
        for (int k = 0; k < 6; ++k) {
          oS[k] = w[k];
          vJ.vector()[k] = w[k] * qd;
        }
      } else {
        K::world_subspace(E, rel, S, oS);
        vJ = Motion(Vec6(detail::SMap<nv>(oS) * detail::VMap<nv>(v + j.v_index)));
      }
      data.ov[i] = data.ov[p] + vJ;
      data.oc[i] = data.ov[i].cross(vJ);
      if constexpr (K::has_bias) data.oc[i] += Transform(E, rel).apply_inverse(K::bias(S, v + j.v_index));
      const RigidInertia oI = detail::world_inertia(model, i, E, rel);
      // (A free leaf's articulated inertia is never formed: pass 2 solves
      // with its rigid inertia.)
      if (K::nv != 6 || !free_leaf(model, i)) detail::inertia_matrix(oI, data.oIA[i]);
      data.opA[i] = data.ov[i].cross(oI * data.ov[i]);
    });
    if (fext) {
      // The world force [n; f] about the world origin, taken about the reference point.
      const Force& fw = (*fext)[i];
      const Vec3& root = data.X0[model.subtree_root(i)].r();
      data.opA[i] -= Force(fw.angular() - root.cross(fw.linear()), fw.linear());
    }
  }
  // Pass 2, leaves to root: U = IA S, D = Sᵀ U, u = τ − Sᵀ pA, and the
  // articulated inertia and bias force handed to the parent.
  for (int i = nb - 1; i > 0; --i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      constexpr int nv = decltype(jk)::nv;
      using MatN = Eigen::Matrix<double, nv, nv>;
      using VecN = Eigen::Matrix<double, nv, 1>;
      const int vi = j.v_index;
      if constexpr (nv == 6) {
        if (free_leaf(model, i)) {
          // u holds I⁻¹(τ − pA) in body coordinates; pass 3 subtracts S⁻¹a.
          const Transform Xs(data.X0[i].E(), data.orel[i]);
          const Vec6 r = detail::VMap<6>(tau + vi) - Xs.apply(data.opA[i]).vector();
          data.u.segment<6>(vi) = solve_rigid_inertia(model, i, r);
          if (p > 0) data.opA[p] += Xs.apply_transpose(Force(Vec6(detail::VMap<6>(tau + vi))));
          return;
        }
      }
      const auto oS = detail::SMap<nv>(detail::S_cols(data.oS, j));
      Eigen::Map<Eigen::Matrix<double, 6, nv>> U(detail::S_cols(data.U, j));
      U.noalias() = data.oIA[i] * oS;
      MatN D;
      VecN u;
      if constexpr (nv == 1) {  // on scalars
        D(0, 0) = dot6(oS.data(), U.data());
        u(0) = tau[vi] - dot6(oS.data(), data.opA[i].vector().data());
        data.u[vi] = u(0);
      } else {
        D = oS.transpose() * U;
        u = detail::VMap<nv>(tau + vi) - oS.transpose() * data.opA[i].vector();
        data.u.segment<nv>(vi) = u;
      }
      if constexpr (nv == 6) {
        // A free-flyer (S invertible): pass 3 solves with D directly, and the
        // parent receives no articulated inertia (IA − U D⁻¹ Uᵀ = 0 exactly)
        // and the bias force S⁻ᵀ τ, the joint wrench in world axes. Forming
        // the zero as a difference of large matrices would only add noise.
        data.Dinv.block<nv, nv>(vi, vi) = D;
        if (p > 0) {
          const Transform Xs(data.X0[i].E(), data.orel[i]);
          data.opA[p] += Xs.apply_transpose(Force(Vec6(detail::VMap<6>(tau + vi))));
        }
        return;
      }
      MatN Dinv;
      if constexpr (nv == 1) {
        Dinv(0, 0) = 1.0 / D(0, 0);
      } else {
        Dinv = D.inverse();
      }
      data.Dinv.block<nv, nv>(vi, vi) = Dinv;
      if (p > 0) {
        const Eigen::Matrix<double, 6, nv> UDinv = U * Dinv;
        const Eigen::Matrix<double, 6, nv> Uc = U;
        Mat6& IAp = data.oIA[p];
        IAp += data.oIA[i];
        detail::subtract_outer<nv>(IAp, UDinv, Uc);
        // pa = pA + Ia c + U D⁻¹ u with Ia = IA − U D⁻¹ Uᵀ
        const Vec6& c = data.oc[i].vector();
        Vec6 pa = data.opA[i].vector() + data.oIA[i] * c;
        pa.noalias() += UDinv * (u - U.transpose() * c);
        data.opA[p].vector() += pa;
      }
    });
  }
  // Pass 3, root to leaves: accelerations, with a_0 = −g.
  data.oa[0] = Motion(Vec3::Zero(), -model.gravity());
  for (int i = 1; i < nb; ++i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      constexpr int nv = decltype(jk)::nv;
      const int vi = j.v_index;
      Motion& a = data.oa[i];
      a = data.oa[p] + data.oc[i];
      if constexpr (nv == 6) {
        if (free_leaf(model, i)) {
          const Transform Xs(data.X0[i].E(), data.orel[i]);
          auto qdd = data.ddq.segment<6>(vi);
          qdd = data.u.segment<6>(vi) - Xs.apply(a).vector();
          a.vector().noalias() += detail::SMap<6>(detail::S_cols(data.oS, j)) * qdd;
          return;
        }
      }
      const Eigen::Map<const Eigen::Matrix<double, 6, nv>> U(detail::S_cols(data.U, j));
      if constexpr (nv == 1) {  // on scalars
        const double qdd = data.Dinv(vi, vi) * (data.u[vi] - dot6(U.data(), a.vector().data()));
        data.ddq[vi] = qdd;
        const double* s = detail::S_cols(data.oS, j);
        for (int k = 0; k < 6; ++k) a.vector()[k] += s[k] * qdd;
        return;
      }
      auto qdd = data.ddq.segment<nv>(vi);
      const Eigen::Matrix<double, nv, 1> rhs = data.u.segment<nv>(vi) - U.transpose() * a.vector();
      if constexpr (nv == 6) {
        qdd = Eigen::LLT<Eigen::Matrix<double, nv, nv>>(data.Dinv.block<nv, nv>(vi, vi)).solve(rhs);
      } else {
        qdd.noalias() = data.Dinv.block<nv, nv>(vi, vi) * rhs;
      }
      a.vector().noalias() += detail::SMap<nv>(detail::S_cols(data.oS, j)) * qdd;
    });
  }
}

}  // namespace

namespace unchecked {

const VectorX& aba(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau) {
  aba_passes(model, data, q.data(), v.data(), tau.data(), nullptr);
  return data.ddq;
}

const VectorX& aba(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau,
                   const std::vector<Force>& fext) {
  aba_passes(model, data, q.data(), v.data(), tau.data(), &fext);
  return data.ddq;
}

}  // namespace unchecked

const VectorX& aba(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau) {
  detail::check_state(model, data, q, &v, "v", &tau, "tau");
  return unchecked::aba(model, data, q, v, tau);
}

const VectorX& aba(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau,
                   const std::vector<Force>& fext) {
  detail::check_state(model, data, q, &v, "v", &tau, "tau");
  detail::check_forces(model, fext);
  return unchecked::aba(model, data, q, v, tau, fext);
}

}  // namespace plume
