#pragma once
/// @file
/// Configuration-space helpers. These are the only functions that know how a
/// free-flyer's quaternion relates q to v; everything else calls them.

#include <cstdint>

#include "plume/model.hpp"

namespace plume {

/// The neutral configuration: zeros, identity quaternions.
VectorX neutral_configuration(const Model& model);

/// A configuration drawn uniformly within the position limits, reproducible
/// from `seed`. Unbounded coordinates are drawn from [−π, π] for angles and
/// [−1, 1] m for positions; quaternions are uniform on the unit sphere.
VectorX random_configuration(const Model& model, std::uint64_t seed);

/// q ⊕ v·dt: moves along the velocity v held constant for dt (for a
/// free-flyer, constant body twist: the SE(3) exponential).
/// @throws ArgumentError on wrong sizes.
VectorX integrate(const Model& model, const VectorX& q, const VectorX& v, double dt);
/// The same into `out` (resized to nq; no allocation once it has that size).
/// `out` may be q but not v.
void integrate(const Model& model, const VectorX& q, const VectorX& v, double dt, VectorX& out);

/// q1 ⊖ q0: the velocity that integrate() needs to reach q1 from q0 in unit
/// time (the SE(3) logarithm for a free-flyer), so that
/// difference(q, integrate(q, v, dt)) == v·dt.
/// @throws ArgumentError on wrong sizes.
VectorX difference(const Model& model, const VectorX& q0, const VectorX& q1);

/// q̇ = G(q) v, the time derivative of the configuration (nq entries).
/// Allocation-free: writes into qdot, which must have nq entries.
void configuration_derivative(const Model& model, const Eigen::Ref<const VectorX>& q,
                             const Eigen::Ref<const VectorX>& v, Eigen::Ref<VectorX> qdot);

/// Renormalises every free-flyer quaternion in place.
void normalize_configuration(const Model& model, Eigen::Ref<VectorX> q);

/// Throws ArgumentError unless `x` has `expected` entries, all finite. The
/// message names `what` and the first bad index.
void check_vector(const Eigen::Ref<const VectorX>& x, Eigen::Index expected, const char* what);

/// check_vector for q, plus: every free-flyer quaternion must have a norm
/// within 1e-6·… of 1 (it is renormalised by the caller if slightly off).
void check_configuration(const Model& model, const Eigen::Ref<const VectorX>& q,
                        const char* what = "q");

}  // namespace plume
