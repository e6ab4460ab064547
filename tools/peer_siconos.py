#!/usr/bin/python3
"""Siconos as a peer of rollsim's contact engine: time-stepping (Moreau-Jean) against rollsim's event-driven answer.

Siconos 4.4 (Debian's python3-siconos, an optional test-only package: tools/install-deps installs it unless
ROLLSIM_DEPS=core) integrates a nonsmooth mechanical system with the Moreau-Jean scheme: a theta-method for the
smooth part, the contact impulses of each step from a one-step problem (an LCP, or a 2D friction contact problem),
Newton's restitution law on the normal velocity. It places an impact only to within its step h, so its errors fall
as O(h). rollsim locates each impact and integrates between them to its tolerance. This script runs Siconos at
several steps h and prints a work-precision table: per step the wall time and the errors of the impact times and
of the states at fixed times, against rollsim's result and against the closed form.

Case `bouncing_ball` (scenarios/bouncing_ball.toml): a point mass dropped from y = h on the floor, restitution e.
Closed form: impact n at t_n = t0 (1 + 2 e (1 - e^(n-1))/(1 - e)), t0 = sqrt(2 h/g), and the parabolas between.
The parameters (m, g, e, h) are read from the scenario, so the three answers use the same values.

Case `table_landing` (scenarios/table_contact.toml, up to t = 0.25 s): the wheel dropped 2 cm onto the sprung
tipping table, spinning; it lands with impacts (e = 0.5) and slides (mu = 0.3) until friction brings it to rolling.
Siconos models it in absolute coordinates q = (theta1, X, Y, phi) (X, Y the wheel's centre): the mass matrix is the
constant diag(It, m, m, J) (the table's mass sits at the pivot), the forces are -m g on Y and -kt theta1 on theta1.
The contact is a NewtonImpactFrictionNSL (e, mu, 2D; no tangential restitution) on a nonlinear relation written in
Python (table_face; a LagrangianScleronomousR subclass, TableFaceR): the gap to the table's top face,
    g(q) = -X sin(theta1) + Y cos(theta1) - r = d - r,
with the normal row of the Jacobian dg/dq = (-s, -sin theta1, cos theta1, 0), s = X cos theta1 + Y sin theta1, and
the tangential row (d - r, cos theta1, sin theta1, r): the rim's velocity against the table's material point at
the contact, t.(X', Y') + r phi' + (d - r) theta1' along t = (cos theta1, sin theta1). It equals rollsim's slip
velocity s' + r (phi' - theta1') on the top face, since s' = t.(X', Y') + d theta1'. The parameters and the initial
state are read from the scenario and checked against the resolved scenario of rollsim's result. The model has the
top face only: the comparison ends at 0.25 s, long before the wheel reaches the edge (0.78 s); a Siconos run whose
wheel leaves the face's span |s| < l/2, or whose Newton loop (the relation is nonlinear) does not converge, is an
error (exit 4). Closed form: the first flight (the centre falls freely, the table swings on its spring,
theta1 = theta1(0) cos(sqrt(kt/It) t) from rest), so the first impact time (the root of g(t)) and the state at
fixed times before it. rollsim closes a contact when a rebound is slower than its capture velocity; Moreau-Jean
has no such threshold, but the rebounds that differ are far below the compared first impacts.

Siconos 4.4 and a Python relation: SWIG's director for the relation's C() (the Jacobian, pure virtual in Relation)
returns a new matrix copied from Python, and MoreauJeanOSI::computeFreeOutput binds a reference to that temporary,
so an unmodified subclass crashes (SIGSEGV) at the first contact. TableFaceR overrides C() to return a persistent
Siconos matrix that computeJachq keeps equal to the Jacobian, which Siconos then uses as it would its own.

Siconos's impact time is the midpoint of the step whose normal contact impulse is nonzero after a step without
one. Moreau-Jean activates the contact from the gap predicted at the start of a step, so the impulse comes in the
step where the gap closes or in the next: the midpoint lies within 3h/2 of the closing (for the first landing on
the table it is one step late at h = 1e-4: 0.95 h). Only the first impacts (flights much longer than the
compared steps) and fixed times (multiples of every step, between impacts) are compared. For the table, h = 1e-2
is shown but is not yet first order: its flights are 3 to 6 steps long.

Usage:
    peer_siconos.py [bouncing_ball|table_landing] --rollsim build/rollsim   # run rollsim itself for the reference
    peer_siconos.py [bouncing_ball] --result ball.h5            # or read a result file of the case's scenario
    peer_siconos.py --steps 1e-2 1e-3 --json                    # fewer steps; a JSON line instead of the table
Exit codes: 0 done; 1 rollsim failed or its result lacks what is compared (or is of other parameters); 2 bad
arguments; 3 siconos missing; 4 a Siconos run cannot vouch for its answer (Newton loop, contact off the face).

Further cases join as classes with the interface of BouncingBall (scenario, reference(result), closed_form(),
siconos(sk, h), the compared quantities: n_impacts, check_times, groups) registered in CASES.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import tomllib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

DEFAULT_STEPS = (1e-2, 1e-3, 1e-4, 1e-5)


class PeerError(Exception):
    """rollsim's reference could not be obtained or lacks a compared quantity (exit 1)."""


