// Table 11.1, step 4: contact gain with an approach speed is an impact.
// Impulsive dynamics (docs/theory.md §5, 11.52–11.72): the impulse LCP with Newton
// restitution over every touching contact (Liu eq. 12–14), friction by a
// polyhedral cone; the velocities jump at the located time.
//
// Zeno. A contact bouncing under a constant pull has flight times shrinking
// by a constant ratio r (a ball: r = e), so its impacts accumulate at
// t∞ = t_k + Δt_k·r/(1−r) (a geometric series). Each contact's last four
// impact times are kept while it is in flight; when its last three flight
// times are in a constant ratio r < 1 it bounces on, however slow, until
// the next bounce would not leave the contact_tolerance band (apex
// u⁺·rΔt_k/4 ≤ contact_tolerance). That impact is then plastic: the contact
// is persistent from t_k (within the band its remaining bounces stay in), the
// rest of the state is integrated on, and its zeno_rest event is logged at
// the predicted t∞, where the bouncing motion comes to rest. A slow impact
// (below zeno_speed) of a contact whose sequence is not geometric (too few
// impacts, several bodies, friction) is plastic at once: zeno_rest at t_k.
#include <cmath>
#include <limits>

#include "plume/algorithms/kinematics.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "sim/event_driven.hpp"

namespace plume::detail {

namespace {
// Successive flight-time ratios agreeing to this (relative) make a series
// geometric.
constexpr double kGeometricRatio = 1e-4;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

bool EventDrivenCore::apply_impacts(SimulationResult& result, VectorX& zeta, const VectorX& mu, const VectorX& e) {
  const Model& m = model();
  const int n = static_cast<int>(touching.size());
  VectorX e_eff = e, t_land = VectorX::Constant(n, kNaN);
  for (int i = 0; i < n; ++i) {
    if (zeta(i) >= 0.0) continue;
    if (zeta(i) < -opt.velocity_tolerance) {
      ImpactSeries& s = series_of(touching[i].id);
      if (s.n == 4) std::copy(s.time + 1, s.time + 4, s.time);
      s.time[std::min(s.n, 3)] = t;
      s.n = std::min(s.n + 1, 4);
      double r = 0.0;
      const double t_inf = accumulation_point(s, r);
      if (std::isfinite(t_inf)) {
        const double apex = e(i) * -zeta(i) * r * (s.time[3] - s.time[2]) / 4.0;
        if (apex <= opt.contact_tolerance) {
          e_eff(i) = 0.0;
          t_land(i) = t_inf;
        }
        continue;  // geometric: bounce on until the band
      }
    }
    // Slow approaches (and resting contacts sharing an impulse) are plastic.
    if (-zeta(i) < opt.zeno_speed) e_eff(i) = 0.0;
  }
  ImpactOptions io;
  io.friction = mu.size() > 0 && mu.maxCoeff() > 0.0 ? FrictionModel::PolyhedralCone : FrictionModel::None;
  io.cone_directions = opt.cone_directions;
  if (sens && sens->started) sens->stages.push_back({touching, e_eff, mu, q, v, io});
  const ImpactSolution* sp = &solver.impact(m, data, q, v, touching, e_eff, mu, io);
  ++stats.lcp_solves;
  if (sp->status == ContactStatus::Failed && io.friction == FrictionModel::PolyhedralCone) {
    // Lemke's ties among the cone directions of dependent contacts: the same
    // impact with a cone of twice the directions (time_stepping_impacts.cpp).
    io.cone_directions = 2 * opt.cone_directions;
    if (sens && sens->started) sens->stages.back().io = io;
    sp = &solver.impact(m, data, q, v, touching, e_eff, mu, io);
    ++stats.lcp_solves;
  }
  const ImpactSolution& s = *sp;
  ++stats.impacts;
  if (s.status != ContactStatus::Solved) {
    const std::string what = contact_failure_words(s.status, s.message) + " for " + catalogue.names_of(m, touching);
    if (s.status != ContactStatus::Infeasible && opt.fallback_duration > 0.0) fallback_reason = "impact: " + what;
    return fail(result, SimulationStatus::ContactFailure, "impact at t = " + fmt(t) + ": " + what);
  }
  for (int i = 0; i < n; ++i) {
    if (s.impulse(i) > 0.0 || zeta(i) < -opt.velocity_tolerance) {
      // A slow approach made plastic without a geometric series (Zeno
      // fallback); resting contacts that share the impulse take part in
      // the impact.
      const bool landing = std::isfinite(t_land(i));
      const bool plastic_rest =
          !landing && zeta(i) < -opt.velocity_tolerance && -zeta(i) < opt.zeno_speed && e_eff(i) == 0.0;
      emit(t, plastic_rest ? EventKind::ZenoRest : EventKind::Impact, touching[i], zeta(i), s.zeta_plus(i), s.impulse(i));
      if (landing) landings.push_back({t_land(i), touching[i]});
    }
  }
  v = s.v_plus;
  unchecked::forward_kinematics(m, data, q, v);
  for (int i = 0; i < n; ++i) {
    zeta(i) = contact_kinematics(m, data, touching[i]).gap_rate;
    // A touching contact that took no impulse but was set moving off by
    // the others' slower than zeno_speed (the dependent corners of a body
    // landing on a face or a limb): its flight would last a fraction of a
    // microsecond and end in a plastic impact, over and over. It goes to the
    // force LCP with the resting contacts (as a contact whose gap never
    // opened), which holds it if the others push it back.
    if (!(s.impulse(i) > 0.0) && zeta(i) > opt.velocity_tolerance && zeta(i) < opt.zeno_speed) {
      held.push_back(touching[i].id);
    }
  }
  return true;
}

EventDrivenCore::ImpactSeries& EventDrivenCore::series_of(std::uint64_t id) {
  for (ImpactSeries& s : series) {
    if (s.id == id) return s;
  }
  series.push_back({});
  series.back().id = id;
  return series.back();
}

// Three flight times d0, d1, d2 in a constant ratio r < 1: the remaining
// flights r·d2, r²·d2, … sum to d2·r/(1−r). r from the outer two (the
// longer baseline halves the effect of the impact times' errors).
double EventDrivenCore::accumulation_point(const ImpactSeries& s, double& r) {
  if (s.n < 4) return kNaN;
  const double d0 = s.time[1] - s.time[0], d1 = s.time[2] - s.time[1], d2 = s.time[3] - s.time[2];
  if (!(d0 > 0.0 && d1 > 0.0 && d2 > 0.0)) return kNaN;
  r = std::sqrt(d2 / d0);
  if (!(r < 1.0) || std::abs(d2 / d1 - d1 / d0) > kGeometricRatio * r) return kNaN;
  return s.time[3] + d2 * r / (1.0 - r);
}

// A contact at rest (current) is no longer in flight: its series restarts.
void EventDrivenCore::forget_resting_series() {
  std::size_t k = 0;
  for (const ImpactSeries& s : series) {
    if (tracked_index(s.id) < 0) series[k++] = s;
  }
  series.resize(k);
}

// The zeno_rest events of landed contacts whose t∞ the run has reached
// (dropped if the contact has left the current set before).
void EventDrivenCore::emit_landings_until(double time) {
  std::size_t k = 0;
  for (const Landing& l : landings) {
    if (l.time > time) {
      landings[k++] = l;
    } else if (tracked_index(l.contact.id) >= 0) {
      emit(l.time, EventKind::ZenoRest, l.contact, 0.0, 0.0, 0.0);
    }
  }
  landings.resize(k);
}

}  // namespace plume::detail
