// Narrow phase: feature pairs of two placed shapes (see detection.hpp for the
// table of what each pair produces).
//
// Conventions inside this file: shapes are given by their frame axes R and
// origin p in world coordinates. Box features: vertex k has the sign of
// coordinate i positive when bit i of k is set; face f is the face of axis
// f/2 on the positive side when f is odd; edge 4j + bits runs along axis j,
// bit 0 / bit 1 giving the sides of axes (j+1)%3 / (j+2)%3. Cylinder and
// capsule axes are the frame's z; their half length is l = length/2.
#include "narrowphase.hpp"

#include "shape_helpers.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace plume::detail {

// ---- the emitter --------------------------------------------------------------

void ContactEmitter::emit(int feature, bool first_on_A, const WorldFeatures& f) {
  FeatureContact r;
  evaluate_features(f, r);
  if (!(r.phi < margin_)) return;
  // Kernel shape A is the pair's b when the kernel runs swapped.
  const bool first_on_b = first_on_A ? pair_.swapped : !pair_.swapped;
  Contact c;
  c.kind = ContactKind::Shapes;
  c.id = shape_contact_id(pair_index_, feature);
  c.pair = pair_index_;
  c.feature = feature;
  c.body_a = pair_.body_a;
  c.body_b = pair_.body_b;
  c.shape_a = pair_.shape_a;
  c.shape_b = pair_.shape_b;
  store_result(r, first_on_b, c);
  ContactLocal& l = c.local;
  l.type = f.type;
  l.first_on_b = first_on_b;
  l.sign = f.sign;
  l.r1 = f.r1;
  l.r2 = f.r2;
  const Transform& X1 = data_.X0[first_on_b ? pair_.body_b : pair_.body_a];
  const Transform& X2 = data_.X0[first_on_b ? pair_.body_a : pair_.body_b];
  l.x1 = X1.transform_point(f.x1);
  l.d1 = X1.E() * f.d1;
  l.x2 = X2.transform_point(f.x2);
  l.d2 = X2.E() * f.d2;
  out_.push_back(c);
}

