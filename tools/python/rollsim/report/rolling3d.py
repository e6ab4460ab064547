"""3-D rolling and its stability: the rolling coin on its steady turning motion (`scenarios/rolling_coin.toml`)
against the closed forms of that motion and of its nutation, and the Whipple bicycle
(`scenarios/bicycle_meijaard.toml`) against the eigenvalues, weave and capsize speeds Meijaard et al. published.

Sources of the reference values (also in docs/references-3d.md):
- C. Le Saux, R. I. Leine and C. Glocker, "Dynamics of a rolling disk in the presence of dry friction",
  J. Nonlinear Sci. 15:27-61, 2005: the steady motions of the rolling disk (theta' = 0, psi' = Omega),
  A Omega^2 sin(theta) cos(theta) - (C + m a^2) Omega omega3 cos(theta) = m g a sin(theta),
  omega3 = phi' + psi' sin(theta), A = m a^2/4, C = m a^2/2 for the uniform disk.
- The nutation about it, w_n^2 = Omega^2 + (14/5) Omega phi' sin(theta) + (12/5) phi'^2 - (4 g/(5 a)) cos(theta)
  (derived in docs/references-3d.md; at theta = 0 the classical (4/5)(3 v^2/a^2 - g/a) of Ju. I. Neimark and
  N. A. Fufaev, "Dynamics of Nonholonomic Systems", 1972).
- J. P. Meijaard, J. M. Papadopoulos, A. Ruina and A. L. Schwab, "Linearized dynamics equations for the balance
  and steer of a bicycle: a benchmark and review", Proc. R. Soc. A 463:1955-1982, 2007: Table 2 (below) and the
  weave and capsize speeds.
"""

from __future__ import annotations

import math
import os

import numpy as np
from matplotlib.figure import Figure

from .. import plot
from .animation import animated
from .linear import eigenvalues
from .model import Check, Run, Runner, Section, failed_run_check, load_result, loaded
from .page import finish_axes, fmt, fmt_complex, png, table_html
from .sweeps import coarse_scenario

STEADY_FACTOR = 100.0      # the steady motion held to 100 rtol x (1 + |value|)
NUTATION_TOL = 1e-9        # relative, the nutation frequency of `rollsim linearize` against w_n
COIN_T_END = 3.0           # s: a little more than one turn (2 pi / |Omega| = 2.09 s)

# Meijaard et al. 2007, Table 2: v [m/s], the weave pair (re, im), the two real roots (capsize, castering);
# at v = 0 four real roots. Copied from the paper (14 decimals; tests/test_bicycle.cpp holds the same figures).
MEIJAARD_TABLE2 = (
    (0, [3.13164324790656, -3.13164324790656, 5.53094371765393, -5.53094371765393]),
    (1, [3.52696170990070 + 0.80774027519930j, 3.52696170990070 - 0.80774027519930j, -3.13423125066578, -7.11008014637442]),
    (2, [2.68234517512745 + 1.68066296590675j, 2.68234517512745 - 1.68066296590675j, -3.07158645641514, -8.67387984831735]),
    (3, [1.70675605663975 + 2.31582447384325j, 1.70675605663975 - 2.31582447384325j, -2.63366137253667, -10.35101467245920]),
    (4, [0.41325331521125 + 3.07910818603206j, 0.41325331521125 - 3.07910818603206j, -1.42944427361326, -12.15861426576450]),
    (5, [-0.77534188219585 + 4.46486771378823j, -0.77534188219585 - 4.46486771378823j, -0.32286642900409, -14.07838969279820]),
    (6, [-1.52644486584142 + 5.87673060598709j, -1.52644486584142 - 5.87673060598709j, -0.00406690076970, -16.08537123098030]),
    (7, [-2.13875644258362 + 7.19525913329805j, -2.13875644258362 - 7.19525913329805j, 0.10268170574766, -18.15788466125262]),
    (8, [-2.69348683581097 + 8.46037971396931j, -2.69348683581097 - 8.46037971396931j, 0.14327879765713, -20.27940894394569]),
    (9, [-3.21675402252485 + 9.69377351531791j, -3.21675402252485 - 9.69377351531791j, 0.15790184030917, -22.43788559040858]),
    (10, [-3.72016840437287 + 10.90681139476287j, -3.72016840437287 - 10.90681139476287j, 0.16105338653172, -24.62459635017404]))
