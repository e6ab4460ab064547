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
             own energy ledger E + D (its largest value stated); events marked
             (a contact run's impacts and captures with solid lines and
             triangles, its other contact events dashed).  A file written
             before roles gets its signals grouped by unit.
  linear     eigenvalue map (coloured by the stored modal classes), Bode
             magnitude/phase (phase wrapped to (-180, 180] deg), modal table
  sweep      basin map (two swept keys of a grid + classification) or study
             curves of the summary's results, on log axes for log-spaced keys;
             a zip sweep is one series against its first key (or its index);
             the points' trajectories when the file has them (rollsim sweep
             --trajectories)
  growth     predicted vs measured growth, relative error
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass
from typing import Callable, Optional

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
MODE_COLOURS = {1: "#f4a582", 0: "#92c5de", -1: "#b8e186"}
# A Filippov system's modes: either side of the switching surface, and on it.
MODE_NAMES = {1: "mode +1", 0: "mode 0 (on the switching surface)", -1: "mode −1"}
CLASS_CODES = [("A", "#4393c3"), ("B", "#d6604d"), ("undetermined", "#bababa"), ("failed", "#000000")]
OK_STATUS = {"ok", "completed", "complete", "success", "done", "finished"}


@dataclass
class Panel:
    name: str
    draw: Callable  # draw(ax) -> None
    projection: Optional[str] = None


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
    """Event instants: thin translucent lines behind the curves, and a rug of ticks along the top edge
    in full colour; one colour and one legend entry per kind."""
    if not events or "time" not in events or len(events["time"]) == 0:
        return
    t = np.asarray(events["time"], dtype=float)
    kinds = np.asarray(events.get("kind", np.array(["event"] * len(t))), dtype=str)
    ylim = ax.get_ylim()  # lines in axes coordinates must not move the data limits
    extra = iter(["tab:gray", "tab:olive", "tab:cyan", "tab:pink"])
    trans = ax.get_xaxis_transform()
    for kind in dict.fromkeys(kinds):  # first-seen order
        sel = t[kinds == kind]
        colour = EVENT_COLOURS.get(kind) or next(extra, "tab:gray")
        ax.vlines(sel, 0, 1, transform=trans, colors=colour, linewidth=0.5, alpha=0.3, zorder=0.5)
        ax.vlines(sel, 0.94, 1, transform=trans, colors=colour, linewidth=1.4, zorder=3,
                  label=f"{kind} ({len(sel)})")
    ax.set_ylim(ylim)


def shade_modes(ax, t, mode):
    """Shade time intervals by mode (+1, 0, -1) across the whole height of ax."""
    _shade(ax, t, mode, MODE_NAMES)


def _shade(ax, t, mode, names):
    t = np.asarray(t, dtype=float)
    mode = np.asarray(mode)
    ylim = ax.get_ylim()
    for m in (1, 0, -1):
        mask = mode == m
        if mask.any():
            ax.fill_between(t, 0, 1, where=mask, step="post", transform=ax.get_xaxis_transform(),
                            color=MODE_COLOURS[m], alpha=0.45, linewidth=0, label=names[m], zorder=0)
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
        mark_events(ax, r.events)
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


def mark_contact_events(ax, events):
    """Events of a contact run by kind: impacts and captures as solid lines with a triangle (impact) or a
    square (capture) on the top edge; the other contact events (touchdown, lift_off, stick, slip, reversal,
    graze) as dashed lines with a bar on the top edge; the model's own events as dotted grey lines.  One legend
    entry per kind with its count."""
    if not events or "time" not in events or len(events["time"]) == 0:
        return
    t = np.asarray(events["time"], dtype=float)
    kinds = np.asarray(events.get("kind", np.array(["event"] * len(t))), dtype=str)
    ylim = ax.get_ylim()
    trans = ax.get_xaxis_transform()
    for kind in dict.fromkeys(kinds):
        sel = t[kinds == kind]
        colour = EVENT_COLOURS.get(kind, "tab:gray")
        label = f"{kind} ({len(sel)})"
        if kind in contacts.IMPACT_KINDS:
            ax.vlines(sel, 0, 1, transform=trans, colors=colour, linewidth=0.8, alpha=0.45, zorder=0.5)
            ax.plot(sel, np.full(sel.size, 0.97), transform=trans, linestyle="none", clip_on=False, zorder=3,
                    marker="v" if kind == "impact" else "s", markersize=5, color=colour, label=label)
        elif kind in contacts.TRANSITION_KINDS:
            ax.vlines(sel, 0, 1, transform=trans, colors=colour, linewidth=1.1, linestyles="--", alpha=0.8,
                      zorder=0.6)
            ax.plot(sel, np.full(sel.size, 0.97), transform=trans, linestyle="none", clip_on=False, zorder=3,
                    marker="|", markersize=9, markeredgewidth=2, color=colour, label=label)
        else:
            ax.vlines(sel, 0, 1, transform=trans, colors="tab:gray", linewidth=0.8, linestyles=":", zorder=0.5,
                      label=label)
    ax.set_ylim(ylim)


