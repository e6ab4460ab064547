"""User models against their built-in twins: the IFToMM wheel on the tipping table written as a user model
(`scenarios/user_tipping_table.toml`: equations derived by rollsim from T and V) against the built-in model
(`tipping_table.toml`: equations written by hand), run for run and linearisation for linearisation; the user
model's eigenvalues also against the benchmark's closed form (1.8)-(1.9)."""

from __future__ import annotations

import html
import os

import numpy as np
from matplotlib.figure import Figure

from .. import plot
from . import runs
from .animation import first_animation
from .linear import IFTOMM_ERROR_TOL, eigenvalues, iftomm_eigenvalues, l2_error, pair_nearest
from .model import Check, Run, Runner, Section, failed_run_check, load_result
from .page import finish_axes, fmt, fmt_complex, png, table_html

# The user model's states and the built-in model's columns of the same quantity.
TWIN_COLUMNS = (("theta1", "theta1"), ("theta2", "theta2"), ("der_theta1", "omega1"), ("der_theta2", "omega2"),
                ("contact_position", "contact_position"), ("normal_force", "normal_force"))
TWIN_FACTOR = 100.0     # largest |user − built-in| ≤ 100 rtol × (1 + max |built-in|), per column
TWIN_EIGEN_TOL = 1e-12  # eigenvalues of the two linearisations, l2 distance [rad/s]


def plan_user_table(runner: Runner, scen: str, name: str):
    twin = os.path.join(os.path.dirname(scen), "tipping_table.toml")
    if not os.path.exists(twin):  # no twin beside it: a run like any other
        return runs.plan_other(runner, scen, name)
    run = runner.prepare(f"run {name}", ["run", scen, "-q"], os.path.join(runner.workdir, f"{name}.h5"))
    ref = runner.prepare(f"run {name} twin", ["run", twin, "-q"], os.path.join(runner.workdir, f"{name}-twin.h5"))
    lin = runner.prepare(f"linearize {name}", ["linearize", scen, "--set", "initial.theta1=0"],
                         os.path.join(runner.workdir, f"{name}-linear.h5"))
    lin_ref = runner.prepare(f"linearize {name} twin", ["linearize", twin, "--set", "initial.theta1=0"],
                             os.path.join(runner.workdir, f"{name}-twin-linear.h5"))

    def build():
        sec = user_table_section(run, ref, lin, lin_ref, name)
        # the user model's run, or the built-in twin's (the same motion) where the user model declares no drawing
        sec.animation = first_animation(runner.animations, [(run.output, name, "the run"),
                                                            (ref.output, f"{name}-twin", "the built-in twin's run")])
        return [sec]

    return build


def twin_differences(user, builtin) -> list:
    """[(user column, built-in column, largest |difference| on the common samples, scale max |built-in|,
    time of the largest)]; the samples must be at the same times."""
    tu, tb = np.asarray(user.trajectory["time"], float), np.asarray(builtin.trajectory["time"], float)
    n = min(tu.size, tb.size)
    out = []
    for cu, cb in TWIN_COLUMNS:
        if cu in user.trajectory and cb in builtin.trajectory:
            a, b = np.asarray(user.trajectory[cu], float)[:n], np.asarray(builtin.trajectory[cb], float)[:n]
            d = np.abs(a - b)
            k = int(np.argmax(d))
            out.append((cu, cb, float(d[k]), float(np.max(np.abs(b))), float(tb[k])))
    return out


def twin_checks(user, builtin) -> tuple:
    """(checks, table rows) of the user run against the built-in run."""
    rt = float(builtin.solver.get("rtol", 1e-10))
    tu, tb = np.asarray(user.trajectory["time"], float), np.asarray(builtin.trajectory["time"], float)
    n = min(tu.size, tb.size)
    same_times = tu.size == tb.size and float(np.max(np.abs(tu[:n] - tb[:n]))) <= TWIN_FACTOR * rt * max(tb[-1], 1)
    rows, ok, worst = [], same_times, 0.0
    for cu, cb, d, scale, at in twin_differences(user, builtin):
        tol = TWIN_FACTOR * rt * (1 + scale)
        ok &= d <= tol
        worst = max(worst, d / tol)
        rows.append([html.escape(cu), html.escape(cb), fmt(d, 3), fmt(tol, 3), f"{at:.4f}"])
    checks = [Check("largest state and force difference, user model − built-in model, on every sample",
                    f"≤ {TWIN_FACTOR:g} rtol × (1 + max |x|) per column; same sample times",
                    f"{tu.size} and {tb.size} samples; largest difference / tolerance {fmt(worst, 3)}",
                    bool(ok and rows))]
    ku, kb = (list(np.asarray(r.events.get("kind", []), str)) for r in (user, builtin))
    eu, eb = (np.asarray(r.events.get("time", []), float) for r in (user, builtin))
    dt = float(np.max(np.abs(eu - eb))) if ku == kb and eu.size else float("nan")
    tol_t = TWIN_FACTOR * rt * max(float(tb[-1]), 1.0)
    checks.append(Check("events of the two runs", f"same kinds; times within {TWIN_FACTOR:g} rtol × t_end = "
                        f"{fmt(tol_t, 3)} s", f"user {html.escape(', '.join(ku) or 'none')}, built-in "
                        f"{html.escape(', '.join(kb) or 'none')}; largest time difference {fmt(dt, 3)} s",
                        ku == kb and bool(eu.size) and dt <= tol_t))
    return checks, rows


