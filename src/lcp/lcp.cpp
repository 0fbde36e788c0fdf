#include "plume/lcp/lcp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>

namespace plume {

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::size_t kMessageCapacity = 384;

int as_int(Eigen::Index i) { return static_cast<int>(i); }

// Row sums s_i = Σ_j term(M_ij, j) of the column-major M, kRowBlock rows
// at a time: each block walks the columns once, reading kRowBlock
// consecutive entries of each (a row-by-row walk reads one entry per cache
// line). Each row's sum runs over j ascending from +0, as a row-by-row loop
// adds it up: the same bits. `row(i, s_i)` receives them in row order.
// Columns where skip(j) holds are left out: for terms that are ±0 there,
// which add nothing to sums that start at +0.
constexpr Eigen::Index kRowBlock = 8;
template <class Term, class Row, class Skip>
void for_row_sums(const Eigen::Ref<const MatrixX>& M, Term term, Row row, Skip skip) {
  const Eigen::Index n = M.rows(), m = M.cols();
  for (Eigen::Index i0 = 0; i0 < n; i0 += kRowBlock) {
    const Eigen::Index rows = std::min(kRowBlock, n - i0);
    double s[kRowBlock] = {};
    if (rows == kRowBlock) {  // (a fixed trip count: the compiler's vector lanes)
      for (Eigen::Index j = 0; j < m; ++j) {
        if (skip(j)) continue;
        const double* c = M.data() + j * M.outerStride() + i0;
        for (Eigen::Index r = 0; r < kRowBlock; ++r) s[r] += term(c[r], j);
      }
    } else {
      for (Eigen::Index j = 0; j < m; ++j) {
        if (skip(j)) continue;
        const double* c = M.data() + j * M.outerStride() + i0;
        for (Eigen::Index r = 0; r < rows; ++r) s[r] += term(c[r], j);
      }
    }
    for (Eigen::Index r = 0; r < rows; ++r) row(i0 + r, s[r]);
  }
}
template <class Term, class Row>
void for_row_sums(const Eigen::Ref<const MatrixX>& M, Term term, Row row) {
  for_row_sums(M, term, row, [](Eigen::Index) { return false; });
}

// max_i ρ_i(λ_i, w_i) over the rows of w = Mλ + d, NaN when a w_i or λ_i
// is. `finite_M`: M is known finite (the solvers check their input), so the
// columns of λ's zero entries are skipped (each product is ±0 there): a
// basic solution costs its support's columns only.
template <class RowResidual>
double row_residual(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                    const Eigen::Ref<const VectorX>& lambda, RowResidual rho, bool finite_M = false) {
  double r = 0.0;
  bool nan = false;
  const double* l = lambda.data();
  for_row_sums(
      M, [l](double mij, Eigen::Index j) { return mij * l[j]; },
      [&](Eigen::Index i, double s) {
        const double wi = s + d(i);
        const double li = lambda(i);
        nan = nan || std::isnan(wi) || std::isnan(li);
        r = std::max(r, rho(i, li, wi));
      },
      [l, finite_M](Eigen::Index j) { return finite_M && l[j] == 0.0; });
  return nan ? std::numeric_limits<double>::quiet_NaN() : r;
}

// |min(λ_i, w_i)|: covers −λ_i and −w_i too (see the header).
double complementarity(Eigen::Index, double li, double wi) { return std::abs(std::min(li, wi)); }

// ‖M‖∞, the maximum absolute row sum, without temporaries.
double max_row_sum(const Eigen::Ref<const MatrixX>& M) {
  double best = 0.0;
  for_row_sums(
      M, [](double mij, Eigen::Index) { return std::abs(mij); },
      [&best](Eigen::Index, double s) { best = std::max(best, s); });
  return best;
}

}  // namespace

const char* to_string(LcpStatus status) {
  switch (status) {
    case LcpStatus::Solved:
      return "Solved";
    case LcpStatus::Infeasible:
      return "Infeasible";
    case LcpStatus::IterationLimit:
      return "IterationLimit";
    case LcpStatus::InvalidInput:
      return "InvalidInput";
    case LcpStatus::Failed:
      return "Failed";
  }
  return "unknown";
}

double lcp_residual(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                    const Eigen::Ref<const VectorX>& lambda) {
  return row_residual(M, d, lambda, complementarity);
}

