#pragma once
// The Delassus matrix A = K^T H^-1 K of contact rows, assembled contact by
// contact from W = (L^-T K)^T (H = L^T D L, the branch-induced sparse
// factorisation): its lower triangle by blocks of a contact's rows against
// another's, each summed over the dofs of their support chains. Used by the
// time-stepping scheme's active-set solve (symmetric_forces) and its
// projections.
#include <Eigen/Core>
#include "algorithms/scalar_loops.hpp"

namespace plume::detail {

namespace delassus {

// Block (a, b) of A = W D⁻¹ Wᵀ (a's rows × b's, the lower triangle when
// a = b) over the dofs `chain` (a's support, descending; b's rows are zero
// outside theirs), each entry summed over the dofs in ascending order as
// (w_j d⁻¹) w_i onto its value in A (`add`) or from +0: 3 × 3 blocks in
// registers.
template <int NA, int NB, bool diagonal, bool add>
PLUME_SCALAR_LOOPS inline void A_block(const int* chain, int nc, const double* W, Eigen::Index stride, const double* dinv,
                                int ra, int rb, double* A) {
  double B[NA][NB] = {};
  if (add && !diagonal) {  // (nothing to add: A unchanged)
    bool any = false;
    for (int c = 0; c < nc && !any; ++c) {
      const double* w = W + chain[c] * stride;
      for (int j = 0; j < NB; ++j) any |= w[rb + j] != 0.0;
    }
    if (!any) return;
  }
  if (add) {
    for (int j = 0; j < NB; ++j) {
      for (int i = diagonal ? j : 0; i < NA; ++i) B[i][j] = A[(rb + j) * stride + ra + i];
    }
  }
  for (int c = nc - 1; c >= 0; --c) {
    const int d = chain[c];
    const double* w = W + d * stride;
    if (!diagonal) {  // (b's rows are zero outside its own chain)
      bool zero = true;
      for (int j = 0; j < NB; ++j) zero &= w[rb + j] == 0.0;
      if (zero) continue;
    }
    for (int j = 0; j < NB; ++j) {
      const double wj = w[rb + j] * dinv[d];
      for (int i = diagonal ? j : 0; i < NA; ++i) B[i][j] += wj * w[ra + i];
    }
  }
  for (int j = 0; j < NB; ++j) {
    for (int i = diagonal ? j : 0; i < NA; ++i) A[(rb + j) * stride + ra + i] = B[i][j];
  }
}

// A's lower triangle (rows × rows, column-major) ← Σ_{d < shared} (w_j d⁻¹)
// w_i over the dofs every contact shares, ascending, summed from +0 (per
// entry the products and order of A_block's sums over these dofs): two
// entries of a column at a time (a column of odd index also writes the
// entry above its diagonal, which nothing reads).
#if defined(__GNUC__)
using Pair = double __attribute__((vector_size(16)));
// (S > 0: shared = S, unrolled; S = 0: any shared ≤ 64)
template <int S>
inline void shared_A_columns_n(const double* W, int rows, int shared, const double* dinv, double* A) {
  const int n = S > 0 ? S : shared;
  double s[S > 0 ? S : 64];
  for (int j = 0; j < rows; ++j) {
    double* aj = A + static_cast<Eigen::Index>(j) * rows;
    for (int d = 0; d < n; ++d) s[d] = W[static_cast<Eigen::Index>(d) * rows + j] * dinv[d];
    int i = j & ~1;
    for (; i + 2 <= rows; i += 2) {
      Pair acc = {0.0, 0.0};
      const double* w = W + i;
      for (int d = 0; d < n; ++d, w += rows) {
        Pair x;
        __builtin_memcpy(&x, w, sizeof x);
        acc += s[d] * x;
      }
      __builtin_memcpy(aj + i, &acc, sizeof acc);
    }
    if (i < rows) {
      double acc = 0.0;
      for (int d = 0; d < n; ++d) acc += s[d] * W[static_cast<Eigen::Index>(d) * rows + i];
      aj[i] = acc;
    }
  }
}
inline void shared_A_columns(const double* W, int rows, int shared, const double* dinv, double* A) {
  if (shared == 6) {  // (a floating base)
    shared_A_columns_n<6>(W, rows, shared, dinv, A);
  } else {
    shared_A_columns_n<0>(W, rows, shared, dinv, A);
  }
}
constexpr int kMaxShared = 64;
#else
inline void shared_A_columns(const double* W, int rows, int shared, const double* dinv, double* A) {
  for (int j = 0; j < rows; ++j) {
    double* aj = A + static_cast<Eigen::Index>(j) * rows;
    for (int i = j; i < rows; ++i) aj[i] = 0.0;
    for (int d = 0; d < shared; ++d) {
      const double* w = W + static_cast<Eigen::Index>(d) * rows;
      const double wj = w[j] * dinv[d];
      for (int i = j; i < rows; ++i) aj[i] += wj * w[i];
    }
  }
}
constexpr int kMaxShared = 1 << 30;
#endif

// Block (a, b) over a's support chain. With the shared dofs split off
// (`shared` > 0: the dofs 0 … shared − 1, below every contact's own dofs)
// their part of every block is already in A (shared_A_columns), and the
// block's sums go on over a's own dofs (b's rows zero there are skipped,
// as A_block does): the ascending order, the same products, the same bits
// as block by block.
template <int NA, int NB, bool diagonal>
inline void A_block_of(const int* chain, int nc, int shared, const double* W, int rows, const double* dinv, int ra, int rb,
                double* A) {
  if (shared > 0) {
    A_block<NA, NB, diagonal, true>(chain, nc - shared, W, rows, dinv, ra, rb, A);
  } else {
    A_block<NA, NB, diagonal, false>(chain, nc, W, rows, dinv, ra, rb, A);
  }
}

}  // namespace delassus

// A's lower triangle (rows × rows, column-major; the entries above the
// diagonal are not read and may be written) = W D⁻¹ Wᵀ for W stored dof by
// dof (W + d·rows: the rows' entries at dof d), dinv = D⁻¹, contact g's rows
// group[g] … group[g + 1] − 1 (one or three), nonzero in W only on its
// support chain chains + g·nv (chain_size[g] dofs, descending, closed under
// ancestors). `shared` > 0: the dofs 0 … shared − 1 lie on every chain and
// below every other chain dof (a floating base): their part is summed for
// all rows at once. Every entry is summed from +0 over its dofs in
// ascending order as (w_j d⁻¹) w_i, skipping only exact zeros: the same bits
// with or without `shared`.
inline void delassus_lower(int ng, const int* group, const int* chains, const int* chain_size, int nv, int shared,
                           const double* W, const double* dinv, double* A) {
  using namespace delassus;
  const int rows = group[ng];
  if (shared > kMaxShared) shared = 0;
  if (shared > 0) shared_A_columns(W, rows, shared, dinv, A);
  for (int a = 0; a < ng; ++a) {
    const int ra = group[a], na = group[a + 1] - ra;
    const int* chain = chains + static_cast<Eigen::Index>(a) * nv;
    const int nc = chain_size[a];
    for (int b = 0; b <= a; ++b) {
      const int rb = group[b], nb = group[b + 1] - rb;
      if (a == b) {
        if (na == 3) {
          A_block_of<3, 3, true>(chain, nc, shared, W, rows, dinv, ra, rb, A);
        } else {
          A_block_of<1, 1, true>(chain, nc, shared, W, rows, dinv, ra, rb, A);
        }
      } else if (na == 3 && nb == 3) {
        A_block_of<3, 3, false>(chain, nc, shared, W, rows, dinv, ra, rb, A);
      } else if (na == 3) {
        A_block_of<3, 1, false>(chain, nc, shared, W, rows, dinv, ra, rb, A);
      } else if (nb == 3) {
        A_block_of<1, 3, false>(chain, nc, shared, W, rows, dinv, ra, rb, A);
      } else {
        A_block_of<1, 1, false>(chain, nc, shared, W, rows, dinv, ra, rb, A);
      }
    }
  }
}

}  // namespace plume::detail
