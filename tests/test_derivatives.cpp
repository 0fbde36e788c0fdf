// Analytic RNEA / ABA derivatives against independent facts: central finite
// differences through integrate() (the tangent-space convention), CRBA's H
// and its inverse, and a free body's gravity wrench in closed form.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cstdio>
#include <limits>

#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/derivatives.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/dynamics/constrained_derivatives.hpp"
#include "plume/error.hpp"
#include "test_utils.hpp"

using namespace plume;
using namespace plume::test;

namespace {

// Fourth-order central differences of f (nv values) along each velocity
// coordinate, [f(−2h) − 8 f(−h) + 8 f(h) − f(2h)] / 12h: q moves through
// integrate() (the tangent convention; a free-flyer along a one-parameter
// subgroup, so the 2h point is the h point moved twice), x ∈ {v, τ} moves
// additively. With h = 2e-4 the truncation is O(h⁴) ~ 1e-15 and the rounding
// ~ 1e-16/h ~ 1e-12 relative: plain second-order differences (error ~ 1e-6
// on the humanoid's q̈) could not check 1e-6.
constexpr double kStep = 2e-4;

template <class F>
VectorX stencil(F&& f_at) {
  return (f_at(-2.0) - 8.0 * f_at(-1.0) + 8.0 * f_at(1.0) - f_at(2.0)) / (12.0 * kStep);
}

template <class F>
MatrixX fd_q(const Model& m, const VectorX& q, F&& f) {
  MatrixX D(f(q).size(), m.nv());
  for (int k = 0; k < m.nv(); ++k) {
    VectorX e = VectorX::Zero(m.nv());
    e(k) = 1.0;
    D.col(k) = stencil([&](double t) { return VectorX(f(integrate(m, q, e, t * kStep))); });
  }
  return D;
}

template <class F>
MatrixX fd_x(const VectorX& x, F&& f) {
  MatrixX D(f(x).size(), x.size());
  for (Eigen::Index k = 0; k < x.size(); ++k) {
    D.col(k) = stencil([&](double t) {
      VectorX y = x;
      y(k) += t * kStep;
      return VectorX(f(y));
    });
  }
  return D;
}

// max |A − B| relative to max(1, max |B|).
double g_fd_worst = 0.0;
// The worst seen, printed at the end of each test for the record.
double g_worst = 0.0;
double rel_error(const MatrixX& A, const MatrixX& B) {
  if (A.size() == 0) return 0.0;
  const double e = (A - B).cwiseAbs().maxCoeff() / std::max(1.0, B.cwiseAbs().maxCoeff());
  g_worst = std::max(g_worst, e);
  return e;
}
double fd_error(const MatrixX& A, const MatrixX& B) {
  const double w = g_worst;
  const double e = rel_error(A, B);
  g_fd_worst = std::max(g_fd_worst, e);
  g_worst = w;
  return e;
}

std::vector<Model> test_models() {
  std::vector<Model> models;
  for (const auto& nm : all_models()) models.push_back(load_model(nm.file, nm.root));
  // Every joint kind, free-flyers and planar joints inside the tree.
  models.push_back(random_tree(11, 12));
  models.push_back(random_tree(12, 10, false));
  models.push_back(random_tree(13, 16));
  // 30 dofs, not a multiple of 4: aba_derivatives' wide path (nv ≥ 24 where
  // the CPU has AVX2 and FMA) with its masked last rows.
  models.push_back(load_model("humanoid.urdf", urdf::RootJoint::Fixed));
  return models;
}

// f(simd) once with the wide build of the derivative passes (where the CPU
// has it) and once with the portable one; the default is restored after.
template <class F>
void for_each_build(F f) {
  for (const bool simd : {true, false}) {
    detail::set_derivatives_simd(simd);
    f(simd);
  }
  detail::set_derivatives_simd(true);
}

}  // namespace

