"""Closed-form propagation of the dimensionless rolling/sliding disk (docs/equations.md §2).

An independent Python reference for the report: in each mode the motion is known in closed form, and the
transitions are located on the closed-form z(tau) (sliding) or found from the rolling circle (rolling).

Sliding, s = +1 (z > 0) or s = -1 (z < 0):

    x' = y,  y' = -(1+j) x - s j,  z' = -(1+j)(x + s)

is a harmonic oscillator of frequency w = sqrt(1+j) about the centre xc = -s j/(1+j):

    x = xc + a cos(w t) + (y0/w) sin(w t),          a = x0 - xc
    y = -a w sin(w t) + y0 cos(w t)
    z = z0 - (1+j) [ (xc + s) t + (a/w) sin(w t) + (y0/w^2)(1 - cos(w t)) ]

(z by integrating z'; (1+j)(xc + s) = s, so s z falls by t on average and every slide ends.)
Rolling (z = 0, |x| < 1): x' = y, y' = -x, a circle x = R cos(t + p), y = -R sin(t + p). It is left where
|x| reaches 1 moving outwards: at x = +1 with y > 0 into s = -1, at x = -1 with y < 0 into s = +1; a circle
with R <= 1 is never left (type A).

Transitions: a slide reaching z = 0 sticks when |x| < 1 and reverses (s -> -s) when |x| > 1.
Slide ends are found by scanning s z on a fine grid for its first sign change after the start and
polishing the root with scipy.optimize.brentq.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq


@dataclass
class Event:
    time: float
    kind: str  # stick, slip, reversal
    x: float
    y: float
    z: float


@dataclass
class Propagation:
    events: list = field(default_factory=list)
    symbols: str = ""
    final_mode: int = 0
    rolling_radius: float = float("nan")
    segments: list = field(default_factory=list)  # (t_start, mode, x, y, z) at the start of each mode


def states_at(j: float, prop: "Propagation", t):
    """Closed-form (x, y, z) at the times t (ascending), from the segments of a propagation."""
    t = np.asarray(t, dtype=float)
    x, y, z = np.empty_like(t), np.empty_like(t), np.empty_like(t)
    starts = np.array([seg[0] for seg in prop.segments])
    idx = np.clip(np.searchsorted(starts, t, side="right") - 1, 0, len(starts) - 1)
    for k, (t0, mode, x0, y0, z0) in enumerate(prop.segments):
        sel = idx == k
        if not sel.any():
            continue
        dt = t[sel] - t0
        if mode == 0:
            x[sel], y[sel] = roll(x0, y0, dt)
            z[sel] = 0.0
        else:
            x[sel], y[sel], z[sel] = slide(j, mode, x0, y0, z0, dt)
    return x, y, z


def slide(j: float, s: int, x0: float, y0: float, z0: float, t):
    """State (x, y, z) at time(s) t after the start of a slide in mode s."""
    w = math.sqrt(1.0 + j)
    xc = -s * j / (1.0 + j)
    a = x0 - xc
    wt = w * np.asarray(t, dtype=float)
    sn, cs = np.sin(wt), np.cos(wt)
    one_minus_cos = 2.0 * np.sin(0.5 * wt) ** 2  # no cancellation near t = 0
    x = xc + a * cs + (y0 / w) * sn
    y = -a * w * sn + y0 * cs
    z = z0 - (1.0 + j) * ((xc + s) * np.asarray(t, dtype=float) + (a / w) * sn + (y0 / w**2) * one_minus_cos)
    return x, y, z


def roll(x0: float, y0: float, t):
    t = np.asarray(t, dtype=float)
    return x0 * np.cos(t) + y0 * np.sin(t), y0 * np.cos(t) - x0 * np.sin(t)


def _slide_end(j, s, x0, y0, z0, t_left):
    """First t > 0 where s z(t) falls to 0, or None when it does not happen before t_left."""
    w = math.sqrt(1.0 + j)
    amp = (1.0 + j) * (abs(x0 + s * j / (1.0 + j)) / w + 2.0 * abs(y0) / w**2)
    t_max = min(t_left, s * z0 + amp + 2.0 * math.pi / w + 1.0)
    g = lambda t: s * slide(j, s, x0, y0, z0, t)[2]  # noqa: E731
    # A slide that starts on z = 0 (after a slip) starts tangentially: skip the first instants.
    n = max(2000, int(t_max / 1e-3))
    ts = np.linspace(0.0, t_max, n + 1)
    gs = g(ts)
    start = 1
    if abs(z0) == 0.0:
        # g grows like t^2 or t^3 at first; step over round-off sized values at the start.
        scale = 1e-12 * max(1.0, abs(x0), abs(y0))
        while start < gs.size and abs(gs[start]) <= scale:
            start += 1
    idx = np.nonzero(gs[start:] <= 0.0)[0]
    if idx.size == 0:
        return None
    k = start + idx[0]
    lo, hi = ts[k - 1], ts[k]
    if gs[k] == 0.0:
        return hi
    return brentq(g, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)


def _roll_end(x0, y0):
    """Time to leave the rolling circle through |x| = 1, and the new sliding mode; None for R <= 1."""
    R = math.hypot(x0, y0)
    if R <= 1.0:
        return None
    p = math.atan2(-y0, x0)  # x = R cos(t + p), y = -R sin(t + p)
    c = math.acos(1.0 / R)
    best = None
    for phase, new_mode in ((-c, -1), (math.pi - c, +1)):
        t = (phase - p) % (2.0 * math.pi)
        if t < 1e-12:
            t += 2.0 * math.pi
        if best is None or t < best[0]:
            best = (t, new_mode)
    return best


def propagate(j: float, x0: float, y0: float, z0: float, t_end: float, max_events: int = 100000) -> Propagation:
    """Events and mode symbols of the orbit from (x0, y0, z0) up to t_end."""
    out = Propagation()
    if z0 > 0:
        mode = 1
    elif z0 < 0:
        mode = -1
    elif abs(x0) < 1:
        mode = 0
    else:
        mode = -1 if x0 > 0 else 1
    sym = {1: "+", 0: "0", -1: "-"}
    out.symbols = sym[mode]
    t, x, y, z = 0.0, x0, y0, z0
    out.segments.append((t, mode, x, y, z))
    while t < t_end and len(out.events) < max_events:
        if mode == 0:
            res = _roll_end(x, y)
            if res is None or t + res[0] > t_end:
                out.rolling_radius = math.hypot(x, y)
                break
            dt, new_mode = res
            xn, yn = roll(x, y, dt)
            xn = math.copysign(1.0, xn)  # on the edge of the rolling strip
            t, x, y, z = t + dt, float(xn), float(yn), 0.0
            out.events.append(Event(t, "slip", x, y, z))
            mode = new_mode
        else:
            dt = _slide_end(j, mode, x, y, z, t_end - t)
            if dt is None:
                break
            xn, yn, _ = slide(j, mode, x, y, z, dt)
            t, x, y, z = t + dt, float(xn), float(yn), 0.0
            if abs(x) < 1.0:
                out.events.append(Event(t, "stick", x, y, z))
                out.rolling_radius = math.hypot(x, y)
                mode = 0
            else:
                out.events.append(Event(t, "reversal", x, y, z))
                mode = -mode
        out.symbols += sym[mode]
        out.segments.append((t, mode, x, y, z))
    out.final_mode = mode
    return out


def energy(j, x, y, z):
    """E = 1/2 [(1+j) x^2 + y^2 + j (y - z)^2] in units of m U^2 Omega0^2."""
    return 0.5 * ((1.0 + j) * np.square(x) + np.square(y) + j * np.square(np.asarray(y) - np.asarray(z)))
