"""End-to-end test of tools/report: the standard validation set, the HTML page, and the page in Chromium.

Needs the built rollsim (ROLLSIM_BINARY, set by ctest; else ../../build/rollsim). The browser checks use
Debian's `chromium` (tools/install-deps installs it) and are skipped only when it is missing.
"""

import html.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile
import math
import time
import unittest
import unittest.mock

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("ROLLSIM_SOURCE_DIR", os.path.normpath(os.path.join(HERE, "..", "..")))
REPORT = os.path.join(SOURCE, "tools", "report")
BINARY = os.environ.get("ROLLSIM_BINARY", os.path.join(SOURCE, "build", "rollsim"))

# Section titles (prefixes) of the standard set, in page order.
SECTIONS = [
    "IFToMM benchmark",
    "Growth rates against the eigenvalues",
    "Energy conservation, table to the edge",
    "Rolling disk, type A",
    "Rolling disk, type B",
    "ODE against DAE formulation",
    "Run: Relay feedback",
    "Run: Carriage with pendulum",
    "User model against its built-in twin",
    "Contacts: bouncing ball",
    "Contacts: rimless wheel",
    "3-D rolling: the rolling coin",
    "3-D rolling stability: the Whipple bicycle",
    "3-D friction: the sliding sphere",
    "3-D friction: the tippe top",
    "Sweep: the rolling disk's type A/B map",
    "Solver statistics of every run",
    "Software version and provenance",
]

# The sections that link to the animation of their run (or say "no animation" and why).
ANIMATED = SECTIONS[8:16]

WIDTH, HEIGHT = 1280, 4000
sys.path.insert(0, os.path.join(SOURCE, "tools", "python"))


class PageParser(html.parser.HTMLParser):
    """Collects sections (h2 text and the PASS/FAIL badges inside), images and every URL-bearing attribute."""

    def __init__(self):
        super().__init__()
        self.sections = []       # [title, [badges], [img srcs]]
        self.imgs, self.urls, self.tags = [], [], []
        self._in_h2 = self._in_badge = False
        self._summary_badges = []
        self._in_summary = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        for k in ("src", "href", "data", "poster", "action", "srcset"):
            if k in a and a[k] is not None:
                self.urls.append((tag, k, a[k]))
        if tag == "link" or (tag == "script" and "src" in a):
            self.urls.append((tag, "element", a.get("href") or a.get("src")))
        if tag == "section":
            self.sections.append(["", [], []])
        if tag == "h2" and self.sections:
            self._in_h2 = True
        if tag == "span" and "badge" in (a.get("class") or "") and self.sections:
            self._in_badge = True
        if tag == "img":
            self.imgs.append(a.get("src", ""))
            if self.sections:
                self.sections[-1][2].append(a.get("src", ""))

    def handle_endtag(self, tag):
        if tag == "h2":
            self._in_h2 = False
        if tag == "span":
            self._in_badge = False

    def handle_data(self, data):
        if self._in_badge and self.sections:
            self.sections[-1][1].append(data.strip())
        elif self._in_h2 and self.sections:
            self.sections[-1][0] += data


_STANDARD = []


def standard_report():
    """The standard set's report, run once for the module: (folder, the process, seconds); the page is
    report.html in the folder, the result files in runs/."""
    if not _STANDARD:
        tmp = tempfile.mkdtemp(prefix="rollsim-report-test-")
        env = dict(os.environ, ROLLSIM_BINARY=BINARY, MPLBACKEND="Agg")
        t0 = time.perf_counter()
        proc = subprocess.run([REPORT, "-o", os.path.join(tmp, "report.html"), "--keep", os.path.join(tmp, "runs")],
                              capture_output=True, text=True, env=env, timeout=240)
        _STANDARD.append((tmp, proc, time.perf_counter() - t0))
    return _STANDARD[0]


def tearDownModule():
    for tmp, _, _ in _STANDARD:
        shutil.rmtree(tmp, ignore_errors=True)


