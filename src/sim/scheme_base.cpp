// What the time-stepping and compliant schemes share (scheme_base.hpp).
#include "sim/scheme_base.hpp"

#include <cmath>

#include "plume/algorithms/energy.hpp"
#include "plume/configuration.hpp"
#include "plume/error.hpp"

namespace plume::detail {

SchemeBase::SchemeBase(World w, const SimulationOptions& o, double detection_margin)
    : world_(std::move(w)), opt_(o), data_(world_.model()), cat_(world_, detection_margin) {
  validate_scheme_options(opt_);
  const Model& m = world_.model();
  q_ = world_.q0();
  v_ = world_.v0();
  tau_ = VectorX::Zero(m.nv());
}

void SchemeBase::set_controller(ControllerFunction f, double period) {
  controller_ = std::move(f);
  period_ = period;
  next_sample_ = t_;
}

SimulationResult SchemeBase::run_until(double until, Recorder* recorder) {
  const auto wall0 = std::chrono::steady_clock::now();
  SimulationResult result;
  rec_ = recorder;
  try {
    if (advance(until, result)) {
      // The output at the end time when the last step stopped within rounding
      // of it or was cut there (the loop's end then skips the sample, and its
      // contacts with it).
      if (rec_ && opt_.output_rate > 0 && next_output_ <= t_) {
        record_current();
        next_output_ = std::round((next_output_ + 1.0 / opt_.output_rate) * opt_.output_rate) / opt_.output_rate;
      }
      result.status = SimulationStatus::Finished;
      result.message = "finished at t = " + fmt(t_);
    }
  } catch (const Error& e) {
    fail(result, SimulationStatus::Failed, "at t = " + fmt(t_) + ": " + e.what() + contact_summary());
  }
  return finish(result, wall0);
}

double SchemeBase::energy_of(const VectorX& q, const VectorX& v) {
  qn_ = q;
  normalize_configuration(model(), qn_);
  return mechanical_energy(model(), data_, qn_, v);
}

bool SchemeBase::sample_controller_at(const VectorX& q, SimulationResult& result) {
  next_sample_ = t_ + period_;
  return sample_controller_checked(model(), opt_, controller_, t_, q, v_, tau_, result);
}

void SchemeBase::emit(double time, EventKind kind, const Contact& c, double pre, double post, double impulse) {
  ++stats_.events;
  if (rec_) {
    rec_->event({time, kind, cat_.name_of(model(), c), model().body_name(c.body_a), model().body_name(c.body_b), pre,
                 post, impulse});
  }
}

bool SchemeBase::fail(SimulationResult& result, SimulationStatus status, const std::string& message) {
  result.status = status;
  result.message = message;
  return false;
}

SimulationResult SchemeBase::finish(SimulationResult& result, std::chrono::steady_clock::time_point wall0) {
  result.time = t_;
  stats_.energy_end = energy_of(q_, v_);
  stats_.wall_time += seconds_since(wall0);
  result.statistics = stats_;
  rec_ = nullptr;
  return result;
}

}  // namespace plume::detail
