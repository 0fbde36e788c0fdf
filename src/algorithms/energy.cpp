// Kinetic and potential energy, spatial momentum, centre of mass.
#include "plume/algorithms/energy.hpp"

#include "checks.hpp"
#include "plume/algorithms/jacobians.hpp"

namespace plume {

namespace {

// ½ vᵢᵀ Iᵢ vᵢ over the bodies, from the velocities in data.
double kinetic_from_kinematics(const Model& model, Data& data) {
  double T = 0.0;
  for (int i = 1; i < model.nbodies(); ++i) T += model.inertia(i).kinetic_energy(data.v[i]);
  data.kinetic = T;
  return T;
}

// −Σ mᵢ g·cᵢ, from the placements in data.
double potential_from_kinematics(const Model& model, Data& data) {
  double V = 0.0;
  for (int i = 1; i < model.nbodies(); ++i) {
    const RigidInertia& I = model.inertia(i);
    V -= model.gravity().dot(data.X0[i].inverse_transform_point(I.com())) * I.mass();
  }
  const RigidInertia& I0 = model.inertia(0);
  V -= model.gravity().dot(I0.com()) * I0.mass();
  data.potential = V;
  return V;
}

}  // namespace

double kinetic_energy(const Model& model, Data& data, const VecRef& q, const VecRef& v) {
  forward_kinematics(model, data, q, v);
  return kinetic_from_kinematics(model, data);
}

double potential_energy(const Model& model, Data& data, const VecRef& q) {
  forward_kinematics(model, data, q);
  return potential_from_kinematics(model, data);
}

double unchecked::mechanical_energy_from_kinematics(const Model& model, Data& data) {
  return kinetic_from_kinematics(model, data) + potential_from_kinematics(model, data);
}

// One kinematics pass (placements and velocities) for both terms.
double mechanical_energy(const Model& model, Data& data, const VecRef& q, const VecRef& v) {
  forward_kinematics(model, data, q, v);
  return kinetic_from_kinematics(model, data) + potential_from_kinematics(model, data);
}

Force spatial_momentum(const Model& model, Data& data, const VecRef& q, const VecRef& v) {
  forward_kinematics(model, data, q, v);
  Force h;
  for (int i = 1; i < model.nbodies(); ++i) h += data.X0[i].apply_transpose(model.inertia(i) * data.v[i]);
  return h;
}

const Vec3& center_of_mass(const Model& model, Data& data, const VecRef& q) {
  forward_kinematics(model, data, q);
  Vec3 mc = model.inertia(0).h();
  for (int i = 1; i < model.nbodies(); ++i) {
    const RigidInertia& I = model.inertia(i);
    mc += I.mass() * data.X0[i].inverse_transform_point(I.com());
  }
  data.com = mc / model.total_mass();
  return data.com;
}

Matrix3X com_jacobian(const Model& model, Data& data, const VecRef& q) {
  forward_kinematics(model, data, q);
  Matrix3X Jc = Matrix3X::Zero(3, model.nv());
  Matrix3X Ji(3, model.nv());
  for (int i = 1; i < model.nbodies(); ++i) {
    const RigidInertia& I = model.inertia(i);
    if (I.mass() <= 0.0) continue;
    point_jacobian(model, static_cast<const Data&>(data), i, I.com(), ReferenceFrame::LocalWorldAligned, Ji);
    Jc += (I.mass() / model.total_mass()) * Ji;
  }
  return Jc;
}

}  // namespace plume
