// plume's side of the timings: the unchecked entry points (what a controller
// calls in its loop) and the checked ones, on the Case's states.
#include <benchmark/benchmark.h>

#include "peer_common.hpp"
#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/rnea.hpp"

namespace plume::peers {

namespace {

template <bool Checked>
double time_impl(const Case& c, Algo algo, long calls) {
  const Model& m = *c.model;
  Data d(m);
  const int frame = m.get_frame(c.frame);
  Matrix6X J(6, m.nv());
  const int n = c.nstates();
  switch (algo) {
    case Algo::Rnea:
      return mean_ns(calls, n, [&](int k) {
        const VectorX& r = Checked ? rnea(m, d, c.q[k], c.v[k], c.a[k])
                                   : unchecked::rnea(m, d, c.q[k], c.v[k], c.a[k]);
        benchmark::DoNotOptimize(r.data());
        benchmark::ClobberMemory();
      });
    case Algo::Bias:
      return mean_ns(calls, n, [&](int k) {
        const VectorX& r = Checked ? bias_forces(m, d, c.q[k], c.v[k]) : unchecked::bias_forces(m, d, c.q[k], c.v[k]);
        benchmark::DoNotOptimize(r.data());
        benchmark::ClobberMemory();
      });
    case Algo::Crba:
      return mean_ns(calls, n, [&](int k) {
        const MatrixX& r = Checked ? crba(m, d, c.q[k]) : unchecked::crba(m, d, c.q[k]);
        benchmark::DoNotOptimize(r.data());
        benchmark::ClobberMemory();
      });
    case Algo::Aba:
      return mean_ns(calls, n, [&](int k) {
        const VectorX& r = Checked ? aba(m, d, c.q[k], c.v[k], c.tau[k])
                                   : unchecked::aba(m, d, c.q[k], c.v[k], c.tau[k]);
        benchmark::DoNotOptimize(r.data());
        benchmark::ClobberMemory();
      });
    case Algo::Jacobian:
      return mean_ns(calls, n, [&](int k) {
        if (Checked) {
          frame_jacobian(m, d, c.q[k], frame, ReferenceFrame::LocalWorldAligned, J);
        } else {
          unchecked::frame_jacobian(m, d, c.q[k], frame, ReferenceFrame::LocalWorldAligned, J);
        }
        benchmark::DoNotOptimize(J.data());
        benchmark::ClobberMemory();
      });
  }
  return 0.0;
}

}  // namespace

double time_plume(const Case& c, Algo algo, bool checked, long calls) {
  return checked ? time_impl<true>(c, algo, calls) : time_impl<false>(c, algo, calls);
}

}  // namespace plume::peers
