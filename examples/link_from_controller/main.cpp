// A 1 kHz joint-space controller for the quadruped, linked against an
// installed plume (see CMakeLists.txt beside this file), running in the loop
// of plume's event-driven simulator.
//
//   link_from_controller [MODELS_DIR]
//
// The robot stands on the ground and does one slow squat (hips from 0.8 to
// 0.9 rad and back, knees at minus twice the hip angle so that the feet stay
// below the hips), then holds still. Each tick the controller reads the
// joint-space inertia H(q), the bias forces C(q, q̇), the centre of mass and
// the Jacobian J of each foot, and commands (joint rows only — the trunk has
// no motor)
//
//   τ = H [0; q̈_ref] + C − Σ_feet Jᵀ f + K_p (q_ref − q) + K_d (q̇_ref − q̇)
//
// where f are the vertical ground forces that carry the weight with no
// tipping moment about the centre of mass. It prints how well the trunk
// followed the squat and exits with status 1 if the robot fell.
#include <plume/plume.hpp>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

using plume::MatrixX;
using plume::VectorX;

namespace {

constexpr std::array<const char*, 4> kLegs = {"LF", "RF", "LH", "RH"};
constexpr double kThigh = 0.30, kShank = 0.30, kFootRadius = 0.02;  // quadruped.urdf

// The squat: hip angle θ(t) = θ₀ + Δ (1 − cos 2πt/T) / 2 for t < T, then θ₀.
struct Squat {
  double theta0 = 0.8, depth = 0.1, period = 1.0;
  double theta(double t) const { return t < period ? theta0 + depth * (1 - std::cos(2 * M_PI * t / period)) / 2 : theta0; }
  double theta_dot(double t) const { return t < period ? depth * M_PI / period * std::sin(2 * M_PI * t / period) : 0.0; }
  double theta_ddot(double t) const {
    return t < period ? depth * 2 * M_PI * M_PI / (period * period) * std::cos(2 * M_PI * t / period) : 0.0;
  }
  // Height of the trunk origin with the feet on the ground and the trunk level.
  double trunk_height(double t) const { return (kThigh + kShank) * std::cos(theta(t)) + kFootRadius; }
};

class SquatController {
 public:
  SquatController(const plume::Model& model, const VectorX& q_stand, const std::string& prefix)
      : model_(model), data_(model), q_ref_(q_stand), v_ref_(model.nv()), a_ref_(model.nv()), tau_feet_(model.nv()), J_(6, model.nv()) {
    for (int leg = 0; leg < 4; ++leg) {
      const std::string name = prefix + kLegs[leg];
      feet_[leg] = model.get_frame(name + "_foot");
      hfe_[leg] = model.joint(model.get_joint(name + "_HFE"));
      kfe_[leg] = model.joint(model.get_joint(name + "_KFE"));
    }
    weight_ = model.total_mass() * -model.gravity().z();
  }

  // τ = f(t, q, v): called by the simulator every millisecond (zero-order hold).
  void operator()(double t, const VectorX& q, const VectorX& v, VectorX& tau) {
    const auto start = std::chrono::steady_clock::now();
    // The reference: hips θ(t), knees −2θ(t).
    v_ref_.setZero();
    a_ref_.setZero();
    for (int leg = 0; leg < 4; ++leg) {
      q_ref_(hfe_[leg].q_index) = squat_.theta(t);
      q_ref_(kfe_[leg].q_index) = -2 * squat_.theta(t);
      v_ref_(hfe_[leg].v_index) = squat_.theta_dot(t);
      v_ref_(kfe_[leg].v_index) = -2 * squat_.theta_dot(t);
      a_ref_(hfe_[leg].v_index) = squat_.theta_ddot(t);
      a_ref_(kfe_[leg].v_index) = -2 * squat_.theta_ddot(t);
    }

    // Inverse dynamics of the legs: H q̈_ref + C. The simulator's state is
    // valid, so the unchecked variants skip the argument checks.
    const MatrixX& H = plume::unchecked::crba(model_, data_, q);
    tau.noalias() = H * a_ref_;
    tau += plume::unchecked::bias_forces(model_, data_, q, v);

    // Vertical foot forces f_z with Σ f_z = m g and no moment about the
    // centre of mass: three equations for four feet, least-norm solution.
    const plume::Vec3 com = plume::center_of_mass(model_, data_, q);
    plume::unchecked::forward_kinematics(model_, data_, q);
    plume::update_frame_placements(model_, data_);
    Eigen::Matrix<double, 3, 4> A;
    for (int leg = 0; leg < 4; ++leg) {
      const plume::Vec3 p = data_.Xframe[feet_[leg]].r();  // foot centre, world coordinates
      A.col(leg) << 1.0, p.x() - com.x(), p.y() - com.y();
    }
    const Eigen::Vector4d fz = A.transpose() * (A * A.transpose()).ldlt().solve(Eigen::Vector3d(weight_, 0, 0));

    // The joint torques through which the feet push with those forces: Jᵀf.
    tau_feet_.setZero();
    for (int leg = 0; leg < 4; ++leg) {
      plume::unchecked::frame_jacobian(model_, data_, q, feet_[leg], plume::ReferenceFrame::LocalWorldAligned, J_);
      // Rows 3–5: the linear velocity of the foot centre, world axes ([ω; v] order).
      tau_feet_.noalias() += J_.bottomRows<3>().transpose() * plume::Vec3(0.0, 0.0, fz(leg));
    }
    tau -= tau_feet_;

    // PD on the twelve joints.
    for (int j = 1; j < model_.nbodies(); ++j) {
      const plume::Joint& joint = model_.joint(j);
      if (joint.nv != 1) continue;  // the trunk's free-flyer
      tau(joint.v_index) += kp_ * (q_ref_(joint.q_index) - q(joint.q_index)) +
                            kd_ * (v_ref_(joint.v_index) - v(joint.v_index));
    }
    tau.head<6>().setZero();  // the trunk has no motor

    busy_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++ticks_;
  }

