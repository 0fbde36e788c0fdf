// World files: every world in models/worlds loads and starts without
// penetration; the core elements map onto World, SimulationOptions and the PD
// controller; every bad input is a WorldError naming file, element and line.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>

#include "plume/algorithms/kinematics.hpp"
#include "plume/contact/detection.hpp"
#include "plume/error.hpp"
#include "plume/sim/world_file.hpp"
#include "test_utils.hpp"

using namespace plume;
namespace fs = std::filesystem;

namespace {

const std::string kModels = PLUME_MODELS_DIR;

Scenario load(const std::string& body, const std::string& source = "test.xml") {
  return load_world_string(body, source, kModels);
}

// A world with one free ball and whatever `extra` adds.
std::string ball_world(const std::string& extra, const std::string& state = "") {
  return "<world>\n  <model name=\"ball\" urdf=\"ball.urdf\" root=\"free\">" + state + "</model>\n" + extra + "\n</world>\n";
}

// Expects a WorldError whose message starts with "source:line: <element>: " and
// contains every string of `parts`.
void expect_error(const std::string& xml, int line, const std::string& element,
                  std::initializer_list<std::string> parts = {}) {
  SCOPED_TRACE(xml);
  try {
    load(xml);
    ADD_FAILURE() << "no error";
  } catch (const WorldError& e) {
    const std::string msg = e.what();
    const std::string prefix = "test.xml:" + std::to_string(line) + ": <" + element + ">: ";
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "message: " << msg << "\nexpected prefix: " << prefix;
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg << "\nmissing: " << p;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

// A scratch directory removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("plume_world_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
};

double min_gap(const World& world, double margin = 1.0) {
  DetectionOptions options;
  options.margin = margin;
  options.self_collision = world.self_collision();
  ContactDetector detector(world.model(), world.environment(), options);
  Data data(world.model());
  forward_kinematics(world.model(), data, world.q0());
  std::vector<Contact> contacts;
  detector.detect(world.model(), data, contacts);
  double g = std::numeric_limits<double>::infinity();
  for (const Contact& c : contacts) g = std::min(g, c.gap);
  return g;
}

}  // namespace

// ---- the shipped worlds ------------------------------------------------------------------------

TEST(WorldFile, EveryShippedWorldLoads) {
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(kModels + "/worlds")) {
    if (entry.path().extension() != ".xml") continue;
    SCOPED_TRACE(entry.path().string());
    const Scenario s = load_world(entry.path().string());
    found.insert(entry.path().filename().string());
    EXPECT_EQ(s.source, entry.path().string());
    EXPECT_GE(s.world.models().size(), 1u);
    EXPECT_EQ(s.world.q0().size(), s.world.model().nq());
    EXPECT_EQ(s.world.v0().size(), s.world.model().nv());
    EXPECT_EQ(s.options.scheme, Scheme::EventDriven);
    EXPECT_GT(s.options.duration, 0.0);
    // Nothing starts penetrating.
    EXPECT_GE(min_gap(s.world), -1e-9);
    if (s.controller) {
      EXPECT_EQ(s.controller->kp.size(), s.world.model().nv());
      EXPECT_NO_THROW(s.controller->function(s.world.model()));
    }
  }
  for (const char* name : {"bouncing_ball.xml", "falling_rod.xml", "newtons_cradle.xml", "quadruped_standing.xml",
                           "humanoid_falling.xml", "ball_off_step.xml"}) {
    EXPECT_TRUE(found.count(name)) << name;
  }
}

