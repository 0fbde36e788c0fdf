// Contact forces and impulses against closed forms (Featherstone §11.5–11.7,
// docs/theory.md §3 and §5) and conservation laws.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>

#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/energy.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "plume/dynamics/contact_dynamics.hpp"
#include "plume/error.hpp"
#include "test_utils.hpp"

using namespace plume;
using namespace plume::test;

namespace {

constexpr double g = 9.81;

// A free body carrying one collision shape; the inertia is a solid box,
// sphere or whatever `Ic` says.
int add_free_body(ModelBuilder& b, const std::string& name, const Geometry& geometry, double mass, const Mat3& Ic) {
  const int body = b.add_body(name, 0, JointSpec::free_flyer(name + "_joint"), Transform::Identity(),
                              RigidInertia::from_mass_com_inertia(mass, Vec3::Zero(), Ic));
  CollisionShape s;
  s.name = name + "_shape";
  s.link = name;
  s.body = body;
  s.geometry = geometry;
  b.add_collision(s);
  return body;
}

Mat3 box_inertia(double m, const Vec3& size) {
  const Vec3 s2 = size.cwiseProduct(size);
  return Vec3(m * (s2.y() + s2.z()) / 12, m * (s2.x() + s2.z()) / 12, m * (s2.x() + s2.y()) / 12).asDiagonal();
}

Mat3 sphere_inertia(double m, double r) { return (0.4 * m * r * r) * Mat3::Identity(); }

// Free-flyer configuration from a pose.
void set_pose(const Model& m, VectorX& q, int body, const Mat3& R, const Vec3& p) {
  const Joint& j = m.joint(body);
  q.segment<3>(j.q_index) = p;
  q.segment<4>(j.q_index + 3) = Eigen::Quaterniond(R).coeffs();
}

// World-frame linear velocity v and angular velocity w → body-frame [ω; v].
void set_velocity(const Model& m, VectorX& v, int body, const Mat3& R, const Vec3& lin, const Vec3& ang) {
  const Joint& j = m.joint(body);
  v.segment<3>(j.v_index) = R.transpose() * ang;
  v.segment<3>(j.v_index + 3) = R.transpose() * lin;
}

std::vector<Contact> detect(const Model& m, Data& d, const VectorX& q, const std::vector<EnvironmentShape>& env,
                            double margin = 1e-9) {
  DetectionOptions opt;
  opt.margin = margin;
  ContactDetector det(m, env, opt);
  forward_kinematics(m, d, q);
  std::vector<Contact> c;
  det.detect(m, d, c);
  return c;
}

// Classical acceleration of the free body's origin, world frame (at ω = 0 or
// in general: R (v̇ + ω × v)).
Vec3 linear_acceleration(const Model& m, const VectorX& q, const VectorX& v, const VectorX& ddq, int body) {
  const Joint& j = m.joint(body);
  const Mat3 R = Eigen::Quaterniond(q.segment<4>(j.q_index + 3)).toRotationMatrix();
  const Vec3 w = v.segment<3>(j.v_index), lin = v.segment<3>(j.v_index + 3);
  return R * (Vec3(ddq.segment<3>(j.v_index + 3)) + w.cross(lin));
}

}  // namespace

TEST(ContactDynamics, BoxRestingFlatCarriesItsWeight) {
  ModelBuilder b("box");
  const Vec3 size(0.4, 0.3, 0.2);
  const double mass = 2.0;
  const int box = add_free_body(b, "box", Box{size}, mass, box_inertia(mass, size));
  const Model m = b.build();
  Data d(m);
  VectorX q = neutral_configuration(m);
  set_pose(m, q, box, Mat3::Identity(), Vec3(0.3, -0.2, 0.1));
  const VectorX v = VectorX::Zero(m.nv());
  const std::vector<EnvironmentShape> env{ground_plane()};
  const std::vector<Contact> contacts = detect(m, d, q, env);
  ASSERT_EQ(contacts.size(), 4u);
  ContactSolver solver(m);
  for (FrictionModel fm : {FrictionModel::None, FrictionModel::PolyhedralCone, FrictionModel::Box}) {
    ContactSolveOptions opt;
    opt.friction = fm;
    opt.pgs.tolerance = 1e-13;  // the iterative Box model: converge well below the checks
    opt.pgs.max_iterations = 100000;
    const ContactSolution& s = solver.solve(m, d, q, v, VectorX::Zero(m.nv()), contacts, VectorX::Constant(4, 0.8), opt);
    ASSERT_EQ(s.status, ContactStatus::Solved) << s.message;
    EXPECT_NEAR(s.lambda.sum(), mass * g, 1e-9 * mass * g);
    EXPECT_LT(s.ddq.norm(), 1e-9);
    EXPECT_GE(s.lambda.minCoeff(), -1e-12);
    EXPECT_EQ(s.current.size(), 4u);
    if (fm == FrictionModel::None) {
      // Four coplanar normals span only three directions: M is PSD and
      // singular, and a basic solution pushes with at most three corners.
      const Eigen::SelfAdjointEigenSolver<MatrixX> eig(MatrixX(solver.M()));
      EXPECT_LT(eig.eigenvalues().minCoeff(), 1e-12 * eig.eigenvalues().maxCoeff());
      EXPECT_GE(eig.eigenvalues().minCoeff(), -1e-12 * eig.eigenvalues().maxCoeff());
      EXPECT_LE(s.active.size(), 3u);
    }
  }
}

