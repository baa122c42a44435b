"""Cases verified per second through ``ptospec conformance --backend cpusim`` (cold and warm build cache, compile
counts), next to the upstream project's own CPU test flow for the same ops (``tests/run_cpu.py --testcase <tc>``),
in one run, for a chosen op set and, with ``--all-ops``, for every op with a generated test module.

    python benchmarks/cpusim.py --pto-isa-root PATH [--ops tmax tcolmin ...] [--all-ops] [--derived N]
                                [--no-upstream] [--jobs N] [--json OUT]

"Verified" means run to a verdict (pass or divergence): the fixed cases of the generated suite and their derived
cases (other valid regions and data sets of the same compiled variant; ``--derived``, default that of ``ptospec
conformance``).  Cases not run (e.g. bf16 where the toolchain has no bfloat16) are counted apart.  The cold run
uses a fresh cache directory (builds and the database pickle), the warm run the same one again; each is a
separate ``ptospec conformance`` process, so the figures include starting Python, loading the database,
collecting the suite, the reference executor and writing the report.

Upstream's flow is timed for the chosen op set as cmake configure + build + gen_data + gtest for the testcase
directory that exercises each op (same name, else the smallest one whose sources call the op's intrinsic), and
its case count is what the built binary lists (``--gtest_list_tests``); it needs cmake and GoogleTest
(libgtest-dev), and is skipped with the reason when they are missing.  For all ops the upstream case count is
read from the testcase sources (``TEST``/``TEST_F`` lines, including those a preprocessor switch such as
``CPU_SIM_BFLOAT_ENABLED`` leaves out: an upper bound, so the ratio printed is a lower bound), not timed
(``--time-all-upstream`` builds and runs them all, many minutes).

The targets of the issue (at least 30x upstream's case count, 40 verified cases/s cold, 1,000/s warm, compile
count unchanged or lower) are printed with each set's figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"ratio": 30.0, "cold": 40.0, "warm": 1000.0}  # x upstream's cases, verified cases/s cold and warm
SEED_OPS = ["tmax", "tcolmin", "trowmax", "tcolargmax", "tcolexpandmax"]
TEST_LINE = re.compile(r"^\s*(?:TEST|TEST_F)\s*\(", re.M)


def run_ours(root: Path, ops: list[str] | None, cache: Path, report: Path, jobs: int | None,
             derived: int | None) -> dict:
    cmd = [sys.executable, "-c", "import sys; from ptospec.cli import main; sys.exit(main())", "conformance",
           "--backend", "cpusim", "--pto-isa-root", str(root), "--cache-dir", str(cache), "--report-dir", str(report)]
    cmd += ["--ops", *ops] if ops else []
    cmd += ["--jobs", str(jobs)] if jobs else []
    cmd += ["--derived", str(derived)] if derived is not None else []
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # the database pickle lives with the build cache, so that the cold run starts from nothing at all
    env = {**os.environ, "PTOSPEC_DATABASE_CACHE": str(cache / "database")}
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=7200, env=env)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    path = report / "report.json"
    if proc.returncode not in (0, 1) or not path.is_file():
        raise SystemExit(f"ptospec conformance failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    data = json.loads(path.read_text())
    stats = data["stats"]
    verified = int(stats["cases_verified"])
    return {"seconds": seconds, "verified": verified, "per_second": verified / seconds if seconds else 0.0,
            "cpu": cpu, "load": load, "exit": proc.returncode,
            "stats": stats, "totals": data["totals"], "groups": data["divergence_groups"],
            "by_verdict": data["by_verdict"]}


def upstream_testcase(root: Path, db, op: str) -> str | None:
    base = root / "tests" / "cpu" / "st" / "testcase"
    if (base / op).is_dir():
        return op
    names = {m.cpp_name for m in db.op(op).modes}
    found = []
    for directory in sorted(p for p in base.iterdir() if p.is_dir()):
        text = _sources(directory)
        if any(f"{n}(" in text or f"{n}<" in text for n in names):
            found.append((len(text), directory.name))
    return min(found)[1] if found else None


def _sources(directory: Path) -> str:
    return "".join(s.read_text(errors="replace") for s in sorted(directory.glob("*.cpp")))


def upstream_cases_in_sources(root: Path, testcase: str) -> int:
    """``TEST``/``TEST_F`` lines of a testcase's sources (an upper bound of what its binary lists)."""
    return len(TEST_LINE.findall(_sources(root / "tests" / "cpu" / "st" / "testcase" / testcase)))


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


def describe_run(label: str, r: dict) -> str:
    s, t = r["stats"], r["totals"]
    return (f"  {label} cache: {r['verified']} cases verified ({s['cases_verified_passed']} pass, "
            f"{s['cases_verified_failed']} diverge; {s['cases_not_run_skipped']} not run) from {t['total']} fixed "
            f"cases with {s['derived_per_fixed_case']} derived each, in {r['seconds']:.1f} s = "
            f"{r['per_second']:.1f} cases/s; compiles {s['compiles']} (+{s['syntax_checks']} syntax checks, "
            f"{s['pch_builds']} PCH), cache hits {s['cache_hits']}/{s['units']} units, {s['variants']} variants, "
            f"{s['cases_run']} simulator runs in {s['run_seconds']:.1f} s (summed over drivers); "
            f"{r['groups']} divergence groups {r['by_verdict']}, exit {r['exit']}; CPU time {r['cpu']:.1f} s "
            f"({r['verified'] / r['cpu']:.0f} cases per CPU-second), load average {r['load']:.1f} at the start")


