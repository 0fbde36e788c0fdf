// rosenbrock4 with dense output on Eigen vectors (odeint works on ublas
// inside; the state is copied at the boundary).
#include "sim/rosenbrock_stepper.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <boost/numeric/odeint/stepper/rosenbrock4.hpp>
#include <boost/numeric/odeint/stepper/rosenbrock4_controller.hpp>
#include <boost/numeric/odeint/stepper/rosenbrock4_dense_output.hpp>

namespace plume::detail {

namespace {

namespace odeint = boost::numeric::odeint;
namespace ublas = boost::numeric::ublas;
using UVector = ublas::vector<double>;
using UMatrix = ublas::matrix<double>;
using Controller = odeint::rosenbrock4_controller<odeint::rosenbrock4<double>>;
using Dense = odeint::rosenbrock4_dense_output<Controller>;

void to_eigen(const UVector& u, VectorX& e) {
  e.resize(static_cast<Eigen::Index>(u.size()));
  for (std::size_t i = 0; i < u.size(); ++i) e(static_cast<Eigen::Index>(i)) = u[i];
}

void to_ublas(const VectorX& e, UVector& u) {
  u.resize(static_cast<std::size_t>(e.size()), false);
  for (Eigen::Index i = 0; i < e.size(); ++i) u[static_cast<std::size_t>(i)] = e(i);
}

class Rosenbrock4Dense final : public DenseStepper {
 public:
  Rosenbrock4Dense(double abs_tol, double rel_tol, double max_dt, OdeJacobian jacobian)
      : abs_tol_(abs_tol), rel_tol_(rel_tol), max_dt_(max_dt), jacobian_(std::move(jacobian)),
        stepper_(std::make_unique<Dense>(Controller(abs_tol, rel_tol, max_dt))) {}

  void initialize(const VectorX& y, double t, double dt) override {
    // odeint sizes its work arrays once: a state of another size needs a new stepper.
    if (y.size() != size_) {
      stepper_ = std::make_unique<Dense>(Controller(abs_tol_, rel_tol_, max_dt_));
      size_ = y.size();
    }
    to_ublas(y, u_);
    stepper_->initialize(u_, t, dt);
    current_ = y;
  }

  std::pair<double, double> do_step(OdeSystem& system) override {
    // rosenbrock4 evaluates f at the step's start and right after that the
    // Jacobian there: the finite differences reuse the last evaluation.
    bool have_last = false, have_jacobian = false;
    double t_jacobian = 0.0;
    auto deriv = [&](const UVector& x, UVector& dxdt, double t) {
      to_eigen(x, y0_);
      system(y0_, f0_, t);
      to_ublas(f0_, dxdt);
      t0_ = t;
      have_last = true;
    };
    auto jacobi = [&](const UVector& x, UMatrix& J, double t, UVector& dfdt) {
      to_eigen(x, ey_);
      if (!have_last || t != t0_ || !(ey_.array() == y0_.array()).all()) {
        system(ey_, f0_, t);
        y0_ = ey_;
        t0_ = t;
      }
      // A rejected attempt retries from the same point: same Jacobian.
      if (!have_jacobian || t != t_jacobian || !(ey_.array() == y_jacobian_.array()).all()) {
        if (jacobian_) {
          jacobian_(ey_, t, f0_, ej_, edfdt_);
        } else {
          finite_difference_jacobian(system, ey_, t, f0_, ej_, edfdt_);
        }
        have_jacobian = true;
        t_jacobian = t;
        y_jacobian_ = ey_;
      }
      const std::size_t n = x.size();
      J.resize(n, n, false);
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) J(i, j) = ej_(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
      }
      to_ublas(edfdt_, dfdt);
    };
    const auto span = stepper_->do_step(std::make_pair(deriv, jacobi));
    to_eigen(stepper_->current_state(), current_);
    return span;
  }

  void calc_state(double t, VectorX& y) override {
    out_.resize(stepper_->current_state().size(), false);
    stepper_->calc_state(t, out_);
    to_eigen(out_, y);
  }
  const VectorX& current_state() const override { return current_; }
  double current_time() const override { return stepper_->current_time(); }
  double previous_time() const override { return stepper_->previous_time(); }
  double current_time_step() const override { return stepper_->current_time_step(); }

 private:
  double abs_tol_, rel_tol_, max_dt_;
  OdeJacobian jacobian_;
  std::unique_ptr<Dense> stepper_;  // odeint's steppers are not assignable
  Eigen::Index size_ = -1;
  UVector u_, out_;
  VectorX current_, ey_, y0_, f0_, edfdt_, y_jacobian_;
  double t0_ = 0.0;
  MatrixX ej_;
};

}  // namespace

void finite_difference_jacobian(OdeSystem& system, const VectorX& y, double t, const VectorX& f, MatrixX& J,
                                VectorX& dfdt, const VectorX& scale) {
  const Eigen::Index n = y.size();
  const double root_eps = std::sqrt(std::numeric_limits<double>::epsilon());
  J.resize(n, n);
  VectorX yp = y, fp(n);
  for (Eigen::Index j = 0; j < n; ++j) {
    const double s = scale.size() == n ? scale(j) : 1e-3;
    const double h = root_eps * std::max(std::abs(y(j)), s);
    const double yj = y(j);
    yp(j) = yj + h;
    const double dh = yp(j) - yj;  // the step actually represented
    system(yp, fp, t);
    J.col(j) = (fp - f) / dh;
    yp(j) = yj;
  }
  const double ht = root_eps * std::max(std::abs(t), 1e-3);
  const double tp = t + ht;
  system(y, fp, tp);
  dfdt = (fp - f) / (tp - t);
}

std::unique_ptr<DenseStepper> make_rosenbrock4_stepper(double abs_tol, double rel_tol, double max_dt,
                                                       OdeJacobian jacobian) {
  return std::make_unique<Rosenbrock4Dense>(abs_tol, rel_tol, max_dt, std::move(jacobian));
}

}  // namespace plume::detail
