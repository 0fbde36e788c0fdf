// Narrow phase with a convex hull on one side (collision meshes, and boxes
// against hulls). Every contact is a pair of features fixed on the bodies —
// a hull vertex, edge or face against the other shape's features — so gaps,
// normals and their rates come from features.cpp exactly as for primitives;
// the searches below only decide which feature pairs touch.
//
// - plane–hull: each vertex below the margin; a face lying on the plane is
//   represented by its support vertices (at most 8, fixed on the hull).
// - hull–sphere: the closest face, edge or vertex of the hull to the centre
//   (a centre inside: the least-penetrated face); exact.
// - hull–capsule: both end spheres as hull–sphere, and the axis against each
//   hull edge it passes over (edge–segment).
// - hull–cylinder: hull vertices against the cylinder, each rim against each
//   hull face, hull edges against the side (as box–cylinder).
// - hull–hull (and box–hull): the separating-axis test over face normals and
//   the edge pairs that form faces of the Minkowski difference gives the
//   axis of least penetration (or largest separation). A face axis clips
//   the other hull's most anti-parallel face against the reference face:
//   each point of the clipped polygon is a vertex on a face or an edge
//   crossing an edge. An edge axis gives one edge–edge contact.
// A pair reports at most kHullMaxContacts contacts: more are reduced to the
// ones that keep the support polygon (its extreme points and the deepest).
//
// Feature codes: kind (bits 28–30), index i (bits 14–27), index j (bits 0–13).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "narrowphase.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "shape_helpers.hpp"

namespace plume::detail {

namespace {

constexpr double kRelTol = 1e-7;   // boundary tolerance of face regions, relative to the hull size
constexpr double kConeTol = 1e-3;  // edge Voronoi cones: accepted normals up to ~0.06° outside
constexpr double kSatTol = 1e-9;   // separating-axis slack [m, relative]

// Kinds of feature codes.
enum : int {
  kFaceOfA = 0,    // a feature of B (vertex, sphere centre) on face i of A
  kFaceOfB = 1,    // a vertex of A on face i of B
  kEdgeEdge = 2,   // edge i of A with edge j of B
  kEdgeOfA = 3,    // a point feature of B against edge i of A
  kVertexOfA = 4,  // a point feature of B against vertex i of A
  kEdgeAxis = 5,   // edge i of A against the axis of B (capsule, cylinder)
  kRimOnFace = 6,  // a cylinder rim point j of B on face i of A
  kVertexOnCylinder = 7  // vertex i of A against region j of the cylinder B
};

int code(int kind, int i, int j = 0) { return (kind << 28) | (i << 14) | j; }

// A hull placed in the world.
struct HullView {
  const ConvexHull& h;
  Mat3 R;
  Vec3 p;
  HullView(const PlacedShape& s) : h(*s.hull), R(s.R), p(s.p) {}
  Vec3 vertex(int k) const { return p + R * h.vertices()[static_cast<std::size_t>(k)]; }
  Vec3 normal(int f) const { return R * h.faces()[static_cast<std::size_t>(f)].normal; }
  double offset(int f) const { return normal(f).dot(p) + h.faces()[static_cast<std::size_t>(f)].offset; }
  Vec3 face_point(int f) const { return vertex(h.face_vertex(f, 0)); }
  const ConvexHull::Edge& edge(int e) const { return h.edges()[static_cast<std::size_t>(e)]; }
  Vec3 local(const Vec3& x) const { return R.transpose() * (x - p); }
  double tol() const { return kRelTol * (1e-3 + h.extent()); }
};

// Is the local point x over face f (its projection inside the polygon, up to tol)?
bool over_face(const ConvexHull& h, int f, const Vec3& x, double tol) {
  const ConvexHull::Face& face = h.faces()[static_cast<std::size_t>(f)];
  for (int k = 0; k < face.count; ++k) {
    const Vec3& a = h.vertices()[static_cast<std::size_t>(h.face_vertex(f, k))];
    const Vec3& b = h.vertices()[static_cast<std::size_t>(h.face_vertex(f, (k + 1) % face.count))];
    const Vec3 m = (b - a).cross(face.normal);  // outward in the face plane
    if (m.dot(x - a) > tol * m.norm()) return false;
  }
  return true;
}

// Is the unit normal n (perpendicular to an edge) within the arc of normals
// between the edge's face normals N0 and N1, up to kConeTol?
bool in_edge_cone(const Vec3& n, const Vec3& N0, const Vec3& N1) {
  const double c = N0.dot(N1);
  const double det = 1.0 - c * c;
  if (det < 1e-12) return n.dot(N0) >= 1.0 - kConeTol;
  const double a = n.dot(N0), b = n.dot(N1);
  return (a - c * b) / det >= -kConeTol && (b - c * a) / det >= -kConeTol;
}

// ---- candidates and their reduction -------------------------------------------------

struct Candidate {
  int code;
  bool first_on_A;
  WorldFeatures f;
  double phi;
  Vec3 point;   // midpoint of the witnesses
  Vec3 normal;  // A → B
};

struct ClipPoint {
  Vec3 x;
  int kind;  // 0: incident vertex i; 1: incident edge i crossing reference side j; 2: reference vertex i; -1: invalid
  int i, j;
  bool seg_on_side;  // the segment to the next point lies on a reference side plane (seg) or an incident edge (seg)
  int seg;
};

// Per-thread scratch space: kernels do not allocate once it has grown.
struct Scratch {
  std::vector<Candidate> candidates;
  std::vector<int> chosen;
  std::vector<ClipPoint> polygon, clipped;
  std::vector<Vec3> vb;      // world vertices of hull B
  std::vector<Vec3> na, nb;  // world face normals of hulls A and B
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

class Collector {
 public:
  explicit Collector(ContactEmitter& out) : out_(out), c_(scratch().candidates) { c_.clear(); }

