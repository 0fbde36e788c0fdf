#pragma once
/// @file
/// Contact detection: candidate shape pairs, point contacts with gaps φ,
/// normals and witness points (Featherstone §11.3–11.5), and joint limits as
/// unilateral constraints of the same form (§11.4).
///
/// A contact is a pair of bodies (a, b) — predecessor and successor — with a
/// unit normal n from a to b and a gap φ = n·(p_b − p_a), the signed distance
/// between the witness points (negative when penetrating). The environment
/// and bodies welded to the world (body 0) are always a; between two moving
/// bodies, a is the one with the lower body index.
///
/// Every contact comes from two *features*, each fixed on one body (a face, a
/// sphere centre or vertex, a line, a circle), stored in that body's
/// coordinates in Contact::local. The same description gives the gap at the
/// detection instant, refresh_contact() at later placements, and the rates
/// ṅ, ṗ needed by Ṫᵀq̇ (contact_jacobian.hpp).
///
/// Supported shape pairs and the contacts they produce (r: radius):
/// | pair               | contacts                                                                 |
/// |--------------------|--------------------------------------------------------------------------|
/// | plane–sphere       | 1: the centre against the plane                                          |
/// | plane–box          | each of the 8 corners with φ < margin (edges and faces resting on the      |
/// |                    | plane become 2 or 4 corner contacts, fig. 11.7 a/c)                        |
/// | plane–capsule      | the two end spheres                                                      |
/// | plane–cylinder     | per end rim: its lowest point; when the axis is within                   |
/// |                    | `cylinder_flat_angle` of the plane normal, 4 fixed rim points instead      |
/// |                    | (at 0°, 90°, 180°, 270° of the cylinder frame) for a stable support        |
/// | sphere–sphere      | 1: along the line of centres                                             |
/// | sphere–box         | 1: closest face, edge or vertex; a centre inside → least-penetrated face |
/// | sphere–capsule     | 1: centre against the axis segment                                       |
/// | sphere–cylinder    | 1: side, cap or rim circle; a centre inside → least-penetrated side/cap  |
/// | capsule–capsule    | 1: closest points of the segments; nearly parallel axes                  |
/// |                    | (sin angle < `parallel_tolerance`): each end against the other segment   |
/// |                    | (up to 2 for overlapping segments, the ends of the overlap)              |
/// | capsule–box        | both end spheres (as sphere–box) + the axis against each box edge it     |
/// |                    | passes over (edge–segment)                                               |
/// | box–box            | separating axes (3 + 3 face normals, 9 edge pairs): an edge axis gives   |
/// |                    | one edge–edge contact; a face axis the vertices of the contact polygon   |
/// |                    | (≤ 8: vertices of each face over the other, crossings of their edges)   |
/// | cylinder–box       | box vertices against the cylinder (as sphere–cylinder), each rim against |
/// |                    | each box face (as plane–cylinder), box edges against the side            |
/// Point contacts are spheres of radius 0.
///
/// Not supported (reported by ContactDetector::warnings(), never detected):
/// meshes (any pair), plane–plane, cylinder–cylinder, cylinder–capsule. Not
/// covered inside supported pairs: box edges against cylinder rims, vertex–
/// edge and vertex–vertex contacts of two boxes (the neighbouring vertex–face
/// and edge–edge contacts take over as soon as the features overlap),
/// capsule axes that lie along a box edge (the end spheres act instead). Deep
/// penetrations (deeper than the shapes' half sizes) give contacts but not
/// necessarily the least-penetration ones.
///
/// Rules that keep resting contacts stable (documented in narrowphase.cpp):
/// box–box contact ids name the features (vertex k of b on face f of a,
/// vertex of a on face of b, edge i of a across edge j of b) whichever face
/// is the reference; a vertex counts over a face up to 1e-6·(box size)
/// outside it, a vertex of a that close to a kept vertex of b is the same
/// point, and an edge crossing needs both closest points that far inside
/// their edges, so aligned boxes (edges in line, corners on edges) keep
/// their contacts' names under small motions. For box–sphere, box–capsule
/// and box–cylinder a box vertex counts on a face when it is within
/// 1e-7·(box size) of the face's prism; an edge–edge or edge–axis
/// contact needs both closest points strictly inside their segments, a normal
/// within ~0.06° of each box edge's Voronoi cone, and a gap no smaller than
/// the boxes' face-axis separation (which rejects edges on the far side of a
/// box). Pairs whose bounding spheres are further apart than the margin are
/// skipped before the narrow phase.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plume/contact/environment.hpp"
#include "plume/data.hpp"

