"""``ptospec conformance``: run the generated suite against a backend and report every divergence."""

from __future__ import annotations

import contextlib
import gc
import io
import os
import shlex
import sys
import time
from functools import partial
from pathlib import Path
from typing import TextIO

from ..errors import InvocationError
from ._common import stage_counter

# backends shipped with ptospec, usable by name even when the package's entry points are not installed
BUILTIN = {"cpusim": "ptospec.backends.cpusim:CpuSimBackend", "ptoas": "ptospec.backends.ptoas.backend:PtoasBackend"}
DERIVED = 32  # derived cases per fixed positive case (conformance/derive.py): data sets cost no compile
MAX_JOBS = 256


def register(sub) -> None:
    p = sub.add_parser(
        "conformance", help="run the generated conformance suite against a backend and report divergences",
        description="Run generated_tests through the ptospec pytest plugin with a progress line on stderr, then "
        "write report.json and report.md: every divergence (wrong value, write outside the valid region, accepts "
        "what the spec rejects, rejects what it accepts, harness error) grouped by op x mode x dtypes with the "
        "smallest case as repro, and whether the spec already records it. Exit 0 when every divergence is "
        "recorded in the spec, 1 otherwise, 2 on bad input.",
    )
    p.add_argument("--backend", default="reference",
                   help="reference (default), cpusim, an installed backend name, module:Class or file.py:Class")
    p.add_argument("--pto-isa-root", metavar="PATH", default=None,
                   help="pto-isa checkout for the cpusim and ptoas backends (default: $PTO_ISA_ROOT)")
    p.add_argument("--ptoas", metavar="PATH", default=None,
                   help="ptoas backend: the assembler (default: $PTOSPEC_PTOAS, else ptoas on PATH; docs/ptoas.md)")
    p.add_argument("--ops", nargs="+", metavar="OP", default=None, help="only these ops (names or comma lists)")
    p.add_argument("--profile", default=None,
                   help="only cases of this profile (default for cpusim: the simulator profile, cpu)")
    p.add_argument("--report-dir", metavar="DIR", default=None,
                   help="where report.json, report.md and repros/ go (default: build/conformance/<backend>)")
    p.add_argument("--derived", type=int, default=DERIVED, metavar="N",
                   help=f"derived cases per fixed positive case: other valid regions and data sets of the same "
                        f"static configuration (default {DERIVED}; 0: only the fixed cases)")
    p.add_argument("--property", action="store_true",
                   help="also run the hypothesis property tests (cpusim: one compile per new shape)")
    p.add_argument("-k", dest="keyword", default=None, metavar="EXPR", help="pytest -k expression to select cases")
    p.add_argument("--tests", metavar="DIR", default=None, help="generated suite (default: generated_tests/)")
    p.add_argument("--cxx", metavar="PATH", default=None, help="cpusim: clang++ to use (default: newest on PATH)")
    p.add_argument("--cache-dir", metavar="DIR", default=None,
                   help="cpusim: build cache (default: $PTOSPEC_CPUSIM_CACHE or ~/.cache/ptospec/cpusim)")
    p.add_argument("--shard", metavar="K/N", default=None,
                   help="run only shard K of N (whole instructions, the same deal on every machine); merge the "
                        "shard reports with `ptospec merge-reports`")
    p.add_argument("--jobs", "-j", type=int, default=None,
                   help="parallel compiles and runs (cpusim), and worker processes deriving and checking the cases of "
                        "a backend that prepares them in a batch (default: CPUs)")
    p.set_defaults(func=run)

    m = sub.add_parser("merge-reports", help="merge the reports of the shards of a conformance run into one",
                       description="Read the report.json of each shard of `ptospec conformance --shard K/N` (a report "
                       "directory or the file), and write one report.json and report.md into --out: every shard's "
                       "divergence groups (shards hold whole instructions, so no group is split), totals, counters "
                       "and skip reasons summed, matrices joined, reproducers copied.")
    m.add_argument("reports", nargs="+", metavar="REPORT", help="shard report directories or report.json files")
    m.add_argument("--out", required=True, metavar="DIR", help="where the merged report goes")
    m.set_defaults(func=_merge)


