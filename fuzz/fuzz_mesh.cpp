// libFuzzer target: see fuzz_entry.hpp (mesh input).
#include "fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const plume::fuzz::Options options = plume::fuzz::options_from_environment();
  plume::fuzz::mesh_input(data, size, options);
  return 0;
}