TEST(Derivatives, RneaMatchesFiniteDifferencesOnEveryModel) {
  g_worst = g_fd_worst = 0.0;
  for_each_build([&](bool simd) {
    for (const Model& m : test_models()) {
      Data d(m), dfd(m);
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        SCOPED_TRACE(m.name() + " seed " + std::to_string(seed) + (simd ? " simd" : " portable"));
        std::mt19937_64 g(seed);
        const VectorX q = random_configuration(m, seed);
        const VectorX v = random_vector(g, m.nv(), 2.0);
        const VectorX a = random_vector(g, m.nv(), 3.0);
        rnea_derivatives(m, d, q, v, a);
        const MatrixX Dq = fd_q(m, q, [&](const VectorX& x) { return VectorX(rnea(m, dfd, x, v, a)); });
        const MatrixX Dv = fd_x(v, [&](const VectorX& x) { return VectorX(rnea(m, dfd, q, x, a)); });
        EXPECT_LE(fd_error(d.dtau_dq, Dq), 1e-6) << "analytic\n" << d.dtau_dq << "\nfd\n" << Dq;
        EXPECT_LE(fd_error(d.dtau_dv, Dv), 1e-6) << "analytic\n" << d.dtau_dv << "\nfd\n" << Dv;
        // ∂τ/∂q̈ = H, and τ itself.
        EXPECT_LE(rel_error(d.H, crba(m, dfd, q)), 1e-12);
        EXPECT_LE(rel_error(d.tau, rnea(m, dfd, q, v, a)), 1e-12);
      }
    }
  });
  std::printf("worst relative difference: finite differences %.2e, exact identities %.2e\n", g_fd_worst, g_worst);
}

TEST(Derivatives, AbaMatchesFiniteDifferencesAndInverseDynamics) {
  g_worst = g_fd_worst = 0.0;
  for_each_build([&](bool simd) {
    for (const Model& m : test_models()) {
      Data d(m), dfd(m);
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        SCOPED_TRACE(m.name() + " seed " + std::to_string(seed) + (simd ? " simd" : " portable"));
        std::mt19937_64 g(seed + 100);
        const VectorX q = random_configuration(m, seed + 100);
        const VectorX v = random_vector(g, m.nv(), 2.0);
        const VectorX tau = random_vector(g, m.nv(), 5.0);
        aba_derivatives(m, d, q, v, tau);
        const MatrixX Dq = fd_q(m, q, [&](const VectorX& x) { return VectorX(aba(m, dfd, x, v, tau)); });
        const MatrixX Dv = fd_x(v, [&](const VectorX& x) { return VectorX(aba(m, dfd, q, x, tau)); });
        EXPECT_LE(fd_error(d.ddq_dq, Dq), 1e-6) << "analytic\n" << d.ddq_dq << "\nfd\n" << Dq;
        EXPECT_LE(fd_error(d.ddq_dv, Dv), 1e-6) << "analytic\n" << d.ddq_dv << "\nfd\n" << Dv;
        // ∂q̈/∂τ = H⁻¹ (H from CRBA, inverted densely).
        const MatrixX H = crba(m, dfd, q);
        const MatrixX Hinv = H.llt().solve(MatrixX::Identity(m.nv(), m.nv()));
        EXPECT_LE(rel_error(d.Minv, Hinv), 1e-12);
        // ∂q̈/∂q = −H⁻¹ ∂τ/∂q at (q, q̇, q̈) with an independent H⁻¹.
        const VectorX ddq = aba(m, dfd, q, v, tau);
        EXPECT_LE(rel_error(d.ddq, ddq), 1e-12);
        rnea_derivatives(m, dfd, q, v, ddq);
        EXPECT_LE(rel_error(d.ddq_dq, MatrixX(-Hinv * dfd.dtau_dq)), 1e-10);
        EXPECT_LE(rel_error(d.ddq_dv, MatrixX(-Hinv * dfd.dtau_dv)), 1e-10);
      }
    }
  });
  std::printf("worst relative difference: finite differences %.2e, exact identities %.2e\n", g_fd_worst, g_worst);
}

