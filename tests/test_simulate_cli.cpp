// `plume simulate`, end to end through the built program: the exact CSV
// headers, the summary keys, exit statuses, atomic outputs (no temporary file
// left, stale outputs replaced), partial outputs of a failed or interrupted
// run, plots, and the shipped worlds doing what their comments say.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kModels = PLUME_MODELS_DIR;

struct CliRun {
  int status = -1;
  std::string out, err;
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

// A scratch directory for one test, removed at its end.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("plume_simulate_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

// Runs `prefix plume args` through the shell; stdout and stderr separately.
CliRun run(const std::string& args, const TempDir& tmp, const std::string& prefix = "") {
  const fs::path out = tmp.path / "stdout.txt", err = tmp.path / "stderr.txt";
  const std::string cmd = prefix + std::string(PLUME_CLI) + " " + args + " >" + quote(out.string()) + " 2>" +
                          quote(err.string()) + " </dev/null";
  const int raw = std::system(cmd.c_str());
  CliRun r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_text(out);
  r.err = read_text(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

std::vector<std::string> split(const std::string& line, char sep = ',') {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, sep)) out.push_back(cell);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

struct Csv {
  std::string header;
  std::vector<std::vector<double>> rows;  // numeric columns only (others NaN)
  std::vector<std::vector<std::string>> cells;
};

Csv read_csv(const fs::path& p) {
  Csv c;
  std::ifstream in(p);
  std::getline(in, c.header);
  std::string line;
  while (std::getline(in, line)) {
    c.cells.push_back(split(line));
    std::vector<double> row;
    for (const std::string& s : c.cells.back()) {
      char* end = nullptr;
      const double x = std::strtod(s.c_str(), &end);
      row.push_back(end == s.c_str() + s.size() && !s.empty() ? x : std::nan(""));
    }
    c.rows.push_back(row);
  }
  return c;
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

std::string trajectory_header(int nq, int nv) {
  std::string h = "time";
  for (int i = 0; i < nq; ++i) h += ",q_" + std::to_string(i);
  for (int i = 0; i < nv; ++i) h += ",v_" + std::to_string(i);
  return h;
}

const std::set<std::string> kCsvAndSummary = {"trajectory.csv", "events.csv",   "contacts.csv", "energy.csv",
                                              "contact_points.csv", "summary.json", "replay.html"};

// A ball dropped onto the ground: a short run with impacts.
std::string drop_world(const std::string& simulate_attributes) {
  return "<world>\n"
         "  <model name=\"ball\" urdf=\"" + kModels + "/ball.urdf\" root=\"free\">\n"
         "    <state q=\"0 0 0.3 0 0 0 1\"/>\n"
         "  </model>\n"
         "  <ground/>\n"
         "  <contact mu=\"0.5\" restitution=\"0.5\"/>\n"
         "  <simulate " + simulate_attributes + "/>\n"
         "</world>\n";
}

bool matplotlib_available() {
  for (const char* py : {"python3", "/usr/bin/python3"}) {
    const std::string cmd = std::string(py) + " -c 'import matplotlib' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return true;
  }
  return false;
}

}  // namespace

TEST(SimulateCli, WritesEveryOutputWithTheExactHeaders) {
  TempDir tmp;
  // h = 0.2 m, e = 0.5: impacts at 0.202 s and 0.404 s (the bounces accumulate at 0.606 s).
  const std::string world = tmp.write("drop.xml", drop_world("duration=\"0.45\" output_rate=\"100\""));
  const fs::path out = tmp.path / "out";
  const CliRun r = run("simulate " + world + " --out " + out.string() + " --no-plots", tmp);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_EQ(listing(out), kCsvAndSummary);  // and no temporary file left

  const Csv traj = read_csv(out / "trajectory.csv");
  EXPECT_EQ(traj.header, trajectory_header(7, 6));
  ASSERT_GE(traj.rows.size(), 46u + 2u);  // 100 Hz over 0.45 s, plus the two impacts
  double last = -1.0;
  std::vector<double> times;
  for (const auto& row : traj.rows) {
    ASSERT_EQ(row.size(), 14u);
    for (double x : row) EXPECT_TRUE(std::isfinite(x));
    EXPECT_GE(row[0], last);
    last = row[0];
    times.push_back(row[0]);
  }
  EXPECT_EQ(traj.rows.front()[0], 0.0);
  EXPECT_NEAR(traj.rows.front()[3], 0.3, 1e-15);  // z of the initial state
  EXPECT_NEAR(last, 0.45, 1e-12);

  const Csv events = read_csv(out / "events.csv");
  EXPECT_EQ(events.header, "time,kind,contact,body_a,body_b,pre_normal_velocity,post_normal_velocity,impulse");
  ASSERT_GE(events.rows.size(), 1u);
  const std::set<std::string> kinds = {"impact", "contact_gain", "contact_loss", "stick", "slip", "zeno_rest"};
  int impacts = 0;
  for (const auto& cells : events.cells) {
    ASSERT_EQ(cells.size(), 8u);
    EXPECT_TRUE(kinds.count(cells[1])) << cells[1];
    impacts += cells[1] == "impact";
  }
  EXPECT_EQ(impacts, 2);
  // The first impact: h = 0.2 m, t1 = sqrt(2h/g); every event time is also a trajectory row.
  EXPECT_NEAR(events.rows[0][0], std::sqrt(2 * 0.2 / 9.81), 1e-6);
  for (const auto& row : events.rows) {
    bool found = false;
    for (double t : times) found = found || std::abs(t - row[0]) <= 1e-12;
    EXPECT_TRUE(found) << "no trajectory row at event time " << row[0];
  }

  EXPECT_EQ(read_csv(out / "contacts.csv").header, "time,contact,gap,normal_velocity,normal_force,friction_force");
  const Csv energy = read_csv(out / "energy.csv");
  EXPECT_EQ(energy.header, "time,energy");
  EXPECT_EQ(energy.rows.size(), traj.rows.size());

  const json s = json::parse(read_text(out / "summary.json"));
  for (const char* key : {"status", "finished", "message", "time", "duration", "steps", "rhs_evaluations", "events",
                          "impacts", "lcp_solves", "max_penetration", "energy_start", "energy_end", "wall_time",
                          "real_time_factor", "scheme", "integrator", "time_stepping_rule", "nq", "nv", "models"}) {
    EXPECT_TRUE(s.contains(key)) << key;
  }
  EXPECT_EQ(s["status"], "finished");
  EXPECT_EQ(s["finished"], true);
  EXPECT_NEAR(s["time"].get<double>(), 0.45, 1e-12);
  EXPECT_EQ(s["duration"], 0.45);
  EXPECT_EQ(s["nq"], 7);
  EXPECT_EQ(s["nv"], 6);
  EXPECT_EQ(s["scheme"], "event-driven");
  EXPECT_EQ(s["integrator"], "dopri5");
  EXPECT_EQ(s["time_stepping_rule"], "trapezoid");
  EXPECT_GE(s["impacts"].get<long>(), 1);
  EXPECT_GE(s["events"].get<long>(), 1);
  EXPECT_GT(s["steps"].get<long>(), 0);
  EXPECT_GT(s["wall_time"].get<double>(), 0.0);
  EXPECT_NEAR(s["real_time_factor"].get<double>(), 0.45 / s["wall_time"].get<double>(), 1e-9);
  EXPECT_LE(s["energy_end"].get<double>(), s["energy_start"].get<double>() + 1e-9);
  EXPECT_EQ(s["samples"].get<std::size_t>(), traj.rows.size());
  EXPECT_EQ(s["event_rows"].get<std::size_t>(), events.rows.size());
  ASSERT_EQ(s["models"].size(), 1u);
  EXPECT_EQ(s["models"][0]["name"], "ball");

  EXPECT_NE(r.out.find("finished"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("real-time factor"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max penetration"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(out.string()), std::string::npos) << r.out;
}

TEST(SimulateCli, DurationOverridesTheWorldFile) {
  TempDir tmp;
  const std::string world = tmp.write("drop.xml", drop_world("duration=\"10\" output_rate=\"50\""));
  const fs::path out = tmp.path / "out";
  const CliRun r = run("simulate " + world + " --out " + out.string() + " --duration 0.1 --no-plots", tmp);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json s = json::parse(read_text(out / "summary.json"));
  EXPECT_EQ(s["duration"], 0.1);
  EXPECT_NEAR(s["time"].get<double>(), 0.1, 1e-12);
  const Csv traj = read_csv(out / "trajectory.csv");
  EXPECT_NEAR(traj.rows.back()[0], 0.1, 1e-12);
  EXPECT_EQ(traj.rows.size(), 6u);  // 0, 0.02, …, 0.1: no event before the impact at 0.2 s

  // A second run into the same directory replaces every output of the first.
  std::ofstream(out / "energy.png") << "stale";
  const CliRun r2 = run("simulate " + world + " --out " + out.string() + " --duration 0.05 --no-plots", tmp);
  ASSERT_EQ(r2.status, 0) << r2.out << r2.err;
  EXPECT_EQ(listing(out), kCsvAndSummary);
  EXPECT_NEAR(read_csv(out / "trajectory.csv").rows.back()[0], 0.05, 1e-12);
}

TEST(SimulateCli, BadInputExitsWithOneLineAndWritesNothing) {
  TempDir tmp;
  const fs::path out = tmp.path / "out";
  const CliRun missing = run("simulate " + (tmp.path / "nope.xml").string() + " --out " + out.string(), tmp);
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("nope.xml"), std::string::npos) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  EXPECT_FALSE(fs::exists(out));

  const std::string bad = tmp.write("bad.xml", "<world>\n<model name=\"b\" urdf=\"" + kModels +
                                                   "/ball.urdf\" root=\"free\">\n<state q=\"0 0 1\"/></model></world>");
  const CliRun wrong = run("simulate " + bad + " --out " + out.string(), tmp);
  EXPECT_EQ(wrong.status, 1);
  EXPECT_NE(wrong.err.find(bad + ":3: <state>:"), std::string::npos) << wrong.err;
  EXPECT_NE(wrong.err.find("expected 7"), std::string::npos) << wrong.err;
  EXPECT_EQ(std::count(wrong.err.begin(), wrong.err.end(), '\n'), 1) << wrong.err;
  EXPECT_FALSE(fs::exists(out));

  const std::string world = tmp.write("drop.xml", drop_world("duration=\"0.1\""));
  for (const char* d : {"0", "-1", "nan", "inf", "abc"}) {
    const CliRun r = run("simulate " + world + " --out " + out.string() + " --duration " + d, tmp);
    EXPECT_NE(r.status, 0) << d;
    EXPECT_NE(r.err.find("duration"), std::string::npos) << d << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(out));

  const std::string file = tmp.write("a_file", "x");
  const CliRun not_dir = run("simulate " + world + " --out " + file, tmp);
  EXPECT_EQ(not_dir.status, 1);
  EXPECT_NE(not_dir.err.find("not a directory"), std::string::npos) << not_dir.err;
}

TEST(SimulateCli, AFailedRunKeepsItsPartialOutputs) {
  TempDir tmp;
  // Too few integrator steps for the requested time: the run stops early.
  const std::string world = tmp.write("drop.xml", drop_world("duration=\"2\" output_rate=\"100\" max_steps=\"25\""));
  const fs::path out = tmp.path / "out";
  const CliRun r = run("simulate " + world + " --out " + out.string() + " --no-plots", tmp);
  EXPECT_EQ(r.status, 3) << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("step_limit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("t = "), std::string::npos) << r.err;
  EXPECT_EQ(listing(out), kCsvAndSummary);
  const json s = json::parse(read_text(out / "summary.json"));
  EXPECT_EQ(s["status"], "step_limit");
  EXPECT_EQ(s["finished"], false);
  EXPECT_FALSE(s["message"].get<std::string>().empty());
  const double t = s["time"].get<double>();
  EXPECT_GT(t, 0.0);
  EXPECT_LT(t, 2.0);
  const Csv traj = read_csv(out / "trajectory.csv");
  EXPECT_EQ(traj.header, trajectory_header(7, 6));
  ASSERT_GE(traj.rows.size(), 2u);
  EXPECT_LE(traj.rows.back()[0], t + 1e-12);
  EXPECT_EQ(s["samples"].get<std::size_t>(), traj.rows.size());
}

TEST(SimulateCli, AnInterruptedRunSaysSoAndLeavesWholeFiles) {
  TempDir tmp;
  // A double pendulum swinging for "ever": stopped by SIGINT after a second.
  const std::string world = tmp.write(
      "swing.xml", "<world><model name=\"p\" collision=\"none\" urdf=\"" + kModels +
                       "/double_pendulum.urdf\"><state q=\"1 -0.5\"/></model>"
                       "<simulate duration=\"1e6\" output_rate=\"100\"/></world>");
  const fs::path out = tmp.path / "out";
  const CliRun r = run("simulate " + world + " --out " + out.string() + " --no-plots", tmp,
                    "timeout --preserve-status -s INT 1.5 ");
  EXPECT_EQ(r.status, 128 + SIGINT) << r.out << r.err;
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
  EXPECT_EQ(listing(out), kCsvAndSummary);
  const json s = json::parse(read_text(out / "summary.json"));
  EXPECT_EQ(s["status"], "interrupted");
  EXPECT_EQ(s["finished"], false);
  const Csv traj = read_csv(out / "trajectory.csv");
  EXPECT_EQ(traj.header, trajectory_header(2, 2));
  ASSERT_GE(traj.rows.size(), 2u);
  for (const auto& row : traj.rows) ASSERT_EQ(row.size(), 5u);  // no half-written last line
  EXPECT_EQ(s["samples"].get<std::size_t>(), traj.rows.size());
}

TEST(SimulateCli, Plots) {
  TempDir tmp;
  const std::string world = tmp.write("drop.xml", drop_world("duration=\"0.5\" output_rate=\"100\""));
  // Plotting unavailable: one line says so, the run still succeeds.
  const fs::path out1 = tmp.path / "no_python";
  const CliRun none = run("simulate " + world + " --out " + out1.string(), tmp, "PLUME_PYTHON=/nonexistent/python3 ");
  ASSERT_EQ(none.status, 0) << none.out << none.err;
  EXPECT_EQ(listing(out1), kCsvAndSummary);
  EXPECT_NE(none.out.find("plots: none"), std::string::npos) << none.out;
  const json s1 = json::parse(read_text(out1 / "summary.json"));
  EXPECT_TRUE(s1["plots"].empty());
  EXPECT_TRUE(s1.contains("plots_message"));

  ASSERT_TRUE(matplotlib_available()) << "python3-matplotlib is not installed (README's test command installs it)";
  const fs::path out2 = tmp.path / "plots";
  const CliRun r = run("simulate " + world + " --out " + out2.string(), tmp);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::set<std::string> expected = kCsvAndSummary;
  // A free ball, no joint and no controller: no joint plots (their curves are read back in tests/plots).
  const std::vector<std::string> pngs = {"base.png", "contact_forces.png", "separation_velocities.png", "energy.png"};
  for (const std::string& png : pngs) {
    expected.insert(png);
    const std::string bytes = read_text(out2 / png);
    ASSERT_GT(bytes.size(), 1000u) << png;
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << png;
    EXPECT_NE(r.out.find((out2 / png).string()), std::string::npos) << r.out;
  }
  EXPECT_EQ(listing(out2), expected);
  EXPECT_EQ(json::parse(read_text(out2 / "summary.json"))["plots"], json(pngs));
}

// controller.csv: the torques the PD controller holds and their work. With no
// contact and no damping the work is the change of mechanical energy (an
// independent record: energy.csv, from the simulated state); with torque
// limits on, the held torques are the clamped ones the simulator applies.
TEST(SimulateCli, ControllerWorkIsTheEnergyGained) {
  TempDir tmp;
  for (const bool limited : {false, true}) {
    const std::string world = tmp.write(
        "pd.xml", "<world><model name=\"p\" collision=\"none\" urdf=\"" + kModels +
                      "/double_pendulum.urdf\"><state q=\"1 -0.5\" v=\"0.5 0\"/></model>"
                      "<simulate duration=\"1\" output_rate=\"100\"/>"
                      "<controller type=\"pd\" model=\"p\" rate=\"" + std::string(limited ? "1000" : "200") +
                      "\" kp=\"" + (limited ? "3000" : "30") + "\" kd=\"" + (limited ? "30" : "1") + "\" target=\"0.3 0.2\" torque_limits=\"" + (limited ? "true" : "false") + "\"/></world>");
    const fs::path out = tmp.path / (limited ? "limited" : "free");
    const CliRun r = run("simulate " + world + " --out " + out.string() + " --no-plots --no-replay", tmp);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("controller.csv"), std::string::npos) << r.out;
    const json s = json::parse(read_text(out / "summary.json"));
    EXPECT_EQ(s["files"]["controller"], "controller.csv");
    EXPECT_EQ(s["controller"]["kp"], json::array({limited ? 3000.0 : 30.0, limited ? 3000.0 : 30.0}));
    EXPECT_EQ(s["controller"]["target"], json::array({0.3, 0.2}));
    EXPECT_EQ(s["controller"]["torque_limits"], limited);
    const Csv ctl = read_csv(out / "controller.csv");
    EXPECT_EQ(ctl.header, "time,work,tau_0,tau_1");
    const Csv energy = read_csv(out / "energy.csv");
    const Csv traj = read_csv(out / "trajectory.csv");
    ASSERT_EQ(ctl.rows.size(), energy.rows.size());
    ASSERT_GE(ctl.rows.size(), 101u);
    // The first sample: τ = kp (target − q) − kd v at the initial state, clamped to the effort (1000 N·m).
    const double kp = limited ? 3000.0 : 30.0;
    const double tau0 = kp * (0.3 - 1.0) - (limited ? 30.0 : 1.0) * 0.5, tau1 = kp * (0.2 + 0.5);
    EXPECT_NEAR(ctl.rows[0][2], limited ? -1000.0 : tau0, 1e-12);
    EXPECT_NEAR(ctl.rows[0][3], limited ? 1000.0 : tau1, 1e-12);
    double scale = 0.0;
    int clamped = 0;
    for (std::size_t k = 0; k < ctl.rows.size(); ++k) {
      EXPECT_EQ(ctl.rows[k][0], energy.rows[k][0]);
      EXPECT_EQ(ctl.rows[k][0], traj.rows[k][0]);
      const double gained = energy.rows[k][1] - energy.rows[0][1];
      scale = std::max(scale, std::abs(gained));
      // The integrator's tolerance: 1e-6 J, relative 1e-8 of the largest energy change so far.
      EXPECT_NEAR(ctl.rows[k][1], gained, 1e-6 + 1e-8 * scale) << "t = " << ctl.rows[k][0];
      for (int i : {2, 3}) {
        EXPECT_LE(std::abs(ctl.rows[k][i]), 1000.0 + 1e-9);
        clamped += std::abs(ctl.rows[k][i]) == 1000.0;
      }
    }
    EXPECT_GT(scale, 1.0);                                 // the controller did real work
    EXPECT_TRUE(read_csv(out / "events.csv").rows.empty());  // no joint-limit impact took energy away
    if (limited) {
      EXPECT_GT(clamped, 0);
    }
  }
}

// contact_points.csv: a ball launched sliding on the ground (v0 = 2 m/s, no
// spin, mu = 0.3) slides at v0 − (7/2) mu g t until it rolls at
// t = 2 v0 / (7 mu g), with friction mu m g; the point stays under the ball.
TEST(SimulateCli, ContactPointsFollowTheSlidingBall) {
  TempDir tmp;
  const std::string world = tmp.write(
      "slide.xml", "<world><model name=\"ball\" urdf=\"" + kModels + "/ball.urdf\" root=\"free\">"
                   "<state q=\"0 0 0.1 0 0 0 1\" v=\"0 0 0 2 0 0\"/></model><ground/>"
                   "<contact mu=\"0.3\" restitution=\"0\"/><simulate duration=\"0.4\" output_rate=\"100\"/></world>");
  const fs::path out = tmp.path / "out";
  const CliRun r = run("simulate " + world + " --out " + out.string() + " --no-plots --no-replay", tmp);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_FALSE(fs::exists(out / "controller.csv"));
  const Csv pts = read_csv(out / "contact_points.csv");
  EXPECT_EQ(pts.header,
            "time,contact,body_a,body_b,x,y,z,nx,ny,nz,normal_velocity,sliding_speed,normal_force,friction_force");
  const Csv contacts = read_csv(out / "contacts.csv");
  ASSERT_EQ(pts.rows.size(), contacts.rows.size());
  const Csv traj = read_csv(out / "trajectory.csv");
  const double g = 9.81, mu = 0.3, t_roll = 2 * 2.0 / (7 * mu * g);
  int sliding = 0, rolling = 0;
  for (std::size_t k = 0; k < pts.rows.size(); ++k) {
    const auto& p = pts.rows[k];
    const double t = p[0];
    EXPECT_EQ(t, contacts.rows[k][0]);
    EXPECT_EQ(pts.cells[k][1], contacts.cells[k][1]);
    EXPECT_EQ(pts.cells[k][2], "world");
    EXPECT_EQ(pts.cells[k][3], "ball/ball");
    EXPECT_EQ(p[12], contacts.rows[k][4]);  // normal force
    EXPECT_EQ(p[13], contacts.rows[k][5]);  // friction
    // Under the ball's centre (the trajectory's x, y), on the ground, normal up.
    const auto row = std::find_if(traj.rows.begin(), traj.rows.end(), [&](const auto& q) { return q[0] == t; });
    ASSERT_NE(row, traj.rows.end());
    EXPECT_NEAR(p[4], (*row)[1], 1e-9);
    EXPECT_NEAR(p[5], (*row)[2], 1e-9);
    EXPECT_NEAR(p[6], 0.0, 1e-9);
    EXPECT_NEAR(p[9], 1.0, 1e-12);
    if (t < t_roll - 1e-3) {
      EXPECT_NEAR(p[11], 2.0 - 3.5 * mu * g * t, 1e-6) << "t = " << t;
      EXPECT_NEAR(p[13], mu * 1.0 * g, 1e-6) << "t = " << t;
      ++sliding;
    } else if (t > t_roll + 1e-3) {
      EXPECT_LT(p[11], 1e-6) << "t = " << t;
      ++rolling;
    }
  }
  EXPECT_GE(sliding, 15);
  EXPECT_GE(rolling, 15);
}

// summary.json "coordinates" names every trajectory column; checked against
// each model's own joint table (`plume info --json`, loaded on its own) shifted
// by the model's place in the world, and against the initial state the world
// file gives each model.
TEST(SimulateCli, CoordinatesNameEveryTrajectoryColumn) {
  TempDir tmp;
  const std::string world = tmp.write(
      "two.xml", "<world>\n"
                 "  <model name=\"swing\" collision=\"none\" urdf=\"" + kModels + "/double_pendulum.urdf\">\n"
                 "    <state q=\"0.25 -0.5\"/>\n"
                 "  </model>\n"
                 "  <model name=\"ball\" urdf=\"" + kModels + "/ball.urdf\" root=\"free\">\n"
                 "    <state q=\"0.1 -0.2 0.3 0 0 0.6 0.8\"/>\n"
                 "  </model>\n"
                 "  <model name=\"rod\" urdf=\"" + kModels + "/rod.urdf\" root=\"planar\">\n"
                 "    <state q=\"0.5 2 0.3\"/>\n"
                 "  </model>\n"
                 "  <ground/>\n"
                 "  <simulate duration=\"0.01\" output_rate=\"100\"/>\n"
                 "</world>\n");
  const fs::path out = tmp.path / "out";
  const CliRun r = run("simulate " + world + " --out " + out.string() + " --no-plots", tmp);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json s = json::parse(read_text(out / "summary.json"));
  ASSERT_TRUE(s.contains("coordinates"));
  const json& coords = s["coordinates"];
  const Csv traj = read_csv(out / "trajectory.csv");
  // One entry per column, in the CSV's order; the headers themselves unchanged.
  const int nq = s["nq"], nv = s["nv"];
  EXPECT_EQ(traj.header, trajectory_header(nq, nv));
  std::vector<std::string> columns = split(traj.header);
  columns.erase(columns.begin());
  ASSERT_EQ(coords.size(), columns.size());
  std::vector<std::string> keys;
  for (const auto& item : coords.items()) keys.push_back(item.key());
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> sorted_columns = columns;
  std::sort(sorted_columns.begin(), sorted_columns.end());
  EXPECT_EQ(keys, sorted_columns);

  std::set<std::string> seen;
  const std::map<std::string, std::pair<std::string, std::string>> urdf = {
      {"swing", {"double_pendulum.urdf", "fixed"}}, {"ball", {"ball.urdf", "free"}}, {"rod", {"rod.urdf", "planar"}}};
  for (const json& m : s["models"]) {
    const std::string name = m["name"];
    const auto& [file, root] = urdf.at(name);
    const CliRun info = run("info " + kModels + "/" + file + " --root " + root + " --json", tmp);
    ASSERT_EQ(info.status, 0) << info.err;
    const json model = json::parse(info.out);
    const int q0 = m["q_index"], v0 = m["v_index"];
    for (const json& j : model["joints"]) {
      const int jq = j["q_index"], jv = j["v_index"], jnq = j["nq"], jnv = j["nv"];
      // plume info lists the same entries per joint, numbered within the model.
      ASSERT_EQ(j["coordinates"].size(), static_cast<std::size_t>(jnq + jnv)) << j["name"];
      for (int k = 0; k < jnq + jnv; ++k) {
        const bool is_q = k < jnq;
        const std::string local = (is_q ? "q_" : "v_") + std::to_string(is_q ? jq + k : jv + k - jnq);
        const std::string column = (is_q ? "q_" : "v_") + std::to_string(is_q ? q0 + jq + k : v0 + jv + k - jnq);
        ASSERT_TRUE(coords.contains(column)) << column;
        ASSERT_TRUE(j["coordinates"].contains(local)) << local;
        const json& c = coords[column];
        EXPECT_EQ(c["column"], column);
        EXPECT_EQ(c["model"], name) << column;
        EXPECT_EQ(c["joint"], j["name"]) << column;
        EXPECT_EQ(c["type"], j["type"]) << column;
        const json& own = j["coordinates"][local];
        EXPECT_EQ(own["column"], local);
        EXPECT_EQ(own["joint"], j["name"]);
        EXPECT_EQ(own["component"], c["component"]) << column;
        EXPECT_EQ(own["unit"], c["unit"]) << column;
        seen.insert(column);
      }
    }
  }
  EXPECT_EQ(seen.size(), columns.size());  // every column belongs to exactly one joint

  // The first row holds the world file's initial states under the names given.
  const auto first = [&](const std::string& model, const std::string& component) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const json& c = coords[columns[i]];
      if (c["model"] == model && c["component"] == component && columns[i][0] == 'q') return traj.rows[0][i + 1];
    }
    ADD_FAILURE() << model << " has no component " << component;
    return std::nan("");
  };
  EXPECT_EQ(first("ball", "x"), 0.1);
  EXPECT_EQ(first("ball", "y"), -0.2);
  EXPECT_EQ(first("ball", "z"), 0.3);
  EXPECT_EQ(first("ball", "qz"), 0.6);
  EXPECT_EQ(first("ball", "qw"), 0.8);
  EXPECT_EQ(first("rod", "x"), 0.5);
  EXPECT_EQ(first("rod", "y"), 2.0);
  EXPECT_EQ(first("rod", "theta"), 0.3);
  EXPECT_EQ(coords["q_0"]["joint"], "hinge_1");
  EXPECT_EQ(coords["q_0"]["component"], "angle");
  EXPECT_EQ(coords["q_0"]["unit"], "rad");
  EXPECT_EQ(traj.rows[0][1], 0.25);
  EXPECT_EQ(coords["q_1"]["joint"], "hinge_2");
  EXPECT_EQ(traj.rows[0][2], -0.5);
  EXPECT_EQ(coords["v_2"]["component"], "wx");  // the ball's [ω; v] in its body frame
  EXPECT_EQ(coords["v_5"]["component"], "vx");
  EXPECT_EQ(coords["v_5"]["unit"], "m/s");
}

// The data replay.html carries (the JSON in its plume-data script).
json replay_data(const fs::path& page) {
  const std::string html = read_text(page);
  const std::string open = "<script type=\"application/json\" id=\"plume-data\">";
  const std::size_t a = html.find(open);
  if (a == std::string::npos) return json();
  const std::size_t b = html.find("</script>", a);
  std::string text = html.substr(a + open.size(), b - a - open.size());
  for (std::size_t at = 0; (at = text.find("<\\/", at)) != std::string::npos;) text.replace(at, 3, "</");
  return json::parse(text);
}

// plume replay rebuilds the page of a finished run; the page's frames are the
// trajectory's rows: the ball's body placement is its free-flyer q.
TEST(SimulateCli, ReplayPageHoldsTheTrajectory) {
  TempDir tmp;
  const std::string world = tmp.write("drop.xml", drop_world("duration=\"0.45\" output_rate=\"100\""));
  const fs::path out = tmp.path / "out";
  const CliRun r = run("simulate " + world + " --out " + out.string() + " --no-plots --no-replay", tmp);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_FALSE(fs::exists(out / "replay.html"));
  EXPECT_TRUE(json::parse(read_text(out / "summary.json"))["replay"].is_null());

  const CliRun rep = run("replay " + out.string(), tmp);
  if (rep.status != 0 && rep.err.find("three.js not found") != std::string::npos) {
    FAIL() << "three.js is not installed (Debian: libjs-three): " << rep.err;
  }
  ASSERT_EQ(rep.status, 0) << rep.out << rep.err;
  EXPECT_NE(rep.out.find("replay.html"), std::string::npos) << rep.out;
  const json s = json::parse(read_text(out / "summary.json"));
  EXPECT_EQ(s["replay"], "replay.html");
  const json d = replay_data(out / "replay.html");
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(d["mode"], "replay");
  EXPECT_EQ(d["status"], "finished");
  const Csv traj = read_csv(out / "trajectory.csv");
  ASSERT_EQ(d["times"].size(), traj.rows.size());
  ASSERT_EQ(d["bodies"].size(), 1u);
  EXPECT_EQ(d["bodies"][0]["shapes"][0]["type"], "sphere");
  for (std::size_t k = 0; k < traj.rows.size(); ++k) {
    EXPECT_NEAR(d["times"][k].get<double>(), traj.rows[k][0], 1e-12);
    for (int i = 0; i < 7; ++i) EXPECT_NEAR(d["poses"][k][i].get<double>(), traj.rows[k][1 + i], 1.1e-5) << k << " " << i;
  }
  // Two impacts on the timeline, each placed on the ground under the ball with the ground's normal.
  int impacts = 0;
  for (const json& e : d["events"]) impacts += e["kind"] == "impact";
  EXPECT_EQ(impacts, 2);
  ASSERT_EQ(d["impacts"].size(), 2u);
  for (const json& c : d["impacts"]) {
    EXPECT_NEAR(c[3].get<double>(), 0.0, 1e-4);  // z of the contact point
    EXPECT_NEAR(c[6].get<double>(), 1.0, 1e-4);  // n_z
  }

  // Bad input: one line naming the problem.
  const CliRun none = run("replay " + (tmp.path / "nowhere").string(), tmp);
  EXPECT_EQ(none.status, 1);
  EXPECT_NE(none.err.find("summary.json"), std::string::npos) << none.err;
  const std::string other = tmp.write("swing.xml", "<world><model name=\"p\" collision=\"none\" urdf=\"" + kModels +
                                                       "/double_pendulum.urdf\"/></world>");
  const CliRun wrong = run("replay " + out.string() + " --world " + other, tmp);
  EXPECT_EQ(wrong.status, 1);
  EXPECT_NE(wrong.err.find("columns"), std::string::npos) << wrong.err;
}

// A run of events at one instant (a Zeno cascade, a fallback's start) writes
// one trajectory row and its contacts' rows per event, all at the same time:
// the humanoid collapse wrote 1 001 rows at t = 1.346 s with 18 520 contact
// rows. The page gave every one of those frames every row of that time (18.5
// million contact entries) and plume simulate was killed for want of memory
// (24 GB) writing replay.html. Rows sharing a time now keep the first and the
// last (the states before and after), and a contact its last row there.
TEST(SimulateCli, ReplayOfManyRowsAtOneInstantKeepsTheFirstAndTheLast) {
  TempDir tmp;
  const std::string world = tmp.write("drop.xml", drop_world("duration=\"1\" output_rate=\"100\""));
  const fs::path out = tmp.path / "out";
  const CliRun r = run("simulate " + world + " --out " + out.string() + " --no-plots --no-replay", tmp);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  // The last row and its contacts, repeated 300 times at the end time.
  const auto lines = [](const std::string& text) {
    std::vector<std::string> v;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
      if (!l.empty()) v.push_back(l);
    }
    return v;
  };
  const std::vector<std::string> traj = lines(read_text(out / "trajectory.csv"));
  const std::vector<std::string> cont = lines(read_text(out / "contacts.csv"));
  ASSERT_GE(traj.size(), 3u);
  const std::string t_end = traj.back().substr(0, traj.back().find(','));
  std::vector<std::string> at_end;
  for (const std::string& l : cont) {
    if (l.substr(0, l.find(',')) == t_end) at_end.push_back(l);
  }
  ASSERT_FALSE(at_end.empty()) << "the ball resting at the end (it comes to rest at 0.61 s)";
  const int repeats = 300;
  {
    std::ofstream t(out / "trajectory.csv", std::ios::app), c(out / "contacts.csv", std::ios::app);
    for (int k = 0; k < repeats; ++k) {
      t << traj.back() << "\n";
      for (const std::string& l : at_end) c << l << "\n";
    }
  }
  const CliRun rep = run("replay " + out.string(), tmp);
  ASSERT_EQ(rep.status, 0) << rep.out << rep.err;
  const json d = replay_data(out / "replay.html");
  ASSERT_TRUE(d.is_object());
  // Every row before the end time, and the end time twice (first and last row).
  std::size_t before_end = 0;
  for (std::size_t k = 1; k < traj.size(); ++k) before_end += traj[k].substr(0, traj[k].find(',')) != t_end;
  EXPECT_EQ(d["times"].size(), before_end + 2);
  const double te = std::stod(t_end);
  int at_te = 0;
  for (std::size_t k = 0; k < d["times"].size(); ++k) {
    if (d["times"][k].get<double>() != te) continue;
    ++at_te;
    EXPECT_EQ(d["contacts"][k].size(), at_end.size()) << "one entry per contact";
  }
  EXPECT_EQ(at_te, 2);
}

// Every scheme ends its outputs with the sample at the end time and that
// sample's contacts: a cube resting on the ground has its four corners on it at
// t = 0.25 s carrying its weight (time-stepping and compliant used to skip the
// last output when their last step stopped within rounding of the end or was
// cut there, so replay.html's last frame showed no contact).
TEST(SimulateCli, EverySchemeRecordsItsLastOutputWithItsContacts) {
  TempDir tmp;
  for (const std::string scheme : {"event-driven", "time-stepping", "compliant"}) {
    SCOPED_TRACE(scheme);
    const std::string world = tmp.write(
        "rest_" + scheme + ".xml",
        "<world>\n"
        "  <model name=\"cube\" urdf=\"" + kModels + "/cube.urdf\" root=\"free\"><state q=\"0 0 0.05 0 0 0 1\"/></model>\n"
        "  <ground/>\n"
        "  <contact mu=\"0.8\" restitution=\"0\"/>\n"
        "  <simulate scheme=\"" + scheme + "\" duration=\"0.25\" output_rate=\"100\"/>\n"
        "</world>\n");
    const fs::path out = tmp.path / ("out_" + scheme);
    const CliRun r = run("simulate " + world + " --out " + out.string() + " --no-plots", tmp);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const Csv traj = read_csv(out / "trajectory.csv");
    ASSERT_FALSE(traj.rows.empty());
    EXPECT_EQ(traj.rows.back()[0], 0.25);
    const Csv contacts = read_csv(out / "contacts.csv");
    int at_end = 0;
    double load = 0.0;
    for (const auto& row : contacts.rows) {
      if (row[0] != 0.25) continue;
      ++at_end;
      load += row[4];  // time,contact,gap,normal_velocity,normal_force,friction_force
    }
    EXPECT_EQ(at_end, 4);
    EXPECT_NEAR(load, 9.81, 0.01 * 9.81);  // cube.urdf: 1 kg
    // The page's last frame shows those four contacts.
    const json d = replay_data(out / "replay.html");
    ASSERT_TRUE(d.is_object());
    ASSERT_FALSE(d["contacts"].empty());
    const json& last = d["contacts"][d["contacts"].size() - 1];
    ASSERT_TRUE(last.is_array());
    EXPECT_EQ(last.size(), 4u);
  }
}

// plume view: the model's page, a slider per 1-DoF joint within the limits
// `plume info --json` reports, the configuration given (or neutral); bad input
// is one line naming the problem. (The page's own forward kinematics against
// plume's is checked in Chromium: tests/browser, case view.)
TEST(SimulateCli, ViewPageShowsTheModelWithASliderPerJoint) {
  TempDir tmp;
  const fs::path page = tmp.path / "arm.html";
  const CliRun r = run("view " + kModels + "/arm7.urdf --out " + page.string(), tmp);
  if (r.status != 0 && r.err.find("three.js not found") != std::string::npos) {
    FAIL() << "three.js is not installed (Debian: libjs-three): " << r.err;
  }
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(page.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("7 joint sliders"), std::string::npos) << r.out;
  const json d = replay_data(page);
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(d["mode"], "view");
  EXPECT_EQ(d["title"], "arm7");
  const CliRun info = run("info " + kModels + "/arm7.urdf --json", tmp);
  ASSERT_EQ(info.status, 0) << info.err;
  const json model = json::parse(info.out);
  EXPECT_EQ(d["q"].size(), model["nq"].get<std::size_t>());
  for (const json& q : d["q"]) EXPECT_EQ(q, 0.0);  // neutral
  std::vector<json> one_dof;
  for (const json& j : model["joints"]) {
    if (j["nq"] == 1) one_dof.push_back(j);
  }
  ASSERT_EQ(d["sliders"].size(), one_dof.size());
  for (std::size_t k = 0; k < one_dof.size(); ++k) {
    const json& s = d["sliders"][k];
    EXPECT_EQ(s["joint"], one_dof[k]["name"]);
    EXPECT_EQ(s["q_index"], one_dof[k]["q_index"]);
    EXPECT_EQ(s["lower"], one_dof[k]["lower"]);
    EXPECT_EQ(s["upper"], one_dof[k]["upper"]);
    EXPECT_EQ(s["unit"], "rad");
  }
  ASSERT_EQ(d["bodies"].size(), model["nbodies"].get<std::size_t>() - 1);
  ASSERT_EQ(d["poses"].size(), 1u);

  // A free-flying ball at a given configuration: its page body sits at q (quaternion normalised).
  const fs::path dir = tmp.path / "views";
  const CliRun ball = run("view " + kModels + "/ball.urdf --root free --q 0.1,0.2,0.3,0,0,0.6,0.8 --out " + dir.string(), tmp);
  ASSERT_EQ(ball.status, 0) << ball.err;
  const json b = replay_data(dir / "view.html");  // a directory gets view.html
  ASSERT_TRUE(b.is_object());
  EXPECT_TRUE(b["sliders"].empty());
  const std::vector<double> expected = {0.1, 0.2, 0.3, 0, 0, 0.6, 0.8};
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(b["poses"][0][i].get<double>(), expected[i], 1e-5) << i;

  // Bad input: one line, status 1, nothing written.
  const fs::path none = tmp.path / "none.html";
  for (const std::string& args :
       {"view " + kModels + "/arm7.urdf --q 1,2 --out " + none.string(),
        "view " + kModels + "/ball.urdf --root free --q 0,0,0,0,0,0,0 --out " + none.string(),
        "view " + kModels + "/ball.urdf --root free --q 0,0,0,0,0,nan,1 --out " + none.string(),
        "view " + (tmp.path / "missing.urdf").string() + " --out " + none.string(),
        "view " + kModels + "/arm7.urdf --out " + (tmp.path / "no" / "such" / "x.html").string()}) {
    const CliRun bad = run(args, tmp);
    EXPECT_EQ(bad.status, 1) << args << ": " << bad.err;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << args << ": " << bad.err;
    EXPECT_FALSE(fs::exists(none)) << args;
  }
  const CliRun wrong = run("view " + kModels + "/arm7.urdf --q 1,2 --out " + none.string(), tmp);
  EXPECT_NE(wrong.err.find("expected 7"), std::string::npos) << wrong.err;
  const CliRun zero = run("view " + kModels + "/ball.urdf --root free --q 0,0,0,0,0,0,0", tmp);
  EXPECT_NE(zero.err.find("quaternion"), std::string::npos) << zero.err;
}

// plume view --srdf: the page opens at an SRDF <group_state>; each joint it
// names at the value written there, in the q entry `plume info --json` gives
// that joint; the others neutral. An unknown state lists those there are.
TEST(SimulateCli, ViewStartsFromAnSrdfGroupState) {
  TempDir tmp;
  const std::string dir = kModels + "/lynx_description";
  const std::string srdf = tmp.write("lynx.srdf",
                                     "<robot name=\"lynx\">\n"
                                     "  <group_state name=\"first\" group=\"legs\"><joint name=\"LF_KFE\" value=\"-1\"/></group_state>\n"
                                     "  <group_state name=\"kneel\" group=\"legs\">\n"
                                     "    <joint name=\"LF_KFE\" value=\"-2.25\"/><joint name=\"RH_HFE\" value=\"0.5\"/>\n"
                                     "  </group_state>\n"
                                     "</robot>\n");
  const fs::path page = tmp.path / "lynx.html";
  const std::string view = "view " + dir + "/urdf/lynx.urdf --root free --out " + page.string() + " --srdf " + srdf;
  const CliRun r = run(view + " --state kneel", tmp);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("state 'kneel'"), std::string::npos) << r.out;
  const CliRun info = run("info " + dir + "/urdf/lynx.urdf --root free --json", tmp);
  ASSERT_EQ(info.status, 0) << info.err;
  std::map<std::string, int> q_index;
  const json lynx = json::parse(info.out);
  for (const json& j : lynx["joints"]) q_index[j["name"].get<std::string>()] = j["q_index"].get<int>();
  const json d = replay_data(page);
  ASSERT_TRUE(d.is_object());
  for (const auto& [name, k] : q_index) {
    if (name == "root_joint") continue;
    const double expected = name == "LF_KFE" ? -2.25 : name == "RH_HFE" ? 0.5 : 0.0;
    EXPECT_EQ(d["q"][static_cast<std::size_t>(k)].get<double>(), expected) << name;
  }
  ASSERT_EQ(q_index.size(), 13u);  // the root and 12 leg joints
  EXPECT_EQ(d["q"][6], 1.0);       // the base's quaternion w: neutral
  // Without --state: the first group_state.
  ASSERT_EQ(run(view, tmp).status, 0);
  EXPECT_EQ(replay_data(page)["q"][static_cast<std::size_t>(q_index.at("LF_KFE"))], -1.0);
  // An unknown state or joint: one line naming it and what there is.
  const CliRun bad = run(view + " --state crouch", tmp);
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("'crouch'"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("first, kneel"), std::string::npos) << bad.err;
  const std::string wrong = tmp.write("wrong.srdf", "<robot><group_state name=\"s\"><joint name=\"elbow\" value=\"1\"/></group_state></robot>");
  // A joint the model does not have (SRDFs often name a gripper or a virtual
  // joint a URDF leaves out): loaded with a warning naming it, that joint skipped.
  const CliRun unknown = run("view " + dir + "/urdf/lynx.urdf --out " + page.string() + " --srdf " + wrong, tmp);
  EXPECT_EQ(unknown.status, 0) << unknown.err;
  EXPECT_NE(unknown.err.find("warning: " + wrong + ":1: state 's': joint 'elbow' is not in the model"), std::string::npos)
      << unknown.err;
}

