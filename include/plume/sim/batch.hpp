#pragma once
/// @file
/// Many runs at once: a list of scenarios, or one scenario with per-run
/// overrides of the initial state, the PD controller's gains, the contact
/// parameters and the simulation options, run on a pool of threads.
///
/// ```cpp
/// const plume::Scenario demo = plume::load_world("models/worlds/quadruped_standing.xml");
/// std::vector<plume::RunOverrides> runs(3);
/// runs[0].contact = runs[1].contact = runs[2].contact = demo.world.default_contact();
/// runs[0].contact->mu = 0.2;
/// runs[1].contact->mu = 0.5;
/// runs[2].contact->mu = 1.0;
/// std::vector<plume::BatchResult> results = plume::run_batch(demo, runs, {/*jobs=*/2});
/// ```
///
/// Each run owns everything it mutates (its World copy, Simulator, Data,
/// controller and recording); the threads share only the read-only
/// scenarios. So a run's result is bit-identical to the same run made
/// serially with a Simulator (tests/test_batch.cpp compares every sample,
/// event and statistic with ==), whatever the number of jobs or the order in
/// which the threads take the runs. Results come back in the order of the
/// runs.
///
/// A run that cannot start (an override of the wrong size, an initial state
/// sunk into the ground, inconsistent options) or that stops early returns
/// its status and message, with what it computed up to then; it does not stop
/// the other runs.

#include <optional>
#include <string>
#include <vector>

#include "plume/sim/simulator.hpp"
#include "plume/sim/world.hpp"
#include "plume/sim/world_file.hpp"

namespace plume {

/// The initial state of one model of the world (WorldBuilder::set_state):
/// q has the model's nq entries, v its nv, in the model's own coordinates
/// (a free-flyer's position in the world frame, its quaternion x y z w, its
/// velocity in the body frame: the layout of World::q0() and World::v0()).
struct ModelState {
  std::string model;          ///< a name in World::models()
  std::optional<VectorX> q;   ///< unset: the scenario's
  std::optional<VectorX> v;   ///< unset: the scenario's
};

/// What one run of a batch changes in its scenario. Unset members keep the
/// scenario's values.
struct RunOverrides {
  /// The whole world's initial configuration [nq] and velocity [nv]
  /// (World::q0(), World::v0() layout), applied before `states`.
  std::optional<VectorX> q0, v0;
  /// Initial states of single models, applied in order after q0 and v0.
  std::vector<ModelState> states;
  /// The PD controller's gains [nv] and target [nq] (PdController). The
  /// scenario must have a controller (a world file's `<controller type="pd">`).
  std::optional<VectorX> kp, kd, q_target;
  /// The world's default contact parameters (World::default_contact()): as a
  /// world file's `<contact>` without a and b. Pair overrides and URDF
  /// materials still refine it, as they refine the world's own default.
  std::optional<ContactParameters> contact;
  /// Pair overrides put before the world's own (the first match wins).
  std::vector<ContactPairParameters> pair_contacts;
  /// Replaces the scenario's options (scheme, duration, tolerances, …).
  std::optional<SimulationOptions> options;
};

struct BatchOptions {
  /// Threads running the runs; 0: std::thread::hardware_concurrency()
  /// (1 if unknown). Never more threads than runs; 1 runs them all on the
  /// calling thread.
  int jobs = 0;
  /// Keep each run's samples, events and contact samples in
  /// BatchResult::recording (false: only the result and the final state).
  bool record = true;
};

/// One run's outcome: SimulationResult's status, message, time and
/// statistics, plus what the run leaves behind.
struct BatchResult : SimulationResult {
  /// The state where the run stopped (empty if it never started) [nq], [nv].
  VectorX q, v;
  /// Samples, events and contact samples, as a MemoryRecorder passed to
  /// Simulator::run_until records them (kept when the run stops early).
  MemoryRecorder recording;
  /// False when the run could not start (status Failed; the message says
  /// why and what to change); nothing was simulated then.
  bool started = false;
};

/// A copy of `scenario` with `overrides` applied (what run_batch runs).
/// @throws WorldError naming the override at fault (wrong size, unknown
/// model, invalid contact parameters) or ArgumentError (gains without a
/// controller).
Scenario apply_overrides(const Scenario& scenario, const RunOverrides& overrides);

/// Runs every scenario to its options' duration, with its PD controller if
/// it has one, on `options.jobs` threads; results in the scenarios' order.
/// @throws ArgumentError if options.jobs < 0; everything else is reported
/// in the run's BatchResult.
std::vector<BatchResult> run_batch(const std::vector<Scenario>& scenarios, const BatchOptions& options = {});

/// Runs `scenario` once per entry of `runs`, with that entry's overrides.
std::vector<BatchResult> run_batch(const Scenario& scenario, const std::vector<RunOverrides>& runs,
                                   const BatchOptions& options = {});

}  // namespace plume
