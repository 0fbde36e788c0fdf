// URDF loading: every model in models/, merging of fixed joints checked
// against an independent reading of the raw XML, and every bad-input case.
#include <gtest/gtest.h>
#include <tinyxml2.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/energy.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/error.hpp"
#include "test_utils.hpp"

using namespace plume;
using plume::test::all_models;
using plume::test::load_model;
using plume::test::model_path;

namespace {

// ---- an independent reader of the raw URDF: link poses at q = 0 ------------------

struct RawLink {
  double mass = 0.0;
  Vec3 com = Vec3::Zero();  // in the link frame
  Mat3 R = Mat3::Identity();
  Vec3 p = Vec3::Zero();  // world pose at q = 0
  bool posed = false;
};

Vec3 parse3(const char* s, const Vec3& fallback = Vec3::Zero()) {
  if (!s) return fallback;
  std::istringstream in(s);
  Vec3 v;
  in >> v.x() >> v.y() >> v.z();
  return v;
}

// URDF rpy: R = Rz(yaw) Ry(pitch) Rx(roll).
Mat3 rpy(const Vec3& a) {
  return (Eigen::AngleAxisd(a.z(), Vec3::UnitZ()) * Eigen::AngleAxisd(a.y(), Vec3::UnitY()) *
          Eigen::AngleAxisd(a.x(), Vec3::UnitX()))
      .toRotationMatrix();
}

std::map<std::string, RawLink> raw_links_at_zero(const std::string& file) {
  tinyxml2::XMLDocument doc;
  EXPECT_EQ(doc.LoadFile(file.c_str()), tinyxml2::XML_SUCCESS);
  std::map<std::string, RawLink> links;
  struct RawJoint {
    std::string parent, child;
    Mat3 R;
    Vec3 p;
  };
  std::vector<RawJoint> joints;
  const auto* robot = doc.RootElement();
  for (const auto* e = robot->FirstChildElement("link"); e; e = e->NextSiblingElement("link")) {
    RawLink l;
    if (const auto* in = e->FirstChildElement("inertial")) {
      l.mass = in->FirstChildElement("mass")->DoubleAttribute("value");
      if (const auto* o = in->FirstChildElement("origin")) l.com = parse3(o->Attribute("xyz"));
    }
    links[e->Attribute("name")] = l;
  }
  for (const auto* e = robot->FirstChildElement("joint"); e; e = e->NextSiblingElement("joint")) {
    RawJoint j;
    j.parent = e->FirstChildElement("parent")->Attribute("link");
    j.child = e->FirstChildElement("child")->Attribute("link");
    const auto* o = e->FirstChildElement("origin");
    j.p = o ? parse3(o->Attribute("xyz")) : Vec3::Zero();
    j.R = o ? rpy(parse3(o->Attribute("rpy"))) : Mat3::Identity();
    joints.push_back(j);
  }
  // The root has no parent joint; propagate poses until every link is placed.
  for (auto& [name, l] : links) {
    bool has_parent = false;
    for (const auto& j : joints) has_parent |= j.child == name;
    l.posed = !has_parent;
  }
  for (std::size_t pass = 0; pass < links.size(); ++pass) {
    for (const auto& j : joints) {
      const RawLink& parent = links[j.parent];
      RawLink& child = links[j.child];
      if (parent.posed && !child.posed) {
        child.R = parent.R * j.R;
        child.p = parent.p + parent.R * j.p;
        child.posed = true;
      }
    }
  }
  return links;
}

VectorX zero_configuration(const Model& m) {
  VectorX q = VectorX::Zero(m.nq());
  for (int i = 1; i < m.nbodies(); ++i) {
    if (m.joint(i).type == JointType::FreeFlyer) q(m.joint(i).q_index + 6) = 1.0;
  }
  return q;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const UrdfError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("WRONG EXCEPTION TYPE: ") + e.what();
  }
  return "NO ERROR";
}

