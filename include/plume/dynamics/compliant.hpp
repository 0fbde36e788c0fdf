#pragma once
/// @file
/// Compliant contact (Featherstone §11.8, eqs. 11.73–11.79; docs/theory.md §6):
/// contact forces as a function of the state, for any forward-dynamics call.
///
/// Each point contact is a massless surface patch held by a spring K and a
/// damper D along the normal, and by a spring K_t and a damper D_t in the
/// tangent plane. The contact forces depend on (q, q̇), the time t and a
/// small per-contact state, never on an LCP or an impulse, so the equations
/// of motion H q̈ + C = τ + τ_c stay an ODE; its stiffness (the springs) is
/// what a stiff stepper such as odeint's rosenbrock4 is for.
///
/// ## Normal law (11.73–11.74 with z eliminated)
///
/// Let φ be the gap (negative when penetrating) and φ̇ = tᵀq̇ its rate. The
/// patch obeys K z + D ż + f_n = 0 (11.73). While the point touches the
/// patch, z = φ and
///
///     f_n = −K φ − D φ̇                                                (11.74)
///
/// as long as this is positive. When it would become negative, the point
/// leaves the patch faster than the patch can follow: contact is lost at t₀
/// with z₀ = φ(t₀), and the unloaded patch relaxes as
///
///     z(t) = z₀ e^{−K (t − t₀)/D}          (z ≡ 0 when D = 0)
///
/// The point touches again when φ ≤ z(t); at that instant f_n jumps from 0 to
/// D (ż − φ̇) > 0 (a damper struck at a speed, as in any Kelvin–Voigt model).
/// A contact never seen before starts on a rested patch, z ≡ 0. Because z = φ
/// while touching and z ≤ 0 always, touching implies φ ≤ 0.
///
/// ## Tangential law (11.75–11.79)
///
/// The patch's tangential displacement x (2-D) obeys K_t x + D_t ẋ + f_t = 0
/// (11.77; f_t is the force on the point, so −f_t acts on the patch). With
/// u the sliding velocity (the velocity of the successor's witness point
/// relative to the predecessor's, in the tangent plane):
///
///     f_stick = −K_t x − D_t u                                          (11.78)
///     f_t = f_stick                       if |f_stick| ≤ μ f_n  (sticking)
///     f_t = μ f_n f_stick / |f_stick|     otherwise              (slipping)  (11.79)
///     ẋ   = −(K_t x + f_t) / D_t                                         (11.77)
///
/// which gives ẋ = u while sticking (the patch moves with the point) and,
/// while slipping, the rate at which the spring force K_t x + D_t ẋ equals the
/// friction force; both agree on the cone |f_stick| = μ f_n, so ẋ is
/// continuous there. The 2-D disc replaces the book's 1-D clamp (isotropic
/// Coulomb cone). A separated contact (f_n = 0) has f_t = 0 and its patch
/// relaxes, ẋ = −K_t x / D_t. With D_t = 0 (a pure spring) x is the
/// rigid-plastic limit D_t → 0 of the same law: sticking ẋ = u; slipping
/// ẋ = u − x̂ max(0, x̂·u) (the spring turns but does not stretch beyond the
/// cone); update() projects x onto |K_t x| ≤ μ f_n and sets x = 0 on
/// separation.
///
/// x is stored in the basis (t1, t2) = tangent_basis(n_ref) of a *reference
/// normal* n_ref, the normal at the last update(). When the normal has turned
/// to n, x is carried along the minimal rotation R(n_ref → n) (Rodrigues,
/// axis n_ref × n) and read in tangent_basis(n):
///
///     x_n = Q x,   Q_jk = t_j(n) · R t_k(n_ref)   (2 × 2, orthogonal)
///
/// The force law uses x_n; the derivative is returned in the reference basis,
/// ẋ = Qᵀ ẋ_n, so the ODE state x is a smooth variable between updates;
/// update() re-expresses x in the new normal's basis and sets n_ref = n.
///
/// ## Per-contact state and its update rule
///
/// CompliantContactState keeps, per Contact::id, the normal *phase*
/// (Touching, or Relaxing with z₀, t₀; a rested patch is Relaxing with
/// z₀ = 0), n_ref, the committed displacement x and the last mode. The force
/// and derivative functions read it (const) at any trial state of a step;
/// update() commits at an accepted state (t, q, q̇, x):
///
///     Touching:  if φ ≤ 0 and −Kφ − Dφ̇ > 0, stay; else Relaxing with
///                z₀ = min(φ, 0) (0 when D = 0), t₀ = t.
///     Relaxing:  if φ ≤ z(t): Touching when −Kφ − Dφ̇ > 0; otherwise stay
///                Relaxing from the point, z₀ = min(φ, 0), t₀ = t.
///     x:         re-expressed in tangent_basis(n) (above), n_ref = n;
///                D_t = 0: projected onto the cone (x = 0 when separated).
///     mode:      Separated (f_n = 0), Sticking or Slipping, from 11.79.
///
/// At a trial state, the force uses the committed phase: Touching gives
/// f_n = max(0, −Kφ − Dφ̇) for φ ≤ 0 (else 0), Relaxing gives the same when
/// φ ≤ z(t) (else 0). A switch that happens inside a step is committed at its
/// end, so the surface position after a loss is then off by O(step); a
/// simulator that wants switches exact locates them on its dense output with
/// the witnesses in CompliantContactForce (positive while the committed phase
/// and mode hold, crossing zero at a switch) and calls update() there.
/// Contacts that disappear from detection are dropped by synchronize(); new
/// ones start rested with x = 0 and n_ref = Contact::normal.
///
/// ## How a simulator uses it
///
///     detect contacts (with a margin); state.synchronize(contacts);
///     y = [q, v, x = state.displacements()];
///     ẏ = [G(q) v, forward_dynamics_compliant(…, x, t, forces), forces.x_dot()];
///     after each accepted step: forward_kinematics(q, v); state.update(…);
///       x ← state.displacements() (re-initialise the stepper if x changed);
///     after re-detection: state.synchronize(new contacts), resize y.
///
/// Shape contacts keep their features between detections: contact_kinematics()
/// refreshes φ, n and the witness points at every trial state. Joint limits
/// (ContactKind::JointLimit) use the normal law only (no friction, x ≡ 0),
/// with φ from q and K, D in N·m/rad or N/m as the joint is revolute or
/// prismatic.
///
/// ## Derivatives (for a stiff stepper's Jacobian ∂ẏ/∂y)
///
/// The law is smooth piecewise; compliant_normal_law() and
/// compliant_tangential_law() return the pieces' partial derivatives:
///
///     normal, touching (f_n > 0):  ∂f_n/∂φ = −K,  ∂f_n/∂φ̇ = −D;  else 0.
///     sticking:   ∂f_t/∂x = −K_t I,  ∂f_t/∂u = −D_t I,  ∂f_t/∂f_n = 0;
///                 ∂ẋ/∂x = 0,  ∂ẋ/∂u = I,  ∂ẋ/∂f_n = 0.
///     slipping (g = f_stick, ĝ = g/|g|, P = I − ĝĝᵀ, r = μ f_n/|g| < 1):
///                 ∂f_t/∂x = −K_t r P,  ∂f_t/∂u = −D_t r P,  ∂f_t/∂f_n = μ ĝ;
///                 ∂ẋ/∂x = −(K_t/D_t)(I − r P),  ∂ẋ/∂u = r P,  ∂ẋ/∂f_n = −μ ĝ/D_t.
///     separated:  f_t = 0;  ∂ẋ/∂x = −(K_t/D_t) I.
///     D_t = 0, slipping (x̂ = x/|x|, P_x = I − x̂x̂ᵀ, s = x̂·u > 0):
///                 f_t = −μ f_n x̂,  ∂f_t/∂x = −μ f_n P_x/|x|,  ∂f_t/∂f_n = −μ x̂;
///                 ẋ = u − s x̂,  ∂ẋ/∂u = P_x,  ∂ẋ/∂x = −(s I + x̂ uᵀ) P_x/|x|.
///
/// Chain rule to the ODE state (q, v, x), with t_i the column of T (11.25),
/// D_i the nv × 2 tangent Jacobian (tangent_jacobian with 2 directions),
/// φ̇_i = t_iᵀv, u_i = D_iᵀv, and Q_i the basis change above:
///
///     ∂τ_c/∂v   = Σ t_i (∂f_n/∂φ̇) t_iᵀ + D_i (∂f_t/∂f_n)(∂f_n/∂φ̇) t_iᵀ + D_i (∂f_t/∂u) D_iᵀ
///     ∂τ_c/∂x_i = D_i (∂f_t/∂x) Q_i
///     ∂ẋ_i/∂v   = Q_iᵀ [ (∂ẋ/∂f_n)(∂f_n/∂φ̇) t_iᵀ + (∂ẋ/∂u) D_iᵀ ]
///     ∂ẋ_i/∂x_i = Q_iᵀ (∂ẋ/∂x) Q_i
///
/// and ∂/∂q the same with ∂f_n/∂φ (∂φ/∂q · G(q) = t_iᵀ) plus the terms
/// from the motion of t_i, D_i, Q_i with q, for which finite differences
/// are the practical choice. The damping blocks (−D, −D_t) dominate the
/// stiffness. The pieces switch at f_n = 0 (a jump in f_n when touching
/// begins, a kink when it ends) and at |f_stick| = μ f_n (a kink): the events
/// the witnesses mark.
///
/// ## Default parameters
///
/// Sized for a 20 kg quadruped standing on 4 point feet: each foot carries
/// 20·9.81/4 = 49.05 N, so a penetration below 1 mm needs K ≥ 4.9·10⁴ N/m.
/// K = 2·10⁵ N/m gives 0.25 mm standing and still under 1 mm in a trot
/// (2 feet at 2 g: 196 N per foot → 0.98 mm). D is critical damping for the
/// mass each foot carries when standing, m = 20/4 = 5 kg:
/// D = 2√(K m) = 2√(2·10⁵ · 5) = 2000 N·s/m, so standing settles without
/// ringing, while lighter effective masses (a swinging foot, ~0.5 kg) are
/// overdamped and land without bouncing. The patch relaxes in D/K = 10 ms,
/// well within a gait's swing phase. The tangential pair uses the same values
/// (critically damped sideways for the same 5 kg; at most μ f_n/K_t = 0.12 mm
/// of creep before slipping), and μ = 0.5 matches World's default. The
/// stiffest mode for an explicit stepper is then ≈ max(√(K/m), D/m) over the
/// effective masses m at the contacts.

