// plume._plume: the pybind11 layer of the Python package `plume`.
//
// It converts and calls; there is no logic here that the C++ library lacks.
// Arrays come in as any array-like, are checked for size and finiteness
// (ValueError naming the argument and the expected size) and are passed to
// the checked C++ entry points without a copy when they already are
// contiguous float64. Results are new numpy arrays, never views into Data.
// The GIL is released around everything that can take long: loading, running
// a simulation (re-acquired only to call a Python controller).
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <ctime>
#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "plume/plume.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace plume::python {
namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// Python exception classes (created in PYBIND11_MODULE).
PyObject* g_error = nullptr;
PyObject* g_load_error = nullptr;
PyObject* g_world_error = nullptr;
PyObject* g_simulation_error = nullptr;
PyObject* g_argument_error = nullptr;

// A C++ exception already turned into the Python class it is raised as.
struct Raise {
  PyObject* type;
  std::string message;
};

std::string fmt(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

// `x` as a 1-D float64 array of n finite entries, or ValueError naming it.
Array vector_arg(const py::handle& x, const char* name, Eigen::Index n, const char* size_name) {
  Array a;
  if (Array::check_(x)) {
    a = py::reinterpret_borrow<Array>(x);  // already float64 and contiguous: no conversion call
  } else {
    try {
      a = Array::ensure(x);
    } catch (const py::error_already_set&) {
      a = Array();
    }
  }
  if (!a) {
    PyErr_Clear();
    throw py::value_error(std::string(name) + " must be an array of " + std::to_string(n) + " numbers (" +
                          size_name + "), got " + std::string(py::str(py::type::of(x))));
  }
  if (a.ndim() != 1 || a.shape(0) != n) {
    std::string shape = "(";
    for (py::ssize_t k = 0; k < a.ndim(); ++k) shape += (k ? ", " : "") + std::to_string(a.shape(k));
    shape += a.ndim() == 1 ? ",)" : ")";
    throw py::value_error(std::string(name) + " has shape " + shape + ", expected (" + std::to_string(n) + ",) (" +
                          size_name + " = " + std::to_string(n) + ")");
  }
  const double* p = a.data();
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!std::isfinite(p[i])) {
      throw py::value_error(std::string(name) + "[" + std::to_string(i) + "] = " + fmt(p[i]) + " is not finite (" +
                            name + " needs " + std::to_string(n) + " finite entries, " + size_name + ")");
    }
  }
  return a;
}

Eigen::Map<const VectorX> map(const Array& a) { return Eigen::Map<const VectorX>(a.data(), a.shape(0)); }

py::array_t<double> to_numpy(const VectorX& x) {
  py::array_t<double> out(x.size());
  std::copy(x.data(), x.data() + x.size(), out.mutable_data());
  return out;
}

template <class M>
py::array_t<double> matrix_to_numpy(const M& m) {
  py::array_t<double> out({m.rows(), m.cols()});
  auto r = out.mutable_unchecked<2>();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) r(i, j) = m(i, j);
  }
  return out;
}

// A Data with the model it was built for, so the functions can check it.
struct PyData {
  Data data;
  explicit PyData(const Model& m) : data(m) {}
};

int frame_arg(const Model& model, const py::handle& frame) {
  if (py::isinstance<py::str>(frame)) return model.get_frame(frame.cast<std::string>());
  if (py::isinstance<py::int_>(frame)) return frame.cast<int>();
  throw py::type_error("frame must be a frame name (str) or index (int)");
}

// ---- simulation -----------------------------------------------------------------------------

py::dict event_dict(const SimulationEvent& e) {
  return py::dict("time"_a = e.time, "kind"_a = to_string(e.kind), "contact"_a = e.contact, "body_a"_a = e.body_a,
                  "body_b"_a = e.body_b, "pre_normal_velocity"_a = e.pre_normal_velocity,
                  "post_normal_velocity"_a = e.post_normal_velocity, "impulse"_a = e.impulse);
}

