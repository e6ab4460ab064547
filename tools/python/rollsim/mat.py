"""Convert a rollsim HDF5 result file into a MATLAB v5 .mat file.

    tools/h5tomat FILE.h5 OUT.mat [--allow-incomplete] [-q]

On success it prints one line, "wrote OUT.mat (VARIABLES)", naming the variables that hold data (-q: nothing).

The .mat file holds one variable per part of the result file, each a struct:

    trajectory, events, summary, solver, linear, sweep, growth,
    formulations (rollsim check formulations -o),
    points (sweep trajectories: points.p000012 is point 12, with index,
            status, overrides, trajectory, events),
    provenance (root attributes), scenario (toml, resolved),
    units and descriptions (per group: field -> unit / description text),
    roles, contacts and ledger (per group: field -> the dataset's role,
            contact and ledger sign; docs/python.md, "Signal roles"),
    meta (source_file, format_version, orientation, renamed)

Groups the file does not have are stored as [] (test with isempty).

Orientation: 1-D datasets become column vectors (N x 1).  2-D datasets keep
the C / h5py meaning of their indices: MATLAB A(i,j) equals h5py A[i, j]
(0-based there), e.g. linear.eigenvectors_real(:, j) is eigenvector j.  No
transposing is needed after load() -- unlike h5read on the HDF5 file, which
returns the transpose (see tools/matlab/rollsim_load.m).

Strings become char arrays; string datasets (events.kind, sweep.classification,
...) become N x 1 cell arrays of char.  Names that are not valid MATLAB field
names (e.g. the sweep column "initial.x") are changed like
matlab.lang.makeValidName does ("initial_x"); meta.renamed lists every change
as rows {original, field}.
"""

import argparse
import os
import re
import sys

import numpy as np

from . import h5

ORIENTATION = (
    "1-D datasets are N x 1 column vectors. 2-D datasets keep the C/h5py index meaning: "
    "A(i,j) here equals A[i-1, j-1] in h5py, so eigenvectors_real(:,j) is eigenvector j. "
    "Strings are char arrays; string datasets are N x 1 cell arrays."
)

NAMELENGTHMAX = 63


class _Names:
    """Valid, unique MATLAB field names, remembering every change."""

    def __init__(self):
        self.renamed = []  # (original path, new path)

    def field(self, name, taken, where):
        new = re.sub(r"[^A-Za-z0-9_]", "_", str(name))
        if not new or not new[0].isalpha():
            new = "x" + new
        new = new[:NAMELENGTHMAX]
        base, k = new, 1
        while new in taken:
            k += 1
            suffix = f"_{k}"
            new = base[:NAMELENGTHMAX - len(suffix)] + suffix
        if new != name:
            self.renamed.append((f"{where}{name}", f"{where}{new}"))
        return new


def _value(v):
    """A value as savemat should store it."""
    if v is None:
        return np.zeros((0, 0))
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return np.array([[bool(v)]])
    if isinstance(v, (int, float, np.integer, np.floating)):
        return v
    if isinstance(v, (list, tuple)):
        v = np.asarray(v)
    if isinstance(v, np.ndarray):
        if v.dtype.kind in "UOS":
            cells = np.empty(v.shape, dtype=object)
            for idx, s in np.ndenumerate(v):
                cells[idx] = s.decode() if isinstance(s, bytes) else str(s)
            if cells.ndim == 0:
                return cells.item()
            return cells.reshape(-1, 1) if cells.ndim == 1 else cells
        if v.ndim == 1:
            return v.reshape(-1, 1)
        if v.ndim == 0:
            return v.item()
        return v  # 2-D: savemat keeps A[i, j] as A(i+1, j+1)
    return v


def _struct(d, names, where):
    """A dict (maybe nested) with valid field names; empty dicts become []."""
    if d is None:
        return np.zeros((0, 0))
    out = {}
    for k, v in d.items():
        key = names.field(k, out, where)
        out[key] = _struct(v, names, f"{where}{key}.") if isinstance(v, dict) else _value(v)
    return out if out else np.zeros((0, 0))


