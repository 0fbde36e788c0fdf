// Time-stepping, step 5: the contact-set update. The touching contacts with
// ζ ≤ velocity_tolerance form the new β; the force LCP gives their forces,
// modes (sticking, sliding, the sliding direction) and q̈ for the next step;
// losses, gains and stick/slip switches are logged.
#include "sim/time_stepping.hpp"
#include "sim/starting_slides.hpp"

#include <algorithm>
#include <cmath>
#include <limits>


#include "algorithms/crba_placements.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/contact/contact_jacobian.hpp"

namespace plume::detail {

namespace {
const double kPi = std::acos(-1.0);
}  // namespace

// The new β at (t_, q_, v_): touching contacts with ζ ≤ velocity_tolerance;
// the force LCP gives their forces, modes and a_ for the next step.
bool TimeStepping::settle(SimulationResult& result) {
  const Model& m = model();
  no_forces_ = false;
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
    // Still none after them: the next step is taken at the velocity level
    // (rest_step(): Stewart–Trinkle's problem, which always has a solution),
    // as a step over motion too slow to follow is; β is kept with no active
    // contact (nothing for project() to hold: the step itself keeps the
    // contacts out of their surfaces).
    if (jams == kMaxJams) {
      no_forces_ = true;
      break;
    }
    if (!jam(jams)) {
      return fail(result, SimulationStatus::ContactFailure, "contact forces at t = " + fmt(t_) + ": " + message_);
    }
    previous_.swap(beta_);  // the loop's first swap brings the old β back
  }
  slide_speed0_.assign(beta_.size(), 0.0);
  std::vector<int>& starting = starting_;
  starting.clear();
  if (no_forces_) {
    modes_known_ = false;
    for (Tracked& tr : beta_) {
      tr.active = false;
      tr.mode = ContactMode::Sticking;
    }
  } else if (!beta_.empty()) {
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
        starting.push_back(static_cast<int>(k));
      } else if (tr.mode == ContactMode::Sliding) {
        if (!kinematics) unchecked::forward_kinematics(m, data_, q_, v_);
        kinematics = true;
        const Vec3 u = tangential_velocity(contacts_[k]);
        tr.slide_dir = u.norm() > 0.0 ? Vec3(u.normalized()) : Vec3::Zero();
        slide_speed0_[k] = u.norm();
      }
    }
    if (!starting.empty()) refine_starting_slides(starting);
    refine_slow_slides();
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

// After Newton's method converged: a_ and last_ from the solve at its root
// (starting_a_, fast_), and the `slots`' world directions from their angles.
void TimeStepping::adopt_slide_angles(const std::vector<int>& slots, const VectorX& angle) {
  a_ = starting_a_;
  last_ = &fast_;
  for (Eigen::Index i = 0; i < angle.size(); ++i) {
    const std::size_t k = static_cast<std::size_t>(slots[static_cast<std::size_t>(i)]);
    Vec3 t1, t2;
    tangent_basis(contacts_[k].normal, t1, t2);
    beta_[k].slide_dir = std::cos(angle(i)) * t1 + std::sin(angle(i)) * t2;
  }
}

