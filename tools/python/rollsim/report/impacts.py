"""The bouncing ball (`scenarios/bouncing_ball.toml`) against its closed form: a point mass dropped from rest at
height h onto a rigid floor with Newton's restitution e.

With t0 = sqrt(2 h / g) the first impact and v1 = g t0 its approach speed, impact n comes at speed
v_n = v1 e^(n-1) at the time t_n = t0 + 2 e v1 (1 - e^(n-1)) / (g (1 - e)); the rebound e v_n rises to the apex
e^(2n) h. The impacts accumulate at t_inf = t0 + 2 e v1 / (g (1 - e)) (Zeno). rollsim's capture rule makes the
first impact whose rebound e v_n would fall below the capture velocity v_c plastic, so it comes at the impact
n* = min{n : e v_n < v_c}, between 2 e v_c / (g (1 - e)) and 2 v_c / (g (1 - e)) before t_inf, and the ball
then rests on the floor (y = 0, y' = 0, normal force m g).
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from .model import Check, Section
from .page import finish_axes, fmt, png, table_html

# Where the closed form is compared: the rebounds that rise at least this many gap tolerances
# (nonsmooth.gap_tolerance): below that the flight is of the size of the contact's own position tolerance.
BALL_APEX_GAP_FACTOR = 1e3
BALL_TIME_FACTOR = 1e3     # impact times: |t - t_n| <= 1000 rtol t_inf
BALL_SPEED_FACTOR = 1e3    # rebound speed and apex height: relative error <= 1000 rtol
BALL_REST_TOL = 1e-9       # after the capture: |y|, |y'| <= 1e-9 (m, m/s), |N - m g| <= 1e-9 m g


def ball_closed_form(h: float, g: float, e: float, n: int) -> dict:
    """Impacts 1..n of the ball dropped from rest at h: times, approach speeds, rebound apex heights, and t_inf."""
    t0 = math.sqrt(2 * h / g)
    v1 = g * t0
    k = np.arange(1, n + 1)
    return {"n": k, "time": t0 + 2 * e * v1 * (1 - e ** (k - 1)) / (g * (1 - e)), "speed": v1 * e ** (k - 1),
            "apex": h * e ** (2 * k), "t_inf": t0 + 2 * e * v1 / (g * (1 - e)), "v1": v1}


def _param(r, key):
    v = r.param(key)
    try:
        return float(str(v).strip('"'))
    except (TypeError, ValueError):
        return None


def ball_checks(r) -> tuple:
    """(checks, table rows, data for the figure) of a bouncing-ball run against the closed form."""
    g, e, m = (_param(r, f"parameters.{k}") for k in ("g", "e", "m"))
    vc, gap_tol = _param(r, "nonsmooth.capture_velocity"), _param(r, "nonsmooth.gap_tolerance")
    rt = float(r.solver.get("rtol", 1e-10))
    tr, ev = r.trajectory, r.events
    h, v0 = float(tr["y"][0]), float(tr["der_y"][0])
    if None in (g, e, m, gap_tol) or v0 != 0 or h <= 0:
        return [Check("closed form of the bouncing ball", "the ball dropped from rest, parameters g, e, m",
                      "not the closed form's case", None)], [], None
    kinds = np.asarray(ev.get("kind", []), str)
    hit = np.flatnonzero((kinds == "impact") | (kinds == "capture"))
    t, vplus = np.asarray(ev["time"], float)[hit], np.asarray(ev["der_y"], float)[hit]
    cf = ball_closed_form(h, g, e, hit.size)
    bounce = kinds[hit] == "impact"
    use = bounce & (cf["apex"] >= BALL_APEX_GAP_FACTOR * gap_tol)
    dt = np.abs(t - cf["time"])
    dv = np.abs(vplus - e * cf["speed"]) / (e * cf["speed"])
    apex = vplus**2 / (2 * g)
    dh = np.abs(apex - cf["apex"]) / cf["apex"]
    tol_t = BALL_TIME_FACTOR * rt * cf["t_inf"]
    tol_v = BALL_SPEED_FACTOR * rt
    checks = [
        Check(f"impact times against t_n (the {int(use.sum())} rebounds rising ≥ {BALL_APEX_GAP_FACTOR:g} "
              f"gap tolerances = {fmt(BALL_APEX_GAP_FACTOR * gap_tol)} m)",
              f"|t − t_n| ≤ {BALL_TIME_FACTOR:g} rtol t<sub>∞</sub> = {fmt(tol_t, 3)} s",
              f"largest {fmt(dt[use].max() if use.any() else math.nan, 3)} s", bool(use.any()) and dt[use].max() <= tol_t),
        Check("rebound speeds e v_n and apex heights e<sup>2n</sup> h (same rebounds)",
              f"relative ≤ {BALL_SPEED_FACTOR:g} rtol = {fmt(tol_v)}",
              f"speed {fmt(dv[use].max() if use.any() else math.nan, 3)}, apex "
              f"{fmt(dh[use].max() if use.any() else math.nan, 3)}",
              bool(use.any()) and max(dv[use].max(), dh[use].max()) <= tol_v)]
    data = {"t": t, "cf": cf, "dt": dt, "dv": dv, "dh": dh, "use": use, "tol_t": tol_t, "tol_v": tol_v, "g": g,
            "bounce": bounce}
    captured = kinds[hit][-1:] == "capture" if hit.size else np.array([False])
    if vc:
        n_star = 1
        while e * cf["v1"] * e ** (n_star - 1) >= vc:
            n_star += 1
        lo = cf["t_inf"] - 2 * vc / (g * (1 - e))
        hi = cf["t_inf"] - 2 * e * vc / (g * (1 - e))
        tc = float(t[-1]) if hit.size else math.nan
        checks.append(Check("capture: the first impact whose rebound e v_n is below the capture velocity v_c, "
                            "before the accumulation time t<sub>∞</sub> = t0 (1 + e)/(1 − e)",
                            f"impact n* = {n_star}; t<sub>∞</sub> − 2 v_c/(g(1−e)) ≤ t ≤ t<sub>∞</sub> − 2 e v_c/(g(1−e)):"
                            f" [{lo:.10f}, {hi:.10f}] s",
                            f"{'capture' if captured[0] else 'no capture'} at impact {hit.size}, t = {tc:.10f} s; "
                            f"t<sub>∞</sub> = {cf['t_inf']:.10f} s",
                            bool(captured[0]) and hit.size == n_star and lo <= tc <= hi))
        after = np.asarray(tr["time"], float) > tc
        if after.any():
            y, yd = np.abs(np.asarray(tr["y"], float)[after]), np.abs(np.asarray(tr["der_y"], float)[after])
            nf = [c for c in tr.keys() if c.startswith("normal_force")]
            dn = (float(np.max(np.abs(np.asarray(tr[nf[0]], float)[after] - m * g))) / (m * g)) if nf else math.nan
            checks.append(Check("at rest after the capture", f"|y|, |y'| ≤ {fmt(BALL_REST_TOL)}; "
                                f"|N − m g| ≤ {fmt(BALL_REST_TOL)} m g",
                                f"max |y| {fmt(y.max(), 2)} m, max |y'| {fmt(yd.max(), 2)} m/s, |N − m g|/(m g) "
                                f"{fmt(dn, 2)}", max(y.max(), yd.max(), dn) <= BALL_REST_TOL))
    rows = [[str(int(cf["n"][i])), f"{t[i]:.12f}", f"{cf['time'][i]:.12f}", fmt(dt[i], 2), fmt(vplus[i], 10),
             fmt(e * cf["speed"][i], 10), fmt(dv[i], 2), "yes" if use[i] else "no"]
            for i in list(range(min(8, hit.size))) + list(range(max(8, hit.size - 4), hit.size))]
    return checks, rows, data


def add_ball_closed_form(sec: Section, r):
    """The closed-form checks, their table and figure, added to the contact section of the bouncing ball."""
    checks, rows, d = ball_checks(r)
    sec.checks += checks
    if d is None:
        return
    sec.body.append("<h3>Impacts against the closed form</h3>" + table_html(
        ["n", "t rollsim [s]", "t_n closed form [s]", "|Δt| [s]", "rebound y' rollsim [m/s]", "e v_n [m/s]",
         "relative |Δ|", "compared"], rows)
        + f'<p class="note">The first 8 and the last 4 impacts. Compared where the rebound rises at least '
          f"{BALL_APEX_GAP_FACTOR:g} gap tolerances: lower flights are of the size of the contact's own position "
          "tolerance, and the capture rule ends them.</p>")
    fig = Figure(figsize=(11.4, 3.8), layout="constrained")
    a0, a1 = fig.subplots(1, 2)
    tr = r.trajectory
    a0.plot(tr["time"], tr["y"], color="k", linewidth=0.9, label="y rollsim")
    cf = d["cf"]
    a0.plot(cf["time"], np.zeros_like(cf["time"]), "o", color="tab:red", markersize=3.5, mfc="none",
            label="t_n closed form")
    apex_t = cf["time"] + np.sqrt(2 * cf["apex"] / d["g"])  # the rebound e v_n rises for e v_n / g
    a0.plot(apex_t, cf["apex"], "v", color="tab:blue", markersize=3.5, label="apex e^(2n) h closed form")
    a0.axvline(cf["t_inf"], color="tab:green", linestyle="--", linewidth=0.9, label="t_inf (accumulation)")
    finish_axes(a0, "time [s]", "y [m]", "Height over the closed form's impacts and apexes", {})
    bounce = d["bounce"]  # the capture has no rebound
    n = cf["n"]
    a1.semilogy(n, np.maximum(d["dt"], 1e-18), "o", markersize=3, label="|t − t_n| [s]")
    a1.semilogy(n[bounce], np.maximum(d["dv"][bounce], 1e-18), "s", markersize=3, label="rebound speed, relative")
    a1.semilogy(n[bounce], np.maximum(d["dh"][bounce], 1e-18), "^", markersize=3, label="apex height, relative")
    a1.axhline(d["tol_t"], color="C0", linestyle=":", linewidth=0.9)
    a1.axhline(d["tol_v"], color="C1", linestyle=":", linewidth=0.9)
    last = int(np.flatnonzero(d["use"]).max()) + 1 if d["use"].any() else 0
    a1.axvspan(0.5, last + 0.5, color="tab:green", alpha=0.07, label="compared")
    finish_axes(a1, "impact n", "error", "Errors against the closed form (dotted: tolerances)", {"loc": "upper left"},
                which="both")
    sec.figures.insert(0, ("The ball's height over the closed form's impact times and apexes (left); the errors of "
                        "the impact times, rebound speeds and apex heights (right)", png(fig)))



# ---------------------------------------------------------------------------------------------------------
# The rimless wheel (`scenarios/rimless_wheel.toml`; T. McGeer, "Passive dynamic walking", Int. J. Robotics
# Research 9(2):62-82, 1990): N spokes of length l at 2 alpha = 2 pi/N around a hub of mass M and inertia
# I = eps M l^2, on a slope gamma, restitution 0. A step (stance from phi = -alpha to +alpha) gives
# theta'-^2 = theta'+^2 + K, K = 4 (g/l) sin(alpha) sin(gamma)/(1 + eps); the impact conserves the angular momentum
# about the new tip: theta'+ = c theta'-, c = (cos 2 alpha + eps)/(1 + eps), and takes (1 - c^2) of the kinetic
# energy. The step-to-step map theta'+^2 -> c^2 (theta'+^2 + K) has the fixed point c sqrt(K/(1 - c^2)).

RIMLESS_FACTOR = 100.0     # each post-impact rate and loss to 100 rtol, relative


def rimless_checks(r) -> tuple:
    M, I, l, g, gamma = (float(r.param(f"parameters.{k}")) for k in ("M", "I", "l", "g", "gamma"))
    n_spokes = sum(1 for k in r.resolved if k.startswith("contacts.") and k.endswith(".gap"))
    rt = float(r.solver.get("rtol", 1e-10))
    alpha, eps = math.pi / n_spokes, I / (M * l**2)
    K = 4 * g / l * math.sin(alpha) * math.sin(gamma) / (1 + eps)
    c = (math.cos(2 * alpha) + eps) / (1 + eps)
    fixed = c * math.sqrt(K / (1 - c**2))
    ev = r.events
    hit = np.asarray(ev.get("kind", []), str) == "impact"
    w = np.asarray(ev["der_theta"], float)[hit]
    tr = r.trajectory
    # The first step from the start: spoke 0 along the normal (phi = 0) to phi = alpha, the hub dropping
    # l (cos gamma - cos(alpha + gamma)).
    w0, th0 = float(tr["der_theta"][0]), float(tr["theta"][0])
    first = c * math.sqrt(w0**2 + 2 * g / l * (math.cos(th0 + gamma) - math.cos(alpha + gamma)) / (1 + eps))
    pred = np.concatenate(([first], c * np.sqrt(w[:-1] ** 2 + K))) if w.size else np.array([])
    d_map = float(np.max(np.abs(w - pred) / pred)) if w.size else math.nan
    loss = np.asarray(ev["kinetic_energy_loss"], float)[hit]
    before = np.asarray(ev["kinetic_energy"], float)[hit] + loss
    d_loss = float(np.max(np.abs(loss - (1 - c**2) * before) / before)) if w.size else math.nan
    # |w_n^2 - fixed^2| = c^(2(n-1)) |w_1^2 - fixed^2| exactly on the map
    bound = c ** (2 * (w.size - 1)) * abs(first**2 - fixed**2) / (2 * fixed**2) + RIMLESS_FACTOR * rt if w.size else 0
    d_fix = abs(w[-1] - fixed) / fixed if w.size else math.nan
    tol = RIMLESS_FACTOR * rt
    checks = [Check(f"post-impact rates of all {w.size} impacts: the first from the start, each next by the "
                    "step-to-step map θ'+² → c² (θ'+² + K)", f"relative ≤ {RIMLESS_FACTOR:g} rtol = {fmt(tol)}",
                    f"largest {fmt(d_map, 3)}", w.size > 1 and d_map <= tol),
              Check("kinetic energy lost at each impact: (1 − c²) of the energy before it",
                    f"relative ≤ {RIMLESS_FACTOR:g} rtol = {fmt(tol)}", f"largest {fmt(d_loss, 3)}",
                    w.size > 1 and d_loss <= tol),
              Check("the gait's fixed point c √(K / (1 − c²)) (McGeer 1990, with the hub's inertia)",
                    f"|θ'+ − θ*| / θ* of the last impact ≤ the map's c<sup>2(n−1)</sup> |θ'1² − θ*²| / (2 θ*²) + "
                    f"{RIMLESS_FACTOR:g} rtol = {fmt(bound, 3)}",
                    f"θ* = {fixed:.10g} rad/s, last θ'+ = {w[-1]:.10g} rad/s: {fmt(d_fix, 3)}" if w.size else "no impact",
                    w.size > 1 and d_fix <= bound)]
    return checks, w, pred, fixed


def add_rimless_closed_form(sec: Section, r):
    checks, w, pred, fixed = rimless_checks(r)
    sec.checks += checks
    if not w.size:
        return
    fig = Figure(figsize=(11.4, 3.6), layout="constrained")
    a0, a1 = fig.subplots(1, 2)
    n = np.arange(1, w.size + 1)
    a0.plot(n, pred, "o", color="0.6", markersize=8, label="closed form (step-to-step map)")
    a0.plot(n, w, "x", color="k", label="rollsim")
    a0.axhline(fixed, color="tab:green", linestyle="--", linewidth=0.9, label="fixed point c √(K/(1 − c²))")
    finish_axes(a0, "impact n", "θ' just after the impact [rad/s]", "Post-impact rates", {"loc": "lower right"})
    a1.semilogy(n, np.maximum(np.abs(w - pred) / pred, 1e-18), "o", markersize=3, label="against the map")
    a1.semilogy(n, np.maximum(np.abs(w - fixed) / fixed, 1e-18), "s", markersize=3, label="against the fixed point")
    finish_axes(a1, "impact n", "relative difference", "Post-impact rates against the closed form", {}, which="both")
    sec.figures.insert(0, ("The post-impact rates over the step-to-step map and its fixed point (left); their relative "
                           "differences (right)", png(fig)))
