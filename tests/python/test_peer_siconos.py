"""tools/peer_siconos.py: Siconos's Moreau-Jean time-stepping converges to rollsim's event-driven answers.

Case bouncing_ball:

Skipped when python3-siconos is not installed (an optional test-only package, see tools/install-deps).
The errors are measured against rollsim's result (ROLLSIM_BINARY runs scenarios/bouncing_ball.toml) and against
the closed form; Moreau-Jean places an impact only within its step, so both must fall as the step shrinks, about
tenfold per decade of h (first order), while rollsim itself matches the closed form far below Siconos's errors.

Case table_landing (scenarios/table_contact.toml to 0.25 s): the wheel landing with impacts on the sprung tipping
table, in Siconos with a 2D friction contact on the nonlinear gap. Its errors against rollsim must fall about first
order too; and rollsim's own landing is checked here without Siconos and without the tool: the first impact time
and the state before it against the free flight in closed form (the root of the gap by a root finder), and the
state after the first impact against Newton's restitution and Coulomb's sliding impulse applied by hand.
"""

import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import tomllib
import unittest

import h5py
import numpy as np
from scipy.optimize import brentq

import synth

PEER = os.path.join(synth.TOOLS, "peer_siconos.py")
HAVE_SICONOS = importlib.util.find_spec("siconos") is not None
STEPS = ["1e-2", "1e-3", "1e-4"]
TABLE_STEPS = ["1e-3", "1e-4", "1e-5"]
TABLE = os.path.join(synth.REPO, "scenarios", "table_contact.toml")