// The force LCP's polyhedral cone of k directions gives a contact that
// starts to slide from rest a friction force within π/k of Coulomb's, whose
// friction −μλŝ opposes a tangential acceleration a_t along ŝ itself
// (maximal dissipation). Left at the LCP's direction, the first step's
// forces (a_) and the predictor's slide (along the first step's velocity)
// would leave rest askew: a cube on an incline whose fall line lies between
// two cone directions slid 7.7e-6 m too far in 1 s. Newton's method on the
// active starting contacts' angles (Jacobian by forward differences of the
// active-set solve with those directions) turns each ŝ onto its a_t; the
// LCP's directions and forces stay if it does not converge.
void TimeStepping::refine_starting_slides(const std::vector<int>& starting) {
  const Model& m = model();
  const ContactSolution& lcp = *last_;
  auto slide_world = [&](int k, const Eigen::Vector2d& f) {
    Vec3 t1, t2;
    tangent_basis(contacts_[static_cast<std::size_t>(k)].normal, t1, t2);
    return Vec3(f(0) * t1 + f(1) * t2);
  };
  std::vector<int>& slots = starting_slots_;
  slots.clear();
  for (int k : starting) {
    const Tracked& tr = beta_[static_cast<std::size_t>(k)];
    if (tr.active && tr.mu > 0.0 && tr.contact.kind == ContactKind::Shapes) slots.push_back(k);
  }
  const int n = static_cast<int>(slots.size());
  if (n == 0) return;
  VectorX angle(n);
  // Against the total LCP friction of the starting contacts between the
  // same two bodies (a face's corners): how dependent contacts share it is
  // the LCP's choice, their total is the body's; the corners' own
  // directions, up to π/k apart, left Newton's method diverging on a cube
  // whose fall line lies between two cone directions. A contact alone on
  // its bodies starts against its own friction; one without friction (a
  // dependent corner the LCP left unloaded) along the slots' mean.
  Vec3 mean = Vec3::Zero();
  for (int k : slots) mean -= slide_world(k, lcp.friction.col(k));
  for (int i = 0; i < n; ++i) {
    const Contact& c = contacts_[static_cast<std::size_t>(slots[static_cast<std::size_t>(i)])];
    Vec3 pair = Vec3::Zero();
    for (int k : slots) {
      const Contact& d = contacts_[static_cast<std::size_t>(k)];
      if (d.body_a == c.body_a && d.body_b == c.body_b) pair -= slide_world(k, lcp.friction.col(k));
    }
    const Vec3& along = pair.norm() > 0.0 ? pair : mean;
    Vec3 t1, t2;
    tangent_basis(c.normal, t1, t2);
    angle(i) = std::atan2(along.dot(t2), along.dot(t1));
  }
  // The active-set solve at q_ over the LCP's contacts (contacts_, refreshed
  // at q_): H and its placements at q_.
  if (!restore_inertia(q_)) detail::crba_placements(m, data_, q_);
  ltdl_known_ = false;
  const bool known = modes_known_;
  modes_known_ = true;
  given_slides_ = true;
  given_angle_.setConstant(static_cast<Eigen::Index>(beta_.size()), std::numeric_limits<double>::quiet_NaN());
  VectorX& qdd = starting_a_;
  // On success fast_ and qdd hold the solve at the root.
  const bool converged = coulomb_starting_directions(
      angle, kPi / std::max(opt_.cone_directions, 4), [&](const VectorX& at, VectorX& r, bool probe) {
        return starting_slide_residuals(slots, at, r, probe ? starting_a1_ : qdd);
      });
  modes_known_ = known;
  given_slides_ = false;
  ltdl_known_ = false;
  if (!converged) return;
  adopt_slide_angles(slots, angle);
}

// Sets the angles of the `slots` (their directions in the contacts'
// tangent bases), solves the active set at (q_, v_) (q̈ into `a`) and
// returns in r_i the angle from ŝ_i to a_t (zero only when a_t is along
// ŝ_i), with the largest |a_t| as the scale (NaN when the solve fails).
double TimeStepping::starting_slide_residuals(const std::vector<int>& slots, const VectorX& angle, VectorX& r,
                                              VectorX& a, double inv_h) {
  const int n = static_cast<int>(slots.size());
  for (int i = 0; i < n; ++i) given_angle_(slots[static_cast<std::size_t>(i)]) = angle(i);
  if (!active_set_accelerations(v_, a, false)) {
    r.setConstant(std::numeric_limits<double>::quiet_NaN());
    return std::numeric_limits<double>::quiet_NaN();
  }
  ltdl_known_ = true;  // (data_.LD factors H at q_ from now on)
  double scale = 0.0;
  for (int i = 0; i < n; ++i) {
    const Eigen::Index k = slots[static_cast<std::size_t>(i)];
    const double a1 = fast_D_.col(2 * k).dot(a) + fast_Ddv_(2 * k);
    const double a2 = fast_D_.col(2 * k + 1).dot(a) + fast_Ddv_(2 * k + 1);
    scale = std::max(scale, std::hypot(a1, a2));
    const double b1 = inv_h > 0.0 ? inv_h * slow_u_[2 * i] + a1 : a1;
    const double b2 = inv_h > 0.0 ? inv_h * slow_u_[2 * i + 1] + a2 : a2;
    const double c = std::cos(angle(i)), sn = std::sin(angle(i));
    r(i) = std::atan2(c * b2 - sn * b1, c * b1 + sn * b2);
  }
  return scale;
}

