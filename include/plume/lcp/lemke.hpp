#pragma once
/// @file
/// Lemke's complementary pivoting method for LCP(M, d) (Lemke, "Bimatrix
/// equilibrium points and mathematical programming", Management Science 11,
/// 1965; Cottle, Pang & Stone 1992, ch. 4, "Lemke's method").
///
/// **Method.** An artificial variable z₀ with covering vector e = 1 is added,
///
///     w = M λ + d + e z₀,   w, λ, z₀ ≥ 0,   λᵀw = 0,
///
/// which λ = 0, z₀ = −min_i d_i solves. Complementary pivoting then walks from
/// this almost-complementary basis to the next: the variable that just left
/// the basis has its complement enter, and the minimum-ratio test picks the
/// variable that leaves. It stops when z₀ leaves (a solution) or when the
/// entering column has no positive entry (a *secondary ray*).
///
/// **Degeneracy.** The ratio test is lexicographic (CPS ch. 4,
/// lexicographic degeneracy resolution): ties in x_B,i / a_i are broken by comparing the rows of
/// B⁻¹ divided by a_i, column by column. This is the exact resolution of the
/// perturbed problem d + (ε, ε², …, εⁿ), so no basis repeats and the method
/// terminates on degenerate problems (repeated equal entries in d, zeros in d,
/// zero rows of M). When z₀ is among the tied rows it leaves first.
///
/// **What is guaranteed** (CPS ch. 4, the theorems on Lemke's method), in
/// exact arithmetic:
/// - M a P-matrix (all principal minors positive; e.g. symmetric positive
///   definite, or strictly diagonally dominant with positive diagonal): the
///   unique solution is found; no secondary ray occurs.
/// - M strictly copositive (λᵀMλ > 0 for λ ≥ 0, λ ≠ 0): a solution is found
///   for every d.
/// - M copositive-plus (copositive, and λᵀMλ = 0 with λ ≥ 0 ⇒ (M+Mᵀ)λ = 0;
///   this includes every positive semi-definite M, symmetric or not): either a
///   solution is found or a secondary ray proves that no λ ≥ 0 has Mλ + d ≥ 0.
///   The ray's λ-part u then satisfies u ≥ 0, Mᵀu ≤ 0, uᵀd < 0 (a Farkas
///   certificate); the solver checks this numerically and reports
///   `Infeasible` with it ("secondary ray at pivot k, entering variable …").
/// - Any other M: the method may end on a secondary ray although a solution
///   exists. The solver still checks the ray for a Farkas certificate: if it
///   holds, the problem is infeasible whatever M is (`Infeasible`); if not, it
///   reports `Failed` (no solution found, none ruled out).
///
/// **Numerics.** The solver pivots on the equilibrated, scaled problem
/// M̂ = DMD/σM, d̂ = Dd/σd (D = diag(1/√M_ii), see detail::Equilibration),
/// whose solution maps back one to one, keeping B⁻¹ explicitly (a dense
/// tableau, O(n²) per pivot). A pivot entry counts as positive above the zero
/// tolerance: n·10ε (Drake's n·‖M‖∞·10ε on the scale of M̂) unless
/// overridden, times ‖B⁻¹‖∞ of the current basis, the size of the rounding
/// noise in the tableau (see lcp.hpp). Ties in the ratio test are decided
/// within the same tolerance. If pivoting stops early (a ray or the pivot
/// limit), λ recomputed from the current basic set is still checked and
/// returned as `Solved` if it passes (a degenerate end with z₀ ≈ 0). The final
/// λ is recomputed from the final basis (M_JJ λ_J = −d_J, equilibrated, with
/// partial pivoting), clamped to λ ≥ 0, and accepted only if `lcp_residual` ≤
/// the residual tolerance and its amplification ≤ `max_amplification`;
/// otherwise the status is `Failed` and the message says which.
///
/// **Cost.** O(n²) per pivot plus O(n³) for the final solve; the number of
/// pivots is usually O(n) but exponential in the worst case (Murty 1978).

#include <algorithm>

#include "plume/lcp/lcp.hpp"