// Visual shapes: a link drawn with a package:// mesh it does not collide with
// (a box for contact). The page carries the mesh file's own triangles (the
// count in the binary STL's header) at the visual's origin, found through
// --package-dir; a visual equal to a collision shape reuses it.
TEST(SimulateCli, PagesDrawTheUrdfVisualMeshes) {
  TempDir tmp;
  const fs::path pkg = tmp.path / "share" / "viz_pkg";
  fs::create_directories(pkg / "meshes");
  fs::create_directories(tmp.path / "robot");
  const fs::path stl = fs::path(kModels) / "lynx_description" / "meshes" / "shank.stl";
  fs::copy_file(stl, pkg / "meshes" / "shank.stl");
  std::ofstream(pkg / "package.xml") << "<package><name>viz_pkg</name></package>\n";
  const std::string urdf = tmp.write(
      "robot/viz.urdf",
      "<robot name=\"viz\">\n"
      "  <link name=\"base\">\n"
      "    <inertial><mass value=\"1\"/><inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n"
      "    <visual><origin xyz=\"0 0 0.25\"/><geometry><mesh filename=\"package://viz_pkg/meshes/shank.stl\" scale=\"2 2 2\"/></geometry></visual>\n"
      "    <visual><geometry><box size=\"0.2 0.1 0.05\"/></geometry></visual>\n"
      "    <collision><geometry><box size=\"0.2 0.1 0.05\"/></geometry></collision>\n"
      "  </link>\n"
      "</robot>\n");
  const fs::path page = tmp.path / "viz.html";
  const CliRun r = run("view " + urdf + " --root free --package-dir " + (tmp.path / "share").string() + " --out " +
                           page.string(), tmp);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json d = replay_data(page);
  ASSERT_TRUE(d.is_object());
  ASSERT_EQ(d["bodies"].size(), 1u);
  const json& body = d["bodies"][0];
  ASSERT_EQ(body["shapes"].size(), 1u);
  EXPECT_EQ(body["shapes"][0]["type"], "box");
  ASSERT_EQ(body["visuals"].size(), 2u);
  const json& mesh = body["visuals"][0];
  EXPECT_EQ(mesh["type"], "mesh");
  EXPECT_EQ(mesh["source"], "file");
  EXPECT_EQ(mesh["filename"], "package://viz_pkg/meshes/shank.stl");
  EXPECT_EQ(mesh["position"], json::array({0.0, 0.0, 0.25}));
  // The binary STL's triangle count (uint32 after the 80-byte header), and its vertices scaled by 2.
  const std::string bytes = read_text(stl);
  ASSERT_GT(bytes.size(), 84u);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + 80);
  const std::size_t triangles = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::size_t>(p[3]) << 24);
  EXPECT_EQ(mesh["mesh"]["triangles"].size(), 3 * triangles);
  double extent = 0.0, file_extent = 0.0;
  for (const json& x : mesh["mesh"]["vertices"]) extent = std::max(extent, std::abs(x.get<double>()));
  for (std::size_t t = 0; t < triangles; ++t) {
    for (int k = 0; k < 9; ++k) {
      float x;
      std::memcpy(&x, bytes.data() + 84 + 50 * t + 12 + 4 * k, 4);
      file_extent = std::max(file_extent, std::abs(static_cast<double>(x)));
    }
  }
  EXPECT_NEAR(extent, 2.0 * file_extent, 1e-5);
  EXPECT_EQ(body["visuals"][1]["type"], "collision");  // the box: the collision shape reused
  EXPECT_EQ(body["visuals"][1]["index"], 0);

  // Without the package directory the mesh is not found: the page still shows the body's box.
  const CliRun lost = run("view " + urdf + " --root free --out " + (tmp.path / "lost.html").string(), tmp);
  ASSERT_EQ(lost.status, 0) << lost.err;
  const json l = replay_data(tmp.path / "lost.html");
  ASSERT_EQ(l["bodies"][0]["visuals"].size(), 1u);
  EXPECT_EQ(l["bodies"][0]["visuals"][0]["type"], "collision");
}

