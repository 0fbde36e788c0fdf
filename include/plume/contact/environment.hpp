#pragma once
/// @file
/// The static environment: shapes fixed in the world (ground planes, boxes
/// for stairs and obstacles, spheres and capsules as posts), and the checks
/// every contact shape goes through.
///
/// An environment shape is placed in the world by `placement = X_shape_world`
/// (world coordinates → shape coordinates), exactly as a robot's collision
/// shape is placed on its body by `X_shape_body`. For contact purposes the
/// environment is body 0, the world, like the links welded to it.

#include <string>

#include "plume/contact/shapes.hpp"
#include "plume/error.hpp"

namespace plume {

/// A shape fixed in the world.
struct EnvironmentShape {
  std::string name;          ///< used in messages, e.g. "ground", "step_2"
  Transform placement;       ///< X_shape_world: world coordinates → shape coordinates
  Geometry geometry;         ///< Plane = the half-space z ≤ 0 of the shape frame
  ContactMaterial material;  ///< unset values fall back to the world defaults
};

/// The half-space below a plane through `point` with outward unit normal
/// `normal` (world coordinates); by default the ground z ≤ 0.
/// @throws GeometryError if the normal is zero or a value is not finite.
EnvironmentShape ground_plane(const std::string& name = "ground", const Vec3& normal = Vec3::UnitZ(),
                              const Vec3& point = Vec3::Zero(), const ContactMaterial& material = {});

/// A box with full side lengths `size`, centred at `center`, its edges along
/// the columns of the rotation `R` (world coordinates).
/// @throws GeometryError on a negative or non-finite size or a non-rotation R.
EnvironmentShape environment_box(const std::string& name, const Vec3& size, const Vec3& center,
                                 const Mat3& R = Mat3::Identity(), const ContactMaterial& material = {});

/// Checks the dimensions of a contact shape: radii, lengths and box sizes
/// finite and ≥ 0, a cylinder radius > 0. `what` names the shape in the
/// message, e.g. "environment shape 'step_1'". Meshes pass (they are skipped
/// by detection, not rejected).
/// @throws GeometryError naming `what` and the offending dimension.
void check_geometry(const Geometry& geometry, const std::string& what);

/// Checks that `X` is finite with an orthonormal, right-handed rotation.
/// @throws GeometryError naming `what`.
void check_placement(const Transform& X, const std::string& what);

}  // namespace plume
