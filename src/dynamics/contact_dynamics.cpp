// Contact forces (11.41–11.42) and impulses (docs/theory.md §5) through the sparse
// factor of H.
#include "plume/dynamics/contact_dynamics.hpp"

#include <algorithm>
#include <limits>
#include <cstdio>
#include <cmath>
#include <sstream>

#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "plume/error.hpp"

namespace plume {

const char* to_string(ContactStatus status) {
  switch (status) {
    case ContactStatus::Solved: return "solved";
    case ContactStatus::Infeasible: return "infeasible";
    case ContactStatus::Inconsistent: return "inconsistent";
    case ContactStatus::Failed: return "failed";
  }
  return "unknown";
}

namespace {

constexpr double kPi = 3.14159265358979323846;

// x ← H⁻¹ (G z) given Y = L⁻ᵀ G: H⁻¹ G z = L⁻¹ D⁻¹ (Y z).
void apply_Hinv(const Model& model, const Data& data, const Eigen::Ref<const MatrixX>& Y,
                const Eigen::Ref<const VectorX>& z, VectorX& x) {
  x.noalias() = Y * z;
  x.array() /= data.LD.diagonal().array();
  ltdl_solve_L(model, data, x);
}

// The polyhedral cone's k directions d_j = c_j t1 + s_j t2: c_j = cos θ_j
// and s_j = sin θ_j (θ_j = 2πj/k) in rows 0 and 1 of `dirs`.
void cone_cosines(int k, Matrix3X& dirs) {
  for (int j = 0; j < k; ++j) dirs.block<2, 1>(0, j) = cone_direction(k, j);
}

// One contact's friction in the (t1, t2) basis from its k cone forces
// lambda(first …): (Σ_j c_j f_j, Σ_j s_j f_j).
Eigen::Vector2d cone_resultant(const VectorX& lambda, Eigen::Index first, int k, const Matrix3X& dirs) {
  double f1 = 0.0, f2 = 0.0;
  for (int j = 0; j < k; ++j) {
    const double f = lambda(first + j);
    f1 += dirs(0, j) * f;
    f2 += dirs(1, j) * f;
  }
  return {f1, f2};
}

// A = Kᵀ H⁻¹ G = YKᵀ D⁻¹ YG.
void form_product(const Data& data, const Eigen::Ref<const MatrixX>& YK, const Eigen::Ref<const MatrixX>& YG,
                  Eigen::Ref<MatrixX> A) {
  A.noalias() = YK.transpose() * (data.LD.diagonal().cwiseInverse().asDiagonal() * YG);
}

ContactStatus status_of(const LcpResult& r, bool frictional_sliding) {
  switch (r.status) {
    case LcpStatus::Solved: return ContactStatus::Solved;
    case LcpStatus::Infeasible: return frictional_sliding ? ContactStatus::Inconsistent : ContactStatus::Infeasible;
    default: return ContactStatus::Failed;
  }
}

std::string contact_list(const std::vector<Contact>& contacts) {
  std::ostringstream s;
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    s << (i ? ", " : "") << i << " (bodies " << contacts[i].body_a << "–" << contacts[i].body_b << ")";
  }
  return s.str();
}

void check_inputs(const Model& model, const Data& data, const Eigen::Ref<const VectorX>& q,
                  const Eigen::Ref<const VectorX>& v, std::size_t nc, const Eigen::Ref<const VectorX>& mu) {
  check_data(model, data);
  check_configuration(model, q, "q");
  check_vector(v, model.nv(), "v");
  check_vector(mu, static_cast<Eigen::Index>(nc), "mu");
  for (Eigen::Index i = 0; i < mu.size(); ++i) {
    if (mu(i) < 0.0) throw ArgumentError("mu[" + std::to_string(i) + "] is negative");
  }
}

}  // namespace

ContactSolver::ContactSolver(const Model& model, int reserved_contacts) : nv_(model.nv()) {
  reserve(reserved_contacts);
}

void ContactSolver::reserve(int contacts) {
  if (contacts <= reserved_) return;
  reserved_ = contacts;
  const int nc = contacts;
  const int k = std::max(8, directions_);  // room for cones of k directions without reallocating
  const int m = nc * (k + 2);
  T_.setZero(nv_, nc);
  Y_.setZero(nv_, nc);
  M_.setZero(nc, nc);
  D_.setZero(nv_, k * nc);
  YD_.setZero(nv_, k * nc);
  G_.setZero(nv_, m);
  YG_.setZero(nv_, m);
  A_.setZero(m, m);
  Areg_.setZero(m, m);
  regularised_.lambda.setZero(m);
  regularised_.w.setZero(m);
  regularised_.basic.reserve(m);
  regularised_.message.reserve(512);
  Tdv_.setZero(nc);
  Ddv_.setZero(k * nc);
  d_.setZero(nc);
  a0_.setZero(nv_);
  b_.setZero(m);
  z_.setZero(m);
  lo_.setZero(m);
  hi_.setZero(m);
  x_.setZero(nv_);
  v_.setZero(nv_);
  dirs_.setZero(3, k * nc);
  directions_ = k;
  stick_.reserve(nc);
  slide_.reserve(nc);
  lemke_.reserve(m);
  pivoting_.reserve(nc);
  pgs_.reserve(3 * nc);
  pgs_.options().normal_index.reserve(3 * nc);
  for (ContactSolution* s : {&solution_}) {
    s->lambda.setZero(nc);
    s->friction.setZero(2, nc);
    s->zeta_dot.setZero(nc);
    s->ddq.setZero(nv_);
    s->mode.reserve(nc);
    s->current.reserve(nc);
    s->active.reserve(nc);
  }
  impact_.impulse.setZero(nc);
  impact_.friction_impulse.setZero(2, nc);
  impact_.zeta_minus.setZero(nc);
  impact_.zeta_plus.setZero(nc);
  impact_.v_plus.setZero(nv_);
}

