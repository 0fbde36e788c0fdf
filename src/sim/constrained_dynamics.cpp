// Table 11.1, step 1: the right-hand side of the event-driven scheme. The
// active contacts are equality constraints (normal rows for every active
// contact, tangential rows for sticking ones; sliding ones push along
// t − μ s); the others are ignored until an event adds them (11.41).
#include <algorithm>
#include <cmath>
#include <functional>

#include "algorithms/crba_placements.hpp"
#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "sim/event_driven.hpp"
#include "algorithms/scalar_loops.hpp"

namespace plume::detail {

namespace {
constexpr int kReducedRows = 36;  // constraint rows from which dynamics_full solves in the nv-space
// A's regularisation δ relative to its largest diagonal entry (dynamics_full).
constexpr double kSymmetricReg = 1e-12;
constexpr double kSlidingReg = 1e-8;
}  // namespace

// The ODE: ẏ = [G(q) v; q̈].
void EventDrivenCore::rhs(const VectorX& y, VectorX& dy, double) {
  const Model& m = model();
  ++stats.rhs_evaluations;
  // q and v into the core's own vectors: dynamics() takes whole vectors,
  // and blocks of y would be copied into temporaries (two allocations).
  yq = y.head(m.nq());
  yv = y.tail(m.nv());
  dy.resize(y.size());
  configuration_derivative(m, yq, yv, dy.head(m.nq()));
  dynamics(yq, yv, dy.tail(m.nv()), false);
}

// q̈ with the active contacts as equalities; contact forces in fn / ft when
// `forces`. The last evaluation is memoised (EventDrivenCore::Memo).
void EventDrivenCore::dynamics(const VectorX& qq, const VectorX& vv, Eigen::Ref<VectorX> qdd, bool forces) {
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

bool EventDrivenCore::same_state(const VectorX& qq, const VectorX& vv) const {
  return memo.valid && qq.size() == memo.q.size() && (qq.array() == memo.q.array()).all() &&
         (vv.array() == memo.v.array()).all();
}

// q̈ and λ for a new τ at the memo's state: Δq̈ = H⁻¹Δτ + H⁻¹G Δλ with
// A Δλ = −Kᵀ H⁻¹ Δτ (the same factorisations).
void EventDrivenCore::correct_for_tau() {
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
  const int rows = memo.rows;
  if (reduced) {
    // Fully constrained: q̈ does not depend on τ; Δλ = −Kᵀ P Δτ (K as the
    // reduced solve left it).
    du = dtau;
    pchol.solve(P, du);
    lam.head(rows).noalias() -= K.leftCols(rows).transpose() * du;
    return;
  }
  fill_constraint_columns(rows);
  du = dtau;
  ltdl_solve(m, data, du);
  dl.resize(rows);
  dl.noalias() = K.leftCols(rows).transpose() * du;
  dl = -dl;
  solve_A(rows, dl);
  lam.head(rows) += dl;
  force_term(dl, x);
  x.array() /= data.LD.diagonal().array();
  ltdl_solve_L(m, data, x);
  memo.qdd += du + x;
}

const VectorX& EventDrivenCore::applied_tau(const VectorX& vv) {
  applied_torque(model(), opt, tau, vv, tau_applied);
  return tau_applied;
}

void EventDrivenCore::dynamics_full(const VectorX& qq, const VectorX& vv, Eigen::Ref<VectorX> qdd) {
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
  // CRBA with placements leaves the data.X0 the contacts need; the bias
  // pass of RNEA the velocities and accelerations (its base acceleration −g
  // is taken out by contact_jacobians): no separate kinematics pass.
  detail::crba_placements(m, data, qn);
  unchecked::ltdl(m, data);
  for (std::size_t k = 0; k < current.size(); ++k) {
    if (!current[k].active) continue;
    Contact c = current[k].contact;
    if (c.kind == ContactKind::JointLimit) {
      c.gap = joint_limit_gap(m, qn, c);  // (drift correction reads it)
    } else {
      refresh_contact(m, data, c);
    }
    act.push_back(c);
    act_track.push_back(static_cast<int>(k));
  }
  const int na = static_cast<int>(act.size());
  // The unconstrained accelerations a0 = H⁻¹(τ + τ_passive − C) = L⁻¹ s
  // with s = D⁻¹L⁻ᵀ(τ + τ_passive − C): s is kept, the rows solve below
  // needs Kᵀa0 = (L⁻ᵀK)ᵀ s and q̈ = L⁻¹(s + D⁻¹(L⁻ᵀG)λ), one L⁻¹ half.
  a0 = applied_tau(vv) - unchecked::bias_forces_after_crba(m, data, vv);
  ltdl_solve_Lt(m, data, a0);
  a0.array() /= data.LD.diagonal().array();
  s0 = a0;
  if (na > 0) {
    ensure(na);
    contact_jacobians(m, data, act, T.leftCols(na), Tdv.head(na), D.leftCols(2 * na), Ddv.head(2 * na), true);
  }
  // Rows: the constraint directions (K's columns: T's normal of every
  // active contact, D's two tangents of a sticking one), b the velocity
  // products; row_src says which column of T or D each row is. The force
  // directions G differ from K only on sliding contacts' normal rows.
  int rows = 0;
  sliding = false;
  for (int a = 0; a < na; ++a) {
    const Tracked& tr = current[act_track[a]];
    row_src[rows] = 3 * a;
    b(rows++) = Tdv(a);
    if (tr.mode == ContactMode::Sliding && tr.mu > 0.0) sliding = true;
    if (tr.mode != ContactMode::Sliding && tr.mu > 0.0) {
      for (int j = 0; j < 2; ++j) {
        row_src[rows] = 3 * a + 1 + j;
        b(rows++) = Ddv(2 * a + j);
      }
    }
  }
  memo.rows = rows;
  // Many more constraint rows than dofs (a stack or pyramid of cubes, each
  // held by its faces' corners: 192 rows on 60 dofs for ten cubes): when K
  // has full rank nv, the constraints fix q̈ = a0 + P K b' by themselves and
  // the minimum-norm forces (the limit of the regularised solve below) are
  // λ = Kᵀ P H (q̈ − a0), P = (KKᵀ)⁻¹: an nv × nv banded factorisation
  // instead of rows × rows. Below kReducedRows the rows solve is as cheap,
  // and small scenes keep their bit-for-bit results.
  reduced = false;
  if (!sliding && rows >= kReducedRows && rows > m.nv()) {
    ltdl_solve_L(m, data, a0);
    fill_constraint_columns(rows);
    rb = -(K.leftCols(rows).transpose() * a0 + b.head(rows));
    P.setZero(m.nv(), m.nv());
    add_column_products(K, rows, nullptr, P);
    if (pchol.factor(P, 1e-6)) {
      x.noalias() = K.leftCols(rows) * rb;
      pchol.solve(P, x);
      z.noalias() = data.H * x;
      pchol.solve(P, z);
      lam.head(rows).noalias() = K.leftCols(rows).transpose() * z;
      qdd = a0 + x;
      symmetric = true;
      reduced = true;
      return;
    }
  }
  // The system A λ = −(Kᵀ a0 + K̇ᵀq̇), A = Kᵀ H⁻¹ G, by contacts: every
  // active contact's three directions (normal, two tangents) go through L⁻ᵀ
  // together (W_a = L⁻ᵀ[t_a d_a1 d_a2], nonzero on the contact's support
  // chain only), Ā = W D⁻¹ Wᵀ is formed by 3 × 3 blocks over the dofs two
  // contacts share, and A's rows and columns are picked from it: a sticking
  // contact's rows are its three directions, a sliding one's normal row has
  // the force direction t − μ(c₁d₁ + c₂d₂), a combination of Ā's columns.
  const int nv = m.nv();
  for (int d = 0; d < nv; ++d) dinv[d] = 1.0 / data.LD(d, d);
  for (int a = 0; a < na; ++a) {
    double* w = contact_W(a);
    const double* t = T.col(a).data();
    const double* d1 = D.col(2 * a).data();
    const double* d2 = D.col(2 * a + 1).data();
    for (int d = 0; d < nv; ++d) {
      w[3 * d] = t[d];
      w[3 * d + 1] = d1[d];
      w[3 * d + 2] = d2[d];
    }
    // The dofs of the two bodies' support chains, descending: the only ones
    // where t, d₁, d₂ and their L⁻ᵀ solves can be nonzero.
    int nc = 0;
    for (int body : {act[a].body_b, act[a].body_a}) {
      for (int i = body; i > 0; i = m.parent(i)) {
        const Joint& j = m.joint(i);
        for (int k = j.nv - 1; k >= 0; --k) chain[nc++] = j.v_index + k;
      }
    }
    if (act[a].body_a > 0 && act[a].body_b > 0) {
      std::sort(chain.begin(), chain.begin() + nc, std::greater<int>());
      nc = static_cast<int>(std::unique(chain.begin(), chain.begin() + nc) - chain.begin());
    }
    solve_Lt3(m, data.LD, chain.data(), nc, w);
    int* sup = contact_support(a);
    int n = 0;
    for (int i = nc - 1; i >= 0; --i) {
      const int d = chain[i];
      if (w[3 * d] != 0.0 || w[3 * d + 1] != 0.0 || w[3 * d + 2] != 0.0) sup[n++] = d;
    }
    support_size[a] = n;
    // Kᵀa0 = (L⁻ᵀK)ᵀ s for the three directions.
    double k0 = 0.0, k1 = 0.0, k2 = 0.0;
    for (int i = 0; i < n; ++i) {
      const int d = sup[i];
      k0 += w[3 * d] * s0[d];
      k1 += w[3 * d + 1] * s0[d];
      k2 += w[3 * d + 2] * s0[d];
    }
    kv[3 * a] = k0;
    kv[3 * a + 1] = k1;
    kv[3 * a + 2] = k2;
    const Tracked& tr = current[act_track[a]];
    slide_c[a] = tr.mode == ContactMode::Sliding && tr.mu > 0.0 ? sliding_direction(a, vv) : Vec2::Zero();
  }
  form_Abar(na);
  auto rhs = b.head(rows);
  for (int r = 0; r < rows; ++r) rhs[r] = -(kv[row_src[r]] + rhs[r]);
  symmetric = !sliding;
  auto Ar = A.topLeftCorner(rows, rows);
  for (int sc = 0; sc < rows; ++sc) {
    const int gs = row_src[sc];
    const int bs = gs / 3;
    const Vec2& c = slide_c[bs];
    const bool combine = gs % 3 == 0 && (c.x() != 0.0 || c.y() != 0.0);
    const double mu = current[act_track[bs]].mu;
    for (int r = symmetric ? sc : 0; r < rows; ++r) {
      const int kr = row_src[r];
      double v = abar(kr, gs);
      if (combine) v -= mu * (c.x() * abar(kr, gs + 1) + c.y() * abar(kr, gs + 2));
      Ar(r, sc) = v;
    }
  }
  // Dependent constraints (four corners of a flat face) leave A singular;
  // A + δI is solved instead (δ relative to A's largest diagonal entry).
  // Symmetric A (no sliding contact): δ → 0 picks the minimum-norm forces,
  // and their ill-determined part, Gλ = 0, does not reach q̈, so δ = 1e-12.
  // Non-symmetric A (a sliding contact): a dependent split of the normal
  // forces also sets the friction μλᵢ along each slide, so it reaches q̈, and
  // A + δI amplifies rounding into it by ‖A‖/δ: at 1e-12 that makes q̈ noisy
  // at 1e-4 relative, which dopri5 at 1e-10 resolves with 1e-6 s steps. So
  // δ = 1e-8 (rounding amplified to ~1e-8), and solve_A removes the bias
  // this leaves on the determined part by one refinement against A itself:
  // the same limit as δ → 0, with an error (δ/σ)² in place of δ/σ.
  reg_delta = (symmetric ? kSymmetricReg : kSlidingReg) * std::max(1e-12, Ar.diagonal().cwiseAbs().maxCoeff());
  Ar.diagonal().array() += reg_delta;
  factor_A(rows);
  lam.head(rows) = rhs;
  solve_A(rows, lam);
  // q̈ = L⁻¹(s + D⁻¹ (L⁻ᵀG)ᵀλ).
  force_term(lam, x);
  for (int d = 0; d < nv; ++d) x[d] = x[d] * dinv[d] + s0[d];
  ltdl_solve_L(m, data, x);
  qdd = x;
}

// (L⁻ᵀG)ᵀ l: each contact's W_a times its direction weights g_a (l's rows
// of that contact; a sliding one's normal row along t − μ(c₁d₁ + c₂d₂)).
void EventDrivenCore::force_term(const VectorX& l, VectorX& out) {
  const int rows = memo.rows;
  out.setZero(model().nv());
  for (int r = 0; r < rows;) {
    const int a = row_src[r] / 3;
    double g[3] = {l[r], 0.0, 0.0};
    ++r;
    if (r < rows && row_src[r] / 3 == a) {  // sticking: its two tangent rows follow
      g[1] = l[r];
      g[2] = l[r + 1];
      r += 2;
    } else {  // sliding (c ≠ 0) or frictionless (c = 0)
      const double mu = current[act_track[a]].mu;
      g[1] = -mu * slide_c[a].x() * g[0];
      g[2] = -mu * slide_c[a].y() * g[0];
    }
    const double* w = contact_W(a);
    const int* sup = contact_support(a);
    for (int i = 0; i < support_size[a]; ++i) {
      const int d = sup[i];
      out[d] += w[3 * d] * g[0] + w[3 * d + 1] * g[1] + w[3 * d + 2] * g[2];
    }
  }
}

namespace {

// w ← L⁻ᵀ w for three right-hand sides stored as w[3d + c], nonzero on the
// dofs `chain` only (descending, closed under ancestors): descendants first,
// each dof's row of L scattered into its ancestors.
PLUME_SCALAR_LOOPS void solve_Lt3_impl(const Model& m, const RowMatrixX& LD, const int* chain, int nc, double* w) {
  for (int c = 0; c < nc; ++c) {
    const int i = chain[c];
    const double x0 = w[3 * i], x1 = w[3 * i + 1], x2 = w[3 * i + 2];
    if (x0 == 0.0 && x1 == 0.0 && x2 == 0.0) continue;
    const double* Li = LD.data() + static_cast<Eigen::Index>(i) * LD.cols();
    for (int e = m.dof_parent(i); e >= 0;) {
      const int s = m.dof_run_start(e);
      for (int j = s; j <= e; ++j) {
        const double l = Li[j];
        double* wj = w + 3 * j;
        wj[0] -= l * x0;
        wj[1] -= l * x1;
        wj[2] -= l * x2;
      }
      e = m.dof_parent(s);
    }
  }
}

}  // namespace

void EventDrivenCore::solve_Lt3(const Model& m, const RowMatrixX& LD, const int* chain, int nc, double* w) {
  solve_Lt3_impl(m, LD, chain, nc, w);
}

// The lower blocks (a ≥ b) of Ā = W D⁻¹ Wᵀ, 3 × 3 per pair of contacts,
// over the dofs both are nonzero on.
void EventDrivenCore::form_Abar(int na) {
  for (int a = 0; a < na; ++a) {
    const double* wa = contact_W(a);
    const int* sup = contact_support(a);
    const int n = support_size[a];
    for (int bb = 0; bb <= a; ++bb) {
      const double* wb = contact_W(bb);
      double B[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};  // B[c][c'] = Ā(3a + c, 3b + c')
      for (int i = 0; i < n; ++i) {
        const int d = sup[i];
        const double* y = wb + 3 * d;
        if (y[0] == 0.0 && y[1] == 0.0 && y[2] == 0.0) continue;
        const double u0 = wa[3 * d] * dinv[d], u1 = wa[3 * d + 1] * dinv[d], u2 = wa[3 * d + 2] * dinv[d];
        if (bb == a) {  // a diagonal block: its lower triangle is the one read (abar)
          B[0][0] += u0 * y[0];
          B[1][0] += u1 * y[0];
          B[1][1] += u1 * y[1];
          B[2][0] += u2 * y[0];
          B[2][1] += u2 * y[1];
          B[2][2] += u2 * y[2];
          continue;
        }
        for (int c = 0; c < 3; ++c) {
          B[0][c] += u0 * y[c];
          B[1][c] += u1 * y[c];
          B[2][c] += u2 * y[c];
        }
      }
      for (int c = 0; c < 3; ++c) {
        for (int c2 = 0; c2 < 3; ++c2) Abar(3 * a + c, 3 * bb + c2) = B[c][c2];
      }
    }
  }
}

namespace {

// In place of the n × n column-major block at a (leading dimension ld), its
// lower Cholesky factor (the lower triangle is read); false if a pivot is
// not positive.
PLUME_SCALAR_LOOPS bool cholesky_lower(double* a, int n, Eigen::Index ld) {
  for (int k = 0; k < n; ++k) {
    double* ck = a + k * ld;
    // Column k minus the earlier columns, four at a time (each entry takes
    // them in order, as one pass per column would).
    int p = 0;
    for (; p + 4 <= k; p += 4) {
      const double *c0 = a + p * ld, *c1 = c0 + ld, *c2 = c1 + ld, *c3 = c2 + ld;
      const double l0 = c0[k], l1 = c1[k], l2 = c2[k], l3 = c3[k];
      for (int i = k; i < n; ++i) ck[i] = (((ck[i] - l0 * c0[i]) - l1 * c1[i]) - l2 * c2[i]) - l3 * c3[i];
    }
    for (; p < k; ++p) {
      const double* cp = a + p * ld;
      const double lkp = cp[k];
      for (int i = k; i < n; ++i) ck[i] -= lkp * cp[i];
    }
    if (!(ck[k] > 0.0)) return false;
    const double d = std::sqrt(ck[k]);
    ck[k] = d;
    const double inv = 1.0 / d;
    for (int i = k + 1; i < n; ++i) ck[i] *= inv;
  }
  return true;
}

// x ← (L Lᵀ)⁻¹ x with the factor of cholesky_lower().
PLUME_SCALAR_LOOPS void cholesky_solve(const double* l, int n, Eigen::Index ld, double* x) {
  for (int k = 0; k < n; ++k) {
    const double* ck = l + k * ld;
    const double xk = x[k] / ck[k];
    x[k] = xk;
    for (int i = k + 1; i < n; ++i) x[i] -= ck[i] * xk;
  }
  for (int k = n - 1; k >= 0; --k) {
    const double* ck = l + k * ld;
    double sum = x[k];
    for (int i = k + 1; i < n; ++i) sum -= ck[i] * x[i];
    x[k] = sum / ck[k];
  }
}

}  // namespace

// The factorisation of A (rows × rows, in A): Cholesky when it is symmetric
// (its lower triangle, in Lc), else (or if a pivot is not positive) LU.
void EventDrivenCore::factor_A(int rows) {
  auto Ar = A.topLeftCorner(rows, rows);
  use_lu = !symmetric;
  if (symmetric) {
    if (Lc.rows() < rows) Lc.resize(A.rows(), A.cols());
    Lc.topLeftCorner(rows, rows).triangularView<Eigen::Lower>() = Ar;
    use_lu = !cholesky_lower(Lc.data(), rows, Lc.outerStride());
    // Only the lower triangle was formed: mirror it for LU.
    if (use_lu) Ar.triangularView<Eigen::StrictlyUpper>() = Ar.transpose();
  }
  if (use_lu) lu.compute(Ar);
}

// rhs ← A⁻¹ rhs on its first `rows` entries, with factor_A's factors (of
// A + δI). Non-symmetric A: x₀ = (A + δI)⁻¹r, then x₁ = x₀ + (A + δI)⁻¹(r − A x₀),
// A x₀ = (A + δI)x₀ − δx₀ from the matrix factor_A left in A.
void EventDrivenCore::solve_A(int rows, VectorX& rhs) {
  if (use_lu && !symmetric) {
    auto r = refine.head(rows);
    r = rhs.head(rows);
    rhs.head(rows) = lu.solve(rhs.head(rows));
    r.noalias() -= A.topLeftCorner(rows, rows) * rhs.head(rows);
    r += reg_delta * rhs.head(rows);
    r = lu.solve(r);
    rhs.head(rows) += r;
  } else if (use_lu) {
    rhs.head(rows) = lu.solve(rhs.head(rows));
  } else {
    cholesky_solve(Lc.data(), rows, Lc.outerStride(), rhs.data());
  }
}

// Column of T (code 3a) or D (3a + 1 + j) that constraint row r is.
const double* EventDrivenCore::constraint_column(int code) const {
  const int a = code / 3, j = code % 3;
  return j == 0 ? T.col(a).data() : D.col(2 * a + j - 1).data();
}

// K's columns (constraint directions) of the memo's rows.
void EventDrivenCore::fill_constraint_columns(int rows) {
  const int nv = model().nv();
  for (int r = 0; r < rows; ++r) K.col(r) = Eigen::Map<const VectorX>(constraint_column(row_src[r]), nv);
}

// Contact forces of the memo's evaluation: normal λ and friction per active contact.
void EventDrivenCore::fill_forces(const VectorX& vv) {
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

// Unit sliding direction of active contact a in its (t1, t2) basis (from
// the two-tangent Jacobian in D); falls back to the recorded direction
// when the speed vanishes.
EventDrivenCore::Vec2 EventDrivenCore::sliding_direction(int a, const VectorX& vv) const {
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
Vec3 EventDrivenCore::sliding_velocity(int a, const VectorX& vv) const {
  Vec3 t1, t2;
  tangent_basis(act[a].normal, t1, t2);
  return D.col(2 * a).dot(vv) * t1 + D.col(2 * a + 1).dot(vv) * t2;
}

void EventDrivenCore::ensure(int na) {
  const int nv = model().nv();
  if (T.cols() >= na) return;
  const int cap = std::max(na, 2 * static_cast<int>(T.cols()));
  T.resize(nv, cap);
  D.resize(nv, 2 * cap);
  K.resize(nv, 3 * cap);
  Wc.resize(3 * nv * cap);
  sup_idx.resize(static_cast<std::size_t>(nv) * cap);
  chain.resize(2 * static_cast<std::size_t>(nv));
  support_size.resize(cap);
  slide_c.resize(cap);
  kv.resize(3 * cap);
  Abar.resize(3 * cap, 3 * cap);
  dinv.resize(nv);
  A.resize(3 * cap, 3 * cap);
  row_src.resize(3 * cap);
  Tdv.resize(cap);
  Ddv.resize(2 * cap);
  b.resize(3 * cap);
  lam.resize(3 * cap);
  refine.resize(3 * cap);
}

Eigen::Ref<VectorX> EventDrivenCore::x_scratch() {
  scratch.resize(model().nv());
  return scratch;
}

int EventDrivenCore::active_slot(int track) const {
  for (std::size_t a = 0; a < act_track.size(); ++a) {
    if (act_track[a] == track) return static_cast<int>(a);
  }
  return -1;
}

}  // namespace plume::detail
