"""Upstream's NumPy goldens as a second oracle for the executor.

    python benchmarks/upstream_goldens.py --pto-isa-root /tmp/pto-isa [--ops tadd tmax] [--json out.json]

pto-isa generates the expected outputs of its hardware and simulator tests with NumPy scripts
(``tests/npu/a2a3/src/st/testcase/<op>/gen_data.py``, ``tests/npu/a5/...``, ``tests/cpu/st/testcase/...``).
For every op of the database with such a script this runs it from the checkout (nothing is copied:
the script runs in a scratch directory, which is read back and deleted),
maps each case to the op, the profile of the script's directory and a tile configuration (element
type from the arrays, valid region from the script's case parameters), runs the executor on the
same inputs and compares with the golden under the op's numerics.

Mapped: ops of the binary and unary elementwise kinds whose script writes one input file per
source tile and a ``golden`` file.  Everything else is counted as not mapped, with the reason.
Each disagreement is classified: ``spec-rejects`` (the validator calls the configuration illegal
on that profile), ``nan`` (only NaN positions differ), ``tolerance`` (within 1e-2 relative, outside
the op's tolerance) or ``value``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import runpy
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

from ptospec.asm.types import parse_descriptor
from ptospec.errors import PtospecError
from ptospec.executor import execute
from ptospec.loader import load_database
from ptospec.validator import validate

PLATFORMS = {"a2a3": "tests/npu/a2a3/src/st/testcase", "a5": "tests/npu/a5/src/st/testcase",
             "cpu": "tests/cpu/st/testcase"}
KINDS = {"binary-elementwise", "unary-elementwise"}


def run_script(path: Path) -> tuple[list[tuple[str, dict[str, bytes]]], list, str | None]:
    """Run one gen_data.py in a scratch directory; return the files each case directory received (in the
    order the script entered them), its case parameters (``case_params_list``) and an error, if any."""
    order: list[str] = []
    real_chdir = os.chdir

    def chdir(target):
        real_chdir(target)
        here = os.getcwd()
        if here not in order:
            order.append(here)

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        real_chdir(scratch)
        os.chdir = chdir
        helpers = [str(path.parent), *(str(p) for p in path.parents if (p / "utils.py").is_file())][:2]
        sys.path[:0] = helpers
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                found = runpy.run_path(str(path), run_name="__main__")
            error = None
        except BaseException as exc:  # a script's own failure is a result, not a crash of this tool
            found, error = {}, f"{type(exc).__name__}: {exc}"
        finally:
            os.chdir = real_chdir
            for entry in helpers:
                sys.path.remove(entry)
            real_chdir(here)
        cases = [(d, {f.stem: f.read_bytes() for f in Path(d).glob("*.bin")}) for d in order
                 if d != scratch and Path(d).is_dir()]
    params = list(found.get("case_params_list", []) or [])
    return [c for c in cases if c[1]], params, error


def _valid(param, shape: tuple[int, int]) -> tuple[int, int]:
    vr = getattr(param, "valid_row", None) or getattr(param, "h_valid", None) or shape[0]
    vc = getattr(param, "valid_col", None) or getattr(param, "w_valid", None) or shape[1]
    return int(vr), int(vc)


def _shape(param, size: int) -> tuple[int, int] | None:
    pairs = (("global_row", "global_col"), ("src_row", "src_col"), ("dst_row", "dst_col"), ("tile_row", "tile_col"),
             ("row", "col"), ("rows", "cols"), ("m", "n"))
    for rows_attr, cols_attr in pairs:
        rows, cols = getattr(param, rows_attr, None), getattr(param, cols_attr, None)
        if isinstance(rows, int) and isinstance(cols, int) and rows * cols == size:
            return rows, cols
    vr = getattr(param, "valid_row", None)
    if isinstance(vr, int) and vr and size % vr == 0:
        return vr, size // vr
    return None


def compare_case(db, op, mode, profile, files: dict[str, bytes], param) -> tuple[str, str]:
    """(outcome, detail): agree | spec-rejects | nan | tolerance | value | not-mapped."""
    dtype = getattr(param, "dtype", None)
    if dtype is None:
        return "not-mapped", "no element type in the case parameters"
    arrays = {k: np.frombuffer(v, dtype=np.dtype(dtype)) for k, v in files.items()}
    golden = arrays.get("golden")
    inputs = sorted(k for k in arrays if k.startswith("input"))
    sources = [o for o in mode.operands if o.role == "in"]
    if golden is None or len(inputs) != len(sources):
        return "not-mapped", f"files {sorted(arrays)} do not match the sources {[o.name for o in sources]}"
    shape = _shape(param, golden.size)
    if shape is None:
        return "not-mapped", "no tile shape in the case parameters"
    vr, vc = _valid(param, shape)
    names = {o.name: db.isa.dtypes and next((d for d, s in db.isa.dtypes.items()
                                             if np.dtype(s.numpy) == arrays[f].dtype), None)
             for o, f in zip(sources, inputs, strict=True)}
    out = next(o for o in mode.operands if o.role == "out")
    out_dtype = next((d for d, s in db.isa.dtypes.items() if np.dtype(s.numpy) == golden.dtype), None)
    if None in names.values() or out_dtype is None:
        return "not-mapped", f"element types {[arrays[f].dtype for f in inputs]} -> {golden.dtype}"
    data, tiles = {}, {}
    for o, f in zip(sources, inputs, strict=True):
        unit = max(1, 32 // arrays[f].dtype.itemsize)
        cols = -(-vc // unit) * unit
        tiles[o.name] = parse_descriptor(f"vec, {vr}x{cols}x{names[o.name]}, valid={vr}x{vc}", db.isa)
        arr = np.zeros((vr, cols), arrays[f].dtype)
        own = _shape(param, arrays[f].size)
        if own is None or own[0] < vr or own[1] < vc:
            return "not-mapped", f"{f} holds {arrays[f].size} elements, no {vr}x{vc} region in it"
        arr[:, :vc] = arrays[f].reshape(own)[:vr, :vc]
        data[o.name] = arr
    unit = max(1, 32 // golden.dtype.itemsize)
    tiles[out.name] = parse_descriptor(f"vec, {vr}x{-(-vc // unit) * unit}x{out_dtype}, valid={vr}x{vc}", db.isa)
    for o in mode.operands:  # scratch tiles do not change a result: the destination's shape, a legal type
        if o.role == "tmp":
            table = op.dtypes.get(profile)
            allowed = [d for r in (table.rows if table else ()) if mode.name in r.modes for d in r.types[o.dtype]]
            for dtype in dict.fromkeys([out_dtype, *allowed]):
                unit = max(1, 32 // db.isa.dtypes[dtype].bytes)
                tiles[o.name] = tiles[out.name].with_(dtype=dtype, cols=-(-vc // unit) * unit)
                if not any(v.rule.startswith("dtype.") for v in validate(db, op.name, mode.name, profile,
                                                                         tiles).violations):
                    break
    report = validate(db, op.name, mode.name, profile, tiles)
    if not report.ok:
        return "spec-rejects", "; ".join(v.one_line() for v in report.violations)
    with np.errstate(all="ignore"):
        got = execute(db, op.name, mode.name, profile, tiles, data)[out.name][:vr, :vc]
    want = golden.reshape(shape)[:vr, :vc]
    g, w = got.astype(np.float64), want.astype(np.float64)
    tol = op.numerics.tolerance.get(out_dtype)
    with np.errstate(all="ignore"):
        close = (g == w) | (np.isnan(g) & np.isnan(w))
        if tol is not None:
            close |= np.isclose(g, w, rtol=tol.rtol, atol=tol.atol)
    if close.all():
        return "agree", ""
    bad = ~close
    i, j = map(int, np.argwhere(bad)[0])
    detail = (f"{int(bad.sum())} of {bad.size} differ, first at [{i}, {j}]: executor {got[i, j]!r}, "
              f"golden {want[i, j]!r}")
    if (np.isnan(g[bad]) | np.isnan(w[bad])).all():
        return "nan", detail
    with np.errstate(all="ignore"):
        if np.isclose(g[bad], w[bad], rtol=1e-2, atol=1e-6).all():
            return "tolerance", detail
    return "value", detail


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pto-isa-root", required=True, type=Path)
    ap.add_argument("--specs", default=None)
    ap.add_argument("--ops", nargs="*", default=None)
    ap.add_argument("--json", type=Path, default=None, help="write every case's outcome here")
    args = ap.parse_args()
    db = load_database(args.specs) if args.specs else load_database()
    totals: Counter[str] = Counter()
    rows: list[dict] = []
    scripts = 0
    for op in sorted(db.ops.values(), key=lambda o: o.name):
        if args.ops and op.name not in args.ops:
            continue
        for profile, rel in PLATFORMS.items():
            script = args.pto_isa_root / rel / op.name / "gen_data.py"
            if not script.is_file():
                continue
            scripts += 1
            if op.kind not in KINDS:
                totals["not-mapped"] += 1
                rows.append({"op": op.name, "profile": profile, "outcome": "not-mapped",
                             "detail": f"kind {op.kind or 'none'} has no adapter"})
                continue
            cases, params, error = run_script(script)
            if error and not cases:
                totals["script-error"] += 1
                rows.append({"op": op.name, "profile": profile, "outcome": "script-error", "detail": error})
                continue
            mode = op.modes[0]
            for index, (case, files) in enumerate(cases):
                param = params[index] if index < len(params) else None
                try:
                    outcome, detail = compare_case(db, op, mode, profile, files, param)
                except PtospecError as exc:
                    outcome, detail = "not-mapped", exc.message
                except (ValueError, TypeError) as exc:  # parameters this adapter does not understand
                    outcome, detail = "not-mapped", f"{type(exc).__name__}: {exc}"
                totals[outcome] += 1
                rows.append({"op": op.name, "profile": profile, "case": Path(case).name, "outcome": outcome,
                             "detail": detail})
    ran = sum(v for k, v in totals.items() if k not in ("not-mapped", "script-error"))
    print(f"{scripts} gen_data.py scripts for database ops; {ran} golden cases compared: "
          + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())))
    for row in rows:
        if row["outcome"] not in ("agree",):
            print(f"  {row['outcome']:<12} {row['op']:<10} {row['profile']:<5} {row.get('case', '')}: {row['detail']}")
    if args.json:
        args.json.write_text(json.dumps({"totals": dict(totals), "cases": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
