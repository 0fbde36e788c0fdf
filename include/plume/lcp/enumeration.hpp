#pragma once
/// @file
/// Exhaustive active-set enumeration for small LCP(M, d): the solver of last
/// resort behind Lemke's method when M is neither copositive-plus nor a
/// P-matrix (sliding friction makes the contact matrix non-symmetric and, in
/// Painlevé-type configurations, indefinite), where Lemke can end on a
/// secondary ray although a solution exists.
///
/// **Method.** Every solution of LCP(M, d) has a support J = {i : λ_i > 0}
/// with w_J = (Mλ + d)_J = 0. For each subset J of {0, …, n−1}, by increasing
/// size (and, within one size, in lexicographic order of the index masks),
/// the solver solves M_JJ λ_J = −d_J (least squares of minimum norm, so that
/// dependent contacts with a singular M_JJ are handled) and accepts the first
/// λ ≥ 0 with w ≥ 0 whose complementarity residual and amplification pass
/// the tests the pivoting methods use (residual ≤ √ε · lcp_residual_scale,
/// amplification ≤ lcp_max_amplification). The first solution found has the
/// fewest active contacts; when the problem has several solutions (a
/// Painlevé non-uniqueness) this picks one deterministically.
///
/// **Guarantees.** If a solution exists whose block M_JJ is solvable to the
/// residual test, it is found: the enumeration is exhaustive. If none passes,
/// the solver reports `Failed` with "no solution among the 2^n active sets",
/// which for a contact problem means the acceleration-level problem has no
/// consistent solution to working accuracy.
///
/// **Cost.** Up to 2ⁿ small dense solves: n ≤ `max_size` (default 12, at
/// most 4096 solves of size ≤ 12, a few milliseconds). Larger problems are
/// refused with `Failed`. Allocates (its factorisation's storage once per
/// active-set size, not per set); meant as a fallback, not a hot path.

#include <Eigen/QR>

#include "plume/lcp/lcp.hpp"

namespace plume {

struct EnumerationOptions {
  int max_size = 12;  ///< largest n attempted (2ⁿ subsets); at most 24
};

class EnumerationSolver {
 public:
  explicit EnumerationSolver(const EnumerationOptions& options = {});

  const EnumerationOptions& options() const { return options_; }

  /// Solves LCP(M, d) into `out` (status Solved, Failed or InvalidInput).
  void solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d, LcpResult& out);

 private:
  EnumerationOptions options_;
  MatrixX block_;
  VectorX rhs_, lambda_, x_;
  Eigen::CompleteOrthogonalDecomposition<MatrixX> cod_;  // (its storage kept between active sets)
  std::vector<int> J_;
};

}  // namespace plume