namespace {

// ---- shape helpers ----------------------------------------------------------------

constexpr double kRelTol = 1e-7;   // boundary tolerance of face regions, relative to the box size
constexpr double kConeTol = 1e-3;  // edge Voronoi cones: accepted normals up to ~0.06° outside
constexpr double kSatTol = 1e-9;   // edge contacts: slack of the separating-axis test [m, relative]

int sgn_bit(int k, int bit) { return (k >> bit) & 1 ? 1 : -1; }


struct BoxShape {
  Mat3 R;
  Vec3 p, h;  // axes, centre, half extents
  double tol;
  explicit BoxShape(const PlacedShape& s)
      : R(s.R), p(s.p), h(std::get<Box>(*s.geometry).half_extents()), tol(kRelTol * (1e-3 + h.maxCoeff())) {}
  Vec3 vertex(int k) const {
    return p + R * Vec3(sgn_bit(k, 0) * h.x(), sgn_bit(k, 1) * h.y(), sgn_bit(k, 2) * h.z());
  }
  Vec3 face_normal(int f) const { return (f & 1 ? 1.0 : -1.0) * R.col(f / 2); }
  Vec3 face_point(int f) const { return p + (f & 1 ? 1.0 : -1.0) * h[f / 2] * R.col(f / 2); }
  // Edge e: along axis j = e/4; its centre, and the outward normals of its two faces.
  int edge_axis(int e) const { return e / 4; }
  Vec3 edge_centre(int e) const {
    const int j = e / 4, i1 = (j + 1) % 3, i2 = (j + 2) % 3;
    return p + sgn_bit(e, 0) * h[i1] * R.col(i1) + sgn_bit(e, 1) * h[i2] * R.col(i2);
  }
  Vec3 edge_face_normal(int e, int which) const {
    const int j = e / 4, i = which == 0 ? (j + 1) % 3 : (j + 2) % 3;
    return sgn_bit(e, which) * R.col(i);
  }
  // Half the width of the box seen along unit direction L.
  double support_radius(const Vec3& L) const {
    return h.x() * std::abs(L.dot(R.col(0))) + h.y() * std::abs(L.dot(R.col(1))) + h.z() * std::abs(L.dot(R.col(2)));
  }
};

// The box feature closest to a point (All), or only the face whose region
// holds it (FacesInclusive: points up to tol outside the face's prism count;
// FacesStrict: points must be tol inside it). A point inside the box gets
// the least-penetrated face.
enum class BoxMode { All, FacesInclusive, FacesStrict };

struct BoxFeature {
  FeaturePair type;  // FacePoint, LinePoint (edge) or PointPoint (vertex)
  int code;          // faces 0–5, edges 6–17, vertices 18–25
  int face;          // the face index for FacePoint
  Vec3 x, d;         // feature 1: face point and normal, edge centre and direction, vertex
};

// `away` (optional, world): the outward direction of the feature touching the
// box (a vertex's direction from its own box centre); among faces tied within
// tol it picks the one that direction points into, so a vertex resting
// exactly on an edge or corner of the box gets the face it rests on.
bool closest_box_feature(const BoxShape& b, const Vec3& c, BoxMode mode, BoxFeature& out,
                         const Vec3* away = nullptr) {
  const Vec3 cl = b.R.transpose() * (c - b.p);
  const Vec3 excess = cl.cwiseAbs() - b.h;
  if (mode == BoxMode::All) {
    int nout = 0;
    for (int i = 0; i < 3; ++i) nout += excess[i] > 0.0;
    if (nout == 2) {
      const int j = excess[0] <= 0.0 ? 0 : excess[1] <= 0.0 ? 1 : 2;  // the edge's axis
      const int i1 = (j + 1) % 3, i2 = (j + 2) % 3;
      const int e = 4 * j + (cl[i1] > 0.0 ? 1 : 0) + (cl[i2] > 0.0 ? 2 : 0);
      out = BoxFeature{FeaturePair::LinePoint, 6 + e, -1, b.edge_centre(e), b.R.col(j)};
      return true;
    }
    if (nout == 3) {
      const int k = (cl.x() > 0.0 ? 1 : 0) + (cl.y() > 0.0 ? 2 : 0) + (cl.z() > 0.0 ? 4 : 0);
      out = BoxFeature{FeaturePair::PointPoint, 18 + k, -1, b.vertex(k), Vec3::Zero()};
      return true;
    }
  }
  // A face: the axis of largest excess (outside: the one region; inside: the
  // least depth h_i − |c_i|).
  int i = 0;
  for (int k = 1; k < 3; ++k) {
    if (excess[k] > excess[i]) i = k;
  }
  if (away) {
    const Vec3 a = b.R.transpose() * *away;  // box coordinates
    double best = -std::numeric_limits<double>::infinity();
    const double top = excess[i];
    for (int k = 0; k < 3; ++k) {
      if (excess[k] < top - b.tol) continue;
      const double into = -(cl[k] >= 0.0 ? 1.0 : -1.0) * a[k];  // −n·away for the face on c's side
      if (into > best) {
        best = into;
        i = k;
      }
    }
  }
  if (mode != BoxMode::All) {
    for (int k = 0; k < 3; ++k) {
      if (k == i) continue;
      if (mode == BoxMode::FacesInclusive && excess[k] > b.tol) return false;
      if (mode == BoxMode::FacesStrict && excess[k] >= -b.tol) return false;
    }
  }
  const int f = 2 * i + (cl[i] >= 0.0 ? 1 : 0);
  out = BoxFeature{FeaturePair::FacePoint, f, f, b.face_point(f), b.face_normal(f)};
  return true;
}

// The contact of a box feature (feature 1) with a point or sphere (feature 2).
WorldFeatures box_point_features(const BoxFeature& bf, const Vec3& c, double r) {
  return features(bf.type, bf.x, bf.d, 0.0, c, Vec3::Zero(), r);
}


// An edge of box b against a line (another box's edge, a capsule or cylinder
// axis): the outward normal n = ±(d_edge × d_line) if it lies in the edge's
// Voronoi cone and both closest points are inside their segments. `sign`
// orients d_edge × d_line outward.
bool edge_line(const BoxShape& b, int e, const Vec3& x, const Vec3& d, double half_length, double parallel_tol,
               double& sign, Vec3& n) {
  const Vec3 de = b.R.col(b.edge_axis(e));
  const Vec3 m = de.cross(d);
  const double mn = m.norm();
  if (mn < parallel_tol) return false;
  double tau_e, tau_l;
  const Vec3 ce = b.edge_centre(e);
  line_parameters(ce, de, x, d, tau_e, tau_l);
  if (std::abs(tau_e) >= b.h[b.edge_axis(e)] - b.tol || std::abs(tau_l) >= half_length - b.tol) return false;
  const Vec3 f1 = b.edge_face_normal(e, 0), f2 = b.edge_face_normal(e, 1);
  n = m / mn;
  sign = n.dot(f1 + f2) >= 0.0 ? 1.0 : -1.0;
  n *= sign;
  return n.dot(f1) >= -kConeTol && n.dot(f2) >= -kConeTol;
}

// ---- kernels ------------------------------------------------------------------------

void plane_sphere(const PlacedShape& A, const PlacedShape& B, const DetectionOptions&, ContactEmitter& out) {
  const double r = std::get<Sphere>(*B.geometry).radius;
  out.emit(0, true, features(FeaturePair::FacePoint, A.p, A.R.col(2), 0.0, B.p, Vec3::Zero(), r));
}

void plane_box(const PlacedShape& A, const PlacedShape& B, const DetectionOptions&, ContactEmitter& out) {
  const BoxShape b(B);
  for (int k = 0; k < 8; ++k) {
    out.emit(k, true, features(FeaturePair::FacePoint, A.p, A.R.col(2), 0.0, b.vertex(k), Vec3::Zero(), 0.0));
  }
}

void plane_capsule(const PlacedShape& A, const PlacedShape& B, const DetectionOptions&, ContactEmitter& out) {
  const RoundShape c = capsule_of(B);
  for (int s = 0; s < 2; ++s) {
    out.emit(s, true, features(FeaturePair::FacePoint, A.p, A.R.col(2), 0.0, c.end(s ? 1 : -1), Vec3::Zero(), c.r));
  }
}

void plane_cylinder(const PlacedShape& A, const PlacedShape& B, const DetectionOptions& o, ContactEmitter& out) {
  const RoundShape c = cylinder_of(B);
  const Vec3 n = A.R.col(2);
  const bool flat = is_flat(n, c.e, o);
  for (int s = 0; s < 2; ++s) {
    const int end = s ? 1 : -1;
    if (flat) {
      for (int k = 0; k < 4; ++k) {
        out.emit(5 * s + k, true,
                 features(FeaturePair::FacePoint, A.p, n, 0.0, rim_point(B, c, end, k), Vec3::Zero(), 0.0));
      }
    } else {
      out.emit(5 * s + 4, true, features(FeaturePair::FaceRim, A.p, n, 0.0, c.end(end), c.e, c.r));
    }
  }
}

void sphere_sphere(const PlacedShape& A, const PlacedShape& B, const DetectionOptions&, ContactEmitter& out) {
  out.emit(0, true,
           features(FeaturePair::PointPoint, A.p, Vec3::Zero(), std::get<Sphere>(*A.geometry).radius, B.p,
                    Vec3::Zero(), std::get<Sphere>(*B.geometry).radius));
}

void box_sphere(const PlacedShape& A, const PlacedShape& B, const DetectionOptions&, ContactEmitter& out) {
  BoxFeature bf;
  closest_box_feature(BoxShape(A), B.p, BoxMode::All, bf);
  out.emit(bf.code, true, box_point_features(bf, B.p, std::get<Sphere>(*B.geometry).radius));
}

// A point with radius r against a capsule's segment (feature 1 on the capsule).
WorldFeatures point_segment_features(const RoundShape& cap, const Vec3& c, double r, int& code) {
  const double tau = (c - cap.p).dot(cap.e);
  if (std::abs(tau) <= cap.l) {
    code = 0;
    return features(FeaturePair::LinePoint, cap.p, cap.e, cap.r, c, Vec3::Zero(), r);
  }
  code = tau > 0.0 ? 2 : 1;
  return features(FeaturePair::PointPoint, cap.end(tau > 0.0 ? 1 : -1), Vec3::Zero(), cap.r, c, Vec3::Zero(), r);
}

void capsule_sphere(const PlacedShape& A, const PlacedShape& B, const DetectionOptions&, ContactEmitter& out) {
  int code = 0;
  const WorldFeatures f = point_segment_features(capsule_of(A), B.p, std::get<Sphere>(*B.geometry).radius, code);
  out.emit(code, true, f);
}

void cylinder_sphere(const PlacedShape& A, const PlacedShape& B, const DetectionOptions&, ContactEmitter& out) {
  int code = 0;
  const WorldFeatures f = point_cylinder_features(cylinder_of(A), B.p, std::get<Sphere>(*B.geometry).radius, code);
  out.emit(code, true, f);
}

// Segment ends are class 1 (−) and 2 (+), interiors class 0; the feature code
// of a capsule–capsule contact is 3·class_A + class_B.
void capsule_capsule(const PlacedShape& A, const PlacedShape& B, const DetectionOptions& o, ContactEmitter& out) {
  const RoundShape a = capsule_of(A), b = capsule_of(B);
  const Vec3 m = a.e.cross(b.e);
  auto cls = [](double tau, double l) { return std::abs(tau) < l ? 0 : (tau > 0.0 ? 2 : 1); };
  auto end_of = [](const RoundShape& s, int c) { return s.end(c == 2 ? 1 : -1); };
  if (m.norm() >= o.parallel_tolerance) {
    double ta, tb;
    line_parameters(a.p, a.e, b.p, b.e, ta, tb);
    if (std::abs(ta) <= a.l && std::abs(tb) <= b.l) {
      const double sign = m.dot(b.p - a.p) >= 0.0 ? 1.0 : -1.0;
      out.emit(0, true, features(FeaturePair::LineLine, a.p, a.e, a.r, b.p, b.e, b.r, sign));
      return;
    }
    // Closest points of the segments: clamp τa, project onto b and clamp,
    // project back onto a and clamp (Ericson, Real-Time Collision Detection §5.1.9).
    ta = std::clamp(ta, -a.l, a.l);
    tb = std::clamp((a.p + ta * a.e - b.p).dot(b.e), -b.l, b.l);
    ta = std::clamp((b.p + tb * b.e - a.p).dot(a.e), -a.l, a.l);
    const int ca = cls(ta, a.l), cb = cls(tb, b.l);
    if (ca == 0 && cb == 0) {
      const double sign = m.dot(b.p - a.p) >= 0.0 ? 1.0 : -1.0;
      out.emit(0, true, features(FeaturePair::LineLine, a.p, a.e, a.r, b.p, b.e, b.r, sign));
    } else if (cb == 0) {
      out.emit(3 * ca, false, features(FeaturePair::LinePoint, b.p, b.e, b.r, end_of(a, ca), Vec3::Zero(), a.r));
    } else if (ca == 0) {
      out.emit(cb, true, features(FeaturePair::LinePoint, a.p, a.e, a.r, end_of(b, cb), Vec3::Zero(), b.r));
    } else {
      out.emit(3 * ca + cb, true,
               features(FeaturePair::PointPoint, end_of(a, ca), Vec3::Zero(), a.r, end_of(b, cb), Vec3::Zero(), b.r));
    }
    return;
  }
  // Nearly parallel: each end of a against segment b, and each end of b
  // strictly inside a's span against segment a (the ends of the overlap).
  const double tol = kRelTol * (1e-3 + std::max(a.l, b.l));
  for (int ca = 1; ca <= 2; ++ca) {
    const Vec3 x = end_of(a, ca);
    const double tb = (x - b.p).dot(b.e);
    if (std::abs(tb) <= b.l) {
      out.emit(3 * ca, false, features(FeaturePair::LinePoint, b.p, b.e, b.r, x, Vec3::Zero(), a.r));
    } else {
      const int cb = tb > 0.0 ? 2 : 1;
      out.emit(3 * ca + cb, true,
               features(FeaturePair::PointPoint, x, Vec3::Zero(), a.r, end_of(b, cb), Vec3::Zero(), b.r));
    }
  }
  for (int cb = 1; cb <= 2; ++cb) {
    const Vec3 x = end_of(b, cb);
    if (std::abs((x - a.p).dot(a.e)) < a.l - tol) {
      out.emit(cb, true, features(FeaturePair::LinePoint, a.p, a.e, a.r, x, Vec3::Zero(), b.r));
    }
  }
}

// The largest separation of a box and another convex shape along the box's
// face axes; `radius(L)` is the other shape's half width along L, `centre`
// its centre. An edge contact deeper than this is on the far side of the box.
template <class Radius>
double face_axes_separation(const BoxShape& b, const Vec3& centre, Radius radius) {
  double sep = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < 3; ++i) {
    const Vec3 L = b.R.col(i);
    sep = std::max(sep, std::abs(L.dot(centre - b.p)) - b.h[i] - radius(L));
  }
  return sep;
}

