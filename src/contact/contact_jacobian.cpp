// Contact Jacobians T (eq. 11.25) and Ṫᵀq̇ (eq. 11.30), and their friction
// counterparts. See contact_jacobian.hpp for the formulas.
#include "plume/contact/contact_jacobian.hpp"

#include <cmath>
#include <string>

#include "../algorithms/joint_kernels.hpp"
#include "features.hpp"
#include "plume/error.hpp"

namespace plume {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Motion of a body in world coordinates: angular velocity ω, velocity v0 of
// the body point at the world origin, and the spatial acceleration (α, a0)
// with q̈ = 0 (from data.a after forward_kinematics(q, v, 0)).
struct BodyMotion {
  Vec3 w = Vec3::Zero(), v0 = Vec3::Zero(), alpha = Vec3::Zero(), a0 = Vec3::Zero();
  /// u(p): velocity of the body point at p.
  Vec3 velocity(const Vec3& p) const { return v0 + w.cross(p); }
  /// Classical acceleration of the body point at p: a0 + α × p + ω × u(p).
  Vec3 acceleration(const Vec3& p) const { return a0 + alpha.cross(p) + w.cross(velocity(p)); }
};

// `a_base` is the world-frame acceleration data.a carries on top of the
// velocity products: zero after forward_kinematics(q, v, 0), (0, −g) after
// the bias pass of RNEA (which starts from a base accelerating against g).
BodyMotion body_motion(const Data& data, int body, const Vec3& a_base = Vec3::Zero()) {
  BodyMotion m;
  if (body == 0) return m;
  const Transform& X = data.X0[body];
  const Motion V = X.apply_inverse(data.v[body]);
  const Motion A = X.apply_inverse(data.a[body]);
  m.w = V.angular();
  m.v0 = V.linear();
  m.alpha = A.angular();
  m.a0 = A.linear() - a_base;
  return m;
}

// Everything the columns of one shape contact need.
struct ContactState {
  ContactKinematics k;
  BodyMotion ma, mb;
};

void evaluate(const Data& data, const Contact& c, ContactState& s, const Vec3& a_base = Vec3::Zero()) {
  s.ma = body_motion(data, c.body_a, a_base);
  s.mb = body_motion(data, c.body_b, a_base);
  const detail::WorldFeatures f = detail::world_features(data, c);
  const bool flip = c.local.first_on_b;
  const BodyMotion& m1 = flip ? s.mb : s.ma;
  const BodyMotion& m2 = flip ? s.ma : s.mb;
  detail::FeatureRates r;
  r.x1 = m1.velocity(f.x1);
  r.d1 = m1.w.cross(f.d1);
  r.x2 = m2.velocity(f.x2);
  r.d2 = m2.w.cross(f.d2);
  detail::FeatureContact g;
  detail::FeatureContactRates dg;
  detail::evaluate_features(f, r, g, dg);
  ContactKinematics& k = s.k;
  k.gap = g.phi;
  k.normal = flip ? Vec3(-g.n) : g.n;
  k.normal_rate = flip ? Vec3(-dg.n) : dg.n;
  k.point_a = flip ? g.p2 : g.p1;
  k.point_b = flip ? g.p1 : g.p2;
  k.point_a_rate = flip ? dg.p2 : dg.p1;
  k.point_b_rate = flip ? dg.p1 : dg.p2;
  k.velocity_a = s.ma.velocity(k.point_a);
  k.velocity_b = s.mb.velocity(k.point_b);
  k.gap_rate = k.normal.dot(k.velocity_b - k.velocity_a);  // 11.28
}

// d/dt [dᵀ(u_b(p_b) − u_a(p_a))] at q̈ = 0 for a direction d moving at ḋ:
// ḋ·(u_b − u_a) + d·(α_b(p_b) − α_a(p_a)) + d·(ω_b × (ṗ_b − u_b) − ω_a × (ṗ_a − u_a)).
// The last term is the body velocity field seen from witness points that
// slide along the surfaces; with the first it is ṅ_i·(v_b − v_a) of 11.30.
double direction_rate(const ContactState& s, const Vec3& d, const Vec3& d_rate) {
  const ContactKinematics& k = s.k;
  const Vec3 acc = s.mb.acceleration(k.point_b) - s.ma.acceleration(k.point_a);
  const Vec3 slide = s.mb.w.cross(k.point_b_rate - k.velocity_b) - s.ma.w.cross(k.point_a_rate - k.velocity_a);
  return d_rate.dot(k.velocity_b - k.velocity_a) + d.dot(acc + slide);
}

// column += sign · J(body, p)ᵀ d: the joint forces of the unit force d at the
// world point p on `body`, i.e. Sᵀ X* [p × d; d] summed along the support chain.
template <class Column>
void add_point_force(const Model& model, const Data& data, int body, const Vec3& p, const Vec3& d, double sign,
                     Column&& column) {
  const Force f_world(p.cross(d), d);
  for (int i = body; i > 0; i = model.parent(i)) {
    const Joint& j = model.joint(i);
    const Vec6 f = data.X0[i].apply(f_world).vector();  // body-i coordinates
    for (int k = 0; k < j.nv; ++k) column(j.v_index + k) += sign * data.S.col(j.v_index + k).dot(f);
  }
}

// The same for three directions at once (normal and two tangents): per joint
// of the support chain the point and the directions go to body coordinates
// once, and each joint kind applies its own Sᵀ (one coefficient for an
// axis-aligned revolute joint). cols[c] is the column of direction c. With
// World, the axis-aligned revolute and prismatic joints' coefficients are
// taken in world coordinates instead: with a = the joint's axis in world
// coordinates (row A of E) and r its origin, Sᵀ X [p × d; d] is
// a·((p − r) × d) = d·(a × (p − r)) for a revolute joint and a·d for a
// prismatic one (fewer products, other rounding).
template <bool World, class Column>
void add_point_forces3(const Model& model, const Data& data, int body, const Vec3& p, const Vec3 (&d)[3],
                       double sign, Column* cols) {
  for (int i = body; i > 0; i = model.parent(i)) {
    const Joint& j = model.joint(i);
    const Transform& X = data.X0[i];
    const double* S = data.S.data() + 6 * static_cast<Eigen::Index>(j.v_index);
    detail::visit_kind(j.kind, [&](auto jk) {
      using K = decltype(jk);
      if constexpr (World && detail::is_revolute_aligned<K>) {
        const Vec3 a = X.E().row(K::axis).transpose();
        const Vec3 c = a.cross(p - X.r());
        for (int k = 0; k < 3; ++k) cols[k](j.v_index) += sign * c.dot(d[k]);
      } else if constexpr (World && detail::is_prismatic_aligned<K>) {
        const Vec3 a = X.E().row(K::axis).transpose();
        for (int k = 0; k < 3; ++k) cols[k](j.v_index) += sign * a.dot(d[k]);
      } else {
        const Vec3 pi = X.E() * (p - X.r());
        for (int c = 0; c < 3; ++c) {
          Vec6 f;
          f.tail<3>() = X.E() * d[c];
          f.head<3>() = pi.cross(f.tail<3>());
          double out[6];
          K::St_mul(S, f, out);
          for (int k = 0; k < K::nv; ++k) cols[c](j.v_index + k) += sign * out[k];
        }
      }
    });
  }
}

void check_directions(int directions) {
  if (directions != 2 && directions < 4) {
    throw ArgumentError("friction directions = " + std::to_string(directions) +
                        ": use 2 (orthonormal tangents) or k ≥ 4 (polyhedral cone)");
  }
}

// Contacts from another model would index outside this one's bodies or dofs.
void check_contact(const Model& model, const Contact& c, std::size_t i) {
  const bool bodies_ok = c.body_a >= 0 && c.body_a < model.nbodies() && c.body_b >= 0 && c.body_b < model.nbodies();
  const bool dof_ok = c.kind != ContactKind::JointLimit || (c.dof >= 0 && c.dof < model.nv());
  if (!bodies_ok || !dof_ok) {
    throw ArgumentError("contacts[" + std::to_string(i) + "] (bodies " + std::to_string(c.body_a) + ", " +
                        std::to_string(c.body_b) + ", dof " + std::to_string(c.dof) + ") does not belong to model '" +
                        model.name() + "'");
  }
}

void check_contacts(const Model& model, const std::vector<Contact>& contacts) {
  for (std::size_t i = 0; i < contacts.size(); ++i) check_contact(model, contacts[i], i);
}

// Direction j of `directions` from the tangents (and the same for the rates).
Vec3 direction(int directions, int j, const Vec3& t1, const Vec3& t2) {
  if (directions == 2) return j == 0 ? t1 : t2;
  const Eigen::Vector2d cs = cone_direction(directions, j);
  return cs(0) * t1 + cs(1) * t2;
}

void check_size(Eigen::Index rows, Eigen::Index cols, Eigen::Index want_rows, Eigen::Index want_cols,
                const char* what) {
  if (rows != want_rows || cols != want_cols) {
    throw ArgumentError(std::string(what) + " is " + std::to_string(rows) + "×" + std::to_string(cols) +
                        ", expected " + std::to_string(want_rows) + "×" + std::to_string(want_cols));
  }
}

// Frisvad's orthonormal basis about +z (valid for n_z > −1) and its rate.
void frisvad(const Vec3& n, const Vec3& nd, Vec3& t1, Vec3& t2, Vec3& t1d, Vec3& t2d) {
  const double k = 1.0 / (1.0 + n.z());
  const double b = -n.x() * n.y() * k;
  t1 = Vec3(1.0 - n.x() * n.x() * k, b, -n.x());
  t2 = Vec3(b, 1.0 - n.y() * n.y() * k, -n.y());
  const double kd = -nd.z() * k * k;
  const double bd = -(nd.x() * n.y() + n.x() * nd.y()) * k - n.x() * n.y() * kd;
  t1d = Vec3(-2.0 * n.x() * nd.x() * k - n.x() * n.x() * kd, bd, -nd.x());
  t2d = Vec3(bd, -2.0 * n.y() * nd.y() * k - n.y() * n.y() * kd, -nd.y());
}

}  // namespace

