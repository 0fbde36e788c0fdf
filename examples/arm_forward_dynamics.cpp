// Forward dynamics of the 7-joint arm falling under gravity, integrated by
// hand with the classical Runge–Kutta method (RK4) and plume::aba().
//
//   arm_forward_dynamics [models/arm7.urdf]
//
// The arm starts at rest, slightly bent, with no motor torques; only gravity
// and the joints' viscous damping from the URDF (<dynamics damping>) act.
// It prints the joint angles every 0.1 s and checks
// - that aba() (O(n)) agrees with q̈ = H⁻¹(τ − C) from crba() and the LᵀDL factor, and
// - the energy balance: E(t) − E(0) equals the work of the damping torques
//   ∫ q̇ᵀτ dt, integrated alongside the state.
#include <plume/plume.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

namespace {

// The state of the integration: configuration, velocity, and the work done
// by the joint torques so far.
struct State {
  plume::VectorX q, v;
  double work = 0.0;
};

// Its time derivative: q̇ = G(q) v (plain v for this fixed-base arm), v̇ from
// the articulated-body algorithm, Ẇ = q̇ᵀτ.
struct Derivative {
  plume::VectorX qdot, vdot;
  double power = 0.0;
};

Derivative derivative(const plume::Model& model, plume::Data& data, const State& x) {
  Derivative dx;
  dx.qdot.resize(model.nq());
  plume::configuration_derivative(model, x.q, x.v, dx.qdot);
  const plume::VectorX tau = plume::passive_torques(model, x.v);  // −damping ∘ q̇
  dx.vdot = plume::aba(model, data, x.q, x.v, tau);
  dx.power = x.v.dot(tau);
  return dx;
}

State step(const State& x, const Derivative& dx, double h) {
  return State{x.q + h * dx.qdot, x.v + h * dx.vdot, x.work + h * dx.power};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "models/arm7.urdf";
  const plume::Model model = plume::urdf::load(path);  // fixed base by default
  plume::Data data(model);

  State x;
  x.q = plume::VectorX::Zero(model.nq());
  x.q(1) = 0.4;  // shoulder pitched forward: the arm falls over
  x.q(3) = -0.6;
  x.v = plume::VectorX::Zero(model.nv());

  bool ok = true;
  auto check = [&ok](const char* what, double error, double tolerance) {
    const bool pass = std::isfinite(error) && error <= tolerance;
    ok = ok && pass;
    std::printf("check: %s (error %.2e <= %.0e): %s\n", what, error, tolerance, pass ? "ok" : "FAILED");
  };

  // aba against the joint-space route H q̈ = τ − C, with H = LᵀDL.
  {
    const plume::VectorX v = plume::VectorX::Constant(model.nv(), 0.5);
    const plume::VectorX tau = plume::VectorX::LinSpaced(model.nv(), -2.0, 2.0);
    const plume::VectorX ddq_aba = plume::aba(model, data, x.q, v, tau);
    plume::crba(model, data, x.q);
    plume::ltdl(model, data);
    plume::VectorX ddq = tau - plume::bias_forces(model, data, x.q, v);
    plume::ltdl_solve(model, data, ddq);  // ddq ← H⁻¹ ddq
    check("aba = H^-1 (tau - C)", (ddq_aba - ddq).norm() / ddq.norm(), 1e-10);
  }

  const double E0 = plume::mechanical_energy(model, data, x.q, x.v);
  const double h = 1e-3, duration = 1.0;
  const int steps = static_cast<int>(std::lround(duration / h));
  std::printf("%6s  %s\n", "t [s]", "q [rad]");
  for (int k = 0; k <= steps; ++k) {
    if (k % 100 == 0) {
      std::printf("%6.2f ", k * h);
      for (int i = 0; i < model.nq(); ++i) std::printf(" %8.4f", x.q(i));
      std::printf("\n");
    }
    if (k == steps) break;
    // RK4: four evaluations of the forward dynamics per step.
    const Derivative k1 = derivative(model, data, x);
    const Derivative k2 = derivative(model, data, step(x, k1, h / 2));
    const Derivative k3 = derivative(model, data, step(x, k2, h / 2));
    const Derivative k4 = derivative(model, data, step(x, k3, h));
    x.q += h / 6 * (k1.qdot + 2 * k2.qdot + 2 * k3.qdot + k4.qdot);
    x.v += h / 6 * (k1.vdot + 2 * k2.vdot + 2 * k3.vdot + k4.vdot);
    x.work += h / 6 * (k1.power + 2 * k2.power + 2 * k3.power + k4.power);
    plume::normalize_configuration(model, x.q);  // keeps free-flyer quaternions unit (none here)
  }

  const double E1 = plume::mechanical_energy(model, data, x.q, x.v);
  std::printf("energy: E(0) = %.9f J, E(%.1f s) = %.9f J, work of the damping %.9f J\n", E0, duration, E1, x.work);
  check("energy balance E(t) - E(0) = work of the joint torques, relative to the work",
        std::abs(E1 - E0 - x.work) / std::abs(x.work), 1e-8);
  return ok ? 0 : 1;
}
