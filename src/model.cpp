#include "plume/model.hpp"

#include "plume/error.hpp"

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
int Model::get_body(const std::string& name) const {
  const int i = body_index(name);
  if (i < 0) throw Error("model '" + name_ + "' has no body named '" + name + "'");
  return i;
}
int Model::get_joint(const std::string& name) const {
  const int i = joint_index(name);
  if (i < 0) throw Error("model '" + name_ + "' has no joint named '" + name + "'");
  return i;
}
int Model::get_frame(const std::string& name) const {
  const int i = frame_index(name);
  if (i < 0) throw Error("model '" + name_ + "' has no frame named '" + name + "'");
  return i;
}

}  // namespace plume
