// Recursive Newton–Euler algorithm (RBDA Table 5.1), in body coordinates.
#include "plume/algorithms/rnea.hpp"

#include <type_traits>

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

/// The axis A of an axis-aligned revolute kernel, −1 for the other kinds.
template <class K>
inline constexpr int aligned_axis = -1;
template <int A>
inline constexpr int aligned_axis<detail::RevoluteAligned<A>> = A;

// An axis-aligned revolute joint whose tree rotation is the identity, on
// scalars straight into Data (detail::RevoluteAligned::up, up_transpose,
// S_mul and cross_S, the same operations in the same order, the zero terms
// of S q̇ and v × S q̇ still added): the Motion and Force temporaries they
// returned were written coefficient by coefficient on the stack and read back
// as pairs, which the CPU cannot forward from the stores.
template <int A>
struct AlignedRnea {
  static constexpr int i1 = (A + 1) % 3;
  static constexpr int i2 = (A + 2) % 3;
  // y = Xup x.
  static PLUME_INLINE void up(const Transform& X, const double* x, double* y) {
    const double c = X.E()(i1, i1);
    const double s = X.E()(i1, i2);
    const Vec3& r = X.r();
    const double u[3] = {x[3] - (r[1] * x[2] - r[2] * x[1]), x[4] - (r[2] * x[0] - r[0] * x[2]),
                         x[5] - (r[0] * x[1] - r[1] * x[0])};
    y[A] = x[A];
    y[i1] = c * x[i1] + s * x[i2];
    y[i2] = c * x[i2] - s * x[i1];
    y[3 + A] = u[A];
    y[3 + i1] = c * u[i1] + s * u[i2];
    y[3 + i2] = c * u[i2] - s * u[i1];
  }
  // v_i = Xup v_λ + e_A q̇, a_i = Xup a_λ + v_i × e_A q̇ (+ e_A q̈).
  template <bool with_acceleration>
  static PLUME_INLINE void forward(const Transform& X, const double* vp, const double* ap, double qd, double qdd,
                                   double* vi, double* ai) {
    double y[6];
    up(X, vp, y);
    for (int k = 0; k < 6; ++k) vi[k] = y[k] + (k == A ? qd : 0.0);
    up(X, ap, y);
    double m[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    m[i1] = vi[i2] * qd;
    m[i2] = -vi[i1] * qd;
    m[3 + i1] = vi[3 + i2] * qd;
    m[3 + i2] = -vi[3 + i1] * qd;
    for (int k = 0; k < 6; ++k) ai[k] = y[k] + m[k];
    if constexpr (with_acceleration) ai[A] += qdd;
  }
  // forward() for a body on the world: v_λ = 0 and a_λ = [0; l] (l = −g),
  // so v_i = e_A q̇, a_i = [e_A q̈; E l] (Xup of a zero velocity and
  // v_i × e_A q̇ = 0 not computed).
  template <bool with_acceleration>
  static PLUME_INLINE void root_forward(const Transform& X, const double* l, double qd, double qdd, double* vi,
                                        double* ai) {
    const double c = X.E()(i1, i1);
    const double s = X.E()(i1, i2);
    for (int k = 0; k < 6; ++k) vi[k] = 0.0;
    vi[A] = qd;
    ai[A] = with_acceleration ? qdd : 0.0;
    ai[i1] = 0.0;
    ai[i2] = 0.0;
    ai[3 + A] = l[A];
    ai[3 + i1] = c * l[i1] + s * l[i2];
    ai[3 + i2] = c * l[i2] - s * l[i1];
  }
  // fp += Xupᵀ f.
  static PLUME_INLINE void add_up_transpose(const Transform& X, const double* x, double* fp) {
    const double c = X.E()(i1, i1);
    const double s = X.E()(i1, i2);
    const Vec3& r = X.r();
    double n[3], l[3];
    n[A] = x[A];
    n[i1] = c * x[i1] - s * x[i2];
    n[i2] = s * x[i1] + c * x[i2];
    l[A] = x[3 + A];
    l[i1] = c * x[3 + i1] - s * x[3 + i2];
    l[i2] = s * x[3 + i1] + c * x[3 + i2];
    fp[0] += n[0] + (r[1] * l[2] - r[2] * l[1]);
    fp[1] += n[1] + (r[2] * l[0] - r[0] * l[2]);
    fp[2] += n[2] + (r[0] * l[1] - r[1] * l[0]);
    fp[3] += l[0];
    fp[4] += l[1];
    fp[5] += l[2];
  }
};

// An axis-aligned revolute joint whose tree rotation is a signed permutation
// (arm URDFs' ±90° offsets): AlignedRnea with Xup's rotation applied through
// its five nonzero entries (detail::SparseRotation's products and sums), the
// columns Pa, Pb1, Pb2 of rows A, i1, i2's entries (Joint::tree_cols)
// template parameters, so that the permuted components stay in registers.
template <int A, int Pa, int Pb1, int Pb2>
struct PermutedRnea {
  static constexpr int i1 = (A + 1) % 3;
  static constexpr int i2 = (A + 2) % 3;
  struct Rot {
    double eA, e11, e12, e21, e22;  // E(A, Pa), E(i1, Pb1), E(i1, Pb2), E(i2, Pb1), E(i2, Pb2)
    explicit PLUME_INLINE Rot(const Mat3& E)
        : eA(E(A, Pa)), e11(E(i1, Pb1)), e12(E(i1, Pb2)), e21(E(i2, Pb1)), e22(E(i2, Pb2)) {}
    // y = E x.
    PLUME_INLINE void apply(double x0, double x1, double x2, double* y) const {
      const double x[3] = {x0, x1, x2};
      y[A] = eA * x[Pa];
      y[i1] = e11 * x[Pb1] + e12 * x[Pb2];
      y[i2] = e21 * x[Pb1] + e22 * x[Pb2];
    }
    // x = Eᵀ y.
    PLUME_INLINE void apply_transpose(const double* y, double& x0, double& x1, double& x2) const {
      double x[3];
      x[Pa] = eA * y[A];
      x[Pb1] = e11 * y[i1] + e21 * y[i2];
      x[Pb2] = e12 * y[i1] + e22 * y[i2];
      x0 = x[0];
      x1 = x[1];
      x2 = x[2];
    }
  };
  // y = Xup x = [E ω; E (v − r × ω)].
  static PLUME_INLINE void up(const Rot& R, const Vec3& r, const double* x, double* y) {
    const double u0 = x[3] - (r[1] * x[2] - r[2] * x[1]);
    const double u1 = x[4] - (r[2] * x[0] - r[0] * x[2]);
    const double u2 = x[5] - (r[0] * x[1] - r[1] * x[0]);
    R.apply(x[0], x[1], x[2], y);
    R.apply(u0, u1, u2, y + 3);
  }
  template <bool with_acceleration>
  static PLUME_INLINE void forward(const Transform& X, const double* vp, const double* ap, double qd, double qdd,
                                   double* vi, double* ai) {
    const Rot R(X.E());
    double y[6];
    up(R, X.r(), vp, y);
    for (int k = 0; k < 6; ++k) vi[k] = y[k] + (k == A ? qd : 0.0);
    up(R, X.r(), ap, y);
    double m[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    m[i1] = vi[i2] * qd;
    m[i2] = -vi[i1] * qd;
    m[3 + i1] = vi[3 + i2] * qd;
    m[3 + i2] = -vi[3 + i1] * qd;
    for (int k = 0; k < 6; ++k) ai[k] = y[k] + m[k];
    if constexpr (with_acceleration) ai[A] += qdd;
  }
  // fp += Xupᵀ f = [Eᵀ n + r × Eᵀ l; Eᵀ l].
  static PLUME_INLINE void add_up_transpose(const Transform& X, const double* x, double* fp) {
    const Rot R(X.E());
    const Vec3& r = X.r();
    double n0, n1, n2, l0, l1, l2;
    R.apply_transpose(x, n0, n1, n2);
    R.apply_transpose(x + 3, l0, l1, l2);
    fp[0] += n0 + (r[1] * l2 - r[2] * l1);
    fp[1] += n1 + (r[2] * l0 - r[0] * l2);
    fp[2] += n2 + (r[0] * l1 - r[1] * l0);
    fp[3] += l0;
    fp[4] += l1;
    fp[5] += l2;
  }
};

/// fn(PermutedRnea<A, Pa, Pb1, Pb2>()) for joint j's tree columns.
template <int A, class Fn>
PLUME_INLINE void with_permuted(const Joint& j, Fn&& fn) {
  switch (3 * j.tree_cols[0] + j.tree_cols[1]) {
    case 1: fn(PermutedRnea<A, 0, 1, 2>()); return;
    case 2: fn(PermutedRnea<A, 0, 2, 1>()); return;
    case 3: fn(PermutedRnea<A, 1, 0, 2>()); return;
    case 5: fn(PermutedRnea<A, 1, 2, 0>()); return;
    case 6: fn(PermutedRnea<A, 2, 0, 1>()); return;
    default: fn(PermutedRnea<A, 2, 1, 0>()); return;
  }
}

// An axis-aligned revolute joint whose tree rotation is neither the identity
// nor a signed permutation (URDF origins such as rpy="0 1.570796325 0" or
// ±150°): AlignedRnea with Xup's full rotation, the operations of
// Transform::apply and apply_transpose (E x as Eigen evaluates it: rows 0 and
// 1 left to right, row 2 right to left; Eᵀ x, an inner product per row, left
// to right) on scalars straight into Data instead of Motion and Force
// temporaries (the same bits).
template <int A>
struct RotatedRnea {
  static constexpr int i1 = (A + 1) % 3;
  static constexpr int i2 = (A + 2) % 3;
  // y = Xup x = [E ω; E (v − r × ω)].
  static PLUME_INLINE void up(const Mat3& E, const Vec3& r, const double* x, double* y) {
    const double u0 = x[3] - (r[1] * x[2] - r[2] * x[1]);
    const double u1 = x[4] - (r[2] * x[0] - r[0] * x[2]);
    const double u2 = x[5] - (r[0] * x[1] - r[1] * x[0]);
    y[0] = detail::sum_l(E(0, 0) * x[0], E(0, 1) * x[1], E(0, 2) * x[2]);
    y[1] = detail::sum_l(E(1, 0) * x[0], E(1, 1) * x[1], E(1, 2) * x[2]);
    y[2] = detail::sum_r(E(2, 0) * x[0], E(2, 1) * x[1], E(2, 2) * x[2]);
    y[3] = detail::sum_l(E(0, 0) * u0, E(0, 1) * u1, E(0, 2) * u2);
    y[4] = detail::sum_l(E(1, 0) * u0, E(1, 1) * u1, E(1, 2) * u2);
    y[5] = detail::sum_r(E(2, 0) * u0, E(2, 1) * u1, E(2, 2) * u2);
  }
  template <bool with_acceleration>
  static PLUME_INLINE void forward(const Transform& X, const double* vp, const double* ap, double qd, double qdd,
                                   double* vi, double* ai) {
    double y[6];
    up(X.E(), X.r(), vp, y);
    for (int k = 0; k < 6; ++k) vi[k] = y[k] + (k == A ? qd : 0.0);
    up(X.E(), X.r(), ap, y);
    double m[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    m[i1] = vi[i2] * qd;
    m[i2] = -vi[i1] * qd;
    m[3 + i1] = vi[3 + i2] * qd;
    m[3 + i2] = -vi[3 + i1] * qd;
    for (int k = 0; k < 6; ++k) ai[k] = y[k] + m[k];
    if constexpr (with_acceleration) ai[A] += qdd;
  }
  // fp += Xupᵀ f = [Eᵀ n + r × Eᵀ l; Eᵀ l]. Out of line: inlined into
  // rnea_passes' backward pass, GCC 12 slowed the identity-rotation joints'
  // path (quadruped rnea 600 -> 650 ns).
  static __attribute__((noinline)) void add_up_transpose(const Transform& X, const double* x, double* fp) {
    const Mat3& E = X.E();
    const Vec3& r = X.r();
    const double l0 = detail::sum_l(E(0, 0) * x[3], E(1, 0) * x[4], E(2, 0) * x[5]);
    const double l1 = detail::sum_l(E(0, 1) * x[3], E(1, 1) * x[4], E(2, 1) * x[5]);
    const double l2 = detail::sum_l(E(0, 2) * x[3], E(1, 2) * x[4], E(2, 2) * x[5]);
    const double n0 = detail::sum_l(E(0, 0) * x[0], E(1, 0) * x[1], E(2, 0) * x[2]);
    const double n1 = detail::sum_l(E(0, 1) * x[0], E(1, 1) * x[1], E(2, 1) * x[2]);
    const double n2 = detail::sum_l(E(0, 2) * x[0], E(1, 2) * x[1], E(2, 2) * x[2]);
    fp[0] += n0 + (r[1] * l2 - r[2] * l1);
    fp[1] += n1 + (r[2] * l0 - r[0] * l2);
    fp[2] += n2 + (r[0] * l1 - r[1] * l0);
    fp[3] += l0;
    fp[4] += l1;
    fp[5] += l2;
  }
};

/// The axis A of an axis-aligned prismatic kernel, −1 for the other kinds.
template <class K>
inline constexpr int slider_axis = -1;
template <int A>
inline constexpr int slider_axis<detail::PrismaticAligned<A>> = A;

// A prismatic joint along axis A whose tree rotation is the identity: Xup is
// the translation by r, S = [0; e_A]; on scalars straight into Data (the
// operations of the generic path without its products by 1 and 0).
template <int A>
struct SliderRnea {
  static constexpr int i1 = (A + 1) % 3;
  static constexpr int i2 = (A + 2) % 3;
  // y = Xup x = [ω; v − r × ω].
  static PLUME_INLINE void up(const double* r, const double* x, double* y) { detail::translate_motion(r, x, y); }
  // v_i = Xup v_λ + S q̇, a_i = Xup a_λ + v_i × S q̇ (+ S q̈), with
  // v_i × [0; e_A q̇] = [0; ω_i × e_A q̇].
  template <bool with_acceleration>
  static PLUME_INLINE void forward(const double* r, const double* vp, const double* ap, double qd, double qdd,
                                   double* vi, double* ai) {
    double y[6];
    up(r, vp, y);
    for (int k = 0; k < 6; ++k) vi[k] = y[k] + (k == 3 + A ? qd : 0.0);
    up(r, ap, y);
    double m[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    m[3 + i1] = vi[i2] * qd;
    m[3 + i2] = -vi[i1] * qd;
    for (int k = 0; k < 6; ++k) ai[k] = y[k] + m[k];
    if constexpr (with_acceleration) ai[3 + A] += qdd;
  }
  // fp += Xupᵀ f = [n + r × l; l].
  static PLUME_INLINE void add_up_transpose(const double* r, const double* x, double* fp) {
    double y[6];
    detail::translate_force_transpose(r, x, y);
    for (int k = 0; k < 6; ++k) fp[k] += y[k];
  }
};

// Forward pass: v_i = X v_λ + S q̇, a_i = X a_λ + S q̈ + cJ + v_i × S q̇ (with
// a_0 = −g) and f_i = I a_i + v_i ×* I v_i; backward pass: τ_i = Sᵀ f_i,
// f_λ += Xᵀ f_i. `fext` (world coordinates) may be null.
template <Terms terms, bool placements_known = false>
PLUME_FLATTEN void rnea_passes(const Model& model, Data& data, const double* q, const double* v, const double* a,
                               const std::vector<Force>* fext, double* tau) {
  const int nb = model.nbodies();
  double* sc = data.qsc.data();
  if constexpr (!placements_known) detail::revolute_sin_cos(model, q, sc);
  data.v[0] = Motion::Zero();
  data.a[0] = Motion(Vec3::Zero(), -model.gravity());
  for (int i = 1; i < nb; ++i) {
    const Joint& j = model.joint(i);
    const int p = model.parent(i);
    const RigidInertia& I = model.inertia(i);
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      double* S = detail::S_cols(data.S, j);
      if constexpr (!placements_known) {
        detail::position_from<K>(j, model.Xtree(i), q + j.q_index, sc, i, data.Xup[i], S);
      }
      const Transform& X = data.Xup[i];
      if constexpr (terms == Terms::GravityOnly) {
        data.a[i] = K::up(j, X, data.a[p]);
        data.f[i] = detail::inertia_times(I, data.a[i]);
      } else {
        const double* qd = v + j.v_index;
        Motion& vi = data.v[i];
        Motion& ai = data.a[i];
        if constexpr (aligned_axis<K> >= 0) {
          if (j.tree_rotation_identity) {
            constexpr bool all = terms == Terms::All;
            if (p == 0) {
              AlignedRnea<aligned_axis<K>>::template root_forward<all>(
                  X, data.a[0].vector().data() + 3, qd[0], all ? a[j.v_index] : 0.0, vi.vector().data(),
                  ai.vector().data());
              body_force(I, ai, vi, data.f[i]);
              return;
            }
            AlignedRnea<aligned_axis<K>>::template forward<all>(
                X, data.v[p].vector().data(), data.a[p].vector().data(), qd[0], all ? a[j.v_index] : 0.0,
                vi.vector().data(), ai.vector().data());
            body_force(I, ai, vi, data.f[i]);
            return;
          }
          if (j.tree_rotation_permutation) {
            constexpr bool all = terms == Terms::All;
            with_permuted<aligned_axis<K>>(j, [&](auto pr) PLUME_LAMBDA_INLINE {
              decltype(pr)::template forward<all>(X, data.v[p].vector().data(), data.a[p].vector().data(), qd[0],
                                                  all ? a[j.v_index] : 0.0, vi.vector().data(), ai.vector().data());
            });
            body_force(I, ai, vi, data.f[i]);
            return;
          }
          constexpr bool all = terms == Terms::All;
          RotatedRnea<aligned_axis<K>>::template forward<all>(X, data.v[p].vector().data(), data.a[p].vector().data(),
                                                              qd[0], all ? a[j.v_index] : 0.0, vi.vector().data(),
                                                              ai.vector().data());
          body_force(I, ai, vi, data.f[i]);
          return;
        }
        if constexpr (slider_axis<K> >= 0) {
          if (j.tree_rotation_identity) {
            constexpr bool all = terms == Terms::All;
            SliderRnea<slider_axis<K>>::template forward<all>(
                X.r().data(), data.v[p].vector().data(), data.a[p].vector().data(), qd[0],
                all ? a[j.v_index] : 0.0, vi.vector().data(), ai.vector().data());
            body_force(I, ai, vi, data.f[i]);
            return;
          }
        }
        if constexpr (std::is_same_v<K, detail::FreeFlyer>) {
          if (p == 0) {
            // A free-flyer on the world (a free body, a floating base): v_λ = 0
            // and a_λ = [0; −g], so v_i = q̇ and a_i = [0; E (−g)] + q̈ (the
            // transform of a zero velocity and v_i × v_i = 0 not computed).
            const Vec3 lin = X.E() * Vec3(data.a[0].linear());
            double* vo = vi.vector().data();
            double* ao = ai.vector().data();
            for (int k = 0; k < 6; ++k) vo[k] = qd[k];
            for (int k = 0; k < 3; ++k) {
              ao[k] = 0.0;
              ao[3 + k] = lin[k];
            }
            if constexpr (terms == Terms::All) {
              for (int k = 0; k < 6; ++k) ao[k] += a[j.v_index + k];
            }
            body_force(I, ai, vi, data.f[i]);
            return;
          }
        }
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
      if (p <= 0) return;
      if constexpr (aligned_axis<K> >= 0) {
        if (j.tree_rotation_identity) {
          AlignedRnea<aligned_axis<K>>::add_up_transpose(data.Xup[i], data.f[i].vector().data(),
                                                         data.f[p].vector().data());
          return;
        }
        if (j.tree_rotation_permutation) {
          with_permuted<aligned_axis<K>>(j, [&](auto pr) PLUME_LAMBDA_INLINE {
            decltype(pr)::add_up_transpose(data.Xup[i], data.f[i].vector().data(), data.f[p].vector().data());
          });
          return;
        }
        RotatedRnea<aligned_axis<K>>::add_up_transpose(data.Xup[i], data.f[i].vector().data(),
                                                       data.f[p].vector().data());
        return;
      }
      if constexpr (slider_axis<K> >= 0) {
        if (j.tree_rotation_identity) {
          SliderRnea<slider_axis<K>>::add_up_transpose(data.Xup[i].r().data(), data.f[i].vector().data(),
                                                       data.f[p].vector().data());
          return;
        }
      }
      data.f[p] += K::up_transpose(j, data.Xup[i], data.f[i]);
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

// The checked entry points run the passes themselves (GCC kept the call
// through the unchecked function: 9-14 instructions per call).
const VectorX& rnea(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a) {
  detail::check_state(model, data, q, &v, "v", &a, "a");
  rnea_passes<Terms::All>(model, data, q.data(), v.data(), a.data(), nullptr, data.tau.data());
  return data.tau;
}

const VectorX& rnea(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a,
                    const std::vector<Force>& fext) {
  detail::check_state(model, data, q, &v, "v", &a, "a");
  detail::check_forces(model, fext);
  return unchecked::rnea(model, data, q, v, a, fext);
}

const VectorX& bias_forces(const Model& model, Data& data, const VecRef& q, const VecRef& v) {
  detail::check_state(model, data, q, &v, "v");
  rnea_passes<Terms::NoAcceleration>(model, data, q.data(), v.data(), nullptr, nullptr, data.C.data());
  return data.C;
}

const VectorX& gravity_torques(const Model& model, Data& data, const VecRef& q) {
  detail::check_state(model, data, q);
  return unchecked::gravity_torques(model, data, q);
}

VectorX passive_torques(const Model& model, const VecRef& v) {
  detail::check_vector_fast(v, model.nv(), "v");
  return -model.damping().cwiseProduct(v);
}

}  // namespace plume
