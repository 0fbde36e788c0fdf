// plume view MODEL.urdf [--root …] [--package-dir DIR]… [--inertia …] [--srdf FILE [--state NAME]] [--q Q]
//            [--out PATH]
//
// The quick "did my URDF load right" check: one self-contained page (replay.cpp,
// mode "view") showing the model's collision shapes, meshes and kinematic tree
// at the neutral configuration (or an SRDF <group_state>, or --q), with a slider per 1-DoF joint.
#include <filesystem>
#include <cmath>
#include <iomanip>
#include <iostream>

#include "cli_common.hpp"
#include "plume/configuration.hpp"
#include "plume/error.hpp"
#include "replay.hpp"

namespace plume::cli {

namespace fs = std::filesystem;

fs::path view_output_path(const std::string& out) {
  if (out.empty()) return "view.html";
  const fs::path p(out);
  std::error_code ec;
  if (fs::is_directory(p, ec) || p.extension() != ".html") {
    fs::create_directories(p, ec);
    if (!fs::is_directory(p, ec)) throw ArgumentError("--out " + out + ": cannot create the directory");
    return p / "view.html";
  }
  if (!p.parent_path().empty() && !fs::is_directory(p.parent_path(), ec)) {
    throw ArgumentError("--out " + out + ": the directory " + p.parent_path().string() + " does not exist");
  }
  return p;
}

// The SRDF <group_state> a page opens at: the one named, or the first.
const NamedConfiguration& srdf_state(const Model& model, const std::string& srdf, const std::string& state) {
  const std::vector<NamedConfiguration>& states = model.named_configurations();
  std::string list;
  for (const NamedConfiguration& c : states) {
    if (state.empty() || c.name == state) return c;
    list += (list.empty() ? "" : ", ") + c.name;
  }
  throw ArgumentError("--srdf " + srdf + (state.empty() ? std::string(" has no <group_state>")
                                                       : " has no <group_state> named '" + state + "'") +
                      (list.empty() ? "" : " (it has: " + list + ")"));
}

int run_view(const ViewArgs& args) {
  LoadArgs load = args.load;
  load.srdf = args.srdf;
  const Model model = load_model(args.model, load);
  VectorX q = neutral_configuration(model);
  std::string state;
  if (!args.srdf.empty()) {
    const NamedConfiguration& chosen = srdf_state(model, args.srdf, args.state);
    q = chosen.q;
    state = chosen.name;
  }
  if (!args.q.empty()) {
    q = parse_vector(args.q, "--q", model.nq(), "nq of '" + model.name() + "' with a " + args.load.root + " root");
    for (int b = 1; b < model.nbodies(); ++b) {
      const Joint& j = model.joint(b);
      if (j.type == JointType::FreeFlyer && !(q.segment<4>(j.q_index + 3).norm() > 1e-9)) {
        throw ArgumentError("--q: the quaternion of joint '" + j.name + "' (entries " + std::to_string(j.q_index + 3) +
                            "-" + std::to_string(j.q_index + 6) + ") is zero; give a unit quaternion x,y,z,w such as 0,0,0,1");
      }
    }
    normalize_configuration(model, q);
  }
  const fs::path file = view_output_path(args.out);
  const PageOutcome page = write_view_page(model, q, model.name(), file, args.model, args.load.package_dirs);
  if (!page.written) throw Error("view page not written: " + page.message);
  int sliders = 0;
  for (int b = 1; b < model.nbodies(); ++b) sliders += model.joint(b).nq == 1;
  std::cout << file.string() << ": " << model.name() << (state.empty() ? "" : " in state '" + state + "'") << ", " << model.nbodies() - 1 << " bodies, " << sliders
            << " joint sliders, " << std::fixed << std::setprecision(2) << static_cast<double>(page.bytes) / 1e6
            << " MB (open it in a browser)\n";
  return 0;
}

}  // namespace plume::cli
