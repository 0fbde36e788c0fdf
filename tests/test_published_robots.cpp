// Robots as they are published: inertia checks on the bodies the algorithms
// see (after fixed joints are merged) with the strict / warn / repair
// policies, and package:// mesh URIs found the way ROS tools find them.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>

#include "expect_error.hpp"
#include "mesh_files.hpp"
#include "plume/error.hpp"
#include "plume/geometry/convex_hull.hpp"
#include "plume/sim/world_file.hpp"
#include "plume/urdf.hpp"
#include "test_utils.hpp"

using namespace plume;
using plume::test::expect_error;
namespace fs = std::filesystem;

namespace {

std::string inertial(double mass, double ixx, double iyy, double izz) {
  std::ostringstream x;  // 6 significant digits: "0.0204", "1e-08"
  x << "<inertial><mass value=\"" << mass << "\"/><inertia ixx=\"" << ixx << "\" ixy=\"0\" ixz=\"0\" iyy=\"" << iyy
    << "\" iyz=\"0\" izz=\"" << izz << "\"/></inertial>";
  return x.str();
}

// A trunk with a placeholder base welded to it (1e-6 kg, rank-one inertia,
// as ANYmal and HyQ publish it) and two legs whose hips break the triangle
// inequality by 2 % (as a TALOS gripper does); `extra` adds links.
std::string robot(const std::string& extra = "") {
  return R"(<robot name="published">
  <link name="base">)" + inertial(1e-6, 1e-6, 0, 0) + R"(</link>
  <joint name="base_to_trunk" type="fixed"><parent link="base"/><child link="trunk"/></joint>
  <link name="trunk">)" + inertial(10.0, 0.1, 0.2, 0.25) + R"(</link>
  <joint name="left_hip_joint" type="revolute"><parent link="trunk"/><child link="left_hip"/>
    <origin xyz="0 0.1 0"/><axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="10" velocity="5"/></joint>
  <link name="left_hip">)" + inertial(1.0, 0.01, 0.01, 0.0204) + R"(</link>
  <joint name="right_hip_joint" type="revolute"><parent link="trunk"/><child link="right_hip"/>
    <origin xyz="0 -0.1 0"/><axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="10" velocity="5"/></joint>
  <link name="right_hip">)" + inertial(1.0, 0.0204, 0.01, 0.01) + R"(</link>
)" + extra + "</robot>";
}

urdf::LoadOptions with_policy(InertiaPolicy p) {
  urdf::LoadOptions o;
  o.root = urdf::RootJoint::FreeFlyer;
  o.inertia = p;
  return o;
}

std::string error_of(const std::string& xml, const urdf::LoadOptions& o) {
  try {
    urdf::load_string(xml, o, "robot.urdf");
  } catch (const UrdfError& e) {
    return e.what();
  }
  return "";
}

int count(const std::vector<std::string>& lines, const std::string& needle) {
  int n = 0;
  for (const std::string& l : lines) n += l.find(needle) != std::string::npos;
  return n;
}

// C = ½ tr(I) 1 − I is the covariance of the body's mass about its centre
// (Σ m r rᵀ): a body of real matter has C positive semi-definite, which is
// the triangle inequality seen from the other side.
Vec3 covariance_eigenvalues(const Mat3& Ic) {
  const Mat3 C = 0.5 * Ic.trace() * Mat3::Identity() - Ic;
  return Eigen::SelfAdjointEigenSolver<Mat3>(C).eigenvalues();
}

}  // namespace

TEST(InertiaPolicy, ParsesItsNames) {
  for (InertiaPolicy p : {InertiaPolicy::Strict, InertiaPolicy::Warn, InertiaPolicy::Repair}) {
    EXPECT_EQ(parse_inertia_policy(to_string(p)), p);
  }
  expect_error<Error>([] { parse_inertia_policy("lenient"); }, {"lenient", "strict, warn or repair"});
  EXPECT_EQ(urdf::LoadOptions().inertia, InertiaPolicy::Warn);
}

