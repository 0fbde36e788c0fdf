#pragma once
// Joint kernels: jcalc (RBDA Table 4.1) specialised per joint kind, and the
// one place where algorithms dispatch over kinds (visit_kind).
//
// Every kernel K provides, with S the joint's motion subspace in body
// coordinates (6×nv, stored column-major at `S`, written once by
// init_motion_subspace() or by position() when it depends on q):
//   nv                             number of velocity coordinates (compile time)
//   position(j, Xtree, q, Xup, S)  Xup = XJ(q) Xtree (and S if it depends on q)
//   S_mul(S, x)                    the motion S x
//   add_S_mul(S, x, m)             m += S x
//   St_mul(S, f, out)              out = Sᵀ f (nv values)
//   cross_S(v, S, x)               v × (S x)
//   has_bias, bias(S, qd)          cJ = S̊ q̇ (the planar joint only)
//   world_subspace(E, r, S, oS)    oS = X⁻¹ S with X = (E, r) (a placement X0, or world
//                                  axes about another origin): the columns with world axes
//   world_rotation(j, Xup, E0p, E0) E0 = E_up E0_λ, the body's world orientation
//   up(j, Xup, m), up_transpose(j, Xup, f)  Xup m and Xupᵀ f
// Axis-aligned revolute and prismatic joints touch single coefficients; the others use
// fixed-size maps, so no operation goes through Eigen's dynamic-size paths.

#include <cmath>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <sleef.h>

#include "plume/data.hpp"
#include "plume/model.hpp"

/// Put after a lambda's parameter list: the lambda is always inlined. The
/// kernels dispatch over joint kinds through generic lambdas; GCC's flatten
/// does not always reach into them ("SSA form does not match": it left ABA's
/// per-joint bodies and the Eigen kernels they call out of line).
#if defined(__GNUC__) && !defined(PLUME_PLAIN_INLINING)
#define PLUME_LAMBDA_INLINE __attribute__((always_inline))
#else
#define PLUME_LAMBDA_INLINE
#endif

