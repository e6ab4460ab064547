"""The validation report: runs rollsim, checks the numbers against stated tolerances, writes one HTML page.

    tools/report [SCENARIO ...] -o report.html [--keep DIR]

Without scenarios the standard validation set runs (see STANDARD_SET). Each check is computed here from
the numbers in the result files (or the parsed output of `rollsim check formulations`) against the
tolerance stated next to it, and shows PASS or FAIL. The page is self-contained: inline CSS, figures as
base64 PNG data URIs, no external references.
"""

from __future__ import annotations

import argparse
import base64
import datetime as _dt
import html
import io
import math
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Optional

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import disk_closed_form  # noqa: E402
import rollsim_h5  # noqa: E402
import rollsim_plot  # noqa: E402

TOOLS_DIR = os.path.dirname(os.path.realpath(__file__))
SOURCE_DIR = os.path.dirname(TOOLS_DIR)
SCENARIO_DIR = os.path.join(SOURCE_DIR, "scenarios")

STANDARD_SET = [
    "tipping_table_linear.toml",
    "tipping_table.toml",
    "disk_type_a.toml",
    "disk_type_b.toml",
    "tipping_table_dae.toml",
    "relay_feedback.toml",
    "carriage_pendulum.toml",
]

# ---------------------------------------------------------------------------------------------------------
# Reference figures and tolerances

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
FILIPPOV_Z_TOL = 1e-9                 # |z| at a stick
FILIPPOV_EDGE_TOL = 1e-8              # ||x| - 1| at a slip
DISK_ENERGY_FACTOR = 1e3              # max |E(0) - E(t) - dissipated(t)| / E(0) <= 1000 rtol
DISK_CONVERGENCE_RTOLS = (1e-8, 1e-10, 1e-12)
CLOSED_FORM_TIME_FACTOR = 1e5         # largest |t_rollsim - t_closed| <= 1e5 rtol (time units of the run)


# ---------------------------------------------------------------------------------------------------------
# Data model of the page


@dataclass
class Check:
    name: str
    tolerance: str
    value: str
    passed: Optional[bool]  # None: not applicable / informational


@dataclass
class Section:
    key: str
    title: str
    intro: str = ""
    checks: list = field(default_factory=list)
    figures: list = field(default_factory=list)  # (caption, png bytes)
    body: list = field(default_factory=list)     # HTML fragments

    @property
    def passed(self) -> Optional[bool]:
        vals = [c.passed for c in self.checks if c.passed is not None]
        return None if not vals else all(vals)


@dataclass
class Run:
    label: str
    argv: list
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    output: Optional[str] = None  # the result file
    verdict_exit: bool = False    # a `check` command: exit 1 is its FAIL verdict (judged in its section)


class Runner:
    """Runs rollsim commands and keeps a log of every command line."""

    def __init__(self, binary: str, workdir: str):
        self.binary = binary
        self.workdir = workdir
        self.runs: list = []

    def prepare(self, label: str, args: list, output: Optional[str] = None) -> Run:
        argv = [self.binary] + list(args)
        if output:
            argv += ["-o", output]
        run = Run(label, argv, output=output)
        self.runs.append(run)
        return run

    @staticmethod
    def execute(run: Run) -> Run:
        t0 = time.perf_counter()
        p = subprocess.run(run.argv, capture_output=True, text=True)
        run.seconds = time.perf_counter() - t0
        run.returncode, run.stdout, run.stderr = p.returncode, p.stdout, p.stderr
        return run

    def execute_all(self, runs: list, jobs: int):
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
            list(ex.map(self.execute, runs))


# ---------------------------------------------------------------------------------------------------------
# Helpers


def png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


def fmt(v, digits=4) -> str:
    if v is None:
        return "–"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    try:
        v = float(v)
    except (TypeError, ValueError):
        return html.escape(str(v))
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if v == 0:
        return "0"
    a = abs(v)
    if 1e-3 <= a < 1e5:
        s = f"{v:.{digits}g}"
    else:
        s = f"{v:.{max(digits - 1, 1)}e}"
        m, e = s.split("e")
        if "." in m:
            m = m.rstrip("0").rstrip(".")
        exact_power = m == "1" and abs(v / float(f"1e{int(e)}") - 1.0) < 1e-12
        s = f"10<sup>{int(e)}</sup>" if exact_power else f"{m}×10<sup>{int(e)}</sup>"
    return s.replace("-", "−")


def table_html(header: list, rows: list, cls: str = "data") -> str:
    out = [f'<table class="{cls}"><thead><tr>']
    out += [f"<th>{h}</th>" for h in header]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def badge(passed: Optional[bool]) -> str:
    if passed is None:
        return '<span class="badge na">n/a</span>'
    return '<span class="badge pass">PASS</span>' if passed else '<span class="badge fail">FAIL</span>'


def read_toml(path: str) -> dict:
    if tomllib is None:
        return {}
    with open(path, "rb") as f:
        return tomllib.load(f)


