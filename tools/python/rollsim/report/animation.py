"""Links from the report's sections to an animation of their run: one HTML page per run, written by
``rollsim.animate.write_html`` into a folder next to the report (the report itself stays one self-contained file).

Where the animation tool is not importable, the result has no /scene group, or the tool fails, the section says
"no animation" and why; the report never fails for an animation.
"""

from __future__ import annotations

import html
import importlib
import os
from dataclasses import dataclass
from typing import Optional

import h5py


@dataclass
class Animations:
    """Where the animations go: ``folder`` (absolute), linked from the page as ``href_prefix`` + NAME.html.
    ``folder`` None: animations turned off (``--no-animations``)."""
    folder: Optional[str] = None
    href_prefix: str = ""

    @classmethod
    def next_to(cls, page: str, enabled: bool = True) -> "Animations":
        """The folder PAGE_animations/ beside the page ``page`` (REPORT.html -> REPORT_animations/)."""
        if not enabled:
            return cls()
        stem = os.path.splitext(os.path.basename(page))[0] + "_animations"
        return cls(os.path.join(os.path.dirname(os.path.abspath(page)), stem), stem + "/")


def _animate_module():
    try:
        return importlib.import_module("rollsim.animate"), ""
    except ImportError as exc:
        return None, f"the animation tool (rollsim.animate) is not available: {exc}"


def _has_scene(path: str) -> bool:
    try:
        with h5py.File(path, "r") as f:
            return "scene" in f
    except OSError:
        return False


def no_animation(reason: str) -> str:
    return f'<p class="anim">no animation ({html.escape(reason)})</p>'


def animated(animations: Animations, sec, result_path: Optional[str], name: str, **kw) -> list:
    """[sec] with the link to the animation of ``result_path`` (see animation_link) set on it."""
    sec.animation = animation_link(animations, result_path, name, **kw)
    return [sec]


def first_animation(anim: Animations, candidates: list) -> str:
    """The link to the animation of the first of ``candidates`` [(result path, name, what)] that has one, ``what``
    naming the run in the link's text; else the first one's "no animation" and why."""
    links = []
    for path, name, what in candidates:
        links.append(animation_link(anim, path, name, what=what))
        if "href=" in links[-1]:
            return links[-1]
    return links[0] if links else no_animation("no run")


def animation_link(anim: Animations, result_path: Optional[str], name: str, point: Optional[int] = None,
                   what: str = "the run") -> str:
    """Write the animation of the result file ``result_path`` as NAME.html in the animations folder and return the
    HTML paragraph that links to it, or a paragraph saying "no animation" and why."""
    if anim.folder is None:
        return no_animation("animations turned off")
    if not result_path or not os.path.exists(result_path):
        return no_animation("no result file")
    if point is None and not _has_scene(result_path):
        return no_animation("the result file has no /scene group")
    mod, why = _animate_module()
    if mod is None or not hasattr(mod, "write_html"):
        return no_animation(why or "rollsim.animate has no write_html")
    os.makedirs(anim.folder, exist_ok=True)
    out = os.path.join(anim.folder, f"{name}.html")
    try:
        mod.write_html(result_path, out, point=point)
    except Exception as exc:  # noqa: BLE001 - an animation never fails the report
        return no_animation(f"the animation tool failed: {type(exc).__name__}: {exc}")
    if not os.path.exists(out):
        return no_animation("the animation tool wrote no file")
    href = html.escape(anim.href_prefix + os.path.basename(out), quote=True)
    return (f'<p class="anim">Animation of {html.escape(what)}: <a href="{href}">{html.escape(os.path.basename(out))}'
            "</a></p>")
