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
bool TimeStepping::active_set_accelerations(const VectorX& v, VectorX& a, bool predicted) {
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

}  // namespace plume::detail
