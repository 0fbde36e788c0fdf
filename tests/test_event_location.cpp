// Event location to machine precision: the bracketed root finder every
// scheme locates its events with (detail::locate_crossing) against roots
// known in closed form, on smooth, flat, kinked and discontinuous
// witnesses; and the event-driven simulator's impact times on a bouncing
// ball against t_k = t₁(1 + 2e + … + 2e^{k−1}) at the default options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "plume/sim/simulator.hpp"
#include "plume/urdf.hpp"
#include "sim/scheme_common.hpp"
#include "test_utils.hpp"

using namespace plume;
using namespace plume::test;
using plume::detail::event_time_resolution;
using plume::detail::locate_crossing;

namespace {

constexpr double g = 9.81;
constexpr double kUlp = std::numeric_limits<double>::epsilon();

// Runs locate_crossing on f over [a, b] and checks it against the known
// root r: the answer is at or past r (f ≤ 0 there), within the resolution
// of it, and took at most 212 evaluations.
template <class F>
void expect_located(F f, double a, double b, double r, double tolerance, const std::string& what) {
  int evaluations = 0;
  auto counted = [&](double t) {
    ++evaluations;
    return f(t);
  };
  const double t = locate_crossing(counted, a, f(a), b, f(b), tolerance);
  const double resolution = event_time_resolution(tolerance, std::max(std::abs(a), std::abs(b)));
  EXPECT_LE(f(t), 0.0) << what;
  EXPECT_GE(t, r - 2 * kUlp * std::abs(r)) << what;  // r itself is rounded
  EXPECT_LE(t - r, resolution) << what;
  EXPECT_LE(evaluations, 212) << what;
}

}  // namespace

TEST(LocateCrossing, SmoothRootToTheResolution) {
  // cos t = 1/2 at π/3; at 1e-15 the resolution is 4 ulps of t.
  expect_located([](double t) { return std::cos(t) - 0.5; }, 0.0, 2.0, M_PI / 3, 1e-15, "cos");
  // Far from t = 0 (a long run): 4 ulps of t = 1e4 is 7.3e-12 s.
  const double r = 1e4 + M_PI / 3;
  expect_located([&](double t) { return std::cos(t - 1e4) - 0.5; }, 1e4, 1e4 + 2.0, r, 1e-15, "cos at t = 1e4");
  // A coarser tolerance is honoured (and not refined further).
  expect_located([](double t) { return std::cos(t) - 0.5; }, 0.0, 2.0, M_PI / 3, 1e-6, "cos, 1e-6");
}

TEST(LocateCrossing, FlatKinkedAndDiscontinuousWitnessesTerminate) {
  const double r = 0.3 + 1.0 / 7.0;
  // A root of multiplicity 9: flat, where regula falsi crawls.
  expect_located([&](double t) { return std::pow(r - t, 9); }, 0.0, 1.0, r, 1e-15, "flat");
  // One side steep, the other flat: regula falsi keeps one end fixed.
  expect_located([&](double t) { return t < r ? 1e-12 * (r - t) : 1e12 * (r - t); }, 0.0, 1.0, r, 1e-15, "kink");
  // A step (a detector that switches): no slope information at all.
  expect_located([&](double t) { return t < r ? 1.0 : -1.0; }, 0.0, 1.0, r, 1e-15, "step");
  // Zero past the crossing (a force that vanishes): f ≤ 0 from r on.
  expect_located([&](double t) { return std::max(r - t, 0.0); }, 0.0, 1.0, r, 1e-15, "zero past r");
  // A root within the resolution of either end.
  expect_located([](double t) { return 1e-16 - t; }, 0.0, 1.0, 1e-16, 1e-15, "root at a");
  expect_located([](double t) { return 1.0 - 1e-16 - t; }, 0.0, 1.0, 1.0 - 1e-16, 1e-15, "root at b");
}

