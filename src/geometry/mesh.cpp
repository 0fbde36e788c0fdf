// Mesh files through assimp: STL, OBJ, COLLADA (and whatever else assimp
// reads), flattened into one triangle list in metres with z up.
#include "plume/geometry/mesh.hpp"

#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <algorithm>
#include <assimp/Importer.hpp>
#include <cctype>
#include <fstream>

#include "plume/error.hpp"

namespace plume {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A COLLADA document: by extension, or by its first bytes for files named otherwise.
bool is_collada(const std::string& path, const std::string& head) {
  const std::string ext = lower(path.substr(path.find_last_of('.') == std::string::npos ? path.size() : path.find_last_of('.')));
  if (ext == ".dae") return true;
  return lower(head).find("<collada") != std::string::npos;
}

}  // namespace

TriangleMesh read_mesh(const std::string& path, const Vec3& scale) {
  const auto fail = [&](const std::string& why) { throw GeometryError("mesh '" + path + "': " + why); };
  if (!scale.allFinite() || (scale.array() == 0.0).any()) {
    fail("scale (" + std::to_string(scale.x()) + ", " + std::to_string(scale.y()) + ", " + std::to_string(scale.z()) +
         ") must be finite and non-zero");
  }
  std::string head;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot open the file (missing or unreadable)");
    head.resize(512);
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    if (head.empty()) fail("the file is empty");
  }
  Assimp::Importer importer;
  // Points and lines are dropped; every polygon becomes triangles; node
  // transforms (and COLLADA's unit and up axis, which assimp folds into the
  // root node) are baked into the vertices.
  importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
  const aiScene* scene = importer.ReadFile(
      path, aiProcess_Triangulate | aiProcess_JoinIdenticalVertices | aiProcess_PreTransformVertices |
                aiProcess_SortByPType | aiProcess_FindDegenerates);
  if (!scene) {
    std::string why = importer.GetErrorString();
    if (why.empty()) why = "unknown reason";
    fail("cannot be read (" + why + ")");
  }
  // assimp hands COLLADA scenes over with y up (it turns a Z_UP file's z
  // into y): turn y back into z. STL and OBJ are left as written.
  const bool y_up = is_collada(path, head);
  TriangleMesh mesh;
  for (unsigned m = 0; m < scene->mNumMeshes; ++m) {
    const aiMesh* am = scene->mMeshes[m];
    if (!am || !(am->mPrimitiveTypes & aiPrimitiveType_TRIANGLE)) continue;
    const int base = static_cast<int>(mesh.vertices.size());
    for (unsigned i = 0; i < am->mNumVertices; ++i) {
      const aiVector3D& a = am->mVertices[i];
      Vec3 x(a.x, a.y, a.z);
      if (y_up) x = Vec3(a.x, -a.z, a.y);
      if (!x.allFinite()) fail("vertex " + std::to_string(mesh.vertices.size()) + " has a non-finite coordinate");
      mesh.vertices.push_back(x.cwiseProduct(scale));
    }
    for (unsigned f = 0; f < am->mNumFaces; ++f) {
      const aiFace& face = am->mFaces[f];
      if (face.mNumIndices != 3) continue;
      std::array<int, 3> t{};
      bool ok = true;
      for (int k = 0; k < 3; ++k) {
        const unsigned idx = face.mIndices[k];
        ok = ok && idx < am->mNumVertices;
        t[static_cast<std::size_t>(k)] = base + static_cast<int>(idx);
      }
      if (ok) mesh.triangles.push_back(t);
    }
  }
  if (mesh.triangles.empty()) fail("the file holds no triangles");
  // A negative scale mirrors the mesh: keep the triangles counter-clockwise.
  if (scale.x() * scale.y() * scale.z() < 0.0) {
    for (auto& t : mesh.triangles) std::swap(t[1], t[2]);
  }
  return mesh;
}

}  // namespace plume
