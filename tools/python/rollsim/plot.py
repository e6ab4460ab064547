"""Figures for rollsim result files, and the command line of tools/plot (``main``).

``views(result)`` returns the views that fit a file's content, each a list of
panels; ``make_figure(result, panels)`` draws panels into one figure.  Figures
are built with matplotlib's object API, so nothing here needs pyplot; pass
``figure_factory=pyplot.figure`` to get figures pyplot can show.

Views (each chosen by what the file holds, never by the model's name):
  run        a trajectory, its panels chosen by the roles of its columns
             (docs/python.md, "Signal roles"): states and rates by unit
             (modes +1, 0, -1 shaded), a phase portrait of a system with such
             modes and two or three states (3-D for three), the contact
             quantities (gaps, normal and tangential forces, slip velocities)
             with a curve per contact, the friction demand |T|/N where a
             contact has both forces, each contact's mode over time when the
             file records them (o open, 0 stick/closed, + and - sliding), the
             other outputs by unit, the energies, and the drift of the file's
             own energy ledger E + D and of any other conserved column, each
             as its deviation from the start on an axis of its own (the
             largest value stated).  A file written before roles gets its
             signals grouped by unit.
  linear     eigenvalue map (coloured by the stored modal classes, Re > 0
             shaded), Bode magnitude/phase (phase wrapped to (-180, 180] deg,
             a curve per input/output channel, labelled), modal table ("-"
             where undefined, round-off real parts taken as zero)
  sweep      basin map (two swept keys of a grid + classification) or study
             curves of the summary's results (each quantity once), on log axes
             for log-spaced keys; a zip sweep is one series against its first
             key (or its index); the points' trajectories when the file has
             them (rollsim sweep --trajectories)
  growth     predicted vs measured growth, relative error with the file's
             integration-error floor
  snapshot   (asked for: --view snapshot) the mechanism of the file's /scene
             at chosen instants on one figure, the older ones fainter

A run's events are listed once per figure, in an event strip above its time
panels (a row per kind with its count); the panels draw them as faint lines
behind the curves, or not at all when there are more than EVENT_LINES_MAX.
``chosen_panels`` draws named signals instead of the views (tools/plot
--signals); the "paper" style (style_context, tools/plot --style paper) is a
journal's single column in Computer Modern, from matplotlib's own fonts.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import re
import sys
import textwrap
from dataclasses import dataclass
from typing import Callable, Optional

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.colors import ListedColormap, BoundaryNorm
from matplotlib.patches import Patch

from . import contacts, h5

MAX_POINTS = 100_000  # longer signals are thinned for drawing

DIMENSIONLESS = {"", "1", "-", "none", "dimensionless"}

EVENT_COLOURS = {
    "table_edge": "tab:red",
    "lift_off": "tab:purple",
    "slip_onset": "#e7298a",
    "stick": "#6a3d9a",
    "slip": "#b15928",
    "reversal": "tab:pink",
    "crossing": "tab:gray",
    "impact": "tab:red",
    "capture": "black",
    "touchdown": "tab:green",
    "graze": "tab:olive",
}
SPARE_EVENT_COLOURS = ("tab:gray", "tab:olive", "tab:cyan", "tab:brown")
# Events across a time panel: faint lines behind the curves, and none at all beyond this many (the event strip's
# ticks then carry them: 128 lines would hide the curves).
EVENT_LINES_MAX = 20
EVENT_LINE_WIDTH = 0.5
EVENT_LINE_ALPHA = 0.35
EVENT_LINE_ZORDER = 0.5  # curves are at 2, the mode shading at 0
MODE_COLOURS = {1: "#f4a582", 0: "#92c5de", -1: "#b8e186"}
# A Filippov system's modes: either side of the switching surface, and on it (for a file that does not name them).
MODE_NAMES = {1: "mode +1", 0: "mode 0 (on the switching surface)", -1: "mode −1"}
MODE_NAME_ATTR = "mode_name_"  # /trajectory/mode's attributes mode_name_M: the program's name of mode M


def mode_names(r) -> dict:
    """The legend's name of each mode: "mode " and the name the file gives it (the attribute mode_name_M of
    /trajectory/mode, the program's own, e.g. "0 (rolling)" for the disk), else MODE_NAMES'."""
    names = dict(MODE_NAMES)
    attrs = r.trajectory.dataset_attrs.get("mode", {}) if r.trajectory else {}
    for key, value in attrs.items():
        if key.startswith(MODE_NAME_ATTR):
            try:
                m = int(key[len(MODE_NAME_ATTR):])
            except ValueError:
                continue
            names[m] = "mode " + (value.decode() if isinstance(value, bytes) else str(value)).replace("-", "−", 1)
    return names
CLASS_CODES = [("A", "#4393c3"), ("B", "#d6604d"), ("undetermined", "#bababa"), ("failed", "#000000")]
OK_STATUS = {"ok", "completed", "complete", "success", "done", "finished"}


@dataclass
class Panel:
    name: str
    draw: Callable  # draw(ax) -> None
    projection: Optional[str] = None
    time: bool = False  # time on the x axis: the run's time range, and the event strip above it


# --------------------------------------------------------------------------
# helpers


GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "zeta": "ζ", "eta": "η",
         "theta": "θ", "lambda": "λ", "mu": "μ", "nu": "ν", "sigma": "σ", "tau": "τ", "phi": "φ", "psi": "ψ",
         "omega": "ω"}
SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
SYMBOLS = {
    "contact_position": "s",
    "normal_force": "N",
    "tangential_force": "$T_c$",
    "friction_demand": "$|T_c|/N$",
    "total_energy": "E",
    "kinetic_energy": "T",
    "potential_energy": "V",
    "input_work": "W",
    "switching_value": "C x",
    "constraint_length": "C",
    "x_dot": r"$\dot{x}$",
    "phi_dot": r"$\dot{\varphi}$",
    "rod_tension": "rod tension",
    "friction_coefficient": "μ",
    "frequency_hz": "frequency",
    "damping_ratio": "ζ",
    "time_constant": "time constant",
}


def symbol(name: str) -> str:
    """How a signal or scenario key is written on an axis: theta1 -> θ₁, initial.theta1 -> θ₁(0)."""
    section, _, last = name.rpartition(".")
    if last in SYMBOLS:
        sym = SYMBOLS[last]
    else:
        stem = last.rstrip("0123456789")
        digits = last[len(stem):]
        if stem in GREEK or (digits and stem.isalpha() and len(stem) == 1):
            sym = GREEK.get(stem, stem) + digits.translate(SUBSCRIPT)
        else:
            sym = last.replace("_", " ")
    return f"{sym}(0)" if section == "initial" else sym


def axis_label(name: str, unit: Optional[str]) -> str:
    """``name [unit]`` with ``[-]`` for dimensionless quantities; names in ``name`` are written as symbols
    when they are one signal name or a comma-separated list of them."""
    parts = [p.strip() for p in name.split(",")]
    if all(p and " " not in p for p in parts):
        name = ", ".join(symbol(p) for p in parts)
    u = (unit or "").strip()
    return f"{name} [-]" if u.lower() in DIMENSIONLESS else f"{name} [{u}]"


def _thin(*arrays):
    n = len(arrays[0])
    if n <= MAX_POINTS:
        return arrays
    step = int(math.ceil(n / MAX_POINTS))
    return tuple(np.asarray(a)[::step] for a in arrays)


def _common_unit(table, names):
    units = {table.units.get(n, "") for n in names}
    return units.pop() if len(units) == 1 else "mixed"


def mark_events(ax, events, tmin=None, tmax=None):
    """Event instants in one panel of its own (the report's): thin translucent lines behind the curves, and a rug
    of ticks along the top edge in full colour; one colour and one legend entry per kind.  The figures of this
    module list the events once, in the event strip (event_strip), and draw only faint lines in their panels."""
    if not events or "time" not in events or len(events["time"]) == 0:
        return
    t, kinds = _event_kinds(events)
    ylim = ax.get_ylim()  # lines in axes coordinates must not move the data limits
    trans = ax.get_xaxis_transform()
    for kind in dict.fromkeys(kinds):  # first-seen order
        sel = t[kinds == kind]
        colour = event_colour(kind)
        ax.vlines(sel, 0, 1, transform=trans, colors=colour, linewidth=0.5, alpha=0.3, zorder=0.5)
        ax.vlines(sel, 0.94, 1, transform=trans, colors=colour, linewidth=1.4, zorder=3,
                  label=f"{kind} ({len(sel)})")
    ax.set_ylim(ylim)


def _event_kinds(events):
    """(times, kinds) of an /events table; kind "event" where the file names none."""
    t = np.asarray(events["time"], dtype=float)
    return t, np.asarray(events.get("kind", np.array(["event"] * len(t))), dtype=str)


def event_colour(kind: str) -> str:
    """The colour of an event kind: its own (EVENT_COLOURS), else one of the spare colours, fixed by the kind's
    name so that a kind has the same colour in every panel and every figure."""
    if kind in EVENT_COLOURS:
        return EVENT_COLOURS[kind]
    return SPARE_EVENT_COLOURS[sum(map(ord, kind)) % len(SPARE_EVENT_COLOURS)]


def _event_lines(ax, r):
    """The events of r as faint lines across a time panel, behind the curves and without a legend entry (the
    event strip lists them once): solid for impacts and captures, dashed for a contact's other events, dotted for
    the model's own.  None when the run has more than EVENT_LINES_MAX events: the strip's ticks carry them."""
    ev = r.events
    if not ev or "time" not in ev or not 0 < len(ev["time"]) <= EVENT_LINES_MAX:
        return
    t, kinds = _event_kinds(ev)
    ylim = ax.get_ylim()
    trans = ax.get_xaxis_transform()
    for kind in dict.fromkeys(kinds):
        style = "-" if kind in contacts.IMPACT_KINDS else "--" if kind in contacts.TRANSITION_KINDS else ":"
        ax.vlines(t[kinds == kind], 0, 1, transform=trans, colors=event_colour(kind), linewidth=EVENT_LINE_WIDTH,
                  linestyles=style, alpha=EVENT_LINE_ALPHA, zorder=EVENT_LINE_ZORDER)
    ax.set_ylim(ylim)


def event_marker(kind: str) -> str:
    """The marker of an event kind in the event strip: an impact a triangle, a capture a square, any other a tick."""
    return {"impact": "v", "capture": "s"}.get(kind, "|")


def event_strip(ax, r, modes=False, compact=False):
    """Every event of r once: one row per kind (labelled with its count) with a tick (an impact a triangle, a
    capture a square) at each instant, the total in the title; with ``modes``, a last row shaded by the modes
    +1, 0, -1, named in the strip's legend below it.  Drawn above a figure's time panels instead of a legend entry
    per kind in every panel.  ``compact`` (one column of panels below it, on the same time axis): no axis label."""
    t, kinds = _event_kinds(r.events)
    order = list(dict.fromkeys(kinds))
    labels = []
    for row, kind in enumerate(order):
        sel = t[kinds == kind]
        marker = event_marker(kind)
        label = f"{kind} ({sel.size})"
        ax.plot(sel, np.full(sel.size, row), linestyle="none", marker=marker, color=event_colour(kind),
                markersize=7 if marker == "|" else 4, markeredgewidth=0.9, label=label, clip_on=False)
        labels.append(label)
    if modes:
        row = len(order)
        tt, mode = _thin(_time(r), _mode(r))
        names = mode_names(r)
        handles = []
        for m in (1, 0, -1):
            if (mode == m).any():
                handles.append(ax.fill_between(tt, row - 0.4, row + 0.4, where=mode == m, step="post",
                                               color=MODE_COLOURS[m], linewidth=0, label=names[m]))
        labels.append("mode")
        # Below a compact strip (it has no time axis label), else on the title's line at the right.
        ax.legend(handles=handles, loc="upper center" if compact else "lower right",
                  bbox_to_anchor=(0.5, -0.12) if compact else (1.0, 1.0), ncol=3, frameon=False, fontsize="small",
                  borderaxespad=0.1, handlelength=1.2, columnspacing=1.0)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.tick_params(axis="y", length=0)
    if compact:
        ax.tick_params(axis="x", labelbottom=False)
    else:
        ax.set_xlabel(axis_label("time", r.trajectory.units.get("time", "s")))
    many = t.size > EVENT_LINES_MAX
    across = " (faint lines across the panels)" if t.size > 1 else " (a faint line across the panels)"
    ax.set_title(f"{t.size} event{'s' if t.size > 1 else ''}" + (" (marked here only)" if many else across),
                 loc="left")
    ax.grid(True, axis="x", alpha=0.3)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def shade_modes(ax, t, mode, label=True, names=None):
    """Shade time intervals by mode (+1, 0, -1) across the whole height of ax; ``label``: with a legend entry per
    mode (a figure with an event strip names the modes there, once), named by ``names`` (mode_names of the
    file), else by MODE_NAMES."""
    _shade(ax, t, mode, (names or MODE_NAMES) if label else None)


def _shade(ax, t, mode, names):
    """The modes +1, 0, -1 shaded behind everything, named ``names[m]`` in the legend (no entries for None)."""
    t = np.asarray(t, dtype=float)
    mode = np.asarray(mode)
    ylim = ax.get_ylim()
    for m in (1, 0, -1):
        mask = mode == m
        if mask.any():
            ax.fill_between(t, 0, 1, where=mask, step="post", transform=ax.get_xaxis_transform(),
                            color=MODE_COLOURS[m], alpha=0.45, linewidth=0, zorder=0,
                            label=names[m] if names else None)
    ax.set_ylim(ylim)


def _time(r):
    return np.asarray(r.trajectory["time"], dtype=float)


def _lines(ax, r, names, ylabel=None, events=True):
    tr = r.trajectory
    t = _time(r)
    for n in names:
        tt, y = _thin(t, np.asarray(tr[n], dtype=float))
        ax.plot(tt, y, label=symbol(n), linewidth=1.1)
    ax.set_xlabel(axis_label("time", tr.units.get("time", "s")))
    ax.set_ylabel(ylabel or axis_label(", ".join(names), _common_unit(tr, names)))
    if events:
        _event_lines(ax, r)
    ax.legend(fontsize="small", loc="best")
    ax.grid(True, alpha=0.3)


def _find_mu(r):
    for k in ("mu", "friction_coefficient"):
        if isinstance(r.summary.get(k), (int, float)):
            return float(r.summary[k])
    for k, v in r.resolved.items():
        last = k.rsplit(".", 1)[-1]
        if last in ("mu", "mu_s", "friction_coefficient"):
            try:
                return float(v)
            except ValueError:
                pass
    return None


# --------------------------------------------------------------------------
# runs: the panels follow the roles of the trajectory's columns (docs/python.md, "Signal roles")

# Contact mode digit -> colour (o open, 0 stick/closed, + slide +, - slide -).
CONTACT_MODE_COLOURS = ("#f0f0f0", "#92c5de", "#f4a582", "#b8e186")
# The contact quantities, each drawn in one panel with a curve per contact: role -> (panel name, title).
CONTACT_PANELS = (("contact.gap", "gaps", "Gaps"), ("contact.normal_force", "normal forces", "Normal forces"),
                  ("contact.tangential_force", "tangential forces", "Tangential forces"),
                  ("contact.slip_velocity", "slip velocities", "Slip velocities"))
# The energy roles in the energy panel's order, with their labels.
ENERGY_LABELS = (("energy.total", "stored energy"), ("energy.kinetic", "T"), ("energy.potential", "V"),
                 ("work.input", "input work"), ("work.constraint", "constraint work"), ("dissipation", "dissipated"))
MAX_UNIT_PANELS = 2     # panels of states (and of rates) by unit
MAX_OUTPUT_PANELS = 3   # panels of the other outputs by unit


def _contact_modes_known(r) -> bool:
    """Whether the file records each contact's modes: a mode column and the summary's symbols_NAME of every
    contact the trajectory has quantities of (the contact engine's runs)."""
    tr = r.trajectory
    names = tr.contact_names()
    return "mode" in tr and bool(names) and all(f"symbols_{n}" in r.summary for n in names)


def _mode(r):
    tr = r.trajectory
    return np.asarray(tr["mode"]).astype(int) if "mode" in tr else None


def has_events(r) -> bool:
    """Whether the run has events (its figures then list them in an event strip)."""
    return bool(r.events) and len(r.events.get("time", ())) > 0


def filippov_modes(r) -> bool:
    """Whether the run's modes are a Filippov system's +1, 0, -1 (shaded in its time panels), not the contacts'."""
    mode = _mode(r)
    return mode is not None and bool(np.isin(mode, (-1, 0, 1)).all()) and not _contact_modes_known(r)


def _signals(ax, r, names, title, shade=False):
    """Time histories of `names` with the events marked; the modes shaded when `shade` and they are +1, 0, -1."""
    _lines(ax, r, names, events=False)
    mode = _mode(r)
    if shade and mode is not None and np.isin(mode, (-1, 0, 1)).all():
        shade_modes(ax, *_thin(_time(r), mode), label=not has_events(r), names=mode_names(r))  # else the event strip names them
    _event_lines(ax, r)
    ax.legend(fontsize="x-small", loc="best", ncol=2 if len(names) > 4 else 1)
    ax.set_title(title)


def _by_unit(tr, names):
    groups = {}
    for n in names:
        groups.setdefault(tr.units.get(n, ""), []).append(n)
    return list(groups.items())


def _contact_lines(ax, r, role, title):
    tr = r.trajectory
    t = _time(r)
    cols = tr.with_role(role)
    for c in cols:
        tt, y = _thin(t, np.asarray(tr[c], dtype=float))
        ax.plot(tt, y, linewidth=1.1, label=tr.contacts.get(c) or c)
    ax.set_xlabel(axis_label("time", tr.units.get("time", "s")))
    ax.set_ylabel(axis_label(title.lower(), _common_unit(tr, cols)))
    named = tr.contacts.get(cols[0]) if len(cols) == 1 else None
    ax.set_title(title + (" (per contact)" if len(cols) > 1 else f": contact {named}" if named else ""))
    _event_lines(ax, r)
    ax.legend(fontsize="x-small", loc="best", ncol=2 if len(cols) > 4 else 1)
    ax.grid(True, alpha=0.3)


def _contact_modes(ax, r):
    """Each contact's mode over time, one row per contact, coloured by mode; the modes are read from /events
    and vouched for by the summary's symbols_NAME (rollsim.contacts.contact_order)."""
    t = _time(r)
    try:
        order = contacts.contact_order(r)
        note = contacts.mode_column_note(r, order)
        digits = contacts.mode_matrix(r, order)
    except contacts.ContactDataError as exc:
        ax.text(0.5, 0.5, f"contact modes not shown:\n{exc}", transform=ax.transAxes, ha="center", va="center",
                wrap=True, color="tab:red", fontsize="small")
        ax.set_title("Contact modes (not shown)")
        ax.set_axis_off()
        return
    cmap = ListedColormap(list(CONTACT_MODE_COLOURS))
    norm = BoundaryNorm(np.arange(-0.5, 4.5), cmap.N)
    if t.size > 1:
        edges = np.r_[t, t[-1]]  # each sample's mode holds until the next sample
        ax.pcolormesh(edges, np.arange(len(order) + 1) - 0.5, digits[:, :], cmap=cmap, norm=norm,
                      shading="flat")
    ax.set_yticks(range(len(order)), order)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xlabel(axis_label("time", r.trajectory.units.get("time", "s")))
    ax.set_ylabel("contact")
    ax.set_title("Contact modes")
    _event_lines(ax, r)
    handles = [Patch(facecolor=CONTACT_MODE_COLOURS[d], edgecolor="0.5",
                     label=f"{contacts.MODE_SYMBOLS[d]}  {contacts.MODE_WORDS[d]}") for d in range(4)]
    if note:
        handles.append(Patch(color="none", label="modes from /events: the trajectory's mode column is too narrow"))
    ax.legend(handles=handles, fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.18),
              ncol=3)


def _friction_pairs(tr):
    """(contact, normal force column, tangential force column) for every contact with both forces."""
    normal = {tr.contacts.get(n, ""): n for n in tr.with_role("contact.normal_force")}
    return [(c, normal[c], n) for n in tr.with_role("contact.tangential_force")
            for c in [tr.contacts.get(n, "")] if c in normal]


def _friction_demand(ax, r):
    """|T|/N per contact on a log axis: NaN where N <= 0 (the ratio means nothing there), zeros left out."""
    tr = r.trajectory
    t = _time(r)
    pairs = _friction_pairs(tr)
    undefined = False
    for contact, nn, tn in pairs:
        n = np.asarray(tr[nn], dtype=float)
        tc = np.asarray(tr[tn], dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            demand = np.where(n > 0, np.abs(tc) / n, np.nan)
        demand[demand <= 0] = np.nan
        undefined = undefined or bool(np.any(n <= 0))
        tt, dd = _thin(t, demand)
        ax.semilogy(tt, dd, linewidth=1.1, label=f"$|T|/N$ {contact}" if len(pairs) > 1 else "$|T_c|/N$")
    mu = _find_mu(r)
    if mu is not None:
        ax.axhline(mu, color="k", linestyle=":", label=f"μ = {mu:g}")
    if undefined:
        ax.plot([], [], " ", label="undefined where N ≤ 0")
    ax.set_xlabel(axis_label("time", tr.units.get("time", "s")))
    ax.set_ylabel(axis_label("friction demand $|T_c|/N$", ""))
    ax.set_title("Friction demand")
    _event_lines(ax, r)
    ax.legend(fontsize="x-small", loc="best")
    ax.grid(True, which="both", alpha=0.3)


def _phase_portrait(ax, r, names):
    """The orbit through the states `names` (two or three), one colour per mode (+1, 0, -1) when the run has modes."""
    tr = r.trajectory
    coords = _thin(*(np.asarray(tr[n], dtype=float) for n in names))
    mode = _mode(r)
    if mode is not None and np.isin(mode, (-1, 0, 1)).all():
        _plot_by_mode(ax, _thin(mode)[0], coords, mode_names(r), linewidth=0.9)
    else:
        ax.plot(*coords, linewidth=0.9)
    ax.scatter(*([c[0]] for c in coords), color="k", s=14, zorder=3, label="start")
    ev = r.events
    if ev and all(n in ev for n in names) and len(ev[names[0]]):
        ax.scatter(*(ev[n] for n in names), color="tab:red", s=10, marker="x", linewidth=0.8, zorder=3,
                   label="events")
    setters = (ax.set_xlabel, ax.set_ylabel) + ((ax.set_zlabel,) if len(names) == 3 else ())
    for set_label, n in zip(setters, names):
        set_label(axis_label(n, tr.units.get(n, "")))
    ax.set_title("Phase portrait")
    if len(names) == 2:
        ax.legend(fontsize="x-small", loc="best")
        ax.grid(True, alpha=0.3)
    else:  # the box a little smaller, so that the axis labels stay inside the panel; the legend in its corner
        ax.set_box_aspect(None, zoom=0.78)
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(-0.02, 1.02))


def _plot_by_mode(ax, mode, coords, names, **kw):
    """A curve through ``coords`` (x, y[, z]) in one colour per mode (+1, 0, -1)."""
    for m in (1, 0, -1):
        sel = mode == m
        if sel.any():
            # Keep the neighbour of each run so that runs join up.
            keep = sel | np.r_[sel[1:], False]
            ax.plot(*(np.where(keep, c, np.nan) for c in coords), color=_darker(MODE_COLOURS[m]),
                    label=names[m], **kw)


def _darker(hex_colour):
    h = hex_colour.lstrip("#")
    rgb = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    return tuple(0.6 * c for c in rgb)


def _energy(ax, r):
    """The energy roles over time (the stored energy, T, V, the works and the dissipated energies).  The conserved
    ledger E + D is not drawn here but as its deviation from the start, on an axis of its own (_conserved)."""
    tr = r.trajectory
    t = _time(r)
    drawn = []
    for role, label in ENERGY_LABELS:
        for n in tr.with_role(role):
            tt, y = _thin(t, np.asarray(tr[n], dtype=float))
            ax.plot(tt, y, linewidth=1.1, label=symbol(n) if symbol(n) == label else f"{symbol(n)} ({label})")
            drawn.append(n)
    ax.set_xlabel(axis_label("time", tr.units.get("time", "s")))
    ax.set_ylabel(axis_label("energy", _common_unit(tr, drawn)))
    ax.set_title("Energy")
    _event_lines(ax, r)
    ax.legend(fontsize="x-small", loc="best")
    ax.grid(True, alpha=0.3)


@dataclass
class Conserved:
    """A quantity the file marks as conserved, drawn as its deviation from its initial value on an axis of its own."""
    panel: str                 # the panel's name
    symbol: str                # "E", "E + D", or the column's symbol
    ledger: h5.EnergyLedger    # its values (balance), deviation (drift, drift_max), unit and how it is formed (label)
    column: Optional[str]      # the one column it is, if any


def conserved_quantities(tr) -> list:
    """The quantities of a trajectory its roles mark as conserved (docs/python.md, "Signal roles"): the energy
    ledger E + D (rollsim.h5.energy_ledger: its column of role energy.ledger, or its signed terms; "E" when the
    stored energy is its only term, a system without works or losses), then every other column of role
    energy.ledger."""
    out = []
    led = h5.energy_ledger(tr)
    if led is not None:
        alone = led.column is None and len(led.terms) == 1 and led.terms[0][1] == 1
        only = led.terms[0][0] if alone else led.column
        out.append(Conserved("energy drift", "E" if alone and tr.roles.get(only) == "energy.total" else "E + D",
                             led, only))
    for c in tr.with_role("energy.ledger"):
        if led is None or c != led.column:
            own = h5.EnergyLedger(np.asarray(tr[c], dtype=float), [], c, tr.units.get(c, ""))
            out.append(Conserved(f"conserved {c}", symbol(c), own, c))
    return out


def deviation_label(sym: str, unit: str) -> str:
    """The axis label of a conserved quantity's deviation from its start: "E − E(0) [J]"."""
    q = f"({sym})" if " " in sym else sym
    return axis_label(f"{q} − {q}(0)", unit)


def ledger_drift_text(drift: float, unit: str) -> str:
    """How the energy drift panel states the largest drift (the legend entry); no unit for a dimensionless one."""
    return f"max |drift| = {drift:.3g} {'' if unit.strip().lower() in DIMENSIONLESS else unit}".rstrip()


def _conserved(ax, r, q: Conserved):
    """A conserved quantity's deviation from its initial value, its largest value stated in the legend and kept
    as ``ax.rollsim_drift``; for the energy ledger the run's own figure (the summary's energy_drift_abs) next to
    it when present, and the deviation relative to the run's energy scale on the right axis."""
    tr = r.trajectory
    led = q.ledger
    tt, d = _thin(_time(r), led.drift)
    formed = f" = {led.label}" if led.label != q.symbol else ""
    ax.plot(tt, d, color="tab:blue", linewidth=1.1, label=f"drift of {q.symbol}{formed}")
    ax.rollsim_drift = led.drift_max
    ax.plot([], [], " ", label=ledger_drift_text(led.drift_max, led.unit))
    if q.panel == "energy drift":
        reported = r.summary.get("energy_drift_abs")
        if isinstance(reported, (int, float)) and np.isfinite(reported):
            ax.plot([], [], " ", label="run reports " + ledger_drift_text(reported, led.unit))
        scale = h5.energy_scale(tr)
        if scale > 0 and np.isfinite(scale):
            sec = ax.secondary_yaxis("right", functions=(lambda x: x / scale, lambda x: x * scale))
            sec.set_ylabel("relative to the energy scale [-]")
    ax.set_xlabel(axis_label("time", tr.units.get("time", "s")))
    ax.set_ylabel(deviation_label(q.symbol, led.unit))
    ax.set_title(f"Drift of {q.symbol} (conserved)")
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
    _event_lines(ax, r)
    ax.legend(fontsize="x-small", loc="best")
    ax.grid(True, alpha=0.3)


def run_panels(r) -> list:
    """The panels of a run, chosen by the roles of its trajectory's columns, never by the model's name: states and
    rates by unit, a phase portrait of a system with modes and two or three states, the contact quantities per
    contact (with the contacts' modes when the file records them, and the friction demand where a contact has both
    forces), the other outputs by unit, the energies and the drift of the ledger E + D.  A file without roles (one
    written before them) gets its columns by unit."""
    tr = r.trajectory
    if not tr.roles:
        return signal_panels(r)
    panels = []
    plain = [n for n in tr.with_role("state") if not tr.ledger_signs.get(n)]
    rates = [n for n in tr.with_role("rate") if not tr.ledger_signs.get(n)]
    # Modes +1, 0, -1 (a Filippov system's) are shaded and colour the phase portrait; the contacts' modes (base 4)
    # have a panel of their own.
    shade = filippov_modes(r)
    for u, names in _by_unit(tr, plain)[:MAX_UNIT_PANELS]:
        panels.append(Panel(f"states [{u}]", (lambda ns: lambda ax: _signals(ax, r, ns, "States", shade))(names)))
    for u, names in _by_unit(tr, rates)[:MAX_UNIT_PANELS]:
        panels.append(Panel(f"rates [{u}]", (lambda ns: lambda ax: _signals(ax, r, ns, "Rates", shade))(names)))
    orbit = plain + rates
    if shade and len(orbit) in (2, 3):
        panels.append(Panel("phase portrait", lambda ax: _phase_portrait(ax, r, orbit),
                            projection="3d" if len(orbit) == 3 else None))
    for role, name, title in CONTACT_PANELS:
        if tr.with_role(role):
            panels.append(Panel(name, (lambda ro, ti: lambda ax: _contact_lines(ax, r, ro, ti))(role, title)))
    if _friction_pairs(tr):
        panels.append(Panel("friction demand", lambda ax: _friction_demand(ax, r)))
    if _contact_modes_known(r):
        panels.append(Panel("contact modes", lambda ax: _contact_modes(ax, r)))
    outputs = tr.with_role("output")
    for u, names in _by_unit(tr, outputs)[:MAX_OUTPUT_PANELS]:
        panels.append(Panel(f"outputs [{u}]", (lambda ns: lambda ax: _signals(ax, r, ns, "Outputs", shade))(names)))
    if any(tr.with_role(role) for role, _ in ENERGY_LABELS):
        panels.append(Panel("energy", lambda ax: _energy(ax, r)))
    for q in conserved_quantities(tr):
        panels.append(Panel(q.panel, (lambda q: lambda ax: _conserved(ax, r, q))(q)))
    for p in panels:  # every panel of a run but its orbit has time on its x axis
        p.time = p.name != "phase portrait"
    return panels


# --------------------------------------------------------------------------
# linearization


def linear_panels(r) -> list:
    lin = r.linear
    panels = []
    fr = lin.get("frequency_response")
    has_fr = isinstance(fr, dict) and "frequency_hz" in fr
    if has_fr and "magnitude_db" in fr:
        panels.append(Panel("bode magnitude", lambda ax: _bode(ax, fr, "magnitude_db", "magnitude", "dB", lin)))
    if "eigenvalues_real" in lin:
        panels.append(Panel("eigenvalues", lambda ax: _eigen_map(ax, lin)))
    if has_fr and "phase_deg" in fr:
        panels.append(Panel("bode phase", lambda ax: _bode(ax, fr, "phase_deg", "phase", "deg", lin)))
    if "eigenvalues_real" in lin and any(k in lin for k in ("frequency_hz", "damping_ratio")):
        panels.append(Panel("modal table", lambda ax: _modal_table(ax, lin)))
    return panels


def linear_sweep_panels(r) -> list:
    """rollsim linearize --sweep: the eigenvalues against the swept key (real parts filled, imaginary parts open, as
    Meijaard et al. 2007 draw the bicycle's against its speed), the points where a root is unstable shaded."""
    ls = r.linear_sweep
    if ls is None or "value" not in ls or "eigenvalues_real" not in ls:
        return []
    return [Panel("eigenvalues against " + str(ls.attrs.get("key", "the swept key")),
                  lambda ax: _eigen_sweep(ax, ls))]


def _eigen_sweep(ax, ls):
    v = np.asarray(ls["value"], dtype=float)
    re = np.asarray(ls["eigenvalues_real"], dtype=float).reshape(v.size, -1)
    im = np.asarray(ls["eigenvalues_imag"], dtype=float).reshape(v.size, -1)
    vv = np.repeat(v, re.shape[1])
    ax.axhline(0.0, color="0.3", linewidth=0.6, zorder=1)
    ax.scatter(vv, re.ravel(), s=9, color="tab:blue", linewidth=0, zorder=3, label="real part")
    osc = im.ravel() > 0  # one of each conjugate pair
    ax.scatter(vv[osc], im.ravel()[osc], s=11, facecolors="none", edgecolors="tab:orange", linewidth=0.7,
               zorder=3, label="imaginary part (of each pair)")
    if "n_unstable" in ls:
        unstable = np.asarray(ls["n_unstable"]) > 0
        if unstable.any() and v.size > 1:
            edges = np.concatenate(([v[0]], 0.5 * (v[1:] + v[:-1]), [v[-1]]))
            for i in np.flatnonzero(unstable):
                ax.axvspan(edges[i], edges[i + 1], color="tab:red", alpha=0.08, linewidth=0, zorder=0)
            ax.fill_between([], [], color="tab:red", alpha=0.15, label="unstable")
    key = str(ls.attrs.get("key", "value"))
    ax.set_xlabel(axis_label(key, ls.units.get("value", "")))
    ax.set_ylabel(axis_label("eigenvalues", "rad/s"))
    ax.set_title(f"Eigenvalues against {key}", loc="left")
    ax.legend(fontsize="x-small", loc="best")
    ax.grid(True, alpha=0.3)


def wrap_degrees(phase):
    """Phase in degrees wrapped to (-180, 180]."""
    return 180.0 - np.mod(180.0 - np.asarray(phase, dtype=float), 360.0)


def channel_labels(lin, n_channels: int) -> list:
    """The name of each channel of /linear/frequency_response (channel = output * n_inputs + input): the input
    when there is one output, the output when there is one input, else "input → output"; [] when the file's
    input and output names do not account for the channels."""
    inputs = [str(n) for n in lin.get("input_names", [])] if lin is not None else []
    outputs = [str(n) for n in lin.get("output_names", [])] if lin is not None else []
    if not inputs or not outputs or len(inputs) * len(outputs) != n_channels:
        return []
    return [inp if len(outputs) == 1 else out if len(inputs) == 1 else f"{inp} → {out}"
            for out in outputs for inp in inputs]


def _bode(ax, fr, key, what, default_unit, lin=None):
    """A Bode panel, one curve per channel, each labelled with its input (and output) when there are several."""
    f = np.asarray(fr["frequency_hz"], dtype=float)
    y = np.asarray(fr[key], dtype=float)
    if y.ndim == 2 and y.shape[0] != f.size:
        y = y.T
    if key == "phase_deg":
        y = wrap_degrees(y)
        # No line across a wrap: break the curve where it jumps by a full turn.
        jump = np.abs(np.diff(y, axis=0)) > 180.0
        y = y.copy()
        y[1:][jump] = np.nan
        ax.set_ylim(-185, 185)
        ax.set_yticks(np.arange(-180, 181, 90))
    lines = ax.semilogx(f, y, linewidth=1.2)
    names = channel_labels(lin, len(lines)) if len(lines) > 1 else []
    for line, name in zip(lines, names):
        line.set_label(name)
    if names:
        inputs, outputs = list(lin["input_names"]), list(lin["output_names"])
        title = ("input → output" if len(inputs) > 1 and len(outputs) > 1
                 else f"input (output {outputs[0]})" if len(inputs) > 1 else f"output (input {inputs[0]})")
        ax.legend(fontsize="x-small", loc="best", title=title, title_fontsize="x-small")
    ax.set_xlabel(axis_label("frequency", fr.units.get("frequency_hz", "Hz")))
    ax.set_ylabel(axis_label(what, fr.units.get(key, default_unit)))
    ax.set_title(f"Bode {what}" + (", wrapped to (−180°, 180°]" if key == "phase_deg" else ""))
    ax.grid(True, which="both", alpha=0.3)


# The modal classes the run stores in /linear/stability (see docs/linear.md), with their colours.
STABILITY_COLOURS = {"damped": "tab:blue", "undamped": "tab:green", "unstable": "tab:red",
                     "rigid body": "tab:gray"}
# The round-off floor of a computed eigenvalue's real part, the program's rule: |Re λ| <= the /linear attribute
# real_part_floor is no damping (damping ratio 0, time constant infinite); the computation does not decide the sign
# of an undamped pair's 1e-16.  A file written before the attribute gets the same floor from its A:
# REAL_PART_FLOOR_ULPS ulps of ||A||_F (kRealPartFloorUlps in include/rollsim/analysis/linear.hpp).
REAL_PART_FLOOR_ULPS = 256


def real_part_floor(lin) -> float:
    """The round-off floor of Re λ [the eigenvalues' unit]: the file's real_part_floor, else from its A, else 0."""
    stated = lin.attrs.get("real_part_floor")
    if isinstance(stated, (int, float)) and np.isfinite(stated):
        return float(stated)
    if "A" in lin and np.asarray(lin["A"]).size:
        return REAL_PART_FLOOR_ULPS * float(np.finfo(float).eps) * float(np.linalg.norm(np.asarray(lin["A"], float)))
    return 0.0


def zero_real_parts(re, floor: float):
    """Re λ with the parts within the round-off floor taken as zero."""
    re = np.asarray(re, dtype=float)
    return np.where(np.abs(re) <= floor, 0.0, re)


def _stability(lin, re):
    """Each root's class: the stored /linear/stability when present, else from the sign of Re λ."""
    if "stability" in lin and len(lin["stability"]) == re.size:
        return np.asarray(lin["stability"], dtype=str), True
    return np.where(re < 0, "Re λ < 0", "Re λ ≥ 0"), False


def _eigen_map(ax, lin):
    """The roots in the complex plane, coloured by their modal class, the right half-plane (Re λ > 0, unstable)
    shaded over the whole visible axis."""
    re = np.asarray(lin["eigenvalues_real"], dtype=float)
    im = np.asarray(lin.get("eigenvalues_imag", np.zeros_like(re)), dtype=float)
    unit = lin.units.get("eigenvalues_real", "1/s")
    cls, stored = _stability(lin, re)
    ax.axhline(0, color="k", linewidth=0.6)
    ax.axvline(0, color="k", linewidth=0.6)
    fallback = {"Re λ < 0": "tab:blue", "Re λ ≥ 0": "tab:red"}
    for c in dict.fromkeys(cls):
        sel = cls == c
        colour = STABILITY_COLOURS.get(c) or fallback.get(c, "k")
        ax.scatter(re[sel], im[sel], marker="x", color=colour, zorder=3, label=f"{c} ({sel.sum()})")
    span = max(np.nanmax(np.abs(re)), np.nanmax(np.abs(im)), 1e-12) * 1.2 if re.size else 1.0
    ax.set_xlim(-span, span)
    ax.set_ylim(-span, span)
    # From Re λ = 0 to the axis' right end (the limits are fixed above): the whole visible unstable half-plane.
    ax.axvspan(0, span, color="tab:red", alpha=0.06, linewidth=0, zorder=0)
    ax.set_xlabel(axis_label("Re λ", unit))
    ax.set_ylabel(axis_label("Im λ", lin.units.get("eigenvalues_imag", unit)))
    ax.set_title("Eigenvalues (Re λ > 0 shaded)")
    ax.legend(fontsize="small", loc="best", title="modal class" if stored else None, title_fontsize="small")
    ax.grid(True, alpha=0.3)


MAX_TABLE_MODES = 12
TABLE_HEADING_CHARS = 10  # the modal table's headings are wrapped at this many characters
TABLE_FONT_SCALE = 0.7    # its text relative to the style's font size (7 pt on screen)


def modal_rows(lin) -> list:
    """The modal table as drawn, as the program prints it: λ with a real part within the round-off floor
    (real_part_floor) taken as zero, then frequency, damping ratio, time constant and wavelength ("-" where a value
    is not defined: NaN, or the infinite time constant of a zero real part; for such a root the damping ratio is 0),
    and the stored class when present."""
    re = np.asarray(lin["eigenvalues_real"], dtype=float)
    im = np.asarray(lin.get("eigenvalues_imag", np.zeros_like(re)), dtype=float)
    re0 = zero_real_parts(re, real_part_floor(lin))
    cls, stored = _stability(lin, re)
    cols = [c for c in ("frequency_hz", "damping_ratio", "time_constant", "wavelength") if c in lin]
    rows = []
    for i in range(min(len(re), MAX_TABLE_MODES)):
        values = {c: float(np.asarray(lin[c])[i]) for c in cols}
        if re0[i] == 0.0:  # no damping: an infinite time constant, and a zero damping ratio where one is defined
            values.update({c: v for c, v in (("damping_ratio", 0.0), ("time_constant", math.inf))
                           if c in values and np.isfinite(values[c])})
        rows.append([f"{re0[i]:.4g}{im[i]:+.4g}j"] + [f"{values[c]:.4g}" if np.isfinite(values[c]) else "-"
                                                     for c in cols] + ([cls[i]] if stored else []))
    return rows


def _modal_table(ax, lin):
    re = np.asarray(lin["eigenvalues_real"], dtype=float)
    cls, stored = _stability(lin, re)
    cols = [c for c in ("frequency_hz", "damping_ratio", "time_constant", "wavelength") if c in lin]
    # Each heading's name on lines of at most TABLE_HEADING_CHARS, its unit on a line of its own: the table fits a
    # journal's column.
    header = (["λ"] + [textwrap.fill(symbol(c), TABLE_HEADING_CHARS, break_long_words=False) + "\n"
                       + axis_label("", lin.units.get(c, "")).strip() for c in cols] + (["class"] if stored else []))
    rows = modal_rows(lin)
    colours = [STABILITY_COLOURS.get(cls[i], "white") if stored else "white" for i in range(len(rows))]
    ax.axis("off")
    if rows:
        from matplotlib.colors import to_rgba
        cell_colours = [[to_rgba(c, 0.18 if c != "white" else 1.0)] * len(header) for c in colours]
        rest = (1.0 - 0.24) / (len(header) - 1)
        tab = ax.table(cellText=rows, colLabels=header, loc="center", cellColours=cell_colours,
                       colWidths=[0.24] + [rest] * (len(header) - 1))
        tab.auto_set_font_size(False)
        tab.set_fontsize(TABLE_FONT_SCALE * matplotlib.rcParams["font.size"])
        tab.scale(1.0, 1.2)
        lines = max(h.count("\n") + 1 for h in header)
        for c in range(len(header)):
            tab[0, c].set_height(tab[0, c].get_height() * (0.2 + 0.8 * lines))
    title = "Modes" + (f" (first {MAX_TABLE_MODES} of {len(re)})" if len(re) > MAX_TABLE_MODES else "")
    ax.set_title(title)


# --------------------------------------------------------------------------
# sweeps


def _ok_mask(sw):
    if "status" not in sw:
        return np.ones(sw.nrows, dtype=bool)
    st = np.char.lower(np.asarray(sw["status"], dtype=str))
    ok = np.isin(st, list(OK_STATUS))
    return ok if ok.any() else np.ones(st.size, dtype=bool)


def _edges(v, log=False):
    v = np.asarray(v, dtype=float)
    if log:
        return np.exp(_edges(np.log(v)))
    if v.size == 1:
        return np.array([v[0] - 0.5, v[0] + 0.5])
    mid = 0.5 * (v[1:] + v[:-1])
    return np.r_[v[0] - (mid[0] - v[0]), mid, v[-1] + (v[-1] - mid[-1])]


def _sweep_spec(r, key):
    """The [sweep] entry of ``key`` in the stored scenario text (a dict, a list, or None)."""
    import tomllib
    try:
        section = tomllib.loads(r.scenario or "").get("sweep", {})
    except tomllib.TOMLDecodeError:
        return None
    if key in section:
        return section[key]
    node = section
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def log_spaced(r, key) -> bool:
    """Whether the swept key is log-spaced: ``spacing = "log"`` in the stored [sweep] spec; for a list of
    values (or a file without the spec), three or more positive values with a constant ratio and no
    constant difference."""
    spec = _sweep_spec(r, key)
    if isinstance(spec, dict) and "spacing" in spec:
        return spec["spacing"] == "log"
    v = np.asarray(r.sweep[key])
    if v.dtype.kind not in "fiu":
        return False
    u = np.unique(v[np.isfinite(v)].astype(float))
    if u.size < 3 or u[0] <= 0:
        return False
    dlog, dlin = np.diff(np.log(u)), np.diff(u)
    return bool(np.ptp(dlog) <= 1e-6 * dlog.mean() and np.ptp(dlin) > 1e-6 * dlin.mean())


# The /sweep table's own columns after the swept keys (docs/python.md): the points' bookkeeping, not results.
SWEEP_BOOKKEEPING = ("status", "termination", "message", "n_events")


def is_zip(sw) -> bool:
    """A zip sweep (row i takes the i-th value of every swept key): its points lie on one line, not on a grid."""
    return str(sw.attrs.get("mode", "")) == "zip"


def sweep_metrics(sw, keys) -> list:
    """The results a sweep's figure draws, from what the table holds (never from the model's name): t_final and
    the summary items (the columns after the swept keys, the bookkeeping and the final states), those that are
    numbers and differ between points, each quantity once (t_final gives way to an item with its values), measured
    quantities before counts (columns of whole numbers)."""
    order = [c for c in (sw.order or list(sw.keys())) if c in sw]
    items = ["t_final"] + [c for c in order if c not in keys and c not in SWEEP_BOOKKEEPING and c != "t_final"
                           and not c.startswith("final_")]

    def values(c):
        v = np.asarray(sw[c]) if c in sw else np.zeros(0)
        if v.dtype.kind not in "fiu":
            return np.zeros(0)
        v = v.astype(float)
        return v[np.isfinite(v)]

    varying = [c for c in items if values(c).size > 1 and np.ptp(values(c)) > 0]
    # One column per quantity: t_final gives way to a summary item that holds the same values (the time of the
    # event the runs stop at, e.g. t_edge), in its place; of other columns with equal values the first is drawn.
    drawn = []
    for c in varying:
        same = [d for d in varying if d != c and np.array_equal(np.asarray(sw[c]), np.asarray(sw[d]), equal_nan=True)]
        if c == "t_final" and same:
            c = same[0]
        if not any(np.array_equal(np.asarray(sw[c]), np.asarray(sw[d]), equal_nan=True) for d in drawn):
            drawn.append(c)
    return sorted(drawn, key=lambda c: bool(np.all(values(c) == np.round(values(c)))))


def sweep_panels(r) -> list:
    sw = r.sweep
    keys = h5.swept_keys(sw)
    numeric_keys = [k for k in keys if np.asarray(sw[k]).dtype.kind in "fiu"]
    if len(numeric_keys) >= 2 and "classification" in sw and not is_zip(sw):
        panels = [Panel("basin map", lambda ax: _basin(ax, r, numeric_keys[0], numeric_keys[1]))]
        for m in sweep_metrics(sw, keys)[:1]:
            panels.append(Panel(f"{m.replace('_', ' ')} map",
                                (lambda m: lambda ax: _field_map(ax, r, numeric_keys[0], numeric_keys[1], m))(m)))
        return panels
    metrics = sweep_metrics(sw, keys)[:2] or [c for c in ("t_final",) if c in sw]
    return [Panel(f"study {m}", (lambda m: lambda ax: _study(ax, r, numeric_keys, m))(m)) for m in metrics]


MAX_POINT_CURVES = 60


def point_panels(r) -> list:
    """The sweep points' trajectories (/points, rollsim sweep --trajectories), one curve per point."""
    with_traj = [i for i, p in r.points.items() if len(p["trajectory"].get("time", ())) > 0]
    if not with_traj:
        return []
    first = r.points[with_traj[0]]["trajectory"]
    # A state whose initial value is swept (initial.NAME), else a state (its role, or a final_NAME column of the
    # sweep table: the points' final states), else the first number column after time.
    swept = [k.split(".", 1)[1] for k in h5.swept_keys(r.sweep) if k.startswith("initial.")]
    finals = [c[len("final_"):] for c in r.sweep if c.startswith("final_")]
    candidates = swept + first.with_role("state") + finals + [n for n in (first.order or first.keys()) if n != "time"]
    name = next((n for n in candidates if n in first and np.asarray(first[n]).dtype.kind == "f"), None)
    if name is None:
        return []
    return [Panel(f"point trajectories {name}", lambda ax: _point_curves(ax, r, with_traj, name))]


def _point_curves(ax, r, indices, name):
    sw = r.sweep
    keys = [k for k in h5.swept_keys(sw) if np.asarray(sw[k]).dtype.kind in "fiu"]
    shown = indices[:: int(math.ceil(len(indices) / MAX_POINT_CURVES))]
    colour_of, mappable = (lambda i: "C0"), None
    if keys:
        from matplotlib import colormaps
        from matplotlib.cm import ScalarMappable
        from matplotlib.colors import LogNorm, Normalize
        k = keys[0]
        v = np.asarray(sw[k], dtype=float)
        fin = v[np.isfinite(v)]
        lg = log_spaced(r, k)
        norm = (LogNorm if lg else Normalize)(vmin=fin.min(), vmax=fin.max() if fin.max() > fin.min() else None)
        mappable = ScalarMappable(norm=norm, cmap=colormaps["viridis"])
        colour_of = lambda i: mappable.to_rgba(v[i])  # noqa: E731
    tr0 = r.points[shown[0]]["trajectory"]
    n_ev = 0
    for i in shown:
        tr = r.points[i]["trajectory"]
        t, y = _thin(np.asarray(tr["time"], dtype=float), np.asarray(tr[name], dtype=float))
        ax.plot(t, y, color=colour_of(i), linewidth=0.8, alpha=0.85)
        ev = r.points[i]["events"]
        if len(ev.get("time", ())):
            te = np.asarray(ev["time"], dtype=float)
            ax.plot(te, np.interp(te, t, y), "o", markersize=4, color=colour_of(i), markeredgecolor="k",
                    markeredgewidth=0.3, zorder=3)
            n_ev += te.size
    if mappable is not None:
        cb = ax.figure.colorbar(mappable, ax=ax)
        cb.set_label(axis_label(keys[0], sw.units.get(keys[0], "")))
    ax.set_xlabel(axis_label("time", tr0.units.get("time", "s")))
    ax.set_ylabel(axis_label(name, tr0.units.get(name, "")))
    more = f" ({len(shown)} of {len(indices)} shown)" if len(shown) < len(indices) else f" ({len(indices)})"
    ax.set_title(f"Point trajectories{more}" + (f", {n_ev} event{'s' if n_ev != 1 else ''} marked" if n_ev else ""))
    ax.grid(True, alpha=0.3)


def _grid(sw, kx, ky):
    x = np.asarray(sw[kx], dtype=float)
    y = np.asarray(sw[ky], dtype=float)
    ux, uy = np.unique(x), np.unique(y)
    if ux.size * uy.size > 4 * max(x.size, 1):
        return None  # scattered samples, not a grid
    return x, y, ux, uy, np.searchsorted(ux, x), np.searchsorted(uy, y)


def _sweep_axes(ax, r, kx, ky=None):
    """Label the swept axes and put log-spaced keys on log axes; returns (log x, log y)."""
    sw = r.sweep
    logs = []
    for k, set_label, set_scale in ((kx, ax.set_xlabel, ax.set_xscale), (ky, ax.set_ylabel, ax.set_yscale)):
        if k is None:
            logs.append(False)
            continue
        lg = log_spaced(r, k)
        set_label(axis_label(k, sw.units.get(k, "")) + (", log axis" if lg else ""))
        if lg:
            set_scale("log")
        logs.append(lg)
    return tuple(logs)


def _basin(ax, r, kx, ky):
    sw = r.sweep
    cls = np.asarray(sw["classification"], dtype=str)
    codes = np.full(cls.size, 2, dtype=int)
    for i, (name, _) in enumerate(CLASS_CODES[:3]):
        codes[cls == name] = i
    codes[~_ok_mask(sw)] = 3
    cmap = ListedColormap([c for _, c in CLASS_CODES])
    norm = BoundaryNorm(np.arange(-0.5, len(CLASS_CODES) + 0.5), cmap.N)
    g = _grid(sw, kx, ky)
    lx, ly = _sweep_axes(ax, r, kx, ky)
    if g is not None:
        x, y, ux, uy, ix, iy = g
        grid = np.full((uy.size, ux.size), np.nan)
        grid[iy, ix] = codes
        ax.pcolormesh(_edges(ux, lx), _edges(uy, ly), np.ma.masked_invalid(grid), cmap=cmap, norm=norm,
                      shading="flat")
    else:
        ax.scatter(sw[kx], sw[ky], c=codes, cmap=cmap, norm=norm, s=10)
    present = sorted(set(codes.tolist()))
    ax.legend(handles=[Patch(color=CLASS_CODES[i][1], label=f"{CLASS_CODES[i][0]} ({(codes == i).sum()})")
                       for i in present], fontsize="small", loc="best", framealpha=0.8)
    ax.set_title("Basin map (classification)")


def _field_map(ax, r, kx, ky, col):
    sw = r.sweep
    v = np.asarray(sw[col], dtype=float).copy()
    v[~_ok_mask(sw)] = np.nan
    g = _grid(sw, kx, ky)
    lx, ly = _sweep_axes(ax, r, kx, ky)
    if g is not None:
        x, y, ux, uy, ix, iy = g
        grid = np.full((uy.size, ux.size), np.nan)
        grid[iy, ix] = v
        m = ax.pcolormesh(_edges(ux, lx), _edges(uy, ly), np.ma.masked_invalid(grid), shading="flat",
                          cmap="viridis")
    else:
        m = ax.scatter(sw[kx], sw[ky], c=v, s=10, cmap="viridis")
    cb = ax.figure.colorbar(m, ax=ax)
    cb.set_label(axis_label(col, sw.units.get(col, "")))
    ax.set_title(col.replace("_", " "))


def _study(ax, r, keys, metric):
    sw = r.sweep
    y = np.asarray(sw[metric], dtype=float)
    ok = _ok_mask(sw)
    # A zip sweep is one series: against its first key when that key moves one way, else against the point index.
    if keys and (not is_zip(sw) or _monotone(np.asarray(sw[keys[0]], dtype=float))):
        kx = keys[0]
        x = np.asarray(sw[kx], dtype=float)
        _sweep_axes(ax, r, kx)
    else:
        kx, x = None, np.arange(y.size, dtype=float)
        ax.set_xlabel("point [-]" if keys else "run [-]")
    groups = [(None, np.ones(y.size, dtype=bool))]
    if len(keys) >= 2 and not is_zip(sw):  # a zip sweep's keys change together: one series
        k2 = keys[1]
        v2 = np.asarray(sw[k2])
        u2 = np.unique(v2)
        unit2 = sw.units.get(k2, "")
        unit2 = "" if unit2.strip().lower() in DIMENSIONLESS else f" {unit2}"
        groups = [(f"{symbol(k2)} = {u:g}{unit2}" if np.asarray(u).dtype.kind in "fiu" else f"{k2} = {u}", v2 == u)
                  for u in u2]
        # Curves that would lie on each other (a result the second key does not change) are drawn once.
        curves = [(x[sel & ok][np.argsort(x[sel & ok], kind="stable")],
                   y[sel & ok][np.argsort(x[sel & ok], kind="stable")]) for _, sel in groups]
        if len(groups) > 1 and all(np.array_equal(c[0], curves[0][0]) and np.array_equal(c[1], curves[0][1],
                                                                                          equal_nan=True)
                                   for c in curves[1:]):
            groups = [(f"the same for every {symbol(k2)}", groups[0][1])]
    colours = _colour_cycle(len(groups))
    for (label, sel), colour in zip(groups, colours):
        s = sel & ok
        order = np.argsort(x[s], kind="stable")
        ax.plot(x[s][order], y[s][order], marker="o", markersize=3, linewidth=1.1, color=colour, label=label)
    nfail = int((~ok).sum())
    if nfail:
        fx, fy = x[~ok], y[~ok]
        fin = np.isfinite(fy)
        ax.scatter(fx[fin], fy[fin], marker="x", color="tab:red", label=f"failed ({nfail})")
    if "classification" in sw and (len(groups) == 1):
        cls = np.asarray(sw["classification"], dtype=str)
        for name, colour in CLASS_CODES[:2]:
            sel = (cls == name) & ok
            ax.scatter(x[sel], y[sel], s=16, color=colour, zorder=3, label=f"class {name}")
    ax.set_ylabel(axis_label(metric, sw.units.get(metric, "")))
    ax.set_title(f"{symbol(metric)} against {symbol(kx)}" if kx else symbol(metric))
    if groups[0][0] is not None or nfail or "classification" in sw:
        ax.legend(fontsize="x-small", loc="best", ncol=2 if len(groups) > 6 else 1)
    ax.grid(True, alpha=0.3)


def _monotone(v) -> bool:
    d = np.diff(v)
    return bool(np.all(np.isfinite(v))) and (bool(np.all(d > 0)) or bool(np.all(d < 0)))


def _colour_cycle(n):
    if n <= 10:
        return [f"C{i}" for i in range(n)]
    from matplotlib import colormaps
    cmap = colormaps["viridis"]
    return [cmap(i / max(n - 1, 1)) for i in range(n)]


# --------------------------------------------------------------------------
# growth check


def growth_panels(r) -> list:
    g = r.growth
    if not all(k in g for k in ("epsilon", "predicted", "measured")):
        return []
    panels = [Panel("growth", lambda ax: _growth(ax, g))]
    if "rel_error" in g:
        panels.append(Panel("growth error", lambda ax: _growth_error(ax, g)))
    return panels


def _growth_groups(g):
    modes = np.asarray(g["mode"], dtype=str) if "mode" in g else np.array(["all"] * g.nrows)
    return [(m, modes == m) for m in dict.fromkeys(modes)]


# The modes of a growth check drawn apart: their own marker, open and smaller for each next mode (so that a mode
# drawn over another still shows), and each shifted by a small factor along epsilon (the real roots +λ and -λ
# have the same |growth| at the same epsilons).
GROWTH_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">")
GROWTH_DODGE_DECADES = 0.06


