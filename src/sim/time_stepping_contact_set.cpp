// Time-stepping, step 5: the contact-set update. The touching contacts with
// ζ ≤ velocity_tolerance form the new β; the force LCP gives their forces,
// modes (sticking, sliding, the sliding direction) and q̈ for the next step;
// losses, gains and stick/slip switches are logged.
#include "sim/time_stepping.hpp"

#include <algorithm>

#include "plume/algorithms/kinematics.hpp"
#include "plume/contact/contact_jacobian.hpp"

namespace plume::detail {

// The new β at (t_, q_, v_): touching contacts with ζ ≤ velocity_tolerance;
// the force LCP gives their forces, modes and a_ for the next step.
bool TimeStepping::settle(SimulationResult& result) {
  const Model& m = model();
  for (int jams = 0;; ++jams) {
    detect(q_, touch_margin(opt_), touching_, false);  // (the kinematics below, or the solve's own)
    // ζ of the touching contacts: from impacts() when it saw this (q, v).
    const bool zeta_known = zeta_known_ && bitwise_equal(q_, zeta_q_) && bitwise_equal(v_, zeta_v_) &&
                            imp_zeta_.size() == static_cast<Eigen::Index>(touching_.size());
    zeta_known_ = false;
    if (!zeta_known) unchecked::forward_kinematics(m, data_, q_, v_);
    previous_.swap(beta_);
    beta_.clear();
    for (std::size_t i = 0; i < touching_.size(); ++i) {
      const Contact& c = touching_[i];
      count_penetration(stats_, c);
      const double zeta = zeta_known ? imp_zeta_(static_cast<Eigen::Index>(i)) : contact_kinematics(m, data_, c).gap_rate;
      if (zeta > opt_.velocity_tolerance) continue;  // separating
      Tracked tr;
      tr.contact = c;
      parameters_of(c, tr.mu, tr.restitution);
      beta_.push_back(tr);
    }
    // The modes of the last solve carry over while β keeps its contacts.
    modes_known_ = !beta_.empty() && beta_.size() == previous_.size();
    for (std::size_t k = 0; modes_known_ && k < beta_.size(); ++k) {
      if (previous_[k].contact.id != beta_[k].contact.id) {
        modes_known_ = false;
        break;
      }
      beta_[k].mode = previous_[k].mode;
      beta_[k].active = previous_[k].active;
      beta_[k].slide_dir = previous_[k].slide_dir;
    }
    if (accelerations(q_, v_, a_)) break;
    // No forces for β at (q, v): sliding contacts whose friction, at this
    // posture, would need an unbounded normal force (Painlevé's paradox, e.g.
    // feet sliding under a body locked on its joint limits). The motion then
    // jumps: a tangential impact (an impact without collision) at t_, after
    // which the forces exist. At most kMaxJams in a row.
    if (jams == kMaxJams || !jam(jams)) {
      return fail(result, SimulationStatus::ContactFailure, "contact forces at t = " + fmt(t_) + ": " + message_);
    }
    previous_.swap(beta_);  // the loop's first swap brings the old β back
  }
  slide_speed0_.assign(beta_.size(), 0.0);
  if (!beta_.empty()) {
    const ContactSolution& s = *last_;
    const double fscale = std::max(1e-12, s.lambda.cwiseAbs().maxCoeff());
    bool kinematics = false;  // (velocities for a sliding contact's direction)
    for (std::size_t k = 0; k < beta_.size(); ++k) {
      Tracked& tr = beta_[k];
      const Eigen::Index i = static_cast<Eigen::Index>(k);
      // Active (projected onto Ψ = 0, ζ = 0 at the step's end): pushing, or
      // touching with ζ̇ = 0 (the dependent corners of a face on a face that
      // the LCP's basic solution leaves at zero force; left out, the face
      // rocks on its edges from one plastic impact to the next).
      tr.active = s.lambda(i) > 1e-12 * fscale ||
                  (s.mode[k] != ContactMode::Separating &&
                   std::find(s.current.begin(), s.current.end(), static_cast<int>(k)) != s.current.end());
      tr.mode = s.mode[k];
      if (tr.mu <= 0.0 || tr.contact.kind == ContactKind::JointLimit) tr.mode = ContactMode::Sticking;
      if (tr.mode == ContactMode::Slipping) {
        // At rest, but the cone binds: it starts to slide, against the
        // friction force the LCP found (projected as sticking, it never would).
        tr.mode = ContactMode::Sliding;
        Vec3 t1, t2;
        tangent_basis(contacts_[k].normal, t1, t2);
        const Vec3 f = s.friction(0, i) * t1 + s.friction(1, i) * t2;
        tr.slide_dir = f.norm() > 0.0 ? Vec3(-f.normalized()) : Vec3::Zero();
      } else if (tr.mode == ContactMode::Sliding) {
        if (!kinematics) unchecked::forward_kinematics(m, data_, q_, v_);
        kinematics = true;
        const Vec3 u = tangential_velocity(contacts_[k]);
        tr.slide_dir = u.norm() > 0.0 ? Vec3(u.normalized()) : Vec3::Zero();
        slide_speed0_[k] = u.norm();
      }
    }
  }
  // What changed: losses, gains, stick/slip.
  auto sliding = [](ContactMode mode) { return mode == ContactMode::Sliding || mode == ContactMode::Slipping; };
  for (const Tracked& old : previous_) {
    const Tracked* now = nullptr;
    for (const Tracked& tr : beta_) {
      if (tr.contact.id == old.contact.id) now = &tr;
    }
    if (!now) {
      emit(t_, EventKind::ContactLoss, old.contact, 0.0, 0.0, 0.0);
    } else if (old.mu > 0.0 && sliding(old.mode) != sliding(now->mode)) {
      emit(t_, sliding(now->mode) ? EventKind::Slip : EventKind::Stick, old.contact, 0.0, 0.0, 0.0);
    }
  }
  for (const Tracked& now : beta_) {
    bool known = false;
    for (const Tracked& old : previous_) known |= old.contact.id == now.contact.id;
    if (!known) emit(t_, EventKind::ContactGain, now.contact, 0.0, 0.0, 0.0);
  }
  refresh_view();
  return true;
}

}  // namespace plume::detail
