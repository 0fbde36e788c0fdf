// Jacobians and velocity-product accelerations of bodies, frames and points.
#include "plume/algorithms/jacobians.hpp"

#include <type_traits>

#include "checks.hpp"
#include "joint_kernels.hpp"

namespace plume {

namespace {

// Placements of the bodies supporting `body` only (root first).
PLUME_FLATTEN void support_kinematics(const Model& model, Data& data, const VecRef& q, int body) {
  // The chain, and the sines and cosines of its revolute joints (in a loop
  // of their own, see detail::revolute_sin_cos).
  // The tree and the joints through plain arrays (body is checked by the
  // callers; the Model accessors would check every index again).
  const int* parent = model.parents().data();
  const Joint* joint = &model.joint(0);
  double* sc = data.qsc.data();
  int* chain = data.chain.data();
  int n = 0;
  int held = 0;  // a revolute body waiting for a second one (detail::sin_cos_pair), or 0
  for (int i = body; i > 0; i = parent[i]) {
    chain[n++] = i;
    const Joint& j = joint[i];
    if (!detail::is_revolute_aligned_kind(j.kind)) continue;
    if (held == 0) {
      held = i;
    } else {
      detail::sin_cos_pair(q[joint[held].q_index], q[j.q_index], sc[2 * held], sc[2 * held + 1], sc[2 * i],
                           sc[2 * i + 1]);
      held = 0;
    }
  }
  if (held != 0) detail::sin_cos(q[joint[held].q_index], sc[2 * held], sc[2 * held + 1]);
  // X0 only (detail::body_placement's operations): a body on the world
  // placed straight into X0, the others' Xup kept local (data.Xup is not
  // written: the callers need the placements only).
  const Transform* Xtree = &model.Xtree(0);
  while (n > 0) {
    const int i = chain[--n];
    const Joint& j = joint[i];
    const int p = parent[i];
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      Transform& X0 = data.X0[i];
      double* S = detail::S_cols(data.S, j);
      if (p == 0) {
        detail::position_from<K>(j, Xtree[i], q.data() + j.q_index, sc, i, X0, S);
        return;
      }
      Transform Xup;
      detail::position_from<K>(j, Xtree[i], q.data() + j.q_index, sc, i, Xup, S);
      const Transform& X0p = data.X0[p];
      K::world_rotation(j, Xup, X0p.E(), X0.E());
      X0.r().noalias() = X0p.r() + X0p.E().transpose() * Xup.r();
    });
  }
}

// [w; d × w]: the column of a unit rotation about the world axis w
// (w0, w1, w2) through a point d from the target.
PLUME_INLINE void write_rotation_column(double w0, double w1, double w2, const Vec3& d, double* col) {
  col[0] = w0;
  col[1] = w1;
  col[2] = w2;
  col[3] = d[1] * w2 - d[2] * w1;
  col[4] = d[2] * w0 - d[0] * w2;
  col[5] = d[0] * w1 - d[1] * w0;
}

// The columns of a joint of kind K (body placement X0 = (E, r), S its motion
// subspace) for a target at world position p, written directly with world
// axes, all six rows: World (p = 0, about the world origin) or
// LocalWorldAligned (about p). A column of a joint with world axis w through
// the body origin r is [w; (r − p) × w]; a free-flyer's six are
// [Eᵀ 0; (r − p)× Eᵀ Eᵀ]. col points at the joint's first column, os is the
// outer stride.
template <class K>
PLUME_INLINE void write_world_columns(const Transform& X0, const double* S, const Vec3& p, double* col,
                                      Eigen::Index os) {
  const Mat3& E = X0.E();
  if constexpr (detail::is_revolute_aligned<K>) {
    constexpr int A = K::axis;
    write_rotation_column(E(A, 0), E(A, 1), E(A, 2), X0.r() - p, col);
  } else if constexpr (detail::is_prismatic_aligned<K>) {  // [0; w] with w = row A of E
    K::world_subspace(E, X0.r(), S, col);
  } else if constexpr (std::is_same_v<K, detail::FreeFlyer>) {
    const Vec3 d = X0.r() - p;
    for (int k = 0; k < 3; ++k) {  // column k: the world axis w = row k of E
      const double w0 = E(k, 0), w1 = E(k, 1), w2 = E(k, 2);
      write_rotation_column(w0, w1, w2, d, col + os * k);
      double* b = col + os * (3 + k);
      b[0] = 0.0;
      b[1] = 0.0;
      b[2] = 0.0;
      b[3] = w0;
      b[4] = w1;
      b[5] = w2;
    }
  } else {
    constexpr int nv = K::nv;
    Eigen::Matrix<double, 6, nv> W;
    K::world_subspace(E, X0.r(), S, W.data());
    for (int k = 0; k < nv; ++k) {
      Eigen::Map<Vec6> c(col + os * k);
      c.template head<3>() = W.col(k).template head<3>();
      c.template tail<3>() = W.col(k).template tail<3>() + W.col(k).template head<3>().cross(p);
    }
  }
}