void box_capsule(const PlacedShape& A, const PlacedShape& B, const DetectionOptions& o, ContactEmitter& out) {
  const BoxShape b(A);
  const RoundShape c = capsule_of(B);
  for (int s = 0; s < 2; ++s) {  // the end spheres (codes 0–25 and 32–57)
    const Vec3 x = c.end(s ? 1 : -1);
    BoxFeature bf;
    closest_box_feature(b, x, BoxMode::All, bf);
    out.emit(32 * s + bf.code, true, box_point_features(bf, x, c.r));
  }
  const double sep = face_axes_separation(b, c.p, [&](const Vec3& L) { return c.l * std::abs(L.dot(c.e)) + c.r; });
  for (int e = 0; e < 12; ++e) {  // the axis over the box edges (codes 64–75)
    double sign;
    Vec3 n;
    if (!edge_line(b, e, c.p, c.e, c.l, o.parallel_tolerance, sign, n)) continue;
    const Vec3 ce = b.edge_centre(e);
    if (n.dot(c.p - ce) - c.r < sep - kSatTol * (1.0 + b.h.maxCoeff())) continue;
    out.emit(64 + e, true, features(FeaturePair::LineLine, ce, b.R.col(b.edge_axis(e)), 0.0, c.p, c.e, c.r, sign));
  }
}