def _growth_style(i, n):
    """(marker style keywords, factor along epsilon) of the i-th of n modes."""
    size = matplotlib.rcParams["lines.markersize"] * max(1.25 - 0.25 * i, 0.6)  # the style's marker size
    style = dict(marker=GROWTH_MARKERS[i % len(GROWTH_MARKERS)], markersize=size,
                 markerfacecolor="none", markeredgewidth=1.1, color=f"C{i}")
    return style, 10.0 ** (GROWTH_DODGE_DECADES * (i - (n - 1) / 2))


def _growth(ax, g):
    eps = np.asarray(g["epsilon"], dtype=float)
    groups = _growth_groups(g)
    rates = np.abs(np.r_[np.asarray(g["predicted"], dtype=float), np.asarray(g["measured"], dtype=float)])
    rates = rates[np.isfinite(rates) & (rates > 0)]
    ax.set_xscale("log")
    if rates.size and rates.max() > 10 * rates.min():  # rates over decades: a log axis, else plain numbers
        ax.set_yscale("log")
    for i, (m, sel) in enumerate(groups):
        o = np.argsort(eps[sel])
        style, dodge = _growth_style(i, len(groups))
        ax.plot(eps[sel][o], np.abs(np.asarray(g["predicted"], dtype=float)[sel][o]), "-", color=f"C{i}",
                linewidth=0.9, label=f"{m} predicted")
        ax.plot(eps[sel][o] * dodge, np.abs(np.asarray(g["measured"], dtype=float)[sel][o]), linestyle="none",
                label=f"{m} measured", **style)
    ax.set_xlabel(axis_label("epsilon", g.units.get("epsilon", "")))
    ax.set_ylabel(axis_label("|growth|", g.units.get("predicted", "")))
    ax.set_title("Growth: predicted vs measured")
    ax.legend(fontsize="x-small")
    ax.grid(True, which="both", alpha=0.3)