// The demo's page: under the size budget, and at rest the four feet stand on
// the ground (contact points at z = 0, normals up) carrying the robot's weight.
TEST(SimulateCli, QuadrupedReplayShowsTheFeetCarryingTheWeight) {
  TempDir tmp;
  const fs::path out = tmp.path / "quad";
  const CliRun r = run("simulate " + kModels + "/worlds/quadruped_standing.xml --out " + out.string() + " --no-plots", tmp);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  ASSERT_TRUE(fs::exists(out / "replay.html")) << r.out;
  EXPECT_LE(fs::file_size(out / "replay.html"), 5000000u);
  const json d = replay_data(out / "replay.html");
  ASSERT_TRUE(d.is_object());
  const json& last = d["contacts"].back();
  ASSERT_EQ(last.size(), 4u);
  double weight = 0.0;
  for (const json& c : last) {
    EXPECT_NEAR(c[2].get<double>(), 0.0, 1e-4);  // on the ground
    EXPECT_NEAR(c[5].get<double>(), 1.0, 1e-4);  // normal up
    EXPECT_EQ(c[11], 0);                          // sticking
    weight += c[6].get<double>();
  }
  EXPECT_NEAR(weight, 22.2 * 9.81, 0.02 * 22.2 * 9.81);  // at rest after 2 s: the feet carry m g
  EXPECT_EQ(d["contacts"][0].size(), 0u);                  // released 2 cm above the ground
}