namespace plume::detail {

/// Sines and cosines of joint angles, two at a time: SLEEF's SSE2 sincos
/// (libsleef, Sleef_sincosd2_u35sse2, at most 3.5 ulp from the exact values;
/// its 1-ulp variant was no faster than glibc) on a pair of lanes. glibc's
/// sincos took 12-23 ns per angle, about a seventh of a 7-dof arm's CRBA; the
/// kernels collect their revolute joints in pairs (revolute_sin_cos, crba's
/// and the frame Jacobian's loops) and make one call per pair. The SSE2
/// variant is named, not SLEEF's dispatcher, so the bits do not depend on the
/// CPU the program runs on. Each lane's result depends on its own angle only,
/// so sin_cos(x) gives the pair's bits.
#if defined(__SSE2__)
PLUME_INLINE void sin_cos_pair(double x0, double x1, double& s0, double& c0, double& s1, double& c1) {
  const Sleef___m128d_2 sc = Sleef_sincosd2_u35sse2(_mm_set_pd(x1, x0));
  s0 = _mm_cvtsd_f64(sc.x);
  s1 = _mm_cvtsd_f64(_mm_unpackhi_pd(sc.x, sc.x));
  c0 = _mm_cvtsd_f64(sc.y);
  c1 = _mm_cvtsd_f64(_mm_unpackhi_pd(sc.y, sc.y));
}

/// s = sin x and c = cos x (sin_cos_pair's values).
PLUME_INLINE void sin_cos(double x, double& s, double& c) {
  const Sleef___m128d_2 sc = Sleef_sincosd2_u35sse2(_mm_set1_pd(x));
  s = _mm_cvtsd_f64(sc.x);
  c = _mm_cvtsd_f64(sc.y);
}
#else
PLUME_INLINE void sin_cos(double x, double& s, double& c) {
  const Sleef_double2 sc = Sleef_sincos_u35(x);
  s = sc.x;
  c = sc.y;
}

PLUME_INLINE void sin_cos_pair(double x0, double x1, double& s0, double& c0, double& s1, double& c1) {
  sin_cos(x0, s0, c0);
  sin_cos(x1, s1, c1);
}
#endif

template <int NV>
using SMap = Eigen::Map<const Eigen::Matrix<double, 6, NV>>;
template <int NV>
using VMap = Eigen::Map<const Eigen::Matrix<double, NV, 1>>;

// Defaults for kinds whose S is a dense 6×NV block.
template <int NV>
struct DenseSubspace {
  static constexpr int nv = NV;
  static PLUME_INLINE Motion S_mul(const double* S, const double* x) { return Motion(Vec6(SMap<NV>(S) * VMap<NV>(x))); }
  static PLUME_INLINE void add_S_mul(const double* S, const double* x, Motion& m) {
    m.vector().noalias() += SMap<NV>(S) * VMap<NV>(x);
  }
  static PLUME_INLINE void St_mul(const double* S, const Vec6& f, double* out) {
    Eigen::Map<Eigen::Matrix<double, NV, 1>>(out).noalias() = SMap<NV>(S).transpose() * f;
  }
  static PLUME_INLINE Motion cross_S(const Motion& v, const double* S, const double* x) { return v.cross(S_mul(S, x)); }
  static PLUME_INLINE void world_subspace(const Mat3& E, const Vec3& r, const double* S, double* oS) {
    for (int k = 0; k < NV; ++k) {  // Transform::apply_inverse, without a copy of (E, r)
      const Eigen::Map<const Vec6> s(S + 6 * k);
      const Vec3 w = E.transpose() * s.head<3>();
      Eigen::Map<Vec6> o(oS + 6 * k);
      o.head<3>() = w;
      o.tail<3>() = E.transpose() * s.tail<3>() + r.cross(w);
    }
  }
  static PLUME_INLINE Motion bias(const double*, const double*) { return Motion(); }
  static PLUME_INLINE void world_rotation(const Joint&, const Transform& Xup, const Mat3& E0p, Mat3& E0) {
    E0.noalias() = Xup.E() * E0p;
  }
  static PLUME_INLINE Motion up(const Joint&, const Transform& Xup, const Motion& m) { return Xup.apply(m); }
  static PLUME_INLINE Force up_transpose(const Joint&, const Transform& Xup, const Force& f) {
    return Xup.apply_transpose(f);
  }
};

/// The rotation E = R_A(q)ᵀ E_tree of an axis-aligned revolute joint about A
/// whose tree rotation is a signed permutation (Joint::tree_rotation_permutation):
/// five nonzero entries, E(A, a) = ±1 and the 2×2 block of rows i1, i2 in the
/// columns b1, b2 ((i1, i2) = (A + 1, A + 2) mod 3). E x and Eᵀ y take 5
/// products instead of 9 (the same values: the terms left out are exact zeros).
template <int A>
struct SparseRotation {
  static constexpr int i1 = (A + 1) % 3;
  static constexpr int i2 = (A + 2) % 3;
  int a, b1, b2;
  double eA, e11, e12, e21, e22;  // E(A, a), E(i1, b1), E(i1, b2), E(i2, b1), E(i2, b2)
  PLUME_INLINE SparseRotation(const Joint& j, const Mat3& E)
      : a(j.tree_cols[0]),
        b1(j.tree_cols[1]),
        b2(j.tree_cols[2]),
        eA(E(A, a)),
        e11(E(i1, b1)),
        e12(E(i1, b2)),
        e21(E(i2, b1)),
        e22(E(i2, b2)) {}
  /// y = E x.
  PLUME_INLINE void apply(const double* x, double* y) const {
    const double xa = x[a], x1 = x[b1], x2 = x[b2];
    y[A] = eA * xa;
    y[i1] = e11 * x1 + e12 * x2;
    y[i2] = e21 * x1 + e22 * x2;
  }
  /// x = Eᵀ y.
  PLUME_INLINE void apply_transpose(const double* y, double* x) const {
    const double yA = y[A], y1 = y[i1], y2 = y[i2];
    x[a] = eA * yA;
    x[b1] = e11 * y1 + e21 * y2;
    x[b2] = e12 * y1 + e22 * y2;
  }
};

// Revolute about +x (A = 0), +y (1) or +z (2): E = R_A(q)ᵀ E_tree touches two
// rows, S = [e_A; 0] picks one coefficient.
template <int A>
struct RevoluteAligned {
  static constexpr int nv = 1;
  static constexpr int axis = A;
  static constexpr bool has_bias = false;
  static PLUME_INLINE void position(const Joint&, const Transform& Xtree, const double* q, Transform& Xup, double*) {
    double s, c;
    sin_cos(q[0], s, c);
    position_sc(Xtree, s, c, Xup);
  }
  /// position() from s = sin q and c = cos q.
  static PLUME_INLINE void position_sc(const Transform& Xtree, double s, double c, Transform& Xup) {
    constexpr int i1 = (A + 1) % 3;
    constexpr int i2 = (A + 2) % 3;
    const Mat3& Et = Xtree.E();
    Mat3& E = Xup.E();
    for (int col = 0; col < 3; ++col) {
      const double e1 = Et(i1, col), e2 = Et(i2, col);
      E(A, col) = Et(A, col);
      E(i1, col) = c * e1 + s * e2;
      E(i2, col) = c * e2 - s * e1;
    }
    Xup.r() = Xtree.r();
  }
  static PLUME_INLINE Motion S_mul(const double*, const double* x) {
    Motion m;
    m.vector()[A] = x[0];
    return m;
  }
  static PLUME_INLINE void add_S_mul(const double*, const double* x, Motion& m) { m.vector()[A] += x[0]; }
  static PLUME_INLINE void St_mul(const double*, const Vec6& f, double* out) { out[0] = f[A]; }
  // v × (e_A x): [ω × e_A x; v_lin × e_A x]; a × e_A has components
  // (a_{i1} e_{i2} − a_{i2} e_{i1}) for the cyclic order (A, i1, i2).
  static PLUME_INLINE Motion cross_S(const Motion& v, const double*, const double* x) {
    constexpr int i1 = (A + 1) % 3;
    constexpr int i2 = (A + 2) % 3;
    const Vec6& w = v.vector();
    Motion m;
    m.vector()[i1] = w[i2] * x[0];
    m.vector()[i2] = -w[i1] * x[0];
    m.vector()[3 + i1] = w[3 + i2] * x[0];
    m.vector()[3 + i2] = -w[3 + i1] * x[0];
    return m;
  }
  static PLUME_INLINE void world_subspace(const Mat3& E, const Vec3& r, const double*, double* oS) {
    // X⁻¹ [e_A; 0] = [Eᵀ e_A; r × Eᵀ e_A], and Eᵀ e_A is row A of E.
    const Vec3 w = E.row(A).transpose();
    const Vec3 lin = r.cross(w);
    oS[0] = w[0];
    oS[1] = w[1];
    oS[2] = w[2];
    oS[3] = lin[0];
    oS[4] = lin[1];
    oS[5] = lin[2];
  }
  static PLUME_INLINE Motion bias(const double*, const double*) { return Motion(); }
  // With Xtree's rotation the identity, E_up = R_A(q)ᵀ: its rows A, i1, i2 are
  // e_A, (0, c, s), (0, −s, c) in the cyclic order, and E_up E0_λ mixes two
  // rows of E0_λ (c and s read back from E_up).
  static PLUME_INLINE void world_rotation(const Joint& j, const Transform& Xup, const Mat3& E0p, Mat3& E0) {
    if (j.tree_rotation_permutation) {  // rows of E_up E0_λ from two rows of E0_λ at most
      const SparseRotation<A> R(j, Xup.E());
      constexpr int i1 = (A + 1) % 3;
      constexpr int i2 = (A + 2) % 3;
      for (int col = 0; col < 3; ++col) {
        const double ea = E0p(R.a, col), e1 = E0p(R.b1, col), e2 = E0p(R.b2, col);
        E0(A, col) = R.eA * ea;
        E0(i1, col) = R.e11 * e1 + R.e12 * e2;
        E0(i2, col) = R.e21 * e1 + R.e22 * e2;
      }
      return;
    }
    if (!j.tree_rotation_identity) {
      E0.noalias() = Xup.E() * E0p;
      return;
    }
    constexpr int i1 = (A + 1) % 3;
    constexpr int i2 = (A + 2) % 3;
    const double c = Xup.E()(i1, i1);
    const double s = Xup.E()(i1, i2);
    for (int col = 0; col < 3; ++col) {
      const double e1 = E0p(i1, col), e2 = E0p(i2, col);
      E0(A, col) = E0p(A, col);
      E0(i1, col) = c * e1 + s * e2;
      E0(i2, col) = c * e2 - s * e1;
    }
  }
  // Xup m = [E ω; E (v − r × ω)] and Xupᵀ f = [Eᵀ n + r × Eᵀ f; Eᵀ f] with
  // E the plane rotation above (four products per 3-vector instead of nine).
  static PLUME_INLINE Motion up(const Joint& j, const Transform& Xup, const Motion& m) {
    if (!j.tree_rotation_identity) return Xup.apply(m);
    constexpr int i1 = (A + 1) % 3;
    constexpr int i2 = (A + 2) % 3;
    const double c = Xup.E()(i1, i1);
    const double s = Xup.E()(i1, i2);
    const Vec6& x = m.vector();
    const Vec3& r = Xup.r();
    const double u0 = x[3] - (r[1] * x[2] - r[2] * x[1]);
    const double u1 = x[4] - (r[2] * x[0] - r[0] * x[2]);
    const double u2 = x[5] - (r[0] * x[1] - r[1] * x[0]);
    const double u[3] = {u0, u1, u2};
    Motion out;
    Vec6& y = out.vector();
    y[A] = x[A];
    y[i1] = c * x[i1] + s * x[i2];
    y[i2] = c * x[i2] - s * x[i1];
    y[3 + A] = u[A];
    y[3 + i1] = c * u[i1] + s * u[i2];
    y[3 + i2] = c * u[i2] - s * u[i1];
    return out;
  }
  static PLUME_INLINE Force up_transpose(const Joint& j, const Transform& Xup, const Force& f) {
    if (!j.tree_rotation_identity) return Xup.apply_transpose(f);
    constexpr int i1 = (A + 1) % 3;
    constexpr int i2 = (A + 2) % 3;
    const double c = Xup.E()(i1, i1);
    const double s = Xup.E()(i1, i2);
    const Vec6& x = f.vector();
    const Vec3& r = Xup.r();
    double n[3], l[3];
    n[A] = x[A];
    n[i1] = c * x[i1] - s * x[i2];
    n[i2] = s * x[i1] + c * x[i2];
    l[A] = x[3 + A];
    l[i1] = c * x[3 + i1] - s * x[3 + i2];
    l[i2] = s * x[3 + i1] + c * x[3 + i2];
    Force out;
    Vec6& y = out.vector();
    y[0] = n[0] + (r[1] * l[2] - r[2] * l[1]);
    y[1] = n[1] + (r[2] * l[0] - r[0] * l[2]);
    y[2] = n[2] + (r[0] * l[1] - r[1] * l[0]);
    y[3] = l[0];
    y[4] = l[1];
    y[5] = l[2];
    return out;
  }
};

// Revolute about any unit axis a: E = R(a, q)ᵀ E_tree (Rodrigues).
struct RevoluteAxis : DenseSubspace<1> {
  static constexpr bool has_bias = false;
  static PLUME_INLINE void position(const Joint& j, const Transform& Xtree, const double* q, Transform& Xup, double*) {
    double s, c;
    sin_cos(q[0], s, c);
    const Vec3& a = j.axis;
    Mat3 EJ;  // R(a, q)ᵀ = c 1 − s a× + (1 − c) a aᵀ
    EJ.noalias() = (1.0 - c) * a * a.transpose();
    EJ.diagonal().array() += c;
    EJ(0, 1) += s * a.z();
    EJ(0, 2) -= s * a.y();
    EJ(1, 0) -= s * a.z();
    EJ(1, 2) += s * a.x();
    EJ(2, 0) += s * a.y();
    EJ(2, 1) -= s * a.x();
    Xup.E().noalias() = EJ * Xtree.E();
    Xup.r() = Xtree.r();
  }
};

// Prismatic along unit axis a: XJ = xlt(a q).
struct Prismatic : DenseSubspace<1> {
  static constexpr bool has_bias = false;
  static PLUME_INLINE void position(const Joint& j, const Transform& Xtree, const double* q, Transform& Xup, double*) {
    Xup.E() = Xtree.E();
    Xup.r().noalias() = Xtree.r() + Xtree.E().transpose() * (q[0] * j.axis);
  }
};

// Prismatic along +x (A = 0), +y (1) or +z (2) of the joint frame:
// XJ = xlt(q e_A), S = [0; e_A] picks one linear coefficient. With the
// identity tree rotation (a URDF slider whose origin has no rpy) Xup is a pure
// translation: Xup m = [ω; v − r × ω], Xupᵀ f = [n + r × l; l], and a body's
// world rotation is its parent's.
// A transform that is a pure translation by r (identity rotation):
// y = X x = [ω; v − r × ω] for a motion, and y = Xᵀ x = [n + r × l; l]
// for a force (the Xupᵀ of the backward passes).
PLUME_INLINE void translate_motion(const double* r, const double* x, double* y) {
  y[0] = x[0];
  y[1] = x[1];
  y[2] = x[2];
  y[3] = x[3] - (r[1] * x[2] - r[2] * x[1]);
  y[4] = x[4] - (r[2] * x[0] - r[0] * x[2]);
  y[5] = x[5] - (r[0] * x[1] - r[1] * x[0]);
}
PLUME_INLINE void translate_force_transpose(const double* r, const double* x, double* y) {
  y[0] = x[0] + (r[1] * x[5] - r[2] * x[4]);
  y[1] = x[1] + (r[2] * x[3] - r[0] * x[5]);
  y[2] = x[2] + (r[0] * x[4] - r[1] * x[3]);
  y[3] = x[3];
  y[4] = x[4];
  y[5] = x[5];
}

template <int A>
struct PrismaticAligned {
  static constexpr int nv = 1;
  static constexpr int axis = A;
  static constexpr bool has_bias = false;
  static PLUME_INLINE void position(const Joint&, const Transform& Xtree, const double* q, Transform& Xup, double*) {
    // r = r_tree + E_treeᵀ (q e_A): q times row A of E_tree.
    const Mat3& Et = Xtree.E();
    Xup.E() = Et;
    const Vec3& rt = Xtree.r();
    double* r = Xup.r().data();
    r[0] = rt[0] + Et(A, 0) * q[0];
    r[1] = rt[1] + Et(A, 1) * q[0];
    r[2] = rt[2] + Et(A, 2) * q[0];
  }
  static PLUME_INLINE Motion S_mul(const double*, const double* x) {
    Motion m;
    m.vector()[3 + A] = x[0];
    return m;
  }
  static PLUME_INLINE void add_S_mul(const double*, const double* x, Motion& m) { m.vector()[3 + A] += x[0]; }
  static PLUME_INLINE void St_mul(const double*, const Vec6& f, double* out) { out[0] = f[3 + A]; }
  // v × [0; e_A x] = [0; ω × e_A x], with ω × e_A = (0, ω_{i2}, −ω_{i1}) in the
  // cyclic order (A, i1, i2).
  static PLUME_INLINE Motion cross_S(const Motion& v, const double*, const double* x) {
    constexpr int i1 = (A + 1) % 3;
    constexpr int i2 = (A + 2) % 3;
    const Vec6& w = v.vector();
    Motion m;
    m.vector()[3 + i1] = w[i2] * x[0];
    m.vector()[3 + i2] = -w[i1] * x[0];
    return m;
  }
  // X⁻¹ [0; e_A] = [0; Eᵀ e_A], and Eᵀ e_A is row A of E.
  static PLUME_INLINE void world_subspace(const Mat3& E, const Vec3&, const double*, double* oS) {
    oS[0] = 0.0;
    oS[1] = 0.0;
    oS[2] = 0.0;
    oS[3] = E(A, 0);
    oS[4] = E(A, 1);
    oS[5] = E(A, 2);
  }
  static PLUME_INLINE Motion bias(const double*, const double*) { return Motion(); }
  static PLUME_INLINE void world_rotation(const Joint& j, const Transform& Xup, const Mat3& E0p, Mat3& E0) {
    if (j.tree_rotation_identity) {
      E0 = E0p;
    } else {
      E0.noalias() = Xup.E() * E0p;
    }
  }
  static PLUME_INLINE Motion up(const Joint& j, const Transform& Xup, const Motion& m) {
    if (!j.tree_rotation_identity) return Xup.apply(m);
    Motion out;
    translate_motion(Xup.r().data(), m.vector().data(), out.vector().data());
    return out;
  }
  static PLUME_INLINE Force up_transpose(const Joint& j, const Transform& Xup, const Force& f) {
    if (!j.tree_rotation_identity) return Xup.apply_transpose(f);
    Force out;
    translate_force_transpose(Xup.r().data(), f.vector().data(), out.vector().data());
    return out;
  }
};

// Planar: q = (x, y, θ); the body origin is at (x, y, 0) of the joint frame,
// rotated by θ about z; q̇ = v. S depends on θ, so cJ = S̊ q̇ = [0; −ω × v_J].
struct Planar : DenseSubspace<3> {
  static constexpr bool has_bias = true;
  static PLUME_INLINE void position(const Joint&, const Transform& Xtree, const double* q, Transform& Xup, double* S) {
    double s, c;
    sin_cos(q[2], s, c);
    const Mat3& Et = Xtree.E();
    Mat3& E = Xup.E();
    E.row(0) = c * Et.row(0) + s * Et.row(1);
    E.row(1) = c * Et.row(1) - s * Et.row(0);
    E.row(2) = Et.row(2);
    Xup.r().noalias() = Xtree.r() + Et.transpose() * Vec3(q[0], q[1], 0.0);
    Eigen::Map<Eigen::Matrix<double, 6, 3>> Sj(S);
    Sj.setZero();
    Sj(3, 0) = c;
    Sj(4, 0) = -s;
    Sj(3, 1) = s;
    Sj(4, 1) = c;
    Sj(2, 2) = 1.0;
  }
  static PLUME_INLINE Motion bias(const double* S, const double* qd) {
    const double vx = S[3] * qd[0] + S[6 + 3] * qd[1];
    const double vy = S[4] * qd[0] + S[6 + 4] * qd[1];
    return Motion(Vec3::Zero(), Vec3(qd[2] * vy, -qd[2] * vx, 0.0));
  }
};

// Free-flyer: q = (p, quaternion x y z w), v = [ω; v] in body coordinates, S = 1.
struct FreeFlyer {
  static constexpr int nv = 6;
  static constexpr bool has_bias = false;
  static PLUME_INLINE void position(const Joint& j, const Transform& Xtree, const double* q, Transform& Xup, double*) {
    const Eigen::Map<const Eigen::Quaterniond> r(q + 3);  // Eigen stores (x, y, z, w)
    const Mat3 R = r.toRotationMatrix();
    if (j.tree_rotation_identity) {  // the products by 1 and 0 below, without them
      Xup.E() = R.transpose();
      Xup.r() = Xtree.r() + Eigen::Map<const Vec3>(q);
      return;
    }
    Xup.E().noalias() = R.transpose() * Xtree.E();
    Xup.r().noalias() = Xtree.r() + Xtree.E().transpose() * Eigen::Map<const Vec3>(q);
  }
  static PLUME_INLINE Motion S_mul(const double*, const double* x) { return Motion(Vec6(Eigen::Map<const Vec6>(x))); }
  static PLUME_INLINE void add_S_mul(const double*, const double* x, Motion& m) { m.vector() += Eigen::Map<const Vec6>(x); }
  static PLUME_INLINE void St_mul(const double*, const Vec6& f, double* out) { Eigen::Map<Vec6> o(out); o = f; }
  static PLUME_INLINE Motion cross_S(const Motion& v, const double*, const double* x) {
    return v.cross(Motion(Vec6(Eigen::Map<const Vec6>(x))));
  }
  static PLUME_INLINE void world_subspace(const Mat3& E, const Vec3& r, const double*, double* oS) {
    // X⁻¹ = [Eᵀ 0; r×Eᵀ Eᵀ]
    Eigen::Map<Mat6> M(oS);
    const Mat3 Et = E.transpose();
    M.topLeftCorner<3, 3>() = Et;
    M.topRightCorner<3, 3>().setZero();
    M.bottomLeftCorner<3, 3>().noalias() = skew(r) * Et;
    M.bottomRightCorner<3, 3>() = Et;
  }
  static PLUME_INLINE Motion bias(const double*, const double*) { return Motion(); }
  static PLUME_INLINE void world_rotation(const Joint&, const Transform& Xup, const Mat3& E0p, Mat3& E0) {
    E0.noalias() = Xup.E() * E0p;
  }
  static PLUME_INLINE Motion up(const Joint&, const Transform& Xup, const Motion& m) { return Xup.apply(m); }
  static PLUME_INLINE Force up_transpose(const Joint&, const Transform& Xup, const Force& f) {
    return Xup.apply_transpose(f);
  }
};

/// Is K one of the axis-aligned revolute kernels?
template <class K>
inline constexpr bool is_revolute_aligned = false;
template <int A>
inline constexpr bool is_revolute_aligned<RevoluteAligned<A>> = true;

/// Is K one of the axis-aligned prismatic kernels?
template <class K>
inline constexpr bool is_prismatic_aligned = false;
template <int A>
inline constexpr bool is_prismatic_aligned<PrismaticAligned<A>> = true;

/// Calls f(kernel) with the kernel of `kind` (a default-constructed tag whose
/// type carries the compile-time number of DoF). Does nothing for None.
template <class F>
PLUME_INLINE void visit_kind(JointKind kind, F&& f) {
  switch (kind) {
    case JointKind::RevoluteX: f(RevoluteAligned<0>{}); return;
    case JointKind::RevoluteY: f(RevoluteAligned<1>{}); return;
    case JointKind::RevoluteZ: f(RevoluteAligned<2>{}); return;
    case JointKind::RevoluteAxis: f(RevoluteAxis{}); return;
    case JointKind::Prismatic: f(Prismatic{}); return;
    case JointKind::PrismaticX: f(PrismaticAligned<0>{}); return;
    case JointKind::PrismaticY: f(PrismaticAligned<1>{}); return;
    case JointKind::PrismaticZ: f(PrismaticAligned<2>{}); return;
    case JointKind::Planar: f(Planar{}); return;
    case JointKind::FreeFlyer: f(FreeFlyer{}); return;
    case JointKind::None: return;
  }
}

/// Is this kind an axis-aligned revolute joint (RevoluteAligned)?
PLUME_INLINE bool is_revolute_aligned_kind(JointKind k) {
  return k == JointKind::RevoluteX || k == JointKind::RevoluteY || k == JointKind::RevoluteZ;
}

/// sc[2i], sc[2i + 1] = sin q, cos q of every axis-aligned revolute joint i,
/// two joints at a time (sin_cos_pair), in a loop of their own before a pass:
/// the library calls then follow one another, where inside a pass each would
/// wait for the joint before it and spill every live vector register.
PLUME_INLINE void revolute_sin_cos(const Model& model, const double* q, double* sc) {
  const Joint* joint = &model.joint(0);
  int held = 0;  // a revolute body waiting for a second one (sin_cos_pair), or 0
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = joint[i];
    if (!is_revolute_aligned_kind(j.kind)) continue;
    if (held == 0) {
      held = i;
    } else {
      sin_cos_pair(q[joint[held].q_index], q[j.q_index], sc[2 * held], sc[2 * held + 1], sc[2 * i], sc[2 * i + 1]);
      held = 0;
    }
  }
  if (held != 0) sin_cos(q[joint[held].q_index], sc[2 * held], sc[2 * held + 1]);
}

