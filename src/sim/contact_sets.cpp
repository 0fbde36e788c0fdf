// Table 11.1, steps 5–6: the current set (touching, ζ = 0) and the active
// set (a basis of range(T) with λ > 0) from the force LCP (11.42) at an event,
// after any impact; what changed goes to events.csv (contact loss and gain,
// stick and slip).
#include <algorithm>
#include <cmath>
#include <limits>

#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/energy.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "sim/event_driven.hpp"
#include "sim/starting_slides.hpp"

namespace plume::detail {


// At time t with state (q, v): impacts, then the new current and active sets.
bool EventDrivenCore::handle_contacts(SimulationResult& result) {
  const Model& m = model();
  memo.valid = false;  // the contact solver reuses data and the sets change
  normalize_configuration(m, q);
  detect_all(q, opt.contact_tolerance, touching);
  // Keep tracked contacts that are still touching (by id) with their modes.
  std::vector<Tracked> previous = current;
  slide_hints.clear();
  if (cone_event) record_edge_friction(cone_pair_group);
  // Separation velocities ζ⁻.
  unchecked::forward_kinematics(m, data, q, v);
  const int n = static_cast<int>(touching.size());
  VectorX zeta(n), mu(n), e(n);
  for (int i = 0; i < n; ++i) {
    zeta(i) = contact_kinematics(m, data, touching[i]).gap_rate;
    parameters_of(touching[i], mu(i), e(i));
  }
  // Impacts (step 4): approaching contacts need an impulse.
  bool impact = false;
  for (int i = 0; i < n; ++i) impact |= zeta(i) < -opt.velocity_tolerance;
  if (impact && !apply_impacts(result, zeta, mu, e)) return false;
  // No forces for the resting contacts (Painlevé: sliding friction that
  // would need an unbounded normal force) but none proved impossible: the
  // motion jumps, a tangential impact, before any fallback window. An
  // attempt whose impact problem is left unsolved passes to the next one.
  for (int attempt = 0; !solve_contact_sets(result, zeta, mu, e);) {
    if (fallback_reason.empty()) return false;
    while (attempt < kJamAttempts && !jam(attempt, zeta, mu)) ++attempt;
    if (attempt++ == kJamAttempts) return false;
    result = SimulationResult{};
    fallback_reason.clear();
    impact = true;
  }
  report_set_changes(previous, impact);
  // A contact held in the active set while it separates slowly (set moving
  // off by the others' plastic impact, below zeno_speed) keeps that speed
  // under ζ̈ = 0: its force then does work, the body turns on at constant
  // speed against gravity. A cube brought to rest by a rocking Zeno series
  // kept 3.7e-6 m/s this way, rose, lost the edge, landed at 1.2e-4 m/s
  // and rocked on for good (48 000 events in 0.6 s). The new sets start
  // with the active contacts' velocities projected to rest.
  const bool held_any = !held.empty();
  held.clear();
  if (held_any && !current.empty()) {
    memo.valid = false;  // (the sets changed at the same (q, v))
    if (project_velocities()) ++stats.projections;
  }
  refresh_view();
  return true;
}

// The force LCP (11.42) over the resting contacts (ζ̇ ≤ velocity_tolerance,
// or held) decides the current and active sets (step 6).
bool EventDrivenCore::solve_contact_sets(SimulationResult& result, const VectorX& zeta, const VectorX& mu, const VectorX& e) {
  const Model& m = model();
  const int n = static_cast<int>(touching.size());
  std::vector<Contact> resting;
  std::vector<int> from;
  for (int i = 0; i < n; ++i) {
    const bool is_held = zeta(i) < opt.zeno_speed &&
                         std::find(held.begin(), held.end(), touching[i].id) != held.end();
    if (zeta(i) <= opt.velocity_tolerance || is_held) {
      resting.push_back(touching[i]);
      from.push_back(i);
    }
  }
  current.clear();
  std::vector<int> starting;  // tracks that start to slide from rest
  if (!resting.empty()) {
    const int nr = static_cast<int>(resting.size());
    VectorX mur(nr);
    for (int k = 0; k < nr; ++k) {
      mur(k) = mu(from[k]);
      if (cone_event && std::find(cone_event_ids.begin(), cone_event_ids.end(), resting[k].id) != cone_event_ids.end()) {
        mur(k) *= 1.0 - kConeEventShrink;
      }
    }
    cone_event = false;  // the event's own solve only (not a later one after a fallback window)
    ContactSolveOptions so;
    so.friction = mur.maxCoeff() > 0.0 ? FrictionModel::PolyhedralCone : FrictionModel::None;
    so.cone_directions = opt.cone_directions;
    so.slip_velocity = slip_speed();
    const ContactSolution& s = solver.solve(m, data, q, v, tau + passive(), resting, mur, so);
    ++stats.lcp_solves;
    if (s.status != ContactStatus::Solved) {
      const std::string what = contact_failure_words(s.status, s.message) + " for " + catalogue.names_of(m, resting);
      if (s.status != ContactStatus::Infeasible && opt.fallback_duration > 0.0) fallback_reason = "contact forces: " + what;
      return fail(result, SimulationStatus::ContactFailure, "contact forces at t = " + fmt(t) + ": " + what);
    }
    const double fscale = std::max(1e-12, s.lambda.cwiseAbs().maxCoeff());
    for (int k = 0; k < nr; ++k) {
      Tracked tr;
      tr.contact = resting[k];
      tr.mu = mu(from[k]);
      tr.restitution = e(from[k]);
      // Active: λ basic in the LCP's solution (independent normals) and
      // positive; dependent touching contacts stay current but inactive.
      tr.active = std::find(s.active.begin(), s.active.end(), k) != s.active.end() && s.lambda(k) > 1e-12 * fscale;
      tr.mode = s.mode[k];
      if (s.mode[k] == ContactMode::Separating) tr.active = false;
      if (tr.mode == ContactMode::Sliding || tr.mode == ContactMode::Slipping) {
        // Slide along the current sliding velocity, or (starting from
        // rest) against the friction force.
        const ContactKinematics ck = contact_kinematics(m, data, resting[k]);
        Vec3 u = ck.velocity_b - ck.velocity_a;
        u -= u.dot(ck.normal) * ck.normal;
        tr.frozen = u.norm() <= kSlideFreeze;
        if (u.norm() > slip_speed()) {
          tr.slide_dir = u.normalized();
        } else {
          // Starting to slip from rest: along the tangential acceleration
          // the LCP found (or, failing that, against the friction force);
          // refine_starting_slides then makes it Coulomb's direction.
          starting.push_back(static_cast<int>(current.size()));
          Vec3 t1, t2;
          tangent_basis(ck.normal, t1, t2);
          const Vec3 f = s.friction(0, k) * t1 + s.friction(1, k) * t2;
          const Vec3 a_t = tangential_acceleration(resting[k], s.ddq);
          const auto hint = std::find_if(slide_hints.begin(), slide_hints.end(),
                                         [&](const auto& e) { return e.first == resting[k].id; });
          const Vec3 d = hint == slide_hints.end() ? Vec3::Zero() : Vec3(hint->second - hint->second.dot(ck.normal) * ck.normal);
          if (d.norm() > 1e-6) {
            tr.slide_dir = d.normalized();
          } else if (a_t.norm() > 0.0) {
            tr.slide_dir = a_t.normalized();
          } else {
            tr.slide_dir = f.norm() > 0 ? Vec3(-f.normalized()) : t1;
          }
        }
        tr.mode = ContactMode::Sliding;
      } else {
        tr.mode = ContactMode::Sticking;
      }
      if (tr.mu <= 0.0 || tr.contact.kind == ContactKind::JointLimit) tr.mode = ContactMode::Sticking;
      current.push_back(tr);
    }
    add_dependent_contacts(s.current);
    if (!starting.empty()) refine_starting_slides(starting);
  }
  return true;
}

// Before a cone-margin event's solve, with the sets that led to it: the
// friction of each sticking contact at its cone's edge (|f_t| within 1e-3
// of μ f_n), or at a pair-cone event (pair_group ≥ 0) the pair's total
// friction for each of its contacts. The LCP's direction for a slide
// starting there can be π/k off (its polyhedral cone) and, for contacts
// between the same two bodies (an edge's two corners on a face), off in
// opposite senses: the yaw that mismatch drives turned each a_t far from
// its direction, and Newton's method from there did not converge; the
// slide then broke the pair's symmetry (a tipped cube rocked on two
// corners, 324 lift-offs in 0.03 s).
void EventDrivenCore::record_edge_friction(int pair_group) {
  const Model& m = model();
  if (current.empty()) return;
  memo.valid = false;
  dynamics(q, v, x_scratch(), true);
  unchecked::forward_kinematics(m, data, q, v);
  if (pair_group >= 0) {
    // Every contact of the pair, the inactive (dependent) ones too.
    Vec3 total;
    pair_cone_margin(pair_group, &total);
    const Contact& first = pair_first(pair_group);
    for (const Tracked& tr : current) {
      const Contact& c = tr.contact;
      if (c.kind != ContactKind::Shapes) continue;
      if (c.body_a == first.body_a && c.body_b == first.body_b) add_slide_hint(c.id, -total);
      if (c.body_a == first.body_b && c.body_b == first.body_a) add_slide_hint(c.id, total);
    }
    memo.valid = false;
    return;
  }
  for (std::size_t a = 0; a < act_track.size(); ++a) {
    const Tracked& tr = current[static_cast<std::size_t>(act_track[a])];
    if (tr.mode != ContactMode::Sticking || tr.mu <= 0.0 || !(fn[a] > 0.0)) continue;
    if (ft[a].norm() < (1.0 - 1e-3) * tr.mu * fn[a]) continue;
    Vec3 t1, t2;
    tangent_basis(contact_kinematics(m, data, act[a]).normal, t1, t2);
    add_slide_hint(tr.contact.id, -(ft[a].x() * t1 + ft[a].y() * t2));
  }
  memo.valid = false;
}

// A hint for a contact that has none yet (unit length, or none).
void EventDrivenCore::add_slide_hint(std::uint64_t id, const Vec3& direction) {
  if (!(direction.norm() > 0.0)) return;
  for (const auto& h : slide_hints) {
    if (h.first == id) return;
  }
  slide_hints.emplace_back(id, direction.normalized());
}

// The force LCP's polyhedral cone of k directions gives a contact that
// starts to slide from rest a direction ŝ₀ within π/k of Coulomb's: there the
// friction −μλŝ₀ opposes a tangential acceleration a_t that is itself along
// ŝ₀ (maximal dissipation). Frozen at the approximate ŝ₀ until the slide
// reaches kSlideFreeze, the slide would leave rest slightly askew: a cube on
// an incline whose slope lies between two cone directions gained 1.8e-6 m/s
// along it. coulomb_starting_directions (Newton's method on the active
// contacts' angles through the constrained dynamics) turns each ŝ₀ onto its
// a_t; the LCP's directions stay where it does not converge or would turn a
// direction out of the cone's sector around it (a published-style humanoid
// collapsing then chattered to the event limit on three of three starts).
void EventDrivenCore::refine_starting_slides(const std::vector<int>& starting) {
  memo.valid = false;
  dynamics(q, v, x_scratch(), false);
  std::vector<int> slots;
  for (int k : starting) {
    const Tracked& tr = current[static_cast<std::size_t>(k)];
    const int a = active_slot(k);
    if (a >= 0 && tr.mode == ContactMode::Sliding && tr.frozen && tr.mu > 0.0) slots.push_back(a);
  }
  const int n = static_cast<int>(slots.size());
  if (n == 0) return;  // (dependent contacts alone: the LCP's directions stay)
  std::vector<Vec3> before;
  for (const Tracked& tr : current) before.push_back(tr.slide_dir);
  VectorX angle(n);
  for (int i = 0; i < n; ++i) {
    const int a = slots[static_cast<std::size_t>(i)];
    Vec3 t1, t2;
    tangent_basis(act[static_cast<std::size_t>(a)].normal, t1, t2);
    const Vec3& d = current[static_cast<std::size_t>(act_track[static_cast<std::size_t>(a)])].slide_dir;
    angle(i) = std::atan2(d.dot(t2), d.dot(t1));
  }
  // On success the directions and q̈ (in scratch) are those of the root.
  const bool converged = coulomb_starting_directions(
      angle, std::acos(-1.0) / std::max(opt.cone_directions, 4),
      [&](const VectorX& at, VectorX& r, bool) { return starting_slide_residuals(slots, at, r); });
  if (!converged) {
    for (std::size_t k = 0; k < current.size(); ++k) current[k].slide_dir = before[k];
  } else {
    // Inactive (dependent) contacts starting to slide follow the refined
    // accelerations.
    const VectorX qdd = scratch;
    for (int k : starting) {
      Tracked& tr = current[static_cast<std::size_t>(k)];
      if (tr.active) continue;
      const Vec3 a_t = tangential_acceleration(tr.contact, qdd);
      if (a_t.norm() > 0.0) tr.slide_dir = a_t.normalized();
    }
  }
  memo.valid = false;
}

// Sets the directions of the active slots to their angles in the contacts'
// tangent bases, evaluates the constrained dynamics (q̈ in the scratch
// vector) and returns in r_i the angle from ŝ₀ to a_t (in (−π, π], zero
// only when a_t is along ŝ₀), with the largest |a_t| as the scale.
double EventDrivenCore::starting_slide_residuals(const std::vector<int>& slots, const VectorX& angle, VectorX& r) {
  const int n = static_cast<int>(slots.size());
  for (int i = 0; i < n; ++i) {
    const int a = slots[static_cast<std::size_t>(i)];
    Vec3 t1, t2;
    tangent_basis(act[static_cast<std::size_t>(a)].normal, t1, t2);
    current[static_cast<std::size_t>(act_track[static_cast<std::size_t>(a)])].slide_dir =
        std::cos(angle(i)) * t1 + std::sin(angle(i)) * t2;
  }
  // The active set is the same for every angle: act and act_track keep
  // their slots (dynamics_full rebuilds them in the same order).
  memo.valid = false;
  dynamics(q, v, x_scratch(), false);
  double scale = 0.0;
  for (int i = 0; i < n; ++i) {
    const int a = slots[static_cast<std::size_t>(i)];
    const double a1 = D.col(2 * a).dot(scratch) + Ddv(2 * a), a2 = D.col(2 * a + 1).dot(scratch) + Ddv(2 * a + 1);
    const double c = std::cos(angle(i)), sn = std::sin(angle(i));
    r(i) = std::atan2(c * a2 - sn * a1, c * a1 + sn * a2);
    scale = std::max(scale, std::hypot(a1, a2));
  }
  return scale;
}

// The LCP's basic solution carries the load on independent contacts only: a
// face on a face rests on 2 or 3 of its 4 corners, and the body is free to
// turn about the line through them (an unstable equilibrium that rounding
// starts, and an event, an LCP and chattering later). Touching contacts the
// LCP left at zero force with ζ̇ = 0 join the active set when the
// constrained dynamics, which resolves dependent contacts by their
// minimum-norm forces (constrained_dynamics.cpp), gives every active
// contact a positive normal force inside its friction cone; those that
// would not are left out, the least loaded first.
void EventDrivenCore::add_dependent_contacts(const std::vector<int>& resting_current) {
  std::vector<int>& extra = dependent_scratch;
  extra.clear();
  for (int k : resting_current) {
    Tracked& tr = current[static_cast<std::size_t>(k)];
    if (!tr.active && tr.mode != ContactMode::Separating) extra.push_back(k);
  }
  if (extra.empty()) return;
  for (int k : extra) current[static_cast<std::size_t>(k)].active = true;
  while (!extra.empty()) {
    memo.valid = false;
    dynamics(q, v, x_scratch(), true);
    double scale = 0.0;
    for (double f : fn) scale = std::max(scale, std::abs(f));
    const double floor = 1e-9 * std::max(scale, 1e-12);
    // The worst violation among the added contacts (normal force below the
    // floor or friction outside the cone); any violation at all counts.
    bool violated = false;
    int worst = -1;
    double worst_value = std::numeric_limits<double>::infinity();
    for (std::size_t a = 0; a < act_track.size(); ++a) {
      const Tracked& tr = current[static_cast<std::size_t>(act_track[a])];
      double margin = fn[a] - floor;
      if (tr.mode != ContactMode::Sliding && tr.mu > 0.0) margin = std::min(margin, tr.mu * fn[a] - ft[a].norm() + floor);
      if (margin >= 0.0) continue;
      violated = true;
      if (std::find(extra.begin(), extra.end(), act_track[a]) != extra.end() && fn[a] < worst_value) {
        worst_value = fn[a];
        worst = act_track[a];
      }
    }
    if (!violated) break;
    if (worst < 0) worst = extra.back();  // a basic contact suffers: take the added ones out one by one
    current[static_cast<std::size_t>(worst)].active = false;
    extra.erase(std::find(extra.begin(), extra.end(), worst));
  }
  memo.valid = false;
}

// Events for what changed: losses, gains without impact, stick/slip switches.
void EventDrivenCore::report_set_changes(const std::vector<Tracked>& previous, bool impact) {
  for (const Tracked& old : previous) {
    const int k = tracked_index(old.contact.id);
    if (old.active && (k < 0 || !current[k].active)) emit(t, EventKind::ContactLoss, old.contact, 0, 0, 0);
    if (k >= 0 && old.active && current[k].active && old.mode != current[k].mode) {
      emit(t, current[k].mode == ContactMode::Sliding ? EventKind::Slip : EventKind::Stick, old.contact, 0, 0, 0);
    }
  }
  if (!impact) {
    for (const Tracked& now : current) {
      bool known = false;
      for (const Tracked& old : previous) known |= old.contact.id == now.contact.id && old.active;
      if (!known && now.active) emit(t, EventKind::ContactGain, now.contact, 0, 0, 0);
    }
  }
}

// Tangential relative acceleration of a contact for joint accelerations
// qdd at the current (q, v): the derivative of u_b − u_a along the tangent
// plane, from the two-tangent Jacobian and its velocity-product terms.
Vec3 EventDrivenCore::tangential_acceleration(const Contact& c, const VectorX& qdd) {
  const Model& m = model();
  unchecked::forward_kinematics(m, data, q, v, zero_nv);
  std::vector<Contact> one{c};
  MatrixX Dc(m.nv(), 2);
  VectorX Dcdv(2);
  tangent_jacobian(m, data, one, 2, Dc, Dcdv);
  Vec3 t1, t2;
  tangent_basis(contact_kinematics(m, data, c).normal, t1, t2);
  const Eigen::Vector2d at = Dc.transpose() * qdd + Dcdv;
  return at.x() * t1 + at.y() * t2;
}

bool EventDrivenCore::same_sets(const std::vector<Tracked>& a, const std::vector<Tracked>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].contact.id != b[i].contact.id || a[i].active != b[i].active || a[i].mode != b[i].mode) return false;
  }
  return true;
}

