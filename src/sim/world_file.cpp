// World files (docs/world_format.md): XML read with tinyxml2 into a Scenario
// (World, SimulationOptions, PD controller).
//
// The reader is strict on purpose: an unknown element or attribute, a
// number that is not finite, a vector of the wrong length, a repeated
// singleton element are errors, because a typo that is silently ignored
// gives a simulation of a different world. Every error is a WorldError whose
// message reads "FILE:LINE: <element>: what is wrong".
#include "plume/sim/world_file.hpp"

#include <tinyxml2.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "plume/configuration.hpp"
#include "plume/error.hpp"
#include "plume/urdf.hpp"
#include "../names.hpp"

namespace plume {

namespace {

namespace fs = std::filesystem;
using tinyxml2::XMLElement;

// Constraints on a scalar attribute.
enum class Range { Any, Positive, NonNegative, UnitInterval };

const char* describe(Range r) {
  switch (r) {
    case Range::Any: return "finite";
    case Range::Positive: return "finite and positive";
    case Range::NonNegative: return "finite and non-negative";
    case Range::UnitInterval: return "within [0, 1]";
  }
  return "";
}

bool in_range(double x, Range r) {
  if (!std::isfinite(x)) return false;
  switch (r) {
    case Range::Any: return true;
    case Range::Positive: return x > 0.0;
    case Range::NonNegative: return x >= 0.0;
    case Range::UnitInterval: return x >= 0.0 && x <= 1.0;
  }
  return false;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && is_space(s[a])) ++a;
  while (b > a && is_space(s[b - 1])) --b;
  return s.substr(a, b - a);
}

// Parses one number token exactly (no trailing characters). Accepts a
// leading '+'; rejects hexadecimal. Non-finite values parse (the caller
// rejects them with a better message).
bool parse_double(const std::string& token, double& x) {
  const char* first = token.data();
  const char* last = token.data() + token.size();
  if (first != last && *first == '+') ++first;
  if (first == last) return false;
  const auto [ptr, ec] = std::from_chars(first, last, x, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) {
    // Overflow: report as infinite; underflow: as zero (std::from_chars leaves x unchanged).
    x = (*first == '-') ? -HUGE_VAL : HUGE_VAL;
    const std::string digits(first, last);
    const std::size_t e = digits.find_first_of("eE");
    if (e != std::string::npos && e + 1 < digits.size() && digits[e + 1] == '-') x = 0.0;
    return ptr == last;
  }
  return ec == std::errc() && ptr == last;
}

// Splits "1 2 3", "1,2,3" or "1, 2, 3" into tokens; an empty entry (",,",
// a leading or trailing comma) gives an empty token, reported by the caller.
std::vector<std::string> split_vector(const std::string& text) {
  std::vector<std::string> tokens;
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n && is_space(text[i])) ++i;
  if (i == n) return tokens;
  while (true) {
    std::size_t start = i;
    while (i < n && !is_space(text[i]) && text[i] != ',') ++i;
    tokens.push_back(text.substr(start, i - start));
    while (i < n && is_space(text[i])) ++i;
    if (i == n) break;
    if (text[i] == ',') {
      ++i;
      while (i < n && is_space(text[i])) ++i;
      if (i == n) {
        tokens.emplace_back();  // trailing comma
        break;
      }
    }
  }
  return tokens;
}

// Everything the reader knows about one <model> element.
struct ModelEntry {
  const XMLElement* element = nullptr;
  std::string name;
  std::string path;
  urdf::RootJoint root = urdf::RootJoint::Fixed;
  Model model;
  VectorX q0;  // its initial configuration (neutral unless <state q> says otherwise)
  bool collision = true;  // collision="none" takes it out of contact
};

class WorldReader {
 public:
  WorldReader(std::string source, fs::path base, WorldFileOptions defaults)
      : source_(std::move(source)), base_(std::move(base)), defaults_(std::move(defaults)) {}

  Scenario read(const std::string& xml) {
    tinyxml2::XMLDocument doc;
    const tinyxml2::XMLError err = doc.Parse(xml.data(), xml.size());
    if (err == tinyxml2::XML_ERROR_EMPTY_DOCUMENT || (err == tinyxml2::XML_SUCCESS && !doc.RootElement())) {
      throw WorldError(source_ + ":1: <world>: the file is empty (expected a <world> element)");
    }
    if (err != tinyxml2::XML_SUCCESS) malformed(doc);
    const XMLElement* world = doc.RootElement();
    if (std::string(world->Name()) != "world") {
      fail(world, "the root element must be <world>");
    }
    if (const XMLElement* extra = world->NextSiblingElement()) {
      fail(extra, "a second top-level element after <world> (a world file holds exactly one <world>)");
    }
    return read_world(world);
  }

 private:
  std::string source_;
  fs::path base_;
  WorldFileOptions defaults_;

  // ---- messages ------------------------------------------------------------------------

  std::string where(const XMLElement* e) const {
    return source_ + ":" + std::to_string(e->GetLineNum()) + ": <" + e->Name() + ">: ";
  }

  [[noreturn]] void fail(const XMLElement* e, const std::string& message) const {
    throw WorldError(where(e) + message);
  }

