// peer_compare: plume against MuJoCo and DART on the same URDF models.
//
//   build/bench/peers/peer_compare [--json FILE] [--calls N] [--repeats R] [--no-timing]
//
// For arm7 (fixed base), quadruped and humanoid (free-flyer root) it loads the
// same URDF in plume and in each peer that was found at configure time, maps 64
// seeded random states (plume's random_configuration; v, a, τ uniform in
// [−1, 1]) into each peer's conventions, then
//  1. cross-checks H (CRBA), C (bias forces), τ = RNEA(q, v, a), q̈ = ABA(q, v, τ)
//     and the LocalWorldAligned Jacobian of one foot/tool frame, all states,
//     mapped back into plume's conventions (PASS/FAIL with the largest error);
//  2. times plume (unchecked and checked entry points) and the peers' call
//     chains in this process: mean ns per call over N calls (default 1e5)
//     cycling through the 64 states after a warm-up, measured as this thread's
//     CPU time (equal to wall time on an idle machine, and not inflated by
//     other processes on a busy one); the best of R interleaved repeats
//     (default 3) of that mean is reported;
//  3. prints a table (algorithm × model: ns per call and plume/peer ratios)
//     and writes it as JSON with --json (model → algorithm → {plume_ns,
//     plume_checked_ns, mujoco_ns, dart_ns, ratio_mujoco, ratio_dart}; a peer
//     that was skipped has null entries).
// The exit status is 1 when a cross-check fails.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "bench_common.hpp"
#include "peer_common.hpp"
#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/error.hpp"

using namespace plume;
using namespace plume::peers;

namespace {

constexpr int kStates = 64;

/// Cross-check tolerance on the error relative to max(1, max |reference|).
/// Both sides evaluate the same model in double precision by different
/// recursions; rounding differences are O(n ε) for H, C, τ and J (≈ 1e-15
/// observed) and O(n ε cond H) for q̈ (≤ 6e-13 observed, ABA on the humanoid).
/// 1e-9 leaves a wide margin yet catches any mapping or modelling mistake
/// (those show up at 1e-3 … 1e0). MuJoCo is held to the same bound: its model
/// parameters are restored to full precision after the MJCF round trip (with
/// the 6-digit MJCF numbers the errors reach 1e-9 … 1e-6 and ABA fails).
constexpr double kTolerance = 1e-9;

/// What each table entry times (printed under the table).
constexpr const char* kChains =
    "chains timed, each call from the next of the states:\n"
    "  plume   plume::unchecked::{rnea, bias_forces, crba, aba, frame_jacobian (LocalWorldAligned)};\n"
    "          'checked' = the same through plume::{rnea, ...}, which validate their arguments\n"
    "  MuJoCo  copy qpos, qvel (and qacc for rnea) into mjData, then\n"
    "          rnea           mj_kinematics, mj_comPos, mj_comVel, mj_rne(flg_acc=1)\n"
    "          bias_forces    mj_kinematics, mj_comPos, mj_comVel, mj_rne(flg_acc=0) -> qfrc_bias\n"
    "          crba           mj_kinematics, mj_comPos, mj_crb (MuJoCo's sparse qM; no mj_fullM)\n"
    "          aba            mj_kinematics, mj_comPos, mj_crb, mj_factorM, mj_comVel, mj_rne(flg_acc=0),\n"
    "                         mju_sub (tau - qfrc_bias), mj_solveM -> qacc\n"
    "          frame_jacobian mj_kinematics, mj_comPos, mj_jacBody (origin of the frame's body)\n"
    "  DART    Skeleton::setPositions, setVelocities (they invalidate DART's caches), then\n"
    "          rnea           setAccelerations, computeInverseDynamics(), getForces()\n"
    "          bias_forces    getCoriolisAndGravityForces()\n"
    "          crba           getMassMatrix()\n"
    "          aba            setForces, computeForwardDynamics(), getAccelerations()\n"
    "          frame_jacobian getJacobian(body node, Frame::World())\n";

struct Options {
  std::string json;
  long calls = 100000;
  int repeats = 3;
  bool timing = true;
};

[[noreturn]] void usage(int status) {
  std::fprintf(status ? stderr : stdout,
               "usage: peer_compare [--json FILE] [--calls N] [--repeats R] [--no-timing]\n"
               "  --json FILE   also write the timings as JSON\n"
               "  --calls N     timed calls per measurement (default 100000)\n"
               "  --repeats R   measurements per entry, the fastest mean is kept (default 3)\n"
               "  --no-timing   cross-checks only\n");
  std::exit(status);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(2);
      return argv[++i];
    };
    if (a == "--json") {
      o.json = value();
    } else if (a == "--calls") {
      o.calls = std::atol(value().c_str());
      if (o.calls < 1) usage(2);
    } else if (a == "--repeats") {
      o.repeats = std::atoi(value().c_str());
      if (o.repeats < 1) usage(2);
    } else if (a == "--no-timing") {
      o.timing = false;
    } else if (a == "--help" || a == "-h") {
      usage(0);
    } else {
      usage(2);
    }
  }
  return o;
}

