"""tools/animate (rollsim.animate) and the snapshot view of tools/plot, on result files with a /scene.

The files are scene_fixtures' (motions in closed form, written with h5py as the program writes /scene), and
real runs where the program writes /scene.  The page is loaded in headless Chromium (tests/python/browser.py),
the slider moved to a time, and a body found in the screenshot by its colour: its centroid must lie where the
file's coordinates at that time (read here with h5py and interpolated with numpy) project through the page's
camera.  The video is checked with ffprobe (frame rate, frame count = duration x fps / speed).
"""

import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")

import browser
import scene_fixtures as fx
import synth
import rollsim.animate
import rollsim.plot
import rollsim.scene

ANIMATE = os.path.join(synth.TOOLS, "animate")
PLOT = os.path.join(synth.TOOLS, "plot")
WIDTH, HEIGHT = 1000, 700
RED = np.array([214, 39, 40])       # the planar fixture's bob, #d62728
# The bob is a disk of radius BOB_RADIUS = 0.06 m, about 30 px on this page.  The centroid of a filled disk drawn
# with anti-aliased edges lies within a pixel of its centre (the trail's 1-px line crossing half of it moves the
# centroid by under 0.1 px); 1.5 px is 5 % of the radius.
PLANAR_TOLERANCE_PX = 1.5
# The sphere of the 3-D fixture (radius 0.1 m, about 20 px) under a perspective camera: its outline's centroid is
# off the projected centre by about r^2 / d^2 of its radius (d ~ 3.6 m: 0.1 %), and its black meridian and mark
# take pixels from one side (a band 3 % of the radius wide): 2 px, a tenth of the radius.
SPHERE_TOLERANCE_PX = 2.0

# Real runs of shipped scenarios and the body the check finds by its colour on their pages (a round one whose
# colour no other drawable has).
REAL_RUNS = (("tipping_table", "02_wheel"), ("carriage_pendulum", "05_ball"), ("double_pendulum", "02_mass1"),
             ("disk_type_a", "03_disk"))


def run(*args, env=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, env=env)


def interpolate(h5path, dataset, t):
    """The file's dataset (rows x ...) at time t, linearly between the samples of /trajectory/time (h5py)."""
    with h5py.File(h5path, "r") as f:
        times = f["trajectory/time"][:]
        values = f[dataset][:]
    flat = values.reshape(values.shape[0], -1)
    return np.array([np.interp(t, times, flat[:, k]) for k in range(flat.shape[1])]).reshape(values.shape[1:])


def project(camera, p):
    """World point -> page pixel through the page's camera (three.js matrices, column-major)."""
    P = np.array(camera["projection"]).reshape(4, 4).T
    V = np.array(camera["view"]).reshape(4, 4).T
    clip = P @ V @ np.append(p, 1.0)
    ndc = clip[:3] / clip[3]
    return np.array([camera["left"] + (ndc[0] + 1) / 2 * camera["width"],
                     camera["top"] + (1 - ndc[1]) / 2 * camera["height"]])


def image(path):
    import matplotlib.image as mpimg
    return np.round(mpimg.imread(path)[..., :3] * 255).astype(int)


def in_canvas(mask, camera):
    """The mask within the page's drawing (not the controls below it: the time bar's blue, its red marks)."""
    keep = np.zeros_like(mask)
    top, left = int(np.ceil(camera["top"])), int(np.ceil(camera["left"]))
    keep[top:int(camera["top"] + camera["height"]), left:int(camera["left"] + camera["width"])] = True
    return mask & keep


def centroid(mask):
    ys, xs = np.nonzero(mask)
    return np.array([xs.mean() + 0.5, ys.mean() + 0.5]), int(mask.sum())  # pixel centres


