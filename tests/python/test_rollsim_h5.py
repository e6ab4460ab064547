"""load() round-trips every dataset and attribute; incomplete and bad files are refused."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

import synth  # noqa: F401  (puts tools/python on sys.path)
import rollsim


def _plain(v):
    """An h5py value as the loader should present it."""
    if isinstance(v, (bytes, np.bytes_)):
        return bytes(v).decode()
    if isinstance(v, np.ndarray) and v.dtype.kind == "O":
        return np.array([s.decode() if isinstance(s, bytes) else s for s in v.ravel()], dtype=str)
    if isinstance(v, np.generic):
        return v.item()
    return v


class LoadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.files = synth.write_all(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assertSame(self, got, want, what):
        want = _plain(want)
        if isinstance(want, np.ndarray):
            got = np.asarray(got)
            self.assertEqual(got.shape, want.shape, what)
            if want.dtype.kind in "fc":
                np.testing.assert_array_equal(got, want, err_msg=what)
            else:
                self.assertEqual(got.tolist(), want.tolist(), what)
        else:
            self.assertEqual(got, want, what)
            self.assertEqual(type(got), type(want), what)

    def check_group(self, h5group, table, where):
        for name, obj in h5group.items():
            if isinstance(obj, h5py.Group):
                self.check_group(obj, table[name], f"{where}/{name}")
                continue
            data = obj.asstr()[()] if h5py.check_string_dtype(obj.dtype) else obj[()]
            self.assertSame(table[name], np.asarray(data, dtype=object) if h5py.check_string_dtype(obj.dtype) else data,
                            f"{where}/{name}")
            for k, v in obj.attrs.items():
                self.assertSame(table.dataset_attrs[name][k], v, f"{where}/{name} @{k}")
            if "unit" in obj.attrs:
                self.assertEqual(table.units[name], _plain(obj.attrs["unit"]))
            if "description" in obj.attrs:
                self.assertEqual(table.descriptions[name], _plain(obj.attrs["description"]))
        for k, v in h5group.attrs.items():
            self.assertSame(table.attrs[k], v, f"{where} @{k}")
        self.assertEqual(set(table.keys()), set(h5group.keys()), where)

    def test_round_trip_every_file(self):
        for kind, path in self.files.items():
            with self.subTest(kind=kind):
                r = rollsim.load(path, allow_incomplete=True)
                with h5py.File(path, "r") as f:
                    for k, v in f.attrs.items():
                        self.assertSame(r.provenance[k], v, f"{kind} root @{k}")
                    if "scenario" in f:
                        self.assertEqual(r.scenario, f["scenario"].attrs["toml"])
                        self.assertEqual(r.scenario_resolved, f["scenario"].attrs["resolved"])
                    for g in ("trajectory", "events", "linear", "sweep", "growth"):
                        if g in f:
                            self.check_group(f[g], getattr(r, g), g)
                        elif g in ("linear", "sweep", "growth"):
                            self.assertIsNone(getattr(r, g))
                        else:
                            self.assertEqual(len(getattr(r, g)), 0)
                    for g in ("summary", "solver"):
                        if g in f:
                            self.assertEqual(set(getattr(r, g)), set(f[g].attrs))
                            for k, v in f[g].attrs.items():
                                self.assertSame(getattr(r, g)[k], v, f"{g} @{k}")
                        else:
                            self.assertEqual(getattr(r, g), {})

    def test_scene_read_at_first_use(self):
        # /scene is read when `scene` is first asked for, not by load(): the same Table as reading the group then,
        # kept for later uses; None for a file without it and for a sweep point.
        import scene_fixtures
        from rollsim import h5 as h5mod
        path = os.path.join(self.tmp.name, "planar_scene.h5")
        scene_fixtures.write_planar(path)
        r = rollsim.load(path)
        self.assertIs(r._scene, h5mod._UNREAD)
        scene = r.scene
        with h5py.File(path, "r") as f:
            self.check_group(f["scene"], scene, "scene")
            for name in f["scene"]:
                self.check_group(f["scene"][name], scene[name], "scene/" + name)
        self.assertIs(r.scene, scene)
        self.assertIsNone(rollsim.load(self.files["table"]).scene)
        # Asked for after the file is gone: a RollsimFileError that names the file.
        gone = rollsim.load(path)
        os.remove(path)
        with self.assertRaises(rollsim.RollsimFileError) as cm:
            gone.scene
        self.assertIn(path, str(cm.exception))

    def test_strings_are_str(self):
        r = rollsim.load(self.files["table"])
        self.assertEqual(r.provenance["git_hash"], "0123456789ab")  # fixed-length bytes in the file
        self.assertEqual(r.title, "Tipping table, µ = 0.3")
        self.assertEqual(r.model, "tipping_table")
        self.assertTrue(all(type(k) in (str, np.str_) for k in r.events["kind"]))
        self.assertEqual(list(r.events["kind"]), ["slip_onset", "table_edge"])
        self.assertIsInstance(r.summary["termination"], str)
        self.assertIsInstance(r.solver["n_steps"], int)
        self.assertEqual(r.units["theta1"], "rad")
        self.assertEqual(r.trajectory.units["omega2"], "rad/s")
        self.assertEqual(r.descriptions["theta1"], "the theta1 signal")
        self.assertEqual(r.param("table.mu"), 0.3)
        self.assertEqual(r.resolved["model"], "tipping_table")
        self.assertIn("µ = 0.3", r.scenario)
        self.assertTrue(r.completed)

    def test_attribute_access(self):
        r = rollsim.load(self.files["disk"])
        np.testing.assert_array_equal(r.trajectory.x, r.trajectory["x"])
        self.assertEqual(r.trajectory["mode"].dtype, np.int8)
        self.assertEqual(r.summary["classification"], "A")
        self.assertEqual(r.trajectory.nrows, 600)

    def test_linear_orientation(self):
        r = rollsim.load(self.files["linear"])
        lin = r.linear
        np.testing.assert_array_equal(lin["A"], synth.LINEAR_A)
        self.assertEqual(lin["B"].shape, (3, 1))
        self.assertEqual(lin["C"].shape, (1, 3))
        lam = lin["eigenvalues_real"] + 1j * lin["eigenvalues_imag"]
        V = lin["eigenvectors_real"] + 1j * lin["eigenvectors_imag"]
        for j in range(len(lam)):  # column j is eigenvector j
            np.testing.assert_allclose(lin["A"] @ V[:, j], lam[j] * V[:, j], atol=1e-12)
        fr = lin["frequency_response"]
        self.assertEqual(fr.units["magnitude_db"], "dB")
        self.assertEqual(fr["frequency_hz"].shape, fr["phase_deg"].shape)
        self.assertEqual(lin.attrs["inputs"], "force")

    def test_sweep_keys(self):
        r = rollsim.load(self.files["sweep_basin"])
        self.assertEqual(r.swept_keys, ["initial.x", "initial.y"])
        self.assertEqual(set(r.sweep["classification"]), {"A", "B", "undetermined"})
        r = rollsim.load(self.files["sweep_study"])
        self.assertEqual(r.swept_keys, ["table.mu", "initial.theta1"])

    def test_incomplete_refused(self):
        path = self.files["incomplete"]
        with self.assertRaises(rollsim.IncompleteFileError) as cm:
            rollsim.load(path)
        msg = str(cm.exception)
        self.assertIn(path, msg)
        self.assertIn("running: t = 0.73", msg)
        self.assertEqual(cm.exception.status, "running: t = 0.73")
        r = rollsim.load(path, allow_incomplete=True)
        self.assertFalse(r.completed)
        self.assertEqual(r.status, "running: t = 0.73")
        self.assertEqual(len(r.trajectory["time"]), 400)

    def test_missing_completed_attribute_is_incomplete(self):
        path = os.path.join(self.tmp.name, "nocompleted.h5")
        synth.write_table(path)
        with h5py.File(path, "a") as f:
            del f.attrs["completed"]
        with self.assertRaises(rollsim.IncompleteFileError):
            rollsim.load(path)

    def test_missing_and_bad_files(self):
        with self.assertRaises(rollsim.RollsimFileError):
            rollsim.load(os.path.join(self.tmp.name, "does_not_exist.h5"))
        junk = os.path.join(self.tmp.name, "junk.h5")
        with open(junk, "w") as f:
            f.write("not hdf5\n")
        with self.assertRaises(rollsim.RollsimFileError):
            rollsim.load(junk)
        other = os.path.join(self.tmp.name, "other.h5")
        with h5py.File(other, "w") as f:
            f.attrs["format"] = "something_else"
        with self.assertRaises(rollsim.RollsimFileError) as cm:
            rollsim.load(other)
        self.assertIn("not a rollsim file", str(cm.exception))

    def test_minimal_file_and_empty_events(self):
        path = os.path.join(self.tmp.name, "minimal.h5")
        with h5py.File(path, "w") as f:
            f.attrs["format"] = "rollsim"
            f.attrs["completed"] = 1
            f.create_group("trajectory").create_dataset("time", data=np.zeros(0))
            e = f.create_group("events")
            e.create_dataset("time", data=np.zeros(0))
            e.create_dataset("kind", shape=(0,), dtype=synth.STR)
        r = rollsim.load(path)
        self.assertEqual(r.events["kind"].shape, (0,))
        self.assertEqual(r.summary, {})
        self.assertEqual(r.solver, {})
        self.assertIsNone(r.linear)
        self.assertEqual(r.scenario, "")
        self.assertEqual(r.model, "")


class OrderTest(unittest.TestCase):
    def test_columns_come_in_the_order_written(self):
        # A file written with its creation order tracked (as rollsim writes every group) and names that sort
        # otherwise: the Table lists them in the order written, and the sweep's columns attribute still decides.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "order.h5")
            with h5py.File(path, "w", track_order=True) as f:
                f.attrs["format"] = "rollsim"
                f.attrs["completed"] = 1
                g = f.create_group("trajectory", track_order=True)
                for name in ("time", "zeta", "alpha", "mid"):
                    g.create_dataset(name, data=np.arange(3.0))
                sw = f.create_group("sweep", track_order=True)
                for name in ("b", "a", "status"):
                    sw.create_dataset(name, data=np.arange(2.0))
                sw.attrs["columns"] = "status\nb\na"
            r = rollsim.load(path)
            self.assertEqual(list(r.trajectory), ["time", "zeta", "alpha", "mid"])
            self.assertEqual(r.trajectory.order, ["time", "zeta", "alpha", "mid"])
            self.assertEqual(list(r.sweep), ["status", "b", "a"])


@unittest.skipUnless(os.access(synth.BINARY, os.X_OK), f"needs the built program {synth.BINARY}")
class ProgramFileTest(unittest.TestCase):
    """A file the program writes: the shipped table run (a few milliseconds), for each test."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.path = os.path.join(tmp.name, "table.h5")
        synth.rollsim("run", os.path.join(synth.REPO, "scenarios", "tipping_table.toml"), "-q", "-o", self.path)

    def test_trajectory_columns_in_the_documented_order(self):
        # README.md, "Result files (HDF5)", lists the table's /trajectory columns in the order the writer writes them.
        with open(os.path.join(synth.REPO, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        m = re.search(r"\n    /trajectory/ +(.*)\n +(.*)\n", readme)
        self.assertIsNotNone(m)
        documented = [c.strip() for c in (m[1] + " " + m[2]).split(",")]
        self.assertEqual(list(rollsim.load(self.path).trajectory), documented)

    def test_module_runs_as_a_script_without_warnings(self):
        # docs/python.md: `python3 -m rollsim.h5 FILE.h5` prints a short overview of a file.
        env = dict(os.environ, PYTHONPATH=synth.PACKAGE)
        p = subprocess.run([sys.executable, "-m", "rollsim.h5", self.path], capture_output=True, text=True,
                           env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        self.assertTrue(p.stdout.startswith(f"{self.path}: model='tipping_table'"), p.stdout)
        self.assertIn("  trajectory: time[", p.stdout)


if __name__ == "__main__":
    unittest.main()
