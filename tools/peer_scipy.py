#!/usr/bin/python3
"""A peer of rollsim written the way a researcher would: scipy's solve_ivp (DOP853) with event functions.

Tipping table: the Lagrange equations of the wheel-on-table model (docs/equations.md §1, general form with
wheel inertia J and table inertia I), derived here from T and V:
    (I + m s^2) th1'' + 2 m s s' th1' - m r s th1'^2 + m g s cos th1 = 0
    (J + m r^2) th2'' + m r s th1'^2 - m g r sin th1 = 0,      s = r (th1 - th2)
events: the table edge |s| = l/2 (terminal) and the normal force N = 0 (recorded).

Rolling disk (docs/equations.md §2, dimensionless): the fields F+, F- and the rolling field F0 = (y, -x, 0),
mode switching in a Python loop on the events z = 0 (sliding) and |x| = 1 (rolling).

Usage as a script:
    peer_scipy.py table [--theta1 0.01] [--rtol 1e-10] [--atol 1e-12] [--t-end 10] [--stop-at-lift-off]
    peer_scipy.py disk --x 0 --y 0 --z 3 [--j 0.5] [--t-end 40] [--rtol 1e-10]
prints a JSON line with the result.
"""
import argparse
import json
import math
import sys

import numpy as np
from scipy.integrate import solve_ivp

# ---------------------------------------------------------------- tipping table


class Table:
    def __init__(self, m=1.0, r=0.25, J=None, M=1.0, l=1.0, I=None, g=9.81):
        self.m, self.r, self.l, self.g = m, r, l, g
        self.J = 0.5 * m * r * r if J is None else J
        self.I = M * l * l / 12.0 if I is None else I

    def rhs(self, t, x):
        th1, th2, w1, w2 = x
        m, r, g = self.m, self.r, self.g
        s = r * (th1 - th2)
        sd = r * (w1 - w2)
        a1 = -(2 * m * s * sd * w1 - m * r * s * w1 * w1 + m * g * s * math.cos(th1)) / (self.I + m * s * s)
        a2 = (m * g * r * math.sin(th1) - m * r * s * w1 * w1) / (self.J + m * r * r)
        return [w1, w2, a1, a2]

    def normal_force(self, x):
        th1, th2, w1, w2 = x
        a1 = self.rhs(0, x)[2]
        m, r = self.m, self.r
        s = r * (th1 - th2)
        sd = r * (w1 - w2)
        return m * (2 * sd * w1 + s * a1 - r * w1 * w1) + m * self.g * math.cos(th1)

    def run(self, theta1=0.01, t_end=10.0, rtol=1e-10, atol=1e-12, stop_at_lift_off=False, dense=False):
        def edge(t, x):
            return 0.5 * self.l - abs(self.r * (x[0] - x[1]))

        edge.terminal, edge.direction = True, -1

        def lift_off(t, x):
            return self.normal_force(x)

        lift_off.terminal, lift_off.direction = stop_at_lift_off, -1
        sol = solve_ivp(self.rhs, (0.0, t_end), [theta1, 0.0, 0.0, 0.0], method="DOP853", rtol=rtol, atol=atol,
                        events=[edge, lift_off], dense_output=dense)
        out = {"t_final": float(sol.t[-1]), "x_final": [float(v) for v in sol.y[:, -1]],
               "t_edge": float(sol.t_events[0][0]) if len(sol.t_events[0]) else float("nan"),
               "t_lift_off": float(sol.t_events[1][0]) if len(sol.t_events[1]) else float("nan"),
               "nfev": int(sol.nfev), "status": int(sol.status)}
        if len(sol.t_events[0]):
            out["x_final"] = [float(v) for v in sol.y_events[0][0]]
            out["t_final"] = out["t_edge"]
        return out

    def state_at(self, theta1, T, rtol, atol):
        """The state at time T (no events before T in the cases used)."""
        sol = solve_ivp(self.rhs, (0.0, T), [theta1, 0.0, 0.0, 0.0], method="DOP853", rtol=rtol, atol=atol)
        return sol.y[:, -1], int(sol.nfev)


