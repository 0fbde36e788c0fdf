#pragma once
// Drift correction's one computation, shared by the event-driven
// (drift_correction.cpp) and time-stepping (time_stepping_drift.cpp)
// schemes: the least change of q or v, in the metric of H, that moves the
// constraint values Kᵀx by r.

#include <Eigen/LU>

#include "plume/data.hpp"
#include "plume/model.hpp"

namespace plume::detail {

struct HMetricCorrection {
  /// x = H⁻¹K (KᵀH⁻¹K)⁻¹ r, dependent rows regularised by 1e-12 of the
  /// largest diagonal entry; `data` holds H's LᵀDL factor (ltdl). The result
  /// is `x` (and returned).
  const VectorX& solve(const Model& model, const Data& data, const Eigen::Ref<const MatrixX>& K,
                       const Eigen::Ref<const VectorX>& r);

  MatrixX Y, A;
  Eigen::PartialPivLU<MatrixX> lu;
  VectorX mult, x;
};

}  // namespace plume::detail
