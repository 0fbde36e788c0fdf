// Contact kinematics: T (11.25) and Ṫᵀq̇ (11.30) for every supported shape
// pair, checked against finite differences of the detected gaps along
// q(t) = integrate(q, q̇, t) (constant q̇, so q̈ = 0):
//   φ̇ = tᵀq̇        central difference of φ, h = 1e-6;
//   φ̈ = ṫᵀq̇        second difference of φ, h = 1e-4;
//   ṫᵀq̇ = d/dt (t(q(t))ᵀq̇) and Ḋᵀq̇ = d/dt (D(q(t))ᵀq̇), h = 1e-6;
// each contact re-detected at q(±h) and matched by id. Also: T against the
// literal (J_bᵀ − J_a ᵀ) n_i with world body Jacobians, closed forms where ṅ
// matters (a rolling sphere, orbiting spheres), and no allocation.
#include <gtest/gtest.h>
#include <Eigen/Eigenvalues>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <map>

#include "algorithms/crba_placements.hpp"
#include "algorithms/delassus_blocks.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "plume/contact/detection.hpp"
#include "plume/geometry/convex_hull.hpp"
#include "test_utils.hpp"

// ---- malloc counting (copied from test_allocation.cpp) ---------------------------------------
#include "alloc_counter.hpp"

using namespace plume;
using namespace plume::test;

namespace {

template <class F>
long allocations_in(F&& f) {
  g_allocations = 0;
  g_armed = true;
  f();
  g_armed = false;
  return g_allocations.load();
}

const double kPi = std::acos(-1.0);

RigidInertia unit_inertia() { return RigidInertia::from_mass_com_inertia(1.0, Vec3::Zero(), 0.01 * Mat3::Identity()); }

struct BodyShape {
  std::string name;
  Geometry geometry;
  Transform placement = Transform::Identity();  // X_shape_body
};

Model free_bodies(const std::vector<std::vector<BodyShape>>& bodies) {
  ModelBuilder b("free_bodies");
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const std::string name = "body" + std::to_string(i + 1);
    const int body = b.add_body(name, 0, JointSpec::free_flyer(name + "_joint"), Transform::Identity(), unit_inertia());
    for (const BodyShape& s : bodies[i]) b.add_collision(CollisionShape{s.name, name, body, s.placement, s.geometry, {}});
  }
  return b.build();
}

void set_pose(const Model& m, VectorX& q, int body, const Mat3& R, const Vec3& p) {
  const int i = m.joint(body).q_index;
  q.segment<3>(i) = p;
  q.segment<4>(i + 3) = Eigen::Quaterniond(R).coeffs();
}

Mat3 rot(const Vec3& axis, double angle) { return Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix(); }

Transform random_placement(std::mt19937_64& g, double offset) {
  return Transform::from_pose(random_rotation(g), random_vec3(g, offset));
}

// Worst relative errors over every checked contact, and what was covered.
// A random 6-body tree (every joint kind) with one shape per body, cycling
// through `kinds`, each at a random placement on its body.
Model shaped_tree(std::uint64_t seed, std::mt19937_64& g, const std::vector<Geometry>& kinds) {
  const Model tree = random_tree(seed, 6);
  ModelBuilder b("shapes_" + std::to_string(seed));
  const std::vector<int> index = b.append_model(tree, 0, Transform::Identity(), "");
  for (int body = 1; body < tree.nbodies(); ++body) {
    b.add_collision(CollisionShape{"shape" + std::to_string(body), tree.body_name(body), index[body],
                                   random_placement(g, 0.2), kinds[body % kinds.size()], {}});
  }
  return b.build();
}

struct FdStats {
  double first = 0.0;    // |Δφ/2h − tᵀq̇| / max(1, |tᵀq̇|)
  double second = 0.0;   // |Δ²φ/h² − ṫᵀq̇| / max(1, |ṫᵀq̇|)
  double richardson = 0.0;  // the same with (4Δ²_h − Δ²_2h)/3
  double tdot = 0.0;     // |Δ(tᵀq̇)/2h − ṫᵀq̇| / max(1, |ṫᵀq̇|)
  double tangent = 0.0;  // |Δ(dᵀq̇)/2h − ḋᵀq̇| / max(1, |ḋᵀq̇|)
  double jacobian = 0.0; // |t − (J_bᵀ − J_aᵀ) n_i|
  int checked = 0;
  int unmatched = 0;  // contacts whose feature changed within ±h (not checked)
  std::map<FeaturePair, int> types;

  void merge(const FdStats& o) {
    first = std::max(first, o.first);
    second = std::max(second, o.second);
    richardson = std::max(richardson, o.richardson);
    tdot = std::max(tdot, o.tdot);
    tangent = std::max(tangent, o.tangent);
    jacobian = std::max(jacobian, o.jacobian);
    checked += o.checked;
    unmatched += o.unmatched;
    for (const auto& [k, n] : o.types) types[k] += n;
  }
};

const char* type_name(FeaturePair t) {
  switch (t) {
    case FeaturePair::FacePoint: return "FacePoint";
    case FeaturePair::PointPoint: return "PointPoint";
    case FeaturePair::LinePoint: return "LinePoint";
    case FeaturePair::LineLine: return "LineLine";
    case FeaturePair::FaceRim: return "FaceRim";
    case FeaturePair::RimPoint: return "RimPoint";
    case FeaturePair::None: return "None";
  }
  return "?";
}

std::string describe(const FdStats& s) {
  std::string out = "checked " + std::to_string(s.checked) + " (unmatched " + std::to_string(s.unmatched) + "):";
  for (const auto& [k, n] : s.types) out += std::string(" ") + type_name(k) + "=" + std::to_string(n);
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "; max errors: first %.1e, second %.1e (Richardson %.1e), tdot %.1e, tangent %.1e, T %.1e", s.first,
                s.second, s.richardson, s.tdot, s.tangent, s.jacobian);
  return out + buf;
}

