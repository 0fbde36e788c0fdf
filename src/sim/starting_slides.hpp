#pragma once
// Coulomb's direction for contacts that start to slide from rest, shared
// by the event-driven and time-stepping schemes: the force LCP's polyhedral
// cone gives a direction up to π/k off; Newton's method on the contacts'
// angles turns each onto its tangential acceleration.

#include <functional>

#include "plume/sim/simulator.hpp"

namespace plume::detail {

/// Evaluates the scheme's constrained dynamics with the starting contacts'
/// directions at `angle` (in their tangent bases) and writes to `r` the angle
/// from each direction to its tangential acceleration (in (−π, π]); returns
/// the largest |a_t| (NaN when the dynamics fails). `probe` marks the
/// Jacobian's evaluations, whose state the caller need not keep.
using StartingSlideResiduals = std::function<double(const VectorX& angle, VectorX& r, bool probe)>;

/// Newton's method (forward-difference Jacobian) from `angle`. True, with
/// `angle` at the root and the last non-probe evaluation there, when every
/// direction is within 1e-9 rad of its a_t (or as close as rounding allows,
/// within 1e-6 rad), |a_t| exceeds 1e-8 m/s² (below, the slide moves no more
/// than that in a second: rounding, or a contact Coulomb's cone keeps
/// sticking at its boundary) and no direction turned more than `max_turn`
/// from where it started (a root farther away is another motion).
/// Each step is halved (up to 8 times) until the largest residual falls; the
/// search ends when a step cannot make it fall. At the friction limit the
/// angle residual is steep and far from linear: a_t is the small difference
/// of the push and μλ, so a direction 0.7° off turns a_t by 70° and the full
/// step overshoots.
bool coulomb_starting_directions(VectorX& angle, double max_turn, const StartingSlideResiduals& residuals);

}  // namespace plume::detail
