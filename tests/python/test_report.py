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
import time
import unittest

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
    "Solver statistics of every run",
    "Software version and provenance",
]

WIDTH, HEIGHT = 1280, 4000


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


@unittest.skipUnless(os.access(BINARY, os.X_OK), f"rollsim binary not built: {BINARY}")
class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="rollsim-report-test-")
        cls.page = os.path.join(cls.tmp, "report.html")
        cls.keep = os.path.join(cls.tmp, "runs")
        env = dict(os.environ, ROLLSIM_BINARY=BINARY, MPLBACKEND="Agg")
        t0 = time.perf_counter()
        cls.proc = subprocess.run([REPORT, "-o", cls.page, "--keep", cls.keep], capture_output=True, text=True,
                                  env=env, timeout=240)
        cls.seconds = time.perf_counter() - t0
        cls.text = open(cls.page, encoding="utf-8").read() if os.path.exists(cls.page) else ""
        cls.parser = PageParser()
        cls.parser.feed(cls.text)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

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
            ok = (url or "").startswith(("data:", "#"))
            self.assertTrue(ok, f"external reference <{tag} {attr}={url!r}>")
        self.assertNotRegex(self.text, r"(?i)<link\b|@import|url\(\s*['\"]?(?!data:)")
        self.assertNotRegex(self.text, r"(?i)(src|href)\s*=\s*['\"]?(https?:|//|file:)")
        # Each figure section carries a real PNG.
        import base64
        for src in self.parser.imgs:
            raw = base64.b64decode(src.split(",", 1)[1])
            self.assertEqual(raw[:8], b"\x89PNG\r\n\x1a\n")

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


if __name__ == "__main__":
    unittest.main()