int EventDrivenCore::tracked_index(std::uint64_t id) const {
  for (std::size_t i = 0; i < current.size(); ++i) {
    if (current[i].contact.id == id) return static_cast<int>(i);
  }
  return -1;
}

void EventDrivenCore::refresh_view() {
  current_view.clear();
  for (const Tracked& tr : current) current_view.push_back(tr.contact);
}

// The tangential impact (as TimeStepping::jam, time_stepping_impacts.cpp):
// the h → 0 limit of a velocity-level step, v⁻ = v + h H⁻¹(τ − C), plastic,
// cone friction with maximal dissipation, ζ⁺ ≥ −φ/h; h = 1e-9 s, 100 times
// longer at each further attempt (where the polyhedral cone still holds and
// the impulse is O(h)). The kinetic energy is clamped to its value before.
// The first three attempts use the run's cone; the next three the same steps
// with kJamConeDirections. A polyhedral cone of k directions opposes a
// slide between two of them with only μ cos(π/k) (0.92 μ for k = 8): a slide
// whose force problem has no solution at μ (Painlevé) can find one at that
// lower friction in the velocity-level step, so the impact leaves it sliding
// and the force LCP fails again.
bool EventDrivenCore::jam(int attempt, VectorX& zeta, const VectorX& mu) {
  const Model& m = model();
  const int n = static_cast<int>(touching.size());
  if (n == 0) return false;
  const bool finer = attempt >= kJamAttempts / 2;
  if (finer && (opt.cone_directions < 4 || opt.cone_directions >= kJamConeDirections)) return false;
  const double h = 1e-9 * std::pow(100.0, attempt % (kJamAttempts / 2));
  VectorX gaps(n);
  for (int i = 0; i < n; ++i) gaps(i) = touching[static_cast<std::size_t>(i)].gap;
  const VectorX vminus = v + h * unchecked::aba(m, data, q, v, tau + passive());
  ImpactOptions io;
  io.friction = mu.maxCoeff() > 0.0 ? FrictionModel::PolyhedralCone : FrictionModel::None;
  io.cone_directions = finer ? kJamConeDirections : opt.cone_directions;
  io.time_step = h;
  io.gaps = gaps;
  memo.valid = false;
  const ImpactSolution& s = solver.impact(m, data, q, vminus, touching, VectorX::Zero(n), mu, io);
  ++stats.lcp_solves;
  if (s.status != ContactStatus::Solved) return false;
  ++stats.impacts;
  for (int i = 0; i < n; ++i) {
    if (s.impulse(i) > 0.0) emit(t, EventKind::Impact, touching[static_cast<std::size_t>(i)], s.zeta_minus(i), s.zeta_plus(i), s.impulse(i));
  }
  const double before = kinetic_energy(m, data, q, v);
  v = s.v_plus;
  const double after = kinetic_energy(m, data, q, v);
  if (after > before && after > 0.0) v *= std::sqrt(before / after);
  unchecked::forward_kinematics(m, data, q, v);
  for (int i = 0; i < n; ++i) zeta(i) = contact_kinematics(m, data, touching[static_cast<std::size_t>(i)]).gap_rate;
  return true;
}

}  // namespace plume::detail
