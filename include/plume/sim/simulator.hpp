#pragma once
/// @file
/// The simulator: event-driven rigid contact (Featherstone Table 11.1,
/// docs/theory.md §4) integrated by Boost.Odeint dense-output steppers.
///
/// Between events an odeint dense-output stepper integrates q̇ = G(q) v and
/// v̇ = q̈ from the dynamics with the *active* contacts as equality
/// constraints (sticking contacts also tangentially; sliding ones with their
/// Coulomb force). After every accepted step the simulator evaluates the
/// witness functions of the possible events, each with a direction:
///
/// | event        | witness                                    | crossing         |
/// |--------------|--------------------------------------------|------------------|
/// | impact/gain  | gap φ of a contact that is not current     | positive → ≤ 0   |
/// | contact_loss | normal force λ of an active contact        | positive → ≤ 0   |
/// | slip         | μ λ − |f_t| of a sticking contact          | positive → ≤ 0   |
/// | stick        | sliding velocity along its initial direction| positive → ≤ 0  |
/// | geometric loss | the contact feature no longer detected   | —                |
/// | controller   | the next sample time of the controller     | time             |
///
/// A crossing is isolated on the stepper's dense output (calc_state on
/// [previous_time, current_time], never re-integration) by the Illinois
/// method, safeguarded by bisection so that it always terminates, to
/// SimulationOptions::event_time_tolerance or 4 ulps of t, whichever is
/// coarser (by default machine precision); where a witness is
/// close to zero inside a step the simulator samples it at interior points,
/// so that two crossings in one step are not missed. At the earliest event
/// the state is interpolated, the event handled (impulse LCP for impacts,
/// force LCP 11.42 for the new current and active sets), and the stepper
/// re-initialised (its cached derivative is stale after a jump).
///
/// Zeno, event-driven: a contact's impacts whose last three flight times
/// shrink by a constant ratio r < 1 (a ball under gravity: r = e) converge to
/// t∞ = t_k + Δt_k·r/(1−r). The contact bounces on, however slowly, until its
/// next apex would stay within contact_tolerance; that impact is plastic,
/// the contact persistent (normal velocity zero, gap zero; the rest of the
/// state integrated on), and a zeno_rest event (velocities and impulse 0)
/// is logged at the predicted t∞, where the bouncing motion comes to rest.
/// A ball dropped 1 m rests at t∞ to 2e-11 s, its gap and normal velocity
/// at round-off. Where the sequence is not geometric (a first or second
/// impact, several bodies, friction) an impact slower than
/// SimulationOptions::zeno_speed is plastic at once (zeno_rest at that
/// impact) — the rule of the time-stepping scheme too. So bouncing ends in
/// finite time; a run never loops forever on events
/// (SimulationOptions::max_events).
/// Event-driven, in free flight (no contact touching) a free-flyer is
/// integrated in a local chart of its
/// configuration at the stepper's last restart (R = R_b exp(δθ), the linear
/// velocity in the base frame), so that a flight under gravity with a
/// constant angular velocity is a polynomial in t, followed to round-off
/// (docs/schemes.md "Free flight of a rotating body").
/// Constraint drift of the current contacts is projected away when it
/// exceeds SimulationOptions::drift_tolerance, and quaternions are kept unit.
/// A failure ends the run with a status naming the time, the contacts and
/// the reason; everything recorded up to then is kept. The same inputs give
/// bit-identical results.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "plume/contact/detection.hpp"
#include "plume/dynamics/contact_dynamics.hpp"
#include "plume/sim/world.hpp"

