// Geometry benchmarks: contact detection of convex hulls (collision meshes)
// against the primitive kernels on the same shapes, and loading a 40-link
// robot whose every link carries a collision mesh.
// Run: build/bench/bench_geometry
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <unistd.h>

#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/detection.hpp"
#include "plume/geometry/convex_hull.hpp"
#include "plume/model_builder.hpp"
#include "plume/urdf.hpp"

using namespace plume;

namespace {

const double kPi = std::acos(-1.0);

Mesh as_mesh(const ConvexHull& h) {
  Mesh m;
  m.filename = m.resolved = "bench.stl";
  m.hull = std::make_shared<const ConvexHull>(h);
  return m;
}

// A latitude/longitude sphere of radius r as a hull (rings × segments + 2 vertices).
ConvexHull sphere_hull(double r, int rings, int segments) {
  std::vector<Vec3> p{Vec3(0, 0, -r), Vec3(0, 0, r)};
  for (int i = 1; i < rings; ++i) {
    for (int j = 0; j < segments; ++j) {
      const double th = kPi * i / rings, ph = 2 * kPi * j / segments;
      p.emplace_back(r * std::sin(th) * std::cos(ph), r * std::sin(th) * std::sin(ph), -r * std::cos(th));
    }
  }
  return ConvexHull::from_points(p);
}

// One free body carrying `shape`, touching (or 1 mm into) a static shape.
struct Scene {
  Model model;
  std::unique_ptr<ContactDetector> detector;
  std::unique_ptr<Data> data;
  std::vector<Contact> contacts;
};

// `lift`: the shape is placed at p, then moved along z so that its lowest
// point is `lift` above the static shape (negative: sunk).
Scene make_scene(const Geometry& shape, const EnvironmentShape& env, const Mat3& R, Vec3 p, double lift = -1e-10) {
  Scene s;
  ModelBuilder b("bench");
  const int body = b.add_body("body", 0, JointSpec::free_flyer("root"), Transform::Identity(),
                              RigidInertia::from_mass_com_inertia(1.0, Vec3::Zero(), 0.01 * Mat3::Identity()));
  b.add_collision(CollisionShape{"shape", "body", body, Transform::Identity(), shape, {}});
  s.model = b.build();
  DetectionOptions o;
  o.margin = 1e-9;
  s.detector = std::make_unique<ContactDetector>(s.model, std::vector<EnvironmentShape>{env}, o);
  s.data = std::make_unique<Data>(s.model);
  VectorX q = neutral_configuration(s.model);
  q.head<3>() = p;
  q.segment<4>(3) = Eigen::Quaterniond(R).coeffs();
  DetectionOptions wide;
  wide.margin = 1.0;
  const ContactDetector probe(s.model, {env}, wide);
  forward_kinematics(s.model, *s.data, q);
  probe.detect(s.model, *s.data, s.contacts);
  double gap = 1e9;
  for (const Contact& c : s.contacts) gap = std::min(gap, c.gap);
  q(2) += lift - gap;
  forward_kinematics(s.model, *s.data, q);
  return s;
}

void run_detect(benchmark::State& state, Scene s) {
  for (auto _ : state) {
    s.detector->detect(s.model, *s.data, s.contacts);
    benchmark::DoNotOptimize(s.contacts.data());
  }
  state.counters["contacts"] = static_cast<double>(s.contacts.size());
}

const Mat3 kTilt = Eigen::AngleAxisd(0.3, Vec3(1, 2, 0).normalized()).toRotationMatrix();

// Plane against a box: the primitive kernel, the same box as a hull, and a
// 146-vertex sphere-like foot (the lowest vertex touching).
void BM_Plane_Box(benchmark::State& st) {
  run_detect(st, make_scene(Box{Vec3(0.3, 0.2, 0.1)}, ground_plane(), Mat3::Identity(), Vec3(0, 0, 0.05)));
}
void BM_Plane_BoxHull(benchmark::State& st) {
  run_detect(st, make_scene(as_mesh(ConvexHull::box(Vec3(0.3, 0.2, 0.1))), ground_plane(), Mat3::Identity(),
                            Vec3(0, 0, 0.05)));
}
void BM_Plane_SphereHull146(benchmark::State& st) {
  run_detect(st, make_scene(as_mesh(sphere_hull(0.022, 10, 16)), ground_plane(), Mat3::Identity(),
                            Vec3(0, 0, 0.022)));
}
void BM_Plane_Sphere(benchmark::State& st) {
  run_detect(st, make_scene(Sphere{0.022}, ground_plane(), Mat3::Identity(), Vec3(0, 0, 0.022)));
}

// Box on a box table (4 corner contacts, then a tilted box on one corner,
// 10 µm deep):
// the primitive box–box kernel against hull–hull on the same boxes, and two
// 146-vertex hulls.
EnvironmentShape box_table() { return environment_box("table", Vec3(1, 1, 1), Vec3(0, 0, -0.5)); }
EnvironmentShape hull_table() {
  return EnvironmentShape{"table", Transform::from_pose(Mat3::Identity(), Vec3(0, 0, -0.5)), as_mesh(ConvexHull::box(Vec3(1, 1, 1))), {}};
}
void BM_BoxBox_Resting(benchmark::State& st) {
  run_detect(st, make_scene(Box{Vec3(0.3, 0.2, 0.1)}, box_table(), Mat3::Identity(), Vec3(0.1, 0, 0.05)));
}
void BM_HullHull_Resting(benchmark::State& st) {
  run_detect(st, make_scene(as_mesh(ConvexHull::box(Vec3(0.3, 0.2, 0.1))), hull_table(), Mat3::Identity(),
                            Vec3(0.1, 0, 0.05)));
}
void BM_BoxBox_Tilted(benchmark::State& st) {
  run_detect(st, make_scene(Box{Vec3(0.3, 0.2, 0.1)}, box_table(), kTilt, Vec3(0.1, 0, 0.16), -1e-5));
}
void BM_HullHull_Tilted(benchmark::State& st) {
  run_detect(st, make_scene(as_mesh(ConvexHull::box(Vec3(0.3, 0.2, 0.1))), hull_table(), kTilt, Vec3(0.1, 0, 0.16), -1e-5));
}
void BM_HullHull_Sphere146OnBoxHull(benchmark::State& st) {
  run_detect(st, make_scene(as_mesh(sphere_hull(0.05, 10, 16)), hull_table(), kTilt, Vec3(0.1, 0, 0.05)));
}
void BM_HullHull_Sphere146Apart(benchmark::State& st) {  // separated by 1 cm: the face axes reject it
  run_detect(st, make_scene(as_mesh(sphere_hull(0.05, 10, 16)), hull_table(), kTilt, Vec3(0.1, 0, 0.06), 0.01));
}

BENCHMARK(BM_Plane_Sphere);
BENCHMARK(BM_Plane_Box);
BENCHMARK(BM_Plane_BoxHull);
BENCHMARK(BM_Plane_SphereHull146);
BENCHMARK(BM_BoxBox_Resting);
BENCHMARK(BM_HullHull_Resting);
BENCHMARK(BM_BoxBox_Tilted);
BENCHMARK(BM_HullHull_Tilted);
BENCHMARK(BM_HullHull_Sphere146OnBoxHull);
BENCHMARK(BM_HullHull_Sphere146Apart);

// Loading a 40-link chain whose links each carry one of 4 collision meshes
// (binary STL, 146 to 600 vertices each): parse, merge, read and hull.
void BM_LoadMeshRobot40(benchmark::State& st) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("plume_bench_meshes_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (int k = 0; k < 4; ++k) {  // sphere-like meshes of growing resolution, as binary STL
    const int rings = 10 + 5 * k, segments = 16 + 8 * k;
    std::vector<Vec3> v{Vec3(0, 0, -0.05), Vec3(0, 0, 0.05)};
    for (int i = 1; i < rings; ++i) {
      for (int j = 0; j < segments; ++j) {
        const double th = kPi * i / rings, ph = 2 * kPi * j / segments;
        v.emplace_back(0.05 * std::sin(th) * std::cos(ph), 0.05 * std::sin(th) * std::sin(ph), -0.05 * std::cos(th));
      }
    }
    // Triangles of the hull's faces (fans), written as binary STL.
    const ConvexHull h = ConvexHull::from_points(v);
    std::ofstream f(dir / ("link" + std::to_string(k) + ".stl"), std::ios::binary);
    char header[80] = "bench";
    f.write(header, 80);
    std::uint32_t n = 0;
    for (const auto& face : h.faces()) n += static_cast<std::uint32_t>(face.count - 2);
    f.write(reinterpret_cast<const char*>(&n), 4);
    for (int fi = 0; fi < h.num_faces(); ++fi) {
      for (int t = 1; t + 1 < h.faces()[fi].count; ++t) {
        float rec[12] = {0};
        const int idx[3] = {h.face_vertex(fi, 0), h.face_vertex(fi, t), h.face_vertex(fi, t + 1)};
        for (int c = 0; c < 3; ++c) {
          for (int a = 0; a < 3; ++a) rec[3 + 3 * c + a] = static_cast<float>(h.vertices()[idx[c]][a]);
        }
        f.write(reinterpret_cast<const char*>(rec), sizeof rec);
        const std::uint16_t attr = 0;
        f.write(reinterpret_cast<const char*>(&attr), 2);
      }
    }
  }
  std::string urdf = "<robot name='chain40'>\n";
  for (int i = 0; i < 40; ++i) {
    urdf += "<link name='l" + std::to_string(i) + "'><inertial><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' "
            "ixy='0' ixz='0' iyz='0'/></inertial><collision><geometry><mesh filename='link" + std::to_string(i % 4) +
            ".stl' scale='1 1 " + std::to_string(1.0 + 0.01 * i) + "'/></geometry></collision></link>\n";
    if (i > 0) {
      urdf += "<joint name='j" + std::to_string(i) + "' type='revolute'><parent link='l" + std::to_string(i - 1) +
              "'/><child link='l" + std::to_string(i) + "'/><origin xyz='0 0 0.1'/><axis xyz='0 1 0'/>"
              "<limit lower='-1' upper='1' effort='10' velocity='10'/></joint>\n";
    }
  }
  urdf += "</robot>\n";
  const std::string path = (dir / "chain40.urdf").string();
  std::ofstream(path) << urdf;
  urdf::LoadOptions o;
  o.collision_meshes = urdf::CollisionMeshes::Load;
  int vertices = 0;
  for (auto _ : st) {
    const Model m = urdf::load(path, o);
    vertices = 0;
    for (const CollisionShape& s : m.collisions()) vertices += std::get<Mesh>(s.geometry).hull->num_vertices();
    benchmark::DoNotOptimize(vertices);
  }
  st.counters["hull_vertices"] = vertices;
  fs::remove_all(dir);
}
BENCHMARK(BM_LoadMeshRobot40)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
