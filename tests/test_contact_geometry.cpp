// Contact detection: gaps, normals and witness points against closed forms
// for every supported shape pair in simple poses, contact counts of resting
// boxes and cylinders, stable ids, margin filtering, the pair rules, meshes
// and unsupported pairs reported by name, and joint limits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "plume/algorithms/kinematics.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "plume/contact/detection.hpp"
#include "test_utils.hpp"

using namespace plume;
using namespace plume::test;

namespace {

// Geometric closed forms below are evaluated from a few trigonometric values:
// agreement to 1e-12 m is rounding, not modelling.
constexpr double kTol = 1e-12;
const double kPi = std::acos(-1.0);

RigidInertia unit_inertia() { return RigidInertia::from_mass_com_inertia(1.0, Vec3::Zero(), 0.01 * Mat3::Identity()); }

struct BodyShape {
  std::string name;
  Geometry geometry;
  Transform placement = Transform::Identity();  // X_shape_body
};

// One free-flying body per entry of `bodies`, each carrying its shapes.
Model free_bodies(const std::vector<std::vector<BodyShape>>& bodies) {
  ModelBuilder b("free_bodies");
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const std::string name = "body" + std::to_string(i + 1);
    const int body = b.add_body(name, 0, JointSpec::free_flyer(name + "_joint"), Transform::Identity(), unit_inertia());
    for (const BodyShape& s : bodies[i]) b.add_collision(CollisionShape{s.name, name, body, s.placement, s.geometry, {}});
  }
  return b.build();
}

// Sets the pose (orientation R, origin p in world coordinates) of free body `body`.
void set_pose(const Model& m, VectorX& q, int body, const Mat3& R, const Vec3& p) {
  const int i = m.joint(body).q_index;
  q.segment<3>(i) = p;
  q.segment<4>(i + 3) = Eigen::Quaterniond(R).coeffs();
}

Mat3 rot(const Vec3& axis, double angle) { return Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix(); }

std::vector<Contact> detect_at(const Model& m, const ContactDetector& det, const VectorX& q) {
  Data d(m);
  forward_kinematics(m, d, q);
  std::vector<Contact> out;
  det.detect(m, d, out);
  return out;
}

void expect_vec(const Vec3& actual, const Vec3& expected, double tol = kTol) {
  EXPECT_LT((actual - expected).norm(), tol) << "actual " << actual.transpose() << ", expected " << expected.transpose();
}

// Every contact's gap is n·(p_b − p_a) with a unit normal.
void expect_consistent(const std::vector<Contact>& cs) {
  for (const Contact& c : cs) {
    EXPECT_NEAR(c.normal.norm(), 1.0, 1e-12);
    EXPECT_NEAR(c.normal.dot(c.point_b - c.point_a), c.gap, 1e-12);
    EXPECT_LT((c.point_b - c.point_a - c.gap * c.normal).norm(), 1e-12);
  }
}

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

TEST(ContactGeometry, SphereAboveGroundAndInclinedPlane) {
  const Model m = free_bodies({{{"ball", Sphere{0.1}}}});
  VectorX q = neutral_configuration(m);
  set_pose(m, q, 1, rot(Vec3(1, 2, 3), 0.7), Vec3(0.3, -0.2, 0.3));
  DetectionOptions opt;
  opt.margin = 1.0;
  {
    const ContactDetector det(m, {ground_plane()}, opt);
    const auto cs = detect_at(m, det, q);
    ASSERT_EQ(cs.size(), 1u);
    const Contact& c = cs[0];
    EXPECT_EQ(c.body_a, 0);  // the environment is always a
    EXPECT_EQ(c.body_b, 1);
    EXPECT_EQ(c.shape_b, 0);
    EXPECT_EQ(c.shape_a, 1);
    EXPECT_NEAR(c.gap, 0.2, kTol);
    expect_vec(c.normal, Vec3::UnitZ());
    expect_vec(c.point_a, Vec3(0.3, -0.2, 0.0));
    expect_vec(c.point_b, Vec3(0.3, -0.2, 0.2));
    EXPECT_EQ(c.local.type, FeaturePair::FacePoint);
    // The default margin (1e-9 m): the sphere is 0.2 m away, nothing.
    const ContactDetector touching(m, {ground_plane()});
    EXPECT_TRUE(detect_at(m, touching, q).empty());
  }
  {
    // A plane through (0, 0, −0.1) with normal (0, sin 0.3, cos 0.3).
    const Vec3 n(0.0, std::sin(0.3), std::cos(0.3));
    const ContactDetector det(m, {ground_plane("slope", n, Vec3(0, 0, -0.1))}, opt);
    const auto cs = detect_at(m, det, q);
    ASSERT_EQ(cs.size(), 1u);
    const double dist = n.dot(Vec3(0.3, -0.2, 0.3) - Vec3(0, 0, -0.1));
    EXPECT_NEAR(cs[0].gap, dist - 0.1, kTol);
    expect_vec(cs[0].normal, n);
    expect_vec(cs[0].point_a, Vec3(0.3, -0.2, 0.3) - dist * n);
    expect_consistent(cs);
  }
}

