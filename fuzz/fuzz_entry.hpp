#pragma once
// The entry points shared by the libFuzzer targets (fuzz_*.cpp) and the
// CTest replay of tests/fuzz_regressions/ (no fuzzer needed to replay).
//
// Each function feeds one input to plume's public entry points. The
// contract under test: an input is either accepted or rejected with a
// plume::Error; anything else (another exception, a crash, a sanitizer
// report, a hang) is a bug. A plume::Error is caught here; every other
// exception escapes (libFuzzer reports it as a crash, the replay test as a
// failure).
//
// With one_line_messages set, a plume::Error whose message is not one line
// (it holds a line break; the command line prints it as "plume: error: …") is
// reported as a bug too (OneLineViolation). CI leaves it off; it is the
// oracle of an exploratory run (PLUME_FUZZ_ONE_LINE=1).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace plume::fuzz {

struct Options {
  bool one_line_messages = false;
  /// World inputs: also build a Simulator and run it briefly (bounded steps
  /// and events), so that what the reader accepts is usable.
  bool simulate = true;
};

/// Options from the environment: PLUME_FUZZ_ONE_LINE=1, PLUME_FUZZ_SIMULATE=0.
Options options_from_environment();

struct OneLineViolation : std::logic_error {
  using std::logic_error::logic_error;
};

/// plume::urdf::load_string with each root joint; a model that loads is
/// then used: Data, neutral configuration, CRBA, bias forces, ABA, LTDL.
void urdf_input(const std::uint8_t* data, std::size_t size, const Options& options);

/// plume::load_world_string with URDF paths relative to models/worlds; a
/// scenario that loads gets a Simulator (and, with Options::simulate, a
/// short bounded run).
void world_input(const std::uint8_t* data, std::size_t size, const Options& options);

/// plume::cli::parse_vector on the lines of the input (--q, --v, --tau), then
/// the `plume dynamics` path on a model whose nq matches --q.
void vector_input(const std::uint8_t* data, std::size_t size, const Options& options);

/// The mesh path. The first byte picks the form of the rest: a point cloud
/// (float32 triples) for ConvexHull::from_points, or the bytes of a binary
/// or ASCII STL file for read_mesh; a hull that builds is then placed on a
/// free body and touched by a plane, a sphere, a box and a copy of itself
/// (every contact's gap, normal and witnesses must be finite).
void mesh_input(const std::uint8_t* data, std::size_t size, const Options& options);

}  // namespace plume::fuzz