def _merge(args) -> int:
    from ..conformance.merge import merge_reports

    data = merge_reports([Path(p) for p in args.reports], Path(args.out))
    t = data["totals"]
    print(f"{len(args.reports)} report(s): {t.get('total', 0)} cases ({t.get('passed', 0)} passed, "
          f"{t.get('failed', 0)} failed, {t.get('skipped', 0)} skipped), {data['divergence_groups']} divergence "
          f"group(s); report: {Path(args.out) / 'report.md'}")
    return 0


def _op_names(db, given: list[str] | None) -> list[str]:
    if not given:
        return sorted(db.ops)
    names = [n.strip().lower() for item in given for n in item.split(",") if n.strip()]
    unknown = [n for n in names if n not in db.ops]
    if unknown:
        raise InvocationError(f"unknown op(s): {', '.join(unknown)} (known: {', '.join(sorted(db.ops))})",
                              rule="cli.ops", where="--ops")
    return list(dict.fromkeys(names))


def _backend_spec(name: str) -> str:
    from importlib.metadata import entry_points

    if name in BUILTIN and not any(ep.name == name for ep in entry_points(group="ptospec.backends")):
        return BUILTIN[name]
    return name


def _prepare_ptoas(args) -> None:
    """Find the assembler up front (one line when it is missing or too old) and hand it to the backend."""
    from ..backends.ptoas.discover import ENV, find_ptoas
    from ..backends.ptoas.spec import load_ptoas_spec
    from ..dbcache import load_database_cached

    found = find_ptoas(load_ptoas_spec(load_database_cached(getattr(args, "specs", None))), args.ptoas)
    os.environ[ENV] = found.path


def _prepare_cpusim(args) -> None:
    """Check the checkout and compiler up front (one-line errors) and hand them to the backend."""
    from ..backends.cpusim import toolchain

    checkout = toolchain.find_checkout(args.pto_isa_root)
    compiler = toolchain.find_compiler(args.cxx)
    os.environ[toolchain.ENV_ROOT] = str(checkout.root)
    os.environ[toolchain.ENV_CXX] = compiler.path
    if args.cache_dir:
        os.environ[toolchain.ENV_CACHE] = str(Path(args.cache_dir).resolve())
    if args.jobs:
        os.environ[toolchain.ENV_JOBS] = str(args.jobs)