def scenario_kind(doc: dict) -> str:
    model = doc.get("model", "")
    if "sweep" in doc:
        return "sweep"
    if model == "tipping_table":
        if "linear" in doc:
            return "linear"
        if doc.get("formulation") == "dae":
            return "dae"
        return "table"
    if model == "rolling_disk":
        return "disk"
    return "other"


def load_result(run: Run):
    if run.output and os.path.exists(run.output):
        try:
            return rollsim_h5.load(run.output, allow_incomplete=True)
        except (rollsim_h5.RollsimFileError, OSError):
            return None
    return None


def failed_run_check(run: Run) -> Check:
    msg = (run.stderr or run.stdout).strip().splitlines()
    return Check(f"{run.label}: run", "exit status 0", f"exit {run.returncode}: {html.escape(msg[-1] if msg else '')}",
                 False)


# ---------------------------------------------------------------------------------------------------------
# Checks. Each builder gets the Runner at plan time (to queue its commands) and returns a function that
# builds its Section(s) once the commands have run.


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
    # The report's own l2 error against (1.8)-(1.9): s = +-sqrt(-2 g (3 r +- sqrt(2 l^2 + 9 r^2))) / l.
    g, rr, ll = 9.81, 0.25, 1.0
    ref = []
    for sgn in (+1, -1):
        inner = -2 * g * (3 * rr + sgn * math.sqrt(2 * ll**2 + 9 * rr**2))
        root = np.sqrt(complex(inner)) / ll
        ref += [root, -root]
    ref = np.array(ref)
    # Pair each computed root with the nearest reference root.
    used, diffs, pairs = set(), [], []
    for z in lam:
        k = min((k for k in range(len(ref)) if k not in used), key=lambda k: abs(ref[k] - z))
        used.add(k)
        diffs.append(abs(ref[k] - z))
        pairs.append((z, ref[k]))
    own_err = float(np.sqrt(np.sum(np.square(diffs))))
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
        rollsim_plot._bode(axs[0], fr, "magnitude_db", "magnitude", "dB")
        rollsim_plot._bode(axs[1], fr, "phase_deg", "phase", "deg")
        for f0, ls in ((EOM_FREQUENCY_HZ, "--"),):
            for ax in axs[:2]:
                ax.axvline(f0, color="tab:red", linestyle=ls, linewidth=0.8, label=f"EoM pair {f0:.4f} Hz")
        axs[0].legend(fontsize="small")
    rollsim_plot._eigen_map(axs[2], lin)
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
    # Observed order: slope of log(error) against log(epsilon) over the rows where the error is well above
    # the integration floor (error > 100 x the smallest error of the mode).
    orders = {}
    for m in dict.fromkeys(modes):
        sel = modes == m
        e, x = err[sel], eps[sel]
        good = (e > 0) & np.isfinite(e)
        e, x = e[good], x[good]
        if e.size < 3:
            orders[m] = float("nan")
            continue
        floor = e.min()
        use = e > 100 * floor
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


def plan_table(runner: Runner, scen: str, name: str):
    runs = []
    for rt in ENERGY_RTOLS:
        runs.append((rt, runner.prepare(f"run {name} rtol {rt:g}",
                                        ["run", scen, "-q", "--set", f"solver.rtol={rt:g}", "--set",
                                         "events.lift_off=record"],
                                        os.path.join(runner.workdir, f"{name}-rtol{rt:g}.h5"))))

    def build():
        return [energy_section(runs, name)]

    return build