class Urls(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.loads = []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("src", "href", "data", "poster", "srcset", "action") and v:
                self.loads.append((tag, k, v))
        if tag in ("link", "iframe", "object", "embed", "img"):
            self.loads.append((tag, "element", dict(attrs)))


class FixtureCase(unittest.TestCase):
    """A temporary folder holding the two fixtures' files (planar, rolling), removed at the end."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test-animate-")
        cls.planar = fx.write_planar(os.path.join(cls.tmp, "planar.h5"))
        cls.rolling = fx.write_rolling(os.path.join(cls.tmp, "rolling.h5"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)


class SceneTest(FixtureCase):
    """rollsim.scene: the values at a time against the file (h5py) and the fixtures' closed forms."""

    def test_values_at_a_time(self):
        sc = rollsim.scene.load(self.rolling)
        self.assertEqual((sc.dimension, sc.length_unit, sc.n), (3, "m", 161))
        self.assertEqual([d.name for d in sc.drawables], ["floor", "disk", "ball", "disk_contact", "contact_path"])
        self.assertEqual(sc.events, [(fx.LIFT_OFF, "lift_off")])
        self.assertEqual((sc.mode_name(sc.mode_at(1.0)), sc.mode_name(sc.mode_at(1.95))), ("rolling", "free flight"))
        disk = sc.drawables[1]
        t = 0.7031  # between two samples 0.0125 s apart
        np.testing.assert_allclose(sc.value(disk, "position", t), interpolate(self.rolling, "scene/01_disk/position", t),
                                   rtol=0, atol=1e-15)
        R = sc.value(disk, "rotation", t)  # a blend of two rotations, made a rotation again
        np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-12)
        self.assertAlmostEqual(np.linalg.det(R), 1.0, places=12)
        # within the blend's error of the closed form: the rotation turns by 0.05 rad between samples
        self.assertLess(np.max(np.abs(R - fx.disk_pose(t)[1])), 0.05 ** 2)
        floor = sc.drawables[0]
        np.testing.assert_array_equal(sc.value(floor, "rotation", t), np.eye(3))  # static: its one row
        contact = sc.drawables[3]
        last = sc.time[sc.time <= fx.LIFT_OFF][-1]
        self.assertTrue(np.all(np.isfinite(sc.value(contact, "points", last))))
        self.assertTrue(np.all(np.isnan(sc.value(contact, "points", last + 0.001))))  # NaN beside: hidden
        self.assertEqual(rollsim.scene.shapes(sc, contact, last + 0.001, 1.0), [])
        trail = sc.trail(sc.drawables[4], t)
        self.assertEqual(trail.shape, (int(np.searchsorted(sc.time, t)) + 1, 3))
        np.testing.assert_allclose(trail[-1], interpolate(self.rolling, "scene/04_contact_path/points", t)[0])

    def test_frame_indices(self):
        long = fx.write_planar(os.path.join(self.tmp, "long_scene.h5"), n=9001)
        sc = rollsim.scene.load(long)
        idx = rollsim.scene.frame_indices(sc, 500)
        self.assertLessEqual(idx.size, 500)
        self.assertEqual((idx[0], idx[-1]), (0, 9000))
        i = int(np.searchsorted(sc.time, sc.events[0][0]))
        self.assertTrue({i - 1, i} <= set(idx.tolist()))
        np.testing.assert_array_equal(rollsim.scene.frame_indices(sc, 10_000), np.arange(9001))


