"""Further models of the standard set run to their end, and parameter sweeps."""

from __future__ import annotations

import html
import math
import os

from .. import plot
from .energy import ENERGY_DRIFT_FACTOR
from .animation import animated
from .model import Check, Run, Runner, Section, failed_run_check, load_result
from .page import fmt, png, table_html


def plan_other(runner: Runner, scen: str, name: str):
    run = runner.prepare(f"run {name}", ["run", scen, "-q"], os.path.join(runner.workdir, f"{name}.h5"))

    def build():
        return animated(runner.animations, other_section(run, name), run.output, name)

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
    figs = plot.figures(r)
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
        ok = plot._ok_mask(r.sweep)
        sec.checks.append(Check("every sweep point finishes", "0 failed", f"{int((~ok).sum())} of {len(ok)} failed",
                                bool(ok.all())))
        figs = plot.figures(r)
        if figs:
            sec.figures.append(("Sweep views (tools/plot)", png(figs[0])))
        return [sec]

    return build