def user_table_section(run: Run, ref: Run, lin: Run, lin_ref: Run, name: str) -> Section:
    sec = Section(f"user-{name}", "User model against its built-in twin: the IFToMM wheel on the tipping table",
                  "<code>user_tipping_table.toml</code> gives only T, V, an output and two events; rollsim derives "
                  "the equations of motion and compiles them. The same wheel in the built-in model "
                  "(<code>tipping_table.toml</code>, equations written by hand) is the second formulation: both "
                  "runs from the 0.01 rad tilt to the lift-off, compared sample by sample, and both linearised at "
                  "the level table, the user model's eigenvalues against the built-in model's and against the "
                  "benchmark's closed form (1.8)–(1.9).")
    r, rb = load_result(run), load_result(ref)
    for rr, rn in ((r, run), (rb, ref)):
        if rr is None or rn.returncode != 0:
            sec.checks.append(failed_run_check(rn))
    if sec.checks:
        return sec
    checks, rows = twin_checks(r, rb)
    sec.checks += checks
    sec.body.append("<h3>Largest differences, user model − built-in model</h3>" + table_html(
        ["user model", "built-in model", "largest |difference|", "tolerance", "at t [s]"], rows))
    lu, lb = load_result(lin), load_result(lin_ref)
    if lu is None or lu.linear is None or lin.returncode != 0:
        sec.checks.append(failed_run_check(lin))
    elif lb is None or lb.linear is None or lin_ref.returncode != 0:
        sec.checks.append(failed_run_check(lin_ref))
    else:
        lam_u, lam_b = eigenvalues(lu.linear), eigenvalues(lb.linear)
        d_twin = l2_error(pair_nearest(lam_u, lam_b))
        d_ref = l2_error(pair_nearest(lam_u, iftomm_eigenvalues()))
        sec.checks.append(Check("eigenvalues: user model against built-in model (rollsim linearize)",
                                f"l2 ≤ {fmt(TWIN_EIGEN_TOL)} rad/s", fmt(d_twin, 3), d_twin <= TWIN_EIGEN_TOL))
        sec.checks.append(Check("eigenvalues: user model against the closed form (1.8)–(1.9)",
                                f"l2 ≤ {fmt(IFTOMM_ERROR_TOL)} rad/s", fmt(d_ref, 3), d_ref <= IFTOMM_ERROR_TOL))
        sec.body.append("<h3>Eigenvalues at the level table [rad/s]</h3>" + table_html(
            ["user model", "built-in model", "closed form (1.8)–(1.9)"],
            [[fmt_complex(z), fmt_complex(zb), fmt_complex(zr)] for (z, zb), (_, zr) in
             zip(pair_nearest(lam_u, lam_b), pair_nearest(lam_u, iftomm_eigenvalues()))]))
    fig = Figure(figsize=(11.4, 3.8), layout="constrained")
    a0, a1 = fig.subplots(1, 2)
    t = np.asarray(r.trajectory["time"], float)
    tb = np.asarray(rb.trajectory["time"], float)
    n = min(t.size, tb.size)
    for i, (cu, cb) in enumerate(TWIN_COLUMNS[:2]):
        a0.plot(tb, rb.trajectory[cb], color=f"C{i}", linewidth=3.5, alpha=0.4, label=f"{cb} built-in")
        a0.plot(t, r.trajectory[cu], color=f"C{i}", linewidth=1.0, label=f"{cu} user model")
    plot.mark_events(a0, r.events)
    finish_axes(a0, "time [s]", "angle [rad]", "The two runs", {})
    for i, (cu, cb) in enumerate(TWIN_COLUMNS):
        if cu in r.trajectory and cb in rb.trajectory:
            d = np.abs(np.asarray(r.trajectory[cu], float)[:n] - np.asarray(rb.trajectory[cb], float)[:n])
            a1.semilogy(t[:n], np.maximum(d, 1e-18), color=f"C{i}", linewidth=0.6, label=cu)
    finish_axes(a1, "time [s]", "|user − built-in| [unit of the column]", "Differences (1e-18 where they are 0)",
                {"ncol": 3, "loc": "lower right"}, which="both")
    sec.figures.append(("The user model's run over the built-in model's (left); their differences (right)", png(fig)))
    return sec
