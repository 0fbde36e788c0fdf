// Forward kinematics (RBDA §4.x): placements, velocities, accelerations.
#include "plume/algorithms/kinematics.hpp"

#include "checks.hpp"
#include "joint_kernels.hpp"

namespace plume {

namespace unchecked {

void forward_kinematics(const Model& model, Data& data, const VecRef& q) {
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    detail::visit_kind(j.kind, [&](auto jk) {
      decltype(jk)::position(j, model.Xtree(i), q.data() + j.q_index, data.Xup[i], data.S);
    });
    const int p = model.parent(i);
    data.X0[i] = p > 0 ? data.Xup[i] * data.X0[p] : data.Xup[i];
  }
}

void forward_kinematics(const Model& model, Data& data, const VecRef& q, const VecRef& v) {
  data.v[0] = Motion::Zero();
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    detail::visit_kind(j.kind, [&](auto jk) {
      using K = decltype(jk);
      constexpr int nv = K::nv;
      K::position(j, model.Xtree(i), q.data() + j.q_index, data.Xup[i], data.S);
      const Motion vJ(Vec6(data.S.middleCols<nv>(j.v_index) * v.segment<nv>(j.v_index)));
      data.v[i] = data.Xup[i].apply(data.v[p]) + vJ;
    });
    data.X0[i] = p > 0 ? data.Xup[i] * data.X0[p] : data.Xup[i];
  }
}

void forward_kinematics(const Model& model, Data& data, const VecRef& q, const VecRef& v,
                        const VecRef& a) {
  data.v[0] = Motion::Zero();
  data.a[0] = Motion::Zero();
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    detail::visit_kind(j.kind, [&](auto jk) {
      using K = decltype(jk);
      constexpr int nv = K::nv;
      K::position(j, model.Xtree(i), q.data() + j.q_index, data.Xup[i], data.S);
      const auto S = data.S.middleCols<nv>(j.v_index);
      const Motion vJ(Vec6(S * v.segment<nv>(j.v_index)));
      data.v[i] = data.Xup[i].apply(data.v[p]) + vJ;
      // a_i = X a_λ + S q̈ + cJ + v_i × vJ  (RBDA eq. 5.7 with S̊ q̇ = cJ)
      data.a[i] = data.Xup[i].apply(data.a[p]) + Motion(Vec6(S * a.segment<nv>(j.v_index))) +
                  data.v[i].cross(vJ);
      if constexpr (K::has_bias) data.a[i] += K::bias(data.S, j.v_index, v.data() + j.v_index);
    });
    data.X0[i] = p > 0 ? data.Xup[i] * data.X0[p] : data.Xup[i];
  }
}

}  // namespace unchecked

void forward_kinematics(const Model& model, Data& data, const VecRef& q) {
  detail::check_state(model, data, q);
  unchecked::forward_kinematics(model, data, q);
}

void forward_kinematics(const Model& model, Data& data, const VecRef& q, const VecRef& v) {
  detail::check_state(model, data, q);
  check_vector(v, model.nv(), "v");
  unchecked::forward_kinematics(model, data, q, v);
}

void forward_kinematics(const Model& model, Data& data, const VecRef& q, const VecRef& v,
                        const VecRef& a) {
  detail::check_state(model, data, q);
  check_vector(v, model.nv(), "v");
  check_vector(a, model.nv(), "a");
  unchecked::forward_kinematics(model, data, q, v, a);
}

void update_frame_placements(const Model& model, Data& data) {
  check_data(model, data);
  const auto& frames = model.frames();
  for (std::size_t k = 0; k < frames.size(); ++k) {
    const Frame& fr = frames[k];
    data.Xframe[k] = fr.body > 0 ? fr.placement * data.X0[fr.body] : fr.placement;
  }
}

}  // namespace plume
