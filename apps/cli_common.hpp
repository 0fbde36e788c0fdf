#pragma once
// Shared pieces of the plume command-line program (no CLI11 here: it is
// compiled in main.cpp only).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plume/model.hpp"
#include "plume/urdf.hpp"

namespace plume::cli {

/// How every command loads a URDF: --root, --inertia, --package-dir.
struct LoadArgs {
  std::string root = "fixed";      ///< fixed, free or planar
  std::string inertia = "warn";    ///< strict, warn or repair
  std::vector<std::string> package_dirs;
  std::string srdf;                ///< the robot's SRDF (named configurations, disabled collisions); may be empty
};

/// Loads a URDF for a command; dynamics-only commands skip collision meshes.
/// The model's warnings (inertias, meshes, mimic joints) go to stderr, one
/// line each, unless `print_warnings` is false (info prints them itself).
Model load_model(const std::string& path, const LoadArgs& load,
                 urdf::CollisionMeshes meshes = urdf::CollisionMeshes::IfFound, bool print_warnings = true);

/// `text` as quoted in a message: control characters written as \xHH, so
/// that the message stays on one line whatever the argument holds.
std::string printable(const std::string& text);

/// Parses "1,2.5,-3" strictly. Throws plume::ArgumentError naming `flag`
/// and the offending entry.
VectorX parse_vector(const std::string& text, const std::string& flag);

/// Same, and checks the length: "--q has 5 entries, expected 19 (nq of 'quadruped')".
VectorX parse_vector(const std::string& text, const std::string& flag, Eigen::Index expected,
                     const std::string& what);

/// The trajectory columns of one joint ("q_7", "v_6", … in trajectory.csv
/// order), each {column, model, joint, type, component, unit}: `model` and
/// `joint` as the user wrote them (the joint's URDF name, without the world's
/// "model/" prefix). Components per joint type (joint.hpp): revolute and
/// continuous "angle" [rad] / "angular_velocity" [rad/s]; prismatic
/// "position" [m] / "velocity" [m/s]; planar "x", "y" [m], "theta" [rad] /
/// "vx", "vy" [m/s], "omega_z" [rad/s]; free-flyer "x", "y", "z" [m] (in the
/// parent frame), "qx", "qy", "qz", "qw" [unit quaternion] / "wx", "wy", "wz"
/// [rad/s], "vx", "vy", "vz" [m/s] (body frame). Column numbers are
/// joint.q_index + k and joint.v_index + k.
nlohmann::ordered_json joint_coordinates(const Joint& joint, const std::string& model, const std::string& joint_name);

nlohmann::json to_json(const VectorX& x);
nlohmann::json to_json(const MatrixX& m);
nlohmann::json to_json(const Vec3& x);

/// Writes a primitive's dimensions into `j` (json or ordered_json), with the
/// keys `info --json` and replay.html share: sphere "radius", box "size"
/// (full edge lengths, through `vector`), cylinder and capsule "radius" and
/// "length". Meshes (and anything else) add nothing.
template <class Json, class VectorToJson>
void put_primitive_dimensions(Json& j, const Geometry& g, VectorToJson vector) {
  if (const auto* s = std::get_if<Sphere>(&g)) j["radius"] = s->radius;
  if (const auto* b = std::get_if<Box>(&g)) j["size"] = vector(b->size);
  if (const auto* c = std::get_if<Cylinder>(&g)) {
    j["radius"] = c->radius;
    j["length"] = c->length;
  }
  if (const auto* c = std::get_if<Capsule>(&g)) {
    j["radius"] = c->radius;
    j["length"] = c->length;
  }
}

struct InfoArgs {
  std::string model;
  LoadArgs load;
  bool json = false;
};
int run_info(const InfoArgs& args);

struct DynamicsArgs {
  std::string model;
  LoadArgs load;
  std::string q, v, tau, ddq;
  bool derivatives = false;  ///< --derivatives: analytic RNEA / ABA derivatives
  bool json = false;
};
int run_dynamics(const DynamicsArgs& args);

struct BenchArgs {
  std::string model;
  LoadArgs load;
  long calls = 100000;
  bool json = false;
};
int run_bench(const BenchArgs& args);

struct SimulateArgs {
  std::vector<std::string> worlds;  ///< one: today's outputs in --out; several: one directory each in --out
  std::optional<std::string> inertia;  ///< for models without <model inertia="…">
  std::vector<std::string> package_dirs;  ///< searched before each model's own package_dirs
  std::string out = "plume_out";
  std::optional<double> duration;  ///< overrides the world file's <simulate duration>
  bool no_plots = false;
  bool no_replay = false;
  bool sensitivity = false;  ///< --sensitivity: write sensitivity.json (event-driven only)
  int jobs = 0;              ///< --jobs: worlds run at once (0: one per hardware thread)
};
/// Exit status: 0 finished, 3 stopped early (status ≠ finished), 128 + signal
/// when interrupted; bad input throws (main returns 1). Several worlds: each
/// in --out/STEM (STEM-2, … when stems repeat), run on --jobs threads, and
/// --out/batch_summary.json; a world that cannot be read is reported and the
/// others run; 128 + signal, else 2 (internal error), else 1 (a world could
/// not be read or set up), else 3 (one stopped early), else 0.
int run_simulate(const SimulateArgs& args);

struct ReplayArgs {
  std::string dir;    ///< the --out directory of a finished run
  std::string world;  ///< the world file, when the one in summary.json is not found
};
/// Writes DIR/replay.html from a run's outputs (and updates summary.json's "replay").
int run_replay(const ReplayArgs& args);

struct ViewArgs {
  std::string model;
  LoadArgs load;
  std::string srdf;   ///< an SRDF whose <group_state> sets the joints it names
  std::string state;  ///< that group_state's name ("" the first)
  std::string q;    ///< the configuration shown, nq comma-separated numbers (default: neutral)
  std::string out;  ///< the page (….html), or a directory for DIR/view.html (default: ./view.html)
};
/// Writes the `plume view` page of a model (replay.hpp, write_view_page).
int run_view(const ViewArgs& args);

}  // namespace plume::cli
