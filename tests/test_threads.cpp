// Thread safety (Model immutable and shared, one Data per thread):
// one Model shared by several threads, each with its own Data, ContactSolver,
// ContactDetector output and Simulator, gives bit-identical results to one
// thread. Also: URDF and world files loaded concurrently (urdfdom's logging
// goes through a process-wide handler that plume serialises).
//
// Run once under ThreadSanitizer (a separate build with -fsanitize=thread);
// the workload is kept small so that it stays quick there.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/energy.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"
#include "plume/contact/detection.hpp"
#include "plume/dynamics/contact_dynamics.hpp"
#include "plume/sim/simulator.hpp"
#include "plume/sim/world_file.hpp"
#include "test_utils.hpp"

using namespace plume;

namespace {

constexpr int kThreads = 4;

// Everything one pass of the dynamics workload produces, to compare bit for bit.
struct Results {
  std::vector<MatrixX> matrices;
  std::vector<VectorX> vectors;
  std::vector<double> scalars;
  std::vector<std::string> texts;
};

template <class Derived>
bool same_bits(const Eigen::MatrixBase<Derived>& a, const Eigen::MatrixBase<Derived>& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    for (Eigen::Index i = 0; i < a.rows(); ++i) {
      const double x = a(i, j), y = b(i, j);
      if (std::memcmp(&x, &y, sizeof x) != 0) return false;
    }
  }
  return true;
}

// Returns the first difference, or "" when a and b are bit-identical.
std::string compare(const Results& a, const Results& b) {
  if (a.matrices.size() != b.matrices.size() || a.vectors.size() != b.vectors.size() ||
      a.scalars.size() != b.scalars.size() || a.texts.size() != b.texts.size()) {
    return "different numbers of results";
  }
  for (std::size_t i = 0; i < a.matrices.size(); ++i) {
    if (!same_bits(a.matrices[i], b.matrices[i])) return "matrix " + std::to_string(i) + " differs";
  }
  for (std::size_t i = 0; i < a.vectors.size(); ++i) {
    if (!same_bits(a.vectors[i], b.vectors[i])) return "vector " + std::to_string(i) + " differs";
  }
  for (std::size_t i = 0; i < a.scalars.size(); ++i) {
    if (std::memcmp(&a.scalars[i], &b.scalars[i], sizeof(double)) != 0) return "scalar " + std::to_string(i) + " differs";
  }
  for (std::size_t i = 0; i < a.texts.size(); ++i) {
    if (a.texts[i] != b.texts[i]) return "text " + std::to_string(i) + " differs: '" + a.texts[i] + "' vs '" + b.texts[i] + "'";
  }
  return "";
}

// Runs `work(k)` on kThreads threads at once (released together) and returns each result.
template <class Work>
std::vector<Results> on_threads(Work work) {
  std::vector<Results> out(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&, k] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      out[static_cast<std::size_t>(k)] = work(k);
    });
  }
  for (std::thread& t : threads) t.join();
  return out;
}

// The dynamics algorithms on a few configurations: thread k visits them in a
// rotated order, so that threads are at different points of the work.
Results dynamics_pass(const Model& m, int rotation) {
  constexpr int kConfigs = 6;
  Data d(m);
  std::vector<Results> per(kConfigs);
  for (int s = 0; s < kConfigs; ++s) {
    const int c = (s + rotation) % kConfigs;
    const VectorX q = random_configuration(m, 100 + static_cast<std::uint64_t>(c));
    const VectorX v = VectorX::LinSpaced(m.nv(), -1.0, 1.0 + c);
    const VectorX tau = VectorX::LinSpaced(m.nv(), 2.0, -3.0 - c);
    Results& r = per[static_cast<std::size_t>(c)];
    r.matrices.push_back(crba(m, d, q));
    r.matrices.push_back(MatrixX(ltdl(m, d)));
    r.vectors.push_back(bias_forces(m, d, q, v));
    r.vectors.push_back(aba(m, d, q, v, tau));
    r.vectors.push_back(rnea(m, d, q, v, tau));
    for (int f = 0; f < static_cast<int>(m.frames().size()); f += 3) {
      r.matrices.push_back(frame_jacobian(m, d, q, f, ReferenceFrame::World));
    }
    r.scalars.push_back(kinetic_energy(m, d, q, v));
    r.scalars.push_back(potential_energy(m, d, q));
    r.vectors.push_back(VectorX(center_of_mass(m, d, q)));
  }
  Results all;
  for (const Results& r : per) {
    all.matrices.insert(all.matrices.end(), r.matrices.begin(), r.matrices.end());
    all.vectors.insert(all.vectors.end(), r.vectors.begin(), r.vectors.end());
    all.scalars.insert(all.scalars.end(), r.scalars.begin(), r.scalars.end());
  }
  return all;
}

