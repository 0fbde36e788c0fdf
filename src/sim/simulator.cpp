// plume::Simulator: checks the initial state and runs the scheme that
// SimulationOptions::scheme names (event_driven.cpp, time_stepping.cpp,
// compliant_scheme.cpp).
#include "plume/sim/simulator.hpp"

#include <cmath>

#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/detection.hpp"
#include "plume/error.hpp"
#include "sim/scheme.hpp"
#include "sim/scheme_common.hpp"

namespace plume {

// ---- Simulator: picks the scheme ----------------------------------------------------

struct Simulator::Impl {
  std::unique_ptr<detail::SchemeRunner> runner;
};

namespace {

// Refuses an initial state that sinks deeper than max_initial_penetration
// into a surface: no scheme can start from it sensibly (the rigid ones
// would resolve metres of overlap with contact LCPs of every buried corner,
// the compliant one with forces of K times metres).
void check_initial_penetration(const World& world, const SimulationOptions& options) {
  const double limit = options.max_initial_penetration;
  using detail::fmt;
  if (!(limit >= 0.0) || std::isnan(limit)) {
    throw ArgumentError("simulation option max_initial_penetration must be >= 0 (got " + fmt(limit) + ")");
  }
  const Model& m = world.model();
  DetectionOptions d;
  d.margin = 0.0;
  d.self_collision = world.self_collision();
  ContactDetector detector(m, world.environment(), d);
  Data data(m);
  VectorX q = world.q0();
  normalize_configuration(m, q);
  unchecked::forward_kinematics(m, data, q);
  std::vector<Contact> contacts;
  detector.detect(m, data, contacts);
  const Contact* deepest = nullptr;
  for (const Contact& c : contacts) {
    if (!deepest || c.gap < deepest->gap) deepest = &c;
  }
  if (deepest && -deepest->gap > limit) {
    throw ArgumentError("the initial state sinks " + detector.shapes()[deepest->shape_b].name + " " + fmt(-deepest->gap) +
                        " m into " + detector.shapes()[deepest->shape_a].name +
                        " (more than max_initial_penetration = " + fmt(limit) +
                        " m): start the model touching or above the surface");
  }
}

}  // namespace

Simulator::Simulator(World world, const SimulationOptions& options) : impl_(std::make_unique<Impl>()) {
  check_initial_penetration(world, options);
  if (options.sensitivity && options.scheme != Scheme::EventDriven) {
    throw Error(std::string("SimulationOptions::sensitivity needs the event-driven scheme, not ") + to_string(options.scheme));
  }
  switch (options.scheme) {
    case Scheme::EventDriven: impl_->runner = detail::make_event_driven(std::move(world), options); break;
    case Scheme::Compliant: impl_->runner = detail::make_compliant(std::move(world), options); break;
    case Scheme::TimeStepping: impl_->runner = detail::make_time_stepping(std::move(world), options); break;
  }
}
Simulator::~Simulator() = default;
Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;

void Simulator::set_controller(ControllerFunction controller, double period) {
  if (!(period > 0.0) || !std::isfinite(period)) throw ArgumentError("controller period must be positive and finite");
  impl_->runner->set_controller(std::move(controller), period);
}

SimulationResult Simulator::run(Recorder* recorder) { return impl_->runner->run_until(options().duration, recorder); }

SimulationResult Simulator::run_until(double until, Recorder* recorder) {
  if (!std::isfinite(until)) throw ArgumentError("run_until: the end time must be finite");
  return impl_->runner->run_until(until, recorder);
}

double Simulator::time() const { return impl_->runner->time(); }
const VectorX& Simulator::q() const { return impl_->runner->q(); }
const VectorX& Simulator::v() const { return impl_->runner->v(); }
const World& Simulator::world() const { return impl_->runner->world(); }
const SimulationOptions& Simulator::options() const { return impl_->runner->options(); }
const std::vector<Contact>& Simulator::current_contacts() const { return impl_->runner->current_contacts(); }
double Simulator::energy() const { return impl_->runner->energy(); }
std::string Simulator::contact_name(const Contact& c) const { return impl_->runner->contact_name(c); }
const std::vector<std::string>& Simulator::warnings() const { return impl_->runner->contact_warnings(); }
SensitivityReport Simulator::sensitivity() const { return impl_->runner->sensitivity(); }

}  // namespace plume
