// The C++ API's contracts (issue 18): Jacobians are the caller's (never an
// alias of Data), every Jacobian function takes its reference frame
// explicitly, frame placements by name, look-ups that suggest the name meant,
// index accessors that reject −1, a controller's τ zeroed before each call and
// refused on unactuated coordinates, and the documented defaults equal the code's.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>

#include "plume/plume.hpp"
#include "test_utils.hpp"

namespace plume {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ArgumentError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

TEST(Api, JacobiansAreTheCallersNotAnAliasOfData) {
  const Model m = test::load_model("quadruped.urdf", urdf::RootJoint::FreeFlyer);
  Data d(m);
  const VectorX q = random_configuration(m, 3);
  const int lf = m.get_frame("LF_foot"), rh = m.get_frame("RH_foot");
  const Matrix6X J1 = frame_jacobian(m, d, q, lf, ReferenceFrame::World);
  const Matrix6X J1_copy = J1;
  const Matrix6X J2 = frame_jacobian(m, d, q, rh, ReferenceFrame::World);
  EXPECT_EQ(J1, J1_copy);  // the second call left the first result alone
  EXPECT_NE(J1, J2);
  // The same numbers written into the caller's matrix, and by name.
  Matrix6X J(6, m.nv());
  frame_jacobian(m, d, q, lf, ReferenceFrame::World, J);
  EXPECT_EQ(J, J1);
  EXPECT_EQ(frame_jacobian(m, d, q, "LF_foot", ReferenceFrame::World), J1);
  // A caller's matrix of the wrong size is refused, naming the size expected.
  Matrix6X small(6, m.nv() - 1);
  EXPECT_NE(message_of([&] { frame_jacobian(m, d, q, lf, ReferenceFrame::World, small); }).find("6x18"),
            std::string::npos);
  Matrix3X P(3, m.nv());
  point_jacobian(m, d, q, m.frames()[lf].body, Vec3(0.01, 0.02, 0.03), ReferenceFrame::World, P);
  EXPECT_EQ(point_jacobian(m, d, q, m.frames()[lf].body, Vec3(0.01, 0.02, 0.03), ReferenceFrame::World), P);
}

TEST(Api, ReferenceFrameNames) {
  for (ReferenceFrame r : {ReferenceFrame::Local, ReferenceFrame::World, ReferenceFrame::LocalWorldAligned}) {
    EXPECT_EQ(parse_reference_frame(to_string(r)), r);
  }
  EXPECT_NE(message_of([] { parse_reference_frame("global"); }).find("local_world_aligned"), std::string::npos);
}

TEST(Api, FramePlacementAndPositionByName) {
  const Model m = test::load_model("quadruped.urdf", urdf::RootJoint::FreeFlyer);
  Data d(m), full(m);
  for (int seed = 0; seed < 5; ++seed) {
    const VectorX q = random_configuration(m, static_cast<std::uint64_t>(seed));
    forward_kinematics(m, full, q);
    update_frame_placements(m, full);  // every frame, the whole tree: the independent path
    for (int f = 0; f < static_cast<int>(m.frames().size()); ++f) {
      const std::string& name = m.frames()[f].name;
      const Transform X = frame_placement(m, d, q, name);
      EXPECT_TRUE(X.E().isApprox(full.Xframe[f].E(), 1e-14)) << name;
      EXPECT_TRUE(X.r().isApprox(full.Xframe[f].r(), 1e-14) || X.r().norm() < 1e-14) << name;
      EXPECT_EQ(frame_position(m, d, q, f), X.pose_translation()) << name;
    }
  }
}

World quadruped_world() {
  WorldBuilder wb;
  urdf::LoadOptions o;
  o.root = urdf::RootJoint::FreeFlyer;
  wb.add_model("quad", urdf::load(test::model_path("quadruped.urdf"), o));
  wb.add_environment(ground_plane());
  return wb.build();
}

TEST(Api, LookUpsSuggestThePrefixedOrTheCloseName) {
  const World w = quadruped_world();
  const Model& m = w.model();
  const std::string prefixed = message_of([&] { m.get_frame("LF_foot"); });
  EXPECT_NE(prefixed.find("no frame named 'LF_foot'"), std::string::npos) << prefixed;
  EXPECT_NE(prefixed.find("did you mean 'quad/LF_foot'"), std::string::npos) << prefixed;
  const std::string close = message_of([&] { m.get_joint("quad/LF_KEF"); });
  EXPECT_NE(close.find("did you mean 'quad/LF_KFE'"), std::string::npos) << close;
  const std::string body = message_of([&] { m.get_body("quad/LF_shnk"); });
  EXPECT_NE(body.find("'quad/LF_shank'"), std::string::npos) << body;
  // And through the by-name algorithms.
  Data d(m);
  const std::string via = message_of([&] { frame_position(m, d, w.q0(), "RH_foot"); });
  EXPECT_NE(via.find("quad/RH_foot"), std::string::npos) << via;
}

TEST(Api, IndexAccessorsRejectMinusOne) {
  const Model m = test::load_model("pendulum.urdf", urdf::RootJoint::Fixed);
  const int missing = m.body_index("no_such_link");
  ASSERT_EQ(missing, -1);
  const std::string e = message_of([&] { (void)m.inertia(missing); });
  EXPECT_NE(e.find("body index -1 is out of range"), std::string::npos) << e;
  EXPECT_NE(message_of([&] { (void)m.joint(m.nbodies()); }).find("out of range"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)m.body_name(-2); }).find("-2"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)m.parent(99); }).find("99"), std::string::npos);
}

