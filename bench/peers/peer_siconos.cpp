// peer_siconos: plume's event-driven scheme and Siconos' EventDriven
// simulation (LSODAR root finding, an impact LCP with Newton restitution, an
// acceleration LCP) side by side, both at their defaults, on a ball bouncing
// on a block (level, and tilted onto an edge so that it rocks) and on two
// balls dropped stacked (several bodies; their impacts in closed form) on the
// ground: impact times against the closed form
// t_k = t₁(1 + 2e + … + 2e^{k−1}), t₁ = √(2h/g), how the bounces end against
// their accumulation point t∞ = t₁(1 + e)/(1 − e), events and wall time.
//
//   peer_siconos [--e 0.9] [--bounces 44] [--scene ball|block|block-on-block|two-balls]
//
// Siconos is set up from its documented C++ API: the ball as a
// LagrangianLinearTIDS (q = height of its centre, mass matrix m, constant
// external force −m g), one Interaction with a NewtonImpactNSL(e) law and a
// LagrangianLinearTIR y = q − r (the gap), a NonSmoothDynamicalSystem, a
// LsodarOSI at its default tolerances (rtol = 10 ε, atol = 100 ε), and an
// EventDriven simulation with two Lemke LCPs (impact and acceleration
// levels), stepped by advanceToEvent()/processEvents() while events remain;
// a non-smooth event (type NS_EVENT) is an impact. plume runs ball.urdf (the
// same mass and radius) as a free body over a ground plane at its defaults.
// Both report samples every 0.01 s (Siconos' time discretisation, plume's
// output_rate; plume also without samples) over the same duration. An exception thrown by Siconos is a
// finding: printed with its message, the run's numbers up to it kept.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include <SiconosKernel.hpp>

#include "plume/plume.hpp"

namespace {

constexpr double g = 9.81, kMass = 1.0, kRadius = 0.1, kDrop = 1.0, kOutput = 0.01, kWallLimit = 20.0;

struct Outcome {
  std::string peer, status = "finished";
  std::vector<double> impacts;  // impact times [s]
  double rest = std::nan("");   // plume: zeno_rest time
  long events = 0;
  double gap = 0.0, speed = 0.0;  // at the end
  double wall = 0.0;              // [s]
};

std::vector<double> closed_form(double e, int n) {
  std::vector<double> t;
  const long double t1 = std::sqrt(2.0L * kDrop / g);
  long double tk = t1, step = 2.0L * e * t1;
  for (int k = 0; k < n; ++k) {
    t.push_back(static_cast<double>(tk));
    tk += step;
    step *= e;
  }
  return t;
}

// ---- plume -------------------------------------------------------------------------------------
class ImpactLog : public plume::Recorder {
 public:
  explicit ImpactLog(Outcome& o) : o_(o) {}
  void event(const plume::SimulationEvent& ev) override {
    ++o_.events;
    // Contacts struck at one instant (a block's corners) are one impact.
    if (ev.kind == plume::EventKind::Impact && (o_.impacts.empty() || ev.time != o_.impacts.back())) {
      o_.impacts.push_back(ev.time);
    }
    if (ev.kind == plume::EventKind::ZenoRest && std::isnan(o_.rest)) o_.rest = ev.time;  // the first
  }

 private:
  Outcome& o_;
};

// The wall time covers building the world and the run (the URDF is read
// once, outside: Siconos' model is built in code).
Outcome run_plume(const plume::Model& body, const plume::VectorX& q0, double rest_height, double e, double duration,
                  double output_rate = 1.0 / kOutput) {
  Outcome o;
  o.peer = output_rate > 0 ? "plume" : "plume, no samples";
  const auto wall0 = std::chrono::steady_clock::now();
  plume::WorldBuilder wb;
  wb.add_model("body", body, q0);
  wb.add_environment(plume::ground_plane());
  plume::ContactParameters cp;
  cp.mu = 0.0;
  cp.restitution = e;
  wb.set_default_contact(cp);
  plume::SimulationOptions so;
  so.duration = duration;
  so.output_rate = output_rate;
  plume::Simulator sim(wb.build(), so);
  ImpactLog log(o);
  const plume::SimulationResult r = sim.run(&log);
  o.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (r.status != plume::SimulationStatus::Finished) o.status = std::string(plume::to_string(r.status)) + ": " + r.message;
  o.gap = sim.q()(2) - rest_height;
  o.speed = sim.v()(5);  // free-flyer v = [ω; v] in the body frame: ż when level
  return o;
}

// ---- Siconos -----------------------------------------------------------------------------------
// advanceToEvent()/processEvents() while events remain; a non-smooth event
// is an impact. A run that stops advancing (events piling up at one instant)
// is cut after kWallLimit and reported.
void siconos_loop(EventDriven& sim, Outcome& o, std::chrono::steady_clock::time_point wall0) {
  sim.initialize();
  SP::EventsManager events = sim.eventsManager();
  while (sim.hasNextEvent()) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count() > kWallLimit) {
      o.status = "stopped by the harness after " + std::to_string(kWallLimit) + " s of wall time at t = " +
                 std::to_string(sim.startingTime()) + " s (" + std::to_string(o.events) + " impacts)";
      break;
    }
    sim.advanceToEvent();
    const bool impact = events->nextEvent()->getType() == NS_EVENT;
    sim.processEvents();
    if (impact) {
      ++o.events;
      o.impacts.push_back(sim.startingTime());
    }
  }
}

