#!/usr/bin/env python3
"""replay.html in a real browser: headless Chromium opens the page from disk
with every host name unresolvable, and the checks read its DOM (ready flag,
frame count), the pixels of its screenshots and Chromium's network log and
console.

Usage: replay_browser_test.py PLUME MODELS_DIR CASE
  CASE quadruped: the README demo (the quadruped standing up): the robot drawn
       where its projected bounding box says, start / middle / end frames that
       differ, contact arrows while the feet are on the ground and none before.
  CASE stopped:   a run that stopped early: the page says so and marks the stop.
  CASE camera:    "follow base": the ball of ball_off_step, rolled 1.5 m off the step by t = 2 s,
       drawn at the middle of the view with #follow, away from it without.
  CASE view:      `plume view` pages: the page's own forward kinematics (what the
       joint sliders drive) against plume's placements written into the page, for
       revolute (arm7 with rotated joint frames, the quadruped on a free-flyer),
       prismatic (balls_row) and planar (rod) joints; a configuration set from
       the URL moves the robot; the mesh robot (lynx_description, package://
       meshes) drawn from its mesh files.

Exit status 0 passed, 1 failed, 77 Chromium or matplotlib is missing (ctest
reports the test as skipped, with the reason printed).
"""

import concurrent.futures
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
WIDTH, HEIGHT = 800, 560
PANEL = 86  # the playback panel under the 3-D view (replay_page.html #panel)

failures = []