  const Squat& squat() const { return squat_; }
  long ticks() const { return ticks_; }
  double seconds_per_tick() const { return ticks_ > 0 ? busy_ / static_cast<double>(ticks_) : 0.0; }

 private:
  const plume::Model& model_;
  plume::Data data_;  // the controller's own workspace
  Squat squat_;
  VectorX q_ref_, v_ref_, a_ref_, tau_feet_;
  plume::Matrix6X J_;  // a foot Jacobian, written in place
  std::array<int, 4> feet_{};
  std::array<plume::Joint, 4> hfe_, kfe_;
  double weight_ = 0.0;
  double kp_ = 400.0, kd_ = 20.0;  // [N m/rad], [N m s/rad]
  long ticks_ = 0;
  double busy_ = 0.0;
};

// Watches the trunk during the run: height error against the squat, tilt.
class TrunkWatch : public plume::Recorder {
 public:
  explicit TrunkWatch(const Squat& squat) : squat_(squat) {}
  void sample(double t, const VectorX& q, const VectorX& /*v*/, double /*energy*/) override {
    const Eigen::Quaterniond orientation(q.segment<4>(3));  // coefficients (x, y, z, w)
    const double tilt = std::acos(std::min(1.0, (orientation * plume::Vec3::UnitZ()).z()));
    max_tilt = std::max(max_tilt, tilt);
    max_height_error = std::max(max_height_error, std::abs(q(2) - squat_.trunk_height(t)));
    min_height = std::min(min_height, q(2));
  }
  double max_tilt = 0.0, max_height_error = 0.0, min_height = 1e9;

 private:
  const Squat& squat_;
};

}  // namespace

int main(int argc, char** argv) {
#ifdef PLUME_MODELS_DIR
  const std::string models = argc > 1 ? argv[1] : PLUME_MODELS_DIR;
#else
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " MODELS_DIR\n";
    return 2;
  }
  const std::string models = argv[1];
#endif
  std::printf("models from %s\n", models.c_str());

  try {
    plume::urdf::LoadOptions options;
    options.root = plume::urdf::RootJoint::FreeFlyer;
    const plume::Model quad = plume::urdf::load(models + "/quadruped.urdf", options);

    // Standing on the ground: hips 0.8 rad, knees −1.6 rad, trunk level at
    // the height where the feet touch.
    const Squat squat;
    VectorX q0 = plume::neutral_configuration(quad);
    q0(2) = squat.trunk_height(0.0);
    for (const char* leg : kLegs) {
      q0(quad.joint(quad.get_joint(std::string(leg) + "_HFE")).q_index) = squat.theta0;
      q0(quad.joint(quad.get_joint(std::string(leg) + "_KFE")).q_index) = -2 * squat.theta0;
    }

    plume::WorldBuilder builder;
    builder.add_model("quad", quad, q0);
    builder.add_environment(plume::ground_plane());
    plume::ContactParameters contact;
    contact.mu = 1.0;
    contact.restitution = 0.0;
    builder.set_default_contact(contact);
    const plume::World world = builder.build();

    plume::SimulationOptions sim_options;
    sim_options.duration = 2.0;
    sim_options.output_rate = 200;
    plume::Simulator sim(world, sim_options);
    // The controller and its Data are built for world.model(), the combined
    // model whose names carry the "quad/" prefix — not for `quad`.
    SquatController controller(world.model(), q0, "quad/");
    sim.set_controller([&controller](double t, const VectorX& q, const VectorX& v,
                                     VectorX& tau) { controller(t, q, v, tau); },
                       1e-3);
    TrunkWatch watch(controller.squat());
    const plume::SimulationResult result = sim.run(&watch);

    const VectorX& q = sim.q();
    const std::size_t feet = sim.current_contacts().size();
    std::printf("simulation: %s at t = %.3f s (%ld steps, %ld events, %.2f s wall)\n", plume::to_string(result.status),
                result.time, result.statistics.steps, result.statistics.events, result.statistics.wall_time);
    if (result.status != plume::SimulationStatus::Finished) std::printf("%s\n", result.message.c_str());
    std::printf("controller: %ld ticks, %.2f us per tick (H, C, centre of mass, 4 foot Jacobians)\n",
                controller.ticks(), 1e6 * controller.seconds_per_tick());
    std::printf("squat: trunk height within %.2f mm of the reference, tilt at most %.3f deg\n",
                1e3 * watch.max_height_error, watch.max_tilt * 180 / M_PI);
    std::printf("end: trunk height %.5f m (standing %.5f m), |v| = %.2e, %zu feet on the ground\n", q(2),
                squat.trunk_height(sim_options.duration), sim.v().norm(), feet);

    const bool standing = result.status == plume::SimulationStatus::Finished && watch.min_height > 0.3 &&
                          watch.max_tilt < 0.1 && watch.max_height_error < 0.01 && feet == 4 &&
                          sim.v().norm() < 1e-2;
    std::printf("standing: %s\n", standing ? "yes" : "no");
    return standing ? 0 : 1;
  } catch (const plume::Error& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  }
}
