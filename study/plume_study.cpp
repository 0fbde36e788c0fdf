// plume_study: the three simulation schemes (event-driven, compliant,
// time-stepping) on five scenes at several tolerances / step sizes; error
// against the closed form (or the scheme's own converged answer) and cost.
// One CSV row per run on stdout (or --out FILE). Driven by run_study.py,
// which also writes the Markdown table and the work-precision plots.
//
//   plume_study [--out results.csv] [--quick] [--only CASE]
//
// Scenes (as models/worlds/, built here so that each scheme gets the same
// world; the quadruped is models/worlds/quadruped_standing.xml itself):
//   bouncing_ball  ball.urdf dropped 1 m, e = 0.8; the compliant ground has
//                  K = 2e5 N/m and the D whose Kelvin–Voigt bounce has e = 0.8
//   falling_rod    rod.urdf at 45° on a frictionless floor, e = 0
//   newtons_cradle balls_row.urdf, 1 mm gaps, striker at 1 m/s, e = 1; the
//                  compliant contacts are K = 2e7 N/m, D = 0 (elastic, and
//                  short enough, 0.22 ms, for the impacts to stay sequential)
//   bowling_ball   ball.urdf sliding at 2 m/s without spin, μ = 0.2
//   quadruped      the standing demo (PD at 1 kHz, 2 s)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "closed_forms.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/environment.hpp"
#include "plume/sim/simulator.hpp"
#include "plume/sim/world_file.hpp"
#include "plume/urdf.hpp"

using namespace plume;
namespace cf = plume::closed_form;

