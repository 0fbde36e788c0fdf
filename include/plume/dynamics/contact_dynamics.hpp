#pragma once
/// @file
/// Contact forces and contact impulses of a tree in point contact
/// (Featherstone §11.5–11.7, docs/theory.md §3 and §5).
///
/// **Forces** (11.41–11.42). With H q̈ + C = τ + T λ and the separation
/// accelerations ζ̇ = Tᵀq̈ + Ṫᵀq̇ of the given (persistent, ζ = 0) contacts:
///
///     ζ̇ = M λ + d,  M = Tᵀ H⁻¹ T,  d = Tᵀ H⁻¹ (τ − C) + Ṫᵀ q̇,
///     ζ̇ ≥ 0,  λ ≥ 0,  ζ̇ᵀ λ = 0.
///
/// M is formed through the sparse factor H = Lᵀ D L (RBDA §6.5) as
/// M = (L⁻ᵀT)ᵀ D⁻¹ (L⁻ᵀT), never from an explicit H⁻¹. The frictionless LCP
/// (M symmetric positive semi-definite) is solved by principal pivoting
/// (Cottle–Dantzig), whose basic solution gives the *active* set — contacts
/// whose λ is basic, with independent normals — and the *current* set —
/// contacts with ζ̇ = 0 (Table 11.1, step 6).
///
/// **Friction.** A contact whose sliding speed exceeds
/// ContactSolveOptions::slip_velocity is *sliding*: its Coulomb force
/// −μ λ ŝ opposes the sliding direction ŝ exactly, and enters as the
/// generalised force t − μ s instead of t (the LCP matrix is then not
/// symmetric). The others are *sticking* candidates, handled by the chosen
/// FrictionModel:
/// - PolyhedralCone: the friction cone approximated by k ≥ 4 directions
///   d_j (Trinkle–Pang style acceleration LCP, solved by Lemke):
///   Dᵀq̈ + Ḋᵀq̇ + E γ ≥ 0 ⊥ β ≥ 0,  μ λ − Eᵀβ ≥ 0 ⊥ γ ≥ 0;
///   γ > 0 means the contact starts to slip (its tangential acceleration
///   points along the cone edge with the largest friction);
/// - Box: two tangents with |f_t| ≤ μ λ each, solved by projected
///   Gauss–Seidel (fast and robust, an approximation of the cone);
/// - None: frictionless.
/// Some frictional configurations have no consistent solution (Painlevé's
/// paradox); they are reported as ContactStatus::Inconsistent, never as a
/// made-up answer.
///
/// **Impacts** (docs/theory.md §5, Liu et al. eq. 12–14). With pre-impact separation
/// velocities ζ⁻ = Tᵀq̇⁻ and restitution e_i, the impulses solve
///
///     ζ⁺ = ζ⁻ + M λ,  0 ≤ ζ⁺ + e ζ⁻ ⊥ λ ≥ 0,
///
/// where e_i applies to approaching contacts (ζ⁻_i < 0) and separating ones
/// only get ζ⁺_i ≥ 0; q̇⁺ = q̇⁻ + H⁻¹ T λ. With friction the tangential
/// impulses lie in the polyhedral cone and maximise dissipation (an
/// Anitescu–Potra velocity LCP), which gives sticking or sliding impacts
/// (11.66–11.72). The kinetic energy never increases for e ≤ 1: the
/// frictionless law is dissipative, and in the rare frictional configurations
/// where Newton's law would add energy the impact is recomputed as plastic
/// (ImpactSolution::restitution_reduced).
///
/// Everything is sized once per ContactSolver (growing if more contacts
/// arrive); a solve with at most reserved_contacts() contacts does not
/// allocate.

#include <string>
#include <vector>

#include "plume/contact/detection.hpp"
#include "plume/data.hpp"
#include "plume/lcp/enumeration.hpp"
#include "plume/lcp/lemke.hpp"
#include "plume/lcp/pgs.hpp"
#include "plume/lcp/pivoting.hpp"

