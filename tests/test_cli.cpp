// The plume command line, end to end: JSON keys, values against the library,
// exit status and one-line messages on bad input.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/version.hpp"
#include "test_utils.hpp"

using namespace plume;
using nlohmann::json;

namespace {

struct CliRun {
  int status;
  std::string out;  // stdout and stderr
};

// stdout and stderr together, unless `args` redirects stderr itself.
CliRun run(const std::string& args) {
  const std::string cmd = std::string(PLUME_CLI) + " " + args + (args.find("2>") == std::string::npos ? " 2>&1" : "");
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  CliRun r{-1, ""};
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe.get())) > 0) r.out.append(buf.data(), n);
  const int raw = pclose(pipe.release());
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

std::string model(const char* f) { return test::model_path(f); }

std::string csv(const VectorX& x) {
  std::string s;
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", x(i));
    s += (i ? "," : "") + std::string(b);
  }
  return s;
}

VectorX vec(const json& j) {
  VectorX x(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) x(static_cast<Eigen::Index>(i)) = j[i].get<double>();
  return x;
}

}  // namespace

TEST(Cli, InfoJsonDescribesTheModel) {
  const CliRun r = run("info " + model("quadruped.urdf") + " --root free --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["nq"], 19);
  EXPECT_EQ(j["nv"], 18);
  EXPECT_NEAR(j["total_mass"].get<double>(), test::load_model("quadruped.urdf", urdf::RootJoint::FreeFlyer).total_mass(), 1e-12);
  for (const char* key : {"bodies", "frames", "warnings", "joints", "collisions"}) EXPECT_TRUE(j.contains(key)) << key;
  ASSERT_EQ(j["joints"].size(), 13u);  // the root joint and 12 leg joints
  int nq = 0, nv = 0;
  for (const json& jt : j["joints"]) {
    for (const char* key : {"name", "type", "q_index", "v_index", "nq", "nv"}) EXPECT_TRUE(jt.contains(key)) << key;
    EXPECT_EQ(jt["q_index"], nq);
    EXPECT_EQ(jt["v_index"], nv);
    nq += jt["nq"].get<int>();
    nv += jt["nv"].get<int>();
  }
  EXPECT_EQ(nq, 19);
  EXPECT_EQ(nv, 18);
  EXPECT_EQ(j["joints"][0]["type"], "free-flyer");
  EXPECT_EQ(j["joints"][0]["nq"], 7);
}

TEST(Cli, InfoTextAndBadInput) {
  const CliRun ok = run("info " + model("arm7.urdf"));
  EXPECT_EQ(ok.status, 0);
  EXPECT_NE(ok.out.find("nq = 7, nv = 7"), std::string::npos) << ok.out;
  const CliRun missing = run("info /nonexistent/x.urdf");
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.out.find("/nonexistent/x.urdf"), std::string::npos) << missing.out;
  EXPECT_EQ(std::count(missing.out.begin(), missing.out.end(), '\n'), 1) << missing.out;
  const CliRun root = run("info " + model("arm7.urdf") + " --root sideways");
  EXPECT_NE(root.status, 0);
  EXPECT_NE(root.out.find("sideways"), std::string::npos) << root.out;
}