#include <cstdint>
#include <vector>

#include "plume/algorithms/kinematics.hpp"
#include "plume/contact/detection.hpp"

namespace plume {

/// Spring–damper and friction parameters of one compliant contact.
struct CompliantParameters {
  double stiffness = 2e5;             ///< K [N/m] (N·m/rad for revolute joint limits), ≥ 0
  double damping = 2e3;               ///< D [N·s/m], ≥ 0; 0 = pure spring, the patch rests at once
  double tangential_stiffness = 2e5;  ///< K_t [N/m], ≥ 0
  double tangential_damping = 2e3;    ///< D_t [N·s/m], ≥ 0; 0 = rigid-plastic limit (see file comment)
  double mu = 0.5;                    ///< Coulomb friction coefficient, ≥ 0; +∞ = always sticking
};

/// Normal phase of a contact's surface patch.
enum class CompliantPhase : std::uint8_t {
  Touching,  ///< z = φ: the patch follows the point
  Relaxing   ///< z(t) = z₀ e^{−K(t−t₀)/D}: unloaded (z₀ = 0: rested)
};

/// Tangential mode of a contact (11.79).
enum class CompliantMode : std::uint8_t {
  Separated,  ///< f_n = 0 (and f_t = 0)
  Sticking,   ///< |f_stick| ≤ μ f_n: f_t = f_stick, ẋ = u
  Slipping    ///< f_t on the cone, opposing f_stick's direction
};
const char* to_string(CompliantPhase phase);
const char* to_string(CompliantMode mode);

/// The committed state of one contact (see the file comment's update rule).
struct CompliantContactRecord {
  std::uint64_t id = 0;                                 ///< Contact::id
  CompliantPhase phase = CompliantPhase::Relaxing;
  double z0 = 0.0;                                      ///< patch position at the last loss [m]
  double t0 = 0.0;                                      ///< time of the last loss [s]
  Vec3 reference_normal = Vec3::UnitZ();                ///< n_ref: x is in tangent_basis(n_ref)
  CompliantMode mode = CompliantMode::Separated;        ///< mode at the last update()

