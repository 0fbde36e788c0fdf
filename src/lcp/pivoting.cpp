#include "plume/lcp/pivoting.hpp"

#include "pivoting_checks.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace plume {

PivotingSolver::PivotingSolver(const PivotingOptions& options) : options_(options) {}

void PivotingSolver::reserve(int n) {
  bank_.reserve(n);
  reserve_workspace(n);
}

void PivotingSolver::reserve_workspace(int n) {
  if (n <= capacity_) return;
  Binv_.reserve(n);
  rates_.resize(n);
  column_.resize(n);
  unused_.resize(n);
  lambda_.resize(n);
  w_.resize(n);
  u_.resize(n);
  scratch_.resize(n);
  equilibration_.reserve(n);
  clamped_.resize(static_cast<std::size_t>(n));
  dependent_.resize(static_cast<std::size_t>(n));
  clamped_list_.reserve(static_cast<std::size_t>(n));
  polish_.reserve(n);
  capacity_ = n;
}

bool PivotingSolver::validate(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                              LcpResult& out) const {
  return detail::validate_pivoting_input("PivotingOptions", options_, M, d, out);
}

const LcpResult& PivotingSolver::solve(const Eigen::Ref<const MatrixX>& M,
                                       const Eigen::Ref<const VectorX>& d) {
  LcpResult& invalid = bank_.invalid();
  if (!validate(M, d, invalid)) return invalid;
  LcpResult& out = bank_.for_size(static_cast<int>(d.size()));
  run(M, d, out);
  return out;
}

void PivotingSolver::solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                           LcpResult& out) {
  if (!validate(M, d, out)) {
    out.lambda.resize(0);
    out.w.resize(0);
    return;
  }
  detail::reset_result(out, d.size());
  run(M, d, out);
}

