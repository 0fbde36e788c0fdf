// A rod released at 45° with one end on a frictionless floor: the end slides
// while the rod falls, the other end strikes the floor (a two-contact
// plastic impact), and the rod comes to rest lying flat.
//
//   falling_rod [models/rod.urdf]
//
// rod.urdf is a 2 m, 1 kg rod with point contacts (spheres of radius 0) at
// its ends, loaded with a planar root: q = (x, z, θ) in the world's x–z plane.
// Checked: the impact time against the energy integral (computed here by
// quadrature), and the resting forces, m g / 2 at each end.
#include <plume/plume.hpp>

#include <cmath>
#include <cstdio>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "models/rod.urdf";
  const double g = 9.81, l = 1.0;  // half length [m]
  const double theta0 = M_PI / 4;

  plume::urdf::LoadOptions options;
  options.root = plume::urdf::RootJoint::Planar;
  const plume::Model rod = plume::urdf::load(path, options);

  // The left end on the floor: the centre at height l sin θ₀.
  plume::VectorX q0(3);
  q0 << 0.0, l * std::sin(theta0), theta0;

  // Mass and moment of inertia about the centre, read off H (the planar
  // joint sits at the centre of mass).
  plume::Data data(rod);
  const plume::MatrixX& H = plume::crba(rod, data, q0);
  const double m = H(0, 0), I = H(2, 2);
  std::printf("rod: m = %.4f kg, I = %.6f kg m^2\n", m, I);

  plume::WorldBuilder builder;
  builder.add_model("rod", rod, q0);
  builder.add_environment(plume::ground_plane());
  plume::ContactParameters frictionless;
  frictionless.mu = 0.0;
  frictionless.restitution = 0.0;
  builder.set_default_contact(frictionless);

  plume::SimulationOptions sim_options;
  sim_options.duration = 1.0;
  sim_options.output_rate = 50;
  plume::Simulator sim(builder.build(), sim_options);
  plume::MemoryRecorder record;  // keeps samples, events and contact forces in memory
  const plume::SimulationResult result = sim.run(&record);
  std::printf("%s at t = %.3f s: %ld steps, %ld events\n", plume::to_string(result.status), result.time,
              result.statistics.steps, result.statistics.events);
  if (result.status != plume::SimulationStatus::Finished) {
    std::printf("%s\n", result.message.c_str());
    return 1;
  }
  for (const plume::SimulationEvent& e : record.events) {
    std::printf("  t = %.10f s  %-12s %-28s impulse %.6f N s\n", e.time, plume::to_string(e.kind), e.contact.c_str(),
                e.impulse);
  }

  // Closed form of the first impact time. Energy: ½ (m l² cos²θ + I) θ̇² =
  // m g l (sin θ₀ − sin θ) (the centre moves straight down), so
  // T = ∫ dθ / |θ̇| from θ₀ down to 0; the substitution θ = θ₀ − s² removes the
  // square-root singularity at the start, and the midpoint rule converges fast.
  const int N = 200000;
  const double s_max = std::sqrt(theta0);
  double T = 0.0;
  for (int k = 0; k < N; ++k) {
    const double s = (k + 0.5) * s_max / N, th = theta0 - s * s;
    const double thdot = std::sqrt(2 * m * g * l * (std::sin(theta0) - std::sin(th)) /
                                   (m * l * l * std::cos(th) * std::cos(th) + I));
    T += 2 * s / thdot * s_max / N;
  }
  double t_impact = -1.0;
  for (const plume::SimulationEvent& e : record.events) {
    if (e.kind == plume::EventKind::Impact) {
      t_impact = e.time;
      break;
    }
  }
  std::printf("impact at t = %.10f s; energy integral gives %.10f s\n", t_impact, T);

  bool ok = true;
  auto check = [&ok](const char* what, double error, double tolerance) {
    const bool pass = std::isfinite(error) && error <= tolerance;
    ok = ok && pass;
    std::printf("check: %s (error %.2e <= %.0e): %s\n", what, error, tolerance, pass ? "ok" : "FAILED");
  };
  check("impact time from the energy integral", std::abs(t_impact - T), 1e-8);

  // At rest, each end carries half the weight (contact samples after 0.9 s).
  double worst = 0.0;
  int samples = 0;
  for (const plume::ContactSample& c : record.contacts) {
    if (c.time < 0.9) continue;
    worst = std::max(worst, std::abs(c.normal_force - m * g / 2));
    ++samples;
  }
  std::printf("at rest: theta = %.2e rad, %d contact samples after 0.9 s\n", sim.q()(2), samples);
  check("each end carries m g / 2 at rest", samples > 0 ? worst : 1.0, 1e-6);
  return ok ? 0 : 1;
}
