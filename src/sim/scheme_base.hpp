#pragma once
// The set-up and bookkeeping that the time-stepping and compliant schemes
// share: the world, its options and model data, the contact catalogue
// (detector, per-pair parameters, names), the state (t, q, v), the
// controller's zero-order hold, the statistics, the recorder and the end of
// a run. Each scheme derives from SchemeBase and adds its own method.

#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include "sim/scheme.hpp"
#include "sim/scheme_common.hpp"

namespace plume::detail {

class SchemeBase : public SchemeRunner {
 public:
  /// Contacts are detected up to `detection_margin`; the options are checked
  /// (validate_scheme_options) and the state starts at the world's (q0, v0).
  SchemeBase(World w, const SimulationOptions& o, double detection_margin);

  void set_controller(ControllerFunction f, double period) override;
  double time() const override { return t_; }
  const VectorX& q() const override { return q_; }
  const VectorX& v() const override { return v_; }
  const World& world() const override { return world_; }
  const SimulationOptions& options() const override { return opt_; }
  double energy() override { return energy_of(q_, v_); }
  std::string contact_name(const Contact& c) const override { return cat_.name_of(world_.model(), c); }
  const std::vector<std::string>& contact_warnings() const override { return cat_.detector.warnings(); }
  /// advance() up to `until`, then the run's end as both schemes have it:
  /// the output at the end time when the last step stopped there, the
  /// status "finished", an Error as a failure, finish().
  SimulationResult run_until(double until, Recorder* recorder) final;

 protected:
  /// The scheme's own loop up to `until`: true when it got there, false with
  /// the status and message in `result`.
  virtual bool advance(double until, SimulationResult& result) = 0;
  /// One output row (trajectory, contacts) of the current state at t_.
  virtual void record_current() = 0;
  /// " (contacts: …)" for messages, or "".
  virtual std::string contact_summary() const = 0;

  const Model& model() const { return world_.model(); }

  /// Kinetic + potential energy at (q, v), q normalised first.
  double energy_of(const VectorX& q, const VectorX& v);
  /// τ from the controller at (t_, q, v_) into tau_; the next sample one period on.
  bool sample_controller_at(const VectorX& q, SimulationResult& result);
  /// One events.csv row (and the event count).
  void emit(double time, EventKind kind, const Contact& c, double pre, double post, double impulse);
  /// Sets the status and message; returns false.
  bool fail(SimulationResult& result, SimulationStatus status, const std::string& message);
  /// The run's end: time, statistics, final energy, wall time.
  SimulationResult finish(SimulationResult& result, std::chrono::steady_clock::time_point wall0);

  World world_;
  SimulationOptions opt_;
  Data data_;
  ContactCatalogue cat_;

  double t_ = 0.0;
  VectorX q_, v_, tau_, tau_applied_, qn_;
  ControllerFunction controller_;
  double period_ = 0.0, next_sample_ = std::numeric_limits<double>::infinity();
  SimulationStatistics stats_;
  Recorder* rec_ = nullptr;
  double next_output_ = 0.0;
  bool initialised_ = false;
};

}  // namespace plume::detail
