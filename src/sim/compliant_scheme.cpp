// The compliant scheme's loop (the method and its files: compliant_scheme.hpp):
// take a step of the ODE, find the earliest switch of the force law in it,
// cut the step there (or at a controller sample, or the end), commit the
// contacts and restart the stepper; the outputs on the dense output.
#include "sim/compliant_scheme.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "plume/configuration.hpp"
#include "plume/error.hpp"
#include "sim/rosenbrock_stepper.hpp"

namespace plume::detail {

CompliantScheme::CompliantScheme(World w, const SimulationOptions& o)
    : SchemeBase(std::move(w), o, tracking_margin(o)) {
  rhs_fn_ = [this](const VectorX& y, VectorX& dy, double t) { rhs(y, dy, t); };
}

std::unique_ptr<SchemeRunner> make_compliant(World world, const SimulationOptions& options) {
  return std::make_unique<CompliantScheme>(std::move(world), options);
}

bool CompliantScheme::sample_controller(SimulationResult& result) {
  if (!controller_) return true;
  VectorX qs = q_;
  normalize_configuration(model(), qs);
  return sample_controller_at(qs, result);
}

bool CompliantScheme::advance(double until, SimulationResult& result) {
  const Model& m = model();
  if (!initialised_) {
    stats_.energy_start = energy_of(q_, v_);
    next_output_ = t_;
    if (!sample_controller(result)) return false;
    commit(t_, false);
    initialised_ = true;
  }
  if (rec_ && opt_.output_rate > 0 && next_output_ <= t_) {
    record_sample(t_, state_vector());
    next_output_ = t_ + 1.0 / opt_.output_rate;
  }
  restart_stepper(stepper_ ? stepper_->current_time_step() : opt_.initial_step);
  if (!std::isfinite(stepper_->current_time_step())) restart_stepper(opt_.initial_step);
  const long step_cap = stats_.steps + opt_.max_steps;
  std::vector<double> w0, w1;
  while (t_ < until) {
    if (stats_.steps >= step_cap) {
      return fail(result, SimulationStatus::StepLimit, "more than max_steps = " + std::to_string(opt_.max_steps) + " steps at t = " + fmt(t_));
    }
    const VectorX y0 = state_vector();
    freeze_switches(y0, t_);
    w0.resize(contacts_.size());
    for (std::size_t i = 0; i < contacts_.size(); ++i) w0[i] = forces_.contacts[i].normal_witness;
    // Relaxing contacts with D = 0 already on their surface (φ − z ≤ 0):
    // their touch was located at the last commit, where the law's force
    // (−Kφ = 0) could not yet say "touching"; no witness crosses in this
    // step, so commit() dates their gain from the step's start.
    on_surface_at_start_.assign(contacts_.size(), 0);
    for (std::size_t i = 0; i < contacts_.size(); ++i) {
      on_surface_at_start_[i] = state_.record(i).phase == CompliantPhase::Relaxing && w0[i] <= 0.0 &&
                                params_[i].damping <= 0.0;
    }
    double t0, t1;
    try {
      const auto span = stepper_->do_step(rhs_fn_);
      t0 = span.first;
      t1 = span.second;
    } catch (const std::exception& e) {
      return fail(result, SimulationStatus::StepUnderflow,
                  "the integrator could not take a step at t = " + fmt(t_) + ": " + e.what() + contact_summary());
    }
    ++stats_.steps;
    if (t1 - t0 < 1e3 * opt_.min_step) {
      if (++tiny_steps_ > 10000) {
        return fail(result, SimulationStatus::StepUnderflow,
                    "10000 steps shorter than " + fmt(1e3 * opt_.min_step) + " s in a row at t = " + fmt(t0) + contact_summary());
      }
    } else {
      tiny_steps_ = 0;
    }
    const VectorX y1 = stepper_->current_state();
    if (!y1.allFinite()) {
      return fail(result, SimulationStatus::NonFinite, "the state became non-finite at t ≈ " + fmt(t1) + contact_summary());
    }
    if (t1 - t0 < opt_.min_step && t1 < until) {
      return fail(result, SimulationStatus::StepUnderflow,
                  "the step fell to " + fmt(t1 - t0) + " s (below min_step) at t = " + fmt(t0) + contact_summary());
    }
    // Switches of the normal law of tracked contacts, new contacts inside a surface.
    const double t_event = earliest_switch(t0, t1, y1, w0, w1);
    const double t_next = std::min({t_event, next_sample_, until});
    if (t_next < t1) {
      if (t_next <= t0 + event_time_resolution(opt_.event_time_tolerance, t0)) {
        if (++stalled_cuts_ > 1000) {
          return fail(result, SimulationStatus::EventLimit,
                      "contact switches keep recurring at t = " + fmt(t0) + " without time advancing" + contact_summary());
        }
      } else {
        stalled_cuts_ = 0;
      }
      record_outputs_until(t_next, false);
      stepper_->calc_state(t_next, ys_);
      unpack(ys_);
      t_ = t_next;
      commit(t0, true);
      if (next_sample_ <= t_ && !sample_controller(result)) return false;
      if (t_event <= t_next && rec_) record_sample(t_, state_vector());
      restart_stepper(stepper_->current_time_step());
      continue;
    }
    // The whole step is accepted.
    record_outputs_until(t1, true);
    unpack(y1);
    t_ = t1;
    const VectorX x_before = x_;
    const std::size_t n_before = contacts_.size();
    bool restart = commit(t0, true) || contacts_.size() != n_before;
    if (!restart && x_.size() > 0) {
      const double change = (x_ - x_before).cwiseAbs().maxCoeff();
      restart = change > 1e-3 * (opt_.abs_tol + opt_.rel_tol * x_.cwiseAbs().maxCoeff());
    }
    if (next_sample_ <= t_) {
      if (!sample_controller(result)) return false;
      restart = true;
    }
    if (quaternion_error(m, q_) > 1e-10) {
      normalize_configuration(m, q_);
      restart = true;
    }
    if (restart) restart_stepper(stepper_->current_time_step());
  }
  return true;
}

void CompliantScheme::restart_stepper(double dt) {
  const VectorX y = state_vector();
  if (!stepper_ || y.size() != stepper_size_) {
    if (opt_.integrator == Integrator::Rosenbrock4) {
      stepper_ = make_rosenbrock4_stepper(opt_.abs_tol, opt_.rel_tol, opt_.max_step,
                                          [this](const VectorX& y, double t, const VectorX& f, MatrixX& J,
                                                 VectorX& dfdt) { jacobian(y, t, f, J, dfdt); });
    } else {
      stepper_ = make_dense_stepper(opt_.integrator, opt_.abs_tol, opt_.rel_tol, opt_.max_step);
    }
    stepper_size_ = y.size();
  }
  double h = std::clamp(dt, opt_.min_step, opt_.max_step);
  // (a sample closer than min_step: the step goes past it and is cut there
  // on the dense output, as in the event-driven scheme)
  if (next_sample_ > t_ && next_sample_ - t_ >= opt_.min_step) h = std::min(h, next_sample_ - t_);
  freeze_switches(y, t_);
  stepper_->initialize(y, t_, h);
}

void CompliantScheme::record_sample(double time, const VectorX& y) {
  if (!rec_) return;
  VectorX qs = y.head(nq());
  normalize_configuration(model(), qs);
  const VectorX vs = y.segment(nq(), nv());
  rec_->sample(time, qs, vs, energy_of(qs, vs));
  if (contacts_.empty()) return;
  evaluate(y, time);
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    const CompliantContactForce& f = forces_.contacts[i];
    if (!(f.normal_force > 0.0)) continue;
    rec_->contact({time, cat_.name_of(model(), contacts_[i]), f.gap, f.gap_rate, f.normal_force, f.friction.norm()});
  }
}

void CompliantScheme::record_outputs_until(double until, bool inclusive) {
  if (opt_.output_rate <= 0.0 || !rec_) return;
  const double dt_out = 1.0 / opt_.output_rate;
  while (next_output_ < until || (inclusive && next_output_ <= until)) {
    stepper_->calc_state(next_output_, ys_);
    const VectorX y = ys_;
    record_sample(next_output_, y);
    next_output_ = std::round((next_output_ + dt_out) / dt_out) * dt_out;
  }
}

std::string CompliantScheme::contact_summary() const {
  if (touching_view_.empty()) return "";
  std::string s = " (touching: ";
  for (std::size_t i = 0; i < touching_view_.size(); ++i) s += (i ? ", " : "") + cat_.name_of(model(), touching_view_[i]);
  return s + ")";
}

}  // namespace plume::detail