TEST(Derivatives, PortableAndWideBuildsAgree) {
  // rnea_derivatives' AVX2 build (where the CPU has it) packs the portable
  // build's operations without reordering them: the same bits. aba_derivatives'
  // wide solves fuse multiply-adds: the same values up to roundings. Both builds
  // also meet the finite differences above (simd switched off there too).
  for (const Model& m : test_models()) {
    Data wide(m), port(m);
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(m.name() + " seed " + std::to_string(seed));
      std::mt19937_64 g(seed + 200);
      const VectorX q = random_configuration(m, seed + 200);
      const VectorX v = random_vector(g, m.nv(), 2.0);
      const VectorX a = random_vector(g, m.nv(), 3.0);
      detail::set_derivatives_simd(true);
      rnea_derivatives(m, wide, q, v, a);
      aba_derivatives(m, wide, q, v, a);
      detail::set_derivatives_simd(false);
      rnea_derivatives(m, port, q, v, a);
      aba_derivatives(m, port, q, v, a);
      detail::set_derivatives_simd(true);
      EXPECT_EQ((wide.dtau_dq - port.dtau_dq).cwiseAbs().maxCoeff(), 0.0);
      EXPECT_EQ((wide.dtau_dv - port.dtau_dv).cwiseAbs().maxCoeff(), 0.0);
      EXPECT_EQ((wide.tau - port.tau).cwiseAbs().maxCoeff(), 0.0);
      // aba_derivatives' passes (q̈ included) give the same bits; the solves
      // after them may differ in the last bits.
      EXPECT_EQ((wide.ddq - port.ddq).cwiseAbs().maxCoeff(), 0.0);
      EXPECT_LE(rel_error(wide.ddq_dq, port.ddq_dq), 1e-12);
      EXPECT_LE(rel_error(wide.ddq_dv, port.ddq_dv), 1e-12);
      EXPECT_LE(rel_error(wide.Minv, port.Minv), 1e-12);
    }
  }
}

TEST(Derivatives, ResultsDoNotDependOnTheMatricesContents) {
  // The backward passes write every entry of their matrices (the pairs of
  // unrelated dofs as zeros) instead of zeroing them first: results left in
  // them, or anything a caller wrote there, must not show.
  for (const Model& m : test_models()) {
    SCOPED_TRACE(m.name());
    std::mt19937_64 g(77);
    const VectorX q = random_configuration(m, 77);
    const VectorX v = random_vector(g, m.nv(), 2.0);
    const VectorX a = random_vector(g, m.nv(), 3.0);
    Data fresh(m), used(m);
    rnea_derivatives(m, fresh, q, v, a);
    aba_derivatives(m, fresh, q, v, a);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (MatrixX* M : {&used.dtau_dq, &used.dtau_dv, &used.H, &used.ddq_dq, &used.ddq_dv, &used.Minv}) M->setConstant(nan);
    rnea_derivatives(m, used, q, v, a);
    aba_derivatives(m, used, q, v, a);
    EXPECT_TRUE(used.dtau_dq.cwiseEqual(fresh.dtau_dq).all());
    EXPECT_TRUE(used.dtau_dv.cwiseEqual(fresh.dtau_dv).all());
    EXPECT_TRUE(used.ddq_dq.cwiseEqual(fresh.ddq_dq).all());
    EXPECT_TRUE(used.ddq_dv.cwiseEqual(fresh.ddq_dv).all());
    EXPECT_TRUE(used.Minv.cwiseEqual(fresh.Minv).all());
  }
}