// Box–box by the separating-axis test over the 15 axes (3 face normals of
// each box, 9 edge cross products), then:
// - an edge axis clearly deeper than every face axis (more than kSatTol):
//   one edge–edge contact between the supporting edges;
// - otherwise a face contact: the reference face (the face axis of least
//   penetration, a's on a tie) and the other box's face most anti-parallel
//   to it give the contact polygon, their intersection, as the vertices of
//   each face over the other face and the crossings of their edges. That is
//   at most 8 points, every one a pair of features fixed on the boxes.
// Identities do not depend on which face is the reference, so a contact
// keeps its name while it persists, and at the degenerate positions of two
// aligned boxes (edges in line, a corner on an edge) one representation
// wins within kFaceTol: a vertex over a face counts up to kFaceTol·size
// outside it; a vertex of a within that distance of a kept vertex of b is
// the same point (b's is kept); an edge crossing needs both closest points
// kFaceTol·size inside their edges.
// Codes: vertex k of b on face f of a: 6k + f; vertex k of a on face f of b:
// 48 + 6k + f; edge i of a with edge j of b: 96 + 12i + j.
constexpr double kFaceTol = 1e-6;  // contact polygon boundaries, relative to the box size
// Face contacts: an edge crossing counts only where the edges' common normal
// m = d_a × d_b is within 60° of the contact normal (|cos| ≥ 0.5).
constexpr double kCrossingCos = 0.5;

