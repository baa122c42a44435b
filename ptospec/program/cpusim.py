"""Run a program on the CPU simulator: the reference run's trace (``program/trace.py``) replayed by one C++
program over the simulator's headers.

The C++ source holds one function per static signature (the instruction's C++ call with its ``Tile<...>``
and ``GlobalTensor`` types, as the cpusim backend plans single instructions); everything that changes from
one executed instruction to the next (tile addresses, valid shapes, view origin, shape and strides, scalar
bits) is a row of a step table read at run time.  So the source, and the cached binary, depend only on
which signatures the kernel executes, not on how often or on which data.

Tiles live in the simulator's memory model (``NPU_MEMORY_INIT`` with the profile's architecture): a tile
placed with ``alloc_tile addr`` at that byte address of its location's region, a tile with storage of its
own at an address chosen above every addr-placed tile of its region (``trace.place``).  Global buffers
are host memory read from files.  After every step the program appends what the step wrote (tiles in
logical (row, col) order, global views element by element in footprint order) to a results file, and at
the end every global buffer whole.

Files of one run (``./replay STEPS RESULTS BUFFER...``):

* ``STEPS``: little-endian int64 words: ``MAGIC, VERSION, steps, buffers``, each buffer's length in
  bytes, then per step ``group, count`` and ``count`` parameters.
* ``RESULTS``: per step a line ``s INDEX`` and the outputs' bytes back to back; then per buffer a line
  ``g INDEX BYTES`` and its bytes; then ``end``.
"""

from __future__ import annotations

import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..backends.cpusim.backend import CpuSimBackend
from ..backends.cpusim.cppgen import UnitSource, Unplannable, VariantPlan, plan_variant, tile_type
from ..backends.cpusim.harness import HEADER_NAME, TRAP_EXIT
from ..conformance.backend import Invocation
from ..errors import PtospecError
from ..executor import numpy_dtype
from ..model import Database
from ..tile import GLOBAL_RANK, GlobalDesc, ScalarDesc, TileDesc
from ..validator import validate
from .spec import program_spec
from .trace import Step, Trace, place

MAGIC = 0x5054534D52504C59  # "PTSMRPLY"
VERSION = 1
RUN_TIMEOUT = 600


class ReplayError(PtospecError):
    """The simulator could not replay the program (one line for the CLI)."""


@dataclass(frozen=True)
class Group:
    """One compiled function: a static signature and the steps that call it."""

    name: str
    plan: VariantPlan | None  # None: an allocation (zero the tile's bytes) or a block's start
    zero_type: str = ""  # the Tile<...> type of an allocation group
    first: Step | None = None


@dataclass
class Replay:
    """The C++ program and step table of a trace."""

    groups: list[Group]
    source: UnitSource
    step_groups: list[int]  # group index per step
    words: np.ndarray  # the STEPS file, as int64
    arch: str


@dataclass
class SimResult:
    outputs: list[dict[str, np.ndarray]]  # per completed step: output -> array (as the trace's outputs)
    buffers: list[np.ndarray]  # final global buffers (flat), empty when the run stopped early
    stopped: str | None  # why the run ended early (with the step), or None
    stopped_at: int | None  # index of the step that did not finish
    log: str
    built_cached: bool
    compile_seconds: float
    run_seconds: float
    groups: int
    source: str = field(repr=False, default="")


# ------------------------------------------------------------------ planning


def _invocation(step: Step, profile: str) -> Invocation:
    return Invocation(step.op, step.mode, profile, {o.name: o.desc for o in step.operands}, {})


