// The event-driven scheme's loop (Featherstone Table 11.1, docs/theory.md §4):
// integrate with the active contacts as equalities (step 1), watch the
// witnesses (step 2), stop at the earliest crossing on the dense output
// (step 3), hand it to the impact and contact-set steps (4–6), repeat (7).
// Between events: the controller's zero-order hold, drift correction and
// the outputs. The steps themselves are in the files event_driven.hpp lists.
#include "sim/event_driven.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "plume/algorithms/energy.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "sim/free_flyer_chart.hpp"
#include "sim/scheme.hpp"

namespace plume::detail {

EventDrivenCore::EventDrivenCore(World w, const SimulationOptions& o)
    : world(std::move(w)),
      opt(o),
      data(world.model()),
      catalogue(world, o.contact_tolerance),
      detector(catalogue.detector),
      solver(world.model(), 16) {
  const Model& m = world.model();
  validate_scheme_options(opt);
  q = world.q0();
  v = world.v0();
  tau = VectorX::Zero(m.nv());
  qn = q;
  zero_nv = VectorX::Zero(m.nv());
  ydot = VectorX::Zero(m.nq() + m.nv());
  a0 = VectorX::Zero(m.nv());
  x = VectorX::Zero(m.nv());
  stepper = make_dense_stepper(opt.integrator, opt.abs_tol, opt.rel_tol, opt.max_step);
  if (FreeFlyerChart::applies_to(m)) {
    auto charted = std::make_unique<FreeFlyerChart>(std::move(stepper), m);
    chart = charted.get();
    stepper = std::move(charted);
  }
  if (opt.sensitivity) sens = std::make_unique<Sensitivity>(m);
}

void EventDrivenCore::parameters_of(const Contact& c, double& mu, double& e) const {
  if (c.kind == ContactKind::JointLimit) {
    mu = 0.0;
    e = opt.joint_limit_restitution;
    return;
  }
  mu = catalogue.pair_parameters[c.pair].mu;
  e = catalogue.pair_parameters[c.pair].restitution;
}

// Every shape contact and joint limit with φ < margin at q (placements in data).
void EventDrivenCore::detect_all(const VectorX& qq, double margin, std::vector<Contact>& out) {
  catalogue.detect(model(), data, qq, margin, opt.joint_limits, out);
}

VectorX EventDrivenCore::passive() const {
  if (!opt.joint_damping) return VectorX::Zero(model().nv());
  return -model().damping().cwiseProduct(v);
}

// ---- the loop -----------------------------------------------------------------------------------
SimulationResult EventDrivenCore::run_until(double until, Recorder* recorder) {
  const auto wall0 = std::chrono::steady_clock::now();
  SimulationResult result;
  rec = recorder;
  const Model& m = model();
  if (!initialised) {
    stats.energy_start = energy_of(q, v);
    next_output = t;
    if (!sample_controller(result)) return finish(result, wall0);
    if (!resolve_contacts(result, until)) return finish(result, wall0);
    initialised = true;
    if (sens) sensitivity_start();
  } else if (contacts_pending && t < until) {
    if (!resolve_contacts(result, until)) return finish(result, wall0);
  }
  if (rec && opt.output_rate > 0 && next_output <= t) {
    record_sample(t, q, v);
    next_output = t + 1.0 / opt.output_rate;
  }
  double dt = opt.initial_step;
  restart_stepper(dt);
  const long step_cap = stats.steps + opt.max_steps;
  VectorX y0(m.nq() + m.nv());
  while (t < until) {
    if (stats.steps >= step_cap) return fail_and_finish(result, SimulationStatus::StepLimit, "more than max_steps = " + std::to_string(opt.max_steps) + " steps at t = " + fmt(t), wall0);
    y0 << q, v;
    // The witnesses of the current contacts at the step's start, while the
    // last dynamics evaluation (the memo) is still this state.
    build_witnesses_current();
    evaluate_witnesses(y0, w0);
    double t0, t1;
    try {
      const auto span = stepper->do_step(rhs_fn);
      t0 = span.first;
      t1 = span.second;
    } catch (const std::exception& e) {
      return fail_and_finish(result, SimulationStatus::StepUnderflow,
                             "the integrator could not take a step at t = " + fmt(t) + ": " + e.what(), wall0);
    }
    ++stats.steps;
    // A run whose time stops advancing (steps far below every event and
    // output scale, step after step) ends instead of crawling forever.
    if (t1 - t0 < 1e3 * opt.min_step) {
      if (++tiny_steps > 10000) {
        switch (rescue_step(result, until,
                            "10000 steps shorter than " + fmt(1e3 * opt.min_step) + " s in a row" + contact_summary())) {
          case StepRescue::Resumed: continue;
          case StepRescue::Stop: return finish(result, wall0);
          case StepRescue::None: break;
        }
        return fail_and_finish(result, SimulationStatus::StepUnderflow,
                               "10000 steps shorter than " + fmt(1e3 * opt.min_step) + " s in a row at t = " + fmt(t0) +
                                   contact_summary(),
                               wall0);
      }
    } else {
      tiny_steps = 0;
    }
    const VectorX& y1 = stepper->current_state();
    if (!y1.allFinite()) {
      return fail_and_finish(result, SimulationStatus::NonFinite, "the state became non-finite at t ≈ " + fmt(t1) + contact_summary(), wall0);
    }
    if (t1 - t0 < opt.min_step && t1 < until) {
      switch (rescue_step(result, until, "the step fell to " + fmt(t1 - t0) + " s (below min_step)" + contact_summary())) {
        case StepRescue::Resumed: continue;
        case StepRescue::Stop: return finish(result, wall0);
        case StepRescue::None: break;
      }
      return fail_and_finish(result, SimulationStatus::StepUnderflow,
                             "the step fell to " + fmt(t1 - t0) + " s (below min_step) at t = " + fmt(t0) + contact_summary(), wall0);
    }
    const StepEvent event = earliest_event(t0, t1, y0, y1);
    const double t_next = std::min({event.time, next_sample, until});
    if (t_next < t1) {
      record_outputs_until(t_next, false);
      if (sens) sensitivity_flow(t0, t_next);
      stepper->calc_state(t_next, ystate);
      q = ystate.head(m.nq());
      v = ystate.tail(m.nv());
      t = t_next;
      if (event.time <= t_next) {
        if (sens) sensitivity_before_event(event);
        const EventOutcome outcome = handle_event(result, event, until);
        if (outcome == EventOutcome::Stop) return finish(result, wall0);
        if (outcome == EventOutcome::Restarted) {
          sensitivity_invalidate("a velocity-level fallback window");
          continue;
        }
        if (sens) sensitivity_after_event();
      }
      if (next_sample <= t && !sample_controller(result)) return finish(result, wall0);
      record_sample_if_event(event.time <= t_next);
      restart_stepper(std::max(opt.min_step, stepper_dt(t0, t1)));
      continue;
    }
    // The whole step is accepted.
    record_outputs_until(t1, true);
    if (sens) sensitivity_flow(t0, t1);
    q = y1.head(m.nq());
    v = y1.tail(m.nv());
    t = t1;
    emit_landings_until(t);
    track_penetration(q);
    bool restart = false;
    if (next_sample <= t) {
      if (!sample_controller(result)) return finish(result, wall0);
      restart = true;
    }
    if (!current.empty() && project()) {
      restart = true;
      track_penetration(q);  // (the projection moves the contacts outside the active set too)
    }
    if (quaternion_error(m, q) > 1e-10) {
      normalize_configuration(m, q);
      restart = true;
    }
    if (restart) restart_stepper(stepper_dt(t0, t1));
  }
  result.status = SimulationStatus::Finished;
  result.message = "finished at t = " + fmt(t);
  return finish(result, wall0);
}


// Steps 4–6 at the located event: a slide switch in place, otherwise
// impacts and the new sets (with a fallback window where their LCP is left
// unsolved).
EventDrivenCore::EventOutcome EventDrivenCore::handle_event(SimulationResult& result, const StepEvent& event,
                                                            double until) {
  const bool internal = is_slide_switch(event.witness) || is_slide_turn(event.witness);
  emit_landings_until(t);
  if (!register_event(result)) {
    if (!rescue(result, until) || !resume_after_rescue(result)) return EventOutcome::Stop;
    return EventOutcome::Restarted;
  }
  if (internal) {
    switch_slide_mode(witnesses[event.witness]);
    return EventOutcome::Continue;
  }
  const std::vector<Tracked> before = current;
  const long fallbacks_before = stats.fallbacks;
  // A sticking contact's friction reached μλ: with the same active sets
  // the same forces follow and the margin goes negative; the LCP asks
  // whether it can stick strictly inside its cone (solve_contact_sets).
  // Only for the first event at an instant: a slide that starts at zero
  // speed among dependent contacts (a trunk's corners) can be stuck again by
  // the next LCP and fire the same witness at once; the repeat keeps the
  // stick (and the witness is suppressed as below).
  // A pair-cone event: the same for every sticking contact of the pair.
  const int cw = event.witness;
  const bool pair_event = cw >= 0 && witnesses[cw].kind == WitnessKind::PairCone;
  cone_event = cw >= 0 && (witnesses[cw].kind == WitnessKind::ConeMargin || pair_event) && !witnesses[cw].candidate &&
               events_at_same_time == 0;
  cone_event_ids.clear();
  cone_pair_group = pair_event ? witnesses[cw].index : -1;
  if (cone_event && pair_event) {
    const auto g = static_cast<std::size_t>(witnesses[cw].index);
    for (int k = pair_start[g]; k < pair_start[g + 1]; ++k) {
      cone_event_ids.push_back(current[static_cast<std::size_t>(pair_members[static_cast<std::size_t>(k)])].contact.id);
    }
  } else if (cone_event) {
    cone_event_ids.push_back(current[witnesses[cw].index].contact.id);
  }
  // (the key a pair-cone witness is suppressed by: its first contact's id)
  const std::uint64_t pair_key = pair_event ? pair_first(witnesses[cw].index).id : 0;
  const bool resolved = resolve_contacts(result, until);
  cone_event = false;
  if (!resolved) return EventOutcome::Stop;
  forget_resting_series();
  forget_turns();
  if (stats.fallbacks != fallbacks_before) {
    suppressed.clear();
    if (next_sample <= t && !sample_controller(result)) return EventOutcome::Stop;
    record_sample_if_event(last_sample_time != t);
    restart_stepper(opt.initial_step);
    return EventOutcome::Restarted;
  }
  // A force or cone witness that re-solving did not act on: the LCP found
  // the same sets, so a valid force distribution exists (dependent contacts
  // share their load arbitrarily). Stop watching it until the sets change.
  const int wi = event.witness;
  if (wi >= 0 && same_sets(before, current) &&
      (witnesses[wi].kind == WitnessKind::NormalForce || witnesses[wi].kind == WitnessKind::ConeMargin)) {
    suppressed.emplace_back(witnesses[wi].kind, before[witnesses[wi].index].contact.id);
  } else if (pair_event && same_sets(before, current)) {
    suppressed.emplace_back(WitnessKind::PairCone, pair_key);
  } else if (!same_sets(before, current)) {
    suppressed.clear();
  }
  return EventOutcome::Continue;
}

bool EventDrivenCore::register_event(SimulationResult& result) {
  if (stats.events >= opt.max_events) {
    return fail(result, SimulationStatus::EventLimit, "more than max_events = " + std::to_string(opt.max_events) + " events by t = " + fmt(t) + contact_summary());
  }
  if (t - last_event_time < event_time_resolution(opt.event_time_tolerance, t)) {
    if (++events_at_same_time > 1000) {
      if (!current.empty()) fallback_reason = "events recurring at one instant (chattering contacts)" + contact_summary();
      return fail(result, SimulationStatus::EventLimit,
                  "events keep recurring at t = " + fmt(t) + " without time advancing (chattering contacts)" + contact_summary());
    }
  } else {
    events_at_same_time = 0;
  }
  last_event_time = t;
  return true;
}

// Samples the controller; false (with the reason in result) when its
// output is unusable.
bool EventDrivenCore::sample_controller(SimulationResult& result) {
  if (!controller) return true;
  q_sample_ = q;
  normalize_configuration(model(), q_sample_);
  next_sample = t + period;
  return sample_controller_checked(model(), opt, controller, t, q_sample_, v, tau, result);
}

void EventDrivenCore::restart_stepper(double dt) {
  const Model& m = model();
  y_restart_.resize(m.nq() + m.nv());
  y_restart_ << q, v;
  const VectorX& y = y_restart_;
  double h = std::clamp(dt, opt.min_step, opt.max_step);
  // Land on the controller's next sample, unless it is closer than min_step
  // (a run resumed at an `until` just short of a sample time, an event just
  // before one): then the step goes past it and the loop cuts it there on
  // the dense output.
  if (next_sample > t && next_sample - t >= opt.min_step) h = std::min(h, next_sample - t);
  // Free-flyers in the local chart in every phase, flight and contact (a
  // restart re-bases it at the current state).
  if (chart) chart->set_active(true);
  stepper->initialize(y, t, h);
  rhs_fn = [this](const VectorX& yy, VectorX& dy, double tt) { rhs(yy, dy, tt); };
}

double EventDrivenCore::stepper_dt(double t0, double t1) const {
  const double proposed = stepper->current_time_step();
  return std::isfinite(proposed) && proposed > 0 ? proposed : (t1 - t0);
}

void EventDrivenCore::track_penetration(const VectorX& qq) {
  unchecked::forward_kinematics(model(), data, qq);
  detector.detect(model(), data, touching);
  for (const Contact& c : touching) count_penetration(stats, c);
  if (opt.joint_limits) stats.max_limit_violation = std::max(stats.max_limit_violation, joint_limit_overrun(model(), qq));
}

std::string EventDrivenCore::contact_summary() const {
  if (current.empty()) return "";
  std::string s = " (contacts: ";
  for (std::size_t i = 0; i < current.size(); ++i) s += (i ? ", " : "") + name_of(current[i].contact);
  return s + ")";
}

bool EventDrivenCore::fail(SimulationResult& result, SimulationStatus status, const std::string& message) {
  result.status = status;
  result.message = message;
  return false;
}

SimulationResult EventDrivenCore::fail_and_finish(SimulationResult& result, SimulationStatus status, const std::string& message,
                                 std::chrono::steady_clock::time_point wall0) {
  fail(result, status, message);
  return finish(result, wall0);
}

SimulationResult EventDrivenCore::finish(SimulationResult& result, std::chrono::steady_clock::time_point wall0) {
  emit_landings_until(t);
  record_final_state();
  if (!fallback_log.empty()) {
    result.message += " (" + std::to_string(fallback_log.size()) + " velocity-level fallback window" +
                      (fallback_log.size() == 1 ? "" : "s") + "; the first at " + fallback_log.front() + ")";
  }
  result.time = t;
  stats.energy_end = energy_of(q, v);
  stats.wall_time += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  result.statistics = stats;
  rec = nullptr;
  return result;
}

// ---- recording ------------------------------------------------------------------------------------
double EventDrivenCore::energy_of(const VectorX& qq, const VectorX& vv) {
  qn = qq;
  normalize_configuration(model(), qn);
  return mechanical_energy(model(), data, qn, vv);
}

void EventDrivenCore::record_sample(double time, const VectorX& qq, const VectorX& vv) {
  if (!rec) return;
  last_sample_time = time;
  VectorX qs = qq;
  normalize_configuration(model(), qs);
  last_sample_q_ = qs;
  last_sample_v_ = vv;
  rec->sample(time, qs, vv, energy_of(qs, vv));
  if (current.empty()) return;
  dynamics(qs, vv, x_scratch(), true);
  for (std::size_t a = 0; a < act.size(); ++a) {
    const ContactKinematics ck = contact_kinematics(model(), data, act[a]);
    rec->contact({time, name_of(act[a]), ck.gap, ck.gap_rate, fn[a], ft[a].norm()});
  }
}

void EventDrivenCore::record_outputs_until(double until, bool inclusive) {
  if (opt.output_rate <= 0.0) return;
  const double dt_out = 1.0 / opt.output_rate;
  while (next_output < until || (inclusive && next_output <= until)) {
    stepper->calc_state(next_output, ystate);
    const Model& m = model();
    record_sample(next_output, ystate.head(m.nq()), ystate.tail(m.nv()));
    next_output += dt_out;
    // Avoid drift in the output grid.
    next_output = std::round(next_output / dt_out) * dt_out;
  }
}

void EventDrivenCore::record_sample_if_event(bool event) {
  // A run of events at one instant that leave the state as it was (contacts
  // gained and lost again, a witness re-firing) adds no row: the humanoid
  // collapse wrote 1 001 equal rows at one instant before its fallback.
  if (!event || !rec) return;
  if (last_sample_time == t && v == last_sample_v_) {
    qn = q;
    normalize_configuration(model(), qn);
    if (qn == last_sample_q_) return;
  }
  record_sample(t, q, v);
}

// The last state of a run goes into the trajectory too (finished or not).
void EventDrivenCore::record_final_state() {
  if (!rec || last_sample_time == t) return;
  record_sample(t, q, v);
}

void EventDrivenCore::emit(double time, EventKind kind, const Contact& c, double pre, double post, double impulse) {
  ++stats.events;
  if (rec) {
    rec->event({time, kind, name_of(c), model().body_name(c.body_a), model().body_name(c.body_b), pre, post, impulse});
  }
}

namespace {

class EventDriven final : public SchemeRunner {
 public:
  EventDriven(World world, const SimulationOptions& options) : core_(std::move(world), options) {}
  void set_controller(ControllerFunction f, double period) override {
    core_.controller = std::move(f);
    core_.period = period;
    core_.next_sample = core_.t;
  }
  SimulationResult run_until(double until, Recorder* recorder) override { return core_.run_until(until, recorder); }
  double time() const override { return core_.t; }
  const VectorX& q() const override { return core_.q; }
  const VectorX& v() const override { return core_.v; }
  const World& world() const override { return core_.world; }
  const SimulationOptions& options() const override { return core_.opt; }
  const std::vector<Contact>& current_contacts() const override { return core_.current_view; }
  double energy() override { return core_.energy_of(core_.q, core_.v); }
  std::string contact_name(const Contact& c) const override { return core_.name_of(c); }
  const std::vector<std::string>& contact_warnings() const override { return core_.detector.warnings(); }
  SensitivityReport sensitivity() const override {
    if (!core_.sens) return SchemeRunner::sensitivity();
    SensitivityReport r;
    r.state_transition = core_.sens->Phi;
    r.time_start = core_.sens->t_start;
    r.time_end = core_.t;
    r.saltations = core_.sens->saltations;
    r.field_evaluations = core_.sens->field_evaluations;
    r.invalid = core_.sens->invalid;
    return r;
  }

 private:
  EventDrivenCore core_;
};

}  // namespace

std::unique_ptr<SchemeRunner> make_event_driven(World world, const SimulationOptions& options) {
  return std::make_unique<EventDriven>(std::move(world), options);
}

}  // namespace plume::detail
