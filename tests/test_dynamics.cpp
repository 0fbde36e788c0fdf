// RNEA, CRBA, ABA and LTDL, each checked against an independent algorithm,
// a finite-differenced Lagrangian, energy balance or a closed form.
#include <gtest/gtest.h>
#include <tinyxml2.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <algorithm>
#include <functional>
#include <random>
#include <string>

#include "algorithms/crba_placements.hpp"
#include "algorithms/joint_kernels.hpp"
#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/energy.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/error.hpp"
#include "test_utils.hpp"

using namespace plume;
using namespace plume::test;

namespace {

// Every model in models/ and random trees with every joint kind.
std::vector<Model> test_models() {
  std::vector<Model> out;
  for (const auto& nm : all_models()) out.push_back(load_model(nm.file, nm.root));
  for (std::uint64_t seed = 1; seed <= 12; ++seed) out.push_back(random_tree(seed, 4 + static_cast<int>(seed % 9)));
  for (std::uint64_t seed = 20; seed <= 24; ++seed) out.push_back(random_tree(seed, 15, false));
  return out;
}

struct State {
  VectorX q, v, a;
};

State random_state(const Model& m, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  return {random_configuration(m, seed), random_vector(g, m.nv(), 2.0), random_vector(g, m.nv(), 3.0)};
}

double rel_err(const VectorX& a, const VectorX& b) { return (a - b).norm() / std::max(1.0, b.norm()); }

}  // namespace

TEST(Crba, SymmetricPositiveDefiniteAndColumnsMatchRnea) {
  for (const Model& m : test_models()) {
    SCOPED_TRACE(m.name());
    Data d(m);
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const State s = random_state(m, seed);
      const MatrixX H = crba(m, d, s.q);
      EXPECT_TRUE(H.isApprox(H.transpose(), 1e-14));
      EXPECT_EQ(Eigen::LLT<MatrixX>(H).info(), Eigen::Success);
      // Column i of H = RNEA(q, 0, e_i) − RNEA(q, 0, 0) (gravity cancels).
      const VectorX zero = VectorX::Zero(m.nv());
      const VectorX tau0 = rnea(m, d, s.q, zero, zero);
      for (int i = 0; i < m.nv(); ++i) {
        const VectorX ei = VectorX::Unit(m.nv(), i);
        const VectorX col = rnea(m, d, s.q, zero, ei) - tau0;
        EXPECT_LT((col - H.col(i)).norm(), 1e-12 * std::max(1.0, H.norm())) << "column " << i;
      }
    }
  }
}

// crba carries whole subtrees' columns up at once when the dofs are numbered
// depth first (the URDF loader's numbering) and each column alone otherwise:
// the test models hold both numberings (random trees attach bodies anywhere),
// and the flag agrees with the ancestry walked dof by dof.
TEST(Crba, TestModelsHoldBothDofNumberings) {
  int depth_first = 0, other = 0;
  for (const Model& m : test_models()) {
    SCOPED_TRACE(m.name());
    bool contiguous = true;
    for (int k = 0; k < m.nv(); ++k) {
      for (int c = k + 1; c <= m.dof_subtree_end(k); ++c) {
        bool below = false;
        for (int a = m.dof_parent(c); a >= 0; a = m.dof_parent(a)) below = below || a == k;
        contiguous = contiguous && below;
      }
    }
    EXPECT_EQ(m.dofs_depth_first(), contiguous);
    ++(m.dofs_depth_first() ? depth_first : other);
  }
  EXPECT_GT(depth_first, 0);
  EXPECT_GT(other, 0);
}

TEST(Aba, InvertsRneaOnEveryModel) {
  for (const Model& m : test_models()) {
    SCOPED_TRACE(m.name());
    Data d(m);
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const State s = random_state(m, seed);
      const VectorX tau = rnea(m, d, s.q, s.v, s.a);
      const VectorX ddq = aba(m, d, s.q, s.v, tau);
      EXPECT_LT(rel_err(ddq, s.a), 1e-10) << "seed " << seed;
    }
  }
}

