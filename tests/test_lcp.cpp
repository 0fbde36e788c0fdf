// Tests of the LCP solvers (include/plume/lcp/). Every answer is checked
// against a fact established independently of the solver under test:
// brute-force enumeration of all 2ⁿ complementary bases (3ⁿ for box
// problems), closed-form solutions of literature problems (Murty's example,
// Featherstone's Example 11.1), the defining conditions of the (box) LCP,
// and counts of every heap allocation made during a solve.
//
// Allocation counting: Eigen's runtime check (EIGEN_RUNTIME_NO_MALLOC, made
// active here by undefining NDEBUG) covers Eigen code instantiated in this
// file; a replaced global operator new counts C++ allocations; and replaced
// malloc/calloc/realloc (forwarding to glibc's __libc_* entry points) count
// every allocation in the process, including those inside libplume, which is
// compiled without the Eigen check. The malloc hook is left out under
// AddressSanitizer, which owns malloc.
#define EIGEN_RUNTIME_NO_MALLOC
#undef NDEBUG

#include <cstdlib>
#include <new>

namespace {
// operator new counts per thread; the malloc hook uses plain globals because
// malloc runs before thread-local storage exists (the tests are single-threaded).
thread_local long t_new_calls = 0;
thread_local bool t_counting = false;
long g_malloc_calls = 0;
bool g_counting = false;
}  // namespace

#if defined(__SANITIZE_ADDRESS__)
#define PLUME_TEST_MALLOC_HOOK 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLUME_TEST_MALLOC_HOOK 0
#endif
#endif
#if !defined(PLUME_TEST_MALLOC_HOOK) && defined(__GLIBC__)
#define PLUME_TEST_MALLOC_HOOK 1
#endif

#if PLUME_TEST_MALLOC_HOOK
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void __libc_free(void* p);

void* malloc(std::size_t size) noexcept {
  if (g_counting) ++g_malloc_calls;
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) noexcept {
  if (g_counting) ++g_malloc_calls;
  return __libc_calloc(count, size);
}
void* realloc(void* p, std::size_t size) noexcept {
  if (g_counting) ++g_malloc_calls;
  return __libc_realloc(p, size);
}
void free(void* p) noexcept { __libc_free(p); }
}
#endif

void* operator new(std::size_t size) {
  if (t_counting) ++t_new_calls;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (t_counting) ++t_new_calls;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// GCC 12 mistakes the free() below, reached through the replaced operator
// delete, for a mismatch with the replaced operator new once both are inlined.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <gtest/gtest.h>

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "plume/lcp/lcp.hpp"
#include "plume/lcp/enumeration.hpp"
#include "plume/lcp/lemke.hpp"
#include "plume/lcp/pgs.hpp"
#include "plume/lcp/pivoting.hpp"

namespace plume {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- helpers -----------------------------------------------------------------

// Uniform doubles and integers from a 64-bit engine, identical on every
// platform (the std distributions are implementation-defined).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  int integer(int lo, int hi) { return lo + static_cast<int>(gen_() % static_cast<std::uint64_t>(hi - lo + 1)); }
  MatrixX matrix(int rows, int cols, double lo, double hi) {
    MatrixX A(rows, cols);
    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < rows; ++i) A(i, j) = uniform(lo, hi);
    return A;
  }
  MatrixX integer_matrix(int rows, int cols, int lo, int hi) {
    MatrixX A(rows, cols);
    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < rows; ++i) A(i, j) = integer(lo, hi);
    return A;
  }
  VectorX vector(int n, double lo, double hi) { return matrix(n, 1, lo, hi); }
  VectorX integer_vector(int n, int lo, int hi) { return integer_matrix(n, 1, lo, hi); }

 private:
  std::mt19937_64 gen_;
};

// M = AᵀA with A rank×n: symmetric PSD of rank ≤ `rank`.
MatrixX random_psd(Rng& rng, int n, int rank) {
  const MatrixX A = rng.matrix(rank, n, -1.0, 1.0);
  return A.transpose() * A;
}

// Two families of non-symmetric P-matrices: strictly row-diagonally dominant
// with positive diagonal, and I + strictly upper triangular (every principal
// submatrix is unit upper triangular, so every principal minor is 1).
MatrixX random_p_matrix(Rng& rng, int n, int family) {
  MatrixX M = rng.matrix(n, n, -1.0, 1.0);
  if (family == 0) {
    for (int i = 0; i < n; ++i) M(i, i) = M.row(i).cwiseAbs().sum() + 0.1;
  } else {
    M = M.triangularView<Eigen::StrictlyUpper>();
    M.diagonal().setOnes();
  }
  return M;
}

// Murty's example: I + 2·(strict upper triangle of ones).
MatrixX murty_matrix(int n) {
  MatrixX M = MatrixX::Constant(n, n, 2.0).triangularView<Eigen::StrictlyUpper>();
  M.diagonal().setOnes();
  return M;
}

// All solutions of LCP(M, d) with a nonsingular principal block: for every
// J ⊆ {0…n−1}, λ_J solves M_JJ λ_J = −d_J, λ_i = 0 off J; keep those with
// λ ≥ 0 and w = Mλ + d ≥ 0 (to `tol`). For P-matrices this finds the unique
// solution; for symmetric PSD M it finds one whenever a solution exists
// (a solution of least support has a nonsingular M_JJ).
std::vector<VectorX> brute_force_lcp(const MatrixX& M, const VectorX& d, double tol = 1e-9) {
  const int n = static_cast<int>(d.size());
  std::vector<VectorX> solutions;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    std::vector<int> J;
    for (int i = 0; i < n; ++i)
      if (mask & (1u << i)) J.push_back(i);
    const int k = static_cast<int>(J.size());
    VectorX lambda = VectorX::Zero(n);
    if (k > 0) {
      MatrixX A(k, k);
      VectorX b(k);
      for (int r = 0; r < k; ++r) {
        b(r) = -d(J[r]);
        for (int c = 0; c < k; ++c) A(r, c) = M(J[r], J[c]);
      }
      Eigen::FullPivLU<MatrixX> lu(A);
      lu.setThreshold(1e-10);
      if (lu.rank() < k) continue;
      const VectorX x = lu.solve(b);
      for (int r = 0; r < k; ++r) lambda(J[r]) = x(r);
    }
    const VectorX w = M * lambda + d;
    if (lambda.minCoeff() >= -tol && w.minCoeff() >= -tol) solutions.push_back(lambda.cwiseMax(0.0));
  }
  return solutions;
}

// Unique solution of the box LCP lo ≤ λ ≤ hi for symmetric positive definite
// M by enumerating all 3ⁿ assignments of each index to {lo, hi, free}.
std::vector<VectorX> brute_force_box(const MatrixX& M, const VectorX& d, const VectorX& lo, const VectorX& hi,
                                     double tol = 1e-9) {
  const int n = static_cast<int>(d.size());
  int total = 1;
  for (int i = 0; i < n; ++i) total *= 3;
  std::vector<VectorX> solutions;
  for (int code = 0; code < total; ++code) {
    std::vector<int> state(n), F;
    VectorX lambda = VectorX::Zero(n);
    bool finite = true;
    for (int i = 0, c = code; i < n; ++i, c /= 3) {
      state[i] = c % 3;  // 0 at lo, 1 at hi, 2 free
      if (state[i] == 0) lambda(i) = lo(i);
      if (state[i] == 1) lambda(i) = hi(i);
      if (state[i] == 2) F.push_back(i);
      if (state[i] < 2 && !std::isfinite(lambda(i))) finite = false;
    }
    if (!finite) continue;
    const int k = static_cast<int>(F.size());
    if (k > 0) {
      MatrixX A(k, k);
      VectorX b(k);
      for (int r = 0; r < k; ++r) {
        b(r) = -d(F[r]);
        for (int j = 0; j < n; ++j)
          if (state[j] < 2) b(r) -= M(F[r], j) * lambda(j);
        for (int c = 0; c < k; ++c) A(r, c) = M(F[r], F[c]);
      }
      const VectorX x = A.fullPivLu().solve(b);
      for (int r = 0; r < k; ++r) lambda(F[r]) = x(r);
    }
    const VectorX w = M * lambda + d;
    bool ok = true;
    for (int i = 0; i < n; ++i) {
      ok = ok && lambda(i) >= lo(i) - tol && lambda(i) <= hi(i) + tol;
      if (state[i] == 0) ok = ok && w(i) >= -tol;
      if (state[i] == 1) ok = ok && w(i) <= tol;
    }
    if (ok) solutions.push_back(lambda);
  }
  return solutions;
}

