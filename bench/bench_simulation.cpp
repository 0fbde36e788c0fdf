// Simulation benchmarks: whole event-driven runs of the demo worlds, as
// `plume simulate` runs them but without a recorder (no file output).
//
//   build/bench/bench_simulation [--benchmark_filter=quadruped]
//
// Each iteration loads nothing: the world file is read once, and a fresh
// Simulator (with the world's controller, if any) is built outside the timed
// region; only Simulator::run_until is timed (manual time). Counters, per run:
//   rtf            simulated seconds / wall seconds
//   events_per_s   contact events handled per wall second (controller samples
//                  are not events in SimulationStatistics)
//   steps, events, rhs, lcp   the run's SimulationStatistics
//   max_pen_m      largest penetration −φ of any contact [m]
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

#include "plume/sim/simulator.hpp"
#include "plume/sim/world_file.hpp"

using namespace plume;

namespace {

// event_time_tolerance > 0 overrides the world's (and the default's).
void BM_SimulateWorld(benchmark::State& state, const std::string& file, double duration,
                      double event_time_tolerance = 0.0) {
  const Scenario scenario = load_world(std::string(PLUME_MODELS_DIR) + "/worlds/" + file);
  SimulationOptions options = scenario.options;
  options.duration = duration;
  if (event_time_tolerance > 0.0) options.event_time_tolerance = event_time_tolerance;
  double simulated = 0.0, wall = 0.0, max_penetration = 0.0;
  long steps = 0, events = 0, rhs = 0, lcp = 0, runs = 0;
  for (auto _ : state) {
    Simulator sim(scenario.world, options);
    if (scenario.controller) {
      sim.set_controller(scenario.controller->function(scenario.world.model()), scenario.controller_period);
    }
    const auto t0 = std::chrono::steady_clock::now();
    const SimulationResult result = sim.run_until(duration);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(seconds);
    if (result.status != SimulationStatus::Finished) {
      state.SkipWithError(("the run stopped early: " + result.message).c_str());
      break;
    }
    simulated += result.time;
    wall += seconds;
    steps += result.statistics.steps;
    events += result.statistics.events;
    rhs += result.statistics.rhs_evaluations;
    lcp += result.statistics.lcp_solves;
    max_penetration = std::max(max_penetration, result.statistics.max_penetration);
    ++runs;
  }
  if (runs == 0) return;
  const double n = static_cast<double>(runs);
  state.counters["rtf"] = simulated / wall;
  state.counters["events_per_s"] = static_cast<double>(events) / wall;
  state.counters["steps"] = static_cast<double>(steps) / n;
  state.counters["events"] = static_cast<double>(events) / n;
  state.counters["rhs"] = static_cast<double>(rhs) / n;
  state.counters["lcp"] = static_cast<double>(lcp) / n;
  state.counters["max_pen_m"] = max_penetration;
}

}  // namespace

// The quadruped demo (1 kHz PD controller, torque limits, μ = 1) over 10 s:
// landing at t ≈ 0.064 s, then standing; about a second per run.
BENCHMARK_CAPTURE(BM_SimulateWorld, quadruped_standing_10s, "quadruped_standing.xml", 10.0)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
// The mesh-footed lynx (models/lynx_description: package:// meshes hulled at
// load, posture from its SRDF, self-collision on with the SRDF's pairs left
// out) standing under the same PD over 10 s: the target is the
// primitive quadruped's real-time factor.
BENCHMARK_CAPTURE(BM_SimulateWorld, lynx_standing_10s, "lynx_standing.xml", 10.0)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
// The bouncing ball (e = 0.8) over its world's 5 s: the bounces accumulate
// at t ≈ 4.06 s and the ball comes to rest (zeno_rest).
BENCHMARK_CAPTURE(BM_SimulateWorld, bouncing_ball_5s, "bouncing_ball.xml", 5.0)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
// The same two runs with events located to 1e-10 s only (the default before
// events were located to machine precision): what the precision costs.
BENCHMARK_CAPTURE(BM_SimulateWorld, quadruped_standing_10s_events_1e-10, "quadruped_standing.xml", 10.0, 1e-10)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_SimulateWorld, bouncing_ball_5s_events_1e-10, "bouncing_ball.xml", 5.0, 1e-10)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
