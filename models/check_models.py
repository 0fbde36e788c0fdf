#!/usr/bin/env python3
"""Sanity checks for plume's hand-written URDF models (python3 standard library only).

Usage:  python3 models/check_models.py [--no-check-urdf] [FILE.urdf ...]

Without file arguments every models/*.urdf next to this script is checked.
For each file it prints the link count, the movable joint count, the total mass
(sum of all <inertial> masses) and the intended root joint, and it checks:

  * well-formed tree: unique link/joint names, existing parents/children,
    exactly one root, no link with two parents;
  * no <mesh> geometry; sphere/cylinder/box sizes finite and >= 0;
  * every <inertial>: finite mass > 0, symmetric inertia tensor that is positive
    definite, whose principal moments satisfy the triangle inequalities
    (I1 + I2 >= I3 ...) and whose diagonal also does (Ixx + Iyy >= Izz ...);
  * links without <inertial> are allowed only as the root of a fixed-base model
    or in the explicit MASSLESS_OK list (the rod's point-contact links);
  * after merging fixed joints (as plume's loader does), every body moved by a
    movable joint -- and the root body when the intended root joint is not
    fixed -- has mass > 0 and a physically valid (PD + triangle) inertia;
  * movable joints have an explicit unit-length <axis>; revolute and prismatic
    joints have <limit lower upper effort velocity> with lower <= upper,
    effort >= 0, velocity > 0; <dynamics> damping/friction >= 0.

If urdfdom's `check_urdf` is on the PATH it is also run on every file (it must
exit 0); pass --no-check-urdf to skip that.  Exit status: 0 if everything
passes, 1 on any violation, 2 on usage errors.
"""

import glob
import math
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

# Intended root joint of each model (the loader adds it); default: fixed.
ROOT_JOINT = {
    "rod.urdf": "planar",
    "ball.urdf": "free-flyer",
    "cube.urdf": "free-flyer",
    "quadruped.urdf": "free-flyer",
    "humanoid.urdf": "free-flyer",
}

# Links deliberately without mass (merged into a massive parent body).
MASSLESS_OK = {
    ("rod.urdf", "end_left"),
    ("rod.urdf", "end_right"),
}

MOVABLE = {"revolute", "continuous", "prismatic", "planar", "floating"}
KNOWN_TYPES = MOVABLE | {"fixed"}
AXIS_TOL = 1e-9
REL_TOL = 1e-9


# ----------------------------------------------------------------- small linear algebra
def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def transpose(a):
    return [[a[j][i] for j in range(3)] for i in range(3)]


def matvec(a, x):
    return [sum(a[i][k] * x[k] for k in range(3)) for i in range(3)]


def madd(a, b, s=1.0):
    return [[a[i][j] + s * b[i][j] for j in range(3)] for i in range(3)]


def rpy_matrix(r, p, y):
    """URDF convention: R = Rz(y) Ry(p) Rx(r)."""
    cr, sr = math.cos(r), math.sin(r)
    cp, sp = math.cos(p), math.sin(p)
    cy, sy = math.cos(y), math.sin(y)
    return [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]


def identity():
    return [[1.0 if i == j else 0.0 for j in range(3)] for i in range(3)]


def skew_sq(c):
    """|c|^2 E - c c^T  (parallel-axis term per unit mass)."""
    n2 = sum(x * x for x in c)
    return [[(n2 if i == j else 0.0) - c[i] * c[j] for j in range(3)] for i in range(3)]


def sym_eigenvalues(a):
    """Eigenvalues of a symmetric 3x3 matrix (cyclic Jacobi), ascending."""
    a = [row[:] for row in a]
    for _ in range(100):
        off = a[0][1] ** 2 + a[0][2] ** 2 + a[1][2] ** 2
        scale = sum(a[i][i] ** 2 for i in range(3)) or 1.0
        if off <= 1e-30 * scale:
            break
        for p, q in ((0, 1), (0, 2), (1, 2)):
            if a[p][q] == 0.0:
                continue
            theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q])
            t = (1.0 if theta >= 0 else -1.0) / (abs(theta) + math.sqrt(theta * theta + 1.0))
            c = 1.0 / math.sqrt(t * t + 1.0)
            s = t * c
            j = [[1.0 if i == k else 0.0 for k in range(3)] for i in range(3)]
            j[p][p] = c
            j[q][q] = c
            j[p][q] = s
            j[q][p] = -s
            a = matmul(transpose(j), matmul(a, j))
    return sorted(a[i][i] for i in range(3))


