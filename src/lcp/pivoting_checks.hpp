// Input checks shared by the two pivoting solvers (LemkeSolver and
// PivotingSolver): the LCP itself and the four options both have.
#pragma once

#include <cmath>
#include <string>

#include "plume/lcp/lcp.hpp"

namespace plume::detail {

/// Resets `out` to InvalidInput and checks (M, d) and the options' max_pivots,
/// zero_tolerance, residual_tolerance and max_amplification. On failure,
/// `out.message` names the offending value, prefixed by `options_name`
/// ("LemkeOptions", "PivotingOptions"). Returns true if all are valid.
template <class Options>
bool validate_pivoting_input(const char* options_name, const Options& options, const Eigen::Ref<const MatrixX>& M,
                             const Eigen::Ref<const VectorX>& d, LcpResult& out) {
  out.status = LcpStatus::InvalidInput;
  out.pivots = 0;
  out.residual = 0.0;
  out.tolerance = 0.0;
  out.basic.clear();
  if (!check_lcp_input(M, d, out.message)) return false;
  if (options.max_pivots < 0) {
    set_message(out.message, "%s::max_pivots = %d is negative", options_name, options.max_pivots);
    return false;
  }
  if (options.zero_tolerance && !(*options.zero_tolerance > 0.0 && std::isfinite(*options.zero_tolerance))) {
    set_message(out.message, "%s::zero_tolerance = %g must be positive and finite", options_name,
                *options.zero_tolerance);
    return false;
  }
  if (options.residual_tolerance && !(*options.residual_tolerance >= 0.0)) {
    set_message(out.message, "%s::residual_tolerance = %g must be >= 0", options_name, *options.residual_tolerance);
    return false;
  }
  if (options.max_amplification && !(*options.max_amplification > 0.0)) {
    set_message(out.message, "%s::max_amplification = %g must be positive", options_name,
                *options.max_amplification);
    return false;
  }
  return true;
}

}  // namespace plume::detail
