// DART (6.12) adapter of peer_compare.
//
// Loading: dart::utils::DartLoader on the URDF text with its <dynamics>
// elements removed (DART's forward dynamics would otherwise add joint damping;
// plume's H, C, RNEA and ABA have none); the root joint is a FreeJoint for the
// floating models and a WeldJoint for the fixed ones (DartLoader's
// RootJointType). Fixed URDF joints become WeldJoints: separate BodyNodes
// whose inertia moves with their parent, as in plume's merge.
//
// Conventions: FreeJoint positions = [log(R) (exponential coordinates); p],
// made with FreeJoint::convertToPositions from plume's (p, quaternion);
// velocities = [ω; v] of the body in its own frame, accelerations their
// derivatives, forces dual to them: plume's own free-flyer convention. Other
// joints are matched by name.
//
// DART caches H, C and the kinematics and invalidates them only in
// setPositions/setVelocities — and those return early when the new values
// equal the old ones. Every timed call therefore starts with setPositions and
// setVelocities of the next of the (distinct, random) states.
#include <dart/dynamics/BodyNode.hpp>
#include <dart/dynamics/FreeJoint.hpp>
#include <dart/dynamics/Skeleton.hpp>
#include <dart/dynamics/WeldJoint.hpp>
#include <dart/utils/urdf/DartLoader.hpp>
#include <benchmark/benchmark.h>
#include <tinyxml2.h>

#include <fstream>
#include <sstream>

#include "peer_common.hpp"

namespace plume::peers {

namespace {

/// The URDF text without <dynamics> elements.
std::string urdf_for_dart(const std::string& path, std::string* why) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  tinyxml2::XMLDocument doc;
  if (!in || doc.Parse(text.data(), text.size()) != tinyxml2::XML_SUCCESS || !doc.FirstChildElement("robot")) {
    *why = "cannot read " + path;
    return {};
  }
  tinyxml2::XMLElement* robot = doc.FirstChildElement("robot");
  for (tinyxml2::XMLElement* j = robot->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
    while (tinyxml2::XMLElement* d = j->FirstChildElement("dynamics")) j->DeleteChild(d);
  }
  tinyxml2::XMLPrinter printer;
  doc.Print(&printer);
  return printer.CStr();
}

class DartPeer final : public Peer {
 public:
  DartPeer(const Case& c, dart::dynamics::SkeletonPtr skel, std::vector<int> joint_dof, int free_dof,
           dart::dynamics::BodyNode* body)
      : c_(c), skel_(std::move(skel)), joint_dof_(std::move(joint_dof)), free_dof_(free_dof), body_(body) {
    const Model& m = *c.model;
    for (int k = 0; k < c.nstates(); ++k) {
      maps_.push_back(make_velocity_map(c, joint_dof_, false, free_dof_, c.q[k], c.v[k]));
      const VelocityMap& vm = maps_.back();
      Eigen::VectorXd pos = Eigen::VectorXd::Zero(m.nv());
      if (c.floating) {
        Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
        T.linear() = free_flyer_rotation(c.q[k]);
        T.translation() = c.q[k].head<3>();
        pos.segment<6>(free_dof_) = dart::dynamics::FreeJoint::convertToPositions(T);
      }
      for (int j = 1; j < m.nbodies(); ++j) {
        const Joint& jt = m.joint(j);
        if (jt.nv == 1) pos(joint_dof_[jt.v_index]) = c.q[k](jt.q_index);
      }
      pos_.push_back(pos);
      vel_.push_back(vm.P * c.v[k]);
      acc_.push_back(vm.P * c.a[k] + vm.acc_offset);
      frc_.push_back(vm.P * c.tau[k]);
    }
  }

  const char* name() const override { return "DART"; }

  MatrixX mass_matrix(int k) override {
    set_state(k);
    return maps_[k].P.transpose() * skel_->getMassMatrix() * maps_[k].P;
  }
  VectorX bias(int k) override {
    set_state(k);
    return maps_[k].P.transpose() * skel_->getCoriolisAndGravityForces();
  }
  VectorX inverse_dynamics(int k) override {
    set_state(k);
    skel_->setAccelerations(acc_[k]);
    skel_->computeInverseDynamics(false, false, false);
    return maps_[k].P.transpose() * skel_->getForces();
  }
  VectorX forward_dynamics(int k) override {
    set_state(k);
    skel_->setForces(frc_[k]);
    skel_->computeForwardDynamics();
    return maps_[k].P.transpose() * (skel_->getAccelerations() - maps_[k].acc_offset);
  }
  Matrix6X frame_jacobian(int k) override {
    set_state(k);
    // Targets the BodyNode's origin, expressed in world coordinates: [ω; v].
    return skel_->getJacobian(body_, dart::dynamics::Frame::World()) * maps_[k].P;
  }