TEST(Aba, AgreesWithCrbaAndBiasForces) {
  // q̈ = H⁻¹ (τ − C): three algorithms, one answer.
  for (const Model& m : test_models()) {
    SCOPED_TRACE(m.name());
    Data d(m);
    const State s = random_state(m, 9);
    std::mt19937_64 g(9);
    const VectorX tau = random_vector(g, m.nv(), 5.0);
    const VectorX C = bias_forces(m, d, s.q, s.v);
    const MatrixX H = crba(m, d, s.q);
    const VectorX expected = H.llt().solve(tau - C);
    EXPECT_LT(rel_err(aba(m, d, s.q, s.v, tau), expected), 1e-10);
    // C is RNEA with q̈ = 0, and g is C at q̇ = 0.
    EXPECT_LT(rel_err(C, rnea(m, d, s.q, s.v, VectorX::Zero(m.nv()))), 1e-14);
    EXPECT_LT(rel_err(gravity_torques(m, d, s.q), bias_forces(m, d, s.q, VectorX::Zero(m.nv()))), 1e-14);
  }
}

TEST(BiasForces, AfterCrbaEqualsTheStandalonePass) {
  // The variant that reuses CRBA's joint transforms gives the same C (every
  // model, random states with every joint kind), and H is left untouched.
  for (const Model& m : test_models()) {
    SCOPED_TRACE(m.name());
    Data d(m);
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const State s = random_state(m, seed);
      const VectorX C = bias_forces(m, d, s.q, s.v);
      const MatrixX H = crba(m, d, s.q);
      EXPECT_LT(rel_err(unchecked::bias_forces_after_crba(m, d, s.v), C), 1e-14);
      EXPECT_EQ(d.H, H);
    }
  }
}

TEST(Crba, LeavesThePlacementsAloneAndItsPlacementsVariantWritesThem) {
  // crba() promises H, not placements: data.X0 keeps what forward_kinematics
  // left at another q. The library's variant that also writes them gives the
  // same H and the placements of forward_kinematics, bit for bit.
  for (const Model& m : test_models()) {
    SCOPED_TRACE(m.name());
    Data d(m), dp(m), dk(m);
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const State s = random_state(m, seed);
      const State other = random_state(m, seed + 100);
      forward_kinematics(m, d, other.q);
      const std::vector<Transform> X0 = d.X0;
      const MatrixX H = crba(m, d, s.q);
      for (int i = 0; i < m.nbodies(); ++i) {
        EXPECT_EQ(d.X0[i].E(), X0[i].E());
        EXPECT_EQ(d.X0[i].r(), X0[i].r());
      }
      EXPECT_EQ(detail::crba_placements(m, dp, s.q), H);
      forward_kinematics(m, dk, s.q);
      for (int i = 1; i < m.nbodies(); ++i) {
        EXPECT_EQ(dp.X0[i].E(), dk.X0[i].E());
        EXPECT_EQ(dp.X0[i].r(), dk.X0[i].r());
      }
    }
  }
}

