"""Cross-core FIFOs (TPipes) between kernels that run together: the cube kernel and its vector sub-blocks
each run in a thread of their own; a pipe per (direction, flag id) holds ``slot_num`` slots shared by them.
Also the assembler's frontend spelling of the pipe (``pto.tpush_to_aiv`` ...) and its lowered one (``pto.tpush(%t,
%pipe : T, !pto.pipe)`` ...), read as TPUSH/TPOP/TFREE."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from ..tile import AttrDesc
from .errors import ProgramError
from .lexer import integer_attributes
from .values import PipeHandle
from .walker import Cursor, Walker

WAIT_SECONDS = 0.2  # a blocked kernel re-checks its pipe (and whether every kernel is blocked) this often


class Aborted(Exception):
    """Another kernel of the run failed: this one stops quietly (the run reports the first error)."""


class Hub:
    """What the kernels of one run share: their pipes, one lock, and who is blocked (a deadlock check)."""

    def __init__(self, kernels: int):
        self.cond = threading.Condition()
        self.memory = threading.Lock()  # held while an instruction reads and writes global memory
        self.alive = kernels
        self.waiting: dict[int, object] = {}  # thread -> the condition it waits for
        self.error: BaseException | None = None
        self.pipes: dict[tuple[str, int], Pipe] = {}

    def fail(self, exc: BaseException) -> None:
        with self.cond:
            if self.error is None:
                self.error = exc
            self.cond.notify_all()

    def finished(self) -> None:
        with self.cond:
            self.alive -= 1
            self.cond.notify_all()

    def wait(self, ready, what: str, pos) -> None:
        """Block (the lock held) until ``ready()``.  When every running kernel waits and none of them can go on
        (a waiter that was notified but has not woken yet counts as able to), the run is
        ``program.pipe-deadlock``."""
        me = threading.get_ident()
        while not ready():
            if self.error is not None:
                raise Aborted
            self.waiting[me] = ready
            try:
                if len(self.waiting) >= self.alive and not any(r() for r in self.waiting.values()):
                    self.error = ProgramError(f"every kernel is blocked (this one {what}): the pipes deadlock",
                                              "program.pipe-deadlock", pos)
                    self.cond.notify_all()
                    raise self.error
                self.cond.wait(WAIT_SECONDS)
            finally:
                del self.waiting[me]


@dataclass
class Pipe:
    """One direction of a TPipe: ``producers`` push parts of each tile, ``consumers`` pop their parts."""

    slot_num: int
    producers: int
    consumers: int
    pushed: list[int] = field(default_factory=list)
    popped: list[int] = field(default_factory=list)
    freed: list[int] = field(default_factory=list)
    slots: dict[int, dict[int, np.ndarray]] = field(default_factory=dict)

    def __post_init__(self):
        self.pushed, self.popped, self.freed = [0] * self.producers, [0] * self.consumers, [0] * self.consumers


@dataclass
class Side:
    """Where a kernel sits: ``cube`` or ``vector`` sub-block ``index`` of ``count``."""

    hub: Hub
    kind: str
    index: int = 0
    count: int = 1

    def transfer(self, w: Walker, op, line, data: dict, tiles: dict) -> None:
        """Run a validated cross-core instruction of this kernel (``transfer``)."""
        transfer(w, op, line, data, tiles)


def _split(arr: np.ndarray, split: int, parts: int, k: int, pos) -> np.ndarray:
    if parts == 1:
        return arr
    if split == 0:
        raise ProgramError(f"split = 0 (TILE_NO_SPLIT) with {parts} vector sub-blocks: which sub-block carries "
                           "the tile is not modelled; run with one sub-block", "program.pipe-split", pos)
    return np.array_split(arr, parts, axis=split - 1)[k]


def _action(w: Walker, op_name: str, mode_name: str) -> tuple[str, str]:
    """What a cross-core mode does to its pipe, read from its operands: pushes its input tile, pops into its
    output tile, or (no tile) frees the slot last popped; with that tile operand's name."""
    mode = w.db.op(op_name).mode(mode_name)
    tile = next((o for o in mode.operands if not o.is_attr), None)
    if tile is None:
        return "free", ""
    return ("push" if tile.role == "in" else "pop"), tile.name