// The shipped worlds run to their end and do what their comments say
// (loosely: the precise checks of each scenario live with the simulator's tests).
static Csv simulate_shipped(const std::string& name, const TempDir& tmp) {
  const fs::path out = tmp.path / name;
  const CliRun r = run("simulate " + kModels + "/worlds/" + name + ".xml --out " + out.string() + " --no-plots", tmp);
  EXPECT_EQ(r.status, 0) << name << "\n" << r.out << r.err;
  const json s = json::parse(read_text(out / "summary.json"));
  EXPECT_EQ(s["status"], "finished") << name << ": " << s["message"];
  EXPECT_LE(s["max_penetration"].get<double>(), 1e-6) << name;
  return read_csv(out / "trajectory.csv");
}

TEST(SimulateCliWorlds, BouncingBallComesToRest) {
  TempDir tmp;
  const Csv t = simulate_shipped("bouncing_ball", tmp);
  ASSERT_FALSE(t.rows.empty());
  EXPECT_NEAR(t.rows.back()[3], 0.1, 1e-6);  // on the ground
  EXPECT_NEAR(t.rows.back()[13], 0.0, 1e-6);
}

TEST(SimulateCliWorlds, FallingRodLiesOnTheFloor) {
  TempDir tmp;
  const Csv t = simulate_shipped("falling_rod", tmp);
  ASSERT_FALSE(t.rows.empty());
  EXPECT_NEAR(t.rows.back()[1], 0.0, 1e-6);  // the centre of mass moved vertically only
  EXPECT_NEAR(t.rows.back()[2], 0.0, 1e-6);  // and lies on the floor
  EXPECT_NEAR(t.rows.back()[3], 0.0, 1e-6);
}

