// run_batch (plume/sim/batch.hpp) against plain serial Simulator runs:
// every sample, event, contact sample, statistic and final state compared bit
// for bit, with jobs = 1, 2 and 3 (more threads than this machine's cores,
// so that the threads take the runs in varying orders). The overrides
// against the same change written into the world file's text (an
// independent path: the world-file reader), and failures kept per run.
// Short runs (each test well under 3 s in Release).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "plume/error.hpp"
#include "plume/sim/batch.hpp"
#include "plume/sim/world_file.hpp"
#include "test_utils.hpp"

using namespace plume;

namespace {

std::string world_path(const std::string& file) { return test::model_path("worlds/" + file); }

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The world file's text with `from` replaced by `to` (exactly once), read as if from models/worlds/.
Scenario edited_world(const std::string& file, const std::string& from, const std::string& to) {
  std::string text = read_text(world_path(file));
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << file << " has no '" << from << "'";
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << file << " has '" << from << "' twice";
  text.replace(at, from.size(), to);
  return load_world_string(text, file + " (edited)", test::model_path("worlds"));
}

Scenario shortened(const std::string& file, double duration) {
  Scenario s = load_world(world_path(file));
  s.options.duration = duration;
  return s;
}

// What a plain Simulator run gives: the reference.
BatchResult serial_run(const Scenario& s) {
  BatchResult out;
  Simulator sim(s.world, s.options);
  if (s.controller) sim.set_controller(s.controller->function(s.world.model()), s.controller_period);
  out.started = true;
  static_cast<SimulationResult&>(out) = sim.run(&out.recording);
  out.q = sim.q();
  out.v = sim.v();
  return out;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool same_bits(const VectorX& a, const VectorX& b) {
  if (a.size() != b.size()) return false;
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    if (!same_bits(a(i), b(i))) return false;
  }
  return true;
}

// "" when a and b are bit-identical (wall time aside), else the first difference.
std::string difference(const BatchResult& a, const BatchResult& b) {
  if (a.status != b.status || a.message != b.message || a.started != b.started) {
    return std::string("status ") + to_string(a.status) + " '" + a.message + "' vs " + to_string(b.status) + " '" +
           b.message + "'";
  }
  if (!same_bits(a.time, b.time)) return "end time";
  if (!same_bits(a.q, b.q) || !same_bits(a.v, b.v)) return "final state";
  const SimulationStatistics &s = a.statistics, &t = b.statistics;
  if (s.steps != t.steps || s.rhs_evaluations != t.rhs_evaluations || s.events != t.events ||
      s.impacts != t.impacts || s.lcp_solves != t.lcp_solves || s.projections != t.projections ||
      s.fallbacks != t.fallbacks || !same_bits(s.fallback_time, t.fallback_time) ||
      !same_bits(s.max_penetration, t.max_penetration) || !same_bits(s.max_limit_violation, t.max_limit_violation) ||
      !same_bits(s.energy_start, t.energy_start) ||
      !same_bits(s.energy_end, t.energy_end)) {
    return "statistics";
  }
  const MemoryRecorder &r = a.recording, &u = b.recording;
  if (r.times.size() != u.times.size()) {
    return "samples: " + std::to_string(r.times.size()) + " vs " + std::to_string(u.times.size());
  }
  for (std::size_t i = 0; i < r.times.size(); ++i) {
    if (!same_bits(r.times[i], u.times[i]) || !same_bits(r.energies[i], u.energies[i]) || !same_bits(r.q[i], u.q[i]) ||
        !same_bits(r.v[i], u.v[i])) {
      return "sample " + std::to_string(i);
    }
  }
  if (r.events.size() != u.events.size()) return "event count";
  for (std::size_t i = 0; i < r.events.size(); ++i) {
    const SimulationEvent &e = r.events[i], &f = u.events[i];
    if (!same_bits(e.time, f.time) || e.kind != f.kind || e.contact != f.contact || e.body_a != f.body_a ||
        e.body_b != f.body_b || !same_bits(e.pre_normal_velocity, f.pre_normal_velocity) ||
        !same_bits(e.post_normal_velocity, f.post_normal_velocity) || !same_bits(e.impulse, f.impulse)) {
      return "event " + std::to_string(i);
    }
  }
  if (r.contacts.size() != u.contacts.size()) return "contact sample count";
  for (std::size_t i = 0; i < r.contacts.size(); ++i) {
    const ContactSample &c = r.contacts[i], &d = u.contacts[i];
    if (!same_bits(c.time, d.time) || c.contact != d.contact || !same_bits(c.gap, d.gap) ||
        !same_bits(c.normal_velocity, d.normal_velocity) || !same_bits(c.normal_force, d.normal_force) ||
        !same_bits(c.friction_force, d.friction_force)) {
      return "contact sample " + std::to_string(i);
    }
  }
  return "";
}

// A few short worlds covering the three schemes, a controller, impacts, slip and stick.
std::vector<Scenario> short_worlds() {
  std::vector<Scenario> s;
  s.push_back(shortened("quadruped_standing.xml", 0.15));  // PD at 1 kHz, landing at 0.064 s, slip
  s.push_back(shortened("bouncing_ball.xml", 1.5));        // impacts
  s.push_back(shortened("falling_rod.xml", 0.6));          // planar root, impact and sliding
  s.push_back(shortened("box_sliding_to_rest.xml", 0.4));  // slides, sticks
  Scenario compliant = shortened("cube_on_cube.xml", 0.2);
  compliant.options.scheme = Scheme::Compliant;
  s.push_back(compliant);
  Scenario stepping = shortened("stack_2.xml", 0.2);
  stepping.options.scheme = Scheme::TimeStepping;
  s.push_back(stepping);
  return s;
}

}  // namespace

