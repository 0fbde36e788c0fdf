#!/usr/bin/env python3
"""Plots of a `plume simulate` run, for reading at a glance.

Usage: plot_simulation.py OUTPUT_DIR

Reads the outputs of `plume simulate` in OUTPUT_DIR (summary.json,
trajectory.csv, events.csv, contacts.csv, contact_points.csv, energy.csv and,
with a controller, controller.csv) and writes there, each to a temporary file
renamed into place:

  base.png                 each floating base's height [m] and roll, pitch, yaw [deg]
  joint_positions.png      each 1-DoF joint's position, with its PD target when controlled
  joint_torques.png        each controlled joint's torque against its effort limit (with a controller)
  contact_forces.png       normal force and friction summed per body (one line per foot)
  separation_velocities.png  normal (separation) velocity and sliding speed per body [m/s]
  energy.png               mechanical energy, and its change against the controller's work

Every time axis marks the impacts (thin red lines), the lift-offs (dashed grey
lines), the velocity-level fallback windows (shaded orange) and, for a run that
stopped early, where it stopped and why (a thick dark red line; its status in
the legend and under the plot). Each PNG carries its axes in a text chunk
"plume:axes" (JSON: per panel its pixel box from the bottom left, its data
limits and its series; the marks' times) so that tests can read the curves
back from the pixels.
Prints the name of every plot written, one per line.

Exit status: 0 plots written; 2 bad usage or unreadable input; 3 matplotlib
is missing (Debian: apt-get install python3-matplotlib).
"""

import csv
import json
import math
import os
import sys
import tempfile

NO_MATPLOTLIB = 3
MAX_IMPACT_MARKS = 200
COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
           "tab:gray", "tab:olive", "tab:cyan"]


