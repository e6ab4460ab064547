"""3-D friction: the sliding sphere (`scenarios/sliding_sphere.toml`) against the closed form of a sphere slipping
on a rough plane, and the tippe top (`scenarios/tippe_top.toml`) against Jellett's integral.

Sliding sphere (E. J. Routh, "Dynamics of a System of Rigid Bodies", Part II, 6th ed., 1905; the scenario's
header): a uniform solid sphere (I = 2/5 m r^2) whose contact slips at u0 slides with the friction -mu m g u/|u|,
so u' = -(7/2) mu g u/|u|: the slip keeps its direction, its speed falls linearly, and it vanishes at
t* = 2 |u0| / (7 mu g), from when the sphere rolls with the centre's velocity v0 - (2/7) u0. The friction
dissipates m |u0|^2 / 7.

Tippe top (J. H. Jellett, "A Treatise on the Theory of Friction", 1872; the scenario's header): with no torque
about the normal, lambda = L . (G - P) is conserved whatever the friction at the contact P; in the scenario's
coordinates lambda = R (A w_z + (C - A)(w . k) cos theta) - e C (w . k), w . k = psi' cos theta + phi',
w_z = psi' + phi' cos theta; at the start (w = n e_z, tilt theta0) lambda0 = R (A n + (C - A) n cos^2 theta0)
- e C n cos theta0. An eccentric sphere with 1 - alpha < gamma < 1 (alpha = e/R, gamma = A/C) spun fast enough
turns over (S. Rauch-Wojciechowski and N. Rutstam, "Dynamics of an inverting tippe top", SIGMA 10:017, 2014).
"""

from __future__ import annotations

import math
import os

import numpy as np
from matplotlib.figure import Figure

from .animation import animated
from .model import Check, Run, Runner, Section, loaded
from .page import finish_axes, fmt, png, table_html

FRICTION_FACTOR = 100.0    # every closed-form quantity to 100 rtol x (1 + its size)

SPHERE_INTRO = ("A uniform solid sphere set down sliding and spinning, its slip at 60° to its velocity, with Coulomb "
                "friction μ = 0.2 (the billiard ball of Routh 1905): the slip keeps its direction and falls linearly to "
                "zero at t* = 2 |u0|/(7 μ g); from then on the sphere rolls at v0 − (2/7) u0. The report takes u0 and "
                "v0 from the file's initial state.")
TIPPE_TOP_INTRO = ("The tippe top as an eccentric sphere spun at 180 rad/s nearly upright, μ = 0.3: the sliding friction "
                   "turns it over. Jellett's integral λ = L · (G − P) is conserved whatever the friction, as no torque "
                   "acts about the normal; the report computes λ from the file's angles and rates with its own formula "
                   "and compares it with the closed-form start value.")


def _params(r, *keys):
    return [float(r.param(f"parameters.{k}")) for k in keys]


def plan_sphere(runner: Runner, scen: str, name: str):
    return _plan_one(runner, scen, name, sphere_section)


def plan_tippe_top(runner: Runner, scen: str, name: str):
    return _plan_one(runner, scen, name, tippe_top_section)


def _plan_one(runner, scen, name, section):
    run = runner.prepare(f"run {name}", ["run", scen, "-q"], os.path.join(runner.workdir, f"{name}.h5"))

    def build():
        return animated(runner.animations, section(run), run.output, name)

    return build


