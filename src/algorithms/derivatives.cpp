// Analytic derivatives of RNEA and ABA (Carpentier & Mansard, RSS 2018), with
// world axes about each subtree root's origin (Data::orel), like aba.cpp.
//
// Derivation (all quantities with world axes about a point held fixed while
// differentiating; s = oS_k the world column of dof k of body b):
// - a perturbation of q_k moves the subtree of b rigidly with the twist s:
//   a quantity attached to a body of that subtree changes as s × (motion),
//   s ×* (force), s ×* I − I s× (inertia). The columns of b's own joint are
//   attached to b (revolute, prismatic, free-flyer, the θ of a planar joint)
//   or to the parent (the x, y translations of a planar joint).
// - ν, α: the velocity and acceleration the joint rides on (the parent's,
//   plus the parent-attached columns' share for a planar joint). Then for
//   every body j in the subtree of b
//     ∂v_j/∂q_k = s × (v_j − ν),
//     ∂a_j/∂q_k = s × a_j − s × α − (s × ν) × (v_j − ν),
//     ∂v_j/∂q̇_k = s,  ∂a_j/∂q̇_k = s × v_j + (ν + v_att) × s,
//   with v_att the velocity of the body the column is attached to.
// - f_j = I_j a_j + v_j ×* I_j v_j summed over a subtree Σ_j (the composite
//   force F, inertia Yc, and Bc = Σ_j B_j with B_j u = ∂f_j/∂v_j u =
//   v_j ×* I_j u − I_j (v_j × u) + u ×* (I_j v_j), which only sees u's angular
//   part, see body_B11_scalar) gives, for dof l of a body at or
//   below b (and b' the deeper of the two bodies):
//     ∂τ_l/∂q_k = S_lᵀ (Yc_b' dAdq_k + Bc_b' dVdq_k) [+ S_lᵀ (s ×* F_b') when S_l does
//                 not move with q_k: l above k, or a planar x, y column of b],
//     ∂τ_l/∂q̇_k = S_lᵀ (Yc_b' dAdv_k + Bc_b' s),   ∂τ_l/∂q̈_k = S_lᵀ Yc_b' s = H_lk,
//   with dVdq_k = ν × s, dAdq_k = α × s + ν × (ν × s), dAdv_k = (ν + v_att) × s.
//   Gravity enters as α = −g at the root (RBDA §5.3).
#include "plume/algorithms/derivatives.hpp"

#include <cmath>
#include <utility>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include <type_traits>

#include "checks.hpp"
#include "joint_kernels.hpp"
#include "plume/algorithms/cholesky.hpp"

