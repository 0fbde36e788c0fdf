// URDF → Model: urdfdom parses, this file validates and drives ModelBuilder.
#include "plume/urdf.hpp"

#include <tinyxml2.h>
#include <urdf_parser/urdf_parser.h>

#include <algorithm>
#include <cmath>
#include <console_bridge/console.h>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "inertia_check.hpp"
#include "names.hpp"
#include "plume/contact/environment.hpp"
#include "plume/srdf.hpp"
#include "plume/geometry/convex_hull.hpp"
#include "plume/geometry/mesh.hpp"
#include "plume/error.hpp"
#include "plume/model_builder.hpp"

namespace plume::urdf {

RootJoint parse_root_joint(const std::string& text) {
  if (text == "fixed") return RootJoint::Fixed;
  if (text == "free" || text == "free-flyer" || text == "free_flyer" || text == "floating") {
    return RootJoint::FreeFlyer;
  }
  if (text == "planar") return RootJoint::Planar;
  throw Error("unknown root joint '" + text + "' (expected fixed, free or planar)");
}

const char* to_string(RootJoint root) {
  switch (root) {
    case RootJoint::Fixed: return "fixed";
    case RootJoint::FreeFlyer: return "free";
    case RootJoint::Planar: return "planar";
  }
  return "unknown";
}

namespace {

constexpr double kHalfPi = 1.57079632679489661923;

// Collects urdfdom's console_bridge messages during one parse. console_bridge
// keeps a global handler, so parses are serialised.
class CaptureHandler : public console_bridge::OutputHandler {
 public:
  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_ERROR) errors.push_back(text);
    else if (level == console_bridge::CONSOLE_BRIDGE_LOG_WARN) warnings.push_back(text);
  }
  std::vector<std::string> errors, warnings;
};

std::mutex& parse_mutex() {
  static std::mutex m;
  return m;
}

// Where each link and joint is declared, and the document order of joints.
struct SourceMap {
  std::map<std::string, int> link_line, joint_line, joint_order;
};

class Loader {
 public:
  Loader(std::string source, const LoadOptions& options) : source_(std::move(source)), options_(options) {}

  Model run(const std::string& xml) {
    tinyxml2::XMLDocument doc;
    check_xml(xml, doc);
    ::urdf::ModelInterfaceSharedPtr urdf = parse(xml);
    builder_ = ModelBuilder(urdf->getName());
    builder_.set_gravity(options_.gravity);
    builder_.set_inertia_policy(options_.inertia);
    for (const std::string& w : parser_warnings_) builder_.add_warning(w);
    const ::urdf::LinkConstSharedPtr root = urdf->getRoot();
    if (!root) fail("the URDF has no root link");

    // Attach the root link to the world.
    switch (options_.root) {
      case RootJoint::Fixed: visit_link(*root, 0, Transform::Identity()); break;
      case RootJoint::FreeFlyer: {
        const int b = builder_.add_body(root->name, 0, JointSpec::free_flyer("root_joint"),
                                        Transform::Identity(), RigidInertia::Zero());
        visit_link(*root, b, Transform::Identity());
        break;
      }
      case RootJoint::Planar: {
        // Joint frame: x = world x, y = world z, z = −world y (a +90° turn
        // about x); the link keeps the world's orientation at q = 0.
        const Transform joint_frame = rot_x(kHalfPi);
        const int b = builder_.add_body(root->name, 0, JointSpec::planar("root_joint"),
                                        joint_frame, RigidInertia::Zero());
        visit_link(*root, b, joint_frame.inverse());
        break;
      }
    }
    if (link_errors_.size() == 1) throw UrdfError(link_errors_[0]);
    if (!link_errors_.empty()) {
      std::string all;
      for (const std::string& e : link_errors_) all += (all.empty() ? "" : "; ") + e;
      fail(std::to_string(link_errors_.size()) + " links have unusable inertials: " + all);
    }
    if (visited_.size() != count_links(*urdf)) {
      fail("some links are not connected to the root link '" + root->name + "'");
    }
    check_overrides();
    read_plume_extension(doc);
    for (CollisionShape& s : shapes_) builder_.add_collision(s);
    if (!options_.srdf.empty()) read_srdf(urdf->getName());
    try {
      return builder_.build();
    } catch (const ModelError& e) {
      // Errors from the SRDF start with its own "FILE:LINE: ".
      const std::string what = e.what();
      if (!options_.srdf.empty() && what.rfind(options_.srdf + ":", 0) == 0) throw UrdfError(what);
      fail(what);
    }
    return Model();
  }

