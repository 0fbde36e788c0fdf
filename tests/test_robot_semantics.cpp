// A robot's semantics as published beside its URDF: the SRDF (named
// postures, collision pairs to leave out), per-link collision shapes chosen
// in code or in the world file, and initial states and PD targets set joint
// by joint. Facts checked: the values read back from the files themselves
// (parsed here with tinyxml2, independently of plume's reader), which pairs
// a detector tests, and a mesh-footed quadruped standing still under PD with
// the ground carrying its weight (statics: Σ normal force = m g).
#include <gtest/gtest.h>
#include <tinyxml2.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "expect_error.hpp"
#include "mesh_files.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/detection.hpp"
#include "plume/error.hpp"
#include "plume/sim/simulator.hpp"
#include "plume/sim/world.hpp"
#include "plume/sim/world_file.hpp"
#include "plume/srdf.hpp"
#include "plume/urdf.hpp"
#include "test_utils.hpp"

using namespace plume;
using plume::test::expect_error;
using plume::test::model_path;

namespace {

const std::string kLynx = model_path("lynx_description/urdf/lynx.urdf");
const std::string kLynxSrdf = model_path("lynx_description/srdf/lynx.srdf");

bool has_warning(const Model& m, const std::string& needle) {
  for (const std::string& w : m.warnings()) {
    if (w.find(needle) != std::string::npos) return true;
  }
  return false;
}

// Two arms hanging from a trunk whose end spheres overlap (radius 0.1, 0.15 m
// apart): a self-collision pair that is not parent–child.
const char* kArms = R"(<robot name="arms">
  <link name="trunk"><inertial><mass value="5"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <joint name="left" type="revolute"><parent link="trunk"/><child link="left_arm"/><origin xyz="0 0.075 0"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="10" velocity="5"/></joint>
  <link name="left_arm"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin xyz="0 0 -0.3"/><geometry><sphere radius="0.1"/></geometry></collision></link>
  <joint name="right" type="revolute"><parent link="trunk"/><child link="right_arm"/><origin xyz="0 -0.075 0"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="10" velocity="5"/></joint>
  <link name="right_arm"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin xyz="0 0 -0.3"/><geometry><sphere radius="0.1"/></geometry></collision></link>
</robot>)";

}  // namespace

// ---- the SRDF reader --------------------------------------------------------------------------

TEST(Srdf, ReadsGroupStatesAndDisabledPairsWithTheirLines) {
  const srdf::Description d = srdf::read_string(R"(<?xml version="1.0"?>
<robot name="arms">
  <group name="both"><joint name="left"/><joint name="right"/></group>
  <group_state name="open" group="both">
    <joint name="left" value="0.5"/>
    <joint name="right" value="-0.25"/>
  </group_state>
  <group_state name="base_pose" group="all"><joint name="root_joint" value="0 0 1  0 0 0 1"/></group_state>
  <disable_collisions link1="left_arm" link2="right_arm" reason="Never"/>
  <end_effector name="hand" parent_link="left_arm" group="both"/>
</robot>)",
                                                "arms.srdf");
  EXPECT_EQ(d.robot, "arms");
  ASSERT_EQ(d.group_states.size(), 2u);
  EXPECT_EQ(d.group_states[0].name, "open");
  EXPECT_EQ(d.group_states[0].group, "both");
  EXPECT_EQ(d.group_states[0].line, 4);
  ASSERT_EQ(d.group_states[0].joints.size(), 2u);
  EXPECT_EQ(d.group_states[0].joints[1].joint, "right");
  EXPECT_EQ(d.group_states[0].joints[1].values, std::vector<double>{-0.25});
  EXPECT_EQ(d.group_states[0].joints[1].line, 6);
  EXPECT_EQ(d.group_states[1].joints[0].values, (std::vector<double>{0, 0, 1, 0, 0, 0, 1}));
  ASSERT_EQ(d.disabled_collisions.size(), 1u);
  EXPECT_EQ(d.disabled_collisions[0].link1, "left_arm");
  EXPECT_EQ(d.disabled_collisions[0].reason, "Never");
  EXPECT_EQ(d.disabled_collisions[0].line, 9);
}

