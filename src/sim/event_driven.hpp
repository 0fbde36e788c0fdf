#pragma once
// The event-driven scheme: Featherstone's Table 11.1 (docs/theory.md §4) on
// Boost.Odeint dense-output steppers. One state, one step of the method per
// file:
//
//   event_driven.cpp          the loop (steps 1, 3 and 7): integrate, stop at
//                             the earliest event, hand it on; recording, the
//                             controller's samples, the run's end
//   constrained_dynamics.cpp  step 1: the right-hand side with the active
//                             contacts as equality constraints
//   event_location.cpp        steps 2–3: witness functions and the earliest
//                             crossing in a step; sliding-direction switches
//   impacts.cpp               step 4: impulsive dynamics at contact gain (§5)
//   contact_sets.cpp          steps 5–6: the current and active sets from the
//                             force LCP (11.42)
//   drift_correction.cpp      projection back onto φ = 0, ζ̇ = 0
//   fallback.cpp              velocity-level windows where an LCP is left
//                             unsolved
//
// The compliant and time-stepping schemes share option checks, contact
// names, parameters and the crossing locator with it (scheme_common.hpp).

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/LU>

#include "sim/banded_cholesky.hpp"
#include "plume/contact/detection.hpp"
#include "plume/dynamics/contact_dynamics.hpp"
#include "plume/sim/simulator.hpp"
#include "sim/dense_stepper.hpp"
#include "sim/drift_correction.hpp"
#include "sim/scheme_common.hpp"

namespace plume::detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// What a witness function watches (the "event" column of Table 11.1).
enum class WitnessKind : std::uint8_t {
  Gap,          // φ of a contact that is not active: crosses to ≤ 0 → impact / contact gain
  NormalForce,  // λ of an active contact: crosses to ≤ 0 → contact loss
  ConeMargin,   // μ λ − |f_t| of a sticking contact: crosses to ≤ 0 → slip
  // Σ μᵢ λᵢ − |Σ f_t,i| over the sticking contacts between two bodies, one
  // of whose cone witnesses is suppressed: crosses to ≤ 0 → slip. With
  // several contacts between two bodies (a face on a face) the forces that
  // hold a stick are not unique: a contact's cone witness that fires while
  // another distribution still sticks is suppressed (handle_event), and
  // once all are, nothing watched the pair's friction running out. This
  // bound holds for every distribution, and where the pair's total wrench
  // is determined (a box on the ground) it is the stick's exact limit.
  PairCone,
  SlideSpeed,   // u_t · ŝ₀ of a slow sliding contact: crosses to ≤ 0 → stick (or a turn: is_slide_turn)
  // Internal mode switches of a sliding contact (no LCP, not logged): its
  // friction direction is u/|u| while |u| > kSlideFreeze and is frozen at ŝ₀
  // below, so that the right-hand side stays smooth through the stop, which
  // SlideSpeed then locates exactly. After a repeated turn the direction
  // follows u/|u| down to a tenth of the speed at the turn (freeze_speed).
  SlideFreeze,   // |u| − freeze_speed: crosses to ≤ 0 → freeze the direction
  SlideRelease,  // kSlideFreeze − |u|: crosses to ≤ 0 → follow u/|u| again
};

inline constexpr double kSlideFreeze = 1e-4;  // [m/s]
inline constexpr double kConeEventShrink = 1e-6;  // relative μ at a cone-margin event (cone_event)
// Gaps up to this take part in a fallback step's LCP (each may close) [m].
inline constexpr double kFallbackMargin = 1e-3;
// Speeds within this band of kSlideFreeze count as at the threshold (event
// times are located to ~1e-9 s, during which a sliding speed changes by
// far less).
inline constexpr double kSlideBand = 1e-3 * kSlideFreeze;

struct Witness {
  WitnessKind kind;
  int index;      // into EventDrivenCore::current (or ::candidates for new gaps)
  bool candidate; // a contact detected at the step's end, not yet tracked
  double offset;  // added to the value (e.g. the contact tolerance for touching contacts)
};

// Featherstone's Table 11.1: rigid contacts, events on the dense output.
struct EventDrivenCore {
  using Vec2 = Eigen::Vector2d;

