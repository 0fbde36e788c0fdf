#pragma once
// Physical validity of a body's mass properties, shared by the URDF loader
// (per link, before merging) and ModelBuilder (per body, after merging).

#include <string>

#include "plume/spatial.hpp"

namespace plume::detail {

/// Returns an empty string when (m, Ic) can be used by the dynamics
/// algorithms, else the reason: non-finite values, negative mass, an
/// asymmetric or indefinite rotational inertia Ic (about the centre of mass).
/// Principal moments that violate the triangle inequality are not reported
/// here: see triangle_deficit.
std::string inertia_problem(double mass, const Mat3& Ic);

/// Principal moments of a symmetric Ic in ascending order, with the rotation R
/// (columns = principal axes) such that Ic = R diag(p) Rᵀ.
struct PrincipalInertia {
  Vec3 moments;
  Mat3 axes;
};
PrincipalInertia principal_inertia(const Mat3& Ic);

/// p2 − (p0 + p1) for ascending principal moments p when it exceeds the
/// round-off tolerance of Ic (a rigid body has p0 + p1 ≥ p2), else 0.
double triangle_deficit(const Vec3& ascending_moments);

}  // namespace plume::detail