 private:
  [[noreturn]] void fail(const std::string& what, int line = 0) const {
    std::ostringstream msg;
    msg << source_;
    if (line > 0) msg << ":" << line;
    msg << ": " << what;
    throw UrdfError(msg.str());
  }
  // "source:line" of a link's or joint's element ("source" when unknown):
  // loader warnings start with it, as errors do.
  std::string where(const std::map<std::string, int>& lines, const std::string& name) const {
    auto it = lines.find(name);
    return it == lines.end() ? source_ : source_ + ":" + std::to_string(it->second);
  }
  void warn_link(const std::string& link, const std::string& what) {
    builder_.add_warning(where(lines_.link_line, link) + ": link '" + link + "': " + what);
  }
  void warn_joint(const std::string& joint, const std::string& what) {  // what: " mimics …", ": axis …"
    builder_.add_warning(where(lines_.joint_line, joint) + ": joint '" + joint + "'" + what);
  }
  [[noreturn]] void fail_link(const std::string& link, const std::string& what) const {
    auto it = lines_.link_line.find(link);
    fail("link '" + link + "': " + what, it == lines_.link_line.end() ? 0 : it->second);
  }
  [[noreturn]] void fail_joint(const std::string& joint, const std::string& what) const {
    auto it = lines_.joint_line.find(joint);
    fail("joint '" + joint + "': " + what, it == lines_.joint_line.end() ? 0 : it->second);
  }

  // Well-formed XML with a <robot> root; remembers where links and joints are.
  void check_xml(const std::string& xml, tinyxml2::XMLDocument& doc) {
    if (xml.find_first_not_of(" \t\r\n") == std::string::npos) fail("the file is empty");
    if (doc.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS) {
      std::string err = doc.ErrorStr() ? doc.ErrorStr() : "parse error";
      fail("malformed XML: " + err, doc.ErrorLineNum());
    }
    const tinyxml2::XMLElement* robot = doc.RootElement();
    if (!robot || std::string(robot->Name()) != "robot") {
      fail("the root element must be <robot>", robot ? robot->GetLineNum() : 0);
    }
    int order = 0;
    std::map<std::string, std::string> parent_of;  // child link → joint
    struct Edge {
      std::string joint, parent, child;
    };
    std::vector<Edge> edges;
    for (const auto* e = robot->FirstChildElement(); e; e = e->NextSiblingElement()) {
      const std::string kind = e->Name();
      if (kind != "link" && kind != "joint") continue;
      const char* name = e->Attribute("name");
      if (!name) fail("<" + kind + "> without a name attribute", e->GetLineNum());
      if (kind == "link") {
        if (!lines_.link_line.emplace(name, e->GetLineNum()).second) fail_link(name, "is defined twice");
        check_inertial_numbers(*e, name);
        continue;
      }
      if (lines_.joint_line.count(name)) fail_joint(name, "is defined twice");
      lines_.joint_line[name] = e->GetLineNum();
      lines_.joint_order[name] = order++;
      check_joint_element(*e, name);
      const auto* pe = e->FirstChildElement("parent");
      const auto* ce = e->FirstChildElement("child");
      const char* pl = pe ? pe->Attribute("link") : nullptr;
      const char* cl = ce ? ce->Attribute("link") : nullptr;
      if (!pl || !cl) fail_joint(name, "needs <parent link=…> and <child link=…>");
      edges.push_back({name, pl, cl});
    }
    check_tree(edges);
  }

