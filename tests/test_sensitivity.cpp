// The state-transition matrix of event-driven runs (SimulationOptions::
// sensitivity) against independent facts: a bouncing ball's closed form and
// central differences of whole runs across impacts (ball, rod).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "plume/configuration.hpp"
#include "plume/error.hpp"
#include "plume/sim/simulator.hpp"
#include "plume/sim/world.hpp"
#include "plume/sim/world_file.hpp"
#include "test_utils.hpp"

using namespace plume;

namespace {

std::string csv(const VectorX& x) {
  std::string s;
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", x(i));
    s += (i ? " " : "") + std::string(b);
  }
  return s;
}

// A one-model world on the ground plane.
struct Scene {
  std::string urdf, root;
  double mu = 0.5, restitution = 0.8;
};

Scenario scene(const Scene& sc, const VectorX& q0, const VectorX& v0) {
  const std::string xml = "<world gravity=\"0 0 -9.81\"><model name=\"m\" urdf=\"" + sc.urdf + "\" root=\"" + sc.root +
                          "\"><state q=\"" + csv(q0) + "\" v=\"" + csv(v0) +
                          "\"/></model><ground normal=\"0 0 1\" offset=\"0\"/><contact mu=\"" + std::to_string(sc.mu) +
                          "\" restitution=\"" + std::to_string(sc.restitution) + "\"/></world>";
  return load_world_string(xml, "<test>", std::string(PLUME_MODELS_DIR));
}

SimulationOptions tight(bool sensitivity) {
  SimulationOptions o;
  o.abs_tol = o.rel_tol = 1e-12;
  o.output_rate = 0.0;
  o.sensitivity = sensitivity;
  return o;
}

struct RunResult {
  VectorX q, v;
  SensitivityReport report;
  long events = 0;
};

RunResult run(const Scene& sc, const VectorX& q0, const VectorX& v0, double tf, bool sensitivity) {
  Scenario s = scene(sc, q0, v0);
  Simulator sim(std::move(s.world), tight(sensitivity));
  const SimulationResult r = sim.run_until(tf);
  EXPECT_EQ(r.status, SimulationStatus::Finished) << r.message;
  RunResult out{sim.q(), sim.v(), {}, r.statistics.events};
  if (sensitivity) out.report = sim.sensitivity();
  return out;
}

// ∂x(tf)/∂x(0) by central differences of whole runs: δq through integrate()
// at the start and difference() at the end (the tangent convention).
MatrixX fd_runs(const Scene& sc, const Model& m, const VectorX& q0, const VectorX& v0, double tf, double h) {
  const int nv = m.nv();
  const RunResult nominal = run(sc, q0, v0, tf, false);
  MatrixX D(2 * nv, 2 * nv);
  auto delta = [&](const RunResult& r) {
    VectorX d(2 * nv);
    d.head(nv) = difference(m, nominal.q, r.q);
    d.tail(nv) = r.v - nominal.v;
    return d;
  };
  for (int k = 0; k < 2 * nv; ++k) {
    VectorX e = VectorX::Zero(nv);
    VectorX qp = q0, qm = q0, vp = v0, vm = v0;
    if (k < nv) {
      e(k) = 1.0;
      qp = integrate(m, q0, e, h);
      qm = integrate(m, q0, e, -h);
    } else {
      vp(k - nv) += h;
      vm(k - nv) -= h;
    }
    const RunResult rp = run(sc, qp, vp, tf, false), rm = run(sc, qm, vm, tf, false);
    EXPECT_EQ(rp.events, nominal.events);
    EXPECT_EQ(rm.events, nominal.events);
    D.col(k) = (delta(rp) - delta(rm)) / (2 * h);
  }
  return D;
}

double rel_error(const MatrixX& A, const MatrixX& B) {
  return (A - B).cwiseAbs().maxCoeff() / std::max(1.0, B.cwiseAbs().maxCoeff());
}

const Scene kBall{"ball.urdf", "free", 0.5, 0.8};

}  // namespace

