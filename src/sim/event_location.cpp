// Table 11.1, steps 2–3: the witness functions of the current and the
// candidate contacts (gap, normal force, cone margin, sliding speed) and the
// earliest crossing in a step, located on the stepper's dense output
// (11.45–11.51) with detail::locate_crossing. Also the internal switches of a
// sliding contact's friction direction, which need no LCP.
#include <algorithm>
#include <cmath>

#include "plume/algorithms/kinematics.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "sim/event_driven.hpp"

namespace plume::detail {

double EventDrivenCore::witness_value(const Witness& w, const VectorX& qq, const VectorX& vv) {
  switch (w.kind) {
    case WitnessKind::Gap: {
      Contact c = w.candidate ? candidates[w.index] : current[w.index].contact;
      if (c.kind == ContactKind::JointLimit) {
        const double qi = qq(model().joint(model().dof_body(c.dof)).q_index);
        const double lo = model().lower_position_limit()(model().joint(model().dof_body(c.dof)).q_index);
        const double hi = model().upper_position_limit()(model().joint(model().dof_body(c.dof)).q_index);
        return (c.normal.x() > 0 ? qi - lo : hi - qi) + w.offset;
      }
      unchecked::forward_kinematics(model(), data, qq);
      refresh_contact(model(), data, c);
      return c.gap + w.offset;
    }
    case WitnessKind::NormalForce:
    case WitnessKind::ConeMargin:
    case WitnessKind::SlideSpeed:
    case WitnessKind::SlideFreeze:
    case WitnessKind::SlideRelease: {
      dynamics(qq, vv, x_scratch(), true);
      const int a = active_slot(w.index);
      if (a < 0) return 1.0;
      if (w.kind == WitnessKind::NormalForce) return fn[a];
      if (w.kind == WitnessKind::ConeMargin) return current[w.index].mu * fn[a] - ft[a].norm();
      return sliding_witness(w.kind, w.index, a, vv);
    }
    case WitnessKind::PairCone:
      dynamics(qq, vv, x_scratch(), true);
      return pair_cone_margin(w.index, nullptr);
  }
  return 1.0;
}

// The value of a sliding witness of tracked contact `track` (active slot a).
double EventDrivenCore::sliding_witness(WitnessKind kind, int track, int a, const VectorX& vv) const {
  const Vec3 u = sliding_velocity(a, vv);
  switch (kind) {
    case WitnessKind::SlideSpeed: return u.dot(current[track].slide_dir);
    case WitnessKind::SlideFreeze: return u.norm() - current[track].freeze_speed;
    case WitnessKind::SlideRelease: return kSlideFreeze - u.norm();
    default: return 1.0;
  }
}

// The witnesses of the tracked (current) contacts.
void EventDrivenCore::build_witnesses_current() {
  witnesses.clear();
  for (std::size_t i = 0; i < current.size(); ++i) {
    const Tracked& tr = current[i];
    const int idx = static_cast<int>(i);
    if (!tr.active) {
      // Touching but not pushing: an event when it starts to penetrate.
      witnesses.push_back({WitnessKind::Gap, idx, false, opt.contact_tolerance});
      continue;
    }
    if (!is_suppressed(WitnessKind::NormalForce, tr.contact.id)) {
      witnesses.push_back({WitnessKind::NormalForce, idx, false, 0.0});
    }
    if (tr.mu > 0.0 && tr.contact.kind == ContactKind::Shapes) {
      if (tr.mode == ContactMode::Sliding) {
        if (tr.frozen) {
          witnesses.push_back({WitnessKind::SlideSpeed, idx, false, 0.0});
          witnesses.push_back({WitnessKind::SlideRelease, idx, false, 0.0});
        } else {
          witnesses.push_back({WitnessKind::SlideFreeze, idx, false, 0.0});
        }
      } else if (!is_suppressed(WitnessKind::ConeMargin, tr.contact.id)) {
        witnesses.push_back({WitnessKind::ConeMargin, idx, false, 0.0});
      }
    }
  }
  build_pair_cone_witnesses();
}

// A sticking contact whose cone witness is suppressed: what binds the
// friction of its two bodies is their contacts' total (WitnessKind::PairCone).
// One group per pair of bodies with two or more sticking contacts, keyed
// (for suppression) by its first contact's id.
void EventDrivenCore::build_pair_cone_witnesses() {
  pair_members.clear();
  pair_start.clear();
  auto sticking = [](const Tracked& tr) {
    return tr.active && tr.mu > 0.0 && tr.contact.kind == ContactKind::Shapes && tr.mode != ContactMode::Sliding;
  };
  auto same_bodies = [](const Contact& c, const Contact& d) {
    return (c.body_a == d.body_a && c.body_b == d.body_b) || (c.body_a == d.body_b && c.body_b == d.body_a);
  };
  for (std::size_t i = 0; i < current.size(); ++i) {
    const Tracked& tr = current[i];
    if (!sticking(tr) || !is_suppressed(WitnessKind::ConeMargin, tr.contact.id)) continue;
    bool grouped = false;
    for (std::size_t g = 0; g < pair_start.size() && !grouped; ++g) {
      grouped = same_bodies(pair_first(static_cast<int>(g)), tr.contact);
    }
    if (grouped) continue;
    const std::size_t first = pair_members.size();
    for (std::size_t k = 0; k < current.size(); ++k) {
      if (sticking(current[k]) && same_bodies(current[k].contact, tr.contact)) pair_members.push_back(static_cast<int>(k));
    }
    if (pair_members.size() - first < 2) {
      pair_members.resize(first);
      continue;
    }
    const int g = static_cast<int>(pair_start.size());
    pair_start.push_back(static_cast<int>(first));
    if (!is_suppressed(WitnessKind::PairCone, current[static_cast<std::size_t>(pair_members[first])].contact.id)) {
      witnesses.push_back({WitnessKind::PairCone, g, false, 0.0});
    }
  }
  pair_start.push_back(static_cast<int>(pair_members.size()));
}

// Σ μᵢ λᵢ − |Σ f_t,i| over group g's contacts from the last dynamics
// evaluation (fn, ft); the total friction (world, on body_b of the group's
// first contact) in *total when asked.
double EventDrivenCore::pair_cone_margin(int group, Vec3* total) {
  const auto g = static_cast<std::size_t>(group);
  const Contact& first = pair_first(group);
  double bound = 0.0;
  Vec3 f = Vec3::Zero();
  for (int k = pair_start[g]; k < pair_start[g + 1]; ++k) {
    const int track = pair_members[static_cast<std::size_t>(k)];
    const int a = active_slot(track);
    if (a < 0) continue;
    Vec3 t1, t2;
    tangent_basis(act[static_cast<std::size_t>(a)].normal, t1, t2);
    const Vec3 fa = ft[static_cast<std::size_t>(a)].x() * t1 + ft[static_cast<std::size_t>(a)].y() * t2;
    // (a contact listed the other way round pushes the other body)
    f += act[static_cast<std::size_t>(a)].body_b == first.body_b ? fa : Vec3(-fa);
    bound += current[static_cast<std::size_t>(track)].mu * fn[static_cast<std::size_t>(a)];
  }
  if (total) *total = f;
  return bound - f.norm();
}

// New contacts near or inside a surface at the step's end.
void EventDrivenCore::add_candidate_witnesses(const VectorX& q1) {
  const double look = std::max(10.0 * opt.contact_tolerance, 1e-6);
  unchecked::forward_kinematics(model(), data, q1);
  detector.detect(model(), data, candidates);
  if (opt.joint_limits) detect_joint_limits(model(), q1, look, candidates);
  detected_ids.clear();
  for (const Contact& c : candidates) detected_ids.push_back(c.id);
  std::size_t k = 0;
  for (const Contact& c : candidates) {
    if (tracked_index(c.id) < 0) candidates[k++] = c;
  }
  candidates.resize(k);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    witnesses.push_back({WitnessKind::Gap, static_cast<int>(i), true, 0.0});
  }
}

