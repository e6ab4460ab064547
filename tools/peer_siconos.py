#!/usr/bin/python3
"""Siconos as a peer of rollsim's contact engine: time-stepping (Moreau-Jean) against rollsim's event-driven answer.

Siconos 4.4 (Debian's python3-siconos, an optional test-only package: tools/install-deps installs it unless
ROLLSIM_DEPS=core) integrates a nonsmooth mechanical system with the Moreau-Jean scheme: a theta-method for the
smooth part, the contact impulses of each step from an LCP, Newton's restitution law on the velocity. It places an impact only to within its step h, so
its errors fall as O(h). rollsim locates each impact and integrates between them to its tolerance. This script
runs Siconos at steps h = 1e-2 ... 1e-5 and prints a work-precision table: per step the wall time and the errors of
the impact times and of the positions at fixed times, against rollsim's result and against the closed form.

Case `bouncing_ball` (scenarios/bouncing_ball.toml): a point mass dropped from y = h on the floor, restitution e.
Closed form: impact n at t_n = t0 (1 + 2 e (1 - e^(n-1))/(1 - e)), t0 = sqrt(2 h/g), and the parabolas between.
The parameters (m, g, e, h) are read from the scenario, so the three answers use the same values.

Siconos's impact time is the midpoint of the step whose contact impulse is nonzero after a step without one
(the impact lies in that step, so this is within h/2). Only the first impacts (flights much longer than the
largest step) and fixed times before t_end are compared.

Usage:
    peer_siconos.py [bouncing_ball] --rollsim build/rollsim     # run rollsim itself for the reference
    peer_siconos.py [bouncing_ball] --result ball.h5            # or read a result file of scenarios/bouncing_ball.toml
    peer_siconos.py --steps 1e-2 1e-3 --json                    # fewer steps; a JSON line instead of the table
Exit codes: 0 done; 1 rollsim failed or its result lacks what is compared; 2 bad arguments; 3 siconos missing.

Further cases (the tipping table's landing) join as classes with the interface of BouncingBall (scenario,
reference(result), closed_form(), siconos(h), compared quantities) registered in CASES.
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


def import_siconos():
    """siconos.kernel, or None when python3-siconos is not installed."""
    try:
        import siconos.kernel as sk  # noqa: PLC0415 (optional dependency)
    except ImportError:
        return None
    return sk


class Answer:
    """What is compared: the first impact times and the positions at fixed times."""

    def __init__(self, impact_times, positions, wall=float("nan")):
        self.impact_times = np.asarray(impact_times, dtype=float)
        self.positions = np.asarray(positions, dtype=float)
        self.wall = wall

    def errors(self, other: "Answer", n_impacts: int):
        """Largest |impact time difference| over the first n_impacts and largest |position difference|."""
        if len(self.impact_times) < n_impacts or len(other.impact_times) < n_impacts:
            return float("inf"), float(np.max(np.abs(self.positions - other.positions)))
        dt = np.max(np.abs(self.impact_times[:n_impacts] - other.impact_times[:n_impacts]))
        return float(dt), float(np.max(np.abs(self.positions - other.positions)))


class BouncingBall:
    name = "bouncing_ball"
    scenario = os.path.join(ROOT, "scenarios", "bouncing_ball.toml")
    # Compared: the first impacts (the 5th flight lasts 2 e^5 t0 = 0.3 s, 30 times the largest step) and the
    # heights at fixed times (multiples of every step and of the scenario's output_dt) up to t_end.
    n_impacts = 5
    check_times = (0.3, 0.8, 1.5, 2.5)
    t_end = 3.0
    coordinate = "y"

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
        return Answer(times[: self.n_impacts], [self.height(t, times) for t in self.check_times])

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
        import rollsim  # noqa: PLC0415 (tools/python)

        try:
            r = rollsim.load(path)
        except (rollsim.RollsimFileError, OSError) as e:
            raise PeerError(f"cannot read rollsim's result: {e}") from e
        kinds = np.asarray(r.events.get("kind", []))
        times = np.asarray(r.events.get("time", []))[kinds == "impact"]
        if len(times) < self.n_impacts:
            raise PeerError(f"{path}: {len(times)} impact events, {self.n_impacts} needed")
        tt = r.trajectory["time"]
        y = r.trajectory[self.coordinate]
        heights = []
        for t in self.check_times:
            k = int(np.argmin(np.abs(tt - t)))
            if abs(tt[k] - t) > 1e-9:
                raise PeerError(f"{path}: no sample at t = {t} s (output_dt must divide it)")
            heights.append(float(y[k]))
        return Answer(times[: self.n_impacts], heights)

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
        return Answer(impacts, heights, time.perf_counter() - start)


# The cases; the tipping table's landing is the next one (a class like BouncingBall).
CASES = {BouncingBall.name: BouncingBall}


def run_rollsim(binary: str, case, directory: str) -> tuple[str, float]:
    """Run `rollsim run` on the case's scenario; the result file and the wall time (with the model setup)."""
    out = os.path.join(directory, case.name + ".h5")
    start = time.perf_counter()
    try:
        p = subprocess.run([binary, "run", case.scenario, "-o", out, "-q"], capture_output=True, text=True)
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
        dt_ref, dy_ref = a.errors(reference, case.n_impacts)
        dt_cf, dy_cf = a.errors(closed, case.n_impacts)
        rows.append({"h": h, "steps": round(case.t_end / h), "wall_s": a.wall, "impact_time_error": dt_ref,
                     "position_error": dy_ref, "impact_time_error_closed_form": dt_cf,
                     "position_error_closed_form": dy_cf})
    ref_dt, ref_dy = reference.errors(closed, case.n_impacts)
    return {"case": case.name, "rows": rows,
            "rollsim": {"wall_s": reference.wall, "impact_time_error_closed_form": ref_dt,
                        "position_error_closed_form": ref_dy}}


