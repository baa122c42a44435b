"""Check and run whole programs: what ``ptospec check-program`` and ``ptospec run-program`` call."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import PtospecError
from ..executor import numpy_dtype
from ..model import Database
from . import (
    arith,
    handlers,  # noqa: F401  (registers the dialect's operation handlers with the walker)
)
from .errors import ProgramError
from .limits import MAX_SECONDS
from .memref_types import MemrefError, MemrefType, is_global, parse_memref
from .memrefs import argument_view, reach
from .spec import program_spec
from .syntax import Operation, Program, parse_program
from .values import UNKNOWN, GlobalBuffer, PartitionView, Pointer
from .walker import Finding, Stats, Tracer, Walker, call_function, func_signature, functions, pointer_type

MAX_FILE = 16 << 20
_ARCH = re.compile(r'^"?pto\.target_arch"?$')
_DEVICE = re.compile(r'^"?pto\.device-spec"?$')


def read_program(path: str | Path) -> Program:
    p = Path(path)
    try:
        if p.exists() and not p.is_file():  # a directory, a FIFO (whose read would wait for a writer), a device
            raise PtospecError("not a regular file", where=str(path), rule="program.read")
        if p.stat().st_size > MAX_FILE:
            raise ProgramError(f"file is larger than {MAX_FILE} bytes", "program.too-long", None)
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise PtospecError(f"cannot read {path}: {exc.strerror}", where=str(path), rule="program.read") from None
    except UnicodeDecodeError:
        raise PtospecError("not UTF-8 text", where=str(path), rule="program.read") from None
    return parse_program(text, str(path))


def _module_attribute(program: Program, name: re.Pattern[str]) -> str | None:
    for op in program.top:
        if op.name != "module":
            continue
        toks = op.tail
        for k, t in enumerate(toks):
            if name.match(t.text) and k + 2 < len(toks) and toks[k + 1].text == "=":
                return toks[k + 2].text.strip('"')
    return None


def target_arch(program: Program) -> str | None:
    return _module_attribute(program, _ARCH)


def device_target(program: Program, prefixes: dict[str, str]) -> tuple[str | None, str | None]:
    """The module's ``pto.device-spec`` and the target its prefix names (None when no prefix matches)."""
    device = _module_attribute(program, _DEVICE)
    if device is None:
        return None, None
    return device, next((t for p, t in prefixes.items() if device.startswith(p)), None)


def choose_profile(db: Database, program: Program, override: str | None) -> str:
    if override:
        if override not in db.isa.profiles:
            raise PtospecError(f"unknown profile {override!r} (profiles: {', '.join(db.isa.profiles)})",
                               rule="cli.profile")
        return override
    spec = program_spec(db)
    device, by_device = device_target(program, spec.device_specs)
    arch = target_arch(program) or by_device or spec.default_target
    if arch not in spec.targets:
        raise ProgramError(f"pto.target_arch {arch!r} is not a target the database knows "
                           f"({', '.join(spec.targets)}); give --profile", "program.target", None)
    if by_device is not None and spec.targets[by_device] != spec.targets[arch]:
        raise ProgramError(f"pto.target_arch {arch!r} (profile {spec.targets[arch]}) conflicts with pto.device-spec "
                           f"{device!r} (target {by_device}, profile {spec.targets[by_device]}); give --profile",
                           "program.target", None)
    return spec.targets[arch]


@dataclass
class CheckResult:
    path: str
    profile: str
    functions: int
    stats: Stats
    findings: list[Finding] = field(default_factory=list)
    extents: dict[str, int] = field(default_factory=dict)  # pointer argument -> elements its views reach

    @property
    def violations(self) -> list[Finding]:
        return [f for f in self.findings if f.kind == "violation"]

    @property
    def deferred(self) -> list[Finding]:
        return [f for f in self.findings if f.kind == "deferred"]

    @property
    def reported(self) -> list[Finding]:
        """Findings: what the target allows and a reader should know (``--strict`` makes them violations)."""
        return [f for f in self.findings if f.kind == "finding"]


