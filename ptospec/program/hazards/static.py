"""The static hazard check (``check-program --hazards``): the same relation as the run's detector, over the
program's structure instead of one run.

The checker walks each statement once (``Tracer.checked`` says what a legal instruction touches, as far as the
values known without running tell).  The events are then replayed over the structure: a branch is analysed
from the state before it, both ways, and the two states merged (only what both order stays ordered); a loop
body is replayed until its synchronisation state repeats (at least twice, so a hazard between one iteration and
the next is seen, and at most ``LOOP_ROUNDS`` times), then merged with the state before it (no iteration).
``pto.section.cube``/``vector`` regions are two cores whose cross-core flags (``sync.set``/``sync.wait``)
pair up.  A finding that depends on values known only at run time (an address, an offset, a branch taken, a
trip count) is a "may" finding."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model import Database
from ...storage import storage_bytes, valid_bytes
from ...tile import GlobalDesc, TileDesc
from ..api import check_program, choose_profile
from ..spec import program_spec
from ..syntax import Operation, Program
from ..trace import footprint
from ..values import UNKNOWN, TileBuffer, known
from ..walker import functions
from .findings import Hazard, Report, Site, barrier_fix, flag_fix
from .ordering import Ordering

LOOP_ROUNDS = 4
_LOOPS = ("scf.for", "scf.while")


@dataclass(frozen=True)
class _Region:
    space: tuple  # ("chip", location, core) | ("tile", id, core) | ("global", id or None)
    where: np.ndarray | None  # byte or element indices; None: anywhere in the space (not known before running)
    label: str


@dataclass(frozen=True)
class _Touch:
    operand: str
    region: _Region
    reads: bool
    writes: bool


@dataclass(frozen=True)
class _Event:
    op: Operation
    kind: str  # access | sync
    payload: tuple


@dataclass
class _Access:
    id: int
    site: Site
    pipe: tuple
    tick: int
    touch: _Touch
    uncertain: bool  # in a branch: whether it happens depends on values
    round: int  # the loop iteration it was met in (0: outside loops)
    atomic: bool = False  # an atomic update of global memory (a store adding to it)


class Collector:
    """A ``walker.Tracer`` for the checker's walk: each legal instruction's pipe and regions, each
    synchronisation instruction's values, by statement."""

    def __init__(self, db: Database, profile: str):
        self.db, self.profile = db, profile
        self.events: dict[int, list[_Event]] = {}
        self.unknown_pipe: dict[str, object] = {}

    def begin(self, buffers) -> None: ...

    def block(self, index) -> None: ...

    def alloc(self, op, tile) -> None: ...

    def instruction(self, step) -> None: ...

    def synchronisation(self, op: Operation, name: str = "", values: dict | None = None) -> None:
        self.events.setdefault(id(op), []).append(_Event(op, "sync", (name, dict(values or {}))))

    def checked(self, op: Operation, line, operands: dict, tiles: dict, buffers: dict) -> None:
        name, mode_name = line.op, line.mode
        mode = self.db.op(name).mode(mode_name)
        locations = {n: d.loc for n, d in operands.items() if isinstance(d, TileDesc)}
        unit = mode.pipe.unit(self.profile, locations) if mode.pipe is not None else None
        if unit is None:
            self.unknown_pipe.setdefault(f"{name} {mode_name}", op.pos)
            return
        touches = []
        for o in mode.operands:
            if o.role not in ("in", "out", "tmp"):
                continue
            region = self._region(line.values.get(o.name, o.name), operands.get(o.name), tiles.get(o.name),
                                  buffers.get(o.name), o.is_global)
            if region is not None:
                touches.append(_Touch(o.name, region, o.role in ("in", "tmp"), o.role in ("out", "tmp")))
        atomic = any(s.combine == "add" for s in mode.semantics)
        self.events.setdefault(id(op), []).append(_Event(op, "access", (unit, tuple(touches), atomic)))

    def _region(self, name: str, desc, tile: TileBuffer | None, buffer, is_global: bool) -> _Region | None:
        if is_global:
            if buffer is None:
                return _Region(("global", None), None, "global memory")
            where = None
            if isinstance(desc, GlobalDesc) and desc.offset is not None and None not in desc.strides \
                    and None not in desc.shape:
                where = footprint(desc)
            return _Region(("global", id(buffer)), where, f"global %{buffer.name}")
        if tile is None:
            return None
        isa = self.db.isa
        exact = True
        while tile.window is not None:  # a subset window: somewhere in its parent
            tile, exact = tile.window[0], False
        d = tile.current()
        if d.valid_row is None or d.valid_col is None or not exact:
            rel = np.arange(storage_bytes(isa, d))
        else:
            rel = np.flatnonzero(valid_bytes(isa, d))
        if tile.place:
            loc, addr = tile.place
            if not known(addr) or addr is UNKNOWN:
                return _Region(("chip", loc), None, f"{loc} memory (tile {name}, address known at run time)")
            return _Region(("chip", loc), rel + addr, f"{loc} memory (tile {name})")
        return _Region(("tile", id(tile)), rel, f"tile {name}")


