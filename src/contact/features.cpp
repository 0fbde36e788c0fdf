// Gap, normal and witness points of a pair of contact features, and their
// time derivatives (the ingredients of ṅ and ṗ in eq. 11.30).
//
// Notation: feature 1 is on body 1, feature 2 on body 2; a dot is d/dt with
// the bodies moving at their current velocities. Body-fixed points move at
// u(x) (rates.x1, rates.x2), body-fixed directions at ω × d (rates.d1,
// rates.d2). Witness points are not body-fixed: they slide along the
// surfaces, and their motion ṗ comes from differentiating their definition.
#include "features.hpp"

#include <cmath>

namespace plume::detail {

namespace {

constexpr double kTiny = 1e-12;  // below this a length [m] or sin(angle) is degenerate

// The rate of the unit vector u = g/|g| for a vector g moving at ġ.
Vec3 unit_rate(const Vec3& u, double norm, const Vec3& gdot) { return (gdot - u * u.dot(gdot)) / norm; }

// FacePoint: n = d1; φ = n·(x2 − x1) − r2; p2 = x2 − r2 n; p1 = x2 − (φ + r2) n
// (the foot of x2 on the face plane).
void face_point(const WorldFeatures& f, const FeatureRates* r, FeatureContact& o, FeatureContactRates* dr) {
  const Vec3& n = f.d1;
  const double dist = n.dot(f.x2 - f.x1);
  o.n = n;
  o.phi = dist - f.r2;
  o.p2 = f.x2 - f.r2 * n;
  o.p1 = f.x2 - dist * n;
  if (!r) return;
  const Vec3& ndot = r->d1;  // ω₁ × n: the face turns with body 1
  const double dist_dot = ndot.dot(f.x2 - f.x1) + n.dot(r->x2 - r->x1);
  dr->n = ndot;
  dr->phi = dist_dot;
  dr->p2 = r->x2 - f.r2 * ndot;
  dr->p1 = r->x2 - dist_dot * n - dist * ndot;
}

// PointPoint: n = δ/|δ| with δ = x2 − x1; ṅ = (1 − n nᵀ) δ̇ / |δ|.
void point_point(const WorldFeatures& f, const FeatureRates* r, FeatureContact& o, FeatureContactRates* dr) {
  const Vec3 delta = f.x2 - f.x1;
  const double len = delta.norm();
  const bool degenerate = len < kTiny;
  o.n = degenerate ? Vec3(Vec3::UnitZ()) : Vec3(delta / len);
  o.phi = len - f.r1 - f.r2;
  o.p1 = f.x1 + f.r1 * o.n;
  o.p2 = f.x2 - f.r2 * o.n;
  if (!r) return;
  const Vec3 delta_dot = r->x2 - r->x1;
  dr->n = degenerate ? Vec3(Vec3::Zero()) : unit_rate(o.n, len, delta_dot);
  dr->phi = o.n.dot(delta_dot);
  dr->p1 = r->x1 + f.r1 * dr->n;
  dr->p2 = r->x2 - f.r2 * dr->n;
}

// LinePoint: foot s = x1 + τ d1 with τ = (x2 − x1)·d1, n = (x2 − s)/|x2 − s|;
// τ̇ = (ẋ2 − ẋ1)·d1 + (x2 − x1)·ḋ1, ṡ = ẋ1 + τ̇ d1 + τ ḋ1.
void line_point(const WorldFeatures& f, const FeatureRates* r, FeatureContact& o, FeatureContactRates* dr) {
  const Vec3 w = f.x2 - f.x1;
  const double tau = w.dot(f.d1);
  const Vec3 s = f.x1 + tau * f.d1;
  const Vec3 delta = f.x2 - s;
  const double len = delta.norm();
  const bool degenerate = len < kTiny;
  o.n = degenerate ? any_perpendicular(f.d1) : Vec3(delta / len);
  o.phi = len - f.r1 - f.r2;
  o.p1 = s + f.r1 * o.n;
  o.p2 = f.x2 - f.r2 * o.n;
  if (!r) return;
  const double tau_dot = (r->x2 - r->x1).dot(f.d1) + w.dot(r->d1);
  const Vec3 s_dot = r->x1 + tau_dot * f.d1 + tau * r->d1;
  const Vec3 delta_dot = r->x2 - s_dot;
  dr->n = degenerate ? Vec3(Vec3::Zero()) : unit_rate(o.n, len, delta_dot);
  dr->phi = o.n.dot(delta_dot);
  dr->p1 = s_dot + f.r1 * dr->n;
  dr->p2 = r->x2 - f.r2 * dr->n;
}

// LineLine: closest points s1 = x1 + τ1 d1, s2 = x2 + τ2 d2 of two lines, from
//   τ1 − b τ2 = w·d1,  b τ1 − τ2 = w·d2,  b = d1·d2, w = x2 − x1,
// n = sign·m/|m| with m = d1 × d2 (fixed orientation, so φ = n·w − r1 − r2
// changes sign smoothly through contact). The rates differentiate the same
// 2×2 system: τ̇1 − b τ̇2 = ẇ·d1 + w·ḋ1 + ḃ τ2, b τ̇1 − τ̇2 = ẇ·d2 + w·ḋ2 − ḃ τ1.
void line_line(const WorldFeatures& f, const FeatureRates* r, FeatureContact& o, FeatureContactRates* dr) {
  const Vec3 w = f.x2 - f.x1;
  const Vec3 m = f.d1.cross(f.d2);
  const double mnorm = m.norm();
  const bool degenerate = mnorm < kTiny;  // parallel lines: detection never asks for these
  const double b = f.d1.dot(f.d2);
  const double den = degenerate ? 1.0 : mnorm * mnorm;  // 1 − b² for unit directions
  const double c1 = w.dot(f.d1), c2 = w.dot(f.d2);
  const double tau1 = degenerate ? c1 : (c1 - b * c2) / den;
  const double tau2 = degenerate ? 0.0 : (b * c1 - c2) / den;
  const Vec3 s1 = f.x1 + tau1 * f.d1;
  const Vec3 s2 = f.x2 + tau2 * f.d2;
  const Vec3 mhat = degenerate ? any_perpendicular(f.d1) : Vec3(m / mnorm);
  o.n = f.sign * mhat;
  o.phi = o.n.dot(w) - f.r1 - f.r2;
  o.p1 = s1 + f.r1 * o.n;
  o.p2 = s2 - f.r2 * o.n;
  if (!r) return;
  const Vec3 w_dot = r->x2 - r->x1;
  const Vec3 m_dot = r->d1.cross(f.d2) + f.d1.cross(r->d2);
  const double b_dot = r->d1.dot(f.d2) + f.d1.dot(r->d2);
  const double R1 = w_dot.dot(f.d1) + w.dot(r->d1) + b_dot * tau2;
  const double R2 = w_dot.dot(f.d2) + w.dot(r->d2) - b_dot * tau1;
  const double tau1_dot = degenerate ? 0.0 : (R1 - b * R2) / den;
  const double tau2_dot = degenerate ? 0.0 : (b * R1 - R2) / den;
  const Vec3 s1_dot = r->x1 + tau1_dot * f.d1 + tau1 * r->d1;
  const Vec3 s2_dot = r->x2 + tau2_dot * f.d2 + tau2 * r->d2;
  dr->n = degenerate ? Vec3(Vec3::Zero()) : Vec3(f.sign * unit_rate(mhat, mnorm, m_dot));
  dr->phi = dr->n.dot(w) + o.n.dot(w_dot);
  dr->p1 = s1_dot + f.r1 * dr->n;
  dr->p2 = s2_dot - f.r2 * dr->n;
}

// FaceRim: the circle point deepest towards the face, q = c + R u with
// u = −g/|g|, g = n − (n·e) e (n the face normal d1, e the circle axis d2);
// φ = n·(q − x1), p2 = q, p1 = q − φ n.
void face_rim(const WorldFeatures& f, const FeatureRates* r, FeatureContact& o, FeatureContactRates* dr) {
  const Vec3& n = f.d1;
  const Vec3& e = f.d2;
  const double ne = n.dot(e);
  const Vec3 g = n - ne * e;
  const double gnorm = g.norm();
  const bool degenerate = gnorm < kTiny;  // flat: detection uses fixed rim points instead
  const Vec3 u = degenerate ? any_perpendicular(e) : Vec3(-g / gnorm);
  const Vec3 q = f.x2 + f.r2 * u;
  o.n = n;
  o.phi = n.dot(q - f.x1);
  o.p2 = q;
  o.p1 = q - o.phi * n;
  if (!r) return;
  const Vec3& ndot = r->d1;
  const Vec3& edot = r->d2;
  const Vec3 g_dot = ndot - (ndot.dot(e) + n.dot(edot)) * e - ne * edot;
  const Vec3 u_dot = degenerate ? Vec3(Vec3::Zero()) : Vec3(-unit_rate(-u, gnorm, g_dot));
  const Vec3 q_dot = r->x2 + f.r2 * u_dot;
  dr->n = ndot;
  dr->phi = ndot.dot(q - f.x1) + n.dot(q_dot - r->x1);
  dr->p2 = q_dot;
  dr->p1 = q_dot - dr->phi * n - o.phi * ndot;
}

// RimPoint: the circle point closest to x2, q = c + R u with u = g/|g|,
// g = (x2 − c) − ((x2 − c)·e) e; then a PointPoint between q and x2.
void rim_point(const WorldFeatures& f, const FeatureRates* r, FeatureContact& o, FeatureContactRates* dr) {
  const Vec3& c = f.x1;
  const Vec3& e = f.d1;
  const Vec3 dv = f.x2 - c;
  const double de = dv.dot(e);
  const Vec3 g = dv - de * e;
  const double gnorm = g.norm();
  const bool on_axis = gnorm < kTiny;  // the cap region: detection uses FacePoint there
  const Vec3 u = on_axis ? any_perpendicular(e) : Vec3(g / gnorm);
  const Vec3 q = c + f.r1 * u;
  const Vec3 delta = f.x2 - q;
  const double len = delta.norm();
  const bool degenerate = len < kTiny;
  o.n = degenerate ? u : Vec3(delta / len);
  o.phi = len - f.r2;
  o.p1 = q;
  o.p2 = f.x2 - f.r2 * o.n;
  if (!r) return;
  const Vec3 dv_dot = r->x2 - r->x1;
  const Vec3& edot = r->d1;
  const Vec3 g_dot = dv_dot - (dv_dot.dot(e) + dv.dot(edot)) * e - de * edot;
  const Vec3 u_dot = on_axis ? Vec3(Vec3::Zero()) : unit_rate(u, gnorm, g_dot);
  const Vec3 q_dot = r->x1 + f.r1 * u_dot;
  const Vec3 delta_dot = r->x2 - q_dot;
  dr->n = degenerate ? Vec3(Vec3::Zero()) : unit_rate(o.n, len, delta_dot);
  dr->phi = o.n.dot(delta_dot);
  dr->p1 = q_dot;
  dr->p2 = r->x2 - f.r2 * dr->n;
}

void evaluate(const WorldFeatures& f, const FeatureRates* r, FeatureContact& o, FeatureContactRates* dr) {
  switch (f.type) {
    case FeaturePair::FacePoint: face_point(f, r, o, dr); return;
    case FeaturePair::PointPoint: point_point(f, r, o, dr); return;
    case FeaturePair::LinePoint: line_point(f, r, o, dr); return;
    case FeaturePair::LineLine: line_line(f, r, o, dr); return;
    case FeaturePair::FaceRim: face_rim(f, r, o, dr); return;
    case FeaturePair::RimPoint: rim_point(f, r, o, dr); return;
    case FeaturePair::None: break;
  }
  o = FeatureContact{0.0, Vec3::UnitZ(), Vec3::Zero(), Vec3::Zero()};
  if (dr) *dr = FeatureContactRates{0.0, Vec3::Zero(), Vec3::Zero(), Vec3::Zero()};
}

}  // namespace

Vec3 any_perpendicular(const Vec3& e) {
  // Cross with the coordinate axis least aligned with e.
  const Vec3 a = e.cwiseAbs();
  const Vec3 axis = (a.x() <= a.y() && a.x() <= a.z()) ? Vec3::UnitX() : (a.y() <= a.z() ? Vec3::UnitY() : Vec3::UnitZ());
  return e.cross(axis).normalized();
}

void evaluate_features(const WorldFeatures& f, FeatureContact& out) { evaluate(f, nullptr, out, nullptr); }

void evaluate_features(const WorldFeatures& f, const FeatureRates& rates, FeatureContact& out,
                       FeatureContactRates& out_rates) {
  evaluate(f, &rates, out, &out_rates);
}

WorldFeatures world_features(const Data& data, const Contact& c) {
  const ContactLocal& l = c.local;
  const Transform& X1 = data.X0[first_body(c)];
  const Transform& X2 = data.X0[second_body(c)];
  WorldFeatures f;
  f.type = l.type;
  f.sign = l.sign;
  f.r1 = l.r1;
  f.r2 = l.r2;
  f.x1 = X1.inverse_transform_point(l.x1);
  f.d1 = X1.E().transpose() * l.d1;
  f.x2 = X2.inverse_transform_point(l.x2);
  f.d2 = X2.E().transpose() * l.d2;
  return f;
}

void store_result(const FeatureContact& r, bool first_on_b, Contact& c) {
  c.gap = r.phi;
  if (first_on_b) {
    c.normal = -r.n;
    c.point_a = r.p2;
    c.point_b = r.p1;
  } else {
    c.normal = r.n;
    c.point_a = r.p1;
    c.point_b = r.p2;
  }
}

}  // namespace plume::detail
