#include "plume/model_builder.hpp"

#include <atomic>
#include <cmath>
#include <set>
#include <sstream>

#include "inertia_check.hpp"
#include "names.hpp"
#include "plume/configuration.hpp"
#include "plume/error.hpp"

namespace plume {

// ---- JointSpec factories -------------------------------------------------------

JointSpec JointSpec::revolute(std::string name, const Vec3& axis, double lower, double upper) {
  JointSpec j;
  j.name = std::move(name);
  j.type = JointType::Revolute;
  j.axis = axis;
  j.lower = lower;
  j.upper = upper;
  return j;
}

JointSpec JointSpec::continuous(std::string name, const Vec3& axis) {
  JointSpec j;
  j.name = std::move(name);
  j.type = JointType::Continuous;
  j.axis = axis;
  return j;
}

JointSpec JointSpec::prismatic(std::string name, const Vec3& axis, double lower, double upper) {
  JointSpec j;
  j.name = std::move(name);
  j.type = JointType::Prismatic;
  j.axis = axis;
  j.lower = lower;
  j.upper = upper;
  return j;
}

JointSpec JointSpec::planar(std::string name) {
  JointSpec j;
  j.name = std::move(name);
  j.type = JointType::Planar;
  return j;
}

JointSpec JointSpec::free_flyer(std::string name) {
  JointSpec j;
  j.name = std::move(name);
  j.type = JointType::FreeFlyer;
  return j;
}

// ---- ModelBuilder --------------------------------------------------------------

namespace {

std::atomic<std::uint64_t> next_uid{1};

/// A tree rotation within 1e-10 rad of a signed permutation (a rotation by
/// multiples of 90° about the axes) becomes that permutation exactly, so that
/// the kernels take their permuted (or identity) paths. Published URDFs write
/// quarter turns as 1.5707963267948966 (cos = 6.1e-17) but also as the rounded
/// 1.57079632679 (4.9e-12 rad off); both are snapped, while an angle 1e-9 off
/// (1.570796325) or more is kept as written. The angle is that of Pᵀ E, from its
/// skew part (|vee(R − Rᵀ)| / 2 = sin θ), so three rpy angles each within the
/// tolerance may add up beyond it. Returns whether E is (now) a permutation.
bool snap_signed_permutation(Mat3& E) {
  constexpr double kMaxAngle = 1e-10;
  Mat3 P = Mat3::Zero();
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      const double e = E(r, c);
      if (std::abs(e) <= 1e-6) continue;
      if (std::abs(std::abs(e) - 1.0) > 1e-6) return false;
      P(r, c) = e > 0.0 ? 1.0 : -1.0;
    }
  }
  for (int r = 0; r < 3; ++r) {  // one ±1 per row and per column
    if (P.row(r).cwiseAbs().sum() != 1.0 || P.col(r).cwiseAbs().sum() != 1.0) return false;
  }
  const Mat3 R = P.transpose() * E;
  const Vec3 w(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1));
  if (!(0.5 * w.norm() <= kMaxAngle)) return false;
  E = P;
  return true;
}

bool finite_transform(const Transform& X) { return X.E().allFinite() && X.r().allFinite(); }

bool orthonormal(const Mat3& E) {
  return (E * E.transpose() - Mat3::Identity()).cwiseAbs().maxCoeff() < 1e-9 &&
         E.determinant() > 0.0;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

JointKind kernel_kind(JointType type, const Vec3& axis) {
  switch (type) {
    case JointType::Revolute:
    case JointType::Continuous: {
      const Vec3 a = axis.normalized();
      if (a == Vec3::UnitX()) return JointKind::RevoluteX;
      if (a == Vec3::UnitY()) return JointKind::RevoluteY;
      if (a == Vec3::UnitZ()) return JointKind::RevoluteZ;
      return JointKind::RevoluteAxis;
    }
    case JointType::Prismatic: {
      const Vec3 a = axis.normalized();
      if (a == Vec3::UnitX()) return JointKind::PrismaticX;
      if (a == Vec3::UnitY()) return JointKind::PrismaticY;
      if (a == Vec3::UnitZ()) return JointKind::PrismaticZ;
      return JointKind::Prismatic;
    }
    case JointType::Planar: return JointKind::Planar;
    case JointType::FreeFlyer: return JointKind::FreeFlyer;
    case JointType::Fixed: return JointKind::None;
  }
  return JointKind::None;
}

}  // namespace