/// K::position(j, Xtree, q, Xup, S), with the sine and cosine of an
/// axis-aligned revolute joint i taken from sc (revolute_sin_cos).
template <class K>
PLUME_INLINE void position_from(const Joint& j, const Transform& Xtree, const double* q, const double* sc, int i,
                                Transform& Xup, double* S) {
  if constexpr (is_revolute_aligned<K>) {
    K::position_sc(Xtree, sc[2 * i], sc[2 * i + 1], Xup);
  } else {
    K::position(j, Xtree, q, Xup, S);
  }
}

/// Pointer to the S columns of joint j in a 6×nv matrix.
PLUME_INLINE double* S_cols(Matrix6X& S, const Joint& j) { return S.data() + 6 * j.v_index; }
PLUME_INLINE const double* S_cols(const Matrix6X& S, const Joint& j) { return S.data() + 6 * j.v_index; }

/// Writes the constant motion subspace columns (every kind but planar).
inline void init_motion_subspace(const Model& model, Matrix6X& S) {
  S.setZero();
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    switch (j.type) {
      case JointType::Revolute:
      case JointType::Continuous: S.col(j.v_index).head<3>() = j.axis; break;
      case JointType::Prismatic: S.col(j.v_index).tail<3>() = j.axis; break;
      case JointType::FreeFlyer: S.middleCols<6>(j.v_index).setIdentity(); break;
      case JointType::Planar:
      case JointType::Fixed: break;
    }
  }
}

