"""The figures a result is published with (tools/rollsim.plot.py, tools/plot), checked on the drawn data:
the energy balance counts the input's work, log axes where the data call for them, wrapped Bode phase,
the stored modal classes, event markers behind the curves, the sweep points' trajectories, the relay and
carriage runs drawn from their roles, vector output and output errors; and what a paper prints (--signals,
--style paper, events listed once, conserved quantities as deviations, the eigenvalue map's shading, the modal
table's dashes, Bode channels by input, the growth check's floor, a sweep's columns drawn once).  Synthetic files (synth.py) give known answers; real runs
of the built program (ROLLSIM_BINARY) check the same against the run's own energy bookkeeping."""

import os
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np
import matplotlib

matplotlib.use("Agg")

import synth
import rollsim
import rollsim.plot

PLOT = os.path.join(synth.TOOLS, "plot")
SCENARIOS = os.path.join(synth.REPO, "scenarios")


def run_plot(*args):
    return subprocess.run([sys.executable, PLOT, *args], capture_output=True, text=True, timeout=300)


def panel_axes(fig, name):
    """The axes drawn for the panel called ``name`` (panels are added in order; colorbars come later)."""
    return fig.axes[fig.rollsim_panels.index(name)]


def figure(path_or_result, **kw):
    r = rollsim.load(path_or_result) if isinstance(path_or_result, str) else path_or_result
    return rollsim.plot.figures(r, **kw)[0]


class TempDirCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()


