// The three simulation schemes against closed forms (study/closed_forms.hpp:
// independent physics, not simulator output), at their default settings:
// tolerance 1e-10 (event-driven; compliant with dopri5 and with
// rosenbrock4) and time_step 1e-3 (time-stepping). Each tolerance sits above
// the error docs/study (python3 study/run_study.py) measured for that scheme
// at its defaults, written next to it as "measured …", and far below what a
// wrong restitution, friction or contact law would give. Also: every world in
// models/worlds runs to Finished with every scheme, selected in the world
// file.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>
#include <vector>

#include "closed_forms.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/error.hpp"
#include "plume/sim/simulator.hpp"
#include "plume/sim/world_file.hpp"
#include "test_utils.hpp"

using namespace plume;
using namespace plume::test;
namespace cf = plume::closed_form;

namespace {

constexpr double g = 9.81;

struct Run {
  SimulationResult result;
  MemoryRecorder rec;
  VectorX q, v;
  double energy = 0.0;
};

Run simulate(const World& world, SimulationOptions o, Scheme scheme, Integrator integrator = Integrator::Dopri5) {
  o.scheme = scheme;
  o.integrator = integrator;
  Simulator sim(world, o);
  Run r;
  r.result = sim.run(&r.rec);
  r.q = sim.q();
  r.v = sim.v();
  r.energy = sim.energy();
  return r;
}

World single(const std::string& name, const Model& m, const VectorX& q0, const VectorX& v0, const ContactParameters& cp,
             bool ground = true) {
  WorldBuilder wb;
  wb.add_model(name, m, q0, v0);
  if (ground) wb.add_environment(ground_plane());
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

// Largest −φ of the contacts sampled at the last output time.
double penetration_at_end(const MemoryRecorder& r) {
  double last = -1.0, pen = 0.0;
  for (const ContactSample& c : r.contacts) last = std::max(last, c.time);
  for (const ContactSample& c : r.contacts) {
    if (c.time == last) pen = std::max(pen, -c.gap);
  }
  return pen;
}

// ---- bouncing ball: ball.urdf (1 kg, r = 0.1 m) dropped from a 1 m gap ----------------
constexpr double kDrop = 1.0, kE = 0.8, kR = 0.1, kBallK = 2e5;

World bouncing_ball(bool compliant) {
  const Model ball = load_model("ball.urdf", urdf::RootJoint::FreeFlyer);
  VectorX q0 = neutral_configuration(ball);
  q0(2) = kDrop + kR;
  ContactParameters cp;
  cp.mu = 0.5;
  cp.restitution = kE;
  if (compliant) {
    // The damping whose Kelvin–Voigt bounce (closed form) has e = 0.8.
    cp.stiffness = kBallK;
    cp.damping = cf::damping_for_restitution(1.0, kBallK, g, std::sqrt(2 * g * kDrop), kE);
  }
  return single("ball", ball, q0, VectorX::Zero(6), cp);
}

void rigid_bouncing_ball(Scheme scheme, double time_tol, double rest_tol, Integrator integrator = Integrator::Dopri5) {
  SimulationOptions o;
  o.duration = 5.0;
  o.output_rate = 0;
  const Run r = simulate(bouncing_ball(false), o, scheme, integrator);
  ASSERT_EQ(r.result.status, SimulationStatus::Finished) << r.result.message;
  const auto impacts = of_kind(r.rec, EventKind::Impact);
  const auto exact = cf::bounce_times(kDrop, kE, g, 10);
  ASSERT_GE(impacts.size(), exact.size());
  double v_in = std::sqrt(2 * g * kDrop);
  for (std::size_t k = 0; k < exact.size(); ++k) {
    EXPECT_NEAR(impacts[k].time, exact[k], time_tol) << "impact " << k;
    EXPECT_NEAR(impacts[k].pre_normal_velocity, -v_in, 1e4 * time_tol) << "impact " << k;
    EXPECT_NEAR(impacts[k].post_normal_velocity, kE * v_in, 1e4 * time_tol) << "impact " << k;
    v_in *= kE;
  }
  // Rest. Event-driven: at the accumulation point t∞ = t₁(1 + e)/(1 − e)
  // predicted from the flight times. Time-stepping: the first impact slower
  // than zeno_speed is plastic (zeno_rest).
  const auto rest = of_kind(r.rec, EventKind::ZenoRest);
  ASSERT_EQ(rest.size(), 1u);
  const double t_rest = scheme == Scheme::EventDriven ? cf::bounce_rest_time(kDrop, kE, g)
                                                      : cf::bounce_rest_time_zeno(kDrop, kE, g, o.zeno_speed);
  EXPECT_NEAR(rest[0].time, t_rest, rest_tol);
  EXPECT_NEAR(r.q(2), kR, 1e-9);
  EXPECT_LT(r.v.norm(), 1e-9);
}

void compliant_bouncing_ball(Integrator integrator, double time_tol) {
  SimulationOptions o;
  o.duration = 2.5;  // three bounces
  o.output_rate = 0;
  const World world = bouncing_ball(true);
  const Run r = simulate(world, o, Scheme::Compliant, integrator);
  ASSERT_EQ(r.result.status, SimulationStatus::Finished) << r.result.message;
  const auto gains = of_kind(r.rec, EventKind::ContactGain), losses = of_kind(r.rec, EventKind::ContactLoss);
  const auto exact = cf::compliant_bounces(1.0, kBallK, world.default_contact().damping, g, kDrop, 3);
  ASSERT_EQ(exact.size(), 3u);
  ASSERT_GE(gains.size(), 3u);
  ASSERT_GE(losses.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_NEAR(gains[k].time, exact[k].touch, time_tol) << "touch " << k;
    EXPECT_NEAR(losses[k].time, exact[k].loss, time_tol) << "loss " << k;
  }
  // The rebound ratio of the first bounce is the e the damping was chosen for.
  EXPECT_NEAR(losses[0].post_normal_velocity / -gains[0].pre_normal_velocity, kE, 1e-6);
}

// ---- falling rod: rod.urdf (2 m, 1 kg) at 45° on a frictionless floor ----------------
World falling_rod() {
  const Model rod = load_model("rod.urdf", urdf::RootJoint::Planar);
  VectorX q0(3);
  q0 << 0.0, std::sin(cf::kPi / 4), cf::kPi / 4;
  ContactParameters cp;
  cp.mu = 0.0;
  cp.restitution = 0.0;
  return single("rod", rod, q0, VectorX::Zero(3), cp);
}

double rod_impact_time(const World& w) {
  Data d(w.model());
  const MatrixX H = crba(w.model(), d, w.q0());
  return cf::rod_impact_time(H(0, 0), H(2, 2), 1.0, g, cf::kPi / 4);
}

void check_falling_rod(Scheme scheme, Integrator integrator, double time_tol, double drift_tol) {
  SimulationOptions o;
  o.duration = 1.0;
  o.output_rate = 50;
  const World world = falling_rod();
  const Run r = simulate(world, o, scheme, integrator);
  ASSERT_EQ(r.result.status, SimulationStatus::Finished) << r.result.message;
  const bool compliant = scheme == Scheme::Compliant;
  const SimulationEvent* hit = nullptr;
  for (const SimulationEvent& e : r.rec.events) {
    if (!hit && e.kind == (compliant ? EventKind::ContactGain : EventKind::Impact) &&
        e.contact.find("end_right") != std::string::npos) {
      hit = &e;
    }
  }
  ASSERT_NE(hit, nullptr);
  EXPECT_NEAR(hit->time, rod_impact_time(world), time_tol);
  // No horizontal force: the centre of mass falls straight down.
  for (const VectorX& q : r.rec.q) EXPECT_NEAR(q(0), 0.0, drift_tol);
  EXPECT_NEAR(r.q(0), 0.0, drift_tol);
  // At rest, flat; each end carries m g / 2 (compliant: pressed in by m g/(2K)).
  EXPECT_NEAR(r.q(2), 0.0, 1e-8);
  EXPECT_LT(r.v.norm(), 1e-7);
  const double m = 1.0;
  EXPECT_NEAR(penetration_at_end(r.rec), compliant ? m * g / (2 * world.default_contact().stiffness) : 0.0, 1e-9);
}

// ---- a sliding rod whose end sticks, then slips: rod.urdf, μ = 2, e = 0 ---------------
// The rod's left end slides left on the floor (θ = 1.4 rad, rotating
// clockwise) towards Painlevé's inconsistent range; friction stops the end
// first. Stuck, the rod is a pendulum about its end A: I_A θ̈ = −m g l cos θ
// with I_A = I_c + m l², and the end carries F = m a_c + m g ŷ. It slips when
// |F_x| reaches μ F_y. Both facts are checked against that 1-DoF model,
// integrated here by RK4 from a sampled stuck state (independent of the
// simulator's contact machinery).
struct StuckRod {
  double m, Ic, l = 1.0, mu = 2.0;
  double thdd(double th) const { return -m * g * l * std::cos(th) / (Ic + m * l * l); }
  double friction_ratio(double th, double w) const {
    const double a = thdd(th);
    const double ax = l * (-std::sin(th) * a - std::cos(th) * w * w);
    const double ay = l * (std::cos(th) * a - std::sin(th) * w * w);
    return std::abs(ax) / (ay + g);
  }
  double energy(double th, double w) const { return 0.5 * (Ic + m * l * l) * w * w + m * g * l * std::sin(th); }
  // Time from (th, w) until |F_x| = μ F_y (bisected within the RK4 step).
  double time_to_slip(double th, double w) const {
    const double h = 1e-5;
    double t = 0.0;
    while (t < 1.0) {
      const double k1t = w, k1w = thdd(th);
      const double k2t = w + 0.5 * h * k1w, k2w = thdd(th + 0.5 * h * k1t);
      const double k3t = w + 0.5 * h * k2w, k3w = thdd(th + 0.5 * h * k2t);
      const double k4t = w + h * k3w, k4w = thdd(th + h * k3t);
      const double th1 = th + h / 6 * (k1t + 2 * k2t + 2 * k3t + k4t);
      const double w1 = w + h / 6 * (k1w + 2 * k2w + 2 * k3w + k4w);
      const double r0 = friction_ratio(th, w) - mu, r1 = friction_ratio(th1, w1) - mu;
      if (r1 >= 0.0) return t + h * r0 / (r0 - r1);
      th = th1;
      w = w1;
      t += h;
    }
    return 1.0;
  }
};

void check_sliding_rod_sticks_then_slips(Scheme scheme, double hold_tol, double energy_tol, double slip_tol) {
  const Model rod = load_model("rod.urdf", urdf::RootJoint::Planar);
  const double th0 = 1.4, w0 = -2.0;
  VectorX q0(3), v0(3);
  q0 << 0.0, std::sin(th0), th0;           // left end on the floor
  v0 << -4.0, std::cos(th0) * w0, w0;      // and not moving along the normal
  ContactParameters cp;
  cp.mu = 2.0;
  cp.restitution = 0.0;
  const World world = single("rod", rod, q0, v0, cp);
  Data d(rod);
  const MatrixX H = crba(rod, d, q0);
  const StuckRod model{H(0, 0), H(2, 2)};
  SimulationOptions o;
  o.duration = 0.4;
  o.output_rate = 1000;
  const Run r = simulate(world, o, scheme);
  // Before the cone's quarter-turn directions were exact, both rigid schemes
  // stopped at 7.6 ms ("proved infeasible": rounding along the immobile t2).
  ASSERT_EQ(r.result.status, SimulationStatus::Finished) << r.result.message;
  const auto sticks = of_kind(r.rec, EventKind::Stick);
  const auto slips = of_kind(r.rec, EventKind::Slip);
  ASSERT_FALSE(sticks.empty());
  ASSERT_FALSE(slips.empty());
  EXPECT_LT(sticks.front().time, 0.12);
  // Stuck from 0.12 s until the slip: the end stays put, the pendulum's
  // energy is constant, and the slip comes when the pendulum says.
  std::size_t i0 = 0;
  while (i0 < r.rec.times.size() && r.rec.times[i0] < 0.12) ++i0;
  ASSERT_LT(i0, r.rec.times.size());
  const VectorX& qs = r.rec.q[i0];
  const double x_end = qs(0) - std::cos(qs(2));
  const double e_ref = model.energy(qs(2), r.rec.v[i0](2));
  const double predicted = r.rec.times[i0] + model.time_to_slip(qs(2), r.rec.v[i0](2));
  const double t_slip = slips.front().time;
  for (std::size_t i = i0; i < r.rec.times.size(); ++i) {
    const double t = r.rec.times[i];
    if (t > std::min(t_slip, predicted) - 0.01) break;
    const VectorX& q = r.rec.q[i];
    EXPECT_NEAR(q(0) - std::cos(q(2)), x_end, hold_tol) << "t = " << t;
    EXPECT_NEAR(q(1) - std::sin(q(2)), 0.0, hold_tol) << "t = " << t;
    EXPECT_NEAR(model.energy(q(2), r.rec.v[i](2)), e_ref, energy_tol) << "t = " << t;
  }
  EXPECT_NEAR(t_slip, predicted, slip_tol);
  // Energy never gained (e = 0, dissipative friction).
  for (double e : r.rec.energies) EXPECT_LE(e, r.rec.energies.front() + 1e-9);
}

// ---- Newton's cradle: balls_row.urdf, five 0.2 kg balls, 1 mm gaps, 1 m/s ------------
constexpr double kCradleK = 2e7, kBallMass = 0.2, kGap = 1e-3;

World newtons_cradle() {
  const Model row = load_model("balls_row.urdf", urdf::RootJoint::Fixed);
  VectorX v0 = VectorX::Zero(5);
  v0(0) = 1.0;
  ContactParameters cp;
  cp.mu = 0.0;
  cp.restitution = 1.0;
  // Compliant: elastic (D = 0) and stiff enough that a contact (0.22 ms)
  // ends before the next gap (≈ 0.9 ms) closes.
  cp.stiffness = kCradleK;
  cp.damping = 0.0;
  return single("cradle", row, VectorX::Zero(5), v0, cp, false);
}

void check_cradle(Scheme scheme, Integrator integrator, double time_tol, double v_tol) {
  SimulationOptions o;
  o.duration = 0.02;
  o.output_rate = 0;
  const Run r = simulate(newtons_cradle(), o, scheme, integrator);
  ASSERT_EQ(r.result.status, SimulationStatus::Finished) << r.result.message;
  VectorX v_exact = VectorX::Zero(5);
  v_exact(4) = 1.0;
  if (scheme == Scheme::Compliant) {
    const cf::CompliantCradle exact = cf::compliant_cradle(kBallMass, kCradleK, 0.0, 1.0, kGap, 5);
    const auto gains = of_kind(r.rec, EventKind::ContactGain), losses = of_kind(r.rec, EventKind::ContactLoss);
    ASSERT_EQ(gains.size(), 4u);
    ASSERT_EQ(losses.size(), 4u);
    for (std::size_t k = 0; k < 4; ++k) {
      EXPECT_NEAR(gains[k].time, exact.touch[k], time_tol) << "touch " << k;
      EXPECT_NEAR(losses[k].time, exact.loss[k], time_tol) << "loss " << k;
      EXPECT_NE(gains[k].contact.find("ball_" + std::to_string(k + 1)), std::string::npos) << gains[k].contact;
    }
  } else {
    const auto impacts = of_kind(r.rec, EventKind::Impact);
    ASSERT_EQ(impacts.size(), 4u);
    for (std::size_t k = 0; k < 4; ++k) {
      EXPECT_NEAR(impacts[k].time, kGap * (k + 1), time_tol) << "impact " << k;
      EXPECT_NE(impacts[k].contact.find("ball_" + std::to_string(k + 1)), std::string::npos) << impacts[k].contact;
    }
  }
  // e = 1 (rigid) or D = 0 (compliant): the whole momentum and energy pass to ball 5.
  EXPECT_LT((r.v - v_exact).cwiseAbs().maxCoeff(), v_tol) << r.v.transpose();
  EXPECT_NEAR(kBallMass * r.v.sum(), kBallMass, 1e-12);
  EXPECT_NEAR(r.energy, 0.5 * kBallMass, 2 * kBallMass * v_tol);
}

// ---- bowling ball: ball.urdf sliding at v0 = 2 m/s without spin, μ = 0.2 -------------
constexpr double kV0 = 2.0, kMu = 0.2;

World bowling_ball() {
  const Model ball = load_model("ball.urdf", urdf::RootJoint::FreeFlyer);
  VectorX q0 = neutral_configuration(ball);
  q0(2) = kR;
  VectorX v0 = VectorX::Zero(6);
  v0(3) = kV0;
  ContactParameters cp;
  cp.mu = kMu;
  cp.restitution = 0.0;
  return single("ball", ball, q0, v0, cp);
}

void check_bowling(Scheme scheme, Integrator integrator, double time_tol, double v_tol) {
  SimulationOptions o;
  o.duration = 0.5;
  o.output_rate = 0;
  const Run r = simulate(bowling_ball(), o, scheme, integrator);
  ASSERT_EQ(r.result.status, SimulationStatus::Finished) << r.result.message;
  const auto sticks = of_kind(r.rec, EventKind::Stick);
  ASSERT_GE(sticks.size(), 1u);
  EXPECT_NEAR(sticks.front().time, cf::bowling_stick_time(kV0, kMu, g), time_tol);
  // Rolling at 5 v0/7 with ω = v/r.
  const Eigen::Quaterniond rq(r.q.segment<4>(3));
  const Vec3 vw = rq * Vec3(r.v.segment<3>(3)), ww = rq * Vec3(r.v.segment<3>(0));
  EXPECT_NEAR(vw.x(), cf::bowling_rolling_speed(kV0), v_tol);
  EXPECT_NEAR(ww.y() * kR, cf::bowling_rolling_speed(kV0), v_tol);
  EXPECT_NEAR(vw.z(), 0.0, v_tol);
}

}  // namespace

// ---- bouncing ball -------------------------------------------------------------------
TEST(SchemesBouncingBall, EventDriven) {
  // Impact times: the free flight is exact, the events at machine
  // precision. Rest at t∞ (zeno_rest after 47 impacts): measured 5e-12 s.
  rigid_bouncing_ball(Scheme::EventDriven, 1e-11, 1e-9);
}
TEST(SchemesBouncingBall, EventDrivenBogackiShampine) {
  // The third-order pair and its cubic Hermite dense output are exact on the
  // parabolic flights, so the events stay at machine precision.
  rigid_bouncing_ball(Scheme::EventDriven, 1e-11, 1e-9, Integrator::BogackiShampine);
}
TEST(SchemesBouncingBall, TimeStepping) {
  // Impact times: measured 1.9e-10 s (landing on predicted contacts); rest 1.7e-8 s.
  rigid_bouncing_ball(Scheme::TimeStepping, 1e-8, 1e-7);
}
TEST(SchemesBouncingBall, CompliantDopri5) {
  // Touch/loss times of three Kelvin–Voigt bounces: measured 5.5e-9 s.
  compliant_bouncing_ball(Integrator::Dopri5, 5e-8);
}
TEST(SchemesBouncingBall, CompliantRosenbrock4) {
  // Measured 9.1e-11 s.
  compliant_bouncing_ball(Integrator::Rosenbrock4, 1e-9);
}

// ---- falling rod ---------------------------------------------------------------------
TEST(SchemesFallingRod, EventDriven) {
  // Impact time: measured 8.2e-11 s; COM drift 2e-17 m.
  check_falling_rod(Scheme::EventDriven, Integrator::Dopri5, 1e-9, 1e-12);
}
TEST(SchemesFallingRod, EventDrivenBogackiShampine) {
  check_falling_rod(Scheme::EventDriven, Integrator::BogackiShampine, 1e-9, 1e-12);
}
TEST(SchemesFallingRod, TimeStepping) {
  // Impact time: measured 3.1e-8 s (second order in h: 2.8e-7 at h = 3e-3); COM drift 2e-17 m.
  check_falling_rod(Scheme::TimeStepping, Integrator::Dopri5, 3e-7, 1e-12);
}
TEST(SchemesFallingRod, CompliantDopri5) {
  // Touch of the right end against the RIGID energy integral: the model
  // difference of the default K = 2e5 N/m, measured 1.54e-6 s; COM drift 2e-17 m.
  check_falling_rod(Scheme::Compliant, Integrator::Dopri5, 2e-6, 1e-12);
}
TEST(SchemesFallingRod, CompliantRosenbrock4) {
  // Model difference measured 1.54e-6 s; COM drift 7e-11 m (the
  // finite-difference Jacobian lets x wander at the tolerance).
  check_falling_rod(Scheme::Compliant, Integrator::Rosenbrock4, 2e-6, 1e-9);
}

// ---- sliding rod: stick, then slip ---------------------------------------------------
TEST(SchemesRodStickSlip, EventDriven) {
  // Measured: end held to 2.4e-11 m, pendulum energy to 4.3e-11 J, slip 8e-10 s
  // from the pendulum's. Before a cone-margin event asked the force LCP for
  // friction strictly inside the cone, the LCP at the crossing kept the stick
  // (its friction exactly on the cone), the witness was suppressed, and the
  // end slipped 24 ms late, when λ reached 0, with |F_x| up to 78 F_y.
  check_sliding_rod_sticks_then_slips(Scheme::EventDriven, 1e-9, 1e-8, 1e-6);
}
TEST(SchemesRodStickSlip, TimeStepping) {
  // Measured: the end creeps by 2.5e-5 m before its stick at 0.098 s, then is
  // held to 5e-7 m; energy to 2.8e-6 J; slip 2.3e-5 s late (the step is 1 ms).
  check_sliding_rod_sticks_then_slips(Scheme::TimeStepping, 2e-6, 1e-5, 5e-4);
}
TEST(SchemesRodStickSlip, CompliantDopri5) {
  // Measured: end held to 4.1e-6 m (its depth varies by 2.2e-5 m), energy to
  // 2.3e-4 J, slip 3.8e-5 s from the pendulum's.
  check_sliding_rod_sticks_then_slips(Scheme::Compliant, 1e-4, 1e-3, 1e-3);
}

// ---- Newton's cradle -----------------------------------------------------------------
TEST(SchemesNewtonsCradle, EventDriven) {
  // Impact times at k ms: measured 4e-17 s; final velocities exact (0).
  check_cradle(Scheme::EventDriven, Integrator::Dopri5, 1e-12, 1e-12);
}
TEST(SchemesNewtonsCradle, EventDrivenBogackiShampine) {
  check_cradle(Scheme::EventDriven, Integrator::BogackiShampine, 1e-12, 1e-12);
}
TEST(SchemesNewtonsCradle, TimeStepping) {
  // Measured 0 s and 0 m/s.
  check_cradle(Scheme::TimeStepping, Integrator::Dopri5, 1e-12, 1e-12);
}
TEST(SchemesNewtonsCradle, CompliantDopri5) {
  // Touch/loss times against the sequential Kelvin–Voigt closed form:
  // measured 3.4e-12 s; final velocities 6.3e-9 m/s.
  check_cradle(Scheme::Compliant, Integrator::Dopri5, 1e-10, 5e-8);
}
TEST(SchemesNewtonsCradle, CompliantRosenbrock4) {
  // Measured 2.4e-13 s; final velocities 2.4e-10 m/s.
  check_cradle(Scheme::Compliant, Integrator::Rosenbrock4, 1e-10, 5e-9);
}

// ---- bowling ball --------------------------------------------------------------------
TEST(SchemesBowlingBall, EventDriven) {
  // Stick time: measured 1.3e-11 s; rolling speed 1.9e-10 m/s.
  check_bowling(Scheme::EventDriven, Integrator::Dopri5, 1e-9, 1e-8);
}
TEST(SchemesBowlingBall, EventDrivenBogackiShampine) {
  check_bowling(Scheme::EventDriven, Integrator::BogackiShampine, 1e-9, 1e-8);
}
TEST(SchemesBowlingBall, TimeStepping) {
  // Stick time: measured 2.6e-8 s at h = 1e-3 but up to 1.2e-6 s over
  // h = 1e-2 … 3e-5 (it depends on where the step boundaries fall); rolling
  // speed 9.6e-7 m/s (5.9e-6 at h = 3e-4).
  check_bowling(Scheme::TimeStepping, Integrator::Dopri5, 2e-6, 1e-5);
}
TEST(SchemesBowlingBall, CompliantDopri5) {
  // Against the RIGID closed form (the stiff tangential spring sticks as the
  // rigid contact would): stick time measured 6.6e-10 s.
  check_bowling(Scheme::Compliant, Integrator::Dopri5, 1e-8, 1e-7);
}
TEST(SchemesBowlingBall, CompliantRosenbrock4) {
  // Stick time measured 1.2e-10 s (against the rigid closed form).
  check_bowling(Scheme::Compliant, Integrator::Rosenbrock4, 1e-8, 1e-7);
}

// ---- the time-stepping scheme's symplectic Euler rule (the fast mode) --------------------
// v₁ = v + h a, q₁ = q ⊕ h v₁. Under a constant acceleration a from rest its
// N steps of h reach v_N = a t and s_N = a h² N(N+1)/2 = a t (t + h)/2 at
// t = N h: the rule's own closed form, h a t/2 from the motion's a t²/2.
namespace {

Scenario euler_world(const std::string& name, TimeSteppingRule rule = TimeSteppingRule::SymplecticEuler) {
  Scenario sc = load_world(std::string(PLUME_MODELS_DIR) + "/worlds/" + name + ".xml");
  sc.options.scheme = Scheme::TimeStepping;
  sc.options.time_stepping_rule = rule;
  sc.options.time_step = 1e-3;
  sc.options.output_rate = 0;
  return sc;
}

}  // namespace

TEST(SymplecticEuler, ACubeSlidesDownTheInclineAsTheRuleStepsItsConstantAcceleration) {
  const double theta = 20.0 * cf::kPi / 180.0, h = 1e-3, t = 1.0;
  const double a = g * (std::sin(theta) - 0.2 * std::cos(theta));  // μ = 0.2 < tan 20°
  const Vec3 down(std::cos(theta), 0.0, -std::sin(theta));
  for (const char* name : {"incline_cube_sliding", "incline_cube_static"}) {
    SCOPED_TRACE(name);
    Scenario sc = euler_world(name);
    sc.options.duration = t;
    Simulator sim(sc.world, sc.options);
    const Vec3 p0 = sim.q().head<3>();
    const SimulationResult r = sim.run();
    ASSERT_EQ(r.status, SimulationStatus::Finished) << r.message;
    const double s_run = (sim.q().head<3>() - p0).dot(down);
    if (std::string(name) == "incline_cube_static") {
      EXPECT_LT(std::abs(s_run), 1e-6) << "μ = 0.5 > tan 20°: it must stay put";
    } else {
      // Measured 1e-12 m from the rule's closed form; 1e-3 m (h a t / 2) from a t²/2.
      EXPECT_NEAR(s_run, 0.5 * a * t * (t + h), 1e-10);
      EXPECT_GT(std::abs(s_run - 0.5 * a * t * t), 0.25 * h * a * t) << "not the trapezoid's a t²/2";
    }
    // One force LCP per step (the trapezoid takes two), no energy gained.
    EXPECT_LE(r.statistics.rhs_evaluations, r.statistics.steps + 2);
    EXPECT_LE(r.statistics.energy_end, r.statistics.energy_start + 1e-9);
    EXPECT_LT(r.statistics.max_penetration, 2e-9);
  }
}

TEST(SymplecticEuler, ADroppedBallLandsWhereTheRulesPathMeetsTheGround) {
  // Free fall from rest at gap z₀ = 1 m: after N steps z_N = z₀ − g h² N(N+1)/2,
  // v_N = −g N h; the landing is the root s of the step's path
  // z_N − s g (N h + s) = 0, reached at v = −g (N h + s).
  const double h = 1e-3;
  int n = 0;
  while (kDrop - g * h * h * (n + 1) * (n + 2) / 2 > 0.0) ++n;
  const double zn = kDrop - g * h * h * n * (n + 1) / 2, b = n * h;
  const double s = (-b + std::sqrt(b * b + 4 * zn / g)) / 2;
  const double t_land = n * h + s;
  SimulationOptions o;
  o.duration = 0.5;
  o.output_rate = 0;
  o.time_step = h;
  o.time_stepping_rule = TimeSteppingRule::SymplecticEuler;
  const auto r = simulate(bouncing_ball(false), o, Scheme::TimeStepping);
  ASSERT_EQ(r.result.status, SimulationStatus::Finished) << r.result.message;
  const auto impacts = of_kind(r.rec, EventKind::Impact);
  ASSERT_GE(impacts.size(), 1u);
  // Measured 3e-15 s and 2e-14 m/s.
  EXPECT_NEAR(impacts[0].time, t_land, 1e-12);
  EXPECT_NEAR(impacts[0].pre_normal_velocity, -g * t_land, 1e-10);
  EXPECT_NEAR(impacts[0].post_normal_velocity, g * t_land * kE, 1e-10);
  // O(h) from the exact fall √(2 z₀ / g).
  EXPECT_LT(std::abs(t_land - std::sqrt(2 * kDrop / g)), h);
}

TEST(SymplecticEuler, TheQuadrupedStandsWithOneForceSolvePerStepWhereTheTrapezoidTakesTwo) {
  Scenario fast = euler_world("quadruped_standing");
  Scenario exact = euler_world("quadruped_standing", TimeSteppingRule::Trapezoid);
  VectorX q_end[2];
  SimulationStatistics st[2];
  int k = 0;
  for (Scenario* sc : {&fast, &exact}) {
    sc->options.duration = 1.0;
    Simulator sim(sc->world, sc->options);
    sim.set_controller(sc->controller->function(sc->world.model()), sc->controller_period);
    const SimulationResult r = sim.run();
    ASSERT_EQ(r.status, SimulationStatus::Finished) << r.message;
    q_end[k] = sim.q();
    st[k++] = r.statistics;
  }
  EXPECT_LE(st[0].rhs_evaluations, st[0].steps + st[0].events + 2);
  EXPECT_GT(st[1].rhs_evaluations, 19 * st[1].steps / 10);
  // Feet held on the ground by the drift correction, as the trapezoid's.
  EXPECT_LT(st[0].max_penetration, 2e-9);
  // Standing after the landing: both rules reach the same posture (the
  // trunk's heights measured 1.5e-5 m apart at 1 s, 2e-6 m at 10 s).
  EXPECT_NEAR(q_end[0](2), q_end[1](2), 1e-4);
  EXPECT_LE(st[0].energy_end, st[0].energy_start);
}

TEST(SymplecticEuler, OutputsDoNotChangeTheQuadrupedsRun) {
  // The outputs' force solves (at 1 kHz, the step rate, and at 100 Hz) neither
  // use nor replace what a step keeps for its next solve (the velocity
  // projection's factored contact matrix): the end state is the same, bit
  // for bit, as without outputs.
  VectorX q_end[3], v_end[3];
  int k = 0;
  for (double rate : {0.0, 100.0, 1000.0}) {
    Scenario sc = euler_world("quadruped_standing");
    sc.options.duration = 0.6;  // (the landing, the front feet's slip and stick)
    sc.options.output_rate = rate;
    Simulator sim(sc.world, sc.options);
    sim.set_controller(sc.controller->function(sc.world.model()), sc.controller_period);
    Recorder rec;
    const SimulationResult r = rate > 0.0 ? sim.run(&rec) : sim.run();
    ASSERT_EQ(r.status, SimulationStatus::Finished) << r.message;
    EXPECT_GT(r.statistics.projections, 0);
    q_end[k] = sim.q();
    v_end[k++] = sim.v();
  }
  for (int i = 1; i < 3; ++i) {
    EXPECT_TRUE(q_end[i] == q_end[0]) << "output rate " << (i == 1 ? 100 : 1000);
    EXPECT_TRUE(v_end[i] == v_end[0]) << "output rate " << (i == 1 ? 100 : 1000);
  }
}

TEST(SymplecticEuler, TheWorldFileSelectsTheRuleAndNamesTheChoicesOnATypo) {
  const std::string dir = std::string(PLUME_MODELS_DIR) + "/worlds";
  const auto world = [](const char* rule) {
    return std::string(R"(<world><model name="ball" urdf="../ball.urdf" root="free"><state q="0 0 0.5 0 0 0 1"/>)"
                       R"(</model><ground/><simulate scheme="time-stepping" time_stepping_rule=")") +
           rule + R"("/></world>)";
  };
  EXPECT_EQ(load_world_string(world("symplectic-euler"), "w.xml", dir).options.time_stepping_rule,
            TimeSteppingRule::SymplecticEuler);
  EXPECT_EQ(load_world_string(world("trapezoid"), "w.xml", dir).options.time_stepping_rule,
            TimeSteppingRule::Trapezoid);
  try {
    load_world_string(world("rk4"), "w.xml", dir);
    FAIL() << "time_stepping_rule=\"rk4\" was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("time_stepping_rule=\"rk4\""), std::string::npos) << what;
    EXPECT_NE(what.find("symplectic-euler"), std::string::npos) << what;
  }
}

