// Time-stepping, step 2 when β's modes are known from the last solve: the
// active contacts as equality rows (normal; tangential for sticking ones;
// sliding ones pushing along their friction), solved by one factorisation
// of H (the branch-induced sparse LᵀDL) — rows × rows, or nv × nv when the
// rows fix q̈ by themselves (a stack) — and accepted when the LCP's
// conditions hold (λ ≥ 0, sticking forces in their cones, no inactive
// contact accelerating into its surface).
#include "sim/time_stepping.hpp"

#include <algorithm>
#include <cmath>

#include "algorithms/delassus_blocks.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/contact/contact_jacobian.hpp"

namespace plume::detail {

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
bool TimeStepping::fully_constrained() {
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
TimeStepping::Forces TimeStepping::fast_forces(bool symmetric) {
  const Model& m = model();
  const int nv = m.nv();
  const int rows = static_cast<int>(fast_K_.cols());
  if (symmetric && rows > nv && fully_constrained()) return Forces::Solved;
  if (symmetric) return symmetric_forces(contacts_) ? Forces::Solved : Forces::Unsolved;
  fast_Kt_ = fast_K_.transpose();
  ltdl_solve_Lt_rows(m, data_, fast_Kt_);
  fast_Gt_ = fast_G_.transpose();
  ltdl_solve_Lt_rows(m, data_, fast_Gt_);
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
    for (int j = 0; j < rows; ++j) {
      const double wj = w[j] * dinv;
      if (wj == 0.0) continue;
      double* ac = fast_A_.col(j).data();
      for (int i = lo; i < hi; ++i) ac[i] += wj * u[i];
    }
  }
  double amax = 1e-12;
  for (int i = 0; i < rows; ++i) amax = std::max(amax, std::abs(fast_A_(i, i)));
  fast_A_.diagonal().array() += (1e-12 * amax) * fast_winv_.array().inverse();
  fast_lu_.compute(fast_A_);
  fast_lambda_ = fast_lu_.solve(fast_b_);
  // q̈ = a0 + H⁻¹ G λ = a0 + L⁻¹ D⁻¹ (L⁻ᵀG) λ
  fast_x_.noalias() = fast_Gt_.transpose() * fast_lambda_;
  fast_x_.array() *= fast_Dinv_.array();
  ltdl_solve_L(m, data_, fast_x_);
  return Forces::Solved;
}

namespace {

// x[r·stride + c] ← L⁻ᵀ x for the n right-hand sides c of one contact
// (stored as rows of W = (L⁻ᵀK)ᵀ, stride = its row count), nonzero on the
// dofs `chain` only (descending, closed under ancestors): descendants
// first, each dof's row of L scattered into its ancestors — per entry the
// updates of ltdl_solve_Lt_rows, in its order.
template <int N>
PLUME_SCALAR_LOOPS void solve_Lt_group(const Model& m, const RowMatrixX& LD, const int* chain, int nc, double* W,
                                       Eigen::Index stride) {
  for (int c = 0; c < nc; ++c) {
    const int i = chain[c];
    const double* xi = W + i * stride;
    double x[N];
    bool any = false;
    for (int k = 0; k < N; ++k) any |= (x[k] = xi[k]) != 0.0;
    if (!any) continue;
    const double* Li = LD.data() + static_cast<Eigen::Index>(i) * LD.cols();
    for (int e = m.dof_parent(i); e >= 0;) {
      const int s = m.dof_run_start(e);
      for (int j = s; j <= e; ++j) {
        const double l = Li[j];
        double* xj = W + j * stride;
        for (int k = 0; k < N; ++k) xj[k] -= l * x[k];
      }
      e = m.dof_parent(s);
    }
  }
}

// W ← L⁻ᵀ W on the dofs 0 … last (closed under ancestors: the dofs every
// contact shares) for all rows at once, descending.
void solve_Lt_shared(const Model& m, const RowMatrixX& LD, int last, double* W, Eigen::Index rows) {
  for (int i = last; i >= 0; --i) {
    const double* xi = W + i * rows;
    const double* Li = LD.data() + static_cast<Eigen::Index>(i) * LD.cols();
    for (int e = m.dof_parent(i); e >= 0;) {
      const int s = m.dof_run_start(e);
      for (int j = s; j <= e; ++j) {
        const double l = Li[j];
        double* xj = W + j * rows;
        for (Eigen::Index r = 0; r < rows; ++r) xj[r] -= l * xi[r];
      }
      e = m.dof_parent(s);
    }
  }
}

}  // namespace

void TimeStepping::add_A_blocks(int ng, int rows, const double* W) {
  (void)rows;  // (fast_group_[ng])
  delassus_lower(ng, fast_group_.data(), fast_chain_.data(), fast_chain_size_.data(), model().nv(),
                 fast_split_ ? fast_shared_ : 0, W, fast_Dinv_.data(), fast_A_.data());
}

namespace {

// The lower Cholesky factor of the n × n column-major A (leading dimension
// n, lower triangle read) in place, left-looking: column j takes the earlier
// columns k in ascending order, four at a time (each entry as one update
// per column: the right-looking banded factorisation's updates of every
// entry, in its order; the ones it skips subtract ±0 from entries that are
// never −0), then its pivot's square root divides it. False at a pivot that
// is not positive (A part-factored).
PLUME_SCALAR_LOOPS bool cholesky_in_order(double* A, int n) {
  for (int j = 0; j < n; ++j) {
    double* cj = A + j * n;
    const double diagonal = cj[j];
    int k = 0;
    for (; k + 4 <= j; k += 4) {
      const double *c0 = A + k * n, *c1 = c0 + n, *c2 = c1 + n, *c3 = c2 + n;
      const double l0 = c0[j], l1 = c1[j], l2 = c2[j], l3 = c3[j];
      for (int i = j; i < n; ++i) cj[i] = (((cj[i] - l0 * c0[i]) - l1 * c1[i]) - l2 * c2[i]) - l3 * c3[i];
    }
    if (j - k == 3) {
      const double *c0 = A + k * n, *c1 = c0 + n, *c2 = c1 + n;
      const double l0 = c0[j], l1 = c1[j], l2 = c2[j];
      for (int i = j; i < n; ++i) cj[i] = ((cj[i] - l0 * c0[i]) - l1 * c1[i]) - l2 * c2[i];
    } else if (j - k == 2) {
      const double *c0 = A + k * n, *c1 = c0 + n;
      const double l0 = c0[j], l1 = c1[j];
      for (int i = j; i < n; ++i) cj[i] = (cj[i] - l0 * c0[i]) - l1 * c1[i];
    } else if (j - k == 1) {
      const double* c0 = A + k * n;
      const double l0 = c0[j];
      for (int i = j; i < n; ++i) cj[i] -= l0 * c0[i];
    }
    const double pivot = cj[j];
    if (!(pivot > 0.0 * diagonal) || !(pivot > 0.0)) return false;
    const double ljj = std::sqrt(pivot);
    cj[j] = ljj;
    for (int i = j + 1; i < n; ++i) cj[i] /= ljj;
  }
  return true;
}

}  // namespace

// Each contact's support chain, descending (fast_chain_, nv slots per
// contact): its bodies' joints' dofs and their ancestors (a joint limit:
// the dofs where its row of W is nonzero and their ancestors); the dofs
// every chain holds (fast_shared_: the dofs 0 … fast_shared_ − 1) when they
// lie below every other chain dof (fast_split_). Kept while the contacts
// (their rows and bodies) stay those of the last call.
void TimeStepping::support_chains(const std::vector<Contact>& contacts, int ng, int rows, const double* W) {
  const Model& m = model();
  const int nv = m.nv();
  bool same = static_cast<int>(fast_sig_.size()) == 3 * ng;
  for (int g = 0; g < ng && same; ++g) {
    const Contact& c = contacts[static_cast<std::size_t>(fast_group_contact_[static_cast<std::size_t>(g)])];
    const int n = fast_group_[static_cast<std::size_t>(g) + 1] - fast_group_[static_cast<std::size_t>(g)];
    const std::size_t k = 3 * static_cast<std::size_t>(g);
    same = c.kind == ContactKind::Shapes && fast_sig_[k] == n && fast_sig_[k + 1] == c.body_a && fast_sig_[k + 2] == c.body_b;
  }
  if (same) return;
  fast_sig_.clear();
  // Each contact's support chain, descending (fast_chain_, nv slots per
  // contact): its bodies' joints' dofs and their ancestors (a joint
  // limit: the dofs where its row of K is nonzero and their ancestors).
  fast_mark_.assign(static_cast<std::size_t>(nv), 0);
  fast_count_.assign(static_cast<std::size_t>(nv), 0);
  fast_chain_.resize(static_cast<std::size_t>(ng) * static_cast<std::size_t>(nv));
  fast_chain_size_.resize(static_cast<std::size_t>(ng));
  for (int g = 0; g < ng; ++g) {
    const int r0 = fast_group_[static_cast<std::size_t>(g)], n = fast_group_[static_cast<std::size_t>(g) + 1] - r0;
    const int tag = g + 1;
    const Contact& c = contacts[static_cast<std::size_t>(fast_group_contact_[static_cast<std::size_t>(g)])];
    if (c.kind == ContactKind::Shapes) {  // the two bodies' support chains
      for (int body : {c.body_b, c.body_a}) {
        for (int i = body; i > 0; i = m.parent(i)) {
          const Joint& j = m.joint(i);
          for (int k = 0; k < j.nv; ++k) fast_mark_[static_cast<std::size_t>(j.v_index + k)] = tag;
        }
      }
    } else {
      for (int d = nv - 1; d >= 0; --d) {
        if (fast_mark_[static_cast<std::size_t>(d)] == tag) continue;
        bool nonzero = false;
        for (int k = 0; k < n; ++k) nonzero |= W[d * rows + r0 + k] != 0.0;
        if (!nonzero) continue;
        for (int e = d; e >= 0 && fast_mark_[static_cast<std::size_t>(e)] != tag; e = m.dof_parent(e)) {
          fast_mark_[static_cast<std::size_t>(e)] = tag;
        }
      }
    }
    int* chain = fast_chain_.data() + static_cast<std::size_t>(g) * static_cast<std::size_t>(nv);
    int nc = 0;
    for (int d = nv - 1; d >= 0; --d) {
      if (fast_mark_[static_cast<std::size_t>(d)] == tag) {
        chain[nc++] = d;
        ++fast_count_[static_cast<std::size_t>(d)];
      }
    }
    fast_chain_size_[static_cast<std::size_t>(g)] = nc;
  }
  // The dofs every contact's chain holds (a floating base's: closed under
  // ancestors). When they lie below every other chain dof, each row's
  // L⁻ᵀ updates from its own dofs all come before theirs: the contacts'
  // own dofs are solved contact by contact, the shared ones for all rows
  // at once, in the same order per entry.
  int shared = 0, shared_max = -1;
  for (int d = 0; d < nv; ++d) {
    if (fast_count_[static_cast<std::size_t>(d)] == ng) ++shared, shared_max = d;
  }
  bool split = ng > 1 && shared > 0 && shared == shared_max + 1;  // (the dofs 0 … shared_max)
  for (int g = 0; split && g < ng; ++g) {
    const int own = fast_chain_size_[static_cast<std::size_t>(g)] - shared;
    split = own == 0 || fast_chain_[static_cast<std::size_t>(g) * static_cast<std::size_t>(nv) + static_cast<std::size_t>(own) - 1] > shared_max;
  }
  fast_shared_ = split ? shared : 0;
  fast_split_ = split;
  bool shapes = true;
  for (int g = 0; g < ng; ++g) {
    const Contact& c = contacts[static_cast<std::size_t>(fast_group_contact_[static_cast<std::size_t>(g)])];
    shapes &= c.kind == ContactKind::Shapes;
    fast_sig_.push_back(fast_group_[static_cast<std::size_t>(g) + 1] - fast_group_[static_cast<std::size_t>(g)]);
    fast_sig_.push_back(c.body_a);
    fast_sig_.push_back(c.body_b);
  }
  if (!shapes) fast_sig_.clear();  // (a joint limit's chain is read from W: not kept)
}

// The symmetric rows solve (G = K), contact by contact: W = (L⁻ᵀK)ᵀ
// (fast_Kt_, rows × nv) by each contact's rows on its support chain
// (the dofs where its K columns are nonzero and their ancestors), the lower
// triangle of A = W D⁻¹ Wᵀ by pairs of contacts over the dofs they share,
// the regularised Cholesky factorisation of A and its solves, q̈ − a0 =
// L⁻¹ D⁻¹ W ᵀλ. Every entry takes the products and sums of the dof-by-dof
// rank-one updates and right-looking banded Cholesky it replaces, in their
// order (only exact zeros are skipped): the same bits. False when a pivot
// is not positive (rounding on dependent rows: the LCP decides).
bool TimeStepping::symmetric_forces(const std::vector<Contact>& contacts) {
  const Model& m = model();
  const int rows = static_cast<int>(fast_K_.cols());
  const int ng = static_cast<int>(fast_group_.size()) - 1;
  // (the symplectic Euler rule: the velocity projection's factored A at this
  // q, for the same contacts' rows; see metric_step)
  bool kept = fast_kept_ && !output_solve_ && ltdl_known_ && &contacts == &contacts_ &&
              fast_kept_ids_.size() == 2 * static_cast<std::size_t>(ng) && fast_kept_W_.rows() == rows;
  for (int g = 0; g < ng && kept; ++g) {
    const std::size_t k = static_cast<std::size_t>(g);
    kept = contacts[static_cast<std::size_t>(fast_group_contact_[k])].id == fast_kept_ids_[2 * k] &&
           static_cast<std::uint64_t>(fast_group_[k + 1] - fast_group_[k]) == fast_kept_ids_[2 * k + 1];
  }
  if (!output_solve_) fast_kept_ = false;
  if (kept) {
    fast_Kt_ = fast_kept_W_;
    fast_A_ = fast_kept_A_;
    fast_Dinv_ = fast_kept_Dinv_;
  } else if (!factor_A(contacts)) {
    return false;
  }
  const bool half = fast_half_ && &contacts == &contacts_;  // (fast_a0_ = y: see active_set_accelerations)
  if (half) {
    fast_Ka0_.noalias() = fast_Kt_ * fast_a0_;
    fast_b_ = -(fast_Ka0_ + fast_rates_);
  }
  double* A = fast_A_.data();
  fast_lambda_ = fast_b_;
  double* x = fast_lambda_.data();
  for (int k = 0; k < rows; ++k) {
    const double* ck = A + k * rows;
    x[k] /= ck[k];
    const double xk = x[k];
    for (int i = k + 1; i < rows; ++i) x[i] -= ck[i] * xk;
  }
  for (int k = rows - 1; k >= 0; --k) {
    const double* ck = A + k * rows;
    double sum = x[k];
    for (int i = k + 1; i < rows; ++i) sum -= ck[i] * x[i];
    x[k] = sum / ck[k];
  }
  // q̈ = a0 + H⁻¹ K λ = a0 + L⁻¹ D⁻¹ W ᵀλ
  fast_x_.noalias() = fast_Kt_.transpose() * fast_lambda_;
  fast_x_.array() *= fast_Dinv_.array();
  if (half) fast_x_ += fast_a0_;  // (q̈ itself)
  ltdl_solve_L(m, data_, fast_x_);
  return true;
}

// symmetric_forces(): W, D⁻¹ and the Cholesky factor of the regularised A
// (fast_Kt_, fast_Dinv_, fast_A_). False when a pivot is not positive.
bool TimeStepping::factor_A(const std::vector<Contact>& contacts) {
  const Model& m = model();
  const int nv = m.nv();
  const int rows = static_cast<int>(fast_K_.cols());
  const int ng = static_cast<int>(fast_group_.size()) - 1;
  fast_Kt_.resize(rows, nv);
  double* W = fast_Kt_.data();
  for (int r = 0; r < rows;) {  // (a contact's three rows together)
    if (r + 3 <= rows) {
      const double *k0 = fast_K_.col(r).data(), *k1 = fast_K_.col(r + 1).data(), *k2 = fast_K_.col(r + 2).data();
      for (int d = 0; d < nv; ++d) {
        double* w = W + d * rows + r;
        w[0] = k0[d];
        w[1] = k1[d];
        w[2] = k2[d];
      }
      r += 3;
    } else {
      const double* k = fast_K_.col(r).data();
      for (int d = 0; d < nv; ++d) W[d * rows + r] = k[d];
      ++r;
    }
  }
  fast_Dinv_.resize(nv);
  for (int d = 0; d < nv; ++d) fast_Dinv_(d) = 1.0 / data_.LD(d, d);
  support_chains(contacts, ng, rows, W);
  const int shared = fast_shared_, shared_max = shared - 1;
  const bool split = fast_split_;
  for (int g = 0; g < ng; ++g) {
    const int r0 = fast_group_[static_cast<std::size_t>(g)], n = fast_group_[static_cast<std::size_t>(g) + 1] - r0;
    const int* chain = fast_chain_.data() + static_cast<std::size_t>(g) * static_cast<std::size_t>(nv);
    const int nc = fast_chain_size_[static_cast<std::size_t>(g)] - (split ? shared : 0);
    if (n == 3) {
      solve_Lt_group<3>(m, data_.LD, chain, nc, W + r0, rows);
    } else {  // (a contact has one row, or three)
      solve_Lt_group<1>(m, data_.LD, chain, nc, W + r0, rows);
    }
  }
  if (split) solve_Lt_shared(m, data_.LD, shared_max, W, rows);
  // A's lower triangle: block (a, b), a ≥ b, over the dofs of a's chain
  // (ascending; b's rows are zero elsewhere), summed from +0 (the products
  // with a zero factor that the dof-by-dof updates skip add ±0 to a sum
  // that is never −0: no change). The upper triangle is not read.
  fast_A_.resize(rows, rows);
  add_A_blocks(ng, rows, W);
  double* A = fast_A_.data();
  double amax = 1e-12;
  for (int i = 0; i < rows; ++i) amax = std::max(amax, std::abs(A[i * rows + i]));
  const double delta = 1e-12 * amax;
  for (int i = 0; i < rows; ++i) A[i * rows + i] += delta * (1.0 / fast_winv_(i));
  return cholesky_in_order(A, rows);
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
bool TimeStepping::active_set_accelerations(const VectorX& v, VectorX& a, bool predicted) {
  // The velocity projection's factored A (fast_kept_) serves this solve at
  // most, the first after it (at its q when ltdl_known_), and no later one.
  // (An output's solve neither uses nor drops it: outputs never change a run.)
  struct Drop {
    bool& kept;
    bool output;
    ~Drop() {
      if (!output) kept = false;
    }
  } drop{fast_kept_, output_solve_};
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
  // H from accelerations() (its CRBA pass left the placements the contacts
  // were refreshed with), the bias pass of RNEA the velocities
  // contact_jacobians reads; H = LᵀDL by the branch-induced sparse
  // factorisation (independent bodies: block-diagonal, no fill-in).
  if (!ltdl_known_) unchecked::ltdl(m, data_);
  fast_a0_ = tau_applied_ - unchecked::bias_forces_after_crba(m, data_, v);
  // The symplectic Euler rule's symmetric rows solve (no sliding contact,
  // not more rows than dofs) keeps y = D⁻¹L⁻ᵀ(τ − C) in fast_a0_: Kᵀa0 =
  // Wᵀ... = W y and q̈ = L⁻¹(y + D⁻¹Wᵀλ) then take one L⁻¹ pass instead of
  // two (symmetric_forces; the same up to rounding).
  bool symmetric = true;
  for (const Tracked& tr : beta_) {
    symmetric &= !(tr.active && tr.mode == ContactMode::Sliding && tr.mu > 0.0 && tr.contact.kind == ContactKind::Shapes);
  }
  fast_half_ = opt_.time_stepping_rule == TimeSteppingRule::SymplecticEuler && symmetric && rows <= nv;
  if (fast_half_) {
    ltdl_solve_Lt(m, data_, Eigen::Map<MatrixX>(fast_a0_.data(), nv, 1));
    for (int i = 0; i < nv; ++i) fast_a0_[i] /= data_.LD(i, i);
  } else {
    ltdl_solve(m, data_, fast_a0_);
  }
  fast_T_.resize(nv, nc);
  fast_Tdv_.resize(nc);
  fast_D_.resize(nv, 2 * nc);
  fast_Ddv_.resize(2 * nc);
  // (the symplectic Euler rule: world-frame columns, fewer products, other rounding)
  if (opt_.time_stepping_rule == TimeSteppingRule::SymplecticEuler) {
    contact_jacobians_world(m, data_, contacts_, fast_T_, fast_Tdv_, fast_D_, fast_Ddv_, true);
  } else {
    contact_jacobians(m, data_, contacts_, fast_T_, fast_Tdv_, fast_D_, fast_Ddv_, true);
  }
  // Columns of K (constraint directions) and, with a sliding contact, G
  // (force directions); b (velocity products).
  fast_K_.resize(nv, rows);
  if (!symmetric) fast_G_.resize(nv, rows);
  fast_b_.resize(rows);
  fast_slide_.setZero(2, nc);
  fast_group_.clear();
  fast_group_contact_.clear();
  int r = 0;
  for (int k = 0; k < nc; ++k) {
    const Tracked& tr = beta_[static_cast<std::size_t>(k)];
    if (!tr.active) continue;
    fast_group_.push_back(r);
    fast_group_contact_.push_back(k);
    fast_K_.col(r) = fast_T_.col(k);
    if (!symmetric) fast_G_.col(r) = fast_T_.col(k);
    fast_b_(r) = fast_Tdv_(k);
    const bool friction = tr.mu > 0.0 && tr.contact.kind == ContactKind::Shapes;
    if (friction && tr.mode == ContactMode::Sliding) {
      const Eigen::Vector2d u(fast_D_.col(2 * k).dot(v), fast_D_.col(2 * k + 1).dot(v));
      if (given_slides_ && std::isfinite(given_angle_(k))) {
        // (starting from rest, or slower than its friction changes it in a
        // step: refine_starting_slides's and refine_slow_slides's directions)
        fast_slide_.col(k) = Eigen::Vector2d(std::cos(given_angle_(k)), std::sin(given_angle_(k)));
      } else if (u.norm() > opt_.slip_velocity) {
        fast_slide_.col(k) = u.normalized();
      } else {
        return false;  // no direction to slide in
      }
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
  fast_group_.push_back(r);
  // A λ = −(Kᵀ a0 + K̇ᵀq̇) with A = Kᵀ H⁻¹ G = (L⁻ᵀK)ᵀ D⁻¹ (L⁻ᵀG), as the
  // event-driven scheme's constrained dynamics: rank-one updates over the
  // dofs, each touching only the rows of the contacts on its bodies.
  if (fast_half_) {
    fast_rates_ = fast_b_;  // (b = −(W y + K̇ᵀq̇) in symmetric_forces)
  } else {
    fast_Ka0_.noalias() = fast_K_.transpose() * fast_a0_;  // (as the product's temporary in −(Kᵀa0 + b))
    fast_b_ = -(fast_Ka0_ + fast_b_);
  }
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
    if (fast_half_) {
      s.ddq = fast_x_;
    } else {
      s.ddq = fast_a0_ + fast_x_;
    }
    fast_Tddq_.noalias() = fast_T_.transpose() * s.ddq;
    s.zeta_dot = fast_Tddq_ + fast_Tdv_;
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

}  // namespace plume::detail