// The invariants every result must satisfy, whatever its status: sizes, w
// recomputed from λ, the residual equal to lcp_residual recomputed here, and
// Solved only with residual ≤ tolerance.
void expect_consistent(const LcpResult& r, const MatrixX& M, const VectorX& d) {
  ASSERT_NE(r.status, LcpStatus::InvalidInput) << r.message;
  ASSERT_EQ(r.lambda.size(), d.size());
  ASSERT_EQ(r.w.size(), d.size());
  if (d.size() == 0) return;
  const VectorX w = M * r.lambda + d;
  // w is Mλ + d evaluated by the solver; agreement to rounding of the terms.
  const double scale = 1.0 + d.cwiseAbs().maxCoeff() + M.cwiseAbs().maxCoeff() * r.lambda.cwiseAbs().sum();
  EXPECT_LE((r.w - w).cwiseAbs().maxCoeff(), 1e-13 * scale);
  EXPECT_DOUBLE_EQ(r.residual, lcp_residual(M, d, r.lambda));
  EXPECT_FALSE(r.message.empty());
  if (r.status == LcpStatus::Solved) {
    EXPECT_LE(r.residual, r.tolerance) << r.message;
    EXPECT_GE(r.lambda.minCoeff(), 0.0);
  }
}

// Checks r against the brute-force solution set of a problem whose
// solution, if any, has a unique w (P-matrices and symmetric PSD M).
void expect_matches_brute_force(const LcpResult& r, const MatrixX& M, const VectorX& d, bool unique_lambda,
                                const std::string& what) {
  SCOPED_TRACE(what);
  expect_consistent(r, M, d);
  const std::vector<VectorX> all = brute_force_lcp(M, d);
  if (all.empty()) {
    EXPECT_EQ(r.status, LcpStatus::Infeasible) << r.message;
    return;
  }
  ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
  const VectorX w_ref = M * all.front() + d;
  // Tolerances: the data are O(1) and the problems small and well scaled;
  // 1e-8 is far above rounding and far below any difference between bases.
  for (const VectorX& s : all) ASSERT_LE((M * s + d - w_ref).cwiseAbs().maxCoeff(), 1e-8) << "w not unique?";
  EXPECT_LE((r.w - w_ref).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LE((M * r.lambda - (w_ref - d)).cwiseAbs().maxCoeff(), 1e-8);
  if (unique_lambda) {
    EXPECT_LE((r.lambda - all.front()).cwiseAbs().maxCoeff(), 1e-8);
  }
}

LcpProblem problem(const MatrixX& M, const VectorX& d) { return LcpProblem{M, d}; }

VectorX vec(std::initializer_list<double> v) {
  VectorX x(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double e : v) x(i++) = e;
  return x;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

struct Allocations {
  long new_calls = 0;
  long malloc_calls = 0;
};

// Runs f with every allocation counted and Eigen's malloc forbidden.
template <class F>
Allocations count_allocations(F&& f) {
  t_new_calls = 0;
  g_malloc_calls = 0;
  Eigen::internal::set_is_malloc_allowed(false);
  t_counting = g_counting = true;
  f();
  t_counting = g_counting = false;
  Eigen::internal::set_is_malloc_allowed(true);
  return {t_new_calls, g_malloc_calls};
}

// ---- common pieces -------------------------------------------------------------

TEST(LcpCommon, BasisInverseFollowsTheExplicitInverseOfItsBasis) {
  // detail::BasisInverse stores only the columns of B⁻¹ that differ from the
  // identity. Fact: after every pivot it equals the LU inverse of the basis
  // B built explicitly (column r replaced by the entering column), as do its
  // product B⁻¹a, x = B⁻¹d and the returned ‖B⁻¹‖∞; its pivots allocate nothing.
  std::mt19937_64 g(17);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int n = 12;
  detail::BasisInverse Binv;
  Binv.reserve(n);
  Binv.reset(n);
  MatrixX B = MatrixX::Identity(n, n);
  VectorX d(n), x(n), a(n), col(n), e(n);
  for (int i = 0; i < n; ++i) d(i) = u(g);
  x = d;
  int pivots = 0;
  for (int step = 0; step < 40; ++step) {
    for (int i = 0; i < n; ++i) a(i) = u(g);
    // Rows 0-5 first (a basis that touches part of the rows), then any row.
    const int r = static_cast<int>(std::uniform_int_distribution<int>(0, step < 15 ? 5 : n - 1)(g));
    Binv.times(a, col);
    const MatrixX inv_before = B.inverse();
    ASSERT_LT((col - inv_before * a).norm(), 1e-10 * (1.0 + (inv_before * a).norm())) << step;
    if (std::abs(col(r)) < 0.2) continue;  // (a well-conditioned pivot)
    double growth = 0.0;
    const Allocations allocs = count_allocations([&] { growth = Binv.pivot(x, col, r); });
    EXPECT_EQ(allocs.new_calls, 0);
    B.col(r) = a;
    ++pivots;
    const MatrixX inv = B.inverse();
    double worst = 0.0;
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k) worst = std::max(worst, std::abs(Binv(i, k) - inv(i, k)));
    EXPECT_LT(worst, 1e-9 * (1.0 + inv.cwiseAbs().maxCoeff())) << "after pivot " << pivots;
    EXPECT_LT((x - inv * d).norm(), 1e-9 * (1.0 + (inv * d).norm()));
    EXPECT_NEAR(growth, inv.cwiseAbs().rowwise().sum().maxCoeff(), 1e-9 * growth);
    for (int j = 0; j < n; ++j) {
      Binv.column(j, e);
      EXPECT_LT((e - inv.col(j)).norm(), 1e-9 * (1.0 + inv.col(j).norm()));
    }
  }
  EXPECT_GT(pivots, 20);
}

TEST(LcpCommon, StatusNames) {
  EXPECT_STREQ(to_string(LcpStatus::Solved), "Solved");
  EXPECT_STREQ(to_string(LcpStatus::Infeasible), "Infeasible");
  EXPECT_STREQ(to_string(LcpStatus::IterationLimit), "IterationLimit");
  EXPECT_STREQ(to_string(LcpStatus::InvalidInput), "InvalidInput");
  EXPECT_STREQ(to_string(LcpStatus::Failed), "Failed");
}

TEST(LcpCommon, ResidualIsTheNaturalMapNorm) {
  // w = Mλ + d = (1·2 − 2, 0·2 + 3, −1) = (0, 3, −1) for λ = (2, 0.5, 0).
  MatrixX M = MatrixX::Zero(3, 3);
  M(0, 0) = 1.0;
  const VectorX d = vec({-2.0, 3.0, -1.0});
  EXPECT_DOUBLE_EQ(lcp_residual(M, d, vec({2.0, 0.0, 0.0})), 1.0);   // w_2 = −1
  EXPECT_DOUBLE_EQ(lcp_residual(M, d, vec({2.0, 0.5, 1.0})), 1.0);   // min(0.5, 3), min(1, −1)
  EXPECT_DOUBLE_EQ(lcp_residual(M, d, vec({2.0, -0.25, 0.0})), 1.0);
  EXPECT_DOUBLE_EQ(lcp_residual(M.topLeftCorner(1, 1), d.head(1), vec({2.0})), 0.0);
  EXPECT_DOUBLE_EQ(lcp_residual(M.topLeftCorner(1, 1), d.head(1), vec({-1.0})), 3.0);  // λ=−1, w=−3
  // The box residual with lo = 0, hi = +∞ is the same number.
  const VectorX lam = vec({1.5, 0.25, 2.0});
  EXPECT_EQ(box_lcp_residual(M, d, VectorX::Zero(3), VectorX::Constant(3, kInf), lam), lcp_residual(M, d, lam));
}

TEST(LcpCommon, DefaultZeroToleranceIsScaledToM) {
  MatrixX M(2, 2);
  M << 1.0, -3.0, 0.5, 2.0;  // ‖M‖∞ = 4
  EXPECT_DOUBLE_EQ(lcp_zero_tolerance(M), 2.0 * 4.0 * 10.0 * std::numeric_limits<double>::epsilon());
}

TEST(LcpCommon, FarkasCertificateIsChecked) {
  // Example 11.1's slot: u = (1, 1) has Mᵀu = 0 exactly and uᵀd = d₁ + d₂.
  MatrixX M(2, 2);
  M << 3.0, -3.0, -3.0, 3.0;
  FarkasCheck c = check_farkas_certificate(M, vec({-1.0, 0.5}), vec({1.0, 1.0}));
  EXPECT_TRUE(c.valid);
  EXPECT_EQ(c.bound, kInf);
  EXPECT_DOUBLE_EQ(c.uTd, -0.5);
  // d₁ + d₂ ≥ 0: no evidence.
  EXPECT_FALSE(check_farkas_certificate(M, vec({-1.0, 1.5}), vec({1.0, 1.0})).valid);
  // A slightly wrong direction: Mᵀu = (0.03, −0.03) bounds feasible λ by
  // ‖λ‖₁ ≥ −uᵀd/0.03 = 0.505/0.03 only, far below the 1/√ε threshold.
  c = check_farkas_certificate(M, vec({-1.0, 0.5}), vec({1.0, 0.99}));
  EXPECT_FALSE(c.valid);
  EXPECT_NEAR(c.bound, 0.505 / 0.03, 1e-9);
  // Negative entries are no certificate.
  EXPECT_FALSE(check_farkas_certificate(M, vec({-1.0, 0.5}), vec({1.0, -1.0})).valid);
}

TEST(LcpCommon, InvalidInputIsNamed) {
  struct Case {
    MatrixX M;
    VectorX d;
    std::string expected;
  };
  MatrixX nan_M = MatrixX::Identity(3, 3);
  nan_M(1, 0) = kNaN;
  MatrixX inf_M = MatrixX::Identity(3, 3);
  inf_M(2, 2) = kInf;
  const std::vector<Case> cases = {
      {MatrixX::Identity(3, 4), VectorX::Ones(3), "M is 3x4, must be square"},
      {MatrixX::Identity(3, 3), VectorX::Ones(2), "d has 2 entries, M is 3x3"},
      {nan_M, VectorX::Ones(3), "M(1,0) is nan"},
      {inf_M, VectorX::Ones(3), "M(2,2) is inf"},
      {MatrixX::Identity(3, 3), vec({1.0, 1.0, kNaN}), "d[2] is nan"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expected);
    const LcpProblem p = problem(c.M, c.d);
    for (const LcpResult& r : {solve_lemke(p), solve_pivoting(p), solve_pgs(p)}) {
      EXPECT_EQ(r.status, LcpStatus::InvalidInput);
      EXPECT_TRUE(contains(r.message, c.expected)) << r.message;
      EXPECT_EQ(r.lambda.size(), 0);
    }
    LemkeSolver lemke;
    EXPECT_EQ(lemke.solve(c.M, c.d).status, LcpStatus::InvalidInput);
    EXPECT_TRUE(contains(lemke.solve(c.M, c.d).message, c.expected));
  }
}

TEST(LcpCommon, InvalidOptionsAreNamed) {
  const LcpProblem p = problem(MatrixX::Identity(2, 2), -VectorX::Ones(2));
  LemkeOptions lo;
  lo.zero_tolerance = -1.0;
  EXPECT_EQ(solve_lemke(p, lo).status, LcpStatus::InvalidInput);
  EXPECT_TRUE(contains(solve_lemke(p, lo).message, "zero_tolerance"));
  PivotingOptions po;
  po.max_pivots = -3;
  EXPECT_TRUE(contains(solve_pivoting(p, po).message, "max_pivots"));
  // Both pivoting solvers check the four options they share, naming their own struct.
  for (int which = 0; which < 4; ++which) {
    SCOPED_TRACE(which);
    LemkeOptions l;
    PivotingOptions v;
    const char* expected[] = {"max_pivots = -1 is negative", "zero_tolerance = inf must be positive and finite",
                              "residual_tolerance = -1 must be >= 0", "max_amplification = 0 must be positive"};
    if (which == 0) l.max_pivots = v.max_pivots = -1;
    if (which == 1) l.zero_tolerance = v.zero_tolerance = kInf;
    if (which == 2) l.residual_tolerance = v.residual_tolerance = -1.0;
    if (which == 3) l.max_amplification = v.max_amplification = 0.0;
    const LcpResult rl = solve_lemke(p, l);
    const LcpResult rv = solve_pivoting(p, v);
    EXPECT_EQ(rl.status, LcpStatus::InvalidInput);
    EXPECT_EQ(rv.status, LcpStatus::InvalidInput);
    EXPECT_TRUE(contains(rl.message, std::string("LemkeOptions::") + expected[which])) << rl.message;
    EXPECT_TRUE(contains(rv.message, std::string("PivotingOptions::") + expected[which])) << rv.message;
  }
  PgsOptions go;
  go.relaxation = 2.5;
  EXPECT_TRUE(contains(solve_pgs(p, go).message, "relaxation = 2.5"));
}

TEST(LcpCommon, EmptyProblemIsSolvedWithoutPivots) {
  const LcpProblem p = problem(MatrixX(0, 0), VectorX(0));
  for (const LcpResult& r : {solve_lemke(p), solve_pivoting(p), solve_pgs(p)}) {
    EXPECT_EQ(r.status, LcpStatus::Solved) << r.message;
    EXPECT_EQ(r.pivots, 0);
    EXPECT_EQ(r.lambda.size(), 0);
    EXPECT_EQ(r.residual, 0.0);
  }
}

// ---- literature problems, for both pivoting methods ----------------------------------

using PivotSolve = LcpResult (*)(const LcpProblem&);
LcpResult lemke_default(const LcpProblem& p) { return solve_lemke(p); }
LcpResult pivoting_default(const LcpProblem& p) { return solve_pivoting(p); }
const std::vector<std::pair<const char*, PivotSolve>> kPivotingMethods = {{"lemke", lemke_default},
                                                                          {"pivoting", pivoting_default}};

TEST(LcpLiterature, RestingMassUnderGravity) {
  // One contact, M = [1], d = [−9.8]: the support force cancels gravity.
  for (const auto& [name, solve] : kPivotingMethods) {
    SCOPED_TRACE(name);
    const MatrixX M = MatrixX::Ones(1, 1);
    const VectorX d = vec({-9.8});
    const LcpResult r = solve(problem(M, d));
    expect_consistent(r, M, d);
    ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
    EXPECT_NEAR(r.lambda(0), 9.8, 1e-14);
    EXPECT_NEAR(r.w(0), 0.0, 1e-14);
    EXPECT_EQ(r.basic, std::vector<int>{0});
  }
}

TEST(LcpLiterature, NonnegativeDNeedsNoPivot) {
  Rng rng(7);
  const MatrixX M = random_psd(rng, 4, 4);
  const VectorX d = vec({0.0, 1.0, 2.0, 0.0});
  for (const auto& [name, solve] : kPivotingMethods) {
    SCOPED_TRACE(name);
    const LcpResult r = solve(problem(M, d));
    expect_consistent(r, M, d);
    EXPECT_EQ(r.status, LcpStatus::Solved);
    EXPECT_EQ(r.pivots, 0);
    EXPECT_TRUE(r.lambda.isZero(0.0));
    EXPECT_TRUE(r.basic.empty());
  }
}

TEST(LcpLiterature, MurtyExampleHasSolutionLastUnitVector) {
  // M = I + 2·(strict upper ones), d = −1 (Murty 1978): a P-matrix, not
  // symmetric, whose unique solution is λ = e_n (w = (1, …, 1, 0)).
  for (const char* name : {"lemke", "pivoting"}) {
    for (int n = 1; n <= 16; ++n) {
      SCOPED_TRACE(std::string(name) + " n = " + std::to_string(n));
      const MatrixX M = murty_matrix(n);
      const VectorX d = -VectorX::Ones(n);
      PivotingOptions o;
      o.max_pivots = 1 << 17;
      const LcpResult r = name[0] == 'l' ? solve_lemke(problem(M, d)) : solve_pivoting(problem(M, d), o);
      expect_consistent(r, M, d);
      ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
      VectorX expected = VectorX::Zero(n);
      expected(n - 1) = 1.0;
      EXPECT_LE((r.lambda - expected).cwiseAbs().maxCoeff(), 1e-12);
      if (name[0] == 'l') {
        // The lexicographic first pivot puts z₀ in row n (all rows tie); λ_n
        // enters, z₀ = 1 − λ_n + w_n is the only basic variable that
        // decreases (w_i = λ_n + w_n for i < n), so it leaves: 2 pivots.
        EXPECT_EQ(r.pivots, 2);
      } else {
        // Least-index principal pivoting takes 2ⁿ − 1 pivots here: the
        // example was built to show exactly that (Murty 1978).
        EXPECT_EQ(r.pivots, (1 << n) - 1);
      }
    }
  }
}

TEST(LcpLiterature, PsdNonUniqueSolutionsShareW) {
  // M = ones(2,2), d = −1: every λ ≥ 0 with λ₁ + λ₂ = 1 solves it, w = 0.
  const MatrixX M = MatrixX::Ones(2, 2);
  const VectorX d = -VectorX::Ones(2);
  for (const auto& [name, solve] : kPivotingMethods) {
    SCOPED_TRACE(name);
    const LcpResult r = solve(problem(M, d));
    expect_consistent(r, M, d);
    ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
    EXPECT_NEAR(r.lambda.sum(), 1.0, 1e-14);
    EXPECT_LE(r.w.cwiseAbs().maxCoeff(), 1e-14);
    EXPECT_LE(r.residual, 1e-14);
    EXPECT_EQ(r.basic.size(), 1u);  // a basic solution: one independent column
  }
}

TEST(LcpLiterature, NegativeScalarIsInfeasible) {
  // M = [−1], d = [−1]: w = −λ − 1 < 0 for every λ ≥ 0.
  const MatrixX M = -MatrixX::Ones(1, 1);
  const VectorX d = -VectorX::Ones(1);
  const LcpResult lemke = solve_lemke(problem(M, d));
  expect_consistent(lemke, M, d);
  EXPECT_EQ(lemke.status, LcpStatus::Infeasible);
  EXPECT_TRUE(contains(lemke.message, "secondary ray at pivot 1, entering variable lambda[0]")) << lemke.message;
  // M is outside the pivoting method's class; it must not claim a solution.
  const LcpResult piv = solve_pivoting(problem(M, d));
  expect_consistent(piv, M, d);
  EXPECT_NE(piv.status, LcpStatus::Solved);
}

TEST(LcpLiterature, FeatherstoneDiscInNarrowingSlotIsInfeasible) {
  // RBDA Example 11.1: two contacts with n₂ = −n₁, so M = a[[1, −1], [−1, 1]]
  // (a > 0, PSD, singular). With d₁ + d₂ < 0 no contact forces exist: with
  // u = (1, 1), Mu = 0 and uᵀ(Mλ + d) = d₁ + d₂ < 0.
  for (double a : {0.5, 2.0, 1e3}) {
    for (const VectorX& d : {vec({-1.0, -0.5}), vec({1.0, -3.0}), vec({-2.0, 1.5}), vec({-1e-3, -1e-3})}) {
      MatrixX M(2, 2);
      M << a, -a, -a, a;
      for (const auto& [name, solve] : kPivotingMethods) {
        SCOPED_TRACE(std::string(name) + " a = " + std::to_string(a) + " d = (" + std::to_string(d(0)) + ", " +
                     std::to_string(d(1)) + ")");
        const LcpResult r = solve(problem(M, d));
        expect_consistent(r, M, d);
        EXPECT_EQ(r.status, LcpStatus::Infeasible) << r.message;
        EXPECT_TRUE(brute_force_lcp(M, d).empty());
      }
    }
  }
  // With d₁ + d₂ ≥ 0 the slot holds the disc: solvable.
  MatrixX M(2, 2);
  M << 2.0, -2.0, -2.0, 2.0;
  for (const auto& [name, solve] : kPivotingMethods)
    expect_matches_brute_force(solve(problem(M, vec({-1.0, 2.0}))), M, vec({-1.0, 2.0}), false, name);
}

TEST(LcpLiterature, CyclicDegenerateExample) {
  // M = [[1,2,0],[0,1,2],[2,0,1]], d = −1: a P-matrix (principal minors 1, 1,
  // 9) whose first ratio test ties in every row and whose later ones tie
  // again; the solution is λ = (1, 1, 1)/3, w = 0 (fully degenerate). Drake
  // keeps it as its Lemke cycling test.
  MatrixX M(3, 3);
  M << 1, 2, 0, 0, 1, 2, 2, 0, 1;
  const VectorX d = -VectorX::Ones(3);
  for (const auto& [name, solve] : kPivotingMethods) {
    SCOPED_TRACE(name);
    const LcpResult r = solve(problem(M, d));
    expect_consistent(r, M, d);
    ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
    EXPECT_LE((r.lambda - VectorX::Constant(3, 1.0 / 3.0)).cwiseAbs().maxCoeff(), 1e-14);
    EXPECT_LE(r.w.cwiseAbs().maxCoeff(), 1e-14);
  }
}

TEST(LcpLiterature, FloudasTestProblems) {
  // Floudas et al., Handbook of Test Problems in Local and Global
  // Optimization (1999), §10.2: problems with published solutions.
  {
    // 10.2.3 (Cottle): M indefinite and not copositive; unique solution.
    MatrixX M(3, 3);
    M << 0, -1, 2, 2, 0, -2, -1, 1, 0;
    const VectorX d = vec({-3, 6, -1});
    ASSERT_EQ(brute_force_lcp(M, d).size(), 1u);
    const LcpResult r = solve_lemke(problem(M, d));
    expect_consistent(r, M, d);
    ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
    EXPECT_LE((r.lambda - vec({0, 1, 3})).cwiseAbs().maxCoeff(), 1e-12);
    expect_consistent(solve_pivoting(problem(M, d)), M, d);  // outside its class: only honesty
  }
  {
    // 10.2.9: M = [[A, −e], [eᵀ, 0]] with A symmetric PSD, so M + Mᵀ is PSD
    // (M is copositive-plus); λ = ((l+16)/13, (l+16)/13, 2(23−l)/13,
    // (1286−9l)/13) for d = (50, 50, l, −6), 0 ≤ l ≤ 23, and (3, 3, 0, 83)
    // for l = 100.
    MatrixX M(4, 4);
    M << 11, 0, 10, -1, 0, 11, 10, -1, 10, 10, 21, -1, 1, 1, 1, 0;
    for (double l : {1.0, 16.0, 23.0, 100.0}) {
      SCOPED_TRACE("l = " + std::to_string(l));
      const VectorX d = vec({50, 50, l, -6});
      const VectorX expected = l <= 23 ? vec({(l + 16) / 13, (l + 16) / 13, 2 * (23 - l) / 13, (1286 - 9 * l) / 13})
                                       : vec({3, 3, 0, 83});
      const LcpResult r = solve_lemke(problem(M, d));
      expect_consistent(r, M, d);
      ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
      EXPECT_LE((r.lambda - expected).cwiseAbs().maxCoeff(), 1e-10);
      expect_consistent(solve_pivoting(problem(M, d)), M, d);
    }
  }
  {
    // 10.2.4: a bimatrix game. M ≥ 0 is copositive but not copositive-plus
    // (e₁ᵀMe₁ = 0 but (M + Mᵀ)e₁ ≠ 0). Solutions exist — among them
    // (1/90, 2/45, 1/90, 2/45) — yet Lemke with covering vector e may end on
    // a secondary ray. It must then say Failed, never Infeasible.
    MatrixX M(4, 4);
    M << 0, 0, 10, 20, 0, 0, 30, 15, 10, 20, 0, 0, 30, 15, 0, 0;
    const VectorX d = -VectorX::Ones(4);
    EXPECT_LE(lcp_residual(M, d, vec({1.0 / 90, 2.0 / 45, 1.0 / 90, 2.0 / 45})), 1e-15);
    for (const auto& [name, solve] : kPivotingMethods) {
      SCOPED_TRACE(name);
      const LcpResult r = solve(problem(M, d));
      expect_consistent(r, M, d);
      EXPECT_EQ(r.status, LcpStatus::Failed) << r.message;
      EXPECT_TRUE(contains(r.message, "no Farkas certificate")) << r.message;
    }
  }
}

TEST(LcpLiterature, NearlyParallelSlotJams) {
  // Example 11.1 with walls a small angle δ apart: n₂ = −(cos δ, sin δ), so
  // M = [[1, −c], [−c, 1]] with c = cos δ (positive definite for δ > 0) and,
  // for d = (−1, −1), λ₁ = λ₂ = 1/(1 − c): the disc wedges in with forces
  // that grow like 2/δ². (1 − c is exact in floating point, Sterbenz.)
  auto slot = [](double delta) {
    MatrixX M(2, 2);
    const double c = std::cos(delta);
    M << 1.0, -c, -c, 1.0;
    return M;
  };
  const VectorX d = -VectorX::Ones(2);
  for (const auto& [name, solve] : kPivotingMethods) {
    SCOPED_TRACE(name);
    {
      // δ = 10⁻²: forces ~2·10⁴, amplification well below 1/√ε.
      const MatrixX M = slot(1e-2);
      const LcpResult r = solve(problem(M, d));
      expect_consistent(r, M, d);
      ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
      const double expected = 1.0 / (1.0 + M(0, 1));
      EXPECT_NEAR(r.lambda(0) / expected, 1.0, 1e-10);
      EXPECT_NEAR(r.lambda(1) / expected, 1.0, 1e-10);
    }
    {
      // δ = 10⁻⁷: forces ~10¹⁴ d/M, beyond what double precision can verify:
      // never Solved; Infeasible only with a certificate stating the size.
      const MatrixX M = slot(1e-7);
      const LcpResult r = solve(problem(M, d));
      expect_consistent(r, M, d);
      EXPECT_NE(r.status, LcpStatus::Solved) << r.message;
      if (r.status == LcpStatus::Infeasible) {
        EXPECT_TRUE(contains(r.message, "numerically infeasible")) << r.message;
      }
    }
  }
  // δ = 10⁻⁴: forces ~2·10⁸ exceed the default max_amplification; raising
  // it accepts them, accurate to about κ·ε ≈ 10⁻⁸.
  const MatrixX M = slot(1e-4);
  const double expected = 1.0 / (1.0 + M(0, 1));
  EXPECT_NE(solve_lemke(problem(M, d)).status, LcpStatus::Solved);
  LemkeOptions lo;
  lo.max_amplification = 1e10;
  PivotingOptions po;
  po.max_amplification = 1e10;
  for (const LcpResult& r : {solve_lemke(problem(M, d), lo), solve_pivoting(problem(M, d), po)}) {
    expect_consistent(r, M, d);
    ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
    EXPECT_NEAR(r.lambda(0) / expected, 1.0, 1e-6);
  }
}

TEST(LcpLiterature, NearDependentConeColumnsNeedATieWindowThatDoesNotGrow) {
  // A humanoid's force LCP on both flat feet (tests/data: 8 sole corners at
  // rest, 3 joint limits, an 8-direction cone; n = 83). Every contact sticks,
  // so M is the copositive-plus cone matrix and a solution exists. One sole's
  // edge lies 1e-5 rad off the first cone direction, so two corners' cone
  // columns nearly coincide: Lemke pivots on a genuine 5e-9 entry, ‖B⁻¹‖∞
  // reaches 10⁹, and a tie window grown with it lets z₀ leave from three
  // times the minimum ratio, into an infeasible basis. With the window that
  // does not grow the method reaches a solution, checked here from the
  // LCP's own conditions.
  std::ifstream in(std::string(PLUME_TEST_DATA_DIR) + "/lcp_two_feet_near_dependent_cone.txt");
  ASSERT_TRUE(in) << "tests/data/lcp_two_feet_near_dependent_cone.txt";
  std::string line;
  while (in.peek() == '#') std::getline(in, line);
  int n = 0;
  in >> n;
  ASSERT_EQ(n, 83);
  MatrixX M(n, n);
  VectorX d(n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) in >> M(i, j);
  for (int i = 0; i < n; ++i) in >> d(i);
  ASSERT_TRUE(in && M.allFinite() && d.allFinite());

  const LcpResult grown = solve_lemke(problem(M, d));
  expect_consistent(grown, M, d);
  EXPECT_NE(grown.status, LcpStatus::Solved) << grown.message;  // (why ContactSolver retries)

  LemkeOptions narrow;
  narrow.growth_scaled_ties = false;
  const LcpResult r = solve_lemke(problem(M, d), narrow);
  expect_consistent(r, M, d);
  ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
  const VectorX w = M * r.lambda + d;
  const double scale = d.cwiseAbs().maxCoeff() + M.cwiseAbs().maxCoeff() * r.lambda.cwiseAbs().maxCoeff();
  EXPECT_GE(r.lambda.minCoeff(), 0.0);
  EXPECT_GE(w.minCoeff(), -1e-12 * scale);
  EXPECT_LE(r.lambda.cwiseProduct(w).cwiseAbs().maxCoeff(), 1e-12 * scale * r.lambda.cwiseAbs().maxCoeff());
  // The soles carry the body: their normal forces (the first 8 rows) are not all zero.
  EXPECT_GT(r.lambda.head(8).sum(), 1.0);
}

TEST(LcpLiterature, UnitsDoNotMatter) {
  // LCP(SMS, Sd) with S = diag(s) > 0 has the solution S⁻¹λ (w scales by S):
  // contacts on bodies of very different mass, or forces next to torques.
  Rng rng(2024);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 2 + trial % 10;
    const MatrixX M = random_psd(rng, n, n);
    const VectorX d = rng.vector(n, -1.0, 1.0);
    VectorX s(n);
    for (int i = 0; i < n; ++i) s(i) = std::pow(10.0, rng.uniform(-4.0, 4.0));
    const MatrixX Ms = s.asDiagonal() * M * s.asDiagonal();
    const VectorX ds = s.cwiseProduct(d);
    for (const auto& [name, solve] : kPivotingMethods) {
      SCOPED_TRACE(std::string(name) + " trial " + std::to_string(trial));
      const LcpResult r = solve(problem(M, d));
      const LcpResult q = solve(problem(Ms, ds));
      expect_consistent(q, Ms, ds);
      ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
      ASSERT_EQ(q.status, LcpStatus::Solved) << q.message;
      // The data are O(1) after unscaling; κ(M) of these draws stays below
      // about 10⁴, so 1e-8 is a safe bound on the disagreement.
      EXPECT_LE((s.cwiseProduct(q.lambda) - r.lambda).cwiseAbs().maxCoeff(), 1e-8 * (1 + r.lambda.cwiseAbs().maxCoeff()));
    }
  }
}