TEST(Api, ControllerTorquesStartFromZeroEveryCall) {
  const Model pendulum = test::load_model("pendulum.urdf", urdf::RootJoint::Fixed);
  WorldBuilder wb;
  wb.add_model("p", pendulum);
  wb.set_collision("p", false);
  Simulator sim(wb.build(), [] {
    SimulationOptions o;
    o.duration = 0.05;
    return o;
  }());
  int calls = 0, dirty = 0;
  sim.set_controller(
      [&](double, const VectorX&, const VectorX&, VectorX& tau) {
        ++calls;
        if (tau.size() != 1 || tau(0) != 0.0) ++dirty;
        tau(0) += 1.0;  // would accumulate if τ were held over
      },
      1e-2);
  const SimulationResult r = sim.run();
  EXPECT_EQ(r.status, SimulationStatus::Finished) << r.message;
  EXPECT_GE(calls, 5);
  EXPECT_EQ(dirty, 0);
}

TEST(Api, TorquesOnUnactuatedCoordinatesAreRefusedNamingTheJoint) {
  for (bool opt_in : {false, true}) {
    WorldBuilder wb;
    const Model ball = test::load_model("ball.urdf", urdf::RootJoint::FreeFlyer);
    VectorX q0 = neutral_configuration(ball);
    q0(2) = 1.0;
    wb.add_model("ball", ball, q0);
    wb.add_environment(ground_plane());
    SimulationOptions o;
    o.duration = 0.1;
    o.unactuated_torques = opt_in;
    Simulator sim(wb.build(), o);
    sim.set_controller([](double, const VectorX&, const VectorX&, VectorX& tau) { tau(5) = 2.0; }, 1e-2);
    const SimulationResult r = sim.run();
    if (opt_in) {
      EXPECT_EQ(r.status, SimulationStatus::Finished) << r.message;
    } else {
      EXPECT_EQ(r.status, SimulationStatus::Failed);
      EXPECT_NE(r.message.find("tau[5]"), std::string::npos) << r.message;
      EXPECT_NE(r.message.find("ball/"), std::string::npos) << r.message;  // the joint's name
      EXPECT_NE(r.message.find("free-flyer"), std::string::npos) << r.message;
      EXPECT_NE(r.message.find("unactuated_torques"), std::string::npos) << r.message;
      EXPECT_EQ(r.time, 0.0);
    }
  }
}

TEST(Api, DefaultDetectionReportsExactlyTouchingContacts) {
  const Model m = test::load_model("ball.urdf", urdf::RootJoint::FreeFlyer);  // radius 0.1 m
  Data d(m);
  VectorX q = neutral_configuration(m);
  q(2) = 0.1;  // resting exactly on the ground: φ = 0
  forward_kinematics(m, d, q);
  std::vector<Contact> contacts;
  ContactDetector(m, {ground_plane()}).detect(m, d, contacts);
  ASSERT_EQ(contacts.size(), 1u);
  EXPECT_EQ(contacts[0].gap, 0.0);
  q(2) = 0.1 + 1e-6;  // a micrometre above: apart
  forward_kinematics(m, d, q);
  ContactDetector(m, {ground_plane()}).detect(m, d, contacts);
  EXPECT_TRUE(contacts.empty());
}