def plan_replay(db: Database, trace: Trace, shared: tuple[list[Group], dict[str, int]] | None = None) -> Replay:
    """Group the trace's steps by static signature and lay out the step table.

    ``shared``: the groups (and their index by signature) of other traces to be built into one program with this
    one: a signature they have is taken from there, a new one appended (``build_and_run_many``)."""
    spec = program_spec(db)
    if trace.profile not in spec.sim_arch:
        raise ReplayError(f"profile {trace.profile} has no simulator architecture in {spec.file} "
                          "(simulator.arch)", rule="cpusim.profile")
    place(trace, spec.sim_regions, spec.align)
    groups, index = shared if shared is not None else ([], {})
    step_groups: list[int] = []
    words: list[int] = [MAGIC, VERSION, len(trace.steps), len(trace.buffers)]
    words += [int(b.array.nbytes) for b in trace.buffers]
    for step in trace.steps:
        if step.kind == "block":
            key, cpp, plan = "block", "", None
        elif step.kind == "alloc":
            cpp = tile_type(db, step.zero.desc)
            key = "zero|" + cpp
            plan = None
        else:
            try:
                plan = plan_variant(db, _invocation(step, trace.profile))
            except Unplannable as exc:
                raise ReplayError(f"{step.where()}: the simulator replay cannot express it: {exc}",
                                  rule="cpusim.unplannable") from None
            key, cpp = plan.signature, ""
        k = index.get(key)
        if k is None:
            k = index[key] = len(groups)
            groups.append(Group(f"g{k}", plan, cpp, step))
        step_groups.append(k)
        params = _params(db, step, plan)
        words += [k, len(params), *params]
    arch = spec.sim_arch[trace.profile]
    source = render(groups, [g.name for g in groups], arch) if shared is None else UnitSource("", (), {})
    return Replay(groups, source, step_groups, np.array(words, dtype="<i8"), arch)


def _params(db: Database, step: Step, plan: VariantPlan | None) -> list[int]:
    if step.kind == "block":
        return []
    if plan is None:
        return [step.zero.addr, step.zero.nbytes]
    by_name = {o.name: o for o in step.operands}
    out: list[int] = []
    for o in plan.operands:
        operand = by_name[o.name]
        desc = operand.desc
        if isinstance(desc, TileDesc):
            out += [desc.valid_row, desc.valid_col, operand.slot.addr]
        elif isinstance(desc, GlobalDesc):
            out += [operand.buffer, desc.offset, *desc.dims5, *desc.strides5]
        elif isinstance(desc, ScalarDesc):
            out.append(_scalar_bits(db, desc, operand.value, step))
    return [int(v) for v in out]


def _scalar_bits(db: Database, desc: ScalarDesc, value, step: Step) -> int:
    """The scalar's bits in the low bytes of a word (the replay copies sizeof(T) bytes out of it)."""
    dt = numpy_dtype(db, desc.dtype)
    try:
        arr = np.array([value]).astype(dt)
    except (OverflowError, ValueError) as exc:
        raise ReplayError(f"{step.where()}: scalar {value!r} is not a {desc.dtype}: {exc}", rule="cpusim.scalar") \
            from None
    raw = arr.tobytes().ljust(8, b"\0")
    return struct.unpack("<q", raw)[0]


# ------------------------------------------------------------------ C++


PRELUDE = r"""
#include <cstring>
#include <string>
#include <vector>
#include <fcntl.h>
#include <unistd.h>

namespace ptorep {
using namespace pto;
std::vector<std::vector<unsigned char>> buffers;
std::string out;

template <typename TileT>
void place(TileT& t, int64_t addr)
{
    t.SetValidShape(t.GetValidRow(), t.GetValidCol());
    TASSIGN(t, static_cast<uint64_t>(addr));
}

template <typename T>
T bits(int64_t word)
{
    T value;
    std::memcpy(&value, &word, sizeof(T));
    return value;
}

template <typename TileT>
void dump_tile(TileT& t)
{
    using D = typename TileT::DType;
    for (int r = 0; r < TileT::Rows; ++r)
        for (int c = 0; c < TileT::Cols; ++c)
            out.append(reinterpret_cast<const char*>(t.data() + GetTileElementOffset<TileT>(r, c)), sizeof(D));
}

template <typename D>
void dump_view(const D* base, const int64_t* d, const int64_t* s)
{
    for (int64_t a = 0; a < d[0]; ++a)
        for (int64_t b = 0; b < d[1]; ++b)
            for (int64_t c = 0; c < d[2]; ++c)
                for (int64_t e = 0; e < d[3]; ++e)
                    for (int64_t f = 0; f < d[4]; ++f)
                        out.append(reinterpret_cast<const char*>(base + a * s[0] + b * s[1] + c * s[2] + e * s[3] +
                                                                 f * s[4]), sizeof(D));
}

template <typename TileT>
void zero(int64_t addr, int64_t bytes)
{
    TileT t(TileT::Rows, TileT::Cols);
    place(t, addr);
    std::memset(static_cast<void*>(t.data()), 0, static_cast<size_t>(bytes));
}

void flush(int fd)
{
    size_t done = 0;
    while (done < out.size()) {
        ssize_t n = ::write(fd, out.data() + done, out.size() - done);
        if (n <= 0) {
            std::fprintf(stderr, "cannot write the results file\n");
            std::_Exit(3);
        }
        done += static_cast<size_t>(n);
    }
    out.clear();
}

bool read_file(const char* path, std::vector<unsigned char>& data)
{
    int fd = ::open(path, O_RDONLY);
    if (fd < 0)
        return false;
    unsigned char buf[1 << 16];
    ssize_t got;
    while ((got = ::read(fd, buf, sizeof buf)) > 0)
        data.insert(data.end(), buf, buf + got);
    ::close(fd);
    return got == 0;
}
} // namespace ptorep
"""