/// Sums of three products in the order Eigen's fixed-size 3×3 kernels use in
/// the default (SSE2) build: rows 0 and 1 of a product go in one packet, left
/// to right (sum_l); row 2 is a scalar reduction, right to left (sum_r).
/// Written-out kernels that use them give the same bits as the Eigen
/// expressions they replace.
PLUME_INLINE double sum_l(double a, double b, double c) { return (a + b) + c; }
PLUME_INLINE double sum_r(double a, double b, double c) { return a + (b + c); }

/// Xup[i] and X0[i] of body i from q (the position part of every forward pass).
/// sc: null, or the sines and cosines of revolute_sin_cos.
template <class K>
PLUME_INLINE void body_placement(const Model& model, Data& data, const double* q, int i, const double* sc = nullptr) {
  const Joint& j = model.joint(i);
  if (sc) {
    position_from<K>(j, model.Xtree(i), q + j.q_index, sc, i, data.Xup[i], S_cols(data.S, j));
  } else {
    K::position(j, model.Xtree(i), q + j.q_index, data.Xup[i], S_cols(data.S, j));
  }
  const int p = model.parent(i);
  if (p > 0) {
    const Transform& Xup = data.Xup[i];
    const Transform& X0p = data.X0[p];
    K::world_rotation(j, Xup, X0p.E(), data.X0[i].E());
    data.X0[i].r().noalias() = X0p.r() + X0p.E().transpose() * Xup.r();
  } else {
    data.X0[i] = data.Xup[i];
  }
}

