// Composite-rigid-body algorithm (RBDA Table 6.2).
#include "plume/algorithms/crba.hpp"

#include "checks.hpp"
#include "joint_kernels.hpp"

namespace plume {

namespace unchecked {

const MatrixX& crba(const Model& model, Data& data, const VecRef& q) {
  const int nb = model.nbodies();
  for (int i = 1; i < nb; ++i) {
    const Joint& j = model.joint(i);
    detail::visit_kind(j.kind, [&](auto jk) {
      decltype(jk)::position(j, model.Xtree(i), q.data() + j.q_index, data.Xup[i], data.S);
    });
    data.Ic[i] = model.inertia(i);
  }
  // Composite inertias, leaves to root: Ic_λ += Xᵀ Ic_i X.
  for (int i = nb - 1; i > 0; --i) {
    const int p = model.parent(i);
    if (p > 0) data.Ic[p] += data.Xup[i].apply_transpose(data.Ic[i]);
  }
  // H_ii = Sᵢᵀ Icᵢ Sᵢ, then F = Icᵢ Sᵢ carried towards the root: H_ji = Sⱼᵀ F.
  for (int i = 1; i < nb; ++i) {
    const Joint& ji = model.joint(i);
    detail::visit_kind(ji.kind, [&](auto jk) {
      constexpr int nv = decltype(jk)::nv;
      const int vi = ji.v_index;
      Eigen::Matrix<double, 6, nv> F;
      for (int k = 0; k < nv; ++k) F.col(k) = (data.Ic[i] * Motion(Vec6(data.S.col(vi + k)))).vector();
      data.H.block<nv, nv>(vi, vi).noalias() = data.S.middleCols<nv>(vi).transpose() * F;
      int b = i;
      while (model.parent(b) > 0) {
        for (int k = 0; k < nv; ++k) F.col(k) = data.Xup[b].apply_transpose(Force(Vec6(F.col(k)))).vector();
        b = model.parent(b);
        const Joint& jb = model.joint(b);
        for (int m = 0; m < jb.nv; ++m) {
          const int vb = jb.v_index + m;
          data.H.block<1, nv>(vb, vi).noalias() = data.S.col(vb).transpose() * F;
          data.H.block<nv, 1>(vi, vb) = data.H.block<1, nv>(vb, vi).transpose();
        }
      }
    });
  }
  return data.H;
}

}  // namespace unchecked

const MatrixX& crba(const Model& model, Data& data, const VecRef& q) {
  detail::check_state(model, data, q);
  return unchecked::crba(model, data, q);
}

}  // namespace plume
