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
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <Eigen/Cholesky>
#include <Eigen/LU>

#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/energy.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "plume/dynamics/contact_dynamics.hpp"
#include "plume/error.hpp"
#include "sim/banded_cholesky.hpp"
#include "sim/scheme.hpp"
#include "sim/scheme_common.hpp"

namespace plume::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kScoreRun = 4;  // equal scores in a row that halve / double h_init

bool bitwise_equal(const VectorX& a, const VectorX& b) {
  return a.size() == b.size() && std::equal(a.data(), a.data() + a.size(), b.data());
}

class TimeStepping final : public SchemeRunner {
 public:
  TimeStepping(World w, const SimulationOptions& o)
      : world_(std::move(w)), opt_(o), data_(world_.model()), cat_(world_, touch_margin(o)),
        solver_(world_.model(), 16) {
    validate_scheme_options(opt_);
    const Model& m = world_.model();
    q_ = world_.q0();
    v_ = world_.v0();
    tau_ = VectorX::Zero(m.nv());
    a_ = VectorX::Zero(m.nv());
    zero_ = VectorX::Zero(m.nv());
    h_init_ = opt_.time_step;
  }

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
  const std::vector<Contact>& current_contacts() const override { return current_view_; }
  double energy() override { return energy_of(q_, v_); }
  std::string contact_name(const Contact& c) const override { return cat_.name_of(world_.model(), c); }
  const std::vector<std::string>& contact_warnings() const override { return cat_.detector.warnings(); }
  SimulationResult run_until(double until, Recorder* recorder) override;

 private:
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

  // |Ψ| below this touches; a contact outside β deeper than this penetrates.
  static double touch_margin(const SimulationOptions& o) { return 2.0 * std::max(o.contact_tolerance, o.drift_tolerance); }
  const Model& model() const { return world_.model(); }

  void parameters_of(const Contact& c, double& mu, double& e) const {
    if (c.kind == ContactKind::JointLimit) {
      mu = 0.0;
      e = opt_.joint_limit_restitution;
      return;
    }
    const ContactParameters& p = cat_.pair_parameters[static_cast<std::size_t>(c.pair)];
    mu = p.mu;
    e = p.restitution;
  }

  // Every contact with Ψ < margin at q (placements left in data_).
  // The last detection is remembered: a step detects at its end q1, and the
  // impacts and the new β look at the same configuration unless the
  // projection moved it.
  void detect(const VectorX& q, double margin, std::vector<Contact>& out) {
    unchecked::forward_kinematics(model(), data_, q);
    if (detected_valid_ && margin == detected_margin_ && bitwise_equal(q, detected_q_)) {
      out = detected_;
      return;
    }
    detect_uncached(q, margin, out);
    detected_ = out;
    detected_q_ = q;
    detected_margin_ = margin;
    detected_valid_ = true;
  }
  void detect_uncached(const VectorX& q, double margin, std::vector<Contact>& out) {
    cat_.detector.detect(model(), data_, out);
    if (margin < touch_margin(opt_)) {
      std::size_t k = 0;
      for (const Contact& c : out) {
        if (c.gap < margin) out[k++] = c;
      }
      out.resize(k);
    }
    if (opt_.joint_limits) detect_joint_limits(model(), q, margin, out);
  }

  double gap_at(const VectorX& q, Contact c) {
    if (c.kind == ContactKind::JointLimit) {
      const int qi = model().joint(c.body_b).q_index;
      return c.normal.x() > 0.0 ? q(qi) - model().lower_position_limit()(qi) : model().upper_position_limit()(qi) - q(qi);
    }
    unchecked::forward_kinematics(model(), data_, q);
    refresh_contact(model(), data_, c);
    return c.gap;
  }

  bool in_beta(std::uint64_t id) const {
    for (const Tracked& tr : beta_) {
      if (tr.contact.id == id) return true;
    }
    return false;
  }

  // ---- accelerations: the force LCP of β at (q, v) ---------------------------------------
  // q̈ into `a`; the normal forces, friction and modes stay in the solver's
  // solution. False (with the reason in message_) when the LCP failed.
  // `predicted`: at the predictor's state, where the contacts sticking at
  // the step's start stay sticking (their slip there is the predictor's
  // O(h²) error; solved as sliding, their friction would jump to the cone's
  // edge and the corrector would be first-order, a rolling ball gaining
  // energy).
  bool accelerations(const VectorX& q, const VectorX& v, VectorX& a, bool predicted = false) {
    ++stats_.rhs_evaluations;
    const Model& m = model();
    applied_torque(m, opt_, tau_, v, tau_applied_);
    if (beta_.empty()) {
      a = unchecked::aba(m, data_, q, v, tau_applied_);
      return true;
    }
    contacts_.clear();
    unchecked::forward_kinematics(m, data_, q);
    mu_.resize(static_cast<Eigen::Index>(beta_.size()));
    bool friction = false;
    for (std::size_t k = 0; k < beta_.size(); ++k) {
      Contact c = beta_[k].contact;
      if (c.kind == ContactKind::Shapes) refresh_contact(m, data_, c);
      contacts_.push_back(c);
      mu_(static_cast<Eigen::Index>(k)) = beta_[k].mu;
      friction |= beta_[k].mu > 0.0;
    }
    if (active_set_accelerations(q, v, a, predicted)) {
      last_ = &fast_;
      return true;
    }
    ContactSolveOptions so;
    so.friction = friction ? FrictionModel::PolyhedralCone : FrictionModel::None;
    so.cone_directions = opt_.cone_directions;
    so.slip_velocity = opt_.slip_velocity;
    if (predicted) {
      slip_.resize(static_cast<Eigen::Index>(beta_.size()));
      for (std::size_t k = 0; k < beta_.size(); ++k) {
        slip_(static_cast<Eigen::Index>(k)) = beta_[k].mode == ContactMode::Sticking ? kInf : opt_.slip_velocity;
      }
      so.slip_velocities.swap(slip_);
    }
    const ContactSolution* sp = &solver_.solve(m, data_, q, v, tau_applied_, contacts_, mu_, so);
    ++stats_.lcp_solves;
    if (sp->status == ContactStatus::Failed && friction) {
      // Lemke defeated by dependent contacts and cone directions (a foot's
      // corners with friction): the friction-box model by projected
      // Gauss–Seidel, which does not give up on degenerate problems.
      so.friction = FrictionModel::Box;
      so.pgs.max_iterations = 5000;
      so.pgs.tolerance = 1e-6;
      sp = &solver_.solve(m, data_, q, v, tau_applied_, contacts_, mu_, so);
      ++stats_.lcp_solves;
      ++stats_.fallbacks;
    }
    if (predicted) so.slip_velocities.swap(slip_);
    const ContactSolution& s = *sp;
    last_ = &s;
    if (s.status != ContactStatus::Solved) {
      message_ = contact_failure_words(s.status, s.message) + " for " + cat_.names_of(m, contacts_);
      return false;
    }
    a = s.ddq;
    return true;
  }

