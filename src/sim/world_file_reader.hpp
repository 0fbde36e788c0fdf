#pragma once
// The world-file reader (docs/world_format.md), shared by its units: one
// class, WorldReader, whose parts read one section of a world file each.
//
//   world_file.cpp              load_world*, the XML document, <world>: its
//                               children sorted, default and per-pair <contact>,
//                               the World built
//   world_file_xml.cpp          messages (FILE:LINE: <element>: …), structure
//                               checks, typed attributes (numbers, vectors, …)
//   world_file_models.cpp       <model>: the URDF, its <state> and <collision>
//                               overrides
//   world_file_environment.cpp  environment shapes (<ground>, <box>, …),
//                               contact materials and parameters
//   world_file_simulate.cpp     <simulate> (scheme, tolerances) and <controller>
//
// The reader is strict on purpose: an unknown element or attribute, a
// number that is not finite, a vector of the wrong length, a repeated
// singleton element are errors, because a typo that is silently ignored
// gives a simulation of a different world. Every error is a WorldError whose
// message reads "FILE:LINE: <element>: what is wrong".

#include <tinyxml2.h>

#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plume/sim/world_file.hpp"
#include "plume/urdf.hpp"

namespace plume::detail::world_xml {

namespace fs = std::filesystem;
using tinyxml2::XMLElement;

// Constraints on a scalar attribute.
enum class Range { Any, Positive, NonNegative, UnitInterval };

const char* describe(Range r);
bool in_range(double x, Range r);
bool is_space(char c);
std::string trim(const std::string& s);
// Parses one number token exactly (no trailing characters). Accepts a
// leading '+'; rejects hexadecimal. Non-finite values parse (the caller
// rejects them with a better message).
bool parse_double(const std::string& token, double& x);
// Splits "1 2 3", "1,2,3" or "1, 2, 3" into tokens; an empty entry (",,",
// a leading or trailing comma) gives an empty token, reported by the caller.
std::vector<std::string> split_vector(const std::string& text);

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

  Scenario read(const std::string& xml);

 private:
  std::string source_;
  fs::path base_;
  WorldFileOptions defaults_;

  // ---- messages, structure, attributes (world_file_xml.cpp) ----------------------------------
  std::string where(const XMLElement* e) const;
  [[noreturn]] void fail(const XMLElement* e, const std::string& message) const;
  [[noreturn]] void malformed(const tinyxml2::XMLDocument& doc) const;
  void check_attributes(const XMLElement* e, std::initializer_list<const char*> allowed) const;
  void check_no_text(const XMLElement* e) const;
  void check_no_children(const XMLElement* e) const;
  static std::optional<std::string> attribute(const XMLElement* e, const char* name);
  std::string required(const XMLElement* e, const char* name) const;
  std::optional<double> number(const XMLElement* e, const char* name, Range range = Range::Any) const;
  double number_or(const XMLElement* e, const char* name, double fallback, Range range = Range::Any) const;
  std::optional<double> required_number(const XMLElement* e, const char* name, Range range) const;
  std::optional<long> integer(const XMLElement* e, const char* name, long minimum) const;
  std::optional<bool> boolean(const XMLElement* e, const char* name) const;
  std::optional<VectorX> vector(const XMLElement* e, const char* name, Eigen::Index expected = -1,
                                const std::string& what = "") const;
  static std::string expectation(Eigen::Index expected, const std::string& what);
  std::optional<Vec3> vec3(const XMLElement* e, const char* name) const;
  static Mat3 rpy_rotation(const Vec3& rpy);
  void check_name(const std::string& name, const XMLElement* e) const;

  // ---- <world> (world_file.cpp) ---------------------------------------------------------------
  Scenario read_world(const XMLElement* world);

  // ---- <model> (world_file_models.cpp) --------------------------------------------------------
  ModelEntry read_model(const XMLElement* m, const Vec3& gravity) const;
  std::map<std::string, std::vector<urdf::LinkCollision>> read_collision_overrides(const XMLElement* m) const;
  urdf::LinkCollision read_link_shape(const XMLElement* g) const;
  int named_joint(const XMLElement* e, const Model& model, const std::string& model_name,
                  const std::string& name) const;
  void add_model(WorldBuilder& builder, ModelEntry& entry) const;

  // ---- environment shapes, contact parameters (world_file_environment.cpp) ----------------------
  EnvironmentShape read_shape(const XMLElement* s, std::map<std::string, int>& counts) const;
  ContactMaterial material(const XMLElement* e) const;
  ContactParameters contact_parameters(const XMLElement* e, ContactParameters p) const;
  static bool names_surface(const World& world, const std::string& name);

  // ---- <simulate>, <controller> (world_file_simulate.cpp) ---------------------------------------
  void read_simulate(const XMLElement* s, SimulationOptions& o, WorldBuilder& builder) const;
  static std::vector<std::pair<int, int>> actuated_dofs(const World& world, const WorldModel& wm);
  void read_controllers(const std::vector<const XMLElement*>& controllers, const std::vector<ModelEntry>& entries,
                        Scenario& scenario) const;
};

}  // namespace plume::detail::world_xml