def transfer(w: Walker, op, line, data: dict, tiles: dict) -> None:
    """Run a validated cross-core instruction (TPUSH/TPOP/TFREE) on the run's pipes (``w.side``)."""
    side: Side = w.side
    attrs = {k: int(d.value) for k, d in line.operands.items() if isinstance(d, AttrDesc)}
    action, operand = _action(w, line.op, line.mode)
    direction = line.mode if action != "free" else _free_direction(side, attrs)
    vector = side.count
    producers, consumers = (1, vector) if direction == "c2v" else (vector, 1)
    me = 0 if side.kind == "cube" else side.index
    producer = "cube" if direction == "c2v" else "vector"
    if (side.kind == producer) != (action == "push"):  # a cube pops only V2C, a vector kernel only C2V, ...
        raise ProgramError(f"a {action} of the {direction} pipe runs on the {side.kind} kernel, which "
                           f"{'produces' if side.kind == producer else 'consumes'} it", "program.pipe-side", op.pos)
    key = (direction, attrs.get("flag_id", 0))
    hub = side.hub
    with hub.cond:
        pipe = hub.pipes.setdefault(key, Pipe(attrs.get("slot_num", 1), producers, consumers))
        if pipe.slot_num != attrs.get("slot_num", 1):
            raise ProgramError(f"the {direction} pipe with flag id {key[1]} has {pipe.slot_num} slots in another "
                               f"kernel, {attrs.get('slot_num', 1)} here", "program.pipe-mismatch", op.pos)
        if action == "push":
            hub.wait(lambda: pipe.pushed[me] - min(pipe.freed) < pipe.slot_num, "pushes into a full pipe", op.pos)
            pipe.slots.setdefault(pipe.pushed[me], {})[me] = np.array(data[operand], copy=True)
            pipe.pushed[me] += 1
        elif action == "pop":
            hub.wait(lambda: min(pipe.pushed) > pipe.popped[me], "pops from an empty pipe", op.pos)
            parts = pipe.slots[pipe.popped[me]]
            split = attrs.get("split", 0)
            whole = parts[0] if producers == 1 else np.concatenate(
                [_split_check(parts[k], split, producers, op.pos) for k in range(producers)], axis=max(split - 1, 0))
            part = _split(whole, split, consumers, me, op.pos)
            pipe.popped[me] += 1
            dst = tiles[operand]
            if part.shape != (dst.desc.rows, dst.desc.cols):
                raise ProgramError(f"the popped tile is {part.shape[0]}x{part.shape[1]}, the destination "
                                   f"{dst.desc.rows}x{dst.desc.cols}", "program.pipe-shape", op.pos)
            dst.store(part.astype(dst.np_dtype))
        else:
            if pipe.freed[me] >= pipe.popped[me]:
                raise ProgramError("tfree without a popped slot to free", "program.pipe-free", op.pos)
            pipe.freed[me] += 1
            for seq in [s for s in pipe.slots if s < min(pipe.freed)]:
                del pipe.slots[seq]
        hub.cond.notify_all()


def _split_check(arr: np.ndarray, split: int, parts: int, pos) -> np.ndarray:
    _split(arr, split, parts, 0, pos)  # split 0 with several sub-blocks is refused
    return arr


def _free_direction(side: Side, attrs: dict) -> str:
    mask = attrs.get("dir_mask", 3)
    if mask == 1:
        return "c2v"
    if mask == 2:
        return "v2c"
    return "v2c" if side.kind == "cube" else "c2v"  # a consumer frees what it pops