def order(e1, e0, h1, h0):
    if not (e1 > 0 and e0 > 0) or math.isinf(e1) or math.isinf(e0):
        return float("nan")
    return math.log(e0 / e1) / math.log(h0 / h1)


def print_table(res: dict, case):
    print(f"{res['case']}: Siconos Moreau-Jean (theta 1/2, LCP) against rollsim (event-driven) and the closed form")
    print(f"  compared: the first {case.n_impacts} impact times; y at t = {', '.join(map(str, case.check_times))} s")
    print(f"{'h [s]':>8} {'steps':>8} {'wall [s]':>9} | {'impact t err':>12} {'order':>5} {'y err':>10} {'order':>5}"
          f" | closed form: {'impact t':>9} {'y':>9}")
    prev = None
    for r in res["rows"]:
        o_t = order(r["impact_time_error"], prev["impact_time_error"], r["h"], prev["h"]) if prev else float("nan")
        o_y = order(r["position_error"], prev["position_error"], r["h"], prev["h"]) if prev else float("nan")
        print(f"{r['h']:8.0e} {r['steps']:8d} {r['wall_s']:9.3f} | {r['impact_time_error']:12.3e} {o_t:5.2f}"
              f" {r['position_error']:10.3e} {o_y:5.2f} | {'':13}{r['impact_time_error_closed_form']:9.2e}"
              f" {r['position_error_closed_form']:9.2e}")
        prev = r
    rs = res["rollsim"]
    print(f"rollsim: wall {rs['wall_s']:.3f} s (the whole run of {case.name}.toml, the model setup included); against the closed form: impact"
          f" times {rs['impact_time_error_closed_form']:.2e} s, y {rs['position_error_closed_form']:.2e} m")


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
    res = compare(case, sk, args.steps, reference)
    if args.json:
        print(json.dumps(res))
    else:
        print_table(res, case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
