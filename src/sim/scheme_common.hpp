#pragma once
// What the three schemes (event-driven, time-stepping, compliant) share:
// option checks, contact names as written to events.csv, per-pair contact
// parameters, the zero-order-hold controller sample, the crossing locator
// and small formatting helpers.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "plume/contact/detection.hpp"
#include "plume/dynamics/contact_dynamics.hpp"
#include "plume/sim/simulator.hpp"

namespace plume::detail {

/// Throws Error naming the option when SimulationOptions are inconsistent
/// (the same rules as the event-driven scheme, plus time_step > 0).
void validate_scheme_options(const SimulationOptions& options);

/// Contacts of a world: the detector, the parameters of each candidate pair
/// (World::contact_parameters) and the names written to events.csv.
struct ContactCatalogue {
  ContactCatalogue(const World& world, double margin);

  ContactDetector detector;
  double margin;  ///< the detector's: shape contacts with φ < margin
  std::vector<ContactParameters> pair_parameters;  ///< one per detector.pairs()

  /// Contact detection, as every scheme does it: forward kinematics of q
  /// into `data` (the placements stay there), the detector's shape contacts
  /// (those with φ < `margin` when it differs from the catalogue's) and,
  /// with `joint_limits`, the joint limits within `margin`.
  void detect(const Model& model, Data& data, const VectorX& q, double margin, bool joint_limits,
              std::vector<Contact>& out);

  /// "shape_a|shape_b#feature" or "limit:joint:lower|upper".
  std::string name_of(const Model& model, const Contact& c) const;
  /// The link name of a detector shape (the shape's name for the environment).
  std::string link_of(const World& world, int shape) const;
  /// "name, name, …" of contacts (at most 12, then "and N more").
  std::string names_of(const Model& model, const std::vector<Contact>& contacts) const;
};

/// The gap φ of contact `c` at configuration q: from q itself for a joint
/// limit, from the placements of forward kinematics (into `data`) for shapes.
double contact_gap_at(const Model& model, Data& data, const VectorX& q, Contact c);

/// φ of a joint-limit contact at q: the joint's distance to its bound (a
/// limit's Contact keeps the gap of its detection; refresh_contact() is for
/// shape contacts only).
double joint_limit_gap(const Model& model, const VectorX& q, const Contact& c);

/// What failed in a contact or impact LCP, in words, for the one-line
/// message of a contact_failure or a fallback window: "no contact forces
/// exist …", "no consistent frictional forces …" or "none found (a residual
/// of X …)". The solver's internals in `solver_message` (pivots, basis
/// norms, contact indices) are left out but for the residual.
std::string contact_failure_words(ContactStatus status, const std::string& solver_message);

/// τ from the controller at (t, q, v) with the simulator's checks (size,
/// finiteness) and the optional torque limits. False with the status and
/// message in `result` when the output is unusable.
bool sample_controller_checked(const Model& model, const SimulationOptions& options, const ControllerFunction& f,
                               double t, const VectorX& q, const VectorX& v, VectorX& tau, SimulationResult& result);

/// τ applied to the joints: τ minus the URDF joint damping when enabled.
void applied_torque(const Model& model, const SimulationOptions& options, const VectorX& tau, const VectorX& v,
                    VectorX& out);

/// A double with 10 significant digits, for messages.
std::string fmt(double x);

/// Largest |‖quaternion‖ − 1| over the free-flyers of `model`.
double quaternion_error(const Model& model, const VectorX& q);

/// Largest overrun of a revolute or prismatic joint's position limits at q
/// (0 within them) [rad or m].
double joint_limit_overrun(const Model& model, const VectorX& q);

/// Counts −φ of a touching contact in the run's statistics: a joint limit's
/// overrun in max_limit_violation, a shape contact's in max_penetration.
void count_penetration(SimulationStatistics& stats, const Contact& c);

/// How finely an event time near `t` can be located: `tolerance`, but never
/// below kEventUlps units in the last place of t (no double lies closer to
/// the crossing), so that long runs do not ask for more than exists.
inline constexpr double kEventUlps = 4.0;
inline double event_time_resolution(double tolerance, double t) {
  return std::max(tolerance, kEventUlps * std::numeric_limits<double>::epsilon() * std::abs(t));
}

/// The earliest time known to be at or past the crossing of f in [a, b],
/// with f(a) = fa > 0 ≥ f(b) = fb, located to within
/// event_time_resolution(tolerance, b). Every scheme locates its events on
/// the dense output with it.
///
/// Illinois (modified regula falsi) steps, kept bracketed. Two safeguards
/// make it terminate on every witness: a step that would land within half
/// the resolution of an end is moved to half the resolution inside it (so
/// a root approached from one side closes the bracket, as in Brent's
/// method), and when three steps have not halved the bracket (a flat or
/// kinked witness) the fourth bisects. So every four steps at least
/// halve the bracket, and since the resolution is at least 2 ulps of the
/// bracket's width, at most 4·(log₂(width/resolution) + 2) ≤ 212
/// evaluations are ever made. With
/// `value_tolerance` ≥ 0 it also stops at the first point where
/// |f| ≤ value_tolerance (a gap already within the touch band).
template <class F>
double locate_crossing(F&& f, double a, double fa, double b, double fb, double tolerance,
                       double value_tolerance = -1.0) {
  const double resolution = event_time_resolution(tolerance, std::max(std::abs(a), std::abs(b)));
  const double half = 0.5 * resolution;
  int side = 0;
  double reference = b - a;  // the bracket's width when it last halved
  int stalled = 0;           // steps since then
  const int max_iterations = 4 * (std::max(0, std::ilogb((b - a) / resolution)) + 2);
  for (int it = 1; it <= max_iterations && b - a > resolution; ++it) {
    double c = a + fa * ((b - a) / (fa - fb));
    if (!(c > a && c < b) || stalled >= 3) {
      c = 0.5 * (a + b);
    } else if (c - a < half) {
      c = a + half;
    } else if (b - c < half) {
      c = b - half;
    }
    if (!(c > a && c < b)) break;  // no double strictly inside
    const double fc = f(c);
    if (std::abs(fc) <= value_tolerance) return c;
    if (fc > 0.0) {
      a = c;
      fa = fc;
      if (side == -1) fb *= 0.5;
      side = -1;
    } else {
      b = c;
      fb = fc;
      if (side == +1) fa *= 0.5;
      side = +1;
    }
    if (b - a <= 0.5 * reference) {
      reference = b - a;
      stalled = 0;
    } else {
      ++stalled;
    }
  }
  return b;
}

/// Seconds since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace plume::detail