TEST(Ltdl, FactorReconstructsHAndSolvesLikeDenseCholesky) {
  for (const Model& m : test_models()) {
    SCOPED_TRACE(m.name());
    Data d(m);
    const State s = random_state(m, 4);
    const MatrixX H = crba(m, d, s.q);
    const RowMatrixX& LD = ltdl(m, d);
    const int n = m.nv();
    MatrixX L = MatrixX::Identity(n, n);
    VectorX D(n);
    for (int k = 0; k < n; ++k) {
      D(k) = LD(k, k);
      for (int j = m.dof_parent(k); j >= 0; j = m.dof_parent(j)) L(k, j) = LD(k, j);
    }
    EXPECT_TRUE((L.transpose() * D.asDiagonal() * L).isApprox(H, 1e-12));
    // Branch-induced sparsity: no fill-in outside the ancestor pattern.
    for (int k = 0; k < n; ++k) {
      for (int j = 0; j < k; ++j) {
        bool ancestor = false;
        for (int a = m.dof_parent(k); a >= 0; a = m.dof_parent(a)) ancestor |= a == j;
        if (!ancestor) {
          EXPECT_EQ(H(k, j), 0.0);
        }
      }
    }
    std::mt19937_64 g(4);
    VectorX x = random_vector(g, n);
    const VectorX expected = H.llt().solve(x);
    ltdl_solve(m, d, x);
    EXPECT_LT(rel_err(x, expected), 1e-11);
    MatrixX B = MatrixX::Random(n, 3);
    const MatrixX expectedB = H.llt().solve(B);
    ltdl_solve_columns(m, d, B);
    EXPECT_TRUE(B.isApprox(expectedB, 1e-10));
    // Tᵀ H⁻¹ T = (L⁻ᵀT)ᵀ D⁻¹ (L⁻ᵀT)
    MatrixX T = MatrixX::Random(n, 4);
    const MatrixX M = T.transpose() * H.llt().solve(T);
    MatrixX Y = T;
    ltdl_solve_Lt(m, d, Y);
    EXPECT_TRUE((Y.transpose() * D.cwiseInverse().asDiagonal() * Y).isApprox(M, 1e-10));
    // The row form on contact-like right-hand sides: rows zero outside a
    // support chain and leading/trailing zero rows in some columns (the
    // solve skips them), as a dense triangular solve with the same L.
    MatrixX Kt = MatrixX::Zero(6, n);
    for (int r = 0; r < 6; ++r) {
      for (int k = (r * 7) % n; k >= 0; k = m.dof_parent(k)) Kt(r, k) = 1.0 + 0.1 * r + 0.01 * k;
    }
    Kt.row(0).setZero();
    MatrixX rows_solved = Kt;
    ltdl_solve_Lt_rows(m, d, rows_solved);
    const MatrixX dense = L.transpose().triangularView<Eigen::Upper>().solve(MatrixX(Kt.transpose()));
    EXPECT_TRUE(rows_solved.transpose().isApprox(dense, 1e-12)) << rows_solved.transpose() - dense;
    EXPECT_TRUE(rows_solved.row(0).isZero(0.0));
    // The other half and the whole solve in row form, and H⁻¹ from the
    // factor, against a dense triangular solve and a dense inverse.
    MatrixX Xt = MatrixX::Random(5, n);
    MatrixX half = Xt;
    ltdl_solve_L_rows(m, d, half);
    const MatrixX dense_half = L.triangularView<Eigen::UnitLower>().solve(MatrixX(Xt.transpose()));
    EXPECT_TRUE(half.transpose().isApprox(dense_half, 1e-12));
    MatrixX whole = Xt;
    ltdl_solve_rows(m, d, whole);
    EXPECT_TRUE(whole.transpose().isApprox(H.llt().solve(MatrixX(Xt.transpose())), 1e-10));
    MatrixX Hinv(n, n);
    ltdl_inverse(m, d, Hinv);
    const MatrixX dense_inverse = H.llt().solve(MatrixX::Identity(n, n));
    EXPECT_TRUE(Hinv.isApprox(dense_inverse, 1e-10)) << (Hinv - dense_inverse).cwiseAbs().maxCoeff();
    EXPECT_TRUE(Hinv == Hinv.transpose());
    EXPECT_LT((H * Hinv - MatrixX::Identity(n, n)).cwiseAbs().maxCoeff(), 1e-9 * std::max(1.0, H.norm()));
  }
}

TEST(Rnea, AgreesWithTheLagrangianByFiniteDifferences) {
  // τ = d/dt(∂T/∂q̇) − ∂T/∂q + ∂V/∂q, every term from the energy functions.
  // Models without free-flyers, so that q̇ = v.
  TreeOptions opt;
  opt.free_root = false;
  opt.free_joints = false;
  std::vector<Model> models;
  for (std::uint64_t seed = 30; seed < 36; ++seed) models.push_back(random_tree(seed, 8, opt));
  for (const char* f : {"double_pendulum.urdf", "arm7.urdf"}) models.push_back(load_model(f, urdf::RootJoint::Fixed));
  models.push_back(load_model("rod.urdf", urdf::RootJoint::Planar));
  for (const Model& m : models) {
    SCOPED_TRACE(m.name());
    Data d(m);
    const State s = random_state(m, 2);
    const int n = m.nv();
    auto T = [&](const VectorX& q, const VectorX& v) { return kinetic_energy(m, d, q, v); };
    auto V = [&](const VectorX& q) { return potential_energy(m, d, q); };
    // T is quadratic in q̇, so a central difference in q̇ is exact up to rounding.
    auto dT_dv = [&](const VectorX& q, const VectorX& v) {
      VectorX p(n);
      for (int i = 0; i < n; ++i) {
        const VectorX e = VectorX::Unit(n, i) * 1e-2;
        p(i) = (T(q, v + e) - T(q, v - e)) / 2e-2;
      }
      return p;
    };
    const double ht = 1e-4;
    auto q_at = [&](double t) { return VectorX(s.q + s.v * t + 0.5 * s.a * t * t); };
    auto v_at = [&](double t) { return VectorX(s.v + s.a * t); };
    const VectorX dp_dt = (dT_dv(q_at(ht), v_at(ht)) - dT_dv(q_at(-ht), v_at(-ht))) / (2 * ht);
    VectorX dL_dq(n);
    const double hq = 1e-6;
    for (int i = 0; i < n; ++i) {
      const VectorX e = VectorX::Unit(n, i) * hq;
      dL_dq(i) = (T(s.q + e, s.v) - V(s.q + e) - T(s.q - e, s.v) + V(s.q - e)) / (2 * hq);
    }
    const VectorX lagrange = dp_dt - dL_dq;
    const VectorX tau = rnea(m, d, s.q, s.v, s.a);
    EXPECT_LT((tau - lagrange).norm(), 1e-6 * std::max(1.0, tau.norm())) << tau.transpose() << "\n" << lagrange.transpose();
  }
}

