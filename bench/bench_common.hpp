#pragma once
// Models and seeded random states shared by the benchmark suites.

#include <random>
#include <string>
#include <vector>

#include "plume/configuration.hpp"
#include "plume/urdf.hpp"

namespace plume::bench {

struct BenchModel {
  std::string label;  // e.g. "quadruped"
  std::string file;
  urdf::RootJoint root;
};

inline const std::vector<BenchModel>& bench_models() {
  static const std::vector<BenchModel> models{{"arm7", "arm7.urdf", urdf::RootJoint::Fixed},
                                              {"quadruped", "quadruped.urdf", urdf::RootJoint::FreeFlyer},
                                              {"humanoid", "humanoid.urdf", urdf::RootJoint::FreeFlyer}};
  return models;
}

inline Model load_bench_model(const BenchModel& b) {
  urdf::LoadOptions opt;
  opt.root = b.root;
  return urdf::load(std::string(PLUME_MODELS_DIR) + "/" + b.file, opt);
}

/// `n` seeded random states (q within limits, v and a, τ uniform in [−1, 1]).
struct States {
  std::vector<VectorX> q, v, a;
};

inline States random_states(const Model& m, int n, std::uint64_t seed = 1) {
  States s;
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k = 0; k < n; ++k) {
    s.q.push_back(random_configuration(m, seed + static_cast<std::uint64_t>(k)));
    VectorX v(m.nv()), a(m.nv());
    for (int i = 0; i < m.nv(); ++i) {
      v(i) = u(g);
      a(i) = u(g);
    }
    s.v.push_back(v);
    s.a.push_back(a);
  }
  return s;
}

}  // namespace plume::bench
