// Time-stepping, step 5: impacts at the step's end. The contacts touching
// at q₁ that approach from outside β get the impulse LCP with Newton
// restitution and friction (plastic below zeno_speed), as the event-driven
// scheme's impacts; a plastic Zeno impact brings the face to rest.
#include "sim/time_stepping.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Cholesky>
#include <Eigen/LU>

#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/energy.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/contact/contact_jacobian.hpp"

namespace plume::detail {

// Impacts at (t_, q_, v_): every touching contact, the approaching ones with
// their restitution (plastic below zeno_speed), by the impulse LCP.
bool TimeStepping::impacts(SimulationResult& result, bool kinematics) {
  const Model& m = model();
  // (a reused detection leaves data_ alone; a new one writes placements only)
  const bool reused = detected_valid_ && touch_margin(opt_) == detected_margin_ && bitwise_equal(q_, detected_q_);
  detect(q_, touch_margin(opt_), touching_, false);
  if (!(kinematics && reused)) unchecked::forward_kinematics(m, data_, q_, v_);
  // (project()'s check saw these kinematics and β's contacts: their ζ from there)
  const bool checked = kinematics && reused && proj_zeta_valid_;
  const int n = static_cast<int>(touching_.size());
  VectorX& zeta = imp_zeta_;
  VectorX& mu = imp_mu_;
  VectorX& e = imp_e_;
  zeta.resize(n);
  mu.resize(n);
  e.resize(n);
  bool impact = false;
  for (int i = 0; i < n; ++i) {
    count_penetration(stats_, touching_[i]);
    const double z = checked ? checked_zeta(touching_[i]) : std::numeric_limits<double>::quiet_NaN();
    zeta(i) = std::isnan(z) ? contact_kinematics(m, data_, touching_[i]).gap_rate : z;
    parameters_of(touching_[i], mu(i), e(i));
    // Persistent contacts drift by O(h³) between projections: only a contact
    // arriving from outside β makes an impact (β's take part in it).
    impact |= zeta(i) < -opt_.velocity_tolerance && !in_beta(touching_[i].id);
  }
  proj_zeta_valid_ = false;
  if (!impact) {
    // settle() at this (q, v) and these contacts reads their ζ from here.
    zeta_q_ = q_;
    zeta_v_ = v_;
    zeta_known_ = true;
    return true;
  }
  zeta_known_ = false;
  VectorX e_eff = e;
  for (int i = 0; i < n; ++i) {
    if (zeta(i) < 0.0 && -zeta(i) < opt_.zeno_speed) e_eff(i) = 0.0;
  }
  ImpactOptions io;
  io.friction = mu.maxCoeff() > 0.0 ? FrictionModel::PolyhedralCone : FrictionModel::None;
  io.cone_directions = opt_.cone_directions;
  const ImpactSolution* sp = &solver_.impact(m, data_, q_, v_, touching_, e_eff, mu, io);
  ++stats_.lcp_solves;
  // As the event-driven scheme: a light compliance where dependent contacts
  // defeat Lemke on the rigid impact (their impulses in least-squares share).
  for (const double compliance : {1e-8, 1e-6, 1e-4}) {
    if (sp->status == ContactStatus::Solved || sp->status == ContactStatus::Infeasible) break;
    io.compliance = compliance;
    sp = &solver_.impact(m, data_, q_, v_, touching_, e_eff, mu, io);
    ++stats_.lcp_solves;
  }
  // Still unsolved: Lemke's ties among the cone directions of dependent
  // contacts (two soles flat, 8 corners) can survive the compliance too. A
  // cone of twice the directions (a closer polygon to Coulomb's circle)
  // poses the same impact without those ties. Measured on a humanoid's
  // landing (10 contacts, LCP of 100): 8 and 12 directions fail at every
  // compliance, 16 solve it.
  if (sp->status == ContactStatus::Failed && io.friction == FrictionModel::PolyhedralCone) {
    io.cone_directions = 2 * opt_.cone_directions;
    io.compliance = 0.0;
    sp = &solver_.impact(m, data_, q_, v_, touching_, e_eff, mu, io);
    ++stats_.lcp_solves;
  }
  const ImpactSolution& s = *sp;
  ++stats_.impacts;
  if (s.status != ContactStatus::Solved) {
    return fail(result, SimulationStatus::ContactFailure, "impact at t = " + fmt(t_) + ": " +
                                                              contact_failure_words(s.status, s.message) + " for " +
                                                              cat_.names_of(m, touching_));
  }
  bool zeno = false;
  for (int i = 0; i < n; ++i) {
    if (s.impulse(i) > 0.0 || zeta(i) < -opt_.velocity_tolerance) {
      const bool plastic_rest = zeta(i) < -opt_.velocity_tolerance && -zeta(i) < opt_.zeno_speed;
      zeno |= plastic_rest;
      emit(t_, plastic_rest ? EventKind::ZenoRest : EventKind::Impact, touching_[i], zeta(i), s.zeta_plus(i), s.impulse(i));
    }
  }
  v_ = s.v_plus;
  // A plastic Zeno impact comes to rest as a whole: touching contacts the
  // impulse left separating slower than zeno_speed (the other edge of a
  // face landing flat, which would rock from edge to edge at every step)
  // have their normal velocity removed too (an H-metric projection: it never
  // adds energy). The projection holds every touching contact slower than
  // zeno_speed, joint limits included: held on the shapes alone it moved a
  // limit at rest (a humanoid lying with an ankle on its stop: ζ of 3.6e-7
  // and -2.7e-6 rad/s), which then left β or hit its stop at the next step,
  // and two ankle limits took turns every 3e-5 s.
  if (zeno) {
    slow_.clear();
    for (int i = 0; i < n; ++i) {
      if (touching_[i].kind == ContactKind::Shapes && s.zeta_plus(i) > opt_.velocity_tolerance &&
          s.zeta_plus(i) < opt_.zeno_speed) {
        slow_.push_back(i);
      }
    }
    if (!slow_.empty()) {
      rest_.clear();
      for (int i = 0; i < n; ++i) {
        if (std::abs(s.zeta_plus(i)) < opt_.zeno_speed) rest_.push_back(touching_[i]);
      }
      const int nr = static_cast<int>(rest_.size());
      unchecked::forward_kinematics(m, data_, q_, v_, VectorX::Zero(m.nv()));
      MatrixX T(m.nv(), nr);
      VectorX unused(nr);
      contact_jacobian(m, data_, rest_, T, unused);
      const MatrixX H = unchecked::crba(m, data_, q_);
      const Eigen::LDLT<MatrixX> Hf(H);
      const MatrixX HiT = Hf.solve(T);
      MatrixX A = T.transpose() * HiT;
      A.diagonal().array() += 1e-12 * std::max(1e-12, A.diagonal().maxCoeff());
      v_ -= HiT * A.partialPivLu().solve(T.transpose() * v_);
    }
  }
  return true;
}

// The tangential impact where β's force LCP has no solution at (t_, q_, v_)
// (Painlevé's paradox: sliding friction that would need an unbounded normal
// force; Génot and Brogliato 1999). The impulse is the h → 0 limit of a
// velocity-level (Stewart–Trinkle, Anitescu–Potra) step over the touching
// contacts: v⁻ = v + h H⁻¹(τ − C), ζ⁺ ≥ −φ/h, plastic, friction in the
// cone with maximal dissipation. That problem always has a solution; where
// forces exist it is O(h) (nothing happens), where they do not it stays
// finite as h → 0 (the impact). Measured on the humanoid collapse at the
// paradox: the impulses agree to 3 digits for h = 1e-5, 1e-7 and 1e-9 s, and
// the force LCP is solved at the new velocity. Near the paradox's threshold
// the polyhedral cone of the velocity problem (μ cos(π/k) between its
// directions) can still hold where Coulomb's isotropic sliding force does
// not: the impulse is then O(h) and changes nothing, so each further try
// (`attempt` 0, 1, 2) takes h 100 times longer (1e-9, 1e-7, 1e-5 s). The
// velocity h q̈ this adds without advancing time could add up to h·(power
// of the applied forces) of kinetic energy: v⁺ is scaled back to the kinetic
// energy before the impulse if it exceeds it. Emits the impacts; false when
// the impulse LCP failed too.
bool TimeStepping::jam(int attempt) {
  const Model& m = model();
  const int n = static_cast<int>(touching_.size());
  if (n == 0) return false;
  const double h = kJamStep * std::pow(100.0, attempt);
  level_gaps_.resize(n);
  for (int i = 0; i < n; ++i) level_gaps_(i) = touching_[static_cast<std::size_t>(i)].gap;
  const ImpactSolution& s = velocity_level_impulses(h, touching_, level_gaps_, false, true);
  if (s.status != ContactStatus::Solved) {
    message_ += "; the tangential impact failed too: " + contact_failure_words(s.status, s.message);
    return false;
  }
  ++stats_.impacts;
  for (int i = 0; i < n; ++i) {
    if (s.impulse(i) > 0.0) {
      emit(t_, EventKind::Impact, touching_[static_cast<std::size_t>(i)], s.zeta_minus(i), s.zeta_plus(i), s.impulse(i));
    }
  }
  const double before = kinetic_energy(m, data_, q_, v_);
  v_ = s.v_plus;
  const double after = kinetic_energy(m, data_, q_, v_);
  if (after > before && after > 0.0) v_ *= std::sqrt(before / after);
  return true;
}

}  // namespace plume::detail
