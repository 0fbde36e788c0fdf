#pragma once
/// @file
/// The linear complementarity problem and what plume's LCP solvers share:
/// problem and result types, the status, the residual, the tolerances and the
/// input checks.
///
/// **The problem.** Given M (n×n) and d (n), find λ such that
///
///     λ ≥ 0,   w = M λ + d ≥ 0,   λᵀ w = 0.
///
/// This is LCP(d, M) of Cottle, Pang & Stone, *The Linear Complementarity
/// Problem* (1992), ch. 1, who write q for d and z for λ. In plume λ holds contact
/// forces (or impulses) and w the separation accelerations (or velocities):
/// docs/theory.md §3 (11.42) and §5.
///
/// **The solvers.**
/// | header        | method                                  | guaranteed for |
/// |---------------|-----------------------------------------|----------------|
/// | lemke.hpp     | Lemke's complementary pivoting (1965)   | P, PSD, copositive-plus (ray ⇒ infeasible), strictly copositive |
/// | pivoting.hpp  | Cottle–Dantzig principal pivoting       | symmetric PSD, P |
/// | pgs.hpp       | projected Gauss–Seidel / SOR, box bounds | symmetric PSD with positive diagonal |
///
/// **The contract every solver keeps** (STYLE.md item 12):
/// - `Solved` is returned only after the solver recomputed w = Mλ + d from the
///   returned λ and found `residual ≤ tolerance` (both stored in the result).
///   Every other outcome is a failure status with the reason in `message`;
///   the best λ found is still returned (except for `InvalidInput`).
/// - `Infeasible` is returned only with evidence: a vector u ≥ 0 with Mᵀu ≤ 0
///   and uᵀd < 0 (a Farkas certificate: then uᵀ(Mλ + d) < 0 for every λ ≥ 0, so
///   no λ ≥ 0 makes w ≥ 0), which the solver checks numerically and reports.
///   When rounding leaves max(Mᵀu) slightly positive, the certificate still
///   bounds every feasible λ from below; it is accepted only if that bound is
///   at least n·max_amplification (default 1/√ε ≈ 7·10⁷) times the natural
///   size ‖d‖∞/‖M‖∞ of λ, and the message gives the bound (see FarkasCheck).
/// - Input is checked first (square M, matching sizes, finite entries):
///   `InvalidInput` with a message naming the entry at fault.
/// - The empty problem (n = 0) is `Solved` with zero pivots.
///
/// **Tolerances.** Two kinds, both scaled to the problem:
/// - the *zero tolerance* of the pivoting methods (is a pivot entry zero?):
///   they work on the equilibrated problem DMD/‖DMD‖∞ (D = diag(1/√M_ii),
///   detail::Equilibration), where Drake's `UnrevisedLemkeSolver` tolerance
///   `lcp_zero_tolerance(M) = max(n,1) · ‖M‖∞ · 10ε` becomes the relative
///   max(n,1)·10ε (overridable); during a solve it is multiplied by ‖B⁻¹‖∞ of
///   the current basis (1 at the start), the size of the rounding noise in
///   tableau entries, so that ill-conditioned bases (redundant contacts make
///   M singular) never lead to a pivot on noise;
/// - the *residual tolerance* (is λ a solution?): an absolute bound on
///   `lcp_residual`; by default `lcp_default_residual_tolerance`, i.e.
///   `100 · max(n,1) · ε · s` with the scale `s = max(‖d‖∞, ‖λ‖∞, ‖M‖∞‖λ‖∞)`
///   (the size of the terms whose rounding errors the residual sees: λ is
///   then the exact solution of a problem whose d differs by about the
///   residual, a backward-error view). PGS, an iterative method, uses a
///   looser relative default (see pgs.hpp). A `Solved` λ with
///   ‖M‖∞‖λ‖∞ ≫ ‖d‖∞ comes from an ill-conditioned (nearly infeasible)
///   problem: physically a jammed contact. The pivoting methods accept
///   such a λ only while its amplification ‖M‖∞‖λ‖∞/‖d‖∞ (measured on the
///   equilibrated problem) is at most `max_amplification` (default
///   lcp_max_amplification() = 1/√ε), so that w is known to about √ε·‖d‖∞
///   at worst; beyond that they report `Failed` (or `Infeasible` with a
///   certificate valid up to that size), so the two never overlap.
///
/// **No allocation while solving.** Each solver is a small class with
/// `reserve(n)`; after it, `solve` does not touch the heap for any problem of
/// size ≤ n (the tests count every allocation). The free functions
/// `solve_lemke`, `solve_pivoting`, `solve_pgs` wrap the classes for one-off use.