py::object number_or_none(double x) { return std::isfinite(x) ? py::object(py::float_(x)) : py::object(py::none()); }

py::list list_or_none(const VectorX& x) {
  py::list l;
  for (Eigen::Index i = 0; i < x.size(); ++i) l.append(number_or_none(x(i)));
  return l;
}

class PySimulator {
 public:
  PySimulator(const Scenario& scenario) : scenario_(scenario), sim_(make(scenario)) {
    if (scenario_.controller) {
      sim_->set_controller(scenario_.controller->function(scenario_.world.model()), scenario_.controller_period);
      controller_ = "pd";
      period_ = scenario_.controller_period;
    }
  }

  void set_controller(py::object f, std::optional<double> period) {
    const double p = period.value_or(scenario_.controller ? scenario_.controller_period : 1e-3);
    if (f.is_none()) {
      sim_->set_controller(nullptr, p);
      controller_ = "";
      return;
    }
    if (!PyCallable_Check(f.ptr())) throw py::type_error("set_controller needs a callable(t, q, v) -> tau");
    const int nv = scenario_.world.model().nv();
    auto holder = std::make_shared<py::object>(f);
    sim_->set_controller(
        [holder, nv](double t, const VectorX& q, const VectorX& v, VectorX& tau) {
          py::gil_scoped_acquire gil;
          py::object out = (*holder)(t, to_numpy(q), to_numpy(v));
          if (out.is_none()) {
            throw py::value_error("the controller returned None at t = " + fmt(t) + ", expected tau of size nv = " +
                                  std::to_string(nv));
          }
          const Array a = vector_arg(out, "tau (returned by the controller)", nv, "nv");
          tau = map(a);
        },
        p);
    controller_ = "python";
    period_ = p;
  }

