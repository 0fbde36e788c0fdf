// Recursive Newton–Euler algorithm (RBDA Table 5.1).
#include "plume/algorithms/rnea.hpp"

#include "checks.hpp"
#include "joint_kernels.hpp"

namespace plume {

namespace {

enum class Terms { All, NoAcceleration, GravityOnly };

// Forward pass: v_i, a_i (with a_0 = −g) and f_i = I a + v ×* I v; then the
// backward pass τ_i = Sᵀ f_i, f_λ += Xᵀ f_i. `fext` (world coordinates) may be null.
template <Terms terms>
void rnea_passes(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a,
                 const std::vector<Force>* fext, VectorX& tau) {
  const int nb = model.nbodies();
  data.v[0] = Motion::Zero();
  data.a[0] = Motion(Vec3::Zero(), -model.gravity());
  for (int i = 1; i < nb; ++i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    const RigidInertia& I = model.inertia(i);
    detail::visit_kind(j.kind, [&](auto jk) {
      using K = decltype(jk);
      constexpr int nv = K::nv;
      K::position(j, model.Xtree(i), q.data() + j.q_index, data.Xup[i], data.S);
      const auto S = data.S.middleCols<nv>(j.v_index);
      if constexpr (terms == Terms::GravityOnly) {
        data.a[i] = data.Xup[i].apply(data.a[p]);
        data.f[i] = I * data.a[i];
      } else {
        const Motion vJ(Vec6(S * v.segment<nv>(j.v_index)));
        data.v[i] = data.Xup[i].apply(data.v[p]) + vJ;
        data.a[i] = data.Xup[i].apply(data.a[p]) + data.v[i].cross(vJ);
        if constexpr (terms == Terms::All) data.a[i] += Motion(Vec6(S * a.segment<nv>(j.v_index)));
        if constexpr (K::has_bias) data.a[i] += K::bias(data.S, j.v_index, v.data() + j.v_index);
        data.f[i] = I * data.a[i] + data.v[i].cross(I * data.v[i]);
      }
    });
    if (fext) {
      data.X0[i] = p > 0 ? data.Xup[i] * data.X0[p] : data.Xup[i];
      data.f[i] -= data.X0[i].apply((*fext)[i]);
    }
  }
  for (int i = nb - 1; i > 0; --i) {
    const Joint& j = model.joint(i);
    detail::visit_kind(j.kind, [&](auto jk) {
      constexpr int nv = decltype(jk)::nv;
      tau.segment<nv>(j.v_index).noalias() = data.S.middleCols<nv>(j.v_index).transpose() * data.f[i].vector();
    });
    const int p = model.parent(i);
    if (p > 0) data.f[p] += data.Xup[i].apply_transpose(data.f[i]);
  }
}

}  // namespace

namespace unchecked {

const VectorX& rnea(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a) {
  rnea_passes<Terms::All>(model, data, q, v, a, nullptr, data.tau);
  return data.tau;
}

const VectorX& rnea(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a,
                    const std::vector<Force>& fext) {
  rnea_passes<Terms::All>(model, data, q, v, a, &fext, data.tau);
  return data.tau;
}

const VectorX& bias_forces(const Model& model, Data& data, const VecRef& q, const VecRef& v) {
  rnea_passes<Terms::NoAcceleration>(model, data, q, v, v, nullptr, data.C);
  return data.C;
}

const VectorX& gravity_torques(const Model& model, Data& data, const VecRef& q) {
  rnea_passes<Terms::GravityOnly>(model, data, q, q, q, nullptr, data.g);
  return data.g;
}

}  // namespace unchecked

const VectorX& rnea(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a) {
  detail::check_state(model, data, q);
  check_vector(v, model.nv(), "v");
  check_vector(a, model.nv(), "a");
  return unchecked::rnea(model, data, q, v, a);
}

const VectorX& rnea(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a,
                    const std::vector<Force>& fext) {
  detail::check_state(model, data, q);
  check_vector(v, model.nv(), "v");
  check_vector(a, model.nv(), "a");
  detail::check_forces(model, fext);
  return unchecked::rnea(model, data, q, v, a, fext);
}

const VectorX& bias_forces(const Model& model, Data& data, const VecRef& q, const VecRef& v) {
  detail::check_state(model, data, q);
  check_vector(v, model.nv(), "v");
  return unchecked::bias_forces(model, data, q, v);
}

const VectorX& gravity_torques(const Model& model, Data& data, const VecRef& q) {
  detail::check_state(model, data, q);
  return unchecked::gravity_torques(model, data, q);
}

VectorX passive_torques(const Model& model, const VecRef& v) {
  check_vector(v, model.nv(), "v");
  return -model.damping().cwiseProduct(v);
}

}  // namespace plume