const Contact* find_id(const std::vector<Contact>& cs, std::uint64_t id) {
  for (const Contact& c : cs) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

// The state at q(t) = integrate(q, v, t): contacts, T, Ṫᵀq̇ and the friction terms.
struct Snapshot {
  std::vector<Contact> contacts;
  MatrixX T, D;
  VectorX Tdv, Ddv;
};

constexpr int kDirections = 5;  // a polyhedral cone with non-trivial angles

Snapshot snapshot(const Model& m, const ContactDetector& det, const VectorX& q, const VectorX& v, double t) {
  Data d(m);
  const VectorX qt = integrate(m, q, v, t);
  forward_kinematics(m, d, qt, v, VectorX::Zero(m.nv()));
  Snapshot s;
  det.detect(m, d, s.contacts);
  const int nc = static_cast<int>(s.contacts.size());
  s.T.resize(m.nv(), nc);
  s.Tdv.resize(nc);
  s.D.resize(m.nv(), kDirections * nc);
  s.Ddv.resize(kDirections * nc);
  contact_jacobian(m, d, s.contacts, s.T, s.Tdv);
  tangent_jacobian(m, d, s.contacts, kDirections, s.D, s.Ddv);
  return s;
}

FdStats check_contact_kinematics(const Model& m, const ContactDetector& det, const VectorX& q, const VectorX& v) {
  FdStats st;
  const double h1 = 1e-6, h2 = 1e-4;
  const Snapshot s0 = snapshot(m, det, q, v, 0.0);
  const Snapshot p1 = snapshot(m, det, q, v, h1), m1 = snapshot(m, det, q, v, -h1);
  const Snapshot p2 = snapshot(m, det, q, v, h2), m2 = snapshot(m, det, q, v, -h2);
  const Snapshot p3 = snapshot(m, det, q, v, 2 * h2), m3 = snapshot(m, det, q, v, -2 * h2);
  Data d(m);
  forward_kinematics(m, d, q, v, VectorX::Zero(m.nv()));
  Matrix6X Ja(6, m.nv()), Jb(6, m.nv());
  for (std::size_t i = 0; i < s0.contacts.size(); ++i) {
    const Contact& c = s0.contacts[i];
    // 11.25 literally: t = (J_bᵀ − J_aᵀ) n_i, n_i = [p × n; n], world body Jacobians.
    body_jacobian(m, d, c.body_a, ReferenceFrame::World, Ja);
    body_jacobian(m, d, c.body_b, ReferenceFrame::World, Jb);
    Vec6 ni;
    ni << c.point_b.cross(c.normal), c.normal;
    const VectorX t_ref = (Jb - Ja).transpose() * ni;
    st.jacobian = std::max(st.jacobian, (s0.T.col(i) - t_ref).norm());
    EXPECT_NEAR(contact_kinematics(m, d, c).gap_rate, s0.T.col(i).dot(v), 1e-12);

    const Contact *cp1 = find_id(p1.contacts, c.id), *cm1 = find_id(m1.contacts, c.id);
    const Contact *cp2 = find_id(p2.contacts, c.id), *cm2 = find_id(m2.contacts, c.id);
    const Contact *cp3 = find_id(p3.contacts, c.id), *cm3 = find_id(m3.contacts, c.id);
    if (!cp1 || !cm1 || !cp2 || !cm2 || !cp3 || !cm3) {
      ++st.unmatched;
      continue;
    }
    ++st.checked;
    ++st.types[c.local.type];
    const double zeta = s0.T.col(i).dot(v);  // 11.28
    const double fd1 = (cp1->gap - cm1->gap) / (2 * h1);
    st.first = std::max(st.first, std::abs(fd1 - zeta) / std::max(1.0, std::abs(zeta)));
    const double tdv = s0.Tdv[i];
    const double fd2 = (cp2->gap - 2 * c.gap + cm2->gap) / (h2 * h2);
    st.second = std::max(st.second, std::abs(fd2 - tdv) / std::max(1.0, std::abs(tdv)));
    // Richardson: with the differences at h and 2h the h² truncation term cancels.
    const double fd2_2h = (cp3->gap - 2 * c.gap + cm3->gap) / (4 * h2 * h2);
    const double extrapolated = (4 * fd2 - fd2_2h) / 3;
    st.richardson = std::max(st.richardson, std::abs(extrapolated - tdv) / std::max(1.0, std::abs(tdv)));
    const Eigen::Index ip = cp1 - p1.contacts.data(), im = cm1 - m1.contacts.data();
    const double fdt = (p1.T.col(ip).dot(v) - m1.T.col(im).dot(v)) / (2 * h1);
    st.tdot = std::max(st.tdot, std::abs(fdt - tdv) / std::max(1.0, std::abs(tdv)));
    for (int j = 0; j < kDirections; ++j) {
      const double rate = s0.Ddv[kDirections * i + j];
      const double fd = (p1.D.col(kDirections * ip + j).dot(v) - m1.D.col(kDirections * im + j).dot(v)) / (2 * h1);
      st.tangent = std::max(st.tangent, std::abs(fd - rate) / std::max(1.0, std::abs(rate)));
    }
  }
  return st;
}

// Tolerances, relative to max(1, |value|).
// - First differences with h = 1e-6: truncation h²φ‴/6 ≲ 1e-11, rounding
//   ε|φ|/h ~ 1e-9 for |φ| ≲ 10 (far contacts are kept on purpose) → 1e-7.
// - Second difference with h = 1e-4: rounding 4ε|φ|/h² ≲ 1e-6; truncation
//   h²φ⁗/12, which reaches a few 1e-6 for points 5 cm from a cylinder rim
//   moving at 2 m/s (the normal turns at ~40 rad/s, φ⁗ ~ v⁴/ρ³ ~ 1e5) → 2e-5
//   in gcc builds; a clang 14 -O1 sanitizer build measures 3.6e-5
//   (capsule-capsule) and 2.3e-5 (box-sphere) with Richardson at 6e-8, i.e.
//   truncation, not a wrong derivative → 5e-5.
//   Richardson extrapolation from h and 2h cancels the h² term → 2e-6 (rounding).
// - d/dt (tᵀq̇), d/dt (dᵀq̇) by first differences, h = 1e-6: rounding
//   ε|tᵀq̇|/h ~ 1e-10 times the conditioning of near-degenerate features → 1e-7.
constexpr double kFirstTol = 1e-7;
constexpr double kSecondTol = 5e-5;
constexpr double kRichardsonTol = 2e-6;
constexpr double kRateTol = 1e-7;

// `manifold`: a kernel that reports one contact manifold per pair from the
// axis of least penetration (box–box) changes every contact of a pair at
// once when that axis changes within ±2e-4 s (in this random scenario: two
// boxes overlapping by 0.1–0.4 m); one such pair is allowed.
void expect_within_tolerance(const FdStats& st, const std::string& what, int manifold = 0) {
  SCOPED_TRACE(what + ": " + describe(st));
  std::printf("[ %s ] %s\n", what.c_str(), describe(st).c_str());
  EXPECT_GT(st.checked, 0);
  EXPECT_LT(st.unmatched, std::max({2, st.checked / 20, manifold + 1}));  // features rarely change within ±1e-4
  EXPECT_LT(st.first, kFirstTol);
  EXPECT_LT(st.second, kSecondTol);
  EXPECT_LT(st.richardson, kRichardsonTol);
  EXPECT_LT(st.tdot, kRateTol);
  EXPECT_LT(st.tangent, kRateTol);
  EXPECT_LT(st.jacobian, 1e-12);
}

// Two free bodies (or one over the environment) with random poses within
// `spread` of each other, random shape placements and random velocities.
struct PairScenario {
  std::string name;
  std::vector<BodyShape> shapes1;  // on body 1
  std::vector<BodyShape> shapes2;  // on body 2 (empty: body 1 against the environment)
  std::vector<EnvironmentShape> environment;
  double spread = 1.0;
};

FdStats run_pair_scenario(const PairScenario& sc, int seeds, double margin = 100.0) {
  FdStats total;
  for (int seed = 1; seed <= seeds; ++seed) {
    std::mt19937_64 g(1000 + seed);
    std::vector<std::vector<BodyShape>> bodies{sc.shapes1};
    if (!sc.shapes2.empty()) bodies.push_back(sc.shapes2);
    for (auto& body : bodies) {
      for (BodyShape& s : body) s.placement = random_placement(g, 0.1);
    }
    const Model m = free_bodies(bodies);
    DetectionOptions opt;
    opt.margin = margin;
    const ContactDetector det(m, sc.environment, opt);
    VectorX q = neutral_configuration(m);
    const Vec3 centre = random_vec3(g, 0.5);
    for (int b = 1; b < m.nbodies(); ++b) set_pose(m, q, b, random_rotation(g), centre + random_vec3(g, sc.spread));
    const VectorX v = random_vector(g, m.nv(), 1.0);
    total.merge(check_contact_kinematics(m, det, q, v));
  }
  return total;
}

EnvironmentShape tilted_ground() { return ground_plane("ground", Vec3(0.1, -0.2, 1.0), Vec3(0, 0, -1.5)); }

}  // namespace

