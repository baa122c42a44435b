"""Speed figures of the conformance machinery, in one run:

1. `ptospec gen-tests --force` over the whole database (into a temporary directory, as a subprocess), with
   the number of generated cases per kind, the rules left without a must-reject case, and how many
   (op, mode, profile) units are searched (the others share a search: ``cases.search_signature``);
2. the committed suite's fixed cases on the reference backend (cases/s, without pytest's own overhead);
3. with `--pytest`: the README's test command, `python3 -m pytest tests generated_tests`, timed as a
   subprocess, with its ten slowest tests.

Times are wall clock and CPU (user + system of the command and every process it waited for: gen-tests'
workers, the browser test's Chromium): on a shared machine the wall clock depends on the load, the CPU
time much less.

    python benchmarks/conformance.py [--specs DIR] [--ops tmax,tcmp] [--repeat N] [--no-gen] [--pytest]

`--ops` limits step 2; steps 1 and 3 always cover everything.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ptospec.conformance.cases import case_units, search_signature
from ptospec.conformance.reference import ReferenceBackend
from ptospec.conformance.runner import Runner
from ptospec.loader import load_database

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "generated_tests"
COUNTS = re.compile(r"^# (\d+) positive cases, (\d+) must-reject cases, (\d+) property tests\.$", re.M)
GEN_TARGET_S = 10  # gen-tests --force, wall seconds on the idle 2-core machine (issue 30, item 5)
UNCOVERED = re.compile(r"^# Rules without a must-reject case: (.*)$", re.M)


def suite_cases(name: str, suite: Path = SUITE) -> list:
    spec = importlib.util.spec_from_file_location(f"generated_{name}", suite / f"test_{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [p.values[0] for p in (*module.POSITIVE, *module.MUST_REJECT)]


def suite_counts(suite: Path) -> tuple[list[int], int]:
    """(positive, must-reject, property) totals and the number of (op, rule) pairs without a must-reject case,
    read from the generated modules' headers."""
    totals, uncovered = [0, 0, 0], 0
    for path in sorted(suite.glob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        match = COUNTS.search(text)
        if match:
            totals = [t + int(n) for t, n in zip(totals, match.groups(), strict=True)]
        rules = UNCOVERED.search(text)
        if rules and rules.group(1) != "none":
            uncovered += len(rules.group(1).split(", "))
    return totals, uncovered


def timed(command: list[str]) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run ``command`` from the repository root: (the process, wall seconds, CPU seconds of it and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def machine() -> str:
    return f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}"


def bench_gen(specs: str | None, repeat: int) -> None:
    walls, cpus = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            args = (["--specs", specs] if specs else []) + ["gen-tests", "--force", "--out", tmp]
            proc, wall, cpu = timed([sys.executable, "-m", "ptospec.cli", *args])
            if proc.returncode != 0:
                sys.exit(f"gen-tests failed:\n{proc.stdout}{proc.stderr}")
            walls.append(wall)
            cpus.append(cpu)
            (pos, rej, prop), uncovered = suite_counts(Path(tmp))
    print(f"gen-tests --force (whole database): wall {min(walls):.1f} s, CPU {min(cpus):.1f} s (best of {repeat}, "
          f"median wall {statistics.median(walls):.1f} s; {machine()}; target: wall {GEN_TARGET_S:.0f} s on an idle "
          f"2-core machine): {pos} positive, {rej} must-reject cases, {prop} property tests; "
          f"{uncovered} (op, rule) pairs without a must-reject case")
    db = load_database(specs)
    units = [(op, mode, profile) for op in db.ops.values() for mode, profile in case_units(db, op)]
    searched = len({search_signature(db, *unit) for unit in units})
    print(f"case searches: {searched} of {len(units)} (op, mode, profile) units; the other "
          f"{len(units) - searched} take the cases of a unit whose search reads the same")


def bench_reference(specs: str | None, ops: str | None) -> None:
    start = time.perf_counter()
    db = load_database(specs)
    print(f"database load: {time.perf_counter() - start:.2f} s ({len(db.ops)} ops)")
    names = ops.split(",") if ops else sorted(db.ops)
    cases = [c for n in names for c in suite_cases(n)]
    runner = Runner(db, ReferenceBackend(db), "reference")
    start = time.perf_counter()
    for case in cases:
        runner.check(case)
    elapsed = time.perf_counter() - start
    positive = sum(1 for c in cases if not c.reject)
    print(f"cases: {len(cases)} ({positive} positive, {len(cases) - positive} must-reject) over {len(names)} ops")
    print(f"run on reference: {elapsed:.2f} s, {len(cases) / elapsed:.0f} cases/s")


def bench_pytest() -> None:
    command = [sys.executable, "-m", "pytest", "tests", "generated_tests", "--durations=10", "-p", "no:cacheprovider"]
    proc, wall, cpu = timed(command)
    lines = proc.stdout.splitlines()
    summary = next((line.strip("= ") for line in reversed(lines) if " passed" in line or " failed" in line), "")
    print(f"README test command (python3 -m pytest tests generated_tests): wall {wall:.1f} s, CPU {cpu:.1f} s "
          f"({machine()}), exit {proc.returncode}, {summary}")
    slowest = [line for line in lines if re.match(r"^\d+\.\d+s (call|setup|teardown) ", line)]
    print("ten slowest:")
    for line in slowest[:10]:
        print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", default=None)
    parser.add_argument("--ops", default=None, help="comma-separated ops for the reference run (default: all)")
    parser.add_argument("--repeat", type=int, default=1, help="gen-tests runs (the best is shown)")
    parser.add_argument("--no-gen", action="store_true", help="do not time gen-tests")
    parser.add_argument("--pytest", action="store_true",
                        help="also time the README test command (minutes) and show its ten slowest tests")
    args = parser.parse_args()
    if not args.no_gen:
        bench_gen(args.specs, args.repeat)
    bench_reference(args.specs, args.ops)
    if args.pytest:
        bench_pytest()


if __name__ == "__main__":
    main()
