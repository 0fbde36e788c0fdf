// Table 11.1, step 4: contact gain with an approach speed is an impact.
// Impulsive dynamics (docs/theory.md §5, 11.52–11.72): the impulse LCP with Newton
// restitution over every touching contact (Liu eq. 12–14), friction by a
// polyhedral cone; the velocities jump at the located time.
#include "plume/algorithms/kinematics.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "sim/event_driven.hpp"

namespace plume::detail {

bool EventDrivenCore::apply_impacts(SimulationResult& result, VectorX& zeta, const VectorX& mu, const VectorX& e) {
  const Model& m = model();
  const int n = static_cast<int>(touching.size());
  // Slow approaches (below zeno_speed) are made plastic: the end of a
  // converging sequence of bounces (Zeno) becomes persistent contact.
  VectorX e_eff = e;
  for (int i = 0; i < n; ++i) {
    if (zeta(i) < 0.0 && -zeta(i) < opt.zeno_speed) e_eff(i) = 0.0;
  }
  ImpactOptions io;
  io.friction = mu.size() > 0 && mu.maxCoeff() > 0.0 ? FrictionModel::PolyhedralCone : FrictionModel::None;
  io.cone_directions = opt.cone_directions;
  if (sens && sens->started) sens->stages.push_back({touching, e_eff, mu, q, v, io});
  const ImpactSolution& s = solver.impact(m, data, q, v, touching, e_eff, mu, io);
  ++stats.lcp_solves;
  ++stats.impacts;
  if (s.status != ContactStatus::Solved) {
    if (s.status != ContactStatus::Infeasible && opt.fallback_duration > 0.0) fallback_reason = "impact: " + s.message;
    return fail(result, SimulationStatus::ContactFailure, "impact at t = " + fmt(t) + ": " + s.message);
  }
  for (int i = 0; i < n; ++i) {
    if (s.impulse(i) > 0.0 || zeta(i) < -opt.velocity_tolerance) {
      // A slow approach made plastic (Zeno); resting contacts that share
      // the impulse take part in the impact.
      const bool plastic_rest = zeta(i) < -opt.velocity_tolerance && -zeta(i) < opt.zeno_speed;
      emit(t, plastic_rest ? EventKind::ZenoRest : EventKind::Impact, touching[i], zeta(i), s.zeta_plus(i), s.impulse(i));
    }
  }
  v = s.v_plus;
  unchecked::forward_kinematics(m, data, q, v);
  for (int i = 0; i < n; ++i) zeta(i) = contact_kinematics(m, data, touching[i]).gap_rate;
  return true;
}

}  // namespace plume::detail