def sphere_checks(r) -> tuple:
    """(checks, table rows, closed-form slip speed over the samples) of the sliding sphere."""
    m, rad, g, mu = _params(r, "m", "r", "g", "mu")
    rt = float(r.solver.get("rtol", 1e-10))
    tr = r.trajectory
    col = lambda k: np.asarray(tr[k], float)  # noqa: E731
    t = col("time")
    v0 = np.array([col("der_x")[0], col("der_y")[0]])
    u0 = np.array([v0[0] - rad * col("der_phi")[0], v0[1] + rad * col("der_theta")[0]])  # psi = theta = 0 at the start
    speed0 = float(np.hypot(*u0))
    t_star = 2 * speed0 / (7 * mu * g)
    v_roll = v0 - 2 / 7 * u0
    kinds = list(np.asarray(r.events.get("kind", []), str))
    times = np.asarray(r.events.get("time", []), float)
    sticks = [tk for k, tk in zip(kinds, times) if k.startswith("stick")]
    t_stick = sticks[0] if sticks else math.nan
    slide, roll = t < t_stick, t >= t_stick
    slip = np.stack([col("slip_x_floor"), col("slip_y_floor")])
    us_cf = np.maximum(speed0 - 3.5 * mu * g * t, 0.0)
    d_speed = float(np.max(np.abs(np.hypot(*slip) - us_cf)))
    d_dir = float(np.max(np.abs(slip[0] * u0[1] - slip[1] * u0[0]) / speed0))  # the slip across u0
    d_v = float(max(np.max(np.abs(col("der_x")[roll] - v_roll[0])), np.max(np.abs(col("der_y")[roll] - v_roll[1]))))
    lost = float(col("dissipated_friction")[-1])
    tol = lambda size: FRICTION_FACTOR * rt * (1 + size)  # noqa: E731
    tol_t = FRICTION_FACTOR * rt * max(float(t[-1]), 1.0)
    rows = [["slip ends (stick) at t* = 2 |u0| / (7 μ g) [s]", f"{t_star:.12g}", f"{t_stick:.12g}",
             fmt(abs(t_stick - t_star), 3), fmt(tol_t, 3)],
            ["slip speed |u0| − (7/2) μ g t, largest difference [m/s]", f"{speed0:.6g} at t = 0", "–", fmt(d_speed, 3),
             fmt(tol(speed0), 3)],
            ["slip across its first direction u0 [m/s]", "0", "–", fmt(d_dir, 3), fmt(tol(speed0), 3)],
            ["velocity after t*: v0 − (2/7) u0 [m/s]", f"({v_roll[0]:.10g}, {v_roll[1]:.10g})", "–", fmt(d_v, 3),
             fmt(tol(float(np.hypot(*v_roll))), 3)],
            ["dissipated in slip m |u0|² / 7 [J]", f"{m * speed0**2 / 7:.12g}", f"{lost:.12g}",
             fmt(abs(lost - m * speed0**2 / 7), 3), fmt(tol(m * speed0**2 / 7), 3)]]
    checks = [
        Check("the slip ends at t* = 2 |u0| / (7 μ g) (a stick event)", f"|t − t*| ≤ {FRICTION_FACTOR:g} rtol t_end "
              f"= {fmt(tol_t, 3)} s", f"{len(sticks)} stick; t − t* = {fmt(t_stick - t_star, 3)} s",
              len(sticks) == 1 and abs(t_stick - t_star) <= tol_t),
        Check("while it slides: the slip keeps its direction, its speed falls at (7/2) μ g", f"≤ {FRICTION_FACTOR:g} "
              f"rtol (1 + |u0|) = {fmt(tol(speed0), 3)} m/s", f"speed {fmt(d_speed, 3)}, across {fmt(d_dir, 3)} m/s",
              bool(slide.any()) and max(d_speed, d_dir) <= tol(speed0)),
        Check("then it rolls at v0 − (2/7) u0", f"≤ {FRICTION_FACTOR:g} rtol (1 + |v|) = "
              f"{fmt(tol(float(np.hypot(*v_roll))), 3)} m/s", f"{fmt(d_v, 3)} m/s",
              bool(roll.any()) and d_v <= tol(float(np.hypot(*v_roll)))),
        Check("energy lost in slip m |u0|² / 7", f"≤ {FRICTION_FACTOR:g} rtol (1 + its size)",
              f"{fmt(abs(lost - m * speed0**2 / 7), 3)} J", abs(lost - m * speed0**2 / 7) <= tol(m * speed0**2 / 7))]
    return checks, rows, (t, us_cf, t_star, v_roll)


def sphere_section(run: Run) -> Section:
    sec = Section("sliding-sphere", "3-D friction: the sliding sphere against its closed form", SPHERE_INTRO)
    r = loaded(run, sec)
    if r is None:
        return sec
    checks, rows, (t, us_cf, t_star, v_roll) = sphere_checks(r)
    sec.checks += checks
    sec.body.append("<h3>The run against the closed form</h3>" + table_html(
        ["quantity", "closed form", "rollsim", "difference", "tolerance"], rows))
    tr = r.trajectory
    fig = Figure(figsize=(11.4, 3.8), layout="constrained")
    a0, a1 = fig.subplots(1, 2)
    a0.plot(t, us_cf, color="0.6", linewidth=4, label="closed form |u0| − (7/2) μ g t")
    a0.plot(t, np.hypot(tr["slip_x_floor"], tr["slip_y_floor"]), color="k", linewidth=1, label="|slip|, rollsim")
    a0.axvline(t_star, color="tab:green", linestyle="--", linewidth=0.9, label="t* closed form")
    finish_axes(a0, "time [s]", "slip speed [m/s]", "Slip speed", {})
    for i, k in enumerate(("der_x", "der_y")):
        a1.plot(t, tr[k], color=f"C{i}", linewidth=1, label=f"{k} rollsim")
        a1.axhline(v_roll[i], color=f"C{i}", linestyle=":", linewidth=1, label=f"{k} closed form after t*")
    a1.axvline(t_star, color="tab:green", linestyle="--", linewidth=0.9)
    finish_axes(a1, "time [s]", "centre velocity [m/s]", "Velocity of the centre", {"ncol": 2})
    sec.figures.append(("The slip speed over the closed form (left); the centre's velocity and its closed-form value "
                        "after t* (right)", png(fig)))
    return sec


