// Simulation benchmarks: whole event-driven runs of the demo worlds, as
// `plume simulate` runs them but without a recorder (no file output).
//
//   build/bench/bench_simulation [--benchmark_filter=quadruped]
//
// Each iteration loads nothing: the world file is read once, and a fresh
// Simulator (with the world's controller, if any) is built outside the timed
// region; only Simulator::run_until is timed (manual time). The counters
// (rtf, events_per_s, steps, events, rhs, lcp, max_pen_m, …) are described
// in scenario_runs.hpp; controller samples are not events.
#include <string>

#include "scenario_runs.hpp"

using namespace plume;

namespace {

// event_time_tolerance > 0 overrides the world's (and the default's).
void BM_SimulateWorld(benchmark::State& state, const std::string& file, double duration,
                      double event_time_tolerance = 0.0) {
  const Scenario scenario = load_world(std::string(PLUME_MODELS_DIR) + "/worlds/" + file);
  SimulationOptions options = scenario.options;
  options.duration = duration;
  if (event_time_tolerance > 0.0) options.event_time_tolerance = event_time_tolerance;
  bench::time_runs(state, scenario, options);
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