namespace plume {

namespace {

/// Columns of the joint's motion subspace that are attached to the parent
/// body (they do not move when the joint's own coordinates change): the first
/// two (x, y translations) of a planar joint, none for the other kinds.
template <class K>
constexpr int parent_attached = std::is_same_v<K, detail::Planar> ? 2 : 0;

/// B = ∂f/∂v of a body's f = I a + v ×* I v in the directions u, the sum
/// v ×* I u − I (v × u) + u ×* (I v). With I = [Ī h×; h×ᵀ m1], v = [ω; v_o]
/// and the momentum I v = [n; p] (p = m v_o + ω × h), skew(a) skew(b) =
/// b aᵀ − (a·b) 1 gives B = [B11 0; −2 p× 0] with
///   B11 = ω× Ī − Ī ω× − (v_o hᵀ + h v_oᵀ) + 2 (h·v_o) 1 − n×:
/// B only sees the angular part of u (computed by body_B11_scalar).
PLUME_INLINE Eigen::Index nv_total(const Data& data) { return data.nv; }

/// Y X for a rigid inertia Y and 6×N motions X, column by column.
template <int N>
PLUME_INLINE Eigen::Matrix<double, 6, N> inertia_cols(const RigidInertia& Y, const double* X) {
  Eigen::Matrix<double, 6, N> out;
  for (int k = 0; k < N; ++k) detail::inertia_times(Y, X + 6 * k, out.data() + 6 * k);
  return out;
}

// Spatial products on plain arrays, coefficient by coefficient: the
// derivative columns and the body force are formed and stored without Vec6
// temporaries assembled from two Vec3 halves (whose packet reloads straddle
// two stores and stall store forwarding).
/// o = a × b for motions a = [w; v], b = [x; y]: [w × x; w × y + v × x].
PLUME_INLINE void motion_cross(const double* a, const double* b, double* o) {
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
  o[3] = (a[1] * b[5] - a[2] * b[4]) + (a[4] * b[2] - a[5] * b[1]);
  o[4] = (a[2] * b[3] - a[0] * b[5]) + (a[5] * b[0] - a[3] * b[2]);
  o[5] = (a[0] * b[4] - a[1] * b[3]) + (a[3] * b[1] - a[4] * b[0]);
}

/// o += a ×* f for a motion a = [w; v] and a force f = [n; g]: [w × n + v × g; w × g].
PLUME_INLINE void add_force_cross(const double* a, const double* f, double* o) {
  o[0] += (a[1] * f[2] - a[2] * f[1]) + (a[4] * f[5] - a[5] * f[4]);
  o[1] += (a[2] * f[0] - a[0] * f[2]) + (a[5] * f[3] - a[3] * f[5]);
  o[2] += (a[0] * f[1] - a[1] * f[0]) + (a[3] * f[4] - a[4] * f[3]);
  o[3] += a[1] * f[5] - a[2] * f[4];
  o[4] += a[2] * f[3] - a[0] * f[5];
  o[5] += a[0] * f[4] - a[1] * f[3];
}

/// B11 (above) on scalars: ω× Ī − Ī ω× = M + Mᵀ with M = ω× Ī (Ī symmetric),
/// then − (v_o hᵀ + h v_oᵀ) + 2 (h·v_o) 1 − n×.
PLUME_INLINE void body_B11_scalar(const RigidInertia& I, const double* v, const double* n, Mat3& B) {
  const Mat3& J = I.Ibar();
  const Vec3& h = I.h();
  double M[3][3];  // M[r][c]
  for (int c = 0; c < 3; ++c) {
    M[0][c] = v[1] * J(2, c) - v[2] * J(1, c);
    M[1][c] = v[2] * J(0, c) - v[0] * J(2, c);
    M[2][c] = v[0] * J(1, c) - v[1] * J(0, c);
  }
  const double* vo = v + 3;
  const double hv2 = 2.0 * (h[0] * vo[0] + h[1] * vo[1] + h[2] * vo[2]);
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 3; ++r) B(r, c) = (M[r][c] + M[c][r]) - (vo[r] * h[c] + h[r] * vo[c]);
    B(c, c) += hv2;
  }
  // − n×: (n×)(r, c) = −ε_rcd n_d.
  B(0, 1) += n[2];
  B(1, 0) -= n[2];
  B(0, 2) -= n[1];
  B(2, 0) += n[1];
  B(1, 2) += n[0];
  B(2, 1) -= n[0];
}

/// a · b for 6-vectors and 3-vectors (the sums in a fixed order).
PLUME_INLINE double dot6(const double* x, const double* y) {
  return (x[0] * y[0] + (x[2] * y[2] + x[4] * y[4])) + (x[1] * y[1] + (x[3] * y[3] + x[5] * y[5]));
}
PLUME_INLINE double dot3(const double* x, const double* y) { return (x[0] * y[0] + x[1] * y[1]) + x[2] * y[2]; }

/// Is joint 1 a free-flyer on the world with dofs 0–5 (a floating base)?
/// Then root_free_flyer_terms handles those dofs as ancestors.
PLUME_INLINE bool root_free_flyer(const Model& model) {
  return model.nbodies() > 1 && model.joint(1).kind == JointKind::FreeFlyer && model.parent(1) == 0 &&
         model.joint(1).v_index == 0;
}

