// MuJoCo (2.2.x) adapter of peer_compare.
//
// Loading: MuJoCo compiles a URDF directly once its <visual>/<collision>
// geometry is gone. We also drop <dynamics> (damping and friction are no part
// of H, C, RNEA or ABA in plume) and add a <mujoco><compiler …/> section so
// that MuJoCo keeps every link as a body (fusestatic="false") and takes the
// masses and inertias from <inertial> only. MuJoCo never gives a URDF root a
// free joint, so for a floating model we save the compiled model as MJCF
// (mj_saveLastXML), add <freejoint/> to the root body and compile that.
// The saved MJCF holds numbers rounded to 6 significant digits; the body and
// joint parameters of the reloaded model are therefore copied back, at full
// precision, from the model compiled from the URDF (bodies and joints are
// matched by name, and the copy is checked to be complete).
//
// Conventions: qpos = [p; quat (w, x, y, z)] for the free joint, qvel = [v of
// the body origin in the WORLD frame; ω in the BODY frame] (cdof of a free
// joint: translations along the world axes, rotations about the body axes;
// mj_integratePos adds qvel[0:3]·dt to the position), so qacc[0:3] = d/dt(R v)
// = R(v̇ + ω × v) in terms of plume's body-frame v. Hinge and slide joints are
// matched to plume's joints by name.
#include <mujoco/mujoco.h>
#include <tinyxml2.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "peer_common.hpp"
#include "xml_files.hpp"