def _growth_error(ax, g):
    """The relative error per mode against epsilon, with the integration-error floor the file states per row
    (/growth/floor, the program's estimate; dashed in the mode's colour)."""
    eps = np.asarray(g["epsilon"], dtype=float)
    err = np.asarray(g["rel_error"], dtype=float)
    floor = np.asarray(g["floor"], dtype=float) if "floor" in g else None
    groups = _growth_groups(g)
    for i, (m, sel) in enumerate(groups):
        o = np.argsort(eps[sel])
        style, dodge = _growth_style(i, len(groups))
        ax.loglog(eps[sel][o] * dodge, np.abs(err[sel][o]), linestyle="-", linewidth=0.8, label=m, **style)
        if floor is not None:
            ax.loglog(eps[sel][o], floor[sel][o], linestyle="--", linewidth=0.9, color=f"C{i}",
                      label="_floor " + m)
    if floor is not None:
        ax.plot([], [], "k--", linewidth=0.9, label="integration-error floor (per mode)")
    ax.set_xlabel(axis_label("epsilon", g.units.get("epsilon", "")))
    ax.set_ylabel(axis_label("relative error", g.units.get("rel_error", "")))
    ax.set_title("Growth: relative error")
    ax.legend(fontsize="x-small")
    ax.grid(True, which="both", alpha=0.3)