// ---- random problems against brute force -------------------------------------

TEST(LcpRandom, PMatricesMatchBruteForce) {
  Rng rng(20240601);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + trial % 6;
    const MatrixX M = random_p_matrix(rng, n, trial % 2);
    const VectorX d = rng.vector(n, -1.0, 1.0);
    const std::string what = "trial " + std::to_string(trial);
    expect_matches_brute_force(solve_lemke(problem(M, d)), M, d, true, "lemke " + what);
    expect_matches_brute_force(solve_pivoting(problem(M, d)), M, d, true, "pivoting " + what);
  }
}

TEST(LcpRandom, PsdMatchesBruteForce) {
  // Full-rank and rank-deficient M = AᵀA; the rank-deficient ones are often
  // infeasible, which brute force and the solvers must agree on.
  Rng rng(777);
  int infeasible = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 1 + trial % 6;
    const int rank = 1 + rng.integer(0, n - 1);
    const MatrixX M = random_psd(rng, n, rank);
    const VectorX d = rng.vector(n, -1.0, 1.0);
    const std::string what = "trial " + std::to_string(trial) + " rank " + std::to_string(rank);
    const LcpResult a = solve_lemke(problem(M, d));
    expect_matches_brute_force(a, M, d, rank == n, "lemke " + what);
    expect_matches_brute_force(solve_pivoting(problem(M, d)), M, d, rank == n, "pivoting " + what);
    infeasible += a.status == LcpStatus::Infeasible;
  }
  EXPECT_GT(infeasible, 10);  // the infeasible branch was exercised
}