TEST(WorldFile, ShippedWorldsStartWhereTheirCommentsSay) {
  const std::string dir = kModels + "/worlds/";
  {
    const Scenario s = load_world(dir + "bouncing_ball.xml");
    EXPECT_NEAR(min_gap(s.world, 2.0), 1.0, 1e-12);  // h = 1 m
    EXPECT_EQ(s.world.default_contact().restitution, 0.8);
    EXPECT_GE(s.options.duration, 4.1);  // past t_inf = 4.06 s
  }
  {
    const Scenario s = load_world(dir + "falling_rod.xml");
    EXPECT_EQ(s.world.model().nq(), 3);
    EXPECT_NEAR(min_gap(s.world), 0.0, 1e-12);  // the left end on the floor
    EXPECT_EQ(s.world.default_contact().mu, 0.0);
    Data d(s.world.model());
    forward_kinematics(s.world.model(), d, s.world.q0());
    update_frame_placements(s.world.model(), d);
    const Vec3 left = d.Xframe[s.world.model().get_frame("rod/end_left")].r();
    const Vec3 right = d.Xframe[s.world.model().get_frame("rod/end_right")].r();
    EXPECT_NEAR(left.z(), 0.0, 1e-12);
    EXPECT_NEAR(right.z(), std::sqrt(2.0), 1e-12);  // 45°
    EXPECT_LT(left.x(), right.x());
  }
  {
    const Scenario s = load_world(dir + "newtons_cradle.xml");
    EXPECT_EQ(s.world.default_contact().restitution, 1.0);
    EXPECT_NEAR(min_gap(s.world), 0.001, 1e-12);
    EXPECT_EQ(s.world.v0()(0), 1.0);
    EXPECT_EQ(s.world.v0().tail(4).norm(), 0.0);
  }
  {
    const Scenario s = load_world(dir + "quadruped_standing.xml");
    ASSERT_TRUE(s.controller);
    EXPECT_EQ(s.world.default_contact().mu, 1.0);
    EXPECT_NEAR(s.controller_period, 1e-3, 1e-15);
    EXPECT_TRUE(s.options.torque_limits);
    EXPECT_NEAR(min_gap(s.world), 0.02, 1e-4);  // dropped from 2 cm
    const Model& m = s.world.model();
    for (const char* leg : {"LF", "RF", "LH", "RH"}) {
      const Joint& hfe = m.joint(m.get_joint(std::string("quad/") + leg + "_HFE"));
      const Joint& kfe = m.joint(m.get_joint(std::string("quad/") + leg + "_KFE"));
      EXPECT_EQ(s.controller->q_target(hfe.q_index), 0.8);
      EXPECT_EQ(s.controller->q_target(kfe.q_index), -1.6);
      EXPECT_GT(s.controller->kp(kfe.v_index), 0.0);
    }
    EXPECT_EQ(s.controller->kp.head(6).norm(), 0.0);  // the free-flyer is not actuated
  }
  {
    const Scenario s = load_world(dir + "humanoid_falling.xml");
    ASSERT_TRUE(s.controller);
    EXPECT_NEAR(min_gap(s.world), 0.10, 1e-4);
  }
  {
    const Scenario s = load_world(dir + "ball_off_step.xml");
    EXPECT_NEAR(min_gap(s.world), 0.0, 1e-12);  // resting on the step
    ASSERT_EQ(s.world.environment().size(), 2u);
    EXPECT_EQ(s.world.environment()[1].name, "step");
  }
}

// ---- the core ---------------------------------------------------------------------------------------

TEST(WorldFile, CoreElementsMapOntoTheWorld) {
  const Scenario s = load(R"(<?xml version="1.0"?>
<world gravity="0 0 -9.8">
  <model name="ball" urdf="ball.urdf" root="free">
    <state q="0.1 0.2 1.5  0 0 0 1" v="0 0 0  1 0 -2"/>
  </model>
  <ground normal="0 0 1" offset="0.25"/>
  <contact mu="0.8" restitution="0.2"/>
  <simulate scheme="event-driven" duration="2" output_rate="50"/>
</world>)");
  const World& w = s.world;
  EXPECT_EQ(s.source, "test.xml");
  ASSERT_EQ(w.models().size(), 1u);
  EXPECT_EQ(w.models()[0].name, "ball");
  EXPECT_EQ(w.models()[0].nq, 7);
  EXPECT_EQ(fs::path(w.models()[0].source), fs::path(kModels) / "ball.urdf");
  EXPECT_EQ(w.model().joint(1).type, JointType::FreeFlyer);
  EXPECT_TRUE(w.gravity().isApprox(Vec3(0, 0, -9.8)));
  VectorX q(7), v(6);
  q << 0.1, 0.2, 1.5, 0, 0, 0, 1;
  v << 0, 0, 0, 1, 0, -2;
  EXPECT_EQ(w.q0(), q);
  EXPECT_EQ(w.v0(), v);
  ASSERT_EQ(w.environment().size(), 1u);
  const EnvironmentShape& g = w.environment()[0];
  EXPECT_EQ(g.name, "ground");
  EXPECT_TRUE(std::holds_alternative<Plane>(g.geometry));
  // The plane's frame: its z axis is the outward normal, its origin on n·x = offset.
  EXPECT_TRUE(g.placement.pose_rotation().col(2).isApprox(Vec3::UnitZ()));
  EXPECT_NEAR(g.placement.r().z(), 0.25, 1e-15);
  EXPECT_NEAR(min_gap(w, 2.0), 1.5 - 0.1 - 0.25, 1e-12);
  EXPECT_EQ(w.default_contact().mu, 0.8);
  EXPECT_EQ(w.default_contact().restitution, 0.2);
  EXPECT_EQ(s.options.scheme, Scheme::EventDriven);
  EXPECT_EQ(s.options.duration, 2.0);
  EXPECT_EQ(s.options.output_rate, 50.0);
  EXPECT_FALSE(s.controller);
  EXPECT_FALSE(w.self_collision());
}