// The event-driven simulation of `nsds` as every scene here runs it: LSODAR
// (at rtol = atol = tol when tol > 0, else its defaults), the impact LCP and
// the acceleration LCP, output every kOutput (a step that divides the
// duration, so that the run ends at it); then siconos_loop. `sim` is set
// before anything can throw, so that a throw can say when it happened.
void run_event_driven(const SP::NonSmoothDynamicalSystem& nsds, double duration, double tol, SP::EventDriven& sim,
                      Outcome& o, std::chrono::steady_clock::time_point wall0) {
  auto td = std::make_shared<TimeDiscretisation>(0.0, duration / std::ceil(duration / kOutput));
  sim = std::make_shared<EventDriven>(nsds, td);
  auto osi = std::make_shared<LsodarOSI>();
  if (tol > 0) osi->setTol(1, tol, tol);  // itol = 1: scalar rtol and atol
  sim->insertIntegrator(osi);
  sim->insertNonSmoothProblem(std::make_shared<LCP>(), SICONOS_OSNSP_ED_IMPACT);
  sim->insertNonSmoothProblem(std::make_shared<LCP>(), SICONOS_OSNSP_ED_SMOOTH_ACC);
  siconos_loop(*sim, o, wall0);
}

// A Siconos throw as the outcome's status: when (the simulation's time, or
// "set-up") and what (Siconos often throws a bare std::exception).
void record_throw(Outcome& o, const SP::EventDriven& sim, const char* what) {
  o.status = std::string("threw at t = ") + (sim ? std::to_string(sim->startingTime()) : "set-up") +
             (what ? std::string(": ") + what : std::string(" (not a std::exception)"));
}

// tol > 0: LSODAR at rtol = atol = tol (plume's abs_tol = rel_tol) instead
// of its defaults.
Outcome run_siconos(double e, double duration, double tol = 0.0) {
  Outcome o;
  o.peer = "Siconos";
  if (tol > 0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "Siconos, rtol = atol = %.0e", tol);
    o.peer = buf;
  }
  const auto wall0 = std::chrono::steady_clock::now();
  SP::EventDriven sim;
  SP::LagrangianLinearTIDS ball;
  try {
    auto q0 = std::make_shared<SiconosVector>(1);
    auto v0 = std::make_shared<SiconosVector>(1);
    (*q0)(0) = kDrop + kRadius;
    (*v0)(0) = 0.0;
    auto mass = std::make_shared<SimpleMatrix>(1, 1);
    (*mass)(0, 0) = kMass;
    ball = std::make_shared<LagrangianLinearTIDS>(q0, v0, mass);
    auto weight = std::make_shared<SiconosVector>(1);
    (*weight)(0) = -kMass * g;
    ball->setFExtPtr(weight);
    // y = H q + b: the gap between the ball and the ground.
    auto H = std::make_shared<SimpleMatrix>(1, 1);
    (*H)(0, 0) = 1.0;
    auto b = std::make_shared<SiconosVector>(1);
    (*b)(0) = -kRadius;
    auto relation = std::make_shared<LagrangianLinearTIR>(H, b);
    auto law = std::make_shared<NewtonImpactNSL>(e);
    auto contact = std::make_shared<Interaction>(law, relation);
    auto nsds = std::make_shared<NonSmoothDynamicalSystem>(0.0, duration);
    nsds->insertDynamicalSystem(ball);
    nsds->link(contact, ball);
    run_event_driven(nsds, duration, tol, sim, o, wall0);
  } catch (const std::exception& ex) {
    record_throw(o, sim, ex.what());
  } catch (...) {
    record_throw(o, sim, nullptr);
  }
  o.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (ball) {
    o.gap = (*ball->q())(0) - kRadius;
    o.speed = (*ball->velocity())(0);
  }
  return o;
}

