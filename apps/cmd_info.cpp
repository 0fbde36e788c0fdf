// plume info MODEL.urdf [--root fixed|free|planar] [--json]
#include <iomanip>
#include <iostream>

#include "cli_common.hpp"
#include "plume/geometry/convex_hull.hpp"

namespace plume::cli {

namespace {

using nlohmann::json;

json limit(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json geometry_json(const Geometry& g) {
  json j;
  j["type"] = geometry_name(g);
  put_primitive_dimensions(j, g, [](const Vec3& v) { return to_json(v); });
  if (const auto* m = std::get_if<Mesh>(&g)) {
    j["filename"] = m->filename;
    j["scale"] = to_json(m->scale);
    j["resolved"] = m->resolved;
    if (m->hull) {
      j["hull_vertices"] = m->hull->num_vertices();
      j["hull_faces"] = m->hull->num_faces();
      j["hull_volume"] = m->hull->volume();
    } else {
      j["problem"] = m->problem;
    }
  }
  return j;
}

// Pose of a frame or shape in its body from its placement X_frame_body.
json pose_json(const Transform& X) {
  const Eigen::Quaterniond r(X.pose_rotation());
  return json{{"translation", to_json(X.r())}, {"quaternion_xyzw", {r.x(), r.y(), r.z(), r.w()}}};
}

json model_json(const Model& m, const std::string& root) {
  json out;
  out["name"] = m.name();
  out["root"] = root;
  out["nq"] = m.nq();
  out["nv"] = m.nv();
  out["nbodies"] = m.nbodies();
  out["total_mass"] = m.total_mass();
  out["gravity"] = to_json(m.gravity());
  out["bodies"] = json::array();
  out["joints"] = json::array();
  for (int i = 0; i < m.nbodies(); ++i) {
    const RigidInertia& I = m.inertia(i);
    json b{{"index", i},
           {"name", m.body_name(i)},
           {"parent", i == 0 ? json(nullptr) : json(m.body_name(m.parent(i)))},
           {"joint", i == 0 ? json(nullptr) : json(m.joint(i).name)},
           {"mass", I.mass()},
           {"com", to_json(I.com())}};
    out["bodies"].push_back(b);
    if (i == 0) continue;
    const Joint& j = m.joint(i);
    json jj{{"name", j.name},   {"type", to_string(j.type)}, {"q_index", j.q_index}, {"v_index", j.v_index},
            {"nq", j.nq},       {"nv", j.nv},                {"body", m.body_name(i)},
            {"parent_body", m.body_name(m.parent(i))}};
    if (j.nv == 1) {
      jj["axis"] = to_json(j.axis);
      jj["lower"] = limit(m.lower_position_limit()(j.q_index));
      jj["upper"] = limit(m.upper_position_limit()(j.q_index));
      jj["velocity"] = limit(m.velocity_limit()(j.v_index));
      jj["effort"] = limit(m.effort_limit()(j.v_index));
      jj["damping"] = m.damping()(j.v_index);
      jj["friction"] = m.friction()(j.v_index);
    }
    jj["coordinates"] = json(joint_coordinates(j, m.name(), j.name));
    out["joints"].push_back(jj);
  }
  out["frames"] = json::array();
  for (const Frame& f : m.frames()) {
    json fj = pose_json(f.placement);
    fj["name"] = f.name;
    fj["body"] = m.body_name(f.body);
    out["frames"].push_back(fj);
  }
  out["collisions"] = json::array();
  for (const CollisionShape& s : m.collisions()) {
    json sj = pose_json(s.placement);
    sj["name"] = s.name;
    sj["link"] = s.link;
    sj["body"] = m.body_name(s.body);
    sj["geometry"] = geometry_json(s.geometry);
    sj["usable_for_contact"] = usable_for_contact(s.geometry);
    json mat = json::object();
    if (s.material.mu) mat["mu"] = *s.material.mu;
    if (s.material.restitution) mat["restitution"] = *s.material.restitution;
    if (s.material.stiffness) mat["stiffness"] = *s.material.stiffness;
    if (s.material.damping) mat["damping"] = *s.material.damping;
    sj["material"] = mat;
    out["collisions"].push_back(sj);
  }
  out["warnings"] = m.warnings();
  return out;
}

std::string range(int first, int n) {
  if (n == 0) return "none";
  if (n == 1) return "[" + std::to_string(first) + "]";
  return "[" + std::to_string(first) + ".." + std::to_string(first + n - 1) + "]";
}

void print_text(const Model& m, const std::string& root) {
  std::cout << "model '" << m.name() << "' (root joint: " << root << ")\n"
            << "  nq = " << m.nq() << ", nv = " << m.nv() << ", bodies = " << m.nbodies()
            << " (including the world), total mass = " << m.total_mass() << " kg\n\n";
  std::cout << "bodies and joints (q and v index ranges):\n";
  for (int i = 0; i < m.nbodies(); ++i) {
    std::cout << "  [" << std::setw(2) << i << "] " << m.body_name(i);
    if (i > 0) {
      const Joint& j = m.joint(i);
      std::cout << "  <- " << m.body_name(m.parent(i)) << " by '" << j.name << "' (" << to_string(j.type)
                << ", q" << range(j.q_index, j.nq) << ", v" << range(j.v_index, j.nv) << ")";
    }
    std::cout << "  mass " << m.inertia(i).mass() << " kg\n";
  }
  std::cout << "\nframes:\n";
  for (const Frame& f : m.frames()) {
    const Vec3 p = f.placement.r() + Vec3::Zero();  // + 0 prints −0 as 0
    std::cout << "  " << f.name << " on " << m.body_name(f.body) << " at (" << p.transpose() << ")\n";
  }
  std::cout << "\ncollision shapes:\n";
  if (m.collisions().empty()) std::cout << "  none\n";
  for (const CollisionShape& s : m.collisions()) {
    std::cout << "  " << s.name << ": " << geometry_name(s.geometry) << " on " << m.body_name(s.body);
    if (const auto* mesh = std::get_if<Mesh>(&s.geometry)) {
      std::cout << " '" << mesh->filename << "'";
      if (mesh->hull) {
        std::cout << " -> " << mesh->resolved << " (convex hull: " << mesh->hull->num_vertices() << " vertices, "
                  << mesh->hull->num_faces() << " faces)";
      }
    }
    std::cout << (usable_for_contact(s.geometry) ? "" : " (not usable for contact)") << "\n";
  }
  if (!m.warnings().empty()) {
    std::cout << "\nwarnings:\n";
    for (const std::string& w : m.warnings()) std::cout << "  " << w << "\n";
  }
}

}  // namespace

int run_info(const InfoArgs& args) {
  const Model m = load_model(args.model, args.load, urdf::CollisionMeshes::IfFound, /*print_warnings=*/args.json);
  const std::string root = urdf::to_string(urdf::parse_root_joint(args.load.root));
  if (args.json) {
    std::cout << model_json(m, root).dump(2) << "\n";
  } else {
    print_text(m, root);
  }
  return 0;
}

}  // namespace plume::cli