def read_csv(path):
    """Rows of a CSV file as dicts (an empty list if the file is missing)."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


class Run:
    """What the plots need from an output directory."""

    def __init__(self, out_dir):
        self.dir = out_dir
        path = os.path.join(out_dir, "summary.json")
        self.summary = {}
        if os.path.exists(path):
            with open(path) as f:
                self.summary = json.load(f)
        self.trajectory = read_csv(os.path.join(out_dir, "trajectory.csv"))
        self.events = read_csv(os.path.join(out_dir, "events.csv"))
        self.contacts = read_csv(os.path.join(out_dir, "contacts.csv"))
        self.points = read_csv(os.path.join(out_dir, "contact_points.csv"))
        self.energy = read_csv(os.path.join(out_dir, "energy.csv"))
        self.controller = read_csv(os.path.join(out_dir, "controller.csv"))
        self.times = [num(r["time"]) for r in self.trajectory]
        self.coordinates = self.summary.get("coordinates") or {}
        self.impacts = [r for r in self.events if r.get("kind") == "impact"]
        # Impacts and lift-offs (a contact, not a joint limit, lost): one mark per
        # 1/800 of the run (about a pixel), so a burst of events (a body rocking on two corners,
        # hundreds in a few ms) is a readable band of lines, not a black smear.
        span = max(self.times[-1] - self.times[0], 0.0) if self.times else 0.0
        gap = span / 800.0
        self.impact_times = thinned(sorted({num(r["time"]) for r in self.events if r.get("kind") == "impact"}), gap)
        self.liftoffs = thinned(sorted({num(r["time"]) for r in self.events if r.get("kind") == "contact_loss"
                                        and not r.get("contact", "").startswith("limit:")}), gap)
        # Fallback windows: each lasts fallback_time / fallbacks (the runs' fallback_duration).
        starts = sorted({num(r["time"]) for r in self.events if r.get("kind") == "fallback"})
        count, spent = self.summary.get("fallbacks") or 0, self.summary.get("fallback_time") or 0.0
        width = spent / count if count and spent and spent > 0 else 1e-3
        self.fallbacks = [(t, t + width) for t in starts]
        self.finished = self.summary.get("finished", True)
        self.status = self.summary.get("status", "")
        self.stop_time = self.summary.get("time")
        self.multi_model = len(self.summary.get("models") or []) > 1

    def marks(self):
        """The event marks drawn on every time axis (for the plume:axes text chunk)."""
        return {"impact": self.impact_times[:MAX_IMPACT_MARKS],
                "lift_off": self.liftoffs[:MAX_IMPACT_MARKS], "fallback": self.fallbacks[:MAX_IMPACT_MARKS],
                "stop": None if self.finished else self.stop_time, "status": self.status}

    def column(self, name):
        return [num(r.get(name)) for r in self.trajectory]

    def joint_label(self, c):
        return (c["model"] + "/" if self.multi_model else "") + c["joint"]

    def joints(self):
        """1-DoF joints in q order: (label, q column, v column, unit, q index, v index)."""
        out = []
        by_joint = {}
        for name, c in self.coordinates.items():
            by_joint.setdefault((c["model"], c["joint"]), {})[name[0]] = (name, c)
        for (model, joint), cols in by_joint.items():
            if "q" not in cols or "v" not in cols or cols["q"][1]["component"] not in ("angle", "position"):
                continue
            qname, c = cols["q"]
            vname = cols["v"][0]
            out.append((self.joint_label(c), qname, vname, c["unit"], int(qname[2:]), int(vname[2:])))
        out.sort(key=lambda j: j[4])
        return out

    def bases(self):
        """Free-flyer and planar roots: (label, {component: q column}, type)."""
        found, kinds = {}, {}
        for name, c in self.coordinates.items():
            if c.get("type") in ("free-flyer", "planar") and name.startswith("q_"):
                key = c["model"] + "/" + c["joint"]
                found.setdefault(key, {})[c["component"]] = name
                kinds[key] = c["type"]
        needs = {"free-flyer": ("z", "qx", "qy", "qz", "qw"), "planar": ("x", "y", "theta")}
        return [(k if self.multi_model else k.split("/")[0], v, kinds[k]) for k, v in found.items()
                if all(x in v for x in needs[kinds[k]])]


def body_of(row):
    """The moving body of a contact (the one that is not the world), or "a - b" between two bodies."""
    a, b = row.get("body_a", ""), row.get("body_b", "")
    if not a and not b:
        return row.get("contact", "?")
    if a in ("", "world"):
        return b
    if b in ("", "world"):
        return a
    return a + " - " + b


def grouped(points, key, reduce):
    """{body: (times, values)}: per body and time, `reduce` of the points' `key`."""
    acc = {}
    for r in points:
        acc.setdefault(body_of(r), {}).setdefault(num(r["time"]), []).append(num(r[key]))
    out = {}
    for body, by_time in acc.items():
        ts = sorted(by_time)
        out[body] = (ts, [reduce(by_time[t]) for t in ts])
    return out


def save(fig, out_dir, name, written, axes_info, run=None):
    """Saves atomically (a temporary PNG in out_dir, then a rename) with the axes in a text chunk."""
    fig.canvas.draw()
    width, height = fig.canvas.get_width_height()
    meta = []
    for ax, series in axes_info:
        bb = ax.get_window_extent()
        meta.append({"pixels": [bb.x0, bb.y0, bb.x1, bb.y1], "xlim": list(ax.get_xlim()), "ylim": list(ax.get_ylim()),
                     "ylabel": ax.get_ylabel(), "series": series,
                     "offset": ax.yaxis.get_offset_text().get_text()})
    text = json.dumps({"size": [width, height], "axes": meta, "marks": run.marks() if run else {}})
    fd, tmp = tempfile.mkstemp(prefix="." + name + ".", suffix=".tmp", dir=out_dir)
    os.close(fd)
    try:
        # No bbox_inches="tight": the pixel boxes above must stay those of the file.
        fig.savefig(tmp, format="png", metadata={"plume:axes": text})
        os.chmod(tmp, 0o644)
        os.replace(tmp, os.path.join(out_dir, name))
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    written.append(name)


