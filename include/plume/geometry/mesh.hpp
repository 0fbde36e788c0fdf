#pragma once
/// @file
/// Triangle meshes read from STL (binary or ASCII), OBJ and COLLADA files
/// with assimp.
///
/// Coordinates come out in the mesh's own frame with z up, in metres, then
/// scaled per axis by `scale` (the URDF `<mesh scale="…">`). COLLADA files
/// carry their unit (`<unit meter="0.001"/>`) and up axis (`<up_axis>`):
/// both are applied, so a Y_UP file's y axis becomes z. STL and OBJ have
/// neither: their numbers are taken as metres in the mesh frame. assimp
/// stores coordinates in single precision (about 1e-7 relative).

#include <array>
#include <string>
#include <vector>

#include "plume/spatial.hpp"

namespace plume {

struct TriangleMesh {
  std::vector<Vec3> vertices;                ///< [m], shared by the triangles
  std::vector<std::array<int, 3>> triangles; ///< counter-clockwise seen from outside (as the file has them)
};

/// Reads every mesh of the file (node transforms applied) into one.
/// @throws GeometryError naming the file: missing or unreadable, a format
/// assimp cannot read, a truncated or corrupt file, no triangles, a
/// non-finite coordinate, or a non-finite or zero scale.
TriangleMesh read_mesh(const std::string& path, const Vec3& scale = Vec3::Ones());

}  // namespace plume
