#!/usr/bin/env python3
"""The PNG plots of `plume simulate`, read back from their pixels.

Usage: plot_readback_test.py PLUME MODELS_DIR

Runs the quadruped demo, a run that stops early and stack_tipping, then reads
each PNG: the curves drawn (pixels of a series' colour inside its axes, mapped
to data through the axes box and limits the PNG carries in its "plume:axes"
text chunk) against the CSV columns they plot; one legend entry per foot;
units kept apart (m/s only on the speed plot); no offset printed on an axis;
the stop of the early run marked where it stopped on every time axis; the
lift-offs of events.csv marked on every time axis; a fallback window shaded
over its span.

Exit status 0 passed, 1 failed, 77 matplotlib is missing (reported skipped).
"""

import bisect
import csv
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
failures = []


def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)
    return ok


def png_text(path, key):
    """The text chunk `key` of a PNG (tEXt, zTXt or iTXt), or None."""
    with open(path, "rb") as f:
        data = f.read()
    at = 8
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        at += 12 + length
        if kind == b"tEXt":
            k, _, v = body.partition(b"\0")
            if k.decode("latin-1") == key:
                return v.decode("latin-1")
        elif kind == b"zTXt":
            k, _, v = body.partition(b"\0")
            if k.decode("latin-1") == key:
                return zlib.decompress(v[1:]).decode("latin-1")
        elif kind == b"iTXt":
            k, _, rest = body.partition(b"\0")
            if k.decode("utf-8") == key:
                compressed = rest[0]
                rest = rest[2:]
                _, _, rest = rest.partition(b"\0")  # language tag
                _, _, text = rest.partition(b"\0")  # translated keyword
                return (zlib.decompress(text) if compressed else text).decode("utf-8")
    return None


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


COLOURS = {"tab:blue": (31, 119, 180), "tab:orange": (255, 127, 14), "tab:green": (44, 160, 44),
           "tab:red": (214, 39, 40), "darkred": (139, 0, 0),
           "lift-off": (140, 140, 140),     # black at alpha 0.45 on white
           "fallback": (255, 223, 195)}     # tab:orange at alpha 0.25 on white


def load(path):
    import matplotlib.image
    img = matplotlib.image.imread(path)
    return (img[:, :, :3] * 255.0 + 0.5).astype("int32")


def series_pixels(img, box, colour, tol=40):
    """(column, row) of the pixels of `colour` strictly inside the axes box (figure pixels, origin bottom left)."""
    h = img.shape[0]
    x0, y0, x1, y1 = box
    c0, c1 = int(x0) + 2, int(x1) - 2
    r0, r1 = int(h - y1) + 2, int(h - y0) - 2
    r, g, b = COLOURS[colour]
    sub = img[r0:r1, c0:c1]
    mask = (abs(sub[:, :, 0] - r) < tol) & (abs(sub[:, :, 1] - g) < tol) & (abs(sub[:, :, 2] - b) < tol)
    rows, cols = mask.nonzero()
    return [(int(c) + c0, int(rr) + r0) for rr, c in zip(rows, cols)]


def to_data(px, py, img_h, ax):
    x0, y0, x1, y1 = ax["pixels"]
    (a, b), (c, d) = ax["xlim"], ax["ylim"]
    t = a + (px + 0.5 - x0) / (x1 - x0) * (b - a)
    y = c + (img_h - py - 0.5 - y0) / (y1 - y0) * (d - c)
    return t, y