MEIJAARD_WEAVE_SPEED = 4.29238253634111    # m/s, the weave pair's real part crosses zero
MEIJAARD_CAPSIZE_SPEED = 6.02426201538837  # m/s, the capsize root crosses zero
MEIJAARD_SOURCE = ("J. P. Meijaard, J. M. Papadopoulos, A. Ruina and A. L. Schwab, “Linearized dynamics equations "
                   "for the balance and steer of a bicycle: a benchmark and review”, Proc. R. Soc. A 463:1955–1982, "
                   "2007, Table 2")
TABLE2_TOL = 1e-12         # rad/s: the printed 14 decimals, and the round-off of a 4 x 4 eigenproblem (|A| ~ 400)
SPEED_BRACKET = 1e-6       # m/s: the crossing lies within the published speed +- this
BIKE_DECAY_WINDOW = 5.0    # s: the roll's envelope over the last 5 s against the first 5 s
BIKE_SWEEP_POINTS = 51     # the scenario's 0-10 m/s at 0.2 m/s (its own grid: 101 points), Table 2's speeds among them


# ---------------------------------------------------------------------------------------------------------
# The rolling coin


def coin_steady_spin(theta: float, omega: float, a: float, g: float) -> float:
    """phi' of the uniform disk's steady turning at lean theta and turning rate Omega (Le Saux et al. 2005)."""
    return -(5 * a * omega**2 * math.sin(theta) * math.cos(theta) + 4 * g * math.sin(theta)) / (
        6 * a * omega * math.cos(theta))


def coin_nutation(theta: float, omega: float, phid: float, a: float, g: float) -> float:
    """The nutation frequency w_n about the steady turning (NaN where w_n^2 < 0: unstable)."""
    w2 = omega**2 + 2.8 * omega * phid * math.sin(theta) + 2.4 * phid**2 - 0.8 * g / a * math.cos(theta)
    return math.sqrt(w2) if w2 >= 0 else float("nan")


def plan_coin(runner: Runner, scen: str, name: str):
    run = runner.prepare(f"run {name}", ["run", scen, "-q", "--set", f"simulation.t_end={COIN_T_END:g}"],
                         os.path.join(runner.workdir, f"{name}.h5"))
    lin = runner.prepare(f"linearize {name}", ["linearize", scen], os.path.join(runner.workdir, f"{name}-linear.h5"))

    def build():
        return animated(runner.animations, coin_section(run, lin), run.output, name)

    return build


def coin_checks(r) -> tuple:
    """(checks, rows of the table, closed-form x and y) of a steady-turning run of the rolling coin."""
    tr = r.trajectory
    m, a, g = (float(r.param(f"parameters.{k}")) for k in ("m", "a", "g"))
    rt = float(r.solver.get("rtol", 1e-10))
    t = np.asarray(tr["time"], float)
    col = {k: np.asarray(tr[k], float) for k in ("x", "y", "psi", "theta", "phi", "der_psi", "der_theta", "der_phi",
                                                  "omega3", "normal_force_ground", "tangential_force_x_ground",
                                                  "tangential_force_y_ground", "energy")}
    th0, om, psi0 = col["theta"][0], col["der_psi"][0], col["psi"][0]
    phid = coin_steady_spin(th0, om, a, g)
    w3 = phid + om * math.sin(th0)
    rho = a * phid / om                      # signed: x = x0 + rho (sin psi - sin psi0), y = y0 - rho (cos psi - cos psi0)
    psi = psi0 + om * t
    xs = col["x"][0] + rho * (np.sin(psi) - np.sin(psi0))
    ys = col["y"][0] - rho * (np.cos(psi) - np.cos(psi0))
    tang = np.hypot(col["tangential_force_x_ground"], col["tangential_force_y_ground"])
    rows = []  # (quantity, closed form, largest deviation, tolerance)

    def held(label, values, want):
        dev = float(np.max(np.abs(values - want)))
        tol = STEADY_FACTOR * rt * (1 + abs(want))
        rows.append([label, f"{want:.12g}", fmt(dev, 3), fmt(tol, 3)])
        return dev <= tol

    ok = [held("lean θ [rad]", col["theta"], th0), held("θ' [rad/s]", col["der_theta"], 0.0),
          held("turning rate ψ' = Ω [rad/s]", col["der_psi"], om),
          held("spin φ' (Le Saux et al.'s relation) [rad/s]", col["der_phi"], phid),
          held("ω3 = φ' + ψ' sin θ [rad/s]", col["omega3"], w3)]
    path = float(np.max(np.hypot(col["x"] - xs, col["y"] - ys)))
    path_tol = STEADY_FACTOR * rt * (1 + abs(rho)) * max(1.0, abs(om) * t[-1])
    rows.append(["contact point on the circle of radius a φ'/|Ω| [m]", f"{abs(rho):.12g}", fmt(path, 3), fmt(path_tol, 3)])
    forces = [held("normal force m g [N]", col["normal_force_ground"], m * g),
              held("horizontal contact force m |Ω| a |ω3| [N]", tang, m * abs(om) * a * abs(w3))]
    e0 = col["energy"][0]
    drift = float(np.max(np.abs(col["energy"] - e0)) / abs(e0))
    checks = [
        Check("steady turning held: θ, θ', ψ', φ' (Le Saux et al. 2005), ω3", f"≤ {STEADY_FACTOR:g} rtol × (1 + |value|)",
              "; ".join(f"{row[0].split(' [')[0]}: {row[2]}" for row in rows[:5]), all(ok)),
        Check("contact point on the closed-form circle", f"≤ {STEADY_FACTOR:g} rtol × (1 + ρ) × Ω t_end = "
              f"{fmt(path_tol, 3)} m", f"{fmt(path, 3)} m (ρ = {abs(rho):.6g} m)", path <= path_tol),
        Check("contact forces of the steady motion: N = m g, horizontal m |Ω| a |ω3|",
              f"≤ {STEADY_FACTOR:g} rtol × (1 + |value|)", f"{rows[-2][2]} N, {rows[-1][2]} N", all(forces)),
        Check("energy conserved (rolling without slip does no work)", f"max |E − E(0)| / E(0) ≤ {STEADY_FACTOR:g} rtol = "
              f"{fmt(STEADY_FACTOR * rt)}", fmt(drift, 3), drift <= STEADY_FACTOR * rt)]
    return checks, rows, (xs, ys), (th0, om, phid, a, g)


