"""A sweep checked point by point: the rolling disk's type A/B map (`scenarios/disk_basin.toml`) on a coarse grid,
every point's symbols, type and rolling radius against the independent closed-form propagation
(`rollsim.disk_closed_form`).

Type A (Antali & Stepan): the orbit sticks and rolls for ever on a circle of radius R <= 1. Type B: it keeps
switching, +0-0+0-0..., and approaches the unit circle from outside. The closed form's verdict comes from its own
orbit: A when it ends rolling on R <= 1 before t_end, B when its last four modes are the cycle +0-0 (in some
phase) and its last stick radius exceeds 1, undetermined otherwise.
"""

from __future__ import annotations

import html
import os
import re

import numpy as np
from matplotlib.figure import Figure

from .. import disk_closed_form, plot
from .animation import animation_link
from .model import Check, Run, Runner, Section, failed_run_check, load_result, read_toml
from .page import count, finish_axes, fmt, png, table_html

MAP_POINTS = 6                 # per swept key: 6 x 6 = 36 points in the standard set
RADIUS_REL_TOL = 1e-12         # rolling radius, rollsim's exact method against the closed form (both exact)
CYCLE = "+0-0"


def closed_form_type(prop) -> str:
    if prop.final_mode == 0 and prop.rolling_radius <= 1.0:
        return "A"
    tail = prop.symbols[-4:]
    if len(tail) == 4 and tail in (CYCLE * 2) and prop.rolling_radius > 1.0:
        return "B"
    return "undetermined"


def coarse_scenario(scen: str, out: str, n: int = MAP_POINTS) -> str:
    """A copy of the sweep scenario ``scen`` at ``out`` whose every swept range has ``n`` points instead."""
    text = open(scen, encoding="utf-8").read()
    spec = read_toml(scen).get("sweep", {})
    lines = ["[sweep]"] + ([f'mode = "{spec["mode"]}"'] if "mode" in spec else [])
    for key, rng in spec.items():
        if isinstance(rng, dict) and {"from", "to"} <= set(rng):
            lines.append(f'"{key}" = {{ from = {rng["from"]!r}, to = {rng["to"]!r}, n = {n} }}')
    i = re.search(r"^\[sweep\]", text, re.M).start()
    j = re.search(r"^\[", text[i + 1:], re.M)
    rest = text[i + 1 + j.start():] if j else ""
    with open(out, "w", encoding="utf-8") as f:
        f.write(text[:i] + "\n".join(lines) + "\n" + rest)
    return out


def plan_disk_map(runner: Runner, scen: str, name: str):
    small = coarse_scenario(scen, os.path.join(runner.workdir, f"{name}-{MAP_POINTS}x{MAP_POINTS}.toml"))
    run = runner.prepare(f"sweep {name} ({MAP_POINTS} × {MAP_POINTS})", ["sweep", small, "-q"],
                         os.path.join(runner.workdir, f"{name}-sweep.h5"))

    def build():
        sec = disk_map_section(run, name)
        # The animation of the first type B point (the first point when there is none).
        r = load_result(run)
        cls = list(np.asarray(r.sweep["classification"], str)) if r is not None and r.sweep is not None else []
        point = cls.index("B") if "B" in cls else 0
        sec.animation = animation_link(runner.animations, run.output, f"{name}-point{point}", point=point)
        return [sec]

    return build


