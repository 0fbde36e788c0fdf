// run_batch: runs on a pool of std::threads, each run owning all its mutable
// state (see plume/sim/batch.hpp).
//
// What the threads share, read-only: the Scenario(s) and the RunOverrides.
// Each run copies its World into its own Simulator (which holds its Data,
// detector buffers, steppers and LCP workspaces), builds its own controller
// closure, and records into its own BatchResult, a distinct element of a
// vector sized before the threads start. The only shared mutable object is
// the atomic index of the next run. The library holds no mutable statics on
// the simulation path (the hull narrow phase's scratch is thread_local; the
// URDF parser and the package:// resolver, used only when loading, lock
// their own mutexes). So a run computes exactly what it computes serially.
#include "plume/sim/batch.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <optional>
#include <system_error>
#include <thread>

#include "plume/error.hpp"

namespace plume {

namespace {

std::string entries(Eigen::Index n) { return std::to_string(n) + (n == 1 ? " entry" : " entries"); }

void check_size(const VectorX& x, Eigen::Index expected, const std::string& what, const std::string& fix) {
  if (x.size() != expected) {
    throw ArgumentError(what + " has " + entries(x.size()) + ", expected " + std::to_string(expected) + fix);
  }
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x(i))) {
      throw ArgumentError(what + "[" + std::to_string(i) + "] is not finite" + fix);
    }
  }
}

// One run, start to end; never throws (everything goes into the result).
BatchResult run_one(const Scenario& base, const RunOverrides* overrides, bool record) {
  BatchResult out;
  try {
    std::optional<Scenario> modified;
    if (overrides) modified = apply_overrides(base, *overrides);
    const Scenario& s = modified ? *modified : base;
    Simulator sim(s.world, s.options);
    if (s.controller) sim.set_controller(s.controller->function(sim.world().model()), s.controller_period);
    out.started = true;
    try {
      static_cast<SimulationResult&>(out) = sim.run_until(s.options.duration, record ? &out.recording : nullptr);
    } catch (const std::exception& e) {
      // The controller (or anything below) threw: the run failed all the
      // same, and what it recorded is kept.
      out.status = SimulationStatus::Failed;
      out.message = std::string("the simulator threw: ") + e.what();
      out.time = sim.time();
    }
    out.q = sim.q();
    out.v = sim.v();
  } catch (const std::exception& e) {
    out.status = SimulationStatus::Failed;
    out.message = std::string(out.started ? "" : "could not start: ") + e.what();
  } catch (...) {
    out.status = SimulationStatus::Failed;
    out.message = "an exception that is not a std::exception";
  }
  return out;
}

// Calls work(i) for i in [0, n) on `jobs` threads, the calling thread one of
// them; each index exactly once. `work` must not throw.
template <class Work>
void for_each_index(std::size_t n, int jobs, const Work& work) {
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) work(i);
  };
  const std::size_t threads = std::min(n, static_cast<std::size_t>(std::max(jobs, 1)));
  std::vector<std::thread> pool;
  pool.reserve(threads > 0 ? threads - 1 : 0);
  for (std::size_t k = 1; k < threads; ++k) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // fewer threads than asked: the others take the runs
    }
  }
  worker();
  for (std::thread& t : pool) t.join();
}

int resolve_jobs(const BatchOptions& options) {
  if (options.jobs < 0) {
    throw ArgumentError("BatchOptions::jobs is " + std::to_string(options.jobs) +
                        "; give the number of threads, or 0 for one per hardware thread");
  }
  if (options.jobs > 0) return options.jobs;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

std::string run_name(std::size_t index, const Scenario& s) {
  return "run " + std::to_string(index) + (s.source.empty() ? std::string() : " (" + s.source + ")") + ": ";
}

}  // namespace

Scenario apply_overrides(const Scenario& scenario, const RunOverrides& o) {
  Scenario s = scenario;
  const World& w = scenario.world;
  if (o.q0 || o.v0 || !o.states.empty()) {
    // The whole-world state first (checked: sizes, finite, unit quaternions), then single models over it.
    if (o.q0 || o.v0) s.world = w.with_initial_state(o.q0, o.v0);
    VectorX q = s.world.q0();
    VectorX v = s.world.v0();
    for (const ModelState& m : o.states) {
      const int k = w.model_index(m.model);
      if (k < 0) {
        std::string names;
        for (const WorldModel& wm : w.models()) names += (names.empty() ? "'" : ", '") + wm.name + "'";
        throw WorldError("state override for model '" + m.model + "', which the world does not have (its models: " +
                         names + ")");
      }
      const WorldModel& wm = w.models()[static_cast<std::size_t>(k)];
      if (m.q) {
        if (m.q->size() != wm.nq) {
          throw WorldError("state override of model '" + m.model + "': q has " + entries(m.q->size()) + ", expected " +
                           std::to_string(wm.nq) + " (the model's nq)");
        }
        q.segment(wm.q_index, wm.nq) = *m.q;
      }
      if (m.v) {
        if (m.v->size() != wm.nv) {
          throw WorldError("state override of model '" + m.model + "': v has " + entries(m.v->size()) + ", expected " +
                           std::to_string(wm.nv) + " (the model's nv)");
        }
        v.segment(wm.v_index, wm.nv) = *m.v;
      }
    }
    s.world = s.world.with_initial_state(q, v);
  }
  if (o.contact) s.world = s.world.with_default_contact(*o.contact);
  // In reverse, so that the overrides keep their order ahead of the world's.
  for (auto it = o.pair_contacts.rbegin(); it != o.pair_contacts.rend(); ++it) s.world = s.world.with_pair_contact(*it);
  if (o.kp || o.kd || o.q_target) {
    if (!s.controller) {
      throw ArgumentError("controller gains given, but the scenario has no PD controller: add a <controller "
                          "type=\"pd\"> to the world file, or leave kp, kd and q_target unset");
    }
    const std::string per_dof = " (one per velocity coordinate, nv; 0 on unactuated ones)";
    if (o.kp) check_size(*o.kp, w.model().nv(), "controller gain kp", per_dof);
    if (o.kd) check_size(*o.kd, w.model().nv(), "controller gain kd", per_dof);
    if (o.q_target) check_size(*o.q_target, w.model().nq(), "controller target q_target", " (a configuration, nq)");
    if (o.kp) s.controller->kp = *o.kp;
    if (o.kd) s.controller->kd = *o.kd;
    if (o.q_target) s.controller->q_target = *o.q_target;
  }
  if (o.options) s.options = *o.options;
  return s;
}

std::vector<BatchResult> run_batch(const std::vector<Scenario>& scenarios, const BatchOptions& options) {
  const int jobs = resolve_jobs(options);
  std::vector<BatchResult> results(scenarios.size());
  for_each_index(scenarios.size(), jobs, [&](std::size_t i) {
    results[i] = run_one(scenarios[i], nullptr, options.record);
    if (!results[i].started) results[i].message = run_name(i, scenarios[i]) + results[i].message;
  });
  return results;
}

std::vector<BatchResult> run_batch(const Scenario& scenario, const std::vector<RunOverrides>& runs,
                                   const BatchOptions& options) {
  const int jobs = resolve_jobs(options);
  std::vector<BatchResult> results(runs.size());
  for_each_index(runs.size(), jobs, [&](std::size_t i) {
    results[i] = run_one(scenario, &runs[i], options.record);
    if (!results[i].started) results[i].message = run_name(i, scenario) + results[i].message;
  });
  return results;
}

}  // namespace plume