def energy_section(runs: list, name: str) -> Section:
    sec = Section(f"energy-{name}", f"Energy conservation, table to the edge ({name})",
                  "The conservative tipping table integrated to the table edge (lift-off recorded, not stopped) at "
                  "four relative tolerances. The drift of T + V − τθ1 over the run, relative to the initial energy, "
                  f"must stay below {ENERGY_DRIFT_FACTOR:g} × rtol and fall as the tolerance tightens.")
    rows, drifts, ok_each, figs_r = [], [], [], []
    for rt, run in runs:
        r = load_result(run)
        if r is None or run.returncode != 0:
            sec.checks.append(failed_run_check(run))
            drifts.append(float("nan"))
            ok_each.append(False)
            continue
        s = r.summary
        d = float(s.get("energy_drift_rel", float("nan")))
        drifts.append(d)
        ok = d < ENERGY_DRIFT_FACTOR * rt
        ok_each.append(ok)
        figs_r.append((rt, r))
        rows.append([fmt(rt), html.escape(str(s.get("termination", ""))), fmt(s.get("t_final"), 10),
                     fmt(s.get("energy_drift_abs"), 3), fmt(d, 3), fmt(d / rt, 3), badge(ok),
                     str(r.solver.get("n_steps", "–"))])
    decreasing = all(b < a for a, b in zip(drifts, drifts[1:])) and all(np.isfinite(drifts))
    sec.checks.append(Check("energy drift at rtol " + ", ".join(f"{rt:g}" for rt in ENERGY_RTOLS),
                            f"drift_rel &lt; {ENERGY_DRIFT_FACTOR:g} rtol at each",
                            "drift/rtol " + ", ".join(fmt(d / rt, 2) for d, rt in zip(drifts, ENERGY_RTOLS)),
                            all(ok_each)))
    sec.checks.append(Check("energy drift falls with rtol", "strictly decreasing",
                            " > ".join(fmt(d, 2) for d in drifts), decreasing))
    sec.body.append(table_html(["rtol", "termination", "t_final [s]", "drift [J]", "drift (relative)",
                                "drift / rtol", f"&lt; {ENERGY_DRIFT_FACTOR:g} rtol", "steps"], rows))
    fig = Figure(figsize=(11.4, 4.0), layout="constrained")
    a0, a1 = fig.subplots(1, 2)
    rt = np.array(ENERGY_RTOLS)
    a0.loglog(rt, drifts, "o-", label="relative drift")
    a0.loglog(rt, ENERGY_DRIFT_FACTOR * rt, "r:", label=f"{ENERGY_DRIFT_FACTOR:g} × rtol (tolerance)")
    a0.loglog(rt, rt, color="grey", linestyle="--", linewidth=0.8, label="rtol")
    a0.set_xlabel("rtol [-]")
    a0.set_ylabel("max |E(t) − E(0)| / E(0) [-]")
    a0.set_title("Energy drift against the tolerance")
    a0.grid(True, which="both", alpha=0.3)
    a0.legend(fontsize="small")
    for i, (rtv, r) in enumerate(figs_r):
        tr = r.trajectory
        bal, _ = rollsim_plot.energy_balance(r)
        a1.semilogy(tr["time"], np.abs(bal - bal[0]) / abs(bal[0]) + 1e-18, color=f"C{i}", linewidth=1,
                    label=f"rtol {rtv:g}")
    if figs_r:
        rollsim_plot.mark_events(a1, figs_r[-1][1].events)
    a1.set_xlabel("time [s]")
    a1.set_ylabel("|E(t) − E(0)| / E(0) [-]")
    a1.set_title("Energy error over the run (samples)")
    a1.grid(True, which="both", alpha=0.3)
    a1.legend(fontsize="x-small")
    sec.figures.append(("Energy drift against rtol (left) and over time (right)", png(fig)))
    return sec


def plan_disk(runner: Runner, scen: str, name: str):
    run = runner.prepare(f"run {name}", ["run", scen, "-q"], os.path.join(runner.workdir, f"{name}.h5"))
    doc = read_toml(scen)
    own_rtol = float(doc.get("solver", {}).get("rtol", 1e-10))
    conv = []
    # The same orbit at a looser and a tighter tolerance: the closed-form comparison must converge.
    for rt in DISK_CONVERGENCE_RTOLS:
        if rt != own_rtol:
            conv.append((rt, runner.prepare(f"run {name} rtol {rt:g}",
                                            ["run", scen, "-q", "--set", f"solver.rtol={rt:g}"],
                                            os.path.join(runner.workdir, f"{name}-rtol{rt:g}.h5"))))
    conv.append((own_rtol, run))
    conv.sort(key=lambda p: -p[0])

    def build():
        return [disk_section(run, name, own_rtol, conv)]

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
    sec = Section(f"disk-{name}", f"Rolling disk: {html.escape(title)}",
                  "The Coulomb rolling/sliding disk as a Filippov system. Every transition in /events is checked "
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
        f"{len(kinds)} events ({int(stick.sum())} stick, {int(slip.sum())} slip, {int(rev.sum())} reversal), "
        f"{len(viol)} violations; max |z| at stick {fmt(worst_z, 2)}, max ||x|−1| at slip {fmt(worst_edge, 2)}",
        len(viol) == 0 and len(kinds) > 0))
    sec.body.append(table_html(
        ["event kind", "count", "condition", "worst value"],
        [["stick", str(int(stick.sum())), "|x| &lt; 1 and z = 0",
          f"max |x| = {fmt(margin_stick, 6)}, max |z| = {fmt(worst_z, 2)}"],
         ["slip", str(int(slip.sum())), "|x| = 1", f"max ||x| − 1| = {fmt(worst_edge, 2)}"],
         ["reversal", str(int(rev.sum())), "|x| > 1", f"min |x| = {fmt(margin_rev, 6)}"]]))

    # Energy balance, from the samples and from rollsim's own summary (which also covers internal steps).
    tr = r.trajectory
    E = np.asarray(tr["total_energy"], float)
    D = np.asarray(tr["dissipated_energy"], float)
    bal = E[0] - E - D
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
                                f"{len(t_ev)} vs {len(cf_t)} events",
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
            + f'<p class="note">rollsim: {len(t_ev)} events to τ = {t_end:g}; closed form: {len(cf_t)} events. '
              f"Classification {html.escape(str(r.summary.get('classification', '–')))}; last rolling radius "
              f"{fmt(r.summary.get('rolling_radius'), 10)} (closed form {fmt(cf.rolling_radius, 10)}).</p>")
    else:
        sec.checks.append(Check("event times vs closed form", "needs j and Ω0 from the scenario", "not compared",
                                None))

    fig = Figure(figsize=(11.4, 4.8), layout="constrained")
    gs = fig.add_gridspec(1, 3, width_ratios=[1.4, 1.0, 1.0])
    ax0 = fig.add_subplot(gs[0, 0], projection="3d")
    rollsim_plot._phase_portrait(ax0, r)
    ax1 = fig.add_subplot(gs[0, 1])
    rollsim_plot._xyz(ax1, r)
    ax2 = fig.add_subplot(gs[0, 2])
    t = np.asarray(tr["time"], float)
    ax2.plot(t, E, label="E(t)")
    ax2.plot(t, D, label="dissipated(t)")
    ax2.set_xlabel(rollsim_plot.axis_label("time", tr.units.get("time")))
    ax2.set_ylabel(rollsim_plot.axis_label("energy", tr.units.get("total_energy")))
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
        a1.set_xlabel(rollsim_plot.axis_label("time", tr.units.get("time")))
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


