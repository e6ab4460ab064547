"""rollsim check formulations -o FILE: the /formulations group holds what the terminal shows in the same run
(tolerances, largest differences, every compared signal, the events, the verdict), the tolerances are the
scenario's [check] keys, and a bad -o is refused with exit 2 before anything runs, leaving no file behind."""

import os
import re
import tempfile
import unittest

import numpy as np

import synth  # puts tools/python on sys.path
import rollsim  # noqa: E402

SCENARIO = os.path.join(synth.REPO, "scenarios", "tipping_table_dae.toml")
NUM = r"([-+]?\d\.\d+e[-+]\d+|inf|nan)"


def printed(stdout):
    """The values `check formulations` prints, as the strings it prints them with."""
    out = {"signals": {}, "events": []}
    table = None
    for line in stdout.splitlines():
        m = re.match(r"^tolerances\s+state (\S+), force (\S+) N, event time (\S+) s$", line)
        if m:
            out["tolerance"] = list(m.groups())
            continue
        m = re.match(rf"^largest\s+state {NUM} \((.*)\), force {NUM} N \((.*)\), event time {NUM} s \((.*)\)$", line)
        if m:
            out["largest"], out["worst"] = [m[1], m[3], m[5]], [m[2], m[4], m[6]]
            continue
        m = re.match(r"^common samples\s+(\d+)$", line)
        if m:
            out["n_common_samples"] = int(m[1])
            continue
        m = re.match(r"^(states|forces|other outputs) \((judged|not judged)\)$", line)
        if m:
            table = {"states": "state", "forces": "force", "other outputs": "other"}[m[1]]
            continue
        m = re.match(rf"^  (\S+)\s+{NUM}  \[(.*?)\]\s+(\S+)(?:  \((\d+)\))?$", line)
        if m and table:
            out["signals"][m[1]] = (table, m[2], m[3], m[4])
            if m[5]:
                out.setdefault("marks", {})[m[1]] = m[5]
            continue
        m = re.match(r"^  \((\d+)\) (.*)$", line)
        if m and table:
            out.setdefault("notes", {})[m[1]] = m[2]
            continue
        m = re.match(rf"^  (\S+)\s+ODE (\S+) s  DAE (\S+) s  difference {NUM} s$", line)
        if m:
            out["events"].append(m.groups())
            continue
        if line.startswith("events"):
            table = None
    out["problems"] = [line[len("FAIL: "):] for line in stdout.splitlines() if line.startswith("FAIL: ")]
    out["passed"] = any(line.startswith("PASS") for line in stdout.splitlines())
    return out


