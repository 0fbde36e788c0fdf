// Boost.Odeint dense-output steppers on Eigen vectors (vector_space_algebra).
#include "sim/dense_stepper.hpp"

#include <boost/numeric/odeint.hpp>
#include <boost/numeric/odeint/external/eigen/eigen.hpp>

#include "plume/error.hpp"

namespace plume::detail {

namespace {

namespace odeint = boost::numeric::odeint;

template <class Stepper>
class OdeintDense final : public DenseStepper {
 public:
  explicit OdeintDense(Stepper s) : stepper_(std::move(s)) {}
  void initialize(const VectorX& y, double t, double dt) override { stepper_.initialize(y, t, dt); }
  std::pair<double, double> do_step(OdeSystem& system) override { return stepper_.do_step(std::ref(system)); }
  void calc_state(double t, VectorX& y) override {
    y.resize(stepper_.current_state().size());
    stepper_.calc_state(t, y);
  }
  const VectorX& current_state() const override { return stepper_.current_state(); }
  double current_time() const override { return stepper_.current_time(); }
  double previous_time() const override { return stepper_.previous_time(); }
  double current_time_step() const override { return stepper_.current_time_step(); }

 private:
  Stepper stepper_;
};

using Dopri5 = odeint::runge_kutta_dopri5<VectorX, double, VectorX, double, odeint::vector_space_algebra>;
using BulirschStoer = odeint::bulirsch_stoer_dense_out<VectorX, double, VectorX, double, odeint::vector_space_algebra>;

}  // namespace

std::unique_ptr<DenseStepper> make_dense_stepper(Integrator integrator, double abs_tol, double rel_tol, double max_dt) {
  switch (integrator) {
    case Integrator::Dopri5: {
      auto s = odeint::make_dense_output(abs_tol, rel_tol, max_dt, Dopri5());
      return std::make_unique<OdeintDense<decltype(s)>>(std::move(s));
    }
    case Integrator::BulirschStoer:
      return std::make_unique<OdeintDense<BulirschStoer>>(BulirschStoer(abs_tol, rel_tol, 1.0, 1.0, max_dt));
    case Integrator::Rosenbrock4:
      throw Error("the rosenbrock4 integrator applies to the compliant scheme only");
  }
  throw Error("unknown integrator");
}

}  // namespace plume::detail
