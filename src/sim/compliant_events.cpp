// The compliant scheme's events: switches of the normal law (touch, loss)
// and the gaps of contacts found inside a surface, located on the dense
// output by locate_crossing (as every scheme locates its events); stick/slip
// switches located for the event log.
#include "sim/compliant_scheme.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "plume/configuration.hpp"

namespace plume::detail {

// Illinois (modified regula falsi) on [a, b] with f(a) > 0 ≥ f(b); returns
// the earliest time known to be at or past the crossing.
template <class F>
double CompliantScheme::locate(F&& f, double a, double fa, double b, double fb) const {
  return locate_crossing(f, a, fa, b, fb, opt_.event_time_tolerance);
}

// The earliest crossing of f (positive → ≤ 0) on [t0, t1] given its end
// values, or +∞; samples the interior where f comes close to zero, so that
// two crossings in one step are not missed.
template <class F>
double CompliantScheme::first_crossing(F&& f, double t0, double f0, double t1, double f1) const {
  if (!(f0 > 0.0)) return kInf;
  double a = t0, fa = f0, b = t1, fb = f1;
  if (fb > 0.0) {
    if (!(fb < 0.5 * std::abs(fa - fb) || fb < 0.1 * fa)) return kInf;
    bool found = false;
    for (int s = 1; s <= 3 && !found; ++s) {
      const double ts = t0 + (t1 - t0) * s / 4.0;
      const double fs = f(ts);
      if (fs <= 0.0) {
        b = ts;
        fb = fs;
        found = true;
      } else {
        a = ts;
        fa = fs;
      }
    }
    if (!found) return kInf;
  }
  return locate(f, a, fa, b, fb);
}

// The earliest switch in the step [t0, t1] just taken: a normal witness of
// a tracked contact crossing zero (touch or loss), or a new contact already
// inside a surface at the step's end (its gap's root); +∞ when none.
double CompliantScheme::earliest_switch(double t0, double t1, const VectorX& y1, const std::vector<double>& w0,
                                        std::vector<double>& w1) {
  // Switches of the normal law of tracked contacts.
  evaluate(y1, t1);
  track_penetration();
  w1.resize(contacts_.size());
  for (std::size_t i = 0; i < contacts_.size(); ++i) w1[i] = forces_.contacts[i].normal_witness;
  double t_event = kInf;
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    auto f = [this, i](double tt) { return normal_witness_at(i, tt); };
    t_event = std::min(t_event, first_crossing(f, t0, w0[i], t1, w1[i]));
  }
  // New contacts already inside a surface at the step's end.
  detect(y1.head(nq()), found_);
  for (const Contact& c : found_) {
    if (c.gap > 0.0 || tracked_index(c.id) >= 0) continue;
    auto f = [this, c](double tt) { return candidate_gap_at(c, tt); };
    // Inside already at the step's start: a feature taking over from
    // another (a ball rolling from a face onto an edge); the commit at
    // the step's end adds it. Otherwise locate the touch.
    const double g0 = f(t0);
    if (g0 > 0.0) t_event = std::min(t_event, locate(f, t0, g0, t1, c.gap));
  }
  return t_event;
}

double CompliantScheme::normal_witness_at(std::size_t i, double t) {
  stepper_->calc_state(t, ys_);
  evaluate(ys_, t);
  return forces_.contacts[i].normal_witness;
}

double CompliantScheme::candidate_gap_at(const Contact& c, double t) {
  stepper_->calc_state(t, ys_);
  qn_ = ys_.head(nq());
  normalize_configuration(model(), qn_);
  return contact_gap_at(model(), data_, qn_, c);
}

// Stick/slip switches of contacts touching since the last commit, located
// on the dense output (for the event log only: they are kinks of the law).
// Uses the records of the last commit, so call it before update().
void CompliantScheme::locate_mode_switches(double t_lo, bool dense_valid) {
  if (contacts_.empty()) return;
  const VectorX y = state_vector();
  evaluate(y, t_);
  std::vector<std::pair<std::size_t, CompliantMode>> switched;
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    const CompliantMode before = state_.record(i).mode, now = forces_.contacts[i].mode;
    const bool stick_slip = (before == CompliantMode::Sticking && now == CompliantMode::Slipping) ||
                            (before == CompliantMode::Slipping && now == CompliantMode::Sticking);
    if (stick_slip && contacts_[i].kind == ContactKind::Shapes) switched.emplace_back(i, now);
  }
  for (const auto& [i, now] : switched) {
    double when = t_;
    if (dense_valid && t_ > t_lo) {
      // Sticking while μ f_n − |f_stick| ≥ 0: a slip makes it negative.
      const double sign = now == CompliantMode::Slipping ? 1.0 : -1.0;
      auto f = [&, i = i](double tt) {
        stepper_->calc_state(tt, ys_);
        evaluate(ys_, tt);
        return sign * forces_.contacts[i].friction_witness;
      };
      const double f0 = f(t_lo), f1 = f(t_);
      if (f0 > 0.0 && f1 <= 0.0) when = locate(f, t_lo, f0, t_, f1);
    }
    emit(when, now == CompliantMode::Slipping ? EventKind::Slip : EventKind::Stick, contacts_[i], 0.0, 0.0, 0.0);
  }
}

}  // namespace plume::detail