TEST(Batch, ResultsAreBitIdenticalToSerialRunsWhateverTheJobs) {
  const std::vector<Scenario> worlds = short_worlds();
  std::vector<BatchResult> serial;
  for (const Scenario& s : worlds) serial.push_back(serial_run(s));
  for (const BatchResult& r : serial) {
    ASSERT_EQ(r.status, SimulationStatus::Finished) << r.message;
    ASSERT_GT(r.recording.times.size(), 10u);
  }
  EXPECT_GT(serial[0].recording.events.size(), 4u);  // the quadruped's feet landed
  EXPECT_GT(serial[1].statistics.impacts, 1);
  for (const int jobs : {1, 2, 3}) {
    BatchOptions options;
    options.jobs = jobs;
    const std::vector<BatchResult> batch = run_batch(worlds, options);
    ASSERT_EQ(batch.size(), worlds.size());
    for (std::size_t i = 0; i < worlds.size(); ++i) {
      EXPECT_EQ(difference(batch[i], serial[i]), "") << "jobs = " << jobs << ", " << worlds[i].source;
    }
  }
}

TEST(Batch, SixteenRunsOfOneWorldOnTwoThreadsEqualTheSerialRun) {
  // The benchmark's setting: one scenario run many times at once; each copy
  // owns its Data, detector and controller, so all 16 equal the serial run.
  const Scenario demo = shortened("quadruped_standing.xml", 0.08);
  const BatchResult reference = serial_run(demo);
  ASSERT_EQ(reference.status, SimulationStatus::Finished) << reference.message;
  BatchOptions options;
  options.jobs = 2;
  const std::vector<BatchResult> batch = run_batch(demo, std::vector<RunOverrides>(16), options);
  for (std::size_t i = 0; i < batch.size(); ++i) EXPECT_EQ(difference(batch[i], reference), "") << "run " << i;
}

TEST(Batch, OverridesEqualTheSameChangeWrittenInTheWorldFile) {
  // Each override against the world file edited to say the same: the
  // world-file reader is the independent path to the same scenario.
  const Scenario ball = shortened("bouncing_ball.xml", 1.2);
  const Scenario quad = shortened("quadruped_standing.xml", 0.12);

  std::vector<RunOverrides> ball_runs(4);
  ball_runs[0].contact = ball.world.default_contact();
  ball_runs[0].contact->restitution = 0.5;
  ball_runs[1].states.push_back({"ball", VectorX((VectorX(7) << 0, 0, 0.7, 0, 0, 0, 1).finished()), std::nullopt});
  ball_runs[2].v0 = VectorX((VectorX(6) << 0, 0, 0, 0.3, 0, 1.0).finished());
  SimulationOptions opt = ball.options;
  opt.output_rate = 50.0;
  opt.duration = 0.9;
  ball_runs[3].options = opt;
  std::vector<Scenario> ball_edited;
  ball_edited.push_back(edited_world("bouncing_ball.xml", "restitution=\"0.8\"", "restitution=\"0.5\""));
  ball_edited.push_back(edited_world("bouncing_ball.xml", "q=\"0 0 1.1", "q=\"0 0 0.7"));
  ball_edited.push_back(edited_world("bouncing_ball.xml", "v=\"0 0 0  0 0 0\"", "v=\"0 0 0  0.3 0 1\""));
  ball_edited.push_back(
      edited_world("bouncing_ball.xml", "duration=\"5\" output_rate=\"200\"", "duration=\"0.9\" output_rate=\"50\""));
  for (std::size_t i = 0; i < 3; ++i) ball_edited[i].options.duration = 1.2;

  std::vector<RunOverrides> quad_runs(2);
  quad_runs[0].kp = VectorX::Constant(quad.world.model().nv(), 600.0);
  quad_runs[0].kp->head(6).setZero();
  quad_runs[1].q_target = quad.controller->q_target;
  (*quad_runs[1].q_target)(8) = 0.9;  // LF hip flexion 0.8 -> 0.9 rad
  std::vector<Scenario> quad_edited;
  quad_edited.push_back(edited_world("quadruped_standing.xml", "kp=\"800\"", "kp=\"600\""));
  quad_edited.push_back(edited_world("quadruped_standing.xml", "target=\"0 0.8 -1.6", "target=\"0 0.9 -1.6"));
  for (Scenario& s : quad_edited) s.options.duration = 0.12;

  BatchOptions two;
  two.jobs = 2;
  const std::vector<BatchResult> ball_batch = run_batch(ball, ball_runs, two);
  const std::vector<BatchResult> quad_batch = run_batch(quad, quad_runs, two);
  const BatchResult ball_plain = serial_run(ball), quad_plain = serial_run(quad);
  for (std::size_t i = 0; i < ball_runs.size(); ++i) {
    const BatchResult expected = serial_run(ball_edited[i]);
    ASSERT_EQ(expected.status, SimulationStatus::Finished) << expected.message;
    EXPECT_EQ(difference(ball_batch[i], expected), "") << "ball override " << i;
    EXPECT_NE(difference(ball_batch[i], ball_plain), "") << "ball override " << i << " changed nothing";
  }
  for (std::size_t i = 0; i < quad_runs.size(); ++i) {
    const BatchResult expected = serial_run(quad_edited[i]);
    ASSERT_EQ(expected.status, SimulationStatus::Finished) << expected.message;
    EXPECT_EQ(difference(quad_batch[i], expected), "") << "quadruped override " << i;
    EXPECT_NE(difference(quad_batch[i], quad_plain), "") << "quadruped override " << i << " changed nothing";
  }
  // The scenario itself is untouched.
  EXPECT_EQ(ball.world.default_contact().restitution, 0.8);
  EXPECT_EQ(quad.controller->kp(6), 800.0);
}

