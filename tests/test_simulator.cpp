// The event-driven simulator against closed forms and conservation laws
// (issue checks: bouncing ball, falling rod, Newton's cradle, bowling ball,
// energy, quadruped demo, determinism, failures).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/sim/simulator.hpp"
#include "plume/sim/world_file.hpp"
#include "plume/urdf.hpp"
#include "test_utils.hpp"

using namespace plume;
using namespace plume::test;

namespace {

constexpr double g = 9.81;

World single(const std::string& name, const Model& m, const VectorX& q0, const VectorX& v0, double mu, double e,
             bool ground = true) {
  WorldBuilder wb;
  wb.add_model(name, m, q0, v0);
  if (m.collisions().empty()) wb.set_collision(name, false);  // a pendulum: nothing to touch
  if (ground) wb.add_environment(ground_plane());
  ContactParameters cp;
  cp.mu = mu;
  cp.restitution = e;
  wb.set_default_contact(cp);
  return wb.build();
}

std::vector<SimulationEvent> of_kind(const MemoryRecorder& r, EventKind k) {
  std::vector<SimulationEvent> out;
  for (const SimulationEvent& e : r.events) {
    if (e.kind == k) out.push_back(e);
  }
  return out;
}

}  // namespace

TEST(Simulator, BouncingBallMatchesItsClosedForm) {
  // Drop height h (gap), restitution e: t_k = t₁(1 + 2e + … + 2e^{k−1}),
  // t₁ = √(2h/g), apex heights e^{2k} h, rest near t∞ = t₁(1+e)/(1−e).
  const Model ball = load_model("ball.urdf", urdf::RootJoint::FreeFlyer);
  const double h = 1.0, e = 0.8, r = 0.1;
  VectorX q0 = neutral_configuration(ball);
  q0(2) = h + r;
  SimulationOptions o;
  o.duration = 5.0;
  o.output_rate = 20;
  Simulator sim(single("ball", ball, q0, VectorX::Zero(6), 0.0, e), o);
  MemoryRecorder rec;
  const SimulationResult res = sim.run(&rec);
  ASSERT_EQ(res.status, SimulationStatus::Finished) << res.message;
  const auto impacts = of_kind(rec, EventKind::Impact);
  ASSERT_GE(impacts.size(), 20u);
  const double t1 = std::sqrt(2 * h / g);
  double tk = t1, step = 2 * e * t1;
  for (int k = 0; k < 20; ++k) {
    EXPECT_NEAR(impacts[k].time, tk, 1e-8) << "impact " << k + 1;
    // Apex after impact k: (post-impact speed)² / 2g = e^{2k} h.
    const double apex = impacts[k].post_normal_velocity * impacts[k].post_normal_velocity / (2 * g);
    EXPECT_NEAR(apex, std::pow(e, 2 * (k + 1)) * h, 1e-9 * h) << "impact " << k + 1;
    tk += step;
    step *= e;
  }
  // The bounces accumulate at t∞: the ball rests there (zeno_rest at the
  // t∞ predicted from its flight times).
  const auto rests = of_kind(rec, EventKind::ZenoRest);
  ASSERT_EQ(rests.size(), 1u);
  const double t_inf = t1 * (1 + e) / (1 - e);
  EXPECT_NEAR(rests[0].time, t_inf, 1e-9);
  EXPECT_LT(sim.v().norm(), 1e-8);
  EXPECT_EQ(sim.current_contacts().size(), 1u);
  // Energy is kept between impacts and only lost at them.
  for (std::size_t i = 1; i < rec.energies.size(); ++i) EXPECT_LE(rec.energies[i], rec.energies[i - 1] + 1e-9);
  EXPECT_LT(res.statistics.max_penetration, 1e-9);
}

TEST(Simulator, FallingRodOnAFrictionlessFloor) {
  // A rod (length 2l, mass m) released at 45° with its left end on the floor.
  const Model rod = load_model("rod.urdf", urdf::RootJoint::Planar);
  const double th0 = M_PI / 4, l = 1.0;
  VectorX q0(3);
  q0 << 0.0, l * std::sin(th0), th0;
  // m and I about the COM from the model's H (planar joint at the COM).
  Data d(rod);
  const MatrixX H = crba(rod, d, q0);
  const double m = H(0, 0), I = H(2, 2);
  SimulationOptions o;
  o.duration = 1.0;
  o.output_rate = 100;
  Simulator sim(single("rod", rod, q0, VectorX::Zero(3), 0.0, 0.0), o);
  MemoryRecorder rec;
  const SimulationResult res = sim.run(&rec);
  ASSERT_EQ(res.status, SimulationStatus::Finished) << res.message;
  // The COM moves vertically only: no horizontal force acts.
  for (const VectorX& q : rec.q) EXPECT_NEAR(q(0), 0.0, 1e-12);
  // First impact time from the energy integral: ½(m l² cos²θ + I) θ̇² = m g l (sin θ₀ − sin θ),
  // T = ∫ dθ/|θ̇| from 0 to θ₀ (θ = θ₀ − s² removes the end singularity).
  double T = 0.0;
  const int N = 200000;
  const double smax = std::sqrt(th0);
  for (int k = 0; k < N; ++k) {
    const double s = (k + 0.5) * smax / N, th = th0 - s * s;
    const double thdot = std::sqrt(2 * m * g * l * (std::sin(th0) - std::sin(th)) / (m * l * l * std::cos(th) * std::cos(th) + I));
    T += 2 * s / thdot * smax / N;
  }
  const auto impacts = of_kind(rec, EventKind::Impact);
  ASSERT_EQ(impacts.size(), 2u);  // both ends take part in one impact
  EXPECT_NEAR(impacts[0].time, T, 1e-8);
  // The resting end never lifts off before the impact.
  for (const SimulationEvent& ev : rec.events) {
    if (ev.kind == EventKind::ContactLoss) {
      EXPECT_GT(ev.time, T - 1e-6);
    }
  }
  // The two-contact plastic impact stops the rod: with θ̇ at impact,
  // λ_R + λ_L = −m l θ̇ and λ_R − λ_L = −I θ̇ / l.
  const double thdot = -std::sqrt(2 * m * g * l * std::sin(th0) / (m * l * l + I));
  const double lR = -thdot * (m * l + I / l) / 2, lL = -thdot * (m * l - I / l) / 2;
  for (const SimulationEvent& ev : impacts) {
    const bool right = ev.contact.find("end_right") != std::string::npos;
    EXPECT_NEAR(ev.impulse, right ? lR : lL, 1e-8) << ev.contact;
    EXPECT_NEAR(ev.post_normal_velocity, 0.0, 1e-9);
    if (right) {
      EXPECT_NEAR(ev.pre_normal_velocity, 2 * l * thdot, 1e-8);
    }
  }
  // At rest with each end carrying half the weight.
  EXPECT_LT(sim.v().norm(), 1e-8);
  int samples = 0;
  for (const ContactSample& c : rec.contacts) {
    if (c.time < 0.9) continue;
    EXPECT_NEAR(c.normal_force, m * g / 2, 1e-6) << c.contact;
    ++samples;
  }
  EXPECT_GT(samples, 10);
}