/// X0[i] and orel[i] of body i from Xup[i] and its parent's, for the
/// world-aligned algorithms: they use world axes with the origin at the origin
/// of the subtree root (the body below the world that carries body i).
/// Working about a nearby point instead of the world origin keeps inertias and
/// velocities well scaled however far the robot is from the origin; the
/// relative position is accumulated along the tree (orel[i] = orel[λ] + t),
/// never computed as a difference of large world positions. E0 = E_up E0_λ,
/// and the one offset t = E0_λᵀ r_up moves both the world origin and orel.
/// Call after K::position(i). Returns orel[i] (use it rather than reloading
/// it: the 16-byte loads of a vector just stored in pieces stall).
template <class K>
PLUME_INLINE Vec3 world_placement(const Model& model, Data& data, int i) {
  const int p = model.parent(i);
  const Transform& Xup = data.Xup[i];
  Transform& X0 = data.X0[i];
  if (p > 0) {
    const Transform& X0p = data.X0[p];
    K::world_rotation(model.joint(i), Xup, X0p.E(), X0.E());
    // t = E0_λᵀ r_up on scalars (E0_λ was just stored coefficient by
    // coefficient: packet loads of it would wait for the stores to retire).
    const Mat3& Ep = X0p.E();
    const Vec3& ru = Xup.r();
    Vec3 t;
    for (int c = 0; c < 3; ++c) t[c] = sum_l(Ep(0, c) * ru[0], Ep(1, c) * ru[1], Ep(2, c) * ru[2]);
    X0.r() = X0p.r() + t;
    const Vec3 rel = data.orel[p] + t;
    data.orel[i] = rel;
    return rel;
  }
  X0 = Xup;
  data.orel[i].setZero();
  return Vec3::Zero();
}

