// The Bogacki–Shampine 3(2) dense stepper against the harmonic oscillator's
// closed form: third order in fixed steps, the error control holding the
// global error near the tolerance, the cubic Hermite dense output within its
// interpolation bound, one evaluation at a start and three per step after.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/dense_stepper.hpp"

namespace plume::detail {
namespace {

// ẏ = (y₁, −y₀), y(0) = (0, 1): y = (sin t, cos t).
struct Oscillator {
  long evaluations = 0;
  OdeSystem system() {
    return [this](const VectorX& y, VectorX& dy, double) {
      ++evaluations;
      dy.resize(2);
      dy << y(1), -y(0);
    };
  }
};

VectorX start() {
  VectorX y(2);
  y << 0.0, 1.0;
  return y;
}

double error_at(const VectorX& y, double t) { return std::max(std::abs(y(0) - std::sin(t)), std::abs(y(1) - std::cos(t))); }

// Fixed steps h (tolerances that never reject, max_dt = h) to t = 1.
double fixed_step_error(double h, long* evaluations = nullptr) {
  auto s = make_dense_stepper(Integrator::BogackiShampine, 1e3, 1e3, h);
  Oscillator o;
  OdeSystem f = o.system();
  s->initialize(start(), 0.0, h);
  const int n = static_cast<int>(std::lround(1.0 / h));
  for (int k = 0; k < n; ++k) s->do_step(f);
  EXPECT_NEAR(s->current_time(), 1.0, 1e-12);
  if (evaluations) *evaluations = o.evaluations;
  return error_at(s->current_state(), s->current_time());
}

TEST(BogackiShampine, ThirdOrderInFixedSteps) {
  long evaluations = 0;
  const double e1 = fixed_step_error(0.02, &evaluations), e2 = fixed_step_error(0.01), e3 = fixed_step_error(0.005);
  // FSAL: one evaluation at the start, three per step.
  EXPECT_EQ(evaluations, 1 + 3 * 50);
  EXPECT_NEAR(std::log2(e1 / e2), 3.0, 0.1);
  EXPECT_NEAR(std::log2(e2 / e3), 3.0, 0.1);
}

TEST(BogackiShampine, ErrorControlAndDenseOutput) {
  for (const double tol : {1e-6, 1e-9}) {
    auto s = make_dense_stepper(Integrator::BogackiShampine, tol, tol, 0.1);
    Oscillator o;
    OdeSystem f = o.system();
    s->initialize(start(), 0.0, 1e-3);
    long steps = 0;
    double worst_end = 0.0;
    VectorX y;
    while (s->current_time() < 5.0) {
      const double e0 = error_at(s->current_state(), s->current_time());
      const auto span = s->do_step(f);
      ++steps;
      const double h = span.second - span.first;
      const double e1 = error_at(s->current_state(), s->current_time());
      worst_end = std::max(worst_end, e1);
      // Cubic Hermite through the step's ends and derivatives: the
      // interpolation error is at most h⁴/384 max|y⁗| (= 1 here) plus the
      // errors the ends and their derivatives carry.
      for (const double th : {0.25, 0.5, 0.75}) {
        s->calc_state(span.first + th * h, y);
        EXPECT_LE(error_at(y, span.first + th * h), std::pow(h, 4) / 384.0 + 2.0 * std::max(e0, e1) + 1e-15);
      }
      s->calc_state(span.second, y);
      EXPECT_LE((y - s->current_state()).cwiseAbs().maxCoeff(), 1e-15);
    }
    // The local error per step is held to ≈ tol; over 5 s of an
    // oscillation the global error stays within a few hundred tol.
    EXPECT_LT(worst_end, 300.0 * tol) << "tol " << tol;
    EXPECT_GT(worst_end, 1e-3 * tol) << "tol " << tol;
    EXPECT_LE(o.evaluations, 1 + 3 * steps + 3 * 20) << "few rejected steps";
    EXPECT_EQ((o.evaluations - 1) % 3, 0);
  }
}

}  // namespace
}  // namespace plume::detail
