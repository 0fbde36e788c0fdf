// Bodies on bodies (issue 16): whole runs of the stacking worlds per scheme.
//
//   build/bench/bench_stacking [--benchmark_filter=stack_3]
//
// Timed and counted like bench_simulation (scenario_runs.hpp); `contacts`
// tells the touching contacts of the N-cube stacks.
#include <string>

#include "scenario_runs.hpp"

using namespace plume;

namespace {

void run_scenario(benchmark::State& state, const Scenario& scenario, Scheme scheme, double duration) {
  SimulationOptions options = scenario.options;
  options.scheme = scheme;
  options.duration = duration;
  options.output_rate = 0;
  bench::time_runs(state, scenario, options);
}

void BM_World(benchmark::State& state, const std::string& file, Scheme scheme, double duration) {
  run_scenario(state, load_world(std::string(PLUME_MODELS_DIR) + "/worlds/" + file), scheme, duration);
}

// N cubes stacked straight at rest (4 contacts per face, 4N in all).
void BM_StackOfN(benchmark::State& state, Scheme scheme) {
  const int n = static_cast<int>(state.range(0));
  std::string xml = "<world gravity=\"0 0 -9.81\">\n";
  for (int i = 0; i < n; ++i) {
    xml += "<model name=\"cube_" + std::to_string(i + 1) + "\" urdf=\"cube.urdf\" root=\"free\"><state q=\"0 0 " +
           std::to_string(0.05 + 0.1 * i) + " 0 0 0 1\"/></model>\n";
  }
  xml += "<ground normal=\"0 0 1\" offset=\"0\"/><contact mu=\"0.5\" restitution=\"0\"/></world>\n";
  run_scenario(state, load_world_string(xml, "stack_of_n", PLUME_MODELS_DIR), scheme, 1.0);
}

}  // namespace

#define PLUME_WORLD_BENCH(name, file, duration)                                                              \
  BENCHMARK_CAPTURE(BM_World, name##_event_driven, file, Scheme::EventDriven, duration)                     \
      ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);                                      \
  BENCHMARK_CAPTURE(BM_World, name##_time_stepping, file, Scheme::TimeStepping, duration)                   \
      ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);                                      \
  BENCHMARK_CAPTURE(BM_World, name##_compliant, file, Scheme::Compliant, duration)                          \
      ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1)

// The scenes: the stack of 3 cubes (3 cm offsets), a pyramid of 10,
// the cube drop, the humanoid landing (PD) and collapsing (limp), the
// quadruped demo.
PLUME_WORLD_BENCH(stack_3_offset, "stack_3_offset.xml", 1.0);
PLUME_WORLD_BENCH(pyramid_10, "pyramid_10.xml", 1.0);
PLUME_WORLD_BENCH(cube_on_cube, "cube_on_cube.xml", 1.0);
PLUME_WORLD_BENCH(humanoid_falling, "humanoid_falling.xml", 1.5);
PLUME_WORLD_BENCH(quadruped_standing, "quadruped_standing.xml", 1.0);
// The limp humanoid collapsing, its first 0.8 s (the fold onto the joint
// limits and the heels, the Painlevé jam at 0.522 s), and the whole 2 s in
// the rigid schemes (the compliant one took about 9 s of CPU for it).
PLUME_WORLD_BENCH(humanoid_collapse, "humanoid_collapse.xml", 0.8);
BENCHMARK_CAPTURE(BM_World, humanoid_collapse_2s_event_driven, "humanoid_collapse.xml", Scheme::EventDriven, 2.0)
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_World, humanoid_collapse_2s_time_stepping, "humanoid_collapse.xml", Scheme::TimeStepping, 2.0)
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);

// How the cost grows with the number of contacts: 1 to 10 stacked cubes.
BENCHMARK_CAPTURE(BM_StackOfN, event_driven, Scheme::EventDriven)
    ->DenseRange(1, 10)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_StackOfN, time_stepping, Scheme::TimeStepping)
    ->DenseRange(1, 10)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_MAIN();