namespace plume::peers {

namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The URDF as MuJoCo should read it (see the file comment).
std::string urdf_for_mujoco(const std::string& path) {
  const std::string text = read_file(path);
  tinyxml2::XMLDocument doc;
  if (doc.Parse(text.data(), text.size()) != tinyxml2::XML_SUCCESS) throw std::runtime_error("cannot parse " + path);
  tinyxml2::XMLElement* robot = doc.FirstChildElement("robot");
  if (!robot) throw std::runtime_error(path + " has no <robot>");
  for (tinyxml2::XMLElement* l = robot->FirstChildElement("link"); l; l = l->NextSiblingElement("link")) {
    remove_children(l, "visual");
    remove_children(l, "collision");
  }
  for (tinyxml2::XMLElement* j = robot->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
    remove_children(j, "dynamics");
  }
  remove_children(robot, "mujoco");
  tinyxml2::XMLElement* mj = doc.NewElement("mujoco");
  tinyxml2::XMLElement* compiler = doc.NewElement("compiler");
  compiler->SetAttribute("fusestatic", "false");
  compiler->SetAttribute("discardvisual", "true");
  compiler->SetAttribute("inertiafromgeom", "false");
  compiler->SetAttribute("balanceinertia", "false");
  compiler->SetAttribute("boundmass", "0");
  compiler->SetAttribute("boundinertia", "0");
  mj->InsertEndChild(compiler);
  robot->InsertFirstChild(mj);
  tinyxml2::XMLPrinter printer;
  doc.Print(&printer);
  return printer.CStr();
}

mjModel* load_xml(const std::string& file, std::string* why) {
  std::array<char, 1024> err{};
  mjModel* m = mj_loadXML(file.c_str(), nullptr, err.data(), static_cast<int>(err.size()));
  if (!m) *why = "mj_loadXML(" + fs::path(file).filename().string() + "): " + err.data();
  return m;
}

/// Adds <freejoint/> to the top-level body `root` of a saved MJCF file.
bool add_free_joint(const std::string& in, const std::string& out, const std::string& root, std::string* why) {
  tinyxml2::XMLDocument doc;
  if (doc.LoadFile(in.c_str()) != tinyxml2::XML_SUCCESS) {
    *why = "cannot parse the MJCF saved by mj_saveLastXML";
    return false;
  }
  tinyxml2::XMLElement* world = doc.FirstChildElement("mujoco") ? doc.FirstChildElement("mujoco")->FirstChildElement("worldbody")
                                                                 : nullptr;
  tinyxml2::XMLElement* body = world ? world->FirstChildElement("body") : nullptr;
  while (body) {
    const char* name = body->Attribute("name");
    if (name && root == name) break;
    body = body->NextSiblingElement("body");
  }
  if (!body) {
    *why = "the saved MJCF has no top-level body '" + root + "'";
    return false;
  }
  tinyxml2::XMLElement* fj = doc.NewElement("freejoint");
  fj->SetAttribute("name", "root_free");
  body->InsertFirstChild(fj);
  if (doc.SaveFile(out.c_str()) != tinyxml2::XML_SUCCESS) {
    *why = "cannot write " + out;
    return false;
  }
  return true;
}

/// Copies the body and joint parameters of `src` (compiled from the URDF, full
/// precision) into `dst` (compiled from the rounded MJCF), by name.
bool restore_precision(const mjModel* src, mjModel* dst, std::string* why) {
  for (int b = 0; b < dst->nbody; ++b) {
    const char* name = mj_id2name(dst, mjOBJ_BODY, b);
    const int s = name ? mj_name2id(src, mjOBJ_BODY, name) : (b == 0 ? 0 : -1);
    if (s < 0) {
      *why = std::string("body '") + (name ? name : "?") + "' of the reloaded model is not in the URDF model";
      return false;
    }
    std::memcpy(dst->body_pos + 3 * b, src->body_pos + 3 * s, 3 * sizeof(mjtNum));
    std::memcpy(dst->body_quat + 4 * b, src->body_quat + 4 * s, 4 * sizeof(mjtNum));
    std::memcpy(dst->body_ipos + 3 * b, src->body_ipos + 3 * s, 3 * sizeof(mjtNum));
    std::memcpy(dst->body_iquat + 4 * b, src->body_iquat + 4 * s, 4 * sizeof(mjtNum));
    std::memcpy(dst->body_inertia + 3 * b, src->body_inertia + 3 * s, 3 * sizeof(mjtNum));
    dst->body_mass[b] = src->body_mass[s];
    dst->body_subtreemass[b] = src->body_subtreemass[s];
    if (dst->body_sameframe[b] != src->body_sameframe[s]) {
      *why = std::string("body '") + (name ? name : "?") + "': sameframe flag changed by the MJCF round trip";
      return false;
    }
  }
  for (int j = 0; j < dst->njnt; ++j) {
    if (dst->jnt_type[j] == mjJNT_FREE) continue;
    const char* name = mj_id2name(dst, mjOBJ_JOINT, j);
    const int s = name ? mj_name2id(src, mjOBJ_JOINT, name) : -1;
    if (s < 0 || src->jnt_type[s] != dst->jnt_type[j]) {
      *why = std::string("joint '") + (name ? name : "?") + "' differs after the MJCF round trip";
      return false;
    }
    std::memcpy(dst->jnt_pos + 3 * j, src->jnt_pos + 3 * s, 3 * sizeof(mjtNum));
    std::memcpy(dst->jnt_axis + 3 * j, src->jnt_axis + 3 * s, 3 * sizeof(mjtNum));
  }
  return true;
}

class MujocoPeer final : public Peer {
 public:
  MujocoPeer(const Case& c, mjModel* m, std::vector<int> joint_qpos, std::vector<int> joint_dof, int free_qpos,
             int free_dof, int body)
      : c_(c),
        m_(m),
        d_(mj_makeData(m)),
        joint_qpos_(std::move(joint_qpos)),
        joint_dof_(std::move(joint_dof)),
        free_qpos_(free_qpos),
        free_dof_(free_dof),
        body_(body) {
    const int nv = m_->nv;
    tmp_.resize(nv);
    jacp_.resize(3 * nv);
    jacr_.resize(3 * nv);
    full_.resize(nv * nv);
    for (int k = 0; k < c.nstates(); ++k) {
      const VectorX& q = c.q[k];
      maps_.push_back(make_velocity_map(c, joint_dof_, true, free_dof_, q, c.v[k]));
      const VelocityMap& vm = maps_.back();
      std::vector<mjtNum> qpos(m_->nq, 0.0);
      if (c.floating) {
        for (int i = 0; i < 3; ++i) qpos[free_qpos_ + i] = q(i);
        qpos[free_qpos_ + 3] = q(6);  // w
        for (int i = 0; i < 3; ++i) qpos[free_qpos_ + 4 + i] = q(3 + i);
      }
      for (int j = 1; j < c.model->nbodies(); ++j) {
        const Joint& jt = c.model->joint(j);
        if (jt.nv == 1) qpos[joint_qpos_[jt.v_index]] = q(jt.q_index);
      }
      qpos_.push_back(qpos);
      qvel_.push_back(to_std(vm.P * c.v[k]));
      qacc_.push_back(to_std(vm.P * c.a[k] + vm.acc_offset));
      qfrc_.push_back(to_std(vm.P * c.tau[k]));
    }
  }
  ~MujocoPeer() override {
    mj_deleteData(d_);
    mj_deleteModel(m_);
  }
  MujocoPeer(const MujocoPeer&) = delete;
  MujocoPeer& operator=(const MujocoPeer&) = delete;

  const char* name() const override { return "MuJoCo"; }