// Room for cones of k directions (and the two-tangent Jacobian).
void ContactSolver::grow_directions(int k) {
  if (k <= directions_ && D_.cols() >= k * reserved_) return;
  directions_ = std::max(directions_, k);
  const int kk = directions_;
  D_.resize(nv_, kk * reserved_);
  YD_.resize(nv_, kk * reserved_);
  Ddv_.resize(kk * reserved_);
  dirs_.resize(3, kk * reserved_);
  const int m = reserved_ * (kk + 2);
  G_.resize(nv_, m);
  YG_.resize(nv_, m);
  A_.resize(m, m);
  Areg_.resize(m, m);
  regularised_.lambda.resize(m);
  regularised_.w.resize(m);
  regularised_.basic.reserve(m);
  b_.resize(m);
  z_.resize(m);
  lo_.resize(m);
  hi_.resize(m);
  lemke_.reserve(m);
}

// Kinematics with q̈ = 0, H and its factor, T and Ṫᵀq̇, Y = L⁻ᵀT, M = YᵀD⁻¹Y.
void ContactSolver::assemble(const Model& model, Data& data, const Eigen::Ref<const VectorX>& q,
                             const Eigen::Ref<const VectorX>& v, const std::vector<Contact>& contacts) {
  nc_ = static_cast<int>(contacts.size());
  reserve(nc_);
  unchecked::crba(model, data, q);
  unchecked::ltdl(model, data);
  for (int k = 0; k < nv_; ++k) {
    if (!(data.LD(k, k) > 0.0)) throw Error("contact dynamics: H is not positive definite (pivot " + std::to_string(k) + ")");
  }
  unchecked::forward_kinematics(model, data, q, v, VectorX::Zero(nv_));
  auto T = T_.leftCols(nc_);
  contact_jacobian(model, data, contacts, T, Tdv_.head(nc_));
  auto Y = Y_.leftCols(nc_);
  Y = T;
  ltdl_solve_Lt(model, data, Y);
  form_product(data, Y, Y, M_.topLeftCorner(nc_, nc_));
}

const ContactSolution& ContactSolver::solve(const Model& model, Data& data, const Eigen::Ref<const VectorX>& q,
                                            const Eigen::Ref<const VectorX>& v, const Eigen::Ref<const VectorX>& tau,
                                            const std::vector<Contact>& contacts,
                                            const Eigen::Ref<const VectorX>& mu, const ContactSolveOptions& options) {
  check_inputs(model, data, q, v, contacts.size(), mu);
  check_vector(tau, model.nv(), "tau");
  if (options.friction == FrictionModel::PolyhedralCone && options.cone_directions < 4) {
    throw ArgumentError("cone_directions must be at least 4");
  }
  assemble(model, data, q, v, contacts);
  v_ = v;
  const bool frictional = options.friction != FrictionModel::None && nc_ > 0 && mu.maxCoeff() > 0.0;
  if (frictional) {
    // The two-tangent Jacobian (t1, t2 per contact) and its rates, while the
    // q̈ = 0 kinematics of assemble() are still in data.
    grow_directions(options.friction == FrictionModel::PolyhedralCone ? options.cone_directions : 2);
    tangent_jacobian(model, data, contacts, 2, D_.leftCols(2 * nc_), Ddv_.head(2 * nc_));
  }
  // a0 = H⁻¹(τ − C): the acceleration without contact forces.
  a0_ = tau - unchecked::bias_forces(model, data, q, v);
  ltdl_solve(model, data, a0_);
  d_.head(nc_).noalias() = T_.leftCols(nc_).transpose() * a0_ + Tdv_.head(nc_);

  ContactSolution& s = solution_;
  s.message.clear();
  s.mode.assign(nc_, ContactMode::Sticking);
  s.friction.leftCols(nc_).setZero();
  s.pivots = 0;
  if (nc_ == 0) {
    s.status = ContactStatus::Solved;
    s.lambda.resize(0);
    s.zeta_dot.resize(0);
    s.ddq = a0_;
    s.current.clear();
    s.active.clear();
    return s;
  }
  if (!frictional) {
    solve_frictionless(model, data, options);
  } else if (options.friction == FrictionModel::Box) {
    solve_box(model, data, mu, options);
  } else {
    solve_cone(model, data, contacts, mu, options);
  }
  if (s.status != ContactStatus::Solved && s.message.find("contacts") == std::string::npos) {
    s.message += " (contacts " + contact_list(contacts) + ")";
  }
  finish_solution(model, data, options);
  return s;
}