TEST(ContactGeometry, TwoSpheresAlongTheLineOfCentres) {
  const Model m = free_bodies({{{"s1", Sphere{0.2}}}, {{"s2", Sphere{0.3}}}});
  VectorX q = neutral_configuration(m);
  const Vec3 c1(0.1, 0.2, 0.3), c2(0.9, -0.2, 0.7);
  set_pose(m, q, 1, rot(Vec3(0, 1, 1), 0.4), c1);
  set_pose(m, q, 2, rot(Vec3(1, 0, 1), -1.1), c2);
  DetectionOptions opt;
  opt.margin = 1.0;
  const ContactDetector det(m, {}, opt);
  ASSERT_EQ(det.pairs().size(), 1u);  // different subtrees: always a pair
  const auto cs = detect_at(m, det, q);
  ASSERT_EQ(cs.size(), 1u);
  const Vec3 n = (c2 - c1).normalized();
  EXPECT_EQ(cs[0].body_a, 1);
  EXPECT_EQ(cs[0].body_b, 2);
  EXPECT_NEAR(cs[0].gap, (c2 - c1).norm() - 0.5, kTol);
  expect_vec(cs[0].normal, n);
  expect_vec(cs[0].point_a, c1 + 0.2 * n);
  expect_vec(cs[0].point_b, c2 - 0.3 * n);
  // Interpenetrating: negative gap, same normal.
  set_pose(m, q, 2, Mat3::Identity(), c1 + 0.4 * n);
  const auto deep = detect_at(m, det, q);
  ASSERT_EQ(deep.size(), 1u);
  EXPECT_NEAR(deep[0].gap, -0.1, kTol);
  expect_vec(deep[0].normal, n);
}

TEST(ContactGeometry, BoxOnPlaneTouchesWithOneTwoOrFourCorners) {
  // Featherstone fig. 11.7: a unit cube resting on a face, an edge or a
  // corner touches with 4, 2 or 1 corner contacts.
  const Model m = free_bodies({{{"cube", Box{Vec3::Ones()}}}});
  DetectionOptions opt;
  opt.margin = 1e-9;
  const ContactDetector det(m, {ground_plane()}, opt);
  struct Pose {
    const char* what;
    Mat3 R;
    double height;
    std::size_t corners;
  };
  // Corner down: rotate the diagonal (1, 1, 1) onto −z.
  const Mat3 corner_down = Eigen::Quaterniond::FromTwoVectors(Vec3(1, 1, 1), -Vec3::UnitZ()).toRotationMatrix();
  const std::vector<Pose> poses = {
      {"face", Mat3::Identity(), 0.5, 4},
      {"face, turned 45° about z", rot(Vec3::UnitZ(), kPi / 4), 0.5, 4},
      {"edge (45° about x)", rot(Vec3::UnitX(), kPi / 4), std::sqrt(0.5), 2},
      {"corner", corner_down, std::sqrt(0.75), 1},
  };
  for (const Pose& p : poses) {
    SCOPED_TRACE(p.what);
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, p.R, Vec3(0.2, 0.1, p.height));
    const auto cs = detect_at(m, det, q);
    EXPECT_EQ(cs.size(), p.corners);
    std::set<int> features;
    for (const Contact& c : cs) {
      EXPECT_NEAR(c.gap, 0.0, 1e-12);
      expect_vec(c.normal, Vec3::UnitZ());
      EXPECT_NEAR(c.point_a.z(), 0.0, 1e-12);
      EXPECT_NEAR(c.point_b.z(), 0.0, 1e-12);
      features.insert(c.feature);
    }
    EXPECT_EQ(features.size(), cs.size());  // distinct corners
    // Lifted by 1 mm: nothing within the margin.
    set_pose(m, q, 1, p.R, Vec3(0.2, 0.1, p.height + 1e-3));
    EXPECT_TRUE(detect_at(m, det, q).empty());
  }
  // A large margin reports all eight corners, gaps = corner heights.
  opt.margin = 10.0;
  const ContactDetector all(m, {ground_plane()}, opt);
  VectorX q = neutral_configuration(m);
  const Mat3 R = rot(Vec3(1, -2, 0.5), 0.8);
  set_pose(m, q, 1, R, Vec3(0, 0, 2));
  const auto cs = detect_at(m, all, q);
  ASSERT_EQ(cs.size(), 8u);
  for (const Contact& c : cs) {
    const Vec3 corner(c.feature & 1 ? 0.5 : -0.5, c.feature & 2 ? 0.5 : -0.5, c.feature & 4 ? 0.5 : -0.5);
    EXPECT_NEAR(c.gap, 2.0 + (R * corner).z(), kTol);
  }
}

TEST(ContactGeometry, SphereAgainstBoxFaceEdgeVertexAndInside) {
  const Model m = free_bodies({{{"ball", Sphere{0.1}}}});
  DetectionOptions opt;
  opt.margin = 10.0;
  // A 2×2×2 box turned about z by 0.3 rad, centred at (1, 0, 0).
  const Mat3 R = rot(Vec3::UnitZ(), 0.3);
  const Vec3 c0(1, 0, 0);
  const ContactDetector det(m, {environment_box("block", Vec3(2, 2, 2), c0, R)}, opt);
  struct Case {
    const char* what;
    Vec3 local;  // sphere centre in box coordinates
    double gap;
    Vec3 normal_local;
    Vec3 witness_local;  // point_a in box coordinates
    FeaturePair type;
  };
  const double s2 = std::sqrt(0.5);
  const std::vector<Case> cases = {
      {"face", Vec3(0.3, 0.2, 1.5), 0.4, Vec3::UnitZ(), Vec3(0.3, 0.2, 1.0), FeaturePair::FacePoint},
      {"edge", Vec3(1.5, 0.2, 1.5), std::sqrt(0.5) - 0.1, Vec3(s2, 0, s2), Vec3(1, 0.2, 1), FeaturePair::LinePoint},
      {"vertex", Vec3(-1.5, 1.5, -1.5), std::sqrt(0.75) - 0.1, Vec3(-1, 1, -1).normalized(), Vec3(-1, 1, -1),
       FeaturePair::PointPoint},
      {"inside", Vec3(0.2, -0.85, 0.1), -0.15 - 0.1, -Vec3::UnitY(), Vec3(0.2, -1, 0.1), FeaturePair::FacePoint},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, Mat3::Identity(), c0 + R * k.local);
    const auto cs = detect_at(m, det, q);
    ASSERT_EQ(cs.size(), 1u);
    EXPECT_NEAR(cs[0].gap, k.gap, kTol);
    expect_vec(cs[0].normal, R * k.normal_local);
    expect_vec(cs[0].point_a, c0 + R * k.witness_local);
    EXPECT_EQ(cs[0].local.type, k.type);
    expect_consistent(cs);
  }
}