Eigen::Vector2d cone_direction(int k, int j) {
  if (k < 1) throw ArgumentError("cone_direction: the number of directions k must be at least 1, got " + std::to_string(k));
  j %= k;
  if (j < 0) j += k;
  if ((4 * j) % k == 0) {
    switch ((4 * j) / k) {
      case 0: return {1.0, 0.0};
      case 1: return {0.0, 1.0};
      case 2: return {-1.0, 0.0};
      default: return {0.0, -1.0};
    }
  }
  const double th = 2.0 * kPi * j / k;
  return {std::cos(th), std::sin(th)};
}

void tangent_basis(const Vec3& n, const Vec3& ndot, Vec3& t1, Vec3& t2, Vec3& t1dot, Vec3& t2dot) {
  if (n.z() >= -0.5) {
    frisvad(n, ndot, t1, t2, t1dot, t2dot);
    return;
  }
  // Mirror through the x–y plane (P = diag(1, 1, −1)): the basis (s1, s2) of
  // P n, mapped back as (P s2, P s1) to stay right-handed.
  const Vec3 m(n.x(), n.y(), -n.z()), md(ndot.x(), ndot.y(), -ndot.z());
  Vec3 s1, s2, s1d, s2d;
  frisvad(m, md, s1, s2, s1d, s2d);
  t1 = Vec3(s2.x(), s2.y(), -s2.z());
  t2 = Vec3(s1.x(), s1.y(), -s1.z());
  t1dot = Vec3(s2d.x(), s2d.y(), -s2d.z());
  t2dot = Vec3(s1d.x(), s1d.y(), -s1d.z());
}