ModelBuilder::ModelBuilder(std::string name) : name_(std::move(name)) {
  BodyRecord world;
  world.name = "world";
  world.joint.name = "world";
  world.joint.type = JointType::Fixed;
  bodies_.push_back(world);
}

int ModelBuilder::add_body(const std::string& name, int parent, const JointSpec& joint,
                           const Transform& Xtree, const RigidInertia& inertia) {
  if (parent < 0 || parent >= nbodies()) {
    std::ostringstream msg;
    msg << "body " << quoted(name) << ": parent index " << parent << " does not exist (model has "
        << nbodies() << " bodies)";
    throw ModelError(msg.str());
  }
  if (joint.type == JointType::Fixed) {
    throw ModelError("body " + quoted(name) + ": joint " + quoted(joint.name) +
                     " is fixed; merge the body into its parent with add_inertia and add_frame");
  }
  BodyRecord b;
  b.name = name;
  b.parent = parent;
  b.joint = joint;
  b.Xtree = Xtree;
  b.inertia = inertia;
  bodies_.push_back(b);
  return nbodies() - 1;
}

void ModelBuilder::add_inertia(int body, const RigidInertia& inertia, const std::string& source) {
  if (body < 0 || body >= nbodies()) {
    throw ModelError("add_inertia: body index " + std::to_string(body) + " does not exist");
  }
  bodies_[body].inertia += inertia;
  if (!source.empty()) bodies_[body].sources.push_back(source);
}

int ModelBuilder::add_frame(const std::string& name, int body, const Transform& placement) {
  if (body < 0 || body >= nbodies()) {
    throw ModelError("frame " + quoted(name) + ": body index " + std::to_string(body) +
                     " does not exist");
  }
  frames_.push_back(Frame{name, body, placement});
  return static_cast<int>(frames_.size()) - 1;
}

void ModelBuilder::add_collision(const CollisionShape& shape) {
  if (shape.body < 0 || shape.body >= nbodies()) {
    throw ModelError("collision shape " + quoted(shape.name) + ": body index " +
                     std::to_string(shape.body) + " does not exist");
  }
  collisions_.push_back(shape);
}

std::vector<int> ModelBuilder::append_model(const Model& model, int parent,
                                            const Transform& placement,
                                            const std::string& prefix, bool with_collisions) {
  if (parent < 0 || parent >= nbodies()) {
    throw ModelError("append_model: parent index " + std::to_string(parent) + " does not exist");
  }
  std::vector<int> map(model.nbodies());
  map[0] = parent;
  // Mass welded to the model's world: placement maps parent → model-world coordinates.
  if (model.inertia(0).mass() > 0.0) add_inertia(parent, placement.apply_transpose(model.inertia(0)));
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = model.joint(i);
    BodyRecord b;
    b.name = prefix + model.body_name(i);
    b.parent = map[model.parent(i)];
    b.joint.name = prefix + j.name;
    b.joint.type = j.type;
    b.joint.axis = j.axis;
    if (j.nv == 1) {
      b.joint.lower = model.lower_position_limit()(j.q_index);
      b.joint.upper = model.upper_position_limit()(j.q_index);
      b.joint.velocity = model.velocity_limit()(j.v_index);
      b.joint.effort = model.effort_limit()(j.v_index);
      b.joint.damping = model.damping()(j.v_index);
      b.joint.friction = model.friction()(j.v_index);
    }
    b.Xtree = model.parent(i) == 0 ? model.Xtree(i) * placement : model.Xtree(i);
    b.inertia = model.inertia(i);
    b.inertia_checked = true;  // by the policy `model` was built with
    bodies_.push_back(b);
    map[i] = nbodies() - 1;
  }
  for (const Frame& f : model.frames()) {
    Frame g = f;
    g.name = prefix + f.name;
    g.body = map[f.body];
    if (f.body == 0) g.placement = f.placement * placement;
    frames_.push_back(g);
  }
  for (const CollisionShape& s : model.collisions()) {
    if (!with_collisions) break;
    CollisionShape c = s;
    c.name = prefix + s.name;
    c.link = prefix + s.link;
    c.body = map[s.body];
    if (s.body == 0) c.placement = s.placement * placement;
    collisions_.push_back(c);
  }
  for (const auto& [a, b] : model.disabled_collisions()) disabled_collisions_.push_back({prefix + a, prefix + b, {}});
  const std::string label = prefix.empty() ? std::string() : prefix.substr(0, prefix.size() - (prefix.back() == '/' ? 1 : 0));
  for (const std::string& w : model.warnings()) warnings_.push_back(label.empty() ? w : "model '" + label + "': " + w);
  return map;
}