namespace plume {

/// Options of a ContactDetector.
struct DetectionOptions {
  /// Contacts with gap φ < margin are reported [m]. The default, 1e-9 m
  /// (SimulationOptions::contact_tolerance), reports exactly touching
  /// contacts (φ = 0) as well as penetrating ones; a larger margin reports
  /// approaching ones too; 0 reports penetrating contacts only.
  double margin = 1e-9;
  /// Pairs of bodies within one subtree of the world (one robot) are tested
  /// only when true, and never a parent with its child.
  bool self_collision = false;
  /// Plane–cylinder and box–cylinder: an end face within this angle [rad] of
  /// parallel to the plane or box face is treated as flat and supported by 4
  /// rim points; otherwise the single lowest rim point is used.
  double cylinder_flat_angle = 1e-2;
  /// Capsule–capsule: axes with sin(angle) below this are treated as parallel.
  /// Also the smallest sin(angle) of an edge–edge (box) or edge–axis contact.
  double parallel_tolerance = 1e-3;
};

/// What a contact constrains.
enum class ContactKind : std::uint8_t {
  Shapes,     ///< two shapes (or a shape and the environment)
  JointLimit  ///< a joint against one of its position limits (RBDA §11.4)
};

/// The pair of features a contact comes from; fixes how its normal and
/// witness points move with the two bodies. Feature 1 (x1, d1, r1) and
/// feature 2 (x2, d2, r2); the geometric normal points from feature 1 to 2.
enum class FeaturePair : std::uint8_t {
  FacePoint,   ///< face (point x1, outward unit normal d1) – point x2 thickened by r2;
               ///< n = d1 (ṅ = ω₁ × n)
  PointPoint,  ///< point x1 with r1 – point x2 with r2; n = (x2 − x1)/|x2 − x1|
  LinePoint,   ///< line (x1, unit d1) with r1 – point x2 with r2; n from the foot of
               ///< the perpendicular to x2
  LineLine,    ///< lines (x1, d1) with r1 and (x2, d2) with r2; n = sign·(d1 × d2)/|d1 × d2|
  FaceRim,     ///< face (x1, d1) – circle (centre x2, axis d2, radius r2): the circle
               ///< point deepest along −d1
  RimPoint,    ///< circle (centre x1, axis d1, radius r1) – point x2 with r2: the circle
               ///< point closest to x2
  None         ///< joint limits
};

/// The two features of a contact, each in the coordinates of the body that
/// carries it (body 0: world coordinates).
struct ContactLocal {
  FeaturePair type = FeaturePair::None;
  /// Feature 1 is on body b: the normal from a to b is minus the normal from
  /// feature 1 to feature 2, point_a is feature 2's witness.
  bool first_on_b = false;
  double sign = 1.0;  ///< LineLine orientation
  double r1 = 0.0, r2 = 0.0;
  Vec3 x1 = Vec3::Zero(), d1 = Vec3::Zero(), x2 = Vec3::Zero(), d2 = Vec3::Zero();
};

/// One point contact (Featherstone §11.3): a unilateral constraint φ ≥ 0.
struct Contact {
  ContactKind kind = ContactKind::Shapes;
  /// Stable across calls and small motions: the same shape pair and the same
  /// feature give the same id (joint limits: the same dof and side).
  std::uint64_t id = 0;
  int pair = -1;     ///< index in ContactDetector::pairs() (−1 for joint limits)
  int feature = 0;   ///< which feature combination of the pair (e.g. box corner 0…7)
  int body_a = 0;    ///< predecessor (0 = world)
  int body_b = 0;    ///< successor; the normal points from a to b
  int shape_a = -1;  ///< index in ContactDetector::shapes() (−1 for joint limits)
  int shape_b = -1;
  int dof = -1;      ///< joint limits: the velocity index of the joint (−1 otherwise)
  double gap = 0.0;  ///< φ, negative when penetrating [m or rad]
  Vec3 point_a = Vec3::Zero();  ///< witness point on a, world coordinates
  Vec3 point_b = Vec3::Zero();  ///< witness point on b, world coordinates
  /// Unit normal from a to b, world coordinates. Joint limits: (+1, 0, 0) at
  /// the lower limit (φ = q − lower), (−1, 0, 0) at the upper (φ = upper − q).
  Vec3 normal = Vec3::UnitZ();
  ContactLocal local;  ///< the features, for refresh_contact() and the rates
};

/// A contact shape as the detector sees it: robot shapes first (in the order
/// of Model::collisions()), then the environment shapes.
struct DetectorShape {
  std::string name;
  int body = 0;           ///< 0 for the environment and shapes welded to the world
  Transform placement;    ///< X_shape_body (X_shape_world for body 0)
  Geometry geometry;
  ContactMaterial material;
  bool environment = false;
  /// Radius of a sphere about bounding_center that contains the shape
  /// (infinite for planes): detect() skips pairs whose spheres are further
  /// apart than the margin.
  double bounding_radius = 0.0;
  /// The shape as a convex polytope where the narrow phase needs one:
  /// a mesh's convex hull, a box's 8 corners (null otherwise).
  std::shared_ptr<const ConvexHull> hull;
  /// Centre of the bounding sphere in the shape's coordinates: the origin for
  /// primitives, the middle of a mesh's bounding box (a link mesh is often
  /// drawn away from its origin, at the joint).
  Vec3 bounding_center = Vec3::Zero();
};

/// A candidate pair; a is the environment / world side or the lower body index.
struct ShapePair {
  int shape_a = -1, shape_b = -1;
  int body_a = 0, body_b = 0;
  std::uint8_t kernel = 0;  ///< internal: which narrow-phase routine
  bool swapped = false;     ///< internal: the routine takes (b, a)
};

/// Finds the contacts of a model with itself and with a static environment.
///
/// Built once per (Model, environment); precomputes the candidate shape pairs:
/// - a robot shape and an environment shape (or a shape welded to the world): always;
/// - two robot bodies in different subtrees of the world (separate robots,
///   free bodies): always;
/// - two bodies in the same subtree: only with `self_collision`, never a
///   parent with its child, nor links whose pair Model::disabled_collisions()
///   lists (the robot's SRDF); never two shapes on the same body;
/// - two static shapes: never.
/// Meshes and unsupported pairs are left out and reported by name in
/// warnings() (and skipped_shapes()).
class ContactDetector {
 public:
  /// @throws GeometryError naming the shape on a negative or non-finite
  /// dimension or placement; ArgumentError on a non-finite option.
  ContactDetector(const Model& model, std::vector<EnvironmentShape> environment, DetectionOptions options = {});