TEST(Derivatives, FreeFlyerTangentIsTheBodyTwist) {
  // A free body at rest with q̈ = 0: τ = −(gravity wrench in body
  // coordinates) = −[c × m Rᵀg; m Rᵀg]. Turning the body by the body-frame
  // rotation δω (R → R exp(δω×)) turns Rᵀg into (1 − δω×) Rᵀg; a translation
  // changes nothing. So ∂τ/∂δω = −[c× m (Rᵀg)×; m (Rᵀg)×] and ∂τ/∂δv = 0.
  const Model m = load_model("ball.urdf", urdf::RootJoint::FreeFlyer);
  ASSERT_EQ(m.nv(), 6);
  Data d(m);
  const VectorX q = random_configuration(m, 5);
  const VectorX zero = VectorX::Zero(6);
  rnea_derivatives(m, d, q, zero, zero);
  const Mat3 R = Eigen::Quaterniond(q(6), q(3), q(4), q(5)).toRotationMatrix();
  const double mass = m.inertia(1).mass();
  const Vec3 c = m.inertia(1).com();
  const Vec3 gb = R.transpose() * m.gravity();
  MatrixX expected = MatrixX::Zero(6, 6);
  expected.block<3, 3>(0, 0) = -skew(c) * mass * skew(gb);
  expected.block<3, 3>(3, 0) = -mass * skew(gb);
  EXPECT_LE((d.dtau_dq - expected).cwiseAbs().maxCoeff(), 1e-12) << d.dtau_dq << "\n\n" << expected;
  // And integrating along direction k moves the pose by exactly that twist.
  for (int k = 0; k < 6; ++k) {
    VectorX e = VectorX::Zero(6);
    e(k) = 1.0;
    const VectorX q1 = integrate(m, q, e, 1e-3);
    EXPECT_LE((difference(m, q, q1) - 1e-3 * e).norm(), 1e-15);
  }
}

// ---- contact-constrained dynamics ---------------------------------------------

namespace {

// q̈ and λ from the dense KKT system [H −Jᵀ; J 0] [q̈; λ] = [τ − C; −γ], built
// from the library's Jacobians (an independent solve of the same dynamics).
VectorX kkt_solution(const Model& m, Data& d, const std::vector<PointConstraint>& cs, const VectorX& q,
                     const VectorX& v, const VectorX& tau) {
  int rows = 0;
  for (const auto& c : cs) rows += static_cast<int>(c.directions.cols());
  const int nv = m.nv();
  MatrixX K = MatrixX::Zero(nv + rows, nv + rows);
  VectorX rhs(nv + rows);
  forward_kinematics(m, d, q, v, VectorX::Zero(nv));
  int r = nv;
  for (const auto& c : cs) {
    const int k = static_cast<int>(c.directions.cols());
    Matrix3X Jp(3, nv);
    point_jacobian(m, d, c.body, c.point, ReferenceFrame::LocalWorldAligned, Jp);
    K.block(r, 0, k, nv) = c.directions.transpose() * Jp;
    rhs.segment(r, k) = -c.directions.transpose() * point_velocity_product(m, d, c.body, c.point, ReferenceFrame::LocalWorldAligned);
    r += k;
  }
  K.topLeftCorner(nv, nv) = crba(m, d, q);
  K.topRightCorner(nv, rows) = -K.bottomLeftCorner(rows, nv).transpose();
  rhs.head(nv) = tau - bias_forces(m, d, q, v);
  return K.fullPivLu().solve(rhs);
}

// Sticking points on the leaves of the tree (bodies without children): all
// three directions where the leaf's chain has 6 dofs or more, else the one
// direction the first supporting dof moves the point along.
std::vector<PointConstraint> leaf_constraints(const Model& m, std::mt19937_64& g, int max_leaves) {
  std::vector<bool> has_child(m.nbodies(), false);
  for (int i = 1; i < m.nbodies(); ++i) has_child[m.parent(i)] = true;
  std::vector<PointConstraint> cs;
  Data d(m);
  forward_kinematics(m, d, neutral_configuration(m));
  for (int i = m.nbodies() - 1; i > 0 && static_cast<int>(cs.size()) < max_leaves; --i) {
    if (has_child[i]) continue;
    PointConstraint c;
    c.body = i;
    c.point = random_vec3(g, 0.1);
    const Joint& j = m.joint(i);
    int depth = 0;
    for (int k = j.v_index + j.nv - 1; k >= 0; k = m.dof_parent(k)) ++depth;
    if (depth < 6) {
      Matrix3X Jp(3, m.nv());
      point_jacobian(m, d, i, c.point, ReferenceFrame::LocalWorldAligned, Jp);
      c.directions = Jp.col(j.v_index).normalized();
    }
    cs.push_back(c);
  }
  return cs;
}

}  // namespace

