"""``ptospec ptoas``: the PTO assembler as a backend under test (build, find, verifier table, coverage) and its
samples against their goldens."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ..errors import InvocationError
from ._common import stage_counter


def register(sub) -> None:
    p = sub.add_parser("ptoas", help="the PTO assembler (PTOAS): build it, find it, test its verifier",
                       description="The PTO assembler (hw-native-sys/PTOAS) as a backend under test. Nothing of "
                       "PTOAS is in ptospec: build a checkout you pass in, or point at a binary with --ptoas PATH "
                       "or $PTOSPEC_PTOAS (else `ptoas` on PATH). See docs/ptoas.md.")
    cmds = p.add_subparsers(dest="ptoas_command", metavar="ACTION")
    cmds.required = True

    b = cmds.add_parser("build", help="build a PTOAS checkout into a cache directory and print the binary's path",
                        description="Check the Debian packages and tools of specs/ptoas.yaml, configure the checkout "
                        "with cmake (Ninja, LLVM/MLIR 19, no Python binding) unless the build directory is already "
                        "configured for it, build tools/ptoas/ptoas with ninja and print its path. A cold build is "
                        "about 620 to 780 s of CPU (6 to 7 minutes on two idle cores).")
    b.add_argument("--source", required=True, metavar="DIR", help="a checkout of hw-native-sys/PTOAS")
    b.add_argument("--cache", metavar="DIR", default=None,
                   help="cache directory (default: $PTOSPEC_PTOAS_CACHE or ~/.cache/ptospec/ptoas); the build goes "
                        "into a directory of it named after the checkout's path")
    b.add_argument("--build-dir", metavar="DIR", default=None,
                   help="build in this directory instead (an existing build of the same checkout is reused)")
    b.add_argument("--jobs", "-j", type=int, default=None, help="ninja's parallel jobs (default: ninja's)")
    b.set_defaults(func=_build)

    f = cmds.add_parser("find", help="say which ptoas would be used, and its version",
                        description="Discovery: --ptoas PATH, else $PTOSPEC_PTOAS, else ptoas on PATH. Exit 2 with "
                        "one line when none is found or it is older than specs/ptoas.yaml's minimum_version.")
    f.add_argument("--ptoas", metavar="PATH", default=None)
    f.set_defaults(func=_find)

    v = cmds.add_parser("verify-table", help="every positive and must-reject case through ptoas's verifier",
                        description="Print every positive and must-reject case of the generated suite (profiles "
                        "with an assembler target: a2a3 -> --pto-arch=a3, a5 -> a5) as a .pto function and run it "
                        "through ptoas. Writes report.json, report.md and one reproducer .pto per disagreement "
                        "group into the report directory. Exit 0 when ptoas ran, whatever it said.")
    v.add_argument("--ptoas", metavar="PATH", default=None)
    v.add_argument("--ops", nargs="+", metavar="OP", default=None, help="only these ops (names or comma lists)")
    v.add_argument("--profile", default=None, help="only this profile's cases (a2a3 or a5)")
    v.add_argument("--cases", choices=("all", "positive", "must-reject"), default="all",
                   help="which cases of the suite (default: all)")
    v.add_argument("--tests", metavar="DIR", default=None, help="generated suite (default: generated_tests/)")
    v.add_argument("--report-dir", metavar="DIR", default="build/ptoas-verifier",
                   help="where report.json, report.md and repros/ go (default: build/ptoas-verifier)")
    v.add_argument("--jobs", "-j", type=int, default=None, help="ptoas processes at a time (default: CPUs)")
    v.add_argument("--batch", type=int, default=40, help="positive cases per module (default 40)")
    v.add_argument("--pto-isa-root", metavar="PATH", default=None,
                   help="also run each gap and strict group's reproducer case on the CPU simulator of this pto-isa "
                        "checkout (default: $PTO_ISA_ROOT; without either, not run): does it compile, assert, run?")
    v.set_defaults(func=_verify_table)

    s = cmds.add_parser("samples", help="the assembler's samples with NumPy goldens, run with their own arguments",
                        description="Run every sample of a PTOAS checkout that has a NumPy golden through the program "
                        "layer as the assembler's board-test harness runs it: the case metadata its tooling derives "
                        "from the kernel (derived here from the .pto), the golden script unchanged in a scratch "
                        "directory, run_program on the buffers it wrote, the sample's own compare. Prints each "
                        "sample as match, mismatch, refused (the rule), error (probably ours) or not-runnable (why), "
                        "and the totals. Exit 1 when a sample mismatches, is refused or ends in error, or when none "
                        "was runnable. It runs the checkout's own Python scripts (with a minimal environment). See "
                        "docs/programs.md.")
    s.add_argument("--source", required=True, metavar="DIR", help="a checkout of hw-native-sys/PTOAS")
    s.add_argument("--only", nargs="+", metavar="TEXT", default=[],
                   help="only the samples whose Dir/case contains one of these texts")
    s.add_argument("--ptoas", metavar="PATH", default=None,
                   help="a built ptoas: also compile each kernel and check the metadata against the tooling's own, "
                        "and run the samples whose kernel only a <case>.py builder makes (on ptospec's MLIR "
                        "stand-in; ptoas judges the module, the ptobc beside it prints it again)")
    s.add_argument("--keep", metavar="DIR", default=None, help="leave each sample's scratch files under DIR")
    s.add_argument("--json", metavar="FILE", default=None, help="write the outcomes to FILE")
    s.set_defaults(func=_samples)

    c = cmds.add_parser("coverage", help="the instructions without a ptoas operation, each with its reason",
                        description="List the database's instructions the assembler's dialect has no operation "
                        "for (`uncovered` in specs/ptoas.yaml) with their reasons, and how many it covers.")
    c.add_argument("--lang", choices=("en", "zh"), default="en")
    c.set_defaults(func=_coverage)


def _db_and_spec(args):
    from ..backends.ptoas.spec import load_ptoas_spec
    from ..dbcache import load_database_cached

    db = load_database_cached(getattr(args, "specs", None))
    return db, load_ptoas_spec(db)


def _build(args) -> int:
    from ..backends.ptoas.build import build_ptoas

    _, spec = _db_and_spec(args)
    t0 = time.monotonic()
    binary = build_ptoas(spec, Path(args.source), Path(args.cache) if args.cache else None,
                         Path(args.build_dir) if args.build_dir else None, args.jobs)
    print(f"ptospec ptoas build: done in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    print(binary)
    return 0


def _samples(args) -> int:
    from ..samples.report import run_samples

    db, _ = _db_and_spec(args)
    ptoas = Path(args.ptoas) if args.ptoas else None
    if ptoas is not None and not os.access(ptoas, os.X_OK):
        raise InvocationError(f"--ptoas {ptoas}: not an executable file")
    return run_samples(db, Path(args.source), args.only, ptoas, Path(args.keep) if args.keep else None,
                       Path(args.json) if args.json else None)


def _find(args) -> int:
    from ..backends.ptoas.discover import find_ptoas

    _, spec = _db_and_spec(args)
    found = find_ptoas(spec, args.ptoas)
    print(f"{found.path} (ptoas {found.version_text}, found by {found.found_by})")
    return 0


def _coverage(args) -> int:
    _, spec = _db_and_spec(args)
    db, _ = _db_and_spec(args)
    covered = [op for op in sorted(db.ops) if db.ops[op].mnemonic not in spec.uncovered]
    print(f"{len(covered)} of {len(db.ops)} instructions have an operation of the assembler's dialect; "
          f"{len(spec.uncovered)} have none:")
    for name, reason in sorted(spec.uncovered.items()):
        print(f"  {name}: {reason.get(args.lang) or reason['en']}")
    return 0


def _op_list(db, given: list[str] | None) -> list[str] | None:
    if not given:
        return None
    names = [n.strip().lower() for g in given for n in g.split(",") if n.strip()]
    unknown = [n for n in names if n not in db.ops]
    if unknown:
        raise InvocationError(f"unknown op(s): {', '.join(unknown)}", rule="cli.op", where="--ops")
    return names


def _verify_table(args) -> int:
    from ..backends.ptoas.discover import find_ptoas
    from ..backends.ptoas.table import CATEGORIES, build_table, suite_cases, write_report

    db, spec = _db_and_spec(args)
    found = find_ptoas(spec, args.ptoas)
    if args.profile and args.profile not in spec.arch:
        raise InvocationError(f"profile {args.profile!r} has no assembler target (targets: "
                              f"{', '.join(spec.arch)})", rule="cli.profile", where="--profile")
    tests = Path(args.tests) if args.tests else Path("generated_tests")
    if not tests.is_dir():
        raise InvocationError(f"no generated suite at {tests} (run `ptospec gen-tests` or pass --tests DIR)",
                              rule="conformance.tests")
    ops = _op_list(db, args.ops)
    if ops:
        missing = [o for o in ops if not (tests / f"test_{o}.py").is_file()]
        if missing:
            raise InvocationError(f"no generated tests for {', '.join(missing)} in {tests}", rule="conformance.tests")
    t0 = time.monotonic()
    kinds = {"all": (True, False), "positive": (True,), "must-reject": (False,)}[args.cases]
    cases = [(tid, c) for tid, c in suite_cases(tests, ops)
             if (not args.profile or c.profile == args.profile) and c.positive in kinds]
    progress = stage_counter()
    workers = args.jobs or os.cpu_count() or 1
    table = build_table(db, spec, found.path, f"ptoas {found.version_text}", cases, workers, args.batch, progress)
    table.seconds = time.monotonic() - t0
    simulator = None
    root = args.pto_isa_root or os.environ.get("PTO_ISA_ROOT")
    if root:
        from ..backends.ptoas.simulator import simulator_outcomes
        from ..backends.ptoas.table import representatives

        reps = representatives(table)
        print(f"running {len(reps)} reproducers on the CPU simulator ({root})", file=sys.stderr, flush=True)
        simulator = simulator_outcomes(db, reps, root, args.jobs, progress)
    data = write_report(db, spec, table, Path(args.report_dir), simulator)
    totals = data["totals"]
    print(f"{data['cases']} cases of {data['ops']} ops in {data['seconds']} s ({data['runs']} ptoas runs): "
          + ", ".join(f"{c} {totals[c]}" for c in CATEGORIES))
    print(f"report: {Path(args.report_dir) / 'report.md'}")
    return 0