TEST(Cli, DynamicsMatchesTheLibrary) {
  const Model m = test::load_model("quadruped.urdf", urdf::RootJoint::FreeFlyer);
  Data d(m);
  const VectorX q = random_configuration(m, 3);
  const VectorX v = VectorX::LinSpaced(m.nv(), -1, 1);
  const VectorX tau = VectorX::LinSpaced(m.nv(), 2, -2);
  const CliRun r = run("dynamics " + model("quadruped.urdf") + " --root free --q " + csv(q) + " --v " + csv(v) + " --tau " +
                    csv(tau) + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const json j = json::parse(r.out);
  const MatrixX H = crba(m, d, q);
  for (int i = 0; i < m.nv(); ++i) EXPECT_TRUE(vec(j["H"][i]).isApprox(H.row(i).transpose(), 1e-14));
  EXPECT_TRUE(vec(j["C"]).isApprox(bias_forces(m, d, q, v), 1e-14));
  EXPECT_TRUE(vec(j["ddq"]).isApprox(aba(m, d, q, v, tau), 1e-14));
  EXPECT_FALSE(j.contains("tau"));
  // --ddq gives τ from RNEA instead.
  const CliRun r2 = run("dynamics " + model("quadruped.urdf") + " --root free --q " + csv(q) + " --v " + csv(v) + " --ddq " +
                     csv(tau) + " --json");
  ASSERT_EQ(r2.status, 0) << r2.out;
  EXPECT_TRUE(vec(json::parse(r2.out)["tau"]).isApprox(rnea(m, d, q, v, tau), 1e-14));
}

// --derivatives: nv x nv nested lists (row-major) agreeing with central
// differences of the library's rnea / aba through integrate() (4th order, h = 2e-4).
TEST(Cli, DynamicsDerivativesMatchFiniteDifferences) {
  const Model m = test::load_model("quadruped.urdf", urdf::RootJoint::FreeFlyer);
  Data d(m);
  const int nv = m.nv();
  const VectorX q = random_configuration(m, 4);
  const VectorX v = VectorX::LinSpaced(nv, -1, 1);
  const VectorX x = VectorX::LinSpaced(nv, 2, -2);
  const std::string state = " --root free --q " + csv(q) + " --v " + csv(v);
  const double h = 2e-4;
  auto stencil = [&](auto&& f) { return VectorX((f(-2 * h) - 8 * f(-h) + 8 * f(h) - f(2 * h)) / (12 * h)); };
  // d/dq (tangent), d/dv, d/dx of g(q, v, x).
  auto jacobians = [&](auto&& g) {
    std::array<MatrixX, 3> D{MatrixX(nv, nv), MatrixX(nv, nv), MatrixX(nv, nv)};
    for (int k = 0; k < nv; ++k) {
      const VectorX e = VectorX::Unit(nv, k);
      D[0].col(k) = stencil([&](double t) { return VectorX(g(integrate(m, q, e, t), v, x)); });
      D[1].col(k) = stencil([&](double t) { return VectorX(g(q, VectorX(v + t * e), x)); });
      D[2].col(k) = stencil([&](double t) { return VectorX(g(q, v, VectorX(x + t * e))); });
    }
    return D;
  };
  auto matrix = [&](const json& j) {
    EXPECT_EQ(j.size(), static_cast<std::size_t>(nv));
    MatrixX M(nv, nv);
    for (int r = 0; r < nv; ++r) {
      EXPECT_EQ(j[r].size(), static_cast<std::size_t>(nv));
      M.row(r) = vec(j[r]).transpose();
    }
    return M;
  };
  auto close = [](const MatrixX& A, const MatrixX& B) {
    return (A - B).cwiseAbs().maxCoeff() <= 1e-6 * std::max(1.0, B.cwiseAbs().maxCoeff());
  };
  const CliRun r = run("dynamics " + model("quadruped.urdf") + state + " --ddq " + csv(x) + " --derivatives --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const json j = json::parse(r.out);
  const auto Dt = jacobians([&](const VectorX& qq, const VectorX& vv, const VectorX& aa) { return rnea(m, d, qq, vv, aa); });
  EXPECT_TRUE(close(matrix(j["dtau_dq"]), Dt[0]));
  EXPECT_TRUE(close(matrix(j["dtau_dv"]), Dt[1]));
  for (const char* key : {"dddq_dq", "dddq_dv", "dddq_dtau"}) EXPECT_FALSE(j.contains(key)) << key;
  const CliRun r2 = run("dynamics " + model("quadruped.urdf") + state + " --tau " + csv(x) + " --derivatives --json");
  ASSERT_EQ(r2.status, 0) << r2.out;
  const json j2 = json::parse(r2.out);
  const auto Da = jacobians([&](const VectorX& qq, const VectorX& vv, const VectorX& tt) { return aba(m, d, qq, vv, tt); });
  EXPECT_TRUE(close(matrix(j2["dddq_dq"]), Da[0]));
  EXPECT_TRUE(close(matrix(j2["dddq_dv"]), Da[1]));
  EXPECT_TRUE(close(matrix(j2["dddq_dtau"]), Da[2]));
  for (const char* key : {"dtau_dq", "dtau_dv"}) EXPECT_FALSE(j2.contains(key)) << key;
  // Without --derivatives, none of the keys.
  const json j3 = json::parse(run("dynamics " + model("quadruped.urdf") + state + " --tau " + csv(x) + " --json").out);
  for (const char* key : {"dtau_dq", "dtau_dv", "dddq_dq", "dddq_dv", "dddq_dtau"}) EXPECT_FALSE(j3.contains(key)) << key;
  // Text output names them.
  const CliRun text = run("dynamics " + model("quadruped.urdf") + state + " --tau " + csv(x) + " --derivatives");
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find("dddq_dtau"), std::string::npos) << text.out;
}

TEST(Cli, DynamicsRejectsBadVectors) {
  const CliRun len = run("dynamics " + model("quadruped.urdf") + " --root free --q 0,0,0 --json");
  EXPECT_NE(len.status, 0);
  EXPECT_NE(len.out.find("expected 19"), std::string::npos) << len.out;
  const CliRun word = run("dynamics " + model("double_pendulum.urdf") + " --q 0.1,zero");
  EXPECT_NE(word.status, 0);
  EXPECT_NE(word.out.find("'zero'"), std::string::npos) << word.out;
  const CliRun nan = run("dynamics " + model("double_pendulum.urdf") + " --q 0.1,nan");
  EXPECT_NE(nan.status, 0);
  EXPECT_NE(nan.out.find("--q[1]"), std::string::npos) << nan.out;
  const CliRun v = run("dynamics " + model("double_pendulum.urdf") + " --q 0.1,0.2 --v 1");
  EXPECT_NE(v.status, 0);
  EXPECT_NE(v.out.find("--v has 1 entries, expected 2"), std::string::npos) << v.out;
}

TEST(Cli, BenchReportsEveryAlgorithm) {
  const CliRun r = run("bench " + model("double_pendulum.urdf") + " --calls 1000 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const json j = json::parse(r.out);
  for (const char* key : {"rnea", "bias", "crba", "aba", "ltdl", "jacobian"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_GT(j[key].get<double>(), 0.0) << key;
  }
}

// Usage errors are bad input like any other (README.md, "Command line"):
// status 1, not CLI11's own codes (105, 106, …), and one line in plume's
// format naming the problem and the subcommand whose --help explains it.
TEST(Cli, UsageErrorsExitOneWithOneLine) {
  const std::string arm = model("arm7.urdf");
  struct Case {
    std::string args;
    std::vector<std::string> words;
  };
  const std::vector<Case> cases = {
      {"", {"a subcommand is required", "simulate", "see 'plume --help'"}},
      {"simulate", {"simulate: world is required", "see 'plume simulate --help'"}},
      {"simulate world.xml --duration abc", {"simulate: ", "--duration", "abc"}},
      {"bench " + arm + " --calls 10", {"bench: ", "--calls", "10 not in range 1000"}},
      {"info " + arm + " --root sideways", {"info: ", "--root", "sideways"}},
      {"info", {"info: model is required"}},
      {"dynamics " + arm, {"dynamics: --q is required"}},
      {"info " + arm + " extra", {"extra"}},
      {"bogus", {"unknown subcommand or option 'bogus'", "info, dynamics, bench, simulate"}},
      {"--bogus", {"'--bogus'"}},
      {"dynamics " + arm + " --q 0,0,0,0,0,0,0 --tau 1 --ddq 1", {"dynamics: ", "--tau", "--ddq"}},
  };
  for (const Case& c : cases) {
    const CliRun r = run(c.args);
    EXPECT_EQ(r.status, 1) << "plume " << c.args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("plume: error: ", 0), 0u) << "plume " << c.args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "plume " << c.args << "\n" << r.out;
    for (const std::string& w : c.words) EXPECT_NE(r.out.find(w), std::string::npos) << "plume " << c.args << "\n" << r.out;
  }
  // Help is not an error.
  for (const char* help : {"--help", "simulate --help", "-h"}) {
    const CliRun r = run(help);
    EXPECT_EQ(r.status, 0) << help << "\n" << r.out;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << help << "\n" << r.out;
  }
}

TEST(Cli, VersionPrintsThePackageVersion) {
  const std::string version = std::to_string(PLUME_VERSION_MAJOR) + "." + std::to_string(PLUME_VERSION_MINOR) + "." +
                              std::to_string(PLUME_VERSION_PATCH);
  EXPECT_EQ(version, PLUME_VERSION);
  const CliRun r = run("--version");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, std::string("plume ") + PLUME_VERSION + "\n");
}

// A robot as published (models/lynx_description): package:// meshes, a
// placeholder base welded to the trunk, two hips 2 % off the triangle
// inequality. --inertia and --package-dir on every command.
TEST(Cli, PublishedRobotInertiaPoliciesAndPackageDirs) {
  const std::string lynx = model("lynx_description/urdf/lynx.urdf");
  const CliRun warned = run("info " + lynx + " --root free --json 2>/dev/null");
  ASSERT_EQ(warned.status, 0) << warned.out;
  const json j = json::parse(warned.out);
  ASSERT_EQ(j["warnings"].size(), 2u) << j["warnings"];
  EXPECT_NE(j["warnings"][0].get<std::string>().find("'LF_hip'"), std::string::npos);
  EXPECT_NE(j["warnings"][1].get<std::string>().find("'RH_hip'"), std::string::npos);
  int meshes = 0;
  for (const json& c : j["collisions"]) {
    if (c["geometry"]["type"] != "mesh") continue;
    ++meshes;
    EXPECT_EQ(c["geometry"]["resolved"].get<std::string>().rfind(model("lynx_description/meshes/"), 0), 0u) << c;
    EXPECT_TRUE(c["usable_for_contact"].get<bool>()) << c;
  }
  EXPECT_EQ(meshes, 12);

  const CliRun strict = run("info " + lynx + " --root free --inertia strict");
  EXPECT_EQ(strict.status, 1);
  for (const char* s : {"2 bodies", "'LF_hip'", "'RH_hip'", "triangle inequality"}) {
    EXPECT_NE(strict.out.find(s), std::string::npos) << s << " not in " << strict.out;
  }
  const CliRun repaired = run("dynamics " + lynx + " --root free --inertia repair --json --q " +
                              csv(VectorX::Unit(19, 6)));
  EXPECT_EQ(repaired.status, 0) << repaired.out;
  EXPECT_NE(repaired.out.find("plume: warning: body 'LF_hip'"), std::string::npos) << repaired.out;
  EXPECT_NE(repaired.out.find("repaired"), std::string::npos) << repaired.out;
  EXPECT_EQ(run("bench " + lynx + " --inertia loose").status, 1);

  // The URDF alone, away from its package: found with --package-dir only.
  const std::string copy = std::string(::testing::TempDir()) + "/lynx_alone.urdf";
  std::ifstream src(lynx);
  std::ofstream(copy) << src.rdbuf();
  const CliRun lost = run("info " + copy + " --json 2>/dev/null");
  ASSERT_EQ(lost.status, 0) << lost.out;
  const json lost_info = json::parse(lost.out);
  for (const json& c : lost_info["collisions"]) {
    if (c["geometry"]["type"] == "mesh") {
      EXPECT_FALSE(c["usable_for_contact"].get<bool>()) << c;
    }
  }
  const CliRun found = run("info " + copy + " --json --package-dir /nonexistent --package-dir " + model("") + " 2>/dev/null");
  ASSERT_EQ(found.status, 0) << found.out;
  const json found_info = json::parse(found.out);
  for (const json& c : found_info["collisions"]) {
    if (c["geometry"]["type"] == "mesh") {
      EXPECT_TRUE(c["usable_for_contact"].get<bool>()) << c;
    }
  }
}
