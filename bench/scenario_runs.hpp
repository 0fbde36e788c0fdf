#pragma once
// Timing whole simulation runs of a Scenario (bench_simulation, bench_stacking):
// a fresh Simulator per iteration with the scenario's controller, only
// Simulator::run_until timed (manual time). Counters, per run:
//   rtf              simulated seconds / wall seconds
//   rtf_cpu          simulated seconds / CPU seconds of the running thread
//                    (the figure to compare on a shared, loaded machine)
//   events_per_s     events per wall second
//   fallbacks_per_s  event-driven velocity-level fallback windows per simulated second
//   steps, events, rhs, lcp   the run's SimulationStatistics
//   contacts         touching contacts at the end of the run
//   max_pen_m        largest penetration −φ [m]
// A run that does not finish ends the benchmark with its message.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>

#include "plume/sim/simulator.hpp"
#include "plume/sim/world_file.hpp"

namespace plume::bench {

// CPU time of the calling thread [s].
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

inline void time_runs(benchmark::State& state, const Scenario& scenario, const SimulationOptions& options) {
  const double duration = options.duration;
  double simulated = 0.0, wall = 0.0, cpu = 0.0, max_penetration = 0.0;
  long steps = 0, events = 0, rhs = 0, lcp = 0, fallbacks = 0, contacts = 0, runs = 0;
  for (auto _ : state) {
    Simulator sim(scenario.world, options);
    if (scenario.controller) {
      sim.set_controller(scenario.controller->function(scenario.world.model()), scenario.controller_period);
    }
    const double cpu0 = thread_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    const SimulationResult result = sim.run_until(duration);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu_seconds = thread_cpu_seconds() - cpu0;
    state.SetIterationTime(seconds);
    if (result.status != SimulationStatus::Finished) {
      state.SkipWithError(("the run stopped early: " + result.message).c_str());
      break;
    }
    simulated += result.time;
    wall += seconds;
    cpu += cpu_seconds;
    steps += result.statistics.steps;
    events += result.statistics.events;
    rhs += result.statistics.rhs_evaluations;
    lcp += result.statistics.lcp_solves;
    fallbacks += result.statistics.fallbacks;
    contacts += static_cast<long>(sim.current_contacts().size());
    max_penetration = std::max(max_penetration, result.statistics.max_penetration);
    ++runs;
  }
  if (runs == 0) return;
  const double n = static_cast<double>(runs);
  state.counters["rtf"] = simulated / wall;
  state.counters["rtf_cpu"] = cpu > 0.0 ? simulated / cpu : 0.0;
  state.counters["events_per_s"] = static_cast<double>(events) / wall;
  state.counters["fallbacks_per_s"] = static_cast<double>(fallbacks) / simulated;
  state.counters["steps"] = static_cast<double>(steps) / n;
  state.counters["events"] = static_cast<double>(events) / n;
  state.counters["rhs"] = static_cast<double>(rhs) / n;
  state.counters["lcp"] = static_cast<double>(lcp) / n;
  state.counters["contacts"] = static_cast<double>(contacts) / n;
  state.counters["max_pen_m"] = max_penetration;
}

}  // namespace plume::bench
