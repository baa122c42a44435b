"""Figures of the PTO assembler as a backend: verifier cases per second (must-reject cases, one module each),
positive cases verified per second (batched modules), the whole verifier table for every instruction with
an assembler operation, and the lowering backend's positive cases verified per second, cold (an empty build
cache) and warm (the same run again).

    python benchmarks/ptoas.py --ptoas PATH [--ops tadd tcmp ...] [--jobs N] [--batch N] [--no-table]
                               [--lowering --pto-isa-root PTO_ISA [--derived N]]

A single-process sample (the same cases through ``ptoas`` one by one, and batched) separates ptoas's own start-up
from the batching.  The whole table is ``ptospec ptoas verify-table`` in a separate process, timed from outside
(loading the database and the generated suite included).  Targets of the issue, printed with the figures: every
must-reject case through the verifier in at most 10 minutes, every positive fixed case of the instructions with
an operation through the lowering backend in at most 15 minutes cold, on the 2-core machine.  Run it on an idle machine
for figures worth quoting (the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptospec.backends.ptoas.discover import find_ptoas  # noqa: E402
from ptospec.backends.ptoas.module import NotExpressible, case_function  # noqa: E402
from ptospec.backends.ptoas.spec import load_ptoas_spec  # noqa: E402
from ptospec.backends.ptoas.table import suite_cases  # noqa: E402
from ptospec.backends.ptoas.verifier import Job, verify_all  # noqa: E402
from ptospec.dbcache import load_database_cached  # noqa: E402

TABLE_TARGET_S = 600
LOWERING_TARGET_S = 900


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ptoas", default=None)
    ap.add_argument("--ops", nargs="+", default=["tadd", "tcmp", "trowmax", "tload", "tmatmul", "tcvt"])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--batch", type=int, default=40)
    ap.add_argument("--no-table", action="store_true", help="skip the whole verifier table")
    ap.add_argument("--lowering", action="store_true",
                    help="also time the lowering backend on --ops, cold (a fresh build cache) and warm")
    ap.add_argument("--pto-isa-root", default=os.environ.get("PTO_ISA_ROOT"), help="pto-isa checkout (--lowering)")
    ap.add_argument("--derived", type=int, default=0, help="derived cases per fixed case (--lowering; default 0)")
    args = ap.parse_args()
    if args.lowering and not args.pto_isa_root:
        ap.error("--lowering needs --pto-isa-root (or $PTO_ISA_ROOT)")
    db = load_database_cached()
    spec = load_ptoas_spec(db)
    ptoas = find_ptoas(spec, args.ptoas)
    print(f"{ptoas.path} (ptoas {ptoas.version_text}); load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs")
    by_arch: dict[str, dict[str, list[Job]]] = {}
    for k, (_, case) in enumerate(suite_cases(ROOT / "generated_tests", args.ops)):
        if case.profile not in spec.arch:
            continue
        op = db.ops[case.op]
        mode = next(m for m in op.modes if m.name == case.mode)
        try:
            fn = case_function(db, spec, op, mode, case.parsed(db), f"case{k}")
        except NotExpressible:
            continue
        kinds = by_arch.setdefault(spec.arch[case.profile], {"reject": [], "positive": []})
        kinds[case.kind].append(Job(k, fn, alone=case.kind == "reject"))
    for kind in ("reject", "positive"):
        n, runs, t0 = 0, [], time.perf_counter()
        for arch, kinds in by_arch.items():
            verify_all(ptoas.path, arch, kinds[kind], args.jobs, args.batch, runs=runs)
            n += len(kinds[kind])
        dt = time.perf_counter() - t0
        print(f"{kind:>8} cases of {', '.join(args.ops)}: {n} in {dt:.1f} s = {n / dt:.1f} cases/s "
              f"({len(runs)} ptoas runs, {args.jobs} at a time)")
    if args.lowering:
        lowering(ptoas.path, args)
    if args.no_table:
        return 0
    out = ROOT / "build" / "ptoas-bench"
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", "import sys; from ptospec.cli import main; sys.exit(main())",
                           "ptoas", "verify-table", "--ptoas", ptoas.path, "--report-dir", str(out),
                           "--jobs", str(args.jobs), "--batch", str(args.batch)],
                          cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    print(proc.stdout.strip().splitlines()[-2] if proc.stdout.strip() else proc.stderr.strip()[-500:])
    print(f"whole verifier table: {dt:.0f} s wall (target for the must-reject cases: {TABLE_TARGET_S} s)")
    return proc.returncode


def lowering(ptoas: str, args) -> None:
    """``ptospec conformance --backend ptoas`` on --ops, twice on one fresh build cache: cold, then warm."""
    with tempfile.TemporaryDirectory(prefix="ptoas-bench-cache-") as cache:
        for label in ("cold", "warm"):
            out = ROOT / "build" / f"ptoas-bench-lowering-{label}"
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", "import sys; from ptospec.cli import main; sys.exit(main())",
                                   "conformance", "--backend", "ptoas", "--ptoas", ptoas, "--pto-isa-root",
                                   args.pto_isa_root, "--ops", *args.ops, "--derived", str(args.derived),
                                   "--jobs", str(args.jobs), "--cache-dir", cache, "--report-dir", str(out)],
                                  cwd=ROOT, capture_output=True, text=True)
            dt = time.perf_counter() - t0
            report = out / "report.json"
            if proc.returncode not in (0, 1) or not report.is_file():
                print(f"lowering backend ({label}) failed: {proc.stderr.strip()[-500:]}")
                return
            stats = json.loads(report.read_text())["stats"]
            n = stats["cases_verified"]
            print(f"lowering backend {label}: {n} cases verified ({args.derived} derived per fixed case) in "
                  f"{dt:.0f} s wall = {n / dt:.1f} cases/s; {stats.get('compiles', 0)} compiles "
                  f"(target for every positive fixed case, cold: {LOWERING_TARGET_S} s)")


if __name__ == "__main__":
    sys.exit(main())
