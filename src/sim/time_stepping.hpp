#pragma once
// The time-stepping scheme of plume::Simulator: the variable-step implicit
// trapezoidal rule with the contact LCP inside the step (Liu, Chen, Peng,
// Qiao 2004; docs/theory.md §7), with Coulomb friction through the frictional
// LCP of ContactSolver.
//
// One step from (t, q, v), with q̈ = a from the force LCP of the persistent
// contacts β (ζ = 0) at the step's start:
//   0. h = min(h_init, time to the controller's next sample, to the end).
//   1. Predict with the current forces: v_p = v + h a, q_p = q ⊕ h (v + h a/2).
//   2. Solve the force LCP of β at (q_p, v_p): a_p.
//   3. Correct (trapezoid): v₁ = v + h (a + a_p)/2, q₁ = q ⊕ h (v + v₁)/2.
//   With TimeSteppingRule::SymplecticEuler (the fast mode) steps 2 and 3
//   are left out: v₁ = v + h a, q₁ = q ⊕ h v₁, one force LCP per step (the
//   one at the step's end, step 5); the landing of step 4 searches the
//   same path q ⊕ s (v + s a).
//   4. A contact outside β penetrating at q₁ (beyond the contact
//      tolerance): the first time, a contact outside β that penetrates at
//      q_p is landed on: the step is shortened to the root of its gap
//      Ψ_i(q(s)) = 0 along the prediction q(s) = q ⊕ s (v + s a/2) (Liu's
//      extra equation Ψ_ip = 0, solved for h by Illinois), so that it
//      touches at the step's end, and redone; otherwise h is halved and the
//      step redone. A sliding contact whose sliding velocity
//      reversed: shorten h to the secant root of the sliding speed (the stick
//      time) and redo.
//   5. Accept; project the active contacts of β back onto Ψ = 0, ζ = 0
//      (sticking ones also tangentially); the contacts touching at q₁ that
//      approach get the impact LCP (restitution, friction; plastic below
//      zeno_speed); the touching ones with ζ = 0 form the new β and the force
//      LCP gives the forces (and a) of the next step.
// Step-size control (Liu's score): each step taken shorter than h_init
// (landing, halving, stick) scores −1, each taken at h_init +1; a run of
// kScoreRun equal scores halves or doubles h_init. h_init starts at
// SimulationOptions::time_step and never exceeds it: the scheme has no error
// estimate, so the user's step is the accuracy knob and doubling only gives
// back what halving took. Steps shortened by the controller's sample times
// or the end of the run score 0.
//
// One class, one step of the method per file:
//   time_stepping.cpp             the loop (steps 0, 1, 3 and 5's order),
//                                 step-size control, recording
//   time_stepping_forces.cpp      step 2: the force LCP of β (friction by a
//                                 polyhedral cone, a friction box by PGS
//                                 where Lemke fails)
//   time_stepping_active_set.cpp  step 2 when β's modes are known: the active
//                                 contacts as equalities, a linear solve
//   time_stepping_landing.cpp     step 4: contact detection at q₁, landing on
//                                 a contact (Ψ_ip = 0), a slide's stop
//   time_stepping_rest.cpp        step 4 where only motion slower than
//                                 zeno_speed cut the step: a velocity-level step
//   time_stepping_drift.cpp       step 5: drift correction (HMetricCorrection,
//                                 shared with the event-driven scheme) and the
//                                 energy guard
//   time_stepping_impacts.cpp     step 5: the impact LCP at q₁; the
//                                 tangential impact where β's force LCP has
//                                 no solution (Painlevé)
//   time_stepping_contact_set.cpp step 5: the new β, its forces and modes
// The set-up, the controller's hold and the run's end are SchemeBase's
// (scheme_base.hpp), shared with the compliant scheme.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/LU>

#include "plume/contact/contact_jacobian.hpp"
#include "plume/dynamics/contact_dynamics.hpp"
#include "sim/banded_cholesky.hpp"
#include "sim/drift_correction.hpp"
#include "sim/scheme_base.hpp"

namespace plume::detail {

class TimeStepping final : public SchemeBase {
 public:
  TimeStepping(World w, const SimulationOptions& o);

  const std::vector<Contact>& current_contacts() const override { return current_view_; }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  static constexpr int kScoreRun = 4;  // equal scores in a row that halve / double h_init
  // jam(): the velocity-level step whose h → 0 limit is the tangential
  // impact (the first try; each further one 100 times longer), and how many
  // tries settle() makes.
  static constexpr double kJamStep = 1e-9;
  static constexpr int kMaxJams = 3;

