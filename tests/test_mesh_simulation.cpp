// Collision meshes in simulation: a cube written by the test as binary STL,
// ASCII STL, OBJ and COLLADA must fall, rest and slide exactly like the
// <box> primitive of the same size (and like the closed forms), and a world
// refuses a robot whose meshes cannot be used.
#include <gtest/gtest.h>

#include <cmath>

#include "mesh_files.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/detection.hpp"
#include "plume/error.hpp"
#include "plume/sim/simulator.hpp"
#include "plume/sim/world.hpp"
#include "plume/urdf.hpp"

using namespace plume;

namespace {

constexpr double g = 9.81;
// 0.25 m and the coordinates ±0.125 are exact in single precision, the
// precision assimp keeps: the mesh cube is the box to the last bit.
constexpr double kSide = 0.25;

std::string cube_urdf(const std::string& geometry) {
  return "<robot name='cube'><link name='body'><inertial><mass value='2'/>"
         "<inertia ixx='0.0208333333333333' iyy='0.0208333333333333' izz='0.0208333333333333' ixy='0' ixz='0' iyz='0'/>"
         "</inertial><collision><geometry>" + geometry + "</geometry></collision></link></robot>";
}

struct Outcome {
  std::vector<SimulationEvent> impacts;
  VectorX q;
  SimulationResult result;
};

Outcome simulate(const Model& cube, const VectorX& q0, const EnvironmentShape& ground, double mu, double duration) {
  WorldBuilder wb;
  wb.add_model("cube", cube, q0, VectorX::Zero(6));
  wb.add_environment(ground);
  ContactParameters cp;
  cp.mu = mu;
  wb.set_default_contact(cp);
  SimulationOptions o;
  o.duration = duration;
  o.output_rate = 10;
  Simulator sim(wb.build(), o);
  MemoryRecorder rec;
  Outcome run;
  run.result = sim.run(&rec);
  for (const SimulationEvent& e : rec.events) {
    if (e.kind == EventKind::Impact) run.impacts.push_back(e);
  }
  run.q = sim.q();
  return run;
}

class MeshCube : public ::testing::TestWithParam<std::string> {};

TEST_P(MeshCube, FallsRestsAndSlidesLikeTheBox) {
  test::ScratchDir dir("mesh_cube_" + std::to_string(std::hash<std::string>()(GetParam())));
  const TriangleMesh mesh = test::box_mesh(Vec3::Constant(kSide));
  const std::string file = dir.file("cube." + GetParam());
  if (GetParam() == "stl") test::write_stl_binary(file, mesh);
  else if (GetParam() == "ascii.stl") test::write_stl_ascii(file, mesh);
  else if (GetParam() == "obj") test::write_obj(file, mesh);
  else test::write_collada(file, mesh, 1.0, "Z_UP");
  urdf::LoadOptions free;
  free.root = urdf::RootJoint::FreeFlyer;
  free.collision_meshes = urdf::CollisionMeshes::Load;
  const Model with_mesh = urdf::load_string(
      cube_urdf("<mesh filename='cube." + GetParam() + "'/>"), free, dir.file("cube.urdf"));
  const Model with_box = urdf::load_string(cube_urdf("<box size='0.25 0.25 0.25'/>"), free, "<box>");
  ASSERT_TRUE(usable_for_contact(with_mesh.collisions()[0].geometry));

  // Dropped flat from 10 cm: impact at √(2h/g), then at rest one half side up.
  VectorX q0 = neutral_configuration(with_box);
  q0(2) = 0.5 * kSide + 0.1;
  const Outcome box = simulate(with_box, q0, ground_plane(), 0.8, 0.6);
  const Outcome hull = simulate(with_mesh, q0, ground_plane(), 0.8, 0.6);
  ASSERT_EQ(box.result.status, SimulationStatus::Finished) << box.result.message;
  ASSERT_EQ(hull.result.status, SimulationStatus::Finished) << hull.result.message;
  ASSERT_FALSE(box.impacts.empty());
  ASSERT_EQ(hull.impacts.size(), box.impacts.size());
  EXPECT_NEAR(box.impacts[0].time, std::sqrt(2 * 0.1 / g), 1e-9);
  EXPECT_NEAR(hull.impacts[0].time, box.impacts[0].time, 1e-9);
  EXPECT_NEAR(hull.q(2), 0.5 * kSide, 1e-9);
  EXPECT_LT((hull.q - box.q).norm(), 1e-9);
  EXPECT_LT(hull.result.statistics.max_penetration, 1e-6);

  // Tilted about x and y, dropped: a corner lands first, then it tumbles to
  // rest on a face. Same impact times and final pose as the box.
  VectorX qt = q0;
  qt.segment<4>(3) = Eigen::Quaterniond(Eigen::AngleAxisd(0.3, Vec3(1, 0.5, 0).normalized())).coeffs();
  const Outcome box_t = simulate(with_box, qt, ground_plane(), 0.8, 1.0);
  const Outcome hull_t = simulate(with_mesh, qt, ground_plane(), 0.8, 1.0);
  ASSERT_EQ(hull_t.result.status, SimulationStatus::Finished) << hull_t.result.message;
  ASSERT_FALSE(box_t.impacts.empty());
  EXPECT_NEAR(hull_t.impacts[0].time, box_t.impacts[0].time, 1e-9);
  EXPECT_LT((hull_t.q - box_t.q).norm(), 1e-6);

  // On a 20° incline with μ = 0.2 < tan 20°: it slides with
  // a = g (sin θ − μ cos θ), like the box.
  const double th = 20.0 * M_PI / 180.0;
  const Vec3 n(-std::sin(th), 0.0, std::cos(th));
  const EnvironmentShape incline = ground_plane("incline", n, Vec3::Zero());
  VectorX qi = neutral_configuration(with_box);
  qi.head<3>() = 0.5 * kSide * n;
  qi.segment<4>(3) = Eigen::Quaterniond(Eigen::AngleAxisd(-th, Vec3::UnitY())).coeffs();
  const double T = 0.5;
  const Outcome box_i = simulate(with_box, qi, incline, 0.2, T);
  const Outcome hull_i = simulate(with_mesh, qi, incline, 0.2, T);
  ASSERT_EQ(hull_i.result.status, SimulationStatus::Finished) << hull_i.result.message;
  const Vec3 down(-std::cos(th), 0.0, -std::sin(th));
  const double expected = 0.5 * g * (std::sin(th) - 0.2 * std::cos(th)) * T * T;
  EXPECT_NEAR(down.dot(hull_i.q.head<3>() - qi.head<3>()), expected, 1e-8);
  EXPECT_LT((hull_i.q - box_i.q).norm(), 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Formats, MeshCube, ::testing::Values("stl", "ascii.stl", "obj", "dae"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '.' ? '_' : c;
                           return name;
                         });

}  // namespace