Scenario world(const char* file) { return load_world(test::model_path((std::string("worlds/") + file).c_str())); }

// Contact detection, contact forces (friction cone) and an impact on the
// quadruped of quadruped_standing.xml, lowered so that its feet touch.
Results contact_pass(const World& w, const ContactDetector& detector) {
  const Model& m = w.model();
  Data d(m);
  ContactSolver solver(m);
  VectorX q = w.q0();
  q(2) -= 0.05;  // feet on the ground (the world starts them 5 cm above)
  VectorX v = VectorX::Zero(m.nv());
  v(5) = -0.3;  // falling (body-frame linear z)
  const VectorX tau = VectorX::Constant(m.nv(), 0.5);
  std::vector<Contact> contacts;
  forward_kinematics(m, d, q);
  detector.detect(m, d, contacts);
  Results r;
  r.scalars.push_back(static_cast<double>(contacts.size()));
  const VectorX mu = VectorX::Constant(static_cast<Eigen::Index>(contacts.size()), 0.8);
  const VectorX e = VectorX::Constant(static_cast<Eigen::Index>(contacts.size()), 0.3);
  ContactSolveOptions cone;
  cone.friction = FrictionModel::PolyhedralCone;
  cone.cone_directions = 8;
  const ContactSolution& s = solver.solve(m, d, q, v, tau, contacts, mu, cone);
  r.texts.push_back(to_string(s.status));
  r.vectors.push_back(s.lambda);
  r.matrices.push_back(MatrixX(s.friction));
  r.vectors.push_back(s.ddq);
  ImpactOptions io;
  io.friction = FrictionModel::PolyhedralCone;
  const ImpactSolution& imp = solver.impact(m, d, q, v, contacts, e, mu, io);
  r.texts.push_back(to_string(imp.status));
  r.vectors.push_back(imp.impulse);
  r.vectors.push_back(imp.v_plus);
  return r;
}

// A short simulation: final state, every sample and every event.
Results simulation_pass(const Scenario& s, double duration) {
  Simulator sim(s.world, s.options);
  if (s.controller) sim.set_controller(s.controller->function(s.world.model()), s.controller_period);
  MemoryRecorder rec;
  const SimulationResult res = sim.run_until(duration, &rec);
  Results r;
  r.texts.push_back(to_string(res.status));
  r.texts.push_back(res.message);
  r.scalars.push_back(res.time);
  r.scalars.push_back(static_cast<double>(res.statistics.steps));
  r.scalars.push_back(static_cast<double>(res.statistics.events));
  r.vectors.push_back(sim.q());
  r.vectors.push_back(sim.v());
  r.scalars.insert(r.scalars.end(), rec.times.begin(), rec.times.end());
  r.scalars.insert(r.scalars.end(), rec.energies.begin(), rec.energies.end());
  for (const VectorX& q : rec.q) r.vectors.push_back(q);
  for (const SimulationEvent& e : rec.events) {
    r.texts.push_back(std::string(to_string(e.kind)) + " " + e.contact);
    r.scalars.push_back(e.time);
    r.scalars.push_back(e.impulse);
  }
  return r;
}

}  // namespace

