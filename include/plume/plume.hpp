#pragma once
/// @file
/// Everything plume offers, in one include.
///
/// ```cpp
/// #include <plume/plume.hpp>
/// ```
///
/// pulls in every public header: spatial algebra, models (URDF loading and
/// ModelBuilder), the dynamics algorithms, contact detection and contact
/// Jacobians, the LCP solvers, contact dynamics, and the simulator. Include
/// the individual headers instead to keep compile times down; each one is
/// self-contained.

#include "plume/version.hpp"
#include "plume/error.hpp"
#include "plume/spatial.hpp"
#include "plume/joint.hpp"
#include "plume/model.hpp"
#include "plume/model_builder.hpp"
#include "plume/data.hpp"
#include "plume/configuration.hpp"
#include "plume/urdf.hpp"
#include "plume/srdf.hpp"

#include "plume/algorithms/kinematics.hpp"
#include "plume/algorithms/rnea.hpp"
#include "plume/algorithms/crba.hpp"
#include "plume/algorithms/aba.hpp"
#include "plume/algorithms/cholesky.hpp"
#include "plume/algorithms/jacobians.hpp"
#include "plume/algorithms/energy.hpp"
#include "plume/algorithms/derivatives.hpp"

#include "plume/contact/shapes.hpp"
#include "plume/contact/environment.hpp"
#include "plume/contact/detection.hpp"
#include "plume/contact/contact_jacobian.hpp"

#include "plume/lcp/enumeration.hpp"
#include "plume/lcp/lcp.hpp"
#include "plume/lcp/lemke.hpp"
#include "plume/lcp/pivoting.hpp"
#include "plume/lcp/pgs.hpp"

#include "plume/dynamics/contact_dynamics.hpp"
#include "plume/dynamics/compliant.hpp"
#include "plume/dynamics/constrained_derivatives.hpp"

#include "plume/sim/world.hpp"
#include "plume/sim/simulator.hpp"
#include "plume/sim/world_file.hpp"
#include "plume/sim/batch.hpp"