  /// z(t): the patch position while Relaxing (z₀ e^{−K(t−t₀)/D}, 0 if D = 0);
  /// meaningless while Touching (the patch is at the point).
  double surface(const CompliantParameters& p, double t) const;
};

/// Per-contact compliant state that survives between calls, kept in the
/// order of the contact list it was last synchronised with.
///
/// Allocation: synchronize() and update() allocate only when the number of
/// contacts exceeds every earlier count (or reserve()).
class CompliantContactState {
 public:
  CompliantContactState() = default;
  explicit CompliantContactState(std::size_t reserved_contacts) { reserve(reserved_contacts); }
  void reserve(std::size_t contacts);

  /// Aligns the records with `contacts` by Contact::id: records of ids still
  /// present are kept (with their x), new ids start rested (Relaxing, z₀ = 0,
  /// x = 0, n_ref = Contact::normal), ids no longer present are dropped.
  /// O(nc²) id matching, meant for the few dozen contacts of a robot.
  void synchronize(const std::vector<Contact>& contacts);

  /// Commits phase changes, re-expresses and (D_t = 0) projects x, records
  /// the modes, at an accepted state: `x` is the ODE's tangential block
  /// (2·nc, contact order), `t` the time.
  /// @pre forward_kinematics(model, data, q, v); contacts in the order of
  /// the last synchronize().
  /// @throws ArgumentError on wrong sizes, invalid parameters, or contacts
  /// whose ids do not match the records (call synchronize() first).
  void update(const Model& model, const Data& data, const VecRef& q, const std::vector<Contact>& contacts,
              const std::vector<CompliantParameters>& params, const VecRef& x, double t);