namespace plume {

enum class Scheme : std::uint8_t {
  EventDriven,   ///< rigid contacts, events located on dense output (Table 11.1)
  Compliant,     ///< spring–damper contacts integrated as a smooth ODE (§11.8)
  TimeStepping,  ///< variable-step implicit trapezoid with an embedded LCP (Liu et al. 2004)
};
const char* to_string(Scheme scheme);
/// "event-driven", "compliant", "time-stepping". @throws Error otherwise.
Scheme parse_scheme(const std::string& text);

enum class Integrator : std::uint8_t {
  Dopri5,         ///< runge_kutta_dopri5 through make_dense_output (default)
  BulirschStoer,  ///< bulirsch_stoer_dense_out
  Rosenbrock4,    ///< rosenbrock4_dense_output (stiff; Jacobian by finite differences)
  BogackiShampine,  ///< Bogacki–Shampine 3(2), FSAL (3 evaluations per step), cubic Hermite dense output
};
const char* to_string(Integrator integrator);
/// "dopri5", "bulirsch-stoer", "rosenbrock4", "bogacki-shampine". @throws Error otherwise.
Integrator parse_integrator(const std::string& text);

/// How the time-stepping scheme advances the state over one step h from
/// (q, v) with the accelerations a of the step's force LCP.
enum class TimeSteppingRule : std::uint8_t {
  /// v₁ = v + h (a + a_p)/2, q₁ = q ⊕ h (v + v₁)/2, with a_p from a second
  /// force LCP at the predicted state (Liu et al.): second order, two force
  /// solves per step (default).
  Trapezoid,
  /// v₁ = v + h a, q₁ = q ⊕ h v₁: first order, one force solve per step, the
  /// rule of MuJoCo's default integrator. The fast mode for fixed-step runs
  /// at a controller's rate; contacts are still held at Ψ = 0 by the drift
  /// correction and landed on exactly.
  SymplecticEuler,
};
const char* to_string(TimeSteppingRule rule);
/// "trapezoid", "symplectic-euler". @throws Error otherwise.
TimeSteppingRule parse_time_stepping_rule(const std::string& text);

struct SimulationOptions {
  Scheme scheme = Scheme::EventDriven;
  Integrator integrator = Integrator::Dopri5;
  double duration = 1.0;          ///< run() default end time [s]
  double output_rate = 100.0;     ///< trajectory samples per second (0: event times only)
  double abs_tol = 1e-10;         ///< integrator absolute tolerance
  double rel_tol = 1e-10;         ///< integrator relative tolerance
  double initial_step = 1e-4;     ///< [s]
  double min_step = 1e-12;        ///< below this the run fails with StepUnderflow [s]
  double max_step = 1e-2;         ///< [s]
  /// Events are located to within this or 4 ulps of t, whichever is
  /// coarser. The default is machine precision: 1e-15 s up to t = 1.13 s,
  /// 4 ulps of t after [s].
  double event_time_tolerance = 1e-15;
  double contact_tolerance = 1e-9;      ///< |φ| below which two surfaces touch [m]
  double velocity_tolerance = 1e-7;     ///< |ζ| below which a touching contact rests [m/s]
  /// Impacts slower than this are plastic unless (event-driven) the
  /// contact's flight times are geometric: it then rests at their
  /// accumulation point t∞ instead (see above) [m/s].
  double zeno_speed = 1e-3;
  /// Sliding speed below which a contact sticks [m/s]. Event-driven uses at
  /// least 10·abs_tol: a looser integration leaves tangential speeds of that
  /// size where a slide stops, and taken for sliding they would keep the
  /// slide turning at µm/s (its u/|u| friction stiff, steps of ~1e-7 s).
  double slip_velocity = 1e-7;
  double drift_tolerance = 1e-9;        ///< current contacts are projected back beyond this [m]
  int cone_directions = 8;              ///< polyhedral friction cone for the LCPs
  int max_events = 200000;              ///< cap on events in one run
  long max_steps = 50000000;            ///< cap on integrator steps in one run
  bool joint_damping = true;            ///< apply the URDF `<dynamics damping>`
  bool joint_limits = true;             ///< URDF position limits as unilateral constraints
  double joint_limit_restitution = 0.0; ///< restitution of impacts on joint limits
  bool torque_limits = false;           ///< clamp the controller's output to the URDF efforts
  /// A controller's τ on the coordinates of a free-flyer or planar joint
  /// (no actuator) stops the run (status Failed, naming the joint) unless
  /// this is true.
  bool unactuated_torques = false;
  double time_step = 1e-3;              ///< time-stepping: initial step h_init [s]
  TimeSteppingRule time_stepping_rule = TimeSteppingRule::Trapezoid;  ///< time-stepping: the step's rule
  /// Event-driven: where an event's force or impulse LCP is left unsolved
  /// (Lemke found no solution and proved none impossible — dependent
  /// frictional contacts), the run continues for this long with
  /// velocity-level (Stewart–Trinkle) steps of `fallback_step`, whose LCP is
  /// always solvable, then resumes event-driven integration. Each window is
  /// an event `fallback` per touching contact and counts in
  /// SimulationStatistics::fallbacks. 0: stop with ContactFailure instead.
  /// A proved inconsistency (Painlevé's paradox) always stops the run [s].
  double fallback_duration = 1e-3;
  double fallback_step = 1e-4;          ///< step of the fallback windows [s]
  /// A world whose initial state sinks deeper than this into any surface is
  /// refused by Simulator's constructor (ArgumentError naming the contact):
  /// rigid contact starts from a touching, not a deeply penetrating, state [m].
  double max_initial_penetration = 0.01;
  /// Event-driven only: also propagate the state-transition matrix
  /// Φ = ∂x(t)/∂x(t_start), x = (δq, q̇) with δq along the velocity
  /// coordinates (a free-flyer's body twist, as integrate() moves it): the
  /// variational equations along each smooth segment (analytic ABA derivatives
  /// in free flight; central differences of the constrained dynamics while
  /// contacts are active) and a saltation matrix at every event (the impulse
  /// LCP's velocity jump differentiated at its contact set, the time shift
  /// from the triggering witness). τ is held as the run holds it
  /// (open-loop). See Simulator::sensitivity().
  bool sensitivity = false;
};

/// Simulator::sensitivity(): Φ = ∂x(time_end)/∂x(time_start), 2nv × 2nv, rows and
/// columns (δq_0 … δq_{nv−1}, v_0 … v_{nv−1}).
struct SensitivityReport {
  MatrixX state_transition;
  double time_start = 0.0, time_end = 0.0;
  long saltations = 0;         ///< events crossed (one saltation matrix each)
  long field_evaluations = 0;  ///< dynamics and derivative evaluations spent on it
  std::string invalid;         ///< non-empty: why Φ stopped being propagated (a fallback window)
};

/// τ = f(t, q, v), called at the controller's sample times; τ is held
/// constant until the next sample (zero-order hold). τ is resized to nv and
/// zeroed before every call, so a controller writes only the joints it
/// drives; a non-zero τ on a free-flyer's or planar joint's coordinates stops
/// the run unless SimulationOptions::unactuated_torques.
using ControllerFunction = std::function<void(double t, const VectorX& q, const VectorX& v, VectorX& tau)>;

enum class EventKind : std::uint8_t { Impact, ContactGain, ContactLoss, Stick, Slip, ZenoRest, Fallback };
/// "impact", "contact_gain", "contact_loss", "stick", "slip", "zeno_rest",
/// "fallback" (a velocity-level window begins; see SimulationOptions::fallback_duration).
const char* to_string(EventKind kind);

/// One contact taking part in an event (one row of events.csv).
struct SimulationEvent {
  double time = 0.0;
  EventKind kind = EventKind::Impact;
  std::string contact;  ///< "shape_a|shape_b#feature" or "limit:joint:lower|upper"
  std::string body_a, body_b;
  double pre_normal_velocity = 0.0;   ///< ζ⁻ [m/s]
  double post_normal_velocity = 0.0;  ///< ζ⁺ [m/s]
  double impulse = 0.0;               ///< normal impulse [N·s]
};

/// A contact's state at an output time (for plots).
struct ContactSample {
  double time = 0.0;
  std::string contact;
  double gap = 0.0;
  double normal_velocity = 0.0;
  double normal_force = 0.0;
  double friction_force = 0.0;  ///< magnitude of the tangential force
};

/// Receives what a run produces. All methods have empty defaults.
class Recorder {
 public:
  virtual ~Recorder() = default;
  /// The state at output times and at every event time (after the event).
  virtual void sample(double /*t*/, const VectorX& /*q*/, const VectorX& /*v*/, double /*energy*/) {}
  virtual void event(const SimulationEvent& /*event*/) {}
  virtual void contact(const ContactSample& /*sample*/) {}
};

/// Keeps everything in memory.
class MemoryRecorder : public Recorder {
 public:
  void sample(double t, const VectorX& q, const VectorX& v, double energy) override;
  void event(const SimulationEvent& e) override { events.push_back(e); }
  void contact(const ContactSample& s) override { contacts.push_back(s); }
  std::vector<double> times, energies;
  std::vector<VectorX> q, v;
  std::vector<SimulationEvent> events;
  std::vector<ContactSample> contacts;
};

enum class SimulationStatus : std::uint8_t {
  Finished,       ///< reached the requested time
  ContactFailure, ///< an LCP had no (consistent) solution, e.g. Featherstone's Example 11.1
  StepUnderflow,  ///< the integrator's step fell below min_step
  NonFinite,      ///< a NaN or infinity appeared in the state or τ
  EventLimit,     ///< more than max_events events
  StepLimit,      ///< more than max_steps steps
  Failed,         ///< anything else (see the message)
};
/// "finished", "contact_failure", "step_underflow", "non_finite", "event_limit",
/// "step_limit", "failed".
const char* to_string(SimulationStatus status);

struct SimulationStatistics {
  long steps = 0;            ///< accepted integrator steps
  long rhs_evaluations = 0;  ///< right-hand-side evaluations
  long events = 0;           ///< events handled (each may involve several contacts)
  long impacts = 0;
  long lcp_solves = 0;
  long projections = 0;      ///< drift projections
  long fallbacks = 0;            ///< velocity-level fallback windows (event-driven); force solves
                                 ///< that fell back to the friction-box PGS (time-stepping)
  double fallback_time = 0.0;    ///< simulated time spent in them [s]
  double max_penetration = 0.0;  ///< largest −φ of any shape contact over the run [m]
  /// Largest overrun of a joint limit over the run (rigid schemes with
  /// joint limits) [rad; m for a prismatic joint].
  double max_limit_violation = 0.0;
  double energy_start = 0.0;     ///< kinetic + potential [J]
  double energy_end = 0.0;
  double wall_time = 0.0;        ///< [s]
};

struct SimulationResult {
  SimulationStatus status = SimulationStatus::Finished;
  std::string message;
  double time = 0.0;  ///< where the run stopped
  SimulationStatistics statistics;
};

class Simulator {
 public:
  /// @throws Error if the options are inconsistent (tolerances ≤ 0, …).
  Simulator(World world, const SimulationOptions& options = {});
  ~Simulator();
  Simulator(Simulator&&) noexcept;
  Simulator& operator=(Simulator&&) noexcept;

