// Contacts of convex hulls (collision meshes) against every shape, checked
// against two independent facts: the box primitive's own kernels (a hull of
// a box's corners must touch exactly like the box), and brute-force signed
// distances of convex polytopes (every vertex–face and edge–edge pair when
// apart, the separating-axis test over every face normal and edge pair when
// overlapping).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <set>

#include "plume/algorithms/kinematics.hpp"
#include "plume/contact/detection.hpp"
#include "plume/geometry/convex_hull.hpp"
#include "test_utils.hpp"

using namespace plume;

namespace {

const double kPi = std::acos(-1.0);

RigidInertia unit_inertia() { return RigidInertia::from_mass_com_inertia(1.0, Vec3::Zero(), 0.01 * Mat3::Identity()); }

Mesh hull_mesh(const ConvexHull& h, const std::string& name = "hull.stl") {
  Mesh m;
  m.filename = name;
  m.resolved = name;
  m.hull = std::make_shared<const ConvexHull>(h);
  return m;
}

Mesh box_as_mesh(const Vec3& size) { return hull_mesh(ConvexHull::from_points(ConvexHull::box(size).vertices())); }

// One free body per geometry.
Model free_bodies(const std::vector<Geometry>& shapes) {
  ModelBuilder b("hulls");
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const std::string name = "body" + std::to_string(i + 1);
    const int body = b.add_body(name, 0, JointSpec::free_flyer(name + "_joint"), Transform::Identity(), unit_inertia());
    b.add_collision(CollisionShape{name + "/shape", name, body, Transform::Identity(), shapes[i], {}});
  }
  return b.build();
}

void set_pose(const Model& m, VectorX& q, int body, const Mat3& R, const Vec3& p) {
  const int i = m.joint(body).q_index;
  q.segment<3>(i) = p;
  q.segment<4>(i + 3) = Eigen::Quaterniond(R).coeffs();
}

Mat3 rot(const Vec3& axis, double angle) { return Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix(); }

Mat3 random_rotation(std::mt19937_64& g) {
  std::normal_distribution<double> n01;
  return Eigen::Quaterniond(n01(g), n01(g), n01(g), n01(g)).normalized().toRotationMatrix();
}

std::vector<Contact> detect_at(const Model& m, const std::vector<EnvironmentShape>& env, const VectorX& q,
                               double margin) {
  DetectionOptions opt;
  opt.margin = margin;
  const ContactDetector det(m, env, opt);
  Data d(m);
  forward_kinematics(m, d, q);
  std::vector<Contact> out;
  det.detect(m, d, out);
  return out;
}

void expect_consistent(const std::vector<Contact>& cs) {
  for (const Contact& c : cs) {
    EXPECT_NEAR(c.normal.norm(), 1.0, 1e-12);
    EXPECT_LT((c.point_b - c.point_a - c.gap * c.normal).norm(), 1e-12);
  }
}

// The midpoints of the witness points of a contact set, sorted, to compare
// two detections that must find the same contacts (a vertex of b on a face
// of a and the same contact seen as a vertex of a on a face of b differ in
// their witnesses by the depth, not in their midpoints).
std::vector<Vec3> sorted_points(const std::vector<Contact>& cs) {
  std::vector<Vec3> p;
  for (const Contact& c : cs) p.push_back(0.5 * (c.point_a + c.point_b));
  std::sort(p.begin(), p.end(), [](const Vec3& a, const Vec3& b) {
    for (int i = 0; i < 3; ++i) {
      if (std::abs(a[i] - b[i]) > 1e-9) return a[i] < b[i];
    }
    return false;
  });
  return p;
}

void expect_same_contacts(const std::vector<Contact>& hull, const std::vector<Contact>& box, double tol = 1e-12) {
  ASSERT_EQ(hull.size(), box.size());
  const std::vector<Vec3> ph = sorted_points(hull), pb = sorted_points(box);
  for (std::size_t k = 0; k < ph.size(); ++k) {
    EXPECT_LT((ph[k] - pb[k]).norm(), tol) << ph[k].transpose() << " vs " << pb[k].transpose();
  }
  double gh = 1e300, gb = 1e300;
  for (const Contact& c : hull) gh = std::min(gh, c.gap);
  for (const Contact& c : box) gb = std::min(gb, c.gap);
  EXPECT_NEAR(gh, gb, tol);
}

// ---- brute force ------------------------------------------------------------------------

