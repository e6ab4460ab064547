"""Read rollsim HDF5 result files into plain Python objects.

Usage::

    import rollsim                      # rollsim.load is rollsim.h5.load
    r = rollsim.load("run.h5")
    t = r.trajectory["time"]
    theta1 = r.trajectory["theta1"]
    r.trajectory.units["theta1"]        # "rad"
    r.events["kind"]                    # numpy array of str
    r.trajectory.roles["total_energy"]  # "energy.total": what each column is (docs/python.md, "Signal roles")
    r.trajectory.with_role("contact.normal_force")   # the columns of that role, in file order
    led = rollsim.energy_ledger(r.trajectory)        # E + D as the file's roles form it, or None
    r.summary["termination"]
    r.linear["eigenvectors_real"][:, j] # component i of eigenvector j at [i, j]
    r.points                            # sweep trajectories: index -> Table (rollsim sweep --trajectories)
    p = r.point(3)                      # point 3 as a RollsimResult of its own (trajectory, events)
    r.formulations["largest"]           # rollsim check formulations -o: the judged differences

Every string (attributes and string datasets) is decoded to ``str``.  Groups
that a file does not have are empty (trajectory, events, summary, solver) or
``None`` (linear, sweep, growth, formulations); ``points`` is empty unless the file is a
sweep written with ``--trajectories``.  Files whose root attribute ``completed`` is 0
are refused unless ``allow_incomplete=True``.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Optional

import h5py
import numpy as np

__all__ = [
    "load",
    "RollsimResult",
    "Table",
    "RollsimFileError",
    "IncompleteFileError",
    "EnergyLedger",
    "energy_ledger",
    "energy_scale",
    "FORMAT_NAME",
    "SUPPORTED_FORMAT_VERSION",
]

FORMAT_NAME = "rollsim"
SUPPORTED_FORMAT_VERSION = 1
# The data groups a result file may hold (besides /scenario, /summary, /solver and /points).
GROUPS = ("trajectory", "events", "linear", "sweep", "growth", "formulations", "linear_sweep")


class RollsimFileError(Exception):
    """A file is missing, unreadable or not a rollsim result file."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path


class IncompleteFileError(RollsimFileError):
    """The file's root attribute ``completed`` is 0 (the run did not finish)."""

    def __init__(self, path: str, status: str):
        super().__init__(
            path,
            f"incomplete result file (completed = 0, status = {status!r}); "
            "pass allow_incomplete=True to read it anyway",
        )
        self.status = status