  /// Forgets every contact.
  void clear();

  std::size_t size() const { return records_.size(); }
  const CompliantContactRecord& record(std::size_t i) const { return records_[i]; }
  const std::vector<CompliantContactRecord>& records() const { return records_; }
  /// The committed tangential displacements x (2·nc; entries 2i, 2i+1 along
  /// t1, t2 of tangent_basis(record(i).reference_normal)): the ODE state's x
  /// block after synchronize() or update().
  Eigen::Map<const VectorX> displacements() const {
    return Eigen::Map<const VectorX>(x_.data(), static_cast<Eigen::Index>(x_.size()));
  }

 private:
  std::vector<CompliantContactRecord> records_, scratch_;
  std::vector<double> x_, x_scratch_;
};

/// One contact's forces and rates at a trial state.
struct CompliantContactForce {
  CompliantMode mode = CompliantMode::Separated;
  bool touching = false;        ///< the point is on the patch (f_n > 0)
  double gap = 0.0;             ///< φ [m]
  double gap_rate = 0.0;        ///< φ̇ [m/s]
  double surface = 0.0;         ///< z: φ while touching, z(t) otherwise
  double normal_force = 0.0;    ///< f_n ≥ 0 [N]
  Eigen::Vector2d friction = Eigen::Vector2d::Zero();          ///< f_t along (t1, t2) of tangent_basis(n) [N]
  Eigen::Vector2d sliding_velocity = Eigen::Vector2d::Zero();  ///< u along (t1, t2) [m/s]
  Eigen::Vector2d displacement = Eigen::Vector2d::Zero();      ///< x_n = Q x along (t1, t2) [m]
  Vec3 normal = Vec3::UnitZ();  ///< n, world, a → b
  Vec3 force = Vec3::Zero();    ///< n f_n + t1 f_t1 + t2 f_t2, world: on b at point_b, minus it on a at point_a
  Vec3 point_a = Vec3::Zero(), point_b = Vec3::Zero();  ///< witness points, world
  /// Event witnesses, positive while the committed phase / the mode holds:
  /// Touching: −Kφ − Dφ̇ (contact lost at 0); Relaxing: φ − z(t) (touch at 0).
  double normal_witness = 0.0;
  /// μ f_n − |f_stick|: positive while sticking, negative while slipping
  /// (+∞ for μ = ∞; −|f_stick| when separated).
  double friction_witness = 0.0;
};

/// Per-contact details, the generalised contact force and the state
/// derivative of one evaluation; a workspace for forward_dynamics_compliant().
/// Allocates only when the number of contacts exceeds every earlier count.
class CompliantContactForces {
 public:
  std::vector<CompliantContactForce> contacts;  ///< [nc]
  VectorX tau;                                  ///< [nv] τ_c = Σ t_i f_n,i + D_i f_t,i

  /// ẋ (2·nc), in the records' reference bases.
  Eigen::Map<const VectorX> x_dot() const {
    return Eigen::Map<const VectorX>(x_dot_.data(), static_cast<Eigen::Index>(x_dot_.size()));
  }
  Eigen::Map<VectorX> x_dot() { return Eigen::Map<VectorX>(x_dot_.data(), static_cast<Eigen::Index>(x_dot_.size())); }

  /// Sizes everything for `nv` velocities and `nc` contacts.
  void resize(int nv, std::size_t nc);

