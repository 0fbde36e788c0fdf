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
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "plume/algorithms/energy.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "plume/dynamics/compliant.hpp"
#include "plume/error.hpp"
#include "sim/dense_stepper.hpp"
#include "sim/rosenbrock_stepper.hpp"
#include "sim/scheme.hpp"
#include "sim/scheme_common.hpp"

namespace plume::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Contacts closer than this are tracked (have a record and a spring state).
double tracking_margin(const SimulationOptions& o) { return std::max(10.0 * o.contact_tolerance, 1e-6); }

class CompliantScheme final : public SchemeRunner {
 public:
  CompliantScheme(World w, const SimulationOptions& o)
      : world_(std::move(w)), opt_(o), data_(world_.model()), cat_(world_, tracking_margin(o)) {
    validate_scheme_options(opt_);
    const Model& m = world_.model();
    q_ = world_.q0();
    v_ = world_.v0();
    tau_ = VectorX::Zero(m.nv());
    rhs_fn_ = [this](const VectorX& y, VectorX& dy, double t) { rhs(y, dy, t); };
  }

  // ---- SchemeRunner ------------------------------------------------------------------
  void set_controller(ControllerFunction f, double period) override {
    controller_ = std::move(f);
    period_ = period;
    next_sample_ = t_;
  }
  double time() const override { return t_; }
  const VectorX& q() const override { return q_; }
  const VectorX& v() const override { return v_; }
  const World& world() const override { return world_; }
  const SimulationOptions& options() const override { return opt_; }
  const std::vector<Contact>& current_contacts() const override { return touching_view_; }
  double energy() override { return energy_of(q_, v_); }
  std::string contact_name(const Contact& c) const override { return cat_.name_of(world_.model(), c); }
  const std::vector<std::string>& contact_warnings() const override { return cat_.detector.warnings(); }

  SimulationResult run_until(double until, Recorder* recorder) override;

 private:
  const Model& model() const { return world_.model(); }
  Eigen::Index nq() const { return model().nq(); }
  Eigen::Index nv() const { return model().nv(); }

  // ---- the ODE --------------------------------------------------------------------------
  // ẏ = [G(q) v; H⁻¹(τ − C + τ_c); ẋ] at a trial state (q renormalised).
  void rhs(const VectorX& y, VectorX& dy, double t) {
    ++stats_.rhs_evaluations;
    const Model& m = model();
    const Eigen::Index nx = y.size() - nq() - nv();
    qn_ = y.head(nq());
    normalize_configuration(m, qn_);
    const auto vv = y.segment(nq(), nv());
    dy.resize(y.size());
    configuration_derivative(m, qn_, vv, dy.head(nq()));
    applied_torque(m, opt_, tau_, vv, tau_applied_);
    dy.segment(nq(), nv()) = forward_dynamics_compliant(m, data_, qn_, vv, tau_applied_, contacts_, rhs_params_, state_,
                                                        y.tail(nx), t, forces_);
    dy.tail(nx) = forces_.x_dot();
  }

  // ∂ẏ/∂y and ∂ẏ/∂t for rosenbrock4 by forward differences of rhs(), taken
  // within the pieces of the force law active at y: a column whose
  // perturbation switches a contact's piece (touching, stick/slip) is taken
  // backwards instead. Without this, a step that starts on a switch — every
  // touch-down does — would difference across the jump of f_n and hand the
  // stepper a Jacobian entry of order D·φ̇/√ε.
  void jacobian(const VectorX& y, double t, const VectorX& f, MatrixX& J, VectorX& dfdt) {
    const Eigen::Index n = y.size();
    const double root_eps = std::sqrt(std::numeric_limits<double>::epsilon());
    evaluate(y, t, rhs_params_);
    pieces(base_pieces_);
    J.resize(n, n);
    yp_ = y;
    auto column = [&](double tt, VectorX& out) {
      rhs(yp_, out, tt);
      pieces(trial_pieces_);
      return trial_pieces_ == base_pieces_;
    };
    for (Eigen::Index j = 0; j < n; ++j) {
      const double yj = y(j);
      const double h = root_eps * std::max(std::abs(yj), 1e-3);
      yp_(j) = yj + h;
      double dh = yp_(j) - yj;
      if (!column(t, fp_)) {
        yp_(j) = yj - h;
        const double dm = yp_(j) - yj;
        if (column(t, fm_)) {
          fp_ = fm_;
          dh = dm;
        } else {
          yp_(j) = yj + h;  // switches either way (a kink at y): keep the forward difference
          rhs(yp_, fp_, t);
        }
      }
      J.col(j) = (fp_ - f) / dh;
      yp_(j) = yj;
    }
    const double ht = root_eps * std::max(std::abs(t), 1e-3);
    double tp = t + ht;
    if (!column(tp, fp_)) {
      tp = t - ht;
      if (!column(tp, fp_)) {
        tp = t + ht;
        rhs(yp_, fp_, tp);
      }
    }
    dfdt = (fp_ - f) / (tp - t);
  }

