// Entry points of the fuzz targets and of the regression replay (fuzz_entry.hpp).
#include "fuzz_entry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/configuration.hpp"
#include "plume/data.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/contact/detection.hpp"
#include "plume/error.hpp"
#include "plume/geometry/convex_hull.hpp"
#include "plume/geometry/mesh.hpp"
#include "plume/model_builder.hpp"
#include "plume/sim/simulator.hpp"
#include "plume/sim/world_file.hpp"
#include "plume/urdf.hpp"

#ifndef PLUME_MODELS_DIR
#error "PLUME_MODELS_DIR must name the models/ directory"
#endif

namespace plume::fuzz {

namespace {

// A plume::Error is the expected way to reject an input; with the oracle on,
// its message must be one line: no line break (the command line prints it as
// the one line of its error report). Other control characters that an input
// carries into a name are left alone: they do not break the line.
void check_message(const Error& e, const Options& options) {
  if (!options.one_line_messages) return;
  const std::string m = e.what();
  if (m.empty()) throw OneLineViolation("a plume::Error with an empty message");
  const std::size_t at = m.find_first_of("\n\r\v\f");
  if (at != std::string::npos) {
    std::ostringstream out;
    out << "a plume::Error message breaks the line at character " << at << ": " << m;
    throw OneLineViolation(out.str());
  }
}

std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A model that loaded is usable: the algorithms run on it.
void exercise(const Model& m) {
  if (m.nv() > 200) return;  // keep one input fast; the loader itself has been exercised
  Data d(m);
  const VectorX q = neutral_configuration(m);
  const VectorX v = VectorX::Ones(m.nv());
  const VectorX tau = VectorX::Zero(m.nv());
  crba(m, d, q);
  ltdl(m, d);
  bias_forces(m, d, q, v);
  aba(m, d, q, v, tau);
  rnea(m, d, q, v, tau);
}

}  // namespace

Options options_from_environment() {
  Options o;
  if (const char* s = std::getenv("PLUME_FUZZ_ONE_LINE")) o.one_line_messages = std::string(s) == "1";
  if (const char* s = std::getenv("PLUME_FUZZ_SIMULATE")) o.simulate = std::string(s) != "0";
  return o;
}

void urdf_input(const std::uint8_t* data, std::size_t size, const Options& options) {
  const std::string xml = text_of(data, size);
  for (const urdf::RootJoint root : {urdf::RootJoint::Fixed, urdf::RootJoint::FreeFlyer, urdf::RootJoint::Planar}) {
    urdf::LoadOptions lo;
    lo.root = root;
    try {
      const Model m = urdf::load_string(xml, lo, "fuzz.urdf");
      exercise(m);
    } catch (const Error& e) {
      check_message(e, options);
      // A rejected document is rejected whatever the root joint: stop here.
      if (root == urdf::RootJoint::Fixed) return;
    }
  }
}

void world_input(const std::uint8_t* data, std::size_t size, const Options& options) {
  const std::string xml = text_of(data, size);
  try {
    Scenario s = load_world_string(xml, "fuzz.xml", PLUME_MODELS_DIR "/worlds");
    SimulationOptions o = s.options;
    if (options.simulate) {
      // A short, bounded run: what the reader accepts must simulate (or end
      // with a status) without crashing.
      o.duration = std::min(o.duration, 0.01);
      o.max_steps = std::min(o.max_steps, 200L);
      o.max_events = std::min(o.max_events, 20);
      o.output_rate = std::min(o.output_rate, 1000.0);
    }
    Simulator sim(s.world, o);
    if (s.controller) sim.set_controller(s.controller->function(s.world.model()), s.controller_period);
    if (options.simulate) {
      MemoryRecorder rec;
      sim.run_until(o.duration, &rec);
    }
  } catch (const Error& e) {
    check_message(e, options);
  }
}

cli::LoadArgs root(const char* joint) {
  cli::LoadArgs a;
  a.root = joint;
  return a;
}

void vector_input(const std::uint8_t* data, std::size_t size, const Options& options) {
  // Models by nq, loaded once: the dynamics path of `plume dynamics`.
  static const std::vector<std::pair<std::string, Model>> models = [] {
    std::vector<std::pair<std::string, Model>> out;
    out.emplace_back("pendulum", cli::load_model(PLUME_MODELS_DIR "/pendulum.urdf", root("fixed"), urdf::CollisionMeshes::Skip, false));
    out.emplace_back("double_pendulum", cli::load_model(PLUME_MODELS_DIR "/double_pendulum.urdf", root("fixed"), urdf::CollisionMeshes::Skip, false));
    out.emplace_back("rod", cli::load_model(PLUME_MODELS_DIR "/rod.urdf", root("planar"), urdf::CollisionMeshes::Skip, false));
    out.emplace_back("arm7", cli::load_model(PLUME_MODELS_DIR "/arm7.urdf", root("fixed"), urdf::CollisionMeshes::Skip, false));
    out.emplace_back("ball", cli::load_model(PLUME_MODELS_DIR "/ball.urdf", root("free"), urdf::CollisionMeshes::Skip, false));
    out.emplace_back("quadruped", cli::load_model(PLUME_MODELS_DIR "/quadruped.urdf", root("free"), urdf::CollisionMeshes::Skip, false));
    return out;
  }();
  // Lines: --q, --v, --tau (as given on the command line, one per line).
  std::vector<std::string> args;
  {
    const std::string text = text_of(data, size);
    std::size_t start = 0;
    while (args.size() < 3) {
      const std::size_t nl = text.find('\n', start);
      args.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
  }
  VectorX q;
  try {
    q = cli::parse_vector(args[0], "--q");
  } catch (const Error& e) {
    check_message(e, options);
    return;
  }
  const Model* model = &models.back().second;
  for (const auto& [name, m] : models) {
    if (m.nq() == q.size()) model = &m;
  }
  const Model& m = *model;
  try {
    // As run_dynamics does it.
    const VectorX qq = cli::parse_vector(args[0], "--q", m.nq(), "nq of model '" + m.name() + "'");
    const VectorX v = args.size() > 1 ? cli::parse_vector(args[1], "--v", m.nv(), "nv of model '" + m.name() + "'")
                                      : VectorX(VectorX::Zero(m.nv()));
    check_configuration(m, qq, "--q");
    check_vector(v, m.nv(), "--v");
    Data d(m);
    crba(m, d, qq);
    bias_forces(m, d, qq, v);
    if (args.size() > 2) {
      const VectorX tau = cli::parse_vector(args[2], "--tau", m.nv(), "nv of model '" + m.name() + "'");
      check_vector(tau, m.nv(), "--tau");
      aba(m, d, qq, v, tau);
      rnea(m, d, qq, v, tau);
    }
  } catch (const Error& e) {
    check_message(e, options);
  }
}

namespace {

// A hull that built: every contact it makes with a plane, a sphere, a box
// and itself at a few poses is finite.
void touch(const std::shared_ptr<const ConvexHull>& hull) {
  Mesh mesh;
  mesh.filename = mesh.resolved = "fuzz.stl";
  mesh.hull = hull;
  ModelBuilder b("fuzz_mesh");
  const RigidInertia I = RigidInertia::from_mass_com_inertia(1.0, Vec3::Zero(), 0.01 * Mat3::Identity());
  const int body = b.add_body("hull", 0, JointSpec::free_flyer("hull_joint"), Transform::Identity(), I);
  b.add_collision(CollisionShape{"hull", "hull", body, Transform::Identity(), mesh, {}});
  const int other = b.add_body("other", 0, JointSpec::free_flyer("other_joint"), Transform::Identity(), I);
  b.add_collision(CollisionShape{"copy", "other", other, Transform::Identity(), mesh, {}});
  b.add_collision(CollisionShape{"ball", "other", other, Transform::Identity(), Sphere{0.5 * hull->radius()}, {}});
  b.add_collision(CollisionShape{"block", "other", other, Transform::from_pose(Mat3::Identity(), Vec3(0, 0, hull->radius())),
                                 Box{Vec3::Constant(hull->radius())}, {}});
  const Model m = b.build();
  DetectionOptions opt;
  opt.margin = 0.1 * (1.0 + hull->radius());
  const ContactDetector det(m, {ground_plane()}, opt);
  Data d(m);
  std::vector<Contact> out;
  for (int pose = 0; pose < 4; ++pose) {
    VectorX q = neutral_configuration(m);
    q.segment<4>(3) = Eigen::Quaterniond(Eigen::AngleAxisd(0.7 * pose, Vec3(1, 2, 3).normalized())).coeffs();
    q(2) = 0.5 * pose * hull->radius();
    q.segment<3>(7) = Vec3(0.3, -0.2, 0.9) * pose * hull->radius();
    forward_kinematics(m, d, q);
    det.detect(m, d, out);
    for (const Contact& c : out) {
      if (!std::isfinite(c.gap) || !c.normal.allFinite() || !c.point_a.allFinite() || !c.point_b.allFinite()) {
        throw std::logic_error("a hull contact with a non-finite gap, normal or witness point");
      }
    }
  }
}

}  // namespace

void mesh_input(const std::uint8_t* data, std::size_t size, const Options& options) {
  if (size < 1) return;
  const int form = data[0] % 3;
  ++data;
  --size;
  try {
    std::shared_ptr<const ConvexHull> hull;
    if (form == 0) {  // a point cloud
      std::vector<Vec3> points;
      for (std::size_t k = 0; k + 12 <= size && points.size() < 4096; k += 12) {
        float x[3];
        std::memcpy(x, data + k, sizeof x);
        points.emplace_back(x[0], x[1], x[2]);
      }
      hull = std::make_shared<const ConvexHull>(ConvexHull::from_points(points, "fuzz point cloud"));
    } else {  // an STL file (binary or ASCII: assimp tells them apart)
      static const std::string path = "/tmp/plume_fuzz_mesh_" + std::to_string(::getpid()) + (form == 1 ? ".stl" : ".STL");
      {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
      }
      const TriangleMesh m = read_mesh(path);
      hull = std::make_shared<const ConvexHull>(ConvexHull::from_points(m.vertices, "mesh '" + path + "'"));
    }
    // Far-off or astronomically large clouds are valid but meaningless to touch.
    if (hull->radius() < 1e6 && hull->radius() > 1e-6) touch(hull);
  } catch (const Error& e) {
    check_message(e, options);
  }
}

}  // namespace plume::fuzz
