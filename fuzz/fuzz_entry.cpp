// Entry points of the fuzz targets and of the regression replay (fuzz_entry.hpp).
#include "fuzz_entry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
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
#include "plume/error.hpp"
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

void vector_input(const std::uint8_t* data, std::size_t size, const Options& options) {
  // Models by nq, loaded once: the dynamics path of `plume dynamics`.
  static const std::vector<std::pair<std::string, Model>> models = [] {
    std::vector<std::pair<std::string, Model>> out;
    out.emplace_back("pendulum", cli::load_model(PLUME_MODELS_DIR "/pendulum.urdf", "fixed"));
    out.emplace_back("double_pendulum", cli::load_model(PLUME_MODELS_DIR "/double_pendulum.urdf", "fixed"));
    out.emplace_back("rod", cli::load_model(PLUME_MODELS_DIR "/rod.urdf", "planar"));
    out.emplace_back("arm7", cli::load_model(PLUME_MODELS_DIR "/arm7.urdf", "fixed"));
    out.emplace_back("ball", cli::load_model(PLUME_MODELS_DIR "/ball.urdf", "free"));
    out.emplace_back("quadruped", cli::load_model(PLUME_MODELS_DIR "/quadruped.urdf", "free"));
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

}  // namespace plume::fuzz