  // The parameters the right-hand side uses during the next step: a
  // relaxing contact whose point is outside its patch at the step's start
  // pushes with nothing (K = D = 0) until its touch has been located and
  // committed. The law itself would switch f_n from 0 to D·(ż − φ̇) inside
  // the step, a jump no error-controlled stepper can cross (it shrinks the
  // step towards the switch forever); located, the jump falls between steps.
  void freeze_switches(const VectorX& y, double t) {
    evaluate(y, t);
    rhs_params_ = params_;
    for (std::size_t i = 0; i < contacts_.size(); ++i) {
      if (state_.record(i).phase == CompliantPhase::Relaxing && forces_.contacts[i].normal_witness > 0.0) {
        rhs_params_[i].stiffness = 0.0;
        rhs_params_[i].damping = 0.0;
      }
    }
  }

  // The piece of the force law each tracked contact is on (after an evaluation).
  void pieces(std::vector<int>& out) const {
    out.clear();
    for (const CompliantContactForce& c : forces_.contacts) out.push_back(2 * static_cast<int>(c.mode) + (c.touching ? 1 : 0));
  }

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

  // Per-contact forces, witnesses and modes at y (time t), with the
  // committed records: in forces_.contacts.
  void evaluate(const VectorX& y, double t) { evaluate(y, t, params_); }
  void evaluate(const VectorX& y, double t, const std::vector<CompliantParameters>& params) {
    const Model& m = model();
    qn_ = y.head(nq());
    normalize_configuration(m, qn_);
    const Eigen::Index nx = y.size() - nq() - nv();
    unchecked::forward_kinematics(m, data_, qn_, y.segment(nq(), nv()));
    tau_contact_.resize(nv());
    compliant_contact_forces(m, data_, qn_, contacts_, params, state_, y.tail(nx), t, tau_contact_, &forces_);
  }

  CompliantParameters parameters_of(const Contact& c) const {
    CompliantParameters p;
    if (c.kind == ContactKind::JointLimit) {
      // Joint limits: the world's default spring and damper, no friction.
      const ContactParameters& d = world_.default_contact();
      p.stiffness = d.stiffness;
      p.damping = d.damping;
      p.tangential_stiffness = 0.0;
      p.tangential_damping = 0.0;
      p.mu = 0.0;
      return p;
    }
    const ContactParameters& cp = cat_.pair_parameters[static_cast<std::size_t>(c.pair)];
    p.stiffness = cp.stiffness;
    p.damping = cp.damping;
    p.tangential_stiffness = cp.tangential_stiffness;
    p.tangential_damping = cp.tangential_damping;
    p.mu = cp.mu;
    return p;
  }

  // Every contact within the tracking margin at q (placements left in data_).
  void detect(const VectorX& q, std::vector<Contact>& out) {
    qn_ = q;
    normalize_configuration(model(), qn_);
    unchecked::forward_kinematics(model(), data_, qn_);
    cat_.detector.detect(model(), data_, out);
    if (opt_.joint_limits) detect_joint_limits(model(), qn_, tracking_margin(opt_), out);
  }

  int tracked_index(std::uint64_t id) const {
    for (std::size_t i = 0; i < contacts_.size(); ++i) {
      if (contacts_[i].id == id) return static_cast<int>(i);
    }
    return -1;
  }

