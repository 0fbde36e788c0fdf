"""Dynamics of a URDF from Python: H, C, forward and inverse dynamics, a foot's
Jacobian and placement, for the quadruped (free-flyer root).

    python3 examples/python/dynamics.py [models/quadruped.urdf]
"""
import sys

import numpy as np

import plume

path = sys.argv[1] if len(sys.argv) > 1 else "models/quadruped.urdf"
model = plume.load_urdf(path, root="free")
data = model.data()                                  # workspace, one per thread
q = model.neutral()                                  # [x y z, qx qy qz qw, joints]
v = np.zeros(model.nv)                               # [omega; v] of the trunk (body frame), joints
tau = np.zeros(model.nv)

H = plume.crba(model, data, q)                       # joint-space inertia, (nv, nv)
C = plume.bias_forces(model, data, q, v)             # gravity + Coriolis, (nv,)
a = plume.aba(model, data, q, v, tau)                # forward dynamics, (nv,)
J = plume.frame_jacobian(model, data, q, "LF_foot", frame="local_world_aligned")   # (6, nv)
T = plume.frame_placement(model, data, q, "LF_foot")                              # (4, 4)

print("%s: nq = %d, nv = %d, mass %.1f kg" % (model.name, model.nq, model.nv, model.total_mass))
print("H(0:3, 0:3) = total mass on the diagonal:", np.diag(H)[3:6])
print("free fall: trunk acceleration a[3:6] =", a[3:6], "(body frame, -g)")
print("H symmetric:", bool((H == H.T).all()), " rnea(aba) = tau to %.1e" % np.abs(plume.rnea(model, data, q, v, a)).max())
print("LF_foot at", T[:3, 3], "J is", J.shape)
