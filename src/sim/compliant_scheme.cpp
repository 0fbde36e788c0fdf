// The compliant scheme of plume::Simulator (issue 7, in progress).
#include "plume/error.hpp"
#include "sim/scheme.hpp"

namespace plume::detail {

std::unique_ptr<SchemeRunner> make_compliant(World, const SimulationOptions&) {
  throw Error("the compliant scheme is not available in this build");
}

}  // namespace plume::detail
