// World files, <simulate> (the scheme, integrator, tolerances and limits
// into SimulationOptions) and <controller> (the built-in joint-space PD).
#include "sim/world_file_reader.hpp"

#include <algorithm>
#include <cmath>

#include "plume/error.hpp"

namespace plume::detail::world_xml {

void WorldReader::read_simulate(const XMLElement* s, SimulationOptions& o, WorldBuilder& builder) const {
  check_attributes(s, {"scheme", "integrator", "duration", "output_rate", "abs_tol", "rel_tol", "initial_step",
                       "min_step", "max_step", "event_time_tolerance", "contact_tolerance", "velocity_tolerance",
                       "zeno_speed", "slip_velocity", "drift_tolerance", "cone_directions", "max_events",
                       "max_steps", "joint_damping", "joint_limits", "joint_limit_restitution", "torque_limits",
                       "unactuated_torques", "time_step", "time_stepping_rule", "self_collision", "fallback_duration", "fallback_step"});
  check_no_children(s);
  if (const std::optional<std::string> scheme = attribute(s, "scheme")) {
    try {
      o.scheme = parse_scheme(trim(*scheme));
    } catch (const Error&) {
      fail(s, "scheme=\"" + *scheme + "\" is not one of event-driven, compliant, time-stepping");
    }
  }
  if (const std::optional<std::string> integrator = attribute(s, "integrator")) {
    try {
      o.integrator = parse_integrator(trim(*integrator));
    } catch (const Error&) {
      fail(s, "integrator=\"" + *integrator + "\" is not one of dopri5, bulirsch-stoer, rosenbrock4, bogacki-shampine");
    }
  }
  if (const std::optional<std::string> rule = attribute(s, "time_stepping_rule")) {
    try {
      o.time_stepping_rule = parse_time_stepping_rule(trim(*rule));
    } catch (const Error&) {
      fail(s, "time_stepping_rule=\"" + *rule + "\" is not one of trapezoid, symplectic-euler");
    }
  }
  o.duration = number_or(s, "duration", o.duration, Range::Positive);
  o.output_rate = number_or(s, "output_rate", o.output_rate, Range::NonNegative);
  o.abs_tol = number_or(s, "abs_tol", o.abs_tol, Range::Positive);
  o.rel_tol = number_or(s, "rel_tol", o.rel_tol, Range::Positive);
  o.initial_step = number_or(s, "initial_step", o.initial_step, Range::Positive);
  o.min_step = number_or(s, "min_step", o.min_step, Range::Positive);
  o.max_step = number_or(s, "max_step", o.max_step, Range::Positive);
  o.event_time_tolerance = number_or(s, "event_time_tolerance", o.event_time_tolerance, Range::Positive);
  o.contact_tolerance = number_or(s, "contact_tolerance", o.contact_tolerance, Range::Positive);
  o.velocity_tolerance = number_or(s, "velocity_tolerance", o.velocity_tolerance, Range::Positive);
  o.zeno_speed = number_or(s, "zeno_speed", o.zeno_speed, Range::NonNegative);
  o.slip_velocity = number_or(s, "slip_velocity", o.slip_velocity, Range::Positive);
  o.drift_tolerance = number_or(s, "drift_tolerance", o.drift_tolerance, Range::Positive);
  o.time_step = number_or(s, "time_step", o.time_step, Range::Positive);
  o.fallback_duration = number_or(s, "fallback_duration", o.fallback_duration, Range::NonNegative);
  o.fallback_step = number_or(s, "fallback_step", o.fallback_step, Range::Positive);
  if (const std::optional<long> k = integer(s, "cone_directions", 2)) {
    if (*k == 3) fail(s, "cone_directions=\"3\": use 2 (a friction box) or at least 4 (a polyhedral cone)");
    o.cone_directions = static_cast<int>(std::min(*k, 1024L));
    if (*k > 1024) fail(s, "cone_directions must be at most 1024");
  }
  if (const std::optional<long> n = integer(s, "max_events", 1)) {
    if (*n > 2147483647L) fail(s, "max_events must be at most 2147483647");
    o.max_events = static_cast<int>(*n);
  }
  if (const std::optional<long> n = integer(s, "max_steps", 1)) o.max_steps = *n;
  o.joint_damping = boolean(s, "joint_damping").value_or(o.joint_damping);
  o.joint_limits = boolean(s, "joint_limits").value_or(o.joint_limits);
  o.joint_limit_restitution =
      number_or(s, "joint_limit_restitution", o.joint_limit_restitution, Range::UnitInterval);
  o.torque_limits = boolean(s, "torque_limits").value_or(o.torque_limits);
  o.unactuated_torques = boolean(s, "unactuated_torques").value_or(o.unactuated_torques);
  if (const std::optional<bool> self = boolean(s, "self_collision")) builder.set_self_collision(*self);
  if (o.min_step > o.max_step) fail(s, "min_step must not exceed max_step");
  if (o.initial_step < o.min_step || o.initial_step > o.max_step) {
    fail(s, "initial_step must lie within [min_step, max_step]");
  }
}

// The 1-DoF joints of one model of the world, in joint (body) order: (v index, q index).
std::vector<std::pair<int, int>> WorldReader::actuated_dofs(const World& world, const WorldModel& wm) {
  std::vector<std::pair<int, int>> dofs;
  for (int i = wm.first_body; i < wm.first_body + wm.nbodies; ++i) {
    const Joint& j = world.model().joint(i);
    if (j.nv == 1) dofs.emplace_back(j.v_index, j.q_index);
  }
  return dofs;
}

void WorldReader::read_controllers(const std::vector<const XMLElement*>& controllers,
                                   const std::vector<ModelEntry>& entries, Scenario& scenario) const {
  const World& world = scenario.world;
  const Model& m = world.model();
  PdController pd;
  pd.kp = VectorX::Zero(m.nv());
  pd.kd = VectorX::Zero(m.nv());
  pd.q_target = VectorX::Zero(m.nq());
  std::optional<double> rate;
  std::optional<bool> torque_limits;
  const XMLElement* rate_element = nullptr;
  std::map<std::string, int> controlled;  // model → line of its controller
  for (const XMLElement* c : controllers) {
    check_attributes(c, {"type", "model", "kp", "kd", "target", "rate", "torque_limits"});
    check_no_text(c);
    const std::string type = trim(required(c, "type"));
    if (type != "pd") fail(c, "unknown controller type '" + type + "' (the built-in controller is type=\"pd\")");

    std::string model_name;
    if (const std::optional<std::string> given = attribute(c, "model")) {
      model_name = trim(*given);
    } else if (world.models().size() == 1) {
      model_name = world.models()[0].name;
    } else {
      fail(c, "missing attribute 'model' (the world has several models)");
    }
    const int index = world.model_index(model_name);
    if (index < 0) fail(c, "model=\"" + model_name + "\" is not a model of this world");
    if (!controlled.emplace(model_name, c->GetLineNum()).second) {
      fail(c, "model '" + model_name + "' already has a controller (line " +
                  std::to_string(controlled[model_name]) + ")");
    }
    const WorldModel& wm = world.models()[static_cast<std::size_t>(index)];
    const std::vector<std::pair<int, int>> dofs = actuated_dofs(world, wm);
    const Eigen::Index na = static_cast<Eigen::Index>(dofs.size());
    if (na == 0) fail(c, "model '" + model_name + "' has no actuated (1-DoF) joints to control");

    const std::string gain_what = "1 or " + std::to_string(na) + ", the actuated joints of model '" + model_name + "'";
    auto gains = [&](const char* name, bool needed) -> VectorX {
      std::optional<VectorX> g = vector(c, name);
      if (!g) {
        if (needed) fail(c, std::string("missing attribute '") + name + "'");
        return VectorX::Zero(na);
      }
      if (g->size() != 1 && g->size() != na) {
        fail(c, std::string(name) + " has " + std::to_string(g->size()) + " entries, expected " + gain_what);
      }
      for (Eigen::Index i = 0; i < g->size(); ++i) {
        if ((*g)(i) < 0.0) fail(c, std::string(name) + " entry " + std::to_string(i) + " is negative");
      }
      return g->size() == 1 ? VectorX::Constant(na, (*g)(0)) : *g;
    };
    const VectorX kp = gains("kp", true);
    const VectorX kd = gains("kd", false);

    // The target: the model's full q, or its actuated joints only; default: the initial state.
    VectorX q_model = entries[static_cast<std::size_t>(index)].q0;
    if (const std::optional<VectorX> target = vector(c, "target")) {
      if (target->size() == wm.nq) {
        q_model = *target;
      } else if (target->size() == na) {
        for (Eigen::Index k = 0; k < na; ++k) q_model(dofs[static_cast<std::size_t>(k)].second - wm.q_index) = (*target)(k);
      } else {
        fail(c, "target has " + std::to_string(target->size()) + " entries, expected " + std::to_string(wm.nq) +
                    " (nq of model '" + model_name + "') or " + std::to_string(na) + " (its actuated joints)");
      }
    }
    // <target joint="…" q="…"/>: one actuated joint's target by name.
    const Model& own = entries[static_cast<std::size_t>(index)].model;
    std::map<std::string, int> target_lines;
    for (const XMLElement* t = c->FirstChildElement(); t; t = t->NextSiblingElement()) {
      if (std::string(t->Name()) != "target") fail(t, "unknown element inside <controller> (expected <target joint q>)");
      check_attributes(t, {"joint", "q"});
      check_no_children(t);
      const std::string name = trim(required(t, "joint"));
      if (!target_lines.emplace(name, t->GetLineNum()).second) {
        fail(t, "joint '" + name + "' has a second target (line " + std::to_string(target_lines[name]) + ")");
      }
      const Joint& joint = own.joint(named_joint(t, own, model_name, name));
      if (joint.nv != 1) fail(t, "joint '" + name + "' is a " + std::string(to_string(joint.type)) + " joint; the PD controller drives 1-DoF joints only");
      q_model(joint.q_index) = *required_number(t, "q", Range::Any);
    }
    for (Eigen::Index k = 0; k < na; ++k) {
      const auto [iv, iq] = dofs[static_cast<std::size_t>(k)];
      pd.kp(iv) = kp(k);
      pd.kd(iv) = kd(k);
      pd.q_target(iq) = q_model(iq - wm.q_index);
    }

    if (const std::optional<double> r = number(c, "rate", Range::Positive)) {
      if (rate && *rate != *r) {
        fail(c, "rate=\"" + *attribute(c, "rate") + "\" differs from the controller on line " +
                    std::to_string(rate_element->GetLineNum()) + " (all controllers run at one rate)");
      }
      rate = *r;
      rate_element = c;
    }
    if (const std::optional<bool> t = boolean(c, "torque_limits")) {
      if (torque_limits && *torque_limits != *t) fail(c, "torque_limits differs from another controller's");
      torque_limits = *t;
    }
  }
  scenario.controller = pd;
  scenario.controller_period = 1.0 / rate.value_or(1000.0);
  if (torque_limits) scenario.options.torque_limits = *torque_limits;
}

}  // namespace plume::detail::world_xml