/// F = I s = [Ī w + h × v; m v − h × w] for a rigid inertia I and s = [w; v]
/// (RigidInertia::operator* with the same bits, kept inline: GCC calls
/// Eigen's 3×3 product kernel out of line even in flattened loops).
PLUME_INLINE void inertia_times(const RigidInertia& Y, const double* s, double* F) {
  const double m = Y.mass();
  const Vec3& h = Y.h();
  const Mat3& I = Y.Ibar();
  F[0] = sum_l(I(0, 0) * s[0], I(0, 1) * s[1], I(0, 2) * s[2]) + (h[1] * s[5] - h[2] * s[4]);
  F[1] = sum_l(I(1, 0) * s[0], I(1, 1) * s[1], I(1, 2) * s[2]) + (h[2] * s[3] - h[0] * s[5]);
  F[2] = sum_r(I(2, 0) * s[0], I(2, 1) * s[1], I(2, 2) * s[2]) + (h[0] * s[4] - h[1] * s[3]);
  F[3] = m * s[3] - (h[1] * s[2] - h[2] * s[1]);
  F[4] = m * s[4] - (h[2] * s[0] - h[0] * s[2]);
  F[5] = m * s[5] - (h[0] * s[1] - h[1] * s[0]);
}
PLUME_INLINE Force inertia_times(const RigidInertia& Y, const Motion& v) {
  Force f;
  inertia_times(Y, v.vector().data(), f.vector().data());
  return f;
}

