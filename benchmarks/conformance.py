"""Case count and cases per second of the generated conformance suite on the reference backend.

    python benchmarks/conformance.py [--specs DIR] [--ops tmax,tcmp]

Cases are read from the committed modules in generated_tests/ (what `pytest generated_tests` runs,
without pytest's own overhead); property tests are not included.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

from ptospec.conformance.reference import ReferenceBackend
from ptospec.conformance.runner import Runner
from ptospec.loader import load_database

SUITE = Path(__file__).resolve().parent.parent / "generated_tests"


def suite_cases(name: str) -> list:
    spec = importlib.util.spec_from_file_location(f"generated_{name}", SUITE / f"test_{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [p.values[0] for p in (*module.POSITIVE, *module.MUST_REJECT)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", default=None)
    parser.add_argument("--ops", default=None, help="comma-separated ops (default: all)")
    args = parser.parse_args()
    start = time.perf_counter()
    db = load_database(args.specs)
    print(f"database load: {time.perf_counter() - start:.2f} s ({len(db.ops)} ops)")
    names = args.ops.split(",") if args.ops else sorted(db.ops)
    cases = [c for n in names for c in suite_cases(n)]
    runner = Runner(db, ReferenceBackend(db), "reference")
    start = time.perf_counter()
    for case in cases:
        runner.check(case)
    elapsed = time.perf_counter() - start
    positive = sum(1 for c in cases if not c.reject)
    print(f"cases: {len(cases)} ({positive} positive, {len(cases) - positive} must-reject) over {len(names)} ops")
    print(f"run on reference: {elapsed:.2f} s, {len(cases) / elapsed:.0f} cases/s")


if __name__ == "__main__":
    main()
