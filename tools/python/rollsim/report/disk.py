"""The rolling disk: Filippov conditions at the events, the energy balance, and the independent closed form."""

from __future__ import annotations

import html
import math
import os

import numpy as np
from matplotlib.figure import Figure

from .. import disk_closed_form, h5, plot
from .animation import animated
from .model import Check, Run, Runner, Section, failed_run_check, load_result, read_toml
from .page import badge, count, fmt, png, table_html, titled

FILIPPOV_Z_TOL = 1e-9                 # |z| at a stick
FILIPPOV_EDGE_TOL = 1e-8              # ||x| - 1| at a slip
DISK_ENERGY_FACTOR = 1e3              # max |E(0) - E(t) - dissipated(t)| / E(0) <= 1000 rtol
DISK_CONVERGENCE_RTOLS = (1e-8, 1e-10, 1e-12)
CLOSED_FORM_TIME_FACTOR = 1e5         # largest |t_rollsim - t_closed| <= 1e5 rtol (time units of the run)


# The integrated Filippov system is what this section checks against the closed form: the default method ("auto")
# takes the disk's own closed-form propagation instead, which has no tolerance to converge in.
INTEGRATED = ["--set", "solver.method=adams"]


def plan_disk(runner: Runner, scen: str, name: str):
    run = runner.prepare(f"run {name}", ["run", scen, "-q", *INTEGRATED], os.path.join(runner.workdir, f"{name}.h5"))
    doc = read_toml(scen)
    own_rtol = float(doc.get("solver", {}).get("rtol", 1e-10))
    conv = []
    # The same orbit at a looser and a tighter tolerance: the closed-form comparison must converge.
    for rt in DISK_CONVERGENCE_RTOLS:
        if rt != own_rtol:
            conv.append((rt, runner.prepare(f"run {name} rtol {rt:g}",
                                            ["run", scen, "-q", *INTEGRATED, "--set", f"solver.rtol={rt:g}"],
                                            os.path.join(runner.workdir, f"{name}-rtol{rt:g}.h5"))))
    conv.append((own_rtol, run))
    conv.sort(key=lambda p: -p[0])

    def build():
        return animated(runner.animations, disk_section(run, name, own_rtol, conv), run.output, name)

    return build


def disk_time_scale(r):
    """Omega0 [1/s] for a physical disk run (tau = Omega0 t), 1 for a dimensionless one; None if unknown."""
    units = r.param("units") if r.resolved and "units" in r.resolved else "dimensionless"
    if units == "dimensionless":
        return 1.0
    m, k = r.param("parameters.mass"), r.param("parameters.stiffness")
    j = disk_inertia_ratio(r)
    if not all(isinstance(v, (int, float)) for v in (m, k, j)):
        return None
    return math.sqrt(k / (m * (1.0 + j)))


def disk_inertia_ratio(r):
    j = r.param("parameters.inertia_ratio") if "parameters.inertia_ratio" in r.resolved else None
    if isinstance(j, (int, float)):
        return float(j)
    inertia, m, rad = (r.param(k) if k in r.resolved else None
                       for k in ("parameters.inertia", "parameters.mass", "parameters.radius"))
    if all(isinstance(v, (int, float)) for v in (inertia, m, rad)):
        return inertia / (m * rad**2)
    return None


def compare_closed_form(r, cf, tscale=1.0):
    """(event times rollsim [tau], closed form [tau], kinds rollsim, kinds closed form, n compared, kinds match,
    count ok)."""
    ev = r.events
    t_ev = np.asarray(ev.get("time", []), float) * tscale
    kinds = [str(k) for k in ev.get("kind", [])]
    cf_t = np.array([e.time for e in cf.events])
    cf_k = [e.kind for e in cf.events]
    n = min(len(cf_t), len(t_ev))
    t_end = float(r.trajectory["time"][-1]) * tscale
    # An event in the last instants before t_end may fall on either side of it.
    count_ok = len(cf_t) == len(t_ev) or (abs(len(cf_t) - len(t_ev)) == 1 and max(
        cf_t[-1] if len(cf_t) else 0.0, t_ev[-1] if len(t_ev) else 0.0) > t_end - 1e-3)
    return t_ev, cf_t, kinds, cf_k, n, kinds[:n] == cf_k[:n], count_ok


