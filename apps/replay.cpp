// replay.html and view pages: the scene (every collision shape of every body,
// the environment), the frames (body placements from forward kinematics on
// each trajectory row), the contacts (points, normals, forces and states from
// contacts.csv, placed by contact detection on the same rows) and the events,
// written as one JSON object into apps/replay_page.html with three.js inlined.
#include "replay.hpp"

#include "cli_common.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/detection.hpp"
#include "plume/data.hpp"
#include "plume/error.hpp"
#include "plume/geometry/convex_hull.hpp"
#include "plume/geometry/mesh.hpp"
#include "plume/urdf.hpp"

#include <urdf_parser/urdf_parser.h>

namespace plume::cli {

extern const char* const kReplayPageTemplate;  // replay_page.cpp, generated from replay_page.html

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

// ---- small helpers -----------------------------------------------------------------------

// x rounded to a multiple of `step` (shorter JSON; well below what a screen shows).
double rounded(double x, double step) {
  if (!std::isfinite(x)) return 0.0;
  const double r = std::round(x / step) * step;
  return r == 0.0 ? 0.0 : r;  // no "-0"
}

ordered_json vec_json(const Vec3& v, double step = 1e-6) {
  return ordered_json::array({rounded(v.x(), step), rounded(v.y(), step), rounded(v.z(), step)});
}

ordered_json quat_json(const Mat3& R) {
  Eigen::Quaterniond q(R);
  q.normalize();
  return ordered_json::array({rounded(q.x(), 1e-6), rounded(q.y(), 1e-6), rounded(q.z(), 1e-6), rounded(q.w(), 1e-6)});
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// RFC 4180 rows (quoted fields with "" for a quote); the header is row 0.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        row.push_back(field);
        rows.push_back(row);
      }
      row.clear();
      field.clear();
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (any || !field.empty()) {
    row.push_back(field);
    rows.push_back(row);
  }
  return rows;
}

double number(const std::string& s) {
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0' ? x : std::nan("");
}

int column_of(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : static_cast<int>(it - header.begin());
}

void write_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.parent_path() / ("." + path.filename().string() + ".tmp-" + std::to_string(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw Error("cannot write " + path.string());
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error("cannot rename the page into " + path.string() + ": " + ec.message());
  }
}

// ---- geometry ----------------------------------------------------------------------------

// Vertex clustering: vertices snapped to a grid of cell `h` and merged,
// triangles that collapse dropped. Keeps the outline of a mesh at a fraction of
// its triangles (the replay is for looking at, not for contact).
TriangleMesh decimate(const TriangleMesh& mesh, std::size_t max_triangles) {
  if (mesh.triangles.size() <= max_triangles || mesh.vertices.empty()) return mesh;
  Vec3 lo = mesh.vertices[0], hi = lo;
  for (const Vec3& v : mesh.vertices) {
    lo = lo.cwiseMin(v);
    hi = hi.cwiseMax(v);
  }
  const double extent = std::max((hi - lo).maxCoeff(), 1e-9);
  TriangleMesh out = mesh;
  for (int cells = 64; cells >= 4 && out.triangles.size() > max_triangles; cells /= 2) {
    const double h = extent / cells;
    std::map<std::array<long, 3>, int> index;
    std::vector<Vec3> sum;
    std::vector<int> count, remap(mesh.vertices.size());
    for (std::size_t k = 0; k < mesh.vertices.size(); ++k) {
      const Vec3 c = (mesh.vertices[k] - lo) / h;
      const std::array<long, 3> key{std::lround(c.x()), std::lround(c.y()), std::lround(c.z())};
      auto [it, fresh] = index.emplace(key, static_cast<int>(sum.size()));
      if (fresh) {
        sum.push_back(Vec3::Zero());
        count.push_back(0);
      }
      sum[static_cast<std::size_t>(it->second)] += mesh.vertices[k];
      ++count[static_cast<std::size_t>(it->second)];
      remap[k] = it->second;
    }
    out.vertices.clear();
    for (std::size_t k = 0; k < sum.size(); ++k) out.vertices.push_back(sum[k] / count[k]);
    out.triangles.clear();
    std::set<std::array<int, 3>> seen;
    for (const auto& t : mesh.triangles) {
      const std::array<int, 3> m{remap[static_cast<std::size_t>(t[0])], remap[static_cast<std::size_t>(t[1])],
                                 remap[static_cast<std::size_t>(t[2])]};
      if (m[0] == m[1] || m[1] == m[2] || m[0] == m[2]) continue;
      std::array<int, 3> key = m;
      std::sort(key.begin(), key.end());
      if (seen.insert(key).second) out.triangles.push_back(m);
    }
  }
  return out;
}

ordered_json mesh_json(const TriangleMesh& mesh) {
  ordered_json v = ordered_json::array(), t = ordered_json::array();
  for (const Vec3& p : mesh.vertices) {
    for (int k = 0; k < 3; ++k) v.push_back(rounded(p(k), 1e-5));
  }
  for (const auto& tri : mesh.triangles) {
    for (int k : tri) t.push_back(k);
  }
  return ordered_json{{"vertices", v}, {"triangles", t}};
}