// w(i) for every witness i; w only grows (its entries past the witnesses
// are stale), so that a step's candidates cost no allocation.
void EventDrivenCore::evaluate_witnesses(const VectorX& y, VectorX& w) {
  grow(w, witnesses.size());
  for (std::size_t i = 0; i < witnesses.size(); ++i) w(i) = witness_of_state(witnesses[i], y);
}

double EventDrivenCore::witness_at(std::size_t i, double time) {
  stepper->calc_state(time, ystate);
  return witness_of_state(witnesses[i], ystate);
}

// Illinois (modified regula falsi) on [a, b] with f(a) > 0 ≥ f(b).
double EventDrivenCore::locate(std::size_t i, double a, double fa, double b, double fb) {
  return detail::locate_crossing([&](double t) { return witness_at(i, t); }, a, fa, b, fb, opt.event_time_tolerance);
}

// The earliest event in the step [t0, t1] just taken from y0 to y1: the
// witnesses of the current contacts (evaluated at t0 into w0 by the loop),
// those of new contacts found near a surface at t1, and geometric losses.
EventDrivenCore::StepEvent EventDrivenCore::earliest_event(double t0, double t1, const VectorX& y0, const VectorX& y1) {
  const Model& m = model();
  // Witnesses at both ends of the step; the earliest crossing wins.
  // Then the contacts found near a surface at the step's end.
  const std::size_t n_current = witnesses.size();
  add_candidate_witnesses(y1.head(m.nq()));
  y1_copy_ = y1;
  evaluate_witnesses(y1_copy_, w1);  // the memo holds the step's end (FSAL)
  if (witnesses.size() > n_current) {
    grow(w0, witnesses.size());
    for (std::size_t i = n_current; i < witnesses.size(); ++i) {
      w0(i) = witness_of_state(witnesses[i], y0);
    }
  }
  StepEvent event;
  // The earliest event wins; at equal times a contact event (which
  // re-solves every mode) takes precedence over an internal slide switch.
  auto take_event = [&](double te, int wi) {
    if (te < event.time || (te == event.time && !is_slide_switch(wi))) {
      event.time = te;
      event.witness = wi;
    }
  };
  for (std::size_t i = 0; i < witnesses.size(); ++i) {
    double a = t0, fa = w0(i), b = t1, fb = w1(i);
    if (witnesses[i].kind == WitnessKind::Gap && witnesses[i].candidate && fa < opt.contact_tolerance &&
        candidates[witnesses[i].index].kind == ContactKind::Shapes &&
        !detected_at(t0, candidates[witnesses[i].index].id)) {
      // Touching by its gap but not a contact at the step's start: a
      // vertex in the plane of a face, just outside it (two boxes'
      // coincident edges, one rocking on the other). Its gap means
      // nothing until the detector reports the pair: start from there.
      const std::uint64_t id = candidates[witnesses[i].index].id;
      double lo = t0, hi = t1;
      const double resolution = event_time_resolution(opt.event_time_tolerance, t1);
      while (hi - lo > resolution) {
        const double mid = 0.5 * (lo + hi);
        if (!(mid > lo && mid < hi)) break;
        (detected_at(mid, id) ? hi : lo) = mid;
      }
      a = hi;
      fa = witness_at(i, a);
      if (fa <= 0.0) {
        // It appears touching or inside: impact or rest, decided there.
        take_event(a, -1);
        continue;
      }
    } else if (witnesses[i].kind == WitnessKind::Gap && witnesses[i].candidate && fa < opt.contact_tolerance) {
      // A contact touching at the step's start but not current: one just
      // released by an impact, separating. Its gap opens first; bracket
      // its return to where it started (zero, or the small penetration
      // it started with) from a point where it is open.
      const double base = std::min(fa, 0.0);
      if (fb > base) continue;
      witnesses[i].offset = -base;
      fa -= base;
      fb -= base;
      bool open = false;
      const double resolution = event_time_resolution(opt.event_time_tolerance, t1);
      for (double delta = 0.5 * (t1 - t0); delta > resolution; delta *= 0.5) {
        const double fs = witness_at(i, t0 + delta);
        if (fs > 0.0) {
          a = t0 + delta;
          fa = fs;
          open = true;
          break;
        }
      }
      // Never opened: it leaves so slowly (ζ̇ just above the velocity
      // tolerance) that it is pulled back before its gap exceeds zero.
      // It rests: handle it now as a resting contact.
      if (!open) {
        held.push_back(candidates[witnesses[i].index].id);
        take_event(t0, -1);
        continue;
      }
    }
    if (fa <= 0.0) {
      // Already past the surface at the start (found late): handle it now.
      // A current contact left inactive a little inside (within the drift
      // tolerance) whose gap opens over the step is leaving: no event (the
      // sets at t0 would be the same, and the humanoid collapse re-solved
      // them 1 000 times at one instant for a neck limit 3e-10 rad inside
      // and opening, until a fallback window).
      if (witnesses[i].kind == WitnessKind::Gap && fb <= 0.0 && (witnesses[i].candidate || fb <= fa)) take_event(t0, -1);
      // A normal force or a friction cone violated at the start: a jump
      // of τ at a controller sample did it; re-solve the sets now.
      if ((witnesses[i].kind == WitnessKind::NormalForce || witnesses[i].kind == WitnessKind::ConeMargin ||
           witnesses[i].kind == WitnessKind::PairCone) &&
          fa < -1e-9 * force_scale(w0)) {
        take_event(t0, static_cast<int>(i));
      }
      // A sliding contact already past its freeze or release speed
      // (it crossed at the instant another event was handled): switch now.
      if (is_slide_switch(static_cast<int>(i)) && fa < -kSlideBand) take_event(t0, static_cast<int>(i));
      continue;
    }
    if (fb > 0.0) {
      // Guard against two crossings in one step: sample inside where
      // the witness comes close to zero.
      if (fb < 0.5 * std::abs(fa - fb) || fb < 0.1 * fa) {
        for (int s = 1; s <= 3; ++s) {
          const double ts = t0 + (t1 - t0) * s / 4.0;
          const double fs = witness_at(i, ts);
          if (fs <= 0.0) {
            b = ts;
            fb = fs;
            break;
          }
          a = ts;
          fa = fs;
        }
      }
      if (fb > 0.0) continue;
    }
    const double located = locate(i, a, fa, b, fb);
    take_event(located, static_cast<int>(i));
  }
  // Geometric loss: an active contact whose feature is no longer found
  // (a sphere rolled past a box edge). Bisect on the dense output for
  // the instant the detector stops reporting it.
  for (const Tracked& tr : current) {
    if (!tr.active || tr.contact.kind != ContactKind::Shapes) continue;
    if (std::find(detected_ids.begin(), detected_ids.end(), tr.contact.id) != detected_ids.end()) continue;
    double a = t0, b = t1;
    const double resolution = event_time_resolution(opt.event_time_tolerance, t1);
    while (b - a > resolution) {
      const double c = 0.5 * (a + b);
      if (!(c > a && c < b)) break;
      (detected_at(c, tr.contact.id) ? a : b) = c;
    }
    take_event(b, -1);
  }
  // Contacts that exist inside the step only: a feature pair reported at
  // the earliest event but not at the step's end (a block's corner lands
  // while the block turns past flat within the step; at the end another
  // corner is the one inside). Already inside at the event, it crossed
  // before: locate it in [t0, event], and look again at the new event.
  for (int round = 0; round < 4 && event.time > t0 && event.time < t1; ++round) {
    const double te = event.time;
    stepper->calc_state(te, ystate);
    unchecked::forward_kinematics(m, data, ystate.head(m.nq()));
    detector.detect(m, data, touching);
    bool earlier = false;
    for (const Contact& c : touching) {
      if (c.kind != ContactKind::Shapes || c.gap >= -opt.contact_tolerance || tracked_index(c.id) >= 0 ||
          std::find(detected_ids.begin(), detected_ids.end(), c.id) != detected_ids.end()) {
        continue;
      }
      detected_ids.push_back(c.id);
      candidates.push_back(c);
      witnesses.push_back({WitnessKind::Gap, static_cast<int>(candidates.size()) - 1, true, 0.0});
      const std::size_t i = witnesses.size() - 1;
      grow(w0, i + 1);
      grow(w1, i + 1);
      w0(i) = witness_of_state(witnesses[i], y0);
      w1(i) = witness_at(i, te);
      double a = t0, fa = w0(i);
      if (fa < opt.contact_tolerance) {
        // Touching at the start (released there by an impact): it bounced
        // within the step. Bracket its return from a point where it is open.
        fa = 0.0;
        const double resolution = event_time_resolution(opt.event_time_tolerance, te);
        for (double delta = 0.5 * (te - t0); delta > resolution && fa <= 0.0; delta *= 0.5) {
          a = t0 + delta;
          fa = witness_at(i, a);
        }
      }
      if (fa > 0.0 && w1(i) <= 0.0) {
        take_event(locate(i, a, fa, te, w1(i)), static_cast<int>(i));
        earlier = true;
      }
    }
    if (!earlier) break;
  }
  return event;
}

