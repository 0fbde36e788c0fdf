#include "plume/lcp/pgs.hpp"

#include <cmath>
#include <limits>

namespace plume {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double clamp(double x, double lo, double hi) { return std::min(std::max(x, lo), hi); }

}  // namespace

PgsSolver::PgsSolver(const PgsOptions& options) : options_(options) {}

void PgsSolver::reserve(int n) {
  bank_.reserve(n);
  reserve_workspace(n);
}

void PgsSolver::reserve_workspace(int n) {
  if (n <= capacity_) return;
  lambda_.resize(n);
  w_.resize(n);
  lo_.resize(n);
  hi_.resize(n);
  capacity_ = n;
}

bool PgsSolver::validate(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                         const Eigen::Ref<const VectorX>& lower, const Eigen::Ref<const VectorX>& upper,
                         const Eigen::Ref<const VectorX>* lambda0, LcpResult& out) const {
  using detail::set_message;
  out.status = LcpStatus::InvalidInput;
  out.pivots = 0;
  out.residual = 0.0;
  out.tolerance = 0.0;
  out.basic.clear();
  std::string& msg = out.message;
  if (!check_lcp_input(M, d, msg)) return false;
  const int n = static_cast<int>(d.size());
  if (lower.size() != n) {
    set_message(msg, "lower has %d entries, expected %d", static_cast<int>(lower.size()), n);
    return false;
  }
  if (upper.size() != n) {
    set_message(msg, "upper has %d entries, expected %d", static_cast<int>(upper.size()), n);
    return false;
  }
  for (int i = 0; i < n; ++i) {
    if (std::isnan(lower(i)) || lower(i) == kInf) {
      set_message(msg, "lower[%d] is %g", i, lower(i));
      return false;
    }
    if (std::isnan(upper(i)) || upper(i) == -kInf) {
      set_message(msg, "upper[%d] is %g", i, upper(i));
      return false;
    }
    if (lower(i) > upper(i)) {
      set_message(msg, "lower[%d] = %g > upper[%d] = %g", i, lower(i), i, upper(i));
      return false;
    }
    if (M(i, i) < 0.0) {
      set_message(msg, "M(%d,%d) = %g < 0: projected Gauss-Seidel needs a nonnegative diagonal", i, i,
                  M(i, i));
      return false;
    }
  }
  const PgsOptions& o = options_;
  if (o.max_iterations < 0) {
    set_message(msg, "PgsOptions::max_iterations = %d is negative", o.max_iterations);
    return false;
  }
  if (!(o.relaxation > 0.0 && o.relaxation < 2.0)) {
    set_message(msg, "PgsOptions::relaxation = %g is outside (0, 2)", o.relaxation);
    return false;
  }
  if (!(o.tolerance >= 0.0)) {
    set_message(msg, "PgsOptions::tolerance = %g must be >= 0", o.tolerance);
    return false;
  }
  if (o.residual_tolerance && !(*o.residual_tolerance >= 0.0)) {
    set_message(msg, "PgsOptions::residual_tolerance = %g must be >= 0", *o.residual_tolerance);
    return false;
  }
  if (!o.normal_index.empty()) {
    if (static_cast<int>(o.normal_index.size()) != n) {
      set_message(msg, "PgsOptions::normal_index has %d entries, expected 0 or %d",
                  static_cast<int>(o.normal_index.size()), n);
      return false;
    }
    bool any_friction = false;
    for (int i = 0; i < n; ++i) {
      const int k = o.normal_index[static_cast<std::size_t>(i)];
      if (k < -1 || k >= n) {
        set_message(msg, "PgsOptions::normal_index[%d] = %d is out of range [-1, %d)", i, k, n);
        return false;
      }
      if (k < 0) continue;
      any_friction = true;
      if (k == i || o.normal_index[static_cast<std::size_t>(k)] >= 0) {
        set_message(msg, "PgsOptions::normal_index[%d] = %d refers to a friction row (row %d must have fixed bounds)",
                    i, k, k);
        return false;
      }
    }
    if (any_friction && o.mu.size() != n) {
      set_message(msg, "PgsOptions::mu has %d entries, expected %d", static_cast<int>(o.mu.size()), n);
      return false;
    }
    for (int i = 0; any_friction && i < n; ++i) {
      if (o.normal_index[static_cast<std::size_t>(i)] >= 0 && !(o.mu(i) >= 0.0 && std::isfinite(o.mu(i)))) {
        set_message(msg, "PgsOptions::mu[%d] = %g must be finite and >= 0", i, o.mu(i));
        return false;
      }
    }
  }
  if (lambda0) {
    if (lambda0->size() != n) {
      set_message(msg, "warm start has %d entries, expected %d", static_cast<int>(lambda0->size()), n);
      return false;
    }
    for (int i = 0; i < n; ++i) {
      if (!std::isfinite((*lambda0)(i))) {
        set_message(msg, "warm start [%d] is %g", i, (*lambda0)(i));
        return false;
      }
    }
  }
  return true;
}