/// The root free-flyer's dofs l = 0–5 as ancestors of the one-dof joint at dof
/// v0 (ancestor_terms_1's products, same arguments). Body 1's origin is its
/// subtree root, so its world columns are blockdiag(Eᵀ, Eᵀ) (E = X0[1].E(),
/// s_l · x = (E x_ω)_l for l < 3, (E x_v)_{l−3} above), and it rides on the
/// world: ν = 0, α = [0; −g]. Hence dVdq_l = 0, dAdq_l = [0; (−g) × s_l,ω] and
/// dAdv_l = v_1 × s_l, and this dof's row is
///   M1 · dAdq_l = s_l,ω · (M1_v × (−g))   (0 for the translations),
///   M1 · dAdv_l + M2 · s_l,ω = s_l · ([M2; 0] − v_1 ×* M1)
/// (f · (v × s) = −(v ×* f) · s): five rotations by E instead of six dot
/// products per quantity.
template <bool Tr>
PLUME_INLINE void root_free_flyer_terms(Data& data, MatrixX& Dq, MatrixX& Dv, int v0, const double* m1,
                                        const double* m2, const double* pk, const double* qk) {
  const double* S = data.oS.data();  // S[6 l + c] = E(l, c) for l, c < 3
  const double* g = data.oa[0].vector().data() + 3;  // −g
  const double* v1 = data.ov[1].vector().data();
  const double* f = m1 + 3;
  double u[3], w[6];
  u[0] = f[1] * g[2] - f[2] * g[1];
  u[1] = f[2] * g[0] - f[0] * g[2];
  u[2] = f[0] * g[1] - f[1] * g[0];
  // w = [M2; 0] − v_1 ×* M1, v_1 ×* [n; f] = [ω × n + v × f; ω × f].
  w[0] = m2[0] - ((v1[1] * m1[2] - v1[2] * m1[1]) + (v1[4] * f[2] - v1[5] * f[1]));
  w[1] = m2[1] - ((v1[2] * m1[0] - v1[0] * m1[2]) + (v1[5] * f[0] - v1[3] * f[2]));
  w[2] = m2[2] - ((v1[0] * m1[1] - v1[1] * m1[0]) + (v1[3] * f[1] - v1[4] * f[0]));
  w[3] = -(v1[1] * f[2] - v1[2] * f[1]);
  w[4] = -(v1[2] * f[0] - v1[0] * f[2]);
  w[5] = -(v1[0] * f[1] - v1[1] * f[0]);
  double up_q[6], up_v[6], lo_q[6], lo_v[6];
  [[maybe_unused]] double hl[6];
  for (int l = 0; l < 3; ++l) {
    const double* e = S + 6 * l;
    up_q[l] = dot3(e, pk);
    up_q[l + 3] = dot3(e, pk + 3);
    up_v[l] = dot3(e, qk);
    up_v[l + 3] = dot3(e, qk + 3);
    if constexpr (!Tr) {
      hl[l] = dot3(e, m1);
      hl[l + 3] = dot3(e, f);
    }
    lo_q[l] = dot3(e, u);
    lo_q[l + 3] = 0.0;
    lo_v[l] = dot3(e, w);
    lo_v[l + 3] = dot3(e, w + 3);
  }
  const Eigen::Index n = nv_total(data);
  double* rq = Dq.data() + static_cast<Eigen::Index>(v0) * n;
  double* rv = Dv.data() + static_cast<Eigen::Index>(v0) * n;
  [[maybe_unused]] double* rh = data.H.data() + static_cast<Eigen::Index>(v0) * n;
  const double* cq = Tr ? lo_q : up_q;
  const double* cv = Tr ? lo_v : up_v;
  const double* sq = Tr ? up_q : lo_q;
  const double* sv = Tr ? up_v : lo_v;
  for (int l = 0; l < 6; ++l) {
    if constexpr (!Tr) rh[l] = hl[l];
    rq[l] = cq[l];
    rv[l] = cv[l];
  }
  for (int l = 0; l < 6; ++l) {
    if constexpr (!Tr) data.H(v0, l) = hl[l];
    Dq(v0, l) = sq[l];
    Dv(v0, l) = sv[l];
  }
}

// Ancestor dofs l of the one-dof joint at dof v0: ∂τ_l/∂x_k = s_l · (P, Q),
// H_lk = s_l · M1, and this dof's row ∂τ_k/∂x_l = M1 · (dAdq_l, dAdv_l) +
// M2 · (dVdq_l, s_l)_ω (m1, pk, qk: 6 numbers; m2: 3). Tr as backward_body.
// ff: root_free_flyer(model) (its dofs 0–5 by root_free_flyer_terms).
template <bool Tr>
PLUME_INLINE void ancestor_terms_1(const Model& model, Data& data, MatrixX& Dq, MatrixX& Dv, int v0,
                                   const double* m1, const double* m2, const double* pk, const double* qk,
                                   bool ff) {
  const Eigen::Map<const Vec6> m1v(m1), pkv(pk), qkv(qk);
  const Eigen::Map<const Vec3> m2v(m2);
  const Eigen::Index n = nv_total(data);
  double* rq = Dq.data() + static_cast<Eigen::Index>(v0) * n;
  double* rv = Dv.data() + static_cast<Eigen::Index>(v0) * n;
  [[maybe_unused]] double* rh = data.H.data() + static_cast<Eigen::Index>(v0) * n;
  const int lo = ff ? 6 : 0;
  int l = model.dof_parent(v0);
  for (; l >= lo; l = model.dof_parent(l)) {
    const Eigen::Map<const Vec6> sl(data.oS.data() + 6 * l);
    const Eigen::Map<const Vec6> aql(data.dAdq.data() + 6 * l), vql(data.dVdq.data() + 6 * l),
        avl(data.dAdv.data() + 6 * l);
    const double up_q = sl.dot(pkv), up_v = sl.dot(qkv);
    const double lo_q = m1v.dot(aql) + m2v.dot(vql.head<3>()), lo_v = m1v.dot(avl) + m2v.dot(sl.head<3>());
    if constexpr (!Tr) {
      const double hl = sl.dot(m1v);
      rh[l] = hl;
      data.H(v0, l) = hl;
    }
    if constexpr (Tr) {
      rq[l] = lo_q;
      rv[l] = lo_v;
      Dq(v0, l) = up_q;
      Dv(v0, l) = up_v;
    } else {
      rq[l] = up_q;
      rv[l] = up_v;
      Dq(v0, l) = lo_q;
      Dv(v0, l) = lo_v;
    }
  }
  if (ff && l == 5) root_free_flyer_terms<Tr>(data, Dq, Dv, v0, m1, m2, pk, qk);
}