namespace {

struct Incline {
  double theta;
  Mat3 R;   // box or ball orientation: its z along the incline normal
  Vec3 n;   // incline normal
  Vec3 s;   // down-slope direction
  EnvironmentShape plane;
  explicit Incline(double th) : theta(th) {
    R = Eigen::AngleAxisd(th, Vec3::UnitY()).toRotationMatrix();
    n = R * Vec3::UnitZ();  // (sin θ, 0, cos θ): the surface descends along +x
    s = R * Vec3::UnitX();  // (cos θ, 0, −sin θ)
    plane = ground_plane("incline", n, Vec3::Zero());
  }
};

}  // namespace

TEST(ContactDynamics, BlockOnInclineSticksIffMuExceedsTanTheta) {
  const Incline inc(0.3);  // tan θ = 0.309
  ModelBuilder b("block");
  const Vec3 size(0.2, 0.2, 0.1);
  const double mass = 1.5;
  const int box = add_free_body(b, "block", Box{size}, mass, box_inertia(mass, size));
  const Model m = b.build();
  Data d(m);
  VectorX q = neutral_configuration(m);
  set_pose(m, q, box, inc.R, 0.05 * inc.n);
  const std::vector<Contact> contacts = detect(m, d, q, {inc.plane});
  ASSERT_EQ(contacts.size(), 4u);
  ContactSolver solver(m);
  const VectorX tau = VectorX::Zero(m.nv());
  // At rest with μ = 0.6 > tan θ: it sticks (cone: μ cos(π/k) > tan θ too).
  for (FrictionModel fm : {FrictionModel::PolyhedralCone, FrictionModel::Box}) {
    ContactSolveOptions opt;
    opt.friction = fm;
    opt.pgs.tolerance = 1e-13;
    opt.pgs.max_iterations = 100000;
    const ContactSolution& s =
        solver.solve(m, d, q, VectorX::Zero(m.nv()), tau, contacts, VectorX::Constant(4, 0.6), opt);
    ASSERT_EQ(s.status, ContactStatus::Solved) << s.message;
    EXPECT_LT(s.ddq.norm(), 1e-8) << "friction model " << static_cast<int>(fm);
  }
  // Sliding down at 0.5 m/s with μ = 0.2 < tan θ: a = g (sin θ − μ cos θ) exactly.
  VectorX v = VectorX::Zero(m.nv());
  set_velocity(m, v, box, inc.R, 0.5 * inc.s, Vec3::Zero());
  ContactSolveOptions cone;
  cone.friction = FrictionModel::PolyhedralCone;
  const ContactSolution& s = solver.solve(m, d, q, v, tau, contacts, VectorX::Constant(4, 0.2), cone);
  ASSERT_EQ(s.status, ContactStatus::Solved) << s.message;
  for (ContactMode mode : s.mode) EXPECT_EQ(mode, ContactMode::Sliding);
  const Vec3 a = linear_acceleration(m, q, v, s.ddq, box);
  EXPECT_NEAR(a.dot(inc.s), g * (std::sin(inc.theta) - 0.2 * std::cos(inc.theta)), 1e-9);
  EXPECT_NEAR(a.dot(inc.n), 0.0, 1e-9);
  EXPECT_LT(s.ddq.head<3>().norm(), 1e-9);  // no rotation while all four corners push
  // At rest with μ = 0.2: it starts slipping, accelerating down the slope no
  // faster than frictionless and no slower than the full cone allows.
  const ContactSolution& slip =
      solver.solve(m, d, q, VectorX::Zero(m.nv()), tau, contacts, VectorX::Constant(4, 0.2), cone);
  ASSERT_EQ(slip.status, ContactStatus::Solved) << slip.message;
  const Vec3 a0 = linear_acceleration(m, q, VectorX::Zero(m.nv()), slip.ddq, box);
  EXPECT_GT(a0.dot(inc.s), g * (std::sin(inc.theta) - 0.2 * std::cos(inc.theta)) - 1e-9);
  EXPECT_LT(a0.norm(), g * std::sin(inc.theta) + 1e-9);
  bool slipping = false;
  for (ContactMode mode : slip.mode) slipping |= mode == ContactMode::Slipping;
  EXPECT_TRUE(slipping);
}

TEST(ContactDynamics, BallRollsDownAnInclineWithFiveSevenths) {
  const Incline inc(0.4);
  const double r = 0.1, mass = 1.0;
  ModelBuilder b("ball");
  const int ball = add_free_body(b, "ball", Sphere{r}, mass, sphere_inertia(mass, r));
  const Model m = b.build();
  Data d(m);
  VectorX q = neutral_configuration(m);
  set_pose(m, q, ball, Mat3::Identity(), r * inc.n);
  const std::vector<Contact> contacts = detect(m, d, q, {inc.plane});
  ASSERT_EQ(contacts.size(), 1u);
  ContactSolver solver(m);
  const double mu = 0.3;  // ≥ (2/7) tan θ = 0.121
  for (FrictionModel fm : {FrictionModel::PolyhedralCone, FrictionModel::Box}) {
    ContactSolveOptions opt;
    opt.friction = fm;
    const VectorX v = VectorX::Zero(m.nv());
    const ContactSolution& s = solver.solve(m, d, q, v, VectorX::Zero(m.nv()), contacts, VectorX::Constant(1, mu), opt);
    ASSERT_EQ(s.status, ContactStatus::Solved) << s.message;
    const Vec3 a = linear_acceleration(m, q, v, s.ddq, ball);
    EXPECT_NEAR(a.dot(inc.s), 5.0 / 7.0 * g * std::sin(inc.theta), 1e-9);
    EXPECT_NEAR(a.dot(inc.n), 0.0, 1e-9);
    // Rolling: the contact point does not accelerate along the slope, α × (−r n) + a = 0.
    const Vec3 alpha = s.ddq.head<3>();  // body frame = world frame here (R = 1)
    EXPECT_NEAR((a + alpha.cross(-r * inc.n)).dot(inc.s), 0.0, 1e-9);
    EXPECT_NEAR(s.lambda(0), mass * g * std::cos(inc.theta), 1e-9);
  }
}