TEST(LocateCrossing, RandomWitnessesWithKnownRoots) {
  // f(t) = (r − t)·(1 + 0.9 sin(k t + φ))·s: positive factor, root r, any
  // curvature; brackets from 1e-9 s to 10 s wide, from t = 0 to t = 1e3.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int n = 0; n < 2000; ++n) {
    const double a = std::pow(10.0, -3.0 + 6.0 * u(rng)) * (n % 3 == 0 ? 0.0 : 1.0);
    const double width = std::pow(10.0, -9.0 + 10.0 * u(rng));
    const double b = a + width, r = a + width * (0.001 + 0.998 * u(rng));
    const double k = std::pow(10.0, 4.0 * u(rng)) / width, phi = 6.0 * u(rng), s = std::pow(10.0, -6.0 + 12.0 * u(rng));
    expect_located([&](double t) { return (r - t) * (1.0 + 0.9 * std::sin(k * (t - a) + phi)) * s; }, a, b, r, 1e-15,
                   "random case " + std::to_string(n));
    if (HasFailure()) break;
  }
}

// ---- the bouncing ball at the default options -----------------------------------------
namespace {

// ball.urdf (1 kg, r = 0.1 m) dropped from a gap h onto the ground, μ = 0.
World ball_world(double h, double e) {
  const Model ball = load_model("ball.urdf", urdf::RootJoint::FreeFlyer);
  VectorX q0 = neutral_configuration(ball);
  q0(2) = h + 0.1;
  WorldBuilder wb;
  wb.add_model("ball", ball, q0, VectorX::Zero(6));
  wb.add_environment(ground_plane());
  ContactParameters cp;
  cp.mu = 0.0;
  cp.restitution = e;
  wb.set_default_contact(cp);
  return wb.build();
}

// t_k = t₁(1 + 2e + … + 2e^{k−1}), summed in long double.
std::vector<double> bounce_times(double h, double e, int n) {
  std::vector<double> t;
  const long double t1 = std::sqrt(2.0L * h / g);
  long double tk = t1, step = 2.0L * e * t1;
  for (int k = 0; k < n; ++k) {
    t.push_back(static_cast<double>(tk));
    tk += step;
    step *= e;
  }
  return t;
}

std::vector<double> impact_times(const MemoryRecorder& rec) {
  std::vector<double> t;
  for (const SimulationEvent& ev : rec.events) {
    if (ev.kind == EventKind::Impact) t.push_back(ev.time);
  }
  return t;
}

}  // namespace

TEST(EventLocation, BouncingBallImpactsToMachinePrecisionAtTheDefaults) {
  // The free flight is integrated exactly (a parabola), so what is left is
  // the event location: every impact within 1e-12 s of the closed form
  // over 44 bounces (measured 2.0e-13 s for e = 0.9 and 3.1e-13 s for
  // e = 0.95; with the former 1e-10 s tolerance 5.4e-10 s for e = 0.9).
  const double h = 1.0;
  for (const double e : {0.9, 0.95}) {
    const std::vector<double> exact = bounce_times(h, e, 44);
    SimulationOptions o;
    o.duration = exact.back() + 0.01;
    o.output_rate = 0;
    Simulator sim(ball_world(h, e), o);
    MemoryRecorder rec;
    const SimulationResult res = sim.run(&rec);
    ASSERT_EQ(res.status, SimulationStatus::Finished) << res.message;
    const std::vector<double> t = impact_times(rec);
    ASSERT_GE(t.size(), exact.size()) << "e = " << e;
    double worst = 0.0;
    for (std::size_t k = 0; k < exact.size(); ++k) worst = std::max(worst, std::abs(t[k] - exact[k]));
    std::printf("e = %.2f: worst impact time error over %zu bounces %.2e s\n", e, exact.size(), worst);
    EXPECT_LE(worst, 1e-12) << "e = " << e;
  }
}