TEST(ContactGeometry, SphereAgainstCapsuleSideAndEnd) {
  // A capsule along world y (radius 0.1, segment y ∈ [−0.5, 0.5]) at the origin.
  const Model m = free_bodies({{{"ball", Sphere{0.2}}}});
  DetectionOptions opt;
  opt.margin = 10.0;
  const ContactDetector det(m, {EnvironmentShape{"rail", Transform::rotation(rot(Vec3::UnitX(), -kPi / 2)), Capsule{0.1, 1.0}, {}}},
                            opt);
  VectorX q = neutral_configuration(m);
  set_pose(m, q, 1, Mat3::Identity(), Vec3(0.3, 0.2, 0.4));  // beside the segment
  auto cs = detect_at(m, det, q);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].local.type, FeaturePair::LinePoint);
  EXPECT_NEAR(cs[0].gap, 0.5 - 0.3, kTol);
  expect_vec(cs[0].normal, Vec3(0.6, 0, 0.8));
  expect_vec(cs[0].point_a, Vec3(0, 0.2, 0) + 0.1 * Vec3(0.6, 0, 0.8));
  set_pose(m, q, 1, Mat3::Identity(), Vec3(0.0, 1.1, 0.8));  // beyond the +y end
  cs = detect_at(m, det, q);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].local.type, FeaturePair::PointPoint);
  EXPECT_NEAR(cs[0].gap, 1.0 - 0.3, kTol);
  expect_vec(cs[0].normal, Vec3(0, 0.6, 0.8));
  expect_vec(cs[0].point_b, Vec3(0, 1.1, 0.8) - 0.2 * Vec3(0, 0.6, 0.8));
}

TEST(ContactGeometry, CapsulesCrossingAndLyingParallel) {
  DetectionOptions opt;
  opt.margin = 0.15;
  const Transform along_x = Transform::rotation(rot(Vec3::UnitY(), kPi / 2));  // shape z onto body x
  const Model m = free_bodies({{{"rod", Capsule{0.2, 1.0}, along_x}}});
  const EnvironmentShape bar{"bar", Transform::rotation(rot(Vec3::UnitY(), kPi / 2)), Capsule{0.1, 2.0}, {}};
  const ContactDetector det(m, {bar}, opt);
  {
    SCOPED_TRACE("crossing at right angles");
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, rot(Vec3::UnitZ(), kPi / 2), Vec3(0.3, 0.2, 0.4));  // rod along y over the bar
    const auto cs = detect_at(m, det, q);
    ASSERT_EQ(cs.size(), 1u);
    EXPECT_EQ(cs[0].local.type, FeaturePair::LineLine);
    EXPECT_NEAR(cs[0].gap, 0.1, kTol);
    expect_vec(cs[0].normal, Vec3::UnitZ());
    expect_vec(cs[0].point_a, Vec3(0.3, 0, 0.1));
    expect_vec(cs[0].point_b, Vec3(0.3, 0, 0.2));
  }
  {
    SCOPED_TRACE("end on the segment (T)");
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, rot(Vec3::UnitY(), -kPi / 2), Vec3(-0.4, 0.0, 1.05));  // rod vertical, lower end at z = 0.55
    const Model& mm = m;
    DetectionOptions wide;
    wide.margin = 1.0;
    const auto cs = detect_at(mm, ContactDetector(mm, {bar}, wide), q);
    ASSERT_EQ(cs.size(), 1u);
    EXPECT_EQ(cs[0].local.type, FeaturePair::LinePoint);
    EXPECT_NEAR(cs[0].gap, 0.55 - 0.3, kTol);
    expect_vec(cs[0].point_a, Vec3(-0.4, 0, 0.1));
  }
  {
    SCOPED_TRACE("parallel, overlapping over [0.7, 1.0]");
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, Mat3::Identity(), Vec3(1.2, 0.0, 0.4));  // rod over x ∈ [0.7, 1.7]
    auto cs = detect_at(m, det, q);
    ASSERT_EQ(cs.size(), 2u);
    std::sort(cs.begin(), cs.end(), [](const Contact& a, const Contact& b) { return a.point_a.x() < b.point_a.x(); });
    for (const Contact& c : cs) {
      EXPECT_NEAR(c.gap, 0.1, kTol);
      expect_vec(c.normal, Vec3::UnitZ());
    }
    EXPECT_NEAR(cs[0].point_a.x(), 0.7, kTol);
    EXPECT_NEAR(cs[1].point_a.x(), 1.0, kTol);
    expect_consistent(cs);
  }
}