class SyntheticFigures(TempDirCase):

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_energy_drift_counts_the_table_torque(self):
        # With tau = 0.5 the total energy holds tau (theta1 - theta1(0)) on top of a drift of exactly 1e-9 t.
        f = synth.write_table(self.path("torque.h5"), torque=0.5)
        fig = figure(f)
        line = panel_axes(fig, "energy drift").get_lines()[0]
        t, d = line.get_xdata(), line.get_ydata()
        np.testing.assert_allclose(d, 1e-9 * t, rtol=0, atol=1e-12)
        r = rollsim.load(f)
        e = r.trajectory["total_energy"]
        self.assertGreater(np.ptp(e), 1e-3)  # the torque's work is far larger than the drift

    def test_energy_drift_without_torque_key(self):
        # No works, no losses: the stored energy is the conserved quantity, drawn as E - E(0).
        f = synth.write_table(self.path("plain.h5"))
        ax = panel_axes(figure(f), "energy drift")
        line = ax.get_lines()[0]
        np.testing.assert_allclose(line.get_ydata(), 1e-9 * line.get_xdata(), rtol=0, atol=1e-12)
        e = rollsim.load(f).trajectory["total_energy"]
        np.testing.assert_array_equal(line.get_ydata(), e - e[0])
        self.assertEqual(line.get_label(), "drift of E = total_energy")
        self.assertEqual(ax.get_ylabel(), "E − E(0) [J]")

    def test_friction_demand_log_axis_and_undefined_where_no_contact(self):
        f = synth.write_table(self.path("demand.h5"))
        ax = panel_axes(figure(f), "friction demand")
        self.assertEqual(ax.get_yscale(), "log")
        d = synth.table_data()
        line = ax.get_lines()[0]
        y = line.get_ydata()
        n, tc = d["normal_force"], d["tangential_force"]
        self.assertTrue(np.all(np.isnan(y[n <= 0])))
        ok = (n > 0) & (tc != 0)
        np.testing.assert_allclose(y[ok], np.abs(tc[ok]) / n[ok], rtol=1e-15)

    def test_symbols_in_labels(self):
        fig = figure(synth.write_table(self.path("sym.h5")))
        ax = panel_axes(fig, "states [rad]")
        self.assertEqual(ax.get_ylabel(), "θ₁, θ₂ [rad]")
        self.assertEqual([t.get_text() for t in ax.get_legend().get_texts()][:2], ["θ₁", "θ₂"])
        self.assertEqual(rollsim.plot.symbol("initial.theta1"), "θ₁(0)")
        self.assertEqual(rollsim.plot.symbol("omega2"), "ω₂")
        self.assertEqual(rollsim.plot.symbol("x3"), "x₃")

    def test_event_markers_behind_curves(self):
        fig = figure(synth.write_table(self.path("ev.h5")))
        from matplotlib.collections import LineCollection
        for name, ax in fig.rollsim_axes.items():
            with self.subTest(panel=name):
                curve_z = min(line.get_zorder() for line in ax.get_lines() if len(line.get_xdata()))
                lines = [c for c in ax.collections if isinstance(c, LineCollection)]
                self.assertEqual(len(lines), 2)  # slip_onset, table_edge
                for c in lines:  # across the panel: thin, translucent, behind the curves, in no legend
                    self.assertLess(c.get_zorder(), curve_z)
                    self.assertLess(c.get_alpha(), 0.5)
                    self.assertLessEqual(max(c.get_linewidths()), 0.6)
                    self.assertTrue(c.get_label().startswith("_"))
                    seg = c.get_segments()[0]
                    self.assertEqual((min(seg[:, 1]), max(seg[:, 1])), (0.0, 1.0))  # the whole height
                np.testing.assert_array_equal(sorted(c.get_segments()[0][0, 0] for c in lines), [0.7, 1.9])
        # Listed once: the strip's rows, one per kind, each with its instants.
        strip = fig.rollsim_event_strip
        rows = {line.get_label(): line.get_xdata() for line in strip.get_lines()}
        self.assertEqual(rows, {"slip_onset (1)": [0.7], "table_edge (1)": [1.9]})

    def test_bode_phase_wrapped(self):
        self.assertEqual(list(rollsim.plot.wrap_degrees([180, -180, 190, -190, 540, 0, -359])),
                         [180, 180, -170, 170, 180, 0, 1])
        f = synth.write_linear(self.path("lin.h5"))
        import h5py
        with h5py.File(f, "a") as h:  # shift the stored (unwrapped) phase by whole turns
            ph = h["linear/frequency_response/phase_deg"]
            ph[...] = ph[()] - 720.0
            stored = ph[()]
        y = panel_axes(figure(f), "bode phase").get_lines()[0].get_ydata()
        fin = np.isfinite(y)
        self.assertTrue(np.all((y[fin] > -180) & (y[fin] <= 180)))
        turns = (y[fin] - stored[fin]) / 360.0  # the drawn phase differs from the stored one by whole turns
        np.testing.assert_allclose(turns, np.round(turns), rtol=0, atol=1e-12)

    def test_eigenvalues_coloured_by_stored_classes(self):
        f = synth.write_linear(self.path("cls.h5"))
        import h5py
        with h5py.File(f, "a") as h:
            # A pair whose real part is round-off above zero, classed "undamped" as the run does.
            h["linear/eigenvalues_real"][0:2] = 1e-16
            del h["linear/stability"]
            h["linear"].create_dataset("stability", data=np.array(["undamped", "undamped", "damped"], dtype=object),
                                       dtype=synth.STR)
        fig = figure(f)
        labels = [t.get_text() for t in panel_axes(fig, "eigenvalues").get_legend().get_texts()]
        self.assertEqual(labels, ["undamped (2)", "damped (1)"])
        cells = panel_axes(fig, "modal table").tables[0].get_celld()
        texts = [cells[(i, max(c for _, c in cells))].get_text().get_text() for i in (1, 2, 3)]
        self.assertEqual(texts, ["undamped", "undamped", "damped"])

    def test_log_spaced_sweep_on_log_axes(self):
        f = synth.write_sweep_points(self.path("pts.h5"))
        r = rollsim.load(f)
        self.assertTrue(rollsim.plot.log_spaced(r, "initial.theta1"))      # spacing = "log" in the spec
        self.assertFalse(rollsim.plot.log_spaced(r, "parameters.table_torque"))
        ax = panel_axes(figure(r), "study t_final")
        self.assertEqual(ax.get_xscale(), "log")
        # Without the spec: from the values' spacing.
        r.scenario = ""
        self.assertTrue(rollsim.plot.log_spaced(r, "initial.theta1"))
        study = rollsim.load(synth.write_sweep(self.path("lin_sweep.h5"), basin=False))
        self.assertFalse(rollsim.plot.log_spaced(study, "table.mu"))         # -2 .. 2, evenly spaced
        self.assertEqual(panel_axes(figure(study), "study t_edge").get_xscale(), "linear")

    def test_zip_sweep_is_one_series(self):
        # Nine points whose two keys change together: one curve of nine points against the first key, not nine
        # one-point curves (one per value of the second key, as a grid's would be).
        f = self.path("zip.h5")
        mu = np.linspace(0.1, 0.9, 9)
        with h5py.File(f, "w") as h:
            synth._root(h, "tipping_table", "Zip sweep")
            synth._scenario(h, "[sweep]\nmode = \"zip\"\n", "")
            g = h.create_group("sweep")
            g.attrs["mode"] = "zip"
            g.attrs["swept_keys"] = "table.mu,initial.theta1"
            g.create_dataset("table.mu", data=mu)
            g.create_dataset("initial.theta1", data=0.01 * mu[::-1])
            g.create_dataset("status", data=np.array(["ok"] * 9, dtype=object), dtype=synth.STR)
            g.create_dataset("t_final", data=1.0 + mu ** 2).attrs["unit"] = "s"
        ax = panel_axes(figure(f), "study t_final")
        curves = [line for line in ax.get_lines() if len(line.get_xdata())]
        self.assertEqual(len(curves), 1)
        np.testing.assert_array_equal(curves[0].get_xdata(), mu)
        np.testing.assert_array_equal(curves[0].get_ydata(), 1.0 + mu ** 2)
        # A first key that does not move one way: against the point index.
        with h5py.File(f, "a") as h:
            h["sweep/table.mu"][...] = np.r_[mu[::2], mu[1::2]]
        ax = panel_axes(figure(f), "study t_final")
        curves = [line for line in ax.get_lines() if len(line.get_xdata())]
        self.assertEqual(len(curves), 1)
        np.testing.assert_array_equal(curves[0].get_xdata(), np.arange(9))
        self.assertEqual(ax.get_xlabel(), "point [-]")

    def test_point_trajectories_with_events(self):
        f = synth.write_sweep_points(self.path("pts2.h5"))
        r = rollsim.load(f)
        self.assertEqual(sorted(r.points), list(range(6)))
        p4 = r.point(4)
        np.testing.assert_array_equal(p4.trajectory["theta1"], 0.1 * (1 + np.linspace(0, 1, 11)))
        self.assertEqual(list(p4.events["time"]), [0.25, 0.75])
        self.assertEqual(list(p4.events["kind"]), ["lift_off", "lift_off"])
        self.assertEqual(p4.param("initial.theta1"), 0.1)
        self.assertEqual(p4.param("parameters.table_torque"), 0.0)
        self.assertEqual(r.point(5).param("parameters.table_torque"), 0.5)
        self.assertEqual(len(r.point(0).events), 0)
        with self.assertRaises(KeyError):
            r.point(6)
        ax = panel_axes(figure(r), "point trajectories theta1")
        self.assertEqual(len(ax.get_lines()), 6 + 2)  # six curves, two points with event markers
        out = self.path("p4.png")
        p = run_plot(f, "--point", "4", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.getsize(out) > 10_000)
        mat = self.path("pts.mat")
        p = subprocess.run([sys.executable, os.path.join(synth.TOOLS, "h5tomat"), f, mat],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        import scipy.io
        m = scipy.io.loadmat(mat, simplify_cells=True)["points"]
        self.assertEqual(sorted(m), [f"p{i:06d}" for i in range(6)])
        np.testing.assert_array_equal(m["p000004"]["events"]["time"], [0.25, 0.75])
        self.assertEqual(list(m["p000004"]["events"]["kind"]), ["lift_off", "lift_off"])
        self.assertEqual(m["p000004"]["status"], "ok")
        p = run_plot(f, "--point", "6", "-o", self.path("p6.png"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("no trajectory for sweep point 6", p.stderr)
        self.assertFalse(os.path.exists(self.path("p6.png")))

    def test_svg_output(self):
        f = synth.write_table(self.path("svg.h5"))
        out = self.path("fig.svg")
        p = run_plot(f, "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, encoding="utf-8") as fh:
            text = fh.read()
        self.assertTrue(text.lstrip().startswith("<?xml"))
        self.assertIn("<svg", text)
        self.assertIn("</svg>", text)

    def test_output_errors(self):
        f = synth.write_table(self.path("err.h5"))
        missing = self.path("no/such/folder/fig.png")
        p = run_plot(f, "-o", missing)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("does not exist", p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        existing = self.path("keep.xyz")
        with open(existing, "w") as fh:
            fh.write("untouched")
        p = run_plot(f, "-o", existing)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown format .xyz", p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        with open(existing) as fh:
            self.assertEqual(fh.read(), "untouched")


PDF_MAGIC = b"%PDF-"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def with_events(path, times, kinds):
    """Replace the file's /events by these instants and kinds."""
    with h5py.File(path, "a") as h:
        del h["events"]
        e = h.create_group("events")
        e.create_dataset("time", data=np.asarray(times, float))
        e.create_dataset("kind", data=np.array(kinds, dtype=object), dtype=synth.STR)
    return path


def legend_texts(ax):
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


class PaperFigures(TempDirCase):
    """The options and fixes of figures a paper prints: --signals, --style paper, --split, events listed once,
    conserved quantities as deviations, the eigenvalue map, the modal table, Bode channels, growth, sweeps."""

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_signals_choose_the_panels(self):
        f = synth.write_disk(self.path("sig.h5"))
        r = rollsim.load(f)
        fig = figure(r, signals=["z", "x"])
        self.assertEqual(fig.rollsim_panels, ["z", "x"])
        for name in ("z", "x"):
            ax = panel_axes(fig, name)
            self.assertEqual(ax.get_ylabel(), f"{name} [-]")
            np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), r.trajectory[name])
            np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), r.trajectory["time"])
        out = self.path("sig.png")
        p = run_plot(f, "--signals", "x,z", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, "rb") as fh:
            self.assertEqual(fh.read(8), PNG_MAGIC)

    def test_unknown_signal_is_refused(self):
        f = synth.write_disk(self.path("unknown.h5"))
        out = self.path("unknown.png")
        p = run_plot(f, "--signals", "x,theta9", "-o", out)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("unknown signal theta9", p.stderr)
        for name in rollsim.plot.signal_names(rollsim.load(f)):  # the available names are listed
            self.assertIn(name, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertFalse(os.path.exists(out))
        with self.assertRaises(KeyError):
            figure(f, signals=["theta9"])

    def test_conserved_quantities_as_deviations(self):
        # The disk's ledger E + D = total + dissipated: drawn as (E + D) - (E + D)(0), not as a flat line over the
        # energies (where it hid the curve below it).
        f = synth.write_disk(self.path("ledger.h5"))
        r = rollsim.load(f)
        fig = figure(r)
        ax = panel_axes(fig, "energy drift")
        self.assertEqual(ax.get_ylabel(), "(E + D) − (E + D)(0) [J]")
        tr = r.trajectory
        balance = tr["total_energy"] + tr["dissipated_energy"]
        np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), balance - balance[0])
        self.assertFalse([t for t in legend_texts(panel_axes(fig, "energy")) if "E + D" in t])
        # A column the file marks as conserved (role energy.ledger), chosen with --signals: its deviation too.
        with h5py.File(f, "a") as h:
            g = h["trajectory"]
            ds = g.create_dataset("energy_balance", data=balance + 3.0)
            ds.attrs.update({"unit": "J", "description": "E + D", "role": "energy.ledger"})
        r = rollsim.load(f)
        ax = panel_axes(figure(r, signals=["energy_balance", "x"]), "energy_balance")
        np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), balance + 3.0 - (balance[0] + 3.0))
        self.assertEqual(ax.get_ylabel(), "(E + D) − (E + D)(0) [J]")

    def test_many_events_ticks_on_a_strip(self):
        # 128 events (as the Coulomb disk's): no lines across the panels, one tick each on the strip, the count said.
        t = np.linspace(0.1, 5.9, 128)
        kinds = ["stick" if i % 2 else "slip" for i in range(128)]
        f = with_events(synth.write_disk(self.path("many.h5")), t, kinds)
        fig = figure(f)
        from matplotlib.collections import LineCollection
        for name, ax in fig.rollsim_axes.items():
            self.assertFalse([c for c in ax.collections if isinstance(c, LineCollection)], name)
        strip = fig.rollsim_event_strip
        self.assertIn("128 events", strip.get_title(loc="left"))
        rows = {line.get_label(): line for line in strip.get_lines()}
        self.assertEqual(sorted(rows), ["slip (64)", "stick (64)"])
        np.testing.assert_array_equal(np.sort(np.r_[rows["slip (64)"].get_xdata(), rows["stick (64)"].get_xdata()]),
                                      t)
        for line in rows.values():
            self.assertEqual(line.get_marker(), "|")  # thin ticks
        # The modes +1, 0, -1 are named once, in the strip's legend, not in every shaded panel.
        self.assertEqual(legend_texts(strip), list(rollsim.plot.MODE_NAMES.values()))
        self.assertEqual(legend_texts(panel_axes(fig, "states [1]")), ["x"])
        self.assertEqual(strip.get_xlim(), panel_axes(fig, "states [1]").get_xlim())

    def test_paper_style(self):
        f = synth.write_table(self.path("paper.h5"))
        r = rollsim.load(f)
        fig = figure(r, style="paper")
        self.assertEqual(fig.get_figwidth(), rollsim.plot.PAPER_WIDTH_IN)
        self.assertEqual(fig.get_figwidth(), 3.5)
        self.assertIsNone(fig._suptitle)  # the caption says what it is
        from matplotlib.text import Text
        texts = [t for t in fig.findobj(Text) if t.get_text()]
        for t in texts:  # Computer Modern: text in cmr10, mathematics in mathtext's cm; nothing cmr10 lacks
            self.assertEqual(t.get_fontfamily(), ["serif"])
            self.assertEqual(t.get_fontproperties().get_math_fontfamily(), "cm")
            self.assertGreaterEqual(t.get_fontsize(), rollsim.plot.PAPER_MIN_FONT_PT)
            outside = t.get_text().split("$")[::2]
            self.assertTrue(all(c.isascii() and c not in "|<>_{}" for part in outside for c in part), t.get_text())
        self.assertEqual(panel_axes(fig, "states [rad]").get_ylabel(), r"$\theta _{1}$, $\theta _{2}$ [rad]")
        for ext, magic in ((".pdf", PDF_MAGIC), (".svg", b"<?xml"), (".png", PNG_MAGIC)):
            with self.subTest(ext=ext):  # two panels: the format is the point here
                out = self.path("paper" + ext)
                p = run_plot(f, "--style", "paper", "--signals", "theta1,total_energy", "-o", out)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stderr, "")
                with open(out, "rb") as fh:
                    data = fh.read()
                self.assertTrue(data.startswith(magic), data[:16])
                if ext == ".pdf":
                    self.assertIn(b"Cmr10", data)  # the text font embedded
                    self.assertNotIn(b"DejaVu", data)
                if ext == ".svg":
                    self.assertIn(b"<svg", data)
                if ext == ".png":
                    self.assertEqual(int.from_bytes(data[16:20], "big"), round(3.5 * rollsim.plot.PAPER_DPI))
        # Without -o, paper style writes a PDF next to the input.
        p = run_plot(f, "--style", "paper", "--signals", "theta1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), self.path("paper.pdf"))

    def test_tex_text(self):
        tex = rollsim.plot.tex_text
        self.assertEqual(tex("θ₁ [rad]"), r"$\theta _{1}$ [rad]")
        self.assertEqual(tex("x₃ [-]"), r"$x _{3}$ [-]")
        self.assertEqual(tex("max |drift| = 2e-09 kg m^2"), r"max $|$drift$|$ = 2e-09 kg m$^{2}$")
        self.assertEqual(tex("E − E(0) [J]"), r"E $-$ E(0) [J]")
        self.assertEqual(tex("$|T_c|/N$ and μ"), r"$|T_c|/N$ and $\mu$")   # mathtext already there is kept
        self.assertEqual(tex("total_energy"), r"total$\_$energy")

    @unittest.skipIf(__import__("shutil").which("latex"), "latex is installed: --usetex is used, not refused")
    def test_usetex_without_latex(self):
        f = synth.write_growth(self.path("usetex.h5"))
        out = self.path("usetex.pdf")
        p = run_plot(f, "--style", "paper", "--usetex", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("no latex on the PATH", p.stderr)
        with open(out, "rb") as fh:
            self.assertEqual(fh.read(5), PDF_MAGIC)

    def test_eigenvalue_map_shades_the_whole_right_half(self):
        f = synth.write_linear(self.path("shade.h5"))
        fig = figure(f)
        ax = panel_axes(fig, "eigenvalues")
        from matplotlib.patches import Polygon
        spans = [p for p in ax.patches if isinstance(p, Polygon)]
        self.assertEqual(len(spans), 1)
        x = spans[0].get_xy()[:, 0]
        self.assertEqual((x.min(), x.max()), (0.0, ax.get_xlim()[1]))
        re = rollsim.load(f).linear["eigenvalues_real"]
        self.assertGreater(ax.get_xlim()[1], np.max(np.abs(re)))
        # In the report's three-panel layout (11.4 in wide) the title is not cut off.
        from matplotlib.figure import Figure
        rep = Figure(figsize=(11.4, 4.0), layout="constrained")
        axs = rep.subplots(1, 3)
        rollsim.plot._eigen_map(axs[2], rollsim.load(f).linear)
        rep.canvas.draw()
        title = axs[2].title.get_window_extent()
        self.assertLessEqual(title.x1, rep.bbox.x1)
        self.assertGreaterEqual(title.x0, rep.bbox.x0)

    def test_two_input_bode_labelled(self):
        f = synth.write_linear(self.path("two.h5"))
        with h5py.File(f, "a") as h:
            fr = h["linear/frequency_response"]
            for key in ("magnitude_db", "phase_deg"):
                one = fr[key][()]
                del fr[key]
                fr.create_dataset(key, data=np.vstack([one, one - 20.0]))  # [channel, frequency]
            for key, names in (("input_names", ["force_x", "force_phi"]), ("output_names", ["x"])):
                h["linear"].create_dataset(key, data=np.array(names, dtype=object), dtype=synth.STR)
        r = rollsim.load(f)
        fig = figure(r)
        fr = r.linear["frequency_response"]
        for panel, key in (("bode magnitude", "magnitude_db"), ("bode phase", "phase_deg")):
            ax = panel_axes(fig, panel)
            self.assertEqual(legend_texts(ax), ["force_x", "force_phi"])
            self.assertEqual(ax.get_legend().get_title().get_text(), "input (output x)")
            if key == "magnitude_db":
                for line, row in zip(ax.get_lines(), fr[key]):
                    np.testing.assert_array_equal(line.get_ydata(), row)
        self.assertEqual(rollsim.plot.channel_labels({"input_names": ["u", "v"], "output_names": ["a", "b"]}, 4),
                         ["u → a", "v → a", "u → b", "v → b"])  # channel = output * n_inputs + input

    def test_modal_table_dashes_and_round_off(self):
        f = synth.write_linear(self.path("modes.h5"))
        with h5py.File(f, "a") as h:  # an undamped pair with a round-off real part, and a real root
            lin = h["linear"]
            lin["eigenvalues_real"][...] = [-5.77e-17 * 6.79, -5.77e-17 * 6.79, -4.0]
            lin["eigenvalues_imag"][...] = [6.79, -6.79, 0.0]
            lin["damping_ratio"][...] = [5.77e-17, 5.77e-17, np.nan]
            lin["time_constant"][...] = [2.55e15, 2.55e15, 0.25]
            lin["frequency_hz"][...] = [6.79 / (2 * np.pi), 6.79 / (2 * np.pi), np.nan]
            lin["wavelength"][...] = [2 * np.pi / 6.79, 2 * np.pi / 6.79, np.nan]
            del lin["stability"]
            lin.create_dataset("stability", data=np.array(["undamped", "undamped", "damped"], dtype=object),
                               dtype=synth.STR)
        cells = panel_axes(figure(f), "modal table").tables[0].get_celld()
        ncols = max(c for _, c in cells) + 1
        header = [cells[(0, c)].get_text().get_text() for c in range(ncols)]
        rows = [[cells[(i, c)].get_text().get_text() for c in range(ncols)] for i in (1, 2, 3)]
        col = {h.rsplit("[", 1)[0].replace("\n", " ").strip(): k for k, h in enumerate(header)}
        self.assertEqual(header[:4], ["λ", "frequency\n[Hz]", "ζ\n[-]", "time\nconstant\n[s]"])
        self.assertEqual([row[col["ζ"]] for row in rows], ["0", "0", "-"])
        self.assertEqual([row[col["time constant"]] for row in rows], ["-", "-", "0.25"])
        self.assertEqual([row[col["frequency"]] for row in rows], ["1.081", "1.081", "-"])
        self.assertEqual([row[col["λ"]] for row in rows], ["0+6.79j", "0-6.79j", "-4+0j"])
        self.assertFalse([c for row in rows for c in row if "nan" in c or "e+15" in c or "e-17" in c])
        # The round-off floor: the file's real_part_floor; a file without it, 256 ulps of its ||A||_F (the program's
        # rule). A real part above the floor is kept.
        lin = rollsim.load(f).linear
        eps = np.finfo(float).eps
        self.assertEqual(rollsim.plot.real_part_floor(lin), 256 * eps * np.linalg.norm(synth.LINEAR_A))
        with h5py.File(f, "a") as h:
            h["linear"].attrs["real_part_floor"] = 1e-20
        lin = rollsim.load(f).linear
        self.assertEqual(rollsim.plot.real_part_floor(lin), 1e-20)
        self.assertEqual(rollsim.plot.modal_rows(lin)[0][:3], ["-3.918e-16+6.79j", "1.081", "5.77e-17"])
        np.testing.assert_array_equal(rollsim.plot.zero_real_parts([1e-13, -1e-3, -3e-12], 3e-12), [0, -1e-3, 0])

    def test_growth_figure(self):
        f = synth.write_growth(self.path("growth.h5"))
        floor = np.array([1e-9, 1.1e-9, 1.2e-9, 2e-9, 2.1e-9, 2.2e-9])
        with h5py.File(f, "a") as h:
            h["growth"].create_dataset("floor", data=floor)
            h["growth/measured"][3:] = h["growth/measured"][:3]  # two modes on the same points
        r = rollsim.load(f)
        fig = figure(r)
        title = fig._suptitle.get_text()
        self.assertTrue(title.startswith("Growth check: "), title)
        self.assertNotIn("linear analysis", title.splitlines()[0])
        err = panel_axes(fig, "growth error")
        floors = [line for line in err.get_lines() if line.get_linestyle() == "--" and len(line.get_xdata())]
        self.assertEqual(len(floors), 2)  # one per mode, the file's values
        np.testing.assert_array_equal(np.sort(np.r_[floors[0].get_ydata(), floors[1].get_ydata()]), np.sort(floor))
        self.assertIn("integration-error floor (per mode)", legend_texts(err))
        growth = panel_axes(fig, "growth")
        measured = [line for line in growth.get_lines() if line.get_label().endswith("measured")]
        self.assertEqual(len(measured), 2)
        a, b = measured
        self.assertNotEqual(a.get_marker(), b.get_marker())
        np.testing.assert_array_equal(a.get_ydata(), b.get_ydata())  # the same values ...
        self.assertTrue(np.all(a.get_xdata() != b.get_xdata()))      # ... drawn apart along epsilon
        ratio = b.get_xdata() / a.get_xdata()
        self.assertTrue(np.all((ratio > 1.0) & (ratio < 1.5)))

    def test_sweep_draws_each_column_once(self):
        f = synth.write_sweep(self.path("once.h5"), basin=False)
        with h5py.File(f, "a") as h:  # runs that stop at the edge: t_final is t_edge
            h["sweep/t_final"][...] = h["sweep/t_edge"][()]
        r = rollsim.load(f)
        self.assertEqual(rollsim.plot.sweep_metrics(r.sweep, r.swept_keys), ["t_edge", "energy_drift"])
        self.assertEqual(figure(r).rollsim_panels, ["study t_edge", "study energy_drift"])


@unittest.skipUnless(os.access(synth.BINARY, os.X_OK), f"needs the built program {synth.BINARY}")
class RealRunFigures(TempDirCase):
    def run_file(self, name, scenario, *sets, command="run"):
        out = os.path.join(self.dir, name)
        args = [command, os.path.join(SCENARIOS, scenario), "-o", out, "-q"]
        for s in sets:
            args += ["--set", s]
        synth.rollsim(*args)
        return out

    def drift_line(self, fig):
        return panel_axes(fig, "energy drift").get_lines()[0].get_ydata()

    def test_table_with_torque(self):
        f = self.run_file("torque.h5", "tipping_table.toml", "parameters.table_torque=0.5")
        r = rollsim.load(f)
        d = self.drift_line(figure(r))
        e = r.trajectory["total_energy"]
        # The run checks T + V - tau (theta1 - theta1(0)) at every step; the samples are some of those points.
        self.assertLessEqual(np.max(np.abs(d)), r.summary["energy_drift_abs"] * (1 + 1e-12))
        self.assertLess(np.max(np.abs(d)) / abs(e[0]), 1e-8)
        self.assertGreater(np.max(np.abs(e - e[0])) / abs(e[0]), 1e-2)  # T + V alone is not conserved
        # The same balance from the run's own input_work column.
        w = r.trajectory["input_work"]
        np.testing.assert_allclose(d, (e - w) - (e[0] - w[0]), rtol=0, atol=1e-12 * abs(e[0]))

    def test_relay_view(self):
        f = self.run_file("relay.h5", "relay_feedback.toml", "simulation.t_end=2")
        fig = figure(f)
        # Drawn from the roles alone: the states, their orbit coloured by the modes +1, 0, -1, the outputs.
        self.assertEqual(fig.rollsim_panels, ["states [1]", "phase portrait", "outputs [1]"])
        self.assertEqual(panel_axes(fig, "phase portrait").get_xlabel(), "x₁ [-]")

    def test_carriage_view_energy(self):
        f = self.run_file("carriage.h5", "carriage_pendulum.toml", "parameters.force=2.0")
        r = rollsim.load(f)
        fig = figure(r)
        self.assertIn("energy drift", fig.rollsim_panels)
        d = self.drift_line(fig)
        e = r.trajectory["total_energy"]
        self.assertLessEqual(np.max(np.abs(d)), r.summary["energy_drift_abs"] * (1 + 1e-12))
        self.assertGreater(np.ptp(e), 1e3 * np.max(np.abs(d)))  # the force's work is counted

    def test_linear_classes_from_the_file(self):
        out = os.path.join(self.dir, "lin.h5")
        synth.rollsim("linearize", os.path.join(SCENARIOS, "tipping_table_linear.toml"), "-o", out)
        r = rollsim.load(out)
        # The benchmark's oscillatory pair has a round-off real part; the run classes it undamped.
        pair = np.abs(r.linear["eigenvalues_imag"]) > 1
        self.assertTrue(np.all(np.abs(r.linear["eigenvalues_real"][pair]) < 1e-12))
        fig = figure(r)
        labels = [t.get_text() for t in panel_axes(fig, "eigenvalues").get_legend().get_texts()]
        self.assertEqual(sorted(labels), ["damped (1)", "undamped (2)", "unstable (1)"])
        y = panel_axes(fig, "bode phase").get_lines()[0].get_ydata()
        fin = np.isfinite(y)
        self.assertTrue(np.all((y[fin] > -180) & (y[fin] <= 180)))

    def test_coulomb_disk_events_and_ledger(self):
        # The type B disk: 128 events, ticks on the strip and no line across a panel; its ledger E + D drawn as its
        # deviation from the start.
        f = self.run_file("disk_b.h5", "disk_type_b.toml")
        r = rollsim.load(f)
        self.assertEqual(len(r.events["time"]), 128)
        fig = figure(r)
        from matplotlib.collections import LineCollection
        for name, ax in fig.rollsim_axes.items():
            self.assertFalse([c for c in ax.collections if isinstance(c, LineCollection)], name)
        ticks = sum(len(line.get_xdata()) for line in fig.rollsim_event_strip.get_lines())
        self.assertEqual(ticks, 128)
        self.assertIn("128 events", fig.rollsim_event_strip.get_title(loc="left"))
        ax = panel_axes(fig, "energy drift")
        balance = r.trajectory["total_energy"] + r.trajectory["dissipated_energy"]
        np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), balance - balance[0])
        self.assertEqual(ax.get_ylabel(), "(E + D) − (E + D)(0) [-]")

    def test_modal_table_as_the_terminal(self):
        # The figure's modal table shows what the terminal's shows: "-" in the same places, the same numbers to the
        # figure's four digits, no round-off (the benchmark's undamped pair: damping ratio 0, time constant "-").
        out = os.path.join(self.dir, "lin_table.h5")
        printed = synth.rollsim("linearize", os.path.join(SCENARIOS, "tipping_table_linear.toml"), "-o", out).stdout
        lines = printed.split("Modal table\n", 1)[1].splitlines()[1:]
        terminal = [line.split()[1:5] for line in lines[:lines.index("")]]
        r = rollsim.load(out)
        rows = rollsim.plot.modal_rows(r.linear)
        self.assertEqual(len(rows), len(terminal))
        for drawn, shown in zip(rows, terminal):
            self.assertEqual(len(drawn[1:5]), len(shown))
            for cell, text in zip(drawn[1:5], shown):
                self.assertEqual(cell, text if text == "-" else f"{float(text):.4g}", (drawn, shown))
        by_class = {row[-1]: row for row in rows}
        self.assertEqual(by_class["undamped"][1:5], ["1.081", "0", "-", "0.9252"])
        self.assertEqual(by_class["unstable"][1:5], ["-", "-", "-0.2448", "-"])

    def test_two_input_bode_of_the_user_carriage(self):
        out = os.path.join(self.dir, "carriage_lin.h5")
        synth.rollsim("linearize", os.path.join(SCENARIOS, "user_carriage_pendulum.toml"), "--set", "initial.phi=0",
                      "-o", out)
        r = rollsim.load(out)
        self.assertEqual(list(r.linear["input_names"]), ["force_x", "force_phi"])
        fig = figure(r)
        for panel in ("bode magnitude", "bode phase"):
            self.assertEqual(legend_texts(panel_axes(fig, panel)), ["force_x", "force_phi"])

    def test_growth_floor_from_the_file(self):
        out = os.path.join(self.dir, "growth.h5")
        synth.rollsim("check", "growth", os.path.join(SCENARIOS, "tipping_table_linear.toml"), "-o", out)
        r = rollsim.load(out)
        fig = figure(r)
        self.assertTrue(fig._suptitle.get_text().startswith("Growth check: "))
        err = panel_axes(fig, "growth error")
        floors = [line for line in err.get_lines() if line.get_linestyle() == "--" and len(line.get_xdata())]
        modes = list(dict.fromkeys(r.growth["mode"]))
        self.assertEqual(len(floors), len(modes))
        for line, mode in zip(floors, modes):
            sel = np.asarray(r.growth["mode"]) == mode
            order = np.argsort(r.growth["epsilon"][sel])
            np.testing.assert_array_equal(line.get_ydata(), r.growth["floor"][sel][order])

    def test_sweep_points(self):
        # The shipped sweep with --trajectories.
        out = os.path.join(self.dir, "edge_traj.h5")
        synth.rollsim("sweep", os.path.join(SCENARIOS, "table_edge_time.toml"), "-o", out, "-q",
                      "--trajectories", "--set", "simulation.output_dt=0.05")
        r = rollsim.load(out)
        self.assertEqual(sorted(r.points), list(range(r.sweep.nrows)))
        for i in (0, r.sweep.nrows - 1):
            p = r.point(i)
            self.assertAlmostEqual(p.param("initial.theta1"), float(r.sweep["initial.theta1"][i]))
            self.assertAlmostEqual(p.trajectory["theta1"][-1], float(r.sweep["final_theta1"][i]), places=12)
        fig = figure(r)
        self.assertIn("point trajectories theta1", fig.rollsim_panels)
        # Every point stops at the edge: t_final is the time to the edge, drawn once, as t_edge.
        np.testing.assert_array_equal(r.sweep["t_final"], r.sweep["t_edge"])
        self.assertNotIn("study t_final", fig.rollsim_panels)
        ax = panel_axes(fig, "study t_edge")
        self.assertEqual(ax.get_xscale(), "log")
        self.assertEqual(ax.get_ylabel(), "t edge [s]")
        # The initial energy does not depend on the wheel inertia (the wheel starts at rest): one curve, not four
        # drawn over each other.
        ax = panel_axes(fig, "study energy_initial")
        curves = [line for line in ax.get_lines() if len(line.get_xdata())]
        self.assertEqual(len(curves), 1)
        self.assertEqual(legend_texts(ax), ["the same for every wheel inertia"])
        first = r.sweep["parameters.wheel_inertia"] == r.sweep["parameters.wheel_inertia"][0]
        order = np.argsort(r.sweep["initial.theta1"][first])
        np.testing.assert_array_equal(curves[0].get_ydata(), r.sweep["energy_initial"][first][order])
        mat = os.path.join(self.dir, "edge.mat")
        p = subprocess.run([sys.executable, os.path.join(synth.TOOLS, "h5tomat"), out, mat],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        import scipy.io
        m = scipy.io.loadmat(mat, simplify_cells=True)
        np.testing.assert_array_equal(m["points"]["p000003"]["trajectory"]["theta1"],
                                      r.points[3]["trajectory"]["theta1"])


if __name__ == "__main__":
    unittest.main()
