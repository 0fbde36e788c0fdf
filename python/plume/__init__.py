"""plume: rigid-body dynamics, contact and event-driven simulation of robots loaded from URDF.

Dynamics (arrays are numpy float64; q has nq entries, v, a and tau nv)::

    import plume
    model = plume.load_urdf("models/quadruped.urdf", root="free")
    data = model.data()
    q = model.neutral()
    H = plume.crba(model, data, q)                 # (nv, nv), symmetric
    a = plume.aba(model, data, q, v, tau)           # (nv,)
    J = plume.frame_jacobian(model, data, q, "LF_foot", frame="world")   # (6, nv)

Simulation and batches::

    scenario = plume.load_world("models/worlds/quadruped_standing.xml")
    sim = plume.Simulator(scenario)
    sim.set_controller(lambda t, q, v: tau)          # optional; replaces the world's PD
    result = sim.run()                              # result.trajectory["q"], result.events, result.summary
    results = plume.run_batch([scenario.with_overrides(contact={"mu": mu}) for mu in (0.2, 0.5, 1.0)])

Errors are plume.Error subclasses carrying the C++ message: LoadError (URDF),
WorldError (world file), SimulationError (a run that cannot start or whose
controller broke its contract), ArgumentError (also a ValueError: wrong size,
non-finite entry, unknown name).
"""

import concurrent.futures
import copy
import os
import xml.etree.ElementTree as ET

from . import _plume
from ._plume import (  # noqa: F401  (re-exported)
    ArgumentError,
    Data,
    Error,
    LoadError,
    Model,
    SimulationError,
    WorldError,
    aba,
    bias_forces,
    center_of_mass,
    crba,
    frame_jacobian,
    frame_placement,
    frame_position,
    gravity_torques,
    integrate,
    kinetic_energy,
    potential_energy,
    rnea,
)

__all__ = [
    "ArgumentError", "Data", "Error", "LoadError", "Model", "Result", "Scenario", "SimulationError", "Simulator",
    "WorldError", "aba", "bias_forces", "center_of_mass", "crba", "frame_jacobian", "frame_placement",
    "frame_position", "gravity_torques", "integrate", "kinetic_energy", "load_urdf", "load_world",
    "potential_energy", "rnea", "run_batch",
]


def load_urdf(path, root="fixed", package_dirs=(), inertia="warn"):
    return _plume.load_urdf(os.fspath(path), root, [os.fspath(d) for d in package_dirs], inertia)


load_urdf.__doc__ = _plume.load_urdf.__doc__