class Table(dict):
    """A dict of name -> numpy array, with per-dataset metadata.

    ``units`` and ``descriptions`` map dataset names to the ``unit`` and
    ``description`` attributes (missing ones are absent); ``roles``,
    ``contacts`` and ``ledger_signs`` map them to the ``role``, ``contact`` and
    ``ledger`` attributes (a file written before roles has none); ``attrs``
    holds the attributes of the HDF5 group itself and ``dataset_attrs`` every
    attribute of every dataset.  Subgroups appear as nested ``Table`` values.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.units: dict[str, str] = {}
        self.descriptions: dict[str, str] = {}
        self.attrs: dict[str, Any] = {}
        self.dataset_attrs: dict[str, dict[str, Any]] = {}
        self.roles: dict[str, str] = {}
        self.contacts: dict[str, str] = {}
        self.ledger_signs: dict[str, int] = {}
        self.order: list[str] = []  # member names in the file's order (_group_order), as the dict holds them

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def unit(self, name: str, default: str = "") -> str:
        return self.units.get(name, default)

    def role(self, name: str, default: str = "") -> str:
        return self.roles.get(name, default)

    def with_role(self, *roles: str) -> list:
        """The names of the columns whose role is one of ``roles``, in file order.  A role given without its
        last part matches every role under it: "energy" matches "energy.kinetic", "contact" every contact
        quantity."""
        def match(role):
            return any(role == want or role.startswith(want + ".") for want in roles)
        order = [n for n in self.order if n in self] or list(self.keys())
        return [n for n in order if match(self.roles.get(n, ""))]

    def contact_names(self) -> list:
        """The contacts the table has quantities of, in the order of their first column."""
        return list(dict.fromkeys(self.contacts[n] for n in self.with_role("contact") if n in self.contacts))

    @property
    def nrows(self) -> int:
        """Length of the first 1-D column (0 if there is none)."""
        for v in self.values():
            if isinstance(v, np.ndarray) and v.ndim >= 1:
                return int(v.shape[0])
        return 0


_UNREAD = object()  # RollsimResult._scene before its first use


@dataclasses.dataclass
class RollsimResult:
    """Everything in one rollsim result file."""

    path: str
    provenance: dict            # root attributes
    scenario: str               # /scenario attr toml: the input text
    scenario_resolved: str      # /scenario attr resolved: "key = value" lines
    resolved: dict              # the same parsed: key -> value string
    trajectory: Table
    events: Table
    summary: dict
    solver: dict
    linear: Optional[Table]
    sweep: Optional[Table]
    growth: Optional[Table]
    formulations: Optional[Table] = None  # rollsim check formulations -o
    linear_sweep: Optional[Table] = None  # rollsim linearize --sweep -o
    # Sweep trajectories, /points/NNNNNN: point index -> Table with attrs (index, status, overrides)
    # and nested Tables "trajectory" and "events" (empty when the file has none for that point).
    points: dict = dataclasses.field(default_factory=dict)
    # /scene: how the model looks (format 1, docs/animate.md), one nested Table per drawable; None without it.
    # Read from the file at the first use of ``scene`` (it often holds more values a sample than the trajectory).
    _scene: Any = dataclasses.field(default=None, repr=False)

    @property
    def scene(self) -> Optional[Table]:
        """The file's /scene as a Table of drawables (None without one), read from the file at first use."""
        if self._scene is _UNREAD:
            try:
                with h5py.File(self.path, "r") as f:
                    g = f.get("scene")
                    self._scene = _read_group(g) if isinstance(g, h5py.Group) else None
            except OSError as exc:
                raise RollsimFileError(self.path, f"cannot read /scene ({exc})") from None
        return self._scene

    # Convenience views of the provenance.
    @property
    def model(self) -> str:
        return str(self.provenance.get("model", ""))

    @property
    def title(self) -> str:
        return str(self.provenance.get("title", ""))

    @property
    def completed(self) -> bool:
        return bool(self.provenance.get("completed", 0))

    @property
    def status(self) -> str:
        return str(self.provenance.get("status", ""))

    @property
    def format_version(self) -> int:
        return int(self.provenance.get("format_version", 0))

    @property
    def units(self) -> dict:
        """Units of the trajectory signals (same as ``trajectory.units``)."""
        return self.trajectory.units

    @property
    def descriptions(self) -> dict:
        return self.trajectory.descriptions

    @property
    def swept_keys(self) -> list:
        """Names of the swept parameters of a sweep, in sweep order."""
        return swept_keys(self.sweep) if self.sweep is not None else []

    def point(self, index: int) -> "RollsimResult":
        """Sweep point ``index`` (from /points) as a result of its own.

        Its trajectory and events are the point's; its resolved scenario is the
        base scenario with the point's swept values put in (taken from its row
        of /sweep), so ``param()`` gives the values that point ran with.
        """
        if index not in self.points:
            have = f"{min(self.points)}..{max(self.points)}" if self.points else "none"
            raise KeyError(f"{self.path}: no trajectory for sweep point {index} (points stored: {have})")
        p = self.points[index]
        resolved = dict(self.resolved)
        if self.sweep is not None and index < self.sweep.nrows:
            for k in self.swept_keys:
                v = self.sweep[k][index]
                resolved[k] = repr(float(v)) if np.asarray(v).dtype.kind == "f" else str(v)
        status = str(p.attrs.get("status", ""))
        prov = dict(self.provenance)
        prov.update(completed=int(status == "ok"), status=status,
                    title=f"{self.title} — point {index}: {p.attrs.get('overrides', '')}".strip())
        return dataclasses.replace(
            self, provenance=prov, resolved=resolved, trajectory=p.get("trajectory", Table()),
            events=p.get("events", Table()), summary={}, solver={}, linear=None, sweep=None, growth=None,
            formulations=None, linear_sweep=None, points={}, _scene=None)

    def param(self, key: str, default=None):
        """A value from the resolved scenario, as float when it parses as one."""
        if key not in self.resolved:
            return default
        return _parse_scalar(self.resolved[key])


