// The time-stepping scheme of plume::Simulator (issue 7, in progress).
#include "plume/error.hpp"
#include "sim/scheme.hpp"

namespace plume::detail {

std::unique_ptr<SchemeRunner> make_time_stepping(World, const SimulationOptions&) {
  throw Error("the time-stepping scheme is not available in this build");
}

}  // namespace plume::detail