  // The links and joints must form one tree. Checked here because urdfdom
  // leaks the links of a cyclic graph (their shared pointers refer to each
  // other) and words some of these errors obscurely.
  template <class Edges>
  void check_tree(const Edges& edges) {
    std::map<std::string, std::string> parent_joint;   // child link → its joint
    std::map<std::string, std::string> parent_link;    // child link → the joint's parent
    std::map<std::string, std::vector<std::string>> children;
    for (const auto& e : edges) {
      if (!lines_.link_line.count(e.parent)) fail_joint(e.joint, "parent link '" + e.parent + "' is not defined");
      if (!lines_.link_line.count(e.child)) fail_joint(e.joint, "child link '" + e.child + "' is not defined");
      if (e.parent == e.child) fail_joint(e.joint, "connects link '" + e.child + "' to itself");
      auto [it, fresh] = parent_joint.emplace(e.child, e.joint);
      if (!fresh) {
        fail_link(e.child, "is the child of two joints, '" + it->second + "' and '" + e.joint + "' (the URDF is not a tree)");
      }
      parent_link[e.child] = e.parent;
      children[e.parent].push_back(e.child);
    }
    // The cycle above `link` (every link on it is a joint's child): fails at
    // the line of the cycle's first joint in the file, naming its links and joints.
    const auto fail_cycle = [&](std::string link, const std::string& why) {
      std::vector<std::string> path;
      std::set<std::string> seen;
      while (seen.insert(link).second) {
        path.push_back(link);
        link = parent_link.at(link);
      }
      path.erase(path.begin(), std::find(path.begin(), path.end(), link));  // the cycle itself
      std::string links, joints, first;
      for (const std::string& l : path) {
        const std::string& j = parent_joint.at(l);
        links += "'" + l + "' <- ";
        joints += (joints.empty() ? "'" : ", '") + j + "'";
        if (first.empty() || lines_.joint_order.at(j) < lines_.joint_order.at(first)) first = j;
      }
      fail_joint(first, "closes a cycle of links " + links + "'" + path.front() + "' (joints " + joints + "): " + why);
    };
    std::vector<std::string> roots;  // in file order
    for (const auto& [link, line] : lines_.link_line) {
      if (!parent_joint.count(link)) roots.push_back(link);
    }
    std::sort(roots.begin(), roots.end(),
              [&](const std::string& a, const std::string& b) { return lines_.link_line.at(a) < lines_.link_line.at(b); });
    if (lines_.link_line.empty()) fail("the robot has no <link>");
    if (roots.empty()) {
      fail_cycle(lines_.link_line.begin()->first, "there is no root link (every link is a joint's child)");
    }
    if (roots.size() > 1) {
      fail("two root links, '" + roots[0] + "' (line " + std::to_string(lines_.link_line.at(roots[0])) + ") and '" +
               roots[1] + "': every link but the root must be the child of a joint",
           lines_.link_line.at(roots[1]));
    }
    std::set<std::string> reached{roots[0]};
    std::vector<std::string> stack{roots[0]};
    while (!stack.empty()) {
      const std::string link = stack.back();
      stack.pop_back();
      for (const std::string& c : children[link]) {
        if (reached.insert(c).second) stack.push_back(c);
      }
    }
    for (const auto& [link, line] : lines_.link_line) {
      if (!reached.count(link)) fail_cycle(link, "not connected to the root link '" + roots[0] + "'");
    }
  }