TEST(Srdf, BadFilesNameTheFileAndLine) {
  expect_error<UrdfError>([] { srdf::read_string("<robot><group_state name=\"a\">", "a.srdf"); }, {"a.srdf:", "malformed XML"});
  expect_error<UrdfError>([] { srdf::read_string("<robots/>", "b.srdf"); }, {"b.srdf:1:", "<robots>", "expected <robot>"});
  expect_error<UrdfError>([] { srdf::read_string("<robot>\n<group_state/>\n</robot>", "c.srdf"); }, {"c.srdf:2:", "'name'"});
  expect_error<UrdfError>(
      [] { srdf::read_string("<robot>\n<group_state name=\"s\">\n<joint name=\"j\" value=\"1,5\"/></group_state></robot>", "d.srdf"); },
      {"d.srdf:3:", "value=\"1,5\"", "finite numbers"});
  expect_error<UrdfError>(
      [] { srdf::read_string("<robot><group_state name=\"s\"/>\n<group_state name=\"s\"/></robot>", "e.srdf"); },
      {"e.srdf:2:", "name=\"s\"", "twice"});
  expect_error<UrdfError>([] { srdf::read_string("<robot><disable_collisions link1=\"a\"/></robot>", "f.srdf"); },
                          {"f.srdf:1:", "'link2'"});
  expect_error<UrdfError>([] { srdf::read("/nonexistent/robot.srdf"); }, {"/nonexistent/robot.srdf", "cannot open"});
}

// The lynx's postures: each joint the SRDF names at the value written there
// (read here with tinyxml2), in the q entry of that joint; every other
// coordinate neutral.
TEST(Srdf, NamedConfigurationsAreTheGroupStatesOfTheFile) {
  urdf::LoadOptions o;
  o.root = urdf::RootJoint::FreeFlyer;
  o.srdf = kLynxSrdf;
  const Model m = urdf::load(kLynx, o);
  tinyxml2::XMLDocument doc;
  ASSERT_EQ(doc.LoadFile(kLynxSrdf.c_str()), tinyxml2::XML_SUCCESS);
  int states = 0;
  const VectorX neutral = neutral_configuration(m);
  for (const auto* g = doc.RootElement()->FirstChildElement("group_state"); g; g = g->NextSiblingElement("group_state")) {
    ++states;
    const NamedConfiguration& c = m.named_configuration(g->Attribute("name"));
    EXPECT_EQ(c.group, g->Attribute("group"));
    VectorX expected = neutral;
    for (const auto* j = g->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
      expected(m.joint(m.get_joint(j->Attribute("name"))).q_index) = j->DoubleAttribute("value");
    }
    EXPECT_EQ(c.q, expected) << c.name;
    EXPECT_EQ(c.joints.size(), 12u);
  }
  EXPECT_EQ(states, 2);
  EXPECT_EQ(m.named_configurations().size(), 2u);
  expect_error<ArgumentError>([&] { m.named_configuration("stand"); },
                           {"no named configuration 'stand'", "did you mean 'standing'", "'standing', 'crouching'"});
  // Without the SRDF there are none, and the message says where they come from.
  urdf::LoadOptions free;
  free.root = urdf::RootJoint::FreeFlyer;
  const Model bare = urdf::load(kLynx, free);
  expect_error<ArgumentError>([&] { bare.named_configuration("standing"); }, {"it has none", "LoadOptions::srdf"});
}