def load_peer():
    """The tool as a module (its Siconos import is deferred, so this needs no Siconos)."""
    spec = importlib.util.spec_from_file_location("peer_siconos", PEER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@unittest.skipUnless(HAVE_SICONOS, "python3-siconos is not installed (optional: apt-get install python3-siconos)")
class PeerSiconos(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        p = subprocess.run([sys.executable, PEER, "bouncing_ball", "--rollsim", synth.BINARY, "--steps", *STEPS,
                            "--json"], capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise AssertionError(f"peer_siconos.py exited {p.returncode}: {p.stderr}")
        cls.res = json.loads(p.stdout)

    def test_errors_fall_with_the_step(self):
        rows = self.res["rows"]
        self.assertEqual([r["h"] for r in rows], [float(h) for h in STEPS])
        for key in ("impact_time_error", "position_error", "impact_time_error_closed_form",
                    "position_error_closed_form"):
            errors = [r[key] for r in rows]
            with self.subTest(key=key, errors=errors):
                # First order: each tenfold smaller step cuts the error at least fourfold (the measured ratios are
                # 8 to 13); and the error stays within 5 h (an impact within its step, positions within g h t).
                for coarse, fine in zip(errors, errors[1:]):
                    self.assertLess(fine, coarse / 4)
                for r, err in zip(rows, errors):
                    self.assertLess(err, 5 * r["h"])

    def test_rollsim_matches_the_closed_form(self):
        ref = self.res["rollsim"]
        self.assertLess(ref["impact_time_error_closed_form"], 1e-9)
        self.assertLess(ref["position_error_closed_form"], 1e-9)
        # And the finest Siconos step is still far from rollsim's agreement with the closed form.
        self.assertGreater(self.res["rows"][-1]["impact_time_error"], 100 * ref["impact_time_error_closed_form"])


@unittest.skipUnless(HAVE_SICONOS, "python3-siconos is not installed (optional: apt-get install python3-siconos)")
class PeerSiconosTableLanding(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        p = subprocess.run([sys.executable, PEER, "table_landing", "--rollsim", synth.BINARY, "--steps",
                            *TABLE_STEPS, "--json"], capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise AssertionError(f"peer_siconos.py table_landing exited {p.returncode}: {p.stderr}")
        cls.res = json.loads(p.stdout)

    def test_errors_fall_with_the_step(self):
        rows = self.res["rows"]
        self.assertEqual([r["h"] for r in rows], [float(h) for h in TABLE_STEPS])
        for key in ("impact_time_error", "position_error", "angle_error", "velocity_error", "rate_error"):
            errors = [r[key] for r in rows]
            with self.subTest(key=key, errors=errors):
                # First order: each tenfold smaller step cuts the error at least fourfold (the measured ratios are
                # 7 to 27).
                for coarse, fine in zip(errors, errors[1:]):
                    self.assertLess(fine, coarse / 4)
        for r in rows:
            # Each of the 3 compared impacts lies within a step of rollsim's; their errors add up at most
            # to one step per impact (the flights between them start from rebounds of the same O(h) error).
            self.assertLess(r["impact_time_error"], 3 * r["h"])

    def test_siconos_matches_the_first_flight(self):
        # Before the first impact Siconos integrates a smooth motion with theta 1/2, second order: the largest
        # error at t = 0.05 s is the table's rate, the spring's phase error theta1(0) w^4 t h^2 / 12 = 0.6 h^2
        # (w^2 = kt/It = 120/s^2). Its first impulse comes in the step where the gap closes or in the next, so
        # the step's midpoint lies within 3h/2 of the closing.
        for r in self.res["rows"]:
            self.assertLess(r["impact_time_error_closed_form"], 1.5 * r["h"])
            for key in ("position_error", "angle_error", "velocity_error", "rate_error"):
                self.assertLess(r[key + "_closed_form"], r["h"] ** 2, key)
        self.assertEqual(self.res["closed_form"]["impacts"], 1)
        self.assertEqual(self.res["closed_form"]["check_times"], [0.05])

    def test_rollsim_matches_the_first_flight(self):
        ref = self.res["rollsim"]
        self.assertLess(ref["impact_time_error_closed_form"], 1e-9)
        for key in ("position_error", "angle_error", "velocity_error", "rate_error"):
            self.assertLess(ref[key + "_closed_form"], 1e-9)


class TableLandingByHand(unittest.TestCase):
    """rollsim's landing on the table against the free flight and the first impact worked out here."""

    @classmethod
    def setUpClass(cls):
        with open(TABLE, "rb") as f:
            sc = tomllib.load(f)
        cls.p = {k: float(v) for k, v in sc["parameters"].items()}
        cls.q0 = {k: float(sc["initial"].get(k, 0.0)) for k in ("theta1", "s", "d", "phi")}
        cls.v0 = {k: float(sc.get("initial_rates", {}).get(k, 0.0)) for k in ("theta1", "s", "d", "phi")}
        # The scenario starts the table and the wheel's centre at rest (only the wheel spins).
        assert cls.v0["theta1"] == cls.v0["s"] == cls.v0["d"] == 0.0, cls.v0
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "landing.h5")
            synth.rollsim("run", TABLE, "--set", "simulation.t_end=0.25", "-o", out, "-q")
            with h5py.File(out) as f:
                cls.events = {k: f["events"][k][()] for k in f["events"]}
                cls.trajectory = {k: f["trajectory"][k][()] for k in f["trajectory"]}
        kinds = [k.decode() if isinstance(k, bytes) else k for k in cls.events["kind"]]
        cls.first = kinds.index("impact")

    # The free flight: the centre (X, Y) falls, the table swings on its spring from rest, the wheel spins.
    def flight(self, t):
        p, q0 = self.p, self.q0
        th0, s0, d0 = q0["theta1"], q0["s"], q0["d"]
        x = s0 * math.cos(th0) - d0 * math.sin(th0)
        y = s0 * math.sin(th0) + d0 * math.cos(th0) - 0.5 * p["g"] * t * t
        return th0 * math.cos(math.sqrt(p["kt"] / p["It"]) * t), x, y, q0["phi"] + self.v0["phi"] * t

    @staticmethod
    def table_coordinates(q):
        th, x, y, phi = q
        return {"theta1": th, "s": x * math.cos(th) + y * math.sin(th), "d": -x * math.sin(th) + y * math.cos(th),
                "phi": phi}

    def rates(self, q_of_t, t, eps=1e-6):
        """The table coordinates' rates by central differences of the positions."""
        a, b = self.table_coordinates(q_of_t(t - eps)), self.table_coordinates(q_of_t(t + eps))
        return {k: (b[k] - a[k]) / (2 * eps) for k in a}

    def gap(self, t):
        return self.table_coordinates(self.flight(t))["d"] - self.p["r"]

    def first_impact_time(self):
        grid = np.arange(0.0, 0.25, 1e-3)
        k = next(i for i, t in enumerate(grid) if self.gap(t) <= 0)
        return brentq(self.gap, grid[k - 1], grid[k], xtol=1e-15)

    def test_first_impact_time_and_flight(self):
        t1 = self.first_impact_time()
        self.assertAlmostEqual(t1, 0.0638548, delta=1e-6)  # the scenario's description: the first impact at 0.064 s
        self.assertLess(abs(self.events["time"][self.first] - t1), 1e-9)
        tt = self.trajectory["time"]
        for t in (0.02, 0.05):
            k = int(np.argmin(np.abs(tt - t)))
            self.assertLess(abs(tt[k] - t), 1e-12)
            want = self.table_coordinates(self.flight(t))
            rates = self.rates(self.flight, t)
            for name in ("theta1", "s", "d", "phi"):
                self.assertLess(abs(self.trajectory[name][k] - want[name]), 1e-9, (t, name))
                self.assertLess(abs(self.trajectory["der_" + name][k] - rates[name]), 1e-7, (t, name))

    def test_the_peers_contact_rows_are_rollsims_gap_rate_and_slip(self):
        # table_face's rows times q' against the time derivatives of rollsim's gap d - r and of its slip
        # s' + r (phi' - theta1') (from scenarios/table_contact.toml), along motions through arbitrary states.
        peer = load_peer()
        rng = np.random.default_rng(7)
        r = self.p["r"]
        for _ in range(20):
            q, v = rng.normal(size=4) * (0.3, 0.3, 0.3, 2.0), rng.normal(size=4)
            motion = lambda t, q=q, v=v: tuple(q + t * v)  # noqa: E731
            gap, normal, tangential = peer.table_face(q, r)
            rates = self.rates(motion, 0.0)
            here = self.table_coordinates(q)
            self.assertAlmostEqual(gap, here["d"] - r, delta=1e-14)
            self.assertAlmostEqual(np.dot(normal, v), rates["d"], delta=1e-8)
            # The tangential row is rollsim's slip on and off the contact (off it, the rim's velocity against the
            # table's material point under the contact point, which turns with the table at distance gap).
            slip = rates["s"] + r * (v[3] - v[0])
            self.assertAlmostEqual(np.dot(tangential, v), slip, delta=1e-8)

    def test_first_impact_by_newton_restitution_and_coulomb(self):
        # The impact at t1 in absolute coordinates q = (theta1, X, Y, phi), mass matrix diag(It, m, m, J):
        # the impulse P_N n + P_T t with n, t the contact rows (checked above against rollsim's definitions).
        peer = load_peer()
        p = self.p
        t1 = self.first_impact_time()
        q = np.array(self.flight(t1))
        eps = 1e-6
        v = (np.array(self.flight(t1 + eps)) - np.array(self.flight(t1 - eps))) / (2 * eps)
        gap, n, t = (np.array(x) for x in peer.table_face(q, p["r"]))
        self.assertLess(abs(gap), 1e-12)
        minv = np.diag([1 / p["It"], 1 / p["m"], 1 / p["m"], 1 / p["J"]])
        un, ut = n @ v, t @ v
        self.assertLess(un, 0)
        # A sticking impulse (w+ = 0, normal rate -e un) would leave Coulomb's cone: the wheel slides.
        a = np.array([[n @ minv @ n, n @ minv @ t], [t @ minv @ n, t @ minv @ t]])
        pn_stick, pt_stick = np.linalg.solve(a, [-(1 + p["e"]) * un, -ut])
        self.assertGreater(abs(pt_stick), p["mu"] * pn_stick)
        sign = math.copysign(1.0, ut)
        pn = -(1 + p["e"]) * un / (n @ minv @ (n - sign * p["mu"] * t))
        pt = -sign * p["mu"] * pn
        after = v + minv @ (n * pn + t * pt)
        self.assertEqual(math.copysign(1.0, t @ after), sign)  # it slides on in the same direction
        ev = {k: self.events[k][self.first] for k in self.events if k != "kind"}
        self.assertLess(abs(ev["impulse_normal_table"] - pn), 1e-8)
        self.assertLess(abs(ev["impulse_tangential_table"] - pt), 1e-8)
        self.assertLess(abs(ev["gap_rate_table"] - (-p["e"] * un)), 1e-8)
        self.assertLess(abs(ev["slip_velocity_table"] - t @ after), 1e-8)
        self.assertLess(abs(ev["der_theta1"] - after[0]), 1e-8)
        self.assertLess(abs(ev["der_phi"] - after[3]), 1e-8)


@unittest.skipUnless(HAVE_SICONOS, "python3-siconos is not installed (optional: apt-get install python3-siconos)")
class PeerSiconosErrors(unittest.TestCase):
    def test_a_missing_rollsim_result_is_an_error(self):
        p = subprocess.run([sys.executable, PEER, "--result", "/nonexistent/ball.h5", "--steps", "1e-2"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("/nonexistent/ball.h5", p.stderr)


    def test_a_result_of_other_parameters_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "mu.h5")
            synth.rollsim("run", TABLE, "--set", "simulation.t_end=0.25", "--set", "parameters.mu=0.5", "-o", out,
                          "-q")
            p = subprocess.run([sys.executable, PEER, "table_landing", "--result", out, "--steps", "1e-3"],
                               capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("parameters.mu", p.stderr)


class PeerSiconosArguments(unittest.TestCase):
    def test_a_step_that_does_not_divide_the_compared_times_is_refused(self):
        p = subprocess.run([sys.executable, PEER, "--result", "x.h5", "--steps", "0.07"], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("do not divide", p.stderr)


if __name__ == "__main__":
    unittest.main()