  void add(int feature, bool first_on_A, const WorldFeatures& f) {
    FeatureContact r;
    evaluate_features(f, r);
    if (!(r.phi < out_.margin())) return;
    c_.push_back(Candidate{feature, first_on_A, f, r.phi, 0.5 * (r.p1 + r.p2), first_on_A ? r.n : Vec3(-r.n)});
  }
  std::size_t size() const { return c_.size(); }
  std::vector<Candidate>& candidates() { return c_; }

  // Emits every candidate, or kHullMaxContacts of them that keep the support
  // polygon: extreme points in the contact plane, then the deepest.
  void flush() {
    if (c_.size() <= static_cast<std::size_t>(kHullMaxContacts)) {
      for (const Candidate& c : c_) out_.emit(c.code, c.first_on_A, c.f);
      return;
    }
    std::size_t deepest = 0;
    for (std::size_t k = 1; k < c_.size(); ++k) {
      if (c_[k].phi < c_[deepest].phi) deepest = k;
    }
    Vec3 t1, t2;
    tangent_basis(c_[deepest].normal, t1, t2);
    const auto q = [&](std::size_t k) { return Eigen::Vector2d(t1.dot(c_[k].point), t2.dot(c_[k].point)); };
    const auto cross2 = [](const Eigen::Vector2d& a, const Eigen::Vector2d& b) { return a.x() * b.y() - a.y() * b.x(); };
    std::vector<int>& chosen = scratch().chosen;
    chosen.clear();
    const auto argmax = [&](auto&& score) {
      std::size_t best = c_.size();
      double value = 0.0;
      for (std::size_t k = 0; k < c_.size(); ++k) {
        if (std::find(chosen.begin(), chosen.end(), static_cast<int>(k)) != chosen.end()) continue;
        const double s = score(k);
        if (best == c_.size() || s > value || (s == value && c_[k].code < c_[best].code)) best = k, value = s;
      }
      return std::make_pair(best, value);
    };
    chosen.push_back(static_cast<int>(argmax([&](std::size_t k) { return q(k).x(); }).first));
    const Eigen::Vector2d a = q(static_cast<std::size_t>(chosen[0]));
    chosen.push_back(static_cast<int>(argmax([&](std::size_t k) { return (q(k) - a).squaredNorm(); }).first));
    // Then repeatedly the point farthest outside the polygon kept so far
    // (kept in counter-clockwise order).
    const std::size_t slots = static_cast<std::size_t>(kHullMaxContacts) - 1;  // the last one for the deepest
    while (chosen.size() < slots) {
      std::size_t best = c_.size(), best_pos = 0;
      double value = 0.0;
      for (std::size_t k = 0; k < c_.size(); ++k) {
        if (std::find(chosen.begin(), chosen.end(), static_cast<int>(k)) != chosen.end()) continue;
        for (std::size_t s = 0; s < chosen.size(); ++s) {
          const Eigen::Vector2d u = q(static_cast<std::size_t>(chosen[s]));
          const Eigen::Vector2d w = q(static_cast<std::size_t>(chosen[(s + 1) % chosen.size()]));
          double out = cross2(w - u, q(k) - u);  // > 0: k is left of u → w …
          if (chosen.size() == 2 && s == 1) out = -out;  // a segment has two sides
          out = chosen.size() == 2 ? std::abs(out) : -out;  // counter-clockwise: outside is to the right
          if (out > value) value = out, best = k, best_pos = s + 1;
        }
      }
      if (best == c_.size()) break;
      if (chosen.size() == 2) {  // orient the triangle counter-clockwise
        const Eigen::Vector2d u = q(static_cast<std::size_t>(chosen[0])), w = q(static_cast<std::size_t>(chosen[1]));
        best_pos = cross2(w - u, q(best) - u) > 0.0 ? 2 : 1;
      }
      chosen.insert(chosen.begin() + static_cast<std::ptrdiff_t>(best_pos), static_cast<int>(best));
    }
    if (std::find(chosen.begin(), chosen.end(), static_cast<int>(deepest)) == chosen.end()) {
      chosen.push_back(static_cast<int>(deepest));
    }
    std::sort(chosen.begin(), chosen.end());
    for (int k : chosen) {
      const Candidate& c = c_[static_cast<std::size_t>(k)];
      out_.emit(c.code, c.first_on_A, c.f);
    }
  }