# The per-dataset attributes kept as variables of their own: variable -> the Table's map.
META = {"units": "units", "descriptions": "descriptions", "roles": "roles", "contacts": "contacts",
        "ledger": "ledger_signs"}


def _meta_table(table, attr):
    """For every dataset of a Table (recursively) its attribute `attr` (a Table map: units, descriptions, roles,
    contacts, ledger_signs)."""
    if table is None:
        return None
    out = {}
    for k, v in table.items():
        if isinstance(v, dict):
            sub = _meta_table(v, attr)
            if sub:
                out[k] = sub
        else:
            m = getattr(table, attr)
            if k in m:
                out[k] = m[k]
    return out


def _group_attrs(table):
    return dict(table.attrs) if table is not None else {}


def convert(result):
    """The variables of the .mat file, as a dict for scipy.io.savemat."""
    names = _Names()
    groups = {"summary": result.summary, "solver": result.solver, **{g: getattr(result, g) for g in h5.GROUPS}}
    out = {name: _struct(g, names, f"{name}.") for name, g in groups.items()}
    out["points"] = _struct({f"p{i:06d}": {**p.attrs, "trajectory": p["trajectory"], "events": p["events"]}
                             for i, p in result.points.items()}, names, "points.")
    out["provenance"] = _struct(result.provenance, names, "provenance.")
    out["scenario"] = {"toml": result.scenario, "resolved": result.scenario_resolved}
    for var, attr in META.items():
        tables = {g: _meta_table(groups[g], attr) for g in h5.GROUPS}
        out[var] = _struct({g: t for g, t in tables.items() if t}, _Names(), f"{var}.")
    out["group_attributes"] = _struct(
        {g: _group_attrs(groups[g]) for g in h5.GROUPS if groups[g] is not None and groups[g].attrs},
        _Names(), "group_attributes.")
    renamed = np.empty((len(names.renamed), 2), dtype=object)
    for i, (a, b) in enumerate(names.renamed):
        renamed[i, 0], renamed[i, 1] = a, b
    out["meta"] = {
        "source_file": os.path.abspath(result.path),
        "format_version": result.format_version,
        "orientation": ORIENTATION,
        "renamed": renamed if len(names.renamed) else np.zeros((0, 2)),
    }
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="h5tomat", description="Convert a rollsim HDF5 result file to MATLAB .mat (v5).")
    ap.add_argument("file", help="rollsim result file (.h5)")
    ap.add_argument("output", help="the .mat file to write")
    ap.add_argument("--allow-incomplete", action="store_true",
                    help="convert a file whose run did not complete (root attribute completed = 0)")
    ap.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    args = ap.parse_args(argv)

    import scipy.io

    try:
        result = h5.load(args.file, allow_incomplete=args.allow_incomplete)
    except h5.IncompleteFileError as exc:
        print(f"h5tomat: error: {exc}\nh5tomat: use --allow-incomplete to convert it anyway", file=sys.stderr)
        return 2
    except (h5.RollsimFileError, OSError) as exc:
        print(f"h5tomat: error: {exc}", file=sys.stderr)
        return 2
    variables = convert(result)
    try:
        scipy.io.savemat(args.output, variables, format="5", long_field_names=True,
                         do_compression=True, oned_as="column")
    except OSError as exc:
        print(f"h5tomat: error: cannot write {args.output}: {exc}", file=sys.stderr)
        return 2
    if not args.quiet:
        held = [k for k, v in variables.items() if not _empty(v)]
        print(f"wrote {args.output} ({', '.join(held)})")
    return 0


def _empty(value) -> bool:
    """A variable stored as [] (a group the file does not have) or as an empty struct."""
    return value is None or (hasattr(value, "__len__") and len(value) == 0)


if __name__ == "__main__":
    sys.exit(main())