TriangleMesh hull_mesh(const ConvexHull& hull) {
  TriangleMesh m;
  m.vertices = hull.vertices();
  for (int f = 0; f < hull.num_faces(); ++f) {
    const int n = hull.faces()[static_cast<std::size_t>(f)].count;
    for (int k = 1; k + 1 < n; ++k) m.triangles.push_back({hull.face_vertex(f, 0), hull.face_vertex(f, k), hull.face_vertex(f, k + 1)});
  }
  return m;
}

// Triangles per mesh in the page: 20 000 keeps a robot of 30 mesh links near 2 MB.
constexpr std::size_t kMeshTriangles = 20000;

// One shape: its geometry and its pose in its body (or the world) from
// X_shape_body. Meshes carry the file's triangles when it reads (decimated),
// else the convex hull plume computes contacts with.
ordered_json shape_json(const std::string& name, const Geometry& g, const Transform& X_shape_parent) {
  ordered_json j;
  j["name"] = name;
  j["type"] = geometry_name(g);
  j["position"] = vec_json(X_shape_parent.pose_translation());
  j["quaternion"] = quat_json(X_shape_parent.pose_rotation());
  put_primitive_dimensions(j, g, [](const Vec3& v) { return vec_json(v); });
  if (const auto* m = std::get_if<Mesh>(&g)) {
    j["filename"] = m->filename;
    bool done = false;
    if (!m->resolved.empty()) {
      try {
        j["mesh"] = mesh_json(decimate(read_mesh(m->resolved, m->scale), kMeshTriangles));
        j["source"] = "file";
        done = true;
      } catch (const std::exception&) {
        // Fall back to the hull below.
      }
    }
    if (!done && m->hull) {
      j["mesh"] = mesh_json(hull_mesh(*m->hull));
      j["source"] = "hull";
      done = true;
    }
    if (!done) j["type"] = "missing";
  }
  return j;
}

// ---- the scene ---------------------------------------------------------------------------

struct Scene {
  ordered_json bodies = ordered_json::array();  // moving bodies with shapes
  ordered_json statics = ordered_json::array();  // the environment (ground, boxes, ...)
  // The models' links welded to the world (a fixed-base robot's base, a model
  // loaded with a fixed root): drawn as part of the robot, in its colour, one
  // entry per model like a body (visual shapes, or the collision shapes):
  // {"name": model, "model_index": m, "shapes": [...], "visuals": [...]}.
  ordered_json fixed = ordered_json::array();
  std::map<int, std::size_t> fixed_index;  // model index -> entry of `fixed`
  std::vector<int> body_index;                   // model body of each page body
  int follow = -1;                               // page body of the first floating base
};

// The model a collision shape (or link) of the world belongs to: its name's prefix.
int model_of_link(const std::vector<WorldModel>& models, const std::string& link) {
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (link.rfind(models[i].name + "/", 0) == 0) return static_cast<int>(i);
  }
  return 0;
}

// The entry of `s.fixed` for a model's links welded to the world (created when new).
ordered_json& fixed_entry(Scene& s, int model_index, const std::string& name) {
  const auto [it, fresh] = s.fixed_index.emplace(model_index, s.fixed.size());
  if (fresh) {
    s.fixed.push_back({{"name", name}, {"model_index", model_index}, {"shapes", ordered_json::array()},
                       {"visuals", ordered_json::array()}});
  }
  return s.fixed[it->second];
}

Scene build_scene(const Model& model, const std::vector<WorldModel>& models, const std::vector<EnvironmentShape>& env) {
  Scene s;
  std::vector<std::vector<int>> shapes_of(static_cast<std::size_t>(model.nbodies()));
  for (std::size_t k = 0; k < model.collisions().size(); ++k) {
    shapes_of[static_cast<std::size_t>(model.collisions()[k].body)].push_back(static_cast<int>(k));
  }
  const auto model_of = [&](int body) -> std::pair<int, std::string> {
    for (std::size_t m = 0; m < models.size(); ++m) {
      if (body >= models[m].first_body && body < models[m].first_body + models[m].nbodies) {
        return {static_cast<int>(m), models[m].name};
      }
    }
    return {0, model.name()};
  };
  for (int b = 1; b < model.nbodies(); ++b) {
    const JointType type = model.joint(b).type;
    const bool floating = model.parent(b) == 0 && (type == JointType::FreeFlyer || type == JointType::Planar);
    ordered_json body;
    body["name"] = model.body_name(b);
    // Page bodies are the model's moving bodies in order: the parent's page index is b − 2.
    body["parent"] = model.parent(b) - 1;
    const auto [m, name] = model_of(b);
    body["model"] = name;
    body["model_index"] = m;
    // Origins of the links merged into this body (URDF fixed joints, e.g. a
    // foot frame at the end of a shank): the page draws a stick to each.
    body["tips"] = ordered_json::array();
    for (const Frame& f : model.frames()) {
      if (f.body != b || f.placement.r().norm() < 1e-6) continue;
      body["tips"].push_back(vec_json(f.placement.r(), 1e-5));
    }
    body["shapes"] = ordered_json::array();
    for (int k : shapes_of[static_cast<std::size_t>(b)]) {
      const CollisionShape& c = model.collisions()[static_cast<std::size_t>(k)];
      body["shapes"].push_back(shape_json(c.name, c.geometry, c.placement));
    }
    if (floating && s.follow < 0) s.follow = static_cast<int>(s.bodies.size());
    s.bodies.push_back(body);
    s.body_index.push_back(b);
  }
  for (int k : shapes_of[0]) {
    const CollisionShape& c = model.collisions()[static_cast<std::size_t>(k)];
    const int m = model_of_link(models, c.link);
    const std::string name = models.empty() ? model.name() : models[static_cast<std::size_t>(m)].name;
    fixed_entry(s, m, name)["shapes"].push_back(shape_json(c.name, c.geometry, c.placement));
  }
  for (const EnvironmentShape& e : env) s.statics.push_back(shape_json(e.name, e.geometry, e.placement));
  return s;
}