MAIN = r"""
int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s STEPS RESULTS BUFFER...\n", argv[0]);
        return 2;
    }
    std::vector<unsigned char> raw;
    if (!ptorep::read_file(argv[1], raw) || raw.size() % 8 != 0 || raw.size() < 32) {
        std::fprintf(stderr, "cannot read the step table %s\n", argv[1]);
        return 2;
    }
    std::vector<int64_t> w(raw.size() / 8);
    std::memcpy(w.data(), raw.data(), raw.size());
    if (w[0] != @MAGIC@ || w[1] != @VERSION@) {
        std::fprintf(stderr, "%s is not a step table of this program\n", argv[1]);
        return 2;
    }
    const int64_t steps = w[2], nbuf = w[3];
    if (argc != 3 + nbuf) {
        std::fprintf(stderr, "expected %lld buffer files\n", (long long)nbuf);
        return 2;
    }
    ptorep::buffers.resize(static_cast<size_t>(nbuf));
    for (int64_t k = 0; k < nbuf; ++k) {
        if (!ptorep::read_file(argv[3 + k], ptorep::buffers[k]) ||
            static_cast<int64_t>(ptorep::buffers[k].size()) != w[4 + k]) {
            std::fprintf(stderr, "buffer file %s does not hold %lld bytes\n", argv[3 + k], (long long)w[4 + k]);
            return 2;
        }
    }
    int fd = ::open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        std::fprintf(stderr, "cannot create %s\n", argv[2]);
        return 2;
    }
    pto::NPU_MEMORY_INIT(pto::NPUArch::@ARCH@);
    size_t at = static_cast<size_t>(4 + nbuf);
    for (int64_t i = 0; i < steps; ++i) {
        const int64_t group = w[at], count = w[at + 1];
        const int64_t* p = w.data() + at + 2;
        at += static_cast<size_t>(2 + count);
        switch (group) {
@CASES@
        default:
            std::fprintf(stderr, "step %lld: no group %lld in this program\n", (long long)i, (long long)group);
            return 2;
        }
        ptorep::out.insert(0, "s " + std::to_string(i) + "\n");
        ptorep::flush(fd);
    }
    for (int64_t k = 0; k < nbuf; ++k) {
        ptorep::out += "g " + std::to_string(k) + " " + std::to_string(ptorep::buffers[k].size()) + "\n";
        ptorep::out.append(reinterpret_cast<const char*>(ptorep::buffers[k].data()), ptorep::buffers[k].size());
    }
    ptorep::out += "end\n";
    ptorep::flush(fd);
    ::close(fd);
    return 0;
}
"""