TEST(Simulator, NewtonsCradleHasSequentialImpacts) {
  // Five balls 1 mm apart on frictionless sliders, e = 1, the first struck.
  const Model row = load_model("balls_row.urdf", urdf::RootJoint::Fixed);
  VectorX v0 = VectorX::Zero(5);
  v0(0) = 1.0;
  SimulationOptions o;
  o.duration = 0.1;
  o.output_rate = 0;
  Simulator sim(single("cradle", row, VectorX::Zero(5), v0, 0.0, 1.0, false), o);
  MemoryRecorder rec;
  const SimulationResult res = sim.run(&rec);
  ASSERT_EQ(res.status, SimulationStatus::Finished) << res.message;
  const auto impacts = of_kind(rec, EventKind::Impact);
  ASSERT_EQ(impacts.size(), 4u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(impacts[k].time, 0.001 * (k + 1), 1e-9);  // 1 mm gaps at 1 m/s, one at a time
    EXPECT_EQ(impacts[k].contact.find("ball_" + std::to_string(k + 1)), impacts[k].contact.find("ball_"));
  }
  EXPECT_NEAR(sim.v()(4), 1.0, 1e-9);
  EXPECT_LT(sim.v().head<4>().norm(), 1e-9);
  const double mass = 0.2;
  EXPECT_NEAR(mass * sim.v().sum(), mass * 1.0, 1e-9);       // momentum
  EXPECT_NEAR(sim.energy(), 0.5 * mass * 1.0, 1e-9);         // energy
}

TEST(Simulator, BowlingBallStopsSlippingAtTwoSeventh) {
  // A sphere launched sliding at v₀ without spin: friction μ m g decelerates it
  // until it rolls, at t = 2 v₀/(7 μ g), then it rolls at 5 v₀/7.
  const Model ball = load_model("ball.urdf", urdf::RootJoint::FreeFlyer);
  const double v0 = 2.0, mu = 0.2, r = 0.1;
  VectorX q0 = neutral_configuration(ball);
  q0(2) = r;
  VectorX vv = VectorX::Zero(6);
  vv(3) = v0;
  SimulationOptions o;
  o.duration = 0.6;
  o.output_rate = 50;
  Simulator sim(single("ball", ball, q0, vv, mu, 0.0), o);
  MemoryRecorder rec;
  const SimulationResult res = sim.run(&rec);
  ASSERT_EQ(res.status, SimulationStatus::Finished) << res.message;
  const auto sticks = of_kind(rec, EventKind::Stick);
  ASSERT_EQ(sticks.size(), 1u);
  EXPECT_NEAR(sticks[0].time, 2 * v0 / (7 * mu * g), 1e-8);
  // Rolling: world velocity 5 v₀/7 along x, ω = v/r about y.
  const Eigen::Quaterniond rq(sim.q().segment<4>(3));
  const Vec3 vw = rq * Vec3(sim.v().segment<3>(3));
  const Vec3 ww = rq * Vec3(sim.v().segment<3>(0));
  EXPECT_NEAR(vw.x(), 5 * v0 / 7, 1e-8);
  EXPECT_NEAR(vw.z(), 0.0, 1e-9);
  EXPECT_NEAR(ww.y(), 5 * v0 / 7 / r, 1e-7);
}