TEST(Rnea, PowerBalanceDEdtEqualsVTransposeTau) {
  for (const Model& m : test_models()) {
    SCOPED_TRACE(m.name());
    Data d(m);
    const State s = random_state(m, 3);
    const VectorX tau = rnea(m, d, s.q, s.v, s.a);
    const double h = 1e-5;
    auto E = [&](double t) {
      const VectorX q = integrate(m, s.q, VectorX(s.v * t + 0.5 * s.a * t * t), 1.0);
      return mechanical_energy(m, d, q, VectorX(s.v + s.a * t));
    };
    const double dEdt = (E(h) - E(-h)) / (2 * h);
    EXPECT_NEAR(dEdt, s.v.dot(tau), 1e-6 * std::max(1.0, std::abs(s.v.dot(tau))));
  }
}

TEST(Rnea, ExternalForcesEnterThroughTheJacobianTranspose) {
  for (const Model& m : test_models()) {
    SCOPED_TRACE(m.name());
    Data d(m);
    const State s = random_state(m, 5);
    std::mt19937_64 g(5);
    std::vector<Force> fext(m.nbodies());
    VectorX expected = rnea(m, d, s.q, s.v, s.a);
    Matrix6X J(6, m.nv());
    forward_kinematics(m, d, s.q);
    for (int i = 1; i < m.nbodies(); ++i) {
      fext[i] = Force(random_vec3(g), random_vec3(g));
      body_jacobian(m, d, i, ReferenceFrame::World, J);
      expected -= J.transpose() * fext[i].vector();
    }
    EXPECT_LT(rel_err(rnea(m, d, s.q, s.v, s.a, fext), expected), 1e-12);
    // ABA with the same forces inverts it.
    const VectorX tau = rnea(m, d, s.q, s.v, s.a, fext);
    EXPECT_LT(rel_err(aba(m, d, s.q, s.v, tau, fext), s.a), 1e-10);
  }
}

TEST(Rnea, PassiveDampingTorques) {
  const Model m = load_model("arm7.urdf", urdf::RootJoint::Fixed);
  const VectorX v = VectorX::LinSpaced(m.nv(), -1.0, 1.0);
  const VectorX tau = passive_torques(m, v);
  for (int k = 0; k < m.nv(); ++k) EXPECT_DOUBLE_EQ(tau(k), -m.damping()(k) * v(k));
  EXPECT_LT(v.dot(tau), 0.0);  // damping dissipates
}

// ---- closed forms --------------------------------------------------------------

namespace {

struct RawInertial {
  double mass, com_z, iyy;
};

RawInertial raw_inertial(const std::string& file, const std::string& link) {
  tinyxml2::XMLDocument doc;
  doc.LoadFile(model_path(file).c_str());
  for (auto* e = doc.RootElement()->FirstChildElement("link"); e; e = e->NextSiblingElement("link")) {
    if (link != e->Attribute("name")) continue;
    const auto* in = e->FirstChildElement("inertial");
    double x, y, z;
    std::sscanf(in->FirstChildElement("origin")->Attribute("xyz"), "%lf %lf %lf", &x, &y, &z);
    return {in->FirstChildElement("mass")->DoubleAttribute("value"), z,
            in->FirstChildElement("inertia")->DoubleAttribute("iyy")};
  }
  ADD_FAILURE() << "no link " << link;
  return {};
}

double raw_joint_z(const std::string& file, const std::string& joint) {
  tinyxml2::XMLDocument doc;
  doc.LoadFile(model_path(file).c_str());
  for (auto* e = doc.RootElement()->FirstChildElement("joint"); e; e = e->NextSiblingElement("joint")) {
    if (joint != e->Attribute("name")) continue;
    double x, y, z;
    std::sscanf(e->FirstChildElement("origin")->Attribute("xyz"), "%lf %lf %lf", &x, &y, &z);
    return z;
  }
  ADD_FAILURE() << "no joint " << joint;
  return 0.0;
}

}  // namespace

