#pragma once
// Closed forms the scheme study (plume_study.cpp) and the scheme tests
// (tests/test_schemes.cpp) measure against. Header-only, no plume types.

#include <cmath>
#include <functional>
#include <vector>

namespace plume::closed_form {

constexpr double kPi = 3.14159265358979323846;

/// Root of f on [a, b] (f(a), f(b) of opposite signs) by bisection to ~1e-15 relative.
inline double bisect(const std::function<double(double)>& f, double a, double b) {
  double fa = f(a);
  for (int i = 0; i < 200 && b - a > 1e-15 * std::max(1.0, std::abs(b)); ++i) {
    const double m = 0.5 * (a + b), fm = f(m);
    if ((fm > 0) == (fa > 0)) {
      a = m;
      fa = fm;
    } else {
      b = m;
    }
  }
  return 0.5 * (a + b);
}

// ---- rigid bouncing ball ---------------------------------------------------------
/// Impact times of a ball dropped from gap h with restitution e:
/// t_k = t₁(1 + 2e + … + 2e^{k−1}), t₁ = √(2h/g).
inline std::vector<double> bounce_times(double h, double e, double g, int n) {
  std::vector<double> t;
  const double t1 = std::sqrt(2 * h / g);
  double tk = t1, step = 2 * e * t1;
  for (int k = 0; k < n; ++k) {
    t.push_back(tk);
    tk += step;
    step *= e;
  }
  return t;
}
/// Where the bounces accumulate: t∞ = t₁ (1 + e)/(1 − e).
inline double bounce_rest_time(double h, double e, double g) { return std::sqrt(2 * h / g) * (1 + e) / (1 - e); }
/// The rest time when impacts approaching slower than `zeno_speed` are
/// plastic (SimulationOptions::zeno_speed): the time of the first impact
/// whose approach speed e^{k−1} √(2gh) is below it.
inline double bounce_rest_time_zeno(double h, double e, double g, double zeno_speed) {
  const double t1 = std::sqrt(2 * h / g);
  double t = t1, v = std::sqrt(2 * g * h);
  while (v >= zeno_speed) {
    t += 2 * e * v / g;
    v *= e;
  }
  return t;
}

// ---- Kelvin–Voigt contact (compliant.hpp's normal law, z eliminated) ----------------
/// A point mass m pressing into a patch K, D under gravity g (along the
/// approach): penetration δ = −φ with δ(0) = δ0 (≥ 0: a patch still
/// depressed from an earlier contact), δ̇(0) = v0 > 0. While touching
/// m δ̈ = m g − K δ − D δ̇, a damped oscillator about δ_s = m g/K; contact
/// ends when f = K δ + D δ̇ returns to 0 (the patch then relaxes behind the
/// point). Underdamped only (D < 2√(K m)).
struct KelvinVoigt {
  double m, K, D, g, v0, delta0 = 0.0;
  double wn() const { return std::sqrt(K / m); }
  double sigma() const { return D / (2 * m); }
  double wd() const { return std::sqrt(wn() * wn() - sigma() * sigma()); }
  double A() const { return delta0 - m * g / K; }
  double B() const { return (v0 + sigma() * A()) / wd(); }
  double delta(double t) const {
    return m * g / K + std::exp(-sigma() * t) * (A() * std::cos(wd() * t) + B() * std::sin(wd() * t));
  }
  double rate(double t) const {
    const double s = sigma(), w = wd();
    return std::exp(-s * t) * ((B() * w - s * A()) * std::cos(w * t) - (A() * w + s * B()) * std::sin(w * t));
  }
  double force(double t) const { return K * delta(t) + D * rate(t); }
  /// First zero of the force (NaN if it stays positive over two periods).
  double contact_time() const {
    const double period = 2 * kPi / wd(), dt = period / 4000;
    double lo = dt, hi = dt;
    while (force(hi) > 0) {
      lo = hi;
      hi += dt;
      if (hi > 2 * period) return std::nan("");
    }
    return bisect([this](double t) { return force(t); }, lo, hi);
  }
};

/// One bounce of a ball on a Kelvin–Voigt ground: touch at `touch` with
/// approach speed v (and the patch depressed by delta0), loss, flight with the
/// patch relaxing as z₀ e^{−K t/D}, next touch.
struct CompliantBounce {
  double touch = 0.0, loss = 0.0, next_touch = 0.0;
  double approach_speed = 0.0, rebound_speed = 0.0, next_speed = 0.0, next_delta0 = 0.0;
};

/// The sequence of bounces of a ball of mass m released from gap h (rest,
/// patch rested) on a patch K, D, gravity g. Stops early (fewer entries)
/// when a contact does not end.
inline std::vector<CompliantBounce> compliant_bounces(double m, double K, double D, double g, double h, int n) {
  std::vector<CompliantBounce> out;
  double t = std::sqrt(2 * h / g), v = std::sqrt(2 * g * h), delta0 = 0.0;
  for (int k = 0; k < n; ++k) {
    const KelvinVoigt kv{m, K, D, g, v, delta0};
    const double tc = kv.contact_time();
    if (std::isnan(tc)) break;
    CompliantBounce b;
    b.touch = t;
    b.approach_speed = v;
    b.loss = t + tc;
    const double phi_c = -kv.delta(tc), vr = -kv.rate(tc);  // φ and φ̇ at the loss
    b.rebound_speed = vr;
    // Flight: φ(s) = φ_c + v_r s − g s²/2 against z(s) = φ_c e^{−K s/D}.
    auto gap = [&](double s) { return phi_c + vr * s - 0.5 * g * s * s - phi_c * std::exp(-K * s / D); };
    const double apex = vr / g;
    double hi = apex;
    while (gap(hi) > 0) hi += apex;
    const double s = bisect(gap, apex, hi);
    b.next_touch = b.loss + s;
    b.next_speed = -(vr - g * s);  // approach speed (> 0)
    b.next_delta0 = -phi_c * std::exp(-K * s / D);
    out.push_back(b);
    // The next contact starts with the patch still depressed: δ(0) = −z,
    // δ̇(0) = −φ̇ (the force jumps to K δ + D δ̇ = D (ż − φ̇), compliant.hpp).
    t = b.next_touch;
    v = b.next_speed;
    delta0 = b.next_delta0;
  }
  return out;
}

/// Restitution of the first bounce: rebound speed / approach speed.
inline double compliant_restitution(double m, double K, double D, double g, double v0) {
  const KelvinVoigt kv{m, K, D, g, v0, 0.0};
  const double tc = kv.contact_time();
  return std::isnan(tc) ? 0.0 : -kv.rate(tc) / v0;
}

/// The damping D that gives the first bounce a restitution e (bisection; e
/// decreases with D).
inline double damping_for_restitution(double m, double K, double g, double v0, double e) {
  double lo = 1e-6, hi = 2 * std::sqrt(K * m) * 0.999;
  return bisect([&](double D) { return compliant_restitution(m, K, D, g, v0) - e; }, lo, hi);
}

// ---- Newton's cradle on Kelvin–Voigt contacts ---------------------------------------
/// A row of n equal balls (mass m) on a line with gaps `gap` between
/// neighbours, the first moving at v0 towards the others at rest, each pair
/// touching through a patch K, D (no gravity along the row). While the
/// contacts do not overlap in time (contact time < gap / speed) the collisions
/// are sequential two-body Kelvin–Voigt impacts with the reduced mass m/2:
/// ball k arrives at u_k, leaves at u_k (1 − e)/2 and ball k+1 at
/// u_k (1 + e)/2, where e is the (speed-independent) restitution of the law.
struct CompliantCradle {
  std::vector<double> touch, loss;  ///< contact k: balls k and k+1 [s]
  std::vector<double> velocity;     ///< final ball velocities (after the last loss) [m/s]
  double restitution = 0.0;
};

inline CompliantCradle compliant_cradle(double m, double K, double D, double v0, double gap, int n) {
  CompliantCradle out;
  out.velocity.assign(n, 0.0);
  double u = v0, t = 0.0;  // speed of the incoming ball, time
  const KelvinVoigt kv{0.5 * m, K, D, 0.0, 1.0, 0.0};  // unit approach speed: the law is linear
  const double tc = kv.contact_time();
  out.restitution = -kv.rate(tc);
  const double e = out.restitution;
  double ahead = gap;  // distance from the incoming ball to the next one
  for (int k = 0; k + 1 < n; ++k) {
    t += ahead / u;
    out.touch.push_back(t);
    t += tc;
    out.loss.push_back(t);
    // Centre of mass of the pair moves at u/2; the compression at the loss
    // is δ(tc) u (scaled from the unit-speed law): the struck ball has moved
    // u tc/2 − u δ(tc)/2 from its rest position.
    const double moved = 0.5 * u * tc - 0.5 * u * kv.delta(tc);
    out.velocity[k] = 0.5 * u * (1 - e);
    u *= 0.5 * (1 + e);
    ahead = gap - moved;
  }
  out.velocity[n - 1] = u;
  return out;
}

// ---- falling rod ----------------------------------------------------------------
/// First impact of a rod (half-length l, mass m, inertia I about its COM)
/// released at rest at θ₀ with one end on a frictionless floor: the energy
/// integral ½(m l² cos²θ + I) θ̇² = m g l (sin θ₀ − sin θ), T = ∫ dθ/|θ̇|
/// (θ = θ₀ − s² removes the end singularity; midpoint rule, N panels).
inline double rod_impact_time(double m, double I, double l, double g, double th0, int N = 400000) {
  double T = 0.0;
  const double smax = std::sqrt(th0);
  for (int k = 0; k < N; ++k) {
    const double s = (k + 0.5) * smax / N, th = th0 - s * s;
    const double thdot =
        std::sqrt(2 * m * g * l * (std::sin(th0) - std::sin(th)) / (m * l * l * std::cos(th) * std::cos(th) + I));
    T += 2 * s / thdot * smax / N;
  }
  return T;
}

// ---- bowling ball ----------------------------------------------------------------
/// A solid sphere launched sliding at v₀ without spin on a floor with
/// friction μ rolls from t = 2v₀/(7μg) on, at 5v₀/7.
inline double bowling_stick_time(double v0, double mu, double g) { return 2 * v0 / (7 * mu * g); }
inline double bowling_rolling_speed(double v0) { return 5 * v0 / 7; }

}  // namespace plume::closed_form
