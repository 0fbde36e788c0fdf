// Compliant contact (Featherstone §11.8, 11.73–11.79): the force law, the
// tangential state's derivative, the per-contact state and forward dynamics
// with the contact forces. See compliant.hpp for the model and its rules.
#include "plume/dynamics/compliant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "plume/algorithms/aba.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "plume/error.hpp"

namespace plume {

const char* to_string(CompliantPhase phase) {
  switch (phase) {
    case CompliantPhase::Touching: return "touching";
    case CompliantPhase::Relaxing: return "relaxing";
  }
  return "unknown";
}

const char* to_string(CompliantMode mode) {
  switch (mode) {
    case CompliantMode::Separated: return "separated";
    case CompliantMode::Sticking: return "sticking";
    case CompliantMode::Slipping: return "slipping";
  }
  return "unknown";
}

double CompliantContactRecord::surface(const CompliantParameters& p, double t) const {
  if (p.damping <= 0.0 || z0 == 0.0) return 0.0;  // D = 0: the unloaded patch rests at once
  const double elapsed = std::max(0.0, t - t0);
  return z0 * std::exp(-p.stiffness * elapsed / p.damping);
}

// ---- the force law at one contact ---------------------------------------------

CompliantNormalLaw compliant_normal_law(const CompliantParameters& p, const CompliantContactRecord& record,
                                        double gap, double gap_rate, double t) {
  CompliantNormalLaw law;
  const double push = -p.stiffness * gap - p.damping * gap_rate;  // −Kφ − Dφ̇ with z = φ (11.74)
  bool on_patch = false;
  if (record.phase == CompliantPhase::Touching) {
    on_patch = gap <= 0.0;  // z ≤ 0 always, so a point above 0 has left the patch
    law.surface = gap;
    law.witness = push;
  } else {
    const double z = record.surface(p, t);
    on_patch = gap <= z;
    law.surface = z;
    law.witness = gap - z;
  }
  if (on_patch && push > 0.0) {
    law.touching = true;
    law.force = push;
    law.d_gap = -p.stiffness;
    law.d_gap_rate = -p.damping;
    law.surface = gap;
  }
  return law;
}

CompliantTangentialLaw compliant_tangential_law(const CompliantParameters& p, double normal_force,
                                                const Eigen::Vector2d& x, const Eigen::Vector2d& u) {
  using Mat2 = Eigen::Matrix2d;
  CompliantTangentialLaw law;
  const double Kt = p.tangential_stiffness, Dt = p.tangential_damping;
  const Eigen::Vector2d stick = -Kt * x - Dt * u;  // f_stick (11.78)
  const double stick_norm = stick.norm();
  if (!(normal_force > 0.0)) {
    // Separated: no friction, the patch relaxes (11.77 with f_t = 0).
    law.mode = CompliantMode::Separated;
    law.witness = -stick_norm;
    if (Dt > 0.0) {
      law.rate = -(Kt / Dt) * x;
      law.rate_d_x = -(Kt / Dt) * Mat2::Identity();
    }
    return law;
  }
  const double limit = p.mu * normal_force;  // μ f_n, +∞ for μ = ∞
  law.witness = limit - stick_norm;
  if (stick_norm <= limit) {
    // Sticking: f_t = f_stick, and 11.77 gives ẋ = u.
    law.mode = CompliantMode::Sticking;
    law.force = stick;
    law.force_d_x = -Kt * Mat2::Identity();
    law.force_d_u = -Dt * Mat2::Identity();
    law.rate = u;
    law.rate_d_u = Mat2::Identity();
    return law;
  }
  // Slipping: f_t on the cone along f_stick (11.79); |f_stick| > μ f_n ≥ 0.
  law.mode = CompliantMode::Slipping;
  const Eigen::Vector2d dir = stick / stick_norm;
  law.force = limit * dir;
  law.force_d_normal = p.mu * dir;
  if (Dt > 0.0) {
    const Mat2 P = Mat2::Identity() - dir * dir.transpose();
    const double r = limit / stick_norm;
    law.force_d_x = -Kt * r * P;
    law.force_d_u = -Dt * r * P;
    law.rate = -(Kt * x + law.force) / Dt;  // 11.77
    law.rate_d_x = -(Kt / Dt) * (Mat2::Identity() - r * P);
    law.rate_d_u = r * P;
    law.rate_d_normal = -(p.mu / Dt) * dir;
    return law;
  }
  // D_t = 0: f_stick = −K_t x, so dir = −x̂; the limit D_t → 0 of 11.77 lets
  // the spring turn with the sliding but not stretch beyond the cone.
  const double xn = x.norm();
  const Eigen::Vector2d xh = x / xn;
  const Mat2 Px = Mat2::Identity() - xh * xh.transpose();
  law.force_d_x = -(limit / xn) * Px;
  const double outward = xh.dot(u);
  if (outward > 0.0) {
    law.rate = u - outward * xh;
    law.rate_d_u = Px;
    law.rate_d_x = -(outward * Mat2::Identity() + xh * u.transpose()) * Px / xn;
  } else {
    law.rate = u;
    law.rate_d_u = Mat2::Identity();
  }
  return law;
}

namespace {

// ---- checks ----------------------------------------------------------------------

void check_parameters(const std::vector<CompliantParameters>& params, std::size_t nc) {
  if (params.size() != nc) {
    throw ArgumentError("params has " + std::to_string(params.size()) + " entries, expected one per contact (" +
                        std::to_string(nc) + ")");
  }
  for (std::size_t i = 0; i < nc; ++i) {
    const CompliantParameters& p = params[i];
    const auto bad = [&](const char* what) {
      throw ArgumentError("params[" + std::to_string(i) + "]." + what + " must be finite and ≥ 0");
    };
    if (!(p.stiffness >= 0.0 && std::isfinite(p.stiffness))) bad("stiffness");
    if (!(p.damping >= 0.0 && std::isfinite(p.damping))) bad("damping");
    if (!(p.tangential_stiffness >= 0.0 && std::isfinite(p.tangential_stiffness))) bad("tangential_stiffness");
    if (!(p.tangential_damping >= 0.0 && std::isfinite(p.tangential_damping))) bad("tangential_damping");
    if (!(p.mu >= 0.0)) throw ArgumentError("params[" + std::to_string(i) + "].mu must be ≥ 0 (+∞ allowed)");
  }
}

void check_records(const std::vector<CompliantContactRecord>& records, const std::vector<Contact>& contacts) {
  if (records.size() != contacts.size()) {
    throw ArgumentError("compliant state holds " + std::to_string(records.size()) + " contacts, the list has " +
                        std::to_string(contacts.size()) + ": call CompliantContactState::synchronize()");
  }
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    if (records[i].id != contacts[i].id) {
      throw ArgumentError("contacts[" + std::to_string(i) + "] (id " + std::to_string(contacts[i].id) +
                          ") does not match the compliant state's record (id " + std::to_string(records[i].id) +
                          "): call CompliantContactState::synchronize()");
    }
  }
}

void check_inputs(const Model& model, const Data& data, const VecRef& q, const std::vector<Contact>& contacts,
                  const std::vector<CompliantParameters>& params, const std::vector<CompliantContactRecord>& records,
                  const VecRef& x) {
  check_data(model, data);
  check_vector(q, model.nq(), "q");
  check_parameters(params, contacts.size());
  check_records(records, contacts);
  check_vector(x, 2 * static_cast<Eigen::Index>(contacts.size()), "x");
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const Contact& c = contacts[i];
    if (c.kind == ContactKind::JointLimit &&
        (c.body_b <= 0 || c.body_b >= model.nbodies() || model.joint(c.body_b).v_index != c.dof)) {
      throw ArgumentError("contacts[" + std::to_string(i) + "] is a joint limit of dof " + std::to_string(c.dof) +
                          " that model '" + model.name() + "' does not have");
    }
  }
}

