// peer_simulation: the quadruped standing demo in plume and in MuJoCo.
//
//   build/bench/peers/peer_simulation [--repeats R] [--duration T] [--no-fine] [WORLD.xml]
//
// What is compared: plume's event-driven run of models/worlds/quadruped_standing.xml
// (rigid contact located to 1e-10 s, dopri5 at 1e-10 tolerances, the world's
// 1 kHz PD controller with the URDF torque limits) against MuJoCo 2.2 stepping
// the same robot at a fixed 1 ms with its default soft-contact solver. plume
// is run through Simulator::run_until without a recorder, timed by the wall
// clock; so is its time-stepping scheme on the same world at h = 1 ms (the
// like-for-like comparison with MuJoCo's fixed step), with its trapezoid rule
// (two force solves per step) and its symplectic Euler rule (one, the rule of
// MuJoCo's Euler integrator). MuJoCo reads the same URDF through its own importer, after we strip
// the visual geometry and every collision shape but the foot spheres; the
// compiled model is saved as MJCF (mj_saveLastXML, which rounds numbers to 6
// significant digits), given a free joint on the trunk, a ground plane,
// timestep 0.001 and contact filters so that only feet touch the ground, and
// compiled again; friction is 1 on both sides, everything else is MuJoCo's
// default (Newton solver, pyramidal cone, Euler integrator, solref/solimp).
// Both start from the world file's state (joints matched by name) and run the
// same PD law (gains, targets and effort limits from the world and the URDF),
// evaluated once per millisecond and held (zero-order hold) into
// qfrc_applied; only mj_step is timed. For MuJoCo the maximum penetration is
// the largest −dist of a foot–ground contact over all steps. Optionally
// MuJoCo is also run at a 0.1 ms step with the same 1 kHz controller. Each
// measurement is repeated R times (interleaved) and its range printed; the
// final trunk heights and foot positions of the two are compared.
#include <mujoco/mujoco.h>
#include <tinyxml2.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "plume/algorithms/kinematics.hpp"
#include "plume/sim/simulator.hpp"
#include "plume/sim/world_file.hpp"
#include "xml_files.hpp"

using namespace plume;
using plume::peers::remove_children;
using plume::peers::TempDir;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---- plume --------------------------------------------------------------------------

struct PlumeRun {
  double wall = 0.0;
  SimulationResult result;
  VectorX q;
  std::vector<Vec3> feet;  // foot link origins, world frame
};

PlumeRun run_plume(const Scenario& scenario, double duration, const std::vector<std::string>& foot_frames,
                   Scheme scheme = Scheme::EventDriven, TimeSteppingRule rule = TimeSteppingRule::Trapezoid) {
  SimulationOptions options = scenario.options;
  options.duration = duration;
  options.scheme = scheme;
  options.time_stepping_rule = rule;
  if (scheme == Scheme::TimeStepping) options.time_step = 1e-3;  // MuJoCo's step
  Simulator sim(scenario.world, options);
  if (scenario.controller) sim.set_controller(scenario.controller->function(scenario.world.model()), scenario.controller_period);
  PlumeRun r;
  const auto t0 = Clock::now();
  r.result = sim.run_until(duration);
  r.wall = seconds_since(t0);
  r.q = sim.q();
  const Model& m = scenario.world.model();
  Data d(m);
  forward_kinematics(m, d, r.q);
  update_frame_placements(m, d);
  for (const std::string& f : foot_frames) r.feet.push_back(d.Xframe[m.get_frame(f)].r());
  return r;
}

// ---- MuJoCo model from the URDF ------------------------------------------------------