// A minimal valid robot with one revolute joint; `link2` and `joint` replace parts.
std::string robot(const std::string& link2_inertial =
                      R"(<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)",
                  const std::string& joint_extra = R"(<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="5"/>)",
                  const std::string& joint_type = "revolute", const std::string& tail = "") {
  return R"(<?xml version="1.0"?>
<robot name="mini">
  <link name="base"/>
  <link name="arm">)" +
         link2_inertial + R"(</link>
  <joint name="shoulder" type=")" +
         joint_type + R"(">
    <parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.5" rpy="0 0 0"/>)" +
         joint_extra + R"(
  </joint>)" + tail +
         R"(
</robot>)";
}

}  // namespace

TEST(Urdf, EveryModelLoadsWithTheExpectedSizes) {
  const std::map<std::string, std::pair<int, int>> sizes{
      {"pendulum.urdf", {1, 1}}, {"double_pendulum.urdf", {2, 2}}, {"rod.urdf", {3, 3}},
      {"ball.urdf", {7, 6}},     {"balls_row.urdf", {5, 5}},        {"arm7.urdf", {7, 7}},
      {"quadruped.urdf", {19, 18}}, {"humanoid.urdf", {37, 36}}};
  for (const auto& nm : all_models()) {
    SCOPED_TRACE(nm.file);
    const Model m = load_model(nm.file, nm.root);
    EXPECT_EQ(m.nq(), sizes.at(nm.file).first);
    EXPECT_EQ(m.nv(), sizes.at(nm.file).second);
    for (int i = 1; i < m.nbodies(); ++i) EXPECT_LT(m.parent(i), i);
  }
}

TEST(Urdf, MergingKeepsTotalMassCentreOfMassAndLinkPoses) {
  for (const auto& nm : all_models()) {
    SCOPED_TRACE(nm.file);
    const Model m = load_model(nm.file, nm.root);
    const auto raw = raw_links_at_zero(model_path(nm.file));
    double mass = 0.0;
    Vec3 mc = Vec3::Zero();
    for (const auto& [name, l] : raw) {
      ASSERT_TRUE(l.posed) << name;
      mass += l.mass;
      mc += l.mass * (l.p + l.R * l.com);
    }
    EXPECT_NEAR(m.total_mass(), mass, 1e-12 * mass);
    Data d(m);
    const VectorX q = zero_configuration(m);
    EXPECT_TRUE(center_of_mass(m, d, q).isApprox(mc / mass, 1e-12)) << center_of_mass(m, d, q).transpose();
    // Every link is a frame, placed where the raw URDF puts it.
    update_frame_placements(m, d);
    for (const auto& [name, l] : raw) {
      const int f = m.get_frame(name);
      const Transform& X = d.Xframe[f];
      EXPECT_TRUE(X.r().isApprox(l.p, 1e-12) || (X.r() - l.p).norm() < 1e-12) << name;
      EXPECT_TRUE(X.pose_rotation().isApprox(l.R, 1e-12)) << name;
    }
  }
}

TEST(Urdf, CollisionShapesMoveWithMergedLinks) {
  const Model m = load_model("quadruped.urdf", urdf::RootJoint::FreeFlyer);
  const auto raw = raw_links_at_zero(model_path("quadruped.urdf"));
  Data d(m);
  forward_kinematics(m, d, zero_configuration(m));
  int feet = 0;
  for (const CollisionShape& s : m.collisions()) {
    if (!std::holds_alternative<Sphere>(s.geometry)) continue;
    ++feet;
    // The foot sphere sits at its link's origin (the URDF places it there).
    const Vec3 centre = d.X0[s.body].inverse_transform_point(s.placement.inverse_transform_point(Vec3::Zero()));
    EXPECT_TRUE(centre.isApprox(raw.at(s.link).p, 1e-12)) << s.link;
    EXPECT_TRUE(usable_for_contact(s.geometry));
  }
  EXPECT_EQ(feet, 4);
}