def disk_map_checks(r) -> tuple:
    """(checks, rows, closed-form types) of a rolling-disk sweep over initial x and z against the closed form."""
    sw = r.sweep
    j = float(r.param("parameters.inertia_ratio"))
    t_end = float(r.param("simulation.t_end"))
    y0 = float(str(r.param("initial.y", 0.0)).strip('"'))
    ok = plot._ok_mask(sw)
    rows, types, bad_sym, bad_type, worst_r = [], [], [], [], 0.0
    for i in range(sw.nrows):
        x0, z0 = float(sw["initial.x"][i]), float(sw["initial.z"][i])
        cf = disk_closed_form.propagate(j, x0, y0, z0, t_end)
        ty = closed_form_type(cf)
        types.append(ty)
        sym, cls = str(sw["symbols"][i]), str(sw["classification"][i])
        rr = float(sw["rolling_radius"][i])
        dr = abs(rr - cf.rolling_radius) / cf.rolling_radius
        worst_r = max(worst_r, dr if np.isfinite(dr) else np.inf)
        if sym != cf.symbols:
            bad_sym.append(i)
        if cls != ty:
            bad_type.append(i)
        rows.append([str(i), f"{x0:.4g}", f"{z0:.4g}", html.escape(cls), ty,
                     html.escape(sym if len(sym) <= 14 else f"…{sym[-12:]} ({len(sym)})"),
                     "yes" if sym == cf.symbols else '<span class="bad">no</span>', fmt(rr, 12), fmt(dr, 2)])
    n = sw.nrows
    tally = {t: types.count(t) for t in ("A", "B", "undetermined") if types.count(t)}
    checks = [
        Check("every point finishes", "0 failed", f"{int((~ok).sum())} of {n} failed", bool(ok.all()) and n > 0),
        Check("type A/B of every point against the closed form", "identical, none undetermined",
              f"{n - len(bad_type)} of {n} agree (closed form: "
              + ", ".join(f"{k} {v}" for k, v in tally.items()) + ")",
              not bad_type and "undetermined" not in tally and n > 0),
        Check("mode symbols of every point against the closed form", "identical sequences",
              f"{n - len(bad_sym)} of {n} identical", not bad_sym and n > 0),
        Check("last rolling radius of every point against the closed form", f"relative ≤ {fmt(RADIUS_REL_TOL)}",
              f"largest {fmt(worst_r, 2)}", worst_r <= RADIUS_REL_TOL)]
    return checks, rows, types


def disk_map_section(run: Run, name: str) -> Section:
    r = load_result(run)
    sec = Section(f"sweep-{name}", "Sweep: the rolling disk's type A/B map against the closed form",
                  f"<code>rollsim sweep</code> over the initial (x, z) plane of <code>{html.escape(name)}.toml</code> "
                  f"on a {MAP_POINTS} × {MAP_POINTS} grid over the scenario's ranges (its own grid has 101 × 101 "
                  "points). Every point is propagated again by the independent closed form "
                  "(<code>rollsim.disk_closed_form</code>): its mode symbols, its type (A: it ends rolling on a "
                  "circle of radius ≤ 1; B: it ends in the cycle +0−0 with stick radii above 1) and its last "
                  "rolling radius must be rollsim's.")
    if r is None or r.sweep is None or run.returncode != 0:
        sec.checks.append(failed_run_check(run))
        return sec
    checks, rows, types = disk_map_checks(r)
    sec.checks += checks
    sec.body.append(f"<details><summary>The {count(len(rows), 'point')}: rollsim against the closed form</summary>"
                    + '<div class="scroll">' + table_html(
                        ["#", "x0", "z0", "type (rollsim)", "type (closed form)", "symbols (rollsim)", "same symbols",
                         "rolling radius", "relative |Δ|"], rows) + "</div></details>")
    sw = r.sweep
    fig = Figure(figsize=(11.4, 4.2), layout="constrained")
    a0, a1 = fig.subplots(1, 2)
    x, z = np.asarray(sw["initial.x"], float), np.asarray(sw["initial.z"], float)
    cls = np.asarray(sw["classification"], str)
    for ty, colour in (("A", "tab:blue"), ("B", "tab:orange")):
        sel = cls == ty
        a0.scatter(x[sel], z[sel], s=140, color=colour, alpha=0.5, label=f"type {ty} (rollsim)")
        cf_sel = np.asarray(types) == ty
        a0.scatter(x[cf_sel], z[cf_sel], s=22, marker="x", color="k" if ty == "A" else "tab:red",
                   label=f"type {ty} (closed form)")
    a0.plot([-1, 1], [0, 0], color="0.4", linewidth=2, label="rolling strip |x| < 1, z = 0")
    finish_axes(a0, "initial x [-]", "initial z [-]", "Type of each point", {"loc": "upper left", "bbox_to_anchor": (1.0, 1.0)})
    rr = np.asarray(sw["rolling_radius"], float)
    a1.scatter(np.hypot(x, z), rr, c=["tab:blue" if c == "A" else "tab:orange" for c in cls], s=25)
    a1.axhline(1.0, color="0.3", linestyle="--", linewidth=0.9, label="R = 1: A below, B above")
    finish_axes(a1, "distance of the start from the origin, √(x0² + z0²) [-]", "last rolling radius R [-]",
                "Last rolling radius of each point", {})
    sec.figures.append(("The A/B type of each start point, rollsim (discs) and closed form (crosses) (left); the "
                        "last rolling radius, below 1 for type A and above for type B (right)", png(fig)))
    return sec