void tangent_basis(const Vec3& n, Vec3& t1, Vec3& t2) {
  Vec3 t1d, t2d;
  tangent_basis(n, Vec3::Zero(), t1, t2, t1d, t2d);
}

ContactKinematics contact_kinematics(const Model& model, const Data& data, const Contact& contact) {
  check_data(model, data);
  check_contact(model, contact, 0);
  if (contact.kind == ContactKind::JointLimit) {
    ContactKinematics k;
    k.gap = contact.gap;
    k.normal = contact.normal;
    // q̇_dof = Sᵀ(v_b − X_up v_parent) for the unit motion subspace of a 1-DoF joint.
    const Motion rel = data.v[contact.body_b] - data.Xup[contact.body_b].apply(data.v[contact.body_a]);
    k.gap_rate = contact.normal.x() * data.S.col(contact.dof).dot(rel.vector());
    return k;
  }
  ContactState s;
  evaluate(data, contact, s);
  return s.k;
}

void contact_jacobian(const Model& model, const Data& data, const std::vector<Contact>& contacts,
                      Eigen::Ref<MatrixX> T, Eigen::Ref<VectorX> Tdot_v) {
  check_data(model, data);
  const Eigen::Index nc = static_cast<Eigen::Index>(contacts.size());
  check_size(T.rows(), T.cols(), model.nv(), nc, "T");
  check_size(Tdot_v.size(), 1, nc, 1, "Tdot_v");
  check_contacts(model, contacts);
  T.setZero();
  for (Eigen::Index i = 0; i < nc; ++i) {
    const Contact& c = contacts[i];
    if (c.kind == ContactKind::JointLimit) {
      T(c.dof, i) = c.normal.x();  // ±e_dof
      Tdot_v[i] = 0.0;
      continue;
    }
    ContactState s;
    evaluate(data, c, s);
    const ContactKinematics& k = s.k;
    auto column = T.col(i);
    // t_i = (J_bᵀ − J_aᵀ) n_i (11.25); n·u is the same at p_a and p_b (they differ along n).
    add_point_force(model, data, c.body_b, k.point_b, k.normal, 1.0, column);
    add_point_force(model, data, c.body_a, k.point_a, k.normal, -1.0, column);
    Tdot_v[i] = direction_rate(s, k.normal, k.normal_rate);  // 11.30
  }
}

