"""Energy conservation of the tipping table at several tolerances."""

from __future__ import annotations

import html
import os

import numpy as np
from matplotlib.figure import Figure

from .. import h5, plot
from .animation import animated
from .model import Check, Runner, Section, failed_run_check, load_result
from .page import badge, fmt, png, table_html

ENERGY_RTOLS = (1e-6, 1e-8, 1e-10, 1e-12)
ENERGY_DRIFT_FACTOR = 100.0           # drift_rel < 100 rtol at each tolerance


def plan_table(runner: Runner, scen: str, name: str):
    runs = []
    for rt in ENERGY_RTOLS:
        runs.append((rt, runner.prepare(f"run {name} rtol {rt:g}",
                                        ["run", scen, "-q", "--set", f"solver.rtol={rt:g}", "--set",
                                         "events.lift_off=record"],
                                        os.path.join(runner.workdir, f"{name}-rtol{rt:g}.h5"))))

    def build():
        # the animation of the run at the scenario's own tolerance 1e-10
        return animated(runner.animations, energy_section(runs, name), dict(runs).get(1e-10, runs[-1][1]).output, name)

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
        bal = h5.energy_ledger(tr).balance  # the file's own ledger E + D (T + V − τθ1 for the table)
        a1.semilogy(tr["time"], np.abs(bal - bal[0]) / abs(bal[0]) + 1e-18, color=f"C{i}", linewidth=1,
                    label=f"rtol {rtv:g}")
    if figs_r:
        plot.mark_events(a1, figs_r[-1][1].events)
    a1.set_xlabel("time [s]")
    a1.set_ylabel("|E(t) − E(0)| / E(0) [-]")
    a1.set_title("Energy error over the run (samples)")
    a1.grid(True, which="both", alpha=0.3)
    a1.legend(fontsize="x-small")
    sec.figures.append(("Energy drift against rtol (left) and over time (right)", png(fig)))
    return sec