# --------------------------------------------------------------------------
# other trajectories


def signal_panels(r) -> list:
    """A trajectory without roles: its signals grouped by unit."""
    tr = r.trajectory
    by_unit = {}
    for name, v in tr.items():
        if name == "time" or not isinstance(v, np.ndarray) or v.ndim != 1 or v.dtype.kind not in "fiub":
            continue
        by_unit.setdefault(tr.units.get(name, ""), []).append(name)
    return [Panel(f"signals [{u}]", (lambda names: lambda ax: _lines(ax, r, names))(names), time=True)
            for u, names in list(by_unit.items())[:6]]


# --------------------------------------------------------------------------


def views(r) -> list:
    """[(view name, [Panel, ...]), ...] for everything in the file that can be drawn."""
    out = []
    if r.trajectory and "time" in r.trajectory and len(r.trajectory["time"]) > 0:
        out.append(("run", run_panels(r)))
    if r.linear:
        out.append(("linear", linear_panels(r)))
    if r.linear_sweep:
        out.append(("linear_sweep", linear_sweep_panels(r)))
    if r.sweep and r.sweep.nrows > 0:
        out.append(("sweep", sweep_panels(r) + point_panels(r)))
    if r.growth and r.growth.nrows > 0:
        out.append(("growth", growth_panels(r)))
    return [(name, panels) for name, panels in out if panels]


