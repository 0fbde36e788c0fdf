#!/usr/bin/env python3
"""Plots of a `plume simulate` run: contact forces, separation velocities and
energy against time.

Usage: plot_simulation.py OUTPUT_DIR

Reads contacts.csv, events.csv and energy.csv from OUTPUT_DIR (as written by
`plume simulate`) and writes contact_forces.png, separation_velocities.png and
energy.png there, each to a temporary file renamed into place. Prints the
name of every plot written, one per line.

Exit status: 0 plots written; 2 bad usage or unreadable input; 3 matplotlib
is missing (Debian: apt-get install python3-matplotlib).
"""

import csv
import math
import os
import sys
import tempfile

NO_MATPLOTLIB = 3
MAX_LEGEND = 10  # contacts named in a legend; the others are drawn unlabelled


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


def by_contact(rows):
    """{contact: (times, rows)} in order of first appearance."""
    series = {}
    for r in rows:
        series.setdefault(r["contact"], []).append(r)
    return series


def save(fig, out_dir, name, written):
    """Saves atomically: a temporary PNG in out_dir, then a rename."""
    fd, tmp = tempfile.mkstemp(prefix="." + name + ".", suffix=".tmp", dir=out_dir)
    os.close(fd)
    try:
        fig.savefig(tmp, format="png", dpi=110)
        os.chmod(tmp, 0o644)
        os.replace(tmp, os.path.join(out_dir, name))
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    written.append(name)


def ranked(series, key):
    """Contact names sorted by the largest |key| they reach (biggest first)."""
    def peak(name):
        vals = [abs(num(r[key])) for r in series[name]]
        vals = [v for v in vals if not math.isnan(v)]
        return max(vals) if vals else 0.0
    return sorted(series, key=peak, reverse=True)


def colour_map(series):
    """One colour per contact, by order of first appearance, the same in every panel."""
    cycle = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
             "tab:gray", "tab:olive", "tab:cyan"]
    return {name: cycle[i % len(cycle)] for i, name in enumerate(series)}


def plot_lines(ax, series, key, ylabel, colours):
    order = ranked(series, key)
    labelled = set(order[:MAX_LEGEND])
    for name in series:
        rows = series[name]
        t = [num(r["time"]) for r in rows]
        y = [num(r[key]) for r in rows]
        style = "-" if len(rows) > 1 else "o"
        ax.plot(t, y, style, lw=1.2, ms=3, color=colours[name], label=name if name in labelled else None)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if order:
        ax.legend(fontsize=6, loc="best", title=None if len(order) <= MAX_LEGEND else
                  f"{MAX_LEGEND} of {len(order)} contacts", title_fontsize=6)
    else:
        ax.text(0.5, 0.5, "no contact forces recorded", ha="center", va="center", transform=ax.transAxes)


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: plot_simulation.py OUTPUT_DIR (a directory written by plume simulate)", file=sys.stderr)
        return 2
    out_dir = argv[1]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print(f"matplotlib is not available: {e}", file=sys.stderr)
        return NO_MATPLOTLIB

    try:
        contacts = read_csv(os.path.join(out_dir, "contacts.csv"))
        events = read_csv(os.path.join(out_dir, "events.csv"))
        energy = read_csv(os.path.join(out_dir, "energy.csv"))
    except (OSError, csv.Error, KeyError) as e:
        print(f"cannot read the outputs in {out_dir}: {e}", file=sys.stderr)
        return 2
    series = by_contact(contacts)
    colours = colour_map(series)
    impacts = [r for r in events if r.get("kind") in ("impact", "zeno_rest")]
    written = []

    # Contact forces: normal and friction, one line per contact.
    fig, (ax_n, ax_t) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    plot_lines(ax_n, series, "normal_force", "normal force [N]", colours)
    plot_lines(ax_t, series, "friction_force", "friction force |f_t| [N]", colours)
    ax_t.set_xlabel("time [s]")
    fig.suptitle("Contact forces (active contacts at output times)")
    fig.tight_layout()
    save(fig, out_dir, "contact_forces.png", written)
    plt.close(fig)

    # Separation velocities: the normal velocity of each active contact, and
    # the pre-/post-impact normal velocities of every impact.
    fig, ax = plt.subplots(figsize=(8, 4.5))
    order = ranked(series, "normal_velocity") if series else []
    labelled = set(order[:MAX_LEGEND])
    for name in series:
        rows = series[name]
        ax.plot([num(r["time"]) for r in rows], [num(r["normal_velocity"]) for r in rows], "-", lw=1,
                color=colours[name], label=name if name in labelled else None)
    if impacts:
        t = [num(r["time"]) for r in impacts]
        ax.plot(t, [num(r["pre_normal_velocity"]) for r in impacts], "v", ms=4, color="tab:red",
                label="impact: before")
        ax.plot(t, [num(r["post_normal_velocity"]) for r in impacts], "^", ms=4, color="tab:green",
                label="impact: after")
    ax.axhline(0.0, color="k", lw=0.6)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("separation (normal) velocity [m/s]")
    ax.grid(True, alpha=0.3)
    if order or impacts:
        ax.legend(fontsize=6, loc="best")
    else:
        ax.text(0.5, 0.5, "no contacts or impacts recorded", ha="center", va="center", transform=ax.transAxes)
    ax.set_title("Separation velocities")
    fig.tight_layout()
    save(fig, out_dir, "separation_velocities.png", written)
    plt.close(fig)

    # Energy, with the impact times marked.
    fig, ax = plt.subplots(figsize=(8, 4.5))
    t = [num(r["time"]) for r in energy]
    e = [num(r["energy"]) for r in energy]
    ax.plot(t, e, "-", lw=1.2, color="tab:blue", label="kinetic + potential")
    for k, r in enumerate(impacts[:200]):
        ax.axvline(num(r["time"]), color="tab:red", lw=0.5, alpha=0.4, label="impacts" if k == 0 else None)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("energy [J]")
    ax.grid(True, alpha=0.3)
    if e:
        ax.set_title(f"Mechanical energy: {e[0]:.6g} J at start, {e[-1]:.6g} J at end")
        ax.legend(fontsize=7, loc="best")
    else:
        ax.set_title("Mechanical energy")
        ax.text(0.5, 0.5, "no samples recorded", ha="center", va="center", transform=ax.transAxes)
    fig.tight_layout()
    save(fig, out_dir, "energy.png", written)
    plt.close(fig)

    for name in written:
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
