// Batch throughput (issue 17, item 4): 16 runs of the quadruped demo
// (models/worlds/quadruped_standing.xml, its 2 s with the 1 kHz PD, recorded
// in memory) through plume::run_batch with jobs = 1 and jobs = 2.
//
//   build/bench/bench_batch [--benchmark_filter=speedup]
//
// Counters:
//   runs_per_s     runs per wall second (the throughput)
//   rtf            simulated seconds per wall second, all runs together
//   cpu_s          CPU seconds of the whole process per batch (every thread)
//   cpu_per_wall   cpu_s / wall time: how many cores the batch really had
//   runs_per_cpu_s runs per CPU second (equal for both jobs if threads cost nothing)
// batch_speedup runs jobs = 1 and jobs = 2 alternately in every iteration
// (so that both see the same machine load) and reports
//   speedup        wall(jobs = 1) / wall(jobs = 2), summed over the iterations
//   cpu_ratio      cpu(jobs = 2) / cpu(jobs = 1): the CPU the threads cost extra
// On a machine shared with other work, wall-time speedups depend on the load
// (give `uptime` with the figures); the CPU figures do not.
#include <benchmark/benchmark.h>

#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include "plume/sim/batch.hpp"
#include "plume/sim/world_file.hpp"

using namespace plume;

namespace {

constexpr int kRuns = 16;

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

const Scenario& demo() {
  static const Scenario s = load_world(std::string(PLUME_MODELS_DIR) + "/worlds/quadruped_standing.xml");
  return s;
}

struct Timing {
  double wall = 0.0, cpu = 0.0, simulated = 0.0;
  bool ok = true;
  std::string message;
};

Timing time_batch(int jobs) {
  const std::vector<RunOverrides> runs(kRuns);
  BatchOptions options;
  options.jobs = jobs;
  const double cpu0 = process_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<BatchResult> results = run_batch(demo(), runs, options);
  Timing t;
  t.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.cpu = process_cpu_seconds() - cpu0;
  for (const BatchResult& r : results) {
    t.simulated += r.time;
    if (r.status != SimulationStatus::Finished) {
      t.ok = false;
      t.message = r.message;
    }
  }
  return t;
}

void BM_Batch(benchmark::State& state) {
  const int jobs = static_cast<int>(state.range(0));
  double wall = 0.0, cpu = 0.0, simulated = 0.0;
  long batches = 0;
  for (auto _ : state) {
    const Timing t = time_batch(jobs);
    state.SetIterationTime(t.wall);
    if (!t.ok) {
      state.SkipWithError(("a run stopped early: " + t.message).c_str());
      break;
    }
    wall += t.wall;
    cpu += t.cpu;
    simulated += t.simulated;
    ++batches;
  }
  if (batches == 0) return;
  const double runs = static_cast<double>(batches * kRuns);
  state.counters["runs_per_s"] = runs / wall;
  state.counters["rtf"] = simulated / wall;
  state.counters["cpu_s"] = cpu / static_cast<double>(batches);
  state.counters["cpu_per_wall"] = cpu / wall;
  state.counters["runs_per_cpu_s"] = runs / cpu;
}

void BM_BatchSpeedup(benchmark::State& state) {
  double wall1 = 0.0, wall2 = 0.0, cpu1 = 0.0, cpu2 = 0.0;
  for (auto _ : state) {
    const Timing one = time_batch(1);
    const Timing two = time_batch(2);
    state.SetIterationTime(one.wall + two.wall);
    if (!one.ok || !two.ok) {
      state.SkipWithError(("a run stopped early: " + one.message + two.message).c_str());
      break;
    }
    wall1 += one.wall;
    wall2 += two.wall;
    cpu1 += one.cpu;
    cpu2 += two.cpu;
  }
  if (wall2 <= 0.0 || cpu1 <= 0.0) return;
  state.counters["speedup"] = wall1 / wall2;
  state.counters["cpu_ratio"] = cpu2 / cpu1;
  state.counters["wall_jobs1_s"] = wall1 / static_cast<double>(state.iterations());
  state.counters["wall_jobs2_s"] = wall2 / static_cast<double>(state.iterations());
}

}  // namespace

BENCHMARK(BM_Batch)->ArgName("jobs")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_BatchSpeedup)->Name("batch_speedup/quadruped_16_runs")->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

BENCHMARK_MAIN();