def plan_dae(runner: Runner, scen: str, name: str):
    run = runner.prepare(f"check formulations {name}", ["check", "formulations", scen])
    run.verdict_exit = True

    def build():
        return [dae_section(run, name)]

    return build


_NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)"


def parse_formulations(text: str) -> dict:
    """Parse the output of `rollsim check formulations`."""
    out = {"tables": [], "events": [], "tolerances": {}, "largest": {}, "verdict": None, "problems": []}
    current = None
    for line in text.splitlines():
        m = re.match(r"^tolerances\s+state\s+" + _NUM + r",\s*force\s+" + _NUM + r"\s*N,\s*event time\s+" + _NUM,
                     line)
        if m:
            out["tolerances"] = {"state": float(m[1]), "force": float(m[2]), "event time": float(m[3])}
            continue
        m = re.match(r"^largest\s+state\s+" + _NUM + r"\s*\(([^)]*)\),\s*force\s+" + _NUM + r"\s*N\s*\(([^)]*)\),"
                     r"\s*event time\s+" + _NUM + r"\s*s\s*\(([^)]*)\)", line)
        if m:
            out["largest"] = {"state": (float(m[1]), m[2]), "force": (float(m[3]), m[4]),
                              "event time": (float(m[5]), m[6])}
            continue
        m = re.match(r"^\s+(\S+)\s+ODE\s+" + _NUM + r"\s*s\s+DAE\s+" + _NUM + r"\s*s\s+difference\s+" + _NUM, line)
        if m:
            out["events"].append((m[1], float(m[2]), float(m[3]), float(m[4])))
            continue
        m = re.match(r"^\s+(\S+)\s+" + _NUM + r"\s+(\S*)\s+at t = " + _NUM + r"\s*s", line)
        if m and current is not None:
            current[1].append((m[1], float(m[2]), m[3], float(m[4])))
            continue
        if line.startswith("FAIL:"):
            out["problems"].append(line[5:].strip())
        elif line.startswith("PASS"):
            out["verdict"] = True
        elif line.strip() == "FAIL":
            out["verdict"] = False
        elif line and not line.startswith(" ") and not line.startswith("ODE") and not line.startswith("DAE") \
                and not line.startswith("common") and not line.startswith("events"):
            current = (line.strip(), [])
            out["tables"].append(current)
    return out


