// Jacobians, velocity-product accelerations, energy, momentum and the centre
// of mass, checked by finite differences along q(t) = integrate(q, q̇, t) and by
// conservation laws.
#include <gtest/gtest.h>

#include <limits>

#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/energy.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/error.hpp"
#include "test_utils.hpp"

using namespace plume;
using namespace plume::test;

namespace {

std::vector<Model> kinematic_models() {
  std::vector<Model> out;
  for (const auto& nm : all_models()) out.push_back(load_model(nm.file, nm.root));
  for (std::uint64_t seed = 40; seed < 48; ++seed) out.push_back(random_tree(seed, 10));
  return out;
}

const ReferenceFrame kFrames[] = {ReferenceFrame::Local, ReferenceFrame::World, ReferenceFrame::LocalWorldAligned};

const char* name(ReferenceFrame r) {
  return r == ReferenceFrame::Local ? "Local" : r == ReferenceFrame::World ? "World" : "LocalWorldAligned";
}

}  // namespace

TEST(Jacobians, TimesVelocityMatchesForwardKinematics) {
  for (const Model& m : kinematic_models()) {
    SCOPED_TRACE(m.name());
    Data d(m);
    std::mt19937_64 g(1);
    const VectorX q = random_configuration(m, 1);
    const VectorX v = random_vector(g, m.nv(), 2.0);
    forward_kinematics(m, d, q, v);
    Matrix6X J(6, m.nv());
    for (int b = 1; b < m.nbodies(); ++b) {
      for (ReferenceFrame r : kFrames) {
        body_jacobian(m, d, b, r, J);
        EXPECT_TRUE((J * v).isApprox(body_velocity(m, d, b, r).vector(), 1e-12)) << name(r) << " body " << b;
        // The support-chain-only entry point gives the same matrix.
        Data d2(m);
        EXPECT_TRUE(body_jacobian(m, d2, q, b, r).isApprox(J, 1e-14));
      }
    }
  }
}

TEST(Jacobians, WrittenIntoABlockOfALargerMatrix) {
  // J may be a 6-row block of a taller matrix (outer stride > 6): every
  // column lands in the block, the rows around it stay untouched.
  for (const Model& m : kinematic_models()) {
    SCOPED_TRACE(m.name());
    Data d(m);
    const VectorX q = random_configuration(m, 5);
    for (int f = 0; f < static_cast<int>(m.frames().size()); ++f) {
      for (ReferenceFrame r : kFrames) {
        const Matrix6X J = frame_jacobian(m, d, q, f, r);
        MatrixX big = MatrixX::Constant(10, m.nv(), 7.0);
        Eigen::Ref<Matrix6X> block = big.middleRows(2, 6);
        frame_jacobian(m, d, q, f, r, block);
        EXPECT_EQ(big.middleRows(2, 6), J) << name(r) << " " << m.frames()[f].name;
        EXPECT_TRUE((big.topRows(2).array() == 7.0).all());
        EXPECT_TRUE((big.bottomRows(2).array() == 7.0).all());
      }
    }
  }
}

TEST(Jacobians, AJacobianWithTheWrongNumberOfColumnsIsRefused) {
  // The checked entry points refuse a J without nv columns, and say so.
  const Model m = load_model("pendulum.urdf", urdf::RootJoint::Fixed);
  Data d(m);
  const VectorX q = random_configuration(m, 3);
  for (const Eigen::Index cols : {Eigen::Index{0}, Eigen::Index{2}}) {
    Matrix6X J(6, cols);
    try {
      frame_jacobian(m, d, q, 0, ReferenceFrame::LocalWorldAligned, J);
      ADD_FAILURE() << cols << " columns accepted";
    } catch (const ArgumentError& e) {
      EXPECT_EQ(std::string(e.what()), "J is 6x" + std::to_string(cols) + ", expected 6x1 (6 or 3 rows, nv columns)");
    }
    EXPECT_THROW(body_jacobian(m, d, q, 1, ReferenceFrame::World, J), ArgumentError);
  }
}

