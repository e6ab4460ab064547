"""IFToMM benchmark sections: eigenvalues and the modal table (`rollsim linearize`), growth rates against
the eigenvalues (`rollsim check growth`)."""

from __future__ import annotations

import html
import math
import os

import numpy as np
from matplotlib.figure import Figure

from .. import plot
from .model import Check, Run, Runner, Section, failed_run_check, load_result
from .page import fmt, png, table_html

# EoM's modal table for the IFToMM benchmark, as printed (11 significant digits).
# Provenance: B. P. Minaker, "IFToMM Benchmark Problem: Wheel on Tilting Table", EoM report, University of
# Windsor, 2016, Tables 2.1-2.2 (also in data/eom_modal_table.txt). Negative time constants are unstable roots.
EOM_FREQUENCY_HZ = 1.0808756287       # natural frequency of the oscillatory pair
EOM_TIME_CONSTANTS_S = (-0.24476064674, 0.24476064674)  # the real roots +4.0856 and -4.0856 rad/s
EOM_WAVELENGTH_S = 0.92517582360      # period 2 pi / omega of the oscillatory pair
EOM_PROVENANCE = ("B. P. Minaker, \u201cIFToMM Benchmark Problem: Wheel on Tilting Table\u201d, "
                  "EoM report, University of Windsor, 2016, Tables 2.1\u20132.2")
# The printed figures carry 11 significant digits: half a unit in the last place is 5e-11 relative.
EOM_REL_TOL = 1e-9

IFTOMM_ERROR_TOL = 1e-12              # l2 error of the four eigenvalues against (1.8)-(1.9)
ENERGY_RTOLS = (1e-6, 1e-8, 1e-10, 1e-12)
ENERGY_DRIFT_FACTOR = 100.0           # drift_rel < 100 rtol at each tolerance
GROWTH_SMALL_EPS = 1e-6               # growth: rows with epsilon <= this ...
GROWTH_TOL = 1e-5                     # ... must have relative error <= this
GROWTH_ORDER = 2.0                    # expected order of the error in epsilon: the nonlinear correction to a
GROWTH_ORDER_TOL = 0.25               # rate is quadratic in the amplitude; observed within +-0.25 of it


IFTOMM_G, IFTOMM_R, IFTOMM_L = 9.81, 0.25, 1.0   # the benchmark's g, wheel radius and table length


def iftomm_eigenvalues(g: float = IFTOMM_G, r: float = IFTOMM_R, l: float = IFTOMM_L) -> np.ndarray:
    """The benchmark's four eigenvalues in closed form (1.8)-(1.9): s = +-sqrt(-2 g (3 r +- sqrt(2 l^2 + 9 r^2))) / l."""
    ref = []
    for sgn in (+1, -1):
        root = np.sqrt(complex(-2 * g * (3 * r + sgn * math.sqrt(2 * l**2 + 9 * r**2)))) / l
        ref += [root, -root]
    return np.array(ref)


def pair_nearest(lam, ref) -> list:
    """[(computed, reference)]: each computed root with the nearest reference root not taken yet."""
    used, pairs = set(), []
    for z in lam:
        k = min((k for k in range(len(ref)) if k not in used), key=lambda k: abs(ref[k] - z))
        used.add(k)
        pairs.append((z, ref[k]))
    return pairs


def l2_error(pairs) -> float:
    return float(np.sqrt(sum(abs(z - zr) ** 2 for z, zr in pairs)))


def eigenvalues(lin) -> np.ndarray:
    """The eigenvalues of a /linear group as complex numbers."""
    return np.asarray(lin["eigenvalues_real"], float) + 1j * np.asarray(lin["eigenvalues_imag"], float)


def plan_linear(runner: Runner, scen: str, name: str):
    lin_run = runner.prepare(f"linearize {name}", ["linearize", scen], os.path.join(runner.workdir, f"{name}-linear.h5"))
    gr_run = runner.prepare(f"check growth {name}", ["check", "growth", scen],
                            os.path.join(runner.workdir, f"{name}-growth.h5"))
    gr_run.verdict_exit = True

    def build():
        return [linear_section(lin_run, name), growth_section(gr_run, name)]

    return build


