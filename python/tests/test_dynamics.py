"""Dynamics from Python against independent facts: the C++ program's numbers
bit for bit, H symmetric positive definite, rnea(aba(tau)) = tau, Jacobians
against finite differences of frame_placement."""
import json
import subprocess

import numpy as np
import pytest

import plume
from conftest import ALL_MODELS, model_path


def states(model, seed):
    rng = np.random.default_rng(seed)
    q = model.random_configuration(seed)
    v = rng.uniform(-1, 1, model.nv)
    tau = rng.uniform(-2, 2, model.nv)
    a = rng.uniform(-1, 1, model.nv)
    return q, v, tau, a


@pytest.mark.parametrize("name,root", ALL_MODELS)
def test_equals_the_cpp_program_bit_for_bit(cli, name, root):
    model = plume.load_urdf(model_path(name), root=root)
    data = model.data()
    q, v, tau, a = states(model, 7)
    words = lambda x: ",".join(repr(float(e)) for e in x)  # noqa: E731  (17 digits: exact)
    base = [cli, "dynamics", model_path(name), "--root", root, "--q", words(q), "--v", words(v), "--json"]
    fwd = json.loads(subprocess.run(base + ["--tau", words(tau)], check=True, capture_output=True, text=True).stdout)
    inv = json.loads(subprocess.run(base + ["--ddq", words(a)], check=True, capture_output=True, text=True).stdout)
    assert (plume.crba(model, data, q) == np.array(fwd["H"], dtype=float).reshape(model.nv, model.nv)).all()
    assert (plume.bias_forces(model, data, q, v) == np.array(fwd["C"], dtype=float)).all()
    assert (plume.aba(model, data, q, v, tau) == np.array(fwd["ddq"], dtype=float)).all()
    assert (plume.rnea(model, data, q, v, a) == np.array(inv["tau"], dtype=float)).all()


@pytest.mark.parametrize("name,root", ALL_MODELS)
def test_inertia_symmetric_positive_definite_and_rnea_inverts_aba(name, root):
    model = plume.load_urdf(model_path(name), root=root)
    data = model.data()
    for seed in range(5):
        q, v, tau, _ = states(model, seed)
        H = plume.crba(model, data, q)
        assert H.shape == (model.nv, model.nv)
        assert (H == H.T).all()
        assert np.linalg.eigvalsh(H).min() > 0
        ddq = plume.aba(model, data, q, v, tau)
        back = plume.rnea(model, data, q, v, ddq)
        assert np.abs(back - tau).max() <= 1e-10 * max(1.0, np.abs(tau).max())
        # A second, independent route: H ddq + C = tau.
        C = plume.bias_forces(model, data, q, v)
        assert np.allclose(H @ ddq + C, tau, atol=1e-9)


def rotation_log(R):
    """The rotation vector w with exp([w]x) = R (R close to identity)."""
    return 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])


@pytest.mark.parametrize("name,root", [("quadruped.urdf", "free"), ("arm7.urdf", "fixed"), ("rod.urdf", "planar"),
                                       ("humanoid.urdf", "free")])
def test_frame_jacobians_against_finite_differences_of_frame_placement(name, root):
    model = plume.load_urdf(model_path(name), root=root)
    data = model.data()
    rng = np.random.default_rng(3)
    q = model.random_configuration(11)
    v = rng.uniform(-1, 1, model.nv)
    h = 1e-6
    qp, qm = plume.integrate(model, q, v, h), plume.integrate(model, q, v, -h)
    for frame in model.frame_names[::2]:
        T = plume.frame_placement(model, data, q, frame)
        Tp, Tm = plume.frame_placement(model, data, qp, frame), plume.frame_placement(model, data, qm, frame)
        assert T.shape == (4, 4) and (T[3] == [0, 0, 0, 1]).all()
        p_dot = (Tp[:3, 3] - Tm[:3, 3]) / (2 * h)
        omega_world = rotation_log(Tp[:3, :3] @ Tm[:3, :3].T) / (2 * h)
        R = T[:3, :3]
        J_lwa = plume.frame_jacobian(model, data, q, frame, frame="local_world_aligned")
        J_world = plume.frame_jacobian(model, data, q, frame, frame="world")
        J_local = plume.frame_jacobian(model, data, q, frame, frame="local")
        tol = 1e-6 * max(1.0, np.abs(J_lwa).max())
        assert np.abs(J_lwa[3:] @ v - p_dot).max() < tol, frame
        assert np.abs(J_lwa[:3] @ v - omega_world).max() < tol, frame
        # world: velocity of the point at the world origin moving with the frame
        assert np.abs(J_world[:3] @ v - omega_world).max() < tol, frame
        assert np.abs(J_world[3:] @ v - (p_dot - np.cross(omega_world, T[:3, 3]))).max() < tol, frame
        # local: the same twist in the frame's own axes
        assert np.abs(J_local[:3] @ v - R.T @ omega_world).max() < tol, frame
        assert np.abs(J_local[3:] @ v - R.T @ p_dot).max() < tol, frame
        assert np.allclose(plume.frame_position(model, data, q, frame), T[:3, 3], atol=0, rtol=0)


def test_results_are_new_arrays_not_views_of_data():
    model = plume.load_urdf(model_path("quadruped.urdf"), root="free")
    data = model.data()
    q = model.neutral()
    J1 = plume.frame_jacobian(model, data, q, "LF_foot", frame="world")
    copy = J1.copy()
    plume.frame_jacobian(model, data, q, "RH_foot", frame="world")
    assert (J1 == copy).all()
    H1 = plume.crba(model, data, q)
    H1c = H1.copy()
    plume.crba(model, data, model.random_configuration(2))
    assert (H1 == H1c).all()


def test_model_attributes():
    model = plume.load_urdf(model_path("quadruped.urdf"), root="free")
    assert (model.nq, model.nv) == (19, 18)
    assert len(model.joint_names) == 13 and "LF_KFE" in model.joint_names
    assert "LF_foot" in model.frame_names
    q = model.neutral()
    assert q.shape == (19,) and q[6] == 1.0
    assert (model.random_configuration(5) == model.random_configuration(5)).all()
    assert not (model.random_configuration(5) == model.random_configuration(6)).all()
    # the total mass from the URDF's own numbers
    assert abs(model.total_mass - 22.2) < 0.05


def test_docstrings_say_units_and_shapes():
    for f in (plume.load_urdf, plume.crba, plume.bias_forces, plume.rnea, plume.aba, plume.frame_jacobian,
              plume.frame_placement, plume.load_world, plume.run_batch, plume.Simulator.run,
              plume.Simulator.set_controller):
        assert f.__doc__ and len(f.__doc__) > 40, f
    import inspect
    for name in plume.__all__:
        obj = getattr(plume, name)
        assert obj.__doc__, name
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if not attr.startswith("_") and (callable(member) or isinstance(member, property)):
                    assert getattr(obj, attr).__doc__, "%s.%s" % (name, attr)
    doc = plume.aba.__doc__
    assert "(nv,)" in doc and "(nq,)" in doc and "N m" in doc and "rad/s^2" in doc