def _group_lines(g: Group) -> list[str]:
    """One group's function (no source positions: the text, hence the cached binary, depends only on the
    signatures a program executes)."""
    if g.plan is None and not g.zero_type:
        return [f"// {g.name}: a new block (on-chip memory is zeros again)", f"namespace {g.name} {{",
                "void run(const int64_t*) { pto::NPU_MEMORY_CLEAR(); }", f"}} // namespace {g.name}", ""]
    if g.plan is None:
        return [f"// {g.name}: a fresh tile of storage of its own (zeros)", f"namespace {g.name} {{",
                "using namespace pto;", f"using tile_t = {g.zero_type};",
                "void run(const int64_t* p) { ptorep::zero<tile_t>(p[0], p[1]); }", f"}} // namespace {g.name}", ""]
    plan = g.plan
    lines = [f"// {g.name}: {plan.call} ({plan.op} {plan.mode})", f"namespace {g.name} {{",
             "using namespace pto;"]
    lines += [f"using {o.ident}_t = {o.cpp};" for o in plan.operands if o.role != "attr"]
    lines += ["void run(const int64_t* p)", "{"]
    k = 0
    dumps: list[str] = []
    for o in plan.operands:
        if o.is_tile:
            valid = f"static_cast<unsigned>(p[{k}]), static_cast<unsigned>(p[{k + 1}])"
            lines.append(f"    {o.ident}_t {o.ident}({valid});")
            lines.append(f"    ptorep::place({o.ident}, p[{k + 2}]);")
            if o.role == "out":
                dumps.append(f"    ptorep::dump_tile({o.ident});")
            k += 3
        elif o.is_global:
            raw = f"typename {o.ident}_t::RawDType"
            d, s = k + 2, k + 2 + GLOBAL_RANK
            lines.append(f"    auto* {o.ident}_base = reinterpret_cast<{raw}*>(ptorep::buffers[p[{k}]].data()) + "
                         f"p[{k + 1}];")
            shape = ", ".join(f"p[{d + i}]" for i in range(GLOBAL_RANK))
            stride = ", ".join(f"p[{s + i}]" for i in range(GLOBAL_RANK))
            lines.append(f"    {o.ident}_t {o.ident}({o.ident}_base, typename {o.ident}_t::Shape({shape}), "
                         f"typename {o.ident}_t::Stride({stride}));")
            if o.role == "out":
                dumps.append(f"    ptorep::dump_view({o.ident}_base, p + {d}, p + {s});")
            k += 2 + 2 * GLOBAL_RANK
        elif o.role == "attr":
            lines.append(f"    const {o.cpp} {o.ident} = {o.cpp_value};")
        else:
            lines.append(f"    const {o.cpp} {o.ident} = ptorep::bits<{o.cpp}>(p[{k}]);")
            k += 1
    if plan.conv is not None:  # a ConvTile over the placed tile's storage, its fields set one by one
        c = plan.conv
        lines += [f"    {c.cpp} {c.ident};", f"    {c.ident}.data() = {c.data}.data();"]
        lines += [f"    {c.ident}.{setter}({', '.join(args)});" for setter, args in c.calls]
    lines.append(f"    {plan.call}({', '.join(plan.args)});")
    lines += dumps
    lines += ["}", f"}} // namespace {g.name}", ""]
    return lines


def render(groups: Sequence[Group], names: Sequence[str], arch: str) -> UnitSource:
    """The replay program holding the groups named (the build drops groups the simulator rejects)."""
    chosen = set(names)
    lines = ["// generated by ptospec run-program --backend cpusim -- do not edit", f"#include \"{HEADER_NAME}\"",
             *PRELUDE.strip("\n").splitlines(), ""]
    spans: dict[str, tuple[int, int]] = {}
    for g in groups:
        if g.name not in chosen:
            continue
        first = len(lines) + 1
        lines += _group_lines(g)
        spans[g.name] = (first, len(lines))
    cases = "\n".join(f"        case {k}: {g.name}::run(p); break;" for k, g in enumerate(groups) if g.name in chosen)
    main = MAIN.replace("@MAGIC@", str(MAGIC)).replace("@VERSION@", str(VERSION)).replace("@ARCH@", arch)
    lines += main.replace("@CASES@", cases).strip("\n").splitlines()
    return UnitSource("\n".join(lines) + "\n", tuple(n for n in names), spans)


# ------------------------------------------------------------------ build and run


def build_and_run(db: Database, trace: Trace, pto_isa_root: str | None = None, cache: str | None = None,
                  cxx: str | None = None, timeout: int = RUN_TIMEOUT) -> SimResult:
    """Compile (or take from the cache) the trace's replay program and run it on the trace's inputs."""
    return _build_and_run(db, trace, CpuSimBackend(db, pto_isa_root, cxx, cache), timeout)


def _build_and_run(db: Database, trace: Trace, backend: CpuSimBackend, timeout: int) -> SimResult:
    replay = plan_replay(db, trace)
    if not trace.instructions:  # nothing for the simulator to do: memory stays as it was given
        return SimResult([{} for _ in trace.steps], [a.copy() for a in trace.initial], None, None, "", True, 0.0,
                         0.0, 0, replay.source.text)
    _check_dtypes(backend, trace)
    builder = backend.builder
    names = [g.name for g in replay.groups]
    built = builder.build(names, lambda chosen: render(replay.groups, chosen, replay.arch))
    if built.binary is None or any(s.kind != "ok" for s in built.variants.values()):
        raise ReplayError(_build_failure(db, replay, built.variants), rule="cpusim.build")
    return _run(db, trace, replay, built.binary, built.cached, builder, timeout)