def check_program(db: Database, program: Program, profile: str | None = None, strict: bool = False,
                  level: int | None = None, tracer: Tracer | None = None, insert_sync: bool = False) -> CheckResult:
    """Check every instruction of every function (loops and branches walked once, run-time values unknown) and
    the module's own rules (``module_checks``; ``level``: the assembler's --pto-level, None when not given;
    ``insert_sync``: its --enable-insert-sync);
    ``strict``: findings (rules of severity finding) are violations; ``tracer`` is told each synchronisation
    instruction and each legal instruction (``Tracer.checked``)."""
    from .module_checks import check_module

    prof = choose_profile(db, program, profile)
    w = Walker(db, program, prof, check=True)
    w.strict = strict
    w.tracer = tracer
    try:
        check_module(w, program, level, insert_sync)
    except ProgramError as exc:
        w.findings.append(Finding(exc.pos, exc.rule or "program", exc.message, "violation"))
    funcs = functions(program)
    for func in funcs:
        params = func_signature(w, func)
        try:
            args = [_static_arg(w, name[1:], ty) for name, ty in params]
        except ProgramError as exc:
            w.findings.append(Finding(exc.pos or func.pos, exc.rule or "program", exc.message, "violation"))
            continue
        try:
            call_function(w, func, args)
        except ProgramError as exc:  # an error that stops the walk of this function
            w.findings.append(Finding(exc.pos or func.pos, exc.rule or "program", exc.message, "violation"))
    return CheckResult(program.path, prof, len(funcs), w.stats, w.findings, dict(w.extents))


def buffer_argument(db: Database, ty: str) -> tuple[str, MemrefType | None] | None:
    """The element type of an argument that is a global buffer (``!pto.ptr<T>``, or a memref of global memory of
    the lowered form), and its memref type if it is one; None for a scalar (or an on-chip memref)."""
    dtype = pointer_type(ty)
    if dtype is not None:
        return dtype, None
    try:
        mt = parse_memref(ty, program_spec(db))
    except MemrefError as exc:
        raise ProgramError(f"{ty}: {exc}", "program.type", None) from None
    if mt is not None and is_global(program_spec(db), mt):
        return mt.dtype, mt
    return None


def _buffer_value(db: Database, buffer: GlobalBuffer, mt: MemrefType | None):
    """A buffer argument's value: a pointer to its start, or the view a global memref is."""
    return Pointer(buffer, 0) if mt is None else argument_view(db, program_spec(db), mt, buffer)


def _static_arg(w: Walker, name: str, ty: str):
    found = buffer_argument(w.db, ty)
    if found is None or found[0] not in w.db.isa.dtypes:
        return UNKNOWN
    value = _buffer_value(w.db, GlobalBuffer(name, found[0], None), found[1])
    if isinstance(value, PartitionView) and (n := reach(value)) is not None:
        w.extents[name] = max(w.extents.get(name, 0), n)
    return value


@dataclass
class RunResult:
    path: str
    profile: str
    function: str
    blocks: int
    outputs: dict[str, np.ndarray]
    stats: Stats
    seconds: float
    findings: list[Finding] = field(default_factory=list)  # allowed and reported (severity finding), each once
    finding_counts: dict = field(default_factory=dict)  # (position, rule) -> times met

    def finding_lines(self) -> list[str]:
        """Each finding once per statement and rule (a loop meets it every iteration), with how often."""
        lines = []
        for f in self.findings:
            n = self.finding_counts.get((str(f.pos), f.rule), 1)
            lines.append(f.one_line() + (f" ({n} times)" if n > 1 else ""))
        return lines


def entry_function(w: Walker, program: Program, name: str | None) -> Operation:
    funcs = functions(program)
    if not funcs:
        raise ProgramError("the program has no func.func", "program.entry", None)
    if name is not None:
        if name not in w.funcs:
            raise ProgramError(f"no function @{name} (functions: {', '.join('@' + f for f in w.funcs)})",
                               "program.entry", None)
        return w.funcs[name]
    marked = [f for f in funcs if any(t.text == "pto.entry" for t in f.tail)]
    if len(marked) == 1:
        return marked[0]
    called = {t.text[1:] for f in funcs for op in _all_ops(f) if op.name in ("func.call", "call")
              for t in op.tail if t.kind == "symbol"}
    roots = [f for f in funcs if w.symbol(f) not in called]
    if len(roots) == 1:
        return roots[0]
    if not roots:
        raise ProgramError("every function is called by another (recursion?); choose the kernel with --func",
                           "program.entry", None)
    raise ProgramError(f"several functions could be the kernel ({', '.join('@' + w.symbol(f) for f in roots)}); "
                       "choose one with --func", "program.entry", None)