  // More constraint rows than dofs (a stack: every cube held by its faces'
  // corners, three rows each): when K (nv × rows, fast_K_)
  // has full rank nv, the constraints Kᵀq̈ = b' fix q̈ by themselves, and the
  // minimum-norm forces of A λ = b (A = KᵀH⁻¹K, the limit of the
  // regularised solve) are λ = Kᵀ P H P K b with P = (KKᵀ)⁻¹, q̈ = a0 + P K b
  // — an nv × nv factorisation instead of rows × rows. With weights W
  // (fast_winv_ = diag W⁻¹), the forces of least λᵀWλ: λ = W⁻¹Kᵀ P H P K W⁻¹ b,
  // P = (KW⁻¹Kᵀ)⁻¹. False (nothing changed but workspace) when P⁻¹ has a
  // dependent column (a pivot below 1e-6 of its diagonal): the rows solve
  // decides.
  bool fully_constrained() {
    const int nv = model().nv();
    const int rows = static_cast<int>(fast_K_.cols());
    fast_P_.setZero(nv, nv);
    add_column_products(fast_K_, rows, fast_winv_.data(), fast_P_);
    if (!fast_pchol_.factor(fast_P_, 1e-6)) return false;
    fast_lambda_ = fast_winv_.cwiseProduct(fast_b_);
    fast_x_.noalias() = fast_K_ * fast_lambda_;
    fast_pchol_.solve(fast_P_, fast_x_);  // q̈ − a0 = P K W⁻¹ b
    fast_z_.noalias() = data_.H * fast_x_;
    fast_pchol_.solve(fast_P_, fast_z_);
    fast_lambda_.noalias() = fast_K_.transpose() * fast_z_;
    fast_lambda_.array() *= fast_winv_.array();
    return true;
  }

  // The forces and q̈ − a0 (fast_lambda_, fast_x_) of the active rows built
  // by active_set_accelerations (K, G, b), least in λᵀWλ (fast_winv_ = diag W⁻¹).
  enum class Forces : std::uint8_t { Solved, Unsolved };
  Forces fast_forces(bool symmetric) {
    const Model& m = model();
    const int nv = m.nv();
    const int rows = static_cast<int>(fast_K_.cols());
    if (!(symmetric && rows > nv && fully_constrained())) {
      fast_Kt_ = fast_K_.transpose();
      ltdl_solve_Lt_rows(m, data_, fast_Kt_);
      if (symmetric) {
        fast_Gt_ = fast_Kt_;
      } else {
        fast_Gt_ = fast_G_.transpose();
        ltdl_solve_Lt_rows(m, data_, fast_Gt_);
      }
      fast_Dinv_ = data_.LD.diagonal().cwiseInverse();
      fast_A_.setZero(rows, rows);
      for (int d = 0; d < nv; ++d) {
        const double* u = fast_Kt_.col(d).data();
        const double* w = fast_Gt_.col(d).data();
        const double dinv = fast_Dinv_(d);
        int lo = 0, hi = rows;
        while (lo < hi && u[lo] == 0.0) ++lo;
        while (hi > lo && u[hi - 1] == 0.0) --hi;
        if (lo == hi) continue;
        // Symmetric: the lower triangle only (u = w, zero outside [lo, hi)).
        const int j0 = symmetric ? lo : 0, j1 = symmetric ? hi : rows;
        for (int j = j0; j < j1; ++j) {
          const double wj = w[j] * dinv;
          if (wj == 0.0) continue;
          double* ac = fast_A_.col(j).data();
          for (int i = symmetric ? j : lo; i < hi; ++i) ac[i] += wj * u[i];
        }
      }
      double amax = 1e-12;
      for (int i = 0; i < rows; ++i) amax = std::max(amax, std::abs(fast_A_(i, i)));
      fast_A_.diagonal().array() += (1e-12 * amax) * fast_winv_.array().inverse();
      fast_lambda_ = fast_b_;
      if (symmetric) {
        if (!fast_chol_.factor(fast_A_)) return Forces::Unsolved;  // (rounding) the LCP decides
        fast_chol_.solve(fast_A_, fast_lambda_);
      } else {
        fast_lu_.compute(fast_A_);
        fast_lambda_ = fast_lu_.solve(fast_b_);
      }
      // q̈ = a0 + H⁻¹ G λ = a0 + L⁻¹ D⁻¹ (L⁻ᵀG) λ
      fast_x_.noalias() = fast_Gt_.transpose() * fast_lambda_;
      fast_x_.array() *= fast_Dinv_.array();
      ltdl_solve_L(m, data_, fast_x_);
    }
    return Forces::Solved;
  }

