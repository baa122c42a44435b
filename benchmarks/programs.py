"""Programs of the PTO assembler's repository through ptospec: how many are read, check clean, run.

    python benchmarks/programs.py --ptoas-root PATH [--list]

Reads every ``.pto`` file under ``test/`` and ``docs/`` of a checkout of hw-native-sys/PTOAS (nothing is
copied from it), checks each with ``check_program`` and runs the ones whose every instruction is in the
database and legal, on random inputs: pointer arguments get buffers as large as their tensor views reach
(programs whose views have sizes only known at run time are listed as not run), scalar arguments the
value 1.  Prints the counts, the reasons programs are not clean or not run, and the interpreter's speed.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

import numpy as np

from ptospec.errors import PtospecError
from ptospec.executor import numpy_dtype
from ptospec.loader import load_database
from ptospec.program.api import check_program, entry_function, read_program, run_program
from ptospec.program.walker import Walker, func_signature, pointer_type


def _inputs(db, program, profile, extents, rng):
    probe = Walker(db, program, profile, check=False)
    entry = entry_function(probe, program, None)
    args = {}
    for name, ty in func_signature(probe, entry):
        short = name[1:]
        dtype = pointer_type(ty)
        if dtype is None:
            args[short] = 1
            continue
        if short not in extents:
            return None, f"buffer size known only at run time ({name})"
        dt = numpy_dtype(db, dtype)
        size = extents[short]
        if dt.kind == "f" or dt.kind == "V":
            data = rng.standard_normal(size).astype(np.float32).astype(dt)
        elif dt.kind in "iu":
            data = rng.integers(0, 8, size).astype(dt)
        else:
            data = rng.integers(0, 2, size).astype(dt)
        args[short] = data
    return args, ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ptoas-root", required=True, help="checkout of hw-native-sys/PTOAS")
    ap.add_argument("--list", action="store_true", help="name every program that is not clean or not run")
    args = ap.parse_args()
    root = Path(args.ptoas_root)
    files = sorted(p for sub in ("test", "docs") for p in (root / sub).rglob("*.pto"))
    if not files:
        print(f"no .pto files under {root}/test or {root}/docs")
        return 2
    db = load_database(None)
    rng = np.random.default_rng(0)
    read = clean = covered = ran = 0
    why_not_read: Counter = Counter()
    rules: Counter = Counter()
    unknown: Counter = Counter()
    not_run: Counter = Counter()
    statements = instructions = 0
    run_seconds = 0.0
    check_seconds = 0.0
    largest = None
    for path in files:
        try:
            program = read_program(path)
        except PtospecError as exc:
            why_not_read[exc.rule] += 1
            if args.list:
                print(f"not read: {exc}")
            continue
        read += 1
        t0 = time.perf_counter()
        try:
            result = check_program(db, program)
        except PtospecError as exc:
            why_not_read[exc.rule] += 1
            if args.list:
                print(f"not checked: {exc}")
            continue
        check_seconds += time.perf_counter() - t0
        rules.update({f.rule for f in result.violations})
        unknown.update(result.stats.unknown)
        if result.violations:
            if args.list:
                print(f"violations: {path}: {', '.join(sorted({f.rule for f in result.violations}))}")
            continue
        clean += 1
        if result.stats.unknown:
            continue
        covered += 1
        try:
            inputs, reason = _inputs(db, program, result.profile, result.extents, rng)
        except PtospecError as exc:
            inputs, reason = None, exc.rule or "error"
        if inputs is None:
            not_run[reason.split(" (")[0]] += 1
            if args.list:
                print(f"not run: {path}: {reason}")
            continue
        try:
            out = run_program(db, program, inputs, result.profile)
        except PtospecError as exc:
            not_run[exc.rule or "error"] += 1
            if args.list:
                print(f"run stopped: {exc}")
            continue
        ran += 1
        statements += out.stats.statements
        instructions += out.stats.instructions
        run_seconds += out.seconds
        if largest is None or out.stats.statements > largest[1]:
            largest = (path, out.stats.statements, out.stats.instructions, out.seconds)
    print(f"programs under {root}/test and {root}/docs: {len(files)}")
    print(f"  read without error: {read}" + (f" (not read: {dict(why_not_read)})" if why_not_read else ""))
    print(f"  check clean (no violation): {clean}; of these, every instruction in the database: {covered}")
    print(f"  run on random inputs: {ran}" + (f" (not run: {dict(not_run)})" if not_run else ""))
    print(f"  check time: {check_seconds:.2f} s for {read} programs")
    if statements:
        print(f"  interpreted: {statements} statements ({instructions} database instructions) in {run_seconds:.2f} s "
              f"= {statements / run_seconds:,.0f} statements/s")
    if largest:
        print(f"  largest run: {largest[0]}: {largest[1]} statements, {largest[2]} instructions, {largest[3]:.3f} s")
    print("  violations by rule (programs): " + ", ".join(f"{r} {n}" for r, n in rules.most_common()))
    print("  statements whose instruction is not in the database: "
          + ", ".join(f"{r} {n}" for r, n in unknown.most_common(15)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