struct WorldHull {
  std::vector<Vec3> v;
  std::vector<Vec3> n;
  std::vector<double> d;
  std::vector<std::vector<Vec3>> faces;
  std::vector<std::pair<Vec3, Vec3>> edges;
};

WorldHull place(const ConvexHull& h, const Mat3& R, const Vec3& p) {
  WorldHull w;
  for (const Vec3& x : h.vertices()) w.v.push_back(p + R * x);
  for (int f = 0; f < h.num_faces(); ++f) {
    const Vec3 n = R * h.faces()[f].normal;
    w.n.push_back(n);
    w.d.push_back(n.dot(p) + h.faces()[f].offset);
    std::vector<Vec3> poly;
    for (int k = 0; k < h.faces()[f].count; ++k) poly.push_back(w.v[h.face_vertex(f, k)]);
    w.faces.push_back(poly);
  }
  for (const ConvexHull::Edge& e : h.edges()) w.edges.emplace_back(w.v[e.v0], w.v[e.v1]);
  return w;
}

// Closest points of two segments (clamped), their distance, and whether the
// closest points are strictly inside both (a proper edge–edge pair).
double segment_distance(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, bool& interior) {
  const Vec3 d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = d1.dot(d1), e = d2.dot(d2), f = d2.dot(r), c = d1.dot(r), b = d1.dot(d2);
  const double den = a * e - b * b;
  double s = den > 1e-14 * a * e ? std::clamp((b * f - c * e) / den, 0.0, 1.0) : 0.0;
  double t = (b * s + f) / e;
  if (t < 0.0) t = 0.0, s = std::clamp(-c / a, 0.0, 1.0);
  else if (t > 1.0) t = 1.0, s = std::clamp((b - c) / a, 0.0, 1.0);
  interior = s > 1e-6 && s < 1 - 1e-6 && t > 1e-6 && t < 1 - 1e-6;
  return (p0 + s * d1 - q0 - t * d2).norm();
}

// Distance from x to a convex polygon (normal n), and whether the foot of x
// lies strictly inside it.
double polygon_distance(const Vec3& x, const std::vector<Vec3>& poly, const Vec3& n, bool& inside) {
  inside = true;
  for (std::size_t k = 0; k < poly.size(); ++k) {
    const Vec3 m = (poly[(k + 1) % poly.size()] - poly[k]).cross(n).normalized();
    if (m.dot(x - poly[k]) > -1e-6) inside = false;
  }
  if (inside) return std::abs(n.dot(x - poly[0]));
  double best = 1e300;
  for (std::size_t k = 0; k < poly.size(); ++k) {
    const Vec3 a = poly[k], d = poly[(k + 1) % poly.size()] - a;
    const double t = std::clamp((x - a).dot(d) / d.squaredNorm(), 0.0, 1.0);
    best = std::min(best, (a + t * d - x).norm());
  }
  return best;
}

// Signed distance of two convex polytopes; `clean` is false when the
// closest features are degenerate (vertex–vertex, vertex–edge, parallel
// edges), which the contact kernels do not report as such.
double brute_signed_distance(const WorldHull& A, const WorldHull& B, bool& clean) {
  const auto sep = [&](const Vec3& L) {
    double amin = 1e300, amax = -1e300, bmin = 1e300, bmax = -1e300;
    for (const Vec3& x : A.v) amin = std::min(amin, L.dot(x)), amax = std::max(amax, L.dot(x));
    for (const Vec3& x : B.v) bmin = std::min(bmin, L.dot(x)), bmax = std::max(bmax, L.dot(x));
    return std::max(bmin - amax, amin - bmax);
  };
  double sat = -1e300;
  for (const Vec3& n : A.n) sat = std::max(sat, sep(n));
  for (const Vec3& n : B.n) sat = std::max(sat, sep(n));
  for (const auto& ea : A.edges) {
    for (const auto& eb : B.edges) {
      const Vec3 L = (ea.second - ea.first).cross(eb.second - eb.first);
      if (L.norm() < 1e-9 * (ea.second - ea.first).norm() * (eb.second - eb.first).norm()) continue;
      sat = std::max(sat, sep(L.normalized()));
    }
  }
  clean = true;
  if (sat <= 0.0) return sat;
  double best = 1e300;
  bool best_clean = false;
  const auto consider = [&](double dist, bool ok) {
    if (dist < best - 1e-12) best = dist, best_clean = ok;
    else if (dist < best + 1e-12) best_clean = best_clean || ok;
  };
  for (std::size_t f = 0; f < A.faces.size(); ++f) {
    for (const Vec3& x : B.v) {
      bool inside;
      const double dist = polygon_distance(x, A.faces[f], A.n[f], inside);
      consider(dist, inside);
    }
  }
  for (std::size_t f = 0; f < B.faces.size(); ++f) {
    for (const Vec3& x : A.v) {
      bool inside;
      const double dist = polygon_distance(x, B.faces[f], B.n[f], inside);
      consider(dist, inside);
    }
  }
  for (const auto& ea : A.edges) {
    for (const auto& eb : B.edges) {
      bool interior;
      const double dist = segment_distance(ea.first, ea.second, eb.first, eb.second, interior);
      consider(dist, interior);
    }
  }
  clean = best_clean;
  return best;
}

