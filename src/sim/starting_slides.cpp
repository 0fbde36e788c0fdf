// Newton's method on the directions of contacts that start to slide from
// rest (sim/starting_slides.hpp).
#include "sim/starting_slides.hpp"

#include <cmath>
#include <limits>

#include <Eigen/QR>

namespace plume::detail {

bool coulomb_starting_directions(VectorX& angle, double max_turn, const StartingSlideResiduals& residuals) {
  const Eigen::Index n = angle.size();
  if (n == 0) return true;
  const VectorX start = angle;
  VectorX r(n), r1(n), step(n);
  MatrixX J(n, n);
  double previous = std::numeric_limits<double>::infinity();
  bool converged = false;
  for (int iteration = 0; iteration < 20; ++iteration) {
    const double scale = residuals(angle, r, false);
    if (!(scale > 1e-8) || !r.allFinite()) break;
    const double residual = r.cwiseAbs().maxCoeff();
    if (residual <= 1e-9 || (residual > 0.5 * previous && residual <= 1e-6)) {
      converged = true;
      break;
    }
    if (!(residual < previous)) break;
    previous = residual;
    const double delta = 1e-7;
    for (Eigen::Index j = 0; j < n; ++j) {
      angle(j) += delta;
      residuals(angle, r1, true);
      angle(j) -= delta;
      J.col(j) = (r1 - r) / delta;
    }
    step = J.colPivHouseholderQr().solve(r);
    if (!step.allFinite()) break;
    // Halve the step until the residual falls; the evaluation that decides
    // is then the next iteration's (not a probe).
    for (int halving = 0; halving < 8; ++halving) {
      angle -= step;
      const double trial = residuals(angle, r1, true);
      if (trial > 1e-8 && r1.allFinite() && r1.cwiseAbs().maxCoeff() < residual) break;
      angle += step;
      step *= 0.5;
    }
  }
  const double two_pi = 2.0 * std::acos(-1.0);
  for (Eigen::Index i = 0; i < n && converged; ++i) {
    converged = std::abs(std::remainder(angle(i) - start(i), two_pi)) <= max_turn;
  }
  return converged;
}

}  // namespace plume::detail