def nutation_check(lin, steady) -> tuple:
    """(check, w_n closed form, eigenvalues) of the coin's linearisation about its steady turning."""
    th0, om, phid, a, g = steady
    wn = coin_nutation(th0, om, phid, a, g)
    lam = eigenvalues(lin)
    osc = lam[np.abs(lam.imag) > 0]
    got = float(np.max(np.abs(osc.imag))) if osc.size else float("nan")
    rest = lam[np.abs(lam.imag) == 0] if osc.size else lam
    rel = abs(got - wn) / wn
    zero = float(np.max(np.abs(rest))) if rest.size else 0.0
    ok = osc.size == 2 and rel <= NUTATION_TOL and float(np.max(np.abs(osc.real))) <= NUTATION_TOL * wn \
        and zero <= NUTATION_TOL * wn
    return Check("nutation ±i w_n and the two zero roots (rollsim linearize)",
                 f"|Im λ − w_n| / w_n, |Re λ| / w_n and |λ<sub>0</sub>| / w_n ≤ {fmt(NUTATION_TOL)}",
                 f"w_n {wn:.12g} rad/s, rollsim {got:.12g}: relative {fmt(rel, 2)}; largest other root "
                 f"{fmt(zero, 2)}", ok), wn, lam


def coin_section(run: Run, lin: Run) -> Section:
    sec = Section("coin", "3-D rolling: the rolling coin on its steady turning motion",
                  "A uniform thin disk rolling without slip, started on a steady turning motion (lean θ0 = 0.3 rad, "
                  f"turning rate Ω = −3 rad/s), run for {COIN_T_END:g} s, a little more than one turn. Its steady "
                  "motion in closed form (Le Saux, Leine and Glocker 2005): θ and the rates stay constant, φ' is fixed "
                  "by θ and Ω, the contact point runs on a circle of radius a φ'/|Ω|, the normal force is m g and "
                  "the horizontal force the centripetal m |Ω| a |ω3|; the energy is conserved. Its linearisation has "
                  "the nutation pair ±i w_n of docs/references-3d.md and two zero roots.")
    r = loaded(run, sec)
    if r is None:
        return sec
    checks, rows, (xs, ys), steady = coin_checks(r)
    sec.checks += checks
    sec.body.append("<h3>The steady motion against its closed form</h3>" + table_html(
        ["quantity", "closed form", "largest deviation", "tolerance"], rows))
    rl = load_result(lin)
    wn, lam = float("nan"), np.array([])
    if rl is None or rl.linear is None or lin.returncode != 0:
        sec.checks.append(failed_run_check(lin))
    else:
        c, wn, lam = nutation_check(rl.linear, steady)
        sec.checks.append(c)
        sec.body.append("<h3>Eigenvalues about the steady turning [rad/s]</h3>" + table_html(
            ["#", "λ"], [[str(i + 1), fmt_complex(z)] for i, z in enumerate(lam)])
            + f'<p class="note">Closed form: 0, 0, ±i w_n, w_n = {wn:.12g} rad/s.</p>')
    tr = r.trajectory
    fig = Figure(figsize=(11.4, 4.0), layout="constrained")
    a0, a1 = fig.subplots(1, 2)
    a0.plot(xs, ys, color="0.6", linewidth=4, label="closed form: circle of radius a φ'/|Ω|")
    a0.plot(tr["x"], tr["y"], color="k", linewidth=1, label="contact point, rollsim")
    a0.set_aspect("equal", adjustable="datalim")
    finish_axes(a0, "x [m]", "y [m]", "Path of the contact point", {"loc": "center"})
    t = np.asarray(tr["time"], float)
    th0, om, phid = steady[:3]
    for i, (k, sym, want) in enumerate((("theta", "θ", th0), ("der_psi", "ψ'", om), ("der_phi", "φ'", phid))):
        a1.semilogy(t, np.maximum(np.abs(np.asarray(tr[k], float) - want), 1e-18), color=f"C{i}", linewidth=0.8,
                    label=f"|{sym} − closed form|")
    e = np.asarray(tr["energy"], float)
    a1.semilogy(t, np.maximum(np.abs(e - e[0]) / abs(e[0]), 1e-18), color="C3", linewidth=0.8, label="|E − E(0)| / E(0)")
    finish_axes(a1, "time [s]", "deviation (1e-18 where 0)", "Deviations from the steady motion", {"loc": "lower right"},
                which="both")
    sec.figures.append(("The contact point's path over the closed-form circle (left); the deviations of θ, ψ', φ' and "
                        "the energy from the steady motion (right)", png(fig)))
    return sec


