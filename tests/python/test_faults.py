"""Faults from outside the program: SIGKILL and SIGINT in the middle of a run, a full disk (a file-size
limit), and a solver that gives up. Each must leave no file that claims to be complete, keep an earlier
result file intact unless a new one is closed, and say what happened with the documented exit code."""
import os
import re
import resource
import signal
import subprocess
import tempfile
import time
import unittest

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("ROLLSIM_BINARY", os.path.join(ROOT, "build", "rollsim"))
SCENARIO = os.path.join(ROOT, "scenarios", "tipping_table.toml")

# A long run that writes all the time: the wheel at rest in the middle of a level table (an equilibrium,
# so the solver takes long steps), sampled every 0.1 ms up to t = 10^4 s: 10^8 samples.
# A long run on purpose (8.9 GiB if it finished): its size warning is not under test here.
LONG = ["--set", "initial.theta1=0", "--set", "simulation.t_end=1e4", "--set", "simulation.output_dt=1e-4",
        "--set", "output.warn_size=false"]


def s(v):
    return v.decode() if isinstance(v, bytes) else v


def completed_flag(path):
    """The file's `completed` attribute, or None when h5py cannot read it."""
    try:
        with h5py.File(path, "r") as f:
            return int(f.attrs["completed"])
    except Exception:  # a file cut short by SIGKILL may be unreadable, which is allowed
        return None


def wait_for(path, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.02)
    return False