  // ---- commits: phases, modes, the contact set ---------------------------------------------
  bool commit(double t_lo, bool dense_valid);
  void locate_mode_switches(double t_lo, bool dense_valid);
  void emit(double time, EventKind kind, const Contact& c, double pre, double post) {
    ++stats_.events;
    if (rec_) {
      rec_->event({time, kind, cat_.name_of(model(), c), model().body_name(c.body_a), model().body_name(c.body_b), pre,
                   post, 0.0});
    }
  }
  void refresh_view() {
    touching_view_.clear();
    for (std::size_t i = 0; i < contacts_.size(); ++i) {
      if (state_.record(i).phase == CompliantPhase::Touching) touching_view_.push_back(contacts_[i]);
    }
  }

  // ---- events on the dense output ---------------------------------------------------------
  // Illinois (modified regula falsi) on [a, b] with f(a) > 0 ≥ f(b); returns
  // the earliest time known to be at or past the crossing.
  template <class F>
  double locate(F&& f, double a, double fa, double b, double fb) const {
    return locate_crossing(f, a, fa, b, fb, opt_.event_time_tolerance);
  }

  // The earliest crossing of f (positive → ≤ 0) on [t0, t1] given its end
  // values, or +∞; samples the interior where f comes close to zero, so that
  // two crossings in one step are not missed.
  template <class F>
  double first_crossing(F&& f, double t0, double f0, double t1, double f1) const {
    if (!(f0 > 0.0)) return kInf;
    double a = t0, fa = f0, b = t1, fb = f1;
    if (fb > 0.0) {
      if (!(fb < 0.5 * std::abs(fa - fb) || fb < 0.1 * fa)) return kInf;
      bool found = false;
      for (int s = 1; s <= 3 && !found; ++s) {
        const double ts = t0 + (t1 - t0) * s / 4.0;
        const double fs = f(ts);
        if (fs <= 0.0) {
          b = ts;
          fb = fs;
          found = true;
        } else {
          a = ts;
          fa = fs;
        }
      }
      if (!found) return kInf;
    }
    return locate(f, a, fa, b, fb);
  }

  double normal_witness_at(std::size_t i, double t) {
    stepper_->calc_state(t, ys_);
    evaluate(ys_, t);
    return forces_.contacts[i].normal_witness;
  }

  double candidate_gap_at(Contact c, double t) {
    stepper_->calc_state(t, ys_);
    qn_ = ys_.head(nq());
    normalize_configuration(model(), qn_);
    if (c.kind == ContactKind::JointLimit) {
      const int qi = model().joint(c.body_b).q_index;
      return c.normal.x() > 0.0 ? qn_(qi) - model().lower_position_limit()(qi)
                                : model().upper_position_limit()(qi) - qn_(qi);
    }
    unchecked::forward_kinematics(model(), data_, qn_);
    refresh_contact(model(), data_, c);
    return c.gap;
  }

  // ---- recording ----------------------------------------------------------------------------
  double energy_of(const VectorX& q, const VectorX& v) {
    qn_ = q;
    normalize_configuration(model(), qn_);
    return mechanical_energy(model(), data_, qn_, v);
  }

  void record_sample(double time, const VectorX& y) {
    if (!rec_) return;
    VectorX qs = y.head(nq());
    normalize_configuration(model(), qs);
    const VectorX vs = y.segment(nq(), nv());
    rec_->sample(time, qs, vs, energy_of(qs, vs));
    if (contacts_.empty()) return;
    evaluate(y, time);
    for (std::size_t i = 0; i < contacts_.size(); ++i) {
      const CompliantContactForce& f = forces_.contacts[i];
      if (!(f.normal_force > 0.0)) continue;
      rec_->contact({time, cat_.name_of(model(), contacts_[i]), f.gap, f.gap_rate, f.normal_force, f.friction.norm()});
    }
  }

  void record_outputs_until(double until, bool inclusive) {
    if (opt_.output_rate <= 0.0 || !rec_) return;
    const double dt_out = 1.0 / opt_.output_rate;
    while (next_output_ < until || (inclusive && next_output_ <= until)) {
      stepper_->calc_state(next_output_, ys_);
      const VectorX y = ys_;
      record_sample(next_output_, y);
      next_output_ = std::round((next_output_ + dt_out) / dt_out) * dt_out;
    }
  }

