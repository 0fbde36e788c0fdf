// Time-stepping, step 5: drift correction. The trapezoid keeps β's
// constraints only to O(h³): the active contacts are projected back onto
// Ψ = 0, ζ = 0 in the metric of H (HMetricCorrection, the event-driven
// scheme's projection), and a step that gains mechanical energy has its
// velocity scaled back.
#include "sim/time_stepping.hpp"

#include <algorithm>
#include <cmath>

#include "algorithms/crba_placements.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/energy.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"

namespace plume::detail {

// Moves (q, v) back onto Ψ = 0, ζ = 0 of the active contacts of β (and zero
// sliding velocity of the sticking ones) in the metric of H, when they have
// drifted beyond drift_tolerance (the trapezoid keeps them only to O(h³)).
// A contact of β that the last LCP left without force (a joint limit, the
// dependent corner of a face) is not held, but the trapezoid lets it sink
// as well: when it is deeper than drift_tolerance its position is projected
// back too (Ψ = 0), its velocity left to the LCP.
// `placed`: data_ holds the placements of q_ (the step's detection at q₁):
// the first check computes the velocities only.
bool TimeStepping::project(bool placed) {
  const Model& m = model();
  proj_zeta_valid_ = false;
  proj_act_.clear();
  proj_stick_.clear();
  proj_held_.clear();
  for (const Tracked& tr : beta_) {
    proj_act_.push_back(tr.contact);
    proj_stick_.push_back(tr.active && tr.mu > 0.0 && tr.mode != ContactMode::Sliding &&
                          tr.contact.kind == ContactKind::Shapes);
    proj_held_.push_back(tr.active);
  }
  if (proj_act_.empty()) return false;
  std::vector<Contact>& act = proj_act_;
  const int nv = m.nv();
  bool changed = false;
  bool checked_here = false;  // the loop's last check ran at the final q_ (after a correction)
  // Positions: δ = −H⁻¹T (TᵀH⁻¹T)⁻¹ Ψ, a few Newton iterations.
  for (int iteration = 0; iteration < 3; ++iteration) {
    // (velocities only: the checks read no accelerations)
    if (iteration == 0 && placed) {
      unchecked::forward_kinematics_velocities(m, data_, v_);
    } else {
      if (iteration > 0) {
        // Moving β's contacts moves the others: a contact outside β that
        // the correction carries into its surface is held at Ψ = 0 too.
        detect(q_, touch_margin(opt_), proj_found_);
        for (const Contact& c : proj_found_) {
          if (!(c.gap < -opt_.drift_tolerance)) continue;
          bool known = false;
          for (const Contact& a : act) known = known || a.id == c.id;
          if (known) continue;
          act.push_back(c);
          proj_stick_.push_back(false);
          proj_held_.push_back(false);
        }
      }
      unchecked::forward_kinematics(m, data_, q_, v_);
    }
    double worst = 0.0;
    int na = 0;
    proj_phi_.resize(static_cast<Eigen::Index>(act.size()));
    proj_ck_.resize(act.size());
    for (std::size_t k = 0; k < act.size(); ++k) {
      if (act[k].kind == ContactKind::Shapes) {
        // (refresh_contact's gap, normal and points from the evaluation that
        // gives the velocity check its rates: the same features, the same bits)
        proj_ck_[k] = contact_kinematics(m, data_, act[k]);
        const ContactKinematics& ck = proj_ck_[k];
        act[k].gap = ck.gap;
        act[k].normal = ck.normal;
        act[k].point_a = ck.point_a;
        act[k].point_b = ck.point_b;
      }
      const double phi = act[k].kind == ContactKind::Shapes ? act[k].gap : gap_at(q_, act[k]);
      // (the first check decides which force-free contacts take part)
      if (iteration == 0 && !proj_held_[k] && !(phi < -opt_.drift_tolerance)) continue;
      if (static_cast<int>(k) != na) {
        act[static_cast<std::size_t>(na)] = act[k];
        proj_stick_[static_cast<std::size_t>(na)] = proj_stick_[k];
        proj_held_[static_cast<std::size_t>(na)] = proj_held_[k];
        proj_ck_[static_cast<std::size_t>(na)] = proj_ck_[k];
      }
      proj_phi_(na++) = phi;
      worst = std::max(worst, std::abs(phi));
    }
    if (iteration == 0) {
      act.resize(static_cast<std::size_t>(na));
      proj_stick_.resize(static_cast<std::size_t>(na));
      proj_held_.resize(static_cast<std::size_t>(na));
      proj_ck_.resize(static_cast<std::size_t>(na));
      if (na == 0) return false;
    }
    proj_phi_.conservativeResize(na);
    if (worst <= opt_.drift_tolerance) {
      checked_here = iteration > 0;
      break;
    }
    // (The placements the Jacobian needs are those of the check above, at q_.)
    unchecked::crba(m, data_, q_);
    unchecked::ltdl(m, data_);
    proj_K_.resize(nv, na);
    proj_Kdv_.resize(na);
    contact_jacobian(m, data_, act, proj_K_, proj_Kdv_);
    proj_phi_ = -proj_phi_;
    q_ = integrate(m, q_, metric_step(act, nullptr), 1.0);  // δ = −H⁻¹K (KᵀH⁻¹K)⁻¹ Ψ
    changed = true;
  }
  // Only the held contacts' velocities are constrained below.
  {
    std::size_t kept = 0;
    for (std::size_t k = 0; k < act.size(); ++k) {
      if (!proj_held_[k]) continue;
      act[kept] = act[k];
      proj_stick_[kept] = proj_stick_[k];
      proj_ck_[kept] = proj_ck_[k];
      ++kept;
    }
    act.resize(kept);
    proj_stick_.resize(kept);
    proj_ck_.resize(kept);
  }
  // The last check ran at (q_, v_) as they stand: its contact kinematics hold.
  const bool checked = !changed || checked_here;
  const int na = static_cast<int>(act.size());
  // Velocities: remove the normal (and sticking tangential) components,
  // checked by the contacts' kinematics first (the Jacobians only when a
  // velocity has drifted).
  // (Otherwise the kinematics and contacts are those of the first check, or
  // of the check after the last correction, at this q_.)
  if (changed && !checked_here) {
    unchecked::forward_kinematics(m, data_, q_, v_);
    for (Contact& c : act) {
      if (c.kind == ContactKind::Shapes) refresh_contact(m, data_, c);
    }
  }
  double worst = 0.0;
  proj_zeta_.resize(static_cast<std::size_t>(na));
  for (int k = 0; k < na; ++k) {
    const ContactKinematics ck = checked && act[k].kind == ContactKind::Shapes ? proj_ck_[static_cast<std::size_t>(k)]
                                                                               : contact_kinematics(m, data_, act[k]);
    proj_zeta_[static_cast<std::size_t>(k)] = ck.gap_rate;
    worst = std::max(worst, std::abs(ck.gap_rate));
    if (proj_stick_[static_cast<std::size_t>(k)]) {
      Vec3 t1, t2;
      tangent_basis(ck.normal, t1, t2);
      const Vec3 u = ck.velocity_b - ck.velocity_a;
      worst = std::max({worst, std::abs(t1.dot(u)), std::abs(t2.dot(u))});
    }
  }
  if (worst > 0.1 * opt_.velocity_tolerance) {
    int rows = 0;
    for (int k = 0; k < na; ++k) rows += proj_stick_[static_cast<std::size_t>(k)] ? 3 : 1;
    // (crba_placements: what the next force solve at q_ needs besides H, kept for it)
    detail::crba_placements(m, data_, q_);
    unchecked::ltdl(m, data_);
    keep_inertia(q_);
    // (T and D need the placements crba_placements left and the velocities;
    // the rates proj_Tdv_, proj_Ddv_ are not read)
    unchecked::forward_kinematics_velocities(m, data_, v_);
    proj_T_.resize(nv, na);
    proj_Tdv_.resize(na);
    proj_D_.resize(nv, 2 * na);
    proj_Ddv_.resize(2 * na);
    contact_jacobians(m, data_, act, proj_T_, proj_Tdv_, proj_D_, proj_Ddv_);
    proj_K_.resize(nv, rows);
    int r = 0;
    for (int k = 0; k < na; ++k) {
      proj_K_.col(r++) = proj_T_.col(k);
      if (proj_stick_[static_cast<std::size_t>(k)]) {
        proj_K_.col(r++) = proj_D_.col(2 * k);
        proj_K_.col(r++) = proj_D_.col(2 * k + 1);
      }
    }
    proj_phi_.resize(rows);
    proj_phi_.noalias() = -(proj_K_.transpose() * v_);
    v_ += metric_step(act, &proj_stick_);
    changed = true;
    // The placements and velocities of (q_, v_) for the energy guard and
    // impacts() (one pass here instead of one in each): the placements are
    // crba_placements' at q_, the velocities those of the projected v_.
    unchecked::forward_kinematics_velocities(m, data_, v_);
  }
  if (changed) ++stats_.projections;
  // (the symplectic Euler rule only: the touching contacts impacts() sees come
  // from a new detection, their body-frame features rounded differently)
  proj_zeta_valid_ = !changed && opt_.time_stepping_rule == TimeSteppingRule::SymplecticEuler;
  return true;  // (data_: the placements and velocities of (q_, v_))
}

double TimeStepping::checked_zeta(const Contact& c) const {
  if (!proj_zeta_valid_ || c.kind != ContactKind::Shapes) return std::numeric_limits<double>::quiet_NaN();
  for (std::size_t k = 0; k < proj_zeta_.size() && k < proj_act_.size(); ++k) {
    const Contact& a = proj_act_[k];
    if (a.id != c.id) continue;
    const bool same = a.kind == c.kind && a.body_a == c.body_a && a.body_b == c.body_b && a.local.type == c.local.type &&
                      a.local.first_on_b == c.local.first_on_b;
    return same ? proj_zeta_[k] : std::numeric_limits<double>::quiet_NaN();
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// The step H⁻¹K (KᵀH⁻¹K)⁻¹ r of the projections (K = proj_K_, r =
// proj_phi_; data_ holds H's LᵀDL): HMetricCorrection's, the event-driven
// scheme's. With the symplectic Euler rule (the fast mode) the same
// regularised system by the force solve's contact-by-contact assembly
// (symmetric_forces(): the rows of `act`'s contacts, three for a sticking
// one, else one; Cholesky in place of LU: the same up to rounding), the
// dense solve where its factorisation fails.
const VectorX& TimeStepping::metric_step(const std::vector<Contact>& act, const std::vector<bool>* stick) {
  const Model& m = model();
  if (opt_.time_stepping_rule == TimeSteppingRule::SymplecticEuler) {
    fast_group_.clear();
    fast_group_contact_.clear();
    int rows = 0;
    for (std::size_t k = 0; k < act.size(); ++k) {
      fast_group_.push_back(rows);
      fast_group_contact_.push_back(static_cast<int>(k));
      rows += stick && (*stick)[k] ? 3 : 1;
    }
    fast_group_.push_back(rows);
    if (rows == static_cast<int>(proj_K_.cols())) {
      fast_K_ = proj_K_;
      fast_b_ = proj_phi_;
      fast_winv_.setOnes(rows);
      if (symmetric_forces(act)) {
        // The velocity projection's A (the held contacts' rows at q_, H as
        // keep_inertia kept it) is the next force solve's when β's active
        // rows are these: it solves with this factor (K from the projection's
        // Jacobians: the same up to rounding).
        if (stick) {
          fast_kept_ids_.clear();
          for (std::size_t k = 0; k < act.size(); ++k) {
            fast_kept_ids_.push_back(act[k].id);
            fast_kept_ids_.push_back((*stick)[k] ? 3u : 1u);
          }
          fast_kept_W_ = fast_Kt_;
          fast_kept_A_ = fast_A_;
          fast_kept_Dinv_ = fast_Dinv_;
          fast_kept_ = true;
        }
        return fast_x_;
      }
    }
  }
  return hmetric_.solve(m, data_, proj_K_, proj_phi_);
}

// The trapezoid on a body's body-frame velocity is exact only for constant
// q̈: a ball rolling down an incline (its body-frame velocity turning) gains
// O(h³) energy a step (1.6e-7 J at h = 1e-3, 4e-4 J over 1 s). A step that
// ends with more mechanical energy than it started with plus the work of the
// applied torques (trapezoid: h τ̄·v̄) has its velocity scaled down to that
// energy; scaling keeps every velocity constraint Tᵀv = 0 of β.
bool TimeStepping::no_energy_gain(const VectorX& q0, const VectorX& v0, double h, bool kinematics) {
  const Model& m = model();
  const VectorX& tau0 = applied_tau_at(v0);
  double work = 0.5 * h * tau0.dot(0.5 * (v0 + v_));
  const VectorX& tau1 = applied_tau_at(v_);
  work += 0.5 * h * tau1.dot(0.5 * (v0 + v_));
  qn_ = q_;
  normalize_configuration(m, qn_);
  bool at_state = bitwise_equal(qn_, q_);  // (data_ then holds the kinematics of (q_, v_))
  // (as energy_of(q_, v_))
  const double e1 = kinematics && at_state ? unchecked::mechanical_energy_from_kinematics(m, data_)
                                           : mechanical_energy(m, data_, qn_, v_);
  const double kinetic = data_.kinetic;
  // (q0, v0) is usually the last step's end, unchanged by impacts or projections.
  const bool known = energy_valid_ && bitwise_equal(q0, energy_q_) && bitwise_equal(v0, energy_v_);
  if (!known) at_state = false;
  const double e0 = known ? energy_ : energy_of(q0, v0);
  const double excess = e1 - (e0 + work);
  energy_valid_ = false;
  if (!(excess > 1e-14 * std::max(1.0, std::abs(e0))) || !(kinetic > excess)) {
    energy_q_ = q_;
    energy_v_ = v_;
    energy_ = e1;
    energy_valid_ = true;
    return at_state;
  }
  v_ *= std::sqrt(1.0 - excess / kinetic);
  // The symplectic Euler rule (the fast mode) keeps the scaled state's
  // energy, e₁ − excess = e0 + work (kinetic − excess, the same potential),
  // for the next step's start instead of evaluating it there: the same up
  // to rounding.
  if (opt_.time_stepping_rule == TimeSteppingRule::SymplecticEuler) {
    energy_q_ = q_;
    energy_v_ = v_;
    energy_ = e0 + work;
    energy_valid_ = true;
  }
  return false;
}

}  // namespace plume::detail