// Columns [c0, c1) of J set to zero.
PLUME_INLINE void zero_columns(double* Jd, Eigen::Index os, int c0, int c1) {
  for (int c = c0; c < c1; ++c) {
    double* x = Jd + os * c;
    x[0] = 0.0;
    x[1] = 0.0;
    x[2] = 0.0;
    x[3] = 0.0;
    x[4] = 0.0;
    x[5] = 0.0;
  }
}

// The Jacobian of a target at world position p on `body`, with world axes
// (see write_world_columns): the support chain's columns written, every other
// column set to zero (walking from the body to the root, the chain's dofs
// decrease: the gaps between them are zeroed, nothing is written twice).
PLUME_FLATTEN void fill_jacobian_world_axes(const Model& model, const Data& data, int body, const Vec3& p,
                                            Eigen::Ref<Matrix6X>& J) {
  double* Jd = J.data();
  const Eigen::Index os = J.outerStride();
  const int* parent = model.parents().data();
  const Joint* joint = &model.joint(0);
  int hi = static_cast<int>(J.cols());  // columns [hi, nv) are written or zero
  for (int i = body; i > 0; i = parent[i]) {
    const Joint& j = joint[i];
    zero_columns(Jd, os, j.v_index + j.nv, hi);
    hi = j.v_index;
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      write_world_columns<K>(data.X0[i], detail::S_cols(data.S, j), p, Jd + os * j.v_index, os);
    });
  }
  zero_columns(Jd, os, 0, hi);
}

// Columns of the Jacobian of a target rigidly attached to `body`, whose
// placement is X_t0 (world → target coordinates): the world columns X0⁻¹ S,
// then moved to the requested reference.
PLUME_FLATTEN void fill_jacobian(const Model& model, const Data& data, int body, const Transform& X_t0,
                                 ReferenceFrame ref, Eigen::Ref<Matrix6X> J) {
  const Vec3& p = X_t0.r();  // target origin, world coordinates
  if (ref != ReferenceFrame::Local) {
    fill_jacobian_world_axes(model, data, body, ref == ReferenceFrame::World ? Vec3::Zero() : p, J);
    return;
  }
  J.setZero();
  for (int i = body; i > 0; i = model.parent(i)) {
    const Joint& j = model.joint(i);
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      constexpr int nv = K::nv;
      Eigen::Matrix<double, 6, nv> W;
      K::world_subspace(data.X0[i].E(), data.X0[i].r(), detail::S_cols(data.S, j), W.data());
      for (int k = 0; k < nv; ++k) {
        const Motion w(Vec6(W.col(k)));
        switch (ref) {
          case ReferenceFrame::World: J.col(j.v_index + k) = w.vector(); break;
          case ReferenceFrame::Local: J.col(j.v_index + k) = X_t0.apply(w).vector(); break;
          case ReferenceFrame::LocalWorldAligned:  // the same twist seen at the target origin
            J.col(j.v_index + k) << w.angular(), w.linear() + w.angular().cross(p);
            break;
        }
      }
    });
  }
}

Transform frame_X0(const Model& model, const Data& data, int frame) {
  const Frame& f = model.frames()[frame];
  return f.placement * data.X0[f.body];
}