// Lemke on LCP(A, b), with fallbacks for the cases where it fails: a final
// basis too ill-conditioned to pass the strict backward-error test (100·n·ε
// of the problem's scale) — dependent contacts, more touching points than
// the bodies have freedoms, as the eight corners of two flat feet — or a
// secondary ray that proves nothing because A is not copositive-plus
// (sliding friction). The test accepted here is √ε of the scale, the
// accuracy to which w is known anyway for λ within lcp_max_amplification.
//  1. The rejected λ of the final basis, if it passes that test.
//  2. Lemke again with a compliance of 1e-10·A_ii added to the first `rows`
//     diagonal entries (the contact rows; the cone rows have none): the
//     regularised problem has a unique, better-conditioned solution, which
//     solves the rigid one up to 1e-10·A_ii·λ_i.
//  3. Small problems (n ≤ 12): every active set (EnumerationSolver), exact.
//  4. Lemke on b perturbed by 1e-9, then 1e-7, of its scale (degenerate ties).
//  5. Lemke with a tenth, then a hundredth, of its zero tolerance.
//  6. Compliances of 1e-8 and 1e-6·A_ii, each accepted when it solves its
//     own regularised problem to √ε: a contact that gives by a millionth of
//     its natural scale rather than a stopped simulation; the message says so.
const LcpResult& ContactSolver::lemke(const Eigen::Ref<const MatrixX>& A, const Eigen::Ref<const VectorX>& b,
                                     int rows) {
  const double root_eps = std::sqrt(std::numeric_limits<double>::epsilon());
  const LcpResult& r = lemke_.solve(A, b);
  if (r.status != LcpStatus::Failed && r.status != LcpStatus::IterationLimit) return r;
  const Eigen::Index n = A.rows();
  auto passes = [&](const Eigen::Ref<const MatrixX>& M, const VectorX& lambda, double& residual,
                    double& tolerance) {
    if (lambda.size() != n || !lambda.allFinite()) return false;
    residual = lcp_residual(M, b, lambda);
    tolerance = root_eps * lcp_residual_scale(M, b, lambda);
    return residual <= tolerance && lcp_amplification(M, b, lambda) <= lcp_max_amplification();
  };
  char head[200];
  auto accept = [&](double residual, double tolerance) -> const LcpResult& {
    regularised_.w.noalias() = A * regularised_.lambda;
    regularised_.w += b;
    regularised_.pivots += r.pivots;
    regularised_.status = LcpStatus::Solved;
    regularised_.residual = residual;
    regularised_.tolerance = tolerance;
    regularised_.message = head + r.message;
    return regularised_;
  };
  double residual = 0.0, tolerance = 0.0;
  if (passes(A, r.lambda, residual, tolerance)) {
    regularised_ = r;
    regularised_.pivots = 0;  // accept() adds r's pivots
    std::snprintf(head, sizeof head, "accepted at residual %.3g <= sqrt(eps) * scale = %.3g after: ", residual,
                  tolerance);
    return accept(residual, tolerance);
  }
  if (Areg_.rows() < n) Areg_.resize(n, n);
  auto Ar = Areg_.topLeftCorner(n, n);
  auto regularise = [&](double compliance) {
    Ar = A;
    for (int i = 0; i < rows; ++i) Ar(i, i) += compliance * std::max(A(i, i), 0.0);
    lemke_.solve(Ar, b, regularised_);
    return regularised_.status == LcpStatus::Solved;
  };
  if (regularise(1e-10) && passes(A, regularised_.lambda, residual, tolerance)) {
    std::snprintf(head, sizeof head,
                  "solved with a contact compliance of 1e-10, residual %.3g <= sqrt(eps) * scale = %.3g, after: ",
                  residual, tolerance);
    return accept(residual, tolerance);
  }
  std::string enumeration_message;
  if (n <= enumeration_.options().max_size) {
    enumeration_.solve(A, b, regularised_);
    if (regularised_.status == LcpStatus::Solved) {
      regularised_.pivots += r.pivots;
      regularised_.message = "Lemke failed (" + r.message + "); " + regularised_.message;
      return regularised_;
    }
    enumeration_message = regularised_.message;
  }
  // Lemke's lexicographic ratio test resolves degeneracy exactly only in
  // exact arithmetic; with many dependent contacts (a trunk's four coplanar
  // corners and friction) rounding can steer it to a basis that does not
  // solve the problem although it is well conditioned. A deterministic
  // perturbation of b by 1e-9 (then 1e-7) of its scale breaks the ties; the
  // result must still solve the unperturbed problem to √ε.
  if (bpert_.size() < n) bpert_.resize(n);
  auto bp = bpert_.head(n);
  const double bscale = std::max(std::numeric_limits<double>::min(), b.cwiseAbs().maxCoeff());
  for (const double size : {1e-9, 1e-7}) {
    for (Eigen::Index i = 0; i < n; ++i) bp(i) = b(i) + size * bscale * static_cast<double>(i + 1) / static_cast<double>(n);
    lemke_.solve(A, bp, regularised_);
    if (regularised_.status == LcpStatus::Solved && passes(A, regularised_.lambda, residual, tolerance)) {
      std::snprintf(head, sizeof head,
                    "solved after perturbing d by %.0e of its scale to break degenerate ties, residual %.3g <= "
                    "sqrt(eps) * scale = %.3g, after: ",
                    size, residual, tolerance);
      return accept(residual, tolerance);
    }
  }
  // The ratio test's zero tolerance decides which near-zero entries of a
  // degenerate tableau count as pivots; a tenth and a hundredth of the
  // default take other paths through the same problem.
  const LemkeOptions defaults = lemke_.options();
  // Lemke with other options on the same problem: solved, and to √ε.
  auto solve_with = [&](const LemkeOptions& o) {
    lemke_.set_options(o);
    lemke_.solve(A, b, regularised_);
    lemke_.set_options(defaults);
    return regularised_.status == LcpStatus::Solved && passes(A, regularised_.lambda, residual, tolerance);
  };
  const double zt = defaults.zero_tolerance.value_or(static_cast<double>(n) * 10.0 *
                                                     std::numeric_limits<double>::epsilon());
  for (const double factor : {0.1, 0.01}) {
    LemkeOptions o = defaults;
    o.zero_tolerance = factor * zt;
    if (solve_with(o)) {
      std::snprintf(head, sizeof head,
                    "solved with the pivot zero tolerance at %.0e (degenerate ties), residual %.3g <= sqrt(eps) * "
                    "scale = %.3g, after: ",
                    factor * zt, residual, tolerance);
      return accept(residual, tolerance);
    }
  }
  for (const double compliance : {1e-8, 1e-6}) {
    if (regularise(compliance) && passes(Ar, regularised_.lambda, residual, tolerance)) {
      std::snprintf(head, sizeof head,
                    "solved with a contact compliance of %.0e (the rigid problem defeated Lemke), residual %.3g <= "
                    "sqrt(eps) * scale = %.3g, after: ",
                    compliance, residual, tolerance);
      return accept(residual, tolerance);
    }
  }
  // A genuine but tiny pivot on a near-dependent column (two corners of one
  // foot edge lying almost along a cone direction: 5e-9 against a zero
  // tolerance of 4e-10) grows ‖B⁻¹‖∞ to 10⁹, and with it the window of ratios
  // counted as tied, until z₀ leaves from a ratio several times the minimum
  // and the basis is infeasible, although the problem has solutions. The
  // same problem with a tie window that does not grow
  // (LemkeOptions::growth_scaled_ties).
  LemkeOptions narrow_ties = defaults;
  narrow_ties.growth_scaled_ties = false;
  if (narrow_tie_retry_ && solve_with(narrow_ties)) {
    std::snprintf(head, sizeof head,
                  "solved with a tie window that does not grow with |B^-1| (a near-dependent pivot), residual "
                  "%.3g <= sqrt(eps) * scale = %.3g, after: ",
                  residual, tolerance);
    return accept(residual, tolerance);
  }
  if (enumeration_message.empty()) return r;
  regularised_ = r;
  regularised_.message += "; " + enumeration_message;
  return regularised_;
}