// ---- the accumulation point (Zeno) --------------------------------------------------------
namespace {

std::vector<SimulationEvent> events_of(const MemoryRecorder& rec, EventKind kind) {
  std::vector<SimulationEvent> out;
  for (const SimulationEvent& ev : rec.events) {
    if (ev.kind == kind) out.push_back(ev);
  }
  return out;
}

}  // namespace

TEST(EventLocation, BouncingBallLandsAtTheAccumulationPoint) {
  // Dropped from h, the ball's impacts accumulate at t∞ = t₁(1 + e)/(1 − e),
  // t₁ = √(2h/g) (a geometric series of flight times 2et₁·e^k). plume
  // bounces until the next apex would stay within contact_tolerance
  // (1e-9 m): 15 impacts for e = 0.5, 47 for 0.8, 99 for 0.9, 203 for 0.95
  // (the first k with e^k√(2gh) ≤ √(2g·1e-9)), the last one plastic, then lands the ball at rest and logs
  // zeno_rest at the t∞ predicted from its last flight times.
  const double h = 1.0;
  for (const double e : {0.5, 0.8, 0.9, 0.95}) {
    const double t1 = std::sqrt(2.0 * h / g);
    const double t_inf = t1 * (1.0 + e) / (1.0 - e);
    const int bounces = static_cast<int>(std::ceil(std::log(std::sqrt(2 * g * 1e-9) / std::sqrt(2 * g * h)) / std::log(e)));
    const std::vector<double> exact = bounce_times(h, e, bounces);
    SimulationOptions o;
    o.output_rate = 0;
    Simulator sim(ball_world(h, e), o);
    MemoryRecorder rec;
    // Just past t∞: the state there, then 0.5 s on.
    const SimulationResult res = sim.run_until(t_inf + 1e-6, &rec);
    ASSERT_EQ(res.status, SimulationStatus::Finished) << res.message;
    const std::vector<double> t = impact_times(rec);
    ASSERT_EQ(t.size(), exact.size()) << "e = " << e;
    double worst = 0.0;
    for (std::size_t k = 0; k < exact.size(); ++k) worst = std::max(worst, std::abs(t[k] - exact[k]));
    const auto rest = events_of(rec, EventKind::ZenoRest);
    ASSERT_EQ(rest.size(), 1u) << "e = " << e;
    const double gap = sim.q()(2) - 0.1, speed = sim.v().norm();
    std::printf("e = %.2f: %zu impacts, worst time error %.2e s; zeno_rest %.2e s from t_inf = %.15g s, "
                "then gap %.1e m, |v| %.1e m/s\n",
                e, t.size(), worst, rest[0].time - t_inf, t_inf, gap, speed);
    EXPECT_LE(worst, 1e-11) << "e = " << e;
    EXPECT_NEAR(rest[0].time, t_inf, 1e-9) << "e = " << e;
    EXPECT_GT(rest[0].time, t.back()) << "e = " << e;
    EXPECT_EQ(rec.events.back().kind, EventKind::ZenoRest);
    // At rest: the gap and the normal velocity at round-off (measured
    // ≤ 3.9e-15 m and 5.3e-15 m/s after up to 203 impacts and 17.6 s).
    EXPECT_LE(std::abs(gap), 1e-14) << "e = " << e;
    EXPECT_LE(speed, 1e-14) << "e = " << e;
    EXPECT_EQ(sim.current_contacts().size(), 1u);
    // And it stays there, in persistent contact (its drift, 1.2e-12 m and
    // 4.9e-12 m/s after 0.5 s, is held below drift_tolerance).
    const SimulationResult on = sim.run_until(t_inf + 0.5, &rec);
    ASSERT_EQ(on.status, SimulationStatus::Finished) << on.message;
    EXPECT_EQ(events_of(rec, EventKind::ZenoRest).size(), 1u);
    EXPECT_LE(std::abs(sim.q()(2) - 0.1), o.drift_tolerance) << "e = " << e;
    EXPECT_LE(sim.v().norm(), 1e-9) << "e = " << e;
  }
}

