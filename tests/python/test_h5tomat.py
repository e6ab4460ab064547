"""tools/h5tomat writes a .mat file that scipy.io.loadmat reads back with equal values."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import scipy.io

import synth
import rollsim

H5TOMAT = os.path.join(synth.TOOLS, "h5tomat")


def convert(src, dst, *extra):
    return subprocess.run([sys.executable, H5TOMAT, src, dst, *extra], capture_output=True, text=True, timeout=120)


def field(name):
    return name.replace(".", "_")


class H5ToMatTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.files = synth.write_all(cls.tmp.name)
        cls.mats = {}
        for kind, path in cls.files.items():
            if kind == "incomplete":
                continue
            out = os.path.join(cls.tmp.name, kind + ".mat")
            p = convert(path, out)
            if p.returncode != 0:
                raise RuntimeError(p.stderr)
            cls.mats[kind] = out

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def compare_table(self, table, mat_simple, mat_raw, where):
        for name, want in table.items():
            key = field(name)
            if isinstance(want, dict):
                self.compare_table(want, mat_simple[key], mat_raw[key][0, 0], f"{where}.{key}")
                continue
            got = mat_simple[key]
            raw = mat_raw[key]
            if want.dtype.kind == "U":
                self.assertEqual(raw.dtype, object, f"{where}.{key} should be a cell array")
                self.assertEqual(raw.shape, (want.size, 1), f"{where}.{key}")
                self.assertEqual([str(s) for s in np.atleast_1d(got)], want.tolist(), f"{where}.{key}")
            elif want.ndim == 1:
                self.assertEqual(raw.shape, (want.size, 1), f"{where}.{key} should be a column")
                np.testing.assert_array_equal(raw[:, 0], want, err_msg=f"{where}.{key}")
                self.assertEqual(raw.dtype, want.dtype, f"{where}.{key}")
            else:
                self.assertEqual(raw.shape, want.shape, f"{where}.{key}: 2-D keeps [i, j]")
                np.testing.assert_array_equal(raw, want, err_msg=f"{where}.{key}")

    def compare_attrs(self, attrs, mat_simple, where):
        for k, want in attrs.items():
            got = mat_simple[field(k)]
            if isinstance(want, str):
                self.assertEqual(got, want, f"{where}.{k}")
            else:
                self.assertEqual(np.asarray(got).item(), want, f"{where}.{k}")

    def test_values_round_trip(self):
        for kind, mat in self.mats.items():
            with self.subTest(kind=kind):
                r = rollsim.load(self.files[kind])
                simple = scipy.io.loadmat(mat, simplify_cells=True)
                raw = scipy.io.loadmat(mat)
                for g in ("trajectory", "events", "linear", "sweep", "growth"):
                    table = getattr(r, g)
                    if table:
                        self.compare_table(table, simple[g], raw[g][0, 0], g)
                    else:
                        self.assertEqual(raw[g].size, 0, f"{g} should be []")
                for g in ("summary", "solver", "provenance"):
                    attrs = getattr(r, g)
                    if attrs:
                        self.compare_attrs(attrs, simple[g], g)
                    else:
                        self.assertEqual(raw[g].size, 0)
                for key, want in (("toml", r.scenario), ("resolved", r.scenario_resolved)):
                    got = simple["scenario"][key]
                    if want == "":  # MATLAB has no empty string distinct from an empty char array
                        self.assertEqual(np.size(got), 0)
                    else:
                        self.assertEqual(got, want)
                self.assertEqual(simple["meta"]["format_version"], 1)
                self.assertEqual(simple["meta"]["source_file"], os.path.abspath(self.files[kind]))

    def test_units(self):
        simple = scipy.io.loadmat(self.mats["table"], simplify_cells=True)
        self.assertEqual(simple["units"]["trajectory"]["theta1"], "rad")
        self.assertEqual(simple["descriptions"]["trajectory"]["omega1"], "the omega1 signal")
        # The signal roles: what each column is, and how the energy ledger is formed.
        self.assertEqual(simple["roles"]["trajectory"]["omega1"], "rate")
        self.assertEqual(simple["contacts"]["trajectory"]["normal_force"], "table")
        self.assertEqual(simple["ledger"]["trajectory"]["total_energy"], 1)
        simple = scipy.io.loadmat(self.mats["linear"], simplify_cells=True)
        self.assertEqual(simple["units"]["linear"]["frequency_response"]["magnitude_db"], "dB")

    def test_matrix_orientation(self):
        raw = scipy.io.loadmat(self.mats["linear"])
        lin = raw["linear"][0, 0]
        A = lin["A"]
        np.testing.assert_array_equal(A, synth.LINEAR_A)
        V = lin["eigenvectors_real"] + 1j * lin["eigenvectors_imag"]
        lam = lin["eigenvalues_real"][:, 0] + 1j * lin["eigenvalues_imag"][:, 0]
        np.testing.assert_allclose(A @ V, V @ np.diag(lam), atol=1e-12)
        self.assertEqual(lin["B"].shape, (3, 1))
        self.assertEqual(lin["C"].shape, (1, 3))

    def test_renamed_sweep_columns(self):
        simple = scipy.io.loadmat(self.mats["sweep_basin"], simplify_cells=True)
        self.assertIn("initial_x", simple["sweep"])
        renamed = [list(row) for row in simple["meta"]["renamed"]]
        self.assertIn(["sweep.initial.x", "sweep.initial_x"], renamed)
        self.assertIn(["sweep.initial.y", "sweep.initial_y"], renamed)

    def test_incomplete_refused(self):
        out = os.path.join(self.tmp.name, "incomplete.mat")
        p = convert(self.files["incomplete"], out)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--allow-incomplete", p.stderr)
        self.assertFalse(os.path.exists(out))
        p = convert(self.files["incomplete"], out, "--allow-incomplete")
        self.assertEqual(p.returncode, 0, p.stderr)
        simple = scipy.io.loadmat(out, simplify_cells=True)
        self.assertEqual(simple["provenance"]["completed"], 0)

    def test_success_prints_one_line_and_quiet_nothing(self):
        # tools/h5tomat says what it wrote: the file and the variables that hold data (a table run has no /linear:
        # its variable is [] and is not named); -q prints nothing, as `rollsim run -q` does.
        out = os.path.join(self.tmp.name, "said.mat")
        p = convert(self.files["table"], out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        lines = p.stdout.splitlines()
        self.assertEqual(len(lines), 1, p.stdout)
        m = re.fullmatch(r"wrote (.+) \((.+)\)", lines[0])
        self.assertIsNotNone(m, lines[0])
        self.assertEqual(m[1], out)
        named = m[2].split(", ")
        simple = scipy.io.loadmat(out, simplify_cells=True)
        for var in ("trajectory", "events", "summary", "solver"):
            self.assertIn(var, named)
        self.assertNotIn("linear", named)
        self.assertEqual(np.size(simple["linear"]), 0)
        p = convert(self.files["table"], out, "-q")
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))

    def test_missing_file(self):
        p = convert(os.path.join(self.tmp.name, "nope.h5"), os.path.join(self.tmp.name, "nope.mat"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such file", p.stderr)


if __name__ == "__main__":
    unittest.main()
