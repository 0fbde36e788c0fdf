#include "plume/model.hpp"

#include <algorithm>

#include "plume/error.hpp"
#include "names.hpp"

namespace plume {

const char* to_string(JointType type) {
  switch (type) {
    case JointType::Fixed: return "fixed";
    case JointType::Revolute: return "revolute";
    case JointType::Continuous: return "continuous";
    case JointType::Prismatic: return "prismatic";
    case JointType::Planar: return "planar";
    case JointType::FreeFlyer: return "free-flyer";
  }
  return "unknown";
}

namespace {
struct GeometryNamer {
  const char* operator()(const Sphere&) const { return "sphere"; }
  const char* operator()(const Box&) const { return "box"; }
  const char* operator()(const Cylinder&) const { return "cylinder"; }
  const char* operator()(const Capsule&) const { return "capsule"; }
  const char* operator()(const Plane&) const { return "plane"; }
  const char* operator()(const Mesh&) const { return "mesh"; }
};

template <class Items, class NameOf>
int find_by_name(const Items& items, const std::string& name, NameOf name_of) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (name_of(items[i]) == name) return static_cast<int>(i);
  }
  return -1;
}
}  // namespace

const char* geometry_name(const Geometry& g) { return std::visit(GeometryNamer{}, g); }

bool usable_for_contact(const Geometry& g) {
  const Mesh* mesh = std::get_if<Mesh>(&g);
  return !mesh || mesh->hull != nullptr;
}

Model::Model()
    : parent_{-1},
      body_names_{"world"},
      Xtree_{Transform::Identity()},
      inertia_{RigidInertia::Zero()},
      com_{Vec3::Zero()},
      Ic_{Mat3::Zero()},
      joints_{Joint{"world", JointType::Fixed, JointKind::None, Vec3::UnitZ(), 0, 0, 0, 0}},
      subtree_root_{0} {}

bool Model::in_subtree(int i, int j) const {
  while (j > i) j = parent_[j];
  return j == i;
}

int Model::body_index(const std::string& name) const {
  return find_by_name(body_names_, name, [](const std::string& s) { return s; });
}
int Model::joint_index(const std::string& name) const {
  const int k = find_by_name(joints_, name, [](const Joint& j) { return j.name; });
  return k == 0 ? -1 : k;
}
int Model::frame_index(const std::string& name) const {
  return find_by_name(frames_, name, [](const Frame& f) { return f.name; });
}
namespace {

std::string after_slash(const std::string& s) {
  const std::size_t k = s.rfind('/');
  return k == std::string::npos ? s : s.substr(k + 1);
}

// "; did you mean 'quad/LF_foot'?" — names that equal `name` once a model
// prefix ("model/") is added or removed, else the closest by edit distance.
std::string suggestion(const std::vector<std::string>& names, const std::string& name) {
  std::vector<std::string> hits;
  for (const std::string& n : names) {
    if (n != name && after_slash(n) == after_slash(name)) hits.push_back(n);
  }
  if (hits.empty()) {
    std::size_t best = std::max<std::size_t>(2, name.size() / 3) + 1;
    for (const std::string& n : names) {
      const std::size_t d = std::min(detail::edit_distance(n, name), detail::edit_distance(after_slash(n), after_slash(name)));
      if (d < best) {
        best = d;
        hits.assign(1, n);
      } else if (d == best) {
        hits.push_back(n);
      }
    }
  }
  if (hits.empty()) return "";
  std::string out = "; did you mean ";
  for (std::size_t i = 0; i < hits.size() && i < 4; ++i) out += (i ? " or '" : "'") + hits[i] + "'";
  return out + "?";
}

std::string list_of(const std::vector<std::string>& names) {
  if (names.empty()) return " (it has none)";
  if (names.size() > 12) return " (" + std::to_string(names.size()) + " names)";
  std::string out = " (it has";
  for (const std::string& n : names) out += " '" + n + "'";
  return out + ")";
}

[[noreturn]] void unknown(const std::string& model, const char* what, const std::string& name,
                          const std::vector<std::string>& names) {
  const std::string hint = suggestion(names, name);
  throw ArgumentError("model '" + model + "' has no " + what + " named '" + name + "'" +
                      (hint.empty() ? list_of(names) : hint));
}

}  // namespace

int Model::get_body(const std::string& name) const {
  const int i = body_index(name);
  if (i < 0) unknown(name_, "body", name, body_names_);
  return i;
}
int Model::get_joint(const std::string& name) const {
  const int i = joint_index(name);
  if (i < 0) {
    std::vector<std::string> names;
    for (std::size_t k = 1; k < joints_.size(); ++k) names.push_back(joints_[k].name);
    unknown(name_, "joint", name, names);
  }
  return i;
}
int Model::get_frame(const std::string& name) const {
  const int i = frame_index(name);
  if (i < 0) {
    std::vector<std::string> names;
    for (const Frame& f : frames_) names.push_back(f.name);
    unknown(name_, "frame", name, names);
  }
  return i;
}

void Model::bad_index(const char* what, int i, int n) {
  throw ArgumentError(std::string(what) + " index " + std::to_string(i) + " is out of range [0, " + std::to_string(n) +
                      ")" + (i == -1 ? " (-1: a look-up by name that found nothing? get_body/get_joint/get_frame "
                                       "throw naming the missing item)"
                                     : ""));
}

const NamedConfiguration& Model::named_configuration(const std::string& name) const {
  for (const NamedConfiguration& c : named_configurations_) {
    if (c.name == name) return c;
  }
  if (named_configurations_.empty()) {
    throw ArgumentError("model '" + name_ + "' has no named configuration '" + name +
                     "': it has none; load the robot's SRDF (urdf::LoadOptions::srdf, <model srdf=\"…\">) for its "
                     "<group_state> postures");
  }
  std::vector<std::string> names;
  for (const NamedConfiguration& c : named_configurations_) names.push_back(c.name);
  throw ArgumentError("model '" + name_ + "' has no named configuration '" + name + "'" +
                   detail::did_you_mean(name, names) + "; it has " + detail::quoted_list(names));
}

bool Model::collision_disabled(const std::string& a, const std::string& b) const {
  for (const auto& [x, y] : disabled_collisions_) {
    if ((x == a && y == b) || (x == b && y == a)) return true;
  }
  return false;
}

}  // namespace plume
