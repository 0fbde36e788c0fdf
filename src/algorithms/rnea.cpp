// Recursive Newton–Euler algorithm (RBDA Table 5.1), in body coordinates.
#include "plume/algorithms/rnea.hpp"

#include "checks.hpp"
#include "joint_kernels.hpp"

namespace plume {

namespace {

enum class Terms { All, NoAcceleration, GravityOnly };

// f = I a + v ×* (I v) on scalars: the same operations as
// inertia_times(I, a) + v.cross(inertia_times(I, v)), without the Force
// temporaries assembled from two 3-vectors and added as 6-vectors (they went
// through the stack with stores and loads of different widths, which the CPU
// cannot forward: a stall of about a dozen cycles each).
PLUME_INLINE void body_force(const RigidInertia& I, const Motion& a, const Motion& v, Force& f) {
  double Ia[6], h[6];
  detail::inertia_times(I, a.vector().data(), Ia);
  detail::inertia_times(I, v.vector().data(), h);
  const double* x = v.vector().data();  // [ω; v_lin]
  const double c0 = (x[1] * h[2] - x[2] * h[1]) + (x[4] * h[5] - x[5] * h[4]);
  const double c1 = (x[2] * h[0] - x[0] * h[2]) + (x[5] * h[3] - x[3] * h[5]);
  const double c2 = (x[0] * h[1] - x[1] * h[0]) + (x[3] * h[4] - x[4] * h[3]);
  const double c3 = x[1] * h[5] - x[2] * h[4];
  const double c4 = x[2] * h[3] - x[0] * h[5];
  const double c5 = x[0] * h[4] - x[1] * h[3];
  double* o = f.vector().data();
  o[0] = Ia[0] + c0;
  o[1] = Ia[1] + c1;
  o[2] = Ia[2] + c2;
  o[3] = Ia[3] + c3;
  o[4] = Ia[4] + c4;
  o[5] = Ia[5] + c5;
}

// Forward pass: v_i = X v_λ + S q̇, a_i = X a_λ + S q̈ + cJ + v_i × S q̇ (with
// a_0 = −g) and f_i = I a_i + v_i ×* I v_i; backward pass: τ_i = Sᵀ f_i,
// f_λ += Xᵀ f_i. `fext` (world coordinates) may be null.
template <Terms terms, bool placements_known = false>
PLUME_FLATTEN void rnea_passes(const Model& model, Data& data, const double* q, const double* v, const double* a,
                               const std::vector<Force>* fext, double* tau) {
  const int nb = model.nbodies();
  data.v[0] = Motion::Zero();
  data.a[0] = Motion(Vec3::Zero(), -model.gravity());
  for (int i = 1; i < nb; ++i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    const RigidInertia& I = model.inertia(i);
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      double* S = detail::S_cols(data.S, j);
      if constexpr (!placements_known) K::position(j, model.Xtree(i), q + j.q_index, data.Xup[i], S);
      const Transform& X = data.Xup[i];
      if constexpr (terms == Terms::GravityOnly) {
        data.a[i] = K::up(j, X, data.a[p]);
        data.f[i] = detail::inertia_times(I, data.a[i]);
      } else {
        const double* qd = v + j.v_index;
        Motion& vi = data.v[i];
        Motion& ai = data.a[i];
        vi = K::up(j, X, data.v[p]) + K::S_mul(S, qd);
        ai = K::up(j, X, data.a[p]) + K::cross_S(vi, S, qd);
        if constexpr (terms == Terms::All) K::add_S_mul(S, a + j.v_index, ai);
        if constexpr (K::has_bias) ai += K::bias(S, qd);
        body_force(I, ai, vi, data.f[i]);
      }
    });
    if (fext) {
      data.X0[i] = p > 0 ? data.Xup[i] * data.X0[p] : data.Xup[i];
      data.f[i] -= data.X0[i].apply((*fext)[i]);
    }
  }
  for (int i = nb - 1; i > 0; --i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      K::St_mul(detail::S_cols(data.S, j), data.f[i].vector(), tau + j.v_index);
      if (p > 0) data.f[p] += K::up_transpose(j, data.Xup[i], data.f[i]);
    });
  }
}

}  // namespace

namespace unchecked {

const VectorX& rnea(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a) {
  rnea_passes<Terms::All>(model, data, q.data(), v.data(), a.data(), nullptr, data.tau.data());
  return data.tau;
}

const VectorX& rnea(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a,
                    const std::vector<Force>& fext) {
  rnea_passes<Terms::All>(model, data, q.data(), v.data(), a.data(), &fext, data.tau.data());
  return data.tau;
}

const VectorX& bias_forces(const Model& model, Data& data, const VecRef& q, const VecRef& v) {
  rnea_passes<Terms::NoAcceleration>(model, data, q.data(), v.data(), nullptr, nullptr, data.C.data());
  return data.C;
}

const VectorX& bias_forces_after_crba(const Model& model, Data& data, const VecRef& v) {
  rnea_passes<Terms::NoAcceleration, true>(model, data, nullptr, v.data(), nullptr, nullptr, data.C.data());
  return data.C;
}

const VectorX& gravity_torques(const Model& model, Data& data, const VecRef& q) {
  rnea_passes<Terms::GravityOnly>(model, data, q.data(), nullptr, nullptr, nullptr, data.g.data());
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
