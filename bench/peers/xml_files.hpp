#pragma once
// Helpers of the MuJoCo adapters (peer_compare's and peer_simulation's) for
// handing MuJoCo's URDF importer an edited copy of a model: a temporary
// directory that removes itself, and removal of XML children by name.

#include <tinyxml2.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace plume::peers {

/// A fresh directory under the system's temporary directory, removed on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    std::string name = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    if (!mkdtemp(name.data())) throw std::runtime_error("cannot create a temporary directory");
    path_ = name;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const char* name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// Deletes every child element of `parent` named `name`.
inline void remove_children(tinyxml2::XMLElement* parent, const char* name) {
  for (tinyxml2::XMLElement* e = parent->FirstChildElement(name); e;) {
    tinyxml2::XMLElement* next = e->NextSiblingElement(name);
    parent->DeleteChild(e);
    e = next;
  }
}

}  // namespace plume::peers