@unittest.skipUnless(os.access(BINARY, os.X_OK), f"rollsim binary not built: {BINARY}")
class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp, cls.proc, cls.seconds = standard_report()
        cls.page = os.path.join(cls.tmp, "report.html")
        cls.keep = os.path.join(cls.tmp, "runs")
        cls.text = ""
        if os.path.exists(cls.page):
            with open(cls.page, encoding="utf-8") as f:
                cls.text = f.read()
        cls.parser = PageParser()
        cls.parser.feed(cls.text)

    # ---------------------------------------------------------------- the page itself
    def test_report_runs_and_passes(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout + self.proc.stderr)
        self.assertIn("0 failed", self.proc.stdout)
        self.assertLess(self.seconds, 120, "the standard set should take well under a minute")
        self.assertTrue(os.listdir(self.keep), "--keep keeps the result files")

    def test_every_section_present_with_verdict(self):
        titles = [re.sub(r"\s+", " ", s[0]).strip() for s in self.parser.sections]
        for want in SECTIONS:
            match = [s for s, t in zip(self.parser.sections, titles) if t.startswith(want)]
            self.assertEqual(len(match), 1, f"section {want!r} in {titles}")
            verdicts = [b for b in match[0][1] if b in ("PASS", "FAIL")]
            self.assertTrue(verdicts, f"section {want!r} shows PASS or FAIL")
            self.assertNotIn("FAIL", verdicts, f"section {want!r} fails")

    def test_titles_and_counts_read_as_english(self):
        # A section's kind is not repeated when the scenario's title already starts with it, and a count of one
        # takes the singular noun.
        titles = [re.sub(r"\s+", " ", s[0]).strip() for s in self.parser.sections]
        for t in titles:
            kind = t.split(":")[0]
            self.assertFalse(":" in t and t[len(kind) + 1:].strip().lower().startswith(kind.lower()), t)
        plain = re.sub(r"<[^>]+>", " ", self.text)
        self.assertIsNone(re.search(r"(?<![\d.])1 (events|violations|impacts)\b", plain))
        sys.path.insert(0, os.path.join(SOURCE, "tools", "python"))
        from rollsim.report.page import count, titled
        self.assertEqual([count(0, "event"), count(1, "event"), count(2, "event")], ["0 events", "1 event", "2 events"])
        self.assertEqual(count(1, "impact or capture", "impacts and captures"), "1 impact or capture")
        self.assertEqual(titled("Rolling disk", "Rolling disk, type B orbit"), "Rolling disk, type B orbit")
        self.assertEqual(titled("Rolling disk", "Steel disk"), "Rolling disk: Steel disk")

    def test_summary_table_first(self):
        i_sum = self.text.find('id="summary"')
        i_sec = self.text.find("<section")
        self.assertGreater(i_sum, 0)
        self.assertLess(i_sum, i_sec)
        summary = self.text[i_sum:i_sec]
        self.assertGreaterEqual(summary.count('class="badge pass"'), 15)
        for col in ("check", "figure", "tolerance", "result"):
            self.assertIn(f"<th>{col}</th>", summary)

    def test_key_content(self):
        t = self.text
        for s in ("1.0808756287", "0.92517582360".rstrip("0"), "0.24476064674", "Minaker", "2016",
                  "Tables 2.1", "IFToMM error", "observed order", "drift_rel &lt; 100 rtol", "Filippov",
                  "closed form", "git hash", "Command lines", "check formulations"):
            self.assertTrue(s in t, f"{s!r} is not on the page")

    def test_images_embedded_and_self_contained(self):
        self.assertGreaterEqual(len(self.parser.imgs), 10)
        for src in self.parser.imgs:
            self.assertTrue(src.startswith("data:image/png;base64,"), src[:60])
        for tag, attr, url in self.parser.urls:
            # the one exception: links to the animation pages in the folder beside the page
            ok = (url or "").startswith(("data:", "#")) or (tag == "a" and attr == "href" and url.startswith(
                "report_animations/") and os.path.exists(os.path.join(self.tmp, url)))
            self.assertTrue(ok, f"external reference <{tag} {attr}={url!r}>")
        self.assertNotRegex(self.text, r"(?i)<link\b|@import|url\(\s*['\"]?(?!data:)")
        self.assertNotRegex(self.text, r"(?i)(src|href)\s*=\s*['\"]?(https?:|//|file:)")
        # Each figure section carries a real PNG.
        import base64
        for src in self.parser.imgs:
            raw = base64.b64decode(src.split(",", 1)[1])
            self.assertEqual(raw[:8], b"\x89PNG\r\n\x1a\n")

    def test_animation_link_or_reason_in_every_new_section(self):
        for want in ANIMATED:
            i = self.text.find(want, self.text.find("<section"))
            j = self.text.find("</section>", i)
            self.assertGreater(i, 0, want)
            part = self.text[i:j]
            m = re.search(r'<p class="anim">(.*?)</p>', part)
            self.assertIsNotNone(m, f"section {want!r} has no animation line")
            link = re.search(r'href="([^"]+)"', m.group(1))
            if link:
                self.assertTrue(link.group(1).startswith("report_animations/"), link.group(1))
                self.assertTrue(os.path.exists(os.path.join(self.tmp, link.group(1))), link.group(1))
            else:
                self.assertRegex(m.group(1), r"^no animation \(.+\)$")

    def test_sections_check_against_references(self):
        # The new sections' references are on the page: the published figures with their source, the closed forms.
        for s in ("Meijaard", "Table 2", "4.29238253634111", "6.02426201538837", "Le Saux", "t<sub>∞</sub>",
                  "closed form (1.8)–(1.9)", "type A/B of every point against the closed form"):
            self.assertIn(s, self.text)

    # ---------------------------------------------------------------- the page in a browser
    def _chromium(self):
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if not exe:
            self.skipTest("chromium is not installed (tools/install-deps installs it)")
        return exe

    def _chromium_args(self, exe):
        profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=self.tmp)
        return [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                f"--user-data-dir={profile}"]

    def test_screenshot_not_blank(self):
        exe = self._chromium()
        shot = os.path.join(self.tmp, "shot.png")
        p = subprocess.run(self._chromium_args(exe) + [f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}",
                                                       "file://" + self.page],
                           capture_output=True, text=True, timeout=120)
        self.assertTrue(os.path.exists(shot), p.stderr[-2000:])
        import matplotlib.image as mpimg
        import numpy as np
        img = mpimg.imread(shot)
        self.assertEqual(img.shape[:2], (HEIGHT, WIDTH))
        rgb = img[..., :3]
        self.assertGreater(float(rgb.var()), 1e-3, "the screenshot is uniform")
        # Ink (not white and not the page background) in both halves: tables and figures rendered.
        background = rgb[HEIGHT // 2, 5]
        for half in (rgb[: HEIGHT // 2], rgb[HEIGHT // 2:]):
            white = np.all(half > 0.97, axis=-1)
            bg = np.all(np.abs(half - background) < 0.02, axis=-1)
            ink = ~(white | bg)
            self.assertGreater(ink.mean(), 0.02, "too little drawn in a half of the screenshot")
        # The header band is dark and the PASS badges are green somewhere on the first screen.
        self.assertLess(float(rgb[20:60, 20:400].mean()), 0.4)
        top = rgb[:1200]
        green = (top[..., 1] > 0.4) & (top[..., 0] < 0.25) & (top[..., 2] < 0.35)
        self.assertGreater(int(green.sum()), 200, "no green PASS badges in the summary")

    def test_dom_tables_and_decoded_images(self):
        exe = self._chromium()
        p = subprocess.run(self._chromium_args(exe) + ["--virtual-time-budget=5000", "--dump-dom",
                                                       "file://" + self.page],
                           capture_output=True, text=True, timeout=120)
        dom = p.stdout
        self.assertIn("<table", dom, p.stderr[-2000:])
        n_img = len(re.findall(r"<img\b", dom))
        n_tab = len(re.findall(r"<table\b", dom))
        self.assertEqual(n_img, len(self.parser.imgs))
        self.assertGreaterEqual(n_tab, 15)
        # The page's own load handler counts the images the browser decoded (naturalWidth > 0).
        m = re.search(r'data-images-decoded="(\d+)"', dom)
        total = re.search(r'data-images-total="(\d+)"', dom)
        self.assertIsNotNone(m, "the load handler did not run")
        self.assertEqual(int(total.group(1)), n_img)
        self.assertEqual(int(m.group(1)), n_img, "some images did not decode")
        self.assertRegex(dom, rf"<title>[^<]*\[images {n_img}/{n_img}, tables \d+\]</title>")



def _load(path):
    from rollsim import h5
    return h5.load(path, allow_incomplete=True)


def _perturbed(r, **columns):
    """A copy of the result r whose trajectory columns (name=function of the array) are changed."""
    import dataclasses
    tr = type(r.trajectory)(r.trajectory)
    tr.__dict__.update(r.trajectory.__dict__)
    for k, f in columns.items():
        tr[k] = f(tr[k].copy())
    return dataclasses.replace(r, trajectory=tr)


def _with_param(r, key, value):
    import dataclasses
    resolved = dict(r.resolved)
    resolved[key] = repr(value)
    return dataclasses.replace(r, resolved=resolved)


@unittest.skipUnless(os.access(BINARY, os.X_OK), f"rollsim binary not built: {BINARY}")
class SectionChecksTest(unittest.TestCase):
    """Each new section's check functions pass on the standard set's files and fail on a perturbed file or a perturbed
    reference: the checks measure something."""

    @classmethod
    def setUpClass(cls):
        cls.runs = os.path.join(standard_report()[0], "runs")

    def f(self, name):
        path = os.path.join(self.runs, name)
        self.assertTrue(os.path.exists(path), f"the standard set keeps {name}")
        return path

    @staticmethod
    def verdicts(checks):
        return [c.passed for c in checks]

    def test_user_model_against_twin(self):
        from rollsim.report import linear, user
        u, b = _load(self.f("user_tipping_table.h5")), _load(self.f("user_tipping_table-twin.h5"))
        checks, rows = user.twin_checks(u, b)
        self.assertEqual(self.verdicts(checks), [True, True])
        self.assertEqual(len(rows), len(user.TWIN_COLUMNS))
        # the user model's theta2 off by 1e-6 rad late in the run
        bad = _perturbed(u, theta2=lambda a: a + 1e-6 * (np.arange(a.size) > a.size // 2))
        self.assertFalse(user.twin_checks(bad, b)[0][0].passed)
        # its eigenvalues against a perturbed closed form (gravity 9.82)
        lam = linear.eigenvalues(_load(self.f("user_tipping_table-linear.h5")).linear)
        self.assertLess(linear.l2_error(linear.pair_nearest(lam, linear.iftomm_eigenvalues())), 1e-12)
        self.assertGreater(linear.l2_error(linear.pair_nearest(lam, linear.iftomm_eigenvalues(g=9.82))), 1e-3)

    def test_bouncing_ball_closed_form(self):
        from rollsim.report import impacts
        r = _load(self.f("bouncing_ball.h5"))
        checks, rows, data = impacts.ball_checks(r)
        self.assertEqual(self.verdicts(checks), [True] * 4)
        self.assertGreaterEqual(int(data["use"].sum()), 20)
        # the closed form's restitution 0.801 instead of 0.8: impact times, rebounds and the capture all fail
        checks = impacts.ball_checks(_with_param(r, "parameters.e", 0.801))[0]
        self.assertEqual(self.verdicts(checks)[:3], [False, False, False])
        # the closed form itself: t_inf = t0 (1 + e) / (1 - e), apexes e^(2n) h
        cf = impacts.ball_closed_form(1.0, 9.81, 0.8, 3)
        self.assertAlmostEqual(cf["t_inf"], (2 / 9.81) ** 0.5 * 1.8 / 0.2, places=12)
        self.assertTrue(np.allclose(cf["apex"], [0.64, 0.4096, 0.262144], rtol=1e-14, atol=0))

    def test_rimless_wheel_closed_form(self):
        from rollsim.report import impacts
        r = _load(self.f("rimless_wheel.h5"))
        checks, w, pred, fixed = impacts.rimless_checks(r)
        self.assertEqual(self.verdicts(checks), [True] * 3)
        self.assertGreaterEqual(w.size, 20)
        # McGeer's fixed point for a massless hub (I -> 0): cot(2 alpha) sqrt(4 (g/l) sin(alpha) sin(gamma)), 1.2244 rad/s
        a, g = math.pi / 8, 9.81
        mcgeer = impacts.rimless_checks(_with_param(r, "parameters.I", 1e-300))[3]
        self.assertAlmostEqual(mcgeer, math.sqrt(4 * g * math.sin(a) * math.sin(0.1)) / math.tan(2 * a), places=12)
        # the slope 0.101 rad instead of 0.1 in the closed form: the map and the fixed point fail; the share lost at an
        # impact, 1 - c^2, does not depend on the slope
        checks = impacts.rimless_checks(_with_param(r, "parameters.gamma", 0.101))[0]
        self.assertEqual(self.verdicts(checks), [False, True, False])

    def test_rolling_coin_steady_motion_and_nutation(self):
        from rollsim.report import rolling3d
        r = _load(self.f("rolling_coin.h5"))
        checks, rows, xy, steady = rolling3d.coin_checks(r)
        self.assertEqual(self.verdicts(checks), [True] * 4)
        lin = _load(self.f("rolling_coin-linear.h5")).linear
        self.assertTrue(rolling3d.nutation_check(lin, steady)[0].passed)
        # gravity 9.80 in the closed forms: the steady spin, the forces and the nutation no longer match
        checks = rolling3d.coin_checks(_with_param(r, "parameters.g", 9.80))[0]
        self.assertEqual(self.verdicts(checks), [False, False, False, True])
        th0, om, phid, a, g = steady
        self.assertFalse(rolling3d.nutation_check(lin, (th0, om, phid, a, 9.80))[0].passed)
        # a drifting lean
        bad = _perturbed(r, theta=lambda v: v + 1e-7 * np.linspace(0, 1, v.size))
        self.assertFalse(rolling3d.coin_checks(bad)[0][0].passed)
        # upright rolling: the classical w_n^2 = (4/5)(3 v^2/a^2 - g/a) (Neimark and Fufaev 1972)
        v, a = 1.0, 0.05
        self.assertAlmostEqual(rolling3d.coin_nutation(0.0, 0.0, v / a, a, 9.81) ** 2,
                               0.8 * (3 * v**2 / a**2 - 9.81 / a), places=9)

    def test_bicycle_against_meijaard(self):
        from rollsim.report import rolling3d
        r = _load(self.f("bicycle_meijaard-linear-sweep.h5"))
        ls = r.linear_sweep
        check, rows = rolling3d.table2_check(ls)
        self.assertTrue(check.passed, check.value)
        self.assertEqual(len(rows), 11)
        self.assertTrue(rolling3d.stable_range_check(ls).passed)
        # a perturbed reference: Table 2 with one root off by 1e-10
        table = list(rolling3d.MEIJAARD_TABLE2)
        table[5] = (5, [table[5][1][0] + 1e-10] + table[5][1][1:])
        with unittest.mock.patch.object(rolling3d, "MEIJAARD_TABLE2", tuple(table)):
            self.assertFalse(rolling3d.table2_check(ls)[0].passed)
        # a perturbed capsize speed: the grid point 6.2 m/s, unstable, now lies inside the "stable" range
        with unittest.mock.patch.object(rolling3d, "MEIJAARD_CAPSIZE_SPEED", 6.3):
            self.assertFalse(rolling3d.stable_range_check(ls).passed)
        # the published speeds bracket the sign changes, computed from the single linearisations
        for label, f, sign in (("weave", rolling3d.weave_real, +1), ("capsize", rolling3d.capsize_root, -1)):
            lo, hi = (f(rolling3d.eigenvalues(_load(self.f(f"bicycle_meijaard-linear-{label}{side}.h5")).linear))
                      for side in "-+")
            self.assertGreater(sign * lo, 0, label)
            self.assertLess(sign * hi, 0, label)
        self.assertAlmostEqual(rolling3d.root_distance([1, 2j], [1, 2j + 1e-3]), 1e-3, places=15)

    def test_sliding_sphere_and_tippe_top(self):
        from rollsim.report import friction3d
        r = _load(self.f("sliding_sphere.h5"))
        checks, rows, _ = friction3d.sphere_checks(r)
        self.assertEqual(self.verdicts(checks), [True] * 4)
        # the closed form with mu = 0.21: t* and the slip's fall no longer match; the rolling velocity v0 - (2/7) u0 and
        # the loss m |u0|^2 / 7 do not depend on mu
        checks = friction3d.sphere_checks(_with_param(r, "parameters.mu", 0.21))[0]
        self.assertEqual(self.verdicts(checks), [False, False, True, True])
        # a slip turned off its first direction
        bad = _perturbed(r, slip_y_floor=lambda a: a + 1e-6 * (a != 0))
        self.assertFalse(friction3d.sphere_checks(bad)[0][1].passed)
        t = _load(self.f("tippe_top.h5"))
        checks, lam, lam0 = friction3d.tippe_checks(t)
        self.assertEqual(self.verdicts(checks), [True, True])
        # the report's own lambda agrees with rollsim's output jellett (a second formula for the same quantity)
        self.assertLess(float(np.max(np.abs(lam - t.trajectory["jellett"]))), 1e-12 * abs(lam0))
        # the closed form with e = 0.0046 m: lambda0 moves by about 1e-3 relative
        self.assertFalse(friction3d.tippe_checks(_with_param(t, "parameters.e", 0.0046))[0][0].passed)
        # gamma = A/C above 1 (A = 1.9e-6): the theory says no full inversion
        self.assertFalse(friction3d.tippe_checks(_with_param(t, "parameters.A", 1.9e-6))[0][1].passed)

    def test_disk_map_against_closed_form(self):
        from rollsim.report import sweeps
        r = _load(self.f("disk_basin-sweep.h5"))
        checks, rows, types = sweeps.disk_map_checks(r)
        self.assertEqual(self.verdicts(checks), [True] * 4)
        self.assertEqual(len(rows), sweeps.MAP_POINTS ** 2)
        self.assertIn("A", types)
        self.assertIn("B", types)
        # the closed form run with the uniform disk's j = 1/2 instead of the file's 0.4
        checks = sweeps.disk_map_checks(_with_param(r, "parameters.inertia_ratio", 0.5))[0]
        self.assertEqual(self.verdicts(checks)[0], True)
        self.assertIn(False, self.verdicts(checks)[1:])
        self.assertFalse(checks[3].passed)


class AnimationLinkTest(unittest.TestCase):
    """The link to a run's animation: written by rollsim.animate.write_html beside the page, or "no animation"."""

    def setUp(self):
        import h5py
        self.tmp = tempfile.mkdtemp(prefix="rollsim-report-anim-")
        self.with_scene = os.path.join(self.tmp, "with.h5")
        self.without = os.path.join(self.tmp, "without.h5")
        with h5py.File(self.with_scene, "w") as f:
            f.create_group("scene")
        with h5py.File(self.without, "w") as f:
            f.create_group("trajectory")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_link_and_reasons(self):
        import types
        from rollsim.report.animation import Animations, animation_link
        anim = Animations.next_to(os.path.join(self.tmp, "page.html"))
        self.assertEqual(anim.href_prefix, "page_animations/")
        calls = []

        def write_html(result_path, out_path, point=None):
            calls.append((result_path, point))
            with open(out_path, "w") as f:
                f.write("<html></html>")
            return out_path

        fake = types.ModuleType("rollsim.animate")
        fake.write_html = write_html
        with unittest.mock.patch.dict(sys.modules, {"rollsim.animate": fake}):
            link = animation_link(anim, self.with_scene, "run1")
            self.assertIn('href="page_animations/run1.html"', link)
            self.assertTrue(os.path.exists(os.path.join(self.tmp, "page_animations", "run1.html")))
            self.assertIn("no /scene group", animation_link(anim, self.without, "run2"))
            # a sweep point: the tool runs it again and finds its scene itself
            self.assertIn("href=", animation_link(anim, self.without, "sweep", point=3))
            self.assertEqual(calls[-1], (self.without, 3))
            self.assertIn("turned off", animation_link(Animations(), self.with_scene, "run3"))
            # the first candidate that has a scene; else the first one's reason
            from rollsim.report.animation import first_animation
            link = first_animation(anim, [(self.without, "user", "the run"), (self.with_scene, "twin", "the twin")])
            self.assertIn('Animation of the twin: <a href="page_animations/twin.html"', link)
            self.assertIn("no /scene group", first_animation(anim, [(self.without, "a", "the run")] * 2))

            def broken(result_path, out_path, point=None):
                raise RuntimeError("no drawing")
            fake.write_html = broken
            self.assertIn("the animation tool failed: RuntimeError: no drawing", animation_link(anim, self.with_scene, "x"))
        with unittest.mock.patch.dict(sys.modules, {"rollsim.animate": None}):
            self.assertIn("not available", animation_link(anim, self.with_scene, "run4"))

    def test_the_animation_tool_writes_the_linked_page(self):
        # The real rollsim.animate on a fixture with a /scene in closed form (tests/python/scene_fixtures.py).
        sys.path.insert(0, HERE)
        try:
            import rollsim.animate  # noqa: F401 (the report imports it by name)
            import scene_fixtures
        except ImportError as exc:
            self.skipTest(f"the animation tool is not importable: {exc}")
        from rollsim.report.animation import Animations, animation_link
        planar = scene_fixtures.write_planar(os.path.join(self.tmp, "planar.h5"))
        link = animation_link(Animations.next_to(os.path.join(self.tmp, "r.html")), planar, "planar")
        self.assertIn('href="r_animations/planar.html"', link)
        with open(os.path.join(self.tmp, "r_animations", "planar.html"), encoding="utf-8") as f:
            self.assertIn("<html", f.read(2000).lower())


if __name__ == "__main__":
    unittest.main()
