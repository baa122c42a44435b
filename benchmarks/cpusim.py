"""Cases verified per second through ``ptospec conformance --backend cpusim`` (cold and warm build cache, compile
counts), next to the upstream project's own CPU test flow for the same ops (``tests/run_cpu.py --testcase <tc>``),
in one run.

    python benchmarks/cpusim.py --pto-isa-root PATH [--ops tmax tcolmin ...] [--derived N] [--no-upstream] [--jobs N]

"Verified" means run to a verdict (pass or divergence): the fixed cases of the generated suite and their derived
cases (other valid regions and data sets of the same compiled variant; ``--derived``, default that of ``ptospec
conformance``).  Cases not run (e.g. bf16 with a toolchain where bfloat16_t is half, or derived cases of a fixed
case the simulator rejected) are counted apart.  The cold run uses a fresh cache directory, the warm run the same
one again; each is a separate ``ptospec conformance`` process, so the figures include loading the database,
collecting the suite, the reference executor and writing the report.  Upstream's flow is timed as cmake configure
+ build + gen_data + gtest for the testcase directory that exercises the op (same name, else the smallest one
whose sources call the op's intrinsic); it needs cmake and GoogleTest (libgtest-dev), and is skipped with the
reason when they are missing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=7200)
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
            "cpu": cpu, "load": load,
            "stats": stats, "totals": data["totals"], "groups": data["divergence_groups"],
            "by_verdict": data["by_verdict"]}


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
    parser.add_argument("--specs", default=None)
    parser.add_argument("--cache-dir", default=None, help="default: a fresh temporary directory (cold run)")
    parser.add_argument("--derived", type=int, default=None, help="derived cases per fixed positive case")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--no-upstream", action="store_true", help="do not time upstream's run_cpu.py flow")
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
    ops = args.ops or sorted(op for op in db.ops if (tests / f"test_{op}.py").is_file())
    print(f"ops: {len(ops)} ({' '.join(ops)})")
    with tempfile.TemporaryDirectory(prefix="ptospec-cpusim-bench-") as tmp:
        cache = Path(args.cache_dir) if args.cache_dir else Path(tmp) / "cache"
        results = {}
        for label in ("cold", "warm"):
            r = run_ours(checkout.root, args.ops, cache, Path(tmp) / f"report-{label}", args.jobs, args.derived)
            results[label] = r
            s, t = r["stats"], r["totals"]
            print(f"ptospec conformance --backend cpusim, {label} cache: {r['verified']} cases verified "
                  f"({s['cases_verified_passed']} pass, {s['cases_verified_failed']} diverge; "
                  f"{s['cases_not_run_skipped']} not run) from {t['total']} fixed cases with "
                  f"{s['derived_per_fixed_case']} derived each, in {r['seconds']:.1f} s = {r['per_second']:.1f} "
                  f"cases/s; compiles {s['compiles']} (+{s['syntax_checks']} syntax checks, {s['pch_builds']} PCH), "
                  f"cache hits {s['cache_hits']}/{s['units']} units, {s['variants']} variants, "
                  f"{s['cases_run']} simulator runs in {s['run_seconds']:.1f} s (summed over drivers); "
                  f"{r['groups']} divergence groups {r['by_verdict']}; CPU time {r['cpu']:.1f} s "
                  f"({r['verified'] / r['cpu']:.0f} cases per CPU-second), load average {r['load']:.1f} at the start")
        if args.no_upstream:
            return
        why = upstream_missing(checkout.root)
        if why:
            print(f"upstream flow not timed: {why}")
            return
        testcases: dict[str, list[str]] = {}
        for op in ops:
            tc = upstream_testcase(checkout.root, db, op)
            if tc is None:
                print(f"upstream: no testcase exercises {op}")
                continue
            testcases.setdefault(tc, []).append(op)
        total_s, total_tests = 0.0, 0
        for tc, covered in testcases.items():
            u = run_upstream(checkout.root, tc, compiler.path, Path(tmp) / "upstream")
            total_s += u["seconds"]
            total_tests += u["tests"]
            status = "ok" if u["ok"] else f"FAILED {' '.join(u['tail'])}"
            print(f"upstream run_cpu.py --testcase {tc} ({', '.join(covered)}): {u['tests']} gtest cases in "
                  f"{u['seconds']:.1f} s (configure + build + run), {status}")
        if total_s and total_tests:
            cold, warm = results["cold"], results["warm"]
            print(f"upstream total: {len(testcases)} testcases, {total_tests} cases in {total_s:.1f} s = "
                  f"{total_tests / total_s:.2f} cases/s")
            print(f"ptospec cpusim against upstream for the same ops: {cold['verified']} / {total_tests} cases = "
                  f"{cold['verified'] / total_tests:.1f}x; {cold['per_second']:.1f} cases/s cold "
                  f"({cold['per_second'] / (total_tests / total_s):.0f}x), {warm['per_second']:.1f} cases/s warm")


if __name__ == "__main__":
    main()
