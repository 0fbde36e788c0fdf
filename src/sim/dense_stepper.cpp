// Boost.Odeint dense-output steppers on Eigen vectors (vector_space_algebra).
#include "sim/dense_stepper.hpp"

#include <boost/numeric/odeint.hpp>
#include <boost/numeric/odeint/external/eigen/eigen.hpp>

#include <algorithm>
#include <cmath>
#include <string>

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


// Bogacki–Shampine 3(2): three new evaluations per step (the last stage is
// the next step's first), the error from the embedded second-order
// solution, and the cubic Hermite interpolant through the step's ends and
// their derivatives as dense output (third order, like the method). The
// error norm and step-size control follow odeint's controlled steppers:
// max over i of |e_i| / (abs_tol + rel_tol (|x_i| + h |ẋ_i|)).
class BogackiShampineDense final : public DenseStepper {
 public:
  BogackiShampineDense(double abs_tol, double rel_tol, double max_dt) : abs_(abs_tol), rel_(rel_tol), max_dt_(max_dt) {}
  void initialize(const VectorX& y, double t, double dt) override {
    const Eigen::Index n = y.size();
    x_ = y;
    for (VectorX* w : {&f_, &x_old_, &f_old_, &x_new_, &stage_, &k2_, &k3_, &k4_}) w->resize(n);
    t_ = t;
    t_old_ = t;
    dt_ = dt;
    have_derivative_ = false;
  }
  std::pair<double, double> do_step(OdeSystem& system) override {
    if (!have_derivative_) {
      system(x_, f_, t_);
      have_derivative_ = true;
    }
    for (int rejected = 0;; ++rejected) {
      if (rejected >= 500) throw Error("bogacki-shampine: 500 rejected steps in a row");
      const double h = dt_;
      if (!(h > 0.0) || t_ + h == t_) throw Error("bogacki-shampine: the step size fell to " + std::to_string(h));
      stage_ = x_ + (0.5 * h) * f_;
      system(stage_, k2_, t_ + 0.5 * h);
      stage_ = x_ + (0.75 * h) * k2_;
      system(stage_, k3_, t_ + 0.75 * h);
      x_new_ = x_ + h * ((2.0 / 9.0) * f_ + (1.0 / 3.0) * k2_ + (4.0 / 9.0) * k3_);
      system(x_new_, k4_, t_ + h);
      // Third- minus second-order solution (7/24, 1/4, 1/3, 1/8).
      double err = 0.0;
      for (Eigen::Index i = 0; i < x_.size(); ++i) {
        const double e = h * ((-5.0 / 72.0) * f_(i) + (1.0 / 12.0) * k2_(i) + (1.0 / 9.0) * k3_(i) - 0.125 * k4_(i));
        err = std::max(err, std::abs(e) / (abs_ + rel_ * (std::abs(x_(i)) + h * std::abs(f_(i)))));
      }
      if (!(err <= 1.0)) {
        // odeint's decrease rule: at most a factor 5 per rejection.
        dt_ = h * (std::isfinite(err) ? std::max(0.2, 0.9 * std::pow(err, -1.0 / 3.0)) : 0.2);
        continue;
      }
      x_old_.swap(x_);
      f_old_.swap(f_);
      x_.swap(x_new_);
      f_.swap(k4_);
      t_old_ = t_;
      t_ += h;
      // odeint's increase rule: grow (at most 5×) only when err < 0.5.
      const double grow = err < 0.5 ? std::min(5.0, 0.9 * std::pow(std::max(err, 1e-12), -1.0 / 3.0)) : 1.0;
      dt_ = std::min(h * grow, max_dt_);
      return {t_old_, t_};
    }
  }
  void calc_state(double t, VectorX& y) override {
    const double h = t_ - t_old_;
    y.resize(x_.size());
    if (!(h > 0.0)) {
      y = x_;
      return;
    }
    const double s = (t - t_old_) / h, s2 = s * s, s3 = s2 * s;
    const double h00 = 2.0 * s3 - 3.0 * s2 + 1.0, h10 = s3 - 2.0 * s2 + s, h01 = 3.0 * s2 - 2.0 * s3, h11 = s3 - s2;
    y = h00 * x_old_ + (h10 * h) * f_old_ + h01 * x_ + (h11 * h) * f_;
  }
  const VectorX& current_state() const override { return x_; }
  double current_time() const override { return t_; }
  double previous_time() const override { return t_old_; }
  double current_time_step() const override { return dt_; }

 private:
  double abs_, rel_, max_dt_;
  VectorX x_, f_, x_old_, f_old_, x_new_, stage_, k2_, k3_, k4_;
  double t_ = 0.0, t_old_ = 0.0, dt_ = 0.0;
  bool have_derivative_ = false;
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
    case Integrator::BogackiShampine:
      return std::make_unique<BogackiShampineDense>(abs_tol, rel_tol, max_dt);
    case Integrator::Rosenbrock4:
      throw Error("the rosenbrock4 integrator applies to the compliant scheme only");
  }
  throw Error("unknown integrator");
}

}  // namespace plume::detail
