// Composite-rigid-body algorithm (RBDA Table 6.2), with world axes (about each
// subtree root's origin, see Data::orel):
// composite inertias add without transforms, and H_lk = oS_lᵀ (oIc_i oS_k)
// for every ancestor dof l of a dof k of body i.
#include "plume/algorithms/crba.hpp"

#include "checks.hpp"
#include "joint_kernels.hpp"

namespace plume {

namespace unchecked {

PLUME_FLATTEN const MatrixX& crba(const Model& model, Data& data, const VecRef& q) {
  const int nb = model.nbodies();
  for (int i = 1; i < nb; ++i) {
    const Joint& j = model.joint(i);
    detail::visit_kind(j.kind, [&](auto jk) {
      using K = decltype(jk);
      detail::body_placement<K>(model, data, q.data(), i);
      const Transform Xs = detail::shifted_placement(model, data, i, data.orel);
      K::world_subspace(Xs, detail::S_cols(data.S, j), detail::S_cols(data.oS, j));
      data.oIc[i] = detail::world_inertia(model, i, Xs);
    });
  }
  // Composite inertias, leaves to root.
  for (int i = nb - 1; i > 0; --i) {
    const int p = model.parent(i);
    if (p > 0) data.oIc[p] += data.oIc[i];
  }
  MatrixX& H = data.H;
  const double* oS = data.oS.data();
  for (int i = 1; i < nb; ++i) {
    const Joint& j = model.joint(i);
    for (int k = j.v_index; k < j.v_index + j.nv; ++k) {
      // F = Ic S_k, then H(l, k) = S_lᵀ F for k's own joint and every ancestor dof l.
      const Vec6 F = (data.oIc[i] * Motion(Vec6(Eigen::Map<const Vec6>(oS + 6 * k)))).vector();
      H(k, k) = Eigen::Map<const Vec6>(oS + 6 * k).dot(F);
      for (int l = model.dof_parent(k); l >= 0; l = model.dof_parent(l)) {
        const double h = Eigen::Map<const Vec6>(oS + 6 * l).dot(F);
        H(l, k) = h;
        H(k, l) = h;
      }
    }
  }
  return H;
}

}  // namespace unchecked

const MatrixX& crba(const Model& model, Data& data, const VecRef& q) {
  detail::check_state(model, data, q);
  return unchecked::crba(model, data, q);
}

}  // namespace plume
