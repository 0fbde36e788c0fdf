// Convex hulls (qhull) and mesh files (assimp) against shapes whose hulls,
// volumes and coordinates are known.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "mesh_files.hpp"
#include "plume/error.hpp"
#include "plume/geometry/convex_hull.hpp"
#include "plume/geometry/mesh.hpp"

namespace plume {
namespace {

using test::ScratchDir;

constexpr double kPi = 3.14159265358979323846;

// Every hull invariant that does not depend on the input: closed and
// oriented (Euler's formula, every edge between two faces that see it in
// opposite directions), every vertex on or below every face plane, loops
// counter-clockwise about the outward normal.
void expect_valid_hull(const ConvexHull& h, double tol = 1e-12) {
  if (!h.flat()) {
    EXPECT_EQ(h.num_vertices() - h.num_edges() + h.num_faces(), 2);
  }
  for (int f = 0; f < h.num_faces(); ++f) {
    const ConvexHull::Face& face = h.faces()[static_cast<std::size_t>(f)];
    EXPECT_NEAR(face.normal.norm(), 1.0, 1e-12);
    ASSERT_GE(face.count, 3);
    for (const Vec3& v : h.vertices()) EXPECT_LE(face.normal.dot(v) - face.offset, tol * (1.0 + h.radius()));
    Vec3 newell = Vec3::Zero();
    for (int k = 0; k < face.count; ++k) {
      const Vec3& a = h.vertices()[static_cast<std::size_t>(h.face_vertex(f, k))];
      const Vec3& b = h.vertices()[static_cast<std::size_t>(h.face_vertex(f, (k + 1) % face.count))];
      EXPECT_NEAR(face.normal.dot(a), face.offset, tol * (1.0 + h.radius()));
      newell += a.cross(b);
      const ConvexHull::Edge& e = h.edges()[static_cast<std::size_t>(h.face_edge(f, k))];
      const int fa = h.face_vertex(f, k), fb = h.face_vertex(f, (k + 1) % face.count);
      EXPECT_TRUE((e.v0 == fa && e.v1 == fb && e.face0 == f) || (e.v0 == fb && e.v1 == fa && e.face1 == f));
    }
    EXPECT_GT(newell.dot(face.normal), 0.0) << "face " << f << " is not counter-clockwise";
    EXPECT_LE(h.face_support(f).size(), 8u);
  }
}

TEST(ConvexHull, CubeCornersWithInteriorPoints) {
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> inside(-0.49, 0.49);
  std::vector<Vec3> pts;
  for (int k = 0; k < 8; ++k) pts.emplace_back(k & 1 ? 0.5 : -0.5, k & 2 ? 0.5 : -0.5, k & 4 ? 0.5 : -0.5);
  for (int i = 0; i < 200; ++i) pts.emplace_back(inside(g), inside(g), inside(g));
  // Points on the faces and edges are not corners either.
  pts.emplace_back(0.5, 0.1, -0.2);
  pts.emplace_back(0.5, 0.5, 0.0);
  const ConvexHull h = ConvexHull::from_points(pts, "cube");
  expect_valid_hull(h);
  EXPECT_EQ(h.num_vertices(), 8);
  EXPECT_EQ(h.num_faces(), 6);
  EXPECT_EQ(h.num_edges(), 12);
  EXPECT_NEAR(h.volume(), 1.0, 1e-12);
  EXPECT_LT(h.centroid().norm(), 1e-12);
  EXPECT_NEAR(h.radius(), std::sqrt(0.75), 1e-12);
  EXPECT_NEAR(h.extent(), std::sqrt(3.0), 1e-12);
  for (const ConvexHull::Face& f : h.faces()) {
    EXPECT_EQ(f.count, 4);
    EXPECT_NEAR(f.offset, 0.5, 1e-12);
    EXPECT_NEAR(f.normal.cwiseAbs().maxCoeff(), 1.0, 1e-12);
  }
}

TEST(ConvexHull, BoxEqualsTheHullOfItsCorners) {
  const Vec3 size(0.3, 0.7, 1.1);
  const ConvexHull b = ConvexHull::box(size);
  expect_valid_hull(b);
  std::vector<Vec3> corners = b.vertices();
  const ConvexHull h = ConvexHull::from_points(corners);
  EXPECT_NEAR(b.volume(), size.prod(), 1e-14);
  EXPECT_NEAR(h.volume(), size.prod(), 1e-14);
  EXPECT_EQ(b.num_faces(), 6);
  for (int f = 0; f < 6; ++f) {  // face f: axis f/2, positive side when odd
    const ConvexHull::Face& face = b.faces()[static_cast<std::size_t>(f)];
    EXPECT_EQ(face.normal[f / 2], f & 1 ? 1.0 : -1.0);
    EXPECT_EQ(face.offset, 0.5 * size[f / 2]);
  }
}

TEST(ConvexHull, PointsOnASphereApproachItsVolume) {
  // Fibonacci points on the unit sphere: every one is a vertex, the hull is
  // inscribed, and its volume approaches 4π/3 from below as O(1/N).
  double previous = 0.0;
  for (int n : {50, 200, 800}) {
    std::vector<Vec3> pts;
    for (int i = 0; i < n; ++i) {
      const double z = 1.0 - (2.0 * i + 1.0) / n, r = std::sqrt(1.0 - z * z), phi = i * kPi * (3.0 - std::sqrt(5.0));
      pts.emplace_back(r * std::cos(phi), r * std::sin(phi), z);
    }
    const ConvexHull h = ConvexHull::from_points(pts);
    expect_valid_hull(h);
    EXPECT_EQ(h.num_vertices(), n);
    EXPECT_LT(h.volume(), 4.0 * kPi / 3.0);
    EXPECT_GT(h.volume(), previous);
    EXPECT_LT(4.0 * kPi / 3.0 - h.volume(), 25.0 / n);
    previous = h.volume();
  }
}

TEST(ConvexHull, SupportMatchesBruteForce) {
  std::mt19937_64 g(11);
  std::normal_distribution<double> n01;
  std::vector<Vec3> pts;
  for (int i = 0; i < 300; ++i) pts.emplace_back(n01(g), 0.5 * n01(g), 2.0 * n01(g));
  const ConvexHull h = ConvexHull::from_points(pts);
  expect_valid_hull(h, 1e-10);
  for (const Vec3& p : pts) {  // every input point inside
    for (const ConvexHull::Face& f : h.faces()) EXPECT_LE(f.normal.dot(p), f.offset + 1e-10);
  }
  for (int t = 0; t < 200; ++t) {
    const Vec3 d(n01(g), n01(g), n01(g));
    double best = -1e300;
    for (const Vec3& v : h.vertices()) best = std::max(best, d.dot(v));
    const int k = h.support(d, t % h.num_vertices());
    EXPECT_NEAR(d.dot(h.vertices()[static_cast<std::size_t>(k)]), best, 1e-12 * (1.0 + std::abs(best)));
  }
}

TEST(ConvexHull, FlatPointsGiveATwoSidedPolygon) {
  // A regular 12-gon tilted in space, plus points inside it.
  const Mat3 R = Eigen::AngleAxisd(0.4, Vec3(1, 2, 3).normalized()).toRotationMatrix();
  std::vector<Vec3> pts;
  for (int k = 0; k < 12; ++k) pts.push_back(R * Vec3(std::cos(k * kPi / 6), std::sin(k * kPi / 6), 0.0) + Vec3(1, 0, 0));
  pts.push_back(R * Vec3(0.1, 0.2, 0.0) + Vec3(1, 0, 0));
  const ConvexHull h = ConvexHull::from_points(pts);
  expect_valid_hull(h);
  EXPECT_TRUE(h.flat());
  EXPECT_EQ(h.num_vertices(), 12);
  EXPECT_EQ(h.num_faces(), 2);
  EXPECT_EQ(h.num_edges(), 12);
  EXPECT_EQ(h.volume(), 0.0);
  EXPECT_NEAR((h.faces()[0].normal + h.faces()[1].normal).norm(), 0.0, 1e-15);
  EXPECT_NEAR(std::abs(h.faces()[0].normal.dot(R.col(2))), 1.0, 1e-12);
  EXPECT_LT((h.centroid() - Vec3(1, 0, 0)).norm(), 1e-12);
  // A 12-gon face keeps 8 support vertices holding most of its area.
  EXPECT_EQ(h.face_support(0).size(), 8u);
}

TEST(ConvexHull, FaceSupportKeepsMostOfALargeFace) {
  // A 64-sided prism: its caps have 64 vertices, of which 8 are kept; the
  // best octagon inscribed in a circle has 2√2/π ≈ 0.9003 of its area.
  std::vector<Vec3> pts;
  for (int k = 0; k < 64; ++k) {
    for (double z : {-0.1, 0.1}) pts.emplace_back(std::cos(k * kPi / 32), std::sin(k * kPi / 32), z);
  }
  const ConvexHull h = ConvexHull::from_points(pts);
  expect_valid_hull(h);
  int caps = 0;
  for (int f = 0; f < h.num_faces(); ++f) {
    if (h.faces()[static_cast<std::size_t>(f)].count != 64) continue;
    ++caps;
    const std::vector<int>& s = h.face_support(f);
    ASSERT_EQ(s.size(), 8u);
    double area = 0.0;
    for (std::size_t k = 0; k < s.size(); ++k) {
      const Vec3& a = h.vertices()[static_cast<std::size_t>(s[k])];
      const Vec3& b = h.vertices()[static_cast<std::size_t>(s[(k + 1) % s.size()])];
      area += 0.5 * std::abs(a.x() * b.y() - a.y() * b.x());
    }
    EXPECT_GT(area / kPi, 0.899);
  }
  EXPECT_EQ(caps, 2);
}

TEST(ConvexHull, RefusesDegenerateInput) {
  const auto expect_error = [](const std::vector<Vec3>& pts, const std::string& part) {
    try {
      ConvexHull::from_points(pts, "mesh 'x.stl'");
      ADD_FAILURE() << "no error for " << part;
    } catch (const GeometryError& e) {
      EXPECT_NE(std::string(e.what()).find("mesh 'x.stl'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error({Vec3(0, 0, 0), Vec3(1, 1, 1), Vec3(2, 2, 2), Vec3(3, 3, 3)}, "line");
  expect_error({Vec3(1, 0, 0), Vec3(1, 0, 0), Vec3(1, 0, 0), Vec3(1, 0, 0)}, "coincide");
  expect_error({Vec3(0, 0, 0), Vec3(1, 0, 0)}, "at least 3");
  expect_error({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, std::nan(""))}, "non-finite");
}

// ---- mesh files ------------------------------------------------------------------------

// The axis-aligned bounding box of a mesh's vertices.
std::pair<Vec3, Vec3> bounds(const TriangleMesh& m) {
  Vec3 lo = Vec3::Constant(1e300), hi = Vec3::Constant(-1e300);
  for (const Vec3& v : m.vertices) lo = lo.cwiseMin(v), hi = hi.cwiseMax(v);
  return {lo, hi};
}

TEST(MeshFiles, EveryFormatGivesTheSameBox) {
  ScratchDir dir("mesh_formats");
  const TriangleMesh box = test::box_mesh(Vec3(0.1, 0.2, 0.3), Vec3(0.01, -0.02, 0.05));
  std::vector<std::string> files;
  test::write_stl_binary(dir.file("box_bin.stl"), box);
  test::write_stl_ascii(dir.file("box_ascii.stl"), box);
  test::write_stl_binary(dir.file("BOX_UPPER.STL"), box);
  test::write_obj(dir.file("box.obj"), box);
  test::write_obj(dir.file("box_upper.OBJ"), box);
  test::write_collada(dir.file("box.dae"), box, 1.0, "Z_UP");
  for (const char* f : {"box_bin.stl", "box_ascii.stl", "BOX_UPPER.STL", "box.obj", "box_upper.OBJ", "box.dae"}) {
    SCOPED_TRACE(f);
    const TriangleMesh m = read_mesh(dir.file(f));
    EXPECT_EQ(m.triangles.size(), 12u);
    const auto [lo, hi] = bounds(m);
    EXPECT_LT((lo - Vec3(-0.04, -0.12, -0.1)).norm(), 1e-7);  // float precision of STL
    EXPECT_LT((hi - Vec3(0.06, 0.08, 0.2)).norm(), 1e-7);
    const ConvexHull h = ConvexHull::from_points(m.vertices);
    EXPECT_EQ(h.num_faces(), 6);
    EXPECT_NEAR(h.volume(), 0.1 * 0.2 * 0.3, 1e-9);
    // Triangles keep their outward orientation.
    for (const auto& t : m.triangles) {
      const Vec3 c = (m.vertices[t[0]] + m.vertices[t[1]] + m.vertices[t[2]]) / 3.0 - Vec3(0.01, -0.02, 0.05);
      EXPECT_GT(test::triangle_normal(m, t).dot(c), 0.0);
    }
  }
}

TEST(MeshFiles, ScaleAndColladaUnitAndUpAxis) {
  ScratchDir dir("mesh_units");
  // Written in millimetres with y up: the box is 10 wide (x), 30 tall (y
  // in the file, z once read) and 20 deep.
  const TriangleMesh file_box = test::box_mesh(Vec3(10, 30, 20), Vec3(0, 15, 0));
  test::write_collada(dir.file("mm_yup.dae"), file_box, 0.001, "Y_UP");
  // assimp keeps coordinates in single precision: 1e-7 relative.
  const double tol = 1e-7 * 0.03;
  const auto [lo, hi] = bounds(read_mesh(dir.file("mm_yup.dae")));
  EXPECT_LT((lo - Vec3(-0.005, -0.01, 0.0)).norm(), tol) << lo.transpose();
  EXPECT_LT((hi - Vec3(0.005, 0.01, 0.03)).norm(), tol) << hi.transpose();
  // The same box written with z up needs no turn; X_UP turns x into z.
  test::write_collada(dir.file("mm_zup.dae"), test::box_mesh(Vec3(10, 20, 30), Vec3(0, 0, 15)), 0.001, "Z_UP");
  const auto [lo2, hi2] = bounds(read_mesh(dir.file("mm_zup.dae")));
  EXPECT_LT((lo2 - lo).norm(), tol);
  EXPECT_LT((hi2 - hi).norm(), tol);
  test::write_collada(dir.file("m_xup.dae"), test::box_mesh(Vec3(0.03, 0.01, 0.02), Vec3(0.015, 0, 0)), 1.0, "X_UP");
  const auto [lo3, hi3] = bounds(read_mesh(dir.file("m_xup.dae")));
  EXPECT_NEAR(lo3.z(), 0.0, tol);
  EXPECT_NEAR(hi3.z(), 0.03, tol);
  // A URDF scale multiplies each axis; a mirroring scale keeps triangles outward.
  test::write_obj(dir.file("unit.obj"), test::box_mesh(Vec3(1, 1, 1)));
  const TriangleMesh s = read_mesh(dir.file("unit.obj"), Vec3(0.5, -2.0, 3.0));
  const auto [lo4, hi4] = bounds(s);
  EXPECT_LT((hi4 - Vec3(0.25, 1.0, 1.5)).norm(), 1e-7);
  EXPECT_LT((lo4 + hi4).norm(), 1e-7);
  for (const auto& t : s.triangles) {
    const Vec3 c = (s.vertices[t[0]] + s.vertices[t[1]] + s.vertices[t[2]]) / 3.0;
    EXPECT_GT(test::triangle_normal(s, t).dot(c), 0.0);
  }
}

TEST(MeshFiles, BadFilesNameTheFileAndTheReason) {
  ScratchDir dir("mesh_bad");
  const auto expect_error = [](const std::string& path, const Vec3& scale, const std::string& part) {
    try {
      read_mesh(path, scale);
      ADD_FAILURE() << "no error for " << path;
    } catch (const GeometryError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find(part), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  };
  const Vec3 one = Vec3::Ones();
  expect_error(dir.file("missing.stl"), one, "cannot open");
  expect_error(dir.write("empty.stl", ""), one, "empty");
  expect_error(dir.write("garbage.obj", "this is not a mesh\n"), one, "no triangles");
  // A binary STL cut in the middle of its triangles.
  test::write_stl_binary(dir.file("full.stl"), test::box_mesh(Vec3(1, 1, 1)));
  std::string bytes;
  {
    std::ifstream in(dir.file("full.stl"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  expect_error(dir.write("truncated.stl", bytes.substr(0, 84 + 50 * 5 + 17)), one, "cannot be read");
  expect_error(dir.file("full.stl"), Vec3(1, 0, 1), "scale");
  expect_error(dir.file("full.stl"), Vec3(1, std::nan(""), 1), "scale");
}

}  // namespace
}  // namespace plume