# --------------------------------------------------------------------------
# the stroboscopic snapshot (tools/plot --view snapshot): the mechanism at chosen instants on one figure

SNAPSHOT_INSTANTS = 6        # instants of --view snapshot without --at or --snapshot N
SNAPSHOT_OLDEST_ALPHA = 0.2  # the first instant's opacity; the last is opaque


def snapshot_times(r, at=None, count=None) -> list:
    """The snapshot's instants: ``at`` (ValueError for one outside the run), else ``count`` instants evenly
    spaced from the run's start to its end."""
    t = _time(r)
    if t.size == 0:
        raise ValueError("the file has no trajectory")
    if at:
        outside = [x for x in at if not t[0] <= x <= t[-1]]
        if outside:
            raise ValueError(f"instant{'s' if len(outside) > 1 else ''} {', '.join(f'{x:g}' for x in outside)} s "
                             f"outside the run ({t[0]:g} to {t[-1]:g} s)")
        return sorted(at)
    if count is not None and count < 1:
        raise ValueError(f"--snapshot {count}: at least one instant")
    return list(np.linspace(t[0], t[-1], SNAPSHOT_INSTANTS if count is None else int(count)))


def snapshot_panels(r, instants) -> list:
    """One panel: the scene (rollsim.scene) drawn at each instant, the older ones fainter, the fixed surroundings
    and the trails once (at the last instant), a legend of the instants in the colour of the body that moves most.
    rollsim.scene.SceneError when the file has no /scene."""
    from . import scene as scene_mod

    sc = scene_mod.from_result(r)
    return [Panel("snapshot", lambda ax: _snapshot(ax, sc, list(instants)))]