#include <optional>
#include <string>
#include <vector>

#include "plume/spatial.hpp"

namespace plume {

/// One LCP instance: find λ ≥ 0 with w = Mλ + d ≥ 0, λᵀw = 0.
struct LcpProblem {
  MatrixX M;  ///< n×n
  VectorX d;  ///< n
};

/// How a solve ended.
enum class LcpStatus {
  Solved,          ///< residual ≤ tolerance: λ solves the LCP (pivoting methods
                   ///< also ask lcp_amplification ≤ lcp_max_amplification)
  Infeasible,      ///< no solution exists (or, numerically, none of practical
                   ///< size): the message gives the certificate
  IterationLimit,  ///< max pivots / iterations reached; λ is the last iterate
  InvalidInput,    ///< M not square, sizes differ, NaN/Inf entries, bad options
  Failed,          ///< stopped without a solution and without a proof that none
                   ///< exists (M outside the method's class, a singular pivot,
                   ///< a final residual above tolerance); the message says which
};

/// "Solved", "Infeasible", "IterationLimit", "InvalidInput" or "Failed".
const char* to_string(LcpStatus status);

/// Everything a solve produces. Sizes are n, except after InvalidInput (empty).
struct LcpResult {
  VectorX lambda;                          ///< λ (n)
  VectorX w;                               ///< w = Mλ + d, recomputed from λ (n)
  LcpStatus status = LcpStatus::Failed;
  int pivots = 0;                          ///< pivots (Lemke, pivoting) or sweeps (PGS)
  double residual = 0.0;                   ///< lcp_residual (box_lcp_residual for PGS) at λ
  double tolerance = 0.0;                  ///< the bound `residual` was checked against
  std::vector<int> basic;                  ///< pivoting: i with λ_i basic in the final
                                           ///< complementary basis; PGS: i with λ_i ≠ 0
  std::string message;                     ///< the reason, in words
};

/// The complementarity residual of λ for LCP(M, d), with w = Mλ + d:
///
///     max_i max(−λ_i, −w_i, |min(λ_i, w_i)|)  =  ‖min(λ, w)‖∞,
///
/// the infinity norm of the natural (min) map (Cottle, Pang & Stone ch. 1,
/// Pang's natural residual). It is zero exactly at solutions and measures
/// negative λ, negative w and complementarity violation alike (the two forms
/// agree: if λ_i < 0 then |min(λ_i, w_i)| ≥ −λ_i, and likewise for w). It is
/// 0 for n = 0. Allocation-free (w is formed row by row).
/// @pre M is square with d.size() == lambda.size() == M.rows().
double lcp_residual(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                    const Eigen::Ref<const VectorX>& lambda);

/// The residual of the box-constrained (mixed) LCP lo ≤ λ ≤ hi, w = Mλ + d,
/// with λ_i = lo_i ⇒ w_i ≥ 0, λ_i = hi_i ⇒ w_i ≤ 0, lo_i < λ_i < hi_i ⇒ w_i = 0:
///
///     max_i |λ_i − mid(lo_i, hi_i, λ_i − w_i)|
///
/// (mid = clamp into [lo_i, hi_i]; infinite bounds allowed). With lo = 0,
/// hi = +∞ it equals lcp_residual. Allocation-free.
/// @pre matching sizes, lo ≤ hi.
double box_lcp_residual(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                        const Eigen::Ref<const VectorX>& lo, const Eigen::Ref<const VectorX>& hi,
                        const Eigen::Ref<const VectorX>& lambda);

/// The default zero tolerance of the pivoting methods, `max(n,1)·‖M‖∞·10ε`
/// (‖M‖∞ the maximum absolute row sum), after Drake's UnrevisedLemkeSolver.
double lcp_zero_tolerance(const Eigen::Ref<const MatrixX>& M);

/// The residual scale `s = max(‖d‖∞, ‖λ‖∞, ‖M‖∞·‖λ‖∞)`: the size of the terms
/// whose rounding errors show up in lcp_residual. Allocation-free.
double lcp_residual_scale(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                          const Eigen::Ref<const VectorX>& lambda);

/// The default residual tolerance of the pivoting methods,
/// `100 · max(n,1) · ε · lcp_residual_scale(M, d, λ)`: a backward-stable
/// solve of the final basis lands well inside it unless that basis is
/// ill-conditioned, in which case the solver reports `Failed` rather than
/// a doubtful `Solved`.
double lcp_default_residual_tolerance(const Eigen::Ref<const MatrixX>& M,
                                      const Eigen::Ref<const VectorX>& d,
                                      const Eigen::Ref<const VectorX>& lambda);

/// The amplification ‖M‖∞‖λ‖∞ / ‖d‖∞ of a candidate λ: how much larger the
/// terms of w = Mλ + d are than the result (0 for λ = 0, +∞ for d = 0 ≠ λ).
/// For a well-posed problem it is of the order of the condition number of
/// the active block M_JJ; the rounding error of w is ε times it, relative
/// to ‖d‖∞.
double lcp_amplification(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                         const Eigen::Ref<const VectorX>& lambda);

/// The largest amplification the pivoting methods accept for `Solved`,
/// 1/√ε ≈ 6.7·10⁷: beyond it w = Mλ + d cannot be known to better than
/// √ε·‖d‖∞, and the problem is numerically infeasible (or jammed). The
/// infeasibility certificates use the same threshold (FarkasCheck), so
/// `Solved` and `Infeasible` never overlap.
double lcp_max_amplification();

/// Checks the input of LCP(M, d): M square, d of matching size, every entry
/// finite. On failure returns false and writes a message naming the fault
/// ("M is 3x4, must be square", "d has 2 entries, M is 3x3", "d[2] is nan",
/// "M(1,0) is inf") into `message` (without allocating if its capacity
/// suffices).
bool check_lcp_input(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                     std::string& message);

/// What a candidate infeasibility certificate u ≥ 0 shows about LCP(M, d).
/// If Mᵀu ≤ 0 and uᵀd < 0, no λ ≥ 0 has Mλ + d ≥ 0, since then
/// uᵀ(Mλ + d) = (Mᵀu)ᵀλ + uᵀd < 0 while u ≥ 0 and Mλ + d ≥ 0 would make it
/// nonnegative (Farkas' lemma; Cottle, Pang & Stone ch. 4 for how Lemke's
/// secondary ray yields such a u). In floating point Mᵀu is only
/// approximately ≤ 0; with δ = max(max_j (Mᵀu)_j, 0) the same argument shows
/// that every feasible λ has ‖λ‖₁ ≥ −uᵀd / δ =: `bound` (+∞ when δ = 0).
///
/// `valid` asks that u ≥ 0, u ≠ 0, that uᵀd < −t·‖u‖∞·‖d‖₁ (negative beyond
/// the rounding of u and of the sum, t = 1000·max(n,1)·ε), and that
/// `bound ≥ n · scale · lcp_max_amplification()` with scale = ‖d‖∞/‖M‖∞, the
/// natural size of λ: then every feasible λ has ‖M‖∞‖λ‖∞ ≥ ‖d‖∞/√ε, beyond
/// what a solver would accept as `Solved` — the problem is infeasible for
/// every numerical purpose. Solvers report the bound when it is finite.
struct FarkasCheck {
  double max_MTu = 0.0;  ///< max_j (Mᵀu)_j (max_j D_j(Mᵀu)_j when equilibrated)
  double uTd = 0.0;      ///< uᵀd
  double bound = 0.0;    ///< every feasible λ has ‖λ‖₁ ≥ bound (+∞: none exists;
                         ///< ‖D⁻¹λ‖₁ when equilibrated)
  double scale = 0.0;    ///< ‖d‖∞ / ‖M‖∞, the natural size of λ (of D⁻¹λ:
                         ///< ‖Dd‖∞/‖DMD‖∞)
  bool valid = false;    ///< see above
};

/// Evaluates the candidate certificate u for LCP(M, d). Allocation-free.
/// @pre sizes match.
FarkasCheck check_farkas_certificate(const Eigen::Ref<const MatrixX>& M,
                                     const Eigen::Ref<const VectorX>& d,
                                     const Eigen::Ref<const VectorX>& u);

/// Implementation details shared by the solvers; not a stable interface.
namespace detail {

/// ‖M‖∞, the maximum absolute row sum (allocation-free).
double max_abs_row_sum(const Eigen::Ref<const MatrixX>& M);

/// Keeps one LcpResult per problem size 0…capacity, each with its vectors
/// already sized, so that a solver can return `const LcpResult&` without
/// resizing (hence without allocating) when the size changes between calls.
/// Memory is O(capacity²) doubles.
class ResultBank {
 public:
  /// Sizes results for every n ≤ capacity (allocates).
  void reserve(int capacity);
  int capacity() const { return static_cast<int>(by_size_.size()) - 1; }
  /// The result for size n, reset (status Failed, zero counts, empty message
  /// and basis). Allocates only when n > capacity().
  LcpResult& for_size(int n);
  /// The result returned for invalid input: empty vectors.
  LcpResult& invalid();