TEST(Sensitivity, BouncingBallMatchesTheClosedForm) {
  // Dropped from rest with its lowest point h = 1 m up (r = 0.1 m), e = 0.8;
  // tf = 0.7 s lies between the first impact (0.4515 s) and the second.
  // Vertical height z0 and speed w0: s = √(w0² + 2 g (z0 − r)) is the impact
  // speed, t1 = (w0 + s)/g, and with τ = tf − t1 after the bounce
  //   z_f = r + e s τ − ½ g τ²,   w_f = e s − g τ,
  // so ∂s/∂z0 = g/s, ∂s/∂w0 = w0/s, ∂τ/∂z0 = −1/s, ∂τ/∂w0 = −(1 + w0/s)/g.
  const double g = 9.81, r = 0.1, e = 0.8, z0 = 1.1, w0 = 0.0, tf = 0.7;
  VectorX q0(7), v0 = VectorX::Zero(6);
  q0 << 0, 0, z0, 0, 0, 0, 1;
  const RunResult res = run(kBall, q0, v0, tf, true);
  ASSERT_TRUE(res.report.invalid.empty()) << res.report.invalid;
  EXPECT_EQ(res.report.saltations, 1);
  const double s = std::sqrt(w0 * w0 + 2 * g * (z0 - r)), tau = tf - (w0 + s) / g;
  const double ds[2] = {g / s, w0 / s}, dtau[2] = {-1.0 / s, -(1.0 + w0 / s) / g};
  Eigen::Matrix2d expected;
  for (int c = 0; c < 2; ++c) {
    expected(0, c) = e * ds[c] * tau + e * s * dtau[c] - g * tau * dtau[c];
    expected(1, c) = e * ds[c] - g * dtau[c];
  }
  // Identity orientation: the body twist's δp_z is entry 5, its v_z entry 6 + 5.
  const MatrixX& Phi = res.report.state_transition;
  Eigen::Matrix2d got;
  got << Phi(5, 5), Phi(5, 11), Phi(11, 5), Phi(11, 11);
  std::printf("bouncing ball: |Phi - closed form| = %.2e\n", (got - expected).cwiseAbs().maxCoeff());
  EXPECT_LE((got - expected).cwiseAbs().maxCoeff(), 5e-8) << got << "\n\n" << expected;
  // The run itself is the same as without sensitivities, bit for bit.
  const RunResult plain = run(kBall, q0, v0, tf, false);
  EXPECT_EQ(plain.events, res.events);
  EXPECT_TRUE((plain.q.array() == res.q.array()).all() && (plain.v.array() == res.v.array()).all());
}

TEST(Sensitivity, SpinningBallAcrossAFrictionalImpactMatchesRuns) {
  // Spin, a horizontal velocity and a tilted orientation: the sticking
  // frictional impact couples every coordinate. tf after the first impact.
  const Model m = test::load_model("ball.urdf", urdf::RootJoint::FreeFlyer);
  VectorX q0(7), v0(6);
  const Eigen::Quaterniond rot(Eigen::AngleAxisd(0.4, Vec3(1, 2, 3).normalized()));
  q0 << 0.1, -0.2, 0.9, rot.x(), rot.y(), rot.z(), rot.w();
  v0 << 0.3, -0.2, 0.5, 0.2, 0.1, -0.5;
  const double tf = 0.55;
  const RunResult res = run(kBall, q0, v0, tf, true);
  ASSERT_TRUE(res.report.invalid.empty()) << res.report.invalid;
  ASSERT_EQ(res.report.saltations, 1);
  const MatrixX D = fd_runs(kBall, m, q0, v0, tf, 1e-5);
  const double err = rel_error(res.report.state_transition, D);
  std::printf("spinning ball: |Phi - FD of runs| / |FD| = %.2e\n", err);
  EXPECT_LE(err, 1e-5) << res.report.state_transition << "\n\n" << D;
}

TEST(Sensitivity, RodAcrossAnImpactMatchesRuns) {
  // The rod (planar root: x, z, θ) thrown spinning above a frictionless floor;
  // one end hits it (e = 0.5) and bounces off; tf after that impact.
  const Scene rod{"rod.urdf", "planar", 0.0, 0.5};
  const Model m = test::load_model("rod.urdf", urdf::RootJoint::Planar);
  VectorX q0(3), v0(3);
  q0 << 0.0, 0.9, 0.5;
  v0 << 0.3, 0.0, 1.0;
  const double tf = 0.45;
  const RunResult res = run(rod, q0, v0, tf, true);
  ASSERT_TRUE(res.report.invalid.empty()) << res.report.invalid;
  std::printf("rod: %ld events, %ld saltations\n", res.events, res.report.saltations);
  ASSERT_GE(res.report.saltations, 1);
  const MatrixX D = fd_runs(rod, m, q0, v0, tf, 1e-6);
  const double err = rel_error(res.report.state_transition, D);
  std::printf("rod: |Phi - FD of runs| / |FD| = %.2e\n", err);
  EXPECT_LE(err, 1e-5) << res.report.state_transition << "\n\n" << D;
}