TEST(ClosedForm, Pendulum) {
  // Bob of mass m, COM at distance l below the hinge (about y), inertia Iyy
  // about its COM: H = Iyy + m l², C = m g l sin θ (no Coriolis for one DoF).
  const Model m = load_model("pendulum.urdf", urdf::RootJoint::Fixed);
  ASSERT_EQ(m.nv(), 1);
  const std::string link = m.body_name(1);
  const RawInertial in = raw_inertial("pendulum.urdf", link);
  const double l = -in.com_z, g = 9.81;
  Data d(m);
  for (double th : {-2.0, -0.3, 0.0, 0.7, 1.5}) {
    VectorX q(1), v(1);
    q << th;
    v << 1.7;
    EXPECT_NEAR(crba(m, d, q)(0, 0), in.iyy + in.mass * l * l, 1e-12);
    EXPECT_NEAR(bias_forces(m, d, q, v)(0), in.mass * g * l * std::sin(th), 1e-12);
  }
}

TEST(ClosedForm, DoublePendulum) {
  // Point-like masses m1, m2 (rotational inertia I1, I2 about their centres)
  // at distances l1, l2 from hinges 1 and 2, both about y, θ2 relative:
  //   H11 = I1 + I2 + m1 l1² + m2 (l1² + l2² + 2 l1 l2 cos θ2)
  //   H12 = I2 + m2 (l2² + l1 l2 cos θ2),  H22 = I2 + m2 l2²
  //   C1 = −m2 l1 l2 sin θ2 (2 θ̇1 θ̇2 + θ̇2²) + (m1 l1 + m2 l1) g sin θ1 + m2 g l2 sin(θ1 + θ2)
  //   C2 = m2 l1 l2 sin θ2 θ̇1² + m2 g l2 sin(θ1 + θ2)
  const std::string file = "double_pendulum.urdf";
  const Model m = load_model(file, urdf::RootJoint::Fixed);
  ASSERT_EQ(m.nv(), 2);
  const RawInertial b1 = raw_inertial(file, m.body_name(1));
  const RawInertial b2 = raw_inertial(file, m.body_name(2));
  const double l1 = -raw_joint_z(file, m.joint(2).name);
  ASSERT_NEAR(-b1.com_z, l1, 1e-12) << "model puts mass 1 at the second hinge";
  const double m1 = b1.mass, m2 = b2.mass, l2 = -b2.com_z, I1 = b1.iyy, I2 = b2.iyy, g = 9.81;
  Data d(m);
  std::mt19937_64 gen(8);
  for (int k = 0; k < 10; ++k) {
    const double t1 = uniform(gen, -3, 3), t2 = uniform(gen, -3, 3), w1 = uniform(gen, -2, 2), w2 = uniform(gen, -2, 2);
    VectorX q(2), v(2);
    q << t1, t2;
    v << w1, w2;
    const double c2 = std::cos(t2), s2 = std::sin(t2);
    Eigen::Matrix2d H;
    H(0, 0) = I1 + I2 + m1 * l1 * l1 + m2 * (l1 * l1 + l2 * l2 + 2 * l1 * l2 * c2);
    H(0, 1) = H(1, 0) = I2 + m2 * (l2 * l2 + l1 * l2 * c2);
    H(1, 1) = I2 + m2 * l2 * l2;
    const double h = m2 * l1 * l2 * s2;
    Eigen::Vector2d C(-h * (2 * w1 * w2 + w2 * w2) + (m1 + m2) * g * l1 * std::sin(t1) + m2 * g * l2 * std::sin(t1 + t2),
                      h * w1 * w1 + m2 * g * l2 * std::sin(t1 + t2));
    EXPECT_TRUE(crba(m, d, q).isApprox(MatrixX(H), 1e-12));
    EXPECT_TRUE(bias_forces(m, d, q, v).isApprox(VectorX(C), 1e-12));
  }
}

// ---- checked entry points --------------------------------------------------------