def _snapshot(ax, sc, instants):
    from . import scene as scene_mod

    view = scene_mod.View(sc.dimension)
    scene_mod.set_limits(ax, sc, view)
    last = instants[-1]
    scene_mod.draw(ax, sc, last, view, roles=("ground",), forces=False, zorder=1.0)
    key = _most_moving(sc, [d for d in sc.drawables if d.role != "ground" and d.kind != "trail"])
    n = len(instants)
    handles = []
    for k, t in enumerate(instants):
        alpha = 1.0 if n == 1 else min(SNAPSHOT_OLDEST_ALPHA + (1.0 - SNAPSHOT_OLDEST_ALPHA) * k / (n - 1), 1.0)
        scene_mod.draw(ax, sc, t, view, alpha=alpha, forces=False, roles=("body", "draw", "contact"),
                       skip_kinds=() if t == last else ("trail",), zorder=2.0 + k)
        handles.append(Patch(facecolor=key.color if key else "0.4", edgecolor="black", linewidth=0.5, alpha=alpha,
                             label=f"t = {t:.4g} s"))
    ax.legend(handles=handles, loc="best", ncol=2 if n > 4 else 1, fontsize="small",
              title=key.name if key else None, title_fontsize="small")
    if sc.dimension == 2:
        ax.set_xlabel(axis_label("x", sc.length_unit))
        ax.set_ylabel(axis_label("y", sc.length_unit))
        ax.grid(True, alpha=0.25)
    else:
        ax.set_axis_off()
    ax.set_title(f"{n} instants, {instants[0]:.3g} to {last:.3g} s (older: fainter)" if n > 1 else f"t = {last:.4g} s")