ConvexHull random_hull(std::mt19937_64& g, int points, const Vec3& scale) {
  std::normal_distribution<double> n01;
  std::vector<Vec3> pts;
  for (int i = 0; i < points; ++i) pts.push_back(Vec3(n01(g), n01(g), n01(g)).normalized().cwiseProduct(scale));
  return ConvexHull::from_points(pts);
}

// ---- against the box primitive ----------------------------------------------------------

TEST(HullContact, MeshCubeOnPlaneTouchesLikeTheBox) {
  // Face, edge and corner down (4, 2, 1 contacts), and a tilted plane.
  const Mat3 corner_down = Eigen::Quaterniond::FromTwoVectors(Vec3(1, 1, 1), -Vec3::UnitZ()).toRotationMatrix();
  const std::vector<std::pair<Mat3, double>> poses = {{Mat3::Identity(), 0.5},
                                                      {rot(Vec3::UnitZ(), kPi / 4), 0.5},
                                                      {rot(Vec3::UnitX(), kPi / 4), std::sqrt(0.5)},
                                                      {corner_down, std::sqrt(0.75)},
                                                      {rot(Vec3(1, 2, 3), 0.7), 0.5}};
  const Model hull = free_bodies({box_as_mesh(Vec3::Ones())});
  const Model box = free_bodies({Box{Vec3::Ones()}});
  for (const auto& ground : {ground_plane(), ground_plane("incline", Vec3(0.3, 0.1, 1.0), Vec3(0, 0, 0.1))}) {
    for (const auto& [R, h] : poses) {
      for (double dz : {0.0, -1e-4, 2e-3}) {
        VectorX q = neutral_configuration(hull);
        set_pose(hull, q, 1, R, Vec3(0.2, 0.1, h + dz));
        const auto ch = detect_at(hull, {ground}, q, 1e-9);
        const auto cb = detect_at(box, {ground}, q, 1e-9);
        expect_consistent(ch);
        expect_same_contacts(ch, cb);
      }
    }
  }
}

TEST(HullContact, ALargeFaceOnThePlaneRestsOnItsSupportVertices) {
  // A 40-sided prism on its cap: the 40 cap vertices touch; 8 support
  // vertices (fixed on the hull) stand for them, always the same ones.
  std::vector<Vec3> pts;
  for (int k = 0; k < 40; ++k) {
    for (double z : {-0.05, 0.05}) pts.emplace_back(0.2 * std::cos(k * kPi / 20), 0.2 * std::sin(k * kPi / 20), z);
  }
  const ConvexHull h = ConvexHull::from_points(pts);
  const Model m = free_bodies({hull_mesh(h)});
  std::set<int> features;
  for (double turn : {0.0, 0.3, 1.1}) {
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, rot(Vec3::UnitZ(), turn), Vec3(0.5, 0, 0.05 - 1e-10));
    const auto cs = detect_at(m, {ground_plane()}, q, 1e-9);
    ASSERT_EQ(cs.size(), 8u);
    std::set<int> f;
    for (const Contact& c : cs) {
      f.insert(c.feature);
      EXPECT_NEAR(c.gap, -1e-10, 1e-15);
    }
    if (features.empty()) features = f;
    EXPECT_EQ(f, features);
  }
  // The kept vertices span most of the cap: their polygon's area.
  std::vector<Vec3> kept;
  for (int k : features) kept.push_back(h.vertices()[k]);
  std::sort(kept.begin(), kept.end(), [](const Vec3& a, const Vec3& b) { return std::atan2(a.y(), a.x()) < std::atan2(b.y(), b.x()); });
  double area = 0.0;
  for (std::size_t k = 0; k < kept.size(); ++k) area += 0.5 * kept[k].head<2>().homogeneous().cross(kept[(k + 1) % kept.size()].head<2>().homogeneous()).z();
  EXPECT_GT(area / (kPi * 0.04), 0.89);
}

