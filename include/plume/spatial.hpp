#pragma once
/// @file
/// Spatial vector algebra in Plücker coordinates (Featherstone, RBDA ch. 2).
///
/// Glossary and conventions used throughout plume:
/// - Spatial vectors are 6-D with the **angular part first**: a motion is
///   `[ω; v]`, a force is `[n; f]` (moment about the frame origin, then force).
/// - `Motion` and `Force` are distinct types: a motion cannot be passed where a
///   force belongs. `m.dot(f)` is the only product between them (power).
/// - `Transform` is a Plücker coordinate transform `X = B_X_A` from frame A to
///   frame B, stored as the rotation `E` (= B_R_A) and the position `r` of B's
///   origin expressed in A coordinates (RBDA eq. 2.24):
///   `X = [E 0; -E r× E]`, `X* = X⁻ᵀ = [E -E r×; 0 E]`.
/// - `RigidInertia` stores mass m, first moment h = m c and the rotational
///   inertia Ī about the frame origin: `I = [Ī h×; h×ᵀ m1]` (RBDA eq. 2.63).
/// - `crm(v)` is the motion cross-product matrix `v×`, `crf(v) = -crm(v)ᵀ` the
///   force cross-product matrix `v×*` (RBDA eqs. 2.31–2.32).
///
/// Everything here is inline and allocation-free: it sits on the hot path of
/// every dynamics algorithm.

#include <Eigen/Core>
#include <Eigen/Geometry>

/// Forces inlining of the small spatial-algebra helpers: left out of line,
/// GCC calls them through the hot loops of every algorithm.
///
/// Sanitizer builds define PLUME_PLAIN_INLINING: the forced inlining (this
/// macro, PLUME_FLATTEN and the kernels' PLUME_LAMBDA_INLINE) then leaves the
/// choice to the compiler. Forced into one function, the instrumented joint
/// kernels took clang 14 about 19 minutes to compile (src/algorithms/crba.cpp).
#if defined(__GNUC__) && !defined(PLUME_PLAIN_INLINING)
#define PLUME_INLINE inline __attribute__((always_inline))
#else
#define PLUME_INLINE inline
#endif

/// Marks an algorithm's body so that everything it calls is inlined into it
/// (GCC otherwise stops inlining Eigen's small fixed-size kernels inside
/// large loops and calls them out of line).
#if defined(__GNUC__) && !defined(PLUME_PLAIN_INLINING)
#define PLUME_FLATTEN __attribute__((flatten))
#else
#define PLUME_FLATTEN
#endif

namespace plume {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using VectorX = Eigen::VectorXd;
using MatrixX = Eigen::MatrixXd;
using Matrix6X = Eigen::Matrix<double, 6, Eigen::Dynamic>;
using Matrix3X = Eigen::Matrix<double, 3, Eigen::Dynamic>;
using Matrix2X = Eigen::Matrix<double, 2, Eigen::Dynamic>;

/// The 3×3 cross-product matrix: skew(a) * b == a.cross(b).
PLUME_INLINE Mat3 skew(const Vec3& a) {
  Mat3 m;
  m << 0.0, -a.z(), a.y(),  //
      a.z(), 0.0, -a.x(),   //
      -a.y(), a.x(), 0.0;
  return m;
}

class Force;

/// A spatial motion vector `[ω; v]` (velocity, acceleration, motion subspace
/// column), expressed in some frame's coordinates.
class Motion {
 public:
  PLUME_INLINE Motion() : data_(Vec6::Zero()) {}
  PLUME_INLINE Motion(const Vec3& angular, const Vec3& linear) {
    data_.head<3>() = angular;
    data_.tail<3>() = linear;
  }
  PLUME_INLINE explicit Motion(const Vec6& v) : data_(v) {}
  static PLUME_INLINE Motion Zero() { return Motion(); }

  /// The six coordinates `[ω; v]`.
  PLUME_INLINE const Vec6& vector() const { return data_; }
  PLUME_INLINE Vec6& vector() { return data_; }
  PLUME_INLINE Vec3 angular() const { return data_.head<3>(); }
  PLUME_INLINE Vec3 linear() const { return data_.tail<3>(); }
  PLUME_INLINE Eigen::VectorBlock<Vec6, 3> angular_ref() { return data_.head<3>(); }
  PLUME_INLINE Eigen::VectorBlock<Vec6, 3> linear_ref() { return data_.tail<3>(); }