namespace plume {

enum class FrictionModel : std::uint8_t { None, PolyhedralCone, Box };

enum class ContactStatus : std::uint8_t {
  Solved,        ///< forces (impulses) found and checked
  Infeasible,    ///< no forces satisfy the contact conditions (e.g. Example 11.1)
  Inconsistent,  ///< frictional: no consistent solution (Painlevé's paradox)
  Failed,        ///< the solver stopped without a checked answer (see message)
};
const char* to_string(ContactStatus status);

/// Per-contact outcome of a force solve.
enum class ContactMode : std::uint8_t {
  Separating,  ///< λ = 0 and ζ̇ > 0: the contact is leaving
  Sticking,    ///< in contact, no tangential motion
  Slipping,    ///< sticking candidate whose friction reached the cone (γ > 0)
  Sliding,     ///< sliding: Coulomb force opposite the sliding velocity
};

struct ContactSolveOptions {
  FrictionModel friction = FrictionModel::None;
  int cone_directions = 4;         ///< k of the polyhedral cone (≥ 4)
  double slip_velocity = 1e-6;     ///< sliding speed [m/s] above which a contact slides
  /// Per contact [nc], when not empty: its own sliding-speed threshold
  /// instead of slip_velocity (+∞ keeps a contact sticking whatever its
  /// speed: a time-stepping predictor's sticking contacts, whose predicted
  /// slip is the predictor's error, not a slide).
  VectorX slip_velocities;
  double current_tolerance = 1e-9; ///< |ζ̇| below which a contact is current [m/s²]
  PgsOptions pgs;                  ///< the Box model's solver settings
  /// PolyhedralCone: try the basis of the last solve() that set this flag,
  /// as ImpactOptions::reuse_basis (same contacts and problem size; kept
  /// only if it passes Lemke's own tests; else Lemke).
  bool reuse_basis = false;
};

struct ContactSolution {
  ContactStatus status = ContactStatus::Solved;
  std::string message;
  VectorX lambda;         ///< [nc] normal contact forces [N]
  Matrix2X friction;      ///< [2×nc] friction forces along (t1, t2) of tangent_basis()
  VectorX ddq;            ///< [nv] joint accelerations
  VectorX zeta_dot;       ///< [nc] separation accelerations ζ̇ = Tᵀq̈ + Ṫᵀq̇
  std::vector<ContactMode> mode;  ///< [nc]
  std::vector<int> current;       ///< contacts with ζ̇ = 0 (within current_tolerance)
  std::vector<int> active;        ///< contacts whose λ is basic (independent normals)
  int pivots = 0;                 ///< LCP pivots (or PGS iterations)
};

struct ImpactOptions {
  FrictionModel friction = FrictionModel::None;  ///< None or PolyhedralCone
  int cone_directions = 8;
  /// A velocity-level time step (Stewart–Trinkle, Anitescu–Potra) instead of
  /// an instantaneous impact: with `time_step` h > 0 the caller passes the
  /// unconstrained end-of-step velocity v⁻ = v + h H⁻¹(τ − C) and `gaps`
  /// [nc] the contacts' current φ; contact i may close its gap within the
  /// step but no further: ζ⁺ᵢ ≥ −eᵢ ζ⁻ᵢ − max(φᵢ, 0)/h. Unlike the
  /// acceleration-level force LCP, this problem always has a solution that
  /// Lemke finds (its data are orthogonal to the matrix's null directions).
  double time_step = 0.0;
  VectorX gaps;
  /// Relative compliance c ≥ 0: each impulse row's diagonal W_ii grows by
  /// c·W_ii, so contact i gives by c·W_ii·p_i (a soft constraint, as a
  /// constraint-force mixing). 0: rigid. Dependent contacts (more touching
  /// points than freedoms) then get the unique least-squares share.
  double compliance = 0.0;
  /// Try the basis of the last impact() that set this flag, when it had the
  /// same contacts (ids, in order) and problem: λ_J from A_JJ λ_J = −b_J,
  /// accepted only if it solves the LCP to Lemke's own residual and
  /// amplification tests; otherwise (and the first time) Lemke pivots as
  /// usual. Velocity-level steps in a row over the same contacts usually
  /// keep their basis: one solve of its size instead of a pivot sequence.
  bool reuse_basis = false;
};

struct ImpactSolution {
  ContactStatus status = ContactStatus::Solved;
  std::string message;
  VectorX impulse;          ///< [nc] normal impulses [N·s]
  Matrix2X friction_impulse;///< [2×nc] along (t1, t2)
  VectorX v_plus;           ///< [nv] post-impact velocity
  VectorX zeta_minus;       ///< [nc] pre-impact separation velocities
  VectorX zeta_plus;        ///< [nc] post-impact separation velocities
  double kinetic_before = 0.0;
  double kinetic_after = 0.0;
  bool restitution_reduced = false;  ///< recomputed as plastic to avoid an energy gain
  int pivots = 0;
};

/// The contact and impact solver of one model (one per thread, like Data).
class ContactSolver {
 public:
  explicit ContactSolver(const Model& model, int reserved_contacts = 16);

  /// Contact forces and q̈ for persistent contacts (11.41–11.42): every
  /// contact passed is treated as touching (the simulator passes its current
  /// set; the LCP decides which ones push). `mu` has one friction coefficient
  /// per contact (ignored for FrictionModel::None).
  /// Fills data with H (crba), C (bias_forces), the LTDL factor and the
  /// kinematics with q̈ = 0.
  /// @throws ArgumentError on wrong sizes or non-finite inputs.
  const ContactSolution& solve(const Model& model, Data& data, const Eigen::Ref<const VectorX>& q,
                               const Eigen::Ref<const VectorX>& v, const Eigen::Ref<const VectorX>& tau,
                               const std::vector<Contact>& contacts, const Eigen::Ref<const VectorX>& mu,
                               const ContactSolveOptions& options = {});