TEST(LcpRandom, DegenerateIntegerProblemsTerminateCorrectly) {
  // Small integer data make ties in the ratio test the rule rather than the
  // exception: repeated equal entries of d, zeros in d, zero rows and
  // columns of M. The lexicographic rule keeps Lemke from cycling.
  Rng rng(99);
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 2 + trial % 5;
    MatrixX M;
    bool unique = false;
    if (trial % 2 == 0) {
      const MatrixX A = rng.integer_matrix(1 + rng.integer(0, n), n, -1, 1);
      M = A.transpose() * A;  // PSD, often with zero rows/columns
    } else {
      M = rng.integer_matrix(n, n, -2, 2).triangularView<Eigen::StrictlyUpper>();
      M.diagonal().setOnes();  // P-matrix
      unique = true;
    }
    VectorX d = rng.integer_vector(n, -1, 1);
    if (trial % 3 == 0) d.setConstant(-1.0);  // all ties at the first pivot
    const std::string what = "trial " + std::to_string(trial);
    expect_matches_brute_force(solve_lemke(problem(M, d)), M, d, unique, "lemke " + what);
    expect_matches_brute_force(solve_pivoting(problem(M, d)), M, d, unique, "pivoting " + what);
  }
}

TEST(LcpRandom, ZeroRowAndColumn) {
  // Index 1 does not interact: λ₁ is free when d₁ = 0, impossible when d₁ < 0.
  MatrixX M = MatrixX::Zero(3, 3);
  M(0, 0) = 2.0;
  M(2, 2) = 1.0;
  M(0, 2) = M(2, 0) = 0.5;
  for (const auto& [name, solve] : kPivotingMethods) {
    expect_matches_brute_force(solve(problem(M, vec({-1.0, 0.0, -1.0}))), M, vec({-1.0, 0.0, -1.0}), false, name);
    const LcpResult r = solve(problem(M, vec({-1.0, -0.5, -1.0})));
    expect_consistent(r, M, vec({-1.0, -0.5, -1.0}));
    EXPECT_EQ(r.status, LcpStatus::Infeasible) << name << ": " << r.message;
  }
  const LcpResult zero = solve_lemke(problem(MatrixX::Zero(2, 2), vec({0.0, -1.0})));
  EXPECT_EQ(zero.status, LcpStatus::Infeasible);
  EXPECT_TRUE(contains(zero.message, "M is zero and d[1] = -1")) << zero.message;
}