// The cone's directions against cos/sin of 2πj/k, with the exact values the
// contact LCPs rely on: a planar model's contact cannot move along t2, and
// cos(π/2) = 6e-17 left a column of rounding there that Lemke's scaling blew
// up into a false "proved infeasible" (a sliding rod's end that sticks).
TEST(ConeDirection, QuarterTurnsAreExact) {
  for (int k : {4, 5, 6, 7, 8, 12, 16}) {
    for (int j = 0; j < k; ++j) {
      const double th = 2.0 * 3.14159265358979323846 * j / k;
      const Eigen::Vector2d cs = cone_direction(k, j);
      EXPECT_NEAR(cs(0), std::cos(th), 1e-15) << k << " " << j;
      EXPECT_NEAR(cs(1), std::sin(th), 1e-15) << k << " " << j;
      EXPECT_NEAR(cs.norm(), 1.0, 1e-15);
      if ((4 * j) % k == 0) {
        EXPECT_EQ(cs(0) * cs(1), 0.0) << k << " " << j;
        EXPECT_EQ(std::abs(cs(0)) + std::abs(cs(1)), 1.0) << k << " " << j;
      }
      EXPECT_EQ(cone_direction(k, j + k), cs);
    }
  }
  EXPECT_THROW(cone_direction(0, 0), ArgumentError);
  // contact_tangents uses them: direction 2 of 8 is t2 itself.
  Contact c;
  c.normal = Vec3(0.0, 0.0, 1.0);
  Matrix3X D(3, 8);
  contact_tangents({c}, 8, D);
  Vec3 t1, t2;
  tangent_basis(c.normal, t1, t2);
  EXPECT_EQ(Vec3(D.col(2)), t2);
  EXPECT_EQ(Vec3(D.col(4)), Vec3(-t1));
}

TEST(ContactKinematics, PlaneAgainstEveryShape) {
  FdStats all;
  const std::vector<PairScenario> scenarios = {
      {"plane-sphere", {{"ball", Sphere{0.2}}, {"point", Sphere{0.0}}}, {}, {tilted_ground()}},
      {"plane-box (tumbling)", {{"block", Box{Vec3(0.5, 0.3, 0.2)}}}, {}, {tilted_ground()}},
      {"plane-capsule", {{"pill", Capsule{0.1, 0.6}}}, {}, {tilted_ground()}},
      {"plane-cylinder", {{"can", Cylinder{0.15, 0.4}}}, {}, {tilted_ground()}},
      {"a plane carried by a body (b) under a sphere (a)", {{"ball", Sphere{0.2}}}, {{"board", Plane{}}}, {}},
  };
  for (const PairScenario& sc : scenarios) {
    const FdStats st = run_pair_scenario(sc, 20);
    expect_within_tolerance(st, sc.name);
    all.merge(st);
  }
  EXPECT_GT(all.types[FeaturePair::FacePoint], 0);
  EXPECT_GT(all.types[FeaturePair::FaceRim], 0);
}

TEST(ContactKinematics, CylinderStandingFlatOnPlane) {
  // Within cylinder_flat_angle of the plane normal: 4 fixed rim points per rim.
  FdStats all;
  for (int seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 g(seed);
    const Model m = free_bodies({{{"can", Cylinder{0.15, 0.4}}}});
    DetectionOptions opt;
    opt.margin = 1.0;
    const ContactDetector det(m, {ground_plane()}, opt);
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, rot(random_vec3(g), 0.003), Vec3(0.1, 0.2, 0.2));
    VectorX v = random_vector(g, m.nv(), 1.0);
    const FdStats st = check_contact_kinematics(m, det, q, v);
    EXPECT_EQ(st.checked, 8);
    all.merge(st);
  }
  expect_within_tolerance(all, "plane-cylinder (flat)");
}