def build_and_run_many(db: Database, traces: Sequence[Trace], pto_isa_root: str | None = None,
                       cache: str | None = None, cxx: str | None = None, jobs: int = 1, per_program: int = 12,
                       timeout: int = RUN_TIMEOUT, progress=None) -> list[SimResult | PtospecError]:
    """``build_and_run`` of each trace, with up to ``per_program`` traces of one architecture built into one
    program (their groups together; each trace runs its own step table on it): one compile instead of one per
    trace.  A trace whose groups do not all build there is built and run on its own, as ``build_and_run`` does,
    so that its verdict names its own steps.  Each result is the ``SimResult`` or the ``PtospecError`` that
    ``build_and_run`` would have given, except that a trace built with others has an empty ``source`` and the
    shared program's compile time.  ``progress(done, total)`` after each program."""
    backend = CpuSimBackend(db, pto_isa_root, cxx, cache)
    arch_of = program_spec(db).sim_arch
    results: list[SimResult | PtospecError | None] = [None] * len(traces)
    chunks: dict[str, list[list[int]]] = {}
    for i, trace in enumerate(traces):
        arch = arch_of.get(trace.profile)
        if arch is None or not trace.instructions:  # refused, or nothing to build: as build_and_run does it
            chunks.setdefault("", []).append([i])
            continue
        rows = chunks.setdefault(arch, [[]])
        if len(rows[-1]) >= per_program:
            rows.append([])
        rows[-1].append(i)
    lock = threading.Lock()
    done = [0]

    def alone(i: int) -> SimResult | PtospecError:
        try:
            return _build_and_run(db, traces[i], backend, timeout)
        except PtospecError as exc:
            return exc

    def chunk(arch: str, members: list[int]) -> None:
        out: dict[int, SimResult | PtospecError] = {}
        if arch and len(members) > 1:
            try:
                out = _together(db, traces, members, arch, backend, timeout, alone)
            except PtospecError:  # the toolchain itself: each trace meets it on its own, as build_and_run does
                out = {}
        out = {i: out[i] if i in out else alone(i) for i in members}
        with lock:
            for i, r in out.items():
                results[i] = r
            done[0] += len(members)
            if progress:
                progress(done[0], len(traces))

    work = [(arch, members) for arch, rows in chunks.items() for members in rows if members]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for f in [pool.submit(chunk, arch, members) for arch, members in work]:
            f.result()
    return results  # type: ignore[return-value]


def _together(db: Database, traces: Sequence[Trace], members: list[int], arch: str, backend: CpuSimBackend,
              timeout: int, alone) -> dict[int, SimResult | PtospecError]:
    groups: list[Group] = []
    index: dict[str, int] = {}
    replays: dict[int, Replay] = {}
    out: dict[int, SimResult | PtospecError] = {}
    for i in members:
        try:
            replay = plan_replay(db, traces[i], (groups, index))
            _check_dtypes(backend, traces[i])
            replays[i] = replay
        except ReplayError as exc:
            out[i] = exc
    if replays:
        built = backend.builder.build([g.name for g in groups], lambda chosen: render(groups, chosen, arch))
        for i, replay in replays.items():
            used = {groups[k].name for k in replay.step_groups}
            if built.binary is not None and all(n in built.variants and built.variants[n].kind == "ok" for n in used):
                out[i] = _run(db, traces[i], replay, built.binary, built.cached, backend.builder, timeout)
            else:
                out[i] = alone(i)
    return out


def _check_dtypes(backend: CpuSimBackend, trace: Trace) -> None:
    backend.capabilities()
    for step in trace.instructions:
        for o in step.operands:
            why = backend.unsupported_dtypes.get(getattr(o.desc, "dtype", ""))
            if why:
                raise ReplayError(f"{step.where()}: {o.name} is {o.desc.dtype}, which this toolchain cannot "
                                  f"simulate faithfully: {why}", rule="cpusim.dtype")