def disk_section(run: Run, name: str, own_rtol: float, conv: list) -> Section:
    r = load_result(run)
    title = (r.title if r is not None and r.title else name)
    sec = Section(f"disk-{name}", html.escape(titled("Rolling disk", title)),
                  "The Coulomb rolling/sliding disk as a Filippov system, integrated by CVODE's Adams method (the "
                  "default method takes the disk's closed-form propagation). Every transition in /events is checked "
                  "against the Filippov conditions (a stick lands in the rolling strip, a slip leaves at its edge, "
                  "a reversal crosses outside it); the energy balance E(0) − E(t) − dissipated(t) is checked over "
                  "the run; the event sequence is compared with an independent closed-form propagation "
                  "(harmonic motion in each mode, events found with brentq).")
    if r is None or run.returncode != 0:
        sec.checks.append(failed_run_check(run))
        return sec
    ev = r.events
    kinds = np.asarray(ev.get("kind", []), str)
    t_ev = np.asarray(ev.get("time", []), float)
    x, y, z = (np.asarray(ev.get(k, []), float) for k in ("x", "y", "z"))
    stick, slip, rev = kinds == "stick", kinds == "slip", kinds == "reversal"
    viol = []
    worst_z = float(np.max(np.abs(z[stick]))) if stick.any() else 0.0
    worst_edge = float(np.max(np.abs(np.abs(x[slip]) - 1))) if slip.any() else 0.0
    for i in range(len(kinds)):
        k = kinds[i]
        if k == "stick" and not (abs(x[i]) < 1 and abs(z[i]) <= FILIPPOV_Z_TOL):
            viol.append(i)
        elif k == "slip" and not (abs(abs(x[i]) - 1) <= FILIPPOV_EDGE_TOL):
            viol.append(i)
        elif k == "reversal" and not (abs(x[i]) > 1):
            viol.append(i)
        elif k not in ("stick", "slip", "reversal"):
            viol.append(i)
    margin_stick = float(np.max(np.abs(x[stick]))) if stick.any() else float("nan")
    margin_rev = float(np.min(np.abs(x[rev]))) if rev.any() else float("nan")
    sec.checks.append(Check(
        "Filippov conditions at every event",
        f"stick: |x| &lt; 1, |z| ≤ {fmt(FILIPPOV_Z_TOL)}; slip: ||x| − 1| ≤ {fmt(FILIPPOV_EDGE_TOL)}; reversal: |x| > 1",
        f"{count(len(kinds), 'event')} ({int(stick.sum())} stick, {int(slip.sum())} slip, "
        f"{int(rev.sum())} reversal), {count(len(viol), 'violation')}; max |z| at stick {fmt(worst_z, 2)}, "
        f"max ||x|−1| at slip {fmt(worst_edge, 2)}",
        len(viol) == 0 and len(kinds) > 0))
    sec.body.append(table_html(
        ["event kind", "count", "condition", "worst value"],
        [["stick", str(int(stick.sum())), "|x| &lt; 1 and z = 0",
          f"max |x| = {fmt(margin_stick, 6)}, max |z| = {fmt(worst_z, 2)}"],
         ["slip", str(int(slip.sum())), "|x| = 1", f"max ||x| − 1| = {fmt(worst_edge, 2)}"],
         ["reversal", str(int(rev.sum())), "|x| > 1", f"min |x| = {fmt(margin_rev, 6)}"]]))

    # Energy balance, from the samples and from rollsim's own summary (which also covers internal steps).
    # E and D are the columns of roles energy.total and dissipation; their sum is the file's ledger.
    tr = r.trajectory
    E = sum(np.asarray(tr[n], float) for n in tr.with_role("energy.total"))
    D = sum(np.asarray(tr[n], float) for n in tr.with_role("dissipation"))
    bal = -h5.energy_ledger(tr).drift
    own = float(np.max(np.abs(bal)) / abs(E[0]))
    rs = r.summary.get("energy_balance_error_rel")
    e_tol = DISK_ENERGY_FACTOR * own_rtol
    sec.checks.append(Check("energy balance E(0) − E(t) − dissipated(t)",
                            f"≤ {DISK_ENERGY_FACTOR:g} rtol × E(0) = {fmt(e_tol)} E(0)",
                            f"samples {fmt(own, 2)}; rollsim (steps too) {fmt(rs, 2)}",
                            own <= e_tol and (rs is None or float(rs) <= e_tol)))

    # Closed form, at the scenario's tolerance and at the convergence tolerances.
    j = disk_inertia_ratio(r)
    tscale = disk_time_scale(r)
    t_end = float(tr["time"][-1]) * (tscale or 1.0)
    conv_data, cf = [], None
    if j is not None and tscale is not None:
        x0, y0, z0 = (float(np.asarray(tr[k])[0]) for k in ("x", "y", "z"))
        cf = disk_closed_form.propagate(float(j), x0, y0, z0, t_end)
        t_ev, cf_t, rk, cf_k, n, kinds_match, count_ok = compare_closed_form(r, cf, tscale)
        worst_dt = float(np.max(np.abs(t_ev[:n] - cf_t[:n]))) if n else 0.0
        sym_rs = str(r.summary.get("symbols", ""))
        short = (lambda s: s if len(s) <= 24 else f"{s[:10]}…{s[-8:]} ({len(s)})")
        sec.checks.append(Check("mode symbols and event kinds vs closed form", "identical",
                                f"rollsim {html.escape(short(sym_rs))}, closed form {html.escape(short(cf.symbols))}; "
                                f"{len(t_ev)} vs {count(len(cf_t), 'event')}",
                                sym_rs == cf.symbols and kinds_match and count_ok))
        conv_rows, conv_ok, worsts = [], True, []
        for rt, crun in conv:
            cr = r if crun is run else load_result(crun)
            if cr is None or crun.returncode != 0:
                conv_ok = False
                conv_rows.append([fmt(rt), "failed", "–", "–", "–", badge(False)])
                worsts.append(float("nan"))
                continue
            ct, _, ck, _, cn, cmatch, ccount = compare_closed_form(cr, cf, tscale)
            w = float(np.max(np.abs(ct[:cn] - cf_t[:cn]))) if cn else 0.0
            ok = cmatch and ccount and w <= CLOSED_FORM_TIME_FACTOR * rt
            conv_ok &= ok
            worsts.append(w)
            conv_data.append((rt, ct[:cn], cf_t[:cn], np.array(ck[:cn])))
            conv_rows.append([fmt(rt), f"{len(ct)}", "yes" if cmatch and ccount else "no", fmt(w, 3),
                              fmt(CLOSED_FORM_TIME_FACTOR * rt), badge(ok)])
        falls = len(worsts) < 2 or all(b < a for a, b in zip(worsts, worsts[1:]))
        sec.checks.append(Check(
            "event times vs closed form at rtol " + ", ".join(f"{rt:g}" for rt, _ in conv),
            f"largest |Δτ| ≤ {fmt(CLOSED_FORM_TIME_FACTOR)} rtol at each, falling with rtol",
            "largest |Δτ| " + ", ".join(fmt(w, 2) for w in worsts), conv_ok and falls))
        sec.body.append("<h3>Closed form: event times against the tolerance</h3>" + table_html(
            ["rtol", "events", "kinds match", "largest |Δτ|", "tolerance", "result"], conv_rows)
            + '<p class="note">The closed form is exact up to round-off (each event polished by brentq). In the '
              "+0−0 tail the problem amplifies errors: the slip time goes as arccos(1/R), whose slope "
              "1/(R√(R²−1)) grows as the rolling radius R approaches 1, so timing errors grow along the orbit; "
              "they fall with the tolerance. Times are compared in the dimensionless time τ = Ω0 t"
            + (f" (Ω0 = {tscale:.6g} 1/s for this physical run)" if tscale != 1.0 else "") + ".</p>")
        show = list(range(min(n, 8)))
        if n > 12:
            show += list(range(n - 4, n))
        elif n > 8:
            show += list(range(8, n))
        cf_rows, last = [], -1
        x_ev = np.asarray(r.events.get("x", []), float)
        cf_x = [e.x for e in cf.events]
        for i in show:
            if last >= 0 and i != last + 1:
                cf_rows.append(["⋮"] * 8)
            last = i
            cf_rows.append([str(i + 1), html.escape(rk[i]), html.escape(cf_k[i]), f"{t_ev[i]:.10f}",
                            f"{cf_t[i]:.10f}", fmt(t_ev[i] - cf_t[i], 2), f"{x_ev[i]:+.8f}", f"{cf_x[i]:+.8f}"])
        sec.body.append(f"<h3>Events at rtol {own_rtol:g}: rollsim against the closed form</h3>" + table_html(
            ["#", "rollsim", "closed form", "τ rollsim", "τ closed form", "Δτ", "x rollsim", "x closed form"], cf_rows)
            + f'<p class="note">rollsim: {count(len(t_ev), "event")} to τ = {t_end:g}; '
              f'closed form: {count(len(cf_t), "event")}. '
              f"Classification {html.escape(str(r.summary.get('classification', '–')))}; last rolling radius "
              f"{fmt(r.summary.get('rolling_radius'), 10)} (closed form {fmt(cf.rolling_radius, 10)}).</p>")
    else:
        sec.checks.append(Check("event times vs closed form", "needs j and Ω0 from the scenario", "not compared",
                                None))

    fig = Figure(figsize=(11.4, 4.8), layout="constrained")
    gs = fig.add_gridspec(1, 3, width_ratios=[1.4, 1.0, 1.0])
    ax0 = fig.add_subplot(gs[0, 0], projection="3d")
    _phase_portrait(ax0, r)
    ax1 = fig.add_subplot(gs[0, 1])
    _xyz(ax1, r)
    ax2 = fig.add_subplot(gs[0, 2])
    t = np.asarray(tr["time"], float)
    ax2.plot(t, E, label="E(t)")
    ax2.plot(t, D, label="dissipated(t)")
    ax2.set_xlabel(plot.axis_label("time", tr.units.get("time")))
    ax2.set_ylabel(plot.axis_label("energy", h5.energy_ledger(tr).unit))
    ax2b = ax2.twinx()
    ax2b.plot(t, bal / abs(E[0]), color="tab:red", linewidth=0.8, label="balance error / E(0)")
    ax2b.set_ylabel("(E(0) − E − dissipated) / E(0) [-]", color="tab:red")
    ax2b.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
    ax2.set_title("Energy balance")
    h1, l1 = ax2.get_legend_handles_labels()
    h2, l2 = ax2b.get_legend_handles_labels()
    ax2.legend(h1 + h2, l1 + l2, fontsize="x-small", loc="center right")
    ax2.grid(True, alpha=0.3)
    sec.figures.append(("3-D phase portrait (left), state and mode (middle), energy balance (right)", png(fig)))
    if conv_data:
        fig = Figure(figsize=(11.4, 4.0), layout="constrained")
        a0, a1 = fig.subplots(1, 2)
        markers = {"stick": "o", "slip": "s", "reversal": "^"}
        for i, (rt, ct, cft, ck) in enumerate(conv_data):
            d = np.abs(ct - cft)
            for kind, mk in markers.items():
                sel = ck == kind
                if sel.any():
                    a0.semilogy(np.nonzero(sel)[0] + 1, np.maximum(d[sel], 1e-17), mk, color=f"C{i}", markersize=4,
                                label=f"rtol {rt:g}: {kind}")
            a0.axhline(CLOSED_FORM_TIME_FACTOR * rt, color=f"C{i}", linestyle=":", linewidth=0.9)
        a0.set_xlabel("event number")
        a0.xaxis.get_major_locator().set_params(integer=True)
        a0.set_ylabel("|τ rollsim − τ closed form|")
        a0.set_title("Event times against the closed form (dotted: tolerances)")
        a0.grid(True, which="both", alpha=0.3)
        a0.legend(fontsize="x-small", ncol=3)
        xs, ys, zs = disk_closed_form.states_at(float(j), cf, t * tscale)
        xr, zr = np.asarray(tr["x"], float), np.asarray(tr["z"], float)
        a1.plot(t, xs, color="0.55", linewidth=3.5, label="x closed form")
        a1.plot(t, zs, color="#e0b070", linewidth=3.5, label="z closed form")
        a1.plot(t, xr, color="k", linewidth=0.9, label="x rollsim")
        a1.plot(t, zr, color="tab:brown", linewidth=0.9, label="z rollsim")
        a1.set_xlabel(plot.axis_label("time", tr.units.get("time")))
        a1.set_ylabel("x, z [-]")
        a1b = a1.twinx()
        err = np.maximum(np.abs(xr - xs), np.abs(zr - zs))
        a1b.semilogy(t, np.maximum(err, 1e-17), color="tab:red", linewidth=0.6, alpha=0.8)
        a1b.set_ylabel("max(|Δx|, |Δz|) (red)", color="tab:red")
        a1.set_title(f"Trajectory against the closed form (rtol {own_rtol:g})")
        a1.legend(fontsize="x-small", loc="upper right", ncol=2)
        a1.grid(True, alpha=0.3)
        sec.figures.append(("Closed-form comparison: event-time errors at each tolerance (left); x and z of "
                            "rollsim over the closed form, with their largest difference (right)", png(fig)))
    return sec