# ----------------------------------------------------------------- parsing helpers
class Checker:
    def __init__(self, fname):
        self.fname = fname
        self.errors = []

    def err(self, msg):
        self.errors.append(msg)


def floats(text, n, what, chk, default=None):
    if text is None:
        if default is not None:
            return list(default)
        chk.err("%s: missing" % what)
        return [0.0] * n
    try:
        vals = [float(t) for t in text.split()]
    except ValueError:
        chk.err("%s: not numbers: %r" % (what, text))
        return [0.0] * n
    if len(vals) != n or not all(math.isfinite(v) for v in vals):
        chk.err("%s: expected %d finite numbers, got %r" % (what, n, text))
        return (vals + [0.0] * n)[:n]
    return vals


def origin_of(elem, what, chk):
    o = elem.find("origin") if elem is not None else None
    if o is None:
        return [0.0, 0.0, 0.0], identity()
    xyz = floats(o.get("xyz"), 3, what + " origin xyz", chk, default=(0, 0, 0))
    rpy = floats(o.get("rpy"), 3, what + " origin rpy", chk, default=(0, 0, 0))
    return xyz, rpy_matrix(*rpy)


def check_inertia(I, what, chk):
    """I: 3x3 symmetric rotational inertia about the COM."""
    evals = sym_eigenvalues(I)
    scale = max(abs(e) for e in evals) or 1.0
    if evals[0] <= 0.0:
        chk.err("%s: inertia not positive definite (eigenvalues %s)" % (what, ["%.6g" % e for e in evals]))
        return
    a, b, c = evals
    if a + b < c * (1.0 - REL_TOL) - REL_TOL * scale:
        chk.err("%s: principal moments violate triangle inequality: %.6g + %.6g < %.6g" % (what, a, b, c))
    d = [I[0][0], I[1][1], I[2][2]]
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        if d[i] + d[j] < d[k] * (1.0 - REL_TOL) - REL_TOL * scale:
            chk.err("%s: diagonal violates triangle inequality: I%d + I%d < I%d" % (what, i, j, k))


