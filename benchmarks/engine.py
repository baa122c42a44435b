"""Figures for the spec engine: database load + lint time, and executor time per call
against the bare NumPy operation on the same data (16x16 and 256x256 tiles; a 128x128x128 f16 TMATMUL
against numpy.matmul on the same f16 data and on its f32 copy).

Run: python benchmarks/engine.py
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ptospec.asm.types import parse_descriptor
from ptospec.executor import execute
from ptospec.lint import lint_paths
from ptospec.loader import load_database

ROOT = Path(__file__).resolve().parent.parent


def best_of(fn, repeat: int = 5, number: int = 20) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def main() -> None:
    start = time.perf_counter()
    db = load_database(ROOT / "specs")
    load = time.perf_counter() - start
    start = time.perf_counter()
    problems, files = lint_paths(str(ROOT / "specs"), [])
    lint = time.perf_counter() - start
    print(f"database: {len(db.ops)} ops, {files} files")
    print(f"load: {load * 1000:.1f} ms   lint (load + schema + examples): {lint * 1000:.1f} ms"
          f"   problems: {len(problems)}")

    rng = np.random.default_rng(0)
    cases = {
        "tcolmin": lambda n: ({"src": f"vec,{n}x{n}xf32", "dst": f"vec,1x{n}xf32"},
                              lambda d: d["src"].min(axis=0)),
        "tmax": lambda n: ({"src0": f"vec,{n}x{n}xf32", "src1": f"vec,{n}x{n}xf32", "dst": f"vec,{n}x{n}xf32"},
                           lambda d: np.maximum(d["src0"], d["src1"])),
        "trowmax": lambda n: ({"src": f"vec,{n}x{n}xf32", "dst": f"vec,{n}x1xf32,layout=dn",
                               "tmp": f"vec,{n}x{n}xf32"}, lambda d: d["src"].max(axis=1)),
        "tcolargmax": lambda n: ({"src": f"vec,{n}x{n}xf32", "dstIdx": f"vec,1x{n}xu32", "tmp": f"vec,{n}x{n}xf32"},
                                 lambda d: d["src"].argmax(axis=0)),
    }
    print(f"{'op':<12}{'tile':>9}{'executor µs':>14}{'numpy µs':>11}{'ratio':>8}")
    for op, make in cases.items():
        for n in (16, 256):
            descs, bare = make(n)
            tiles = {k: parse_descriptor(v, db.isa) for k, v in descs.items()}
            data = {k: rng.standard_normal(t.shape).astype(np.float32) for k, t in tiles.items()
                    if k.startswith("src")}
            mode = "index" if op == "tcolargmax" else None
            ours = best_of(lambda: execute(db, op, mode, "a5", tiles, data))  # noqa: B023
            ref = best_of(lambda: bare(data))  # noqa: B023
            print(f"{op:<12}{f'{n}x{n}':>9}{ours * 1e6:>14.1f}{ref * 1e6:>11.1f}{ours / ref:>8.0f}x")

    n = 128  # the cube: f16 inputs, f32 accumulator, boxed layouts
    tiles = {"dst": parse_descriptor(f"acc,{n}x{n}xf32,blayout=col_major,slayout=row_major,fractal=1024", db.isa),
             "src0": parse_descriptor(f"left,{n}x{n}xf16,blayout=col_major,slayout=row_major", db.isa),
             "src1": parse_descriptor(f"right,{n}x{n}xf16,slayout=col_major", db.isa)}
    a, b = (rng.standard_normal((n, n)).astype(np.float16) for _ in range(2))
    data = {"src0": a, "src1": b}
    ours = best_of(lambda: execute(db, "tmatmul", None, "a5", tiles, data), number=3)
    ref16 = best_of(lambda: np.matmul(a, b), number=3)
    ref32 = best_of(lambda: np.matmul(a.astype(np.float32), b.astype(np.float32)), number=3)
    print(f"tmatmul {n}x{n}x{n} f16: executor {ours * 1e3:.1f} ms, numpy.matmul f16 {ref16 * 1e3:.1f} ms, "
          f"f32 {ref32 * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