  py::dict run(std::optional<double> duration) {
    const double until = duration.value_or(scenario_.options.duration);
    if (!(until >= 0.0) || !std::isfinite(until)) throw py::value_error("duration must be finite and >= 0");
    MemoryRecorder recorder;
    SimulationResult r;
    const auto t0 = std::chrono::steady_clock::now();
    {
      py::gil_scoped_release release;
      r = sim_->run_until(until, &recorder);
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result_dict(r, recorder, until, wall);
  }

  double time() const { return sim_->time(); }
  py::array_t<double> q() const { return to_numpy(sim_->q()); }
  py::array_t<double> v() const { return to_numpy(sim_->v()); }
  std::vector<std::string> warnings() const { return sim_->warnings(); }
  double energy() const { return sim_->energy(); }

 private:
  static std::unique_ptr<Simulator> make(const Scenario& s) {
    py::gil_scoped_release release;
    return std::make_unique<Simulator>(s.world, s.options);
  }

  py::dict result_dict(const SimulationResult& r, const MemoryRecorder& rec, double until, double wall) const {
    const Model& m = scenario_.world.model();
    const auto n = static_cast<py::ssize_t>(rec.times.size());
    py::array_t<double> time(n), energy(n), q({n, static_cast<py::ssize_t>(m.nq())}),
        v({n, static_cast<py::ssize_t>(m.nv())});
    auto qq = q.mutable_unchecked<2>();
    auto vv = v.mutable_unchecked<2>();
    for (py::ssize_t k = 0; k < n; ++k) {
      time.mutable_data()[k] = rec.times[static_cast<std::size_t>(k)];
      energy.mutable_data()[k] = rec.energies[static_cast<std::size_t>(k)];
      for (int i = 0; i < m.nq(); ++i) qq(k, i) = rec.q[static_cast<std::size_t>(k)](i);
      for (int i = 0; i < m.nv(); ++i) vv(k, i) = rec.v[static_cast<std::size_t>(k)](i);
    }
    py::dict trajectory("time"_a = time, "q"_a = q, "v"_a = v, "energy"_a = energy);
    py::list events;
    for (const SimulationEvent& e : rec.events) events.append(event_dict(e));

    const SimulationStatistics& st = r.statistics;
    SimulationOptions options = scenario_.options;
    py::dict s;
    s["status"] = to_string(r.status);
    s["finished"] = r.status == SimulationStatus::Finished;
    s["message"] = r.message;
    s["warnings"] = sim_->warnings();
    s["time"] = number_or_none(r.time);
    s["duration"] = until;
    s["steps"] = st.steps;
    s["rhs_evaluations"] = st.rhs_evaluations;
    s["events"] = st.events;
    s["impacts"] = st.impacts;
    s["lcp_solves"] = st.lcp_solves;
    s["projections"] = st.projections;
    s["fallbacks"] = st.fallbacks;
    s["fallback_time"] = number_or_none(st.fallback_time);
    s["max_penetration"] = number_or_none(st.max_penetration);
    s["max_limit_violation"] = number_or_none(st.max_limit_violation);
    s["energy_start"] = number_or_none(st.energy_start);
    s["energy_end"] = number_or_none(st.energy_end);
    s["wall_time"] = wall;
    s["real_time_factor"] = wall > 0.0 ? number_or_none(r.time / wall) : py::object(py::none());
    s["scheme"] = to_string(options.scheme);
    s["integrator"] = to_string(options.integrator);
    s["time_stepping_rule"] = to_string(options.time_stepping_rule);
    s["nq"] = m.nq();
    s["nv"] = m.nv();
    py::list models;
    for (const WorldModel& wm : scenario_.world.models()) {
      models.append(py::dict("name"_a = wm.name, "urdf"_a = wm.source, "q_index"_a = wm.q_index, "nq"_a = wm.nq,
                             "v_index"_a = wm.v_index, "nv"_a = wm.nv));
    }
    s["models"] = models;
    s["world"] = scenario_.source;
    if (controller_ == "pd") {
      const PdController& pd = *scenario_.controller;
      s["controller"] = py::dict("type"_a = "pd", "rate"_a = 1.0 / period_, "kp"_a = list_or_none(pd.kp),
                                 "kd"_a = list_or_none(pd.kd), "target"_a = list_or_none(pd.q_target),
                                 "torque_limits"_a = options.torque_limits,
                                 "effort_limit"_a = list_or_none(m.effort_limit()));
    } else if (controller_ == "python") {
      s["controller"] = py::dict("type"_a = "python", "rate"_a = 1.0 / period_,
                                 "torque_limits"_a = options.torque_limits,
                                 "effort_limit"_a = list_or_none(m.effort_limit()));
    } else {
      s["controller"] = py::none();
    }
    s["output_rate"] = options.output_rate;
    s["samples"] = static_cast<long>(rec.times.size());
    s["event_rows"] = static_cast<long>(rec.events.size());
    s["contact_rows"] = static_cast<long>(rec.contacts.size());
    return py::dict("status"_a = to_string(r.status), "message"_a = r.message, "time"_a = r.time,
                    "trajectory"_a = trajectory, "events"_a = events, "summary"_a = s);
  }

  Scenario scenario_;
  std::unique_ptr<Simulator> sim_;
  std::string controller_;
  double period_ = 0.0;
};

}  // namespace
}  // namespace plume::python