def curve_matches(png, ax, colour, times, values, name):
    """Every pixel column the series occupies holds a value the CSV takes within a pixel of that time."""
    img = load(png)
    pts = series_pixels(img, ax["pixels"], colour)
    if not check(len(pts) > 200, f"{name}: the curve is drawn ({len(pts)} pixels of {colour})"):
        return
    x0, y0, x1, y1 = ax["pixels"]
    dt = (ax["xlim"][1] - ax["xlim"][0]) / (x1 - x0)
    dy = (ax["ylim"][1] - ax["ylim"][0]) / (y1 - y0)
    bad, worst = 0, 0.0
    for px, py in pts:
        t, y = to_data(px, py, img.shape[0], ax)
        lo = bisect.bisect_left(times, t - 1.5 * dt)
        hi = bisect.bisect_right(times, t + 1.5 * dt)
        window = values[max(lo - 1, 0):min(hi + 1, len(values))]
        if not window:
            bad += 1
            continue
        # The line (1.3 px wide, antialiased) lies within 2.5 px of the values plotted around t.
        miss = max(0.0, min(window) - y, y - max(window))
        worst = max(worst, miss / dy)
        bad += miss > 2.5 * dy
    check(bad <= 0.01 * len(pts),
          f"{name}: the pixels drawn are the CSV's values ({bad} of {len(pts)} off by more than 2.5 px; worst {worst:.1f} px)")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    plume, models = argv[1], os.path.abspath(argv[2])
    try:
        import matplotlib.image  # noqa: F401
    except ImportError:
        print("SKIPPED: python3-matplotlib is not installed; it draws and reads the plots")
        return SKIP
    work = tempfile.mkdtemp(prefix="plume_plots_")
    try:
        run_checks(plume, models, work)
    finally:
        if not failures:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("outputs kept in " + work)
    return 1 if failures else 0


def axes_of(png):
    text = png_text(png, "plume:axes")
    return json.loads(text)["axes"] if text else []


