// The time-stepping scheme's loop (the method and its files: time_stepping.hpp):
// step 0 (the nominal step, cut at the controller's samples and the end),
// the attempt of steps 1–4 (predict with the current forces, the force LCP
// at the prediction, the trapezoidal correction, the penetration and stick
// checks), the order of step 5 (drift, impacts, the new β), Liu's step-size
// score, the outputs on each step's Hermite interpolant.
#include "sim/time_stepping.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "plume/error.hpp"

namespace plume::detail {

TimeStepping::TimeStepping(World w, const SimulationOptions& o)
    : SchemeBase(std::move(w), o, touch_margin(o)), solver_(world_.model(), 16) {
  // Without Lemke's narrow-tie retry: the problems it rescues here are
  // rescued by the friction-box PGS and the tangential impact as well, and
  // with it the humanoid collapse took 13 000–19 000 steps over five starts
  // instead of 11 500–14 700, and one start of a published-style humanoid
  // stopped at 1.64 s (docs/schemes.md).
  solver_.set_narrow_tie_retry(false);
  const Model& m = world_.model();
  a_ = VectorX::Zero(m.nv());
  zero_ = VectorX::Zero(m.nv());
  h_init_ = opt_.time_step;
}

std::unique_ptr<SchemeRunner> make_time_stepping(World world, const SimulationOptions& options) {
  return std::make_unique<TimeStepping>(std::move(world), options);
}

bool TimeStepping::advance(double until, SimulationResult& result) {
  const Model& m = model();
  if (!initialised_) {
    normalize_configuration(m, q_);
    stats_.energy_start = energy_of(q_, v_);
    next_output_ = t_;
    if (!impacts(result)) return false;
    if (!sample_controller(result)) return false;
    if (!settle(result)) return false;
    initialised_ = true;
  }
  if (rec_ && opt_.output_rate > 0 && next_output_ <= t_) {
    record_sample(t_, q_, v_);
    next_output_ = t_ + 1.0 / opt_.output_rate;
  }
  const long step_cap = stats_.steps + opt_.max_steps;
  VectorX q1, v1;
  while (t_ < until) {
    if (stats_.steps >= step_cap) {
      return fail(result, SimulationStatus::StepLimit, "more than max_steps = " + std::to_string(opt_.max_steps) + " steps at t = " + fmt(t_));
    }
    // Stop times closer than rounding: reached.
    const double slack = std::max(1e-9 * h_init_, 1e-12 * std::max(1.0, std::abs(t_)));
    if (until - t_ <= slack) {
      t_ = until;
      break;
    }
    if (next_sample_ - t_ <= slack) {
      if (!sample_controller(result) || !settle(result)) return false;
      continue;
    }
    // 0. the nominal step, cut at the controller's next sample and the end
    double h = h_init_;
    bool cut_by_time = false;
    const double t_stop = std::min(next_sample_, until);
    // (a remainder below 1e-6 h is rounding: merged into this step)
    if (t_ + h * (1.0 + 1e-6) >= t_stop) {
      h = t_stop - t_;
      cut_by_time = true;
    }
    // 1–4. predict, LCP, correct; on the first penetration land on the
    // contact the prediction reaches (the prediction's configuration is
    // searched only then: most steps penetrate nothing), else halve;
    // shorten to a stick
    bool shortened = false, landing_tried = false, rest_tried = false;
    Outcome outcome;
    bool stick_landing = false;
    for (;;) {
      if (no_forces_) {
        // β has no forces here (settle()): the velocity-level step, halved
        // while it carries a contact into its surface that it cannot take in
        if (h < opt_.min_step) {
          return fail(result, SimulationStatus::ContactFailure,
                      "contact forces at t = " + fmt(t_) + ": " + message_ +
                          "; velocity-level steps down to min_step = " + fmt(opt_.min_step) + " s failed too");
        }
        const double h_whole = h;
        if (rest_step(h, q1, v1)) {
          shortened = h < h_whole;
          outcome = Outcome::Accepted;
          break;
        }
        h = 0.5 * h_whole;
        shortened = true;
        continue;
      }
      if (h < opt_.min_step) {
        return fail(result, SimulationStatus::StepUnderflow,
                    "the step fell to " + fmt(h) + " s (below min_step) at t = " + fmt(t_) + contact_summary());
      }
      double h_stick = kInf;
      outcome = attempt(h, stick_landing, q1, v1, h_stick);
      if (outcome == Outcome::Accepted) break;
      // Cut only by motion slower than zeno_speed, or by a slide that
      // reverses sooner than min_step (a contact creeping at nm/s while a
      // faster one reverses too, so slow_failure() does not hold): the step
      // is taken whole at the velocity level (time_stepping_rest.cpp),
      // whose LCP decides stick and slip itself.
      const bool unreachable_stick = outcome == Outcome::Stick && h_stick < opt_.min_step;
      if (!rest_tried && (unreachable_stick || (!stick_landing && slow_failure(outcome)))) {
        rest_tried = true;
        const double h_whole = h;
        if (rest_step(h, q1, v1)) {
          shortened = h < h_whole;  // (landed on a contact)
          outcome = Outcome::Accepted;
          break;
        }
        h = h_whole;
      }
      shortened = true;
      if (outcome == Outcome::Stick) {
        stick_landing = h_stick > 0.0 && h_stick < h;
        h = stick_landing ? h_stick : 0.5 * h;
      } else {
        stick_landing = false;
        double h_land = h;
        if (outcome == Outcome::Penetration && !landing_tried) {
          landing_tried = true;
          h_land = land(h);
        }
        h = h_land < h ? h_land : 0.5 * h;  // landing; else penetration, or no LCP solution at the prediction
      }
      if (outcome == Outcome::ContactFailed && h < opt_.min_step) {
        return fail(result, SimulationStatus::ContactFailure, "contact forces at t = " + fmt(t_) + ": " + message_);
      }
    }
    if (!q1.allFinite() || !v1.allFinite()) {
      return fail(result, SimulationStatus::NonFinite, "the state became non-finite at t ≈ " + fmt(t_ + h) + contact_summary());
    }
    // 5. accept
    ++stats_.steps;
    score(shortened ? -1 : (cut_by_time ? 0 : +1));
    const double t0 = t_;
    q0_ = q_;
    v0_ = v_;
    const VectorX& q0 = q0_;
    const VectorX& v0 = v0_;
    t_ = (cut_by_time && !shortened) ? t_stop : t_ + h;
    q_ = q1;
    v_ = v1;
    // (attempt() left the placements of q1 in data_: its detection at q1)
    bool placed = true;
    if (quaternion_error(m, q_) > 1e-12) {
      normalize_configuration(m, q_);
      placed = bitwise_equal(q_, q1);
    }
    const long events_before = stats_.events;
    bool kinematics = project(placed);
    kinematics = no_energy_gain(q0, v0, h, kinematics);
    // Samples inside the step: towards the corrected state (before any impact at t_).
    kinematics = kinematics && !(rec_ && opt_.output_rate > 0.0 && next_output_ < t_);  // (a sample's solve)
    record_outputs_until(t0, q0, v0, t_, q_, v_, false);
    if (!impacts(result, kinematics)) return false;
    if (next_sample_ <= t_ && !sample_controller(result)) return false;
    if (!settle(result)) return false;
    if (rec_ && opt_.output_rate > 0 && next_output_ <= t_) {
      record_sample(t_, q_, v_, true);
      next_output_ = std::round((next_output_ + 1.0 / opt_.output_rate) * opt_.output_rate) / opt_.output_rate;
    } else if (rec_ && stats_.events > events_before) {
      record_sample(t_, q_, v_, true);
    }
  }
  return true;
}

// ---- one attempted step -----------------------------------------------------------------
// `stick_landing`: h is the root of a sliding speed; the slide's force then
// holds over the whole step (the contact sticks at its end), so the
// predicted state — where the speed is 0 and the LCP would already stick —
// gets the step's starting forces.
TimeStepping::Outcome TimeStepping::attempt(double h, bool stick_landing, VectorX& q1, VectorX& v1, double& h_stick) {
  const Model& m = model();
  // 1. predict with the current forces (the symplectic Euler rule's step)
  const bool euler = opt_.time_stepping_rule == TimeSteppingRule::SymplecticEuler;
  vp_ = v_ + h * a_;
  vbar_ = v_ + position_weight() * h * a_;
  integrate(m, q_, vbar_, h, qp_);
  // A slide the prediction reverses stops inside the step: land on the
  // stick (the secant root of the sliding speed, exact for Coulomb's
  // constant deceleration). Left to the corrector, the friction force,
  // reversed at the predicted state, would cancel the deceleration and
  // freeze a small sliding speed for good.
  if (stick_landing) {
    ap_ = a_;
  } else {
    h_stick = sliding_reversal(qp_, vp_, h);
    if (std::isfinite(h_stick)) return Outcome::Stick;
    // 2. the force LCP at the predicted state (not for the symplectic Euler rule)
    if (!euler && !accelerations(qp_, vp_, ap_, true)) return Outcome::ContactFailed;
  }
  // 3. correct (implicit trapezoid with the predicted forces); the
  // symplectic Euler rule's step is the prediction
  if (euler) {
    v1 = vp_;
    q1 = qp_;
  } else {
    v1 = v_ + 0.5 * h * (a_ + ap_);
    vbar_ = 0.5 * (v_ + v1);
    integrate(m, q_, vbar_, h, q1);
  }
  // 4. penetration of a contact outside β, reversal of a sliding one
  detect(q1, touch_margin(opt_), found_);
  // (A contact that left β while it was in it by a little more than the
  // margin, and separates, is as deep at the step's start: it counts only
  // when it goes deeper, or no step would ever be short enough.)
  for (const Contact& c : found_) {
    if (penetrates(c)) {
      penetrating_ = c.id;
      return Outcome::Penetration;
    }
  }
  if (euler && !stick_landing) return Outcome::Accepted;  // (its reversal was checked at the prediction)
  h_stick = sliding_reversal(q1, v1, h);
  return std::isfinite(h_stick) ? Outcome::Stick : Outcome::Accepted;
}

void TimeStepping::score(int s) {
  if (s == 0) return;
  if (s < 0) {
    run_ = std::min(run_, 0) - 1;
    if (run_ <= -kScoreRun) {
      h_init_ = std::max(0.5 * h_init_, opt_.min_step);
      run_ = 0;
    }
  } else {
    run_ = std::max(run_, 0) + 1;
    if (run_ >= kScoreRun) {
      h_init_ = std::min(2.0 * h_init_, opt_.time_step);
      run_ = 0;
    }
  }
}

void TimeStepping::record_sample(double time, const VectorX& q, const VectorX& v, bool settled) {
  if (!rec_) return;
  rec_->sample(time, q, v, energy_of(q, v));
  if (beta_.empty()) return;
  // The forces at the sample (a solve for the output, not counted), unless
  // settle() has them.
  const long rhs = stats_.rhs_evaluations, lcp = stats_.lcp_solves;
  bool solved = settled && !no_forces_;  // (settle() found no forces: none recorded)
  if (!settled) {
    output_solve_ = true;
    solved = accelerations(q, v, output_a_);
    output_solve_ = false;
  }
  if (solved) {
    const ContactSolution& s = *last_;
    unchecked::forward_kinematics(model(), data_, q, v);
    for (std::size_t k = 0; k < contacts_.size(); ++k) {
      const ContactKinematics ck = contact_kinematics(model(), data_, contacts_[k]);
      const Eigen::Index i = static_cast<Eigen::Index>(k);
      rec_->contact({time, cat_.name_of(model(), contacts_[k]), ck.gap, ck.gap_rate, s.lambda(i), s.friction.col(i).norm()});
    }
  }
  stats_.rhs_evaluations = rhs;
  stats_.lcp_solves = lcp;
}

// Samples in (t0, t1) (and t1 when `inclusive`) on the cubic Hermite
// interpolant of the step, in the tangent space at q0.
void TimeStepping::record_outputs_until(double t0, const VectorX& q0, const VectorX& v0, double t1,
                                        const VectorX& q1, const VectorX& v1, bool inclusive) {
  if (opt_.output_rate <= 0.0 || !rec_) return;
  const double dt_out = 1.0 / opt_.output_rate;
  const double h = t1 - t0;
  const VectorX delta = difference(model(), q0, q1);
  while (next_output_ < t1 || (inclusive && next_output_ <= t1)) {
    const double s = h > 0.0 ? std::clamp((next_output_ - t0) / h, 0.0, 1.0) : 1.0;
    const double h10 = s * s * s - 2 * s * s + s, h01 = -2 * s * s * s + 3 * s * s, h11 = s * s * s - s * s;
    const double d10 = 3 * s * s - 4 * s + 1, d01 = -6 * s * s + 6 * s, d11 = 3 * s * s - 2 * s;
    const VectorX p = h10 * h * v0 + h01 * delta + h11 * h * v1;
    const VectorX qs = integrate(model(), q0, p, 1.0);
    const VectorX vs = h > 0.0 ? VectorX(d10 * v0 + d01 * delta / h + d11 * v1) : v1;
    record_sample(next_output_, qs, vs);
    next_output_ = std::round((next_output_ + dt_out) / dt_out) * dt_out;
  }
}

std::string TimeStepping::contact_summary() const {
  if (beta_.empty()) return "";
  std::string s = " (contacts: ";
  for (std::size_t i = 0; i < beta_.size(); ++i) s += (i ? ", " : "") + cat_.name_of(model(), beta_[i].contact);
  return s + ")";
}

}  // namespace plume::detail
