// Load a URDF and print the joint-space inertia H(q) and the bias forces
// C(q, q̇) — the two quantities of  H(q) q̈ + C(q, q̇) = τ.
//
//   print_h_and_c [MODEL.urdf [fixed|free|planar]]     (default: models/arm7.urdf fixed)
//
// It then checks two facts that hold for any model:
//   ½ q̇ᵀ H q̇ equals the kinetic energy summed body by body, and
//   C(q, q̇) − C(q, 0) is quadratic in q̇ (Coriolis and centrifugal terms),
//   while C(q, 0) is the gravity torque g(q).
#include <plume/plume.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "models/arm7.urdf";
  plume::urdf::LoadOptions options;
  options.root = plume::urdf::parse_root_joint(argc > 2 ? argv[2] : "fixed");

  // Loading validates the file; every failure is a plume::Error naming the culprit.
  plume::Model model;
  try {
    model = plume::urdf::load(path, options);
  } catch (const plume::Error& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
  // One Data per thread: the workspace every algorithm writes into.
  plume::Data data(model);
  std::printf("%s: %d bodies, nq = %d, nv = %d, total mass %.4g kg\n", model.name().c_str(), model.nbodies(),
              model.nq(), model.nv(), model.total_mass());

  // A configuration within the joint limits and some joint velocities.
  const plume::VectorX q = plume::random_configuration(model, 42);
  const plume::VectorX v = plume::VectorX::LinSpaced(model.nv(), -1.0, 1.0);

  // crba() and bias_forces() return references into Data: copy them if
  // another call could overwrite them before you are done.
  const plume::MatrixX H = plume::crba(model, data, q);
  const plume::VectorX C = plume::bias_forces(model, data, q, v);

  const Eigen::IOFormat fmt(4, 0, "  ", "\n", "  [", "]");
  std::cout << "q =\n" << q.transpose().format(fmt) << "\nv =\n" << v.transpose().format(fmt) << '\n';
  std::cout << "H(q) =\n" << H.format(fmt) << '\n';
  std::cout << "C(q, v) =\n" << C.transpose().format(fmt) << '\n';

  bool ok = true;
  auto check = [&ok](const char* what, double error, double tolerance) {
    const bool pass = std::isfinite(error) && error <= tolerance;
    ok = ok && pass;
    std::printf("check: %s (error %.2e <= %.0e): %s\n", what, error, tolerance, pass ? "ok" : "FAILED");
  };

  // ½ q̇ᵀHq̇ against Σ ½ vᵢᵀIᵢvᵢ from the body velocities.
  const double T_H = 0.5 * v.dot(H * v);
  const double T_bodies = plume::kinetic_energy(model, data, q, v);
  check("kinetic energy 1/2 v'Hv = sum of body energies", std::abs(T_H - T_bodies) / T_bodies, 1e-12);

  // C(q, 0) = g(q), and the velocity terms scale with the square of v.
  const plume::VectorX g = plume::gravity_torques(model, data, q);
  const plume::VectorX C0 = plume::bias_forces(model, data, q, plume::VectorX::Zero(model.nv()));
  const plume::VectorX C2 = plume::bias_forces(model, data, q, 2.0 * v);
  check("C(q, 0) = gravity torques", (C0 - g).norm() / std::max(1.0, g.norm()), 1e-12);
  check("C(q, 2v) - g = 4 (C(q, v) - g)", ((C2 - g) - 4.0 * (C - g)).norm() / std::max(1.0, (C2 - g).norm()), 1e-12);

  // H is symmetric positive definite: its LᵀDL factor has positive pivots.
  plume::ltdl(model, data);
  const double dmin = data.LD.diagonal().minCoeff();
  check("H symmetric", (H - H.transpose()).norm() / H.norm(), 0.0);
  std::printf("smallest LTDL pivot of H: %.4g (> 0: positive definite)\n", dmin);
  return ok && dmin > 0.0 ? 0 : 1;
}