// ---- every shipped world with every scheme, selected in the world file -----------------
// One test per world file and scheme, so that each runs (and times out) on
// its own and ctest spreads them over the cores: under the sanitizers the
// stacks and the pyramid take minutes each.
namespace {

struct SchemeChoice {
  const char* scheme;
  const char* integrator;
  const char* rule = "trapezoid";  // time_stepping_rule
};

void PrintTo(const SchemeChoice& c, std::ostream* os) { *os << c.scheme << "/" << c.integrator << "/" << c.rule; }

std::vector<std::string> world_files() {
  const std::string dir = std::string(PLUME_MODELS_DIR) + "/worlds";
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".xml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

const SchemeChoice kSchemeChoices[] = {
    {"event-driven", "dopri5"},  {"compliant", "dopri5"}, {"compliant", "rosenbrock4"}, {"time-stepping", "dopri5"},
    {"time-stepping", "dopri5", "symplectic-euler"}};

}  // namespace

class SchemesWorlds : public ::testing::TestWithParam<std::tuple<std::string, SchemeChoice>> {};

TEST(SchemesWorldsDirectory, HoldsTheWorlds) { EXPECT_GE(world_files().size(), 6u); }

TEST_P(SchemesWorlds, FinishesWithTheScheme) {
  const std::string dir = std::string(PLUME_MODELS_DIR) + "/worlds";
  const std::string& file = std::get<0>(GetParam());
  const SchemeChoice& c = std::get<1>(GetParam());
  std::ifstream in(file);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string xml = buffer.str();
  const std::size_t at = xml.find("<simulate");
  ASSERT_NE(at, std::string::npos) << file;
  // Replace the file's scheme (and integrator, if any) in <simulate>.
  std::string text = xml;
  const std::size_t end = text.find("/>", at);
  std::string simulate = text.substr(at, end - at);
  for (const char* attribute : {"scheme", "integrator", "time_stepping_rule"}) {
    const std::size_t a = simulate.find(std::string(" ") + attribute + "=\"");
    if (a == std::string::npos) continue;
    const std::size_t close = simulate.find('"', a + std::strlen(attribute) + 3);
    simulate.erase(a, close + 1 - a);
  }
  simulate += std::string(" scheme=\"") + c.scheme + "\" integrator=\"" + c.integrator + "\" time_stepping_rule=\"" +
              c.rule + "\" ";
  text.replace(at, end - at, simulate);
  const Scenario sc = load_world_string(text, file, dir);
  ASSERT_EQ(to_string(sc.options.scheme), std::string(c.scheme));
  ASSERT_EQ(to_string(sc.options.integrator), std::string(c.integrator));
  ASSERT_EQ(to_string(sc.options.time_stepping_rule), std::string(c.rule));
  SimulationOptions o = sc.options;
  // Past the first landings (ball 0.45 s, quadruped 0.064 s, humanoid
  // 0.143 s). rosenbrock4's finite-difference Jacobian costs nv + nq
  // right-hand sides a step: on the quadruped and the humanoid it runs
  // only through the landing, at 1e-6 (9 s for 0.25 s of the humanoid at 1e-10).
  // Scenes of many bodies at rest (stack_5, pyramid_10) run 0.1 s: stiff
  // compliant contact on 40 points is the costliest case here (pyramid with
  // dopri5: 6 s for 0.3 s in Release, past the timeout under the sanitizers).
  o.duration = std::min(o.duration, sc.world.models().size() > 4 ? 0.1 : sc.world.model().nv() > 6 ? 0.3 : 0.6);
  if (o.integrator == Integrator::Rosenbrock4 && sc.world.model().nv() > 6) {
    o.duration = 0.15;
    o.abs_tol = o.rel_tol = 1e-6;
  }
  o.output_rate = 0;
  Simulator sim(sc.world, o);
  if (sc.controller) sim.set_controller(sc.controller->function(sc.world.model()), sc.controller_period);
  const SimulationResult r = sim.run();
  EXPECT_EQ(r.status, SimulationStatus::Finished)
      << file << " with " << c.scheme << "/" << c.integrator << ": " << r.message;
  EXPECT_NEAR(r.time, o.duration, 1e-12) << file << " with " << c.scheme;
  EXPECT_TRUE(sim.q().allFinite() && sim.v().allFinite()) << file << " with " << c.scheme;
}

INSTANTIATE_TEST_SUITE_P(
    Worlds, SchemesWorlds, ::testing::Combine(::testing::ValuesIn(world_files()), ::testing::ValuesIn(kSchemeChoices)),
    [](const ::testing::TestParamInfo<SchemesWorlds::ParamType>& info) {
      std::string name = std::filesystem::path(std::get<0>(info.param)).stem().string() + "_" +
                         std::get<1>(info.param).scheme + "_" + std::get<1>(info.param).integrator;
      if (std::string(std::get<1>(info.param).rule) != "trapezoid") name += std::string("_") + std::get<1>(info.param).rule;
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });
