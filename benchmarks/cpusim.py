"""Cases verified per second by the cpusim backend (cold and warm build cache, compile counts), next to the
upstream project's own CPU test flow for the same ops (``tests/run_cpu.py --testcase <tc>``).

    python benchmarks/cpusim.py --pto-isa-root PATH [--ops tmax tcolmin ...] [--no-upstream] [--jobs N]

"Verified" means run to a verdict (pass or divergence); cases the backend skips (e.g. bf16 with a toolchain
where bfloat16_t is half) are counted apart.  The cold run uses a fresh cache directory, the warm run the
same one again.  Upstream's flow is timed as cmake configure + build + gen_data + gtest for the testcase
directory that exercises the op (same name, else the smallest one whose sources call the op's intrinsic);
it needs cmake and GoogleTest (libgtest-dev), and is skipped with the reason when they are missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def suite_cases(tests: Path, op: str, profile: str) -> list:
    spec = importlib.util.spec_from_file_location(f"bench_{op}", tests / f"test_{op}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [p.values[0] for p in module.POSITIVE + module.MUST_REJECT if p.values[0].profile == profile]


def run_ours(db, tests: Path, ops: list[str], root: Path, cache: Path, jobs: int | None) -> dict:
    from ptospec.backends.cpusim import CpuSimBackend
    from ptospec.conformance.runner import ConformanceFailure, Runner, Unsupported

    start = time.perf_counter()
    backend = CpuSimBackend(db, root=root, cache=cache, parallel=jobs)
    profile = backend.profiles[0]
    cases = [c for op in ops for c in suite_cases(tests, op, profile)]
    runner = Runner(db, backend, "cpusim")
    runner.prepare(cases)
    counts = {"passed": 0, "diverged": 0, "skipped": 0}
    for case in cases:
        try:
            runner.check(case)
            counts["passed"] += 1
        except Unsupported:
            counts["skipped"] += 1
        except ConformanceFailure:
            counts["diverged"] += 1
    seconds = time.perf_counter() - start
    verified = counts["passed"] + counts["diverged"]
    return {"cases": len(cases), **counts, "verified": verified, "seconds": seconds,
            "per_second": verified / seconds if seconds else 0.0, "stats": backend.stats(),
            "compiler": backend.compiler}


def upstream_testcase(root: Path, db, op: str) -> str | None:
    base = root / "tests" / "cpu" / "st" / "testcase"
    if (base / op).is_dir():
        return op
    names = {m.cpp_name for m in db.op(op).modes}
    found = []
    for directory in sorted(p for p in base.iterdir() if p.is_dir()):
        sources = list(directory.glob("*.cpp"))
        text = "".join(s.read_text(errors="replace") for s in sources)
        if any(f"{n}(" in text or f"{n}<" in text for n in names):
            found.append((len(text), directory.name))
    return min(found)[1] if found else None


def upstream_missing(root: Path) -> str | None:
    if not (root / "tests" / "run_cpu.py").is_file():
        return f"{root}/tests/run_cpu.py does not exist"
    if shutil.which("cmake") is None:
        return "cmake is not installed"
    gtest = [Path("/usr/include/gtest"), Path("/usr/local/include/gtest")]
    if not any(p.is_dir() for p in gtest):
        return "GoogleTest is not installed (apt-get install libgtest-dev); run_cpu.py would fetch it from GitHub"
    return None


def run_upstream(root: Path, testcase: str, cxx: str, work: Path) -> dict:
    cc = cxx.replace("clang++", "clang")
    build = work / testcase
    cmd = [sys.executable, str(root / "tests" / "run_cpu.py"), "--testcase", testcase, "--build-dir", str(build),
           "--cxx", cxx, "--cc", cc, "--no-install"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
                          timeout=1800)
    seconds = time.perf_counter() - start
    tests = 0
    binary = build / "bin" / testcase
    if binary.is_file():
        listing = subprocess.run([str(binary), "--gtest_list_tests"], capture_output=True, text=True,
                                 cwd=binary.parent, timeout=60).stdout
        tests = sum(1 for line in listing.splitlines() if line.startswith("  "))
    return {"testcase": testcase, "seconds": seconds, "tests": tests, "ok": proc.returncode == 0,
            "tail": (proc.stdout + proc.stderr).strip().splitlines()[-1:] if proc.returncode else []}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pto-isa-root", default=os.environ.get("PTO_ISA_ROOT"))
    parser.add_argument("--ops", nargs="+", default=None, help="default: every op with a generated test module")
    parser.add_argument("--tests", default=str(ROOT / "generated_tests"), help="generated suite directory")
    parser.add_argument("--specs", default=None)
    parser.add_argument("--cache-dir", default=None, help="default: a fresh temporary directory (cold run)")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--no-upstream", action="store_true", help="do not time upstream's run_cpu.py flow")
    args = parser.parse_args()

    from ptospec.backends.cpusim.toolchain import ToolchainError, find_checkout, find_compiler
    from ptospec.loader import load_database

    try:
        checkout = find_checkout(args.pto_isa_root)
        find_compiler(None)
    except ToolchainError as exc:
        print(f"cpusim benchmark not run: {exc.message}")
        return
    db = load_database(args.specs)
    tests = Path(args.tests)
    ops = args.ops or sorted(op for op in db.ops if (tests / f"test_{op}.py").is_file())
    missing = sorted(op for op in db.ops if not (tests / f"test_{op}.py").is_file())
    if missing and not args.ops:
        print(f"no generated tests (run `ptospec gen-tests`) for: {' '.join(missing)}")
    with tempfile.TemporaryDirectory(prefix="ptospec-cpusim-bench-") as tmp:
        cache = Path(args.cache_dir) if args.cache_dir else Path(tmp) / "cache"
        print(f"ops: {' '.join(ops)}")
        results = {}
        for label in ("cold", "warm"):
            r = run_ours(db, tests, ops, checkout.root, cache, args.jobs)
            results[label] = r
            s = r["stats"]
            print(f"ptospec cpusim, {label} cache: {r['verified']} cases verified ({r['passed']} pass, "
                  f"{r['diverged']} diverge; {r['skipped']} skipped) in {r['seconds']:.1f} s = "
                  f"{r['per_second']:.1f} cases/s; compiles {s['compiles']} (+{s['syntax_checks']} syntax checks, "
                  f"{s['pch_builds']} PCH), cache hits {s['cache_hits']}/{s['units']} units, "
                  f"{s['variants']} variants, compile CPU {s['compile_seconds']:.1f} s, run {s['run_seconds']:.2f} s")
        if args.no_upstream:
            return
        why = upstream_missing(checkout.root)
        if why:
            print(f"upstream flow not timed: {why}")
            return
        cxx = results["cold"]["compiler"].path
        testcases: dict[str, list[str]] = {}
        for op in ops:
            tc = upstream_testcase(checkout.root, db, op)
            if tc is None:
                print(f"upstream: no testcase exercises {op}")
                continue
            testcases.setdefault(tc, []).append(op)
        total_s, total_tests = 0.0, 0
        for tc, covered in testcases.items():
            u = run_upstream(checkout.root, tc, cxx, Path(tmp) / "upstream")
            total_s += u["seconds"]
            total_tests += u["tests"]
            status = "ok" if u["ok"] else f"FAILED {' '.join(u['tail'])}"
            print(f"upstream run_cpu.py --testcase {tc} ({', '.join(covered)}): {u['tests']} gtest cases in "
                  f"{u['seconds']:.1f} s (configure + build + run), {status}")
        if total_s:
            print(f"upstream total: {total_tests} cases in {total_s:.1f} s = {total_tests / total_s:.2f} cases/s "
                  f"(ptospec cpusim: {results['cold']['per_second']:.1f} cold, "
                  f"{results['warm']['per_second']:.1f} warm)")


if __name__ == "__main__":
    main()
