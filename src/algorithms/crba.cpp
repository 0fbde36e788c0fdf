// Composite-rigid-body algorithm (RBDA Table 6.2) in body coordinates.
//
// Forward: the joint transforms Xup (and, for the library's callers that need
// them next, the placements X0: detail::crba_placements). Backward, leaves
// to root: body i's composite inertia Ic_i (body coordinates) gives
// F = Ic_i S_k for each of its dofs k; H(k, k) = S_kᵀ F, and F carried up the
// support chain by F ← Xupᵀ F gives H(l, k) = S_lᵀ F for every ancestor dof l
// (the branch-induced sparsity: other entries of H stay zero); then
// Ic_λ += Xupᵀ Ic_i Xup.
//
// For an axis-aligned revolute joint whose tree rotation is the identity
// (every joint of the shipped models but the free-flyer), S = [e_A; 0]:
// F is a column of Ic (no products), S_lᵀ F picks a coefficient, and Xup is a
// plane rotation followed by a translation, so that Xupᵀ F costs 14 products
// and Xupᵀ Ic Xup about 45. A free-flyer's S is the identity in its body
// coordinates: at a root, its 6×6 block of H is its composite inertia as it
// stands, and its coupling entries are F in its coordinates.
#include "plume/algorithms/crba.hpp"

#include <cstring>
#include <type_traits>

#include "checks.hpp"
#include "crba_placements.hpp"
#include "joint_kernels.hpp"
#include "root_leaves.hpp"

