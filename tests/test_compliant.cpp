// Compliant contact (Featherstone §11.8, docs/theory.md §6) against independent
// facts: static equilibria (mg/(nK)), the closed-form Kelvin–Voigt impact,
// Coulomb sliding (deceleration μg, stop at v₀/(μg)), sticking on an incline
// (creep = spring deflection), energy conservation with pure springs, the
// force law's derivatives against finite differences, and no allocation.
//
// The dynamic tests integrate y = [q, v, x] with a classical fixed-step RK4
// written here, committing the compliant state after every step as a
// simulator would.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <tuple>

#include "plume/algorithms/energy.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "plume/dynamics/compliant.hpp"
#include "plume/error.hpp"
#include "test_utils.hpp"

// ---- malloc interposition (as in test_allocation.cpp) ---------------------------------
#include "alloc_counter.hpp"

using namespace plume;
using namespace plume::test;

namespace {

constexpr double g = 9.81;
constexpr double kInf = std::numeric_limits<double>::infinity();

template <class F>
long allocations_in(F&& f) {
  g_allocations = 0;
  g_armed = true;
  f();
  g_armed = false;
  return g_allocations.load();
}

// ---- scenes -------------------------------------------------------------------------

int add_free_body(ModelBuilder& b, const std::string& name, double mass, const Mat3& Ic) {
  return b.add_body(name, 0, JointSpec::free_flyer(name + "_joint"), Transform::Identity(),
                    RigidInertia::from_mass_com_inertia(mass, Vec3::Zero(), Ic));
}

void add_shape(ModelBuilder& b, int body, const std::string& name, const Geometry& geometry,
               const Vec3& at = Vec3::Zero()) {
  CollisionShape s;
  s.name = name;
  s.link = b.body_name(body);
  s.body = body;
  s.geometry = geometry;
  s.placement = Transform::translation(at);
  b.add_collision(s);
}

Mat3 box_inertia(double m, const Vec3& size) {
  const Vec3 s2 = size.cwiseProduct(size);
  return Vec3(m * (s2.y() + s2.z()) / 12, m * (s2.x() + s2.z()) / 12, m * (s2.x() + s2.y()) / 12).asDiagonal();
}

Mat3 sphere_inertia(double m, double r) { return (0.4 * m * r * r) * Mat3::Identity(); }

void set_pose(const Model& m, VectorX& q, int body, const Mat3& R, const Vec3& p) {
  const Joint& j = m.joint(body);
  q.segment<3>(j.q_index) = p;
  q.segment<4>(j.q_index + 3) = Eigen::Quaterniond(R).coeffs();
}

// World-frame linear velocity of the body origin and angular velocity → body-frame [ω; v].
void set_velocity(const Model& m, VectorX& v, int body, const Mat3& R, const Vec3& lin, const Vec3& ang) {
  const Joint& j = m.joint(body);
  v.segment<3>(j.v_index) = R.transpose() * ang;
  v.segment<3>(j.v_index + 3) = R.transpose() * lin;
}

Mat3 rotation_of(const Model& m, const VectorX& q, int body) {
  return Eigen::Quaterniond(q.segment<4>(m.joint(body).q_index + 3)).toRotationMatrix();
}
Vec3 position_of(const Model& m, const VectorX& q, int body) { return q.segment<3>(m.joint(body).q_index); }
Vec3 world_velocity_of(const Model& m, const VectorX& q, const VectorX& v, int body) {
  return rotation_of(m, q, body) * Vec3(v.segment<3>(m.joint(body).v_index + 3));
}

std::vector<Contact> detect(const Model& m, const VectorX& q, const std::vector<EnvironmentShape>& env,
                            double margin) {
  DetectionOptions opt;
  opt.margin = margin;
  ContactDetector det(m, env, opt);
  Data d(m);
  forward_kinematics(m, d, q);
  std::vector<Contact> c;
  det.detect(m, d, c);
  return c;
}

CompliantParameters parameters(double K, double D, double Kt, double Dt, double mu) {
  CompliantParameters p;
  p.stiffness = K;
  p.damping = D;
  p.tangential_stiffness = Kt;
  p.tangential_damping = Dt;
  p.mu = mu;
  return p;
}

// ---- the integrator -----------------------------------------------------------------

// y = [q, v, x] with ẏ = [G(q) v, forward_dynamics_compliant, ẋ], classical
// RK4 with step h; after each step the quaternions are renormalised and the
// compliant state is committed (update) at the accepted state.
class Rig {
 public:
  Rig(const Model& model, VectorX q0, VectorX v0, std::vector<Contact> contacts, std::vector<CompliantParameters> p)
      : m(model), d(model), contacts(std::move(contacts)), params(std::move(p)), q(std::move(q0)), v(std::move(v0)) {
    tau = VectorX::Zero(m.nv());
    state.synchronize(this->contacts);
    x = state.displacements();
    commit();
    qk = q;
    vk = v;
    xk = x;
    for (int s = 0; s < 4; ++s) {
      dq[s] = VectorX::Zero(m.nq());
      dv[s] = VectorX::Zero(m.nv());
      dx[s] = VectorX::Zero(x.size());
    }
  }

  void step(double h) {
    rhs(q, v, x, t, 0);
    stage(0.5 * h, 0);
    rhs(qk, vk, xk, t + 0.5 * h, 1);
    stage(0.5 * h, 1);
    rhs(qk, vk, xk, t + 0.5 * h, 2);
    stage(h, 2);
    rhs(qk, vk, xk, t + h, 3);
    q += (h / 6) * (dq[0] + 2 * dq[1] + 2 * dq[2] + dq[3]);
    v += (h / 6) * (dv[0] + 2 * dv[1] + 2 * dv[2] + dv[3]);
    x += (h / 6) * (dx[0] + 2 * dx[1] + 2 * dx[2] + dx[3]);
    normalize_configuration(m, q);
    t += h;
    commit();
  }

  /// Forces, modes and witnesses at the current (accepted) state.
  const CompliantContactForces& evaluate() {
    forward_kinematics(m, d, q, v);
    forces.resize(m.nv(), contacts.size());
    compliant_contact_forces(m, d, q, contacts, params, state, x, t, forces.tau, &forces);
    return forces;
  }

  double spring_energy() {
    evaluate();
    double e = 0.0;
    for (std::size_t i = 0; i < contacts.size(); ++i) {
      const CompliantContactForce& c = forces.contacts[i];
      if (c.touching) e += 0.5 * params[i].stiffness * c.gap * c.gap;
      e += 0.5 * params[i].tangential_stiffness * x.segment<2>(2 * i).squaredNorm();
    }
    return e;
  }