# --------------------------------------------------------------------------
# decoding helpers


def _decode(value):
    """Convert an h5py attribute value to plain Python / numpy, strings as str."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace").rstrip("\x00")
    if isinstance(value, np.bytes_):
        return bytes(value).decode("utf-8", errors="replace").rstrip("\x00")
    if isinstance(value, str):
        return str(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "SOU":
            out = np.array([_decode(v) for v in value.ravel()], dtype=object)
            if value.ndim == 0:
                return out[0]
            strs = [str(v) for v in out]
            arr = np.array(strs, dtype=str) if strs else np.array([], dtype=str)
            return arr.reshape(value.shape)
        if value.ndim == 0:
            return value.item()
        if value.size == 1 and value.ndim == 1:
            # h5py returns 1-element arrays for some scalar attributes written from C.
            return value[0].item()
        return value
    if isinstance(value, np.generic):
        return value.item()
    return value


def _read_attrs(obj) -> dict:
    out = {}
    for k in obj.attrs.keys():
        try:
            out[str(k)] = _decode(obj.attrs[k])
        except (OSError, TypeError) as exc:  # e.g. an attribute type h5py cannot read
            out[str(k)] = f"<unreadable attribute: {exc}>"
    return out


def _read_dataset(ds: h5py.Dataset) -> np.ndarray:
    if h5py.check_string_dtype(ds.dtype) is not None:
        raw = ds.asstr(errors="replace")[()]
        if isinstance(raw, str):
            return raw
        strs = [s.rstrip("\x00") for s in np.asarray(raw, dtype=object).ravel()]
        arr = np.array(strs, dtype=str) if strs else np.array([], dtype=str)
        return arr.reshape(np.shape(raw))
    if ds.dtype.kind == "S":
        return _decode(ds[()])
    data = ds[()]
    if isinstance(data, np.ndarray):
        return data
    return np.asarray(data)


def _read_group(g: h5py.Group) -> Table:
    """The group as a Table whose members come in the file's order (``_group_order``), not by name."""
    t = Table()
    t.attrs = _read_attrs(g)
    t.order = _group_order(g)
    for name in t.order:
        obj = g[name]
        if isinstance(obj, h5py.Dataset):
            t[name] = _read_dataset(obj)
            a = _read_attrs(obj)
            t.dataset_attrs[name] = a
            if "unit" in a:
                t.units[name] = str(a["unit"])
            if "description" in a:
                t.descriptions[name] = str(a["description"])
            if "role" in a:
                t.roles[name] = str(a["role"])
            if "contact" in a:
                t.contacts[name] = str(a["contact"])
            if "ledger" in a:
                t.ledger_signs[name] = int(a["ledger"])
        elif isinstance(obj, h5py.Group):
            t[name] = _read_group(obj)
    return t


def _group_order(g: h5py.Group) -> list:
    """Member names in the order the group's ``columns`` attribute lists (a sweep table, whose string columns are
    written last), else in creation order when the file tracks it (rollsim's files do), else h5py's order (by name)."""
    listed = g.attrs.get("columns")
    if listed is not None:
        text = listed.decode() if isinstance(listed, bytes) else str(listed)
        names = [n for n in text.split("\n") if n in g]
        return names + [n for n in g.keys() if n not in names]
    try:
        names = []
        g.id.links.iterate(lambda n: names.append(n.decode()), idx_type=h5py.h5.INDEX_CRT_ORDER)
        return names
    except Exception:
        return list(g.keys())