TEST(LcpRandom, OutsideTheClassesNeverAWrongAnswer) {
  // Arbitrary integer matrices: the methods carry no guarantee here, but a
  // Solved must be a solution and an Infeasible must be right.
  Rng rng(4242);
  int solved = 0, infeasible = 0, other = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int n = 1 + trial % 4;
    const MatrixX M = rng.integer_matrix(n, n, -2, 2);
    const VectorX d = rng.integer_vector(n, -2, 2);
    const bool solvable = !brute_force_lcp(M, d).empty();
    for (const auto& [name, solve] : kPivotingMethods) {
      SCOPED_TRACE(std::string(name) + " trial " + std::to_string(trial));
      const LcpResult r = solve(problem(M, d));
      expect_consistent(r, M, d);
      if (r.status == LcpStatus::Solved) ++solved;
      if (r.status == LcpStatus::Infeasible) {
        ++infeasible;
        EXPECT_FALSE(solvable) << r.message;
      } else if (r.status != LcpStatus::Solved) {
        ++other;
      }
    }
  }
  std::printf("[          ] outside the classes: %d solved, %d infeasible, %d failed/limit\n", solved, infeasible,
              other);
}

// EnumerationSolver (the contact solver's last resort after Lemke) against
// the test's own brute force and the defining conditions.
TEST(LcpEnumeration, PMatricesGiveTheUniqueSolution) {
  Rng rng(77);
  EnumerationSolver solver;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + trial % 8;
    const MatrixX M = random_p_matrix(rng, n, trial % 2);
    const VectorX d = rng.vector(n, -1.0, 1.0);
    const std::vector<VectorX> expected = brute_force_lcp(M, d);
    ASSERT_EQ(expected.size(), 1u);
    LcpResult r;
    solver.solve(M, d, r);
    ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
    EXPECT_LT((r.lambda - expected[0]).cwiseAbs().maxCoeff(), 1e-9) << "trial " << trial;
    EXPECT_LT((r.w - (M * r.lambda + d)).cwiseAbs().maxCoeff(), 1e-12);
  }
}