TEST(SimulateCliWorlds, NewtonsCradlePassesTheMomentumOn) {
  TempDir tmp;
  const Csv t = simulate_shipped("newtons_cradle", tmp);
  ASSERT_FALSE(t.rows.empty());
  const std::vector<double>& last = t.rows.back();
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(last[6 + i], 0.0, 1e-6) << i;
  EXPECT_NEAR(last[10], 1.0, 1e-6);
}

TEST(SimulateCliWorlds, QuadrupedStands) {
  TempDir tmp;
  const Csv t = simulate_shipped("quadruped_standing", tmp);
  ASSERT_FALSE(t.rows.empty());
  EXPECT_NEAR(t.rows.back()[3], 0.434, 0.006);  // the trunk at standing height
  EXPECT_NEAR(t.rows.back()[7], 1.0, 1e-3);     // level (quaternion w)
}

TEST(SimulateCliWorlds, HumanoidLandsOnItsFeet) {
  TempDir tmp;
  const Csv t = simulate_shipped("humanoid_falling", tmp);
  ASSERT_FALSE(t.rows.empty());
  EXPECT_NEAR(t.rows.back()[3], 0.983, 0.01);
  EXPECT_NEAR(t.rows.back()[7], 1.0, 1e-3);
}

// The contact with the step's top face ends where the face does (a geometric
// loss, found by bisection on detection), not where its plane would.
TEST(SimulateCliWorlds, BallRollsOffTheStep) {
  TempDir tmp;
  const Csv t = simulate_shipped("ball_off_step", tmp);
  ASSERT_FALSE(t.rows.empty());
  EXPECT_GT(t.rows.back()[1], 0.6);          // beyond the step
  EXPECT_NEAR(t.rows.back()[3], 0.1, 1e-3);  // on the ground
}

