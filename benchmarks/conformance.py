"""Speed figures of the conformance machinery, in one run:

1. `ptospec gen-tests --force` over the whole database (into a temporary directory), with the number of
   generated cases per kind and the rules left without a must-reject case;
2. the committed suite's fixed cases on the reference backend (cases/s, without pytest's own overhead);
3. the README's test command, `python3 -m pytest tests generated_tests`, timed as a subprocess, with its
   ten slowest tests.

    python benchmarks/conformance.py [--specs DIR] [--ops tmax,tcmp] [--no-gen] [--no-pytest]

`--ops` limits step 2; steps 1 and 3 always cover everything.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ptospec.cli import main as ptospec_main
from ptospec.conformance.reference import ReferenceBackend
from ptospec.conformance.runner import Runner
from ptospec.loader import load_database

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "generated_tests"
COUNTS = re.compile(r"^# (\d+) positive cases, (\d+) must-reject cases, (\d+) property tests\.$", re.M)
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


def bench_gen(specs: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        args = (["--specs", specs] if specs else []) + ["gen-tests", "--force", "--out", tmp]
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):  # progress
            ptospec_main(args)
        elapsed = time.perf_counter() - start
        (pos, rej, prop), uncovered = suite_counts(Path(tmp))
    print(f"gen-tests --force (whole database): {elapsed:.1f} s: {pos} positive, {rej} must-reject cases, "
          f"{prop} property tests; {uncovered} (op, rule) pairs without a must-reject case")


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
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    lines = proc.stdout.splitlines()
    summary = next((line.strip("= ") for line in reversed(lines) if " passed" in line or " failed" in line), "")
    print(f"README test command (python3 -m pytest tests generated_tests): {elapsed:.1f} s, exit {proc.returncode}, "
          f"{summary}")
    slowest = [line for line in lines if re.match(r"^\d+\.\d+s (call|setup|teardown) ", line)]
    print("ten slowest:")
    for line in slowest[:10]:
        print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", default=None)
    parser.add_argument("--ops", default=None, help="comma-separated ops for the reference run (default: all)")
    parser.add_argument("--no-gen", action="store_true", help="do not time gen-tests")
    parser.add_argument("--no-pytest", action="store_true", help="do not time the README test command")
    args = parser.parse_args()
    if not args.no_gen:
        bench_gen(args.specs)
    bench_reference(args.specs, args.ops)
    if not args.no_pytest:
        bench_pytest()


if __name__ == "__main__":
    main()