class PageTest(FixtureCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.planar_html = rollsim.animate.write_html(cls.planar, os.path.join(cls.tmp, "planar.html"))
        cls.rolling_html = rollsim.animate.write_html(cls.rolling, os.path.join(cls.tmp, "rolling.html"))
        cls.browser = browser.Browser(WIDTH, HEIGHT) if browser.chromium() else None

    @classmethod
    def tearDownClass(cls):
        if cls.browser:
            cls.browser.close()
        super().tearDownClass()

    def need_browser(self):
        if not self.browser:
            self.skipTest("chromium is not installed (tools/install-deps installs it)")
        return self.browser

    def show(self, page, t, forces=False, shot="shot.png"):
        """Open ``page``, move the slider to ``t`` as a user would (its value, then an input event), set the
        forces' checkbox; return the screenshot's pixels and the page's camera."""
        b = self.need_browser()
        b.open("file://" + page)
        b.evaluate(f"""(() => {{ const s = document.getElementById("slider"); s.value = {t!r};
            s.dispatchEvent(new Event("input", {{bubbles: true}}));
            const box = document.getElementById("forces"); if (box.checked !== {str(forces).lower()}) box.click();
            return 1; }})()""")
        path = b.screenshot(os.path.join(self.tmp, shot))
        return image(path), b.evaluate("window.rollsimCamera()")

    # ------------------------------------------------------------------ the file itself
    def test_self_contained(self):
        with open(self.planar_html, encoding="utf-8") as f:
            text = f.read()
        p = Urls()
        p.feed(text)
        self.assertEqual(p.loads, [], "the page loads something from outside")
        self.assertNotRegex(text, r"@import|url\(\s*['\"]?https?:")
        with open("/usr/share/javascript/three/three.min.js", encoding="utf-8") as f:
            self.assertIn(f.read()[:2000], text, "three.js is not inlined")
        b = self.need_browser()
        b.open("file://" + self.planar_html)
        self.assertEqual(b.requests(), ["file://" + self.planar_html], "the page asked for more than itself")

    def test_decimated_long_run(self):
        long = fx.write_planar(os.path.join(self.tmp, "long.h5"), n=20001)
        text = rollsim.animate.render_html(rollsim.scene.load(long))
        data = json.loads(re.search(r'id="rollsim-data">(.*?)</script>', text, re.S).group(1).replace("<\\/", "</"))
        times = np.array(data["times"])
        with h5py.File(long, "r") as f:
            t = f["trajectory/time"][:]
            events = f["events/time"][:]
        self.assertLessEqual(times.size, rollsim.animate.MAX_FRAMES)
        self.assertGreater(times.size, rollsim.animate.MAX_FRAMES // 2)
        self.assertEqual((times[0], times[-1]), (t[0], t[-1]))
        for te in events[events <= t[-1]]:  # the samples either side of every event in the run are kept
            i = int(np.searchsorted(t, te))
            for kept in (t[i - 1], t[i]):
                self.assertLess(np.min(np.abs(times - kept)), 1e-9, f"sample at {kept} s (event at {te} s)")
        self.assertEqual(data["n_samples"], 20001)
        self.assertTrue(all(len(d["points"]) == times.size for d in data["drawables"] if not d["static"]
                            and "points" in d))
        page = os.path.join(self.tmp, "long.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(text)
        b = self.need_browser()
        b.open("file://" + page)
        note = b.evaluate("document.getElementById('note').textContent")
        self.assertIn(f"showing {times.size} of the file's 20001 samples", note)

    # ------------------------------------------------------------------ the drawing against the file
    def test_planar_body_where_the_file_says(self):
        t = 1.2345  # between two samples (0.01 s apart)
        px, camera = self.show(self.planar_html, t)
        where = interpolate(self.planar, "scene/03_bob/points", t)[0]
        want = project(camera, where)
        mask = in_canvas(np.all(np.abs(px - RED) <= 40, axis=-1), camera)
        got, count = centroid(mask)
        radius_px = fx.BOB_RADIUS * camera["projection"][0] * camera["width"] / 2  # orthographic: P00 ndc per m
        self.assertAlmostEqual(count / (np.pi * radius_px ** 2), 1.0, delta=0.15, msg="the red blob is not the bob")
        error = float(np.linalg.norm(got - want))
        print(f"\nplanar bob at t = {t} s: drawn at {got.round(2)}, file {want.round(2)}: {error:.2f} px "
              f"(radius {radius_px:.1f} px)", file=sys.stderr)
        self.assertLess(error, PLANAR_TOLERANCE_PX)
        # the page's own projection agrees with the camera it reports
        page = self.browser.evaluate(f"window.rollsimProject({', '.join(repr(float(x)) for x in where)})")
        self.assertLess(np.linalg.norm(np.array(page) - want), 1e-3)
        # the readouts: the time, and the mode the file names for the sample at or before t
        with h5py.File(self.planar, "r") as f:
            i = int(np.searchsorted(f["trajectory/time"][:], t, side="right")) - 1
            mode = int(f["trajectory/mode"][i])
            name = f["trajectory/mode"].attrs[f"mode_name_{mode}"]
        self.assertEqual(self.browser.evaluate("document.getElementById('readout').textContent"),
                         f"t = {t:.4f} s / {fx.PLANAR_T:.4f} s")
        self.assertEqual(self.browser.evaluate("document.getElementById('mode').textContent"), f"mode: {name}")

    def test_3d_sphere_where_the_file_says(self):
        t = 0.77
        px, camera = self.show(self.rolling_html, t)
        want = project(camera, interpolate(self.rolling, "scene/02_ball/position", t))
        r, g, b = px[..., 0], px[..., 1], px[..., 2]
        mask = in_canvas((b - r > 60) & (b > g), camera)  # the sphere's blue (#1f77b4), lit: its hue stays
        got, count = centroid(mask)
        error = float(np.linalg.norm(got - want))
        print(f"\n3-D sphere at t = {t} s: drawn at {got.round(2)}, file {want.round(2)}: {error:.2f} px "
              f"({count} px)", file=sys.stderr)
        self.assertGreater(count, 300)
        self.assertLess(error, SPHERE_TOLERANCE_PX)

    def test_force_arrow_and_lift_off(self):
        t = 1.0
        off, camera = self.show(self.rolling_html, t, forces=False, shot="off.png")

        def green(p):
            return in_canvas((p[..., 1] - p[..., 0] > 60) & (p[..., 1] - p[..., 2] > 60), camera)
        on, _ = self.show(self.rolling_html, t, forces=True, shot="on.png")
        contact = interpolate(self.rolling, "scene/03_disk_contact/points", t)[0]
        force = interpolate(self.rolling, "scene/03_disk_contact/force", t)
        with h5py.File(self.rolling, "r") as f:
            e = f["scene"].attrs["extent"]
            largest = np.nanmax(np.linalg.norm(f["scene/03_disk_contact/force"][:], axis=-1))
        scale = 0.25 * max(e[1] - e[0], e[3] - e[2], e[5] - e[4]) / largest  # docs/animate.md: the largest, 1/4
        tip = project(camera, contact + scale * force)
        base = project(camera, contact)
        arrow = green(on) & ~green(off)
        self.assertGreater(int(arrow.sum()), 50, "no arrow drawn with the checkbox on")
        ys, xs = np.nonzero(green(on))
        far = np.argmax(np.hypot(xs + 0.5 - base[0], ys + 0.5 - base[1]))
        tip_error = float(np.hypot(xs[far] + 0.5 - tip[0], ys[far] + 0.5 - tip[1]))
        print(f"\nforce arrow's tip at t = {t} s: {tip_error:.2f} px from the file's force", file=sys.stderr)
        # the cone narrows below a pixel over its last few pixels, whose blend with the background the colour test drops
        self.assertLess(tip_error, 4.0, "the arrow's tip is off")
        after, _ = self.show(self.rolling_html, fx.LIFT_OFF + 0.1, forces=True, shot="after.png")
        self.assertEqual(int(green(after).sum()), 0, "the contact is drawn after lift-off (NaN in the file)")

    def test_events_on_the_time_bar_and_play(self):
        b = self.need_browser()
        b.open("file://" + self.planar_html)
        marks = b.evaluate("Array.from(document.querySelectorAll('#events span')).map(s => [s.title, "
                           "parseFloat(s.style.left)])")
        with h5py.File(self.planar, "r") as f:
            events = [(float(t), k.decode() if isinstance(k, bytes) else k)
                      for t, k in zip(f["events/time"][:], f["events/kind"][:])]
        self.assertEqual(len(marks), len(events))
        for (title, left), (te, kind) in zip(marks, events):
            self.assertIn(kind, title)
            self.assertIn(f"{te:.8g}"[:6], title)
            self.assertAlmostEqual(left, 100 * te / fx.PLANAR_T, places=3)
        import time
        before = time.monotonic()
        b.evaluate("document.getElementById('speed').value = '0.5'; document.getElementById('play').click(); 1")
        time.sleep(1.0)
        b.evaluate("document.getElementById('play').click(); 1")
        wall = time.monotonic() - before
        t = float(b.evaluate("document.getElementById('slider').value"))
        # played (a software-rendered page on a loaded machine may skip frames for a while: only that it moved),
        # at half speed: for at most the wall time between the two clicks
        self.assertGreater(t, 0.0)
        self.assertLessEqual(t, 0.5 * wall)
        self.assertEqual(b.evaluate("document.getElementById('play').textContent"), "Play")

    def test_real_runs(self):
        """Each body drawn where the program's file puts it, within 1 px plus 3 % of its radius: a disk's marked
        radius (a black bar r long, 0.06 r wide) moves the centroid of the rest by under 1 % of r, the contact's
        dot on its rim by under 2 %."""
        self.need_browser()
        if not os.access(synth.BINARY, os.X_OK):
            self.skipTest(f"no program at {synth.BINARY}")
        for name, body in REAL_RUNS:
            with self.subTest(name):
                path = os.path.join(self.tmp, f"{name}.h5")
                synth.rollsim("run", os.path.join(synth.REPO, "scenarios", f"{name}.toml"), "-o", path, "-q")
                with h5py.File(path, "r") as f:
                    if "scene" not in f:
                        self.skipTest(f"the program writes no /scene for {name}")
                    g = f["scene"][body]
                    colour = np.array([int(g.attrs["color"][k:k + 2], 16) for k in (1, 3, 5)])
                    others = [f["scene"][k].attrs["color"] for k in f["scene"] if k != body]
                    self.assertNotIn(g.attrs["color"], others)
                    radius = float(g.attrs["radius"])
                    dataset = f"scene/{body}/" + ("position" if "position" in g else "points")
                    t_end = float(f["trajectory/time"][-1])
                html = rollsim.animate.write_html(path, os.path.join(self.tmp, f"{name}.html"))
                t = 0.37 * t_end
                px, camera = self.show(html, t, shot=f"{name}.png")
                where = interpolate(path, dataset, t).reshape(-1)[:3]
                want = project(camera, where)
                got, count = centroid(in_canvas(np.all(np.abs(px - colour) <= 40, axis=-1), camera))
                radius_px = radius * camera["projection"][0] * camera["width"] / 2
                error = float(np.linalg.norm(got - want))
                print(f"\n{name}: {body} at t = {t:.4g} s: {error:.2f} px (radius {radius_px:.1f} px, {count} px)",
                      file=sys.stderr)
                self.assertGreater(count, 0.8 * np.pi * radius_px ** 2)
                self.assertLess(error, 1.0 + 0.03 * radius_px)


class VideoTest(FixtureCase):

    def test_mp4_rate_and_frames(self):
        if not shutil.which("ffprobe"):
            self.skipTest("no ffmpeg (tools/install-deps installs it)")
        out = os.path.join(self.tmp, "planar.mp4")
        fps, speed = 6, 0.5
        p = run(ANIMATE, self.planar, "-o", out, "--fps", str(fps), "--speed", str(speed))
        self.assertEqual(p.returncode, 0, p.stderr)
        frames = round(fx.PLANAR_T * fps / speed)  # 2 s of the run at half speed: 4 s of video, 24 frames
        self.assertIn(f"{frames} frames at {fps} fps, {speed:g}x real time", p.stdout)
        probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
                                "stream=r_frame_rate,nb_read_frames,codec_name", "-of", "json", out],
                               capture_output=True, text=True, timeout=60)
        s = json.loads(probe.stdout)["streams"][0]
        self.assertEqual(s["r_frame_rate"], f"{fps}/1")
        self.assertEqual(int(s["nb_read_frames"]), frames)
        self.assertEqual(s["codec_name"], "h264")
        self.assertEqual([n for n in os.listdir(self.tmp) if "partial" in n], [])

    def test_gif(self):
        from PIL import Image
        out = os.path.join(self.tmp, "planar.gif")
        rollsim.animate.write_video(self.planar, out, fps=5, speed=2.0)
        with Image.open(out) as im:
            self.assertEqual(im.n_frames, round(fx.PLANAR_T * 5 / 2.0))
            self.assertEqual(im.info["duration"], 200)  # ms per frame at 5 fps


FAKE_PROGRAM = """#!/usr/bin/python3
import json, sys
sys.path.insert(0, {here!r})
import scene_fixtures
args = sys.argv[1:]
with open(args[1], encoding="utf-8") as f:
    toml = f.read()
with open({log!r}, "w", encoding="utf-8") as f:
    json.dump({{"args": args, "toml": toml}}, f)
scene_fixtures.write_planar(args[args.index("-o") + 1])
"""


class SweepPointTest(FixtureCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.sweep = os.path.join(cls.tmp, "sweep.h5")
        with h5py.File(cls.sweep, "w", track_order=True) as f:
            synth._root(f, "carriage_pendulum", "a sweep")
            f.create_group("scenario").attrs["resolved"] = 'model = "carriage_pendulum"\nparameters.mass = 1.0\n'
            sw = f.create_group("sweep", track_order=True)
            sw.create_dataset("parameters.mass", data=[0.5, 1.0, 1.5, 2.0])
            sw.create_dataset("initial.n", data=np.array([1, 2, 3, 4], dtype=np.int64))
            sw.create_dataset("status", data=["ok"] * 4, dtype=synth.STR)
            sw.attrs["swept_keys"] = "parameters.mass,initial.n"

    def test_point_runs_the_row(self):
        log = os.path.join(self.tmp, "log.json")
        fake = os.path.join(self.tmp, "fake-rollsim")
        with open(fake, "w") as f:
            f.write(FAKE_PROGRAM.format(here=os.path.dirname(os.path.abspath(__file__)), log=log))
        os.chmod(fake, 0o755)
        out = os.path.join(self.tmp, "p2.html")
        p = run(ANIMATE, self.sweep, "--point", "2", "-o", out, env=dict(os.environ, ROLLSIM_BINARY=fake))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(log) as f:
            called = json.load(f)
        args = called["args"]
        self.assertEqual(args[0], "run")
        self.assertEqual(called["toml"], 'model = "carriage_pendulum"\nparameters.mass = 1.0\n')
        sets = [args[i + 1] for i, a in enumerate(args) if a == "--set"]
        self.assertEqual(sets, ["parameters.mass=1.5", "initial.n=3"])  # row 2 of the table above
        with open(out, encoding="utf-8") as f:
            self.assertIn("sweep point 2", f.read())

    def test_point_out_of_range_and_no_point(self):
        out = os.path.join(self.tmp, "bad.html")
        p = run(ANIMATE, self.sweep, "--point", "4", "-o", out)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no sweep point 4 (the sweep has points 0..3)", p.stderr)
        p = run(ANIMATE, self.sweep, "-o", out)
        self.assertEqual(p.returncode, 2)
        self.assertIn("choose one of its points (--point N)", p.stderr)
        self.assertFalse(os.path.exists(out))

    def test_real_sweep_point(self):
        if not os.access(synth.BINARY, os.X_OK):
            self.skipTest(f"no program at {synth.BINARY}")
        scenario = os.path.join(synth.REPO, "scenarios", "table_edge_time.toml")
        sweep = os.path.join(self.tmp, "edge.h5")
        synth.rollsim("sweep", scenario, "-o", sweep, "-q", "--threads", "1")
        probe = os.path.join(self.tmp, "probe.h5")
        synth.rollsim("run", scenario, "-o", probe, "-q")
        with h5py.File(probe, "r") as f:
            if "scene" not in f:
                self.skipTest("the program writes no /scene for the tipping table yet")
        with h5py.File(sweep, "r") as f:
            theta = f["sweep/initial.theta1"][5]
        out = os.path.join(self.tmp, "edge5.html")
        p = run(ANIMATE, sweep, "--point", "5", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        data = json.loads(re.search(r'id="rollsim-data">(.*?)</script>', text, re.S).group(1).replace("<\\/", "</"))
        self.assertIn("sweep point 5", data["title"])
        run5 = os.path.join(self.tmp, "run5.h5")
        synth.rollsim("run", scenario, "-o", run5, "-q", "--set", f"initial.theta1={theta!r}",
                      "--set", f"parameters.wheel_inertia={h5py.File(sweep, 'r')['sweep/parameters.wheel_inertia'][5]!r}")
        with h5py.File(run5, "r") as f:
            self.assertEqual(data["n_samples"], f["trajectory/time"].shape[0])


class BadInputTest(FixtureCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.plain = synth.write_all(cls.tmp)["table"]  # a run without /scene

    def check_refused(self, args, message, out):
        p = run(ANIMATE, *args)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(message, p.stderr)
        self.assertFalse(os.path.exists(out), out)

    def test_refusals(self):
        out = os.path.join(self.tmp, "x.html")
        self.check_refused([self.plain, "-o", out], "no /scene group", out)
        missing = os.path.join(self.tmp, "nowhere", "x.html")
        self.check_refused([self.planar, "-o", missing], "does not exist", missing)
        video = os.path.join(self.tmp, "nowhere", "x.mp4")
        self.check_refused([self.planar, "-o", video], "does not exist", video)
        self.check_refused([os.path.join(self.tmp, "absent.h5"), "-o", out], "no such file", out)
        self.check_refused([self.planar, "-o", os.path.join(self.tmp, "x.avi")], "suffix must be one of",
                           os.path.join(self.tmp, "x.avi"))
        self.check_refused([self.planar, "-o", os.path.join(self.tmp, "y.mp4"), "--speed", "0"], "positive",
                           os.path.join(self.tmp, "y.mp4"))


class OutputNameTest(FixtureCase):
    def test_without_suffix_a_page(self):
        p = run(ANIMATE, self.planar, "-o", os.path.join(self.tmp, "page"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), f"animate: wrote {os.path.join(self.tmp, 'page.html')}")
        with open(os.path.join(self.tmp, "page.html"), encoding="utf-8") as f:
            self.assertTrue(f.read().startswith("<!DOCTYPE html>"))


class SnapshotTest(FixtureCase):

    def test_bob_at_each_instant(self):
        r = rollsim.load(self.planar)
        instants = [0.0, 0.7, 1.3, 2.0]
        fig = rollsim.plot.make_figure(r, rollsim.plot.snapshot_panels(r, instants))
        ax = fig.rollsim_axes["snapshot"]
        from matplotlib.colors import to_hex
        from matplotlib.patches import Polygon
        bobs = [p for p in ax.patches if isinstance(p, Polygon) and to_hex(p.get_facecolor(), keep_alpha=False)
                == "#d62728"]
        self.assertEqual(len(bobs), len(instants))
        alphas = [p.get_alpha() for p in bobs]
        self.assertEqual(alphas, sorted(alphas))
        self.assertEqual(alphas[-1], 1.0)
        self.assertLess(alphas[0], 0.5)
        for p, t in zip(bobs, instants):
            centre = p.get_xy()[:-1].mean(axis=0)  # the outline's points, evenly spaced round the circle
            np.testing.assert_allclose(centre, interpolate(self.planar, "scene/03_bob/points", t)[0][:2], atol=1e-9)
        labels = [x.get_text() for x in ax.get_legend().get_texts()]
        self.assertEqual(labels, ["t = 0 s", "t = 0.7 s", "t = 1.3 s", "t = 2 s"])

    def test_command_line(self):
        out = os.path.join(self.tmp, "snap.png")
        p = run(PLOT, self.planar, "--view", "snapshot", "--at", "0,1,2", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.getsize(out) > 10_000)
        out = os.path.join(self.tmp, "snap3d.pdf")
        p = run(PLOT, self.rolling, "--snapshot", "5", "--style", "paper", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(5), b"%PDF-")
        self.assertEqual(rollsim.plot.snapshot_times(rollsim.load(self.rolling), count=5),
                         list(np.linspace(0.0, fx.ROLLING_T, 5)))

    def test_refusals(self):
        out = os.path.join(self.tmp, "bad.png")
        p = run(PLOT, self.planar, "--at", "0,3", "-o", out)
        self.assertEqual(p.returncode, 2)
        self.assertIn("instant 3 s outside the run (0 to 2 s)", p.stderr)
        plain = synth.write_all(self.tmp)["table"]
        p = run(PLOT, plain, "--view", "snapshot", "-o", out)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no /scene group", p.stderr)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
