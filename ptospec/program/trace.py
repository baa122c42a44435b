"""A record of one reference run: every executed database instruction with its concrete operands and a
copy of what it wrote, and every tile buffer it used (placed where ``alloc_tile`` put it).

The CPU simulator replays this record (``program/cpusim.py``) and ``program/compare.py`` compares the
two, step by step.  Control flow in a kernel depends on scalars only, so the reference run decides it and
the replay needs no branches of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..tile import AttrDesc, GlobalDesc, ScalarDesc, TileDesc
from .errors import ProgramError, SourcePos
from .syntax import Operation
from .values import GlobalBuffer, TileBuffer
from .walker import Executed

MAX_SNAPSHOT_BYTES = 1 << 30  # copies of outputs one trace may hold


@dataclass
class Slot:
    """Where one tile lives on the simulator: the byte address ``alloc_tile addr`` gave it, or (storage of
    its own) an address chosen after the run, one per ``alloc_tile`` statement."""

    desc: TileDesc  # the type of the tile first placed there
    nbytes: int
    addr: int | None  # None until placed (own storage)
    own: bool
    pos: SourcePos | None
    owner: TileBuffer | None = None  # own storage: the tile the statement allocated last
    parent: Slot | None = None  # a view (treshape, subset, tsubview): the slot whose bytes it starts in
    offset: int = 0  # ... at this byte


@dataclass
class Operand:
    """One operand of a step, as concrete as the run made it."""

    name: str
    desc: TileDesc | GlobalDesc | ScalarDesc | AttrDesc
    slot: Slot | None = None  # tiles
    buffer: int | None = None  # globals: index into Trace.buffers
    value: object = None  # scalars


@dataclass
class Step:
    index: int
    pos: SourcePos | None
    statement: str  # the dialect's instruction name (pto.tadd)
    op: str
    mode: str
    operands: list[Operand]
    outputs: dict[str, np.ndarray]  # output -> what the reference left there (tiles: rows x cols; globals: the
    # view's elements in footprint order)
    inside: dict[str, np.ndarray]  # output -> mask of the elements that count (valid region or written)
    kind: str = "instruction"  # instruction | alloc (zero ``zero``: fresh storage is zeros) | block (a new
    # block starts: on-chip memory is zeros again, as each block's walker starts with empty buffers)
    zero: Slot | None = None

    def where(self) -> str:
        return f"{self.pos}: {self.statement}" if self.pos else self.statement


@dataclass
class Trace:
    profile: str
    buffers: list[GlobalBuffer] = field(default_factory=list)
    initial: list[np.ndarray] = field(default_factory=list)  # each buffer's contents before the run (flat)
    steps: list[Step] = field(default_factory=list)
    slots: list[Slot] = field(default_factory=list)
    synchronisation: int = 0  # synchronisation instructions run (no data semantics: not replayed)

    @property
    def instructions(self) -> list[Step]:
        return [s for s in self.steps if s.kind == "instruction"]


def footprint(desc: GlobalDesc) -> np.ndarray:
    """Flat buffer indices of a view's elements, outermost dimension first (the replay dumps this order)."""
    grids = np.meshgrid(*(np.arange(d, dtype=np.int64) for d in desc.dims5), indexing="ij")
    flat = sum(g * s for g, s in zip(grids, desc.strides5, strict=True))
    return (desc.offset + flat).reshape(-1)


