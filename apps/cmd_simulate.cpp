// plume simulate WORLD.xml [--out DIR] [--duration T] [--no-plots]
//
// Runs a world file (docs/world_format.md) and writes into DIR:
//   trajectory.csv  time,q_0,…,q_{nq−1},v_0,…,v_{nv−1}   (Recorder::sample)
//   events.csv      time,kind,contact,body_a,body_b,pre_normal_velocity,post_normal_velocity,impulse
//   contacts.csv    time,contact,gap,normal_velocity,normal_force,friction_force
//   energy.csv      time,energy
//   summary.json    status, counts, energies, timing, the world's size
//   contact_points.csv  each contact row placed: bodies, point, normal, sliding speed (replay.cpp)
//   controller.csv  time,work,tau_0,…,tau_{nv−1}: the controller's held torques and work (with a controller)
//   replay.html     the run in 3-D in a browser, offline (replay.cpp; when three.js is there)
//   *.png           plots drawn by plot_simulation.py (when python3 + matplotlib are there): base,
//                   joint positions and torques, contact forces, separation velocities, energy
//
// Every file is written to a hidden temporary file in DIR and renamed into
// place when complete, so a file with a final name is always whole. The
// summary is written first with status "running" and last with the outcome:
// an interrupted run leaves "running" or "interrupted", never "finished".
//
// plume simulate A.xml B.xml … [--jobs N] runs several worlds on N threads, each
// into DIR/STEM (STEM-2, … when stems repeat) exactly as it would run alone,
// and writes DIR/batch_summary.json (per world: path, status, simulated and
// wall time, events, output directory; totals and throughput).
//
// Exit status: 0 the run reached its end; 1 bad input (world file, options,
// output directory); 2 an unexpected internal error; 3 the simulation stopped
// early (status ≠ finished; the outputs up to that point are written);
// 128 + signal when interrupted by SIGINT or SIGTERM (outputs written too;
// a second signal half a second or more later ends the program at once).
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <string>
#include <thread>
#include <vector>

#include "cli_common.hpp"
#include "replay.hpp"
#include "plume/error.hpp"
#include "plume/sim/simulator.hpp"
#include "plume/sim/world_file.hpp"

extern char** environ;

namespace plume::cli {

namespace {

namespace fs = std::filesystem;

// ---- interruption ------------------------------------------------------------------------

// Lock-free, so the handler may set it; read by every worker of a batch.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "g_signal is set in a signal handler");
double g_first_signal_time = 0.0;  // written and read by the handler only

double monotonic_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The first SIGINT/SIGTERM sets a flag that the recorder checks: the run stops
// at its next output and writes what it has. A second signal at least half a
// second later (a user pressing Ctrl-C again because the run seems stuck)
// ends the process at once; one arriving sooner is the same request
// delivered twice (e.g. by timeout(1), which signals the child and its group).
extern "C" void on_signal(int signo) {
  const double now = monotonic_seconds();
  if (g_signal == 0) {
    g_signal = signo;
    g_first_signal_time = now;
  } else if (now - g_first_signal_time >= 0.5) {
    _exit(128 + signo);
  }
}

// Thrown by the recorder once a signal has arrived: unwinds out of the run.
struct Interrupted {};

class SignalGuard {
 public:
  SignalGuard() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sa.sa_flags = 0;
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// ---- formatting --------------------------------------------------------------------------

// Shortest text that reads back to the same double ("nan", "inf" as is).
void append_number(std::string& out, double x) {
  std::array<char, 32> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), x);
  out.append(buf.data(), res.ptr);
}

// RFC 4180: quote a field holding a comma, a quote or a line break.
void append_field(std::string& out, const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) {
    out += s;
    return;
  }
  out += '"';
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

std::string short_number(double x) {
  std::ostringstream s;
  s.precision(6);
  s << x;
  return s.str();
}

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// ---- atomic files ------------------------------------------------------------------------

// The process's umask, read once: umask(2) reads it only by setting it, which
// would race with the workers of a batch creating files.
mode_t process_umask() {
  static const mode_t mask = [] {
    const mode_t m = umask(0);
    umask(m);
    return m;
  }();
  return mask;
}

// A file written under a hidden temporary name in its final directory and
// renamed over the final name by commit(); destroyed uncommitted, the
// temporary is removed.
class AtomicFile {
 public:
  explicit AtomicFile(fs::path final_path) : final_(std::move(final_path)) {
    std::string pattern = (final_.parent_path() / ("." + final_.filename().string() + ".tmp-XXXXXX")).string();
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    const int fd = mkstemp(name.data());
    if (fd < 0) throw Error(system_error("cannot create a temporary file for " + final_.string()));
    temp_ = name.data();
    const mode_t mask = process_umask();
    if (fchmod(fd, 0666 & ~mask) != 0) {
      // Not fatal: the file is still written (with mode 0600).
    }
    file_ = fdopen(fd, "w");
    if (!file_) {
      close(fd);
      unlink(temp_.c_str());
      throw Error(system_error("cannot open " + temp_));
    }
    std::setvbuf(file_, nullptr, _IOFBF, 1 << 16);
  }
  ~AtomicFile() {
    if (file_) {
      std::fclose(file_);
      unlink(temp_.c_str());
    }
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const std::string& text) {
    if (file_ && std::fwrite(text.data(), 1, text.size(), file_) != text.size()) failed_ = true;
  }

  void commit() {
    if (!file_) return;
    bool ok = !failed_ && std::fflush(file_) == 0 && !std::ferror(file_);
    ok = ok && fsync(fileno(file_)) == 0;
    ok = (std::fclose(file_) == 0) && ok;
    file_ = nullptr;
    if (!ok) {
      const std::string reason = system_error("cannot write " + final_.string());
      unlink(temp_.c_str());
      throw Error(reason);
    }
    if (std::rename(temp_.c_str(), final_.c_str()) != 0) {
      const std::string reason = system_error("cannot rename " + temp_ + " to " + final_.string());
      unlink(temp_.c_str());
      throw Error(reason);
    }
  }

