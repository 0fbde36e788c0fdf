#pragma once
/// @file
/// Loading a Model from URDF (parsed by urdfdom, validated by plume).
///
/// What the loader does beyond parsing:
/// - The root link is attached to the world by the joint chosen in
///   LoadOptions: welded (fixed), a free-flyer, or a planar joint moving in
///   the world's vertical x–z plane (joint x = world x, joint y = world z,
///   θ about −world y), so that a planar model falls under gravity along −z.
/// - Fixed joints are merged: the child's inertia is added to its parent body,
///   the child link becomes a Frame on that body, and its collision shapes move
///   with it. Every link is a Frame named after it.
/// - A joint origin whose rotation (its rpy composed with any fixed joints
///   merged above it) lies within 1e-10 rad of a multiple of 90° about the
///   axes is snapped to that exact rotation (published URDFs write
///   1.57079632679 for π/2), so that the algorithms take their quarter-turn
///   paths; see ModelBuilder::add_body. An angle 1e-9 rad or more off is kept.
/// - URDF `floating` joints become free-flyers and `planar` joints move in the
///   plane normal to their axis.
/// - Validation urdfdom does not do: negative mass, non-finite numbers, an
///   inertia that is not positive semi-definite, a zero joint axis, a moving
///   subtree without mass (errors listing every culprit). Principal moments
///   that violate the triangle inequality and placeholder masses are checked
///   on the merged bodies and follow LoadOptions::inertia. Non-unit axes are
///   normalised (with a warning).
/// - Mesh URIs (`package://NAME/…`, `file://…`, paths relative to the URDF)
///   are resolved by resolve_uri.
/// - Mimic joints are loaded as independent joints and listed in
///   Model::warnings(), unless LoadOptions::reject_mimic is set.
/// - The `<plume>` extension (ignored by other URDF readers) sets per-link
///   contact parameters:
///   ```xml
///   <robot name="…">
///     …
///     <plume>
///       <contact link="LF_foot" mu="0.9" restitution="0.1"
///                stiffness="2e5" damping="2e3"/>
///     </plume>
///   </robot>
///   ```
///   Each `<contact>` applies to every collision shape of `link` (after
///   merging, shapes keep the name of the link they were declared on); all
///   attributes but `link` are optional.
///
/// Every failure throws plume::UrdfError whose message starts with the file
/// name (or "<string>") and names the link or joint at fault.

#include <map>
#include <string>
#include <vector>

#include "plume/model.hpp"
#include "plume/model_builder.hpp"

namespace plume::urdf {

/// How the URDF's root link is attached to the world.
enum class RootJoint { Fixed, FreeFlyer, Planar };

/// Parses "fixed", "free" (or "free-flyer", "floating") and "planar".
/// @throws plume::Error on anything else.
RootJoint parse_root_joint(const std::string& text);
const char* to_string(RootJoint root);

/// What the loader does with collision meshes (`<collision><geometry><mesh>`).
enum class CollisionMeshes {
  /// Read each mesh (STL, OBJ, COLLADA) and compute its convex hull; a mesh
  /// that cannot be found, read or hulled is an error naming the link, the
  /// file and, for package:// URIs, every place searched.
  Load,
  /// As Load, but such a mesh is kept unusable for contact (Mesh::problem
  /// says why) and listed in Model::warnings(); a World refuses it later.
  IfFound,
  /// Do not read meshes (dynamics only: H, C, Jacobians never need them).
  Skip
};

/// A collision shape given in place of a link's URDF `<collision>` elements
/// (LoadOptions::collision_overrides; world files: `<collision link>`).
struct LinkCollision {
  Geometry geometry;                         ///< Sphere, Box, Capsule, Cylinder (or Mesh with a hull)
  Transform origin = Transform::Identity();  ///< as a URDF collision origin: link → shape coordinates
  ContactMaterial material;
};

struct LoadOptions {
  RootJoint root = RootJoint::Fixed;
  /// Collision meshes: read when found (the default), required, or skipped.
  CollisionMeshes collision_meshes = CollisionMeshes::IfFound;
  /// Unphysical but usable inertias (triangle inequality, placeholder
  /// masses): refuse, load with a warning (the default), or repair.
  InertiaPolicy inertia = InertiaPolicy::Warn;
  /// Directories searched first for `package://NAME/…` URIs: each is a
  /// package (its package.xml names NAME, or it is called NAME) or holds one
  /// at any depth, as a ROS_PACKAGE_PATH entry does.
  std::vector<std::string> package_dirs;
  /// Also search ROS_PACKAGE_PATH, AMENT_PREFIX_PATH (PREFIX/share/NAME) and
  /// the URDF's ancestor directories after package_dirs.
  bool search_environment = true;
  /// The robot's SRDF, read after the URDF: its `<group_state>`s become
  /// Model::named_configurations() and its `<disable_collisions>` pairs
  /// Model::disabled_collisions(). Joints or links it names that the model
  /// does not have are listed in Model::warnings(). Empty: none.
  std::string srdf;
  /// Collision shapes that replace a link's URDF `<collision>` elements (and
  /// their meshes, which are then never read): link name → its shapes; an
  /// empty list takes the link out of contact. A link the URDF does not have
  /// is an error naming the close ones.
  std::map<std::string, std::vector<LinkCollision>> collision_overrides;
  /// Reject mimic joints instead of loading them as independent joints.
  bool reject_mimic = false;
  /// Gravity stored in the model.
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);
};

/// Where a mesh reference of a URDF points to on this machine, searched in this
/// order:
/// - `package://NAME/REST`: each of `package_dirs`, then (when
///   `search_environment`) each ROS_PACKAGE_PATH entry — a directory that is
///   package NAME (its package.xml says `<name>NAME</name>`, or it has no
///   package.xml and is called NAME) or holds it below (depth ≤ 6) — then
///   PREFIX/share/NAME for each AMENT_PREFIX_PATH prefix, then the URDF's own
///   directory and its ancestors (one of them is NAME, or has NAME beside it);
/// - `file:///abs/path`, an absolute path;
/// - a relative path: relative to the URDF's directory.
/// `urdf_path` may be empty (a URDF from a string): relative paths are then
/// relative to the working directory.
/// @returns the normalised absolute path of an existing file.
/// @throws GeometryError naming the URI, what was not found and every place
/// searched, with the option that fixes it.
std::string resolve_uri(const std::string& uri, const std::string& urdf_path,
                        const std::vector<std::string>& package_dirs, bool search_environment = true);

/// Loads a URDF file. @throws UrdfError.
Model load(const std::string& path, const LoadOptions& options = {});

/// Loads a URDF from a string; `source_name` is used in error messages.
/// @throws UrdfError.
Model load_string(const std::string& xml, const LoadOptions& options = {},
                 const std::string& source_name = "<string>");

}  // namespace plume::urdf