TEST(Derivatives, ConstrainedDynamicsMatchFiniteDifferences) {
  g_worst = g_fd_worst = 0.0;
  std::vector<Model> models;
  for (const char* f : {"quadruped.urdf", "humanoid.urdf", "ball.urdf"}) models.push_back(load_model(f, urdf::RootJoint::FreeFlyer));
  models.push_back(load_model("arm7.urdf", urdf::RootJoint::Fixed));
  models.push_back(load_model("rod.urdf", urdf::RootJoint::Planar));
  models.push_back(random_tree(12, 10, false));
  models.push_back(random_tree(21, 12));
  for (const Model& m : models) {
    std::mt19937_64 g(7);
    const std::vector<PointConstraint> cs = leaf_constraints(m, g, 4);
    ConstrainedDerivatives cd(m, cs);
    Data d(m), dfd(m);
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
      SCOPED_TRACE(m.name() + " with " + std::to_string(cd.rows()) + " constraint rows, seed " + std::to_string(seed));
      const VectorX q = random_configuration(m, seed);
      const VectorX v = random_vector(g, m.nv(), 1.0);
      const VectorX tau = random_vector(g, m.nv(), 3.0);
      cd.compute(m, d, q, v, tau);
      const int nv = m.nv(), rows = cd.rows();
      const VectorX x = kkt_solution(m, dfd, cs, q, v, tau);
      EXPECT_LE(rel_error(cd.ddq, x.head(nv)), 1e-9);
      EXPECT_LE(rel_error(cd.lambda, x.tail(rows)), 1e-9);
      const MatrixX Dq = fd_q(m, q, [&](const VectorX& y) { return kkt_solution(m, dfd, cs, y, v, tau); });
      const MatrixX Dv = fd_x(v, [&](const VectorX& y) { return kkt_solution(m, dfd, cs, q, y, tau); });
      const MatrixX Dt = fd_x(tau, [&](const VectorX& y) { return kkt_solution(m, dfd, cs, q, v, y); });
      EXPECT_LE(fd_error(cd.ddq_dq, Dq.topRows(nv)), 1e-6) << cd.ddq_dq << "\n\n" << Dq.topRows(nv);
      EXPECT_LE(fd_error(cd.dlambda_dq, Dq.bottomRows(rows)), 1e-6) << cd.dlambda_dq << "\n\n" << Dq.bottomRows(rows);
      EXPECT_LE(fd_error(cd.ddq_dv, Dv.topRows(nv)), 1e-6);
      EXPECT_LE(fd_error(cd.dlambda_dv, Dv.bottomRows(rows)), 1e-6);
      EXPECT_LE(fd_error(cd.ddq_dtau, Dt.topRows(nv)), 1e-6);
      EXPECT_LE(fd_error(cd.dlambda_dtau, Dt.bottomRows(rows)), 1e-6);
      // The constraint holds along every derivative: J ∂q̈/∂τ = 0.
      EXPECT_LE((cd.J * cd.ddq_dtau).cwiseAbs().maxCoeff(), 1e-9);
    }
  }
  std::printf("worst relative difference: finite differences %.2e, exact identities %.2e\n", g_fd_worst, g_worst);
}

