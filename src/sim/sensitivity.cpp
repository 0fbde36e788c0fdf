// The state-transition matrix Φ = ∂x(t)/∂x(t_start) of an event-driven run
// (SimulationOptions::sensitivity), x = (δq, q̇) with δq along the velocity
// coordinates (q ⊕ δq = integrate(q, δq, 1)).
//
// Smooth segments: the variational equations Φ' = A(t) Φ, integrated by RK4
// on the stepper's dense output (substeps ≤ kSubstep), with
//     A = [ −ad(v)  1 ;  ∂q̈/∂q  ∂q̈/∂q̇ ],
// ad(v) = v× on each free-flyer's body twist (right-trivialised tangent:
// δq' = δv − v × δq), zero for the other joints. ∂q̈ comes from
// aba_derivatives when no contact is active (plus −H⁻¹ diag(damping)), and
// from central differences of the scheme's own constrained dynamics while
// contacts are active (the same active set, modes and friction as the run).
//
// Events: with x⁻, x⁺ = Δ(x⁻) the states before and after, f⁻, f⁺ the
// tangent fields (q̇, q̈) before and after, and g the witness that triggered
// it (gradient ∇g, by central differences of the witness function),
//     Ξ = DΔ + (f⁺ − DΔ f⁻) ∇gᵀ / (∇g · f⁻),     Φ ← Ξ Φ,
// (for a geometric loss, found by detection rather than by a witness, the
// same term is −(f⁺ − DΔ f⁻) ∂t_event/∂x, ∂t_event/∂δq by central
// differences of the instant the detector stops reporting the contact along
// the linearised motion, located by bisection to machine precision), and
// DΔ the derivative of the velocity jump: each impulse LCP of the event
// differentiated by central differences at its fixed contact set
// (contacts refreshed at the perturbed configuration), DΔ = 1 without one.
// The controller's τ is held as in the run (open-loop sensitivities).
#include <algorithm>
#include <cmath>

#include "plume/algorithms/derivatives.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "sim/event_driven.hpp"