// A motion of `body` given in body coordinates, seen from a target on that
// body with placement X_tb (body → target): Local / World / LocalWorldAligned.
Motion motion_in(const Data& data, int body, const Transform& X_tb, const Motion& m, ReferenceFrame ref) {
  switch (ref) {
    case ReferenceFrame::Local: return X_tb.apply(m);
    case ReferenceFrame::World: return data.X0[body].apply_inverse(m);
    case ReferenceFrame::LocalWorldAligned: {
      const Motion at_target = Transform::translation(X_tb.r()).apply(m);
      const Mat3 R = data.X0[body].E().transpose();
      return Motion(R * at_target.angular(), R * at_target.linear());
    }
  }
  return m;
}

// d/dt (J q̇) at q̈ = 0 for a target on `body` (data.a must hold J̇q̇ in body coordinates).
Motion velocity_product_in(const Data& data, int body, const Transform& X_tb, ReferenceFrame ref) {
  const Motion& a = data.a[body];
  if (ref != ReferenceFrame::LocalWorldAligned) return motion_in(data, body, X_tb, a, ref);
  // Classical: angular acceleration and the acceleration of the target origin.
  const Motion& v = data.v[body];
  const Vec3& r = X_tb.r();
  const Vec3 w = v.angular();
  const Vec3 vp = v.linear() + w.cross(r);
  const Vec3 ap = a.linear() + a.angular().cross(r) + w.cross(vp);
  const Mat3 R = data.X0[body].E().transpose();
  return Motion(R * a.angular(), R * ap);
}

}  // namespace

void body_jacobian(const Model& model, const Data& data, int body, ReferenceFrame ref, Eigen::Ref<Matrix6X> J) {
  fill_jacobian(model, data, body, data.X0[body], ref, J);
}

void frame_jacobian(const Model& model, const Data& data, int frame, ReferenceFrame ref, Eigen::Ref<Matrix6X> J) {
  fill_jacobian(model, data, model.frames()[frame].body, frame_X0(model, data, frame), ref, J);
}

PLUME_FLATTEN void point_jacobian(const Model& model, const Data& data, int body, const Vec3& point, ReferenceFrame ref,
                                  Eigen::Ref<Matrix3X> J) {
  J.setZero();
  const Vec3 p = data.X0[body].inverse_transform_point(point);  // world coordinates
  const Mat3& Eb = data.X0[body].E();
  for (int i = body; i > 0; i = model.parent(i)) {
    const Joint& j = model.joint(i);
    detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
      using K = decltype(jk);
      constexpr int nv = K::nv;
      Eigen::Matrix<double, 6, nv> W;
      K::world_subspace(data.X0[i].E(), data.X0[i].r(), detail::S_cols(data.S, j), W.data());
      for (int k = 0; k < nv; ++k) {
        const Vec3 vp = W.col(k).template tail<3>() + W.col(k).template head<3>().cross(p);
        if (ref == ReferenceFrame::Local) {
          J.col(j.v_index + k) = Eb * vp;
        } else {
          J.col(j.v_index + k) = vp;
        }
      }
    });
  }
}

