// Contact benchmarks: the full contact-dynamics solve (H, C, LTDL, T, M, LCP,
// q̈) of robots standing on the ground, and LCP solves of growing size.
// Run: build/bench/bench_contact
#include <benchmark/benchmark.h>

#include <memory>
#include <random>

#include "bench_common.hpp"
#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/contact/detection.hpp"
#include "plume/dynamics/contact_dynamics.hpp"
#include "plume/lcp/lemke.hpp"
#include "plume/lcp/pgs.hpp"
#include "plume/lcp/pivoting.hpp"

using namespace plume;

namespace {

// A robot standing on the ground: a model, a configuration touching it, the contacts.
struct Stance {
  Model model;
  VectorX q;
  std::vector<Contact> contacts;
};

// A model of models/ on a free-flyer, at its neutral configuration.
Stance free_robot(const std::string& name) {
  Stance s;
  urdf::LoadOptions opt;
  opt.root = urdf::RootJoint::FreeFlyer;
  s.model = urdf::load(std::string(PLUME_MODELS_DIR) + "/" + name + ".urdf", opt);
  s.q = neutral_configuration(s.model);
  return s;
}

Stance quadruped_stance() {
  Stance s = free_robot("quadruped");
  for (int leg = 0; leg < 4; ++leg) {
    s.q(7 + 3 * leg) = 0.0;
    s.q(8 + 3 * leg) = 0.8;
    s.q(9 + 3 * leg) = -1.6;
  }
  // Put the lowest foot on the ground: detect with a large margin, shift.
  Data d(s.model);
  DetectionOptions o;
  o.margin = 10.0;
  ContactDetector det(s.model, {ground_plane()}, o);
  forward_kinematics(s.model, d, s.q);
  std::vector<Contact> c;
  det.detect(s.model, d, c);
  double gap = 1e9;
  for (const Contact& k : c) {
    if (k.body_b != 0 && std::holds_alternative<Sphere>(det.shapes()[k.shape_b].geometry)) gap = std::min(gap, k.gap);
  }
  s.q(2) -= gap;
  DetectionOptions touch;
  touch.margin = 1e-9;
  ContactDetector det2(s.model, {ground_plane()}, touch);
  forward_kinematics(s.model, d, s.q);
  det2.detect(s.model, d, s.contacts);
  return s;
}

// Lowers s.q until the lowest shape touches the ground, then takes every
// contact within `margin` of it.
void lower_onto_ground(Stance& s, double margin) {
  Data d(s.model);
  DetectionOptions o;
  o.margin = 10.0;
  ContactDetector det(s.model, {ground_plane()}, o);
  forward_kinematics(s.model, d, s.q);
  std::vector<Contact> c;
  det.detect(s.model, d, c);
  double gap = 1e9;
  for (const Contact& k : c) gap = std::min(gap, k.gap);
  s.q(2) -= gap;
  DetectionOptions near;
  near.margin = margin;
  ContactDetector det2(s.model, {ground_plane()}, near);
  forward_kinematics(s.model, d, s.q);
  det2.detect(s.model, d, s.contacts);
}

Stance humanoid_stance() {
  Stance s = free_robot("humanoid");
  lower_onto_ground(s, 1e-7);
  return s;
}

// The humanoid lying on its back (pitched 90° about y, arms out), every
// shape within 7 cm of the ground taken as touching (17 contacts): the many dependent
// contacts (a face's 4 corners, a cylinder's line) of the body at rest on
// the ground after a fall, where the event-driven scheme's impacts happen.
Stance humanoid_lying() {
  Stance s = free_robot("humanoid");
  const Eigen::Quaterniond pitch(Eigen::AngleAxisd(0.5 * 3.14159265358979323846, Vec3::UnitY()));
  s.q.segment<4>(3) = pitch.coeffs();
  lower_onto_ground(s, 0.07);
  return s;
}

// The event-driven scheme's impact: plastic, μ = 0.8, the 8-direction
// polyhedral cone (SimulationOptions::cone_directions), the body falling
// onto its contacts at 0.1 m/s, turning slightly.
void impact_bench(benchmark::State& st, const Stance& s) {
  Data d(s.model);
  const int n = static_cast<int>(s.contacts.size());
  ContactSolver solver(s.model, n);
  VectorX v = VectorX::Zero(s.model.nv());
  v(2) = -0.1;
  v(4) = 0.05;
  const VectorX e = VectorX::Zero(n);
  const VectorX mu = VectorX::Constant(n, 0.8);
  ImpactOptions opt;
  opt.friction = FrictionModel::PolyhedralCone;
  opt.cone_directions = 8;
  int pivots = 0;
  for (auto _ : st) {
    const ImpactSolution& r = solver.impact(s.model, d, s.q, v, s.contacts, e, mu, opt);
    pivots = r.pivots;
    benchmark::DoNotOptimize(r.v_plus.data());
  }
  st.counters["contacts"] = static_cast<double>(n);
  st.counters["lcp_size"] = static_cast<double>(10 * n);
  st.counters["pivots"] = static_cast<double>(pivots);
}

void solve_bench(benchmark::State& st, const Stance& s, FrictionModel fm) {
  Data d(s.model);
  ContactSolver solver(s.model, static_cast<int>(s.contacts.size()));
  const VectorX v = VectorX::Zero(s.model.nv());
  const VectorX tau = VectorX::Zero(s.model.nv());
  const VectorX mu = VectorX::Constant(static_cast<Eigen::Index>(s.contacts.size()), 0.8);
  ContactSolveOptions opt;
  opt.friction = fm;
  for (auto _ : st) {
    const ContactSolution& r = solver.solve(s.model, d, s.q, v, tau, s.contacts, mu, opt);
    benchmark::DoNotOptimize(r.ddq.data());
  }
  st.counters["contacts"] = static_cast<double>(s.contacts.size());
}

void aba_bench(benchmark::State& st, const Stance& s) {
  Data d(s.model);
  const VectorX v = VectorX::Zero(s.model.nv());
  const VectorX tau = VectorX::Zero(s.model.nv());
  for (auto _ : st) benchmark::DoNotOptimize(unchecked::aba(s.model, d, s.q, v, tau).data());
}

// Random PSD problems M = AᵀA + εI of size n, d uniform.
struct LcpSet {
  std::vector<MatrixX> M;
  std::vector<VectorX> d;
};
LcpSet lcp_set(int n) {
  LcpSet set;
  std::mt19937_64 g(static_cast<unsigned>(n));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k = 0; k < 16; ++k) {
    MatrixX A(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) A(i, j) = u(g);
    set.M.push_back(A.transpose() * A + 1e-3 * MatrixX::Identity(n, n));
    VectorX d(n);
    for (int i = 0; i < n; ++i) d(i) = u(g);
    set.d.push_back(d);
  }
  return set;
}