class SiconosRunError(Exception):
    """A Siconos run cannot vouch for its answer (exit 4)."""


def import_siconos():
    """siconos.kernel, or None when python3-siconos is not installed."""
    try:
        import siconos.kernel as sk  # noqa: PLC0415 (optional dependency)
    except ImportError:
        return None
    return sk


class Answer:
    """What is compared: the first impact times and named states (one value per check time) at fixed times.

    A partial answer (a closed form of the first flight only) knows fewer impacts than compared and NaN for the
    states it does not know; the errors against it cover what it knows."""

    def __init__(self, impact_times, states: dict, wall=float("nan"), partial=False):
        self.impact_times = np.asarray(impact_times, dtype=float)
        self.states = {k: np.asarray(v, dtype=float) for k, v in states.items()}
        self.wall = wall
        self.partial = partial

    def errors(self, reference: "Answer", n_impacts: int, groups: dict) -> dict:
        """Largest |impact time difference| over the first n_impacts and, per group of states, the largest
        |state difference| over the group's states and the check times (NaN where the reference knows none)."""
        n = min(n_impacts, len(reference.impact_times)) if reference.partial else n_impacts
        if n == 0:
            out = {"impact_time_error": float("nan")}
        elif len(self.impact_times) < n or len(reference.impact_times) < n:
            out = {"impact_time_error": float("inf")}
        else:
            out = {"impact_time_error": float(np.max(np.abs(self.impact_times[:n] - reference.impact_times[:n])))}
        for key, (_label, _unit, names) in groups.items():
            diffs = np.concatenate([np.abs(self.states[k] - reference.states[k]) for k in names])
            known = np.isfinite(np.concatenate([reference.states[k] for k in names]))
            out[key] = float(np.max(diffs[known])) if known.any() else float("nan")
        return out


def sample(path, r, column: str, t: float) -> float:
    """The trajectory's value of column at the output sample t (rollsim writes samples on multiples of output_dt)."""
    tt = r.trajectory["time"]
    k = int(np.argmin(np.abs(tt - t)))
    if abs(tt[k] - t) > 1e-9:
        raise PeerError(f"{path}: no sample at t = {t} s (output_dt must divide it)")
    return float(r.trajectory[column][k])


def load_result(path):
    import rollsim  # noqa: PLC0415 (tools/python)

    try:
        return rollsim.load(path)
    except (rollsim.RollsimFileError, OSError) as e:
        raise PeerError(f"cannot read rollsim's result: {e}") from e


def impact_times(path, r, n: int):
    kinds = np.asarray(r.events.get("kind", []))
    times = np.asarray(r.events.get("time", []))[kinds == "impact"]
    if len(times) < n:
        raise PeerError(f"{path}: {len(times)} impact events, {n} needed")
    return times[:n]


