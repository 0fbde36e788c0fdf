#pragma once
// Joint kernels: jcalc (RBDA Table 4.1) specialised per joint kind, and the
// one place where algorithms dispatch over kinds (visit_kind).
//
// Every kernel provides
//   nv                       number of velocity coordinates (compile time)
//   position(j, Xtree, q, Xup, S)   Xup = XJ(q) Xtree; S columns if they depend on q
//   has_bias, bias(S, qd)    cJ = S̊ q̇, non-zero only for the planar joint
// Constant motion subspaces are written once, by init_motion_subspace().

#include <cmath>

#include "plume/data.hpp"
#include "plume/model.hpp"

namespace plume::detail {

// Revolute about +x (A = 0), +y (1) or +z (2): E = R_A(q)ᵀ E_tree touches two rows.
template <int A>
struct RevoluteAligned {
  static constexpr int nv = 1;
  static constexpr bool has_bias = false;
  static void position(const Joint&, const Transform& Xtree, const double* q, Transform& Xup, Matrix6X&) {
    constexpr int i1 = (A + 1) % 3;
    constexpr int i2 = (A + 2) % 3;
    const double s = std::sin(q[0]);
    const double c = std::cos(q[0]);
    const Mat3& Et = Xtree.E();
    Mat3& E = Xup.E();
    E.row(A) = Et.row(A);
    E.row(i1) = c * Et.row(i1) + s * Et.row(i2);
    E.row(i2) = c * Et.row(i2) - s * Et.row(i1);
    Xup.r() = Xtree.r();
  }
  static Motion bias(const Matrix6X&, int, const double*) { return Motion(); }
};

// Revolute about any unit axis a: E = R(a, q)ᵀ E_tree (Rodrigues).
struct RevoluteAxis {
  static constexpr int nv = 1;
  static constexpr bool has_bias = false;
  static void position(const Joint& j, const Transform& Xtree, const double* q, Transform& Xup, Matrix6X&) {
    const double s = std::sin(q[0]);
    const double c = std::cos(q[0]);
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
  static Motion bias(const Matrix6X&, int, const double*) { return Motion(); }
};

// Prismatic along unit axis a: XJ = xlt(a q).
struct Prismatic {
  static constexpr int nv = 1;
  static constexpr bool has_bias = false;
  static void position(const Joint& j, const Transform& Xtree, const double* q, Transform& Xup, Matrix6X&) {
    Xup.E() = Xtree.E();
    Xup.r().noalias() = Xtree.r() + Xtree.E().transpose() * (q[0] * j.axis);
  }
  static Motion bias(const Matrix6X&, int, const double*) { return Motion(); }
};

// Planar: q = (x, y, θ); the body origin is at (x, y, 0) of the joint frame,
// rotated by θ about z; q̇ = v. S depends on θ, so cJ = S̊ q̇ = [0; −ω × v_J].
struct Planar {
  static constexpr int nv = 3;
  static constexpr bool has_bias = true;
  static void position(const Joint& j, const Transform& Xtree, const double* q, Transform& Xup, Matrix6X& S) {
    const double s = std::sin(q[2]);
    const double c = std::cos(q[2]);
    const Mat3& Et = Xtree.E();
    Mat3& E = Xup.E();
    E.row(0) = c * Et.row(0) + s * Et.row(1);
    E.row(1) = c * Et.row(1) - s * Et.row(0);
    E.row(2) = Et.row(2);
    Xup.r().noalias() = Xtree.r() + Et.transpose() * Vec3(q[0], q[1], 0.0);
    auto Sj = S.middleCols<3>(j.v_index);
    Sj.setZero();
    Sj(3, 0) = c;
    Sj(4, 0) = -s;
    Sj(3, 1) = s;
    Sj(4, 1) = c;
    Sj(2, 2) = 1.0;
  }
  static Motion bias(const Matrix6X& S, int v_index, const double* qd) {
    const double vx = S(3, v_index) * qd[0] + S(3, v_index + 1) * qd[1];
    const double vy = S(4, v_index) * qd[0] + S(4, v_index + 1) * qd[1];
    return Motion(Vec3::Zero(), Vec3(qd[2] * vy, -qd[2] * vx, 0.0));
  }
};

// Free-flyer: q = (p, quaternion x y z w), v = [ω; v] in body coordinates, S = 1.
struct FreeFlyer {
  static constexpr int nv = 6;
  static constexpr bool has_bias = false;
  static void position(const Joint&, const Transform& Xtree, const double* q, Transform& Xup, Matrix6X&) {
    const Eigen::Map<const Eigen::Quaterniond> r(q + 3);  // Eigen stores (x, y, z, w)
    const Mat3 R = r.toRotationMatrix();
    Xup.E().noalias() = R.transpose() * Xtree.E();
    Xup.r().noalias() = Xtree.r() + Xtree.E().transpose() * Eigen::Map<const Vec3>(q);
  }
  static Motion bias(const Matrix6X&, int, const double*) { return Motion(); }
};

/// Calls f(kernel) with the kernel of `kind` (a default-constructed tag whose
/// type carries the compile-time number of DoF). Does nothing for None.
template <class F>
inline void visit_kind(JointKind kind, F&& f) {
  switch (kind) {
    case JointKind::RevoluteX: f(RevoluteAligned<0>{}); return;
    case JointKind::RevoluteY: f(RevoluteAligned<1>{}); return;
    case JointKind::RevoluteZ: f(RevoluteAligned<2>{}); return;
    case JointKind::RevoluteAxis: f(RevoluteAxis{}); return;
    case JointKind::Prismatic: f(Prismatic{}); return;
    case JointKind::Planar: f(Planar{}); return;
    case JointKind::FreeFlyer: f(FreeFlyer{}); return;
    case JointKind::None: return;
  }
}

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

/// Xᵀ Ia X for a 6×6 articulated inertia Ia given in B coordinates and
/// X = B_X_A (result in A coordinates). With Ia = [A B; Bᵀ C] rotated by E
/// first, then shifted by r: [A' − B'r× + r×B'ᵀ − r×C'r×, B' + r×C'; ·, C'].
inline Mat6 transform_articulated(const Transform& X, const Mat6& Ia) {
  const Mat3& E = X.E();
  const Mat3 A = E.transpose() * Ia.topLeftCorner<3, 3>() * E;
  const Mat3 B = E.transpose() * Ia.topRightCorner<3, 3>() * E;
  const Mat3 C = E.transpose() * Ia.bottomRightCorner<3, 3>() * E;
  const Mat3 rx = skew(X.r());
  const Mat3 rxC = rx * C;
  const Mat3 Bn = B + rxC;
  Mat6 out;
  out.topLeftCorner<3, 3>() = A - B * rx + rx * B.transpose() - rxC * rx;
  out.topRightCorner<3, 3>() = Bn;
  out.bottomLeftCorner<3, 3>() = Bn.transpose();
  out.bottomRightCorner<3, 3>() = C;
  return out;
}

}  // namespace plume::detail
