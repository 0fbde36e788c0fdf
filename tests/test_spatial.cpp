// Spatial algebra against its definitions (RBDA ch. 2).
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <type_traits>

#include "plume/spatial.hpp"
#include "test_utils.hpp"

using namespace plume;
using plume::test::random_inertia;
using plume::test::random_rotation;
using plume::test::random_vec3;

namespace {

Motion random_motion(std::mt19937_64& g) { return Motion(random_vec3(g), random_vec3(g)); }
Force random_force(std::mt19937_64& g) { return Force(random_vec3(g), random_vec3(g)); }
Transform random_transform(std::mt19937_64& g) { return Transform(random_rotation(g), random_vec3(g, 2.0)); }

constexpr double kTol = 1e-12;

// Detects whether a.dot(b) compiles.
template <class A, class B, class = void>
struct has_dot : std::false_type {};
template <class A, class B>
struct has_dot<A, B, std::void_t<decltype(std::declval<A>().dot(std::declval<B>()))>> : std::true_type {};

template <class A, class B, class = void>
struct can_add : std::false_type {};
template <class A, class B>
struct can_add<A, B, std::void_t<decltype(std::declval<A>() + std::declval<B>())>> : std::true_type {};

}  // namespace

TEST(Spatial, MotionAndForceAreDistinctTypes) {
  static_assert(!std::is_convertible_v<Motion, Force>, "a motion must not convert to a force");
  static_assert(!std::is_convertible_v<Force, Motion>, "a force must not convert to a motion");
  static_assert(!std::is_convertible_v<Vec6, Motion>, "raw vectors need an explicit constructor");
  static_assert(has_dot<Motion, Force>::value && has_dot<Force, Motion>::value);
  static_assert(!has_dot<Motion, Motion>::value, "motion·motion is not a physical quantity");
  static_assert(!has_dot<Force, Force>::value, "force·force is not a physical quantity");
  static_assert(!can_add<Motion, Force>::value, "a motion cannot be added to a force");
  // Transform::apply picks the right rule by type.
  std::mt19937_64 g(3);
  Transform X(random_rotation(g), Vec3(1, 2, 3));
  Motion m(Vec3(1, 0, 0), Vec3(0, 0, 0));
  Force f(Vec3(1, 0, 0), Vec3(0, 0, 0));
  EXPECT_FALSE(X.apply(m).vector().isApprox(X.apply(f).vector()));
}

TEST(Spatial, CrossProductsMatchTheirMatrices) {
  std::mt19937_64 g(1);
  for (int k = 0; k < 50; ++k) {
    const Motion v = random_motion(g), m = random_motion(g);
    const Force f = random_force(g);
    EXPECT_TRUE(v.cross(m).vector().isApprox(crm(v) * m.vector(), kTol));
    EXPECT_TRUE(v.cross(f).vector().isApprox(crf(v) * f.vector(), kTol));
    // v ×* f = −(v×)ᵀ f
    EXPECT_TRUE(v.cross(f).vector().isApprox(-crm(v).transpose() * f.vector(), kTol));
    // v × v = 0, and (v × m)·f = −m·(v ×* f) (duality of the two products)
    EXPECT_LT(v.cross(v).vector().norm(), kTol);
    EXPECT_NEAR(v.cross(m).dot(f), -m.dot(v.cross(f)), kTol);
  }
}

TEST(Spatial, TransformMatchesPluckerMatrices) {
  std::mt19937_64 g(2);
  for (int k = 0; k < 50; ++k) {
    const Transform X = random_transform(g);
    const Motion m = random_motion(g);
    const Force f = random_force(g);
    const Mat6 Xm = X.to_matrix();
    const Mat6 Xf = X.to_force_matrix();
    // X* = X⁻ᵀ
    EXPECT_TRUE(Xf.isApprox(Xm.inverse().transpose(), 1e-10));
    EXPECT_TRUE(X.apply(m).vector().isApprox(Xm * m.vector(), kTol));
    EXPECT_TRUE(X.apply(f).vector().isApprox(Xf * f.vector(), kTol));
    EXPECT_TRUE(X.apply_inverse(m).vector().isApprox(Xm.inverse() * m.vector(), 1e-10));
    EXPECT_TRUE(X.apply_transpose(f).vector().isApprox(Xm.transpose() * f.vector(), kTol));
    // Power is invariant: (X m)·(X* f) = m·f
    EXPECT_NEAR(X.apply(m).dot(X.apply(f)), m.dot(f), 1e-10);
    // Composition and inverse
    const Transform Y = random_transform(g);
    EXPECT_TRUE((Y * X).to_matrix().isApprox(Y.to_matrix() * Xm, 1e-10));
    EXPECT_TRUE((X * X.inverse()).is_approx(Transform::Identity(), 1e-12));
    // Point transforms are consistent with the pose: p_B = E (p_A − r)
    const Vec3 p = random_vec3(g);
    EXPECT_TRUE(X.inverse_transform_point(X.transform_point(p)).isApprox(p, kTol));
    // (X m) × (X m') = X (m × m')
    const Motion m2 = random_motion(g);
    EXPECT_TRUE(X.apply(m).cross(X.apply(m2)).vector().isApprox(X.apply(m.cross(m2)).vector(), 1e-10));
  }
}