TEST(SimulateCli, SensitivityWritesTheStateTransitionMatrix) {
  // bouncing_ball.xml (h = 1 m, r = 0.1 m, e = 0.8) to 0.7 s, past the first
  // impact: the vertical block equals the closed form of
  // Sensitivity.BouncingBallMatchesTheClosedForm (z0 = 1.1 m, w0 = 0).
  TempDir tmp;
  const fs::path out = tmp.path / "out";
  const std::string world = std::string(PLUME_MODELS_DIR) + "/worlds/bouncing_ball.xml";
  const CliRun r = run("simulate " + world + " --out " + out.string() + " --duration 0.7 --no-plots --no-replay --sensitivity", tmp);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json j = json::parse(read_text(out / "sensitivity.json"));
  EXPECT_TRUE(j["valid"].get<bool>());
  EXPECT_EQ(j["saltations"], 1);
  EXPECT_NEAR(j["time_end"].get<double>(), 0.7, 1e-12);
  ASSERT_EQ(j["coordinates"].size(), 12u);
  EXPECT_EQ(j["coordinates"][0], "dq_0");
  EXPECT_EQ(j["coordinates"][6], "v_0");
  const json& P = j["state_transition"];
  ASSERT_EQ(P.size(), 12u);
  for (const json& row : P) ASSERT_EQ(row.size(), 12u);
  const double g = 9.81, e = 0.8, s = std::sqrt(2 * g * 1.0), tau = 0.7 - s / g;
  EXPECT_NEAR(P[5][5].get<double>(), e * (g / s) * tau + (g * tau - e * s) / s, 1e-8);  // ∂z/∂z0
  EXPECT_NEAR(P[11][11].get<double>(), 1.0, 1e-8);                                     // ∂w/∂w0 = g/g
  // Without --sensitivity there is no such file; another scheme refuses it.
  const CliRun plain = run("simulate " + world + " --out " + out.string() + " --duration 0.1 --no-plots --no-replay", tmp);
  ASSERT_EQ(plain.status, 0) << plain.out << plain.err;
  EXPECT_FALSE(fs::exists(out / "sensitivity.json"));
}