# ---------------------------------------------------------------------------------------------------------
# The Whipple bicycle


def root_distance(got, want) -> float:
    """The largest distance from each root of one set to the nearest of the other, both ways."""
    got, want = np.asarray(got, complex), np.asarray(want, complex)
    return float(max(max(np.min(np.abs(got - w)) for w in want), max(np.min(np.abs(want - g)) for g in got)))


def weave_real(lam) -> float:
    """The real part of the complex pair (NaN without one)."""
    osc = lam[np.abs(lam.imag) > 0]
    return float(osc.real.max()) if osc.size else float("nan")


def capsize_root(lam) -> float:
    """The largest real root."""
    real = lam[lam.imag == 0]
    return float(real.real.max()) if real.size else float("nan")


def plan_bicycle(runner: Runner, scen: str, name: str):
    steady = ["--set", "initial_rates.phi=0"]
    out = lambda suffix: os.path.join(runner.workdir, f"{name}-{suffix}.h5")  # noqa: E731
    coarse = coarse_scenario(scen, os.path.join(runner.workdir, f"{name}-{BIKE_SWEEP_POINTS}.toml"), BIKE_SWEEP_POINTS)
    sweep = runner.prepare(f"linearize --sweep {name} ({BIKE_SWEEP_POINTS} speeds)",
                           ["linearize", coarse, "--sweep", *steady], out("linear-sweep"))
    at = {}
    for label, v0 in (("weave", MEIJAARD_WEAVE_SPEED), ("capsize", MEIJAARD_CAPSIZE_SPEED)):
        for sgn in (-1, +1):
            v = v0 + sgn * SPEED_BRACKET
            at[label, sgn] = runner.prepare(f"linearize {name} v = {v:.14g}",
                                            ["linearize", scen, *steady, "--set", f"parameters.v={v:.17g}"],
                                            out(f"linear-{label}{'+' if sgn > 0 else '-'}"))
    run = runner.prepare(f"run {name}", ["run", scen, "-q"], out("run"))

    def build():
        return animated(runner.animations, bicycle_section(sweep, at, run), run.output, name)

    return build


