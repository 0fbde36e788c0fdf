#pragma once
// Argument checks shared by the checked entry points.

#include <vector>

#include "plume/configuration.hpp"
#include "plume/data.hpp"
#include "plume/error.hpp"

namespace plume::detail {

inline void check_state(const Model& model, const Data& data, const Eigen::Ref<const VectorX>& q) {
  check_data(model, data);
  check_configuration(model, q, "q");
}

inline void check_forces(const Model& model, const std::vector<Force>& fext) {
  if (static_cast<int>(fext.size()) != model.nbodies()) {
    throw ArgumentError("fext has " + std::to_string(fext.size()) + " entries, expected " +
                        std::to_string(model.nbodies()) + " (one per body)");
  }
  for (std::size_t i = 0; i < fext.size(); ++i) {
    if (!fext[i].vector().allFinite()) {
      throw ArgumentError("fext[" + std::to_string(i) + "] has a non-finite entry");
    }
  }
}

inline void check_body(const Model& model, int body) {
  if (body < 0 || body >= model.nbodies()) {
    throw ArgumentError("body index " + std::to_string(body) + " is out of range [0, " +
                        std::to_string(model.nbodies()) + ")");
  }
}

inline void check_frame(const Model& model, int frame) {
  if (frame < 0 || frame >= static_cast<int>(model.frames().size())) {
    throw ArgumentError("frame index " + std::to_string(frame) + " is out of range [0, " +
                        std::to_string(model.frames().size()) + ")");
  }
}

}  // namespace plume::detail
