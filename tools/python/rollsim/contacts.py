"""The contact engine's results in a file: its contacts, their modes, the phases (events), the impacts and the
energy ledger.  Used by tools/plot (the contact view) and tools/report (the contact section).

A run of a user model (``model = "lagrangian"``) with at least one unilateral contact writes, per contact NAME,
``gap_NAME``, ``gap_rate_NAME``, ``normal_force_NAME`` and, with friction, ``tangential_force_NAME`` and
``slip_velocity_NAME`` (the columns' roles say which is which, and of which contact: docs/python.md); the states
``dissipated_friction`` and ``dissipated_impact``; the outputs ``kinetic_energy``, ``potential_energy``, ``energy``
(the Jacobi energy h) and ``energy_balance`` (role energy.ledger, the balance E + D); events with
``mode_before``/``mode_after`` and, at impacts and captures, ``impulse_normal_NAME``,
``impulse_tangential_NAME`` and ``kinetic_energy_loss``; the summary ``symbols_NAME``.

The system's mode holds the contacts' modes in base 4, contact k in digit k (include/rollsim/hybrid/contacts.hpp:
0 open, 1 stick or closed, 2 slide +, 3 slide -), k being the order in which the scenario declares its
``[contacts.NAME]`` tables.  The file does not store that order, so ``contact_order`` takes it from the stored
scenario text and vouches for it with the summary's ``symbols_NAME`` (the modes each contact visited, in order):
a mismatch is an error, never a guess.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

from . import h5

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

# Digit value -> symbol, as in the summary's symbols_NAME (ContactMode in include/rollsim/hybrid/contacts.hpp).
MODE_SYMBOLS = ("o", "0", "+", "-")
MODE_WORDS = ("open", "stick / closed", "slide +", "slide −")
IMPACT_KINDS = ("impact", "capture")
TRANSITION_KINDS = ("touchdown", "lift_off", "stick", "slip", "reversal", "graze")
ENGINE_EVENT_KINDS = IMPACT_KINDS + TRANSITION_KINDS


class ContactDataError(Exception):
    """The file's contact data cannot be read consistently (the tool says why and does not guess)."""


def gap_contacts(tr) -> list:
    """Contacts with a gap, from the columns' roles (contact.gap and their contact attribute)."""
    return sorted({tr.contacts[n] for n in tr.with_role("contact.gap") if n in tr.contacts})


def is_contact_run(r) -> bool:
    tr = r.trajectory
    return bool(tr) and "time" in tr and bool(gap_contacts(tr))


def declared_contacts(r) -> list:
    """The [contacts.NAME] tables of the stored scenario text in the order it declares them, then contacts the
    resolved scenario has beyond those (set on the command line), by name."""
    names = []
    if tomllib is not None and r.scenario:
        try:
            names = list(tomllib.loads(r.scenario).get("contacts", {}))
        except (tomllib.TOMLDecodeError, AttributeError):
            names = []
    extra = sorted({k.split(".")[1] for k in r.resolved if k.startswith("contacts.") and k.count(".") >= 2}
                   - set(names))
    return names + extra


def contact_mode(mode, k):
    """The mode digit of contact k in a system mode (works on arrays)."""
    return (np.asarray(mode).astype(np.int64) >> (2 * k)) & 3


def _event_modes(r):
    ev = r.events
    te = np.asarray(ev.get("time", np.zeros(0)), float)
    o = np.argsort(te, kind="stable")
    before = np.asarray(ev.get("mode_before", np.zeros(te.size, int)), np.int64)[o]
    after = np.asarray(ev.get("mode_after", np.zeros(te.size, int)), np.int64)[o]
    return te[o], before, after


def initial_mode(r) -> int:
    """The system mode at the start: the first event's mode_before (modes change only at events), else the
    trajectory's first mode."""
    te, before, _ = _event_modes(r)
    if te.size:
        return int(before[0])
    return int(np.asarray(r.trajectory["mode"])[0])


def modes_at_samples(r) -> np.ndarray:
    """The system mode at every sample, rebuilt from /events (the mode after the last event at or before the
    sample; a sample at an event's time holds the state after it).  /events stores modes as int32; the
    trajectory's own mode column may be too narrow for many contacts (see mode_column_note)."""
    t = np.asarray(r.trajectory["time"], float)
    te, _, after = _event_modes(r)
    idx = np.searchsorted(te, t, side="right") - 1
    out = np.full(t.size, initial_mode(r), np.int64)
    out[idx >= 0] = after[idx[idx >= 0]]
    return out