 private:
  ContactEmitter& out_;
  std::vector<Candidate>& c_;
};

// ---- a point feature against a hull ------------------------------------------------

// The hull feature closest to the world point c (a centre inside: the least
// penetrated face), as feature 1 against the point with radius r; `kind`
// and `index` identify it (kFaceOfA, kEdgeOfA or kVertexOfA).
WorldFeatures hull_point_features(const HullView& a, const Vec3& c, double r, int& kind, int& index) {
  const ConvexHull& h = a.h;
  const Vec3 cl = a.local(c);
  const double tol = a.tol();
  int top = 0;
  double top_s = -std::numeric_limits<double>::infinity();
  for (int f = 0; f < h.num_faces(); ++f) {
    const ConvexHull::Face& face = h.faces()[static_cast<std::size_t>(f)];
    const double s = face.normal.dot(cl) - face.offset;
    if (s > top_s) top_s = s, top = f;
  }
  int face = top_s <= 0.0 ? top : -1;
  if (face < 0) {  // outside: a face whose region holds c, else an edge or a vertex
    double best = -std::numeric_limits<double>::infinity();
    for (int f = 0; f < h.num_faces(); ++f) {
      const ConvexHull::Face& fc = h.faces()[static_cast<std::size_t>(f)];
      const double s = fc.normal.dot(cl) - fc.offset;
      if (s > 0.0 && s > best && over_face(h, f, cl, tol)) best = s, face = f;
    }
  }
  if (face >= 0) {
    kind = kFaceOfA;
    index = face;
    return features(FeaturePair::FacePoint, a.face_point(face), a.normal(face), 0.0, c, Vec3::Zero(), r);
  }
  double best = std::numeric_limits<double>::infinity();
  int best_edge = 0;
  double best_t = 0.0;
  for (int e = 0; e < h.num_edges(); ++e) {
    const ConvexHull::Edge& ed = a.edge(e);
    const Vec3& v0 = h.vertices()[static_cast<std::size_t>(ed.v0)];
    const Vec3 d = h.vertices()[static_cast<std::size_t>(ed.v1)] - v0;
    const double t = std::clamp((cl - v0).dot(d) / d.squaredNorm(), 0.0, 1.0);
    const double dist = (v0 + t * d - cl).squaredNorm();
    if (dist < best) best = dist, best_edge = e, best_t = t;
  }
  const ConvexHull::Edge& ed = a.edge(best_edge);
  if (best_t > 0.0 && best_t < 1.0) {
    kind = kEdgeOfA;
    index = best_edge;
    const Vec3 x0 = a.vertex(ed.v0);
    return features(FeaturePair::LinePoint, x0, (a.vertex(ed.v1) - x0).normalized(), 0.0, c, Vec3::Zero(), r);
  }
  kind = kVertexOfA;
  index = best_t <= 0.0 ? ed.v0 : ed.v1;
  return features(FeaturePair::PointPoint, a.vertex(index), Vec3::Zero(), 0.0, c, Vec3::Zero(), r);
}

// The largest separation of hull a from a convex shape along a's face
// normals; `lowest(N)` is the shape's minimum of N·x. Contacts deeper than
// this are on the far side of the hull.
template <class Lowest>
double face_axes_separation(const HullView& a, Lowest lowest) {
  double sep = -std::numeric_limits<double>::infinity();
  for (int f = 0; f < a.h.num_faces(); ++f) sep = std::max(sep, lowest(a.normal(f)) - a.offset(f));
  return sep;
}

// Edge e of hull a against the line x + τ d (|τ| < half_length) of a round
// shape of radius r: the LineLine features when the closest points are inside
// both, the normal is in the edge's cone, and the gap is not deeper than `sep`.
bool edge_axis(const HullView& a, int e, const Vec3& x, const Vec3& d, double half_length, double r, double sep,
               const DetectionOptions& o, WorldFeatures& f) {
  const ConvexHull::Edge& ed = a.edge(e);
  const Vec3 x0 = a.vertex(ed.v0);
  Vec3 de = a.vertex(ed.v1) - x0;
  const double len = de.norm();
  de /= len;
  const Vec3 m = de.cross(d);
  const double mn = m.norm();
  if (mn < o.parallel_tolerance) return false;
  double te, tl;
  line_parameters(x0, de, x, d, te, tl);
  const double tol = a.tol();
  if (te <= tol || te >= len - tol || std::abs(tl) >= half_length - tol) return false;
  const Vec3 N0 = a.normal(ed.face0), N1 = a.normal(ed.face1);
  Vec3 n = m / mn;
  const double sign = n.dot(N0 + N1) >= 0.0 ? 1.0 : -1.0;
  n *= sign;
  if (!in_edge_cone(n, N0, N1)) return false;
  if (n.dot(x - x0) - r < sep - kSatTol * (1.0 + a.h.extent())) return false;
  f = features(FeaturePair::LineLine, x0, de, 0.0, x, d, r, sign);
  return true;
}

}  // namespace

// ---- plane–hull ----------------------------------------------------------------------

void plane_hull(const PlacedShape& A, const PlacedShape& B, const DetectionOptions&, ContactEmitter& out) {
  const HullView b(B);
  const Vec3 n = A.R.col(2);
  Collector col(out);
  for (int k = 0; k < b.h.num_vertices(); ++k) {
    const Vec3 x = b.vertex(k);
    if (n.dot(x - A.p) < out.margin()) {
      col.add(k, true, features(FeaturePair::FacePoint, A.p, n, 0.0, x, Vec3::Zero(), 0.0));
    }
  }
  if (col.size() > static_cast<std::size_t>(kHullMaxContacts)) {
    // A face lying on the plane: its support vertices, fixed on the hull,
    // stand for it (so the contacts keep their names while it rests).
    int down = 0;
    double lowest = std::numeric_limits<double>::infinity();
    for (int f = 0; f < b.h.num_faces(); ++f) {
      const double c = b.normal(f).dot(n);
      if (c < lowest) lowest = c, down = f;
    }
    std::vector<Candidate>& c = col.candidates();
    const auto on_down = [&](const Candidate& x) {
      const std::vector<int>& faces = b.h.vertex_faces(x.code);
      return std::find(faces.begin(), faces.end(), down) != faces.end();
    };
    if (std::all_of(c.begin(), c.end(), on_down)) {
      const std::vector<int>& keep = b.h.face_support(down);
      c.erase(std::remove_if(c.begin(), c.end(),
                             [&](const Candidate& x) { return std::find(keep.begin(), keep.end(), x.code) == keep.end(); }),
              c.end());
    }
  }
  col.flush();
}

// ---- hull–sphere, hull–capsule, hull–cylinder ----------------------------------------------

void hull_sphere(const PlacedShape& A, const PlacedShape& B, const DetectionOptions&, ContactEmitter& out) {
  int kind = 0, index = 0;
  const WorldFeatures f = hull_point_features(HullView(A), B.p, std::get<Sphere>(*B.geometry).radius, kind, index);
  out.emit(code(kind, index), true, f);
}

void hull_capsule(const PlacedShape& A, const PlacedShape& B, const DetectionOptions& o, ContactEmitter& out) {
  const HullView a(A);
  const RoundShape c = capsule_of(B);
  Collector col(out);
  for (int s = 0; s < 2; ++s) {  // the end spheres
    int kind = 0, index = 0;
    const WorldFeatures f = hull_point_features(a, c.end(s ? 1 : -1), c.r, kind, index);
    col.add(code(kind, index, 1 + s), true, f);
  }
  const Vec3 e0 = c.end(-1), e1 = c.end(1);
  const double sep = face_axes_separation(a, [&](const Vec3& N) { return std::min(N.dot(e0), N.dot(e1)) - c.r; });
  for (int e = 0; e < a.h.num_edges(); ++e) {  // the axis over the hull's edges
    WorldFeatures f;
    if (edge_axis(a, e, c.p, c.e, c.l, c.r, sep, o, f)) col.add(code(kEdgeAxis, e), true, f);
  }
  col.flush();
}

void hull_cylinder(const PlacedShape& A, const PlacedShape& B, const DetectionOptions& o, ContactEmitter& out) {
  const HullView a(A);
  const RoundShape c = cylinder_of(B);
  const double tol = a.tol();
  Collector col(out);
  // Hull vertices against the cylinder (those that can be within the margin).
  const double reach = std::hypot(c.l, c.r) + std::max(out.margin(), 0.0);
  for (int k = 0; k < a.h.num_vertices(); ++k) {
    const Vec3 x = a.vertex(k);
    if ((x - c.p).norm() > reach) continue;
    int region = 0;
    const WorldFeatures f = point_cylinder_features(c, x, 0.0, region);
    col.add(code(kVertexOnCylinder, k, region), false, f);
  }
  // Each rim against each hull face whose region holds its lowest point
  // (4 fixed rim points when the rim lies flat on the face).
  const auto holds = [&](int f, const Vec3& x) {
    const Vec3 xl = a.local(x);
    const ConvexHull::Face& face = a.h.faces()[static_cast<std::size_t>(f)];
    const double s = face.normal.dot(xl) - face.offset;
    if (!(s < out.margin()) || !over_face(a.h, f, xl, tol)) return false;
    for (const ConvexHull::Face& g : a.h.faces()) {  // f must be the least penetrated face
      if (g.normal.dot(xl) - g.offset > s + tol) return false;
    }
    return true;
  };
  for (int s = 0; s < 2; ++s) {
    const int end = s ? 1 : -1;
    for (int f = 0; f < a.h.num_faces(); ++f) {
      const Vec3 N = a.normal(f);
      if (is_flat(N, c.e, o)) {
        for (int k = 0; k < 4; ++k) {
          const Vec3 x = rim_point(B, c, end, k);
          if (holds(f, x)) {
            col.add(code(kRimOnFace, f, 5 * s + k), true,
                    features(FeaturePair::FacePoint, a.face_point(f), N, 0.0, x, Vec3::Zero(), 0.0));
          }
        }
      } else {
        const Vec3 g = N - N.dot(c.e) * c.e;
        if (holds(f, c.end(end) - c.r * g.normalized())) {
          col.add(code(kRimOnFace, f, 5 * s + 4), true,
                  features(FeaturePair::FaceRim, a.face_point(f), N, 0.0, c.end(end), c.e, c.r));
        }
      }
    }
  }
  // Hull edges against the side.
  const double sep = face_axes_separation(a, [&](const Vec3& N) {
    const double ne = N.dot(c.e);
    return N.dot(c.p) - c.l * std::abs(ne) - c.r * std::sqrt(std::max(0.0, 1.0 - ne * ne));
  });
  for (int e = 0; e < a.h.num_edges(); ++e) {
    WorldFeatures f;
    if (edge_axis(a, e, c.p, c.e, c.l, c.r, sep, o, f)) col.add(code(kEdgeAxis, e), true, f);
  }
  col.flush();
}

// ---- hull–hull --------------------------------------------------------------------------

void hull_hull(const PlacedShape& A, const PlacedShape& B, const DetectionOptions& o, ContactEmitter& out) {
  const HullView a(A), b(B);
  const double size = std::max(a.h.extent(), b.h.extent());
  const double sat_tol = kSatTol * (1.0 + size);
  const double margin = out.margin();
  std::vector<Vec3>& vb = scratch().vb;
  vb.resize(b.h.vertices().size());
  for (int k = 0; k < b.h.num_vertices(); ++k) vb[static_cast<std::size_t>(k)] = b.vertex(k);
  std::vector<Vec3>& na = scratch().na;
  std::vector<Vec3>& nb = scratch().nb;
  na.resize(a.h.faces().size());
  nb.resize(b.h.faces().size());
  for (int f = 0; f < a.h.num_faces(); ++f) na[static_cast<std::size_t>(f)] = a.normal(f);
  for (int f = 0; f < b.h.num_faces(); ++f) nb[static_cast<std::size_t>(f)] = b.normal(f);

  // Face axes: the separation of the other hull from each face plane (its
  // support point found by hill climbing from the previous one).
  double sep_a = -std::numeric_limits<double>::infinity(), sep_b = sep_a;
  int face_a = 0, face_b = 0;
  int hint = 0;
  for (int f = 0; f < a.h.num_faces(); ++f) {
    const Vec3& N = na[static_cast<std::size_t>(f)];
    hint = b.h.support(-(b.R.transpose() * N), hint);
    const double s = N.dot(vb[static_cast<std::size_t>(hint)] - a.p) - a.h.faces()[static_cast<std::size_t>(f)].offset;
    if (s > sep_a) sep_a = s, face_a = f;
    if (s > margin + sat_tol) return;
  }
  hint = 0;
  for (int f = 0; f < b.h.num_faces(); ++f) {
    const Vec3& N = nb[static_cast<std::size_t>(f)];
    hint = a.h.support(-(a.R.transpose() * N), hint);
    const double s = N.dot(a.vertex(hint) - b.p) - b.h.faces()[static_cast<std::size_t>(f)].offset;
    if (s > sep_b) sep_b = s, face_b = f;
    if (s > margin + sat_tol) return;
  }
  // Edge axes: pairs whose arcs on the Gauss map cross (a face of the
  // Minkowski difference).
  double sep_e = -std::numeric_limits<double>::infinity();
  int edge_a = -1, edge_b = -1;
  double edge_sign = 1.0;
  const Vec3 centre_a = a.p + a.R * a.h.centroid();
  for (int i = 0; i < a.h.num_edges(); ++i) {
    const ConvexHull::Edge& ea = a.edge(i);
    const Vec3& n0 = na[static_cast<std::size_t>(ea.face0)];
    const Vec3& n1 = na[static_cast<std::size_t>(ea.face1)];
    const Vec3 xa = a.vertex(ea.v0);
    const Vec3 da = a.vertex(ea.v1) - xa;
    const Vec3 n1xn0 = n1.cross(n0);
    for (int j = 0; j < b.h.num_edges(); ++j) {
      const ConvexHull::Edge& eb = b.edge(j);
      // The arcs of A's edge (n0, n1) and of B's edge (−m0, −m1) cross.
      const Vec3& m0 = nb[static_cast<std::size_t>(eb.face0)];
      const Vec3& m1 = nb[static_cast<std::size_t>(eb.face1)];
      const double cba = -m0.dot(n1xn0), dba = -m1.dot(n1xn0);
      if (!(cba * dba < 0.0)) continue;
      const Vec3 dxc = m1.cross(m0);
      const double adc = n0.dot(dxc), bdc = n1.dot(dxc);
      if (!(adc * bdc < 0.0 && cba * bdc > 0.0)) continue;
      const Vec3& xb = vb[static_cast<std::size_t>(eb.v0)];
      const Vec3 db = vb[static_cast<std::size_t>(eb.v1)] - xb;
      Vec3 L = da.cross(db);
      const double ln = L.norm();
      if (ln < o.parallel_tolerance * da.norm() * db.norm()) continue;
      L /= ln;
      const double sign = L.dot(xa - centre_a) >= 0.0 ? 1.0 : -1.0;
      const double s = sign * L.dot(xb - xa);
      if (s > sep_e) sep_e = s, edge_a = i, edge_b = j, edge_sign = sign;
      if (s > margin + sat_tol) return;
    }
  }
  const double sep_f = std::max(sep_a, sep_b);
  const double sep = std::max(sep_f, sep_e);
  Collector col(out);

  // Edge–edge contact (feature 1 on A, the normal from A to B).
  const auto edge_edge = [&](int i, int j, double sign) {
    const ConvexHull::Edge& ea = a.edge(i);
    const ConvexHull::Edge& eb = b.edge(j);
    const Vec3 xa = a.vertex(ea.v0), xb = vb[static_cast<std::size_t>(eb.v0)];
    Vec3 da = a.vertex(ea.v1) - xa, db = vb[static_cast<std::size_t>(eb.v1)] - xb;
    const double la = da.norm(), lb = db.norm();
    da /= la;
    db /= lb;
    const Vec3 m = da.cross(db);
    if (m.norm() < o.parallel_tolerance) return;
    double ta, tb;
    line_parameters(xa, da, xb, db, ta, tb);
    const double tol = std::max(a.tol(), b.tol());
    if (ta <= tol || ta >= la - tol || tb <= tol || tb >= lb - tol) return;
    const Vec3 n = sign * m.normalized();
    if (!in_edge_cone(n, a.normal(ea.face0), a.normal(ea.face1))) return;
    if (!in_edge_cone(-n, b.normal(eb.face0), b.normal(eb.face1))) return;
    if (n.dot(xb - xa) < sep - sat_tol) return;
    col.add(code(kEdgeEdge, i, j), true, features(FeaturePair::LineLine, xa, da, 0.0, xb, db, 0.0, sign));
  };

  if (sep_e > sep_f + sat_tol) {
    // The sign of L = da × db taken out of A: the LineLine sign of d_a × d_b.
    edge_edge(edge_a, edge_b, edge_sign);
    col.flush();
    return;
  }

  // Face contact: clip the incident face (the other hull's face most
  // anti-parallel to the reference normal, among the faces at its support
  // vertex) against the reference face's side planes.
  const bool ref_is_a = sep_a >= sep_b - sat_tol;
  const HullView& ref = ref_is_a ? a : b;
  const HullView& inc = ref_is_a ? b : a;
  const int fr = ref_is_a ? face_a : face_b;
  const Vec3 nr = ref.normal(fr);  // out of the reference hull, towards the incident one
  const int sv = inc.h.support(-(inc.R.transpose() * nr));
  int fi = inc.h.vertex_faces(sv).front();
  double most = std::numeric_limits<double>::infinity();
  for (int f : inc.h.vertex_faces(sv)) {
    const double c = inc.normal(f).dot(nr);
    if (c < most) most = c, fi = f;
  }
  const auto inc_vertex = [&](int k) { return ref_is_a ? vb[static_cast<std::size_t>(k)] : a.vertex(k); };

  std::vector<ClipPoint>& poly = scratch().polygon;
  std::vector<ClipPoint>& next = scratch().clipped;
  poly.clear();
  const int ni = inc.h.faces()[static_cast<std::size_t>(fi)].count;
  for (int k = 0; k < ni; ++k) {
    const int v = inc.h.face_vertex(fi, k);
    poly.push_back(ClipPoint{inc_vertex(v), 0, v, -1, false, inc.h.face_edge(fi, k)});
  }
  const int nref = ref.h.faces()[static_cast<std::size_t>(fr)].count;
  const double tol = std::max(a.tol(), b.tol());
  for (int k = 0; k < nref && !poly.empty(); ++k) {
    const Vec3 p0 = ref.vertex(ref.h.face_vertex(fr, k));
    const Vec3 p1 = ref.vertex(ref.h.face_vertex(fr, (k + 1) % nref));
    Vec3 m = (p1 - p0).cross(nr);
    m.normalize();
    const double off = m.dot(p0) + tol;
    next.clear();
    for (std::size_t t = 0; t < poly.size(); ++t) {
      const ClipPoint& P = poly[t];
      const ClipPoint& Q = poly[(t + 1) % poly.size()];
      const double dp = m.dot(P.x) - off, dq = m.dot(Q.x) - off;
      if (dp <= 0.0) next.push_back(P);
      if ((dp <= 0.0) != (dq <= 0.0)) {
        ClipPoint X;
        X.x = P.x + (dp / (dp - dq)) * (Q.x - P.x);
        if (!P.seg_on_side) {
          X.kind = 1;  // incident edge P.seg crossing reference side k
          X.i = P.seg;
          X.j = ref.h.face_edge(fr, k);
        } else if (P.seg == k - 1 || (P.seg == 0 && k == nref - 1)) {
          X.kind = 2;  // the reference vertex shared by sides P.seg and k
          X.i = ref.h.face_vertex(fr, P.seg == k - 1 ? k : 0);
          X.j = -1;
        } else {
          X.kind = -1;  // two sides that do not meet: cut later
          X.i = X.j = -1;
        }
        // Leaving the side plane's inside, the polygon runs along it.
        X.seg_on_side = dp <= 0.0;
        X.seg = dp <= 0.0 ? k : P.seg;
        if (dp > 0.0) X.seg_on_side = P.seg_on_side;
        next.push_back(X);
      }
    }
    std::swap(poly, next);
  }

  const Vec3 face_r = ref.face_point(fr);
  const Vec3 ni_normal = inc.normal(fi), face_i = inc.face_point(fi);
  for (const ClipPoint& P : poly) {
    switch (P.kind) {
      case 0:  // an incident vertex on the reference face
        col.add(code(ref_is_a ? kFaceOfA : kFaceOfB, fr, P.i), ref_is_a,
                features(FeaturePair::FacePoint, face_r, nr, 0.0, P.x, Vec3::Zero(), 0.0));
        break;
      case 2:  // a reference vertex on the incident face
        col.add(code(ref_is_a ? kFaceOfB : kFaceOfA, fi, P.i), !ref_is_a,
                features(FeaturePair::FacePoint, face_i, ni_normal, 0.0, ref.vertex(P.i), Vec3::Zero(), 0.0));
        break;
      case 1: {  // an incident edge crossing a reference edge
        const int ia = ref_is_a ? P.j : P.i, jb = ref_is_a ? P.i : P.j;
        const ConvexHull::Edge& ea = a.edge(ia);
        const ConvexHull::Edge& eb = b.edge(jb);
        const Vec3 m = (a.vertex(ea.v1) - a.vertex(ea.v0)).cross(vb[static_cast<std::size_t>(eb.v1)] - vb[static_cast<std::size_t>(eb.v0)]);
        const Vec3 n_ab = ref_is_a ? nr : Vec3(-nr);
        edge_edge(ia, jb, m.dot(n_ab) >= 0.0 ? 1.0 : -1.0);
        break;
      }
      default: break;
    }
  }
  col.flush();
}

}  // namespace plume::detail