class Scenario:
    """A world file (docs/world_format.md) as its text plus overrides.

    It pickles as that text, its source path, the directory its relative URDF
    paths are resolved from and the overrides — never as C++ pointers — so it
    can be sent to another process or machine (which must see the same URDF
    files at the same paths). The C++ world is built on first use.
    """

    def __init__(self, xml, source="<string>", base_directory=".", overrides=None):
        self.xml = xml
        self.source = source
        self.base_directory = os.path.abspath(base_directory)
        self.overrides = copy.deepcopy(overrides) if overrides else {}
        self._cpp = None

    # -- pickling: the text and the overrides only
    def __getstate__(self):
        return {"xml": self.xml, "source": self.source, "base_directory": self.base_directory,
                "overrides": self.overrides}

    def __setstate__(self, state):
        self.__init__(state["xml"], state["source"], state["base_directory"], state["overrides"])

    def __repr__(self):
        return "<plume.Scenario %s%s>" % (self.source, " " + repr(self.overrides) if self.overrides else "")

    def with_overrides(self, simulate=None, contact=None, state=None):
        """A copy with attributes replaced before the world is built.

        simulate: {attribute: value} of <simulate> (duration, scheme, abs_tol, ...);
        contact: {attribute: value} of the default <contact> (mu, restitution, ...);
        state: {model name: {"q": [...], "v": [...]}} initial states.
        Values are written as world-file text (lists joined by spaces), so
        every check of the world-file reader applies (WorldError otherwise).
        """
        overrides = copy.deepcopy(self.overrides)
        for key, value in (("simulate", simulate), ("contact", contact), ("state", state)):
            if value:
                overrides.setdefault(key, {}).update(copy.deepcopy(value))
        return Scenario(self.xml, self.source, self.base_directory, overrides)

    def world_text(self):
        """The world file's text with the overrides applied."""
        if not self.overrides:
            return self.xml
        try:
            root = ET.fromstring(self.xml)
        except ET.ParseError as e:
            raise WorldError("%s: not well-formed XML (%s)" % (self.source, e)) from None

        def text(value):
            if isinstance(value, bool):
                return "true" if value else "false"
            if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
                return " ".join(repr(float(x)) for x in list(value))
            return repr(value) if isinstance(value, float) else str(value)

        def element(tag, pred=lambda e: True):
            for e in root.findall(tag):
                if pred(e):
                    return e
            return ET.SubElement(root, tag)

        for key, value in self.overrides.get("simulate", {}).items():
            element("simulate").set(key, text(value))
        for key, value in self.overrides.get("contact", {}).items():
            element("contact", lambda e: "a" not in e.attrib and "b" not in e.attrib).set(key, text(value))
        for name, st in self.overrides.get("state", {}).items():
            models = [m for m in root.findall("model") if m.get("name") == name]
            if not models:
                raise WorldError("%s: state override for model '%s', which the world does not have" %
                                 (self.source, name))
            s = models[0].find("state")
            if s is None:
                s = ET.SubElement(models[0], "state")
            for key, value in st.items():
                s.set(key, text(value))
        return ET.tostring(root, encoding="unicode")

    def _scenario(self):
        if self._cpp is None:
            self._cpp = _plume._load_world_string(self.world_text(), self.source, self.base_directory)
        return self._cpp

    @property
    def model(self):
        """The world's combined Model (every name prefixed with 'model_name/')."""
        return self._scenario().model

    @property
    def nq(self):
        """Number of configuration coordinates of the whole world."""
        return self._scenario().nq

    @property
    def nv(self):
        """Number of velocity coordinates of the whole world."""
        return self._scenario().nv

    @property
    def q0(self):
        """Initial configuration, (nq,)."""
        return self._scenario().q0

    @property
    def v0(self):
        """Initial velocity, (nv,)."""
        return self._scenario().v0

    @property
    def duration(self):
        """The run's end time [s] (<simulate duration>)."""
        return self._scenario().duration

    @property
    def model_names(self):
        """The names of the world's models (the prefixes of its joint and frame names)."""
        return self._scenario().model_names


