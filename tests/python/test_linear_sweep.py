"""rollsim linearize --sweep: the eigenvalues of the benchmark bicycle against its forward speed (Meijaard et al.
2007, Fig. 3), checked against the paper's Table 2 (the eigenvalues at v = 0, 1, ..., 10 m/s to 14 decimals) and
its weave and capsize speeds; the figure tools/plot draws from the file; and the command's input errors."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

ROOT = os.environ.get("ROLLSIM_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BINARY = os.environ.get("ROLLSIM_BINARY", os.path.join(ROOT, "build", "rollsim"))
BICYCLE = os.path.join(ROOT, "scenarios", "bicycle_meijaard.toml")
STRAIGHT = ["--set", "initial_rates.phi=0"]  # upright straight running: no roll rate

# Meijaard, Papadopoulos, Ruina and Schwab 2007, Table 2: v, the weave pair (re +- im i), the capsize and the
# caster roots.
TABLE2 = [
    (1, 3.52696170990070, 0.80774027519930, -3.13423125066578, -7.11008014637442),
    (2, 2.68234517512745, 1.68066296590675, -3.07158645641514, -8.67387984831735),
    (3, 1.70675605663975, 2.31582447384325, -2.63366137253667, -10.35101467245920),
    (4, 0.41325331521125, 3.07910818603206, -1.42944427361326, -12.15861426576450),
    (5, -0.77534188219585, 4.46486771378823, -0.32286642900409, -14.07838969279820),
    (6, -1.52644486584142, 5.87673060598709, -0.00406690076970, -16.08537123098030),
    (7, -2.13875644258362, 7.19525913329805, 0.10268170574766, -18.15788466125262),
    (8, -2.69348683581097, 8.46037971396931, 0.14327879765713, -20.27940894394569),
    (9, -3.21675402252485, 9.69377351531791, 0.15790184030917, -22.43788559040858),
    (10, -3.72016840437287, 10.90681139476287, 0.16105338653172, -24.62459635017404),
]
V0_ROOTS = [3.13164324790656, -3.13164324790656, 5.53094371765393, -5.53094371765393]  # v = 0: all real
WEAVE, CAPSIZE = 4.29238253634111, 6.02426201538837  # the self-stable range, the same paper


def bicycle_text():
    with open(BICYCLE) as fh:
        text = fh.read()
    return text.split("\n[sweep]")[0]  # the shipped sweep left out: each case writes its own


class LinearSweep(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def scenario(self, sweep):
        path = os.path.join(self.tmp.name, "bicycle_sweep.toml")
        with open(path, "w") as fh:
            fh.write(bicycle_text() + "\n[sweep]\n" + sweep + "\n")
        return path

    def run_sweep(self, sweep, *extra):
        out = os.path.join(self.tmp.name, "speeds.h5")
        proc = subprocess.run([BINARY, "linearize", self.scenario(sweep), "--sweep", "-o", out] + STRAIGHT
                              + list(extra), capture_output=True, text=True, timeout=600)
        return proc, out

    @staticmethod
    def changes(stdout):
        return [(m.group(1), float(m.group(2)), float(m.group(3)), float(m.group(4))) for m in re.finditer(
            r"(unstable -> stable|stable -> unstable) near parameters\.v = (\S+) \(between (\S+) and (\S+)\)", stdout)]

    def test_table_2_and_the_self_stable_range(self):
        proc, out = self.run_sweep('"parameters.v" = { from = 0, to = 10, n = 11 }')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with h5py.File(out, "r") as f:
            g = f["linear_sweep"]
            self.assertEqual(g.attrs["key"], "parameters.v")
            v = g["value"][:]
            np.testing.assert_array_equal(v, np.arange(11.0))
            roots = g["eigenvalues_real"][:] + 1j * g["eigenvalues_imag"][:]
            self.assertEqual(roots.shape, (11, 4))
            worst = 0.0
            for i, row in enumerate(roots):
                want = np.array(V0_ROOTS, dtype=complex) if i == 0 else np.array(
                    [complex(TABLE2[i - 1][1], TABLE2[i - 1][2]), complex(TABLE2[i - 1][1], -TABLE2[i - 1][2]),
                     TABLE2[i - 1][3], TABLE2[i - 1][4]])
                for w in want:
                    worst = max(worst, np.abs(row - w).min())
            self.assertLess(worst, 1e-10)  # Table 2's 14 decimals, with the round-off of a 4 x 4 of norm ~400
            unstable = g["n_unstable"][:]
            # Stable exactly where every root of Table 2 has a negative real part: v = 5 and 6.
            np.testing.assert_array_equal(np.flatnonzero(unstable == 0), [5, 6])
            self.assertAlmostEqual(float(g["max_real_part"][4]), TABLE2[3][1], places=10)
        changes = self.changes(proc.stdout)
        self.assertEqual([(c[0], c[2], c[3]) for c in changes],
                         [("unstable -> stable", 4.0, 5.0), ("stable -> unstable", 6.0, 7.0)], proc.stdout)

    def test_weave_and_capsize_speeds_on_a_fine_grid(self):
        # Around each speed, steps of 0.01 m/s: the largest real part interpolated linearly between two points
        # errs by about f'' h^2 / 8, well under 1e-4 m/s here.
        for sweep, speed in (('"parameters.v" = { from = 4.28, to = 4.30, n = 3 }', WEAVE),
                             ('"parameters.v" = { from = 6.01, to = 6.03, n = 3 }', CAPSIZE)):
            with self.subTest(speed=speed):
                proc, _ = self.run_sweep(sweep)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                changes = self.changes(proc.stdout)
                self.assertEqual(len(changes), 1, proc.stdout)
                self.assertLess(abs(changes[0][1] - speed), 1e-4, proc.stdout)

    def test_the_figure_of_eigenvalues_against_speed(self):
        if os.environ.get("ROLLSIM_SANITIZED"):
            self.skipTest("the figure is the Python tool's: it is drawn in the release suite")
        proc, out = self.run_sweep('"parameters.v" = { from = 0, to = 10, n = 41 }')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        sys.path.insert(0, os.path.join(ROOT, "tools", "python"))
        from rollsim import h5 as rh5, plot
        r = rh5.load(out)
        names = [name for name, _ in plot.views(r)]
        self.assertEqual(names, ["linear_sweep"])
        png = os.path.join(self.tmp.name, "speeds.png")
        done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "plot"), out, "-o", png],
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertGreater(os.path.getsize(png), 10000)

    def test_a_summary_list_is_named_as_ignored(self):
        # `summary` lists a run's summary items, which a linearisation does not have: said on stderr, not refused.
        proc, out = self.run_sweep('summary = ["t_final"]\n"parameters.v" = [4.0, 5.0]')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("summary is ignored by linearize --sweep", proc.stderr)
        self.assertIn("bicycle_sweep.toml:", proc.stderr)  # where the list is
        with h5py.File(out, "r") as f:
            self.assertEqual(f["linear_sweep"]["eigenvalues_real"].shape[0], 2)
        proc, _ = self.run_sweep('"parameters.v" = [4.0, 5.0]')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("summary", proc.stderr)

    def test_bad_input(self):
        out = os.path.join(self.tmp.name, "never.h5")
        # Two keys: a grid of linearisations has no single axis to draw the eigenvalues against.
        two = self.scenario('"parameters.v" = [4.0, 5.0]\n"parameters.rR" = [0.3, 0.35]')
        proc = subprocess.run([BINARY, "linearize", two, "--sweep", "-o", out] + STRAIGHT, capture_output=True,
                              text=True)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("bicycle_sweep.toml:", proc.stderr)
        self.assertIn("must sweep one numeric key", proc.stderr)
        self.assertFalse(os.path.exists(out))
        # --sweep and --iftomm do not go together (one IFToMM file holds one point's eigenvalues).
        one = self.scenario('"parameters.v" = [4.0, 5.0]')
        proc = subprocess.run([BINARY, "linearize", one, "--sweep", "--iftomm", out] + STRAIGHT,
                              capture_output=True, text=True)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("excludes", proc.stderr)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