# ---------------------------------------------------------------- rolling disk


def disk_run(x0, y0, z0, j=0.5, t_end=40.0, rtol=1e-10, atol=1e-12, max_switches=100000):
    """Dimensionless Coulomb disk with mode switching. Returns symbols, final state, rolling radius."""
    k = 1.0 + j

    def f_plus(t, s):
        x, y, z = s
        return [y, -k * x - j, -k * (x + 1.0)]

    def f_minus(t, s):
        x, y, z = s
        return [y, -k * x + j, -k * (x - 1.0)]

    def f_roll(t, s):
        x, y, z = s
        return [y, -x, 0.0]

    def z_zero(t, s):
        return s[2]

    z_zero.terminal = True

    def x_hi(t, s):
        return s[0] - 1.0

    x_hi.terminal, x_hi.direction = True, 1

    def x_lo(t, s):
        return s[0] + 1.0

    x_lo.terminal, x_lo.direction = True, -1

    t, state = 0.0, np.array([x0, y0, z0], dtype=float)
    if z0 > 0:
        mode = 1
    elif z0 < 0:
        mode = -1
    elif abs(x0) < 1:
        mode = 0
    else:
        mode = -1 if x0 > 0 else 1  # on z = 0 outside the strip both fields point the same way
    symbols = {1: "+", -1: "-", 0: "0"}[mode]
    radius = float("nan")
    if mode == 0:
        radius = math.hypot(state[0], state[1])
    n_switch = 0
    while t < t_end and n_switch < max_switches:
        if mode == 0:
            sol = solve_ivp(f_roll, (t, t_end), state, method="DOP853", rtol=rtol, atol=atol, events=[x_hi, x_lo])
        else:
            z_zero.direction = -1 if mode == 1 else 1
            sol = solve_ivp(f_plus if mode == 1 else f_minus, (t, t_end), state, method="DOP853", rtol=rtol,
                            atol=atol, events=[z_zero])
        if sol.status != 1:  # reached t_end
            t, state = float(sol.t[-1]), sol.y[:, -1].copy()
            break
        n_switch += 1
        if mode == 0:
            hi = len(sol.t_events[0]) > 0
            t = float(sol.t_events[0][0] if hi else sol.t_events[1][0])
            state = (sol.y_events[0][0] if hi else sol.y_events[1][0]).copy()
            state[0] = 1.0 if hi else -1.0
            state[2] = 0.0
            mode = -1 if hi else 1
        else:
            t = float(sol.t_events[0][0])
            state = sol.y_events[0][0].copy()
            state[2] = 0.0
            if abs(state[0]) < 1.0:
                mode = 0
                radius = math.hypot(state[0], state[1])
            else:
                mode = -mode
        symbols += {1: "+", -1: "-", 0: "0"}[mode]
    return {"symbols": symbols, "t_final": t, "x_final": [float(v) for v in state], "final_mode": mode,
            "rolling_radius": radius, "n_switches": n_switch}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    t = sub.add_parser("table")
    t.add_argument("--theta1", type=float, default=0.01)
    t.add_argument("--t-end", type=float, default=10.0)
    t.add_argument("--rtol", type=float, default=1e-10)
    t.add_argument("--atol", type=float, default=1e-12)
    t.add_argument("--stop-at-lift-off", action="store_true")
    d = sub.add_parser("disk")
    for k, v in (("--x", 0.0), ("--y", 0.0), ("--z", 3.0), ("--j", 0.5), ("--t-end", 40.0), ("--rtol", 1e-10),
                 ("--atol", 1e-12)):
        d.add_argument(k, type=float, default=v)
    a = ap.parse_args(argv)
    if a.what == "table":
        r = Table().run(a.theta1, a.t_end, a.rtol, a.atol, a.stop_at_lift_off)
    else:
        r = disk_run(a.x, a.y, a.z, a.j, a.t_end, a.rtol, a.atol)
    print(json.dumps(r))


if __name__ == "__main__":
    main(sys.argv[1:])