TEST(HullContact, HullOnHullGivesTheBoxContactPolygon) {
  // The cases of the box–box test, with either or both boxes as meshes:
  // touching, the contacts of the box kernel; sunk by 10 µm, the same
  // polygon with every gap −10 µm (checked against the touching one moved
  // down).
  struct Case {
    const char* what;
    double size;
    Mat3 R;
    std::size_t contacts;  // 0: as many as the box kernel finds
    Vec3 offset = Vec3::Zero();
  };
  const std::vector<Case> cases = {
      {"small box, aligned", 0.5, Mat3::Identity(), 4},
      {"small box, turned 45°", 0.5, rot(Vec3::UnitZ(), kPi / 4), 4},
      {"equal box, aligned", 1.0, Mat3::Identity(), 4},
      {"equal box, turned 45°: octagon of edge crossings", 1.0, rot(Vec3::UnitZ(), kPi / 4), 8},
      {"equal box, turned 30°", 1.0, rot(Vec3::UnitZ(), kPi / 6), 8},
      {"equal box, offset along x and y", 1.0, Mat3::Identity(), 4, Vec3(0.3, 0.2, 0.0)},
      {"equal box, offset and turned 10°", 1.0, rot(Vec3::UnitZ(), 0.17), 0, Vec3(0.3, -0.1, 0.0)},
  };
  const EnvironmentShape box_table = environment_box("table", Vec3::Ones(), Vec3::Zero());
  const EnvironmentShape hull_table{"table", Transform::Identity(), box_as_mesh(Vec3::Ones()), {}};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    const Model hull = free_bodies({box_as_mesh(Vec3::Constant(k.size))});
    const Model box = free_bodies({Box{Vec3::Constant(k.size)}});
    VectorX q = neutral_configuration(hull);
    const Vec3 at = k.offset + Vec3(0.0, 0.0, 0.5 + 0.5 * k.size);
    set_pose(hull, q, 1, k.R, at);
    const auto reference = detect_at(box, {box_table}, q, 1e-9);
    if (k.contacts) {
      EXPECT_EQ(reference.size(), k.contacts);
    }
    EXPECT_GE(reference.size(), 3u);
    std::vector<Contact> sunk_reference = reference;
    for (Contact& c : sunk_reference) c.point_b.z() -= 1e-5, c.gap -= 1e-5;
    for (double dz : {0.0, -1e-5}) {
      SCOPED_TRACE(dz);
      set_pose(hull, q, 1, k.R, at + Vec3(0, 0, dz));
      const auto hull_hull = detect_at(hull, {hull_table}, q, 1e-9);
      const auto box_hull = detect_at(hull, {box_table}, q, 1e-9);
      const auto hull_box = detect_at(box, {hull_table}, q, 1e-9);
      for (const auto* cs : {&hull_hull, &box_hull, &hull_box}) {
        expect_consistent(*cs);
        expect_same_contacts(*cs, dz == 0.0 ? reference : sunk_reference);
        for (const Contact& c : *cs) {
          EXPECT_LT((c.normal - Vec3::UnitZ()).norm(), 1e-12);
          EXPECT_NEAR(c.gap, dz, 1e-12);
        }
      }
    }
  }
}