// ---- a block in the plane (x, y, θ) on the ground: Siconos ----------------------------------
// A corner (cx, cy) of the block (body frame) at height
// h = y + cx sin θ + cy cos θ; ∂h/∂q = [0, 1, cx cos θ − cy sin θ];
// d/dt ∂h/∂q = [0, 0, −(cx sin θ + cy cos θ) θ̇].
class CornerRelation : public LagrangianScleronomousR {
 public:
  CornerRelation(double cx, double cy) : cx_(cx), cy_(cy) {
    _jachq = std::make_shared<SimpleMatrix>(1, 3);
    _dotjachq = std::make_shared<SimpleMatrix>(1, 3);
  }
  void computeh(const BlockVector& q, BlockVector&, SiconosVector& y) override {
    y(0) = q.getValue(1) + cx_ * std::sin(q.getValue(2)) + cy_ * std::cos(q.getValue(2));
  }
  void computeJachq(const BlockVector& q, BlockVector&) override {
    const double th = q.getValue(2);
    _jachq->setValue(0, 0, 0.0);
    _jachq->setValue(0, 1, 1.0);
    _jachq->setValue(0, 2, cx_ * std::cos(th) - cy_ * std::sin(th));
  }
  void computeDotJachq(const BlockVector& q, BlockVector&, const BlockVector& qdot) override {
    const double th = q.getValue(2);
    _dotjachq->setValue(0, 0, 0.0);
    _dotjachq->setValue(0, 1, 0.0);
    _dotjachq->setValue(0, 2, -(cx_ * std::sin(th) + cy_ * std::cos(th)) * qdot.getValue(2));
  }

 private:
  double cx_, cy_;
};

// The cube of cube.urdf (side 2a = 0.1 m, 1 kg, I = m(2a)²/6) as a planar
// block tilted θ0 about the x axis, its lowest corner `drop` above the
// ground; frictionless corners (Siconos' NewtonImpactNSL is normal only).
Outcome run_siconos_block(double e, double theta0, double drop, double duration) {
  constexpr double a = 0.05, m = 1.0, inertia = m * 4 * a * a / 6;
  Outcome o;
  o.peer = "Siconos";
  const auto wall0 = std::chrono::steady_clock::now();
  SP::EventDriven sim;
  SP::LagrangianLinearTIDS block;
  try {
    auto q0 = std::make_shared<SiconosVector>(3);
    auto v0 = std::make_shared<SiconosVector>(3);
    (*q0)(0) = 0.0;
    (*q0)(1) = a * (std::sin(theta0) + std::cos(theta0)) + drop;
    (*q0)(2) = theta0;
    v0->zero();
    auto mass = std::make_shared<SimpleMatrix>(3, 3);
    mass->zero();
    (*mass)(0, 0) = m;
    (*mass)(1, 1) = m;
    (*mass)(2, 2) = inertia;
    block = std::make_shared<LagrangianLinearTIDS>(q0, v0, mass);
    auto weight = std::make_shared<SiconosVector>(3);
    weight->zero();
    (*weight)(1) = -m * g;
    block->setFExtPtr(weight);
    auto nsds = std::make_shared<NonSmoothDynamicalSystem>(0.0, duration);
    nsds->insertDynamicalSystem(block);
    for (const double cx : {-a, a}) {
      auto contact = std::make_shared<Interaction>(std::make_shared<NewtonImpactNSL>(e),
                                                   std::make_shared<CornerRelation>(cx, -a));
      nsds->link(contact, block);
    }
    run_event_driven(nsds, duration, 0.0, sim, o, wall0);
  } catch (const std::exception& ex) {
    record_throw(o, sim, ex.what());
  } catch (...) {
    record_throw(o, sim, nullptr);
  }
  o.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (block) {
    o.gap = (*block->q())(1) - a;
    o.speed = (*block->velocity())(1);
  }
  return o;
}

