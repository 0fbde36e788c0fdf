#include "inertia_check.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <sstream>

namespace plume::detail {

std::string inertia_problem(double mass, const Mat3& Ic) {
  std::ostringstream why;
  if (!std::isfinite(mass)) {
    why << "mass is not a finite number (" << mass << ")";
    return why.str();
  }
  if (!Ic.allFinite()) return "inertia tensor has a non-finite entry";
  if (mass < 0.0) {
    why << "negative mass " << mass << " kg";
    return why.str();
  }
  const double scale = Ic.cwiseAbs().maxCoeff();
  const double tol = 1e-9 * scale + 1e-15;
  if ((Ic - Ic.transpose()).cwiseAbs().maxCoeff() > tol) return "inertia tensor is not symmetric";
  const Eigen::SelfAdjointEigenSolver<Mat3> eig(Ic, Eigen::EigenvaluesOnly);
  const Vec3 p = eig.eigenvalues();  // ascending
  if (p(0) < -tol) {
    why << "inertia tensor is not positive semi-definite (principal moments " << p(0) << ", "
        << p(1) << ", " << p(2) << ")";
    return why.str();
  }
  if (p(0) + p(1) < p(2) - tol) {
    why << "principal moments of inertia " << p(0) << ", " << p(1) << ", " << p(2)
        << " violate the triangle inequality";
    return why.str();
  }
  return {};
}

}  // namespace plume::detail