// ---- visual shapes -----------------------------------------------------------------------

// Package roots the model's collision meshes resolved to ("package://NAME/rel"
// found at ".../NAME/rel" → ".../NAME"): visual meshes of the same packages
// resolve there too, whatever --package-dir or package_dirs the load used.
std::vector<std::string> package_roots(const Model& model) {
  std::vector<std::string> dirs;
  for (const CollisionShape& c : model.collisions()) {
    const auto* m = std::get_if<Mesh>(&c.geometry);
    if (!m || m->resolved.empty() || m->filename.rfind("package://", 0) != 0) continue;
    const std::string rest = m->filename.substr(10);
    const std::size_t slash = rest.find('/');
    if (slash == std::string::npos) continue;
    const std::string rel = rest.substr(slash);  // "/meshes/foot.stl"
    const std::string& res = m->resolved;
    if (res.size() <= rel.size() || res.compare(res.size() - rel.size(), rel.size(), rel) != 0) continue;
    const std::string root = res.substr(0, res.size() - rel.size());
    if (std::find(dirs.begin(), dirs.end(), root) == dirs.end()) dirs.push_back(root);
  }
  return dirs;
}

bool same_geometry(const Geometry& a, const Geometry& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<Mesh>(&a)) {
    const auto& y = std::get<Mesh>(b);
    return x->filename == y.filename && (x->scale - y.scale).norm() < 1e-12;
  }
  if (const auto* x = std::get_if<Sphere>(&a)) return x->radius == std::get<Sphere>(b).radius;
  if (const auto* x = std::get_if<Box>(&a)) return x->size == std::get<Box>(b).size;
  if (const auto* x = std::get_if<Cylinder>(&a)) {
    return x->radius == std::get<Cylinder>(b).radius && x->length == std::get<Cylinder>(b).length;
  }
  return false;
}

// The URDF's <visual> shapes, attached to the page's bodies (key "visuals")
// or, for links welded to the world, to their entry of s.fixed. A visual that repeats a
// collision shape of its body (same geometry, same placement) is written as
// {"type": "collision", "index": k}: the page reuses that shape's geometry. Meshes resolve like collision
// meshes (resolve_uri: package roots, ROS_PACKAGE_PATH, the URDF's
// ancestors); one that does not resolve or read is dropped (the collision
// shapes still show the body). Returns the number of visual shapes added.
int add_visuals(Scene& s, const Model& model, const std::string& urdf_path, const std::string& prefix,
                const std::vector<std::string>& package_dirs, int model_index) {
  if (urdf_path.empty() || urdf_path == "<code>") return 0;
  ::urdf::ModelInterfaceSharedPtr parsed;
  try {
    parsed = ::urdf::parseURDFFile(urdf_path);
  } catch (const std::exception&) {
    return 0;
  }
  if (!parsed) return 0;
  std::map<int, std::size_t> page_of;  // model body → page body
  for (std::size_t i = 0; i < s.body_index.size(); ++i) page_of[s.body_index[i]] = i;
  int added = 0;
  for (const auto& [link_name, link] : parsed->links_) {
    if (!link || link->visual_array.empty()) continue;
    const int f = model.frame_index(prefix + link_name);
    if (f < 0) continue;
    const Frame& frame = model.frames()[static_cast<std::size_t>(f)];
    int k = 0;
    for (const auto& v : link->visual_array) {
      if (!v || !v->geometry) continue;
      const std::string name = prefix + (!v->name.empty() ? v->name : link_name + "/visual_" + std::to_string(k));
      ++k;
      const ::urdf::Pose& o = v->origin;
      const Eigen::Quaterniond r(o.rotation.w, o.rotation.x, o.rotation.y, o.rotation.z);
      const Vec3 t(o.position.x, o.position.y, o.position.z);
      if (!t.allFinite() || !r.coeffs().allFinite()) continue;
      const Transform placement = Transform::from_pose(r.normalized().toRotationMatrix(), t) * frame.placement;
      Geometry g;
      const ::urdf::Geometry& ug = *v->geometry;
      switch (ug.type) {
        case ::urdf::Geometry::SPHERE: g = Sphere{static_cast<const ::urdf::Sphere&>(ug).radius}; break;
        case ::urdf::Geometry::BOX: {
          const auto& d = static_cast<const ::urdf::Box&>(ug).dim;
          g = Box{Vec3(d.x, d.y, d.z)};
          break;
        }
        case ::urdf::Geometry::CYLINDER: {
          const auto& c = static_cast<const ::urdf::Cylinder&>(ug);
          g = Cylinder{c.radius, c.length};
          break;
        }
        case ::urdf::Geometry::MESH: {
          const auto& m = static_cast<const ::urdf::Mesh&>(ug);
          Mesh mesh;
          mesh.filename = m.filename;
          mesh.scale = Vec3(m.scale.x, m.scale.y, m.scale.z);
          try {
            mesh.resolved = urdf::resolve_uri(m.filename, urdf_path, package_dirs);
          } catch (const std::exception&) {
            continue;  // not found: the collision shapes show the body
          }
          g = mesh;
          break;
        }
      }
      // A visual repeating one of its body's collision shapes: the page reuses that shape's geometry.
      // (Links welded to the world: the shapes of this model's entry of s.fixed.)
      int repeated = -1, nth = 0;
      for (const CollisionShape& c : model.collisions()) {
        if (c.body != frame.body || (frame.body == 0 && c.link.rfind(prefix, 0) != 0)) continue;
        if (repeated < 0 && same_geometry(c.geometry, g) && (c.placement.r() - placement.r()).norm() < 1e-9 &&
            (c.placement.E() - placement.E()).norm() < 1e-9) {
          repeated = nth;
        }
        ++nth;
      }
      ordered_json j;
      if (repeated >= 0) {
        j = {{"name", name}, {"type", "collision"}, {"index", repeated}};
      } else {
        j = shape_json(name, g, placement);
        if (j["type"] == "missing") continue;  // unreadable and no hull: nothing to draw
      }
      if (frame.body == 0) {
        const std::string model_name = prefix.empty() ? model.name() : prefix.substr(0, prefix.size() - 1);
        fixed_entry(s, model_index, model_name)["visuals"].push_back(j);
      } else {
        const auto it = page_of.find(frame.body);
        if (it == page_of.end()) continue;
        ordered_json& body = s.bodies[it->second];
        if (!body.contains("visuals")) body["visuals"] = ordered_json::array();
        body["visuals"].push_back(j);
      }
      ++added;
    }
  }
  return added;
}