def linear_section(run: Run, name: str) -> Section:
    sec = Section(f"iftomm-{name}", f"IFToMM benchmark: eigenvalues and modal table ({name})",
                  "The equations linearised at the equilibrium (table level, wheel at the centre) with exact "
                  "automatic derivatives; eigenvalues against the closed form (1.8)–(1.9) of the IFToMM "
                  "benchmark, and the modal table next to the figures EoM published.")
    r = load_result(run)
    if r is None or r.linear is None or run.returncode != 0:
        sec.checks.append(failed_run_check(run))
        return sec
    lin = r.linear
    re_, im_ = np.asarray(lin["eigenvalues_real"], float), np.asarray(lin["eigenvalues_imag"], float)
    lam = re_ + 1j * im_
    ref_err = r.provenance.get("reference_error", lin.attrs.get("reference_error"))
    g, rr, ll = IFTOMM_G, IFTOMM_R, IFTOMM_L
    pairs = pair_nearest(lam, iftomm_eigenvalues())
    own_err = l2_error(pairs)
    benchmark = all(abs(r.param(k) - v) < 1e-15 for k, v in
                    (("parameters.wheel_radius", rr), ("parameters.table_length", ll), ("parameters.gravity", g),
                     ("parameters.wheel_mass", 1.0), ("parameters.table_mass", 1.0))
                    if isinstance(r.param(k), (int, float))) if r.resolved else True
    sec.checks.append(Check("IFToMM error (l2, eigenvalues vs (1.8)–(1.9))", f"≤ {fmt(IFTOMM_ERROR_TOL)}",
                            f"rollsim {fmt(ref_err)}; report {fmt(own_err)}",
                            (ref_err is not None and float(ref_err) <= IFTOMM_ERROR_TOL and own_err <= IFTOMM_ERROR_TOL)
                            if benchmark else None))
    rows = []
    for i, (z, zr) in enumerate(pairs):
        rows.append([str(i + 1), f"{z.real:+.12f}", f"{z.imag:+.12f}", f"{zr.real:+.12f}", f"{zr.imag:+.12f}",
                     fmt(abs(z - zr), 2)])
    sec.body.append("<h3>Eigenvalues [rad/s]</h3>" + table_html(
        ["#", "Re λ (rollsim)", "Im λ (rollsim)", "Re λ (1.8)–(1.9)", "Im λ (1.8)–(1.9)", "|difference|"], rows))

    # Modal table next to EoM's figures.
    cols = {k: np.asarray(lin[k], float) for k in lin if isinstance(lin[k], np.ndarray) and lin[k].ndim == 1
            and lin[k].dtype.kind == "f" and len(lin[k]) == len(lam)}
    nat = cols.get("frequency_hz")  # the natural frequency |λ|/2π
    tc = cols.get("time_constant")
    wl = cols.get("wavelength")
    osc = np.abs(im_) > 1e-9
    comp = []
    if nat is not None and osc.any():
        comp.append(("natural frequency [Hz]", float(nat[osc][0]), EOM_FREQUENCY_HZ))
    if wl is not None and osc.any():
        comp.append(("wavelength [s]", float(wl[osc][0]), EOM_WAVELENGTH_S))
    if tc is not None:
        real = ~osc
        for want in EOM_TIME_CONSTANTS_S:
            got = tc[real]
            if got.size:
                k = int(np.argmin(np.abs(got - want)))
                comp.append((f"time constant [s] ({'unstable' if want < 0 else 'stable'} root)", float(got[k]), want))
    worst = 0.0
    rows = []
    for label, got, want in comp:
        rel = abs(got - want) / abs(want)
        worst = max(worst, rel)
        rows.append([label, f"{got:.11g}", f"{want:.11g}", fmt(rel, 2)])
    sec.body.append("<h3>Modal table against EoM</h3>" + table_html(
        ["quantity", "rollsim", "EoM (published)", "relative difference"], rows)
        + f'<p class="note">EoM figures: {html.escape(EOM_PROVENANCE)}. They are printed with 11 significant '
          f"digits, so a relative difference of a few 10<sup>−11</sup> is the rounding of the print.</p>")
    sec.checks.append(Check("modal table vs EoM (frequency, wavelength, time constants)",
                            f"relative ≤ {fmt(EOM_REL_TOL)}", f"largest {fmt(worst, 2)}",
                            (len(comp) == 4 and worst <= EOM_REL_TOL) if benchmark else None))
    full = [[str(i + 1), f"{re_[i]:+.6g}", f"{im_[i]:+.6g}"] +
            [fmt(cols[c][i], 6) if c in cols else "–" for c in
             ("frequency_hz", "damping_ratio", "time_constant", "wavelength")]
            + [html.escape(str(lin["stability"][i])) if "stability" in lin else "–"]
            for i in range(len(lam))]
    if any(c in cols for c in ("frequency_hz", "damping_ratio")):
        sec.body.append("<h3>Modal table (rollsim)</h3>" + table_html(
            ["#", "σ [rad/s]", "ω [rad/s]", "natural freq. [Hz]", "damping ratio", "time constant [s]",
             "wavelength [s]", "kind"], full)
            + f'<p class="note">rollsim: {html.escape(str(lin.attrs.get("summary", "")))}. EoM prints “1 oscillatory, '
              "2 damped, 1 unstable, 0 rigid body” by plain sign tests; see docs/linear.md for the classification "
              "rule.</p>")

    fr = lin.get("frequency_response")
    fig = Figure(figsize=(11.4, 4.0), layout="constrained")
    axs = fig.subplots(1, 3)
    if isinstance(fr, dict) and "frequency_hz" in fr:
        plot._bode(axs[0], fr, "magnitude_db", "magnitude", "dB")
        plot._bode(axs[1], fr, "phase_deg", "phase", "deg")
        for f0, ls in ((EOM_FREQUENCY_HZ, "--"),):
            for ax in axs[:2]:
                ax.axvline(f0, color="tab:red", linestyle=ls, linewidth=0.8, label=f"EoM pair {f0:.4f} Hz")
        axs[0].legend(fontsize="small")
    plot._eigen_map(axs[2], lin)
    sec.figures.append(("Bode plot of θ2 / table torque, and the eigenvalues", png(fig)))
    return sec