// ---- one contact at a trial state --------------------------------------------------

// The minimal rotation taking unit a to unit b, applied to v (Rodrigues with
// k = a × b, c = a·b: R = I + [k]× + [k]×²/(1 + c)).
Vec3 rotate_between(const Vec3& a, const Vec3& b, const Vec3& v) {
  const Vec3 k = a.cross(b);
  const double c = a.dot(b);
  return v + k.cross(v) + k.cross(k.cross(v)) / (1.0 + c);
}

// Q: coordinates in tangent_basis(n_ref) → coordinates in (t1, t2) of n,
// carrying vectors along the minimal rotation n_ref → n. A normal that has
// turned over (n·n_ref ≈ −1) has no such rotation: the displacement is lost.
Eigen::Matrix2d basis_change(const Vec3& n_ref, const Vec3& n, const Vec3& t1, const Vec3& t2) {
  Eigen::Matrix2d Q = Eigen::Matrix2d::Zero();
  if (n_ref.dot(n) <= -1.0 + 1e-9) return Q;
  Vec3 r1, r2;
  tangent_basis(n_ref, r1, r2);
  const Vec3 s1 = rotate_between(n_ref, n, r1), s2 = rotate_between(n_ref, n, r2);
  Q << t1.dot(s1), t1.dot(s2), t2.dot(s1), t2.dot(s2);
  return Q;
}