TEST(HullContact, HullAgainstRoundShapesTouchesLikeTheBox) {
  // A mesh cube against spheres, capsules and cylinders in poses that touch
  // faces, edges and corners: the same contacts as the box kernels.
  std::mt19937_64 g(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::vector<Geometry> others = {Sphere{0.2}, Capsule{0.1, 0.6}, Cylinder{0.15, 0.5}};
  int compared = 0;
  for (const Geometry& other : others) {
    const Model hull = free_bodies({box_as_mesh(Vec3(0.8, 0.6, 0.4)), other});
    const Model box = free_bodies({Box{Vec3(0.8, 0.6, 0.4)}, other});
    for (int t = 0; t < 60; ++t) {
      VectorX q = neutral_configuration(hull);
      set_pose(hull, q, 1, random_rotation(g), Vec3::Zero());
      const Mat3 R = t % 3 == 0 ? Mat3(rot(Vec3::UnitX(), kPi / 2)) : random_rotation(g);
      const Vec3 p = Vec3(u(g), u(g), u(g)) * 0.75;
      set_pose(hull, q, 2, R, p);
      const auto cb = detect_at(box, {}, q, 0.05);
      const auto ch = detect_at(hull, {}, q, 0.05);
      if (cb.empty() && ch.empty()) continue;
      ++compared;
      expect_consistent(ch);
      expect_same_contacts(ch, cb, 1e-10);
    }
  }
  EXPECT_GT(compared, 40);
}

// ---- against brute force ----------------------------------------------------------------

TEST(HullContact, SphereGapIsTheExactDistance) {
  std::mt19937_64 g(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const ConvexHull h = random_hull(g, 30, Vec3(0.3, 0.2, 0.25));
  const Model m = free_bodies({hull_mesh(h), Sphere{0.05}});
  for (int t = 0; t < 300; ++t) {
    VectorX q = neutral_configuration(m);
    const Mat3 R = random_rotation(g);
    const Vec3 p(u(g), u(g), u(g));
    set_pose(m, q, 1, R, p);
    const Vec3 c = p + 0.45 * Vec3(u(g), u(g), u(g));
    set_pose(m, q, 2, Mat3::Identity(), c);
    const WorldHull w = place(h, R, p);
    double s = -1e300;
    for (std::size_t f = 0; f < w.n.size(); ++f) s = std::max(s, w.n[f].dot(c) - w.d[f]);
    double dist = s;
    if (s > 0.0) {
      dist = 1e300;
      for (std::size_t f = 0; f < w.faces.size(); ++f) {
        bool inside;
        dist = std::min(dist, polygon_distance(c, w.faces[f], w.n[f], inside));
      }
    }
    const auto cs = detect_at(m, {}, q, 10.0);
    ASSERT_EQ(cs.size(), 1u);
    EXPECT_NEAR(cs[0].gap, dist - 0.05, 1e-12);
    expect_consistent(cs);
  }
}

TEST(HullContact, HullHullGapIsTheSignedDistance) {
  // Random hulls placed a signed distance in [−5 mm, 30 mm] apart: the
  // deepest contact's gap is the brute-force signed distance, whenever the
  // closest features are a vertex on a face or two edges crossing.
  std::mt19937_64 g(9);
  std::uniform_real_distribution<double> u(-1.0, 1.0), target(-0.005, 0.03);
  int compared = 0, trials = 0;
  for (int t = 0; t < 100; ++t) {
    const ConvexHull ha = t % 5 == 0 ? ConvexHull::box(Vec3(0.4, 0.3, 0.2)) : random_hull(g, 12 + t % 20, Vec3(0.2, 0.15, 0.1));
    const ConvexHull hb = random_hull(g, 8 + t % 25, Vec3(0.1, 0.2, 0.15));
    const Mat3 Ra = random_rotation(g), Rb = random_rotation(g);
    const Vec3 dir = Vec3(u(g), u(g), u(g)).normalized();
    const WorldHull A = place(ha, Ra, Vec3::Zero());
    // Slide B along dir until the signed distance is the target.
    const double goal = target(g);
    // 24 halvings place B within 6e-8 m of the goal; the exact distance
    // there is what the contact's gap is compared with.
    double lo = 0.0, hi = 1.0;
    bool clean = true;
    for (int it = 0; it < 24; ++it) {
      const double mid = 0.5 * (lo + hi);
      (brute_signed_distance(A, place(hb, Rb, mid * dir), clean) < goal ? lo : hi) = mid;
    }
    const Vec3 pb = hi * dir;
    const double expected = brute_signed_distance(A, place(hb, Rb, pb), clean);
    ++trials;
    if (!clean) continue;
    const Model m = free_bodies({hull_mesh(ha), hull_mesh(hb)});
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, Ra, Vec3::Zero());
    set_pose(m, q, 2, Rb, pb);
    const auto cs = detect_at(m, {}, q, 0.05);
    ASSERT_FALSE(cs.empty()) << "trial " << t << ": no contact at signed distance " << expected;
    double gap = 1e300;
    for (const Contact& c : cs) gap = std::min(gap, c.gap);
    EXPECT_NEAR(gap, expected, 1e-9) << "trial " << t;
    EXPECT_LE(cs.size(), 8u);
    expect_consistent(cs);
    ++compared;
  }
  EXPECT_GT(compared, trials / 2);
}

TEST(HullContact, IdsStayWhileTheContactPersists) {
  // A mesh box resting face down on a mesh table, moved and turned a little:
  // the same contact ids.
  const Model m = free_bodies({box_as_mesh(Vec3(0.4, 0.4, 0.2))});
  EnvironmentShape table{"table", Transform::Identity(), box_as_mesh(Vec3::Ones()), {}};
  VectorX q = neutral_configuration(m);
  set_pose(m, q, 1, rot(Vec3::UnitZ(), 0.3), Vec3(0.1, 0.05, 0.6 - 1e-10));
  const auto c0 = detect_at(m, {table}, q, 1e-9);
  ASSERT_EQ(c0.size(), 4u);
  set_pose(m, q, 1, rot(Vec3::UnitZ(), 0.31) * rot(Vec3::UnitX(), 1e-11), Vec3(0.11, 0.06, 0.6 - 2e-10));
  const auto c1 = detect_at(m, {table}, q, 1e-9);
  ASSERT_EQ(c1.size(), 4u);
  std::set<std::uint64_t> i0, i1;
  for (const Contact& c : c0) i0.insert(c.id);
  for (const Contact& c : c1) i1.insert(c.id);
  EXPECT_EQ(i0, i1);
}

}  // namespace

