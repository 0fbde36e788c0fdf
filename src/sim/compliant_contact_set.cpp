// The compliant scheme's contact set: at a commit, the phases (touching,
// relaxing) and tangential spring states of the tracked contacts are
// committed, their switches reported, and the tracked set brought up to date
// with detection (new contacts start on a rested patch; a touching contact
// whose feature changed hands its spring state to its successor).
#include "sim/compliant_scheme.hpp"

#include <utility>

#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/kinematics.hpp"
#include "plume/configuration.hpp"
#include "plume/contact/contact_jacobian.hpp"

namespace plume::detail {

// At (t_, q_, v_, x_): commit the phases and the spring states, report the
// switches, and bring the tracked set up to date with detection (new
// contacts start on a rested patch; a touching contact whose feature
// changed hands its spring state to its successor of the same pair).
bool CompliantScheme::commit(double t_lo, bool dense_valid) {
  const Model& m = model();
  locate_mode_switches(t_lo, dense_valid);
  auto kinematics = [&]() {
    qn_ = q_;
    normalize_configuration(m, qn_);
    unchecked::forward_kinematics(m, data_, qn_, v_);
  };
  std::vector<CompliantPhase> before(contacts_.size());
  for (std::size_t i = 0; i < contacts_.size(); ++i) before[i] = state_.record(i).phase;
  kinematics();
  state_.update(m, data_, qn_, contacts_, params_, x_, t_);
  x_ = state_.displacements();
  bool changed = false;
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    const CompliantPhase now = state_.record(i).phase;
    if (now == before[i]) continue;
    changed = true;
    const double rate = contact_kinematics(m, data_, contacts_[i]).gap_rate;
    // An undamped contact that sat exactly on its surface at the step's
    // start (f_n = K·0 = 0, so the commit there left it relaxing) has pushed
    // since then: it touched at the step's start.
    const bool since_start = now == CompliantPhase::Touching && i < on_surface_at_start_.size() && on_surface_at_start_[i];
    emit(since_start ? t_lo : t_, now == CompliantPhase::Touching ? EventKind::ContactGain : EventKind::ContactLoss,
         contacts_[i], rate, rate, 0.0);
  }
  on_surface_at_start_.clear();
  // The tracked set: everything detected within the margin, plus touching
  // contacts detection no longer reports (kept until they let go).
  detect(q_, found_);
  std::vector<Contact> next;
  std::vector<int> from;  // tracked index or −1 (new)
  for (const Contact& c : found_) {
    next.push_back(c);
    from.push_back(tracked_index(c.id));
  }
  std::vector<int> orphans;  // touching contacts whose feature disappeared
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    bool present = false;
    for (const Contact& c : found_) present |= c.id == contacts_[i].id;
    if (!present && state_.record(i).phase == CompliantPhase::Touching) orphans.push_back(static_cast<int>(i));
  }
  bool same = next.size() == contacts_.size();
  for (std::size_t k = 0; same && k < next.size(); ++k) same = from[k] == static_cast<int>(k);
  if (same && orphans.empty()) {
    refresh_view();
    return changed;
  }
  // Hand-over: a new contact of the same shape pair takes an orphan's spring.
  std::vector<Eigen::Vector2d> inherited(next.size(), Eigen::Vector2d::Zero());
  std::vector<bool> heir(next.size(), false);
  std::vector<bool> orphan_done(orphans.size(), false);
  for (std::size_t k = 0; k < next.size(); ++k) {
    if (from[k] >= 0 || next[k].kind != ContactKind::Shapes) continue;
    for (std::size_t o = 0; o < orphans.size(); ++o) {
      const Contact& old = contacts_[static_cast<std::size_t>(orphans[o])];
      if (orphan_done[o] || old.kind != ContactKind::Shapes || old.pair != next[k].pair) continue;
      inherited[k] = x_.segment<2>(2 * orphans[o]);
      heir[k] = true;
      orphan_done[o] = true;
      break;
    }
  }
  for (std::size_t o = 0; o < orphans.size(); ++o) {
    if (orphan_done[o]) continue;
    // Lost by geometry while pushing (e.g. rolling off an edge).
    const Contact& old = contacts_[static_cast<std::size_t>(orphans[o])];
    emit(t_, EventKind::ContactLoss, old, 0.0, 0.0, 0.0);
  }
  std::vector<CompliantPhase> next_before(next.size(), CompliantPhase::Relaxing);
  for (std::size_t k = 0; k < next.size(); ++k) {
    if (from[k] >= 0) next_before[k] = state_.record(static_cast<std::size_t>(from[k])).phase;
  }
  contacts_ = next;
  // Tracked contacts keep their parameters (a limit's damping, set from its
  // joint's inertia when it was first tracked, does not jump when other
  // contacts come and go); new ones take theirs at q.
  std::vector<CompliantParameters> kept;
  kept.swap(params_);
  bool new_limit = false;
  for (std::size_t k = 0; k < next.size(); ++k) new_limit |= from[k] < 0 && next[k].kind == ContactKind::JointLimit;
  if (new_limit) crba(m, data_, qn_);  // the new limits' joint inertias at q (placements untouched)
  for (std::size_t k = 0; k < next.size(); ++k) {
    const Contact& c = next[k];
    if (from[k] >= 0) {
      params_.push_back(kept[static_cast<std::size_t>(from[k])]);
    } else {
      params_.push_back(parameters_of(c, c.kind == ContactKind::JointLimit ? data_.H(c.dof, c.dof) : 0.0));
    }
  }
  state_.synchronize(contacts_);
  x_ = state_.displacements();
  for (std::size_t k = 0; k < next.size(); ++k) {
    if (heir[k]) x_.segment<2>(2 * static_cast<Eigen::Index>(k)) = inherited[k];
  }
  // Commit the new contacts' phases (a contact found inside the surface
  // touches at once when it approaches).
  kinematics();
  state_.update(m, data_, qn_, contacts_, params_, x_, t_);
  x_ = state_.displacements();
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const CompliantPhase now = state_.record(k).phase;
    if (now == next_before[k] || heir[k]) continue;
    const double rate = contact_kinematics(m, data_, contacts_[k]).gap_rate;
    emit(t_, now == CompliantPhase::Touching ? EventKind::ContactGain : EventKind::ContactLoss, contacts_[k], rate, rate, 0.0);
  }
  refresh_view();
  return true;
}

// Every contact within the tracking margin at q (placements left in data_).
void CompliantScheme::detect(const VectorX& q, std::vector<Contact>& out) {
  qn_ = q;
  normalize_configuration(model(), qn_);
  cat_.detect(model(), data_, qn_, tracking_margin(opt_), opt_.joint_limits, out);
}

int CompliantScheme::tracked_index(std::uint64_t id) const {
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    if (contacts_[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

void CompliantScheme::refresh_view() {
  touching_view_.clear();
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    if (state_.record(i).phase == CompliantPhase::Touching) touching_view_.push_back(contacts_[i]);
  }
}

}  // namespace plume::detail
