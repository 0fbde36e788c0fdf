#include "inertia_check.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <sstream>

namespace plume::detail {

namespace {
double tolerance(const Mat3& Ic) { return 1e-9 * Ic.cwiseAbs().maxCoeff() + 1e-15; }
}  // namespace

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
  const double tol = tolerance(Ic);
  if ((Ic - Ic.transpose()).cwiseAbs().maxCoeff() > tol) return "inertia tensor is not symmetric";
  const Vec3 p = principal_inertia(Ic).moments;
  if (p(0) < -tol) {
    why << "inertia tensor is not positive semi-definite (principal moments " << p(0) << ", "
        << p(1) << ", " << p(2) << ")";
    return why.str();
  }
  return {};
}

PrincipalInertia principal_inertia(const Mat3& Ic) {
  const Eigen::SelfAdjointEigenSolver<Mat3> eig(Ic);
  return {eig.eigenvalues(), eig.eigenvectors()};
}

double triangle_deficit(const Vec3& p) {
  const double tol = 1e-9 * p.cwiseAbs().maxCoeff() + 1e-15;
  const double deficit = p(2) - p(0) - p(1);
  return deficit > tol ? deficit : 0.0;
}

}  // namespace plume::detail