// ---- several worlds: plume simulate A.xml B.xml … --jobs N ----------------------------------

TEST(SimulateCliBatch, EachWorldInItsDirectoryAndABatchSummary) {
  TempDir tmp;
  const std::string drop = tmp.write("drop.xml", drop_world("duration=\"0.45\" output_rate=\"100\""));
  fs::create_directories(tmp.path / "other");
  // Same stem, another directory and another world: its directory is drop-2.
  const std::string drop2 = tmp.write("other/drop.xml", drop_world("duration=\"0.25\" output_rate=\"50\""));
  const std::string missing = (tmp.path / "missing.xml").string();
  const fs::path out = tmp.path / "out";
  const CliRun r = run("simulate " + drop + " " + missing + " " + drop2 + " --out " + out.string() +
                           " --jobs 2 --no-plots",
                       tmp);
  EXPECT_EQ(r.status, 1) << r.out << r.err;  // a world could not be read; the others ran
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("plume: error: " + missing), std::string::npos) << r.err;
  EXPECT_EQ(listing(out), (std::set<std::string>{"drop", "drop-2", "batch_summary.json"}));
  EXPECT_EQ(listing(out / "drop"), kCsvAndSummary);
  EXPECT_EQ(listing(out / "drop-2"), kCsvAndSummary);
  EXPECT_NE(r.out.find("plume simulate " + drop + ":"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plume simulate " + drop2 + ":"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find((out / "batch_summary.json").string()), std::string::npos) << r.out;

  // Each world's outputs are those of the same world run alone, byte for byte.
  for (const auto& [world, name] : {std::pair{drop, "drop"}, std::pair{drop2, "drop-2"}}) {
    const fs::path alone = tmp.path / ("alone_" + std::string(name));
    const CliRun a = run("simulate " + world + " --out " + alone.string() + " --no-plots --no-replay", tmp);
    ASSERT_EQ(a.status, 0) << a.out << a.err;
    for (const char* f : {"trajectory.csv", "events.csv", "contacts.csv", "energy.csv", "contact_points.csv"}) {
      EXPECT_EQ(read_text(out / name / f), read_text(alone / f)) << name << "/" << f;
    }
    const json s = json::parse(read_text(out / name / "summary.json"));
    EXPECT_EQ(s["world"], world);
    EXPECT_EQ(s["output_dir"], (out / name).string());
    EXPECT_EQ(s["status"], "finished");
  }

  const json b = json::parse(read_text(out / "batch_summary.json"));
  EXPECT_EQ(b["status"], "failed");
  EXPECT_EQ(b["jobs"], 2);
  ASSERT_EQ(b["worlds"].size(), 3u);
  const std::vector<std::string> order = {drop, missing, drop2};
  double simulated = 0.0;
  long events = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const json& w = b["worlds"][i];
    EXPECT_EQ(w["world"], order[i]);
    for (const char* key : {"world_absolute", "status", "message", "time", "duration", "wall_time", "elapsed",
                            "events", "exit_code", "output_dir", "summary"}) {
      EXPECT_TRUE(w.contains(key)) << i << " " << key;
    }
    if (i == 1) continue;
    const json s = json::parse(read_text(w["summary"].get<std::string>()));
    EXPECT_EQ(w["status"], "finished");
    EXPECT_EQ(w["exit_code"], 0);
    EXPECT_EQ(w["time"], s["time"]);
    EXPECT_EQ(w["wall_time"], s["wall_time"]);
    EXPECT_EQ(w["events"], s["events"]);
    EXPECT_EQ(w["output_dir"], s["output_dir"]);
    simulated += w["time"].get<double>();
    events += w["events"].get<long>();
  }
  const json& bad = b["worlds"][1];
  EXPECT_EQ(bad["status"], "error");
  EXPECT_EQ(bad["exit_code"], 1);
  EXPECT_NE(bad["message"].get<std::string>().find("missing.xml"), std::string::npos) << bad;
  EXPECT_TRUE(bad["output_dir"].is_null());
  EXPECT_NEAR(b["worlds"][0]["time"].get<double>(), 0.45, 1e-12);
  EXPECT_NEAR(b["worlds"][2]["time"].get<double>(), 0.25, 1e-12);
  EXPECT_EQ(b["totals"]["worlds"], 3);
  EXPECT_EQ(b["totals"]["finished"], 2);
  EXPECT_EQ(b["totals"]["failed"], 1);
  EXPECT_EQ(b["totals"]["events"], events);
  EXPECT_DOUBLE_EQ(b["totals"]["simulated_time"].get<double>(), simulated);
  const double wall = b["totals"]["wall_time"].get<double>();
  EXPECT_GT(wall, 0.0);
  EXPECT_DOUBLE_EQ(b["throughput"]["simulated_seconds_per_second"].get<double>(), simulated / wall);
  EXPECT_DOUBLE_EQ(b["throughput"]["worlds_per_second"].get<double>(), 3.0 / wall);
}

