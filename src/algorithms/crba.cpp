// Composite-rigid-body algorithm (RBDA Table 6.2), with world axes (about each
// subtree root's origin, see Data::orel):
// composite inertias add without transforms, and H_lk = oS_lᵀ (oIc_i oS_k)
// for every ancestor dof l of a dof k of body i.
#include "plume/algorithms/crba.hpp"

#include "checks.hpp"
#include "joint_kernels.hpp"

namespace plume {

namespace {

// The sums are written in the order Eigen's fixed-size kernels evaluate them
// in the default (SSE2) build (see detail::sum_l): H stays bit-identical to
// the Eigen expressions they replace; the contact solvers' pivoting on
// degenerate problems is sensitive to the last bit of H.

/// A 6-vector dot product, even and odd lanes summed apart (as Eigen does).
PLUME_INLINE double dot6(const double* a, const double* b) {
  return (a[0] * b[0] + (a[2] * b[2] + a[4] * b[4])) + (a[1] * b[1] + (a[3] * b[3] + a[5] * b[5]));
}

}  // namespace

namespace unchecked {

PLUME_FLATTEN const MatrixX& crba(const Model& model, Data& data, const VecRef& q) {
  const int nb = model.nbodies();
  // Sines and cosines of the axis-aligned revolute joints first, in a loop of
  // their own: the pass below then makes no calls (a call spills every live
  // vector register).
  double* sc = data.qsc.data();
  for (int i = 1; i < nb; ++i) {
    const Joint& j = model.joint(i);
    if (j.kind == JointKind::RevoluteX || j.kind == JointKind::RevoluteY || j.kind == JointKind::RevoluteZ) {
      detail::sin_cos(q[j.q_index], sc[2 * i], sc[2 * i + 1]);
    }
  }
  for (int i = 1; i < nb; ++i) {
    const Joint& j = model.joint(i);
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      double* S = detail::S_cols(data.S, j);
      if constexpr (detail::is_revolute_aligned<K>) {
        K::position_sc(model.Xtree(i), sc[2 * i], sc[2 * i + 1], data.Xup[i]);
      } else {
        K::position(j, model.Xtree(i), q.data() + j.q_index, data.Xup[i], S);
      }
      const Vec3 rel = detail::world_placement<K>(model, data, i);
      const Mat3& E = data.X0[i].E();
      K::world_subspace(E, rel, S, detail::S_cols(data.oS, j));
      data.oIc[i] = detail::world_inertia(model, i, E, rel);
    });
  }
  // Composite inertias, leaves to root.
  for (int i = nb - 1; i > 0; --i) {
    const int p = model.parent(i);
    if (p > 0) data.oIc[p] += data.oIc[i];
  }
  // F = Ic S_k, then H(l, k) = S_lᵀ F for k's own joint and every ancestor dof l.
  // When the subtree hangs from a free-flyer, its six dofs are the last
  // ancestors, with oS = [Eᵀ 0; 0 Eᵀ] (the root is the reference point): their
  // entries are E F_ang and E F_lin, without the products by zero.
  const int nv = model.nv();
  double* H = data.H.data();
  const double* oS = data.oS.data();
  for (int i = 1; i < nb; ++i) {
    const Joint& j = model.joint(i);
    const RigidInertia& Y = data.oIc[i];
    const int r = model.subtree_root(i);
    const bool below_free = r != i && model.joint(r).kind == JointKind::FreeFlyer;
    const int free_v = model.joint(r).v_index;
    const int last_generic = below_free ? free_v + 5 : -1;
    for (int k = j.v_index; k < j.v_index + j.nv; ++k) {
      double F[6];
      detail::inertia_times(Y, oS + 6 * k, F);
      H[k + nv * k] = dot6(oS + 6 * k, F);
      for (int l = model.dof_parent(k); l > last_generic; l = model.dof_parent(l)) {
        const double x = dot6(oS + 6 * l, F);
        H[l + nv * k] = x;
        H[k + nv * l] = x;
      }
      if (below_free) {
        const Mat3& E = data.X0[r].E();
        for (int c = 0; c < 3; ++c) {  // dot6 with the zero terms left out
          const double x = (E(c, 0) * F[0] + E(c, 2) * F[2]) + E(c, 1) * F[1];
          const double y = E(c, 1) * F[4] + (E(c, 0) * F[3] + E(c, 2) * F[5]);
          H[free_v + c + nv * k] = x;
          H[k + nv * (free_v + c)] = x;
          H[free_v + 3 + c + nv * k] = y;
          H[k + nv * (free_v + 3 + c)] = y;
        }
      }
    }
  }
  return data.H;
}

}  // namespace unchecked

const MatrixX& crba(const Model& model, Data& data, const VecRef& q) {
  detail::check_state(model, data, q);
  return unchecked::crba(model, data, q);
}

}  // namespace plume