/// Writes the URDF for MuJoCo's importer: no <visual>, only the sphere
/// collisions (the feet), every link kept as a body. Returns the names of the
/// links that keep a sphere.
std::vector<std::string> write_urdf_for_mujoco(const std::string& in, const std::string& out) {
  tinyxml2::XMLDocument doc;
  if (doc.LoadFile(in.c_str()) != tinyxml2::XML_SUCCESS) throw std::runtime_error("cannot parse " + in);
  tinyxml2::XMLElement* robot = doc.FirstChildElement("robot");
  if (!robot) throw std::runtime_error(in + " has no <robot>");
  std::vector<std::string> feet;
  for (tinyxml2::XMLElement* link = robot->FirstChildElement("link"); link; link = link->NextSiblingElement("link")) {
    remove_children(link, "visual");
    bool sphere = false;
    for (tinyxml2::XMLElement* c = link->FirstChildElement("collision"); c;) {
      tinyxml2::XMLElement* next = c->NextSiblingElement("collision");
      const tinyxml2::XMLElement* g = c->FirstChildElement("geometry");
      if (g && g->FirstChildElement("sphere")) {
        sphere = true;
      } else {
        link->DeleteChild(c);
      }
      c = next;
    }
    if (sphere) feet.push_back(link->Attribute("name"));
  }
  remove_children(robot, "mujoco");
  tinyxml2::XMLElement* mj = doc.NewElement("mujoco");
  tinyxml2::XMLElement* compiler = mj->InsertNewChildElement("compiler");
  compiler->SetAttribute("fusestatic", "false");  // keep the foot links as bodies
  compiler->SetAttribute("discardvisual", "true");
  compiler->SetAttribute("inertiafromgeom", "false");
  compiler->SetAttribute("balanceinertia", "false");
  robot->InsertFirstChild(mj);
  if (doc.SaveFile(out.c_str()) != tinyxml2::XML_SUCCESS) throw std::runtime_error("cannot write " + out);
  return feet;
}

mjModel* compile(const std::string& file) {
  std::array<char, 1024> err{};
  mjModel* m = mj_loadXML(file.c_str(), nullptr, err.data(), static_cast<int>(err.size()));
  if (!m) throw std::runtime_error("mj_loadXML(" + fs::path(file).filename().string() + "): " + err.data());
  return m;
}

/// Edits the MJCF saved from the URDF model: free joint on `root`, ground
/// plane, 1 ms step, friction 1, feet collide with the ground only.
void edit_mjcf(const std::string& in, const std::string& out, const std::string& root) {
  tinyxml2::XMLDocument doc;
  if (doc.LoadFile(in.c_str()) != tinyxml2::XML_SUCCESS) throw std::runtime_error("cannot parse the saved MJCF");
  tinyxml2::XMLElement* mujoco = doc.FirstChildElement("mujoco");
  tinyxml2::XMLElement* world = mujoco ? mujoco->FirstChildElement("worldbody") : nullptr;
  if (!world) throw std::runtime_error("the saved MJCF has no <worldbody>");
  tinyxml2::XMLElement* option = mujoco->FirstChildElement("option");
  if (!option) option = mujoco->InsertNewChildElement("option");
  option->SetAttribute("timestep", "0.001");
  tinyxml2::XMLElement* trunk = world->FirstChildElement("body");
  while (trunk && !(trunk->Attribute("name") && root == trunk->Attribute("name"))) trunk = trunk->NextSiblingElement("body");
  if (!trunk) throw std::runtime_error("the saved MJCF has no top-level body '" + root + "'");
  tinyxml2::XMLElement* free = doc.NewElement("freejoint");
  free->SetAttribute("name", "root_free");
  trunk->InsertFirstChild(free);
  // Every geom left under the robot is a foot sphere: contype 1 (it looks for
  // the ground), conaffinity 0 (nothing looks for it, so feet never touch each other).
  std::vector<tinyxml2::XMLElement*> stack{trunk};
  while (!stack.empty()) {
    tinyxml2::XMLElement* body = stack.back();
    stack.pop_back();
    for (tinyxml2::XMLElement* g = body->FirstChildElement("geom"); g; g = g->NextSiblingElement("geom")) {
      g->SetAttribute("contype", 0x1);
      g->SetAttribute("conaffinity", 0x0);
      g->SetAttribute("friction", "1 0.005 0.0001");
    }
    for (tinyxml2::XMLElement* b = body->FirstChildElement("body"); b; b = b->NextSiblingElement("body")) stack.push_back(b);
  }
  tinyxml2::XMLElement* ground = doc.NewElement("geom");
  ground->SetAttribute("name", "ground");
  ground->SetAttribute("type", "plane");
  ground->SetAttribute("size", "10 10 0.1");
  ground->SetAttribute("contype", 0x0);
  ground->SetAttribute("conaffinity", 0x1);
  ground->SetAttribute("friction", "1 0.005 0.0001");
  world->InsertFirstChild(ground);
  if (doc.SaveFile(out.c_str()) != tinyxml2::XML_SUCCESS) throw std::runtime_error("cannot write " + out);
}

// ---- MuJoCo run -----------------------------------------------------------------------

