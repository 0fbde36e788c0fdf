#pragma once
/// @file
/// Contact Jacobians: the columns t_i of T (eq. 11.25), the velocity-product
/// terms ṫ_iᵀq̇ (eq. 11.30), and the same for friction directions.
///
/// For contact i between bodies a and b with unit normal n (world, a → b)
/// and witness points p_a, p_b:
///
///     t_i = (J_bᵀ − J_aᵀ) n_i,   n_i = [p × n; n]                        (11.25)
///
/// with J the world-coordinate body Jacobians and n_i the spatial force of a
/// unit force along the normal through the contact point. So
/// ζ_i = t_iᵀq̇ = n·(u_b(p_b) − u_a(p_a)) = φ̇_i (11.28, 11.38), where u_k(p)
/// is the velocity of the point of body k at p. Differentiating once more at
/// q̈ = 0 gives (11.30)
///
///     ṫ_iᵀq̇ = n_i·(a^vp_b − a^vp_a) + ṅ_i·(v_b − v_a)
///           = ṅ·(u_b(p_b) − u_a(p_a)) + n·(α_b(p_b) − α_a(p_a))
///             + n·(ω_b × (ṗ_b − u_b(p_b)) − ω_a × (ṗ_a − u_a(p_a)))
///
/// where α_k(p) is the acceleration of the body point at p with q̈ = 0, ṅ the
/// rate of the normal and ṗ the motion of the witness points along the
/// surfaces (both from the contact's features, see FeaturePair). So
/// φ̈_i = t_iᵀq̈ + ṫ_iᵀq̇ (11.29, 11.40). A friction direction d gives the
/// same with d in place of n (the sliding velocity dᵀ(u_b − u_a)).
///
/// All functions here write into caller-sized outputs and do not allocate.

#include <vector>

#include "plume/contact/detection.hpp"

