#pragma once
// Boost.Odeint's rosenbrock4 with its dense output behind the DenseStepper
// interface (Eigen state vectors outside, ublas inside), in its own
// translation unit: ublas and the stiff stepper are slow to compile.

#include <functional>
#include <memory>

#include "sim/dense_stepper.hpp"

namespace plume::detail {

/// The Jacobian J = ∂f/∂y (n × n, resized by the callee) and ∂f/∂t of the
/// right-hand side at (y, t), where f = f(y, t) has just been evaluated.
using OdeJacobian = std::function<void(const VectorX& y, double t, const VectorX& f, MatrixX& J, VectorX& dfdt)>;

/// rosenbrock4_dense_output(rosenbrock4_controller(abs_tol, rel_tol, max_dt)).
/// Without `jacobian`, J and ∂f/∂t are forward differences of the system
/// passed to do_step (n + 1 extra evaluations per step attempt).
std::unique_ptr<DenseStepper> make_rosenbrock4_stepper(double abs_tol, double rel_tol, double max_dt,
                                                       OdeJacobian jacobian = {});

/// Forward differences of `system` at (y, t) with f = system(y, t):
/// column j with the step √ε·max(|y_j|, scale_j) (scale_j = 1e-3 when
/// `scale` is empty), ∂f/∂t with √ε·max(|t|, 1e-3).
void finite_difference_jacobian(OdeSystem& system, const VectorX& y, double t, const VectorX& f, MatrixX& J,
                                VectorX& dfdt, const VectorX& scale = VectorX());

}  // namespace plume::detail
