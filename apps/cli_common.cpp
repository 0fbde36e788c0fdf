#include "cli_common.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <vector>

#include "plume/error.hpp"

namespace plume::cli {

Model load_model(const std::string& path, const LoadArgs& load, urdf::CollisionMeshes meshes,
                 bool print_warnings) {
  urdf::LoadOptions options;
  options.root = urdf::parse_root_joint(load.root);
  options.inertia = parse_inertia_policy(load.inertia);
  options.package_dirs = load.package_dirs;
  options.srdf = load.srdf;
  options.collision_meshes = meshes;
  Model m = urdf::load(path, options);
  if (print_warnings) {
    for (const std::string& w : m.warnings()) std::cerr << "plume: warning: " << printable(w) << "\n";
  }
  return m;
}

std::string printable(const std::string& token) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (const char c : token) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += digits[u >> 4];
      out += digits[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

VectorX parse_vector(const std::string& text, const std::string& flag) {
  std::vector<double> values;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string token = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto first = token.find_first_not_of(" \t");
    const auto last = token.find_last_not_of(" \t");
    token = first == std::string::npos ? "" : token.substr(first, last - first + 1);
    if (token.empty()) {
      throw ArgumentError(flag + ": entry " + std::to_string(values.size()) + " is empty (expected comma-separated numbers)");
    }
    errno = 0;
    char* end = nullptr;
    const double x = std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size() || errno == ERANGE) {
      throw ArgumentError(flag + ": entry " + std::to_string(values.size()) + " ('" + printable(token) + "') is not a number");
    }
    values.push_back(x);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return Eigen::Map<const VectorX>(values.data(), static_cast<Eigen::Index>(values.size()));
}

VectorX parse_vector(const std::string& text, const std::string& flag, Eigen::Index expected, const std::string& what) {
  VectorX x = parse_vector(text, flag);
  if (x.size() != expected) {
    std::ostringstream msg;
    msg << flag << " has " << x.size() << " entries, expected " << expected << " (" << what << ")";
    throw ArgumentError(msg.str());
  }
  return x;
}

namespace {

struct Component {
  const char* name;
  const char* unit;
};

// Names and units of a joint type's q and v components (the table of joint.hpp).
void components(JointType type, std::vector<Component>& q, std::vector<Component>& v) {
  switch (type) {
    case JointType::Fixed: break;
    case JointType::Revolute:
    case JointType::Continuous:
      q = {{"angle", "rad"}};
      v = {{"angular_velocity", "rad/s"}};
      break;
    case JointType::Prismatic:
      q = {{"position", "m"}};
      v = {{"velocity", "m/s"}};
      break;
    case JointType::Planar:
      q = {{"x", "m"}, {"y", "m"}, {"theta", "rad"}};
      v = {{"vx", "m/s"}, {"vy", "m/s"}, {"omega_z", "rad/s"}};
      break;
    case JointType::FreeFlyer:
      q = {{"x", "m"}, {"y", "m"}, {"z", "m"}, {"qx", ""}, {"qy", ""}, {"qz", ""}, {"qw", ""}};
      v = {{"wx", "rad/s"}, {"wy", "rad/s"}, {"wz", "rad/s"}, {"vx", "m/s"}, {"vy", "m/s"}, {"vz", "m/s"}};
      break;
  }
}

}  // namespace

nlohmann::ordered_json joint_coordinates(const Joint& joint, const std::string& model, const std::string& joint_name) {
  std::vector<Component> q, v;
  components(joint.type, q, v);
  if (static_cast<int>(q.size()) != joint.nq || static_cast<int>(v.size()) != joint.nv) {
    throw Error("joint '" + joint.name + "' has nq = " + std::to_string(joint.nq) + ", nv = " + std::to_string(joint.nv) +
                ", not those of a " + to_string(joint.type) + " joint");
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  const auto add = [&](const char* prefix, int index, const Component& c) {
    const std::string column = prefix + std::to_string(index);
    out[column] = {{"column", column}, {"model", model},         {"joint", joint_name},
                   {"type", to_string(joint.type)}, {"component", c.name}, {"unit", c.unit}};
  };
  for (int k = 0; k < joint.nq; ++k) add("q_", joint.q_index + k, q[static_cast<std::size_t>(k)]);
  for (int k = 0; k < joint.nv; ++k) add("v_", joint.v_index + k, v[static_cast<std::size_t>(k)]);
  return out;
}

namespace {
nlohmann::json number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }
}  // namespace

nlohmann::json to_json(const VectorX& x) {
  nlohmann::json j = nlohmann::json::array();
  for (Eigen::Index i = 0; i < x.size(); ++i) j.push_back(number(x(i)));
  return j;
}

nlohmann::json to_json(const Vec3& x) { return to_json(VectorX(x)); }

nlohmann::json to_json(const MatrixX& m) {
  nlohmann::json j = nlohmann::json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) j.push_back(to_json(VectorX(m.row(r).transpose())));
  return j;
}

}  // namespace plume::cli