// ---- The passes, built twice -----------------------------------------------
//
// derivative_passes.hpp in the build's instruction set and, where GCC targets
// x86-64, once more with AVX2 enabled (pragma target), chosen at run time by
// use_avx2(). The AVX2 build gives the same bits (derivative_passes.hpp);
// bench_derivatives, rnea_derivatives: quadruped 3.20 -> 2.89 us, humanoid
// 7.95 -> 7.24 us (the portable build's figures before the arrow).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PLUME_DERIVATIVES_AVX2 1
#else
#define PLUME_DERIVATIVES_AVX2 0
#endif

#define PLUME_PASS_LAMBDA PLUME_LAMBDA_INLINE
namespace portable {
#include "derivative_passes.hpp"
}  // namespace portable
#undef PLUME_PASS_LAMBDA

#if PLUME_DERIVATIVES_AVX2
#pragma GCC push_options
#pragma GCC target("avx2")
// (The kind dispatch's lambdas are not forced inline here: detail::visit_kind,
// which calls them, is compiled for the default target.)
#define PLUME_PASS_LAMBDA
namespace avx2 {
#include "derivative_passes.hpp"
}  // namespace avx2
#undef PLUME_PASS_LAMBDA
#pragma GCC pop_options
#endif

/// detail::set_derivatives_simd's setting.
bool simd_enabled = true;

#if PLUME_DERIVATIVES_AVX2
/// Does this CPU (and its OS) run AVX2 instructions?
bool cpu_has_avx2() {
  static const bool ok = __builtin_cpu_supports("avx2");
  return ok;
}

/// Run the AVX2 build of the passes?
bool use_avx2() { return simd_enabled && cpu_has_avx2(); }
#endif

// ---- H⁻¹ and −H⁻¹ (∂τ/∂x)ᵀ's rows from the factor H = Lᵀ D L ---------------
//
// The right-hand sides are the rows of column-major matrices X (column c of X
// holds component c of every right-hand side), so each step below updates a
// whole column at once, in chunks of rows kept in registers while the terms
// of a sum accumulate (a gather: loads only, one store per chunk).

/// y[b][r] ← sc[b] · (y[b][r] ∓ Σ_t c_t x_t[b][r]) for the rows r of one chunk
/// [r, r + W), for B matrices at once (y[b], x_t[b] = column pointers into
/// matrix b, same weights c_t): terms(f) calls f(c_t, i_t) with i_t the
/// column index of term t. AddX: matrices 0 and 1 add the terms (the same
/// bits as subtracting them with weights −c_t), matrix 2 subtracts them.
template <int W, int B, bool AddX, class Terms>
PLUME_INLINE void gather_chunk(double* const* y, const double* const* X, Eigen::Index ld, Eigen::Index r,
                               const double* sc, const Terms& terms) {
#if defined(__SSE2__)
  if constexpr (W % 2 == 0) {
    // Pairs of rows in SSE2 registers, written out: left to itself, GCC
    // vectorised across consecutive terms instead (two columns' entries
    // packed by hand, then unpacked), with spills.
    constexpr int P = W / 2;
    __m128d acc[B][P];
    for (int b = 0; b < B; ++b) {
      for (int t = 0; t < P; ++t) acc[b][t] = _mm_loadu_pd(y[b] + r + 2 * t);
    }
    terms([&](double c, Eigen::Index col) PLUME_LAMBDA_INLINE {
      const __m128d cc = _mm_set1_pd(c);
      for (int b = 0; b < B; ++b) {
        const double* x = X[b] + col * ld + r;
        for (int t = 0; t < P; ++t) {
          const __m128d cx = _mm_mul_pd(cc, _mm_loadu_pd(x + 2 * t));
          acc[b][t] = (AddX && b < 2) ? _mm_add_pd(acc[b][t], cx) : _mm_sub_pd(acc[b][t], cx);
        }
      }
    });
    for (int b = 0; b < B; ++b) {
      const __m128d s2 = _mm_set1_pd(sc[b]);
      for (int t = 0; t < P; ++t) _mm_storeu_pd(y[b] + r + 2 * t, _mm_mul_pd(s2, acc[b][t]));
    }
    return;
  }
#endif
  double acc[B][W];
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < W; ++t) acc[b][t] = y[b][r + t];
  }
  terms([&](double c, Eigen::Index col) PLUME_LAMBDA_INLINE {
    for (int b = 0; b < B; ++b) {
      const double* x = X[b] + col * ld + r;
      for (int t = 0; t < W; ++t) {
        if (AddX && b < 2) {
          acc[b][t] += c * x[t];
        } else {
          acc[b][t] -= c * x[t];
        }
      }
    }
  });
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < W; ++t) y[b][r + t] = sc[b] * acc[b][t];
  }
}