TEST(Jacobians, PointAndFrameVelocitiesMatchFiniteDifferencesOfPositions) {
  for (const Model& m : kinematic_models()) {
    SCOPED_TRACE(m.name());
    Data d(m);
    std::mt19937_64 g(2);
    const VectorX q = random_configuration(m, 2);
    const VectorX v = random_vector(g, m.nv(), 2.0);
    const double h = 1e-6;
    const VectorX qp = integrate(m, q, v, h), qm = integrate(m, q, v, -h);
    Data dp(m), dm(m);
    forward_kinematics(m, dp, qp);
    forward_kinematics(m, dm, qm);
    update_frame_placements(m, dp);
    update_frame_placements(m, dm);
    for (int b = 1; b < m.nbodies(); ++b) {
      const Vec3 point = random_vec3(g, 0.3);
      const Vec3 fd = (dp.X0[b].inverse_transform_point(point) - dm.X0[b].inverse_transform_point(point)) / (2 * h);
      const Matrix3X Jp = point_jacobian(m, d, q, b, point, ReferenceFrame::LocalWorldAligned);
      EXPECT_TRUE((Jp * v).isApprox(fd, 1e-7)) << "body " << b;
    }
    for (int f = 0; f < static_cast<int>(m.frames().size()); ++f) {
      if (m.frames()[f].body == 0) continue;
      const Vec3 fd = (dp.Xframe[f].r() - dm.Xframe[f].r()) / (2 * h);
      const Matrix6X J = frame_jacobian(m, d, q, f, ReferenceFrame::LocalWorldAligned);
      EXPECT_TRUE((J.bottomRows<3>() * v).isApprox(fd, 1e-7)) << m.frames()[f].name;
      // Angular velocity: Ṙ Rᵀ = ω× in world axes.
      const Mat3 Rdot = (dp.Xframe[f].pose_rotation() - dm.Xframe[f].pose_rotation()) / (2 * h);
      const Mat3 R0 = 0.5 * (dp.Xframe[f].pose_rotation() + dm.Xframe[f].pose_rotation());  // R(0) + O(h²)
      const Mat3 W = Rdot * R0.transpose();
      const Vec3 w(W(2, 1), W(0, 2), W(1, 0));
      EXPECT_TRUE((J.topRows<3>() * v).isApprox(w, 1e-6)) << m.frames()[f].name;
    }
  }
}

