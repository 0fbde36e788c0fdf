#pragma once
// Contact features in world coordinates: the gap, normal and witness points
// a pair of features defines (used by detection and refresh_contact), and
// their time derivatives (used by the contact Jacobians). One function holds
// both, so that the rates are the derivatives of exactly what detection
// computes.

#include "plume/contact/detection.hpp"

namespace plume::detail {

/// The two features of a contact, world coordinates (see FeaturePair).
struct WorldFeatures {
  FeaturePair type = FeaturePair::None;
  double sign = 1.0;
  double r1 = 0.0, r2 = 0.0;
  Vec3 x1, d1, x2, d2;
};

/// Rates of the features: x1 = u₁(x1), the velocity of the point of body 1
/// at x1; d1 = ω₁ × d1; the same for feature 2 on body 2.
struct FeatureRates {
  Vec3 x1, d1, x2, d2;
};

/// Gap φ, normal n (feature 1 → 2) and witness points p1, p2.
struct FeatureContact {
  double phi = 0.0;
  Vec3 n, p1, p2;
};

/// Time derivatives of FeatureContact.
struct FeatureContactRates {
  double phi = 0.0;
  Vec3 n, p1, p2;
};

/// Evaluates the contact of two features; with `rates`, also its time
/// derivatives into `out_rates`.
void evaluate_features(const WorldFeatures& f, FeatureContact& out);
void evaluate_features(const WorldFeatures& f, const FeatureRates& rates, FeatureContact& out,
                       FeatureContactRates& out_rates);

/// A unit vector perpendicular to the unit vector e (a fixed, smooth-enough
/// choice used for degenerate normals).
Vec3 any_perpendicular(const Vec3& e);

/// The body carrying feature 1 / feature 2 of a contact.
inline int first_body(const Contact& c) { return c.local.first_on_b ? c.body_b : c.body_a; }
inline int second_body(const Contact& c) { return c.local.first_on_b ? c.body_a : c.body_b; }

/// The features of a contact in world coordinates, from the placements in data.
WorldFeatures world_features(const Data& data, const Contact& c);

/// Writes gap, witness points and normal (a → b) of a contact from an evaluation.
void store_result(const FeatureContact& r, bool first_on_b, Contact& c);

}  // namespace plume::detail