void contact_tangents(const std::vector<Contact>& contacts, int directions, Eigen::Ref<Matrix3X> D) {
  check_directions(directions);
  const Eigen::Index nc = static_cast<Eigen::Index>(contacts.size());
  check_size(D.rows(), D.cols(), 3, directions * nc, "D");
  for (Eigen::Index i = 0; i < nc; ++i) {
    const Contact& c = contacts[i];
    Vec3 t1 = Vec3::Zero(), t2 = Vec3::Zero();
    if (c.kind == ContactKind::Shapes) tangent_basis(c.normal, t1, t2);
    for (int j = 0; j < directions; ++j) D.col(directions * i + j) = direction(directions, j, t1, t2);
  }
}

void tangent_jacobian(const Model& model, const Data& data, const std::vector<Contact>& contacts, int directions,
                      Eigen::Ref<MatrixX> D, Eigen::Ref<VectorX> Ddot_v) {
  check_data(model, data);
  check_directions(directions);
  const Eigen::Index nc = static_cast<Eigen::Index>(contacts.size());
  check_size(D.rows(), D.cols(), model.nv(), directions * nc, "D");
  check_size(Ddot_v.size(), 1, directions * nc, 1, "Ddot_v");
  check_contacts(model, contacts);
  D.setZero();
  for (Eigen::Index i = 0; i < nc; ++i) {
    const Contact& c = contacts[i];
    if (c.kind == ContactKind::JointLimit) {
      Ddot_v.segment(directions * i, directions).setZero();
      continue;
    }
    ContactState s;
    evaluate(data, c, s);
    const ContactKinematics& k = s.k;
    Vec3 t1, t2, t1d, t2d;
    tangent_basis(k.normal, k.normal_rate, t1, t2, t1d, t2d);
    for (int j = 0; j < directions; ++j) {
      const Eigen::Index col = directions * i + j;
      const Vec3 d = direction(directions, j, t1, t2);
      const Vec3 d_rate = direction(directions, j, t1d, t2d);
      auto column = D.col(col);
      // Sliding velocity dᵀ(u_b(p_b) − u_a(p_a)): each body at its own witness point.
      add_point_force(model, data, c.body_b, k.point_b, d, 1.0, column);
      add_point_force(model, data, c.body_a, k.point_a, d, -1.0, column);
      Ddot_v[col] = direction_rate(s, d, d_rate);
    }
  }
}

