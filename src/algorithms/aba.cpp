// Articulated-body algorithm (RBDA Table 7.1).
#include "plume/algorithms/aba.hpp"

#include <Eigen/Cholesky>

#include "checks.hpp"
#include "joint_kernels.hpp"

namespace plume {

namespace {

void aba_passes(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau,
                const std::vector<Force>* fext) {
  const int nb = model.nbodies();
  // Pass 1, root to leaves: velocities, velocity-product terms c, bias forces.
  data.v[0] = Motion::Zero();
  for (int i = 1; i < nb; ++i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    const RigidInertia& I = model.inertia(i);
    detail::visit_kind(j.kind, [&](auto jk) {
      using K = decltype(jk);
      constexpr int nv = K::nv;
      K::position(j, model.Xtree(i), q.data() + j.q_index, data.Xup[i], data.S);
      const Motion vJ(Vec6(data.S.middleCols<nv>(j.v_index) * v.segment<nv>(j.v_index)));
      data.v[i] = data.Xup[i].apply(data.v[p]) + vJ;
      data.c[i] = data.v[i].cross(vJ);
      if constexpr (K::has_bias) data.c[i] += K::bias(data.S, j.v_index, v.data() + j.v_index);
    });
    data.IA[i] = I.to_matrix();
    data.pA[i] = data.v[i].cross(I * data.v[i]);
    if (fext) {
      data.X0[i] = p > 0 ? data.Xup[i] * data.X0[p] : data.Xup[i];
      data.pA[i] -= data.X0[i].apply((*fext)[i]);
    }
  }
  // Pass 2, leaves to root: articulated inertias and bias forces.
  for (int i = nb - 1; i > 0; --i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    detail::visit_kind(j.kind, [&](auto jk) {
      constexpr int nv = decltype(jk)::nv;
      using MatN = Eigen::Matrix<double, nv, nv>;
      const int vi = j.v_index;
      const auto S = data.S.middleCols<nv>(vi);
      auto U = data.U.middleCols<nv>(vi);
      U.noalias() = data.IA[i] * S;
      const MatN D = S.transpose() * U;
      MatN Dinv;
      if constexpr (nv == 1) {
        Dinv(0, 0) = 1.0 / D(0, 0);
      } else {
        Dinv = Eigen::LLT<MatN>(D).solve(MatN::Identity());
      }
      data.Dinv.block<nv, nv>(vi, vi) = Dinv;
      data.u.segment<nv>(vi) = tau.segment<nv>(vi) - S.transpose() * data.pA[i].vector();
      if (p > 0) {
        const Eigen::Matrix<double, 6, nv> UDinv = U * Dinv;
        const Mat6 Ia = data.IA[i] - UDinv * U.transpose();
        const Vec6 pa = data.pA[i].vector() + Ia * data.c[i].vector() + UDinv * data.u.segment<nv>(vi);
        data.IA[p] += detail::transform_articulated(data.Xup[i], Ia);
        data.pA[p] += data.Xup[i].apply_transpose(Force(pa));
      }
    });
  }
  // Pass 3, root to leaves: accelerations, with a_0 = −g.
  data.a[0] = Motion(Vec3::Zero(), -model.gravity());
  for (int i = 1; i < nb; ++i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    detail::visit_kind(j.kind, [&](auto jk) {
      constexpr int nv = decltype(jk)::nv;
      const int vi = j.v_index;
      const Motion ap = data.Xup[i].apply(data.a[p]) + data.c[i];
      auto qdd = data.ddq.segment<nv>(vi);
      qdd.noalias() = data.Dinv.block<nv, nv>(vi, vi) *
                      (data.u.segment<nv>(vi) - data.U.middleCols<nv>(vi).transpose() * ap.vector());
      data.a[i] = ap + Motion(Vec6(data.S.middleCols<nv>(vi) * qdd));
    });
  }
}

}  // namespace

namespace unchecked {

const VectorX& aba(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau) {
  aba_passes(model, data, q, v, tau, nullptr);
  return data.ddq;
}

const VectorX& aba(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau,
                   const std::vector<Force>& fext) {
  aba_passes(model, data, q, v, tau, &fext);
  return data.ddq;
}

}  // namespace unchecked

const VectorX& aba(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau) {
  detail::check_state(model, data, q);
  check_vector(v, model.nv(), "v");
  check_vector(tau, model.nv(), "tau");
  return unchecked::aba(model, data, q, v, tau);
}

const VectorX& aba(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau,
                   const std::vector<Force>& fext) {
  detail::check_state(model, data, q);
  check_vector(v, model.nv(), "v");
  check_vector(tau, model.nv(), "tau");
  detail::check_forces(model, fext);
  return unchecked::aba(model, data, q, v, tau, fext);
}

}  // namespace plume
