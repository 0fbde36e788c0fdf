// Event-driven simulation of rigid contact (Featherstone Table 11.1) on
// Boost.Odeint dense-output steppers.
#include "plume/sim/simulator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

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
#include "plume/error.hpp"
#include "sim/dense_stepper.hpp"
#include "sim/scheme.hpp"
#include "sim/scheme_common.hpp"

namespace plume {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// What a witness function watches (the "event" column of Table 11.1).
enum class WitnessKind : std::uint8_t {
  Gap,          // φ of a contact that is not active: crosses to ≤ 0 → impact / contact gain
  NormalForce,  // λ of an active contact: crosses to ≤ 0 → contact loss
  ConeMargin,   // μ λ − |f_t| of a sticking contact: crosses to ≤ 0 → slip
  SlideSpeed,   // u_t · ŝ₀ of a slow sliding contact: crosses to ≤ 0 → stick
  // Internal mode switches of a sliding contact (no LCP, not logged): its
  // friction direction is u/|u| while |u| > kSlideFreeze and is frozen at ŝ₀
  // below, so that the right-hand side stays smooth through the stop, which
  // SlideSpeed then locates exactly.
  SlideFreeze,   // |u| − kSlideFreeze: crosses to ≤ 0 → freeze the direction
  SlideRelease,  // kSlideFreeze − |u|: crosses to ≤ 0 → follow u/|u| again
};

constexpr double kSlideFreeze = 1e-4;  // [m/s]
// Gaps up to this take part in a fallback step's LCP (each may close) [m].
constexpr double kFallbackMargin = 1e-3;
// Speeds within this band of kSlideFreeze count as at the threshold (event
// times are located to ~1e-9 s, during which a sliding speed changes by
// far less).
constexpr double kSlideBand = 1e-3 * kSlideFreeze;

struct Witness {
  WitnessKind kind;
  int index;      // into Impl::current (or Impl::candidates for new gaps)
  bool candidate; // a contact detected at the step's end, not yet tracked
  double offset;  // added to the value (e.g. the contact tolerance for touching contacts)
};

}  // namespace

// Featherstone's Table 11.1: rigid contacts, events on the dense output.
struct EventDrivenCore {
  // One tracked contact of the current set (touching, ζ = 0).
  struct Tracked {
    Contact contact;
    bool active = false;   // an equality constraint of the integration
    ContactMode mode = ContactMode::Sticking;
    Vec3 slide_dir = Vec3::Zero();  // world sliding direction when the slide began (or froze)
    bool frozen = false;            // friction along slide_dir rather than u/|u| (slow slides)
    double mu = 0.0, restitution = 0.0;
  };

  World world;
  SimulationOptions opt;
  Data data;
  ContactDetector detector;
  ContactSolver solver;
  std::vector<ContactParameters> pair_params;

  double t = 0.0;
  VectorX q, v, tau, qn, zero_nv;
  ControllerFunction controller;
  double period = 0.0, next_sample = kInf;
  std::vector<Tracked> current;
  std::vector<Contact> current_view;
  bool initialised = false;

  // Workspace of the constrained dynamics.
  std::vector<Contact> act;
  std::vector<int> act_track;
  MatrixX T, D, K, G, YK, YG, KD, A;
  VectorX Tdv, Ddv, b, lam, a0, x, ydot;
  std::vector<double> fn;
  std::vector<Eigen::Vector2d> ft;

  // Event bookkeeping.
  std::vector<Contact> candidates, touching;
  std::vector<std::uint64_t> detected_ids;
  // Candidates whose gap never opened although ζ̇ > velocity_tolerance:
  // handle_contacts treats them as resting (a separating speed below the
  // Zeno speed that gravity or the actuators take back at once).
  std::vector<std::uint64_t> held;
  std::vector<Witness> witnesses;
  VectorX w0, w1;
  SimulationStatistics stats;
  std::unique_ptr<detail::DenseStepper> stepper;
  Recorder* rec = nullptr;
  double next_output = 0.0;
  double last_event_time = -kInf;
  long tiny_steps = 0;
  int events_at_same_time = 0;

  EventDrivenCore(World w, const SimulationOptions& o)
      : world(std::move(w)),
        opt(o),
        data(world.model()),
        detector(world.model(), world.environment(), detection_options(world, o)),
        solver(world.model(), 16) {
    const Model& m = world.model();
    validate_options();
    q = world.q0();
    v = world.v0();
    tau = VectorX::Zero(m.nv());
    qn = q;
    zero_nv = VectorX::Zero(m.nv());
    ydot = VectorX::Zero(m.nq() + m.nv());
    a0 = VectorX::Zero(m.nv());
    x = VectorX::Zero(m.nv());
    for (const ShapePair& p : detector.pairs()) {
      const DetectorShape& a = detector.shapes()[p.shape_a];
      const DetectorShape& bs = detector.shapes()[p.shape_b];
      pair_params.push_back(world.contact_parameters(a.name, link_of(p.shape_a), a.material, bs.name,
                                                     link_of(p.shape_b), bs.material));
    }
    stepper = detail::make_dense_stepper(opt.integrator, opt.abs_tol, opt.rel_tol, opt.max_step);
  }

  static DetectionOptions detection_options(const World& w, const SimulationOptions& o) {
    DetectionOptions d;
    d.margin = o.contact_tolerance;
    d.self_collision = w.self_collision();
    return d;
  }

  // The same rules as the other schemes (scheme_common.cpp).
  void validate_options() const { detail::validate_scheme_options(opt); }

  std::string link_of(int shape) const {
    if (shape < detector.num_robot_shapes()) return world.model().collisions()[shape].link;
    return detector.shapes()[shape].name;
  }

  const Model& model() const { return world.model(); }

  // ---- contact parameters and names -------------------------------------------
  void parameters_of(const Contact& c, double& mu, double& e) const {
    if (c.kind == ContactKind::JointLimit) {
      mu = 0.0;
      e = opt.joint_limit_restitution;
      return;
    }
    mu = pair_params[c.pair].mu;
    e = pair_params[c.pair].restitution;
  }

  std::string name_of(const Contact& c) const {
    if (c.kind == ContactKind::JointLimit) {
      const std::string& joint = model().joint(model().dof_body(c.dof)).name;
      return "limit:" + joint + (c.normal.x() > 0 ? ":lower" : ":upper");
    }
    return detector.shapes()[c.shape_a].name + "|" + detector.shapes()[c.shape_b].name + "#" +
           std::to_string(c.feature);
  }

  // ---- contacts touching now ------------------------------------------------------
  // Every shape contact and joint limit with φ < margin at q (placements in data).
  void detect_all(const VectorX& qq, double margin, std::vector<Contact>& out) {
    unchecked::forward_kinematics(model(), data, qq);
    detector.detect(model(), data, out);
    if (margin != opt.contact_tolerance) {
      std::size_t k = 0;
      for (const Contact& c : out) {
        if (c.gap < margin) out[k++] = c;
      }
      out.resize(k);
    }
    if (opt.joint_limits) detect_joint_limits(model(), qq, margin, out);
  }

  // ---- the constrained dynamics of the integration ------------------------------
  // q̈ with the active contacts as equalities: normal rows for every active
  // contact, tangential rows for sticking ones; sliding ones push along
  // t − μ s. Contact forces in fn / ft when `forces`.
  // The last evaluation of dynamics(): at the same (q, v) it is reused, and
  // when only τ changed (a controller sample) it is corrected through the
  // factorisation it left behind instead of being recomputed.
  struct Memo {
    bool valid = false;
    VectorX q, v, tau, qdd;
    int rows = 0;
  } memo;
  Eigen::PartialPivLU<MatrixX> lu;
  VectorX dtau, du;

  bool same_state(const VectorX& qq, const VectorX& vv) const {
    return memo.valid && qq.size() == memo.q.size() && (qq.array() == memo.q.array()).all() &&
           (vv.array() == memo.v.array()).all();
  }

  void dynamics(const VectorX& qq, const VectorX& vv, Eigen::Ref<VectorX> qdd, bool forces) {
    if (same_state(qq, vv)) {
      if ((tau.array() != memo.tau.array()).any()) correct_for_tau();
      qdd = memo.qdd;
      if (forces) fill_forces(vv);
      return;
    }
    dynamics_full(qq, vv, qdd);
    memo.q = qq;
    memo.v = vv;
    memo.tau = tau;
    memo.qdd = qdd;
    memo.valid = true;
    if (forces) fill_forces(vv);
  }