class Recorder:
    """A ``walker.Tracer`` that builds a ``Trace``."""

    def __init__(self, profile: str):
        self.trace = Trace(profile)
        self._slots: dict[int, Slot] = {}  # id(TileBuffer) -> slot
        self._own: dict[int, Slot] = {}  # id(alloc statement) -> its own-storage slot
        self._placed: dict[tuple[str, int, int], Slot] = {}
        self._views: dict[tuple, Slot] = {}  # (parent slot, byte offset, type) -> the view's slot
        self._buffers: dict[int, int] = {}
        self._bytes = 0

    # -- walker.Tracer ------------------------------------------------------------------------------
    def begin(self, buffers: dict[str, GlobalBuffer]) -> None:
        for buf in buffers.values():
            self._buffers[id(buf)] = len(self.trace.buffers)
            self.trace.buffers.append(buf)
            self.trace.initial.append(buf.array.copy())

    def synchronisation(self, op: Operation, name: str = "", values: dict | None = None) -> None:
        self.trace.synchronisation += 1

    def block(self, index: int) -> None:
        if index:
            self.trace.steps.append(Step(len(self.trace.steps), None, f"block {index}", "", "", [], {}, {}, "block"))

    def alloc(self, op: Operation, tile: TileBuffer) -> None:
        d = tile.desc
        nbytes = int(tile.storage.size)
        if tile.place:
            loc, addr = tile.place
            key = (loc, addr, nbytes)
            slot = self._placed.get(key)
            if slot is None:
                slot = self._placed[key] = Slot(d, nbytes, addr, False, op.pos)
                self.trace.slots.append(slot)
            self._slots[id(tile)] = slot
            return
        slot = self._own.get(id(op))
        if slot is None:
            slot = self._own[id(op)] = Slot(d, nbytes, None, True, op.pos)
            self.trace.slots.append(slot)
        slot.owner = tile
        self._slots[id(tile)] = slot
        self.trace.steps.append(Step(len(self.trace.steps), op.pos, op.name, "", "", [], {}, {}, "alloc", slot))

    def instruction(self, ex: Executed) -> None:
        operands: list[Operand] = []
        outputs: dict[str, np.ndarray] = {}
        inside: dict[str, np.ndarray] = {}
        for name, desc in ex.operands.items():
            if isinstance(desc, AttrDesc):
                operands.append(Operand(name, desc))
            elif isinstance(desc, ScalarDesc):
                operands.append(Operand(name, desc, value=ex.data[name]))
            elif isinstance(desc, GlobalDesc):
                buf = ex.buffers[name]
                operands.append(Operand(name, desc, buffer=self._buffers[id(buf)]))
                if name in ex.outputs:
                    idx = footprint(desc)
                    outputs[name] = buf.array[idx].copy()
                    inside[name] = np.ones(idx.shape, bool)
            else:
                tile = ex.tiles[name]
                if tile.window is not None:
                    raise ProgramError(f"{ex.name}: operand {name} is a subset window, which has its parent's "
                                       "row stride; the replay places only whole tiles and views of their bytes",
                                       "cpusim.placement", ex.op.pos)
                slot = self._view_slot(tile, ex) if tile.home else self._slots.get(id(tile))
                if slot is None or (slot.own and slot.owner is not tile):
                    raise ProgramError(f"{ex.name}: operand {name} is a tile whose alloc_tile statement has "
                                       "allocated another one since; the simulator replay gives each statement "
                                       "one place (give it addr = ...)", "cpusim.placement", ex.op.pos)
                operands.append(Operand(name, desc, slot=slot))
                if name in ex.outputs:
                    outputs[name] = tile.elements().copy()
                    mask = np.zeros((desc.rows, desc.cols), bool)
                    mask[:desc.valid_row, :desc.valid_col] = True
                    if name in ex.written:
                        mask |= np.asarray(ex.written[name], bool).reshape(mask.shape)
                    inside[name] = mask
        self._bytes += sum(a.nbytes for a in outputs.values())
        if self._bytes > MAX_SNAPSHOT_BYTES:
            raise ProgramError(f"the outputs of the first {len(self.trace.steps)} steps exceed "
                               f"{MAX_SNAPSHOT_BYTES >> 20} MiB; compare a shorter run", "cpusim.trace-size",
                               ex.op.pos)
        self.trace.steps.append(Step(len(self.trace.steps), ex.op.pos, ex.op.name, ex.name, ex.mode, operands,
                                     outputs, inside))


    def _view_slot(self, tile: TileBuffer, ex: Executed) -> Slot:
        """The place of a tile that is a view of another tile's bytes: its base's slot, from the view's byte."""
        base, offset = tile.home
        parent = self._slots.get(id(base))
        if parent is None:
            raise ProgramError(f"{ex.name}: a view of a tile the replay has not placed", "cpusim.placement",
                               ex.op.pos)
        key = (id(parent), offset, tile.desc)
        slot = self._views.get(key)
        if slot is None:
            slot = self._views[key] = Slot(tile.desc, int(tile.storage.size), None, False, ex.op.pos,
                                           parent=parent, offset=offset)
            self.trace.slots.append(slot)
        return slot


def place(trace: Trace, regions: dict[str, str], align: int) -> None:
    """Give every own-storage slot an address: per simulator memory region, packed above the highest byte
    any addr-placed tile of that region uses (so they share bytes with nothing)."""
    top: dict[str, int] = {}
    for s in trace.slots:
        if not s.own and s.parent is None:
            region = regions[s.desc.loc]
            top[region] = max(top.get(region, 0), s.addr + s.nbytes)
    for s in trace.slots:
        if s.own:
            region = regions[s.desc.loc]
            at = -(-top.get(region, 0) // align) * align
            s.addr = at
            top[region] = at + s.nbytes
    for s in trace.slots:  # views last: their bases are placed (a view of a view has a placed base too)
        if s.parent is not None:
            s.addr = s.parent.addr + s.offset



class Tee:
    """Several ``walker.Tracer``s watching one run, told everything in the same order."""

    def __init__(self, *tracers):
        self.tracers = [t for t in tracers if t is not None]

    def begin(self, buffers: dict[str, GlobalBuffer]) -> None:
        for t in self.tracers:
            t.begin(buffers)

    def block(self, index: int) -> None:
        for t in self.tracers:
            t.block(index)

    def alloc(self, op: Operation, tile: TileBuffer) -> None:
        for t in self.tracers:
            t.alloc(op, tile)

    def instruction(self, step: Executed) -> None:
        for t in self.tracers:
            t.instruction(step)

    def synchronisation(self, op: Operation, name: str = "", values: dict | None = None) -> None:
        for t in self.tracers:
            t.synchronisation(op, name, values)
