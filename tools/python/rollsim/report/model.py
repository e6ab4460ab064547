"""The report's data model: checks, sections, the rollsim commands it runs, and their result files."""

from __future__ import annotations

import html
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Optional

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

from .. import h5
from .animation import Animations

# The source tree this package sits in (tools/python/rollsim/report -> the root); None when it is installed.
SOURCE_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", ".."))
if not os.path.isdir(os.path.join(SOURCE_DIR, "scenarios")):
    SOURCE_DIR = None

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
    animation: str = ""                          # the link to the run's animation, or "no animation" (animation.py)

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
        self.animations = Animations()  # off unless main() sets the folder beside the page

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


def read_toml(path: str) -> dict:
    if tomllib is None:
        return {}
    with open(path, "rb") as f:
        return tomllib.load(f)


def load_result(run: Run):
    if run.output and os.path.exists(run.output):
        try:
            return h5.load(run.output, allow_incomplete=True)
        except (h5.RollsimFileError, OSError):
            return None
    return None


def failed_run_check(run: Run) -> Check:
    msg = (run.stderr or run.stdout).strip().splitlines()
    return Check(f"{run.label}: run", "exit status 0", f"exit {run.returncode}: {html.escape(msg[-1] if msg else '')}",
                 False)


def loaded(run: Run, sec: "Section"):
    """The result of ``run``, or None after adding the failed run's check to ``sec`` (no file, or exit status not 0)."""
    r = load_result(run)
    if r is None or run.returncode != 0:
        sec.checks.append(failed_run_check(run))
        return None
    return r