// The placements of the page's bodies at q: [x y z qx qy qz qw] each.
void append_poses(const Data& data, const Scene& scene, ordered_json& out) {
  for (int b : scene.body_index) {
    const Transform& X = data.X0[static_cast<std::size_t>(b)];
    const Vec3 p = X.r();
    Eigen::Quaterniond r(Mat3(X.E().transpose()));
    r.normalize();
    for (double x : {p.x(), p.y(), p.z()}) out.push_back(rounded(x, 1e-5));
    for (double x : {r.x(), r.y(), r.z(), r.w()}) out.push_back(rounded(x, 1e-5));
  }
}

std::string three_file(const fs::path& dir, const char* name) {
  const fs::path p = dir / name;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return {};
  return read_text(p);
}

// A script's text made safe inside <script>…</script>.
std::string script_safe(std::string text) {
  std::size_t at = 0;
  while ((at = text.find("</", at)) != std::string::npos) {
    text.replace(at, 2, "<\\/");
    at += 3;
  }
  return text;
}

std::string fill_page(const std::string& data_json, const std::string& title, std::string* why) {
  const fs::path three_dir = find_three();
  if (three_dir.empty()) {
    *why = "three.js not found (Debian: apt-get install libjs-three, or set PLUME_THREE_DIR to a directory "
           "holding three.min.js and OrbitControls.js)";
    return {};
  }
  const std::string three = three_file(three_dir, "three.min.js");
  std::string orbit = three_file(three_dir, "OrbitControls.js");
  if (orbit.empty()) orbit = three_file(three_dir / "examples" / "js" / "controls", "OrbitControls.js");
  if (three.empty() || orbit.empty()) {
    *why = "three.min.js or OrbitControls.js missing or unreadable in " + three_dir.string();
    return {};
  }
  std::string page = kReplayPageTemplate;
  // The keys in the template's order, each looked for after the text put in
  // before it (a title or data holding a key's text stays as it is).
  std::size_t from = 0;
  const auto put = [&](const std::string& key, const std::string& value) {
    const std::size_t at = page.find(key, from);
    if (at == std::string::npos) throw Error("replay page template lacks " + key);
    page.replace(at, key.size(), value);
    from = at + value.size();
  };
  std::string escaped_title;
  for (char c : title) {
    if (c == '<') escaped_title += "&lt;";
    else if (c == '>') escaped_title += "&gt;";
    else if (c == '&') escaped_title += "&amp;";
    else escaped_title += c;
  }
  put("@PLUME_TITLE@", escaped_title);
  put("/*@PLUME_THREE@*/", script_safe(three));
  put("/*@PLUME_ORBIT@*/", script_safe(orbit));
  // The page's renderer where the browser has no WebGL (three.js's SVG renderer
  // and its Projector); without them such a browser shows an error banner.
  const fs::path renderers = three_dir / "examples" / "js" / "renderers";
  const std::string projector = three_file(renderers, "Projector.js"), svg = three_file(renderers, "SVGRenderer.js");
  put("/*@PLUME_SVG@*/", projector.empty() || svg.empty() ? std::string() : script_safe(projector + "\n" + svg));
  // JSON has '<' only inside strings, where \u003c is the same character: no
  // "</script>" or "<!--" can end or change the data's script element.
  std::string data;
  data.reserve(data_json.size());
  for (char c : data_json) {
    if (c == '<') data += "\\u003c";
    else data += c;
  }
  put("@PLUME_DATA@", data);
  return page;
}

}  // namespace

