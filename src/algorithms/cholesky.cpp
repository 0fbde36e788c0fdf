// Sparse H = Lᵀ D L factorisation and solves (RBDA §6.5, Tables 6.3–6.4).
#include "plume/algorithms/cholesky.hpp"

#include <sstream>

#include "plume/error.hpp"

namespace plume {

namespace unchecked {

// In place on LD = H: for k = n−1 … 0, eliminate row k into its ancestors
// (only ancestors of k hold non-zeros in row k, so nothing fills in).
const MatrixX& ltdl(const Model& model, Data& data) {
  MatrixX& A = data.LD;
  A = data.H;
  const int n = model.nv();
  for (int k = n - 1; k >= 0; --k) {
    const double dk = A(k, k);
    for (int i = model.dof_parent(k); i >= 0; i = model.dof_parent(i)) {
      const double a = A(k, i) / dk;
      for (int j = i; j >= 0; j = model.dof_parent(j)) A(i, j) -= a * A(k, j);
      A(k, i) = a;
    }
  }
  return A;
}

}  // namespace unchecked

const MatrixX& ltdl(const Model& model, Data& data) {
  check_data(model, data);
  const MatrixX& A = unchecked::ltdl(model, data);
  for (int k = 0; k < model.nv(); ++k) {
    if (!(A(k, k) > 0.0)) {
      std::ostringstream msg;
      msg << "ltdl: pivot " << k << " is " << A(k, k) << ": H is not positive definite (call crba first?)";
      throw Error(msg.str());
    }
  }
  return A;
}

void ltdl_solve_Lt(const Model& model, const Data& data, Eigen::Ref<MatrixX> X) {
  const MatrixX& A = data.LD;
  for (int i = model.nv() - 1; i >= 0; --i) {
    for (int j = model.dof_parent(i); j >= 0; j = model.dof_parent(j)) X.row(j) -= A(i, j) * X.row(i);
  }
}

void ltdl_solve_L(const Model& model, const Data& data, Eigen::Ref<MatrixX> X) {
  const MatrixX& A = data.LD;
  for (int i = 0; i < model.nv(); ++i) {
    for (int j = model.dof_parent(i); j >= 0; j = model.dof_parent(j)) X.row(i) -= A(i, j) * X.row(j);
  }
}

void ltdl_solve(const Model& model, const Data& data, Eigen::Ref<VectorX> x) {
  const MatrixX& A = data.LD;
  const int n = model.nv();
  // Lᵀ z = x (descendants first), then D, then L y = z (ancestors first).
  for (int i = n - 1; i >= 0; --i) {
    const double xi = x(i);
    for (int j = model.dof_parent(i); j >= 0; j = model.dof_parent(j)) x(j) -= A(i, j) * xi;
  }
  for (int i = 0; i < n; ++i) x(i) /= A(i, i);
  for (int i = 0; i < n; ++i) {
    double xi = x(i);
    for (int j = model.dof_parent(i); j >= 0; j = model.dof_parent(j)) xi -= A(i, j) * x(j);
    x(i) = xi;
  }
}

void ltdl_solve_columns(const Model& model, const Data& data, Eigen::Ref<MatrixX> X) {
  ltdl_solve_Lt(model, data, X);
  for (int i = 0; i < model.nv(); ++i) X.row(i) /= data.LD(i, i);
  ltdl_solve_L(model, data, X);
}

}  // namespace plume