void ContactSolver::solve_frictionless(const Model& model, Data& data, const ContactSolveOptions&) {
  ContactSolution& s = solution_;
  const auto M = M_.topLeftCorner(nc_, nc_);
  const auto d = d_.head(nc_);
  const LcpResult* r = &pivoting_.solve(M, d);
  if (r->status == LcpStatus::Failed || r->status == LcpStatus::IterationLimit) r = &lemke(M, d, nc_);
  s.status = status_of(*r, false);
  s.message = r->message;
  s.pivots = r->pivots;
  s.lambda = r->lambda;
  s.active.clear();
  for (int i : r->basic) s.active.push_back(i);
  // q̈ = a0 + H⁻¹ T λ
  apply_Hinv(model, data, Y_.leftCols(nc_), s.lambda, x_);
  s.ddq = a0_ + x_;
  s.zeta_dot = M * s.lambda + d;
}

// Sliding contacts: Coulomb force opposite the sliding velocity. Sticking
// candidates: the polyhedral-cone acceleration LCP in (λ, β, γ), by Lemke.
void ContactSolver::solve_cone(const Model& model, Data& data, const std::vector<Contact>& contacts,
                               const Eigen::Ref<const VectorX>& mu, const ContactSolveOptions& options) {
  ContactSolution& s = solution_;
  const int k = options.cone_directions;
  const auto D2 = D_.leftCols(2 * nc_);
  const auto D2dv = Ddv_.head(2 * nc_);
  stick_.clear();
  slide_.clear();
  // G columns: normals (sliding ones modified), then the sticking contacts' cone directions.
  auto T = T_.leftCols(nc_);
  for (int i = 0; i < nc_; ++i) {
    // Sliding velocity in the (t1, t2) basis.
    const double ut1 = D2.col(2 * i).dot(v_);
    const double ut2 = D2.col(2 * i + 1).dot(v_);
    const double speed = std::hypot(ut1, ut2);
    G_.col(i) = T.col(i);
    const double slip = options.slip_velocities.size() == nc_ ? options.slip_velocities(i) : options.slip_velocity;
    if (contacts[i].kind == ContactKind::Shapes && mu(i) > 0.0 && speed > slip) {
      slide_.push_back(i);
      s.mode[i] = ContactMode::Sliding;
      const double c1 = ut1 / speed, c2 = ut2 / speed;
      G_.col(i) -= mu(i) * (c1 * D2.col(2 * i) + c2 * D2.col(2 * i + 1));
      s.friction(0, i) = -mu(i) * c1;  // per unit λ; scaled after the solve
      s.friction(1, i) = -mu(i) * c2;
    } else if (contacts[i].kind == ContactKind::Shapes && mu(i) > 0.0) {
      stick_.push_back(i);
    }
  }
  const int ns = static_cast<int>(stick_.size());
  // Cone directions of the sticking contacts (k per contact), the same cone
  // as contact_tangents(): d_j = c_j t1 + s_j t2 (c_j, s_j = cos, sin θ_j).
  // Every product with them is formed from the two tangents' columns (as
  // impact()): with G's normals (sliding ones modified) and [t1 t2] of the
  // sticking contacts solved, Q = [T t]ᵀ H⁻¹ [G_n t] holds all of A_top.
  cone_cosines(k, dirs_);
  const int m = nc_ + k * ns;     // force variables
  const int n = m + ns;           // plus γ
  const int nt = 2 * ns, nq = nc_ + nt;
  auto tangents = G_.middleCols(nc_, nt);
  for (int a = 0; a < ns; ++a) {
    tangents.col(2 * a) = D2.col(2 * stick_[a]);
    tangents.col(2 * a + 1) = D2.col(2 * stick_[a] + 1);
  }
  auto YG = YG_.leftCols(nq);  // L⁻ᵀ [G_n t]
  YG = G_.leftCols(nq);
  ltdl_solve_Lt(model, data, YG);
  auto DYG = G_.leftCols(nq);
  DYG.noalias() = data.LD.diagonal().cwiseInverse().asDiagonal() * YG;
  auto Q = Areg_.topLeftCorner(nq, nq);
  Q.topRows(nc_).noalias() = Y_.leftCols(nc_).transpose() * DYG;
  Q.bottomRows(nt).noalias() = YG.rightCols(nt).transpose() * DYG;
  auto A = A_.topLeftCorner(n, n);
  A.setZero();
  A.topLeftCorner(nc_, nc_) = Q.topLeftCorner(nc_, nc_);
  for (int a = 0; a < ns; ++a) {
    const int ra = nc_ + k * a, ta = nc_ + 2 * a;
    for (int j = 0; j < k; ++j) {
      const double cj = dirs_(0, j), sj = dirs_(1, j);
      for (int i = 0; i < nc_; ++i) {
        A(i, ra + j) = cj * Q(i, ta) + sj * Q(i, ta + 1);
        A(ra + j, i) = cj * Q(ta, i) + sj * Q(ta + 1, i);
      }
    }
    for (int bb = 0; bb < ns; ++bb) {
      const int rb = nc_ + k * bb, tb = nc_ + 2 * bb;
      const double q11 = Q(ta, tb), q12 = Q(ta, tb + 1), q21 = Q(ta + 1, tb), q22 = Q(ta + 1, tb + 1);
      for (int l = 0; l < k; ++l) {
        const double cl = dirs_(0, l), sl = dirs_(1, l);
        const double u1 = cl * q11 + sl * q12, u2 = cl * q21 + sl * q22;
        for (int j = 0; j < k; ++j) A(ra + j, rb + l) = dirs_(0, j) * u1 + dirs_(1, j) * u2;
      }
    }
  }
  auto b = b_.head(n);
  b.head(nc_) = d_.head(nc_);
  // Dk rows: Dkᵀ a0 + Ḋkᵀ q̇, from the tangents' t ᵀa0 + ṫᵀq̇.
  for (int a = 0; a < ns; ++a) {
    const int i = stick_[a];
    const double r1 = D2.col(2 * i).dot(a0_) + D2dv(2 * i), r2 = D2.col(2 * i + 1).dot(a0_) + D2dv(2 * i + 1);
    for (int j = 0; j < k; ++j) b(nc_ + a * k + j) = dirs_(0, j) * r1 + dirs_(1, j) * r2;
  }
  b.tail(ns).setZero();
  for (int a = 0; a < ns; ++a) {
    const int i = stick_[a];
    for (int j = 0; j < k; ++j) A(nc_ + a * k + j, m + a) = 1.0;  // E γ
    A(m + a, i) = mu(i);                                         // μ λ
    for (int j = 0; j < k; ++j) A(m + a, nc_ + a * k + j) = -1.0;  // −Eᵀ β
  }
  const LcpResult* kept = options.reuse_basis ? last_basis(force_basis_, A, b, contacts, 0.0) : nullptr;
  const LcpResult& r = kept ? *kept : lemke(A, b, m);
  if (options.reuse_basis) keep_basis(force_basis_, r, contacts, 0.0);
  s.status = status_of(r, !slide_.empty() || ns > 0);
  if (r.status == LcpStatus::Solved) s.status = ContactStatus::Solved;
  s.message = r.message;
  if (s.status == ContactStatus::Inconsistent) {
    s.message = "no consistent frictional contact forces (Painlevé-type configuration): " + r.message;
  } else if (s.status == ContactStatus::Failed) {
    s.message = "frictional contact forces not found (none proved impossible either): " + r.message;
  }
  s.pivots = r.pivots;
  s.lambda = r.lambda.head(nc_);
  s.active.clear();
  for (int i : r.basic) {
    if (i < nc_) s.active.push_back(i);
  }
  for (int i : slide_) s.friction.col(i) *= s.lambda(i);
  // q̈ − a0 = H⁻¹ (G_n λ + Σ_a t1 Σ_j c_j f_aj + t2 Σ_j s_j f_aj) = L⁻¹ D⁻¹ YG (λ, Σ c f, Σ s f)
  auto coef = z_.head(nq);
  coef.head(nc_) = r.lambda.head(nc_);
  for (int a = 0; a < ns; ++a) {
    const int i = stick_[a];
    const Eigen::Vector2d f = cone_resultant(r.lambda, nc_ + a * k, k, dirs_);
    coef.segment<2>(nc_ + 2 * a) = f;
    s.friction.col(i) = f;
    if (r.lambda(m + a) > options.current_tolerance) s.mode[i] = ContactMode::Slipping;
  }
  apply_Hinv(model, data, YG, coef, x_);
  s.ddq = a0_ + x_;
  s.zeta_dot = T.transpose() * s.ddq + Tdv_.head(nc_);
}

