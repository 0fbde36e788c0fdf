// Derivatives of a frame's velocity and acceleration with respect to q (in
// the tangent space), q̇ and q̈, from the world-axis quantities of
// kinematics_derivatives (derivatives.cpp's forward pass).
//
// The pass leaves, for the frame's body b, its velocity V and acceleration A
// (A with the −g offset) with world axes about a point c held fixed while
// differentiating (the origin of b's subtree root, Data::orel), and per
// support dof k its world column s_k and the columns dVdq_k = ν × s_k,
// dAdq_k, dAdv_k. Then (derivatives.cpp's header):
//   ∂V/∂q_k = s_k × V + dVdq_k,              ∂V/∂q̇_k = s_k,
//   ∂A/∂q_k = s_k × A + dAdq_k + dVdq_k × V,  ∂A/∂q̇_k = s_k × V + dAdv_k,
//   ∂A/∂q̈_k = s_k
// (the offset cancels in s_k × A + dAdq_k). With ω, ω̇ the angular parts,
// v_c, a_c the linear ones, p the frame origin and R its axes (world):
//   velocity of p       v_p = v_c + ω × (p − c),  ∂p/∂q_k = s_lin + s_ω × (p − c)
//   World               [ω; v_c − ω × c],        [ω̇; a_c − ω̇ × c]
//   LocalWorldAligned   [ω; v_p],                [ω̇; a_c + ω̇ × (p − c) + ω × v_p]
//   Local               Rᵀ[ω; v_p],              Rᵀ[ω̇; a_c + ω̇ × (p − c)]
// and ∂(Rᵀx)/∂q_k = Rᵀ(∂x − s_ω × x) for the rotation of the Local frame.
#include <string>

#include "checks.hpp"
#include "plume/algorithms/derivatives.hpp"
#include "plume/error.hpp"

