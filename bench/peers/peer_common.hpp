#pragma once
// Shared by the translation units of peer_compare: the test case (a model and
// its seeded states, in plume's conventions), the interface each peer adapter
// implements, the free-flyer coordinate maps and the timing loop.
//
// Every adapter converts plume's states into its own conventions once, up
// front (so the timings contain no conversion), and converts what it computes
// back into plume's conventions for the cross-checks.

#include <algorithm>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "plume/model.hpp"

namespace plume::peers {

/// The quantities compared and timed.
enum class Algo { Rnea, Bias, Crba, Aba, Jacobian };
constexpr Algo kAlgos[] = {Algo::Rnea, Algo::Bias, Algo::Crba, Algo::Aba, Algo::Jacobian};

inline const char* to_string(Algo a) {
  switch (a) {
    case Algo::Rnea: return "rnea";
    case Algo::Bias: return "bias_forces";
    case Algo::Crba: return "crba";
    case Algo::Aba: return "aba";
    case Algo::Jacobian: return "frame_jacobian";
  }
  return "?";
}

/// One model and its states, all in plume's conventions: free-flyer
/// q = [p; quat (x, y, z, w)], v = [ω; v] in the body frame, a = v̇ (the time
/// derivative of those body-frame components), τ dual to v.
struct Case {
  std::string label;      ///< "arm7", "quadruped", "humanoid"
  std::string urdf_path;  ///< the file every library loads
  bool floating = false;  ///< root attached by a free-flyer (else welded)
  std::string frame;      ///< link whose Jacobian is compared and timed
  const Model* model = nullptr;
  std::vector<VectorX> q, v, a, tau;
  int nstates() const { return static_cast<int>(q.size()); }
};

/// A peer library loaded with the same URDF. Results are returned in plume's
/// conventions (joint order, free-flyer coordinates) for state k of the Case.
class Peer {
 public:
  virtual ~Peer() = default;
  virtual const char* name() const = 0;
  virtual MatrixX mass_matrix(int k) = 0;          ///< H(q)
  virtual VectorX bias(int k) = 0;                 ///< C(q, v), gravity included
  virtual VectorX inverse_dynamics(int k) = 0;     ///< τ = H a + C
  virtual VectorX forward_dynamics(int k) = 0;     ///< q̈ = H⁻¹(τ − C)
  virtual Matrix6X frame_jacobian(int k) = 0;      ///< [ω; v] of the frame origin, world axes
  /// Mean CPU time [ns] of one call of `algo`'s chain, over `calls` calls
  /// cycling through the states (after a warm-up), each from a fresh state.
  virtual double time(Algo algo, long calls) = 0;
};

/// nullptr (and the reason in *why) when the peer cannot load the case.
std::unique_ptr<Peer> make_mujoco_peer(const Case& c, std::string* why);
std::unique_ptr<Peer> make_dart_peer(const Case& c, std::string* why);

/// plume's own timings: `checked` selects plume::f over plume::unchecked::f.
double time_plume(const Case& c, Algo algo, bool checked, long calls);

// ---- coordinate maps ------------------------------------------------------------

/// Body-to-world rotation of the free-flyer at the start of q (x, y, z, w).
inline Mat3 free_flyer_rotation(const VectorX& q) {
  return Eigen::Quaterniond(q(6), q(3), q(4), q(5)).normalized().toRotationMatrix();
}

/// The linear map of velocities v_peer = P v_plume for one configuration, and
/// the offset of accelerations a_peer = P a_plume + offset (non-zero only when
/// the peer's velocity coordinates are not body-frame components).
///
/// `joint_dof[i]` is the peer's velocity index of plume's 1-dof joint at
/// v index i (entries of the free-flyer block ignored). For a free-flyer the
/// block is either the identity (peer also uses [ω; v] in the body frame) or,
/// with `world_linear`, MuJoCo's [R v; ω] (world-frame linear velocity of the
/// body origin, then body-frame ω), whose derivative is [R(v̇ + ω × v); ω̇].
/// P is orthogonal in both cases, so generalised forces map as
/// τ_peer = P τ_plume and back as τ_plume = Pᵀ τ_peer.
struct VelocityMap {
  MatrixX P;
  VectorX acc_offset;
};

inline VelocityMap make_velocity_map(const Case& c, const std::vector<int>& joint_dof, bool world_linear,
                                     int peer_free_dof, const VectorX& q, const VectorX& v) {
  const int nv = c.model->nv();
  VelocityMap m{MatrixX::Zero(nv, nv), VectorX::Zero(nv)};
  int first_joint = 0;
  if (c.floating) {
    first_joint = 6;
    const int f = peer_free_dof;
    if (world_linear) {
      const Mat3 R = free_flyer_rotation(q);
      m.P.block<3, 3>(f, 3) = R;                        // world linear velocity = R v
      m.P.block<3, 3>(f + 3, 0) = Mat3::Identity();     // body angular velocity
      m.acc_offset.segment<3>(f) = R * v.head<3>().cross(v.segment<3>(3));
    } else {
      m.P.block<6, 6>(f, 0).setIdentity();
    }
  }
  for (int i = first_joint; i < nv; ++i) m.P(joint_dof[i], i) = 1.0;
  return m;
}

// ---- timing ---------------------------------------------------------------------

/// CPU time of the calling thread [ns]. On a machine shared with other jobs
/// it excludes the time slices given to them (wall time would not).
inline double thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e9 * static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec);
}

/// Mean CPU ns per call of f(k), k cycling through 0 … n−1, after a warm-up
/// of max(1000, calls/10) calls.
template <class F>
double mean_ns(long calls, int n, F&& f) {
  const long warm = std::max(1000L, calls / 10);
  int k = 0;
  for (long i = 0; i < warm; ++i) {
    f(k);
    if (++k == n) k = 0;
  }
  k = 0;
  const double t0 = thread_cpu_ns();
  for (long i = 0; i < calls; ++i) {
    f(k);
    if (++k == n) k = 0;
  }
  return (thread_cpu_ns() - t0) / static_cast<double>(calls);
}

}  // namespace plume::peers