// ---- a block on a block (several bodies, several contacts at once) -----------------------------
// A corner (cx, cy) of the upper block (body frame) against the top face of
// the lower one, q = (x₁, y₁, θ₁, x₂, y₂, θ₂): with d = p₂ + R(θ₂)(cx, cy) − p₁
// and the lower block's up axis n = (−sin θ₁, cos θ₁), h = n·d − a.
class StackedCornerRelation : public LagrangianScleronomousR {
 public:
  StackedCornerRelation(double cx, double cy, double a) : cx_(cx), cy_(cy), a_(a) {
    _jachq = std::make_shared<SimpleMatrix>(1, 6);
    _dotjachq = std::make_shared<SimpleMatrix>(1, 6);
  }
  void computeh(const BlockVector& q, BlockVector&, SiconosVector& y) override {
    const Geometry G(q, cx_, cy_);
    y(0) = -G.s1 * G.dx + G.c1 * G.dy - a_;
  }
  void computeJachq(const BlockVector& q, BlockVector&) override {
    const Geometry G(q, cx_, cy_);
    const double row[6] = {G.s1, -G.c1, -G.c1 * G.dx - G.s1 * G.dy, -G.s1, G.c1, G.s1 * G.ry + G.c1 * G.rx};
    for (int k = 0; k < 6; ++k) _jachq->setValue(0, k, row[k]);
  }
  void computeDotJachq(const BlockVector& q, BlockVector&, const BlockVector& qdot) override {
    const Geometry G(q, cx_, cy_);
    const double w1 = qdot.getValue(2), w2 = qdot.getValue(5);
    // ḋ = ṗ₂ − ṗ₁ + ω₂ × r, r = R(θ₂)(cx, cy); ṙ = ω₂ (−r_y, r_x).
    const double ddx = qdot.getValue(3) - qdot.getValue(0) - w2 * G.ry;
    const double ddy = qdot.getValue(4) - qdot.getValue(1) + w2 * G.rx;
    const double row[6] = {G.c1 * w1, G.s1 * w1,
                           G.s1 * w1 * G.dx - G.c1 * ddx - G.c1 * w1 * G.dy - G.s1 * ddy,
                           -G.c1 * w1, -G.s1 * w1,
                           G.c1 * w1 * G.ry + G.s1 * w2 * G.rx - G.s1 * w1 * G.rx - G.c1 * w2 * G.ry};
    for (int k = 0; k < 6; ++k) _dotjachq->setValue(0, k, row[k]);
  }

 private:
  struct Geometry {
    double s1, c1, rx, ry, dx, dy;
    Geometry(const BlockVector& q, double cx, double cy) {
      s1 = std::sin(q.getValue(2));
      c1 = std::cos(q.getValue(2));
      const double s2 = std::sin(q.getValue(5)), c2 = std::cos(q.getValue(5));
      rx = cx * c2 - cy * s2;
      ry = cx * s2 + cy * c2;
      dx = q.getValue(3) + rx - q.getValue(0);
      dy = q.getValue(4) + ry - q.getValue(1);
    }
  };
  double cx_, cy_, a_;
};

// Two cubes of cube.urdf as planar blocks: the lower one resting on the
// ground, the upper one tilted θ0 with its lowest corner `drop` above the
// lower one's top face; frictionless, the same e everywhere.
Outcome run_siconos_block_on_block(double e, double theta0, double drop, double duration) {
  constexpr double a = 0.05, m = 1.0, inertia = m * 4 * a * a / 6;
  Outcome o;
  o.peer = "Siconos";
  const auto wall0 = std::chrono::steady_clock::now();
  SP::EventDriven sim;
  SP::LagrangianLinearTIDS upper;
  try {
    auto make_block = [&](double y, double theta) {
      auto q0 = std::make_shared<SiconosVector>(3);
      auto v0 = std::make_shared<SiconosVector>(3);
      (*q0)(0) = 0.0;
      (*q0)(1) = y;
      (*q0)(2) = theta;
      v0->zero();
      auto mass = std::make_shared<SimpleMatrix>(3, 3);
      mass->zero();
      (*mass)(0, 0) = m;
      (*mass)(1, 1) = m;
      (*mass)(2, 2) = inertia;
      auto b = std::make_shared<LagrangianLinearTIDS>(q0, v0, mass);
      auto weight = std::make_shared<SiconosVector>(3);
      weight->zero();
      (*weight)(1) = -m * g;
      b->setFExtPtr(weight);
      return b;
    };
    auto lower = make_block(a, 0.0);
    upper = make_block(3 * a + a * (std::sin(theta0) + std::cos(theta0) - 1) + drop, theta0);
    auto nsds = std::make_shared<NonSmoothDynamicalSystem>(0.0, duration);
    nsds->insertDynamicalSystem(lower);
    nsds->insertDynamicalSystem(upper);
    for (const double cx : {-a, a}) {
      nsds->link(std::make_shared<Interaction>(std::make_shared<NewtonImpactNSL>(e), std::make_shared<CornerRelation>(cx, -a)),
                 lower);
      nsds->link(std::make_shared<Interaction>(std::make_shared<NewtonImpactNSL>(e),
                                               std::make_shared<StackedCornerRelation>(cx, -a, a)),
                 lower, upper);
    }
    run_event_driven(nsds, duration, 0.0, sim, o, wall0);
  } catch (const std::exception& ex) {
    record_throw(o, sim, ex.what());
  } catch (...) {
    record_throw(o, sim, nullptr);
  }
  o.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  // Siconos reports the lower block's resting corners as a non-smooth event
  // at t = 0: not an impact of the drop.
  while (!o.impacts.empty() && o.impacts.front() <= 0.0) o.impacts.erase(o.impacts.begin());
  if (upper) {
    o.gap = (*upper->q())(1) - 3 * a;
    o.speed = (*upper->velocity())(1);
  }
  return o;
}