  [[noreturn]] void malformed(const tinyxml2::XMLDocument& doc) const {
    // tinyxml2 reports the line where the offending element (or text) starts and,
    // for element errors, its name ("… Line number=N: XMLElement name=model").
    const std::string detail = doc.ErrorStr() ? doc.ErrorStr() : "";
    std::string element = "world";
    const std::size_t name = detail.find("XMLElement name=");
    if (name != std::string::npos) {
      std::string n = detail.substr(name + 16);
      const std::size_t end = n.find_first_of(" \t\n\"'");
      if (end != std::string::npos) n = n.substr(0, end);
      if (!n.empty()) element = n;
    }
    std::string what;
    switch (doc.ErrorID()) {
      case tinyxml2::XML_ERROR_MISMATCHED_ELEMENT: what = "the element is not closed by its matching end tag"; break;
      case tinyxml2::XML_ERROR_PARSING_ELEMENT: what = "the element is malformed or not closed"; break;
      case tinyxml2::XML_ERROR_PARSING_ATTRIBUTE:
        what = "a malformed attribute (a missing quote or '=', or an attribute given twice)";
        break;
      case tinyxml2::XML_ERROR_PARSING_TEXT: what = "text that is not XML"; break;
      case tinyxml2::XML_ERROR_PARSING_COMMENT: what = "a comment that is not closed"; break;
      case tinyxml2::XML_ERROR_PARSING_DECLARATION: what = "a malformed <?xml … ?> declaration"; break;
      case tinyxml2::XML_ERROR_PARSING_CDATA: what = "a malformed CDATA section"; break;
      case tinyxml2::XML_ERROR_PARSING_UNKNOWN: what = "a malformed <! … > construct"; break;
      case tinyxml2::XML_ERROR_PARSING: what = "the file ends before the element is closed, or is not XML"; break;
      default: {
        what = doc.ErrorName();
        if (what.rfind("XML_ERROR_", 0) == 0) what = what.substr(10);
        std::transform(what.begin(), what.end(), what.begin(), [](char c) {
          return c == '_' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        });
      }
    }
    const int line = std::max(1, doc.ErrorLineNum());
    throw WorldError(source_ + ":" + std::to_string(line) + ": <" + element + ">: malformed XML: " + what);
  }

  // ---- structure -------------------------------------------------------------------------

