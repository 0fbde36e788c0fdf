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
  for (int iteration = 0; iteration < 4; ++iteration) {
    normalize_configuration(m, q);
    dynamics(q, v, x_scratch(), false);
    const int na = static_cast<int>(act.size());
    if (na == 0) return changed;
    // Moving the active contacts moves the others: a contact outside the
    // active set that the correction carried into its surface is held at
    // φ = 0 by the next iteration too (its velocity is left to the contact
    // sets). Dependent active contacts make the correction large where
    // their drift is small: on a collapsing humanoid, 1.8e-8 m of drift
    // moved an ankle's free joint limit 3.5e-7 rad past its stop.
    carried.clear();
    if (changed) carried_contacts(na);
    const int nc = static_cast<int>(carried.size());
    double worst = 0.0;
    grow(proj_phi, static_cast<std::size_t>(na + nc));
    for (int a = 0; a < na; ++a) {
      proj_phi(a) = act[a].gap;
      worst = std::max(worst, std::abs(act[a].gap));
    }
    for (int c = 0; c < nc; ++c) {
      proj_phi(na + c) = carried[static_cast<std::size_t>(c)].gap;
      worst = std::max(worst, std::abs(carried[static_cast<std::size_t>(c)].gap));
    }
    if (worst <= opt.drift_tolerance) break;
    if (iteration == 3) break;  // (the last iteration only checks)
    // δ = −H⁻¹K (KᵀH⁻¹K)⁻¹ φ with K = [T | the carried contacts' t]
    if (nc == 0) {
      q = integrate(m, q, hmetric.solve(m, data, T.leftCols(na), -proj_phi.head(na)), 1.0);
    } else {
      proj_K.resize(m.nv(), na + nc);
      proj_K.leftCols(na) = T.leftCols(na);
      grow(proj_dv, static_cast<std::size_t>(nc));
      contact_jacobian(m, data, carried, proj_K.rightCols(nc), proj_dv.head(nc));
      q = integrate(m, q, hmetric.solve(m, data, proj_K, -proj_phi.head(na + nc)), 1.0);
    }
    changed = true;
  }
  changed |= project_velocities();
  if (changed) ++stats.projections;
  return changed;
}

// Velocities: removes the components that violate the active contacts
// (ζ = 0, and zero sliding velocity of the sticking ones), in the metric of
// H (the kinetic energy only falls). True when v changed. The active set is
// that of the memo's evaluation: invalidate it first where the sets changed.
bool EventDrivenCore::project_velocities() {
  const Model& m = model();
  dynamics(q, v, x_scratch(), false);
  const int na = static_cast<int>(act.size());
  bool changed = false;
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
  return changed;
}

// The contacts outside the active set (tracked inactive or new, shapes and
// joint limits) deeper than drift_tolerance at q, into `carried`; na:
// the number of dynamics()'s active contacts at q (act).
void EventDrivenCore::carried_contacts(int na) {
  const Model& m = model();
  unchecked::forward_kinematics(m, data, q);
  detector.detect(m, data, carried_scan);
  if (opt.joint_limits) detect_joint_limits(m, q, 0.0, carried_scan);
  for (const Contact& c : carried_scan) {
    if (!(c.gap < -opt.drift_tolerance)) continue;
    bool active = false;
    for (int a = 0; a < na && !active; ++a) active = act[static_cast<std::size_t>(a)].id == c.id;
    if (!active) carried.push_back(c);
  }
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