/// Inertia of body i with world axes about the reference point of the
/// world-aligned placement (E, rel) (see world_placement): with p the centre
/// of mass relative to that point, Ī = Eᵀ (Ic E) + m (|p|² 1 − p pᵀ), h = m p.
/// Written out (Eigen's products of these small matrices were not kept
/// inline) with Eigen's summation order; with SSE2, rows 0 and 1 of each
/// column share a register, as in Eigen's own kernels.
PLUME_INLINE RigidInertia world_inertia(const Model& model, int i, const Mat3& E, const Vec3& rel) {
  const double m = model.inertia(i).mass();
  const Mat3& Ic = model.body_inertia_about_com(i);
  const Vec3& com = model.body_com(i);
  // Inertias given in principal axes (most URDF links): Ic E scales the rows
  // of E (the products by zero only add zeros).
  const bool diagonal = Ic(1, 0) == 0.0 && Ic(2, 0) == 0.0 && Ic(2, 1) == 0.0 && Ic(0, 1) == 0.0 &&
                        Ic(0, 2) == 0.0 && Ic(1, 2) == 0.0;
  Vec3 p;
  Mat3 Ibar;
#if defined(__SSE2__)
  const double* e = E.data();  // column-major: E(r, c) = e[r + 3c]
  const double* ic = Ic.data();
  // Rows k of E, columns 0 and 1: lanes r = 0, 1 of Eᵀ's column k.
  const __m128d R0 = _mm_unpacklo_pd(_mm_load_sd(e + 0), _mm_load_sd(e + 3));
  const __m128d R1 = _mm_unpacklo_pd(_mm_load_sd(e + 1), _mm_load_sd(e + 4));
  const __m128d R2 = _mm_unpacklo_pd(_mm_load_sd(e + 2), _mm_load_sd(e + 5));
  // E and rel were just stored coefficient by coefficient: loaded the same way.
  const __m128d p01 = _mm_add_pd(_mm_unpacklo_pd(_mm_load_sd(rel.data()), _mm_load_sd(rel.data() + 1)),
                                 _mm_add_pd(_mm_add_pd(_mm_mul_pd(R0, _mm_set1_pd(com[0])),
                                                       _mm_mul_pd(R1, _mm_set1_pd(com[1]))),
                                            _mm_mul_pd(R2, _mm_set1_pd(com[2]))));
  _mm_storeu_pd(p.data(), p01);
  p[2] = rel[2] + sum_l(e[6] * com[0], e[7] * com[1], e[8] * com[2]);
  const __m128d I0 = _mm_loadu_pd(ic + 0), I1 = _mm_loadu_pd(ic + 3), I2 = _mm_loadu_pd(ic + 6);
  const __m128d mp01 = _mm_mul_pd(_mm_set1_pd(m), p01);
  double* ib = Ibar.data();
  double T[3][3];  // T = Ic E, T[c] its column c
  if (diagonal) {
    const __m128d d01 = _mm_unpacklo_pd(I0, _mm_unpackhi_pd(I1, I1));  // (Ic00, Ic11)
    for (int c = 0; c < 3; ++c) {
      _mm_storeu_pd(T[c], _mm_mul_pd(d01, _mm_unpacklo_pd(_mm_load_sd(e + 3 * c), _mm_load_sd(e + 3 * c + 1))));
      T[c][2] = ic[8] * e[2 + 3 * c];
    }
  } else {
    for (int c = 0; c < 3; ++c) {
      const double* ec = e + 3 * c;
      _mm_storeu_pd(T[c], _mm_add_pd(_mm_add_pd(_mm_mul_pd(I0, _mm_set1_pd(ec[0])), _mm_mul_pd(I1, _mm_set1_pd(ec[1]))),
                                     _mm_mul_pd(I2, _mm_set1_pd(ec[2]))));
      T[c][2] = sum_r(ic[2] * ec[0], ic[5] * ec[1], ic[8] * ec[2]);
    }
  }
  __m128d x[3];  // rows 0 and 1 of column c
  double z[3];   // row 2 of column c
  for (int c = 0; c < 3; ++c) {
    const __m128d y = _mm_add_pd(_mm_add_pd(_mm_mul_pd(R0, _mm_set1_pd(T[c][0])), _mm_mul_pd(R1, _mm_set1_pd(T[c][1]))),
                                 _mm_mul_pd(R2, _mm_set1_pd(T[c][2])));
    x[c] = _mm_sub_pd(y, _mm_mul_pd(mp01, _mm_set1_pd(p[c])));
    z[c] = sum_l(e[6] * T[c][0], e[7] * T[c][1], e[8] * T[c][2]) - m * p[2] * p[c];
  }
  // + m |p|² on the diagonal (|p|² summed as Eigen's squaredNorm does), in
  // registers; then stored as the pairs a copy of the 3×3 loads: a store of
  // one coefficient followed by a 16-byte load over it cannot be forwarded
  // (a stall of about a dozen cycles, three per body in CRBA's first pass).
  const double mpp = m * ((p[0] * p[0] + p[1] * p[1]) + p[2] * p[2]);
  const __m128d vpp = _mm_set_sd(mpp);
  x[0] = _mm_add_sd(x[0], vpp);
  x[1] = _mm_shuffle_pd(x[1], x[1], 1);
  x[1] = _mm_add_sd(x[1], vpp);
  x[1] = _mm_shuffle_pd(x[1], x[1], 1);
  z[2] += mpp;
  _mm_storeu_pd(ib + 0, x[0]);
  _mm_storeu_pd(ib + 2, _mm_unpacklo_pd(_mm_set_sd(z[0]), x[1]));
  _mm_storeu_pd(ib + 4, _mm_shuffle_pd(x[1], _mm_set_sd(z[1]), 1));
  _mm_storeu_pd(ib + 6, x[2]);
  ib[8] = z[2];
  return RigidInertia(m, m * p, Ibar);
#else
  for (int r = 0; r < 3; ++r) p[r] = rel[r] + sum_l(E(0, r) * com[0], E(1, r) * com[1], E(2, r) * com[2]);
  double T[3][3];  // T = Ic E, T[c] its column c
  for (int c = 0; c < 3; ++c) {
    if (diagonal) {
      for (int r = 0; r < 3; ++r) T[c][r] = Ic(r, r) * E(r, c);
    } else {
      T[c][0] = sum_l(Ic(0, 0) * E(0, c), Ic(0, 1) * E(1, c), Ic(0, 2) * E(2, c));
      T[c][1] = sum_l(Ic(1, 0) * E(0, c), Ic(1, 1) * E(1, c), Ic(1, 2) * E(2, c));
      T[c][2] = sum_r(Ic(2, 0) * E(0, c), Ic(2, 1) * E(1, c), Ic(2, 2) * E(2, c));
    }
  }
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 3; ++r) {
      Ibar(r, c) = sum_l(E(0, r) * T[c][0], E(1, r) * T[c][1], E(2, r) * T[c][2]) - m * p[r] * p[c];
    }
  }
  const double pp = p.squaredNorm();
  for (int c = 0; c < 3; ++c) Ibar(c, c) += m * pp;
  return RigidInertia(m, m * p, Ibar);