TEST(InputChecks, WrongSizesAndNonFiniteValuesAreNamed) {
  const Model m = load_model("quadruped.urdf", urdf::RootJoint::FreeFlyer);
  Data d(m);
  const VectorX q = neutral_configuration(m);
  const VectorX v = VectorX::Zero(m.nv());
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const ArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no ArgumentError");
  };
  EXPECT_EQ(message([&] { rnea(m, d, q, VectorX::Zero(17), v); }), "v has 17 entries, expected 18");
  EXPECT_EQ(message([&] { aba(m, d, q, v, VectorX::Zero(3)); }), "tau has 3 entries, expected 18");
  EXPECT_EQ(message([&] { crba(m, d, VectorX::Zero(18)); }), "q has 18 entries, expected 19");
  VectorX bad = q;
  bad(9) = std::numeric_limits<double>::infinity();
  EXPECT_EQ(message([&] { bias_forces(m, d, bad, v); }), "q[9] is inf (must be finite)");
  VectorX badv = v;
  badv(4) = std::nan("");
  EXPECT_EQ(message([&] { aba(m, d, q, badv, v); }), "v[4] is nan (must be finite)");
  // q, v and the third vector share one finiteness test; the first bad one is named.
  EXPECT_EQ(message([&] { rnea(m, d, q, v, badv); }), "a[4] is nan (must be finite)");
  EXPECT_EQ(message([&] { aba(m, d, q, v, badv); }), "tau[4] is nan (must be finite)");
  EXPECT_EQ(message([&] { rnea(m, d, bad, badv, badv); }), "q[9] is inf (must be finite)");
  EXPECT_EQ(message([&] { bias_forces(m, d, q, badv); }), "v[4] is nan (must be finite)");
  EXPECT_NE(message([&] { frame_jacobian(m, d, q, 999, ReferenceFrame::World); }).find("frame index 999"), std::string::npos);
  // Frame and body indices: both ends of the range, the exact message.
  const std::string nf = std::to_string(m.frames().size()), nb = std::to_string(m.nbodies());
  EXPECT_EQ(message([&] { frame_jacobian(m, d, q, -1, ReferenceFrame::World); }),
            "frame index -1 is out of range [0, " + nf + ")");
  EXPECT_EQ(message([&] { frame_jacobian(m, d, q, static_cast<int>(m.frames().size()), ReferenceFrame::World); }),
            "frame index " + nf + " is out of range [0, " + nf + ")");
  EXPECT_EQ(message([&] { body_jacobian(m, d, q, -1, ReferenceFrame::World); }),
            "body index -1 is out of range [0, " + nb + ")");
  EXPECT_EQ(message([&] { body_jacobian(m, d, q, m.nbodies(), ReferenceFrame::World); }),
            "body index " + nb + " is out of range [0, " + nb + ")");
  EXPECT_NO_THROW(body_jacobian(m, d, q, m.nbodies() - 1, ReferenceFrame::World));
  // A Data built for another model is refused.
  const Model other = load_model("arm7.urdf", urdf::RootJoint::Fixed);
  Data wrong(other);
  EXPECT_THROW(rnea(m, wrong, q, v, v), Error);
}

TEST(InputChecks, QuaternionNormsAreCheckedAtOneInAMillion) {
  // The checked entry points accept a free-flyer quaternion whose norm is
  // within 1e-6 of 1 and refuse one outside, naming it (the threshold of
  // check_configuration), whichever algorithm is called.
  const Model m = load_model("ball.urdf", urdf::RootJoint::FreeFlyer);
  Data d(m);
  const VectorX v = VectorX::Zero(m.nv());
  Matrix6X J(6, m.nv());
  auto scaled = [&](double norm) {
    VectorX q = neutral_configuration(m);
    q.segment<4>(3) = norm * Eigen::Vector4d(0.5, -0.5, 0.5, 0.5);
    return q;
  };
  for (const double ok : {1.0 - 0.99e-6, 1.0 + 0.99e-6, 1.0}) {
    const VectorX q = scaled(ok);
    EXPECT_NO_THROW(rnea(m, d, q, v, v));
    EXPECT_NO_THROW(bias_forces(m, d, q, v));
    EXPECT_NO_THROW(crba(m, d, q));
    EXPECT_NO_THROW(aba(m, d, q, v, v));
    EXPECT_NO_THROW(frame_jacobian(m, d, q, 0, ReferenceFrame::World, J));
  }
  for (const double bad : {1.0 - 1.01e-6, 1.0 + 1.01e-6, 0.5, 0.0}) {
    const VectorX q = scaled(bad);
    for (const auto& call : std::vector<std::function<void()>>{
             [&] { rnea(m, d, q, v, v); }, [&] { bias_forces(m, d, q, v); }, [&] { crba(m, d, q); },
             [&] { aba(m, d, q, v, v); }, [&] { frame_jacobian(m, d, q, 0, ReferenceFrame::World, J); }}) {
      try {
        call();
        ADD_FAILURE() << "norm " << bad << " accepted";
      } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("the quaternion of joint"), std::string::npos) << e.what();
      }
    }
  }
  // A NaN in the quaternion is reported as a non-finite q entry.
  VectorX q = scaled(1.0);
  q(5) = std::nan("");
  EXPECT_THROW(crba(m, d, q), ArgumentError);
}

