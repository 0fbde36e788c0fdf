#include "plume/sim/world.hpp"

#include <cmath>
#include <sstream>

#include "plume/configuration.hpp"
#include "plume/error.hpp"
#include "plume/model_builder.hpp"

namespace plume {

namespace {

void check_parameters(const ContactParameters& p, const std::string& where) {
  auto bad = [&](const char* what) { throw WorldError(where + ": " + what); };
  if (!std::isfinite(p.mu) || p.mu < 0.0) bad("mu must be finite and non-negative");
  if (!std::isfinite(p.restitution) || p.restitution < 0.0 || p.restitution > 1.0) bad("restitution must be within [0, 1]");
  if (!std::isfinite(p.stiffness) || p.stiffness <= 0.0) bad("stiffness must be positive");
  if (!std::isfinite(p.damping) || p.damping < 0.0) bad("damping must be non-negative");
  if (!std::isfinite(p.tangential_stiffness) || p.tangential_stiffness <= 0.0) bad("tangential_stiffness must be positive");
  if (!std::isfinite(p.tangential_damping) || p.tangential_damping < 0.0) bad("tangential_damping must be non-negative");
}

// Does a surface (shape name, its link, …) match a name in a pair override?
bool matches(const std::string& pattern, const std::string& shape, const std::string& link) {
  if (pattern == shape || pattern == link) return true;
  // A model name matches every shape of the model ("model/…").
  return shape.size() > pattern.size() && shape.compare(0, pattern.size(), pattern) == 0 && shape[pattern.size()] == '/';
}

}  // namespace

int World::model_index(const std::string& name) const {
  for (std::size_t i = 0; i < models_.size(); ++i) {
    if (models_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

ContactParameters World::contact_parameters(const std::string& shape_a, const std::string& link_a,
                                            const ContactMaterial& material_a, const std::string& shape_b,
                                            const std::string& link_b, const ContactMaterial& material_b) const {
  // A pair override wins; otherwise materials (the URDF <plume> extension)
  // refine the world default: the smaller μ and restitution of the two
  // surfaces, and springs in series for the compliant stiffness.
  for (const ContactPairParameters& p : pair_contacts_) {
    if ((matches(p.a, shape_a, link_a) && matches(p.b, shape_b, link_b)) ||
        (matches(p.a, shape_b, link_b) && matches(p.b, shape_a, link_a))) {
      return p.parameters;
    }
  }
  ContactParameters c = default_contact_;
  auto combine_min = [](double base, const std::optional<double>& x, const std::optional<double>& y) {
    if (x && y) return std::min(*x, *y);
    if (x) return *x;
    if (y) return *y;
    return base;
  };
  c.mu = combine_min(c.mu, material_a.mu, material_b.mu);
  c.restitution = combine_min(c.restitution, material_a.restitution, material_b.restitution);
  if (material_a.stiffness || material_b.stiffness) {
    const double ka = material_a.stiffness.value_or(0.0), kb = material_b.stiffness.value_or(0.0);
    c.stiffness = (ka > 0 && kb > 0) ? ka * kb / (ka + kb) : std::max(ka, kb);
  }
  if (material_a.damping || material_b.damping) {
    const double da = material_a.damping.value_or(0.0), db = material_b.damping.value_or(0.0);
    c.damping = (da > 0 && db > 0) ? da * db / (da + db) : std::max(da, db);
  }
  return c;
}

World World::with_initial_state(const std::optional<VectorX>& q0, const std::optional<VectorX>& v0) const {
  World w = *this;
  if (q0) {
    try {
      check_configuration(model_, *q0, "q0");
    } catch (const ArgumentError& err) {
      throw WorldError(std::string("initial state: ") + err.what() +
                       " (the layout of World::q0(): each model's coordinates in World::models() order)");
    }
    w.q0_ = *q0;
  }
  if (v0) {
    try {
      check_vector(*v0, model_.nv(), "v0");
    } catch (const ArgumentError& err) {
      throw WorldError(std::string("initial state: ") + err.what() +
                       " (the layout of World::v0(): each model's coordinates in World::models() order)");
    }
    w.v0_ = *v0;
  }
  return w;
}

World World::with_default_contact(const ContactParameters& parameters) const {
  check_parameters(parameters, "default contact");
  World w = *this;
  w.default_contact_ = parameters;
  return w;
}

World World::with_pair_contact(const ContactPairParameters& pair) const {
  check_parameters(pair.parameters, "contact between '" + pair.a + "' and '" + pair.b + "'");
  World w = *this;
  w.pair_contacts_.insert(w.pair_contacts_.begin(), pair);
  return w;
}

WorldBuilder::WorldBuilder() = default;

int WorldBuilder::add_model(const std::string& name, const Model& model, const std::optional<VectorX>& q0,
                            const std::optional<VectorX>& v0, const std::string& source) {
  if (name.empty() || name.find('/') != std::string::npos || name.find('|') != std::string::npos) {
    throw WorldError("model name '" + name + "' must be non-empty and contain no '/' or '|'");
  }
  for (const Entry& e : entries_) {
    if (e.name == name) throw WorldError("two models named '" + name + "'");
  }
  Entry e{name, model, neutral_configuration(model), VectorX::Zero(model.nv()), source};
  entries_.push_back(std::move(e));
  set_state(name, q0, v0);
  return static_cast<int>(entries_.size()) - 1;
}

void WorldBuilder::set_state(const std::string& name, const std::optional<VectorX>& q0, const std::optional<VectorX>& v0) {
  for (Entry& e : entries_) {
    if (e.name != name) continue;
    if (q0) {
      if (q0->size() != e.model.nq()) {
        throw WorldError("model '" + name + "': q has " + std::to_string(q0->size()) + " entries, expected " +
                         std::to_string(e.model.nq()));
      }
      try {
        check_configuration(e.model, *q0, "q");
      } catch (const ArgumentError& err) {
        throw WorldError("model '" + name + "': " + err.what());
      }
      e.q0 = *q0;
    }
    if (v0) {
      if (v0->size() != e.model.nv()) {
        throw WorldError("model '" + name + "': v has " + std::to_string(v0->size()) + " entries, expected " +
                         std::to_string(e.model.nv()));
      }
      try {
        check_vector(*v0, e.model.nv(), "v");
      } catch (const ArgumentError& err) {
        throw WorldError("model '" + name + "': " + err.what());
      }
      e.v0 = *v0;
    }
    return;
  }
  throw WorldError("no model named '" + name + "'");
}

void WorldBuilder::set_collision(const std::string& name, bool enabled) {
  for (Entry& e : entries_) {
    if (e.name == name) {
      e.collision = enabled;
      return;
    }
  }
  throw WorldError("no model named '" + name + "'");
}

namespace {

// A model in contact must have collision geometry contact can use: every
// mesh loaded and hulled, and at least one shape if anything moves.
void check_collision_geometry(const std::string& name, const Model& model) {
  std::string problems;
  int usable = 0;
  for (const CollisionShape& s : model.collisions()) {
    if (usable_for_contact(s.geometry)) {
      ++usable;
      continue;
    }
    const Mesh* mesh = std::get_if<Mesh>(&s.geometry);
    problems += (problems.empty() ? "" : "; ") + std::string("link '") + s.link + "': collision '" + s.name + "': " +
                (mesh ? "mesh '" + mesh->filename + "': " + (mesh->problem.empty() ? "no convex hull" : mesh->problem)
                      : std::string(geometry_name(s.geometry)) + " is not usable for contact");
  }
  const std::string fix = "; give the model usable collision shapes (resolve its meshes with package_dirs, or replace "
                          "them with <collision link=\"…\"> primitives), or take it out of contact with "
                          "<model collision=\"none\"> (WorldBuilder::set_collision(\"" + name + "\", false))";
  if (!problems.empty()) throw WorldError("model '" + name + "': collision geometry cannot be used: " + problems + fix);
  if (usable == 0 && model.nv() > 0) {
    throw WorldError("model '" + name + "' has moving bodies but no collision shape, so it would pass through everything" + fix);
  }
}

}  // namespace

void WorldBuilder::add_environment(const EnvironmentShape& shape) {
  for (const EnvironmentShape& s : environment_) {
    if (s.name == shape.name) throw WorldError("two environment shapes named '" + shape.name + "'");
  }
  environment_.push_back(shape);
}

void WorldBuilder::set_gravity(const Vec3& g) {
  if (!g.allFinite()) throw WorldError("gravity must be finite");
  gravity_ = g;
}

void WorldBuilder::set_default_contact(const ContactParameters& parameters) {
  check_parameters(parameters, "default contact");
  default_contact_ = parameters;
}

void WorldBuilder::add_pair_contact(const ContactPairParameters& pair) {
  check_parameters(pair.parameters, "contact between '" + pair.a + "' and '" + pair.b + "'");
  pair_contacts_.push_back(pair);
}

void WorldBuilder::set_self_collision(bool on) { self_collision_ = on; }

World WorldBuilder::build() const {
  World w;
  ModelBuilder b(entries_.size() == 1 ? entries_[0].name : "world");
  b.set_gravity(gravity_);
  int nq = 0, nv = 0;
  for (const Entry& e : entries_) nq += e.model.nq(), nv += e.model.nv();
  w.q0_.resize(nq);
  w.v0_.resize(nv);
  for (const Entry& e : entries_) {
    WorldModel wm;
    wm.name = e.name;
    wm.first_body = b.nbodies();
    wm.nbodies = e.model.nbodies() - 1;
    wm.q_index = 0;
    wm.v_index = 0;
    for (const WorldModel& prev : w.models_) {
      wm.q_index += prev.nq;
      wm.v_index += prev.nv;
    }
    wm.nq = e.model.nq();
    wm.nv = e.model.nv();
    wm.source = e.source;
    if (e.collision) check_collision_geometry(e.name, e.model);
    b.append_model(e.model, 0, Transform::Identity(), e.name + "/", e.collision);
    w.q0_.segment(wm.q_index, wm.nq) = e.q0;
    w.v0_.segment(wm.v_index, wm.nv) = e.v0;
    w.models_.push_back(wm);
  }
  try {
    w.model_ = b.build();
  } catch (const ModelError& err) {
    throw WorldError(std::string("combining the models: ") + err.what());
  }
  w.environment_ = environment_;
  w.default_contact_ = default_contact_;
  w.pair_contacts_ = pair_contacts_;
  w.self_collision_ = self_collision_;
  return w;
}

}  // namespace plume