InertiaPolicy parse_inertia_policy(const std::string& text) {
  if (text == "strict") return InertiaPolicy::Strict;
  if (text == "warn") return InertiaPolicy::Warn;
  if (text == "repair") return InertiaPolicy::Repair;
  throw Error("unknown inertia policy '" + text + "' (expected strict, warn or repair)");
}

const char* to_string(InertiaPolicy policy) {
  switch (policy) {
    case InertiaPolicy::Strict: return "strict";
    case InertiaPolicy::Warn: return "warn";
    case InertiaPolicy::Repair: return "repair";
  }
  return "unknown";
}

namespace {

std::string describe_body(const std::string& name, const std::vector<std::string>& sources) {
  std::string s = "body " + quoted(name);
  if (sources.empty() || (sources.size() == 1 && sources[0] == name)) return s;
  s += " (from ";
  for (std::size_t k = 0; k < sources.size(); ++k) s += (k ? ", " : "") + sources[k];
  return s + ")";
}

std::string join_problems(const std::vector<std::string>& problems, const char* what) {
  if (problems.size() == 1) return problems[0];
  std::string s = std::to_string(problems.size()) + " " + what + ": ";
  for (std::size_t k = 0; k < problems.size(); ++k) s += (k ? "; " : "") + problems[k];
  return s;
}

}  // namespace