// Is a contact (by id) among the detector's contacts at time `time` of the last step?
bool EventDrivenCore::detected_at(double time, std::uint64_t id) {
  stepper->calc_state(time, ystate);
  unchecked::forward_kinematics(model(), data, ystate.head(model().nq()));
  detector.detect(model(), data, touching);
  for (const Contact& c : touching) {
    if (c.id == id) return true;
  }
  return false;
}

// The size of the forces among the witnesses (for relative tolerances).
double EventDrivenCore::force_scale(const VectorX& w) const {
  double scale = 1.0;
  for (std::size_t i = 0; i < witnesses.size(); ++i) {
    if (witnesses[i].kind == WitnessKind::NormalForce) scale = std::max(scale, std::abs(w(i)));
  }
  return scale;
}

// Freezes or releases the friction direction of a sliding contact at the
// current state (no LCP: the contact keeps sliding).
bool EventDrivenCore::is_slide_switch(int wi) const {
  return wi >= 0 && (witnesses[wi].kind == WitnessKind::SlideFreeze || witnesses[wi].kind == WitnessKind::SlideRelease);
}

// A frozen slide's speed along its direction ŝ₀ reached zero while the
// contact still slides faster than slip_speed() across it: the slide has
// turned, not stopped, and the force LCP keeps it sliding along u/|u|
// (ContactSolveOptions::slip_velocity). The first time, the LCP is asked
// (it freezes every slow slide anew at its velocity). A slide that turns
// again is one turning as fast as it slows (a foot slowly yawing about a
// corner near its pivot: |u| ≈ 4e-5 m/s turned by 90° every ~5 µs, each
// turn an LCP over 20 contacts): it follows u/|u| again, without an LCP,
// until its speed falls to a tenth of that at the turn.
bool EventDrivenCore::is_slide_turn(int wi) {
  if (wi < 0 || witnesses[wi].kind != WitnessKind::SlideSpeed) return false;
  memo.valid = false;
  dynamics(q, v, x_scratch(), false);
  const int a = active_slot(witnesses[wi].index);
  if (a < 0 || sliding_velocity(a, v).norm() <= slip_speed()) return false;
  const std::uint64_t id = current[witnesses[wi].index].contact.id;
  if (std::find(turned.begin(), turned.end(), id) != turned.end()) return true;
  turned.push_back(id);
  return false;
}