def table2_check(ls) -> tuple:
    """(check, rows) of the sweep's eigenvalues at Table 2's speeds."""
    v = np.asarray(ls["value"], float)
    lam = (np.asarray(ls["eigenvalues_real"], float) + 1j * np.asarray(ls["eigenvalues_imag"], float)).reshape(v.size, -1)
    rows, worst, found = [], 0.0, 0
    for speed, want in MEIJAARD_TABLE2:
        i = np.flatnonzero(np.abs(v - speed) <= 1e-9)
        if not i.size:
            rows.append([f"{speed:g}", "not in the sweep", "–"])
            continue
        found += 1
        d = root_distance(lam[i[0]], want)
        worst = max(worst, d)
        rows.append([f"{speed:g}", ", ".join(fmt_complex(z, 10) for z in sorted(lam[i[0]], key=lambda z: (-z.real, z.imag))),
                     fmt(d, 2)])
    return Check("eigenvalues at v = 0, 1, …, 10 m/s against Table 2 of Meijaard et al. 2007",
                 f"every root within {fmt(TABLE2_TOL)} rad/s of the published one", f"{found} of "
                 f"{len(MEIJAARD_TABLE2)} speeds; largest distance {fmt(worst, 2)} rad/s",
                 found == len(MEIJAARD_TABLE2) and worst <= TABLE2_TOL), rows


def stable_range_check(ls) -> Check:
    """On the sweep's grid, no root grows exactly between the published weave and capsize speeds."""
    v = np.asarray(ls["value"], float)
    unstable = np.asarray(ls["n_unstable"]) > 0
    inside = (v > MEIJAARD_WEAVE_SPEED) & (v < MEIJAARD_CAPSIZE_SPEED)
    wrong = v[(inside & unstable) | (~inside & ~unstable & (v > 0))]
    stable = v[~unstable]
    return Check("self-stable exactly between the published speeds, on the sweep's grid",
                 f"no root with Re λ > 0 for {MEIJAARD_WEAVE_SPEED:.4f} &lt; v &lt; {MEIJAARD_CAPSIZE_SPEED:.4f} m/s, "
                 "one or more elsewhere (v > 0)",
                 f"stable at v = {fmt(stable.min(), 4)} … {fmt(stable.max(), 4)} m/s ({stable.size} of {v.size} points)"
                 if stable.size else "stable nowhere", not wrong.size)