/// The link whose frame Jacobian is compared and timed.
std::string jacobian_frame(const std::string& label) {
  if (label == "arm7") return "tool";
  if (label == "quadruped") return "LF_foot";
  return "left_foot";
}

Case make_case(const bench::BenchModel& bm, const Model& m) {
  Case c;
  c.label = bm.label;
  c.urdf_path = std::string(PLUME_MODELS_DIR) + "/" + bm.file;
  c.floating = bm.root == urdf::RootJoint::FreeFlyer;
  c.frame = jacobian_frame(bm.label);
  c.model = &m;
  const bench::States s = bench::random_states(m, kStates);
  c.q = s.q;
  c.v = s.v;
  c.a = s.a;
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k = 0; k < kStates; ++k) {
    VectorX tau(m.nv());
    for (int i = 0; i < m.nv(); ++i) tau(i) = u(g);
    c.tau.push_back(tau);
  }
  return c;
}

/// max |x − ref| / max(1, max |ref|), and the unscaled max |x − ref|.
struct MaxError {
  double scaled = 0.0, abs = 0.0;
  int state = -1;
  void add(const MatrixX& x, const MatrixX& ref, int k) {
    const double e = (x - ref).cwiseAbs().maxCoeff();
    const double s = e / std::max(1.0, ref.cwiseAbs().maxCoeff());
    if (!(s <= scaled)) {  // also catches NaN
      scaled = std::isnan(s) ? INFINITY : s;
      abs = e;
      state = k;
    }
  }
};

/// Every compared quantity on every state, in plume's conventions.
using Results = std::map<Algo, std::vector<MatrixX>>;

Results evaluate_plume(const Case& c) {
  const Model& m = *c.model;
  Data d(m);
  const int frame = m.get_frame(c.frame);
  Results r;
  for (int k = 0; k < c.nstates(); ++k) {
    r[Algo::Crba].push_back(crba(m, d, c.q[k]));
    r[Algo::Bias].push_back(bias_forces(m, d, c.q[k], c.v[k]));
    r[Algo::Rnea].push_back(rnea(m, d, c.q[k], c.v[k], c.a[k]));
    r[Algo::Aba].push_back(aba(m, d, c.q[k], c.v[k], c.tau[k]));
    r[Algo::Jacobian].push_back(frame_jacobian(m, d, c.q[k], frame, ReferenceFrame::LocalWorldAligned));
  }
  return r;
}

Results evaluate_peer(const Case& c, Peer& peer) {
  Results r;
  for (int k = 0; k < c.nstates(); ++k) {
    r[Algo::Crba].push_back(peer.mass_matrix(k));
    r[Algo::Bias].push_back(peer.bias(k));
    r[Algo::Rnea].push_back(peer.inverse_dynamics(k));
    r[Algo::Aba].push_back(peer.forward_dynamics(k));
    r[Algo::Jacobian].push_back(peer.frame_jacobian(k));
  }
  return r;
}

/// Prints one PASS/FAIL line per quantity for `what` against `ref`; false if any fails.
bool report(const Case& c, const std::string& what, const Results& x, const Results& ref) {
  bool ok = true;
  for (Algo a : kAlgos) {
    MaxError e;
    for (int k = 0; k < c.nstates(); ++k) e.add(x.at(a)[k], ref.at(a)[k], k);
    const bool pass = e.scaled <= kTolerance;
    ok = ok && pass;
    std::printf("  check %-9s %-14s %-15s %s  max error %.2e (relative %.2e, state %d)\n", c.label.c_str(),
                what.c_str(), to_string(a), pass ? "PASS" : "FAIL", e.abs, e.scaled, e.state);
  }
  return ok;
}

struct Row {
  std::optional<double> plume, plume_checked, mujoco, dart;
};

std::string cell(const std::optional<double>& x, const char* fmt) {
  if (!x) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, *x);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
#ifdef PLUME_PEER_MUJOCO
  const bool have_mujoco = true;
#else
  const bool have_mujoco = false;
  std::printf("MuJoCo: not built in (libmujoco-dev was not found at configure time): skipped\n");
#endif
#ifdef PLUME_PEER_DART
  const bool have_dart = true;
#else
  const bool have_dart = false;
  std::printf("DART: not built in (libdart-dev / libdart-utils-urdf-dev were not found at configure time): skipped\n");