  // The force LCP's answer when β's modes are known from the last solve and
  // still hold: the active contacts (pushing, or touching with ζ̇ = 0) as
  // equalities — normal rows, tangential rows for the sticking ones, sliding
  // ones pushing along t − μ s — with dependent rows resolved by their
  // minimum-norm forces (regularised 1e-12), accepted when every normal
  // force is ≥ 0, every sticking force inside its cone and no inactive
  // contact accelerates into its surface. Otherwise the LCP decides. A
  // resting stack of cubes then solves a small linear system per step
  // instead of a degenerate LCP of 20 contacts × 8 cone directions.
  bool active_set_accelerations(const VectorX& q, const VectorX& v, VectorX& a, bool predicted) {
    if (!modes_known_) return false;
    const Model& m = model();
    const int nc = static_cast<int>(contacts_.size());
    const int nv = m.nv();
    int rows = 0;
    bool any_active = false;
    for (const Tracked& tr : beta_) {
      if (!tr.active) continue;
      any_active = true;
      rows += tr.mode == ContactMode::Sticking && tr.mu > 0.0 && tr.contact.kind == ContactKind::Shapes ? 3 : 1;
    }
    if (!any_active) return false;
    // CRBA leaves the placements the contacts need, the bias pass of RNEA the
    // velocities contact_jacobians reads; H = LᵀDL by the branch-induced
    // sparse factorisation (independent bodies: block-diagonal, no fill-in).
    unchecked::crba(m, data_, q);
    unchecked::ltdl(m, data_);
    fast_a0_ = tau_applied_ - unchecked::bias_forces_after_crba(m, data_, v);
    ltdl_solve(m, data_, fast_a0_);
    fast_T_.resize(nv, nc);
    fast_Tdv_.resize(nc);
    fast_D_.resize(nv, 2 * nc);
    fast_Ddv_.resize(2 * nc);
    contact_jacobians(m, data_, contacts_, fast_T_, fast_Tdv_, fast_D_, fast_Ddv_, true);
    // Columns of K (constraint directions) and, with a sliding contact, G
    // (force directions); b (velocity products).
    bool symmetric = true;
    for (const Tracked& tr : beta_) {
      symmetric &= !(tr.active && tr.mode == ContactMode::Sliding && tr.mu > 0.0 && tr.contact.kind == ContactKind::Shapes);
    }
    fast_K_.resize(nv, rows);
    if (!symmetric) fast_G_.resize(nv, rows);
    fast_b_.resize(rows);
    fast_slide_.setZero(2, nc);
    int r = 0;
    for (int k = 0; k < nc; ++k) {
      const Tracked& tr = beta_[static_cast<std::size_t>(k)];
      if (!tr.active) continue;
      fast_K_.col(r) = fast_T_.col(k);
      if (!symmetric) fast_G_.col(r) = fast_T_.col(k);
      fast_b_(r) = fast_Tdv_(k);
      const bool friction = tr.mu > 0.0 && tr.contact.kind == ContactKind::Shapes;
      if (friction && tr.mode == ContactMode::Sliding) {
        const Eigen::Vector2d u(fast_D_.col(2 * k).dot(v), fast_D_.col(2 * k + 1).dot(v));
        if (u.norm() <= opt_.slip_velocity) return false;  // no direction to slide in
        fast_slide_.col(k) = u.normalized();
        fast_G_.col(r) -= tr.mu * (fast_slide_(0, k) * fast_D_.col(2 * k) + fast_slide_(1, k) * fast_D_.col(2 * k + 1));
      } else if (friction && tr.mode != ContactMode::Sticking) {
        return false;
      }
      ++r;
      if (friction && tr.mode == ContactMode::Sticking) {
        for (int j = 0; j < 2; ++j, ++r) {
          fast_K_.col(r) = fast_D_.col(2 * k + j);
          if (!symmetric) fast_G_.col(r) = fast_D_.col(2 * k + j);
          fast_b_(r) = fast_Ddv_(2 * k + j);
        }
      }
    }
    // A λ = −(Kᵀ a0 + K̇ᵀq̇) with A = Kᵀ H⁻¹ G = (L⁻ᵀK)ᵀ D⁻¹ (L⁻ᵀG), as the
    // event-driven scheme's constrained dynamics: rank-one updates over the
    // dofs, each touching only the rows of the contacts on its bodies.
    fast_b_ = -(fast_K_.transpose() * fast_a0_ + fast_b_);
    // Minimum-norm forces first; when only cones are violated, the friction
    // is redistributed in proportion to the normal forces (W⁻¹ of a
    // sticking contact's tangential rows ∝ its normal force: the forces of
    // least Σ |f_t|²/λ_n): dependent contacts leave the friction's share
    // free, and an even share pushes the lightly loaded corners of a face on
    // an incline outside their cones. Two redistributions at most.
    fast_winv_.setOnes(rows);
    for (int round = 0;; ++round) {
      if (fast_forces(symmetric) != Forces::Solved) return false;
      bool outside_cone = false;
      ContactSolution& s = fast_;
      s.ddq = fast_a0_ + fast_x_;
      s.zeta_dot = fast_T_.transpose() * s.ddq + fast_Tdv_;
      s.lambda.setZero(nc);
      s.friction.setZero(2, nc);
      s.mode.assign(static_cast<std::size_t>(nc), ContactMode::Sticking);
      s.current.clear();
      s.active.clear();
      r = 0;
      for (int k = 0; k < nc; ++k) {
        const Tracked& tr = beta_[static_cast<std::size_t>(k)];
        s.mode[static_cast<std::size_t>(k)] = tr.mode;
        if (!tr.active) continue;
        s.lambda(k) = fast_lambda_(r++);
        if (tr.mu > 0.0 && tr.contact.kind == ContactKind::Shapes && tr.mode == ContactMode::Sticking) {
          s.friction.col(k) = fast_lambda_.segment<2>(r);
          r += 2;
        } else if (tr.mode == ContactMode::Sliding) {
          s.friction.col(k) = -tr.mu * s.lambda(k) * fast_slide_.col(k);
        }
        s.active.push_back(k);
      }
      double scale = 1e-12;
      for (int k = 0; k < nc; ++k) scale = std::max(scale, std::abs(s.lambda(k)));
      const double floor = 1e-9 * scale;
      const double tol = 1e-9 * std::max(1.0, s.zeta_dot.cwiseAbs().maxCoeff());
      for (int k = 0; k < nc; ++k) {
        const Tracked& tr = beta_[static_cast<std::size_t>(k)];
        if (tr.active) {
          if (s.lambda(k) < -floor) return false;
          if (tr.mode == ContactMode::Sticking && tr.mu > 0.0 && s.friction.col(k).norm() > tr.mu * s.lambda(k) + floor) {
            outside_cone = true;
          }
        } else if (s.zeta_dot(k) < -tol) {
          return false;
        }
        if (std::abs(s.zeta_dot(k)) <= tol) {
          s.current.push_back(k);
        } else if (!tr.active) {
          s.mode[static_cast<std::size_t>(k)] = ContactMode::Separating;
        }
      }
      if (!outside_cone) break;
      if (round == 2 || !symmetric) return false;
      double mean = 0.0;
      int n = 0;
      for (int k = 0; k < nc; ++k) {
        const Tracked& tr = beta_[static_cast<std::size_t>(k)];
        if (tr.active && s.lambda(k) > 0.0) mean += s.lambda(k), ++n;
      }
      if (n == 0) return false;
      mean /= n;
      r = 0;
      for (int k = 0; k < nc; ++k) {
        const Tracked& tr = beta_[static_cast<std::size_t>(k)];
        if (!tr.active) continue;
        ++r;
        if (tr.mu > 0.0 && tr.contact.kind == ContactKind::Shapes && tr.mode == ContactMode::Sticking) {
          fast_winv_.segment<2>(r).setConstant(std::max(s.lambda(k), 1e-3 * mean) / mean);
          r += 2;
        }
      }
      ++stats_redistributed_;
    }
    (void)predicted;
    ContactSolution& s = fast_;
    s.status = ContactStatus::Solved;
    s.pivots = 0;
    a = s.ddq;
    ++stats_fast_;
    return true;
  }