TEST(ContactGeometry, CapsuleOnPlaneAndAcrossBoxEdges) {
  const Transform along_x = Transform::rotation(rot(Vec3::UnitY(), kPi / 2));
  const Model m = free_bodies({{{"rod", Capsule{0.1, 3.0}, along_x}}});
  DetectionOptions opt;
  opt.margin = 1e-9;
  {
    const ContactDetector det(m, {ground_plane()}, opt);
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, rot(Vec3::UnitZ(), 0.4), Vec3(0.5, 0.5, 0.1));  // lying: both ends touch
    EXPECT_EQ(detect_at(m, det, q).size(), 2u);
    // Tilted by 0.2 rad about y, resting on its lower end: one contact.
    const Mat3 R = rot(Vec3::UnitY(), 0.2);
    set_pose(m, q, 1, R, Vec3(0, 0, 0.1 + 1.5 * std::sin(0.2)));
    const auto cs = detect_at(m, det, q);
    ASSERT_EQ(cs.size(), 1u);
    expect_vec(cs[0].point_a, Vec3(1.5 * std::cos(0.2), 0, 0));
  }
  {
    // A unit cube (top at z = 0.5) under the rod: the rod rests on the two
    // top edges it crosses; its end spheres hang beyond the box.
    const ContactDetector det(m, {environment_box("cube", Vec3::Ones(), Vec3::Zero())}, opt);
    for (const double yaw : {0.0, kPi / 6}) {
      SCOPED_TRACE(yaw);
      VectorX q = neutral_configuration(m);
      set_pose(m, q, 1, rot(Vec3::UnitZ(), yaw), Vec3(0, 0, 0.6));
      const auto cs = detect_at(m, det, q);
      ASSERT_EQ(cs.size(), 2u);
      for (const Contact& c : cs) {
        EXPECT_EQ(c.local.type, FeaturePair::LineLine);
        EXPECT_NEAR(c.gap, 0.0, 1e-12);
        expect_vec(c.normal, Vec3::UnitZ());
        EXPECT_NEAR(std::abs(c.point_a.x()), 0.5, 1e-12);
        EXPECT_NEAR(c.point_a.y(), c.point_a.x() * std::tan(yaw), 1e-12);
      }
    }
    // Lying on the top face within it: the two end spheres.
    const Model shorter = free_bodies({{{"rod", Capsule{0.1, 0.6}, along_x}}});
    const ContactDetector det2(shorter, {environment_box("cube", Vec3::Ones(), Vec3::Zero())}, opt);
    VectorX q = neutral_configuration(shorter);
    set_pose(shorter, q, 1, Mat3::Identity(), Vec3(0, 0.1, 0.6));
    const auto cs = detect_at(shorter, det2, q);
    ASSERT_EQ(cs.size(), 2u);
    for (const Contact& c : cs) EXPECT_EQ(c.local.type, FeaturePair::FacePoint);
  }
}

TEST(ContactGeometry, BoxOnBoxGivesTheContactPolygon) {
  DetectionOptions opt;
  opt.margin = 1e-9;
  const EnvironmentShape table = environment_box("table", Vec3::Ones(), Vec3::Zero());  // top at z = 0.5
  struct Case {
    const char* what;
    double size;
    Mat3 R;
    std::size_t contacts;
  };
  const std::vector<Case> cases = {
      {"small box, aligned", 0.5, Mat3::Identity(), 4},
      {"small box, turned 45°", 0.5, rot(Vec3::UnitZ(), kPi / 4), 4},
      {"equal box, aligned (no duplicates)", 1.0, Mat3::Identity(), 4},
      {"equal box, turned 45°: octagon of edge crossings", 1.0, rot(Vec3::UnitZ(), kPi / 4), 8},
      {"equal box, turned 30°", 1.0, rot(Vec3::UnitZ(), kPi / 6), 8},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    const Model m = free_bodies({{{"block", Box{Vec3::Constant(k.size)}}}});
    const ContactDetector det(m, {table}, opt);
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, k.R, Vec3(0, 0, 0.5 + 0.5 * k.size));
    const auto cs = detect_at(m, det, q);
    EXPECT_EQ(cs.size(), k.contacts);
    for (const Contact& c : cs) {
      EXPECT_NEAR(c.gap, 0.0, 1e-12);
      expect_vec(c.normal, Vec3::UnitZ());
      EXPECT_NEAR(c.point_a.z(), 0.5, 1e-12);
      EXPECT_LE(c.point_a.head<2>().cwiseAbs().maxCoeff(), 0.5 + 1e-12);  // on the table top
    }
    // Pairwise distinct points.
    for (std::size_t i = 0; i < cs.size(); ++i) {
      for (std::size_t j = i + 1; j < cs.size(); ++j) EXPECT_GT((cs[i].point_a - cs[j].point_a).norm(), 1e-3);
    }
  }
  {
    SCOPED_TRACE("big box on a small pedestal: the pedestal's corners on the box's face");
    const Model m = free_bodies({{{"slab", Box{Vec3(2, 2, 0.2)}}}});
    const ContactDetector det(m, {table}, opt);
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, rot(Vec3::UnitZ(), 0.2), Vec3(0.1, 0, 0.6));
    const auto cs = detect_at(m, det, q);
    ASSERT_EQ(cs.size(), 4u);
    for (const Contact& c : cs) {
      EXPECT_EQ(c.body_a, 0);
      expect_vec(c.normal, Vec3::UnitZ());  // from the table (a) to the slab (b)
      EXPECT_NEAR(c.point_a.head<2>().cwiseAbs().maxCoeff(), 0.5, 1e-12);  // the table's corners
    }
  }
  {
    SCOPED_TRACE("edge across edge");
    // The table turned 45° about x has a top edge along x at z = √½; a cube
    // turned 45° about y above it has a bottom edge along y: one contact.
    const Model m = free_bodies({{{"block", Box{Vec3::Ones()}}}});
    const ContactDetector det(m, {environment_box("ridge", Vec3::Ones(), Vec3::Zero(), rot(Vec3::UnitX(), kPi / 4))},
                              opt);
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, rot(Vec3::UnitY(), kPi / 4), Vec3(0.1, -0.2, 2 * std::sqrt(0.5)));
    const auto cs = detect_at(m, det, q);
    ASSERT_EQ(cs.size(), 1u);
    EXPECT_EQ(cs[0].local.type, FeaturePair::LineLine);
    expect_vec(cs[0].normal, Vec3::UnitZ());
    expect_vec(cs[0].point_a, Vec3(0.1, 0, std::sqrt(0.5)));
  }
}

