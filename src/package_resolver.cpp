// Mesh URIs of published URDFs → files on this machine (urdf::resolve_uri).
#include <tinyxml2.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "plume/error.hpp"
#include "plume/urdf.hpp"

namespace plume::urdf {

namespace {

namespace fs = std::filesystem;

bool dir_exists(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool file_exists(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// The <name> a package.xml declares ("" when there is none or it is unreadable).
std::string declared_name(const fs::path& dir) {
  const fs::path xml = dir / "package.xml";
  if (!file_exists(xml)) return {};
  tinyxml2::XMLDocument doc;
  if (doc.LoadFile(xml.c_str()) != tinyxml2::XML_SUCCESS) return {};
  const tinyxml2::XMLElement* root = doc.RootElement();
  const tinyxml2::XMLElement* name = root ? root->FirstChildElement("name") : nullptr;
  const char* text = name ? name->GetText() : nullptr;
  if (!text) return {};
  std::string s(text);
  const std::size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

// `dir` is package `name`: its package.xml says so, or it has none and is called so.
bool is_package(const fs::path& dir, const std::string& name) {
  if (!dir_exists(dir)) return false;
  const std::string declared = declared_name(dir);
  return declared.empty() ? dir.filename() == name : declared == name;
}

// Package `name` at `root` or below it, as ROS 1 crawls ROS_PACKAGE_PATH: the
// common layout ROOT/NAME first, then a walk that does not enter packages or
// hidden directories.
std::optional<fs::path> find_below(const fs::path& root, const std::string& name, int depth) {
  if (is_package(root, name)) return root;
  if (is_package(root / name, name)) return root / name;
  if (depth == 0 || !dir_exists(root) || file_exists(root / "package.xml")) return std::nullopt;
  std::error_code ec;
  for (fs::directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string base = p.filename().string();
    if (base.empty() || base[0] == '.' || !dir_exists(p)) continue;
    if (auto found = find_below(p, name, depth - 1)) return found;
  }
  return std::nullopt;
}

std::vector<std::string> split_path_list(const char* value) {
  std::vector<std::string> out;
  if (!value) return out;
  std::stringstream in(value);
  std::string item;
  while (std::getline(in, item, ':')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

fs::path normal(const fs::path& p) { return fs::absolute(p).lexically_normal(); }

fs::path urdf_directory(const std::string& urdf_path) {
  if (urdf_path.empty()) return fs::current_path();
  return normal(fs::path(urdf_path)).parent_path();
}

std::string list(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

// Package `name`, or nullopt with every place searched appended to `searched`.
std::optional<fs::path> find_package(const std::string& name, const std::string& urdf_path,
                                     const std::vector<std::string>& package_dirs, bool search_environment,
                                     std::vector<std::string>& searched) {
  constexpr int kDepth = 6;
  for (const std::string& d : package_dirs) {
    if (auto p = find_below(normal(d), name, kDepth)) return p;
  }
  searched.push_back(package_dirs.empty() ? "package directories (none given)"
                                          : "package directories " + list(package_dirs));
  if (!search_environment) return std::nullopt;
  const std::vector<std::string> ros = split_path_list(std::getenv("ROS_PACKAGE_PATH"));
  for (const std::string& d : ros) {
    if (auto p = find_below(normal(d), name, kDepth)) return p;
  }
  searched.push_back(ros.empty() ? "ROS_PACKAGE_PATH (unset)" : "ROS_PACKAGE_PATH " + list(ros));
  const std::vector<std::string> ament = split_path_list(std::getenv("AMENT_PREFIX_PATH"));
  for (const std::string& prefix : ament) {
    const fs::path p = normal(fs::path(prefix) / "share" / name);
    if (dir_exists(p)) return p;
  }
  searched.push_back(ament.empty() ? "AMENT_PREFIX_PATH (unset)" : "AMENT_PREFIX_PATH " + list(ament) + " (PREFIX/share/" + name + ")");
  const fs::path start = urdf_directory(urdf_path);
  for (fs::path dir = start;; dir = dir.parent_path()) {
    if (is_package(dir, name)) return dir;
    if (is_package(dir / name, name)) return dir / name;
    if (dir == dir.root_path() || dir.parent_path() == dir) break;
  }
  searched.push_back("the URDF's directory " + start.string() + " and its ancestors");
  return std::nullopt;
}

}  // namespace

std::string resolve_uri(const std::string& uri, const std::string& urdf_path,
                        const std::vector<std::string>& package_dirs, bool search_environment) {
  const std::string kPackage = "package://", kFile = "file://";
  if (uri.empty()) throw GeometryError("empty mesh file name");
  fs::path path;
  if (uri.rfind(kPackage, 0) == 0) {
    const std::string rest = uri.substr(kPackage.size());
    const std::size_t slash = rest.find('/');
    const std::string name = rest.substr(0, slash);
    if (name.empty() || slash == std::string::npos || slash + 1 == rest.size()) {
      throw GeometryError("'" + uri + "' is not a package URI of the form package://NAME/PATH");
    }
    std::vector<std::string> searched;
    // A robot has many meshes in few packages: found packages are remembered
    // per search context (checked again before use).
    static std::mutex mutex;
    static std::map<std::string, fs::path> found;
    std::string key = name + '\n' + urdf_directory(urdf_path).string() + '\n' + list(package_dirs);
    if (search_environment) {
      for (const char* v : {"ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH"}) key += std::string("\n") + (std::getenv(v) ? std::getenv(v) : "");
    }
    std::optional<fs::path> package;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = found.find(key);
      if (it != found.end() && is_package(it->second, name)) package = it->second;
    }
    if (!package) {
      package = find_package(name, urdf_path, package_dirs, search_environment, searched);
      if (package) {
        std::lock_guard<std::mutex> lock(mutex);
        found[key] = *package;
      }
    }
    if (!package) {
      throw GeometryError("cannot resolve '" + uri + "': package '" + name + "' not found in " +
                          list(searched) + "; pass the directory that holds " + name +
                          "/ with --package-dir DIR (LoadOptions::package_dirs, <model package_dirs=\"…\">)"
                          " or add it to ROS_PACKAGE_PATH");
    }
    path = (*package / rest.substr(slash + 1)).lexically_normal();
    if (!file_exists(path)) {
      throw GeometryError("cannot resolve '" + uri + "': package '" + name + "' is " + package->string() +
                          ", but " + path.string() + " does not exist");
    }
    return path.string();
  }
  std::string p = uri;
  if (p.rfind(kFile, 0) == 0) p = p.substr(kFile.size());
  const std::size_t scheme = p.find("://");
  if (scheme != std::string::npos) {
    throw GeometryError("cannot resolve '" + uri + "': URI scheme '" + p.substr(0, scheme) +
                        "' is not supported (use package://, file:// or a file path)");
  }
  path = fs::path(p).is_absolute() ? fs::path(p).lexically_normal() : (urdf_directory(urdf_path) / p).lexically_normal();
  if (!file_exists(path)) {
    throw GeometryError("cannot resolve '" + uri + "': " + path.string() + " does not exist" +
                        (fs::path(p).is_absolute() ? "" : " (relative paths are taken from the URDF's directory)"));
  }
  return path.string();
}

}  // namespace plume::urdf