#endif

  bool all_ok = true;
  std::vector<std::string> labels;
  std::map<std::string, std::map<Algo, Row>> table;
  try {
    for (const bench::BenchModel& bm : bench::bench_models()) {
      const Model m = bench::load_bench_model(bm);
      const Case c = make_case(bm, m);
      labels.push_back(c.label);
      std::printf("%s: nq %d, nv %d, %s root, Jacobian of frame '%s'\n", c.label.c_str(), m.nq(), m.nv(),
                  c.floating ? "free-flyer" : "fixed", c.frame.c_str());

      std::unique_ptr<Peer> mujoco, dart;
      std::string why;
      if (have_mujoco) {
        mujoco = make_mujoco_peer(c, &why);
        if (!mujoco) std::printf("  MuJoCo: cannot load %s: %s (skipped)\n", c.label.c_str(), why.c_str());
      }
      if (have_dart) {
        dart = make_dart_peer(c, &why);
        if (!dart) std::printf("  DART: cannot load %s: %s (skipped)\n", c.label.c_str(), why.c_str());
      }
      // Each peer against plume; with both peers, also MuJoCo against DART:
      // when plume is off by the same amount from both, the difference is plume's.
      const Results ours = evaluate_plume(c);
      std::optional<Results> mj, dt;
      if (mujoco) mj = evaluate_peer(c, *mujoco);
      if (dart) dt = evaluate_peer(c, *dart);
      if (mj) all_ok = report(c, "MuJoCo", *mj, ours) && all_ok;
      if (dt) all_ok = report(c, "DART", *dt, ours) && all_ok;
      if (mj && dt) all_ok = report(c, "MuJoCo vs DART", *mj, *dt) && all_ok;
      if (!opt.timing) continue;

      // Repeats are interleaved (plume, checked, MuJoCo, DART, plume, …) so that a
      // busy spell of the machine does not favour one library.
      auto best = [](std::optional<double>& slot, double t) { slot = std::min(slot.value_or(INFINITY), t); };
      for (Algo a : kAlgos) {
        Row& row = table[c.label][a];
        for (int r = 0; r < opt.repeats; ++r) {
          best(row.plume, time_plume(c, a, false, opt.calls));
          best(row.plume_checked, time_plume(c, a, true, opt.calls));
          if (mujoco) best(row.mujoco, mujoco->time(a, opt.calls));
          if (dart) best(row.dart, dart->time(a, opt.calls));
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peer_compare: %s\n", e.what());
    return 2;
  }

  if (opt.timing) {
    std::printf("\nmean CPU ns per call (%ld calls cycling through %d states, best of %d); ratio = plume / peer\n",
                opt.calls, kStates, opt.repeats);
    std::printf("%-10s %-15s %10s %10s %10s %10s %10s %10s\n", "model", "algorithm", "plume", "checked", "MuJoCo",
                "DART", "/MuJoCo", "/DART");
    nlohmann::json json = nlohmann::json::object();
    for (const std::string& label : labels) {
      for (Algo a : kAlgos) {
        const Row& r = table[label][a];
        std::optional<double> rm, rd;
        if (r.mujoco) rm = *r.plume / *r.mujoco;
        if (r.dart) rd = *r.plume / *r.dart;
        std::printf("%-10s %-15s %10s %10s %10s %10s %10s %10s\n", label.c_str(), to_string(a),
                    cell(r.plume, "%.1f").c_str(), cell(r.plume_checked, "%.1f").c_str(),
                    cell(r.mujoco, "%.1f").c_str(), cell(r.dart, "%.1f").c_str(), cell(rm, "%.3f").c_str(),
                    cell(rd, "%.3f").c_str());
        auto j = [](const std::optional<double>& x) { return x ? nlohmann::json(*x) : nlohmann::json(nullptr); };
        json[label][to_string(a)] = {{"plume_ns", j(r.plume)},   {"plume_checked_ns", j(r.plume_checked)},
                                     {"mujoco_ns", j(r.mujoco)}, {"dart_ns", j(r.dart)},
                                     {"ratio_mujoco", j(rm)},  {"ratio_dart", j(rd)}};
      }
    }
    std::printf("%s", kChains);
    if (!opt.json.empty()) {
      std::ofstream out(opt.json);
      out << json.dump(2) << "\n";
      if (!out) {
        std::fprintf(stderr, "peer_compare: cannot write %s\n", opt.json.c_str());
        return 2;
      }
      std::printf("wrote %s\n", opt.json.c_str());
    }
  }
  std::printf("\ncross-checks: %s\n", all_ok ? "all PASS" : "some FAIL (see above)");
  return all_ok ? 0 : 1;
}