// Mass properties of the bodies the algorithms see (after merging). Errors
// that break the algorithms are always refused; the triangle inequality and
// placeholder masses follow the inertia policy. Every culprit is collected
// before anything is thrown.
void ModelBuilder::check_inertias(Model& m) const {
  const int nb = nbodies();
  std::vector<std::string> errors, governed;
  const auto report = [&](std::string what, const char* accepted) {
    if (inertia_policy_ == InertiaPolicy::Strict) governed.push_back(std::move(what));
    else m.warnings_.push_back(what + accepted);
  };
  for (int i = 0; i < nb; ++i) {
    const BodyRecord& b = bodies_[i];
    const RigidInertia& I = b.inertia;
    const std::string who = describe_body(b.name, b.sources);
    if (!std::isfinite(I.mass()) || !I.h().allFinite() || !I.Ibar().allFinite()) {
      errors.push_back(who + ": inertia has a non-finite entry");
      continue;
    }
    const Mat3 Ic = I.inertia_about_com();
    const std::string why = detail::inertia_problem(I.mass(), Ic);
    if (!why.empty()) {
      errors.push_back(who + ": " + why);
      continue;
    }
    if (i == 0 || b.inertia_checked) continue;  // the world's welded mass never moves
    const detail::PrincipalInertia pi = detail::principal_inertia(Ic);
    const Vec3& p = pi.moments;
    const double deficit = detail::triangle_deficit(p);
    if (deficit == 0.0) continue;
    std::ostringstream msg;
    msg << who << ": principal moments of inertia " << p(0) << ", " << p(1) << ", " << p(2)
        << " kg m² violate the triangle inequality (" << p(0) << " + " << p(1) << " falls short of "
        << p(2) << " by " << deficit << ")";
    if (inertia_policy_ == InertiaPolicy::Repair) {
      const Vec3 fixed(p(0), p(2) - p(0), p(2));
      const Mat3 Ic_fixed = pi.axes * fixed.asDiagonal() * pi.axes.transpose();
      m.inertia_[i] = RigidInertia::from_mass_com_inertia(I.mass(), I.com(), 0.5 * (Ic_fixed + Ic_fixed.transpose()));
      msg << "; repaired: the middle principal moment raised from " << p(1) << " to " << fixed(1);
      m.warnings_.push_back(msg.str());
    } else {
      report(msg.str(), "; loaded as written (inertia=\"repair\" raises the middle moment to make it physical)");
    }
  }

  std::vector<double> subtree_mass(nb, 0.0);
  for (int i = nb - 1; i >= 0; --i) {
    subtree_mass[i] += bodies_[i].inertia.mass();
    if (i > 0) subtree_mass[bodies_[i].parent] += subtree_mass[i];
  }
  const double total = subtree_mass[0];
  for (int i = 1; i < nb; ++i) {
    const BodyRecord& b = bodies_[i];
    const std::string who = describe_body(b.name, b.sources) + ", moved by joint " + quoted(b.joint.name);
    if (!(subtree_mass[i] > 0.0)) {
      // A moving subtree with no mass makes H singular.
      errors.push_back(who + ", has no mass and carries no massive body: the joint-space inertia matrix would be singular");
    } else if (subtree_mass[i] < 1e-6 * total && !b.inertia_checked &&
               (b.parent == 0 || subtree_mass[b.parent] >= 1e-6 * total)) {
      std::ostringstream msg;
      msg << who << ", moves a subtree of placeholder mass " << subtree_mass[i] << " kg (" << subtree_mass[i] / total
          << " of the model's " << total << " kg): its joint accelerates without bound under any torque";
      report(msg.str(), "; loaded as written (give the link its real mass, or weld it with a fixed joint)");
    }
  }
  if (!errors.empty()) {
    errors.insert(errors.end(), governed.begin(), governed.end());
    throw ModelError(join_problems(errors, "bodies have unusable mass properties"));
  }
  if (!governed.empty()) {
    throw ModelError(join_problems(governed, "bodies have unphysical mass properties") +
                     " (inertia=\"warn\" loads them as written, inertia=\"repair\" makes them physical)");
  }
}

void ModelBuilder::set_gravity(const Vec3& g) {
  if (!g.allFinite()) throw ModelError("gravity must be finite");
  gravity_ = g;
}

void ModelBuilder::add_warning(const std::string& warning) { warnings_.push_back(warning); }

void ModelBuilder::add_named_configuration(const NamedConfigurationSpec& spec) {
  for (const NamedConfigurationSpec& c : named_configurations_) {
    if (c.name == spec.name) throw ModelError("a second named configuration " + quoted(spec.name));
  }
  named_configurations_.push_back(spec);
}

void ModelBuilder::disable_collision(const std::string& a, const std::string& b, const std::string& where) {
  disabled_collisions_.push_back({a, b, where});
}