def load_world(path):
    """load_world(path) -> Scenario: reads a world file (docs/world_format.md).

    Relative URDF paths are resolved from the file's directory. Raises
    WorldError naming the file, the element and its line.
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            xml = f.read()
    except OSError as e:
        raise WorldError("%s: cannot read the world file (%s)" % (path, e.strerror)) from None
    scenario = Scenario(xml, path, os.path.dirname(os.path.abspath(path)))
    scenario._scenario()  # report errors now, not at the first run
    return scenario


class Result:
    """What a run produced (picklable).

    status: "finished", "contact_failure", "step_underflow", "non_finite",
    "event_limit", "step_limit" or "failed"; message: why it stopped early;
    time: where it stopped [s]; trajectory: {"time": (N,), "q": (N, nq),
    "v": (N, nv), "energy": (N,)} at the output times and every event;
    events: one dict per events.csv row (time, kind, contact, body_a, body_b,
    pre_normal_velocity, post_normal_velocity, impulse); summary: the
    summary.json dict of `plume simulate` (without its file entries).
    """

    def __init__(self, status, message, time, trajectory, events, summary):
        self.status = status
        self.message = message
        self.time = time
        self.trajectory = trajectory
        self.events = events
        self.summary = summary

    @property
    def finished(self):
        """True when the run reached its end time."""
        return self.status == "finished"

    def __repr__(self):
        return "<plume.Result %s t=%g s, %d samples, %d events>" % (
            self.status, self.time, len(self.trajectory["time"]), len(self.events))


class Simulator:
    """Simulator(scenario): runs a world (event-driven, compliant or time-stepping as it says).

    The world's own <controller> (the built-in PD) is installed; set_controller
    replaces it. Raises SimulationError when the world cannot be simulated
    (e.g. an initial state sunk into the ground), with the C++ message.
    """

    def __init__(self, scenario):
        if isinstance(scenario, (str, os.PathLike)):
            scenario = load_world(scenario)
        self.scenario = scenario
        self._sim = _plume._Simulator(scenario._scenario())

    def set_controller(self, controller, period=None):
        """set_controller(controller, period=None): controller(t, q, v) -> tau.

        Called at every sample time (zero-order hold) with t [s], q (nq,) and
        v (nv,), returning tau (nv,) [N m or N]. period [s] defaults to the
        world's controller period (or 1e-3). A wrong-size or non-finite tau
        raises ValueError; a non-zero tau on a free-flyer's or planar joint's
        coordinates stops the run (SimulationError naming the joint). None
        removes the controller.
        """
        self._sim.set_controller(controller, period)

    def run(self, duration=None):
        """run(duration=None) -> Result: simulates until t = duration [s] (default: the world's).

        Releases the GIL while it runs. A run stopped by a physical failure
        (contact_failure, step_underflow, ...) returns its Result with that
        status; one stopped because the controller broke its contract raises
        SimulationError whose .result holds what was computed.
        """
        r = self._sim.run(duration)
        summary = r["summary"]
        summary["coordinates"] = _coordinates(self.scenario.model)
        if os.path.exists(self.scenario.source):
            summary["world_absolute"] = os.path.normpath(os.path.abspath(self.scenario.source))
        result = Result(**r)
        if result.status == "failed":
            error = SimulationError(result.message)
            error.result = result
            raise error
        return result

    @property
    def time(self):
        """The simulated time reached [s]."""
        return self._sim.time

    @property
    def q(self):
        """The current configuration, (nq,) (a copy)."""
        return self._sim.q

    @property
    def v(self):
        """The current velocity, (nv,) (a copy)."""
        return self._sim.v

    @property
    def warnings(self):
        """What contact leaves out (unusable shapes, pairs without a kernel), one line each."""
        return self._sim.warnings


_COMPONENTS = {  # joint type -> (q components, v components), (name, unit) each; apps/cli_common.cpp's table
    "revolute": ([("angle", "rad")], [("angular_velocity", "rad/s")]),
    "continuous": ([("angle", "rad")], [("angular_velocity", "rad/s")]),
    "prismatic": ([("position", "m")], [("velocity", "m/s")]),
    "planar": ([("x", "m"), ("y", "m"), ("theta", "rad")], [("vx", "m/s"), ("vy", "m/s"), ("omega_z", "rad/s")]),
    "free-flyer": ([("x", "m"), ("y", "m"), ("z", "m"), ("qx", ""), ("qy", ""), ("qz", ""), ("qw", "")],
                   [("wx", "rad/s"), ("wy", "rad/s"), ("wz", "rad/s"), ("vx", "m/s"), ("vy", "m/s"), ("vz", "m/s")]),
}


def _coordinates(model):
    """summary.json's "coordinates": every trajectory column's model, joint, component and unit."""
    q, v = {}, {}
    for name, kind, iq, iv in zip(model.joint_names, model.joint_types, model.joint_q_index, model.joint_v_index):
        owner, _, joint = name.partition("/")
        qc, vc = _COMPONENTS.get(kind, ([], []))
        for prefix, index, comps, out in (("q_", iq, qc, q), ("v_", iv, vc, v)):
            for k, (component, unit) in enumerate(comps):
                column = prefix + str(index + k)
                out[index + k] = {"column": column, "model": owner, "joint": joint, "type": kind,
                                  "component": component, "unit": unit}
    return {e["column"]: e for e in [q[k] for k in sorted(q)] + [v[k] for k in sorted(v)]}


def _run_one(scenario):
    """Runs one scenario to its end (module level, so process pools and Dask can pickle it)."""
    if isinstance(scenario, (str, os.PathLike)):
        scenario = load_world(scenario)
    return Simulator(scenario).run()


def run_batch(scenarios, jobs=None, executor=None):
    """run_batch(scenarios, jobs=None, executor=None) -> [Result]: runs every scenario to its end.

    scenarios: Scenario objects (or world-file paths); the results come back
    in the same order. Without an executor, `jobs` threads (default: the
    number of CPUs) run them; plume releases the GIL, so they run in
    parallel. executor: any concurrent.futures.Executor — a
    ProcessPoolExecutor on one machine, or a Dask cluster's
    `client.get_executor()` across many (the scenarios are pickled as world
    text plus overrides; every worker must see the URDF files at the same
    paths). An exception in a run is raised here.
    """
    scenarios = list(scenarios)
    if executor is not None:
        futures = [executor.submit(_run_one, s) for s in scenarios]
        return [f.result() for f in futures]
    jobs = jobs or os.cpu_count() or 1
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(_run_one, scenarios))