TEST(ContactGeometry, CylinderStandingLyingAndTiltedOnPlane) {
  const Model m = free_bodies({{{"can", Cylinder{0.2, 0.6}}}});
  DetectionOptions opt;
  opt.margin = 1e-9;
  const ContactDetector det(m, {ground_plane()}, opt);
  VectorX q = neutral_configuration(m);
  // Standing on its end face: 4 fixed rim points (cylinder_flat_angle).
  set_pose(m, q, 1, rot(Vec3::UnitZ(), 0.3), Vec3(0.1, 0.1, 0.3));
  auto cs = detect_at(m, det, q);
  EXPECT_EQ(cs.size(), 4u);
  for (const Contact& c : cs) {
    EXPECT_NEAR((c.point_b - Vec3(0.1, 0.1, 0)).norm(), 0.2, 1e-12);
    EXPECT_EQ(c.local.type, FeaturePair::FacePoint);
  }
  // Lying on its side: the lowest point of each rim.
  set_pose(m, q, 1, rot(Vec3::UnitX(), kPi / 2), Vec3(0, 0, 0.2));
  cs = detect_at(m, det, q);
  ASSERT_EQ(cs.size(), 2u);
  for (const Contact& c : cs) {
    EXPECT_EQ(c.local.type, FeaturePair::FaceRim);
    EXPECT_NEAR(std::abs(c.point_b.y()), 0.3, 1e-12);
  }
  // Tilted by 0.5 rad about x, resting on its lower rim: one contact.
  const double t = 0.5;
  set_pose(m, q, 1, rot(Vec3::UnitX(), t), Vec3(0, 0, 0.3 * std::cos(t) + 0.2 * std::sin(t)));
  cs = detect_at(m, det, q);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_NEAR(cs[0].gap, 0.0, 1e-12);
  expect_vec(cs[0].point_b, Vec3(0, 0.3 * std::sin(t) - 0.2 * std::cos(t), 0));
}

TEST(ContactGeometry, SphereAgainstCylinderSideCapAndRim) {
  DetectionOptions opt;
  opt.margin = 10.0;
  const Model m = free_bodies({{{"ball", Sphere{0.05}}}});
  const Mat3 R = rot(Vec3(1, 1, 0), 0.6);
  const Vec3 c0(0.2, -0.1, 0.4);
  const ContactDetector det(m, {EnvironmentShape{"post", Transform::from_pose(R, c0), Cylinder{0.3, 1.0}, {}}}, opt);
  struct Case {
    const char* what;
    Vec3 local;
    double gap;
    Vec3 normal_local;
    FeaturePair type;
  };
  const std::vector<Case> cases = {
      {"side", Vec3(0.6, 0.8, 0.2), 1.0 - 0.3 - 0.05, Vec3(0.6, 0.8, 0), FeaturePair::LinePoint},
      {"cap", Vec3(0.1, -0.1, 0.9), 0.4 - 0.05, Vec3::UnitZ(), FeaturePair::FacePoint},
      {"rim", Vec3(0.0, 0.7, -0.8), std::sqrt(0.16 + 0.09) - 0.05, Vec3(0, 0.8, -0.6), FeaturePair::RimPoint},
      {"inside near the side", Vec3(0.25, 0.0, 0.1), -0.05 - 0.05, Vec3::UnitX(), FeaturePair::LinePoint},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, Mat3::Identity(), c0 + R * k.local);
    const auto cs = detect_at(m, det, q);
    ASSERT_EQ(cs.size(), 1u);
    EXPECT_NEAR(cs[0].gap, k.gap, kTol);
    expect_vec(cs[0].normal, R * k.normal_local);
    EXPECT_EQ(cs[0].local.type, k.type);
    expect_consistent(cs);
  }
}

TEST(ContactGeometry, CylinderOnBox) {
  DetectionOptions opt;
  opt.margin = 1e-9;
  const Model m = free_bodies({{{"can", Cylinder{0.2, 0.6}}}});
  const ContactDetector det(m, {environment_box("table", Vec3(2, 2, 1), Vec3(0, 0, -0.5))}, opt);  // top z = 0
  VectorX q = neutral_configuration(m);
  set_pose(m, q, 1, Mat3::Identity(), Vec3(0.3, 0.1, 0.3));
  EXPECT_EQ(detect_at(m, det, q).size(), 4u);
  set_pose(m, q, 1, rot(Vec3::UnitY(), kPi / 2), Vec3(0.3, 0.1, 0.2));
  const auto cs = detect_at(m, det, q);
  ASSERT_EQ(cs.size(), 2u);
  for (const Contact& c : cs) {
    EXPECT_EQ(c.local.type, FeaturePair::FaceRim);
    expect_vec(c.normal, Vec3::UnitZ());
  }
  // A box corner poking into the cylinder side (cylinder body above a ridge).
  DetectionOptions wide;
  wide.margin = 0.05;
  const ContactDetector ridge(m, {environment_box("ridge", Vec3::Ones(), Vec3::Zero(), rot(Vec3(1, 1, 0), 0.7))}, wide);
  EXPECT_NO_THROW(detect_at(m, ridge, q));
}