  // ---- one attempted step -----------------------------------------------------------------
  // `stick_landing`: h is the root of a sliding speed; the slide's force then
  // holds over the whole step (the contact sticks at its end), so the
  // predicted state — where the speed is 0 and the LCP would already stick —
  // gets the step's starting forces.
  Outcome attempt(double h, bool stick_landing, VectorX& q1, VectorX& v1, double& h_stick) {
    const Model& m = model();
    // 1. predict with the current forces
    vp_ = v_ + h * a_;
    qp_ = integrate(m, q_, v_ + 0.5 * h * a_, h);
    // A slide the prediction reverses stops inside the step: land on the
    // stick (the secant root of the sliding speed, exact for Coulomb's
    // constant deceleration). Left to the corrector, the friction force,
    // reversed at the predicted state, would cancel the deceleration and
    // freeze a small sliding speed for good.
    if (stick_landing) {
      ap_ = a_;
    } else {
      h_stick = sliding_reversal(qp_, vp_, h);
      if (std::isfinite(h_stick)) return Outcome::Stick;
      // 2. the force LCP at the predicted state
      if (!accelerations(qp_, vp_, ap_, true)) return Outcome::ContactFailed;
    }
    // 3. correct (implicit trapezoid with the predicted forces)
    v1 = v_ + 0.5 * h * (a_ + ap_);
    q1 = integrate(m, q_, 0.5 * (v_ + v1), h);
    // 4. penetration of a contact outside β, reversal of a sliding one
    detect(q1, touch_margin(opt_), found_);
    for (const Contact& c : found_) {
      if (c.gap < -touch_margin(opt_) && !in_beta(c.id)) return Outcome::Penetration;
    }
    h_stick = sliding_reversal(q1, v1, h);
    return std::isfinite(h_stick) ? Outcome::Stick : Outcome::Accepted;
  }

  // The earliest secant root of the sliding speeds of β's sliding contacts,
  // which run from u₀ > 0 at the step's start to u₁ < −slip_velocity at
  // (q1, v1) after h; +∞ when none reverses.
  double sliding_reversal(const VectorX& q1, const VectorX& v1, double h) {
    const Model& m = model();
    double h_stick = kInf;
    bool kinematics = false;
    for (const Tracked& tr : beta_) {
      if (tr.mode != ContactMode::Sliding || tr.contact.kind != ContactKind::Shapes) continue;
      if (!kinematics) {
        unchecked::forward_kinematics(m, data_, q1, v1);
        kinematics = true;
      }
      Contact c = tr.contact;
      refresh_contact(m, data_, c);
      const double u1 = tangential_velocity(c).dot(tr.slide_dir);
      if (u1 >= -opt_.slip_velocity) continue;
      const double u0 = start_slide_speed(tr);
      if (u0 <= 0.0) continue;
      h_stick = std::min(h_stick, h * u0 / (u0 - u1));
    }
    return h_stick;
  }

  // Relative tangential velocity at a contact (kinematics with v in data_).
  Vec3 tangential_velocity(const Contact& c) const {
    const ContactKinematics ck = contact_kinematics(model(), data_, c);
    Vec3 u = ck.velocity_b - ck.velocity_a;
    return u - u.dot(ck.normal) * ck.normal;
  }

  // Sliding speed along the slide direction at the step's start (cached).
  double start_slide_speed(const Tracked& tr) const {
    for (std::size_t k = 0; k < beta_.size(); ++k) {
      if (beta_[k].contact.id == tr.contact.id) return slide_speed0_[k];
    }
    return 0.0;
  }

  // The shortest landing time s ∈ (0, h] of a contact outside β that the
  // prediction carries into a surface: the root of Ψ_i(q(s)) (Illinois).
  double land(double h) {
    const Model& m = model();
    qp_ = integrate(m, q_, v_ + 0.5 * h * a_, h);
    detect(qp_, touch_margin(opt_), found_);
    double best = h;
    const std::vector<Contact> predicted = found_;
    for (const Contact& c : predicted) {
      if (c.gap >= -touch_margin(opt_) || in_beta(c.id)) continue;
      auto g = [&](double s) { return gap_at(integrate(m, q_, v_ + 0.5 * s * a_, s), c); };
      const double g0 = g(0.0);
      if (g0 <= touch_margin(opt_)) continue;  // touching already: left to the penetration check
      best = std::min(best, locate_crossing(g, 0.0, g0, h, c.gap, opt_.event_time_tolerance, 0.25 * opt_.contact_tolerance));
    }
    return best;
  }

  // ---- at the step's end: drift, impacts, the new β and its forces ---------------------------
  void project();
  void h_metric_solve(const MatrixX& K, VectorX& r);
  void no_energy_gain(const VectorX& q0, const VectorX& v0, double h);
  const VectorX& applied_tau_at(const VectorX& v) {
    applied_torque(model(), opt_, tau_, v, tau_applied_);
    return tau_applied_;
  }
  bool impacts(SimulationResult& result);
  bool settle(SimulationResult& result);

  void emit(EventKind kind, const Contact& c, double pre, double post, double impulse) {
    ++stats_.events;
    if (rec_) {
      rec_->event({t_, kind, cat_.name_of(model(), c), model().body_name(c.body_a), model().body_name(c.body_b), pre, post,
                   impulse});
    }
  }

  void refresh_view() {
    current_view_.clear();
    for (const Tracked& tr : beta_) current_view_.push_back(tr.contact);
  }

  // ---- recording ----------------------------------------------------------------------------
  double energy_of(const VectorX& q, const VectorX& v) {
    qn_ = q;
    normalize_configuration(model(), qn_);
    return mechanical_energy(model(), data_, qn_, v);
  }

  void record_sample(double time, const VectorX& q, const VectorX& v) {
    if (!rec_) return;
    rec_->sample(time, q, v, energy_of(q, v));
    if (beta_.empty()) return;
    // The forces at the sample (a solve for the output, not counted).
    const long rhs = stats_.rhs_evaluations, lcp = stats_.lcp_solves;
    VectorX a;
    if (accelerations(q, v, a)) {
      const ContactSolution& s = *last_;
      unchecked::forward_kinematics(model(), data_, q, v);
      for (std::size_t k = 0; k < contacts_.size(); ++k) {
        const ContactKinematics ck = contact_kinematics(model(), data_, contacts_[k]);
        const Eigen::Index i = static_cast<Eigen::Index>(k);
        rec_->contact({time, cat_.name_of(model(), contacts_[k]), ck.gap, ck.gap_rate, s.lambda(i), s.friction.col(i).norm()});
      }
    }
    stats_.rhs_evaluations = rhs;
    stats_.lcp_solves = lcp;
  }