/// Rows [0, r1) of the three matrices y[0], y[1] (X) and y[2] (H⁻¹), in
/// chunks of 8 (4, 2, 1) rows: chunks that end at or before row s update X
/// only, the others all three (same weights; rows of H⁻¹ below s are in its
/// upper triangle, which the mirror at the end overwrites).
template <bool AddX, class Terms>
PLUME_INLINE void gather_rows_split(double* const* y, const double* const* X, Eigen::Index ld, Eigen::Index r1,
                                    Eigen::Index s, const double* sc, const Terms& terms) {
  const auto chunk = [&](auto w, Eigen::Index r) PLUME_LAMBDA_INLINE {
    constexpr int W = decltype(w)::value;
    if (r + W <= s) {
      gather_chunk<W, 2, AddX>(y, X, ld, r, sc, terms);
    } else {
      gather_chunk<W, 3, AddX>(y, X, ld, r, sc, terms);
    }
  };
  Eigen::Index r = 0;
  for (; r + 8 <= r1; r += 8) chunk(std::integral_constant<int, 8>{}, r);
  if (r + 4 <= r1) {
    chunk(std::integral_constant<int, 4>{}, r);
    r += 4;
  }
  if (r + 2 <= r1) {
    chunk(std::integral_constant<int, 2>{}, r);
    r += 2;
  }
  if (r < r1) chunk(std::integral_constant<int, 1>{}, r);
}