// Box friction: unknowns (λ, f1, f2) per contact with |f_j| ≤ μ λ, by PGS.
void ContactSolver::solve_box(const Model& model, Data& data, const Eigen::Ref<const VectorX>& mu,
                              const ContactSolveOptions& options) {
  ContactSolution& s = solution_;
  const int n = 3 * nc_;
  auto K = G_.leftCols(n);
  auto Kdv = b_.head(n);
  for (int i = 0; i < nc_; ++i) {
    K.col(3 * i) = T_.col(i);
    K.col(3 * i + 1) = D_.col(2 * i);
    K.col(3 * i + 2) = D_.col(2 * i + 1);
    Kdv(3 * i) = Tdv_(i);
    Kdv(3 * i + 1) = Ddv_(2 * i);
    Kdv(3 * i + 2) = Ddv_(2 * i + 1);
  }
  auto YK = YG_.leftCols(n);
  YK = K;
  ltdl_solve_Lt(model, data, YK);
  auto A = A_.topLeftCorner(n, n);
  form_product(data, YK, YK, A);
  auto b = b_.head(n);
  b += K.transpose() * a0_;
  PgsOptions& po = pgs_.options();
  const PgsOptions keep_mu = options.pgs;
  po.max_iterations = keep_mu.max_iterations;
  po.relaxation = keep_mu.relaxation;
  po.tolerance = keep_mu.tolerance;
  po.normal_index.assign(n, -1);
  po.mu.setZero(n);
  auto lo = lo_.head(n);
  auto hi = hi_.head(n);
  for (int i = 0; i < nc_; ++i) {
    lo(3 * i) = 0.0;
    hi(3 * i) = std::numeric_limits<double>::infinity();
    for (int j = 1; j <= 2; ++j) {
      po.normal_index[3 * i + j] = 3 * i;
      po.mu(3 * i + j) = mu(i);
      lo(3 * i + j) = 0.0;
      hi(3 * i + j) = 0.0;
    }
  }
  const LcpResult& r = pgs_.solve(A, b, lo, hi);
  pgs_accuracy_ = r.tolerance;
  s.status = status_of(r, false);
  s.message = r.message;
  s.pivots = r.pivots;
  s.lambda.resize(nc_);
  for (int i = 0; i < nc_; ++i) {
    s.lambda(i) = r.lambda(3 * i);
    s.friction(0, i) = r.lambda(3 * i + 1);
    s.friction(1, i) = r.lambda(3 * i + 2);
    if (mu(i) > 0.0 && std::hypot(s.friction(0, i), s.friction(1, i)) >= mu(i) * s.lambda(i) * (1.0 - 1e-9) &&
        s.lambda(i) > 0.0) {
      s.mode[i] = ContactMode::Slipping;
    }
  }
  s.active.clear();
  for (int i = 0; i < nc_; ++i) {
    if (s.lambda(i) > 0.0) s.active.push_back(i);
  }
  apply_Hinv(model, data, YK, r.lambda.head(n), x_);
  s.ddq = a0_ + x_;
  s.zeta_dot = T_.leftCols(nc_).transpose() * s.ddq + Tdv_.head(nc_);
}