def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)
    return ok


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(browser, work, url, name, mode, extra=()):
    """Runs one headless Chromium (with the `extra` flags): the DOM after the page ran (stdout) and, for
    mode "screenshot", a PNG. Returns (DOM, console lines, page URLs fetched)."""
    profile = tempfile.mkdtemp(prefix="profile-", dir=work)
    netlog = os.path.join(work, name + ".netlog.json")
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu-sandbox", "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader", "--disable-background-networking", "--no-first-run",
            "--user-data-dir=" + profile, "--host-resolver-rules=MAP * ~NOTFOUND", "--log-net-log=" + netlog,
            "--enable-logging=stderr", "--v=0", f"--window-size={WIDTH},{HEIGHT}", "--hide-scrollbars",
            "--virtual-time-budget=500"] + list(extra)
    if mode == "screenshot":
        args.append("--screenshot=" + os.path.join(work, name + ".png"))
    args.append("--dump-dom")
    args.append(url)
    # A headless Chromium now and then never returns on a loaded machine (virtual time does
    # not run out): one more try with a fresh profile before the test fails.
    for attempt in (1, 2):
        try:
            r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=50)
            break
        except subprocess.TimeoutExpired:
            print(f"note: Chromium did not return within 50 s on {name} (attempt {attempt})")
            if attempt == 2:
                raise
            shutil.rmtree(profile, ignore_errors=True)
            profile = tempfile.mkdtemp(prefix="profile-", dir=work)
            args = [a if not a.startswith("--user-data-dir=") else "--user-data-dir=" + profile for a in args]
    console = [line for line in r.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    fetched = []
    try:
        with open(netlog) as f:
            log = json.load(f)
        types = {v: k for k, v in log["constants"]["logEventTypes"].items()}
        for e in log["events"]:
            p = e.get("params", {})
            # Requests made by the page carry its (file://) origin; Chromium's own
            # background requests have none.
            if types.get(e["type"]) == "URL_REQUEST_START_JOB" and "file://" in p.get("network_isolation_key", ""):
                if not p.get("url", "").startswith("file:"):
                    fetched.append(p.get("url"))
    except (OSError, ValueError, KeyError) as err:
        check(False, f"{name}: Chromium's network log is readable ({err})")
    shutil.rmtree(profile, ignore_errors=True)
    return r.stdout, console, fetched


def body_attributes(dom):
    m = re.search(r"<body([^>]*)>", dom)
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', m.group(1))) if m else {}


def load_png(path):
    import matplotlib.image
    img = matplotlib.image.imread(path)  # floats in [0, 1], H x W x (3|4)
    return (img[:, :, :3] * 255.0 + 0.5).astype("int32")


def robot_pixels(img):
    """The model colour (#3b6cc4, lit and shaded: green well above red, unlike the z axis's pure blue)."""
    r, g, b = img[:, :, 0], img[:, :, 1], img[:, :, 2]
    return (b > 110) & (b > r + 50) & (b > g + 25) & (g > r + 20)


def sticking_pixels(img):
    """Sticking-contact markers and arrows (#10b040, unlit)."""
    r, g, b = img[:, :, 0], img[:, :, 1], img[:, :, 2]
    return (abs(r - 16) < 35) & (abs(g - 176) < 35) & (abs(b - 64) < 35)


def static_checks(page):
    text = open(page, encoding="utf-8").read()
    size = os.path.getsize(page)
    check(size <= 5_000_000, f"replay.html is {size / 1e6:.2f} MB (at most 5 MB)")
    check(not re.search(r"<script[^>]*\bsrc\s*=", text, re.I), "no external script")
    check(not re.search(r"<link\b", text, re.I), "no linked stylesheet or resource")
    check(not re.search(r"<(img|iframe|video|audio|source)\b[^>]*\bsrc\s*=", text, re.I), "no external image or media")
    check(not re.search(r"url\(\s*['\"]?(https?:)?//", text, re.I), "no CSS url() to the network")
    return text


def run_plume(plume, args):
    r = subprocess.run([plume] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    return r


def case_quadruped(plume, models, browser, work):
    out = os.path.join(work, "quadruped")
    r = run_plume(plume, ["simulate", os.path.join(models, "worlds", "quadruped_standing.xml"), "--out", out,
                          "--no-plots"])
    if not check(r.returncode == 0, "plume simulate quadruped_standing.xml exits 0\n" + r.stdout + r.stderr):
        return
    page = os.path.join(out, "replay.html")
    if not check(os.path.exists(page), "replay.html written next to the CSVs"):
        return
    static_checks(page)
    summary = json.load(open(os.path.join(out, "summary.json")))
    check(summary.get("replay") == "replay.html", "summary.json names the replay")
    samples = summary["samples"]
    url = "file://" + page
    # The feet touch down at t = 0.064 s: t = 0 has no contact, 1.0 and the end rest on four feet.
    # The view pinned to the window's size above the panel, so that the DOM dump and
    # the screenshot (taken at different moments of Chromium's layout) agree.
    size = f"&size={WIDTH}x{HEIGHT - PANEL}"
    shots = {"start": "#t=0" + size, "middle": "#t=1" + size, "end": "#t=2" + size}
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        jobs = {name: pool.submit(chromium, browser, work, url + frag, name, "screenshot") for name, frag in shots.items()}
        # A browser without WebGL (no GPU, no SwiftShader): the page draws with three.js's SVG renderer.
        nogl = pool.submit(chromium, browser, work, url + shots["middle"], "nowebgl", "screenshot", ["--disable-3d-apis"])
        results = {k: j.result() for k, j in jobs.items()}
        nogl = nogl.result()
    for name, (_, console, fetched) in results.items():
        check(not console, f"{name}: console clean {console[:3]}")
        check(not fetched, f"{name}: nothing fetched from the network {fetched[:3]}")

    attrs = {name: body_attributes(results[name][0]) for name in shots}
    end = attrs["end"]
    for name, frag in shots.items():
        a = attrs[name]
        check(a.get("ready") == "true", f"{name}: the page reports itself ready ({a.get('ready')})")
        check(a.get("frames") == str(samples), f"{name}: frame count {a.get('frames')} = trajectory rows {samples}")
    check(abs(float(end.get("time", "nan")) - 2.0) < 1e-9, "#t=2 shows t = 2")
    check(attrs["end"].get("contacts") == "4", f"four feet in contact at the end ({end.get('contacts')})")
    check(attrs["middle"].get("contacts") == "4", f"four feet in contact at t = 1 ({attrs['middle'].get('contacts')})")
    check(attrs["start"].get("contacts") == "0", f"no contact at the start ({attrs['start'].get('contacts')})")

    # The 3-D view only: the panel under it (86 px) has blue and green controls of its own.
    imgs = {name: load_png(os.path.join(work, name + ".png"))[:HEIGHT - PANEL] for name in shots}
    for name, img in imgs.items():
        check(img.shape[0] == HEIGHT - PANEL and img.shape[1] == WIDTH, f"{name}: screenshot {img.shape[1]} px wide")
    for name in ("start", "middle", "end"):
        box = [int(v) for v in attrs[name].get("robot-box", "0,0,0,0").split(",")]
        mask = robot_pixels(imgs[name])
        total = int(mask.sum())
        x0, y0, x1, y1 = max(box[0] - 2, 0), max(box[1] - 2, 0), box[2] + 2, box[3] + 2
        inside = int(mask[y0:y1, x0:x1].sum())
        check(total > 2000, f"{name}: the robot is drawn ({total} robot-coloured pixels)")
        check(inside >= 0.97 * total, f"{name}: {inside} of them inside the projected bounding box {box}")
    # The robot moves: the trunk sinks 2.3 cm and the legs bend (robot-coloured pixels only, not the arrows).
    robot = {name: robot_pixels(imgs[name]) for name in shots}
    diff = int((robot["start"] ^ robot["middle"]).sum())
    check(diff > 500, f"the robot moved between the start and middle frames ({diff} pixels differ)")
    diff_end = int((abs(imgs["start"] - imgs["end"]).sum(axis=2) > 60).sum())
    check(diff_end > 500, f"start and end frames differ in {diff_end} pixels")
    # Contact arrows (sticking green) appear once the feet are down, and only then.
    green = {name: int(sticking_pixels(imgs[name]).sum()) for name in imgs}
    check(green["start"] < 20, f"start: no contact arrows ({green['start']} green pixels)")
    check(green["middle"] > 150, f"middle: contact arrows drawn ({green['middle']} green pixels)")
    check(green["end"] > 150, f"end: contact arrows drawn ({green['end']} green pixels)")

    # Without WebGL: the same frame drawn by the SVG renderer, the robot inside its box, the arrows.
    dom, console, fetched = nogl
    a = body_attributes(dom)
    check(a.get("ready") == "true" and a.get("renderer") == "svg",
          f"no WebGL: the page is ready, drawn as SVG ({a.get('ready')}, {a.get('renderer')})")
    check(attrs["middle"].get("renderer") == "webgl", f"with WebGL: drawn by WebGL ({attrs['middle'].get('renderer')})")
    check(not console, f"no WebGL: console clean {console[:3]}")
    check(not fetched, f"no WebGL: nothing fetched {fetched[:3]}")
    img = load_png(os.path.join(work, "nowebgl.png"))[:HEIGHT - PANEL]
    box = [int(v) for v in (a.get("robot-box") or "0,0,0,0").split(",")]
    mask = robot_pixels(img)
    total = int(mask.sum())
    inside = int(mask[max(box[1] - 2, 0):box[3] + 2, max(box[0] - 2, 0):box[2] + 2].sum())
    check(total > 2000 and inside >= 0.97 * total,
          f"no WebGL: the robot is drawn ({total} robot-coloured pixels, {inside} inside its box {box})")
    green_svg = int(sticking_pixels(img).sum())
    check(green_svg > 150, f"no WebGL: contact arrows drawn ({green_svg} green pixels)")


def case_stopped(plume, models, browser, work):
    world = os.path.join(work, "drop.xml")
    with open(world, "w") as f:
        f.write(f"""<world>
  <model name="ball" urdf="{models}/ball.urdf" root="free"><state q="0 0 0.3 0 0 0 1"/></model>
  <ground/>
  <contact mu="0.5" restitution="0.5"/>
  <simulate duration="2" output_rate="100" max_steps="25"/>
</world>
""")
    out = os.path.join(work, "stopped")
    r = run_plume(plume, ["simulate", world, "--out", out, "--no-plots"])
    check(r.returncode == 3, f"the run stops early (exit {r.returncode})")
    page = os.path.join(out, "replay.html")
    if not check(os.path.exists(page), "a stopped run still gets its replay.html"):
        return
    static_checks(page)
    summary = json.load(open(os.path.join(out, "summary.json")))
    dom, console, fetched = chromium(browser, work, "file://" + page + "#paused", "stopped", "dom")
    attrs = body_attributes(dom)
    check(attrs.get("ready") == "true", "the page reports itself ready")
    check(attrs.get("frames") == str(summary["samples"]), f"frame count {attrs.get('frames')} = {summary['samples']}")
    check(not console, f"console clean {console[:3]}")
    check(not fetched, f"nothing fetched {fetched[:3]}")
    banner = re.search(r'<div id="banner"[^>]*>(.*?)</div>', dom, re.S)
    check(banner is not None and "stopped early" in banner.group(1) and summary["status"] in banner.group(1),
          "the banner says the run stopped early and why")
    stop = re.search(r'class="mark stop"[^>]*data-time="([^"]+)"', dom)
    check(stop is not None and abs(float(stop.group(1)) - summary["time"]) < 1e-9,
          "the timeline marks the stop at the time the run ended")


def case_camera(plume, models, browser, work):
    out = os.path.join(work, "ball")
    r = run_plume(plume, ["simulate", os.path.join(models, "worlds", "ball_off_step.xml"), "--out", out, "--no-plots"])
    if not check(r.returncode == 0, "plume simulate ball_off_step.xml exits 0\n" + r.stdout + r.stderr):
        return
    url = "file://" + os.path.join(out, "replay.html") + f"#t=2&size={WIDTH}x{HEIGHT - PANEL}"
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {name: pool.submit(chromium, browser, work, url + frag, name, "screenshot")
                for name, frag in (("fixed_camera", ""), ("follow", "&follow"))}
        results = {k: j.result() for k, j in jobs.items()}
    centres = {}
    for name, (dom, console, fetched) in results.items():
        check(body_attributes(dom).get("ready") == "true", f"{name}: the page is ready")
        check(not console and not fetched, f"{name}: console clean, nothing fetched {console[:2]} {fetched[:2]}")
        mask = robot_pixels(load_png(os.path.join(work, name + ".png"))[:HEIGHT - PANEL])
        ys, xs = mask.nonzero()
        if check(len(xs) > 500, f"{name}: the ball is drawn ({len(xs)} pixels)"):
            centres[name] = (float(xs.mean()), float(ys.mean()))
    if len(centres) == 2:
        mid = (WIDTH / 2, (HEIGHT - PANEL) / 2)
        fx, fy = centres["follow"]
        check(abs(fx - mid[0]) < 0.05 * WIDTH and abs(fy - mid[1]) < 0.05 * (HEIGHT - PANEL),
              f"#follow: the ball at the middle of the view ({fx:.0f}, {fy:.0f} px; middle {mid[0]:.0f}, {mid[1]:.0f})")
        gx, gy = centres["fixed_camera"]
        check(math.hypot(gx - fx, gy - fy) > 100,
              f"without #follow the camera stays: the ball elsewhere ({gx:.0f}, {gy:.0f} px)")


def page_data(page):
    text = open(page, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="plume-data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def pose_error(a, b):
    """Largest difference between two pose lists [x y z qx qy qz qw]*: positions [m] and rotations
    (|q1 - q2| with the sign of the quaternion chosen)."""
    worst = 0.0
    for k in range(0, len(a), 7):
        worst = max(worst, max(abs(a[k + i] - b[k + i]) for i in range(3)))
        qa, qb = a[k + 3:k + 7], b[k + 3:k + 7]
        same = max(abs(x - y) for x, y in zip(qa, qb))
        flip = max(abs(x + y) for x, y in zip(qa, qb))
        worst = max(worst, min(same, flip))
    return worst


def case_view(plume, models, browser, work):
    import random
    rng = random.Random(19)
    size = f"#size={WIDTH - 320}x{HEIGHT}"  # the 3-D view; the joint sliders take the 320 px beside it
    # The collision shapes, except for the rod, whose collision shapes are two points (spheres of
    # radius 0): it is drawn by its visual, a 1 cm thin cylinder (lynx below is seen both ways).
    shapes_of = {"rod": ""}
    # (name, urdf, root, configuration maker given nq): nonzero joint angles, a tilted base.
    def angles(n, lo=-1.0, hi=1.0):
        return [round(rng.uniform(lo, hi), 6) for _ in range(n)]
    def free(n):
        return [0.1, -0.2, 0.5, 0.2, -0.1, 0.3, 0.9274] + angles(n - 7)
    cases = [
        ("arm7", "arm7.urdf", "fixed", angles),
        ("quadruped", "quadruped.urdf", "free", free),
        ("balls_row", "balls_row.urdf", "fixed", lambda n: angles(n, -0.3, 0.3)),
        ("rod", "rod.urdf", "planar", lambda n: [0.3, -0.4, 0.7] + angles(n - 3)),
    ]
    jobs = []
    for name, urdf, root, make in cases:
        path = os.path.join(models, urdf)
        neutral = os.path.join(work, name + "_neutral.html")
        r = run_plume(plume, ["view", path, "--root", root, "--out", neutral])
        if not check(r.returncode == 0, f"plume view {urdf} --root {root} exits 0: {r.stdout}{r.stderr}"):
            continue
        check(neutral in r.stdout, f"{name}: plume view prints the page's path ({r.stdout.strip()})")
        static_checks(neutral)
        d0 = page_data(neutral)
        nq = len(d0["q"])
        q = make(nq)
        posed = os.path.join(work, name + "_posed.html")
        r = run_plume(plume, ["view", path, "--root", root, "--out", posed, "--q", ",".join(map(str, q))])
        if not check(r.returncode == 0, f"plume view {urdf} --q exits 0: {r.stderr}"):
            continue
        d1 = page_data(posed)
        one_dof = sum(1 for b in d0["bodies"] if b["joint"]["nq"] == 1)
        check(len(d0["sliders"]) == one_dof, f"{name}: a slider per 1-DoF joint ({len(d0['sliders'])})")
        # The neutral page opened at the posed page's q (as the sliders would set it): the page's
        # forward kinematics must put every body where plume's (in the posed page) does.
        shapes = shapes_of.get(name, "&collision")
        jobs.append((name, "file://" + neutral + size + shapes + "&q=" + ",".join(map(repr, d1["q"])), d1["poses"][0],
                     "shot"))
        # The rod's own page with its collision shapes: two points, nothing of any size drawn.
        own_mode = "points" if name == "rod" else "dom"
        jobs.append((name + "_own", "file://" + posed + size + ("&collision" if name == "rod" else shapes),
                     d1["poses"][0], own_mode))
        jobs.append((name + "_neutral", "file://" + neutral + size + shapes, d0["poses"][0], "shot"))
    # A one-link model with the default fixed root: the link welded to the world is the robot,
    # drawn in its colour and framed (it was drawn grey as scenery, with no robot box).
    ball = os.path.join(work, "ball_fixed.html")
    r = run_plume(plume, ["view", os.path.join(models, "ball.urdf"), "--out", ball])
    if check(r.returncode == 0, f"plume view ball.urdf exits 0: {r.stdout}{r.stderr}"):
        jobs.append(("ball_fixed", "file://" + ball + size, [], "shot"))
    # The mesh robot: package:// meshes found through --package-dir.
    lynx = os.path.join(work, "lynx.html")
    r = run_plume(plume, ["view", os.path.join(models, "lynx_description", "urdf", "lynx.urdf"), "--root", "free",
                          "--package-dir", models, "--out", lynx])
    if check(r.returncode == 0, f"plume view lynx.urdf --package-dir exits 0: {r.stdout}{r.stderr}"):
        static_checks(lynx)
        d = page_data(lynx)
        sources = [s.get("source") for b in d["bodies"] for s in b["shapes"] if s["type"] == "mesh"]
        check(len(sources) >= 12 and all(s == "file" for s in sources),
              f"lynx: every mesh drawn from its file ({len(sources)} meshes: {sorted(set(map(str, sources)))})")
        jobs.append(("lynx", "file://" + lynx + size, d["poses"][0], "shot"))
        # Its hips have visual cylinders and no collision shape: drawn with the visuals, gone with #collision.
        hips = [b for b in d["bodies"] if b["name"].endswith("_hip")]
        check(len(hips) == 4 and all(not b["shapes"] and b.get("visuals") for b in hips),
              "lynx: the hips carry visual shapes only")
        jobs.append(("lynx_collision", "file://" + lynx + size + "&collision", d["poses"][0], "shot"))

    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: (pool.submit(chromium, browser, work, url, name, "dom" if mode == "dom" else "screenshot"),
                          expected, mode) for name, url, expected, mode in jobs}
        results = {name: (f.result(), expected, mode) for name, (f, expected, mode) in futures.items()}
    for name, ((dom, console, fetched), expected, mode) in results.items():
        attrs = body_attributes(dom)
        check(attrs.get("ready") == "true" and attrs.get("mode") == "view", f"{name}: the view page is ready")
        check(not console, f"{name}: console clean {console[:3]}")
        check(not fetched, f"{name}: nothing fetched from the network {fetched[:3]}")
        try:
            shown = json.loads(attrs.get("poses", "[]").replace("&quot;", '"'))
        except ValueError:
            shown = []
        ok = len(shown) == len(expected)
        err = pose_error(shown, expected) if ok else float("inf")
        check(ok and err < 2e-5, f"{name}: the page's forward kinematics matches plume's placements (max error {err:.2e})")
        if mode == "points":
            img = load_png(os.path.join(work, name + ".png"))[:, :WIDTH - 320]
            total = int(robot_pixels(img).sum())
            check(total < 30, f"{name}: collision spheres of radius 0 are not drawn ({total} robot-coloured pixels)")
        if mode == "shot":
            img = load_png(os.path.join(work, name + ".png"))[:, :WIDTH - 320]  # the 3-D view, not the sliders
            box = [int(v) for v in (attrs.get("robot-box") or "0,0,0,0").split(",")]
            mask = robot_pixels(img)
            total = int(mask.sum())
            x0, y0, x1, y1 = max(box[0] - 2, 0), max(box[1] - 2, 0), box[2] + 2, box[3] + 2
            inside = int(mask[y0:y1, x0:x1].sum())
            check(total > 500, f"{name}: the robot is drawn ({total} robot-coloured pixels)")
            check(inside >= 0.97 * total, f"{name}: {inside} of them inside the projected bounding box {box}")
    if "lynx" in results and "lynx_collision" in results:
        shapes = {k: body_attributes(results[k][0][0]).get("shapes") for k in ("lynx", "lynx_collision")}
        check(shapes == {"lynx": "visual", "lynx_collision": "collision"}, f"lynx: visual and collision shapes ({shapes})")
        vis = int(robot_pixels(load_png(os.path.join(work, "lynx.png"))[:, :WIDTH - 320]).sum())
        col = int(robot_pixels(load_png(os.path.join(work, "lynx_collision.png"))[:, :WIDTH - 320]).sum())
        check(vis > col + 200, f"lynx: the visual hips add to the robot drawn ({vis} pixels, {col} with collision shapes)")
    for name, _, _, _ in cases:
        if name in results and name + "_neutral" in results:
            a = robot_pixels(load_png(os.path.join(work, name + ".png"))[:, :WIDTH - 320])
            b = robot_pixels(load_png(os.path.join(work, name + "_neutral.png"))[:, :WIDTH - 320])
            diff = int((a ^ b).sum())
            check(diff > 300, f"{name}: the configuration from the URL moves the robot ({diff} pixels differ)")


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    plume, models, case = argv[1], os.path.abspath(argv[2]), argv[3]
    browser = find_chromium()
    if not browser:
        print("SKIPPED: Chromium is not installed (Debian: apt-get install chromium); the browser tests need it")
        return SKIP
    try:
        import matplotlib.image  # noqa: F401  (reads the screenshots)
    except ImportError:
        print("SKIPPED: python3-matplotlib is not installed; it reads the screenshots")
        return SKIP
    work = tempfile.mkdtemp(prefix="plume_browser_")
    try:
        {"quadruped": case_quadruped, "stopped": case_stopped, "view": case_view, "camera": case_camera}[case](plume, models, browser, work)
    finally:
        if not failures:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("outputs kept in " + work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