TEST(Threads, SharedModelGivesBitIdenticalDynamics) {
  for (const auto& [file, root] : {std::pair{"humanoid.urdf", urdf::RootJoint::FreeFlyer},
                                   std::pair{"arm7.urdf", urdf::RootJoint::Fixed}}) {
    const Model m = test::load_model(file, root);
    const Results reference = dynamics_pass(m, 0);
    const std::vector<Results> got = on_threads([&](int k) { return dynamics_pass(m, k); });
    for (int k = 0; k < kThreads; ++k) EXPECT_EQ(compare(reference, got[static_cast<std::size_t>(k)]), "") << file << ", thread " << k;
  }
}

TEST(Threads, SharedModelGivesBitIdenticalContactSolutions) {
  const Scenario s = world("quadruped_standing.xml");
  const ContactDetector detector(s.world.model(), s.world.environment());
  const Results reference = contact_pass(s.world, detector);
  ASSERT_GE(reference.scalars[0], 4.0) << "the four feet touch the ground";
  const std::vector<Results> got = on_threads([&](int) { return contact_pass(s.world, detector); });
  for (int k = 0; k < kThreads; ++k) EXPECT_EQ(compare(reference, got[static_cast<std::size_t>(k)]), "") << "thread " << k;
}

TEST(Threads, SimulatorsOnOneWorldGiveBitIdenticalRuns) {
  // The bouncing ball (impacts, Zeno) and the quadruped landing under PD
  // control (four simultaneous impacts, friction, a controller).
  for (const auto& [file, until] : {std::pair{"bouncing_ball.xml", 1.0}, std::pair{"quadruped_standing.xml", 0.12}}) {
    const Scenario s = world(file);
    const double duration = until;  // (a structured binding cannot be captured in C++17)
    const Results reference = simulation_pass(s, duration);
    ASSERT_EQ(reference.texts[0], "finished") << file << ": " << reference.texts[1];
    const std::vector<Results> got = on_threads([&](int) { return simulation_pass(s, duration); });
    for (int k = 0; k < kThreads; ++k) EXPECT_EQ(compare(reference, got[static_cast<std::size_t>(k)]), "") << file << ", thread " << k;
  }
}

TEST(Threads, ConcurrentLoadingGivesTheSameModels) {
  // urdf::load and load_world from several threads at once (urdfdom logs
  // through a process-wide console_bridge handler).
  const auto load = [](int k) {
    // Two loads of each file, in an order that depends on the thread, so
    // that threads load different files at the same time.
    Results arm, quad;
    for (int i = 0; i < 4; ++i) {
      const bool is_quad = (i + k) % 2 == 1;
      const Model m = test::load_model(is_quad ? "quadruped.urdf" : "arm7.urdf",
                                       is_quad ? urdf::RootJoint::FreeFlyer : urdf::RootJoint::Fixed);
      Data d(m);
      Results& r = is_quad ? quad : arm;
      r.matrices.push_back(crba(m, d, neutral_configuration(m)));
      r.texts.push_back(m.name());
    }
    Results r = arm;
    r.matrices.insert(r.matrices.end(), quad.matrices.begin(), quad.matrices.end());
    r.texts.insert(r.texts.end(), quad.texts.begin(), quad.texts.end());
    const Scenario s = world("newtons_cradle.xml");
    r.vectors.push_back(s.world.q0());
    r.texts.push_back(std::to_string(s.world.model().nbodies()));
    // A bad document from several threads: the same message each time.
    try {
      urdf::load_string("<robot name='x'><link name='a'/><joint name='j' type='revolute'><parent link='a'/>"
                        "<child link='b'/><axis xyz='0 0 1'/></joint><link name='b'/></robot>");
      r.texts.push_back("loaded");
    } catch (const Error& e) {
      r.texts.push_back(e.what());
    }
    return r;
  };
  const Results reference = load(0);
  const std::vector<Results> got = on_threads(load);
  for (int k = 0; k < kThreads; ++k) EXPECT_EQ(compare(reference, got[static_cast<std::size_t>(k)]), "") << "thread " << k;
}