TEST(SimulateCliBatch, ExitStatusSaysTheWorstOutcome) {
  TempDir tmp;
  const std::string a = tmp.write("a.xml", drop_world("duration=\"0.1\""));
  const std::string b = tmp.write("b.xml", drop_world("duration=\"0.1\""));
  const std::string early = tmp.write("early.xml", drop_world("duration=\"2\" max_steps=\"25\""));
  const std::string common = " --no-plots --no-replay --out ";
  const CliRun ok = run("simulate " + a + " " + b + " --jobs 1" + common + (tmp.path / "ok").string(), tmp);
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  EXPECT_TRUE(ok.err.empty()) << ok.err;
  EXPECT_EQ(json::parse(read_text(tmp.path / "ok" / "batch_summary.json"))["status"], "finished");
  EXPECT_EQ(listing(tmp.path / "ok"), (std::set<std::string>{"a", "b", "batch_summary.json"}));

  const CliRun stopped = run("simulate " + a + " " + early + " -j 2" + common + (tmp.path / "stopped").string(), tmp);
  EXPECT_EQ(stopped.status, 3) << stopped.out << stopped.err;
  EXPECT_NE(stopped.err.find("step_limit"), std::string::npos) << stopped.err;
  const json s = json::parse(read_text(tmp.path / "stopped" / "batch_summary.json"));
  EXPECT_EQ(s["status"], "failed");
  EXPECT_EQ(s["worlds"][1]["status"], "step_limit");
  EXPECT_EQ(s["worlds"][1]["exit_code"], 3);
  EXPECT_TRUE(fs::exists(tmp.path / "stopped" / "early" / "trajectory.csv"));  // its partial outputs

  // One world keeps the single-run layout, --jobs or not: outputs straight in --out, no batch summary.
  const CliRun one = run("simulate " + a + " --jobs 2" + common + (tmp.path / "one").string(), tmp);
  EXPECT_EQ(one.status, 0) << one.out << one.err;
  EXPECT_TRUE(fs::exists(tmp.path / "one" / "summary.json"));
  EXPECT_FALSE(fs::exists(tmp.path / "one" / "batch_summary.json"));

  const CliRun zero = run("simulate " + a + " " + b + " --jobs 0" + common + (tmp.path / "zero").string(), tmp);
  EXPECT_EQ(zero.status, 1);
  EXPECT_NE(zero.err.find("--jobs"), std::string::npos) << zero.err;
}

TEST(SimulateCliBatch, AnInterruptedBatchSaysWhichWorldsRan) {
  TempDir tmp;
  // Two pendulums swinging for "ever" on one job: SIGINT stops the first, the second never starts.
  const std::string swing = "<world><model name=\"p\" collision=\"none\" urdf=\"" + kModels +
                            "/double_pendulum.urdf\"><state q=\"1 -0.5\"/></model>"
                            "<simulate duration=\"1e6\" output_rate=\"10\"/></world>";
  const std::string a = tmp.write("swing_a.xml", swing), b = tmp.write("swing_b.xml", swing);
  const fs::path out = tmp.path / "out";
  const CliRun r = run("simulate " + a + " " + b + " --jobs 1 --no-plots --no-replay --out " + out.string(), tmp,
                       "timeout --preserve-status -s INT 1.5 ");
  EXPECT_EQ(r.status, 128 + SIGINT) << r.out << r.err;
  const json s = json::parse(read_text(out / "batch_summary.json"));
  EXPECT_EQ(s["status"], "interrupted");
  ASSERT_EQ(s["worlds"].size(), 2u);
  EXPECT_EQ(s["worlds"][0]["status"], "interrupted");
  EXPECT_EQ(s["worlds"][0]["exit_code"], 128 + SIGINT);
  EXPECT_EQ(s["worlds"][1]["status"], "not_run");
  EXPECT_TRUE(s["worlds"][1]["output_dir"].is_null());
  // The interrupted world's files are whole, as a lone interrupted run's.
  const json first = json::parse(read_text(out / "swing_a" / "summary.json"));
  EXPECT_EQ(first["status"], "interrupted");
  const Csv traj = read_csv(out / "swing_a" / "trajectory.csv");
  ASSERT_GE(traj.rows.size(), 2u);
  for (const auto& row : traj.rows) ASSERT_EQ(row.size(), 5u);
  EXPECT_EQ(first["samples"].get<std::size_t>(), traj.rows.size());
  EXPECT_FALSE(fs::exists(out / "swing_b"));
}