double joint_limit_gap(const Model& model, const VecRef& q, const Contact& c) {
  const int qi = model.joint(c.body_b).q_index;
  return c.normal.x() > 0.0 ? q[qi] - model.lower_position_limit()[qi] : model.upper_position_limit()[qi] - q[qi];
}

struct Evaluation {
  ContactKinematics k;
  Vec3 t1 = Vec3::Zero(), t2 = Vec3::Zero();
  Eigen::Matrix2d Q = Eigen::Matrix2d::Identity();  // reference basis → current basis
  Eigen::Vector2d x = Eigen::Vector2d::Zero();      // x_n = Q x
  Eigen::Vector2d u = Eigen::Vector2d::Zero();      // sliding velocity
  CompliantNormalLaw normal;
  CompliantTangentialLaw tangential;
  Vec3 force = Vec3::Zero();                        // world force on b
};

void evaluate(const Model& model, const Data& data, const VecRef& q, const Contact& c, const CompliantParameters& p,
              const CompliantContactRecord& record, const Eigen::Vector2d& x, double t, Evaluation& e) {
  e.k = contact_kinematics(model, data, c);  // refreshed φ, n, witness points and velocities (11.28)
  if (c.kind == ContactKind::JointLimit) {
    e.k.gap = joint_limit_gap(model, q, c);
    e.normal = compliant_normal_law(p, record, e.k.gap, e.k.gap_rate, t);
    e.tangential = CompliantTangentialLaw{};  // no friction: "sticking" while it pushes
    e.tangential.mode = e.normal.touching ? CompliantMode::Sticking : CompliantMode::Separated;
    e.tangential.witness = e.normal.touching ? std::numeric_limits<double>::infinity() : 0.0;
    e.x.setZero();
    e.u.setZero();
    e.force = e.k.normal * e.normal.force;
    return;
  }
  e.normal = compliant_normal_law(p, record, e.k.gap, e.k.gap_rate, t);
  tangent_basis(e.k.normal, e.t1, e.t2);
  e.Q = basis_change(record.reference_normal, e.k.normal, e.t1, e.t2);
  e.x.noalias() = e.Q * x;
  const Vec3 du = e.k.velocity_b - e.k.velocity_a;
  e.u = Eigen::Vector2d(e.t1.dot(du), e.t2.dot(du));
  e.tangential = compliant_tangential_law(p, e.normal.force, e.x, e.u);
  e.force = e.k.normal * e.normal.force + e.t1 * e.tangential.force.x() + e.t2 * e.tangential.force.y();
}

// tau += sign · J(body, p)ᵀ F: the joint forces of the world force F applied
// at the world point p of `body` (the spatial force [p × F; F] carried to each
// joint of the support chain, Sᵀ X* f).
void add_point_force(const Model& model, const Data& data, int body, const Vec3& p, const Vec3& F, double sign,
                     Eigen::Ref<VectorX>& tau) {
  const Force f_world(p.cross(F), F);
  for (int i = body; i > 0; i = model.parent(i)) {
    const Joint& j = model.joint(i);
    const Vec6 f = data.X0[i].apply(f_world).vector();
    for (int k = 0; k < j.nv; ++k) tau[j.v_index + k] += sign * data.S.col(j.v_index + k).dot(f);
  }
}