// The placeholder base alone breaks the triangle inequality (moments 0, 0,
// 1e-6); merged into the trunk it is harmless, and no policy mentions it.
TEST(InertiaPolicy, PlaceholderWeldedToATrunkIsCheckedAfterMerging) {
  const std::string fine = robot();
  // Without the two bad hips: loads under strict, no warning at all.
  std::string hips_fixed = fine;
  for (int k = 0; k < 2; ++k) hips_fixed.replace(hips_fixed.find("0.0204"), 6, "0.0200");
  const Model m = urdf::load_string(hips_fixed, with_policy(InertiaPolicy::Strict), "robot.urdf");
  EXPECT_TRUE(m.warnings().empty());
  EXPECT_NEAR(m.total_mass(), 12.0 + 1e-6, 1e-12);
}

TEST(InertiaPolicy, StrictNamesEveryCulprit) {
  const std::string what = error_of(robot(), with_policy(InertiaPolicy::Strict));
  EXPECT_NE(what.find("2 bodies"), std::string::npos) << what;
  EXPECT_NE(what.find("'left_hip'"), std::string::npos) << what;
  EXPECT_NE(what.find("'right_hip'"), std::string::npos) << what;
  EXPECT_NE(what.find("robot.urdf:"), std::string::npos) << what;  // the link's line
  EXPECT_NE(what.find("triangle inequality"), std::string::npos) << what;
  EXPECT_NE(what.find("inertia=\"repair\""), std::string::npos) << what;  // the way out
  EXPECT_EQ(what.find("'base'"), std::string::npos) << what;
}

TEST(InertiaPolicy, WarnLoadsAsWrittenAndListsEveryCulprit) {
  const Model m = urdf::load_string(robot(), with_policy(InertiaPolicy::Warn), "robot.urdf");
  EXPECT_EQ(count(m.warnings(), "triangle inequality"), 2);
  EXPECT_EQ(count(m.warnings(), "'left_hip'"), 1);
  EXPECT_EQ(count(m.warnings(), "'right_hip'"), 1);
  // As written: the hip's inertia about its COM is the URDF's.
  const int hip = m.body_index("left_hip");
  EXPECT_NEAR(m.inertia(hip).inertia_about_com()(2, 2), 0.0204, 1e-15);
  EXPECT_LT(covariance_eigenvalues(m.inertia(hip).inertia_about_com())(0), -1e-5);
}

TEST(InertiaPolicy, RepairMakesEachBodyPhysicalWithTheSmallestRaise) {
  const Model warned = urdf::load_string(robot(), with_policy(InertiaPolicy::Warn), "robot.urdf");
  const Model repaired = urdf::load_string(robot(), with_policy(InertiaPolicy::Repair), "robot.urdf");
  EXPECT_EQ(count(repaired.warnings(), "repaired"), 2);
  for (const char* name : {"left_hip", "right_hip"}) {
    const int b = repaired.body_index(name);
    const RigidInertia& before = warned.inertia(b);
    const RigidInertia& after = repaired.inertia(b);
    EXPECT_DOUBLE_EQ(after.mass(), before.mass());
    EXPECT_LT((after.com() - before.com()).norm(), 1e-15);
    // Real matter afterwards: the mass covariance is PSD, on its boundary
    // (a flat body: the perpendicular-axis theorem holds with equality).
    const Vec3 c = covariance_eigenvalues(after.inertia_about_com());
    EXPECT_GT(c(0), -1e-15) << name;
    EXPECT_LT(std::abs(c(0)), 1e-15) << name;
    // One principal moment raised by the deficit 0.0204 − 0.02, nothing else.
    const Mat3 change = after.inertia_about_com() - before.inertia_about_com();
    const Eigen::SelfAdjointEigenSolver<Mat3> eig(change);
    EXPECT_NEAR(eig.eigenvalues()(2), 0.0004, 1e-12) << name;
    EXPECT_NEAR(eig.eigenvalues()(0), 0.0, 1e-12) << name;
    EXPECT_NEAR(eig.eigenvalues()(1), 0.0, 1e-12) << name;
  }
  // A body that was fine is untouched.
  const int trunk = repaired.body_index("base");  // the root link, with the trunk merged into it
  ASSERT_GE(trunk, 0);
  EXPECT_LT((repaired.inertia(trunk).to_matrix() - warned.inertia(trunk).to_matrix()).norm(), 1e-15);
}