  void track_penetration() {
    for (const CompliantContactForce& f : forces_.contacts) stats_.max_penetration = std::max(stats_.max_penetration, -f.gap);
  }

  void restart_stepper(double dt) {
    const VectorX y = state_vector();
    if (!stepper_ || y.size() != stepper_size_) {
      if (opt_.integrator == Integrator::Rosenbrock4) {
        stepper_ = make_rosenbrock4_stepper(opt_.abs_tol, opt_.rel_tol, opt_.max_step,
                                            [this](const VectorX& y, double t, const VectorX& f, MatrixX& J,
                                                   VectorX& dfdt) { jacobian(y, t, f, J, dfdt); });
      } else {
        stepper_ = make_dense_stepper(opt_.integrator, opt_.abs_tol, opt_.rel_tol, opt_.max_step);
      }
      stepper_size_ = y.size();
    }
    double h = std::clamp(dt, opt_.min_step, opt_.max_step);
    if (next_sample_ > t_) h = std::min(h, next_sample_ - t_);
    freeze_switches(y, t_);
    stepper_->initialize(y, t_, h);
  }

  bool sample_controller(SimulationResult& result) {
    if (!controller_) return true;
    VectorX qs = q_;
    normalize_configuration(model(), qs);
    next_sample_ = t_ + period_;
    return sample_controller_checked(model(), opt_, controller_, t_, qs, v_, tau_, result);
  }

  bool fail(SimulationResult& result, SimulationStatus status, const std::string& message) {
    result.status = status;
    result.message = message;
    return false;
  }

  std::string contact_summary() const {
    if (touching_view_.empty()) return "";
    std::string s = " (touching: ";
    for (std::size_t i = 0; i < touching_view_.size(); ++i) s += (i ? ", " : "") + cat_.name_of(model(), touching_view_[i]);
    return s + ")";
  }

  SimulationResult finish(SimulationResult& result, std::chrono::steady_clock::time_point wall0) {
    result.time = t_;
    stats_.energy_end = energy_of(q_, v_);
    stats_.wall_time += seconds_since(wall0);
    result.statistics = stats_;
    rec_ = nullptr;
    return result;
  }

  World world_;
  SimulationOptions opt_;
  Data data_;
  ContactCatalogue cat_;

  double t_ = 0.0;
  VectorX q_, v_, x_, tau_, tau_applied_, tau_contact_, qn_, ys_;
  ControllerFunction controller_;
  double period_ = 0.0, next_sample_ = kInf;

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
  SimulationStatistics stats_;
  Recorder* rec_ = nullptr;
  double next_output_ = 0.0;
  bool initialised_ = false;
  long tiny_steps_ = 0;
  long stalled_cuts_ = 0;
};

// Stick/slip switches of contacts touching since the last commit, located
// on the dense output (for the event log only: they are kinks of the law).
// Uses the records of the last commit, so call it before update().
void CompliantScheme::locate_mode_switches(double t_lo, bool dense_valid) {
  if (contacts_.empty()) return;
  const VectorX y = state_vector();
  evaluate(y, t_);
  std::vector<std::pair<std::size_t, CompliantMode>> switched;
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    const CompliantMode before = state_.record(i).mode, now = forces_.contacts[i].mode;
    const bool stick_slip = (before == CompliantMode::Sticking && now == CompliantMode::Slipping) ||
                            (before == CompliantMode::Slipping && now == CompliantMode::Sticking);
    if (stick_slip && contacts_[i].kind == ContactKind::Shapes) switched.emplace_back(i, now);
  }
  for (const auto& [i, now] : switched) {
    double when = t_;
    if (dense_valid && t_ > t_lo) {
      // Sticking while μ f_n − |f_stick| ≥ 0: a slip makes it negative.
      const double sign = now == CompliantMode::Slipping ? 1.0 : -1.0;
      auto f = [&, i = i](double tt) {
        stepper_->calc_state(tt, ys_);
        evaluate(ys_, tt);
        return sign * forces_.contacts[i].friction_witness;
      };
      const double f0 = f(t_lo), f1 = f(t_);
      if (f0 > 0.0 && f1 <= 0.0) when = locate(f, t_lo, f0, t_, f1);
    }
    emit(when, now == CompliantMode::Slipping ? EventKind::Slip : EventKind::Stick, contacts_[i], 0.0, 0.0);
  }
}