namespace {

[[noreturn]] __attribute__((noinline, cold)) void columns_error(const Model& model, Eigen::Index rows,
                                                                  Eigen::Index cols, const char* what) {
  throw ArgumentError(std::string(what) + " is " + std::to_string(rows) + "x" + std::to_string(cols) + ", expected " +
                      std::to_string(rows) + "x" + std::to_string(model.nv()) + " (6 or 3 rows, nv columns)");
}

// The passing case inline: one compare; the message is composed out of line.
PLUME_INLINE void check_columns(const Model& model, Eigen::Index rows, Eigen::Index cols, const char* what) {
  if (__builtin_expect(cols != model.nv(), 0)) columns_error(model, rows, cols, what);
}

// r + Eᵀ x, the world position of the point x (body coordinates) of a body
// placed at X0 = (E, r), in scalar operations (GCC called Eigen's product out
// of line here).
PLUME_INLINE Vec3 world_point(const Transform& X0, const Vec3& x) {
  const Mat3& E = X0.E();
  const Vec3& r = X0.r();
  return Vec3(r[0] + (E(0, 0) * x[0] + E(1, 0) * x[1] + E(2, 0) * x[2]),
              r[1] + (E(0, 1) * x[0] + E(1, 1) * x[1] + E(2, 1) * x[2]),
              r[2] + (E(0, 2) * x[0] + E(1, 2) * x[1] + E(2, 2) * x[2]));
}

// frame_jacobian with world axes (World or LocalWorldAligned) of a frame on a
// body whose parent is the world: the chain is that one body, placed straight
// into X0 (as support_kinematics does), its columns written, the others zero.
PLUME_FLATTEN void root_frame_jacobian_world_axes(const Model& model, Data& data, const VecRef& q, const Frame& f,
                                                  bool world, Eigen::Ref<Matrix6X>& J) {
  const int b = f.body;  // checked by the callers (the Model accessors would check it again)
  const Joint& j = (&model.joint(0))[b];
  const Transform& Xtree = (&model.Xtree(0))[b];
  double* Jd = J.data();
  const Eigen::Index os = J.outerStride();
  detail::visit_kind(j.kind, [&](auto jk) PLUME_LAMBDA_INLINE {
    using K = decltype(jk);
    Transform& X0 = data.X0[b];
    double* S = detail::S_cols(data.S, j);
    const double* qj = q.data() + j.q_index;
    double* sc = data.qsc.data();
    if constexpr (detail::is_revolute_aligned<K>) detail::sin_cos(qj[0], sc[2 * b], sc[2 * b + 1]);
    detail::position_from<K>(j, Xtree, qj, sc, b, X0, S);
    // The target's origin (an axis-aligned slider's columns do not depend on it).
    const Vec3 p = world || detail::is_prismatic_aligned<K> ? Vec3::Zero() : world_point(X0, f.placement.r());
    zero_columns(Jd, os, 0, j.v_index);
    zero_columns(Jd, os, j.v_index + K::nv, static_cast<int>(J.cols()));
    write_world_columns<K>(X0, S, p, Jd + os * j.v_index, os);
  });
}

// frame_jacobian from q (the checked and unchecked entry points share it, so
// that the checked one does not call the other through a second frame).
PLUME_INLINE void frame_jacobian_from_q(const Model& model, Data& data, const VecRef& q, int frame,
                                        ReferenceFrame ref, Eigen::Ref<Matrix6X>& J) {
  const Frame& f = model.frames()[frame];
  if (ref != ReferenceFrame::Local && model.parents()[f.body] == 0) {
    root_frame_jacobian_world_axes(model, data, q, f, ref == ReferenceFrame::World, J);
    return;
  }
  support_kinematics(model, data, q, f.body);
  if (ref == ReferenceFrame::Local) {
    fill_jacobian(model, data, f.body, frame_X0(model, data, frame), ref, J);
    return;
  }
  // World axes: only the frame's origin is needed (World: the world origin).
  const Transform& Xb = data.X0[f.body];
  const Vec3 p = ref == ReferenceFrame::World ? Vec3::Zero() : world_point(Xb, f.placement.r());
  fill_jacobian_world_axes(model, data, f.body, p, J);
}

}  // namespace

const char* to_string(ReferenceFrame ref) {
  switch (ref) {
    case ReferenceFrame::Local: return "local";
    case ReferenceFrame::World: return "world";
    case ReferenceFrame::LocalWorldAligned: return "local_world_aligned";
  }
  return "?";
}

ReferenceFrame parse_reference_frame(const std::string& text) {
  for (ReferenceFrame r : {ReferenceFrame::Local, ReferenceFrame::World, ReferenceFrame::LocalWorldAligned}) {
    if (text == to_string(r)) return r;
  }
  throw ArgumentError("unknown reference frame '" + text + "': expected 'world', 'local' or 'local_world_aligned'");
}

namespace unchecked {

void body_jacobian(const Model& model, Data& data, const VecRef& q, int body, ReferenceFrame ref,
                   Eigen::Ref<Matrix6X> J) {
  support_kinematics(model, data, q, body);
  fill_jacobian(model, data, body, data.X0[body], ref, J);
}

void frame_jacobian(const Model& model, Data& data, const VecRef& q, int frame, ReferenceFrame ref,
                    Eigen::Ref<Matrix6X> J) {
  frame_jacobian_from_q(model, data, q, frame, ref, J);
}

}  // namespace unchecked