def dae_section(run: Run, name: str) -> Section:
    sec = Section(f"dae-{name}", f"ODE against DAE formulation ({name})",
                  "The tipping table in minimal coordinates (ODE, CVODE) against body coordinates with contact and "
                  "ideal-rolling constraints (DAE, IDA), compared on their common samples by "
                  "<code>rollsim check formulations</code>; its output is parsed and the largest differences are "
                  "checked here against the scenario's tolerances.")
    p = parse_formulations(run.stdout)
    tol, big = p["tolerances"], p["largest"]
    if not tol or not big:
        sec.checks.append(failed_run_check(run))
        sec.body.append(f"<pre>{html.escape(run.stdout + run.stderr)}</pre>")
        return sec
    for key, unit in (("state", "rad, rad/s"), ("force", "N"), ("event time", "s")):
        v, where = big[key]
        sec.checks.append(Check(f"largest {key} difference ({html.escape(where)})", f"≤ {fmt(tol[key])} {unit}",
                                fmt(v, 3), v <= tol[key]))
    sec.checks.append(Check("rollsim's own verdict", "exit status 0 and PASS", f"exit {run.returncode}",
                            run.returncode == 0 and p["verdict"] is True))
    for title, rows in p["tables"]:
        if rows:
            sec.body.append(f"<h3>{html.escape(title)}</h3>" + table_html(
                ["quantity", "largest |difference|", "unit", "at t [s]"],
                [[html.escape(a), fmt(b, 3), html.escape(c), f"{d:.6f}"] for a, b, c, d in rows]))
    if p["events"]:
        sec.body.append("<h3>Events</h3>" + table_html(
            ["event", "t ODE [s]", "t DAE [s]", "difference [s]"],
            [[html.escape(k), f"{a:.12f}", f"{b:.12f}", fmt(d, 3)] for k, a, b, d in p["events"]]))
    sec.body.append('<details><summary>output of rollsim check formulations</summary><pre>'
                    + html.escape(run.stdout) + "</pre></details>")
    # Figure: bars of the largest differences against the tolerances.
    fig = Figure(figsize=(8, 3.4), layout="constrained")
    ax = fig.subplots()
    keys = ["state", "force", "event time"]
    vals = [max(big[k][0], 1e-20) for k in keys]
    tols = [tol[k] for k in keys]
    xs = np.arange(3)
    ax.bar(xs - 0.18, vals, width=0.36, label="largest difference", color="tab:blue")
    ax.bar(xs + 0.18, tols, width=0.36, label="tolerance", color="tab:red", alpha=0.5)
    ax.set_yscale("log")
    ax.set_xticks(xs, [f"{k}\n({big[k][1]})" for k in keys], fontsize="small")
    ax.set_ylabel("ODE − DAE")
    ax.set_title("Largest ODE − DAE differences and their tolerances")
    ax.legend(fontsize="small")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    sec.figures.append(("Largest ODE − DAE differences against the tolerances", png(fig)))
    return sec


def plan_other(runner: Runner, scen: str, name: str):
    run = runner.prepare(f"run {name}", ["run", scen, "-q"], os.path.join(runner.workdir, f"{name}.h5"))

    def build():
        return [other_section(run, name)]

    return build


def other_section(run: Run, name: str) -> Section:
    r = load_result(run)
    title = r.title if r is not None and r.title else name
    sec = Section(f"run-{name}", f"Run: {html.escape(title)}",
                  "A further model of the standard set, run to its end: it must complete; its summary is listed.")
    if r is None or run.returncode != 0:
        sec.checks.append(failed_run_check(run))
        return sec
    sec.checks.append(Check("run completes", "exit 0, completed = 1",
                            f"{html.escape(str(r.summary.get('termination', r.status)))} at t = "
                            f"{fmt(r.summary.get('t_final'), 6)}", bool(r.completed) and run.returncode == 0))
    s = r.summary
    rt = r.solver.get("rtol")
    drift = s.get("energy_drift_rel")
    if drift is None and s.get("energy_drift_abs") is not None and s.get("energy_initial"):
        drift = float(s["energy_drift_abs"]) / abs(float(s["energy_initial"]))
    if drift is not None and isinstance(rt, (int, float)) and math.isfinite(float(drift)):
        sec.checks.append(Check("energy drift", f"relative &lt; {ENERGY_DRIFT_FACTOR:g} rtol = "
                                f"{fmt(ENERGY_DRIFT_FACTOR * rt)}", fmt(drift, 3), float(drift) < ENERGY_DRIFT_FACTOR * rt))
    rows = [[html.escape(k), fmt(v, 6) if not isinstance(v, str) else html.escape(v if len(v) < 60 else v[:57] + "…")]
            for k, v in r.summary.items()]
    sec.body.append(table_html(["summary", "value"], rows))
    figs = rollsim_plot.figures(r)
    if figs:
        sec.figures.append(("Views of the run (tools/plot)", png(figs[0])))
    return sec


def plan_sweep(runner: Runner, scen: str, name: str):
    run = runner.prepare(f"sweep {name}", ["sweep", scen], os.path.join(runner.workdir, f"{name}-sweep.h5"))

    def build():
        r = load_result(run)
        sec = Section(f"sweep-{name}", f"Sweep: {html.escape(r.title if r is not None and r.title else name)}",
                      "A parameter sweep: every point must finish.")
        if r is None or r.sweep is None or run.returncode != 0:
            sec.checks.append(failed_run_check(run))
            return [sec]
        ok = rollsim_plot._ok_mask(r.sweep)
        sec.checks.append(Check("every sweep point finishes", "0 failed", f"{int((~ok).sum())} of {len(ok)} failed",
                                bool(ok.all())))
        figs = rollsim_plot.figures(r)
        if figs:
            sec.figures.append(("Sweep views (tools/plot)", png(figs[0])))
        return [sec]

    return build


PLANNERS = {"linear": plan_linear, "table": plan_table, "disk": plan_disk, "dae": plan_dae, "other": plan_other,
            "sweep": plan_sweep}


# ---------------------------------------------------------------------------------------------------------
# Solver statistics and provenance


