#pragma once
/// @file
/// World files: an XML description of a scene and how to simulate it, read
/// with tinyxml2. The format is documented in docs/world_format.md; its core:
///
/// ```xml
/// <world gravity="0 0 -9.81">
///   <model name="quad" urdf="../quadruped.urdf" root="free">
///     <state q="0 0 0.5  0 0 0 1  …" v="…"/>
///   </model>
///   <ground normal="0 0 1" offset="0"/>
///   <contact mu="0.8" restitution="0.2"/>
///   <simulate scheme="event-driven" duration="2" output_rate="100"/>
///   <controller type="pd" model="quad" kp="…" kd="…" rate="1000"/>
/// </world>
/// ```
///
/// Paths are relative to the world file. Every error is a plume::WorldError
/// whose message names the file, the element and its line.

#include <optional>
#include <string>
#include <vector>

#include "plume/model_builder.hpp"
#include "plume/sim/simulator.hpp"
#include "plume/sim/world.hpp"

namespace plume {

/// A world file, read: the World, the simulation options and the controller.
struct Scenario {
  World world;
  SimulationOptions options;
  std::optional<PdController> controller;  ///< the built-in PD controller, if any
  double controller_period = 1e-3;         ///< [s]
  std::string source;                      ///< the file it came from
};

/// What the caller (e.g. `plume simulate --inertia … --package-dir …`) sets
/// for every model of a world file.
struct WorldFileOptions {
  /// Inertia policy of models without an `inertia` attribute (unset: warn).
  std::optional<InertiaPolicy> inertia;
  /// Searched for package:// URIs before each model's own `package_dirs`.
  std::vector<std::string> package_dirs;
};

/// @throws WorldError naming the file, element and line.
Scenario load_world(const std::string& path, const WorldFileOptions& options = {});
/// `base_directory` resolves relative URDF paths.
Scenario load_world_string(const std::string& xml, const std::string& source_name = "<string>",
                           const std::string& base_directory = ".", const WorldFileOptions& options = {});

}  // namespace plume