TEST(InertiaPolicy, PlaceholderMassOnAMovingJointFollowsThePolicy) {
  const std::string sensor = R"(<joint name="sensor_joint" type="continuous"><parent link="left_hip"/>
    <child link="sensor"/><axis xyz="0 0 1"/></joint>
  <link name="sensor">)" + inertial(1e-8, 1e-12, 1e-12, 1e-12) + "</link>\n";
  const Model m = urdf::load_string(robot(sensor), with_policy(InertiaPolicy::Warn), "robot.urdf");
  EXPECT_EQ(count(m.warnings(), "placeholder mass"), 1);
  EXPECT_EQ(count(m.warnings(), "'sensor_joint'"), 1);
  const std::string what = error_of(robot(sensor), with_policy(InertiaPolicy::Strict));
  EXPECT_NE(what.find("3 bodies"), std::string::npos) << what;
  EXPECT_NE(what.find("'sensor'"), std::string::npos) << what;
}

TEST(InertiaPolicy, UnusableInertiasAreErrorsUnderEveryPolicyAllNamed) {
  // Negative mass on one link, an indefinite inertia on another.
  std::string xml = robot();
  xml.replace(xml.find("<mass value=\"1\""), 15, "<mass value=\"-1\"");
  xml.replace(xml.find("ixx=\"0.0204\""), 12, "ixx=\"-0.5\"");
  for (InertiaPolicy p : {InertiaPolicy::Strict, InertiaPolicy::Warn, InertiaPolicy::Repair}) {
    const std::string what = error_of(xml, with_policy(p));
    EXPECT_NE(what.find("2 links"), std::string::npos) << what;
    EXPECT_NE(what.find("'left_hip': negative mass"), std::string::npos) << what;
    EXPECT_NE(what.find("'right_hip': inertia tensor is not positive semi-definite"), std::string::npos) << what;
  }
  // A moving subtree with no mass at all: H would be singular.
  const std::string massless = R"(<joint name="empty_joint" type="revolute"><parent link="trunk"/>
    <child link="empty"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="empty"/>)";
  for (InertiaPolicy p : {InertiaPolicy::Warn, InertiaPolicy::Repair}) {
    const std::string what = error_of(robot(massless), with_policy(p));
    EXPECT_NE(what.find("'empty_joint'"), std::string::npos) << what;
    EXPECT_NE(what.find("singular"), std::string::npos) << what;
  }
}

TEST(InertiaPolicy, ModelBuilderIsStrictUnlessAsked) {
  ModelBuilder b("flat");
  const Mat3 flat = Vec3(0.1, 0.1, 0.3).asDiagonal();
  b.add_body("disc", 0, JointSpec::revolute("hinge", Vec3::UnitZ()), Transform::Identity(),
             RigidInertia::from_mass_com_inertia(1.0, Vec3::Zero(), flat));
  expect_error<ModelError>([&] { b.build(); }, {"'disc'", "triangle inequality"});
  b.set_inertia_policy(InertiaPolicy::Repair);
  const Model m = b.build();
  EXPECT_NEAR(m.inertia(1).inertia_about_com()(1, 1), 0.2, 1e-15);
}

// ---- package:// ------------------------------------------------------------------------------

