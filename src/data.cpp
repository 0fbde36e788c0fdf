#include "plume/data.hpp"

#include "algorithms/joint_kernels.hpp"
#include "plume/error.hpp"

namespace plume {

Data::Data(const Model& model)
    : model_uid(model.uid()),
      nq(model.nq()),
      nv(model.nv()),
      nbodies(model.nbodies()),
      Xup(model.nbodies()),
      X0(model.nbodies()),
      S(6, model.nv()),
      v(model.nbodies()),
      a(model.nbodies()),
      Xframe(model.frames().size()),
      orel(model.nbodies(), Vec3::Zero()),
      oS(Matrix6X::Zero(6, model.nv())),
      ov(model.nbodies()),
      oa(model.nbodies()),
      oc(model.nbodies()),
      f(model.nbodies()),
      tau(VectorX::Zero(model.nv())),
      C(VectorX::Zero(model.nv())),
      g(VectorX::Zero(model.nv())),
      Ic(model.nbodies()),
      qsc(Eigen::Matrix<double, 2, Eigen::Dynamic>::Zero(2, model.nbodies())),
      H(MatrixX::Zero(model.nv(), model.nv())),
      Fc(Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor>::Zero(6, model.nv())),
      oIA(model.nbodies(), Mat6::Zero()),
      opA(model.nbodies()),
      U(Matrix6X::Zero(6, model.nv())),
      Dinv(MatrixX::Zero(model.nv(), model.nv())),
      u(VectorX::Zero(model.nv())),
      ddq(VectorX::Zero(model.nv())),
      dtau_dq(MatrixX::Zero(model.nv(), model.nv())),
      dtau_dv(MatrixX::Zero(model.nv(), model.nv())),
      ddq_dq(MatrixX::Zero(model.nv(), model.nv())),
      ddq_dv(MatrixX::Zero(model.nv(), model.nv())),
      Minv(MatrixX::Zero(model.nv(), model.nv())),
      dVdq(Matrix6X::Zero(6, model.nv())),
      dAdq(Matrix6X::Zero(6, model.nv())),
      dAdv(Matrix6X::Zero(6, model.nv())),
      oYc(model.nbodies()),
      oBc(model.nbodies(), Mat3::Zero()),
      opc(model.nbodies(), Vec3::Zero()),
      oFc(model.nbodies()),
      LD(RowMatrixX::Zero(model.nv(), model.nv())),
      ltdl_tmp(VectorX::Zero(model.nv())),
      chain(model.nbodies(), 0) {
  detail::init_motion_subspace(model, S);
}

void check_data(const Model& model, const Data& data) {
  if (data.model_uid != model.uid() || data.nv != model.nv() || data.nbodies != model.nbodies()) {
    throw Error("Data was built for another model (model '" + model.name() +
                "'): build it with Data(model)");
  }
}

}  // namespace plume
