"""h5py round trip of a tipping-table result file: every dataset and attribute rollsim writes is read back
and checked against independent answers (the scenario text on disk, the energies recomputed with numpy from
the stored states with the formulas of (1.1)-(1.2), the grid, the units)."""
import os
import subprocess
import tempfile
import unittest

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("ROLLSIM_BINARY", os.path.join(ROOT, "build", "rollsim"))
SCENARIO = os.path.join(ROOT, "scenarios", "tipping_table.toml")


def s(v):
    return v.decode() if isinstance(v, bytes) else v


class TableRoundTrip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "tt.h5")
        cls.proc = subprocess.run(
            [BINARY, "run", SCENARIO, "-o", cls.out, "--set", "events.lift_off=record", "--set", "simulation.output_dt=0.01"],
            capture_output=True, text=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_and_file(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        self.assertTrue(os.path.exists(self.out))
        self.assertFalse(os.path.exists(self.out + ".tmp"))

    def test_root_attributes(self):
        with h5py.File(self.out, "r") as f:
            a = f.attrs
            self.assertEqual(s(a["format"]), "rollsim")
            self.assertEqual(int(a["format_version"]), 1)
            self.assertEqual(int(a["completed"]), 1)
            self.assertEqual(s(a["status"]), "ok")
            self.assertEqual(s(a["model"]), "tipping_table")
            for key in ("software_version", "git_hash", "command_line", "created_utc", "title"):
                self.assertTrue(len(s(a[key])) > 0, key)
            self.assertIn("--set events.lift_off=record", s(a["command_line"]))

    def test_scenario_text_is_exact(self):
        with open(SCENARIO) as fh:
            text = fh.read()
        with h5py.File(self.out, "r") as f:
            self.assertEqual(s(f["scenario"].attrs["toml"]), text)
            resolved = s(f["scenario"].attrs["resolved"])
            self.assertIn('events.lift_off = "record"', resolved)
            self.assertIn("simulation.output_dt = 0.01", resolved)
            self.assertIn("parameters.wheel_mass = 1", resolved)

    def test_trajectory(self):
        with h5py.File(self.out, "r") as f:
            g = f["trajectory"]
            names = {"time", "theta1", "theta2", "omega1", "omega2", "contact_position", "normal_force",
                     "tangential_force", "kinetic_energy", "potential_energy", "total_energy"}
            self.assertTrue(names <= set(g.keys()), set(g.keys()))
            n = g["time"].shape[0]
            units = {"time": "s", "theta1": "rad", "omega2": "rad/s", "contact_position": "m", "normal_force": "N",
                     "total_energy": "J"}
            for name in g:
                self.assertEqual(g[name].ndim, 1, name)
                self.assertEqual(g[name].shape[0], n, name)
                self.assertIn("unit", g[name].attrs, name)
                self.assertIn("description", g[name].attrs, name)
            for name, unit in units.items():
                self.assertEqual(s(g[name].attrs["unit"]), unit)
            t = g["time"][:]
            self.assertTrue(np.all(np.diff(t) >= 0))
            np.testing.assert_allclose(t[:150], 0.01 * np.arange(150), rtol=0, atol=1e-12)
            # Energies recomputed from the stored states with (1.1)-(1.2), benchmark values.
            m, r, l, gr = 1.0, 0.25, 1.0, 9.81
            t1, t2, w1, w2 = (g[k][:] for k in ("theta1", "theta2", "omega1", "omega2"))
            T = l * l * m * w1 ** 2 / 24 + m * r * r * w2 ** 2 / 4 + 0.5 * m * r * r * ((t2 - t1) ** 2 * w1 ** 2 + w2 ** 2)
            V = m * gr * r * ((t1 - t2) * np.sin(t1) + np.cos(t1))
            np.testing.assert_allclose(g["kinetic_energy"][:], T, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(g["potential_energy"][:], V, rtol=1e-12)
            np.testing.assert_allclose(g["total_energy"][:], T + V, rtol=1e-12)
            np.testing.assert_allclose(g["contact_position"][:], r * (t1 - t2), rtol=1e-12, atol=1e-15)
            self.assertLess(np.max(np.abs(T + V - (T + V)[0])) / (T + V)[0], 1e-8)

    def test_events_and_summary(self):
        with h5py.File(self.out, "r") as f:
            e = f["events"]
            kinds = [s(k) for k in e["kind"][:]]
            self.assertEqual(kinds, ["lift_off", "table_edge"])
            for k in ("time", "mode_before", "mode_after", "theta1", "theta2", "omega1", "omega2"):
                self.assertEqual(e[k].shape, (2,), k)
            sm = f["summary"].attrs
            self.assertEqual(s(sm["termination"]), "table_edge")
            self.assertAlmostEqual(float(sm["t_final"]), float(e["time"][1]), places=15)
            self.assertAlmostEqual(float(sm["t_final"]), float(f["trajectory/time"][-1]), places=15)
            self.assertAlmostEqual(float(sm["t_edge"]), float(e["time"][1]), places=15)
            # |s| = l/2 at the edge event, from the event's own states.
            self.assertAlmostEqual(abs(0.25 * (e["theta1"][1] - e["theta2"][1])), 0.5, places=11)
            n = f["trajectory/normal_force"][:]
            self.assertAlmostEqual(float(sm["normal_force_min"]), float(n.min()), delta=1e-3)
            self.assertLess(float(sm["energy_drift_rel"]), 1e-8)
            for k in ("energy_drift_abs", "energy_drift_rel", "friction_demand_max", "n_events", "n_samples"):
                self.assertIn(k, sm)
            sv = f["solver"].attrs
            self.assertEqual(s(sv["method"]), "auto: dop853")
            self.assertGreater(int(sv["n_steps"]), 10)
            self.assertGreater(int(sv["n_rhs_evals"]), int(sv["n_steps"]))
            self.assertAlmostEqual(float(sv["rtol"]), 1e-10)
            # The terminal summary printed the same figures.
            self.assertIn("termination      table_edge", self.proc.stdout)


class ModeNames(unittest.TestCase):
    """/trajectory/mode names every mode the run was in (attributes mode_name_M), so that a reader labels the modes
    as the program does: for the Coulomb disk, mode 0 is sliding on the switching plane z = 0, which is rolling,
    and the modes +1 and -1 are sliding with z > 0 and z < 0 (the README's Filippov section)."""

    def run_file(self, scenario, *sets):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        out = os.path.join(tmp.name, "r.h5")
        args = [BINARY, "run", os.path.join(ROOT, "scenarios", scenario), "-o", out, "-q"]
        for kv in sets:
            args += ["--set", kv]
        proc = subprocess.run(args, capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return out

    def names(self, f):
        attrs = f["trajectory/mode"].attrs
        return {int(k[len("mode_name_"):]): s(v) for k, v in attrs.items() if k.startswith("mode_name_")}

    def test_the_disk_names_each_mode_it_was_in(self):
        for method in ("exact", "dop853"):
            with self.subTest(method=method):
                out = self.run_file("disk_type_b.toml", f"solver.method={method}", "simulation.t_end=20")
                with h5py.File(out, "r") as f:
                    names = self.names(f)
                    seen = set(np.unique(f["trajectory/mode"][:]).tolist())
                    seen |= set(f["events/mode_before"][:].tolist()) | set(f["events/mode_after"][:].tolist())
                    self.assertEqual(set(names), seen)
                    self.assertEqual(seen, {-1, 0, 1})  # a type B orbit slides both ways and rolls
                    self.assertIn("rolling", names[0])
                    self.assertIn("sliding, z > 0", names[1])
                    self.assertIn("sliding, z < 0", names[-1])

    def test_contacts_name_their_modes_by_symbols(self):
        # A ball dropped on a floor: open in flight, closed after capture (the contact engine's symbols).
        out = self.run_file("bouncing_ball.toml")
        with h5py.File(out, "r") as f:
            names = self.names(f)
            seen = set(np.unique(f["trajectory/mode"][:]).tolist())
            seen |= set(f["events/mode_before"][:].tolist()) | set(f["events/mode_after"][:].tolist())
            self.assertEqual(set(names), seen)
            self.assertGreaterEqual(len(names), 2)
            self.assertEqual(len(set(names.values())), len(names), names)  # distinct modes, distinct names


if __name__ == "__main__":
    unittest.main()
