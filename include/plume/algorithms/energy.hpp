#pragma once
/// @file
/// Energy, momentum and centre of mass. Links welded to the world (body 0)
/// count in the total mass and the centre of mass but never move.

#include "plume/algorithms/kinematics.hpp"

namespace plume {

/// T = ½ Σ vᵢᵀ Iᵢ vᵢ = ½ q̇ᵀ H q̇. Writes data.kinetic.
double kinetic_energy(const Model& model, Data& data, const VecRef& q, const VecRef& v);
/// V = −Σ mᵢ gᵀ cᵢ (zero at the world origin). Writes data.potential.
double potential_energy(const Model& model, Data& data, const VecRef& q);
/// T + V.
double mechanical_energy(const Model& model, Data& data, const VecRef& q, const VecRef& v);
namespace unchecked {
/// T + V from the placements and velocities already in data (forward
/// kinematics with velocities at the state wanted); no checks. Writes
/// data.kinetic and data.potential.
double mechanical_energy_from_kinematics(const Model& model, Data& data);
}  // namespace unchecked
/// Spatial momentum Σ Iᵢ vᵢ in world coordinates (moment about the world origin).
Force spatial_momentum(const Model& model, Data& data, const VecRef& q, const VecRef& v);
/// Centre of mass in world coordinates. Writes data.com.
const Vec3& center_of_mass(const Model& model, Data& data, const VecRef& q);
/// Jacobian of the centre of mass (3×nv, world axes): ċ = J_c q̇, by value.
Matrix3X com_jacobian(const Model& model, Data& data, const VecRef& q);

}  // namespace plume