  // q̈ and λ for a new τ at the memo's state: Δq̈ = H⁻¹Δτ + H⁻¹G Δλ with
  // A Δλ = −Kᵀ H⁻¹ Δτ (the same factorisations).
  void correct_for_tau() {
    const Model& m = model();
    dtau = tau - memo.tau;
    memo.tau = tau;
    if (act.empty()) {
      // No constraints: ABA again (the memo holds no factor then).
      qn = memo.q;
      normalize_configuration(m, qn);
      memo.qdd = unchecked::aba(m, data, qn, memo.v, applied_tau(memo.v));
      return;
    }
    du = dtau;
    ltdl_solve(m, data, du);
    const int rows = memo.rows;
    const VectorX rhs = -(K.leftCols(rows).transpose() * du);
    const VectorX dl = symmetric ? VectorX(llt.solve(rhs)) : VectorX(lu.solve(rhs));
    lam.head(rows) += dl;
    x.noalias() = YG.topRows(rows).transpose() * dl;
    x.array() /= data.LD.diagonal().array();
    ltdl_solve_L(m, data, x);
    memo.qdd += du + x;
  }

  VectorX tau_applied;
  const VectorX& applied_tau(const VectorX& vv) {
    tau_applied = tau;
    if (opt.joint_damping) tau_applied -= model().damping().cwiseProduct(vv);
    return tau_applied;
  }

  void dynamics_full(const VectorX& qq, const VectorX& vv, Eigen::Ref<VectorX> qdd) {
    const Model& m = model();
    qn = qq;
    normalize_configuration(m, qn);
    act.clear();
    act_track.clear();
    bool any_active = false;
    for (const Tracked& tr : current) any_active |= tr.active;
    if (!any_active) {
      // Free motion: the articulated-body algorithm, O(n).
      qdd = unchecked::aba(m, data, qn, vv, applied_tau(vv));
      memo.rows = 0;
      return;
    }
    // CRBA leaves the placements data.X0 the contacts need; the bias pass
    // of RNEA the velocities and accelerations (its base acceleration −g is
    // taken out by contact_jacobians): no separate kinematics pass.
    unchecked::crba(m, data, qn);
    unchecked::ltdl(m, data);
    for (std::size_t k = 0; k < current.size(); ++k) {
      if (!current[k].active) continue;
      Contact c = current[k].contact;
      refresh_contact(m, data, c);
      act.push_back(c);
      act_track.push_back(static_cast<int>(k));
    }
    const int na = static_cast<int>(act.size());
    // a0 = H⁻¹(τ + τ_passive − C).
    a0 = applied_tau(vv) - unchecked::bias_forces_after_crba(m, data, vv);
    ltdl_solve(m, data, a0);
    if (na > 0) {
      ensure(na);
      contact_jacobians(m, data, act, T.leftCols(na), Tdv.head(na), D.leftCols(2 * na), Ddv.head(2 * na), true);
    }
    // Rows: K (constraint directions), G (force directions), b (velocity products).
    int rows = 0;
    sliding = false;
    for (int a = 0; a < na; ++a) {
      const Tracked& tr = current[act_track[a]];
      K.col(rows) = T.col(a);
      G.col(rows) = T.col(a);
      b(rows) = Tdv(a);
      if (tr.mode == ContactMode::Sliding && tr.mu > 0.0) {
        sliding = true;
        const Vec2 c = sliding_direction(a, vv);
        G.col(rows) -= tr.mu * (c.x() * D.col(2 * a) + c.y() * D.col(2 * a + 1));
      }
      ++rows;
      if (tr.mode != ContactMode::Sliding && tr.mu > 0.0) {
        for (int j = 0; j < 2; ++j) {
          K.col(rows) = D.col(2 * a + j);
          G.col(rows) = D.col(2 * a + j);
          b(rows) = Ddv(2 * a + j);
          ++rows;
        }
      }
    }
    // With Y = L⁻ᵀK (rows of YK here: one per constraint) the system is
    // A λ = −(Kᵀ a0 + K̇ᵀq̇), A = Kᵀ H⁻¹ G = (L⁻ᵀK)ᵀ D⁻¹ (L⁻ᵀG).
    auto Kt = YK.topRows(rows);
    for (int r = 0; r < rows; ++r) Kt.row(r) = K.col(r).transpose();
    auto rhs = b.head(rows);
    rhs = -(Kt * a0 + rhs);
    ltdl_solve_Lt_rows(m, data, Kt);
    const auto Dinv = data.LD.diagonal().cwiseInverse();
    symmetric = !sliding;
    auto Ar = A.topLeftCorner(rows, rows);
    auto Gt = YG.topRows(rows);
    auto Ks = KD.topRows(rows);  // rows of L⁻ᵀK scaled by D⁻¹
    Ks = Kt * Dinv.asDiagonal();
    if (symmetric) {
      Gt = Kt;
    } else {
      for (int r = 0; r < rows; ++r) Gt.row(r) = G.col(r).transpose();
      ltdl_solve_Lt_rows(m, data, Gt);
    }
    // A = Σ_dofs (column of Ks)(column of Gt)ᵀ: rank-one updates over the
    // rows where the column is nonzero (a leg dof: that leg's contacts only).
    Ar.setZero();
    for (int d = 0; d < m.nv(); ++d) {
      const double* u = Ks.col(d).data();
      const double* w = Gt.col(d).data();
      int lo = 0, hi = rows;
      while (lo < hi && u[lo] == 0.0) ++lo;
      while (hi > lo && u[hi - 1] == 0.0) --hi;
      if (lo == hi) continue;
      for (int j = 0; j < rows; ++j) {
        const double wj = w[j];
        if (wj == 0.0) continue;
        double* a = Ar.col(j).data();
        for (int r = lo; r < hi; ++r) a[r] += wj * u[r];
      }
    }
    // Dependent constraints (four corners of a flat face) leave A singular:
    // a tiny regularisation picks the minimum-norm forces, q̈ is unaffected.
    const double delta = 1e-12 * std::max(1e-12, Ar.diagonal().cwiseAbs().maxCoeff());
    Ar.diagonal().array() += delta;
    if (symmetric) {
      llt.compute(Ar);
      lam.head(rows) = llt.solve(rhs);
    } else {
      lu.compute(Ar);
      lam.head(rows) = lu.solve(rhs);
    }
    x.noalias() = Gt.transpose() * lam.head(rows);
    x.array() *= Dinv.array();
    ltdl_solve_L(m, data, x);
    qdd = a0 + x;
    memo.rows = rows;
  }
  bool symmetric = true, sliding = false;
  Eigen::LLT<MatrixX> llt;

  // Contact forces of the memo's evaluation: normal λ and friction per active contact.
  void fill_forces(const VectorX& vv) {
    const int na = static_cast<int>(act.size());
    fn.assign(na, 0.0);
    ft.assign(na, Eigen::Vector2d::Zero());
    int rows = 0;
    for (int a = 0; a < na; ++a) {
      const Tracked& tr = current[act_track[a]];
      fn[a] = lam(rows++);
      if (tr.mode == ContactMode::Sliding && tr.mu > 0.0) {
        ft[a] = -tr.mu * fn[a] * sliding_direction(a, vv);
      } else if (tr.mu > 0.0) {
        ft[a] = Eigen::Vector2d(lam(rows), lam(rows + 1));
        rows += 2;
      }
    }
  }

  using Vec2 = Eigen::Vector2d;

  // Unit sliding direction of active contact a in its (t1, t2) basis (from
  // the two-tangent Jacobian in D); falls back to the recorded direction
  // when the speed vanishes.
  Vec2 sliding_direction(int a, const VectorX& vv) const {
    const Tracked& tr = current[act_track[a]];
    const Vec2 u(D.col(2 * a).dot(vv), D.col(2 * a + 1).dot(vv));
    const double s = u.norm();
    if (!tr.frozen && s > 1e-14) return u / s;
    Vec3 t1, t2;
    tangent_basis(act[a].normal, t1, t2);
    Vec2 c(tr.slide_dir.dot(t1), tr.slide_dir.dot(t2));
    return c.norm() > 0 ? Vec2(c / c.norm()) : Vec2(1, 0);
  }