TEST(Srdf, WhatTheModelDoesNotHaveIsAWarningAndWrongValuesAreErrors) {
  const test::ScratchDir dir("srdf_semantics");
  urdf::LoadOptions o;
  o.srdf = dir.write("arms.srdf", R"(<robot name="limbs">
  <group_state name="s" group="g">
    <joint name="left" value="2"/>
    <joint name="lefft_gripper" value="0.1"/>
    <joint name="rigth" value="0.3"/>
  </group_state>
  <disable_collisions link1="left_arm" link2="hand" reason="Never"/>
</robot>)");
  const Model m = urdf::load_string(kArms, o, "arms.urdf");
  const NamedConfiguration& s = m.named_configuration("s");
  EXPECT_EQ(s.q(m.joint(m.get_joint("left")).q_index), 2.0);  // kept, with a warning: outside [-1, 1]
  EXPECT_EQ(s.q(m.joint(m.get_joint("right")).q_index), 0.0);
  EXPECT_EQ(s.joints, std::vector<std::string>{"left"});
  EXPECT_TRUE(has_warning(m, o.srdf + ":3: state 's': joint 'left' value 2 is outside its limits [-1, 1]"));
  EXPECT_TRUE(has_warning(m, o.srdf + ":4: state 's': joint 'lefft_gripper' is not in the model"));
  EXPECT_TRUE(has_warning(m, "joint 'rigth' is not in the model (did you mean 'right'?)"));
  EXPECT_TRUE(has_warning(m, o.srdf + ":7: disabled collision 'left_arm' – 'hand': link 'hand' is not in the model"));
  EXPECT_TRUE(has_warning(m, "the SRDF is for robot 'limbs', the URDF is 'arms'"));
  EXPECT_TRUE(m.disabled_collisions().empty());
  // Two values for a 1-DoF joint: an error naming the file, line and joint.
  o.srdf = dir.write("two.srdf", "<robot>\n<group_state name=\"s\">\n<joint name=\"right\" value=\"0.1 0.2\"/></group_state></robot>");
  expect_error<UrdfError>([&] { urdf::load_string(kArms, o, "arms.urdf"); },
                          {o.srdf + ":3: state 's': joint 'right' (revolute) has 1 coordinate, 2 values are given"});
  o.srdf = dir.file("missing.srdf");
  expect_error<UrdfError>([&] { urdf::load_string(kArms, o, "arms.urdf"); }, {"missing.srdf", "cannot open the SRDF"});
}

// <disable_collisions>: the pair leaves self-collision, in the model alone and
// once it is part of a world (names prefixed); other pairs stay.
TEST(Srdf, DisabledPairsLeaveSelfCollision) {
  const test::ScratchDir dir("srdf_pairs");
  DetectionOptions self;
  self.self_collision = true;
  const Model plain = urdf::load_string(kArms, {}, "arms.urdf");
  ASSERT_EQ(ContactDetector(plain, {}, self).pairs().size(), 1u);
  Data data(plain);
  forward_kinematics(plain, data, neutral_configuration(plain));
  std::vector<Contact> contacts;
  ContactDetector(plain, {}, self).detect(plain, data, contacts);
  ASSERT_EQ(contacts.size(), 1u);
  EXPECT_NEAR(contacts[0].gap, 0.15 - 0.2, 1e-12);  // the spheres overlap by 5 cm

  urdf::LoadOptions o;
  o.srdf = dir.write("arms.srdf", R"(<robot name="arms"><disable_collisions link1="right_arm" link2="left_arm"/></robot>)");
  const Model m = urdf::load_string(kArms, o, "arms.urdf");
  ASSERT_EQ(m.disabled_collisions().size(), 1u);
  EXPECT_TRUE(m.collision_disabled("left_arm", "right_arm"));
  EXPECT_FALSE(m.collision_disabled("left_arm", "trunk"));
  EXPECT_TRUE(ContactDetector(m, {}, self).pairs().empty());

  WorldBuilder wb;
  wb.add_model("a", m);
  wb.add_model("b", plain);
  wb.set_self_collision(true);
  const World w = wb.build();
  EXPECT_TRUE(w.model().collision_disabled("a/left_arm", "a/right_arm"));
  EXPECT_FALSE(w.model().collision_disabled("b/left_arm", "b/right_arm"));
  // a's arms: left out; b's arms: one pair; a and b: separate robots, 4 pairs.
  EXPECT_EQ(ContactDetector(w.model(), {}, self).pairs().size(), 5u);
}

// ---- collision shapes chosen per link ---------------------------------------------------------