 private:
  fs::path final_;
  std::string temp_;
  std::FILE* file_ = nullptr;
  bool failed_ = false;
};

void write_file_atomically(const fs::path& path, const std::string& text) {
  AtomicFile f(path);
  f.write(text);
  f.commit();
}

// ---- the recorder ------------------------------------------------------------------------

const char* const kTrajectory = "trajectory.csv";
const char* const kEvents = "events.csv";
const char* const kContacts = "contacts.csv";
const char* const kEnergy = "energy.csv";
const char* const kSummary = "summary.json";
const char* const kSensitivity = "sensitivity.json";
const char* const kReplay = "replay.html";
const char* const kContactPoints = "contact_points.csv";
const char* const kController = "controller.csv";
const std::array<const char*, 6> kPlots = {"contact_forces.png", "separation_velocities.png", "energy.png",
                                           "base.png",           "joint_positions.png",       "joint_torques.png"};

// What the controller applies: it wraps the controller function, keeps the
// torque held since the last sample (clamped to the effort limits as the
// simulator clamps it) and the work done so far. Over a hold interval the
// torque is constant, so the work of a 1-DoF joint is exactly τᵢ Δqᵢ; other
// joints (free-flyer, planar: torque zero under the PD controller) add τ·v̄ Δt.
class ControllerProbe {
 public:
  ControllerProbe(const Model& model, ControllerFunction f, bool torque_limits)
      : model_(model), f_(std::move(f)), limits_(torque_limits), tau_(VectorX::Zero(model.nv())) {}

  ControllerFunction function() {
    return [this](double t, const VectorX& q, const VectorX& v, VectorX& tau) {
      f_(t, q, v, tau);
      if (tau.size() != model_.nv()) return;  // the simulator reports it
      if (!have_ || t > t_) {
        if (have_) work_ = work_at(q, v, t);
        t_ = t;
        q_ = q;
        v_ = v;
        have_ = true;
      }
      tau_ = limits_ ? VectorX(tau.cwiseMax(-model_.effort_limit()).cwiseMin(model_.effort_limit())) : tau;
    };
  }
  // The work done from the start to a state (q, v) at time t ≥ the last sample.
  double work_at(const VectorX& q, const VectorX& v, double t) const {
    if (!have_) return 0.0;
    double w = work_;
    for (int b = 1; b < model_.nbodies(); ++b) {
      const Joint& j = model_.joint(b);
      if (j.nq == 1 && j.nv == 1) {
        w += tau_(j.v_index) * (q(j.q_index) - q_(j.q_index));
      } else {
        for (int k = 0; k < j.nv; ++k) w += tau_(j.v_index + k) * 0.5 * (v(j.v_index + k) + v_(j.v_index + k)) * (t - t_);
      }
    }
    return w;
  }
  const VectorX& torque() const { return tau_; }

 private:
  const Model& model_;
  ControllerFunction f_;
  bool limits_;
  VectorX tau_, q_, v_;
  double t_ = 0.0, work_ = 0.0;
  bool have_ = false;
};

// Streams every record to its (temporary) CSV file as the run goes.
class CsvRecorder : public Recorder {
 public:
  CsvRecorder(const fs::path& dir, int nq, int nv, const ControllerProbe* probe)
      : trajectory_(dir / kTrajectory), events_(dir / kEvents), contacts_(dir / kContacts), energy_(dir / kEnergy),
        probe_(probe) {
    if (probe_) {
      controller_.emplace(dir / kController);
      std::string h = "time,work";
      for (int i = 0; i < nv; ++i) h += ",tau_" + std::to_string(i);
      controller_->write(h + "\n");
    }
    std::string header = "time";
    for (int i = 0; i < nq; ++i) header += ",q_" + std::to_string(i);
    for (int i = 0; i < nv; ++i) header += ",v_" + std::to_string(i);
    trajectory_.write(header + "\n");
    events_.write("time,kind,contact,body_a,body_b,pre_normal_velocity,post_normal_velocity,impulse\n");
    contacts_.write("time,contact,gap,normal_velocity,normal_force,friction_force\n");
    energy_.write("time,energy\n");
  }

  void sample(double t, const VectorX& q, const VectorX& v, double energy) override {
    check_signal();
    line_.clear();
    append_number(line_, t);
    for (Eigen::Index i = 0; i < q.size(); ++i) {
      line_ += ',';
      append_number(line_, q(i));
    }
    for (Eigen::Index i = 0; i < v.size(); ++i) {
      line_ += ',';
      append_number(line_, v(i));
    }
    line_ += '\n';
    trajectory_.write(line_);
    line_.clear();
    append_number(line_, t);
    line_ += ',';
    append_number(line_, energy);
    line_ += '\n';
    energy_.write(line_);
    if (controller_) {
      line_.clear();
      append_number(line_, t);
      line_ += ',';
      append_number(line_, probe_->work_at(q, v, t));
      const VectorX& tau = probe_->torque();
      for (Eigen::Index i = 0; i < tau.size(); ++i) {
        line_ += ',';
        append_number(line_, tau(i));
      }
      line_ += '\n';
      controller_->write(line_);
    }
    if (samples == 0) first_energy = energy;
    last_energy = energy;
    ++samples;
    last_time = t;
  }

  void event(const SimulationEvent& e) override {
    check_signal();
    line_.clear();
    append_number(line_, e.time);
    line_ += ',';
    line_ += to_string(e.kind);
    line_ += ',';
    append_field(line_, e.contact);
    line_ += ',';
    append_field(line_, e.body_a);
    line_ += ',';
    append_field(line_, e.body_b);
    for (double x : {e.pre_normal_velocity, e.post_normal_velocity, e.impulse}) {
      line_ += ',';
      append_number(line_, x);
    }
    line_ += '\n';
    events_.write(line_);
    ++event_rows;
  }

