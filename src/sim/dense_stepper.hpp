#pragma once
// A type-erased Boost.Odeint dense-output stepper over Eigen state vectors,
// so that odeint (slow to compile) lives in one translation unit.

#include <functional>
#include <memory>
#include <utility>

#include "plume/sim/simulator.hpp"

namespace plume::detail {

using OdeSystem = std::function<void(const VectorX& y, VectorX& dydt, double t)>;

class DenseStepper {
 public:
  virtual ~DenseStepper() = default;
  /// Starts at (y, t) with a first step dt; computes the derivative afresh
  /// (call after every jump of the state or of the right-hand side).
  virtual void initialize(const VectorX& y, double t, double dt) = 0;
  /// One accepted step; returns (previous_time, current_time).
  virtual std::pair<double, double> do_step(OdeSystem& system) = 0;
  /// The dense output at t ∈ [previous_time, current_time].
  virtual void calc_state(double t, VectorX& y) = 0;
  virtual const VectorX& current_state() const = 0;
  virtual double current_time() const = 0;
  virtual double previous_time() const = 0;
  virtual double current_time_step() const = 0;
};

/// dopri5 (make_dense_output), Bulirsch–Stoer or Bogacki–Shampine 3(2) with the given tolerances.
std::unique_ptr<DenseStepper> make_dense_stepper(Integrator integrator, double abs_tol, double rel_tol, double max_dt);

}  // namespace plume::detail