  // World sliding velocity of active contact a (from the two-tangent Jacobian).
  Vec3 sliding_velocity(int a, const VectorX& vv) const {
    Vec3 t1, t2;
    tangent_basis(act[a].normal, t1, t2);
    return D.col(2 * a).dot(vv) * t1 + D.col(2 * a + 1).dot(vv) * t2;
  }

  // The value of a sliding witness of tracked contact `track` (active slot a).
  double sliding_witness(WitnessKind kind, int track, int a, const VectorX& vv) const {
    const Vec3 u = sliding_velocity(a, vv);
    switch (kind) {
      case WitnessKind::SlideSpeed: return u.dot(current[track].slide_dir);
      case WitnessKind::SlideFreeze: return u.norm() - kSlideFreeze;
      case WitnessKind::SlideRelease: return kSlideFreeze - u.norm();
      default: return 1.0;
    }
  }

  void ensure(int na) {
    const int nv = model().nv();
    if (T.cols() >= na) return;
    const int cap = std::max(na, 2 * static_cast<int>(T.cols()));
    T.resize(nv, cap);
    D.resize(nv, 2 * cap);
    K.resize(nv, 3 * cap);
    G.resize(nv, 3 * cap);
    YK.resize(3 * cap, nv);
    YG.resize(3 * cap, nv);
    KD.resize(3 * cap, nv);
    A.resize(3 * cap, 3 * cap);
    Tdv.resize(cap);
    Ddv.resize(2 * cap);
    b.resize(3 * cap);
    lam.resize(3 * cap);
  }

  // The ODE: ẏ = [G(q) v; q̈].
  void rhs(const VectorX& y, VectorX& dy, double) {
    const Model& m = model();
    ++stats.rhs_evaluations;
    const auto yq = y.head(m.nq());
    const auto yv = y.tail(m.nv());
    dy.resize(y.size());
    configuration_derivative(m, yq, yv, dy.head(m.nq()));
    dynamics(yq, yv, dy.tail(m.nv()), false);
  }

  // ---- witness functions ----------------------------------------------------------
  double witness_value(const Witness& w, const VectorX& qq, const VectorX& vv) {
    switch (w.kind) {
      case WitnessKind::Gap: {
        Contact c = w.candidate ? candidates[w.index] : current[w.index].contact;
        if (c.kind == ContactKind::JointLimit) {
          const double qi = qq(model().joint(model().dof_body(c.dof)).q_index);
          const double lo = model().lower_position_limit()(model().joint(model().dof_body(c.dof)).q_index);
          const double hi = model().upper_position_limit()(model().joint(model().dof_body(c.dof)).q_index);
          return (c.normal.x() > 0 ? qi - lo : hi - qi) + w.offset;
        }
        unchecked::forward_kinematics(model(), data, qq);
        refresh_contact(model(), data, c);
        return c.gap + w.offset;
      }
      case WitnessKind::NormalForce:
      case WitnessKind::ConeMargin:
      case WitnessKind::SlideSpeed:
      case WitnessKind::SlideFreeze:
      case WitnessKind::SlideRelease: {
        dynamics(qq, vv, x_scratch(), true);
        const int a = active_slot(w.index);
        if (a < 0) return 1.0;
        if (w.kind == WitnessKind::NormalForce) return fn[a];
        if (w.kind == WitnessKind::ConeMargin) return current[w.index].mu * fn[a] - ft[a].norm();
        return sliding_witness(w.kind, w.index, a, vv);
      }
    }
    return 1.0;
  }

  VectorX scratch;
  Eigen::Ref<VectorX> x_scratch() {
    scratch.resize(model().nv());
    return scratch;
  }

  int active_slot(int track) const {
    for (std::size_t a = 0; a < act_track.size(); ++a) {
      if (act_track[a] == track) return static_cast<int>(a);
    }
    return -1;
  }