SOLVER_COLUMNS = [  # (heading, keys tried in order)
    ("method", ("method",)), ("rtol", ("rtol",)), ("atol", ("atol",)), ("steps", ("n_steps",)),
    ("f / residual evals", ("n_rhs_evals", "n_res_evals")), ("Jacobians", ("n_jac_evals",)),
    ("root evals", ("n_root_evals",)), ("nonlinear iters", ("n_nonlin_iters",)),
    ("nonlinear fails", ("n_nonlin_conv_fails",)), ("error-test fails", ("n_err_test_fails",)),
    ("restarts", ("n_restarts",)),
]


def solver_section(runner: Runner) -> Section:
    sec = Section("solver", "Solver statistics of every run",
                  "The integrator's counters from /solver of each result file, with the wall time of the command.")
    rows, all_ok = [], True
    for run in runner.runs:
        r = load_result(run)
        ok = run.returncode == 0 or (run.verdict_exit and run.returncode == 1)
        all_ok &= ok
        code = str(run.returncode) + (" (check: FAIL)" if run.verdict_exit and run.returncode == 1 else "")
        cells = [html.escape(run.label), code if ok else f'<span class="bad">{code}</span>', f"{run.seconds:.2f}"]
        for _, keys in SOLVER_COLUMNS:
            v = next((r.solver[k] for k in keys if r is not None and k in r.solver), None)
            cells.append("–" if v is None else html.escape(v) if isinstance(v, str) else fmt(v, 3))
        if r is None:
            cells[3] = '<span class="note">no result file (see its section)</span>'
        rows.append(cells)
    n_ok = sum(r.returncode == 0 or (r.verdict_exit and r.returncode == 1) for r in runner.runs)
    sec.checks.append(Check("every command finishes", "exit 0 (a check command: 0 or 1, its verdict, judged "
                            "in its section)", f"{n_ok} of {len(runner.runs)}", all_ok))
    sec.body.append('<div class="scroll">' + table_html(
        ["run", "exit", "wall [s]"] + [h for h, _ in SOLVER_COLUMNS], rows, cls="data stats") + "</div>")
    return sec