  PLUME_INLINE Motion operator+(const Motion& o) const { return Motion(Vec6(data_ + o.data_)); }
  PLUME_INLINE Motion operator-(const Motion& o) const { return Motion(Vec6(data_ - o.data_)); }
  PLUME_INLINE Motion operator-() const { return Motion(Vec6(-data_)); }
  PLUME_INLINE Motion operator*(double s) const { return Motion(Vec6(data_ * s)); }
  PLUME_INLINE Motion& operator+=(const Motion& o) {
    data_ += o.data_;
    return *this;
  }
  PLUME_INLINE Motion& operator-=(const Motion& o) {
    data_ -= o.data_;
    return *this;
  }

  /// Motion cross product `this × m` (RBDA eq. 2.31).
  PLUME_INLINE Motion cross(const Motion& m) const {
    const Vec3 w = angular();
    const Vec3 v = linear();
    return Motion(w.cross(m.angular()), w.cross(m.linear()) + v.cross(m.angular()));
  }
  /// Force cross product `this ×* f` (RBDA eq. 2.32).
  inline Force cross(const Force& f) const;
  /// Power `this · f`.
  inline double dot(const Force& f) const;

 private:
  Vec6 data_;
};

PLUME_INLINE Motion operator*(double s, const Motion& m) { return m * s; }

/// A spatial force vector `[n; f]` (moment about the frame origin, force),
/// expressed in some frame's coordinates. Momentum is a Force too.
class Force {
 public:
  PLUME_INLINE Force() : data_(Vec6::Zero()) {}
  PLUME_INLINE Force(const Vec3& angular, const Vec3& linear) {
    data_.head<3>() = angular;
    data_.tail<3>() = linear;
  }
  PLUME_INLINE explicit Force(const Vec6& f) : data_(f) {}
  static PLUME_INLINE Force Zero() { return Force(); }

  PLUME_INLINE const Vec6& vector() const { return data_; }
  PLUME_INLINE Vec6& vector() { return data_; }
  PLUME_INLINE Vec3 angular() const { return data_.head<3>(); }
  PLUME_INLINE Vec3 linear() const { return data_.tail<3>(); }
  PLUME_INLINE Eigen::VectorBlock<Vec6, 3> angular_ref() { return data_.head<3>(); }
  PLUME_INLINE Eigen::VectorBlock<Vec6, 3> linear_ref() { return data_.tail<3>(); }

  PLUME_INLINE Force operator+(const Force& o) const { return Force(Vec6(data_ + o.data_)); }
  PLUME_INLINE Force operator-(const Force& o) const { return Force(Vec6(data_ - o.data_)); }
  PLUME_INLINE Force operator-() const { return Force(Vec6(-data_)); }
  PLUME_INLINE Force operator*(double s) const { return Force(Vec6(data_ * s)); }
  PLUME_INLINE Force& operator+=(const Force& o) {
    data_ += o.data_;
    return *this;
  }
  PLUME_INLINE Force& operator-=(const Force& o) {
    data_ -= o.data_;
    return *this;
  }
  PLUME_INLINE double dot(const Motion& m) const { return data_.dot(m.vector()); }

 private:
  Vec6 data_;
};

PLUME_INLINE Force operator*(double s, const Force& f) { return f * s; }

PLUME_INLINE Force Motion::cross(const Force& f) const {
  const Vec3 w = angular();
  const Vec3 v = linear();
  return Force(w.cross(f.angular()) + v.cross(f.linear()), w.cross(f.linear()));
}

PLUME_INLINE double Motion::dot(const Force& f) const { return data_.dot(f.vector()); }

/// The 6×6 motion cross-product matrix `v×` (RBDA eq. 2.31).
PLUME_INLINE Mat6 crm(const Motion& m) {
  Mat6 out;
  const Mat3 w = skew(m.angular());
  out << w, Mat3::Zero(), skew(m.linear()), w;
  return out;
}

/// The 6×6 force cross-product matrix `v×* = -(v×)ᵀ` (RBDA eq. 2.32).
PLUME_INLINE Mat6 crf(const Motion& m) { return -crm(m).transpose(); }

class RigidInertia;

/// Plücker transform `X = B_X_A` (from A coordinates to B coordinates).
///
/// Stored as `E = B_R_A` and `r`, the position of B's origin in A coordinates
/// (RBDA §2.8). If a frame B has orientation R and origin p relative to A (a
/// "pose"), its transform is `X = Transform(Rᵀ, p)`; see from_pose().
class Transform {
 public:
  Transform() : E_(Mat3::Identity()), r_(Vec3::Zero()) {}
  Transform(const Mat3& E, const Vec3& r) : E_(E), r_(r) {}
  static PLUME_INLINE Transform Identity() { return Transform(); }
  /// The transform to a frame with orientation R and origin p relative to A.
  static PLUME_INLINE Transform from_pose(const Mat3& R, const Vec3& p) { return Transform(R.transpose(), p); }
  /// A pure translation of the origin by p (RBDA xlt).
  static PLUME_INLINE Transform translation(const Vec3& p) { return Transform(Mat3::Identity(), p); }
  /// A pure rotation: the new frame is A rotated by R (E = Rᵀ).
  static PLUME_INLINE Transform rotation(const Mat3& R) { return Transform(R.transpose(), Vec3::Zero()); }