TEST(Jacobians, FramesOnBodiesOnTheWorldMatchTheChainWalkAndFiniteDifferences) {
  // With q and world axes (World, LocalWorldAligned), a frame on a body whose
  // parent is the world takes a path of its own (no chain walk). Every joint
  // kind as that body, between bodies whose columns come before and after its
  // own, with a child and an offset frame: the same matrix as the overload
  // that reads forward_kinematics' placements, every other column exactly zero
  // in a J filled with NaN before, and J q̇ the finite difference of the frame
  // placement along q(t) = integrate(q, q̇, t).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::mt19937_64 g(23);
  const std::vector<JointSpec> specs = {
      JointSpec::revolute("r", Vec3::UnitX()),  JointSpec::revolute("r", Vec3::UnitY()),
      JointSpec::revolute("r", Vec3::UnitZ()),  JointSpec::revolute("r", random_vec3(g).normalized()),
      JointSpec::prismatic("r", Vec3::UnitX()), JointSpec::prismatic("r", Vec3::UnitY()),
      JointSpec::prismatic("r", Vec3::UnitZ()), JointSpec::prismatic("r", random_vec3(g).normalized()),
      JointSpec::planar("r"),                   JointSpec::free_flyer("r")};
  for (std::size_t k = 0; k < specs.size(); ++k) {
    for (const bool identity_tree : {true, false}) {
      SCOPED_TRACE("joint spec " + std::to_string(k) + (identity_tree ? ", identity Xtree" : ", random Xtree"));
      ModelBuilder b("root_" + std::to_string(k));
      const auto random_X = [&] { return Transform::from_pose(random_rotation(g), random_vec3(g, 0.5)); };
      b.add_body("before", 0, JointSpec::revolute("before", Vec3::UnitY()), random_X(), random_inertia(g));
      const int root = b.add_body("root", 0, specs[k], identity_tree ? Transform::Identity() : random_X(),
                                  random_inertia(g));
      b.add_body("child", root, JointSpec::revolute("child", Vec3::UnitX()), random_X(), random_inertia(g));
      b.add_body("after", 0, JointSpec::prismatic("after", Vec3::UnitZ()), random_X(), random_inertia(g));
      b.add_frame("tool", root, random_X());
      const Model m = b.build();
      const int f = m.get_frame("tool");
      const Joint& j = m.joint(root);
      const VectorX q = random_configuration(m, 11 + k);
      const VectorX v = random_vector(g, m.nv(), 2.0);
      Data d(m), dk(m);
      forward_kinematics(m, dk, q);
      for (const ReferenceFrame r : {ReferenceFrame::World, ReferenceFrame::LocalWorldAligned}) {
        Matrix6X J = Matrix6X::Constant(6, m.nv(), nan);
        frame_jacobian(m, d, q, f, r, J);
        Matrix6X Jk(6, m.nv());
        frame_jacobian(m, dk, f, r, Jk);
        EXPECT_TRUE(J.middleCols(j.v_index, j.nv).isApprox(Jk.middleCols(j.v_index, j.nv), 1e-14)) << name(r);
        EXPECT_TRUE((J.leftCols(j.v_index).array() == 0.0).all()) << name(r);
        EXPECT_TRUE((J.rightCols(m.nv() - j.v_index - j.nv).array() == 0.0).all()) << name(r);
        EXPECT_TRUE((Jk.leftCols(j.v_index).array() == 0.0).all()) << name(r);
        if (r != ReferenceFrame::LocalWorldAligned) continue;
        const double h = 1e-6;
        const Transform Xp = frame_placement(m, d, integrate(m, q, v, h), f);
        const Transform Xm = frame_placement(m, d, integrate(m, q, v, -h), f);
        const Vec3 fd = (Xp.pose_translation() - Xm.pose_translation()) / (2 * h);
        EXPECT_TRUE((J.bottomRows<3>() * v).isApprox(fd, 1e-7));
        const Mat3 W = (Xp.pose_rotation() - Xm.pose_rotation()) / (2 * h) *
                       (0.5 * (Xp.pose_rotation() + Xm.pose_rotation())).transpose();
        EXPECT_TRUE((J.topRows<3>() * v).isApprox(Vec3(W(2, 1), W(0, 2), W(1, 0)), 1e-6));
      }
    }
  }
}

TEST(Jacobians, ColumnsOutsideTheSupportChainAreZero) {
  // J filled with NaN before: the support chain's columns are the ones of the
  // overload reading forward_kinematics' placements, every other one is zero.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Model& m : kinematic_models()) {
    SCOPED_TRACE(m.name());
    const VectorX q = random_configuration(m, 9);
    Data d(m), dk(m);
    forward_kinematics(m, dk, q);
    for (int f = 0; f < static_cast<int>(m.frames().size()); ++f) {
      for (ReferenceFrame r : kFrames) {
        Matrix6X J = Matrix6X::Constant(6, m.nv(), nan);
        frame_jacobian(m, d, q, f, r, J);
        Matrix6X Jk(6, m.nv());
        frame_jacobian(m, dk, f, r, Jk);
        for (int c = 0; c < m.nv(); ++c) {
          const int body = m.dof_body(c);
          if (m.frames()[f].body != 0 && m.in_subtree(body, m.frames()[f].body)) {
            EXPECT_TRUE(J.col(c).isApprox(Jk.col(c), 1e-13) || (J.col(c) - Jk.col(c)).norm() < 1e-14)
                << name(r) << " " << m.frames()[f].name << " column " << c;
          } else {
            EXPECT_TRUE((J.col(c).array() == 0.0).all()) << name(r) << " " << m.frames()[f].name << " column " << c;
          }
        }
      }
    }
  }
}