def thinned(times, gap):
    """The sorted times with each closer than `gap` to the last one kept left out."""
    kept = []
    for t in times:
        if not kept or t - kept[-1] >= gap:
            kept.append(t)
    return kept


def mark_events(ax, run, label=False):
    """Impacts as thin red lines, lift-offs as dashed grey ones, fallback windows shaded orange;
    the stop of an early-ended run as a thick dark red line."""
    for k, t in enumerate(run.impact_times[:MAX_IMPACT_MARKS]):
        ax.axvline(t, color="tab:red", lw=0.6, alpha=0.35, label="impact" if label and k == 0 else None)
    for k, t in enumerate(run.liftoffs[:MAX_IMPACT_MARKS]):
        ax.axvline(t, color="black", lw=0.8, ls=(0, (3, 2)), alpha=0.45, label="lift-off" if label and k == 0 else None)
    for k, (a, b) in enumerate(run.fallbacks[:MAX_IMPACT_MARKS]):
        ax.axvspan(a, b, color="tab:orange", alpha=0.25, lw=0, label="fallback window" if label and k == 0 else None)
    if not run.finished and run.stop_time is not None:
        lo, hi = ax.get_xlim()
        ax.set_xlim(lo, max(hi, run.stop_time + 0.03 * (run.stop_time - lo)))  # the mark inside the axes
        ax.axvline(run.stop_time, color="darkred", lw=2.0,
                   label=f"stopped: {run.status} at t = {run.stop_time:.6g} s" if label else None)


def stop_note(fig, run):
    if not run.finished and run.stop_time is not None:
        message = run.summary.get("message", "")
        if len(message) > 110:
            message = message[:110] + " ..."
        fig.text(0.01, 0.005, f"The run stopped early at t = {run.stop_time:.6g} s ({run.status}): {message}",
                 color="darkred", fontsize=7, va="bottom")


def plain_axis(ax):
    """Tick labels as the numbers themselves: no offset or scale factor printed apart."""
    from matplotlib.ticker import ScalarFormatter
    f = ScalarFormatter(useOffset=False)
    f.set_scientific(False)
    ax.yaxis.set_major_formatter(f)


def min_span(ax, values, span):
    """At least `span` of y range around the data: a joint that stays put reads as flat, not as
    noise at the 1e-15 level with twelve-digit tick labels."""
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return
    lo, hi = min(finite), max(finite)
    if hi - lo < span:
        c = 0.5 * (lo + hi)
        ax.set_ylim(c - 0.5 * span, c + 0.5 * span)


def legend_outside(ax, fig, entries):
    """Every entry shown, in columns to the right of the axes (never truncated)."""
    if entries == 0:
        return
    ncol = 1 if entries <= 16 else (2 if entries <= 40 else 3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, ncol=ncol,
              frameon=False)


def figure(plt, rows, cols, legend_cols=0, height_per_row=2.2, width=8.0):
    fig, axes = plt.subplots(rows, cols, sharex=True, squeeze=False,
                             figsize=(width + 2.1 * legend_cols, max(3.0, height_per_row * rows + 1.0)), dpi=100)
    return fig, axes


def finish(fig, legend_cols, bottom_note):
    # tight_layout leaves room for the legends outside the axes (the figure is wider by legend_cols).
    fig.tight_layout(rect=(0, 0.03 if bottom_note else 0, 1, 0.97))


def empty(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)


