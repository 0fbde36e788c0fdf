#pragma once
// Shared test helpers: model paths, random trees with every joint kind,
// random states.

#include <random>
#include <string>
#include <vector>

#include "plume/configuration.hpp"
#include "plume/model_builder.hpp"
#include "plume/urdf.hpp"

namespace plume::test {

inline std::string model_path(const std::string& file) { return std::string(PLUME_MODELS_DIR) + "/" + file; }

struct NamedModel {
  std::string file;
  urdf::RootJoint root;
};

/// Every URDF in models/ with its intended root joint.
inline std::vector<NamedModel> all_models() {
  using R = urdf::RootJoint;
  return {{"pendulum.urdf", R::Fixed},        {"double_pendulum.urdf", R::Fixed}, {"rod.urdf", R::Planar},
          {"ball.urdf", R::FreeFlyer},        {"balls_row.urdf", R::Fixed},       {"arm7.urdf", R::Fixed},
          {"quadruped.urdf", R::FreeFlyer},   {"humanoid.urdf", R::FreeFlyer}};
}

inline Model load_model(const std::string& file, urdf::RootJoint root) {
  urdf::LoadOptions opt;
  opt.root = root;
  return urdf::load(model_path(file), opt);
}

inline double uniform(std::mt19937_64& g, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(g);
}

inline Vec3 random_vec3(std::mt19937_64& g, double scale = 1.0) {
  return Vec3(uniform(g, -scale, scale), uniform(g, -scale, scale), uniform(g, -scale, scale));
}

inline Mat3 random_rotation(std::mt19937_64& g) {
  Eigen::Quaterniond r(uniform(g, -1, 1), uniform(g, -1, 1), uniform(g, -1, 1), uniform(g, -1, 1));
  return r.normalized().toRotationMatrix();
}

/// A physically valid random rigid inertia (positive mass, principal moments
/// satisfying the triangle inequality, random COM and orientation).
inline RigidInertia random_inertia(std::mt19937_64& g) {
  const double m = uniform(g, 0.5, 3.0);
  const double a = uniform(g, 0.02, 0.2), b = uniform(g, 0.02, 0.2), c = uniform(g, 0.02, 0.2);
  // A solid box with sides a, b, c: moments automatically satisfy the triangle inequality.
  const Vec3 moments(m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12);
  const Mat3 R = random_rotation(g);
  return RigidInertia::from_mass_com_inertia(m, random_vec3(g, 0.3), R * moments.asDiagonal() * R.transpose());
}

/// A random tree of `nbodies` movable bodies using every joint kind:
/// revolute about x, y, z and a random axis, continuous, prismatic, planar
/// and free-flyer (also in the middle of the tree).
struct TreeOptions {
  bool free_root = true;        ///< a free-flyer joint at the root
  bool free_joints = true;      ///< free-flyer joints inside the tree too
  bool one_subtree = false;     ///< every body below the root (nothing else touches the world)
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);
};

inline Model random_tree(std::uint64_t seed, int nbodies, const TreeOptions& opt) {
  const bool free_root = opt.free_root;
  std::mt19937_64 g(seed);
  ModelBuilder b("random_tree_" + std::to_string(seed));
  b.set_gravity(opt.gravity);
  int first = 1;
  if (free_root) {
    b.add_body("root", 0, JointSpec::free_flyer("root_joint"), Transform::Identity(), random_inertia(g));
    first = 2;
  }
  for (int i = first; i <= nbodies; ++i) {
    const int parent = std::uniform_int_distribution<int>(opt.one_subtree ? 1 : 0, i - 1)(g);
    const int kind = static_cast<int>(std::uniform_int_distribution<int>(0, 8)(g));
    JointSpec j;
    const std::string name = "j" + std::to_string(i);
    switch (kind) {
      case 0: j = JointSpec::revolute(name, Vec3::UnitX(), -2.0, 2.0); break;
      case 1: j = JointSpec::revolute(name, Vec3::UnitY(), -2.0, 2.0); break;
      case 2: j = JointSpec::revolute(name, Vec3::UnitZ(), -2.0, 2.0); break;
      case 3: j = JointSpec::revolute(name, random_vec3(g).normalized(), -2.0, 2.0); break;
      case 4: j = JointSpec::continuous(name, random_vec3(g).normalized()); break;
      case 5: j = JointSpec::prismatic(name, random_vec3(g).normalized(), -0.5, 0.5); break;
      case 6: j = JointSpec::planar(name); break;
      case 7:
        j = opt.free_joints ? JointSpec::free_flyer(name) : JointSpec::revolute(name, Vec3::UnitZ(), -2.0, 2.0);
        break;
      default: j = JointSpec::revolute(name, Vec3::UnitY(), -2.0, 2.0); break;
    }
    const Transform Xtree = Transform::from_pose(random_rotation(g), random_vec3(g, 0.5));
    b.add_body("b" + std::to_string(i), parent, j, Xtree, random_inertia(g));
  }
  return b.build();
}

inline Model random_tree(std::uint64_t seed, int nbodies, bool free_root = true) {
  TreeOptions opt;
  opt.free_root = free_root;
  return random_tree(seed, nbodies, opt);
}

inline VectorX random_vector(std::mt19937_64& g, int n, double scale = 1.0) {
  VectorX x(n);
  for (int i = 0; i < n; ++i) x(i) = uniform(g, -scale, scale);
  return x;
}

}  // namespace plume::test
