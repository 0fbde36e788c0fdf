#include <plume/plume.hpp>
#include <iostream>

int main(int argc, char** argv) try {
  const std::string models = argc > 1 ? argv[1] : "models";        // models directory
  plume::urdf::LoadOptions options;
  options.root = plume::urdf::RootJoint::FreeFlyer;                // floating base
  const plume::Model model = plume::urdf::load(models + "/quadruped.urdf", options);
  plume::Data data(model);                                         // workspace, one per thread
  plume::VectorX q = plume::neutral_configuration(model);          // [x y z, qx qy qz qw, 12 joints]
  for (int leg = 0; leg < 4; ++leg) q.segment<2>(8 + 3 * leg) << 0.8, -1.6;  // hip, knee bent
  const plume::MatrixX& H = plume::crba(model, data, q);           // joint-space inertia, 18 × 18
  const plume::VectorX& C = plume::bias_forces(model, data, q, plume::VectorX::Zero(model.nv()));
  std::cout << "mass " << H(3, 3) << " kg, weight " << C(5) << " N\n";   // trunk's z row: m g

  q(2) = 0.45;                                                     // feet 12 mm above the ground
  plume::WorldBuilder world;
  world.add_model("quad", model, q);
  world.add_environment(plume::ground_plane());
  world.set_default_contact({/*mu=*/1.0, /*restitution=*/0.0});
  plume::Simulator sim(world.build(), plume::SimulationOptions{}); // event-driven, 1 s
  sim.set_controller([q](double, const plume::VectorX& qs, const plume::VectorX& vs, plume::VectorX& tau) {
    tau.setZero();                                                 // PD on the 12 joints at 1 kHz
    tau.tail(12) = 800.0 * (q.tail(12) - qs.tail(12)) - 15.0 * vs.tail(12);
  }, 1e-3);
  const plume::SimulationResult result = sim.run();
  std::cout << result.message << ", trunk at z = " << sim.q()(2) << " m, |v| = " << sim.v().norm() << '\n';
} catch (const plume::Error& e) {                                  // bad input, e.g. a missing file
  std::cerr << "error: " << e.what() << '\n';
  return 1;
}