# -- the assembler's frontend spelling (``frontend_pipes`` in specs/program.yaml) -------------------------
def _initialize(w: Walker, op) -> None:
    spelling = w.spec.frontend_pipes
    c = Cursor(w, op)
    attrs = c.skip_attr_dict()
    mask = _int_attr(attrs, "dir_mask", 3, op)
    w.pipe_attrs = {"dir_mask": mask, "slot_size": _int_attr(attrs, "slot_size", 0, op),
                    "slot_num": spelling.slot_num_both_ways if mask == 3 else spelling.slot_num_one_way,
                    "flag_id": spelling.flag_id}


def _int_attr(attrs: dict[str, str], key: str, default: int, op) -> int:
    """An integer attribute of a frontend pipe operation (``{split = 1}``), ``default`` when absent."""
    value = integer_attributes(attrs, (key,), op.pos)[key]
    return default if value is None else value


def _buffer(w: Walker, op) -> None:
    w.bind(op, [0] * len(op.results))  # a reserved FIFO buffer's address: the interpreter's pipes hold the data


def _frontend(w: Walker, op) -> None:
    name, direction = w.spec.frontend_pipes.operations[op.name]
    mode = direction if any(m.name == direction for m in w.db.op(name).modes) else None  # the direction's mode
    action, _operand = _action(w, name, mode or w.db.op(name).modes[0].name)
    pipe = getattr(w, "pipe_attrs", None)
    if pipe is None:
        raise ProgramError(f"{op.name} before {' / '.join(w.spec.frontend_pipes.initialize)}", "program.pipe-init",
                           op.pos)
    c = Cursor(w, op)
    tile = ty = None
    if action == "push":
        c.expect("(")
        tile = c.value()
        c.expect(":")
        ty = c.type()
        c.expect(")")
    elif c.accept("("):  # a pop's optional (valid_row, valid_col): the destination keeps its type's valid shape
        c.value()
        c.expect(",")
        c.value()
        c.expect(")")
    split = _int_attr(c.skip_attr_dict(), "split", 0, op)
    if action == "pop":
        c.expect("->")
        ty = c.type()
        tile = op.results[0] if op.results else None
    attrs = _fifo_attrs(split, pipe["dir_mask"], direction, pipe["slot_size"], pipe["slot_num"], pipe["flag_id"])
    w.instruction(op, name, _fifo_line(w, name, action, attrs, tile, ty), mode)


def _fifo_attrs(split: int, mask: int, direction: str, slot_size: int, slot_num: int, flag_id: int) -> str:
    """The attributes of ptospec's TPUSH/TPOP/TFREE line for one direction of a pipe."""
    mask = mask if mask == 3 else (1 if direction == "c2v" else 2)
    return (f"{{split = {split} : i8, dir_mask = {mask} : i8, slot_size = {slot_size} : i32, "
            f"slot_num = {slot_num} : i32, flag_id = {flag_id} : i8}}")


# -- the assembler's lowered spelling (``lowered_pipes`` in specs/program.yaml) ---------------------------
def _lowered_initialize(w: Walker, op) -> None:
    """``%p = pto.initialize_l2l_pipe {dir_mask, slot_size, slot_num[, flag_base]...}(%addr : i32) -> !pto.pipe``:
    a pipe value (its buffers' addresses are the interpreter's pipes)."""
    c = Cursor(w, op)
    attrs = c.skip_attr_dict()
    if c.accept("("):
        while c.peek() is not None and not c.at(")"):
            t = c.next("an operand")
            if t.kind == "value":
                w.get(t.text, t)
        c.expect(")")
    handle = PipeHandle(_int_attr(attrs, "dir_mask", 3, op), _int_attr(attrs, "slot_size", 0, op),
                        _int_attr(attrs, "slot_num", 1, op), _int_attr(attrs, "flag_base", 0, op))
    w.bind(op, [handle])