TEST(WorldFile, DefaultsWhenElementsAreLeftOut) {
  const Scenario s = load("<world><model name=\"arm\" urdf=\"arm7.urdf\"/></world>");
  const SimulationOptions defaults;
  EXPECT_EQ(s.options.duration, defaults.duration);
  EXPECT_EQ(s.options.output_rate, defaults.output_rate);
  EXPECT_EQ(s.options.integrator, defaults.integrator);
  EXPECT_TRUE(s.world.gravity().isApprox(Vec3(0, 0, -9.81)));
  EXPECT_EQ(s.world.model().joint(1).type, JointType::Revolute);  // root="fixed" by default
  EXPECT_EQ(s.world.q0(), VectorX::Zero(7));
  EXPECT_TRUE(s.world.environment().empty());
  EXPECT_EQ(s.world.default_contact().mu, ContactParameters{}.mu);
}

TEST(WorldFile, VectorsAcceptSpacesAndCommas) {
  for (const char* q : {"0,0,1.1,0,0,0,1", "0, 0, 1.1, 0, 0, 0, 1", " 0 0\n1.1\t0 0 0 1 ", "0 ,0 , 1.1 0,0 0 1", "+0 0 1.1e0 0 0 0 1"}) {
    SCOPED_TRACE(q);
    const Scenario s = load(ball_world("", std::string("<state q=\"") + q + "\"/>"));
    EXPECT_EQ(s.world.q0()(2), 1.1);
    EXPECT_EQ(s.world.q0()(6), 1.0);
  }
}

TEST(WorldFile, PlanarAndSeveralModels) {
  const Scenario s = load(R"(<world>
  <model name="rod" urdf="rod.urdf" root="planar"><state q="0 1 0.5" v="0 0 1"/></model>
  <model name="b1" urdf="ball.urdf" root="free"><state q="1 0 0.5 0 0 0 1"/></model>
  <model name="b2" urdf="ball.urdf" root="free"/>
  <ground/>
</world>)");
  const World& w = s.world;
  ASSERT_EQ(w.models().size(), 3u);
  EXPECT_EQ(w.model().nq(), 3 + 7 + 7);
  EXPECT_EQ(w.model().nv(), 3 + 6 + 6);
  EXPECT_EQ(w.models()[1].q_index, 3);
  EXPECT_EQ(w.models()[2].v_index, 9);
  EXPECT_EQ(w.q0().head(3), Eigen::Vector3d(0, 1, 0.5));
  EXPECT_EQ(w.q0()(3), 1.0);
  EXPECT_EQ(w.q0()(16), 1.0);  // b2: neutral (identity quaternion)
  EXPECT_EQ(w.v0()(2), 1.0);
  EXPECT_EQ(w.model().joint(1).type, JointType::Planar);
  EXPECT_EQ(w.model_index("b2"), 2);
}

