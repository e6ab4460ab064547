"""End-to-end tests of `rollsim sweep` through its result file, read with h5py:
- the /sweep datasets of --threads 1 and --threads 2 runs are identical byte for byte;
- every row equals what `rollsim run` writes for the same point (the run's /summary attributes and the last
  trajectory sample), an independent path through the program;
- --trajectories writes /points/NNNNNN/trajectory whose last sample is the row's final state;
- a bad [sweep] section exits with 2 and leaves no file.
With ROLLSIM_MPI_TEST=1, also: `mpirun -np 2` gives the same /sweep table as one process."""
import os
import shutil
import subprocess
import tempfile
import unittest

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("ROLLSIM_BINARY", os.path.join(ROOT, "build", "rollsim"))

SCENARIO = """model = "tipping_table"
[parameters]
wheel_mass = 1.0
wheel_radius = 0.25
table_length = 1.0
[initial]
theta1 = 0.01
[simulation]
t_end = 1.6
output_dt = 0.05
[solver]
rtol = 1e-9
[events]
lift_off = "record"
[sweep]
"initial.theta1" = { from = 0.004, to = 0.04, n = 4, spacing = "log" }
"parameters.wheel_inertia" = [0.02, 0.03125]
"initial.theta2" = [0.0, -3.0]   # -3.0: beyond the table edge, an input_error row
"""


def s(v):
    return v.decode() if isinstance(v, bytes) else v


def read_table(path):
    with h5py.File(path, "r") as f:
        g = f["sweep"]
        return {k: g[k][()] for k in g.keys()}, dict(f.attrs)


def same_bytes(test, a, b):
    test.assertEqual(sorted(a), sorted(b))
    for k in a:
        x, y = a[k], b[k]
        test.assertEqual(x.dtype, y.dtype, k)
        if x.dtype.kind == "O":
            test.assertEqual([s(v) for v in x], [s(v) for v in y], k)
        else:
            test.assertEqual(x.tobytes(), y.tobytes(), k)