  /// Impulses and the post-impact velocity for simultaneous impacts at
  /// `contacts` (all taken to touch), restitution e_i ∈ [0, 1] and friction
  /// μ_i per contact.
  /// @throws ArgumentError on wrong sizes, non-finite inputs, e ∉ [0, 1] or μ < 0.
  const ImpactSolution& impact(const Model& model, Data& data, const Eigen::Ref<const VectorX>& q,
                               const Eigen::Ref<const VectorX>& v_minus, const std::vector<Contact>& contacts,
                               const Eigen::Ref<const VectorX>& restitution, const Eigen::Ref<const VectorX>& mu,
                               const ImpactOptions& options = {});

  /// The assembled frictionless problem of the last solve() or impact():
  /// T (nv × nc), Ṫᵀq̇ (nc), M = TᵀH⁻¹T (nc × nc) and d (nc).
  Eigen::Ref<const MatrixX> T() const { return T_.leftCols(nc_); }
  Eigen::Ref<const VectorX> Tdot_v() const { return Tdv_.head(nc_); }
  Eigen::Ref<const MatrixX> M() const { return M_.topLeftCorner(nc_, nc_); }
  Eigen::Ref<const VectorX> d() const { return d_.head(nc_); }

  int reserved_contacts() const { return reserved_; }
  void reserve(int contacts);

  /// Whether a Lemke solve that every other retry left unsolved is tried
  /// last with a tie window that does not grow with ‖B⁻¹‖∞
  /// (LemkeOptions::growth_scaled_ties = false; default on). It solves
  /// degenerate problems of near-dependent contacts that have solutions;
  /// problems solved before keep their results.
  void set_narrow_tie_retry(bool on) { narrow_tie_retry_ = on; }
  bool narrow_tie_retry() const { return narrow_tie_retry_; }

 private:
  void assemble(const Model& model, Data& data, const Eigen::Ref<const VectorX>& q, const Eigen::Ref<const VectorX>& v,
                const std::vector<Contact>& contacts);
  void solve_frictionless(const Model& model, Data& data, const ContactSolveOptions& options);
  void solve_cone(const Model& model, Data& data, const std::vector<Contact>& contacts,
                  const Eigen::Ref<const VectorX>& mu, const ContactSolveOptions& options);
  void solve_box(const Model& model, Data& data, const Eigen::Ref<const VectorX>& mu,
                 const ContactSolveOptions& options);
  void grow_directions(int k);
  const LcpResult& lemke(const Eigen::Ref<const MatrixX>& A, const Eigen::Ref<const VectorX>& b, int rows);
  // reuse_basis (ImpactOptions, ContactSolveOptions): the last basis of the
  // same kind of problem over the same contacts.
  struct KeptBasis {
    std::vector<int> basic;
    std::vector<std::uint64_t> ids;
    Eigen::Index n = -1;
    double compliance = 0.0;
  };
  // The kept basis, if it solves LCP(A, b) (nullptr if not, or if the
  // problem is not the one it was kept for).
  const LcpResult* last_basis(const KeptBasis& kept, const Eigen::Ref<const MatrixX>& A,
                              const Eigen::Ref<const VectorX>& b, const std::vector<Contact>& contacts,
                              double compliance);
  static void keep_basis(KeptBasis& kept, const LcpResult& r, const std::vector<Contact>& contacts,
                         double compliance);
  void finish_solution(const Model& model, Data& data, const ContactSolveOptions& options);

  int nv_ = 0;
  int nc_ = 0;
  int reserved_ = 0;
  int directions_ = 0;
  double pgs_accuracy_ = 0.0;
  // Assembled problem.
  MatrixX T_, Y_, M_, D_, YD_, G_, YG_, A_, Areg_;
  VectorX Tdv_, Ddv_, d_, a0_, b_, z_, lo_, hi_, x_, v_;
  Matrix3X dirs_;
  std::vector<int> stick_, slide_;
  LemkeSolver lemke_;
  bool narrow_tie_retry_ = true;
  EnumerationSolver enumeration_;
  PivotingSolver pivoting_;
  PgsSolver pgs_;
  LcpResult regularised_;
  VectorX bpert_;
  KeptBasis impact_basis_, force_basis_;
  detail::Equilibration basis_equilibration_;
  detail::BasisPolish basis_polish_;
  VectorX basis_zero_, basis_lambda_, basis_w_;
  std::vector<int> basis_J_;
  LcpResult basis_result_;
  ContactSolution solution_;
  ImpactSolution impact_;
};

}  // namespace plume
