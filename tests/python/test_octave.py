"""Octave reads the .mat files from tools/h5tomat with the HDF5 values and orientation.

Skipped when octave is not on PATH (tools/install-deps installs it).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import synth
import rollsim

HERE = os.path.dirname(os.path.abspath(__file__))
OCTAVE = shutil.which("octave-cli") or shutil.which("octave")
MATLAB_DIR = os.path.join(synth.TOOLS, "matlab")


def octave(code, cwd):
    return subprocess.run([OCTAVE, "--no-gui", "--quiet", "--no-window-system", "--norc", "--eval", code],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


def octave_dump(matfile, cwd):
    p = octave(f"addpath('{HERE}'); octave_dump_mat('{matfile}'); exit(0);", cwd)
    if p.returncode != 0:
        raise AssertionError(f"octave failed ({p.returncode}): {p.stderr}")
    leaves = {}
    for line in p.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) != 4:
            continue
        path, cls, size, payload = parts
        size = tuple(int(x) for x in size.split())
        if cls == "char":
            value = bytes.fromhex(payload)
        elif cls == "cell":
            value = None
        else:
            value = np.array([float(x) for x in payload.split(",") if x], dtype=float)
        leaves[path] = (cls, size, value)
    return leaves


@unittest.skipIf(OCTAVE is None, "octave is not installed")
class OctaveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.files = synth.write_all(cls.tmp.name)
        cls.dumps = {}
        for kind in ("table", "disk", "linear", "sweep_basin"):
            mat = os.path.join(cls.tmp.name, kind + ".mat")
            subprocess.run([sys.executable, os.path.join(synth.TOOLS, "h5tomat"), cls.files[kind], mat], check=True)
            cls.dumps[kind] = octave_dump(mat, cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assertText(self, leaf, want, where):
        cls, size, got = leaf
        self.assertEqual(cls, "char", where)
        raw = want.encode("utf-8")
        if len(raw) == len(want):
            self.assertEqual(got, raw, where)
        else:
            # Octave keeps text as UTF-8 bytes but sizes it by the character count stored in
            # the MAT file, so text with non-ASCII characters arrives cut short (MATLAB reads
            # it whole).  What does arrive must be the start of the text.
            self.assertEqual(got, raw[:len(want)], where)

    def assertNumbers(self, leaf, want, where):
        cls, size, got = leaf
        want = np.asarray(want)
        if want.ndim <= 1:
            self.assertEqual(size, (want.size, 1) if want.ndim == 1 else (1, 1), where)
        else:
            self.assertEqual(size, want.shape, where)
        # Octave prints column-major: equal to h5py [i, j] read in Fortran order.
        np.testing.assert_array_equal(got, want.astype(float).ravel(order="F"), err_msg=where)

    def check_table(self, dump, table, where):
        for name, want in table.items():
            path = f"{where}.{name.replace('.', '_')}"
            if isinstance(want, dict):
                self.check_table(dump, want, path)
            elif want.dtype.kind == "U":
                self.assertEqual(dump[path][:2], ("cell", (want.size, 1)), path)
                for i, s in enumerate(want):
                    self.assertText(dump[f"{path}{{{i + 1}}}"], str(s), path)
            else:
                self.assertIn(path, dump)
                self.assertNumbers(dump[path], want, path)

    def check_attrs(self, dump, attrs, where):
        for k, want in attrs.items():
            path = f"{where}.{k}"
            if isinstance(want, str):
                self.assertText(dump[path], want, path)
            else:
                self.assertNumbers(dump[path], want, path)

    def test_values_match_hdf5(self):
        for kind, dump in self.dumps.items():
            with self.subTest(kind=kind):
                r = rollsim.load(self.files[kind])
                for g in ("trajectory", "events", "linear", "sweep"):
                    table = getattr(r, g)
                    if table:
                        self.check_table(dump, table, g)
                    else:
                        self.assertEqual(dump[g][1], (0, 0), g)
                for g in ("summary", "solver", "provenance"):
                    if getattr(r, g):
                        self.check_attrs(dump, getattr(r, g), g)
                self.assertText(dump["scenario.resolved"], r.scenario_resolved, "scenario.resolved")

    def test_orientation_in_octave(self):
        dump = self.dumps["linear"]
        cls, size, a = dump["linear.A"]
        self.assertEqual(size, (3, 3))
        A = a.reshape((3, 3), order="F")
        np.testing.assert_array_equal(A, synth.LINEAR_A)
        # A*V = V*diag(lambda) with column j of V the eigenvector j, computed by Octave itself.
        p = octave("m = load('linear.mat'); L = m.linear; "
                   "V = L.eigenvectors_real + 1i*L.eigenvectors_imag; "
                   "lam = L.eigenvalues_real + 1i*L.eigenvalues_imag; "
                   "e = norm(L.A*V - V*diag(lam)); printf('%.3e\\n', e); exit(e > 1e-10);", self.tmp.name)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_matlab_loader_parses(self):
        # Octave 7 has no h5info/h5read, so only the argument checks of the loader run here.
        p = octave(f"addpath('{MATLAB_DIR}'); try, rollsim_load('{self.tmp.name}/none.h5'); "
                   "catch e, disp(e.identifier); end; exit(0);", self.tmp.name)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("rollsim:missing", p.stdout)


if __name__ == "__main__":
    unittest.main()
