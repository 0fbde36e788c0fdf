#pragma once
// The event-driven scheme integrates each free-flyer in a local chart of its
// configuration at the last restart (the base (p_b, R_b)), instead of its
// quaternion and body-frame linear velocity:
//
//   p = p_b + R_b δp,   R = R_b exp(δθ),   v_lin = exp(δθ)ᵀ u,
//   δṗ = u,   δθ̇ = J_r(δθ)⁻¹ ω,   u̇ = exp(δθ) (v̇_lin + ω × v_lin),
//
// so u is the linear velocity in the base frame. In a free flight under
// gravity u is linear and δp quadratic in t, and where ω is constant
// (spherical inertia, or a spin about a principal axis) δθ = ω t: the
// integrator's polynomial steps then follow the flight to round-off, where
// the quaternion (sines and cosines of ωt/2) and the body-frame velocity
// (rotating with the body) carried an error of the order of the tolerance.
// Outside, the stepper looks as before: states are (q, v) with unit
// quaternions, equal to the state handed to initialize() at its time.
// The event-driven scheme uses the chart in every phase, flight and
// contact (set_active(false) integrates (q, v) directly).
#include <memory>
#include <utility>
#include <vector>

#include "plume/model.hpp"
#include "sim/dense_stepper.hpp"

namespace plume::detail {

class FreeFlyerChart final : public DenseStepper {
 public:
  FreeFlyerChart(std::unique_ptr<DenseStepper> inner, const Model& model);
  /// Whether the model has a free-flyer joint (otherwise the chart is the identity).
  static bool applies_to(const Model& model);
  /// From the next initialize() on: the chart (true) or the plain (q, v) state (false).
  void set_active(bool active) { next_active_ = active; }

  void initialize(const VectorX& y, double t, double dt) override;
  std::pair<double, double> do_step(OdeSystem& system) override;
  void calc_state(double t, VectorX& y) override;
  const VectorX& current_state() const override { return current_; }
  double current_time() const override { return inner_->current_time(); }
  double previous_time() const override { return inner_->previous_time(); }
  double current_time_step() const override { return inner_->current_time_step(); }

 private:
  static constexpr double kRebaseAngle = 1.0;  // [rad]
  struct FreeFlyerJoint {
    int q, v;
    Mat3 base_rotation;
  };
  void rebase(double t, double dt);
  void to_state(const VectorX& z, VectorX& y) const;
  void chart_rhs(const VectorX& z, VectorX& dz, double t);

  std::unique_ptr<DenseStepper> inner_;
  int nq_, nv_;
  std::vector<FreeFlyerJoint> joints_;
  VectorX base_, z_, current_, y_, dy_;
  OdeSystem inner_system_;
  OdeSystem* outer_ = nullptr;
  bool active_ = true, next_active_ = true;
};

}  // namespace plume::detail
