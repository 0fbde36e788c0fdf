#pragma once
/// @file
/// Projected Gauss–Seidel (projected SOR) for the box-constrained, or mixed,
/// LCP (Cryer, "The solution of a quadratic programming problem using
/// systematic overrelaxation", SIAM J. Control 9, 1971; Mangasarian 1977;
/// Cottle, Pang & Stone 1992, ch. 5):
///
///     lo ≤ λ ≤ hi,   w = Mλ + d,
///     λ_i = lo_i ⇒ w_i ≥ 0,   λ_i = hi_i ⇒ w_i ≤ 0,   lo_i < λ_i < hi_i ⇒ w_i = 0.
///
/// With lo = 0 and hi = +∞ this is the standard LCP(M, d).
///
/// **Method.** One *sweep* updates each row in turn, using the newest values:
///
///     λ_i ← mid(lo_i, hi_i, λ_i − ω w_i / M_ii)
///
/// with w kept current by w += Δλ_i M_:,i (so a sweep costs one pass over M).
/// A row with M_ii = 0 is moved to the bound the sign of w_i asks for.
///
/// **Friction boxes.** Contact solvers bound the two tangential forces of a
/// contact by its normal force: hi_i = μ_i λ_n(i), lo_i = −μ_i λ_n(i). Give
/// `PgsOptions::normal_index[i] = n(i)` and `PgsOptions::mu[i] = μ_i` for such
/// rows (−1 for rows with the fixed bounds `lower`, `upper`, whose entries are
/// then ignored for friction rows). The bounds use the newest λ_n(i), clamped
/// to ≥ 0. The residual of the result is the box residual with these bounds
/// evaluated at the returned λ.
///
/// **What is guaranteed.**
/// - Box bounds, M symmetric positive definite, 0 < ω < 2: the iterates
///   converge to the unique solution (Cryer 1971; CPS ch. 5).
/// - Box bounds, M symmetric PSD with positive diagonal, 0 < ω < 2: the
///   objective ½λᵀMλ + dᵀλ decreases monotonically and every accumulation point
///   of the iterates solves the problem when it is solvable (CPS ch. 5); w = Mλ+d
///   converges (it is unique). The rate is linear and can be slow for badly
///   conditioned M.
/// - Friction boxes: the bounds move with λ, so the problem is no longer a box
///   LCP of a fixed box; there is no convergence guarantee (it is the
///   fixed-point iteration of ODE, Bullet and similar engines). The residual
///   check still decides `Solved`.
/// - Anything else (non-symmetric M, a zero diagonal with nonzero off-diagonal
///   entries): no guarantee; the result is `Solved` only if the residual check
///   passes, otherwise `IterationLimit` after `max_iterations` sweeps.
/// A negative diagonal entry is rejected (`InvalidInput`): the update would
/// move away from the solution. A zero row i of M with d_i < 0 and hi_i = +∞
/// (or d_i > 0 and lo_i = −∞) is reported `Infeasible`: w_i = d_i for every λ.
///
/// **Stopping.** After each sweep the box residual (lcp.hpp) is evaluated with
/// the maintained w; when it is below the tolerance, w is recomputed as Mλ + d
/// and the exact residual is checked again before returning `Solved`. The
/// tolerance is absolute when `residual_tolerance` is given, otherwise
/// `tolerance · s` with s = lcp_residual_scale(M, d, λ) (default 10⁻⁹·s,
/// looser than the pivoting methods' 100·n·ε·s because convergence is linear).

#include <algorithm>

#include "plume/lcp/lcp.hpp"

namespace plume {

/// Options of PgsSolver / solve_pgs.
struct PgsOptions {
  int max_iterations = 1000;  ///< sweeps; reaching it gives IterationLimit
  double relaxation = 1.0;    ///< ω ∈ (0, 2); 1 is Gauss–Seidel
  double tolerance = 1e-9;    ///< relative: Solved when residual ≤ tolerance·s
  /// Absolute bound on the residual for `Solved`; overrides `tolerance`.
  std::optional<double> residual_tolerance;
  /// λ₀ to start from (empty: zero); projected onto the bounds first.
  VectorX warm_start;
  /// Friction boxes: normal_index[i] = j ≥ 0 bounds row i by ±mu[i]·λ_j;
  /// −1 keeps the fixed bounds. Empty: every row has fixed bounds. Row j
  /// itself must have fixed bounds.
  std::vector<int> normal_index;
  /// μ_i ≥ 0 for the friction rows (size n when normal_index is used).
  VectorX mu;
};

/// Projected Gauss–Seidel with a reusable workspace.
///
/// After `reserve(n)`, `solve` does not allocate for problems of size ≤ n.
/// The returned reference stays valid until the next solve or reserve.
class PgsSolver {
 public:
  explicit PgsSolver(const PgsOptions& options = {});

  /// Sizes the workspace and result storage for problems of size ≤ n (O(n²)).
  void reserve(int n);
  /// The largest size solve handles without allocating.
  int capacity() const { return std::min(capacity_, bank_.capacity()); }

  const PgsOptions& options() const { return options_; }
  /// Mutable options, e.g. to set normal_index and mu for the next problem.
  PgsOptions& options() { return options_; }

  /// Solves the box LCP from options().warm_start (or zero).
  const LcpResult& solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                         const Eigen::Ref<const VectorX>& lower, const Eigen::Ref<const VectorX>& upper);
  /// Solves the box LCP from λ₀ (which may alias the previous result's λ).
  const LcpResult& solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                         const Eigen::Ref<const VectorX>& lower, const Eigen::Ref<const VectorX>& upper,
                         const Eigen::Ref<const VectorX>& lambda0);
  /// Solves into `out` (no allocation when `out` already has an n-problem's
  /// sizes and capacities); λ₀ from options().warm_start.
  void solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
             const Eigen::Ref<const VectorX>& lower, const Eigen::Ref<const VectorX>& upper, LcpResult& out);

 private:
  void reserve_workspace(int n);
  bool validate(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                const Eigen::Ref<const VectorX>& lower, const Eigen::Ref<const VectorX>& upper,
                const Eigen::Ref<const VectorX>* lambda0, LcpResult& out) const;
  void run(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
           const Eigen::Ref<const VectorX>& lower, const Eigen::Ref<const VectorX>& upper,
           const Eigen::Ref<const VectorX>* lambda0, LcpResult& out);
  const LcpResult& solve_banked(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                                const Eigen::Ref<const VectorX>& lower, const Eigen::Ref<const VectorX>& upper,
                                const Eigen::Ref<const VectorX>* lambda0);

  PgsOptions options_;
  int capacity_ = -1;
  VectorX lambda_;   // iterate
  VectorX w_;        // Mλ + d, kept current
  VectorX lo_;       // bounds in effect (friction rows from λ)
  VectorX hi_;
  detail::ResultBank bank_;
};

/// PGS on one box LCP lo ≤ λ ≤ hi (allocates its workspace).
LcpResult solve_pgs(const LcpProblem& problem, const VectorX& lower, const VectorX& upper,
                    const PgsOptions& options = {});

/// PGS on the standard LCP (lo = 0, hi = +∞).
LcpResult solve_pgs(const LcpProblem& problem, const PgsOptions& options = {});

}  // namespace plume