namespace plume {

/// Options of LemkeSolver / solve_lemke.
struct LemkeOptions {
  /// Pivot limit; 0 selects the default max(1000, 100·n). Reaching it gives
  /// `IterationLimit`.
  int max_pivots = 0;
  /// Relative zero tolerance for tableau entries of the equilibrated problem
  /// (default max(n,1)·10ε); it is multiplied by ‖B⁻¹‖∞ during the solve.
  /// Must be positive when given.
  std::optional<double> zero_tolerance;
  /// Absolute bound on lcp_residual for `Solved` (default
  /// lcp_default_residual_tolerance). Must be ≥ 0 when given.
  std::optional<double> residual_tolerance;
  /// Largest amplification ‖M‖∞‖λ‖∞/‖d‖∞ (on the equilibrated problem) of a
  /// `Solved` λ, and the size relative to ‖d‖∞/‖M‖∞ below which an
  /// `Infeasible` certificate must exclude every solution (default
  /// lcp_max_amplification() = 1/√ε ≈ 6.7·10⁷, so w is known to √ε·‖d‖∞).
  /// Raise it (e.g. to 10¹⁰) to accept jammed contacts with huge forces, at
  /// the price of w being known only to about n·ε·max_amplification·‖d‖∞.
  std::optional<double> max_amplification;
  /// Width of the window of ratios that count as tied with the minimum in
  /// the ratio test. true (the default): the zero tolerance, grown with
  /// ‖B⁻¹‖∞ like every other test of the tableau, times max(1, θ). false:
  /// ten times the zero tolerance without that growth. After a genuine but
  /// tiny pivot (a near-dependent column: two corners of one foot edge lying
  /// almost along a cone direction) ‖B⁻¹‖∞ reaches 10⁹, a grown window takes
  /// in ratios several times the minimum, and z₀ leaving from one of them
  /// ends in an infeasible basis; the narrow window follows the true minimum
  /// there. ContactSolver retries failed contact problems with it.
  bool growth_scaled_ties = true;
};

/// Lemke's method with a reusable workspace.
///
/// After `reserve(n)`, `solve` does not allocate for problems of size ≤ n
/// (a larger problem grows the workspace first). The returned reference stays
/// valid until the next call to solve or reserve on this object.
class LemkeSolver {
 public:
  explicit LemkeSolver(const LemkeOptions& options = {});

  /// Sizes the workspace and the result storage for problems of size ≤ n
  /// (memory O(n²)).
  void reserve(int n);
  /// The largest size solve handles without allocating.
  int capacity() const { return std::min(capacity_, bank_.capacity()); }

  const LemkeOptions& options() const { return options_; }
  void set_options(const LemkeOptions& options) { options_ = options; }

  /// Solves LCP(M, d) into storage owned by the solver.
  const LcpResult& solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d);

  /// Solves LCP(M, d) into `out`, which does not allocate when its λ and w
  /// already have n entries and its `basic` and `message` enough capacity.
  void solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d, LcpResult& out);

 private:
  void reserve_workspace(int n);
  bool validate(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d, LcpResult& out) const;
  void run(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d, LcpResult& out);

  LemkeOptions options_;
  int capacity_ = -1;
  detail::BasisInverse Binv_;  // B⁻¹ of the current basis
  VectorX x_;              // B⁻¹ d: values of the basic variables
  VectorX column_;         // B⁻¹ (entering column)
  VectorX lambda_;         // λ read from the tableau / ray direction u
  VectorX scratch_;        // a column of M̂, λ̂
  std::vector<int> basis_;       // basis_[row] = variable id (w_i = i, λ_i = n+i, z₀ = 2n)
  std::vector<int> position_;    // position_[variable id] = row, or −1 if nonbasic
  std::vector<int> ties_;        // rows tied in the ratio test
  detail::Equilibration equilibration_;
  detail::BasisPolish polish_;
  detail::ResultBank bank_;
};

/// Lemke's method on one problem (allocates its workspace).
LcpResult solve_lemke(const LcpProblem& problem, const LemkeOptions& options = {});

}  // namespace plume
