// Names of the simulator's enums, the memory recorder and the PD controller.
#include "plume/error.hpp"
#include "plume/sim/simulator.hpp"

namespace plume {

const char* to_string(Scheme scheme) {
  switch (scheme) {
    case Scheme::EventDriven: return "event-driven";
    case Scheme::Compliant: return "compliant";
    case Scheme::TimeStepping: return "time-stepping";
  }
  return "unknown";
}

Scheme parse_scheme(const std::string& text) {
  if (text == "event-driven" || text == "event_driven") return Scheme::EventDriven;
  if (text == "compliant") return Scheme::Compliant;
  if (text == "time-stepping" || text == "time_stepping") return Scheme::TimeStepping;
  throw Error("unknown scheme '" + text + "' (expected event-driven, compliant or time-stepping)");
}

const char* to_string(Integrator integrator) {
  switch (integrator) {
    case Integrator::Dopri5: return "dopri5";
    case Integrator::BulirschStoer: return "bulirsch-stoer";
    case Integrator::Rosenbrock4: return "rosenbrock4";
    case Integrator::BogackiShampine: return "bogacki-shampine";
  }
  return "unknown";
}

Integrator parse_integrator(const std::string& text) {
  if (text == "dopri5" || text == "runge_kutta_dopri5") return Integrator::Dopri5;
  if (text == "bulirsch-stoer" || text == "bulirsch_stoer") return Integrator::BulirschStoer;
  if (text == "rosenbrock4") return Integrator::Rosenbrock4;
  if (text == "bogacki-shampine" || text == "bogacki_shampine" || text == "bs3") return Integrator::BogackiShampine;
  throw Error("unknown integrator '" + text + "' (expected dopri5, bulirsch-stoer, rosenbrock4 or bogacki-shampine)");
}

const char* to_string(TimeSteppingRule rule) {
  switch (rule) {
    case TimeSteppingRule::Trapezoid: return "trapezoid";
    case TimeSteppingRule::SymplecticEuler: return "symplectic-euler";
  }
  return "unknown";
}

TimeSteppingRule parse_time_stepping_rule(const std::string& text) {
  if (text == "trapezoid") return TimeSteppingRule::Trapezoid;
  if (text == "symplectic-euler" || text == "symplectic_euler") return TimeSteppingRule::SymplecticEuler;
  throw Error("unknown time-stepping rule '" + text + "' (expected trapezoid or symplectic-euler)");
}

const char* to_string(EventKind kind) {
  switch (kind) {
    case EventKind::Impact: return "impact";
    case EventKind::ContactGain: return "contact_gain";
    case EventKind::ContactLoss: return "contact_loss";
    case EventKind::Stick: return "stick";
    case EventKind::Slip: return "slip";
    case EventKind::ZenoRest: return "zeno_rest";
    case EventKind::Fallback: return "fallback";
  }
  return "unknown";
}

const char* to_string(SimulationStatus status) {
  switch (status) {
    case SimulationStatus::Finished: return "finished";
    case SimulationStatus::ContactFailure: return "contact_failure";
    case SimulationStatus::StepUnderflow: return "step_underflow";
    case SimulationStatus::NonFinite: return "non_finite";
    case SimulationStatus::EventLimit: return "event_limit";
    case SimulationStatus::StepLimit: return "step_limit";
    case SimulationStatus::Failed: return "failed";
  }
  return "unknown";
}

void MemoryRecorder::sample(double t, const VectorX& qs, const VectorX& vs, double energy) {
  times.push_back(t);
  q.push_back(qs);
  v.push_back(vs);
  energies.push_back(energy);
}

ControllerFunction PdController::function(const Model& model) const {
  if (kp.size() != model.nv() || kd.size() != model.nv()) {
    throw ArgumentError("PD gains need nv = " + std::to_string(model.nv()) + " entries");
  }
  if (q_target.size() != model.nq()) {
    throw ArgumentError("PD target needs nq = " + std::to_string(model.nq()) + " entries");
  }
  if (tau_ff.size() != 0 && tau_ff.size() != model.nv()) {
    throw ArgumentError("PD feed-forward needs nv = " + std::to_string(model.nv()) + " entries");
  }
  // Map each actuated velocity coordinate to its configuration coordinate.
  std::vector<std::pair<int, int>> dofs;  // (v index, q index)
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    if (j.nv == 1) dofs.emplace_back(j.v_index, j.q_index);
  }
  return [dofs, kp = kp, kd = kd, target = q_target, ff = tau_ff](double, const VectorX& q, const VectorX& v,
                                                                  VectorX& tau) {
    tau.setZero();
    for (const auto& [iv, iq] : dofs) tau(iv) = kp(iv) * (target(iq) - q(iq)) - kd(iv) * v(iv);
    if (ff.size() != 0) tau += ff;
  };
}

}  // namespace plume