namespace {

struct TwoSpheres {
  Model m;
  int a, b;
  double ra = 0.1, rb = 0.15, ma = 1.0, mb = 2.0;
  TwoSpheres() {
    ModelBuilder builder("spheres");
    builder.set_gravity(Vec3::Zero());
    a = add_free_body(builder, "a", Sphere{ra}, ma, sphere_inertia(ma, ra));
    b = add_free_body(builder, "b", Sphere{rb}, mb, sphere_inertia(mb, rb));
    m = builder.build();
  }
};

}  // namespace

TEST(ContactDynamics, TwoSpheresImpactMatchesEquation1165) {
  TwoSpheres sp;
  const Model& m = sp.m;
  Data d(m);
  std::mt19937_64 gen(3);
  ContactSolver solver(m);
  for (int trial = 0; trial < 20; ++trial) {
    const Vec3 n = random_vec3(gen).normalized();
    VectorX q = neutral_configuration(m);
    set_pose(m, q, sp.a, random_rotation(gen), Vec3::Zero());
    set_pose(m, q, sp.b, random_rotation(gen), (sp.ra + sp.rb) * n);
    const std::vector<Contact> contacts = detect(m, d, q, {});
    ASSERT_EQ(contacts.size(), 1u);
    // Velocities with an approaching normal component, and spins.
    const Vec3 v1 = random_vec3(gen) + 1.0 * n, v2 = random_vec3(gen) - 1.0 * n;
    VectorX v = VectorX::Zero(m.nv());
    const Mat3 Ra = Eigen::Quaterniond(q.segment<4>(3)).toRotationMatrix();
    const Mat3 Rb = Eigen::Quaterniond(q.segment<4>(10)).toRotationMatrix();
    set_velocity(m, v, sp.a, Ra, v1, random_vec3(gen));
    set_velocity(m, v, sp.b, Rb, v2, random_vec3(gen));
    const double e = uniform(gen, 0.0, 1.0);
    const ImpactSolution& s = solver.impact(m, d, q, v, contacts, VectorX::Constant(1, e), VectorX::Zero(1));
    ASSERT_EQ(s.status, ContactStatus::Solved) << s.message;
    // (11.65): λ = −(1 + e) n·(v₂ − v₁) / (1/m₁ + 1/m₂) (the normal passes through both centres).
    const double lambda = -(1 + e) * n.dot(v2 - v1) / (1 / sp.ma + 1 / sp.mb);
    EXPECT_NEAR(s.impulse(0), lambda, 1e-12 * std::abs(lambda) + 1e-14);
    const Vec3 v1p = Ra * Vec3(s.v_plus.segment<3>(3)), v2p = Rb * Vec3(s.v_plus.segment<3>(9));
    EXPECT_TRUE(v1p.isApprox(v1 - lambda / sp.ma * n, 1e-12));
    EXPECT_TRUE(v2p.isApprox(v2 + lambda / sp.mb * n, 1e-12));
    EXPECT_NEAR(s.zeta_plus(0), -e * s.zeta_minus(0), 1e-12);
    EXPECT_LE(s.kinetic_after, s.kinetic_before * (1 + 1e-12));
  }
}

