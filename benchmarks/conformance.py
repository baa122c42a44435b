"""Case count and cases per second of the generated conformance cases on the reference backend.

    python benchmarks/conformance.py [--specs DIR]
"""

from __future__ import annotations

import argparse
import time

from ptospec.conformance.cases import all_cases
from ptospec.conformance.reference import ReferenceBackend
from ptospec.conformance.runner import Runner
from ptospec.loader import load_database


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--specs", default=None)
    args = parser.parse_args()
    db = load_database(args.specs)
    start = time.perf_counter()
    cases = [c for op in db.ops.values() for part in all_cases(db, op) for c in part]
    derive = time.perf_counter() - start
    runner = Runner(db, ReferenceBackend(db), "reference")
    start = time.perf_counter()
    for case in cases:
        runner.check(case)
    elapsed = time.perf_counter() - start
    positive = sum(1 for c in cases if not c.reject)
    print(f"cases: {len(cases)} ({positive} positive, {len(cases) - positive} must-reject) over {len(db.ops)} ops")
    print(f"derivation: {derive:.2f} s")
    print(f"run on reference: {elapsed:.2f} s, {len(cases) / elapsed:.0f} cases/s")


if __name__ == "__main__":
    main()