  void check_attributes(const XMLElement* e, std::initializer_list<const char*> allowed) const {
    for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
      const std::string name = a->Name();
      bool ok = false;
      for (const char* x : allowed) ok = ok || name == x;
      if (!ok) {
        std::string list;
        for (const char* x : allowed) list += (list.empty() ? "" : ", ") + std::string(x);
        fail(e, "unknown attribute '" + name + "'" +
                    (list.empty() ? std::string(" (this element takes no attributes)") : " (expected one of: " + list + ")"));
      }
    }
  }

  // Text other than whitespace inside an element is a mistake (values go in attributes).
  void check_no_text(const XMLElement* e) const {
    for (const tinyxml2::XMLNode* n = e->FirstChild(); n; n = n->NextSibling()) {
      if (const tinyxml2::XMLText* t = n->ToText()) {
        if (!trim(t->Value() ? t->Value() : "").empty()) {
          fail(e, "unexpected text '" + trim(t->Value()) + "' (values are given as attributes)");
        }
      }
    }
  }

  void check_no_children(const XMLElement* e) const {
    check_no_text(e);
    if (const XMLElement* c = e->FirstChildElement()) {
      fail(c, std::string("unknown element inside <") + e->Name() + "> (it has no child elements)");
    }
  }

  // ---- attributes ----------------------------------------------------------------------------

  static std::optional<std::string> attribute(const XMLElement* e, const char* name) {
    const char* v = e->Attribute(name);
    if (!v) return std::nullopt;
    return std::string(v);
  }

  std::string required(const XMLElement* e, const char* name) const {
    std::optional<std::string> v = attribute(e, name);
    if (!v) fail(e, std::string("missing attribute '") + name + "'");
    return *v;
  }

  std::optional<double> number(const XMLElement* e, const char* name, Range range = Range::Any) const {
    const std::optional<std::string> text = attribute(e, name);
    if (!text) return std::nullopt;
    const std::string token = trim(*text);
    double x = 0.0;
    if (!parse_double(token, x)) fail(e, std::string(name) + "=\"" + *text + "\" is not a number");
    if (!std::isfinite(x)) fail(e, std::string(name) + "=\"" + *text + "\" is not finite");
    if (!in_range(x, range)) fail(e, std::string(name) + "=\"" + *text + "\" must be " + describe(range));
    return x;
  }

  double number_or(const XMLElement* e, const char* name, double fallback, Range range = Range::Any) const {
    return number(e, name, range).value_or(fallback);
  }

  // An integer given as a number with no fractional part ("8", "5e7"), at least `minimum`.
  std::optional<long> integer(const XMLElement* e, const char* name, long minimum) const {
    const std::optional<double> x = number(e, name);
    if (!x) return std::nullopt;
    if (*x != std::floor(*x) || *x < static_cast<double>(minimum) || *x > 9.0e15) {
      fail(e, std::string(name) + "=\"" + *attribute(e, name) + "\" must be an integer ≥ " + std::to_string(minimum));
    }
    return static_cast<long>(*x);
  }

  std::optional<bool> boolean(const XMLElement* e, const char* name) const {
    const std::optional<std::string> text = attribute(e, name);
    if (!text) return std::nullopt;
    const std::string t = trim(*text);
    if (t == "true" || t == "1") return true;
    if (t == "false" || t == "0") return false;
    fail(e, std::string(name) + "=\"" + *text + "\" must be true or false");
  }

  // A vector attribute. `expected` < 0: any length ≥ 1; `what` explains the
  // expected length in the message ("nq of model 'quad'").
  std::optional<VectorX> vector(const XMLElement* e, const char* name, Eigen::Index expected = -1,
                                const std::string& what = "") const {
    const std::optional<std::string> text = attribute(e, name);
    if (!text) return std::nullopt;
    const std::vector<std::string> tokens = split_vector(*text);
    if (tokens.empty()) fail(e, std::string(name) + " is empty" + expectation(expected, what));
    VectorX x(static_cast<Eigen::Index>(tokens.size()));
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const std::string entry = std::string(name) + " entry " + std::to_string(i);
      if (tokens[i].empty()) fail(e, entry + " is empty (separate numbers by spaces or single commas)");
      double v = 0.0;
      if (!parse_double(tokens[i], v)) fail(e, entry + " ('" + tokens[i] + "') is not a number");
      if (!std::isfinite(v)) fail(e, entry + " ('" + tokens[i] + "') is not finite");
      x(static_cast<Eigen::Index>(i)) = v;
    }
    if (expected >= 0 && x.size() != expected) {
      fail(e, std::string(name) + " has " + std::to_string(x.size()) + " entries" + expectation(expected, what));
    }
    return x;
  }

  static std::string expectation(Eigen::Index expected, const std::string& what) {
    if (expected < 0) return "";
    return ", expected " + std::to_string(expected) + (what.empty() ? "" : " (" + what + ")");
  }

  std::optional<Vec3> vec3(const XMLElement* e, const char* name) const {
    const std::optional<VectorX> x = vector(e, name, 3, "x y z");
    if (!x) return std::nullopt;
    return Vec3(*x);
  }

  // URDF convention: R = Rz(yaw) Ry(pitch) Rx(roll).
  static Mat3 rpy_rotation(const Vec3& rpy) {
    return (Eigen::AngleAxisd(rpy.z(), Vec3::UnitZ()) * Eigen::AngleAxisd(rpy.y(), Vec3::UnitY()) *
            Eigen::AngleAxisd(rpy.x(), Vec3::UnitX()))
        .toRotationMatrix();
  }

  ContactMaterial material(const XMLElement* e) const {
    ContactMaterial m;
    m.mu = number(e, "mu", Range::NonNegative);
    m.restitution = number(e, "restitution", Range::UnitInterval);
    m.stiffness = number(e, "stiffness", Range::Positive);
    m.damping = number(e, "damping", Range::NonNegative);
    return m;
  }

  // Contact parameters of a <contact> element on top of `base`.
  ContactParameters contact_parameters(const XMLElement* e, ContactParameters p) const {
    p.mu = number_or(e, "mu", p.mu, Range::NonNegative);
    p.restitution = number_or(e, "restitution", p.restitution, Range::UnitInterval);
    p.stiffness = number_or(e, "stiffness", p.stiffness, Range::Positive);
    p.damping = number_or(e, "damping", p.damping, Range::NonNegative);
    p.tangential_stiffness = number_or(e, "tangential_stiffness", p.tangential_stiffness, Range::Positive);
    p.tangential_damping = number_or(e, "tangential_damping", p.tangential_damping, Range::NonNegative);
    return p;
  }

  void check_name(const std::string& name, const XMLElement* e) const {
    if (name.empty() || name.find_first_of("/|#,\"") != std::string::npos ||
        std::any_of(name.begin(), name.end(), is_space)) {
      fail(e, "name '" + name + "' must be non-empty without spaces or any of / | # , \"");
    }
  }

  // ---- the world -------------------------------------------------------------------------------

  Scenario read_world(const XMLElement* world) {
    check_attributes(world, {"gravity", "name"});
    check_no_text(world);
    const Vec3 gravity = vec3(world, "gravity").value_or(Vec3(0.0, 0.0, -9.81));

    // Sort the children; reject unknown elements and repeated singletons.
    std::vector<const XMLElement*> models, shapes, pair_contacts, controllers;
    const XMLElement* default_contact = nullptr;
    const XMLElement* simulate = nullptr;
    for (const XMLElement* c = world->FirstChildElement(); c; c = c->NextSiblingElement()) {
      const std::string tag = c->Name();
      if (tag == "model") {
        models.push_back(c);
      } else if (tag == "ground" || tag == "box" || tag == "sphere" || tag == "capsule" || tag == "cylinder") {
        shapes.push_back(c);
      } else if (tag == "contact") {
        if (c->Attribute("a") || c->Attribute("b")) {
          pair_contacts.push_back(c);
        } else {
          if (default_contact) fail(c, "a second default <contact> (the first is on line " +
                                           std::to_string(default_contact->GetLineNum()) +
                                           "; per-pair overrides need a=\"…\" and b=\"…\")");
          default_contact = c;
        }
      } else if (tag == "simulate") {
        if (simulate) fail(c, "a second <simulate> (the first is on line " + std::to_string(simulate->GetLineNum()) + ")");
        simulate = c;
      } else if (tag == "controller") {
        controllers.push_back(c);
      } else {
        fail(c, "unknown element (expected model, ground, box, sphere, capsule, cylinder, contact, simulate or controller)");
      }
    }
    if (models.empty()) fail(world, "no <model>: a world needs at least one robot or body");

    Scenario scenario;
    scenario.source = source_;
    WorldBuilder builder;
    builder.set_gravity(gravity);

    // Contact parameters: the default first, so that pair overrides inherit from it
    // wherever it appears in the file.
    ContactParameters defaults;
    if (default_contact) {
      check_attributes(default_contact,
                       {"mu", "restitution", "stiffness", "damping", "tangential_stiffness", "tangential_damping"});
      check_no_children(default_contact);
      defaults = contact_parameters(default_contact, defaults);
      builder.set_default_contact(defaults);
    }

    std::vector<ModelEntry> entries;
    std::set<std::string> names;
    std::map<std::string, int> name_lines;
    for (const XMLElement* m : models) {
      entries.push_back(read_model(m, gravity));
      ModelEntry& entry = entries.back();
      if (!name_lines.emplace(entry.name, m->GetLineNum()).second) {
        fail(m, "a second model named '" + entry.name + "' (the first is on line " +
                    std::to_string(name_lines[entry.name]) + ")");
      }
      add_model(builder, entry);
    }

    // Environment shapes.
    std::map<std::string, int> default_name_count;
    std::vector<std::string> environment_names;
    for (const XMLElement* s : shapes) {
      EnvironmentShape shape = read_shape(s, default_name_count);
      if (name_lines.count(shape.name)) {
        fail(s, "name '" + shape.name + "' is already used (line " + std::to_string(name_lines[shape.name]) +
                    "); model and environment shape names must be distinct");
      }
      name_lines.emplace(shape.name, s->GetLineNum());
      environment_names.push_back(shape.name);
      builder.add_environment(shape);
    }

    for (const XMLElement* c : pair_contacts) {
      check_attributes(c, {"a", "b", "mu", "restitution", "stiffness", "damping", "tangential_stiffness",
                           "tangential_damping"});
      check_no_children(c);
      ContactPairParameters pair;
      pair.a = trim(required(c, "a"));
      pair.b = trim(required(c, "b"));
      if (pair.a.empty() || pair.b.empty()) fail(c, "a and b must name a model, link (model/link), shape or environment shape");
      pair.parameters = contact_parameters(c, defaults);
      builder.add_pair_contact(pair);
    }

    if (simulate) read_simulate(simulate, scenario.options, builder);

    try {
      scenario.world = builder.build();
    } catch (const Error& err) {
      // A model's collision geometry: name the <model> element.
      const std::string what = err.what();
      for (const XMLElement* m : models) {
        if (what.rfind("model '" + trim(*attribute(m, "name")) + "'", 0) == 0) fail(m, what);
      }
      fail(world, what);
    }

    // Pair overrides must name something in the world (a typo would silently do nothing).
    for (const XMLElement* c : pair_contacts) {
      for (const char* side : {"a", "b"}) {
        const std::string name = trim(*attribute(c, side));
        if (!names_surface(scenario.world, name)) {
          fail(c, std::string(side) + "=\"" + name +
                      "\" matches no model, link (model/link), collision shape or environment shape of the world");
        }
      }
    }

    if (!controllers.empty()) read_controllers(controllers, entries, scenario);
    return scenario;
  }

  // ---- models ----------------------------------------------------------------------------------

  ModelEntry read_model(const XMLElement* m, const Vec3& gravity) const {
    check_attributes(m, {"name", "urdf", "root", "collision", "inertia", "package_dirs", "srdf"});
    check_no_text(m);
    ModelEntry entry;
    entry.element = m;
    entry.name = trim(required(m, "name"));
    check_name(entry.name, m);
    const std::string urdf_attr = trim(required(m, "urdf"));
    if (urdf_attr.empty()) fail(m, "urdf is empty");
    const fs::path p(urdf_attr);
    entry.path = (p.is_absolute() ? p : (base_ / p)).lexically_normal().string();
    const std::string root = trim(attribute(m, "root").value_or("fixed"));
    try {
      entry.root = urdf::parse_root_joint(root);
    } catch (const Error&) {
      fail(m, "root=\"" + root + "\" is not one of fixed, free, planar");
    }
    const std::string collision = trim(attribute(m, "collision").value_or("all"));
    if (collision != "all" && collision != "none") {
      fail(m, "collision=\"" + collision + "\" is not one of all, none");
    }
    entry.collision = collision == "all";
    urdf::LoadOptions options;
    options.root = entry.root;
    options.gravity = gravity;
    if (defaults_.inertia) options.inertia = *defaults_.inertia;
    if (const std::optional<std::string> inertia = attribute(m, "inertia")) {
      try {
        options.inertia = parse_inertia_policy(trim(*inertia));
      } catch (const Error&) {
        fail(m, "inertia=\"" + *inertia + "\" is not one of strict, warn, repair");
      }
    }
    // --package-dir first, then the model's own (relative to the world file).
    options.package_dirs = defaults_.package_dirs;
    if (const std::optional<std::string> dirs = attribute(m, "package_dirs")) {
      std::string item;
      for (const char c : *dirs + " ") {
        if (c == ':' || is_space(c)) {
          if (!item.empty()) {
            const fs::path d(item);
            options.package_dirs.push_back((d.is_absolute() ? d : base_ / d).lexically_normal().string());
          }
          item.clear();
        } else {
          item += c;
        }
      }
      if (options.package_dirs.size() == defaults_.package_dirs.size()) fail(m, "package_dirs is empty");
    }
    if (const std::optional<std::string> srdf = attribute(m, "srdf")) {
      const std::string text = trim(*srdf);
      if (text.empty()) fail(m, "srdf is empty");
      const fs::path sp(text);
      options.srdf = (sp.is_absolute() ? sp : base_ / sp).lexically_normal().string();
    }
    options.collision_overrides = read_collision_overrides(m);
    // A model in contact needs its collision meshes: a missing one is an error here.
    options.collision_meshes = entry.collision ? urdf::CollisionMeshes::Load : urdf::CollisionMeshes::Skip;
    try {
      entry.model = urdf::load(entry.path, options);
    } catch (const Error& err) {
      // A relative urdf is relative to the world file's directory, not to the
      // working directory: the message gives the attribute as written and the
      // absolute path looked for, and the loader's message names that path too.
      std::error_code ec;
      fs::path absolute = fs::absolute(entry.path, ec).lexically_normal();
      if (ec) absolute = entry.path;
      const std::string resolved =
          absolute.string() == urdf_attr ? std::string() : " (resolved to " + absolute.string() + ")";
      std::string why = err.what();
      if (why.rfind(entry.path + ": ", 0) == 0) {
        why.erase(0, entry.path.size() + 2);  // "PATH: cannot open the file": the file is named already
      } else if (why.rfind(entry.path + ":", 0) == 0) {
        why.replace(0, entry.path.size(), absolute.string());  // "PATH:LINE: …"
      }
      // A collision mesh that cannot be used: say how to go on without it.
      const std::string hint = why.find(": mesh '") != std::string::npos
                                   ? "; resolve the mesh (package_dirs, --package-dir, ROS_PACKAGE_PATH), replace the "
                                     "link's shapes with <collision link=\"…\"> primitives, or take the model out of "
                                     "contact with <model collision=\"none\">"
                                   : "";
      fail(m, "model '" + entry.name + "': cannot load '" + urdf_attr + "'" + resolved + ": " + why + hint);
    }
    return entry;
  }

  // <collision link="NAME" [enabled="false"]> with primitive children: shapes
  // that replace the link's URDF collision elements.
  std::map<std::string, std::vector<urdf::LinkCollision>> read_collision_overrides(const XMLElement* m) const {
    std::map<std::string, std::vector<urdf::LinkCollision>> overrides;
    std::map<std::string, int> lines;
    const XMLElement* state = nullptr;
    for (const XMLElement* c = m->FirstChildElement(); c; c = c->NextSiblingElement()) {
      const std::string tag = c->Name();
      if (tag == "state") {
        if (state) fail(c, "a second <state> for model '" + trim(*attribute(m, "name")) + "' (the first is on line " +
                               std::to_string(state->GetLineNum()) + ")");
        state = c;
        continue;
      }
      if (tag != "collision") fail(c, "unknown element inside <model> (expected <state> or <collision>)");
      check_attributes(c, {"link", "enabled"});
      check_no_text(c);
      const std::string link = trim(required(c, "link"));
      if (link.empty()) fail(c, "link is empty");
      if (!lines.emplace(link, c->GetLineNum()).second) {
        fail(c, "a second <collision> for link '" + link + "' (the first is on line " + std::to_string(lines[link]) + ")");
      }
      const bool enabled = boolean(c, "enabled").value_or(true);
      std::vector<urdf::LinkCollision>& shapes = overrides[link];
      for (const XMLElement* g = c->FirstChildElement(); g; g = g->NextSiblingElement()) {
        if (!enabled) fail(g, "a shape inside <collision enabled=\"false\"> (a disabled link has no shapes)");
        shapes.push_back(read_link_shape(g));
      }
      if (enabled && shapes.empty()) {
        fail(c, "no shape: give <sphere>, <box>, <capsule> or <cylinder> children, or enabled=\"false\" to take link '" +
                    link + "' out of contact");
      }
    }
    return overrides;
  }

  urdf::LinkCollision read_link_shape(const XMLElement* g) const {
    const std::string tag = g->Name();
    check_no_children(g);
    if (tag == "sphere") {
      check_attributes(g, {"radius", "pos", "mu", "restitution", "stiffness", "damping"});
    } else if (tag == "box") {
      check_attributes(g, {"size", "pos", "rpy", "mu", "restitution", "stiffness", "damping"});
    } else if (tag == "capsule" || tag == "cylinder") {
      check_attributes(g, {"radius", "length", "pos", "rpy", "mu", "restitution", "stiffness", "damping"});
    } else {
      fail(g, "unknown element inside <collision> (expected sphere, box, capsule or cylinder)");
    }
    urdf::LinkCollision shape;
    shape.material = material(g);
    const Vec3 pos = vec3(g, "pos").value_or(Vec3::Zero());
    const Mat3 R = rpy_rotation(vec3(g, "rpy").value_or(Vec3::Zero()));
    shape.origin = Transform::from_pose(R, pos);
    if (tag == "sphere") {
      shape.geometry = Sphere{*required_number(g, "radius", Range::Positive)};
    } else if (tag == "box") {
      const std::optional<Vec3> size = vec3(g, "size");
      if (!size) fail(g, "missing attribute 'size'");
      for (int i = 0; i < 3; ++i) {
        if (!((*size)(i) > 0.0)) fail(g, "size entries must be positive");
      }
      shape.geometry = Box{*size};
    } else if (tag == "capsule") {
      shape.geometry = Capsule{*required_number(g, "radius", Range::Positive),
                               *required_number(g, "length", Range::NonNegative)};
    } else {
      shape.geometry = Cylinder{*required_number(g, "radius", Range::Positive),
                                *required_number(g, "length", Range::Positive)};
    }
    return shape;
  }

  // The joint of `model` named `name` (a moving joint), or an error naming the close ones.
  int named_joint(const XMLElement* e, const Model& model, const std::string& model_name, const std::string& name) const {
    const int k = model.joint_index(name);
    if (k > 0) return k;
    std::vector<std::string> joints;
    for (int i = 1; i < model.nbodies(); ++i) joints.push_back(model.joint(i).name);
    fail(e, "model '" + model_name + "' has no moving joint named '" + name + "'" + detail::did_you_mean(name, joints));
  }

  void add_model(WorldBuilder& builder, ModelEntry& entry) const {
    const XMLElement* state = entry.element->FirstChildElement("state");
    std::optional<VectorX> q, v;
    const std::string root = urdf::to_string(entry.root);
    if (state) {
      check_attributes(state, {"q", "v", "reference"});
      check_no_text(state);
      if (state->Attribute("q") && state->Attribute("reference")) fail(state, "give q or reference, not both");
      q = vector(state, "q", entry.model.nq(), "nq of model '" + entry.name + "' with a " + root + " root");
      v = vector(state, "v", entry.model.nv(), "nv of model '" + entry.name + "' with a " + root + " root");
      if (const std::optional<std::string> reference = attribute(state, "reference")) {
        try {
          q = entry.model.named_configuration(trim(*reference)).q;
        } catch (const Error& err) {
          fail(state, std::string(err.what()) + (entry.element->Attribute("srdf") ? "" : " (the model has no srdf=\"…\")"));
        }
      }
      // <joint name="…" q="…" v="…"/>: single joints on top of q (or neutral) and v (or zero).
      std::map<std::string, int> joint_lines;
      for (const XMLElement* j = state->FirstChildElement(); j; j = j->NextSiblingElement()) {
        if (std::string(j->Name()) != "joint") fail(j, "unknown element inside <state> (expected <joint name q v>)");
        check_attributes(j, {"name", "q", "v"});
        check_no_children(j);
        const std::string name = trim(required(j, "name"));
        if (!joint_lines.emplace(name, j->GetLineNum()).second) {
          fail(j, "joint '" + name + "' is set twice (line " + std::to_string(joint_lines[name]) + ")");
        }
        const Joint& joint = entry.model.joint(named_joint(j, entry.model, entry.name, name));
        const std::string what = "joint '" + name + "' (" + to_string(joint.type) + ")";
        const std::optional<VectorX> jq = vector(j, "q", joint.nq, "coordinates of " + what);
        const std::optional<VectorX> jv = vector(j, "v", joint.nv, "velocities of " + what);
        if (!jq && !jv) fail(j, "give q, v or both");
        if (jq) {
          if (!q) q = neutral_configuration(entry.model);
          q->segment(joint.q_index, joint.nq) = *jq;
        }
        if (jv) {
          if (!v) v = VectorX::Zero(entry.model.nv());
          v->segment(joint.v_index, joint.nv) = *jv;
        }
      }
    }
    try {
      builder.add_model(entry.name, entry.model, q, v, entry.path);
      builder.set_collision(entry.name, entry.collision);
    } catch (const Error& err) {
      fail(state ? state : entry.element, err.what());
    }
    entry.q0 = q ? *q : neutral_configuration(entry.model);
  }

  // ---- environment ------------------------------------------------------------------------------

  EnvironmentShape read_shape(const XMLElement* s, std::map<std::string, int>& counts) const {
    const std::string tag = s->Name();
    check_no_children(s);
    if (tag == "ground") {
      check_attributes(s, {"name", "normal", "offset", "mu", "restitution", "stiffness", "damping"});
    } else if (tag == "box") {
      check_attributes(s, {"name", "size", "pos", "rpy", "mu", "restitution", "stiffness", "damping"});
    } else if (tag == "sphere") {
      check_attributes(s, {"name", "radius", "pos", "mu", "restitution", "stiffness", "damping"});
    } else {  // capsule, cylinder
      check_attributes(s, {"name", "radius", "length", "pos", "rpy", "mu", "restitution", "stiffness", "damping"});
    }
    std::string name;
    if (const std::optional<std::string> given = attribute(s, "name")) {
      name = trim(*given);
    } else {
      const int k = ++counts[tag];
      name = k == 1 ? tag : tag + "_" + std::to_string(k);
    }
    check_name(name, s);
    const ContactMaterial mat = material(s);
    try {
      if (tag == "ground") {
        Vec3 n = vec3(s, "normal").value_or(Vec3::UnitZ());
        const double offset = number_or(s, "offset", 0.0);
        if (n.norm() < 1e-12) fail(s, "normal must not be zero");
        // The plane n·x = offset: its point closest to the origin.
        return ground_plane(name, n, offset * n / n.squaredNorm(), mat);
      }
      const Vec3 pos = vec3(s, "pos").value_or(Vec3::Zero());
      const Mat3 R = rpy_rotation(vec3(s, "rpy").value_or(Vec3::Zero()));
      if (tag == "box") {
        const std::optional<Vec3> size = vec3(s, "size");
        if (!size) fail(s, "missing attribute 'size'");
        for (int i = 0; i < 3; ++i) {
          if (!((*size)(i) > 0.0)) fail(s, "size entries must be positive");
        }
        return environment_box(name, *size, pos, R, mat);
      }
      EnvironmentShape shape;
      shape.name = name;
      shape.placement = Transform::from_pose(R, pos);
      shape.material = mat;
      const double radius = *required_number(s, "radius", Range::Positive);
      if (tag == "sphere") {
        shape.geometry = Sphere{radius};
      } else if (tag == "capsule") {
        shape.geometry = Capsule{radius, *required_number(s, "length", Range::NonNegative)};
      } else {
        shape.geometry = Cylinder{radius, *required_number(s, "length", Range::Positive)};
      }
      check_geometry(shape.geometry, "environment shape '" + name + "'");
      return shape;
    } catch (const WorldError&) {
      throw;
    } catch (const Error& err) {
      fail(s, err.what());
    }
  }

  std::optional<double> required_number(const XMLElement* e, const char* name, Range range) const {
    required(e, name);
    return number(e, name, range);
  }

  static bool names_surface(const World& world, const std::string& name) {
    if (world.model_index(name) >= 0) return true;
    for (const EnvironmentShape& s : world.environment()) {
      if (s.name == name) return true;
    }
    const Model& m = world.model();
    for (const CollisionShape& s : m.collisions()) {
      if (s.name == name || s.link == name) return true;
    }
    return m.frame_index(name) >= 0 || m.body_index(name) >= 0;
  }

  // ---- <simulate> ------------------------------------------------------------------------------

  void read_simulate(const XMLElement* s, SimulationOptions& o, WorldBuilder& builder) const {
    check_attributes(s, {"scheme", "integrator", "duration", "output_rate", "abs_tol", "rel_tol", "initial_step",
                         "min_step", "max_step", "event_time_tolerance", "contact_tolerance", "velocity_tolerance",
                         "zeno_speed", "slip_velocity", "drift_tolerance", "cone_directions", "max_events",
                         "max_steps", "joint_damping", "joint_limits", "joint_limit_restitution", "torque_limits",
                         "unactuated_torques", "time_step", "self_collision", "fallback_duration", "fallback_step"});
    check_no_children(s);
    if (const std::optional<std::string> scheme = attribute(s, "scheme")) {
      try {
        o.scheme = parse_scheme(trim(*scheme));
      } catch (const Error&) {
        fail(s, "scheme=\"" + *scheme + "\" is not one of event-driven, compliant, time-stepping");
      }
    }
    if (const std::optional<std::string> integrator = attribute(s, "integrator")) {
      try {
        o.integrator = parse_integrator(trim(*integrator));
      } catch (const Error&) {
        fail(s, "integrator=\"" + *integrator + "\" is not one of dopri5, bulirsch-stoer, rosenbrock4");
      }
    }
    o.duration = number_or(s, "duration", o.duration, Range::Positive);
    o.output_rate = number_or(s, "output_rate", o.output_rate, Range::NonNegative);
    o.abs_tol = number_or(s, "abs_tol", o.abs_tol, Range::Positive);
    o.rel_tol = number_or(s, "rel_tol", o.rel_tol, Range::Positive);
    o.initial_step = number_or(s, "initial_step", o.initial_step, Range::Positive);
    o.min_step = number_or(s, "min_step", o.min_step, Range::Positive);
    o.max_step = number_or(s, "max_step", o.max_step, Range::Positive);
    o.event_time_tolerance = number_or(s, "event_time_tolerance", o.event_time_tolerance, Range::Positive);
    o.contact_tolerance = number_or(s, "contact_tolerance", o.contact_tolerance, Range::Positive);
    o.velocity_tolerance = number_or(s, "velocity_tolerance", o.velocity_tolerance, Range::Positive);
    o.zeno_speed = number_or(s, "zeno_speed", o.zeno_speed, Range::NonNegative);
    o.slip_velocity = number_or(s, "slip_velocity", o.slip_velocity, Range::Positive);
    o.drift_tolerance = number_or(s, "drift_tolerance", o.drift_tolerance, Range::Positive);
    o.time_step = number_or(s, "time_step", o.time_step, Range::Positive);
    o.fallback_duration = number_or(s, "fallback_duration", o.fallback_duration, Range::NonNegative);
    o.fallback_step = number_or(s, "fallback_step", o.fallback_step, Range::Positive);
    if (const std::optional<long> k = integer(s, "cone_directions", 2)) {
      if (*k == 3) fail(s, "cone_directions=\"3\": use 2 (a friction box) or at least 4 (a polyhedral cone)");
      o.cone_directions = static_cast<int>(std::min(*k, 1024L));
      if (*k > 1024) fail(s, "cone_directions must be at most 1024");
    }
    if (const std::optional<long> n = integer(s, "max_events", 1)) {
      if (*n > 2147483647L) fail(s, "max_events must be at most 2147483647");
      o.max_events = static_cast<int>(*n);
    }
    if (const std::optional<long> n = integer(s, "max_steps", 1)) o.max_steps = *n;
    o.joint_damping = boolean(s, "joint_damping").value_or(o.joint_damping);
    o.joint_limits = boolean(s, "joint_limits").value_or(o.joint_limits);
    o.joint_limit_restitution =
        number_or(s, "joint_limit_restitution", o.joint_limit_restitution, Range::UnitInterval);
    o.torque_limits = boolean(s, "torque_limits").value_or(o.torque_limits);
    o.unactuated_torques = boolean(s, "unactuated_torques").value_or(o.unactuated_torques);
    if (const std::optional<bool> self = boolean(s, "self_collision")) builder.set_self_collision(*self);
    if (o.min_step > o.max_step) fail(s, "min_step must not exceed max_step");
    if (o.initial_step < o.min_step || o.initial_step > o.max_step) {
      fail(s, "initial_step must lie within [min_step, max_step]");
    }
  }

  // ---- <controller> ----------------------------------------------------------------------------

  // The 1-DoF joints of one model of the world, in joint (body) order: (v index, q index).
  static std::vector<std::pair<int, int>> actuated_dofs(const World& world, const WorldModel& wm) {
    std::vector<std::pair<int, int>> dofs;
    for (int i = wm.first_body; i < wm.first_body + wm.nbodies; ++i) {
      const Joint& j = world.model().joint(i);
      if (j.nv == 1) dofs.emplace_back(j.v_index, j.q_index);
    }
    return dofs;
  }

  void read_controllers(const std::vector<const XMLElement*>& controllers, const std::vector<ModelEntry>& entries,
                        Scenario& scenario) const {
    const World& world = scenario.world;
    const Model& m = world.model();
    PdController pd;
    pd.kp = VectorX::Zero(m.nv());
    pd.kd = VectorX::Zero(m.nv());
    pd.q_target = VectorX::Zero(m.nq());
    std::optional<double> rate;
    std::optional<bool> torque_limits;
    const XMLElement* rate_element = nullptr;
    std::map<std::string, int> controlled;  // model → line of its controller
    for (const XMLElement* c : controllers) {
      check_attributes(c, {"type", "model", "kp", "kd", "target", "rate", "torque_limits"});
      check_no_text(c);
      const std::string type = trim(required(c, "type"));
      if (type != "pd") fail(c, "unknown controller type '" + type + "' (the built-in controller is type=\"pd\")");

      std::string model_name;
      if (const std::optional<std::string> given = attribute(c, "model")) {
        model_name = trim(*given);
      } else if (world.models().size() == 1) {
        model_name = world.models()[0].name;
      } else {
        fail(c, "missing attribute 'model' (the world has several models)");
      }
      const int index = world.model_index(model_name);
      if (index < 0) fail(c, "model=\"" + model_name + "\" is not a model of this world");
      if (!controlled.emplace(model_name, c->GetLineNum()).second) {
        fail(c, "model '" + model_name + "' already has a controller (line " +
                    std::to_string(controlled[model_name]) + ")");
      }
      const WorldModel& wm = world.models()[static_cast<std::size_t>(index)];
      const std::vector<std::pair<int, int>> dofs = actuated_dofs(world, wm);
      const Eigen::Index na = static_cast<Eigen::Index>(dofs.size());
      if (na == 0) fail(c, "model '" + model_name + "' has no actuated (1-DoF) joints to control");

      const std::string gain_what = "1 or " + std::to_string(na) + ", the actuated joints of model '" + model_name + "'";
      auto gains = [&](const char* name, bool needed) -> VectorX {
        std::optional<VectorX> g = vector(c, name);
        if (!g) {
          if (needed) fail(c, std::string("missing attribute '") + name + "'");
          return VectorX::Zero(na);
        }
        if (g->size() != 1 && g->size() != na) {
          fail(c, std::string(name) + " has " + std::to_string(g->size()) + " entries, expected " + gain_what);
        }
        for (Eigen::Index i = 0; i < g->size(); ++i) {
          if ((*g)(i) < 0.0) fail(c, std::string(name) + " entry " + std::to_string(i) + " is negative");
        }
        return g->size() == 1 ? VectorX::Constant(na, (*g)(0)) : *g;
      };
      const VectorX kp = gains("kp", true);
      const VectorX kd = gains("kd", false);

      // The target: the model's full q, or its actuated joints only; default: the initial state.
      VectorX q_model = entries[static_cast<std::size_t>(index)].q0;
      if (const std::optional<VectorX> target = vector(c, "target")) {
        if (target->size() == wm.nq) {
          q_model = *target;
        } else if (target->size() == na) {
          for (Eigen::Index k = 0; k < na; ++k) q_model(dofs[static_cast<std::size_t>(k)].second - wm.q_index) = (*target)(k);
        } else {
          fail(c, "target has " + std::to_string(target->size()) + " entries, expected " + std::to_string(wm.nq) +
                      " (nq of model '" + model_name + "') or " + std::to_string(na) + " (its actuated joints)");
        }
      }
      // <target joint="…" q="…"/>: one actuated joint's target by name.
      const Model& own = entries[static_cast<std::size_t>(index)].model;
      std::map<std::string, int> target_lines;
      for (const XMLElement* t = c->FirstChildElement(); t; t = t->NextSiblingElement()) {
        if (std::string(t->Name()) != "target") fail(t, "unknown element inside <controller> (expected <target joint q>)");
        check_attributes(t, {"joint", "q"});
        check_no_children(t);
        const std::string name = trim(required(t, "joint"));
        if (!target_lines.emplace(name, t->GetLineNum()).second) {
          fail(t, "joint '" + name + "' has a second target (line " + std::to_string(target_lines[name]) + ")");
        }
        const Joint& joint = own.joint(named_joint(t, own, model_name, name));
        if (joint.nv != 1) fail(t, "joint '" + name + "' is a " + std::string(to_string(joint.type)) + " joint; the PD controller drives 1-DoF joints only");
        q_model(joint.q_index) = *required_number(t, "q", Range::Any);
      }
      for (Eigen::Index k = 0; k < na; ++k) {
        const auto [iv, iq] = dofs[static_cast<std::size_t>(k)];
        pd.kp(iv) = kp(k);
        pd.kd(iv) = kd(k);
        pd.q_target(iq) = q_model(iq - wm.q_index);
      }

      if (const std::optional<double> r = number(c, "rate", Range::Positive)) {
        if (rate && *rate != *r) {
          fail(c, "rate=\"" + *attribute(c, "rate") + "\" differs from the controller on line " +
                      std::to_string(rate_element->GetLineNum()) + " (all controllers run at one rate)");
        }
        rate = *r;
        rate_element = c;
      }
      if (const std::optional<bool> t = boolean(c, "torque_limits")) {
        if (torque_limits && *torque_limits != *t) fail(c, "torque_limits differs from another controller's");
        torque_limits = *t;
      }
    }
    scenario.controller = pd;
    scenario.controller_period = 1.0 / rate.value_or(1000.0);
    if (torque_limits) scenario.options.torque_limits = *torque_limits;
  }
};

}  // namespace

Scenario load_world(const std::string& path, const WorldFileOptions& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw WorldError(path + ": is a directory, not a world file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw WorldError(path + ": cannot open the world file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw WorldError(path + ": cannot read the world file");
  fs::path base = fs::path(path).parent_path();
  if (base.empty()) base = ".";
  return WorldReader(path, base, options).read(text.str());
}

Scenario load_world_string(const std::string& xml, const std::string& source_name, const std::string& base_directory,
                           const WorldFileOptions& options) {
  return WorldReader(source_name, base_directory.empty() ? fs::path(".") : fs::path(base_directory), options).read(xml);
}

}  // namespace plume