const LcpResult& PgsSolver::solve_banked(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                                         const Eigen::Ref<const VectorX>& lower,
                                         const Eigen::Ref<const VectorX>& upper,
                                         const Eigen::Ref<const VectorX>* lambda0) {
  LcpResult& invalid = bank_.invalid();
  if (!validate(M, d, lower, upper, lambda0, invalid)) return invalid;
  LcpResult& out = bank_.for_size(static_cast<int>(d.size()));  // keeps λ's values (λ₀ may alias them)
  run(M, d, lower, upper, lambda0, out);
  return out;
}

const LcpResult& PgsSolver::solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                                  const Eigen::Ref<const VectorX>& lower, const Eigen::Ref<const VectorX>& upper) {
  if (options_.warm_start.size() == 0) return solve_banked(M, d, lower, upper, nullptr);
  const Eigen::Ref<const VectorX> lambda0(options_.warm_start);
  return solve_banked(M, d, lower, upper, &lambda0);
}

const LcpResult& PgsSolver::solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                                  const Eigen::Ref<const VectorX>& lower, const Eigen::Ref<const VectorX>& upper,
                                  const Eigen::Ref<const VectorX>& lambda0) {
  return solve_banked(M, d, lower, upper, &lambda0);
}

void PgsSolver::solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                      const Eigen::Ref<const VectorX>& lower, const Eigen::Ref<const VectorX>& upper,
                      LcpResult& out) {
  const Eigen::Ref<const VectorX> warm(options_.warm_start);
  const Eigen::Ref<const VectorX>* lambda0 = options_.warm_start.size() > 0 ? &warm : nullptr;
  if (!validate(M, d, lower, upper, lambda0, out)) {
    out.lambda.resize(0);
    out.w.resize(0);
    return;
  }
  detail::reset_result(out, d.size());
  run(M, d, lower, upper, lambda0, out);
}