TEST(LcpEnumeration, SolvesWhatLemkeCannotOutsideTheClasses) {
  // Arbitrary integer matrices (not copositive-plus): whenever a solution
  // exists the enumeration finds one, including where Lemke stops on a
  // secondary ray that proves nothing; when none exists it says so.
  Rng rng(4242);
  EnumerationSolver solver;
  LemkeSolver lemke;
  int rescued = 0, none = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int n = 1 + trial % 5;
    const MatrixX M = rng.integer_matrix(n, n, -2, 2);
    const VectorX d = rng.integer_vector(n, -2, 2);
    const bool solvable = !brute_force_lcp(M, d).empty();
    LcpResult r;
    solver.solve(M, d, r);
    SCOPED_TRACE("trial " + std::to_string(trial));
    if (solvable) {
      ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
      EXPECT_GE(r.lambda.minCoeff(), 0.0);
      EXPECT_GE((M * r.lambda + d).minCoeff(), -1e-12);
      EXPECT_LT(std::abs(r.lambda.dot(M * r.lambda + d)), 1e-12);
      if (lemke.solve(M, d).status != LcpStatus::Solved) ++rescued;
    } else {
      EXPECT_EQ(r.status, LcpStatus::Failed);
      EXPECT_TRUE(contains(r.message, "no solution among the 2^")) << r.message;
      ++none;
    }
  }
  EXPECT_GT(rescued, 0);  // the point of the fallback
  std::printf("[          ] enumeration: %d solved where Lemke did not, %d without solution\n", rescued, none);
}

TEST(LcpEnumeration, PrefersTheSmallestActiveSet) {
  // A ray of solutions λ = (1 + t, t), t ≥ 0 (w = 0 on all of it); λ = 0 is
  // not one (w₀ = −1). The enumeration returns the one of least support.
  const MatrixX M = (MatrixX(2, 2) << 1, -1, -1, 1).finished();
  const VectorX d = vec({-1, 1});
  EnumerationSolver solver;
  LcpResult r;
  solver.solve(M, d, r);
  ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
  EXPECT_EQ(r.basic, std::vector<int>{0});
  EXPECT_NEAR(r.lambda(0), 1.0, 1e-15);
  EXPECT_EQ(r.lambda(1), 0.0);
}

TEST(LcpEnumeration, RefusesLargeProblemsAndBadInput) {
  EnumerationSolver solver;
  LcpResult r;
  solver.solve(MatrixX::Identity(13, 13), VectorX::Constant(13, -1.0), r);
  EXPECT_EQ(r.status, LcpStatus::Failed);
  EXPECT_TRUE(contains(r.message, "n = 13 exceeds max_size = 12")) << r.message;
  solver.solve(MatrixX::Identity(2, 2), vec({1.0, kNaN}), r);
  EXPECT_EQ(r.status, LcpStatus::InvalidInput);
  EXPECT_TRUE(contains(r.message, "d[1] is nan")) << r.message;
  EnumerationOptions o;
  o.max_size = 30;
  EnumerationSolver bad(o);
  bad.solve(MatrixX::Identity(2, 2), vec({1.0, 1.0}), r);
  EXPECT_EQ(r.status, LcpStatus::InvalidInput);
  EXPECT_TRUE(contains(r.message, "max_size = 30")) << r.message;
}

TEST(LcpRandom, RedundantContactsLemkeAgreesWithPivoting) {
  // More contacts than degrees of freedom: M = TᵀH⁻¹T-like of rank n/2, for
  // n up to 32, where brute force is out of reach. The two methods check
  // each other: both settle every problem (Solved or Infeasible), agree on
  // which, and agree on w (unique for symmetric PSD M).
  Rng rng(1234);
  for (int n : {8, 16, 32}) {
    int infeasible = 0;
    for (int trial = 0; trial < 40; ++trial) {
      SCOPED_TRACE("n = " + std::to_string(n) + " trial " + std::to_string(trial));
      const MatrixX M = random_psd(rng, n, n / 2);
      const VectorX d = rng.vector(n, -1.0, 1.0);
      const LcpResult a = solve_lemke(problem(M, d));
      const LcpResult b = solve_pivoting(problem(M, d));
      expect_consistent(a, M, d);
      expect_consistent(b, M, d);
      ASSERT_TRUE(a.status == LcpStatus::Solved || a.status == LcpStatus::Infeasible) << a.message;
      ASSERT_EQ(a.status, b.status) << a.message << "\n" << b.message;
      if (a.status == LcpStatus::Solved) {
        EXPECT_LE((a.w - b.w).cwiseAbs().maxCoeff(), 1e-8);
      } else {
        ++infeasible;
      }
    }
    EXPECT_GT(infeasible, 0);
  }
}