// ---- the box primitive against brute force ------------------------------------------------

namespace {

// The intersection of two convex polygons in the plane (counter-clockwise),
// by Sutherland–Hodgman clipping of p against each edge of c.
std::vector<Eigen::Vector2d> clip_polygon(std::vector<Eigen::Vector2d> p, const std::vector<Eigen::Vector2d>& c) {
  for (std::size_t k = 0; k < c.size() && !p.empty(); ++k) {
    const Eigen::Vector2d a = c[k], e = c[(k + 1) % c.size()] - a;
    const auto side = [&](const Eigen::Vector2d& x) { return e.x() * (x - a).y() - e.y() * (x - a).x(); };
    std::vector<Eigen::Vector2d> next;
    for (std::size_t t = 0; t < p.size(); ++t) {
      const Eigen::Vector2d P = p[t], Q = p[(t + 1) % p.size()];
      const double sp = side(P), sq = side(Q);
      if (sp >= 0.0) next.push_back(P);
      if ((sp >= 0.0) != (sq >= 0.0)) next.push_back(P + (sp / (sp - sq)) * (Q - P));
    }
    p = next;
  }
  // Drop repeated points (a corner on an edge gives the same point twice).
  std::vector<Eigen::Vector2d> out;
  for (const Eigen::Vector2d& x : p) {
    bool seen = false;
    for (const Eigen::Vector2d& y : out) seen = seen || (x - y).norm() < 1e-9;
    if (!seen) out.push_back(x);
  }
  return out;
}

std::vector<Eigen::Vector2d> rectangle(const Eigen::Vector2d& centre, double angle, const Eigen::Vector2d& half) {
  const Eigen::Rotation2Dd R(angle);
  std::vector<Eigen::Vector2d> r;
  for (const auto& s : {Eigen::Vector2d(-1, -1), Eigen::Vector2d(1, -1), Eigen::Vector2d(1, 1), Eigen::Vector2d(-1, 1)}) {
    r.push_back(centre + R * s.cwiseProduct(half));
  }
  return r;
}

}  // namespace

