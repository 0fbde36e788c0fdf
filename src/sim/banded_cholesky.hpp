#pragma once
// A dense Cholesky factorisation that keeps a band: the contact matrices of
// stacks (each body coupled to its neighbours only). Used by the
// time-stepping fast path and the event-driven constrained dynamics.
#include <algorithm>
#include <cmath>
#include <vector>

#include "plume/spatial.hpp"

namespace plume::detail {

// Cholesky factorisation A = L Lᵀ of a symmetric positive definite matrix
// given by its lower triangle (overwritten by L; the strict upper triangle
// is left alone), and solves with it. Right-looking and column by column,
// skipping the exact zeros below each column's last nonzero row: the
// contact matrices of a stack (each body coupled to its neighbours only)
// are banded and keep their band.
class BandedCholesky {
 public:
  // False at a pivot that is not above `relative` times its column's
  // diagonal before elimination (a dependent column), with A part-factored.
  bool factor(MatrixX& A, double relative = 0.0) {
    const int n = static_cast<int>(A.rows());
    last_.assign(static_cast<std::size_t>(n), 0);
    diagonal_ = A.diagonal();
    for (int j = 0; j < n; ++j) {
      int l = n - 1;
      while (l > j && A(l, j) == 0.0) --l;
      last_[static_cast<std::size_t>(j)] = l;
    }
    for (int k = 0; k < n; ++k) {
      const double pivot = A(k, k);
      if (!(pivot > relative * diagonal_(k)) || !(pivot > 0.0)) return false;
      const double lkk = std::sqrt(pivot);
      double* ck = A.col(k).data();
      const int lk = last_[static_cast<std::size_t>(k)];
      ck[k] = lkk;
      for (int i = k + 1; i <= lk; ++i) ck[i] /= lkk;
      for (int j = k + 1; j <= lk; ++j) {
        const double ljk = ck[j];
        if (ljk == 0.0) continue;
        double* cj = A.col(j).data();
        for (int i = j; i <= lk; ++i) cj[i] -= ljk * ck[i];
        int& lj = last_[static_cast<std::size_t>(j)];
        lj = std::max(lj, lk);
      }
    }
    return true;
  }

  // x ← A⁻¹ x with the factor L in A.
  void solve(const MatrixX& L, VectorX& x) const {
    const int n = static_cast<int>(L.rows());
    for (int k = 0; k < n; ++k) {
      const double* ck = L.col(k).data();
      x(k) /= ck[k];
      const double xk = x(k);
      for (int i = k + 1, lk = last_[static_cast<std::size_t>(k)]; i <= lk; ++i) x(i) -= ck[i] * xk;
    }
    for (int k = n - 1; k >= 0; --k) {
      const double* ck = L.col(k).data();
      double sum = x(k);
      for (int i = k + 1, lk = last_[static_cast<std::size_t>(k)]; i <= lk; ++i) sum -= ck[i] * x(i);
      x(k) = sum / ck[k];
    }
  }

 private:
  std::vector<int> last_;  // last_[j]: the last row of column j's nonzeros; fill stays inside it
  VectorX diagonal_;
};

// P += Σ_r winv_r k_r k_rᵀ over the first `rows` columns k_r of K (nv × ·),
// lower triangle only; three columns at a time (a sticking contact's normal
// and tangents share their nonzero dofs), each over its nonzero rows.
// `winv` null: all weights 1.
inline void add_column_products(const MatrixX& K, int rows, const double* winv, MatrixX& P) {
  const int nv = static_cast<int>(K.rows());
  for (int r = 0; r < rows;) {
    const int group = std::min(3, rows - r);
    const double* c0 = K.col(r).data();
    const double* c1 = group > 1 ? K.col(r + 1).data() : c0;
    const double* c2 = group > 2 ? K.col(r + 2).data() : c0;
    const double w0 = winv ? winv[r] : 1.0;
    const double w1 = group > 1 ? (winv ? winv[r + 1] : 1.0) : 0.0;
    const double w2 = group > 2 ? (winv ? winv[r + 2] : 1.0) : 0.0;
    int lo = 0, hi = nv;
    while (lo < hi && c0[lo] == 0.0 && c1[lo] == 0.0 && c2[lo] == 0.0) ++lo;
    while (hi > lo && c0[hi - 1] == 0.0 && c1[hi - 1] == 0.0 && c2[hi - 1] == 0.0) --hi;
    for (int j = lo; j < hi; ++j) {
      const double a0 = w0 * c0[j], a1 = w1 * c1[j], a2 = w2 * c2[j];
      double* pj = P.col(j).data();
      for (int i = j; i < hi; ++i) pj[i] += a0 * c0[i] + a1 * c1[i] + a2 * c2[i];
    }
    r += group;
  }
}

}  // namespace plume::detail