/// One actuated joint: where it is in MuJoCo and plume's PD parameters for it.
struct Dof {
  int qpos = 0, dof = 0;
  double kp = 0.0, kd = 0.0, target = 0.0, effort = std::numeric_limits<double>::infinity();
};

class MujocoQuadruped {
 public:
  MujocoQuadruped(const Scenario& scenario, std::vector<std::string>* foot_links) {
    const World& world = scenario.world;
    if (world.models().size() != 1) throw std::runtime_error("the world must hold exactly one model");
    const WorldModel& wm = world.models()[0];
    const Model& pm = world.model();
    const std::string prefix = wm.name + "/";
    {
      TempDir dir("plume_peer_simulation");
      const std::string urdf = dir.file("model.urdf"), saved = dir.file("saved.xml"), edited = dir.file("quad.xml");
      *foot_links = write_urdf_for_mujoco(wm.source, urdf);
      mjModel* from_urdf = compile(urdf);
      std::array<char, 1024> err{};
      const int saved_ok = mj_saveLastXML(saved.c_str(), from_urdf, err.data(), static_cast<int>(err.size()));
      mj_deleteModel(from_urdf);
      if (!saved_ok) throw std::runtime_error(std::string("mj_saveLastXML: ") + err.data());
      const std::string root = pm.body_name(wm.first_body);
      edit_mjcf(saved, edited, root.substr(prefix.size()));
      m_ = compile(edited);
    }
    d_ = mj_makeData(m_);
    if (m_->nv != wm.nv) throw std::runtime_error("MuJoCo nv " + std::to_string(m_->nv) + " differs from plume's");
    for (int g = 0; g < m_->ngeom; ++g) {
      if (m_->geom_bodyid[g] != 0 && m_->geom_type[g] != mjGEOM_SPHERE) throw std::runtime_error("a robot geom is not a sphere");
    }
    for (const std::string& f : *foot_links) {
      const int b = mj_name2id(m_, mjOBJ_BODY, f.c_str());
      if (b < 0) throw std::runtime_error("MuJoCo has no body '" + f + "'");
      feet_.push_back(b);
    }
    trunk_ = -1;
    for (int j = 0; j < m_->njnt; ++j) {
      if (m_->jnt_type[j] == mjJNT_FREE) trunk_ = j;
    }
    if (trunk_ < 0) throw std::runtime_error("no free joint");

    // The initial state and the PD parameters, joint by joint, by name.
    const PdController* pd = scenario.controller ? &*scenario.controller : nullptr;
    q0_.assign(m_->nq, 0.0);
    v0_.assign(m_->nv, 0.0);
    const VectorX& q0 = world.q0();
    const VectorX& v0 = world.v0();
    for (int i = wm.first_body; i < wm.first_body + wm.nbodies; ++i) {
      const Joint& jt = pm.joint(i);
      if (jt.type == JointType::FreeFlyer) {
        const int a = m_->jnt_qposadr[trunk_], v = m_->jnt_dofadr[trunk_];
        for (int k = 0; k < 3; ++k) q0_[a + k] = q0(jt.q_index + k);
        q0_[a + 3] = q0(jt.q_index + 6);  // w first in MuJoCo
        for (int k = 0; k < 3; ++k) q0_[a + 4 + k] = q0(jt.q_index + 3 + k);
        // MuJoCo: world-frame linear velocity, then body-frame ω; plume: [ω; v] in the body frame.
        const Eigen::Quaterniond quat(q0(jt.q_index + 6), q0(jt.q_index + 3), q0(jt.q_index + 4), q0(jt.q_index + 5));
        const Vec3 lin = quat.normalized().toRotationMatrix() * v0.segment<3>(jt.v_index + 3);
        for (int k = 0; k < 3; ++k) {
          v0_[v + k] = lin(k);
          v0_[v + 3 + k] = v0(jt.v_index + k);
        }
        continue;
      }
      if (jt.nv == 0) continue;
      if (jt.nv != 1) throw std::runtime_error("joint '" + jt.name + "' is not a 1-dof joint");
      const std::string name = jt.name.substr(prefix.size());
      const int id = mj_name2id(m_, mjOBJ_JOINT, name.c_str());
      if (id < 0) throw std::runtime_error("MuJoCo has no joint '" + name + "'");
      Dof dof;
      dof.qpos = m_->jnt_qposadr[id];
      dof.dof = m_->jnt_dofadr[id];
      q0_[dof.qpos] = q0(jt.q_index);
      v0_[dof.dof] = v0(jt.v_index);
      if (pd) {
        dof.kp = pd->kp(jt.v_index);
        dof.kd = pd->kd(jt.v_index);
        dof.target = pd->q_target(jt.q_index);
        if (scenario.options.torque_limits) dof.effort = pm.effort_limit()(jt.v_index);
      }
      dofs_.push_back(dof);
    }
    if (static_cast<int>(dofs_.size()) + 6 != m_->nv) throw std::runtime_error("not every MuJoCo dof is mapped");
    period_ = scenario.controller_period;
  }
  ~MujocoQuadruped() {
    mj_deleteData(d_);
    mj_deleteModel(m_);
  }
  MujocoQuadruped(const MujocoQuadruped&) = delete;
  MujocoQuadruped& operator=(const MujocoQuadruped&) = delete;

