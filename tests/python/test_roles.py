"""The result file's signal roles, and the figures drawn from them: every shipped scenario is run briefly by the
built program (ROLLSIM_BINARY), its figure drawn by rollsim.plot, and the drift the figure states is compared with
the drift of the energy ledger E + D computed here from the file's datasets and their role attributes directly
(h5py, not the rollsim package).  The damped double pendulum, drawn before as a tipping table with the dampers'
loss shown as a drift of 12.8 J, is drawn from its own ledger."""

import glob
import os
import re
import tempfile
import tomllib
import unittest

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")

import synth  # noqa: E402
import rollsim  # noqa: E402
import rollsim.plot  # noqa: E402

SCENARIOS = os.path.join(synth.REPO, "scenarios")
T_END = 0.2          # s (or the model's time unit): a few hundred samples, every panel drawn
SWEEP_T_END = 0.05   # a sweep's points only need to run


def ledger_from_file(path, group="trajectory"):
    """(E + D at every sample, the ledger column's name or None) read with h5py: the column of role energy.ledger
    in `group`, else the sum of ledger x column over the columns with a ledger attribute; None when neither."""
    with h5py.File(path, "r") as f:
        g = f[group]
        roles = {n: g[n].attrs.get("role") for n in g}
        roles = {n: r.decode() if isinstance(r, bytes) else r for n, r in roles.items()}
        column = next((n for n, r in roles.items() if r == "energy.ledger"), None)
        if column is not None:
            return np.asarray(g[column][()], float), column
        terms = [(n, int(g[n].attrs["ledger"])) for n in g if "ledger" in g[n].attrs]
        if not terms:
            return None, None
        return sum(sign * np.asarray(g[n][()], float) for n, sign in terms), None


def stated_drift(ax):
    """The largest drift the energy drift panel states in its legend ("max |drift| = 4.1e-08 J")."""
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    stated = [t for t in texts if t.startswith("max |drift| = ")]
    assert len(stated) == 1, texts
    return float(re.match(r"max \|drift\| = (\S+)", stated[0]).group(1))


@unittest.skipUnless(os.access(synth.BINARY, os.X_OK), f"needs the built program {synth.BINARY}")
class EveryShippedScenario(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.results = {}  # scenario name -> (result path, process)
        for scen in sorted(glob.glob(os.path.join(SCENARIOS, "*.toml"))):
            name = os.path.splitext(os.path.basename(scen))[0]
            with open(scen, "rb") as fh:
                doc = tomllib.load(fh)
            out = os.path.join(cls.tmp.name, name + ".h5")
            if "sweep" in doc:
                args = ["sweep", scen, "-q", "-o", out, "--set", f"simulation.t_end={SWEEP_T_END}"]
            else:
                args = ["run", scen, "-q", "-o", out, "--set", f"simulation.t_end={T_END}"]
            cls.results[name] = (out, synth.rollsim(*args, check=False))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_scenario_ran_or_refused_its_start(self):
        self.assertGreaterEqual(len(self.results), 20)
        for name, (out, p) in self.results.items():
            with self.subTest(scenario=name):
                # A start without a consistent mode (the Painleve rod) is a solver error, exit 3, and no file.
                self.assertIn(p.returncode, (0, 3), p.stderr)
                self.assertEqual(os.path.exists(out), p.returncode == 0)

    def test_every_column_has_a_role(self):
        known = {"time", "state", "rate", "output", "energy.kinetic", "energy.potential", "energy.total",
                 "energy.ledger", "work.input", "work.constraint", "dissipation", "contact.normal_force",
                 "contact.tangential_force", "contact.gap", "contact.gap_rate", "contact.slip_velocity", "mode",
                 "event.value", "event.kind"}
        for name, (out, p) in self.results.items():
            if p.returncode != 0:
                continue
            with self.subTest(scenario=name), h5py.File(out, "r") as f:
                for group in ("trajectory", "events"):
                    if group not in f:
                        continue
                    for n, ds in f[group].items():
                        role = ds.attrs.get("role")
                        role = role.decode() if isinstance(role, bytes) else role
                        self.assertIn(role, known, f"/{group}/{n}")
                        if role.startswith("contact."):
                            self.assertTrue(ds.attrs.get("contact"), f"/{group}/{n} names no contact")
                        if "ledger" in ds.attrs:
                            self.assertIn(int(ds.attrs["ledger"]), (-1, 1))

    def test_figure_states_the_drift_of_the_files_ledger(self):
        drawn = 0
        for name, (out, p) in self.results.items():
            if p.returncode != 0:
                continue
            with self.subTest(scenario=name):
                r = rollsim.load(out)
                fig = rollsim.plot.figures(r)[0]
                self.assertGreater(len(fig.rollsim_panels), 0)
                if r.sweep is not None:
                    continue  # a sweep's figure is its table's; no point keeps a trajectory here
                balance, column = ledger_from_file(out)
                if balance is None:
                    self.assertNotIn("energy drift", fig.rollsim_panels)
                    continue
                drawn += 1
                expected = float(np.max(np.abs(balance - balance[0])))
                ax = fig.axes[fig.rollsim_panels.index("energy drift")]
                self.assertEqual(ax.rollsim_drift, expected)
                # The legend's three significant digits.
                self.assertLessEqual(abs(stated_drift(ax) - expected), 5e-3 * expected + 1e-300)
                line = ax.get_lines()[0]
                np.testing.assert_array_equal(line.get_ydata(), balance - balance[0])
                # The run's own audit bounds the drift of the same balance over every step, the samples included.
                reported = r.summary.get("energy_drift_abs")
                if isinstance(reported, float):
                    self.assertLessEqual(expected, reported * (1 + 1e-9) + 1e-300)
        self.assertGreaterEqual(drawn, 15)


@unittest.skipUnless(os.access(synth.BINARY, os.X_OK), f"needs the built program {synth.BINARY}")
class SweepPoints(unittest.TestCase):
    def test_a_points_figure_states_the_drift_of_its_ledger(self):
        # The points of a sweep written with --trajectories carry the roles of a run's file.
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "edge.h5")
            synth.rollsim("sweep", os.path.join(SCENARIOS, "table_edge_time.toml"), "-q", "-o", out,
                          "--trajectories", "--set", "simulation.output_dt=0.01", "--set", "simulation.t_end=0.5")
            r = rollsim.load(out)
            for i in (0, r.sweep.nrows - 1):
                with self.subTest(point=i):
                    p = r.point(i)
                    self.assertEqual(p.trajectory.roles["theta1"], "state")
                    self.assertEqual(p.trajectory.contacts["normal_force"], "table")
                    fig = rollsim.plot.figures(p)[0]
                    balance, _ = ledger_from_file(out, f"points/{i:06d}/trajectory")
                    expected = float(np.max(np.abs(balance - balance[0])))
                    ax = fig.axes[fig.rollsim_panels.index("energy drift")]
                    self.assertEqual(ax.rollsim_drift, expected)
                    self.assertLessEqual(abs(stated_drift(ax) - expected), 5e-3 * expected + 1e-300)