/// data.Minv ← H⁻¹ and X ← −X H⁻¹ for X = data.ddq_dq, data.ddq_dv (which
/// hold (∂τ/∂q)ᵀ, (∂τ/∂q̇)ᵀ: their rows are the right-hand sides), with H⁻¹ =
/// L⁻¹ D⁻¹ L⁻ᵀ from data.LD (unchecked::ltdl).
/// - L⁻ᵀ, leaves first: column j takes the final columns of its subtree's
///   dofs i > j (within (j, dof_subtree_end(j)]), weighted by
///   L(i, j); then × 1/D_j (−1/D_j for X), as the column is finished. Row i of ∂τ/∂x is nonzero only on
///   i's ancestors and subtree, so column j of X is nonzero only on rows up
///   to the end of j's subtree; column j of the identity on rows j to that end.
/// - L⁻¹, root first: column i takes its ancestors' columns weighted by
///   L(i, j); for H⁻¹ only rows r ≥ i (the lower triangle, mirrored at the end).
/// The three matrices are updated together (the same weights for each).
PLUME_FLATTEN void inverse_and_products(const Model& model, Data& data) {
  const int n = model.nv();
  const Eigen::Index ld = n;
  const double* L = data.LD.data();
  double* M = data.Minv.data();
  const double* const Xc[3] = {data.ddq_dq.data(), data.ddq_dv.data(), M};
  // (Eigen's setIdentity() visits the entries one by one with a test each.)
  data.Minv.setZero();
  data.Minv.diagonal().setOnes();
  for (int j = n - 1; j >= 0; --j) {
    // (Dofs in (j, e] outside j's subtree have L(i, j) = 0: no term.)
    const int e = model.dof_subtree_end(j);
    const double dinv = 1.0 / L[static_cast<Eigen::Index>(j) * ld + j];
    // The columns i > j are stored already scaled (× 1/D_i, × −1/D_i for
    // X): the weights carry D_i (and, for X, the sign: the terms are added) back.
    const auto terms = [=](auto&& f) PLUME_LAMBDA_INLINE {
      for (int i = j + 1; i <= e; ++i) {
        const double* Li = L + static_cast<Eigen::Index>(i) * ld;
        f(Li[j] * Li[i], i);
      }
    };
    double* const y[3] = {data.ddq_dq.data() + j * ld, data.ddq_dv.data() + j * ld, M + j * ld};
    const double sc[3] = {-dinv, -dinv, dinv};
    gather_rows_split<true>(y, Xc, ld, e + 1, j, sc, terms);
  }
  for (int i = 1; i < n; ++i) {
    if (model.dof_parent(i) < 0) continue;
    const double* Li = L + static_cast<Eigen::Index>(i) * ld;
    const auto terms = [=, &model](auto&& f) PLUME_LAMBDA_INLINE {
      for (int e = model.dof_parent(i); e >= 0;) {
        const int s = model.dof_run_start(e);
        for (int j = s; j <= e; ++j) f(Li[j], j);
        e = model.dof_parent(s);
      }
    };
    double* const y[3] = {data.ddq_dq.data() + i * ld, data.ddq_dv.data() + i * ld, M + i * ld};
    const double sc[3] = {1.0, 1.0, 1.0};
    gather_rows_split<false>(y, Xc, ld, n, i, sc, terms);
  }
  for (int i = 0; i < n; ++i) {
    for (int r = i + 1; r < n; ++r) M[r * ld + i] = M[i * ld + r];
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// ---- The same products with AVX2 and FMA, chosen at run time --------------
//
// inverse_and_products' two sweeps with four rows per register and fused
// multiply-adds, on CPUs that have them (cpu_has_avx2_fma; the SSE2 path
// above otherwise). On the humanoid (36 dofs) these sweeps were about 40 % of
// aba_derivatives' time. The weights and columns of every step are listed
// first (at most kMaxAvxTerms of them, else the SSE2 path runs). The results
// differ from the SSE2 path's by roundings (fused products, other sums).

// Below kMinAvxDofs the SSE2 path runs: on the quadruped (18 dofs) the AVX2
// path was 2 % slower (aba_derivatives 7.43 against 7.26 us), its term lists
// and masked last rows outweighing the shorter sweeps.
constexpr int kMinAvxDofs = 24;
constexpr int kMaxAvxDofs = 256;
constexpr int kMaxAvxTerms = 4096;

/// Does this CPU (and its OS) run AVX2 and FMA instructions?
bool cpu_has_avx2_fma() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}

/// gather_chunk for P registers of 4 rows from row r (the last `tail` < 4
/// rows only when P = 1 and tail > 0), the nt terms (w[t], col[t]).
template <int B, int P, bool AddX, bool Masked>
__attribute__((target("avx2,fma"))) inline void gather_avx(double* const* y, const double* const* X, Eigen::Index ld,
                                                          Eigen::Index r, const double* sc, const double* w,
                                                          const int* col, int nt, int tail) {
  static_assert(!Masked || P == 1, "a partial register is the last");
  __m256i mask = _mm256_set1_epi64x(-1);
  if constexpr (Masked) mask = _mm256_cmpgt_epi64(_mm256_set1_epi64x(tail), _mm256_set_epi64x(3, 2, 1, 0));
  __m256d acc[B][P];
  for (int b = 0; b < B; ++b) {
    for (int p = 0; p < P; ++p) {
      acc[b][p] = Masked ? _mm256_maskload_pd(y[b] + r, mask) : _mm256_loadu_pd(y[b] + r + 4 * p);
    }
  }
  for (int t = 0; t < nt; ++t) {
    const __m256d c = _mm256_set1_pd(w[t]);
    const Eigen::Index off = static_cast<Eigen::Index>(col[t]) * ld + r;
    for (int b = 0; b < B; ++b) {
      for (int p = 0; p < P; ++p) {
        const __m256d x = Masked ? _mm256_maskload_pd(X[b] + off, mask) : _mm256_loadu_pd(X[b] + off + 4 * p);
        acc[b][p] = (AddX && b < 2) ? _mm256_fmadd_pd(c, x, acc[b][p]) : _mm256_fnmadd_pd(c, x, acc[b][p]);
      }
    }
  }
  for (int b = 0; b < B; ++b) {
    const __m256d s4 = _mm256_set1_pd(sc[b]);
    for (int p = 0; p < P; ++p) {
      const __m256d o = _mm256_mul_pd(s4, acc[b][p]);
      if constexpr (Masked) {
        _mm256_maskstore_pd(y[b] + r, mask, o);
      } else {
        _mm256_storeu_pd(y[b] + r + 4 * p, o);
      }
    }
  }
}

/// inverse_and_products with AVX2 and FMA; false (and nothing done) when
/// model.nv() is outside [kMinAvxDofs, kMaxAvxDofs] or the sweeps have more than kMaxAvxTerms terms. The
/// right-hand sides (rows) are independent: both sweeps run for a chunk of
/// eight rows (then four, then the last one to three, masked) before the
/// next chunk, which reads the columns' entries of those rows only (the three
/// 36 × 36 matrices and the factor are 41 KB; a chunk's share, 7 KB). Rows of
/// column j beyond its subtree's end (left alone by the SSE2 path) are zero
/// and stay zero.
__attribute__((target("avx2,fma"))) bool inverse_and_products_avx(const Model& model, Data& data) {
  const int n = model.nv();
  if (n < kMinAvxDofs || n > kMaxAvxDofs) return false;
  const Eigen::Index ld = n;
  const double* L = data.LD.data();
  double* M = data.Minv.data();
  const double* const Xc[3] = {data.ddq_dq.data(), data.ddq_dv.data(), M};
  // The terms of both sweeps, column by column: [start[j], start[j + 1]).
  double w[kMaxAvxTerms];
  int col[kMaxAvxTerms];
  int start1[kMaxAvxDofs], end1[kMaxAvxDofs];
  int nt = 0;
  for (int j = n - 1; j >= 0; --j) {
    start1[j] = nt;
    const int e = model.dof_subtree_end(j);
    if (nt + (e - j) > kMaxAvxTerms) return false;
    for (int i = j + 1; i <= e; ++i) {
      const double* Li = L + static_cast<Eigen::Index>(i) * ld;
      w[nt] = Li[j] * Li[i];
      col[nt++] = i;
    }
    end1[j] = nt;
  }
  int nt2 = nt;
  int begin2[kMaxAvxDofs + 1];
  for (int i = 0; i < n; ++i) {
    begin2[i] = nt2;
    if (i > 0 && model.dof_parent(i) >= 0) {
      const double* Li = L + static_cast<Eigen::Index>(i) * ld;
      for (int e = model.dof_parent(i); e >= 0;) {
        const int s = model.dof_run_start(e);
        if (nt2 + (e - s + 1) > kMaxAvxTerms) return false;
        for (int j = s; j <= e; ++j) {
          w[nt2] = Li[j];
          col[nt2++] = j;
        }
        e = model.dof_parent(s);
      }
    }
  }
  begin2[n] = nt2;
  data.Minv.setZero();
  data.Minv.diagonal().setOnes();
  const auto chunk = [&](auto pw, auto masked, Eigen::Index r, int tail) PLUME_LAMBDA_INLINE {
    constexpr int P = decltype(pw)::value;
    constexpr bool Mk = decltype(masked)::value;
    constexpr int W = 4 * P;
    for (int j = n - 1; j >= 0; --j) {
      if (r > model.dof_subtree_end(j)) continue;
      const double dinv = 1.0 / L[static_cast<Eigen::Index>(j) * ld + j];
      double* const y[3] = {data.ddq_dq.data() + j * ld, data.ddq_dv.data() + j * ld, M + j * ld};
      const double sc[3] = {-dinv, -dinv, dinv};
      const int t0 = start1[j], t1 = end1[j];
      if (r + W <= j) {
        gather_avx<2, P, true, Mk>(y, Xc, ld, r, sc, w + t0, col + t0, t1 - t0, tail);
      } else {
        gather_avx<3, P, true, Mk>(y, Xc, ld, r, sc, w + t0, col + t0, t1 - t0, tail);
      }
    }
    for (int i = 1; i < n; ++i) {
      const int t0 = begin2[i], t1 = begin2[i + 1];
      if (t0 == t1) continue;
      double* const y[3] = {data.ddq_dq.data() + i * ld, data.ddq_dv.data() + i * ld, M + i * ld};
      const double sc[3] = {1.0, 1.0, 1.0};
      if (r + W <= i) {
        gather_avx<2, P, false, Mk>(y, Xc, ld, r, sc, w + t0, col + t0, t1 - t0, tail);
      } else {
        gather_avx<3, P, false, Mk>(y, Xc, ld, r, sc, w + t0, col + t0, t1 - t0, tail);
      }
    }
  };
  Eigen::Index r = 0;
  using Two = std::integral_constant<int, 2>;
  using One = std::integral_constant<int, 1>;
  for (; r + 8 <= n; r += 8) chunk(Two{}, std::false_type{}, r, 0);
  if (r + 4 <= n) {
    chunk(One{}, std::false_type{}, r, 0);
    r += 4;
  }
  if (r < n) chunk(One{}, std::true_type{}, r, static_cast<int>(n - r));
  for (int i = 0; i < n; ++i) {
    for (int c = i + 1; c < n; ++c) M[c * ld + i] = M[i * ld + c];
  }
  return true;
}
#endif

/// A ← Aᵀ for a square column-major matrix, in place, by 2×2 blocks (a
/// block and its mirror swapped through two SSE2 unpacks each).
void transpose_in_place(MatrixX& A) {
  const Eigen::Index n = A.rows();
  double* a = A.data();
  Eigen::Index c = 0;
#if defined(__SSE2__)
  for (; c + 2 <= n; c += 2) {
    double* c0 = a + c * n;
    double* c1 = c0 + n;
    // The diagonal block: swap (c + 1, c) and (c, c + 1).
    std::swap(c0[c + 1], c1[c]);
    for (Eigen::Index r = c + 2; r + 2 <= n; r += 2) {
      // Block (r, c) (below) and block (c, r) (above).
      double* r0 = a + r * n;
      double* r1 = r0 + n;
      const __m128d b0 = _mm_loadu_pd(c0 + r), b1 = _mm_loadu_pd(c1 + r);
      const __m128d u0 = _mm_loadu_pd(r0 + c), u1 = _mm_loadu_pd(r1 + c);
      _mm_storeu_pd(r0 + c, _mm_unpacklo_pd(b0, b1));
      _mm_storeu_pd(r1 + c, _mm_unpackhi_pd(b0, b1));
      _mm_storeu_pd(c0 + r, _mm_unpacklo_pd(u0, u1));
      _mm_storeu_pd(c1 + r, _mm_unpackhi_pd(u0, u1));
    }
    if (n % 2 == 1) {
      // The last row against these two columns.
      const Eigen::Index r = n - 1;
      std::swap(c0[r], a[r * n + c]);
      std::swap(c1[r], a[r * n + c + 1]);
    }
  }
#endif
  for (; c < n; ++c) {
    for (Eigen::Index r = c + 1; r < n; ++r) std::swap(a[c * n + r], a[r * n + c]);
  }
}

}  // namespace

