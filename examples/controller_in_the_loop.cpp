// A controller in the loop: the 7-joint arm tracks a sinusoidal joint
// trajectory with computed-torque control, sampled at 1 kHz with zero-order
// hold, as it would run on the robot.
//
//   controller_in_the_loop [models/arm7.urdf]
//
//   τ = H(q) (q̈_d + K_p (q_d − q) + K_d (q̇_d − q̇)) + C(q, q̇) + b ∘ q̇
//
// cancels the arm's dynamics (and the joints' viscous damping b, which the
// simulator applies from the URDF), leaving the error dynamics
// ë + K_d ė + K_p e = 0. What remains is the effect of holding τ for a
// millisecond; the tracking error stays below a milliradian.
#include <plume/plume.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>

using plume::VectorX;

namespace {

// The desired trajectory: every joint swings ±0.3 rad at 0.5 Hz about q_c.
struct Trajectory {
  VectorX center;
  double amplitude = 0.3, omega = 2 * M_PI * 0.5;
  VectorX q(double t) const { return center.array() + amplitude * std::sin(omega * t); }
  VectorX qd(double t) const { return VectorX::Constant(center.size(), amplitude * omega * std::cos(omega * t)); }
  VectorX qdd(double t) const {
    return VectorX::Constant(center.size(), -amplitude * omega * omega * std::sin(omega * t));
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "models/arm7.urdf";
  const plume::Model arm = plume::urdf::load(path);

  Trajectory ref;
  ref.center = VectorX::Zero(arm.nq());
  ref.center(1) = 0.5;
  ref.center(3) = -0.8;

  plume::WorldBuilder builder;
  builder.add_model("arm", arm, ref.q(0.0), ref.qd(0.0));  // start on the trajectory
  const plume::World world = builder.build();

  // The controller computes with the world's model (the arm's bodies, renamed
  // "arm/…"): a Data must be built for the model it is used with. The
  // simulator calls the controller from its own thread, one call at a time,
  // so one Data captured by reference is enough.
  const plume::Model& model = world.model();
  plume::Data data(model);
  const double kp = 400.0, kd = 40.0;  // ω = 20 rad/s, critically damped
  long ticks = 0;
  double busy = 0.0;  // time spent in the controller [s]
  auto controller = [&](double t, const VectorX& q, const VectorX& v, VectorX& tau) {
    const auto start = std::chrono::steady_clock::now();
    const VectorX a = ref.qdd(t) + kp * (ref.q(t) - q) + kd * (ref.qd(t) - v);
    // The inputs come from the simulator and are valid: the unchecked
    // variants skip the argument checks on the hot path.
    const plume::MatrixX& H = plume::unchecked::crba(model, data, q);
    tau.noalias() = H * a;
    tau += plume::unchecked::bias_forces(model, data, q, v);
    tau -= plume::passive_torques(model, v);  // + b ∘ q̇
    busy += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++ticks;
  };

  plume::SimulationOptions options;
  options.duration = 3.0;
  options.output_rate = 100;
  plume::Simulator sim(world, options);
  sim.set_controller(controller, 1e-3);  // 1 kHz, zero-order hold
  plume::MemoryRecorder record;
  const plume::SimulationResult result = sim.run(&record);
  std::printf("%s at t = %.3f s: %ld controller ticks, %.2f us per tick\n", plume::to_string(result.status),
              result.time, ticks, 1e6 * busy / static_cast<double>(ticks));
  if (result.status != plume::SimulationStatus::Finished) {
    std::printf("%s\n", result.message.c_str());
    return 1;
  }

  double worst = 0.0;
  std::printf("%6s %12s\n", "t [s]", "|q - q_d|");
  for (std::size_t i = 0; i < record.times.size(); ++i) {
    const double t = record.times[i];
    const double err = (record.q[i] - ref.q(t)).cwiseAbs().maxCoeff();
    worst = std::max(worst, err);
    if (i % 50 == 0) std::printf("%6.2f %12.3e\n", t, err);
  }
  const bool pass = std::isfinite(worst) && worst < 1e-3;
  std::printf("check: tracking error of computed-torque control at 1 kHz (max %.2e rad < 1e-3): %s\n", worst,
              pass ? "ok" : "FAILED");
  return pass ? 0 : 1;
}