Outcome run_plume_block_on_block(const plume::Model& cube, double e, double theta0, double drop, double duration) {
  constexpr double a = 0.05;
  Outcome o;
  o.peer = "plume";
  const auto wall0 = std::chrono::steady_clock::now();
  plume::WorldBuilder wb;
  plume::VectorX q1 = plume::neutral_configuration(cube), q2 = q1;
  q1(2) = a;
  q2(2) = 3 * a + a * (std::sin(theta0) + std::cos(theta0) - 1) + drop;
  q2.segment<4>(3) = Eigen::Quaterniond(Eigen::AngleAxisd(theta0, Eigen::Vector3d::UnitX())).coeffs();
  wb.add_model("lower", cube, q1);
  wb.add_model("upper", cube, q2);
  wb.add_environment(plume::ground_plane());
  plume::ContactParameters cp;
  cp.mu = 0.0;
  cp.restitution = e;
  wb.set_default_contact(cp);
  plume::SimulationOptions so;
  so.duration = duration;
  so.output_rate = 1.0 / kOutput;
  plume::Simulator sim(wb.build(), so);
  ImpactLog log(o);
  const plume::SimulationResult r = sim.run(&log);
  o.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (r.status != plume::SimulationStatus::Finished) o.status = std::string(plume::to_string(r.status)) + ": " + r.message;
  if (r.statistics.fallbacks > 0) {
    o.status += ", " + std::to_string(r.statistics.fallbacks) + " velocity-level fallback windows, " +
                std::to_string(r.statistics.lcp_solves) + " LCP solves";
  }
  o.gap = sim.q()(7 + 2) - 3 * a;
  o.speed = sim.v()(6 + 5);
  return o;
}

// ---- two balls dropped stacked (several bodies) -----------------------------------------------
// Ball 1 (1 kg, r = 0.1 m) with its bottom 1 m above the ground, ball 2
// straight above it with a 0.5 m gap, both released at rest; Newton's law
// with the same e at the ground and between the balls. In one dimension
// the flights are parabolas and the ball–ball gap is linear in t (both fall
// alike), so the sequence of impacts has a closed form, computed here in
// long double: the earlier of the ground root and the gap root, then
// v₁ ← −e v₁ (ground) or, equal masses,
// (v₁, v₂) ← (((1−e)v₁ + (1+e)v₂)/2, ((1+e)v₁ + (1−e)v₂)/2).
constexpr double kStackGap = 0.5;

std::vector<double> two_balls_closed_form(double e, int n) {
  using LD = long double;
  const LD G = g, r = kRadius;
  LD z1 = r + kDrop, v1 = 0, z2 = z1 + 2 * r + kStackGap, v2 = 0, t = 0;
  std::vector<double> out;
  bool ball_contact = false;  // the last impact was between the balls (gap 0, separating)
  for (int k = 0; k < n; ++k) {
    // Ground: z1 + v1 τ − g τ²/2 = r, the later root (ball 1 is at or above r).
    const LD tg = z1 - r <= 0 ? 2 * v1 / G : (v1 + std::sqrt(v1 * v1 + 2 * G * (z1 - r))) / G;
    const LD gap = z2 - z1 - 2 * r, closing = v1 - v2;
    const LD tb = (closing > 0 && !(ball_contact && gap <= 0)) ? gap / closing : std::numeric_limits<LD>::infinity();
    const LD tau = std::min(tg, tb);
    z1 += v1 * tau - G * tau * tau / 2;
    z2 += v2 * tau - G * tau * tau / 2;
    v1 -= G * tau;
    v2 -= G * tau;
    t += tau;
    if (tg <= tb) {
      z1 = r;
      v1 = -e * v1;
      ball_contact = false;
    } else {
      z2 = z1 + 2 * r;
      const LD a = ((1 - e) * v1 + (1 + e) * v2) / 2, b = ((1 + e) * v1 + (1 - e) * v2) / 2;
      v1 = a;
      v2 = b;
      ball_contact = true;
    }
    out.push_back(static_cast<double>(t));
  }
  return out;
}

