#!/usr/bin/python3
"""Checks that every `#include "rollsim/<module>/..."` in src/ and include/ points to the same or a lower layer.

The layer order and each layer's allowed includes are read from one place: the table of docs/architecture.md
whose header begins with "Layer" (bottom layer first; a row reads | `name` | holds | `lower`, `lower` |, or "-"
in the last column for a layer that includes no other). Every violation is printed as file:line: message;
the exit status is 1 when there is one, 2 when the table cannot be read, 0 otherwise.

Usage: check_layers.py [ROOT]   (ROOT: the source tree, default: two folders up from this file)
"""
import os
import re
import sys

DOC = os.path.join("docs", "architecture.md")
INCLUDE = re.compile(r'^\s*#\s*include\s*"rollsim/([A-Za-z0-9_]+)/')
NAME = re.compile(r"`([A-Za-z0-9_]+)`")
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".hpp.in")


class TableError(Exception):
    pass


def read_layers(root):
    """The layers bottom first, and for each the set of layers it may include, from docs/architecture.md."""
    path = os.path.join(root, DOC)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise TableError(f"{DOC}: cannot read the layer table: {e.strerror}")
    order, allowed, rows = [], {}, {}
    in_table = False
    for number, line in enumerate(lines, 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else None
        if not in_table:
            if cells and cells[0].lower() == "layer":
                in_table = True
            continue
        if cells is None:
            break
        if set(cells[0]) <= set("-: "):
            continue  # the separator row
        names = NAME.findall(cells[0])
        if len(names) != 1 or len(cells) < 3:
            raise TableError(f"{DOC}:{number}: a layer row reads | `name` | holds | `lower`, ... |; got: {line.strip()}")
        layer = names[0]
        if layer in allowed:
            raise TableError(f"{DOC}:{number}: layer `{layer}` is listed twice")
        order.append(layer)
        rows[layer] = number
        allowed[layer] = set(NAME.findall(cells[-1]))
    if not order:
        raise TableError(f"{DOC}: no layer table (a table whose header begins with | Layer |)")
    for layer, lower in allowed.items():
        for name in sorted(lower):
            if name not in allowed:
                raise TableError(f"{DOC}:{rows[layer]}: layer `{layer}` may include `{name}`, which is no layer")
            if order.index(name) >= order.index(layer):
                raise TableError(f"{DOC}:{rows[layer]}: layer `{layer}` may include `{name}`, which is not below it")
    return order, allowed


def source_files(root):
    """(layer, path relative to root) for every source file under src/<layer>/ and include/rollsim/<layer>/."""
    for base in (os.path.join(root, "src"), os.path.join(root, "include", "rollsim")):
        if not os.path.isdir(base):
            continue
        for entry in sorted(os.listdir(base)):
            folder = os.path.join(base, entry)
            if not os.path.isdir(folder):
                continue
            for dirpath, dirnames, filenames in os.walk(folder):
                dirnames.sort()
                for name in sorted(filenames):
                    if name.endswith(SOURCE_SUFFIXES):
                        yield entry, os.path.relpath(os.path.join(dirpath, name), root)


def check(root):
    """Violations as "file:line: message" strings, and the number of cross-layer includes seen."""
    order, allowed = read_layers(root)
    rank = {layer: i for i, layer in enumerate(order)}
    problems, crossing = [], 0
    unknown = set()
    for layer, rel in source_files(root):
        if layer not in rank:
            if layer not in unknown:
                unknown.add(layer)
                problems.append(f"{rel}:1: the folder `{layer}` is no layer of {DOC}; add it to the table")
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m or m.group(1) == layer:
                    continue
                target = m.group(1)
                crossing += 1
                if target not in rank:
                    problems.append(f"{rel}:{number}: includes rollsim/{target}/, which is no layer of {DOC}")
                elif rank[target] > rank[layer]:
                    problems.append(f"{rel}:{number}: upward include: layer `{layer}` includes `{target}`, "
                                    f"a higher layer ({' < '.join(order)})")
                elif target not in allowed[layer]:
                    problems.append(f"{rel}:{number}: layer `{layer}` includes `{target}`, which its row in "
                                    f"{DOC} does not list (it lists: {', '.join(sorted(allowed[layer])) or 'none'})")
    return problems, crossing


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        problems, crossing = check(root)
    except TableError as e:
        print(e, file=sys.stderr)
        return 2
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check_layers: {len(problems)} include(s) break the layer order of {DOC}", file=sys.stderr)
        return 1
    print(f"check_layers: {crossing} includes across layers, every one downward and listed in {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
