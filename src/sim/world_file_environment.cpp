// World files, the environment and contact: <ground>, <box>, <sphere>,
// <capsule>, <cylinder> as environment shapes; the contact materials of
// shapes and the parameters of <contact> elements; what a pair override may name.
#include "sim/world_file_reader.hpp"

#include "plume/error.hpp"

namespace plume::detail::world_xml {

EnvironmentShape WorldReader::read_shape(const XMLElement* s, std::map<std::string, int>& counts) const {
  const std::string tag = s->Name();
  check_no_children(s);
  if (tag == "ground") {
    check_attributes(s, {"name", "normal", "offset", "mu", "restitution", "stiffness", "damping"});
  } else if (tag == "box") {
    check_attributes(s, {"name", "size", "pos", "rpy", "mu", "restitution", "stiffness", "damping"});
  } else if (tag == "sphere") {
    check_attributes(s, {"name", "radius", "pos", "mu", "restitution", "stiffness", "damping"});
  } else {  // capsule, cylinder
    check_attributes(s, {"name", "radius", "length", "pos", "rpy", "mu", "restitution", "stiffness", "damping"});
  }
  std::string name;
  if (const std::optional<std::string> given = attribute(s, "name")) {
    name = trim(*given);
  } else {
    const int k = ++counts[tag];
    name = k == 1 ? tag : tag + "_" + std::to_string(k);
  }
  check_name(name, s);
  const ContactMaterial mat = material(s);
  try {
    if (tag == "ground") {
      Vec3 n = vec3(s, "normal").value_or(Vec3::UnitZ());
      const double offset = number_or(s, "offset", 0.0);
      if (n.norm() < 1e-12) fail(s, "normal must not be zero");
      // The plane n·x = offset: its point closest to the origin.
      return ground_plane(name, n, offset * n / n.squaredNorm(), mat);
    }
    const Vec3 pos = vec3(s, "pos").value_or(Vec3::Zero());
    const Mat3 R = rpy_rotation(vec3(s, "rpy").value_or(Vec3::Zero()));
    if (tag == "box") {
      const std::optional<Vec3> size = vec3(s, "size");
      if (!size) fail(s, "missing attribute 'size'");
      for (int i = 0; i < 3; ++i) {
        if (!((*size)(i) > 0.0)) fail(s, "size entries must be positive");
      }
      return environment_box(name, *size, pos, R, mat);
    }
    EnvironmentShape shape;
    shape.name = name;
    shape.placement = Transform::from_pose(R, pos);
    shape.material = mat;
    const double radius = *required_number(s, "radius", Range::Positive);
    if (tag == "sphere") {
      shape.geometry = Sphere{radius};
    } else if (tag == "capsule") {
      shape.geometry = Capsule{radius, *required_number(s, "length", Range::NonNegative)};
    } else {
      shape.geometry = Cylinder{radius, *required_number(s, "length", Range::Positive)};
    }
    check_geometry(shape.geometry, "environment shape '" + name + "'");
    return shape;
  } catch (const WorldError&) {
    throw;
  } catch (const Error& err) {
    fail(s, err.what());
  }
}

ContactMaterial WorldReader::material(const XMLElement* e) const {
  ContactMaterial m;
  m.mu = number(e, "mu", Range::NonNegative);
  m.restitution = number(e, "restitution", Range::UnitInterval);
  m.stiffness = number(e, "stiffness", Range::Positive);
  m.damping = number(e, "damping", Range::NonNegative);
  return m;
}

// Contact parameters of a <contact> element on top of `base`.
ContactParameters WorldReader::contact_parameters(const XMLElement* e, ContactParameters p) const {
  p.mu = number_or(e, "mu", p.mu, Range::NonNegative);
  p.restitution = number_or(e, "restitution", p.restitution, Range::UnitInterval);
  p.stiffness = number_or(e, "stiffness", p.stiffness, Range::Positive);
  p.damping = number_or(e, "damping", p.damping, Range::NonNegative);
  p.tangential_stiffness = number_or(e, "tangential_stiffness", p.tangential_stiffness, Range::Positive);
  p.tangential_damping = number_or(e, "tangential_damping", p.tangential_damping, Range::NonNegative);
  return p;
}

bool WorldReader::names_surface(const World& world, const std::string& name) {
  if (world.model_index(name) >= 0) return true;
  for (const EnvironmentShape& s : world.environment()) {
    if (s.name == name) return true;
  }
  const Model& m = world.model();
  for (const CollisionShape& s : m.collisions()) {
    if (s.name == name || s.link == name) return true;
  }
  return m.frame_index(name) >= 0 || m.body_index(name) >= 0;
}

}  // namespace plume::detail::world_xml