fs::path find_three() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("PLUME_THREE_DIR")) dirs.emplace_back(env);
  dirs.emplace_back(PLUME_THREE_DIR);
  dirs.emplace_back("/usr/share/javascript/three");
  for (const fs::path& d : dirs) {
    std::error_code ec;
    if (!d.empty() && fs::is_regular_file(d / "three.min.js", ec)) return d;
  }
  return {};
}

namespace {

// ---- a finished run, read back -----------------------------------------------------------

struct ContactRow {
  std::string name;
  double normal_velocity, normal_force, friction_force;
};
struct EventRow {
  double t;
  std::string kind, contact;
  double impulse;
};
struct RunData {
  std::vector<double> times;
  std::vector<VectorX> qs, vs;
  std::map<double, std::vector<ContactRow>> contacts;  // by time
  std::vector<EventRow> events;
};

// Reads trajectory.csv, contacts.csv and events.csv of `dir`; "" or why not.
std::string read_run(const Model& model, const fs::path& dir, RunData& run) {
  const auto traj = parse_csv(read_text(dir / "trajectory.csv"));
  if (traj.size() < 2) return (dir / "trajectory.csv").string() + " is missing or has no rows";
  if (traj[0].size() != static_cast<std::size_t>(1 + model.nq() + model.nv())) {
    return (dir / "trajectory.csv").string() + " has " + std::to_string(traj[0].size()) +
           " columns, the world needs 1 + nq + nv = " + std::to_string(1 + model.nq() + model.nv()) +
           " (is it the output of another world?)";
  }
  for (std::size_t r = 1; r < traj.size(); ++r) {
    if (traj[r].size() != traj[0].size()) continue;  // a damaged row
    VectorX q(model.nq()), v(model.nv());
    bool finite = true;
    for (int k = 0; k < model.nq(); ++k) finite = finite && std::isfinite(q(k) = number(traj[r][static_cast<std::size_t>(1 + k)]));
    for (int k = 0; k < model.nv(); ++k) {
      finite = finite && std::isfinite(v(k) = number(traj[r][static_cast<std::size_t>(1 + model.nq() + k)]));
    }
    const double t = number(traj[r][0]);
    if (!finite || !std::isfinite(t)) continue;
    normalize_configuration(model, q);
    // Of rows sharing a time (the states before and after an event, or a run
    // of events at one instant) the first and the last are kept.
    const std::size_t n = run.times.size();
    if (n >= 2 && run.times[n - 1] == t && run.times[n - 2] == t) {
      run.qs[n - 1] = q;
      run.vs[n - 1] = v;
      continue;
    }
    run.times.push_back(t);
    run.qs.push_back(q);
    run.vs.push_back(v);
  }
  if (run.times.empty()) return (dir / "trajectory.csv").string() + " has no finite row";
  const auto rows = parse_csv(read_text(dir / "contacts.csv"));
  if (!rows.empty()) {
    const int ct = column_of(rows[0], "time"), cn = column_of(rows[0], "contact"),
              cv = column_of(rows[0], "normal_velocity"), cf = column_of(rows[0], "normal_force"),
              cfr = column_of(rows[0], "friction_force");
    for (std::size_t r = 1; r < rows.size() && ct >= 0 && cn >= 0 && cv >= 0 && cf >= 0 && cfr >= 0; ++r) {
      if (rows[r].size() != rows[0].size()) continue;
      const auto at = [&](int c) { return rows[r][static_cast<std::size_t>(c)]; };
      // One row per contact and time: a contact sampled again at the same
      // instant (a run of events there) keeps its last row.
      std::vector<ContactRow>& here = run.contacts[number(at(ct))];
      const std::string& name = at(cn);
      ContactRow row{name, number(at(cv)), number(at(cf)), number(at(cfr))};
      const auto same = std::find_if(here.begin(), here.end(), [&](const ContactRow& c) { return c.name == name; });
      if (same != here.end()) {
        *same = std::move(row);
      } else {
        here.push_back(std::move(row));
      }
    }
  }
  const auto ev = parse_csv(read_text(dir / "events.csv"));
  if (!ev.empty()) {
    const int ct = column_of(ev[0], "time"), ck = column_of(ev[0], "kind"), cc = column_of(ev[0], "contact"),
              ci = column_of(ev[0], "impulse");
    for (std::size_t r = 1; r < ev.size() && ct >= 0 && ck >= 0 && cc >= 0 && ci >= 0; ++r) {
      if (ev[r].size() != ev[0].size()) continue;
      const auto at = [&](int c) { return ev[r][static_cast<std::size_t>(c)]; };
      run.events.push_back({number(at(ct)), at(ck), at(cc), number(at(ci))});
    }
  }
  return {};
}

// Places the contacts a run names ("shape_a|shape_b#feature") by running
// contact detection on a trajectory row.
class ContactLocator {
 public:
  explicit ContactLocator(const World& world) : model_(world.model()), data_(world.model()) {
    DetectionOptions detection;
    detection.margin = 1e-3;
    detection.self_collision = world.self_collision();
    try {
      detector_.emplace(model_, world.environment(), detection);
    } catch (const std::exception&) {
      // No placement: pages show the motion only.
    }
  }
  // Kinematics and contacts at (q, v).
  void at(const VectorX& q, const VectorX& v) {
    by_name_.clear();
    forward_kinematics(model_, data_, q, v);
    if (!detector_) return;
    detector_->detect(model_, data_, found_);
    const auto& shapes = detector_->shapes();
    for (const Contact& c : found_) {
      by_name_[shapes[static_cast<std::size_t>(c.shape_a)].name + "|" + shapes[static_cast<std::size_t>(c.shape_b)].name +
               "#" + std::to_string(c.feature)] = &c;
    }
  }
  const Contact* find(const std::string& name) const {
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }
  // Velocity of b's material point at world position p relative to a's, tangential part.
  Vec3 slip(const Contact& c, const Vec3& p) const {
    Vec3 s = point_velocity(c.body_b, p) - point_velocity(c.body_a, p);
    return s - c.normal * c.normal.dot(s);
  }
  const Data& data() const { return data_; }

