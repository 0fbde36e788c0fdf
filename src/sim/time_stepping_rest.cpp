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
#include <cstdint>

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
const ImpactSolution& TimeStepping::velocity_level_impulses(double h, const std::vector<Contact>& contacts,
                                                            const VectorX& gaps, bool reuse_basis,
                                                            bool compliance_retries) {
  const Model& m = model();
  const int n = static_cast<int>(contacts.size());
  level_mu_.resize(n);
  level_e_.setZero(n);
  double unused = 0.0;
  for (int i = 0; i < n; ++i) parameters_of(contacts[static_cast<std::size_t>(i)], level_mu_(i), unused);
  level_vminus_ = v_ + h * unchecked::aba(m, data_, q_, v_, applied_tau_at(v_));
  ++stats_.rhs_evaluations;
  unchecked::forward_kinematics(m, data_, q_, v_);
  ImpactOptions io;
  io.friction = n > 0 && level_mu_.maxCoeff() > 0.0 ? FrictionModel::PolyhedralCone : FrictionModel::None;
  io.cone_directions = opt_.cone_directions;
  io.time_step = h;
  io.gaps = gaps;
  io.reuse_basis = reuse_basis;
  const ImpactSolution* sp = &solver_.impact(m, data_, q_, level_vminus_, contacts, level_e_, level_mu_, io);
  ++stats_.lcp_solves;
  for (const double compliance : {1e-8, 1e-6, 1e-4}) {
    if (!compliance_retries || sp->status == ContactStatus::Solved || sp->status == ContactStatus::Infeasible) break;
    io.compliance = compliance;
    sp = &solver_.impact(m, data_, q_, level_vminus_, contacts, level_e_, level_mu_, io);
    ++stats_.lcp_solves;
  }
  return *sp;
}