def _mark(ax, r):
    """The events of r: as contact events when the run's contacts have modes (contact_modes_known), else plainly."""
    if _contact_modes_known(r):
        mark_contact_events(ax, r.events)
    else:
        mark_events(ax, r.events)


def _contact_modes_known(r) -> bool:
    """Whether the file records each contact's modes: a mode column and the summary's symbols_NAME of every
    contact the trajectory has quantities of (the contact engine's runs)."""
    tr = r.trajectory
    names = tr.contact_names()
    return "mode" in tr and bool(names) and all(f"symbols_{n}" in r.summary for n in names)


def _mode(r):
    tr = r.trajectory
    return np.asarray(tr["mode"]).astype(int) if "mode" in tr else None


def _signals(ax, r, names, title, shade=False):
    """Time histories of `names` with the events marked; the modes shaded when `shade` and they are +1, 0, -1."""
    _lines(ax, r, names, events=False)
    mode = _mode(r)
    if shade and mode is not None and np.isin(mode, (-1, 0, 1)).all():
        shade_modes(ax, *_thin(_time(r), mode))
    _mark(ax, r)
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
    ax.set_ylabel(f"{title.lower()} [{_common_unit(tr, cols) or '-'}]")
    named = tr.contacts.get(cols[0]) if len(cols) == 1 else None
    ax.set_title(title + (" (per contact)" if len(cols) > 1 else f": contact {named}" if named else ""))
    _mark(ax, r)
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
    mark_contact_events(ax, r.events)
    handles = [Patch(facecolor=CONTACT_MODE_COLOURS[d], edgecolor="0.5",
                     label=f"{contacts.MODE_SYMBOLS[d]}  {contacts.MODE_WORDS[d]}") for d in range(4)]
    if note:
        handles.append(Patch(color="none", label="modes from /events: the trajectory's mode column is too narrow"))
    ev_handles, _ = ax.get_legend_handles_labels()
    ax.legend(handles=handles + ev_handles, fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.18),
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
    _mark(ax, r)
    ax.legend(fontsize="x-small", loc="best")
    ax.grid(True, which="both", alpha=0.3)


def _phase_portrait(ax, r, names):
    """The orbit through the states `names` (two or three), one colour per mode (+1, 0, -1) when the run has modes."""
    tr = r.trajectory
    coords = _thin(*(np.asarray(tr[n], dtype=float) for n in names))
    mode = _mode(r)
    if mode is not None and np.isin(mode, (-1, 0, 1)).all():
        _plot_by_mode(ax, _thin(mode)[0], coords, MODE_NAMES, linewidth=0.9)
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
    ax.legend(fontsize="x-small", loc="best")
    if len(names) == 2:
        ax.grid(True, alpha=0.3)


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
    """The energy roles over time, and the ledger E + D the file's roles form (rollsim.h5.energy_ledger)."""
    tr = r.trajectory
    t = _time(r)
    drawn = []
    for role, label in ENERGY_LABELS:
        for n in tr.with_role(role):
            tt, y = _thin(t, np.asarray(tr[n], dtype=float))
            ax.plot(tt, y, linewidth=1.1, label=f"{symbol(n)} ({label})")
            drawn.append(n)
    led = h5.energy_ledger(tr)
    if led is not None:
        tt, bb = _thin(t, led.balance)
        ax.plot(tt, bb, "k--", linewidth=1.4, label=f"E + D = {led.label}")
    ax.set_xlabel(axis_label("time", tr.units.get("time", "s")))
    ax.set_ylabel(axis_label("energy", led.unit if led is not None else _common_unit(tr, drawn)))
    ax.set_title("Energy")
    _mark(ax, r)
    ax.legend(fontsize="x-small", loc="best")
    ax.grid(True, alpha=0.3)


def ledger_drift_text(drift: float, unit: str) -> str:
    """How the energy drift panel states the largest drift (the legend entry)."""
    return f"max |drift| = {drift:.3g} {unit}".rstrip()


