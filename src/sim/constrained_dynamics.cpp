// Table 11.1, step 1: the right-hand side of the event-driven scheme. The
// active contacts are equality constraints (normal rows for every active
// contact, tangential rows for sticking ones; sliding ones push along
// t − μ s); the others are ignored until an event adds them (11.41).
#include <algorithm>
#include <cmath>

#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "sim/event_driven.hpp"

namespace plume::detail {

// The loops over constraint rows are short (a few to a few tens):
// vectorised, they would spend more on their prologue and epilogue.
#if defined(__GNUC__) && !defined(__clang__)
#define PLUME_SCALAR_LOOPS __attribute__((optimize("no-tree-vectorize")))
#else
#define PLUME_SCALAR_LOOPS
#endif

namespace {
constexpr int kReducedRows = 36;  // constraint rows from which dynamics_full solves in the nv-space
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
  dl.noalias() = -(K.leftCols(rows).transpose() * du);
  solve_A(rows, dl);
  lam.head(rows) += dl;
  x.noalias() = (symmetric ? YK : YG).topRows(rows).transpose() * dl;
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
  // With Y = L⁻ᵀK (rows of YK here: one per constraint) the system is
  // A λ = −(Kᵀ a0 + K̇ᵀq̇), A = Kᵀ H⁻¹ G = (L⁻ᵀK)ᵀ D⁻¹ (L⁻ᵀG). A sliding
  // contact's force row t − μ(c₁d₁ + c₂d₂) is not solved for on its own:
  // its tangents d₁, d₂ go through L⁻ᵀ with the constraint rows (two rows
  // after them) and L⁻ᵀG's row is combined from theirs.
  const int nv = m.nv();
  int all = rows;
  if (sliding) {
    for (int r = 0; r < rows; ++r) {
      const int a = row_src[r] / 3;
      if (row_src[r] % 3 != 0 || current[act_track[a]].mode != ContactMode::Sliding || current[act_track[a]].mu <= 0.0)
        continue;
      row_src[all++] = 3 * a + 1;
      row_src[all++] = 3 * a + 2;
    }
  }
  auto Yall = YK.topRows(all);
  for (int r = 0; r < all; ++r) {
    const double* col = constraint_column(row_src[r]);
    for (int d = 0; d < nv; ++d) Yall(r, d) = col[d];
  }
  ltdl_solve_Lt_rows(m, data, Yall);
  auto Kt = YK.topRows(rows);
  auto rhs = b.head(rows);
  auto Ks0 = ucol.head(rows);  // Kᵀa0 = (L⁻ᵀK)ᵀ s (not a temporary: no allocation)
  Ks0.noalias() = Kt * s0;
  rhs = -(Ks0 + rhs);
  symmetric = !sliding;
  auto Ar = A.topLeftCorner(rows, rows);
  auto Gt = (symmetric ? YK : YG).topRows(rows);
  if (!symmetric) {
    Gt = Kt;
    for (int r = 0, e = rows; r < rows; ++r) {
      const int a = row_src[r] / 3;
      const Tracked& tr = current[act_track[a]];
      if (row_src[r] % 3 != 0 || tr.mode != ContactMode::Sliding || tr.mu <= 0.0) continue;
      const Vec2 c = sliding_direction(a, vv);
      Gt.row(r) -= tr.mu * (c.x() * YK.row(e) + c.y() * YK.row(e + 1));
      e += 2;
    }
  }
  // A = Σ_dofs u wᵀ, u the dof's column of L⁻ᵀK scaled by D⁻¹ and w its
  // column of L⁻ᵀG: rank-one updates over the rows where the column is
  // nonzero (a leg dof: that leg's contacts only), consecutive dofs with the
  // same rows (a free-flyer's six, a leg's three) in one pass over A.
  // Symmetric: the lower triangle, the one the Cholesky factorisation reads.
  Ar.setZero();
  for (int d = 0; d < nv; ++d) {
    const double* y = Kt.col(d).data();
    int lo = 0, hi = rows;
    while (lo < hi && y[lo] == 0.0) ++lo;
    while (hi > lo && y[hi - 1] == 0.0) --hi;
    dof_lo[d] = lo;
    dof_hi[d] = hi;
    if (lo == hi) continue;
    const double dinv = 1.0 / data.LD(d, d);
    double* u = U.col(d).data();
    for (int r = lo; r < hi; ++r) u[r] = y[r] * dinv;
  }
  for (int d = 0; d < nv;) {
    const int lo = dof_lo[d], hi = dof_hi[d];
    int e = d + 1;
    while (e < nv && e - d < kFusedDofs && dof_lo[e] == lo && dof_hi[e] == hi) ++e;
    if (lo < hi) {
      add_rank_updates(Ar, U, Gt, d, e - d, lo, hi, symmetric);
    }
    d = e;
  }
  // Dependent constraints (four corners of a flat face) leave A singular:
  // a tiny regularisation picks the minimum-norm forces, q̈ is unaffected.
  const double delta = 1e-12 * std::max(1e-12, Ar.diagonal().cwiseAbs().maxCoeff());
  Ar.diagonal().array() += delta;
  factor_A(rows);
  lam.head(rows) = rhs;
  solve_A(rows, lam);
  // q̈ = L⁻¹(s + D⁻¹ (L⁻ᵀG)ᵀλ).
  x.noalias() = Gt.transpose() * lam.head(rows);
  x.array() *= data.LD.diagonal().cwiseInverse().array();
  x += s0;
  ltdl_solve_L(m, data, x);
  qdd = x;
}

namespace {

// A += Σ_{c<C} u_c w_cᵀ for the dofs d … d+C−1 (u_c = U's column, w_c = Gt's
// column), on rows [lo, hi) (where the u_c are nonzero); only r ≥ j when
// `lower`. Each entry takes its dofs in order, as one update per dof would.
template <int C>
PLUME_SCALAR_LOOPS void rank_updates(double* A, Eigen::Index lda, const double* const* u, const double* const* w, int rows, int lo,
                  int hi, bool lower) {
  for (int j = 0; j < rows; ++j) {
    double wj[C];
    bool any = false;
    for (int c = 0; c < C; ++c) {
      wj[c] = w[c][j];
      any |= wj[c] != 0.0;
    }
    if (!any) continue;
    double* a = A + j * lda;
    for (int r = lower ? std::max(lo, j) : lo; r < hi; ++r) {
      double acc = a[r];
      for (int c = 0; c < C; ++c) acc += wj[c] * u[c][r];
      a[r] = acc;
    }
  }
}

}  // namespace

void EventDrivenCore::add_rank_updates(Eigen::Ref<MatrixX> Ar, const MatrixX& Um, const Eigen::Ref<const MatrixX>& Gt,
                                       int d, int count, int lo, int hi, bool lower) {
  const double* u[kFusedDofs];
  const double* w[kFusedDofs];
  for (int c = 0; c < count; ++c) {
    u[c] = Um.col(d + c).data();
    w[c] = Gt.col(d + c).data();
  }
  const int rows = static_cast<int>(Ar.rows());
  const Eigen::Index lda = Ar.outerStride();
  switch (count) {
    case 1: rank_updates<1>(Ar.data(), lda, u, w, rows, lo, hi, lower); break;
    case 2: rank_updates<2>(Ar.data(), lda, u, w, rows, lo, hi, lower); break;
    case 3: rank_updates<3>(Ar.data(), lda, u, w, rows, lo, hi, lower); break;
    case 4: rank_updates<4>(Ar.data(), lda, u, w, rows, lo, hi, lower); break;
    case 5: rank_updates<5>(Ar.data(), lda, u, w, rows, lo, hi, lower); break;
    default: rank_updates<6>(Ar.data(), lda, u, w, rows, lo, hi, lower); break;
  }
}

namespace {

// In place of the n × n column-major block at a (leading dimension ld), its
// lower Cholesky factor (the lower triangle is read); false if a pivot is
// not positive.
PLUME_SCALAR_LOOPS bool cholesky_lower(double* a, int n, Eigen::Index ld) {
  for (int k = 0; k < n; ++k) {
    double* ck = a + k * ld;
    for (int p = 0; p < k; ++p) {
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

// rhs ← A⁻¹ rhs on its first `rows` entries, with factor_A's factors.
void EventDrivenCore::solve_A(int rows, VectorX& rhs) {
  if (use_lu) {
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
  G.resize(nv, 3 * cap);
  YK.resize(3 * cap, nv);
  YG.resize(3 * cap, nv);
  A.resize(3 * cap, 3 * cap);
  row_src.resize(3 * cap);
  ucol.resize(3 * cap);
  U.resize(3 * cap, nv);
  dof_lo.resize(nv);
  dof_hi.resize(nv);
  Tdv.resize(cap);
  Ddv.resize(2 * cap);
  b.resize(3 * cap);
  lam.resize(3 * cap);
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