  // One tracked contact of the current set (touching, ζ = 0).
  struct Tracked {
    Contact contact;
    bool active = false;   // an equality constraint of the integration
    ContactMode mode = ContactMode::Sticking;
    Vec3 slide_dir = Vec3::Zero();  // world sliding direction when the slide began (or froze)
    bool frozen = false;            // friction along slide_dir rather than u/|u| (slow slides)
    double freeze_speed = kSlideFreeze;  // |u| at which the direction freezes (lower after a turn)
    double mu = 0.0, restitution = 0.0;
  };

  // The earliest event in a step: its time and which witness saw it
  // (−1: a contact event; ≥ 0 may be an internal slide switch).
  struct StepEvent {
    double time = kInf;
    int witness = -1;
  };

  EventDrivenCore(World w, const SimulationOptions& o);

  // ---- the world and the run's state --------------------------------------------------
  World world;
  SimulationOptions opt;
  Data data;
  ContactCatalogue catalogue;  // detector, per-pair parameters, names
  ContactDetector& detector;
  ContactSolver solver;

  double t = 0.0;
  VectorX q, v, tau, qn, zero_nv;
  ControllerFunction controller;
  double period = 0.0, next_sample = kInf;
  std::vector<Tracked> current;       // the current set (touching, ζ = 0)
  std::vector<Contact> current_view;  // its contacts, for Simulator::current_contacts
  bool initialised = false;
  SimulationStatistics stats;
  std::unique_ptr<DenseStepper> stepper;
  class FreeFlyerChart* chart = nullptr;  // the stepper, when it integrates free-flyers in their chart
  std::function<void(const VectorX&, VectorX&, double)> rhs_fn;
  Recorder* rec = nullptr;

  const Model& model() const { return world.model(); }
  void parameters_of(const Contact& c, double& mu, double& e) const;
  std::string name_of(const Contact& c) const { return catalogue.name_of(model(), c); }
  // Every shape contact and joint limit with φ < margin at qq (placements in data).
  void detect_all(const VectorX& qq, double margin, std::vector<Contact>& out);
  VectorX passive() const;
  void refresh_view();
  int tracked_index(std::uint64_t id) const;

  // ---- the loop (event_driven.cpp) ---------------------------------------------------------
  SimulationResult run_until(double until, Recorder* recorder);
  // Steps 4–6 at the located event (t, q, v); false ends the run (status in result).
  enum class EventOutcome { Continue, Restarted, Stop };
  EventOutcome handle_event(SimulationResult& result, const StepEvent& event, double until);
  bool register_event(SimulationResult& result);
  bool sample_controller(SimulationResult& result);
  void restart_stepper(double dt);
  double stepper_dt(double t0, double t1) const;
  void track_penetration(const VectorX& qq);
  std::string contact_summary() const;
  bool fail(SimulationResult& result, SimulationStatus status, const std::string& message);
  SimulationResult fail_and_finish(SimulationResult& result, SimulationStatus status, const std::string& message,
                                   std::chrono::steady_clock::time_point wall0);
  SimulationResult finish(SimulationResult& result, std::chrono::steady_clock::time_point wall0);
  double next_output = 0.0;
  double last_event_time = -kInf;
  long tiny_steps = 0;
  int events_at_same_time = 0;

  // Recording.
  double energy_of(const VectorX& qq, const VectorX& vv);
  void record_sample(double time, const VectorX& qq, const VectorX& vv);
  void record_outputs_until(double until, bool inclusive);
  void record_sample_if_event(bool event);
  void record_final_state();
  void emit(double time, EventKind kind, const Contact& c, double pre, double post, double impulse);
  double last_sample_time = -kInf;
  VectorX last_sample_q_, last_sample_v_;  // the last recorded state (record_sample_if_event)