TEST(Urdf, PlanarRootMovesInTheVerticalPlane) {
  const Model m = load_model("rod.urdf", urdf::RootJoint::Planar);
  Data d(m);
  // q = (x, z, θ): gravity acts on the second coordinate only.
  const VectorX g = gravity_torques(m, d, VectorX::Zero(3));
  EXPECT_NEAR(g(0), 0.0, 1e-12);
  EXPECT_NEAR(g(1), m.total_mass() * 9.81, 1e-12);
  EXPECT_NEAR(g(2), 0.0, 1e-12);
  // The rod's end frames: θ > 0 lifts the +x end.
  VectorX q(3);
  q << 0.0, 1.0, 0.3;
  forward_kinematics(m, d, q);
  update_frame_placements(m, d);
  const Vec3 right = d.Xframe[m.get_frame("end_right")].r();
  EXPECT_NEAR(right.z(), 1.0 + std::sin(0.3), 1e-12);
  EXPECT_NEAR(right.x(), std::cos(0.3), 1e-12);
  EXPECT_NEAR(right.y(), 0.0, 1e-12);
}

TEST(Urdf, MissingEmptyAndMalformedFiles) {
  EXPECT_NE(error_of([] { urdf::load("/nonexistent/robot.urdf"); }).find("/nonexistent/robot.urdf: cannot open"),
            std::string::npos);
  EXPECT_NE(error_of([] { urdf::load_string("", {}, "empty.urdf"); }).find("empty.urdf: the file is empty"),
            std::string::npos);
  const std::string not_xml = error_of([] { urdf::load_string("this is not XML at all {", {}, "junk.urdf"); });
  EXPECT_NE(not_xml.find("junk.urdf"), std::string::npos) << not_xml;
  EXPECT_NE(not_xml.find("XML"), std::string::npos) << not_xml;
  const std::string truncated = robot().substr(0, robot().size() / 2);
  const std::string t = error_of([&] { urdf::load_string(truncated, {}, "cut.urdf"); });
  EXPECT_NE(t.find("cut.urdf:"), std::string::npos) << t;
  EXPECT_NE(t.find("malformed XML"), std::string::npos) << t;
  const std::string wrong_root = error_of([] { urdf::load_string("<sdf/>", {}, "w.urdf"); });
  EXPECT_NE(wrong_root.find("<robot>"), std::string::npos) << wrong_root;
}

TEST(Urdf, InvalidPhysicsNamesTheLink) {
  const std::string neg = error_of([] {
    urdf::load_string(robot(R"(<inertial><mass value="-1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)"),
                      {}, "neg.urdf");
  });
  EXPECT_NE(neg.find("neg.urdf:"), std::string::npos) << neg;
  EXPECT_NE(neg.find("link 'arm'"), std::string::npos) << neg;
  EXPECT_NE(neg.find("negative mass"), std::string::npos) << neg;

  const std::string nan = error_of([] {
    urdf::load_string(robot(R"(<inertial><mass value="1"/><inertia ixx="nan" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)"),
                      {}, "nan.urdf");
  });
  EXPECT_NE(nan.find("nan.urdf"), std::string::npos) << nan;
  EXPECT_TRUE(nan.find("arm") != std::string::npos || nan.find("ixx") != std::string::npos) << nan;

  // The triangle inequality is refused under the strict inertia policy
  // (the default, warn, loads it: tests/test_published_robots.cpp).
  const std::string tri = error_of([] {
    urdf::LoadOptions strict;
    strict.inertia = InertiaPolicy::Strict;
    urdf::load_string(robot(R"(<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.5"/></inertial>)"),
                      strict, "tri.urdf");
  });
  EXPECT_NE(tri.find("link 'arm' (tri.urdf:"), std::string::npos) << tri;
  EXPECT_NE(tri.find("triangle inequality"), std::string::npos) << tri;

  const std::string indefinite = error_of([] {
    urdf::load_string(robot(R"(<inertial><mass value="1"/><inertia ixx="0.1" ixy="0.5" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>)"),
                      {}, "pd.urdf");
  });
  EXPECT_NE(indefinite.find("link 'arm'"), std::string::npos) << indefinite;
  EXPECT_NE(indefinite.find("positive semi-definite"), std::string::npos) << indefinite;

  const std::string massless = error_of([] { urdf::load_string(robot(""), {}, "massless.urdf"); });
  EXPECT_NE(massless.find("'arm'"), std::string::npos) << massless;
  EXPECT_NE(massless.find("singular"), std::string::npos) << massless;
}

