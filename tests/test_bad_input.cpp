// The bad-input table (issue 6), end to end: each row is tried through the
// `plume` command line AND through the API it calls.
//
// Through the command line every row must end with the documented exit status
// (1 bad input, 3 a simulation that stopped early, 0 for inputs plume accepts
// with a warning), within a time limit (no hang), with exactly ONE line on
// stderr that names the culprit, and no crash or sanitizer report. That line
// is "plume: error: " followed by the API's exception message, word for word.
// A simulation that stops early keeps its partial outputs in --out.
//
// | row                          | command / API                       | status | culprit named        |
// |------------------------------|-------------------------------------|--------|----------------------|
// | missing file                 | info, simulate / urdf::load, load_world | 1  | the path             |
// | empty file                   | info, simulate                      | 1      | the path             |
// | non-XML                      | info, simulate                      | 1      | path:line            |
// | truncated XML                | info, simulate                      | 1      | path:line, element   |
// | cycle, two roots             | info / urdf::load                   | 1      | links, joints        |
// | negative mass, NaN inertia   | info / urdf::load                   | 1      | link, value          |
// | zero axis, unknown joint type| info / urdf::load                   | 1      | joint                |
// | mimic joint                  | info: 0 + warning / reject_mimic    | 0 / 1  | joint, mimicked one  |
// | mesh-only collision          | info: 0 + warning; simulate         | 0      | link, mesh           |
// | world → missing model        | simulate / load_world               | 1      | file:line, model     |
// | wrong-length q or v          | dynamics, simulate / crba, aba      | 1      | flag, sizes, model   |
// | NaN in q                     | dynamics, simulate / crba           | 1      | flag and index       |
// | infeasible contacts (11.1)   | API: LCP solvers, ContactSolver     | Infeasible status | certificate |
// | inconsistent (Painlevé)      | simulate / Simulator                | 3      | contact_failure, why |
// | step size underflow          | simulate / Simulator                | 3      | step_underflow, time |
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/contact/detection.hpp"
#include "plume/dynamics/contact_dynamics.hpp"
#include "plume/error.hpp"
#include "plume/lcp/lemke.hpp"
#include "plume/lcp/pivoting.hpp"
#include "plume/model_builder.hpp"
#include "plume/sim/simulator.hpp"
#include "plume/sim/world_file.hpp"
#include "test_utils.hpp"

using namespace plume;
namespace fs = std::filesystem;