void ModelBuilder::resolve_semantics(Model& m) const {
  std::vector<std::string> joint_names, frame_names;
  for (int i = 1; i < m.nbodies(); ++i) joint_names.push_back(m.joint(i).name);
  for (const Frame& f : m.frames()) frame_names.push_back(f.name);
  auto prefix = [](const std::string& where) { return where.empty() ? std::string() : where + ": "; };

  const VectorX neutral = neutral_configuration(m);
  for (const NamedConfigurationSpec& spec : named_configurations_) {
    NamedConfiguration c;
    c.name = spec.name;
    c.group = spec.group;
    c.q = neutral;
    const std::string state = "state " + quoted(spec.name);
    for (const NamedConfigurationSpec::JointValues& jv : spec.joints) {
      const int k = m.joint_index(jv.joint);
      if (k < 0) {
        const bool merged = m.frame_index(jv.joint) >= 0;
        m.warnings_.push_back(prefix(jv.where) + state + ": joint " + quoted(jv.joint) +
                              (merged ? " is not a moving joint of the model" : " is not in the model" +
                                                                                  detail::did_you_mean(jv.joint, joint_names)) +
                              "; its value is ignored");
        continue;
      }
      const Joint& j = m.joint(k);
      if (static_cast<int>(jv.values.size()) != j.nq) {
        std::ostringstream msg;
        msg << prefix(jv.where) << state << ": joint " << quoted(jv.joint) << " (" << to_string(j.type) << ") has "
            << j.nq << " coordinate" << (j.nq == 1 ? "" : "s") << ", " << jv.values.size() << " value"
            << (jv.values.size() == 1 ? " is" : "s are") << " given";
        throw ModelError(msg.str());
      }
      for (int i = 0; i < j.nq; ++i) {
        const double x = jv.values[static_cast<std::size_t>(i)];
        if (!std::isfinite(x)) throw ModelError(prefix(jv.where) + state + ": joint " + quoted(jv.joint) + ": value is not finite");
        c.q(j.q_index + i) = x;
      }
      if (j.nq == 1) {
        const double x = jv.values[0], lo = m.lower_(j.q_index), hi = m.upper_(j.q_index);
        const double slack = 1e-9 * (1.0 + std::abs(x));
        if (x < lo - slack || x > hi + slack) {
          std::ostringstream msg;
          msg << prefix(jv.where) << state << ": joint " << quoted(jv.joint) << " value " << x << " is outside its limits ["
              << lo << ", " << hi << "]";
          m.warnings_.push_back(msg.str());
        }
      } else if (j.type == JointType::FreeFlyer) {
        const double n = c.q.segment<4>(j.q_index + 3).norm();
        if (!(std::abs(n - 1.0) < 1e-6)) {
          throw ModelError(prefix(jv.where) + state + ": joint " + quoted(jv.joint) +
                           ": the quaternion (values 4-7, x y z w) must have unit norm");
        }
      }
      c.joints.push_back(jv.joint);
    }
    m.named_configurations_.push_back(std::move(c));
  }

  for (const DisabledPair& d : disabled_collisions_) {
    bool known = true;
    for (const std::string* link : {&d.a, &d.b}) {
      if (m.frame_index(*link) >= 0) continue;
      known = false;
      m.warnings_.push_back(prefix(d.where) + "disabled collision " + quoted(d.a) + " – " + quoted(d.b) + ": link " +
                            quoted(*link) + " is not in the model" + detail::did_you_mean(*link, frame_names) +
                            "; the pair is ignored");
    }
    if (known && !m.collision_disabled(d.a, d.b)) m.disabled_collisions_.emplace_back(d.a, d.b);
  }
}

