// Helpers shared by the three schemes.
#include "sim/scheme_common.hpp"

#include <cmath>
#include <sstream>

#include "plume/algorithms/kinematics.hpp"
#include "plume/error.hpp"

namespace plume::detail {

void validate_scheme_options(const SimulationOptions& o) {
  auto positive = [](double x, const char* name) {
    if (!(x > 0.0) || !std::isfinite(x)) throw Error(std::string("simulation option ") + name + " must be positive and finite");
  };
  positive(o.abs_tol, "abs_tol");
  positive(o.rel_tol, "rel_tol");
  positive(o.initial_step, "initial_step");
  positive(o.min_step, "min_step");
  positive(o.max_step, "max_step");
  positive(o.event_time_tolerance, "event_time_tolerance");
  positive(o.contact_tolerance, "contact_tolerance");
  positive(o.velocity_tolerance, "velocity_tolerance");
  positive(o.drift_tolerance, "drift_tolerance");
  positive(o.slip_velocity, "slip_velocity");
  positive(o.time_step, "time_step");
  if (!(o.zeno_speed >= 0.0)) throw Error("simulation option zeno_speed must be non-negative");
  if (!(o.duration >= 0.0) || !std::isfinite(o.duration)) throw Error("simulation option duration must be finite and non-negative");
  if (!(o.output_rate >= 0.0) || !std::isfinite(o.output_rate)) throw Error("simulation option output_rate must be finite and non-negative");
  if (o.cone_directions < 4) throw Error("simulation option cone_directions must be at least 4");
  if (!(o.fallback_duration >= 0.0) || !std::isfinite(o.fallback_duration)) {
    throw Error("simulation option fallback_duration must be finite and non-negative");
  }
  positive(o.fallback_step, "fallback_step");
  if (!(o.joint_limit_restitution >= 0.0 && o.joint_limit_restitution <= 1.0)) {
    throw Error("simulation option joint_limit_restitution must be within [0, 1]");
  }
}

namespace {
DetectionOptions detection_options(const World& w, double margin) {
  DetectionOptions d;
  d.margin = margin;
  d.self_collision = w.self_collision();
  return d;
}
}  // namespace

ContactCatalogue::ContactCatalogue(const World& world, double margin_)
    : detector(world.model(), world.environment(), detection_options(world, margin_)), margin(margin_) {
  for (const ShapePair& p : detector.pairs()) {
    const DetectorShape& a = detector.shapes()[p.shape_a];
    const DetectorShape& b = detector.shapes()[p.shape_b];
    pair_parameters.push_back(world.contact_parameters(a.name, link_of(world, p.shape_a), a.material, b.name,
                                                       link_of(world, p.shape_b), b.material));
  }
}

void ContactCatalogue::detect(const Model& model, Data& data, const VectorX& q, double within, bool joint_limits,
                              std::vector<Contact>& out) {
  unchecked::forward_kinematics(model, data, q);
  detector.detect(model, data, out);
  if (within != margin) {
    std::size_t k = 0;
    for (const Contact& c : out) {
      if (c.gap < within) out[k++] = c;
    }
    out.resize(k);
  }
  if (joint_limits) detect_joint_limits(model, q, within, out);
}

double joint_limit_gap(const Model& model, const VectorX& q, const Contact& c) {
  const int qi = model.joint(c.body_b).q_index;
  return c.normal.x() > 0.0 ? q(qi) - model.lower_position_limit()(qi) : model.upper_position_limit()(qi) - q(qi);
}

double contact_gap_at(const Model& model, Data& data, const VectorX& q, Contact c) {
  if (c.kind == ContactKind::JointLimit) return joint_limit_gap(model, q, c);
  unchecked::forward_kinematics(model, data, q);
  refresh_contact(model, data, c);
  return c.gap;
}

std::string ContactCatalogue::link_of(const World& world, int shape) const {
  if (shape < detector.num_robot_shapes()) return world.model().collisions()[shape].link;
  return detector.shapes()[shape].name;
}

std::string ContactCatalogue::name_of(const Model& model, const Contact& c) const {
  if (c.kind == ContactKind::JointLimit) {
    const std::string& joint = model.joint(model.dof_body(c.dof)).name;
    return "limit:" + joint + (c.normal.x() > 0 ? ":lower" : ":upper");
  }
  return detector.shapes()[c.shape_a].name + "|" + detector.shapes()[c.shape_b].name + "#" + std::to_string(c.feature);
}

bool sample_controller_checked(const Model& model, const SimulationOptions& options, const ControllerFunction& f,
                               double t, const VectorX& q, const VectorX& v, VectorX& tau, SimulationResult& result) {
  tau.setZero(model.nv());  // each call starts from τ = 0: nothing is held over from the last sample
  f(t, q, v, tau);
  if (tau.size() != model.nv()) {
    result.status = SimulationStatus::Failed;
    result.message = "the controller returned " + std::to_string(tau.size()) + " torques at t = " + fmt(t) +
                     ", expected nv = " + std::to_string(model.nv());
    return false;
  }
  for (Eigen::Index i = 0; i < tau.size(); ++i) {
    if (!std::isfinite(tau(i))) {
      result.status = SimulationStatus::NonFinite;
      result.message = "the controller returned tau[" + std::to_string(i) + "] = " + fmt(tau(i)) + " at t = " + fmt(t);
      return false;
    }
  }
  if (!options.unactuated_torques) {
    for (int i = 1; i < model.nbodies(); ++i) {
      const Joint& j = model.joint(i);
      if (j.type != JointType::FreeFlyer && j.type != JointType::Planar) continue;
      for (int k = j.v_index; k < j.v_index + j.nv; ++k) {
        if (tau(k) == 0.0) continue;
        result.status = SimulationStatus::Failed;
        result.message = "the controller returned tau[" + std::to_string(k) + "] = " + fmt(tau(k)) + " at t = " +
                         fmt(t) + " on joint '" + j.name + "' (" + to_string(j.type) +
                         "), which has no actuator; set SimulationOptions::unactuated_torques (world file: "
                         "<simulate unactuated_torques=\"true\">) to apply it";
        return false;
      }
    }
  }
  if (options.torque_limits) tau = tau.cwiseMax(-model.effort_limit()).cwiseMin(model.effort_limit());
  return true;
}

void applied_torque(const Model& model, const SimulationOptions& options, const VectorX& tau, const VectorX& v,
                    VectorX& out) {
  out = tau;
  if (options.joint_damping) out -= model.damping().cwiseProduct(v);
}

std::string fmt(double x) {
  std::ostringstream s;
  s.precision(10);
  s << x;
  return s.str();
}

double quaternion_error(const Model& model, const VectorX& q) {
  double worst = 0.0;
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    if (j.type == JointType::FreeFlyer) worst = std::max(worst, std::abs(q.segment<4>(j.q_index + 3).norm() - 1.0));
  }
  return worst;
}