@unittest.skipUnless(os.access(synth.BINARY, os.X_OK), f"needs the built program {synth.BINARY}")
class FormulationsFile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def run_check(self, *sets, expect):
        path = os.path.join(self.tmp.name, f"formulations-{len(os.listdir(self.tmp.name))}.h5")
        args = ["check", "formulations", SCENARIO, "-o", path]
        for s in sets:
            args += ["--set", s]
        p = synth.rollsim(*args, check=False)
        self.assertEqual(p.returncode, expect, p.stdout + p.stderr)
        self.assertIn(f"wrote {path}", p.stdout)
        return p.stdout, rollsim.load(path)

    def assert_file_matches_terminal(self, stdout, r):
        t = printed(stdout)
        fo = r.formulations
        self.assertIsNotNone(fo)
        self.assertEqual([f"{v:.1e}" for v in fo["tolerance"]], t["tolerance"])
        self.assertEqual([f"{v:.3e}" for v in fo["largest"]], t["largest"])
        self.assertEqual(list(fo["worst"]), t["worst"])
        self.assertEqual(int(fo.attrs["n_common_samples"]), t["n_common_samples"])
        sig = fo["signals"]
        self.assertEqual(sorted(sig["name"]), sorted(t["signals"]))
        for i, name in enumerate(sig["name"]):
            kind, diff, unit, at = t["signals"][name]
            self.assertEqual((sig["kind"][i], f"{sig['max_abs_difference'][i]:.3e}", sig["unit"][i] or "1",
                              f"{sig['at_time'][i]:.6f}"), (kind, diff, unit, at), name)
            # A signal undefined at some samples is marked, and its footnote counts them as the file does.
            undefined = int(sig["undefined_both"][i]) + int(sig["undefined_one"][i])
            self.assertEqual(name in t.get("marks", {}), undefined > 0, name)
            if undefined:
                self.assertIn(f" at {undefined} samples ", t["notes"][t["marks"][name]], name)
        ev = fo["events"]
        self.assertEqual([(str(k), f"{a:.12f}", f"{b:.12f}", f"{d:.3e}") for k, a, b, d in
                          zip(ev["kind"], ev["time_ode"], ev["time_dae"], ev["difference"])], t["events"])
        self.assertEqual(list(fo["problems"]), t["problems"])
        self.assertEqual(bool(fo.attrs["passed"]), t["passed"])
        # The tolerances are the scenario's [check] keys, in the units the schema gives them.
        self.assertEqual(list(fo["key"]), ["check.state_tol", "check.force_tol", "check.event_time_tol"])
        self.assertEqual(list(fo["tolerance"]), [r.param(k) for k in fo["key"]])
        self.assertEqual(list(fo["unit"]), ["state units", "N", "s"])
        self.assertEqual(list(fo["within"]), [int(a <= b) for a, b in zip(fo["largest"], fo["tolerance"])])
        # The largest judged differences are the largest of their signals; the event differences are time_dae -
        # time_ode.
        for q, kind in (("state", "state"), ("force", "force")):
            sel = np.asarray(sig["kind"]) == kind
            k = list(fo["quantity"]).index(q)
            self.assertEqual(fo["largest"][k], np.max(sig["max_abs_difference"][sel]))
        np.testing.assert_array_equal(ev["difference"], ev["time_dae"] - ev["time_ode"])
        self.assertEqual(fo["largest"][2], np.max(np.abs(ev["difference"])))
        # Each run's summary and solver work, as a run's file has them.
        for run in ("ode", "dae"):
            self.assertIn("termination", fo[run]["summary"].attrs)
            self.assertIn("n_steps", fo[run]["solver"].attrs)
        m = re.match(r"^ODE: (\S+) at t = (\S+) s \((\S+)\); DAE: (\S+) at t = (\S+) s \((\S+)\)$",
                     stdout.splitlines()[0])
        self.assertIsNotNone(m, stdout)
        for run, (term, t_final, method) in (("ode", m.groups()[:3]), ("dae", m.groups()[3:])):
            self.assertEqual((fo[run]["summary"].attrs["termination"], f"{fo[run]['summary'].attrs['t_final']:.12g}",
                              fo[run]["solver"].attrs["method"]), (term, t_final, method))
        self.assertTrue(fo["dae"]["solver"].attrs["method"].startswith("ida"))
        return fo

    def test_pass_matches_terminal(self):
        stdout, r = self.run_check(expect=0)
        fo = self.assert_file_matches_terminal(stdout, r)
        self.assertTrue(r.completed)
        self.assertEqual(fo.attrs["passed"], 1)
        self.assertEqual(list(fo["within"]), [1, 1, 1])
        self.assertEqual(len(fo["problems"]), 0)
        self.assertGreater(len(fo["events"]["kind"]), 0)

    def test_table_of_differences_is_aligned_and_explains_nan(self):
        stdout, r = self.run_check(expect=0)
        lines = stdout.splitlines()
        header = next(line for line in lines if line.lstrip().startswith("signal "))
        diff_end = header.index("|DAE - ODE|") + len("|DAE - ODE|")
        unit_at = header.index("unit")
        time_end = header.index("at t [s]") + len("at t [s]")
        rows = [line for line in lines if re.match(rf"^  \S+\s+{NUM}  \[", line)]
        self.assertGreater(len(rows), 8)
        for line in rows:
            cells = re.match(rf"^  \S+\s+({NUM})  (\[\S*\])\s+(\S+)", line)
            self.assertEqual(cells.end(1), diff_end, line)   # the numbers end under the header's |DAE - ODE|
            self.assertEqual(cells.start(3), unit_at, line)  # the units, in brackets, start under "unit"
            self.assertEqual(cells.end(4), time_end, line)   # the times end under "at t [s]"
            self.assertNotIn("inf", cells[1], line)
        # The friction demand |T_c|/N is NaN where the normal force is not positive (its description says so): after
        # the lift-off, in both runs. Those samples are the grid points between the lift-off and the table edge
        # (the edge itself is an event sample of slightly different time in each run, so not a common sample).
        ev = r.formulations["events"]
        t_lift = float(ev["time_ode"][list(ev["kind"]).index("lift_off")])
        t_edge = float(ev["time_ode"][list(ev["kind"]).index("table_edge")])
        dt = r.param("simulation.output_dt")
        expected = int(np.floor(t_edge / dt + 1e-9)) - int(np.floor(t_lift / dt + 1e-9))
        mark = next(line for line in rows if line.split()[0] == "friction_demand").split()[-1]
        note = next(line for line in lines if line.startswith(f"  {mark} "))
        self.assertIn(f"NaN in both runs at {expected} samples", note)
        self.assertIn("left out of the difference", note)
        self.assertIn("NaN where normal_force <= 0", note)
        sig = r.formulations["signals"]
        k = list(sig["name"]).index("friction_demand")
        self.assertEqual((int(sig["undefined_both"][k]), int(sig["undefined_one"][k])), (expected, 0))
        self.assertTrue(np.isfinite(sig["max_abs_difference"][k]))

    def test_fail_matches_terminal(self):
        stdout, r = self.run_check("check.force_tol=1e-12", expect=1)
        fo = self.assert_file_matches_terminal(stdout, r)
        self.assertTrue(r.completed)   # both runs finished; the check failed
        self.assertEqual(fo.attrs["passed"], 0)
        self.assertEqual(list(fo["within"]), [1, 0, 1])
        self.assertEqual(len(fo["problems"]), 1)
        self.assertIn("force_tol", fo["problems"][0])


@unittest.skipUnless(os.access(synth.BINARY, os.X_OK), f"needs the built program {synth.BINARY}")
class FormulationsBadOutput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def refused(self, out, *extra):
        p = synth.rollsim("check", "formulations", SCENARIO, "-o", out, *extra, check=False)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(p.stdout, "", "refused before anything runs")
        return p.stderr

    def test_missing_folder(self):
        out = os.path.join(self.tmp.name, "no_such_folder", "f.h5")
        err = self.refused(out)
        self.assertIn(f"-o {out}", err)
        self.assertIn("does not exist", err)
        self.assertFalse(os.path.exists(os.path.dirname(out)))

    def test_directory(self):
        err = self.refused(self.tmp.name)
        self.assertIn("is a directory", err)
        self.assertEqual(os.listdir(self.tmp.name), [])

    def test_existing_file_untouched_on_bad_input(self):
        out = os.path.join(self.tmp.name, "keep.h5")
        with open(out, "wb") as f:
            f.write(b"an earlier file")
        err = self.refused(out, "--set", "check.state_tol=-1")
        self.assertIn("check.state_tol", err)
        with open(out, "rb") as f:
            self.assertEqual(f.read(), b"an earlier file")
        self.assertEqual(os.listdir(self.tmp.name), ["keep.h5"])


if __name__ == "__main__":
    unittest.main()