  double energy() {
    return kinetic_energy(m, d, q, v) + potential_energy(m, d, q) + spring_energy();
  }

  bool all(CompliantMode mode) const {
    for (const CompliantContactRecord& r : state.records()) {
      if (r.mode != mode) return false;
    }
    return true;
  }

  const Model& m;
  Data d;
  std::vector<Contact> contacts;
  std::vector<CompliantParameters> params;
  CompliantContactState state;
  CompliantContactForces forces;
  VectorX q, v, x, tau;
  double t = 0.0;

 private:
  void rhs(const VectorX& qs, const VectorX& vs, const VectorX& xs, double ts, int s) {
    dv[s] = forward_dynamics_compliant(m, d, qs, vs, tau, contacts, params, state, xs, ts, forces);
    dx[s] = forces.x_dot();
    configuration_derivative(m, qs, vs, dq[s]);
  }
  void stage(double h, int s) {
    qk = q + h * dq[s];
    vk = v + h * dv[s];
    xk = x + h * dx[s];
  }
  void commit() {
    forward_kinematics(m, d, q, v);
    state.update(m, d, q, contacts, params, x, t);
    x = state.displacements();
  }

  VectorX qk, vk, xk;
  VectorX dq[4], dv[4], dx[4];
};

// A free box (or any body) model with one shape.
struct FreeBody {
  Model model;
  int body = 1;
};

FreeBody free_box(double mass, const Vec3& size) {
  ModelBuilder b("box");
  const int body = add_free_body(b, "box", mass, box_inertia(mass, size));
  add_shape(b, body, "box_shape", Box{size});
  return {b.build(), body};
}

FreeBody free_ball(double mass, double r, const Vec3& gravity = Vec3(0, 0, -g)) {
  ModelBuilder b("ball");
  b.set_gravity(gravity);
  const int body = add_free_body(b, "ball", mass, sphere_inertia(mass, r));
  add_shape(b, body, "ball_shape", Sphere{r});
  return {b.build(), body};
}

}  // namespace

// ---- static equilibria --------------------------------------------------------------

TEST(CompliantStatic, BoxAndBallSettleAtWeightOverStiffness) {
  // A 2 kg box dropped flat from 1 mm onto 4 corner contacts, and a 1 kg ball
  // dropped from 1 mm: at rest each contact carries its share of mg, so
  // φ = −mg/(nK). Damping is critical for the mass share m/n (the rest state
  // is reached to rounding within the simulated second).
  const double K = 1e4;
  {
    const double mass = 2.0;
    const Vec3 size(0.4, 0.3, 0.2);
    const FreeBody box = free_box(mass, size);
    VectorX q = neutral_configuration(box.model);
    set_pose(box.model, q, box.body, Mat3::Identity(), Vec3(0.1, -0.2, 0.5 * size.z() + 1e-3));
    const std::vector<Contact> contacts = detect(box.model, q, {ground_plane()}, 0.01);
    ASSERT_EQ(contacts.size(), 4u);
    const double D = 2 * std::sqrt(K * mass / 4);
    Rig rig(box.model, q, VectorX::Zero(box.model.nv()), contacts,
            std::vector<CompliantParameters>(4, parameters(K, D, K, D, 0.8)));
    for (int k = 0; k < 10000; ++k) rig.step(1e-4);
    const CompliantContactForces& f = rig.evaluate();
    const double expected = -mass * g / (4 * K);
    double total = 0.0;
    for (const CompliantContactForce& c : f.contacts) {
      EXPECT_NEAR(c.gap, expected, 1e-6 * std::abs(expected));
      EXPECT_EQ(c.mode, CompliantMode::Sticking);
      EXPECT_LT(c.friction.norm(), 1e-9);
      total += c.normal_force;
    }
    EXPECT_NEAR(total, mass * g, 1e-6 * mass * g);
    std::printf("[ static ] box: corner gap %.9e (mg/4K = %.9e), Σf_n − mg = %.1e N\n", f.contacts[0].gap,
                expected, total - mass * g);
    EXPECT_LT(rig.v.norm(), 1e-8);
    EXPECT_TRUE(rig.all(CompliantMode::Sticking));
    for (const CompliantContactRecord& r : rig.state.records()) EXPECT_EQ(r.phase, CompliantPhase::Touching);
  }
  {
    const double mass = 1.0, r = 0.1;
    const FreeBody ball = free_ball(mass, r);
    VectorX q = neutral_configuration(ball.model);
    set_pose(ball.model, q, ball.body, Mat3::Identity(), Vec3(0, 0, r + 1e-3));
    const std::vector<Contact> contacts = detect(ball.model, q, {ground_plane()}, 0.01);
    ASSERT_EQ(contacts.size(), 1u);
    const double D = 2 * std::sqrt(K * mass);
    Rig rig(ball.model, q, VectorX::Zero(ball.model.nv()), contacts, {parameters(K, D, K, D, 0.8)});
    for (int k = 0; k < 10000; ++k) rig.step(1e-4);
    const CompliantContactForces& f = rig.evaluate();
    EXPECT_NEAR(f.contacts[0].gap, -mass * g / K, 1e-6 * mass * g / K);
    EXPECT_NEAR(f.contacts[0].normal_force, mass * g, 1e-6 * mass * g);
    std::printf("[ static ] ball: gap %.9e (mg/K = %.9e)\n", f.contacts[0].gap, -mass * g / K);
    EXPECT_NEAR(world_velocity_of(ball.model, rig.q, rig.v, ball.body).norm(), 0.0, 1e-8);
  }
}

TEST(CompliantStatic, QuadrupedScaleDefaultsPenetrateLessThanAMillimetre) {
  // A 20 kg body on 4 point feet 0.3 m below it, default parameters: each
  // foot carries 49.05 N and sinks 49.05 / 2e5 = 0.245 mm.
  const double mass = 20.0;
  ModelBuilder b("quadruped_body");
  const int body = add_free_body(b, "trunk", mass, box_inertia(mass, Vec3(0.6, 0.3, 0.15)));
  int k = 0;
  for (double sx : {-1.0, 1.0}) {
    for (double sy : {-1.0, 1.0}) add_shape(b, body, "foot" + std::to_string(k++), Sphere{0.0}, Vec3(0.25 * sx, 0.12 * sy, -0.3));
  }
  const Model m = b.build();
  VectorX q = neutral_configuration(m);
  set_pose(m, q, body, Mat3::Identity(), Vec3(0, 0, 0.3));  // feet exactly on the ground
  const std::vector<Contact> contacts = detect(m, q, {ground_plane()}, 0.01);
  ASSERT_EQ(contacts.size(), 4u);
  const CompliantParameters defaults;
  Rig rig(m, q, VectorX::Zero(m.nv()), contacts, std::vector<CompliantParameters>(4, defaults));
  for (int s = 0; s < 5000; ++s) rig.step(1e-4);
  const CompliantContactForces& f = rig.evaluate();
  const double expected = -mass * g / (4 * defaults.stiffness);
  std::printf("[ static ] quadruped: foot gap %.9e m (mg/4K = %.9e)\n", f.contacts[0].gap, expected);
  for (const CompliantContactForce& c : f.contacts) {
    EXPECT_GT(c.gap, -1e-3);
    EXPECT_NEAR(c.gap, expected, 1e-6 * std::abs(expected));
    EXPECT_EQ(c.mode, CompliantMode::Sticking);
  }
  EXPECT_LT(rig.v.norm(), 1e-8);
}

