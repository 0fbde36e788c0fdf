#pragma once
/// @file
/// Reading a robot's SRDF (Semantic Robot Description Format, as published
/// next to URDFs by MoveIt configurations and example-robot-data).
///
/// plume uses two of its elements:
/// - `<group_state name="standing" group="legs"><joint name="LF_KFE" value="-1.4"/>…`:
///   named configurations (Model::named_configuration), e.g. a robot's
///   reference posture;
/// - `<disable_collisions link1="…" link2="…" reason="…"/>`: link pairs left
///   out of self-collision.
/// Other elements (groups, end effectors, virtual and passive joints) are
/// read past. urdf::LoadOptions::srdf applies an SRDF while a URDF loads; the
/// functions here only parse.
#include <string>
#include <vector>

namespace plume::srdf {

/// One `<joint name value>` of a group state; `value` may hold several
/// numbers (a joint with several coordinates), separated by spaces.
struct JointValue {
  std::string joint;
  std::vector<double> values;
  int line = 0;  ///< line of the element in the SRDF
};

struct GroupState {
  std::string name;
  std::string group;
  std::vector<JointValue> joints;
  int line = 0;
};

struct DisabledCollision {
  std::string link1, link2;
  std::string reason;  ///< "Adjacent", "Never", … as written (may be empty)
  int line = 0;
};

struct Description {
  std::string source;  ///< the file name, or the source name given to read_string
  std::string robot;   ///< the `<robot name>` attribute
  std::vector<GroupState> group_states;
  std::vector<DisabledCollision> disabled_collisions;
};

/// Reads an SRDF file.
/// @throws UrdfError ("FILE:LINE: what") on unreadable or malformed XML, a root
/// element other than `<robot>`, a missing name/link attribute, a value that is
/// not a finite number, or a group state or joint given twice.
Description read(const std::string& path);

/// Parses SRDF text; `source_name` starts the messages.
Description read_string(const std::string& xml, const std::string& source_name = "<string>");

}  // namespace plume::srdf