void register_all() {
  static const Stance quad = quadruped_stance();
  static const Stance human = humanoid_stance();
  static const Stance lying = humanoid_lying();
  benchmark::RegisterBenchmark("impact/humanoid_lying/cone8", [](benchmark::State& st) { impact_bench(st, lying); });
  benchmark::RegisterBenchmark("contact_solve/quadruped_4_feet/frictionless",
                               [](benchmark::State& st) { solve_bench(st, quad, FrictionModel::None); });
  benchmark::RegisterBenchmark("contact_solve/quadruped_4_feet/cone4",
                               [](benchmark::State& st) { solve_bench(st, quad, FrictionModel::PolyhedralCone); });
  benchmark::RegisterBenchmark("contact_solve/quadruped_4_feet/box_pgs",
                               [](benchmark::State& st) { solve_bench(st, quad, FrictionModel::Box); });
  benchmark::RegisterBenchmark("aba/quadruped", [](benchmark::State& st) { aba_bench(st, quad); });
  benchmark::RegisterBenchmark("contact_solve/humanoid_box_feet/frictionless",
                               [](benchmark::State& st) { solve_bench(st, human, FrictionModel::None); });
  benchmark::RegisterBenchmark("contact_solve/humanoid_box_feet/cone4",
                               [](benchmark::State& st) { solve_bench(st, human, FrictionModel::PolyhedralCone); });
  benchmark::RegisterBenchmark("contact_solve/humanoid_box_feet/box_pgs",
                               [](benchmark::State& st) { solve_bench(st, human, FrictionModel::Box); });
  for (int n : {4, 8, 16, 32, 64}) {
    const auto set = std::make_shared<LcpSet>(lcp_set(n));
    benchmark::RegisterBenchmark(("lcp/lemke/n" + std::to_string(n)).c_str(), [set, n](benchmark::State& st) {
      LemkeSolver s;
      s.reserve(n);
      int k = 0;
      for (auto _ : st) {
        benchmark::DoNotOptimize(s.solve(set->M[k], set->d[k]).lambda.data());
        k = (k + 1) % 16;
      }
      st.counters["solves_per_s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
    });
    benchmark::RegisterBenchmark(("lcp/pivoting/n" + std::to_string(n)).c_str(), [set, n](benchmark::State& st) {
      PivotingSolver s;
      s.reserve(n);
      int k = 0;
      for (auto _ : st) {
        benchmark::DoNotOptimize(s.solve(set->M[k], set->d[k]).lambda.data());
        k = (k + 1) % 16;
      }
      st.counters["solves_per_s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
    });
    benchmark::RegisterBenchmark(("lcp/pgs/n" + std::to_string(n)).c_str(), [set, n](benchmark::State& st) {
      PgsSolver s;
      s.reserve(n);
      const VectorX lo = VectorX::Zero(n), hi = VectorX::Constant(n, std::numeric_limits<double>::infinity());
      int k = 0;
      for (auto _ : st) {
        benchmark::DoNotOptimize(s.solve(set->M[k], set->d[k], lo, hi).lambda.data());
        k = (k + 1) % 16;
      }
      st.counters["solves_per_s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