  // The numbers of <inertial> must be finite: urdfdom rejects "nan" without
  // saying where; here the message gives the element's line and the value.
  void check_inertial_numbers(const tinyxml2::XMLElement& link, const std::string& name) const {
    const auto* inertial = link.FirstChildElement("inertial");
    if (!inertial) return;
    const auto check = [&](const tinyxml2::XMLElement* e, const char* element, const char* attribute) {
      const char* text = e ? e->Attribute(attribute) : nullptr;
      if (!text) return;
      const std::string value(text);
      const std::size_t first = value.find_first_not_of(" \t\r\n");
      std::size_t used = 0;
      double x = 0.0;
      try {
        x = first == std::string::npos ? 0.0 : std::stod(value.substr(first), &used);
      } catch (const std::exception&) {
        return;  // not a number, or out of range: urdfdom words that case
      }
      if (used > 0 && !std::isfinite(x)) {
        fail("link '" + name + "': " + element + " " + attribute + " = '" + value + "' is not a finite number",
             e->GetLineNum());
      }
    };
    check(inertial->FirstChildElement("mass"), "mass", "value");
    const auto* inertia = inertial->FirstChildElement("inertia");
    for (const char* a : {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"}) check(inertia, "inertia", a);
  }

  // urdfdom silently treats an unknown joint type as an error with a terse
  // message; name it here.
  void check_joint_element(const tinyxml2::XMLElement& e, const std::string& name) const {
    static const std::set<std::string> known{"revolute", "continuous", "prismatic",
                                             "fixed",    "floating",   "planar"};
    const char* type = e.Attribute("type");
    if (!type) fail_joint(name, "has no type attribute");
    if (!known.count(type)) {
      fail_joint(name, std::string("unknown joint type '") + type +
                           "' (expected revolute, continuous, prismatic, fixed, floating or planar)");
    }
  }

  ::urdf::ModelInterfaceSharedPtr parse(const std::string& xml) {
    std::lock_guard<std::mutex> lock(parse_mutex());
    CaptureHandler capture;
    console_bridge::useOutputHandler(&capture);
    ::urdf::ModelInterfaceSharedPtr model;
    try {
      model = ::urdf::parseURDF(xml);
    } catch (const std::exception& e) {
      capture.errors.push_back(e.what());
    }
    console_bridge::restorePreviousOutputHandler();
    // urdfdom sometimes logs an error and still returns a model holding
    // whatever it had parsed (e.g. an inertial with an unreadable number):
    // any logged error is fatal.
    if (!model || !capture.errors.empty()) {
      std::string why;
      for (const std::string& m : capture.errors) why += (why.empty() ? "" : "; ") + m;
      fail("invalid URDF: " + (why.empty() ? std::string("urdfdom rejected it") : why));
    }
    for (const std::string& w : capture.warnings) parser_warnings_.push_back("urdfdom: " + w);
    return model;
  }

  static std::size_t count_links(const ::urdf::ModelInterface& m) {
    std::vector<::urdf::LinkSharedPtr> links;
    m.getLinks(links);
    return links.size();
  }

  Transform pose_of(const ::urdf::Pose& p, const std::string& what_link, const std::string& what) {
    const Vec3 t(p.position.x, p.position.y, p.position.z);
    const Eigen::Quaterniond r(p.rotation.w, p.rotation.x, p.rotation.y, p.rotation.z);
    if (!t.allFinite() || !r.coeffs().allFinite()) fail_link(what_link, what + " has a non-finite value");
    return Transform::from_pose(r.normalized().toRotationMatrix(), t);
  }

  Transform joint_origin(const ::urdf::Joint& j) {
    const ::urdf::Pose& p = j.parent_to_joint_origin_transform;
    const Vec3 t(p.position.x, p.position.y, p.position.z);
    const Eigen::Quaterniond r(p.rotation.w, p.rotation.x, p.rotation.y, p.rotation.z);
    if (!t.allFinite() || !r.coeffs().allFinite()) fail_joint(j.name, "origin has a non-finite value");
    return Transform::from_pose(r.normalized().toRotationMatrix(), t);
  }

  // Adds link L, rigidly attached to `body` with X_L_body (body → link coordinates).
  void visit_link(const ::urdf::Link& link, int body, const Transform& X_L_body) {
    if (!visited_.insert(link.name).second) {
      fail_link(link.name, "is the child of more than one joint (the URDF is not a tree)");
    }
    builder_.add_frame(link.name, body, X_L_body);
    add_inertial(link, body, X_L_body);
    add_collisions(link, body, X_L_body);

    // Children in document order.
    std::vector<::urdf::JointSharedPtr> joints = link.child_joints;
    std::stable_sort(joints.begin(), joints.end(), [&](const auto& a, const auto& b) {
      return lines_.joint_order[a->name] < lines_.joint_order[b->name];
    });
    for (const auto& jp : joints) {
      const ::urdf::Joint& j = *jp;
      std::shared_ptr<::urdf::Link> child;
      for (const auto& c : link.child_links) {
        if (c->name == j.child_link_name) child = c;
      }
      if (!child) fail_joint(j.name, "child link '" + j.child_link_name + "' not found");
      const Transform X_J_body = joint_origin(j) * X_L_body;
      if (j.type == ::urdf::Joint::FIXED) {
        visit_link(*child, body, X_J_body);
        continue;
      }
      JointSpec spec = joint_spec(j);
      Transform Xtree = X_J_body;
      Transform X_child = Transform::Identity();
      if (spec.type == JointType::Planar) {
        // Turn the joint frame so that its z axis is the plane normal.
        const Mat3 R = Eigen::Quaterniond::FromTwoVectors(Vec3::UnitZ(), spec.axis).toRotationMatrix();
        const Transform turn = Transform::rotation(R);
        Xtree = turn * X_J_body;
        X_child = turn.inverse();
      }
      const int b = builder_.add_body(child->name, body, spec, Xtree, RigidInertia::Zero());
      visit_link(*child, b, X_child);
    }
  }

  JointSpec joint_spec(const ::urdf::Joint& j) {
    if (j.mimic) {
      std::ostringstream w;
      w << " mimics '" << j.mimic->joint_name << "' (multiplier "
        << j.mimic->multiplier << ", offset " << j.mimic->offset
        << "); it is loaded as an independent joint";
      if (options_.reject_mimic) fail_joint(j.name, "mimic joints are rejected by the load options (it mimics '" + j.mimic->joint_name + "')");
      warn_joint(j.name, w.str());
    }
    JointSpec s;
    s.name = j.name;
    const Vec3 axis(j.axis.x, j.axis.y, j.axis.z);
    if (!axis.allFinite()) fail_joint(j.name, "axis has a non-finite value");
    switch (j.type) {
      case ::urdf::Joint::REVOLUTE: s.type = JointType::Revolute; break;
      case ::urdf::Joint::CONTINUOUS: s.type = JointType::Continuous; break;
      case ::urdf::Joint::PRISMATIC: s.type = JointType::Prismatic; break;
      case ::urdf::Joint::PLANAR: s.type = JointType::Planar; break;
      case ::urdf::Joint::FLOATING: s.type = JointType::FreeFlyer; break;
      default: fail_joint(j.name, "unknown joint type");
    }
    if (s.type != JointType::FreeFlyer) {
      const double n = axis.norm();
      if (!(n > 1e-12)) fail_joint(j.name, "axis is zero");
      if (std::abs(n - 1.0) > 1e-9) {
        std::ostringstream w;
        w << ": axis (" << axis.transpose() << ") has length " << n << " and was normalised";
        warn_joint(j.name, w.str());
      }
      s.axis = axis / n;
    }
    if (j.limits && (s.type == JointType::Revolute || s.type == JointType::Prismatic ||
                     s.type == JointType::Continuous)) {
      const auto& L = *j.limits;
      if (!std::isfinite(L.lower) || !std::isfinite(L.upper) || std::isnan(L.effort) ||
          std::isnan(L.velocity)) {
        fail_joint(j.name, "limit has a non-finite value");
      }
      if (L.effort < 0.0 || L.velocity < 0.0) fail_joint(j.name, "limit effort and velocity must be non-negative");
      s.effort = L.effort;
      s.velocity = L.velocity;
      if (s.type != JointType::Continuous) {
        if (L.lower > L.upper) {
          std::ostringstream m;
          m << "lower limit " << L.lower << " exceeds upper limit " << L.upper;
          fail_joint(j.name, m.str());
        }
        if (L.lower == 0.0 && L.upper == 0.0) {
          warn_joint(j.name, ": limits lower = upper = 0 are read as no position limit");
        } else {
          s.lower = L.lower;
          s.upper = L.upper;
        }
      }
    }
    if (j.dynamics) {
      if (!std::isfinite(j.dynamics->damping) || !std::isfinite(j.dynamics->friction)) {
        fail_joint(j.name, "dynamics has a non-finite value");
      }
      if (j.dynamics->damping < 0.0 || j.dynamics->friction < 0.0) {
        fail_joint(j.name, "dynamics damping and friction must be non-negative");
      }
      s.damping = j.dynamics->damping;
      s.friction = j.dynamics->friction;
    }
    return s;
  }

  void add_inertial(const ::urdf::Link& link, int body, const Transform& X_L_body) {
    if (!link.inertial) return;
    const ::urdf::Inertial& in = *link.inertial;
    const Transform X_com_L = pose_of(in.origin, link.name, "inertial origin");
    Mat3 Ic;
    Ic << in.ixx, in.ixy, in.ixz, in.ixy, in.iyy, in.iyz, in.ixz, in.iyz, in.izz;
    const std::string why = detail::inertia_problem(in.mass, Ic);
    if (!why.empty()) {
      link_errors_.push_back(where(lines_.link_line, link.name) + ": link '" + link.name + "': " + why);
      return;
    }
    // Inertia about the COM in the inertial frame → link frame → body frame.
    const Mat3 R = X_com_L.pose_rotation();
    const RigidInertia I_L =
        RigidInertia::from_mass_com_inertia(in.mass, X_com_L.r(), R * Ic * R.transpose());
    builder_.add_inertia(body, X_L_body.apply_transpose(I_L),
                         "link '" + link.name + "' (" + where(lines_.link_line, link.name) + ")");
  }

  void add_collisions(const ::urdf::Link& link, int body, const Transform& X_L_body) {
    int k = 0;
    const auto override_it = options_.collision_overrides.find(link.name);
    if (override_it != options_.collision_overrides.end()) {
      for (const LinkCollision& given : override_it->second) {
        CollisionShape s;
        s.link = link.name;
        s.name = link.name + "/collision_" + std::to_string(k++);
        s.body = body;
        s.placement = given.origin * X_L_body;
        s.geometry = given.geometry;
        s.material = given.material;
        try {
          check_geometry(s.geometry, "collision '" + s.name + "'");
        } catch (const Error& e) {
          fail_link(link.name, e.what());
        }
        shapes_.push_back(s);
      }
      return;
    }
    for (const auto& c : link.collision_array) {
      if (!c || !c->geometry) continue;
      CollisionShape s;
      s.link = link.name;
      s.name = !c->name.empty() ? c->name : link.name + "/collision_" + std::to_string(k);
      ++k;
      s.body = body;
      s.placement = pose_of(c->origin, link.name, "collision origin") * X_L_body;
      const ::urdf::Geometry& g = *c->geometry;
      auto nonneg = [&](double x, const char* what) {
        if (!std::isfinite(x) || x < 0.0) {
          std::ostringstream m;
          m << "collision '" << s.name << "': " << what << " must be finite and non-negative (got " << x << ")";
          fail_link(link.name, m.str());
        }
        return x;
      };
      switch (g.type) {
        case ::urdf::Geometry::SPHERE:
          s.geometry = Sphere{nonneg(static_cast<const ::urdf::Sphere&>(g).radius, "sphere radius")};
          break;
        case ::urdf::Geometry::BOX: {
          const auto& d = static_cast<const ::urdf::Box&>(g).dim;
          s.geometry = Box{Vec3(nonneg(d.x, "box size"), nonneg(d.y, "box size"), nonneg(d.z, "box size"))};
          break;
        }
        case ::urdf::Geometry::CYLINDER: {
          const auto& cy = static_cast<const ::urdf::Cylinder&>(g);
          s.geometry = Cylinder{nonneg(cy.radius, "cylinder radius"), nonneg(cy.length, "cylinder length")};
          break;
        }
        case ::urdf::Geometry::MESH: {
          const auto& m = static_cast<const ::urdf::Mesh&>(g);
          Mesh mesh;
          mesh.filename = m.filename;
          mesh.scale = Vec3(m.scale.x, m.scale.y, m.scale.z);
          load_mesh(link.name, s.name, mesh);
          s.geometry = mesh;
          break;
        }
      }
      shapes_.push_back(s);
    }
  }

  // A collision mesh: resolved, read and hulled once per file and scale
  // (robots reuse one mesh for several links), or its problem recorded.
  void load_mesh(const std::string& link, const std::string& shape, Mesh& mesh) {
    if (options_.collision_meshes == CollisionMeshes::Skip) {
      mesh.problem = "collision meshes were not loaded (LoadOptions::collision_meshes is Skip)";
      return;
    }
    try {
      mesh.resolved = resolve_uri(mesh.filename, source_,
                                  options_.package_dirs, options_.search_environment);
      const std::string key = mesh.resolved + "|" + std::to_string(mesh.scale.x()) + "," +
                              std::to_string(mesh.scale.y()) + "," + std::to_string(mesh.scale.z());
      auto it = hulls_.find(key);
      if (it == hulls_.end()) {
        const TriangleMesh tm = read_mesh(mesh.resolved, mesh.scale);
        it = hulls_.emplace(key, std::make_shared<const ConvexHull>(
                                     ConvexHull::from_points(tm.vertices, "mesh '" + mesh.resolved + "'"))).first;
      }
      mesh.hull = it->second;
    } catch (const Error& e) {
      const std::string what = "collision '" + shape + "': mesh '" + mesh.filename + "': " + e.what();
      if (options_.collision_meshes == CollisionMeshes::Load) fail_link(link, what);
      mesh.hull.reset();
      mesh.problem = e.what();
      warn_link(link, what + "; the shape is not usable for contact");
    }
  }

  // Every overridden link must exist (a typo would leave the URDF's shapes in place).
  void check_overrides() const {
    for (const auto& [link, shapes] : options_.collision_overrides) {
      if (visited_.count(link)) continue;
      std::vector<std::string> links(visited_.begin(), visited_.end());
      fail("collision shapes are given for link '" + link + "', which the URDF does not have" +
           detail::did_you_mean(link, links));
    }
  }

  // The SRDF's group states and disabled collision pairs (LoadOptions::srdf).
  void read_srdf(const std::string& robot) {
    const srdf::Description d = srdf::read(options_.srdf);
    if (!d.robot.empty() && d.robot != robot) {
      builder_.add_warning(d.source + ": the SRDF is for robot '" + d.robot + "', the URDF is '" + robot + "'");
    }
    for (const srdf::GroupState& g : d.group_states) {
      NamedConfigurationSpec spec;
      spec.name = g.name;
      spec.group = g.group;
      for (const srdf::JointValue& v : g.joints) {
        spec.joints.push_back({v.joint, v.values, d.source + ":" + std::to_string(v.line)});
      }
      try {
        builder_.add_named_configuration(spec);
      } catch (const ModelError& e) {
        throw UrdfError(d.source + ":" + std::to_string(g.line) + ": " + e.what());
      }
    }
    for (const srdf::DisabledCollision& c : d.disabled_collisions) {
      builder_.disable_collision(c.link1, c.link2, d.source + ":" + std::to_string(c.line));
    }
  }

  // <plume><contact link="…" mu="…" restitution="…" stiffness="…" damping="…"/></plume>
  void read_plume_extension(const tinyxml2::XMLDocument& doc) {
    const tinyxml2::XMLElement* robot = doc.RootElement();
    for (const auto* ext = robot->FirstChildElement("plume"); ext; ext = ext->NextSiblingElement("plume")) {
      for (const auto* e = ext->FirstChildElement(); e; e = e->NextSiblingElement()) {
        const int line = e->GetLineNum();
        if (std::string(e->Name()) != "contact") {
          fail(std::string("<plume>: unknown element <") + e->Name() + "> (expected <contact>)", line);
        }
        const char* link = e->Attribute("link");
        if (!link) fail("<plume><contact>: the 'link' attribute is required", line);
        if (!visited_.count(link)) fail(std::string("<plume><contact>: no link named '") + link + "'", line);
        ContactMaterial mat;
        for (const auto* a = e->FirstAttribute(); a; a = a->Next()) {
          const std::string name = a->Name();
          if (name == "link") continue;
          double value = 0.0;
          if (a->QueryDoubleValue(&value) != tinyxml2::XML_SUCCESS || !std::isfinite(value) || value < 0.0) {
            fail("<plume><contact link=\"" + std::string(link) + "\">: attribute '" + name +
                     "' must be a finite non-negative number (got '" + a->Value() + "')",
                 line);
          }
          if (name == "mu") mat.mu = value;
          else if (name == "restitution") {
            if (value > 1.0) fail("<plume><contact>: restitution must be within [0, 1]", line);
            mat.restitution = value;
          } else if (name == "stiffness") mat.stiffness = value;
          else if (name == "damping") mat.damping = value;
          else fail("<plume><contact>: unknown attribute '" + name + "' (expected link, mu, restitution, stiffness, damping)", line);
        }
        for (CollisionShape& s : shapes_) {
          if (s.link != link) continue;
          if (mat.mu) s.material.mu = mat.mu;
          if (mat.restitution) s.material.restitution = mat.restitution;
          if (mat.stiffness) s.material.stiffness = mat.stiffness;
          if (mat.damping) s.material.damping = mat.damping;
        }
      }
    }
  }

  std::string source_;
  LoadOptions options_;
  SourceMap lines_;
  ModelBuilder builder_;
  std::set<std::string> visited_;
  std::vector<CollisionShape> shapes_;
  std::vector<std::string> parser_warnings_;
  std::vector<std::string> link_errors_;  // every link whose <inertial> is unusable
  std::map<std::string, std::shared_ptr<const ConvexHull>> hulls_;  // by resolved file and scale
};

}  // namespace

Model load_string(const std::string& xml, const LoadOptions& options, const std::string& source_name) {
  return Loader(source_name, options).run(xml);
}

Model load(const std::string& path, const LoadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UrdfError(path + ": cannot open the file (missing or unreadable)");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw UrdfError(path + ": error while reading the file");
  return load_string(buf.str(), options, path);
}

}  // namespace plume::urdf
