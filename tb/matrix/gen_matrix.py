#!/usr/bin/python3
"""tb/matrix: writes the scenarios of the fault matrix and the access-
violation matrix (issue 20) into a directory, with a manifest of what each
cell must show.

  gen_matrix.py --matrix fault|access|all --out DIR [--only SUBSTRING]

writes DIR/<cell>.yaml for each cell and DIR/manifest.json (a list of the
cells: matrix, row and column, position, opcode, file, and the expected
fault records or answers and fatal codes). check_matrix.py calls it at test
time and runs the files; nothing generated is checked in. The cells are
defined in fault_cells.py and access_cells.py; the spec values they use in
matrix_lib.py.
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import access_cells  # noqa: E402
import fault_cells  # noqa: E402


def all_cells(matrix):
    cells = []
    if matrix in ("fault", "all"):
        cells += fault_cells.cells()
    if matrix in ("access", "all"):
        cells += access_cells.cells()
    names = [c["name"] for c in cells]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SystemExit(f"gen_matrix: duplicate cell names {sorted(dup)}")
    return cells


def write(cells, out):
    os.makedirs(out, exist_ok=True)
    manifest = []
    for c in cells:
        path = os.path.join(out, c["name"] + ".yaml")
        with open(path, "w") as f:
            f.write(c["text"])
        entry = {k: v for k, v in c.items() if k != "text"}
        entry["file"] = path
        manifest.append(entry)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matrix", choices=["fault", "access", "all"], default="all")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="keep the cells whose name contains this")
    a = ap.parse_args()
    cells = [c for c in all_cells(a.matrix) if a.only in c["name"]]
    write(cells, a.out)
    print(f"{len(cells)} scenarios in {a.out}")


if __name__ == "__main__":
    main()