  // Samples in (t0, t1) (and t1 when `inclusive`) on the cubic Hermite
  // interpolant of the step, in the tangent space at q0.
  void record_outputs_until(double t0, const VectorX& q0, const VectorX& v0, double t1, const VectorX& q1,
                            const VectorX& v1, bool inclusive) {
    if (opt_.output_rate <= 0.0 || !rec_) return;
    const double dt_out = 1.0 / opt_.output_rate;
    const double h = t1 - t0;
    const VectorX delta = difference(model(), q0, q1);
    while (next_output_ < t1 || (inclusive && next_output_ <= t1)) {
      const double s = h > 0.0 ? std::clamp((next_output_ - t0) / h, 0.0, 1.0) : 1.0;
      const double h10 = s * s * s - 2 * s * s + s, h01 = -2 * s * s * s + 3 * s * s, h11 = s * s * s - s * s;
      const double d10 = 3 * s * s - 4 * s + 1, d01 = -6 * s * s + 6 * s, d11 = 3 * s * s - 2 * s;
      const VectorX p = h10 * h * v0 + h01 * delta + h11 * h * v1;
      const VectorX qs = integrate(model(), q0, p, 1.0);
      const VectorX vs = h > 0.0 ? VectorX(d10 * v0 + d01 * delta / h + d11 * v1) : v1;
      record_sample(next_output_, qs, vs);
      next_output_ = std::round((next_output_ + dt_out) / dt_out) * dt_out;
    }
  }

  bool sample_controller(SimulationResult& result) {
    if (!controller_) return true;
    next_sample_ = t_ + period_;
    return sample_controller_checked(model(), opt_, controller_, t_, q_, v_, tau_, result);
  }

  bool fail(SimulationResult& result, SimulationStatus status, const std::string& message) {
    result.status = status;
    result.message = message;
    return false;
  }