double joint_limit_overrun(const Model& model, const VectorX& q) {
  const VectorX& lower = model.lower_position_limit();
  const VectorX& upper = model.upper_position_limit();
  double worst = 0.0;
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    if (j.type != JointType::Revolute && j.type != JointType::Prismatic) continue;
    const double qi = q[j.q_index];
    if (std::isfinite(lower[j.q_index])) worst = std::max(worst, lower[j.q_index] - qi);
    if (std::isfinite(upper[j.q_index])) worst = std::max(worst, qi - upper[j.q_index]);
  }
  return worst;
}

void count_penetration(SimulationStatistics& stats, const Contact& c) {
  double& worst = c.kind == ContactKind::JointLimit ? stats.max_limit_violation : stats.max_penetration;
  worst = std::max(worst, -c.gap);
}

std::string ContactCatalogue::names_of(const Model& model, const std::vector<Contact>& contacts) const {
  std::string s;
  const std::size_t shown = std::min<std::size_t>(contacts.size(), 12);
  for (std::size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + name_of(model, contacts[i]);
  if (contacts.size() > shown) s += " and " + std::to_string(contacts.size() - shown) + " more";
  return s;
}

std::string contact_failure_words(ContactStatus status, const std::string& solver_message) {
  switch (status) {
    case ContactStatus::Infeasible:
      return "no contact forces exist that hold these contacts (proved infeasible)";
    case ContactStatus::Inconsistent:
      return "no consistent frictional forces (a Painlevé-type configuration: no lambda >= 0 holds the contacts "
             "with friction)";
    default: break;
  }
  std::string words = "no contact forces found";
  // The solver's last residual, if it reported one ("residual 9.81 > …").
  const std::size_t at = solver_message.rfind("residual ");
  if (at != std::string::npos) {
    std::size_t end = at + 9;
    while (end < solver_message.size() && std::string("0123456789.e+-").find(solver_message[end]) != std::string::npos) ++end;
    if (end > at + 9) words += " (the best had a residual of " + solver_message.substr(at + 9, end - at - 9) + ")";
  }
  return words;
}

}  // namespace plume::detail