namespace plume {

/// The state and rates of one contact at the current placements and velocities.
struct ContactKinematics {
  double gap = 0.0;                  ///< φ
  double gap_rate = 0.0;             ///< φ̇ = tᵀq̇
  Vec3 normal = Vec3::UnitZ();       ///< n, world, a → b
  Vec3 normal_rate = Vec3::Zero();   ///< ṅ
  Vec3 point_a = Vec3::Zero(), point_b = Vec3::Zero();            ///< witness points, world
  Vec3 point_a_rate = Vec3::Zero(), point_b_rate = Vec3::Zero();  ///< their motion
  Vec3 velocity_a = Vec3::Zero();    ///< u_a(p_a): velocity of the point of a at p_a
  Vec3 velocity_b = Vec3::Zero();    ///< u_b(p_b)
};

/// Gap, normal, witness points and their rates for a shape contact.
/// Joint limits: gap and gap_rate only (normal stays +x).
/// @pre forward_kinematics(model, data, q, v) (data.X0, data.v).
ContactKinematics contact_kinematics(const Model& model, const Data& data, const Contact& contact);

/// T (nv × nc) and Ṫᵀq̇ (nc): column i is t_i (11.25), entry i is ṫ_iᵀq̇ (11.30).
/// Joint limits: t_i = ±e_dof, ṫ_iᵀq̇ = 0.
/// @pre forward_kinematics(model, data, q, v, VectorX::Zero(nv)), so that
/// data.v holds the velocities and data.a the velocity-product accelerations.
/// @throws ArgumentError on output sizes other than nv × nc and nc.
void contact_jacobian(const Model& model, const Data& data, const std::vector<Contact>& contacts,
                      Eigen::Ref<MatrixX> T, Eigen::Ref<VectorX> Tdot_v);

/// Orthonormal tangents t1, t2 of a unit normal n, with t1 × t2 = n, and
/// their rates for a normal moving at ṅ. A smooth function of n except on
/// the cone n_z = −1/2 where it switches between two charts (Frisvad's
/// construction about +z for n_z ≥ −1/2, its mirror image about −z below), so
/// ground contacts (n ≈ +z) and walls (n_z ≈ 0) are far from the switch.
void tangent_basis(const Vec3& n, Vec3& t1, Vec3& t2);
void tangent_basis(const Vec3& n, const Vec3& ndot, Vec3& t1, Vec3& t2, Vec3& t1dot, Vec3& t2dot);

/// Friction directions, `directions` per contact, world coordinates, in a
/// 3 × (directions·nc) matrix: directions = 2 gives (t1, t2) of
/// tangent_basis(); directions = k ≥ 4 gives the polyhedral cone
/// d_j = cos(2πj/k) t1 + sin(2πj/k) t2, j = 0 … k−1. Joint limits get zero
/// columns (no friction).
/// @throws ArgumentError on directions ∉ {2, 4, 5, …} or a wrong output size.
void contact_tangents(const std::vector<Contact>& contacts, int directions, Eigen::Ref<Matrix3X> D);

/// (cos, sin) of the polyhedral cone's direction j of k, 2πj/k, with quarter
/// turns exactly 0 and ±1: a direction along t2 has no rounding part along
/// t1, which on a planar model (t2 immobile) Lemke's scaling would blow up.
/// (Other opposite pairs are left as cos/sin round them: made exact
/// negatives, their ties defeated the kept-basis repair.)
/// @throws ArgumentError on k < 1.
Eigen::Vector2d cone_direction(int k, int j);

/// The tangential counterpart of contact_jacobian(): D (nv × directions·nc),
/// column (i, j) = (J_b(p_b)ᵀ − J_a(p_a)ᵀ) d_ij, the Jacobian of the sliding
/// velocity d_ijᵀ(u_b(p_b) − u_a(p_a)), and Ddot_v (directions·nc), its rate
/// at q̈ = 0, including ḋ from the motion of the normal. The directions
/// match contact_tangents() at the current placements.
/// @pre forward_kinematics(model, data, q, v, VectorX::Zero(nv)).
/// @throws ArgumentError on a bad `directions` or wrong output sizes.
void tangent_jacobian(const Model& model, const Data& data, const std::vector<Contact>& contacts, int directions,
                      Eigen::Ref<MatrixX> D, Eigen::Ref<VectorX> Ddot_v);

/// contact_jacobian() and tangent_jacobian() with two directions in one pass:
/// each contact's kinematics is evaluated once and its three columns
/// (n, t1, t2) are accumulated together along the support chains. T is
/// nv × nc, Tdot_v nc, D nv × 2nc, Ddot_v 2nc; the same values as the two
/// calls up to rounding. This is the form the simulators use.
/// @pre forward_kinematics(model, data, q, v, VectorX::Zero(nv)); or, with
/// `after_bias_forces`, the placements at q (forward_kinematics(model, data,
/// q); crba() does not write them) followed by bias_forces(model, data, q, v)
/// or unchecked::bias_forces_after_crba, whose accelerations include the
/// base's −g: it is taken out here, which saves a kinematics pass per
/// evaluation.
/// @throws ArgumentError on wrong output sizes.
void contact_jacobians(const Model& model, const Data& data, const std::vector<Contact>& contacts,
                       Eigen::Ref<MatrixX> T, Eigen::Ref<VectorX> Tdot_v, Eigen::Ref<MatrixX> D,
                       Eigen::Ref<VectorX> Ddot_v, bool after_bias_forces = false);

/// contact_jacobians() with the columns of axis-aligned revolute and
/// prismatic joints formed in world coordinates: a revolute dof's entry of
/// the unit force d at p is d·(a × (p − r)) (a, r: the joint's world axis and
/// origin), a prismatic one's d·a. The same values up to rounding, fewer
/// products; the other joint kinds and Tdot_v, Ddot_v as contact_jacobians().
void contact_jacobians_world(const Model& model, const Data& data, const std::vector<Contact>& contacts,
                             Eigen::Ref<MatrixX> T, Eigen::Ref<VectorX> Tdot_v, Eigen::Ref<MatrixX> D,
                             Eigen::Ref<VectorX> Ddot_v, bool after_bias_forces = false);

}  // namespace plume
