"""tools/plot writes PNGs with the expected views for each kind of result file."""

import os
import subprocess
import sys
import tempfile
import time
import unittest

import h5py
import matplotlib

matplotlib.use("Agg")

import synth
import rollsim
import rollsim.plot

PLOT = os.path.join(synth.TOOLS, "plot")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# kind -> (panel names, number of matplotlib axes including colorbars and the event strip)
# The run panels follow the columns' roles (docs/python.md, "Signal roles"), never the model's name; a run with
# events has one more axes, the event strip above its panels.
EXPECTED = {
    "table": (["states [rad]", "rates [rad/s]", "normal forces", "tangential forces", "friction demand",
               "outputs [m]", "energy", "energy drift"], 8 + 1),
    "disk": (["states [1]", "rates [1]", "phase portrait", "tangential forces", "slip velocities", "outputs [1]",
              "outputs [m]", "outputs [m/s]", "energy", "energy drift"], 10 + 1),
    "linear": (["bode magnitude", "eigenvalues", "bode phase", "modal table"], 4),
    "sweep_basin": (["basin map", "rolling radius map"], 3),
    "sweep_study": (["study t_edge", "study energy_drift"], 2),
    "growth": (["growth", "growth error"], 2),
}


def run_plot(*args):
    return subprocess.run([sys.executable, PLOT, *args], capture_output=True, text=True, timeout=120)


class PlotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.files = synth.write_all(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assertPng(self, path, min_size=10_000):
        self.assertTrue(os.path.isfile(path), path)
        with open(path, "rb") as f:
            head = f.read(24)
        self.assertEqual(head[:8], PNG_SIGNATURE, path)
        self.assertGreater(os.path.getsize(path), min_size, path)
        width = int.from_bytes(head[16:20], "big")
        height = int.from_bytes(head[20:24], "big")
        self.assertGreater(width, 300)
        self.assertGreater(height, 300)

    def test_png_for_each_kind(self):
        for kind in EXPECTED:
            with self.subTest(kind=kind):
                out = os.path.join(self.tmp.name, f"{kind}.png")
                t0 = time.monotonic()
                p = run_plot(self.files[kind], "-o", out)
                elapsed = time.monotonic() - t0
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout.strip(), out)
                self.assertPng(out)
                self.assertLess(elapsed, 60.0)  # about 1 s when the machine is idle

    def test_default_output_name(self):
        src = os.path.join(self.tmp.name, "default_name.h5")
        synth.write_growth(src)
        p = run_plot(src)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertPng(os.path.join(self.tmp.name, "default_name.png"))

    def test_axes_per_kind(self):
        for kind, (panels, n_axes) in EXPECTED.items():
            with self.subTest(kind=kind):
                r = rollsim.load(self.files[kind])
                figs = rollsim.plot.figures(r)
                self.assertEqual(len(figs), 1)
                fig = figs[0]
                self.assertEqual(fig.rollsim_panels, panels)
                self.assertEqual(len(fig.axes), n_axes)
                title = fig._suptitle.get_text()
                self.assertIn(r.title, title)
                self.assertIn(r.model, title)

    def test_units_on_axes(self):
        r = rollsim.load(self.files["table"])
        fig = rollsim.plot.figures(r)[0]
        labels = [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes]
        self.assertIn(("time [s]", "θ₁, θ₂ [rad]"), labels)
        self.assertIn(("time [s]", "ω₁, ω₂ [rad/s]"), labels)
        self.assertIn(("time [s]", "normal forces [N]"), labels)
        self.assertIn(("time [s]", "tangential forces [N]"), labels)
        r = rollsim.load(self.files["linear"])
        fig = rollsim.plot.figures(r)[0]
        labels = [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes]
        self.assertIn(("frequency [Hz]", "magnitude [dB]"), labels)
        self.assertIn(("frequency [Hz]", "phase [deg]"), labels)
        self.assertIn(("Re λ [1/s]", "Im λ [1/s]"), labels)
        self.assertEqual(fig.axes[0].get_xscale(), "log")

    def test_events_marked(self):
        # Listed once, in the event strip (one row per kind with its count), in no panel's legend.
        r = rollsim.load(self.files["table"])
        fig = rollsim.plot.figures(r)[0]
        strip = fig.rollsim_event_strip
        self.assertEqual([t.get_text() for t in strip.get_yticklabels()], ["slip_onset (1)", "table_edge (1)"])
        self.assertTrue(strip.get_title(loc="left").startswith("2 events"))
        for name, ax in fig.rollsim_axes.items():
            legend = ax.get_legend()
            texts = [t.get_text() for t in legend.get_texts()] if legend else []
            self.assertFalse([t for t in texts if "slip_onset" in t or "table_edge" in t], name)

    def test_title_falls_back_to_file_name(self):
        path = os.path.join(self.tmp.name, "untitled.h5")
        synth.write_disk(path)
        with h5py.File(path, "a") as f:
            del f.attrs["title"]
        fig = rollsim.plot.figures(rollsim.load(path))[0]
        self.assertIn("untitled.h5", fig._suptitle.get_text())
        self.assertIn("rolling_disk", fig._suptitle.get_text())

    def test_split_panels(self):
        # --split: one file per panel, named after it (OUT-NAME.png).
        path = os.path.join(self.tmp.name, "table_and_linear.h5")
        synth.write_table(path)
        with h5py.File(self.files["linear"], "r") as src, h5py.File(path, "a") as dst:
            src.copy("linear", dst)
        fig = rollsim.plot.figures(rollsim.load(path))[0]
        self.assertEqual(len(fig.rollsim_panels), 12)
        figs = rollsim.plot.figures(rollsim.load(path), split=True)
        self.assertEqual([f.rollsim_panels for f in figs], [[n] for n in fig.rollsim_panels])
        out = os.path.join(self.tmp.name, "split.png")
        p = run_plot(path, "-o", out, "--split")
        self.assertEqual(p.returncode, 0, p.stderr)
        names = p.stdout.split()
        self.assertEqual(len(names), 12)
        self.assertEqual(names[0], os.path.join(self.tmp.name, "split-states-rad.png"))
        self.assertEqual(names[-1], os.path.join(self.tmp.name, "split-modal-table.png"))
        for name in names:
            self.assertPng(name)
        self.assertFalse(os.path.exists(out))

    def test_incomplete_file(self):
        out = os.path.join(self.tmp.name, "incomplete.png")
        p = run_plot(self.files["incomplete"], "-o", out)
        self.assertEqual(p.returncode, 2)
        self.assertIn("incomplete", p.stderr)
        self.assertIn("--allow-incomplete", p.stderr)
        self.assertIn("running: t = 0.73", p.stderr)
        self.assertFalse(os.path.exists(out))
        p = run_plot(self.files["incomplete"], "-o", out, "--allow-incomplete")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertPng(out)

    def test_missing_and_unreadable(self):
        p = run_plot(os.path.join(self.tmp.name, "nope.h5"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such file", p.stderr)
        junk = os.path.join(self.tmp.name, "junk.h5")
        with open(junk, "w") as f:
            f.write("junk")
        p = run_plot(junk)
        self.assertEqual(p.returncode, 2)
        self.assertIn("cannot open", p.stderr)
        self.assertNotIn("Traceback", p.stderr)


if __name__ == "__main__":
    unittest.main()