class BouncingBall:
    name = "bouncing_ball"
    scenario = os.path.join(ROOT, "scenarios", "bouncing_ball.toml")
    rollsim_args = ()
    # Compared: the first impacts (the 5th flight lasts 2 e^5 t0 = 0.3 s, 30 times the largest step) and the
    # heights at fixed times (multiples of every step and of the scenario's output_dt) up to t_end.
    n_impacts = 5
    check_times = (0.3, 0.8, 1.5, 2.5)
    t_end = 3.0
    groups = {"position_error": ("y", "m", ("y",))}
    title = "Siconos Moreau-Jean (theta 1/2, LCP)"

    def __init__(self):
        with open(self.scenario, "rb") as f:
            sc = tomllib.load(f)
        p = sc["parameters"]
        self.m, self.g, self.e = float(p["m"]), float(p["g"]), float(p["e"])
        self.h = float(sc["initial"]["y"])
        self.output_dt = float(sc["simulation"]["output_dt"])

    # -- closed form
    def closed_form(self) -> Answer:
        t0 = math.sqrt(2 * self.h / self.g)
        e = self.e
        times = [t0 * (1 + 2 * e * (1 - e ** (n - 1)) / (1 - e)) for n in range(1, 60)]
        return Answer(times[: self.n_impacts], {"y": [self.height(t, times) for t in self.check_times]})

    def height(self, t, impact_times):
        """y(t) on the parabola after the last impact before t."""
        g, e = self.g, self.e
        v1 = math.sqrt(2 * g * self.h)
        if t <= impact_times[0]:
            return self.h - 0.5 * g * t * t
        n = max(i for i, tn in enumerate(impact_times) if tn <= t) + 1  # impacts so far
        v = v1 * e**n  # upward speed after impact n
        s = t - impact_times[n - 1]
        return v * s - 0.5 * g * s * s

    # -- rollsim's result
    def reference(self, path: str) -> Answer:
        r = load_result(path)
        times = impact_times(path, r, self.n_impacts)
        return Answer(times, {"y": [sample(path, r, "y", t) for t in self.check_times]})

    # -- Siconos
    def siconos(self, sk, step: float) -> Answer:
        ball = sk.LagrangianLinearTIDS([self.h], [0.0], np.array([[self.m]]))
        ball.setFExtPtr(np.array([-self.m * self.g]))
        contact = sk.Interaction(sk.NewtonImpactNSL(self.e), sk.LagrangianLinearTIR(np.array([[1.0]])))
        nsds = sk.NonSmoothDynamicalSystem(0.0, self.t_end)
        nsds.insertDynamicalSystem(ball)
        nsds.link(contact, ball)
        sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, step), sk.MoreauJeanOSI(0.5), sk.LCP())
        checks = {round(t / step): i for i, t in enumerate(self.check_times)}
        heights = [float("nan")] * len(self.check_times)
        impacts = []
        k, pushing = 0, False
        start = time.perf_counter()
        while sim.hasNextEvent():
            sim.computeOneStep()
            k += 1
            impulse = ball.p(1)[0] > 0
            if impulse and not pushing:
                impacts.append((k - 0.5) * step)
            pushing = impulse
            if k in checks:
                heights[checks[k]] = ball.q()[0]
            sim.nextStep()
        return Answer(impacts, {"y": heights}, time.perf_counter() - start)


