"""Programs of the PTO assembler's repository through ptospec: how many are read, check clean, run.

    python benchmarks/programs.py --ptoas-root PATH [--list] [--check-only]

Reads every ``.pto`` file under ``test/``, ``docs/`` and ``tools/`` of a checkout of hw-native-sys/PTOAS
(nothing is copied from it), each with the target and build level of its own ``// RUN: ptoas`` line
(``--pto-arch``, ``--pto-level``, ``--enable-insert-sync``), and checks it with ``check_program``:

* *not read*: the file does not parse, a statement is not an instruction ptospec reads (one of the database,
  the program layer or the dialect), or the line of an instruction does not parse (``asm.*``, ``*.syntax``,
  ``program.unsupported``, ``program.type``);
* *read*: every statement read; *clean*: read, and no rule broken; *findings*: per rule, the read programs
  that break it;
* *expected rejects*: the files the assembler's own tests expect it to refuse (a ``RUN: not ptoas`` line, or
  a ``CHECK: error:`` line), checked with that line's flags: how many ptospec flags with a violation.

Without ``--check-only`` it then runs the clean programs on random inputs: pointer arguments get buffers as
large as their tensor views reach (programs whose views have sizes only known at run time are listed as not
run), scalar arguments the value 1; and prints the interpreter's speed.
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter
from pathlib import Path

import numpy as np

from ptospec.errors import PtospecError
from ptospec.executor import numpy_dtype
from ptospec.loader import load_database
from ptospec.program.api import buffer_argument, check_program, entry_function, read_program, run_program
from ptospec.program.walker import Walker, func_signature


def _inputs(db, program, profile, extents, rng):
    probe = Walker(db, program, profile, check=False)
    entry = entry_function(probe, program, None)
    args = {}
    for name, ty in func_signature(probe, entry):
        short = name[1:]
        found = buffer_argument(db, ty)
        dtype = found[0] if found else None
        if dtype is None:  # a scalar (1), or a struct passed as a vector (struct_values): its fields, zeros
            struct = probe.spec.struct_values.get(ty)
            args[short] = np.zeros(struct[1], np.int16) if struct else 1
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


READING = ("asm.", "program.syntax", "tile.syntax", "program.unsupported", "program.type", "program.undefined",
           "program.results", "program.layout")
_RUN = re.compile(r"^//\s*RUN:(.*)$", re.M)


def _run_flags(text: str) -> tuple[dict[str, str], bool]:
    """The flags of the file's RUN line (the rejecting one when there is one) and whether the assembler's
    tests expect it to refuse the file."""
    lines = _RUN.findall(text)
    rejecting = [line for line in lines if re.search(r"\bnot\s+ptoas\b", line)]
    expected_reject = bool(rejecting) or bool(re.search(r"^//\s*CHECK[-A-Z]*:\s*error:", text, re.M))
    line = (rejecting or lines or [""])[0]
    flags = {}
    if m := re.search(r"--pto-arch[= ](\w+)", line):
        flags["arch"] = m.group(1)
    if m := re.search(r"--pto-level[= ]level(\d)", line):
        flags["level"] = m.group(1)
    if re.search(r"--enable-insert-sync\b", line):
        flags["insert_sync"] = "1"
    return flags, expected_reject


def _not_read(result) -> str | None:
    """Why a checked program counts as not read (None: read)."""
    bad = sorted({f.rule for f in result.violations if f.rule.startswith(READING)})
    if bad:
        return bad[0]
    if result.stats.unknown:
        return "unknown:" + min(result.stats.unknown)
    return None


def check_corpus(db, files: list[Path], listing: bool) -> dict:
    """Check every file with its RUN line's flags: the figures of the module docstring."""
    from ptospec.program.spec import program_spec

    targets = program_spec(db).targets
    figures = {"not_read": Counter(), "read": 0, "clean": 0, "rules": Counter(), "rejects": 0,
               "rejects_flagged": [], "rejects_missed": [], "accepted_findings": {}, "seconds": 0.0, "results": {}}
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        flags, reject = _run_flags(text)
        profile = targets.get(flags.get("arch", ""), None)
        level = int(flags["level"]) if "level" in flags else None
        figures["rejects"] += reject
        t0 = time.perf_counter()
        try:
            result = check_program(db, read_program(path), profile, level=level,
                                   insert_sync="insert_sync" in flags)
        except PtospecError as exc:
            result = None
            why = exc.rule or "error"
        figures["seconds"] += time.perf_counter() - t0
        figures["results"][path] = result
        if reject:
            flagged = result is None or bool(result.violations)
            figures["rejects_flagged" if flagged else "rejects_missed"].append(path)
        if result is None or (why := _not_read(result)):
            figures["not_read"][why] += 1
            if listing:
                print(f"not read: {path}: {why}")
            continue
        figures["read"] += 1
        rules = sorted({f.rule for f in result.violations})
        figures["rules"].update(rules)
        if not rules:
            figures["clean"] += 1
        elif not reject:
            figures["accepted_findings"][path] = [f.one_line() for f in result.violations]
        if listing and rules:
            print(f"violations{' (expected reject)' if reject else ''}: {path}: {', '.join(rules)}")
    return figures


def print_corpus(root: Path, files: list[Path], figures: dict) -> None:
    not_read = figures["not_read"]
    print(f"programs under {root} (test, docs, tools): {len(files)}, checked in {figures['seconds']:.1f} s")
    print(f"  not read: {sum(not_read.values())}" + (f" ({', '.join(f'{k} {n}' for k, n in not_read.most_common())})"
                                                      if not_read else ""))
    print(f"  read: {figures['read']}; clean: {figures['clean']}")
    print("  findings by rule (read programs): "
          + (", ".join(f"{r} {n}" for r, n in figures["rules"].most_common()) or "none"))
    print(f"  expected rejects (the assembler's tests expect it to refuse them): {figures['rejects']}, flagged: "
          f"{len(figures['rejects_flagged'])}"
          + (f"; missed: {', '.join(str(p.relative_to(root)) for p in figures['rejects_missed'])}"
             if figures["rejects_missed"] else ""))
    accepted = figures["accepted_findings"]
    print(f"  read programs the assembler accepts with findings: {len(accepted)}")
    for path, lines in accepted.items():
        print(f"    {path.relative_to(root)}: {lines[0]}" + (f" (+{len(lines) - 1})" if len(lines) > 1 else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ptoas-root", required=True, help="checkout of hw-native-sys/PTOAS")
    ap.add_argument("--list", action="store_true", help="name every program that is not clean or not run")
    ap.add_argument("--check-only", action="store_true", help="check the corpus and print its figures; run nothing")
    args = ap.parse_args()
    root = Path(args.ptoas_root)
    files = sorted(p for sub in ("test", "docs", "tools") for p in (root / sub).rglob("*.pto"))
    if not files:
        print(f"no .pto files under {root}/test, {root}/docs or {root}/tools")
        return 2
    db = load_database(None)
    figures = check_corpus(db, files, args.list)
    print_corpus(root, files, figures)
    if args.check_only:
        return 0
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