def _most_moving(sc, drawables):
    """The drawable whose place changes most over the run (its position, or its first point), or None."""
    best, travel = None, -1.0
    for d in drawables:
        series = d.data.get("position", d.data["points"][:, 0, :] if "points" in d.data else None)
        if series is None or d.static:
            continue
        finite = series[np.all(np.isfinite(series), axis=1)]
        span = float(np.max(np.ptp(finite, axis=0))) if finite.size else 0.0
        if span > travel:
            best, travel = d, span
    return best


# --------------------------------------------------------------------------
# chosen signals (tools/plot --signals)


def signal_names(r) -> list:
    """The trajectory's signals that --signals can choose: every numeric column but time, in file order."""
    tr = r.trajectory or {}
    order = getattr(tr, "order", None) or list(tr.keys())
    return [n for n in order if n != "time" and n in tr and isinstance(tr[n], np.ndarray) and tr[n].ndim == 1
            and tr[n].dtype.kind in "fiub"]


def unknown_signals(r, names) -> list:
    """The names in ``names`` that are no signal of the trajectory (signal_names)."""
    known = signal_names(r)
    return [n for n in names if n not in known]


def chosen_panels(r, names) -> list:
    """One panel per signal in ``names`` (KeyError naming the unknown ones): its time history, or, for a
    quantity the file marks as conserved (conserved_quantities), its deviation from the start."""
    unknown = unknown_signals(r, names)
    if unknown:
        raise KeyError(unknown)
    conserved = {q.column: q for q in conserved_quantities(r.trajectory) if q.column}
    return [Panel(n, (lambda n: lambda ax: _conserved(ax, r, conserved[n]) if n in conserved
                      else _chosen(ax, r, n))(n), time=True) for n in names]


def _chosen(ax, r, name):
    """One signal over time (a mode as steps), titled with its description."""
    tr = r.trajectory
    tt, y = _thin(_time(r), np.asarray(tr[name], dtype=float))
    ax.plot(tt, y, linewidth=1.1, drawstyle="steps-post" if tr.roles.get(name) == "mode" else "default")
    ax.set_xlabel(axis_label("time", tr.units.get("time", "s")))
    ax.set_ylabel(axis_label(name, tr.units.get(name, "")))
    ax.set_title(textwrap.shorten(tr.descriptions.get(name) or name, 70, placeholder=" …"))
    _event_lines(ax, r)
    ax.grid(True, alpha=0.3)


# --------------------------------------------------------------------------
# figures: screen (the default) and paper style


STYLES = ("screen", "paper")
SCREEN_COLUMN_WIDTH_IN = 6.4   # one column of panels; two side by side
SCREEN_PANEL_HEIGHT_IN = 3.9
SCREEN_TITLE_HEIGHT_IN = 0.7
SCREEN_DPI = 110
PAPER_WIDTH_IN = 3.5           # a journal's single column
PAPER_PANEL_HEIGHT_IN = 2.4
PAPER_MIN_FONT_PT = 6.0        # no text smaller in print
PAPER_DPI = 300                # a PNG in paper style
# Paper style: Computer Modern as LaTeX sets it, from matplotlib's own fonts (no TeX installation): the text in
# cmr10 and the mathematics in mathtext's "cm"; every text is rewritten for them (tex_text) since cmr10 lacks the
# Greek letters and signs the screen's labels use.  TrueType (Type 42) fonts in PDF and PostScript; SVG text as
# paths, so that a figure looks the same without the fonts.
PAPER_RC = {
    "font.family": "serif", "font.serif": ["cmr10"], "mathtext.fontset": "cm",
    "axes.formatter.use_mathtext": True, "axes.unicode_minus": True,
    "font.size": 8.0, "axes.titlesize": 8.0, "axes.labelsize": 8.0, "xtick.labelsize": 7.0, "ytick.labelsize": 7.0,
    "legend.fontsize": 6.5, "figure.titlesize": 8.0,
    "lines.linewidth": 1.0, "lines.markersize": 3.5, "axes.linewidth": 0.6, "grid.linewidth": 0.4,
    "xtick.major.width": 0.6, "ytick.major.width": 0.6, "xtick.minor.width": 0.4, "ytick.minor.width": 0.4,
    "legend.framealpha": 0.85, "legend.borderpad": 0.3, "legend.handlelength": 1.6,
    "pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "path", "savefig.dpi": PAPER_DPI,
}
# What cmr10 lacks or holds elsewhere (it is TeX's OT1 layout: "|" is a dash there, "<" an inverted "!"),
# written in mathtext: Greek letters, signs, sub- and superscripts, and the ASCII characters OT1 moves.
TEX_SYMBOLS = {g: "\\" + ("var" + n if n in ("epsilon", "phi") else n) for n, g in GREEK.items()}
TEX_SYMBOLS.update({"µ": r"\mu", "Σ": r"\Sigma", "Δ": r"\Delta", "Ω": r"\Omega", "π": r"\pi", "−": "-", "–": "-",
                    "×": r"\times", "·": r"\cdot", "≤": r"\leq", "≥": r"\geq", "±": r"\pm", "°": r"^{\circ}",
                    "∞": r"\infty", "→": r"\rightarrow", "≈": r"\approx", "…": r"\ldots", "|": "|", "<": "<",
                    ">": ">", "_": r"\_", "{": r"\{", "}": r"\}", "\\": r"\backslash", "~": r"\sim", "²": "^{2}",
                    "³": "^{3}"})
TEX_SYMBOLS.update({d: "_{%d}" % i for i, d in enumerate("₀₁₂₃₄₅₆₇₈₉")})
TEX_POWER = re.compile(r"\^(-?\d+)")  # "m^2" in a unit


def tex_text(text: str) -> str:
    """``text`` for Computer Modern: what cmr10 lacks (TEX_SYMBOLS, a unit's "^2") written in mathtext outside
    the $...$ parts already there, e.g. "θ₁ [rad]" -> "$\theta _{1}$ [rad]", "max |drift|" -> "max $|$drift$|$"."""
    parts = text.split("$")
    if len(parts) % 2 == 0:  # an unpaired $: not mathtext, leave it
        return text
    return "".join(_tex_plain(p) if i % 2 == 0 else f"${p}$" for i, p in enumerate(parts)).replace("$$", " ")


def _tex_plain(text: str) -> str:
    out, math = [], []

    def close():
        if math:
            out.append("$" + " ".join(math) + "$")
            math.clear()

    i = 0
    while i < len(text):
        power = TEX_POWER.match(text, i)
        if power:
            math.append("^{%s}" % power.group(1))
            i = power.end()
            continue
        c = text[i]
        if c in TEX_SYMBOLS:
            if TEX_SYMBOLS[c].startswith("_") and not math and out and out[-1][-1:].isalnum():
                out[-1], base = out[-1][:-1], out[-1][-1]  # x₃: the subscript's base goes into the mathematics
                math.append(base)
            math.append(TEX_SYMBOLS[c])
        else:
            close()
            out.append(c)
        i += 1
    close()
    return "".join(out)


@contextlib.contextmanager
def style_context(style: str = "screen", usetex: bool = False):
    """The matplotlib settings of a style (PAPER_RC for "paper"; with ``usetex``, text set by LaTeX).  Build and
    save a figure inside it: matplotlib picks fonts when it draws."""
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r} (known: {', '.join(STYLES)})")
    rc = dict(PAPER_RC) if style == "paper" else {}
    if usetex:
        rc.update({"text.usetex": True, "text.latex.preamble": r"\usepackage{amsmath}"})
    quiet = logging.getLogger("fontTools")  # its note on the dates in cmr10's header, when a PDF embeds the font
    level = quiet.level
    if style == "paper":
        quiet.setLevel(logging.ERROR)
    try:
        with matplotlib.rc_context(rc):
            yield
    finally:
        quiet.setLevel(level)


def _paper_text(fig, usetex=False):
    """Every text of a paper-style figure in Computer Modern (tex_text), none smaller than PAPER_MIN_FONT_PT."""
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter

    def fix(s):
        s = tex_text(s)
        return re.sub(r"(?<!\\)([%&#])", r"\\\1", s) if usetex else s

    texts = set(fig.findobj(Text))
    for ax in fig.axes:
        for table in ax.tables:
            texts.update(cell.get_text() for cell in table.get_celld().values())
        for axis in (ax.xaxis, ax.yaxis) + ((ax.zaxis,) if hasattr(ax, "zaxis") else ()):
            # tick labels set by name (FixedFormatter) are made when the figure is drawn
            if isinstance(axis.get_major_formatter(), FixedFormatter):
                axis.get_major_formatter().seq = [fix(s) for s in axis.get_major_formatter().seq]
    for t in texts:
        if t.get_text():
            t.set_text(fix(t.get_text()))
        if t.get_fontsize() < PAPER_MIN_FONT_PT:
            t.set_fontsize(PAPER_MIN_FONT_PT)


VIEW_TITLES = {"growth": "Growth check: fitted rates of nonlinear runs against the eigenvalues"}


def figure_title(r, view_names=()) -> str:
    """The figure's title: the file's title (or name) and model; a view that is not the run's own (the growth
    check) first says what it shows."""
    title = r.title or os.path.basename(r.path)
    model = r.model or "unknown model"
    extra = "" if r.completed else f"  (INCOMPLETE: {r.status})"
    shown = {VIEW_TITLES[v] for v in view_names if v in VIEW_TITLES}
    if shown and len(shown) == len(set(view_names)):
        return f"{'; '.join(sorted(shown))}\nscenario: {title}; model: {model}{extra}"
    return f"{title}\nmodel: {model}{extra}"


def _strip_height(r, paper: bool) -> float:
    """The event strip's height [in]: a row per event kind, one for the modes (and their legend)."""
    rows = len(set(_event_kinds(r.events)[1])) + (2 if paper else 1) * filippov_modes(r)
    return (0.3 + 0.12 * rows) if paper else (0.6 + 0.17 * rows)


