// Models whose every body is a one-dof body on the world without children (a
// pendulum, a row of sliders on a rail): ABA and CRBA take their closed forms
// (aba.cpp, crba.cpp).
#pragma once

#include "joint_kernels.hpp"
#include "plume/model.hpp"

namespace plume::detail {

/// Is every body a one-dof body on the world without children?
PLUME_INLINE bool all_root_leaves(const Model& model) {
  const int* parent = model.parents().data();
  const Joint* joint = &model.joint(0);
  for (int i = 1; i < model.nbodies(); ++i) {
    const Joint& j = joint[i];
    if (parent[i] != 0 || j.nv != 1 || model.dof_subtree_end(j.v_index) != j.v_index) return false;
  }
  return true;
}

}  // namespace plume::detail