TEST(ContactKinematics, SpheresCapsulesAndCylinders) {
  FdStats all;
  const std::vector<PairScenario> scenarios = {
      {"sphere-sphere", {{"ball", Sphere{0.2}}, {"point", Sphere{0.0}}}, {{"other", Sphere{0.3}}}, {}},
      {"sphere-capsule", {{"ball", Sphere{0.2}}, {"point", Sphere{0.0}}}, {{"pill", Capsule{0.1, 0.8}}}, {}, 0.6},
      {"sphere-cylinder", {{"ball", Sphere{0.2}}, {"point", Sphere{0.0}}}, {{"can", Cylinder{0.3, 0.8}}}, {}, 0.6},
      {"capsule-capsule", {{"pill", Capsule{0.1, 0.8}}}, {{"other", Capsule{0.15, 0.5}}}, {}, 0.6},
      {"environment capsule-sphere", {{"ball", Sphere{0.2}}}, {},
       {EnvironmentShape{"post", Transform::from_pose(rot(Vec3(1, 0, 0), 0.3), Vec3(0, 0, 0.2)), Capsule{0.1, 1.0}, {}}}},
  };
  for (const PairScenario& sc : scenarios) {
    const FdStats st = run_pair_scenario(sc, 40);
    expect_within_tolerance(st, sc.name);
    all.merge(st);
  }
  for (FeaturePair t : {FeaturePair::PointPoint, FeaturePair::LinePoint, FeaturePair::LineLine, FeaturePair::FacePoint,
                        FeaturePair::RimPoint}) {
    EXPECT_GT(all.types[t], 0) << type_name(t);
  }
}

TEST(ContactKinematics, ParallelCapsules) {
  // Nearly parallel axes (sin angle < parallel_tolerance at q and q(±h)):
  // each end against the other segment.
  FdStats all;
  for (int seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 g(seed);
    const Model m = free_bodies({{{"a", Capsule{0.1, 1.0}}}, {{"b", Capsule{0.1, 0.8}}}});
    DetectionOptions opt;
    opt.margin = 10.0;
    const ContactDetector det(m, {}, opt);
    VectorX q = neutral_configuration(m);
    const Mat3 R = random_rotation(g);
    set_pose(m, q, 1, R, Vec3::Zero());
    set_pose(m, q, 2, R * rot(random_vec3(g), 1e-4), R * Vec3(0.3, 0.25, 0.2));
    const VectorX v = random_vector(g, m.nv(), 1.0);
    all.merge(check_contact_kinematics(m, det, q, v));
  }
  expect_within_tolerance(all, "capsule-capsule (parallel)");
}

TEST(ContactKinematics, BoxesAgainstSpheresCapsulesCylindersAndBoxes) {
  FdStats all;
  const Box box{Vec3(0.6, 0.5, 0.4)};
  const std::vector<PairScenario> scenarios = {
      {"box-sphere", {{"ball", Sphere{0.1}}, {"point", Sphere{0.0}}}, {{"block", box}}, {}, 0.5},
      {"environment box-sphere", {{"ball", Sphere{0.1}}}, {},
       {environment_box("crate", Vec3(0.6, 0.5, 0.4), Vec3(0.1, 0, 0.2), rot(Vec3(1, 2, 3), 0.5))}, 0.5},
      {"box-capsule", {{"pill", Capsule{0.1, 1.0}}}, {{"block", box}}, {}, 0.4},
      {"box-box", {{"small", Box{Vec3(0.4, 0.3, 0.3)}}}, {{"block", box}}, {}, 0.4},
      {"box-cylinder", {{"can", Cylinder{0.2, 0.5}}}, {{"block", box}}, {}, 0.4},
  };
  for (const PairScenario& sc : scenarios) {
    const FdStats st = run_pair_scenario(sc, 40);
    expect_within_tolerance(st, sc.name, sc.name == "box-box" ? 8 : 0);
    all.merge(st);
  }
  for (FeaturePair t : {FeaturePair::PointPoint, FeaturePair::LinePoint, FeaturePair::LineLine, FeaturePair::FacePoint,
                        FeaturePair::FaceRim, FeaturePair::RimPoint}) {
    EXPECT_GT(all.types[t], 0) << type_name(t);
  }
}

// A collision mesh's hull: 14 points on an ellipsoid, so that faces, edges
// and vertices all meet other shapes at general angles.
Mesh ellipsoid_hull(double a, double b, double c) {
  std::mt19937_64 g(77);
  std::normal_distribution<double> n01;
  std::vector<Vec3> pts;
  for (int i = 0; i < 14; ++i) pts.push_back(Vec3(n01(g), n01(g), n01(g)).normalized().cwiseProduct(Vec3(a, b, c)));
  Mesh m;
  m.filename = m.resolved = "ellipsoid.stl";
  m.hull = std::make_shared<const ConvexHull>(ConvexHull::from_points(pts));
  return m;
}

TEST(ContactKinematics, HullsAgainstEveryShape) {
  FdStats all;
  const Mesh hull = ellipsoid_hull(0.3, 0.25, 0.2);
  const std::vector<PairScenario> scenarios = {
      {"plane-hull", {{"mesh", hull}}, {}, {ground_plane("ground", Vec3(0.1, -0.2, 1.0), Vec3::Zero())}, 0.3},
      {"hull-sphere", {{"ball", Sphere{0.1}}, {"point", Sphere{0.0}}}, {{"mesh", hull}}, {}, 0.4},
      {"hull-capsule", {{"pill", Capsule{0.1, 1.0}}}, {{"mesh", hull}}, {}, 0.4},
      {"hull-cylinder", {{"can", Cylinder{0.2, 0.5}}}, {{"mesh", hull}}, {}, 0.4},
      {"hull-box", {{"block", Box{Vec3(0.4, 0.3, 0.3)}}}, {{"mesh", hull}}, {}, 0.4},
      {"hull-hull", {{"other", ellipsoid_hull(0.2, 0.3, 0.25)}}, {{"mesh", hull}}, {}, 0.4},
  };
  for (const PairScenario& sc : scenarios) {
    const FdStats st = run_pair_scenario(sc, 40, 0.3);
    expect_within_tolerance(st, sc.name);
    EXPECT_GT(st.checked, 20) << sc.name;
    all.merge(st);
  }
  for (FeaturePair t : {FeaturePair::PointPoint, FeaturePair::LinePoint, FeaturePair::LineLine, FeaturePair::FacePoint,
                        FeaturePair::FaceRim, FeaturePair::RimPoint}) {
    EXPECT_GT(all.types[t], 0) << type_name(t);
  }
}