TEST(EventLocation, ZenoSpeedRemainsTheFallbackWithoutAGeometricSeries) {
  // A first impact has no series: below zeno_speed (here 10 m/s, above the
  // impact speed √(2gh) = 4.43 m/s) it is plastic at once, zeno_rest at
  // t₁ = √(2h/g).
  const double h = 1.0;
  SimulationOptions o;
  o.output_rate = 0;
  o.zeno_speed = 10.0;
  o.duration = 1.0;
  Simulator sim(ball_world(h, 0.9), o);
  MemoryRecorder rec;
  const SimulationResult res = sim.run(&rec);
  ASSERT_EQ(res.status, SimulationStatus::Finished) << res.message;
  const auto rest = events_of(rec, EventKind::ZenoRest);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_TRUE(impact_times(rec).empty());
  EXPECT_NEAR(rest[0].time, std::sqrt(2.0 * h / g), 1e-12);
  EXPECT_NEAR(rest[0].pre_normal_velocity, -std::sqrt(2.0 * g * h), 1e-9);
  EXPECT_NEAR(rest[0].post_normal_velocity, 0.0, 1e-12);
  EXPECT_LE(sim.v().norm(), 1e-9);
}

namespace {

// A box (edges a × b × c, 1 kg, its own inertia) tilted by `tilt` (applied
// x first, then y), dropped so that its lowest corner starts h = 1 cm above
// the ground (μ = 1, e = 0.5), run for 1 s: its distinct impact times.
std::vector<double> box_impact_times(const Vec3& edges, const Vec3& tilt, double tol) {
  const double m = 1.0, a = edges.x(), b = edges.y(), c = edges.z();
  char urdf_text[1024];
  std::snprintf(urdf_text, sizeof urdf_text,
                "<robot name='box'><link name='box'><inertial><mass value='%.17g'/>"
                "<inertia ixx='%.17g' ixy='0' ixz='0' iyy='%.17g' iyz='0' izz='%.17g'/></inertial>"
                "<collision><geometry><box size='%.17g %.17g %.17g'/></geometry></collision></link></robot>",
                m, m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12, a, b, c);
  urdf::LoadOptions lo;
  lo.root = urdf::RootJoint::FreeFlyer;
  const Model box = urdf::load_string(urdf_text, lo);
  const Eigen::Quaterniond r(Eigen::AngleAxisd(tilt.y(), Vec3::UnitY()) * Eigen::AngleAxisd(tilt.x(), Vec3::UnitX()));
  double lowest = 0.0;
  for (int k = 0; k < 8; ++k) {
    const Vec3 corner(k & 1 ? a / 2 : -a / 2, k & 2 ? b / 2 : -b / 2, k & 4 ? c / 2 : -c / 2);
    lowest = std::min(lowest, (r * corner).z());
  }
  VectorX q0 = neutral_configuration(box);
  q0(2) = -lowest + 0.01;
  q0.segment<4>(3) = r.coeffs();
  WorldBuilder wb;
  wb.add_model("box", box, q0, VectorX::Zero(6));
  wb.add_environment(ground_plane());
  ContactParameters cp;
  cp.mu = 1.0;
  cp.restitution = 0.5;
  wb.set_default_contact(cp);
  SimulationOptions o;
  o.duration = 1.0;
  o.output_rate = 0;
  o.abs_tol = o.rel_tol = tol;
  Simulator sim(wb.build(), o);
  MemoryRecorder rec;
  const SimulationResult res = sim.run(&rec);
  EXPECT_EQ(res.status, SimulationStatus::Finished) << res.message;
  std::vector<double> times;
  for (const SimulationEvent& ev : rec.events) {
    if (ev.kind == EventKind::Impact && (times.empty() || ev.time != times.back())) times.push_back(ev.time);
  }
  return times;
}

double first_ten_apart(const std::vector<double>& x, const std::vector<double>& y) {
  EXPECT_GE(x.size(), 10u);
  EXPECT_GE(y.size(), 10u);
  double d = 0.0;
  for (std::size_t i = 0; i < 10 && i < x.size() && i < y.size(); ++i) d = std::max(d, std::abs(x[i] - y[i]));
  return d;
}

}  // namespace