void body_jacobian(const Model& model, Data& data, const VecRef& q, int body, ReferenceFrame ref,
                   Eigen::Ref<Matrix6X> J) {
  detail::check_state(model, data, q);
  detail::check_body(model, body);
  check_columns(model, J.rows(), J.cols(), "J");
  unchecked::body_jacobian(model, data, q, body, ref, J);
}

Matrix6X body_jacobian(const Model& model, Data& data, const VecRef& q, int body, ReferenceFrame ref) {
  Matrix6X J(6, model.nv());
  body_jacobian(model, data, q, body, ref, J);
  return J;
}

void frame_jacobian(const Model& model, Data& data, const VecRef& q, int frame, ReferenceFrame ref,
                    Eigen::Ref<Matrix6X> J) {
  detail::check_state(model, data, q);
  detail::check_frame(model, frame);
  check_columns(model, J.rows(), J.cols(), "J");
  frame_jacobian_from_q(model, data, q, frame, ref, J);
}

Matrix6X frame_jacobian(const Model& model, Data& data, const VecRef& q, int frame, ReferenceFrame ref) {
  Matrix6X J(6, model.nv());
  frame_jacobian(model, data, q, frame, ref, J);
  return J;
}

Matrix6X frame_jacobian(const Model& model, Data& data, const VecRef& q, const std::string& frame,
                        ReferenceFrame ref) {
  return frame_jacobian(model, data, q, model.get_frame(frame), ref);
}

void point_jacobian(const Model& model, Data& data, const VecRef& q, int body, const Vec3& point, ReferenceFrame ref,
                    Eigen::Ref<Matrix3X> J) {
  detail::check_state(model, data, q);
  detail::check_body(model, body);
  if (!point.allFinite()) throw ArgumentError("point has a non-finite entry");
  check_columns(model, J.rows(), J.cols(), "J");
  support_kinematics(model, data, q, body);
  point_jacobian(model, static_cast<const Data&>(data), body, point, ref, J);
}

Matrix3X point_jacobian(const Model& model, Data& data, const VecRef& q, int body, const Vec3& point,
                        ReferenceFrame ref) {
  Matrix3X J(3, model.nv());
  point_jacobian(model, data, q, body, point, ref, J);
  return J;
}

Transform frame_placement(const Model& model, Data& data, const VecRef& q, int frame) {
  detail::check_state(model, data, q);
  detail::check_frame(model, frame);
  support_kinematics(model, data, q, model.frames()[frame].body);
  return frame_X0(model, data, frame);
}

Transform frame_placement(const Model& model, Data& data, const VecRef& q, const std::string& frame) {
  return frame_placement(model, data, q, model.get_frame(frame));
}

Vec3 frame_position(const Model& model, Data& data, const VecRef& q, int frame) {
  return frame_placement(model, data, q, frame).pose_translation();
}

Vec3 frame_position(const Model& model, Data& data, const VecRef& q, const std::string& frame) {
  return frame_placement(model, data, q, frame).pose_translation();
}

Motion body_velocity_product(const Model&, const Data& data, int body, ReferenceFrame ref) {
  return velocity_product_in(data, body, Transform::Identity(), ref);
}

Motion frame_velocity_product(const Model& model, const Data& data, int frame, ReferenceFrame ref) {
  const Frame& f = model.frames()[frame];
  return velocity_product_in(data, f.body, f.placement, ref);
}

Vec3 point_velocity_product(const Model&, const Data& data, int body, const Vec3& point, ReferenceFrame ref) {
  const Motion& a = data.a[body];
  const Motion& v = data.v[body];
  const Vec3 w = v.angular();
  const Vec3 vp = v.linear() + w.cross(point);
  const Vec3 ap = a.linear() + a.angular().cross(point) + w.cross(vp);
  if (ref == ReferenceFrame::Local) return ap;
  return data.X0[body].E().transpose() * ap;
}

Motion body_velocity(const Model&, const Data& data, int body, ReferenceFrame ref) {
  return motion_in(data, body, Transform::Identity(), data.v[body], ref);
}

Vec3 point_velocity(const Model&, const Data& data, int body, const Vec3& point, ReferenceFrame ref) {
  const Motion& v = data.v[body];
  const Vec3 vp = v.linear() + v.angular().cross(point);
  if (ref == ReferenceFrame::Local) return vp;
  return data.X0[body].E().transpose() * vp;
}

}  // namespace plume
