// Google Benchmark suite of the analytic derivatives against the plain
// algorithm and against finite differences, on the arm, the quadruped and the
// humanoid. Each iteration uses the next of 64 seeded random states.
//   rnea, aba                      the plain algorithm (unchecked)
//   rnea_derivatives               ∂τ/∂q, ∂τ/∂q̇ and H (unchecked)
//   kinematics_derivatives         rnea_derivatives' forward pass alone (its
//                                  backward pass, with the ancestor loops, is
//                                  the difference)
//   aba_derivatives                ∂q̈/∂q, ∂q̈/∂q̇ and H⁻¹ (unchecked)
//   rnea_fd, aba_fd                one Jacobian by central differences: 2·nv
//                                  plain calls (perturbing q̇ in place; a
//                                  ∂/∂q through integrate() costs more, and
//                                  both ∂/∂q and ∂/∂q̇ twice this)
//   constrained_derivatives        q̈, λ and their ∂/∂q, ∂/∂q̇, ∂/∂τ with a 3-D
//                                  sticking point on every leaf (the feet)
// Run: build/bench/bench_derivatives
#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/derivatives.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/dynamics/constrained_derivatives.hpp"

using namespace plume;

namespace {

constexpr int kStates = 64;

template <class F>
void run(benchmark::State& st, const bench::BenchModel& bm, F&& f) {
  const Model m = bench::load_bench_model(bm);
  Data d(m);
  const bench::States s = bench::random_states(m, kStates);
  VectorX work(m.nv());
  MatrixX D(m.nv(), m.nv());
  int k = 0;
  for (auto _ : st) {
    f(m, d, s, k, work, D);
    k = (k + 1) % kStates;
  }
  st.counters["nv"] = m.nv();
}

// Central differences of g(q, v, x) in v: 2·nv calls.
template <class G>
void fd_v(const Model& m, Data& d, const bench::States& s, int k, VectorX& v, MatrixX& D, G&& g) {
  const double h = 1e-6;
  v = s.v[k];
  for (int c = 0; c < m.nv(); ++c) {
    const double v0 = v(c);
    v(c) = v0 + h;
    D.col(c) = g(m, d, s.q[k], v, s.a[k]);
    v(c) = v0 - h;
    D.col(c) -= g(m, d, s.q[k], v, s.a[k]);
    D.col(c) *= 0.5 / h;
    v(c) = v0;
  }
}

void register_all() {
  for (const bench::BenchModel& bm : bench::bench_models()) {
    const Model m = bench::load_bench_model(bm);
    const std::string tag = "/" + bm.label + "/nv" + std::to_string(m.nv());
    benchmark::RegisterBenchmark(("rnea" + tag).c_str(), [bm](benchmark::State& st) {
      run(st, bm, [](const Model& m, Data& d, const bench::States& s, int k, VectorX&, MatrixX&) {
        benchmark::DoNotOptimize(unchecked::rnea(m, d, s.q[k], s.v[k], s.a[k]).data());
      });
    });
    benchmark::RegisterBenchmark(("rnea_derivatives" + tag).c_str(), [bm](benchmark::State& st) {
      run(st, bm, [](const Model& m, Data& d, const bench::States& s, int k, VectorX&, MatrixX&) {
        unchecked::rnea_derivatives(m, d, s.q[k], s.v[k], s.a[k]);
        benchmark::DoNotOptimize(d.dtau_dq.data());
      });
    });
    benchmark::RegisterBenchmark(("kinematics_derivatives" + tag).c_str(), [bm](benchmark::State& st) {
      run(st, bm, [](const Model& m, Data& d, const bench::States& s, int k, VectorX&, MatrixX&) {
        unchecked::kinematics_derivatives(m, d, s.q[k], s.v[k], s.a[k]);
        benchmark::DoNotOptimize(d.dAdq.data());
      });
    });
    benchmark::RegisterBenchmark(("rnea_fd" + tag).c_str(), [bm](benchmark::State& st) {
      run(st, bm, [](const Model& m, Data& d, const bench::States& s, int k, VectorX& v, MatrixX& D) {
        fd_v(m, d, s, k, v, D, [](const Model& mm, Data& dd, const VectorX& q, const VectorX& vv, const VectorX& a) {
          return unchecked::rnea(mm, dd, q, vv, a);
        });
        benchmark::DoNotOptimize(D.data());
      });
    });
    benchmark::RegisterBenchmark(("aba" + tag).c_str(), [bm](benchmark::State& st) {
      run(st, bm, [](const Model& m, Data& d, const bench::States& s, int k, VectorX&, MatrixX&) {
        benchmark::DoNotOptimize(unchecked::aba(m, d, s.q[k], s.v[k], s.a[k]).data());
      });
    });
    benchmark::RegisterBenchmark(("aba_derivatives" + tag).c_str(), [bm](benchmark::State& st) {
      run(st, bm, [](const Model& m, Data& d, const bench::States& s, int k, VectorX&, MatrixX&) {
        unchecked::aba_derivatives(m, d, s.q[k], s.v[k], s.a[k]);
        benchmark::DoNotOptimize(d.ddq_dq.data());
      });
    });
    benchmark::RegisterBenchmark(("aba_fd" + tag).c_str(), [bm](benchmark::State& st) {
      run(st, bm, [](const Model& m, Data& d, const bench::States& s, int k, VectorX& v, MatrixX& D) {
        fd_v(m, d, s, k, v, D, [](const Model& mm, Data& dd, const VectorX& q, const VectorX& vv, const VectorX& tau) {
          return unchecked::aba(mm, dd, q, vv, tau);
        });
        benchmark::DoNotOptimize(D.data());
      });
    });
    if (bm.label != "arm7") {
      benchmark::RegisterBenchmark(("constrained_derivatives" + tag).c_str(), [bm](benchmark::State& st) {
        const Model m = bench::load_bench_model(bm);
        std::vector<bool> has_child(m.nbodies(), false);
        for (int i = 1; i < m.nbodies(); ++i) has_child[m.parent(i)] = true;
        std::vector<PointConstraint> cs;
        for (int i = 1; i < m.nbodies(); ++i) {
          if (!has_child[i]) cs.push_back({i, Vec3(0.0, 0.0, -0.05), Mat3::Identity()});
        }
        ConstrainedDerivatives cd(m, cs);
        run(st, bm, [&cd](const Model& mm, Data& d, const bench::States& s, int k, VectorX&, MatrixX&) {
          cd.compute(mm, d, s.q[k], s.v[k], s.a[k]);
          benchmark::DoNotOptimize(cd.ddq_dq.data());
        });
        st.counters["rows"] = cd.rows();
      });
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