// The vertices (in order around the face) and the edges (edge k from vertex
// k to k + 1) of face f = 2i + side of a box.
void face_features(int f, int (&vertex)[4], int (&edge)[4]) {
  const int i = f / 2, s = f & 1, j1 = (i + 1) % 3, j2 = (i + 2) % 3;
  const int bit_s = s << i;
  // Around the face: (−,−), (+,−), (+,+), (−,+) in (j1, j2).
  const int corners[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  for (int k = 0; k < 4; ++k) vertex[k] = bit_s | (corners[k][0] << j1) | (corners[k][1] << j2);
  // Edges along j1 (bit 0: side of j2, bit 1: side of i) and along j2
  // (bit 0: side of i, bit 1: side of j1).
  edge[0] = 4 * j1 + 0 + 2 * s;  // j2 −
  edge[1] = 4 * j2 + s + 2;      // j1 +
  edge[2] = 4 * j1 + 1 + 2 * s;  // j2 +
  edge[3] = 4 * j2 + s + 0;      // j1 −
}

// Is the point x (world) over face f of box b, up to tol outside its edges?
bool over_box_face(const BoxShape& b, int f, const Vec3& x, double tol) {
  const Vec3 c = b.R.transpose() * (x - b.p);
  const int i = f / 2;
  for (int j = 0; j < 3; ++j) {
    if (j != i && std::abs(c[j]) > b.h[j] + tol) return false;
  }
  return true;
}

void box_box(const PlacedShape& A, const PlacedShape& B, const DetectionOptions& o, ContactEmitter& out) {
  const BoxShape a(A), b(B);
  const double size = std::max(a.h.maxCoeff(), b.h.maxCoeff());
  const double sat_tol = kSatTol * (1.0 + size);
  const double limit = out.margin() + sat_tol;
  const Vec3 d = b.p - a.p;
  // Face axes of a and b: the separation along each outward normal.
  double sep_a = -std::numeric_limits<double>::infinity(), sep_b = sep_a;
  int face_a = 0, face_b = 0;
  for (int i = 0; i < 3; ++i) {
    const Vec3 L = a.R.col(i);
    const double s = std::abs(L.dot(d)) - a.h[i] - b.support_radius(L);
    if (s > limit) return;
    if (s > sep_a) sep_a = s, face_a = 2 * i + (L.dot(d) >= 0.0 ? 1 : 0);
  }
  for (int i = 0; i < 3; ++i) {
    const Vec3 L = b.R.col(i);
    const double s = std::abs(L.dot(d)) - b.h[i] - a.support_radius(L);
    if (s > limit) return;
    if (s > sep_b) sep_b = s, face_b = 2 * i + (L.dot(d) <= 0.0 ? 1 : 0);
  }
  // Edge axes: a's axis i × b's axis j.
  double sep_e = -std::numeric_limits<double>::infinity();
  int axis_a = -1, axis_b = -1;
  Vec3 axis_e = Vec3::Zero();
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      Vec3 L = a.R.col(i).cross(b.R.col(j));
      const double ln = L.norm();
      if (ln < o.parallel_tolerance) continue;
      L /= ln;
      if (L.dot(d) < 0.0) L = -L;  // from a towards b
      const double s = L.dot(d) - a.support_radius(L) - b.support_radius(L);
      if (s > limit) return;
      if (s > sep_e) sep_e = s, axis_a = i, axis_b = j, axis_e = L;
    }
  }
  const double sep_f = std::max(sep_a, sep_b);

  if (axis_a >= 0 && sep_e > sep_f + sat_tol) {
    // The supporting edges: a's edge along axis_a farthest along L, b's
    // farthest along −L (edge bits: the sides of the two other axes).
    const auto support_edge = [](const BoxShape& box, int j, const Vec3& L) {
      const int i1 = (j + 1) % 3, i2 = (j + 2) % 3;
      return 4 * j + (L.dot(box.R.col(i1)) > 0.0 ? 1 : 0) + (L.dot(box.R.col(i2)) > 0.0 ? 2 : 0);
    };
    const int ea = support_edge(a, axis_a, axis_e), eb = support_edge(b, axis_b, -axis_e);
    const Vec3 ca = a.edge_centre(ea), cb = b.edge_centre(eb);
    const Vec3 da = a.R.col(axis_a), db = b.R.col(axis_b);
    double ta, tb;
    line_parameters(ca, da, cb, db, ta, tb);
    // Closest points outside an edge (a vertex against an edge, not covered):
    // the face contact below stands in.
    if (std::abs(ta) <= a.h[axis_a] && std::abs(tb) <= b.h[axis_b]) {
      const double sign = da.cross(db).dot(axis_e) >= 0.0 ? 1.0 : -1.0;
      out.emit(96 + 12 * ea + eb, true, features(FeaturePair::LineLine, ca, da, 0.0, cb, db, 0.0, sign));
      return;
    }
  }

  // Face contact. The pair of faces (fa of a, fb of b): the reference face
  // and the other box's face most anti-parallel to it.
  const bool ref_is_a = sep_a >= sep_b - sat_tol;
  const auto most_antiparallel = [](const BoxShape& box, const Vec3& n) {
    int k = 0;
    for (int j = 1; j < 3; ++j) {
      if (std::abs(box.R.col(j).dot(n)) > std::abs(box.R.col(k).dot(n))) k = j;
    }
    return 2 * k + (box.R.col(k).dot(n) < 0.0 ? 1 : 0);
  };
  const int fa = ref_is_a ? face_a : most_antiparallel(a, b.face_normal(face_b));
  const int fb = ref_is_a ? most_antiparallel(b, a.face_normal(face_a)) : face_b;
  const Vec3 n_ab = ref_is_a ? a.face_normal(fa) : Vec3(-b.face_normal(fb));
  int va[4], vb[4], ea[4], eb[4];
  face_features(fa, va, ea);
  face_features(fb, vb, eb);
  const double tol = kFaceTol * (1e-3 + size);
  // A contact deeper than the face axis's separation lies beyond the
  // overlap (a steep face or an edge crossing seen along its own normal).
  const double deepest = sep_f - sat_tol;
  Vec3 kept[4];
  int nkept = 0;
  // Vertices of b over a's face.
  for (int k = 0; k < 4; ++k) {
    const Vec3 v = b.vertex(vb[k]);
    if (!over_box_face(a, fa, v, tol) || a.face_normal(fa).dot(v - a.face_point(fa)) < deepest) continue;
    kept[nkept++] = v;
    out.emit(6 * vb[k] + fa, true, features(FeaturePair::FacePoint, a.face_point(fa), a.face_normal(fa), 0.0, v,
                                            Vec3::Zero(), 0.0));
  }
  // Vertices of a over b's face, unless one of b's stands there.
  for (int k = 0; k < 4; ++k) {
    const Vec3 v = a.vertex(va[k]);
    if (!over_box_face(b, fb, v, tol) || b.face_normal(fb).dot(v - b.face_point(fb)) < deepest) continue;
    bool same = false;
    for (int s = 0; s < nkept; ++s) {
      const Vec3 w = kept[s] - v;
      if ((w - w.dot(n_ab) * n_ab).norm() <= 2.0 * tol) same = true;
    }
    if (same) continue;
    out.emit(48 + 6 * va[k] + fb, false, features(FeaturePair::FacePoint, b.face_point(fb), b.face_normal(fb), 0.0, v,
                                                  Vec3::Zero(), 0.0));
  }
  // Edges of the two faces crossing inside both.
  for (int i = 0; i < 4; ++i) {
    const Vec3 ca = a.edge_centre(ea[i]), da = a.R.col(a.edge_axis(ea[i]));
    const double la = a.h[a.edge_axis(ea[i])];
    for (int j = 0; j < 4; ++j) {
      const Vec3 cb = b.edge_centre(eb[j]), db = b.R.col(b.edge_axis(eb[j]));
      const Vec3 m = da.cross(db);
      if (m.norm() < o.parallel_tolerance) continue;
      // A crossing is a corner of the contact polygon where both edges lie
      // near the contact plane (m near its normal). Two edges in one plane
      // across it (a cube tilted about x over another: their y edges, both
      // in x = ±a) "cross" with m ⟂ n_ab and a gap of exactly zero along m
      // at any height: no contact.
      if (std::abs(m.dot(n_ab)) < kCrossingCos * m.norm()) continue;
      double ta, tb;
      line_parameters(ca, da, cb, db, ta, tb);
      if (std::abs(ta) >= la - tol || std::abs(tb) >= b.h[b.edge_axis(eb[j])] - tol) continue;
      const double sign = m.dot(n_ab) >= 0.0 ? 1.0 : -1.0;
      if (sign * m.normalized().dot(cb - ca) < deepest) continue;
      out.emit(96 + 12 * ea[i] + eb[j], true, features(FeaturePair::LineLine, ca, da, 0.0, cb, db, 0.0, sign));
    }
  }
}

