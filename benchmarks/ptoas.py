"""Figures of the PTO assembler as a backend under test, with the targets of issue 25 beside them.

    python benchmarks/ptoas.py --ptoas PATH --pto-isa-root PTO_ISA [--ops tadd tcmp ...] [--jobs N]
    python benchmarks/ptoas.py --whole --ptoas PATH --pto-isa-root PTO_ISA [--jobs 2]
                               [--state DIR] [--shards 4] [--resume]

The first form measures a sample of instructions (``--ops``): verifier cases per second (must-reject cases, one
module each, and positive cases, 40 to a module) and the lowering backend's positive cases verified per second,
cold (an empty build cache) and warm (the same run again).

``--whole`` is the whole run for every instruction with an assembler operation: every must-reject case through
the verifier (``ptospec ptoas verify-table --cases must-reject``; target: at most 10 minutes on the 2-core
machine), then every positive fixed case through the lowering backend from an empty build cache (``ptospec
conformance --backend ptoas -k positive --derived 0``, the divergences' attribution included; target: at most 15
minutes cold), in ``--shards`` pieces of whole instructions (``--shard K/N``), then the same again warm.  Each
piece's figures go to ``STATE/whole.json`` as it ends, so an interrupted run goes on where it stopped with
``--resume`` (the piece that was cut off starts again, on a build cache that now holds part of its units: its
figure is marked resumed); the shard reports are merged into ``STATE/report``.

Every figure gives wall time, CPU time (user + system of the whole process tree: ptoas, clang++, the drivers and
Python) and the load average before and after, since the machine may be shared; CPU / cores is what the wall time
would be on idle cores if the work spread evenly.
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
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptospec.backends.ptoas.discover import find_ptoas  # noqa: E402
from ptospec.backends.ptoas.module import NotExpressible, case_function  # noqa: E402
from ptospec.backends.ptoas.spec import load_ptoas_spec  # noqa: E402
from ptospec.backends.ptoas.table import suite_cases  # noqa: E402
from ptospec.backends.ptoas.verifier import Job, verify_all  # noqa: E402
from ptospec.dbcache import load_database_cached  # noqa: E402

VERIFIER_TARGET_S = 600  # every must-reject case through the verifier
LOWERING_TARGET_S = 900  # every positive fixed case through the lowering backend, cold
TARGET_CORES = 2  # the machine the targets are set for
SAMPLE = ["tadd", "texp", "trowsum", "tcmps", "tload", "ttrans", "tcvt"]  # elementwise, reduction, compare, memory,
# layout and conversion kernels
CLI = [sys.executable, "-c", "import sys; from ptospec.cli import main; sys.exit(main())"]


@dataclass
class Timing:
    wall: float
    user: float
    system: float
    load_before: float
    load_after: float

    @property
    def cpu(self) -> float:
        return self.user + self.system

    def text(self, load: str = "") -> str:
        load = load or f"load {self.load_before:.1f} -> {self.load_after:.1f}"
        return f"{self.wall:.0f} s wall, {self.cpu:.0f} s CPU ({self.user:.0f} user + {self.system:.0f} system; {load})"


class Clock:
    """Wall and CPU time of this process and every child it waited for (``with Clock() as c: ...``)."""

    def __enter__(self) -> Clock:
        self._load = os.getloadavg()[0]
        self._self = resource.getrusage(resource.RUSAGE_SELF)
        self._children = resource.getrusage(resource.RUSAGE_CHILDREN)
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        wall = time.perf_counter() - self._wall
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        user = me.ru_utime - self._self.ru_utime + kids.ru_utime - self._children.ru_utime
        system = me.ru_stime - self._self.ru_stime + kids.ru_stime - self._children.ru_stime
        self.timing = Timing(wall, user, system, self._load, os.getloadavg()[0])


def target_line(what: str, cpu: float, wall: float, target: float) -> str:
    idle = cpu / TARGET_CORES
    verdict = "met" if idle <= target else "NOT met"
    return (f"  target: {what} in <= {target / 60:.0f} min on {TARGET_CORES} cores: {cpu:.0f} s CPU / "
            f"{TARGET_CORES} = {idle:.0f} s if the cores were idle ({verdict}; {wall:.0f} s wall as measured)")


# --------------------------------------------------------------------------- sample (--ops)
def sample(args, ptoas: str) -> None:
    db = load_database_cached()
    spec = load_ptoas_spec(db)
    by_arch: dict[str, dict[str, list[Job]]] = {}
    for k, (_, case) in enumerate(suite_cases(ROOT / "generated_tests", args.ops)):
        if case.profile not in spec.arch:
            continue
        op = db.ops[case.op]
        try:
            fn = case_function(db, spec, op, op.mode(case.mode), case.parsed(db), f"case{k}")
        except NotExpressible:
            continue
        kinds = by_arch.setdefault(spec.arch[case.profile], {"reject": [], "positive": []})
        kinds[case.kind].append(Job(k, fn, alone=case.kind == "reject"))
    print(f"verifier, {', '.join(args.ops)} (cases printed beforehand; ptoas runs {args.jobs} at a time):")
    for kind, how in (("reject", "one module each"), ("positive", f"{args.batch} to a module")):
        runs: list[int] = []
        n = sum(len(kinds[kind]) for kinds in by_arch.values())
        with Clock() as c:
            for arch, kinds in by_arch.items():
                verify_all(ptoas, arch, kinds[kind], args.jobs, args.batch, runs=runs)
        t = c.timing
        print(f"  {'must-reject' if kind == 'reject' else 'positive'} cases ({how}): {n} in {t.text()} = "
              f"{n / t.wall:.1f} cases/s wall, {n / max(t.cpu, 1e-9):.1f} per CPU second; {len(runs)} ptoas runs")
    if args.pto_isa_root:
        with tempfile.TemporaryDirectory(prefix="ptoas-bench-cache-") as cache:
            for label in ("cold", "warm"):
                out = ROOT / "build" / "ptoas-bench" / f"lowering-{label}"
                t, stats = conformance(args, ptoas, args.ops, cache, out)
                if stats is None:
                    return
                n = stats["cases_verified"]
                print(f"lowering backend, {label} ({'empty build cache' if label == 'cold' else 'the same again'}): "
                      f"{n} positive fixed cases verified in {t.text()} = {n / t.wall:.1f} cases/s wall, "
                      f"{n / max(t.cpu, 1e-9):.1f} per CPU second; {stats.get('compiles', 0)} compiles")


def conformance(args, ptoas: str, ops: list[str] | None, cache: str, out: Path, shard: str | None = None,
                progress: bool = False) -> tuple[Timing, dict | None]:
    """``ptospec conformance --backend ptoas`` over the positive fixed cases; its timing and stats."""
    cmd = [*CLI, "conformance", "--backend", "ptoas", "--ptoas", ptoas, "--pto-isa-root", args.pto_isa_root,
           "-k", "positive", "--derived", "0", "--jobs", str(args.jobs), "--cache-dir", cache, "--report-dir",
           str(out)]
    if ops:
        cmd += ["--ops", *ops]
    if shard:
        cmd += ["--shard", shard]
    with Clock() as c:
        proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=None if progress else subprocess.PIPE,
                              text=True)
    report = out / "report.json"
    if proc.returncode not in (0, 1) or not report.is_file():
        print(f"the lowering backend failed (exit {proc.returncode}): {(proc.stderr or proc.stdout).strip()[-500:]}")
        return c.timing, None
    return c.timing, json.loads(report.read_text())["stats"]


# --------------------------------------------------------------------------- whole run
def whole(args, ptoas: str) -> int:
    state_dir = Path(args.state)
    state_file = state_dir / "whole.json"
    cache = state_dir / "cache"
    state: dict = {}
    run = {"shards": args.shards, "jobs": args.jobs, "ops": args.ops, "ptoas": ptoas,
           "ptoas_version": _output([ptoas, "--version"]), "pto_isa_root": str(Path(args.pto_isa_root).resolve()),
           "commit": _output(["git", "-C", str(ROOT), "rev-parse", "HEAD"]),
           "changes": _output(["git", "-C", str(ROOT), "status", "--porcelain", "--", "ptospec", "specs"])}
    if args.resume and state_file.is_file():
        try:
            state = json.loads(state_file.read_text())
        except (OSError, ValueError) as exc:
            print(f"cannot read {state_file} ({exc}); start again without --resume", file=sys.stderr)
            return 2
        differ = [k for k in run if state.get(k) != run[k]]
        if differ:  # pieces of another checkout, binary or pto-isa would be merged into one figure
            print(f"{state_file} was written with other {', '.join(differ)} "
                  f"({'; '.join(f'{k}: {state.get(k)!r}' for k in differ)}); resume with those or start again "
                  "without --resume", file=sys.stderr)
            return 2
        print(f"resuming {state_file}: {', '.join(sorted(state['pieces'])) or 'nothing'} done", file=sys.stderr)
    else:
        if state_dir.exists() and any(state_dir.iterdir()):
            if not state_file.is_file():
                print(f"{state_dir} is not empty and holds no whole.json: not removing it; choose another --state",
                      file=sys.stderr)
                return 2
            shutil.rmtree(state_dir)  # a previous whole run's, started again from nothing (cold)
        state_dir.mkdir(parents=True, exist_ok=True)
        state = {**run, "pieces": {}}
    cache.mkdir(mode=0o700, exist_ok=True)
    pieces = state["pieces"]
    resumed = set(state.get("started", [])) - set(pieces)

    def save(name: str, timing: Timing, **figures) -> None:
        pieces[name] = {**asdict(timing), **figures, "resumed": name in resumed}
        state["started"] = sorted(set(state.get("started", [])) - {name})
        _write_state(state_file, state)

    def start(name: str) -> None:
        state["started"] = sorted({*state.get("started", []), name})
        _write_state(state_file, state)

    print(f"the whole run, state in {state_file} (--resume goes on from there); load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", file=sys.stderr)
    if "verifier" not in pieces:
        start("verifier")
        print("[verifier] every must-reject case through ptoas's verifier", file=sys.stderr, flush=True)
        out = state_dir / "verifier"
        with Clock() as c:
            proc = subprocess.run([*CLI, "ptoas", "verify-table", "--ptoas", ptoas, "--cases", "must-reject",
                                   "--report-dir", str(out), "--jobs", str(args.jobs),
                                   *(["--ops", *args.ops] if args.ops else [])], cwd=ROOT, stdout=subprocess.PIPE,
                                  text=True, env={k: v for k, v in os.environ.items() if k != "PTO_ISA_ROOT"})
                                  # the verifier alone: with a pto-isa root it would also run reproducers
        if proc.returncode != 0:
            print(f"verify-table failed (exit {proc.returncode})", file=sys.stderr)
            return 1
        data = json.loads((out / "report.json").read_text())
        save("verifier", c.timing, cases=data["cases"], runs=data["runs"],
             printed=data["cases"] - data["totals"]["not-expressed"])
    for label in ("cold", "warm"):
        for k in range(1, args.shards + 1):
            name = f"{label} {k}/{args.shards}"
            if name in pieces:
                continue
            start(name)
            print(f"[{name}] positive fixed cases through the lowering backend", file=sys.stderr, flush=True)
            t, stats = conformance(args, ptoas, args.ops, str(cache), state_dir / label / f"shard-{k}",
                                   f"{k}/{args.shards}", progress=True)
            if stats is None:
                return 1
            save(name, t, cases_verified=stats["cases_verified"], compiles=stats.get("compiles", 0),
                 units=stats.get("units", 0))
    merged = state_dir / "report"
    shards = [str(p) for p in sorted((state_dir / "cold").glob("shard-*"))]
    proc = subprocess.run([*CLI, "merge-reports", *shards, "--out", str(merged)], cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        print(f"merge-reports failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}", file=sys.stderr)
        return 1
    print_whole(state, merged)
    return 0


def _output(cmd: list[str]) -> str:
    """What ``cmd`` prints, stripped ('' when it cannot run): identifies what a whole run measured."""
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip()


def _write_state(path: Path, state: dict) -> None:
    """Whole or not at all: a run stopped while writing leaves the previous state for --resume."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1) + "\n")
    os.replace(tmp, path)