  MatrixX mass_matrix(int k) override {
    set_state(k);
    mj_kinematics(m_, d_);
    mj_comPos(m_, d_);
    mj_crb(m_, d_);
    mj_fullM(m_, full_.data(), d_->qM);
    const MatrixX M = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
        full_.data(), m_->nv, m_->nv);
    return maps_[k].P.transpose() * M * maps_[k].P;
  }

  /// plume's C is τ at plume's a = 0, which is MuJoCo's qacc = acc_offset ≠ 0
  /// for a free joint: C = Pᵀ(qfrc_bias + M acc_offset), i.e. RNE with
  /// qacc = acc_offset. (Pᵀ qfrc_bias alone misses M acc_offset.)
  VectorX bias(int k) override {
    set_state(k);
    std::memcpy(d_->qacc, maps_[k].acc_offset.data(), sizeof(mjtNum) * m_->nv);
    mj_kinematics(m_, d_);
    mj_comPos(m_, d_);
    mj_comVel(m_, d_);
    mj_rne(m_, d_, 1, tmp_.data());
    return maps_[k].P.transpose() * vec(tmp_);
  }

  VectorX inverse_dynamics(int k) override {
    set_state(k);
    std::memcpy(d_->qacc, qacc_[k].data(), sizeof(mjtNum) * m_->nv);
    mj_kinematics(m_, d_);
    mj_comPos(m_, d_);
    mj_comVel(m_, d_);
    mj_rne(m_, d_, 1, tmp_.data());
    return maps_[k].P.transpose() * vec(tmp_);
  }

  VectorX forward_dynamics(int k) override {
    set_state(k);
    forward_chain(k);
    const VectorX qacc = Eigen::Map<const VectorX>(d_->qacc, m_->nv);
    return maps_[k].P.transpose() * (qacc - maps_[k].acc_offset);
  }

  Matrix6X frame_jacobian(int k) override {
    set_state(k);
    mj_kinematics(m_, d_);
    mj_comPos(m_, d_);
    mj_jacBody(m_, d_, jacp_.data(), jacr_.data(), body_);
    using RowMajor3X = Eigen::Matrix<double, 3, Eigen::Dynamic, Eigen::RowMajor>;
    Matrix6X J(6, m_->nv);
    J.topRows<3>() = Eigen::Map<const RowMajor3X>(jacr_.data(), 3, m_->nv);
    J.bottomRows<3>() = Eigen::Map<const RowMajor3X>(jacp_.data(), 3, m_->nv);
    return J * maps_[k].P;
  }

  double time(Algo algo, long calls) override {
    const int n = c_.nstates();
    switch (algo) {
      case Algo::Rnea:
        return mean_ns(calls, n, [this](int k) {
          set_state(k);
          std::memcpy(d_->qacc, qacc_[k].data(), sizeof(mjtNum) * m_->nv);
          mj_kinematics(m_, d_);
          mj_comPos(m_, d_);
          mj_comVel(m_, d_);
          mj_rne(m_, d_, 1, tmp_.data());
        });
      case Algo::Bias:
        return mean_ns(calls, n, [this](int k) {
          set_state(k);
          mj_kinematics(m_, d_);
          mj_comPos(m_, d_);
          mj_comVel(m_, d_);
          mj_rne(m_, d_, 0, d_->qfrc_bias);
        });
      case Algo::Crba:
        return mean_ns(calls, n, [this](int k) {
          set_state(k);
          mj_kinematics(m_, d_);
          mj_comPos(m_, d_);
          mj_crb(m_, d_);
        });
      case Algo::Aba:
        return mean_ns(calls, n, [this](int k) {
          set_state(k);
          forward_chain(k);
        });
      case Algo::Jacobian:
        return mean_ns(calls, n, [this](int k) {
          set_state(k);
          mj_kinematics(m_, d_);
          mj_comPos(m_, d_);
          mj_jacBody(m_, d_, jacp_.data(), jacr_.data(), body_);
        });
    }
    return 0.0;
  }

 private:
  static std::vector<mjtNum> to_std(const VectorX& x) { return std::vector<mjtNum>(x.data(), x.data() + x.size()); }
  VectorX vec(const std::vector<mjtNum>& x) const { return Eigen::Map<const VectorX>(x.data(), m_->nv); }

  void set_state(int k) {
    std::memcpy(d_->qpos, qpos_[k].data(), sizeof(mjtNum) * m_->nq);
    std::memcpy(d_->qvel, qvel_[k].data(), sizeof(mjtNum) * m_->nv);
  }