// Codes: vertex k of the box against the cylinder: 5k + region (0–39); rim s
// (0: −, 1: +) on face f: 40 + 5(6s + f) + point (0–3 flat, 4 lowest);
// box edge e against the side: 100 + e.
void box_cylinder(const PlacedShape& A, const PlacedShape& B, const DetectionOptions& o, ContactEmitter& out) {
  const BoxShape b(A);
  const RoundShape c = cylinder_of(B);
  for (int k = 0; k < 8; ++k) {
    int code = 0;
    const WorldFeatures f = point_cylinder_features(c, b.vertex(k), 0.0, code);
    out.emit(5 * k + code, false, f);
  }
  for (int s = 0; s < 2; ++s) {
    const int end = s ? 1 : -1;
    for (int face = 0; face < 6; ++face) {
      const Vec3 n = b.face_normal(face);
      const int base = 40 + 5 * (6 * s + face);
      BoxFeature bf;
      if (is_flat(n, c.e, o)) {
        for (int k = 0; k < 4; ++k) {
          const Vec3 x = rim_point(B, c, end, k);
          if (closest_box_feature(b, x, BoxMode::FacesInclusive, bf) && bf.face == face) {
            out.emit(base + k, true, box_point_features(bf, x, 0.0));
          }
        }
      } else {
        const Vec3 g = n - n.dot(c.e) * c.e;
        const Vec3 lowest = c.end(end) - c.r * g.normalized();
        if (closest_box_feature(b, lowest, BoxMode::FacesInclusive, bf) && bf.face == face) {
          out.emit(base + 4, true, features(FeaturePair::FaceRim, bf.x, bf.d, 0.0, c.end(end), c.e, c.r));
        }
      }
    }
  }
  const double sep = face_axes_separation(b, c.p, [&](const Vec3& L) {
    const double le = L.dot(c.e);
    return c.l * std::abs(le) + c.r * std::sqrt(std::max(0.0, 1.0 - le * le));
  });
  for (int e = 0; e < 12; ++e) {
    double sign;
    Vec3 n;
    if (!edge_line(b, e, c.p, c.e, c.l, o.parallel_tolerance, sign, n)) continue;
    const Vec3 ce = b.edge_centre(e);
    if (n.dot(c.p - ce) - c.r < sep - kSatTol * (1.0 + b.h.maxCoeff())) continue;
    out.emit(100 + e, true, features(FeaturePair::LineLine, ce, b.R.col(b.edge_axis(e)), 0.0, c.p, c.e, c.r, sign));
  }
}