def print_whole(state: dict, merged: Path) -> None:
    pieces = state["pieces"]
    v = pieces["verifier"]
    tv = Timing(**{f: v[f] for f in ("wall", "user", "system", "load_before", "load_after")})
    which = ", ".join(state["ops"]) if state.get("ops") else "every instruction with an assembler operation"
    print(f"whole run of {which}, {state['jobs']} jobs ({state['ptoas']}):")
    print(f"verifier: {v['cases']} must-reject cases ({v['printed']} printed, the rest not expressible in the "
          f"dialect), {v['runs']} ptoas runs, in {tv.text()} = {v['printed'] / tv.wall:.1f} cases/s wall, "
          f"{v['printed'] / max(tv.cpu, 1e-9):.1f} per CPU second")
    print(target_line("every must-reject case through the verifier", tv.cpu, tv.wall, VERIFIER_TARGET_S))
    for label in ("cold", "warm"):
        parts = [p for n, p in pieces.items() if n.startswith(label)]
        if not parts:
            continue
        t = Timing(sum(p["wall"] for p in parts), sum(p["user"] for p in parts), sum(p["system"] for p in parts),
                   min(p["load_before"] for p in parts), max(p["load_after"] for p in parts))
        n = sum(p["cases_verified"] for p in parts)
        resumed = sum(1 for p in parts if p.get("resumed"))
        print(f"lowering backend, {label}: {n} positive fixed cases verified in {len(parts)} pieces, "
              f"{sum(p['compiles'] for p in parts)} compiles, in "
              f"{t.text(f'load between {t.load_before:.1f} and {t.load_after:.1f}')} = {n / t.wall:.1f} cases/s wall, "
              f"{n / max(t.cpu, 1e-9):.1f} per CPU second" + (f" ({resumed} piece(s) resumed)" if resumed else ""))
        if label == "cold":
            print(target_line("every positive fixed case through the lowering backend, cold", t.cpu, t.wall,
                              LOWERING_TARGET_S))
    cold = [p for n, p in pieces.items() if n.startswith("cold")]
    if cold:
        cpu = tv.cpu + sum(p["user"] + p["system"] for p in cold)
        wall = tv.wall + sum(p["wall"] for p in cold)
        print(f"whole run (the verifier's must-reject cases and the cold lowering): {wall:.0f} s wall, {cpu:.0f} s "
              f"CPU; {cpu / TARGET_CORES:.0f} s on {TARGET_CORES} idle cores if the work spread evenly")
    report = merged / "report.json"
    if report.is_file():
        data = json.loads(report.read_text())
        print(f"cases: {data['totals']}; attributed: {data.get('by_attribution', {})}; report: {merged / 'report.md'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ptoas", default=None, help="the assembler (default: $PTOSPEC_PTOAS, else ptoas on PATH)")
    ap.add_argument("--pto-isa-root", default=os.environ.get("PTO_ISA_ROOT"),
                    help="pto-isa checkout for the lowering backend (default: $PTO_ISA_ROOT; without it the sample "
                         "measures the verifier only)")
    ap.add_argument("--ops", nargs="+", default=None,
                    help=f"the sample's instructions (default: {' '.join(SAMPLE)}); with --whole, a whole run of these "
                         "only (to try the command)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel ptoas runs, compiles and runs")
    ap.add_argument("--batch", type=int, default=40, help="positive cases per verifier module (sample)")
    ap.add_argument("--whole", action="store_true", help="the whole run of every covered instruction (above)")
    ap.add_argument("--shards", type=int, default=4, help="pieces of the whole run's lowering (default 4)")
    ap.add_argument("--state", default=str(ROOT / "build" / "ptoas-bench" / "whole"),
                    help="the whole run's figures, build cache and reports (default: build/ptoas-bench/whole)")
    ap.add_argument("--resume", action="store_true", help="go on with the whole run recorded in --state")
    args = ap.parse_args()
    if args.whole and not args.pto_isa_root:
        ap.error("--whole needs --pto-isa-root (or $PTO_ISA_ROOT)")
    if args.shards < 1 or args.jobs < 1:
        ap.error("--shards and --jobs must be 1 or more")
    spec = load_ptoas_spec(load_database_cached())
    ptoas = find_ptoas(spec, args.ptoas)
    print(f"{ptoas.path} (ptoas {ptoas.version_text}); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} "
          f"CPUs; {args.jobs} jobs")
    if args.whole:
        return whole(args, ptoas.path)
    args.ops = args.ops or SAMPLE
    sample(args, ptoas.path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