namespace {

constexpr double g = 9.81;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string models_dir() { return PLUME_MODELS_DIR; }

Model load(const std::string& file, urdf::RootJoint root) {
  urdf::LoadOptions o;
  o.root = root;
  return urdf::load(models_dir() + "/" + file, o);
}

World single(const std::string& name, const Model& m, const VectorX& q0, const VectorX& v0, const ContactParameters& cp,
             bool ground) {
  WorldBuilder wb;
  wb.add_model(name, m, q0, v0);
  if (ground) wb.add_environment(ground_plane());
  wb.set_default_contact(cp);
  return wb.build();
}

// One configuration of a scheme: which integrator, which knob.
struct Setting {
  Scheme scheme;
  Integrator integrator;
  double value;  // tolerance (event-driven, compliant) or time_step (time-stepping)
  std::string knob() const { return scheme == Scheme::TimeStepping ? "time_step" : "tolerance"; }
  SimulationOptions apply(SimulationOptions o) const {
    o.scheme = scheme;
    o.integrator = integrator;
    if (scheme == Scheme::TimeStepping) {
      o.time_step = value;
    } else {
      o.abs_tol = o.rel_tol = value;
    }
    return o;
  }
  std::string label() const {
    if (scheme == Scheme::EventDriven) {
      return integrator == Integrator::Dopri5 ? "event-driven" : std::string("event-driven/") + to_string(integrator);
    }
    if (scheme == Scheme::TimeStepping) return "time-stepping";
    return std::string("compliant/") + to_string(integrator);
  }
};

struct Scene {
  World world;
  SimulationOptions options;
  std::optional<PdController> controller;
  double period = 1e-3;
};

struct Outcome {
  SimulationResult result;
  MemoryRecorder rec;
  VectorX q, v;
  double energy = 0.0;
  double wall = 0.0;
};

Outcome run(const Scene& scene, const Setting& s, bool record_samples = true) {
  Outcome out;
  SimulationOptions o = s.apply(scene.options);
  if (!record_samples) o.output_rate = 0.0;
  // Short runs are repeated (best of up to 3) for a steadier wall time.
  double best = std::numeric_limits<double>::infinity(), spent = 0.0;
  for (int rep = 0; rep < 3 && (rep == 0 || spent < 0.3); ++rep) {
    Simulator sim(scene.world, o);
    if (scene.controller) sim.set_controller(scene.controller->function(scene.world.model()), scene.period);
    MemoryRecorder rec;
    const SimulationResult r = sim.run(&rec);
    spent += r.statistics.wall_time;
    if (r.statistics.wall_time < best) {
      best = r.statistics.wall_time;
      out.result = r;
      out.rec = std::move(rec);
      out.q = sim.q();
      out.v = sim.v();
      out.energy = sim.energy();
    }
  }
  out.wall = best;
  return out;
}

std::vector<double> times_of(const MemoryRecorder& r, EventKind kind, const std::string& contains = "") {
  std::vector<double> t;
  for (const SimulationEvent& e : r.events) {
    if (e.kind == kind && (contains.empty() || e.contact.find(contains) != std::string::npos)) t.push_back(e.time);
  }
  return t;
}

const SimulationEvent* first_event(const MemoryRecorder& r, EventKind kind, const std::string& contains = "") {
  for (const SimulationEvent& e : r.events) {
    if (e.kind == kind && (contains.empty() || e.contact.find(contains) != std::string::npos)) return &e;
  }
  return nullptr;
}

// One CSV row.
struct Row {
  std::string scene, label, knob;
  double value = 0;
  std::string status;
  double wall = 0;
  long steps = 0, rhs = 0, lcp = 0, events = 0;
  double error = kNaN;          // vs the exact answer of the scheme's own model
  std::string error_what;
  double rest_error = kNaN;     // time of coming to rest
  double final_error = kNaN;    // final state
  double penetration = kNaN;    // largest −φ over the run
  double penetration_end = kNaN;  // largest −φ of the contacts at the end
  double energy_error = kNaN;
  double momentum_error = kNaN;
  double rigid_deviation = kNaN;  // compliant only: vs the rigid closed form
};

Row make_row(const std::string& scene, const Setting& s) {
  Row row;
  row.scene = scene;
  row.label = s.label();
  row.knob = s.knob();
  row.value = s.value;
  return row;
}

void fill_cost(Row& row, const Outcome& o) {
  const SimulationStatistics& st = o.result.statistics;
  row.status = to_string(o.result.status);
  row.wall = o.wall;
  row.steps = st.steps;
  row.rhs = st.rhs_evaluations;
  row.lcp = st.lcp_solves;
  row.events = st.events;
  row.penetration = st.max_penetration;
  double last = -1, pen = 0.0;
  for (const ContactSample& c : o.rec.contacts) last = std::max(last, c.time);
  for (const ContactSample& c : o.rec.contacts) {
    if (c.time == last) pen = std::max(pen, -c.gap);
  }
  row.penetration_end = last >= 0 ? pen : 0.0;
}

std::string num(double x) {
  if (std::isnan(x)) return "";
  std::ostringstream s;
  s.precision(6);
  s << x;
  return s.str();
}

void write(std::ostream& os, const Row& r) {
  os << r.scene << ',' << r.label << ',' << r.knob << ',' << num(r.value) << ',' << r.status << ',' << num(r.wall) << ','
     << r.steps << ',' << r.rhs << ',' << r.lcp << ',' << r.events << ',' << num(r.error) << ',' << r.error_what << ','
     << num(r.rest_error) << ',' << num(r.final_error) << ',' << num(r.penetration) << ',' << num(r.penetration_end)
     << ',' << num(r.energy_error) << ',' << num(r.momentum_error) << ',' << num(r.rigid_deviation) << '\n';
  os.flush();
}

const char* kHeader =
    "scene,scheme,knob,value,status,wall_time,steps,rhs_evaluations,lcp_solves,events,error,error_what,rest_error,"
    "final_error,max_penetration,penetration_end,energy_error,momentum_error,rigid_deviation\n";

std::vector<Setting> settings(bool quick, const std::string& /*scene*/) {
  // The defaults (SimulationOptions) are tolerance 1e-10 and time_step 1e-3;
  // --quick keeps them and one looser setting per scheme.
  using V = std::vector<double>;
  std::vector<Setting> s;
  for (double tol : quick ? V{1e-6, 1e-10} : V{1e-4, 1e-6, 1e-8, 1e-10, 1e-12}) {
    s.push_back({Scheme::EventDriven, Integrator::Dopri5, tol});
  }
  // Bogacki–Shampine 3(2): three evaluations per step against dopri5's six.
  for (double tol : quick ? V{1e-6, 1e-10} : V{1e-4, 1e-6, 1e-8, 1e-10, 1e-12}) {
    s.push_back({Scheme::EventDriven, Integrator::BogackiShampine, tol});
  }
  for (double tol : quick ? V{1e-6, 1e-10} : V{1e-4, 1e-6, 1e-8, 1e-10}) {
    s.push_back({Scheme::Compliant, Integrator::Dopri5, tol});
  }
  for (double tol : quick ? V{1e-6, 1e-10} : V{1e-4, 1e-6, 1e-8, 1e-10}) {
    s.push_back({Scheme::Compliant, Integrator::Rosenbrock4, tol});
  }
  for (double h : quick ? V{1e-2, 1e-3} : V{1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5}) {
    s.push_back({Scheme::TimeStepping, Integrator::Dopri5, h});
  }
  return s;
}

// ---- the scenes ----------------------------------------------------------------------
constexpr double kBallDrop = 1.0, kBallE = 0.8, kBallR = 0.1, kBallK = 2e5;

Scene bouncing_ball(bool compliant) {
  const Model ball = load("ball.urdf", urdf::RootJoint::FreeFlyer);
  VectorX q0 = neutral_configuration(ball);
  q0(2) = kBallDrop + kBallR;
  ContactParameters cp;
  cp.mu = 0.5;
  cp.restitution = kBallE;
  if (compliant) {
    cp.stiffness = kBallK;
    cp.damping = cf::damping_for_restitution(1.0, kBallK, g, std::sqrt(2 * g * kBallDrop), kBallE);
  }
  Scene s{single("ball", ball, q0, VectorX::Zero(6), cp, true), {}, std::nullopt};
  s.options.duration = 5.0;
  s.options.output_rate = 100;
  return s;
}

Scene falling_rod() {
  const Model rod = load("rod.urdf", urdf::RootJoint::Planar);
  VectorX q0(3);
  q0 << 0.0, std::sin(cf::kPi / 4), cf::kPi / 4;
  ContactParameters cp;
  cp.mu = 0.0;
  cp.restitution = 0.0;
  Scene s{single("rod", rod, q0, VectorX::Zero(3), cp, true), {}, std::nullopt};
  s.options.duration = 1.0;
  s.options.output_rate = 100;
  return s;
}

constexpr double kCradleK = 2e7, kCradleMass = 0.2, kCradleGap = 1e-3;

Scene newtons_cradle() {
  const Model row = load("balls_row.urdf", urdf::RootJoint::Fixed);
  VectorX v0 = VectorX::Zero(5);
  v0(0) = 1.0;
  ContactParameters cp;
  cp.mu = 0.0;
  cp.restitution = 1.0;
  cp.stiffness = kCradleK;
  cp.damping = 0.0;
  Scene s{single("cradle", row, VectorX::Zero(5), v0, cp, false), {}, std::nullopt};
  s.options.duration = 0.02;
  s.options.output_rate = 0;
  return s;
}

constexpr double kBowlV0 = 2.0, kBowlMu = 0.2;

Scene bowling_ball() {
  const Model ball = load("ball.urdf", urdf::RootJoint::FreeFlyer);
  VectorX q0 = neutral_configuration(ball);
  q0(2) = kBallR;
  VectorX v0 = VectorX::Zero(6);
  v0(3) = kBowlV0;
  ContactParameters cp;
  cp.mu = kBowlMu;
  cp.restitution = 0.0;
  Scene s{single("ball", ball, q0, v0, cp, true), {}, std::nullopt};
  s.options.duration = 0.5;
  s.options.output_rate = 50;
  return s;
}

Scene quadruped() {
  Scenario sc = load_world(models_dir() + "/worlds/quadruped_standing.xml");
  Scene s{sc.world, sc.options, sc.controller, sc.controller_period};
  s.options.output_rate = 50;
  return s;
}

double world_vx(const VectorX& q, const VectorX& v) {
  const Eigen::Quaterniond r(q.segment<4>(3));
  return (r * Vec3(v.segment<3>(3))).x();
}

// ---- per-scene measurements ------------------------------------------------------------
void measure_bouncing_ball(const std::vector<Setting>& ss, std::ostream& os) {
  const Scene rigid = bouncing_ball(false), soft = bouncing_ball(true);
  const std::vector<double> exact = cf::bounce_times(kBallDrop, kBallE, g, 10);
  // Event-driven rests at the accumulation point; time-stepping at the first impact below zeno_speed.
  const double t_inf = cf::bounce_rest_time(kBallDrop, kBallE, g);
  const double t_zeno = cf::bounce_rest_time_zeno(kBallDrop, kBallE, g, rigid.options.zeno_speed);
  const double D = soft.world.default_contact().damping;
  const auto bounces = cf::compliant_bounces(1.0, kBallK, D, g, kBallDrop, 3);
  std::fprintf(stderr, "bouncing_ball: compliant D = %.6g N s/m (e = %.3f)\n", D, kBallE);
  for (const Setting& s : ss) {
    const bool compliant = s.scheme == Scheme::Compliant;
    const Outcome o = run(compliant ? soft : rigid, s);
    Row row = make_row("bouncing_ball", s);
    fill_cost(row, o);
    if (!compliant) {
      const auto impacts = times_of(o.rec, EventKind::Impact);
      double err = impacts.size() >= exact.size() ? 0.0 : kNaN;
      for (std::size_t k = 0; k < exact.size() && k < impacts.size(); ++k) err = std::max(err, std::abs(impacts[k] - exact[k]));
      row.error = err;
      row.error_what = "max |t_k - t_k exact| over 10 impacts [s]";
      const auto rest = times_of(o.rec, EventKind::ZenoRest);
      const double t_rest = s.scheme == Scheme::EventDriven ? t_inf : t_zeno;
      row.rest_error = rest.empty() ? kNaN : std::abs(rest[0] - t_rest);
      row.final_error = std::abs(o.q(2) - kBallR) + o.v.norm();
      row.energy_error = std::abs(o.energy - g * kBallR);
    } else {
      const auto gains = times_of(o.rec, EventKind::ContactGain), losses = times_of(o.rec, EventKind::ContactLoss);
      double err = gains.size() >= 3 && losses.size() >= 3 ? 0.0 : kNaN;
      double dev = 0.0;
      for (std::size_t k = 0; k < 3 && k < gains.size() && k < losses.size() && k < bounces.size(); ++k) {
        err = std::max({err, std::abs(gains[k] - bounces[k].touch), std::abs(losses[k] - bounces[k].loss)});
        dev = std::max(dev, std::abs(gains[k] - exact[k]));
      }
      row.error = err;
      row.error_what = "max |touch/loss - Kelvin-Voigt closed form| over 3 bounces [s]";
      row.rigid_deviation = dev;
      row.final_error = std::abs(o.q(2) - (kBallR - g / kBallK)) + o.v.norm();  // rest at the static deflection
      row.energy_error = std::abs(o.energy - g * (kBallR - g / kBallK));
    }
    write(os, row);
  }
}

void measure_falling_rod(const std::vector<Setting>& ss, std::ostream& os) {
  const Scene scene = falling_rod();
  const Model& m = scene.world.model();
  Data d(m);
  const MatrixX H = crba(m, d, scene.world.q0());
  const double T = cf::rod_impact_time(H(0, 0), H(2, 2), 1.0, g, cf::kPi / 4);
  // The compliant model's own answer: dopri5 at 1e-12.
  const Outcome ref = run(scene, {Scheme::Compliant, Integrator::Dopri5, 1e-12}, false);
  const SimulationEvent* ref_gain = first_event(ref.rec, EventKind::ContactGain, "end_right");
  const double T_soft = ref_gain ? ref_gain->time : kNaN;
  std::fprintf(stderr, "falling_rod: T = %.12f, compliant reference %.12f\n", T, T_soft);
  for (const Setting& s : ss) {
    const Outcome o = run(scene, s);
    Row row = make_row("falling_rod", s);
    fill_cost(row, o);
    const bool compliant = s.scheme == Scheme::Compliant;
    const SimulationEvent* e = first_event(o.rec, compliant ? EventKind::ContactGain : EventKind::Impact, "end_right");
    const double t = e ? e->time : kNaN;
    row.error = std::abs(t - (compliant ? T_soft : T));
    row.error_what = compliant ? "|t_impact - compliant reference| [s]" : "|t_impact - energy-integral T| [s]";
    if (compliant) row.rigid_deviation = std::abs(t - T);
    row.final_error = std::abs(o.q(2)) + o.v.norm();  // flat and at rest
    row.energy_error = std::abs(o.energy - (compliant ? ref.energy : 0.0));
    row.momentum_error = std::abs(o.q(0));  // no horizontal force: the COM stays at x = 0
    write(os, row);
  }
}

void measure_cradle(const std::vector<Setting>& ss, std::ostream& os) {
  const Scene scene = newtons_cradle();
  VectorX v_exact = VectorX::Zero(5);
  v_exact(4) = 1.0;
  const cf::CompliantCradle soft = cf::compliant_cradle(kCradleMass, kCradleK, 0.0, 1.0, kCradleGap, 5);
  const VectorX v_soft = Eigen::Map<const VectorX>(soft.velocity.data(), 5);
  for (const Setting& s : ss) {
    const Outcome o = run(scene, s);
    Row row = make_row("newtons_cradle", s);
    fill_cost(row, o);
    const bool compliant = s.scheme == Scheme::Compliant;
    if (!compliant) {
      const auto impacts = times_of(o.rec, EventKind::Impact);
      double err = impacts.size() == 4 ? 0.0 : kNaN;
      for (std::size_t k = 0; k < 4 && k < impacts.size(); ++k) err = std::max(err, std::abs(impacts[k] - 1e-3 * (k + 1)));
      row.error = err;
      row.error_what = "max |t_k - k ms| over 4 impacts [s]";
      row.final_error = (o.v - v_exact).norm();
    } else {
      const auto gains = times_of(o.rec, EventKind::ContactGain), losses = times_of(o.rec, EventKind::ContactLoss);
      double err = gains.size() == 4 && losses.size() == 4 ? 0.0 : kNaN;
      for (std::size_t k = 0; k < 4 && k < gains.size() && k < losses.size(); ++k) {
        err = std::max({err, std::abs(gains[k] - soft.touch[k]), std::abs(losses[k] - soft.loss[k])});
      }
      row.error = err;
      row.error_what = "max |touch/loss - sequential Kelvin-Voigt closed form| over 4 contacts [s]";
      row.final_error = (o.v - v_soft).norm();
      row.rigid_deviation = (o.v - v_exact).norm();
    }
    row.energy_error = std::abs(o.energy - 0.5 * 0.2 * 1.0);
    row.momentum_error = std::abs(0.2 * o.v.sum() - 0.2);
    write(os, row);
  }
}

void measure_bowling(const std::vector<Setting>& ss, std::ostream& os) {
  const Scene scene = bowling_ball();
  const double t_exact = cf::bowling_stick_time(kBowlV0, kBowlMu, g), v_exact = cf::bowling_rolling_speed(kBowlV0);
  const Outcome ref = run(scene, {Scheme::Compliant, Integrator::Dopri5, 1e-12}, false);
  const SimulationEvent* ref_stick = first_event(ref.rec, EventKind::Stick);
  const double t_soft = ref_stick ? ref_stick->time : kNaN, v_soft = world_vx(ref.q, ref.v);
  std::fprintf(stderr, "bowling_ball: stick %.12f, compliant reference %.12f (v %.9f)\n", t_exact, t_soft, v_soft);
  for (const Setting& s : ss) {
    const Outcome o = run(scene, s);
    Row row = make_row("bowling_ball", s);
    fill_cost(row, o);
    const bool compliant = s.scheme == Scheme::Compliant;
    const SimulationEvent* e = first_event(o.rec, EventKind::Stick);
    const double t = e ? e->time : kNaN;
    row.error = std::abs(t - (compliant ? t_soft : t_exact));
    row.error_what = compliant ? "|t_stick - compliant reference| [s]" : "|t_stick - 2v0/(7 mu g)| [s]";
    row.final_error = std::abs(world_vx(o.q, o.v) - (compliant ? v_soft : v_exact));
    if (compliant) row.rigid_deviation = std::abs(t - t_exact);
    row.energy_error = std::abs(o.energy - (compliant ? ref.energy : 0.5 * 1.0 * v_exact * v_exact * 7.0 / 5.0 + g * kBallR));
    write(os, row);
  }
}

void measure_quadruped(const std::vector<Setting>& ss, std::ostream& os) {
  const Scene scene = quadruped();
  const Outcome ref_rigid = run(scene, {Scheme::EventDriven, Integrator::Dopri5, 1e-12}, false);
  const Outcome ref_soft = run(scene, {Scheme::Compliant, Integrator::Dopri5, 1e-12}, false);
  std::fprintf(stderr, "quadruped: references %s / %s, trunk z %.9f / %.9f\n", to_string(ref_rigid.result.status),
               to_string(ref_soft.result.status), ref_rigid.q(2), ref_soft.q(2));
  for (const Setting& s : ss) {
    const Outcome o = run(scene, s);
    Row row = make_row("quadruped", s);
    fill_cost(row, o);
    const bool compliant = s.scheme == Scheme::Compliant;
    const Outcome& ref = compliant ? ref_soft : ref_rigid;
    row.error = (o.q - ref.q).cwiseAbs().maxCoeff();
    row.error_what = compliant ? "max |q_end - compliant reference|" : "max |q_end - event-driven at 1e-12|";
    row.final_error = (o.v - ref.v).cwiseAbs().maxCoeff();
    row.energy_error = std::abs(o.energy - ref.energy);
    if (compliant) row.rigid_deviation = (o.q - ref_rigid.q).cwiseAbs().maxCoeff();
    write(os, row);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path, only;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) {
      out_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      only = argv[++i];
    } else if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: plume_study [--out results.csv] [--quick] [--only SCENE]\n");
      return 2;
    }
  }
  std::ofstream file;
  if (!out_path.empty()) file.open(out_path);
  std::ostream& os = out_path.empty() ? std::cout : file;
  os << kHeader;
  try {
    const std::vector<std::pair<std::string, void (*)(const std::vector<Setting>&, std::ostream&)>> scenes = {
        {"bouncing_ball", measure_bouncing_ball}, {"falling_rod", measure_falling_rod},
        {"newtons_cradle", measure_cradle},       {"bowling_ball", measure_bowling},
        {"quadruped", measure_quadruped}};
    for (const auto& [name, fn] : scenes) {
      if (!only.empty() && only != name) continue;
      std::fprintf(stderr, "== %s\n", name.c_str());
      fn(settings(quick, name), os);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plume_study: %s\n", e.what());
    return 1;
  }
  return 0;
}