TEST(CompliantStatic, JointLimitActsAsASpringDamper) {
  // A 1 kg slider on a vertical prismatic joint against its lower limit 0:
  // it settles at q = −mg/K (N/m for a prismatic joint), without friction.
  ModelBuilder b("slider");
  const double mass = 1.0, K = 1e4;
  b.add_body("slider", 0, JointSpec::prismatic("slide", Vec3::UnitZ(), 0.0, 1.0), Transform::Identity(),
             RigidInertia::from_mass_com_inertia(mass, Vec3::Zero(), 0.01 * Mat3::Identity()));
  const Model m = b.build();
  VectorX q = VectorX::Constant(1, 0.002);
  std::vector<Contact> contacts;
  detect_joint_limits(m, q, 0.01, contacts);
  ASSERT_EQ(contacts.size(), 1u);
  Rig rig(m, q, VectorX::Zero(1), contacts, {parameters(K, 2 * std::sqrt(K * mass), 0, 0, 0.5)});
  for (int s = 0; s < 10000; ++s) rig.step(1e-4);
  EXPECT_NEAR(rig.q[0], -mass * g / K, 1e-6 * mass * g / K);
  EXPECT_NEAR(rig.evaluate().contacts[0].normal_force, mass * g, 1e-6 * mass * g);
  EXPECT_EQ(rig.state.record(0).phase, CompliantPhase::Touching);
}

// ---- Kelvin–Voigt impact: closed form -----------------------------------------------