 private:
  Vec3 point_velocity(int b, const Vec3& p) const {
    if (b == 0) return Vec3::Zero();
    const Transform& X = data_.X0[static_cast<std::size_t>(b)];
    const Mat3 R = X.E().transpose();
    return R * data_.v[static_cast<std::size_t>(b)].linear() + (R * data_.v[static_cast<std::size_t>(b)].angular()).cross(p - X.r());
  }
  const Model& model_;
  Data data_;
  std::optional<ContactDetector> detector_;
  std::vector<Contact> found_;
  std::unordered_map<std::string, const Contact*> by_name_;
};

// The trajectory row holding time t (the last of equal times: after an event), or −1.
long row_at(const std::vector<double>& times, double t) {
  const auto it = std::upper_bound(times.begin(), times.end(), t);
  if (it == times.begin()) return -1;
  const long k = static_cast<long>(it - times.begin()) - 1;
  return times[static_cast<std::size_t>(k)] == t ? k : -1;
}

}  // namespace

std::string write_contact_points(const World& world, const fs::path& dir) {
  const Model& model = world.model();
  RunData run;
  const std::string problem = read_run(model, dir, run);
  if (!problem.empty()) return problem;
  ContactLocator locate(world);
  std::string text = "time,contact,body_a,body_b,x,y,z,nx,ny,nz,normal_velocity,sliding_speed,normal_force,friction_force\n";
  const auto add = [&text](double x) {
    std::array<char, 32> buf{};
    const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), x);
    text += ',';
    text.append(buf.data(), res.ptr);
  };
  const auto field = [&text](const std::string& f) {
    text += ',';
    if (f.find_first_of(",\"\n\r") == std::string::npos) {
      text += f;
      return;
    }
    text += '"';
    for (char c : f) text += c == '"' ? std::string("\"\"") : std::string(1, c);
    text += '"';
  };
  for (const auto& [t, rows] : run.contacts) {
    const long k = row_at(run.times, t);
    if (k >= 0) locate.at(run.qs[static_cast<std::size_t>(k)], run.vs[static_cast<std::size_t>(k)]);
    for (const ContactRow& row : rows) {
      if (row.name.rfind("limit:", 0) == 0) continue;  // a joint limit is not a point
      const Contact* c = k >= 0 ? locate.find(row.name) : nullptr;
      std::array<char, 32> buf{};
      const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), t);
      text.append(buf.data(), res.ptr);
      field(row.name);
      field(c ? model.body_name(c->body_a) : "");
      field(c ? model.body_name(c->body_b) : "");
      const double nan = std::nan("");
      const Vec3 p = c ? Vec3(0.5 * (c->point_a + c->point_b)) : Vec3::Constant(nan);
      const Vec3 n = c ? c->normal : Vec3::Constant(nan);
      for (int d = 0; d < 3; ++d) add(p(d));
      for (int d = 0; d < 3; ++d) add(n(d));
      add(row.normal_velocity);
      add(c ? locate.slip(*c, p).norm() : nan);
      add(row.normal_force);
      add(row.friction_force);
      text += '\n';
    }
  }
  write_atomically(dir / "contact_points.csv", text);
  return {};
}