TEST(ContactDynamics, StickingImpactMatchesEquation1172) {
  // Two spheres hitting obliquely with enough friction that sliding stops:
  // the impulse ι on b solves (K_a + K_b) ι = −(1 + E) u, E = e n nᵀ, with the
  // point compliances K = 1/m − r× I⁻¹ r× (11.66–11.72, docs/theory.md §5).
  TwoSpheres sp;
  const Model& m = sp.m;
  Data d(m);
  std::mt19937_64 gen(9);
  ContactSolver solver(m);
  ImpactOptions opt;
  opt.friction = FrictionModel::PolyhedralCone;
  opt.cone_directions = 8;
  int compared = 0;
  for (int trial = 0; trial < 10; ++trial) {
    const Vec3 n = random_vec3(gen).normalized();
    VectorX q = neutral_configuration(m);
    set_pose(m, q, sp.a, Mat3::Identity(), Vec3::Zero());
    set_pose(m, q, sp.b, Mat3::Identity(), (sp.ra + sp.rb) * n);
    const std::vector<Contact> contacts = detect(m, d, q, {});
    ASSERT_EQ(contacts.size(), 1u);
    const Vec3 v1 = 0.3 * random_vec3(gen) + 1.0 * n, v2 = 0.3 * random_vec3(gen) - 1.0 * n;
    const Vec3 w1 = random_vec3(gen), w2 = random_vec3(gen);
    VectorX v = VectorX::Zero(m.nv());
    set_velocity(m, v, sp.a, Mat3::Identity(), v1, w1);
    set_velocity(m, v, sp.b, Mat3::Identity(), v2, w2);
    const double e = uniform(gen, 0.0, 1.0);
    const ImpactSolution& s = solver.impact(m, d, q, v, contacts, VectorX::Constant(1, e), VectorX::Constant(1, 50.0), opt);
    ASSERT_EQ(s.status, ContactStatus::Solved) << s.message;
    const Vec3 r1 = sp.ra * n, r2 = -sp.rb * n;  // centre → contact point
    const Mat3 K1 = Mat3::Identity() / sp.ma - skew(r1) * sphere_inertia(sp.ma, sp.ra).inverse() * skew(r1);
    const Mat3 K2 = Mat3::Identity() / sp.mb - skew(r2) * sphere_inertia(sp.mb, sp.rb).inverse() * skew(r2);
    const Vec3 u = (v2 + w2.cross(r2)) - (v1 + w1.cross(r1));
    const Vec3 iota = -(K1 + K2).inverse() * (u + e * n.dot(u) * n);
    const Vec3 v2p = v2 + iota / sp.mb, w2p = w2 + sphere_inertia(sp.mb, sp.rb).inverse() * r2.cross(iota);
    const Vec3 v1p = v1 - iota / sp.ma, w1p = w1 - sphere_inertia(sp.ma, sp.ra).inverse() * r1.cross(iota);
    if (s.restitution_reduced) continue;  // Newton's law would have added energy here
    ++compared;
    EXPECT_TRUE(Vec3(s.v_plus.segment<3>(3)).isApprox(v1p, 1e-9)) << s.v_plus.segment<3>(3).transpose() << " vs " << v1p.transpose();
    EXPECT_TRUE(Vec3(s.v_plus.segment<3>(0)).isApprox(w1p, 1e-9));
    EXPECT_TRUE(Vec3(s.v_plus.segment<3>(9)).isApprox(v2p, 1e-9));
    EXPECT_TRUE(Vec3(s.v_plus.segment<3>(6)).isApprox(w2p, 1e-9));
    EXPECT_NEAR(s.impulse(0), iota.dot(n), 1e-9);
  }
  EXPECT_GE(compared, 8);
}

TEST(ContactDynamics, ThreeTouchingBallsSimultaneousElasticImpact) {
  // The cradle model: five balls on x-sliders, 1 mm apart at q = 0. Close the
  // gaps of the first three, move the others away, strike with ball 1.
  const Model m = load_model("balls_row.urdf", urdf::RootJoint::Fixed);
  Data d(m);
  VectorX q(5);
  q << 0.0, -0.001, -0.002, 2.0, 3.0;
  const std::vector<Contact> contacts = detect(m, d, q, {});
  ASSERT_EQ(contacts.size(), 2u);
  const double vs = 1.3;
  VectorX v = VectorX::Zero(5);
  v(0) = vs;
  ContactSolver solver(m);
  const ImpactSolution& s = solver.impact(m, d, q, v, contacts, VectorX::Ones(2), VectorX::Zero(2));
  ASSERT_EQ(s.status, ContactStatus::Solved) << s.message;
  EXPECT_NEAR(s.v_plus(0), -vs / 3, 1e-12);
  EXPECT_NEAR(s.v_plus(1), 2 * vs / 3, 1e-12);
  EXPECT_NEAR(s.v_plus(2), 2 * vs / 3, 1e-12);
  EXPECT_NEAR(s.v_plus(3), 0.0, 1e-15);
  // Momentum and energy (equal masses) are conserved.
  EXPECT_NEAR(s.v_plus.sum(), vs, 1e-12);
  EXPECT_NEAR(s.kinetic_after, s.kinetic_before, 1e-12 * s.kinetic_before);
}

TEST(ContactDynamics, RandomImpactsNeverAddEnergy) {
  // A box hitting the ground at random orientations (one to four corners)
  // with random velocities, restitution and friction.
  ModelBuilder b("box");
  const Vec3 size(0.3, 0.2, 0.1);
  const int box = add_free_body(b, "box", Box{size}, 1.2, box_inertia(1.2, size));
  const Model m = b.build();
  Data d(m);
  ContactSolver solver(m);
  std::mt19937_64 gen(21);
  int multi = 0, reduced = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Mat3 R = random_rotation(gen);
    if (trial % 3 == 0) R = Eigen::AngleAxisd(uniform(gen, -3, 3), Vec3::UnitZ()).toRotationMatrix();  // flat
    VectorX q = neutral_configuration(m);
    // Lowest corner exactly on the ground.
    double zmin = 1e9;
    for (int c = 0; c < 8; ++c) {
      const Vec3 corner((c & 1 ? 0.5 : -0.5) * size.x(), (c & 2 ? 0.5 : -0.5) * size.y(), (c & 4 ? 0.5 : -0.5) * size.z());
      zmin = std::min(zmin, (R * corner).z());
    }
    set_pose(m, q, box, R, Vec3(0, 0, -zmin));
    const std::vector<Contact> contacts = detect(m, d, q, {ground_plane()}, 1e-9);
    ASSERT_FALSE(contacts.empty());
    multi += contacts.size() > 1;
    VectorX v = VectorX::Zero(m.nv());
    set_velocity(m, v, box, R, Vec3(uniform(gen, -1, 1), uniform(gen, -1, 1), -uniform(gen, 0.1, 2)),
                 2.0 * random_vec3(gen));
    const int nc = static_cast<int>(contacts.size());
    VectorX e(nc), mu(nc);
    for (int i = 0; i < nc; ++i) {
      e(i) = uniform(gen, 0, 1);
      mu(i) = uniform(gen, 0, 1.5);
    }
    for (FrictionModel fm : {FrictionModel::None, FrictionModel::PolyhedralCone}) {
      ImpactOptions opt;
      opt.friction = fm;
      const ImpactSolution& s = solver.impact(m, d, q, v, contacts, e, mu, opt);
      ASSERT_EQ(s.status, ContactStatus::Solved) << s.message;
      EXPECT_LE(s.kinetic_after, s.kinetic_before * (1 + 1e-10) + 1e-12) << "trial " << trial;
      EXPECT_NEAR(s.kinetic_before, kinetic_energy(m, d, q, v), 1e-12 * std::max(1.0, s.kinetic_before));
      EXPECT_GE(s.impulse.minCoeff(), -1e-12);
      for (int i = 0; i < nc; ++i) {
        EXPECT_GE(s.zeta_plus(i), -1e-9) << "trial " << trial << " contact " << i;
      }
      reduced += s.restitution_reduced;
    }
  }
  EXPECT_GT(multi, 50);  // the flat drops make multi-corner impacts
  RecordProperty("restitution_reduced", reduced);
}

