#pragma once
// The compliant scheme of plume::Simulator: spring–damper contacts with
// Coulomb friction (Featherstone §11.8, docs/theory.md §6) integrated as one
// smooth ODE by odeint — rosenbrock4 (stiff, Jacobian by forward
// differences) or an explicit dense-output stepper (dopri5, Bulirsch–Stoer).
//
// The state is y = [q; v; x], x the tangential spring displacements of the
// tracked contacts (2 per contact, compliant.hpp). No LCP and no impulse:
// contacts are gained and lost when the force law says so. The law is
// smooth between switches; the switches of the normal law (touch: f_n jumps
// from 0 to D·(ż − φ̇); loss: f_n reaches 0) are located on the dense output
// from the witnesses of CompliantContactForce (Illinois, to
// event_time_tolerance), the state is committed there
// (CompliantContactState::update) and the stepper restarted, so that no step
// straddles a jump. Stick/slip switches are kinks, which the steppers cross
// on their own; they are located only for the event log. Contacts are
// tracked from detection with a small margin; one that appears already
// penetrating at a step's end has its gap's root located the same way.
//
// One class, one step of the method per file:
//   compliant_scheme.cpp       the loop: step, locate the earliest switch,
//                              commit there and restart; recording
//   compliant_dynamics.cpp     the right-hand side ẏ with the contact forces,
//                              its Jacobian for rosenbrock4, switches frozen
//                              within a step
//   compliant_events.cpp       switches of the force law located on the dense
//                              output (touch, loss, a new contact's gap,
//                              stick/slip for the log)
//   compliant_contact_set.cpp  the commit: phases, spring states and the
//                              tracked set brought up to date with detection
// The set-up, the controller's hold and the run's end are SchemeBase's
// (scheme_base.hpp), shared with the time-stepping scheme.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "plume/dynamics/compliant.hpp"
#include "sim/dense_stepper.hpp"
#include "sim/scheme_base.hpp"

namespace plume::detail {

class CompliantScheme final : public SchemeBase {
 public:
  CompliantScheme(World w, const SimulationOptions& o);

  const std::vector<Contact>& current_contacts() const override { return touching_view_; }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  // Contacts closer than this are tracked (have a record and a spring state).
  static double tracking_margin(const SimulationOptions& o) { return std::max(10.0 * o.contact_tolerance, 1e-6); }

  Eigen::Index nq() const { return model().nq(); }
  Eigen::Index nv() const { return model().nv(); }
  VectorX state_vector() const {
    VectorX y(nq() + nv() + x_.size());
    y << q_, v_, x_;
    return y;
  }
  void unpack(const VectorX& y) {
    q_ = y.head(nq());
    v_ = y.segment(nq(), nv());
    x_ = y.tail(y.size() - nq() - nv());
  }

  // ---- the loop (compliant_scheme.cpp) -----------------------------------------------------
  void restart_stepper(double dt);
  bool sample_controller(SimulationResult& result);
  bool advance(double until, SimulationResult& result) override;
  void record_current() override { record_sample(t_, state_vector()); }
  std::string contact_summary() const override;
  void record_sample(double time, const VectorX& y);
  void record_outputs_until(double until, bool inclusive);
  void track_penetration() {
    for (const CompliantContactForce& f : forces_.contacts) stats_.max_penetration = std::max(stats_.max_penetration, -f.gap);
  }

  // ---- the ODE (compliant_dynamics.cpp) ----------------------------------------------------
  // ẏ = [G(q) v; H⁻¹(τ − C + τ_c); ẋ] at a trial state (q renormalised).
  void rhs(const VectorX& y, VectorX& dy, double t);
  void jacobian(const VectorX& y, double t, const VectorX& f, MatrixX& J, VectorX& dfdt);
  void freeze_switches(const VectorX& y, double t);
  void pieces(std::vector<int>& out) const;
  // Per-contact forces, witnesses and modes at y (time t), with the
  // committed records: in forces_.contacts.
  void evaluate(const VectorX& y, double t) { evaluate(y, t, params_); }
  void evaluate(const VectorX& y, double t, const std::vector<CompliantParameters>& params);
  // joint_inertia: for a joint limit, H(q)'s diagonal entry of its dof at the
  // commit (the limit's damping is capped at critical for it); unused otherwise.
  CompliantParameters parameters_of(const Contact& c, double joint_inertia) const;

  // ---- events on the dense output (compliant_events.cpp) -------------------------------------
  // The earliest switch in the step [t0, t1] just taken (y1 at t1; w0 the
  // normal witnesses at t0, w1 filled at t1), or +∞.
  double earliest_switch(double t0, double t1, const VectorX& y1, const std::vector<double>& w0,
                         std::vector<double>& w1);
  template <class F>
  double locate(F&& f, double a, double fa, double b, double fb) const;
  template <class F>
  double first_crossing(F&& f, double t0, double f0, double t1, double f1) const;
  double normal_witness_at(std::size_t i, double t);
  double candidate_gap_at(const Contact& c, double t);
  void locate_mode_switches(double t_lo, bool dense_valid);

  // ---- commits: phases, modes, the contact set (compliant_contact_set.cpp) --------------------
  bool commit(double t_lo, bool dense_valid);
  // Every contact within the tracking margin at q (placements left in data_).
  void detect(const VectorX& q, std::vector<Contact>& out);
  int tracked_index(std::uint64_t id) const;
  void refresh_view();

  VectorX x_, tau_contact_, ys_;
  std::vector<Contact> contacts_;  // tracked, in the order of x's blocks
  std::vector<CompliantParameters> params_, rhs_params_;
  CompliantContactState state_;
  CompliantContactForces forces_;
  std::vector<Contact> touching_view_, found_;
  std::vector<int> base_pieces_, trial_pieces_;
  std::vector<char> on_surface_at_start_;  // see run_until
  VectorX yp_, fp_, fm_;

  std::unique_ptr<DenseStepper> stepper_;
  OdeSystem rhs_fn_;
  Eigen::Index stepper_size_ = -1;
  long tiny_steps_ = 0;
  long stalled_cuts_ = 0;
};

}  // namespace plume::detail