  void contact(const ContactSample& s) override {
    check_signal();
    line_.clear();
    append_number(line_, s.time);
    line_ += ',';
    append_field(line_, s.contact);
    for (double x : {s.gap, s.normal_velocity, s.normal_force, s.friction_force}) {
      line_ += ',';
      append_number(line_, x);
    }
    line_ += '\n';
    contacts_.write(line_);
    ++contact_rows;
  }

  void commit() {
    trajectory_.commit();
    events_.commit();
    contacts_.commit();
    energy_.commit();
    if (controller_) controller_->commit();
  }

  long samples = 0, event_rows = 0, contact_rows = 0;
  double last_time = 0.0;
  double first_energy = std::nan(""), last_energy = std::nan("");

 private:
  static void check_signal() {
    if (g_signal != 0) throw Interrupted{};
  }

  AtomicFile trajectory_, events_, contacts_, energy_;
  std::optional<AtomicFile> controller_;
  const ControllerProbe* probe_;
  std::string line_;
};

// ---- plots -------------------------------------------------------------------------------

fs::path executable_directory() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

std::optional<fs::path> find_plot_script() {
  std::vector<fs::path> candidates;
  const fs::path exe_dir = executable_directory();
  if (!exe_dir.empty()) {
    candidates.push_back(exe_dir / "plot_simulation.py");
    const fs::path datadir(PLUME_INSTALL_DATADIR);
    candidates.push_back((datadir.is_absolute() ? datadir : exe_dir.parent_path() / datadir) / "plume" /
                         "plot_simulation.py");
  }
  candidates.push_back(fs::path(PLUME_SOURCE_APPS_DIR) / "plot_simulation.py");
  for (const fs::path& p : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p;
  }
  return std::nullopt;
}

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

// Interpreters to try, in order: $PLUME_PYTHON alone if set; otherwise
// python3 from PATH, then Debian's /usr/bin/python3 (a python3 earlier on
// PATH, e.g. a virtual environment, may lack matplotlib).
std::vector<fs::path> python_candidates() {
  std::vector<fs::path> out;
  if (const char* env = std::getenv("PLUME_PYTHON")) {
    if (executable(env)) out.emplace_back(env);
    return out;
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (dir.empty()) continue;
      const fs::path p = fs::path(dir) / "python3";
      if (executable(p)) {
        out.push_back(p);
        break;
      }
    }
  }
  const fs::path system_python = "/usr/bin/python3";
  if (executable(system_python)) {
    std::error_code ec;
    if (out.empty() || !fs::equivalent(out[0], system_python, ec)) out.push_back(system_python);
  }
  return out;
}

struct ChildResult {
  int status = -1;  // exit status, or −1 if it could not run / was killed
  std::string output;
};

// Runs argv with stdout and stderr captured in a temporary file of `dir`, for at most `timeout_s`.
ChildResult run_child(const std::vector<std::string>& argv, const fs::path& dir, double timeout_s) {
  ChildResult r;
  std::string pattern = (dir / ".plot.log-XXXXXX").string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int log_fd = mkstemp(name.data());
  if (log_fd < 0) return r;
  const std::string log_path = name.data();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 2);
  posix_spawn_file_actions_addclose(&actions, log_fd);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(log_fd);
  if (rc == 0) {
    const auto start = std::chrono::steady_clock::now();
    int status = 0;
    while (true) {
      const pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        break;
      }
      if (w < 0 && errno != EINTR) break;
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        r.output = "timed out after " + short_number(timeout_s) + " s";
        unlink(log_path.c_str());
        return r;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  std::ifstream log(log_path);
  std::ostringstream text;
  text << log.rdbuf();
  r.output = text.str();
  unlink(log_path.c_str());
  return r;
}

std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last;
}

struct PlotOutcome {
  std::vector<std::string> files;  // PNG file names written into the output directory
  std::string message;             // why there are none
};

// Exit status of plot_simulation.py when matplotlib cannot be imported.
constexpr int kNoMatplotlib = 3;

PlotOutcome draw_plots(const fs::path& dir) {
  PlotOutcome out;
  const std::optional<fs::path> script = find_plot_script();
  if (!script) {
    out.message = "plot_simulation.py not found next to the plume executable, in its share/plume directory or in the source tree";
    return out;
  }
  const std::vector<fs::path> pythons = python_candidates();
  if (pythons.empty()) {
    out.message = "python3 not found (set PLUME_PYTHON or install python3-matplotlib)";
    return out;
  }
  for (const fs::path& python : pythons) {
    const ChildResult r = run_child({python.string(), script->string(), dir.string()}, dir, 300.0);
    if (r.status == 0) {
      out.message.clear();
      std::istringstream in(r.output);
      std::string line;
      while (std::getline(in, line)) {
        for (const char* p : kPlots) {
          if (line == p) out.files.push_back(line);
        }
      }
      if (out.files.empty()) out.message = "the plot script wrote no plot";
      return out;
    }
    out.message = r.status == kNoMatplotlib ? "matplotlib is not available to " + python.string() +
                                                  " (Debian: apt-get install python3-matplotlib)"
                                            : python.string() + " " + script->string() + " failed" +
                                                  (r.output.empty() ? std::string() : ": " + last_line(r.output));
    if (r.status != kNoMatplotlib) return out;
  }
  return out;
}

// ---- the summary -------------------------------------------------------------------------

struct RunOutcome {
  std::string status = "running";
  bool finished = false;
  std::string message;
  double time = 0.0;
  SimulationStatistics statistics;
  bool have_statistics = false;  // false when the run ended by an exception (interrupt)
  double wall_time = 0.0;
  std::vector<std::string> warnings;  // Simulator::warnings(): shapes and pairs left out of contact
};

