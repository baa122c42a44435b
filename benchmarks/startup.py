"""Start-up of the commands that read the database, when the specs have not changed: wall and CPU time of
``ptospec list``, ``show``, ``check`` and ``check-program`` of a small kernel (loads, binary ops, a loop), each
a fresh process reading the database kept on disk (``ptospec/dbcache.py``).

Run: python benchmarks/startup.py [--repeat N] [--importtime]

Each command runs once to fill the cache, then N times; the figures are the median wall time, the median
CPU time (user + system of the process) and the best wall time.  The first row, ``python -c pass``, is the
interpreter's own start (site packages included), the floor under every command and a yardstick of how busy
the machine is: on a loaded machine it too takes several times longer.  The load average at the start says how
busy the machine was: wall time on a machine shared with other work is longer than on an idle one, CPU time
much less so.  ``--importtime`` adds, per command, the modules whose import took longest (``python -X
importtime``).  With ``PYTHONDONTWRITEBYTECODE`` set, Python compiles every module at every start; the
script says so, since that is part of what a user of such an environment waits for.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TILE = ("!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, "
        "slayout=none_box, fractal=512, pad=0>")
VIEW = "!pto.tensor_view<?x?xf32>"
PART = "!pto.partition_tensor_view<16x16xf32>"
KERNEL = """module {
  func.func @scale_add(%a: !pto.ptr<f32>, %b: !pto.ptr<f32>, %out: !pto.ptr<f32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %half = arith.constant 0.5 : f32
    %ta = pto.make_tensor_view %a, shape = [%c16, %c16], strides = [%c16, %c1] : VIEW
    %tb = pto.make_tensor_view %b, shape = [%c16, %c16], strides = [%c16, %c1] : VIEW
    %to = pto.make_tensor_view %out, shape = [%c16, %c16], strides = [%c16, %c1] : VIEW
    %pa = pto.partition_view %ta, offsets = [%c0, %c0], sizes = [%c16, %c16] : VIEW -> PART
    %pb = pto.partition_view %tb, offsets = [%c0, %c0], sizes = [%c16, %c16] : VIEW -> PART
    %po = pto.partition_view %to, offsets = [%c0, %c0], sizes = [%c16, %c16] : VIEW -> PART
    %x = pto.alloc_tile : TILE
    %y = pto.alloc_tile : TILE
    pto.tload ins(%pa : PART) outs(%x : TILE)
    pto.tload ins(%pb : PART) outs(%y : TILE)
    scf.for %i = %c0 to %n step %c1 {
      pto.tmuls ins(%x, %half : TILE, f32) outs(%x : TILE)
      pto.tadd ins(%x, %y : TILE, TILE) outs(%x : TILE)
    }
    pto.tstore ins(%x : TILE) outs(%po : PART)
    return
  }
}
""".replace("TILE", TILE).replace("VIEW", VIEW).replace("PART", PART)


def commands(kernel: Path) -> dict[str, list[str]]:
    return {
        "list": ["list"],
        "show": ["show", "tcolmax"],
        "check": ["check", "tadd", "--profile", "a5", "--tile", "dst=vec,16x16xf32", "--tile", "src0=vec,16x16xf32",
                  "--tile", "src1=vec,16x16xf32"],
        "check-program": ["check-program", str(kernel), "--profile", "a5"],
    }


def timed(argv: list[str]) -> tuple[float, float, int]:
    """Wall and CPU seconds of one run of ``argv``, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv[3:])}: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    return wall, cpu, done.returncode


def slowest_imports(argv: list[str], count: int = 8) -> list[tuple[int, str]]:
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    found = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line.split("|")
            if cumulative.strip().isdigit():
                found.append((int(cumulative), name.rstrip()))
    return sorted(found, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per command (default 5)")
    parser.add_argument("--importtime", action="store_true", help="also list each command's slowest imports")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be 1 or more")
    with tempfile.TemporaryDirectory() as tmp:
        kernel = Path(tmp) / "scale_add.pto"
        kernel.write_text(KERNEL)
        load = os.getloadavg()[0]
        bytecode = "NOT written (PYTHONDONTWRITEBYTECODE): every start compiles" if sys.dont_write_bytecode \
            else "cached"
        print(f"load average at start: {load:.1f} on {os.cpu_count()} CPU(s); bytecode {bytecode}")
        print(f"{'command':<15} {'wall median':>12} {'wall best':>10} {'CPU median':>11}")
        runs = [timed([sys.executable, "-c", "pass"]) for _ in range(args.repeat)]  # the yardstick
        print(f"{'(python alone)':<15} {statistics.median(r[0] for r in runs):>11.3f}s "
              f"{min(r[0] for r in runs):>9.3f}s {statistics.median(r[1] for r in runs):>10.3f}s")
        for name, rest in commands(kernel).items():
            argv = [sys.executable, "-m", "ptospec.cli", *rest]
            timed(argv)  # fills the database cache (and the bytecode cache, where Python writes one)
            runs = [timed(argv) for _ in range(args.repeat)]
            walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
            print(f"{name:<15} {statistics.median(walls):>11.3f}s {min(walls):>9.3f}s "
                  f"{statistics.median(cpus):>10.3f}s")
            if args.importtime:
                for micro, module in slowest_imports(argv):
                    print(f"{'':<15}   {micro / 1e6:.3f}s  {module.strip()}")


if __name__ == "__main__":
    main()