  // New contacts near or inside a surface at the step's end.
  void add_candidate_witnesses(const VectorX& q1) {
    const double look = std::max(10.0 * opt.contact_tolerance, 1e-6);
    unchecked::forward_kinematics(model(), data, q1);
    detector.detect(model(), data, candidates);
    if (opt.joint_limits) detect_joint_limits(model(), q1, look, candidates);
    detected_ids.clear();
    for (const Contact& c : candidates) detected_ids.push_back(c.id);
    std::size_t k = 0;
    for (const Contact& c : candidates) {
      if (tracked_index(c.id) < 0) candidates[k++] = c;
    }
    candidates.resize(k);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      witnesses.push_back({WitnessKind::Gap, static_cast<int>(i), true, 0.0});
    }
  }

  // The witnesses of the tracked (current) contacts.
  void build_witnesses_current() {
    witnesses.clear();
    for (std::size_t i = 0; i < current.size(); ++i) {
      const Tracked& tr = current[i];
      const int idx = static_cast<int>(i);
      if (!tr.active) {
        // Touching but not pushing: an event when it starts to penetrate.
        witnesses.push_back({WitnessKind::Gap, idx, false, opt.contact_tolerance});
        continue;
      }
      if (!is_suppressed(WitnessKind::NormalForce, tr.contact.id)) {
        witnesses.push_back({WitnessKind::NormalForce, idx, false, 0.0});
      }
      if (tr.mu > 0.0 && tr.contact.kind == ContactKind::Shapes) {
        if (tr.mode == ContactMode::Sliding) {
          if (tr.frozen) {
            witnesses.push_back({WitnessKind::SlideSpeed, idx, false, 0.0});
            witnesses.push_back({WitnessKind::SlideRelease, idx, false, 0.0});
          } else {
            witnesses.push_back({WitnessKind::SlideFreeze, idx, false, 0.0});
          }
        } else if (!is_suppressed(WitnessKind::ConeMargin, tr.contact.id)) {
          witnesses.push_back({WitnessKind::ConeMargin, idx, false, 0.0});
        }
      }
    }
  }

  int tracked_index(std::uint64_t id) const {
    for (std::size_t i = 0; i < current.size(); ++i) {
      if (current[i].contact.id == id) return static_cast<int>(i);
    }
    return -1;
  }

  void evaluate_witnesses(const VectorX& y, VectorX& w) {
    const Model& m = model();
    w.resize(static_cast<Eigen::Index>(witnesses.size()));
    for (std::size_t i = 0; i < witnesses.size(); ++i) w(i) = witness_value(witnesses[i], y.head(m.nq()), y.tail(m.nv()));
  }

  // Is a contact (by id) among the detector's contacts at time `time` of the last step?
  bool detected_at(double time, std::uint64_t id) {
    stepper->calc_state(time, ystate);
    unchecked::forward_kinematics(model(), data, ystate.head(model().nq()));
    detector.detect(model(), data, touching);
    for (const Contact& c : touching) {
      if (c.id == id) return true;
    }
    return false;
  }

  double witness_at(std::size_t i, double time) {
    const Model& m = model();
    stepper->calc_state(time, ystate);
    return witness_value(witnesses[i], ystate.head(m.nq()), ystate.tail(m.nv()));
  }
  VectorX ystate;

  // Illinois (modified regula falsi) on [a, b] with f(a) > 0 ≥ f(b).
  double locate(std::size_t i, double a, double fa, double b, double fb) {
    return detail::locate_crossing([&](double t) { return witness_at(i, t); }, a, fa, b, fb, opt.event_time_tolerance);
  }

  // ---- recording -------------------------------------------------------------------
  double energy_of(const VectorX& qq, const VectorX& vv) {
    qn = qq;
    normalize_configuration(model(), qn);
    return mechanical_energy(model(), data, qn, vv);
  }

  double last_sample_time = -kInf;
  void record_sample(double time, const VectorX& qq, const VectorX& vv) {
    if (!rec) return;
    last_sample_time = time;
    VectorX qs = qq;
    normalize_configuration(model(), qs);
    rec->sample(time, qs, vv, energy_of(qs, vv));
    if (current.empty()) return;
    dynamics(qs, vv, x_scratch(), true);
    for (std::size_t a = 0; a < act.size(); ++a) {
      const ContactKinematics ck = contact_kinematics(model(), data, act[a]);
      rec->contact({time, name_of(act[a]), ck.gap, ck.gap_rate, fn[a], ft[a].norm()});
    }
  }

  void record_outputs_until(double until, bool inclusive) {
    if (opt.output_rate <= 0.0) return;
    const double dt_out = 1.0 / opt.output_rate;
    while (next_output < until || (inclusive && next_output <= until)) {
      stepper->calc_state(next_output, ystate);
      const Model& m = model();
      record_sample(next_output, ystate.head(m.nq()), ystate.tail(m.nv()));
      next_output += dt_out;
      // Avoid drift in the output grid.
      next_output = std::round(next_output / dt_out) * dt_out;
    }
  }

  void emit(double time, EventKind kind, const Contact& c, double pre, double post, double impulse) {
    ++stats.events;
    if (rec) {
      rec->event({time, kind, name_of(c), model().body_name(c.body_a), model().body_name(c.body_b), pre, post, impulse});
    }
  }

  // ---- events: Table 11.1 steps 3–6 ---------------------------------------------------
  // At time t with state (q, v): impacts, then the new current and active sets.
  bool handle_contacts(SimulationResult& result) {
    const Model& m = model();
    memo.valid = false;  // the contact solver reuses data and the sets change
    normalize_configuration(m, q);
    detect_all(q, opt.contact_tolerance, touching);
    // Keep tracked contacts that are still touching (by id) with their modes.
    std::vector<Tracked> previous = current;
    // Separation velocities ζ⁻.
    unchecked::forward_kinematics(m, data, q, v);
    const int n = static_cast<int>(touching.size());
    VectorX zeta(n), mu(n), e(n);
    for (int i = 0; i < n; ++i) {
      zeta(i) = contact_kinematics(m, data, touching[i]).gap_rate;
      parameters_of(touching[i], mu(i), e(i));
    }
    // Impacts (step 4): approaching contacts need an impulse.
    bool impact = false;
    for (int i = 0; i < n; ++i) impact |= zeta(i) < -opt.velocity_tolerance;
    if (impact) {
      VectorX e_eff = e;
      bool zeno = false;
      for (int i = 0; i < n; ++i) {
        if (zeta(i) < 0.0 && -zeta(i) < opt.zeno_speed) {
          e_eff(i) = 0.0;
          zeno |= zeta(i) < -opt.velocity_tolerance;
        }
      }
      ImpactOptions io;
      io.friction = mu.size() > 0 && mu.maxCoeff() > 0.0 ? FrictionModel::PolyhedralCone : FrictionModel::None;
      io.cone_directions = opt.cone_directions;
      const ImpactSolution& s = solver.impact(m, data, q, v, touching, e_eff, mu, io);
      ++stats.lcp_solves;
      ++stats.impacts;
      if (s.status != ContactStatus::Solved) {
        if (s.status != ContactStatus::Infeasible && opt.fallback_duration > 0.0) fallback_reason = "impact: " + s.message;
        return fail(result, SimulationStatus::ContactFailure, "impact at t = " + fmt(t) + ": " + s.message);
      }
      for (int i = 0; i < n; ++i) {
        if (s.impulse(i) > 0.0 || zeta(i) < -opt.velocity_tolerance) {
          // A slow approach made plastic (Zeno); resting contacts that share
          // the impulse take part in the impact.
          const bool plastic_rest = zeta(i) < -opt.velocity_tolerance && -zeta(i) < opt.zeno_speed;
          emit(t, plastic_rest ? EventKind::ZenoRest : EventKind::Impact, touching[i], zeta(i), s.zeta_plus(i), s.impulse(i));
        }
      }
      (void)zeno;
      v = s.v_plus;
      unchecked::forward_kinematics(m, data, q, v);
      for (int i = 0; i < n; ++i) zeta(i) = contact_kinematics(m, data, touching[i]).gap_rate;
    }
    // Resting contacts: the force LCP (11.42) decides the current and active sets (step 6).
    std::vector<Contact> resting;
    std::vector<int> from;
    for (int i = 0; i < n; ++i) {
      const bool is_held = zeta(i) < opt.zeno_speed &&
                           std::find(held.begin(), held.end(), touching[i].id) != held.end();
      if (zeta(i) <= opt.velocity_tolerance || is_held) {
        resting.push_back(touching[i]);
        from.push_back(i);
      }
    }
    current.clear();
    if (!resting.empty()) {
      const int nr = static_cast<int>(resting.size());
      VectorX mur(nr);
      for (int k = 0; k < nr; ++k) mur(k) = mu(from[k]);
      ContactSolveOptions so;
      so.friction = mur.maxCoeff() > 0.0 ? FrictionModel::PolyhedralCone : FrictionModel::None;
      so.cone_directions = opt.cone_directions;
      so.slip_velocity = opt.slip_velocity;
      const ContactSolution& s = solver.solve(m, data, q, v, tau + passive(), resting, mur, so);
      ++stats.lcp_solves;
      if (s.status != ContactStatus::Solved) {
        if (s.status != ContactStatus::Infeasible && opt.fallback_duration > 0.0) fallback_reason = "contact forces: " + s.message;
        return fail(result, SimulationStatus::ContactFailure, "contact forces at t = " + fmt(t) + ": " + s.message);
      }
      const double fscale = std::max(1e-12, s.lambda.cwiseAbs().maxCoeff());
      for (int k = 0; k < nr; ++k) {
        Tracked tr;
        tr.contact = resting[k];
        tr.mu = mur(k);
        tr.restitution = e(from[k]);
        // Active: λ basic in the LCP's solution (independent normals) and
        // positive; dependent touching contacts stay current but inactive.
        tr.active = std::find(s.active.begin(), s.active.end(), k) != s.active.end() && s.lambda(k) > 1e-12 * fscale;
        tr.mode = s.mode[k];
        if (s.mode[k] == ContactMode::Separating) tr.active = false;
        if (tr.mode == ContactMode::Sliding || tr.mode == ContactMode::Slipping) {
          // Slide along the current sliding velocity, or (starting from
          // rest) against the friction force.
          const ContactKinematics ck = contact_kinematics(m, data, resting[k]);
          Vec3 u = ck.velocity_b - ck.velocity_a;
          u -= u.dot(ck.normal) * ck.normal;
          tr.frozen = u.norm() <= kSlideFreeze;
          if (u.norm() > opt.slip_velocity) {
            tr.slide_dir = u.normalized();
          } else {
            // Starting to slip from rest: along the tangential acceleration
            // the LCP found (or, failing that, against the friction force).
            Vec3 t1, t2;
            tangent_basis(ck.normal, t1, t2);
            const Vec3 f = s.friction(0, k) * t1 + s.friction(1, k) * t2;
            const Vec3 a_t = tangential_acceleration(resting[k], s.ddq);
            if (a_t.norm() > 0.0) {
              tr.slide_dir = a_t.normalized();
            } else {
              tr.slide_dir = f.norm() > 0 ? Vec3(-f.normalized()) : t1;
            }
          }
          tr.mode = ContactMode::Sliding;
        } else {
          tr.mode = ContactMode::Sticking;
        }
        if (tr.mu <= 0.0 || tr.contact.kind == ContactKind::JointLimit) tr.mode = ContactMode::Sticking;
        current.push_back(tr);
      }
    }
    // Report what changed: losses, gains without impact, stick/slip switches.
    for (const Tracked& old : previous) {
      const int k = tracked_index(old.contact.id);
      if (old.active && (k < 0 || !current[k].active)) emit(t, EventKind::ContactLoss, old.contact, 0, 0, 0);
      if (k >= 0 && old.active && current[k].active && old.mode != current[k].mode) {
        emit(t, current[k].mode == ContactMode::Sliding ? EventKind::Slip : EventKind::Stick, old.contact, 0, 0, 0);
      }
    }
    if (!impact) {
      for (const Tracked& now : current) {
        bool known = false;
        for (const Tracked& old : previous) known |= old.contact.id == now.contact.id && old.active;
        if (!known && now.active) emit(t, EventKind::ContactGain, now.contact, 0, 0, 0);
      }
    }
    held.clear();
    refresh_view();
    return true;
  }

  // ---- fallback: velocity-level steps where the force LCP is left unsolved ----------
  // Lemke can fail on the acceleration-level frictional LCP without proving
  // that no forces exist: dependent contacts (a trunk's coplanar corners, a
  // foot on a joint limit) make its data only numerically orthogonal to the
  // matrix's null directions. The velocity-level problem of a
  // Stewart–Trinkle step has data exactly orthogonal to them and is always
  // solved. For SimulationOptions::fallback_duration the run advances by
  // such steps (fallback_step long, semi-implicit: v⁺ from the impulse LCP,
  // then q += h v⁺), after which the event-driven integration resumes.
  std::string fallback_reason;  // non-empty: handle_contacts asks for a fallback
  bool contacts_pending = false;  // a fallback ended at `until`: sets still to solve
  std::optional<ContactDetector> wide;  // detects gaps up to kFallbackMargin

  // handle_contacts; where its LCP is left unsolved and fallbacks are on,
  // fallback windows until it succeeds (or `until` is reached).
  bool resolve_contacts(SimulationResult& result, double until) {
    contacts_pending = false;
    for (;;) {
      fallback_reason.clear();
      if (handle_contacts(result)) return true;
      if (fallback_reason.empty() || !window(result, until)) return false;
      if (contacts_pending) return true;
    }
  }

  // A failure the fallback can get past (fallback_reason set by the failing
  // site): a window, then the contact sets at the new state; false when
  // fallbacks are off or the rescue itself fails (the status in result).
  bool rescue(SimulationResult& result, double until) {
    if (fallback_reason.empty() || opt.fallback_duration <= 0.0 || !window(result, until)) return false;
    return contacts_pending || resolve_contacts(result, until);
  }

  // One fallback window from a clean result; a window that reaches `until`
  // leaves the contact sets to the next run_until (contacts_pending).
  bool window(SimulationResult& result, double until) {
    result = SimulationResult{};
    if (!fallback_window(result, until)) return false;
    if (t >= until) {
      contacts_pending = true;
      current.clear();
      refresh_view();
    }
    return true;
  }

  // After a rescue inside the main loop: a fresh start of the integration.
  bool resume_after_rescue(SimulationResult& result) {
    suppressed.clear();
    tiny_steps = 0;
    events_at_same_time = 0;
    if (next_sample <= t && !sample_controller(result)) return false;
    record_sample_if_event(last_sample_time != t);
    restart_stepper(opt.initial_step);
    return true;
  }

  bool fallback_window(SimulationResult& result, double until) {
    const Model& m = model();
    const double t_end = std::min(until, t + opt.fallback_duration);
    ++stats.fallbacks;
    memo.valid = false;
    held.clear();
    suppressed.clear();
    if (!wide) {
      DetectionOptions d = detection_options(world, opt);
      d.margin = kFallbackMargin;
      wide.emplace(m, world.environment(), d);
    }
    // Which contacts the window starts from, and why.
    normalize_configuration(m, q);
    detect_all(q, opt.contact_tolerance, touching);
    for (const Contact& c : touching) emit(t, EventKind::Fallback, c, 0.0, 0.0, 0.0);
    const std::string why = fallback_reason;
    fallback_reason.clear();
    fallback_log.push_back("t = " + fmt(t) + ": " + why);
    std::vector<Contact> near;
    VectorX mu, e, gaps, tau_all(m.nv()), vminus(m.nv());
    const double t_start = t;
    auto record_due = [&] {
      if (!rec || opt.output_rate <= 0.0 || next_output > t) return;
      record_sample(t, q, v);
      next_output = std::round((next_output + 1.0 / opt.output_rate) * opt.output_rate) / opt.output_rate;
    };
    while (t < t_end) {
      if (next_sample <= t && !sample_controller(result)) return false;
      record_due();
      double h = std::min({opt.fallback_step, t_end - t, next_sample - t});
      if (rec && opt.output_rate > 0.0) h = std::min(h, next_output - t);
      if (t_end - (t + h) < 1e-9 * opt.fallback_step) h = t_end - t;  // no sliver at the end
      // Contacts within reach: every gap below kFallbackMargin (the LCP lets
      // each close by at most its gap).
      unchecked::forward_kinematics(m, data, q);
      wide->detect(m, data, near);
      if (opt.joint_limits) detect_joint_limits(m, q, kFallbackMargin, near);
      const int n = static_cast<int>(near.size());
      mu.resize(n);
      e = VectorX::Zero(n);
      gaps.resize(n);
      double unused = 0.0;
      for (int i = 0; i < n; ++i) {
        parameters_of(near[i], mu(i), unused);
        gaps(i) = near[i].gap;
        stats.max_penetration = std::max(stats.max_penetration, -near[i].gap);
      }
      tau_all = tau + passive();
      vminus = v + h * unchecked::aba(m, data, q, v, tau_all);
      if (n > 0) {
        ImpactOptions io;
        io.friction = mu.maxCoeff() > 0.0 ? FrictionModel::PolyhedralCone : FrictionModel::None;
        io.cone_directions = opt.cone_directions;
        io.time_step = h;
        io.gaps = gaps;
        // Rigid first; where dependent contacts defeat Lemke even here, a
        // growing compliance (their impulses in least-squares share).
        const ImpactSolution* sp = nullptr;
        for (const double compliance : {0.0, 1e-6, 1e-4, 1e-2}) {
          io.compliance = compliance;
          sp = &solver.impact(m, data, q, vminus, near, e, mu, io);
          ++stats.lcp_solves;
          if (sp->status == ContactStatus::Solved) break;
        }
        const ImpactSolution& s = *sp;
        if (s.status != ContactStatus::Solved) {
          return fail(result, SimulationStatus::ContactFailure,
                      "velocity-level fallback step at t = " + fmt(t) + ": " + s.message + " (after " + why + ")");
        }
        vminus = s.v_plus;
      }
      v = vminus;
      q = integrate(m, q, v, h);
      normalize_configuration(m, q);
      t = (t_end - (t + h) <= 0.0) ? t_end : t + h;
      ++stats.steps;
      if (!q.allFinite() || !v.allFinite()) {
        return fail(result, SimulationStatus::NonFinite, "the state became non-finite in a fallback step at t ≈ " + fmt(t));
      }
      track_penetration(q);
    }
    record_due();
    stats.fallback_time += t - t_start;
    memo.valid = false;
    return true;
  }
  std::vector<std::string> fallback_log;

  // Tangential relative acceleration of a contact for joint accelerations
  // qdd at the current (q, v): the derivative of u_b − u_a along the tangent
  // plane, from the two-tangent Jacobian and its velocity-product terms.
  Vec3 tangential_acceleration(const Contact& c, const VectorX& qdd) {
    const Model& m = model();
    unchecked::forward_kinematics(m, data, q, v, zero_nv);
    std::vector<Contact> one{c};
    MatrixX Dc(m.nv(), 2);
    VectorX Dcdv(2);
    tangent_jacobian(m, data, one, 2, Dc, Dcdv);
    Vec3 t1, t2;
    tangent_basis(contact_kinematics(m, data, c).normal, t1, t2);
    const Eigen::Vector2d at = Dc.transpose() * qdd + Dcdv;
    return at.x() * t1 + at.y() * t2;
  }

  VectorX passive() const {
    if (!opt.joint_damping) return VectorX::Zero(model().nv());
    return -model().damping().cwiseProduct(v);
  }

  void refresh_view() {
    current_view.clear();
    for (const Tracked& tr : current) current_view.push_back(tr.contact);
  }

  static std::string fmt(double x) {
    std::ostringstream s;
    s.precision(10);
    s << x;
    return s.str();
  }

  bool fail(SimulationResult& result, SimulationStatus status, const std::string& message) {
    result.status = status;
    result.message = message;
    return false;
  }

  // ---- drift projection -----------------------------------------------------------------
  // Moves (q, v) back onto φ = 0, ζ = 0 of the active contacts (and zero
  // sliding velocity of sticking ones) in the metric of H.
  bool project() {
    const Model& m = model();
    if (!drifted()) return false;
    memo.valid = false;
    bool changed = false;
    for (int iteration = 0; iteration < 3; ++iteration) {
      normalize_configuration(m, q);
      dynamics(q, v, x_scratch(), false);
      const int na = static_cast<int>(act.size());
      if (na == 0) return changed;
      double worst = 0.0;
      VectorX phi(na);
      for (int a = 0; a < na; ++a) {
        phi(a) = act[a].gap;
        worst = std::max(worst, std::abs(phi(a)));
      }
      if (worst <= opt.drift_tolerance) break;
      // δ = −H⁻¹T (TᵀH⁻¹T)⁻¹ φ
      auto Ta = T.leftCols(na);
      MatrixX Y = Ta;
      ltdl_solve_Lt(m, data, Y);
      MatrixX Ma = Y.transpose() * data.LD.diagonal().cwiseInverse().asDiagonal() * Y;
      Ma.diagonal().array() += 1e-12 * std::max(1e-12, Ma.diagonal().maxCoeff());
      const VectorX mult = Ma.partialPivLu().solve(-phi);
      VectorX delta = Ta * mult;
      ltdl_solve(m, data, delta);
      q = integrate(m, q, delta, 1.0);
      changed = true;
    }
    // Velocities: remove the constraint-violating components.
    dynamics(q, v, x_scratch(), false);
    const int na = static_cast<int>(act.size());
    int rows = 0;
    for (int a = 0; a < na; ++a) {
      const Tracked& tr = current[act_track[a]];
      K.col(rows++) = T.col(a);
      if (tr.mode != ContactMode::Sliding && tr.mu > 0.0) {
        K.col(rows++) = D.col(2 * a);
        K.col(rows++) = D.col(2 * a + 1);
      }
    }
    if (rows > 0) {
      auto Kr = K.leftCols(rows);
      const VectorX err = Kr.transpose() * v;
      if (err.cwiseAbs().maxCoeff() > 0.1 * opt.velocity_tolerance) {
        MatrixX Y = Kr;
        ltdl_solve_Lt(m, data, Y);
        MatrixX Ma = Y.transpose() * data.LD.diagonal().cwiseInverse().asDiagonal() * Y;
        Ma.diagonal().array() += 1e-12 * std::max(1e-12, Ma.diagonal().maxCoeff());
        VectorX dv = Kr * Ma.partialPivLu().solve(-err);
        ltdl_solve(m, data, dv);
        v += dv;
        changed = true;
      }
    }
    if (changed) ++stats.projections;
    return changed;
  }

  // Cheap check before any projection: gaps and normal (and, for sticking
  // contacts, tangential) velocities of the active contacts.
  bool drifted() {
    const Model& m = model();
    bool any = false;
    for (const Tracked& tr : current) any |= tr.active;
    if (!any) return false;
    qn = q;
    normalize_configuration(m, qn);
    unchecked::forward_kinematics(m, data, qn, v);
    for (const Tracked& tr : current) {
      if (!tr.active) continue;
      Contact c = tr.contact;
      if (c.kind == ContactKind::Shapes) refresh_contact(m, data, c);
      const ContactKinematics ck = contact_kinematics(m, data, c);
      if (std::abs(ck.gap) > opt.drift_tolerance || std::abs(ck.gap_rate) > 0.1 * opt.velocity_tolerance) return true;
      if (tr.mu > 0.0 && tr.mode != ContactMode::Sliding && c.kind == ContactKind::Shapes) {
        Vec3 u = ck.velocity_b - ck.velocity_a;
        u -= u.dot(ck.normal) * ck.normal;
        if (u.norm() > 0.1 * opt.velocity_tolerance) return true;
      }
    }
    return false;
  }

  void restart_stepper(double dt) {
    const Model& m = model();
    VectorX y(m.nq() + m.nv());
    y << q, v;
    double h = std::clamp(dt, opt.min_step, opt.max_step);
    if (next_sample > t) h = std::min(h, next_sample - t);  // land on the controller's next sample
    stepper->initialize(y, t, h);
    rhs_fn = [this](const VectorX& yy, VectorX& dy, double tt) { rhs(yy, dy, tt); };
  }
  std::function<void(const VectorX&, VectorX&, double)> rhs_fn;

  void track_penetration(const VectorX& qq) {
    unchecked::forward_kinematics(model(), data, qq);
    detector.detect(model(), data, touching);
    for (const Contact& c : touching) stats.max_penetration = std::max(stats.max_penetration, -c.gap);
  }

  // Samples the controller; false (with the reason in result) when its
  // output is unusable.
  bool sample_controller(SimulationResult& result) {
    if (!controller) return true;
    VectorX qs = q;
    normalize_configuration(model(), qs);
    controller(t, qs, v, tau);
    next_sample = t + period;
    if (tau.size() != model().nv()) {
      return fail(result, SimulationStatus::Failed,
                  "the controller returned " + std::to_string(tau.size()) + " torques at t = " + fmt(t) + ", expected nv = " +
                      std::to_string(model().nv()));
    }
    for (Eigen::Index i = 0; i < tau.size(); ++i) {
      if (!std::isfinite(tau(i))) {
        return fail(result, SimulationStatus::NonFinite,
                    "the controller returned tau[" + std::to_string(i) + "] = " + fmt(tau(i)) + " at t = " + fmt(t));
      }
    }
    if (opt.torque_limits) tau = tau.cwiseMax(-model().effort_limit()).cwiseMin(model().effort_limit());
    return true;
  }

  // ---- the main loop (Table 11.1) --------------------------------------------------------------
  SimulationResult run_until(double until, Recorder* recorder) {
    const auto wall0 = std::chrono::steady_clock::now();
    SimulationResult result;
    rec = recorder;
    const Model& m = model();
    if (!initialised) {
      stats.energy_start = energy_of(q, v);
      next_output = t;
      if (!sample_controller(result)) return finish(result, wall0);
      if (!resolve_contacts(result, until)) return finish(result, wall0);
      initialised = true;
    } else if (contacts_pending && t < until) {
      if (!resolve_contacts(result, until)) return finish(result, wall0);
    }
    if (rec && opt.output_rate > 0 && next_output <= t) {
      record_sample(t, q, v);
      next_output = t + 1.0 / opt.output_rate;
    }
    double dt = opt.initial_step;
    restart_stepper(dt);
    const long step_cap = stats.steps + opt.max_steps;
    VectorX y0(m.nq() + m.nv());
    while (t < until) {
      if (stats.steps >= step_cap) return fail_and_finish(result, SimulationStatus::StepLimit, "more than max_steps = " + std::to_string(opt.max_steps) + " steps at t = " + fmt(t), wall0);
      y0 << q, v;
      // The witnesses of the current contacts at the step's start, while the
      // last dynamics evaluation (the memo) is still this state.
      build_witnesses_current();
      evaluate_witnesses(y0, w0);
      double t0, t1;
      try {
        const auto span = stepper->do_step(rhs_fn);
        t0 = span.first;
        t1 = span.second;
      } catch (const std::exception& e) {
        return fail_and_finish(result, SimulationStatus::StepUnderflow,
                               "the integrator could not take a step at t = " + fmt(t) + ": " + e.what(), wall0);
      }
      ++stats.steps;
      // A run whose time stops advancing (steps far below every event and
      // output scale, step after step) ends instead of crawling forever.
      if (t1 - t0 < 1e3 * opt.min_step) {
        if (++tiny_steps > 10000) {
          if (!current.empty()) {
            fallback_reason = "10000 steps shorter than " + fmt(1e3 * opt.min_step) + " s in a row" + contact_summary();
            if (rescue(result, until)) {
              if (!resume_after_rescue(result)) return finish(result, wall0);
              continue;
            }
            if (result.status != SimulationStatus::Finished) return finish(result, wall0);
          }
          return fail_and_finish(result, SimulationStatus::StepUnderflow,
                                 "10000 steps shorter than " + fmt(1e3 * opt.min_step) + " s in a row at t = " + fmt(t0) +
                                     contact_summary(),
                                 wall0);
        }
      } else {
        tiny_steps = 0;
      }
      const VectorX& y1 = stepper->current_state();
      if (!y1.allFinite()) {
        return fail_and_finish(result, SimulationStatus::NonFinite, "the state became non-finite at t ≈ " + fmt(t1) + contact_summary(), wall0);
      }
      if (t1 - t0 < opt.min_step && t1 < until) {
        if (!current.empty()) {
          fallback_reason = "the step fell to " + fmt(t1 - t0) + " s (below min_step)" + contact_summary();
          if (rescue(result, until)) {
            if (!resume_after_rescue(result)) return finish(result, wall0);
            continue;
          }
          if (result.status != SimulationStatus::Finished) return finish(result, wall0);
        }
        return fail_and_finish(result, SimulationStatus::StepUnderflow,
                               "the step fell to " + fmt(t1 - t0) + " s (below min_step) at t = " + fmt(t0) + contact_summary(), wall0);
      }
      // Witnesses at both ends of the step; the earliest crossing wins.
      // Then the contacts found near a surface at the step's end.
      const std::size_t n_current = witnesses.size();
      add_candidate_witnesses(y1.head(m.nq()));
      VectorX y1c = y1;
      evaluate_witnesses(y1c, w1);  // the memo holds the step's end (FSAL)
      if (witnesses.size() > n_current) {
        w0.conservativeResize(static_cast<Eigen::Index>(witnesses.size()));
        for (std::size_t i = n_current; i < witnesses.size(); ++i) {
          w0(i) = witness_value(witnesses[i], y0.head(m.nq()), y0.tail(m.nv()));
        }
      }
      double t_event = kInf;
      int event_witness = -1;  // −1: a contact event; ≥ 0 may be an internal slide switch
      // The earliest event wins; at equal times a contact event (which
      // re-solves every mode) takes precedence over an internal slide switch.
      auto take_event = [&](double te, int wi) {
        if (te < t_event || (te == t_event && !is_slide_switch(wi))) {
          t_event = te;
          event_witness = wi;
        }
      };
      for (std::size_t i = 0; i < witnesses.size(); ++i) {
        double a = t0, fa = w0(i), b = t1, fb = w1(i);
        if (witnesses[i].kind == WitnessKind::Gap && witnesses[i].candidate && fa < opt.contact_tolerance) {
          // A contact touching at the step's start but not current: one just
          // released by an impact, separating. Its gap opens first; bracket
          // its return to where it started (zero, or the small penetration
          // it started with) from a point where it is open.
          const double base = std::min(fa, 0.0);
          if (fb > base) continue;
          witnesses[i].offset = -base;
          fa -= base;
          fb -= base;
          bool open = false;
          for (double delta = 0.5 * (t1 - t0); delta > opt.event_time_tolerance; delta *= 0.5) {
            const double fs = witness_at(i, t0 + delta);
            if (fs > 0.0) {
              a = t0 + delta;
              fa = fs;
              open = true;
              break;
            }
          }
          // Never opened: it leaves so slowly (ζ̇ just above the velocity
          // tolerance) that it is pulled back before its gap exceeds zero.
          // It rests: handle it now as a resting contact.
          if (!open) {
            held.push_back(candidates[witnesses[i].index].id);
            take_event(t0, -1);
            continue;
          }
        }
        if (fa <= 0.0) {
          // Already past the surface at the start (found late): handle it now.
          if (witnesses[i].kind == WitnessKind::Gap && fb <= 0.0) take_event(t0, -1);
          // A normal force or a friction cone violated at the start: a jump
          // of τ at a controller sample did it; re-solve the sets now.
          if ((witnesses[i].kind == WitnessKind::NormalForce || witnesses[i].kind == WitnessKind::ConeMargin) &&
              fa < -1e-9 * force_scale(w0)) {
            take_event(t0, static_cast<int>(i));
          }
          // A sliding contact already past its freeze or release speed
          // (it crossed at the instant another event was handled): switch now.
          if (is_slide_switch(static_cast<int>(i)) && fa < -kSlideBand) take_event(t0, static_cast<int>(i));
          continue;
        }
        if (fb > 0.0) {
          // Guard against two crossings in one step: sample inside where
          // the witness comes close to zero.
          if (fb < 0.5 * std::abs(fa - fb) || fb < 0.1 * fa) {
            for (int s = 1; s <= 3; ++s) {
              const double ts = t0 + (t1 - t0) * s / 4.0;
              const double fs = witness_at(i, ts);
              if (fs <= 0.0) {
                b = ts;
                fb = fs;
                break;
              }
              a = ts;
              fa = fs;
            }
          }
          if (fb > 0.0) continue;
        }
        const double located = locate(i, a, fa, b, fb);
        take_event(located, static_cast<int>(i));
      }
      // Geometric loss: an active contact whose feature is no longer found
      // (a sphere rolled past a box edge). Bisect on the dense output for
      // the instant the detector stops reporting it.
      for (const Tracked& tr : current) {
        if (!tr.active || tr.contact.kind != ContactKind::Shapes) continue;
        if (std::find(detected_ids.begin(), detected_ids.end(), tr.contact.id) != detected_ids.end()) continue;
        double a = t0, b = t1;
        while (b - a > opt.event_time_tolerance) {
          const double c = 0.5 * (a + b);
          (detected_at(c, tr.contact.id) ? a : b) = c;
        }
        take_event(b, -1);
      }
      const double t_next = std::min({t_event, next_sample, until});
      if (t_next < t1) {
        record_outputs_until(t_next, false);
        stepper->calc_state(t_next, ystate);
        q = ystate.head(m.nq());
        v = ystate.tail(m.nv());
        t = t_next;
        if (t_event <= t_next) {
          const bool internal = is_slide_switch(event_witness);
          if (!register_event(result)) {
            if (!rescue(result, until) || !resume_after_rescue(result)) return finish(result, wall0);
            continue;
          }
          if (internal) {
            switch_slide_mode(witnesses[event_witness]);
          } else {
            const std::vector<Tracked> before = current;
            const long fallbacks_before = stats.fallbacks;
            if (!resolve_contacts(result, until)) return finish(result, wall0);
            if (stats.fallbacks != fallbacks_before) {
              suppressed.clear();
              if (next_sample <= t && !sample_controller(result)) return finish(result, wall0);
              record_sample_if_event(last_sample_time != t);
              restart_stepper(opt.initial_step);
              continue;
            }
            // A force or cone witness that re-solving did not act on: the
            // LCP found the same sets, so a valid force distribution exists
            // (dependent contacts share their load arbitrarily). Stop watching
            // it until the sets change.
            if (event_witness >= 0 && same_sets(before, current) &&
                (witnesses[event_witness].kind == WitnessKind::NormalForce ||
                 witnesses[event_witness].kind == WitnessKind::ConeMargin)) {
              suppressed.emplace_back(witnesses[event_witness].kind, before[witnesses[event_witness].index].contact.id);
            } else if (!same_sets(before, current)) {
              suppressed.clear();
            }
          }
        }
        if (next_sample <= t && !sample_controller(result)) return finish(result, wall0);
        record_sample_if_event(t_event <= t_next);
        restart_stepper(std::max(opt.min_step, stepper_dt(t0, t1)));
        continue;
      }
      // The whole step is accepted.
      record_outputs_until(t1, true);
      q = y1.head(m.nq());
      v = y1.tail(m.nv());
      t = t1;
      track_penetration(q);
      bool restart = false;
      if (next_sample <= t) {
        if (!sample_controller(result)) return finish(result, wall0);
        restart = true;
      }
      if (!current.empty() && project()) restart = true;
      const double quat_error = quaternion_error();
      if (quat_error > 1e-10) {
        normalize_configuration(m, q);
        restart = true;
      }
      if (restart) restart_stepper(stepper_dt(t0, t1));
    }
    result.status = SimulationStatus::Finished;
    result.message = "finished at t = " + fmt(t);
    return finish(result, wall0);
  }

  // The last state of a run goes into the trajectory too (finished or not).
  void record_final_state() {
    if (!rec || last_sample_time == t) return;
    record_sample(t, q, v);
  }

  // Freezes or releases the friction direction of a sliding contact at the
  // current state (no LCP: the contact keeps sliding).
  bool is_slide_switch(int wi) const {
    return wi >= 0 && (witnesses[wi].kind == WitnessKind::SlideFreeze || witnesses[wi].kind == WitnessKind::SlideRelease);
  }

  void switch_slide_mode(const Witness& w) {
    Tracked& tr = current[w.index];
    memo.valid = false;
    dynamics(q, v, x_scratch(), false);
    const int a = active_slot(w.index);
    if (a < 0) return;
    const Vec3 u = sliding_velocity(a, v);
    if (w.kind == WitnessKind::SlideFreeze) {
      tr.frozen = true;
      if (u.norm() > 0.0) tr.slide_dir = u.normalized();
    } else {
      tr.frozen = false;
    }
    // Contacts that cross the same threshold at this instant (a symmetric
    // robot: both hind feet slow down together) switch with it. Left
    // unswitched, a contact would start the next step already past its
    // witness's zero and slide on with u/|u| through u = 0, where the
    // right-hand side is discontinuous and the step size collapses.
    const double band = kSlideBand;
    for (std::size_t k = 0; k < current.size(); ++k) {
      Tracked& other = current[k];
      if (static_cast<int>(k) == w.index || !other.active || other.mode != ContactMode::Sliding) continue;
      const int b = active_slot(static_cast<int>(k));
      if (b < 0) continue;
      const Vec3 ub = sliding_velocity(b, v);
      if (w.kind == WitnessKind::SlideFreeze && !other.frozen && ub.norm() <= kSlideFreeze + band) {
        other.frozen = true;
        if (ub.norm() > 0.0) other.slide_dir = ub.normalized();
      } else if (w.kind == WitnessKind::SlideRelease && other.frozen && ub.norm() >= kSlideFreeze - band) {
        other.frozen = false;
      }
    }
    memo.valid = false;
  }

  std::vector<std::pair<WitnessKind, std::uint64_t>> suppressed;

  bool is_suppressed(WitnessKind kind, std::uint64_t id) const {
    for (const auto& [k, i] : suppressed) {
      if (k == kind && i == id) return true;
    }
    return false;
  }

  static bool same_sets(const std::vector<Tracked>& a, const std::vector<Tracked>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i].contact.id != b[i].contact.id || a[i].active != b[i].active || a[i].mode != b[i].mode) return false;
    }
    return true;
  }

  // The size of the forces among the witnesses (for relative tolerances).
  double force_scale(const VectorX& w) const {
    double scale = 1.0;
    for (std::size_t i = 0; i < witnesses.size(); ++i) {
      if (witnesses[i].kind == WitnessKind::NormalForce) scale = std::max(scale, std::abs(w(i)));
    }
    return scale;
  }

  double stepper_dt(double t0, double t1) const {
    const double proposed = stepper->current_time_step();
    return std::isfinite(proposed) && proposed > 0 ? proposed : (t1 - t0);
  }

  double quaternion_error() const {
    double worst = 0.0;
    for (int i = 1; i < model().nbodies(); ++i) {
      const Joint& j = model().joint(i);
      if (j.type == JointType::FreeFlyer) worst = std::max(worst, std::abs(q.segment<4>(j.q_index + 3).norm() - 1.0));
    }
    return worst;
  }

  void record_sample_if_event(bool event) {
    if (event && rec) record_sample(t, q, v);
  }

  bool register_event(SimulationResult& result) {
    if (stats.events >= opt.max_events) {
      return fail(result, SimulationStatus::EventLimit, "more than max_events = " + std::to_string(opt.max_events) + " events by t = " + fmt(t) + contact_summary());
    }
    if (t - last_event_time < opt.event_time_tolerance) {
      if (++events_at_same_time > 1000) {
        if (!current.empty()) fallback_reason = "events recurring at one instant (chattering contacts)" + contact_summary();
        return fail(result, SimulationStatus::EventLimit,
                    "events keep recurring at t = " + fmt(t) + " without time advancing (chattering contacts)" + contact_summary());
      }
    } else {
      events_at_same_time = 0;
    }
    last_event_time = t;
    return true;
  }

  std::string contact_summary() const {
    if (current.empty()) return "";
    std::string s = " (contacts: ";
    for (std::size_t i = 0; i < current.size(); ++i) s += (i ? ", " : "") + name_of(current[i].contact);
    return s + ")";
  }

  SimulationResult fail_and_finish(SimulationResult& result, SimulationStatus status, const std::string& message,
                                   std::chrono::steady_clock::time_point wall0) {
    fail(result, status, message);
    return finish(result, wall0);
  }

  SimulationResult finish(SimulationResult& result, std::chrono::steady_clock::time_point wall0) {
    record_final_state();
    if (!fallback_log.empty()) {
      result.message += " (" + std::to_string(fallback_log.size()) + " velocity-level fallback window" +
                        (fallback_log.size() == 1 ? "" : "s") + "; the first at " + fallback_log.front() + ")";
    }
    result.time = t;
    stats.energy_end = energy_of(q, v);
    stats.wall_time += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    result.statistics = stats;
    rec = nullptr;
    return result;
  }

};