TEST(ContactDynamics, HumanoidLandingFlatStopsBothFeet) {
  // Both soles land flat at once: eight corners, four per foot, on a body
  // with six freedoms each, so the contact rows are dependent and the
  // impulse LCP with a friction cone is degenerate. With ample friction a
  // plastic impact stops both feet completely, so v⁺ must be the H-metric
  // projection of v⁻ onto the velocities that keep both feet still:
  // v⁺ = v⁻ − H⁻¹Jᵀ(JH⁻¹Jᵀ)⁻¹Jv⁻, J the two feet's 6-D Jacobians.
  const Model m = load_model("humanoid.urdf", urdf::RootJoint::FreeFlyer);
  Data d(m);
  VectorX q = neutral_configuration(m);
  q(2) = 0.98427;  // the standing posture of models/README.md: soles on z = 0
  for (const char* leg : {"left", "right"}) {
    q(m.joint(m.get_joint(std::string(leg) + "_hip_pitch")).q_index) = -0.3;
    q(m.joint(m.get_joint(std::string(leg) + "_knee")).q_index) = 0.6;
    q(m.joint(m.get_joint(std::string(leg) + "_ankle_pitch")).q_index) = -0.3;
  }
  const std::vector<Contact> contacts = detect(m, d, q, {ground_plane()}, 1e-6);
  ASSERT_EQ(contacts.size(), 8u);
  const int left = m.get_body("left_foot"), right = m.get_body("right_foot");
  MatrixX J(12, m.nv());
  J.topRows(6) = body_jacobian(m, d, q, left, ReferenceFrame::LocalWorldAligned);
  J.bottomRows(6) = body_jacobian(m, d, q, right, ReferenceFrame::LocalWorldAligned);
  const MatrixX H = crba(m, d, q);
  const Eigen::LLT<MatrixX> llt(H);
  const MatrixX HinvJt = llt.solve(J.transpose());
  ContactSolver solver(m);
  ImpactOptions opt;
  opt.friction = FrictionModel::PolyhedralCone;
  std::mt19937_64 gen(5);
  for (int trial = 0; trial < 20; ++trial) {
    // Falling (free-flyer velocity in pelvis axes, = world axes here) with a
    // little joint motion, small enough that every corner still approaches.
    VectorX v = VectorX::Zero(m.nv());
    for (int i = 6; i < m.nv(); ++i) v(i) = uniform(gen, -0.05, 0.05);
    v(5) = -uniform(gen, 0.5, 2.0);  // [ω; v] of the pelvis
    const ImpactSolution& s = solver.impact(m, d, q, v, contacts, VectorX::Zero(8), VectorX::Constant(8, 10.0), opt);
    ASSERT_EQ(s.status, ContactStatus::Solved) << s.message;
    const VectorX expected = v - HinvJt * (J * HinvJt).ldlt().solve(J * v);
    EXPECT_LT((J * s.v_plus).norm(), 1e-8 * v.norm()) << "trial " << trial;
    EXPECT_LT((s.v_plus - expected).norm(), 1e-7 * v.norm()) << "trial " << trial;
    EXPECT_LE(s.kinetic_after, s.kinetic_before);
  }
}