def _all_ops(op: Operation):
    for region in op.regions:
        for block in region:
            for inner in block.ops:
                yield inner
                yield from _all_ops(inner)


def run_program(db: Database, program: Program, args: dict[str, object], profile: str | None = None,
                func: str | None = None, blocks: int = 1, cast: bool = False,
                max_steps: int | None = None, tracer: Tracer | None = None, strict: bool = False,
                max_seconds: float | None = MAX_SECONDS) -> RunResult:
    """Run the kernel once per block on NumPy arrays (``args``: argument name without % -> array or number).
    Returns the final contents of every pointer argument and the findings met.  ``tracer`` watches the run
    (``walker.Tracer``); ``strict``: a finding stops the run as a violation does.  ``max_steps`` bounds the
    statements, ``max_seconds`` (None: no bound) the wall-clock time of the run."""
    prof = choose_profile(db, program, profile)
    if not 1 <= blocks <= 4096:
        raise PtospecError(f"--blocks must be between 1 and 4096, got {blocks}", rule="cli.blocks")
    probe = Walker(db, program, prof, check=False)
    entry = entry_function(probe, program, func)
    params = func_signature(probe, entry)
    names = [n[1:] for n, _ in params]
    unknown = sorted(set(args) - set(names))
    if unknown:
        raise PtospecError(f"@{probe.symbol(entry)} has no argument(s) {', '.join(unknown)} "
                           f"(its arguments: {', '.join(names)})", rule="run.unknown-input")
    values, buffers = [], {}
    for (name, ty), short in zip(params, names, strict=True):
        if short not in args:
            raise PtospecError(f"missing --arg {short}=... for @{probe.symbol(entry)}'s argument {name} : {ty}",
                               rule="run.missing-input")
        if ty in probe.spec.struct_values:  # a struct passed as a vector: its fields (struct_values)
            values.append(_struct_argument(probe, short, ty, args[short]))
            continue
        values.append(_argument(db, short, ty, args[short], cast, buffers))
    if tracer is not None:
        tracer.begin(buffers)
    start = time.perf_counter()
    began = time.monotonic()
    stats = Stats()
    findings: list[Finding] = []
    counts: dict = {}
    for b in range(blocks):
        w = Walker(db, program, prof, check=False, block_idx=b, blocks=blocks, memo=probe.memo,
                   **({"max_steps": max_steps} if max_steps else {}))
        if max_seconds is not None:
            w.limit_time(began, max_seconds)
        w.stats = stats
        w.strict = strict
        w.findings = findings
        w.finding_counts = counts
        w.tracer = tracer
        if tracer is not None:
            tracer.block(b)
        call_function(w, entry, values)
    seconds = time.perf_counter() - start
    outputs = {name: buf.array.reshape(buf.shape) for name, buf in buffers.items()}
    return RunResult(program.path, prof, probe.symbol(entry), blocks, outputs, stats, seconds,
                     [f for f in findings if f.kind == "finding"], counts)


def _struct_argument(w: Walker, name: str, ty: str, given):
    from .structs import struct_value

    count = w.spec.struct_values[ty][1]
    if not isinstance(given, np.ndarray) or given.size != count or given.dtype.kind not in "iu":
        raise PtospecError(f"{name} is a {ty} (a struct of {count} integer fields): give them as an integer array "
                           f"(--arg {name}=FILE.npy)", rule="run.input")
    return struct_value(w, None, ty, [int(v) for v in given.reshape(-1)], None)


def _argument(db: Database, name: str, ty: str, given, cast: bool, buffers: dict):
    found = buffer_argument(db, ty)
    if found is not None:
        dtype, mt = found
        if dtype not in db.isa.dtypes:
            raise PtospecError(f"{name}: pointer to unknown element type {dtype}", rule="run.dtype")
        if not isinstance(given, np.ndarray):
            raise PtospecError(f"{name} is a pointer ({ty}): give an array (--arg {name}=FILE.npy)",
                               rule="run.input")
        want = numpy_dtype(db, dtype)
        arr = given
        if arr.dtype != want:
            if arr.dtype.kind == "V" and arr.dtype.fields is None and arr.dtype.itemsize == want.itemsize:
                arr = arr.view(want)
            elif cast and arr.dtype.kind in "biuf":
                arr = arr.astype(want)
            else:
                raise PtospecError(f"{name}: array dtype {arr.dtype} does not match {ty} (convert it, or --cast)",
                                   rule="run.dtype")
        buf = GlobalBuffer(name, dtype, np.array(arr, copy=True).reshape(-1), tuple(arr.shape))
        buffers[name] = buf
        return _buffer_value(db, buf, mt)
    if isinstance(given, np.ndarray):
        raise PtospecError(f"{name} is a scalar ({ty}): give a number (--arg {name}=VALUE)", rule="run.input")
    try:
        if arith.int_width(ty) is not None:
            if isinstance(given, float) and not given.is_integer():
                raise PtospecError(f"{name}: {given} is not an integer ({ty})", rule="run.scalar")
            return arith.as_type(int(given), ty)
        return arith.as_type(float(given), ty)
    except arith.ArithError as exc:
        raise PtospecError(f"{name}: {exc}", rule="run.scalar") from None