namespace {

// contact_jacobians and contact_jacobians_world: one loop, the columns'
// products by add_point_forces3<World>.
template <bool World>
void contact_jacobians_in(const Model& model, const Data& data, const std::vector<Contact>& contacts,
                          Eigen::Ref<MatrixX> T, Eigen::Ref<VectorX> Tdot_v, Eigen::Ref<MatrixX> D,
                          Eigen::Ref<VectorX> Ddot_v, bool after_bias_forces) {
  check_data(model, data);
  const Eigen::Index nc = static_cast<Eigen::Index>(contacts.size());
  check_size(T.rows(), T.cols(), model.nv(), nc, "T");
  check_size(Tdot_v.size(), 1, nc, 1, "Tdot_v");
  check_size(D.rows(), D.cols(), model.nv(), 2 * nc, "D");
  check_size(Ddot_v.size(), 1, 2 * nc, 1, "Ddot_v");
  check_contacts(model, contacts);
  const Vec3 a_base = after_bias_forces ? Vec3(-model.gravity()) : Vec3::Zero();
  T.setZero();
  D.setZero();
  using Column = decltype(T.col(0));
  for (Eigen::Index i = 0; i < nc; ++i) {
    const Contact& c = contacts[i];
    if (c.kind == ContactKind::JointLimit) {
      T(c.dof, i) = c.normal.x();  // ±e_dof
      Tdot_v[i] = 0.0;
      Ddot_v.segment<2>(2 * i).setZero();
      continue;
    }
    ContactState s;
    evaluate(data, c, s, a_base);
    const ContactKinematics& k = s.k;
    Vec3 d[3], d_rate[3];
    d[0] = k.normal;
    d_rate[0] = k.normal_rate;
    tangent_basis(k.normal, k.normal_rate, d[1], d[2], d_rate[1], d_rate[2]);
    Column cols[3] = {T.col(i), D.col(2 * i), D.col(2 * i + 1)};
    add_point_forces3<World>(model, data, c.body_b, k.point_b, d, 1.0, cols);
    add_point_forces3<World>(model, data, c.body_a, k.point_a, d, -1.0, cols);
    // direction_rate() for the three directions, sharing the accelerations.
    const Vec3 du = k.velocity_b - k.velocity_a;
    const Vec3 acc = s.mb.acceleration(k.point_b) - s.ma.acceleration(k.point_a) +
                     s.mb.w.cross(k.point_b_rate - k.velocity_b) - s.ma.w.cross(k.point_a_rate - k.velocity_a);
    Tdot_v[i] = d_rate[0].dot(du) + d[0].dot(acc);
    Ddot_v[2 * i] = d_rate[1].dot(du) + d[1].dot(acc);
    Ddot_v[2 * i + 1] = d_rate[2].dot(du) + d[2].dot(acc);
  }
}

}  // namespace

void contact_jacobians(const Model& model, const Data& data, const std::vector<Contact>& contacts,
                       Eigen::Ref<MatrixX> T, Eigen::Ref<VectorX> Tdot_v, Eigen::Ref<MatrixX> D,
                       Eigen::Ref<VectorX> Ddot_v, bool after_bias_forces) {
  contact_jacobians_in<false>(model, data, contacts, T, Tdot_v, D, Ddot_v, after_bias_forces);
}

void contact_jacobians_world(const Model& model, const Data& data, const std::vector<Contact>& contacts,
                             Eigen::Ref<MatrixX> T, Eigen::Ref<VectorX> Tdot_v, Eigen::Ref<MatrixX> D,
                             Eigen::Ref<VectorX> Ddot_v, bool after_bias_forces) {
  contact_jacobians_in<true>(model, data, contacts, T, Tdot_v, D, Ddot_v, after_bias_forces);
}

}  // namespace plume
