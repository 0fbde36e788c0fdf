// ModelBuilder validation and the configuration helpers.
#include <gtest/gtest.h>

#include <cmath>

#include "plume/algorithms/kinematics.hpp"
#include "plume/error.hpp"
#include "test_utils.hpp"

using namespace plume;
using plume::test::random_tree;

namespace {

RigidInertia unit_inertia() { return RigidInertia::from_mass_com_inertia(1.0, Vec3::Zero(), 0.01 * Mat3::Identity()); }

// Expects `f` to throw an exception of type E whose message contains every needle.
template <class E, class F>
void expect_error(F&& f, std::initializer_list<const char*> needles) {
  try {
    f();
    ADD_FAILURE() << "no exception thrown";
  } catch (const E& e) {
    for (const char* n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(ModelBuilder, IndicesRangesAndParents) {
  const Model m = random_tree(7, 12);
  EXPECT_EQ(m.nbodies(), 13);
  int nq = 0, nv = 0;
  for (int i = 1; i < m.nbodies(); ++i) {
    EXPECT_LT(m.parent(i), i);
    EXPECT_EQ(m.joint(i).q_index, nq);
    EXPECT_EQ(m.joint(i).v_index, nv);
    EXPECT_EQ(m.joint(i).nq, joint_nq(m.joint(i).type));
    nq += m.joint(i).nq;
    nv += m.joint(i).nv;
  }
  EXPECT_EQ(m.nq(), nq);
  EXPECT_EQ(m.nv(), nv);
  // dof_parent chains follow the tree.
  for (int k = 0; k < m.nv(); ++k) {
    const int p = m.dof_parent(k);
    if (p >= 0) {
      EXPECT_LT(p, k);
      EXPECT_TRUE(m.in_subtree(m.dof_body(p), m.dof_body(k)));
    }
  }
  // Every body has a frame named after it.
  for (int i = 0; i < m.nbodies(); ++i) EXPECT_EQ(m.frames()[m.get_frame(m.body_name(i))].body, i);
}

TEST(ModelBuilder, RejectsNonPhysicalInertias) {
  auto build_with = [](const RigidInertia& I) {
    ModelBuilder b("bad");
    b.add_body("link", 0, JointSpec::revolute("hinge", Vec3::UnitZ()), Transform::Identity(), I);
    return b.build();
  };
  expect_error<ModelError>([&] { build_with(RigidInertia(-1.0, Vec3::Zero(), Mat3::Identity())); },
                           {"link", "negative mass"});
  Mat3 not_psd = Mat3::Identity();
  not_psd(2, 2) = -0.5;
  expect_error<ModelError>([&] { build_with(RigidInertia::from_mass_com_inertia(1.0, Vec3::Zero(), not_psd)); },
                           {"link", "positive semi-definite"});
  const Mat3 triangle = Vec3(0.1, 0.1, 0.5).asDiagonal();
  expect_error<ModelError>([&] { build_with(RigidInertia::from_mass_com_inertia(1.0, Vec3::Zero(), triangle)); },
                           {"link", "triangle inequality"});
  expect_error<ModelError>(
      [&] { build_with(RigidInertia(std::nan(""), Vec3::Zero(), Mat3::Identity())); }, {"link", "non-finite"});
  // A massless body that carries nothing would make H singular.
  expect_error<ModelError>([&] { build_with(RigidInertia::Zero()); }, {"link", "hinge", "no mass", "singular"});
}

TEST(ModelBuilder, RejectsBadJoints) {
  ModelBuilder b("bad");
  b.add_body("a", 0, JointSpec::revolute("zero_axis", Vec3::Zero()), Transform::Identity(), unit_inertia());
  expect_error<ModelError>([&] { b.build(); }, {"zero_axis", "axis is zero"});

  ModelBuilder c("dup");
  c.add_body("a", 0, JointSpec::revolute("j", Vec3::UnitX()), Transform::Identity(), unit_inertia());
  c.add_body("b", 1, JointSpec::revolute("j", Vec3::UnitX()), Transform::Identity(), unit_inertia());
  expect_error<ModelError>([&] { c.build(); }, {"duplicate joint name", "'j'"});

  ModelBuilder d("limits");
  d.add_body("a", 0, JointSpec::revolute("j", Vec3::UnitX(), 1.0, -1.0), Transform::Identity(), unit_inertia());
  expect_error<ModelError>([&] { d.build(); }, {"'j'", "lower limit"});

  ModelBuilder e("parent");
  expect_error<ModelError>(
      [&] { e.add_body("a", 5, JointSpec::revolute("j", Vec3::UnitX()), Transform::Identity(), unit_inertia()); },
      {"'a'", "parent index 5"});
}

TEST(ModelBuilder, NormalisesAxesAndPicksKernels) {
  ModelBuilder b("axes");
  b.add_body("a", 0, JointSpec::revolute("jx", Vec3(2, 0, 0)), Transform::Identity(), unit_inertia());
  b.add_body("b", 1, JointSpec::revolute("jn", Vec3(1, 1, 0)), Transform::Identity(), unit_inertia());
  b.add_body("c", 2, JointSpec::continuous("jc", Vec3::UnitZ()), Transform::Identity(), unit_inertia());
  const Model m = b.build();
  EXPECT_TRUE(m.joint(1).axis.isApprox(Vec3::UnitX()));
  EXPECT_EQ(m.joint(1).kind, JointKind::RevoluteX);
  EXPECT_NEAR(m.joint(2).axis.norm(), 1.0, 1e-15);
  EXPECT_EQ(m.joint(2).kind, JointKind::RevoluteAxis);
  EXPECT_EQ(m.joint(3).kind, JointKind::RevoluteZ);
  EXPECT_TRUE(std::isinf(m.upper_position_limit()(2)));
}

TEST(ModelBuilder, QuarterTurnTreeRotationsAreStoredAsExactPermutations) {
  // rpy = (π/2, 0, 0) as a double gives cos = 6.1e-17 entries: stored as the
  // signed permutation exactly, and the kernels told so; a rotation 1e-9
  // away from one, a slider and the prismatic kernels are left as they are.
  ModelBuilder b("turns");
  const Transform quarter(axis_rotation(Vec3::UnitX(), 1.5707963267948966).transpose(), Vec3(0, 0, 0.2));
  const Transform almost(axis_rotation(Vec3::UnitX(), 1.5707963267948966 + 1e-9).transpose(), Vec3::Zero());
  b.add_body("a", 0, JointSpec::revolute("j1", Vec3::UnitZ()), quarter, unit_inertia());
  b.add_body("b", 1, JointSpec::revolute("j2", Vec3::UnitZ()), almost, unit_inertia());
  b.add_body("c", 2, JointSpec::revolute("j3", Vec3::UnitY()), Transform::Identity(), unit_inertia());
  b.add_body("d", 3, JointSpec::prismatic("j4", Vec3::UnitY()), Transform::Identity(), unit_inertia());
  const Model m = b.build();
  EXPECT_NE(quarter.E()(1, 1), 0.0);
  Mat3 P;
  P << 1, 0, 0, 0, 0, 1, 0, -1, 0;
  EXPECT_EQ(m.Xtree(1).E(), P);
  EXPECT_TRUE(m.joint(1).tree_rotation_permutation);
  EXPECT_FALSE(m.joint(1).tree_rotation_identity);
  // Row A = z of P has its 1 in column 1; rows x, y in columns 0 and 2.
  EXPECT_EQ(m.joint(1).tree_cols[0], 1);
  EXPECT_EQ(m.joint(1).tree_cols[1], 0);
  EXPECT_EQ(m.joint(1).tree_cols[2], 2);
  EXPECT_EQ(m.Xtree(2).E(), almost.E());
  EXPECT_FALSE(m.joint(2).tree_rotation_permutation);
  EXPECT_TRUE(m.joint(3).tree_rotation_identity);
  EXPECT_FALSE(m.joint(3).tree_rotation_permutation);
  EXPECT_EQ(m.joint(4).kind, JointKind::PrismaticY);
}

TEST(Configuration, NeutralAndRandomRespectLimitsAndAreReproducible) {
  const Model m = random_tree(11, 15);
  const VectorX q0 = neutral_configuration(m);
  EXPECT_NO_THROW(check_configuration(m, q0));
  const VectorX qa = random_configuration(m, 42);
  const VectorX qb = random_configuration(m, 42);
  const VectorX qc = random_configuration(m, 43);
  EXPECT_EQ(qa, qb);
  EXPECT_NE(qa, qc);
  EXPECT_NO_THROW(check_configuration(m, qa));
  for (int k = 0; k < m.nq(); ++k) {
    EXPECT_GE(qa(k), m.lower_position_limit()(k));
    EXPECT_LE(qa(k), m.upper_position_limit()(k));
  }
}

TEST(Configuration, DifferenceInvertsIntegrate) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const Model m = random_tree(seed, 10);
    std::mt19937_64 g(seed);
    const VectorX q = random_configuration(m, seed);
    const VectorX v = test::random_vector(g, m.nv(), 2.0);
    for (double dt : {1e-3, 0.1, 0.7}) {
      const VectorX q1 = integrate(m, q, v, dt);
      EXPECT_NO_THROW(check_configuration(m, q1));
      EXPECT_TRUE(difference(m, q, q1).isApprox(v * dt, 1e-10)) << "seed " << seed << " dt " << dt;
    }
    // Integrating the difference lands on the target.
    const VectorX qt = random_configuration(m, seed + 100);
    const VectorX back = integrate(m, q, difference(m, q, qt), 1.0);
    EXPECT_LT(difference(m, qt, back).norm(), 1e-9);
  }
}

// integrate(…, out): the values of the returning form, into a vector of
// any size, into q itself; refused into v.
TEST(Configuration, IntegrateIntoOutputIsTheReturningForm) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const Model m = random_tree(seed, 10);
    std::mt19937_64 g(seed);
    const VectorX q = random_configuration(m, seed);
    VectorX v = test::random_vector(g, m.nv(), 2.0);
    const VectorX want = integrate(m, q, v, 0.3);  // (v: non-const for the refused call below)
    VectorX out(3), in_place = q;
    integrate(m, q, v, 0.3, out);
    integrate(m, in_place, v, 0.3, in_place);
    for (int k = 0; k < m.nq(); ++k) {
      EXPECT_EQ(out(k), want(k)) << "seed " << seed;
      EXPECT_EQ(in_place(k), want(k)) << "seed " << seed;
    }
    EXPECT_THROW(integrate(m, q, v, 0.3, v), ArgumentError);
  }
}

