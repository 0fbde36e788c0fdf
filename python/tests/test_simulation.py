"""Simulation from Python: a bouncing ball's impact time against sqrt(2h/g),
a Python PD controller against the built-in one, the trajectory, events and
summary of a run against the same run of `plume simulate`."""
import csv
import json
import math
import os
import subprocess

import numpy as np
import pytest

import plume
from conftest import model_path


def world(name):
    return model_path(os.path.join("worlds", name))


def test_bouncing_ball_first_impact_time():
    scenario = plume.load_world(world("bouncing_ball.xml"))  # lowest point h = 1 m above the ground, e = 0.8
    result = plume.Simulator(scenario).run(duration=1.0)
    assert result.status == "finished" and result.finished
    impacts = [e for e in result.events if e["kind"] == "impact"]
    assert impacts, result.events
    expected = math.sqrt(2 * 1.0 / 9.81)
    assert abs(impacts[0]["time"] - expected) < 1e-9
    # Newton's law at the impact: the separation speed flips with e = 0.8
    assert abs(impacts[0]["pre_normal_velocity"] + 9.81 * expected) < 1e-8
    assert abs(impacts[0]["post_normal_velocity"] + 0.8 * impacts[0]["pre_normal_velocity"]) < 1e-8
    traj = result.trajectory
    assert traj["q"].shape == (len(traj["time"]), scenario.nq) and traj["v"].shape == (len(traj["time"]), scenario.nv)
    assert traj["time"][0] == 0.0 and abs(traj["time"][-1] - 1.0) < 1e-12
    assert set(impacts[0]) == {"time", "kind", "contact", "body_a", "body_b", "pre_normal_velocity",
                               "post_normal_velocity", "impulse"}


def test_run_matches_plume_simulate(cli, tmp_path):
    """The same world through `plume simulate` and through Python: the same events and trajectory."""
    path = world("bouncing_ball.xml")
    out = tmp_path / "out"
    subprocess.run([cli, "simulate", path, "--out", str(out), "--duration", "1.5", "--no-plots"], check=True,
                   capture_output=True)
    result = plume.Simulator(plume.load_world(path)).run(duration=1.5)
    with open(out / "events.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(result.events)
    for row, e in zip(rows, result.events):
        assert row["kind"] == e["kind"] and row["contact"] == e["contact"]
        assert abs(float(row["time"]) - e["time"]) <= 1e-12 * max(1.0, e["time"])
    summary = json.loads((out / "summary.json").read_text())
    for key in ("status", "steps", "rhs_evaluations", "events", "impacts", "lcp_solves", "scheme", "integrator", "nq",
                "nv", "models", "output_rate", "samples", "event_rows", "duration", "coordinates", "world_absolute",
                "world", "controller", "max_penetration", "energy_start", "energy_end", "warnings", "message"):
        assert result.summary[key] == summary[key], key
    traj = np.loadtxt(out / "trajectory.csv", delimiter=",", skiprows=1)
    assert traj.shape[0] == len(result.trajectory["time"])
    assert np.allclose(traj[:, 0], result.trajectory["time"], rtol=0, atol=1e-12)
    assert np.allclose(traj[:, 1:1 + 7], result.trajectory["q"], rtol=0, atol=1e-9)


def test_summary_coordinates_match_plume_simulate_for_the_quadruped(cli, tmp_path):
    path = world("quadruped_standing.xml")
    subprocess.run([cli, "simulate", path, "--out", str(tmp_path), "--duration", "0.01", "--no-plots"], check=True,
                   capture_output=True)
    summary = json.loads((tmp_path / "summary.json").read_text())
    result = plume.Simulator(plume.load_world(path)).run(duration=0.01)
    summary["controller"].pop("file")  # controller.csv: the Python run writes no files
    for key in ("coordinates", "controller", "models", "nq", "nv", "status", "steps", "events"):
        assert result.summary[key] == summary[key], key
    assert list(result.summary["coordinates"]) == list(summary["coordinates"])


def test_python_pd_controller_equals_the_builtin_one():
    scenario = plume.load_world(world("quadruped_standing.xml")).with_overrides(simulate={"duration": 0.3})
    builtin = plume.Simulator(scenario).run()
    pd = builtin.summary["controller"]
    assert pd["type"] == "pd"
    model = scenario.model
    kp, kd, target = np.array(pd["kp"]), np.array(pd["kd"]), np.array(pd["target"])
    iv = np.array([k for k, t in zip(model.joint_v_index, model.joint_types) if t in ("revolute", "continuous", "prismatic")])
    iq = np.array([k for k, t in zip(model.joint_q_index, model.joint_types) if t in ("revolute", "continuous", "prismatic")])
    calls = []

    def controller(t, q, v):
        calls.append(t)
        tau = np.zeros(model.nv)
        tau[iv] = kp[iv] * (target[iq] - q[iq]) - kd[iv] * v[iv]
        return tau

    sim = plume.Simulator(scenario)
    sim.set_controller(controller, period=1e-3)
    mine = sim.run()
    assert mine.status == builtin.status == "finished"
    assert 300 <= len(calls) <= 302
    assert mine.summary["controller"]["type"] == "python"
    assert len(mine.events) == len(builtin.events)
    assert np.abs(mine.trajectory["q"] - builtin.trajectory["q"]).max() < 1e-9
    # the trunk lands and is held: base height after 0.3 s within 1 cm of the standing posture (0.438 m)
    assert abs(mine.trajectory["q"][-1, 2] - 0.438) < 0.01


def test_controller_torque_on_the_free_flyer_is_refused_naming_the_joint():
    scenario = plume.load_world(world("bouncing_ball.xml"))
    sim = plume.Simulator(scenario)
    sim.set_controller(lambda t, q, v: np.array([0, 0, 0, 0, 0, 1.0]), period=0.01)
    with pytest.raises(plume.SimulationError, match="free-flyer") as info:
        sim.run(duration=0.1)
    assert "ball/" in str(info.value)
    assert info.value.result.status == "failed"


def test_controller_errors():
    scenario = plume.load_world(world("bouncing_ball.xml"))
    sim = plume.Simulator(scenario)
    sim.set_controller(lambda t, q, v: np.zeros(5), period=0.01)
    with pytest.raises(ValueError, match=r"tau.*expected \(6,\)"):
        sim.run(duration=0.1)
    sim = plume.Simulator(scenario)
    sim.set_controller(lambda t, q, v: np.full(6, np.nan), period=0.01)
    with pytest.raises(ValueError, match="not finite"):
        sim.run(duration=0.1)

    class Boom(Exception):
        pass

    def broken(t, q, v):
        raise Boom("controller bug")

    sim = plume.Simulator(scenario)
    sim.set_controller(broken, period=0.01)
    with pytest.raises(Boom, match="controller bug"):
        sim.run(duration=0.1)


def test_scenario_overrides_and_pickling():
    import pickle
    base = plume.load_world(world("bouncing_ball.xml"))
    low = base.with_overrides(state={"ball": {"q": [0, 0, 0.6, 0, 0, 0, 1]}}, simulate={"duration": 0.5})
    again = pickle.loads(pickle.dumps(low))
    assert again.overrides == low.overrides and again.xml == base.xml
    result = plume.Simulator(again).run()
    impact = next(e for e in result.events if e["kind"] == "impact")
    assert abs(impact["time"] - math.sqrt(2 * 0.5 / 9.81)) < 1e-9
    assert abs(result.time - 0.5) < 1e-12