  // ---- step 1: the right-hand side (constrained_dynamics.cpp) -------------------------------
  // The ODE ẏ = [G(q) v; q̈].
  void rhs(const VectorX& y, VectorX& dy, double);
  VectorX yq, yv;  // rhs(): y's q and v
  // q̈ with the active contacts as equalities; contact forces in fn / ft when `forces`.
  void dynamics(const VectorX& qq, const VectorX& vv, Eigen::Ref<VectorX> qdd, bool forces);
  void dynamics_full(const VectorX& qq, const VectorX& vv, Eigen::Ref<VectorX> qdd);
  void correct_for_tau();
  void fill_forces(const VectorX& vv);
  const VectorX& applied_tau(const VectorX& vv);
  bool same_state(const VectorX& qq, const VectorX& vv) const;
  void ensure(int na);
  const double* constraint_column(int code) const;
  void fill_constraint_columns(int rows);
  // The rows solve by contacts (dynamics_full): W_a = L⁻ᵀ[t_a d_a1 d_a2]
  // as Wc[3nv a + 3d + c], its nonzero dofs, Ā = W D⁻¹ Wᵀ's lower blocks.
  double* contact_W(int a) { return Wc.data() + 3 * static_cast<Eigen::Index>(model().nv()) * a; }
  const double* contact_W(int a) const { return Wc.data() + 3 * static_cast<Eigen::Index>(model().nv()) * a; }
  int* contact_support(int a) { return sup_idx.data() + static_cast<std::size_t>(model().nv()) * a; }
  const int* contact_support(int a) const { return sup_idx.data() + static_cast<std::size_t>(model().nv()) * a; }
  static void solve_Lt3(const Model& m, const RowMatrixX& LD, const int* chain, int nc, double* w);
  void form_Abar(int na);
  double abar(int i, int j) const { return i >= j ? Abar(i, j) : Abar(j, i); }
  void force_term(const VectorX& l, VectorX& out);
  void factor_A(int rows);
  void solve_A(int rows, VectorX& rhs);
  Vec2 sliding_direction(int a, const VectorX& vv) const;
  Vec3 sliding_velocity(int a, const VectorX& vv) const;
  Eigen::Ref<VectorX> x_scratch();
  int active_slot(int track) const;
  // The last evaluation of dynamics(): at the same (q, v) it is reused, and
  // when only τ changed (a controller sample) it is corrected through the
  // factorisation it left behind instead of being recomputed.
  struct Memo {
    bool valid = false;
    VectorX q, v, tau, qdd;
    int rows = 0;
  } memo;
  std::vector<Contact> act;  // the active contacts of the memo's evaluation
  std::vector<int> act_track;  // their indices into current
  MatrixX T, D, K, A, Abar;
  VectorX Wc, kv, dinv;
  std::vector<int> sup_idx, support_size, chain;
  std::vector<Vec2> slide_c;  // per active contact: the sliding direction (c₁, c₂) of a sliding one, else 0
  std::vector<int> row_src;  // per constraint row: 3a (T's column a) or 3a + 1 + j (D's column 2a + j)
  VectorX s0, dl;            // D⁻¹L⁻ᵀ(τ − C) (dynamics_full); Δλ (correct_for_tau)
  VectorX Tdv, Ddv, b, lam, a0, x, ydot, dtau, du, tau_applied, scratch;
  std::vector<double> fn;
  std::vector<int> dependent_scratch;  // add_dependent_contacts
  std::vector<Eigen::Vector2d> ft;
  bool symmetric = true, sliding = false;
  // A's factors (factor_A): Cholesky in Lc's lower triangle, or LU.
  MatrixX Lc;
  bool use_lu = false;
  Eigen::PartialPivLU<MatrixX> lu;
  double reg_delta = 0.0;  // the δ added to A's diagonal
  VectorX refine;          // solve_A's residual (non-symmetric A)
  // Many more rows than dofs (stacks, pyramids): the nv-space solve
  // (dynamics_full) and its factor P = KKᵀ.
  bool reduced = false;
  MatrixX P;
  VectorX rb, z;
  BandedCholesky pchol;

