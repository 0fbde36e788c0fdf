"""Every error path raises the right plume.Error subclass naming the culprit."""
import numpy as np
import pytest

import plume
from conftest import model_path


@pytest.fixture(scope="module")
def quad():
    model = plume.load_urdf(model_path("quadruped.urdf"), root="free")
    return model, model.data()


def test_hierarchy():
    for cls in (plume.LoadError, plume.WorldError, plume.SimulationError, plume.ArgumentError):
        assert issubclass(cls, plume.Error)
    assert issubclass(plume.ArgumentError, ValueError)


def test_load_errors(tmp_path):
    with pytest.raises(plume.LoadError, match="no_such.urdf"):
        plume.load_urdf(str(tmp_path / "no_such.urdf"))
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="r"><link name="a"><inertial><mass value="-1"/>'
                   '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>')
    with pytest.raises(plume.LoadError, match="'a'"):
        plume.load_urdf(str(bad))
    with pytest.raises(plume.ArgumentError, match="sideways"):
        plume.load_urdf(model_path("pendulum.urdf"), root="sideways")


def test_world_errors(tmp_path):
    with pytest.raises(plume.WorldError, match="missing.xml"):
        plume.load_world(str(tmp_path / "missing.xml"))
    w = tmp_path / "w.xml"
    w.write_text('<world>\n  <model name="b" urdf="nowhere.urdf"/>\n</world>\n')
    with pytest.raises(plume.WorldError, match="nowhere.urdf"):
        plume.load_world(str(w))
    w.write_text('<world>\n  <model name="b" urdf="%s" root="free"/>\n  <simulate duration="-1"/>\n</world>\n'
                 % model_path("ball.urdf"))
    with pytest.raises(plume.WorldError, match="duration"):
        plume.load_world(str(w))


def test_simulation_error_on_a_sunk_initial_state():
    scenario = plume.load_world(model_path("worlds/bouncing_ball.xml"))
    sunk = scenario.with_overrides(state={"ball": {"q": [0, 0, 0.0, 0, 0, 0, 1]}})
    with pytest.raises(plume.SimulationError, match="ball"):
        plume.Simulator(sunk)


@pytest.mark.parametrize("which", ["q", "v", "tau"])
def test_wrong_size_arrays_name_the_argument_and_size(quad, which):
    model, data = quad
    args = {"q": model.neutral(), "v": np.zeros(model.nv), "tau": np.zeros(model.nv)}
    args[which] = np.zeros(5)
    expected = {"q": "19", "v": "18", "tau": "18"}[which]
    with pytest.raises(ValueError, match=r"^%s has shape \(5,\), expected \(%s,\)" % (which, expected)):
        plume.aba(model, data, args["q"], args["v"], args["tau"])


def test_non_finite_arrays(quad):
    model, data = quad
    v = np.zeros(model.nv)
    v[4] = np.inf
    with pytest.raises(ValueError, match=r"v\[4\] = inf is not finite"):
        plume.rnea(model, data, model.neutral(), v, np.zeros(model.nv))
    q = model.neutral()
    q[0] = np.nan
    with pytest.raises(ValueError, match=r"q\[0\] = nan"):
        plume.crba(model, data, q)
    with pytest.raises(ValueError, match="q"):
        plume.crba(model, data, [[1, 2], [3, 4]])


def test_unit_quaternion_is_checked(quad):
    model, data = quad
    q = model.neutral()
    q[3:7] = [0, 0, 0, 2]
    with pytest.raises(plume.ArgumentError, match="quaternion"):
        plume.crba(model, data, q)


def test_unknown_frame_suggests_the_name_meant():
    scenario = plume.load_world(model_path("worlds/quadruped_standing.xml"))
    model = scenario.model
    data = model.data()
    with pytest.raises(plume.ArgumentError, match="did you mean 'quad/LF_foot'"):
        plume.frame_jacobian(model, data, scenario.q0, "LF_foot", frame="world")
    with pytest.raises(plume.ArgumentError, match="'quad/RH_foot'"):
        plume.frame_placement(model, data, scenario.q0, "quad/RH_fot")
    with pytest.raises(plume.ArgumentError, match="local_world_aligned"):
        plume.frame_jacobian(model, data, scenario.q0, "quad/LF_foot", frame="body")


def test_data_of_another_model(quad):
    model, _ = quad
    other = plume.load_urdf(model_path("pendulum.urdf")).data()
    with pytest.raises(plume.Error, match="another model"):
        plume.crba(model, other, model.neutral())