  // A persistent contact (in β): touching with ζ = 0.
  struct Tracked {
    Contact contact;
    double mu = 0.0, restitution = 0.0;
    ContactMode mode = ContactMode::Sticking;
    bool active = false;          // λ > 0 in the last force LCP
    Vec3 slide_dir = Vec3::Zero();  // world sliding direction while sliding
  };
  // What one attempted step produced.
  enum class Outcome : std::uint8_t { Accepted, Penetration, Stick, ContactFailed };

  static bool bitwise_equal(const VectorX& a, const VectorX& b) {
    return a.size() == b.size() && std::equal(a.data(), a.data() + a.size(), b.data());
  }
  // |Ψ| below this touches; a contact outside β deeper than this penetrates.
  static double touch_margin(const SimulationOptions& o) { return 2.0 * std::max(o.contact_tolerance, o.drift_tolerance); }

  void parameters_of(const Contact& c, double& mu, double& e) const;
  // A contact's gap at the step's start if it touched then (settle()'s
  // detection at q_), else 0.
  double start_gap(std::uint64_t id) const {
    for (const Contact& c : touching_) {
      if (c.id == id) return std::min(c.gap, 0.0);
    }
    return 0.0;
  }
  // Step 4's test at the step's end: a contact outside β that goes deeper
  // than the margin (and deeper than it started, if it touched then).
  bool penetrates(const Contact& c) const {
    return c.gap < -touch_margin(opt_) && !in_beta(c.id) && c.gap < start_gap(c.id) - touch_margin(opt_);
  }
  // The weight w of the step's path q(s) = q ⊕ s (v + w s a) with the
  // forces at its start: 1/2 for the trapezoid's prediction (the exact path
  // at constant a), 1 for the symplectic Euler rule (q₁ = q ⊕ h v₁).
  double position_weight() const {
    return opt_.time_stepping_rule == TimeSteppingRule::SymplecticEuler ? 1.0 : 0.5;
  }
  bool in_beta(std::uint64_t id) const {
    for (const Tracked& tr : beta_) {
      if (tr.contact.id == id) return true;
    }
    return false;
  }

  // ---- the loop (time_stepping.cpp) ------------------------------------------------------
  // Steps 1–4 with step h; see time_stepping.cpp.
  Outcome attempt(double h, bool stick_landing, VectorX& q1, VectorX& v1, double& h_stick);
  // Step-size control: Liu's score of the step just taken.
  void score(int s);
  bool sample_controller(SimulationResult& result) {
    if (!controller_) return true;
    return sample_controller_at(q_, result);
  }
  bool advance(double until, SimulationResult& result) override;
  void record_current() override { record_sample(t_, q_, v_); }
  std::string contact_summary() const override;
  void refresh_view() {
    current_view_.clear();
    for (const Tracked& tr : beta_) current_view_.push_back(tr.contact);
  }
  // `settled`: settle() has just solved β's forces at this (q, v), the
  // forces the scheme goes on with: recorded as they are, not solved again.
  void record_sample(double time, const VectorX& q, const VectorX& v, bool settled = false);
  void record_outputs_until(double t0, const VectorX& q0, const VectorX& v0, double t1, const VectorX& q1,
                            const VectorX& v1, bool inclusive);

  // ---- step 2: the force LCP of β (time_stepping_forces.cpp, time_stepping_active_set.cpp) ----
  bool accelerations(const VectorX& q, const VectorX& v, VectorX& a, bool predicted = false);
  // (q: where accelerations() ran CRBA)
  bool active_set_accelerations(const VectorX& v, VectorX& a, bool predicted);
  bool fully_constrained();
  enum class Forces : std::uint8_t { Solved, Unsolved };
  Forces fast_forces(bool symmetric);
  // (the rows of fast_K_ grouped by fast_group_, contact k of group g = contacts[fast_group_contact_[g]])
  bool symmetric_forces(const std::vector<Contact>& contacts);
  bool factor_A(const std::vector<Contact>& contacts);  // (symmetric_forces: W, D⁻¹, A's factor)
  void add_A_blocks(int ng, int rows, const double* W);
  void support_chains(const std::vector<Contact>& contacts, int ng, int rows, const double* W);

  // ---- step 4: detection, landing, a slide's stop (time_stepping_landing.cpp) -----------------
  // `placements`: leave q's placements in data_ (false: the caller runs its own kinematics next).
  void detect(const VectorX& q, double margin, std::vector<Contact>& out, bool placements = true);
  double gap_at(const VectorX& q, const Contact& c) { return contact_gap_at(model(), data_, q, c); }
  double land(double h);
  double sliding_reversal(const VectorX& q1, const VectorX& v1, double h);
  Vec3 tangential_velocity(const Contact& c) const;
  double start_slide_speed(const Tracked& tr) const;