  /// `E = B_R_A`: rotates A coordinates into B coordinates.
  PLUME_INLINE const Mat3& E() const { return E_; }
  /// Position of B's origin in A coordinates.
  PLUME_INLINE const Vec3& r() const { return r_; }
  PLUME_INLINE Mat3& E() { return E_; }
  PLUME_INLINE Vec3& r() { return r_; }
  /// Orientation of B relative to A (`A_R_B = Eᵀ`).
  PLUME_INLINE Mat3 pose_rotation() const { return E_.transpose(); }
  /// Origin of B in A coordinates (the same as r()).
  PLUME_INLINE const Vec3& pose_translation() const { return r_; }

  /// `X m`: motion from A to B coordinates.
  PLUME_INLINE Motion apply(const Motion& m) const {
    const Vec3 w = m.angular();
    return Motion(E_ * w, E_ * (m.linear() - r_.cross(w)));
  }
  /// `X* f`: force from A to B coordinates.
  PLUME_INLINE Force apply(const Force& f) const {
    const Vec3 fl = f.linear();
    return Force(E_ * (f.angular() - r_.cross(fl)), E_ * fl);
  }
  /// `X⁻¹ m`: motion from B to A coordinates.
  PLUME_INLINE Motion apply_inverse(const Motion& m) const {
    const Vec3 w = E_.transpose() * m.angular();
    return Motion(w, E_.transpose() * m.linear() + r_.cross(w));
  }
  /// `Xᵀ f = (X*)⁻¹ f`: force from B to A coordinates.
  PLUME_INLINE Force apply_transpose(const Force& f) const {
    const Vec3 fl = E_.transpose() * f.linear();
    return Force(E_.transpose() * f.angular() + r_.cross(fl), fl);
  }
  /// `X* I X⁻¹`: a rigid inertia from A to B coordinates.
  inline RigidInertia apply(const RigidInertia& I) const;
  /// `Xᵀ I X`: a rigid inertia from B to A coordinates.
  inline RigidInertia apply_transpose(const RigidInertia& I) const;

  /// A point given in A coordinates, expressed in B coordinates.
  PLUME_INLINE Vec3 transform_point(const Vec3& p) const { return E_ * (p - r_); }
  /// A point given in B coordinates, expressed in A coordinates.
  PLUME_INLINE Vec3 inverse_transform_point(const Vec3& p) const { return E_.transpose() * p + r_; }

  /// Composition: `(X_CB * X_BA) = X_CA`.
  PLUME_INLINE Transform operator*(const Transform& X_BA) const {
    return Transform(E_ * X_BA.E_, X_BA.r_ + X_BA.E_.transpose() * r_);
  }
  PLUME_INLINE Transform inverse() const { return Transform(E_.transpose(), -(E_ * r_)); }

  /// The 6×6 motion transform `[E 0; -E r× E]`.
  PLUME_INLINE Mat6 to_matrix() const {
    Mat6 X;
    X << E_, Mat3::Zero(), -E_ * skew(r_), E_;
    return X;
  }
  /// The 6×6 force transform `X* = [E -E r×; 0 E]`.
  PLUME_INLINE Mat6 to_force_matrix() const {
    Mat6 X;
    X << E_, -E_ * skew(r_), Mat3::Zero(), E_;
    return X;
  }

  PLUME_INLINE bool is_approx(const Transform& o, double prec = 1e-12) const {
    return ((E_ - o.E_).cwiseAbs().maxCoeff() <= prec) && (r_ - o.r_).norm() <= prec * (1.0 + r_.norm());
  }