def make_figure(r, panels, figure_factory: Optional[Callable] = None, style: str = "screen", title=None,
                usetex: bool = False):
    """One figure with the given panels: on a grid of up to two columns (screen), or in one column of a journal's
    width without a title (paper: the caption says what it is).  A figure with time panels of a run with events
    lists them once in an event strip above the panels (``fig.rollsim_event_strip``), and has every time panel
    span the run's time.  ``fig.rollsim_panels`` names the panels, ``fig.rollsim_axes`` maps a name to its axes."""
    paper = style == "paper"
    n = len(panels)
    ncols = 1 if n == 1 or paper else 2
    nrows = int(math.ceil(n / ncols))
    width = PAPER_WIDTH_IN if paper else SCREEN_COLUMN_WIDTH_IN * ncols
    height = PAPER_PANEL_HEIGHT_IN if paper else SCREEN_PANEL_HEIGHT_IN
    strip = has_events(r) and any(p.time for p in panels)
    strip_h = _strip_height(r, paper) if strip else 0.0
    total = height * nrows + strip_h + (0.0 if paper else SCREEN_TITLE_HEIGHT_IN)
    fig = (figure_factory or Figure)(figsize=(width, total), layout="constrained")
    grid = fig.add_gridspec(nrows + strip, ncols, height_ratios=[strip_h] * strip + [height] * nrows)
    axes = {}
    for i, p in enumerate(panels):
        kw = {"projection": p.projection} if p.projection else {}
        ax = fig.add_subplot(grid[strip + i // ncols, i % ncols], **kw)
        p.draw(ax)
        axes[p.name] = ax
    t = _time(r) if any(p.time for p in panels) else np.zeros(0)
    span = (t[0], t[-1]) if t.size > 1 and t[-1] > t[0] else None
    if span:
        for p in panels:
            if p.time:
                axes[p.name].set_xlim(*span)
    if strip:  # added last: the panels' axes come first in fig.axes
        fig.rollsim_event_strip = fig.add_subplot(grid[0, :])
        event_strip(fig.rollsim_event_strip, r, modes=filippov_modes(r), compact=ncols == 1)
        if span:
            fig.rollsim_event_strip.set_xlim(*span)
    if not paper:
        fig.suptitle(title or figure_title(r))
    fig.rollsim_panels = [p.name for p in panels]
    fig.rollsim_axes = axes
    if paper:
        _paper_text(fig, usetex)
    return fig


def figures(r, split: bool = False, figure_factory: Optional[Callable] = None, style: str = "screen",
            signals=None, usetex: bool = False) -> list:
    """Figures for a loaded result: one with every panel, or one per panel if ``split``.  ``signals``: a list of
    trajectory signal names, one panel each instead of the views (KeyError listing the unknown ones).  ``style``
    "paper" builds them in style_context("paper"); save them inside the same context."""
    if signals:
        named = [("signals", chosen_panels(r, list(signals)))]
    else:
        named = views(r)
    if not named:
        return []
    with style_context(style, usetex):
        title = figure_title(r, [v for v, _ in named])
        if split:
            return [make_figure(r, [p], figure_factory, style, title, usetex) for _, panels in named for p in panels]
        return [make_figure(r, [p for _, panels in named for p in panels], figure_factory, style, title, usetex)]


# ---------------------------------------------------------------------------------------------------------
# The command line of tools/plot


def output_names(out, panel_names):
    """The files of the figures: ``out`` for one figure; for several (--split), OUT-NAME.EXT with each figure's
    panel name in lower case, runs of other characters as one "-" (states [rad] -> OUT-states-rad.pdf)."""
    root, ext = os.path.splitext(out)
    ext = ext or ".png"
    if len(panel_names) <= 1:
        return [root + ext]
    names, seen = [], set()
    for p in panel_names:
        slug = re.sub(r"[^0-9a-z]+", "-", p.lower()).strip("-") or "panel"
        unique, k = slug, 2
        while unique in seen:
            unique, k = f"{slug}-{k}", k + 1
        seen.add(unique)
        names.append(f"{root}-{unique}{ext}")
    return names


def main(argv=None):
    """Plot a rollsim result file.

        tools/plot FILE.h5 [-o OUT.png | --show] [--split] [--signals A,B,...] [--style paper [--usetex]]
                           [--point N] [--allow-incomplete] [--dpi N]
                           [--view snapshot [--at T1,T2,... | --snapshot N]]

    The views are picked from the file's content (time histories, phase portrait,
    energy, eigenvalues and Bode plot, basin map or study curves, sweep points'
    trajectories, growth check).  All views go into one figure with subplots; with
    --split each panel gets its own file: OUT-NAME.png, NAME the panel's name
    (OUT-states-rad.png, OUT-energy.png, ...).  --signals A,B,... draws those
    trajectory signals instead, one panel each.  The format follows the suffix of
    OUT: .png, .pdf, .svg (vector), or any other that matplotlib writes.  --style
    paper: a journal's single column (3.5 in wide), Computer Modern fonts from
    matplotlib's own (no TeX needed; --usetex sets the text with LaTeX when
    `latex` is on the PATH), no title; without -o it writes FILE.pdf.  Without -o
    or --show the output is FILE.png next to the input.  --point N plots sweep
    point N's trajectory (rollsim sweep --trajectories) with the views of a single
    run.  --view snapshot draws the mechanism from the file's /scene at the
    instants --at T1,T2,... (or N evenly spaced ones, --snapshot N) on one
    figure, the older instants fainter.  Exit status 2: missing, unreadable or incomplete file (read an
    incomplete one with --allow-incomplete), a point the file does not hold, a
    signal it does not have, or an output that cannot be written (missing folder,
    unknown format); nothing is written then.  1: nothing to plot.
    """
    ap = argparse.ArgumentParser(prog="plot", description="Plot a rollsim HDF5 result file.")
    ap.add_argument("file", help="rollsim result file (.h5)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("-o", "--output", metavar="OUT.png",
                   help="write the figure here; the suffix picks the format: .png, .pdf, .svg, ... "
                        "(default: FILE.png, FILE.pdf with --style paper)")
    g.add_argument("--show", action="store_true", help="open an interactive window instead of writing a file")
    ap.add_argument("--split", action="store_true", help="one file per panel: OUT-NAME.png, NAME the panel's name")
    ap.add_argument("--signals", metavar="A,B,...",
                    help="draw these trajectory signals, one panel each, instead of the views")
    ap.add_argument("--style", choices=STYLES, default="screen",
                    help="paper: a journal's single column (3.5 in), Computer Modern fonts, no title")
    ap.add_argument("--usetex", action="store_true",
                    help="with --style paper: set the text with LaTeX (needs latex on the PATH; else a note and "
                         "matplotlib's own Computer Modern)")
    ap.add_argument("--point", type=int, metavar="N",
                    help="plot sweep point N's trajectory (a sweep file written with --trajectories)")
    ap.add_argument("--view", choices=("snapshot",),
                    help="snapshot: the mechanism (the file's /scene) drawn at several instants on one figure, the "
                         "older ones fainter")
    ap.add_argument("--at", metavar="T1,T2,...", help="the snapshot's instants [s] (implies --view snapshot)")
    ap.add_argument("--snapshot", type=int, metavar="N",
                    help=f"a snapshot at N instants evenly spaced over the run (default {SNAPSHOT_INSTANTS})")
    ap.add_argument("--allow-incomplete", action="store_true",
                    help="plot a file whose run did not complete (root attribute completed = 0)")
    ap.add_argument("--dpi", type=int, default=None,
                    help=f"resolution of a PNG (default {SCREEN_DPI}; {PAPER_DPI} with --style paper)")
    args = ap.parse_args(argv)

    if not args.show:
        matplotlib.use("Agg")

    usetex = False
    if args.usetex:
        import shutil
        if args.style != "paper":
            print("plot: note: --usetex applies to --style paper only; ignored", file=sys.stderr)
        elif shutil.which("latex") is None:
            print("plot: note: --usetex: no latex on the PATH; the text is set in matplotlib's own Computer Modern",
                  file=sys.stderr)
        else:
            usetex = True

    try:
        result = h5.load(args.file, allow_incomplete=args.allow_incomplete)
    except h5.IncompleteFileError as exc:
        print(f"plot: error: {exc}\nplot: use --allow-incomplete to plot it anyway", file=sys.stderr)
        return 2
    except h5.RollsimFileError as exc:
        print(f"plot: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"plot: error: {args.file}: {exc}", file=sys.stderr)
        return 2

    if args.point is not None:
        try:
            result = result.point(args.point)
        except KeyError as exc:
            print(f"plot: error: {exc.args[0]}", file=sys.stderr)
            return 2

    signals = [s.strip() for s in args.signals.split(",") if s.strip()] if args.signals is not None else None
    if signals is not None:
        unknown = unknown_signals(result, signals)
        if not signals or unknown:
            what = (f"unknown signal{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}" if unknown
                    else "--signals names no signal")
            known = signal_names(result)
            have = f"the trajectory's signals: {', '.join(known)}" if known else "the file has no trajectory"
            print(f"plot: error: {args.file}: {what}; {have}", file=sys.stderr)
            return 2

    snapshot = None
    if args.view == "snapshot" or args.at is not None or args.snapshot is not None:
        try:
            at = [float(x) for x in args.at.split(",") if x.strip()] if args.at is not None else None
            snapshot = snapshot_panels(result, snapshot_times(result, at, args.snapshot))
        except h5.RollsimFileError as exc:  # no /scene: the message names the file
            print(f"plot: error: snapshot: {exc}", file=sys.stderr)
            return 2
        except ValueError as exc:
            print(f"plot: error: {args.file}: snapshot: {exc}", file=sys.stderr)
            return 2

    default_ext = ".pdf" if args.style == "paper" else ".png"
    out = args.output or os.path.splitext(args.file)[0] + default_ext
    if not args.show:
        folder = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(folder):
            print(f"plot: error: cannot write {out}: folder {folder} does not exist", file=sys.stderr)
            return 2
        ext = os.path.splitext(out)[1].lstrip(".").lower() or "png"
        from matplotlib.backend_bases import FigureCanvasBase
        formats = FigureCanvasBase.get_supported_filetypes()
        if ext not in formats:
            print(f"plot: error: cannot write {out}: unknown format .{ext} "
                  f"(allowed: {', '.join('.' + f for f in sorted(formats))})", file=sys.stderr)
            return 2

    factory = None
    if args.show:
        import matplotlib.pyplot as plt
        factory = plt.figure
    dpi = args.dpi or (PAPER_DPI if args.style == "paper" else SCREEN_DPI)
    with style_context(args.style, usetex):
        if snapshot:
            title = "\n".join(textwrap.fill(line, 70) for line in figure_title(result).split("\n"))  # one column
            figs = [make_figure(result, snapshot, factory, args.style, title, usetex)]
        else:
            figs = figures(result, split=args.split, figure_factory=factory, style=args.style, signals=signals,
                           usetex=usetex)
        if not figs:
            print(f"plot: error: {args.file}: nothing to plot (no trajectory, linear, sweep or growth data)",
                  file=sys.stderr)
            return 1
        if args.show:
            plt.show()
            return 0
        names = output_names(out, [fig.rollsim_panels[0] if len(fig.rollsim_panels) == 1 else "figure"
                                   for fig in figs])
        for fig, name in zip(figs, names):
            try:
                fig.savefig(name, dpi=dpi)
            except OSError as exc:
                print(f"plot: error: cannot write {name}: {exc.strerror or exc}", file=sys.stderr)
                return 2
            print(name)
    return 0