TEST(Configuration, DerivativeMatchesFiniteDifferenceOfIntegrate) {
  const Model m = random_tree(5, 12);
  std::mt19937_64 g(5);
  const VectorX q = random_configuration(m, 5);
  const VectorX v = test::random_vector(g, m.nv());
  VectorX qdot(m.nq());
  configuration_derivative(m, q, v, qdot);
  const double h = 1e-6;
  const VectorX fd = (integrate(m, q, v, h) - integrate(m, q, v, -h)) / (2 * h);
  EXPECT_TRUE(qdot.isApprox(fd, 1e-8));
}

TEST(Configuration, FreeFlyerVelocityIsInTheBodyFrame) {
  // A free body at a rotated orientation moving with body-frame v = [0; e_x]
  // moves along its own x axis in the world.
  ModelBuilder b("free");
  b.add_body("body", 0, JointSpec::free_flyer("root_joint"), Transform::Identity(), unit_inertia());
  const Model m = b.build();
  VectorX q = neutral_configuration(m);
  const Eigen::Quaterniond r(Eigen::AngleAxisd(M_PI / 2, Vec3::UnitZ()));  // x_body = y_world
  q.segment<4>(3) = r.coeffs();
  VectorX v = VectorX::Zero(6);
  v(3) = 1.0;
  const VectorX q1 = integrate(m, q, v, 0.5);
  EXPECT_TRUE(q1.head<3>().isApprox(Vec3(0, 0.5, 0), 1e-12));
  Data d(m);
  forward_kinematics(m, d, q1);
  EXPECT_TRUE(body_rotation(d, 1).isApprox(r.toRotationMatrix(), 1e-12));
}

TEST(Configuration, ChecksNameTheArgumentAndIndex) {
  const Model m = random_tree(3, 4);
  VectorX q = neutral_configuration(m);
  expect_error<ArgumentError>([&] { check_configuration(m, VectorX::Zero(m.nq() + 1)); },
                              {"q has", "entries, expected"});
  q(2) = std::nan("");
  expect_error<ArgumentError>([&] { check_configuration(m, q); }, {"q[2]", "nan"});
  q = neutral_configuration(m);
  q.segment<4>(3) *= 2.0;
  expect_error<ArgumentError>([&] { check_configuration(m, q); }, {"quaternion", "root_joint"});
}
