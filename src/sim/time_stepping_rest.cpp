// Time-stepping, step 4 where the motion is slower than zeno_speed: the
// velocity-level step. Two things cut the trapezoid's steps to ~1e-8 s on a
// body lying on many dependent contacts (a humanoid on its back: soles,
// pelvis, hands, joint limits), while it creeps at µm/s:
//  - a slide slower than zeno_speed that stops within the step (the force
//    LCP shares the friction of the dependent contacts, one of them
//    reverses each step, and the step lands on its stop; a slide of µm/s
//    that turns, pushed across by the body, reverses along its direction
//    of the step's start every fraction of a microsecond without stopping);
//  - a touching contact that separates slower than zeno_speed (left so by a
//    plastic impact among dependent contacts) and returns within the step.
// Followed exactly, each is an event of a flight or a slide lasting 1e-8 s.
// Below zeno_speed the scheme already makes approaches plastic at once; in
// the same spirit such a step is taken whole, at the velocity level
// (Stewart–Trinkle, Anitescu–Potra): v⁺ = v + h H⁻¹(τ − C) + impulses of
// every touching contact, plastic (ζ⁺ ≥ 0: they touch already, and a gap
// of ~1e-10 m closed within the step would leave an approach of φ/h at its
// end, an impact there) and friction in the polyhedral cone with
// maximal dissipation; q₁ = q ⊕ h v⁺. That problem always has a solution.
// The step is first order, but only the slow phenomena that triggered it
// are affected: their slides stop and their flights end within the step,
// and the new β's force LCP at the step's end decides what moves next.
// Step 5 (projection, energy guard, impacts, the new β) follows as after
// any step.
#include "sim/time_stepping.hpp"

#include <cmath>

#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"

namespace plume::detail {

// Whether the attempt that just failed with `outcome` failed only on motion
// slower than zeno_speed (see above): every slide it saw reverse was slower
// (whenever in the step it stops), or the contact it
// found penetrating touched at the step's start and separated slower while
// other contacts persist (β not empty: the dependent contacts a plastic
// impact among them leaves separating at µm/s; a lone body's slow bounce,
// e.g. a ball's, is landed on and made plastic there, zeno_rest).
bool TimeStepping::slow_failure(Outcome outcome) {
  if (outcome == Outcome::Stick) return slow_stop_;
  if (outcome != Outcome::Penetration || beta_.empty()) return false;
  for (const Contact& c : touching_) {
    if (c.id != penetrating_) continue;
    unchecked::forward_kinematics(model(), data_, q_, v_);
    const double zeta = contact_kinematics(model(), data_, c).gap_rate;
    return zeta > 0.0 && zeta < opt_.zeno_speed;
  }
  return false;
}

// (the problem: time_stepping.hpp)
const ImpactSolution& TimeStepping::velocity_level_impulses(double h, bool with_gaps, bool compliance_retries) {
  const Model& m = model();
  const int n = static_cast<int>(touching_.size());
  level_gaps_.setZero(n);
  level_mu_.resize(n);
  level_e_.setZero(n);
  double unused = 0.0;
  for (int i = 0; i < n; ++i) {
    const Contact& c = touching_[static_cast<std::size_t>(i)];
    if (with_gaps) level_gaps_(i) = c.gap;
    parameters_of(c, level_mu_(i), unused);
  }
  level_vminus_ = v_ + h * unchecked::aba(m, data_, q_, v_, applied_tau_at(v_));
  ++stats_.rhs_evaluations;
  unchecked::forward_kinematics(m, data_, q_, v_);
  ImpactOptions io;
  io.friction = n > 0 && level_mu_.maxCoeff() > 0.0 ? FrictionModel::PolyhedralCone : FrictionModel::None;
  io.cone_directions = opt_.cone_directions;
  io.time_step = h;
  io.gaps = level_gaps_;
  io.reuse_basis = !with_gaps;  // (velocity-level steps in a row; not the rare tangential impact)
  const ImpactSolution* sp = &solver_.impact(m, data_, q_, level_vminus_, touching_, level_e_, level_mu_, io);
  ++stats_.lcp_solves;
  for (const double compliance : {1e-8, 1e-6, 1e-4}) {
    if (!compliance_retries || sp->status == ContactStatus::Solved || sp->status == ContactStatus::Infeasible) break;
    io.compliance = compliance;
    sp = &solver_.impact(m, data_, q_, level_vminus_, touching_, level_e_, level_mu_, io);
    ++stats_.lcp_solves;
  }
  return *sp;
}

// The velocity-level step of length h from (t_, q_, v_) over the contacts
// touching at q_ (settle()'s detection); false, with q1 and v1 not to be
// used, when its impulse problem is unsolved or the step carries a contact
// that was not touching into its surface (then h is cut as usual).
bool TimeStepping::rest_step(double h, VectorX& q1, VectorX& v1) {
  const Model& m = model();
  if (touching_.empty()) return false;
  const ImpactSolution& s = velocity_level_impulses(h, false, true);
  if (s.status != ContactStatus::Solved) return false;
  v1 = s.v_plus;
  integrate(m, q_, v1, h, q1);
  // The same test as attempt()'s, over every contact at q₁.
  detect(q1, touch_margin(opt_), found_);
  for (const Contact& c : found_) {
    if (penetrates(c)) return false;
  }
  return true;
}

}  // namespace plume::detail