def bicycle_section(sweep: Run, at: dict, run: Run) -> Section:
    sec = Section("bicycle", "3-D rolling stability: the Whipple bicycle against Meijaard et al. 2007",
                  "The benchmark bicycle of Meijaard, Papadopoulos, Ruina and Schwab (2007): four rigid bodies, two "
                  "wheels rolling without slip. <code>rollsim linearize --sweep</code> linearises upright straight "
                  f"running at {BIKE_SWEEP_POINTS} speeds over the scenario's sweep (0 to 10 m/s); its eigenvalues are checked against "
                  "the paper's Table 2, and single linearisations just below and above the published weave and "
                  f"capsize speeds (± {fmt(SPEED_BRACKET)} m/s) must bracket the crossing. The IFToMM manoeuvre at "
                  "4.6 m/s (roll rate 0.5 rad/s, 20 s), inside the self-stable range, is run on the nonlinear model.")
    rs = load_result(sweep)
    ls = rs.linear_sweep if rs is not None else None
    if ls is None or sweep.returncode != 0:
        sec.checks.append(failed_run_check(sweep))
        return sec
    c, rows = table2_check(ls)
    sec.checks.append(c)
    sec.checks.append(stable_range_check(ls))
    srow = []
    for label, v0, measure in (("weave", MEIJAARD_WEAVE_SPEED, weave_real), ("capsize", MEIJAARD_CAPSIZE_SPEED,
                                                                             capsize_root)):
        vals = []
        for sgn in (-1, +1):
            rr = load_result(at[label, sgn])
            if rr is None or rr.linear is None or at[label, sgn].returncode != 0:
                sec.checks.append(failed_run_check(at[label, sgn]))
                vals.append(float("nan"))
            else:
                vals.append(measure(eigenvalues(rr.linear)))
        # the weave pair's real part falls through 0 at v_w; the capsize root rises through 0 at v_c
        ok = (vals[0] > 0 > vals[1]) if label == "weave" else (vals[0] < 0 < vals[1])
        what = "the weave pair's real part" if label == "weave" else "the capsize root"
        sec.checks.append(Check(f"{label} speed {v0} m/s (Meijaard et al. 2007): {what} changes sign",
                                f"{'from + to −' if label == 'weave' else 'from − to +'} between v ∓ "
                                f"{fmt(SPEED_BRACKET)} m/s", f"{fmt(vals[0], 3)} at v − δ, {fmt(vals[1], 3)} at v + δ "
                                "[rad/s]", ok))
        srow.append([label, f"{v0}", fmt(vals[0], 4), fmt(vals[1], 4)])
    sec.body.append("<h3>Eigenvalues at Table 2's speeds [rad/s]</h3>" + table_html(
        ["v [m/s]", "rollsim linearize --sweep", "largest distance to Table 2"], rows)
        + f'<p class="note">Published figures: {MEIJAARD_SOURCE}.</p>')
    sec.body.append("<h3>Weave and capsize speeds</h3>" + table_html(
        ["mode", "published speed [m/s]", f"real part at v − {fmt(SPEED_BRACKET)} [rad/s]",
         f"at v + {fmt(SPEED_BRACKET)} [rad/s]"], srow))
    r = load_result(run)
    if r is None or run.returncode != 0:
        sec.checks.append(failed_run_check(run))
    else:
        tr = r.trajectory
        t, phi = np.asarray(tr["time"], float), np.asarray(tr["phi"], float)
        e = np.asarray(tr["energy"], float)
        rt = float(r.solver.get("rtol", 1e-10))
        drift = float(np.max(np.abs(e - e[0])) / abs(e[0]))
        sec.checks.append(Check("manoeuvre at 4.6 m/s: energy conserved (ideal rolling does no work)",
                                f"max |E − E(0)| / E(0) ≤ {STEADY_FACTOR:g} rtol = {fmt(STEADY_FACTOR * rt)}",
                                fmt(drift, 3), drift <= STEADY_FACTOR * rt))
        first = float(np.max(np.abs(phi[t <= BIKE_DECAY_WINDOW])))
        last = float(np.max(np.abs(phi[t >= t[-1] - BIKE_DECAY_WINDOW])))
        sec.checks.append(Check("manoeuvre at 4.6 m/s, inside the self-stable range: the roll decays",
                                f"max |φ| over the last {BIKE_DECAY_WINDOW:g} s &lt; over the first {BIKE_DECAY_WINDOW:g} s",
                                f"{fmt(last, 3)} rad against {fmt(first, 3)} rad", last < first))
    fig = Figure(figsize=(11.4, 4.2), layout="constrained")
    a0, a1 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.4, 1.0]})
    plot._eigen_sweep(a0, ls)
    for k, (speed, want) in enumerate(MEIJAARD_TABLE2):
        w = np.asarray(want, complex)
        a0.plot([speed] * w.size, w.real, "x", color="k", markersize=6, label="Table 2 (real parts)" if k == 0 else None)
        pos = w.imag > 0
        a0.plot([speed] * int(pos.sum()), w.imag[pos], "+", color="tab:brown", markersize=8,
                label="Table 2 (imaginary parts)" if k == 1 else None)
    for v0, lab in ((MEIJAARD_WEAVE_SPEED, "v_w"), (MEIJAARD_CAPSIZE_SPEED, "v_c")):
        a0.axvline(v0, color="tab:green", linestyle="--", linewidth=0.9)
        a0.annotate(f"{lab} = {v0:.3f}", (v0, 0.97), xycoords=("data", "axes fraction"), rotation=90, va="top",
                    ha="right", fontsize="x-small", color="tab:green")
    a0.set_ylim(-10, 10)
    a0.set_xlabel("forward speed v [m/s]")
    a0.set_title("Eigenvalues against the speed, with Table 2", loc="left")
    a0.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3)
    if r is not None and run.returncode == 0:
        a1.plot(r.trajectory["time"], r.trajectory["phi"], color="k", linewidth=0.9, label="roll φ")
        a1.plot(r.trajectory["time"], r.trajectory["delta"], color="tab:blue", linewidth=0.9, label="steer δ")
    finish_axes(a1, "time [s]", "angle [rad]", "The manoeuvre at 4.6 m/s (nonlinear)",
                {} if r is not None and run.returncode == 0 else None)
    sec.figures.append(("Eigenvalues of rollsim linearize --sweep against the speed, with Table 2's (crosses) and the "
                        "published weave and capsize speeds (left); roll and steer of the 4.6 m/s manoeuvre (right)",
                        png(fig)))
    return sec
