"""The asynchronous DMA of the communication instructions as the assembler writes them (``build_async_session``,
``tput_async``, ``tget_async``, ``wait_async_event``, ``test_async_event`` in specs/program.yaml): their rules are
checked; the interpreter models one rank, so a transfer copies its source's elements to its destination's when
it is issued and its event is done at once."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ProgramError
from .lexer import integer_attributes
from .syntax import Operation
from .values import UNKNOWN, PartitionView, Pointer, TensorView, TileBuffer, known
from .walker import Cursor, Walker


@dataclass(frozen=True, eq=False)
class AsyncSession:
    """A session of ``build_async_session`` (its scratch tile and workspace; nothing the interpreter uses)."""

    scratch: object
    workspace: object


@dataclass(frozen=True, eq=False)
class AsyncEvent:
    """The event of one transfer (done when issued, in the interpreter)."""

    session: AsyncSession


def _operands(c: Cursor, count: int) -> tuple[list, list[str]]:
    """``(%a, %b, ... : T1, T2, ...)``: the values named and their types."""
    names, types = c.typed_operands()
    if len(names) != count or len(types) != count:
        raise c.error(f"{c.op.name} takes {count} operands, each with its type; got {len(names)} and {len(types)}")
    return [c.w.get(n, c.peek(-1)) for n in names], names


def _bits(w: Walker, dtype: str) -> int:
    return w.db.isa.dtypes[dtype].bits if dtype in w.db.isa.dtypes else 0


def _global(value) -> tuple[str, tuple, tuple, object] | None:
    """A global operand as (element type, extents, strides, first element's offset): a view, a partition, or a
    pointer (one element); None for anything else."""
    if isinstance(value, PartitionView):
        tv = value.tensor
        offset = UNKNOWN
        if known(tv.ptr.offset, *value.offsets, *tv.strides):
            offset = tv.ptr.offset + sum(o * s for o, s in zip(value.offsets, tv.strides, strict=True))
        return tv.ptr.dtype, tuple(value.sizes), tuple(tv.strides), offset
    if isinstance(value, TensorView):
        return value.ptr.dtype, tuple(value.shape), tuple(value.strides), value.ptr.offset
    if isinstance(value, Pointer):
        return value.dtype, (), (), value.offset
    return None


def _build_session(w: Walker, op: Operation) -> None:
    c = Cursor(w, op)
    (scratch, workspace), names = _operands(c, 2)
    attrs = c.skip_attr_dict()
    scratch_vec = scratch_bytes = None
    if isinstance(scratch, TileBuffer):
        scratch_vec = int(scratch.desc.loc == "Vec")
        scratch_bytes = scratch.desc.rows * scratch.desc.cols * _bits(w, scratch.desc.dtype) // 8
    elif scratch is not UNKNOWN:
        raise ProgramError(f"{names[0]} is not a tile", "program.type", op.pos)
    found = _global(workspace)
    if found is None and workspace is not UNKNOWN:
        raise ProgramError(f"{names[1]} is not global memory", "program.type", op.pos)
    dtype = found[0] if found else None
    values = {"scratch_vec": scratch_vec, "scratch_bytes": scratch_bytes,
              "workspace_global": None if found is None else 1,
              "workspace_bytes": None if dtype is None else int(_bits(w, dtype) == 8 and dtype[0] in "iu")}
    # the integer attributes specs/program.yaml names
    values.update(integer_attributes(attrs, w.spec.instructions[op.name[4:]].attributes, op.pos))
    w.program_rules(op, op.name[4:], values)
    w.bind(op, [AsyncSession(scratch, workspace)])


def _view_values(found, prefix: str) -> dict:
    _dtype, shape, strides, _offset = found
    static = all(known(e) for e in shape) and bool(shape)
    flat = int(all(e == 1 for e in shape[:-1])) if static else None
    last = strides[-1] if strides else 1
    contiguous = 1 if shape and shape[-1] == 1 else (None if not known(last) else int(last == 1))
    return {f"{prefix}_static": int(static), f"{prefix}_flat": flat, f"{prefix}_contiguous": contiguous}


def _transfer(w: Walker, op: Operation) -> None:
    """``tput_async`` / ``tget_async``: dst, src, session; the source's elements copied to the destination's."""
    c = Cursor(w, op)
    (dst, src, session), names = _operands(c, 3)
    views = [_global(v) for v in (dst, src)]
    for v, name, found in zip((dst, src), names[:2], views, strict=True):
        if found is None and v is not UNKNOWN:
            raise ProgramError(f"{name} is not a view of global memory", "program.type", op.pos)
    if not isinstance(session, AsyncSession) and session is not UNKNOWN:
        raise ProgramError(f"{names[2]} is not an async session (build_async_session)", "program.type", op.pos)
    values: dict = {"same_dtype": None, "same_shape": None, "dst_static": None, "src_static": None,
                    "dst_flat": None, "src_flat": None, "dst_contiguous": None, "src_contiguous": None}
    if all(views):
        values.update(_view_values(views[0], "dst"))
        values.update(_view_values(views[1], "src"))
        values["same_dtype"] = int(views[0][0] == views[1][0])
        values["same_shape"] = int(views[0][1] == views[1][1]) if values["dst_static"] and values["src_static"] \
            else None
    w.program_rules(op, op.name[4:], values)
    if not w.checking:
        _copy(w, op, dst, src, views)
    w.bind(op, [AsyncEvent(session)])


def _copy(w: Walker, op: Operation, dst, src, views) -> None:
    """One rank: the transfer is done when issued (the views are flat: element k at offset + k x last stride)."""
    (_dt, shape, dstrides, doff), (_st, _shape, sstrides, soff) = views
    n = shape[-1] if shape else 1
    ends = []
    for value, strides, off in ((dst, dstrides, doff), (src, sstrides, soff)):
        buffer = (value.tensor.ptr if isinstance(value, PartitionView) else
                  value.ptr if isinstance(value, TensorView) else value).buffer
        step = strides[-1] if strides else 1
        last = off + (n - 1) * step if n else off
        if off < 0 or last >= buffer.array.size:
            w.violation(op.pos, "gm.bounds", f"{op.name[4:]}: the view reaches elements {off} .. {last} of a buffer "
                        f"of {buffer.array.size}")
        ends.append((buffer.array, off, step))
    (darr, doff, dstep), (sarr, soff, sstep) = ends
    data = sarr[soff:soff + n * sstep:sstep].copy() if n else sarr[:0]
    darr[doff:doff + n * dstep:dstep] = data


def _event(w: Walker, op: Operation) -> None:
    """``wait_async_event`` / ``test_async_event``: the transfer is done (true)."""
    c = Cursor(w, op)
    (event, session), names = _operands(c, 2)
    if not isinstance(event, AsyncEvent) and event is not UNKNOWN:
        raise ProgramError(f"{names[0]} is not an async event (tput_async, tget_async)", "program.type", op.pos)
    if not isinstance(session, AsyncSession) and session is not UNKNOWN:
        raise ProgramError(f"{names[1]} is not an async session (build_async_session)", "program.type", op.pos)
    w.bind(op, [1])


HANDLERS = {"pto.build_async_session": _build_session, "pto.tput_async": _transfer, "pto.tget_async": _transfer,
            "pto.wait_async_event": _event, "pto.test_async_event": _event}