// ---- documented defaults ------------------------------------------------------------------

// Rows "| `name` | meaning | `default` …|" of the table under `heading` in a
// Markdown file: name → the default's first back-quoted token.
std::map<std::string, std::string> documented_defaults(const std::string& file, const std::string& heading) {
  std::ifstream in(file);
  EXPECT_TRUE(in) << file;
  std::string line;
  bool inside = false;
  std::map<std::string, std::string> out;
  const std::regex row(R"(^\| `([a-z_]+)` \|.*\| `([^`]+)`[^|]*\|\s*$)");
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) inside = line.find(heading) != std::string::npos;
    std::smatch m;
    if (inside && std::regex_match(line, m, row)) out[m[1]] = m[2];
  }
  return out;
}

std::string text_of(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

TEST(Api, DocumentedSimulateDefaultsAreTheCodes) {
  const SimulationOptions o;
  const std::map<std::string, std::string> code = {
      {"scheme", to_string(o.scheme)},
      {"integrator", to_string(o.integrator)},
      {"duration", text_of(o.duration)},
      {"output_rate", text_of(o.output_rate)},
      {"abs_tol", text_of(o.abs_tol)},
      {"rel_tol", text_of(o.rel_tol)},
      {"initial_step", text_of(o.initial_step)},
      {"min_step", text_of(o.min_step)},
      {"max_step", text_of(o.max_step)},
      {"event_time_tolerance", text_of(o.event_time_tolerance)},
      {"contact_tolerance", text_of(o.contact_tolerance)},
      {"velocity_tolerance", text_of(o.velocity_tolerance)},
      {"zeno_speed", text_of(o.zeno_speed)},
      {"slip_velocity", text_of(o.slip_velocity)},
      {"drift_tolerance", text_of(o.drift_tolerance)},
      {"cone_directions", text_of(o.cone_directions)},
      {"max_events", text_of(o.max_events)},
      {"max_steps", text_of(static_cast<double>(o.max_steps))},
      {"joint_damping", o.joint_damping ? "true" : "false"},
      {"joint_limits", o.joint_limits ? "true" : "false"},
      {"joint_limit_restitution", text_of(o.joint_limit_restitution)},
      {"torque_limits", o.torque_limits ? "true" : "false"},
      {"unactuated_torques", o.unactuated_torques ? "true" : "false"},
      {"time_step", text_of(o.time_step)},
      {"time_stepping_rule", to_string(o.time_stepping_rule)},
      {"fallback_duration", text_of(o.fallback_duration)},
      {"fallback_step", text_of(o.fallback_step)},
      {"self_collision", "false"},  // WorldBuilder's default
  };
  const auto docs = documented_defaults(std::string(PLUME_SOURCE_DIR) + "/docs/world_format.md", "<simulate>");
  for (const auto& [name, value] : code) {
    const auto it = docs.find(name);
    ASSERT_NE(it, docs.end()) << "docs/world_format.md has no default for <simulate " << name << ">";
    const bool numeric = !value.empty() && (std::isdigit(static_cast<unsigned char>(value[0])) != 0);
    if (numeric) {
      EXPECT_EQ(std::stod(it->second), std::stod(value)) << name << ": documented " << it->second;
    } else {
      EXPECT_EQ(it->second, value) << name;
    }
  }
  EXPECT_EQ(docs.size(), code.size()) << "a documented <simulate> attribute the test does not know";
}

TEST(Api, DocumentedContactDefaultsAreTheCodes) {
  const ContactParameters p;
  const std::map<std::string, double> code = {{"mu", p.mu},
                                              {"restitution", p.restitution},
                                              {"stiffness", p.stiffness},
                                              {"damping", p.damping},
                                              {"tangential_stiffness", p.tangential_stiffness},
                                              {"tangential_damping", p.tangential_damping}};
  const auto docs = documented_defaults(std::string(PLUME_SOURCE_DIR) + "/docs/world_format.md", "<contact>");
  for (const auto& [name, value] : code) {
    const auto it = docs.find(name);
    ASSERT_NE(it, docs.end()) << name;
    EXPECT_EQ(std::stod(it->second), value) << name;
  }
}

}  // namespace
}  // namespace plume
