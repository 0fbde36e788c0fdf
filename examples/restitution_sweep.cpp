// Many runs at once: the bouncing-ball world run with five restitutions
// through plume::run_batch, one RunOverrides per run, on two threads. Each
// run owns its state, so the results are those of five serial runs, bit for
// bit, in the order of the overrides.
//
//   restitution_sweep [models/worlds/bouncing_ball.xml]
//
// Closed form checked: the ball (its bottom 1 m above the ground) first
// lands at t₁ = √(2h/g) and its bounces accumulate at t∞ = t₁ (1 + e)/(1 − e),
// where the simulator logs the zeno_rest event.
#include <plume/plume.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "models/worlds/bouncing_ball.xml";
  const plume::Scenario ball = plume::load_world(path);
  const double g = 9.81, h = 1.0;  // the world drops the ball's bottom from 1 m
  const double t1 = std::sqrt(2.0 * h / g);

  const std::vector<double> restitutions = {0.3, 0.5, 0.7, 0.8, 0.9};
  std::vector<plume::RunOverrides> runs(restitutions.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    runs[i].contact = ball.world.default_contact();
    runs[i].contact->restitution = restitutions[i];
    plume::SimulationOptions options = ball.options;
    options.duration = 10.0;  // past t∞ = 8.6 s of e = 0.9
    runs[i].options = options;
  }
  plume::BatchOptions batch;
  batch.jobs = 2;
  const std::vector<plume::BatchResult> results = plume::run_batch(ball, runs, batch);

  double worst = 0.0;
  int finished = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const plume::BatchResult& r = results[i];
    const double e = restitutions[i];
    double rest = std::nan("");
    for (const plume::SimulationEvent& ev : r.recording.events) {
      if (ev.kind == plume::EventKind::ZenoRest) rest = ev.time;
    }
    const double expected = t1 * (1.0 + e) / (1.0 - e);
    std::printf("e = %.1f: %s, %ld impacts, at rest from t = %.12f s (closed form %.12f s, %.1e s apart)\n", e,
                plume::to_string(r.status), r.statistics.impacts, rest, expected, std::abs(rest - expected));
    if (r.status == plume::SimulationStatus::Finished) ++finished;
    worst = std::isfinite(rest) ? std::max(worst, std::abs(rest - expected)) : INFINITY;
  }
  const bool ok = finished == static_cast<int>(results.size()) && worst < 1e-9;
  std::printf("check: %d of %zu runs finished, each at rest at t_inf = t1 (1 + e)/(1 - e) (worst %.1e s): %s\n",
              finished, results.size(), worst, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