  /// τ = f(t, q, v) sampled every `period` seconds (zero-order hold); the
  /// sample times are events. Without a controller τ = 0.
  void set_controller(ControllerFunction controller, double period);

  /// Advances to time `until` (default: options().duration) or a failure.
  SimulationResult run(Recorder* recorder = nullptr);
  SimulationResult run_until(double until, Recorder* recorder = nullptr);

  double time() const;
  const VectorX& q() const;
  const VectorX& v() const;
  const World& world() const;
  const SimulationOptions& options() const;
  /// The contacts currently in the current set (touching, ζ = 0).
  const std::vector<Contact>& current_contacts() const;
  /// Total mechanical energy (kinetic + potential) of the current state [J].
  double energy() const;
  /// Contact names as written to events.csv.
  std::string contact_name(const Contact& c) const;
  /// What the simulation leaves out, one line each: collision shapes that
  /// are not usable for contact (meshes), naming the shape and its link and
  /// saying when a link is left with none (it touches nothing), and shape
  /// pairs without a contact kernel. Empty when everything takes part.
  const std::vector<std::string>& warnings() const;
  /// The state-transition matrix so far.
  /// @throws Error unless SimulationOptions::sensitivity (event-driven scheme).
  SensitivityReport sensitivity() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A joint-space PD controller for the actuated (1-DoF) joints of a world:
/// τ_i = kp (q_target,i − q_i) − kd v_i; root joints and unlisted dofs get 0.
struct PdController {
  VectorX kp, kd;      ///< [nv] gains (0 for unactuated dofs)
  VectorX q_target;    ///< [nq] target configuration (only 1-DoF joints used)
  VectorX tau_ff;      ///< [nv] optional feed-forward (empty: none)
  ControllerFunction function(const Model& model) const;
};

}  // namespace plume
