// Time-stepping, step 2: q̈ from the force LCP of the persistent contacts β
// at (q, v) — their contact problem assembled at q (features refreshed),
// friction by a polyhedral cone (ContactSolver, Lemke), the friction box by
// projected Gauss–Seidel where Lemke fails; the active-set solve
// (time_stepping_active_set.cpp) first, when β's modes are known.
#include "sim/time_stepping.hpp"

#include "algorithms/crba_placements.hpp"
#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/kinematics.hpp"

namespace plume::detail {

void TimeStepping::parameters_of(const Contact& c, double& mu, double& e) const {
  if (c.kind == ContactKind::JointLimit) {
    mu = 0.0;
    e = opt_.joint_limit_restitution;
    return;
  }
  const ContactParameters& p = cat_.pair_parameters[static_cast<std::size_t>(c.pair)];
  mu = p.mu;
  e = p.restitution;
}

// H and its factor at q (and the placements, joint transforms and subspaces
// crba_placements left with them), from data_ after crba_placements and ltdl.
void TimeStepping::keep_inertia(const VectorX& q) {
  InertiaAt& c = inertia_at_;
  c.q = q;
  c.Xup = data_.Xup;
  c.X0 = data_.X0;
  c.S = data_.S;
  c.qsc = data_.qsc;
  c.H = data_.H;
  c.LD = data_.LD;
  c.valid = true;
}

// Back into data_ when kept at this very q: what crba_placements and ltdl
// would write there (the same passes, the same bits).
bool TimeStepping::restore_inertia(const VectorX& q) {
  const InertiaAt& c = inertia_at_;
  if (!c.valid || !bitwise_equal(q, c.q)) return false;
  std::copy(c.Xup.begin(), c.Xup.end(), data_.Xup.begin());
  std::copy(c.X0.begin(), c.X0.end(), data_.X0.begin());
  data_.S = c.S;
  data_.qsc = c.qsc;
  data_.H = c.H;
  data_.LD = c.LD;
  return true;
}

// ---- accelerations: the force LCP of β at (q, v) ---------------------------------------
// q̈ into `a`; the normal forces, friction and modes stay in the solver's
// solution. False (with the reason in message_) when the LCP failed.
// `predicted`: at the predictor's state, where the contacts sticking at
// the step's start stay sticking (their slip there is the predictor's
// O(h²) error; solved as sliding, their friction would jump to the cone's
// edge and the corrector would be first-order, a rolling ball gaining
// energy).
bool TimeStepping::accelerations(const VectorX& q, const VectorX& v, VectorX& a, bool predicted) {
  ++stats_.rhs_evaluations;
  const Model& m = model();
  applied_torque(m, opt_, tau_, v, tau_applied_);
  if (beta_.empty()) {
    a = unchecked::aba(m, data_, q, v, tau_applied_);
    return true;
  }
  contacts_.clear();
  // With β's modes known the active-set solve comes first and needs H: its
  // CRBA pass leaves the placements the contacts are refreshed with.
  ltdl_known_ = false;
  if (modes_known_) {
    // (project()'s velocity projection at this q left them)
    if (restore_inertia(q)) {
      ltdl_known_ = true;
    } else {
      detail::crba_placements(m, data_, q);
    }
  } else {
    unchecked::forward_kinematics(m, data_, q);
  }
  mu_.resize(static_cast<Eigen::Index>(beta_.size()));
  bool friction = false;
  for (std::size_t k = 0; k < beta_.size(); ++k) {
    contacts_.push_back(beta_[k].contact);
    mu_(static_cast<Eigen::Index>(k)) = beta_[k].mu;
    friction |= beta_[k].mu > 0.0;
  }
  // The active-set solve reads the contacts' body-frame features only
  // (contact_jacobians); the LCP gets them refreshed at q (the placements
  // stay those of the pass above: the solve's bias pass writes velocities
  // and forces only).
  if (active_set_accelerations(v, a, predicted)) {
    last_ = &fast_;
    return true;
  }
  for (Contact& c : contacts_) {
    if (c.kind == ContactKind::Shapes) refresh_contact(m, data_, c);
  }
  ContactSolveOptions so;
  so.friction = friction ? FrictionModel::PolyhedralCone : FrictionModel::None;
  so.cone_directions = opt_.cone_directions;
  so.slip_velocity = opt_.slip_velocity;
  // Consecutive solves over the same contacts mostly keep their basis; an
  // output's solve neither uses nor replaces it (outputs never change a run).
  so.reuse_basis = !output_solve_;
  if (predicted) {
    slip_.resize(static_cast<Eigen::Index>(beta_.size()));
    for (std::size_t k = 0; k < beta_.size(); ++k) {
      slip_(static_cast<Eigen::Index>(k)) = beta_[k].mode == ContactMode::Sticking ? kInf : opt_.slip_velocity;
    }
    so.slip_velocities.swap(slip_);
  }
  const ContactSolution* sp = &solver_.solve(m, data_, q, v, tau_applied_, contacts_, mu_, so);
  ++stats_.lcp_solves;
  if (sp->status == ContactStatus::Failed && friction) {
    // Lemke defeated by dependent contacts and cone directions (a foot's
    // corners with friction): the friction-box model by projected
    // Gauss–Seidel, which does not give up on degenerate problems.
    so.friction = FrictionModel::Box;
    so.pgs.max_iterations = 5000;
    so.pgs.tolerance = 1e-6;
    sp = &solver_.solve(m, data_, q, v, tau_applied_, contacts_, mu_, so);
    ++stats_.lcp_solves;
    ++stats_.fallbacks;
  }
  if (predicted) so.slip_velocities.swap(slip_);
  const ContactSolution& s = *sp;
  last_ = &s;
  if (s.status != ContactStatus::Solved) {
    message_ = contact_failure_words(s.status, s.message) + " for " + cat_.names_of(m, contacts_);
    return false;
  }
  a = s.ddq;
  return true;
}

}  // namespace plume::detail
