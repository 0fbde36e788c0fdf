// SRDF reading with tinyxml2 (include/plume/srdf.hpp).
#include "plume/srdf.hpp"

#include <tinyxml2.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "plume/error.hpp"

namespace plume::srdf {

namespace {

using tinyxml2::XMLElement;

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  Description run(const std::string& xml) {
    tinyxml2::XMLDocument doc;
    if (doc.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS) {
      fail(std::max(1, doc.ErrorLineNum()), std::string("malformed XML: ") + (doc.ErrorStr() ? doc.ErrorStr() : "unreadable"));
    }
    const XMLElement* robot = doc.RootElement();
    if (!robot) fail(1, "the file holds no element (expected <robot>)");
    if (std::string(robot->Name()) != "robot") {
      fail(robot->GetLineNum(), std::string("the root element is <") + robot->Name() + ">, expected <robot>");
    }
    Description d;
    d.source = source_;
    d.robot = robot->Attribute("name") ? robot->Attribute("name") : "";
    std::set<std::string> state_names;
    for (const XMLElement* e = robot->FirstChildElement(); e; e = e->NextSiblingElement()) {
      const std::string tag = e->Name();
      if (tag == "group_state") {
        GroupState s;
        s.name = required(e, "name");
        s.group = e->Attribute("group") ? e->Attribute("group") : "";
        s.line = e->GetLineNum();
        if (!state_names.insert(s.name).second) fail(s.line, "<group_state name=\"" + s.name + "\"> is given twice");
        std::set<std::string> joints;
        for (const XMLElement* j = e->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
          JointValue v;
          v.joint = required(j, "name");
          v.line = j->GetLineNum();
          v.values = numbers(j, "value");
          if (!joints.insert(v.joint).second) {
            fail(v.line, "<group_state name=\"" + s.name + "\">: joint '" + v.joint + "' is given twice");
          }
          s.joints.push_back(std::move(v));
        }
        d.group_states.push_back(std::move(s));
      } else if (tag == "disable_collisions") {
        DisabledCollision c;
        c.link1 = required(e, "link1");
        c.link2 = required(e, "link2");
        c.reason = e->Attribute("reason") ? e->Attribute("reason") : "";
        c.line = e->GetLineNum();
        d.disabled_collisions.push_back(std::move(c));
      }
    }
    return d;
  }

 private:
  std::string source_;

  [[noreturn]] void fail(int line, const std::string& what) const {
    throw UrdfError(source_ + ":" + std::to_string(line) + ": " + what);
  }

  std::string required(const XMLElement* e, const char* name) const {
    const char* v = e->Attribute(name);
    if (!v || !*v) fail(e->GetLineNum(), std::string("<") + e->Name() + "> needs a '" + name + "' attribute");
    return v;
  }

  std::vector<double> numbers(const XMLElement* e, const char* name) const {
    std::istringstream in(required(e, name));
    std::vector<double> out;
    std::string token;
    while (in >> token) {
      std::size_t used = 0;
      double x = 0.0;
      try {
        x = std::stod(token, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != token.size() || !std::isfinite(x)) {
        fail(e->GetLineNum(), std::string("<") + e->Name() + " name=\"" + e->Attribute("name") + "\">: " + name + "=\"" +
                                  e->Attribute(name) + "\" is not a list of finite numbers");
      }
      out.push_back(x);
    }
    if (out.empty()) fail(e->GetLineNum(), std::string("<") + e->Name() + ">: " + name + " is empty");
    return out;
  }
};

}  // namespace

Description read_string(const std::string& xml, const std::string& source_name) {
  return Reader(source_name).run(xml);
}

Description read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UrdfError(path + ": cannot open the SRDF file (missing or unreadable)");
  std::ostringstream text;
  text << in.rdbuf();
  return read_string(text.str(), path);
}

}  // namespace plume::srdf
