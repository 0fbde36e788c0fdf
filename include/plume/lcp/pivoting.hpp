#pragma once
/// @file
/// A principal pivoting method for LCP(M, d) with symmetric positive
/// semi-definite M: the Cottle–Dantzig method (Dantzig & Cottle, "Positive
/// (semi-)definite programming", 1967; Cottle, Pang & Stone 1992, ch. 4), in
/// the form used for contact forces by Featherstone (*Robot Dynamics
/// Algorithms*, 1987) and Baraff ("Fast contact force computation for
/// nonpenetrating rigid bodies", SIGGRAPH 1994).
///
/// **Method.** Every index is in one of three states:
/// - clamped, i ∈ C: w_i = 0 and λ_i ≥ 0 is basic (the contact is active);
/// - free: λ_i = 0 and w_i ≥ 0 is basic (the contact separates);
/// - violated: λ_i = 0 and w_i < 0 (not yet processed).
/// Starting from λ = 0 (w = d), each *major cycle* picks the most negative
/// w_d (ties: least index) and drives it to zero by increasing λ_d along
///
///     Δλ_d = 1,   M_CC Δλ_C = −M_Cd,   Δλ_i = 0 otherwise,   Δw = M Δλ,
///
/// which keeps w_C = 0. The step stops at the first *blocking* event:
/// 1. w_d reaches 0 — d becomes clamped; the major cycle ends;
/// 2. a clamped λ_j reaches 0 — j becomes free;
/// 3. a free w_j reaches 0 — j becomes clamped;
/// and continues with the new C (each event is one principal pivot of the
/// tableau). Violated w_i are not guarded: they may move either way and are
/// processed by later major cycles, so the nonnegative basic variables stay
/// nonnegative and at most n major cycles occur. Ties in the step length are
/// broken in favour of event 1, then by least index (a Bland-type rule).
/// If event 3 would pivot on noise (column j numerically dependent on the
/// clamped columns — a redundant contact — so that in exact arithmetic
/// Δw_j = 0 as well), j is left unguarded for the rest of the drive instead.
///
/// **Infeasibility (exact conditions).** The driving variable λ_d increases
/// without bound when Δw_d ≤ the zero tolerance and no clamped λ_j and no free
/// w_j decreases. Then u = Δλ ≥ 0 has uᵀMu = Δw_d = 0, so for symmetric PSD M
/// Mu = 0, and uᵀd = uᵀw = w_d < 0: a Farkas certificate (u ≥ 0, Mᵀu ≤ 0,
/// uᵀd < 0) showing that no λ ≥ 0 makes Mλ + d ≥ 0. The solver checks it
/// numerically and reports `Infeasible` with it; if the check fails (M is not
/// symmetric PSD) it reports `Failed`.
///
/// **What is guaranteed**, in exact arithmetic:
/// - M symmetric PSD: M_CC stays positive definite (adding j with Δw_j < 0 or
///   d with Δw_d > 0 keeps a positive Schur complement; removing an index
///   keeps a principal submatrix), every pivot is well defined, and the method
///   ends with a solution or an infeasibility certificate. The solution is a
///   basic one: the clamped columns of M are independent, so in contact terms
///   the contacts with λ_i > 0 have independent normals (docs/theory.md §3).
/// - M a P-matrix, symmetric or not (e.g. Murty's upper-triangular example):
///   Δw_d > 0 always, no ray occurs, the unique solution is found (the number
///   of pivots can grow exponentially with n).
/// - Degenerate problems: the least-index tie-breaking is a heuristic here,
///   not a proof of finiteness; `max_pivots` guards against cycling and gives
///   `IterationLimit`. (Lemke's method with its lexicographic rule is the
///   robust choice for degenerate or non-symmetric problems.)
/// - Other M (non-symmetric PSD, indefinite, copositive): not supported. The
///   solver may still succeed (a solution is accepted only after the residual
///   check); otherwise it reports `Failed` — a vanishing pivot, or an
///   unbounded direction without a valid certificate — and never `Solved`
///   without a checked residual.
///
/// **Numerics.** As in lemke.hpp: pivots on the equilibrated, scaled problem
/// (detail::Equilibration) with an explicit B⁻¹ (O(n²) per pivot), relative
/// zero tolerance n·10ε unless overridden, times ‖B⁻¹‖∞ for rates and pivots
/// (a rate within it of zero neither blocks nor drives; this is what keeps
/// redundant, linearly dependent contacts out of C). On an unbounded drive
/// the certificate u is recomputed from a fresh factorization of M_CC before
/// it is checked. The final λ is recomputed from the clamped set
/// (M_CC λ_C = −d_C) and accepted only after `lcp_residual` ≤ the
/// residual tolerance and amplification ≤ `max_amplification` (lcp.hpp).
/// `pivots` counts principal pivots.