def mode_column_note(r, order: list) -> Optional[str]:
    """None when the trajectory's mode column agrees with the modes rebuilt from /events at every sample; a note
    when the column's integer type cannot hold the contacts' modes (it agrees wherever the value fits);
    ContactDataError when they disagree otherwise."""
    col = np.asarray(r.trajectory["mode"])
    rebuilt = modes_at_samples(r)
    same = col.astype(np.int64) == rebuilt
    if same.all():
        return None
    if col.dtype.kind in "iu":
        hi = np.iinfo(col.dtype).max
        if np.all(same | (rebuilt > hi)):
            return (f"the trajectory's mode column ({col.dtype}) holds values up to {hi} and cannot store "
                    f"the modes of {len(order)} contacts (up to {4 ** len(order) - 1}); the modes shown are "
                    "rebuilt from /events (int32)")
    i = int(np.argmax(~same))
    raise ContactDataError(f"{r.path}: the trajectory's mode {int(col[i])} at t = {r.trajectory['time'][i]:.9g} "
                           f"differs from the mode {int(rebuilt[i])} that /events gives there")


def visited_symbols(r, k) -> str:
    """The modes contact k visits, as the summary's symbols_NAME writes them: the initial mode and the modes
    before and after each event in time order, repeats merged."""
    _, before, after = _event_modes(r)
    seq = [initial_mode(r)] + [m for pair in zip(before, after) for m in pair]
    out = []
    for d in contact_mode(np.asarray(seq, np.int64), k):
        c = MODE_SYMBOLS[int(d)]
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def _symbols_agree(computed: str, stored: str) -> bool:
    if stored.endswith("..."):  # the summary truncates long sequences
        head = stored[:-3]
        return computed.startswith(head)
    return computed == stored


def contact_order(r) -> list:
    """The contacts in the engine's order (mode digit k is list index k), checked against symbols_NAME.

    Raises ContactDataError when the trajectory has no mode, a contact with outputs is not declared, or the
    modes read with that order do not give the summary's symbols for every contact."""
    tr = r.trajectory
    if "mode" not in tr:
        raise ContactDataError(f"{r.path}: the trajectory has no 'mode' column: the contacts' modes are unknown")
    order = declared_contacts(r)
    missing = [n for n in gap_contacts(tr) if n not in order]
    if missing:
        raise ContactDataError(f"{r.path}: contact(s) {', '.join(missing)} have outputs but are not declared in "
                               "the stored scenario: the order of the contacts' mode digits is unknown")
    bad = []
    for k, name in enumerate(order):
        stored = r.summary.get(f"symbols_{name}")
        if stored is None:
            bad.append(f"{name}: no symbols_{name} in /summary")
            continue
        got = visited_symbols(r, k)
        if not _symbols_agree(got, str(stored)):
            bad.append(f"{name}: mode digit {k} visits {got!r}, the summary says {stored!r}")
    if bad:
        raise ContactDataError(f"{r.path}: the contacts' modes cannot be matched to their names ("
                               + "; ".join(bad) + ")")
    return order


@dataclasses.dataclass
class Phase:
    """One event: its time and kind, the contacts it concerns, and each contact's mode symbol before/after."""
    time: float
    kind: str
    contacts: list                 # names (empty for a user event that changes no contact)
    before: dict                   # name -> symbol, every contact
    after: dict


def phases(r, order: list) -> list:
    """Every event in time order.  The contacts an event concerns: those whose mode changes at it, and those
    with a nonzero normal impulse (an impact that leaves a contact open, e > 0, changes no mode)."""
    ev = r.events
    if not ev or "time" not in ev:
        return []
    t = np.asarray(ev["time"], float)
    kinds = np.asarray(ev["kind"], str)
    mb = np.asarray(ev.get("mode_before", np.zeros(t.size, int)))
    ma = np.asarray(ev.get("mode_after", np.zeros(t.size, int)))
    out = []
    for i in np.argsort(t, kind="stable"):
        before = {n: MODE_SYMBOLS[int(contact_mode(mb[i], k))] for k, n in enumerate(order)}
        after = {n: MODE_SYMBOLS[int(contact_mode(ma[i], k))] for k, n in enumerate(order)}
        involved = []
        for n in order:
            imp = ev.get(f"impulse_normal_{n}")
            hit = imp is not None and np.isfinite(imp[i]) and imp[i] != 0
            if before[n] != after[n] or hit:
                involved.append(n)
        out.append(Phase(float(t[i]), str(kinds[i]), involved, before, after))
    return out