nlohmann::ordered_json number_or_null(double x) {
  return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr);
}

// Every trajectory column, in trajectory.csv's order (q_0 … q_{nq−1}, v_0 …
// v_{nv−1}), keyed by its name: the model, joint and component it holds.
nlohmann::ordered_json world_coordinates(const World& w) {
  const Model& model = w.model();
  std::vector<nlohmann::ordered_json> q(static_cast<std::size_t>(model.nq())), v(static_cast<std::size_t>(model.nv()));
  for (const WorldModel& m : w.models()) {
    const std::string prefix = m.name + "/";
    for (int i = m.first_body; i < m.first_body + m.nbodies; ++i) {
      const Joint& joint = model.joint(i);
      const std::string name =
          joint.name.compare(0, prefix.size(), prefix) == 0 ? joint.name.substr(prefix.size()) : joint.name;
      const nlohmann::ordered_json columns = joint_coordinates(joint, m.name, name);
      for (const nlohmann::ordered_json& entry : columns) {
        const std::string column = entry["column"].get<std::string>();
        const auto k = static_cast<std::size_t>(std::stoi(column.substr(2)));
        (column[0] == 'q' ? q : v).at(k) = entry;
      }
    }
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto* list : {&q, &v}) {
    for (const nlohmann::ordered_json& entry : *list) {
      if (!entry.is_null()) out[entry["column"].get<std::string>()] = entry;
    }
  }
  return out;
}

nlohmann::ordered_json summary_json(const Scenario& scenario, const SimulationOptions& options, const RunOutcome& run,
                                    const CsvRecorder* recorder, const fs::path& dir, const std::string& world_path,
                                    const PlotOutcome* plots, const PageOutcome* replay = nullptr) {
  const World& w = scenario.world;
  const SimulationStatistics& st = run.statistics;
  nlohmann::ordered_json j;
  j["status"] = run.status;
  j["finished"] = run.finished;
  j["message"] = run.message;
  j["warnings"] = run.warnings;
  j["time"] = number_or_null(run.time);
  j["duration"] = options.duration;
  // Counts are null when the simulator did not report them (an interrupted run);
  // the energies then come from the first and last trajectory rows.
  const auto count = [&](long n) { return run.have_statistics ? nlohmann::ordered_json(n) : nlohmann::ordered_json(nullptr); };
  j["steps"] = count(st.steps);
  j["rhs_evaluations"] = count(st.rhs_evaluations);
  j["events"] = count(st.events);
  j["impacts"] = count(st.impacts);
  j["lcp_solves"] = count(st.lcp_solves);
  j["projections"] = count(st.projections);
  j["fallbacks"] = count(st.fallbacks);
  j["fallback_time"] = run.have_statistics ? number_or_null(st.fallback_time) : nlohmann::ordered_json(nullptr);
  j["max_penetration"] = run.have_statistics ? number_or_null(st.max_penetration) : nlohmann::ordered_json(nullptr);
  j["max_limit_violation"] = run.have_statistics ? number_or_null(st.max_limit_violation) : nlohmann::ordered_json(nullptr);
  const bool from_recorder = !run.have_statistics && recorder;
  j["energy_start"] = number_or_null(from_recorder ? recorder->first_energy : st.energy_start);
  j["energy_end"] = number_or_null(from_recorder ? recorder->last_energy : st.energy_end);
  j["wall_time"] = run.wall_time;
  j["real_time_factor"] = run.wall_time > 0.0 ? number_or_null(run.time / run.wall_time) : nlohmann::ordered_json(nullptr);
  j["scheme"] = to_string(options.scheme);
  j["integrator"] = to_string(options.integrator);
  j["time_stepping_rule"] = to_string(options.time_stepping_rule);
  j["nq"] = w.model().nq();
  j["nv"] = w.model().nv();
  nlohmann::ordered_json models = nlohmann::ordered_json::array();
  for (const WorldModel& m : w.models()) {
    models.push_back({{"name", m.name},
                      {"urdf", m.source},
                      {"q_index", m.q_index},
                      {"nq", m.nq},
                      {"v_index", m.v_index},
                      {"nv", m.nv}});
  }
  j["models"] = models;
  j["coordinates"] = world_coordinates(w);
  j["world"] = world_path;
  {
    std::error_code ec;
    const fs::path absolute = fs::absolute(world_path, ec);
    j["world_absolute"] = ec ? world_path : absolute.lexically_normal().string();
  }
  j["output_dir"] = dir.string();
  if (scenario.controller) {
    const PdController& pd = *scenario.controller;
    const auto list = [](const VectorX& x) {
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (Eigen::Index i = 0; i < x.size(); ++i) a.push_back(number_or_null(x(i)));
      return a;
    };
    j["controller"] = {{"type", "pd"},
                       {"rate", 1.0 / scenario.controller_period},
                       {"kp", list(pd.kp)},
                       {"kd", list(pd.kd)},
                       {"target", list(pd.q_target)},
                       {"torque_limits", options.torque_limits},
                       {"effort_limit", list(w.model().effort_limit())},
                       {"file", kController}};
  } else {
    j["controller"] = nullptr;
  }
  j["output_rate"] = options.output_rate;
  j["samples"] = recorder ? recorder->samples : 0;
  j["event_rows"] = recorder ? recorder->event_rows : 0;
  j["contact_rows"] = recorder ? recorder->contact_rows : 0;
  j["files"] = {{"trajectory", kTrajectory}, {"events", kEvents}, {"contacts", kContacts}, {"energy", kEnergy}};
  if (fs::exists(dir / kContactPoints)) j["files"]["contact_points"] = kContactPoints;
  if (scenario.controller) j["files"]["controller"] = kController;
  if (replay && replay->written) {
    j["replay"] = kReplay;
    j["replay_frames"] = replay->frames;
    j["replay_bytes"] = replay->bytes;
  } else {
    j["replay"] = nullptr;
    j["replay_message"] = replay ? replay->message : "not written yet";
  }
  if (plots) {
    j["plots"] = plots->files;
    if (!plots->message.empty()) j["plots_message"] = plots->message;
  } else {
    j["plots"] = nlohmann::ordered_json::array();
  }
  return j;
}

