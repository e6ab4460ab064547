"""The figures a result is published with (tools/rollsim.plot.py, tools/plot), checked on the drawn data:
the energy balance counts the input's work, log axes where the data call for them, wrapped Bode phase,
the stored modal classes, event markers behind the curves, the sweep points' trajectories, the relay and
carriage runs drawn from their roles, vector output and output errors.  Synthetic files (synth.py) give known answers; real runs
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
        fig = figure(synth.write_table(self.path("plain.h5")))
        line = panel_axes(fig, "energy drift").get_lines()[0]
        np.testing.assert_allclose(line.get_ydata(), 1e-9 * line.get_xdata(), rtol=0, atol=1e-12)
        self.assertEqual(line.get_label(), "drift of E + D = total_energy")

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
        ax = panel_axes(fig, "states [rad]")
        curve_z = min(line.get_zorder() for line in ax.get_lines())
        full, rug = [], []
        from matplotlib.collections import LineCollection
        for c in ax.collections:
            if isinstance(c, LineCollection):
                (full if c.get_label().startswith("_") else rug).append(c)
        self.assertEqual(len(full), 2)  # slip_onset, table_edge
        for c in full:  # the lines across the panel: thin, translucent, behind the curves
            self.assertLess(c.get_zorder(), curve_z)
            self.assertLess(c.get_alpha(), 0.5)
            self.assertLessEqual(max(c.get_linewidths()), 0.6)
        for c in rug:  # the ticks along the top edge carry the legend
            seg = c.get_segments()[0]
            self.assertGreaterEqual(min(seg[:, 1]), 0.9)
        self.assertEqual(sorted(c.get_label() for c in rug), ["slip_onset (1)", "table_edge (1)"])

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
        # Every point stops at the edge: t_final is the time to the edge.
        self.assertEqual(panel_axes(fig, "study t_final").get_xscale(), "log")
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