TEST(ContactKinematics, ArticulatedRobotsWithSelfCollision) {
  // Random trees (every joint kind) carrying shapes, against the ground and a
  // step, with self-collision: T through arbitrary joints and common ancestors.
  FdStats all;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    std::mt19937_64 g(seed);
    const Model m = shaped_tree(seed, g,
                                {Sphere{0.1}, Box{Vec3(0.2, 0.15, 0.1)}, Capsule{0.05, 0.3}, Sphere{0.0}, Cylinder{0.08, 0.2}});
    DetectionOptions opt;
    opt.margin = 100.0;
    opt.self_collision = true;
    const ContactDetector det(m, {tilted_ground(), environment_box("step", Vec3(1, 1, 0.3), Vec3(0.5, 0, -1.2))}, opt);
    const VectorX q = random_configuration(m, seed);
    const VectorX v = random_vector(g, m.nv(), 1.0);
    all.merge(check_contact_kinematics(m, det, q, v));
  }
  expect_within_tolerance(all, "articulated");
}

TEST(ContactKinematics, RodEndsOnTheGround) {
  const Model m = load_model("rod.urdf", urdf::RootJoint::Planar);
  DetectionOptions opt;
  opt.margin = 10.0;
  const ContactDetector det(m, {ground_plane()}, opt);
  FdStats all;
  for (int seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 g(seed);
    const VectorX q = random_configuration(m, seed);
    const VectorX v = random_vector(g, m.nv(), 2.0);
    all.merge(check_contact_kinematics(m, det, q, v));
  }
  EXPECT_EQ(all.checked, 10);
  expect_within_tolerance(all, "rod");
}

TEST(ContactKinematics, SphereRollingOnPlaneNeedsTheWitnessPointMotion) {
  // A sphere of radius r rolling along x at speed V: ω = (0, V/r, 0), centre
  // velocity (V, 0, 0). With constant body twist the body turns about the
  // fixed contact line, so the centre falls at φ̈ = −V²/r, while the body
  // point at the contact has zero acceleration: n·a^vp alone gives 0.
  const double r = 0.3, V = 1.7;
  const Model m = free_bodies({{{"ball", Sphere{r}}}});
  DetectionOptions touching;
  touching.margin = 1e-9;
  const ContactDetector det(m, {ground_plane()}, touching);
  VectorX q = neutral_configuration(m);
  set_pose(m, q, 1, Mat3::Identity(), Vec3(0.4, -0.1, r));
  VectorX v(6);
  v << 0.0, V / r, 0.0, V, 0.0, 0.0;  // body frame [ω; v] = world here
  Data d(m);
  forward_kinematics(m, d, q, v, VectorX::Zero(6));
  std::vector<Contact> cs;
  det.detect(m, d, cs);
  ASSERT_EQ(cs.size(), 1u);
  MatrixX T(6, 1);
  VectorX Tdv(1);
  contact_jacobian(m, d, cs, T, Tdv);
  EXPECT_NEAR(T.col(0).dot(v), 0.0, 1e-14);
  EXPECT_NEAR(Tdv[0], -V * V / r, 1e-12);
  const Vec3 contact_body = d.X0[1].transform_point(cs[0].point_b);
  EXPECT_NEAR(point_velocity_product(m, d, 1, contact_body, ReferenceFrame::LocalWorldAligned).z(), 0.0, 1e-12);
  // Rolling: no sliding in any direction.
  MatrixX D(6, 4);
  VectorX Ddv(4);
  tangent_jacobian(m, d, cs, 4, D, Ddv);
  EXPECT_LT((D.transpose() * v).norm(), 1e-14);
}

TEST(ContactKinematics, OrbitingSpheresNeedTheNormalRate) {
  // Sphere b orbits sphere a at constant distance d with rate Ω (a rotation
  // about the world z axis through a's centre): φ̇ = φ̈ = 0, so ṫᵀq̇ = 0, while
  // the centripetal n·a^vp_b = −Ω² d is cancelled by ṅ·(v_b − v_a).
  const double d = 1.2, W = 0.8;
  {
    const Model m = free_bodies({{{"moon", Sphere{0.2}}}});
    const ContactDetector det(m, {EnvironmentShape{"planet", Transform::Identity(), Sphere{0.5}, {}}}, {1.0});
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, Mat3::Identity(), Vec3(d, 0, 0));
    VectorX v(6);
    v << 0, 0, W, 0, W * d, 0;
    Data data(m);
    forward_kinematics(m, data, q, v, VectorX::Zero(6));
    std::vector<Contact> cs;
    det.detect(m, data, cs);
    ASSERT_EQ(cs.size(), 1u);
    MatrixX T(6, 1);
    VectorX Tdv(1);
    contact_jacobian(m, data, cs, T, Tdv);
    EXPECT_NEAR(T.col(0).dot(v), 0.0, 1e-14);
    EXPECT_NEAR(Tdv[0], 0.0, 1e-12);
    const Motion a = body_velocity_product(m, data, 1, ReferenceFrame::LocalWorldAligned);
    EXPECT_NEAR(cs[0].normal.dot(a.linear()), -W * W * d, 1e-12);
    const ContactKinematics k = contact_kinematics(m, data, cs[0]);
    EXPECT_NEAR(k.normal_rate.y(), W, 1e-12);  // ṅ = Ω × n
  }
  {
    // Both moving: two free spheres on opposite sides of the axis.
    const Model m = free_bodies({{{"a", Sphere{0.2}}}, {{"b", Sphere{0.3}}}});
    const ContactDetector det(m, {}, {2.0});
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, rot(Vec3::UnitZ(), 0.4), Vec3(-0.5, 0, 0));
    set_pose(m, q, 2, Mat3::Identity(), Vec3(0.7, 0, 0));
    VectorX v(12);
    const Vec3 w(0, 0, W);
    const Mat3 R1 = rot(Vec3::UnitZ(), 0.4);
    v << R1.transpose() * w, R1.transpose() * w.cross(Vec3(-0.5, 0, 0)), w, w.cross(Vec3(0.7, 0, 0));
    Data data(m);
    forward_kinematics(m, data, q, v, VectorX::Zero(12));
    std::vector<Contact> cs;
    det.detect(m, data, cs);
    ASSERT_EQ(cs.size(), 1u);
    MatrixX T(12, 1);
    VectorX Tdv(1);
    contact_jacobian(m, data, cs, T, Tdv);
    EXPECT_NEAR(T.col(0).dot(v), 0.0, 1e-14);
    EXPECT_NEAR(Tdv[0], 0.0, 1e-12);
  }
}