TEST(ContactGeometry, PointContactsOfTheRodModel) {
  // The rod's ends are spheres of radius 0 (points) at ±1 m along the rod.
  // Its planar root moves it in the world's x–z plane: q = (x, z, θ about −y).
  const Model m = load_model("rod.urdf", urdf::RootJoint::Planar);
  DetectionOptions opt;
  opt.margin = 10.0;
  const ContactDetector det(m, {ground_plane()}, opt);
  VectorX q = neutral_configuration(m);
  q << 0.3, 0.5, 0.2;
  const auto cs = detect_at(m, det, q);
  ASSERT_EQ(cs.size(), 2u);
  std::vector<double> gaps{cs[0].gap, cs[1].gap};
  std::sort(gaps.begin(), gaps.end());
  EXPECT_NEAR(gaps[0], 0.5 - std::sin(0.2), kTol);
  EXPECT_NEAR(gaps[1], 0.5 + std::sin(0.2), kTol);
  for (const Contact& c : cs) expect_vec(c.point_a, c.point_b - c.gap * Vec3::UnitZ());
}

TEST(ContactGeometry, IdsAreStableAcrossCallsAndSmallMotions) {
  const Model m = free_bodies({{{"block", Box{Vec3(0.4, 0.3, 0.2)}}, {"ball", Sphere{0.1}, Transform::translation(Vec3(0, 0, 0.3))}},
                               {{"can", Cylinder{0.1, 0.3}}, {"pill", Capsule{0.05, 0.4}}}});
  DetectionOptions opt;
  opt.margin = 5.0;
  const ContactDetector det(m, {ground_plane(), environment_box("step", Vec3(1, 1, 0.2), Vec3(1, 0, 0.1))}, opt);
  std::mt19937_64 g(11);
  const VectorX q = random_configuration(m, 11);
  const VectorX v = random_vector(g, m.nv());
  const auto a = detect_at(m, det, q);
  const auto b = detect_at(m, det, q);
  ASSERT_FALSE(a.empty());
  ASSERT_EQ(a.size(), b.size());
  std::set<std::uint64_t> ids;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].gap, b[i].gap);
    ids.insert(a[i].id);
  }
  EXPECT_EQ(ids.size(), a.size());  // unique within a call
  // A small motion keeps every feature: the same ids, gaps close.
  const auto c = detect_at(m, det, integrate(m, q, v, 1e-6));
  ASSERT_EQ(c.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(c[i].id, a[i].id);
    EXPECT_NEAR(c[i].gap, a[i].gap, 1e-5);
  }
  // refresh_contact at the moved placements gives the re-detected gaps.
  Data d(m);
  forward_kinematics(m, d, integrate(m, q, v, 1e-6));
  for (std::size_t i = 0; i < a.size(); ++i) {
    Contact r = a[i];
    refresh_contact(m, d, r);
    EXPECT_NEAR(r.gap, c[i].gap, 1e-12);
    expect_vec(r.normal, c[i].normal, 1e-12);
  }
}

TEST(ContactGeometry, MarginFilters) {
  const Model m = free_bodies({{{"block", Box{Vec3(0.4, 0.3, 0.2)}}}});
  VectorX q = neutral_configuration(m);
  set_pose(m, q, 1, rot(Vec3(1, 2, 0), 0.3), Vec3(0, 0, 0.4));
  std::vector<double> heights;
  for (const double margin : {0.0, 0.1, 0.2, 0.3, 1.0}) {
    DetectionOptions opt;
    opt.margin = margin;
    const auto cs = detect_at(m, ContactDetector(m, {ground_plane()}, opt), q);
    for (const Contact& c : cs) EXPECT_LT(c.gap, margin);
    heights.push_back(static_cast<double>(cs.size()));
  }
  EXPECT_TRUE(std::is_sorted(heights.begin(), heights.end()));
  EXPECT_EQ(heights.front(), 0.0);
  EXPECT_EQ(heights.back(), 8.0);
}

TEST(ContactGeometry, PairRules) {
  // Robot 1: base (free) → upper (revolute) → lower (revolute), one sphere
  // each, plus a second sphere on the base; robot 2: a free ball; a box
  // welded to the world (body 0); the ground.
  ModelBuilder b("two_robots");
  const int base = b.add_body("base", 0, JointSpec::free_flyer("base_joint"), Transform::Identity(), unit_inertia());
  const int upper = b.add_body("upper", base, JointSpec::revolute("hip", Vec3::UnitY()),
                               Transform::translation(Vec3(0, 0, -0.2)), unit_inertia());
  const int lower = b.add_body("lower", upper, JointSpec::revolute("knee", Vec3::UnitY()),
                               Transform::translation(Vec3(0, 0, -0.3)), unit_inertia());
  const int ball = b.add_body("ball", 0, JointSpec::free_flyer("ball_joint"), Transform::Identity(), unit_inertia());
  auto sphere = [&](const std::string& name, int body) {
    b.add_collision(CollisionShape{name, b.body_name(body), body, Transform::Identity(), Sphere{0.05}, {}});
  };
  sphere("base_a", base);
  sphere("base_b", base);
  sphere("upper", upper);
  sphere("lower", lower);
  sphere("ball", ball);
  b.add_collision(CollisionShape{"welded", "world", 0, Transform::translation(Vec3(2, 0, 0)), Box{Vec3::Ones()}, {}});
  const Model m = b.build();
  auto pair_names = [](const ContactDetector& det) {
    std::set<std::string> out;
    for (const ShapePair& p : det.pairs()) out.insert(det.shapes()[p.shape_a].name + "-" + det.shapes()[p.shape_b].name);
    return out;
  };
  const ContactDetector off(m, {ground_plane()});
  const std::set<std::string> expected_off = {
      // every moving shape against the ground and the welded box (static side first)
      "ground-base_a", "ground-base_b", "ground-upper", "ground-lower", "ground-ball",
      "welded-base_a", "welded-base_b", "welded-upper", "welded-lower", "welded-ball",
      // robot 1 against robot 2 (different subtrees; lower body index first)
      "base_a-ball", "base_b-ball", "upper-ball", "lower-ball"};
  EXPECT_EQ(pair_names(off), expected_off);
  DetectionOptions self;
  self.self_collision = true;
  const ContactDetector on(m, {ground_plane()}, self);
  std::set<std::string> expected_on = expected_off;
  // base–lower only: base–upper and upper–lower are parent–child, base_a–base_b share a body.
  expected_on.insert("base_a-lower");
  expected_on.insert("base_b-lower");
  EXPECT_EQ(pair_names(on), expected_on);
  for (const ShapePair& p : on.pairs()) {
    EXPECT_EQ(p.body_a, on.shapes()[p.shape_a].body);
    EXPECT_TRUE(p.body_a == 0 || p.body_a < p.body_b);
  }
}