@unittest.skipUnless(os.access(synth.BINARY, os.X_OK), f"needs the built program {synth.BINARY}")
class DampedDoublePendulum(unittest.TestCase):
    """The file's own ledger T + V + D is drawn; T + V alone loses what the dampers take."""

    def test_drawn_from_its_ledger_not_as_a_table(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "dp.h5")
            synth.rollsim("run", os.path.join(SCENARIOS, "double_pendulum.toml"), "-q", "-o", out)
            r = rollsim.load(out)
            fig = rollsim.plot.figures(r)[0]
            # Before, the angles named theta1 made it a tipping table: contact position, contact forces, friction
            # demand. Its roles have no contact.
            self.assertFalse([p for p in fig.rollsim_panels if "contact" in p or "friction" in p], fig.rollsim_panels)
            self.assertIn("states [rad]", fig.rollsim_panels)
            tr = r.trajectory
            self.assertEqual(tr.roles["dissipated_energy"], "dissipation")
            self.assertEqual(tr.ledger_signs, {"total_energy": 1, "dissipated_energy": 1})
            self.assertEqual(tr.with_role("energy.ledger"), ["energy_with_dissipated"])
            balance, column = ledger_from_file(out)
            self.assertEqual(column, "energy_with_dissipated")
            drift = float(np.max(np.abs(balance - balance[0])))
            ax = fig.axes[fig.rollsim_panels.index("energy drift")]
            self.assertEqual(ax.rollsim_drift, drift)
            # The dampers take joules over the run; the balance holds to integration error.
            e = np.asarray(tr["total_energy"], float)
            lost = float(np.max(np.abs(e - e[0])))
            self.assertGreater(lost, 1.0)
            self.assertLess(drift, 1e-6 * lost)
            self.assertLessEqual(abs(stated_drift(ax) - drift), 5e-3 * drift)
            # The ledger's own terms, T + V and D, give the same balance as its column.
            terms = np.asarray(tr["total_energy"], float) + np.asarray(tr["dissipated_energy"], float)
            np.testing.assert_allclose(terms, balance, rtol=0, atol=1e-12 * float(np.max(np.abs(balance))))


if __name__ == "__main__":
    unittest.main()