def growth_section(run: Run, name: str) -> Section:
    sec = Section(f"growth-{name}", f"Growth rates against the eigenvalues ({name})",
                  "Short nonlinear runs from the equilibrium plus ε × (unit mode shape): the fitted growth rate "
                  "(real root) or frequency (pair) against the eigenvalue. The error falls with ε until the "
                  "integration error takes over; its slope is the observed order of the nonlinear part.")
    r = load_result(run)
    if r is None or r.growth is None:
        sec.checks.append(failed_run_check(run))
        return sec
    g = r.growth
    eps = np.asarray(g["epsilon"], float)
    err = np.asarray(g["rel_error"], float)
    modes = np.asarray(g["mode"], str)
    status = np.asarray(g["status"], str) if "status" in g else np.array(["ok"] * len(eps))
    small = eps <= GROWTH_SMALL_EPS
    ok_small = bool(np.all(err[small] <= GROWTH_TOL) and np.all(status[small] == "ok")) if small.any() else False
    sec.checks.append(Check(f"growth rate vs eigenvalue at ε ≤ {fmt(GROWTH_SMALL_EPS)}", f"relative ≤ {fmt(GROWTH_TOL)}",
                            f"largest {fmt(np.max(err[small]) if small.any() else float('nan'), 2)}", ok_small))
    # Observed order: slope of log(error) against log(epsilon) over every row whose error is well above the
    # integration floor: error > floor_margin x floor, the margin and each row's floor as rollsim wrote them
    # (GrowthOptions::floor_margin, /growth/floor). rollsim's own order fits the order_points smallest such rows;
    # this one fits them all.
    margin = float(g.attrs["floor_margin"])
    floors = np.asarray(g["floor"], float)
    orders = {}
    for m in dict.fromkeys(modes):
        sel = modes == m
        e, x, fl = err[sel], eps[sel], floors[sel]
        good = (e > 0) & np.isfinite(e)
        e, x, fl = e[good], x[good], fl[good]
        if e.size < 3:
            orders[m] = float("nan")
            continue
        use = e > margin * fl
        if use.sum() < 2:
            orders[m] = float("nan")
            continue
        orders[m] = float(np.polyfit(np.log(x[use]), np.log(e[use]), 1)[0])
    rs_orders = dict(zip(np.asarray(g.get("order_mode", []), str), np.asarray(g.get("order", []), float)))
    finite = [v for v in orders.values() if np.isfinite(v)]
    sec.checks.append(Check("observed order of the error in ε", f"{GROWTH_ORDER:g} ± {GROWTH_ORDER_TOL:g} for every mode",
                            ", ".join(f"{html.escape(m)}: {fmt(v, 3)}" for m, v in orders.items()),
                            bool(finite) and len(finite) == len(orders)
                            and all(abs(v - GROWTH_ORDER) <= GROWTH_ORDER_TOL for v in finite)))
    # Table: rows = epsilon, columns = modes.
    eps_vals = sorted(set(eps.tolist()))
    mode_list = list(dict.fromkeys(modes))
    rows = []
    for ev in eps_vals:
        row = [fmt(ev, 2)]
        for m in mode_list:
            sel = (modes == m) & (eps == ev)
            if sel.any():
                v = err[sel][0]
                cls = "bad" if (ev <= GROWTH_SMALL_EPS and v > GROWTH_TOL) else ""
                row.append(f'<span class="{cls}">{fmt(v, 3)}</span>')
            else:
                row.append("–")
        rows.append(row)
    rows.append(["observed order (report)"] + [fmt(orders[m], 3) for m in mode_list])
    rows.append(["observed order (rollsim)"] + [fmt(rs_orders.get(m, float("nan")), 3) for m in mode_list])
    sec.body.append("<h3>Relative error |measured − predicted| / |predicted|</h3>"
                    + table_html(["ε"] + [html.escape(m) for m in mode_list], rows))
    fig = Figure(figsize=(8.0, 4.2), layout="constrained")
    a0 = fig.subplots()
    for i, m in enumerate(mode_list):
        sel = modes == m
        o = np.argsort(eps[sel])
        a0.loglog(eps[sel][o], err[sel][o], "o-", color=f"C{i}", label=f"mode {m} (order {orders[m]:.2f})")
    top = eps.max()
    ref = err.max() * (np.array([top / 1e3, top]) / top) ** GROWTH_ORDER
    a0.loglog([top / 1e3, top], ref * 3, color="k", linestyle="--", linewidth=0.9, label=f"slope {GROWTH_ORDER:g}")
    a0.axhline(GROWTH_TOL, color="tab:red", linestyle=":", label=f"tolerance {GROWTH_TOL:g} (ε ≤ {GROWTH_SMALL_EPS:g})")
    a0.axvspan(eps.min() / 2, GROWTH_SMALL_EPS, color="tab:green", alpha=0.06)
    a0.set_xlabel("ε [-]")
    a0.set_ylabel("|measured − predicted| / |predicted| [-]")
    a0.set_title("Growth-rate error against ε")
    a0.grid(True, which="both", alpha=0.3)
    a0.legend(fontsize="small", loc="upper left")
    sec.figures.append(("Relative error of the fitted rates against ε (log-log); the shaded band is where the tolerance applies", png(fig)))
    return sec