  /// Unconstrained forward dynamics qacc = M⁻¹(τ − bias) from a fresh state:
  /// positions, inertia, its LᵀDL factor, velocities, bias by RNE, solve.
  void forward_chain(int k) {
    mj_kinematics(m_, d_);
    mj_comPos(m_, d_);
    mj_crb(m_, d_);
    mj_factorM(m_, d_);
    mj_comVel(m_, d_);
    mj_rne(m_, d_, 0, d_->qfrc_bias);
    mju_sub(tmp_.data(), qfrc_[k].data(), d_->qfrc_bias, m_->nv);
    mj_solveM(m_, d_, d_->qacc, tmp_.data(), 1);
  }

  const Case& c_;
  mjModel* m_;
  mjData* d_;
  std::vector<int> joint_qpos_, joint_dof_;  // by plume v index
  int free_qpos_, free_dof_, body_;
  std::vector<VelocityMap> maps_;
  std::vector<std::vector<mjtNum>> qpos_, qvel_, qacc_, qfrc_;
  std::vector<mjtNum> tmp_, jacp_, jacr_, full_;
};

}  // namespace

std::unique_ptr<Peer> make_mujoco_peer(const Case& c, std::string* why) {
  if (mj_version() != mjVERSION_HEADER) {
    *why = "MuJoCo library version " + std::to_string(mj_version()) + " does not match its header";
    return nullptr;
  }
  const Model& pm = *c.model;
  mjModel* m = nullptr;
  try {
    TempDir dir("plume_peer_mujoco");
    const std::string urdf = dir.file("model.urdf");
    std::ofstream(urdf) << urdf_for_mujoco(c.urdf_path);
    m = load_xml(urdf, why);
    if (!m) return nullptr;
    if (c.floating) {
      const std::string saved = dir.file("saved.xml"), free = dir.file("free.xml");
      std::array<char, 1024> err{};
      if (!mj_saveLastXML(saved.c_str(), m, err.data(), static_cast<int>(err.size()))) {
        *why = std::string("mj_saveLastXML: ") + err.data();
        mj_deleteModel(m);
        return nullptr;
      }
      mjModel* m1 = add_free_joint(saved, free, pm.body_name(1), why) ? load_xml(free, why) : nullptr;
      const bool ok = m1 && restore_precision(m, m1, why);
      mj_deleteModel(m);
      m = m1;
      if (!ok) {
        if (m) mj_deleteModel(m);
        return nullptr;
      }
    }
  } catch (const std::exception& e) {
    *why = e.what();
    if (m) mj_deleteModel(m);
    return nullptr;
  }

  auto fail = [&](const std::string& what) {
    *why = what;
    mj_deleteModel(m);
    return nullptr;
  };
  if (m->nv != pm.nv()) return fail("nv " + std::to_string(m->nv) + " ≠ plume's " + std::to_string(pm.nv()));
  for (int i = 0; i < 3; ++i) {
    if (m->opt.gravity[i] != pm.gravity()(i)) return fail("gravity differs from plume's");
  }
  for (int i = 0; i < m->nv; ++i) {
    if (m->dof_armature[i] != 0.0 || m->dof_damping[i] != 0.0) return fail("armature or damping is not zero");
  }
  std::vector<int> joint_qpos(pm.nv(), -1), joint_dof(pm.nv(), -1);
  int free_qpos = -1, free_dof = -1;
  for (int j = 1; j < pm.nbodies(); ++j) {
    const Joint& jt = pm.joint(j);
    if (jt.type == JointType::FreeFlyer) {
      for (int i = 0; i < m->njnt; ++i) {
        if (m->jnt_type[i] == mjJNT_FREE) {
          free_qpos = m->jnt_qposadr[i];
          free_dof = m->jnt_dofadr[i];
        }
      }
      if (free_dof < 0) return fail("no free joint");
      continue;
    }
    const int id = mj_name2id(m, mjOBJ_JOINT, jt.name.c_str());
    if (id < 0) return fail("no joint '" + jt.name + "'");
    const bool prismatic = jt.type == JointType::Prismatic;
    if (jt.nv != 1 || m->jnt_type[id] != (prismatic ? mjJNT_SLIDE : mjJNT_HINGE)) {
      return fail("joint '" + jt.name + "' has a type this comparison does not map");
    }
    joint_qpos[jt.v_index] = m->jnt_qposadr[id];
    joint_dof[jt.v_index] = m->jnt_dofadr[id];
  }
  const int body = mj_name2id(m, mjOBJ_BODY, c.frame.c_str());
  if (body < 0) return fail("no body '" + c.frame + "'");
  return std::make_unique<MujocoPeer>(c, m, std::move(joint_qpos), std::move(joint_dof), free_qpos, free_dof, body);
}

}  // namespace plume::peers