class TableLanding:
    name = "table_landing"
    scenario = os.path.join(ROOT, "scenarios", "table_contact.toml")
    t_end = 0.25
    rollsim_args = ("--set", f"simulation.t_end={t_end}")
    # Compared: the first impacts (flights of 64, 64 and 32 ms, 32 steps and more of 1e-3 s; rollsim's impacts 4
    # to 9 follow after 16 ... 0.5 ms) and the states at fixed times between the impacts: in the first flight, in
    # the second and third flights, while sliding after the last impacts (0.193 s) and while rolling (from 0.231 s).
    n_impacts = 3
    check_times = (0.05, 0.1, 0.14, 0.22, 0.25)
    coordinates = ("theta1", "s", "d", "phi")
    groups = {"position_error": ("s, d", "m", ("s", "d")),
              "angle_error": ("theta1, phi", "rad", ("theta1", "phi")),
              "velocity_error": ("s', d'", "m/s", ("der_s", "der_d")),
              "rate_error": ("theta1', phi'", "rad/s", ("der_theta1", "der_phi"))}
    parameters = ("m", "r", "J", "It", "l", "g", "mu", "e", "kt")
    title = "Siconos Moreau-Jean (theta 1/2, 2D friction contact, Lemke; nonlinear gap in Python)"
    newton_tolerance = 1e-10

    def __init__(self):
        with open(self.scenario, "rb") as f:
            sc = tomllib.load(f)
        self.p = {k: float(sc["parameters"][k]) for k in self.parameters}
        self.q0 = {k: float(sc.get("initial", {}).get(k, 0.0)) for k in self.coordinates}
        self.v0 = {k: float(sc.get("initial_rates", {}).get(k, 0.0)) for k in self.coordinates}

    # -- coordinates: rollsim's (theta1, s, d, phi) in the table's frame, Siconos's absolute (theta1, X, Y, phi)
    @staticmethod
    def to_absolute(th, s, d, phi, dth, ds, dd, dphi):
        c, sn = math.cos(th), math.sin(th)
        q = (th, s * c - d * sn, s * sn + d * c, phi)
        v = (dth, ds * c - dd * sn - (s * sn + d * c) * dth, ds * sn + dd * c + (s * c - d * sn) * dth, dphi)
        return q, v

    @staticmethod
    def to_table(q, v) -> dict:
        th, x, y, phi = q
        dth, dx, dy, dphi = v
        c, sn = math.cos(th), math.sin(th)
        s, d = x * c + y * sn, -x * sn + y * c
        return {"theta1": th, "s": s, "d": d, "phi": phi, "der_theta1": dth,
                "der_s": dx * c + dy * sn + d * dth, "der_d": -dx * sn + dy * c - s * dth, "der_phi": dphi}

    def initial_absolute(self):
        q, v = self.q0, self.v0
        return self.to_absolute(q["theta1"], q["s"], q["d"], q["phi"], v["theta1"], v["s"], v["d"], v["phi"])

    def state_names(self):
        return [k for k in self.coordinates] + ["der_" + k for k in self.coordinates]

    # -- closed form of the first flight
    def flight(self, t):
        """The absolute (q, v) at t in the first flight: free fall of the centre, the table on its spring."""
        (th0, x0, y0, phi0), (dth0, dx0, dy0, dphi0) = self.initial_absolute()
        w = math.sqrt(self.p["kt"] / self.p["It"])
        g = self.p["g"]
        q = (th0 * math.cos(w * t) + dth0 / w * math.sin(w * t), x0 + dx0 * t, y0 + dy0 * t - 0.5 * g * t * t,
             phi0 + dphi0 * t)
        v = (-th0 * w * math.sin(w * t) + dth0 * math.cos(w * t), dx0, dy0 - g * t, dphi0)
        return q, v

    def flight_gap(self, t):
        (th, x, y, _), _v = self.flight(t)
        return -x * math.sin(th) + y * math.cos(th) - self.p["r"]

    def closed_form(self) -> Answer:
        from scipy.optimize import brentq  # noqa: PLC0415

        if self.flight_gap(0.0) <= 0:
            raise PeerError(f"{self.scenario}: the wheel does not start above the table (gap {self.flight_gap(0)})")
        grid = np.arange(1, int(self.t_end / 1e-4) + 1) * 1e-4
        closing = [t for t in grid if self.flight_gap(t) <= 0]
        if not closing:
            raise PeerError(f"{self.scenario}: the wheel does not land before {self.t_end} s")
        t1 = brentq(self.flight_gap, closing[0] - 1e-4, closing[0], xtol=1e-15, rtol=4 * np.finfo(float).eps)
        states = {k: [] for k in self.state_names()}
        for t in self.check_times:
            known = self.to_table(*self.flight(t)) if t < t1 else {}
            for k in states:
                states[k].append(known.get(k, float("nan")))
        return Answer([t1], states, partial=True)

    # -- rollsim's result
    def reference(self, path: str) -> Answer:
        r = load_result(path)
        for k in self.parameters:
            self.check_value(path, r, f"parameters.{k}", self.p[k])
        for k in self.coordinates:
            self.check_value(path, r, f"initial.{k}", self.q0[k])
            self.check_value(path, r, f"initial_rates.{k}", self.v0[k])
        times = impact_times(path, r, self.n_impacts)
        return Answer(times, {k: [sample(path, r, k, t) for t in self.check_times] for k in self.state_names()})

    def check_value(self, path, r, key, value):
        got = r.param(key)
        if got is None:
            raise PeerError(f"{path}: {key} is absent from its resolved scenario (not a run of {self.scenario}?)")
        if isinstance(got, str):  # a user model's start value is an expression key: a number is kept as its text
            try:
                got = float(got)
            except ValueError:
                raise PeerError(f"{path}: {key} = {got!r} is an expression; the Siconos model takes numbers") from None
        if not isinstance(got, float) or abs(got - value) > 1e-12 * max(1.0, abs(value)):
            raise PeerError(f"{path}: {key} = {got}, the Siconos model uses {value} from {self.scenario}")

    # -- Siconos
    def siconos(self, sk, step: float) -> Answer:
        import siconos.numerics as sn  # noqa: PLC0415 (optional dependency)

        p = self.p
        q0, v0 = self.initial_absolute()
        wheel_table = sk.LagrangianLinearTIDS(list(q0), list(v0), np.diag([p["It"], p["m"], p["m"], p["J"]]))
        wheel_table.setKPtr(np.diag([p["kt"], 0.0, 0.0, 0.0]))
        wheel_table.setFExtPtr(np.array([0.0, 0.0, -p["m"] * p["g"], 0.0]))
        relation = table_face_relation(sk, p["r"])
        contact = sk.Interaction(sk.NewtonImpactFrictionNSL(p["e"], 0.0, p["mu"], 2), relation)
        nsds = sk.NonSmoothDynamicalSystem(0.0, self.t_end)
        nsds.insertDynamicalSystem(wheel_table)
        nsds.link(contact, wheel_table)
        sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, step), sk.MoreauJeanOSI(0.5),
                              sk.FrictionContact(2, sn.SICONOS_FRICTION_2D_LEMKE))
        sim.setNewtonTolerance(self.newton_tolerance)
        sim.setNewtonMaxIteration(50)
        checks = {round(t / step): i for i, t in enumerate(self.check_times)}
        states = {k: [float("nan")] * len(self.check_times) for k in self.state_names()}
        impacts = []
        k, pushing = 0, False
        start = time.perf_counter()
        while sim.hasNextEvent():
            sim.computeOneStep()
            k += 1
            if not sim.isNewtonConverge():
                raise SiconosRunError(f"h = {step}: Siconos's Newton loop did not converge at t = {k * step:.6g} s "
                                      f"(tolerance {self.newton_tolerance}, {sim.getNewtonNbIterations()} iterations)")
            q, v = wheel_table.q(), wheel_table.velocity()
            now = self.to_table(q, v)
            if not abs(now["s"]) < p["l"] / 2:
                raise SiconosRunError(f"h = {step}: the wheel left the table's face (s = {now['s']:.6g} m at "
                                      f"t = {k * step:.6g} s), which this model does not have")
            impulse = contact.lambda_(1)[0] > 0
            if impulse and not pushing:
                impacts.append((k - 0.5) * step)
            pushing = impulse
            if k in checks:
                for name, value in now.items():
                    states[name][checks[k]] = value
            sim.nextStep()
        return Answer(impacts, states, time.perf_counter() - start)