def jellett(R, e, A, C, theta, psid, phid):
    """Jellett's integral of the eccentric sphere in the scenario's Euler angles (R_Z(psi) R_X(theta) R_Z(phi))."""
    wk = psid * np.cos(theta) + phid
    wz = psid + phid * np.cos(theta)
    return R * (A * wz + (C - A) * wk * np.cos(theta)) - e * C * wk


def tippe_checks(r) -> tuple:
    R, e, A, C, n, theta0 = _params(r, "R", "e", "A", "C", "n", "theta0")
    rt = float(r.solver.get("rtol", 1e-10))
    tr = r.trajectory
    lam = jellett(R, e, A, C, *(np.asarray(tr[k], float) for k in ("theta", "der_psi", "der_phi")))
    lam0 = R * (A * n + (C - A) * n * math.cos(theta0) ** 2) - e * C * n * math.cos(theta0)
    dev = float(np.max(np.abs(lam - lam0)) / abs(lam0))
    alpha, gamma = e / R, A / C
    kinds = list(np.asarray(r.events.get("kind", []), str))
    turned = "inverted" in kinds
    t_inv = float(np.asarray(r.events["time"], float)[kinds.index("inverted")]) if turned else math.nan
    checks = [Check("Jellett's integral L · (G − P) conserved, from its closed-form start value",
                    f"max |λ − λ0| / |λ0| ≤ {FRICTION_FACTOR:g} rtol = {fmt(FRICTION_FACTOR * rt)}",
                    f"{fmt(dev, 3)} (λ0 = {lam0:.8g} kg m³/s)", dev <= FRICTION_FACTOR * rt),
              Check("it turns over (θ reaches 0.9 π: the event inverted), as 1 − α &lt; γ &lt; 1 predicts",
                    f"1 − α = {1 - alpha:.3g} &lt; γ = A/C = {gamma:.3g} &lt; 1; the event inverted",
                    f"inverted at t = {fmt(t_inv, 6)} s" if turned else "not inverted",
                    turned and 1 - alpha < gamma < 1)]
    return checks, lam, lam0


def tippe_top_section(run: Run) -> Section:
    sec = Section("tippe-top", "3-D friction: the tippe top and Jellett's integral", TIPPE_TOP_INTRO)
    r = loaded(run, sec)
    if r is None:
        return sec
    checks, lam, lam0 = tippe_checks(r)
    sec.checks += checks
    tr = r.trajectory
    t = np.asarray(tr["time"], float)
    fig = Figure(figsize=(11.4, 3.8), layout="constrained")
    a0, a1 = fig.subplots(1, 2)
    a0.plot(t, tr["theta"], color="k", linewidth=1, label="θ, the stem's angle from the vertical")
    a0.axhline(0.9 * math.pi, color="tab:green", linestyle="--", linewidth=0.9, label="0.9 π (the event inverted)")
    finish_axes(a0, "time [s]", "θ [rad]", "Turning over", {"loc": "upper left"})
    a1.plot(t, (lam - lam0) / abs(lam0), color="tab:blue", linewidth=3, alpha=0.45, label="report's λ")
    if "jellett" in tr:
        a1.plot(t, (np.asarray(tr["jellett"], float) - lam0) / abs(lam0), color="tab:orange", linewidth=0.8,
                linestyle="--", label="rollsim's output jellett")
    finish_axes(a1, "time [s]", "(λ − λ0) / |λ0| [-]", "Jellett's integral", {})
    a1.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
    sec.figures.append(("The stem's angle θ (left); Jellett's integral relative to its closed-form start value, as the "
                        "report computes it and as rollsim's output (right)", png(fig)))
    return sec
