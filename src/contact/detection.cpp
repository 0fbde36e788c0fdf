// Contact detection: the candidate pairs (broad phase by rules, built once),
// the per-pair narrow phase at the current placements, joint limits, and the
// environment helpers.
#include "plume/contact/detection.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "narrowphase.hpp"
#include "plume/geometry/convex_hull.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"

namespace plume {

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

void check_dimension(double x, const std::string& what, const char* dim, bool positive = false) {
  if (!std::isfinite(x) || x < 0.0 || (positive && x == 0.0)) {
    throw GeometryError(what + ": " + dim + " " + std::to_string(x) + " must be finite and " +
                        (positive ? "positive" : "non-negative"));
  }
}

std::string robot_shape_label(const CollisionShape& s) {
  return "collision shape " + quoted(s.name) + " (link " + quoted(s.link) + ")";
}

double bounding_radius(const Geometry& g) {
  if (const auto* s = std::get_if<Sphere>(&g)) return s->radius;
  if (const auto* b = std::get_if<Box>(&g)) return b->half_extents().norm();
  if (const auto* c = std::get_if<Cylinder>(&g)) return std::hypot(0.5 * c->length, c->radius);
  if (const auto* k = std::get_if<Capsule>(&g)) return 0.5 * k->length + k->radius;
  if (const auto* m = std::get_if<Mesh>(&g)) {
    if (m->hull) return m->hull->radius();
  }
  return std::numeric_limits<double>::infinity();  // planes (and meshes without a hull, never paired)
}

// The polytope the hull kernels use for a shape (meshes and boxes).
std::shared_ptr<const ConvexHull> polytope(const Geometry& g) {
  if (const auto* m = std::get_if<Mesh>(&g)) return m->hull;
  if (const auto* b = std::get_if<Box>(&g)) return std::make_shared<const ConvexHull>(ConvexHull::box(b->size));
  return nullptr;
}

std::string detector_shape_label(const DetectorShape& s) {
  return (s.environment ? "environment shape " : "collision shape ") + quoted(s.name);
}

}  // namespace

// ---- environment ----------------------------------------------------------------------

void check_geometry(const Geometry& geometry, const std::string& what) {
  if (const auto* s = std::get_if<Sphere>(&geometry)) {
    check_dimension(s->radius, what, "sphere radius");
  } else if (const auto* b = std::get_if<Box>(&geometry)) {
    for (int i = 0; i < 3; ++i) check_dimension(b->size[i], what, "box size");
  } else if (const auto* c = std::get_if<Cylinder>(&geometry)) {
    check_dimension(c->radius, what, "cylinder radius", true);
    check_dimension(c->length, what, "cylinder length");
  } else if (const auto* k = std::get_if<Capsule>(&geometry)) {
    check_dimension(k->radius, what, "capsule radius");
    check_dimension(k->length, what, "capsule length");
  }
}

void check_placement(const Transform& X, const std::string& what) {
  const Mat3& E = X.E();
  if (!E.allFinite() || !X.r().allFinite()) throw GeometryError(what + ": placement has a non-finite entry");
  if ((E * E.transpose() - Mat3::Identity()).cwiseAbs().maxCoeff() > 1e-9 || E.determinant() < 0.0) {
    throw GeometryError(what + ": placement rotation is not a proper rotation matrix");
  }
}

EnvironmentShape ground_plane(const std::string& name, const Vec3& normal, const Vec3& point,
                              const ContactMaterial& material) {
  const std::string what = "environment shape " + quoted(name);
  if (!normal.allFinite() || !point.allFinite()) throw GeometryError(what + ": plane normal or point is not finite");
  if (normal.norm() < 1e-12) throw GeometryError(what + ": plane normal is zero");
  const Vec3 n = normal.normalized();
  Vec3 t1, t2;
  tangent_basis(n, t1, t2);
  Mat3 R;
  R << t1, t2, n;
  return EnvironmentShape{name, Transform::from_pose(R, point), Plane{}, material};
}

EnvironmentShape environment_box(const std::string& name, const Vec3& size, const Vec3& center, const Mat3& R,
                                 const ContactMaterial& material) {
  EnvironmentShape s{name, Transform::from_pose(R, center), Box{size}, material};
  check_geometry(s.geometry, "environment shape " + quoted(name));
  check_placement(s.placement, "environment shape " + quoted(name));
  return s;
}

// ---- the detector -----------------------------------------------------------------------

