// Convex hulls of point sets with qhull (reentrant libqhull_r), turned into
// the face / edge / vertex structure the narrow phase walks.
#include "plume/geometry/convex_hull.hpp"

extern "C" {
#include <libqhull_r/qhull_ra.h>
}

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>

#include "plume/error.hpp"

namespace plume {

namespace {

// Newell's normal of a polygon (unnormalised: twice its area along the normal).
Vec3 polygon_normal(const std::vector<Vec3>& v, const std::vector<int>& loop) {
  Vec3 n = Vec3::Zero();
  for (std::size_t k = 0; k < loop.size(); ++k) {
    const Vec3& a = v[static_cast<std::size_t>(loop[k])];
    const Vec3& b = v[static_cast<std::size_t>(loop[(k + 1) % loop.size()])];
    n += a.cross(b);
  }
  return n;
}

// 2-D convex hull (Andrew's monotone chain), counter-clockwise, collinear
// points dropped. Indices into `p`.
std::vector<int> hull_2d(const std::vector<Eigen::Vector2d>& p) {
  std::vector<int> idx(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) idx[i] = static_cast<int>(i);
  std::sort(idx.begin(), idx.end(), [&](int a, int b) {
    return p[a].x() < p[b].x() || (p[a].x() == p[b].x() && p[a].y() < p[b].y());
  });
  const auto cross = [&](int o, int a, int b) {
    return (p[a] - p[o]).x() * (p[b] - p[o]).y() - (p[a] - p[o]).y() * (p[b] - p[o]).x();
  };
  std::vector<int> h(2 * idx.size());
  std::size_t k = 0;
  for (int i : idx) {  // lower chain
    while (k >= 2 && cross(h[k - 2], h[k - 1], i) <= 0.0) --k;
    h[k++] = i;
  }
  for (std::size_t t = idx.size() - 1, lo = k + 1; t-- > 0;) {  // upper chain
    const int i = idx[t];
    while (k >= lo && cross(h[k - 2], h[k - 1], i) <= 0.0) --k;
    h[k++] = i;
  }
  h.resize(k > 1 ? k - 1 : k);
  return h;
}

// Closes a FILE* opened by open_memstream and returns what was written.
struct MemoryStream {
  char* buffer = nullptr;
  std::size_t size = 0;
  FILE* file = nullptr;
  MemoryStream() : file(open_memstream(&buffer, &size)) {}
  ~MemoryStream() {
    if (file) std::fclose(file);
    std::free(buffer);
  }
  std::string text() {
    if (file) std::fflush(file);
    return buffer ? std::string(buffer, size) : std::string();
  }
};

}  // namespace

ConvexHull ConvexHull::from_points(const std::vector<Vec3>& points, const std::string& what) {
  const auto fail = [&](const std::string& why) { throw GeometryError(what + ": " + why); };
  if (points.size() < 3) fail("a convex hull needs at least 3 points not on one line (got " + std::to_string(points.size()) + ")");
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!points[i].allFinite()) fail("point " + std::to_string(i) + " has a non-finite coordinate");
  }
  // The spread of the points about their best-fit plane decides between a
  // solid, a flat and a degenerate set.
  Vec3 mean = Vec3::Zero();
  for (const Vec3& p : points) mean += p;
  mean /= static_cast<double>(points.size());
  Mat3 cov = Mat3::Zero();
  double extent = 0.0;
  for (const Vec3& p : points) {
    cov += (p - mean) * (p - mean).transpose();
    extent = std::max(extent, (p - mean).norm());
  }
  if (!(extent > 0.0)) fail("all " + std::to_string(points.size()) + " points coincide");
  const Eigen::SelfAdjointEigenSolver<Mat3> eig(cov);
  const Vec3 normal = eig.eigenvectors().col(0), u = eig.eigenvectors().col(2), w = eig.eigenvectors().col(1);
  double off_plane = 0.0, off_line = 0.0;
  for (const Vec3& p : points) {
    off_plane = std::max(off_plane, std::abs(normal.dot(p - mean)));
    off_line = std::max(off_line, std::abs(w.dot(p - mean)));
  }
  const double tol = 1e-9 * extent;
  if (off_line <= tol && off_plane <= tol) fail("all " + std::to_string(points.size()) + " points lie on one line");

  ConvexHull h;
  if (off_plane <= tol) {
    // Flat: the polygon in the plane, seen from both sides.
    std::vector<Eigen::Vector2d> p2(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) p2[i] = Eigen::Vector2d(u.dot(points[i] - mean), w.dot(points[i] - mean));
    const std::vector<int> poly = hull_2d(p2);
    if (poly.size() < 3) fail("all " + std::to_string(points.size()) + " points lie on one line");
    const double d = normal.dot(mean);
    for (int i : poly) {
      const Vec3& x = points[static_cast<std::size_t>(i)];
      h.vertices_.push_back(x - (normal.dot(x) - d) * normal);  // exactly on the plane
    }
    const int n = static_cast<int>(poly.size());
    // u × w = ±normal: orient the top face counter-clockwise about its normal.
    const Vec3 top = u.cross(w).dot(normal) > 0.0 ? Vec3(normal) : Vec3(-normal);
    h.faces_.push_back(Face{top, top.dot(mean), 0, n});
    for (int k = 0; k < n; ++k) h.loop_.push_back(k);
    h.faces_.push_back(Face{-top, -top.dot(mean), n, n});
    for (int k = n - 1; k >= 0; --k) h.loop_.push_back(k);
    h.flat_ = true;
    h.finish();
    return h;
  }

  // Solid: qhull, its coplanar facets merged (the default 'C-0').
  std::vector<coordT> coords(3 * points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (int c = 0; c < 3; ++c) coords[3 * i + static_cast<std::size_t>(c)] = points[i][c];
  }
  MemoryStream err;
  qhT qh_storage;
  qhT* qh = &qh_storage;
  qh_zero(qh, err.file);
  char options[] = "qhull";
  const int status = qh_new_qhull(qh, 3, static_cast<int>(points.size()), coords.data(), False, options, nullptr, err.file);
  std::string problem;
  if (status == 0) {
    std::map<int, int> vertex_of_point;  // qhull point id → hull vertex
    facetT* facet;
    FORALLfacets {
      setT* ordered = qh_facet3vertex(qh, facet);  // the facet's vertices around it
      std::vector<int> loop;
      vertexT *vertex, **vertexp;
      FOREACHvertex_(ordered) {
        const int id = qh_pointid(qh, vertex->point);
        auto [it, fresh] = vertex_of_point.emplace(id, static_cast<int>(h.vertices_.size()));
        if (fresh) h.vertices_.push_back(points[static_cast<std::size_t>(id)]);
        loop.push_back(it->second);
      }
      qh_settempfree(qh, &ordered);
      Vec3 n = polygon_normal(h.vertices_, loop);
      const Vec3 qn(facet->normal[0], facet->normal[1], facet->normal[2]);  // outward
      if (n.dot(qn) < 0.0) {
        std::reverse(loop.begin(), loop.end());
        n = -n;
      }
      if (!(n.norm() > 0.0)) {
        problem = "qhull returned a facet of zero area";
        break;
      }
      n.normalize();
      double d = -std::numeric_limits<double>::infinity();
      for (int k : loop) d = std::max(d, n.dot(h.vertices_[static_cast<std::size_t>(k)]));
      h.faces_.push_back(Face{n, d, static_cast<int>(h.loop_.size()), static_cast<int>(loop.size())});
      h.loop_.insert(h.loop_.end(), loop.begin(), loop.end());
    }
  } else {
    problem = "qhull failed (status " + std::to_string(status) + ")";
  }
  qh_freeqhull(qh, !qh_ALL);
  int curlong = 0, totlong = 0;
  qh_memfreeshort(qh, &curlong, &totlong);
  if (!problem.empty()) {
    std::string msg = err.text();
    while (!msg.empty() && std::isspace(static_cast<unsigned char>(msg.back()))) msg.pop_back();
    const std::size_t nl = msg.find('\n');
    fail(problem + (msg.empty() ? "" : ": " + msg.substr(0, nl)));
  }
  h.finish();
  return h;
}