// At (t_, q_, v_, x_): commit the phases and the spring states, report the
// switches, and bring the tracked set up to date with detection (new
// contacts start on a rested patch; a touching contact whose feature
// changed hands its spring state to its successor of the same pair).
bool CompliantScheme::commit(double t_lo, bool dense_valid) {
  const Model& m = model();
  locate_mode_switches(t_lo, dense_valid);
  auto kinematics = [&]() {
    qn_ = q_;
    normalize_configuration(m, qn_);
    unchecked::forward_kinematics(m, data_, qn_, v_);
  };
  std::vector<CompliantPhase> before(contacts_.size());
  for (std::size_t i = 0; i < contacts_.size(); ++i) before[i] = state_.record(i).phase;
  kinematics();
  state_.update(m, data_, qn_, contacts_, params_, x_, t_);
  x_ = state_.displacements();
  bool changed = false;
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    const CompliantPhase now = state_.record(i).phase;
    if (now == before[i]) continue;
    changed = true;
    const double rate = contact_kinematics(m, data_, contacts_[i]).gap_rate;
    // An undamped contact that sat exactly on its surface at the step's
    // start (f_n = K·0 = 0, so the commit there left it relaxing) has pushed
    // since then: it touched at the step's start.
    const bool since_start = now == CompliantPhase::Touching && i < on_surface_at_start_.size() && on_surface_at_start_[i];
    emit(since_start ? t_lo : t_, now == CompliantPhase::Touching ? EventKind::ContactGain : EventKind::ContactLoss,
         contacts_[i], rate, rate);
  }
  on_surface_at_start_.clear();
  // The tracked set: everything detected within the margin, plus touching
  // contacts detection no longer reports (kept until they let go).
  detect(q_, found_);
  std::vector<Contact> next;
  std::vector<int> from;  // tracked index or −1 (new)
  for (const Contact& c : found_) {
    next.push_back(c);
    from.push_back(tracked_index(c.id));
  }
  std::vector<int> orphans;  // touching contacts whose feature disappeared
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    bool present = false;
    for (const Contact& c : found_) present |= c.id == contacts_[i].id;
    if (!present && state_.record(i).phase == CompliantPhase::Touching) orphans.push_back(static_cast<int>(i));
  }
  bool same = next.size() == contacts_.size();
  for (std::size_t k = 0; same && k < next.size(); ++k) same = from[k] == static_cast<int>(k);
  if (same && orphans.empty()) {
    refresh_view();
    return changed;
  }
  // Hand-over: a new contact of the same shape pair takes an orphan's spring.
  std::vector<Eigen::Vector2d> inherited(next.size(), Eigen::Vector2d::Zero());
  std::vector<bool> heir(next.size(), false);
  std::vector<bool> orphan_done(orphans.size(), false);
  for (std::size_t k = 0; k < next.size(); ++k) {
    if (from[k] >= 0 || next[k].kind != ContactKind::Shapes) continue;
    for (std::size_t o = 0; o < orphans.size(); ++o) {
      const Contact& old = contacts_[static_cast<std::size_t>(orphans[o])];
      if (orphan_done[o] || old.kind != ContactKind::Shapes || old.pair != next[k].pair) continue;
      inherited[k] = x_.segment<2>(2 * orphans[o]);
      heir[k] = true;
      orphan_done[o] = true;
      break;
    }
  }
  for (std::size_t o = 0; o < orphans.size(); ++o) {
    if (orphan_done[o]) continue;
    // Lost by geometry while pushing (e.g. rolling off an edge).
    const Contact& old = contacts_[static_cast<std::size_t>(orphans[o])];
    emit(t_, EventKind::ContactLoss, old, 0.0, 0.0);
  }
  std::vector<CompliantPhase> next_before(next.size(), CompliantPhase::Relaxing);
  for (std::size_t k = 0; k < next.size(); ++k) {
    if (from[k] >= 0) next_before[k] = state_.record(static_cast<std::size_t>(from[k])).phase;
  }
  contacts_ = next;
  params_.clear();
  for (const Contact& c : contacts_) params_.push_back(parameters_of(c));
  state_.synchronize(contacts_);
  x_ = state_.displacements();
  for (std::size_t k = 0; k < next.size(); ++k) {
    if (heir[k]) x_.segment<2>(2 * static_cast<Eigen::Index>(k)) = inherited[k];
  }
  // Commit the new contacts' phases (a contact found inside the surface
  // touches at once when it approaches).
  kinematics();
  state_.update(m, data_, qn_, contacts_, params_, x_, t_);
  x_ = state_.displacements();
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const CompliantPhase now = state_.record(k).phase;
    if (now == next_before[k] || heir[k]) continue;
    const double rate = contact_kinematics(m, data_, contacts_[k]).gap_rate;
    emit(t_, now == CompliantPhase::Touching ? EventKind::ContactGain : EventKind::ContactLoss, contacts_[k], rate, rate);
  }
  refresh_view();
  return true;
}

