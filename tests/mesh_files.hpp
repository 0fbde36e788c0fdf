#pragma once
// Writes triangle meshes as STL (binary and ASCII), OBJ and COLLADA files, so
// that tests can check plume's mesh reading against shapes they know.

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <string>
#include <vector>

#include "plume/geometry/mesh.hpp"

namespace plume::test {

/// A scratch directory (unique per process and test), removed at the end.
struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& tag) {
    path = std::filesystem::temp_directory_path() / ("plume_" + tag + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name) const {
    const std::filesystem::path p = path / name;
    std::filesystem::create_directories(p.parent_path());
    return p.string();
  }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = file(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
};

/// A box of full side lengths `size` centred at `centre`: 8 vertices, 12
/// triangles, counter-clockwise seen from outside.
inline TriangleMesh box_mesh(const Vec3& size, const Vec3& centre = Vec3::Zero()) {
  TriangleMesh m;
  for (int k = 0; k < 8; ++k) {
    m.vertices.push_back(centre + 0.5 * Vec3((k & 1 ? 1 : -1) * size.x(), (k & 2 ? 1 : -1) * size.y(),
                                             (k & 4 ? 1 : -1) * size.z()));
  }
  // Per face (axis i, side s): corners in axes (j, k) counter-clockwise about the outward normal.
  for (int f = 0; f < 6; ++f) {
    const int i = f / 2, j = (i + 1) % 3, k = (i + 2) % 3, side = f & 1 ? 1 << i : 0;
    std::array<int, 4> q{side, side | (1 << j), side | (1 << j) | (1 << k), side | (1 << k)};
    if (!(f & 1)) std::swap(q[1], q[3]);
    m.triangles.push_back({q[0], q[1], q[2]});
    m.triangles.push_back({q[0], q[2], q[3]});
  }
  return m;
}

inline Vec3 triangle_normal(const TriangleMesh& m, const std::array<int, 3>& t) {
  const Vec3& a = m.vertices[static_cast<std::size_t>(t[0])];
  return (m.vertices[static_cast<std::size_t>(t[1])] - a).cross(m.vertices[static_cast<std::size_t>(t[2])] - a).normalized();
}

inline void write_stl_binary(const std::string& path, const TriangleMesh& m) {
  std::ofstream out(path, std::ios::binary);
  char header[80] = "plume test mesh";
  out.write(header, 80);
  const std::uint32_t n = static_cast<std::uint32_t>(m.triangles.size());
  out.write(reinterpret_cast<const char*>(&n), 4);
  for (const auto& t : m.triangles) {
    float v[12];
    const Vec3 nrm = triangle_normal(m, t);
    for (int c = 0; c < 3; ++c) v[c] = static_cast<float>(nrm[c]);
    for (int k = 0; k < 3; ++k) {
      for (int c = 0; c < 3; ++c) v[3 + 3 * k + c] = static_cast<float>(m.vertices[static_cast<std::size_t>(t[static_cast<std::size_t>(k)])][c]);
    }
    out.write(reinterpret_cast<const char*>(v), sizeof v);
    const std::uint16_t attr = 0;
    out.write(reinterpret_cast<const char*>(&attr), 2);
  }
}

inline void write_stl_ascii(const std::string& path, const TriangleMesh& m) {
  std::ofstream out(path);
  out.precision(17);
  out << "solid test\n";
  for (const auto& t : m.triangles) {
    const Vec3 n = triangle_normal(m, t);
    out << " facet normal " << n.x() << ' ' << n.y() << ' ' << n.z() << "\n  outer loop\n";
    for (int k : t) {
      const Vec3& v = m.vertices[static_cast<std::size_t>(k)];
      out << "   vertex " << v.x() << ' ' << v.y() << ' ' << v.z() << '\n';
    }
    out << "  endloop\n endfacet\n";
  }
  out << "endsolid test\n";
}

inline void write_obj(const std::string& path, const TriangleMesh& m) {
  std::ofstream out(path);
  out.precision(17);
  out << "# plume test mesh\no test\n";
  for (const Vec3& v : m.vertices) out << "v " << v.x() << ' ' << v.y() << ' ' << v.z() << '\n';
  for (const auto& t : m.triangles) out << "f " << t[0] + 1 << ' ' << t[1] + 1 << ' ' << t[2] + 1 << '\n';
}

/// COLLADA 1.4 with the given unit (metres per file unit) and up axis
/// ("X_UP", "Y_UP", "Z_UP"); vertices written as given, in file units.
inline void write_collada(const std::string& path, const TriangleMesh& m, double unit, const std::string& up) {
  std::ofstream out(path);
  out.precision(17);
  out << "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
         "<COLLADA xmlns=\"http://www.collada.org/2005/11/COLLADASchema\" version=\"1.4.1\">\n"
         "  <asset><unit name=\"u\" meter=\"" << unit << "\"/><up_axis>" << up << "</up_axis></asset>\n"
         "  <library_geometries><geometry id=\"g\" name=\"g\"><mesh>\n"
         "    <source id=\"p\"><float_array id=\"pa\" count=\"" << 3 * m.vertices.size() << "\">";
  for (const Vec3& v : m.vertices) out << v.x() << ' ' << v.y() << ' ' << v.z() << ' ';
  out << "</float_array><technique_common><accessor source=\"#pa\" count=\"" << m.vertices.size()
      << "\" stride=\"3\"><param name=\"X\" type=\"float\"/><param name=\"Y\" type=\"float\"/>"
         "<param name=\"Z\" type=\"float\"/></accessor></technique_common></source>\n"
         "    <vertices id=\"v\"><input semantic=\"POSITION\" source=\"#p\"/></vertices>\n"
         "    <triangles count=\"" << m.triangles.size() << "\"><input semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><p>";
  for (const auto& t : m.triangles) out << t[0] << ' ' << t[1] << ' ' << t[2] << ' ';
  out << "</p></triangles>\n  </mesh></geometry></library_geometries>\n"
         "  <library_visual_scenes><visual_scene id=\"s\"><node id=\"n\"><instance_geometry url=\"#g\"/></node>"
         "</visual_scene></library_visual_scenes>\n"
         "  <scene><instance_visual_scene url=\"#s\"/></scene>\n</COLLADA>\n";
}

}  // namespace plume::test