// Contacts no longer sliding leave the list of slides that turned.
void EventDrivenCore::forget_turns() {
  std::size_t k = 0;
  for (const std::uint64_t id : turned) {
    const int i = tracked_index(id);
    if (i >= 0 && current[i].active && current[i].mode == ContactMode::Sliding) turned[k++] = id;
  }
  turned.resize(k);
}

void EventDrivenCore::switch_slide_mode(const Witness& w) {
  Tracked& tr = current[w.index];
  memo.valid = false;
  dynamics(q, v, x_scratch(), false);
  const int a = active_slot(w.index);
  if (a < 0) return;
  const Vec3 u = sliding_velocity(a, v);
  if (w.kind == WitnessKind::SlideSpeed) {  // a turn (is_slide_turn): follow u/|u| down to a tenth of |u|
    tr.slide_dir = u.normalized();
    tr.frozen = false;
    tr.freeze_speed = 0.1 * u.norm();
    memo.valid = false;
    return;
  }
  if (w.kind == WitnessKind::SlideFreeze) {
    tr.frozen = true;
    if (u.norm() > 0.0) tr.slide_dir = u.normalized();
  } else {
    tr.frozen = false;
  }
  // Contacts that cross the same threshold at this instant (a symmetric
  // robot: both hind feet slow down together) switch with it. Left
  // unswitched, a contact would start the next step already past its
  // witness's zero and slide on with u/|u| through u = 0, where the
  // right-hand side is discontinuous and the step size collapses.
  const double band = kSlideBand;
  for (std::size_t k = 0; k < current.size(); ++k) {
    Tracked& other = current[k];
    if (static_cast<int>(k) == w.index || !other.active || other.mode != ContactMode::Sliding) continue;
    const int b = active_slot(static_cast<int>(k));
    if (b < 0) continue;
    const Vec3 ub = sliding_velocity(b, v);
    if (w.kind == WitnessKind::SlideFreeze && !other.frozen && ub.norm() <= kSlideFreeze + band) {
      other.frozen = true;
      if (ub.norm() > 0.0) other.slide_dir = ub.normalized();
    } else if (w.kind == WitnessKind::SlideRelease && other.frozen && ub.norm() >= kSlideFreeze - band) {
      other.frozen = false;
    }
  }
  memo.valid = false;
}

bool EventDrivenCore::is_suppressed(WitnessKind kind, std::uint64_t id) const {
  for (const auto& [k, i] : suppressed) {
    if (k == kind && i == id) return true;
  }
  return false;
}

}  // namespace plume::detail