// sensitivity.json: Φ = ∂x(time_end)/∂x(time_start), rows and columns named
// (dq_i along the velocity coordinates, then v_i), as nested row lists.
void write_sensitivity(const fs::path& dir, const Simulator& sim) {
  const SensitivityReport r = sim.sensitivity();
  const int nv = static_cast<int>(r.state_transition.rows() / 2);
  nlohmann::ordered_json j;
  j["time_start"] = r.time_start;
  j["time_end"] = r.time_end;
  j["valid"] = r.invalid.empty();
  if (!r.invalid.empty()) j["invalid"] = r.invalid;
  j["saltations"] = r.saltations;
  j["field_evaluations"] = r.field_evaluations;
  j["convention"] =
      "x = (dq, v): dq along the velocity coordinates (q + dq = integrate(q, dq), a free-flyer's body twist [dw; dv]); "
      "state_transition[i][k] = d x_i(time_end) / d x_k(time_start)";
  nlohmann::ordered_json names = nlohmann::ordered_json::array();
  for (int i = 0; i < nv; ++i) names.push_back("dq_" + std::to_string(i));
  for (int i = 0; i < nv; ++i) names.push_back("v_" + std::to_string(i));
  j["coordinates"] = names;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (Eigen::Index i = 0; i < r.state_transition.rows(); ++i) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (Eigen::Index k = 0; k < r.state_transition.cols(); ++k) row.push_back(r.state_transition(i, k));
    rows.push_back(row);
  }
  j["state_transition"] = rows;
  write_file_atomically(dir / kSensitivity, j.dump(2) + "\n");
}

void write_summary(const fs::path& dir, const nlohmann::ordered_json& j) {
  write_file_atomically(dir / kSummary, j.dump(2) + "\n");
}

// The --out directory: created if missing, refused if it is a file or not writable.
void create_output_directory(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    throw ArgumentError("--out " + dir.string() + " exists and is not a directory");
  }
  fs::create_directories(dir, ec);
  if (ec) throw ArgumentError("--out " + dir.string() + ": cannot create the directory: " + ec.message());
  if (access(dir.c_str(), W_OK) != 0) throw ArgumentError(system_error("--out " + dir.string() + " is not writable"));
}

void prepare_output_directory(const fs::path& dir) {
  std::error_code ec;
  create_output_directory(dir);
  // Outputs of an earlier run would pass for this run's: remove them.
  for (const char* f : {kTrajectory, kEvents, kContacts, kEnergy, kSummary, kReplay, kContactPoints, kController, kSensitivity}) {
    fs::remove(dir / f, ec);
  }
  for (const char* f : kPlots) fs::remove(dir / f, ec);
}

}  // namespace

