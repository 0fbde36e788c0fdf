// The fallback: velocity-level steps where the force LCP is left unsolved.
// Lemke can fail on the acceleration-level frictional LCP without proving
// that no forces exist: dependent contacts (a trunk's coplanar corners, a
// foot on a joint limit) make its data only numerically orthogonal to the
// matrix's null directions. The velocity-level problem of a
// Stewart–Trinkle step has data exactly orthogonal to them and is always
// solved. For SimulationOptions::fallback_duration the run advances by
// such steps (fallback_step long, semi-implicit: v⁺ from the impulse LCP,
// then q += h v⁺), after which the event-driven integration resumes.
#include <algorithm>
#include <cmath>

#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "sim/event_driven.hpp"

namespace plume::detail {

// handle_contacts; where its LCP is left unsolved and fallbacks are on,
// fallback windows until it succeeds (or `until` is reached).
bool EventDrivenCore::resolve_contacts(SimulationResult& result, double until) {
  contacts_pending = false;
  for (;;) {
    fallback_reason.clear();
    if (handle_contacts(result)) return true;
    if (fallback_reason.empty() || !window(result, until)) return false;
    if (contacts_pending) return true;
  }
}

// A failure the fallback can get past (fallback_reason set by the failing
// site): a window, then the contact sets at the new state; false when
// fallbacks are off or the rescue itself fails (the status in result).
bool EventDrivenCore::rescue(SimulationResult& result, double until) {
  if (fallback_reason.empty() || opt.fallback_duration <= 0.0 || !window(result, until)) return false;
  return contacts_pending || resolve_contacts(result, until);
}

// A step the integrator could not take (`reason`: too short, or too many
// tiny ones in a row) while contacts are in the current set: a rescue, the
// sensitivity given up, a fresh start. None: no rescue (no contacts,
// fallbacks off, or no window), the caller ends the run with its own status.
EventDrivenCore::StepRescue EventDrivenCore::rescue_step(SimulationResult& result, double until,
                                                         const std::string& reason) {
  if (current.empty()) return StepRescue::None;
  fallback_reason = reason;
  if (rescue(result, until)) {
    sensitivity_invalidate("a velocity-level fallback window");
    return resume_after_rescue(result) ? StepRescue::Resumed : StepRescue::Stop;
  }
  return result.status != SimulationStatus::Finished ? StepRescue::Stop : StepRescue::None;
}

// One fallback window from a clean result; a window that reaches `until`
// leaves the contact sets to the next run_until (contacts_pending).
bool EventDrivenCore::window(SimulationResult& result, double until) {
  result = SimulationResult{};
  if (!fallback_window(result, until)) return false;
  if (t >= until) {
    contacts_pending = true;
    current.clear();
    refresh_view();
  }
  return true;
}

// After a rescue inside the main loop: a fresh start of the integration.
bool EventDrivenCore::resume_after_rescue(SimulationResult& result) {
  suppressed.clear();
  tiny_steps = 0;
  events_at_same_time = 0;
  if (next_sample <= t && !sample_controller(result)) return false;
  record_sample_if_event(last_sample_time != t);
  restart_stepper(opt.initial_step);
  return true;
}

bool EventDrivenCore::fallback_window(SimulationResult& result, double until) {
  const Model& m = model();
  const double t_end = std::min(until, t + opt.fallback_duration);
  ++stats.fallbacks;
  memo.valid = false;
  held.clear();
  suppressed.clear();
  if (!wide) {
    DetectionOptions d;
    d.margin = kFallbackMargin;
    d.self_collision = world.self_collision();
    wide.emplace(m, world.environment(), d);
  }
  // Which contacts the window starts from, and why.
  normalize_configuration(m, q);
  detect_all(q, opt.contact_tolerance, touching);
  for (const Contact& c : touching) emit(t, EventKind::Fallback, c, 0.0, 0.0, 0.0);
  const std::string why = fallback_reason;
  fallback_reason.clear();
  fallback_log.push_back("t = " + fmt(t) + ": " + why);
  std::vector<Contact> near;
  VectorX mu, e, gaps, tau_all(m.nv()), vminus(m.nv());
  const double t_start = t;
  auto record_due = [&] {
    if (!rec || opt.output_rate <= 0.0 || next_output > t) return;
    record_sample(t, q, v);
    next_output = std::round((next_output + 1.0 / opt.output_rate) * opt.output_rate) / opt.output_rate;
  };
  while (t < t_end) {
    if (next_sample <= t && !sample_controller(result)) return false;
    record_due();
    double h = std::min({opt.fallback_step, t_end - t, next_sample - t});
    if (rec && opt.output_rate > 0.0) h = std::min(h, next_output - t);
    if (t_end - (t + h) < 1e-9 * opt.fallback_step) h = t_end - t;  // no sliver at the end
    // Contacts within reach: every gap below kFallbackMargin (the LCP lets
    // each close by at most its gap).
    unchecked::forward_kinematics(m, data, q);
    wide->detect(m, data, near);
    if (opt.joint_limits) detect_joint_limits(m, q, kFallbackMargin, near);
    const int n = static_cast<int>(near.size());
    mu.resize(n);
    e = VectorX::Zero(n);
    gaps.resize(n);
    double unused = 0.0;
    for (int i = 0; i < n; ++i) {
      parameters_of(near[i], mu(i), unused);
      gaps(i) = near[i].gap;
      count_penetration(stats, near[i]);
    }
    tau_all = tau + passive();
    vminus = v + h * unchecked::aba(m, data, q, v, tau_all);
    if (n > 0) {
      ImpactOptions io;
      io.friction = mu.maxCoeff() > 0.0 ? FrictionModel::PolyhedralCone : FrictionModel::None;
      io.cone_directions = opt.cone_directions;
      io.time_step = h;
      io.gaps = gaps;
      // Rigid first; where dependent contacts defeat Lemke even here, a
      // growing compliance (their impulses in least-squares share).
      const ImpactSolution* sp = nullptr;
      for (const double compliance : {0.0, 1e-6, 1e-4, 1e-2}) {
        io.compliance = compliance;
        sp = &solver.impact(m, data, q, vminus, near, e, mu, io);
        ++stats.lcp_solves;
        if (sp->status == ContactStatus::Solved) break;
      }
      const ImpactSolution& s = *sp;
      if (s.status != ContactStatus::Solved) {
        return fail(result, SimulationStatus::ContactFailure,
                    "velocity-level fallback step at t = " + fmt(t) + ": " + contact_failure_words(s.status, s.message) +
                        " for " + catalogue.names_of(m, near) + " (after " + why + ")");
      }
      vminus = s.v_plus;
    }
    v = vminus;
    q = integrate(m, q, v, h);
    normalize_configuration(m, q);
    t = (t_end - (t + h) <= 0.0) ? t_end : t + h;
    ++stats.steps;
    if (!q.allFinite() || !v.allFinite()) {
      return fail(result, SimulationStatus::NonFinite, "the state became non-finite in a fallback step at t ≈ " + fmt(t));
    }
    track_penetration(q);
  }
  record_due();
  stats.fallback_time += t - t_start;
  memo.valid = false;
  return true;
}

}  // namespace plume::detail