  std::string contact_summary() const {
    if (beta_.empty()) return "";
    std::string s = " (contacts: ";
    for (std::size_t i = 0; i < beta_.size(); ++i) s += (i ? ", " : "") + cat_.name_of(model(), beta_[i].contact);
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

  void score(int s) {
    if (s == 0) return;
    if (s < 0) {
      run_ = std::min(run_, 0) - 1;
      if (run_ <= -kScoreRun) {
        h_init_ = std::max(0.5 * h_init_, opt_.min_step);
        run_ = 0;
      }
    } else {
      run_ = std::max(run_, 0) + 1;
      if (run_ >= kScoreRun) {
        h_init_ = std::min(2.0 * h_init_, opt_.time_step);
        run_ = 0;
      }
    }
  }

  World world_;
  SimulationOptions opt_;
  Data data_;
  ContactCatalogue cat_;
  ContactSolver solver_;

  double t_ = 0.0;
  VectorX q_, v_, tau_, tau_applied_, a_, qn_, qp_, vp_, ap_, mu_, slip_;
  ControllerFunction controller_;
  double period_ = 0.0, next_sample_ = kInf;
  std::vector<Tracked> beta_;
  std::vector<double> slide_speed0_;
  std::vector<Contact> current_view_, contacts_, found_, touching_, rest_;
  std::vector<int> slow_;
  std::string message_;
  const ContactSolution* last_ = nullptr;  // the solver's last force solution
  // active_set_accelerations: β's modes known from the last solve, workspace
  bool modes_known_ = false;
  long stats_fast_ = 0, stats_redistributed_ = 0;
  ContactSolution fast_;
  Eigen::PartialPivLU<MatrixX> fast_lu_;
  BandedCholesky fast_chol_, fast_pchol_;
  MatrixX fast_K_, fast_G_, fast_P_;
  VectorX fast_z_, fast_winv_;
  MatrixX fast_T_, fast_D_, fast_Kt_, fast_Gt_, fast_A_;
  Matrix2X fast_slide_;
  VectorX fast_a0_, fast_Tdv_, fast_Ddv_, fast_b_, fast_lambda_, fast_Dinv_, fast_x_;

  // project(): workspace
  std::vector<Contact> proj_act_;
  std::vector<bool> proj_stick_;
  MatrixX proj_K_, proj_T_, proj_D_, proj_Y_, proj_A_;
  VectorX zero_;
  // impacts() -> settle(): ζ of the touching contacts at (zeta_q_, zeta_v_)
  VectorX imp_zeta_, imp_mu_, imp_e_, zeta_q_, zeta_v_;
  bool zeta_known_ = false;
  std::vector<Tracked> previous_;
  // detect(): the last configuration, margin and contacts
  std::vector<Contact> detected_;
  VectorX detected_q_;
  double detected_margin_ = 0.0;
  bool detected_valid_ = false;
  VectorX proj_phi_, proj_Kdv_, proj_Tdv_, proj_Ddv_, proj_mult_, proj_x_;
  Eigen::PartialPivLU<MatrixX> proj_lu_;

  double h_init_ = 1e-3;
  int run_ = 0;
  SimulationStatistics stats_;
  Recorder* rec_ = nullptr;
  double next_output_ = 0.0;
  bool initialised_ = false;
};

// Moves (q, v) back onto Ψ = 0, ζ = 0 of the active contacts of β (and zero
// sliding velocity of the sticking ones) in the metric of H, when they have
// drifted beyond drift_tolerance (the trapezoid keeps them only to O(h³)).
void TimeStepping::project() {
  const Model& m = model();
  proj_act_.clear();
  proj_stick_.clear();
  for (const Tracked& tr : beta_) {
    if (!tr.active) continue;
    proj_act_.push_back(tr.contact);
    proj_stick_.push_back(tr.mu > 0.0 && tr.mode != ContactMode::Sliding && tr.contact.kind == ContactKind::Shapes);
  }
  if (proj_act_.empty()) return;
  std::vector<Contact>& act = proj_act_;
  const int na = static_cast<int>(act.size());
  const int nv = m.nv();
  bool changed = false;
  // Positions: δ = −H⁻¹T (TᵀH⁻¹T)⁻¹ Ψ, a few Newton iterations.
  proj_phi_.resize(na);
  for (int iteration = 0; iteration < 3; ++iteration) {
    unchecked::forward_kinematics(m, data_, q_, v_, zero_);
    double worst = 0.0;
    for (int k = 0; k < na; ++k) {
      if (act[k].kind == ContactKind::Shapes) refresh_contact(m, data_, act[k]);
      proj_phi_(k) = act[k].kind == ContactKind::Shapes ? act[k].gap : gap_at(q_, act[k]);
      worst = std::max(worst, std::abs(proj_phi_(k)));
    }
    if (worst <= opt_.drift_tolerance) break;
    // (CRBA's kinematics pass leaves the placements the Jacobian needs.)
    unchecked::crba(m, data_, q_);
    unchecked::ltdl(m, data_);
    proj_K_.resize(nv, na);
    proj_Kdv_.resize(na);
    contact_jacobian(m, data_, act, proj_K_, proj_Kdv_);
    proj_phi_ = -proj_phi_;
    h_metric_solve(proj_K_, proj_phi_);  // δ into proj_x_
    q_ = integrate(m, q_, proj_x_, 1.0);
    changed = true;
  }
  // Velocities: remove the normal (and sticking tangential) components,
  // checked by the contacts' kinematics first (the Jacobians only when a
  // velocity has drifted).
  if (changed) {  // (otherwise the kinematics and contacts are those of the first check)
    unchecked::forward_kinematics(m, data_, q_, v_, zero_);
    for (Contact& c : act) {
      if (c.kind == ContactKind::Shapes) refresh_contact(m, data_, c);
    }
  }
  double worst = 0.0;
  for (int k = 0; k < na; ++k) {
    const ContactKinematics ck = contact_kinematics(m, data_, act[k]);
    worst = std::max(worst, std::abs(ck.gap_rate));
    if (proj_stick_[static_cast<std::size_t>(k)]) {
      Vec3 t1, t2;
      tangent_basis(ck.normal, t1, t2);
      const Vec3 u = ck.velocity_b - ck.velocity_a;
      worst = std::max({worst, std::abs(t1.dot(u)), std::abs(t2.dot(u))});
    }
  }
  if (worst > 0.1 * opt_.velocity_tolerance) {
    int rows = 0;
    for (int k = 0; k < na; ++k) rows += proj_stick_[static_cast<std::size_t>(k)] ? 3 : 1;
    unchecked::crba(m, data_, q_);
    unchecked::ltdl(m, data_);
    unchecked::forward_kinematics(m, data_, q_, v_, zero_);
    proj_T_.resize(nv, na);
    proj_Tdv_.resize(na);
    proj_D_.resize(nv, 2 * na);
    proj_Ddv_.resize(2 * na);
    contact_jacobians(m, data_, act, proj_T_, proj_Tdv_, proj_D_, proj_Ddv_);
    proj_K_.resize(nv, rows);
    int r = 0;
    for (int k = 0; k < na; ++k) {
      proj_K_.col(r++) = proj_T_.col(k);
      if (proj_stick_[static_cast<std::size_t>(k)]) {
        proj_K_.col(r++) = proj_D_.col(2 * k);
        proj_K_.col(r++) = proj_D_.col(2 * k + 1);
      }
    }
    proj_phi_.resize(rows);
    proj_phi_.noalias() = -(proj_K_.transpose() * v_);
    h_metric_solve(proj_K_, proj_phi_);
    v_ += proj_x_;
    changed = true;
  }
  if (changed) ++stats_.projections;
}

// proj_x_ = H⁻¹K (KᵀH⁻¹K)⁻¹ r (dependent rows regularised 1e-12), the
// H-metric least change that moves Kᵀx by r; data_ holds H's LᵀDL factor.
void TimeStepping::h_metric_solve(const MatrixX& K, VectorX& r) {
  const Model& m = model();
  const int rows = static_cast<int>(K.cols());
  proj_Y_ = K;
  ltdl_solve_Lt(m, data_, proj_Y_);
  proj_A_.noalias() = proj_Y_.transpose() * data_.LD.diagonal().cwiseInverse().asDiagonal() * proj_Y_;
  proj_A_.diagonal().array() += 1e-12 * std::max(1e-12, proj_A_.diagonal().maxCoeff());
  proj_lu_.compute(proj_A_);
  proj_mult_ = proj_lu_.solve(r);
  (void)rows;
  proj_x_.noalias() = K * proj_mult_;
  ltdl_solve(m, data_, proj_x_);
}

// The trapezoid on a body's body-frame velocity is exact only for constant
// q̈: a ball rolling down an incline (its body-frame velocity turning) gains
// O(h³) energy a step (1.6e-7 J at h = 1e-3, 4e-4 J over 1 s). A step that
// ends with more mechanical energy than it started with plus the work of the
// applied torques (trapezoid: h τ̄·v̄) has its velocity scaled down to that
// energy; scaling keeps every velocity constraint Tᵀv = 0 of β.
void TimeStepping::no_energy_gain(const VectorX& q0, const VectorX& v0, double h) {
  const Model& m = model();
  const VectorX& tau0 = applied_tau_at(v0);
  double work = 0.5 * h * tau0.dot(0.5 * (v0 + v_));
  const VectorX& tau1 = applied_tau_at(v_);
  work += 0.5 * h * tau1.dot(0.5 * (v0 + v_));
  const double e0 = energy_of(q0, v0);
  qn_ = q_;
  normalize_configuration(m, qn_);
  const double kinetic = kinetic_energy(m, data_, qn_, v_);
  const double e1 = kinetic + potential_energy(m, data_, qn_);
  const double excess = e1 - (e0 + work);
  if (!(excess > 1e-14 * std::max(1.0, std::abs(e0))) || !(kinetic > excess)) return;
  v_ *= std::sqrt(1.0 - excess / kinetic);
}

// Impacts at (t_, q_, v_): every touching contact, the approaching ones with
// their restitution (plastic below zeno_speed), by the impulse LCP.
bool TimeStepping::impacts(SimulationResult& result) {
  const Model& m = model();
  detect(q_, touch_margin(opt_), touching_);
  unchecked::forward_kinematics(m, data_, q_, v_);
  const int n = static_cast<int>(touching_.size());
  VectorX& zeta = imp_zeta_;
  VectorX& mu = imp_mu_;
  VectorX& e = imp_e_;
  zeta.resize(n);
  mu.resize(n);
  e.resize(n);
  bool impact = false;
  for (int i = 0; i < n; ++i) {
    stats_.max_penetration = std::max(stats_.max_penetration, -touching_[i].gap);
    zeta(i) = contact_kinematics(m, data_, touching_[i]).gap_rate;
    parameters_of(touching_[i], mu(i), e(i));
    // Persistent contacts drift by O(h³) between projections: only a contact
    // arriving from outside β makes an impact (β's take part in it).
    impact |= zeta(i) < -opt_.velocity_tolerance && !in_beta(touching_[i].id);
  }
  if (!impact) {
    // settle() at this (q, v) and these contacts reads their ζ from here.
    zeta_q_ = q_;
    zeta_v_ = v_;
    zeta_known_ = true;
    return true;
  }
  zeta_known_ = false;
  VectorX e_eff = e;
  for (int i = 0; i < n; ++i) {
    if (zeta(i) < 0.0 && -zeta(i) < opt_.zeno_speed) e_eff(i) = 0.0;
  }
  ImpactOptions io;
  io.friction = mu.maxCoeff() > 0.0 ? FrictionModel::PolyhedralCone : FrictionModel::None;
  io.cone_directions = opt_.cone_directions;
  const ImpactSolution* sp = &solver_.impact(m, data_, q_, v_, touching_, e_eff, mu, io);
  ++stats_.lcp_solves;
  // As the event-driven scheme: a light compliance where dependent contacts
  // defeat Lemke on the rigid impact (their impulses in least-squares share).
  for (const double compliance : {1e-8, 1e-6, 1e-4}) {
    if (sp->status == ContactStatus::Solved || sp->status == ContactStatus::Infeasible) break;
    io.compliance = compliance;
    sp = &solver_.impact(m, data_, q_, v_, touching_, e_eff, mu, io);
    ++stats_.lcp_solves;
  }
  const ImpactSolution& s = *sp;
  ++stats_.impacts;
  if (s.status != ContactStatus::Solved) {
    return fail(result, SimulationStatus::ContactFailure, "impact at t = " + fmt(t_) + ": " +
                                                              contact_failure_words(s.status, s.message) + " for " +
                                                              cat_.names_of(m, touching_));
  }
  bool zeno = false;
  for (int i = 0; i < n; ++i) {
    if (s.impulse(i) > 0.0 || zeta(i) < -opt_.velocity_tolerance) {
      const bool plastic_rest = zeta(i) < -opt_.velocity_tolerance && -zeta(i) < opt_.zeno_speed;
      zeno |= plastic_rest;
      emit(plastic_rest ? EventKind::ZenoRest : EventKind::Impact, touching_[i], zeta(i), s.zeta_plus(i), s.impulse(i));
    }
  }
  v_ = s.v_plus;
  // A plastic Zeno impact comes to rest as a whole: touching contacts the
  // impulse left separating slower than zeno_speed (the other edge of a
  // face landing flat, which would rock from edge to edge at every step)
  // have their normal velocity removed too (an H-metric projection: it never
  // adds energy).
  if (zeno) {
    slow_.clear();
    for (int i = 0; i < n; ++i) {
      if (touching_[i].kind == ContactKind::Shapes && s.zeta_plus(i) > opt_.velocity_tolerance &&
          s.zeta_plus(i) < opt_.zeno_speed) {
        slow_.push_back(i);
      }
    }
    if (!slow_.empty()) {
      rest_.clear();
      for (int i = 0; i < n; ++i) {
        if (touching_[i].kind == ContactKind::Shapes && std::abs(s.zeta_plus(i)) < opt_.zeno_speed) rest_.push_back(touching_[i]);
      }
      const int nr = static_cast<int>(rest_.size());
      unchecked::forward_kinematics(m, data_, q_, v_, VectorX::Zero(m.nv()));
      MatrixX T(m.nv(), nr);
      VectorX unused(nr);
      contact_jacobian(m, data_, rest_, T, unused);
      const MatrixX H = unchecked::crba(m, data_, q_);
      const Eigen::LDLT<MatrixX> Hf(H);
      const MatrixX HiT = Hf.solve(T);
      MatrixX A = T.transpose() * HiT;
      A.diagonal().array() += 1e-12 * std::max(1e-12, A.diagonal().maxCoeff());
      v_ -= HiT * A.partialPivLu().solve(T.transpose() * v_);
    }
  }
  return true;
}

// The new β at (t_, q_, v_): touching contacts with ζ ≤ velocity_tolerance;
// the force LCP gives their forces, modes and a_ for the next step.
bool TimeStepping::settle(SimulationResult& result) {
  const Model& m = model();
  detect(q_, touch_margin(opt_), touching_);
  // ζ of the touching contacts: from impacts() when it saw this (q, v).
  const bool zeta_known = zeta_known_ && bitwise_equal(q_, zeta_q_) && bitwise_equal(v_, zeta_v_) &&
                          imp_zeta_.size() == static_cast<Eigen::Index>(touching_.size());
  zeta_known_ = false;
  if (!zeta_known) unchecked::forward_kinematics(m, data_, q_, v_);
  previous_.swap(beta_);
  std::vector<Tracked>& previous = previous_;
  beta_.clear();
  for (std::size_t i = 0; i < touching_.size(); ++i) {
    const Contact& c = touching_[i];
    stats_.max_penetration = std::max(stats_.max_penetration, -c.gap);
    const double zeta = zeta_known ? imp_zeta_(static_cast<Eigen::Index>(i)) : contact_kinematics(m, data_, c).gap_rate;
    if (zeta > opt_.velocity_tolerance) continue;  // separating
    Tracked tr;
    tr.contact = c;
    parameters_of(c, tr.mu, tr.restitution);
    beta_.push_back(tr);
  }
  // The modes of the last solve carry over while β keeps its contacts.
  modes_known_ = !beta_.empty() && beta_.size() == previous.size();
  for (std::size_t k = 0; modes_known_ && k < beta_.size(); ++k) {
    if (previous[k].contact.id != beta_[k].contact.id) {
      modes_known_ = false;
      break;
    }
    beta_[k].mode = previous[k].mode;
    beta_[k].active = previous[k].active;
    beta_[k].slide_dir = previous[k].slide_dir;
  }
  if (!accelerations(q_, v_, a_)) {
    return fail(result, SimulationStatus::ContactFailure, "contact forces at t = " + fmt(t_) + ": " + message_);
  }
  slide_speed0_.assign(beta_.size(), 0.0);
  if (!beta_.empty()) {
    const ContactSolution& s = *last_;
    const double fscale = std::max(1e-12, s.lambda.cwiseAbs().maxCoeff());
    unchecked::forward_kinematics(m, data_, q_, v_);
    for (std::size_t k = 0; k < beta_.size(); ++k) {
      Tracked& tr = beta_[k];
      const Eigen::Index i = static_cast<Eigen::Index>(k);
      // Active (projected onto Ψ = 0, ζ = 0 at the step's end): pushing, or
      // touching with ζ̇ = 0 (the dependent corners of a face on a face that
      // the LCP's basic solution leaves at zero force; left out, the face
      // rocks on its edges from one plastic impact to the next).
      tr.active = s.lambda(i) > 1e-12 * fscale ||
                  (s.mode[k] != ContactMode::Separating &&
                   std::find(s.current.begin(), s.current.end(), static_cast<int>(k)) != s.current.end());
      tr.mode = s.mode[k];
      if (tr.mu <= 0.0 || tr.contact.kind == ContactKind::JointLimit) tr.mode = ContactMode::Sticking;
      if (tr.mode == ContactMode::Slipping) {
        // At rest, but the cone binds: it starts to slide, against the
        // friction force the LCP found (projected as sticking, it never would).
        tr.mode = ContactMode::Sliding;
        Vec3 t1, t2;
        tangent_basis(contacts_[k].normal, t1, t2);
        const Vec3 f = s.friction(0, i) * t1 + s.friction(1, i) * t2;
        tr.slide_dir = f.norm() > 0.0 ? Vec3(-f.normalized()) : Vec3::Zero();
      } else if (tr.mode == ContactMode::Sliding) {
        const Vec3 u = tangential_velocity(contacts_[k]);
        tr.slide_dir = u.norm() > 0.0 ? Vec3(u.normalized()) : Vec3::Zero();
        slide_speed0_[k] = u.norm();
      }
    }
  }
  // What changed: losses, gains, stick/slip.
  auto sliding = [](ContactMode mode) { return mode == ContactMode::Sliding || mode == ContactMode::Slipping; };
  for (const Tracked& old : previous) {
    const Tracked* now = nullptr;
    for (const Tracked& tr : beta_) {
      if (tr.contact.id == old.contact.id) now = &tr;
    }
    if (!now) {
      emit(EventKind::ContactLoss, old.contact, 0.0, 0.0, 0.0);
    } else if (old.mu > 0.0 && sliding(old.mode) != sliding(now->mode)) {
      emit(sliding(now->mode) ? EventKind::Slip : EventKind::Stick, old.contact, 0.0, 0.0, 0.0);
    }
  }
  for (const Tracked& now : beta_) {
    bool known = false;
    for (const Tracked& old : previous) known |= old.contact.id == now.contact.id;
    if (!known) emit(EventKind::ContactGain, now.contact, 0.0, 0.0, 0.0);
  }
  refresh_view();
  return true;
}

SimulationResult TimeStepping::run_until(double until, Recorder* recorder) {
  const auto wall0 = std::chrono::steady_clock::now();
  SimulationResult result;
  rec_ = recorder;
  const Model& m = model();
  try {
    if (!initialised_) {
      normalize_configuration(m, q_);
      stats_.energy_start = energy_of(q_, v_);
      next_output_ = t_;
      if (!impacts(result)) return finish(result, wall0);
      if (!sample_controller(result)) return finish(result, wall0);
      if (!settle(result)) return finish(result, wall0);
      initialised_ = true;
    }
    if (rec_ && opt_.output_rate > 0 && next_output_ <= t_) {
      record_sample(t_, q_, v_);
      next_output_ = t_ + 1.0 / opt_.output_rate;
    }
    const long step_cap = stats_.steps + opt_.max_steps;
    VectorX q1, v1;
    while (t_ < until) {
      if (stats_.steps >= step_cap) {
        fail(result, SimulationStatus::StepLimit, "more than max_steps = " + std::to_string(opt_.max_steps) + " steps at t = " + fmt(t_));
        return finish(result, wall0);
      }
      // Stop times closer than rounding: reached.
      const double slack = std::max(1e-9 * h_init_, 1e-12 * std::max(1.0, std::abs(t_)));
      if (until - t_ <= slack) {
        t_ = until;
        break;
      }
      if (next_sample_ - t_ <= slack) {
        if (!sample_controller(result) || !settle(result)) return finish(result, wall0);
        continue;
      }
      // 0. the nominal step, cut at the controller's next sample and the end
      double h = h_init_;
      bool cut_by_time = false;
      const double t_stop = std::min(next_sample_, until);
      // (a remainder below 1e-6 h is rounding: merged into this step)
      if (t_ + h * (1.0 + 1e-6) >= t_stop) {
        h = t_stop - t_;
        cut_by_time = true;
      }
      // 1–4. predict, LCP, correct; on the first penetration land on the
      // contact the prediction reaches (the prediction's configuration is
      // searched only then: most steps penetrate nothing), else halve;
      // shorten to a stick
      bool shortened = false, landing_tried = false;
      Outcome outcome;
      bool stick_landing = false;
      for (;;) {
        if (h < opt_.min_step) {
          fail(result, SimulationStatus::StepUnderflow,
               "the step fell to " + fmt(h) + " s (below min_step) at t = " + fmt(t_) + contact_summary());
          return finish(result, wall0);
        }
        double h_stick = kInf;
        outcome = attempt(h, stick_landing, q1, v1, h_stick);
        if (outcome == Outcome::Accepted) break;
        shortened = true;
        if (outcome == Outcome::Stick) {
          stick_landing = h_stick > 0.0 && h_stick < h;
          h = stick_landing ? h_stick : 0.5 * h;
        } else {
          stick_landing = false;
          double h_land = h;
          if (outcome == Outcome::Penetration && !landing_tried) {
            landing_tried = true;
            h_land = land(h);
          }
          h = h_land < h ? h_land : 0.5 * h;  // landing; else penetration, or no LCP solution at the prediction
        }
        if (outcome == Outcome::ContactFailed && h < opt_.min_step) {
          fail(result, SimulationStatus::ContactFailure, "contact forces at t = " + fmt(t_) + ": " + message_);
          return finish(result, wall0);
        }
      }
      if (!q1.allFinite() || !v1.allFinite()) {
        fail(result, SimulationStatus::NonFinite, "the state became non-finite at t ≈ " + fmt(t_ + h) + contact_summary());
        return finish(result, wall0);
      }
      // 5. accept
      ++stats_.steps;
      score(shortened ? -1 : (cut_by_time ? 0 : +1));
      const double t0 = t_;
      const VectorX q0 = q_, v0 = v_;
      t_ = (cut_by_time && !shortened) ? t_stop : t_ + h;
      q_ = q1;
      v_ = v1;
      if (quaternion_error(m, q_) > 1e-12) normalize_configuration(m, q_);
      const long events_before = stats_.events;
      project();
      no_energy_gain(q0, v0, h);
      // Samples inside the step: towards the corrected state (before any impact at t_).
      record_outputs_until(t0, q0, v0, t_, q_, v_, false);
      if (!impacts(result)) return finish(result, wall0);
      if (next_sample_ <= t_ && !sample_controller(result)) return finish(result, wall0);
      if (!settle(result)) return finish(result, wall0);
      if (rec_ && opt_.output_rate > 0 && next_output_ <= t_) {
        record_sample(t_, q_, v_);
        next_output_ = std::round((next_output_ + 1.0 / opt_.output_rate) * opt_.output_rate) / opt_.output_rate;
      } else if (rec_ && stats_.events > events_before) {
        record_sample(t_, q_, v_);
      }
    }
    // The output at the end time when the last step stopped within rounding of
    // it (the loop's end then skips the sample, and its contacts with it).
    if (rec_ && opt_.output_rate > 0 && next_output_ <= t_) {
      record_sample(t_, q_, v_);
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

std::unique_ptr<SchemeRunner> make_time_stepping(World world, const SimulationOptions& options) {
  return std::make_unique<TimeStepping>(std::move(world), options);
}

}  // namespace plume::detail