def table_face(q, r: float):
    """The gap of the wheel to the table's top face and its Jacobian rows over q = (theta1, X, Y, phi): the normal
    row dg/dq and the tangential row, whose product with q' is rollsim's slip s' + r (phi' - theta1')."""
    th, x, y = q[0], q[1], q[2]
    c, sn = math.cos(th), math.sin(th)
    s, d = x * c + y * sn, -x * sn + y * c
    return d - r, (-s, -sn, c, 0.0), (d - r, c, sn, r)


def table_face_relation(sk, r: float):
    """The wheel's contact with the table's top face as a Siconos LagrangianScleronomousR over
    q = (theta1, X, Y, phi): h(q) = (gap, 0) (the tangential part has no position), the Jacobian (normal row,
    tangential row) of table_face."""

    class TableFaceR(sk.LagrangianScleronomousR):
        def __init__(self):
            sk.LagrangianScleronomousR.__init__(self)
            # Siconos 4.4 binds a reference to what C() returns: keep the Jacobian in a matrix that lives on.
            self.jacobian = sk.SimpleMatrix(2, 4)

        def C(self):  # noqa: N802 (Siconos's name)
            return self.jacobian

        def computeh(self, q, z, y):  # noqa: N802
            y[0] = table_face(q, r)[0]
            y[1] = 0.0

        def computeJachq(self, q, z):  # noqa: N802
            rows = table_face(q, r)[1:]
            jac = self.jachq()  # a view of Siconos's own Jacobian (used for p = J^T lambda)
            for i, row in enumerate(rows):
                jac[i, :] = row
                for j, value in enumerate(row):
                    self.jacobian.setValue(i, j, value)

        def computeDotJachq(self, q, z, qdot):  # noqa: N802
            # The time derivative of the Jacobian enters only accelerations (event-driven schemes); Moreau-Jean
            # does not use it. (The base method cannot take its arguments back from Python in Siconos 4.4.)
            pass

    return TableFaceR()