  // ---- step 4 below zeno_speed: the velocity-level step (time_stepping_rest.cpp) -------------
  bool slow_failure(Outcome outcome);
  // (h: shortened where the step lands on a contact; unchanged when it fails)
  bool rest_step(double& h, VectorX& q1, VectorX& v1);
  // The velocity-level impulse problem of a step h over `contacts`
  // (rest_step's, and jam()'s over the touching ones as h → 0):
  // v⁻ = v + h H⁻¹(τ − C), plastic, ζ⁺ ≥ −φ/h with φ = max(gaps, 0),
  // friction in the polyhedral cone with maximal dissipation;
  // `reuse_basis`: start from the last such problem's basis (the same
  // contacts); `compliance_retries`: where dependent contacts defeat Lemke
  // on the rigid problem, light compliances (their impulses in
  // least-squares share), as impacts().
  const ImpactSolution& velocity_level_impulses(double h, const std::vector<Contact>& contacts, const VectorX& gaps,
                                                bool reuse_basis, bool compliance_retries);
  // rest_step(): how many times a step may be solved again (contacts it
  // carries into their surfaces taken in, a landing's correction).
  static constexpr int kRestRounds = 4;

  // ---- step 5: drift, impacts, the new β and its forces ---------------------------------------
  // project() and no_energy_gain() return whether data_ holds the forward
  // kinematics (placements, velocities) of (q_, v_) as they leave them;
  // impacts() then needs no kinematics pass of its own.
  bool project(bool placed);                                                            // time_stepping_drift.cpp
  const VectorX& metric_step(const std::vector<Contact>& act, const std::vector<bool>* stick);
  bool no_energy_gain(const VectorX& q0, const VectorX& v0, double h, bool kinematics);  // time_stepping_drift.cpp
  const VectorX& applied_tau_at(const VectorX& v) {
    applied_torque(model(), opt_, tau_, v, tau_applied_);
    return tau_applied_;
  }
  bool impacts(SimulationResult& result, bool kinematics = false);  // time_stepping_impacts.cpp
  bool settle(SimulationResult& result);   // time_stepping_contact_set.cpp
  // settle(): the directions of the contacts starting to slide from rest
  // (`starting`, indices into β) turned onto Coulomb's; a_ and last_ with them.
  void refine_starting_slides(const std::vector<int>& starting);
  // (its residuals: the angle from each direction to its tangential
  // acceleration; returns the largest |a_t|, or NaN where the solve fails)
  // (the residuals take inv_h u_i + a_t,i for the tangential acceleration:
  // inv_h = 0 for slides from rest, 1/h for refine_slow_slides)
  double starting_slide_residuals(const std::vector<int>& starting, const VectorX& angle, VectorX& r, VectorX& a,
                                  double inv_h = 0.0);
  // settle(), after refine_starting_slides: slides slower than their own
  // friction can change in a step take the direction of their velocity at
  // the step's end, u + h a_t (implicit); a_ and last_ with them.
  void refine_slow_slides();
  void adopt_slide_angles(const std::vector<int>& slots, const VectorX& angle);
  bool jam(int attempt);                   // time_stepping_impacts.cpp