TEST(LcpRandom, ResultsCarryTheBasis) {
  // λ is zero off the reported basis, and the basic columns are independent.
  Rng rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    const int n = 6;
    const MatrixX M = random_psd(rng, n, 3);
    const VectorX d = rng.vector(n, -1.0, 1.0);
    for (const auto& [name, solve] : kPivotingMethods) {
      const LcpResult r = solve(problem(M, d));
      if (r.status != LcpStatus::Solved) continue;
      for (int i = 0; i < n; ++i)
        if (std::find(r.basic.begin(), r.basic.end(), i) == r.basic.end()) {
          EXPECT_EQ(r.lambda(i), 0.0);
        }
      MatrixX MJJ(r.basic.size(), r.basic.size());
      for (std::size_t a = 0; a < r.basic.size(); ++a)
        for (std::size_t b = 0; b < r.basic.size(); ++b) MJJ(a, b) = M(r.basic[a], r.basic[b]);
      EXPECT_EQ(Eigen::FullPivLU<MatrixX>(MJJ).rank(), static_cast<Eigen::Index>(r.basic.size())) << name;
    }
  }
}

TEST(LcpRandom, PivotLimitIsReported) {
  // M = I, d = −1 needs one pivot per index plus the first one for z₀.
  LemkeOptions o;
  o.max_pivots = 3;
  const MatrixX M = MatrixX::Identity(8, 8);
  const VectorX d = -VectorX::Ones(8);
  const LcpResult r = solve_lemke(problem(M, d), o);
  expect_consistent(r, M, d);
  EXPECT_EQ(r.status, LcpStatus::IterationLimit);
  EXPECT_EQ(r.pivots, 3);
  EXPECT_TRUE(contains(r.message, "pivot limit 3")) << r.message;
  PivotingOptions p;
  p.max_pivots = 1;
  const MatrixX N = MatrixX::Ones(3, 3) + MatrixX::Identity(3, 3);
  const LcpResult q = solve_pivoting(problem(N, -VectorX::Ones(3)), p);
  expect_consistent(q, N, -VectorX::Ones(3));
  EXPECT_EQ(q.status, LcpStatus::IterationLimit) << q.message;
}

// ---- projected Gauss–Seidel ---------------------------------------------------

VectorX zeros(int n) { return VectorX::Zero(n); }
VectorX infinities(int n) { return VectorX::Constant(n, kInf); }

TEST(LcpPgs, ConvergesToTheSameWAsLemke) {
  Rng rng(31);
  int compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 1 + trial % 8;
    // Positive definite, and rank-deficient (PSD) with positive diagonal.
    const int rank = trial % 3 == 0 ? std::max(1, n / 2) : n + 2;
    const MatrixX M = random_psd(rng, n, rank);
    const VectorX d = rng.vector(n, -1.0, 1.0);
    const LcpResult ref = solve_lemke(problem(M, d));
    if (ref.status != LcpStatus::Solved) continue;
    ++compared;
    PgsOptions o;
    o.max_iterations = 200000;
    o.tolerance = 1e-10;
    const LcpResult r = solve_pgs(problem(M, d), o);
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_consistent(r, M, d);
    ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
    // The residual bound 1e-10·s limits the error in w through M's
    // conditioning on the active face; 1e-6 leaves a wide margin.
    EXPECT_LE((r.w - ref.w).cwiseAbs().maxCoeff(), 1e-6);
  }
  EXPECT_GT(compared, 40);
}

TEST(LcpPgs, StandardBoundsResidualEqualsLcpResidual) {
  Rng rng(8);
  const MatrixX M = random_psd(rng, 5, 7);
  const VectorX d = rng.vector(5, -1.0, 1.0);
  for (int iterations : {1, 3, 1000}) {
    PgsOptions o;
    o.max_iterations = iterations;
    const LcpResult r = solve_pgs(problem(M, d), zeros(5), infinities(5), o);
    EXPECT_EQ(r.residual, lcp_residual(M, d, r.lambda));
    expect_consistent(r, M, d);
  }
}

TEST(LcpPgs, BoxSolutionsMatchBruteForce) {
  Rng rng(12);
  for (int trial = 0; trial < 80; ++trial) {
    const int n = 1 + trial % 5;
    const MatrixX M = random_psd(rng, n, n + 1) + 0.05 * MatrixX::Identity(n, n);
    const VectorX d = rng.vector(n, -2.0, 2.0);
    VectorX lo = rng.vector(n, -1.0, 0.0), hi = rng.vector(n, 0.0, 1.0);
    if (trial % 4 == 1) lo(0) = -kInf;
    if (trial % 4 == 2) hi(n - 1) = kInf;
    PgsOptions o;
    o.max_iterations = 100000;
    o.relaxation = trial % 2 ? 1.3 : 1.0;
    const LcpResult r = solve_pgs(problem(M, d), lo, hi, o);
    SCOPED_TRACE("trial " + std::to_string(trial));
    ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
    EXPECT_DOUBLE_EQ(r.residual, box_lcp_residual(M, d, lo, hi, r.lambda));
    for (int i = 0; i < n; ++i) {
      EXPECT_GE(r.lambda(i), lo(i));
      EXPECT_LE(r.lambda(i), hi(i));
    }
    const std::vector<VectorX> ref = brute_force_box(M, d, lo, hi);
    ASSERT_FALSE(ref.empty());
    EXPECT_LE((r.lambda - ref.front()).cwiseAbs().maxCoeff(), 1e-6);
  }
}

// Checks the box-LCP conditions of a friction problem directly: rows with
// normal_index −1 are standard LCP rows; the others satisfy
// |λ_t| ≤ μλ_n, λ_t interior ⇒ w_t = 0, λ_t = μλ_n ⇒ w_t ≤ 0, λ_t = −μλ_n ⇒ w_t ≥ 0.
void expect_friction_conditions(const LcpResult& r, const MatrixX& M, const VectorX& d,
                                const std::vector<int>& normal, const VectorX& mu, double tol) {
  const VectorX w = M * r.lambda + d;
  for (int i = 0; i < d.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    const double l = r.lambda(i);
    if (normal[i] < 0) {
      EXPECT_GE(l, 0.0);
      EXPECT_GE(w(i), -tol);
      EXPECT_LE(std::min(l, std::abs(w(i))), tol);
    } else {
      const double bound = mu(i) * r.lambda(normal[i]);
      EXPECT_LE(std::abs(l), bound + tol);
      if (bound <= tol) continue;  // separating contact: λ_t = 0, w_t is free
      if (l < bound - tol && l > -bound + tol) {
        EXPECT_NEAR(w(i), 0.0, tol);
      }
      if (l >= bound - tol) {
        EXPECT_LE(w(i), tol);
      }
      if (l <= -bound + tol) {
        EXPECT_GE(w(i), -tol);
      }
    }
  }
}

TEST(LcpPgs, FrictionBoxSatisfiesBoxConditions) {
  // Contacts with one normal and two tangential rows, M = J H⁻¹ Jᵀ-like SPD.
  Rng rng(2718);
  int sliding = 0, sticking = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int contacts = 1 + trial % 2;
    const int n = 3 * contacts;
    const MatrixX J = rng.matrix(n, n + 3, -1.0, 1.0);
    const MatrixX M = J * J.transpose() + 0.1 * MatrixX::Identity(n, n);
    VectorX d(n), mu(n);
    std::vector<int> normal(n, -1);
    for (int c = 0; c < contacts; ++c) {
      d(3 * c) = rng.uniform(-10.0, -1.0);                    // pressed together
      d.segment(3 * c + 1, 2) = rng.vector(2, -4.0, 4.0);     // tangential drive
      normal[3 * c + 1] = normal[3 * c + 2] = 3 * c;
      mu(3 * c) = 0.0;
      mu(3 * c + 1) = mu(3 * c + 2) = rng.uniform(0.1, 1.0);
    }
    PgsOptions o;
    o.normal_index = normal;
    o.mu = mu;
    o.max_iterations = 20000;
    o.tolerance = 1e-10;
    const LcpResult r = solve_pgs(problem(M, d), zeros(n), infinities(n), o);
    SCOPED_TRACE("trial " + std::to_string(trial));
    ASSERT_EQ(r.status, LcpStatus::Solved) << r.message;
    // The reported residual is the box residual with the bounds at λ.
    VectorX lo = zeros(n), hi = infinities(n);
    for (int i = 0; i < n; ++i) {
      if (normal[i] >= 0) {
        hi(i) = mu(i) * std::max(r.lambda(normal[i]), 0.0);
        lo(i) = -hi(i);
      }
    }
    EXPECT_DOUBLE_EQ(r.residual, box_lcp_residual(M, d, lo, hi, r.lambda));
    expect_friction_conditions(r, M, d, normal, mu, 1e-7);
    for (int i = 0; i < n; ++i)
      if (normal[i] >= 0) (std::abs(r.lambda(i)) >= hi(i) - 1e-9 ? sliding : sticking)++;
  }
  EXPECT_GT(sliding, 0);
  EXPECT_GT(sticking, 0);
}

