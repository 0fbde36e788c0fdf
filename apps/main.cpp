// The plume command-line program: argument parsing (CLI11) and dispatch.
// Exit status (README.md, "Command line"): 0 success, --help and --version;
// 1 bad input, usage errors included; 2 an unexpected error; `simulate` also
// 3 (stopped early) and 128+N (signal N).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli_common.hpp"
#include "plume/error.hpp"
#include "plume/version.hpp"

int main(int argc, char** argv) {
  using namespace plume::cli;
  CLI::App app{"plume: rigid-body dynamics, contact and simulation for robots loaded from URDF"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("plume ") + PLUME_VERSION, "Print plume's version and exit");
  const std::vector<std::string> roots{"fixed", "free", "planar"};
  // --inertia and --package-dir: how every command loads a URDF.
  const auto add_load_options = [](CLI::App* cmd, std::string& inertia, std::vector<std::string>& dirs) {
    auto* opt = cmd->add_option("--inertia", inertia,
                                "Unphysical inertias (triangle inequality, placeholder masses): strict refuses, warn "
                                "loads and lists them (default), repair raises the offending principal moment")
                    ->check(CLI::IsMember({"strict", "warn", "repair"}));
    cmd->add_option("--package-dir", dirs,
                    "Directory searched for package://NAME/ mesh URIs (it is NAME, or holds it); repeatable; "
                    "searched before ROS_PACKAGE_PATH, AMENT_PREFIX_PATH and the URDF's ancestors")
        ->allow_extra_args(false);
    return opt;
  };

  InfoArgs info;
  CLI::App* info_cmd = app.add_subcommand("info", "Print the loaded model: bodies, joints, frames, collision shapes");
  info_cmd->add_option("model", info.model, "URDF file")->required();
  info_cmd->add_option("--root", info.load.root, "Root joint: fixed, free or planar")
      ->check(CLI::IsMember(roots))
      ->default_str("fixed");
  info_cmd->add_flag("--json", info.json, "Print one JSON object");
  add_load_options(info_cmd, info.load.inertia, info.load.package_dirs);

  DynamicsArgs dyn;
  CLI::App* dyn_cmd = app.add_subcommand("dynamics", "Print H(q), C(q, q̇) and, given τ, q̈ (ABA) or, given q̈, τ (RNEA)");
  dyn_cmd->add_option("model", dyn.model, "URDF file")->required();
  dyn_cmd->add_option("--root", dyn.load.root, "Root joint: fixed, free or planar")->check(CLI::IsMember(roots))->default_str("fixed");
  dyn_cmd->add_option("--q", dyn.q, "Configuration, nq comma-separated numbers")->required();
  dyn_cmd->add_option("--v", dyn.v, "Velocity, nv comma-separated numbers (default: zero)");
  auto* tau_opt = dyn_cmd->add_option("--tau", dyn.tau, "Joint forces, nv numbers: also print q̈ = FD(q, q̇, τ)");
  auto* ddq_opt = dyn_cmd->add_option("--ddq", dyn.ddq, "Joint accelerations, nv numbers: also print τ = ID(q, q̇, q̈)");
  tau_opt->excludes(ddq_opt);
  add_load_options(dyn_cmd, dyn.load.inertia, dyn.load.package_dirs);
  dyn_cmd->add_flag("--derivatives", dyn.derivatives,
                    "Also print the analytic derivatives (∂/∂q along the velocity coordinates, a free-flyer's body "
                    "twist): with --ddq dtau_dq, dtau_dv; with --tau dddq_dq, dddq_dv, dddq_dtau (nv x nv)");
  dyn_cmd->add_flag("--json", dyn.json,
                    "Print one JSON object with keys H, C, ddq, tau (and dtau_dq, dtau_dv, dddq_dq, dddq_dv, dddq_dtau "
                    "with --derivatives, each a list of nv rows)");

  BenchArgs bench;
  CLI::App* bench_cmd = app.add_subcommand("bench", "Time each dynamics algorithm on this model (mean ns per call)");
  bench_cmd->add_option("model", bench.model, "URDF file")->required();
  bench_cmd->add_option("--root", bench.load.root, "Root joint: fixed, free or planar")->check(CLI::IsMember(roots))->default_str("fixed");
  bench_cmd->add_option("--calls", bench.calls, "Calls per algorithm (default 100000)")->check(CLI::Range(1000L, 1000000000L));
  add_load_options(bench_cmd, bench.load.inertia, bench.load.package_dirs);
  bench_cmd->add_flag("--json", bench.json, "Print one JSON object with keys rnea, bias, crba, aba, ltdl, jacobian (ns)");

  SimulateArgs sim;
  double sim_duration = 0.0;
  CLI::App* sim_cmd = app.add_subcommand(
      "simulate", "Run a world file; write trajectory, events, contacts, energy (CSV), summary.json and plots into --out");
  sim_cmd->add_option("world", sim.worlds,
                      "World file (XML, docs/world_format.md); several: each is written to --out/STEM and "
                      "--out/batch_summary.json lists them")
      ->required();
  sim_cmd->add_option("--out", sim.out, "Output directory, created if missing")->default_str("plume_out");
  sim_cmd->add_option("--jobs,-j", sim.jobs,
                      "With several worlds: how many run at once (default: one per hardware thread)")
      ->check(CLI::Range(1, 4096));
  auto* sim_duration_opt = sim_cmd->add_option("--duration", sim_duration, "Simulated time [s], overrides the world file's");
  sim_cmd->add_flag("--no-plots", sim.no_plots, "Do not draw the PNG plots");
  sim_cmd->add_flag("--no-replay", sim.no_replay, "Do not write replay.html");
  sim_cmd->add_flag("--sensitivity", sim.sensitivity,
                    "Event-driven scheme: also write sensitivity.json, the state-transition matrix "
                    "d x(t_end) / d x(t_start) across the events (x = tangent dq, v)");
  std::string sim_inertia;
  auto* sim_inertia_opt = add_load_options(sim_cmd, sim_inertia, sim.package_dirs);
  sim_cmd->footer(
      "Exit status: 0 the run finished; 1 bad input; 3 the simulation stopped early (outputs written up to "
      "that point); 128+N interrupted by signal N (outputs written).\n"
      "Several worlds (plume simulate A.xml B.xml ... --jobs N): world A.xml is written to --out/A (A-2, A-3, ... "
      "when stems repeat); --out/batch_summary.json gives per world its path, status, simulated time, wall time, "
      "events and output directory, with totals and throughput. A world that cannot be read is reported by name "
      "and the others still run. Exit status: 128+N if interrupted, else 2 on an internal error, else 1 if a "
      "world could not be read or set up, else 3 if one stopped early, else 0.");

  ReplayArgs replay;
  CLI::App* replay_cmd = app.add_subcommand(
      "replay", "Write OUTDIR/replay.html (the run in 3-D, offline in a browser) from a plume simulate output directory");
  replay_cmd->add_option("outdir", replay.dir, "Output directory of plume simulate")->required();
  replay_cmd->add_option("--world", replay.world, "World file of the run (default: the one summary.json names)");

  ViewArgs view;
  CLI::App* view_cmd = app.add_subcommand(
      "view", "Write an offline page showing the model in 3-D with a slider per joint (did the URDF load right?)");
  view_cmd->add_option("model", view.model, "URDF file")->required();
  view_cmd->add_option("--root", view.load.root, "Root joint: fixed, free or planar")
      ->check(CLI::IsMember(roots))
      ->default_str("fixed");
  view_cmd->add_option("--srdf", view.srdf, "SRDF file: start from its <group_state> (the first, or --state)");
  view_cmd->add_option("--state", view.state, "Name of the SRDF <group_state> to show")->needs("--srdf");
  view_cmd->add_option("--q", view.q, "Configuration shown, nq comma-separated numbers (default: neutral)");
  view_cmd->add_option("--out", view.out, "The page (FILE.html) or a directory for DIR/view.html")
      ->default_str("view.html");
  add_load_options(view_cmd, view.load.inertia, view.load.package_dirs);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help, --help-all and --version print to stdout and exit 0.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    // A usage error is bad input: one line like plume's other errors, status 1.
    std::string subcommand;  // "simulate" for `plume simulate --duration abc`
    for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
      sub = sub->get_subcommands().front();
      subcommand += (subcommand.empty() ? "" : " ") + sub->get_name();
    }
    std::string what = e.what();
    if (subcommand.empty()) {
      // CLI11 says "A subcommand is required" for `plume`, `plume bogus` and `plume --bogus`.
      std::string names;
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        names += (names.empty() ? "" : ", ") + sub->get_name();
      }
      what = app.remaining().empty() ? "a subcommand is required (" + names + ")"
                                     : "unknown subcommand or option '" + app.remaining().front() + "' (expected " +
                                           names + ")";
    }
    std::cerr << "plume: error: " << (subcommand.empty() ? "" : subcommand + ": ") << printable(what) << "; see 'plume "
              << (subcommand.empty() ? "" : subcommand + " ") << "--help'\n";
    return 1;
  }
  try {
    if (app.got_subcommand(info_cmd)) return run_info(info);
    if (app.got_subcommand(dyn_cmd)) return run_dynamics(dyn);
    if (app.got_subcommand(bench_cmd)) return run_bench(bench);
    if (app.got_subcommand(sim_cmd)) {
      if (sim_duration_opt->count() > 0) sim.duration = sim_duration;
      if (sim_inertia_opt->count() > 0) sim.inertia = sim_inertia;
      return run_simulate(sim);
    }
    if (app.got_subcommand(replay_cmd)) return run_replay(replay);
    if (app.got_subcommand(view_cmd)) return run_view(view);
  } catch (const plume::Error& e) {
    std::cerr << "plume: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "plume: unexpected error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