def _declare_tile(w: Walker, op) -> None:
    """``%t = pto.declare_tile -> T``: a tile a TPOP fills (the FIFO slot's bytes: here storage of its own)."""
    c = Cursor(w, op)
    c.expect("->")
    desc = w.tile_type(c.type(), op.pos)
    w.bind(op, [w.new_tile(op, desc)])


def _kernel_kind(w: Walker, op) -> str | None:
    kinds = w.spec.lowered_pipes.kernel_kinds
    func = w.function
    return next((kinds[t.text] for t in (func.tail if func is not None else ()) if t.text in kinds), None)


def _lowered(w: Walker, op) -> None:
    """``pto.tpush(%t, %p : T, !pto.pipe) {split}``, ``pto.tpop(%t, %p : T, !pto.pipe) {split}`` and
    ``pto.tfree(%p : !pto.pipe) {split}``: TPUSH, TPOP and TFREE on the pipe ``%p``; a line in ptospec's own
    spelling is the database instruction as written."""
    name = w.spec.lowered_pipes.operations[op.name]
    if not any(t.text == "!pto.pipe" for t in op.tail):
        w.database_instruction(op, w.db.op(name))
        return
    c = Cursor(w, op)
    values, types = c.typed_operands()
    split = _int_attr(c.skip_attr_dict(), "split", 0, op)
    pipe = w.get(values[-1], None) if values else None
    if not isinstance(pipe, PipeHandle):
        raise ProgramError(f"{op.name}: the last operand must be a pipe (!pto.pipe) of "
                           f"{' / '.join(w.spec.lowered_pipes.initialize)}", "program.type", op.pos)
    kind = _kernel_kind(w, op)
    if pipe.dir_mask in (1, 2):
        direction = "c2v" if pipe.dir_mask == 1 else "v2c"
    elif kind is None:
        raise ProgramError(f"{op.name} on a pipe of both directions in a function without pto.kernel_kind: "
                           "the direction is not known", "program.pipe-direction", op.pos)
    else:
        pushes = "c2v" if kind == "cube" else "v2c"
        pusher = _action(w, name, w.db.op(name).modes[0].name)[0] == "push"  # the producer's side, from the spec
        direction = pushes if pusher else ("v2c" if pushes == "c2v" else "c2v")
    mode = direction if any(m.name == direction for m in w.db.op(name).modes) else None
    action, _operand = _action(w, name, mode or w.db.op(name).modes[0].name)
    attrs = _fifo_attrs(split, pipe.dir_mask, direction, pipe.slot_size, pipe.slot_num, pipe.flag_id)
    if action in ("push", "pop") and len(values) != 2:
        raise ProgramError(f"{op.name} takes a tile and a pipe", "program.syntax", op.pos)
    tile, ty = (values[0], types[0]) if action in ("push", "pop") else (None, None)
    w.instruction(op, name, _fifo_line(w, name, action, attrs, tile, ty), mode)


def handlers(spec) -> dict:
    """The walker's handlers of the frontend and lowered pipe spellings ``spec`` (a ``ProgramSpec``) declares."""
    table = {}
    spelling = spec.frontend_pipes
    if spelling is not None:
        table.update({**{n: _frontend for n in spelling.operations}, **{n: _initialize for n in spelling.initialize},
                      **{n: _buffer for n in spelling.reserved_buffers}})
    lowered = spec.lowered_pipes
    if lowered is not None:
        table.update({n: _lowered_initialize for n in lowered.initialize})
        table.update({n: _lowered for n in lowered.operations})
        table[lowered.declare_tile] = _declare_tile
    return table


def _fifo_line(w: Walker, name: str, action: str, attrs: str, tile: str | None, ty: str | None) -> str:
    """The FIFO instruction's line in ptospec's spelling: a push reads its tile, a pop writes it, a free has none."""
    if action == "push":
        return f"pto.{name} ins({tile} {attrs} : {w.resolve_type(ty)})"
    if action == "pop":
        return f"pto.{name} ins({attrs}) outs({tile} : {w.resolve_type(ty)})"
    return f"pto.{name} ins({attrs})"