 private:
  friend const VectorX& forward_dynamics_compliant(const Model&, Data&, const VecRef&, const VecRef&, const VecRef&,
                                                   const std::vector<Contact>&,
                                                   const std::vector<CompliantParameters>&,
                                                   const CompliantContactState&, const VecRef&, double,
                                                   CompliantContactForces&);
  std::vector<double> x_dot_;
  VectorX tau_total_;  // τ + τ_c, the input of ABA
};

/// The normal law at one contact: f_n and its partial derivatives.
struct CompliantNormalLaw {
  double force = 0.0;       ///< f_n ≥ 0
  double d_gap = 0.0;       ///< ∂f_n/∂φ: −K while touching, else 0
  double d_gap_rate = 0.0;  ///< ∂f_n/∂φ̇: −D while touching, else 0
  bool touching = false;
  double surface = 0.0;     ///< z
  double witness = 0.0;     ///< see CompliantContactForce::normal_witness
};

/// f_n from the committed record, the gap, its rate and the time (11.74 with
/// z eliminated). Joint limits and shapes alike.
CompliantNormalLaw compliant_normal_law(const CompliantParameters& p, const CompliantContactRecord& record,
                                        double gap, double gap_rate, double t);

/// The tangential law at one contact: f_t, ẋ and their partial derivatives,
/// all in one tangent basis.
struct CompliantTangentialLaw {
  CompliantMode mode = CompliantMode::Separated;
  Eigen::Vector2d force = Eigen::Vector2d::Zero();  ///< f_t
  Eigen::Vector2d rate = Eigen::Vector2d::Zero();   ///< ẋ
  Eigen::Matrix2d force_d_x = Eigen::Matrix2d::Zero(), force_d_u = Eigen::Matrix2d::Zero();
  Eigen::Vector2d force_d_normal = Eigen::Vector2d::Zero();  ///< ∂f_t/∂f_n
  Eigen::Matrix2d rate_d_x = Eigen::Matrix2d::Zero(), rate_d_u = Eigen::Matrix2d::Zero();
  Eigen::Vector2d rate_d_normal = Eigen::Vector2d::Zero();   ///< ∂ẋ/∂f_n
  double witness = 0.0;  ///< μ f_n − |f_stick|
};

/// f_t and ẋ (11.77–11.79) from the normal force f_n ≥ 0, the displacement x
/// and the sliding velocity u (same basis).
CompliantTangentialLaw compliant_tangential_law(const CompliantParameters& p, double normal_force,
                                                const Eigen::Vector2d& x, const Eigen::Vector2d& u);

/// Generalised contact force τ_c = Σ t_i f_n,i + D_i f_t,i (nv) of the
/// compliant contacts at a trial state (q, q̇, x, t). `x` is the ODE's
/// tangential block (2·nc, in the records' reference bases); `q` supplies
/// the joint-limit gaps. With `details` (resized to nv and nc, its tau not
/// written), also the per-contact forces, modes, witnesses and ẋ.
/// Allocation-free once `details` has held this many contacts.
/// @pre forward_kinematics(model, data, q, v); `state` synchronised with `contacts`.
/// @throws ArgumentError on wrong sizes, non-finite x, invalid parameters
/// (negative or NaN values; infinite ones other than μ) or a state that does
/// not match the contacts.
void compliant_contact_forces(const Model& model, const Data& data, const VecRef& q,
                              const std::vector<Contact>& contacts, const std::vector<CompliantParameters>& params,
                              const CompliantContactState& state, const VecRef& x, double t,
                              Eigen::Ref<VectorX> tau_contact, CompliantContactForces* details = nullptr);

/// ẋ (2·nc) at a trial state: the part of the ODE right-hand side that the
/// compliant state adds to [q̇, q̈]. Same preconditions as
/// compliant_contact_forces(). Allocation-free.
void compliant_state_derivative(const Model& model, const Data& data, const VecRef& q,
                                const std::vector<Contact>& contacts, const std::vector<CompliantParameters>& params,
                                const CompliantContactState& state, const VecRef& x, double t,
                                Eigen::Ref<VectorX> x_dot);

/// q̈ = ABA(q, q̇, τ + τ_c) = H⁻¹(τ − C + τ_c) with the compliant contact
/// forces, and ẋ in out.x_dot(): the ODE right-hand side. Runs
/// forward_kinematics itself. Allocation-free once `out` is sized.
/// @returns data.ddq.
/// @throws ArgumentError as compliant_contact_forces() and aba() do.
const VectorX& forward_dynamics_compliant(const Model& model, Data& data, const VecRef& q, const VecRef& v,
                                          const VecRef& tau, const std::vector<Contact>& contacts,
                                          const std::vector<CompliantParameters>& params,
                                          const CompliantContactState& state, const VecRef& x, double t,
                                          CompliantContactForces& out);

}  // namespace plume