namespace {

// ws/src/my_robot/{package.xml, meshes/block.stl, urdf/robot.urdf}: a catkin
// workspace as users clone it.
struct Workspace {
  test::ScratchDir dir{"packages"};
  std::string urdf_text, urdf, mesh;
  explicit Workspace(const std::string& package_dir = "ws/src/my_robot", const std::string& declared = "my_robot") {
    dir.write(package_dir + "/package.xml",
              "<?xml version=\"1.0\"?>\n<package format=\"2\">\n  <name> " + declared + " </name>\n  <version>1.0.0</version>\n</package>\n");
    mesh = dir.file(package_dir + "/meshes/block.stl");
    test::write_stl_binary(mesh, test::box_mesh(Vec3(0.2, 0.1, 0.05)));
    urdf_text = R"(<robot name="r"><link name="body">)" + inertial(1.0, 0.01, 0.01, 0.01) +
                R"(<collision><geometry><mesh filename="package://my_robot/meshes/block.stl"/></geometry></collision>
                </link></robot>)";
    urdf = dir.write(package_dir + "/urdf/robot.urdf", urdf_text);
  }
  std::string elsewhere() const { return dir.write("elsewhere/robot.urdf", urdf_text); }
};

// Sets an environment variable for the scope of a test.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

std::string canonical(const std::string& p) { return fs::canonical(p).string(); }

const Mesh& only_mesh(const Model& m) {
  EXPECT_EQ(m.collisions().size(), 1u);
  return std::get<Mesh>(m.collisions().at(0).geometry);
}

urdf::LoadOptions load_meshes(std::vector<std::string> dirs = {}) {
  urdf::LoadOptions o;
  o.collision_meshes = urdf::CollisionMeshes::Load;
  o.package_dirs = std::move(dirs);
  return o;
}

}  // namespace

TEST(PackageUris, FoundFromTheUrdfInsideItsPackage) {
  const Workspace ws;
  const Model m = urdf::load(ws.urdf, load_meshes());
  const Mesh& mesh = only_mesh(m);
  EXPECT_EQ(canonical(mesh.resolved), canonical(ws.mesh));
  ASSERT_TRUE(mesh.hull);
  EXPECT_EQ(mesh.hull->vertices().size(), 8u);  // the block's corners
  EXPECT_NEAR(mesh.hull->volume(), 0.2 * 0.1 * 0.05, 1e-9);
}

TEST(PackageUris, NotFoundNamesEveryPlaceSearchedAndTheFix) {
  const Workspace ws;
  ScopedEnv ros("ROS_PACKAGE_PATH", "");
  ScopedEnv ament("AMENT_PREFIX_PATH", "");
  const std::string urdf = ws.elsewhere();
  const std::string what = expect_error<UrdfError>([&] { urdf::load(urdf, load_meshes()); },
                                                   {"link 'body'", "package://my_robot/meshes/block.stl",
                                                    "package 'my_robot' not found", "ROS_PACKAGE_PATH",
                                                    "AMENT_PREFIX_PATH", "--package-dir"});
  EXPECT_NE(what.find((ws.dir.path / "elsewhere").string()), std::string::npos) << what;
  // IfFound keeps loading: the shape is not usable for contact, and says why.
  urdf::LoadOptions lenient;
  const Model m = urdf::load(urdf, lenient);
  EXPECT_FALSE(only_mesh(m).hull);
  EXPECT_NE(only_mesh(m).problem.find("not found"), std::string::npos);
}

TEST(PackageUris, PackageDirsAreSearchedAtAnyDepth) {
  const Workspace ws;
  const std::string urdf = ws.elsewhere();
  for (const fs::path& d : {ws.dir.path / "ws", ws.dir.path / "ws/src", ws.dir.path / "ws/src/my_robot"}) {
    const Model m = urdf::load(urdf, load_meshes({"/nonexistent", d.string()}));
    EXPECT_EQ(canonical(only_mesh(m).resolved), canonical(ws.mesh)) << d;
  }
}

TEST(PackageUris, APackageIsNamedByItsPackageXml) {
  // The directory is robot_v2; package.xml says my_robot.
  const Workspace ws("checkouts/robot_v2", "my_robot");
  const Model m = urdf::load(ws.elsewhere(), load_meshes({(ws.dir.path / "checkouts").string()}));
  EXPECT_EQ(canonical(only_mesh(m).resolved), canonical(ws.mesh));
  // A directory called my_robot whose package.xml names another package is not it.
  const Workspace other("decoy/my_robot", "not_my_robot");
  const std::string decoy = other.elsewhere();
  expect_error<UrdfError>([&] { urdf::load(decoy, load_meshes({(other.dir.path / "decoy").string()})); },
                          {"package 'my_robot' not found"});
}

