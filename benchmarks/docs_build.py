"""Time ``ptospec docs build`` (generation + mkdocs --strict) into a temporary site folder.

Usage: python benchmarks/docs_build.py [--repeat N]
"""

from __future__ import annotations

import argparse
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
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "ptospec.cli", "--specs", str(ROOT / "specs"), "docs", "build",
                            "--site", tmp], check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
    print(f"ptospec docs build: best {min(times):.2f}s, mean {sum(times) / len(times):.2f}s over {len(times)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