def check_file(path, run_check_urdf):
    fname = os.path.basename(path)
    chk = Checker(fname)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        chk.err("XML parse error: %s" % e)
        return chk, None
    if root.tag != "robot":
        chk.err("root element is <%s>, expected <robot>" % root.tag)

    root_type = ROOT_JOINT.get(fname, "fixed")

    # links -------------------------------------------------------------
    links = {}
    for l in root.findall("link"):
        name = l.get("name")
        if not name:
            chk.err("link without name")
            continue
        if name in links:
            chk.err("duplicate link name %r" % name)
        links[name] = l

    # joints ------------------------------------------------------------
    joints = {}
    parent_of = {}  # child link -> joint element
    children = {n: [] for n in links}
    for j in root.findall("joint"):
        name = j.get("name")
        jtype = j.get("type")
        if not name:
            chk.err("joint without name")
            continue
        if name in joints:
            chk.err("duplicate joint name %r" % name)
        joints[name] = j
        if jtype not in KNOWN_TYPES:
            chk.err("joint %r: unknown type %r" % (name, jtype))
        pe, ce = j.find("parent"), j.find("child")
        par = pe.get("link") if pe is not None else None
        chi = ce.get("link") if ce is not None else None
        if par not in links:
            chk.err("joint %r: parent link %r does not exist" % (name, par))
        if chi not in links:
            chk.err("joint %r: child link %r does not exist" % (name, chi))
        if chi in parent_of:
            chk.err("link %r has two parent joints" % chi)
        if par in links and chi in links:
            parent_of[chi] = j
            children[par].append(chi)

        # axis
        if jtype in {"revolute", "continuous", "prismatic", "planar"}:
            ax = j.find("axis")
            if ax is None:
                chk.err("joint %r (%s): no explicit <axis> (urdfdom would default to x)" % (name, jtype))
            else:
                a = floats(ax.get("xyz"), 3, "joint %r axis" % name, chk)
                n = math.sqrt(sum(x * x for x in a))
                if abs(n - 1.0) > AXIS_TOL:
                    chk.err("joint %r: axis %r is not unit length (|a| = %.12g)" % (name, a, n))
        # limits
        lim = j.find("limit")
        if jtype in {"revolute", "prismatic"}:
            if lim is None:
                chk.err("joint %r (%s): missing <limit>" % (name, jtype))
            else:
                vals = {}
                for key in ("lower", "upper", "effort", "velocity"):
                    if lim.get(key) is None:
                        chk.err("joint %r: <limit> lacks %s" % (name, key))
                    else:
                        vals[key] = floats(lim.get(key), 1, "joint %r limit %s" % (name, key), chk)[0]
                if "lower" in vals and "upper" in vals and vals["lower"] > vals["upper"]:
                    chk.err("joint %r: lower %g > upper %g" % (name, vals["lower"], vals["upper"]))
                if vals.get("effort", 0.0) < 0.0:
                    chk.err("joint %r: negative effort limit" % name)
                if "velocity" in vals and vals["velocity"] <= 0.0:
                    chk.err("joint %r: velocity limit must be > 0" % name)
        dyn = j.find("dynamics")
        if dyn is not None:
            for key in ("damping", "friction"):
                if dyn.get(key) is not None:
                    val = floats(dyn.get(key), 1, "joint %r dynamics %s" % (name, key), chk)[0]
                    if val < 0.0:
                        chk.err("joint %r: negative %s" % (name, key))

    roots = [n for n in links if n not in parent_of]
    if len(roots) != 1:
        chk.err("expected exactly one root link, found %r" % roots)
        return chk, None
    root_link = roots[0]

    # reachability / cycles
    seen, order, stack = set(), [], [root_link]
    while stack:
        n = stack.pop()
        if n in seen:
            chk.err("cycle through link %r" % n)
            continue
        seen.add(n)
        order.append(n)
        stack.extend(children[n])
    if len(seen) != len(links):
        chk.err("links not reachable from the root: %r" % sorted(set(links) - seen))

    # geometry ------------------------------------------------------------
    for lname, l in links.items():
        for tag in ("visual", "collision"):
            for g in l.findall(tag):
                geo = g.find("geometry")
                if geo is None or len(list(geo)) != 1:
                    chk.err("link %r: <%s> needs exactly one geometry" % (lname, tag))
                    continue
                shape = list(geo)[0]
                what = "link %r %s %s" % (lname, tag, shape.tag)
                if shape.tag == "mesh":
                    chk.err("%s: meshes are not allowed" % what)
                elif shape.tag == "sphere":
                    r = floats(shape.get("radius"), 1, what + " radius", chk)[0]
                    if r < 0:
                        chk.err("%s: negative radius" % what)
                elif shape.tag == "cylinder":
                    r = floats(shape.get("radius"), 1, what + " radius", chk)[0]
                    h = floats(shape.get("length"), 1, what + " length", chk)[0]
                    if r < 0 or h < 0:
                        chk.err("%s: negative size" % what)
                elif shape.tag == "box":
                    if any(s < 0 for s in floats(shape.get("size"), 3, what + " size", chk)):
                        chk.err("%s: negative size" % what)
                else:
                    chk.err("%s: unknown geometry" % what)
                origin_of(g, what, chk)

    # inertials -------------------------------------------------------------
    inert = {}  # link -> (m, c (link frame), I_com in link frame)
    total_mass = 0.0
    for lname, l in links.items():
        ine = l.find("inertial")
        if ine is None:
            is_fixed_root = lname == root_link and root_type == "fixed"
            if not is_fixed_root and (fname, lname) not in MASSLESS_OK:
                chk.err("link %r has no <inertial> (only a fixed-base root or a listed contact frame may be massless)"
                        % lname)
            continue
        me = ine.find("mass")
        m = floats(me.get("value") if me is not None else None, 1, "link %r mass" % lname, chk)[0]
        if not m > 0.0:
            chk.err("link %r: mass %g must be > 0" % (lname, m))
        total_mass += m
        c, R = origin_of(ine, "link %r inertial" % lname, chk)
        ie = ine.find("inertia")
        if ie is None:
            chk.err("link %r: <inertial> without <inertia>" % lname)
            continue
        g = {}
        for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
            g[key] = floats(ie.get(key), 1, "link %r %s" % (lname, key), chk)[0]
        Iloc = [[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]], [g["ixz"], g["iyz"], g["izz"]]]
        check_inertia(Iloc, "link %r" % lname, chk)
        inert[lname] = (m, c, matmul(R, matmul(Iloc, transpose(R))))

    # merged bodies (fixed joints folded into their parent) --------------------
    body_of, pose = {}, {}  # link -> body link; link pose in body frame (p, R)
    for n in order:
        j = parent_of.get(n)
        if j is None or j.get("type") != "fixed":
            body_of[n] = n
            pose[n] = ([0.0, 0.0, 0.0], identity())
        else:
            par = j.find("parent").get("link")
            body_of[n] = body_of[par]
            pp, pR = pose[par]
            xyz, R = origin_of(j, "joint %r" % j.get("name"), chk)
            pose[n] = ([pp[i] + matvec(pR, xyz)[i] for i in range(3)], matmul(pR, R))

    bodies = {}
    for n in order:
        b = body_of[n]
        acc = bodies.setdefault(b, [0.0, [0.0] * 3, [[0.0] * 3 for _ in range(3)]])
        if n not in inert:
            continue
        m, c, Ic = inert[n]
        p, R = pose[n]
        cb = [p[i] + matvec(R, c)[i] for i in range(3)]
        Ib = madd(matmul(R, matmul(Ic, transpose(R))), skew_sq(cb), m)  # about body origin
        acc[0] += m
        acc[1] = [acc[1][i] + m * cb[i] for i in range(3)]
        acc[2] = madd(acc[2], Ib)

    movable_bodies = [n for n in order if n in parent_of and parent_of[n].get("type") in MOVABLE]
    if root_type != "fixed":
        movable_bodies.insert(0, root_link)
    for b in movable_bodies:
        m, mc, Io = bodies[b]
        if not m > 0.0:
            chk.err("body %r (moved by a joint) has no mass after merging fixed joints" % b)
            continue
        c = [x / m for x in mc]
        check_inertia(madd(Io, skew_sq(c), -m), "merged body %r" % b, chk)

    n_movable = sum(1 for j in joints.values() if j.get("type") in MOVABLE)
    n_fixed = sum(1 for j in joints.values() if j.get("type") == "fixed")

    # urdfdom -------------------------------------------------------------------
    urdfdom = "skipped"
    if run_check_urdf:
        exe = shutil.which("check_urdf")
        if exe is None:
            urdfdom = "not installed"
        else:
            r = subprocess.run([exe, path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True)
            if r.returncode != 0 or "Successfully Parsed" not in r.stdout:
                chk.err("check_urdf failed (exit %d):\n%s" % (r.returncode, r.stdout.strip()))
                urdfdom = "FAILED"
            else:
                urdfdom = "ok"

    info = {
        "links": len(links),
        "movable": n_movable,
        "fixed": n_fixed,
        "mass": total_mass,
        "root": root_link,
        "root_joint": root_type,
        "urdfdom": urdfdom,
    }
    return chk, info


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    flags = [a for a in argv[1:] if a.startswith("--")]
    for f in flags:
        if f not in ("--no-check-urdf", "--help"):
            print("unknown option %s" % f, file=sys.stderr)
            return 2
    if "--help" in flags:
        print(__doc__)
        return 0
    run_check_urdf = "--no-check-urdf" not in flags
    files = args or sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "*.urdf")))
    if not files:
        print("no URDF files found", file=sys.stderr)
        return 2

    print("%-22s %5s %7s %5s %10s  %-10s %-8s %s" % ("model", "links", "movable", "fixed", "mass [kg]",
                                                      "root joint", "urdfdom", "status"))
    failed = 0
    for path in files:
        chk, info = check_file(path, run_check_urdf)
        name = os.path.basename(path)
        if info is None:
            print("%-22s %s" % (name, "FAIL"))
        else:
            print("%-22s %5d %7d %5d %10.4f  %-10s %-8s %s" % (
                name, info["links"], info["movable"], info["fixed"], info["mass"], info["root_joint"],
                info["urdfdom"], "ok" if not chk.errors else "FAIL"))
        for e in chk.errors:
            print("    error: %s" % e)
        failed += bool(chk.errors)
    if failed:
        print("%d of %d file(s) failed" % (failed, len(files)))
        return 1
    print("all %d file(s) passed" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
