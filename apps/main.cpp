// The plume command-line program: argument parsing (CLI11) and dispatch.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli_common.hpp"
#include "plume/error.hpp"

int main(int argc, char** argv) {
  using namespace plume::cli;
  CLI::App app{"plume: rigid-body dynamics, contact and simulation for robots loaded from URDF"};
  app.require_subcommand(1);
  const std::vector<std::string> roots{"fixed", "free", "planar"};

  InfoArgs info;
  CLI::App* info_cmd = app.add_subcommand("info", "Print the loaded model: bodies, joints, frames, collision shapes");
  info_cmd->add_option("model", info.model, "URDF file")->required();
  info_cmd->add_option("--root", info.root, "Root joint: fixed, free or planar")
      ->check(CLI::IsMember(roots))
      ->default_str("fixed");
  info_cmd->add_flag("--json", info.json, "Print one JSON object");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (app.got_subcommand(info_cmd)) return run_info(info);
  } catch (const plume::Error& e) {
    std::cerr << "plume: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "plume: unexpected error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