def git_info() -> dict:
    info = {}
    try:
        info["hash"] = subprocess.run(["git", "-C", SOURCE_DIR, "rev-parse", "HEAD"], capture_output=True,
                                      text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", SOURCE_DIR, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        info["dirty"] = bool(dirty)
        info["branch"] = subprocess.run(["git", "-C", SOURCE_DIR, "rev-parse", "--abbrev-ref", "HEAD"],
                                        capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def provenance_section(runner: Runner, binary: str, version: str, argv: list, started: str, seconds: float,
                       any_result) -> Section:
    sec = Section("provenance", "Software version and provenance")
    gi = git_info()
    prov = any_result.provenance if any_result is not None else {}
    import matplotlib as mpl
    import scipy
    rows = [
        ["rollsim", html.escape(version)],
        ["binary", f"<code>{html.escape(binary)}</code>"],
        ["git hash (binary)", f"<code>{html.escape(str(prov.get('git_hash', '–')))}</code>"],
        ["git hash (source tree)", f"<code>{html.escape(gi.get('hash', '–'))}</code>"
         + (" (with uncommitted changes)" if gi.get("dirty") else "")
         + (f" on {html.escape(gi['branch'])}" if gi.get("branch") else "")],
        ["report command", f"<code>{html.escape(shlex.join(argv))}</code>"],
        ["date (UTC)", html.escape(started)],
        ["total time", f"{seconds:.1f} s"],
        ["host", html.escape(f"{platform.node()} · {platform.system()} {platform.release()} · "
                             f"{os.cpu_count()} CPUs")],
        ["Python", html.escape(f"{platform.python_version()} · numpy {np.__version__} · scipy {scipy.__version__}"
                               f" · matplotlib {mpl.__version__}")],
    ]
    # Every result file must come from this binary and be complete.
    m = re.search(r"\(([0-9a-f]{7,40})", version)
    bin_hash = m.group(1) if m else None
    files = [(run, load_result(run)) for run in runner.runs if run.output]
    bad = [run.label for run, r in files if r is None or not r.completed
           or (bin_hash and not str(r.provenance.get("git_hash", "")).startswith(bin_hash[:7]))]
    sec.checks.append(Check("result files: complete, written by this binary",
                            f"completed = 1 and git_hash = {html.escape(bin_hash or '?')}",
                            f"{len(files) - len(bad)} of {len(files)} files" + (
                                f"; not: {html.escape(', '.join(bad))}" if bad else ""),
                            bool(files) and not bad))
    sec.body.append(table_html(["item", "value"], rows, cls="kv"))
    cmd_rows = [[html.escape(run.label), f"<code>{html.escape(shlex.join(run.argv))}</code>", str(run.returncode),
                 f"{run.seconds:.2f}"] for run in runner.runs]
    sec.body.append("<h3>Command lines</h3>" + table_html(["run", "command", "exit", "wall [s]"], cmd_rows))
    return sec


# ---------------------------------------------------------------------------------------------------------
# HTML


CSS = """
:root { --pass: #1a7f37; --fail: #cf222e; --na: #6e7781; --line: #d0d7de; --soft: #f6f8fa; --ink: #1f2328; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--ink);
       background: #eef1f4; }
header { background: #24292f; color: #fff; padding: 22px 36px 18px; }
header h1 { margin: 0 0 4px; font-size: 26px; font-weight: 600; }
header .meta { color: #c9d1d9; font-size: 13px; }
header .overall { float: right; font-size: 20px; font-weight: 700; padding: 8px 18px; border-radius: 8px; }
header .overall.pass { background: var(--pass); } header .overall.fail { background: var(--fail); }
main { max-width: 1240px; margin: 0 auto; padding: 18px 24px 40px; }
section, .summary { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 16px 24px 20px;
          margin: 18px 0; box-shadow: 0 1px 2px rgba(0,0,0,.04); }
h2 { margin: 0 0 6px; font-size: 20px; display: flex; align-items: center; gap: 12px; }
h2 a.top { margin-left: auto; font-size: 12px; font-weight: 400; color: var(--na); text-decoration: none; }
h3 { font-size: 15px; margin: 18px 0 6px; color: #57606a; }
p.intro { color: #57606a; margin: 4px 0 12px; max-width: 95ch; }
p.note { color: #57606a; font-size: 13px; }
table { border-collapse: collapse; font-size: 13.5px; margin: 6px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 10px; text-align: left; vertical-align: middle; }
th { background: var(--soft); font-weight: 600; }
table.data td { font-variant-numeric: tabular-nums; }
table.checks { width: 100%; }
table.checks td.val { font-size: 12.5px; color: #424a53; }
table.summary-table { width: 100%; }
table.summary-table td { padding: 6px 10px; }
table.summary-table tr.fail td { background: #fff0f0; }
table.summary-table img { height: 54px; border: 1px solid var(--line); border-radius: 4px; display: block; }
table.summary-table a { color: var(--ink); font-weight: 600; text-decoration: none; }
table.kv td:first-child { font-weight: 600; white-space: nowrap; }
.badge { display: inline-block; min-width: 52px; text-align: center; padding: 2px 10px; border-radius: 12px;
         font-size: 12.5px; font-weight: 700; color: #fff; letter-spacing: .04em; }
.badge.pass { background: var(--pass); } .badge.fail { background: var(--fail); } .badge.na { background: var(--na); }
figure { margin: 12px 0; }
figure img { max-width: 100%; border: 1px solid var(--line); border-radius: 6px; }
figcaption { font-size: 13px; color: #57606a; }
.bad { color: var(--fail); font-weight: 700; }
.scroll { overflow-x: auto; }
pre { background: var(--soft); padding: 10px; border-radius: 6px; font-size: 12px; overflow-x: auto; }
code { font-size: 12.5px; word-break: break-all; }
.counts { font-size: 14px; margin: 4px 0 10px; }
"""

SCRIPT = """
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('img');
  var ok = 0;
  for (var i = 0; i < imgs.length; i++) { if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++; }
  var tables = document.querySelectorAll('table').length;
  document.body.setAttribute('data-images-total', String(imgs.length));
  document.body.setAttribute('data-images-decoded', String(ok));
  document.body.setAttribute('data-tables', String(tables));
  document.title = document.title + ' [images ' + ok + '/' + imgs.length + ', tables ' + tables + ']';
});
"""


def render(sections: list, version: str, started: str, seconds: float) -> str:
    checks = [(s, c) for s in sections for c in s.checks]
    n_pass = sum(c.passed is True for _, c in checks)
    n_fail = sum(c.passed is False for _, c in checks)
    n_na = sum(c.passed is None for _, c in checks)
    overall = n_fail == 0 and n_pass > 0
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>rollsim validation report: {'PASS' if overall else 'FAIL'}</title>",
           f"<style>{CSS}</style><script>{SCRIPT}</script></head><body>"]
    out.append(f'<header><span class="overall {"pass" if overall else "fail"}">{"ALL PASS" if overall else "FAIL"}'
               f"</span><h1>rollsim validation report</h1>"
               f'<div class="meta">{html.escape(version)} · {html.escape(started)} · {seconds:.1f} s · '
               f"{n_pass} passed, {n_fail} failed" + (f", {n_na} not applicable" if n_na else "") + "</div></header>")
    out.append("<main>")
    # Summary
    out.append('<div class="summary" id="summary"><h2>Summary</h2>')
    rows = []
    for s in sections:
        thumb = (f'<a href="#{s.key}"><img alt="{html.escape(s.figures[0][0])}" '
                 f'src="data:image/png;base64,{base64.b64encode(s.figures[0][1]).decode()}"></a>'
                 if s.figures else "")
        for i, c in enumerate(s.checks):
            cls = ' class="fail"' if c.passed is False else ""
            first = i == 0
            cells = []
            if first:
                span = f' rowspan="{len(s.checks)}"' if len(s.checks) > 1 else ""
                cells.append(f'<td{span}><a href="#{s.key}">{s.title}</a></td>')
                cells.append(f"<td{span}>{thumb}</td>")
            cells += [f"<td>{c.name}</td>", f"<td>{c.tolerance}</td>", f'<td class="val">{c.value}</td>',
                      f"<td>{badge(c.passed)}</td>"]
            rows.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    out.append('<table class="summary-table checks"><thead><tr><th>section</th><th>figure</th><th>check</th>'
               "<th>tolerance</th><th>value</th><th>result</th></tr></thead><tbody>" + "".join(rows)
               + "</tbody></table></div>")
    for s in sections:
        out.append(f'<section id="{s.key}"><h2>{s.title} {badge(s.passed)}<a class="top" href="#summary">'
                   "↑ summary</a></h2>")
        if s.intro:
            out.append(f'<p class="intro">{s.intro}</p>')
        if s.checks:
            out.append(table_html(["check", "tolerance", "value", "result"],
                                  [[c.name, c.tolerance, f'<span class="val">{c.value}</span>', badge(c.passed)]
                                   for c in s.checks], cls="checks"))
        for cap, data in s.figures:
            out.append(f'<figure><img alt="{html.escape(cap)}" src="data:image/png;base64,'
                       f'{base64.b64encode(data).decode()}"><figcaption>{html.escape(cap)}</figcaption></figure>')
        out += s.body
        out.append("</section>")
    out.append("</main></body></html>")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------------


def find_binary() -> str:
    b = os.environ.get("ROLLSIM_BINARY")
    if b:
        return b
    return os.path.normpath(os.path.join(TOOLS_DIR, "..", "build", "rollsim"))


def resolve_scenario(s: str) -> str:
    if os.path.exists(s):
        return os.path.abspath(s)
    cand = os.path.join(SCENARIO_DIR, s)
    if os.path.exists(cand):
        return cand
    raise FileNotFoundError(s)


def main(argv=None) -> int:
    argv_full = [sys.argv[0]] + list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog="report", description="Run the rollsim validation checks and write one "
                                 "self-contained HTML page.")
    ap.add_argument("scenarios", nargs="*", metavar="SCENARIO",
                    help="scenario files (default: the standard validation set in scenarios/)")
    ap.add_argument("-o", "--output", default="report.html", metavar="REPORT.html", help="the page (default report.html)")
    ap.add_argument("--keep", metavar="DIR", help="keep the result files in DIR (default: a temporary directory, removed)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2, help="commands run at once (default: CPUs)")
    args = ap.parse_args(argv)

    binary = find_binary()
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        print(f"report: error: rollsim binary not found at {binary} (build it, or set ROLLSIM_BINARY)",
              file=sys.stderr)
        return 2
    try:
        scens = [resolve_scenario(s) for s in (args.scenarios or STANDARD_SET)]
    except FileNotFoundError as exc:
        print(f"report: error: no such scenario: {exc}", file=sys.stderr)
        return 2

    t0 = time.perf_counter()
    started = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        workdir, cleanup = os.path.abspath(args.keep), None
    else:
        cleanup = tempfile.mkdtemp(prefix="rollsim-report-")
        workdir = cleanup
    try:
        version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip() or "unknown"
        runner = Runner(binary, workdir)
        builders = []
        names = set()
        for sc in scens:
            base = os.path.splitext(os.path.basename(sc))[0]
            name, k = base, 2
            while name in names:
                name, k = f"{base}-{k}", k + 1
            names.add(name)
            kind = scenario_kind(read_toml(sc))
            builders.append(PLANNERS[kind](runner, sc, name))
        runner.execute_all(runner.runs, args.jobs)
        sections = []
        for b in builders:
            sections += b()
        sections.append(solver_section(runner))
        any_result = next((r for r in (load_result(x) for x in runner.runs) if r is not None), None)
        seconds = time.perf_counter() - t0
        sections.append(provenance_section(runner, binary, version, argv_full, started, seconds, any_result))
        page = render(sections, version, started, seconds)
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(page)
    finally:
        if cleanup:
            shutil.rmtree(cleanup, ignore_errors=True)
    checks = [c for s in sections for c in s.checks]
    n_fail = sum(c.passed is False for c in checks)
    for s in sections:
        for c in s.checks:
            mark = {True: "PASS", False: "FAIL", None: "n/a "}[c.passed]
            plain = re.sub(r"<[^>]+>", "", c.name)
            print(html.unescape(f"{mark}  {re.sub(r'<[^>]+>', '', s.title)}: {plain}"))
    print(f"wrote {args.output} ({time.perf_counter() - t0:.1f} s): "
          f"{sum(c.passed is True for c in checks)} passed, {n_fail} failed")
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
