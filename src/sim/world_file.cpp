// World files (docs/world_format.md): XML read with tinyxml2 into a Scenario
// (World, SimulationOptions, PD controller). The reader's parts are listed in
// sim/world_file_reader.hpp; this unit reads the document and <world>.
#include "sim/world_file_reader.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "plume/error.hpp"

namespace plume {

namespace detail::world_xml {

Scenario WorldReader::read(const std::string& xml) {
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

Scenario WorldReader::read_world(const XMLElement* world) {
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

}  // namespace detail::world_xml

using detail::world_xml::WorldReader;
namespace fs = std::filesystem;

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
