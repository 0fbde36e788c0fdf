#pragma once
// Argument checks shared by the checked entry points.

#include <vector>

#include "plume/configuration.hpp"
#include "plume/data.hpp"
#include "plume/error.hpp"
#include "plume/spatial.hpp"

namespace plume::detail {

/// Are the n values at x all finite? x − x is 0 for a finite x and NaN for an
/// infinity or a NaN, and a NaN stays in a sum: one compare at the end instead
/// of a test and a branch per value (two sums, so that they overlap).
/// add_finite_sums adds to the sums (several vectors, one compare).
PLUME_INLINE void add_finite_sums(const double* x, Eigen::Index n, double& s0, double& s1) {
  Eigen::Index i = 0;
  for (; i + 1 < n; i += 2) {
    s0 += x[i] - x[i];
    s1 += x[i + 1] - x[i + 1];
  }
  if (i < n) s0 += x[i] - x[i];
}

PLUME_INLINE bool all_finite(const double* x, Eigen::Index n) {
  double s0 = 0.0, s1 = 0.0;
  add_finite_sums(x, n, s0, s1);
  return s0 + s1 == 0.0;
}

/// check_vector(x, n, what), with the passing case inline: the out-of-line
/// check, which composes the error message, runs only when something is wrong.
PLUME_INLINE void check_vector_fast(const Eigen::Ref<const VectorX>& x, Eigen::Index n, const char* what) {
  if (__builtin_expect(x.size() != n || !all_finite(x.data(), n), 0)) check_vector(x, n, what);
}

/// check_data(model, data) and check_configuration(model, q, "q"), then
/// check_vector(x, nv, what) for up to two joint-space vectors (x2 may be
/// null), with the passing case inline (per call on a one-body model the
/// out-of-line checks cost as much as the dynamics): the uid and sizes
/// compared, the finiteness of q and the vectors as in all_finite with one
/// compare for all of them, and the squared norm of each free-flyer quaternion
/// against a band slightly inside the 1 ± 1e-6 of check_configuration. When
/// anything is outside, the out-of-line checks run in the order above and
/// decide (and compose the message).
PLUME_INLINE void check_state(const Model& model, const Data& data, const Eigen::Ref<const VectorX>& q,
                              const Eigen::Ref<const VectorX>* x1 = nullptr, const char* what1 = nullptr,
                              const Eigen::Ref<const VectorX>* x2 = nullptr, const char* what2 = nullptr) {
  if (__builtin_expect(data.model_uid != model.uid() || data.nv != model.nv() || data.nbodies != model.nbodies(), 0)) {
    check_data(model, data);
  }
  const Eigen::Index nv = model.nv();
  bool ok = q.size() == model.nq() && (!x1 || x1->size() == nv) && (!x2 || x2->size() == nv);
  if (ok) {
    double s0 = 0.0, s1 = 0.0;
    add_finite_sums(q.data(), model.nq(), s0, s1);
    if (x1) add_finite_sums(x1->data(), nv, s0, s1);
    if (x2) add_finite_sums(x2->data(), nv, s0, s1);
    ok = s0 + s1 == 0.0;
  }
  if (ok) {
    const double* x = q.data();
    for (const int k : model.quaternion_q_indices()) {
      const double n2 = (x[k] * x[k] + x[k + 1] * x[k + 1]) + (x[k + 2] * x[k + 2] + x[k + 3] * x[k + 3]);
      // n² inside [(1 − 1e-6)², (1 + 1e-6)²] = [0.999998000001, 1.000002000001]
      // by 1e-12, far more than the rounding of n² or of Eigen's norm.
      ok &= n2 >= 0.999998000002 && n2 <= 1.000001999998;
    }
  }
  if (__builtin_expect(!ok, 0)) {
    check_configuration(model, q, "q");
    if (x1) check_vector(*x1, nv, what1);
    if (x2) check_vector(*x2, nv, what2);
  }
}

inline void check_forces(const Model& model, const std::vector<Force>& fext) {
  if (static_cast<int>(fext.size()) != model.nbodies()) {
    throw ArgumentError("fext has " + std::to_string(fext.size()) + " entries, expected " +
                        std::to_string(model.nbodies()) + " (one per body)");
  }
  for (std::size_t i = 0; i < fext.size(); ++i) {
    if (!fext[i].vector().allFinite()) {
      throw ArgumentError("fext[" + std::to_string(i) + "] has a non-finite entry");
    }
  }
}

/// "<what> index <index> is out of range [0, <size>)", composed out of line.
[[noreturn]] __attribute__((noinline, cold)) inline void index_error(const char* what, int index, std::size_t size) {
  throw ArgumentError(std::string(what) + " index " + std::to_string(index) + " is out of range [0, " +
                      std::to_string(size) + ")");
}

/// The passing case inline (clang called check_frame out of line: about 20
/// instructions per call of a frame Jacobian).
PLUME_INLINE void check_body(const Model& model, int body) {
  if (__builtin_expect(body < 0 || body >= model.nbodies(), 0)) {
    index_error("body", body, static_cast<std::size_t>(model.nbodies()));
  }
}

PLUME_INLINE void check_frame(const Model& model, int frame) {
  if (__builtin_expect(frame < 0 || frame >= static_cast<int>(model.frames().size()), 0)) {
    index_error("frame", frame, model.frames().size());
  }
}

}  // namespace plume::detail