namespace {

// What the batch summary lists of one world.
struct WorldReport {
  std::string world;       // as given on the command line
  std::string output_dir;  // empty until created
  std::string status = "pending";
  std::string message;
  double time = std::nan(""), duration = std::nan(""), wall_time = std::nan("");
  double elapsed = std::nan("");  // the whole world: load, run, outputs, replay, plots [s]
  std::optional<long> events;
  int exit_code = 0;
};

// One world, start to end: load, run, write its outputs into `dir`, report
// on `out` and `err`. Alone (in_batch false) it resets and catches the
// signals itself; in a batch the caller does, once for all worlds. `report`,
// if given, receives what the batch summary lists (filled as far as the run
// got, also when this throws).
int simulate_world(const SimulateArgs& args, const std::string& world_path, const fs::path& dir, bool in_batch,
                   std::ostream& out, std::ostream& err, WorldReport* report) {
  WorldFileOptions world_options;
  if (args.inertia) world_options.inertia = parse_inertia_policy(*args.inertia);
  world_options.package_dirs = args.package_dirs;
  Scenario scenario = load_world(world_path, world_options);
  SimulationOptions options = scenario.options;
  if (args.duration) {
    if (!(std::isfinite(*args.duration) && *args.duration > 0.0)) {
      throw ArgumentError("--duration must be a positive number of seconds, not " + short_number(*args.duration));
    }
    options.duration = *args.duration;
  }
  if (args.sensitivity) options.sensitivity = true;
  if (report) report->duration = options.duration;
  const World& world = scenario.world;
  Simulator sim(world, options);
  std::unique_ptr<ControllerProbe> probe;
  if (scenario.controller) {
    probe = std::make_unique<ControllerProbe>(world.model(), scenario.controller->function(world.model()),
                                              options.torque_limits);
    sim.set_controller(probe->function(), scenario.controller_period);
  }

  prepare_output_directory(dir);
  if (report) report->output_dir = dir.string();

  RunOutcome run;
  // Before the run: what the loaders accepted with a warning (inertias,
  // mimic joints) and shapes or pairs left out of contact.
  run.warnings = world.model().warnings();
  run.warnings.insert(run.warnings.end(), sim.warnings().begin(), sim.warnings().end());
  for (const std::string& w : run.warnings) err << "plume: warning: " << one_line(w) << "\n";
  write_summary(dir, summary_json(scenario, options, run, nullptr, dir, world_path, nullptr));

  auto recorder = std::make_unique<CsvRecorder>(dir, world.model().nq(), world.model().nv(), probe.get());
  if (!in_batch) g_signal = 0;
  const auto wall0 = std::chrono::steady_clock::now();
  {
    std::optional<SignalGuard> guard;
    if (!in_batch) guard.emplace();
    try {
      const SimulationResult result = sim.run_until(options.duration, recorder.get());
      run.status = to_string(result.status);
      run.finished = result.status == SimulationStatus::Finished;
      run.message = one_line(result.message);
      run.time = result.time;
      run.statistics = result.statistics;
      run.have_statistics = true;
      // The trajectory ends with the state where the run stopped (the end
      // time is not always on the output grid; a failure never is).
      if (sim.time() > recorder->last_time || recorder->samples == 0) {
        recorder->sample(sim.time(), sim.q(), sim.v(), sim.energy());
      }
    } catch (const Interrupted&) {
      run.time = recorder->last_time;
    } catch (const std::exception& e) {
      // Not a status the simulator reported but an exception out of it: the
      // run failed all the same, and what it recorded is kept.
      run.status = to_string(SimulationStatus::Failed);
      run.message = one_line(std::string("the simulator threw: ") + e.what());
      run.time = recorder->last_time;
    }
  }
  run.wall_time = run.statistics.wall_time > 0.0
                      ? run.statistics.wall_time
                      : std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const int signo = g_signal;
  if (signo != 0) {
    run.status = "interrupted";
    run.finished = false;
    run.message = std::string("interrupted by ") + (signo == SIGINT ? "SIGINT" : signo == SIGTERM ? "SIGTERM" : "a signal") +
                  " at t = " + short_number(run.time) + " s" + (run.message.empty() ? "" : " (" + run.message + ")");
  }
  recorder->commit();
  if (options.sensitivity) write_sensitivity(dir, sim);
  // The outcome is on disk before the plots are drawn (they may take a while).
  PlotOutcome pending;
  pending.message = "not drawn yet";
  write_summary(dir, summary_json(scenario, options, run, recorder.get(), dir, world_path, &pending));

  // Contact points placed (for the plots and the replay): a failure is reported, not fatal.
  std::string points_problem;
  try {
    points_problem = write_contact_points(world, dir);
  } catch (const std::exception& e) {
    points_problem = one_line(e.what());
  }
  if (!points_problem.empty()) err << "plume: warning: " << kContactPoints << " not written: " << points_problem << "\n";

  PageOutcome replay;
  if (args.no_replay) {
    replay.message = "disabled by --no-replay";
  } else {
    try {
      replay = write_replay_page(world, dir, summary_json(scenario, options, run, recorder.get(), dir, world_path, &pending),
                                 args.package_dirs);
    } catch (const std::exception& e) {
      replay.message = one_line(e.what());
    }
  }
  write_summary(dir, summary_json(scenario, options, run, recorder.get(), dir, world_path, &pending, &replay));

  PlotOutcome plots;
  if (args.no_plots) {
    plots.message = "disabled by --no-plots";
  } else if (signo == 0) {
    plots = draw_plots(dir);
  } else {
    plots.message = "not drawn: the run was interrupted";
  }
  write_summary(dir, summary_json(scenario, options, run, recorder.get(), dir, world_path, &plots, &replay));

  // The report.
  const SimulationStatistics& st = run.statistics;
  out << "plume simulate " << world_path << ": " << world.models().size()
            << (world.models().size() == 1 ? " model" : " models") << ", nq = " << world.model().nq()
            << ", nv = " << world.model().nv() << ", " << to_string(options.scheme) << " / "
            << to_string(options.integrator) << "\n";
  out << "  status: " << run.status << " at t = " << short_number(run.time) << " s of "
            << short_number(options.duration) << " s\n";
  if (run.have_statistics) {
    out << "  events: " << st.events << " (" << st.impacts << " impacts), steps: " << st.steps
              << ", LCP solves: " << st.lcp_solves << "\n";
    if (st.fallbacks > 0 && options.scheme == Scheme::TimeStepping) {
      out << "  friction-box fallbacks: " << st.fallbacks
          << " (force problems Lemke left unsolved, solved with box friction by projected Gauss-Seidel)\n";
    } else if (st.fallbacks > 0) {
      out << "  velocity-level fallbacks: " << st.fallbacks << " (" << short_number(st.fallback_time)
                << " s; the force LCP was left unsolved there, see events.csv kind fallback)\n";
    }
  }
  out << "  wall time: " << short_number(run.wall_time) << " s, real-time factor: "
            << (run.wall_time > 0.0 ? short_number(run.time / run.wall_time) + "x" : std::string("n/a")) << "\n";
  if (run.have_statistics) {
    out << "  max penetration: " << short_number(st.max_penetration) << " m";
    if (st.max_limit_violation > 0.0) out << " (joint limits overrun by up to " << short_number(st.max_limit_violation) << ")";
    out << ", energy: "
              << short_number(st.energy_start) << " J -> " << short_number(st.energy_end) << " J\n";
  } else {
    out << "  energy: " << short_number(recorder->first_energy) << " J -> "
              << short_number(recorder->last_energy) << " J\n";
  }
  out << "  outputs: " << (dir / "").string() << " (" << kTrajectory << ", " << kEvents << ", " << kContacts
            << ", " << kEnergy << (fs::exists(dir / kContactPoints) ? std::string(", ") + kContactPoints : "")
            << (probe ? std::string(", ") + kController : "") << ", " << kSummary << ")\n";
  if (replay.written) {
    out << "  replay: " << (dir / kReplay).string() << " (" << replay.frames << " frames, "
              << short_number(static_cast<double>(replay.bytes) / 1e6) << " MB; open it in a browser)\n";
  } else {
    out << "  replay: none (" << replay.message << ")\n";
  }
  if (!plots.files.empty()) {
    out << "  plots:";
    for (std::size_t i = 0; i < plots.files.size(); ++i) {
      out << (i ? ", " : " ") << (dir / plots.files[i]).string();
    }
    out << "\n";
  } else {
    out << "  plots: none (" << plots.message << ")\n";
  }
  out.flush();

  const int code = signo != 0 ? 128 + signo : !run.finished ? 3 : 0;
  if (report) {
    report->status = run.status;
    report->message = run.message;
    report->time = run.time;
    report->wall_time = run.wall_time;
    if (run.have_statistics) report->events = st.events;
    report->exit_code = code;
  }
  if (signo != 0) {
    err << "plume: " << run.message << "; partial outputs in " << dir.string() << "\n";
  } else if (!run.finished) {
    err << "plume: simulation stopped at t = " << short_number(run.time) << " s (" << run.status
              << "): " << run.message << "\n";
  }
  return code;
}

// ---- several worlds: plume simulate A.xml B.xml … --jobs N ------------------------------

const char* const kBatchSummary = "batch_summary.json";

// Each world's output directory inside --out: its file's stem ("quadruped_standing"),
// or STEM-2, STEM-3, … after the first world of that stem; never the batch summary's name.
std::vector<std::string> output_names(const std::vector<std::string>& worlds) {
  std::set<std::string> taken{kBatchSummary};
  std::vector<std::string> names;
  for (const std::string& w : worlds) {
    std::string stem = fs::path(w).stem().string();
    if (stem.empty() || stem == "." || stem == "..") stem = "world";
    std::string name = stem;
    for (int k = 2; taken.count(name) > 0; ++k) name = stem + "-" + std::to_string(k);
    taken.insert(name);
    names.push_back(name);
  }
  return names;
}

nlohmann::ordered_json batch_summary_json(const std::vector<WorldReport>& reports, int jobs, const fs::path& dir,
                                          const std::string& status, double elapsed) {
  nlohmann::ordered_json j;
  j["status"] = status;
  j["jobs"] = jobs;
  j["output_dir"] = dir.string();
  nlohmann::ordered_json worlds = nlohmann::ordered_json::array();
  long finished = 0, events = 0;
  double simulated = 0.0, simulation_wall = 0.0, world_elapsed = 0.0;
  for (const WorldReport& r : reports) {
    nlohmann::ordered_json w;
    w["world"] = r.world;
    {
      std::error_code ec;
      const fs::path absolute = fs::absolute(r.world, ec);
      w["world_absolute"] = ec ? r.world : absolute.lexically_normal().string();
    }
    w["status"] = r.status;
    w["message"] = r.message;
    w["time"] = number_or_null(r.time);
    w["duration"] = number_or_null(r.duration);
    w["wall_time"] = number_or_null(r.wall_time);
    w["elapsed"] = number_or_null(r.elapsed);
    w["events"] = r.events ? nlohmann::ordered_json(*r.events) : nlohmann::ordered_json(nullptr);
    w["exit_code"] = r.exit_code;
    if (r.output_dir.empty()) {
      w["output_dir"] = nullptr;
      w["summary"] = nullptr;
    } else {
      w["output_dir"] = r.output_dir;
      w["summary"] = (fs::path(r.output_dir) / kSummary).string();
    }
    worlds.push_back(w);
    if (r.status == "finished") ++finished;
    if (std::isfinite(r.time)) simulated += r.time;
    if (std::isfinite(r.wall_time)) simulation_wall += r.wall_time;
    if (std::isfinite(r.elapsed)) world_elapsed += r.elapsed;
    if (r.events) events += *r.events;
  }
  j["worlds"] = worlds;
  j["totals"] = {{"worlds", reports.size()},
                 {"finished", finished},
                 {"failed", static_cast<long>(reports.size()) - finished},
                 {"simulated_time", simulated},
                 {"simulation_wall_time", simulation_wall},
                 {"events", events},
                 {"wall_time", number_or_null(elapsed)}};
  const bool timed = std::isfinite(elapsed) && elapsed > 0.0;
  j["throughput"] = {
      {"worlds_per_second", timed ? number_or_null(static_cast<double>(reports.size()) / elapsed) : nullptr},
      {"simulated_seconds_per_second", timed ? number_or_null(simulated / elapsed) : nullptr},
      {"concurrency", timed ? number_or_null(world_elapsed / elapsed) : nullptr}};
  return j;
}

int simulate_worlds(const SimulateArgs& args) {
  if (args.duration && !(std::isfinite(*args.duration) && *args.duration > 0.0)) {
    throw ArgumentError("--duration must be a positive number of seconds, not " + short_number(*args.duration));
  }
  if (args.jobs < 0) throw ArgumentError("--jobs must be at least 1, not " + std::to_string(args.jobs));
  const unsigned hw = std::thread::hardware_concurrency();
  const int jobs = args.jobs > 0 ? args.jobs : hw > 0 ? static_cast<int>(hw) : 1;
  const fs::path dir = args.out.empty() ? fs::path("plume_out") : fs::path(args.out);
  create_output_directory(dir);
  {
    std::error_code ec;
    fs::remove(dir / kBatchSummary, ec);
  }
  const std::vector<std::string> names = output_names(args.worlds);
  std::vector<WorldReport> reports(args.worlds.size());
  for (std::size_t i = 0; i < reports.size(); ++i) reports[i].world = args.worlds[i];
  process_umask();  // read before the workers create files
  std::mutex mutex;  // guards reports, std::cout, std::cerr and the batch summary file
  write_file_atomically(dir / kBatchSummary, batch_summary_json(reports, jobs, dir, "running", std::nan("")).dump(2) + "\n");

  g_signal = 0;
  SignalGuard guard;
  const auto start = std::chrono::steady_clock::now();
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next.fetch_add(1); i < reports.size(); i = next.fetch_add(1)) {
      const std::string& world = args.worlds[i];
      WorldReport r;
      r.world = world;
      std::ostringstream out, err;
      const auto t0 = std::chrono::steady_clock::now();
      if (g_signal != 0) {
        r.status = "not_run";
        r.message = "interrupted before it started";
        r.exit_code = 128 + g_signal;
      } else {
        {
          std::lock_guard<std::mutex> lock(mutex);
          reports[i].status = "running";
        }
        try {
          r.exit_code = simulate_world(args, world, dir / names[i], true, out, err, &r);
        } catch (const Error& e) {
          r.status = "error";
          r.message = one_line(e.what());
          r.exit_code = 1;
          // Loading errors name the file already; others get it in front.
          err << "plume: error: " << (r.message.find(world) == std::string::npos ? world + ": " : std::string())
              << r.message << "\n";
        } catch (const std::exception& e) {
          r.status = "error";
          r.message = one_line(std::string("unexpected error: ") + e.what());
          r.exit_code = 2;
          err << "plume: unexpected error: " << world << ": " << e.what() << "\n";
        } catch (...) {
          r.status = "error";
          r.message = "unexpected error: an exception that is not a std::exception";
          r.exit_code = 2;
          err << "plume: unexpected error: " << world << ": " << r.message << "\n";
        }
        r.elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      std::lock_guard<std::mutex> lock(mutex);
      reports[i] = r;
      std::cout << out.str();
      std::cout.flush();
      std::cerr << err.str();
      try {
        write_file_atomically(dir / kBatchSummary, batch_summary_json(reports, jobs, dir, "running", std::nan("")).dump(2) + "\n");
      } catch (const std::exception& e) {
        std::cerr << "plume: warning: " << kBatchSummary << " not updated: " << one_line(e.what()) << "\n";
      }
    }
  };
  const std::size_t threads = std::min(reports.size(), static_cast<std::size_t>(jobs));
  std::vector<std::thread> pool;
  for (std::size_t k = 1; k < threads; ++k) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // fewer threads: the others take the worlds
    }
  }
  worker();
  for (std::thread& t : pool) t.join();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const int signo = g_signal;
  bool any_error = false, any_internal = false, any_stopped = false;
  long finished = 0;
  double simulated = 0.0;
  std::string failed;
  for (const WorldReport& r : reports) {
    if (r.exit_code == 1) any_error = true;
    if (r.exit_code == 2) any_internal = true;
    if (r.exit_code == 3) any_stopped = true;
    if (r.status == "finished") {
      ++finished;
    } else {
      failed += (failed.empty() ? "" : ", ") + r.world + ": " + r.status;
    }
    if (std::isfinite(r.time)) simulated += r.time;
  }
  const std::string status = signo != 0 ? "interrupted" : finished == static_cast<long>(reports.size()) ? "finished" : "failed";
  write_file_atomically(dir / kBatchSummary, batch_summary_json(reports, jobs, dir, status, elapsed).dump(2) + "\n");
  std::cout << "plume simulate: " << reports.size() << " worlds on " << std::min(static_cast<std::size_t>(jobs), reports.size())
            << (jobs == 1 ? " job" : " jobs") << ": " << finished << " finished"
            << (failed.empty() ? std::string() : ", " + std::to_string(reports.size() - static_cast<std::size_t>(finished)) +
                                                     " failed (" + failed + ")")
            << "; " << short_number(simulated) << " s simulated in " << short_number(elapsed) << " s ("
            << short_number(static_cast<double>(reports.size()) / elapsed) << " worlds/s)\n";
  std::cout << "  batch summary: " << (dir / kBatchSummary).string() << "\n";
  std::cout.flush();
  if (signo != 0) return 128 + signo;
  if (any_internal) return 2;
  if (any_error) return 1;
  if (any_stopped) return 3;
  return 0;
}

}  // namespace