TEST(CollisionOverrides, ReplaceALinksShapesAndItsMeshIsNeverRead) {
  // A foot whose mesh does not exist: loading collision meshes strictly fails,
  // unless the foot's shapes are replaced.
  const std::string robot = R"(<robot name="leg">
  <link name="hip"><inertial><mass value="2"/><inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial>
    <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <joint name="knee" type="revolute"><parent link="hip"/><child link="shank"/><origin xyz="0 0 -0.2"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="0" effort="10" velocity="5"/></joint>
  <link name="shank"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><geometry><cylinder radius="0.02" length="0.2"/></geometry></collision></link>
  <joint name="ankle" type="fixed"><parent link="shank"/><child link="foot"/><origin xyz="0 0 -0.2"/></joint>
  <link name="foot"><collision><geometry><mesh filename="package://nowhere/foot.stl"/></geometry></collision></link>
</robot>)";
  urdf::LoadOptions o;
  o.collision_meshes = urdf::CollisionMeshes::Load;
  o.search_environment = false;
  expect_error<UrdfError>([&] { urdf::load_string(robot, o, "leg.urdf"); }, {"link 'foot'", "nowhere"});
  urdf::LinkCollision ball;
  ball.geometry = Sphere{0.03};
  ball.origin = Transform::from_pose(Mat3::Identity(), Vec3(0.01, 0, -0.005));
  ball.material.mu = 0.9;
  o.collision_overrides["foot"] = {ball};
  o.collision_overrides["shank"] = {};  // out of contact
  const Model m = urdf::load_string(robot, o, "leg.urdf");
  ASSERT_EQ(m.collisions().size(), 2u);
  const CollisionShape& foot = m.collisions()[1];
  EXPECT_EQ(foot.link, "foot");
  EXPECT_EQ(std::get<Sphere>(foot.geometry).radius, 0.03);
  EXPECT_EQ(foot.material.mu, 0.9);
  // Placed as a URDF collision origin on the foot, which sits 0.2 m below the knee.
  Data data(m);
  forward_kinematics(m, data, neutral_configuration(m));
  const Vec3 centre = (foot.placement * data.X0[foot.body]).r();  // X = (E, r): r is the shape's origin in world coordinates
  EXPECT_NEAR((centre - Vec3(0.01, 0, -0.405)).norm(), 0.0, 1e-15) << centre.transpose();
  EXPECT_EQ(m.collisions()[0].link, "hip");
  // A link the URDF does not have: an error with the close name.
  o.collision_overrides["fot"] = {ball};
  expect_error<UrdfError>([&] { urdf::load_string(robot, o, "leg.urdf"); },
                          {"link 'fot'", "does not have", "did you mean 'foot'"});
}

// ---- world files ------------------------------------------------------------------------------

namespace {

struct WorldDir {
  test::ScratchDir dir{"semantics_worlds"};
  std::string arms = dir.write("arms.urdf", kArms);
  Scenario load(const std::string& body) const {
    return load_world(dir.write("w.xml", "<world>\n" + body + "\n<ground/>\n</world>"));
  }
  std::string error(const std::string& body) const {
    try {
      load(body);
    } catch (const WorldError& e) {
      return e.what();
    }
    return "no error";
  }
};

// A lynx model element with the SRDF and a state body.
std::string lynx(const std::string& state, const std::string& extra_attributes = "") {
  return "<model name=\"lynx\" urdf=\"" + kLynx + "\" root=\"free\" " + extra_attributes + ">" + state + "</model>";
}

}  // namespace

