// No heap allocation on the hot path: every dynamics algorithm, after Data is
// built, is run with a malloc counter armed.
//
// Eigen allocates through malloc (not operator new), so the counter
// interposes malloc itself: glibc's __libc_* entry points in a normal build,
// the sanitizer allocator hooks under AddressSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>

#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/derivatives.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/dynamics/constrained_derivatives.hpp"
#include "test_utils.hpp"

#include "alloc_counter.hpp"

using namespace plume;
using namespace plume::test;

namespace {

// Runs f with the counter armed; returns the number of allocations.
template <class F>
long allocations_in(F&& f) {
  g_allocations = 0;
  g_armed = true;
  f();
  g_armed = false;
  return g_allocations.load();
}

}  // namespace

TEST(Allocation, TheCounterSeesAllocations) {
  // Positive control: the counter must see an Eigen vector and a new.
  EXPECT_GE(allocations_in([] {
              VectorX x(100);
              x.setZero();
              EXPECT_EQ(x.sum(), 0.0);
            }),
            1);
  // The pointer escapes through a volatile, or clang -O3 elides the new/delete pair.
  static std::vector<double>* volatile escaped = nullptr;
  EXPECT_GE(allocations_in([] {
              escaped = new std::vector<double>(1000);
              delete escaped;
            }),
            1);
}

TEST(Allocation, NoneInTheDynamicsAlgorithms) {
  std::vector<Model> models;
  for (const auto& nm : all_models()) models.push_back(load_model(nm.file, nm.root));
  models.push_back(random_tree(77, 14));
  for (const Model& m : models) {
    SCOPED_TRACE(m.name());
    Data d(m);
    std::mt19937_64 g(1);
    const VectorX q = random_configuration(m, 1);
    const VectorX v = random_vector(g, m.nv());
    const VectorX a = random_vector(g, m.nv());
    VectorX x = random_vector(g, m.nv());
    VectorX qdot(m.nq());
    MatrixX X = MatrixX::Random(m.nv(), 4);
    MatrixX Xr = MatrixX::Random(5, m.nv());
    MatrixX Hinv(m.nv(), m.nv());
    Matrix6X J(6, m.nv()), J2(6, m.nv()), J3(6, m.nv());
    Matrix3X Jp(3, m.nv());
    std::vector<Force> fext(m.nbodies(), Force(Vec3(1, 2, 3), Vec3(4, 5, 6)));
    const int frame = static_cast<int>(m.frames().size()) - 1;
    const int body = m.nbodies() - 1;
    const long n = allocations_in([&] {
      // Checked entry points.
      forward_kinematics(m, d, q);
      forward_kinematics(m, d, q, v);
      forward_kinematics(m, d, q, v, a);
      update_frame_placements(m, d);
      rnea(m, d, q, v, a);
      rnea(m, d, q, v, a, fext);
      bias_forces(m, d, q, v);
      gravity_torques(m, d, q);
      crba(m, d, q);
      aba(m, d, q, v, a);
      aba(m, d, q, v, a, fext);
      ltdl(m, d);
      ltdl_solve(m, d, x);
      ltdl_solve_columns(m, d, X);
      ltdl_solve_Lt(m, d, X);
      ltdl_solve_rows(m, d, Xr);
      ltdl_inverse(m, d, Hinv);
      frame_jacobian(m, d, q, frame, ReferenceFrame::LocalWorldAligned, J);
      body_jacobian(m, d, q, body, ReferenceFrame::World, J);
      point_jacobian(m, d, q, body, Vec3(0.1, 0.2, 0.3), ReferenceFrame::LocalWorldAligned, Jp);
      frame_placement(m, d, q, frame);
      frame_position(m, d, q, frame);
      body_jacobian(m, d, body, ReferenceFrame::Local, J);
      point_jacobian(m, d, body, Vec3::Zero(), ReferenceFrame::LocalWorldAligned, Jp);
      frame_velocity_product(m, d, frame, ReferenceFrame::LocalWorldAligned);
      configuration_derivative(m, q, v, qdot);
      rnea_derivatives(m, d, q, v, a);
      aba_derivatives(m, d, q, v, a);
      kinematics_derivatives(m, d, q, v, a);
      frame_velocity_derivatives(m, d, frame, ReferenceFrame::LocalWorldAligned, J, J2);
      frame_acceleration_derivatives(m, d, frame, ReferenceFrame::Local, J, J2, J3);
      // Unchecked fast paths.
      unchecked::rnea(m, d, q, v, a);
      unchecked::bias_forces(m, d, q, v);
      unchecked::crba(m, d, q);
      unchecked::bias_forces_after_crba(m, d, v);
      unchecked::aba(m, d, q, v, a);
      unchecked::ltdl(m, d);
      unchecked::frame_jacobian(m, d, q, frame, ReferenceFrame::LocalWorldAligned, J);
      unchecked::rnea_derivatives(m, d, q, v, a);
      unchecked::aba_derivatives(m, d, q, v, a);
    });
    EXPECT_EQ(n, 0);
  }
}

TEST(Allocation, NoneInTheConstrainedDerivatives) {
  // The quadruped standing on its four feet (3-D sticking points on the leaves).
  const Model m = load_model("quadruped.urdf", urdf::RootJoint::FreeFlyer);
  std::vector<bool> has_child(m.nbodies(), false);
  for (int i = 1; i < m.nbodies(); ++i) has_child[m.parent(i)] = true;
  std::vector<PointConstraint> cs;
  for (int i = 1; i < m.nbodies(); ++i) {
    if (!has_child[i]) cs.push_back({i, Vec3(0.0, 0.0, -0.05), Mat3::Identity()});
  }
  ASSERT_EQ(cs.size(), 4u);
  ConstrainedDerivatives cd(m, cs);
  Data d(m);
  std::mt19937_64 g(3);
  const VectorX q = random_configuration(m, 3);
  const VectorX v = random_vector(g, m.nv());
  const VectorX tau = random_vector(g, m.nv());
  cd.compute(m, d, q, v, tau);  // warm: nothing grows on the second call either
  EXPECT_EQ(allocations_in([&] { cd.compute(m, d, q, v, tau); }), 0);
}