TEST(WorldFile, EnvironmentShapes) {
  const Scenario s = load(ball_world(R"(
  <ground/>
  <ground normal="0 0 2" offset="-1" mu="0.1"/>
  <box name="step_1" size="1 2 0.2" pos="1 0 0.1" rpy="0 0 1.5707963267948966" restitution="0.5"/>
  <box size="1 1 1"/>
  <sphere radius="0.3" pos="0 3 0"/>
  <capsule name="post" radius="0.05" length="1" pos="0 -3 0.5" rpy="0.1 0.2 0.3"/>
  <cylinder radius="0.2" length="0.1"/>)"));
  const auto& env = s.world.environment();
  ASSERT_EQ(env.size(), 7u);
  EXPECT_EQ(env[0].name, "ground");
  EXPECT_EQ(env[1].name, "ground_2");
  EXPECT_EQ(env[2].name, "step_1");
  EXPECT_EQ(env[3].name, "box");
  EXPECT_EQ(env[4].name, "sphere");
  EXPECT_EQ(env[5].name, "post");
  EXPECT_EQ(env[6].name, "cylinder");
  // n·x = offset with n = (0, 0, 2): the plane z = −0.5.
  EXPECT_NEAR(env[1].placement.r().z(), -0.5, 1e-15);
  EXPECT_EQ(env[1].material.mu, 0.1);
  EXPECT_FALSE(env[1].material.restitution);
  const Box& box = std::get<Box>(env[2].geometry);
  EXPECT_EQ(box.size, Vec3(1, 2, 0.2));
  EXPECT_TRUE(env[2].placement.r().isApprox(Vec3(1, 0, 0.1)));
  // rpy = (0, 0, π/2): the box's x axis along world y.
  EXPECT_TRUE(env[2].placement.pose_rotation().col(0).isApprox(Vec3::UnitY(), 1e-12));
  EXPECT_EQ(env[2].material.restitution, 0.5);
  EXPECT_EQ(std::get<Sphere>(env[4].geometry).radius, 0.3);
  EXPECT_EQ(std::get<Capsule>(env[5].geometry).length, 1.0);
  const Mat3 R = (Eigen::AngleAxisd(0.3, Vec3::UnitZ()) * Eigen::AngleAxisd(0.2, Vec3::UnitY()) *
                  Eigen::AngleAxisd(0.1, Vec3::UnitX()))
                     .toRotationMatrix();
  EXPECT_TRUE(env[5].placement.pose_rotation().isApprox(R, 1e-14));
  EXPECT_EQ(std::get<Cylinder>(env[6].geometry).radius, 0.2);
}

TEST(WorldFile, PairContactsInheritTheDefaultsAndNameRealSurfaces) {
  const Scenario s = load(R"(<world>
  <model name="quad" urdf="quadruped.urdf" root="free"/>
  <model name="ball" urdf="ball.urdf" root="free"/>
  <ground/>
  <box name="step" size="1 1 1" pos="5 0 0"/>
  <contact a="quad/LF_foot" b="ground" mu="0.3"/>
  <contact a="ball" b="step" restitution="0.9" stiffness="1e6" damping="10" tangential_stiffness="3e5" tangential_damping="7"/>
  <contact a="quad" b="ball" mu="0"/>
  <contact mu="0.7" restitution="0.1" stiffness="5e5" damping="4e3" tangential_stiffness="4e5" tangential_damping="3e3"/>
</world>)");
  const World& w = s.world;
  EXPECT_EQ(w.default_contact().mu, 0.7);
  EXPECT_EQ(w.default_contact().stiffness, 5e5);
  EXPECT_EQ(w.default_contact().tangential_damping, 3e3);
  ASSERT_EQ(w.pair_contacts().size(), 3u);
  const ContactPairParameters& p0 = w.pair_contacts()[0];
  EXPECT_EQ(p0.a, "quad/LF_foot");
  EXPECT_EQ(p0.b, "ground");
  EXPECT_EQ(p0.parameters.mu, 0.3);
  EXPECT_EQ(p0.parameters.restitution, 0.1);  // inherited, though the default comes later in the file
  EXPECT_EQ(p0.parameters.damping, 4e3);
  const ContactParameters& p1 = w.pair_contacts()[1].parameters;
  EXPECT_EQ(p1.mu, 0.7);
  EXPECT_EQ(p1.restitution, 0.9);
  EXPECT_EQ(p1.stiffness, 1e6);
  EXPECT_EQ(p1.damping, 10.0);
  EXPECT_EQ(p1.tangential_stiffness, 3e5);
  EXPECT_EQ(p1.tangential_damping, 7.0);
  // The override reaches World::contact_parameters for the foot's shape.
  const Model& m = w.model();
  const CollisionShape* foot = nullptr;
  for (const CollisionShape& c : m.collisions()) {
    if (c.link == "quad/LF_foot") foot = &c;
  }
  ASSERT_NE(foot, nullptr);
  EXPECT_EQ(w.contact_parameters("ground", "", {}, foot->name, foot->link, {}).mu, 0.3);
  EXPECT_EQ(w.contact_parameters(foot->name, foot->link, {}, "ground", "", {}).mu, 0.3);
}

TEST(WorldFile, SimulateMapsEveryOption) {
  const Scenario s = load(ball_world(R"(
  <simulate scheme="compliant" integrator="rosenbrock4" duration="3.5" output_rate="0"
            abs_tol="1e-8" rel_tol="2e-8" initial_step="1e-5" min_step="1e-12" max_step="5e-3"
            event_time_tolerance="1e-11" contact_tolerance="2e-9" velocity_tolerance="3e-7"
            zeno_speed="2e-3" slip_velocity="4e-7" drift_tolerance="5e-9" cone_directions="4"
            max_events="1000" max_steps="5e6" joint_damping="false" joint_limits="0" joint_limit_restitution="0.25"
            torque_limits="true" time_step="2e-3" self_collision="true"/>)"));
  const SimulationOptions& o = s.options;
  EXPECT_EQ(o.scheme, Scheme::Compliant);
  EXPECT_EQ(o.integrator, Integrator::Rosenbrock4);
  EXPECT_EQ(o.duration, 3.5);
  EXPECT_EQ(o.output_rate, 0.0);
  EXPECT_EQ(o.abs_tol, 1e-8);
  EXPECT_EQ(o.rel_tol, 2e-8);
  EXPECT_EQ(o.initial_step, 1e-5);
  EXPECT_EQ(o.min_step, 1e-12);
  EXPECT_EQ(o.max_step, 5e-3);
  EXPECT_EQ(o.event_time_tolerance, 1e-11);
  EXPECT_EQ(o.contact_tolerance, 2e-9);
  EXPECT_EQ(o.velocity_tolerance, 3e-7);
  EXPECT_EQ(o.zeno_speed, 2e-3);
  EXPECT_EQ(o.slip_velocity, 4e-7);
  EXPECT_EQ(o.drift_tolerance, 5e-9);
  EXPECT_EQ(o.cone_directions, 4);
  EXPECT_EQ(o.max_events, 1000);
  EXPECT_EQ(o.max_steps, 5000000L);
  EXPECT_FALSE(o.joint_damping);
  EXPECT_FALSE(o.joint_limits);
  EXPECT_EQ(o.joint_limit_restitution, 0.25);
  EXPECT_TRUE(o.torque_limits);
  EXPECT_EQ(o.time_step, 2e-3);
  EXPECT_TRUE(s.world.self_collision());
  EXPECT_EQ(load(ball_world("<simulate scheme=\"time-stepping\" integrator=\"bulirsch-stoer\"/>")).options.scheme,
            Scheme::TimeStepping);
  EXPECT_EQ(load(ball_world("<simulate integrator=\"bogacki-shampine\"/>")).options.integrator,
            Integrator::BogackiShampine);
  EXPECT_EQ(parse_integrator(to_string(Integrator::BogackiShampine)), Integrator::BogackiShampine);
}

TEST(WorldFile, PdControllerOverTheWorldsCoordinates) {
  // A free ball first, so that the quadruped's coordinates are offset.
  const Scenario s = load(R"(<world>
  <model name="ball" urdf="ball.urdf" root="free"/>
  <model name="quad" urdf="quadruped.urdf" root="free">
    <state q="0 0 0.5 0 0 0 1  0 0.7 -1.4  0 0.7 -1.4  0 0.7 -1.4  0 0.7 -1.4"/>
  </model>
  <controller type="pd" model="quad" kp="100" kd="1 2 3 4 5 6 7 8 9 10 11 12"
              target="0.1 0.8 -1.6  0 0.8 -1.6  0 0.8 -1.6  0 0.8 -1.6" rate="500" torque_limits="true"/>
</world>)");
  ASSERT_TRUE(s.controller);
  const PdController& pd = *s.controller;
  const Model& m = s.world.model();
  ASSERT_EQ(pd.kp.size(), 18 + 6);
  ASSERT_EQ(pd.q_target.size(), 19 + 7);
  EXPECT_EQ(pd.kp.head(12).norm(), 0.0);  // the ball and the quadruped's free-flyer
  EXPECT_EQ(pd.kd.head(12).norm(), 0.0);
  EXPECT_EQ(pd.q_target.head(14).norm(), 0.0);
  EXPECT_EQ(pd.kp.tail(12), VectorX::Constant(12, 100.0));
  EXPECT_EQ(pd.kd.tail(12), VectorX::LinSpaced(12, 1, 12));
  const Joint& lf_haa = m.joint(m.get_joint("quad/LF_HAA"));
  EXPECT_EQ(lf_haa.q_index, 14);
  EXPECT_EQ(pd.q_target(lf_haa.q_index), 0.1);
  EXPECT_EQ(pd.q_target(m.joint(m.get_joint("quad/RH_KFE")).q_index), -1.6);
  EXPECT_NEAR(s.controller_period, 2e-3, 1e-15);
  EXPECT_TRUE(s.options.torque_limits);
  EXPECT_TRUE(pd.tau_ff.size() == 0);

  // The full q as target, and no target: the initial posture.
  const std::string quad = "<model name=\"quad\" urdf=\"quadruped.urdf\" root=\"free\"><state q=\"0 0 0.5 0 0 0 1  "
                           "0 0.7 -1.4  0 0.7 -1.4  0 0.7 -1.4  0 0.7 -1.4\"/></model>";
  const Scenario full = load("<world>" + quad +
                             "<controller type=\"pd\" kp=\"1\" target=\"9 9 9 0 0 0 1  0 0.8 -1.6  0 0.8 -1.6  0 0.8 "
                             "-1.6  0 0.8 -1.5\"/></world>");
  EXPECT_EQ(full.controller->q_target(18), -1.5);
  EXPECT_EQ(full.controller->q_target(0), 0.0);  // the free-flyer is not a PD target
  EXPECT_NEAR(full.controller_period, 1e-3, 1e-15);  // rate 1000 by default
  const Scenario hold = load("<world>" + quad + "<controller type=\"pd\" kp=\"1\"/></world>");
  EXPECT_EQ(hold.controller->q_target(8), 0.7);
  EXPECT_EQ(hold.controller->q_target(9), -1.4);
  EXPECT_EQ(hold.controller->kd.norm(), 0.0);
  EXPECT_NO_THROW(hold.controller->function(hold.world.model()));
}

TEST(WorldFile, RelativeAndAbsoluteUrdfPaths) {
  TempDir dir;
  fs::create_directories(dir.path / "robots");
  fs::copy_file(kModels + "/ball.urdf", dir.path / "robots" / "ball.urdf");
  const std::string rel = dir.write("worlds/rel.xml", "<world><model name=\"b\" urdf=\"../robots/ball.urdf\" root=\"free\"/></world>");
  EXPECT_EQ(load_world(rel).world.model().nq(), 7);
  const std::string abs = dir.write("abs.xml", "<world><model name=\"b\" urdf=\"" + kModels + "/ball.urdf\" root=\"free\"/></world>");
  EXPECT_EQ(load_world(abs).world.model().nq(), 7);
}

// ---- errors ------------------------------------------------------------------------------------------

TEST(WorldFileErrors, MissingUrdfNamesWorldFileModelLineAndPath) {
  TempDir dir;
  const std::string world = dir.write("w.xml", "<world>\n\n  <model name=\"robot\" urdf=\"nowhere/robot.urdf\"/>\n</world>\n");
  try {
    load_world(world);
    FAIL() << "no error";
  } catch (const WorldError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(world + ":3: <model>: ", 0), 0u) << msg;
    EXPECT_NE(msg.find((dir.path / "nowhere" / "robot.urdf").string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("'robot'"), std::string::npos) << msg;
  }
}

// A relative urdf is resolved against the world file's directory, which is not
// the working directory: the message gives the urdf attribute as written and
// the absolute path that was looked for.
TEST(WorldFileErrors, MissingUrdfNamesTheResolvedPath) {
  TempDir dir;
  const std::string world =
      dir.write("worlds/w.xml", "<world>\n<model name=\"robot\" urdf=\"../robots/ghost.urdf\"/>\n</world>\n");
  const std::string relative_world = fs::relative(world, fs::current_path()).string();  // as a user would type it
  ASSERT_FALSE(fs::path(relative_world).is_absolute());
  const std::string resolved = (fs::canonical(dir.path) / "robots" / "ghost.urdf").string();
  try {
    load_world(relative_world);
    FAIL() << "no error";
  } catch (const WorldError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg, relative_world + ":2: <model>: model 'robot': cannot load '../robots/ghost.urdf' (resolved to " +
                       resolved + "): cannot open the file (missing or unreadable)");
  }
  // An absolute urdf needs no resolving.
  const std::string absolute =
      dir.write("abs.xml", "<world>\n<model name=\"robot\" urdf=\"" + resolved + "\"/>\n</world>\n");
  try {
    load_world(absolute);
    FAIL() << "no error";
  } catch (const WorldError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cannot load '" + resolved + "': "), std::string::npos) << msg;
    EXPECT_EQ(msg.find("resolved to"), std::string::npos) << msg;
  }
}

TEST(WorldFileErrors, StateVectors) {
  expect_error(ball_world("", "\n<state q=\"0 0 1\"/>"), 3, "state", {"q has 3 entries, expected 7", "nq", "'ball'"});
  expect_error(ball_world("", "\n<state v=\"0 0 1 0 0 0 0\"/>"), 3, "state", {"v has 7 entries, expected 6", "nv"});
  expect_error(ball_world("", "<state q=\"0 0 nan 0 0 0 1\"/>"), 2, "state", {"q entry 2", "not finite"});
  expect_error(ball_world("", "<state q=\"0 0 inf 0 0 0 1\"/>"), 2, "state", {"not finite"});
  expect_error(ball_world("", "<state q=\"0 0 1e999 0 0 0 1\"/>"), 2, "state", {"not finite"});
  expect_error(ball_world("", "<state q=\"0 0 x 0 0 0 1\"/>"), 2, "state", {"q entry 2", "'x'", "not a number"});
  expect_error(ball_world("", "<state q=\"0 0 1,, 0 0 0 1\"/>"), 2, "state", {"empty"});
  expect_error(ball_world("", "<state q=\"0 0 1 0 0 0 1,\"/>"), 2, "state", {"empty"});
  expect_error(ball_world("", "<state q=\"\"/>"), 2, "state", {"q is empty"});
  expect_error(ball_world("", "<state q=\"0 0 1 0 0 0 2\"/>"), 2, "state", {"quaternion"});
  expect_error(ball_world("", "<state/><state/>"), 2, "state", {"second <state>"});
  expect_error(ball_world("", "<pose q=\"1\"/>"), 2, "pose", {"unknown element"});
}

TEST(WorldFileErrors, NonFiniteAndOutOfRangeNumbers) {
  expect_error(ball_world("<contact mu=\"nan\"/>"), 3, "contact", {"mu", "not finite"});
  expect_error(ball_world("<contact mu=\"-0.1\"/>"), 3, "contact", {"mu", "non-negative"});
  expect_error(ball_world("<contact restitution=\"1.5\"/>"), 3, "contact", {"restitution", "[0, 1]"});
  expect_error(ball_world("<contact a=\"ball\" b=\"ground\" restitution=\"-1\"/><ground/>"), 3, "contact", {"restitution"});
  expect_error(ball_world("<contact stiffness=\"0\"/>"), 3, "contact", {"stiffness", "positive"});
  expect_error(ball_world("<contact mu=\"0.5x\"/>"), 3, "contact", {"mu", "not a number"});
  expect_error(ball_world("<simulate duration=\"-1\"/>"), 3, "simulate", {"duration", "positive"});
  expect_error(ball_world("<simulate duration=\"inf\"/>"), 3, "simulate", {"duration", "not finite"});
  expect_error(ball_world("<simulate cone_directions=\"4.5\"/>"), 3, "simulate", {"cone_directions", "integer"});
  expect_error(ball_world("<simulate cone_directions=\"3\"/>"), 3, "simulate", {"cone_directions"});
  expect_error(ball_world("<simulate min_step=\"1\" max_step=\"0.1\"/>"), 3, "simulate", {"min_step"});
  expect_error(ball_world("<simulate joint_limits=\"yes\"/>"), 3, "simulate", {"joint_limits", "true or false"});
  expect_error(ball_world("<simulate joint_limit_restitution=\"2\"/>"), 3, "simulate", {"joint_limit_restitution", "[0, 1]"});
  expect_error("<world gravity=\"0 0 nan\"><model name=\"b\" urdf=\"ball.urdf\"/></world>", 1, "world", {"gravity", "not finite"});
  expect_error("<world gravity=\"0 -9.81\"><model name=\"b\" urdf=\"ball.urdf\"/></world>", 1, "world",
               {"gravity has 2 entries, expected 3"});
  expect_error(ball_world("<box size=\"1 -1 1\"/>"), 3, "box", {"size"});
  expect_error(ball_world("<box/>"), 3, "box", {"missing attribute 'size'"});
  expect_error(ball_world("<sphere radius=\"0\"/>"), 3, "sphere", {"radius", "positive"});
  expect_error(ball_world("<ground normal=\"0 0 0\"/>"), 3, "ground", {"normal"});
  expect_error(ball_world("<box size=\"1 1 1\" pos=\"0 0\"/>"), 3, "box", {"pos has 2 entries, expected 3"});
}

TEST(WorldFileErrors, UnknownElementsAndAttributes) {
  expect_error(ball_world("<grond/>"), 3, "grond", {"unknown element"});
  expect_error(ball_world("<ground offest=\"1\"/>"), 3, "ground", {"unknown attribute 'offest'"});
  expect_error(ball_world("<simulate durration=\"1\"/>"), 3, "simulate", {"unknown attribute 'durration'"});
  expect_error(ball_world("<contact mu=\"1\" friction=\"1\"/>"), 3, "contact", {"unknown attribute 'friction'"});
  expect_error("<world>\n<model name=\"b\" urdf=\"ball.urdf\" roots=\"free\"/></world>", 2, "model", {"'roots'"});
  expect_error("<world gravty=\"0 0 -1\"><model name=\"b\" urdf=\"ball.urdf\"/></world>", 1, "world", {"'gravty'"});
  expect_error(ball_world("<ground><box size=\"1 1 1\"/></ground>"), 3, "box", {"unknown element inside <ground>"});
  expect_error(ball_world("<ground>text</ground>"), 3, "ground", {"unexpected text"});
}

TEST(WorldFileErrors, ModelsAndRoots) {
  expect_error("<world>\n<model name=\"b\" urdf=\"ball.urdf\" root=\"sideways\"/></world>", 2, "model",
               {"root=\"sideways\"", "fixed, free, planar"});
  expect_error("<world>\n<model urdf=\"ball.urdf\"/></world>", 2, "model", {"missing attribute 'name'"});
  expect_error("<world>\n<model name=\"b\"/></world>", 2, "model", {"missing attribute 'urdf'"});
  expect_error("<world>\n<model name=\"a/b\" urdf=\"ball.urdf\"/></world>", 2, "model", {"name 'a/b'"});
  expect_error("<world>\n<model name=\"b\" urdf=\"ball.urdf\" root=\"free\"/>\n<model name=\"b\" urdf=\"ball.urdf\" root=\"free\"/></world>",
               3, "model", {"second model named 'b'", "line 2"});
  expect_error("<world>\n</world>", 1, "world", {"no <model>"});
  expect_error(ball_world("<ground name=\"ball\"/>"), 3, "ground", {"'ball'", "already used"});
  expect_error(ball_world("<ground/><ground name=\"ground\"/>"), 3, "ground", {"'ground'"});
  // The URDF exists but is invalid: the loader's message is kept.
  TempDir dir;
  dir.write("bad.urdf", "<robot name=\"r\"><link name=\"a\"><inertial><mass value=\"-1\"/>"
                        "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link></robot>");
  try {
    load_world_string("<world>\n<model name=\"r\" urdf=\"bad.urdf\"/></world>", "test.xml", dir.path.string());
    FAIL();
  } catch (const WorldError& e) {
    // The loader's "PATH:LINE: …" names the resolved path too.
    const std::string bad = (dir.path / "bad.urdf").string();
    EXPECT_EQ(std::string(e.what()).rfind(
                  "test.xml:2: <model>: model 'r': cannot load 'bad.urdf' (resolved to " + bad + "): " + bad + ":", 0),
              0u)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("mass"), std::string::npos) << e.what();
  }
}

