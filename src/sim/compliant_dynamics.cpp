// The compliant scheme's right-hand side: ẏ = [G(q) v; H⁻¹(τ − C + τ_c); ẋ]
// with the spring–damper contact forces τ_c of the tracked contacts
// (forward_dynamics_compliant), its Jacobian for rosenbrock4 (forward
// differences within the pieces of the force law), and the touch switches
// frozen within a step so that no step straddles a jump of f_n.
#include "sim/compliant_scheme.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"

namespace plume::detail {

// ---- the ODE --------------------------------------------------------------------------
// ẏ = [G(q) v; H⁻¹(τ − C + τ_c); ẋ] at a trial state (q renormalised).
void CompliantScheme::rhs(const VectorX& y, VectorX& dy, double t) {
  ++stats_.rhs_evaluations;
  const Model& m = model();
  const Eigen::Index nx = y.size() - nq() - nv();
  qn_ = y.head(nq());
  normalize_configuration(m, qn_);
  const auto vv = y.segment(nq(), nv());
  dy.resize(y.size());
  configuration_derivative(m, qn_, vv, dy.head(nq()));
  applied_torque(m, opt_, tau_, vv, tau_applied_);
  dy.segment(nq(), nv()) = forward_dynamics_compliant(m, data_, qn_, vv, tau_applied_, contacts_, rhs_params_, state_,
                                                      y.tail(nx), t, forces_);
  dy.tail(nx) = forces_.x_dot();
}

// ∂ẏ/∂y and ∂ẏ/∂t for rosenbrock4 by forward differences of rhs(), taken
// within the pieces of the force law active at y: a column whose
// perturbation switches a contact's piece (touching, stick/slip) is taken
// backwards instead. Without this, a step that starts on a switch — every
// touch-down does — would difference across the jump of f_n and hand the
// stepper a Jacobian entry of order D·φ̇/√ε.
void CompliantScheme::jacobian(const VectorX& y, double t, const VectorX& f, MatrixX& J, VectorX& dfdt) {
  const Eigen::Index n = y.size();
  const double root_eps = std::sqrt(std::numeric_limits<double>::epsilon());
  evaluate(y, t, rhs_params_);
  pieces(base_pieces_);
  J.resize(n, n);
  yp_ = y;
  auto column = [&](double tt, VectorX& out) {
    rhs(yp_, out, tt);
    pieces(trial_pieces_);
    return trial_pieces_ == base_pieces_;
  };
  for (Eigen::Index j = 0; j < n; ++j) {
    const double yj = y(j);
    const double h = root_eps * std::max(std::abs(yj), 1e-3);
    yp_(j) = yj + h;
    double dh = yp_(j) - yj;
    if (!column(t, fp_)) {
      yp_(j) = yj - h;
      const double dm = yp_(j) - yj;
      if (column(t, fm_)) {
        fp_ = fm_;
        dh = dm;
      } else {
        yp_(j) = yj + h;  // switches either way (a kink at y): keep the forward difference
        rhs(yp_, fp_, t);
      }
    }
    J.col(j) = (fp_ - f) / dh;
    yp_(j) = yj;
  }
  const double ht = root_eps * std::max(std::abs(t), 1e-3);
  double tp = t + ht;
  if (!column(tp, fp_)) {
    tp = t - ht;
    if (!column(tp, fp_)) {
      tp = t + ht;
      rhs(yp_, fp_, tp);
    }
  }
  dfdt = (fp_ - f) / (tp - t);
}

// The parameters the right-hand side uses during the next step: a
// relaxing contact whose point is outside its patch at the step's start
// pushes with nothing (K = D = 0) until its touch has been located and
// committed. The law itself would switch f_n from 0 to D·(ż − φ̇) inside
// the step, a jump no error-controlled stepper can cross (it shrinks the
// step towards the switch forever); located, the jump falls between steps.
void CompliantScheme::freeze_switches(const VectorX& y, double t) {
  evaluate(y, t);
  rhs_params_ = params_;
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    if (state_.record(i).phase == CompliantPhase::Relaxing && forces_.contacts[i].normal_witness > 0.0) {
      rhs_params_[i].stiffness = 0.0;
      rhs_params_[i].damping = 0.0;
    }
  }
}

// The piece of the force law each tracked contact is on (after an evaluation).
void CompliantScheme::pieces(std::vector<int>& out) const {
  out.clear();
  for (const CompliantContactForce& c : forces_.contacts) out.push_back(2 * static_cast<int>(c.mode) + (c.touching ? 1 : 0));
}

void CompliantScheme::evaluate(const VectorX& y, double t, const std::vector<CompliantParameters>& params) {
  const Model& m = model();
  qn_ = y.head(nq());
  normalize_configuration(m, qn_);
  const Eigen::Index nx = y.size() - nq() - nv();
  unchecked::forward_kinematics(m, data_, qn_, y.segment(nq(), nv()));
  tau_contact_.resize(nv());
  compliant_contact_forces(m, data_, qn_, contacts_, params, state_, y.tail(nx), t, tau_contact_, &forces_);
}

CompliantParameters CompliantScheme::parameters_of(const Contact& c, double joint_inertia) const {
  CompliantParameters p;
  if (c.kind == ContactKind::JointLimit) {
    // Joint limits: the world's default spring K and damper D (per radian, or
    // per metre for a prismatic joint), no friction, the damping capped at
    // critical for the joint's inertia I = H_jj: D ≤ 2√(K·I). Beyond it a
    // limit only creeps onto its rest (the slow rate K/D) while its fast rate
    // D/I makes the whole ODE stiff: the defaults on a 5e-4 kg·m² wrist give
    // D/I = 4e6 /s and held dopri5 to steps of 6e-7 s; capped, the pair of
    // rates is √(K/I) = 2e4 /s.
    const ContactParameters& d = world_.default_contact();
    p.stiffness = d.stiffness;
    p.damping = joint_inertia > 0.0 ? std::min(d.damping, 2.0 * std::sqrt(d.stiffness * joint_inertia)) : d.damping;
    p.tangential_stiffness = 0.0;
    p.tangential_damping = 0.0;
    p.mu = 0.0;
    return p;
  }
  const ContactParameters& cp = cat_.pair_parameters[static_cast<std::size_t>(c.pair)];
  p.stiffness = cp.stiffness;
  p.damping = cp.damping;
  p.tangential_stiffness = cp.tangential_stiffness;
  p.tangential_damping = cp.tangential_damping;
  p.mu = cp.mu;
  return p;
}

}  // namespace plume::detail
