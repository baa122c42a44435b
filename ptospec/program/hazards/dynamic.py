"""The race detector of a reference run (``run-program --hazards``): a ``walker.Tracer`` that keeps, for every
byte of on-chip memory and every element of global memory, the last access that wrote it and the accesses of
each pipe that read it since, and reports each conflicting pair on pipes that no synchronisation orders.

Exact where the run is: the addresses and the control flow are the run's own, so a correctly synchronised
kernel gives no finding, and a pair is reported once (with how often the run met it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model import Database
from ...storage import valid_bytes
from ...tile import GlobalDesc, TileDesc
from ..errors import SourcePos
from ..spec import program_spec
from ..syntax import Operation
from ..trace import footprint
from ..values import GlobalBuffer, TileBuffer
from ..walker import Executed
from .clocks import PipeKey
from .findings import Hazard, Report, Site, barrier_fix, cross_core_fix, flag_fix
from .ordering import Ordering


@dataclass
class _Shadow:
    """One memory's shadow: per byte (on-chip) or element (global), the last writer and each pipe's readers."""

    label: str
    unit: str  # bytes | elements
    writer: np.ndarray
    readers: dict  # PipeKey -> np.ndarray of access ids (-1: none)
    keep: object = None  # the memory itself, kept alive while its id names it


@dataclass(frozen=True)
class _Access:
    site: Site
    pipe: PipeKey
    tick: int
    seq: int  # program order
    atomic: bool


class HazardDetector:
    """A tracer of one reference run; ``report()`` after the run."""

    def __init__(self, db: Database, profile: str, intra: bool = False):
        if db.isa.pipes is None:
            raise ValueError("the database declares no pipes (isa.yaml pipes)")
        self.db, self.profile, self.intra = db, profile, intra
        self.spec = program_spec(db)
        self.ordering = Ordering(db.isa.pipes, self.spec.classes, profile)
        self.shadows: dict[int, _Shadow] = {}
        self.accesses: list[_Access] = []
        self.found: dict[tuple, Hazard] = {}
        self.core = 0
        self.seq = 0
        self.sync = 0
        self.checked = 0
        self.unknown_pipe: dict[str, SourcePos | None] = {}
        self._valid: dict[TileDesc, np.ndarray] = {}
        self._labels: dict[int, str] = {}

    # -- walker.Tracer --------------------------------------------------------------------------------
    def begin(self, buffers: dict[str, GlobalBuffer]) -> None:
        for name, buf in buffers.items():
            self._labels[id(buf)] = f"global %{name}"

    def block(self, index: int) -> None:
        self.core = index  # a core of its own: its on-chip memory is new, the old one's shadows go
        self.shadows = {k: s for k, s in self.shadows.items() if s.unit == "elements"}

    def alloc(self, op: Operation, tile: TileBuffer) -> None:
        if tile.storage is None:
            return
        root, _ = memory_of(tile.storage)
        if tile.place:
            self._labels.setdefault(id(root), f"{tile.place[0]} memory")
        else:
            self._labels[id(root)] = f"the tile of alloc_tile at {op.pos}"

    def synchronisation(self, op: Operation, name: str = "", values: dict | None = None) -> None:
        self.sync += 1
        instr = self.spec.instructions.get(name)
        if instr is None or instr.orders is None:
            return
        self.ordering.apply(self.core, f"pto.{name}", instr.orders, values or {}, op.pos)

    def instruction(self, ex: Executed) -> None:
        mode = self.db.op(ex.name).mode(ex.mode)
        locations = {n: d.loc for n, d in ex.operands.items() if isinstance(d, TileDesc)}
        unit = mode.pipe.unit(self.profile, locations) if mode.pipe is not None else None
        if unit is None:
            self.unknown_pipe.setdefault(f"{ex.name} {ex.mode}", ex.op.pos)
            return
        pipe = (self.core, unit)
        atomic = any(s.combine == "add" for s in mode.semantics)
        touched = []
        for o in mode.operands:
            if o.role not in ("in", "out", "tmp"):
                continue
            reads = o.role in ("in", "tmp")
            writes = o.role == "tmp" or o.name in ex.outputs
            if not (reads or writes):
                continue
            where = self._where(ex, o.name)
            if where is None:
                continue
            touched.append((o.name, where, reads, writes, atomic and o.is_global))
        touched.sort(key=lambda t: t[3])  # an instruction reads its inputs before it writes
        self.seq += 1
        seq = self.seq
        site_args = (ex.op.pos, ex.op.name, unit, self.core)
        self.ordering.later(pipe, lambda _o: self._run(pipe, seq, site_args, touched))

    # -- shadow memory --------------------------------------------------------------------------------
    def _where(self, ex: Executed, name: str):
        """(shadow, indices) of the bytes or elements operand ``name`` touches."""
        if name in ex.buffers:
            buf = ex.buffers[name]
            desc = ex.operands[name]
            if not isinstance(desc, GlobalDesc) or buf.array is None:
                return None
            shadow = self._shadow(buf, self._labels.get(id(buf), f"global {buf.name}"), "elements",
                                  buf.array.size)
            return shadow, footprint(desc)
        tile = ex.tiles.get(name)
        if tile is None:
            return None
        while tile.window is not None:  # a subset window: its parent's bytes (the whole valid region)
            tile = tile.window[0]
        if tile.storage is None:
            return None
        root, offset = memory_of(tile.storage)
        desc = ex.operands[name] if isinstance(ex.operands.get(name), TileDesc) else tile.current()
        if desc.valid_row is None or desc.valid_col is None:
            desc = desc.with_(valid_row=desc.rows, valid_col=desc.cols)
        rel = self._valid.get(desc)
        if rel is None:
            rel = self._valid[desc] = np.flatnonzero(valid_bytes(self.db.isa, desc))
        idx = rel[rel < tile.storage.size] + offset
        label = self._labels.get(id(root), "on-chip memory")
        return self._shadow(root, label, "bytes", root.size), idx

    def _shadow(self, memory, label: str, unit: str, size: int) -> _Shadow:
        s = self.shadows.get(id(memory))
        if s is None:
            s = self.shadows[id(memory)] = _Shadow(label, unit, np.full(size, -1, np.int32), {}, memory)
        return s

    def _run(self, pipe: PipeKey, seq: int, site_args: tuple, touched: list) -> None:
        tick = self.ordering.issue(pipe)
        pos, statement, unit, core = site_args
        for operand, (shadow, idx), reads, writes, atomic in touched:
            aid = len(self.accesses)
            me = _Access(Site(pos, statement, unit, operand, core), pipe, tick, seq, atomic)
            self.accesses.append(me)
            self.checked += 1
            if reads:
                self._against(shadow, shadow.writer, idx, me, "RAW")
            if writes:
                self._against(shadow, shadow.writer, idx, me, "WAW")
                for other, ids in shadow.readers.items():
                    if other != pipe or self.intra:
                        self._against(shadow, ids, idx, me, "WAR")
            if writes:
                shadow.writer[idx] = aid
                for ids in shadow.readers.values():
                    ids[idx] = -1
            if reads and not writes:
                ids = shadow.readers.get(pipe)
                if ids is None:
                    ids = shadow.readers[pipe] = np.full(shadow.writer.size, -1, np.int32)
                ids[idx] = aid

    def _against(self, shadow: _Shadow, ids: np.ndarray, idx: np.ndarray, me: _Access, kind: str) -> None:
        seen = ids[idx]
        for prev_id in np.unique(seen):
            if prev_id < 0:
                continue
            prev = self.accesses[int(prev_id)]
            if prev.seq == me.seq and prev.pipe == me.pipe:
                continue  # operands of one instruction
            if kind == "WAW" and prev.atomic and me.atomic:
                continue
            if self.ordering.ordered(prev.pipe, prev.tick, me.pipe, self.intra):
                continue
            self._report(shadow, idx[seen == prev_id], prev, me, kind)

    def _report(self, shadow: _Shadow, where: np.ndarray, prev: _Access, me: _Access, kind: str) -> None:
        first, second = (prev, me) if prev.seq <= me.seq else (me, prev)
        if first is not prev:  # a queued access ran after a later one: name them in program order
            kind = {"RAW": "WAR", "WAR": "RAW"}.get(kind, kind)
        hazard = Hazard(kind, first.site, second.site, "", "")
        found = self.found.get(hazard.key())
        if found is not None:
            found.count += 1
            return
        hazard.buffer = f"{shadow.label}, {shadow.unit} {int(where.min())}..{int(where.max())}"
        hazard.fix = self._fix(first, second)
        self.found[hazard.key()] = hazard

    def _fix(self, first: _Access, second: _Access) -> str:
        r = self.ordering.resolve
        if first.pipe[0] != second.pipe[0]:
            return cross_core_fix()
        if first.pipe == second.pipe:
            return barrier_fix(r.enum_of(first.pipe[1]))
        src, dst = r.enum_of(first.pipe[1]), r.enum_of(second.pipe[1])
        busy = set()
        for key, queue in self.ordering.flags.items():
            if not queue or key[:3] != (first.pipe[0], src, dst):
                continue
            busy.add(key[3])
            clock, pos = queue[-1]
            if clock.at(first.pipe) >= first.tick:  # a set after the first access that nobody waits for
                return (f"pto.wait_flag[<{src}>, <{dst}>, <EVENT_ID{key[3]}>] before the second (the set_flag at "
                        f"{pos} is never waited for)")
        return flag_fix(src, dst, next((n for n in range(8) if n not in busy), 0))

    # -- the result -----------------------------------------------------------------------------------
    def report(self) -> Report:
        rep = Report(sorted(self.found.values(), key=lambda h: (str(h.second.pos), str(h.first.pos))),
                     self.ordering.finish(), synchronisation=self.sync, accesses=self.checked)
        rep.auto_sync = self.ordering.explicit == 0
        for what, pos in self.unknown_pipe.items():
            rep.notes.append(f"{pos}: {what} runs on a pipe the spec does not give for these locations: not checked")
        return rep


def memory_of(arr: np.ndarray) -> tuple[np.ndarray, int]:
    """The array owning ``arr``'s memory, and ``arr``'s byte offset in it."""
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root, arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