PYBIND11_MODULE(_plume, m) {
  using namespace plume;
  using namespace plume::python;
  m.doc() = "plume's C++ library, bound with pybind11 (use the package `plume`, not this module).";
  // Initialise pybind11's numpy API (function-local statics) now, under the
  // import's GIL: initialised first by two threads at once — run_batch's —
  // it deadlocks (one waits in the static's guard holding the GIL, the other
  // needs the GIL to finish numpy's import).
  py::module_::import("numpy");
  { py::array_t<double> warm_up(1); (void)warm_up; py::array_t<double, py::array::f_style> warm_up_f({1, 1}); (void)warm_up_f; }

  // ---- errors ---------------------------------------------------------------------------------
  static py::exception<Error> error(m, "Error");
  g_error = error.ptr();
  static py::exception<UrdfError> load_error(m, "LoadError", error);
  g_load_error = load_error.ptr();
  static py::exception<WorldError> world_error(m, "WorldError", error);
  g_world_error = world_error.ptr();
  static py::exception<Error> simulation_error(m, "SimulationError", error);
  g_simulation_error = simulation_error.ptr();
  static py::exception<ArgumentError> argument_error(m, "ArgumentError",
                                                     py::make_tuple(error, py::handle(PyExc_ValueError)));
  g_argument_error = argument_error.ptr();
  py::setattr(error, "__doc__", py::str("Base class of every error plume raises on purpose; the message is the C++ one."));
  py::setattr(load_error, "__doc__", py::str("A URDF that cannot be loaded (file, XML, physics, meshes)."));
  py::setattr(world_error, "__doc__", py::str("A world file that cannot be read (names file, element, line)."));
  py::setattr(simulation_error, "__doc__",
              py::str("A simulation that cannot start or was stopped by its controller's contract "
                      "(wrong-size or non-finite tau, torque on an unactuated joint); `.result` holds what was "
                      "computed up to then when there is something."));
  py::setattr(argument_error, "__doc__",
              py::str("A bad argument (size, non-finite entry, unknown name); also a ValueError."));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Raise& r) {
      PyErr_SetString(r.type, r.message.c_str());
    } catch (const UrdfError& e) {
      PyErr_SetString(g_load_error, e.what());
    } catch (const ModelError& e) {
      PyErr_SetString(g_load_error, e.what());
    } catch (const GeometryError& e) {
      PyErr_SetString(g_load_error, e.what());
    } catch (const WorldError& e) {
      PyErr_SetString(g_world_error, e.what());
    } catch (const ArgumentError& e) {
      PyErr_SetString(g_argument_error, e.what());
    } catch (const Error& e) {
      PyErr_SetString(g_error, e.what());
    }
  });

  // ---- Model, Data ------------------------------------------------------------------------------
  py::class_<Model, std::shared_ptr<Model>>(m, "Model",
                                            "An immutable kinematic tree loaded from a URDF (load_urdf). Share it "
                                            "freely; build one Data per thread with model.data().")
      .def_property_readonly("name", &Model::name, "The robot's name (URDF <robot name>).")
      .def_property_readonly("nq", &Model::nq, "Number of configuration coordinates (a free-flyer counts 7).")
      .def_property_readonly("nv", &Model::nv, "Number of velocity coordinates (degrees of freedom).")
      .def_property_readonly("nbodies", &Model::nbodies, "Number of bodies, the world body 0 included.")
      .def_property_readonly("total_mass", &Model::total_mass, "Sum of every link's mass [kg].")
      .def_property_readonly(
          "gravity", [](const Model& mo) { return to_numpy(mo.gravity()); }, "Gravity, world coordinates [m/s^2], (3,).")
      .def_property_readonly(
          "joint_names",
          [](const Model& mo) {
            std::vector<std::string> names;
            for (int i = 1; i < mo.nbodies(); ++i) names.push_back(mo.joint(i).name);
            return names;
          },
          "Names of the moving joints (fixed joints are merged), in body order; the root joint first "
          "when the model has one ('root_joint' for a free-flyer or planar root added by load_urdf).")
      .def_property_readonly(
          "joint_types",
          [](const Model& mo) {
            std::vector<std::string> types;
            for (int i = 1; i < mo.nbodies(); ++i) types.push_back(to_string(mo.joint(i).type));
            return types;
          },
          "Type of each joint of joint_names: revolute, continuous, prismatic, planar, free-flyer.")
      .def_property_readonly(
          "joint_q_index",
          [](const Model& mo) {
            std::vector<int> k;
            for (int i = 1; i < mo.nbodies(); ++i) k.push_back(mo.joint(i).q_index);
            return k;
          },
          "Index in q of each joint's first coordinate.")
      .def_property_readonly(
          "joint_v_index",
          [](const Model& mo) {
            std::vector<int> k;
            for (int i = 1; i < mo.nbodies(); ++i) k.push_back(mo.joint(i).v_index);
            return k;
          },
          "Index in v (and tau) of each joint's first velocity coordinate.")
      .def_property_readonly(
          "frame_names",
          [](const Model& mo) {
            std::vector<std::string> names;
            for (const Frame& f : mo.frames()) names.push_back(f.name);
            return names;
          },
          "Names of the frames: every URDF link, merged ones included.")
      .def_property_readonly(
          "body_names",
          [](const Model& mo) {
            std::vector<std::string> names;
            for (int i = 0; i < mo.nbodies(); ++i) names.push_back(mo.body_name(i));
            return names;
          },
          "Names of the bodies, 'world' first.")
      .def_property_readonly(
          "lower_position_limit", [](const Model& mo) { return to_numpy(mo.lower_position_limit()); },
          "Lower position limit per configuration coordinate, (nq,) (-inf where none).")
      .def_property_readonly(
          "upper_position_limit", [](const Model& mo) { return to_numpy(mo.upper_position_limit()); },
          "Upper position limit per configuration coordinate, (nq,) (+inf where none).")
      .def_property_readonly(
          "effort_limit", [](const Model& mo) { return to_numpy(mo.effort_limit()); },
          "Effort limit per velocity coordinate, (nv,) [N m or N] (+inf where none).")
      .def_property_readonly(
          "warnings", &Model::warnings, "What the loader accepted but you should know (inertia, mimic joints...).")
      .def(
          "neutral", [](const Model& mo) { return to_numpy(neutral_configuration(mo)); },
          "neutral() -> q, (nq,): zero joint angles, identity quaternions (x, y, z, w order), root at the origin.")
      .def(
          "random_configuration",
          [](const Model& mo, std::uint64_t rng_seed) { return to_numpy(random_configuration(mo, rng_seed)); },
          "rng_seed"_a = 0,
          "random_configuration(rng_seed=0) -> q, (nq,): a configuration within the joint limits (unbounded "
          "joints in [-pi, pi], a free-flyer's position in [-1, 1] m and a uniform random unit quaternion); "
          "the same seed gives the same q.")
      .def(
          "data", [](const Model& mo) { return std::make_unique<PyData>(mo); },
          "data() -> Data: the workspace of the dynamics functions for this model; one per thread.")
      .def("frame_index", &Model::get_frame, "name"_a,
           "frame_index(name) -> int. Raises ArgumentError naming the frame and suggesting the name meant.")
      .def("joint_index", &Model::get_joint, "name"_a,
           "joint_index(name) -> int (the body index the joint moves). Raises ArgumentError suggesting the name "
           "meant.")
      .def("__repr__", [](const Model& mo) {
        return "<plume.Model '" + mo.name() + "' nq=" + std::to_string(mo.nq()) + " nv=" + std::to_string(mo.nv()) +
               " bodies=" + std::to_string(mo.nbodies()) + ">";
      });

  py::class_<PyData>(m, "Data",
                     "The workspace of the dynamics functions for one Model (model.data()); not shared between "
                     "threads. Results are returned as new arrays, never views into it.");

  m.def(
      "load_urdf",
      [](const std::string& path, const std::string& root, const std::vector<std::string>& package_dirs,
         const std::string& inertia) {
        urdf::LoadOptions o;
        try {
          o.root = urdf::parse_root_joint(root);
          o.inertia = parse_inertia_policy(inertia);
        } catch (const Error& e) {
          throw ArgumentError(e.what());  // a bad option word: plume.ArgumentError, also a ValueError
        }
        o.package_dirs = package_dirs;
        py::gil_scoped_release release;
        return std::make_shared<Model>(urdf::load(path, o));
      },
      "path"_a, "root"_a = "fixed", "package_dirs"_a = std::vector<std::string>{}, "inertia"_a = "warn",
      "load_urdf(path, root='fixed', package_dirs=[], inertia='warn') -> Model\n\n"
      "root: 'fixed' (welded to the world), 'free' (a free-flyer: q = [x, y, z, qx, qy, qz, qw, ...], "
      "v = [omega; v] in the body frame) or 'planar'.\npackage_dirs: directories searched first for package:// "
      "URIs.\ninertia: 'strict', 'warn' or 'repair' for unphysical inertias.\nRaises LoadError naming the file "
      "and the link or joint at fault.");

  const auto check_q = [](const Model& mo, const py::handle& q) { return vector_arg(q, "q", mo.nq(), "nq"); };
  const auto check_v = [](const Model& mo, const py::handle& v, const char* name) {
    return vector_arg(v, name, mo.nv(), "nv");
  };

  m.def(
      "crba",
      [check_q](const Model& mo, PyData& d, const py::handle& q) {
        const Array qa = check_q(mo, q);
        return matrix_to_numpy(crba(mo, d.data, map(qa)));
      },
      "model"_a, "data"_a, "q"_a,
      "crba(model, data, q) -> H, (nv, nv)\n\nThe joint-space inertia matrix H(q) by the composite-rigid-body "
      "algorithm, full and symmetric (both triangles) [kg m^2, kg m, kg].\nq: (nq,) configuration. "
      "Raises ValueError naming a wrong-size or non-finite argument.");
  m.def(
      "bias_forces",
      [check_q, check_v](const Model& mo, PyData& d, const py::handle& q, const py::handle& v) {
        const Array qa = check_q(mo, q), va = check_v(mo, v, "v");
        return to_numpy(bias_forces(mo, d.data, map(qa), map(va)));
      },
      "model"_a, "data"_a, "q"_a, "v"_a,
      "bias_forces(model, data, q, v) -> C, (nv,)\n\nC(q, v): gravity, Coriolis and centrifugal joint forces "
      "[N m or N], so that H(q) dv/dt + C = tau.\nq: (nq,), v: (nv,) [rad/s or m/s].");
  m.def(
      "gravity_torques",
      [check_q](const Model& mo, PyData& d, const py::handle& q) {
        const Array qa = check_q(mo, q);
        return to_numpy(gravity_torques(mo, d.data, map(qa)));
      },
      "model"_a, "data"_a, "q"_a, "gravity_torques(model, data, q) -> g, (nv,): the gravity part of C [N m or N].");
  m.def(
      "rnea",
      [check_q, check_v](const Model& mo, PyData& d, const py::handle& q, const py::handle& v, const py::handle& a) {
        const Array qa = check_q(mo, q), va = check_v(mo, v, "v"), aa = check_v(mo, a, "a");
        return to_numpy(rnea(mo, d.data, map(qa), map(va), map(aa)));
      },
      "model"_a, "data"_a, "q"_a, "v"_a, "a"_a,
      "rnea(model, data, q, v, a) -> tau, (nv,)\n\nInverse dynamics by the recursive Newton-Euler algorithm: "
      "the joint forces tau = H(q) a + C(q, v) [N m or N].\nq: (nq,) configuration, v: (nv,) velocities "
      "[rad/s or m/s], a: (nv,) accelerations [rad/s^2 or m/s^2].");
  m.def(
      "aba",
      [check_q, check_v](const Model& mo, PyData& d, const py::handle& q, const py::handle& v, const py::handle& tau) {
        const Array qa = check_q(mo, q), va = check_v(mo, v, "v"), ta = check_v(mo, tau, "tau");
        return to_numpy(aba(mo, d.data, map(qa), map(va), map(ta)));
      },
      "model"_a, "data"_a, "q"_a, "v"_a, "tau"_a,
      "aba(model, data, q, v, tau) -> a, (nv,)\n\nForward dynamics by the articulated-body algorithm: the "
      "accelerations a = H(q)^-1 (tau - C(q, v)) [rad/s^2 or m/s^2].\nq: (nq,) configuration, v: (nv,) "
      "velocities [rad/s or m/s], tau: (nv,) joint forces [N m or N].");
  m.def(
      "frame_jacobian",
      [check_q](const Model& mo, PyData& d, const py::handle& q, const py::handle& name, const std::string& frame) {
        const Array qa = check_q(mo, q);
        const int f = frame_arg(mo, name);
        const ReferenceFrame ref = parse_reference_frame(frame);
        py::array_t<double, py::array::f_style> J({py::ssize_t{6}, static_cast<py::ssize_t>(mo.nv())});
        Eigen::Map<Matrix6X> Jm(J.mutable_data(), 6, mo.nv());
        frame_jacobian(mo, d.data, map(qa), f, ref, Jm);
        return J;
      },
      "model"_a, "data"_a, "q"_a, "name"_a, "frame"_a = "local_world_aligned",
      "frame_jacobian(model, data, q, name, frame='local_world_aligned') -> J, (6, nv)\n\nThe Jacobian of frame "
      "`name` (a URDF link; str or index): J v is the frame's spatial velocity [omega; v] (angular first) "
      "[rad/s; m/s].\nframe: 'world' (world axes, at the world origin), 'local' (the frame's own axes and "
      "origin) or 'local_world_aligned' (the frame's origin, world axes: rows 3-5 are the velocity of the "
      "frame origin in the world, the derivative of frame_placement(...)[:3, 3]).\nRaises ArgumentError "
      "naming an unknown frame and suggesting the name meant.");
  m.def(
      "frame_placement",
      [check_q](const Model& mo, PyData& d, const py::handle& q, const py::handle& name) {
        const Array qa = check_q(mo, q);
        const Transform X = frame_placement(mo, d.data, map(qa), frame_arg(mo, name));
        Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
        T.topLeftCorner<3, 3>() = X.pose_rotation();
        T.topRightCorner<3, 1>() = X.pose_translation();
        return matrix_to_numpy(T);
      },
      "model"_a, "data"_a, "q"_a, "name"_a,
      "frame_placement(model, data, q, name) -> T, (4, 4)\n\nThe pose of frame `name` in the world as a "
      "homogeneous matrix [R p; 0 1]: R's columns are the frame's axes in world coordinates, p its origin [m].");
  m.def(
      "frame_position",
      [check_q](const Model& mo, PyData& d, const py::handle& q, const py::handle& name) {
        const Array qa = check_q(mo, q);
        return to_numpy(frame_position(mo, d.data, map(qa), frame_arg(mo, name)));
      },
      "model"_a, "data"_a, "q"_a, "name"_a,
      "frame_position(model, data, q, name) -> p, (3,): the world position of frame `name`'s origin [m].");
  m.def(
      "center_of_mass",
      [check_q](const Model& mo, PyData& d, const py::handle& q) {
        const Array qa = check_q(mo, q);
        return to_numpy(center_of_mass(mo, d.data, map(qa)));
      },
      "model"_a, "data"_a, "q"_a, "center_of_mass(model, data, q) -> c, (3,): the centre of mass in the world [m].");
  m.def(
      "kinetic_energy",
      [check_q, check_v](const Model& mo, PyData& d, const py::handle& q, const py::handle& v) {
        const Array qa = check_q(mo, q), va = check_v(mo, v, "v");
        return kinetic_energy(mo, d.data, map(qa), map(va));
      },
      "model"_a, "data"_a, "q"_a, "v"_a, "kinetic_energy(model, data, q, v) -> float: 1/2 v^T H v [J].");
  m.def(
      "potential_energy",
      [check_q](const Model& mo, PyData& d, const py::handle& q) {
        const Array qa = check_q(mo, q);
        return potential_energy(mo, d.data, map(qa));
      },
      "model"_a, "data"_a, "q"_a, "potential_energy(model, data, q) -> float: -sum m_i g^T c_i [J].");
  m.def(
      "integrate",
      [check_q, check_v](const Model& mo, const py::handle& q, const py::handle& v, double dt) {
        const Array qa = check_q(mo, q), va = check_v(mo, v, "v");
        return to_numpy(integrate(mo, map(qa), map(va), dt));
      },
      "model"_a, "q"_a, "v"_a, "dt"_a,
      "integrate(model, q, v, dt) -> q', (nq,): the configuration reached from q moving at constant velocity "
      "v (nv,) for dt [s] (quaternions on the sphere).");

  // For bench/bench_python.py: CPU time per checked C++ call [ns], measured in
  // this process, so the Python call's overhead is the difference.
  m.def(
      "_cpu_ns_per_call",
      [check_q, check_v](const std::string& algorithm, const Model& mo, PyData& d, const py::handle& q,
                         const py::handle& v, const py::handle& x, long calls) {
        const Array qa = check_q(mo, q), va = check_v(mo, v, "v"), xa = check_v(mo, x, "x");
        const bool forward = algorithm == "aba";
        if (!forward && algorithm != "rnea") throw py::value_error("algorithm must be 'rnea' or 'aba'");
        volatile double sink = 0.0;
        const auto run = [&](long n) {
          for (long k = 0; k < n; ++k) {
            sink = sink + (forward ? aba(mo, d.data, map(qa), map(va), map(xa)) : rnea(mo, d.data, map(qa), map(va), map(xa)))(0);
          }
        };
        run(calls / 10);
        const std::clock_t c0 = std::clock();
        run(calls);
        return 1e9 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC / static_cast<double>(calls);
      },
      "algorithm"_a, "model"_a, "data"_a, "q"_a, "v"_a, "x"_a, "calls"_a);

  // ---- worlds and simulation ---------------------------------------------------------------------
  py::class_<Scenario, std::shared_ptr<Scenario>>(m, "_Scenario", "A world file, read (use plume.load_world).")
      .def_property_readonly("nq", [](const Scenario& s) { return s.world.model().nq(); })
      .def_property_readonly("nv", [](const Scenario& s) { return s.world.model().nv(); })
      .def_property_readonly("model", [](const Scenario& s) { return std::make_shared<Model>(s.world.model()); })
      .def_property_readonly("q0", [](const Scenario& s) { return to_numpy(s.world.q0()); })
      .def_property_readonly("v0", [](const Scenario& s) { return to_numpy(s.world.v0()); })
      .def_property_readonly("duration", [](const Scenario& s) { return s.options.duration; })
      .def_property_readonly("controller_period", [](const Scenario& s) { return s.controller_period; })
      .def_property_readonly("has_controller", [](const Scenario& s) { return s.controller.has_value(); })
      .def_property_readonly("model_names", [](const Scenario& s) {
        std::vector<std::string> names;
        for (const WorldModel& w : s.world.models()) names.push_back(w.name);
        return names;
      });

  m.def(
      "_load_world_string",
      [](const std::string& xml, const std::string& source, const std::string& base_directory) {
        py::gil_scoped_release release;
        return std::make_shared<Scenario>(load_world_string(xml, source, base_directory));
      },
      "xml"_a, "source"_a, "base_directory"_a);

  py::class_<PySimulator>(m, "_Simulator")
      .def(py::init([](const Scenario& s) {
             try {
               return std::make_unique<PySimulator>(s);
             } catch (const Error& e) {
               throw Raise{g_simulation_error, e.what()};
             }
           }),
           "scenario"_a)
      .def("set_controller", &PySimulator::set_controller, "controller"_a, "period"_a = py::none())
      .def("run", &PySimulator::run, "duration"_a = py::none())
      .def_property_readonly("time", &PySimulator::time)
      .def_property_readonly("q", &PySimulator::q)
      .def_property_readonly("v", &PySimulator::v)
      .def_property_readonly("energy", &PySimulator::energy)
      .def_property_readonly("warnings", &PySimulator::warnings);
}