  // ---- steps 2–3: witnesses and their location (event_location.cpp) -------------------------
  void build_witnesses_current();
  void add_candidate_witnesses(const VectorX& q1);
  void evaluate_witnesses(const VectorX& y, VectorX& w);
  double witness_value(const Witness& w, const VectorX& qq, const VectorX& vv);
  // witness_value at a stepper state y = (q, v), through scratch copies (no allocation)
  double witness_of_state(const Witness& w, const VectorX& y) {
    witness_q_ = y.head(model().nq());
    witness_v_ = y.tail(model().nv());
    return witness_value(w, witness_q_, witness_v_);
  }
  VectorX witness_q_, witness_v_, y1_copy_, q_sample_, y_restart_;
  // Keeps w's entries, at least n of them (doubling: no allocation once grown).
  static void grow(VectorX& w, std::size_t n) {
    const auto size = static_cast<Eigen::Index>(n);
    if (w.size() < size) w.conservativeResize(std::max<Eigen::Index>(size, 2 * w.size()));
  }
  double witness_at(std::size_t i, double time);
  double sliding_witness(WitnessKind kind, int track, int a, const VectorX& vv) const;
  double locate(std::size_t i, double a, double fa, double b, double fb);
  // The earliest event in the step [t0, t1] just taken from y0.
  StepEvent earliest_event(double t0, double t1, const VectorX& y0, const VectorX& y1);
  bool detected_at(double time, std::uint64_t id);
  double force_scale(const VectorX& w) const;
  // The sliding speed below which a contact sticks: slip_velocity, or the
  // integration's velocity noise (10·abs_tol) when that is larger.
  double slip_speed() const { return std::max(opt.slip_velocity, 10.0 * opt.abs_tol); }
  bool is_slide_switch(int wi) const;
  bool is_slide_turn(int wi);
  void forget_turns();
  std::vector<std::uint64_t> turned;  // sliding contacts whose frozen slide has turned (is_slide_turn)
  void switch_slide_mode(const Witness& w);
  bool is_suppressed(WitnessKind kind, std::uint64_t id) const;
  std::vector<Witness> witnesses;
  VectorX w0, w1, ystate;
  std::vector<Contact> candidates, touching;
  std::vector<std::uint64_t> detected_ids;
  // Candidates whose gap never opened although ζ̇ > velocity_tolerance:
  // handle_contacts treats them as resting (a separating speed below the
  // Zeno speed that gravity or the actuators take back at once).
  std::vector<std::uint64_t> held;
  // Force and cone witnesses not watched until the sets change.
  std::vector<std::pair<WitnessKind, std::uint64_t>> suppressed;
  // The contact whose cone-margin witness fired (the event being resolved):
  // its force LCP runs with μ(1 − kConeEventShrink), so that it sticks only
  // if the contacts can hold it strictly inside its cone.
  bool cone_event = false;
  std::vector<std::uint64_t> cone_event_ids;  // that contact, or the pair's (PairCone)
  int cone_pair_group = -1;                   // the pair-cone witness's group, or −1
  // The pair-cone witnesses' groups: group g's tracks (indices into
  // current) are pair_members[pair_start[g] .. pair_start[g + 1]).
  std::vector<int> pair_members, pair_start;
  void build_pair_cone_witnesses();
  double pair_cone_margin(int group, Vec3* total);
  // The first contact of pair-cone group g (its key and orientation).
  const Contact& pair_first(int group) const {
    return current[static_cast<std::size_t>(pair_members[static_cast<std::size_t>(pair_start[static_cast<std::size_t>(group)])])].contact;
  }
  // First directions (world, by id) for contacts that start to slide in
  // a cone-margin event's force LCP, which refine_starting_slides then
  // turns onto their a_t: against the friction that reached the cone's
  // edge (friction is continuous there).
  std::vector<std::pair<std::uint64_t, Vec3>> slide_hints;
  void record_edge_friction(int pair_group);
  void add_slide_hint(std::uint64_t id, const Vec3& direction);

  // ---- steps 4–6: impacts and the contact sets (impacts.cpp, contact_sets.cpp) -------------
  // At time t with state (q, v): impacts, then the new current and active sets.
  bool handle_contacts(SimulationResult& result);
  // Step 4: the impulse LCP over `touching` with separation speeds zeta
  // (updated to the post-impact ones); false when it fails.
  bool apply_impacts(SimulationResult& result, VectorX& zeta, const VectorX& mu, const VectorX& e);
  // Zeno (impacts.cpp): the last impact times of each contact in flight,
  // and the contacts landed at a predicted accumulation point t∞ whose
  // zeno_rest event is logged once the run passes it.
  struct ImpactSeries {
    std::uint64_t id = 0;
    double time[4] = {0.0, 0.0, 0.0, 0.0};  // the last impacts, oldest first
    int n = 0;
  };
  struct Landing {
    double time;  // t∞
    Contact contact;
  };
  ImpactSeries& series_of(std::uint64_t id);
  // t∞ of a series that converges geometrically (NaN otherwise); r its ratio.
  static double accumulation_point(const ImpactSeries& s, double& r);
  void forget_resting_series();
  void emit_landings_until(double time);
  std::vector<ImpactSeries> series;
  std::vector<Landing> landings;
  // Step 6: the force LCP over the resting contacts sets `current`.
  bool solve_contact_sets(SimulationResult& result, const VectorX& zeta, const VectorX& mu, const VectorX& e);
  // Where the force LCP has no solution (Painlevé): the tangential impact,
  // the impulse of a velocity-level step of h = 1e-9 s (`attempt` 1, 2:
  // 1e-7, 1e-5 s) over `touching`; zeta updated. False if it failed.
  bool jam(int attempt, VectorX& zeta, const VectorX& mu);
  static constexpr int kJamAttempts = 6;           // three steps h, with the run's cone and then a finer one
  static constexpr int kJamConeDirections = 16;    // the finer cone (cos(π/16) = 0.98)
  void add_dependent_contacts(const std::vector<int>& resting_current);
  // Coulomb's direction for contacts that start to slide from rest (tracks
  // in current): the force LCP's polyhedral cone only approximates it.
  void refine_starting_slides(const std::vector<int>& starting);
  double starting_slide_residuals(const std::vector<int>& slots, const VectorX& angle, VectorX& r);
  void report_set_changes(const std::vector<Tracked>& previous, bool impact);
  Vec3 tangential_acceleration(const Contact& c, const VectorX& qdd);
  static bool same_sets(const std::vector<Tracked>& a, const std::vector<Tracked>& b);