double box_lcp_residual(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                        const Eigen::Ref<const VectorX>& lo, const Eigen::Ref<const VectorX>& hi,
                        const Eigen::Ref<const VectorX>& lambda) {
  // |λ_i − mid(lo_i, hi_i, λ_i − w_i)|, written so that lo = 0, hi = +∞
  // gives exactly |min(λ_i, w_i)| (λ − w < 0 ⇔ λ < w in IEEE arithmetic).
  return row_residual(M, d, lambda, [&](Eigen::Index i, double li, double wi) {
    const double y = li - wi;
    return y < lo(i) ? std::abs(li - lo(i)) : (y > hi(i) ? std::abs(li - hi(i)) : std::abs(wi));
  });
}

double lcp_zero_tolerance(const Eigen::Ref<const MatrixX>& M) {
  const double n = static_cast<double>(std::max<Eigen::Index>(M.rows(), 1));
  return n * max_row_sum(M) * 10.0 * kEps;
}

double lcp_residual_scale(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                          const Eigen::Ref<const VectorX>& lambda) {
  if (d.size() == 0) return 0.0;
  const double l = lambda.lpNorm<Eigen::Infinity>();
  return std::max({d.lpNorm<Eigen::Infinity>(), l, max_row_sum(M) * l});
}

double lcp_default_residual_tolerance(const Eigen::Ref<const MatrixX>& M,
                                      const Eigen::Ref<const VectorX>& d,
                                      const Eigen::Ref<const VectorX>& lambda) {
  const double n = static_cast<double>(std::max<Eigen::Index>(M.rows(), 1));
  return 100.0 * n * kEps * lcp_residual_scale(M, d, lambda);
}

double lcp_amplification(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                         const Eigen::Ref<const VectorX>& lambda) {
  const double num = max_row_sum(M) * lambda.lpNorm<Eigen::Infinity>();
  if (num == 0.0) return 0.0;
  const double den = d.lpNorm<Eigen::Infinity>();
  return den > 0.0 ? num / den : kInf;
}

double lcp_max_amplification() { return 1.0 / std::sqrt(kEps); }

bool check_lcp_input(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                     std::string& message) {
  if (M.rows() != M.cols()) {
    detail::set_message(message, "M is %dx%d, must be square", as_int(M.rows()), as_int(M.cols()));
    return false;
  }
  if (d.size() != M.rows()) {
    detail::set_message(message, "d has %d entries, M is %dx%d", as_int(d.size()), as_int(M.rows()),
                        as_int(M.cols()));
    return false;
  }
  // (M.allFinite() reads the column-major storage in order; the first
  // non-finite entry in row order is named)
  const bool finite = M.allFinite();
  for (Eigen::Index i = 0; i < M.rows() && !finite; ++i) {
    for (Eigen::Index j = 0; j < M.cols(); ++j) {
      if (!std::isfinite(M(i, j))) {
        detail::set_message(message, "M(%d,%d) is %g", as_int(i), as_int(j), M(i, j));
        return false;
      }
    }
  }
  for (Eigen::Index i = 0; i < d.size(); ++i) {
    if (!std::isfinite(d(i))) {
      detail::set_message(message, "d[%d] is %g", as_int(i), d(i));
      return false;
    }
  }
  return true;
}

namespace {

// The certificate check in the variables λ̂ = D⁻¹λ of a diagonal scaling D
// (D = nullptr: no scaling). For feasible λ, uᵀ(Mλ + d) ≥ 0 and
// uᵀMλ = Σ_j D_j(Mᵀu)_j·λ̂_j ≤ δ̂·‖λ̂‖₁ with δ̂ = max_j D_j(Mᵀu)_j, so
// ‖λ̂‖₁ ≥ −uᵀd/δ̂; the natural size of λ̂ is ‖Dd‖∞/‖DMD‖∞.
FarkasCheck farkas(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                   const Eigen::Ref<const VectorX>& u, const double* D, double norm_DMD, double norm_Dd,
                   double max_amplification) {
  FarkasCheck c;
  const Eigen::Index n = d.size();
  if (n == 0) return c;
  const double u_max = u.lpNorm<Eigen::Infinity>();
  c.max_MTu = -kInf;
  for (Eigen::Index j = 0; j < n; ++j) c.max_MTu = std::max(c.max_MTu, (D ? D[j] : 1.0) * M.col(j).dot(u));
  c.uTd = u.dot(d);
  if (c.uTd >= 0.0 || std::isnan(c.uTd)) {
    c.bound = 0.0;
  } else {
    c.bound = c.max_MTu <= 0.0 ? kInf : -c.uTd / c.max_MTu;
  }
  c.scale = norm_DMD > 0.0 ? norm_Dd / norm_DMD : kInf;
  // u carries rounding errors of relative size ~t itself, so uᵀd must be
  // negative beyond t·‖u‖∞·‖d‖₁, not merely beyond the rounding of the sum.
  const double t = 1000.0 * static_cast<double>(n) * kEps;
  c.valid = u_max > 0.0 && u.minCoeff() >= 0.0 && c.uTd < -t * u_max * d.lpNorm<1>() &&
            c.bound >= static_cast<double>(n) * c.scale * max_amplification;
  return c;
}

}  // namespace