namespace {

// ---- running the command line -------------------------------------------------------------

// Seconds a command may take before it counts as a hang (generous: the
// sanitizer build runs these too, on a loaded machine).
constexpr int kTimeLimit = 240;

struct CliRun {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A scratch directory per test, removed at the end.
class Scratch {
 public:
  Scratch() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("plume_bad_input_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const fs::path& dir() const { return dir_; }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

 private:
  fs::path dir_;
};

CliRun run_cli(const Scratch& s, const std::vector<std::string>& args) {
  std::string cmd = "timeout -k 5 " + std::to_string(kTimeLimit) + " " + quoted(PLUME_CLI);
  for (const std::string& a : args) cmd += " " + quoted(a);
  const fs::path out = s.dir() / "cli.stdout", err = s.dir() / "cli.stderr";
  cmd += " > " + quoted(out.string()) + " 2> " + quoted(err.string()) + " < /dev/null";
  const int raw = std::system(cmd.c_str());
  CliRun r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

// The checks every failing command shares: the status, one stderr line with
// the expected words, no crash (status 124 is the time limit, ≥ 128 a
// signal), no sanitizer report. Returns that line.
std::string expect_one_line(const CliRun& r, int status, const std::vector<std::string>& words) {
  EXPECT_EQ(r.status, status) << "stdout:\n" << r.out << "stderr:\n" << r.err;
  EXPECT_NE(r.status, 124) << "the command hung (killed after " << kTimeLimit << " s)";
  EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("runtime error"), std::string::npos) << r.err;
  const std::vector<std::string> lines = lines_of(r.err);
  EXPECT_EQ(lines.size(), 1u) << "stderr must be one line:\n" << r.err;
  const std::string line = lines.empty() ? std::string() : lines.front();
  EXPECT_EQ(line.rfind("plume: ", 0), 0u) << line;
  for (const std::string& w : words) EXPECT_NE(line.find(w), std::string::npos) << "'" << w << "' not in: " << line;
  return line;
}

// ---- running the API ----------------------------------------------------------------------

// The message of the plume::Error of type E that f throws ("" and a failure otherwise).
template <class E, class F>
std::string api_error(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no exception";
  return "";
}

// The command line prints the API's message after "plume: error: ".
void expect_same_message(const std::string& cli_line, const std::string& api_message) {
  EXPECT_EQ(cli_line, "plume: error: " + api_message);
}

std::string model(const std::string& file) { return test::model_path(file); }

const std::string kInertia =
    R"(<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)";

// A two-link robot; the arguments replace the arm's inertial, the joint's
// type and children, and add text before </robot>.
std::string robot(const std::string& arm_inertial = kInertia, const std::string& joint_type = "revolute",
                  const std::string& joint_body = R"(<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="5"/>)",
                  const std::string& tail = "") {
  return "<?xml version=\"1.0\"?>\n<robot name=\"mini\">\n  <link name=\"base\"/>\n  <link name=\"arm\">" + arm_inertial +
         "</link>\n  <joint name=\"shoulder\" type=\"" + joint_type +
         "\">\n    <parent link=\"base\"/><child link=\"arm\"/>\n    " + joint_body + "\n  </joint>\n" + tail + "</robot>\n";
}

// A world with one ball (free root) over the ground; `simulate` is the
// <simulate> element's attributes, `state` the <state> element.
std::string ball_world(const std::string& simulate = "duration=\"0.2\"",
                       const std::string& state = "<state q=\"0 0 0.3  0 0 0 1\"/>",
                       const std::string& urdf = model("ball.urdf")) {
  return "<?xml version=\"1.0\"?>\n<world>\n  <model name=\"ball\" urdf=\"" + urdf + "\" root=\"free\">\n    " + state +
         "\n  </model>\n  <ground/>\n  <contact mu=\"0.5\" restitution=\"0.5\"/>\n  <simulate " + simulate +
         "/>\n</world>\n";
}

nlohmann::json summary(const std::string& out) {
  return nlohmann::json::parse(slurp(fs::path(out) / "summary.json"));
}

}  // namespace

// ---- files: missing, empty, not XML, truncated -------------------------------------------------

TEST(BadInput, MissingFile) {
  Scratch s;
  const std::string urdf = (s.dir() / "no_such_robot.urdf").string();
  const std::string line = expect_one_line(run_cli(s, {"info", urdf}), 1, {urdf, "cannot open"});
  expect_same_message(line, api_error<UrdfError>([&] { urdf::load(urdf); }));

  const std::string world = (s.dir() / "no_such_world.xml").string();
  const std::string wline = expect_one_line(run_cli(s, {"simulate", world, "--out", (s.dir() / "out").string()}), 1,
                                            {world, "cannot open"});
  expect_same_message(wline, api_error<WorldError>([&] { load_world(world); }));
}

TEST(BadInput, EmptyFile) {
  Scratch s;
  const std::string urdf = s.write("empty.urdf", "");
  const std::string line = expect_one_line(run_cli(s, {"info", urdf}), 1, {urdf, "empty"});
  expect_same_message(line, api_error<UrdfError>([&] { urdf::load(urdf); }));
  const std::string blank = s.write("blank.urdf", "  \n\t\n");
  expect_one_line(run_cli(s, {"info", blank}), 1, {blank, "empty"});

  const std::string world = s.write("empty.xml", "");
  const std::string wline =
      expect_one_line(run_cli(s, {"simulate", world, "--out", (s.dir() / "out").string()}), 1, {world, "empty"});
  expect_same_message(wline, api_error<WorldError>([&] { load_world(world); }));
}

TEST(BadInput, NotXml) {
  Scratch s;
  const std::string urdf = s.write("junk.urdf", "solid robot\n  facet normal 0 0 1 {\n");
  const std::string line = expect_one_line(run_cli(s, {"info", urdf}), 1, {urdf + ":", "XML"});
  expect_same_message(line, api_error<UrdfError>([&] { urdf::load(urdf); }));

  const std::string world = s.write("junk.xml", "{\"world\": {\"model\": \"ball.urdf\"}}\n");
  const std::string wline =
      expect_one_line(run_cli(s, {"simulate", world, "--out", (s.dir() / "out").string()}), 1, {world + ":", "XML"});
  expect_same_message(wline, api_error<WorldError>([&] { load_world(world); }));
}

TEST(BadInput, TruncatedXml) {
  Scratch s;
  const std::string full = slurp(model("quadruped.urdf"));
  const std::string urdf = s.write("cut.urdf", full.substr(0, full.size() / 2));
  const std::string line = expect_one_line(run_cli(s, {"info", urdf, "--root", "free"}), 1, {urdf + ":", "malformed XML"});
  urdf::LoadOptions free;
  free.root = urdf::RootJoint::FreeFlyer;
  expect_same_message(line, api_error<UrdfError>([&] { urdf::load(urdf, free); }));

  const std::string world_text = ball_world();
  const std::string world = s.write("cut.xml", world_text.substr(0, world_text.find("<ground")));
  const std::string wline = expect_one_line(run_cli(s, {"simulate", world, "--out", (s.dir() / "out").string()}), 1,
                                            {world + ":", "malformed XML"});
  expect_same_message(wline, api_error<WorldError>([&] { load_world(world); }));
}

// ---- URDF structure and physics -------------------------------------------------------------

TEST(BadInput, UrdfWithACycle) {
  Scratch s;
  const std::string urdf = s.write(
      "cycle.urdf", "<robot name='loop'><link name='a'>" + kInertia + "</link><link name='b'>" + kInertia +
                        "</link>\n<joint name='ab' type='continuous'><parent link='a'/><child link='b'/></joint>\n"
                        "<joint name='ba' type='continuous'><parent link='b'/><child link='a'/></joint></robot>");
  const std::string line = expect_one_line(
      run_cli(s, {"info", urdf}), 1,
      {urdf + ":2: joint 'ab': closes a cycle of links 'a' <- 'b' <- 'a' (joints 'ba', 'ab')", "no root link"});
  expect_same_message(line, api_error<UrdfError>([&] { urdf::load(urdf); }));

  // A root, and a cycle hanging apart from it.
  const std::string apart = s.write(
      "apart.urdf", "<robot name='loop'>\n<link name='r'/>\n<link name='a'/>\n<link name='b'/>\n<link name='c'/>\n"
                    "<joint name='bc' type='fixed'><parent link='b'/><child link='c'/></joint>\n"
                    "<joint name='ab' type='fixed'><parent link='a'/><child link='b'/></joint>\n"
                    "<joint name='ba' type='fixed'><parent link='b'/><child link='a'/></joint>\n</robot>");
  const std::string aline = expect_one_line(
      run_cli(s, {"info", apart}), 1,
      {apart + ":7: joint 'ab': closes a cycle of links", "(joints ", "'ab'", "'ba'", "not connected to the root link 'r'"});
  EXPECT_EQ(aline.find("'bc'"), std::string::npos) << "the joint hanging off the cycle is not part of it: " << aline;
  expect_same_message(aline, api_error<UrdfError>([&] { urdf::load(apart); }));
}

TEST(BadInput, UrdfWithTwoRoots) {
  Scratch s;
  const std::string urdf =
      s.write("roots.urdf", "<robot name='two'>\n<link name='left'>" + kInertia + "</link>\n<link name='right'>" + kInertia +
                                "</link>\n</robot>");
  const std::string line = expect_one_line(run_cli(s, {"info", urdf}), 1, {urdf + ":3: two root links, 'left' (line 2) and 'right'"});
  expect_same_message(line, api_error<UrdfError>([&] { urdf::load(urdf); }));
}

TEST(BadInput, NegativeMass) {
  Scratch s;
  const std::string urdf = s.write(
      "neg.urdf",
      robot(R"(<inertial><mass value="-2.5"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)"));
  const std::string line = expect_one_line(run_cli(s, {"info", urdf}), 1, {urdf + ":4:", "link 'arm'", "negative mass"});
  expect_same_message(line, api_error<UrdfError>([&] { urdf::load(urdf); }));
}

TEST(BadInput, NanInertia) {
  Scratch s;
  const std::string urdf = s.write(
      "nan.urdf",
      robot(R"(<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="nan" iyz="0" izz="0.01"/></inertial>)"));
  const std::string line = expect_one_line(run_cli(s, {"info", urdf}), 1,
                                           {urdf + ":4: link 'arm': inertia iyy = 'nan' is not a finite number"});
  expect_same_message(line, api_error<UrdfError>([&] { urdf::load(urdf); }));
}

TEST(BadInput, ZeroAxis) {
  Scratch s;
  const std::string urdf =
      s.write("axis.urdf", robot(kInertia, "revolute", R"(<axis xyz="0 0 0"/><limit lower="-1" upper="1" effort="10" velocity="5"/>)"));
  const std::string line = expect_one_line(run_cli(s, {"info", urdf}), 1, {urdf + ":5:", "joint 'shoulder'", "axis is zero"});
  expect_same_message(line, api_error<UrdfError>([&] { urdf::load(urdf); }));
}

TEST(BadInput, UnknownJointType) {
  Scratch s;
  const std::string urdf = s.write("type.urdf", robot(kInertia, "spherical", R"(<axis xyz="0 0 1"/>)"));
  const std::string line =
      expect_one_line(run_cli(s, {"info", urdf}), 1, {urdf + ":5:", "joint 'shoulder'", "unknown joint type 'spherical'"});
  expect_same_message(line, api_error<UrdfError>([&] { urdf::load(urdf); }));
}

// Documented: a mimic joint is loaded as an independent joint with a warning
// (plume info exits 0 and lists it); LoadOptions::reject_mimic makes it an error.
TEST(BadInput, MimicJoint) {
  Scratch s;
  const std::string urdf = s.write(
      "mimic.urdf", robot(kInertia, "revolute", R"(<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="5"/>)",
                          "  <link name=\"finger\">" + kInertia +
                              "</link>\n  <joint name=\"finger_joint\" type=\"revolute\"><parent link=\"arm\"/><child "
                              "link=\"finger\"/><axis xyz=\"1 0 0\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" "
                              "velocity=\"1\"/><mimic joint=\"shoulder\" multiplier=\"2\"/></joint>\n"));
  const CliRun r = run_cli(s, {"info", urdf, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["warnings"].size(), 1u) << j["warnings"];
  // The same warning on stderr, one line.
  EXPECT_EQ(r.err, "plume: warning: " + j["warnings"][0].get<std::string>() + "\n");
  EXPECT_EQ(j["warnings"][0].get<std::string>().rfind(urdf + ":10: joint 'finger_joint' mimics 'shoulder'", 0), 0u)
      << j["warnings"][0];
  EXPECT_EQ(j["nv"], 2);

  urdf::LoadOptions strict;
  strict.reject_mimic = true;
  const std::string e = api_error<UrdfError>([&] { urdf::load(urdf, strict); });
  EXPECT_NE(e.find(urdf + ":"), std::string::npos) << e;
  EXPECT_NE(e.find("joint 'finger_joint'"), std::string::npos) << e;
  EXPECT_NE(e.find("mimics 'shoulder'"), std::string::npos) << e;
}

// Documented: a mesh collision is kept (for users who read the shapes) but is
// not usable for contact. plume info lists it as a warning at the link's
// line; the contact detector and the Simulator name the shape and its link
// and, when the link has no other shape, say that it touches nothing;
// plume simulate prints that on stderr (status 0: the run itself is valid)
// and keeps it in summary.json, rather than let the robot fall through the
// ground silently.
TEST(BadInput, MeshOnlyCollision) {
  Scratch s;
  const std::string urdf = s.write(
      "rock.urdf", "<robot name='rock'>\n<link name='body'>" + kInertia +
                       "<collision><geometry><mesh filename='package://rock/rock.stl'/></geometry></collision></link></robot>");
  const CliRun r = run_cli(s, {"info", urdf, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["warnings"].size(), 1u) << j["warnings"];
  const std::string w = j["warnings"][0];
  EXPECT_EQ(w.rfind(urdf + ":2: link 'body': ", 0), 0u) << w;
  EXPECT_NE(w.find("mesh 'package://rock/rock.stl'"), std::string::npos) << w;
  EXPECT_NE(w.find("not usable for contact"), std::string::npos) << w;

  // API: the detector leaves the mesh out, names it with its link, and says
  // the link is left with nothing to touch.
  urdf::LoadOptions free;
  free.root = urdf::RootJoint::FreeFlyer;
  const Model m = urdf::load(urdf, free);
  const ContactDetector detector(m, {ground_plane()});
  ASSERT_EQ(detector.skipped_shapes().size(), 1u);
  EXPECT_EQ(detector.skipped_shapes()[0], "body/collision_0");
  EXPECT_TRUE(detector.pairs().empty());
  ASSERT_EQ(detector.warnings().size(), 1u);
  const std::string dw = detector.warnings()[0];
  EXPECT_NE(dw.find("'body/collision_0' (link 'body')"), std::string::npos) << dw;
  EXPECT_NE(dw.find("mesh 'package://rock/rock.stl' is not usable for contact"), std::string::npos) << dw;
  EXPECT_NE(dw.find("touches nothing"), std::string::npos) << dw;

  // A link that keeps another shape: only the mesh is ignored.
  ModelBuilder b("mixed");
  const int body = b.add_body("foot", 0, JointSpec::free_flyer("root"), Transform::Identity(),
                              RigidInertia::from_mass_com_inertia(1.0, Vec3::Zero(), Mat3::Identity() * 0.01));
  b.add_collision(CollisionShape{"foot_mesh", "foot", body, Transform::Identity(), Mesh{"foot.stl", Vec3::Ones(), "", nullptr, "not loaded"}, {}});
  b.add_collision(CollisionShape{"foot_ball", "foot", body, Transform::Identity(), Sphere{0.1}, {}});
  const Model mixed = b.build();
  const ContactDetector mixed_detector(mixed, {ground_plane()});
  ASSERT_EQ(mixed_detector.warnings().size(), 1u);
  EXPECT_NE(mixed_detector.warnings()[0].find("'foot_mesh' (link 'foot')"), std::string::npos);
  EXPECT_EQ(mixed_detector.warnings()[0].find("touches nothing"), std::string::npos) << mixed_detector.warnings()[0];

  // The command line: a world cannot use the mesh-only robot (it would fall
  // through everything): one line naming the model, the link, the mesh and
  // the fix, status 1, and nothing simulated.
  const std::string world =
      s.write("rock_world.xml", ball_world("duration=\"0.3\"", "<state q=\"0 0 0.2  0 0 0 1\"/>", urdf));
  const std::string out = (s.dir() / "out").string();
  const std::string line = expect_one_line(run_cli(s, {"simulate", world, "--out", out, "--no-plots"}), 1,
                                           {"<model>: ", "link 'body'", "mesh 'package://rock/rock.stl'", "collision=\"none\""});
  EXPECT_THROW(load_world(world), WorldError);
  // In code: the same refusal from WorldBuilder::build, unless the model is
  // declared contact-free.
  WorldBuilder wb;
  wb.add_model("rock", m);
  wb.add_environment(ground_plane());
  EXPECT_THROW(wb.build(), WorldError);
  wb.set_collision("rock", false);
  const World contact_free = wb.build();
  EXPECT_TRUE(contact_free.model().collisions().empty());

  // A world whose models all have usable shapes has no warnings.
  const std::string fine = s.write("ball_world.xml", ball_world());
  const CliRun ok = run_cli(s, {"simulate", fine, "--out", out, "--no-plots"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(ok.err, "");
  EXPECT_TRUE(summary(out)["warnings"].empty());
}

// ---- world files ------------------------------------------------------------------------------

TEST(BadInput, WorldReferencingAMissingModel) {
  Scratch s;
  const std::string world = s.write("world.xml", ball_world("duration=\"0.2\"", "", "robots/ghost.urdf"));
  const std::string missing = (s.dir() / "robots/ghost.urdf").string();
  const std::string line = expect_one_line(run_cli(s, {"simulate", world, "--out", (s.dir() / "out").string()}), 1,
                                           {world + ":3: <model>", "model 'ball'",
                                            "cannot load 'robots/ghost.urdf' (resolved to " + missing + ")", "cannot open"});
  expect_same_message(line, api_error<WorldError>([&] { load_world(world); }));
  EXPECT_FALSE(fs::exists(s.dir() / "out" / "summary.json")) << "nothing is written for a world that does not load";
}

// ---- vectors: wrong length, NaN --------------------------------------------------------------

TEST(BadInput, WrongLengthQOrV) {
  Scratch s;
  const std::string urdf = model("double_pendulum.urdf");
  expect_one_line(run_cli(s, {"dynamics", urdf, "--q", "0.1"}), 1,
                  {"--q has 1 entries, expected 2", "nq of model 'double_pendulum'"});
  expect_one_line(run_cli(s, {"dynamics", urdf, "--q", "0.1,0.2", "--v", "1,2,3"}), 1,
                  {"--v has 3 entries, expected 2", "nv of model 'double_pendulum'"});
  expect_one_line(run_cli(s, {"dynamics", model("quadruped.urdf"), "--root", "free", "--q", "0,0,0.5,0,0,0,1"}), 1,
                  {"--q has 7 entries, expected 19", "'quadruped'"});
  // The API checks the same.
  const Model m = test::load_model("double_pendulum.urdf", urdf::RootJoint::Fixed);
  Data d(m);
  const std::string e = api_error<ArgumentError>([&] { crba(m, d, VectorX::Zero(1)); });
  EXPECT_NE(e.find("1 entries, expected 2"), std::string::npos) << e;
  const std::string ev = api_error<ArgumentError>([&] { aba(m, d, VectorX::Zero(2), VectorX::Zero(3), VectorX::Zero(2)); });
  EXPECT_NE(ev.find("3 entries, expected 2"), std::string::npos) << ev;

  // In a world file: the state's q, naming the model and its root.
  const std::string world = s.write("short_q.xml", ball_world("duration=\"0.2\"", "<state q=\"0 0 0.3\"/>"));
  const std::string line = expect_one_line(run_cli(s, {"simulate", world, "--out", (s.dir() / "out").string()}), 1,
                                           {world + ":4: <state>", "q has 3 entries, expected 7", "model 'ball'"});
  expect_same_message(line, api_error<WorldError>([&] { load_world(world); }));
}

TEST(BadInput, NanInQ) {
  Scratch s;
  const std::string urdf = model("double_pendulum.urdf");
  expect_one_line(run_cli(s, {"dynamics", urdf, "--q", "0.1,nan"}), 1, {"--q[1]", "finite"});
  expect_one_line(run_cli(s, {"dynamics", urdf, "--q", "0.1,0.2", "--tau", "inf,0"}), 1, {"--tau[0]", "finite"});
  const Model m = test::load_model("double_pendulum.urdf", urdf::RootJoint::Fixed);
  Data d(m);
  const std::string e = api_error<ArgumentError>([&] {
    crba(m, d, (VectorX(2) << 0.1, std::numeric_limits<double>::quiet_NaN()).finished());
  });
  EXPECT_NE(e.find("[1]"), std::string::npos) << e;
  EXPECT_NE(e.find("finite"), std::string::npos) << e;

  const std::string world = s.write("nan_q.xml", ball_world("duration=\"0.2\"", "<state q=\"0 0 nan  0 0 0 1\"/>"));
  const std::string line = expect_one_line(run_cli(s, {"simulate", world, "--out", (s.dir() / "out").string()}), 1,
                                           {world + ":4: <state>", "q entry 2", "not finite"});
  expect_same_message(line, api_error<WorldError>([&] { load_world(world); }));
}

// ---- infeasible contacts: Featherstone's Example 11.1 ----------------------------------------

// The LCP of a disc wedged in a slot that narrows ahead of it: two opposite
// contacts, M = [1 −1; −1 1]/m (singular, M u = 0 for u = (1, 1)) and both
// d_i < 0 (each wall closes in on the moving disc). Then uᵀ(Mλ + d) = uᵀd < 0
// for every λ ≥ 0: no contact forces can stop both penetrations.
TEST(BadInput, InfeasibleContactLcp) {
  const MatrixX M = (MatrixX(2, 2) << 1.0, -1.0, -1.0, 1.0).finished();
  const VectorX d = (VectorX(2) << -0.5, -0.3).finished();
  const LcpResult lemke = solve_lemke({M, d});
  EXPECT_EQ(lemke.status, LcpStatus::Infeasible) << lemke.message;
  EXPECT_FALSE(lemke.message.empty());
  EXPECT_EQ(lemke.message.find('\n'), std::string::npos) << lemke.message;
  const LcpResult pivoting = solve_pivoting({M, d});
  EXPECT_EQ(pivoting.status, LcpStatus::Infeasible) << pivoting.message;
  EXPECT_EQ(pivoting.message.find('\n'), std::string::npos) << pivoting.message;
}

// The same through ContactSolver, with the contacts built by hand (plume's
// shapes are convex, so detection never produces a slot that narrows): a
// disc (mass 2 kg, radius 0.1 m) moving along x at 1 m/s between two walls
// that curve towards it, each the inside of a circle of radius 1 m (a
// RimPoint feature with the disc's centre inside the circle): the walls are
// concave, the gaps close quadratically as the disc moves, Ṫᵀq̇ < 0 for both.
TEST(BadInput, InfeasibleContactSolver) {
  ModelBuilder b("disc_in_slot");
  b.add_body("disc", 0, JointSpec::planar("slide"), Transform::Identity(),
             RigidInertia::from_mass_com_inertia(2.0, Vec3::Zero(), Mat3(Vec3(0.01, 0.01, 0.01).asDiagonal())));
  const Model m = b.build();
  Data data(m);
  const VectorX q = VectorX::Zero(m.nq());
  VectorX v = VectorX::Zero(m.nv());
  v(0) = 1.0;  // along x, the slot's direction
  forward_kinematics(m, data, q, v);

  const double R = 1.0, r = 0.1;
  std::vector<Contact> contacts;
  for (const double side : {1.0, -1.0}) {  // the upper and the lower wall
    Contact c;
    c.body_a = 0;
    c.body_b = 1;
    c.id = side > 0 ? 1 : 2;
    c.local.type = FeaturePair::RimPoint;
    c.local.first_on_b = false;
    c.local.x1 = Vec3(0.0, side * (r - R), 0.0);  // circle centre: the wall at y = ±r
    c.local.d1 = Vec3::UnitZ();                   // the circle lies in the plane of motion
    c.local.r1 = R;
    c.local.x2 = Vec3::Zero();  // the disc's centre, body coordinates
    c.local.r2 = r;
    refresh_contact(m, data, c);
    ASSERT_NEAR(c.gap, 0.0, 1e-12);
    contacts.push_back(c);
  }
  ContactSolver solver(m);
  const VectorX tau = VectorX::Zero(m.nv());
  const ContactSolution& sol = solver.solve(m, data, q, v, tau, contacts, VectorX::Zero(2));
  EXPECT_LT(solver.d()(0) + solver.d()(1), 0.0) << "both walls close in";
  EXPECT_EQ(sol.status, ContactStatus::Infeasible) << to_string(sol.status) << ": " << sol.message;
  EXPECT_FALSE(sol.message.empty());
  EXPECT_EQ(sol.message.find('\n'), std::string::npos) << sol.message;
}

// What a simulation can reach with convex shapes: Painlevé's paradox. A rod
// (rod.urdf, planar root) at 45° with its lower end on the ground, sliding
// left at 2 m/s with μ = 2, above the paradox's μ > (1 + 3cos²θ)/(3 sinθ cosθ)
// = 5/3: the frictional force LCP has no solution (a Farkas certificate).
// The run stops at t = 0 with status contact_failure and says why.
namespace {

// The rod at 45° sliding left at 2 m/s with its left end on the floor.
std::string sliding_rod_world(const std::string& mu, const std::string& simulate_attributes) {
  return "<world>\n<model name=\"rod\" urdf=\"" + model("rod.urdf") +
         "\" root=\"planar\"><state q=\"0 0.7071067811865476 0.7853981633974483\" v=\"-2 0 0\"/></model>\n"
         "<ground/><contact mu=\"" + mu + "\" restitution=\"0\"/><simulate " + simulate_attributes + "/></world>\n";
}

}  // namespace

TEST(BadInput, InconsistentContactInASimulation) {
  Scratch s;
  const std::string world =
      s.write("painleve.xml", sliding_rod_world("2", "duration=\"1\" fallback_duration=\"0\""));
  const std::string out = (s.dir() / "out").string();
  const CliRun r = run_cli(s, {"simulate", world, "--out", out, "--no-plots"});
  // In words, the contacts by name, no solver internals (issue 16).
  expect_one_line(r, 3, {"simulation stopped at t = 0 s", "contact_failure", "Painlev", "no lambda >= 0", "ground|rod"});
  EXPECT_EQ(r.err.find("pivot"), std::string::npos) << r.err;
  const nlohmann::json j = summary(out);
  EXPECT_EQ(j["status"], "contact_failure");
  EXPECT_EQ(j["finished"], false);
  EXPECT_GE(lines_of(slurp(fs::path(out) / "trajectory.csv")).size(), 2u) << "header and the initial state";

  // With the velocity-level fallback (the default) the sliding end jams: a
  // tangential impact at t = 0, and the run goes on.
  const std::string jams = s.write("jams.xml", sliding_rod_world("2", "duration=\"0.2\""));
  const CliRun jam = run_cli(s, {"simulate", jams, "--out", out, "--no-plots"});
  EXPECT_EQ(jam.status, 0) << jam.err;
  const std::vector<std::string> events = lines_of(slurp(fs::path(out) / "events.csv"));
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[1].rfind("0,impact,ground|rod/end_left", 0), 0u) << events[1];

  // Below the threshold (μ = 1) the same rod slides and falls normally.
  const std::string fine = s.write("fine.xml", sliding_rod_world("1", "duration=\"0.2\""));
  const CliRun ok = run_cli(s, {"simulate", fine, "--out", out, "--no-plots"});
  EXPECT_EQ(ok.status, 0) << ok.err;
}

// ---- a step size that underflows ------------------------------------------------------------

// Absurd tolerances: no step can meet them. The run stops with status
// step_underflow (exit status 3), one line naming it and the time, and every
// output written up to there: summary.json says it did not finish.
TEST(BadInput, StepSizeUnderflow) {
  Scratch s;
  const std::string attrs = "duration=\"0.5\" abs_tol=\"1e-300\" rel_tol=\"1e-300\" min_step=\"1e-12\"";
  const std::string world = s.write("absurd.xml", ball_world(attrs));
  const std::string out = (s.dir() / "out").string();
  const CliRun r = run_cli(s, {"simulate", world, "--out", out, "--no-plots"});
  expect_one_line(r, 3, {"simulation stopped at t = ", "step_underflow"});
  const nlohmann::json j = summary(out);
  EXPECT_EQ(j["status"], "step_underflow");
  EXPECT_EQ(j["finished"], false);
  EXPECT_FALSE(j["message"].get<std::string>().empty());
  for (const char* f : {"trajectory.csv", "events.csv", "contacts.csv", "energy.csv", "summary.json"}) {
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  }
  EXPECT_GE(lines_of(slurp(fs::path(out) / "trajectory.csv")).size(), 2u) << "header and the initial state";

  // API: the same status from the Simulator.
  const Scenario sc = load_world(world);
  Simulator sim(sc.world, sc.options);
  MemoryRecorder rec;
  const SimulationResult res = sim.run(&rec);
  EXPECT_EQ(res.status, SimulationStatus::StepUnderflow) << to_string(res.status) << ": " << res.message;
  EXPECT_EQ(res.message.find('\n'), std::string::npos) << res.message;
  EXPECT_FALSE(rec.times.empty());
}

// A run that fails after it has made progress keeps what it computed: a
// double pendulum swinging hard for seconds, with tight tolerances and a
// min_step that the fast phases of its motion need to go below.
TEST(BadInput, StepUnderflowKeepsPartialOutputs) {
  Scratch s;
  const std::string world = s.write(
      "late.xml", "<world><model name=\"dp\" collision=\"none\" urdf=\"" + model("double_pendulum.urdf") +
                      "\"><state q=\"2.5 -2\" v=\"3 0\"/></model>\n<simulate duration=\"5\" output_rate=\"100\" "
                      "abs_tol=\"1e-12\" rel_tol=\"1e-12\" min_step=\"2e-3\" initial_step=\"2e-3\"/></world>\n");
  const std::string out = (s.dir() / "out").string();
  const CliRun r = run_cli(s, {"simulate", world, "--out", out, "--no-plots"});
  const std::string line = expect_one_line(r, 3, {"simulation stopped at t = ", "step_underflow", "below min_step"});
  const nlohmann::json j = summary(out);
  EXPECT_EQ(j["status"], "step_underflow");
  EXPECT_EQ(j["finished"], false);
  const double t = j["time"].get<double>();
  EXPECT_GT(t, 0.5) << line;
  EXPECT_LT(t, 5.0) << line;
  const std::vector<std::string> rows = lines_of(slurp(fs::path(out) / "trajectory.csv"));
  EXPECT_GE(rows.size(), 50u) << "the samples before the failure are kept";
  EXPECT_EQ(j["samples"].get<long>() + 1, static_cast<long>(rows.size())) << "the summary counts every row kept";
  EXPECT_GE(lines_of(slurp(fs::path(out) / "energy.csv")).size(), 50u);
}
