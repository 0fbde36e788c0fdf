#pragma once
// Narrow phase: the contacts of one pair of placed shapes. Each routine
// (a "kernel") takes its two shapes in a fixed order (A, B) of geometry
// types, finds the feature pairs that can touch and hands them to a
// ContactEmitter, which evaluates the gap, filters by the margin and writes
// Contacts in the detector's (a, b) order.

#include <cstdint>
#include <vector>

#include "features.hpp"
#include "plume/geometry/convex_hull.hpp"

namespace plume::detail {

/// A shape placed in the world: its frame's axes R (columns, world
/// coordinates) and origin p.
struct PlacedShape {
  const Geometry* geometry = nullptr;
  const ConvexHull* hull = nullptr;  ///< meshes: their hull; boxes: the box as a hull
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
  /// Contacts with a gap below this are kept.
  double margin() const { return margin_; }

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

/// The kernels with a convex hull on one side (hull_narrowphase.cpp); A and
/// B are in the order of each name. box_hull uses the box's hull.
void plane_hull(const PlacedShape& A, const PlacedShape& B, const DetectionOptions& o, ContactEmitter& out);
void hull_sphere(const PlacedShape& A, const PlacedShape& B, const DetectionOptions& o, ContactEmitter& out);
void hull_capsule(const PlacedShape& A, const PlacedShape& B, const DetectionOptions& o, ContactEmitter& out);
void hull_cylinder(const PlacedShape& A, const PlacedShape& B, const DetectionOptions& o, ContactEmitter& out);
void hull_hull(const PlacedShape& A, const PlacedShape& B, const DetectionOptions& o, ContactEmitter& out);
/// The most contacts a hull kernel emits for one pair.
constexpr int kHullMaxContacts = 8;

/// Contact id of a shape contact: the pair index and the feature code.
inline std::uint64_t shape_contact_id(int pair, int feature) {
  return (static_cast<std::uint64_t>(pair) << 32) | static_cast<std::uint32_t>(feature);
}

}  // namespace plume::detail