def _energy_drift(ax, r):
    """The drift of the file's own ledger E + D since the start, with its largest value stated in the legend and
    kept as ``ax.rollsim_drift``; the run's own figure (the summary's energy_drift_abs) next to it when present."""
    tr = r.trajectory
    t = _time(r)
    led = h5.energy_ledger(tr)
    tt, d = _thin(t, led.drift)
    ax.plot(tt, d, color="tab:blue", linewidth=1.1, label=f"drift of E + D = {led.label}")
    ax.rollsim_drift = led.drift_max
    ax.plot([], [], " ", label=ledger_drift_text(led.drift_max, led.unit))
    reported = r.summary.get("energy_drift_abs")
    if isinstance(reported, (int, float)) and np.isfinite(reported):
        ax.plot([], [], " ", label=f"run reports max |drift| = {reported:.3g} {led.unit}".rstrip())
    scale = h5.energy_scale(tr)
    if scale > 0 and np.isfinite(scale):
        sec = ax.secondary_yaxis("right", functions=(lambda x: x / scale, lambda x: x * scale))
        sec.set_ylabel("relative to the energy scale [-]")
    ax.set_xlabel(axis_label("time", tr.units.get("time", "s")))
    ax.set_ylabel(axis_label("energy drift", led.unit))
    ax.set_title("Energy balance drift")
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
    _mark(ax, r)
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
    mode = _mode(r)
    shade = mode is not None and bool(np.isin(mode, (-1, 0, 1)).all()) and not _contact_modes_known(r)
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
    if tr.with_role("energy", "work", "dissipation"):
        panels.append(Panel("energy", lambda ax: _energy(ax, r)))
    if h5.energy_ledger(tr) is not None:
        panels.append(Panel("energy drift", lambda ax: _energy_drift(ax, r)))
    return panels


# --------------------------------------------------------------------------
# linearization


def linear_panels(r) -> list:
    lin = r.linear
    panels = []
    fr = lin.get("frequency_response")
    has_fr = isinstance(fr, dict) and "frequency_hz" in fr
    if has_fr and "magnitude_db" in fr:
        panels.append(Panel("bode magnitude", lambda ax: _bode(ax, fr, "magnitude_db", "magnitude", "dB")))
    if "eigenvalues_real" in lin:
        panels.append(Panel("eigenvalues", lambda ax: _eigen_map(ax, lin)))
    if has_fr and "phase_deg" in fr:
        panels.append(Panel("bode phase", lambda ax: _bode(ax, fr, "phase_deg", "phase", "deg")))
    if "eigenvalues_real" in lin and any(k in lin for k in ("frequency_hz", "damping_ratio")):
        panels.append(Panel("modal table", lambda ax: _modal_table(ax, lin)))
    return panels


def wrap_degrees(phase):
    """Phase in degrees wrapped to (-180, 180]."""
    return 180.0 - np.mod(180.0 - np.asarray(phase, dtype=float), 360.0)


def _bode(ax, fr, key, what, default_unit):
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
    ax.semilogx(f, y, linewidth=1.2)
    ax.set_xlabel(axis_label("frequency", fr.units.get("frequency_hz", "Hz")))
    ax.set_ylabel(axis_label(what, fr.units.get(key, default_unit)))
    ax.set_title(f"Bode {what}" + (", wrapped to (−180°, 180°]" if key == "phase_deg" else ""))
    ax.grid(True, which="both", alpha=0.3)


# The modal classes the run stores in /linear/stability (see docs/linear.md), with their colours.
STABILITY_COLOURS = {"damped": "tab:blue", "undamped": "tab:green", "unstable": "tab:red",
                     "rigid body": "tab:gray"}


def _stability(lin, re):
    """Each root's class: the stored /linear/stability when present, else from the sign of Re λ."""
    if "stability" in lin and len(lin["stability"]) == re.size:
        return np.asarray(lin["stability"], dtype=str), True
    return np.where(re < 0, "Re λ < 0", "Re λ ≥ 0"), False


