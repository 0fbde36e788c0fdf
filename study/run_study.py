#!/usr/bin/env python3
"""The scheme study in one command: configure and build study/ (plume as a
subproject plus plume_study), run it, and write into docs/study/

  results.csv          one row per (scene, scheme, tolerance or time step)
  table.md             the Markdown tables (defaults first, then every run)
  wp_<scene>.png       work-precision plots: error against wall time and
                       against right-hand-side evaluations, one line per scheme

Usage: python3 study/run_study.py [--quick] [--build-dir DIR] [--out-dir DIR]
                                  [--jobs N] [--no-build]

--quick runs the default settings and one looser setting per scheme (about
15 s); the full study about 45 s (plus the build). --reuse only redraws the
table and the plots from an existing results.csv.
matplotlib (Debian: python3-matplotlib) draws the plots with the Agg backend;
when the running interpreter lacks it and /usr/bin/python3 has it, the script
re-runs itself there.
"""
import argparse
import csv
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What SimulationOptions uses when nothing is set: abs_tol = rel_tol = 1e-10,
# time_step = 1e-3.
DEFAULTS = {"tolerance": 1e-10, "time_step": 1e-3}
SCHEMES = ["event-driven", "event-driven/bogacki-shampine", "compliant/dopri5", "compliant/rosenbrock4", "time-stepping"]
STYLE = {
    "event-driven": ("tab:blue", "o"),
    "event-driven/bogacki-shampine": ("tab:purple", "v"),
    "compliant/dopri5": ("tab:orange", "s"),
    "compliant/rosenbrock4": ("tab:red", "D"),
    "time-stepping": ("tab:green", "^"),
}
SCENES = {
    "bouncing_ball": "Bouncing ball (e = 0.8, dropped 1 m, 5 s)",
    "falling_rod": "Falling rod (45°, frictionless floor, 1 s)",
    "newtons_cradle": "Newton's cradle (5 balls, 1 mm gaps, 20 ms)",
    "bowling_ball": "Bowling ball (v0 = 2 m/s, μ = 0.2, 0.5 s)",
    "quadruped": "Quadruped standing demo (PD at 1 kHz, 2 s)",
}


def ensure_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        system = "/usr/bin/python3"
        if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system) \
                and not os.environ.get("PLUME_STUDY_REEXEC"):
            probe = subprocess.run([system, "-c", "import matplotlib"], capture_output=True)
            if probe.returncode == 0:
                env = dict(os.environ, PLUME_STUDY_REEXEC="1")
                os.execve(system, [system] + sys.argv, env)
        return False


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def build(build_dir, jobs):
    run(["cmake", "-S", os.path.join(ROOT, "study"), "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release"],
        stdout=subprocess.DEVNULL)
    run(["cmake", "--build", build_dir, "-j", str(jobs), "--target", "plume_study"])


def num(x):
    return float(x) if x not in ("", None) else math.nan


