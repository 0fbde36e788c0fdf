"""A Python PD controller brings the quadruped to a stand: the demo world with
its built-in PD replaced by a Python function called at 1 kHz.

    python3 examples/python/pd_stand.py [models/worlds/quadruped_standing.xml]
"""
import sys
import time

import numpy as np

import plume

path = sys.argv[1] if len(sys.argv) > 1 else "models/worlds/quadruped_standing.xml"
scenario = plume.load_world(path)
model = scenario.model                 # the world's model: names are prefixed "quad/"
joints = [i for i, t in enumerate(model.joint_types) if t == "revolute"]
iq = np.array([model.joint_q_index[i] for i in joints])
iv = np.array([model.joint_v_index[i] for i in joints])
target = np.tile([0.0, 0.8, -1.6], 4)  # HAA, HFE, KFE per leg
kp = 800.0
kd = np.tile([35.0, 35.0, 15.0], 4)
limit = model.effort_limit[iv]


def pd(t, q, v):
    tau = np.zeros(model.nv)           # nothing on the free-flyer: it has no actuator
    tau[iv] = np.clip(kp * (target - q[iq]) - kd * v[iv], -limit, limit)
    return tau


sim = plume.Simulator(scenario)
sim.set_controller(pd, period=1e-3)
start = time.perf_counter()
result = sim.run(duration=1.0)
wall = time.perf_counter() - start
z = result.trajectory["q"][:, 2]
print("status %s at t = %g s; %d impacts; wall %.2f s" % (result.status, result.time,
                                                          result.summary["impacts"], wall))
print("trunk height: start %.4f m, end %.4f m" % (z[0], z[-1]))