def _eigen_map(ax, lin):
    re = np.asarray(lin["eigenvalues_real"], dtype=float)
    im = np.asarray(lin.get("eigenvalues_imag", np.zeros_like(re)), dtype=float)
    unit = lin.units.get("eigenvalues_real", "1/s")
    cls, stored = _stability(lin, re)
    ax.axhline(0, color="k", linewidth=0.6)
    ax.axvline(0, color="k", linewidth=0.6)
    ax.axvspan(0, max(1.0, np.nanmax(np.abs(re)) if re.size else 1.0) * 1.2, color="tab:red", alpha=0.06)
    fallback = {"Re λ < 0": "tab:blue", "Re λ ≥ 0": "tab:red"}
    for c in dict.fromkeys(cls):
        sel = cls == c
        colour = STABILITY_COLOURS.get(c) or fallback.get(c, "k")
        ax.scatter(re[sel], im[sel], marker="x", color=colour, zorder=3, label=f"{c} ({sel.sum()})")
    if re.size:
        span = max(np.nanmax(np.abs(re)), np.nanmax(np.abs(im)), 1e-12) * 1.2
        ax.set_xlim(-span, span)
        ax.set_ylim(-span, span)
    ax.set_xlabel(axis_label("Re λ", unit))
    ax.set_ylabel(axis_label("Im λ", lin.units.get("eigenvalues_imag", unit)))
    ax.set_title("Eigenvalues" + (" (classes as in the modal table)" if stored else ""))
    ax.legend(fontsize="small", loc="best")
    ax.grid(True, alpha=0.3)


