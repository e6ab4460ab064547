"""ODE against DAE formulation: `rollsim check formulations -o FILE`, read from its /formulations group."""

from __future__ import annotations

import html
import os

import numpy as np
from matplotlib.figure import Figure

from .model import Check, Run, Runner, Section, failed_run_check, load_result
from .page import fmt, png, table_html

SIGNAL_TABLES = (("state", "Largest differences, states (DAE − ODE)"), ("force", "Largest differences, forces"),
                 ("other", "Largest differences, other outputs (not judged)"))


def plan_dae(runner: Runner, scen: str, name: str):
    run = runner.prepare(f"check formulations {name}", ["check", "formulations", scen],
                         os.path.join(runner.workdir, f"{name}-formulations.h5"))
    run.verdict_exit = True

    def build():
        return [dae_section(run, name)]

    return build


def dae_section(run: Run, name: str) -> Section:
    sec = Section(f"dae-{name}", f"ODE against DAE formulation ({name})",
                  "The tipping table in minimal coordinates (ODE, CVODE) against body coordinates with contact and "
                  "ideal-rolling constraints (DAE, IDA), compared on their common samples by "
                  "<code>rollsim check formulations</code>; the largest differences it writes to /formulations are "
                  "checked here against the scenario's tolerances, stored next to them.")
    r = load_result(run)
    fo = r.formulations if r is not None else None
    if fo is None or run.returncode not in (0, 1):
        sec.checks.append(failed_run_check(run))
        return sec
    quantity = [str(q) for q in fo["quantity"]]
    largest = np.asarray(fo["largest"], float)
    tolerance = np.asarray(fo["tolerance"], float)
    worst, unit = [str(w) for w in fo["worst"]], [str(u) for u in fo["unit"]]
    for q, v, tol, w, u in zip(quantity, largest, tolerance, worst, unit):
        sec.checks.append(Check(f"largest {html.escape(q.replace('_', ' '))} difference ({html.escape(w)})",
                                f"≤ {fmt(tol)} {html.escape(u)}", fmt(v, 3), bool(v <= tol)))
    verdict = bool(fo.attrs.get("passed", 0))
    sec.checks.append(Check("rollsim's own verdict", "exit status 0 and passed = 1",
                            f"exit {run.returncode}, passed = {int(verdict)}", run.returncode == 0 and verdict))
    problems = [str(p) for p in fo.get("problems", [])]
    if problems:
        sec.body.append("<h3>Problems</h3><ul>" + "".join(f"<li>{html.escape(p)}</li>" for p in problems) + "</ul>")
    sig = fo.get("signals")
    if sig is not None and len(sig.get("name", [])):
        kinds = np.asarray(sig["kind"], str)
        for kind, title in SIGNAL_TABLES:
            sel = np.nonzero(kinds == kind)[0]
            if sel.size:
                sec.body.append(f"<h3>{html.escape(title)}</h3>" + table_html(
                    ["quantity", "largest |difference|", "unit", "at t [s]"],
                    [[html.escape(str(sig["name"][i])), fmt(sig["max_abs_difference"][i], 3),
                      html.escape(str(sig["unit"][i])), f"{sig['at_time'][i]:.6f}"] for i in sel]))
    ev = fo.get("events")
    if ev is not None and len(ev.get("kind", [])):
        sec.body.append("<h3>Events</h3>" + table_html(
            ["event", "t ODE [s]", "t DAE [s]", "difference [s]"],
            [[html.escape(str(k)), f"{a:.12f}", f"{b:.12f}", fmt(d, 3)]
             for k, a, b, d in zip(ev["kind"], ev["time_ode"], ev["time_dae"], ev["difference"])]))
    sec.body.append(f'<p class="note">Compared on {int(fo.attrs.get("n_common_samples", 0))} common samples.</p>'
                    '<details><summary>output of rollsim check formulations</summary><pre>'
                    + html.escape(run.stdout) + "</pre></details>")
    # Figure: bars of the largest differences against the tolerances.
    fig = Figure(figsize=(8, 3.4), layout="constrained")
    ax = fig.subplots()
    xs = np.arange(len(quantity))
    ax.bar(xs - 0.18, np.maximum(largest, 1e-20), width=0.36, label="largest difference", color="tab:blue")
    ax.bar(xs + 0.18, tolerance, width=0.36, label="tolerance", color="tab:red", alpha=0.5)
    ax.set_yscale("log")
    ax.set_xticks(xs, [f"{q.replace('_', ' ')} [{u}]\n({w})" for q, u, w in zip(quantity, unit, worst)],
                  fontsize="small")
    ax.set_ylabel("|DAE − ODE|")
    ax.set_title("Largest ODE − DAE differences and their tolerances")
    ax.legend(fontsize="small")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    sec.figures.append(("Largest ODE − DAE differences against the tolerances", png(fig)))
    return sec