def _phase_portrait(ax, r):
    """The disk's orbit in (x, y, z), coloured by mode, with the sliding strip Sigma0 = {z = 0, |x| < 1}."""
    tr = r.trajectory
    x, y, z = (np.asarray(tr[k], dtype=float) for k in ("x", "y", "z"))
    mode = np.asarray(tr["mode"]).astype(int) if "mode" in tr else None
    x, y, z = plot._thin(x, y, z)
    if mode is not None:
        plot._plot_by_mode(ax, plot._thin(mode)[0], (x, y, z), plot.mode_names(r), linewidth=1.0)
    else:
        ax.plot(x, y, z, linewidth=1.0)
    # The sliding strip Sigma0 = {z = 0, |x| < 1}, drawn over the y range of the orbit.
    if y.size:
        ylo, yhi = np.nanmin(y), np.nanmax(y)
        pad = 0.1 * max(yhi - ylo, 1.0)
        ys = np.array([ylo - pad, yhi + pad])
        X, Y = np.meshgrid(np.array([-1.0, 1.0]), ys)
        ax.plot_surface(X, Y, np.zeros_like(X), color="tab:gray", alpha=0.25, linewidth=0)
        for xe in (-1.0, 1.0):
            ax.plot([xe, xe], ys, [0, 0], color="tab:gray", linewidth=0.8)
        ax.plot([], [], color="tab:gray", linewidth=6, alpha=0.4, label="Σ0: z = 0, |x| < 1")
        ax.scatter([x[0]], [y[0]], [z[0]], color="k", s=18, label="start")
    ev = r.events
    if ev and all(k in ev for k in ("x", "y", "z")) and len(ev["x"]):
        ax.scatter(ev["x"], ev["y"], ev["z"], color="tab:red", s=12, marker="x", label="events")
    ax.set_xlabel(plot.axis_label("x", tr.units.get("x")))
    ax.set_ylabel(plot.axis_label("y", tr.units.get("y")))
    ax.set_zlabel(plot.axis_label("z", tr.units.get("z")))
    ax.set_title("Phase portrait")
    ax.legend(fontsize="x-small", loc="upper left")


def _xyz(ax, r):
    """x, y, z over time with the mode (+1, 0, -1) shaded."""
    tr = r.trajectory
    t = np.asarray(tr["time"], dtype=float)
    for name, colour in (("x", "black"), ("y", "tab:purple"), ("z", "tab:brown")):
        tt, v = plot._thin(t, np.asarray(tr[name], dtype=float))
        ax.plot(tt, v, color=colour, linewidth=1.1, label=name)
    if "mode" in tr:
        plot._shade(ax, *plot._thin(t, np.asarray(tr["mode"]).astype(int)), plot.mode_names(r))
    ax.set_xlabel(plot.axis_label("time", tr.units.get("time", "s")))
    ax.set_ylabel(plot.axis_label("x, y, z", plot._common_unit(tr, ["x", "y", "z"])))
    ax.set_title("State and mode")
    ax.legend(fontsize="x-small", loc="best", ncol=2)
    ax.grid(True, alpha=0.3)
