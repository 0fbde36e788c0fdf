// World files, <model>: the URDF loaded with the world's options (root joint,
// inertia policy, package directories, SRDF), its <collision> overrides and
// its <state> (q, v, an SRDF reference, single joints).
#include "sim/world_file_reader.hpp"

#include "plume/configuration.hpp"
#include "plume/error.hpp"
#include "../names.hpp"

namespace plume::detail::world_xml {

ModelEntry WorldReader::read_model(const XMLElement* m, const Vec3& gravity) const {
  check_attributes(m, {"name", "urdf", "root", "collision", "inertia", "package_dirs", "srdf"});
  check_no_text(m);
  ModelEntry entry;
  entry.element = m;
  entry.name = trim(required(m, "name"));
  check_name(entry.name, m);
  const std::string urdf_attr = trim(required(m, "urdf"));
  if (urdf_attr.empty()) fail(m, "urdf is empty");
  const fs::path p(urdf_attr);
  entry.path = (p.is_absolute() ? p : (base_ / p)).lexically_normal().string();
  const std::string root = trim(attribute(m, "root").value_or("fixed"));
  try {
    entry.root = urdf::parse_root_joint(root);
  } catch (const Error&) {
    fail(m, "root=\"" + root + "\" is not one of fixed, free, planar");
  }
  const std::string collision = trim(attribute(m, "collision").value_or("all"));
  if (collision != "all" && collision != "none") {
    fail(m, "collision=\"" + collision + "\" is not one of all, none");
  }
  entry.collision = collision == "all";
  urdf::LoadOptions options;
  options.root = entry.root;
  options.gravity = gravity;
  if (defaults_.inertia) options.inertia = *defaults_.inertia;
  if (const std::optional<std::string> inertia = attribute(m, "inertia")) {
    try {
      options.inertia = parse_inertia_policy(trim(*inertia));
    } catch (const Error&) {
      fail(m, "inertia=\"" + *inertia + "\" is not one of strict, warn, repair");
    }
  }
  // --package-dir first, then the model's own (relative to the world file).
  options.package_dirs = defaults_.package_dirs;
  if (const std::optional<std::string> dirs = attribute(m, "package_dirs")) {
    std::string item;
    for (const char c : *dirs + " ") {
      if (c == ':' || is_space(c)) {
        if (!item.empty()) {
          const fs::path d(item);
          options.package_dirs.push_back((d.is_absolute() ? d : base_ / d).lexically_normal().string());
        }
        item.clear();
      } else {
        item += c;
      }
    }
    if (options.package_dirs.size() == defaults_.package_dirs.size()) fail(m, "package_dirs is empty");
  }
  if (const std::optional<std::string> srdf = attribute(m, "srdf")) {
    const std::string text = trim(*srdf);
    if (text.empty()) fail(m, "srdf is empty");
    const fs::path sp(text);
    options.srdf = (sp.is_absolute() ? sp : base_ / sp).lexically_normal().string();
  }
  options.collision_overrides = read_collision_overrides(m);
  // A model in contact needs its collision meshes: a missing one is an error here.
  options.collision_meshes = entry.collision ? urdf::CollisionMeshes::Load : urdf::CollisionMeshes::Skip;
  try {
    entry.model = urdf::load(entry.path, options);
  } catch (const Error& err) {
    // A relative urdf is relative to the world file's directory, not to the
    // working directory: the message gives the attribute as written and the
    // absolute path looked for, and the loader's message names that path too.
    std::error_code ec;
    fs::path absolute = fs::absolute(entry.path, ec).lexically_normal();
    if (ec) absolute = entry.path;
    const std::string resolved =
        absolute.string() == urdf_attr ? std::string() : " (resolved to " + absolute.string() + ")";
    std::string why = err.what();
    if (why.rfind(entry.path + ": ", 0) == 0) {
      why.erase(0, entry.path.size() + 2);  // "PATH: cannot open the file": the file is named already
    } else if (why.rfind(entry.path + ":", 0) == 0) {
      why.replace(0, entry.path.size(), absolute.string());  // "PATH:LINE: …"
    }
    // A collision mesh that cannot be used: say how to go on without it.
    const std::string hint = why.find(": mesh '") != std::string::npos
                                 ? "; resolve the mesh (package_dirs, --package-dir, ROS_PACKAGE_PATH), replace the "
                                   "link's shapes with <collision link=\"…\"> primitives, or take the model out of "
                                   "contact with <model collision=\"none\">"
                                 : "";
    fail(m, "model '" + entry.name + "': cannot load '" + urdf_attr + "'" + resolved + ": " + why + hint);
  }
  return entry;
}

// <collision link="NAME" [enabled="false"]> with primitive children: shapes
// that replace the link's URDF collision elements.
std::map<std::string, std::vector<urdf::LinkCollision>> WorldReader::read_collision_overrides(
    const XMLElement* m) const {
  std::map<std::string, std::vector<urdf::LinkCollision>> overrides;
  std::map<std::string, int> lines;
  const XMLElement* state = nullptr;
  for (const XMLElement* c = m->FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string tag = c->Name();
    if (tag == "state") {
      if (state) fail(c, "a second <state> for model '" + trim(*attribute(m, "name")) + "' (the first is on line " +
                             std::to_string(state->GetLineNum()) + ")");
      state = c;
      continue;
    }
    if (tag != "collision") fail(c, "unknown element inside <model> (expected <state> or <collision>)");
    check_attributes(c, {"link", "enabled"});
    check_no_text(c);
    const std::string link = trim(required(c, "link"));
    if (link.empty()) fail(c, "link is empty");
    if (!lines.emplace(link, c->GetLineNum()).second) {
      fail(c, "a second <collision> for link '" + link + "' (the first is on line " + std::to_string(lines[link]) + ")");
    }
    const bool enabled = boolean(c, "enabled").value_or(true);
    std::vector<urdf::LinkCollision>& shapes = overrides[link];
    for (const XMLElement* g = c->FirstChildElement(); g; g = g->NextSiblingElement()) {
      if (!enabled) fail(g, "a shape inside <collision enabled=\"false\"> (a disabled link has no shapes)");
      shapes.push_back(read_link_shape(g));
    }
    if (enabled && shapes.empty()) {
      fail(c, "no shape: give <sphere>, <box>, <capsule> or <cylinder> children, or enabled=\"false\" to take link '" +
                  link + "' out of contact");
    }
  }
  return overrides;
}

urdf::LinkCollision WorldReader::read_link_shape(const XMLElement* g) const {
  const std::string tag = g->Name();
  check_no_children(g);
  if (tag == "sphere") {
    check_attributes(g, {"radius", "pos", "mu", "restitution", "stiffness", "damping"});
  } else if (tag == "box") {
    check_attributes(g, {"size", "pos", "rpy", "mu", "restitution", "stiffness", "damping"});
  } else if (tag == "capsule" || tag == "cylinder") {
    check_attributes(g, {"radius", "length", "pos", "rpy", "mu", "restitution", "stiffness", "damping"});
  } else {
    fail(g, "unknown element inside <collision> (expected sphere, box, capsule or cylinder)");
  }
  urdf::LinkCollision shape;
  shape.material = material(g);
  const Vec3 pos = vec3(g, "pos").value_or(Vec3::Zero());
  const Mat3 R = rpy_rotation(vec3(g, "rpy").value_or(Vec3::Zero()));
  shape.origin = Transform::from_pose(R, pos);
  if (tag == "sphere") {
    shape.geometry = Sphere{*required_number(g, "radius", Range::Positive)};
  } else if (tag == "box") {
    const std::optional<Vec3> size = vec3(g, "size");
    if (!size) fail(g, "missing attribute 'size'");
    for (int i = 0; i < 3; ++i) {
      if (!((*size)(i) > 0.0)) fail(g, "size entries must be positive");
    }
    shape.geometry = Box{*size};
  } else if (tag == "capsule") {
    shape.geometry = Capsule{*required_number(g, "radius", Range::Positive),
                             *required_number(g, "length", Range::NonNegative)};
  } else {
    shape.geometry = Cylinder{*required_number(g, "radius", Range::Positive),
                              *required_number(g, "length", Range::Positive)};
  }
  return shape;
}

// The joint of `model` named `name` (a moving joint), or an error naming the close ones.
int WorldReader::named_joint(const XMLElement* e, const Model& model, const std::string& model_name,
                             const std::string& name) const {
  const int k = model.joint_index(name);
  if (k > 0) return k;
  std::vector<std::string> joints;
  for (int i = 1; i < model.nbodies(); ++i) joints.push_back(model.joint(i).name);
  fail(e, "model '" + model_name + "' has no moving joint named '" + name + "'" + detail::did_you_mean(name, joints));
}

void WorldReader::add_model(WorldBuilder& builder, ModelEntry& entry) const {
  const XMLElement* state = entry.element->FirstChildElement("state");
  std::optional<VectorX> q, v;
  const std::string root = urdf::to_string(entry.root);
  if (state) {
    check_attributes(state, {"q", "v", "reference"});
    check_no_text(state);
    if (state->Attribute("q") && state->Attribute("reference")) fail(state, "give q or reference, not both");
    q = vector(state, "q", entry.model.nq(), "nq of model '" + entry.name + "' with a " + root + " root");
    v = vector(state, "v", entry.model.nv(), "nv of model '" + entry.name + "' with a " + root + " root");
    if (const std::optional<std::string> reference = attribute(state, "reference")) {
      try {
        q = entry.model.named_configuration(trim(*reference)).q;
      } catch (const Error& err) {
        fail(state, std::string(err.what()) + (entry.element->Attribute("srdf") ? "" : " (the model has no srdf=\"…\")"));
      }
    }
    // <joint name="…" q="…" v="…"/>: single joints on top of q (or neutral) and v (or zero).
    std::map<std::string, int> joint_lines;
    for (const XMLElement* j = state->FirstChildElement(); j; j = j->NextSiblingElement()) {
      if (std::string(j->Name()) != "joint") fail(j, "unknown element inside <state> (expected <joint name q v>)");
      check_attributes(j, {"name", "q", "v"});
      check_no_children(j);
      const std::string name = trim(required(j, "name"));
      if (!joint_lines.emplace(name, j->GetLineNum()).second) {
        fail(j, "joint '" + name + "' is set twice (line " + std::to_string(joint_lines[name]) + ")");
      }
      const Joint& joint = entry.model.joint(named_joint(j, entry.model, entry.name, name));
      const std::string what = "joint '" + name + "' (" + to_string(joint.type) + ")";
      const std::optional<VectorX> jq = vector(j, "q", joint.nq, "coordinates of " + what);
      const std::optional<VectorX> jv = vector(j, "v", joint.nv, "velocities of " + what);
      if (!jq && !jv) fail(j, "give q, v or both");
      if (jq) {
        if (!q) q = neutral_configuration(entry.model);
        q->segment(joint.q_index, joint.nq) = *jq;
      }
      if (jv) {
        if (!v) v = VectorX::Zero(entry.model.nv());
        v->segment(joint.v_index, joint.nv) = *jv;
      }
    }
  }
  try {
    builder.add_model(entry.name, entry.model, q, v, entry.path);
    builder.set_collision(entry.name, entry.collision);
  } catch (const Error& err) {
    fail(state ? state : entry.element, err.what());
  }
  entry.q0 = q ? *q : neutral_configuration(entry.model);
}

}  // namespace plume::detail::world_xml
