#include "plume/configuration.hpp"

#include <cmath>
#include <random>
#include <sstream>

#include "plume/error.hpp"

namespace plume {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Uniform double in [0, 1) from a 64-bit engine, identical on every platform
// (std::uniform_real_distribution is implementation-defined).
double uniform01(std::mt19937_64& gen) { return static_cast<double>(gen() >> 11) * 0x1.0p-53; }

double uniform(std::mt19937_64& gen, double lo, double hi) { return lo + (hi - lo) * uniform01(gen); }

Eigen::Quaterniond quat_at(const Eigen::Ref<const VectorX>& q, int i) {
  return Eigen::Quaterniond(q(i + 6), q(i + 3), q(i + 4), q(i + 5));  // (w, x, y, z)
}

void set_quat(Eigen::Ref<VectorX> q, int i, const Eigen::Quaterniond& r) {
  q(i + 3) = r.x();
  q(i + 4) = r.y();
  q(i + 5) = r.z();
  q(i + 6) = r.w();
}

// Left Jacobian of SO(3), V(φ) = I + (1−cos θ)/θ² φ× + (θ − sin θ)/θ³ φ×²: the
// translation part of the SE(3) exponential is V(ω) v.
Mat3 so3_left_jacobian(const Vec3& phi) {
  const double th2 = phi.squaredNorm();
  const double th = std::sqrt(th2);
  double a, b;
  if (th < 1e-4) {
    a = 0.5 - th2 / 24.0;
    b = 1.0 / 6.0 - th2 / 120.0;
  } else {
    a = (1.0 - std::cos(th)) / th2;
    b = (th - std::sin(th)) / (th2 * th);
  }
  const Mat3 K = skew(phi);
  return Mat3::Identity() + a * K + b * K * K;
}

// V(φ)⁻¹ = I − ½ φ× + (1/θ²)(1 − θ sin θ / (2(1 − cos θ))) φ×².
Mat3 so3_left_jacobian_inverse(const Vec3& phi) {
  const double th2 = phi.squaredNorm();
  const double th = std::sqrt(th2);
  double c;
  if (th < 1e-4) {
    c = 1.0 / 12.0 + th2 / 720.0;
  } else {
    c = (1.0 - th * std::sin(th) / (2.0 * (1.0 - std::cos(th)))) / th2;
  }
  const Mat3 K = skew(phi);
  return Mat3::Identity() - 0.5 * K + c * K * K;
}

Eigen::Quaterniond quat_exp(const Vec3& phi) {
  const double th = phi.norm();
  if (th < 1e-12) {
    Eigen::Quaterniond r(1.0, 0.5 * phi.x(), 0.5 * phi.y(), 0.5 * phi.z());
    return r.normalized();
  }
  return Eigen::Quaterniond(Eigen::AngleAxisd(th, phi / th));
}

// Rotation vector of a unit quaternion, shortest way round.
Vec3 quat_log(Eigen::Quaterniond r) {
  if (r.w() < 0.0) r.coeffs() = -r.coeffs();
  const Vec3 u = r.vec();
  const double s = u.norm();
  if (s < 1e-12) return 2.0 * u;
  const double th = 2.0 * std::atan2(s, r.w());
  return th / s * u;
}

void check_same_model_size(const Model& model, const VectorX& q, const char* what) {
  check_vector(q, model.nq(), what);
}

}  // namespace

void check_vector(const Eigen::Ref<const VectorX>& x, Eigen::Index expected, const char* what) {
  if (x.size() != expected) {
    std::ostringstream msg;
    msg << what << " has " << x.size() << " entries, expected " << expected;
    throw ArgumentError(msg.str());
  }
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x(i))) {
      std::ostringstream msg;
      msg << what << "[" << i << "] is " << x(i) << " (must be finite)";
      throw ArgumentError(msg.str());
    }
  }
}

void check_configuration(const Model& model, const Eigen::Ref<const VectorX>& q, const char* what) {
  check_vector(q, model.nq(), what);
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    if (j.type != JointType::FreeFlyer) continue;
    const double n = q.segment<4>(j.q_index + 3).norm();
    if (std::abs(n - 1.0) > 1e-6) {
      std::ostringstream msg;
      msg << what << "[" << j.q_index + 3 << ".." << j.q_index + 6 << "], the quaternion of joint '"
          << j.name << "', has norm " << n << " (must be 1)";
      throw ArgumentError(msg.str());
    }
  }
}

VectorX neutral_configuration(const Model& model) {
  VectorX q = VectorX::Zero(model.nq());
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    if (j.type == JointType::FreeFlyer) q(j.q_index + 6) = 1.0;
    if (j.nq == 1) {
      // Inside the limits when zero is not.
      const double lo = model.lower_position_limit()(j.q_index);
      const double hi = model.upper_position_limit()(j.q_index);
      if (lo > 0.0 || hi < 0.0) q(j.q_index) = std::isfinite(lo) ? lo : hi;
    }
  }
  return q;
}