def load(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            for k in ("value", "wall_time", "error", "rest_error", "final_error", "max_penetration",
                      "penetration_end", "energy_error", "momentum_error", "rigid_deviation"):
                r[k] = num(r[k])
            for k in ("steps", "rhs_evaluations", "lcp_solves", "events"):
                r[k] = int(r[k])
            r["default"] = math.isclose(r["value"], DEFAULTS[r["knob"]], rel_tol=1e-9)
            rows.append(r)
    return rows


def fmt(x, digits=2):
    if isinstance(x, float) and math.isnan(x):
        return "–"
    if x == 0:
        return "0"
    return f"{x:.{digits}g}" if abs(x) >= 1e-3 and abs(x) < 1e4 else f"{x:.{digits}e}".replace("e-0", "e-").replace("e+0", "e+")


def measure(r):
    return r["error_what"].replace("|", "&#124;")


def knob(r):
    return ("h = " if r["knob"] == "time_step" else "tol = ") + fmt(r["value"], 1)


def table(rows, quick):
    out = []
    out.append("# Scheme study: results\n")
    out.append("Written by `python3 study/run_study.py%s` (do not edit by hand). "
               "The plots are `wp_<scene>.png` beside this file; docs/schemes.md explains the scenes, "
               "the error measures and what follows from them.\n" % (" --quick" if quick else ""))
    out.append("*error* is measured against the closed form of the scheme's own contact model where there "
               "is one (rigid: impact times, energy integral, 2v0/(7μg), k ms; compliant: the Kelvin–Voigt "
               "bounce and the sequential Kelvin–Voigt cradle), otherwise against a converged run (compliant "
               "rod and bowling ball: compliant/dopri5 at 1e-12; quadruped: event-driven or compliant/dopri5 "
               "at 1e-12). *vs rigid* is how far a compliant run is from the rigid closed form (the model "
               "difference, not an integration error). *penetration* is the largest −φ over the run. "
               "*energy* is |E_end − E_expected|. Wall times are for one core of the machine that ran the "
               "study and vary by ±20 % between runs.\n")
    out.append("## At the default settings (tolerance 1e-10, time_step 1e-3)\n")
    out.append("| scene | scheme | error | measure | vs rigid | rest time error | penetration | energy | wall [s] | RHS evals | LCP solves | events |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for scene in SCENES:
        for scheme in SCHEMES:
            for r in rows:
                if r["scene"] == scene and r["scheme"] == scheme and r["default"]:
                    out.append(f"| {scene} | {scheme} | {fmt(r['error'])} | {measure(r)} | {fmt(r['rigid_deviation'])} | "
                               f"{fmt(r['rest_error'])} | {fmt(r['max_penetration'])} | {fmt(r['energy_error'])} | "
                               f"{fmt(r['wall_time'])} | {r['rhs_evaluations']} | {r['lcp_solves']} | {r['events']} |")
    out.append("")
    out.append("## Every run\n")
    for scene, title in SCENES.items():
        sel = [r for r in rows if r["scene"] == scene]
        if not sel:
            continue
        out.append(f"### {title}\n")
        out.append(f"![work-precision, {scene}](wp_{scene}.png)\n")
        out.append("| scheme | setting | status | error | final state | vs rigid | penetration | energy | wall [s] | steps | RHS evals | LCP solves | events |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for scheme in SCHEMES:
            for r in sel:
                if r["scheme"] != scheme:
                    continue
                mark = " (default)" if r["default"] else ""
                out.append(f"| {scheme} | {knob(r)}{mark} | {r['status']} | {fmt(r['error'])} | {fmt(r['final_error'])} | "
                           f"{fmt(r['rigid_deviation'])} | {fmt(r['max_penetration'])} | {fmt(r['energy_error'])} | "
                           f"{fmt(r['wall_time'])} | {r['steps']} | {r['rhs_evaluations']} | {r['lcp_solves']} | {r['events']} |")
        whats = sorted({(r["scheme"].split("/")[0], r["error_what"]) for r in sel})
        out.append("")
        out.append("error: " + "; ".join(f"{s}: {w}".replace("|", "&#124;") for s, w in whats) + ". "
                   "final state: the difference of the end state from the expected one.\n")
    return "\n".join(out) + "\n"


def plots(rows, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    written = []
    floor = 1e-17  # an error of exactly 0 is drawn here
    for scene, title in SCENES.items():
        sel = [r for r in rows if r["scene"] == scene and r["status"] == "finished" and not math.isnan(r["error"])]
        if not sel:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
        for ax, key, label in ((axes[0], "wall_time", "wall time [s]"),
                               (axes[1], "rhs_evaluations", "right-hand-side evaluations")):
            for scheme in SCHEMES:
                pts = sorted((r for r in sel if r["scheme"] == scheme), key=lambda r: r["value"], reverse=True)
                if not pts:
                    continue
                color, marker = STYLE[scheme]
                xs = [max(r[key], 1e-6) for r in pts]
                ys = [max(r["error"], floor) for r in pts]
                ax.loglog(xs, ys, marker=marker, color=color, label=scheme)
                for r, x, y in zip(pts, xs, ys):
                    if r["default"]:
                        ax.plot([x], [y], marker=marker, color=color, markersize=12, markerfacecolor="none")
            ax.set_xlabel(label)
            ax.grid(True, which="major", alpha=0.3)
        axes[0].set_ylabel("error (see table.md)")
        axes[1].legend(fontsize=8, loc="best")
        fig.suptitle(f"{title}: error against cost (ringed: default setting)", fontsize=10)
        fig.tight_layout()
        path = os.path.join(out_dir, f"wp_{scene}.png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        written.append(path)
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="defaults and one looser setting per scheme")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build-study"))
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "docs", "study"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-build", action="store_true", help="use the plume_study already built")
    ap.add_argument("--reuse", action="store_true", help="only redraw the table and plots from results.csv")
    args = ap.parse_args()

    have_mpl = ensure_matplotlib()
    os.makedirs(args.out_dir, exist_ok=True)
    csv_path = os.path.join(args.out_dir, "results.csv")
    if not args.reuse:
        if not args.no_build:
            build(args.build_dir, args.jobs)
        tmp = csv_path + ".tmp"
        start = time.time()
        cmd = [os.path.join(args.build_dir, "plume_study"), "--out", tmp] + (["--quick"] if args.quick else [])
        run(cmd)
        os.replace(tmp, csv_path)
        print(f"study ran in {time.time() - start:.0f} s", flush=True)

    rows = load(csv_path)
    bad = [r for r in rows if r["status"] != "finished"]
    with open(os.path.join(args.out_dir, "table.md"), "w") as f:
        f.write(table(rows, args.quick))
    if have_mpl:
        for p in plots(rows, args.out_dir):
            print("wrote", os.path.relpath(p, ROOT))
    else:
        print("matplotlib is missing (Debian: apt-get install python3-matplotlib): no plots", file=sys.stderr)
    print("wrote", os.path.relpath(csv_path, ROOT), "and", os.path.relpath(os.path.join(args.out_dir, "table.md"), ROOT))
    for r in bad:
        print(f"warning: {r['scene']} {r['scheme']} {knob(r)}: {r['status']}", file=sys.stderr)
    return 0 if have_mpl and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