TEST(ContactKinematics, MatchesTheSpatialFormOf11_30) {
  // ṫᵀq̇ = n_i·(a^vp_b − a^vp_a) + ṅ_i·(v_b − v_a) with world spatial vectors,
  // n_i = [p × n; n] and ṅ_i = [ṗ × n + p × ṅ; ṅ] from contact_kinematics().
  std::mt19937_64 g(5);
  const Model m = free_bodies({{{"block", Box{Vec3(0.5, 0.4, 0.3)}}, {"pill", Capsule{0.1, 0.5}, random_placement(g, 0.2)}},
                               {{"can", Cylinder{0.2, 0.4}}, {"ball", Sphere{0.15}, random_placement(g, 0.2)}}});
  DetectionOptions opt;
  opt.margin = 100.0;
  const ContactDetector det(m, {tilted_ground()}, opt);
  const VectorX q = random_configuration(m, 5);
  const VectorX v = random_vector(g, m.nv());
  Data d(m);
  forward_kinematics(m, d, q, v, VectorX::Zero(m.nv()));
  std::vector<Contact> cs;
  det.detect(m, d, cs);
  ASSERT_GT(cs.size(), 10u);
  MatrixX T(m.nv(), cs.size());
  VectorX Tdv(cs.size());
  contact_jacobian(m, d, cs, T, Tdv);
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const ContactKinematics k = contact_kinematics(m, d, cs[i]);
    const Force n_i(k.point_b.cross(k.normal), k.normal);
    const Force ndot_i(k.point_b_rate.cross(k.normal) + k.point_b.cross(k.normal_rate), k.normal_rate);
    const int a = cs[i].body_a, b = cs[i].body_b;
    const Motion avp = body_velocity_product(m, d, b, ReferenceFrame::World) -
                       (a ? body_velocity_product(m, d, a, ReferenceFrame::World) : Motion());
    const Motion vrel = body_velocity(m, d, b, ReferenceFrame::World) -
                        (a ? body_velocity(m, d, a, ReferenceFrame::World) : Motion());
    EXPECT_NEAR(Tdv[i], n_i.dot(avp) + ndot_i.dot(vrel), 1e-10 * std::max(1.0, std::abs(Tdv[i])));
    EXPECT_NEAR(k.gap_rate, n_i.dot(vrel), 1e-12);
  }
}

TEST(ContactKinematics, TangentsAreOrthonormalAndSmooth) {
  std::mt19937_64 g(9);
  for (int k = 0; k < 200; ++k) {
    const Vec3 n = random_vec3(g).normalized();
    Vec3 t1, t2;
    tangent_basis(n, t1, t2);
    EXPECT_NEAR(t1.norm(), 1.0, 1e-12);
    EXPECT_NEAR(t2.norm(), 1.0, 1e-12);
    EXPECT_NEAR(t1.dot(n), 0.0, 1e-12);
    EXPECT_NEAR(t2.dot(n), 0.0, 1e-12);
    EXPECT_LT((t1.cross(t2) - n).norm(), 1e-12);
    // The rates are the derivatives along a rotating normal.
    const Vec3 w = random_vec3(g);
    const double h = 1e-6;
    Vec3 a1, a2, b1, b2, r1, r2, dummy1, dummy2;
    tangent_basis(rot(w, h * w.norm()) * n, a1, a2);
    tangent_basis(rot(w, -h * w.norm()) * n, b1, b2);
    tangent_basis(n, w.cross(n), dummy1, dummy2, r1, r2);
    if (std::abs(n.z() + 0.5) > 1e-3) {  // away from the chart switch
      EXPECT_LT(((a1 - b1) / (2 * h) - r1).norm(), 1e-7);
      EXPECT_LT(((a2 - b2) / (2 * h) - r2).norm(), 1e-7);
    }
  }
  Vec3 t1, t2;
  tangent_basis(Vec3::UnitZ(), t1, t2);
  EXPECT_EQ(t1, Vec3::UnitX());
  EXPECT_EQ(t2, Vec3::UnitY());
  // contact_tangents: (t1, t2) or the cone.
  std::vector<Contact> cs(2);
  cs[1].normal = Vec3(0, 1, 0);
  Matrix3X D(3, 12);
  contact_tangents(cs, 6, D);
  for (int j = 0; j < 6; ++j) {
    EXPECT_NEAR(D.col(j).dot(Vec3::UnitX()), std::cos(2 * kPi * j / 6), 1e-15);
    EXPECT_NEAR(D.col(6 + j).dot(Vec3::UnitY()), 0.0, 1e-15);
  }
  Matrix3X D3(3, 6);
  EXPECT_THROW(contact_tangents(cs, 3, D3), ArgumentError);
  MatrixX T(1, 2);
  VectorX Tdv(2);
  const Model m = free_bodies({{{"ball", Sphere{0.1}}}});
  Data d(m);
  EXPECT_THROW(contact_jacobian(m, d, cs, T, Tdv), ArgumentError);  // T must be nv × nc
  MatrixX T2(6, 2);
  cs[1].body_b = 7;  // no such body
  EXPECT_THROW(contact_jacobian(m, d, cs, T2, Tdv), ArgumentError);
}

// For seeds 1…6: a random tree with every joint kind and shape at a random
// state (data from forward_kinematics(q, v, 0)) and every contact within
// 100 m (self-collision, a tilted ground, joint limits; at least three).
template <class Check>
void for_each_jacobian_scene(Check check) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 g(seed);
    const Model m =
        shaped_tree(seed, g, {Sphere{0.1}, Box{Vec3(0.2, 0.15, 0.1)}, Capsule{0.05, 0.3}, Cylinder{0.08, 0.2}});
    DetectionOptions opt;
    opt.margin = 100.0;
    opt.self_collision = true;
    const ContactDetector det(m, {tilted_ground()}, opt);
    Data d(m);
    const VectorX q = random_configuration(m, seed);
    const VectorX v = random_vector(g, m.nv(), 1.0);
    std::vector<Contact> cs;
    forward_kinematics(m, d, q, v, VectorX::Zero(m.nv()));
    det.detect(m, d, cs);
    detect_joint_limits(m, q, 100.0, cs);
    ASSERT_GT(cs.size(), 2u);
    check(m, d, q, v, cs);
  }
}