#include <algorithm>

#include "plume/lcp/lcp.hpp"

namespace plume {

/// Options of PivotingSolver / solve_pivoting.
struct PivotingOptions {
  /// Pivot limit; 0 selects the default max(1000, 100·n). Reaching it gives
  /// `IterationLimit`.
  int max_pivots = 0;
  /// Relative zero tolerance for rates, pivots and "w_i < 0" on the
  /// equilibrated problem (default max(n,1)·10ε; rates and pivots use it
  /// times ‖B⁻¹‖∞). Must be positive when given.
  std::optional<double> zero_tolerance;
  /// Absolute bound on lcp_residual for `Solved` (default
  /// lcp_default_residual_tolerance). Must be ≥ 0.
  std::optional<double> residual_tolerance;
  /// Largest amplification ‖M‖∞‖λ‖∞/‖d‖∞ (on the equilibrated problem) of a
  /// `Solved` λ, and the size relative to ‖d‖∞/‖M‖∞ below which an
  /// `Infeasible` certificate must exclude every solution (default
  /// lcp_max_amplification() = 1/√ε ≈ 6.7·10⁷, so w is known to √ε·‖d‖∞).
  /// Raise it (e.g. to 10¹⁰) to accept jammed contacts with huge forces, at
  /// the price of w being known only to about n·ε·max_amplification·‖d‖∞.
  std::optional<double> max_amplification;
};

/// The Cottle–Dantzig principal pivoting method with a reusable workspace.
///
/// After `reserve(n)`, `solve` does not allocate for problems of size ≤ n.
/// The returned reference stays valid until the next solve or reserve.
class PivotingSolver {
 public:
  explicit PivotingSolver(const PivotingOptions& options = {});

  /// Sizes the workspace and result storage for problems of size ≤ n (O(n²)).
  void reserve(int n);
  /// The largest size solve handles without allocating.
  int capacity() const { return std::min(capacity_, bank_.capacity()); }

  const PivotingOptions& options() const { return options_; }
  void set_options(const PivotingOptions& options) { options_ = options; }

  /// Solves LCP(M, d) into storage owned by the solver.
  const LcpResult& solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d);

  /// Solves LCP(M, d) into `out` (no allocation when `out` already has the
  /// sizes and capacities of an n-problem).
  void solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d, LcpResult& out);

 private:
  void reserve_workspace(int n);
  bool validate(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d, LcpResult& out) const;
  void run(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d, LcpResult& out);

  PivotingOptions options_;
  int capacity_ = -1;
  detail::BasisInverse Binv_;   // B⁻¹ of the complementary basis (slot i holds w_i or λ_i)
  VectorX rates_;               // B⁻¹ M_:,d / σM: Δλ_i (i ∈ C) or Δw_i (i ∉ C)
  VectorX column_;              // entering column of a pivot
  VectorX unused_;              // right-hand side carried through pivots (values are kept in lambda_, w_)
  VectorX lambda_;              // λ (scaled)
  VectorX w_;                   // w (scaled)
  VectorX u_;                   // λ on the original scale / certificate
  VectorX scratch_;             // a column of M̂ / a scaled direction
  std::vector<char> clamped_;   // i ∈ C
  std::vector<char> dependent_; // free i whose column is numerically dependent on C (this drive)
  std::vector<int> clamped_list_;
  detail::Equilibration equilibration_;
  detail::BasisPolish polish_;
  detail::ResultBank bank_;
};

/// The principal pivoting method on one problem (allocates its workspace).
LcpResult solve_pivoting(const LcpProblem& problem, const PivotingOptions& options = {});

}  // namespace plume
