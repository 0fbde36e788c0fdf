#pragma once
// Physical validity of a body's mass properties, shared by the URDF loader
// (per link, before merging) and ModelBuilder (per body, after merging).

#include <string>

#include "plume/spatial.hpp"

namespace plume::detail {

/// Returns an empty string when (m, Ic) describe a physical rigid body, else
/// the reason: non-finite values, negative mass, an asymmetric or indefinite
/// rotational inertia Ic (about the centre of mass), or principal moments that
/// violate the triangle inequality.
std::string inertia_problem(double mass, const Mat3& Ic);

}  // namespace plume::detail
