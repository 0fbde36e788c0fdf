// A ball dropped on the ground, bouncing with restitution e, simulated by the
// event-driven Simulator. Every impact is an event located on the
// integrator's dense output; once the next bounce would stay within the
// contact tolerance the ball comes to rest, and a "zeno_rest" event marks the
// accumulation point of its infinitely many bounces, predicted from the
// flight times.
//
//   bouncing_ball [models/ball.urdf]
//
// Closed forms checked: first impact at t₁ = √(2h/g), rebound speed
// e·√(2gh), rest at t∞ = t₁ (1 + e) / (1 − e).
#include <plume/plume.hpp>

#include <cmath>
#include <cstdio>

namespace {

// A Recorder receives what a run produces as it happens; this one prints the
// events and keeps the first impact and the rest time.
class EventPrinter : public plume::Recorder {
 public:
  void event(const plume::SimulationEvent& e) override {
    std::printf("  t = %.10f s  %-10s %-24s speed before %8.5f m/s, after %8.5f m/s, impulse %.5f N s\n", e.time,
                plume::to_string(e.kind), e.contact.c_str(), e.pre_normal_velocity, e.post_normal_velocity,
                e.impulse);
    if (e.kind == plume::EventKind::Impact && impacts++ == 0) first = e;
    if (e.kind == plume::EventKind::ZenoRest) rest_time = e.time;
  }
  int impacts = 0;
  plume::SimulationEvent first;
  double rest_time = -1.0;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "models/ball.urdf";
  const double h = 1.0;  // drop height of the ball's bottom [m]
  const double e = 0.7;  // restitution
  const double r = 0.1;  // the ball's radius in ball.urdf [m]
  const double g = 9.81;

  plume::urdf::LoadOptions options;
  options.root = plume::urdf::RootJoint::FreeFlyer;
  const plume::Model ball = plume::urdf::load(path, options);

  // The world: the ball above a ground plane, one set of contact parameters.
  plume::VectorX q0 = plume::neutral_configuration(ball);  // [x y z, qx qy qz qw]
  q0(2) = h + r;
  plume::WorldBuilder builder;
  builder.add_model("ball", ball, q0);  // v0 defaults to zero
  builder.add_environment(plume::ground_plane());
  plume::ContactParameters contact;
  contact.mu = 0.0;
  contact.restitution = e;
  builder.set_default_contact(contact);

  plume::SimulationOptions sim_options;
  sim_options.duration = 6.0;
  sim_options.output_rate = 0;  // no periodic samples: events only
  plume::Simulator sim(builder.build(), sim_options);

  EventPrinter printer;
  const plume::SimulationResult result = sim.run(&printer);
  std::printf("%s at t = %.3f s after %ld steps, %d impacts; ball height %.6f m\n", plume::to_string(result.status),
              result.time, result.statistics.steps, printer.impacts, sim.q()(2));
  if (result.status != plume::SimulationStatus::Finished) {
    std::printf("%s\n", result.message.c_str());
    return 1;
  }

  bool ok = true;
  auto check = [&ok](const char* what, double error, double tolerance) {
    const bool pass = std::isfinite(error) && error <= tolerance;
    ok = ok && pass;
    std::printf("check: %s (error %.2e <= %.0e): %s\n", what, error, tolerance, pass ? "ok" : "FAILED");
  };
  const double t1 = std::sqrt(2 * h / g);
  const double t_inf = t1 * (1 + e) / (1 - e);
  check("first impact at sqrt(2h/g)", std::abs(printer.first.time - t1), 1e-8);
  check("rebound speed e sqrt(2gh)", std::abs(printer.first.post_normal_velocity - e * std::sqrt(2 * g * h)), 1e-8);
  std::printf("at rest at t = %.6f s; the infinite series of bounces ends at t = %.6f s\n", printer.rest_time, t_inf);
  check("at rest at t_inf = t1 (1 + e) / (1 - e)", printer.rest_time > 0.0 ? std::abs(printer.rest_time - t_inf) : 1.0, 1e-9);
  check("at rest on the ground (height r)", std::abs(sim.q()(2) - r), 1e-8);
  return ok ? 0 : 1;
}
