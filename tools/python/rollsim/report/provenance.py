"""Solver statistics of every run, and the software version and provenance of the page."""

from __future__ import annotations

import html
import os
import platform
import re
import shlex
import subprocess

import numpy as np

from .model import SOURCE_DIR, Check, Runner, Section, load_result
from .page import fmt, table_html


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
    if SOURCE_DIR is None:
        return info
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
