// The event-driven integrator in a local chart of each free-flyer: the ODE
// is solved for the displacement from the configuration at the last restart
// (the base), not for the quaternion itself. See free_flyer_chart.hpp.
#include "sim/free_flyer_chart.hpp"

#include <cmath>

#include "plume/spatial.hpp"

namespace plume::detail {

namespace {

// exp of a rotation vector as a unit quaternion; at φ = 0 exactly (1, 0, 0, 0).
Eigen::Quaterniond rotation_exp(const Vec3& phi) {
  const double th2 = phi.squaredNorm();
  double c, s;  // cos(θ/2), sin(θ/2)/θ
  if (th2 < 1e-6) {
    c = 1.0 - th2 / 8.0 + th2 * th2 / 384.0;
    s = 0.5 - th2 / 48.0 + th2 * th2 / 3840.0;
  } else {
    const double th = std::sqrt(th2);
    c = std::cos(0.5 * th);
    s = std::sin(0.5 * th) / th;
  }
  return Eigen::Quaterniond(c, s * phi.x(), s * phi.y(), s * phi.z());
}

// J_r(φ)⁻¹, the inverse right Jacobian of SO(3): for R = R_b exp(φ) and a
// body angular velocity ω, φ̇ = J_r(φ)⁻¹ ω = ω + ½ φ × ω + c φ × (φ × ω),
// c = 1/θ² − cot(θ/2)/(2θ). For ω parallel to φ, φ̇ = ω exactly.
Vec3 inverse_right_jacobian_times(const Vec3& phi, const Vec3& w) {
  const double th2 = phi.squaredNorm();
  double c;
  if (th2 < 1e-4) {
    c = 1.0 / 12.0 + th2 / 720.0 + th2 * th2 / 30240.0;
  } else {
    const double th = std::sqrt(th2);
    c = 1.0 / th2 - 0.5 / (th * std::tan(0.5 * th));
  }
  const Vec3 pw = phi.cross(w);
  return w + 0.5 * pw + c * phi.cross(pw);
}

}  // namespace

FreeFlyerChart::FreeFlyerChart(std::unique_ptr<DenseStepper> inner, const Model& model)
    : inner_(std::move(inner)), nq_(model.nq()), nv_(model.nv()) {
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    if (j.type == JointType::FreeFlyer) joints_.push_back({j.q_index, j.v_index, Mat3::Identity()});
  }
  const int n = nq_ + nv_;
  base_ = VectorX::Zero(nq_);
  z_ = VectorX::Zero(n);
  current_ = VectorX::Zero(n);
  y_ = VectorX::Zero(n);
  dy_ = VectorX::Zero(n);
  inner_system_ = [this](const VectorX& z, VectorX& dz, double t) { chart_rhs(z, dz, t); };
}

bool FreeFlyerChart::applies_to(const Model& model) {
  for (int i = 1; i < model.nbodies(); ++i) {
    if (model.joint(i).type == JointType::FreeFlyer) return true;
  }
  return false;
}

void FreeFlyerChart::initialize(const VectorX& y, double t, double dt) {
  current_ = y;
  active_ = next_active_;
  rebase(t, dt);
}

void FreeFlyerChart::rebase(double t, double dt) {
  base_ = current_.head(nq_);
  z_ = current_;
  if (!active_) {
    inner_->initialize(z_, t, dt);
    return;
  }
  for (FreeFlyerJoint& j : joints_) {
    const Eigen::Quaterniond rb(base_(j.q + 6), base_(j.q + 3), base_(j.q + 4), base_(j.q + 5));
    j.base_rotation = rb.normalized().toRotationMatrix();
    z_.segment<7>(j.q).setZero();  // δp, δθ, and the unused fourth quaternion slot
    // The linear velocity in the base frame: exp(0) = I, so it is v itself.
  }
  inner_->initialize(z_, t, dt);
}

// z = (q-part: δp in the base frame, δθ, 0 per free-flyer; other joints as q)
//     (v-part: ω in the body, u = exp(δθ) v_lin in the base frame; other joints as v)
void FreeFlyerChart::to_state(const VectorX& z, VectorX& y) const {
  y = z;
  if (!active_) return;
  for (const FreeFlyerJoint& j : joints_) {
    const Vec3 dp = z.segment<3>(j.q);
    const Vec3 dth = z.segment<3>(j.q + 3);
    const Eigen::Quaterniond e = rotation_exp(dth);
    const Eigen::Quaterniond rb(base_(j.q + 6), base_(j.q + 3), base_(j.q + 4), base_(j.q + 5));
    const Eigen::Quaterniond r = rb * e;
    y.segment<3>(j.q) = base_.segment<3>(j.q) + j.base_rotation * dp;
    y(j.q + 3) = r.x();
    y(j.q + 4) = r.y();
    y(j.q + 5) = r.z();
    y(j.q + 6) = r.w();
    const Vec3 u = z.segment<3>(nq_ + j.v + 3);
    y.segment<3>(nq_ + j.v + 3) = e.toRotationMatrix().transpose() * u;
  }
}

void FreeFlyerChart::chart_rhs(const VectorX& z, VectorX& dz, double t) {
  to_state(z, y_);
  (*outer_)(y_, dy_, t);
  dz = dy_;
  if (!active_) return;
  for (const FreeFlyerJoint& j : joints_) {
    const Vec3 dth = z.segment<3>(j.q + 3);
    const Mat3 E = rotation_exp(dth).toRotationMatrix();
    const Vec3 w = y_.segment<3>(nq_ + j.v);
    const Vec3 v = y_.segment<3>(nq_ + j.v + 3);
    dz.segment<3>(j.q) = z.segment<3>(nq_ + j.v + 3);  // δṗ = u
    dz.segment<3>(j.q + 3) = inverse_right_jacobian_times(dth, w);
    dz(j.q + 6) = 0.0;
    // u = E v with Ė = E ω×: u̇ = E (v̇ + ω × v).
    dz.segment<3>(nq_ + j.v + 3) = E * (Vec3(dy_.segment<3>(nq_ + j.v + 3)) + w.cross(v));
  }
}

std::pair<double, double> FreeFlyerChart::do_step(OdeSystem& system) {
  // A long flight without restarts: move the base before the chart's angle
  // nears π (the inverse Jacobian's singularity at 2π).
  for (const FreeFlyerJoint& j : joints_) {
    if (!active_) break;
    if (inner_->current_state().segment<3>(j.q + 3).squaredNorm() > kRebaseAngle * kRebaseAngle) {
      rebase(inner_->current_time(), inner_->current_time_step());
      break;
    }
  }
  outer_ = &system;
  const auto span = inner_->do_step(inner_system_);
  to_state(inner_->current_state(), current_);
  return span;
}

void FreeFlyerChart::calc_state(double t, VectorX& y) {
  inner_->calc_state(t, z_);
  y.resize(nq_ + nv_);
  to_state(z_, y);
}

}  // namespace plume::detail
