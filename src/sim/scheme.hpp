#pragma once
// The schemes behind plume::Simulator. Each runs a World forward under
// SimulationOptions and reports through the same Recorder and result types;
// Simulator picks one by SimulationOptions::scheme.

#include <memory>
#include <string>
#include <vector>

#include "plume/error.hpp"
#include "plume/sim/simulator.hpp"

namespace plume::detail {

class SchemeRunner {
 public:
  virtual ~SchemeRunner() = default;
  virtual void set_controller(ControllerFunction controller, double period) = 0;
  /// Advances to `until` or a failure; may be called again to continue.
  virtual SimulationResult run_until(double until, Recorder* recorder) = 0;
  virtual double time() const = 0;
  virtual const VectorX& q() const = 0;
  virtual const VectorX& v() const = 0;
  virtual const World& world() const = 0;
  virtual const SimulationOptions& options() const = 0;
  /// The contacts the scheme currently treats as touching.
  virtual const std::vector<Contact>& current_contacts() const = 0;
  /// Kinetic + potential energy of the current state.
  virtual double energy() = 0;
  /// The name written to events.csv ("shape_a|shape_b#feature", "limit:joint:side").
  virtual std::string contact_name(const Contact& c) const = 0;
  /// The contact detector's warnings (shapes and pairs it leaves out).
  virtual const std::vector<std::string>& contact_warnings() const = 0;
  /// The state-transition matrix (SimulationOptions::sensitivity, event-driven only).
  virtual SensitivityReport sensitivity() const {
    throw Error("no sensitivity: set SimulationOptions::sensitivity (event-driven scheme only)");
  }
};

std::unique_ptr<SchemeRunner> make_event_driven(World world, const SimulationOptions& options);
std::unique_ptr<SchemeRunner> make_compliant(World world, const SimulationOptions& options);
std::unique_ptr<SchemeRunner> make_time_stepping(World world, const SimulationOptions& options);

}  // namespace plume::detail
