// Google Benchmark suite of the dynamics algorithms on the 7-joint arm, the
// quadruped and the humanoid. Each iteration uses the next of 64 seeded
// random states. Run: build/bench/bench_dynamics
#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/rnea.hpp"

using namespace plume;

namespace {

constexpr int kStates = 64;

template <class F>
void run(benchmark::State& st, const bench::BenchModel& bm, F&& f) {
  const Model m = bench::load_bench_model(bm);
  Data d(m);
  const bench::States s = bench::random_states(m, kStates);
  int k = 0;
  for (auto _ : st) {
    f(m, d, s, k);
    k = (k + 1) % kStates;
  }
  st.counters["nv"] = m.nv();
}

void register_all() {
  for (const bench::BenchModel& bm : bench::bench_models()) {
    const Model m = bench::load_bench_model(bm);
    const std::string tag = "/" + bm.label + "/nq" + std::to_string(m.nq()) + "_nv" + std::to_string(m.nv());
    benchmark::RegisterBenchmark(("rnea" + tag).c_str(), [bm](benchmark::State& st) {
      run(st, bm, [](const Model& m, Data& d, const bench::States& s, int k) {
        benchmark::DoNotOptimize(rnea(m, d, s.q[k], s.v[k], s.a[k]).data());
      });
    });
    benchmark::RegisterBenchmark(("rnea_unchecked" + tag).c_str(), [bm](benchmark::State& st) {
      run(st, bm, [](const Model& m, Data& d, const bench::States& s, int k) {
        benchmark::DoNotOptimize(unchecked::rnea(m, d, s.q[k], s.v[k], s.a[k]).data());
      });
    });
    benchmark::RegisterBenchmark(("bias" + tag).c_str(), [bm](benchmark::State& st) {
      run(st, bm, [](const Model& m, Data& d, const bench::States& s, int k) {
        benchmark::DoNotOptimize(bias_forces(m, d, s.q[k], s.v[k]).data());
      });
    });
    benchmark::RegisterBenchmark(("crba" + tag).c_str(), [bm](benchmark::State& st) {
      run(st, bm, [](const Model& m, Data& d, const bench::States& s, int k) {
        benchmark::DoNotOptimize(crba(m, d, s.q[k]).data());
      });
    });
    benchmark::RegisterBenchmark(("aba" + tag).c_str(), [bm](benchmark::State& st) {
      run(st, bm, [](const Model& m, Data& d, const bench::States& s, int k) {
        benchmark::DoNotOptimize(aba(m, d, s.q[k], s.v[k], s.a[k]).data());
      });
    });
    benchmark::RegisterBenchmark(("ltdl_factor_solve" + tag).c_str(), [bm](benchmark::State& st) {
      const Model m0 = bench::load_bench_model(bm);
      Data d0(m0);
      VectorX x(m0.nv());
      run(st, bm, [&x](const Model& m, Data& d, const bench::States& s, int k) {
        if (k == 0) unchecked::crba(m, d, s.q[0]);
        ltdl(m, d);
        x = s.a[k];
        ltdl_solve(m, d, x);
        benchmark::DoNotOptimize(x.data());
      });
    });
    benchmark::RegisterBenchmark(("frame_jacobian" + tag).c_str(), [bm](benchmark::State& st) {
      run(st, bm, [](const Model& m, Data& d, const bench::States& s, int k) {
        const int frame = static_cast<int>(m.frames().size()) - 1;  // a leaf frame
        static thread_local Matrix6X J;
        J.resize(6, m.nv());
        frame_jacobian(m, d, s.q[k], frame, ReferenceFrame::LocalWorldAligned, J);
        benchmark::DoNotOptimize(J.data());
      });
    });
    if (bm.label == "quadruped") {
      benchmark::RegisterBenchmark(("feet_jacobians" + tag).c_str(), [bm](benchmark::State& st) {
        const Model m0 = bench::load_bench_model(bm);
        std::vector<int> feet;
        for (const char* f : {"LF_foot", "RF_foot", "LH_foot", "RH_foot"}) feet.push_back(m0.get_frame(f));
        Matrix6X J(6, m0.nv());
        run(st, bm, [&](const Model& m, Data& d, const bench::States& s, int k) {
          forward_kinematics(m, d, s.q[k]);
          for (int f : feet) {
            frame_jacobian(m, d, f, ReferenceFrame::LocalWorldAligned, J);
            benchmark::DoNotOptimize(J.data());
          }
        });
      });
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