ConvexHull ConvexHull::box(const Vec3& size) {
  ConvexHull h;
  const Vec3 half = 0.5 * size;
  for (int k = 0; k < 8; ++k) {
    h.vertices_.emplace_back((k & 1 ? 1 : -1) * half.x(), (k & 2 ? 1 : -1) * half.y(), (k & 4 ? 1 : -1) * half.z());
  }
  for (int f = 0; f < 6; ++f) {
    const int i = f / 2, j = (i + 1) % 3, k = (i + 2) % 3;
    const int side = f & 1 ? 1 << i : 0;
    // (−,−), (+,−), (+,+), (−,+) in axes (j, k) turn counter-clockwise about +e_i.
    int loop[4] = {side, side | (1 << j), side | (1 << j) | (1 << k), side | (1 << k)};
    if (!(f & 1)) std::swap(loop[1], loop[3]);
    Vec3 n = Vec3::Zero();
    n[i] = f & 1 ? 1.0 : -1.0;
    h.faces_.push_back(Face{n, half[i], static_cast<int>(h.loop_.size()), 4});
    h.loop_.insert(h.loop_.end(), loop, loop + 4);
  }
  h.finish();
  return h;
}

void ConvexHull::finish() {
  // Edges from the face loops: each side a → b of a face, met once more as
  // b → a on the neighbouring face.
  std::map<std::pair<int, int>, int> edge_of;
  loop_edge_.assign(loop_.size(), -1);
  for (int f = 0; f < num_faces(); ++f) {
    const Face& face = faces_[static_cast<std::size_t>(f)];
    for (int k = 0; k < face.count; ++k) {
      const int a = face_vertex(f, k), b = face_vertex(f, (k + 1) % face.count);
      const auto key = std::make_pair(std::min(a, b), std::max(a, b));
      auto it = edge_of.find(key);
      if (it == edge_of.end()) {
        it = edge_of.emplace(key, num_edges()).first;
        edges_.push_back(Edge{a, b, f, -1});
      } else {
        Edge& e = edges_[static_cast<std::size_t>(it->second)];
        if (e.face1 != -1 || e.v0 != b) {
          throw GeometryError("convex hull: edge " + std::to_string(a) + "-" + std::to_string(b) +
                              " is not shared by exactly two consistently oriented faces");
        }
        e.face1 = f;
      }
      loop_edge_[static_cast<std::size_t>(face.first + k)] = it->second;
    }
  }
  for (const Edge& e : edges_) {
    if (e.face1 == -1) throw GeometryError("convex hull: the surface is not closed");
  }
  vertex_faces_.assign(vertices_.size(), {});
  for (int f = 0; f < num_faces(); ++f) {
    for (int k = 0; k < faces_[static_cast<std::size_t>(f)].count; ++k) {
      vertex_faces_[static_cast<std::size_t>(face_vertex(f, k))].push_back(f);
    }
  }
  neighbours_.assign(vertices_.size(), {});
  for (const Edge& e : edges_) {
    neighbours_[static_cast<std::size_t>(e.v0)].push_back(e.v1);
    neighbours_[static_cast<std::size_t>(e.v1)].push_back(e.v0);
  }

  // Support subsets: greedily keep the vertex that adds the largest triangle
  // to the polygon kept so far, starting from the two farthest apart.
  face_support_.assign(faces_.size(), {});
  for (int f = 0; f < num_faces(); ++f) {
    const Face& face = faces_[static_cast<std::size_t>(f)];
    std::vector<int>& keep = face_support_[static_cast<std::size_t>(f)];
    if (face.count <= 8) {
      for (int k = 0; k < face.count; ++k) keep.push_back(k);
    } else {
      const auto P = [&](int k) -> const Vec3& { return vertices_[static_cast<std::size_t>(face_vertex(f, k))]; };
      int a = 0, b = 1;
      double far = -1.0;
      for (int i = 0; i < face.count; ++i) {
        for (int j = i + 1; j < face.count; ++j) {
          const double d = (P(i) - P(j)).squaredNorm();
          if (d > far) far = d, a = i, b = j;
        }
      }
      keep = {a, b};
      while (keep.size() < 8) {
        double best = 0.0;
        int best_k = -1;
        std::size_t best_pos = 0;
        for (std::size_t s = 0; s < keep.size(); ++s) {  // between keep[s] and the next kept vertex
          const int lo = keep[s], hi = keep[(s + 1) % keep.size()];
          for (int k = (lo + 1) % face.count; k != hi; k = (k + 1) % face.count) {
            const double area = (P(k) - P(lo)).cross(P(hi) - P(lo)).norm();
            if (area > best) best = area, best_k = k, best_pos = s + 1;
          }
        }
        if (best_k < 0) break;
        keep.insert(keep.begin() + static_cast<std::ptrdiff_t>(best_pos), best_k);
      }
      std::sort(keep.begin(), keep.end());
    }
    for (int& k : keep) k = face_vertex(f, k);
  }

  // Volume and centroid from the tetrahedra (origin, fan triangle); a flat
  // hull: area and centroid of its polygon.
  volume_ = 0.0;
  Vec3 moment = Vec3::Zero();
  const Face& f0 = faces_.front();
  if (flat_) {
    double area = 0.0;
    const Vec3& o = vertices_[static_cast<std::size_t>(face_vertex(0, 0))];
    for (int k = 1; k + 1 < f0.count; ++k) {
      const Vec3& b = vertices_[static_cast<std::size_t>(face_vertex(0, k))];
      const Vec3& c = vertices_[static_cast<std::size_t>(face_vertex(0, k + 1))];
      const double t = 0.5 * (b - o).cross(c - o).dot(f0.normal);
      area += t;
      moment += t * (o + b + c) / 3.0;
    }
    centroid_ = moment / area;
  } else {
    for (int f = 0; f < num_faces(); ++f) {
      const Face& face = faces_[static_cast<std::size_t>(f)];
      const Vec3& o = vertices_[static_cast<std::size_t>(face_vertex(f, 0))];
      for (int k = 1; k + 1 < face.count; ++k) {
        const Vec3& b = vertices_[static_cast<std::size_t>(face_vertex(f, k))];
        const Vec3& c = vertices_[static_cast<std::size_t>(face_vertex(f, k + 1))];
        const double v6 = o.dot(b.cross(c));  // 6 × signed volume of (0, o, b, c)
        volume_ += v6;
        moment += v6 * (o + b + c);
      }
    }
    centroid_ = moment / (4.0 * volume_);
    volume_ /= 6.0;
  }
  radius_ = 0.0;
  Vec3 lo = vertices_.front(), hi = vertices_.front();
  for (const Vec3& v : vertices_) {
    radius_ = std::max(radius_, v.norm());
    lo = lo.cwiseMin(v);
    hi = hi.cwiseMax(v);
  }
  extent_ = (hi - lo).norm();
}

int ConvexHull::support(const Vec3& d, int start) const {
  int best = start;
  double value = d.dot(vertices_[static_cast<std::size_t>(best)]);
  for (bool moved = true; moved;) {
    moved = false;
    for (int k : neighbours_[static_cast<std::size_t>(best)]) {
      const double x = d.dot(vertices_[static_cast<std::size_t>(k)]);
      if (x > value) {
        value = x;
        best = k;
        moved = true;
      }
    }
  }
  return best;
}

}  // namespace plume