@dataclasses.dataclass
class Impact:
    time: float
    kind: str                       # impact or capture
    contacts: list
    impulse_normal: dict            # name -> value (contacts with a finite value)
    impulse_tangential: dict
    kinetic_energy_loss: float


def impacts(r, order: list) -> list:
    ev = r.events
    if not ev or "time" not in ev:
        return []
    t = np.asarray(ev["time"], float)
    kinds = np.asarray(ev["kind"], str)
    loss = np.asarray(ev.get("kinetic_energy_loss", np.full(t.size, np.nan)), float)
    ph = {p.time: p for p in phases(r, order)}
    out = []
    for i in np.argsort(t, kind="stable"):
        if kinds[i] not in IMPACT_KINDS:
            continue
        pn, pt = {}, {}
        for n in order:
            for key, d in ((f"impulse_normal_{n}", pn), (f"impulse_tangential_{n}", pt)):
                if key in ev and np.isfinite(ev[key][i]):
                    d[n] = float(ev[key][i])
        out.append(Impact(float(t[i]), str(kinds[i]), ph[float(t[i])].contacts, pn, pt, float(loss[i])))
    return out


@dataclasses.dataclass
class Ledger:
    """Where the energy went, from the file's own columns."""
    initial: float                  # the balance at the first sample [J]
    scale: float                    # the run's energy scale (h5.energy_scale), that of the relative drift [J]
    lost_at_impacts: float          # sum of kinetic_energy_loss over the impact and capture events [J]
    dissipated_impact: float        # the state at the last sample [J]
    dissipated_friction: float      # the state at the last sample [J]
    drift_max: float                # max |balance - initial| over the samples [J]
    drift_final: float              # balance - initial at the last sample [J]
    balance_output_mismatch: float  # max |sum of the signed terms - the ledger column| (nan: not comparable) [J]
    n_impacts: int

    @property
    def drift_rel(self) -> float:
        return self.drift_max / self.scale if self.scale > 0 else self.drift_max


def ledger(r) -> Ledger:
    """Where the energy went: the ledger E + D as the file's roles form it (rollsim.h5.energy_ledger), checked
    against its own terms where the file holds both."""
    tr, ev = r.trajectory, r.events
    led = h5.energy_ledger(tr)
    if led is None:
        raise ContactDataError(f"{r.path}: the trajectory's roles give no energy ledger")
    b = led.balance
    kinds = np.asarray(ev.get("kind", []), str)
    sel = np.isin(kinds, IMPACT_KINDS)
    loss = np.asarray(ev.get("kinetic_energy_loss", np.full(kinds.size, np.nan)), float)
    last = lambda n: float(np.asarray(tr[n], float)[-1]) if n in tr else 0.0  # noqa: E731
    terms = sum(sign * np.asarray(tr[n], float) for n, sign in led.terms) if led.terms else None
    # The ledger column holds every work of the model; its signed terms sum to it when each of those works is a
    # column too (a user model's are: work_forces, work_explicit_time).
    mismatch = float(np.max(np.abs(b - terms))) if led.column is not None and terms is not None else float("nan")
    return Ledger(initial=float(b[0]), scale=h5.energy_scale(tr), lost_at_impacts=float(np.sum(loss[sel])),
                  dissipated_impact=last("dissipated_impact"), dissipated_friction=last("dissipated_friction"),
                  drift_max=float(np.max(np.abs(b - b[0]))), drift_final=float(b[-1] - b[0]),
                  balance_output_mismatch=mismatch, n_impacts=int(sel.sum()))


def mode_matrix(r, order: list) -> np.ndarray:
    """Mode digits per contact (rows, in `order`) and sample (columns)."""
    m = modes_at_samples(r)
    return np.vstack([contact_mode(m, k) for k in range(len(order))]) if order else np.zeros((0, m.size), int)