ContactDetector::ContactDetector(const Model& model, std::vector<EnvironmentShape> environment,
                                 DetectionOptions options)
    : model_uid_(model.uid()), options_(options) {
  if (!std::isfinite(options.margin)) throw ArgumentError("DetectionOptions::margin must be finite");
  if (!(options.cylinder_flat_angle >= 0.0 && options.cylinder_flat_angle < 1.5)) {
    throw ArgumentError("DetectionOptions::cylinder_flat_angle must be in [0, 1.5) rad");
  }
  if (!(options.parallel_tolerance > 0.0 && options.parallel_tolerance < 1.0)) {
    throw ArgumentError("DetectionOptions::parallel_tolerance must be in (0, 1)");
  }

  // Shapes: the model's, then the environment's.
  for (const CollisionShape& s : model.collisions()) {
    check_geometry(s.geometry, robot_shape_label(s));
    shapes_.push_back(DetectorShape{s.name, s.body, s.placement, s.geometry, s.material, false,
                                    bounding_radius(s.geometry), polytope(s.geometry)});
  }
  num_robot_shapes_ = static_cast<int>(shapes_.size());
  for (EnvironmentShape& s : environment) {
    const std::string what = "environment shape " + quoted(s.name);
    check_geometry(s.geometry, what);
    check_placement(s.placement, what);
    const double radius = bounding_radius(s.geometry);
    std::shared_ptr<const ConvexHull> hull = polytope(s.geometry);
    shapes_.push_back(DetectorShape{std::move(s.name), 0, s.placement, std::move(s.geometry), s.material, true, radius,
                                    std::move(hull)});
  }
  // A mesh's bounding sphere about the middle of its bounding box: tighter
  // than about its origin, which link meshes often have at one end (the joint).
  for (DetectorShape& d : shapes_) {
    const Mesh* mesh = std::get_if<Mesh>(&d.geometry);
    if (!mesh || !mesh->hull || mesh->hull->vertices().empty()) continue;
    Vec3 lo = mesh->hull->vertices()[0], hi = lo;
    for (const Vec3& v : mesh->hull->vertices()) {
      lo = lo.cwiseMin(v);
      hi = hi.cwiseMax(v);
    }
    d.bounding_center = 0.5 * (lo + hi);
    double r = 0.0;
    for (const Vec3& v : mesh->hull->vertices()) r = std::max(r, (v - d.bounding_center).norm());
    d.bounding_radius = r;
  }
  // Shapes detection cannot use (meshes) are left out, each named with its
  // link. A link whose collision shapes are all unusable (a mesh-only
  // collision) touches nothing at all: its warning says so.
  std::vector<bool> usable(shapes_.size());
  for (std::size_t i = 0; i < shapes_.size(); ++i) usable[i] = usable_for_contact(shapes_[i].geometry);
  for (std::size_t i = 0; i < shapes_.size(); ++i) {
    if (usable[i]) continue;
    skipped_shapes_.push_back(shapes_[i].name);
    std::string label = detector_shape_label(shapes_[i]);
    std::string consequence = "the shape is ignored";
    if (static_cast<int>(i) < num_robot_shapes_) {
      const std::string& link = model.collisions()[i].link;
      label += " (link " + quoted(link) + ")";
      bool link_has_usable = false;
      for (int k = 0; k < num_robot_shapes_; ++k) {
        if (usable[static_cast<std::size_t>(k)] && model.collisions()[static_cast<std::size_t>(k)].link == link) {
          link_has_usable = true;
        }
      }
      if (!link_has_usable) {
        consequence = "the shape is ignored and link " + quoted(link) +
                      " has no other collision shape: it touches nothing";
      }
    }
    const Mesh* mesh = std::get_if<Mesh>(&shapes_[i].geometry);
    const std::string why = mesh && !mesh->problem.empty() ? "mesh '" + mesh->filename + "' is not usable for contact (" + mesh->problem + ")"
                                                           : std::string(geometry_name(shapes_[i].geometry)) + " geometry is not supported for contact";
    warnings_.push_back(label + ": " + why + "; " + consequence);
  }

  // Candidate pairs by the rules in the class comment.
  for (std::size_t i = 0; i < shapes_.size(); ++i) {
    for (std::size_t j = i + 1; j < shapes_.size(); ++j) {
      if (!usable[i] || !usable[j]) continue;
      const DetectorShape& si = shapes_[i];
      const DetectorShape& sj = shapes_[j];
      const bool static_i = si.environment || si.body == 0;
      const bool static_j = sj.environment || sj.body == 0;
      if (static_i && static_j) continue;
      if (!static_i && !static_j) {
        if (si.body == sj.body) continue;
        if (model.subtree_root(si.body) == model.subtree_root(sj.body)) {
          if (!options_.self_collision) continue;
          if (model.parent(si.body) == sj.body || model.parent(sj.body) == si.body) continue;
        }
        // Pairs the robot's SRDF disables (<disable_collisions>), also between
        // branches of a fixed-base robot (separate subtrees of the world).
        if (static_cast<int>(j) < num_robot_shapes_ &&
            model.collision_disabled(model.collisions()[i].link, model.collisions()[j].link)) {
          continue;
        }
      }
      // a: the static side, else the lower body index.
      const bool i_is_a = static_i || (!static_j && si.body < sj.body);
      ShapePair p;
      p.shape_a = static_cast<int>(i_is_a ? i : j);
      p.shape_b = static_cast<int>(i_is_a ? j : i);
      p.body_a = shapes_[p.shape_a].body;
      p.body_b = shapes_[p.shape_b].body;
      const Geometry& ga = shapes_[p.shape_a].geometry;
      const Geometry& gb = shapes_[p.shape_b].geometry;
      if (!detail::find_kernel(ga.index(), gb.index(), p.kernel, p.swapped)) {
        warnings_.push_back(detector_shape_label(shapes_[p.shape_a]) + " and " +
                            detector_shape_label(shapes_[p.shape_b]) + ": contact between a " + geometry_name(ga) +
                            " and a " + geometry_name(gb) + " is not supported; the pair is ignored");
        continue;
      }
      max_contacts_ += static_cast<std::size_t>(detail::kernel_max_contacts(p.kernel));
      pairs_.push_back(p);
    }
  }
}