def _run(db: Database, trace: Trace, replay: Replay, binary: Path, cached: bool, builder, timeout: int
         ) -> SimResult:
    with tempfile.TemporaryDirectory(prefix="ptospec-replay-") as tmp:
        work = Path(tmp)
        (work / "steps.bin").write_bytes(replay.words.tobytes())
        files = []
        for k, initial in enumerate(trace.initial):
            path = work / f"buffer{k}.bin"
            path.write_bytes(np.ascontiguousarray(initial).tobytes())
            files.append(str(path))
        start = time.perf_counter()
        try:
            proc = subprocess.run([str(binary), "steps.bin", "results.bin", *files], cwd=work,
                                  capture_output=True, timeout=timeout)
            status, log = proc.returncode, (proc.stdout + proc.stderr).decode(errors="replace")
        except subprocess.TimeoutExpired as exc:
            status = None
            log = ((exc.stdout or b"") + (exc.stderr or b"")).decode(errors="replace")
        seconds = time.perf_counter() - start
        results = (work / "results.bin").read_bytes() if (work / "results.bin").is_file() else b""
    if status == 2:
        raise ReplayError(f"the replay program refused its input: {log.strip()[-400:]}", rule="cpusim.harness")
    outputs, buffers = parse_results(db, trace, results)
    stopped = stopped_at = None
    if status != 0 or len(outputs) < len(trace.steps):
        stopped_at = len(outputs)
        step = trace.steps[stopped_at] if stopped_at < len(trace.steps) else None
        why = (f"did not finish within {timeout} s" if status is None else
               "stopped on a failed check (PTO_ASSERT)" if status == TRAP_EXIT else
               f"died with signal {-status}" if status < 0 else f"exited with status {status}")
        stopped = f"the simulator {why} in step {stopped_at}" + (f" ({step.where()})" if step else "")
        if step is not None and step.kind == "instruction":
            stopped += _simulator_verdict(db, step)
    return SimResult(outputs, buffers, stopped, stopped_at, log, cached,
                     builder.stats.compile_seconds, seconds, len(set(replay.step_groups)), replay.source.text)


def _build_failure(db: Database, replay: Replay, statuses: dict) -> str:
    """Why the replay program did not build: the instructions the compiler named, else its message once,
    with the instructions the database does not allow on the simulator's profile (likely culprits)."""
    failed = [(g, statuses[g.name]) for g in replay.groups if g.name in statuses and statuses[g.name].kind != "ok"]
    messages = {st.message for _, st in failed}
    if (failed and len(messages) > 1) or len(failed) == 1:
        parts = []
        for g, st in failed:
            verdict = "rejects" if st.kind == "rejected" else "fails to compile"
            parts.append(f"{g.first.where()}: the simulator {verdict} it: {st.message.strip()[:400]}")
        return "; ".join(parts)
    text = f"the replay program does not build: {next(iter(messages), '').strip()[:400]}"
    suspects = [g.first.where() + verdict for g in replay.groups if g.plan is not None
                for verdict in [_simulator_verdict(db, g.first)] if verdict]
    return text + "".join(f"; {s}" for s in suspects)


def _simulator_verdict(db: Database, step: Step) -> str:
    """What the validator says of a step on the simulator's own profile, when it refuses it ('' if not)."""
    simulated = [p for p, spec in db.isa.profiles.items() if spec.basis == "simulator"]
    if not simulated:
        return ""
    report = validate(db, step.op, step.mode, simulated[0], {o.name: o.desc for o in step.operands})
    if not report.violations:
        return ""
    return f" (the database does not allow it on the simulator's profile {simulated[0]}: " \
           f"{report.violations[0].one_line()})"


def parse_results(db: Database, trace: Trace, data: bytes) -> tuple[list[dict[str, np.ndarray]], list[np.ndarray]]:
    """Per-step outputs and final buffers from a results file (as far as it goes)."""
    at = 0
    outputs: list[dict[str, np.ndarray]] = []

    def line() -> str | None:
        nonlocal at
        end = data.find(b"\n", at)
        if end < 0:
            return None
        text = data[at:end].decode(errors="replace")
        at = end + 1
        return text

    for step in trace.steps:
        mark = at
        head = line()
        if head != f"s {step.index}":
            at = mark
            break
        got: dict[str, np.ndarray] = {}
        ok = True
        for name, ref in step.outputs.items():
            n = ref.nbytes
            if at + n > len(data):
                ok = False
                break
            got[name] = np.frombuffer(data[at:at + n], dtype=ref.dtype).reshape(ref.shape).copy()
            at += n
        if not ok:
            break
        outputs.append(got)
    buffers: list[np.ndarray] = []
    for k, initial in enumerate(trace.initial):
        head = line()
        if head != f"g {k} {initial.nbytes}":
            return outputs, []
        buffers.append(np.frombuffer(data[at:at + initial.nbytes], dtype=initial.dtype).copy())
        at += initial.nbytes
    return outputs, buffers