  /// Every contact of the candidate pairs with φ < margin, in pair order.
  /// `out` is cleared first; its capacity is reserved once for
  /// max_contacts(), so steady-state calls do not allocate.
  /// @pre forward_kinematics(model, data, q) (placements data.X0).
  /// @throws ArgumentError if `model` or `data` is not the detector's model.
  void detect(const Model& model, const Data& data, std::vector<Contact>& out) const;

  const std::vector<DetectorShape>& shapes() const { return shapes_; }
  const std::vector<ShapePair>& pairs() const { return pairs_; }
  int num_robot_shapes() const { return num_robot_shapes_; }
  const DetectionOptions& options() const { return options_; }
  /// Names of the shapes detection ignores (meshes).
  const std::vector<std::string>& skipped_shapes() const { return skipped_shapes_; }
  /// One message per skipped shape and per unsupported pair, naming the shapes.
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// An upper bound on the number of contacts detect() can return.
  std::size_t max_contacts() const { return max_contacts_; }

 private:
  std::uint64_t model_uid_ = 0;
  DetectionOptions options_;
  std::vector<DetectorShape> shapes_;
  std::vector<ShapePair> pairs_;
  int num_robot_shapes_ = 0;
  std::vector<std::string> skipped_shapes_;
  std::vector<std::string> warnings_;
  std::size_t max_contacts_ = 0;
};

/// Recomputes gap, witness points and normal of a shape contact from its
/// features at the placements in `data` (the feature is kept even if another
/// one has become closer): the gap function φ_i(q) of an existing contact, as
/// event location needs it. Joint-limit contacts are left unchanged.
/// @pre forward_kinematics(model, data, q).
void refresh_contact(const Model& model, const Data& data, Contact& contact);

/// Appends a contact for every 1-DoF joint (revolute, prismatic) with a
/// finite limit whose gap is below `margin`: φ = q_i − lower (normal +1) and
/// φ = upper − q_i (normal −1). Their Jacobian column is ±e_dof and ṫᵀq̇ = 0.
/// body_a is the joint's parent body, body_b its child.
/// @throws ArgumentError on a q of the wrong size or with non-finite entries.
void detect_joint_limits(const Model& model, const Eigen::Ref<const VectorX>& q, double margin,
                         std::vector<Contact>& out);

}  // namespace plume