namespace {

class EventDriven final : public detail::SchemeRunner {
 public:
  EventDriven(World world, const SimulationOptions& options) : core_(std::move(world), options) {}
  void set_controller(ControllerFunction f, double period) override {
    core_.controller = std::move(f);
    core_.period = period;
    core_.next_sample = core_.t;
  }
  SimulationResult run_until(double until, Recorder* recorder) override { return core_.run_until(until, recorder); }
  double time() const override { return core_.t; }
  const VectorX& q() const override { return core_.q; }
  const VectorX& v() const override { return core_.v; }
  const World& world() const override { return core_.world; }
  const SimulationOptions& options() const override { return core_.opt; }
  const std::vector<Contact>& current_contacts() const override { return core_.current_view; }
  double energy() override { return core_.energy_of(core_.q, core_.v); }
  std::string contact_name(const Contact& c) const override { return core_.name_of(c); }
  const std::vector<std::string>& contact_warnings() const override { return core_.detector.warnings(); }

 private:
  EventDrivenCore core_;
};

}  // namespace

std::unique_ptr<detail::SchemeRunner> detail::make_event_driven(World world, const SimulationOptions& options) {
  return std::make_unique<EventDriven>(std::move(world), options);
}

// ---- Simulator: picks the scheme ----------------------------------------------------