namespace {

detail::PlacedShape place(const DetectorShape& s, const Data& data) {
  const Transform X = s.body == 0 ? s.placement : s.placement * data.X0[s.body];  // X_shape_world
  detail::PlacedShape p;
  p.geometry = &s.geometry;
  p.hull = s.hull.get();
  p.R = X.E().transpose();
  p.p = X.r();
  return p;
}

// A lower bound on the distance between two placed shapes from their bounding
// spheres (or a bounding sphere and a plane). Every contact a kernel reports
// with a gap below this bound has the shapes overlapping, so a pair whose
// bound exceeds the margin has no contact to report.
double distance_bound(const detail::PlacedShape& A, const DetectorShape& a, const detail::PlacedShape& B,
                      const DetectorShape& b) {
  const bool plane_a = std::holds_alternative<Plane>(*A.geometry);
  const bool plane_b = std::holds_alternative<Plane>(*B.geometry);
  if (plane_a && plane_b) return -std::numeric_limits<double>::infinity();
  const Vec3 ca = A.p + A.R * a.bounding_center;
  const Vec3 cb = B.p + B.R * b.bounding_center;
  if (plane_a) return A.R.col(2).dot(cb - A.p) - b.bounding_radius;
  if (plane_b) return B.R.col(2).dot(ca - B.p) - a.bounding_radius;
  return (cb - ca).norm() - a.bounding_radius - b.bounding_radius;
}

}  // namespace

void ContactDetector::detect(const Model& model, const Data& data, std::vector<Contact>& out) const {
  if (model.uid() != model_uid_) {
    throw ArgumentError("ContactDetector::detect: model " + quoted(model.name()) +
                        " is not the model the detector was built for");
  }
  check_data(model, data);
  out.clear();
  if (out.capacity() < max_contacts_) out.reserve(max_contacts_);
  for (std::size_t k = 0; k < pairs_.size(); ++k) {
    const ShapePair& pr = pairs_[k];
    const detail::PlacedShape A = place(shapes_[pr.shape_a], data);
    const detail::PlacedShape B = place(shapes_[pr.shape_b], data);
    const double ra = shapes_[pr.shape_a].bounding_radius, rb = shapes_[pr.shape_b].bounding_radius;
    const double slack = 1e-9 * (1.0 + (std::isfinite(ra) ? ra : 0.0) + (std::isfinite(rb) ? rb : 0.0));
    if (distance_bound(A, shapes_[pr.shape_a], B, shapes_[pr.shape_b]) > options_.margin + slack) continue;
    detail::ContactEmitter emitter(data, pr, static_cast<int>(k), options_.margin, out);
    if (pr.swapped) {
      detail::run_kernel(pr.kernel, B, A, options_, emitter);
    } else {
      detail::run_kernel(pr.kernel, A, B, options_, emitter);
    }
  }
}

void refresh_contact(const Model&, const Data& data, Contact& contact) {
  if (contact.kind != ContactKind::Shapes) return;
  detail::FeatureContact r;
  detail::evaluate_features(detail::world_features(data, contact), r);
  detail::store_result(r, contact.local.first_on_b, contact);
}

// ---- joint limits (RBDA §11.4) --------------------------------------------------------------

void detect_joint_limits(const Model& model, const Eigen::Ref<const VectorX>& q, double margin,
                         std::vector<Contact>& out) {
  check_vector(q, model.nq(), "q");
  const VectorX& lower = model.lower_position_limit();
  const VectorX& upper = model.upper_position_limit();
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    if (j.type != JointType::Revolute && j.type != JointType::Prismatic) continue;
    const double qi = q[j.q_index];
    const double bounds[2] = {lower[j.q_index], upper[j.q_index]};
    for (int side = 0; side < 2; ++side) {
      if (!std::isfinite(bounds[side])) continue;
      const double phi = side == 0 ? qi - bounds[0] : bounds[1] - qi;
      if (!(phi < margin)) continue;
      Contact c;
      c.kind = ContactKind::JointLimit;
      c.id = (std::uint64_t{1} << 63) | (static_cast<std::uint64_t>(j.v_index) << 1) | static_cast<std::uint64_t>(side);
      c.pair = -1;
      c.feature = side;
      c.body_a = model.parent(i);
      c.body_b = i;
      c.dof = j.v_index;
      c.gap = phi;
      c.normal = Vec3(side == 0 ? 1.0 : -1.0, 0.0, 0.0);
      out.push_back(c);
    }
  }
}

}  // namespace plume
