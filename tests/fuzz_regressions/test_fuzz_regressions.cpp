// Replays every input kept under tests/fuzz_regressions/ (inputs that once
// found a bug) and the fuzzers' seed corpora through the fuzz targets' own
// entry points (fuzz/fuzz_entry.hpp), without libFuzzer: each input must be
// accepted or rejected with a plume::Error, never crash or throw anything
// else. Under PLUME_SANITIZE the sanitizers watch the same runs.
//
// Layout: tests/fuzz_regressions/<target>/<file>, target = urdf, world or
// vector; the file is the raw input (as libFuzzer wrote it). README.md there
// says what each one found.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "fuzz_entry.hpp"

namespace fs = std::filesystem;

namespace {

using Entry = void (*)(const std::uint8_t*, std::size_t, const plume::fuzz::Options&);

std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().filename() != "README.md") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Feeds each file to `entry`; returns how many were replayed.
int replay(Entry entry, const std::vector<fs::path>& files, const plume::fuzz::Options& options) {
  int n = 0;
  for (const fs::path& f : files) {
    const std::string input = read_file(f);
    SCOPED_TRACE(f.string());
    try {
      entry(reinterpret_cast<const std::uint8_t*>(input.data()), input.size(), options);
    } catch (const std::exception& e) {
      ADD_FAILURE() << f << ": escaped as " << typeid(e).name() << ": " << e.what();
    } catch (...) {
      ADD_FAILURE() << f << ": escaped as a non-standard exception";
    }
    ++n;
  }
  return n;
}

const fs::path kRegressions = PLUME_FUZZ_REGRESSIONS_DIR;
const fs::path kSeeds = PLUME_FUZZ_SEEDS_DIR;
const fs::path kModels = PLUME_MODELS_DIR;

std::vector<fs::path> with_extension(const fs::path& dir, const std::string& ext) {
  std::vector<fs::path> out;
  for (const fs::path& p : files_under(dir)) {
    if (p.extension() == ext && p.parent_path() == dir) out.push_back(p);
  }
  return out;
}

plume::fuzz::Options strict() {
  plume::fuzz::Options o;
  o.one_line_messages = true;
  return o;
}

}  // namespace

TEST(FuzzRegressions, UrdfInputs) {
  const int n = replay(plume::fuzz::urdf_input, files_under(kRegressions / "urdf"), strict());
  RecordProperty("replayed", n);
}

TEST(FuzzRegressions, WorldInputs) {
  const int n = replay(plume::fuzz::world_input, files_under(kRegressions / "world"), strict());
  RecordProperty("replayed", n);
}

TEST(FuzzRegressions, VectorInputs) {
  const int n = replay(plume::fuzz::vector_input, files_under(kRegressions / "vector"), strict());
  RecordProperty("replayed", n);
}

TEST(FuzzRegressions, MeshInputs) {
  const int n = replay(plume::fuzz::mesh_input, files_under(kRegressions / "mesh"), strict());
  RecordProperty("replayed", n);
}

// The seed corpora the fuzzers start from: every model and world of the
// project, and the hand-written seeds, pass the same contract.
TEST(FuzzRegressions, SeedCorpora) {
  const plume::fuzz::Options o = strict();
  EXPECT_GE(replay(plume::fuzz::urdf_input, with_extension(kModels, ".urdf"), o), 8);
  EXPECT_GE(replay(plume::fuzz::urdf_input, files_under(kSeeds / "urdf"), o), 1);
  EXPECT_GE(replay(plume::fuzz::world_input, with_extension(kModels / "worlds", ".xml"), o), 6);
  EXPECT_GE(replay(plume::fuzz::world_input, files_under(kSeeds / "world"), o), 1);
  EXPECT_GE(replay(plume::fuzz::vector_input, files_under(kSeeds / "vector"), o), 1);
  EXPECT_GE(replay(plume::fuzz::mesh_input, files_under(kSeeds / "mesh"), o), 5);
}
