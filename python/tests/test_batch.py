"""run_batch: threads, a process pool and a Dask LocalCluster give the serial results."""
import concurrent.futures

import numpy as np
import pytest

import plume
from conftest import model_path


def sweep():
    # launched sliding (2 m/s, no spin) on the step: friction decides where it starts to roll
    base = plume.load_world(model_path("worlds/ball_off_step.xml")).with_overrides(
        simulate={"duration": 0.6}, state={"ball": {"v": [0, 0, 0, 2, 0, 0]}})
    return [base.with_overrides(contact={"mu": mu}) for mu in (0.05, 0.2, 0.5, 1.0)]


def same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.status == y.status
        assert len(x.events) == len(y.events)
        assert (x.trajectory["time"] == y.trajectory["time"]).all()
        assert (x.trajectory["q"] == y.trajectory["q"]).all()  # deterministic: bit for bit


@pytest.fixture(scope="module")
def serial():
    return [plume.Simulator(s).run() for s in sweep()]


def test_the_sweep_differs_by_friction(serial):
    finals = [r.trajectory["q"][-1] for r in serial]
    assert not all((finals[0] == f).all() for f in finals[1:])


def test_threads(serial):
    same(plume.run_batch(sweep(), jobs=2), serial)
    same(plume.run_batch(sweep()), serial)


def test_process_pool(serial):
    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:
        same(plume.run_batch(sweep(), executor=pool), serial)


def test_dask_local_cluster(serial):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        same(plume.run_batch(sweep(), executor=client.get_executor()), serial)


def test_paths_and_errors():
    results = plume.run_batch([model_path("worlds/bouncing_ball.xml")], jobs=1)
    assert results[0].status == "finished"
    bad = plume.load_world(model_path("worlds/bouncing_ball.xml")).with_overrides(simulate={"duration": -1})
    with pytest.raises(plume.WorldError, match="duration"):
        plume.run_batch([bad], jobs=1)


def test_threads_first_in_a_fresh_interpreter():
    """run_batch's threads are the first to touch numpy arrays (no deadlock in pybind11's lazy statics)."""
    import os
    import subprocess
    import sys
    code = ("import plume; p = %r; rs = plume.run_batch([plume.load_world(p).with_overrides("
            "simulate={'duration': 0.2}) for _ in range(6)], jobs=3); print(sorted({r.status for r in rs}))"
            % model_path("worlds/bouncing_ball.xml"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['finished']"