TEST(EventLocation, RockingBlockImpactTimesAtTheDefaultsAgreeWithAHundredTimesTighterRun) {
  // The check: a cube (0.1 m, 1 kg) tilted 0.2 rad about x dropped
  // 1 cm onto one edge (μ = 1, e = 0.5) lands at √(2h/g) and rocks, each
  // impact two corners at once, with Zeno bounces of one edge in between. Its
  // first ten impact times at the defaults (abs_tol = rel_tol = 1e-10) and
  // at 1e-12 agree to 1e-12 s. Measured: identical (and within 5.7e-15 s of
  // a run at 1e-15); its flights are integrated
  // in the free-flyer's chart (sim/free_flyer_chart.hpp), where a body
  // spinning about a principal axis under gravity is a polynomial in t, so
  // dopri5 follows it to round-off. Before (the quaternion integrated) they
  // differed by 1.9e-10 s, 100× per 100× of tolerance, and met 1e-12 s only
  // from abs_tol = rel_tol = 1e-13 (+32 % right-hand sides here).
  const Vec3 cube(0.1, 0.1, 0.1), tilt(0.2, 0.0, 0.0);
  const std::vector<double> defaults = box_impact_times(cube, tilt, 1e-10);
  const std::vector<double> tighter = box_impact_times(cube, tilt, 1e-12);
  ASSERT_GE(defaults.size(), 10u);
  EXPECT_NEAR(defaults[0], std::sqrt(2 * 0.01 / g), 1e-14);
  const double d = first_ten_apart(defaults, tighter);
  std::printf("rocking cube: %zu impacts; first ten %.6f to %.6f s; defaults vs 100x tighter: %.2e s\n",
              defaults.size(), defaults[0], defaults[9], d);
  EXPECT_LE(d, 1e-12);
  // A flat box (0.16 × 0.1 × 0.06 m, three different moments) rocking on its
  // long edge: the same (measured within 6.3e-15 s of a run at 1e-15;
  // 6.0e-10 s before).
  const Vec3 flat(0.16, 0.1, 0.06);
  EXPECT_LE(first_ten_apart(box_impact_times(flat, tilt, 1e-10), box_impact_times(flat, tilt, 1e-12)), 1e-12);
}

TEST(EventLocation, TumblingBoxImpactTimesConvergeWithTheIntegratorTolerance) {
  // Where the chart is not exact: the flat box tilted about x and y lands on
  // a corner and tumbles, its angular velocity off every principal axis, so
  // ω varies in each flight (torque-free, three different moments). Its first
  // ten impact times then follow the integrator's tolerance: measured
  // 2.3e-11 s between 1e-10 and 1e-12, 1.4e-13 s between 1e-12 and 1e-14.
  // At the defaults this scene does not meet 1e-12 s.
  const Vec3 flat(0.16, 0.1, 0.06), tilt(0.2, 0.15, 0.0);
  const std::vector<double> t10 = box_impact_times(flat, tilt, 1e-10);
  const std::vector<double> t12 = box_impact_times(flat, tilt, 1e-12);
  const std::vector<double> t14 = box_impact_times(flat, tilt, 1e-14);
  const double d10 = first_ten_apart(t10, t12), d12 = first_ten_apart(t12, t14);
  std::printf("tumbling box: %zu impacts; 1e-10 vs 1e-12: %.2e s, 1e-12 vs 1e-14: %.2e s\n", t10.size(), d10, d12);
  EXPECT_LE(d10, 1e-10);
  EXPECT_LE(d12, 1e-12);
}