TEST(HullContact, BoxOnBoxContactsAreTheVerticesOfTheIntersectionPolygon) {
  // A box resting face down on a box table (sizes, turns and offsets random,
  // plus the degenerate placements of equal aligned boxes: edges in line,
  // corners on edges, corners on corners), touching and sunk 10 µm: the
  // contact points are exactly the vertices of the intersection of the two
  // rectangles (Sutherland–Hodgman in the plane), every gap is the depth.
  std::mt19937_64 g(16);
  std::uniform_real_distribution<double> u(-1.0, 1.0), size(0.05, 0.6);
  struct Case {
    Vec3 table, block;
    double angle;
    Eigen::Vector2d offset;
  };
  std::vector<Case> cases = {
      {Vec3::Constant(0.1), Vec3::Constant(0.1), 0.0, {0.03, 0.0}},     // the cube-on-cube drop
      {Vec3::Constant(0.1), Vec3::Constant(0.1), 0.0, {0.0, 0.0}},      // corners on corners
      {Vec3::Constant(0.1), Vec3::Constant(0.1), 0.0, {0.03, 0.02}},    // corners on corners, crossing
      {Vec3::Constant(0.1), Vec3::Constant(0.1), 0.0, {0.1, 0.0}},      // edge on edge
      {Vec3::Constant(0.1), Vec3::Constant(0.1), kPi / 2, {0.0, 0.05}},  // turned a quarter: aligned again
      {Vec3(0.2, 0.1, 0.1), Vec3(0.1, 0.1, 0.05), 0.0, {0.05, 0.0}},    // corners on the table's edges
      {Vec3::Constant(0.1), Vec3::Constant(0.1), kPi / 4, {0.0, 0.0}},   // the octagon
  };
  for (int t = 0; t < 60; ++t) {
    cases.push_back({Vec3(size(g), size(g), size(g)), Vec3(size(g), size(g), size(g)), kPi * u(g),
                     Eigen::Vector2d(0.3 * u(g), 0.3 * u(g))});
  }
  int compared = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    SCOPED_TRACE("case " + std::to_string(k));
    const auto inter = clip_polygon(rectangle(Eigen::Vector2d::Zero(), 0.0, 0.5 * c.table.head<2>()),
                                    rectangle(c.offset, c.angle, 0.5 * c.block.head<2>()));
    if (inter.size() < 3) continue;  // apart or touching along a line only
    double area = 0.0;
    for (std::size_t i = 0; i < inter.size(); ++i) {
      const Eigen::Vector2d a = inter[i], b = inter[(i + 1) % inter.size()];
      area += 0.5 * (a.x() * b.y() - a.y() * b.x());
    }
    if (area < 1e-6) continue;
    const EnvironmentShape table = environment_box("table", c.table, Vec3(0, 0, -0.5 * c.table.z()));
    const Model m = free_bodies({Box{c.block}});
    for (double dz : {0.0, -1e-5}) {
      VectorX q = neutral_configuration(m);
      set_pose(m, q, 1, rot(Vec3::UnitZ(), c.angle), Vec3(c.offset.x(), c.offset.y(), 0.5 * c.block.z() + dz));
      const auto cs = detect_at(m, {table}, q, 1e-9);
      expect_consistent(cs);
      ASSERT_EQ(cs.size(), inter.size()) << "dz " << dz;
      EXPECT_LE(cs.size(), 8u);
      for (const Contact& ct : cs) {
        EXPECT_NEAR(ct.gap, dz, 1e-12);
        EXPECT_LT((ct.normal - Vec3::UnitZ()).norm(), 1e-12);
        const Eigen::Vector2d p = 0.5 * (ct.point_a + ct.point_b).head<2>();
        double nearest = 1e300;
        for (const Eigen::Vector2d& x : inter) nearest = std::min(nearest, (x - p).norm());
        EXPECT_LT(nearest, 1e-9) << "a contact at " << p.transpose() << " is no vertex of the polygon";
      }
    }
    ++compared;
  }
  EXPECT_GT(compared, 40);
}

TEST(HullContact, BoxBoxGapIsTheSignedDistance) {
  // Random boxes placed a signed distance in [−5 mm, 30 mm] apart: the
  // deepest contact's gap is the brute-force signed distance, whenever the
  // closest features are a vertex on a face or two edges crossing.
  std::mt19937_64 g(61);
  std::uniform_real_distribution<double> u(-1.0, 1.0), target(-0.005, 0.03), size(0.05, 0.5);
  int compared = 0, trials = 0;
  for (int t = 0; t < 200; ++t) {
    const Vec3 sa(size(g), size(g), size(g)), sb(size(g), size(g), size(g));
    const Mat3 Ra = random_rotation(g), Rb = random_rotation(g);
    const Vec3 dir = Vec3(u(g), u(g), u(g)).normalized();
    const WorldHull A = place(ConvexHull::box(sa), Ra, Vec3::Zero());
    const ConvexHull hb = ConvexHull::box(sb);
    const double goal = target(g);
    double lo = 0.0, hi = 2.0;
    bool clean = true;
    for (int it = 0; it < 50; ++it) {
      const double mid = 0.5 * (lo + hi);
      (brute_signed_distance(A, place(hb, Rb, mid * dir), clean) < goal ? lo : hi) = mid;
    }
    const Vec3 pb = hi * dir;
    const double expected = brute_signed_distance(A, place(hb, Rb, pb), clean);
    ++trials;
    if (!clean) continue;
    const Model m = free_bodies({Box{sa}, Box{sb}});
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, Ra, Vec3::Zero());
    set_pose(m, q, 2, Rb, pb);
    const auto cs = detect_at(m, {}, q, 0.05);
    ASSERT_FALSE(cs.empty()) << "trial " << t << ": no contact at signed distance " << expected;
    double gap = 1e300;
    for (const Contact& c : cs) gap = std::min(gap, c.gap);
    EXPECT_NEAR(gap, expected, 1e-9) << "trial " << t;
    EXPECT_LE(cs.size(), 8u);
    expect_consistent(cs);
    ++compared;
  }
  EXPECT_GT(compared, trials / 2);
}