TEST(Batch, AFailingRunKeepsItsErrorAndWhatItComputedAndTheOthersRun) {
  const Scenario ball = shortened("bouncing_ball.xml", 0.8);
  std::vector<RunOverrides> runs(5);
  runs[1].states.push_back({"ball", VectorX::Zero(3), std::nullopt});               // wrong size
  runs[2].q0 = VectorX((VectorX(7) << 0, 0, -0.5, 0, 0, 0, 1).finished());          // sunk 0.6 m into the ground
  runs[3].kp = VectorX::Ones(6);                                                    // no controller to take it
  SimulationOptions few_steps = ball.options;
  few_steps.max_steps = 40;
  runs[4].options = few_steps;                                                      // stops early
  BatchOptions two;
  two.jobs = 2;
  const std::vector<BatchResult> r = run_batch(ball, runs, two);
  ASSERT_EQ(r.size(), 5u);
  const BatchResult reference = serial_run(ball);
  EXPECT_EQ(difference(r[0], reference), "");

  for (std::size_t i : {1u, 2u, 3u}) {
    EXPECT_FALSE(r[i].started) << i;
    EXPECT_EQ(r[i].status, SimulationStatus::Failed) << i;
    EXPECT_EQ(r[i].message.rfind("run " + std::to_string(i) + " (", 0), 0u) << r[i].message;
    EXPECT_TRUE(r[i].recording.times.empty());
    EXPECT_EQ(r[i].q.size(), 0);
  }
  EXPECT_NE(r[1].message.find("state override of model 'ball': q has 3 entries, expected 7"), std::string::npos)
      << r[1].message;
  EXPECT_NE(r[2].message.find("could not start"), std::string::npos) << r[2].message;
  EXPECT_NE(r[3].message.find("no PD controller"), std::string::npos) << r[3].message;

  EXPECT_TRUE(r[4].started);
  EXPECT_EQ(r[4].status, SimulationStatus::StepLimit) << r[4].message;
  EXPECT_LT(r[4].time, 0.8);
  ASSERT_FALSE(r[4].recording.times.empty());
  EXPECT_EQ(r[4].q.size(), 7);
  // What it computed equals the serial run with the same options.
  Scenario limited = ball;
  limited.options = few_steps;
  EXPECT_EQ(difference(r[4], serial_run(limited)), "");
}

TEST(Batch, OptionsAndEdgeCases) {
  const Scenario ball = shortened("bouncing_ball.xml", 0.3);
  BatchOptions bad;
  bad.jobs = -1;
  EXPECT_THROW(run_batch(std::vector<Scenario>{ball}, bad), ArgumentError);
  EXPECT_TRUE(run_batch(std::vector<Scenario>{}).empty());
  BatchOptions quiet;
  quiet.jobs = 8;  // more jobs than runs
  quiet.record = false;
  const std::vector<BatchResult> r = run_batch(std::vector<Scenario>{ball, ball}, quiet);
  ASSERT_EQ(r.size(), 2u);
  const BatchResult reference = serial_run(ball);
  for (const BatchResult& x : r) {
    EXPECT_EQ(x.status, SimulationStatus::Finished);
    EXPECT_TRUE(x.recording.times.empty());
    EXPECT_TRUE(same_bits(x.q, reference.q) && same_bits(x.v, reference.v));
  }
  // An unknown model in a state override names the world's models.
  RunOverrides unknown;
  unknown.states.push_back({"bal", VectorX::Zero(7), std::nullopt});
  try {
    apply_overrides(ball, unknown);
    ADD_FAILURE() << "no error";
  } catch (const WorldError& e) {
    EXPECT_NE(std::string(e.what()).find("'bal', which the world does not have (its models: 'ball')"),
              std::string::npos)
        << e.what();
  }
}