// The velocity-level step of length h from (t_, q_, v_) over the contacts
// touching at q_ (settle()'s detection); false, with q1 and v1 not to be
// used, when its impulse problem is unsolved or the step carries a contact
// into its surface that it cannot take in (then h is cut as usual).
// A contact that was not touching and that the step carries into its
// surface:
//  - approaching slower than zeno_speed (a joint limit a hair from its
//    stop, a corner of a foot a hair above the ground, while the body
//    creeps) joins the problem with its gap φ at q_ (ζ⁺ ≥ −φ/h: it closes
//    within the step, as Stewart–Trinkle's and Anitescu–Potra's contacts
//    do); its plastic landing at the step's end (impacts()) is what the
//    scheme does to any approach slower than zeno_speed;
//  - a joint limit approaching faster (a limb still swinging onto its
//    stop while the rest of the body creeps) is landed on: h is shortened
//    to the root of its gap at the step's end as a function of h, so that
//    it touches at the step's end and gets its impact there, with its
//    restitution. A shape contact approaching faster is left to the
//    trapezoid's landing (the step fails): landed on this way, a foot's
//    corner among sliding feet (the Painlevé test's humanoid, 1.1 ms) led
//    to a state where no forces existed after three tangential impacts.
// Each round solves the problem again; a contact taken in that still ends
// deeper than the margin has its φ reduced by that depth; a landing's h
// comes from a parabola in h through its gap at the start and at the ends
// solved (the velocity-level step's end gap is φ + h ζ(v + h q̈ + impulses):
// quadratic in h where the impulses change little), kept in the bracket of
// the root. At most kRestRounds rounds; a landing still short of its
// surface then is accepted (it lands at a later step). Left out, the step was cut
// to the first slow slide's stop, 1e-8–1e-6 s, until that contact had
// landed: on the lying humanoid a third of all steps.
bool TimeStepping::rest_step(double& h, VectorX& q1, VectorX& v1) {
  const Model& m = model();
  if (touching_.empty()) return false;
  const double margin = touch_margin(opt_);
  level_contacts_ = touching_;
  level_gaps_.setZero(static_cast<Eigen::Index>(touching_.size()));
  // A landing: its contact and the bracket [a, b] of its root in h (the
  // gap at the step's end positive at a, negative at b).
  bool landing = false;
  Contact lander;
  // The landing's target gap (inside the band it is accepted in) and its
  // gaps at the step's start and at the last end solved.
  double a = 0.0, ga = 0.0, b = 0.0, gb = 0.0;
  const double target = 0.25 * margin;
  double g_start = 0.0, h_last = 0.0, g_last = 0.0;
  for (int round = 0;; ++round) {
    // (the basis of the touching contacts' problem carries over from the
    // last step; a problem with contacts taken in is solved afresh)
    const ImpactSolution& s =
        velocity_level_impulses(h, level_contacts_, level_gaps_, level_contacts_.size() == touching_.size(), true);
    if (s.status != ContactStatus::Solved) return false;
    v1 = s.v_plus;
    integrate(m, q_, v1, h, q1);
    // The same test as attempt()'s, over every contact at q₁.
    detect(q1, margin, found_);
    const std::size_t taken = level_contacts_.size();
    bool kinematics = false, clear = true;
    rest_fast_.clear();
    for (const Contact& c : found_) {
      if ((landing && c.id == lander.id) || !penetrates(c)) continue;
      if (round == kRestRounds) return false;
      clear = false;
      std::size_t k = 0;
      while (k < taken && level_contacts_[k].id != c.id) ++k;
      if (k < taken) {
        if (level_gaps_(static_cast<Eigen::Index>(k)) <= 0.0) return false;  // (no room left to take)
        level_gaps_(static_cast<Eigen::Index>(k)) += c.gap - start_gap(c.id);
        continue;
      }
      if (!kinematics) unchecked::forward_kinematics(m, data_, q1, v1);
      kinematics = true;
      if (contact_kinematics(m, data_, c).gap_rate <= -opt_.zeno_speed) {
        if (c.kind != ContactKind::JointLimit) return false;
        rest_fast_.push_back(c);
      } else {
        level_contacts_.push_back(c);
      }
    }
    // The landing's gap at q₁ (gap_at leaves the placements of q₁ in data_).
    double g = 0.0;
    if (landing) {
      g = gap_at(q1, lander);
      // touching at the step's end, within half the margin of its surface: landed
      if (clear && g >= -0.5 * margin && g <= margin) return true;
      if (round == kRestRounds) return clear && g >= -margin;  // (short of it: landed on at a later step)
    } else if (clear) {
      return true;
    }
    // (gap_at moves data_: after the tests)
    level_gaps_.conservativeResize(static_cast<Eigen::Index>(level_contacts_.size()));
    for (std::size_t k = taken; k < level_contacts_.size(); ++k) {
      level_gaps_(static_cast<Eigen::Index>(k)) = std::max(gap_at(q_, level_contacts_[k]), 0.0);
    }
    if (!rest_fast_.empty()) {
      // The earliest landing, first as if the contact's gap fell from rest
      // with a constant acceleration, g(s) = g₀ − (g₀ − g(h)) (s/h)² (the
      // humanoid's limbs settling onto their stops); then (below) by the
      // parabola through g₀ and the last two ends.
      double best = h;
      for (const Contact& c : rest_fast_) {
        const double g0 = gap_at(q_, c);
        if (g0 <= margin) return false;  // (touching already, not in the problem: left to the usual cut)
        const double root = h * std::sqrt((g0 - target) / (g0 - c.gap));
        if (root < best) {
          best = root;
          lander = c;
          a = 0.0;
          ga = g0;
          b = h;
          gb = c.gap;
          g_start = g0;
          h_last = h;
          g_last = c.gap;
        }
      }
      if (!(best > 0.0 && best < h)) return false;
      landing = true;
      h = best;
    } else if (landing && (g < -0.5 * margin || g > margin)) {
      // The problem changes with h: the landing's gap at the step's end,
      // g(h) = g₀ + B h + C h² through this end and the last, kept in the
      // bracket [a, b] of the root (else regula falsi on it).
      if (g > 0.0) {
        a = h;
        ga = g;
      } else {
        b = h;
        gb = g;
      }
      double next = a + ga * (b - a) / (ga - gb);
      if (h != h_last) {
        const double s1 = (g_last - g_start) / h_last, s2 = (g - g_start) / h;
        const double C = (s2 - s1) / (h - h_last), B = s1 - C * h_last;
        const double k = g_start - target;
        for (const double r : {C != 0.0 ? (-B - std::sqrt(std::max(0.0, B * B - 4.0 * C * k))) / (2.0 * C) : -k / B,
                               C != 0.0 ? (-B + std::sqrt(std::max(0.0, B * B - 4.0 * C * k))) / (2.0 * C) : -k / B}) {
          if (B * B - 4.0 * C * k >= 0.0 && r > a && r < b) {
            next = r;
            break;
          }
        }
      }
      h_last = h;
      g_last = g;
      if (!(next > a && next < b)) return false;
      h = next;
    }
  }
}

}  // namespace plume::detail