def _modal_table(ax, lin):
    re = np.asarray(lin["eigenvalues_real"], dtype=float)
    im = np.asarray(lin.get("eigenvalues_imag", np.zeros_like(re)), dtype=float)
    cls, stored = _stability(lin, re)
    cols = [c for c in ("frequency_hz", "damping_ratio", "time_constant", "wavelength") if c in lin]
    header = ["λ"] + [axis_label(c, lin.units.get(c, "")) for c in cols] + (["class"] if stored else [])
    rows, colours = [], []
    for i in range(min(len(re), 12)):
        rows.append([f"{re[i]:.4g}{im[i]:+.4g}j"] + [f"{np.asarray(lin[c])[i]:.4g}" for c in cols]
                    + ([cls[i]] if stored else []))
        colours.append(STABILITY_COLOURS.get(cls[i], "white") if stored else "white")
    ax.axis("off")
    if rows:
        from matplotlib.colors import to_rgba
        cell_colours = [[to_rgba(c, 0.18 if c != "white" else 1.0)] * len(header) for c in colours]
        rest = (1.0 - 0.26) / (len(header) - 1)
        tab = ax.table(cellText=rows, colLabels=header, loc="center", cellColours=cell_colours,
                       colWidths=[0.26] + [rest] * (len(header) - 1))
        tab.auto_set_font_size(False)
        tab.set_fontsize(7)
        tab.scale(1.0, 1.2)
    title = "Modes" + (f" (first 12 of {len(re)})" if len(re) > 12 else "")
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
    numbers and differ between points, measured quantities before counts (columns of whole numbers)."""
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
    return sorted(varying, key=lambda c: bool(np.all(values(c) == np.round(values(c)))))


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
    ax.set_title(f"Point trajectories{more}" + (f", {n_ev} events marked" if n_ev else ""))
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
    if len(groups) > 1 or nfail or "classification" in sw:
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


def _growth(ax, g):
    eps = np.asarray(g["epsilon"], dtype=float)
    for i, (m, sel) in enumerate(_growth_groups(g)):
        o = np.argsort(eps[sel])
        ax.loglog(eps[sel][o], np.abs(np.asarray(g["predicted"], dtype=float)[sel][o]), "-", color=f"C{i}",
                  label=f"{m} predicted")
        ax.loglog(eps[sel][o], np.abs(np.asarray(g["measured"], dtype=float)[sel][o]), "o", color=f"C{i}",
                  label=f"{m} measured")
    ax.set_xlabel(axis_label("epsilon", g.units.get("epsilon", "")))
    ax.set_ylabel(axis_label("|growth|", g.units.get("predicted", "")))
    ax.set_title("Growth: predicted vs measured")
    ax.legend(fontsize="x-small")
    ax.grid(True, which="both", alpha=0.3)


def _growth_error(ax, g):
    eps = np.asarray(g["epsilon"], dtype=float)
    err = np.asarray(g["rel_error"], dtype=float)
    for i, (m, sel) in enumerate(_growth_groups(g)):
        o = np.argsort(eps[sel])
        ax.loglog(eps[sel][o], np.abs(err[sel][o]), "o-", color=f"C{i}", label=m)
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
    return [Panel(f"signals [{u}]", (lambda names: lambda ax: _lines(ax, r, names))(names))
            for u, names in list(by_unit.items())[:6]]


# --------------------------------------------------------------------------


def views(r) -> list:
    """[(view name, [Panel, ...]), ...] for everything in the file that can be drawn."""
    out = []
    if r.trajectory and "time" in r.trajectory and len(r.trajectory["time"]) > 0:
        out.append(("run", run_panels(r)))
    if r.linear:
        out.append(("linear", linear_panels(r)))
    if r.sweep and r.sweep.nrows > 0:
        out.append(("sweep", sweep_panels(r) + point_panels(r)))
    if r.growth and r.growth.nrows > 0:
        out.append(("growth", growth_panels(r)))
    return [(name, panels) for name, panels in out if panels]


def figure_title(r) -> str:
    title = r.title or os.path.basename(r.path)
    model = r.model or "unknown model"
    extra = "" if r.completed else f"  (INCOMPLETE: {r.status})"
    return f"{title}\nmodel: {model}{extra}"


def make_figure(r, panels, figure_factory: Optional[Callable] = None):
    """One figure with the given panels on a grid of up to two columns."""
    n = len(panels)
    ncols = 1 if n == 1 else 2
    nrows = int(math.ceil(n / ncols))
    size = (6.4 * ncols, 3.9 * nrows + 0.7)
    fig = (figure_factory or Figure)(figsize=size, layout="constrained")
    for i, p in enumerate(panels):
        kw = {"projection": p.projection} if p.projection else {}
        ax = fig.add_subplot(nrows, ncols, i + 1, **kw)
        p.draw(ax)
    fig.suptitle(figure_title(r))
    fig.rollsim_panels = [p.name for p in panels]
    return fig


def figures(r, split: bool = False, figure_factory: Optional[Callable] = None) -> list:
    """Figures for a loaded result: one with every panel, or one per view if split."""
    vs = views(r)
    if not vs:
        return []
    if split:
        return [make_figure(r, panels, figure_factory) for _, panels in vs]
    return [make_figure(r, [p for _, panels in vs for p in panels], figure_factory)]


# ---------------------------------------------------------------------------------------------------------
# The command line of tools/plot


def output_names(out, count):
    root, ext = os.path.splitext(out)
    ext = ext or ".png"
    return [f"{root}{ext}" if i == 0 else f"{root}-{i + 1}{ext}" for i in range(count)]


def main(argv=None):
    """Plot a rollsim result file.

        tools/plot FILE.h5 [-o OUT.png | --show] [--split] [--point N] [--allow-incomplete] [--dpi N]

    The views are picked from the file's content (time histories, phase portrait,
    energy, eigenvalues and Bode plot, basin map or study curves, sweep points'
    trajectories, growth check).  All views go into one figure with subplots; with
    --split each view gets its own file: OUT.png, OUT-2.png, OUT-3.png, ...  The
    format follows the suffix of OUT: .png, .pdf, .svg (vector), or any other that
    matplotlib writes.  Without -o or --show the output is FILE.png next to the
    input.  --point N plots sweep point N's trajectory (rollsim sweep
    --trajectories) with the views of a single run.  Exit status 2: missing,
    unreadable or incomplete file (read an incomplete one with --allow-incomplete),
    a point the file does not hold, or an output that cannot be written (missing
    folder, unknown format); 1: nothing to plot.
    """
    ap = argparse.ArgumentParser(prog="plot", description="Plot a rollsim HDF5 result file.")
    ap.add_argument("file", help="rollsim result file (.h5)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("-o", "--output", metavar="OUT.png",
                   help="write the figure here; the suffix picks the format: .png, .pdf, .svg, ... (default: FILE.png)")
    g.add_argument("--show", action="store_true", help="open an interactive window instead of writing a file")
    ap.add_argument("--split", action="store_true", help="one file per view: OUT.png, OUT-2.png, ...")
    ap.add_argument("--point", type=int, metavar="N",
                    help="plot sweep point N's trajectory (a sweep file written with --trajectories)")
    ap.add_argument("--allow-incomplete", action="store_true",
                    help="plot a file whose run did not complete (root attribute completed = 0)")
    ap.add_argument("--dpi", type=int, default=110, help="resolution of the PNG (default 110)")
    args = ap.parse_args(argv)

    import matplotlib
    if not args.show:
        matplotlib.use("Agg")

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

    out = args.output or os.path.splitext(args.file)[0] + ".png"
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
    figs = figures(result, split=args.split, figure_factory=factory)
    if not figs:
        print(f"plot: error: {args.file}: nothing to plot (no trajectory, linear, sweep or growth data)",
              file=sys.stderr)
        return 1
    if args.show:
        plt.show()
        return 0
    for fig, name in zip(figs, output_names(out, len(figs))):
        try:
            fig.savefig(name, dpi=args.dpi)
        except OSError as exc:
            print(f"plot: error: cannot write {name}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(name)
    return 0
