// Time-stepping, step 4: what a step runs into. Contact detection at the
// step's end; the landing time of a contact outside β that the prediction
// carries into a surface (Liu's Ψ_ip = 0, located by locate_crossing as
// every scheme locates its events); the stop of a sliding contact (the
// secant root of its sliding speed).
#include "sim/time_stepping.hpp"

#include <algorithm>
#include <cmath>

#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"

namespace plume::detail {

// Every contact with Ψ < margin at q (placements left in data_), by the
// catalogue's detection (ContactCatalogue::detect, as every scheme).
// The last detection is remembered: a step detects at its end q1, and the
// impacts and the new β look at the same configuration unless the
// projection moved it.
void TimeStepping::detect(const VectorX& q, double margin, std::vector<Contact>& out, bool placements) {
  if (detected_valid_ && margin == detected_margin_ && bitwise_equal(q, detected_q_)) {
    if (placements) unchecked::forward_kinematics(model(), data_, q);
    out = detected_;
    return;
  }
  cat_.detect(model(), data_, q, margin, opt_.joint_limits, out);
  detected_ = out;
  detected_q_ = q;
  detected_margin_ = margin;
  detected_valid_ = true;
}

// The shortest landing time s ∈ (0, h] of a contact outside β that the
// prediction carries into a surface: the root of Ψ_i(q(s)) (Illinois).
double TimeStepping::land(double h) {
  const Model& m = model();
  const double w = position_weight();
  qp_ = integrate(m, q_, v_ + w * h * a_, h);
  detect(qp_, touch_margin(opt_), found_);
  double best = h;
  const std::vector<Contact> predicted = found_;
  for (const Contact& c : predicted) {
    if (c.gap >= -touch_margin(opt_) || in_beta(c.id)) continue;
    auto g = [&](double s) { return gap_at(integrate(m, q_, v_ + w * s * a_, s), c); };
    const double g0 = g(0.0);
    if (g0 <= touch_margin(opt_)) continue;  // touching already: left to the penetration check
    best = std::min(best, locate_crossing(g, 0.0, g0, h, c.gap, opt_.event_time_tolerance, 0.25 * opt_.contact_tolerance));
  }
  return best;
}

// The earliest secant root of the sliding speeds of β's sliding contacts,
// which run from u₀ > 0 at the step's start to u₁ < −slip_velocity at
// (q1, v1) after h; +∞ when none reverses. slow_stop_: every slide that
// reverses is slower than zeno_speed at the start.
double TimeStepping::sliding_reversal(const VectorX& q1, const VectorX& v1, double h) {
  const Model& m = model();
  double h_stick = kInf;
  bool slow = true;
  bool kinematics = false;
  for (const Tracked& tr : beta_) {
    if (tr.mode != ContactMode::Sliding || tr.contact.kind != ContactKind::Shapes) continue;
    if (!kinematics) {
      unchecked::forward_kinematics(m, data_, q1, v1);
      kinematics = true;
    }
    Contact c = tr.contact;
    refresh_contact(m, data_, c);
    const double u1 = tangential_velocity(c).dot(tr.slide_dir);
    if (u1 >= -opt_.slip_velocity) continue;
    const double u0 = start_slide_speed(tr);
    if (u0 <= 0.0) continue;
    h_stick = std::min(h_stick, h * u0 / (u0 - u1));
    slow = slow && u0 < opt_.zeno_speed;
  }
  slow_stop_ = slow && std::isfinite(h_stick);
  return h_stick;
}

// Relative tangential velocity at a contact (kinematics with v in data_).
Vec3 TimeStepping::tangential_velocity(const Contact& c) const {
  const ContactKinematics ck = contact_kinematics(model(), data_, c);
  Vec3 u = ck.velocity_b - ck.velocity_a;
  return u - u.dot(ck.normal) * ck.normal;
}

// Sliding speed along the slide direction at the step's start (cached).
double TimeStepping::start_slide_speed(const Tracked& tr) const {
  for (std::size_t k = 0; k < beta_.size(); ++k) {
    if (beta_[k].contact.id == tr.contact.id) return slide_speed0_[k];
  }
  return 0.0;
}

}  // namespace plume::detail