TEST(ContactDynamics, DependentCornersWithFrictionAreSolved) {
  // The state of models/worlds/humanoid_falling.xml at its fourth impact
  // (t = 0.2380482 s): both feet rock back onto all eight sole corners with
  // friction. The rows of the cone LCP are dependent and its final basis is
  // too ill-conditioned for the strict backward-error test; the solver must
  // still return impulses, checked here against the impact law itself.
  const Model m = load_model("humanoid.urdf", urdf::RootJoint::FreeFlyer);
  Data d(m);
  VectorX q(37);
  q << -0.0014493454274628801, 1.6332716565550203e-14, 0.98432210441882639, 1.5133594376905893e-14,
      0.0026302062605314982, -3.5479176357201352e-15, 0.99999654100153124, 3.2009332064955888e-13,
      4.4285731158422214e-14, -0.30107207363047872, 0.59948580794187711, -0.3036741529014475,
      -7.6196827605393735e-14, -5.8720568764243987e-13, -4.7987599228931585e-13, -0.30107207363048916,
      0.59948580794187001, -0.3036741529014797, 4.5261424398728285e-13, 9.3073358787667661e-15,
      0.00047583308370219654, -5.949669000664017e-15, -0.0502116570902017, 0.028995483450870788,
      0.11170487892723219, -0.025663549730406715, -0.27705265644666649, 4.5206706735200798e-05,
      0.031981526950387314, -0.036305321284111437, 0.028995483450897433, -0.11170487892730423,
      0.025663549730416277, -0.27705265644673671, -4.5206706755565585e-05, 0.031981526950458465,
      0.03630532128413097;
  VectorX v(36);
  v << 2.9916794400426311e-11, 0.1459720786675392, -7.4007457716933083e-12, -0.10956746612970295,
      1.6117593653040047e-11, -0.22032739596982739, -2.7265127430215877e-10, -3.7625435153404709e-10,
      -0.13520742317998066, -0.030881420133464437, -1.5748968010079416, 3.4775881550588706e-10,
      6.4699638713202683e-12, -5.6303220301451188e-11, -0.13520742319035725, -0.03088142014065157,
      -1.5748968010393773, 2.6476017743930865e-11, 9.6185057489473431e-12, 0.3244087054802855,
      -5.7396264093266498e-12, -1.4150801213627162, 0.046195477967918265, -0.1790764305040291,
      -0.23255073454827646, 0.11407532651838682, 0.017405607430029842, -1.5375515180074932,
      -1.0659907468902017, 0.046195477994048342, 0.17907643043283075, 0.23255073455829101,
      0.11407532644957044, -0.017405607450419681, -1.5375515179376171, 1.0659907469099108;
  const std::vector<Contact> contacts = detect(m, d, q, {ground_plane()}, 1e-6);
  ASSERT_EQ(contacts.size(), 8u);
  ContactSolver solver(m);
  ImpactOptions opt;
  opt.friction = FrictionModel::PolyhedralCone;
  const double mu = 0.8;
  const ImpactSolution& s = solver.impact(m, d, q, v, contacts, VectorX::Zero(8), VectorX::Constant(8, mu), opt);
  ASSERT_EQ(s.status, ContactStatus::Solved) << s.message;
  // Plastic impact: no corner approaches afterwards, impulses push, and only
  // corners that end at rest carry one; friction inside the cone; no energy
  // gained. The tolerance is the one such a degenerate problem is solved to,
  // √ε of its scale.
  const double scale = 1e-7 * s.impulse.cwiseAbs().maxCoeff();
  ASSERT_GT(scale, 0.0);
  // Whether plain Lemke or one of ContactSolver's fallbacks (see
  // ContactSolver::lemke) solves it depends on the last bits of H: the
  // checks below hold either way.
  std::printf("[          ] %s\n", s.message.c_str());
  const VectorX zeta = solver.T().transpose() * s.v_plus;
  for (int i = 0; i < 8; ++i) {
    EXPECT_GE(zeta(i), -1e-8) << i;
    EXPECT_GE(s.impulse(i), -scale) << i;
    EXPECT_LT(s.impulse(i) * std::abs(zeta(i)), scale) << i;
    EXPECT_LE(s.friction_impulse.col(i).norm(), mu * s.impulse(i) + scale) << i;
  }
  EXPECT_LE(s.kinetic_after, s.kinetic_before);
  // v⁺ − v⁻ = H⁻¹ (T ι + friction): the impulses act through the contacts only.
  const MatrixX H = crba(m, d, q);
  forward_kinematics(m, d, q, v, VectorX::Zero(m.nv()));
  MatrixX D(m.nv(), 32);  // four directions per corner: t₁, t₂, −t₁, −t₂
  VectorX Ddv(32);
  tangent_jacobian(m, d, contacts, 4, D, Ddv);
  VectorX f = VectorX::Zero(32);
  for (int i = 0; i < 8; ++i) f.segment<2>(4 * i) = s.friction_impulse.col(i);
  const VectorX jump = H * (s.v_plus - v);
  EXPECT_LT((jump - solver.T() * s.impulse - D * f).norm(), 1e-8 * jump.norm());
}