namespace {

// A point mass m meets a rested patch at speed v₀ (penetration δ = −φ ≥ 0,
// δ(0) = 0, δ̇(0) = v₀) under gravity g along the approach. While touching,
//
//     m δ̈ = m g − K δ − D δ̇,   f = K δ + D δ̇ (the contact force, 11.74),
//
// a damped oscillator about δ_s = m g/K. With ω_n = √(K/m), σ = D/(2m),
// ω_d = √(ω_n² − σ²) (underdamped) and y = δ − δ_s:
//
//     y(t) = e^{−σt} (A cos ω_d t + B sin ω_d t),  A = −δ_s,  B = (v₀ + σA)/ω_d,
//     ẏ(t) = e^{−σt} ((Bω_d − σA) cos ω_d t − (Aω_d + σB) sin ω_d t).
//
// Contact ends when the force returns to zero, f(t_c) = 0 (not when δ = 0:
// the patch is still depressed and relaxes behind the point), and the
// rebound speed is −δ̇(t_c) = −ẏ(t_c). For g = 0, f = m v₀ e^{−σt}
// [((ω_n² − 2σ²)/ω_d) sin ω_d t + 2σ cos ω_d t], so
//
//     t_c = (π − atan2(2σω_d, ω_n² − 2σ²)) / ω_d,
//     e   = −δ̇(t_c)/v₀ = e^{−σ t_c} ((σ/ω_d) sin ω_d t_c − cos ω_d t_c)
//
// (the linear-dashpot result of Schwager & Pöschel, Granular Matter 9 (2007)
// 465–469). With gravity the root is found by bisection on f(t).
struct KelvinVoigt {
  double m, K, D, v0, grav;
  double wn() const { return std::sqrt(K / m); }
  double sigma() const { return D / (2 * m); }
  double wd() const { return std::sqrt(wn() * wn() - sigma() * sigma()); }
  double A() const { return -m * grav / K; }
  double B() const { return (v0 + sigma() * A()) / wd(); }
  double y(double t) const { return std::exp(-sigma() * t) * (A() * std::cos(wd() * t) + B() * std::sin(wd() * t)); }
  double ydot(double t) const {
    const double s = sigma(), w = wd();
    return std::exp(-s * t) * ((B() * w - s * A()) * std::cos(w * t) - (A() * w + s * B()) * std::sin(w * t));
  }
  double force(double t) const { return m * grav + K * y(t) + D * ydot(t); }
  // First zero of f: a sign change on a fine grid over two damped periods
  // (after that the oscillation about δ_s only decays, so f stays positive
  // if it has not vanished), then bisection. NaN if the ball never leaves.
  double contact_time() const {
    const double period = 2 * 3.14159265358979323846 / wd(), dt = period / 4000;
    double lo = dt, hi = dt;
    while (force(hi) > 0) {
      lo = hi;
      hi += dt;
      if (hi > 2 * period) return std::nan("");
    }
    for (int i = 0; i < 200 && hi - lo > 1e-16; ++i) {
      const double mid = 0.5 * (lo + hi);
      (force(mid) > 0 ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
  }
  double contact_time_no_gravity() const {
    const double s = sigma(), w = wd(), wn2 = wn() * wn();
    return (3.14159265358979323846 - std::atan2(2 * s * w, wn2 - 2 * s * s)) / w;
  }
  double rebound_speed() const { return -ydot(contact_time()); }
};

}  // namespace

TEST(CompliantImpact, KelvinVoigtDurationAndReboundMatchClosedForm) {
  const double mass = 1.0, r = 0.1, K = 1e4, v0 = 1.0, h = 1e-5;
  for (double grav : {0.0, g}) {
    for (double D : {20.0, 100.0, 150.0}) {  // ζ = 0.1, 0.5, 0.75 (beyond 1/√2: the atan2 branch)
      SCOPED_TRACE("g = " + std::to_string(grav) + ", D = " + std::to_string(D));
      const KelvinVoigt kv{mass, K, D, v0, grav};
      if (grav == 0.0) {
        EXPECT_NEAR(kv.contact_time(), kv.contact_time_no_gravity(), 1e-13);
      }
      const FreeBody ball = free_ball(mass, r, Vec3(0, 0, -grav));
      VectorX q = neutral_configuration(ball.model);
      set_pose(ball.model, q, ball.body, Mat3::Identity(), Vec3(0, 0, r));  // touching, φ = 0
      VectorX v = VectorX::Zero(6);
      set_velocity(ball.model, v, ball.body, Mat3::Identity(), Vec3(0, 0, -v0), Vec3::Zero());
      const std::vector<Contact> contacts = detect(ball.model, q, {ground_plane()}, 0.01);
      ASSERT_EQ(contacts.size(), 1u);
      Rig rig(ball.model, q, v, contacts, {parameters(K, D, 0, 0, 0.5)});
      ASSERT_EQ(rig.state.record(0).phase, CompliantPhase::Touching);
      if (std::isnan(kv.contact_time())) {
        // Heavy damping and gravity: the force never returns to zero, the
        // ball stays on the patch and settles at δ_s = mg/K.
        for (int s = 0; s < 30000; ++s) {
          rig.step(h);
          ASSERT_EQ(rig.state.record(0).phase, CompliantPhase::Touching);
        }
        EXPECT_NEAR(rig.evaluate().contacts[0].gap, -mass * grav / K, 1e-6 * mass * grav / K);
        std::printf("[ KV ] g=%.2f D=%5.1f  no rebound (closed form and simulation)\n", grav, D);
        continue;
      }
      // Integrate until the committed phase turns to Relaxing; the loss lies
      // between the last two steps, where the witness −Kφ − Dφ̇ crosses 0
      // (a C¹ function of t there: the force and the acceleration are
      // continuous at the loss), located by linear interpolation.
      double w_prev = rig.evaluate().contacts[0].normal_witness, t_prev = 0.0;
      while (rig.state.record(0).phase == CompliantPhase::Touching) {
        t_prev = rig.t;
        w_prev = rig.evaluate().contacts[0].normal_witness;
        rig.step(h);
        ASSERT_LT(rig.t, 1.0);
      }
      const CompliantContactForce& after = rig.evaluate().contacts[0];
      const double w_now = -K * after.gap - D * after.gap_rate;
      const double tc = t_prev + h * w_prev / (w_prev - w_now);
      // After the loss the ball is ballistic: carry the speed back to t_c.
      const double rebound = world_velocity_of(ball.model, rig.q, rig.v, ball.body).z() + grav * (rig.t - tc);
      // Tolerances: away from the switches RK4's error is ~(ω h)⁴ ≈ 1e-12
      // (ω = 100 rad/s, h = 1e-5); the touch-down falls on a step boundary;
      // interpolating the loss costs O(h² s''/s') ≈ 1e-8 relative.
      const double tc_exact = kv.contact_time(), rebound_exact = kv.rebound_speed();
      EXPECT_NEAR(tc, tc_exact, 1e-6 * tc_exact);
      EXPECT_NEAR(rebound, rebound_exact, 1e-6 * v0);
      std::printf("[ KV ] g=%.2f D=%5.1f  t_c=%.9f (exact %.9f, rel err %.1e)  rebound=%.9f (exact %.9f, err %.1e)\n",
                  grav, D, tc, tc_exact, std::abs(tc / tc_exact - 1), rebound, rebound_exact,
                  std::abs(rebound - rebound_exact));
      // The ball never touches the relaxing patch again (it outruns it).
      for (int s = 0; s < 2000; ++s) {
        rig.step(h);
        ASSERT_EQ(rig.state.record(0).phase, CompliantPhase::Relaxing);
      }
      EXPECT_GT(rig.evaluate().contacts[0].normal_witness, 0.0);
    }
  }
}

// ---- friction ---------------------------------------------------------------------

TEST(CompliantFriction, SlidingBlockDeceleratesAtMuGAndSticks) {
  const double mass = 1.0, K = 2e4, mu = 0.5, v0 = 1.0, h = 1e-4;
  const double D = 2 * std::sqrt(K * mass / 4);
  const Vec3 size(0.2, 0.2, 0.1);
  const FreeBody box = free_box(mass, size);
  VectorX q = neutral_configuration(box.model);
  set_pose(box.model, q, box.body, Mat3::Identity(), Vec3(0, 0, 0.5 * size.z() - mass * g / (4 * K)));
  VectorX v = VectorX::Zero(6);
  set_velocity(box.model, v, box.body, Mat3::Identity(), Vec3(v0, 0, 0), Vec3::Zero());
  const std::vector<Contact> contacts = detect(box.model, q, {ground_plane()}, 0.01);
  ASSERT_EQ(contacts.size(), 4u);
  Rig rig(box.model, q, v, contacts, std::vector<CompliantParameters>(4, parameters(K, D, K, D, mu)));

  const double t_stop = v0 / (mu * g);
  double t_stick = -1.0;
  // Least-squares slope of v_x(t) over [0.02, t_stop − 0.02].
  double n = 0, st = 0, sv = 0, stt = 0, stv = 0;
  // ẋ of the pipeline against a central difference of the committed x.
  VectorX x_before, x_dot_mid;
  bool checked_slip = false, checked_stick = false;
  const auto check_rate = [&](const char* what) {
    SCOPED_TRACE(what);
    x_before = rig.x;
    rig.step(h);
    forward_kinematics(box.model, rig.d, rig.q, rig.v);
    x_dot_mid.resize(rig.x.size());
    compliant_state_derivative(box.model, rig.d, rig.q, rig.contacts, rig.params, rig.state, rig.x, rig.t, x_dot_mid);
    const VectorX x_mid = rig.x;
    rig.step(h);
    const VectorX fd = (rig.x - x_before) / (2 * h);
    // Central-difference truncation ~ (ωh)²/6 ≈ 1.3e-4 for the sticking
    // springs' ω = √(4K_t/m) = 283 rad/s; the slip phase is smoother.
    EXPECT_LT((fd - x_dot_mid).norm(), 3e-4 * x_dot_mid.norm()) << fd.transpose() << "\n" << x_dot_mid.transpose();
    std::printf("[ slide ] %s: |ẋ − central difference of x| / |ẋ| = %.1e\n", what, (fd - x_dot_mid).norm() / x_dot_mid.norm());
  };
  while (rig.t < 0.4) {
    const double vx = world_velocity_of(box.model, rig.q, rig.v, box.body).x();
    if (rig.t > 0.02 && rig.t < t_stop - 0.02) {
      n += 1;
      st += rig.t;
      sv += vx;
      stt += rig.t * rig.t;
      stv += rig.t * vx;
    }
    if (t_stick < 0 && rig.all(CompliantMode::Sticking)) t_stick = rig.t;
    if (!checked_slip && rig.t > 0.1) {
      ASSERT_TRUE(rig.all(CompliantMode::Slipping));
      check_rate("slipping");
      checked_slip = true;
    } else if (!checked_stick && t_stick > 0 && rig.t > t_stick + 0.01) {
      ASSERT_TRUE(rig.all(CompliantMode::Sticking));
      check_rate("sticking");
      checked_stick = true;
    } else {
      rig.step(h);
    }
  }
  const double slope = (n * stv - st * sv) / (n * stt - st * st);
  std::printf("[ slide ] deceleration %.6f (μg = %.6f, rel err %.1e); sticks at %.5f s (v0/μg = %.5f)\n", -slope,
              mu * g, std::abs(-slope / (mu * g) - 1), t_stick, t_stop);
  EXPECT_NEAR(-slope, mu * g, 1e-3 * mu * g);
  // The stop may be shifted by the tangential springs' transient (D_t/K_t ≈ 7 ms).
  EXPECT_NEAR(t_stick, t_stop, 1e-3);
  EXPECT_TRUE(checked_slip && checked_stick);
  EXPECT_TRUE(rig.all(CompliantMode::Sticking));
  EXPECT_LT(rig.v.norm(), 1e-5);
  const double travel = position_of(box.model, rig.q, box.body).x();
  std::printf("[ slide ] travel %.6f m (v0²/2μg = %.6f)\n", travel, v0 * v0 / (2 * mu * g));
  // After sticking, the loaded springs (μ f_n/K_t = μmg/(4K_t) ≈ 6e-5 m)
  // pull the block back as they relax.
  EXPECT_NEAR(travel, v0 * v0 / (2 * mu * g), 2 * mu * mass * g / (4 * K));
}

TEST(CompliantFriction, BlockOnInclineCreepsBySpringDeflectionOrSlides) {
  const double theta = 0.3;  // tan θ = 0.309
  const Mat3 R = Eigen::AngleAxisd(theta, Vec3::UnitY()).toRotationMatrix();
  const Vec3 n = R * Vec3::UnitZ(), s = R * Vec3::UnitX();  // normal, down-slope direction
  const double mass = 1.0, K = 2e4, h = 1e-4;
  const double D = 2 * std::sqrt(K * mass / 4);
  const Vec3 size(0.2, 0.2, 0.1);
  const FreeBody box = free_box(mass, size);
  for (double mu : {0.5, 0.2}) {
    SCOPED_TRACE("mu = " + std::to_string(mu));
    VectorX q = neutral_configuration(box.model);
    // Resting on 4 corners at the normal equilibrium, unloaded tangential springs.
    const double delta_n = mass * g * std::cos(theta) / (4 * K);
    set_pose(box.model, q, box.body, R, n * (0.5 * size.z() - delta_n));
    const std::vector<Contact> contacts = detect(box.model, q, {ground_plane("incline", n)}, 0.01);
    ASSERT_EQ(contacts.size(), 4u);
    Rig rig(box.model, q, VectorX::Zero(6), contacts, std::vector<CompliantParameters>(4, parameters(K, D, K, D, mu)));
    // Displacement along the slope of the bottom face's centre (the corners
    // move with it up to the tilt's second-order terms).
    const auto bottom = [&]() -> Vec3 {
      return position_of(box.model, rig.q, box.body) + rotation_of(box.model, rig.q, box.body) * Vec3(0, 0, -0.05);
    };
    const Vec3 start = bottom();
    if (mu > std::tan(theta)) {
      const double deflection = mass * g * std::sin(theta) / (4 * K);  // mg sin θ/(n K_t)
      double max_creep = 0.0;
      bool slipped = false;
      for (int k = 0; k < 5000; ++k) {
        rig.step(h);
        max_creep = std::max(max_creep, s.dot(bottom() - start));
        slipped = slipped || !rig.all(CompliantMode::Sticking);
      }
      const double creep = s.dot(bottom() - start);
      std::printf("[ incline ] creep %.4e m, max %.4e m, spring deflection %.4e m\n", creep, max_creep, deflection);
      EXPECT_FALSE(slipped);
      EXPECT_NEAR(creep, deflection, 0.02 * deflection);
      EXPECT_LE(max_creep, 1.05 * deflection);
      EXPECT_LT(rig.v.norm(), 1e-6);
      for (int i = 0; i < 4; ++i) EXPECT_NEAR(rig.x.segment<2>(2 * i).norm(), deflection, 0.02 * deflection);
    } else {
      // Sliding: a = g (sin θ − μ cos θ) along the slope.
      double v_a = 0, t_a = 0;
      while (rig.t < 0.3) {
        rig.step(h);
        if (t_a == 0 && rig.t >= 0.05) {
          v_a = s.dot(world_velocity_of(box.model, rig.q, rig.v, box.body));
          t_a = rig.t;
        }
      }
      const double accel = (s.dot(world_velocity_of(box.model, rig.q, rig.v, box.body)) - v_a) / (rig.t - t_a);
      const double expected = g * (std::sin(theta) - mu * std::cos(theta));
      std::printf("[ incline ] sliding acceleration %.6f (expected %.6f, rel err %.1e)\n", accel, expected,
                  std::abs(accel / expected - 1));
      EXPECT_NEAR(accel, expected, 1e-3 * expected);
      EXPECT_TRUE(rig.all(CompliantMode::Slipping));
    }
  }
}

// ---- energy with pure springs ---------------------------------------------------------

TEST(CompliantEnergy, PureSpringsConserveEnergy) {
  // D = D_t = 0, μ = ∞: every contact force derives from the potential
  // ½Kφ² + ½K_t|x|² (the normal force vanishes continuously at φ = 0), so
  // T + V + springs is constant; RK4's error shrinks with the step.
  // (A sticking tangential spring that separates loaded discards its energy
  // by design, so the rocking case keeps all corners in contact.)
  const double K = 1e4;
  const auto drift = [&](const Model& m, const VectorX& q, const VectorX& v, std::size_t ncontacts, double h,
                         double duration) {
    const std::vector<Contact> contacts = detect(m, q, {ground_plane()}, 0.1);
    EXPECT_EQ(contacts.size(), ncontacts);
    Rig rig(m, q, v, contacts, std::vector<CompliantParameters>(contacts.size(), parameters(K, 0, K, 0, kInf)));
    const double e0 = rig.energy();
    double worst = 0.0;
    bool separated = false, touched = false;
    while (rig.t < duration - 0.5 * h) {
      rig.step(h);
      worst = std::max(worst, std::abs(rig.energy() - e0));
      for (const CompliantContactRecord& r : rig.state.records()) {
        separated = separated || r.phase == CompliantPhase::Relaxing;
        touched = touched || r.phase == CompliantPhase::Touching;
      }
    }
    return std::make_tuple(worst / std::abs(e0), separated, touched);
  };
  {
    // A 1 kg ball dropped from 5 cm: three bounces in 0.6 s.
    const double mass = 1.0, r = 0.1;
    const FreeBody ball = free_ball(mass, r);
    VectorX q = neutral_configuration(ball.model);
    set_pose(ball.model, q, ball.body, Mat3::Identity(), Vec3(0, 0, r + 0.05));
    const VectorX v = VectorX::Zero(6);
    const auto [e1, sep1, touch1] = drift(ball.model, q, v, 1, 1e-4, 0.6);
    const auto [e2, sep2, touch2] = drift(ball.model, q, v, 1, 5e-5, 0.6);
    std::printf("[ energy ] bouncing ball: relative drift %.2e (h = 1e-4), %.2e (h = 5e-5), ratio %.1f\n", e1, e2,
                e1 / e2);
    // The force's kink at φ = 0 (touch-down, lift-off) costs RK4 about one
    // order: the drift falls ~2³ per halving instead of 2⁴.
    EXPECT_TRUE(sep1 && touch1);
    EXPECT_LT(e1, 1e-5);
    EXPECT_GT(e1 / e2, 6.0);
  }
  {
    // A 2 kg box on 4 corners, rocking, yawing and sliding a little on its
    // sticking springs, never lifting a corner.
    const double mass = 2.0;
    const Vec3 size(0.4, 0.3, 0.2);
    const FreeBody box = free_box(mass, size);
    VectorX q = neutral_configuration(box.model);
    set_pose(box.model, q, box.body, Mat3::Identity(), Vec3(0, 0, 0.5 * size.z() - mass * g / (4 * K)));
    VectorX v = VectorX::Zero(6);
    set_velocity(box.model, v, box.body, Mat3::Identity(), Vec3(0.01, 0.005, 0.02), Vec3(0.02, 0.01, 0.03));
    const auto [e1, sep1, touch1] = drift(box.model, q, v, 4, 2e-4, 0.5);
    const auto [e2, sep2, touch2] = drift(box.model, q, v, 4, 1e-4, 0.5);
    std::printf("[ energy ] rocking box: relative drift %.2e (h = 2e-4), %.2e (h = 1e-4), ratio %.1f\n", e1, e2,
                e1 / e2);
    EXPECT_FALSE(sep1 || sep2);
    EXPECT_LT(e1, 1e-7);
    EXPECT_GT(e1 / e2, 8.0);  // fourth order: 16 in the limit
  }
}

// ---- the force law's derivatives ---------------------------------------------------

namespace {

double g_worst_derivative_error = 0.0;  // largest relative mismatch seen, for the log

// Central differences of f_t and ẋ in x, u and f_n.
void expect_law_derivatives(const CompliantParameters& p, double fn, const Eigen::Vector2d& x,
                            const Eigen::Vector2d& u, CompliantMode mode) {
  const CompliantTangentialLaw law = compliant_tangential_law(p, fn, x, u);
  ASSERT_EQ(law.mode, mode);
  const double eps = 1e-7;
  Eigen::Matrix2d fx, fu, rx, ru;
  for (int k = 0; k < 2; ++k) {
    const double ex = eps * std::max(1e-6, x.norm()), eu = eps * std::max(1e-3, u.norm());
    Eigen::Vector2d dx = Eigen::Vector2d::Zero(), du = Eigen::Vector2d::Zero();
    dx[k] = ex;
    du[k] = eu;
    const auto xp = compliant_tangential_law(p, fn, x + dx, u), xm = compliant_tangential_law(p, fn, x - dx, u);
    const auto up = compliant_tangential_law(p, fn, x, u + du), um = compliant_tangential_law(p, fn, x, u - du);
    fx.col(k) = (xp.force - xm.force) / (2 * ex);
    rx.col(k) = (xp.rate - xm.rate) / (2 * ex);
    fu.col(k) = (up.force - um.force) / (2 * eu);
    ru.col(k) = (up.rate - um.rate) / (2 * eu);
  }
  const double en = eps * std::max(1.0, fn);
  const auto np = compliant_tangential_law(p, fn + en, x, u), nm = compliant_tangential_law(p, fn - en, x, u);
  const Eigen::Vector2d fnd = (np.force - nm.force) / (2 * en), rnd = (np.rate - nm.rate) / (2 * en);
  // Step 1e-7 relative: truncation and rounding both ≈ 1e-8 relative.
  const auto close = [](const auto& a, const auto& b) {
    const double err = (a - b).norm() / (1.0 + b.norm());
    g_worst_derivative_error = std::max(g_worst_derivative_error, err);
    return err <= 1e-6;
  };
  EXPECT_TRUE(close(law.force_d_x, fx)) << law.force_d_x << "\nvs\n" << fx;
  EXPECT_TRUE(close(law.force_d_u, fu)) << law.force_d_u << "\nvs\n" << fu;
  EXPECT_TRUE(close(law.rate_d_x, rx)) << law.rate_d_x << "\nvs\n" << rx;
  EXPECT_TRUE(close(law.rate_d_u, ru)) << law.rate_d_u << "\nvs\n" << ru;
  EXPECT_TRUE(close(law.force_d_normal, fnd)) << law.force_d_normal.transpose() << " vs " << fnd.transpose();
  EXPECT_TRUE(close(law.rate_d_normal, rnd)) << law.rate_d_normal.transpose() << " vs " << rnd.transpose();
}

}  // namespace

TEST(CompliantLaw, DerivativesMatchFiniteDifferencesWhereSmooth) {
  std::mt19937_64 rng(7);
  const CompliantParameters p = parameters(2e5, 2e3, 1e5, 800, 0.6);
  CompliantParameters p0 = p;
  p0.tangential_damping = 0.0;
  for (int trial = 0; trial < 20; ++trial) {
    SCOPED_TRACE(trial);
    const double fn = uniform(rng, 5, 50);
    const double cone = p.mu * fn;
    // Sticking: |f_stick| well inside the cone.
    Eigen::Vector2d x(uniform(rng, -1, 1), uniform(rng, -1, 1)), u(uniform(rng, -1, 1), uniform(rng, -1, 1));
    x *= 0.3 * cone / p.tangential_stiffness;
    u *= 0.3 * cone / p.tangential_damping;
    expect_law_derivatives(p, fn, x, u, CompliantMode::Sticking);
    // Slipping: |f_stick| beyond the cone.
    const Eigen::Vector2d xs = 4.0 * x, us(uniform(rng, -0.5, 0.5), uniform(rng, -0.5, 0.5));
    if ((p.tangential_stiffness * xs + p.tangential_damping * us).norm() > 1.2 * cone) {
      expect_law_derivatives(p, fn, xs, us, CompliantMode::Slipping);
      // The patch's force balance 11.77 and the cone.
      const CompliantTangentialLaw law = compliant_tangential_law(p, fn, xs, us);
      EXPECT_NEAR(law.force.norm(), cone, 1e-12 * cone);
      EXPECT_LT((p.tangential_stiffness * xs + p.tangential_damping * law.rate + law.force).norm(), 1e-9 * cone);
    }
    // D_t = 0 slipping: x beyond the cone, sliding outward.
    const Eigen::Vector2d xo = x.normalized() * 1.5 * cone / p.tangential_stiffness;
    const Eigen::Vector2d uo = x.normalized() * 0.2 + Eigen::Vector2d(-x.y(), x.x()).normalized() * 0.3;
    expect_law_derivatives(p0, fn, xo, uo, CompliantMode::Slipping);
    // Separated: the patch relaxes.
    const CompliantTangentialLaw sep = compliant_tangential_law(p, 0.0, x, u);
    EXPECT_EQ(sep.mode, CompliantMode::Separated);
    EXPECT_TRUE(sep.force.isZero(0.0));
    EXPECT_LT((sep.rate + p.tangential_stiffness / p.tangential_damping * x).norm(), 1e-12);
    // ẋ is continuous across the cone: on either side of |f_stick| = μ f_n it tends to u.
    const Eigen::Vector2d ub = -(p.tangential_stiffness * x) / p.tangential_damping;  // f_stick = 0 …
    const Eigen::Vector2d dir(std::cos(trial), std::sin(trial));
    for (double side : {1 - 1e-9, 1 + 1e-9}) {  // … plus a sliding speed that puts f_stick at the cone
      const Eigen::Vector2d ue = ub + dir * side * cone / p.tangential_damping;
      const CompliantTangentialLaw l = compliant_tangential_law(p, fn, x, ue);
      EXPECT_EQ(l.mode, side < 1 ? CompliantMode::Sticking : CompliantMode::Slipping);
      EXPECT_LT((l.rate - ue).norm(), 1e-7 * ue.norm());
    }
  }
  std::printf("[ law ] worst |analytic − central difference| / (1 + |fd|) = %.1e\n", g_worst_derivative_error);
  // Normal law: −K, −D while touching, zero otherwise; a relaxing patch.
  CompliantContactRecord touching;
  touching.phase = CompliantPhase::Touching;
  const CompliantNormalLaw a = compliant_normal_law(p, touching, -1e-4, -0.01, 0.0);
  EXPECT_TRUE(a.touching);
  EXPECT_DOUBLE_EQ(a.force, 2e5 * 1e-4 + 2e3 * 0.01);
  const double eps = 1e-9;
  EXPECT_NEAR((compliant_normal_law(p, touching, -1e-4 + eps, -0.01, 0).force -
               compliant_normal_law(p, touching, -1e-4 - eps, -0.01, 0).force) / (2 * eps), a.d_gap, 1e-4 * 2e5);
  EXPECT_NEAR((compliant_normal_law(p, touching, -1e-4, -0.01 + eps, 0).force -
               compliant_normal_law(p, touching, -1e-4, -0.01 - eps, 0).force) / (2 * eps), a.d_gap_rate, 1e-4 * 2e3);
  EXPECT_EQ(compliant_normal_law(p, touching, -1e-4, 0.02, 0.0).force, 0.0);  // −Kφ − Dφ̇ < 0: lost
  CompliantContactRecord relaxing;
  relaxing.phase = CompliantPhase::Relaxing;
  relaxing.z0 = -1e-3;
  relaxing.t0 = 1.0;
  const double tau = p.damping / p.stiffness;
  EXPECT_NEAR(relaxing.surface(p, 1.0 + tau), -1e-3 / std::exp(1.0), 1e-15);
  EXPECT_EQ(compliant_normal_law(p, relaxing, -0.5e-3, -0.01, 1.0).force, 0.0);  // above z(t₀) = −1 mm
  const CompliantNormalLaw b = compliant_normal_law(p, relaxing, -0.5e-3, -0.01, 1.0 + tau);  // z has risen past it
  EXPECT_TRUE(b.touching);
  EXPECT_DOUBLE_EQ(b.force, 2e5 * 0.5e-3 + 2e3 * 0.01);
  EXPECT_EQ(compliant_normal_law(p, relaxing, -0.5e-3, 0.2, 1.0 + tau).force, 0.0);  // below but leaving fast
}

// ---- state bookkeeping --------------------------------------------------------------------

TEST(CompliantState, SynchronizeByIdAndCarryXAlongATurningNormal) {
  // A small ball on a fixed spherical post: the contact normal turns with the
  // ball's position on the post. x committed at normal n1 and re-expressed at
  // n2 must be the same 3-D displacement rotated by the minimal rotation.
  const double R = 0.5, r = 0.05, mass = 0.5;
  const FreeBody ball = free_ball(mass, r);
  EnvironmentShape post;
  post.name = "post";
  post.geometry = Sphere{R};
  const std::vector<EnvironmentShape> env{post};
  const auto place = [&](double angle) {
    VectorX q = neutral_configuration(ball.model);
    const Vec3 dir(std::sin(angle), 0.3 * std::sin(angle), std::cos(angle));
    set_pose(ball.model, q, ball.body, Mat3::Identity(), dir.normalized() * (R + r - 1e-4));
    return q;
  };
  const VectorX q1 = place(0.2), q2 = place(0.5);
  const std::vector<Contact> contacts = detect(ball.model, q1, env, 0.01);
  ASSERT_EQ(contacts.size(), 1u);
  const std::vector<CompliantParameters> params{CompliantParameters{}};
  CompliantContactState state;
  state.synchronize(contacts);
  EXPECT_EQ(state.record(0).id, contacts[0].id);
  EXPECT_EQ(state.record(0).phase, CompliantPhase::Relaxing);
  EXPECT_EQ(state.record(0).z0, 0.0);
  EXPECT_TRUE(state.displacements().isZero(0.0));

  Data d(ball.model);
  const VectorX v = VectorX::Zero(6);
  const Eigen::Vector2d x1(2e-5, -1e-5);
  forward_kinematics(ball.model, d, q1, v);
  state.update(ball.model, d, q1, contacts, params, x1, 0.0);
  const Vec3 n1 = state.record(0).reference_normal;
  EXPECT_EQ(state.record(0).phase, CompliantPhase::Touching);
  EXPECT_LT((state.displacements() - x1).norm(), 1e-15);

  forward_kinematics(ball.model, d, q2, v);
  CompliantContactForces f;
  VectorX tau(6);
  compliant_contact_forces(ball.model, d, q2, contacts, params, state, state.displacements(), 0.0, tau, &f);
  const Vec3 n2 = f.contacts[0].normal;
  ASSERT_LT(n1.dot(n2), 0.99);  // the normal has turned by several degrees
  Vec3 a1, a2, b1, b2;
  tangent_basis(n1, a1, a2);
  tangent_basis(n2, b1, b2);
  const Vec3 X1 = x1.x() * a1 + x1.y() * a2;
  const Vec3 X2 = Eigen::Quaterniond::FromTwoVectors(n1, n2) * X1;
  const Eigen::Vector2d expected(b1.dot(X2), b2.dot(X2));
  EXPECT_LT((f.contacts[0].displacement - expected).norm(), 1e-12 * x1.norm());
  // Committing moves x into the new basis without changing the force law's input.
  state.update(ball.model, d, q2, contacts, params, state.displacements(), 0.0);
  EXPECT_LT((state.displacements() - expected).norm(), 1e-12 * x1.norm());
  EXPECT_LT((state.record(0).reference_normal - n2).norm(), 1e-15);
  VectorX tau2(6);
  CompliantContactForces f2;
  compliant_contact_forces(ball.model, d, q2, contacts, params, state, state.displacements(), 0.0, tau2, &f2);
  EXPECT_LT((tau2 - tau).norm(), 1e-9 * tau.norm());

  // τ_c = T f_n + D f_t (11.25 and its tangential counterpart).
  MatrixX T(6, 1), Dm(6, 2);
  VectorX Tdv(1), Ddv(2);
  contact_jacobian(ball.model, d, contacts, T, Tdv);
  tangent_jacobian(ball.model, d, contacts, 2, Dm, Ddv);
  const VectorX expected_tau = T.col(0) * f2.contacts[0].normal_force + Dm * f2.contacts[0].friction;
  EXPECT_LT((tau2 - expected_tau).norm(), 1e-12 * expected_tau.norm());

  // Ids that disappear are dropped, new ones start rested.
  std::vector<Contact> other = contacts;
  other[0].id += 1;
  other.push_back(contacts[0]);
  state.synchronize(other);
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state.record(0).phase, CompliantPhase::Relaxing);
  EXPECT_TRUE(state.displacements().head<2>().isZero(0.0));
  EXPECT_EQ(state.record(1).phase, CompliantPhase::Touching);
  EXPECT_LT((state.displacements().tail<2>() - expected).norm(), 1e-12 * x1.norm());
  state.synchronize({});
  EXPECT_EQ(state.size(), 0u);
}

TEST(CompliantState, InputsAreChecked) {
  const FreeBody box = free_box(1.0, Vec3(0.2, 0.2, 0.1));
  VectorX q = neutral_configuration(box.model);
  set_pose(box.model, q, box.body, Mat3::Identity(), Vec3(0, 0, 0.049));
  const std::vector<Contact> contacts = detect(box.model, q, {ground_plane()}, 0.01);
  ASSERT_EQ(contacts.size(), 4u);
  Data d(box.model);
  forward_kinematics(box.model, d, q, VectorX::Zero(6));
  CompliantContactState state;
  state.synchronize(contacts);
  std::vector<CompliantParameters> params(4);
  VectorX tau(6), x = VectorX::Zero(8);
  EXPECT_NO_THROW(compliant_contact_forces(box.model, d, q, contacts, params, state, x, 0.0, tau));
  EXPECT_THROW(compliant_contact_forces(box.model, d, q, contacts, {CompliantParameters{}}, state, x, 0.0, tau),
               ArgumentError);
  params[2].stiffness = -1.0;
  EXPECT_THROW(compliant_contact_forces(box.model, d, q, contacts, params, state, x, 0.0, tau), ArgumentError);
  params[2] = CompliantParameters{};
  params[1].mu = kInf;  // allowed
  EXPECT_NO_THROW(compliant_contact_forces(box.model, d, q, contacts, params, state, x, 0.0, tau));
  params[1].damping = std::nan("");
  EXPECT_THROW(compliant_contact_forces(box.model, d, q, contacts, params, state, x, 0.0, tau), ArgumentError);
  params[1] = CompliantParameters{};
  EXPECT_THROW(compliant_contact_forces(box.model, d, q, contacts, params, state, VectorX::Zero(6), 0.0, tau),
               ArgumentError);
  std::vector<Contact> fewer(contacts.begin(), contacts.begin() + 3);
  EXPECT_THROW(compliant_contact_forces(box.model, d, q, fewer, std::vector<CompliantParameters>(3), state,
                                        VectorX::Zero(6), 0.0, tau),
               ArgumentError);
  std::vector<Contact> reordered{contacts[1], contacts[0], contacts[2], contacts[3]};
  EXPECT_THROW(state.update(box.model, d, q, reordered, params, x, 0.0), ArgumentError);
}

// ---- allocation ---------------------------------------------------------------------------

TEST(CompliantAllocation, NoneAfterSizing) {
  const FreeBody box = free_box(1.0, Vec3(0.2, 0.2, 0.1));
  VectorX q = neutral_configuration(box.model);
  set_pose(box.model, q, box.body, Mat3::Identity(), Vec3(0, 0, 0.0499));
  VectorX v = VectorX::Zero(6);
  set_velocity(box.model, v, box.body, Mat3::Identity(), Vec3(0.3, 0, -0.01), Vec3(0, 0.2, 0));
  const std::vector<Contact> contacts = detect(box.model, q, {ground_plane()}, 0.01);
  ASSERT_EQ(contacts.size(), 4u);
  const std::vector<CompliantParameters> params(4);
  Data d(box.model);
  CompliantContactState state(8);
  state.synchronize(contacts);
  CompliantContactForces forces;
  forces.resize(box.model.nv(), 8);
  VectorX tau = VectorX::Zero(6), tau_c(6), x = VectorX::Constant(8, 1e-6), x_dot(8);
  forward_dynamics_compliant(box.model, d, q, v, tau, contacts, params, state, x, 0.0, forces);
  const long n = allocations_in([&] {
    forward_kinematics(box.model, d, q, v);
    compliant_contact_forces(box.model, d, q, contacts, params, state, x, 0.1, tau_c, &forces);
    compliant_contact_forces(box.model, d, q, contacts, params, state, x, 0.1, tau_c);
    compliant_state_derivative(box.model, d, q, contacts, params, state, x, 0.1, x_dot);
    forward_dynamics_compliant(box.model, d, q, v, tau, contacts, params, state, x, 0.1, forces);
    state.update(box.model, d, q, contacts, params, x, 0.1);
    state.synchronize(contacts);
  });
  EXPECT_EQ(n, 0);
  EXPECT_GT(forces.contacts[0].normal_force, 0.0);
}