// ---- dispatch ---------------------------------------------------------------------

using KernelFn = void (*)(const PlacedShape&, const PlacedShape&, const DetectionOptions&, ContactEmitter&);

struct KernelEntry {
  std::size_t type_a, type_b;  // Geometry variant indices
  KernelFn fn;
  int max_contacts;
};

constexpr std::size_t kSphere = 0, kBox = 1, kCylinder = 2, kCapsule = 3, kPlane = 4, kMesh = 5;

const KernelEntry kKernels[] = {
    {kPlane, kSphere, plane_sphere, 1},
    {kPlane, kBox, plane_box, 8},
    {kPlane, kCapsule, plane_capsule, 2},
    {kPlane, kCylinder, plane_cylinder, 8},
    {kSphere, kSphere, sphere_sphere, 1},
    {kBox, kSphere, box_sphere, 1},
    {kCapsule, kSphere, capsule_sphere, 1},
    {kCylinder, kSphere, cylinder_sphere, 1},
    {kCapsule, kCapsule, capsule_capsule, 4},
    {kBox, kCapsule, box_capsule, 14},
    {kBox, kBox, box_box, 8},
    {kBox, kCylinder, box_cylinder, 8 + 48 + 12},
    {kPlane, kMesh, plane_hull, kHullMaxContacts},
    {kMesh, kSphere, hull_sphere, 1},
    {kMesh, kCapsule, hull_capsule, kHullMaxContacts},
    {kMesh, kCylinder, hull_cylinder, kHullMaxContacts},
    {kMesh, kBox, hull_hull, kHullMaxContacts},
    {kMesh, kMesh, hull_hull, kHullMaxContacts},
};

}  // namespace

bool find_kernel(std::size_t type_a, std::size_t type_b, std::uint8_t& kernel, bool& swapped) {
  for (std::size_t k = 0; k < std::size(kKernels); ++k) {
    if (kKernels[k].type_a == type_a && kKernels[k].type_b == type_b) {
      kernel = static_cast<std::uint8_t>(k);
      swapped = false;
      return true;
    }
    if (kKernels[k].type_a == type_b && kKernels[k].type_b == type_a) {
      kernel = static_cast<std::uint8_t>(k);
      swapped = true;
      return true;
    }
  }
  return false;
}

int kernel_max_contacts(std::uint8_t kernel) { return kKernels[kernel].max_contacts; }

void run_kernel(std::uint8_t kernel, const PlacedShape& A, const PlacedShape& B, const DetectionOptions& options,
                ContactEmitter& emitter) {
  kKernels[kernel].fn(A, B, options, emitter);
}

}  // namespace plume::detail