class Faults(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "r.h5")

    def tearDown(self):
        self.tmp.cleanup()

    def start(self, extra, **kw):
        return subprocess.Popen([BINARY, "run", SCENARIO, "-o", self.out, "-q"] + extra,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)

    def write_old(self):
        old = b"an earlier result file that must survive\n" * 10
        with open(self.out, "wb") as fh:
            fh.write(old)
        return old

    def test_sigkill_mid_write_keeps_the_old_file(self):
        old = self.write_old()
        p = self.start(LONG)
        self.assertTrue(wait_for(self.out + ".tmp"), "the run never created its temporary file")
        time.sleep(0.5)
        self.assertIsNone(p.poll(), "the long run ended before it could be killed")
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=30)
        self.assertEqual(p.returncode, -signal.SIGKILL)
        with open(self.out, "rb") as fh:
            self.assertEqual(fh.read(), old, "the earlier file was changed")
        # What is left under NAME.tmp never claims to be complete.
        self.assertIn(completed_flag(self.out + ".tmp"), (None, 0))

    def metadata_size(self):
        """The size of what a run of one millisecond writes (its metadata and scenario texts): a long run's
        temporary file that has grown well past it holds samples."""
        short = subprocess.run([BINARY, "run", SCENARIO, "-o", self.out, "-q"] + LONG
                               + ["--set", "simulation.t_end=1e-3"], capture_output=True, text=True, timeout=60)
        self.assertEqual(short.returncode, 0, short.stderr)
        size = os.path.getsize(self.out)
        os.remove(self.out)
        return size

    def test_sigint_ends_cleanly_with_the_data_so_far(self):
        base = self.metadata_size()
        p = self.start(LONG)
        self.assertTrue(wait_for(self.out + ".tmp"))
        # The signal comes once the temporary file has grown 16 KiB past the metadata, which takes thousands of
        # samples (they compress well: the wheel is at rest). Neither wall time nor the program's CPU time told:
        # beside the fuzzing run a sanitized run got 2 samples in 3 s of wall time once, and 1 sample in 1.5 s of
        # its own CPU time another time (the time a loaded kernel spends on its page faults is charged to it).
        end = time.monotonic() + 120
        while p.poll() is None and time.monotonic() < end:
            if os.path.exists(self.out + ".tmp") and os.path.getsize(self.out + ".tmp") > base + 16 * 1024:
                break
            time.sleep(0.05)
        self.assertIsNone(p.poll())
        t_signal = time.monotonic()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        self.assertLess(time.monotonic() - t_signal, 10.0, "the run took too long to stop")
        self.assertEqual(p.returncode, 130, err)
        self.assertIn("interrupted at t = ", err)
        self.assertFalse(os.path.exists(self.out + ".tmp"))
        with h5py.File(self.out, "r") as f:
            self.assertEqual(int(f.attrs["completed"]), 0)
            self.assertEqual(s(f.attrs["status"]), "interrupted")
            t = f["trajectory/time"][:]
            theta1 = f["trajectory/theta1"][:]
            self.assertGreater(len(t), 100)
            self.assertEqual(len(theta1), len(t))
            self.assertTrue(np.all(np.diff(t) > 0))
            t_final = float(f["summary"].attrs["t_final"])
            self.assertGreater(t_final, 0.0)
            self.assertLess(t_final, 1e4)
            self.assertAlmostEqual(t[-1], t_final, delta=1e-4 + 1e-12 * t_final)
            self.assertEqual(s(f["summary"].attrs["termination"]), "interrupted")

    def test_full_disk_gives_exit_4_and_no_complete_file(self):
        # The limit is what a run of one millisecond writes (its metadata and scenario texts) and 32 KiB more,
        # so that the long run meets it within a few seconds of simulated time: its samples compress well (a
        # wheel at rest), and a fixed limit far above the metadata took minutes in the ASan tree under load.
        limit = self.metadata_size() + 32 * 1024

        def small_disk():
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            # SIGXFSZ keeps its default action (terminate): the program must ignore it itself.

        old = self.write_old()
        p = self.start(LONG, preexec_fn=small_disk)
        _, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 4, err)
        self.assertIn("rollsim: I/O error: ", err)
        self.assertEqual(err.count("\n"), 1, err)  # one clear line
        self.assertIn(self.out, err)
        # Nothing claims completion; the earlier file is either untouched or replaced by partial data.
        self.assertNotEqual(completed_flag(self.out + ".tmp"), 1)
        with open(self.out, "rb") as fh:
            now = fh.read()
        if now != old:
            self.assertIn("partial results kept", err)
            self.assertEqual(completed_flag(self.out), 0)
            with h5py.File(self.out, "r") as f:
                self.assertEqual(s(f.attrs["status"]), "io_error")
        else:
            self.assertIn("no result file written", err)

    def test_solver_failure_keeps_partial_data(self):
        p = self.start(["--set", "solver.max_steps=20"])
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 3, err)
        self.assertIn("solver failure", err)
        self.assertRegex(err, r"at t = [0-9.e+-]+ s")
        self.assertRegex(err, r"step size h = [0-9.e+-]+")
        self.assertIn("mode rolling without slip", err)
        self.assertIn("raise solver.max_steps", err)
        self.assertFalse(os.path.exists(self.out + ".tmp"))
        with h5py.File(self.out, "r") as f:
            self.assertEqual(int(f.attrs["completed"]), 0)
            self.assertEqual(s(f.attrs["status"]), "solver_failure")
            t = f["trajectory/time"][:]
            self.assertGreater(len(t), 1)
            self.assertAlmostEqual(t[-1], float(f["summary"].attrs["t_final"]), delta=1e-12)
            self.assertIn("MAX_STEPS", s(f["summary"].attrs["message"]))
            t_final = float(f["summary"].attrs["t_final"])
        # The summary on the terminal names the failure at the last state reached, the one the file keeps.
        p = subprocess.run([BINARY, "run", SCENARIO, "-o", self.out, "--set", "solver.max_steps=20"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 3, p.stderr)
        m = re.search(r"^termination +solver_failure at t = (\S+) s \(the last state reached; the message says "
                      r"where it failed\)$", p.stdout, re.M)
        self.assertIsNotNone(m, p.stdout)
        self.assertAlmostEqual(float(m.group(1)), t_final, delta=1e-9 * max(1.0, abs(t_final)))


if __name__ == "__main__":
    unittest.main()