// ImpactOptions::time_step: one velocity-level (Stewart–Trinkle) step of a
// box sliding flat on four dependent corners. Over h the ground takes out
// exactly the weight's impulse m g h (v_z⁺ = 0) and Coulomb friction μ m g h
// of the sliding speed (along a cone direction, so the polyhedral cone is
// exact); a box hovering φ above the ground may close φ and no more
// (ζ⁺ = −φ/h on every corner); a compliance c leaves ζ⁺ = ζ⁻ c/(1 + c).
TEST(ContactDynamics, VelocityLevelStepMatchesItsClosedForms) {
  ModelBuilder b("box");
  const Vec3 size(0.4, 0.3, 0.2);
  const double mass = 2.0, mu = 0.5, h = 1e-3, u0 = 1.0;
  const int box = add_free_body(b, "box", Box{size}, mass, box_inertia(mass, size));
  const Model m = b.build();
  Data d(m);
  const std::vector<EnvironmentShape> env{ground_plane()};
  ContactSolver solver(m);
  ImpactOptions io;
  io.friction = FrictionModel::PolyhedralCone;
  io.time_step = h;
  const VectorX g_step = [&] {  // h H⁻¹(τ − C) of a free body at rest: gravity
    VectorX q = neutral_configuration(m);
    VectorX a = aba(m, d, q, VectorX::Zero(m.nv()), VectorX::Zero(m.nv()));
    return VectorX(h * a);
  }();
  for (const Vec3& dir : {Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(-1, 0, 0)}) {
    VectorX q = neutral_configuration(m), v = VectorX::Zero(m.nv());
    set_pose(m, q, box, Mat3::Identity(), Vec3(0.0, 0.0, 0.1));
    set_velocity(m, v, box, Mat3::Identity(), u0 * dir, Vec3::Zero());
    const std::vector<Contact> contacts = detect(m, d, q, env);
    ASSERT_EQ(contacts.size(), 4u);
    io.gaps = VectorX::Zero(4);
    const VectorX vminus = v + g_step;
    const ImpactSolution& s = solver.impact(m, d, q, vminus, contacts, VectorX::Zero(4), VectorX::Constant(4, mu), io);
    ASSERT_EQ(s.status, ContactStatus::Solved) << s.message;
    EXPECT_NEAR(s.impulse.sum(), mass * g * h, 1e-12);
    EXPECT_NEAR(s.zeta_plus.cwiseAbs().maxCoeff(), 0.0, 1e-12);
    const Vec3 vel = s.v_plus.segment<3>(m.joint(box).v_index + 3);  // body frame = world (identity pose)
    EXPECT_NEAR(vel.dot(dir), u0 - mu * g * h, 1e-12) << dir.transpose();
    EXPECT_NEAR((vel - vel.dot(dir) * dir).norm(), 0.0, 1e-12);
  }
  // Hovering φ above the ground, falling at w: it may close φ in h.
  for (const double phi : {1e-5, 1e-3}) {
    VectorX q = neutral_configuration(m), v = VectorX::Zero(m.nv());
    const double w = 0.5;
    set_pose(m, q, box, Mat3::Identity(), Vec3(0.0, 0.0, 0.1 + phi));
    set_velocity(m, v, box, Mat3::Identity(), Vec3(0, 0, -w), Vec3::Zero());
    const std::vector<Contact> contacts = detect(m, d, q, env, 0.01);
    ASSERT_EQ(contacts.size(), 4u);
    io.gaps = VectorX::Constant(4, phi);
    const ImpactSolution& s =
        solver.impact(m, d, q, v + g_step, contacts, VectorX::Zero(4), VectorX::Constant(4, mu), io);
    ASSERT_EQ(s.status, ContactStatus::Solved) << s.message;
    const double free_fall = -w - g * h;
    const double expected = std::max(free_fall, -phi / h);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(s.zeta_plus(i), expected, 1e-12) << "phi " << phi;
  }
  // A compliance c on a resting box pressed down at w: ζ⁺ = ζ⁻ c/(1 + c).
  ImpactOptions soft;
  soft.compliance = 0.25;
  VectorX q = neutral_configuration(m), v = VectorX::Zero(m.nv());
  set_pose(m, q, box, Mat3::Identity(), Vec3(0.0, 0.0, 0.1));
  set_velocity(m, v, box, Mat3::Identity(), Vec3(0, 0, -1.0), Vec3::Zero());
  const std::vector<Contact> one = detect(m, d, q, env);
  const std::vector<Contact> corner{one.front()};
  const ImpactSolution& s = solver.impact(m, d, q, v, corner, VectorX::Zero(1), VectorX::Zero(1), soft);
  ASSERT_EQ(s.status, ContactStatus::Solved) << s.message;
  EXPECT_NEAR(s.zeta_plus(0), s.zeta_minus(0) * 0.25 / 1.25, 1e-12);
  // Bad options are named.
  ImpactOptions bad = io;
  bad.gaps = VectorX::Zero(3);
  EXPECT_THROW(solver.impact(m, d, q, v, one, VectorX::Zero(4), VectorX::Zero(4), bad), ArgumentError);
  bad = soft;
  bad.compliance = -1.0;
  EXPECT_THROW(solver.impact(m, d, q, v, one, VectorX::Zero(4), VectorX::Zero(4), bad), ArgumentError);
}

// ImpactOptions::reuse_basis: velocity-level steps in a row over the same
// contacts. A box sliding flat (as above) keeps its basis while it slides:
// the second step takes no pivot and still loses exactly μ g h of its
// speed; a box too slow to slide through the step sticks (another basis:
// Lemke pivots, v⁺ tangential 0); contacts in another order are another
// problem (Lemke pivots) with the same closed form.
// A 2 kg box resting on its 4 bottom corners, and the velocity-level step's
// impulse options (time step h, polyhedral cone, kept bases).
struct BoxOnCorners {
  static constexpr double mass = 2.0, mu = 0.5, h = 1e-3;
  Model m;
  int box = 0;
  VectorX q;
  std::vector<Contact> contacts;
  VectorX g_step;  // h q̈ of gravity alone
  ImpactOptions io;
  BoxOnCorners() {
    ModelBuilder b("box");
    const Vec3 size(0.4, 0.3, 0.2);
    box = add_free_body(b, "box", Box{size}, mass, box_inertia(mass, size));
    m = b.build();
    Data d(m);
    q = neutral_configuration(m);
    set_pose(m, q, box, Mat3::Identity(), Vec3(0.0, 0.0, 0.1));
    contacts = detect(m, d, q, {ground_plane()});
    g_step = h * aba(m, d, q, VectorX::Zero(m.nv()), VectorX::Zero(m.nv()));
    io.friction = FrictionModel::PolyhedralCone;
    io.time_step = h;
    io.gaps = VectorX::Zero(4);
    io.reuse_basis = true;
  }
};