def testcases_of(root: Path, db, ops: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Upstream testcase -> the ops it exercises, and the ops no testcase exercises."""
    testcases: dict[str, list[str]] = {}
    uncovered = []
    for op in ops:
        tc = upstream_testcase(root, db, op)
        if tc is None:
            uncovered.append(op)
        else:
            testcases.setdefault(tc, []).append(op)
    return testcases, uncovered


def bench_set(name: str, ops: list[str] | None, op_names: list[str], args, checkout, compiler, db,
              tmp: Path, time_upstream: bool) -> dict:
    """Cold and warm runs of ``ptospec conformance`` over ``ops`` (None: all), and upstream's count for them."""
    print(f"== {name}: {len(op_names)} ops")
    cache = Path(args.cache_dir) / name if args.cache_dir else tmp / name / "cache"
    runs = {}
    for label in ("cold", "warm"):
        runs[label] = run_ours(checkout.root, ops, cache, tmp / name / f"report-{label}", args.jobs, args.derived)
        print(describe_run(label, runs[label]))
    testcases, uncovered = testcases_of(checkout.root, db, op_names)
    in_sources = sum(upstream_cases_in_sources(checkout.root, tc) for tc in testcases)
    upstream: dict = {"testcases": len(testcases), "ops_without_testcase": uncovered,
                      "cases_in_sources": in_sources}
    why = None if time_upstream else "not timed (--time-all-upstream times every testcase)"
    why = why or (upstream_missing(checkout.root) if not args.no_upstream else "--no-upstream")
    if why is None:
        total_s, total_tests = 0.0, 0
        for tc, covered in testcases.items():
            u = run_upstream(checkout.root, tc, compiler.path, tmp / name / "upstream")
            total_s += u["seconds"]
            total_tests += u["tests"]
            status = "ok" if u["ok"] else f"FAILED {' '.join(u['tail'])}"
            print(f"  upstream run_cpu.py --testcase {tc} ({', '.join(covered)}): {u['tests']} gtest cases in "
                  f"{u['seconds']:.1f} s (configure + build + run), {status}")
        upstream.update(listed=total_tests, seconds=total_s)
        print(f"  upstream: {len(testcases)} testcases, {total_tests} cases listed ({in_sources} TEST lines in "
              f"their sources) in {total_s:.1f} s = {total_tests / total_s if total_s else 0:.2f} cases/s")
    else:
        print(f"  upstream flow {why}: {len(testcases)} testcases, {in_sources} TEST lines in their sources")
    if uncovered:
        print(f"  no upstream testcase exercises {len(uncovered)} op(s): {' '.join(uncovered)}")
    upstream_cases = upstream.get("listed") or in_sources
    cold, warm = runs["cold"], runs["warm"]
    ratio = cold["verified"] / upstream_cases if upstream_cases else 0.0
    counted = "listed by the binaries" if upstream.get("listed") else "TEST lines in the sources, an upper bound"
    print(f"  {name}: {cold['verified']} cases verified / {upstream_cases} upstream cases ({counted}) = {ratio:.1f}x "
          f"(target {TARGETS['ratio']:.0f}x); {cold['per_second']:.1f} cases/s cold (target {TARGETS['cold']:.0f}), "
          f"{warm['per_second']:.1f} cases/s warm (target {TARGETS['warm']:.0f}); "
          f"compiles {cold['stats']['compiles']} cold, {warm['stats']['compiles']} warm")
    if upstream.get("seconds"):
        print(f"  upstream's flow: {upstream['listed'] / upstream['seconds']:.2f} cases/s; ptospec cold is "
              f"{cold['per_second'] / (upstream['listed'] / upstream['seconds']):.0f}x that")
    return {"ops": op_names, "cold": cold, "warm": warm, "upstream": upstream, "ratio": ratio}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pto-isa-root", default=os.environ.get("PTO_ISA_ROOT"))
    parser.add_argument("--ops", nargs="+", default=None,
                        help=f"the chosen op set (default: {' '.join(SEED_OPS)})")
    parser.add_argument("--all-ops", action="store_true",
                        help="also every op with a generated test module (a cold run takes many minutes)")
    parser.add_argument("--specs", default=None)
    parser.add_argument("--cache-dir", default=None,
                        help="parent of the build caches (one per op set; default: fresh temporary directories, "
                             "so the first run is cold)")
    parser.add_argument("--derived", type=int, default=None, help="derived cases per fixed positive case")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--no-upstream", action="store_true", help="do not time upstream's run_cpu.py flow")
    parser.add_argument("--time-all-upstream", action="store_true",
                        help="with --all-ops: build and run every upstream testcase too (many minutes)")
    parser.add_argument("--json", default=None, metavar="OUT", help="write the figures as JSON")
    args = parser.parse_args()

    from ptospec.backends.cpusim.toolchain import ToolchainError, find_checkout, find_compiler
    from ptospec.loader import load_database

    try:
        checkout = find_checkout(args.pto_isa_root)
        compiler = find_compiler(None)
    except ToolchainError as exc:
        print(f"cpusim benchmark not run: {exc.message}")
        return
    db = load_database(args.specs)
    tests = ROOT / "generated_tests"
    every = sorted(op for op in db.ops if (tests / f"test_{op}.py").is_file())
    chosen = args.ops or SEED_OPS
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs, {compiler.banner}")
    results = {}
    with tempfile.TemporaryDirectory(prefix="ptospec-cpusim-bench-") as tmp:
        results["chosen"] = bench_set("chosen ops", chosen, chosen, args, checkout, compiler, db, Path(tmp), True)
        if args.all_ops:
            results["all"] = bench_set("all ops", None, every, args, checkout, compiler, db, Path(tmp),
                                       args.time_all_upstream)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