PageOutcome write_view_page(const Model& model, const VectorX& q, const std::string& title, const fs::path& file,
                            const std::string& urdf_path, const std::vector<std::string>& package_dirs) {
  PageOutcome out;
  if (q.size() != model.nq()) throw ArgumentError("a configuration of " + std::to_string(q.size()) +
                                                  " entries for a model with nq = " + std::to_string(model.nq()));
  Scene scene = build_scene(model, {}, {});
  std::vector<std::string> dirs = package_roots(model);
  dirs.insert(dirs.begin(), package_dirs.begin(), package_dirs.end());
  add_visuals(scene, model, urdf_path, "", dirs, 0);
  Data data(model);
  forward_kinematics(model, data, q);
  ordered_json pose = ordered_json::array();
  append_poses(data, scene, pose);
  // Each page body's joint: what the page's own forward kinematics needs.
  // Body b's placement is parent ∘ (Xtree placement) ∘ (joint motion at q).
  ordered_json sliders = ordered_json::array();
  for (std::size_t i = 0; i < scene.body_index.size(); ++i) {
    const int b = scene.body_index[i];
    const Joint& j = model.joint(b);
    const Transform& Xt = model.Xtree(b);
    ordered_json joint;
    joint["name"] = j.name;
    joint["type"] = to_string(j.type);
    joint["axis"] = ordered_json::array({j.axis.x(), j.axis.y(), j.axis.z()});
    joint["q_index"] = j.q_index;
    joint["nq"] = j.nq;
    joint["position"] = ordered_json::array({Xt.r().x(), Xt.r().y(), Xt.r().z()});
    Eigen::Quaterniond r(Mat3(Xt.E().transpose()));
    r.normalize();
    joint["quaternion"] = ordered_json::array({r.x(), r.y(), r.z(), r.w()});
    scene.bodies[i]["joint"] = joint;
    if (j.nq != 1) continue;
    const double lo = model.lower_position_limit()(j.q_index), hi = model.upper_position_limit()(j.q_index);
    const bool revolute = j.type != JointType::Prismatic;
    // Unbounded joints: a turn either way for an angle, a metre for a slide.
    const double span = revolute ? M_PI : 1.0;
    ordered_json s;
    s["joint"] = j.name;
    s["body"] = i;
    s["q_index"] = j.q_index;
    s["type"] = to_string(j.type);
    s["unit"] = revolute ? "rad" : "m";
    s["lower"] = std::isfinite(lo) ? lo : q(j.q_index) - span;
    s["upper"] = std::isfinite(hi) ? hi : q(j.q_index) + span;
    s["limited"] = std::isfinite(lo) && std::isfinite(hi);
    sliders.push_back(s);
  }
  ordered_json qj = ordered_json::array();
  for (Eigen::Index k = 0; k < q.size(); ++k) qj.push_back(q(k));

  ordered_json d = ordered_json::object();
  d["mode"] = "view";
  d["title"] = title;
  d["status"] = "view";
  d["finished"] = true;
  d["message"] = "";
  d["duration"] = 0.0;
  d["end_time"] = 0.0;
  d["recorded_frames"] = 1;
  d["bodies"] = scene.bodies;
  d["statics"] = scene.statics;
  d["fixed"] = scene.fixed;
  d["follow"] = scene.follow;
  d["max_force"] = 0.0;
  d["times"] = ordered_json::array({0.0});
  d["poses"] = ordered_json::array({pose});
  d["contacts"] = ordered_json::array({ordered_json::array()});
  d["impacts"] = ordered_json::array();
  d["events"] = ordered_json::array();
  d["q"] = qj;
  d["sliders"] = sliders;
  std::string why;
  const std::string page = fill_page(d.dump(), title, &why);
  if (page.empty()) {
    out.message = why;
    return out;
  }
  write_atomically(file, page);
  out.written = true;
  out.bytes = page.size();
  out.frames = 1;
  out.recorded_frames = 1;
  return out;
}