def run_kernels(db: Database, program: Program, args: dict[str, object], kernels: list[str],
                subblocks: int = 1, profile: str | None = None, cast: bool = False,
                max_steps: int | None = None, strict: bool = False, max_seconds: float | None = MAX_SECONDS
                ) -> RunResult:
    """Run a cube kernel and a vector kernel (``kernels`` = [cube, vector]) at the same time, the vector one
    once per sub-block, each in a thread of its own over the same global memory; TPUSH/TPOP/TFREE move tiles
    through the pipes between them (``fifo``).  ``args`` binds every kernel's arguments by name."""
    import threading

    from .fifo import Aborted, Hub, Side

    prof = choose_profile(db, program, profile)
    if len(kernels) != 2:
        raise PtospecError(f"--kernels takes two functions, the cube kernel and the vector kernel, got {kernels}",
                           rule="cli.kernels")
    if not 1 <= subblocks <= 2:
        raise PtospecError(f"--subblocks must be 1 or 2, got {subblocks}", rule="cli.subblocks")
    probe = Walker(db, program, prof, check=False)
    funcs = [entry_function(probe, program, name) for name in kernels]
    buffers: dict = {}
    values: dict[str, object] = {}
    wanted: set[str] = set()
    calls = []
    for func in funcs:
        params = func_signature(probe, func)
        for name, ty in params:
            short = name[1:]
            wanted.add(short)
            if short not in args:
                raise PtospecError(f"missing --arg {short}=... for @{probe.symbol(func)}'s argument {name} : {ty}",
                                   rule="run.missing-input")
            if short not in values:
                values[short] = _argument(db, short, ty, args[short], cast, buffers)
        calls.append([values[n[1:]] for n, _ in params])
    unknown = sorted(set(args) - wanted)
    if unknown:
        raise PtospecError(f"no kernel has argument(s) {', '.join(unknown)}", rule="run.unknown-input")
    sides = [("cube", 0, funcs[0], calls[0])] + [("vector", k, funcs[1], calls[1]) for k in range(subblocks)]
    hub = Hub(len(sides))
    walkers = []

    def run(w: Walker, func, call_args) -> None:
        try:
            call_function(w, func, call_args)
        except Aborted:
            pass
        except BaseException as exc:
            hub.fail(exc)
        finally:
            hub.finished()

    threads = []
    start = time.perf_counter()
    began = time.monotonic()
    for kind, index, func, call_args in sides:
        w = Walker(db, program, prof, check=False, memo=probe.memo, **({"max_steps": max_steps} if max_steps else {}))
        if max_seconds is not None:
            w.limit_time(began, max_seconds)
        w.side = Side(hub, kind, index, subblocks)
        w.strict = strict
        walkers.append(w)
        threads.append(threading.Thread(target=run, args=(w, func, call_args), daemon=True))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    if hub.error is not None:
        if isinstance(hub.error, PtospecError):
            raise hub.error
        raise PtospecError(f"a kernel failed: {hub.error!r}", rule="program.kernel-error")
    stats = Stats()
    for w in walkers:
        stats.statements += w.stats.statements
        stats.instructions += w.stats.instructions
        stats.legal += w.stats.legal
    outputs = {name: buf.array.reshape(buf.shape) for name, buf in buffers.items()}
    findings = [f for w in walkers for f in w.findings if f.kind == "finding"]
    counts = {k: sum(w.finding_counts.get(k, 0) for w in walkers) for w in walkers for k in w.finding_counts}
    return RunResult(program.path, prof, ",".join(kernels), 1, outputs, stats, seconds, findings, counts)