// τ_c contribution t_i f_n + D_i f_t of one contact (11.25 with the force of 11.74–11.79).
void add_contact_force(const Model& model, const Data& data, const Contact& c, const Evaluation& e,
                       Eigen::Ref<VectorX>& tau) {
  if (c.kind == ContactKind::JointLimit) {
    tau[c.dof] += c.normal.x() * e.normal.force;  // t_i = ±e_dof
    return;
  }
  if (e.force.isZero(0.0)) return;
  add_point_force(model, data, c.body_b, e.k.point_b, e.force, 1.0, tau);
  add_point_force(model, data, c.body_a, e.k.point_a, e.force, -1.0, tau);
}

void fill_details(const Evaluation& e, CompliantContactForce& d) {
  d.mode = e.tangential.mode;
  d.touching = e.normal.touching;
  d.gap = e.k.gap;
  d.gap_rate = e.k.gap_rate;
  d.surface = e.normal.surface;
  d.normal_force = e.normal.force;
  d.friction = e.tangential.force;
  d.sliding_velocity = e.u;
  d.displacement = e.x;
  d.normal = e.k.normal;
  d.force = e.force;
  d.point_a = e.k.point_a;
  d.point_b = e.k.point_b;
  d.normal_witness = e.normal.witness;
  d.friction_witness = e.tangential.witness;
}

Eigen::Vector2d reference_rate(const Evaluation& e) { return e.Q.transpose() * e.tangential.rate; }

}  // namespace

// ---- the state -----------------------------------------------------------------------

void CompliantContactState::reserve(std::size_t contacts) {
  records_.reserve(contacts);
  scratch_.reserve(contacts);
  x_.reserve(2 * contacts);
  x_scratch_.reserve(2 * contacts);
}

void CompliantContactState::clear() {
  records_.clear();
  x_.clear();
}

void CompliantContactState::synchronize(const std::vector<Contact>& contacts) {
  reserve(contacts.size());
  scratch_.clear();
  x_scratch_.clear();
  const std::size_t n_old = records_.size();
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const Contact& c = contacts[i];
    // Contacts keep their order between detections: start looking at i.
    std::size_t found = n_old;
    for (std::size_t k = 0; k < n_old && found == n_old; ++k) {
      const std::size_t j = (i + k) % n_old;
      if (records_[j].id == c.id) found = j;
    }
    if (found < n_old) {
      scratch_.push_back(records_[found]);
      x_scratch_.push_back(x_[2 * found]);
      x_scratch_.push_back(x_[2 * found + 1]);
    } else {
      CompliantContactRecord r;  // rested patch, x = 0
      r.id = c.id;
      r.reference_normal = c.normal;
      scratch_.push_back(r);
      x_scratch_.push_back(0.0);
      x_scratch_.push_back(0.0);
    }
  }
  records_.swap(scratch_);
  x_.swap(x_scratch_);
}