TEST(Aba, AccuracyDoesNotDependOnTheDistanceFromTheOrigin) {
  // CRBA and ABA work with world axes about each subtree root, so moving the
  // robot 1 km away changes nothing: H is invariant under translation of the
  // free-flyer and ABA still inverts RNEA.
  const Model m = load_model("quadruped.urdf", urdf::RootJoint::FreeFlyer);
  Data d(m);
  State s = random_state(m, 11);
  const MatrixX H0 = crba(m, d, s.q);
  const double near = rel_err(aba(m, d, s.q, s.v, VectorX(rnea(m, d, s.q, s.v, s.a))), s.a);
  s.q.head<3>() << 1000.0, -700.0, 25.0;
  EXPECT_TRUE(crba(m, d, s.q).isApprox(H0, 1e-13));
  const double far = rel_err(aba(m, d, s.q, s.v, VectorX(rnea(m, d, s.q, s.v, s.a))), s.a);
  // Rounding of the placement itself (1e3 m at 1e-16) is all that may grow.
  EXPECT_LT(far, 1e-10);
  EXPECT_LT(far, 20.0 * near + 1e-12) << "near " << near << ", far " << far;
}

// ABA's q̈ on four random states of m against H⁻¹(τ − C) (CRBA and bias
// forces), against RNEA's τ (a round trip), and with random external forces
// (which enter as through the Jacobian transpose: RNEA with fext).
void expect_aba_agrees_with_crba_and_rnea(const Model& m, std::mt19937_64& g) {
  Data d(m);
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const State s = random_state(m, seed);
    const VectorX tau = random_vector(g, m.nv(), 5.0);
    const VectorX C = bias_forces(m, d, s.q, s.v);
    const MatrixX H = crba(m, d, s.q);
    const VectorX expected = H.llt().solve(tau - C);
    EXPECT_LT(rel_err(aba(m, d, s.q, s.v, tau), expected), 1e-12) << "seed " << seed;
    EXPECT_LT(rel_err(aba(m, d, s.q, s.v, rnea(m, d, s.q, s.v, s.a)), s.a), 1e-12) << "seed " << seed;
    std::vector<Force> fext(m.nbodies(), Force::Zero());
    for (int i = 1; i < m.nbodies(); ++i) fext[i] = Force(random_vec3(g), random_vec3(g));
    EXPECT_LT(rel_err(aba(m, d, s.q, s.v, rnea(m, d, s.q, s.v, s.a, fext), fext), s.a), 1e-12) << "seed " << seed;
  }
}

TEST(Aba, FreeBodiesWithoutChildrenAgreeWithCrba) {
  // Several free bodies on the world (a pile of boxes) and a free leaf at the
  // end of a chain, with full inertias and offset centres of mass: ABA's
  // direct solve with each body's own inertia against H⁻¹(τ − C) and RNEA.
  std::mt19937_64 g(31);
  ModelBuilder b("free_leaves");
  for (int k = 1; k <= 3; ++k) {
    b.add_body("box" + std::to_string(k), 0, JointSpec::free_flyer("free" + std::to_string(k)), Transform::Identity(),
               random_inertia(g));
  }
  b.add_body("link", 0, JointSpec::revolute("hinge", Vec3::UnitY(), -2.0, 2.0),
             Transform::from_pose(random_rotation(g), random_vec3(g, 0.5)), random_inertia(g));
  b.add_body("leaf", 4, JointSpec::free_flyer("leaf_joint"), Transform::from_pose(random_rotation(g), random_vec3(g, 0.5)),
             random_inertia(g));
  const Model m = b.build();
  expect_aba_agrees_with_crba_and_rnea(m, g);
}

