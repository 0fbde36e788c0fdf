"""Costs of the Python layer, measured (issue 18's benchmarks).

    PYTHONPATH=build/python python3 bench/bench_python.py [--cli build/apps/plume] [--quick]

1. rnea and aba on the quadruped from Python against the same checked C++
   calls timed by `plume bench --json` (ns per call, the same models/states
   kind: random configurations, velocities and torques).
2. The demo world (quadruped_standing.xml) with its built-in PD against the
   same PD written in Python and called at 1 kHz.
3. run_batch throughput: serial, threads, a process pool and a Dask
   LocalCluster (127.0.0.1, 2 workers).
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import time

import numpy as np

import plume

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")


def per_call_ns(f, args_list, calls):
    """CPU time per call [ns] (process time: the machine's other load does not count)."""
    n = len(args_list)
    for k in range(calls // 10):
        f(*args_list[k % n])
    t0 = time.process_time()
    for k in range(calls):
        f(*args_list[k % n])
    return (time.process_time() - t0) / calls * 1e9


def dynamics(cli, calls):
    model = plume.load_urdf(os.path.join(MODELS, "quadruped.urdf"), root="free")
    data = model.data()
    rng = np.random.default_rng(1)
    states = [(model, data, model.random_configuration(k), rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv))
              for k in range(64)]
    py = {"rnea": per_call_ns(plume.rnea, states, calls), "aba": per_call_ns(plume.aba, states, calls)}
    # The same checked C++ calls timed inside this process (CPU time), on the first state.
    _, _, q, v, x = states[0]
    same = {k: plume._plume._cpu_ns_per_call(k, model, data, q, v, x, calls) for k in ("rnea", "aba")}
    py_one = {k: per_call_ns(getattr(plume, k), states[:1], calls) for k in ("rnea", "aba")}
    out = {"python_ns": py, "python_ns_one_state": py_one, "cpp_in_process_ns": same,
           "added_ns_in_process": {k: py_one[k] - same[k] for k in py}}
    if cli:
        cpp = json.loads(subprocess.run([cli, "bench", os.path.join(MODELS, "quadruped.urdf"), "--root", "free",
                                         "--json", "--calls", str(calls)],
                                        check=True, capture_output=True, text=True).stdout)
        out["plume_bench_wall_ns"] = {"rnea": cpp["rnea"], "aba": cpp["aba"]}  # wall time, other process
    return out


def demo(duration):
    scenario = plume.load_world(os.path.join(MODELS, "worlds", "quadruped_standing.xml")).with_overrides(
        simulate={"duration": duration})
    t0 = time.process_time()  # CPU time: one thread, the machine's other load does not count
    builtin = plume.Simulator(scenario).run()
    t_builtin = time.process_time() - t0
    pd = builtin.summary["controller"]
    model = scenario.model
    act = [i for i, t in enumerate(model.joint_types) if t == "revolute"]
    iv = np.array([model.joint_v_index[i] for i in act])
    iq = np.array([model.joint_q_index[i] for i in act])
    kp, kd, target = np.array(pd["kp"]), np.array(pd["kd"]), np.array(pd["target"])
    calls = [0]

    def controller(t, q, v):
        calls[0] += 1
        tau = np.zeros(model.nv)
        tau[iv] = kp[iv] * (target[iq] - q[iq]) - kd[iv] * v[iv]
        return tau

    sim = plume.Simulator(scenario)
    sim.set_controller(controller, period=1e-3)
    t0 = time.process_time()
    mine = sim.run()
    t_python = time.process_time() - t0
    return {"duration_s": duration, "builtin_cpu_s": t_builtin, "python_cpu_s": t_python,
            "controller_calls": calls[0], "added_us_per_call": (t_python - t_builtin) / calls[0] * 1e6,
            "max_q_difference": float(np.abs(mine.trajectory["q"] - builtin.trajectory["q"]).max())}


def batch(n, duration):
    base = plume.load_world(os.path.join(MODELS, "worlds", "ball_off_step.xml")).with_overrides(
        simulate={"duration": duration}, state={"ball": {"v": [0, 0, 0, 2, 0, 0]}})
    scenarios = [base.with_overrides(contact={"mu": 0.05 + 0.95 * k / max(1, n - 1)}) for k in range(n)]
    out = {"runs": n, "duration_s": duration}

    def timed(name, f):
        t0 = time.perf_counter()
        results = f()
        wall = time.perf_counter() - t0
        assert all(r.status == "finished" for r in results)
        out[name] = {"wall_s": wall, "runs_per_s": n / wall}

    timed("serial", lambda: [plume.Simulator(s).run() for s in scenarios])
    timed("threads_2", lambda: plume.run_batch(scenarios, jobs=2))
    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:
        pool.submit(os.getpid).result()  # started before timing
        timed("processes_2", lambda: plume.run_batch(scenarios, executor=pool))
    try:
        import distributed
    except ImportError:
        return out
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as c, \
            distributed.Client(c) as client:
        timed("dask_local_2_workers", lambda: plume.run_batch(scenarios, executor=client.get_executor()))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", default=os.path.join(HERE, "..", "build", "apps", "plume"))
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    cli = a.cli if os.path.exists(a.cli) else None
    report = {"dynamics": dynamics(cli, 20000 if a.quick else 200000),
              "demo": demo(0.5 if a.quick else 2.0),
              "batch": batch(8 if a.quick else 24, 1.0)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