 private:
  std::vector<LcpResult> by_size_;
  LcpResult invalid_;
};

/// Resets `out` for a solve of size n: sizes λ and w (no allocation when they
/// already have n entries), clears basic and message, zero counters.
void reset_result(LcpResult& out, Eigen::Index n);

/// Writes a printf-style message into `message` through a fixed stack buffer
/// (no allocation when the string's capacity suffices).
void set_message(std::string& message, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/// Settles the problems that need no pivot: n = 0 and d ≥ 0 (λ = 0, Solved,
/// zero pivots), and M = 0 with some d_i < 0 (Infeasible: w_i = d_i for every
/// λ; certificate u = e_i). Returns true when `out` holds the answer.
bool settle_trivial(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                    const std::optional<double>& residual_tolerance, LcpResult& out);

/// Writes a failure outcome: λ as given (clamped ≥ 0), w = Mλ + d, the
/// residual and the default or given tolerance; status and message are the
/// caller's.
void fill_unsolved(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                   const Eigen::Ref<const VectorX>& lambda,
                   const std::optional<double>& residual_tolerance, LcpResult& out);

/// Writes the infeasibility proof of a valid certificate into `message`
/// after `prefix`: "… so no lambda >= 0 makes M lambda + d >= 0" when
/// Mᵀu ≤ 0 exactly, otherwise "… so every lambda >= 0 with M lambda + d >= 0
/// has |lambda|_1 >= bound".
void describe_certificate(std::string& message, const char* prefix, const FarkasCheck& check);

/// Explains why a final basis was not accepted (residual above tolerance or
/// amplification above lcp_max_amplification) after `prefix`.
void describe_rejection(std::string& message, const char* prefix, const LcpResult& out, double amplification,
                        double max_amplification);

/// The inverse of a pivoting method's basis B, which starts as the identity
/// (the slacks w basic) and has one column replaced per pivot. B⁻¹ then
/// differs from the identity only in the columns of the rows pivoted on so
/// far (with B = I + W E_Sᵀ, B⁻¹ = I − W (I + E_SᵀW)⁻¹ E_Sᵀ), and so does
/// every Gauss–Jordan update: a pivot, a product B⁻¹a and ‖B⁻¹‖∞ cost
/// O(n·|S|) with |S| the number of distinct pivot rows, instead of O(n²).
/// On the contact LCPs of a body resting on many dependent contacts
/// (n = 10·contacts with an 8-direction cone) Lemke's method visits a small
/// part of the rows. Storage is reserved once; nothing allocates after.
class BasisInverse {
 public:
  void reserve(int n);
  /// B = I of size n (n <= the reserved size).
  void reset(int n);
  int size() const { return n_; }
  /// (B⁻¹)ᵢₖ.
  double operator()(Eigen::Index i, Eigen::Index k) const {
    return touched_[static_cast<std::size_t>(k)] ? Binv_(i, k) : (i == k ? 1.0 : 0.0);
  }
  /// out = B⁻¹ eⱼ.
  void column(Eigen::Index j, Eigen::Ref<VectorX> out) const;
  /// out = B⁻¹ a.
  void times(const Eigen::Ref<const VectorX>& a, Eigen::Ref<VectorX> out) const;
  /// Gauss–Jordan pivot with `column` = B⁻¹a (the entering column) in row r:
  /// B⁻¹ becomes the inverse of the basis with column r replaced by a, and
  /// `x` (= B⁻¹d) follows. Returns ‖B⁻¹‖∞ of the updated inverse. `column`
  /// is used as scratch.
  /// @pre |column(r)| > 0.
  double pivot(Eigen::Ref<VectorX> x, Eigen::Ref<VectorX> column, Eigen::Index r);

 private:
  MatrixX Binv_;              // columns in cols_ hold B⁻¹; the others are eⱼ (not stored)
  VectorX row_, sums_;        // scratch of the pivot
  std::vector<char> touched_;  // column j stored
  std::vector<int> cols_;      // the stored columns, in pivot order
  int n_ = 0;
};

/// The scaled problem the pivoting methods work on,
///
///     M̂ = D M D / σM,   d̂ = D d / σd,   λ = (σd/σM)·D λ̂,   w = σd·D⁻¹ ŵ,
///
/// with D = diag(1/√M_ii) (Jacobi equilibration; rows with M_ii ≤ 0 use the
/// largest entry of their row and column instead), σM = ‖DMD‖∞, σd = ‖Dd‖∞.
/// A positive diagonal D maps solutions, certificates (u = Dû) and matrix
/// classes (P, PSD, copositive) one to one, and gives the tableau O(1)
/// entries even when the indices carry different units (contacts on light
/// and heavy bodies, forces beside torques), so one relative zero tolerance
/// fits every column.
class Equilibration {
 public:
  void reserve(int n);
  /// Computes D, σM and σd. @pre M ≠ 0, d ≠ 0 (settle_trivial handles those).
  void compute(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d);
  /// Column j of M̂.
  void column(const Eigen::Ref<const MatrixX>& M, Eigen::Index j, Eigen::Ref<VectorX> out) const;
  /// d̂ = D d / σd.
  void scaled_d(const Eigen::Ref<const VectorX>& d, Eigen::Ref<VectorX> out) const;
  /// λ = (σd/σM)·D λ̂ (also maps certificate directions).
  void unscale(const Eigen::Ref<const VectorX>& lambda_hat, Eigen::Ref<VectorX> out) const;
  /// The diagonal of D (n entries).
  Eigen::Ref<const VectorX> diagonal() const { return D_.head(n_); }
  double sigma_M() const { return sigma_M_; }
  double sigma_d() const { return sigma_d_; }
  /// lcp_amplification on the equilibrated problem, ‖DMD‖∞‖D⁻¹λ‖∞/‖Dd‖∞:
  /// independent of the units of the indices.
  double amplification(const Eigen::Ref<const VectorX>& lambda) const;

 private:
  VectorX D_;
  Eigen::Index n_ = 0;
  double sigma_M_ = 1.0;
  double sigma_d_ = 1.0;
};

/// check_farkas_certificate on the equilibrated problem: the bound is on
/// ‖D⁻¹λ‖₁ and is compared with n·max_amplification times the natural size
/// ‖Dd‖∞/‖DMD‖∞ of D⁻¹λ, so the verdict does not depend on the units of the
/// indices.
FarkasCheck check_farkas_certificate(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                                     const Eigen::Ref<const VectorX>& u, const Equilibration& equilibration,
                                     double max_amplification);

/// The last step of a pivoting method: given λ read from the final tableau and
/// the set J of basic λ indices, recompute λ_J from the principal subsystem
/// M_JJ λ_J = −d_J (equilibrated by D, then LU with partial pivoting), clamp
/// λ ≥ 0, keep whichever of the two candidates has the smaller residual,
/// recompute w, the residual and the tolerance into `out`. Returns
/// residual ≤ tolerance and amplification ≤ max_amplification.
class BasisPolish {
 public:
  void reserve(int n);
  bool finish(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
              const Equilibration& equilibration, const Eigen::Ref<const VectorX>& lambda_tableau,
              const std::vector<int>& J, const std::optional<double>& residual_tolerance,
              double max_amplification, LcpResult& out);
  /// Equilibration::amplification of the λ of the last finish(); finish()
  /// also fails when it exceeds max_amplification.
  double amplification() const { return amplification_; }
  /// The direction u with u_d = 1, M_JJ u_J = −M_Jd (so (Mu)_J = 0), other
  /// entries 0, negative entries clamped to 0, from a fresh factorization:
  /// a more accurate candidate certificate than the tableau's rates.
  /// Returns false if M_JJ is singular.
  bool null_direction(const Eigen::Ref<const MatrixX>& M, const Equilibration& equilibration,
                      const std::vector<int>& J, int d_index, Eigen::Ref<VectorX> u);
  /// λ with λ_J from the equilibrated principal subsystem M_JJ λ_J = −d_J
  /// (as finish() solves it, not clamped: negative entries show where J is
  /// wrong) and 0 elsewhere. Returns false if M_JJ is singular.
  bool basis_solution(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                      const Equilibration& equilibration, const std::vector<int>& J, Eigen::Ref<VectorX> lambda);

 private:
  bool solve_block(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& D,
                   const std::vector<int>& J);

  MatrixX lu_;
  VectorX rhs_;
  VectorX candidate_;
  double amplification_ = 0.0;
};

}  // namespace detail
}  // namespace plume