namespace plume::detail {

namespace {

constexpr double kSubstep = 5e-4;   // RK4 substep of the variational equations [s]
constexpr double kFieldStep = 1e-6; // central differences of q̈ in contact phases
constexpr double kJumpStep = 1e-7;  // central differences of the impulse LCP and witnesses

}  // namespace

void EventDrivenCore::sensitivity_start() {
  const int n = 2 * model().nv();
  sens->Phi = MatrixX::Identity(n, n);
  sens->t_start = t;
  sens->started = true;
  sens->stages.clear();
}

void EventDrivenCore::sensitivity_invalidate(const std::string& why) {
  if (sens && sens->invalid.empty()) sens->invalid = why + " at t = " + fmt(t);
}

// (q̇ in tangent coordinates, q̈) = (v, q̈) with the scheme's current sets.
VectorX EventDrivenCore::tangent_field(const VectorX& qq, const VectorX& vv) {
  const int nv = model().nv();
  VectorX f(2 * nv);
  f.head(nv) = vv;
  VectorX qdd(nv);
  dynamics(qq, vv, qdd, false);
  f.tail(nv) = qdd;
  ++sens->field_evaluations;
  return f;
}

void EventDrivenCore::field_jacobian(const VectorX& qq, const VectorX& vv, MatrixX& A) {
  const Model& m = model();
  const int nv = m.nv();
  A.setZero(2 * nv, 2 * nv);
  A.topRightCorner(nv, nv).setIdentity();
  for (int i = 1; i < m.nbodies(); ++i) {
    const Joint& j = m.joint(i);
    if (j.type == JointType::FreeFlyer) {
      A.block<6, 6>(j.v_index, j.v_index) = -crm(Motion(Vec6(vv.segment<6>(j.v_index))));
    }
  }
  const bool constrained = std::any_of(current.begin(), current.end(), [](const Tracked& c) { return c.active; });
  if (!constrained) {
    VectorX qs = qq;
    normalize_configuration(m, qs);
    unchecked::aba_derivatives(m, sens->data, qs, vv, applied_tau(vv));
    A.bottomLeftCorner(nv, nv) = sens->data.ddq_dq;
    A.bottomRightCorner(nv, nv) = sens->data.ddq_dv;
    if (opt.joint_damping) {
      A.bottomRightCorner(nv, nv) -= sens->data.Minv * m.damping().asDiagonal();
    }
    ++sens->field_evaluations;
    return;
  }
  VectorX qdd_p(nv), qdd_m(nv), e = VectorX::Zero(nv);
  for (int k = 0; k < nv; ++k) {
    e(k) = 1.0;
    dynamics(integrate(m, qq, e, kFieldStep), vv, qdd_p, false);
    dynamics(integrate(m, qq, e, -kFieldStep), vv, qdd_m, false);
    A.block(nv, k, nv, 1) = (qdd_p - qdd_m) / (2.0 * kFieldStep);
    e(k) = 0.0;
    VectorX vp = vv, vm = vv;
    vp(k) += kFieldStep;
    vm(k) -= kFieldStep;
    dynamics(qq, vp, qdd_p, false);
    dynamics(qq, vm, qdd_m, false);
    A.block(nv, nv + k, nv, 1) = (qdd_p - qdd_m) / (2.0 * kFieldStep);
  }
  sens->field_evaluations += 4 * nv;
}

// Φ over [ta, tb] ⊂ [previous_time, current_time] of the step just taken.
void EventDrivenCore::sensitivity_flow(double ta, double tb) {
  if (!sens || !sens->started || !sens->invalid.empty() || !(tb > ta)) return;
  const Model& m = model();
  const int nv = m.nv(), n = 2 * nv;
  const int steps = std::max(1, static_cast<int>(std::ceil((tb - ta) / kSubstep)));
  const double h = (tb - ta) / steps;
  VectorX y(m.nq() + nv);
  MatrixX A1(n, n), A2(n, n), A3(n, n), K1(n, n), K2(n, n), K3(n, n), K4(n, n);
  auto jacobian_at = [&](double time, MatrixX& A) {
    stepper->calc_state(time, y);
    field_jacobian(y.head(m.nq()), y.tail(nv), A);
  };
  jacobian_at(ta, A1);
  for (int s = 0; s < steps; ++s) {
    const double t0 = ta + s * h;
    jacobian_at(t0 + 0.5 * h, A2);
    jacobian_at(s + 1 == steps ? tb : t0 + h, A3);
    MatrixX& Phi = sens->Phi;
    K1.noalias() = A1 * Phi;
    K2.noalias() = A2 * (Phi + 0.5 * h * K1);
    K3.noalias() = A2 * (Phi + 0.5 * h * K2);
    K4.noalias() = A3 * (Phi + h * K3);
    Phi += (h / 6.0) * (K1 + 2.0 * K2 + 2.0 * K3 + K4);
    A1.swap(A3);
  }
  memo.valid = false;  // the differences moved the memo off the run's state
}

void EventDrivenCore::sensitivity_before_event(const StepEvent& event) {
  if (!sens || !sens->started || !sens->invalid.empty()) return;
  const Model& m = model();
  const int nv = m.nv();
  sens->stages.clear();
  sens->f_minus = tangent_field(q, v);
  sens->has_grad = event.witness >= 0 && event.witness < static_cast<int>(witnesses.size());
  if (sens->has_grad) {
    const Witness w = witnesses[event.witness];
    sens->grad.resize(2 * nv);
    VectorX e = VectorX::Zero(nv);
    for (int k = 0; k < nv; ++k) {
      e(k) = 1.0;
      sens->grad(k) = (witness_value(w, integrate(m, q, e, kJumpStep), v) -
                       witness_value(w, integrate(m, q, e, -kJumpStep), v)) / (2.0 * kJumpStep);
      e(k) = 0.0;
      VectorX vp = v, vm = v;
      vp(k) += kJumpStep;
      vm(k) -= kJumpStep;
      sens->grad(nv + k) = (witness_value(w, q, vp) - witness_value(w, q, vm)) / (2.0 * kJumpStep);
    }
  }
  // A geometric loss (witness −1): an active shape contact the detector no
  // longer reports at this state.
  sens->has_dtime = false;
  if (!sens->has_grad) {
    unchecked::forward_kinematics(m, sens->data, q);
    std::vector<Contact> found;
    detector.detect(m, sens->data, found);
    for (const Tracked& tr : current) {
      if (!tr.active || tr.contact.kind != ContactKind::Shapes) continue;
      const bool seen = std::any_of(found.begin(), found.end(), [&](const Contact& c) { return c.id == tr.contact.id; });
      if (!seen && geometric_loss_time_gradient(tr.contact.id, sens->dtime)) {
        sens->has_dtime = true;
        break;
      }
    }
  }
  memo.valid = false;
}

// ∂t_event/∂x for the loss of contact `id`: the offset s at which the
// detector stops reporting it along q(s) = (q ⊕ ε e_k) ⊕ v s, by bisection,
// differenced in ε. Zero for the velocity columns (a position event).
bool EventDrivenCore::geometric_loss_time_gradient(std::uint64_t id, VectorX& dtime) {
  const Model& m = model();
  const int nv = m.nv();
  std::vector<Contact> found;
  auto detected = [&](const VectorX& qq) {
    VectorX qs = qq;
    normalize_configuration(m, qs);
    unchecked::forward_kinematics(m, sens->data, qs);
    detector.detect(m, sens->data, found);
    return std::any_of(found.begin(), found.end(), [&](const Contact& c) { return c.id == id; });
  };
  // Small enough that neither the perturbation nor the linearised motion
  // (a constant twist: a rolling ball's centre moves on a circle of radius r)
  // opens the contact beyond the contact tolerance.
  constexpr double kBracket = 1e-6;  // [s]
  constexpr double kShift = 2e-10;   // δq [m, rad]
  auto loss_offset = [&](const VectorX& qb, double& s_out) {
    double a = -kBracket, b = kBracket;
    if (!detected(integrate(m, qb, v, a)) || detected(integrate(m, qb, v, b))) return false;
    for (int it = 0; it < 200 && b - a > 1e-17; ++it) {
      const double c = 0.5 * (a + b);
      if (!(c > a && c < b)) break;
      (detected(integrate(m, qb, v, c)) ? a : b) = c;
    }
    s_out = b;
    return true;
  };
  dtime = VectorX::Zero(2 * nv);
  VectorX e = VectorX::Zero(nv);
  for (int k = 0; k < nv; ++k) {
    e(k) = 1.0;
    double sp, sm;
    if (!loss_offset(integrate(m, q, e, kShift), sp) || !loss_offset(integrate(m, q, e, -kShift), sm)) return false;
    dtime(k) = (sp - sm) / (2.0 * kShift);
    e(k) = 0.0;
  }
  return true;
}

MatrixX EventDrivenCore::impact_jacobian(const ImpactStage& st) {
  const Model& m = model();
  const int nv = m.nv();
  Data& d = sens->data;
  auto v_plus = [&](const VectorX& qq, const VectorX& vv) {
    VectorX qs = qq;
    normalize_configuration(m, qs);
    unchecked::forward_kinematics(m, d, qs);
    std::vector<Contact> cs = st.contacts;
    for (Contact& c : cs) refresh_contact(m, d, c);
    const ImpactSolution& s = sens->solver.impact(m, d, qs, vv, cs, st.e, st.mu, st.io);
    if (s.status != ContactStatus::Solved) sensitivity_invalidate("an impulse LCP near the impact failed: " + s.message);
    return VectorX(s.v_plus);
  };
  MatrixX D = MatrixX::Identity(2 * nv, 2 * nv);
  VectorX e = VectorX::Zero(nv);
  for (int k = 0; k < nv; ++k) {
    e(k) = 1.0;
    D.block(nv, k, nv, 1) = (v_plus(integrate(m, st.q, e, kJumpStep), st.v) -
                             v_plus(integrate(m, st.q, e, -kJumpStep), st.v)) / (2.0 * kJumpStep);
    e(k) = 0.0;
    VectorX vp = st.v, vm = st.v;
    vp(k) += kJumpStep;
    vm(k) -= kJumpStep;
    D.block(nv, nv + k, nv, 1) = (v_plus(st.q, vp) - v_plus(st.q, vm)) / (2.0 * kJumpStep);
  }
  return D;
}

void EventDrivenCore::sensitivity_after_event() {
  if (!sens || !sens->started || !sens->invalid.empty()) return;
  const int n = 2 * model().nv();
  MatrixX D = MatrixX::Identity(n, n);
  for (const ImpactStage& st : sens->stages) D = impact_jacobian(st) * D;
  sens->stages.clear();
  MatrixX Xi = D;
  if (sens->has_dtime) {
    const VectorX f_plus = tangent_field(q, v);
    Xi.noalias() -= (f_plus - D * sens->f_minus) * sens->dtime.transpose();
  } else if (sens->has_grad) {
    const double rate = sens->grad.dot(sens->f_minus);
    if (rate != 0.0 && std::isfinite(rate)) {
      const VectorX f_plus = tangent_field(q, v);
      Xi.noalias() += (f_plus - D * sens->f_minus) * (sens->grad.transpose() / rate);
    }
  }
  sens->Phi = Xi * sens->Phi;
  ++sens->saltations;
  memo.valid = false;
}

}  // namespace plume::detail