TEST(LcpPgs, IterationLimitWhenNotConverged) {
  Rng rng(3);
  const MatrixX A = rng.matrix(6, 6, -1.0, 1.0);
  const MatrixX M = A.transpose() * A + 1e-6 * MatrixX::Identity(6, 6);  // ill-conditioned
  const VectorX d = rng.vector(6, -1.0, 0.0);
  PgsOptions o;
  o.max_iterations = 2;
  const LcpResult r = solve_pgs(problem(M, d), o);
  expect_consistent(r, M, d);
  EXPECT_EQ(r.status, LcpStatus::IterationLimit);
  EXPECT_EQ(r.pivots, 2);
  EXPECT_GT(r.residual, r.tolerance);
  EXPECT_TRUE(contains(r.message, "not converged after 2 sweeps")) << r.message;
}

TEST(LcpPgs, WarmStartFromTheSolutionNeedsNoSweep) {
  const MatrixX M = MatrixX::Identity(3, 3) * 2.0;
  const VectorX d = vec({-2.0, 1.0, -4.0});
  PgsOptions o;
  o.warm_start = vec({1.0, 0.0, 2.0});
  const LcpResult r = solve_pgs(problem(M, d), o);
  EXPECT_EQ(r.status, LcpStatus::Solved);
  EXPECT_EQ(r.pivots, 0);
  EXPECT_EQ(r.basic, (std::vector<int>{0, 2}));
}

TEST(LcpPgs, ZeroRowWithUnboundedDemandIsInfeasible) {
  MatrixX M = MatrixX::Identity(2, 2);
  M(1, 1) = 0.0;
  const LcpResult r = solve_pgs(problem(M, vec({-1.0, -1.0})));
  EXPECT_EQ(r.status, LcpStatus::Infeasible);
  EXPECT_TRUE(contains(r.message, "row 1 of M is zero")) << r.message;
  // With d₁ = 0 the row is satisfied by any λ₁ ≥ 0.
  const LcpResult s = solve_pgs(problem(M, vec({-1.0, 0.0})));
  EXPECT_EQ(s.status, LcpStatus::Solved) << s.message;
  EXPECT_NEAR(s.lambda(0), 1.0, 1e-9);
}

TEST(LcpPgs, InvalidBoundsAndFrictionIndicesAreNamed) {
  const LcpProblem p = problem(MatrixX::Identity(3, 3), -VectorX::Ones(3));
  EXPECT_TRUE(contains(solve_pgs(p, vec({0, 2, 0}), vec({1, 1, 1})).message, "lower[1] = 2 > upper[1] = 1"));
  EXPECT_TRUE(contains(solve_pgs(p, zeros(2), infinities(3)).message, "lower has 2 entries, expected 3"));
  PgsOptions o;
  o.normal_index = {-1, 0, 1};
  o.mu = VectorX::Constant(3, 0.5);
  EXPECT_TRUE(contains(solve_pgs(p, o).message, "normal_index[2] = 1 refers to a friction row"));
  o.normal_index = {-1, 0, 0};
  o.mu = vec({0.0, 0.5, -0.5});
  EXPECT_TRUE(contains(solve_pgs(p, o).message, "mu[2] = -0.5"));
  MatrixX neg = MatrixX::Identity(3, 3);
  neg(2, 2) = -1.0;
  EXPECT_TRUE(contains(solve_pgs(problem(neg, -VectorX::Ones(3))).message, "M(2,2) = -1 < 0"));
}

// ---- no allocation during a solve ------------------------------------------------

struct AllocationCase {
  MatrixX M;
  VectorX d;
};

std::vector<AllocationCase> allocation_cases() {
  Rng rng(1);
  std::vector<AllocationCase> cases;
  for (int n : {1, 4, 9, 16}) cases.push_back({random_psd(rng, n, n), rng.vector(n, -1.0, 1.0)});
  cases.push_back({random_psd(rng, 6, 2), rng.vector(6, -1.0, 0.0)});  // often infeasible
  MatrixX slot(2, 2);
  slot << 1.0, -1.0, -1.0, 1.0;
  cases.push_back({slot, vec({-1.0, -1.0})});  // infeasible
  cases.push_back({murty_matrix(12), -VectorX::Ones(12)});
  cases.push_back({MatrixX(0, 0), VectorX(0)});
  return cases;
}

template <class Solver>
void expect_no_allocation(Solver& solver) {
  solver.reserve(16);
  for (const AllocationCase& c : allocation_cases()) {
    SCOPED_TRACE("n = " + std::to_string(c.d.size()));
    const LcpResult* result = nullptr;
    const Allocations a = count_allocations([&] { result = &solver.solve(c.M, c.d); });
    EXPECT_EQ(a.new_calls, 0);
    EXPECT_EQ(a.malloc_calls, 0);
    expect_consistent(*result, c.M, c.d);
  }
  // The caller-owned result: after one solve it has the right sizes.
  const AllocationCase c = allocation_cases().front();
  LcpResult out;
  solver.solve(c.M, c.d, out);
  out.message.reserve(400);
  const Allocations a = count_allocations([&] { solver.solve(c.M, c.d, out); });
  EXPECT_EQ(a.new_calls + a.malloc_calls, 0);
}

TEST(LcpAllocation, LemkeSolverDoesNotAllocate) {
  LemkeSolver solver;
  expect_no_allocation(solver);
}

TEST(LcpAllocation, PivotingSolverDoesNotAllocate) {
  PivotingSolver solver;
  expect_no_allocation(solver);
}

TEST(LcpAllocation, PgsSolverDoesNotAllocate) {
  PgsSolver solver;
  solver.reserve(16);
  for (const AllocationCase& c : allocation_cases()) {
    const int n = static_cast<int>(c.d.size());
    const VectorX lo = zeros(n), hi = infinities(n);
    const Allocations a = count_allocations([&] { solver.solve(c.M, c.d, lo, hi); });
    EXPECT_EQ(a.new_calls, 0);
    EXPECT_EQ(a.malloc_calls, 0);
  }
  // Friction boxes and a warm start from the previous result (aliasing it).
  Rng rng(6);
  const MatrixX J = rng.matrix(6, 9, -1.0, 1.0);
  const MatrixX M = J * J.transpose() + 0.1 * MatrixX::Identity(6, 6);
  const VectorX d = vec({-5.0, 1.0, -2.0, -3.0, 0.5, 0.5});
  solver.options().normal_index = {-1, 0, 0, -1, 3, 3};
  solver.options().mu = VectorX::Constant(6, 0.5);
  const VectorX lo = zeros(6), hi = infinities(6);
  const LcpResult* first = &solver.solve(M, d, lo, hi);
  ASSERT_EQ(first->status, LcpStatus::Solved) << first->message;
  const LcpResult* second = nullptr;
  const Allocations a = count_allocations([&] { second = &solver.solve(M, d, lo, hi, first->lambda); });
  EXPECT_EQ(a.new_calls + a.malloc_calls, 0);
  EXPECT_EQ(second->status, LcpStatus::Solved);
  EXPECT_LE(second->pivots, 1);
}

TEST(LcpAllocation, HookCountsAllocations) {
  // The counters themselves work: a VectorX and a std::string allocate.
  const Allocations a = count_allocations([] {
    Eigen::internal::set_is_malloc_allowed(true);
    VectorX v(100);
    v.setZero();
    std::string s(100, 'x');
    EXPECT_EQ(s.size(), 100u);
  });
  EXPECT_GE(a.new_calls, 1);
#if PLUME_TEST_MALLOC_HOOK
  EXPECT_GE(a.malloc_calls, 2);
#endif
}

}  // namespace
}  // namespace plume
