#include "plume/lcp/lemke.hpp"

#include "pivoting_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace plume {

namespace {

// The tableau's variables are numbered w_i = i, λ_i = n + i, z₀ = 2n.
int complement(int var, int n) { return var < n ? var + n : var - n; }

// "w[3]", "lambda[3]" or "z0", for messages.
void variable_name(int var, int n, char* buffer, std::size_t size) {
  if (var < n) {
    std::snprintf(buffer, size, "w[%d]", var);
  } else if (var < 2 * n) {
    std::snprintf(buffer, size, "lambda[%d]", var - n);
  } else {
    std::snprintf(buffer, size, "z0");
  }
}

}  // namespace

LemkeSolver::LemkeSolver(const LemkeOptions& options) : options_(options) {}

void LemkeSolver::reserve(int n) {
  bank_.reserve(n);
  reserve_workspace(n);
}

void LemkeSolver::reserve_workspace(int n) {
  if (n <= capacity_) return;
  Binv_.reserve(n);
  x_.resize(n);
  column_.resize(n);
  lambda_.resize(n);
  scratch_.resize(n);
  equilibration_.reserve(n);
  basis_.resize(static_cast<std::size_t>(n));
  position_.resize(2 * static_cast<std::size_t>(n) + 1);
  ties_.reserve(static_cast<std::size_t>(n));
  polish_.reserve(n);
  capacity_ = n;
}

bool LemkeSolver::validate(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                           LcpResult& out) const {
  return detail::validate_pivoting_input("LemkeOptions", options_, M, d, out);
}

const LcpResult& LemkeSolver::solve(const Eigen::Ref<const MatrixX>& M,
                                    const Eigen::Ref<const VectorX>& d) {
  LcpResult& invalid = bank_.invalid();
  if (!validate(M, d, invalid)) return invalid;
  LcpResult& out = bank_.for_size(static_cast<int>(d.size()));
  run(M, d, out);
  return out;
}

void LemkeSolver::solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                        LcpResult& out) {
  if (!validate(M, d, out)) {
    out.lambda.resize(0);
    out.w.resize(0);
    return;
  }
  detail::reset_result(out, d.size());
  run(M, d, out);
}