namespace unchecked {

void rnea_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a) {
#if PLUME_DERIVATIVES_AVX2
  if (use_avx2()) {
    avx2::rnea_derivatives_passes(model, data, q.data(), v.data(), a.data());
    return;
  }
#endif
  portable::rnea_derivatives_passes(model, data, q.data(), v.data(), a.data());
}

void kinematics_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a) {
#if PLUME_DERIVATIVES_AVX2
  if (use_avx2()) {
    avx2::derivative_forward_pass(model, data, q.data(), v.data(), a.data());
    return;
  }
#endif
  portable::derivative_forward_pass(model, data, q.data(), v.data(), a.data());
}

void aba_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau) {
#if PLUME_DERIVATIVES_AVX2
  if (use_avx2()) {
    avx2::aba_derivatives_passes(model, data, q.data(), v.data(), tau.data());
  } else {
    portable::aba_derivatives_passes(model, data, q.data(), v.data(), tau.data());
  }
#else
  portable::aba_derivatives_passes(model, data, q.data(), v.data(), tau.data());
#endif
  // ∂q̈/∂x = −H⁻¹ ∂τ/∂x at q̈ (differentiate H q̈ + C = τ): sparse solves on
  // the rows of (∂τ/∂x)ᵀ with the factor of H, and H⁻¹ itself.
#if defined(__x86_64__) && defined(__GNUC__)
  if (!simd_enabled || !cpu_has_avx2_fma() || !inverse_and_products_avx(model, data)) {
    inverse_and_products(model, data);
  }
#else
  inverse_and_products(model, data);
#endif
  transpose_in_place(data.ddq_dq);
  transpose_in_place(data.ddq_dv);
}

}  // namespace unchecked

namespace detail {
bool set_derivatives_simd(bool enabled) {
  const bool was = simd_enabled;
  simd_enabled = enabled;
  return was;
}
}  // namespace detail

void rnea_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a) {
  detail::check_state(model, data, q);
  detail::check_vector_fast(v, model.nv(), "v");
  detail::check_vector_fast(a, model.nv(), "a");
  unchecked::rnea_derivatives(model, data, q, v, a);
}

void kinematics_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& a) {
  detail::check_state(model, data, q);
  detail::check_vector_fast(v, model.nv(), "v");
  detail::check_vector_fast(a, model.nv(), "a");
  unchecked::kinematics_derivatives(model, data, q, v, a);
}

void aba_derivatives(const Model& model, Data& data, const VecRef& q, const VecRef& v, const VecRef& tau) {
  detail::check_state(model, data, q);
  detail::check_vector_fast(v, model.nv(), "v");
  detail::check_vector_fast(tau, model.nv(), "tau");
  unchecked::aba_derivatives(model, data, q, v, tau);
}

}  // namespace plume