TEST(ContactDynamics, ReusedBasisKeepsTheClosedFormAndFallsBackToLemke) {
  BoxOnCorners bx;
  const Model& m = bx.m;
  const int box = bx.box;
  const double mass = bx.mass, mu = bx.mu, h = bx.h;
  const VectorX& q = bx.q;
  const std::vector<Contact>& contacts = bx.contacts;
  const VectorX& g_step = bx.g_step;
  ImpactOptions& io = bx.io;
  Data d(m);
  ContactSolver solver(m);
  ASSERT_EQ(contacts.size(), 4u);
  auto step = [&](double u0, const std::vector<Contact>& cs, double& u_plus) {
    VectorX v = VectorX::Zero(m.nv());
    set_velocity(m, v, box, Mat3::Identity(), Vec3(u0, 0, 0), Vec3::Zero());
    const ImpactSolution& s = solver.impact(m, d, q, v + g_step, cs, VectorX::Zero(4), VectorX::Constant(4, mu), io);
    EXPECT_EQ(s.status, ContactStatus::Solved) << s.message;
    EXPECT_NEAR(s.impulse.sum(), mass * g * h, 1e-12);
    u_plus = s.v_plus(m.joint(box).v_index + 3);
    return s.pivots;
  };
  double u = 0.0;
  EXPECT_GT(step(1.0, contacts, u), 0);
  EXPECT_NEAR(u, 1.0 - mu * g * h, 1e-12);
  // A solve without reuse_basis (a sticking box: another basis) neither uses
  // nor replaces the kept one (time-stepping's output samples rely on it).
  io.reuse_basis = false;
  EXPECT_GT(step(0.1 * mu * g * h, contacts, u), 0);
  EXPECT_NEAR(u, 0.0, 1e-12);
  io.reuse_basis = true;
  EXPECT_EQ(step(0.9, contacts, u), 0);  // the same basis
  EXPECT_NEAR(u, 0.9 - mu * g * h, 1e-12);
  EXPECT_EQ(step(0.5, contacts, u), 0);
  EXPECT_NEAR(u, 0.5 - mu * g * h, 1e-12);
  EXPECT_GT(step(0.1 * mu * g * h, contacts, u), 0);  // sticks: the basis changed
  EXPECT_NEAR(u, 0.0, 1e-12);
  const std::vector<Contact> reversed(contacts.rbegin(), contacts.rend());
  EXPECT_GT(step(0.8, reversed, u), 0);  // other contacts: Lemke
  EXPECT_NEAR(u, 0.8 - mu * g * h, 1e-12);
  EXPECT_EQ(step(0.7, reversed, u), 0);
  EXPECT_NEAR(u, 0.7 - mu * g * h, 1e-12);
}

TEST(ContactDynamics, AKeptBasisThatMissesIsRepairedWithoutLemke) {
  // A box sliding on its 4 corners (8 cone directions), then the same box
  // sliding 45° further round: the friction now acts along another cone
  // direction, so the kept basis misses; the repair (violators leave or
  // enter) finds the new one without Lemke's pivots. Facts: the slide slows
  // by μ g h along its own direction (45° is a cone direction: the polygon's
  // friction is exactly opposite), the normal impulse carries the weight.
  BoxOnCorners bx;
  const Model& m = bx.m;
  const double mass = bx.mass, mu = bx.mu, h = bx.h;
  const VectorX& q = bx.q;
  const std::vector<Contact>& contacts = bx.contacts;
  const VectorX& g_step = bx.g_step;
  ImpactOptions& io = bx.io;
  io.cone_directions = 8;
  Data d(m);
  ContactSolver solver(m);
  ASSERT_EQ(contacts.size(), 4u);
  const int box = bx.box, vi = m.joint(box).v_index;
  auto slide = [&](double speed, double angle) {
    VectorX v = VectorX::Zero(m.nv());
    const Vec3 u(speed * std::cos(angle), speed * std::sin(angle), 0.0);
    set_velocity(m, v, box, Mat3::Identity(), u, Vec3::Zero());
    const ImpactSolution& s = solver.impact(m, d, q, v + g_step, contacts, VectorX::Zero(4), VectorX::Constant(4, mu), io);
    EXPECT_EQ(s.status, ContactStatus::Solved) << s.message;
    EXPECT_NEAR(s.impulse.sum(), mass * g * h, 1e-12);
    const Vec3 expected = (speed - mu * g * h) * Vec3(std::cos(angle), std::sin(angle), 0.0);
    EXPECT_LT((s.v_plus.segment<3>(vi + 3) - expected).norm(), 1e-12);
    return s.pivots;
  };
  EXPECT_GT(slide(0.9, 0.0), 0);                   // Lemke
  EXPECT_EQ(slide(0.8, 0.0), 0);                   // the kept basis as it is
  EXPECT_EQ(slide(0.7, 0.25 * 3.14159265358979323846), 0);  // repaired
}

TEST(ContactDynamics, InputsAreChecked) {
  TwoSpheres sp;
  Data d(sp.m);
  VectorX q = neutral_configuration(sp.m);
  set_pose(sp.m, q, sp.b, Mat3::Identity(), Vec3(0, 0, 0.25));
  const std::vector<Contact> contacts = detect(sp.m, d, q, {});
  ContactSolver solver(sp.m);
  const VectorX v = VectorX::Zero(sp.m.nv());
  EXPECT_THROW(solver.solve(sp.m, d, q, v, v, contacts, VectorX::Constant(1, -0.1)), ArgumentError);
  EXPECT_THROW(solver.solve(sp.m, d, q, v, v, contacts, VectorX::Zero(2)), ArgumentError);
  EXPECT_THROW(solver.impact(sp.m, d, q, v, contacts, VectorX::Constant(1, 1.5), VectorX::Zero(1)), ArgumentError);
  EXPECT_THROW(solver.solve(sp.m, d, q, VectorX::Zero(3), v, contacts, VectorX::Zero(1)), ArgumentError);
}
