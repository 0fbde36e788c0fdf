// Contact forces of the quadruped standing on the ground: the contact LCP
// (Featherstone eqs. 11.41–11.42) assembled by hand, step by step, with the
// functions a user calls — then the same with plume::ContactSolver.
//
//   quadruped_contact_forces [models/quadruped.urdf]
//
//   H q̈ + C = τ + T λ                  equation of motion with contact forces λ
//   ζ̇ = Tᵀq̈ + Ṫᵀq̇ = M λ + d            separation accelerations of the contacts
//   M = Tᵀ H⁻¹ T,  d = Tᵀ H⁻¹ (τ − C) + Ṫᵀq̇
//   λ ≥ 0,  ζ̇ ≥ 0,  λᵀζ̇ = 0            the linear complementarity problem
//
// The joint torques τ are chosen to hold the standing posture (the trunk is
// not actuated, so the torques only work through the feet). The LCP then
// finds the foot forces, and q̈ = 0: the robot stands still and its feet carry
// its weight.
#include <plume/plume.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

using plume::MatrixX;
using plume::VectorX;

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "models/quadruped.urdf";
  plume::urdf::LoadOptions options;
  options.root = plume::urdf::RootJoint::FreeFlyer;  // the trunk floats: nq = 7 + 12, nv = 6 + 12
  const plume::Model model = plume::urdf::load(path, options);
  plume::Data data(model);
  const int nv = model.nv();

  bool ok = true;
  auto check = [&ok](const char* what, double error, double tolerance) {
    const bool pass = std::isfinite(error) && error <= tolerance;
    ok = ok && pass;
    std::printf("check: %s (error %.2e <= %.0e): %s\n", what, error, tolerance, pass ? "ok" : "FAILED");
  };

  // 1. The standing posture: hips 0.8 rad, knees −1.6 rad; the feet (spheres
  //    of radius 0.02 m) then touch the ground with the trunk at 0.43802 m.
  //    q = [trunk position (3), quaternion (x, y, z, w), 12 joint angles].
  VectorX q = plume::neutral_configuration(model);
  q(2) = 2 * 0.30 * std::cos(0.8) + 0.02;
  for (const char* leg : {"LF", "RF", "LH", "RH"}) {
    const std::string name(leg);
    q(model.joint(model.get_joint(name + "_HFE")).q_index) = 0.8;
    q(model.joint(model.get_joint(name + "_KFE")).q_index) = -1.6;
  }
  const VectorX v = VectorX::Zero(nv);  // at rest

  // 2. Contacts with the ground plane z = 0. A small margin reports the
  //    touching feet (gap 0) even after rounding.
  plume::DetectionOptions detection;
  detection.margin = 1e-6;
  const plume::ContactDetector detector(model, {plume::ground_plane()}, detection);
  plume::forward_kinematics(model, data, q);  // placements: detect() reads data.X0
  std::vector<plume::Contact> contacts;
  detector.detect(model, data, contacts);
  const int nc = static_cast<int>(contacts.size());
  std::printf("%d contacts:\n", nc);
  for (const plume::Contact& c : contacts) {
    std::printf("  %-20s gap %9.2e m  at (%7.4f, %7.4f, %7.4f)  normal (%g, %g, %g)\n",
                detector.shapes()[c.shape_b].name.c_str(), c.gap, c.point_b.x(), c.point_b.y(), c.point_b.z(),
                c.normal.x(), c.normal.y(), c.normal.z());
  }

  // 3. H (crba), its sparse factor H = LᵀDL (ltdl, kept in data.LD) and the
  //    bias forces C (gravity only, at rest).
  plume::crba(model, data, q);
  plume::ltdl(model, data);
  const VectorX C = plume::bias_forces(model, data, q, v);

  // 4. The contact Jacobian T (nv × nc, column i maps q̇ to the separation
  //    velocity of contact i) and Ṫᵀq̇. contact_jacobian() reads velocities
  //    and velocity-product accelerations: forward kinematics with q̈ = 0 first.
  plume::forward_kinematics(model, data, q, v, VectorX::Zero(nv));
  MatrixX T(nv, nc);
  VectorX Tdot_v(nc);
  plume::contact_jacobian(model, data, contacts, T, Tdot_v);

  // 5. Torques that hold the posture. At rest with q̈ = 0 the equation of
  //    motion reads τ = C − T λ*. The first six rows (the trunk) have no
  //    motor: T_trunk λ* = C_trunk fixes the weight each foot carries
  //    (three equations — vertical force and two tipping moments — for four
  //    feet; take the least-norm solution). The joint rows give τ.
  const MatrixX T_trunk = T.topRows(6);
  const VectorX lambda_star = T_trunk.completeOrthogonalDecomposition().solve(C.head(6));
  VectorX tau = C - T * lambda_star;
  check("the trunk needs no motor torque", tau.head(6).norm() / C.head(6).norm(), 1e-12);
  tau.head(6).setZero();

  // 6. M = TᵀH⁻¹T without forming H⁻¹: with Y = L⁻ᵀT, M = Yᵀ D⁻¹ Y.
  MatrixX Y = T;
  plume::ltdl_solve_Lt(model, data, Y);
  const VectorX D_inv = data.LD.diagonal().cwiseInverse();
  const MatrixX M = Y.transpose() * D_inv.asDiagonal() * Y;

  // 7. d = Tᵀ H⁻¹ (τ − C) + Ṫᵀq̇: the separation accelerations without contact forces.
  VectorX a_free = tau - C;
  plume::ltdl_solve(model, data, a_free);  // a_free ← H⁻¹ (τ − C): the robot would fall
  const VectorX d = T.transpose() * a_free + Tdot_v;

  // 8. The LCP, by two pivoting methods. Both check their answer and say why
  //    when they fail (status, message).
  const plume::LcpResult pivoting = plume::solve_pivoting(plume::LcpProblem{M, d});
  const plume::LcpResult lemke = plume::solve_lemke(plume::LcpProblem{M, d});
  std::printf("principal pivoting: %s after %d pivots; Lemke: %s after %d pivots\n",
              plume::to_string(pivoting.status), pivoting.pivots, plume::to_string(lemke.status), lemke.pivots);
  if (pivoting.status != plume::LcpStatus::Solved) {
    std::cerr << "pivoting: " << pivoting.message << '\n';
    return 1;
  }
  const VectorX& lambda = pivoting.lambda;

  // 9. The accelerations with the contact forces: q̈ = H⁻¹ (τ − C + T λ).
  VectorX ddq = tau - C + T * lambda;
  plume::ltdl_solve(model, data, ddq);

  std::printf("%-20s %12s %12s\n", "contact", "lambda [N]", "zeta_dot");
  const VectorX zeta_dot = M * lambda + d;
  for (int i = 0; i < nc; ++i) {
    std::printf("%-20s %12.6f %12.3e\n", detector.shapes()[contacts[i].shape_b].name.c_str(), lambda(i), zeta_dot(i));
  }
  std::printf("joint torques holding the stance [N m]:");
  for (int i = 6; i < nv; ++i) std::printf(" %.3f", tau(i));
  std::printf("\n");

  const double weight = model.total_mass() * -model.gravity().z();
  std::printf("sum of the normal forces %.9f N, weight m g %.9f N\n", lambda.sum(), weight);
  check("sum of the normal forces = m g", std::abs(lambda.sum() - weight), 1e-6);
  check("the robot stands still: |ddq|", ddq.norm(), 1e-9);
  check("Lemke and principal pivoting agree", (lemke.lambda - lambda).norm() / lambda.norm(), 1e-9);

  // 10. The same through ContactSolver, which does steps 3–9 (and friction,
  //     if asked) without allocating; the simulator calls it at every event.
  plume::ContactSolver solver(model);
  const VectorX mu = VectorX::Zero(nc);  // frictionless (FrictionModel::None is the default)
  const plume::ContactSolution& s = solver.solve(model, data, q, v, tau, contacts, mu);
  std::printf("ContactSolver: %s, active contacts %zu, current contacts %zu\n", plume::to_string(s.status),
              s.active.size(), s.current.size());
  check("ContactSolver assembles the same M", (MatrixX(solver.M()) - M).norm() / M.norm(), 1e-12);
  check("ContactSolver gives the same forces", (s.lambda - lambda).norm() / lambda.norm(), 1e-9);
  return ok ? 0 : 1;
}
