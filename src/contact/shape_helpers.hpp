#pragma once
// Helpers shared by the narrow-phase kernels (narrowphase.cpp,
// hull_narrowphase.cpp): feature construction, capsule and cylinder views,
// the cylinder's closest feature to a point, line-line parameters and rim points.

#include <cmath>

#include "narrowphase.hpp"

namespace plume::detail {

inline WorldFeatures features(FeaturePair type, const Vec3& x1, const Vec3& d1, double r1, const Vec3& x2, const Vec3& d2,
                       double r2, double sign = 1.0) {
  WorldFeatures f;
  f.type = type;
  f.x1 = x1;
  f.d1 = d1;
  f.r1 = r1;
  f.x2 = x2;
  f.d2 = d2;
  f.r2 = r2;
  f.sign = sign;
  return f;
}

struct RoundShape {  // capsule or cylinder: axis e = R z, half length l, radius r
  Vec3 p, e;
  double l, r;
  Vec3 end(int s) const { return p + (s > 0 ? l : -l) * e; }
};

inline RoundShape capsule_of(const PlacedShape& s) {
  const Capsule& c = std::get<Capsule>(*s.geometry);
  return RoundShape{s.p, s.R.col(2), 0.5 * c.length, c.radius};
}

inline RoundShape cylinder_of(const PlacedShape& s) {
  const Cylinder& c = std::get<Cylinder>(*s.geometry);
  return RoundShape{s.p, s.R.col(2), 0.5 * c.length, c.radius};
}

// The cylinder feature closest to a point: side (code 0), cap −/+ (1, 2),
// rim −/+ (3, 4); a point inside gets the least-penetrated side or cap.
inline WorldFeatures point_cylinder_features(const RoundShape& cyl, const Vec3& c, double r, int& code) {
  const Vec3 w = c - cyl.p;
  const double z = w.dot(cyl.e);
  const double rho = (w - z * cyl.e).norm();
  const int s = z >= 0.0 ? 1 : -1;
  const bool beyond_side = rho > cyl.r, beyond_cap = std::abs(z) > cyl.l;
  bool side = beyond_side && !beyond_cap;
  bool cap = beyond_cap && !beyond_side;
  if (!beyond_side && !beyond_cap) {  // inside
    side = cyl.r - rho < cyl.l - std::abs(z);
    cap = !side;
  }
  if (side) {
    code = 0;
    return features(FeaturePair::LinePoint, cyl.p, cyl.e, cyl.r, c, Vec3::Zero(), r);
  }
  if (cap) {
    code = s > 0 ? 2 : 1;
    return features(FeaturePair::FacePoint, cyl.end(s), s * cyl.e, 0.0, c, Vec3::Zero(), r);
  }
  code = s > 0 ? 4 : 3;
  return features(FeaturePair::RimPoint, cyl.end(s), cyl.e, cyl.r, c, Vec3::Zero(), r);
}

// Closest points of the lines x1 + τ1 d1 and x2 + τ2 d2 (unit, not parallel).
inline void line_parameters(const Vec3& x1, const Vec3& d1, const Vec3& x2, const Vec3& d2, double& tau1, double& tau2) {
  const Vec3 w = x2 - x1;
  const double b = d1.dot(d2);
  const double den = 1.0 - b * b;
  const double c1 = w.dot(d1), c2 = w.dot(d2);
  tau1 = (c1 - b * c2) / den;
  tau2 = (b * c1 - c2) / den;
}

// Rim points of a cylinder end, fixed in its frame (0°, 90°, 180°, 270°).
inline Vec3 rim_point(const PlacedShape& s, const RoundShape& cyl, int end, int k) {
  static const double cs[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
  return cyl.end(end) + cyl.r * (cs[k][0] * s.R.col(0) + cs[k][1] * s.R.col(1));
}

inline bool is_flat(const Vec3& n, const Vec3& e, const DetectionOptions& o) {
  return n.cross(e).norm() < std::sin(o.cylinder_flat_angle);
}

}  // namespace plume::detail