Outcome run_plume_two_balls(const plume::Model& ball, double e, double duration) {
  Outcome o;
  o.peer = "plume";
  const auto wall0 = std::chrono::steady_clock::now();
  plume::WorldBuilder wb;
  plume::VectorX q1 = plume::neutral_configuration(ball), q2 = q1;
  q1(2) = kRadius + kDrop;
  q2(2) = q1(2) + 2 * kRadius + kStackGap;
  wb.add_model("ball_1", ball, q1);
  wb.add_model("ball_2", ball, q2);
  wb.add_environment(plume::ground_plane());
  plume::ContactParameters cp;
  cp.mu = 0.0;
  cp.restitution = e;
  wb.set_default_contact(cp);
  plume::SimulationOptions so;
  so.duration = duration;
  so.output_rate = 1.0 / kOutput;
  plume::Simulator sim(wb.build(), so);
  ImpactLog log(o);
  const plume::SimulationResult r = sim.run(&log);
  o.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (r.status != plume::SimulationStatus::Finished) o.status = std::string(plume::to_string(r.status)) + ": " + r.message;
  o.gap = sim.q()(2) - kRadius;
  o.speed = sim.v()(5);
  return o;
}

// Siconos: two 1-DoF LagrangianLinearTIDS (heights of the centres), the
// ground an Interaction on ball 1 (y = q₁ − r), the balls an Interaction
// linking both (LagrangianLinearTIR y = q₂ − q₁ − 2r), NewtonImpactNSL(e) on each.
Outcome run_siconos_two_balls(double e, double duration) {
  Outcome o;
  o.peer = "Siconos";
  const auto wall0 = std::chrono::steady_clock::now();
  SP::EventDriven sim;
  SP::LagrangianLinearTIDS lower;
  try {
    auto make_ball = [&](double height) {
      auto q0 = std::make_shared<SiconosVector>(1);
      auto v0 = std::make_shared<SiconosVector>(1);
      (*q0)(0) = height;
      (*v0)(0) = 0.0;
      auto mass = std::make_shared<SimpleMatrix>(1, 1);
      (*mass)(0, 0) = kMass;
      auto b = std::make_shared<LagrangianLinearTIDS>(q0, v0, mass);
      auto weight = std::make_shared<SiconosVector>(1);
      (*weight)(0) = -kMass * g;
      b->setFExtPtr(weight);
      return b;
    };
    lower = make_ball(kRadius + kDrop);
    auto upper = make_ball(kRadius + kDrop + 2 * kRadius + kStackGap);
    auto nsds = std::make_shared<NonSmoothDynamicalSystem>(0.0, duration);
    nsds->insertDynamicalSystem(lower);
    nsds->insertDynamicalSystem(upper);
    auto H1 = std::make_shared<SimpleMatrix>(1, 1);
    (*H1)(0, 0) = 1.0;
    auto b1 = std::make_shared<SiconosVector>(1);
    (*b1)(0) = -kRadius;
    nsds->link(std::make_shared<Interaction>(std::make_shared<NewtonImpactNSL>(e),
                                             std::make_shared<LagrangianLinearTIR>(H1, b1)),
               lower);
    auto H2 = std::make_shared<SimpleMatrix>(1, 2);
    (*H2)(0, 0) = -1.0;
    (*H2)(0, 1) = 1.0;
    auto b2 = std::make_shared<SiconosVector>(1);
    (*b2)(0) = -2 * kRadius;
    nsds->link(std::make_shared<Interaction>(std::make_shared<NewtonImpactNSL>(e),
                                             std::make_shared<LagrangianLinearTIR>(H2, b2)),
               lower, upper);
    run_event_driven(nsds, duration, 0.0, sim, o, wall0);
  } catch (const std::exception& ex) {
    record_throw(o, sim, ex.what());
  } catch (...) {
    record_throw(o, sim, nullptr);
  }
  o.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (lower) {
    o.gap = (*lower->q())(0) - kRadius;
    o.speed = (*lower->velocity())(0);
  }
  return o;
}

// ---- report ------------------------------------------------------------------------------------
std::string seconds(double x) {
  if (std::isnan(x)) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e s", x);
  return buf;
}