TEST(Jacobians, VelocityProductMatchesFiniteDifferenceOfJacobianTimesVelocity) {
  // J̇ q̇ = d/dt (J(q(t)) q̇) along q(t) = integrate(q, q̇, t).
  for (const Model& m : kinematic_models()) {
    SCOPED_TRACE(m.name());
    std::mt19937_64 g(3);
    const VectorX q = random_configuration(m, 3);
    const VectorX v = random_vector(g, m.nv(), 2.0);
    const double h = 1e-6;
    Data d(m), dp(m), dm(m);
    forward_kinematics(m, d, q, v, VectorX::Zero(m.nv()));
    forward_kinematics(m, dp, integrate(m, q, v, h));
    forward_kinematics(m, dm, integrate(m, q, v, -h));
    Matrix6X Jp(6, m.nv()), Jm(6, m.nv());
    Matrix3X Pp(3, m.nv()), Pm(3, m.nv());
    for (int b = 1; b < m.nbodies(); ++b) {
      for (ReferenceFrame r : kFrames) {
        body_jacobian(m, dp, b, r, Jp);
        body_jacobian(m, dm, b, r, Jm);
        const VectorX fd = (Jp * v - Jm * v) / (2 * h);
        const Motion avp = body_velocity_product(m, d, b, r);
        EXPECT_LT((avp.vector() - fd).norm(), 1e-6 * std::max(1.0, fd.norm())) << name(r) << " body " << b;
      }
      const Vec3 point = random_vec3(g, 0.3);
      point_jacobian(m, dp, b, point, ReferenceFrame::LocalWorldAligned, Pp);
      point_jacobian(m, dm, b, point, ReferenceFrame::LocalWorldAligned, Pm);
      const Vec3 fd = (Pp * v - Pm * v) / (2 * h);
      EXPECT_LT((point_velocity_product(m, d, b, point, ReferenceFrame::LocalWorldAligned) - fd).norm(), 1e-6 * std::max(1.0, fd.norm()));
    }
    for (int f = 0; f < static_cast<int>(m.frames().size()); ++f) {
      for (ReferenceFrame r : kFrames) {
        frame_jacobian(m, dp, f, r, Jp);
        frame_jacobian(m, dm, f, r, Jm);
        const VectorX fd = (Jp * v - Jm * v) / (2 * h);
        EXPECT_LT((frame_velocity_product(m, d, f, r).vector() - fd).norm(), 1e-6 * std::max(1.0, fd.norm()))
            << name(r) << " " << m.frames()[f].name;
      }
    }
  }
}

TEST(Energy, KineticEnergyIsHalfVHV) {
  for (const Model& m : kinematic_models()) {
    Data d(m);
    std::mt19937_64 g(4);
    const VectorX q = random_configuration(m, 4);
    const VectorX v = random_vector(g, m.nv());
    const MatrixX H = crba(m, d, q);
    EXPECT_NEAR(kinetic_energy(m, d, q, v), 0.5 * v.dot(H * v), 1e-12 * std::max(1.0, v.dot(H * v)));
  }
}

TEST(Energy, CentreOfMassJacobianAndMomentum) {
  for (const Model& m : kinematic_models()) {
    SCOPED_TRACE(m.name());
    Data d(m);
    std::mt19937_64 g(5);
    const VectorX q = random_configuration(m, 5);
    const VectorX v = random_vector(g, m.nv());
    const double h = 1e-6;
    const Vec3 cp = center_of_mass(m, d, integrate(m, q, v, h));
    const Vec3 cm = center_of_mass(m, d, integrate(m, q, v, -h));
    const Vec3 fd = (cp - cm) / (2 * h);
    const Matrix3X Jc = com_jacobian(m, d, q);
    EXPECT_TRUE((Jc * v).isApprox(fd, 1e-7) || (Jc * v - fd).norm() < 1e-8);
    // The linear momentum is the total moving mass times the COM velocity.
    const Force hG = spatial_momentum(m, d, q, v);
    EXPECT_TRUE(hG.linear().isApprox(m.total_mass() * Jc * v, 1e-10) || hG.linear().norm() < 1e-12);
  }
}

