"""Time ``ptospec docs build`` (generation + mkdocs --strict, both languages) into a temporary site folder.

Prints wall-clock time and the CPU time of the build process and its workers: on a shared machine the
wall clock depends on the load, the CPU time does not.

Usage: python benchmarks/docs_build.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    times, cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "ptospec.cli", "--specs", str(ROOT / "specs"), "docs", "build",
                            "--site", tmp], check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    load = os.getloadavg()[0]
    print(f"ptospec docs build: wall best {min(times):.2f}s, mean {sum(times) / len(times):.2f}s; "
          f"CPU best {min(cpus):.2f}s over {len(times)} runs ({os.cpu_count()} cores, load average {load:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