void CompliantContactState::update(const Model& model, const Data& data, const VecRef& q,
                                   const std::vector<Contact>& contacts,
                                   const std::vector<CompliantParameters>& params, const VecRef& x, double t) {
  check_inputs(model, data, q, contacts, params, records_, x);
  Evaluation e;
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const Contact& c = contacts[i];
    const CompliantParameters& p = params[i];
    CompliantContactRecord& r = records_[i];
    const Eigen::Vector2d xi = x.segment<2>(2 * static_cast<Eigen::Index>(i));
    evaluate(model, data, q, c, p, r, xi, t, e);
    // Normal phase (compliant.hpp, "update rule").
    const double phi = e.k.gap;
    const double push = -p.stiffness * phi - p.damping * e.k.gap_rate;
    const double z_lost = p.damping > 0.0 ? std::min(phi, 0.0) : 0.0;
    if (r.phase == CompliantPhase::Touching) {
      if (!(phi <= 0.0 && push > 0.0)) {
        r.phase = CompliantPhase::Relaxing;
        r.z0 = z_lost;
        r.t0 = t;
      }
    } else if (phi <= r.surface(p, t)) {
      if (push > 0.0) {
        r.phase = CompliantPhase::Touching;
      } else {
        r.z0 = z_lost;
        r.t0 = t;
      }
    }
    // Tangential displacement: in the current normal's basis from now on.
    Eigen::Vector2d xn = e.x;
    if (c.kind == ContactKind::JointLimit) {
      xn.setZero();
    } else {
      r.reference_normal = e.k.normal;
      if (p.tangential_damping <= 0.0) {
        const double radius = p.tangential_stiffness > 0.0 ? p.mu * e.normal.force / p.tangential_stiffness : 0.0;
        const double norm = xn.norm();
        if (!(e.normal.force > 0.0)) {
          xn.setZero();
        } else if (norm > radius) {
          xn *= radius / norm;
        }
      }
    }
    r.mode = e.tangential.mode;
    x_[2 * i] = xn.x();
    x_[2 * i + 1] = xn.y();
  }
}

// ---- forces, derivative, forward dynamics ---------------------------------------------

void CompliantContactForces::resize(int nv, std::size_t nc) {
  contacts.resize(nc);
  x_dot_.resize(2 * nc);
  tau.resize(nv);
  tau_total_.resize(nv);
}

void compliant_contact_forces(const Model& model, const Data& data, const VecRef& q,
                              const std::vector<Contact>& contacts, const std::vector<CompliantParameters>& params,
                              const CompliantContactState& state, const VecRef& x, double t,
                              Eigen::Ref<VectorX> tau_contact, CompliantContactForces* details) {
  check_inputs(model, data, q, contacts, params, state.records(), x);
  if (tau_contact.size() != model.nv()) {
    throw ArgumentError("tau_contact has " + std::to_string(tau_contact.size()) + " entries, expected nv = " +
                        std::to_string(model.nv()));
  }
  if (details) details->resize(model.nv(), contacts.size());
  tau_contact.setZero();
  Evaluation e;
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const Eigen::Index ix = 2 * static_cast<Eigen::Index>(i);
    evaluate(model, data, q, contacts[i], params[i], state.record(i), x.segment<2>(ix), t, e);
    add_contact_force(model, data, contacts[i], e, tau_contact);
    if (details) {
      fill_details(e, details->contacts[i]);
      details->x_dot().segment<2>(ix) = reference_rate(e);
    }
  }
}

void compliant_state_derivative(const Model& model, const Data& data, const VecRef& q,
                                const std::vector<Contact>& contacts, const std::vector<CompliantParameters>& params,
                                const CompliantContactState& state, const VecRef& x, double t,
                                Eigen::Ref<VectorX> x_dot) {
  check_inputs(model, data, q, contacts, params, state.records(), x);
  if (x_dot.size() != x.size()) {
    throw ArgumentError("x_dot has " + std::to_string(x_dot.size()) + " entries, expected " +
                        std::to_string(x.size()));
  }
  Evaluation e;
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const Eigen::Index ix = 2 * static_cast<Eigen::Index>(i);
    evaluate(model, data, q, contacts[i], params[i], state.record(i), x.segment<2>(ix), t, e);
    x_dot.segment<2>(ix) = reference_rate(e);
  }
}

const VectorX& forward_dynamics_compliant(const Model& model, Data& data, const VecRef& q, const VecRef& v,
                                          const VecRef& tau, const std::vector<Contact>& contacts,
                                          const std::vector<CompliantParameters>& params,
                                          const CompliantContactState& state, const VecRef& x, double t,
                                          CompliantContactForces& out) {
  check_vector(tau, model.nv(), "tau");
  forward_kinematics(model, data, q, v);  // checks q (unit quaternions) and v
  out.resize(model.nv(), contacts.size());
  compliant_contact_forces(model, data, q, contacts, params, state, x, t, out.tau, &out);
  out.tau_total_.noalias() = tau + out.tau;
  return unchecked::aba(model, data, q, v, out.tau_total_);  // H⁻¹(τ − C + τ_c)
}

}  // namespace plume