TEST(WorldCollision, LinkShapesAreReplacedOrTurnedOff) {
  const WorldDir w;
  const Scenario s = w.load(R"(<model name="r" urdf="arms.urdf">
  <collision link="left_arm"><sphere radius="0.05" pos="0 0 -0.3" mu="0.3"/><box size="0.1 0.1 0.02" pos="0 0 -0.1" rpy="0 0 0.5"/></collision>
  <collision link="right_arm" enabled="false"/>
</model>)");
  const Model& m = s.world.model();
  ASSERT_EQ(m.collisions().size(), 2u);
  EXPECT_EQ(m.collisions()[0].link, "r/left_arm");
  EXPECT_EQ(std::get<Sphere>(m.collisions()[0].geometry).radius, 0.05);
  EXPECT_EQ(m.collisions()[0].material.mu, 0.3);
  EXPECT_EQ(std::get<Box>(m.collisions()[1].geometry).half_extents(), Vec3(0.05, 0.05, 0.01));
  EXPECT_NE(w.error(R"(<model name="r" urdf="arms.urdf"><collision link="left_arm"><mesh/></collision></model>)")
                .find("w.xml:2: <mesh>: unknown element inside <collision> (expected sphere, box, capsule or cylinder)"),
            std::string::npos);
  EXPECT_NE(w.error(R"(<model name="r" urdf="arms.urdf"><collision link="left_arm" enabled="false"><sphere radius="1"/></collision></model>)")
                .find("<sphere>: a shape inside <collision enabled=\"false\">"),
            std::string::npos);
  EXPECT_NE(w.error(R"(<model name="r" urdf="arms.urdf"><collision link="left_arm"/></model>)").find("no shape"), std::string::npos);
  EXPECT_NE(w.error(R"(<model name="r" urdf="arms.urdf"><collision link="left_arm" enabled="false"/>
<collision link="left_arm" enabled="false"/></model>)")
                .find("w.xml:3: <collision>: a second <collision> for link 'left_arm' (the first is on line 2)"),
            std::string::npos);
  const std::string unknown = w.error(R"(<model name="r" urdf="arms.urdf"><collision link="left_amr" enabled="false"/></model>)");
  EXPECT_NE(unknown.find("model 'r'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("link 'left_amr', which the URDF does not have (did you mean 'left_arm'?)"), std::string::npos) << unknown;
  EXPECT_NE(w.error(R"(<model name="r" urdf="arms.urdf"><collision link="left_arm"><sphere radius="-1"/></collision></model>)")
                .find("radius=\"-1\" must be finite and positive"),
            std::string::npos);
}

TEST(WorldState, AReferencePostureThenSingleJoints) {
  const WorldDir w;
  const std::string srdf = "srdf=\"" + kLynxSrdf + "\"";
  const Scenario s = w.load(lynx(R"(<state reference="crouching">
      <joint name="root_joint" q="0.1 0 0.4  0 0 0 1" v="0.5 0 0  0 0 0"/>
      <joint name="LF_KFE" q="-2"/><joint name="RH_HFE" v="1.5"/></state>)", srdf));
  const Model& m = s.world.model();
  urdf::LoadOptions o;
  o.root = urdf::RootJoint::FreeFlyer;
  o.srdf = kLynxSrdf;
  VectorX q = urdf::load(kLynx, o).named_configuration("crouching").q;
  q.head<3>() << 0.1, 0.0, 0.4;
  q(m.joint(m.get_joint("lynx/LF_KFE")).q_index) = -2.0;
  EXPECT_EQ(s.world.q0(), q);
  VectorX v = VectorX::Zero(m.nv());
  v(0) = 0.5;
  v(m.joint(m.get_joint("lynx/RH_HFE")).v_index) = 1.5;
  EXPECT_EQ(s.world.v0(), v);
  // The PD target defaults to that initial state.
  ASSERT_TRUE(!s.controller);

  auto error = [&](const std::string& state, const std::string& attrs) { return w.error(lynx(state, attrs)); };
  EXPECT_NE(error(R"(<state reference="crouch"/>)", srdf).find("no named configuration 'crouch' (did you mean 'crouching'?); it has 'standing', 'crouching'"),
            std::string::npos);
  EXPECT_NE(error(R"(<state reference="standing"/>)", "").find("it has none"), std::string::npos);
  EXPECT_NE(error(R"(<state reference="standing"/>)", "").find("(the model has no srdf=\"…\")"), std::string::npos);
  EXPECT_NE(error(R"(<state reference="standing" q="0"/>)", srdf).find("give q or reference, not both"), std::string::npos);
  EXPECT_NE(error(R"(<state><joint name="LF_KNE" q="1"/></state>)", "").find("model 'lynx' has no moving joint named 'LF_KNE' (did you mean 'LF_KFE'"),
            std::string::npos);
  EXPECT_NE(error(R"(<state><joint name="LF_KFE" q="1 2"/></state>)", "").find("q has 2 entries, expected 1 (coordinates of joint 'LF_KFE' (revolute))"),
            std::string::npos);
  EXPECT_NE(error(R"(<state><joint name="LF_KFE"/></state>)", "").find("give q, v or both"), std::string::npos);
  EXPECT_NE(error(R"(<state><joint name="LF_KFE" q="1"/><joint name="LF_KFE" v="1"/></state>)", "").find("set twice"),
            std::string::npos);
  EXPECT_NE(error(R"(<state><pose/></state>)", "").find("unknown element inside <state>"), std::string::npos);
  EXPECT_NE(w.error(lynx("", "srdf=\"missing.srdf\"")).find("missing.srdf: cannot open the SRDF"), std::string::npos);
}

TEST(WorldController, TargetsByJointName) {
  const WorldDir w;
  const Scenario s = w.load(lynx("<state><joint name=\"root_joint\" q=\"0 0 1  0 0 0 1\"/></state>") + R"(
<controller type="pd" model="lynx" kp="100" target="0 0.8 -1.6  0 0.8 -1.6  0 0.8 -1.6  0 0.8 -1.6">
  <target joint="LF_KFE" q="-1.7"/><target joint="RH_HAA" q="0.1"/>
</controller>)");
  ASSERT_TRUE(s.controller);
  const Model& m = s.world.model();
  auto target = [&](const std::string& joint) { return s.controller->q_target(m.joint(m.get_joint("lynx/" + joint)).q_index); };
  EXPECT_EQ(target("LF_KFE"), -1.7);
  EXPECT_EQ(target("RH_HAA"), 0.1);
  EXPECT_EQ(target("RF_KFE"), -1.6);
  EXPECT_EQ(target("LH_HFE"), 0.8);
  auto error = [&](const std::string& t) {
    return w.error(lynx("") + "<controller type=\"pd\" kp=\"100\">" + t + "</controller>");
  };
  EXPECT_NE(error(R"(<target joint="LF_KNE" q="1"/>)").find("no moving joint named 'LF_KNE' (did you mean 'LF_KFE'"), std::string::npos);
  EXPECT_NE(error(R"(<target joint="root_joint" q="1"/>)").find("free-flyer joint; the PD controller drives 1-DoF joints only"),
            std::string::npos);
  EXPECT_NE(error(R"(<target joint="LF_KFE"/>)").find("missing attribute 'q'"), std::string::npos);
  EXPECT_NE(error(R"(<target joint="LF_KFE" q="1"/><target joint="LF_KFE" q="2"/>)").find("second target"), std::string::npos);
  EXPECT_NE(error(R"(<gain/>)").find("unknown element inside <controller>"), std::string::npos);
}

// models/worlds/lynx_standing.xml: the mesh-footed robot, its posture from
// the SRDF, stands under a 1 kHz PD in the event-driven scheme with
// self-collision on (the SRDF's pairs left out): it finishes, never sinks
// more than 1e-6 m, comes to rest, and the ground carries its whole weight.
TEST(LynxStanding, StandsOnItsMeshFeetUnderPd) {
  Scenario s = load_world(model_path("worlds/lynx_standing.xml"));
  EXPECT_TRUE(s.world.self_collision());
  EXPECT_EQ(s.world.model().disabled_collisions().size(), 12u);
  Simulator sim(s.world, s.options);
  ASSERT_TRUE(s.controller);
  sim.set_controller(s.controller->function(s.world.model()), s.controller_period);
  MemoryRecorder rec;
  const SimulationResult r = sim.run(&rec);
  ASSERT_EQ(r.status, SimulationStatus::Finished) << r.message;
  EXPECT_LE(r.statistics.max_penetration, 1e-6);
  EXPECT_EQ(r.statistics.fallbacks, 0);
  EXPECT_LT(sim.v().lpNorm<Eigen::Infinity>(), 1e-3);
  EXPECT_NEAR(sim.q()(2), 0.43802, 0.03);  // the trunk near the posture's height
  // Statics at rest: the ground's normal forces at the last instant sum to m g.
  double last = 0.0, load = 0.0;
  for (const ContactSample& c : rec.contacts) last = std::max(last, c.time);
  for (const ContactSample& c : rec.contacts) load += c.time == last ? c.normal_force : 0.0;
  const double weight = s.world.model().total_mass() * 9.81;
  EXPECT_NEAR(load, weight, 1e-3 * weight) << "at t = " << last;
}