TEST(ContactKinematics, OnePassJacobiansMatchTheSeparateOnes) {
  // contact_jacobians() against contact_jacobian() + tangent_jacobian(2):
  // after forward_kinematics(q, v, 0), and after crba + bias_forces (whose
  // accelerations carry the base's −g), on random trees with every joint
  // kind, self-collision, a tilted ground and joint limits.
  for_each_jacobian_scene([](const Model& m, Data& d, const VectorX& q, const VectorX& v,
                             const std::vector<Contact>& cs) {
    const Eigen::Index nc = static_cast<Eigen::Index>(cs.size());
    MatrixX T(m.nv(), nc), D(m.nv(), 2 * nc), T1(m.nv(), nc), D1(m.nv(), 2 * nc);
    VectorX Tdv(nc), Ddv(2 * nc), Tdv1(nc), Ddv1(2 * nc);
    contact_jacobian(m, d, cs, T, Tdv);
    tangent_jacobian(m, d, cs, 2, D, Ddv);
    contact_jacobians(m, d, cs, T1, Tdv1, D1, Ddv1);
    const double scale = 1.0 + T.cwiseAbs().maxCoeff() + D.cwiseAbs().maxCoeff();
    const double rate_scale = 1.0 + Tdv.cwiseAbs().maxCoeff() + Ddv.cwiseAbs().maxCoeff();
    EXPECT_LT((T1 - T).cwiseAbs().maxCoeff(), 1e-13 * scale);
    EXPECT_LT((D1 - D).cwiseAbs().maxCoeff(), 1e-13 * scale);
    EXPECT_LT((Tdv1 - Tdv).cwiseAbs().maxCoeff(), 1e-12 * rate_scale);
    EXPECT_LT((Ddv1 - Ddv).cwiseAbs().maxCoeff(), 1e-12 * rate_scale);
    // The simulator's order: CRBA with placements, bias forces (v and a with −g).
    Data d2(m);
    detail::crba_placements(m, d2, q);
    bias_forces(m, d2, q, v);
    contact_jacobians(m, d2, cs, T1, Tdv1, D1, Ddv1, true);
    EXPECT_LT((T1 - T).cwiseAbs().maxCoeff(), 1e-13 * scale);
    EXPECT_LT((D1 - D).cwiseAbs().maxCoeff(), 1e-13 * scale);
    EXPECT_LT((Tdv1 - Tdv).cwiseAbs().maxCoeff(), 1e-11 * rate_scale);
    EXPECT_LT((Ddv1 - Ddv).cwiseAbs().maxCoeff(), 1e-11 * rate_scale);
    // Without removing −g the rates are off by the gravity term: the flag matters.
    contact_jacobians(m, d2, cs, T1, Tdv1, D1, Ddv1, false);
    EXPECT_GT((Tdv1 - Tdv).cwiseAbs().maxCoeff(), 1e-3);
  });
}

TEST(ContactKinematics, WorldFrameColumnsMatchTheOnePassJacobians) {
  // contact_jacobians_world() against contact_jacobians(): the same values to
  // 1e-12 (relative), after forward_kinematics(q, v, 0) and after crba + bias
  // forces, on random trees with every joint kind, self-collision, a tilted
  // ground and joint limits.
  for_each_jacobian_scene([](const Model& m, Data& d, const VectorX& q, const VectorX& v,
                             const std::vector<Contact>& cs) {
    const Eigen::Index nc = static_cast<Eigen::Index>(cs.size());
    MatrixX T(m.nv(), nc), D(m.nv(), 2 * nc), T1(m.nv(), nc), D1(m.nv(), 2 * nc);
    VectorX Tdv(nc), Ddv(2 * nc), Tdv1(nc), Ddv1(2 * nc);
    contact_jacobians(m, d, cs, T, Tdv, D, Ddv);
    contact_jacobians_world(m, d, cs, T1, Tdv1, D1, Ddv1);
    const double scale = 1.0 + T.cwiseAbs().maxCoeff() + D.cwiseAbs().maxCoeff();
    EXPECT_LT((T1 - T).cwiseAbs().maxCoeff(), 1e-12 * scale);
    EXPECT_LT((D1 - D).cwiseAbs().maxCoeff(), 1e-12 * scale);
    EXPECT_TRUE(Tdv1 == Tdv);
    EXPECT_TRUE(Ddv1 == Ddv);
    Data d2(m), d3(m);
    detail::crba_placements(m, d2, q);
    bias_forces(m, d2, q, v);
    detail::crba_placements(m, d3, q);
    bias_forces(m, d3, q, v);
    contact_jacobians(m, d2, cs, T, Tdv, D, Ddv, true);
    contact_jacobians_world(m, d3, cs, T1, Tdv1, D1, Ddv1, true);
    EXPECT_LT((T1 - T).cwiseAbs().maxCoeff(), 1e-12 * scale);
    EXPECT_LT((D1 - D).cwiseAbs().maxCoeff(), 1e-12 * scale);
    EXPECT_TRUE(Tdv1 == Tdv);
    EXPECT_TRUE(Ddv1 == Ddv);
  });
}