namespace plume {

namespace {

/// The frame's geometry and its body's motion, as the formulas above use them.
struct FrameMotion {
  Mat3 R;          // frame axes, world coordinates
  Vec3 c;          // the pass's reference point (world)
  Vec3 pc;         // p − c
  Vec3 w, vc, vp;  // ω, v_c, v_p
  Motion V, A;     // about c, world axes; A with the −g offset
  Vec3 dw, ac;     // ω̇ and a_c without the offset
};

FrameMotion frame_motion(const Model& model, const Data& data, int frame) {
  const Frame& f = model.frames()[frame];
  const int b = f.body;
  const Transform Xf = f.placement * data.X0[b];
  FrameMotion m;
  m.R = Xf.E().transpose();
  m.pc = (Xf.r() - data.X0[b].r()) + data.orel[b];
  m.c = data.X0[b].r() - data.orel[b];
  m.V = data.ov[b];
  m.A = data.oa[b];
  m.w = m.V.angular();
  m.vc = m.V.linear();
  m.vp = m.vc + m.w.cross(m.pc);
  m.dw = m.A.angular();
  m.ac = m.A.linear() + model.gravity();
  return m;
}

/// Calls f(k, s) for every dof k that moves the body, s its world column.
template <class F>
void for_support_dofs(const Model& model, const Data& data, int body, F&& f) {
  for (int i = body; i > 0; i = model.parent(i)) {
    const Joint& j = model.joint(i);
    for (int k = j.v_index; k < j.v_index + j.nv; ++k) f(k, Motion(Vec6(data.oS.col(k))));
  }
}

void check_result(const Model& model, const Eigen::Ref<Matrix6X>& M, const char* what) {
  if (M.cols() != model.nv()) {
    throw ArgumentError(std::string(what) + " is 6x" + std::to_string(M.cols()) + ", expected 6x" +
                        std::to_string(model.nv()) + " (nv columns)");
  }
}

}  // namespace

namespace unchecked {

void frame_velocity_derivatives(const Model& model, const Data& data, int frame, ReferenceFrame ref,
                                Eigen::Ref<Matrix6X> dv_dq, Eigen::Ref<Matrix6X> dv_dv) {
  const FrameMotion m = frame_motion(model, data, frame);
  dv_dq.setZero();
  dv_dv.setZero();
  for_support_dofs(model, data, model.frames()[frame].body, [&](int k, const Motion& s) {
    const Motion dV = s.cross(m.V) + Motion(Vec6(data.dVdq.col(k)));
    const Vec3 sw = s.angular();
    const Vec3 dp = s.linear() + sw.cross(m.pc);
    switch (ref) {
      case ReferenceFrame::World:
        dv_dq.col(k) << dV.angular(), dV.linear() - dV.angular().cross(m.c);
        dv_dv.col(k) << sw, s.linear() - sw.cross(m.c);
        break;
      case ReferenceFrame::LocalWorldAligned:
      case ReferenceFrame::Local: {
        const Vec3 dvp = dV.linear() + dV.angular().cross(m.pc) + m.w.cross(dp);
        if (ref == ReferenceFrame::LocalWorldAligned) {
          dv_dq.col(k) << dV.angular(), dvp;
          dv_dv.col(k) << sw, dp;
        } else {
          const Mat3 Rt = m.R.transpose();
          dv_dq.col(k) << Rt * (dV.angular() - sw.cross(m.w)), Rt * (dvp - sw.cross(m.vp));
          dv_dv.col(k) << Rt * sw, Rt * dp;
        }
        break;
      }
    }
  });
}

void frame_acceleration_derivatives(const Model& model, const Data& data, int frame, ReferenceFrame ref,
                                    Eigen::Ref<Matrix6X> da_dq, Eigen::Ref<Matrix6X> da_dv,
                                    Eigen::Ref<Matrix6X> da_da) {
  const FrameMotion m = frame_motion(model, data, frame);
  const Mat3 Rt = m.R.transpose();
  const Vec3 asp = m.ac + m.dw.cross(m.pc);  // spatial acceleration's linear part at p
  da_dq.setZero();
  da_dv.setZero();
  da_da.setZero();
  for_support_dofs(model, data, model.frames()[frame].body, [&](int k, const Motion& s) {
    const Motion dVq = s.cross(m.V) + Motion(Vec6(data.dVdq.col(k)));
    const Motion dAq = s.cross(m.A) + Motion(Vec6(data.dAdq.col(k))) + Motion(Vec6(data.dVdq.col(k))).cross(m.V);
    const Motion dAv = s.cross(m.V) + Motion(Vec6(data.dAdv.col(k)));
    const Vec3 sw = s.angular();
    const Vec3 dp = s.linear() + sw.cross(m.pc);
    switch (ref) {
      case ReferenceFrame::World:
        da_dq.col(k) << dAq.angular(), dAq.linear() - dAq.angular().cross(m.c);
        da_dv.col(k) << dAv.angular(), dAv.linear() - dAv.angular().cross(m.c);
        da_da.col(k) << sw, s.linear() - sw.cross(m.c);
        break;
      case ReferenceFrame::LocalWorldAligned: {
        // Classical: d/dt of [ω; v_p].
        const Vec3 dvp_q = dVq.linear() + dVq.angular().cross(m.pc) + m.w.cross(dp);
        da_dq.col(k) << dAq.angular(), dAq.linear() + dAq.angular().cross(m.pc) + m.dw.cross(dp) +
                                           dVq.angular().cross(m.vp) + m.w.cross(dvp_q);
        da_dv.col(k) << dAv.angular(),
            dAv.linear() + dAv.angular().cross(m.pc) + sw.cross(m.vp) + m.w.cross(dp);
        da_da.col(k) << sw, dp;
        break;
      }
      case ReferenceFrame::Local: {
        const Vec3 dasp_q = dAq.linear() + dAq.angular().cross(m.pc) + m.dw.cross(dp);
        da_dq.col(k) << Rt * (dAq.angular() - sw.cross(m.dw)), Rt * (dasp_q - sw.cross(asp));
        da_dv.col(k) << Rt * dAv.angular(), Rt * (dAv.linear() + dAv.angular().cross(m.pc));
        da_da.col(k) << Rt * sw, Rt * dp;
        break;
      }
    }
  });
}

}  // namespace unchecked

void frame_velocity_derivatives(const Model& model, const Data& data, int frame, ReferenceFrame ref,
                                Eigen::Ref<Matrix6X> dv_dq, Eigen::Ref<Matrix6X> dv_dv) {
  check_data(model, data);
  detail::check_frame(model, frame);
  check_result(model, dv_dq, "dv_dq");
  check_result(model, dv_dv, "dv_dv");
  unchecked::frame_velocity_derivatives(model, data, frame, ref, dv_dq, dv_dv);
}

void frame_acceleration_derivatives(const Model& model, const Data& data, int frame, ReferenceFrame ref,
                                    Eigen::Ref<Matrix6X> da_dq, Eigen::Ref<Matrix6X> da_dv,
                                    Eigen::Ref<Matrix6X> da_da) {
  check_data(model, data);
  detail::check_frame(model, frame);
  check_result(model, da_dq, "da_dq");
  check_result(model, da_dv, "da_dv");
  check_result(model, da_da, "da_da");
  unchecked::frame_acceleration_derivatives(model, data, frame, ref, da_dq, da_dv, da_da);
}

}  // namespace plume