 private:
  Mat3 E_;
  Vec3 r_;
};

/// Featherstone's rotx/roty/rotz: the transform to a frame rotated by angle
/// θ about the x/y/z axis of the current one.
PLUME_INLINE Transform rot_x(double th) {
  return Transform::rotation(Eigen::AngleAxisd(th, Vec3::UnitX()).toRotationMatrix());
}
PLUME_INLINE Transform rot_y(double th) {
  return Transform::rotation(Eigen::AngleAxisd(th, Vec3::UnitY()).toRotationMatrix());
}
PLUME_INLINE Transform rot_z(double th) {
  return Transform::rotation(Eigen::AngleAxisd(th, Vec3::UnitZ()).toRotationMatrix());
}

/// Rigid-body inertia in some frame: mass m, first moment h = m c (c the
/// centre of mass), and rotational inertia Ī about the frame origin.
class RigidInertia {
 public:
  RigidInertia() : m_(0.0), h_(Vec3::Zero()), Ibar_(Mat3::Zero()) {}
  RigidInertia(double m, const Vec3& h, const Mat3& Ibar) : m_(m), h_(h), Ibar_(Ibar) {}
  static PLUME_INLINE RigidInertia Zero() { return RigidInertia(); }
  /// From mass, centre of mass c and the rotational inertia Ic about c (RBDA eq. 2.63).
  static PLUME_INLINE RigidInertia from_mass_com_inertia(double m, const Vec3& c, const Mat3& Ic) {
    return RigidInertia(m, m * c, Ic + m * (c.squaredNorm() * Mat3::Identity() - c * c.transpose()));
  }

  PLUME_INLINE double mass() const { return m_; }
  /// First moment of mass h = m c.
  PLUME_INLINE const Vec3& h() const { return h_; }
  /// Rotational inertia about the frame origin.
  PLUME_INLINE const Mat3& Ibar() const { return Ibar_; }
  /// The three parts, writable (for algorithms that build an inertia in place).
  PLUME_INLINE double& mass() { return m_; }
  PLUME_INLINE Vec3& h() { return h_; }
  PLUME_INLINE Mat3& Ibar() { return Ibar_; }
  /// Centre of mass (zero for a massless body).
  PLUME_INLINE Vec3 com() const { return m_ > 0.0 ? Vec3(h_ / m_) : Vec3::Zero(); }
  /// Rotational inertia about the centre of mass.
  PLUME_INLINE Mat3 inertia_about_com() const {
    if (m_ <= 0.0) return Ibar_;
    const Vec3 c = h_ / m_;
    return Ibar_ - m_ * (c.squaredNorm() * Mat3::Identity() - c * c.transpose());
  }

  /// `I v`: the momentum of a body moving with v.
  PLUME_INLINE Force operator*(const Motion& v) const {
    const Vec3 w = v.angular();
    const Vec3 lin = v.linear();
    return Force(Ibar_ * w + h_.cross(lin), m_ * lin - h_.cross(w));
  }
  PLUME_INLINE RigidInertia operator+(const RigidInertia& o) const {
    return RigidInertia(m_ + o.m_, h_ + o.h_, Ibar_ + o.Ibar_);
  }
  PLUME_INLINE RigidInertia& operator+=(const RigidInertia& o) {
    m_ += o.m_;
    h_ += o.h_;
    Ibar_ += o.Ibar_;
    return *this;
  }
  /// Kinetic energy ½ vᵀ I v.
  PLUME_INLINE double kinetic_energy(const Motion& v) const { return 0.5 * v.dot((*this) * v); }

  /// The 6×6 matrix `[Ī h×; h×ᵀ m1]`.
  PLUME_INLINE Mat6 to_matrix() const {
    Mat6 I;
    const Mat3 hx = skew(h_);
    I << Ibar_, hx, hx.transpose(), m_ * Mat3::Identity();
    return I;
  }

 private:
  double m_;
  Vec3 h_;
  Mat3 Ibar_;
};

// X* I X⁻¹ (RBDA Table 2.5): m' = m, h' = E(h − m r),
// Ī' = E(Ī + r×h× + (h − m r)×r×)Eᵀ.
PLUME_INLINE RigidInertia Transform::apply(const RigidInertia& I) const {
  const Vec3 y = I.h() - I.mass() * r_;
  const Mat3 rx = skew(r_);
  const Mat3 Z = I.Ibar() + rx * skew(I.h()) + skew(y) * rx;
  Mat3 Ibar = E_ * Z * E_.transpose();
  Ibar = 0.5 * (Ibar + Ibar.transpose()).eval();
  return RigidInertia(I.mass(), E_ * y, Ibar);
}

// Xᵀ I X: the inverse mapping, with h_A = Eᵀh + m r and
// Ī_A = EᵀĪE − r×(Eᵀh)× − (Eᵀh + m r)× r×.
PLUME_INLINE RigidInertia Transform::apply_transpose(const RigidInertia& I) const {
  const Vec3 hr = E_.transpose() * I.h();
  const Vec3 hA = hr + I.mass() * r_;
  const Mat3 rx = skew(r_);
  Mat3 Ibar = E_.transpose() * I.Ibar() * E_ - rx * skew(hr) - skew(hA) * rx;
  Ibar = 0.5 * (Ibar + Ibar.transpose()).eval();
  return RigidInertia(I.mass(), hA, Ibar);
}

}  // namespace plume