def plot_base(plt, run, written):
    bases = run.bases()
    if not bases:
        return
    fig, axes = figure(plt, 2, 1, legend_cols=1)
    ax_z, ax_r = axes[0][0], axes[1][0]
    info_z, info_r = [], []
    all_z, all_r = [], []
    t = run.times
    for k, (label, cols, kind) in enumerate(bases):
        colour = COLOURS[k % len(COLOURS)]
        if kind == "planar":  # x, y in the joint's plane, θ about its normal
            for comp, style in (("x", "--"), ("y", "-")):
                v = run.column(cols[comp])
                all_z += v
                ax_z.plot(t, v, style, lw=1.4, color=colour, label=f"{label} {comp} (joint plane)")
                info_z.append({"label": f"{label} {comp}", "column": cols[comp], "color": colour})
            theta = [math.degrees(x) for x in run.column(cols["theta"])]
            all_r += theta
            ax_r.plot(t, theta, "-", lw=1.2, color=colour, label=f"{label} theta")
            info_r.append({"label": f"{label} theta", "column": cols["theta"], "color": colour})
            continue
        z = run.column(cols["z"])
        all_z += z
        ax_z.plot(t, z, lw=1.4, color=COLOURS[k % len(COLOURS)], label=f"{label} height z")
        info_z.append({"label": f"{label} height z", "column": cols["z"], "color": COLOURS[k % len(COLOURS)]})
        qx, qy, qz, qw = (run.column(cols[c]) for c in ("qx", "qy", "qz", "qw"))
        roll, pitch, yaw = [], [], []
        for x, y, zq, w in zip(qx, qy, qz, qw):
            roll.append(math.degrees(math.atan2(2 * (w * x + y * zq), 1 - 2 * (x * x + y * y))))
            pitch.append(math.degrees(math.asin(max(-1.0, min(1.0, 2 * (w * y - zq * x))))))
            yaw.append(math.degrees(math.atan2(2 * (w * zq + x * y), 1 - 2 * (y * y + zq * zq))))
        for name, series, style in (("roll", roll, "-"), ("pitch", pitch, "--"), ("yaw", yaw, ":")):
            ax_r.plot(t, series, style, lw=1.2, color=COLOURS[k % len(COLOURS)], label=f"{label} {name}")
            all_r += series
            info_r.append({"label": f"{label} {name}", "color": COLOURS[k % len(COLOURS)]})
    min_span(ax_z, all_z, 0.002)
    min_span(ax_r, all_r, 0.2)
    planar_only = all(kind == "planar" for _, _, kind in bases)
    ax_z.set_ylabel("base position [m]" if planar_only else "base height z [m]")
    ax_r.set_ylabel("orientation [deg]" + ("\n(theta about the plane's normal)" if planar_only else
                                           "\n(roll x, pitch y, yaw z)"))
    ax_r.set_xlabel("time [s]")
    for ax in (ax_z, ax_r):
        plain_axis(ax)
        ax.grid(True, alpha=0.3)
    mark_events(ax_z, run, label=True)
    mark_events(ax_r, run)
    legend_outside(ax_z, fig, len(bases) + 4)
    legend_outside(ax_r, fig, 3 * len(bases))
    fig.suptitle("Floating base: " + ("position" if planar_only else "height") + " and orientation (parent frame)")
    stop_note(fig, run)
    finish(fig, 1, not run.finished)
    save(fig, run.dir, "base.png", written, [(ax_z, info_z), (ax_r, info_r)], run)
    plt.close(fig)


