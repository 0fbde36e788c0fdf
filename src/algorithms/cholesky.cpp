// Sparse H = Lᵀ D L factorisation and solves (RBDA §6.5, Tables 6.3–6.4).
//
// The ancestors of a dof form a few runs of consecutive indices
// (Model::dof_run_start), so the inner loops of Featherstone's LTDL become
// short contiguous axpy and dot loops over the rows of a row-major factor.
#include "plume/algorithms/cholesky.hpp"

#include <algorithm>
#include <sstream>

#include "plume/error.hpp"
#include "plume/spatial.hpp"
#include "algorithms/scalar_loops.hpp"

namespace plume {

namespace {

// y[j] -= a x[j] for every j in the ancestors of k, k included.
PLUME_SCALAR_LOOPS PLUME_INLINE void axpy_ancestors(const Model& model, int k, double a, const double* x, double* y) {
  for (int e = k; e >= 0;) {
    const int s = model.dof_run_start(e);
    for (int j = s; j <= e; ++j) y[j] -= a * x[j];
    e = model.dof_parent(s);
  }
}

// Σ x[j] y[j] over the strict ancestors of k.
PLUME_SCALAR_LOOPS PLUME_INLINE double dot_ancestors(const Model& model, int k, const double* x, const double* y) {
  double sum = 0.0;
  for (int e = model.dof_parent(k); e >= 0;) {
    const int s = model.dof_run_start(e);
    for (int j = s; j <= e; ++j) sum += x[j] * y[j];
    e = model.dof_parent(s);
  }
  return sum;
}

// x ← L⁻ᵀ x: descendants first; row i of L scatters into x's ancestors of i.
PLUME_SCALAR_LOOPS PLUME_INLINE void solve_Lt(const Model& model, const RowMatrixX& A, double* x) {
  for (int i = model.nv() - 1; i >= 0; --i) {
    const double xi = x[i];
    if (xi != 0.0) {
      const int p = model.dof_parent(i);
      if (p >= 0) axpy_ancestors(model, p, xi, A.data() + i * A.cols(), x);
    }
  }
}

// x ← L⁻¹ x: ancestors first.
PLUME_SCALAR_LOOPS PLUME_INLINE void solve_L(const Model& model, const RowMatrixX& A, double* x) {
  for (int i = 0; i < model.nv(); ++i) x[i] -= dot_ancestors(model, i, A.data() + i * A.cols(), x);
}

}  // namespace

namespace unchecked {

// For k = n−1 … 0, eliminate row k into its ancestors i (Table 6.3):
// H_ij −= (H_ki / H_kk) H_kj for j ≤ i in i's ancestry, then H_ki ← H_ki / H_kk.
PLUME_SCALAR_LOOPS PLUME_FLATTEN const RowMatrixX& ltdl(const Model& model, Data& data) {
  RowMatrixX& A = data.LD;
  const int n = model.nv();
  // H is symmetric: its column-major storage is also its row-major storage.
  std::copy(data.H.data(), data.H.data() + data.H.size(), A.data());
  for (int k = n - 1; k >= 0; --k) {
    double* row_k = A.data() + k * n;
    const double dk = row_k[k];
    for (int e = model.dof_parent(k); e >= 0;) {
      const int s = model.dof_run_start(e);
      for (int i = e; i >= s; --i) {
        const double a = row_k[i] / dk;
        axpy_ancestors(model, i, a, row_k, A.data() + i * n);
        row_k[i] = a;
      }
      e = model.dof_parent(s);
    }
  }
  return A;
}

}  // namespace unchecked

const RowMatrixX& ltdl(const Model& model, Data& data) {
  check_data(model, data);
  unchecked::ltdl(model, data);
  for (int k = 0; k < model.nv(); ++k) {
    if (!(data.LD(k, k) > 0.0)) {
      std::ostringstream msg;
      msg << "ltdl: pivot " << k << " is " << data.LD(k, k) << ": H is not positive definite (call crba first?)";
      throw Error(msg.str());
    }
  }
  return data.LD;
}

void ltdl_solve(const Model& model, const Data& data, Eigen::Ref<VectorX> x) {
  solve_Lt(model, data.LD, x.data());
  for (int i = 0; i < model.nv(); ++i) x[i] /= data.LD(i, i);
  solve_L(model, data.LD, x.data());
}

void ltdl_solve_columns(const Model& model, const Data& data, Eigen::Ref<MatrixX> X) {
  for (Eigen::Index c = 0; c < X.cols(); ++c) ltdl_solve(model, data, X.col(c));
}

void ltdl_solve_Lt(const Model& model, const Data& data, Eigen::Ref<MatrixX> X) {
  for (Eigen::Index c = 0; c < X.cols(); ++c) solve_Lt(model, data.LD, X.col(c).data());
}

void ltdl_solve_Lt_rows(const Model& model, const Data& data, Eigen::Ref<MatrixX> Xt) {
  // Column i of Xt is final once every descendant of dof i is eliminated;
  // only its rows from the first to the last nonzero scatter into the
  // ancestors. Contact rows are nonzero on their own support chains, so a
  // leg dof touches only the rows of that leg's contacts.
  const RowMatrixX& A = data.LD;
  const Eigen::Index rows = Xt.rows(), stride = Xt.outerStride();
  double* X = Xt.data();
  for (int i = model.nv() - 1; i >= 0; --i) {
    const double* xi = X + i * stride;
    Eigen::Index lo = 0, hi = rows;
    while (lo < hi && xi[lo] == 0.0) ++lo;
    while (hi > lo && xi[hi - 1] == 0.0) --hi;
    if (lo == hi) continue;
    const double* Ai = A.data() + static_cast<Eigen::Index>(i) * A.cols();
    for (int e = model.dof_parent(i); e >= 0;) {
      const int s = model.dof_run_start(e);
      for (int j = s; j <= e; ++j) {
        const double a = Ai[j];
        double* xj = X + j * stride;
        for (Eigen::Index r = lo; r < hi; ++r) xj[r] -= a * xi[r];
      }
      e = model.dof_parent(s);
    }
  }
}

namespace {

// X ← L⁻¹ X on right-hand sides stored as the rows of Xt, root first: column
// i takes its ancestors' final columns, on rows [first_row(i), rows).
template <class FirstRow>
void solve_L_rows(const Model& model, const RowMatrixX& A, Eigen::Ref<MatrixX> Xt, FirstRow first_row) {
  const Eigen::Index rows = Xt.rows(), stride = Xt.outerStride();
  double* X = Xt.data();
  for (int i = 0; i < model.nv(); ++i) {
    double* xi = X + i * stride;
    const double* Ai = A.data() + static_cast<Eigen::Index>(i) * A.cols();
    const Eigen::Index r0 = first_row(i);
    for (int e = model.dof_parent(i); e >= 0;) {
      const int s = model.dof_run_start(e);
      for (int j = s; j <= e; ++j) {
        const double a = Ai[j];
        const double* xj = X + j * stride;
        for (Eigen::Index r = r0; r < rows; ++r) xi[r] -= a * xj[r];
      }
      e = model.dof_parent(s);
    }
  }
}

}  // namespace

void ltdl_solve_L_rows(const Model& model, const Data& data, Eigen::Ref<MatrixX> Xt) {
  solve_L_rows(model, data.LD, Xt, [](int) { return Eigen::Index{0}; });
}

void ltdl_solve_rows(const Model& model, const Data& data, Eigen::Ref<MatrixX> Xt) {
  ltdl_solve_Lt_rows(model, data, Xt);
  for (int i = 0; i < model.nv(); ++i) Xt.col(i) *= 1.0 / data.LD(i, i);
  ltdl_solve_L_rows(model, data, Xt);
}

void ltdl_inverse(const Model& model, const Data& data, Eigen::Ref<MatrixX> Hinv) {
  // Row r of Hinv is the solve for e_r (H⁻¹ is symmetric). After L⁻ᵀ and
  // D⁻¹, column i is nonzero on the rows of i's subtree only (a contiguous
  // range from i on, in depth-first numbering), which ltdl_solve_Lt_rows
  // skips past. The L⁻¹ half forms the rows r ≥ i of column i only: they
  // need the rows r ≥ i of the ancestors' columns j < i, all formed before;
  // the upper triangle is mirrored at the end.
  const int n = model.nv();
  Hinv.setIdentity();
  ltdl_solve_Lt_rows(model, data, Hinv);
  for (int i = 0; i < n; ++i) Hinv.col(i) *= 1.0 / data.LD(i, i);
  solve_L_rows(model, data.LD, Hinv, [](int i) { return Eigen::Index{i}; });
  const Eigen::Index stride = Hinv.outerStride();
  double* X = Hinv.data();
  for (int i = 0; i < n; ++i) {
    for (int r = i + 1; r < n; ++r) X[r * stride + i] = X[i * stride + r];
  }
}

void ltdl_solve_L(const Model& model, const Data& data, Eigen::Ref<MatrixX> X) {
  for (Eigen::Index c = 0; c < X.cols(); ++c) solve_L(model, data.LD, X.col(c).data());
}

}  // namespace plume