class _State:
    """The ordering of one path through the program and the accesses that may still race."""

    def __init__(self, ordering: Ordering):
        self.ordering = ordering
        ordering.owner = self  # a queued access runs on the state its ordering belongs to (copies included)
        self.live: list[_Access] = []

    def copy(self) -> _State:
        s = _State(self.ordering.copy())
        s.live = list(self.live)
        return s

    def merge(self, other: _State) -> None:
        self.ordering.merge(other.ordering)
        ids = {a.id for a in self.live}
        self.live += [a for a in other.live if a.id not in ids]

    def signature(self) -> tuple:
        o = self.ordering
        return (tuple(sorted((str(k), len(q)) for k, q in o.flags.items() if q)), tuple(sorted(map(str, o.blocked))),
                tuple(sorted((str(k), v[1] is not None) for k, v in o.tokens.items())))


class _Analysis:
    def __init__(self, db: Database, profile: str, collector: Collector, intra: bool):
        self.db, self.profile, self.collector, self.intra = db, profile, collector, intra
        self.spec = program_spec(db)
        self.found: dict[tuple, Hazard] = {}
        self.next_id = 0
        self.core = 0
        cores = sorted(set(self.spec.sections.values()))  # program.yaml `sections`: cube is core 0, vector 1
        self.sections = {name: cores.index(core) for name, core in self.spec.sections.items()}
        self.branch = 0  # scf.if depth
        self.round = 0  # loop iteration being replayed (0: straight-line code)
        self.sync = 0
        self.accesses = 0

    # -- structure ----------------------------------------------------------------------------------------
    def run_ops(self, ops: list[Operation], st: _State) -> _State:
        for op in ops:
            st = self.run_op(op, st)
        return st

    def run_op(self, op: Operation, st: _State) -> _State:
        for ev in self.collector.events.get(id(op), ()):
            self.event(ev, st)
        if not op.regions:
            return st
        blocks = [[inner for b in region for inner in b.ops] for region in op.regions]
        if op.name == "scf.if":
            self.branch += 1
            then = self.run_ops(blocks[0], st.copy())
            other = self.run_ops(blocks[1], st.copy()) if len(blocks) > 1 else st
            self.branch -= 1
            then.merge(other)
            return then
        if op.name in _LOOPS:
            before = st.copy()
            body = [inner for b in blocks for inner in b]
            outer = self.round
            seen = set()
            for k in range(LOOP_ROUNDS):
                self.round = outer + k + 1
                st = self.run_ops(body, st)
                sig = st.signature()
                if k >= 1 and sig in seen:
                    break
                seen.add(sig)
            self.round = outer
            st.merge(before)  # the loop may not run at all
            return st
        if op.name in self.sections:
            outer, self.core = self.core, self.sections[op.name]
            st = self.run_ops(blocks[0] if blocks else [], st)
            self.core = outer
            return st
        return self.run_ops([inner for b in blocks for inner in b], st)  # vector scopes, unknown regions

    # -- events -------------------------------------------------------------------------------------------
    def event(self, ev: _Event, st: _State) -> None:
        if ev.kind == "sync":
            name, values = ev.payload
            self.sync += 1
            instr = self.spec.instructions.get(name)
            if instr is not None and instr.orders is not None:
                st.ordering.apply(self.core, f"pto.{name}", instr.orders, values, ev.op.pos)
            return
        unit, touches, atomic = ev.payload
        pipe = (self.core, unit)
        site_args = (ev.op.pos, ev.op.name, unit, self.core)
        uncertain, rnd = self.branch > 0, self.round
        st.ordering.later(pipe, lambda o: self.access(o.owner, o, pipe, site_args, touches, atomic, uncertain, rnd))

    def access(self, st: _State, ordering: Ordering, pipe, site_args, touches, atomic, uncertain, rnd) -> None:
        tick = ordering.issue(pipe)
        pos, statement, unit, core = site_args
        mine = []
        for t in touches:
            self.accesses += 1
            me = _Access(self.next_id, Site(pos, statement, unit, t.operand, core), pipe, tick, t, uncertain, rnd,
                         atomic and t.region.space[0] == "global")
            self.next_id += 1
            for prev in st.live:
                if prev.site.pos == pos and prev.tick == tick and prev.pipe == pipe:
                    continue  # operands of one instruction
                kind = _conflict(prev.touch, t)
                if kind is None or (kind == "WAW" and me.atomic and prev.atomic):
                    continue
                overlap = _overlap(prev.touch.region, t.region)
                if overlap is False:
                    continue
                if ordering.ordered(prev.pipe, prev.tick, pipe, self.intra):
                    continue
                may = overlap is None or prev.uncertain or uncertain or prev.round != rnd
                self.report(kind, prev, me, may, overlap, ordering)
            mine.append(me)
        st.live += mine
        floor = ordering.floor
        st.live = [a for a in st.live if floor[a.pipe[0]].at(a.pipe) < a.tick]  # a PIPE_ALL barrier retires

    def report(self, kind: str, prev: _Access, me: _Access, may: bool, overlap, ordering: Ordering) -> None:
        hazard = Hazard(kind, prev.site, me.site, "", "", may=may)
        found = self.found.get(hazard.key())
        if found is not None:
            found.count += 1
            found.may = found.may and may
            return
        region = me.touch.region
        if isinstance(overlap, np.ndarray) and overlap.size:
            unit = "elements" if region.space[0] == "global" else "bytes"
            hazard.buffer = f"{region.label}, {unit} {int(overlap.min())}..{int(overlap.max())}"
        else:
            hazard.buffer = region.label
        r = ordering.resolve
        if prev.pipe == me.pipe:
            hazard.fix = barrier_fix(r.enum_of(prev.pipe[1]))
        elif prev.pipe[0] != me.pipe[0]:
            hazard.fix = "a cross-core flag: pto.sync.set after the first access, pto.sync.wait before the second"
        else:
            hazard.fix = flag_fix(r.enum_of(prev.pipe[1]), r.enum_of(me.pipe[1]), 0)
        self.found[hazard.key()] = hazard