TEST(Energy, FreeFloatingMomentumIsConservedUnderInternalTorques) {
  // No gravity, a free-flyer root, arbitrary torques on the internal joints
  // only: the spatial momentum does not change (d/dt by finite differences
  // along the ABA motion). With gravity its rate is the gravity wrench.
  for (std::uint64_t seed = 60; seed < 66; ++seed) {
    for (const bool with_gravity : {false, true}) {
      TreeOptions opt;
      opt.gravity = with_gravity ? Vec3(0, 0, -9.81) : Vec3::Zero();
      opt.one_subtree = true;
      const Model m = random_tree(seed, 9, opt);
      Data d(m);
      std::mt19937_64 g(seed);
      const VectorX q = random_configuration(m, seed);
      const VectorX v = random_vector(g, m.nv());
      // Light random bodies reach large accelerations: keep the torques
      // moderate so that the O(h²) error of the difference stays small.
      VectorX tau = random_vector(g, m.nv(), 0.5);
      tau.head<6>().setZero();
      const VectorX a = aba(m, d, q, v, tau);
      const double h = 1e-6;
      auto momentum = [&](double t) {
        return spatial_momentum(m, d, integrate(m, q, VectorX(v * t + 0.5 * a * t * t), 1.0), VectorX(v + a * t)).vector();
      };
      const Vec6 rate = (momentum(h) - momentum(-h)) / (2 * h);
      const Vec3 c = center_of_mass(m, d, q);
      const double M = m.total_mass();
      Vec6 gravity_wrench;
      gravity_wrench << c.cross(M * opt.gravity), M * opt.gravity;
      EXPECT_LT((rate - gravity_wrench).norm(), 1e-6 * std::max(1.0, momentum(0).norm())) << "seed " << seed;
    }
  }
}

// unchecked::forward_kinematics_motion from the placements of a pass at q
// gives forward_kinematics(q, v, a)'s velocities and accelerations bit for
// bit, after a placements-only pass and after a full pass at the same q.
TEST(Kinematics, MotionFromPlacementsIsTheFullPassBitForBit) {
  for (const Model& m : kinematic_models()) {
    SCOPED_TRACE(m.name());
    Data full(m), reuse(m);
    std::mt19937_64 g(7);
    for (int trial = 0; trial < 3; ++trial) {
      const VectorX q = random_configuration(m, 10 + static_cast<std::uint64_t>(trial));
      const VectorX v = random_vector(g, m.nv(), 2.0), a = random_vector(g, m.nv(), 3.0);
      forward_kinematics(m, full, q, v, a);
      if (trial == 1) {
        forward_kinematics(m, reuse, q, a, v);  // a full pass at q with other rates
      } else {
        forward_kinematics(m, reuse, q);
      }
      unchecked::forward_kinematics_motion(m, reuse, v, a);
      for (int i = 0; i < m.nbodies(); ++i) {
        for (int k = 0; k < 6; ++k) {
          EXPECT_EQ(full.v[i].vector()[k], reuse.v[i].vector()[k]) << "body " << i;
          EXPECT_EQ(full.a[i].vector()[k], reuse.a[i].vector()[k]) << "body " << i;
        }
      }
    }
  }
}

// unchecked::forward_kinematics_velocities from the placements of a pass at
// q gives forward_kinematics(q, v)'s velocities (and forward_kinematics(q, v,
// a)'s), bit for bit, and leaves data.a as it was.
TEST(Kinematics, VelocitiesFromPlacementsAreTheFullPassBitForBit) {
  for (const Model& m : kinematic_models()) {
    SCOPED_TRACE(m.name());
    Data full(m), full3(m), reuse(m);
    std::mt19937_64 g(11);
    for (int trial = 0; trial < 3; ++trial) {
      const VectorX q = random_configuration(m, 20 + static_cast<std::uint64_t>(trial));
      const VectorX v = random_vector(g, m.nv(), 2.0), a = random_vector(g, m.nv(), 3.0);
      forward_kinematics(m, full, q, v);
      forward_kinematics(m, full3, q, v, a);
      if (trial == 1) {
        forward_kinematics(m, reuse, q, a, v);  // a full pass at q with other rates
      } else {
        forward_kinematics(m, reuse, q);
      }
      std::vector<Motion> a_before(reuse.a.begin(), reuse.a.end());
      unchecked::forward_kinematics_velocities(m, reuse, v);
      for (int i = 0; i < m.nbodies(); ++i) {
        for (int k = 0; k < 6; ++k) {
          EXPECT_EQ(full.v[i].vector()[k], reuse.v[i].vector()[k]) << "body " << i;
          EXPECT_EQ(full3.v[i].vector()[k], reuse.v[i].vector()[k]) << "body " << i;
          EXPECT_EQ(a_before[static_cast<std::size_t>(i)].vector()[k], reuse.a[i].vector()[k]) << "body " << i;
        }
      }
    }
  }
}