TEST(Simulator, EnergyIsConservedWithoutContact) {
  for (const bool humanoid : {false, true}) {
    const Model m = humanoid ? load_model("humanoid.urdf", urdf::RootJoint::FreeFlyer)
                             : load_model("double_pendulum.urdf", urdf::RootJoint::Fixed);
    VectorX q0 = random_configuration(m, 5);
    if (humanoid) q0(2) = 100.0;  // free flight, nothing to touch
    std::mt19937_64 gen(1);
    const VectorX v0 = random_vector(gen, m.nv());
    SimulationOptions o;
    o.duration = 10.0;
    o.output_rate = 10;
    o.abs_tol = o.rel_tol = 1e-12;
    o.joint_limits = false;
    Simulator sim(single("m", m, q0, v0, 0.0, 0.0, false), o);
    MemoryRecorder rec;
    const SimulationResult res = sim.run(&rec);
    ASSERT_EQ(res.status, SimulationStatus::Finished) << res.message;
    double drift = 0.0;
    for (double e : rec.energies) drift = std::max(drift, std::abs(e - rec.energies.front()));
    EXPECT_LT(drift, 1e-8) << (humanoid ? "humanoid" : "double pendulum");
    // Quaternions stay unit.
    if (humanoid) {
      for (const VectorX& q : rec.q) EXPECT_NEAR(q.segment<4>(3).norm(), 1.0, 1e-12);
    }
  }
}

TEST(Simulator, FreeFlightOfASpinningCubeFollowsItsClosedForm) {
  // A cube (isotropic inertia) thrown spinning, nothing to touch: torque-free,
  // so ω (body) stays ω₀, R(t) = R₀ exp(ω₀ t), and its centre (the link
  // origin) follows p₀ + R₀ v₀ t + ½ g t². At the default tolerances the
  // event-driven scheme's free-flyer chart makes this flight a polynomial in
  // t (measured over 2 s, 50 m up: position 4.4e-14 m, rotation 7.1e-15 rad,
  // ω exact, 203 steps; with the quaternion integrated before: 9.9e-10 m,
  // 1.8e-12 rad, 374 steps).
  const Model cube = load_model("cube.urdf", urdf::RootJoint::FreeFlyer);
  const Eigen::Quaterniond r0(Eigen::AngleAxisd(0.3, Vec3(1, 2, 3).normalized()));
  const Vec3 w0(3.0, -2.0, 5.0), v0(0.5, 0.2, 1.0), p0(0.1, -0.2, 50.0);
  VectorX q0 = neutral_configuration(cube);
  q0.head<3>() = p0;
  q0.segment<4>(3) = r0.coeffs();
  VectorX vel(6);
  vel << w0, v0;
  SimulationOptions o;
  o.duration = 2.0;
  o.output_rate = 50;
  Simulator sim(single("cube", cube, q0, vel, 0.0, 0.0, false), o);
  MemoryRecorder rec;
  const SimulationResult res = sim.run(&rec);
  ASSERT_EQ(res.status, SimulationStatus::Finished) << res.message;
  double dp = 0.0, dr = 0.0, dw = 0.0;
  for (std::size_t k = 0; k < rec.times.size(); ++k) {
    const double t = rec.times[k];
    const Vec3 p = p0 + r0 * v0 * t + 0.5 * Vec3(0, 0, -g) * t * t;
    const Eigen::Quaterniond r = r0 * Eigen::Quaterniond(Eigen::AngleAxisd(w0.norm() * t, w0.normalized()));
    const Eigen::Quaterniond rq(rec.q[k].segment<4>(3));
    dp = std::max(dp, (rec.q[k].head<3>() - p).norm());
    dr = std::max(dr, r.angularDistance(rq));
    dw = std::max(dw, (rec.v[k].head<3>() - w0).norm());
  }
  std::printf("spinning cube, 2 s at the defaults: position %.1e m, rotation %.1e rad, omega %.1e rad/s, %ld steps\n", dp, dr, dw, res.statistics.steps);
  EXPECT_LT(dp, 2e-13);
  EXPECT_LT(dr, 1e-13);
  EXPECT_LT(dw, 1e-13);
}

TEST(Simulator, TumblingBoxKeepsItsAngularMomentumAndEnergy) {
  // Where the chart is not exact: a body with three different moments
  // spinning off its principal axes (ω precesses). Torque-free, so the
  // world-frame angular momentum R I ω and the kinetic energy of rotation
  // are conserved; at the defaults they drift by the integrator's error
  // (measured over 2 s: relative 3.8e-11 and 3.8e-11 in 209 steps, most at
  // max_step; with the quaternion integrated before: 4.2e-12 and 2.7e-12 in
  // 345 steps).
  const char* text =
      "<robot name='box'><link name='box'><inertial><mass value='1'/>"
      "<inertia ixx='0.0011333333333333334' ixy='0' ixz='0' iyy='0.0024333333333333334' iyz='0' izz='0.0029666666666666665'/>"
      "</inertial><collision><geometry><box size='0.16 0.1 0.06'/></geometry></collision></link></robot>";
  urdf::LoadOptions lo;
  lo.root = urdf::RootJoint::FreeFlyer;
  const Model m = urdf::load_string(text, lo);
  const Vec3 inertia(0.0011333333333333334, 0.0024333333333333334, 0.0029666666666666665);
  VectorX q0 = neutral_configuration(m);
  q0(2) = 50.0;
  VectorX vel = VectorX::Zero(6);
  vel.head<3>() = Vec3(3.0, -2.0, 5.0);
  SimulationOptions o;
  o.duration = 2.0;
  o.output_rate = 50;
  Simulator sim(single("box", m, q0, vel, 0.0, 0.0, false), o);
  MemoryRecorder rec;
  const SimulationResult res = sim.run(&rec);
  ASSERT_EQ(res.status, SimulationStatus::Finished) << res.message;
  auto momentum = [&](std::size_t k) {
    const Eigen::Quaterniond r(rec.q[k].segment<4>(3));
    return Vec3(r.normalized() * inertia.cwiseProduct(rec.v[k].head<3>()));
  };
  auto rotational_energy = [&](std::size_t k) {
    const Vec3 w = rec.v[k].head<3>();
    return 0.5 * w.dot(inertia.cwiseProduct(w));
  };
  const Vec3 L0 = momentum(0);
  const double E0 = rotational_energy(0);
  double dL = 0.0, dE = 0.0;
  for (std::size_t k = 0; k < rec.times.size(); ++k) {
    dL = std::max(dL, (momentum(k) - L0).norm() / L0.norm());
    dE = std::max(dE, std::abs(rotational_energy(k) - E0) / E0);
  }
  std::printf("tumbling box, 2 s at the defaults: angular momentum %.1e, energy %.1e (relative), %ld steps\n", dL, dE, res.statistics.steps);
  EXPECT_LT(dL, 1e-9);
  EXPECT_LT(dE, 1e-9);
}