struct Simulator::Impl {
  std::unique_ptr<detail::SchemeRunner> runner;
};

namespace {

// Refuses an initial state that sinks deeper than max_initial_penetration
// into a surface: no scheme can start from it sensibly (the rigid ones
// would resolve metres of overlap with contact LCPs of every buried corner,
// the compliant one with forces of K times metres).
void check_initial_penetration(const World& world, const SimulationOptions& options) {
  const double limit = options.max_initial_penetration;
  using detail::fmt;
  if (!(limit >= 0.0) || std::isnan(limit)) {
    throw ArgumentError("simulation option max_initial_penetration must be >= 0 (got " + fmt(limit) + ")");
  }
  const Model& m = world.model();
  DetectionOptions d;
  d.margin = 0.0;
  d.self_collision = world.self_collision();
  ContactDetector detector(m, world.environment(), d);
  Data data(m);
  VectorX q = world.q0();
  normalize_configuration(m, q);
  unchecked::forward_kinematics(m, data, q);
  std::vector<Contact> contacts;
  detector.detect(m, data, contacts);
  const Contact* deepest = nullptr;
  for (const Contact& c : contacts) {
    if (!deepest || c.gap < deepest->gap) deepest = &c;
  }
  if (deepest && -deepest->gap > limit) {
    throw ArgumentError("the initial state sinks " + detector.shapes()[deepest->shape_b].name + " " + fmt(-deepest->gap) +
                        " m into " + detector.shapes()[deepest->shape_a].name +
                        " (more than max_initial_penetration = " + fmt(limit) +
                        " m): start the model touching or above the surface");
  }
}

}  // namespace

