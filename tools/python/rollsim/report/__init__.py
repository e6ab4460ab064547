"""The validation report: runs rollsim, checks the numbers against stated tolerances, writes one HTML page.

    tools/report [SCENARIO ...] -o report.html [--keep DIR] [--no-animations]

Without scenarios the standard validation set runs (see STANDARD_SET). Each check is computed here from
the numbers in the HDF5 result files the rollsim commands write (never from their printed output) against the
tolerance stated next to it, and shows PASS or FAIL. The page is self-contained: inline CSS, figures as
base64 PNG data URIs, no external references.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
import multiprocessing

import matplotlib

matplotlib.use("Agg")

from . import contact, disk, energy, formulations, friction3d, linear, rolling3d, runs, sweeps, user  # noqa: E402
from .animation import Animations  # noqa: E402
from .model import SOURCE_DIR, Runner, load_result, read_toml  # noqa: E402
from .page import render  # noqa: E402
from .provenance import provenance_section, solver_section  # noqa: E402

SCENARIO_DIR = os.path.join(SOURCE_DIR, "scenarios") if SOURCE_DIR else None

STANDARD_SET = [
    "tipping_table_linear.toml",
    "tipping_table.toml",
    "disk_type_a.toml",
    "disk_type_b.toml",
    "tipping_table_dae.toml",
    "relay_feedback.toml",
    "carriage_pendulum.toml",
    "user_tipping_table.toml",
    "bouncing_ball.toml",
    "rimless_wheel.toml",
    "rolling_coin.toml",
    "bicycle_meijaard.toml",
    "sliding_sphere.toml",
    "tippe_top.toml",
    "disk_basin.toml",
]

# Scenarios whose sections check them against their own independent answers (by file name): a user model against
# its built-in twin, closed forms of 3-D rolling, published eigenvalues, a sweep point by point.
NAMED_PLANNERS = {
    "user_tipping_table.toml": user.plan_user_table,
    "rolling_coin.toml": rolling3d.plan_coin,
    "bicycle_meijaard.toml": rolling3d.plan_bicycle,
    "sliding_sphere.toml": friction3d.plan_sphere,
    "tippe_top.toml": friction3d.plan_tippe_top,
    "disk_basin.toml": sweeps.plan_disk_map,
}


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
    if contact.is_contact_scenario(doc):
        return "contact"
    return "other"


PLANNERS = {"linear": linear.plan_linear, "table": energy.plan_table, "disk": disk.plan_disk,
            "dae": formulations.plan_dae, "contact": contact.plan_contact, "other": runs.plan_other, "sweep": runs.plan_sweep}


# ---------------------------------------------------------------------------------------------------------


_BUILDERS: list = []  # the section builders, for the worker processes (inherited by fork)


def _build(i: int) -> list:
    return _BUILDERS[i]()


def build_all(builders: list, jobs: int) -> list:
    """Each builder's sections, in order. The sections' checks and figures are built in ``jobs`` processes at once
    (forked after the commands ran, so each inherits the planned runs; matplotlib draws on Agg); with one job, or
    where fork is not available, here."""
    if jobs <= 1 or len(builders) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [b() for b in builders]
    _BUILDERS[:] = builders
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as ex:
            return list(ex.map(_build, range(len(builders))))
    finally:
        _BUILDERS.clear()


def find_binary() -> str:
    b = os.environ.get("ROLLSIM_BINARY")
    if b:
        return b
    if SOURCE_DIR:
        return os.path.join(SOURCE_DIR, "build", "rollsim")
    return shutil.which("rollsim") or "rollsim"


def resolve_scenario(s: str) -> str:
    if os.path.exists(s):
        return os.path.abspath(s)
    cand = os.path.join(SCENARIO_DIR, s) if SCENARIO_DIR else None
    if cand and os.path.exists(cand):
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
    ap.add_argument("--no-animations", action="store_true",
                    help="write no animations (default: one page per run in REPORT_animations/ beside the page)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2,
                    help="commands run at once, and sections built at once (default: CPUs)")
    args = ap.parse_args(argv)

    binary = find_binary()
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        print(f"report: error: rollsim binary not found at {binary} (build it, or set ROLLSIM_BINARY)",
              file=sys.stderr)
        return 2
    if not args.scenarios and SCENARIO_DIR is None:
        print("report: error: the standard set is in the source tree's scenarios/, which this installed package "
              "does not have: give the scenario files", file=sys.stderr)
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
        runner.animations = Animations.next_to(args.output, enabled=not args.no_animations)
        builders = []
        names = set()
        for sc in scens:
            base = os.path.splitext(os.path.basename(sc))[0]
            name, k = base, 2
            while name in names:
                name, k = f"{base}-{k}", k + 1
            names.add(name)
            planner = NAMED_PLANNERS.get(os.path.basename(sc)) or PLANNERS[scenario_kind(read_toml(sc))]
            builders.append(planner(runner, sc, name))
        runner.execute_all(runner.runs, args.jobs)
        sections = [sec for secs in build_all(builders, args.jobs) for sec in secs]
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
