#pragma once
/// @file
/// Collision geometry attached to bodies (from URDF `<collision>`) or to the
/// static environment.
///
/// Every shape lives in its own frame, placed on a body by a Transform
/// `X_shape_body`. Conventions of each shape's frame:
/// - Sphere: centred at the origin.
/// - Box: centred at the origin, edges along the axes, full side lengths `size`.
/// - Cylinder, Capsule: centred at the origin, axis along z, `length` is the
///   length of the cylindrical part (a capsule adds hemispheres of `radius`).
/// - Plane: the half-space z ≤ 0 of its frame; the outward normal is +z.
/// - Mesh: a triangle mesh file (STL, OBJ, COLLADA) in the shape's frame,
///   scaled by `scale`; contact uses its convex hull (geometry/convex_hull.hpp),
///   computed once when the model is loaded.

#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "plume/spatial.hpp"

namespace plume {

struct Sphere {
  double radius = 0.0;
};
struct Box {
  Vec3 size = Vec3::Zero();  ///< full side lengths along x, y, z
  Vec3 half_extents() const { return 0.5 * size; }
};
struct Cylinder {
  double radius = 0.0;
  double length = 0.0;
};
struct Capsule {
  double radius = 0.0;
  double length = 0.0;
};
struct Plane {};

class ConvexHull;  // plume/geometry/convex_hull.hpp

struct Mesh {
  std::string filename;           ///< the file name or URI as written (e.g. "package://robot/meshes/foot.stl")
  Vec3 scale = Vec3::Ones();      ///< per-axis scale applied to the file's vertices
  std::string resolved;           ///< the file it resolved to ("" when it was not found)
  /// The convex hull of the scaled vertices, in the shape's frame (null when
  /// the mesh was not loaded). Immutable and shared between copies of a Model.
  std::shared_ptr<const ConvexHull> hull;
  /// Why the mesh cannot be used for contact ("" when `hull` is set): not
  /// found (with every place searched), unreadable, empty, degenerate, or not
  /// loaded because collision meshes were not asked for.
  std::string problem;
};

using Geometry = std::variant<Sphere, Box, Cylinder, Capsule, Plane, Mesh>;

/// "sphere", "box", "cylinder", "capsule", "plane" or "mesh".
const char* geometry_name(const Geometry& g);
/// True for every shape plume computes contacts with: every primitive, and
/// meshes whose convex hull was computed.
bool usable_for_contact(const Geometry& g);

/// Per-shape contact parameters; unset values fall back to the pair or world
/// defaults. Set from the URDF `<plume>` extension or a world file.
struct ContactMaterial {
  std::optional<double> mu;           ///< Coulomb friction coefficient
  std::optional<double> restitution;  ///< Newton restitution coefficient e ∈ [0, 1]
  std::optional<double> stiffness;    ///< compliant normal stiffness K [N/m]
  std::optional<double> damping;      ///< compliant normal damping D [N·s/m]
};

/// A collision shape attached to a body.
struct CollisionShape {
  std::string name;         ///< e.g. "LF_foot/collision_0"
  std::string link;         ///< URDF link the shape came from
  int body = 0;             ///< body it moves with (0: the static world)
  Transform placement;      ///< X_shape_body: body coordinates → shape coordinates
  Geometry geometry;
  ContactMaterial material;
};

}  // namespace plume
