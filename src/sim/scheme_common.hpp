#pragma once
// What the three schemes (event-driven, time-stepping, compliant) share:
// option checks, contact names as written to events.csv, per-pair contact
// parameters, the zero-order-hold controller sample, the crossing locator
// and small formatting helpers.

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "plume/contact/detection.hpp"
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
  std::vector<ContactParameters> pair_parameters;  ///< one per detector.pairs()

  /// "shape_a|shape_b#feature" or "limit:joint:lower|upper".
  std::string name_of(const Model& model, const Contact& c) const;
  /// The link name of a detector shape (the shape's name for the environment).
  std::string link_of(const World& world, int shape) const;
};

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

/// Illinois (modified regula falsi) on [a, b] with f(a) = fa > 0 ≥ f(b) = fb,
/// until the bracket is at most `tolerance` wide (200 iterations at most);
/// returns the earliest time known to be at or past the crossing. Every
/// scheme locates its events on the dense output with it. With
/// `value_tolerance` ≥ 0 it also stops at the first point where
/// |f| ≤ value_tolerance (a gap already within the touch band).
template <class F>
double locate_crossing(F&& f, double a, double fa, double b, double fb, double tolerance,
                       double value_tolerance = -1.0) {
  int side = 0;
  for (int it = 0; it < 200 && b - a > tolerance; ++it) {
    double c = (a * fb - b * fa) / (fb - fa);
    if (!(c > a && c < b)) c = 0.5 * (a + b);
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
  }
  return b;
}

/// Seconds since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace plume::detail