void PivotingSolver::run(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                         LcpResult& out) {
  const int n = static_cast<int>(d.size());
  if (detail::settle_trivial(M, d, options_.residual_tolerance, out)) return;
  reserve_workspace(n);

  // The equilibrated, scaled problem (M̂, d̂) of detail::Equilibration, as in Lemke.
  equilibration_.compute(M, d);
  const double zt = options_.zero_tolerance ? *options_.zero_tolerance
                                            : static_cast<double>(n) * 10.0 * std::numeric_limits<double>::epsilon();
  const double max_amp = options_.max_amplification.value_or(lcp_max_amplification());
  const int max_pivots = options_.max_pivots > 0 ? options_.max_pivots : std::max(1000, 100 * n);
  constexpr double kInf = std::numeric_limits<double>::infinity();

  detail::BasisInverse& Binv = Binv_;
  auto a = rates_.head(n);
  auto col = column_.head(n);
  auto rhs = unused_.head(n);
  auto lam = lambda_.head(n);
  auto w = w_.head(n);
  auto u = u_.head(n);
  auto scratch = scratch_.head(n);
  Binv.reset(n);
  rhs.setZero();
  lam.setZero();
  equilibration_.scaled_d(d, w);
  for (int i = 0; i < n; ++i) clamped_[i] = 0;

  // Pivot-entry noise grows with ‖B⁻¹‖∞ (see lemke.cpp): so does the
  // tolerance for "this rate is zero".
  double growth = 1.0;
  auto unscaled_lambda = [&]() { equilibration_.unscale(lam, u); };
  auto give_up = [&](LcpStatus status) {
    unscaled_lambda();
    detail::fill_unsolved(M, d, u, options_.residual_tolerance, out);
    out.status = status;
  };
  // Principal pivot in slot j: the complement of the basic variable of slot j
  // enters with B⁻¹-column `col`. Returns false on a vanishing pivot.
  auto principal_pivot = [&](int j) {
    if (!(std::abs(col(j)) > zt * growth)) return false;
    growth = std::max(1.0, Binv.pivot(rhs, col, j));
    clamped_[j] = !clamped_[j];
    ++out.pivots;
    return true;
  };

  while (true) {
    // Major cycle: the most negative w_d, ties to the least index.
    int dd = -1;
    for (int i = 0; i < n; ++i)
      if (!clamped_[i] && w(i) < -zt && (dd < 0 || w(i) < w(dd))) dd = i;
    if (dd < 0) break;
    for (int i = 0; i < n; ++i) dependent_[i] = 0;

    while (true) {
      if (out.pivots >= max_pivots) {
        give_up(LcpStatus::IterationLimit);
        detail::set_message(out.message,
                            "pivot limit %d reached while driving w[%d] to zero; raise "
                            "PivotingOptions::max_pivots",
                            max_pivots, dd);
        return;
      }
      // Rates along Δλ_d = 1: basic λ_C and basic w off C (Δw_C = 0).
      equilibration_.column(M, dd, scratch);
      Binv.times(scratch, a);
      const double ptol = zt * growth;

      // Step length to the first blocking event (see the header).
      auto step_to_block = [&](int i) {
        if (i == dd) return a(i) > ptol ? -w(i) / a(i) : kInf;
        if (clamped_[i]) return a(i) < -ptol ? std::max(lam(i), 0.0) / -a(i) : kInf;
        if (w(i) >= -zt && a(i) < -ptol && !dependent_[i]) return std::max(w(i), 0.0) / -a(i);  // guarded
        return kInf;  // violated (or dependent) free w_i: unguarded
      };
      double s = kInf;
      for (int i = 0; i < n; ++i) s = std::min(s, step_to_block(i));

      if (s == kInf) {
        // λ_d increases without bound: u = Δλ is the candidate certificate.
        // First from a fresh factorization of M_CC (accurate even when
        // the tableau has lost digits), then from the tableau's rates.
        out.basic.clear();
        for (int i = 0; i < n; ++i)
          if (clamped_[i]) out.basic.push_back(i);
        FarkasCheck cert;
        if (polish_.null_direction(M, equilibration_, out.basic, dd, u))
          cert = detail::check_farkas_certificate(M, d, u, equilibration_, max_amp);
        if (!cert.valid) {
          scratch.setZero();
          scratch(dd) = 1.0;
          for (int i = 0; i < n; ++i)
            if (clamped_[i]) scratch(i) = std::max(a(i), 0.0);
          equilibration_.unscale(scratch, u);  // u = Dû, up to a positive factor
          cert = detail::check_farkas_certificate(M, d, u, equilibration_, max_amp);
        }
        const double rate = a(dd);
        give_up(cert.valid ? LcpStatus::Infeasible : LcpStatus::Failed);
        char prefix[160];
        std::snprintf(prefix, sizeof prefix,
                      "driving lambda[%d] (w[%d] = %.3g) increases without bound after %d pivots "
                      "(scaled rate of w[%d] = %.3g, nothing blocks)",
                      dd, dd, out.w(dd), out.pivots, dd, rate);
        if (cert.valid) {
          detail::describe_certificate(out.message, prefix, cert);
        } else {
          detail::set_message(out.message,
                              "%s, but u = dlambda is no Farkas certificate (max(M^T u) = %.3g, u^T d = %.3g): "
                              "M is not symmetric positive semi-definite, or the clamped set is too "
                              "ill-conditioned (|B^-1| = %.3g)",
                              prefix, cert.max_MTu, cert.uTd, growth);
        }
        return;
      }

      // The blocking index: d first, then the least index among the ties.
      const double tie = ptol * std::max(1.0, s);
      int j = -1;
      if (step_to_block(dd) <= s + tie) {
        j = dd;
      } else {
        for (int i = 0; i < n && j < 0; ++i)
          if (step_to_block(i) <= s + tie) j = i;
      }

      // Move to the blocking point.
      for (int i = 0; i < n; ++i) {
        if (clamped_[i]) {
          lam(i) += s * a(i);
        } else {
          w(i) += s * a(i);
        }
      }
      lam(dd) += s;

      if (j == dd) {
        w(dd) = 0.0;  // event 1: λ_d enters for w_d (column B⁻¹(−M_:,d/σM) = −a)
        col = -a;
      } else if (clamped_[j]) {
        lam(j) = 0.0;  // event 2: w_j enters for λ_j (column B⁻¹ e_j)
        Binv.column(j, col);
      } else {
        w(j) = 0.0;  // event 3: λ_j enters for w_j
        equilibration_.column(M, j, scratch);
        Binv.times(scratch, col);
        col = -col;
      }
      if (!principal_pivot(j)) {
        if (j != dd && !clamped_[j]) {
          // Event 3 with a vanishing pivot: column j is numerically
          // dependent on the clamped ones (its Schur complement is noise),
          // so in exact arithmetic Δw_j would be 0 too. Leave j unguarded
          // for this drive instead of clamping it; if w_j goes negative it
          // is driven later.
          dependent_[j] = 1;
          continue;
        }
        // Events 1 and 2 cannot vanish for symmetric PSD or P-matrices.
        give_up(LcpStatus::Failed);
        detail::set_message(out.message,
                            "vanishing principal pivot %.3g at index %d while driving w[%d] (after %d "
                            "pivots, |B^-1| = %.3g): M is not symmetric positive semi-definite or a P-matrix, "
                            "or the clamped set is too ill-conditioned",
                            col(j), j, dd, out.pivots, growth);
        return;
      }
      if (j == dd) break;
    }
  }

  // Every w_i ≥ 0 off C, every λ_i ≥ 0 on C: the basis is complementary and
  // feasible. Recompute λ_C from M_CC λ_C = −d_C and check the residual.
  unscaled_lambda();
  for (int i = 0; i < n; ++i)
    if (clamped_[i]) out.basic.push_back(i);
  if (polish_.finish(M, d, equilibration_, u, out.basic, options_.residual_tolerance, max_amp, out)) {
    out.status = LcpStatus::Solved;
    detail::set_message(out.message, "solved in %d principal pivots, residual %.3g <= %.3g", out.pivots,
                        out.residual, out.tolerance);
  } else {
    out.status = LcpStatus::Failed;
    char prefix[96];
    std::snprintf(prefix, sizeof prefix, "complementary feasible basis after %d pivots", out.pivots);
    detail::describe_rejection(out.message, prefix, out, polish_.amplification(), max_amp);
  }
}

LcpResult solve_pivoting(const LcpProblem& problem, const PivotingOptions& options) {
  PivotingSolver solver(options);
  LcpResult result;
  solver.solve(problem.M, problem.d, result);
  return result;
}

}  // namespace plume
