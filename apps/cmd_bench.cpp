// plume bench MODEL.urdf [--root …] [--json]: what each algorithm costs on the
// user's own model, in mean nanoseconds per call.
#include <chrono>
#include <iomanip>
#include <iostream>
#include <random>

#include "cli_common.hpp"
#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/configuration.hpp"

namespace plume::cli {

namespace {

constexpr int kStates = 64;

struct States {
  std::vector<VectorX> q, v, a;
};

States make_states(const Model& m) {
  States s;
  std::mt19937_64 g(1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k = 0; k < kStates; ++k) {
    s.q.push_back(random_configuration(m, 1 + static_cast<std::uint64_t>(k)));
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

// Mean ns per call of f(k) over `calls` calls cycling through the states,
// after a warm-up of a tenth of that.
template <class F>
double time_ns(long calls, F&& f) {
  volatile double sink = 0.0;
  for (long c = 0; c < calls / 10; ++c) sink = sink + f(static_cast<int>(c % kStates));
  const auto t0 = std::chrono::steady_clock::now();
  for (long c = 0; c < calls; ++c) sink = sink + f(static_cast<int>(c % kStates));
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(calls);
}

// The frame with the longest support chain: the most expensive single Jacobian.
int deepest_frame(const Model& m) {
  int best = 0, best_depth = -1;
  for (int f = 0; f < static_cast<int>(m.frames().size()); ++f) {
    int depth = 0;
    for (int i = m.frames()[f].body; i > 0; i = m.parent(i)) ++depth;
    if (depth >= best_depth) {  // ties: the later frame (a merged tool or foot link)
      best = f;
      best_depth = depth;
    }
  }
  return best;
}

}  // namespace

int run_bench(const BenchArgs& args) {
  const Model m = load_model(args.model, args.load, urdf::CollisionMeshes::Skip);  // dynamics only
  Data d(m);
  const States s = make_states(m);
  const long calls = args.calls;
  const int frame = deepest_frame(m);
  VectorX x(m.nv());
  Matrix6X J(6, m.nv());
  unchecked::crba(m, d, s.q[0]);

  // The checked entry points, as a controller would call them.
  const double t_rnea = time_ns(calls, [&](int k) { return rnea(m, d, s.q[k], s.v[k], s.a[k])(0); });
  const double t_bias = time_ns(calls, [&](int k) { return bias_forces(m, d, s.q[k], s.v[k])(0); });
  const double t_crba = time_ns(calls, [&](int k) { return crba(m, d, s.q[k])(0, 0); });
  const double t_aba = time_ns(calls, [&](int k) { return aba(m, d, s.q[k], s.v[k], s.a[k])(0); });
  const double t_ltdl = time_ns(calls, [&](int k) {
    ltdl(m, d);
    x = s.a[k];
    ltdl_solve(m, d, x);
    return x(0);
  });
  const double t_jac = time_ns(calls, [&](int k) {
    frame_jacobian(m, d, s.q[k], frame, ReferenceFrame::LocalWorldAligned, J);
    return J(0, 0);
  });

  if (args.json) {
    nlohmann::json out{{"model", m.name()}, {"nq", m.nq()},       {"nv", m.nv()},     {"calls", calls},
                       {"jacobian_frame", m.frames()[frame].name}, {"rnea", t_rnea},   {"bias", t_bias},
                       {"crba", t_crba},   {"aba", t_aba},         {"ltdl", t_ltdl},   {"jacobian", t_jac}};
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << "model '" << m.name() << "': nq = " << m.nq() << ", nv = " << m.nv() << "; mean ns per call over "
            << calls << " calls (" << kStates << " seeded random states, after a warm-up)\n"
            << std::fixed << std::setprecision(0);
  std::cout << "  rnea      " << std::setw(8) << t_rnea << "  inverse dynamics τ = ID(q, q̇, q̈)\n"
            << "  bias      " << std::setw(8) << t_bias << "  bias forces C(q, q̇)\n"
            << "  crba      " << std::setw(8) << t_crba << "  joint-space inertia H(q)\n"
            << "  aba       " << std::setw(8) << t_aba << "  forward dynamics q̈ = FD(q, q̇, τ)\n"
            << "  ltdl      " << std::setw(8) << t_ltdl << "  H = LᵀDL factorisation + one solve\n"
            << "  jacobian  " << std::setw(8) << t_jac << "  Jacobian of frame '" << m.frames()[frame].name
            << "' (support chain only)\n";
  return 0;
}

}  // namespace plume::cli