TEST(PackageUris, RosAndAmentEnvironments) {
  const Workspace ws;
  const std::string urdf = ws.elsewhere();
  {
    ScopedEnv ros("ROS_PACKAGE_PATH", "/nonexistent:" + (ws.dir.path / "ws").string());
    EXPECT_EQ(canonical(only_mesh(urdf::load(urdf, load_meshes())).resolved), canonical(ws.mesh));
    urdf::LoadOptions isolated = load_meshes();
    isolated.search_environment = false;
    expect_error<UrdfError>([&] { urdf::load(urdf, isolated); }, {"package 'my_robot' not found"});
  }
  {
    // An ament install: PREFIX/share/my_robot.
    const Workspace installed("install/share/my_robot", "my_robot");
    ScopedEnv ament("AMENT_PREFIX_PATH", (installed.dir.path / "install").string());
    EXPECT_EQ(canonical(only_mesh(urdf::load(installed.elsewhere(), load_meshes())).resolved),
              canonical(installed.mesh));
  }
}

TEST(PackageUris, FileUrisRelativePathsAndTheirErrors) {
  const Workspace ws;
  EXPECT_EQ(canonical(urdf::resolve_uri("file://" + ws.mesh, "", {})), canonical(ws.mesh));
  EXPECT_EQ(canonical(urdf::resolve_uri("../meshes/block.stl", ws.urdf, {})), canonical(ws.mesh));
  expect_error<GeometryError>([&] { urdf::resolve_uri("package://my_robot/meshes/missing.stl", ws.urdf, {}); },
                              {"package 'my_robot' is", "missing.stl does not exist"});
  expect_error<GeometryError>([&] { urdf::resolve_uri("http://example.org/block.stl", ws.urdf, {}); },
                              {"scheme 'http' is not supported"});
  expect_error<GeometryError>([&] { urdf::resolve_uri("package://my_robot", ws.urdf, {}); },
                              {"package://NAME/PATH"});
  expect_error<GeometryError>([&] { urdf::resolve_uri("nope.stl", ws.urdf, {}); },
                              {"nope.stl does not exist", "URDF's directory"});
}

TEST(PackageUris, WorldFilesTakePackageDirsAndInertiaPerModel) {
  const Workspace ws;
  const std::string urdf = ws.elsewhere();
  // Relative to the world file: ws/src.
  const std::string world = ws.dir.write("worlds/w.xml", R"(<world>
  <model name="r" urdf="../elsewhere/robot.urdf" root="free" package_dirs="../ws/src" inertia="strict">
    <state q="0 0 0.2  0 0 0 1"/>
  </model>
  <ground/>
  <simulate duration="0.01"/>
</world>)");
  const Scenario s = load_world(world);
  const Model& m = s.world.model();
  ASSERT_EQ(m.collisions().size(), 1u);
  EXPECT_EQ(canonical(std::get<Mesh>(m.collisions()[0].geometry).resolved), canonical(ws.mesh));
  // Without package_dirs the model is refused, naming the model and the way out.
  const std::string bare = ws.dir.write("worlds/bare.xml", R"(<world>
  <model name="r" urdf="../elsewhere/robot.urdf" root="free"/>
  <ground/>
</world>)");
  ScopedEnv ros("ROS_PACKAGE_PATH", "");
  expect_error<WorldError>([&] { load_world(bare); }, {"model 'r'", "package 'my_robot' not found", "--package-dir"});
  // WorldFileOptions (plume simulate --package-dir) supply it for every model.
  WorldFileOptions o;
  o.package_dirs = {(ws.dir.path / "ws").string()};
  EXPECT_NO_THROW(load_world(bare, o));
  expect_error<WorldError>([&] { load_world(ws.dir.write("worlds/bad.xml", R"(<world>
  <model name="r" urdf="../elsewhere/robot.urdf" inertia="loose" collision="none"/></world>)")); },
                           {"inertia=\"loose\"", "strict, warn, repair"});
}