double worst_error(const Outcome& o, const std::vector<double>& exact, std::size_t n) {
  double worst = 0.0;
  n = std::min({n, exact.size(), o.impacts.size()});
  for (std::size_t k = 0; k < n; ++k) worst = std::max(worst, std::abs(o.impacts[k] - exact[k]));
  return worst;
}

// The fastest of three identical runs (one where the first did not finish).
template <class Run>
Outcome best_of_three(Run run) {
  Outcome best = run();
  for (int i = 0; i < 2 && best.status == "finished"; ++i) {
    const Outcome o = run();
    best.wall = std::min(best.wall, o.wall);
  }
  return best;
}

void report(const char* scene, const Outcome& o, const std::vector<double>& exact, double t_inf) {
  const std::size_t n = o.impacts.size();
  std::printf("| %s | %s | %zu | %s | %s | %s | %s | %ld | %.1e m, %.1e m/s | %.2f ms | %s |\n", scene, o.peer.c_str(), n,
              seconds(worst_error(o, exact, 44)).c_str(), seconds(worst_error(o, exact, n)).c_str(),
              seconds(n ? o.impacts.back() - t_inf : std::nan("")).c_str(), seconds(o.rest - t_inf).c_str(), o.events,
              o.gap, o.speed, 1e3 * o.wall, o.status.c_str());
  std::fflush(stdout);
}