def _parse_scalar(text: str):
    s = str(text).strip()
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        pass
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        return s[1:-1]
    if s in ("true", "false"):
        return s == "true"
    return s


def parse_resolved(text: str) -> dict:
    """Parse the ``resolved`` scenario text ("key = value" per line) into a dict of str."""
    out = {}
    for line in (text or "").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def swept_keys(sweep: Table) -> list:
    """The swept parameter columns of a sweep table.

    Taken from the group attribute ``swept_keys`` (or ``keys``) when present
    (a comma/newline separated string or a string array); otherwise the
    columns whose names contain a dot, in creation order if the file tracks it.
    """
    for attr in ("swept_keys", "keys", "swept"):
        v = sweep.attrs.get(attr)
        if v is None:
            continue
        if isinstance(v, str):
            keys = [k.strip() for k in v.replace("\n", ",").split(",") if k.strip()]
        else:
            keys = [str(k) for k in np.ravel(v)]
        keys = [k for k in keys if k in sweep]
        if keys:
            return keys
    order = [k for k in sweep.order if k in sweep] or list(sweep.keys())
    return [k for k in order if "." in k and isinstance(sweep[k], np.ndarray)]


# --------------------------------------------------------------------------
# the energy ledger


@dataclasses.dataclass
class EnergyLedger:
    """The energy balance E + D of a table (a trajectory, or a sweep point's), as the file's roles form it.

    ``balance`` is E + D at every row: the column of role ``energy.ledger`` when the table has one (it then holds
    every work of the model, also one the file has no column of), else the sum of sign × column over the columns
    with a ``ledger`` attribute.  ``terms`` lists those (name, sign) pairs, ``column`` the ledger column's name or
    None.  E + D is constant in an exact motion: ``drift`` is its change since the first row.
    """

    balance: np.ndarray
    terms: list
    column: Optional[str]
    unit: str

    @property
    def drift(self) -> np.ndarray:
        return self.balance - self.balance[0] if self.balance.size else self.balance

    @property
    def drift_max(self) -> float:
        """max |E + D − (E + D)(0)| over the rows (0 for an empty table)."""
        d = self.drift
        return float(np.nanmax(np.abs(d))) if d.size else 0.0

    @property
    def label(self) -> str:
        """How E + D is formed, e.g. "total_energy − input_work" or "energy_balance"."""
        if self.column is not None:
            return self.column
        ordered = sorted(self.terms, key=lambda term: -term[1])  # the positive terms first, each in file order
        text = " ".join(("+ " if sign > 0 else "− ") + name for name, sign in ordered)
        return text[2:] if text.startswith("+ ") else "−" + text[1:]


def energy_ledger(table) -> Optional[EnergyLedger]:
    """The table's energy ledger E + D (EnergyLedger), or None when its roles give none."""
    if table is None or not getattr(table, "roles", None):
        return None
    terms = [(n, int(table.ledger_signs[n])) for n in (table.order or list(table.keys()))
             if n in table and table.ledger_signs.get(n)]
    ledger_cols = table.with_role("energy.ledger")
    column = ledger_cols[0] if ledger_cols else None
    if column is not None:
        balance = np.asarray(table[column], dtype=float)
    elif terms:
        balance = sum(sign * np.asarray(table[n], dtype=float) for n, sign in terms)
    else:
        return None
    named = column or (terms[0][0] if terms else "")
    return EnergyLedger(balance=np.asarray(balance, dtype=float), terms=terms, column=column,
                        unit=table.units.get(named, ""))


def energy_scale(table) -> float:
    """The run's energy scale, as the program's self-audit takes it (docs/audit.md): the largest over the rows of
    max(|E_total|, |T| + |V|) plus the magnitudes of the ledger's other terms (works, dissipated energies).  0 when
    the table has no energy roles."""
    def magnitude(names):
        return sum(np.abs(np.asarray(table[n], dtype=float)) for n in names)

    stored = [magnitude(table.with_role("energy.total"))]
    if table.with_role("energy.kinetic") and table.with_role("energy.potential"):
        stored.append(magnitude(table.with_role("energy.kinetic", "energy.potential")))
    parts = np.maximum(*stored) if len(stored) == 2 else stored[0]
    led = energy_ledger(table)
    parts = parts + magnitude([n for n, _ in led.terms if table.roles.get(n) != "energy.total"] if led else [])
    return float(np.nanmax(parts)) if np.size(parts) else 0.0