int run_simulate(const SimulateArgs& args) {
  if (args.worlds.size() == 1) {
    const fs::path dir = args.out.empty() ? fs::path("plume_out") : fs::path(args.out);
    return simulate_world(args, args.worlds.front(), dir, false, std::cout, std::cerr, nullptr);
  }
  return simulate_worlds(args);
}

int run_replay(const ReplayArgs& args) {
  const fs::path dir(args.dir);
  const fs::path summary_path = dir / kSummary;
  std::error_code ec;
  if (!fs::is_regular_file(summary_path, ec)) {
    throw ArgumentError(dir.string() + " holds no " + kSummary + ": give the --out directory of a plume simulate run");
  }
  nlohmann::ordered_json summary;
  try {
    std::ifstream in(summary_path);
    summary = nlohmann::ordered_json::parse(in);
  } catch (const std::exception& e) {
    throw ArgumentError(summary_path.string() + " is not valid JSON (" + one_line(e.what()) + "); run plume simulate again");
  }
  if (summary.value("status", std::string()) == "running") {
    throw ArgumentError(summary_path.string() + " says the run is still going (status \"running\"): wait for it to end");
  }
  std::string world_path = args.world;
  if (world_path.empty()) {
    for (const char* key : {"world", "world_absolute"}) {
      const std::string p = summary.value(key, std::string());
      if (!p.empty() && fs::is_regular_file(p, ec)) {
        world_path = p;
        break;
      }
    }
    if (world_path.empty()) {
      throw ArgumentError("the world file of this run (" + summary.value("world", std::string("?")) +
                          ") is not found from here: give it with --world");
    }
  }
  const Scenario scenario = load_world(world_path);
  const PageOutcome page = write_replay_page(scenario.world, dir, summary);
  if (!page.written) throw Error("replay.html not written: " + page.message);
  summary["replay"] = kReplay;
  summary["replay_frames"] = page.frames;
  summary["replay_bytes"] = page.bytes;
  summary.erase("replay_message");
  write_summary(dir, summary);
  std::cout << (dir / kReplay).string() << ": " << page.frames << " frames";
  if (page.frames < page.recorded_frames) std::cout << " (of " << page.recorded_frames << " recorded)";
  std::cout << ", " << short_number(static_cast<double>(page.bytes) / 1e6) << " MB\n";
  return 0;
}

}  // namespace plume::cli