// The tilted block on a block: how many impacts the two give at the same
// times (within 1 µs), and how closely. They part where the rocking upper
// block's face overhangs the lower one's edge: in plume the lower block's
// edge strikes that face; the planar Siconos model here has only the upper
// block's corners against the lower one's top face, extended as a plane.
void agreement_note(const Outcome& p, const Outcome& c) {
  std::size_t n = 0;
  double worst = 0.0;
  while (n < p.impacts.size() && n < c.impacts.size() && std::abs(p.impacts[n] - c.impacts[n]) < 1e-6) {
    worst = std::max(worst, std::abs(p.impacts[n] - c.impacts[n]));
    ++n;
  }
  std::printf("|   (tilted: the first %zu impacts agree to %.1e s", n, worst);
  if (n < p.impacts.size() && n < c.impacts.size()) {
    std::printf("; then plume %.9f s, Siconos %.9f s", p.impacts[n], c.impacts[n]);
  }
  std::printf(") |\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  double e = 0.9;
  int bounces = 44;
  std::string only;  // --scene ball | block | block-on-block | two-balls: that one alone
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--e")) e = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--bounces")) bounces = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--scene")) only = argv[i + 1];
  }
  auto wanted = [&](const char* scene) { return only.empty() || only == scene; };
  const std::vector<double> exact = closed_form(e, 100000);
  const double t1 = std::sqrt(2 * kDrop / g), t_inf = t1 * (1 + e) / (1 - e);
  std::printf("ball (m = 1 kg, r = 0.1 m) dropped %.1f m, e = %.2f: t_inf = %.15g s\n\n", kDrop, e, t_inf);
  std::printf("| scene | peer | impacts | worst \\|t_k − closed form\\|, first 44 | all | last impact − t∞ | zeno_rest − t∞ | "
              "events | gap, ż at the end | wall | status |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  plume::urdf::LoadOptions lo;
  lo.root = plume::urdf::RootJoint::FreeFlyer;
  const plume::Model ball = plume::urdf::load(std::string(PLUME_MODELS_DIR) + "/ball.urdf", lo);
  plume::VectorX ball_q0 = plume::neutral_configuration(ball);
  ball_q0(2) = kDrop + kRadius;
  // 1. Bouncing: to the apex after the `bounces`-th impact.
  const std::size_t nb = static_cast<std::size_t>(bounces);
  const double t_bounce = exact[nb - 1] + 0.5 * (exact[nb] - exact[nb - 1]);
  const std::string scene = std::to_string(bounces) + " bounces";
  if (wanted("ball")) {
  report(scene.c_str(), best_of_three([&] { return run_plume(ball, ball_q0, kRadius, e, t_bounce); }), exact, t_inf);
  report(scene.c_str(), best_of_three([&] { return run_plume(ball, ball_q0, kRadius, e, t_bounce, 0.0); }), exact, t_inf);
  report(scene.c_str(), best_of_three([&] { return run_siconos(e, t_bounce); }), exact, t_inf);
  report(scene.c_str(), best_of_three([&] { return run_siconos(e, t_bounce, 1e-10); }), exact, t_inf);
  // 2. Into rest: to 1 s past t∞.
  report("into rest", best_of_three([&] { return run_plume(ball, ball_q0, kRadius, e, t_inf + 1.0); }), exact, t_inf);
  report("into rest", best_of_three([&] { return run_plume(ball, ball_q0, kRadius, e, t_inf + 1.0, 0.0); }), exact, t_inf);
  report("into rest", best_of_three([&] { return run_siconos(e, t_inf + 1.0); }), exact, t_inf);
  report("into rest", best_of_three([&] { return run_siconos(e, t_inf + 1.0, 1e-10); }), exact, t_inf);
  }
  // 3. The cube of cube.urdf dropped 1 cm, level (its impacts are the
  // ball's closed form) and tilted 0.2 rad onto an edge (no closed form
  // after the first impact: plume and Siconos against each other);
  // frictionless, as Siconos' Newton law is.
  const plume::Model cube = plume::urdf::load(std::string(PLUME_MODELS_DIR) + "/cube.urdf", lo);
  const double cube_drop = 0.01, cube_t1 = std::sqrt(2 * cube_drop / g);
  for (const double theta : {0.0, 0.2}) {
    if (!wanted("block")) break;
    plume::VectorX q0 = plume::neutral_configuration(cube);
    q0(2) = 0.05 * (std::sin(theta) + std::cos(theta)) + cube_drop;
    q0.segment<4>(3) = Eigen::Quaterniond(Eigen::AngleAxisd(theta, Eigen::Vector3d::UnitX())).coeffs();
    const Outcome p = best_of_three([&] { return run_plume(cube, q0, 0.05, e, 1.0); });
    const Outcome c = best_of_three([&] { return run_siconos_block(e, theta, cube_drop, 1.0); });
    // Tilted: Siconos against plume's impacts up to plume's first zeno_rest
    // (where one corner's bounces accumulate while the block rocks), and
    // its tail of bounces against that predicted t∞.
    std::vector<double> reference;
    double t_inf = cube_t1 * (1 + e) / (1 - e);
    if (theta == 0.0) {
      for (double tk = cube_t1, step = 2 * e * cube_t1; reference.size() < 100000; tk += step, step *= e) reference.push_back(tk);
    } else {
      for (double tk : p.impacts) {
        if (!(tk > p.rest)) reference.push_back(tk);
      }
      t_inf = p.rest;
    }
    const std::string name = theta == 0.0 ? "level block" : "tilted block (vs plume, t∞ plume's)";
    report(name.c_str(), p, reference, t_inf);
    report(name.c_str(), c, reference, t_inf);
    std::printf("|   | first impact − √(2h/g): plume %.1e s, Siconos %.1e s | | | | | | | | | |\n",
                p.impacts.empty() ? std::nan("") : p.impacts[0] - cube_t1,
                c.impacts.empty() ? std::nan("") : c.impacts[0] - cube_t1);
  }
  // 4. Several bodies: two balls dropped stacked, against the closed form of
  // their first 20 impacts (to halfway to the 21st).
  // 5. A block on a block: level (the upper block's impacts follow the
  // ball's closed form for a 1 cm drop, the lower one staying put) and tilted
  // 0.2 rad (plume and Siconos against each other).
  for (const double theta : {0.0, 0.2}) {
    if (!wanted("block-on-block")) break;
    const Outcome p = best_of_three([&] { return run_plume_block_on_block(cube, e, theta, cube_drop, 1.0); });
    const Outcome c = best_of_three([&] { return run_siconos_block_on_block(e, theta, cube_drop, 1.0); });
    std::vector<double> reference;
    double t_end = cube_t1 * (1 + e) / (1 - e);
    if (theta == 0.0) {
      for (double tk = cube_t1, step = 2 * e * cube_t1; reference.size() < 100000; tk += step, step *= e) reference.push_back(tk);
    } else {
      for (double tk : p.impacts) {
        if (!(tk > p.rest)) reference.push_back(tk);
      }
      t_end = p.rest;
    }
    const std::string name = theta == 0.0 ? "block on a block, level" : "block on a block, tilted (vs plume)";
    report(name.c_str(), p, reference, t_end);
    report(name.c_str(), c, reference, t_end);
    if (theta != 0.0) agreement_note(p, c);
  }
  if (!wanted("two-balls")) return 0;
  const std::vector<double> two = two_balls_closed_form(e, 21);
  const double t_two = 0.5 * (two[19] + two[20]);
  const std::vector<double> two20(two.begin(), two.begin() + 20);
  report("two balls stacked, 20 impacts", best_of_three([&] { return run_plume_two_balls(ball, e, t_two); }), two20, two[19]);
  report("two balls stacked, 20 impacts", best_of_three([&] { return run_siconos_two_balls(e, t_two); }), two20, two[19]);
  return 0;
}