// Kinematics derivatives against central differences of two other code paths:
// the frame velocity J(q) q̇ from frame_jacobian, and the frame acceleration
// J(q) q̈ + J̇q̇ from frame_jacobian and frame_velocity_product (forward
// kinematics at q̈ = 0), for every reference frame, on frames of every model.
TEST(Derivatives, FrameVelocityAndAccelerationMatchFiniteDifferences) {
  g_worst = g_fd_worst = 0.0;
  for (const Model& m : test_models()) {
    Data d(m), dfd(m);
    const int nf = static_cast<int>(m.frames().size());
    const VectorX zero = VectorX::Zero(m.nv());
    Matrix6X dv_dq(6, m.nv()), dv_dv(6, m.nv()), da_dq(6, m.nv()), da_dv(6, m.nv()), da_da(6, m.nv());
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
      std::mt19937_64 g(seed + 200);
      const VectorX q = random_configuration(m, seed + 200);
      const VectorX v = random_vector(g, m.nv(), 2.0);
      const VectorX a = random_vector(g, m.nv(), 3.0);
      kinematics_derivatives(m, d, q, v, a);
      for (int frame : {nf - 1, nf / 2, 1}) {
        for (ReferenceFrame ref : {ReferenceFrame::Local, ReferenceFrame::World, ReferenceFrame::LocalWorldAligned}) {
          SCOPED_TRACE(m.name() + " seed " + std::to_string(seed) + " frame " + m.frames()[frame].name + " " +
                       to_string(ref));
          const auto velocity = [&](const VectorX& x, const VectorX& xv) {
            return VectorX(frame_jacobian(m, dfd, x, frame, ref) * xv);
          };
          const auto acceleration = [&](const VectorX& x, const VectorX& xv, const VectorX& xa) {
            const Matrix6X J = frame_jacobian(m, dfd, x, frame, ref);
            forward_kinematics(m, dfd, x, xv, zero);
            return VectorX(J * xa + frame_velocity_product(m, dfd, frame, ref).vector());
          };
          frame_velocity_derivatives(m, d, frame, ref, dv_dq, dv_dv);
          frame_acceleration_derivatives(m, d, frame, ref, da_dq, da_dv, da_da);
          const MatrixX Vq = fd_q(m, q, [&](const VectorX& x) { return velocity(x, v); });
          const MatrixX Vv = fd_x(v, [&](const VectorX& x) { return velocity(q, x); });
          const MatrixX Aq = fd_q(m, q, [&](const VectorX& x) { return acceleration(x, v, a); });
          const MatrixX Av = fd_x(v, [&](const VectorX& x) { return acceleration(q, x, a); });
          EXPECT_LE(fd_error(dv_dq, Vq), 1e-6) << "analytic\n" << dv_dq << "\nfd\n" << Vq;
          EXPECT_LE(fd_error(dv_dv, Vv), 1e-6) << "analytic\n" << dv_dv << "\nfd\n" << Vv;
          EXPECT_LE(fd_error(da_dq, Aq), 1e-6) << "analytic\n" << da_dq << "\nfd\n" << Aq;
          EXPECT_LE(fd_error(da_dv, Av), 1e-6) << "analytic\n" << da_dv << "\nfd\n" << Av;
          // ∂v/∂q̇ and ∂a/∂q̈ are the frame Jacobian.
          const Matrix6X J = frame_jacobian(m, dfd, q, frame, ref);
          EXPECT_LE(rel_error(dv_dv, J), 1e-12);
          EXPECT_LE(rel_error(da_da, J), 1e-12);
        }
      }
    }
  }
  // A wrong result size is named.
  const Model m = test_models().front();
  Data d(m);
  Matrix6X small(6, m.nv() + 1), ok(6, m.nv());
  EXPECT_THROW(frame_velocity_derivatives(m, d, 0, ReferenceFrame::Local, small, ok), ArgumentError);
  EXPECT_THROW(frame_acceleration_derivatives(m, d, static_cast<int>(m.frames().size()), ReferenceFrame::Local, ok, ok, ok),
               ArgumentError);
  std::printf("worst relative difference: finite differences %.2e, exact identities %.2e\n", g_fd_worst, g_worst);
}