void ContactSolver::finish_solution(const Model&, Data&, const ContactSolveOptions& options) {
  ContactSolution& s = solution_;
  s.current.clear();
  // The iterative Box model knows ζ̇ only to its residual tolerance.
  double tol = options.current_tolerance * std::max(1.0, s.zeta_dot.cwiseAbs().maxCoeff());
  if (options.friction == FrictionModel::Box) tol = std::max(tol, 10.0 * pgs_accuracy_);
  for (int i = 0; i < nc_; ++i) {
    if (std::abs(s.zeta_dot(i)) <= tol) {
      s.current.push_back(i);
    } else if (s.lambda(i) <= 0.0 && s.mode[i] != ContactMode::Sliding) {
      s.mode[i] = ContactMode::Separating;
    }
  }
}

const LcpResult* ContactSolver::last_basis(const KeptBasis& kept, const Eigen::Ref<const MatrixX>& A,
                                           const Eigen::Ref<const VectorX>& b, const std::vector<Contact>& contacts,
                                           double compliance) {
  const Eigen::Index n = A.rows();
  if (kept.n != n || kept.compliance != compliance || kept.ids.size() != contacts.size()) return nullptr;
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    if (kept.ids[i] != contacts[i].id) return nullptr;
  }
  // (b ≥ 0: λ = 0, which Lemke settles without pivoting)
  if (kept.basic.empty() || !(b.minCoeff() < 0.0)) return nullptr;
  // Lemke's own last step on the kept basis (detail::BasisPolish, as
  // LemkeSolver's): the equilibrated principal subsystem solved in
  // preallocated storage, accepted only within Lemke's residual tolerance
  // and amplification bound. Where it misses, the solution of the next step
  // mostly differs by a contact or a cone direction joining or leaving (a
  // humanoid lying on 19 contacts, LCP 190: 1 to 3 of about 60 basic
  // variables, where Lemke from scratch takes 55 to 95 pivots): block
  // principal pivoting — the basic variables that came out negative leave,
  // the non-basic ones whose w is negative enter — for up to kFlips rounds,
  // each accepted only by the same test. Otherwise nullptr: Lemke decides.
  constexpr int kFlips = 8;
  basis_equilibration_.reserve(static_cast<int>(n));
  basis_equilibration_.compute(A, b);
  basis_polish_.reserve(static_cast<int>(n));
  basis_zero_.setZero(n);
  LcpResult& r = basis_result_;
  const LemkeOptions& lo = lemke_.options();
  const double max_amp = lo.max_amplification.value_or(lcp_max_amplification());
  basis_J_ = kept.basic;
  basis_lambda_.resize(n);
  basis_w_.resize(n);
  if (basis_polish_.finish(A, b, basis_equilibration_, basis_zero_, basis_J_, lo.residual_tolerance, max_amp, r)) {
    r.status = LcpStatus::Solved;
    r.pivots = 0;
    r.basic = basis_J_;
    r.message = "the last basis solves it";
    return &r;
  }
  // (violations beyond rounding, on the equilibrated scale: λ̂ = λ/D, ŵ = D w)
  const Eigen::Ref<const VectorX> De = basis_equilibration_.diagonal();
  const double tol = 100.0 * static_cast<double>(n) * std::numeric_limits<double>::epsilon() *
                     (De.cwiseProduct(b)).cwiseAbs().maxCoeff();
  bool settled = false;
  for (int round = 0; round < kFlips && !settled; ++round) {
    if (!basis_polish_.basis_solution(A, b, basis_equilibration_, basis_J_, basis_lambda_)) return nullptr;
    basis_w_.noalias() = A * basis_lambda_;
    basis_w_ += b;
    // The first rounds flip every violation at once; later ones only the
    // worst (block flips can cycle among dependent contacts).
    const bool block = round < 2;
    int worst = -1;
    double worst_violation = tol;
    for (const int i : basis_J_) {
      basis_w_(i) = 0.0;  // (basic: w_i = 0 up to rounding)
      const double v = -basis_lambda_(i) / De(i);
      if (v > worst_violation) {
        worst_violation = v;
        worst = i;
      }
    }
    for (Eigen::Index j = 0; j < n; ++j) {
      const double v = -basis_w_(j) * De(j);
      if (v > worst_violation) {
        worst_violation = v;
        worst = static_cast<int>(j);
      }
    }
    const bool flipped = worst >= 0;
    if (flipped) {
      std::size_t kept_count = 0;
      for (std::size_t c = 0; c < basis_J_.size(); ++c) {
        const int i = basis_J_[c];
        const bool leaves = block ? basis_lambda_(i) / De(i) < -tol : i == worst;
        if (!leaves) basis_J_[kept_count++] = i;
      }
      const bool worst_left = kept_count < basis_J_.size() && !block;
      basis_J_.resize(kept_count);
      for (Eigen::Index j = 0; j < n; ++j) {
        const bool enters = block ? basis_w_(j) * De(j) < -tol : (j == worst && !worst_left);
        if (enters) basis_J_.push_back(static_cast<int>(j));  // (basic rows have w = 0 here)
      }
    }
    settled = !flipped;  // complementary and feasible to rounding: finish() judges it
    std::sort(basis_J_.begin(), basis_J_.end());
  }
  if (!settled ||
      !basis_polish_.finish(A, b, basis_equilibration_, basis_zero_, basis_J_, lo.residual_tolerance, max_amp, r)) {
    return nullptr;
  }
  r.status = LcpStatus::Solved;
  r.pivots = 0;
  r.basic = basis_J_;
  r.message = "the last basis solves it";
  return &r;
}

