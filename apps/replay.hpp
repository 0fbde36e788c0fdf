#pragma once
// replay.html: a self-contained page (three.js and the data inlined) that
// plays a `plume simulate` run back in 3-D, or shows a model for `plume view`.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "plume/sim/world.hpp"

namespace plume::cli {

/// What writing a page did.
struct PageOutcome {
  bool written = false;
  std::string message;        ///< why it was not written ("" when it was)
  std::uintmax_t bytes = 0;   ///< size of the file
  int frames = 0;             ///< frames in the page
  int recorded_frames = 0;    ///< trajectory rows (frames = recorded_frames unless decimated)
};

/// The largest page written for a run [bytes]: frames are decimated (evenly
/// in time, keeping the first and the last) to stay below it.
constexpr std::uintmax_t kReplayBudget = 5'000'000;

/// Writes `dir`/replay.html (atomically) from the world and the run's
/// trajectory.csv, contacts.csv and events.csv in `dir`; `summary` is the
/// run's summary.json (status, message, time, duration). Never throws for a
/// missing three.js or unreadable outputs: the outcome says why.
/// The URDFs' <visual> shapes are added, their meshes resolved through
/// `package_dirs`, then the packages the collision meshes resolved to, then as
/// collision meshes are.
PageOutcome write_replay_page(const World& world, const std::filesystem::path& dir,
                              const nlohmann::ordered_json& summary,
                              const std::vector<std::string>& package_dirs = {});

/// Writes `dir`/contact_points.csv from the run's outputs in `dir`: each row of
/// contacts.csv (joint limits left out) with the bodies, the contact point and
/// normal (world, placed by contact detection on the trajectory row of that
/// time) and the sliding speed |v_t| of b relative to a [m/s]. Header
/// time,contact,body_a,body_b,x,y,z,nx,ny,nz,normal_velocity,sliding_speed,normal_force,friction_force.
/// Returns "" or why it was not written.
std::string write_contact_points(const World& world, const std::filesystem::path& dir);

/// Writes `file` (atomically): the `plume view` page of one model at
/// configuration q (nq entries), with a slider per 1-DoF joint. The page's
/// bodies carry their joint (type, axis, Xtree placement, q index) so that it
/// moves them by forward kinematics of its own as the sliders move; its one
/// frame holds plume's placements at q. `title` names the model. The URDF's
/// <visual> shapes are added from `urdf_path` (meshes resolved through
/// `package_dirs`, then as collision meshes are).
PageOutcome write_view_page(const Model& model, const VectorX& q, const std::string& title,
                            const std::filesystem::path& file, const std::string& urdf_path,
                            const std::vector<std::string>& package_dirs);

/// The directory holding three.min.js and OrbitControls.js ("" if none):
/// $PLUME_THREE_DIR, then the directory found when plume was configured, then
/// Debian's /usr/share/javascript/three (package libjs-three).
std::filesystem::path find_three();

}  // namespace plume::cli