TEST(WorldFileErrors, SchemeIntegratorAndController) {
  expect_error(ball_world("<simulate scheme=\"euler\"/>"), 3, "simulate", {"scheme=\"euler\"", "event-driven"});
  expect_error(ball_world("<simulate integrator=\"rk4\"/>"), 3, "simulate", {"integrator=\"rk4\"", "dopri5"});
  expect_error(ball_world("<simulate/><simulate/>"), 3, "simulate", {"second <simulate>"});
  expect_error(ball_world("<contact mu=\"1\"/>\n<contact mu=\"2\"/>"), 4, "contact", {"second default <contact>", "line 3"});
  const std::string quad = "<world>\n<model name=\"quad\" urdf=\"quadruped.urdf\" root=\"free\"/>\n";
  expect_error(quad + "<controller type=\"mpc\" kp=\"1\"/></world>", 3, "controller", {"'mpc'"});
  expect_error(quad + "<controller kp=\"1\"/></world>", 3, "controller", {"missing attribute 'type'"});
  expect_error(quad + "<controller type=\"pd\"/></world>", 3, "controller", {"missing attribute 'kp'"});
  expect_error(quad + "<controller type=\"pd\" kp=\"1 2 3\"/></world>", 3, "controller",
               {"kp has 3 entries", "1 or 12", "'quad'"});
  expect_error(quad + "<controller type=\"pd\" kp=\"1\" kd=\"-1\"/></world>", 3, "controller", {"kd", "negative"});
  expect_error(quad + "<controller type=\"pd\" kp=\"1\" target=\"1 2\"/></world>", 3, "controller",
               {"target has 2 entries", "19", "12"});
  expect_error(quad + "<controller type=\"pd\" kp=\"1\" model=\"dog\"/></world>", 3, "controller", {"model=\"dog\""});
  expect_error(quad + "<controller type=\"pd\" kp=\"1\" rate=\"0\"/></world>", 3, "controller", {"rate", "positive"});
  expect_error(quad + "<controller type=\"pd\" kp=\"1\"/>\n<controller type=\"pd\" kp=\"1\"/></world>", 4, "controller",
               {"already has a controller"});
  expect_error(quad + "<model name=\"b\" urdf=\"ball.urdf\" root=\"free\"/>\n<controller type=\"pd\" kp=\"1\"/></world>", 4,
               "controller", {"missing attribute 'model'"});
  expect_error(quad + "<controller type=\"pd\" model=\"quad\" kp=\"1\" torque_limits=\"maybe\"/></world>", 3, "controller",
               {"torque_limits"});
  expect_error(ball_world("<controller type=\"pd\" kp=\"1\"/>"), 3, "controller", {"no actuated"});
  expect_error(ball_world("<contact a=\"ball\" b=\"grund\"/>"), 3, "contact", {"b=\"grund\"", "matches no"});
  expect_error(ball_world("<contact a=\"ball\" mu=\"1\"/>"), 3, "contact", {"missing attribute 'b'"});
}