namespace {

struct QuadrupedDemo {
  World world;
  PdController pd;
  VectorX stand;
  explicit QuadrupedDemo(double mu = 1.0) {
    const Model quad = load_model("quadruped.urdf", urdf::RootJoint::FreeFlyer);
    stand = neutral_configuration(quad);
    stand(2) = 0.45;  // about 12 mm above standing height
    for (int leg = 0; leg < 4; ++leg) {
      stand(7 + 3 * leg) = 0.0;
      stand(8 + 3 * leg) = 0.8;
      stand(9 + 3 * leg) = -1.6;
    }
    world = single("quad", quad, stand, VectorX::Zero(18), mu, 0.0);
    pd.kp = VectorX::Zero(18);
    pd.kd = VectorX::Zero(18);
    // The gains of models/worlds/quadruped_standing.xml. A sampled PD is
    // stable while kd·T < 2/(H⁻¹)ᵢᵢ: at 1 kHz the knees' 0.0084 kg·m² in
    // flight bound their kd to 16.
    pd.kp.tail<12>().setConstant(800.0);
    for (int leg = 0; leg < 4; ++leg) pd.kd.segment<3>(6 + 3 * leg) = Vec3(35.0, 35.0, 15.0);
    pd.q_target = stand;
  }
};

}  // namespace