  double time(Algo algo, long calls) override {
    const int n = c_.nstates();
    switch (algo) {
      case Algo::Rnea:
        return mean_ns(calls, n, [this](int k) {
          set_state(k);
          skel_->setAccelerations(acc_[k]);
          skel_->computeInverseDynamics(false, false, false);
          benchmark::DoNotOptimize(skel_->getForces().data());
        });
      case Algo::Bias:
        return mean_ns(calls, n, [this](int k) {
          set_state(k);
          benchmark::DoNotOptimize(skel_->getCoriolisAndGravityForces().data());
        });
      case Algo::Crba:
        return mean_ns(calls, n, [this](int k) {
          set_state(k);
          benchmark::DoNotOptimize(skel_->getMassMatrix().data());
        });
      case Algo::Aba:
        return mean_ns(calls, n, [this](int k) {
          set_state(k);
          skel_->setForces(frc_[k]);
          skel_->computeForwardDynamics();
          benchmark::DoNotOptimize(skel_->getAccelerations().data());
        });
      case Algo::Jacobian:
        return mean_ns(calls, n, [this](int k) {
          set_state(k);
          const dart::math::Jacobian J = skel_->getJacobian(body_, dart::dynamics::Frame::World());
          benchmark::DoNotOptimize(J.data());
        });
    }
    return 0.0;
  }

 private:
  void set_state(int k) {
    skel_->setPositions(pos_[k]);
    skel_->setVelocities(vel_[k]);
  }

  const Case& c_;
  dart::dynamics::SkeletonPtr skel_;
  std::vector<int> joint_dof_;  // by plume v index
  int free_dof_;
  dart::dynamics::BodyNode* body_;
  std::vector<VelocityMap> maps_;
  std::vector<Eigen::VectorXd> pos_, vel_, acc_, frc_;
};

}  // namespace

std::unique_ptr<Peer> make_dart_peer(const Case& c, std::string* why) {
  const std::string text = urdf_for_dart(c.urdf_path, why);
  if (text.empty()) return nullptr;
  using dart::utils::DartLoader;
  DartLoader::Options options;
  options.mDefaultRootJointType = c.floating ? DartLoader::RootJointType::FLOATING : DartLoader::RootJointType::FIXED;
  DartLoader loader(options);
  dart::dynamics::SkeletonPtr skel =
      loader.parseSkeletonString(text, dart::common::Uri::createFromPath(c.urdf_path));
  if (!skel) {
    *why = "DartLoader could not parse " + c.urdf_path;
    return nullptr;
  }
  const Model& m = *c.model;
  skel->setGravity(m.gravity());
  if (static_cast<int>(skel->getNumDofs()) != m.nv()) {
    *why = "DART has " + std::to_string(skel->getNumDofs()) + " dofs, plume " + std::to_string(m.nv());
    return nullptr;
  }
  for (std::size_t i = 0; i < skel->getNumDofs(); ++i) {
    const dart::dynamics::DegreeOfFreedom* dof = skel->getDof(i);
    if (dof->getDampingCoefficient() != 0.0 || dof->getSpringStiffness() != 0.0) {
      *why = "DART dof '" + dof->getName() + "' has damping or stiffness";
      return nullptr;
    }
  }
  dart::dynamics::Joint* root = skel->getRootJoint();
  const bool root_ok = c.floating ? dynamic_cast<dart::dynamics::FreeJoint*>(root) != nullptr
                                  : dynamic_cast<dart::dynamics::WeldJoint*>(root) != nullptr;
  if (!root_ok) {
    *why = "DART's root joint is a " + root->getType() + ", expected " + (c.floating ? "FreeJoint" : "WeldJoint");
    return nullptr;
  }
  std::vector<int> joint_dof(m.nv(), -1);
  int free_dof = -1;
  for (int j = 1; j < m.nbodies(); ++j) {
    const Joint& jt = m.joint(j);
    if (jt.type == JointType::FreeFlyer) {
      free_dof = static_cast<int>(root->getIndexInSkeleton(0));
      continue;
    }
    const dart::dynamics::Joint* dj = skel->getJoint(jt.name);
    if (!dj || jt.nv != 1 || dj->getNumDofs() != 1) {
      *why = "no 1-dof DART joint '" + jt.name + "'";
      return nullptr;
    }
    joint_dof[jt.v_index] = static_cast<int>(dj->getIndexInSkeleton(0));
  }
  dart::dynamics::BodyNode* body = skel->getBodyNode(c.frame);
  if (!body) {
    *why = "no DART body node '" + c.frame + "'";
    return nullptr;
  }
  return std::make_unique<DartPeer>(c, std::move(skel), std::move(joint_dof), free_dof, body);
}

}  // namespace plume::peers
