// plume dynamics MODEL.urdf [--root …] --q … [--v …] [--tau … | --ddq …] [--derivatives] [--json]
#include <iomanip>
#include <iostream>

#include "cli_common.hpp"
#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/derivatives.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/configuration.hpp"
#include "plume/error.hpp"

namespace plume::cli {

namespace {

void print_matrix(const char* name, const MatrixX& M) {
  std::cout << name << " (" << M.rows() << "x" << M.cols() << "):\n";
  const Eigen::IOFormat fmt(Eigen::StreamPrecision, 0, "  ", "\n", "  ", "");
  std::cout << M.format(fmt) << "\n";
}

void print_vector(const char* name, const VectorX& x) {
  std::cout << name << " (" << x.size() << "):\n ";
  for (Eigen::Index i = 0; i < x.size(); ++i) std::cout << " " << x(i);
  std::cout << "\n";
}

}  // namespace

int run_dynamics(const DynamicsArgs& args) {
  const Model m = load_model(args.model, args.load, urdf::CollisionMeshes::Skip);  // dynamics only
  const std::string nq_what = "nq of model '" + m.name() + "'";
  const std::string nv_what = "nv of model '" + m.name() + "'";
  const VectorX q = parse_vector(args.q, "--q", m.nq(), nq_what);
  const VectorX v = args.v.empty() ? VectorX::Zero(m.nv()) : parse_vector(args.v, "--v", m.nv(), nv_what);
  if (!args.tau.empty() && !args.ddq.empty()) throw ArgumentError("give either --tau or --ddq, not both");
  check_configuration(m, q, "--q");
  check_vector(v, m.nv(), "--v");
  Data d(m);
  const MatrixX H = crba(m, d, q);
  const VectorX C = bias_forces(m, d, q, v);
  nlohmann::json out{{"model", m.name()}, {"nq", m.nq()}, {"nv", m.nv()}, {"H", to_json(H)}, {"C", to_json(C)}};
  VectorX ddq, tau;
  if (!args.tau.empty()) {
    tau = parse_vector(args.tau, "--tau", m.nv(), nv_what);
    check_vector(tau, m.nv(), "--tau");
    ddq = aba(m, d, q, v, tau);
    out["ddq"] = to_json(ddq);
    if (args.derivatives) {
      aba_derivatives(m, d, q, v, tau);
      out["dddq_dq"] = to_json(d.ddq_dq);
      out["dddq_dv"] = to_json(d.ddq_dv);
      out["dddq_dtau"] = to_json(d.Minv);
    }
  }
  if (!args.ddq.empty()) {
    ddq = parse_vector(args.ddq, "--ddq", m.nv(), nv_what);
    check_vector(ddq, m.nv(), "--ddq");
    tau = rnea(m, d, q, v, ddq);
    out["tau"] = to_json(tau);
    if (args.derivatives) {
      rnea_derivatives(m, d, q, v, ddq);
      out["dtau_dq"] = to_json(d.dtau_dq);
      out["dtau_dv"] = to_json(d.dtau_dv);
    }
  }
  if (args.json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << std::setprecision(10);
  std::cout << "model '" << m.name() << "': nq = " << m.nq() << ", nv = " << m.nv() << "\n";
  print_matrix("H, joint-space inertia", H);
  print_vector("C, bias forces (Coriolis, centrifugal, gravity)", C);
  if (!args.tau.empty()) print_vector("ddq, forward dynamics (ABA) for --tau", ddq);
  if (!args.ddq.empty()) print_vector("tau, inverse dynamics (RNEA) for --ddq", tau);
  if (args.derivatives) {
    std::cout << "derivatives: d/dq along the velocity coordinates (a free-flyer's body twist [dw; dv])\n";
    if (!args.ddq.empty()) {
      print_matrix("dtau_dq", d.dtau_dq);
      print_matrix("dtau_dv", d.dtau_dv);
    }
    if (!args.tau.empty()) {
      print_matrix("dddq_dq", d.ddq_dq);
      print_matrix("dddq_dv", d.ddq_dv);
      print_matrix("dddq_dtau = H^-1", d.Minv);
    }
  }
  return 0;
}

}  // namespace plume::cli