void ContactSolver::keep_basis(KeptBasis& kept, const LcpResult& r, const std::vector<Contact>& contacts,
                               double compliance) {
  if (r.status != LcpStatus::Solved) {
    kept.n = -1;
    return;
  }
  kept.n = r.lambda.size();
  kept.compliance = compliance;
  if (&r.basic != &kept.basic) kept.basic = r.basic;
  kept.ids.resize(contacts.size());
  for (std::size_t i = 0; i < contacts.size(); ++i) kept.ids[i] = contacts[i].id;
}

const ImpactSolution& ContactSolver::impact(const Model& model, Data& data, const Eigen::Ref<const VectorX>& q,
                                            const Eigen::Ref<const VectorX>& v_minus,
                                            const std::vector<Contact>& contacts,
                                            const Eigen::Ref<const VectorX>& restitution,
                                            const Eigen::Ref<const VectorX>& mu, const ImpactOptions& options) {
  check_inputs(model, data, q, v_minus, contacts.size(), mu);
  check_vector(restitution, static_cast<Eigen::Index>(contacts.size()), "restitution");
  for (Eigen::Index i = 0; i < restitution.size(); ++i) {
    if (restitution(i) < 0.0 || restitution(i) > 1.0) {
      throw ArgumentError("restitution[" + std::to_string(i) + "] must be within [0, 1]");
    }
  }
  if (options.friction == FrictionModel::Box) throw ArgumentError("impacts support FrictionModel::None or PolyhedralCone");
  const bool stepping = options.time_step > 0.0;
  if (!(options.time_step >= 0.0) || !std::isfinite(options.time_step)) {
    throw ArgumentError("ImpactOptions::time_step must be finite and >= 0");
  }
  if (stepping) check_vector(options.gaps, static_cast<Eigen::Index>(contacts.size()), "gaps");
  if (!(options.compliance >= 0.0) || !std::isfinite(options.compliance)) {
    throw ArgumentError("ImpactOptions::compliance must be finite and >= 0");
  }
  assemble(model, data, q, v_minus, contacts);
  ImpactSolution& s = impact_;
  s.message.clear();
  s.restitution_reduced = false;
  s.pivots = 0;
  auto T = T_.leftCols(nc_);
  s.zeta_minus = T.transpose() * v_minus;
  s.kinetic_before = 0.5 * v_minus.dot(data.H * v_minus);
  s.friction_impulse.leftCols(nc_).setZero();
  if (nc_ == 0) {
    s.status = ContactStatus::Solved;
    s.impulse.resize(0);
    s.zeta_plus.resize(0);
    s.v_plus = v_minus;
    s.kinetic_after = s.kinetic_before;
    return s;
  }
  const bool frictional = options.friction == FrictionModel::PolyhedralCone && mu.maxCoeff() > 0.0;
  const int k = options.cone_directions;
  if (frictional && k < 4) throw ArgumentError("cone_directions must be at least 4");

  // Friction by the k cone directions d_j = c_j t1 + s_j t2 (c_j, s_j =
  // cos, sin 2πj/k): every product with them is formed from the two
  // tangents' columns — a third of the Jacobian columns and a ninth of the
  // Delassus products at k = 8. Columns of the LCP: the nc normals, k per
  // frictional contact (stick_), one slack per frictional contact.
  int nf = 0, m = nc_, n = nc_;
  if (frictional) {
    grow_directions(k);
    tangent_jacobian(model, data, contacts, 2, D_.leftCols(2 * nc_), Ddv_.head(2 * nc_));
    stick_.clear();
    for (int i = 0; i < nc_; ++i) {
      // (joint limits and μ = 0 pairs would add zero columns: ties that only hurt Lemke)
      if (contacts[i].kind == ContactKind::Shapes && mu(i) > 0.0) stick_.push_back(i);
    }
    nf = static_cast<int>(stick_.size());
    m = nc_ + k * nf;
    n = m + nf;
    const int nt = 2 * nf;
    cone_cosines(k, dirs_);
    auto Yt = YG_.leftCols(nt);  // L⁻ᵀ [t1 t2] of the frictional contacts
    auto tv = z_.head(nt);       // their tangential velocities tᵀv⁻
    for (int a = 0; a < nf; ++a) {
      Yt.col(2 * a) = D_.col(2 * stick_[a]);
      Yt.col(2 * a + 1) = D_.col(2 * stick_[a] + 1);
      tv(2 * a) = Yt.col(2 * a).dot(v_minus);
      tv(2 * a + 1) = Yt.col(2 * a + 1).dot(v_minus);
    }
    ltdl_solve_Lt(model, data, Yt);
    auto DYt = G_.leftCols(nt);
    DYt.noalias() = data.LD.diagonal().cwiseInverse().asDiagonal() * Yt;
    auto C = Areg_.topLeftCorner(nc_, nt);  // Tᵀ H⁻¹ [t1 t2]
    C.noalias() = Y_.leftCols(nc_).transpose() * DYt;
    auto B = Areg_.block(nc_, 0, nt, nt);  // [t1 t2]ᵀ H⁻¹ [t1 t2]
    B.triangularView<Eigen::Lower>() = Yt.transpose() * DYt;
    B.triangularView<Eigen::StrictlyUpper>() = B.transpose();
    auto A = A_.topLeftCorner(n, n);
    A.setZero();
    A.topLeftCorner(nc_, nc_) = M_.topLeftCorner(nc_, nc_);
    for (int a = 0; a < nf; ++a) {
      const int ra = nc_ + k * a;
      for (int j = 0; j < k; ++j) {
        const double cj = dirs_(0, j), sj = dirs_(1, j);
        for (int i = 0; i < nc_; ++i) A(ra + j, i) = A(i, ra + j) = cj * C(i, 2 * a) + sj * C(i, 2 * a + 1);
      }
      for (int bb = 0; bb <= a; ++bb) {
        const int rb = nc_ + k * bb;
        const double b11 = B(2 * a, 2 * bb), b12 = B(2 * a, 2 * bb + 1);
        const double b21 = B(2 * a + 1, 2 * bb), b22 = B(2 * a + 1, 2 * bb + 1);
        for (int l = 0; l < k; ++l) {
          const double cl = dirs_(0, l), sl = dirs_(1, l);
          const double u1 = cl * b11 + sl * b12, u2 = cl * b21 + sl * b22;
          for (int j = 0; j < k; ++j) A(ra + j, rb + l) = A(rb + l, ra + j) = dirs_(0, j) * u1 + dirs_(1, j) * u2;
        }
      }
      for (int j = 0; j < k; ++j) A(ra + j, m + a) = 1.0;
      A(m + a, stick_[a]) = mu(stick_[a]);
      for (int j = 0; j < k; ++j) A(m + a, ra + j) = -1.0;
    }
    for (int i = 0; i < m; ++i) A(i, i) += options.compliance * std::max(A(i, i), 0.0);
  }

  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool plastic = attempt == 1;
    // Newton's law on approaching contacts: ζ⁺ ≥ −e ζ⁻; separating ones: ζ⁺ ≥ 0.
    auto dn = d_.head(nc_);
    for (int i = 0; i < nc_; ++i) {
      const double zm = s.zeta_minus(i);
      const double e = (plastic || zm >= 0.0) ? 0.0 : restitution(i);
      dn(i) = (1.0 + e) * zm;
      if (stepping) dn(i) += std::max(options.gaps(i), 0.0) / options.time_step;
    }
    const LcpResult* r = nullptr;
    if (!frictional) {
      auto Mi = A_.topLeftCorner(nc_, nc_);
      Mi = M_.topLeftCorner(nc_, nc_);
      for (int i = 0; i < nc_; ++i) Mi(i, i) += options.compliance * std::max(Mi(i, i), 0.0);
      r = &pivoting_.solve(Mi, dn);
      if (r->status == LcpStatus::Failed || r->status == LcpStatus::IterationLimit) r = &lemke(Mi, dn, nc_);
      apply_Hinv(model, data, Y_.leftCols(nc_), r->lambda.head(nc_), x_);
    } else {
      auto A = A_.topLeftCorner(n, n);
      auto b = b_.head(n);
      b.head(nc_) = dn;
      const auto tv = z_.head(2 * nf);
      for (int a = 0; a < nf; ++a) {
        for (int j = 0; j < k; ++j) b(nc_ + k * a + j) = dirs_(0, j) * tv(2 * a) + dirs_(1, j) * tv(2 * a + 1);
      }
      b.tail(nf).setZero();
      r = options.reuse_basis ? last_basis(impact_basis_, A, b, contacts, options.compliance) : nullptr;
      if (!r) r = &lemke(A, b, m);
      if (options.reuse_basis) keep_basis(impact_basis_, *r, contacts, options.compliance);
      // v⁺ − v⁻ = H⁻¹ (T λ + Σ_a t1 Σ_j c_j f_aj + t2 Σ_j s_j f_aj) = L⁻¹ D⁻¹ (L⁻ᵀ[T t1 t2]) (λ, Σ c f, Σ s f)
      x_.noalias() = Y_.leftCols(nc_) * r->lambda.head(nc_);
      for (int a = 0; a < nf; ++a) {
        const Eigen::Vector2d f = cone_resultant(r->lambda, nc_ + k * a, k, dirs_);
        x_ += f(0) * YG_.col(2 * a) + f(1) * YG_.col(2 * a + 1);
        s.friction_impulse.col(stick_[a]) = f;
      }
      x_.array() /= data.LD.diagonal().array();
      ltdl_solve_L(model, data, x_);
    }
    s.status = status_of(*r, false);
    s.message = r->message;
    s.pivots += r->pivots;
    s.impulse = r->lambda.head(nc_);
    s.v_plus = v_minus + x_;
    s.zeta_plus = T.transpose() * s.v_plus;
    s.kinetic_after = 0.5 * s.v_plus.dot(data.H * s.v_plus);
    const double gain = s.kinetic_after - s.kinetic_before;
    if (s.status != ContactStatus::Solved || gain <= 1e-12 * std::max(1.0, s.kinetic_before) || plastic) break;
    s.restitution_reduced = true;  // Newton's law with friction would add energy: make it plastic
  }
  if (s.status != ContactStatus::Solved) s.message += " (contacts " + contact_list(contacts) + ")";
  return s;
}

}  // namespace plume