# The cases.
CASES = {BouncingBall.name: BouncingBall, TableLanding.name: TableLanding}


def run_rollsim(binary: str, case, directory: str) -> tuple[str, float]:
    """Run `rollsim run` on the case's scenario; the result file and the wall time (with the model setup)."""
    out = os.path.join(directory, case.name + ".h5")
    start = time.perf_counter()
    try:
        p = subprocess.run([binary, "run", case.scenario, *case.rollsim_args, "-o", out, "-q"], capture_output=True,
                           text=True)
    except OSError as e:
        raise PeerError(f"cannot start rollsim ({binary}): {e}") from e
    wall = time.perf_counter() - start
    if p.returncode != 0:
        raise PeerError(f"rollsim run {case.scenario} failed with exit {p.returncode}: "
                        f"{(p.stderr or p.stdout).strip()[:2000]}")
    return out, wall


def compare(case, sk, steps, reference: Answer) -> dict:
    closed = case.closed_form()
    rows = []
    for h in steps:
        a = case.siconos(sk, h)
        row = {"h": h, "steps": round(case.t_end / h), "wall_s": a.wall}
        row.update(a.errors(reference, case.n_impacts, case.groups))
        row.update({k + "_closed_form": v for k, v in a.errors(closed, case.n_impacts, case.groups).items()})
        rows.append(row)
    ref = {"wall_s": reference.wall}
    ref.update({k + "_closed_form": v for k, v in reference.errors(closed, case.n_impacts, case.groups).items()})
    return {"case": case.name, "rows": rows, "rollsim": ref,
            "closed_form": {"impacts": len(closed.impact_times),
                            "check_times": [t for i, t in enumerate(case.check_times)
                                            if all(np.isfinite(v[i]) for v in closed.states.values())]}}


def order(e1, e0, h1, h0):
    if not (e1 > 0 and e0 > 0) or math.isinf(e1) or math.isinf(e0) or math.isnan(e1) or math.isnan(e0):
        return float("nan")
    return math.log(e0 / e1) / math.log(h0 / h1)