TEST(Simulator, QuadrupedStandsOnItsFeet) {
  QuadrupedDemo demo;
  SimulationOptions o;
  o.duration = 1.5;
  o.output_rate = 100;
  Simulator sim(demo.world, o);
  sim.set_controller(demo.pd.function(demo.world.model()), 1e-3);
  MemoryRecorder rec;
  const SimulationResult res = sim.run(&rec);
  ASSERT_EQ(res.status, SimulationStatus::Finished) << res.message;
  EXPECT_LT(res.statistics.max_penetration, 1e-6);
  EXPECT_EQ(sim.current_contacts().size(), 4u);
  EXPECT_TRUE(of_kind(rec, EventKind::Slip).empty());  // μ = 1: the feet do not slip
  // Standing within 1 s: after that the trunk barely moves.
  for (std::size_t i = 0; i < rec.times.size(); ++i) {
    if (rec.times[i] >= 1.0) {
      EXPECT_LT(rec.v[i].norm(), 5e-3) << "t = " << rec.times[i];
    }
  }
  // The feet roll (spheres) but never slide: the material point of each
  // foot at its ground contact has no tangential velocity.
  const Model& m = demo.world.model();
  Data d(m);
  int checked = 0;
  for (std::size_t i = 0; i < rec.times.size(); ++i) {
    if (rec.times[i] < 0.06) continue;  // landed at ≈ 0.049 s
    forward_kinematics(m, d, rec.q[i], rec.v[i]);
    for (const CollisionShape& s : m.collisions()) {
      const auto* sphere = std::get_if<Sphere>(&s.geometry);
      if (!sphere) continue;
      const Vec3 centre = d.X0[s.body].inverse_transform_point(s.placement.inverse_transform_point(Vec3::Zero()));
      const Vec3 contact_point = centre - sphere->radius * Vec3::UnitZ();
      const Vec3 u = point_velocity(m, d, s.body, d.X0[s.body].transform_point(contact_point), ReferenceFrame::LocalWorldAligned);
      EXPECT_LT(u.head<2>().norm(), 1e-6) << s.name << " at t = " << rec.times[i];
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

// A landing under a held torque: the feet touch with normal speeds just
// above the resting tolerance and a gap that never reopens. Such contacts
// must be taken as resting, not re-detected as impacts at the same time
// over and over (this run once ended at the event cap).
TEST(Simulator, LandingUnderHeldTorqueDoesNotChatter) {
  QuadrupedDemo demo;
  PdController pd = demo.pd;
  pd.kd.tail<12>().setConstant(10.0);
  pd.tau_ff = VectorX::Zero(18);
  pd.tau_ff.tail<12>().setConstant(0.2);
  SimulationOptions o;
  o.duration = 0.5;
  o.output_rate = 100;
  o.max_events = 2000;
  Simulator sim(demo.world, o);
  sim.set_controller(pd.function(demo.world.model()), 1e-3);
  MemoryRecorder rec;
  const SimulationResult res = sim.run(&rec);
  ASSERT_EQ(res.status, SimulationStatus::Finished) << res.message;
  EXPECT_LT(rec.events.size(), 200u);
  EXPECT_LT(res.statistics.max_penetration, 1e-6);
  EXPECT_EQ(sim.current_contacts().size(), 4u);
  // No two impacts of one contact at the same instant.
  const std::vector<SimulationEvent> impacts = of_kind(rec, EventKind::Impact);
  for (std::size_t i = 1; i < impacts.size(); ++i) {
    const bool repeat = impacts[i].contact == impacts[i - 1].contact && impacts[i].time == impacts[i - 1].time;
    EXPECT_FALSE(repeat) << impacts[i].contact << " at t = " << impacts[i].time;
  }
}

// μ = 0.5: the feet land sliding outwards and the symmetric pairs slow to a
// stop at the same instant. Every sliding contact must switch its friction
// direction model (u/|u| → frozen) at its own threshold crossing, even when
// another contact triggered the event: this run once stalled with a step
// underflow 0.4 ms after landing, one hind foot sliding through u = 0 with
// the discontinuous direction u/|u|.
TEST(Simulator, SymmetricFeetStopSlidingTogether) {
  QuadrupedDemo demo(0.5);
  SimulationOptions o;
  o.duration = 0.3;
  o.output_rate = 1000;
  Simulator sim(demo.world, o);
  sim.set_controller(demo.pd.function(demo.world.model()), 1e-3);
  MemoryRecorder rec;
  const SimulationResult res = sim.run(&rec);
  ASSERT_EQ(res.status, SimulationStatus::Finished) << res.message;
  EXPECT_LT(res.statistics.max_penetration, 1e-6);
  const std::vector<SimulationEvent> sticks = of_kind(rec, EventKind::Stick);
  ASSERT_GE(sticks.size(), 4u);
  // Left and right feet mirror each other: their stick events come in pairs
  // at the same time (to the event tolerance).
  for (std::size_t i = 0; i + 1 < sticks.size(); i += 2) {
    EXPECT_NEAR(sticks[i].time, sticks[i + 1].time, 1e-9) << sticks[i].contact << " / " << sticks[i + 1].contact;
  }
  // The robot stays mirror-symmetric about its sagittal plane: trunk y,
  // roll and yaw stay zero, left and right legs agree (HAA with opposite sign).
  for (std::size_t i = 0; i < rec.times.size(); ++i) {
    const VectorX& q = rec.q[i];
    EXPECT_NEAR(q(1), 0.0, 1e-7) << "t = " << rec.times[i];
    for (int pair = 0; pair < 2; ++pair) {
      const int l = 7 + 6 * pair, r = l + 3;
      EXPECT_NEAR(q(l), -q(r), 1e-6) << "t = " << rec.times[i];
      EXPECT_NEAR(q(l + 1), q(r + 1), 1e-6) << "t = " << rec.times[i];
      EXPECT_NEAR(q(l + 2), q(r + 2), 1e-6) << "t = " << rec.times[i];
    }
  }
}

// A start sunk deeper than max_initial_penetration is refused up front,
// naming the deepest contact and its depth (the feet touch the ground with
// the trunk at 0.43802 m, so at 0.40 m they are 38.02 mm deep); a shallow
// overlap is accepted and resolved.
TEST(Simulator, RefusesADeeplyPenetratingStart) {
  QuadrupedDemo demo;
  WorldBuilder wb;
  VectorX q = demo.stand;
  q(2) = 0.40;
  const Model quad = load_model("quadruped.urdf", urdf::RootJoint::FreeFlyer);
  wb.add_model("quad", quad, q, VectorX::Zero(18));
  wb.add_environment(ground_plane());
  const World deep = wb.build();
  SimulationOptions o;
  o.duration = 0.01;
  for (const Scheme scheme : {Scheme::EventDriven, Scheme::Compliant, Scheme::TimeStepping}) {
    o.scheme = scheme;
    try {
      Simulator sim(deep, o);
      ADD_FAILURE() << to_string(scheme) << ": a start 38 mm deep was accepted";
    } catch (const ArgumentError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("_foot"), std::string::npos) << what;
      EXPECT_NE(what.find("0.03802"), std::string::npos) << what;
      EXPECT_NE(what.find("max_initial_penetration = 0.01"), std::string::npos) << what;
    }
  }
  o.scheme = Scheme::EventDriven;
  o.max_initial_penetration = 0.05;
  EXPECT_NO_THROW(Simulator(deep, o));
  q(2) = 0.43802 - 2e-3;  // 2 mm: accepted with the default
  WorldBuilder shallow_builder;
  shallow_builder.add_model("quad", quad, q, VectorX::Zero(18));
  shallow_builder.add_environment(ground_plane());
  o.max_initial_penetration = SimulationOptions{}.max_initial_penetration;
  Simulator shallow(shallow_builder.build(), o);
  const SimulationResult r = shallow.run();
  EXPECT_EQ(r.status, SimulationStatus::Finished) << r.message;
  o.max_initial_penetration = -1.0;
  EXPECT_THROW(Simulator(deep, o), ArgumentError);
}

TEST(Simulator, RunsAreBitForBitDeterministic) {
  QuadrupedDemo demo;
  SimulationOptions o;
  o.duration = 0.2;
  o.output_rate = 200;
  MemoryRecorder a, b;
  for (MemoryRecorder* rec : {&a, &b}) {
    Simulator sim(demo.world, o);
    sim.set_controller(demo.pd.function(demo.world.model()), 1e-3);
    ASSERT_EQ(sim.run(rec).status, SimulationStatus::Finished);
  }
  ASSERT_EQ(a.q.size(), b.q.size());
  for (std::size_t i = 0; i < a.q.size(); ++i) {
    EXPECT_EQ(a.times[i], b.times[i]);
    EXPECT_TRUE((a.q[i].array() == b.q[i].array()).all());
    EXPECT_TRUE((a.v[i].array() == b.v[i].array()).all());
  }
  ASSERT_EQ(a.events.size(), b.events.size());
}

TEST(Simulator, FailuresKeepWhatWasComputed) {
  const Model ball = load_model("ball.urdf", urdf::RootJoint::FreeFlyer);
  VectorX q0 = neutral_configuration(ball);
  q0(2) = 1.0;
  SimulationOptions o;
  o.duration = 1.0;
  o.output_rate = 100;
  Simulator sim(single("ball", ball, q0, VectorX::Zero(6), 0.0, 0.5), o);
  // A controller that blows up at t = 0.3 s.
  sim.set_controller([](double t, const VectorX&, const VectorX&, VectorX& tau) {
    tau.setZero();
    if (t >= 0.3) tau(5) = std::nan("");
  }, 0.01);
  MemoryRecorder rec;
  const SimulationResult res = sim.run(&rec);
  EXPECT_EQ(res.status, SimulationStatus::NonFinite) << res.message;
  EXPECT_NE(res.message.find("tau[5]"), std::string::npos) << res.message;
  EXPECT_NE(res.message.find("t = 0.3"), std::string::npos) << res.message;
  EXPECT_GE(rec.times.size(), 30u);  // the samples before the failure are kept
  EXPECT_NEAR(res.time, 0.3, 1e-12);
  // Step underflow: a tolerance no step can meet.
  SimulationOptions bad = o;
  bad.abs_tol = bad.rel_tol = 1e-300;
  bad.min_step = 1e-9;
  Simulator sim2(single("ball", ball, q0, VectorX::Zero(6), 0.0, 0.5), bad);
  MemoryRecorder rec2;
  const SimulationResult r2 = sim2.run(&rec2);
  EXPECT_EQ(r2.status, SimulationStatus::StepUnderflow) << r2.message;
  EXPECT_NE(r2.message.find("t = "), std::string::npos) << r2.message;
  EXPECT_FALSE(rec2.times.empty());
}

// A passive quadruped collapsing onto its trunk (knees bent, μ = 0.45): the
// four coplanar trunk corners, the feet and the hip limits make the
// acceleration-level frictional LCP degenerate, and at about 0.67 s Lemke
// leaves it unsolved. (With μ = 0.5 it did so at 0.81 s until the starting
// slides' Newton steps were halved where they overshoot: that path now
// finishes without the fallback.) With fallback_duration = 0 the run stops there with
// contact_failure. With the default, what the fallback path tries first
// carries it through: the tangential impact, whose impulse LCP Lemke now
// solves with its narrow tie window (before, velocity-level windows were
// needed). It finishes, any window is a `fallback` event, the surfaces
// never interpenetrate beyond the drift tolerance, and the mechanical
// energy of this unactuated robot never grows from one sample to the next
// (to 1e-6 of its start). (The windows themselves are checked on the
// humanoid's collapse, HumanoidCollapse.FoldsOntoItsLimits….)
TEST(Simulator, DegenerateCollapseFallsBackToVelocityLevelSteps) {
  const Model quad = load_model("quadruped.urdf", urdf::RootJoint::FreeFlyer);
  VectorX q(19);
  q << 0, 0, 0.45802, 0, 0, 0, 1, 0, 0.8, -1.6, 0, 0.8, -1.6, 0, 0.8, -1.6, 0, 0.8, -1.6;
  WorldBuilder wb;
  wb.add_model("quad", quad, q, VectorX::Zero(18));
  wb.add_environment(ground_plane());
  ContactParameters cp;
  cp.mu = 0.45;
  cp.restitution = 0.0;
  wb.set_default_contact(cp);
  const World world = wb.build();
  SimulationOptions o;
  o.duration = 1.0;
  o.fallback_duration = 0.0;
  {
    Simulator rigid(world, o);
    const SimulationResult r = rigid.run();
    EXPECT_EQ(r.status, SimulationStatus::ContactFailure) << r.message;
    EXPECT_GT(r.time, 0.5);
    EXPECT_LT(r.time, 1.0);
    EXPECT_EQ(r.statistics.fallbacks, 0);
  }
  o.fallback_duration = SimulationOptions{}.fallback_duration;
  Simulator sim(world, o);
  MemoryRecorder rec;
  const SimulationResult r = sim.run(&rec);
  ASSERT_EQ(r.status, SimulationStatus::Finished) << r.message;
  EXPECT_LE(r.statistics.fallback_time, r.statistics.fallbacks * o.fallback_duration + 1e-12);
  if (r.statistics.fallbacks > 0) {
    EXPECT_NE(r.message.find("velocity-level fallback"), std::string::npos) << r.message;
  }
  long fallback_events = 0;
  for (const SimulationEvent& e : rec.events) fallback_events += e.kind == EventKind::Fallback;
  EXPECT_GE(fallback_events, r.statistics.fallbacks);
  EXPECT_LT(r.statistics.max_penetration, 1e-6);
  const double e0 = rec.energies.front();
  double worst_gain = 0.0;
  for (std::size_t i = 1; i < rec.energies.size(); ++i) {
    worst_gain = std::max(worst_gain, rec.energies[i] - rec.energies[i - 1]);
  }
  EXPECT_LT(worst_gain, 1e-6 * std::abs(e0));
  EXPECT_LT(rec.energies.back(), e0);
  std::printf("fallbacks %ld (%.4g s), max penetration %.3g m, worst energy gain between samples %.3g J of %.6g J\n",
              r.statistics.fallbacks, r.statistics.fallback_time, r.statistics.max_penetration, worst_gain, e0);
}

// Events at one instant that leave the state as it was (a contact gained at
// t = 0 and the sets re-solved, a witness re-firing) add no trajectory row:
// rows repeat neither time nor state. (The humanoid collapse wrote 1 001
// equal rows at one instant, with their contact rows, before a fallback
// window; incline_cube_static and humanoid_falling wrote one repeat each.)
TEST(Simulator, EventsThatLeaveTheStateAsItWasAddNoSample) {
  for (const char* name : {"incline_cube_static", "humanoid_falling"}) {
    SCOPED_TRACE(name);
    const Scenario sc = load_world(std::string(PLUME_MODELS_DIR) + "/worlds/" + name + ".xml");
    ASSERT_EQ(sc.options.scheme, Scheme::EventDriven);
    Simulator sim(sc.world, sc.options);
    MemoryRecorder rec;
    ASSERT_EQ(sim.run(&rec).status, SimulationStatus::Finished);
    ASSERT_GT(rec.times.size(), 100u);
    int repeats = 0;
    for (std::size_t k = 1; k < rec.times.size(); ++k) {
      repeats += rec.times[k] == rec.times[k - 1] && rec.q[k] == rec.q[k - 1] && rec.v[k] == rec.v[k - 1];
    }
    EXPECT_EQ(repeats, 0);
  }
}

TEST(Simulator, JointLimitOverrunIsReportedApartFromPenetration) {
  // A pendulum whose upper limit (−0.3 rad) is on the side gravity pulls it
  // to, started 1e-4 rad beyond that limit: it is pushed back and rests on
  // the limit. max_penetration is the shapes' −φ in metres (there are none
  // here: 0); the limit's overrun, in radians, is max_limit_violation — at
  // least the start's 1e-4 and the final state's own overrun.
  const std::string urdf = R"(<robot name="p">
    <link name="base"/>
    <joint name="hinge" type="revolute"><parent link="base"/><child link="bob"/><axis xyz="0 1 0"/>
      <limit lower="-1.5" upper="-0.3" effort="100" velocity="100"/></joint>
    <link name="bob"><inertial><origin xyz="0 0 -1"/><mass value="1"/>
      <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  </robot>)";
  const Model m = urdf::load_string(urdf);
  for (const Scheme scheme : {Scheme::EventDriven, Scheme::TimeStepping}) {
    SCOPED_TRACE(to_string(scheme));
    SimulationOptions o;
    o.scheme = scheme;
    o.duration = 0.5;
    o.output_rate = 0;
    Simulator sim(single("p", m, VectorX::Constant(1, -0.3 + 1e-4), VectorX::Zero(1), 0.0, 0.0, false), o);
    const SimulationResult r = sim.run();
    ASSERT_EQ(r.status, SimulationStatus::Finished) << r.message;
    EXPECT_EQ(r.statistics.max_penetration, 0.0);
    EXPECT_GE(r.statistics.max_limit_violation, 1e-4 * (1.0 - 1e-9));
    EXPECT_GE(r.statistics.max_limit_violation, sim.q()(0) + 0.3);
    EXPECT_LT(r.statistics.max_limit_violation, 2e-4);
    EXPECT_NEAR(sim.q()(0), -0.3, 1e-8);  // back on the limit
  }
}

TEST(Simulator, CompliantLimitOfALightJointIsCriticallyDamped) {
  // Compliant scheme: a joint limit is the world's spring K and damper D per
  // radian, the damping capped at critical for the joint's inertia I = H_jj,
  // D ≤ 2√(K I). A wrist-like joint (vertical axis, so no gravity torque;
  // I = 5e-4 kg·m²) turning at ω₀ = 1 rad/s onto its upper limit with the
  // defaults (K = 2e5, D = 2e3: 45× critical uncapped): with ω = √(K/I) the
  // overrun is δ(s) = ω₀ s e^{−ωs} after the touch, the largest
  // ω₀/(e ω) at s = 1/ω; the force K δ + D δ̇ = I ω₀ ω e^{−ωs}(2 − ωs) lets go at
  // s = 2/ω with the joint turning back at ω₀ e^{−2} (the critically damped
  // Kelvin–Voigt restitution), and the relaxing limit never catches it again.
  // Uncapped the overrun is about ω₀ I/D, 74× smaller, and the rebound slower.
  const std::string urdf = R"(<robot name="w">
    <link name="base"/>
    <joint name="wrist" type="revolute"><parent link="base"/><child link="hand"/><axis xyz="0 0 1"/>
      <limit lower="-1" upper="0" effort="10" velocity="10"/></joint>
    <link name="hand"><inertial><mass value="0.4"/>
      <inertia ixx="5e-4" iyy="5e-4" izz="5e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  </robot>)";
  const Model m = urdf::load_string(urdf);
  const double w0 = 1.0, I = 5e-4;
  SimulationOptions o;
  o.scheme = Scheme::Compliant;
  o.duration = 3e-3;
  o.output_rate = 2e6;
  Simulator sim(single("w", m, VectorX::Constant(1, -1e-3), VectorX::Constant(1, w0), 0.0, 0.0, false), o);
  MemoryRecorder rec;
  const SimulationResult r = sim.run(&rec);
  ASSERT_EQ(r.status, SimulationStatus::Finished) << r.message;
  const ContactParameters defaults;
  const double omega = std::sqrt(defaults.stiffness / I);
  const double t_touch = 1e-3 / w0;
  double overrun = 0.0, t_max = 0.0;
  for (std::size_t i = 0; i < rec.q.size(); ++i) {
    if (rec.q[i](0) > overrun) {
      overrun = rec.q[i](0);
      t_max = rec.times[i];
    }
  }
  std::printf("[ limit ] overrun %.6e rad at %.6e s after the touch (w0/(e w) = %.6e at %.6e); final rate %.9f "
              "(-w0 e^-2 = %.9f); %ld steps\n",
              overrun, t_max - t_touch, w0 / (std::exp(1.0) * omega), 1.0 / omega, sim.v()(0), -w0 * std::exp(-2.0),
              r.statistics.steps);
  EXPECT_NEAR(overrun, w0 / (std::exp(1.0) * omega), 1e-4 * w0 / omega);
  EXPECT_NEAR(t_max - t_touch, 1.0 / omega, 0.02 / omega);
  EXPECT_NEAR(sim.v()(0), -w0 * std::exp(-2.0), 1e-6 * w0);
  // Let go at δ = 2 ω₀ e^{−2}/ω, then back at ω₀ e^{−2}: q(T) = −ω₀ e^{−2} (T − t_touch − 4/ω).
  EXPECT_NEAR(sim.q()(0), -w0 * std::exp(-2.0) * (o.duration - t_touch - 4.0 / omega), 1e-9);
}

TEST(Simulator, ALooserToleranceNeverCostsMoreStepsThroughTheDemosSlip) {
  // Work-precision: loosening the integrator's tolerance must not make a run
  // dearer. The quadruped demo, event-driven, to 0.2 s: landing at 0.064 s,
  // the front feet slipping outwards from 0.108 s and stopping at ≈ 0.143 s.
  // At 1e-6 the stop used to leave ~2.6e-6 m/s across the frozen slide (the
  // integration's noise), above slip_velocity: the slide "turned" and crept
  // at µm/s along u/|u| for 11 ms in steps of 1e-7 s (140 000 steps for 2 s
  // against 2 387 at 1e-10). The stick threshold is now at least 10·abs_tol.
  const Scenario sc = load_world(std::string(PLUME_MODELS_DIR) + "/worlds/quadruped_standing.xml");
  auto run = [&](double tol, VectorX& q, long& steps) {
    SimulationOptions o = sc.options;
    o.scheme = Scheme::EventDriven;
    o.output_rate = 0;
    o.abs_tol = o.rel_tol = tol;
    Simulator sim(sc.world, o);
    sim.set_controller(sc.controller->function(sc.world.model()), sc.controller_period);
    const SimulationResult r = sim.run_until(0.2);
    EXPECT_EQ(r.status, SimulationStatus::Finished) << "tolerance " << tol << ": " << r.message;
    EXPECT_EQ(r.statistics.fallbacks, 0) << "tolerance " << tol;
    q = sim.q();
    steps = r.statistics.steps;
  };
  VectorX q10, q6, q8;
  long s10 = 0, s6 = 0, s8 = 0;
  run(1e-10, q10, s10);
  run(1e-8, q8, s8);
  run(1e-6, q6, s6);
  std::printf("steps to 0.2 s: %ld at 1e-10, %ld at 1e-8, %ld at 1e-6; |q - q(1e-10)|: %.2e, %.2e\n", s10, s8, s6,
              (q8 - q10).cwiseAbs().maxCoeff(), (q6 - q10).cwiseAbs().maxCoeff());
  EXPECT_LE(s8, s10);
  EXPECT_LE(s6, s10);
  EXPECT_LT((q8 - q10).cwiseAbs().maxCoeff(), 1e-8);  // (measured 1.4e-10)
  EXPECT_LT((q6 - q10).cwiseAbs().maxCoeff(), 1e-7);  // (measured 2.3e-10)
}

TEST(Simulator, ARunContinuedInPiecesEndsWhereTheWholeRunDoes) {
  // A controller stepping the simulator: run_until(t₁) then run_until(t₂) on
  // the same Simulator must give the run to t₂ in one go. t₁ just short of a
  // controller sample (1e-13 s, below min_step) and at one (the sample time
  // a sum of periods, a rounding away from the caller's t₁): the resumed
  // run's first step would end closer than min_step. The quadruped demo
  // world, in every scheme.
  const Scenario sc = load_world(std::string(PLUME_MODELS_DIR) + "/worlds/quadruped_standing.xml");
  for (const Scheme scheme : {Scheme::EventDriven, Scheme::TimeStepping, Scheme::Compliant}) {
    SimulationOptions o = sc.options;
    o.scheme = scheme;
    o.output_rate = 0;
    Simulator whole(sc.world, o);
    whole.set_controller(sc.controller->function(sc.world.model()), sc.controller_period);
    const SimulationResult w = whole.run_until(0.35);
    ASSERT_EQ(w.status, SimulationStatus::Finished) << w.message;
    for (const double t1 : {0.2999999999999, 0.3}) {
      char split[64];
      std::snprintf(split, sizeof split, ", split at %.13g s", t1);
      SCOPED_TRACE(std::string(to_string(scheme)) + split);
      Simulator pieces(sc.world, o);
      pieces.set_controller(sc.controller->function(sc.world.model()), sc.controller_period);
      const SimulationResult p1 = pieces.run_until(t1);
      ASSERT_EQ(p1.status, SimulationStatus::Finished) << p1.message;
      const SimulationResult p2 = pieces.run_until(0.35);
      ASSERT_EQ(p2.status, SimulationStatus::Finished) << p2.message;
      EXPECT_EQ(p2.statistics.fallbacks, 0) << p2.message;
      EXPECT_EQ(pieces.current_contacts().size(), whole.current_contacts().size());
      EXPECT_LT((pieces.q() - whole.q()).cwiseAbs().maxCoeff(), 1e-9);
      EXPECT_LT((pieces.v() - whole.v()).cwiseAbs().maxCoeff(), 1e-7);
    }
  }
}