TEST(HullContact, BoxOnBoxIdsHoldAtDegeneratePlacements) {
  // Equal cubes resting face on face with edges in line and corners on
  // edges or corners: moved and turned by up to 1e-8 (m, rad) in every
  // direction, the contacts keep their names (no corner flips between a
  // vertex-on-face and an edge-crossing contact).
  std::mt19937_64 g(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const EnvironmentShape table = environment_box("table", Vec3::Constant(0.1), Vec3(0, 0, -0.05));
  const Model m = free_bodies({Box{Vec3::Constant(0.1)}});
  for (const Vec3& offset : {Vec3(0.03, 0, 0), Vec3(0, 0, 0), Vec3(0.03, 0.02, 0), Vec3(0.05, 0.025, 0)}) {
    SCOPED_TRACE(offset.transpose());
    VectorX q = neutral_configuration(m);
    set_pose(m, q, 1, Mat3::Identity(), offset + Vec3(0, 0, 0.05));
    const auto c0 = detect_at(m, {table}, q, 1e-9);
    std::set<std::uint64_t> i0;
    for (const Contact& c : c0) i0.insert(c.id);
    EXPECT_EQ(c0.size(), 4u);
    for (int t = 0; t < 50; ++t) {
      const Vec3 w(u(g), u(g), u(g));
      set_pose(m, q, 1, rot(w, 1e-8 * std::abs(u(g))), offset + Vec3(0, 0, 0.05) + 1e-8 * Vec3(u(g), u(g), u(g)));
      std::set<std::uint64_t> i1;
      for (const Contact& c : detect_at(m, {table}, q, 1e-7)) i1.insert(c.id);
      EXPECT_EQ(i0, i1) << "trial " << t;
    }
  }
}

TEST(HullContact, ATiltedCubeOverACubeTouchesByItsLowestEdgeOnly) {
  // A cube turned by θ about x above an equal cube, its lowest edge d above
  // (or −d into) the top face: the closest contact is d away (the edge's
  // height, a closed form), and every contact's normal lies between the two
  // faces' normals (within θ of the vertical). The cubes' y edges lie in the
  // planes x = ±a of both: where the tilted one sinks in they cross at a
  // corner of the overlap, but with a horizontal common normal they are no
  // contact.
  const double a = 0.05;
  const Model m = free_bodies({Box{Vec3::Constant(2 * a)}, Box{Vec3::Constant(2 * a)}});
  for (double theta : {0.05, 0.2, 0.5}) {
    for (double dy : {0.0, 0.01, 0.02}) {  // the lowest edge over the face
      for (double d : {-3e-3, -1e-4, 0.0, 1e-4, 3e-3}) {
        SCOPED_TRACE("theta " + std::to_string(theta) + " dy " + std::to_string(dy) + " d " + std::to_string(d));
        VectorX q = neutral_configuration(m);
        set_pose(m, q, 1, Mat3::Identity(), Vec3::Zero());
        const double z = a + d + a * (std::sin(theta) + std::cos(theta));
        set_pose(m, q, 2, rot(Vec3::UnitX(), theta), Vec3(0.0, dy, z));
        const auto cs = detect_at(m, {}, q, 0.01);
        ASSERT_FALSE(cs.empty());
        double gap = 1e300;
        for (const Contact& c : cs) {
          gap = std::min(gap, c.gap);
          EXPECT_GT(std::abs(c.normal.z()), std::cos(theta) - 1e-12) << "a contact normal " << c.normal.transpose();
        }
        EXPECT_NEAR(gap, d, 1e-12);
        expect_consistent(cs);
      }
    }
  }
}