namespace plume {

namespace {

/// A 6-vector dot product.
PLUME_INLINE double dot6(const double* a, const double* b) {
  return (a[0] * b[0] + (a[2] * b[2] + a[4] * b[4])) + (a[1] * b[1] + (a[3] * b[3] + a[5] * b[5]));
}

/// Does joint j have an axis-aligned revolute kernel with the identity tree
/// rotation (Xup = plane rotation, then translation)?
PLUME_INLINE bool is_plane_revolute(const Joint& j) {
  return (j.kind == JointKind::RevoluteX || j.kind == JointKind::RevoluteY || j.kind == JointKind::RevoluteZ) &&
         j.tree_rotation_identity;
}

/// Is joint j prismatic along a coordinate axis with the identity tree
/// rotation (Xup a pure translation)?
PLUME_INLINE bool is_straight_slider(const Joint& j) {
  return (j.kind == JointKind::PrismaticX || j.kind == JointKind::PrismaticY || j.kind == JointKind::PrismaticZ) &&
         j.tree_rotation_identity;
}

/// The axis A of an axis-aligned revolute kernel.
template <class K>
inline constexpr int axis_of = -1;
template <int A>
inline constexpr int axis_of<detail::RevoluteAligned<A>> = A;

/// Xup of an axis-aligned revolute joint about A with the identity tree
/// rotation: E = R_A(q)ᵀ written directly (rows i1, i2: (c, s), (−s, c) in the
/// columns i1, i2; the values RevoluteAligned::position_sc computes as
/// products with the identity), r = the tree offset.
template <int A>
PLUME_INLINE void plane_position(const Transform& Xtree, double s, double c, Transform& X) {
  constexpr int i1 = (A + 1) % 3;
  constexpr int i2 = (A + 2) % 3;
  Mat3& E = X.E();
  E(A, A) = 1.0;
  E(A, i1) = 0.0;
  E(A, i2) = 0.0;
  E(i1, A) = 0.0;
  E(i1, i1) = c;
  E(i1, i2) = s;
  E(i2, A) = 0.0;
  E(i2, i1) = -s;
  E(i2, i2) = c;
  const Vec3& rt = Xtree.r();
  double* r = X.r().data();
  r[0] = rt[0];
  r[1] = rt[1];
  r[2] = rt[2];
}

/// Ic_λ += Xᵀ Ic X for X = (E, r) with E the plane rotation about axis A of
/// an axis-aligned revolute joint (rows i1, i2 of E: (c, s), (−s, c) in the
/// columns i1, i2; (i1, i2) = (A + 1, A + 2) mod 3). With hr = Eᵀ h and
/// hA = hr + m r: h_λ += hA and Ī_λ += Eᵀ Ī E + (r·hr + r·hA) 1 − hr rᵀ − r hAᵀ
/// (RBDA Table 2.5 with −a× b× = (a·b) 1 − b aᵀ), one triangle computed and
/// mirrored, so Ī_λ stays exactly symmetric.
template <int A>
PLUME_INLINE void add_plane_transformed(const RigidInertia& Y, const Transform& X, const RigidInertia& B,
                                        RigidInertia& P) {
  // Named scalars throughout (no small arrays: GCC kept those on the stack
  // and read them back in wider loads than it wrote them).
  constexpr int i1 = (A + 1) % 3;
  constexpr int i2 = (A + 2) % 3;
  const double c = X.E()(i1, i1);
  const double s = X.E()(i1, i2);
  const double m = Y.mass();
  const Mat3& I = Y.Ibar();
  const Vec3& h = Y.h();
  const Vec3& r = X.r();
  const double rA = r[A], r1 = r[i1], r2 = r[i2];
  // Eᵀ Ī E: E turns the (i1, i2) plane only.
  const double a = I(i1, i1), b = I(i1, i2), d = I(i2, i2);
  const double cc = c * c, ss = s * s, cs = c * s;
  const double RA1 = c * I(A, i1) - s * I(A, i2);
  const double RA2 = s * I(A, i1) + c * I(A, i2);
  const double R11 = (a * cc - 2.0 * b * cs) + d * ss;
  const double R22 = (a * ss + 2.0 * b * cs) + d * cc;
  const double R12 = (a - d) * cs + b * (cc - ss);
  // hr = Eᵀ h, hA = hr + m r.
  const double hrA = h[A];
  const double hr1 = c * h[i1] - s * h[i2];
  const double hr2 = s * h[i1] + c * h[i2];
  const double hAA = hrA + m * rA, hA1 = hr1 + m * r1, hA2 = hr2 + m * r2;
  const double diag = ((rA * hrA + r1 * hr1) + r2 * hr2) + ((rA * hAA + r1 * hA1) + r2 * hA2);
  const double xAA = (I(A, A) - (hrA * rA + rA * hAA)) + diag;
  const double x11 = (R11 - (hr1 * r1 + r1 * hA1)) + diag;
  const double x22 = (R22 - (hr2 * r2 + r2 * hA2)) + diag;
  const double xA1 = RA1 - (hrA * r1 + rA * hA1);
  const double xA2 = RA2 - (hrA * r2 + rA * hA2);
  const double x12 = R12 - (hr1 * r2 + r1 * hA2);
  Mat3& Ip = P.Ibar();
  const Mat3& Ib = B.Ibar();
  Ip(A, A) = Ib(A, A) + xAA;
  Ip(i1, i1) = Ib(i1, i1) + x11;
  Ip(i2, i2) = Ib(i2, i2) + x22;
  Ip(A, i1) = Ib(A, i1) + xA1;
  Ip(i1, A) = Ib(i1, A) + xA1;
  Ip(A, i2) = Ib(A, i2) + xA2;
  Ip(i2, A) = Ib(i2, A) + xA2;
  Ip(i1, i2) = Ib(i1, i2) + x12;
  Ip(i2, i1) = Ib(i2, i1) + x12;
  P.mass() = B.mass() + m;
  Vec3& hp = P.h();
  const Vec3& hb = B.h();
  hp[A] = hb[A] + hAA;
  hp[i1] = hb[i1] + hA1;
  hp[i2] = hb[i2] + hA2;
}

/// Xup's rotation E as add_transformed and force_up read it: col<c>(x) =
/// Σ_r E(r, c) x_r = (Eᵀ x)_c, summed left to right.
struct FullRotation {
  const Mat3& E;
  template <int c, class T>
  PLUME_INLINE T col(T x0, T x1, T x2) const {
    return (E(0, c) * x0 + E(1, c) * x1) + E(2, c) * x2;
  }
};

/// The rotation of an axis-aligned revolute joint about A whose tree rotation
/// is a signed permutation (Joint::tree_rotation_permutation): row A's one
/// nonzero entry is in column Pa, rows i1 and i2 have theirs in columns Pb1
/// and Pb2 (compile-time, so that the products and sums stay in registers).
/// col<c> sums only column c's nonzero entries; the terms the full sum adds
/// besides are exact zeros, so the bits are the same (but for the sign of a
/// zero).
template <int A, int Pa, int Pb1, int Pb2>
struct PermutedRotation {
  static constexpr int i1 = (A + 1) % 3;
  static constexpr int i2 = (A + 2) % 3;
  double eA, e11, e12, e21, e22;  // E(A, Pa), E(i1, Pb1), E(i1, Pb2), E(i2, Pb1), E(i2, Pb2)
  explicit PLUME_INLINE PermutedRotation(const Mat3& E)
      : eA(E(A, Pa)), e11(E(i1, Pb1)), e12(E(i1, Pb2)), e21(E(i2, Pb1)), e22(E(i2, Pb2)) {}
  template <int c, class T>
  PLUME_INLINE T col(T x0, T x1, T x2) const {
    const T x[3] = {x0, x1, x2};
    if constexpr (c == Pa) {
      return eA * x[A];
    } else if constexpr (c == Pb1) {
      return e11 * x[i1] + e21 * x[i2];
    } else {
      return e12 * x[i1] + e22 * x[i2];
    }
  }
};

/// f(R) with R the rotation policy of joint j's Xup rotation E: a
/// PermutedRotation for an axis-aligned revolute joint with a permuted tree
/// rotation, FullRotation otherwise.
template <class Fn>
PLUME_INLINE void with_rotation(const Joint& j, const Mat3& E, Fn&& fn) {
  if (j.tree_rotation_permutation) {
    const int perm = 3 * j.tree_cols[0] + j.tree_cols[1];  // (0,1,2) 1, (0,2,1) 2, (1,0,2) 3, (1,2,0) 5, (2,0,1) 6, (2,1,0) 7
    auto axis = [&](auto a) PLUME_LAMBDA_INLINE {
      constexpr int A = decltype(a)::value;
      switch (perm) {
        case 1: fn(PermutedRotation<A, 0, 1, 2>(E)); return;
        case 2: fn(PermutedRotation<A, 0, 2, 1>(E)); return;
        case 3: fn(PermutedRotation<A, 1, 0, 2>(E)); return;
        case 5: fn(PermutedRotation<A, 1, 2, 0>(E)); return;
        case 6: fn(PermutedRotation<A, 2, 0, 1>(E)); return;
        default: fn(PermutedRotation<A, 2, 1, 0>(E)); return;
      }
    };
    switch (j.kind) {
      case JointKind::RevoluteX: axis(std::integral_constant<int, 0>()); return;
      case JointKind::RevoluteY: axis(std::integral_constant<int, 1>()); return;
      case JointKind::RevoluteZ: axis(std::integral_constant<int, 2>()); return;
      default: break;
    }
  }
  fn(FullRotation{E});
}

/// Ic_λ += Xᵀ Ic X for any transform X = (E, r), R reading E
/// (FullRotation, PermutedRotation): with hr = Eᵀ h, hA = hr + m r and
/// w = hr + hA, h_λ += hA and Ī_λ += Eᵀ Ī E + (r·w) 1 − (w rᵀ + r wᵀ)/2
/// (add_plane_transformed's −hr rᵀ − r hAᵀ written as the symmetric form it
/// is: 15 products for the translation instead of 21), one triangle computed
/// and mirrored. The translation's terms first, then Eᵀ Ī E one column of
/// Ī E at a time, each entry of Ī_λ written as soon as it is known: at most a
/// column of Ī E and the six translation terms stay live (with the 3×3 Ī E
/// held whole, GCC spilled a third of the update to the stack).
template <class Rot>
PLUME_INLINE void add_transformed(const RigidInertia& Y, const Rot& R, const Vec3& r, const RigidInertia& B,
                                  RigidInertia& P) {
  const Mat3& I = Y.Ibar();
  const Vec3& h = Y.h();
  const double m = Y.mass();
  const double r0 = r[0], r1 = r[1], r2 = r[2];
  const double hr0 = R.template col<0>(h[0], h[1], h[2]);
  const double hr1 = R.template col<1>(h[0], h[1], h[2]);
  const double hr2 = R.template col<2>(h[0], h[1], h[2]);
  const double hA0 = hr0 + m * r0, hA1 = hr1 + m * r1, hA2 = hr2 + m * r2;
  P.mass() = B.mass() + m;
  Vec3& hp = P.h();
  const Vec3& hb = B.h();
  hp[0] = hb[0] + hA0;
  hp[1] = hb[1] + hA1;
  hp[2] = hb[2] + hA2;
  const double w0 = hr0 + hA0, w1 = hr1 + hA1, w2 = hr2 + hA2;
  // Diagonal: r·w − r_a w_a; off the diagonal: −(u_a r_b + r_a u_b), u = w/2.
  const double p0 = r0 * w0, p1 = r1 * w1, p2 = r2 * w2;
  const double d0 = p1 + p2, d1 = p0 + p2, d2 = p0 + p1;
  const double u0 = 0.5 * w0, u1 = 0.5 * w1, u2 = 0.5 * w2;
  const double o01 = u0 * r1 + r0 * u1;
  const double o02 = u0 * r2 + r0 * u2;
  const double o12 = u1 * r2 + r1 * u2;
  Mat3& Ip = P.Ibar();
  const Mat3& Ib = B.Ibar();
  // (Eᵀ Ī E)(a, b) = Σ_k E(k, a) (Ī E)(k, b), column b of Ī E at a time.
  {
    const double T0 = R.template col<0>(I(0, 0), I(0, 1), I(0, 2));
    const double T1 = R.template col<0>(I(1, 0), I(1, 1), I(1, 2));
    const double T2 = R.template col<0>(I(2, 0), I(2, 1), I(2, 2));
    Ip(0, 0) = Ib(0, 0) + (R.template col<0>(T0, T1, T2) + d0);
  }
  {
    const double T0 = R.template col<1>(I(0, 0), I(0, 1), I(0, 2));
    const double T1 = R.template col<1>(I(1, 0), I(1, 1), I(1, 2));
    const double T2 = R.template col<1>(I(2, 0), I(2, 1), I(2, 2));
    const double x01 = R.template col<0>(T0, T1, T2) - o01;
    Ip(0, 1) = Ib(0, 1) + x01;
    Ip(1, 0) = Ib(1, 0) + x01;
    Ip(1, 1) = Ib(1, 1) + (R.template col<1>(T0, T1, T2) + d1);
  }
  {
    const double T0 = R.template col<2>(I(0, 0), I(0, 1), I(0, 2));
    const double T1 = R.template col<2>(I(1, 0), I(1, 1), I(1, 2));
    const double T2 = R.template col<2>(I(2, 0), I(2, 1), I(2, 2));
    const double x02 = R.template col<0>(T0, T1, T2) - o02;
    const double x12 = R.template col<1>(T0, T1, T2) - o12;
    Ip(0, 2) = Ib(0, 2) + x02;
    Ip(2, 0) = Ib(2, 0) + x02;
    Ip(1, 2) = Ib(1, 2) + x12;
    Ip(2, 1) = Ib(2, 1) + x12;
    Ip(2, 2) = Ib(2, 2) + (R.template col<2>(T0, T1, T2) + d2);
  }
}

/// Ic_λ += Xᵀ Ic X for a translation X = (1, r): add_transformed with E = 1
/// (h_λ += h + m r, Ī_λ += Ī + (r·h + r·hA) 1 − h rᵀ − r hAᵀ).
PLUME_INLINE void add_translated(const RigidInertia& Y, const Vec3& r, const RigidInertia& B, RigidInertia& P) {
  const Mat3& I = Y.Ibar();
  const Vec3& h = Y.h();
  const double m = Y.mass();
  const double hA0 = h[0] + m * r[0], hA1 = h[1] + m * r[1], hA2 = h[2] + m * r[2];
  const double diag = ((r[0] * h[0] + r[1] * h[1]) + r[2] * h[2]) + ((r[0] * hA0 + r[1] * hA1) + r[2] * hA2);
  const double x00 = (I(0, 0) - (h[0] * r[0] + r[0] * hA0)) + diag;
  const double x11 = (I(1, 1) - (h[1] * r[1] + r[1] * hA1)) + diag;
  const double x22 = (I(2, 2) - (h[2] * r[2] + r[2] * hA2)) + diag;
  const double x01 = I(0, 1) - (h[0] * r[1] + r[0] * hA1);
  const double x02 = I(0, 2) - (h[0] * r[2] + r[0] * hA2);
  const double x12 = I(1, 2) - (h[1] * r[2] + r[1] * hA2);
  Mat3& Ip = P.Ibar();
  const Mat3& Ib = B.Ibar();
  Ip(0, 0) = Ib(0, 0) + x00;
  Ip(1, 1) = Ib(1, 1) + x11;
  Ip(2, 2) = Ib(2, 2) + x22;
  Ip(0, 1) = Ib(0, 1) + x01;
  Ip(1, 0) = Ib(1, 0) + x01;
  Ip(0, 2) = Ib(0, 2) + x02;
  Ip(2, 0) = Ib(2, 0) + x02;
  Ip(1, 2) = Ib(1, 2) + x12;
  Ip(2, 1) = Ib(2, 1) + x12;
  P.mass() = B.mass() + m;
  Vec3& hp = P.h();
  const Vec3& hb = B.h();
  hp[0] = hb[0] + hA0;
  hp[1] = hb[1] + hA1;
  hp[2] = hb[2] + hA2;
}

/// f ← Xᵀ f for a translation X = (1, r): [n + r × l; l].
PLUME_INLINE void translated_force_up(const Vec3& r, double* f) {
  const double l0 = f[3], l1 = f[4], l2 = f[5];
  f[0] += r[1] * l2 - r[2] * l1;
  f[1] += r[2] * l0 - r[0] * l2;
  f[2] += r[0] * l1 - r[1] * l0;
}

/// f ← Xᵀ f for X = (E, r) with E the plane rotation of an axis-aligned
/// revolute joint about A: [Eᵀ n + r × Eᵀ l; Eᵀ l] (14 products).
template <int A>
PLUME_INLINE void plane_force_up(const Transform& X, double* f) {
  constexpr int i1 = (A + 1) % 3;
  constexpr int i2 = (A + 2) % 3;
  const double c = X.E()(i1, i1);
  const double s = X.E()(i1, i2);
  const Vec3& r = X.r();
  double n[3], l[3];
  n[A] = f[A];
  n[i1] = c * f[i1] - s * f[i2];
  n[i2] = s * f[i1] + c * f[i2];
  l[A] = f[3 + A];
  l[i1] = c * f[3 + i1] - s * f[3 + i2];
  l[i2] = s * f[3 + i1] + c * f[3 + i2];
  f[0] = n[0] + (r[1] * l[2] - r[2] * l[1]);
  f[1] = n[1] + (r[2] * l[0] - r[0] * l[2]);
  f[2] = n[2] + (r[0] * l[1] - r[1] * l[0]);
  f[3] = l[0];
  f[4] = l[1];
  f[5] = l[2];
}

/// f ← Xᵀ f = [Eᵀ n + r × Eᵀ l; Eᵀ l] for X = (E, r), E read through R; T is
/// double or a pair of doubles (two force columns at once).
template <class Rot, class T>
PLUME_INLINE void force_up_by(const Rot& R, const double* r, T* f) {
  const T n0 = R.template col<0>(f[0], f[1], f[2]);
  const T n1 = R.template col<1>(f[0], f[1], f[2]);
  const T n2 = R.template col<2>(f[0], f[1], f[2]);
  const T l0 = R.template col<0>(f[3], f[4], f[5]);
  const T l1 = R.template col<1>(f[3], f[4], f[5]);
  const T l2 = R.template col<2>(f[3], f[4], f[5]);
  f[0] = n0 + (r[1] * l2 - r[2] * l1);
  f[1] = n1 + (r[2] * l0 - r[0] * l2);
  f[2] = n2 + (r[0] * l1 - r[1] * l0);
  f[3] = l0;
  f[4] = l1;
  f[5] = l2;
}

/// f ← Xup_jᵀ f: a force from body j's coordinates to its parent's.
PLUME_INLINE void force_up(const Joint& j, const Transform& Xup, double* f) {
  if (j.tree_rotation_identity) {
    switch (j.kind) {
      case JointKind::RevoluteX: plane_force_up<0>(Xup, f); return;
      case JointKind::RevoluteY: plane_force_up<1>(Xup, f); return;
      case JointKind::RevoluteZ: plane_force_up<2>(Xup, f); return;
      case JointKind::PrismaticX:
      case JointKind::PrismaticY:
      case JointKind::PrismaticZ: translated_force_up(Xup.r(), f); return;
      default: break;
    }
  }
  // [Eᵀ n + r × Eᵀ l; Eᵀ l] with a full or permuted rotation.
  const Vec3& r = Xup.r();
  with_rotation(j, Xup.E(), [&](const auto& R) PLUME_LAMBDA_INLINE { force_up_by(R, r.data(), f); });
}

/// The plane rotation of an axis-aligned revolute joint about A with the
/// identity tree rotation (rows i1, i2 of E: (c, s), (−s, c) in the columns
/// i1, i2), read as FullRotation: col<c>(x) = (Eᵀ x)_c without the zero terms.
template <int A>
struct PlaneRotation {
  static constexpr int i1 = (A + 1) % 3;
  static constexpr int i2 = (A + 2) % 3;
  double c, s;
  explicit PLUME_INLINE PlaneRotation(const Mat3& E) : c(E(i1, i1)), s(E(i1, i2)) {}
  template <int k, class T>
  PLUME_INLINE T col(T x0, T x1, T x2) const {
    const T x[3] = {x0, x1, x2};
    if constexpr (k == A) {
      return x[A];
    } else if constexpr (k == i1) {
      return c * x[i1] - s * x[i2];
    } else {
      return s * x[i1] + c * x[i2];
    }
  }
};

/// The identity rotation (a prismatic joint along an axis with the identity
/// tree rotation: Xup is a translation).
struct NoRotation {
  template <int k, class T>
  PLUME_INLINE T col(T x0, T x1, T x2) const {
    if constexpr (k == 0) {
      return x0;
    } else if constexpr (k == 1) {
      return x1;
    } else {
      return x2;
    }
  }
};

/// Two adjacent doubles as one value (GCC and clang vector extension: SSE2
/// registers on x86-64, plain pairs elsewhere).
using Pair = double __attribute__((vector_size(16)));

/// Fᵀ columns c0..c1 (inclusive) of the row-major 6×nv block F ← Xᵀ F, two
/// columns per step.
template <class Rot>
PLUME_INLINE void columns_up(const Rot& R, const Vec3& rv, double* __restrict F, int nv, int c0, int c1) {
  const double r[3] = {rv[0], rv[1], rv[2]};
  int c = c0;
  for (; c < c1; c += 2) {
    Pair f[6];
    for (int m = 0; m < 6; ++m) std::memcpy(&f[m], F + m * nv + c, sizeof(Pair));
    force_up_by(R, r, f);
    for (int m = 0; m < 6; ++m) std::memcpy(F + m * nv + c, &f[m], sizeof(Pair));
  }
  if (c == c1) {
    double f[6];
    for (int m = 0; m < 6; ++m) f[m] = F[m * nv + c];
    force_up_by(R, r, f);
    for (int m = 0; m < 6; ++m) F[m * nv + c] = f[m];
  }
}

/// fn(R) with R the cheapest rotation policy of joint j's Xup rotation.
template <class Fn>
PLUME_INLINE void with_up_rotation(const Joint& j, const Mat3& E, Fn&& fn) {
  if (j.tree_rotation_identity) {
    switch (j.kind) {
      case JointKind::RevoluteX: fn(PlaneRotation<0>(E)); return;
      case JointKind::RevoluteY: fn(PlaneRotation<1>(E)); return;
      case JointKind::RevoluteZ: fn(PlaneRotation<2>(E)); return;
      case JointKind::PrismaticX:
      case JointKind::PrismaticY:
      case JointKind::PrismaticZ: fn(NoRotation{}); return;
      default: break;
    }
  }
  with_rotation(j, E, fn);
}

/// H(l, c) = H(c, l) = S_lᵀ F_c for every dof l of joint j and the columns
/// c = c0..c1 of the row-major 6×nv block F.
PLUME_INLINE void project_columns(const Joint& j, const double* S, const double* F, double* H, int nv, int c0,
                                  int c1) {
  const int l = j.v_index;
  auto row = [&](int m, int dof) PLUME_LAMBDA_INLINE {
    const double* Fm = F + m * nv;
    double* Hrow = H + dof;        // H(dof, c) at dof + nv c
    double* Hcol = H + nv * dof;   // H(c, dof) at c + nv dof
    for (int c = c0; c <= c1; ++c) {
      Hrow[nv * c] = Fm[c];
      Hcol[c] = Fm[c];
    }
  };
  switch (j.kind) {
    case JointKind::RevoluteX: row(0, l); return;
    case JointKind::RevoluteY: row(1, l); return;
    case JointKind::RevoluteZ: row(2, l); return;
    case JointKind::PrismaticX: row(3, l); return;
    case JointKind::PrismaticY: row(4, l); return;
    case JointKind::PrismaticZ: row(5, l); return;
    case JointKind::FreeFlyer:
      for (int m = 0; m < 6; ++m) row(m, l + m);
      return;
    default:
      for (int m = l; m < l + j.nv; ++m) {
        for (int c = c0; c <= c1; ++c) {
          double f[6];
          for (int k = 0; k < 6; ++k) f[k] = F[k * nv + c];
          const double x = dot6(S + 6 * m, f);
          H[m + nv * c] = x;
          H[c + nv * m] = x;
        }
      }
      return;
  }
}

/// H(l, k) = H(k, l) = S_lᵀ f for every dof l of joint j (S in body coordinates).
PLUME_INLINE void project(const Joint& j, const double* S, const double* f, double* H, int nv, int k) {
  const int l = j.v_index;
  switch (j.kind) {
    case JointKind::RevoluteX:
      H[l + nv * k] = f[0];
      H[k + nv * l] = f[0];
      return;
    case JointKind::RevoluteY:
      H[l + nv * k] = f[1];
      H[k + nv * l] = f[1];
      return;
    case JointKind::RevoluteZ:
      H[l + nv * k] = f[2];
      H[k + nv * l] = f[2];
      return;
    case JointKind::PrismaticX:
      H[l + nv * k] = f[3];
      H[k + nv * l] = f[3];
      return;
    case JointKind::PrismaticY:
      H[l + nv * k] = f[4];
      H[k + nv * l] = f[4];
      return;
    case JointKind::PrismaticZ:
      H[l + nv * k] = f[5];
      H[k + nv * l] = f[5];
      return;
    case JointKind::FreeFlyer:
      for (int m = 0; m < 6; ++m) {
        H[l + m + nv * k] = f[m];
        H[k + nv * (l + m)] = f[m];
      }
      return;
    default:
      for (int m = l; m < l + j.nv; ++m) {
        const double x = dot6(S + 6 * m, f);
        H[m + nv * k] = x;
        H[k + nv * m] = x;
      }
      return;
  }
}

/// f = Ic S for S = [e_A; 0]: [Ī e_A; e_A × h] (no products).
template <int A>
PLUME_INLINE void revolute_force(const RigidInertia& Y, double* f) {
  constexpr int i1 = (A + 1) % 3;
  constexpr int i2 = (A + 2) % 3;
  const Vec3& h = Y.h();
  for (int r = 0; r < 3; ++r) f[r] = Y.Ibar()(r, A);
  f[3 + A] = 0.0;
  f[3 + i1] = -h[i2];
  f[3 + i2] = h[i1];
}

/// f = Ic S for S = [0; e_A]: [h × e_A; m e_A] (no products).
template <int A>
PLUME_INLINE void slider_force(const RigidInertia& Y, double* f) {
  constexpr int i1 = (A + 1) % 3;
  constexpr int i2 = (A + 2) % 3;
  const Vec3& h = Y.h();
  f[A] = 0.0;
  f[i1] = h[i2];
  f[i2] = -h[i1];
  f[3] = 0.0;
  f[4] = 0.0;
  f[5] = 0.0;
  f[3 + A] = Y.mass();
}

/// CRBA, with the placements X0 written in the forward pass when Placements.
// H's diagonal block of a free-flyer on the world: S = 1, so it is
// Ic = [Ī h×; h×ᵀ m1] itself. B points at H(v0, v0). Out of line: it runs
// once per free-floating tree, and inlined into crba_passes, clang computed
// its strided offsets ahead of the backward loop on every call (about 90
// instructions, on models without a free-flyer too).
__attribute__((noinline)) void root_free_flyer_block(const RigidInertia& Y, double* B, int nv) {
  const Mat3& I = Y.Ibar();
  const Vec3& h = Y.h();
  const double hx[3][3] = {{0.0, -h[2], h[1]}, {h[2], 0.0, -h[0]}, {-h[1], h[0], 0.0}};
  for (int b = 0; b < 3; ++b) {
    for (int a = 0; a < 3; ++a) {
      B[a + nv * b] = I(a, b);
      B[a + nv * (3 + b)] = hx[a][b];
      B[3 + b + nv * a] = hx[a][b];
      B[3 + a + nv * (3 + b)] = a == b ? Y.mass() : 0.0;
    }
  }
}

// f = Ic S_k for dof k of joint j (first dof v0), and H(l, k) = H(k, l) for
// the dofs l ≤ k of the joint.
template <int A>
PLUME_INLINE void revolute_column(const RigidInertia& Y, double* f, double& Hkk) {
  revolute_force<A>(Y, f);
  Hkk = f[A];
}
template <int A>
PLUME_INLINE void slider_column(const RigidInertia& Y, double* f, double& Hkk) {
  slider_force<A>(Y, f);
  Hkk = f[3 + A];
}

PLUME_INLINE void own_column(const Joint& j, const RigidInertia& Y, const double* S, int v0, int k, double* H, int nv,
                             double* f) {
  double& Hkk = H[k + nv * k];
  switch (j.kind) {
    case JointKind::RevoluteX: revolute_column<0>(Y, f, Hkk); break;
    case JointKind::RevoluteY: revolute_column<1>(Y, f, Hkk); break;
    case JointKind::RevoluteZ: revolute_column<2>(Y, f, Hkk); break;
    case JointKind::PrismaticX: slider_column<0>(Y, f, Hkk); break;
    case JointKind::PrismaticY: slider_column<1>(Y, f, Hkk); break;
    case JointKind::PrismaticZ: slider_column<2>(Y, f, Hkk); break;
    default:
      detail::inertia_times(Y, S + 6 * k, f);
      for (int l = v0; l <= k; ++l) {
        const double x = dot6(S + 6 * l, f);
        H[l + nv * k] = x;
        H[k + nv * l] = x;
      }
      break;
  }
}

// Ic[p] = B + X_upᵀ Ic_i X_up (B: Ic[p] itself, or body p's own inertia when
// Ic[p] has not been written yet), by the cheapest form the joint allows.
PLUME_INLINE void add_to_parent(const Joint& j, const RigidInertia& Y, const Transform& X, const RigidInertia& B,
                                std::vector<RigidInertia>& Ic, int p) {
  if (is_straight_slider(j)) {
    add_translated(Y, X.r(), B, Ic[p]);
  } else if (is_plane_revolute(j)) {
    switch (j.kind) {
      case JointKind::RevoluteX: add_plane_transformed<0>(Y, X, B, Ic[p]); break;
      case JointKind::RevoluteY: add_plane_transformed<1>(Y, X, B, Ic[p]); break;
      default: add_plane_transformed<2>(Y, X, B, Ic[p]); break;
    }
  } else {
    with_rotation(j, X.E(), [&](const auto& R) PLUME_LAMBDA_INLINE { add_transformed(Y, R, X.r(), B, Ic[p]); });
  }
}

template <bool Placements>
PLUME_FLATTEN void crba_passes(const Model& model, Data& data, const VecRef& q) {
  const int nb = model.nbodies();
  // The tree, the joints and the bodies through plain arrays (the Model
  // accessors check every index).
  const int* parent = model.parents().data();
  const Joint* joint = &model.joint(0);
  const Transform* Xtree = &model.Xtree(0);
  Transform* Xup = data.Xup.data();
  const RigidInertia* inertia = &model.inertia(0);
  [[maybe_unused]] Transform* X0 = data.X0.data();
  // Sines and cosines of the axis-aligned revolute joints first, in a loop of
  // their own: the pass below then makes no calls (a call spills every live
  // vector register).
  double* sc = data.qsc.data();
  detail::revolute_sin_cos(model, q.data(), sc);
  // Forward: Xup, X0 (the placements, for the library's callers that read
  // them next; Placements only), and Ic = the body's inertia.
  for (int i = 1; i < nb; ++i) {
    const Joint& j = joint[i];
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      if constexpr (detail::is_revolute_aligned<K>) {
        if (j.tree_rotation_identity) {
          plane_position<axis_of<K>>(Xtree[i], sc[2 * i], sc[2 * i + 1], Xup[i]);
        } else {
          K::position_sc(Xtree[i], sc[2 * i], sc[2 * i + 1], Xup[i]);
        }
      } else {
        K::position(j, Xtree[i], q.data() + j.q_index, Xup[i], detail::S_cols(data.S, j));
      }
      if constexpr (Placements) {
        const int p = parent[i];
        if (p > 0) {
          const Transform& Xu = Xup[i];
          const Transform& X0p = X0[p];
          K::world_rotation(j, Xu, X0p.E(), X0[i].E());
          const Mat3& Ep = X0p.E();
          // Xup.r (the tree offset itself for a revolute joint: read from the model).
          const Vec3& ru = detail::is_revolute_aligned<K> ? Xtree[i].r() : Xu.r();
          double* r0 = X0[i].r().data();
          for (int c = 0; c < 3; ++c) {
            r0[c] = X0p.r()[c] + detail::sum_l(Ep(0, c) * ru[0], Ep(1, c) * ru[1], Ep(2, c) * ru[2]);
          }
        } else if constexpr (detail::is_revolute_aligned<K>) {
          if (j.tree_rotation_identity) {
            plane_position<axis_of<K>>(Xtree[i], sc[2 * i], sc[2 * i + 1], X0[i]);
          } else {
            K::position_sc(Xtree[i], sc[2 * i], sc[2 * i + 1], X0[i]);
          }
        } else {
          K::position(j, Xtree[i], q.data() + j.q_index, X0[i], detail::S_cols(data.S, j));
        }
      }
    });
    // Ic = the body's inertia here only without the depth-first numbering;
    // with it, the backward pass writes Ic[i] = inertia + the first child's
    // share at once (a leaf's is copied there).
    if (!model.dofs_depth_first()) data.Ic[i] = inertia[i];
  }
  // Backward.
  const int nv = model.nv();
  double* H = data.H.data();
  const double* S = data.S.data();
  // Every body a one-dof body on the world without children (a pendulum, a
  // row of sliders): H is diagonal, H(k, k) = S_kᵀ I_k S_k, and the backward
  // loop's set-up (clang: about 40 instructions before its first body) is
  // not needed.
  if (detail::all_root_leaves(model)) {
    for (int i = 1; i < nb; ++i) {
      const Joint& j = joint[i];
      data.Ic[i] = inertia[i];
      double f[6];
      own_column(j, inertia[i], S, j.v_index, j.v_index, H, nv, f);
    }
    return;
  }
  if (model.dofs_depth_first()) {
    // Body i's subtree holds the dofs v_i..e_i, contiguous. Its columns
    // F_c = X_{i←b}ᵀ Ic_b S_c (c a dof of body b in the subtree) stand in
    // Fc in body i's coordinates: S_iᵀ F gives H's row block of joint i, and
    // the whole range moves to the parent's coordinates at once (the same
    // products per column as carrying each column up alone, with one
    // dispatch per body and two columns per step).
    double* F = data.Fc.data();
    for (int i = nb - 1; i > 0; --i) {
      const Joint& j = joint[i];
      const int p = parent[i];
      const int v0 = j.v_index;
      const int v1 = v0 + j.nv - 1;
      const int e = model.dof_subtree_end(v0);
      const RigidInertia& Y = data.Ic[i];
      if (e == v1) data.Ic[i] = inertia[i];  // a leaf
      // Ic[p] is written first by p's child with the highest index, the one
      // whose subtree ends where p's does: the base is p's own inertia then.
      auto parent_base = [&]() PLUME_LAMBDA_INLINE -> const RigidInertia& {
        return model.dof_subtree_end(joint[p].v_index) == e ? inertia[p] : data.Ic[p];
      };
      if (j.kind == JointKind::FreeFlyer && p == 0) {
        root_free_flyer_block(Y, H + v0 * (nv + 1), nv);
        if (e > v1) project_columns(j, S, F, H, nv, v1 + 1, e);
        continue;
      }
      if (v1 == v0) {
        // One dof (every joint of an arm): no loop over the joint's columns
        // (GCC set up six strided row pointers for it, 40 instructions a body).
        double f[6];
        own_column(j, Y, S, v0, v0, H, nv, f);
        double* Fk = F + v0;
        if (e > v1) project_columns(j, S, F, H, nv, v1 + 1, e);
        if (p == 0) continue;  // (column v0 of F is not read again)
        // An odd number of columns: the joint's own moves up alone, from the
        // registers it was computed in, and the rest in pairs (instead of
        // through F and back for columns_up's single-column pass).
        const bool alone = (e - v0) % 2 == 0;
        const Transform& X = Xup[i];
        with_up_rotation(j, X.E(), [&](const auto& R) PLUME_LAMBDA_INLINE {
          const double r[3] = {X.r()[0], X.r()[1], X.r()[2]};
          if (alone) force_up_by(R, r, f);
          for (int m = 0; m < 6; ++m) Fk[m * nv] = f[m];
          columns_up(R, X.r(), F, nv, alone ? v0 + 1 : v0, e);
        });
        add_to_parent(j, Y, X, parent_base(), data.Ic, p);
        continue;
      } else {
        for (int k = v0; k <= v1; ++k) {
          double f[6];
          own_column(j, Y, S, v0, k, H, nv, f);
          for (int m = 0; m < 6; ++m) F[m * nv + k] = f[m];
        }
      }
      if (e > v1) project_columns(j, S, F, H, nv, v1 + 1, e);
      if (p > 0) {
        const Transform& X = Xup[i];
        with_up_rotation(j, X.E(), [&](const auto& R) PLUME_LAMBDA_INLINE { columns_up(R, X.r(), F, nv, v0, e); });
        add_to_parent(j, Y, X, parent_base(), data.Ic, p);
      }
    }
    return;
  }
  // Dofs not numbered depth first: each column carried up its support chain.
  for (int i = nb - 1; i > 0; --i) {
    const Joint& j = joint[i];
    const RigidInertia& Y = data.Ic[i];
    const int p = parent[i];
    if (j.kind == JointKind::FreeFlyer && p == 0) {
      root_free_flyer_block(Y, H + j.v_index * (nv + 1), nv);
      continue;
    }
    for (int k = j.v_index; k < j.v_index + j.nv; ++k) {
      double f[6];
      own_column(j, Y, S, j.v_index, k, H, nv, f);
      // Up the support chain.
      for (int b = i, a = p; a > 0; b = a, a = parent[a]) {
        force_up(joint[b], Xup[b], f);
        project(joint[a], S, f, H, nv, k);
      }
    }
    if (p > 0) add_to_parent(j, Y, Xup[i], data.Ic[p], data.Ic, p);
  }
}

}  // namespace

namespace unchecked {

const MatrixX& crba(const Model& model, Data& data, const VecRef& q) {
  crba_passes<false>(model, data, q);
  return data.H;
}

}  // namespace unchecked

namespace detail {

const MatrixX& crba_placements(const Model& model, Data& data, const VecRef& q) {
  crba_passes<true>(model, data, q);
  return data.H;
}

}  // namespace detail

const MatrixX& crba(const Model& model, Data& data, const VecRef& q) {
  detail::check_state(model, data, q);
  crba_passes<false>(model, data, q);  // not through unchecked::crba (GCC kept that call)
  return data.H;
}

}  // namespace plume
