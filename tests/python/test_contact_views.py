"""tools/plot and tools/report on runs of the contact engine: the panels exist, and the report's phase table,
impact table and energy figures agree with the HDF5 file (read here with h5py alone) and with physics.

Needs the built rollsim (ROLLSIM_BINARY, set by ctest; else ../../build/rollsim).
"""

import html.parser
import os
import re
import subprocess
import sys
import tempfile
import unittest

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")

import synth  # noqa: E402  (puts tools/python on the path)
import rollsim  # noqa: E402
import rollsim.plot  # noqa: E402

SCEN = os.path.join(synth.REPO, "scenarios")
BALL = os.path.join(SCEN, "bouncing_ball.toml")
TABLE = os.path.join(SCEN, "table_contact.toml")
# bouncing_ball.toml: m, g, e, the drop height y(0), and the sampling step
M, G, E, H0, DT = 1.0, 9.81, 0.8, 1.0, 1e-3
PRINTED_REL = 1e-9  # the report prints 10 significant digits: a printed value is within 5e-10 of the true one


def number(cell: str) -> float:
    """A number as page.fmt prints it: 1.25, −3.5, 2.5×10<sup>−7</sup>, 10<sup>−3</sup>; '–' is NaN."""
    s = cell.strip().replace("−", "-")
    if s in ("–", ""):
        return float("nan")
    m = re.fullmatch(r"(?:([-+0-9.]+)×)?10<sup>([-+0-9]+)</sup>", s)
    if m:
        return float(m.group(1) or 1.0) * 10.0 ** int(m.group(2))
    return float(s)