TEST(Urdf, InvalidJointsNameTheJoint) {
  const std::string zero = error_of([] {
    urdf::load_string(robot(R"(<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)",
                            R"(<axis xyz="0 0 0"/><limit lower="-1" upper="1" effort="10" velocity="5"/>)"),
                      {}, "axis.urdf");
  });
  EXPECT_NE(zero.find("joint 'shoulder'"), std::string::npos) << zero;
  EXPECT_NE(zero.find("axis is zero"), std::string::npos) << zero;

  const std::string unknown = error_of([] {
    urdf::load_string(robot(R"(<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)",
                            "", "ball_joint"),
                      {}, "type.urdf");
  });
  EXPECT_NE(unknown.find("joint 'shoulder'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("unknown joint type 'ball_joint'"), std::string::npos) << unknown;

  // A non-unit axis is normalised with a warning.
  const Model m = urdf::load_string(
      robot(R"(<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)",
            R"(<axis xyz="0 0 2"/><limit lower="-1" upper="1" effort="10" velocity="5"/>)"));
  EXPECT_TRUE(m.joint(1).axis.isApprox(Vec3::UnitZ()));
  ASSERT_EQ(m.warnings().size(), 1u);
  EXPECT_NE(m.warnings()[0].find("shoulder"), std::string::npos);
}

TEST(Urdf, CyclesAndTwoRootsAreRejected) {
  const std::string I = R"(<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)";
  const std::string two_roots = "<robot name='r'><link name='a'>" + I + "</link><link name='b'>" + I + "</link></robot>";
  const std::string e1 = error_of([&] { urdf::load_string(two_roots, {}, "roots.urdf"); });
  EXPECT_NE(e1.find("roots.urdf"), std::string::npos) << e1;
  EXPECT_NE(e1.find("root"), std::string::npos) << e1;
  EXPECT_NE(e1.find("'a'") == std::string::npos ? e1.find("[a]") : e1.find("'a'"), std::string::npos) << e1;

  const std::string cycle = "<robot name='r'><link name='a'>" + I + "</link><link name='b'>" + I +
                            "</link><joint name='ab' type='continuous'><parent link='a'/><child link='b'/></joint>"
                            "<joint name='ba' type='continuous'><parent link='b'/><child link='a'/></joint></robot>";
  const std::string e2 = error_of([&] { urdf::load_string(cycle, {}, "cycle.urdf"); });
  EXPECT_NE(e2.find("cycle.urdf"), std::string::npos) << e2;
  EXPECT_NE(e2.find("root"), std::string::npos) << e2;

  // A link with two parent joints, and a loop hanging off a valid tree.
  const std::string two_parents = "<robot name='r'><link name='a'>" + I + "</link><link name='b'>" + I + "</link><link name='c'>" + I +
                                  "</link><joint name='ab' type='continuous'><parent link='a'/><child link='c'/></joint>"
                                  "<joint name='bc' type='continuous'><parent link='b'/><child link='c'/></joint></robot>";
  const std::string e3 = error_of([&] { urdf::load_string(two_parents, {}, "two.urdf"); });
  EXPECT_NE(e3.find("link 'c'"), std::string::npos) << e3;
  EXPECT_NE(e3.find("'ab' and 'bc'"), std::string::npos) << e3;
  const std::string loop = "<robot name='r'><link name='root'>" + I + "</link><link name='x'>" + I + "</link><link name='y'>" + I +
                           "</link><joint name='xy' type='continuous'><parent link='x'/><child link='y'/></joint>"
                           "<joint name='yx' type='continuous'><parent link='y'/><child link='x'/></joint></robot>";
  const std::string e4 = error_of([&] { urdf::load_string(loop, {}, "loop.urdf"); });
  EXPECT_NE(e4.find("cycle"), std::string::npos) << e4;
  EXPECT_NE(e4.find("'root'"), std::string::npos) << e4;
  const std::string dangling = "<robot name='r'><link name='a'>" + I +
                               "</link><joint name='j' type='continuous'><parent link='a'/><child link='ghost'/></joint></robot>";
  const std::string e5 = error_of([&] { urdf::load_string(dangling, {}, "ghost.urdf"); });
  EXPECT_NE(e5.find("joint 'j': child link 'ghost' is not defined"), std::string::npos) << e5;
}

TEST(Urdf, MimicJointsWarnOrAreRejected) {
  const std::string I = R"(<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)";
  const std::string xml = robot(I, R"(<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="5"/>)",
                                "revolute",
                                "<link name='finger'>" + I +
                                    "</link><joint name='finger_joint' type='revolute'><parent link='arm'/><child "
                                    "link='finger'/><axis xyz='1 0 0'/><limit lower='-1' upper='1' effort='1' "
                                    "velocity='1'/><mimic joint='shoulder' multiplier='2' offset='0.1'/></joint>");
  const Model m = urdf::load_string(xml);
  EXPECT_EQ(m.nv(), 2);
  ASSERT_EQ(m.warnings().size(), 1u);
  EXPECT_NE(m.warnings()[0].find("'finger_joint' mimics 'shoulder'"), std::string::npos) << m.warnings()[0];
  urdf::LoadOptions strict;
  strict.reject_mimic = true;
  const std::string e = error_of([&] { urdf::load_string(xml, strict, "mimic.urdf"); });
  EXPECT_NE(e.find("joint 'finger_joint'"), std::string::npos) << e;
  EXPECT_NE(e.find("mimic"), std::string::npos) << e;
}

TEST(Urdf, MeshesAreKeptButNotUsableForContact) {
  const std::string xml = robot(
      R"(<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
         <collision><geometry><mesh filename="package://mini/arm.stl"/></geometry></collision>)");
  const Model m = urdf::load_string(xml);
  ASSERT_EQ(m.collisions().size(), 1u);
  EXPECT_FALSE(usable_for_contact(m.collisions()[0].geometry));
  EXPECT_EQ(std::string(geometry_name(m.collisions()[0].geometry)), "mesh");
  ASSERT_EQ(m.warnings().size(), 1u);
  EXPECT_NE(m.warnings()[0].find("arm.stl"), std::string::npos);
}

TEST(Urdf, PlumeExtensionSetsContactParameters) {
  const std::string I =
      R"(<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
         <collision><geometry><sphere radius="0.05"/></geometry></collision>)";
  const Model m = urdf::load_string(robot(I, R"(<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="5"/>)",
                                          "revolute",
                                          R"(<plume><contact link="arm" mu="0.7" restitution="0.2" stiffness="1e5" damping="300"/></plume>)"));
  ASSERT_EQ(m.collisions().size(), 1u);
  const ContactMaterial& c = m.collisions()[0].material;
  EXPECT_DOUBLE_EQ(*c.mu, 0.7);
  EXPECT_DOUBLE_EQ(*c.restitution, 0.2);
  EXPECT_DOUBLE_EQ(*c.stiffness, 1e5);
  EXPECT_DOUBLE_EQ(*c.damping, 300.0);
  const std::string bad = error_of([&] {
    urdf::load_string(robot(I, R"(<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="5"/>)", "revolute",
                            "\n<plume>\n<contact link=\"nope\" mu=\"1\"/></plume>"),
                      {}, "ext.urdf");
  });
  EXPECT_NE(bad.find("ext.urdf:"), std::string::npos) << bad;
  EXPECT_NE(bad.find("'nope'"), std::string::npos) << bad;
}

TEST(Urdf, ContinuousJointsHaveNoLimitsAndDynamicsAreKept) {
  const Model arm = load_model("arm7.urdf", urdf::RootJoint::Fixed);
  for (int k = 0; k < arm.nv(); ++k) {
    EXPECT_TRUE(std::isfinite(arm.lower_position_limit()(k)));
    EXPECT_GT(arm.effort_limit()(k), 0.0);
  }
  EXPECT_GT(arm.damping().sum(), 0.0);
  const std::string I = R"(<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)";
  const Model c = urdf::load_string(robot(I, R"(<axis xyz="0 1 0"/><dynamics damping="0.5" friction="0.1"/>)", "continuous"));
  EXPECT_EQ(c.joint(1).type, JointType::Continuous);
  EXPECT_TRUE(std::isinf(c.lower_position_limit()(0)));
  EXPECT_DOUBLE_EQ(c.damping()(0), 0.5);
  EXPECT_DOUBLE_EQ(c.friction()(0), 0.1);
}

// Published URDFs write π/2 as 1.57079632679 (4.9e-12 rad off): such joint
// origins are snapped to the exact quarter turn, one 1e-6 rad off is not. The
// snapped model's H and bias forces equal, to ~1e-10, the mean of the two
// unsnapped models at π/2 ± 1e-6 (which take the general-rotation kernels;
// H and C are smooth in the angle, so the mean is π/2's values to O(1e-12)).
TEST(Urdf, RoundedQuarterTurnsAreSnappedAndGiveTheUnsnappedDynamics) {
  const auto arm = [](const std::string& angle) {
    std::string links, joints;
    for (int i = 1; i <= 4; ++i) {
      const std::string n = std::to_string(i);
      links += "<link name='l" + n + "'><inertial><origin xyz='0.02 0.1 0.03' rpy='0 0 0'/><mass value='" +
               std::to_string(1.0 + 0.3 * i) +
               "'/><inertia ixx='0.03' ixy='0.002' ixz='-0.001' iyy='0.02' iyz='0.003' izz='0.025'/>"
               "</inertial></link>";
      const std::string rpy = i % 2 ? angle + " 0 0" : "0 0 -" + angle;
      joints += "<joint name='j" + n + "' type='revolute'><parent link='l" + std::to_string(i - 1) +
                "'/><child link='l" + n + "'/><origin xyz='0 0.05 0.3' rpy='" + rpy +
                "'/><axis xyz='0 0 1'/><limit lower='-3' upper='3' effort='10' velocity='5'/></joint>";
    }
    return "<robot name='arm'><link name='l0'/>" + links + joints + "</robot>";
  };
  const Model rounded = urdf::load_string(arm("1.57079632679"));
  const Model plus = urdf::load_string(arm("1.570797326794897"));    // π/2 + 1e-6
  const Model minus = urdf::load_string(arm("1.570795326794897"));   // π/2 − 1e-6
  for (int i = 1; i <= 4; ++i) {
    EXPECT_TRUE(rounded.joint(i).tree_rotation_permutation) << i;
    EXPECT_FALSE(plus.joint(i).tree_rotation_permutation) << i;
    EXPECT_FALSE(minus.joint(i).tree_rotation_permutation) << i;
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) {
        const double e = rounded.Xtree(i).E()(r, c);
        EXPECT_TRUE(e == 0.0 || e == 1.0 || e == -1.0) << e;
      }
    }
  }
  Data dr(rounded), dp(plus), dm(minus);
  std::mt19937_64 g(7);
  for (int k = 0; k < 5; ++k) {
    const VectorX q = test::random_vector(g, 4, 2.0), v = test::random_vector(g, 4, 2.0);
    const MatrixX H = crba(rounded, dr, q);
    const MatrixX Hmean = 0.5 * (crba(plus, dp, q) + crba(minus, dm, q));
    const VectorX C = bias_forces(rounded, dr, q, v);
    const VectorX Cmean = 0.5 * (bias_forces(plus, dp, q, v) + bias_forces(minus, dm, q, v));
    EXPECT_LT((H - Hmean).cwiseAbs().maxCoeff(), 1e-10);
    EXPECT_LT((C - Cmean).cwiseAbs().maxCoeff(), 1e-10);
    // The ±1e-6 models are different models: H moves by ~1e-6 with the angle.
    EXPECT_GT((crba(plus, dp, q) - H).cwiseAbs().maxCoeff(), 1e-8);
  }
}
