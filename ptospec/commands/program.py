"""``ptospec check-program``, ``run-program`` and ``compare-program``: whole kernels in the PTO assembler's
dialect, on the reference interpreter and the CPU simulator."""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvocationError
from ..program.errors import RuleViolation
from ..program.limits import MAX_SECONDS, MAX_STEPS
from ._common import database

if TYPE_CHECKING:
    import numpy as np

MAX_GLOBAL_BYTES = 2 << 30  # per argument file


def register(sub) -> None:
    _register_check(sub)
    _register_run(sub)
    _register_compare(sub)


def _register_check(sub) -> None:
    p = sub.add_parser(
        "check-program", help="check every instruction of a .pto program (the PTO assembler's dialect)",
        description="Read a program written in the PTO assembler's dialect (module, func.func, arith, scf, the "
        "view and tile-buffer instructions, every database instruction) and check each instruction with the "
        "validator, walking every function, loop body and branch once. Values only known at run time (a "
        "dynamic valid shape, a loop index) make the rules that need them deferred, reported but not "
        "guessed. The profile comes from the module's pto.target_arch (a3 -> a2a3, a5 -> a5; a3 when "
        "absent) unless --profile is given. Prints one line per violation (file:line:col [rule] message), "
        "the findings (what the target allows and a reader should know, such as a partition beyond a dynamic "
        "view's declared shape), then a summary. Exit status: 0 clean, 1 violations (or, with --strict, "
        "findings and statements whose instruction is not in the database), 2 unreadable input.",
        epilog="example:\n  ptospec check-program kernel.pto --profile a5",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("program", help=".pto file")
    p.add_argument("--profile", "-p", help="profile to check against (default: from pto.target_arch)")
    p.add_argument("--strict", action="store_true",
                   help="findings are violations, and a statement whose instruction is not in the database fails")
    p.add_argument("--deferred", action="store_true", help="list every deferred check, not just their count")
    p.add_argument("--pto-level", choices=["level1", "level2", "level3"], default=None,
                   help="the assembler's build level the program is meant for (ptoas --pto-level): level3 needs addr "
                   "on every alloc_tile, the others allow none (default: level3 when the module places tiles with "
                   "addr or tassign, else not checked)")
    p.add_argument("--enable-insert-sync", action="store_true",
                   help="the program is meant for ptoas --enable-insert-sync (which refuses tassign)")
    p.add_argument("--hazards", action="store_true",
                   help="also check the synchronisation statically: conflicting accesses on pipes no flag, event "
                   "or barrier orders on some path (a \"may\" finding where values known only at run time decide), "
                   "and protocol errors (a set never waited for, a wait never satisfied, an event id set while in "
                   "flight); exit status 1 when there are any (docs/hazards.md)")
    p.add_argument("--intra-pipe", action="store_true",
                   help="with --hazards, also report dependent instructions of one pipe without a barrier between "
                   "them, on the pipes the profile does not order by itself")
    p.set_defaults(func=run_check)


def _register_run(sub) -> None:
    r = sub.add_parser(
        "run-program", help="run a .pto kernel with the reference interpreter on .npy inputs",
        description="Run a kernel written in the PTO assembler's dialect with the NumPy reference interpreter. "
        "Each pointer argument is global memory given as an array (--arg NAME=FILE.npy, NAME without %; "
        "it is read as a flat buffer of the pointer's element type); scalar arguments take --arg NAME=VALUE. "
        "Every instruction is validated before it runs; the first violation stops the run with its "
        "file:line:col and rule. alloc_tile without addr gets storage of its own (zeros), with addr = %c "
        "the bytes at that offset of its location's buffer, so tiles placed at overlapping addresses share "
        "bytes. Flags, events and barriers do nothing: instructions run one after another. With --blocks N "
        "the kernel runs once per block (get_block_idx = 0 .. N-1) on the same global memory. The final "
        "contents of every pointer argument are written to --output (.npz, one member per argument, in "
        "the shape it was given). A finding (what the target allows and a reader should know, such as a partition "
        "beyond a dynamic view's declared shape inside its buffer) is listed after the run; --strict stops the run "
        "at it. Exit status: 0 ran, 1 a rule violation (every rule the failing statement breaks is listed), 2 "
        "unusable input. With --backend cpusim the instructions the reference run executed are replayed "
        "on the CPU simulator (one C++ program over the pto-isa headers, cached by content) and the "
        "simulator's final buffers are written instead; compare-program compares the two.",
        epilog="example:\n  ptospec run-program vadd.pto --arg arg0=a.npy --arg arg1=b.npy --arg arg2=c.npy "
        "-o out.npz",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _kernel_options(r)
    r.add_argument("--kernels", default=None, metavar="CUBE,VECTOR",
                   help="run a cube kernel and a vector kernel of the module at the same time (each in a thread, "
                   "the vector one once per sub-block), so TPUSH/TPOP/TFREE move tiles between them; every kernel's "
                   "arguments are bound by name from --arg")
    r.add_argument("--strict", action="store_true", help="a finding stops the run as a rule violation does")
    r.add_argument("--subblocks", type=int, default=1, help="vector sub-blocks with --kernels: 1 (default) or 2")
    r.add_argument("--max-steps", type=int, default=None, metavar="N",
                   help=f"statements the reference run may execute before it stops with program.step-limit (a loop "
                   f"that never ends; default {MAX_STEPS:,}, about five minutes; with --kernels, per kernel)")
    r.add_argument("--max-seconds", type=_seconds, default=MAX_SECONDS, metavar="S",
                   help=f"wall-clock seconds the reference run may take before it stops with program.time-limit "
                   f"(default {MAX_SECONDS:g})")
    r.add_argument("--output", "-o", default=None, help="output .npz, written at exactly this path "
                   "(default: <program>-out.npz)")
    r.add_argument("--backend", default="reference", choices=["reference", "cpusim"],
                   help="where to run it: the reference interpreter (default), or the CPU simulator (the reference "
                   "run decides the control flow, one C++ program over the simulator's headers replays its "
                   "instructions; needs --pto-isa-root and clang++ 17+)")
    _simulator_options(r)
    r.set_defaults(func=run_run)


def _register_compare(sub) -> None:
    c = sub.add_parser(
        "compare-program", help="run a .pto kernel on the reference interpreter and the CPU simulator and compare",
        description="Run a kernel with the reference interpreter, replay the instructions it executed on the CPU "
        "simulator (one C++ program over the pto-isa headers, built once per set of instruction signatures and "
        "cached), and compare: what every executed instruction wrote (tiles in their valid region, views element "
        "by element; the op's tolerance where its numerics give one, else exact), then the final global buffers. "
        "Prints the first instruction (file:line:col) whose output differs with its differing elements, the "
        "later ones, and every differing element of the final buffers with the instruction that wrote it. "
        "The reference runs on the program's profile (from pto.target_arch, or --profile; --profile cpu is "
        "the simulator's own profile). Exit status: 0 same, 1 different (or the simulator stopped), 2 unusable "
        "input.",
        epilog="example:\n  ptospec compare-program vadd.pto --pto-isa-root ../pto-isa --arg arg0=a.npy "
        "--arg arg1=b.npy --arg arg2=c.npy",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _kernel_options(c)
    c.add_argument("--output", "-o", default=None, help="also write the simulator's final buffers to this .npz")
    _simulator_options(c)
    c.set_defaults(func=run_compare)


def _simulator_options(p) -> None:
    p.add_argument("--pto-isa-root", default=None, help="pto-isa checkout for the CPU simulator "
                   "(default: $PTO_ISA_ROOT)")
    p.add_argument("--cache-dir", default=None, help="build cache of the simulator programs "
                   "(default: $PTOSPEC_CPUSIM_CACHE or ~/.cache/ptospec/cpusim)")
    p.add_argument("--source", default=None, metavar="FILE.cpp", help="also write the generated C++ program here")


def _kernel_options(p) -> None:
    """The options that say which kernel runs on what (run-program and compare-program)."""
    p.add_argument("program", help=".pto file")
    p.add_argument("--arg", "-a", action="append", metavar="NAME=FILE.npy|VALUE", help="one kernel argument")
    p.add_argument("--profile", "-p", help="profile of the reference run (default: from pto.target_arch)")
    p.add_argument("--func", dest="entry", metavar="NAME",
                   help="the kernel to run (default: the pto.entry function, or the one nothing calls)")
    p.add_argument("--blocks", type=int, default=1, help="number of blocks to run the kernel on (default 1)")
    p.add_argument("--cast", action="store_true", help="convert argument arrays to their pointer's element type")
    p.add_argument("--hazards", action="store_true",
                   help="also find synchronisation hazards while the reference runs: conflicting accesses (read "
                   "after write, write after read, write after write) on pipes no flag, event or barrier orders, "
                   "and flags set and never waited for (or the converse); exit status 1 when there are any "
                   "(docs/hazards.md)")
    p.add_argument("--intra-pipe", action="store_true",
                   help="with --hazards, also report dependent instructions of one pipe without a barrier between "
                   "them, on the pipes the profile does not order by itself (isa.yaml pipes: ordered_within)")


def run_check(args) -> int:
    from ..program.api import check_program, read_program

    db = database(args)
    start = time.perf_counter()
    program = read_program(args.program)
    level = int(args.pto_level[-1]) if args.pto_level else None
    if args.intra_pipe and not args.hazards:
        raise InvocationError("--intra-pipe goes with --hazards", rule="cli.args", where="--intra-pipe")
    collector = None
    if args.hazards:
        from ..program.api import choose_profile
        from ..program.hazards.static import Collector

        collector = Collector(db, choose_profile(db, program, args.profile))
    result = check_program(db, program, args.profile, strict=args.strict, level=level, tracer=collector,
                           insert_sync=args.enable_insert_sync)
    seconds = time.perf_counter() - start
    for f in result.violations:
        print(f.one_line())
    for f in result.reported:
        print(f"{f.pos}: finding: [{f.rule}] {f.message}")
    if args.deferred:
        for f in result.deferred:
            print(f"{f.pos}: deferred: {f.message}")
    s = result.stats
    print(f"{program.path}: profile {result.profile}, {result.functions} function(s), {s.statements} statement(s) "
          f"walked, {s.instructions} database instruction(s) checked: {s.legal} legal, "
          f"{len(result.violations)} violation(s), {len(result.reported)} finding(s), "
          f"{len(result.deferred)} deferred to run time "
          f"({seconds:.2f} s)")
    if s.unknown:
        listed = ", ".join(f"{name} x{count} (first at {s.first_unknown[name]})" for name, count in
                           sorted(s.unknown.items(), key=lambda kv: (-kv[1], kv[0])))
        print(f"{sum(s.unknown.values())} statement(s) whose instruction is not in the database: {listed}")
    hazards = False
    if collector is not None:
        from ..program.hazards.static import analyse

        report = analyse(db, program, result.profile, collector, args.intra_pipe)
        if not report.auto_sync:
            for line in report.lines():
                print(line)
        print(report.summary("static check"))
        hazards = not report.auto_sync and not report.clean
    if result.violations or (args.strict and s.unknown) or hazards:
        return 1
    return 0


def _arguments(items: list[str] | None) -> dict[str, object]:
    from ._arrays import FLOAT_TEXT, INT_TEXT, load_arrays

    values: dict[str, object] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        name, value = name.strip().lstrip("%"), value.strip()
        if not sep or not name or not value:
            raise InvocationError(f"--arg expects NAME=FILE.npy or NAME=NUMBER, got {item!r}", rule="cli.args",
                                  where="--arg")
        if name in values:
            raise InvocationError(f"argument {name!r} given twice", rule="cli.args", where="--arg")
        if INT_TEXT.fullmatch(value):
            values[name] = int(value)
        elif len(value) <= 64 and FLOAT_TEXT.fullmatch(value):
            values[name] = float(value)
        else:
            loaded = load_arrays(value, "--arg", MAX_GLOBAL_BYTES)
            if isinstance(loaded, dict):
                raise InvocationError(f"{value} is an .npz archive; give one .npy per argument", rule="run.input",
                                      where="--arg")
            values[name] = loaded
    return values


def _write(path: Path, outputs: dict[str, np.ndarray], option: str = "--output") -> None:
    from ..outputs import write_npz

    write_npz(path, outputs, rule="run.output", where=option)


def _summary(result) -> str:
    s = result.stats
    rate = s.statements / result.seconds if result.seconds > 0 else float("inf")
    return (f"@{result.function} on {result.profile}, {result.blocks} block(s): {s.statements} statement(s), "
            f"{s.instructions} database instruction(s) in {result.seconds:.3f} s ({rate:,.0f} statements/s)")


def _detector(db, program, args):
    """The race detector the run feeds (``--hazards``), or None."""
    if args.intra_pipe and not args.hazards:
        raise InvocationError("--intra-pipe goes with --hazards", rule="cli.args", where="--intra-pipe")
    if not args.hazards:
        return None
    from ..program.api import choose_profile
    from ..program.hazards.dynamic import HazardDetector

    return HazardDetector(db, choose_profile(db, program, args.profile), args.intra_pipe)


def _hazard_report(detector) -> bool:
    """Print what the detector found; whether it found races or protocol errors (not for a kernel written for
    the assembler's automatic synchronisation, which is said to be one)."""
    if detector is None:
        return False
    report = detector.report()
    if not report.auto_sync:
        for line in report.lines():
            print(line)
    print(report.summary("reference run"))
    return not report.auto_sync and not report.clean


def _simulate(db, program, args, detector=None):
    """The reference run with a trace, then its replay on the simulator."""
    from ..program.api import choose_profile, run_program
    from ..program.cpusim import build_and_run
    from ..program.trace import Recorder, Tee

    recorder = Recorder(choose_profile(db, program, args.profile))
    result = run_program(db, program, _arguments(args.arg), args.profile, args.entry, args.blocks, args.cast,
                         tracer=Tee(recorder, detector) if detector is not None else recorder,
                         strict=getattr(args, "strict", False),
                         max_seconds=getattr(args, "max_seconds", MAX_SECONDS))
    sim = build_and_run(db, recorder.trace, args.pto_isa_root, args.cache_dir)
    if args.source:
        from ..outputs import replace_file

        replace_file(args.source, sim.source, rule="run.output", where="--source")
    built = "taken from the cache" if sim.built_cached else f"built in {sim.compile_seconds:.1f} s"
    print(_summary(result))
    for line in result.finding_lines():
        print(f"finding: {line}")
    print(f"simulator: {len(recorder.trace.steps)} step(s) in {sim.groups} compiled function(s), {built}, "
          f"ran in {sim.run_seconds:.3f} s; {recorder.trace.synchronisation} synchronisation instruction(s) not "
          "replayed (no data semantics; the replay runs in program order)")
    return recorder.trace, result, sim


def _seconds(text: str) -> float:
    """A positive number of seconds, ASCII digits only (``1_000`` or ``inf`` are refused)."""
    if not re.fullmatch(r"[0-9]{1,9}(\.[0-9]{1,9})?", text.strip()) or float(text) <= 0:
        raise argparse.ArgumentTypeError(f"expects a positive number of seconds, got {text!r}")
    return float(text)


def _final(trace, sim) -> dict[str, np.ndarray]:
    return {buf.name: arr.reshape(buf.shape) for buf, arr in zip(trace.buffers, sim.buffers, strict=True)}


def run_run(args) -> int:
    try:
        return _run(args)
    except RuleViolation as exc:  # every rule the statement breaks; the input itself was usable
        for line in exc.lines():
            print(line)
        return 1


def _run(args) -> int:
    if args.max_steps is not None and args.max_steps < 1:
        raise InvocationError(f"--max-steps must be 1 or more, got {args.max_steps}", rule="cli.args",
                              where="--max-steps")
    from ..program.api import read_program, run_kernels, run_program

    db = database(args)
    program = read_program(args.program)
    out_path = Path(args.output or f"{Path(args.program).stem}-out.npz")
    detector = _detector(db, program, args)
    if detector is not None and args.kernels:
        raise InvocationError("--hazards watches one kernel (a core's pipes); it does not go with --kernels",
                              rule="cli.args", where="--hazards")
    if args.backend == "cpusim":
        if args.kernels:
            raise InvocationError("--kernels runs on the reference interpreter only", rule="cli.args",
                                  where="--kernels")
        trace, _result, sim = _simulate(db, program, args, detector)
        if sim.stopped:
            print(sim.stopped)
            if sim.log.strip():
                print(sim.log.strip()[-2000:])
            return 1
        outputs = _final(trace, sim)
    else:
        if args.source or args.pto_isa_root or args.cache_dir:
            raise InvocationError("--pto-isa-root, --cache-dir and --source go with --backend cpusim",
                                  rule="cli.args", where="--backend")
        if args.kernels:
            if args.entry or args.blocks != 1:
                raise InvocationError("--kernels names the functions that run together; it goes without --func "
                                      "and --blocks", rule="cli.args", where="--kernels")
            result = run_kernels(db, program, _arguments(args.arg), [k.strip().lstrip("@") for k in
                                 args.kernels.split(",")], args.subblocks, args.profile, args.cast, args.max_steps,
                                 strict=args.strict, max_seconds=args.max_seconds)
        else:
            result = run_program(db, program, _arguments(args.arg), args.profile, args.entry, args.blocks,
                                 args.cast, args.max_steps, strict=args.strict, tracer=detector,
                                 max_seconds=args.max_seconds)
        print(_summary(result))
        for line in result.finding_lines():
            print(f"finding: {line}")
        outputs = result.outputs
    _write(out_path, outputs)
    for name, arr in outputs.items():
        print(f"{name}: {arr.shape} {arr.dtype}")
    print(f"wrote {out_path}")
    return 1 if _hazard_report(detector) else 0


def run_compare(args) -> int:
    from ..program.api import read_program
    from ..program.compare import compare, report_lines

    db = database(args)
    program = read_program(args.program)
    detector = _detector(db, program, args)
    trace, _result, sim = _simulate(db, program, args, detector)
    comparison = compare(db, trace, sim)
    for line in report_lines(comparison):
        print(line)
    if sim.stopped and sim.log.strip():
        print(sim.log.strip()[-2000:])
    if args.output and sim.buffers:
        _write(Path(args.output), _final(trace, sim))
        print(f"wrote {args.output} (the simulator's final buffers)")
    hazards = _hazard_report(detector)
    return 0 if comparison.same and not hazards else 1
