#pragma once
/// @file
/// Data: every algorithm's workspace and results for one Model.
///
/// Build one Data per thread with `Data data(model)`; it sizes everything once,
/// and no algorithm on the hot path allocates afterwards. Fields are grouped
/// by the stage that fills them; each comment gives the shape and the function
/// that writes it. Spatial quantities of body i are in body-i coordinates
/// unless the name says otherwise (`X0`: world → body).

#include <cstdint>
#include <vector>

#include "plume/model.hpp"

namespace plume {

using RowMatrixX = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class Data {
 public:
  explicit Data(const Model& model);

  // ---- identity --------------------------------------------------------------
  std::uint64_t model_uid;  ///< Model::uid() of the model this Data was built for
  int nq, nv, nbodies;

  // ---- kinematics: forward_kinematics(), and the first pass of every algorithm ----
  std::vector<Transform> Xup;  ///< [nbodies] X_{i←λ(i)}, parent → body coordinates
  std::vector<Transform> X0;   ///< [nbodies] X_{i←0}, world → body coordinates (placement).
                               ///< Written by forward_kinematics() and by the passes in world
                               ///< axes (aba(), the derivatives); crba() and bias_forces() do
                               ///< not write it.
  Matrix6X S;                  ///< [6×nv] motion subspace columns, body coordinates
  std::vector<Motion> v;       ///< [nbodies] spatial velocity, body coordinates
  std::vector<Motion> a;       ///< [nbodies] spatial acceleration, body coordinates. From
                               ///< forward_kinematics: the true acceleration. rnea() starts
                               ///< from a fictitious base acceleration −g, so its a includes
                               ///< the gravity offset.
  std::vector<Transform> Xframe;  ///< [nframes] X_{frame←0} (update_frame_placements)

  // ---- world-aligned quantities ('o': world axes) --------------------------------
  // CRBA and ABA work with world axes, so that composite and articulated
  // inertias of children add to their parent's without transforms. Their
  // reference point is the origin of each subtree root (the child of the world
  // that carries the body), not the world origin, so a robot far from the
  // origin loses no accuracy.
  std::vector<Vec3> orel;        ///< [nbodies] body origin relative to its subtree root, world axes
  Matrix6X oS;                   ///< [6×nv] motion subspace columns, world axes
  std::vector<Motion> ov;        ///< [nbodies] spatial velocities (aba)
  std::vector<Motion> oa;        ///< [nbodies] spatial accelerations incl. −g offset (aba)
  std::vector<Motion> oc;        ///< [nbodies] velocity-product terms (aba); aba_derivatives: the
                                 ///< acceleration q̈ adds to each body (Δa)

  // ---- inverse dynamics: rnea(), bias_forces(), gravity_torques() --------------------
  std::vector<Force> f;  ///< [nbodies] net force transmitted by joint i, body coordinates
  VectorX tau;           ///< [nv] joint forces from rnea()
  VectorX C;             ///< [nv] bias forces C(q, q̇) from bias_forces()
  VectorX g;             ///< [nv] gravity torques from gravity_torques()

  // ---- joint-space inertia: crba() ------------------------------------------------
  std::vector<RigidInertia> Ic;   ///< [nbodies] composite inertia of each subtree, body coordinates
  Eigen::Matrix<double, 2, Eigen::Dynamic> qsc;  ///< [2×nbodies] workspace: sin and cos of revolute joint angles
  MatrixX H;                      ///< [nv×nv] joint-space inertia, both triangles
  Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor> Fc;  ///< [6×nv] workspace of crba: the
                                  ///< columns Ic_i S_k on their way up, row-major (a row's columns adjacent)

  // ---- forward dynamics: aba() -------------------------------------------------
  std::vector<Mat6> oIA;   ///< [nbodies] articulated-body inertias, world
  std::vector<Force> opA;  ///< [nbodies] articulated bias forces, world; aba_derivatives: workspace
                           ///< (the composite forces' q̈ terms from the children)
  Matrix6X U;              ///< [6×nv] IA S, world; aba_derivatives: the composite inertia's Yc S
  MatrixX Dinv;            ///< [nv×nv] block-diagonal (Sᵀ IA S)⁻¹ per joint
  VectorX u;               ///< [nv] τ − Sᵀ pA
  VectorX ddq;             ///< [nv] joint accelerations from aba()

  // ---- derivatives: rnea_derivatives(), aba_derivatives() (derivatives.hpp) ----------
  // ∂/∂q in the tangent space (nv columns; a free-flyer's body twist).
  MatrixX dtau_dq;  ///< [nv×nv] ∂τ/∂q of rnea at (q, q̇, q̈) (∂τ/∂q̈ is H)
  MatrixX dtau_dv;  ///< [nv×nv] ∂τ/∂q̇
  MatrixX ddq_dq;   ///< [nv×nv] ∂q̈/∂q of aba at (q, q̇, τ)
  MatrixX ddq_dv;   ///< [nv×nv] ∂q̈/∂q̇
  MatrixX Minv;     ///< [nv×nv] ∂q̈/∂τ = H⁻¹
  Matrix6X dVdq;    ///< [6×nv] workspace: ν × s per dof (ν the velocity the joint rides on)
  Matrix6X dAdq;    ///< [6×nv] workspace: α × s + ν × (ν × s) per dof
  Matrix6X dAdv;    ///< [6×nv] workspace: ∂ of the velocity-product terms per dof
  std::vector<RigidInertia> oYc;  ///< [nbodies] composite inertia of each subtree, world axes
  std::vector<Mat3> oBc;   ///< [nbodies] composite B11 of each subtree: B = ∂(v ×* I v)/∂v = [B11 0; −2 p× 0]
  std::vector<Vec3> opc;   ///< [nbodies] composite linear momentum p of each subtree (B's lower block)
  std::vector<Force> oFc;  ///< [nbodies] net force transmitted by each joint, world axes

  // ---- sparse factorisation H = Lᵀ D L: ltdl() (RBDA §6.5) ----------------------
  RowMatrixX LD;  ///< [nv×nv] L strictly below the diagonal (branch-induced pattern), D on it
  VectorX ltdl_tmp;  ///< [nv] workspace of the solves

  // ---- Jacobians (results are the caller's: see jacobians.hpp) ---------------------
  std::vector<int> chain;  ///< [nbodies] workspace: a support chain, leaf first

  // ---- energy and momentum: energy.hpp ------------------------------------------
  Vec3 com = Vec3::Zero();  ///< centre of mass of the whole model, world coordinates
  double kinetic = 0.0;     ///< kinetic energy from kinetic_energy()
  double potential = 0.0;   ///< potential energy from potential_energy()
};

/// Throws plume::Error unless `data` was built for `model`.
void check_data(const Model& model, const Data& data);

}  // namespace plume
