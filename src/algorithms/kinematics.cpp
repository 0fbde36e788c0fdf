// Forward kinematics (RBDA §4.x): placements, velocities, accelerations.
#include "plume/algorithms/kinematics.hpp"

#include "checks.hpp"
#include "joint_kernels.hpp"

namespace plume {

namespace unchecked {

PLUME_FLATTEN void forward_kinematics(const Model& model, Data& data, const VecRef& q) {
  for (int i = 1; i < model.nbodies(); ++i) {
    detail::visit_kind(model.joint(i).kind, [&](auto jk) PLUME_LAMBDA_INLINE { detail::body_placement<decltype(jk)>(model, data, q.data(), i); });
  }
}

PLUME_FLATTEN void forward_kinematics(const Model& model, Data& data, const VecRef& q, const VecRef& v) {
  data.v[0] = Motion::Zero();
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      detail::body_placement<K>(model, data, q.data(), i);
      data.v[i] = K::up(j, data.Xup[i], data.v[model.parent(i)]) + K::S_mul(detail::S_cols(data.S, j), v.data() + j.v_index);
    });
  }
}

PLUME_FLATTEN void forward_kinematics(const Model& model, Data& data, const VecRef& q, const VecRef& v,
                                      const VecRef& a) {
  data.v[0] = Motion::Zero();
  data.a[0] = Motion::Zero();
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      detail::body_placement<K>(model, data, q.data(), i);
      const double* S = detail::S_cols(data.S, j);
      const double* qd = v.data() + j.v_index;
      data.v[i] = K::up(j, data.Xup[i], data.v[p]) + K::S_mul(S, qd);
      // a_i = X a_λ + S q̈ + cJ + v_i × S q̇  (RBDA eq. 5.7 with S̊ q̇ = cJ)
      data.a[i] = K::up(j, data.Xup[i], data.a[p]) + K::cross_S(data.v[i], S, qd);
      K::add_S_mul(S, a.data() + j.v_index, data.a[i]);
      if constexpr (K::has_bias) data.a[i] += K::bias(S, qd);
    });
  }
}

PLUME_FLATTEN void forward_kinematics_motion(const Model& model, Data& data, const VecRef& v, const VecRef& a) {
  data.v[0] = Motion::Zero();
  data.a[0] = Motion::Zero();
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      const double* S = detail::S_cols(data.S, j);
      const double* qd = v.data() + j.v_index;
      data.v[i] = K::up(j, data.Xup[i], data.v[p]) + K::S_mul(S, qd);
      // (as forward_kinematics(q, v, a))
      data.a[i] = K::up(j, data.Xup[i], data.a[p]) + K::cross_S(data.v[i], S, qd);
      K::add_S_mul(S, a.data() + j.v_index, data.a[i]);
      if constexpr (K::has_bias) data.a[i] += K::bias(S, qd);
    });
  }
}

PLUME_FLATTEN void forward_kinematics_velocities(const Model& model, Data& data, const VecRef& v) {
  data.v[0] = Motion::Zero();
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      // (as forward_kinematics(q, v))
      data.v[i] = K::up(j, data.Xup[i], data.v[model.parent(i)]) + K::S_mul(detail::S_cols(data.S, j), v.data() + j.v_index);
    });
  }
}

}  // namespace unchecked

void forward_kinematics(const Model& model, Data& data, const VecRef& q) {
  detail::check_state(model, data, q);
  unchecked::forward_kinematics(model, data, q);
}

void forward_kinematics(const Model& model, Data& data, const VecRef& q, const VecRef& v) {
  detail::check_state(model, data, q);
  detail::check_vector_fast(v, model.nv(), "v");
  unchecked::forward_kinematics(model, data, q, v);
}

void forward_kinematics(const Model& model, Data& data, const VecRef& q, const VecRef& v,
                        const VecRef& a) {
  detail::check_state(model, data, q);
  detail::check_vector_fast(v, model.nv(), "v");
  detail::check_vector_fast(a, model.nv(), "a");
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