def print_table(res: dict, case):
    keys = ["impact_time_error"] + list(case.groups)
    labels = {"impact_time_error": ("impact t", "s")}
    labels.update({k: (label, unit) for k, (label, unit, _names) in case.groups.items()})
    cf = res["closed_form"]
    print(f"{res['case']}: {case.title} against rollsim (event-driven) and the closed form")
    print(f"  compared: the first {case.n_impacts} impact times; "
          + "; ".join(f"{labels[k][0]} [{labels[k][1]}]" for k in case.groups)
          + f" at t = {', '.join(map(str, case.check_times))} s (errors: the largest difference over these)")
    if cf["impacts"] < case.n_impacts or len(cf["check_times"]) < len(case.check_times):
        print(f"  the closed form knows {cf['impacts']} impact(s) and the states at t = "
              f"{', '.join(map(str, cf['check_times'])) or '(none)'} s (the first flight)")
    head = f"{'h [s]':>8} {'steps':>7} {'wall [s]':>9} |"
    for k in keys:
        head += f" {labels[k][0] + ' err':>14} {'order':>5}"
    head += " | closed form:" + "".join(f" {labels[k][0]:>12}" for k in keys)
    print(head)
    prev = None
    for r in res["rows"]:
        line = f"{r['h']:8.0e} {r['steps']:7d} {r['wall_s']:9.3f} |"
        for k in keys:
            o = order(r[k], prev[k], r["h"], prev["h"]) if prev else float("nan")
            line += f" {r[k]:14.3e} {o:5.2f}"
        line += " |            " + "".join(f" {r[k + '_closed_form']:12.2e}" for k in keys)
        print(line)
        prev = r
    rs = res["rollsim"]
    print(f"rollsim: wall {rs['wall_s']:.3f} s (the whole run of {os.path.basename(case.scenario)}"
          f"{' ' + ' '.join(case.rollsim_args) if case.rollsim_args else ''}, the model setup included); "
          "against the closed form: "
          + ", ".join(f"{labels[k][0]} {rs[k + '_closed_form']:.2e} {labels[k][1]}" for k in keys))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case", nargs="?", default="bouncing_ball", choices=sorted(CASES))
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--rollsim", help="the rollsim program: run the case's scenario for the reference")
    src.add_argument("--result", help="a rollsim result file of the case's scenario")
    ap.add_argument("--steps", type=float, nargs="+", default=list(DEFAULT_STEPS), help="Siconos steps h [s]")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead of the table")
    args = ap.parse_args(argv)
    if any(not (0 < h <= 0.1) for h in args.steps):
        ap.error(f"--steps: every step must lie in (0, 0.1] s, got {args.steps}")
    case = CASES[args.case]()
    bad = [h for h in args.steps if any(abs(t / h - round(t / h)) > 1e-6 for t in case.check_times)]
    if bad:
        ap.error(f"--steps: {bad} do not divide the compared times {case.check_times} s")
    sk = import_siconos()
    if sk is None:
        print("peer_siconos: siconos is not installed (Debian: apt-get install python3-siconos, or "
              "tools/install-deps without ROLLSIM_DEPS=core)", file=sys.stderr)
        return 3
    try:
        with tempfile.TemporaryDirectory() as d:
            if args.rollsim:
                path, wall = run_rollsim(args.rollsim, case, d)
            else:
                path, wall = args.result, float("nan")
            reference = case.reference(path)
            reference.wall = wall
    except PeerError as e:
        print(f"peer_siconos: {e}", file=sys.stderr)
        return 1
    try:
        res = compare(case, sk, args.steps, reference)
    except PeerError as e:
        print(f"peer_siconos: {e}", file=sys.stderr)
        return 1
    except SiconosRunError as e:
        print(f"peer_siconos: {args.case}: {e}", file=sys.stderr)
        return 4
    if args.json:
        print(json.dumps(res))
    else:
        print_table(res, case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