TEST(Spatial, RotationHelpersFollowFeatherstone) {
  // rotx(θ) is the coordinate transform to a frame rotated by θ about x:
  // E = [[1,0,0],[0,c,s],[0,−s,c]] (RBDA eq. 2.x).
  const double th = 0.3, c = std::cos(th), s = std::sin(th);
  Mat3 E;
  E << 1, 0, 0, 0, c, s, 0, -s, c;
  EXPECT_TRUE(rot_x(th).E().isApprox(E, kTol));
  // A frame translated by p sees the world origin at −p.
  const Transform X = Transform::translation(Vec3(1, 2, 3));
  EXPECT_TRUE(X.transform_point(Vec3::Zero()).isApprox(Vec3(-1, -2, -3), kTol));
}

TEST(Spatial, RigidInertiaMatchesItsMatrix) {
  std::mt19937_64 g(3);
  for (int k = 0; k < 50; ++k) {
    const RigidInertia I = random_inertia(g);
    const Motion v = random_motion(g);
    const Mat6 M = I.to_matrix();
    EXPECT_TRUE((I * v).vector().isApprox(M * v.vector(), kTol));
    EXPECT_TRUE(M.isApprox(M.transpose(), kTol));
    EXPECT_GT(Eigen::SelfAdjointEigenSolver<Mat6>(M).eigenvalues().minCoeff(), 0.0);
    // Mass, COM and rotational inertia about the COM round-trip.
    const RigidInertia J = RigidInertia::from_mass_com_inertia(I.mass(), I.com(), I.inertia_about_com());
    EXPECT_TRUE(J.to_matrix().isApprox(M, 1e-10));
  }
}

TEST(Spatial, InertiaTransformsPreserveKineticEnergyAndMomentum) {
  std::mt19937_64 g(4);
  for (int k = 0; k < 50; ++k) {
    const RigidInertia I = random_inertia(g);  // in A
    const Transform X = random_transform(g);   // A → B
    const Motion v = random_motion(g);         // in A
    const RigidInertia IB = X.apply(I);
    const Motion vB = X.apply(v);
    EXPECT_NEAR(IB.kinetic_energy(vB), I.kinetic_energy(v), 1e-10);
    // Momentum transforms as a force: h_B = X* h_A.
    EXPECT_TRUE((IB * vB).vector().isApprox(X.apply(I * v).vector(), 1e-10));
    // Matrix definitions: I_B = X* I X⁻¹ and I_A = Xᵀ I_B X.
    EXPECT_TRUE(IB.to_matrix().isApprox(X.to_force_matrix() * I.to_matrix() * X.to_matrix().inverse(), 1e-9));
    EXPECT_TRUE(X.apply_transpose(IB).to_matrix().isApprox(I.to_matrix(), 1e-9));
    EXPECT_NEAR(IB.mass(), I.mass(), kTol);
  }
}

TEST(Spatial, ParallelAxisTheorem) {
  // A point mass m at c has Ī = m(|c|² 1 − c cᵀ) about the origin.
  const double m = 2.0;
  const Vec3 c(0.1, -0.2, 0.3);
  const RigidInertia I = RigidInertia::from_mass_com_inertia(m, c, Mat3::Zero());
  const Mat3 expected = m * (c.squaredNorm() * Mat3::Identity() - c * c.transpose());
  EXPECT_TRUE(I.Ibar().isApprox(expected, kTol));
  EXPECT_TRUE(I.com().isApprox(c, kTol));
  EXPECT_LT(I.inertia_about_com().norm(), 1e-14);
}