def joint_grid(plt, run, joints, title, ylabel_of, draw, name, written):
    n = len(joints)
    cols = 1 if n == 1 else (2 if n <= 4 else (3 if n <= 12 else 4))
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, sharex=True, squeeze=False,
                             figsize=(3.3 * cols + 0.6, 1.75 * rows + 1.2), dpi=100)
    info = []
    for i, j in enumerate(joints):
        ax = axes[i // cols][i % cols]
        series = draw(ax, j)
        ax.set_title(j[0], fontsize=8)
        ax.set_ylabel(ylabel_of(j), fontsize=7)
        ax.tick_params(labelsize=7)
        plain_axis(ax)
        ax.grid(True, alpha=0.3)
        mark_events(ax, run)
        info.append((ax, series))
    for i in range(n, rows * cols):
        axes[i // cols][i % cols].set_visible(False)
    for c in range(cols):
        last = max(i for i in range(n) if i % cols == c) if any(i % cols == c for i in range(n)) else None
        if last is not None:
            axes[last // cols][c].set_xlabel("time [s]", fontsize=7)
            axes[last // cols][c].tick_params(labelbottom=True)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if not run.finished and run.stop_time is not None:
        from matplotlib.lines import Line2D
        handles.append(Line2D([], [], color="darkred", lw=2.0))
        labels.append(f"stopped: {run.status} at t = {run.stop_time:.6g} s")
    if run.impacts:
        from matplotlib.lines import Line2D
        handles.append(Line2D([], [], color="tab:red", lw=0.6, alpha=0.5))
        labels.append("impact")
    if run.liftoffs:
        from matplotlib.lines import Line2D
        handles.append(Line2D([], [], color="black", lw=0.8, ls=(0, (3, 2)), alpha=0.45))
        labels.append("lift-off")
    if run.fallbacks:
        from matplotlib.patches import Patch
        handles.append(Patch(color="tab:orange", alpha=0.25))
        labels.append("fallback window")
    fig.suptitle(title, fontsize=10)
    fig.legend(handles, labels, loc="upper right", fontsize=7, ncol=len(labels), frameon=False)
    stop_note(fig, run)
    fig.tight_layout(rect=(0, 0.03 if not run.finished else 0, 1, 0.95))
    save(fig, run.dir, name, written, info, run)
    plt.close(fig)


def plot_joints(plt, run, written):
    joints = run.joints()
    if not joints:
        return
    ctl = run.summary.get("controller") or {}
    target = ctl.get("target") or []
    kp = ctl.get("kp") or []
    t = run.times

    def controlled(j):
        return j[5] < len(kp) and kp[j[5]] not in (None, 0, 0.0)

    def draw_position(ax, j):
        q = run.column(j[1])
        ax.plot(t, q, lw=1.3, color="tab:blue", label="position q")
        series = [{"label": "position q", "column": j[1], "color": "tab:blue"}]
        if controlled(j) and j[4] < len(target) and target[j[4]] is not None:
            ax.axhline(target[j[4]], color="tab:orange", lw=1.2, ls="--", label="PD target")
            series.append({"label": "PD target", "value": target[j[4]], "color": "tab:orange"})
        # 0.01 rad (0.6 deg) or 1 mm at least.
        min_span(ax, q + [s["value"] for s in series if "value" in s], 0.01 if j[3] == "rad" else 0.001)
        return series

    title = "Joint positions" + (" against their PD targets" if target else "")
    joint_grid(plt, run, joints, title, lambda j: f"[{j[3]}]", draw_position, "joint_positions.png", written)

    if not run.controller:
        return
    limits = ctl.get("effort_limit") or []
    ct = [num(r["time"]) for r in run.controller]
    torqued = [j for j in joints if controlled(j)] or joints

    def draw_torque(ax, j):
        tau = [num(r.get(f"tau_{j[5]}")) for r in run.controller]
        ax.plot(ct, tau, lw=1.2, color="tab:green", label="applied torque (held)")
        min_span(ax, tau, 0.1)
        series = [{"label": "torque", "column": f"tau_{j[5]}", "color": "tab:green"}]
        lim = limits[j[5]] if j[5] < len(limits) else None
        if lim is not None and math.isfinite(lim):
            for s in (-1, 1):
                ax.axhline(s * lim, color="tab:red", lw=1.0, ls="--", label="effort limit" if s > 0 else None)
            series.append({"label": "effort limit", "value": lim, "color": "tab:red"})
        return series

    def unit(j):
        return "[N·m]" if j[3] == "rad" else "[N]"

    joint_grid(plt, run, torqued, "Joint torques from the controller against the effort limits", unit, draw_torque,
               "joint_torques.png", written)


def plot_contacts(plt, run, written):
    points = run.points
    if not points and run.contacts:  # an older output directory: per contact, as recorded
        points = [dict(r, body_a="", body_b="") for r in run.contacts if not r["contact"].startswith("limit:")]
    normal = grouped(points, "normal_force", sum)
    friction = grouped(points, "friction_force", sum)
    bodies = sorted(normal)
    fig, axes = figure(plt, 2, 1, legend_cols=1 if len(bodies) <= 16 else 2)
    ax_n, ax_t = axes[0][0], axes[1][0]
    colours = {b: COLOURS[i % len(COLOURS)] for i, b in enumerate(bodies)}
    info_n, info_t = [], []
    for b in bodies:
        count = len({r["contact"] for r in points if body_of(r) == b})
        label = b + (f" ({count} points)" if count > 1 else "")
        style = "-" if len(normal[b][0]) > 1 else "o"
        ax_n.plot(normal[b][0], normal[b][1], style, lw=1.3, ms=3, color=colours[b], label=label)
        ax_t.plot(friction[b][0], friction[b][1], style, lw=1.3, ms=3, color=colours[b], label=label)
        info_n.append({"label": label, "body": b, "color": colours[b]})
        info_t.append({"label": label, "body": b, "color": colours[b]})
    ax_n.set_ylabel("normal force [N]\n(sum per body)")
    ax_t.set_ylabel("friction |f_t| [N]\n(sum per body)")
    ax_t.set_xlabel("time [s]")
    for ax in (ax_n, ax_t):
        plain_axis(ax)
        ax.grid(True, alpha=0.3)
        if run.times:
            ax.set_xlim(run.times[0], run.times[-1] if run.times[-1] > run.times[0] else run.times[0] + 1)
    mark_events(ax_n, run, label=True)
    mark_events(ax_t, run)
    if bodies:
        legend_outside(ax_n, fig, len(bodies) + 4)
    else:
        empty(ax_n, "no contact forces recorded")
    fig.suptitle("Contact forces per body (active contacts at output times)")
    stop_note(fig, run)
    finish(fig, 1 if len(bodies) <= 16 else 2, not run.finished)
    save(fig, run.dir, "contact_forces.png", written, [(ax_n, info_n), (ax_t, info_t)], run)
    plt.close(fig)


def plot_speeds(plt, run, written):
    points = run.points
    normal = grouped(points, "normal_velocity", lambda v: max(v, key=abs))
    sliding = grouped(points, "sliding_speed", lambda v: max((x for x in v if not math.isnan(x)), default=math.nan))
    bodies = sorted(normal)
    fig, axes = figure(plt, 2, 1, legend_cols=1 if len(bodies) <= 16 else 2)
    ax_n, ax_s = axes[0][0], axes[1][0]
    colours = {b: COLOURS[i % len(COLOURS)] for i, b in enumerate(bodies)}
    info_n, info_s = [], []
    for b in bodies:
        ax_n.plot(normal[b][0], normal[b][1], "-", lw=1.1, color=colours[b], label=b)
        ax_s.plot(sliding[b][0], sliding[b][1], "-", lw=1.1, color=colours[b], label=b)
        info_n.append({"label": b, "body": b, "color": colours[b]})
        info_s.append({"label": b, "body": b, "color": colours[b]})
    impacts = [r for r in run.impacts if not r.get("contact", "").startswith("limit:")]
    if impacts:
        t = [num(r["time"]) for r in impacts]
        ax_n.plot(t, [num(r["pre_normal_velocity"]) for r in impacts], "v", ms=4, color="tab:red",
                  label="impact: before")
        ax_n.plot(t, [num(r["post_normal_velocity"]) for r in impacts], "^", ms=4, color="tab:green",
                  label="impact: after")
    ax_n.axhline(0.0, color="k", lw=0.6)
    ax_n.set_ylabel("separation (normal)\nvelocity [m/s]")
    ax_s.set_ylabel("sliding speed |v_t| [m/s]")
    ax_s.set_xlabel("time [s]")
    for ax in (ax_n, ax_s):
        plain_axis(ax)
        ax.grid(True, alpha=0.3)
        if run.times:
            ax.set_xlim(run.times[0], run.times[-1] if run.times[-1] > run.times[0] else run.times[0] + 1)
    mark_events(ax_n, run, label=True)
    mark_events(ax_s, run)
    if bodies or impacts:
        legend_outside(ax_n, fig, len(bodies) + 6)
    else:
        empty(ax_n, "no contacts or impacts recorded")
    limits = sum(1 for r in run.contacts if r["contact"].startswith("limit:"))
    fig.suptitle("Separation and sliding speeds per body (largest of its points)" +
                 ("; joint limits (rad/s) not shown" if limits else ""))
    stop_note(fig, run)
    finish(fig, 1 if len(bodies) <= 16 else 2, not run.finished)
    save(fig, run.dir, "separation_velocities.png", written, [(ax_n, info_n), (ax_s, info_s)], run)
    plt.close(fig)


def plot_energy(plt, run, written):
    t = [num(r["time"]) for r in run.energy]
    e = [num(r["energy"]) for r in run.energy]
    rows = 2 if run.controller and e else 1
    fig, axes = figure(plt, rows, 1, legend_cols=1, height_per_row=2.6)
    ax = axes[0][0]
    info = [[]]
    ax.plot(t, e, "-", lw=1.3, color="tab:blue", label="kinetic + potential")
    info[0].append({"label": "kinetic + potential", "column": "energy", "color": "tab:blue"})
    ax.set_ylabel("energy [J]")
    if e:
        ax.set_title(f"Mechanical energy: {e[0]:.6g} J at start, {e[-1]:.6g} J at end", fontsize=10)
    else:
        ax.set_title("Mechanical energy")
        empty(ax, "no samples recorded")
    axes_info = [(ax, info[0])]
    if rows == 2:
        ax2 = axes[1][0]
        ct = [num(r["time"]) for r in run.controller]
        w = [num(r["work"]) for r in run.controller]
        de = [x - e[0] for x in e]
        ax2.plot(t, de, "-", lw=1.3, color="tab:blue", label="energy change E - E(0)")
        ax2.plot(ct, w, "--", lw=1.3, color="tab:orange", label="work done by the controller")
        n = min(len(de), len(w))
        ax2.plot(t[:n], [w[k] - de[k] for k in range(n)], ":", lw=1.3, color="tab:gray",
                 label="dissipated (work - change):\nimpacts, friction, damping")
        ax2.set_ylabel("[J]")
        axes_info.append((ax2, [{"label": "energy change", "color": "tab:blue"},
                                {"label": "controller work", "column": "work", "color": "tab:orange"}]))
    for a, _ in axes_info:
        plain_axis(a)
        a.grid(True, alpha=0.3)
    mark_events(ax, run, label=True)
    if rows == 2:
        mark_events(axes[1][0], run)
        legend_outside(axes[1][0], fig, 3)
    axes[-1][0].set_xlabel("time [s]")
    legend_outside(ax, fig, 5)
    stop_note(fig, run)
    finish(fig, 1, not run.finished)
    save(fig, run.dir, "energy.png", written, axes_info, run)
    plt.close(fig)


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: plot_simulation.py OUTPUT_DIR (a directory written by plume simulate)", file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print(f"matplotlib is not available: {e}", file=sys.stderr)
        return NO_MATPLOTLIB
    try:
        run = Run(argv[1])
    except (OSError, csv.Error, KeyError, ValueError) as e:
        print(f"cannot read the outputs in {argv[1]}: {e}", file=sys.stderr)
        return 2
    written = []
    for plot in (plot_base, plot_joints, plot_contacts, plot_speeds, plot_energy):
        plot(plt, run, written)
    for name in written:
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