Model ModelBuilder::build() const {
  Model m;
  m.name_ = name_;
  m.gravity_ = gravity_;
  m.warnings_ = warnings_;
  const int nb = nbodies();

  // Names must be unique per kind.
  std::set<std::string> body_names, joint_names, frame_names;
  // Every body gets a frame with its name unless one was given explicitly.
  std::vector<Frame> frames;
  for (const Frame& f : frames_) frame_names.insert(f.name);
  for (int i = 0; i < nb; ++i) {
    if (!frame_names.count(bodies_[i].name)) frames.push_back(Frame{bodies_[i].name, i, Transform::Identity()});
  }
  frames.insert(frames.end(), frames_.begin(), frames_.end());
  frame_names.clear();
  for (int i = 0; i < nb; ++i) {
    const BodyRecord& b = bodies_[i];
    if (!body_names.insert(b.name).second) throw ModelError("duplicate body name " + quoted(b.name));
    if (i > 0 && !joint_names.insert(b.joint.name).second) {
      throw ModelError("duplicate joint name " + quoted(b.joint.name));
    }
  }
  for (const Frame& f : frames) {
    if (!frame_names.insert(f.name).second) throw ModelError("duplicate frame name " + quoted(f.name));
    if (!finite_transform(f.placement) || !orthonormal(f.placement.E())) {
      throw ModelError("frame " + quoted(f.name) + ": placement is not a finite rigid transform");
    }
  }

  m.parent_.assign(nb, -1);
  m.body_names_.resize(nb);
  m.Xtree_.resize(nb);
  m.inertia_.resize(nb);
  m.joints_.resize(nb);
  m.subtree_root_.assign(nb, 0);
  m.joints_[0] = Joint{"world", JointType::Fixed, JointKind::None, Vec3::UnitZ(), 0, 0, 0, 0};

  int nq = 0, nv = 0;
  std::vector<double> lower, upper, vel, eff, damp, fric;
  for (int i = 0; i < nb; ++i) {
    const BodyRecord& b = bodies_[i];
    m.body_names_[i] = b.name;
    m.inertia_[i] = b.inertia;
    const std::string where = "body " + quoted(b.name);
    if (i == 0) continue;
    const JointSpec& js = b.joint;
    const std::string jwhere = where + ", joint " + quoted(js.name);
    if (b.parent < 0 || b.parent >= i) throw ModelError(jwhere + ": parent must precede the body");
    if (!finite_transform(b.Xtree) || !orthonormal(b.Xtree.E())) {
      throw ModelError(jwhere + ": joint placement is not a finite rigid transform");
    }
    Joint j;
    j.name = js.name;
    j.type = js.type;
    j.q_index = nq;
    j.v_index = nv;
    j.nq = joint_nq(js.type);
    j.nv = joint_nv(js.type);
    j.kind = kernel_kind(js.type, js.axis);
    Transform Xtree = b.Xtree;
    const bool permutation = snap_signed_permutation(Xtree.E());
    j.tree_rotation_identity = Xtree.E() == Mat3::Identity();
    j.tree_rotation_permutation = permutation && !j.tree_rotation_identity;
    if (j.tree_rotation_permutation) {
      const int A = j.kind == JointKind::RevoluteX ? 0 : j.kind == JointKind::RevoluteY ? 1 : 2;
      for (int k = 0; k < 3; ++k) {
        const int row = (A + k) % 3;
        for (int c = 0; c < 3; ++c) {
          if (Xtree.E()(row, c) != 0.0) j.tree_cols[k] = c;
        }
      }
    }
    if (j.nv == 0) throw ModelError(jwhere + ": fixed joints cannot be bodies");
    const bool one_dof = j.nv == 1;
    if (one_dof) {
      if (!js.axis.allFinite()) throw ModelError(jwhere + ": axis is not finite");
      const double n = js.axis.norm();
      if (!(n > 1e-12)) throw ModelError(jwhere + ": axis is zero");
      j.axis = js.axis / n;
      const double l = js.type == JointType::Continuous ? -JointSpec::kInf : js.lower;
      const double u = js.type == JointType::Continuous ? JointSpec::kInf : js.upper;
      if (std::isnan(l) || std::isnan(u) || std::isnan(js.velocity) || std::isnan(js.effort) ||
          !std::isfinite(js.damping) || !std::isfinite(js.friction)) {
        throw ModelError(jwhere + ": limits or dynamics contain NaN or infinite values");
      }
      if (l > u) {
        std::ostringstream msg;
        msg << jwhere << ": lower limit " << l << " exceeds upper limit " << u;
        throw ModelError(msg.str());
      }
      if (js.velocity < 0.0 || js.effort < 0.0 || js.damping < 0.0 || js.friction < 0.0) {
        throw ModelError(jwhere + ": velocity, effort, damping and friction must be non-negative");
      }
      lower.push_back(l);
      upper.push_back(u);
      vel.push_back(js.velocity);
      eff.push_back(js.effort);
      damp.push_back(js.damping);
      fric.push_back(js.friction);
    } else {
      for (int k = 0; k < j.nq; ++k) {
        lower.push_back(-JointSpec::kInf);
        upper.push_back(JointSpec::kInf);
      }
      for (int k = 0; k < j.nv; ++k) {
        vel.push_back(JointSpec::kInf);
        eff.push_back(JointSpec::kInf);
        damp.push_back(0.0);
        fric.push_back(0.0);
      }
    }
    m.parent_[i] = b.parent;
    m.Xtree_[i] = Xtree;
    m.joints_[i] = j;
    m.subtree_root_[i] = b.parent == 0 ? i : m.subtree_root_[b.parent];
    nq += j.nq;
    nv += j.nv;
  }
  m.nq_ = nq;
  m.nv_ = nv;
  auto to_vec = [](const std::vector<double>& x) {
    return VectorX(Eigen::Map<const VectorX>(x.data(), static_cast<Eigen::Index>(x.size())));
  };
  m.lower_ = to_vec(lower);
  m.upper_ = to_vec(upper);
  m.velocity_limit_ = to_vec(vel);
  m.effort_limit_ = to_vec(eff);
  m.damping_ = to_vec(damp);
  m.friction_ = to_vec(fric);

  check_inertias(m);
  std::vector<double> subtree_mass(nb, 0.0);
  for (int i = nb - 1; i >= 0; --i) {
    subtree_mass[i] += bodies_[i].inertia.mass();
    if (i > 0) subtree_mass[bodies_[i].parent] += subtree_mass[i];
  }
  m.total_mass_ = subtree_mass[0];
  m.com_.resize(nb);
  m.Ic_.resize(nb);
  for (int i = 0; i < nb; ++i) {
    m.com_[i] = m.inertia_[i].com();
    m.Ic_[i] = m.inertia_[i].inertia_about_com();
  }

  // Degrees of freedom: owning body and the sparsity parent (RBDA §6.5).
  m.dof_body_.resize(nv);
  m.dof_parent_.resize(nv);
  std::vector<int> last_dof(nb, -1);
  for (int i = 1; i < nb; ++i) {
    const Joint& j = m.joints_[i];
    int p = last_dof[m.parent_[i]];
    for (int k = 0; k < j.nv; ++k) {
      m.dof_body_[j.v_index + k] = i;
      m.dof_parent_[j.v_index + k] = p;
      p = j.v_index + k;
    }
    last_dof[i] = p;
  }
  m.dof_run_start_.resize(nv);
  for (int k = 0; k < nv; ++k) {
    m.dof_run_start_[k] = (k > 0 && m.dof_parent_[k] == k - 1) ? m.dof_run_start_[k - 1] : k;
  }
  m.dof_subtree_end_.resize(nv);
  for (int k = 0; k < nv; ++k) m.dof_subtree_end_[k] = k;
  for (int k = nv - 1; k >= 0; --k) {
    const int p = m.dof_parent_[k];
    if (p >= 0) m.dof_subtree_end_[p] = std::max(m.dof_subtree_end_[p], m.dof_subtree_end_[k]);
  }
  // Depth first: each dof's range (k, dof_subtree_end(k)] holds its
  // descendants only, i.e. as many dofs as it has descendants.
  {
    std::vector<int> descendants(nv, 0);
    for (int k = nv - 1; k >= 0; --k) {
      const int p = m.dof_parent_[k];
      if (p >= 0) descendants[p] += descendants[k] + 1;
    }
    m.dofs_depth_first_ = true;
    for (int k = 0; k < nv; ++k) {
      if (m.dof_subtree_end_[k] - k != descendants[k]) m.dofs_depth_first_ = false;
    }
  }

  for (int i = 1; i < nb; ++i) {
    if (m.joints_[i].type == JointType::FreeFlyer) m.quaternion_q_.push_back(m.joints_[i].q_index + 3);
  }

  m.frames_ = frames;
  m.collisions_ = collisions_;
  for (const CollisionShape& s : collisions_) {
    if (!finite_transform(s.placement) || !orthonormal(s.placement.E())) {
      throw ModelError("collision shape " + quoted(s.name) + ": placement is not a finite rigid transform");
    }
  }
  resolve_semantics(m);
  m.uid_ = next_uid.fetch_add(1);
  return m;
}

}  // namespace plume
