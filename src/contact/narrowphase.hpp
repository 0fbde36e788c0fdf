#pragma once
// Narrow phase: the contacts of one pair of placed shapes. Each routine
// (a "kernel") takes its two shapes in a fixed order (A, B) of geometry
// types, finds the feature pairs that can touch and hands them to a
// ContactEmitter, which evaluates the gap, filters by the margin and writes
// Contacts in the detector's (a, b) order.

#include <cstdint>
#include <vector>

#include "features.hpp"

namespace plume::detail {

/// A shape placed in the world: its frame's axes R (columns, world
/// coordinates) and origin p.
struct PlacedShape {
  const Geometry* geometry = nullptr;
  Mat3 R;
  Vec3 p;
};

/// Collects the contacts of one shape pair.
class ContactEmitter {
 public:
  ContactEmitter(const Data& data, const ShapePair& pair, int pair_index, double margin, std::vector<Contact>& out)
      : data_(data), pair_(pair), pair_index_(pair_index), margin_(margin), out_(out) {}

  /// A candidate contact `feature` (a code unique within the pair) whose
  /// feature 1 is on the kernel's shape A (first_on_A) or B; the features in
  /// world coordinates. Kept if its gap is below the margin.
  void emit(int feature, bool first_on_A, const WorldFeatures& f);

 private:
  const Data& data_;
  const ShapePair& pair_;
  int pair_index_;
  double margin_;
  std::vector<Contact>& out_;
};

/// The kernel for two geometry types (variant indices of Geometry); false if
/// the pair is unsupported. `swapped` is set when the kernel takes (b, a).
bool find_kernel(std::size_t type_a, std::size_t type_b, std::uint8_t& kernel, bool& swapped);

/// The most contacts a kernel can emit for one pair.
int kernel_max_contacts(std::uint8_t kernel);

/// Runs a kernel on shapes (A, B) in the kernel's order.
void run_kernel(std::uint8_t kernel, const PlacedShape& A, const PlacedShape& B, const DetectionOptions& options,
                ContactEmitter& emitter);

/// Contact id of a shape contact: the pair index and the feature code.
inline std::uint64_t shape_contact_id(int pair, int feature) {
  return (static_cast<std::uint64_t>(pair) << 32) | static_cast<std::uint32_t>(feature);
}

}  // namespace plume::detail
