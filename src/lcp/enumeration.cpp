#include "plume/lcp/enumeration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace plume {

namespace {

// The next larger integer with the same number of set bits (Gosper's hack).
std::uint32_t next_same_popcount(std::uint32_t x) {
  const std::uint32_t c = x & (~x + 1u);
  const std::uint32_t r = x + c;
  return (((r ^ x) >> 2) / c) | r;
}

}  // namespace

EnumerationSolver::EnumerationSolver(const EnumerationOptions& options) : options_(options) {}

void EnumerationSolver::solve(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                              LcpResult& out) {
  out.pivots = 0;
  out.residual = 0.0;
  out.tolerance = 0.0;
  out.basic.clear();
  out.status = LcpStatus::InvalidInput;
  if (!check_lcp_input(M, d, out.message)) return;
  if (options_.max_size < 0 || options_.max_size > 24) {
    detail::set_message(out.message, "EnumerationOptions::max_size = %d must be in [0, 24]", options_.max_size);
    return;
  }
  const int n = static_cast<int>(d.size());
  out.status = LcpStatus::Failed;
  if (n > options_.max_size) {
    detail::set_message(out.message, "enumeration: n = %d exceeds max_size = %d (2^n active sets)", n,
                        options_.max_size);
    return;
  }
  const double root_eps = std::sqrt(std::numeric_limits<double>::epsilon());
  out.lambda.setZero(n);
  lambda_.resize(n);
  double best_residual = std::numeric_limits<double>::infinity();
  // lcp_residual_scale and lcp_amplification of each candidate, with ‖M‖∞
  // and ‖d‖∞ taken once.
  const double m_norm = detail::max_abs_row_sum(M), d_norm = d.lpNorm<Eigen::Infinity>();
  long tried = 0;
  for (int size = 0; size <= n; ++size) {
    const std::uint32_t first = (1u << size) - 1u;
    const std::uint32_t end = 1u << n;
    for (std::uint32_t mask = first; mask < end;) {
      ++tried;
      J_.clear();
      for (int i = 0; i < n; ++i) {
        if (mask & (1u << i)) J_.push_back(i);
      }
      lambda_.setZero();
      bool ok = true;
      if (size > 0) {
        block_.resize(size, size);
        rhs_.resize(size);
        for (int a = 0; a < size; ++a) {
          rhs_(a) = -d(J_[a]);
          for (int b = 0; b < size; ++b) block_(a, b) = M(J_[a], J_[b]);
        }
        cod_.compute(block_);
        x_ = cod_.solve(rhs_);
        for (int a = 0; a < size; ++a) {
          if (!std::isfinite(x_(a))) ok = false;
          lambda_(J_[a]) = std::max(x_(a), 0.0);
        }
      }
      if (ok) {
        const double residual = lcp_residual(M, d, lambda_);
        const double l = lambda_.lpNorm<Eigen::Infinity>();
        const double tolerance = n == 0 ? 0.0 : root_eps * std::max({d_norm, l, m_norm * l});
        const double num = m_norm * l;
        const double amplification =
            num == 0.0 ? 0.0 : (d_norm > 0.0 ? num / d_norm : std::numeric_limits<double>::infinity());
        if (residual <= tolerance && amplification <= lcp_max_amplification()) {
          out.status = LcpStatus::Solved;
          out.lambda = lambda_;
          out.w = M * lambda_ + d;
          out.residual = residual;
          out.tolerance = tolerance;
          out.pivots = static_cast<int>(tried);
          for (int i : J_) {
            if (lambda_(i) > 0.0) out.basic.push_back(i);
          }
          detail::set_message(out.message, "enumeration: solved with %d active of %d after %ld active sets, residual %.3g",
                              static_cast<int>(out.basic.size()), n, tried, residual);
          return;
        }
        if (residual < best_residual) best_residual = residual;
      }
      if (size == 0) break;
      mask = next_same_popcount(mask);
    }
  }
  out.pivots = static_cast<int>(tried);
  out.w = d;
  detail::set_message(out.message,
                      "enumeration: no solution among the 2^%d = %ld active sets (smallest residual %.3g)", n, tried,
                      best_residual);
}

}  // namespace plume