class Tables(html.parser.HTMLParser):
    """The tables of a page by class, each as a list of rows of raw cell HTML, per <section id>."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables = {}  # (section id, table class) -> rows
        self.section = None
        self.rows = None
        self.cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.section = a.get("id")
        elif tag == "table" and self.section:
            self.rows = self.tables.setdefault((self.section, a.get("class", "")), [])
        elif tag == "tr" and self.rows is not None:
            self.rows.append([])
        elif tag == "td" and self.rows is not None:
            self.cell = ""
        elif self.cell is not None:
            self.cell += f"<{tag}>"

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.rows[-1].append(self.cell)
            self.cell = None
        elif tag == "table":
            self.rows = None
        elif self.cell is not None:
            self.cell += f"</{tag}>"

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def body_rows(rows):
    return [r for r in rows if r]  # the header row has <th> cells only


@unittest.skipUnless(os.access(synth.BINARY, os.X_OK), f"rollsim binary not built: {synth.BINARY}")
class ContactPlotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.ball = os.path.join(cls.tmp.name, "ball.h5")
        cls.table = os.path.join(cls.tmp.name, "table.h5")
        synth.rollsim("run", BALL, "-q", "-o", cls.ball)
        # To t = 1 s: the landing (impacts, capture), slide, stick, slip, lift-off and the flight's start.
        synth.rollsim("run", TABLE, "-q", "--set", "simulation.t_end=1.0", "-o", cls.table)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_panels_by_name(self):
        common = ["gaps", "normal forces", "contact modes", "energy", "energy drift"]
        for path, extra, absent in ((self.ball, [], ["tangential forces", "slip velocities"]),
                                    (self.table, ["tangential forces", "slip velocities"], [])):
            with self.subTest(path=os.path.basename(path)):
                r = rollsim.load(path)
                vs = rollsim.plot.views(r)
                self.assertEqual([v for v, _ in vs], ["run"])
                figs = rollsim.plot.figures(r)
                names = figs[0].rollsim_panels
                for n in common + extra:
                    self.assertIn(n, names)
                for n in absent:
                    self.assertNotIn(n, names)
                titles = {ax.get_title(): ax for ax in figs[0].axes}
                self.assertIn("Contact modes", titles)  # drawn, not the "not shown" note

    def test_events_marked_by_kind(self):
        # Listed once, in the figure's event strip: a row per kind with its count.
        r = rollsim.load(self.table)
        fig = rollsim.plot.figures(r)[0]
        ax = fig.rollsim_event_strip
        kinds = np.asarray(r.events["kind"], str)
        handles, labels = ax.get_legend_handles_labels()
        by_kind = {lab.split(" (")[0]: (h, lab) for h, lab in zip(handles, labels)}
        for kind in ("impact", "capture", "stick", "slip", "lift_off"):
            self.assertIn(kind, by_kind)
            self.assertEqual(by_kind[kind][1], f"{kind} ({int((kinds == kind).sum())})")
        markers = {k: by_kind[k][0].get_marker() for k in ("impact", "capture", "stick", "slip", "lift_off")}
        self.assertEqual(markers["impact"], "v")
        self.assertEqual(markers["capture"], "s")
        for k in ("stick", "slip", "lift_off"):  # transitions: a bar, never an impact's marker
            self.assertEqual(markers[k], "|")

    def test_plot_command(self):
        for path in (self.ball, self.table):
            out = path.replace(".h5", ".png")
            p = subprocess.run([sys.executable, os.path.join(synth.TOOLS, "plot"), path, "-o", out],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_mode_column_holds_many_contacts(self):
        # The rimless wheel has eight contacts: modes up to 4^8 - 1. The trajectory's mode column is then int32
        # and agrees with the modes that /events gives at every sample.
        path = os.path.join(self.tmp.name, "rimless.h5")
        synth.rollsim("run", os.path.join(synth.REPO, "scenarios", "rimless_wheel.toml"), "-q", "-o", path)
        r = rollsim.load(path)
        col = np.asarray(r.trajectory["mode"])
        self.assertEqual(col.dtype, np.int32)
        self.assertGreater(int(col.max()), 127)
        order = rollsim.contacts.contact_order(r)
        self.assertEqual(len(order), 8)
        self.assertIsNone(rollsim.contacts.mode_column_note(r, order))

    def test_mode_order_mismatch_is_refused(self):
        """A file whose summary symbols disagree with the modes: the modes panel says so, never guesses."""
        bad = os.path.join(self.tmp.name, "bad.h5")
        with open(self.table, "rb") as src, open(bad, "wb") as dst:
            dst.write(src.read())
        with h5py.File(bad, "r+") as f:
            f["summary"].attrs["symbols_table"] = "o0"
        r = rollsim.load(bad)
        with self.assertRaises(rollsim.contacts.ContactDataError):
            rollsim.contacts.contact_order(r)
        fig = rollsim.plot.figures(r)[0]
        self.assertIn("Contact modes (not shown)", [a.get_title() for a in fig.axes])


@unittest.skipUnless(os.access(synth.BINARY, os.X_OK), f"rollsim binary not built: {synth.BINARY}")
class ContactReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        out = os.path.join(cls.tmp.name, "report.html")
        env = dict(os.environ, ROLLSIM_BINARY=synth.BINARY, MPLBACKEND="Agg")
        # The ball once more with its impulses chosen through the LCP (nonsmooth.mode_selection = "lcp").
        cls.ball_lcp = os.path.join(cls.tmp.name, "ball_lcp.toml")
        with open(BALL, encoding="utf-8") as f:
            text = f.read()
        assert "[nonsmooth]\n" in text
        with open(cls.ball_lcp, "w", encoding="utf-8") as f:
            f.write(text.replace("[nonsmooth]\n", '[nonsmooth]\nmode_selection = "lcp"\n').replace(
                "t_end = 6.0", "t_end = 2.0"))
        cls.proc = subprocess.run([sys.executable, os.path.join(synth.TOOLS, "report"), BALL, TABLE, cls.ball_lcp,
                                   "-o", out, "--keep", cls.tmp.name], capture_output=True, text=True, timeout=300,
                                  env=env)
        with open(out, encoding="utf-8") as f:
            cls.page = f.read()
        p = Tables()
        p.feed(cls.page)
        cls.tables = p.tables

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def table(self, name, cls):
        return body_rows(self.tables[(f"contact-{name}", f"data contact-{cls}")])

    def energy(self, name):
        return {re.sub(r"<[^>]+>", "", k): number(v) for k, v in self.table(name, "energy")}

    def test_report_passes_with_contact_sections(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout + self.proc.stderr)
        for name in ("bouncing_ball", "table_contact"):
            self.assertIn(f'<section id="contact-{name}">', self.page)
            for cls in ("energy", "phases", "impacts"):
                self.assertTrue(self.table(name, cls), (name, cls))

    def test_lcp_choices_noted_as_in_the_file(self):
        with h5py.File(os.path.join(self.tmp.name, "ball_lcp.h5"), "r") as f:
            v = np.asarray(f["events"]["lcp_impulse_candidates"], float)
        used = v[np.isfinite(v)]
        self.assertGreater(used.size, 0)
        section = self.page[self.page.index('<section id="contact-ball_lcp">'):]
        section = section[:section.index("</section>")]
        self.assertIn(f"impulses at {used.size} events (combinations left: at most {int(used.max())})", section)
        # The runs enumerated in full note nothing.
        full = self.page[self.page.index('<section id="contact-bouncing_ball">'):]
        self.assertNotIn("Chosen through the contacts", full[:full.index("</section>")])

    def test_ball_against_physics(self):
        with h5py.File(os.path.join(self.tmp.name, "bouncing_ball.h5"), "r") as f:
            ev_t = f["events/time"][:]
            kinds = f["events/kind"][:].astype(str)
            t, y = f["trajectory/time"][:], f["trajectory/y"][:]
            n_force = f["trajectory/normal_force_floor"][:]
            d_imp = f["trajectory/dissipated_impact"][-1]
            bal = f["trajectory/energy"][:] + f["trajectory/dissipated_impact"][:] + f["trajectory/dissipated_friction"][:]
        drift = float(np.max(np.abs(bal - bal[0])))
        # The energy balance closes (from the file, independently of the report).
        self.assertLess(drift / (M * G * H0), 1e-8)
        # Apex heights fall by e^2: the apex after impact n is e^(2n) h; the largest sample of a flight lies at
        # most DT/2 from its apex, i.e. at most g DT^2/8 below it (flights longer than 10 samples).
        starts, ends = ev_t[:-1], ev_t[1:]
        n_checked = 0
        for n, (a, b) in enumerate(zip(starts, ends), start=1):
            if b - a < 10 * DT:
                continue
            apex = y[(t > a) & (t < b)].max()
            self.assertLessEqual(abs(apex - E ** (2 * n) * H0), G * DT ** 2 / 8 + drift / (M * G), n)
            n_checked += 1
        self.assertGreaterEqual(n_checked, 15)

        # The report's impact table: impact n hits at v_n = sqrt(2 g h) e^(n-1), kinetic energy E_n = m g h e^(2(n-1))
        # before it; an impact takes (1 - e^2) E_n with impulse m (1 + e) v_n, the capture (plastic) E_n with m v_n.
        # In energy terms every printed figure is exact to the balance's drift plus its printing.
        rows = self.table("bouncing_ball", "impacts")
        self.assertEqual(len(rows), len(ev_t))
        self.assertEqual([r[1] for r in rows], list(kinds))
        self.assertEqual([r[1] for r in rows], ["impact"] * (len(rows) - 1) + ["capture"])
        total = 0.0
        for n, r in enumerate(rows, start=1):
            tn, kind, contact, jn, jt, loss = r[0], r[1], r[2], number(r[3]), number(r[4]), number(r[5])
            self.assertEqual(contact, "floor")
            self.assertAlmostEqual(number(tn), ev_t[n - 1], delta=PRINTED_REL * ev_t[n - 1])
            en = M * G * H0 * E ** (2 * (n - 1))
            plastic = kind == "capture"
            k_before = jn ** 2 / (2 * M * (1 + (0.0 if plastic else E)) ** 2)
            self.assertLessEqual(abs(k_before - en), drift + 2 * PRINTED_REL * en, n)
            expected_loss = en if plastic else (1 - E ** 2) * en
            self.assertLessEqual(abs(loss - expected_loss), drift + PRINTED_REL * en, n)
            self.assertTrue(np.isnan(jt))  # no friction: no tangential impulse
            total += loss
        # The losses add up to the dissipated_impact state, and (the ball at rest on the floor) to m g h.
        led = self.energy("bouncing_ball")
        lost = led["lost at impacts (Σ kinetic_energy_loss over impacts and captures)"]
        self.assertAlmostEqual(lost, total, delta=len(rows) * PRINTED_REL * M * G * H0)
        self.assertAlmostEqual(lost, d_imp, delta=PRINTED_REL * d_imp)
        self.assertAlmostEqual(led["dissipated_impact at the end"], d_imp, delta=PRINTED_REL * d_imp)
        self.assertLess(abs(d_imp - M * G * H0), 1e-8 * M * G * H0)
        self.assertEqual(led["lost in slip (dissipated_friction at the end)"], 0.0)
        self.assertAlmostEqual(led["largest drift |h + losses − initial|"], drift, delta=PRINTED_REL * drift)
        self.assertLess(led["largest drift relative to max |h|"], 1e-8)

        # The phase table: 68 bounces leave the contact open, the capture closes it; after it the ball rests on
        # the floor with N = m g.
        phases = self.table("bouncing_ball", "phases")
        self.assertEqual([(p[1], p[3], p[4]) for p in phases],
                         [("impact", "o", "o")] * (len(phases) - 1) + [("capture", "o", "0")])
        after = t > ev_t[-1]
        self.assertTrue(after.any())
        np.testing.assert_allclose(n_force[after], M * G, rtol=1e-8)

    def test_table_against_file_and_physics(self):
        with h5py.File(os.path.join(self.tmp.name, "table_contact.h5"), "r") as f:
            ev_t = f["events/time"][:]
            kinds = f["events/kind"][:].astype(str)
            tr = {k: f["trajectory"][k][:] for k in ("time", "normal_force_table", "slip_velocity_table",
                                                     "gap_table", "dissipated_impact", "dissipated_friction")}
            mu = float(re.search(r"parameters\.mu = ([0-9.e+-]+)", f["scenario"].attrs["resolved"]).group(1))
        t = tr["time"]
        phases = self.table("table_contact", "phases")
        self.assertEqual([p[1] for p in phases], list(kinds))
        for p, te in zip(phases, ev_t):
            self.assertAlmostEqual(number(p[0]), te, delta=PRINTED_REL * te)
        # Each printed mode after an event, against the motion in the samples that follow it (before the next
        # event): open has no normal force and lifts off; stick has no slip; + and - slide that way.
        seen = set()
        for i, p in enumerate(phases):
            if p[2] == "–":
                continue
            nxt = ev_t[i + 1] if i + 1 < len(ev_t) else t[-1] + 1
            sel = (t > ev_t[i]) & (t < nxt)
            if not sel.any():
                continue
            mode = p[4]
            seen.add(mode)
            n, w = tr["normal_force_table"][sel], tr["slip_velocity_table"][sel]
            if mode == "o":
                self.assertTrue(np.all(n == 0), (i, p))
            else:
                self.assertTrue(np.all(n > 0), (i, p))
                self.assertTrue(np.all(np.abs(tr["gap_table"][sel]) < 1e-8), (i, p))
            if mode == "0":
                self.assertLess(np.max(np.abs(w)), 1e-6, (i, p))
            if mode == "+":
                self.assertTrue(np.all(w > 0), (i, p))
            if mode == "-":
                self.assertTrue(np.all(w < 0), (i, p))
        self.assertEqual(seen, {"o", "0", "+", "-"})
        # Impacts: inside the Coulomb cone, |impulse_t| <= mu impulse_n; losses positive and adding up to
        # the dissipated_impact state.
        rows = self.table("table_contact", "impacts")
        self.assertEqual(len(rows), int(np.isin(kinds, ["impact", "capture"]).sum()))
        total = 0.0
        for r in rows:
            jn, jt, loss = number(r[3]), number(r[4]), number(r[5])
            self.assertGreater(jn, 0)
            self.assertLessEqual(abs(jt), mu * jn * (1 + 2 * PRINTED_REL))
            self.assertGreater(loss, 0)
            total += loss
        d_imp, d_fr = tr["dissipated_impact"][-1], tr["dissipated_friction"][-1]
        led = self.energy("table_contact")
        self.assertAlmostEqual(total, d_imp, delta=len(rows) * PRINTED_REL * d_imp)
        self.assertAlmostEqual(led["lost at impacts (Σ kinetic_energy_loss over impacts and captures)"], d_imp,
                               delta=PRINTED_REL * d_imp)
        self.assertAlmostEqual(led["lost in slip (dissipated_friction at the end)"], d_fr, delta=PRINTED_REL * d_fr)
        self.assertGreater(d_fr, 0)


if __name__ == "__main__":
    unittest.main()