Simulator::Simulator(World world, const SimulationOptions& options) : impl_(std::make_unique<Impl>()) {
  check_initial_penetration(world, options);
  switch (options.scheme) {
    case Scheme::EventDriven: impl_->runner = detail::make_event_driven(std::move(world), options); break;
    case Scheme::Compliant: impl_->runner = detail::make_compliant(std::move(world), options); break;
    case Scheme::TimeStepping: impl_->runner = detail::make_time_stepping(std::move(world), options); break;
  }
}
Simulator::~Simulator() = default;
Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;

void Simulator::set_controller(ControllerFunction controller, double period) {
  if (!(period > 0.0) || !std::isfinite(period)) throw ArgumentError("controller period must be positive and finite");
  impl_->runner->set_controller(std::move(controller), period);
}

SimulationResult Simulator::run(Recorder* recorder) { return impl_->runner->run_until(options().duration, recorder); }

SimulationResult Simulator::run_until(double until, Recorder* recorder) {
  if (!std::isfinite(until)) throw ArgumentError("run_until: the end time must be finite");
  return impl_->runner->run_until(until, recorder);
}

double Simulator::time() const { return impl_->runner->time(); }
const VectorX& Simulator::q() const { return impl_->runner->q(); }
const VectorX& Simulator::v() const { return impl_->runner->v(); }
const World& Simulator::world() const { return impl_->runner->world(); }
const SimulationOptions& Simulator::options() const { return impl_->runner->options(); }
const std::vector<Contact>& Simulator::current_contacts() const { return impl_->runner->current_contacts(); }
double Simulator::energy() const { return impl_->runner->energy(); }
std::string Simulator::contact_name(const Contact& c) const { return impl_->runner->contact_name(c); }
const std::vector<std::string>& Simulator::warnings() const { return impl_->runner->contact_warnings(); }

}  // namespace plume