PageOutcome write_replay_page(const World& world, const fs::path& dir, const ordered_json& summary,
                              const std::vector<std::string>& package_dirs) {
  PageOutcome out;
  const Model& model = world.model();
  RunData run;
  out.message = read_run(model, dir, run);
  if (!out.message.empty()) return out;
  const std::vector<double>& times = run.times;
  const std::vector<VectorX>& qs = run.qs;
  const std::vector<VectorX>& vs = run.vs;
  const std::vector<EventRow>& events = run.events;
  out.recorded_frames = static_cast<int>(times.size());
  std::set<double> event_times;
  for (const EventRow& e : events) event_times.insert(e.t);
  const double rate = summary.value("output_rate", 0.0);
  const auto output_time = [&](double t) {
    if (!(rate > 0.0)) return false;
    const double k = std::round(t * rate);
    return std::abs(t - k / rate) <= 1e-9 * std::max(1.0, std::abs(t));
  };

  Scene scene = build_scene(model, world.models(), world.environment());
  {
    std::vector<std::string> dirs = package_roots(model);
    dirs.insert(dirs.begin(), package_dirs.begin(), package_dirs.end());
    for (std::size_t m = 0; m < world.models().size(); ++m) {
      const WorldModel& wm = world.models()[m];
      add_visuals(scene, model, wm.source, wm.name + "/", dirs, static_cast<int>(m));
    }
  }
  ContactLocator locate(world);
  const auto& contact_rows = run.contacts;

  // Frames, then decimation to the size budget.
  const double t_end = times.back();
  std::vector<std::size_t> keep(times.size());
  for (std::size_t k = 0; k < keep.size(); ++k) keep[k] = k;
  ordered_json data_json;
  std::string page;
  // The force drawn at the page's reference arrow length: the 90th percentile
  // of the normal forces (an impact-time peak would make the resting ones invisible).
  double max_force = 0.0;
  {
    std::vector<double> all;
    for (const auto& [t, rows] : contact_rows) {
      for (const auto& row : rows) {
        if (std::isfinite(row.normal_force) && row.normal_force > 0.0) all.push_back(row.normal_force);
      }
    }
    if (!all.empty()) {
      const std::size_t k = (all.size() * 9) / 10;
      std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end());
      max_force = all[k];
    }
  }
  for (int attempt = 0; attempt < 8; ++attempt) {
    ordered_json poses = ordered_json::array(), frame_times = ordered_json::array(), contacts = ordered_json::array();
    for (std::size_t k : keep) {
      ordered_json pose = ordered_json::array();
      locate.at(qs[k], vs[k]);
      append_poses(locate.data(), scene, pose);
      poses.push_back(pose);
      frame_times.push_back(times[k]);
      ordered_json here = ordered_json::array();
      const auto it = contact_rows.find(times[k]);
      // A row added at an event (not an output time) has no contacts.csv rows:
      // null tells the page to show those of the output before it.
      if (it == contact_rows.end() && event_times.count(times[k]) && !output_time(times[k])) {
        contacts.push_back(nullptr);
        continue;
      }
      if (it != contact_rows.end()) {
        for (const ContactRow& row : it->second) {
          const Contact* c = locate.find(row.name);
          if (!c) continue;
          const Vec3 p = 0.5 * (c->point_a + c->point_b);
          const Vec3 n = c->normal;
          const Vec3 slip = locate.slip(*c, p);
          const double speed = slip.norm();
          const bool sliding = speed > 1e-4;
          // Friction on b: opposite its slip when sliding; a sticking contact's
          // direction is not in the outputs (only |f_t|), drawn as a ring.
          const Vec3 ft = sliding ? Vec3(-slip / speed * row.friction_force) : Vec3::Zero();
          ordered_json e = ordered_json::array();
          for (int d = 0; d < 3; ++d) e.push_back(rounded(p(d), 1e-5));
          for (int d = 0; d < 3; ++d) e.push_back(rounded(n(d), 1e-4));
          e.push_back(rounded(row.normal_force, 1e-3));
          for (int d = 0; d < 3; ++d) e.push_back(rounded(ft(d), 1e-3));
          e.push_back(rounded(row.friction_force, 1e-3));
          e.push_back(sliding ? 1 : 0);
          here.push_back(e);
        }
      }
      contacts.push_back(here);
    }
    // Impacts: where and along which normal, from the state after the event.
    ordered_json impacts = ordered_json::array();
    {
      std::size_t row = 0;
      for (const EventRow& e : events) {
        if (e.kind != "impact") continue;
        while (row + 1 < times.size() && times[row] < e.t) ++row;
        if (std::abs(times[row] - e.t) > 1e-9) continue;
        locate.at(qs[row], vs[row]);
        const Contact* c = locate.find(e.contact);
        if (!c) continue;
        const Vec3 p = 0.5 * (c->point_a + c->point_b);
        ordered_json j = ordered_json::array({rounded(e.t, 1e-9)});
        for (int d = 0; d < 3; ++d) j.push_back(rounded(p(d), 1e-5));
        for (int d = 0; d < 3; ++d) j.push_back(rounded(c->normal(d), 1e-4));
        j.push_back(rounded(e.impulse, 1e-6));
        impacts.push_back(j);
      }
    }
    // The timeline: one mark per (time, kind), with how many contacts took part.
    ordered_json marks = ordered_json::array();
    for (std::size_t i = 0; i < events.size();) {
      std::size_t k = i;
      std::set<std::string> names;
      while (k < events.size() && events[k].t == events[i].t && events[k].kind == events[i].kind) names.insert(events[k++].contact);
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      if (list.size() > 300) list = list.substr(0, 300) + " …";
      marks.push_back({{"t", events[i].t}, {"kind", events[i].kind}, {"count", names.size()}, {"contacts", list}});
      i = k;
    }
    const bool finished = summary.value("finished", false);
    const std::string status = summary.value("status", std::string("unknown"));
    if (!finished) {
      marks.push_back({{"t", t_end}, {"kind", "stop"}, {"count", 1}, {"contacts", status + ": " + summary.value("message", std::string())}});
    }

    data_json = ordered_json::object();
    data_json["mode"] = "replay";
    data_json["title"] = summary.value("world", std::string("plume run"));
    data_json["status"] = status;
    data_json["finished"] = finished;
    data_json["message"] = summary.value("message", std::string());
    data_json["duration"] = summary.value("duration", t_end);
    data_json["end_time"] = t_end;
    data_json["recorded_frames"] = times.size();
    data_json["bodies"] = scene.bodies;
    data_json["statics"] = scene.statics;
    data_json["fixed"] = scene.fixed;
    data_json["follow"] = scene.follow;
    data_json["max_force"] = max_force;
    data_json["times"] = frame_times;
    data_json["poses"] = poses;
    data_json["contacts"] = contacts;
    data_json["impacts"] = impacts;
    data_json["events"] = marks;
    std::string why;
    page = fill_page(data_json.dump(), data_json["title"].get<std::string>(), &why);
    if (page.empty()) {
      out.message = why;
      return out;
    }
    if (page.size() <= kReplayBudget || keep.size() <= 2) break;
    // Too big: keep the rows nearest to an even grid with fewer frames.
    const double ratio = static_cast<double>(kReplayBudget) / static_cast<double>(page.size());
    const std::size_t target = std::max<std::size_t>(2, static_cast<std::size_t>(0.9 * ratio * static_cast<double>(keep.size())));
    std::vector<std::size_t> fewer;
    std::size_t row = 0;
    for (std::size_t i = 0; i < target; ++i) {
      const double t = times.front() + (t_end - times.front()) * static_cast<double>(i) / static_cast<double>(target - 1);
      while (row + 1 < times.size() && times[row + 1] <= t) ++row;
      if (fewer.empty() || fewer.back() != row) fewer.push_back(row);
    }
    if (fewer.back() != times.size() - 1) fewer.push_back(times.size() - 1);
    keep = fewer;
  }
  write_atomically(dir / "replay.html", page);
  out.written = true;
  out.bytes = page.size();
  out.frames = static_cast<int>(keep.size());
  return out;
}

}  // namespace plume::cli