# --------------------------------------------------------------------------


def load(path, allow_incomplete: bool = False) -> RollsimResult:
    """Read a rollsim result file.

    Raises RollsimFileError if the file is missing, unreadable or not a rollsim
    file, and IncompleteFileError (a subclass) if its root attribute
    ``completed`` is 0 and ``allow_incomplete`` is False.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise RollsimFileError(path, "no such file")
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise RollsimFileError(path, f"cannot open as HDF5 ({exc})") from None
    with f:
        prov = _read_attrs(f)
        fmt = prov.get("format")
        if fmt is not None and fmt != FORMAT_NAME:
            raise RollsimFileError(path, f"not a rollsim file (format = {fmt!r})")
        if fmt is None and not any(k in f for k in GROUPS):
            raise RollsimFileError(path, "not a rollsim file (no 'format' attribute)")
        completed = prov.get("completed")
        if not completed and not allow_incomplete:
            status = prov.get("status")
            if completed is None:
                status = f"{status} (no 'completed' attribute)" if status else "no 'completed' attribute"
            raise IncompleteFileError(path, str(status if status is not None else "unknown"))

        scenario_attrs = _read_attrs(f["scenario"]) if "scenario" in f else {}
        toml_text = str(scenario_attrs.get("toml", ""))
        resolved_text = str(scenario_attrs.get("resolved", ""))

        def group(name):
            return _read_group(f[name]) if name in f and isinstance(f[name], h5py.Group) else None

        def attr_dict(name):
            if name not in f:
                return {}
            d = _read_attrs(f[name])
            # Datasets in these groups (if any) are included too.
            if isinstance(f[name], h5py.Group):
                for k, obj in f[name].items():
                    if isinstance(obj, h5py.Dataset):
                        d.setdefault(k, _read_dataset(obj))
            return d

        points = {}
        if "points" in f and isinstance(f["points"], h5py.Group):
            for name, g in f["points"].items():
                if isinstance(g, h5py.Group):
                    t = _read_group(g)
                    t.setdefault("trajectory", Table())
                    t.setdefault("events", Table())
                    points[int(t.attrs.get("index", int(name)))] = t
        trajectory = group("trajectory") or Table()
        events = group("events") or Table()
        sweep = group("sweep")
        result = RollsimResult(
            path=path,
            provenance=prov,
            scenario=toml_text,
            scenario_resolved=resolved_text,
            resolved=parse_resolved(resolved_text),
            trajectory=trajectory,
            events=events,
            summary=attr_dict("summary"),
            solver=attr_dict("solver"),
            linear=group("linear"),
            sweep=sweep,
            growth=group("growth"),
            formulations=group("formulations"),
            linear_sweep=group("linear_sweep"),
            points=dict(sorted(points.items())),
            _scene=_UNREAD if isinstance(f.get("scene"), h5py.Group) else None,
        )
    return result


if __name__ == "__main__":  # a quick look at a file: python3 -m rollsim.h5 FILE.h5
    import sys

    for p in sys.argv[1:]:
        r = load(p, allow_incomplete=True)
        print(f"{p}: model={r.model!r} title={r.title!r} completed={r.completed} status={r.status!r}")
        for gname in GROUPS:
            g = getattr(r, gname)
            if g:
                cols = ", ".join(f"{k}{list(np.shape(v))}" for k, v in g.items())
                print(f"  {gname}: {cols}")
        if r.points:
            print(f"  points: {len(r.points)} sweep trajectories, indices {min(r.points)}..{max(r.points)}")
        for gname in ("summary", "solver"):
            if getattr(r, gname):
                print(f"  {gname}: {getattr(r, gname)}")