void PgsSolver::run(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                    const Eigen::Ref<const VectorX>& lower, const Eigen::Ref<const VectorX>& upper,
                    const Eigen::Ref<const VectorX>* lambda0, LcpResult& out) {
  const int n = static_cast<int>(d.size());
  reserve_workspace(n);
  if (n == 0) {
    out.status = LcpStatus::Solved;
    out.tolerance = options_.residual_tolerance ? *options_.residual_tolerance : 0.0;
    detail::set_message(out.message, "empty problem (n = 0)");
    return;
  }
  auto lam = lambda_.head(n);
  auto w = w_.head(n);
  auto lo = lo_.head(n);
  auto hi = hi_.head(n);
  const std::vector<int>& normal = options_.normal_index;
  const bool friction = !normal.empty();
  const double omega = options_.relaxation;

  // The bounds in effect for row i: fixed, or ±μ_i·max(λ_n(i), 0).
  auto bounds = [&](int i, double& l, double& h) {
    const int k = friction ? normal[static_cast<std::size_t>(i)] : -1;
    if (k >= 0) {
      h = options_.mu(i) * std::max(lam(k), 0.0);
      l = -h;
    } else {
      l = lower(i);
      h = upper(i);
    }
  };
  auto refresh = [&]() {  // exact w, bounds at λ, exact residual
    w.noalias() = M * lam;
    w += d;
    for (int i = 0; i < n; ++i) bounds(i, lo(i), hi(i));
    return box_lcp_residual(M, d, lo, hi, lam);
  };
  const double norm_M = detail::max_abs_row_sum(M);
  const double norm_d = d.lpNorm<Eigen::Infinity>();
  auto tolerance = [&]() {
    if (options_.residual_tolerance) return *options_.residual_tolerance;
    const double l = lam.lpNorm<Eigen::Infinity>();
    return options_.tolerance * std::max({norm_d, l, norm_M * l});
  };
  auto finish = [&](LcpStatus status, double residual) {
    out.lambda = lam;
    out.w = w;
    out.residual = residual;
    out.tolerance = tolerance();
    out.status = status;
    for (int i = 0; i < n; ++i)
      if (lam(i) != 0.0) out.basic.push_back(i);
  };

  // Start: λ₀ (copied first: it may alias out.lambda) projected on the bounds,
  // fixed rows before friction rows (whose bounds depend on them).
  if (lambda0) {
    lam = *lambda0;
  } else {
    lam.setZero();
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < n; ++i) {
      const bool is_friction = friction && normal[static_cast<std::size_t>(i)] >= 0;
      if (is_friction != (pass == 1)) continue;
      double l, h;
      bounds(i, l, h);
      lam(i) = clamp(lam(i), l, h);
    }
  }
  double residual = refresh();

  // A zero row i with fixed bounds: w_i = d_i whatever λ is.
  for (int i = 0; i < n; ++i) {
    if (M(i, i) != 0.0 || (friction && normal[static_cast<std::size_t>(i)] >= 0)) continue;
    if (!M.row(i).isZero(0.0)) continue;
    const bool up = d(i) < 0.0 && upper(i) == kInf;
    const bool down = d(i) > 0.0 && lower(i) == -kInf;
    if (up || down) {
      finish(LcpStatus::Infeasible, residual);
      detail::set_message(out.message,
                          "row %d of M is zero and d[%d] = %g with %s[%d] = %s: w_%d = d[%d] %s 0 for every "
                          "lambda, so no admissible lambda_%d exists",
                          i, i, d(i), up ? "upper" : "lower", i, up ? "+inf" : "-inf", i, i, up ? "<" : ">", i);
      return;
    }
  }

  if (residual <= tolerance()) {
    finish(LcpStatus::Solved, residual);
    detail::set_message(out.message, "the starting point solves it: residual %.3g <= %.3g", out.residual,
                        out.tolerance);
    return;
  }

  for (int sweep = 1; sweep <= options_.max_iterations; ++sweep) {
    for (int i = 0; i < n; ++i) {
      double l, h;
      bounds(i, l, h);
      const double mii = M(i, i);
      double x;
      if (mii > 0.0) {
        x = lam(i) - omega * w(i) / mii;  // projected SOR step
      } else {
        x = w(i) > 0.0 ? l : (w(i) < 0.0 ? h : lam(i));  // w_i does not depend on λ_i
      }
      x = clamp(x, l, h);
      if (!std::isfinite(x)) x = lam(i);  // an infinite bound: no finite move helps
      const double delta = x - lam(i);
      if (delta != 0.0) {
        w.noalias() += delta * M.col(i);
        lam(i) = x;
      }
    }
    out.pivots = sweep;

    // Cheap check with the maintained w; confirm with an exact residual.
    double r = 0.0;
    for (int i = 0; i < n; ++i) {
      double l, h;
      bounds(i, l, h);
      r = std::max(r, std::abs(lam(i) - clamp(lam(i) - w(i), l, h)));
    }
    if (std::isnan(r) || !std::isfinite(lam.sum())) {
      residual = refresh();
      finish(LcpStatus::Failed, residual);
      detail::set_message(out.message, "iterates became non-finite at sweep %d (diverged)", sweep);
      return;
    }
    if (r <= tolerance()) {
      residual = refresh();  // also removes the drift of the maintained w
      if (residual <= tolerance()) {
        finish(LcpStatus::Solved, residual);
        detail::set_message(out.message, "converged in %d sweeps, residual %.3g <= %.3g", sweep, out.residual,
                            out.tolerance);
        return;
      }
    }
  }
  residual = refresh();
  finish(LcpStatus::IterationLimit, residual);
  detail::set_message(out.message, "not converged after %d sweeps: residual %.3g > tolerance %.3g",
                      options_.max_iterations, out.residual, out.tolerance);
}

LcpResult solve_pgs(const LcpProblem& problem, const VectorX& lower, const VectorX& upper,
                    const PgsOptions& options) {
  PgsSolver solver(options);
  LcpResult result;
  solver.solve(problem.M, problem.d, lower, upper, result);
  return result;
}

LcpResult solve_pgs(const LcpProblem& problem, const PgsOptions& options) {
  const Eigen::Index n = problem.d.size();
  return solve_pgs(problem, VectorX::Zero(n), VectorX::Constant(n, std::numeric_limits<double>::infinity()),
                   options);
}

}  // namespace plume