  const mjModel* model() const { return m_; }

  struct Run {
    double wall = 0.0;  // mj_step only
    long steps = 0;
    double max_penetration = 0.0, max_penetration_time = 0.0;
    double final_penetration = 0.0;  // deepest foot at the end
    double trunk_z = 0.0;
    std::vector<Vec3> feet;
    int contacts = 0;  // at the end
  };

  Run run(double timestep, double duration) {
    m_->opt.timestep = timestep;
    mj_resetData(m_, d_);
    std::copy(q0_.begin(), q0_.end(), d_->qpos);
    std::copy(v0_.begin(), v0_.end(), d_->qvel);
    mj_forward(m_, d_);
    const long steps = std::lround(duration / timestep);
    const long per_sample = std::max(1L, std::lround(period_ / timestep));
    Run r;
    Clock::duration stepping{};
    for (long k = 0; k < steps; ++k) {
      if (k % per_sample == 0) {
        for (const Dof& j : dofs_) {
          const double tau = j.kp * (j.target - d_->qpos[j.qpos]) - j.kd * d_->qvel[j.dof];
          d_->qfrc_applied[j.dof] = std::clamp(tau, -j.effort, j.effort);
        }
      }
      const auto t0 = Clock::now();
      mj_step(m_, d_);
      stepping += Clock::now() - t0;
      // The contacts of the state this step started from (mj_step detects them before integrating).
      for (int c = 0; c < d_->ncon; ++c) {
        if (-d_->contact[c].dist > r.max_penetration) {
          r.max_penetration = -d_->contact[c].dist;
          r.max_penetration_time = static_cast<double>(k) * timestep;
        }
      }
    }
    mj_forward(m_, d_);  // contacts and body positions of the final state
    for (int c = 0; c < d_->ncon; ++c) {
      r.final_penetration = std::max(r.final_penetration, -d_->contact[c].dist);
      if (-d_->contact[c].dist > r.max_penetration) {
        r.max_penetration = -d_->contact[c].dist;
        r.max_penetration_time = duration;
      }
    }
    r.wall = std::chrono::duration<double>(stepping).count();
    r.steps = steps;
    r.trunk_z = d_->qpos[m_->jnt_qposadr[trunk_] + 2];
    for (int b : feet_) r.feet.emplace_back(d_->xpos[3 * b], d_->xpos[3 * b + 1], d_->xpos[3 * b + 2]);
    r.contacts = d_->ncon;
    return r;
  }

 private:
  mjModel* m_ = nullptr;
  mjData* d_ = nullptr;
  int trunk_ = -1;
  std::vector<int> feet_;
  std::vector<Dof> dofs_;
  std::vector<mjtNum> q0_, v0_;
  double period_ = 1e-3;
};

// ---- report ------------------------------------------------------------------------------

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  void add(double x) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
};

void print_range(const char* what, const Range& r, const char* unit) {
  std::printf("  %-34s %10.4g .. %-10.4g %s\n", what, r.lo, r.hi, unit);
}

