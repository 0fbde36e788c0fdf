#pragma once
// CRBA that also leaves the placements, for the library's own callers.

#include "plume/algorithms/crba.hpp"

namespace plume::detail {

/// unchecked::crba() that also writes the placements data.X0 at q in its
/// forward pass, so that the contacts (refresh_contact, contact_jacobian(s))
/// can be evaluated next without a separate kinematics pass. The public crba()
/// leaves data.X0 alone: callers that read placements after it use this.
const MatrixX& crba_placements(const Model& model, Data& data, const VecRef& q);

}  // namespace plume::detail