TEST(ContactKinematics, DelassusByContactsIsTheDenseKtHinvK) {
  // detail::delassus_lower (the time-stepping active-set solve's A = Kᵀ H⁻¹ K,
  // contact by contact from W = (L⁻ᵀK)ᵀ) against the dense Kᵀ H⁻¹ K by an
  // LDLᵀ of H, to 1e-12 relative; and with the floating base's dofs split
  // off (summed for all rows at once) bit for bit the block-by-block sums.
  // Contacts of one or three rows on random bodies (two on the same body,
  // the trunk alone) with random columns on their support chains, on the
  // quadruped, the humanoid and random free-floating trees.
  std::vector<Model> models = {load_model("quadruped.urdf", urdf::RootJoint::FreeFlyer),
                               load_model("humanoid.urdf", urdf::RootJoint::FreeFlyer)};
  for (std::uint64_t seed = 1; seed <= 4; ++seed) models.push_back(random_tree(seed, 9));
  int split_cases = 0;
  for (std::size_t mi = 0; mi < models.size(); ++mi) {
    const Model& m = models[mi];
    const int nv = m.nv();
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      SCOPED_TRACE(::testing::Message() << "model " << mi << " seed " << seed);
      std::mt19937_64 g(seed + 100 * mi);
      Data d(m);
      const VectorX q = random_configuration(m, seed);
      crba(m, d, q);
      ltdl(m, d);
      // Contacts: bodies (the last one repeated, sometimes the root body), rows.
      const int ng = 2 + static_cast<int>(g() % 4);
      std::vector<int> body(static_cast<std::size_t>(ng)), group(1, 0);
      for (int k = 0; k < ng; ++k) {
        body[static_cast<std::size_t>(k)] = 1 + static_cast<int>(g() % static_cast<std::uint64_t>(m.nbodies() - 1));
        if (k == ng - 1 && seed % 3 == 0) body[static_cast<std::size_t>(k)] = body[0];
        if (k == ng - 1 && seed % 4 == 0) body[static_cast<std::size_t>(k)] = 1;
        group.push_back(group.back() + (g() % 3 == 0 ? 1 : 3));
      }
      const int rows = group.back();
      // Support chains (descending) and random K columns on them.
      std::vector<int> chains(static_cast<std::size_t>(ng * nv)), size(static_cast<std::size_t>(ng)), count(static_cast<std::size_t>(nv), 0);
      MatrixX K = MatrixX::Zero(nv, rows);
      for (int k = 0; k < ng; ++k) {
        std::vector<bool> on(static_cast<std::size_t>(nv), false);
        for (int i = body[static_cast<std::size_t>(k)]; i > 0; i = m.parent(i)) {
          for (int c = 0; c < m.joint(i).nv; ++c) on[static_cast<std::size_t>(m.joint(i).v_index + c)] = true;
        }
        int n = 0;
        for (int dof = nv - 1; dof >= 0; --dof) {
          if (!on[static_cast<std::size_t>(dof)]) continue;
          chains[static_cast<std::size_t>(k * nv + n++)] = dof;
          ++count[static_cast<std::size_t>(dof)];
          for (int r = group[static_cast<std::size_t>(k)]; r < group[static_cast<std::size_t>(k) + 1]; ++r) K(dof, r) = uniform(g, -1.0, 1.0);
        }
        size[static_cast<std::size_t>(k)] = n;
      }
      // The dofs every chain holds, when they lie below every other chain dof.
      int shared = 0;
      while (shared < nv && count[static_cast<std::size_t>(shared)] == ng) ++shared;
      for (int dof = shared; dof < nv; ++dof) {
        if (count[static_cast<std::size_t>(dof)] == ng) shared = 0;
      }
      if (shared > 0) ++split_cases;
      MatrixX Wt = K.transpose();  // rows × nv: dof d's entries contiguous
      ltdl_solve_Lt_rows(m, d, Wt);
      VectorX dinv(nv);
      for (int i = 0; i < nv; ++i) dinv(i) = 1.0 / d.LD(i, i);
      MatrixX A0 = MatrixX::Constant(rows, rows, 7.0), A1 = A0;
      detail::delassus_lower(ng, group.data(), chains.data(), size.data(), nv, 0, Wt.data(), dinv.data(), A0.data());
      detail::delassus_lower(ng, group.data(), chains.data(), size.data(), nv, shared, Wt.data(), dinv.data(), A1.data());
      const MatrixX dense = K.transpose() * d.H.ldlt().solve(K);
      const double scale = dense.cwiseAbs().maxCoeff();
      // Both sides round through a factorisation of H: agreement to a few
      // hundred ulps of its condition number (random humanoid postures with
      // their light hands reach 1e4 and more).
      const VectorX eig = Eigen::SelfAdjointEigenSolver<MatrixX>(d.H, Eigen::EigenvaluesOnly).eigenvalues();
      const double tol = std::max(1e-12, 256.0 * std::numeric_limits<double>::epsilon() * eig.maxCoeff() / eig.minCoeff());
      for (int j = 0; j < rows; ++j) {
        for (int i = j; i < rows; ++i) {
          EXPECT_LE(std::abs(A0(i, j) - dense(i, j)), tol * scale) << i << ", " << j << " (tolerance " << tol << ")";
          EXPECT_EQ(A1(i, j), A0(i, j)) << i << ", " << j;
        }
      }
    }
  }
  EXPECT_GT(split_cases, 20);
}

TEST(ContactKinematics, NoAllocationOnceOutputsAreSized) {
  std::mt19937_64 g(21);
  const Model m = free_bodies({{{"block", Box{Vec3(0.5, 0.4, 0.3)}}, {"pill", Capsule{0.1, 0.5}, random_placement(g, 0.2)}},
                               {{"can", Cylinder{0.2, 0.4}}, {"ball", Sphere{0.15}, random_placement(g, 0.2)}},
                               {{"crate", Box{Vec3(0.3, 0.3, 0.3)}}}});
  DetectionOptions opt;
  opt.margin = 100.0;
  const ContactDetector det(m, {ground_plane(), environment_box("step", Vec3(1, 1, 0.2), Vec3(0, 0, 0.1))}, opt);
  Data d(m);
  const VectorX q = random_configuration(m, 21);
  const VectorX v = random_vector(g, m.nv());
  const VectorX zero = VectorX::Zero(m.nv());
  std::vector<Contact> cs, limits;
  limits.reserve(16);
  forward_kinematics(m, d, q, v, zero);
  det.detect(m, d, cs);  // first call reserves max_contacts()
  const Eigen::Index nc = static_cast<Eigen::Index>(cs.size());
  ASSERT_GT(nc, 0);
  MatrixX T(m.nv(), nc), D(m.nv(), 4 * nc);
  VectorX Tdv(nc), Ddv(4 * nc);
  Matrix3X dirs(3, 4 * nc);
  const long n = allocations_in([&] {
    forward_kinematics(m, d, q, v, zero);
    det.detect(m, d, cs);
    contact_jacobian(m, d, cs, T, Tdv);
    tangent_jacobian(m, d, cs, 4, D, Ddv);
    contact_jacobians(m, d, cs, T, Tdv, D.leftCols(2 * nc), Ddv.head(2 * nc));
    contact_tangents(cs, 4, dirs);
    for (Contact& c : cs) refresh_contact(m, d, c);
    const ContactKinematics k = contact_kinematics(m, d, cs[0]);
    EXPECT_TRUE(std::isfinite(k.gap_rate));
    limits.clear();
    detect_joint_limits(m, q, 0.1, limits);
  });
  EXPECT_EQ(n, 0);
  EXPECT_EQ(static_cast<Eigen::Index>(cs.size()), nc);
}