int usage() {
  std::fprintf(stderr, "usage: peer_simulation [--repeats R] [--duration T] [--no-fine] [WORLD.xml]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string world_file = std::string(PLUME_MODELS_DIR) + "/worlds/quadruped_standing.xml";
  int repeats = 3;
  double duration = 10.0;
  bool fine = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
    } else if (a == "--duration" && i + 1 < argc) {
      duration = std::atof(argv[++i]);
    } else if (a == "--no-fine") {
      fine = false;
    } else if (!a.empty() && a[0] != '-') {
      world_file = a;
    } else {
      return usage();
    }
  }
  if (repeats < 1 || !(duration > 0.0)) return usage();

  try {
    if (mj_version() != mjVERSION_HEADER) throw std::runtime_error("MuJoCo's library does not match its header");
    const Scenario scenario = load_world(world_file);
    std::vector<std::string> foot_links;
    MujocoQuadruped mj(scenario, &foot_links);
    const std::string prefix = scenario.world.models()[0].name + "/";
    std::vector<std::string> foot_frames;
    for (const std::string& f : foot_links) foot_frames.push_back(prefix + f);

    const mjModel* m = mj.model();
    std::printf("world %s, %g s simulated, %d repeats\n", world_file.c_str(), duration, repeats);
    std::printf("mass: plume %.4f kg, MuJoCo %.4f kg\n", scenario.world.model().total_mass(), mj_getTotalmass(m));
    std::printf("MuJoCo %d: nq %d nv %d, %d geoms; solver %d (2 = Newton), iterations %d, tolerance %g, cone %d "
                "(0 = pyramidal), integrator %d (0 = Euler)\n",
                mj_version(), m->nq, m->nv, m->ngeom, m->opt.solver, m->opt.iterations, m->opt.tolerance, m->opt.cone,
                m->opt.integrator);

    Range plume_wall, plume_rtf, mj_wall, mj_rtf, ratio, fine_wall, fine_rtf, fine_ratio, ts_wall, ts_rtf, ts_ratio, fast_wall,
        fast_rtf, fast_ratio;
    PlumeRun p, pts, pfast;
    MujocoQuadruped::Run q1, q01;
    for (int r = 0; r < repeats; ++r) {
      p = run_plume(scenario, duration, foot_frames);
      if (p.result.status != SimulationStatus::Finished) {
        throw std::runtime_error("plume's run stopped early: " + p.result.message);
      }
      pts = run_plume(scenario, duration, foot_frames, Scheme::TimeStepping);
      if (pts.result.status != SimulationStatus::Finished) {
        throw std::runtime_error("plume's time-stepping run stopped early: " + pts.result.message);
      }
      pfast = run_plume(scenario, duration, foot_frames, Scheme::TimeStepping, TimeSteppingRule::SymplecticEuler);
      if (pfast.result.status != SimulationStatus::Finished) {
        throw std::runtime_error("plume's time-stepping run (symplectic Euler) stopped early: " + pfast.result.message);
      }
      q1 = mj.run(1e-3, duration);
      fast_wall.add(pfast.wall);
      fast_rtf.add(pfast.result.time / pfast.wall);
      fast_ratio.add(pfast.wall / q1.wall);
      ts_wall.add(pts.wall);
      ts_rtf.add(pts.result.time / pts.wall);
      ts_ratio.add(pts.wall / q1.wall);
      plume_wall.add(p.wall);
      plume_rtf.add(p.result.time / p.wall);
      mj_wall.add(q1.wall);
      mj_rtf.add(duration / q1.wall);
      ratio.add(p.wall / q1.wall);
      if (fine) {
        q01 = mj.run(1e-4, duration);
        fine_wall.add(q01.wall);
        fine_rtf.add(duration / q01.wall);
        fine_ratio.add(p.wall / q01.wall);
      }
      std::printf("repeat %d: plume %.3f s, plume time-stepping %.4f s (symplectic Euler %.4f s), MuJoCo 1 ms %.4f s%s\n",
                  r + 1, p.wall, pts.wall, pfast.wall, q1.wall,
                  fine ? (", MuJoCo 0.1 ms " + std::to_string(q01.wall) + " s").c_str() : "");
    }

    const SimulationStatistics& s = p.result.statistics;
    std::printf("\nplume event-driven: %ld steps, %ld RHS evaluations, %ld events, %ld LCP solves\n", s.steps,
                s.rhs_evaluations, s.events, s.lcp_solves);
    const SimulationStatistics& sts = pts.result.statistics;
    std::printf("plume time-stepping (h = 1 ms): %ld steps, %ld force solves, %ld events, max penetration %.3e m\n",
                sts.steps, sts.rhs_evaluations, sts.events, sts.max_penetration);
    const SimulationStatistics& sf = pfast.result.statistics;
    std::printf("plume time-stepping, symplectic Euler (h = 1 ms): %ld steps, %ld force solves, %ld events, max "
                "penetration %.3e m\n",
                sf.steps, sf.rhs_evaluations, sf.events, sf.max_penetration);
    std::printf("MuJoCo: %ld steps at 1 ms; %d contacts at the end\n", q1.steps, q1.contacts);
    std::printf("\nwall time and real-time factor (range over %d repeats):\n", repeats);
    print_range("plume wall", plume_wall, "s");
    print_range("plume RTF", plume_rtf, "x");
    print_range("MuJoCo 1 ms wall (mj_step)", mj_wall, "s");
    print_range("MuJoCo 1 ms RTF", mj_rtf, "x");
    print_range("plume / MuJoCo 1 ms wall", ratio, "");
    print_range("plume time-stepping 1 ms wall", ts_wall, "s");
    print_range("plume time-stepping 1 ms RTF", ts_rtf, "x");
    print_range("plume time-stepping / MuJoCo 1 ms", ts_ratio, "");
    print_range("plume symplectic Euler 1 ms wall", fast_wall, "s");
    print_range("plume symplectic Euler 1 ms RTF", fast_rtf, "x");
    print_range("plume symplectic Euler / MuJoCo 1 ms", fast_ratio, "");
    if (fine) {
      print_range("MuJoCo 0.1 ms wall (mj_step)", fine_wall, "s");
      print_range("MuJoCo 0.1 ms RTF", fine_rtf, "x");
      print_range("plume / MuJoCo 0.1 ms wall", fine_ratio, "");
    }

    std::printf("\nmax penetration: plume %.3e m, MuJoCo 1 ms %.3e m (at t = %.3f s)", s.max_penetration,
                q1.max_penetration, q1.max_penetration_time);
    if (fine) std::printf(", MuJoCo 0.1 ms %.3e m (at t = %.4f s)", q01.max_penetration, q01.max_penetration_time);
    std::printf("\npenetration at the end: MuJoCo 1 ms %.3e m", q1.final_penetration);
    if (fine) std::printf(", MuJoCo 0.1 ms %.3e m", q01.final_penetration);
    std::printf("\n\nfinal state at t = %g s (world frame, foot link origins = sphere centres):\n", duration);
    const double plume_z = p.q(scenario.world.model().joint(scenario.world.models()[0].first_body).q_index + 2);
    std::printf("  trunk z: plume %.6f m, MuJoCo 1 ms %.6f m (diff %+.3e)", plume_z, q1.trunk_z, q1.trunk_z - plume_z);
    if (fine) std::printf(", MuJoCo 0.1 ms %.6f m (diff %+.3e)", q01.trunk_z, q01.trunk_z - plume_z);
    const auto trunk_z = [&](const PlumeRun& run) {
      return run.q(scenario.world.model().joint(scenario.world.models()[0].first_body).q_index + 2);
    };
    std::printf("\n  trunk z: plume time-stepping %.6f m (diff %+.3e), symplectic Euler %.6f m (diff %+.3e)",
                trunk_z(pts), trunk_z(pts) - plume_z, trunk_z(pfast), trunk_z(pfast) - plume_z);
    std::printf("\n");
    double worst = 0.0, worst_fine = 0.0;
    for (std::size_t f = 0; f < foot_links.size(); ++f) {
      const Vec3& a = p.feet[f];
      const Vec3& b = q1.feet[f];
      std::printf("  %-8s plume (%+.5f %+.5f %+.5f)  MuJoCo (%+.5f %+.5f %+.5f)  |diff| %.3e m", foot_links[f].c_str(),
                  a.x(), a.y(), a.z(), b.x(), b.y(), b.z(), (b - a).norm());
      worst = std::max(worst, (b - a).norm());
      if (fine) {
        std::printf(", 0.1 ms |diff| %.3e m", (q01.feet[f] - a).norm());
        worst_fine = std::max(worst_fine, (q01.feet[f] - a).norm());
      }
      std::printf("\n");
    }
    std::printf("  largest foot position difference: %.3e m (MuJoCo 1 ms)", worst);
    if (fine) std::printf(", %.3e m (MuJoCo 0.1 ms)", worst_fine);
    std::printf("\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peer_simulation: %s\n", e.what());
    return 1;
  }
  return 0;
}