TEST(Sensitivity, OnlyTheEventDrivenSchemeHasIt) {
  VectorX q0(7), v0 = VectorX::Zero(6);
  q0 << 0, 0, 1.1, 0, 0, 0, 1;
  Scenario s = scene(kBall, q0, v0);
  SimulationOptions o = tight(true);
  o.scheme = Scheme::Compliant;
  EXPECT_THROW(Simulator(s.world, o), Error);
  Simulator plain(std::move(s.world), tight(false));
  EXPECT_THROW(plain.sensitivity(), Error);
}

TEST(Sensitivity, BallRollingOffAStepMatchesRunsAlongRollingDirections) {
  // ball_off_step.xml: rolling (sticking contact, integrated with the
  // constraint active) to the edge at 0.8 s, contact lost there, flight,
  // landing impact with friction at ≈ 1.002 s; tf = 1.05 s before the next
  // landing. Perturbations that keep it rolling on the step top: shifts along
  // x and y, a yaw, and a faster roll (δv_x with δω_y = δv_x / r).
  const std::string path = std::string(PLUME_MODELS_DIR) + "/worlds/ball_off_step.xml";
  const Model m = test::load_model("ball.urdf", urdf::RootJoint::FreeFlyer);
  auto run_from = [&](const VectorX& x0_tangent, bool sensitivity) {
    Scenario s = load_world(path);
    SimulationOptions o = s.options;
    o.abs_tol = o.rel_tol = 1e-12;
    o.output_rate = 0.0;
    o.sensitivity = sensitivity;
    const VectorX q0 = integrate(m, s.world.q0(), x0_tangent.head(6), 1.0);
    const VectorX v0 = s.world.v0() + x0_tangent.tail(6);
    Scenario s2 = load_world_string(
        [&] {
          std::string xml = "<world gravity=\"0 0 -9.81\"><model name=\"ball\" urdf=\"../ball.urdf\" root=\"free\"><state q=\"" +
                            csv(q0) + "\" v=\"" + csv(v0) +
                            "\"/></model><ground normal=\"0 0 1\" offset=\"0\"/><box name=\"step\" size=\"1 1 0.2\" pos=\"0 0 0.1\"/>"
                            "<contact mu=\"0.5\" restitution=\"0.3\"/></world>";
          return xml;
        }(),
        "<test>", std::string(PLUME_MODELS_DIR) + "/worlds");
    Simulator sim(std::move(s2.world), o);
    const SimulationResult r = sim.run_until(1.05);
    EXPECT_EQ(r.status, SimulationStatus::Finished) << r.message;
    RunResult out{sim.q(), sim.v(), {}, r.statistics.events};
    if (sensitivity) out.report = sim.sensitivity();
    return out;
  };
  const RunResult nominal = run_from(VectorX::Zero(12), true);
  ASSERT_TRUE(nominal.report.invalid.empty()) << nominal.report.invalid;
  std::printf("ball off the step: %ld events, %ld saltations\n", nominal.events, nominal.report.saltations);
  std::vector<VectorX> dirs;
  for (int k : {3, 4, 2}) dirs.push_back(VectorX::Unit(12, k));
  VectorX roll = VectorX::Zero(12);
  roll(9) = 1.0;
  roll(7) = 10.0;
  dirs.push_back(roll);
  double worst = 0.0;
  for (const VectorX& d : dirs) {
    const double h = 1e-6;
    const RunResult rp = run_from(h * d, false), rm = run_from(-h * d, false);
    ASSERT_EQ(rp.events, nominal.events);
    ASSERT_EQ(rm.events, nominal.events);
    VectorX fd(12);
    fd.head(6) = (difference(m, nominal.q, rp.q) - difference(m, nominal.q, rm.q)) / (2 * h);
    fd.tail(6) = (rp.v - rm.v) / (2 * h);
    const VectorX an = nominal.report.state_transition * d;
    const double err = (an - fd).cwiseAbs().maxCoeff() / std::max(1.0, fd.cwiseAbs().maxCoeff());
    worst = std::max(worst, err);
    EXPECT_LE(err, 1e-5) << "direction " << d.transpose() << "\nPhi d " << an.transpose() << "\nfd    " << fd.transpose();
  }
  std::printf("ball off the step: |Phi d - FD of runs| / |FD| <= %.2e\n", worst);
}