class Progress:
    """pytest plugin: a one-line counter on stderr, plus what the report needs from the session."""

    def __init__(self, stream: TextIO, backend: str = "", derived: int = 0, workers: int = 0, db=None) -> None:
        self.db = db  # handed to the plugin so that the session does not load it again
        self.stream = stream
        self.backend = backend
        self.derived = derived
        self.workers = workers
        self.tty = stream.isatty()
        self.total = 0
        self.counts = {"passed": 0, "failed": 0, "skipped": 0}
        self.skips: dict[str, int] = {}
        self.stage = ""
        self.runner = None
        self.matrix = None
        self.collect_errors: list[str] = []
        self._last = 0.0
        self._printed = -1

    # -- hooks
    def pytest_collection_finish(self, session) -> None:
        # The database and the collected items live until the end: keep them out of every later full garbage
        # collection (pytest runs several at its end; each would walk them all again).
        gc.collect()
        gc.freeze()
        self.total = len(session.items)
        self.draw(force=True)

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.collect_errors.append(f"{report.nodeid}: {str(report.longrepr)[-500:]}")

    def pytest_pto_runner(self, config, runner) -> None:
        self.runner = runner
        runner.derive = self.derived  # before the plugin hands the cases to the backend
        runner.workers = self.workers

    def pytest_pto_progress(self, config, stage: str, done: int, total: int) -> None:
        self.stage = f"{stage} {done}/{total}"
        self.draw(force=done in (0, total))

    def pytest_runtest_logreport(self, report) -> None:
        if report.when == "call" or (report.when == "setup" and not report.passed):
            outcome = "passed" if report.passed else "skipped" if report.skipped else "failed"
            self.counts[outcome] += 1
            if report.skipped and isinstance(report.longrepr, tuple):
                reason = str(report.longrepr[2]).removeprefix("Skipped: ").removeprefix(f"{self.backend}: ")
                self.skips[reason] = self.skips.get(reason, 0) + 1
            self.stage = ""
            self.draw()

    def pytest_sessionfinish(self, session) -> None:
        from ..conformance.plugin import matrix

        self.matrix = matrix(session.config)
        self.draw(force=True)
        if self.tty:
            self.stream.write("\n")
        self.stream.flush()

    # -- drawing
    @property
    def done(self) -> int:
        return sum(self.counts.values())

    def line(self) -> str:
        c = self.counts
        text = (f"[{self.done}/{self.total}] passed {c['passed']}  failed {c['failed']}  "
                f"skipped {c['skipped']}")
        return f"{text}  | {self.stage}" if self.stage else text

    def draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            if force or now - self._last > 0.1:
                self.stream.write("\r" + self.line().ljust(78))
                self.stream.flush()
                self._last = now
            return
        step = max(1, self.total // 10)
        bucket = self.done // step
        if force or bucket != self._printed or (self.stage and now - self._last > 5):
            self.stream.write(self.line() + "\n")
            self.stream.flush()
            self._printed, self._last = bucket, now


def _progress_stream() -> TextIO:
    """pytest captures file descriptors 1 and 2 while tests run: draw on a duplicate of stderr."""
    try:
        return os.fdopen(os.dup(sys.stderr.fileno()), "w", buffering=1)
    except (OSError, ValueError, io.UnsupportedOperation):  # stderr is not a file (e.g. captured)
        return sys.stderr


def plan(db, ops: list[str], backend: str, profile: str | None, args, report_dir: Path) -> str:
    """What the run will do and how to make it shorter, printed before it starts."""
    which = f"all {len(ops)} ops" if len(ops) == len(db.ops) else f"{len(ops)} op(s): {', '.join(ops[:8])}" + (
        " ..." if len(ops) > 8 else "")
    where = f"profile {profile}" if profile else "every profile"
    cases = (f"each fixed positive case with {args.derived} derived case(s)" if args.derived
             else "the fixed cases only")
    extra = ", and the property tests" if args.property else ""
    shorter = [f"--ops {ops[0]} (fewer ops)"] if len(ops) > 1 else []
    if args.derived:
        shorter.append("--derived 0 (fixed cases only)")
    if not args.keyword:
        shorter.append("-k EXPR (a pytest selection, e.g. -k positive)")
    if not profile:
        shorter.append("--profile P (one profile)")
    hint = f"\nptospec conformance: shorter: {', '.join(shorter)}" if shorter else ""
    return (f"ptospec conformance: {backend} backend, {where}, {which}, {cases}{extra}; a counter follows, the "
            f"report goes to {report_dir}{hint}")


def _shared_database(db):
    """A plugin handing the command's database to the session before the ptospec plugin's own configure asks
    for it (to check --pto-profile), so that it is loaded once."""
    import pytest

    from ..conformance.plugin import share_database

    class SharedDatabase:
        @pytest.hookimpl(tryfirst=True)
        def pytest_configure(self, config) -> None:
            share_database(config, str(db.root), db)

    return SharedDatabase()



def _test_files(args, db, ops: list[str]) -> list[Path]:
    """The generated modules of ``ops`` (--tests, else generated_tests beside the specs); a missing one is an
    error when named, a note otherwise."""
    tests = Path(args.tests) if args.tests else Path(db.root).resolve().parent / "generated_tests"
    missing = [op for op in ops if not (tests / f"test_{op}.py").is_file()]
    if missing and (args.ops or len(missing) == len(ops)):
        raise InvocationError(f"no generated tests for {', '.join(missing)} in {tests}; run `ptospec gen-tests`",
                              rule="cli.tests", where="--tests")
    if missing:
        print(f"ptospec: note: no generated tests for {', '.join(missing)} (run `ptospec gen-tests`); "
              "running the others", file=sys.stderr)
        ops = [op for op in ops if op not in missing]
    files = [tests / f"test_{op}.py" for op in ops]
    return files


def run(args) -> int:
    from ..conformance.divergence import KNOWN_BUG, RECORDED
    from ..dbcache import load_database_cached

    _check_options(args)
    db = load_database_cached(getattr(args, "specs", None))  # a repeated run reads the database built before
    ops = _op_names(db, args.ops)
    backend = args.backend
    if backend == "ptoas":
        _prepare_ptoas(args)
    if backend in ("cpusim", "ptoas"):
        _prepare_cpusim(args)
    profile = _run_profile(db, backend, args.profile)
    files = _test_files(args, db, ops)
    report_dir = Path(args.report_dir or Path("build") / "conformance" / backend.replace(":", "_").replace("/", "_"))
    report_dir.mkdir(parents=True, exist_ok=True)

    print(plan(db, ops, backend, profile, args, report_dir), file=sys.stderr)
    stream = _progress_stream()
    progress = Progress(stream, _backend_spec(backend), args.derived, args.jobs or os.cpu_count() or 1, db)
    code, wall = _run_pytest(_pytest_args(args, db, files, profile), db, progress, report_dir / "pytest.log")
    if progress.runner is None:
        print(f"ptospec: error: the conformance run did not start (pytest exit {int(code)}); "
              f"see {report_dir / 'pytest.log'}", file=sys.stderr)
        for err in progress.collect_errors[:3]:
            print(f"ptospec: {err}", file=sys.stderr)
        return 2

    tally = progress.runner.tally
    stats = _run_stats(progress.runner, tally, args.derived, wall)
    report = _report(db, backend, args, progress, stats)
    json_path, md_path = report.write(report_dir)
    data = report.to_json()

    _print_summary(backend, profile, args.derived, progress, tally, stats, data, wall, md_path, json_path)
    attention = [e for e in data["divergences"] if e["verdict"] not in (RECORDED, KNOWN_BUG)]
    if int(code) not in (0, 1):  # interrupted, internal or usage error
        print(f"ptospec: pytest exited with status {int(code)}; see {report_dir / 'pytest.log'}", file=sys.stderr)
        return 2
    return 1 if attention else 0


def _check_options(args) -> None:
    """One clear error for a bad --derived, --shard, --jobs or --backend, before anything is loaded or run."""
    if args.derived < 0:
        raise InvocationError("--derived must be 0 or more", rule="cli.derived", where="--derived")
    if args.shard is not None:
        from ..conformance.shard import parse_shard

        parse_shard(args.shard)
    if args.jobs is not None and not 1 <= args.jobs <= MAX_JOBS:  # each job is a process (and a compiler)
        raise InvocationError(f"--jobs must be 1 .. {MAX_JOBS}, got {args.jobs}", rule="cli.jobs", where="--jobs")
    if args.backend not in BUILTIN:  # named before the run starts, not in the log of a run that did not start
        from ..conformance.load import backend_class

        backend_class(_backend_spec(args.backend))


def _run_profile(db, backend: str, profile: str | None) -> str | None:
    """--profile, checked; for the simulator without one, the database's one simulator profile."""
    if backend == "cpusim" and profile is None:
        sims = [p for p, spec in db.isa.profiles.items() if spec.basis == "simulator"]
        profile = sims[0] if len(sims) == 1 else None
    if profile is not None and profile not in db.isa.profiles:
        raise InvocationError(f"unknown profile {profile!r} (known: {', '.join(db.isa.profiles)})",
                              rule="cli.profile", where="--profile")
    return profile


def _pytest_args(args, db, files: list[Path], profile: str | None) -> list[str]:
    """pytest's command line for the generated modules ``files``: the backend, profile, shard and selection."""
    pytest_args = [*map(str, files), f"--pto-backend={_backend_spec(args.backend)}", f"--pto-specs={db.root}",
                   "-p", "no:cacheprovider", "-q", "--tb=line", "-o", "addopts=",
                   "--assert=plain"]  # the generated modules assert nothing: import them from bytecode, unparsed
    if profile:
        pytest_args.append(f"--pto-profile={profile}")
    if args.shard:
        pytest_args.append(f"--pto-shard={args.shard}")
    selection = [] if args.property else ["not test_property"]
    if args.keyword:
        selection.append(f"({args.keyword})")
    if selection:
        pytest_args += ["-k", " and ".join(selection)]
    from importlib.metadata import entry_points

    if not any(ep.name == "ptospec" for ep in entry_points(group="pytest11")):
        pytest_args += ["-p", "ptospec.conformance.plugin"]
    return pytest_args


def _run_pytest(pytest_args: list[str], db, progress, log_path: Path) -> tuple[int, float]:
    """Run pytest in this process, its output into ``log_path`` (never through a link) and the progress on
    ``progress``'s stream (closed after, unless it is stderr): (its exit code, wall seconds)."""
    import pytest

    stream = progress.stream
    start = time.perf_counter()
    try:
        log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with open(log_fd, "w", encoding="utf-8") as log, contextlib.redirect_stdout(log):
            code = pytest.main(pytest_args, plugins=[_shared_database(db), progress])
    finally:
        if stream is not sys.stderr:
            stream.close()
    return code, time.perf_counter() - start


def _run_stats(runner, tally: dict, derived: int, wall: float) -> dict[str, object]:
    """The run's figures for the report: cases verified, passed, failed, skipped, the rate and the backend's."""
    verified = tally["passed"] + tally["failed"]
    stats: dict[str, object] = {"wall_seconds": round(wall, 2), "derived_per_fixed_case": derived,
                                "cases_verified": verified, "cases_verified_passed": tally["passed"],
                                "cases_verified_failed": tally["failed"], "cases_not_run_skipped": tally["skipped"],
                                "cases_without_data_semantics": tally["no_data"],
                                "cases_cross_core_validator_only": tally["cross_core"],
                                "cases_verified_per_second": round(verified / wall, 1) if wall else 0.0}
    stats.update(runner.backend.stats())
    return stats


def _report(db, backend: str, args, progress, stats: dict):
    """The run's ``ConformanceReport``; a backend that can attribute its divergences (ptoas: the assembler's,
    or the simulator's?) replays each group's smallest case first."""
    from ..conformance.divergence import ConformanceReport

    runner = progress.runner
    environment = runner.backend.describe() if hasattr(runner.backend, "describe") else {}
    totals = {"total": progress.total, **progress.counts}
    command = "ptospec " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if len(sys.argv) > 2 else ""
    if args.shard:
        environment = {**environment, "shard": args.shard}
    divergences = list(runner.divergences)
    if divergences and hasattr(runner.backend, "attribute"):
        print(f"ptospec: attributing {len(divergences)} divergence(s): each group's smallest case replayed on the "
              "simulator without ptoas", file=sys.stderr)
        replays = partial(stage_counter(), "replays built and run")
        divergences = runner.backend.attribute(divergences, runner.rebuild, replays)
    return ConformanceReport(db, backend, divergences, totals,
                             matrix=progress.matrix.to_json(backend)["matrix"] if progress.matrix else [],
                             stats=stats, environment=environment, command=command, skipped=progress.skips)


def _print_summary(backend: str, profile: str | None, derived: int, progress, tally: dict, stats: dict, data: dict,
                   wall: float, md_path: Path, json_path: Path) -> None:
    """What a conformance run found, in a few lines: cases, verified cases, divergence groups, the report."""
    verified = tally["passed"] + tally["failed"]
    where = f" on {profile}" if profile else ""
    print(f"{backend}{where}: {progress.total} cases: {progress.counts['passed']} passed, "
          f"{progress.counts['failed']} failed, {progress.counts['skipped']} skipped in {wall:.1f} s")
    print(f"with {derived} derived case(s) each: {verified} cases verified ({tally['passed']} passed, "
          f"{tally['failed']} failed; {tally['skipped']} skipped), {stats['cases_verified_per_second']} "
          f"cases verified/s")
    if tally["no_data"]:
        print(f"of which {tally['no_data']} of instructions without data semantics: run, and checked to change no "
              "operand (no values compared)")
    if tally["cross_core"]:
        print(f"{tally['cross_core']} case(s) of cross-core FIFO instructions apart (not verified): checked against "
              "the validator and the executor's refusal (exec.cross-core); no backend runs one side of a FIFO alone")
    if "compiles" in stats:
        print(f"compiles: {stats['compiles']} (+{stats.get('syntax_checks', 0)} syntax checks, "
              f"{stats.get('pch_builds', 0)} PCH builds), cache hits: {stats.get('cache_hits', 0)} of "
              f"{stats.get('units', 0)} units, {stats.get('cases_run', 0)} cases run")
    entries = data["divergences"]
    print(f"divergences: {sum(e['count'] for e in entries)} case(s) in {len(entries)} group(s)"
          + "".join(f", {n} {v}" for v, n in sorted(data["by_verdict"].items())))
    if data.get("by_attribution"):
        print("attributed (cases): " + ", ".join(f"{v} {n}" for v, n in sorted(data["by_attribution"].items())))
    for e in entries:
        spec = f" ({e['difference']})" if e["difference"] else f" ({e['cause'][:70]})"
        who = f"; {e['attribution']}" if e.get("attribution") else ""
        print(f"  {e['category']:<20} {e['op']} {e['mode']}: {e['count']} case(s) over {len(e['by_dtypes'])} "
              f"dtype binding(s), {e['verdict']}{who}{spec}")
    print(f"report: {md_path} and {json_path.name}")