TEST(ContactGeometry, MeshesAndUnsupportedPairsAreReportedByName) {
  ModelBuilder b("with_mesh");
  const int body = b.add_body("foot", 0, JointSpec::free_flyer("root"), Transform::Identity(), unit_inertia());
  b.add_collision(CollisionShape{"foot_mesh", "foot", body, Transform::Identity(), Mesh{"foot.stl", Vec3::Ones(), "", nullptr, "not loaded"}, {}});
  b.add_collision(CollisionShape{"foot_can", "foot", body, Transform::Identity(), Cylinder{0.1, 0.2}, {}});
  b.add_collision(CollisionShape{"foot_ball", "foot", body, Transform::Identity(), Sphere{0.1}, {}});
  const Model m = b.build();
  const ContactDetector det(m, {ground_plane(), EnvironmentShape{"pillar", Transform::Identity(), Cylinder{0.5, 2.0}, {}}});
  ASSERT_EQ(det.skipped_shapes().size(), 1u);
  EXPECT_EQ(det.skipped_shapes()[0], "foot_mesh");
  auto warned = [&](const std::string& a, const std::string& b2) {
    for (const std::string& w : det.warnings()) {
      if (w.find(a) != std::string::npos && w.find(b2) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(warned("foot_mesh", "mesh"));
  EXPECT_TRUE(warned("pillar", "foot_can"));  // cylinder–cylinder
  // The usable pairs remain: can–ground, ball–ground, ball–pillar.
  EXPECT_EQ(det.pairs().size(), 3u);
  VectorX q = neutral_configuration(m);
  q[2] = 3.0;
  EXPECT_NO_THROW(detect_at(m, det, q));
}

TEST(ContactGeometry, InvalidInputsNameTheCulprit) {
  const Model m = free_bodies({{{"ball", Sphere{0.1}}}});
  expect_error<GeometryError>([&] { ContactDetector(m, {EnvironmentShape{"rock", Transform::Identity(), Sphere{-1.0}, {}}}); },
                              {"rock", "radius"});
  expect_error<GeometryError>(
      [&] { ContactDetector(m, {EnvironmentShape{"crate", Transform::Identity(), Box{Vec3(1, NAN, 1)}, {}}}); },
      {"crate", "box size"});
  expect_error<GeometryError>(
      [&] { ContactDetector(m, {EnvironmentShape{"tilted", Transform(2.0 * Mat3::Identity(), Vec3::Zero()), Plane{}, {}}}); },
      {"tilted", "rotation"});
  expect_error<GeometryError>([&] { ground_plane("flat", Vec3::Zero()); }, {"flat", "normal"});
  const Model other = free_bodies({{{"ball", Sphere{0.1}}}});
  const ContactDetector det(m, {ground_plane()});
  Data d(other);
  std::vector<Contact> out;
  expect_error<ArgumentError>([&] { det.detect(other, d, out); }, {"detector"});
}

TEST(ContactGeometry, JointLimitsAreUnilateralContacts) {
  ModelBuilder b("limited");
  const int base = b.add_body("base", 0, JointSpec::free_flyer("root"), Transform::Identity(), unit_inertia());
  b.add_body("arm", base, JointSpec::revolute("shoulder", Vec3::UnitY(), -1.0, 1.5), Transform::Identity(), unit_inertia());
  b.add_body("slide", base, JointSpec::prismatic("rail", Vec3::UnitX(), -0.2, 0.2), Transform::Identity(), unit_inertia());
  b.add_body("wheel", base, JointSpec::continuous("axle", Vec3::UnitX()), Transform::Identity(), unit_inertia());
  const Model m = b.build();
  VectorX q = neutral_configuration(m);
  q[7] = 1.45;   // shoulder: 0.05 below the upper limit
  q[8] = -0.19;  // rail: 0.01 above the lower limit
  q[9] = 100.0;  // axle: no limits
  std::vector<Contact> cs;
  detect_joint_limits(m, q, 0.1, cs);
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].kind, ContactKind::JointLimit);
  EXPECT_EQ(cs[0].dof, 6);
  EXPECT_NEAR(cs[0].gap, 0.05, 1e-12);
  EXPECT_EQ(cs[0].normal.x(), -1.0);
  EXPECT_EQ(cs[0].body_a, base);
  EXPECT_EQ(cs[1].dof, 7);
  EXPECT_NEAR(cs[1].gap, 0.01, 1e-12);
  EXPECT_EQ(cs[1].normal.x(), 1.0);
  EXPECT_NE(cs[0].id, cs[1].id);
  // Appends; a smaller margin keeps only the rail.
  detect_joint_limits(m, q, 0.02, cs);
  EXPECT_EQ(cs.size(), 3u);
  // Their Jacobian columns are ±e_dof with ṫᵀq̇ = 0, and φ̇ = ±q̇.
  Data d(m);
  std::mt19937_64 g(3);
  const VectorX v = random_vector(g, m.nv());
  forward_kinematics(m, d, q, v, VectorX::Zero(m.nv()));
  MatrixX T(m.nv(), 3);
  VectorX Tdv(3);
  contact_jacobian(m, d, cs, T, Tdv);
  MatrixX expected = MatrixX::Zero(m.nv(), 3);
  expected(6, 0) = -1.0;
  expected(7, 1) = 1.0;
  expected(7, 2) = 1.0;
  EXPECT_EQ(T, expected);
  EXPECT_EQ(Tdv, VectorX::Zero(3));
  EXPECT_NEAR(contact_kinematics(m, d, cs[0]).gap_rate, -v[6], 1e-12);
  EXPECT_NEAR(contact_kinematics(m, d, cs[1]).gap_rate, v[7], 1e-12);
}

TEST(ContactGeometry, ProjectModelsOnTheGround) {
  // Every URDF in models/ with its root joint, self-collision on, against the
  // ground and a step: detection runs, contacts are consistent, and every
  // warning names an unsupported pair (arm7's cylinders against each other).
  for (const auto& nm : all_models()) {
    SCOPED_TRACE(nm.file);
    const Model m = load_model(nm.file, nm.root);
    DetectionOptions opt;
    opt.margin = 100.0;
    opt.self_collision = true;
    const ContactDetector det(m, {ground_plane("ground", Vec3::UnitZ(), Vec3(0, 0, -2)),
                                  environment_box("step", Vec3(0.5, 0.5, 0.2), Vec3(0.3, 0, -1.9))},
                              opt);
    for (const std::string& w : det.warnings()) EXPECT_NE(w.find("not supported"), std::string::npos) << w;
    const auto cs = detect_at(m, det, random_configuration(m, 4));
    expect_consistent(cs);
    // Each moving shape reaches the ground: a sphere with 1 contact, a box
    // with 8, a cylinder with 2 (or 8 standing within cylinder_flat_angle).
    std::map<int, std::size_t> ground;
    for (const Contact& c : cs) ground[c.shape_b] += det.shapes()[c.shape_a].name == "ground";
    for (int k = 0; k < det.num_robot_shapes(); ++k) {
      const DetectorShape& s = det.shapes()[k];
      if (s.body == 0) continue;
      const std::size_t n = ground[k];
      if (std::holds_alternative<Sphere>(s.geometry)) {
        EXPECT_EQ(n, 1u) << s.name;
      } else if (std::holds_alternative<Box>(s.geometry)) {
        EXPECT_EQ(n, 8u) << s.name;
      } else if (std::holds_alternative<Cylinder>(s.geometry)) {
        EXPECT_TRUE(n == 2 || n == 8) << s.name << " " << n;
      }
    }
  }
}

TEST(ContactGeometry, BoundingSpheresNeverHideAContactBelowTheMargin) {
  // detect() skips pairs whose bounding spheres are further apart than the
  // margin. Against an independent reference — the same detector with a
  // 100 m margin, filtered to φ < margin — nothing may be lost, in random
  // touching and interpenetrating configurations of every shape pair.
  const Model m = free_bodies({{{"block", Box{Vec3(0.4, 0.3, 0.2)}}, {"ball", Sphere{0.1}, Transform::translation(Vec3(0, 0, 0.3))}},
                               {{"can", Cylinder{0.1, 0.3}}, {"pill", Capsule{0.05, 0.4}, Transform::translation(Vec3(0.2, 0, 0))}},
                               {{"crate", Box{Vec3(0.2, 0.2, 0.5)}}, {"dot", Sphere{0.0}}}});
  const std::vector<EnvironmentShape> env = {ground_plane(), environment_box("step", Vec3(1, 1, 0.2), Vec3(0.3, 0, 0.1)),
                                             EnvironmentShape{"post", Transform::translation(Vec3(-0.3, 0.2, 0.3)), Capsule{0.05, 0.6}, {}}};
  DetectionOptions wide;
  wide.margin = 100.0;
  const ContactDetector reference(m, env, wide);
  std::size_t compared = 0;
  for (const double margin : {0.0, 0.05}) {
    DetectionOptions opt;
    opt.margin = margin;
    const ContactDetector det(m, env, opt);
    for (std::uint64_t seed = 0; seed < 300; ++seed) {
      std::mt19937_64 g(seed);
      VectorX q = neutral_configuration(m);
      for (int b = 1; b <= 3; ++b) set_pose(m, q, b, random_rotation(g), Vec3(0, 0, 0.25) + random_vec3(g, 0.35));
      const auto got = detect_at(m, det, q);
      std::set<std::uint64_t> expected, ids;
      for (const Contact& c : detect_at(m, reference, q)) {
        if (c.gap < margin) expected.insert(c.id);
      }
      for (const Contact& c : got) ids.insert(c.id);
      EXPECT_EQ(ids, expected) << "seed " << seed << " margin " << margin;
      compared += expected.size();
    }
  }
  EXPECT_GT(compared, 500u);
}
