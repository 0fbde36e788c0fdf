"""A parameter sweep over friction with run_batch: a ball launched sliding at
2 m/s without spin along a step, for five friction coefficients, in parallel.
Friction slows the slide until the ball rolls (after v0 / (7/2 mu g)), so the
rolling speed is 5/7 of v0 whatever mu, but where the ball is when it leaves
the step's edge and lands depends on mu.

    python3 examples/python/friction_sweep.py [models/worlds/ball_off_step.xml] [dask-scheduler-address]

With a scheduler address the runs go to a Dask cluster (dask scheduler; dask
worker ADDRESS on each machine) through client.get_executor().
"""
import sys

import plume

path = sys.argv[1] if len(sys.argv) > 1 else "models/worlds/ball_off_step.xml"
base = plume.load_world(path).with_overrides(simulate={"duration": 1.0},
                                             state={"ball": {"v": [0, 0, 0, 2.0, 0, 0]}})
mus = [0.05, 0.1, 0.2, 0.5, 1.0]
scenarios = [base.with_overrides(contact={"mu": mu}) for mu in mus]

if len(sys.argv) > 2:
    from distributed import Client
    with Client(sys.argv[2]) as client:
        results = plume.run_batch(scenarios, executor=client.get_executor())
else:
    results = plume.run_batch(scenarios)             # threads, the GIL released

for mu, r in zip(mus, results):
    q = r.trajectory["q"][-1]
    print("mu = %-5g %s: %2d events, ball at x = %+.3f y = %+.3f z = %.3f m" % (
        mu, r.status, len(r.events), q[0], q[1], q[2]))