FarkasCheck check_farkas_certificate(const Eigen::Ref<const MatrixX>& M,
                                     const Eigen::Ref<const VectorX>& d,
                                     const Eigen::Ref<const VectorX>& u) {
  return farkas(M, d, u, nullptr, max_row_sum(M), d.lpNorm<Eigen::Infinity>(), lcp_max_amplification());
}

namespace detail {

double max_abs_row_sum(const Eigen::Ref<const MatrixX>& M) { return max_row_sum(M); }

void ResultBank::reserve(int capacity) {
  if (invalid_.message.capacity() < kMessageCapacity) invalid_.message.reserve(kMessageCapacity);
  if (capacity <= this->capacity()) return;
  const int old_size = static_cast<int>(by_size_.size());
  by_size_.resize(static_cast<std::size_t>(capacity) + 1);
  for (int n = old_size; n <= capacity; ++n) {
    LcpResult& r = by_size_[static_cast<std::size_t>(n)];
    r.lambda.setZero(n);
    r.w.setZero(n);
    r.basic.reserve(static_cast<std::size_t>(n));
    r.message.reserve(kMessageCapacity);
  }
}

LcpResult& ResultBank::for_size(int n) {
  if (n > capacity()) reserve(n);
  LcpResult& r = by_size_[static_cast<std::size_t>(n)];
  reset_result(r, n);
  return r;
}

LcpResult& ResultBank::invalid() {
  if (invalid_.message.capacity() < kMessageCapacity) invalid_.message.reserve(kMessageCapacity);
  return invalid_;
}

void reset_result(LcpResult& out, Eigen::Index n) {
  out.lambda.resize(n);
  out.w.resize(n);
  out.status = LcpStatus::Failed;
  out.pivots = 0;
  out.residual = 0.0;
  out.tolerance = 0.0;
  out.basic.clear();
  out.message.clear();
}

void set_message(std::string& message, const char* format, ...) {
  char buffer[kMessageCapacity];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  message.assign(buffer);
}

bool settle_trivial(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                    const std::optional<double>& residual_tolerance, LcpResult& out) {
  const Eigen::Index n = d.size();
  if (n == 0) {
    out.status = LcpStatus::Solved;
    out.residual = 0.0;
    out.tolerance = residual_tolerance ? *residual_tolerance : 0.0;
    set_message(out.message, "empty problem (n = 0)");
    return true;
  }
  Eigen::Index imin = 0;
  const double dmin = d.minCoeff(&imin);
  if (dmin >= 0.0) {
    out.lambda.setZero();
    out.w = d;
    out.residual = lcp_residual(M, d, out.lambda);
    out.tolerance = residual_tolerance ? *residual_tolerance
                                       : lcp_default_residual_tolerance(M, d, out.lambda);
    out.status = LcpStatus::Solved;
    set_message(out.message, "d >= 0: lambda = 0 solves it without pivoting");
    return true;
  }
  if (max_row_sum(M) == 0.0) {
    fill_unsolved(M, d, out.lambda.setZero(), residual_tolerance, out);
    out.status = LcpStatus::Infeasible;
    set_message(out.message,
                "M is zero and d[%d] = %g < 0: w_%d = d[%d] < 0 for every lambda "
                "(certificate u = e_%d)",
                as_int(imin), dmin, as_int(imin), as_int(imin), as_int(imin));
    return true;
  }
  return false;
}

void fill_unsolved(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                   const Eigen::Ref<const VectorX>& lambda,
                   const std::optional<double>& residual_tolerance, LcpResult& out) {
  out.lambda = lambda.cwiseMax(0.0);
  out.w.noalias() = M * out.lambda;
  out.w += d;
  out.residual = lcp_residual(M, d, out.lambda);
  out.tolerance = residual_tolerance ? *residual_tolerance
                                     : lcp_default_residual_tolerance(M, d, out.lambda);
}

void describe_certificate(std::string& message, const char* prefix, const FarkasCheck& c) {
  if (c.bound == kInf) {
    set_message(message, "%s: u >= 0 with max(M^T u) = %.3g <= 0 and u^T d = %.6g < 0, so no lambda >= 0 "
                        "makes M lambda + d >= 0", prefix, c.max_MTu, c.uTd);
  } else {
    set_message(message, "%s: u >= 0 with u^T d = %.6g < 0 and M^T u <= 0 up to rounding (max %.3g), so every "
                        "lambda >= 0 with M lambda + d >= 0 is at least %.3g times the natural size |d|/|M|: "
                        "numerically infeasible", prefix, c.uTd, c.max_MTu, c.bound / c.scale);
  }
}

void describe_rejection(std::string& message, const char* prefix, const LcpResult& out, double amplification,
                        double max_amplification) {
  if (!(out.residual <= out.tolerance)) {
    set_message(message, "%s, but its lambda has residual %.3g > tolerance %.3g (ill-conditioned basis of %d)",
                prefix, out.residual, out.tolerance, static_cast<int>(out.basic.size()));
  } else {
    set_message(message,
                "%s, but its lambda is too large to verify: |M||lambda|/|d| = %.3g > max_amplification = %.3g "
                "(numerically infeasible, or a jammed contact)",
                prefix, amplification, max_amplification);
  }
}

void BasisInverse::reserve(int n) {
  if (Binv_.rows() >= n) return;
  Binv_.resize(n, n);
  row_.resize(n);
  sums_.resize(n);
  touched_.reserve(static_cast<std::size_t>(n));
  cols_.reserve(static_cast<std::size_t>(n));
}

void BasisInverse::reset(int n) {
  reserve(n);
  n_ = n;
  touched_.assign(static_cast<std::size_t>(n), 0);
  cols_.clear();
}

void BasisInverse::column(Eigen::Index j, Eigen::Ref<VectorX> out) const {
  if (touched_[static_cast<std::size_t>(j)]) {
    out = Binv_.col(j).head(n_);
  } else {
    out.setZero();
    out(j) = 1.0;
  }
}

void BasisInverse::times(const Eigen::Ref<const VectorX>& a, Eigen::Ref<VectorX> out) const {
  // The identity columns give a's own entries; the stored ones their sum.
  out = a;
  for (const int j : cols_) out(j) = 0.0;
  for (const int j : cols_) out.noalias() += a(j) * Binv_.col(j).head(n_);
}

double BasisInverse::pivot(Eigen::Ref<VectorX> x, Eigen::Ref<VectorX> column, Eigen::Index r) {
  // Gauss–Jordan elimination on the tableau [x | B⁻¹] with pivot column(r):
  // row r is divided by the pivot, every other row i loses column(i) times
  // the new row r. Row r of B⁻¹ is zero in the identity columns other than
  // r, so only the stored columns and column r change.
  const auto n = static_cast<Eigen::Index>(n_);
  const std::size_t rr = static_cast<std::size_t>(r);
  if (!touched_[rr]) {
    auto c = Binv_.col(r).head(n);
    c.setZero();
    c(r) = 1.0;
    touched_[rr] = 1;
    cols_.push_back(static_cast<int>(r));
  }
  const double p = column(r);
  for (const int j : cols_) row_(j) = Binv_(r, j) / p;
  const double xr = x(r) / p;
  column(r) -= 1.0;
  x -= xr * column;
  // The update, column by column with the row sums of |B⁻¹| for ‖B⁻¹‖∞ in
  // the same pass (the identity columns add 1 on their row).
  auto sums = sums_.head(n);
  sums.setZero();
  for (Eigen::Index j = 0; j < n; ++j) {
    if (touched_[static_cast<std::size_t>(j)]) {
      auto c = Binv_.col(j).head(n);
      c -= row_(j) * column;
      sums += c.cwiseAbs();
    } else {
      sums(j) += 1.0;
    }
  }
  return n > 0 ? sums.maxCoeff() : 0.0;
}

void Equilibration::reserve(int n) {
  if (D_.size() < n) D_.resize(n);
}

void Equilibration::compute(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d) {
  n_ = d.size();
  reserve(static_cast<int>(n_));
  for (Eigen::Index i = 0; i < n_; ++i) {
    double m = M(i, i);
    if (!(m > 0.0)) m = std::max(M.row(i).cwiseAbs().maxCoeff(), M.col(i).cwiseAbs().maxCoeff());
    D_(i) = m > 0.0 ? 1.0 / std::sqrt(m) : 1.0;
  }
  sigma_M_ = 0.0;
  const double* D = D_.data();
  for_row_sums(
      M.topLeftCorner(n_, n_), [D](double mij, Eigen::Index j) { return std::abs(mij) * D[j]; },
      [&](Eigen::Index i, double s) { sigma_M_ = std::max(sigma_M_, D[i] * s); });
  sigma_d_ = 0.0;
  for (Eigen::Index i = 0; i < n_; ++i) sigma_d_ = std::max(sigma_d_, std::abs(D_(i) * d(i)));
  if (!(sigma_M_ > 0.0)) sigma_M_ = 1.0;
  if (!(sigma_d_ > 0.0)) sigma_d_ = 1.0;
}

double Equilibration::amplification(const Eigen::Ref<const VectorX>& lambda) const {
  double l = 0.0;
  for (Eigen::Index i = 0; i < n_; ++i) l = std::max(l, std::abs(lambda(i)) / D_(i));
  return l == 0.0 ? 0.0 : sigma_M_ * l / sigma_d_;
}

FarkasCheck check_farkas_certificate(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                                     const Eigen::Ref<const VectorX>& u, const Equilibration& e,
                                     double max_amplification) {
  return farkas(M, d, u, e.diagonal().data(), e.sigma_M(), e.sigma_d(), max_amplification);
}

void Equilibration::column(const Eigen::Ref<const MatrixX>& M, Eigen::Index j, Eigen::Ref<VectorX> out) const {
  out = D_.head(n_).cwiseProduct(M.col(j)) * (D_(j) / sigma_M_);
}

void Equilibration::scaled_d(const Eigen::Ref<const VectorX>& d, Eigen::Ref<VectorX> out) const {
  out = D_.head(n_).cwiseProduct(d) / sigma_d_;
}

void Equilibration::unscale(const Eigen::Ref<const VectorX>& lambda_hat, Eigen::Ref<VectorX> out) const {
  out = D_.head(n_).cwiseProduct(lambda_hat) * (sigma_d_ / sigma_M_);
}

void BasisPolish::reserve(int n) {
  if (lu_.rows() >= n) return;
  lu_.resize(n, n);
  rhs_.resize(n);
  candidate_.resize(n);
}

bool BasisPolish::solve_block(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& D,
                              const std::vector<int>& J) {
  // Gaussian elimination with partial pivoting on the top-left k×k corner of
  // the preallocated buffer; the right-hand side is rhs_.head(k).
  const int k = static_cast<int>(J.size());
  auto A = lu_.topLeftCorner(k, k);
  auto b = rhs_.head(k);
  for (int r = 0; r < k; ++r) {
    const int i = J[static_cast<std::size_t>(r)];
    for (int c = 0; c < k; ++c) {
      const int j = J[static_cast<std::size_t>(c)];
      A(r, c) = D(i) * M(i, j) * D(j);
    }
  }
  for (int c = 0; c < k; ++c) {
    int p = c;
    for (int r = c + 1; r < k; ++r)
      if (std::abs(A(r, c)) > std::abs(A(p, c))) p = r;
    if (A(p, c) == 0.0) return false;
    if (p != c) {
      A.row(p).swap(A.row(c));
      std::swap(b(p), b(c));
    }
    // The multipliers f_r = A(r,c)/A(c,c) in column c, then column by column
    // (A is column-major: contiguous, vectorised) A(r,j) −= f_r A(c,j): each
    // entry receives the same single update as row by row.
    const double pivot = A(c, c);
    double* fc = A.col(c).data();
    for (int r = c + 1; r < k; ++r) {
      fc[r] /= pivot;
      b(r) -= fc[r] * b(c);
    }
    for (int j = c + 1; j < k; ++j) {
      double* aj = A.col(j).data();
      const double acj = aj[c];
      if (acj == 0.0) continue;
      for (int r = c + 1; r < k; ++r) aj[r] -= fc[r] * acj;
    }
  }
  for (int r = k - 1; r >= 0; --r) {
    double s = b(r);
    for (int c = r + 1; c < k; ++c) s -= A(r, c) * b(c);
    b(r) = s / A(r, r);
    if (!std::isfinite(b(r))) return false;
  }
  return true;
}

bool BasisPolish::null_direction(const Eigen::Ref<const MatrixX>& M, const Equilibration& equilibration,
                                 const std::vector<int>& J, int d_index, Eigen::Ref<VectorX> u) {
  const Eigen::Ref<const VectorX> D = equilibration.diagonal();
  reserve(static_cast<int>(D.size()));
  const int k = static_cast<int>(J.size());
  for (int r = 0; r < k; ++r) {
    const int i = J[static_cast<std::size_t>(r)];
    rhs_(r) = -D(i) * M(i, d_index) * D(d_index);
  }
  if (k > 0 && !solve_block(M, D, J)) return false;
  u.setZero();
  u(d_index) = D(d_index);
  for (int r = 0; r < k; ++r) {
    const int i = J[static_cast<std::size_t>(r)];
    u(i) = std::max(D(i) * rhs_(r), 0.0);
  }
  return true;
}

bool BasisPolish::basis_solution(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                                 const Equilibration& equilibration, const std::vector<int>& J,
                                 Eigen::Ref<VectorX> lambda) {
  const Eigen::Ref<const VectorX> D = equilibration.diagonal();
  reserve(static_cast<int>(d.size()));
  const int k = static_cast<int>(J.size());
  for (int r = 0; r < k; ++r) {
    const int i = J[static_cast<std::size_t>(r)];
    rhs_(r) = -D(i) * d(i);
  }
  lambda.setZero();
  if (k == 0) return true;
  if (!solve_block(M, D, J)) return false;
  for (int r = 0; r < k; ++r) {
    const int i = J[static_cast<std::size_t>(r)];
    lambda(i) = D(i) * rhs_(r);
  }
  return true;
}

bool BasisPolish::finish(const Eigen::Ref<const MatrixX>& M, const Eigen::Ref<const VectorX>& d,
                         const Equilibration& equilibration, const Eigen::Ref<const VectorX>& lambda_tableau,
                         const std::vector<int>& J, const std::optional<double>& residual_tolerance,
                         double max_amplification, LcpResult& out) {
  const Eigen::Ref<const VectorX> D = equilibration.diagonal();
  const Eigen::Index n = d.size();
  reserve(static_cast<int>(n));
  out.lambda = lambda_tableau.cwiseMax(0.0);
  double best = row_residual(M, d, out.lambda, complementarity, true);  // (M checked by the solver)

  // λ_J = D_J x from (D M D)_JJ x = −(D d)_J.
  const int k = static_cast<int>(J.size());
  for (int r = 0; r < k; ++r) {
    const int i = J[static_cast<std::size_t>(r)];
    rhs_(r) = -D(i) * d(i);
  }
  const bool ok = k > 0 && solve_block(M, D, J);
  auto b = rhs_.head(k);
  if (ok) {
    auto cand = candidate_.head(n);
    cand.setZero();
    for (int r = 0; r < k; ++r) {
      const int i = J[static_cast<std::size_t>(r)];
      cand(i) = std::max(D(i) * b(r), 0.0);
    }
    const double res = row_residual(M, d, cand, complementarity, true);
    if (res <= best || std::isnan(best)) {
      best = res;
      out.lambda = cand;
    }
  }

  out.w.noalias() = M * out.lambda;
  out.w += d;
  out.residual = best;
  out.tolerance = residual_tolerance ? *residual_tolerance
                                     : lcp_default_residual_tolerance(M, d, out.lambda);
  amplification_ = equilibration.amplification(out.lambda);
  return out.residual <= out.tolerance && amplification_ <= max_amplification;
}

}  // namespace detail
}  // namespace plume