TEST(Aba, OneDofBodiesOnTheWorldWithoutChildrenAgreeWithCrba) {
  // One-dof bodies hung on the world with no children (a pendulum, a row of
  // sliders), every one-dof kind, with rotated and offset joint frames, full
  // inertias and a slanted gravity: ABA's q̈ in body coordinates against
  // H⁻¹(τ − C) and RNEA; then with a chain beside them (not leaves), and
  // with external forces (the general passes).
  std::mt19937_64 g(47);
  for (const bool with_chain : {false, true}) {
    SCOPED_TRACE(with_chain ? "with a chain" : "root leaves only");
    ModelBuilder b("root_leaves");
    b.set_gravity(Vec3(1.5, -2.0, -9.0));
    const JointSpec kinds[] = {JointSpec::revolute("rx", Vec3::UnitX()),      JointSpec::revolute("ry", Vec3::UnitY()),
                               JointSpec::continuous("rz", Vec3::UnitZ()),    JointSpec::revolute("ra", Vec3(1, 2, -2) / 3.0),
                               JointSpec::prismatic("px", Vec3::UnitX()),     JointSpec::prismatic("py", Vec3::UnitY()),
                               JointSpec::prismatic("pz", Vec3::UnitZ()),     JointSpec::prismatic("pa", Vec3(2, -1, 2) / 3.0)};
    int k = 0;
    for (const JointSpec& j : kinds) {
      // Each kind twice: with the identity tree rotation and with a random one.
      b.add_body("a" + std::to_string(k), 0, j, Transform::from_pose(Mat3::Identity(), random_vec3(g, 0.5)),
                 random_inertia(g));
      JointSpec j2 = j;
      j2.name += "_rotated";
      b.add_body("b" + std::to_string(k++), 0, j2, Transform::from_pose(random_rotation(g), random_vec3(g, 0.5)),
                 random_inertia(g));
    }
    if (with_chain) {
      const int link = b.add_body("link", 0, JointSpec::revolute("hinge", Vec3::UnitY()),
                                  Transform::from_pose(random_rotation(g), random_vec3(g, 0.5)), random_inertia(g));
      b.add_body("tip", link, JointSpec::revolute("tip_hinge", Vec3::UnitZ()),
                 Transform::from_pose(random_rotation(g), random_vec3(g, 0.5)), random_inertia(g));
    }
    const Model m = b.build();
    expect_aba_agrees_with_crba_and_rnea(m, g);
  }
}

// The kernels' sine and cosine (detail::sin_cos, sin_cos_pair: SLEEF's
// sincos, at most 3.5 ulp from the exact values) against libm (glibc: below
// 1 ulp): within 4.5 × 2^-52 |value| (and 1e-300 absolutely,
// for the exact zero at x = 0), from tiny angles to 1e300 and next to the
// multiples of pi/2, where the reduction cancels most bits; the pair gives
// the single call's bits in either lane.
TEST(SinCos, AgreesWithLibmAndThePairWithTheSingleCall) {
  const double tol = 4.5 * std::ldexp(1.0, -52);  // 4.5 ulp of numbers in [1, 2)
  double worst = 0.0;                       // in units of 2^-52 |value|
  auto check = [&](double x) {
    double s, c, s0, c0, s1, c1;
    detail::sin_cos(x, s, c);
    const double sr = std::sin(x), cr = std::cos(x);
    ASSERT_LE(std::abs(s - sr), tol * std::abs(sr) + 1e-300) << x;
    ASSERT_LE(std::abs(c - cr), tol * std::abs(cr) + 1e-300) << x;
    if (sr != 0.0) worst = std::max(worst, std::abs(s - sr) / (std::ldexp(1.0, -52) * std::abs(sr)));
    if (cr != 0.0) worst = std::max(worst, std::abs(c - cr) / (std::ldexp(1.0, -52) * std::abs(cr)));
    detail::sin_cos_pair(x, 0.5 * x + 1.0, s0, c0, s1, c1);
    ASSERT_EQ(s0, s);
    ASSERT_EQ(c0, c);
    detail::sin_cos_pair(-0.25 * x, x, s0, c0, s1, c1);
    ASSERT_EQ(s1, s);
    ASSERT_EQ(c1, c);
  };
  std::mt19937_64 rng(23);
  for (double range : {1e-6, 0.5, 0.8, 1.6, 3.2, 7.0, 100.0, 1e5, 1e15}) {
    std::uniform_real_distribution<double> u(-range, range);
    for (int n = 0; n < 20000; ++n) check(u(rng));
  }
  for (int k = -70000; k <= 70000; k += 7) {
    const double x = k * (M_PI / 2);
    for (double y : {std::nextafter(x, -1e9), x, std::nextafter(x, 1e9)}) check(y);
  }
  for (double x : {1e-300, 3e7, -1e300, 1e300}) check(x);
  RecordProperty("worst_in_2^-52_of_value", std::to_string(worst));
  double s, c;
  detail::sin_cos(0.0, s, c);
  EXPECT_EQ(s, 0.0);
  EXPECT_EQ(c, 1.0);
}