SimulationResult CompliantScheme::run_until(double until, Recorder* recorder) {
  const auto wall0 = std::chrono::steady_clock::now();
  SimulationResult result;
  rec_ = recorder;
  const Model& m = model();
  try {
    if (!initialised_) {
      stats_.energy_start = energy_of(q_, v_);
      next_output_ = t_;
      if (!sample_controller(result)) return finish(result, wall0);
      commit(t_, false);
      initialised_ = true;
    }
    if (rec_ && opt_.output_rate > 0 && next_output_ <= t_) {
      record_sample(t_, state_vector());
      next_output_ = t_ + 1.0 / opt_.output_rate;
    }
    restart_stepper(stepper_ ? stepper_->current_time_step() : opt_.initial_step);
    if (!std::isfinite(stepper_->current_time_step())) restart_stepper(opt_.initial_step);
    const long step_cap = stats_.steps + opt_.max_steps;
    std::vector<double> w0, w1;
    while (t_ < until) {
      if (stats_.steps >= step_cap) {
        fail(result, SimulationStatus::StepLimit, "more than max_steps = " + std::to_string(opt_.max_steps) + " steps at t = " + fmt(t_));
        return finish(result, wall0);
      }
      const VectorX y0 = state_vector();
      freeze_switches(y0, t_);
      w0.resize(contacts_.size());
      for (std::size_t i = 0; i < contacts_.size(); ++i) w0[i] = forces_.contacts[i].normal_witness;
      // Relaxing contacts with D = 0 already on their surface (φ − z ≤ 0):
      // their touch was located at the last commit, where the law's force
      // (−Kφ = 0) could not yet say "touching"; no witness crosses in this
      // step, so commit() dates their gain from the step's start.
      on_surface_at_start_.assign(contacts_.size(), 0);
      for (std::size_t i = 0; i < contacts_.size(); ++i) {
        on_surface_at_start_[i] = state_.record(i).phase == CompliantPhase::Relaxing && w0[i] <= 0.0 &&
                                  params_[i].damping <= 0.0;
      }
      double t0, t1;
      try {
        const auto span = stepper_->do_step(rhs_fn_);
        t0 = span.first;
        t1 = span.second;
      } catch (const std::exception& e) {
        fail(result, SimulationStatus::StepUnderflow,
             "the integrator could not take a step at t = " + fmt(t_) + ": " + e.what() + contact_summary());
        return finish(result, wall0);
      }
      ++stats_.steps;
      if (t1 - t0 < 1e3 * opt_.min_step) {
        if (++tiny_steps_ > 10000) {
          fail(result, SimulationStatus::StepUnderflow,
               "10000 steps shorter than " + fmt(1e3 * opt_.min_step) + " s in a row at t = " + fmt(t0) + contact_summary());
          return finish(result, wall0);
        }
      } else {
        tiny_steps_ = 0;
      }
      const VectorX y1 = stepper_->current_state();
      if (!y1.allFinite()) {
        fail(result, SimulationStatus::NonFinite, "the state became non-finite at t ≈ " + fmt(t1) + contact_summary());
        return finish(result, wall0);
      }
      if (t1 - t0 < opt_.min_step && t1 < until) {
        fail(result, SimulationStatus::StepUnderflow,
             "the step fell to " + fmt(t1 - t0) + " s (below min_step) at t = " + fmt(t0) + contact_summary());
        return finish(result, wall0);
      }
      // Switches of the normal law of tracked contacts.
      evaluate(y1, t1);
      track_penetration();
      w1.resize(contacts_.size());
      for (std::size_t i = 0; i < contacts_.size(); ++i) w1[i] = forces_.contacts[i].normal_witness;
      double t_event = kInf;
      for (std::size_t i = 0; i < contacts_.size(); ++i) {
        auto f = [this, i](double tt) { return normal_witness_at(i, tt); };
        t_event = std::min(t_event, first_crossing(f, t0, w0[i], t1, w1[i]));
      }
      // New contacts already inside a surface at the step's end.
      detect(y1.head(nq()), found_);
      for (const Contact& c : found_) {
        if (c.gap > 0.0 || tracked_index(c.id) >= 0) continue;
        auto f = [this, c](double tt) { return candidate_gap_at(c, tt); };
        // Inside already at the step's start: a feature taking over from
        // another (a ball rolling from a face onto an edge); the commit at
        // the step's end adds it. Otherwise locate the touch.
        const double g0 = f(t0);
        if (g0 > 0.0) t_event = std::min(t_event, locate(f, t0, g0, t1, c.gap));
      }
      const double t_next = std::min({t_event, next_sample_, until});
      if (t_next < t1) {
        if (t_next <= t0 + event_time_resolution(opt_.event_time_tolerance, t0)) {
          if (++stalled_cuts_ > 1000) {
            fail(result, SimulationStatus::EventLimit,
                 "contact switches keep recurring at t = " + fmt(t0) + " without time advancing" + contact_summary());
            return finish(result, wall0);
          }
        } else {
          stalled_cuts_ = 0;
        }
        record_outputs_until(t_next, false);
        stepper_->calc_state(t_next, ys_);
        unpack(ys_);
        t_ = t_next;
        commit(t0, true);
        if (next_sample_ <= t_ && !sample_controller(result)) return finish(result, wall0);
        if (t_event <= t_next && rec_) record_sample(t_, state_vector());
        restart_stepper(stepper_->current_time_step());
        continue;
      }
      // The whole step is accepted.
      record_outputs_until(t1, true);
      unpack(y1);
      t_ = t1;
      const VectorX x_before = x_;
      const std::size_t n_before = contacts_.size();
      bool restart = commit(t0, true) || contacts_.size() != n_before;
      if (!restart && x_.size() > 0) {
        const double change = (x_ - x_before).cwiseAbs().maxCoeff();
        restart = change > 1e-3 * (opt_.abs_tol + opt_.rel_tol * x_.cwiseAbs().maxCoeff());
      }
      if (next_sample_ <= t_) {
        if (!sample_controller(result)) return finish(result, wall0);
        restart = true;
      }
      if (quaternion_error(m, q_) > 1e-10) {
        normalize_configuration(m, q_);
        restart = true;
      }
      if (restart) restart_stepper(stepper_->current_time_step());
    }
    // The output at the end time when the last step was cut there (its samples
    // are taken before the cut, so the loop's end skips this one and its contacts).
    if (rec_ && opt_.output_rate > 0 && next_output_ <= t_) {
      record_sample(t_, state_vector());
      next_output_ = std::round((next_output_ + 1.0 / opt_.output_rate) * opt_.output_rate) / opt_.output_rate;
    }
    result.status = SimulationStatus::Finished;
    result.message = "finished at t = " + fmt(t_);
  } catch (const Error& e) {
    fail(result, SimulationStatus::Failed, "at t = " + fmt(t_) + ": " + e.what() + contact_summary());
  }
  return finish(result, wall0);
}

}  // namespace

std::unique_ptr<SchemeRunner> make_compliant(World world, const SimulationOptions& options) {
  return std::make_unique<CompliantScheme>(std::move(world), options);
}

}  // namespace plume::detail