def _conflict(a: _Touch, b: _Touch) -> str | None:
    if a.writes and b.reads and not b.writes:
        return "RAW"
    if a.writes and b.writes:
        return "WAW"
    if a.reads and b.writes:
        return "WAR"
    return None


def _overlap(a: _Region, b: _Region):
    """False: disjoint; None: not known before running; else the shared indices."""
    if a.space[0] != b.space[0]:
        return False
    if a.space != b.space:
        if a.space[0] == "global" and (a.space[1] is None or b.space[1] is None):
            return None
        return False
    if a.where is None or b.where is None:
        return None
    shared = np.intersect1d(a.where, b.where, assume_unique=False)
    return shared if shared.size else False


def check_hazards(db: Database, program: Program, profile: str | None = None, intra: bool = False) -> Report:
    """The static hazard check of every function of ``program``."""
    prof = choose_profile(db, program, profile)
    collector = Collector(db, prof)
    check_program(db, program, prof, tracer=collector)
    return analyse(db, program, prof, collector, intra)


def analyse(db: Database, program: Program, profile: str, collector: Collector, intra: bool = False) -> Report:
    reports = []
    for func in functions(program):
        analysis = _Analysis(db, profile, collector, intra)
        ordering = Ordering(db.isa.pipes, analysis.spec.classes, profile, cross_core=True)
        state = _State(ordering)
        body = [inner for region in func.regions for b in region for inner in b.ops]
        state = analysis.run_ops(body, state)
        rep = Report(sorted(analysis.found.values(), key=lambda h: (str(h.second.pos), str(h.first.pos))),
                     state.ordering.finish(), synchronisation=analysis.sync, accesses=analysis.accesses)
        rep.auto_sync = state.ordering.explicit == 0
        reports.append((func, rep))
    out = Report()
    autos = [rep for _f, rep in reports if rep.auto_sync]
    out.auto_sync = bool(reports) and len(autos) == len(reports)
    for func, rep in reports:
        out.synchronisation += rep.synchronisation
        out.accesses += rep.accesses
        if rep.auto_sync and not out.auto_sync:
            if rep.hazards:
                out.notes.append(f"{func.pos}: @{_name(func)} has no explicit synchronisation: written for the "
                                 f"assembler's --enable-insert-sync ({len(rep.hazards)} unordered pair(s) not "
                                 "reported)")
            continue
        out.hazards += rep.hazards
        out.protocol += rep.protocol
    for what, pos in collector.unknown_pipe.items():
        out.notes.append(f"{pos}: {what} runs on a pipe the spec does not give for these locations: not checked")
    return out


def _name(func: Operation) -> str:
    for t in func.tail:
        if t.kind == "symbol":
            return t.text[1:].strip('"')
    return "?"