  // ---- drift correction (drift_correction.cpp) ------------------------------------------------
  bool project();
  bool project_velocities();
  bool drifted();
  void carried_contacts(int na);
  HMetricCorrection hmetric;
  std::vector<Contact> carried, carried_scan;  // project(): contacts outside the active set it pushed in
  MatrixX proj_K;                              // [T | the carried contacts' Jacobian]
  VectorX proj_phi, proj_dv;

  // ---- fallback (fallback.cpp) ------------------------------------------------------------------
  bool resolve_contacts(SimulationResult& result, double until);
  bool rescue(SimulationResult& result, double until);
  bool window(SimulationResult& result, double until);
  bool resume_after_rescue(SimulationResult& result);
  enum class StepRescue : std::uint8_t { Resumed, Stop, None };
  StepRescue rescue_step(SimulationResult& result, double until, const std::string& reason);
  bool fallback_window(SimulationResult& result, double until);
  std::string fallback_reason;          // non-empty: handle_contacts asks for a fallback
  bool contacts_pending = false;        // a fallback ended at `until`: sets still to solve
  std::optional<ContactDetector> wide;  // detects gaps up to kFallbackMargin
  std::vector<std::string> fallback_log;

  // ---- sensitivity: the state-transition matrix (sensitivity.cpp) ------------------------------
  // With SimulationOptions::sensitivity, Φ = ∂x(t)/∂x(t_start) for x = (δq, q̇), δq along the
  // velocity coordinates: the variational equations along each smooth segment, a saltation
  // matrix at each event.
  struct ImpactStage {  // one impulse LCP of an event, to differentiate the velocity jump
    std::vector<Contact> contacts;
    VectorX e, mu, q, v;
    ImpactOptions io;
  };
  struct Sensitivity {
    explicit Sensitivity(const Model& m) : data(m), solver(m, 16) {}
    MatrixX Phi;                  // [2nv×2nv]
    double t_start = 0.0;
    bool started = false;
    std::string invalid;          // non-empty: why Φ is no longer propagated
    Data data;                    // a workspace of its own (the core's data holds the memo's factors)
    ContactSolver solver;
    std::vector<ImpactStage> stages;
    VectorX f_minus, grad;        // at the event: the field before it, the witness gradient
    bool has_grad = false;
    VectorX dtime;                // ∂t_event/∂x of a geometric loss (no witness function)
    bool has_dtime = false;
    long saltations = 0;
    long field_evaluations = 0;
  };
  std::unique_ptr<Sensitivity> sens;
  void sensitivity_start();
  void sensitivity_flow(double ta, double tb);
  void sensitivity_before_event(const StepEvent& event);
  void sensitivity_after_event();
  void sensitivity_invalidate(const std::string& why);
  VectorX tangent_field(const VectorX& qq, const VectorX& vv);
  void field_jacobian(const VectorX& qq, const VectorX& vv, MatrixX& A);
  MatrixX impact_jacobian(const ImpactStage& stage);
  bool geometric_loss_time_gradient(std::uint64_t id, VectorX& dtime);
};

}  // namespace plume::detail
