// Drift correction: after an accepted step, (q, v) are projected back onto
// φ = 0, ζ̇ = 0 of the active contacts (and zero sliding velocity of the
// sticking ones), in the metric of H. HMetricCorrection, the projection
// itself, serves the time-stepping scheme too.
#include <algorithm>
#include <cmath>

#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "sim/drift_correction.hpp"
#include "sim/event_driven.hpp"

namespace plume::detail {

const VectorX& HMetricCorrection::solve(const Model& m, const Data& data, const Eigen::Ref<const MatrixX>& K,
                                        const Eigen::Ref<const VectorX>& r) {
  Y = K;
  ltdl_solve_Lt(m, data, Y);
  A.noalias() = Y.transpose() * data.LD.diagonal().cwiseInverse().asDiagonal() * Y;
  A.diagonal().array() += 1e-12 * std::max(1e-12, A.diagonal().maxCoeff());
  lu.compute(A);
  mult = lu.solve(r);
  x.noalias() = K * mult;
  ltdl_solve(m, data, x);
  return x;
}

// Moves (q, v) back onto φ = 0, ζ = 0 of the active contacts (and zero
// sliding velocity of sticking ones) in the metric of H.
bool EventDrivenCore::project() {
  const Model& m = model();
  if (!drifted()) return false;
  memo.valid = false;
  bool changed = false;
  for (int iteration = 0; iteration < 3; ++iteration) {
    normalize_configuration(m, q);
    dynamics(q, v, x_scratch(), false);
    const int na = static_cast<int>(act.size());
    if (na == 0) return changed;
    double worst = 0.0;
    VectorX phi(na);
    for (int a = 0; a < na; ++a) {
      phi(a) = act[a].gap;
      worst = std::max(worst, std::abs(phi(a)));
    }
    if (worst <= opt.drift_tolerance) break;
    // δ = −H⁻¹T (TᵀH⁻¹T)⁻¹ φ
    q = integrate(m, q, hmetric.solve(m, data, T.leftCols(na), -phi), 1.0);
    changed = true;
  }
  // Velocities: remove the constraint-violating components.
  dynamics(q, v, x_scratch(), false);
  const int na = static_cast<int>(act.size());
  int rows = 0;
  for (int a = 0; a < na; ++a) {
    const Tracked& tr = current[act_track[a]];
    K.col(rows++) = T.col(a);
    if (tr.mode != ContactMode::Sliding && tr.mu > 0.0) {
      K.col(rows++) = D.col(2 * a);
      K.col(rows++) = D.col(2 * a + 1);
    }
  }
  if (rows > 0) {
    auto Kr = K.leftCols(rows);
    const VectorX err = Kr.transpose() * v;
    if (err.cwiseAbs().maxCoeff() > 0.1 * opt.velocity_tolerance) {
      v += hmetric.solve(m, data, Kr, -err);
      changed = true;
    }
  }
  if (changed) ++stats.projections;
  return changed;
}

// Cheap check before any projection: gaps and normal (and, for sticking
// contacts, tangential) velocities of the active contacts.
bool EventDrivenCore::drifted() {
  const Model& m = model();
  bool any = false;
  for (const Tracked& tr : current) any |= tr.active;
  if (!any) return false;
  qn = q;
  normalize_configuration(m, qn);
  unchecked::forward_kinematics(m, data, qn, v);
  for (const Tracked& tr : current) {
    if (!tr.active) continue;
    Contact c = tr.contact;
    if (c.kind == ContactKind::Shapes) {
      refresh_contact(m, data, c);
    } else {
      c.gap = joint_limit_gap(m, qn, c);
    }
    const ContactKinematics ck = contact_kinematics(m, data, c);
    if (std::abs(ck.gap) > opt.drift_tolerance || std::abs(ck.gap_rate) > 0.1 * opt.velocity_tolerance) return true;
    if (tr.mu > 0.0 && tr.mode != ContactMode::Sliding && c.kind == ContactKind::Shapes) {
      Vec3 u = ck.velocity_b - ck.velocity_a;
      u -= u.dot(ck.normal) * ck.normal;
      if (u.norm() > 0.1 * opt.velocity_tolerance) return true;
    }
  }
  return false;
}

}  // namespace plume::detail