void LemkeSolver::run(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                      LcpResult& out) {
  const int n = static_cast<int>(d.size());
  if (detail::settle_trivial(M, d, options_.residual_tolerance, out)) return;
  reserve_workspace(n);

  // Pivot on the equilibrated, scaled problem (M̂, d̂) of detail::Equilibration:
  // all tableau entries start O(1), so one relative zero tolerance fits.
  equilibration_.compute(M, d);
  const double zt = options_.zero_tolerance ? *options_.zero_tolerance
                                            : static_cast<double>(n) * 10.0 * std::numeric_limits<double>::epsilon();
  const double max_amp = options_.max_amplification.value_or(lcp_max_amplification());
  const int max_pivots = options_.max_pivots > 0 ? options_.max_pivots : std::max(1000, 100 * n);
  const int z0 = 2 * n;

  detail::BasisInverse& Binv = Binv_;
  auto x = x_.head(n);
  auto a = column_.head(n);
  auto lam = lambda_.head(n);
  auto scratch = scratch_.head(n);
  Binv.reset(n);
  equilibration_.scaled_d(d, x);
  for (int i = 0; i < n; ++i) {
    basis_[i] = i;  // w basic: B = I
    position_[i] = i;
    position_[n + i] = -1;
  }
  position_[z0] = -1;

  // Entries of a column B⁻¹A carry rounding noise of order ε‖B⁻¹‖∞: the
  // zero tolerance grows with ‖B⁻¹‖∞ (1 at the start) so that the method
  // never pivots on noise when bases become ill-conditioned (redundant
  // contacts make M singular).
  double growth = 1.0;

  // Reads λ (on the original scale) from the tableau.
  auto read_lambda = [&]() {
    for (int j = 0; j < n; ++j) {
      const int r = position_[n + j];
      scratch(j) = r >= 0 ? x(r) : 0.0;
    }
    equilibration_.unscale(scratch, lam);
  };
  // Reads λ and its basic set J into `out`, recomputes λ_J from
  // M_JJ λ_J = −d_J, and tells whether that point solves the LCP.
  auto settle_current_point = [&]() {
    read_lambda();
    out.basic.clear();
    for (int j = 0; j < n; ++j)
      if (position_[n + j] >= 0) out.basic.push_back(j);
    return polish_.finish(M, d, equilibration_, lam, out.basic, options_.residual_tolerance, max_amp, out);
  };
  auto do_pivot = [&](int r, int entering) {
    const int leaving = basis_[r];
    growth = std::max(1.0, Binv.pivot(x, a, r));
    basis_[r] = entering;
    position_[entering] = r;
    position_[leaving] = -1;
    ++out.pivots;
    return leaving;
  };

  // First pivot: z₀ enters (column −e) at the level −min d, replacing the
  // row with the most negative d. The lexicographic rule with B = I breaks
  // ties in favour of the largest index (CPS ch. 4).
  int r = 0;
  const double xmin = x.minCoeff();
  for (int i = 0; i < n; ++i)
    if (x(i) <= xmin + zt) r = i;
  a.setConstant(-1.0);
  int leaving = do_pivot(r, z0);
  int entering = complement(leaving, n);

  char name[32];
  char prefix[160];
  while (true) {
    const double z0_level = position_[z0] >= 0 ? x(position_[z0]) : 0.0;
    if (out.pivots >= max_pivots) {
      if (settle_current_point()) {
        out.status = LcpStatus::Solved;
        detail::set_message(out.message,
                            "pivot limit %d reached, but lambda from the current basic set solves it: "
                            "residual %.3g <= %.3g",
                            max_pivots, out.residual, out.tolerance);
        return;
      }
      out.status = LcpStatus::IterationLimit;
      detail::set_message(out.message, "pivot limit %d reached (z0 = %g); raise LemkeOptions::max_pivots",
                          max_pivots, z0_level);
      return;
    }

    // The entering column in the current basis: B⁻¹ times e_i or −M̂_:,j.
    if (entering < n) {
      Binv.column(entering, a);
    } else {
      equilibration_.column(M, entering - n, scratch);
      Binv.times(scratch, a);
      a = -a;
    }
    const double ptol = zt * growth;

    // Minimum ratio over the rows whose basic variable decreases.
    double theta = std::numeric_limits<double>::infinity();
    for (int i = 0; i < n; ++i)
      if (a(i) > ptol) theta = std::min(theta, std::max(x(i), 0.0) / a(i));

    if (theta == std::numeric_limits<double>::infinity()) {
      // Secondary ray: the entering variable grows without bound. Its λ-part
      // u (entering variable at rate 1, basic λ's at rate −a) is the
      // candidate Farkas certificate (CPS ch. 4).
      // (û for the equilibrated problem; u = Dû up to a positive factor.)
      scratch.setZero();
      if (entering >= n) scratch(entering - n) = 1.0;
      for (int i = 0; i < n; ++i)
        if (basis_[i] >= n && basis_[i] < z0) scratch(basis_[i] - n) = std::max(-a(i), 0.0);
      equilibration_.unscale(scratch, lam);
      const FarkasCheck cert = detail::check_farkas_certificate(M, d, lam, equilibration_, max_amp);
      variable_name(entering, n, name, sizeof name);
      std::snprintf(prefix, sizeof prefix, "secondary ray at pivot %d, entering variable %s (z0 = %.3g)",
                    out.pivots, name, z0_level);
      // With z₀ near zero the current basic set may already give a solution.
      if (settle_current_point()) {
        out.status = LcpStatus::Solved;
        detail::set_message(out.message, "%s, but lambda from its basic set solves it: residual %.3g <= %.3g",
                            prefix, out.residual, out.tolerance);
        return;
      }
      if (cert.valid) {
        out.status = LcpStatus::Infeasible;
        detail::describe_certificate(out.message, prefix, cert);
      } else {
        out.status = LcpStatus::Failed;
        detail::set_message(out.message,
                            "%s, but its lambda-part u is no Farkas certificate (max(M^T u) = %.3g, "
                            "u^T d = %.3g): M is not copositive-plus, or the basis is too ill-conditioned "
                            "(|B^-1| = %.3g); a solution may exist",
                            prefix, cert.max_MTu, cert.uTd, growth);
      }
      return;
    }

    // Rows tied at the minimum ratio; z₀ leaves first if it is among them,
    // otherwise the lexicographic rule compares (B⁻¹)_i,k / a_i for k = 0, 1, …
    ties_.clear();
    const double tie = (options_.growth_scaled_ties ? ptol : 10.0 * zt) * std::max(1.0, theta);
    for (int i = 0; i < n; ++i)
      if (a(i) > ptol && std::max(x(i), 0.0) / a(i) <= theta + tie) ties_.push_back(i);
    r = ties_.front();
    if (ties_.size() > 1) {
      const int z0_row = position_[z0];
      if (z0_row >= 0 && std::find(ties_.begin(), ties_.end(), z0_row) != ties_.end()) {
        r = z0_row;
      } else {
        for (int k = 0; k < n && ties_.size() > 1; ++k) {
          double best = std::numeric_limits<double>::infinity();
          for (int i : ties_) best = std::min(best, Binv(i, k) / a(i));
          const double tol = ptol * std::max(1.0, std::abs(best));
          auto keep_end = std::remove_if(ties_.begin(), ties_.end(),
                                         [&](int i) { return Binv(i, k) / a(i) > best + tol; });
          ties_.erase(keep_end, ties_.end());
        }
        r = ties_.front();
      }
    }

    leaving = do_pivot(r, entering);
    if (leaving == z0) break;
    entering = complement(leaving, n);
  }

  // z₀ left the basis: the basis is complementary and feasible.
  if (settle_current_point()) {
    out.status = LcpStatus::Solved;
    detail::set_message(out.message, "solved in %d pivots, residual %.3g <= %.3g", out.pivots, out.residual,
                        out.tolerance);
  } else {
    out.status = LcpStatus::Failed;
    std::snprintf(prefix, sizeof prefix, "z0 left the basis after %d pivots (|B^-1| = %.3g)", out.pivots, growth);
    detail::describe_rejection(out.message, prefix, out, polish_.amplification(), max_amp);
  }
}

LcpResult solve_lemke(const LcpProblem& problem, const LemkeOptions& options) {
  LemkeSolver solver(options);
  LcpResult result;
  solver.solve(problem.M, problem.d, result);
  return result;
}

}  // namespace plume