// Friction along u/|u| at the step's start pushes back on a sideways speed δ
// with h μλ w δ/|u| over a step (w = dᵀH⁻¹d, the contact's tangential
// compliance): once that exceeds 2 |u| the predictor–corrector step
// amplifies δ (a pushed box just past its friction limit: 2e-15 m/s sideways
// grew 1 000–40 000-fold a step). Where h μλ w > |u| on an accelerating slide
// (u · a_t > 0), the direction is taken implicitly, along the velocity at the
// step's end: Newton's method on the angles with the residual from ŝ to
// u/h + a_t(ŝ) (coulomb_starting_directions). Only after the active-set
// solve (its D and factor of H at (q_, v_)); the explicit directions stay
// where Newton's method does not converge within a quarter turn.
void TimeStepping::refine_slow_slides() {
  if (last_ != &fast_ || !modes_known_) return;
  const Model& m = model();
  const double h = h_init_;
  std::vector<int>& slots = starting_slots_;
  slots.clear();
  slow_u_.clear();
  const ContactSolution& s = fast_;
  for (std::size_t k = 0; k < beta_.size(); ++k) {
    const Tracked& tr = beta_[k];
    if (!tr.active || tr.mode != ContactMode::Sliding || !(tr.mu > 0.0) || tr.contact.kind != ContactKind::Shapes) continue;
    if (std::find(starting_.begin(), starting_.end(), static_cast<int>(k)) != starting_.end()) continue;
    const Eigen::Index i = static_cast<Eigen::Index>(k);
    const double u1 = fast_D_.col(2 * i).dot(v_), u2 = fast_D_.col(2 * i + 1).dot(v_);
    const double speed = std::hypot(u1, u2);
    const double friction = tr.mu * s.lambda(i);
    if (!(speed > 0.0) || !(friction > 0.0)) continue;
    const double a1 = fast_D_.col(2 * i).dot(a_) + fast_Ddv_(2 * i);
    const double a2 = fast_D_.col(2 * i + 1).dot(a_) + fast_Ddv_(2 * i + 1);
    if (u1 * a1 + u2 * a2 <= 0.0) continue;  // slowing down: the stick landing's
    double w = 0.0;
    for (int j = 0; j < 2; ++j) {
      slow_w_ = fast_D_.col(2 * i + j);
      ltdl_solve(m, data_, slow_w_);
      w = std::max(w, fast_D_.col(2 * i + j).dot(slow_w_));
    }
    if (h * friction * w > speed) {
      slots.push_back(static_cast<int>(k));
      slow_u_.push_back(u1);
      slow_u_.push_back(u2);
    }
  }
  const int n = static_cast<int>(slots.size());
  if (n == 0) return;
  VectorX angle(n);
  for (int i = 0; i < n; ++i) angle(i) = std::atan2(slow_u_[2 * i + 1], slow_u_[2 * i]);
  given_slides_ = true;
  given_angle_.setConstant(static_cast<Eigen::Index>(beta_.size()), std::numeric_limits<double>::quiet_NaN());
  ltdl_known_ = true;  // (the factor of H at q_ from the solve above)
  VectorX& qdd = starting_a_;
  const bool converged = coulomb_starting_directions(
      angle, 0.5 * kPi, [&](const VectorX& at, VectorX& r, bool probe) {
        return starting_slide_residuals(slots, at, r, probe ? starting_a1_ : qdd, 1.0 / h);
      });
  given_slides_ = false;
  ltdl_known_ = false;
  if (!converged) {
    // The explicit directions' solve again (fast_ and the workspace).
    accelerations(q_, v_, a_);
    return;
  }
  adopt_slide_angles(slots, angle);
}

}  // namespace plume::detail