TEST(WorldFileErrors, MalformedAndEmptyFiles) {
  // tinyxml2 reports the line where the offending element starts.
  expect_error("<world>\n<model name=\"b\" urdf=\"ball.urdf\">\n</world>", 2, "model", {"malformed XML", "end tag"});
  expect_error("<world>\n<model name=\"b\" urdf=\"ball.urdf\"/>\n", 1, "world", {"malformed XML", "is closed"});
  expect_error("<world>\n<model name=\"b\" urdf=\"ball.urdf\" name=\"c\"/></world>", 2, "model", {"given twice"});
  expect_error("<world>\n<model name=\"b urdf=\"ball.urdf\"/></world>", 2, "model", {"malformed XML"});
  expect_error("", 1, "world", {"empty"});
  expect_error("  \n\n ", 1, "world", {"empty"});
  expect_error("<?xml version=\"1.0\"?>\n<!-- nothing -->\n", 1, "world", {"empty"});
  expect_error("<robot name=\"r\"/>", 1, "robot", {"root element must be <world>"});
  expect_error("<world><model name=\"b\" urdf=\"ball.urdf\"/></world>\n<world/>", 2, "world", {"second top-level"});
  expect_error("not xml at all", 1, "world", {"malformed XML"});
  // Files: empty, missing, a directory.
  TempDir dir;
  const std::string empty = dir.write("empty.xml", "");
  try {
    load_world(empty);
    FAIL();
  } catch (const WorldError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(empty + ":1: <world>: ", 0), 0u) << e.what();
  }
  for (const std::string& path : {(dir.path / "missing.xml").string(), dir.path.string()}) {
    try {
      load_world(path);
      FAIL() << path;
    } catch (const WorldError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + ":", 0), 0u) << e.what();
    }
  }
}