def run_checks(plume, models, work):
    out = os.path.join(work, "quad")
    r = subprocess.run([plume, "simulate", os.path.join(models, "worlds", "quadruped_standing.xml"), "--out", out,
                        "--no-replay"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    if not check(r.returncode == 0, "plume simulate quadruped_standing.xml exits 0\n" + r.stdout + r.stderr):
        return
    summary = json.load(open(os.path.join(out, "summary.json")))
    expected = ["base.png", "joint_positions.png", "joint_torques.png", "contact_forces.png",
                "separation_velocities.png", "energy.png"]
    check(summary.get("plots") == expected, f"summary.json lists the six plots ({summary.get('plots')})")
    traj = read_csv(os.path.join(out, "trajectory.csv"))
    times = [float(row["time"]) for row in traj]
    coords = summary["coordinates"]

    # Base height: the free-flyer's z column.
    z_col = next(c for c, v in coords.items() if v["component"] == "z" and c.startswith("q_"))
    base = axes_of(os.path.join(out, "base.png"))
    if check(len(base) == 2, "base.png: height and orientation panels"):
        check("[m]" in base[0]["ylabel"] and "[deg]" in base[1]["ylabel"], "base.png: height in m, angles in deg")
        check(base[0]["series"][0]["column"] == z_col, f"base.png plots {z_col} (the base's z)")
        curve_matches(os.path.join(out, "base.png"), base[0], "tab:blue", times,
                      [float(row[z_col]) for row in traj], "base height")

    # A knee against its target: LF_KFE's q column and the controller's target for it.
    knee = next(c for c, v in coords.items() if v["joint"] == "LF_KFE" and c.startswith("q_"))
    joints = axes_of(os.path.join(out, "joint_positions.png"))
    panel = next((a for a in joints if a["series"] and a["series"][0].get("column") == knee), None)
    if check(panel is not None, f"joint_positions.png has a panel for LF_KFE ({knee})"):
        curve_matches(os.path.join(out, "joint_positions.png"), panel, "tab:blue", times,
                      [float(row[knee]) for row in traj], "LF_KFE position")
        target = [s for s in panel["series"] if s["label"] == "PD target"]
        check(target and target[0]["value"] == -1.6, "LF_KFE's PD target is the world file's -1.6 rad")
    check(len(joints) == 12, f"joint_positions.png: one panel per joint (12, got {len(joints)})")
    torques = axes_of(os.path.join(out, "joint_torques.png"))
    ctl = read_csv(os.path.join(out, "controller.csv"))
    tpanel = next((a for a in torques if a["series"] and a["series"][0].get("column") == "tau_8"), None)
    if check(tpanel is not None, "joint_torques.png has LF_KFE's torque (tau_8)"):
        curve_matches(os.path.join(out, "joint_torques.png"), tpanel, "tab:green",
                      [float(row["time"]) for row in ctl], [float(row["tau_8"]) for row in ctl], "LF_KFE torque")
        lim = [s for s in tpanel["series"] if s["label"] == "effort limit"]
        check(lim and lim[0]["value"] == 45.0, "LF_KFE's effort limit (45 N m in the URDF) drawn")

    # Contact forces: one legend entry per foot (four), not per contact point.
    forces = axes_of(os.path.join(out, "contact_forces.png"))
    feet = sorted(s["body"] for s in forces[0]["series"]) if forces else []
    check(feet == ["quad/LF_shank", "quad/LH_shank", "quad/RF_shank", "quad/RH_shank"],
          f"contact_forces.png: one line per foot ({feet})")
    speeds = axes_of(os.path.join(out, "separation_velocities.png"))
    check(len(speeds) == 2 and all("[m/s]" in a["ylabel"] and "rad" not in a["ylabel"] for a in speeds),
          f"separation_velocities.png: m/s only ({[a['ylabel'] for a in speeds]})")
    energy = axes_of(os.path.join(out, "energy.png"))
    check(len(energy) == 2, "energy.png: energy, and its change against the controller's work")
    for name in expected:
        for a in axes_of(os.path.join(out, name)):
            check(a["offset"] == "", f"{name}: no offset printed apart from the tick labels ({a['offset']!r})")
    if energy:
        e = read_csv(os.path.join(out, "energy.csv"))
        curve_matches(os.path.join(out, "energy.png"), energy[0], "tab:blue", [float(x["time"]) for x in e],
                      [float(x["energy"]) for x in e], "energy")

    # A run that stops early: its stop marked on the time axes at the time it stopped.
    world = os.path.join(work, "drop.xml")
    with open(world, "w") as f:
        f.write(f"""<world>
  <model name="ball" urdf="{models}/ball.urdf" root="free"><state q="0 0 0.3 0 0 0 1"/></model>
  <ground/>
  <contact mu="0.5" restitution="0.5"/>
  <simulate duration="2" output_rate="100" max_steps="25"/>
</world>
""")
    stopped = os.path.join(work, "stopped")
    r = subprocess.run([plume, "simulate", world, "--out", stopped, "--no-replay"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    check(r.returncode == 3, f"the run stops early (exit {r.returncode})")
    summary = json.load(open(os.path.join(stopped, "summary.json")))
    t_stop = summary["time"]
    written = summary.get("plots") or []
    check(len(written) >= 4, f"the stopped run has its plots ({written})")
    for name in written:
        png = os.path.join(stopped, name)
        axes = axes_of(png)
        if not check(bool(axes), f"{name} written for the stopped run"):
            continue
        marks = json.loads(png_text(png, "plume:axes")).get("marks", {})
        check(marks.get("stop") == t_stop and marks.get("status") == summary["status"],
              f"{name}: marked stopped ({marks.get('status')}) at t = {marks.get('stop')}")
        img = load(png)
        for k, ax in enumerate(axes):
            pts = series_pixels(img, ax["pixels"], "darkred", tol=25)
            cols = sorted({px for px, _ in pts})
            expect = x_of(ax, t_stop)
            tall = [c for c in cols if sum(1 for px, _ in pts if px == c) > 0.8 * (ax["pixels"][3] - ax["pixels"][1] - 4)]
            check(bool(tall) and all(abs(c + 0.5 - expect) <= 2.5 for c in tall),
                  f"{name} panel {k}: the stop at t = {t_stop:.4g} s marked at x = {expect:.0f} px (found {tall})")

    # Lift-offs (contact_loss rows of events.csv) on every time axis: stack_tipping's top cube
    # leaves the lower one, then its corners leave the ground as it rocks.
    tip = os.path.join(work, "tip")
    r = subprocess.run([plume, "simulate", os.path.join(models, "worlds", "stack_tipping.xml"), "--out", tip,
                        "--no-replay"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    if not check(r.returncode == 0, "plume simulate stack_tipping.xml exits 0\n" + r.stdout + r.stderr):
        return
    events = read_csv(os.path.join(tip, "events.csv"))
    liftoffs = sorted({float(e["time"]) for e in events if e["kind"] == "contact_loss"})
    others = sorted({float(e["time"]) for e in events if e["kind"] == "impact"})
    check(len(liftoffs) >= 1, f"stack_tipping lifts off ({len(liftoffs)} times in events.csv)")
    names = json.load(open(os.path.join(tip, "summary.json"))).get("plots") or []
    for name in names:
        png = os.path.join(tip, name)
        img = load(png)
        for k, ax in enumerate(axes_of(png)):
            pts = series_pixels(img, ax["pixels"], "lift-off", tol=30)
            height = ax["pixels"][3] - ax["pixels"][1] - 4
            for t in liftoffs:
                x = x_of(ax, t)
                if any(abs(x_of(ax, u) - x) < 4 for u in others):
                    continue  # an impact's line drawn at the same place
                near = sum(1 for px, _ in pts if abs(px + 0.5 - x) <= 1.5)
                check(near > 0.25 * height, f"{name} panel {k}: the lift-off at t = {t:.4g} s dashed at x = {x:.0f} px "
                                            f"({near} grey pixels, axes {height:.0f} px tall)")

    # A fallback window, shaded over its span: the same run with one written into its
    # outputs (no shipped world needs one), replotted by plume's script.
    script = os.path.join(os.path.dirname(plume), "plot_simulation.py")
    if not check(os.path.exists(script), f"plot_simulation.py next to plume ({script})"):
        return
    with open(os.path.join(tip, "events.csv"), "a") as f:
        f.write("0.5,fallback,ground|cube_2/cube/collision_0#1,world,cube_2/cube,0,0,0\n")
    path = os.path.join(tip, "summary.json")
    summary = json.load(open(path))
    summary["fallbacks"], summary["fallback_time"] = 1, 0.05
    json.dump(summary, open(path, "w"))
    r = subprocess.run([sys.executable, script, tip], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300)
    check(r.returncode == 0, f"plot_simulation.py replots ({r.stderr.strip()})")
    png = os.path.join(tip, "base.png")
    img = load(png)
    for k, ax in enumerate(axes_of(png)):
        pts = series_pixels(img, ax["pixels"], "fallback", tol=12)
        a, b = x_of(ax, 0.5), x_of(ax, 0.55)
        height = ax["pixels"][3] - ax["pixels"][1] - 4
        per_column = {}
        for px, _ in pts:
            per_column[px] = per_column.get(px, 0) + 1
        shaded = sorted(x for x, n in per_column.items() if n > 0.5 * height)  # columns mostly tinted
        check(len(shaded) >= b - a - 3 and all(a - 1.5 <= x + 0.5 <= b + 1.5 for x in shaded),
              f"base.png panel {k}: the fallback window [0.5, 0.55] s shaded between x = {a:.0f} and {b:.0f} px "
              f"(shaded columns {shaded[:1]}..{shaded[-1:]}, {len(shaded)} of them)")


def x_of(ax, t):
    """The figure x pixel (from the left) of time t on axes `ax`."""
    x0, _, x1, _ = ax["pixels"]
    return x0 + (t - ax["xlim"][0]) / (ax["xlim"][1] - ax["xlim"][0]) * (x1 - x0)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