class Sweep(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="rollsim-sweep-")
        cls.scenario = os.path.join(cls.tmp, "sw.toml")
        with open(cls.scenario, "w") as f:
            f.write(SCENARIO)
        cls.out = {}
        for threads in (1, 2):
            out = os.path.join(cls.tmp, f"t{threads}.h5")
            p = subprocess.run([BINARY, "sweep", cls.scenario, "-o", out, "--threads", str(threads), "-q"],
                               capture_output=True, text=True)
            assert p.returncode == 0, p.stderr
            cls.out[threads] = out

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_thread_count_bit_identity(self):
        a, attrs1 = read_table(self.out[1])
        b, attrs2 = read_table(self.out[2])
        same_bytes(self, a, b)
        self.assertEqual(int(attrs1["threads"]), 1)
        self.assertEqual(int(attrs2["threads"]), 2)

    def test_layout_and_order(self):
        t, attrs = read_table(self.out[1])
        self.assertEqual(int(attrs["completed"]), 1)
        self.assertEqual(s(attrs["status"]), "ok")
        self.assertEqual(int(attrs["n_points"]), 16)
        self.assertEqual(int(attrs["n_failed"]), 8)
        self.assertIn("sweep", s(attrs["command_line"]))
        n = 16
        for k, v in t.items():
            self.assertEqual(v.shape, (n,), k)
        th = np.geomspace(0.004, 0.04, 4)
        np.testing.assert_allclose(t["initial.theta1"], np.repeat(th, 4), rtol=1e-15)
        np.testing.assert_array_equal(t["parameters.wheel_inertia"], np.tile(np.repeat([0.02, 0.03125], 2), 4))
        np.testing.assert_array_equal(t["initial.theta2"], np.tile([0.0, -3.0], 8))
        status = [s(v) for v in t["status"]]
        for i in range(n):
            if t["initial.theta2"][i] == 0.0:
                self.assertEqual(status[i], "ok")
            else:
                self.assertTrue(status[i].startswith("input_error: "), status[i])
                self.assertIn("beyond the table edge", status[i])
                self.assertTrue(np.isnan(t["t_final"][i]))
        for col in ("termination", "message", "t_final", "n_events", "final_theta1", "final_omega2",
                    "energy_drift_rel", "t_edge", "t_lift_off", "normal_force_min"):
            self.assertIn(col, t)
        with h5py.File(self.out[1], "r") as f:
            self.assertEqual(s(f["sweep"].attrs["mode"]), "grid")
            self.assertEqual(s(f["sweep/initial.theta1"].attrs["unit"]), "rad")
            self.assertIn("[sweep]", s(f["scenario"].attrs["toml"]))

    def test_rows_equal_single_runs(self):
        t, _ = read_table(self.out[2])
        for i in (0, 6, 14):
            sets = ["initial.theta1=%.17g" % t["initial.theta1"][i],
                    "parameters.wheel_inertia=%.17g" % t["parameters.wheel_inertia"][i], "initial.theta2=0"]
            out = os.path.join(self.tmp, f"run{i}.h5")
            args = [BINARY, "run", self.scenario, "-o", out, "-q"]
            for x in sets:
                args += ["--set", x]
            p = subprocess.run(args, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            with h5py.File(out, "r") as f:
                summ = f["summary"].attrs
                self.assertEqual(s(summ["termination"]), s(t["termination"][i]))
                self.assertEqual(float(summ["t_final"]), t["t_final"][i])
                self.assertEqual(int(summ["n_events"]), t["n_events"][i])
                for key in ("energy_drift_rel", "t_lift_off", "t_edge", "normal_force_min"):
                    a, b = float(summ[key]), t[key][i]
                    self.assertTrue(a == b or (np.isnan(a) and np.isnan(b)), (key, a, b))
                for st in ("theta1", "theta2", "omega1", "omega2"):
                    self.assertEqual(f["trajectory/" + st][-1], t["final_" + st][i], st)
        # the steepest start reaches the edge within t_end, the flattest does not
        self.assertEqual(s(t["termination"][14]), "table_edge")
        self.assertEqual(s(t["termination"][0]), "t_end")

    def test_trajectories(self):
        out = os.path.join(self.tmp, "traj.h5")
        p = subprocess.run([BINARY, "sweep", self.scenario, "-o", out, "--threads", "2", "--trajectories", "-q"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        t, _ = read_table(out)
        same_bytes(self, t, read_table(self.out[1])[0])
        with h5py.File(out, "r") as f:
            self.assertEqual(len(f["points"]), 16)
            g = f["points/000006"]
            self.assertEqual(s(g.attrs["status"]), "ok")
            self.assertIn("initial.theta1=", s(g.attrs["overrides"]))
            self.assertEqual(g["trajectory/time"][-1], t["t_final"][6])
            self.assertEqual(g["trajectory/theta1"][-1], t["final_theta1"][6])
            self.assertNotIn("trajectory", f["points/000001"])  # an input_error point has no trajectory
            # Each point carries its events, with the columns of a run's /events: as many as the table counts,
            # inside the run, and a terminal event is the last one.
            checked = 0
            for k, g in f["points"].items():
                if s(g.attrs["status"]) != "ok":
                    continue
                i = int(k)
                ev = g["events"]
                self.assertEqual(len(ev["kind"]), t["n_events"][i])
                self.assertEqual(ev["time"].attrs["unit"], g["trajectory/time"].attrs["unit"])
                for name in ("mode_before", "mode_after", "theta1", "normal_force"):
                    self.assertEqual(len(ev[name]), len(ev["kind"]))
                if len(ev["kind"]):
                    self.assertTrue(np.all(ev["time"][:] <= t["t_final"][i]))
                if s(t["termination"][i]) != "t_end":
                    self.assertEqual(s(ev["kind"][-1]), s(t["termination"][i]))
                    self.assertEqual(ev["time"][-1], t["t_final"][i])
                    checked += 1
            self.assertGreater(checked, 0)

    def test_disk_sweep_prints_the_orbit_type_tally(self):
        # Three starts of the uniform disk (j = 1/2) whose types are known without the program: (0, 0, 3) and
        # (3, 0, 1), the shipped scenarios disk_type_a.toml and disk_type_b.toml (type A and type B); and (0.5, 0, 0),
        # rolling from the start on the circle of radius 0.5 <= 1, which is permanent (type A).
        scenario = os.path.join(self.tmp, "disk.toml")
        with open(scenario, "w") as f:
            f.write('model = "rolling_disk"\nunits = "dimensionless"\n[parameters]\ninertia_ratio = 0.5\n'
                    "[simulation]\nt_end = 200.0\noutput_dt = 1.0\n"
                    '[sweep]\nmode = "zip"\n"initial.x" = [0.0, 3.0, 0.5]\n"initial.y" = [0.0, 0.0, 0.0]\n'
                    '"initial.z" = [3.0, 1.0, 0.0]\n')
        out = os.path.join(self.tmp, "disk.h5")
        p = subprocess.run([BINARY, "sweep", scenario, "-o", out], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("\nclassification   A 2, B 1\n", p.stdout)
        # The tally comes after the count of finished points, before the table's timing.
        lines = p.stdout.splitlines()
        self.assertEqual(lines.index("classification   A 2, B 1"), lines.index("ok               3") + 1)

    def test_bad_sweep_exits_2_without_file(self):
        bad = os.path.join(self.tmp, "bad.toml")
        with open(bad, "w") as f:
            f.write(SCENARIO.replace('"initial.theta2" = [0.0, -3.0]', '"initial.theta2" = []'))
        out = os.path.join(self.tmp, "bad.h5")
        p = subprocess.run([BINARY, "sweep", bad, "-o", out], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("bad.toml:18:20", p.stderr)
        self.assertIn("empty", p.stderr)
        self.assertFalse(os.path.exists(out) or os.path.exists(out + ".tmp"))


@unittest.skipUnless(os.environ.get("ROLLSIM_MPI_TEST") == "1", "needs a build with ROLLSIM_MPI=ON")
class SweepMpi(unittest.TestCase):
    def test_two_ranks_match_one_process(self):
        tmp = tempfile.mkdtemp(prefix="rollsim-sweep-mpi-")
        try:
            sc = os.path.join(tmp, "sw.toml")
            with open(sc, "w") as f:
                f.write(SCENARIO)
            one, two = os.path.join(tmp, "one.h5"), os.path.join(tmp, "two.h5")
            p = subprocess.run([BINARY, "sweep", sc, "-o", one, "--threads", "1", "-q"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            mpirun = os.environ.get("MPIEXEC", "mpirun")
            p = subprocess.run([mpirun, "-np", "2", "--oversubscribe", BINARY, "sweep", sc, "-o", two,
                                "--threads", "1", "--trajectories", "-q"], capture_output=True, text=True, env=env,
                               timeout=300)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            a, _ = read_table(one)
            b, attrs = read_table(two)
            same_bytes(self, a, b)
            self.assertEqual(int(attrs["ranks"]), 2)
            with h5py.File(two, "r") as f:
                self.assertEqual(len(f["points"]), 16)
                self.assertEqual(f["points/000006/trajectory/theta1"][-1], a["final_theta1"][6])
                self.assertNotIn("trajectory", f["points/000007"])  # input_error point
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main()