#endif
}

/// M = [Ī h×; h×ᵀ m 1], RigidInertia::to_matrix() written in place (the
/// returned matrix was built on the stack and copied with a `rep movs`).
PLUME_INLINE void inertia_matrix(const RigidInertia& Y, Mat6& M) {
  const Mat3& I = Y.Ibar();
  const Vec3& h = Y.h();
  const double m = Y.mass();
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 3; ++r) M(r, c) = I(r, c);
  }
  const double hx[3][3] = {{0.0, -h[2], h[1]}, {h[2], 0.0, -h[0]}, {-h[1], h[0], 0.0}};
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 3; ++r) {
      M(r, 3 + c) = hx[r][c];
      M(3 + r, c) = hx[c][r];
      M(3 + r, 3 + c) = r == c ? m : 0.0;
    }
  }
}

/// A −= X Yᵀ for 6×N matrices X, Y (a rank-N update, written out so that it
/// stays inline).
template <int N>
PLUME_INLINE void subtract_outer(Mat6& A, const Eigen::Matrix<double, 6, N>& X, const Eigen::Matrix<double, 6, N>& Y) {
  for (int k = 0; k < N; ++k) {
    for (int c = 0; c < 6; ++c) A.col(c) -= Y(c, k) * X.col(k);
  }
}

}  // namespace plume::detail