  ContactSolver solver_;
  VectorX a_, qp_, vp_, ap_, mu_, slip_;
  VectorX vbar_, q0_, v0_;  // attempt(): the mean velocity of a step; advance(): the step's start
  std::vector<Tracked> beta_;
  std::vector<double> slide_speed0_;
  bool output_solve_ = false;      // record_sample()'s force solve (no basis reuse)
  VectorX output_a_;                // (its q̈, unused)
  bool slow_stop_ = false;         // sliding_reversal(): its earliest stop was slow (slow_failure())
  std::uint64_t penetrating_ = 0;  // attempt(): the contact of its last Penetration outcome
  VectorX level_gaps_, level_mu_, level_e_, level_vminus_;  // velocity_level_impulses(), rest_step()
  std::vector<Contact> level_contacts_, rest_fast_;           // rest_step(): its problem's contacts, landings
  std::vector<Contact> current_view_, contacts_, found_, touching_, rest_;
  std::vector<int> slow_;
  std::string message_;
  const ContactSolution* last_ = nullptr;  // the solver's last force solution
  // settle(): β has no forces at (t_, q_, v_) even after kMaxJams
  // tangential impacts; the next step is taken at the velocity level.
  bool no_forces_ = false;
  // active_set_accelerations: β's modes known from the last solve, workspace
  bool modes_known_ = false;
  long stats_fast_ = 0, stats_redistributed_ = 0;
  ContactSolution fast_;
  Eigen::PartialPivLU<MatrixX> fast_lu_;
  BandedCholesky fast_pchol_;
  MatrixX fast_K_, fast_G_, fast_P_;
  VectorX fast_z_, fast_winv_;
  MatrixX fast_T_, fast_D_, fast_Kt_, fast_Gt_, fast_A_;
  Matrix2X fast_slide_;
  // refine_starting_slides(): the angles of the Sliding contacts at rest in
  // their tangent bases (NaN: none; the active-set solve then leaves them
  // to the LCP)
  VectorX given_angle_, starting_a_, starting_a1_;
  std::vector<int> starting_, starting_slots_;
  std::vector<double> slow_u_;  // refine_slow_slides(): the slots' tangential velocities (2 each)
  VectorX slow_w_;              // (and a solve's workspace)
  bool given_slides_ = false;
  // symmetric_forces(): the first row of each active contact (and the row
  // count), each contact's support chain (nv slots per contact), dof marks
  std::vector<int> fast_group_, fast_group_contact_, fast_chain_, fast_chain_size_;
  std::vector<int> fast_mark_, fast_count_, fast_sig_;  // (support_chains(): the contacts it last saw)
  int fast_shared_ = 0;
  bool fast_split_ = false;
  // metric_step() in the velocity projection (symplectic Euler rule): W, D⁻¹
  // and A's factor kept for the next force solve if it runs at the same q
  // (restore_inertia) over the same contacts' rows (their ids and row counts)
  std::vector<std::uint64_t> fast_kept_ids_;
  MatrixX fast_kept_W_, fast_kept_A_;
  VectorX fast_kept_Dinv_;
  bool fast_kept_ = false;
  // active_set_accelerations() (symplectic Euler rule, symmetric rows):
  // fast_a0_ holds D⁻¹L⁻ᵀ(τ − C), fast_x_ q̈ itself, fast_rates_ K̇ᵀq̇
  bool fast_half_ = false;
  VectorX fast_rates_;
  VectorX fast_a0_, fast_Tdv_, fast_Ddv_, fast_b_, fast_lambda_, fast_Dinv_, fast_x_, fast_Ka0_, fast_Tddq_;

  // project()'s velocity projection -> the next force solve at the same q
  // (bitwise): H, its LᵀDL and what crba_placements leaves for the contacts
  // and the bias pass of RNEA (placements, joint transforms and subspaces,
  // the sines and cosines), kept so that accelerations() need not redo them.
  struct InertiaAt {
    VectorX q;
    std::vector<Transform> Xup, X0;
    Matrix6X S;
    Matrix2X qsc;
    MatrixX H;
    RowMatrixX LD;
    bool valid = false;
  };
  void keep_inertia(const VectorX& q);
  bool restore_inertia(const VectorX& q);
  InertiaAt inertia_at_;
  bool ltdl_known_ = false;  // accelerations(): data_.LD already factors H (active_set_accelerations skips ltdl)

  // project(): workspace
  std::vector<Contact> proj_act_, proj_found_;
  std::vector<bool> proj_stick_;
  std::vector<bool> proj_held_;  // active in β: positions and velocities (else positions only)
  std::vector<ContactKinematics> proj_ck_;  // the check's kinematics of each shape contact
  MatrixX proj_K_, proj_T_, proj_D_;
  VectorX zero_;
  VectorX proj_phi_, proj_Kdv_, proj_Tdv_, proj_Ddv_;
  HMetricCorrection hmetric_;
  // project()'s check when it moved nothing (symplectic Euler rule): ζ of
  // proj_act_'s contacts at (q_, v_), for impacts() while data_ keeps that
  // check's kinematics
  std::vector<double> proj_zeta_;
  bool proj_zeta_valid_ = false;
  // ζ of contact c from project()'s check (the same id, bodies and feature
  // pair; its body-frame features from an earlier detection: ζ the same up
  // to rounding), or NaN
  double checked_zeta(const Contact& c) const;
  // impacts() -> settle(): ζ of the touching contacts at (zeta_q_, zeta_v_)
  VectorX imp_zeta_, imp_mu_, imp_e_, zeta_q_, zeta_v_;
  bool zeta_known_ = false;
  std::vector<Tracked> previous_;
  // detect(): the last configuration, margin and contacts
  std::vector<Contact> detected_;
  VectorX detected_q_;
  double detected_margin_ = 0.0;
  bool detected_valid_ = false;
  // no_energy_gain(): the energy of (energy_q_, energy_v_), the last step's end
  VectorX energy_q_, energy_v_;
  double energy_ = 0.0;
  bool energy_valid_ = false;

  double h_init_ = 1e-3;
  int run_ = 0;
};

}  // namespace plume::detail
