#pragma once
/// @file
/// ConvexHull: the convex polytope that contact uses for a collision mesh.
///
/// Built once, when a model is loaded, from the mesh's vertices with qhull
/// (its coplanar facets merged into polygons), and immutable afterwards. It
/// stores what the narrow phase needs to find contacts between features:
/// - vertices (the hull's corners only; interior mesh points are dropped);
/// - faces: an outward unit normal n and offset d (n·x = d on the face), and
///   the face's vertices in counter-clockwise order seen from outside;
/// - edges: two vertices and the two faces they separate;
/// - vertex neighbours, for hill-climbing support queries.
///
/// A flat point set (every point on one plane: a mesh of a thin plate) gives
/// a flat hull: one polygon seen from both sides, two faces with opposite
/// normals sharing its vertices, volume 0. Collinear or coincident points
/// have no hull and are refused.
///
/// Feature indices (vertex k, face f, edge e) are fixed for the life of the
/// hull: contact identities are built from them.

#include <string>
#include <vector>

#include "plume/spatial.hpp"

namespace plume {

class ConvexHull {
 public:
  struct Face {
    Vec3 normal;      ///< outward unit normal
    double offset;    ///< n·x = offset for every point x of the face
    int first = 0;    ///< its vertices are loop()[first … first + count)
    int count = 0;
  };
  struct Edge {
    int v0 = 0, v1 = 0;        ///< endpoints
    int face0 = 0, face1 = 0;  ///< face0 runs v0 → v1 counter-clockwise, face1 v1 → v0
  };

  /// The convex hull of `points` (at least 4 not on one line; a flat set
  /// gives a flat hull).
  /// @throws GeometryError naming `what` on non-finite, too few, collinear
  /// or coincident points, or when qhull fails (its message included).
  static ConvexHull from_points(const std::vector<Vec3>& points, const std::string& what = "point set");
  /// The box of full side lengths `size` centred at the origin (vertex k
  /// has the sign of coordinate i positive when bit i of k is set).
  static ConvexHull box(const Vec3& size);

  const std::vector<Vec3>& vertices() const { return vertices_; }
  const std::vector<Face>& faces() const { return faces_; }
  const std::vector<Edge>& edges() const { return edges_; }
  int num_vertices() const { return static_cast<int>(vertices_.size()); }
  int num_faces() const { return static_cast<int>(faces_.size()); }
  int num_edges() const { return static_cast<int>(edges_.size()); }

  /// Vertex k of face f's loop (k in [0, faces()[f].count)).
  int face_vertex(int f, int k) const { return loop_[static_cast<std::size_t>(faces_[f].first + k)]; }
  /// The edge along side k of face f (from face_vertex(f, k) to the next).
  int face_edge(int f, int k) const { return loop_edge_[static_cast<std::size_t>(faces_[f].first + k)]; }
  /// At most 8 vertices of face f that keep most of its area (all of them
  /// when it has 8 or fewer), in loop order: the points a face resting on
  /// another surface is supported by.
  const std::vector<int>& face_support(int f) const { return face_support_[static_cast<std::size_t>(f)]; }
  /// The vertices joined to vertex k by an edge.
  const std::vector<int>& neighbours(int k) const { return neighbours_[static_cast<std::size_t>(k)]; }
  /// The faces that vertex k belongs to.
  const std::vector<int>& vertex_faces(int k) const { return vertex_faces_[static_cast<std::size_t>(k)]; }

  /// The vertex farthest along direction d (hill climbing from `start`).
  int support(const Vec3& d, int start = 0) const;

  /// Volume enclosed (0 for a flat hull) [m³].
  double volume() const { return volume_; }
  /// Centroid of the enclosed volume (of the polygon for a flat hull).
  const Vec3& centroid() const { return centroid_; }
  /// The largest distance of a vertex from the origin of the hull's frame.
  double radius() const { return radius_; }
  /// Diagonal of the vertices' axis-aligned bounding box (in the hull's
  /// frame): the hull's size, for tolerances. At least the largest distance
  /// between two vertices and at most √3 times it.
  double extent() const { return extent_; }
  bool flat() const { return flat_; }

 private:
  void finish();  // edges, neighbours, supports, volume, centroid, radius

  std::vector<Vec3> vertices_;
  std::vector<Face> faces_;
  std::vector<int> loop_;       // face vertex loops, concatenated
  std::vector<int> loop_edge_;  // the edge of each loop side
  std::vector<Edge> edges_;
  std::vector<std::vector<int>> neighbours_;
  std::vector<std::vector<int>> vertex_faces_;
  std::vector<std::vector<int>> face_support_;
  double volume_ = 0.0;
  Vec3 centroid_ = Vec3::Zero();
  double radius_ = 0.0;
  double extent_ = 0.0;
  bool flat_ = false;
};

}  // namespace plume
