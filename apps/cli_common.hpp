#pragma once
// Shared pieces of the plume command-line program (no CLI11 here: it is
// compiled in main.cpp only).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "plume/model.hpp"
#include "plume/urdf.hpp"

namespace plume::cli {

/// Loads MODEL.urdf with the --root option ("fixed", "free", "planar").
/// Loads a URDF for a command; dynamics-only commands skip collision meshes.
Model load_model(const std::string& path, const std::string& root,
                 urdf::CollisionMeshes meshes = urdf::CollisionMeshes::IfFound);

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

struct InfoArgs {
  std::string model;
  std::string root = "fixed";
  bool json = false;
};
int run_info(const InfoArgs& args);

struct DynamicsArgs {
  std::string model;
  std::string root = "fixed";
  std::string q, v, tau, ddq;
  bool json = false;
};
int run_dynamics(const DynamicsArgs& args);

struct BenchArgs {
  std::string model;
  std::string root = "fixed";
  long calls = 100000;
  bool json = false;
};
int run_bench(const BenchArgs& args);

struct SimulateArgs {
  std::string world;
  std::string out = "plume_out";
  std::optional<double> duration;  ///< overrides the world file's <simulate duration>
  bool no_plots = false;
  bool no_replay = false;
};
/// Exit status: 0 finished, 3 stopped early (status ≠ finished), 128 + signal
/// when interrupted; bad input throws (main returns 1).
int run_simulate(const SimulateArgs& args);

struct ReplayArgs {
  std::string dir;    ///< the --out directory of a finished run
  std::string world;  ///< the world file, when the one in summary.json is not found
};
/// Writes DIR/replay.html from a run's outputs (and updates summary.json's "replay").
int run_replay(const ReplayArgs& args);

}  // namespace plume::cli