VectorX random_configuration(const Model& model, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  VectorX q = VectorX::Zero(model.nq());
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    const int k = j.q_index;
    switch (j.type) {
      case JointType::Revolute:
      case JointType::Continuous:
      case JointType::Prismatic: {
        const double default_range = j.type == JointType::Prismatic ? 1.0 : kPi;
        double lo = model.lower_position_limit()(k);
        double hi = model.upper_position_limit()(k);
        if (!std::isfinite(lo)) lo = std::isfinite(hi) ? hi - 2.0 * default_range : -default_range;
        if (!std::isfinite(hi)) hi = lo + 2.0 * default_range;
        q(k) = uniform(gen, lo, hi);
        break;
      }
      case JointType::Planar:
        q(k) = uniform(gen, -1.0, 1.0);
        q(k + 1) = uniform(gen, -1.0, 1.0);
        q(k + 2) = uniform(gen, -kPi, kPi);
        break;
      case JointType::FreeFlyer: {
        for (int a = 0; a < 3; ++a) q(k + a) = uniform(gen, -1.0, 1.0);
        // Shoemake's uniform random rotation.
        const double u1 = uniform01(gen), u2 = uniform01(gen), u3 = uniform01(gen);
        const double s1 = std::sqrt(1.0 - u1), s2 = std::sqrt(u1);
        const Eigen::Quaterniond r(s2 * std::cos(2 * kPi * u3), s1 * std::sin(2 * kPi * u2),
                                   s1 * std::cos(2 * kPi * u2), s2 * std::sin(2 * kPi * u3));
        set_quat(q, k, r.normalized());
        break;
      }
      case JointType::Fixed: break;
    }
  }
  return q;
}

VectorX integrate(const Model& model, const VectorX& q, const VectorX& v, double dt) {
  VectorX out;
  integrate(model, q, v, dt, out);
  return out;
}

void integrate(const Model& model, const VectorX& q, const VectorX& v, double dt, VectorX& out) {
  check_same_model_size(model, q, "q");
  check_vector(v, model.nv(), "v");
  if (!std::isfinite(dt)) throw ArgumentError("dt must be finite");
  if (&v == &out) throw ArgumentError("integrate: out must not be v");
  if (&out != &q) out = q;
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    const int iq = j.q_index, iv = j.v_index;
    if (j.type == JointType::FreeFlyer) {
      const Eigen::Quaterniond r = quat_at(q, iq).normalized();
      const Vec3 w = dt * v.segment<3>(iv);
      const Vec3 lin = dt * v.segment<3>(iv + 3);
      // Constant body twist: (R, p) ← (R, p) · exp([ω; v] dt).
      out.segment<3>(iq) = q.segment<3>(iq) + r * (so3_left_jacobian(w) * lin);
      set_quat(out, iq, (r * quat_exp(w)).normalized());
    } else {
      out.segment(iq, j.nq) += dt * v.segment(iv, j.nv);
    }
  }
}

VectorX difference(const Model& model, const VectorX& q0, const VectorX& q1) {
  check_same_model_size(model, q0, "q0");
  check_same_model_size(model, q1, "q1");
  VectorX d(model.nv());
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    const int iq = j.q_index, iv = j.v_index;
    if (j.type == JointType::FreeFlyer) {
      const Eigen::Quaterniond r0 = quat_at(q0, iq).normalized();
      const Eigen::Quaterniond r1 = quat_at(q1, iq).normalized();
      const Vec3 w = quat_log(r0.conjugate() * r1);
      const Vec3 t = r0.conjugate() * (q1.segment<3>(iq) - q0.segment<3>(iq));
      d.segment<3>(iv) = w;
      d.segment<3>(iv + 3) = so3_left_jacobian_inverse(w) * t;
    } else {
      d.segment(iv, j.nv) = q1.segment(iq, j.nq) - q0.segment(iq, j.nq);
    }
  }
  return d;
}

void configuration_derivative(const Model& model, const Eigen::Ref<const VectorX>& q,
                              const Eigen::Ref<const VectorX>& v, Eigen::Ref<VectorX> qdot) {
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    const int iq = j.q_index, iv = j.v_index;
    if (j.type == JointType::FreeFlyer) {
      const Eigen::Quaterniond r = quat_at(q, iq);
      const Vec3 w = v.segment<3>(iv);
      qdot.segment<3>(iq) = r * Vec3(v.segment<3>(iv + 3));  // ṗ = R v
      // ṙ = ½ r ⊗ (0, ω)
      const Vec3 u = r.vec();
      qdot.segment<3>(iq + 3) = 0.5 * (r.w() * w + u.cross(w));
      qdot(iq + 6) = -0.5 * u.dot(w);
    } else {
      qdot.segment(iq, j.nq) = v.segment(iv, j.nv);
    }
  }
}

void normalize_configuration(const Model& model, Eigen::Ref<VectorX> q) {
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    if (j.type == JointType::FreeFlyer) q.segment<4>(j.q_index + 3).normalize();
  }
}

}  // namespace plume
