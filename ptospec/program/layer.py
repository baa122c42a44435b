"""The program layer's instructions (specs/program.yaml): tensor views and their partitions, pointers,
tile buffers placed in on-chip memory, valid shapes; each checks its rules through the walker."""

from __future__ import annotations

import itertools
import re

import numpy as np

from ..executor import numpy_dtype
from ..storage import storage_bytes
from ..tile import DEFAULT_GLOBAL_LAYOUT
from ..validator import tile_rule_values, tile_verdicts
from .errors import ProgramError
from .layouts import consumer_layout, infer, spelled_layout
from .syntax import Operation
from .values import UNKNOWN, PartitionView, Pointer, TensorView, TileAddress, TileBuffer, known
from .walker import Cursor, Walker

_TYPED_PTR = re.compile(r"^!pto\.ptr<\s*([a-z][a-z0-9]*)\s*(?:,\s*([a-z_]+)\s*)?>$")
_VIEW = re.compile(r"^!pto\.(tensor_view|partition_tensor_view)<(.*)>$", re.S)


def _element_type(text: str) -> tuple[str, list]:
    m = _VIEW.match(text)
    if not m:
        raise ValueError(text)
    parts = [p.strip() for p in m.group(2).split(",")[0].split("x")]
    dims = list(itertools.takewhile(lambda p: p == "?" or p.isdigit(), parts))
    # the element type is the rest: a dtype may itself contain an x (f4e2m1x2)
    return "x".join(parts[len(dims):]), [(-1 if p == "?" else int(p)) for p in dims]


def written_layout(w: Walker, attrs: dict[str, str], op: Operation) -> str | None:
    spelled = attrs.get("layout")
    return None if spelled is None else spelled_layout(w.db.isa, spelled, op.pos)


def constants(w: Walker, c: Cursor, start: int, values: list) -> list:
    """Of a list just read (from token ``start`` on), the values the assembler sees as constants (integer
    literals and results of arith.constant), None for the others."""
    names = [t for t in c.toks[start:c.i] if t.kind in ("value", "number")]
    return [v if t.kind == "number" or t.text in w.constants else None for t, v in zip(names, values, strict=False)]


def _make_tensor_view(w: Walker, op: Operation) -> None:
    c = Cursor(w, op)
    ptr = w.get(c.value(), c.peek(-1))
    start = c.i
    shape = c.named_list("shape")
    static_shape = constants(w, c, start, shape)
    start = c.i
    strides = c.named_list("strides")
    static_strides = constants(w, c, start, strides)
    attrs = c.skip_attr_dict()
    c.expect(":")
    ty = c.type()
    try:
        dtype, dims = _element_type(ty)
    except ValueError:
        raise ProgramError(f"expected !pto.tensor_view<...>, got {ty}", "program.type", op.pos) from None
    if not isinstance(ptr, Pointer):
        raise ProgramError("make_tensor_view needs a !pto.ptr argument", "program.type", op.pos)
    if ptr.dtype != dtype:
        w.violation(op.pos, "view.dtype", f"make_tensor_view: pointer of {ptr.dtype}, view of {dtype}")
    written = written_layout(w, attrs, op)
    layout, decides, inferred, mismatch = view_layout(w, op, dtype, dims, static_shape, static_strides, written)
    w.program_rules(op, "make_tensor_view", {"rank": len(shape), "strides_count": len(strides),
                                             "type_rank": len(dims), "written_layout": written or "none",
                                             "inferred_layout": inferred or "none", "layout_mismatch": mismatch},
                    [{"extent": e, "stride": s} for e, s in zip(shape, strides, strict=False)])
    if known(ptr.offset, *shape, *strides) and all(e > 0 for e in shape):
        reach = ptr.offset + 1 + sum((e - 1) * s for e, s in zip(shape, strides, strict=False))
        w.extents[ptr.buffer.name] = max(w.extents.get(ptr.buffer.name, 0), reach)
    w.bind(op, [TensorView(ptr, tuple(shape), tuple(strides), layout, tuple(dims), decides)])


def view_layout(w: Walker, op: Operation, dtype: str, dims: list, shape: list, strides: list,
                 written: str | None) -> tuple[str, bool, str | None, int]:
    """The view's layout as the assembler gives it (``layout_inference``): the written one, or the one its
    constant shape and strides give; whether a consumer's tile decides it; the inferred one (None: not
    static); whether the written one contradicts the inferred one."""
    rule = w.spec.layout_inference
    if rule is None:
        return written or DEFAULT_GLOBAL_LAYOUT, False, None, 0
    static = [d if d >= 0 else s for d, s in zip(dims, shape, strict=False)]
    bits = w.db.isa.dtypes[dtype].bits if dtype in w.db.isa.dtypes else 0
    got = infer(w.db, rule, static, strides, bits // 8)
    if written is not None:
        mismatch = written in dict(rule.match) and got.layout is not None and got.layout != written and not (
            got.ambiguous and written in rule.ambiguous)  # a layout inference never gives (MX_*) contradicts nothing
        return written, False, got.layout, int(mismatch)
    if got.layout is None:
        return rule.fallback, False, None, 0
    if got.ambiguous and got.consumer_decides:
        preferred = _consumers_preference(w, op, rule)
        return preferred or got.layout, True, got.layout, 0
    return got.layout, False, got.layout, 0


def _consumers_preference(w: Walker, op: Operation, rule) -> str | None:
    """The layout the Vec tiles of the consumers (TLOAD, TSTORE) of the view's partitions agree on, if any."""
    if not op.results or w.function is None:
        return None
    view = op.results[0]
    ops = list(_nested_ops(w.function.regions[0][0])) if w.function.regions else []
    parts = {r for o in ops if o.name == "pto.partition_view" for r in o.results
             if next((t.text for t in o.tail if t.kind == "value"), None) == view}
    mnemonics = {f"pto.{w.db.ops[name].mnemonic}" for name in rule.consumers}
    preferred = set()
    for o in ops:
        if o.name not in mnemonics or not any(t.kind == "value" and t.text in parts for t in o.tail):
            continue
        try:
            line = w.parsed(o)
        except ProgramError:
            continue
        for desc in line.operands.values():
            if (layout := consumer_layout(rule, desc)) is not None:
                preferred.add(layout)
    return next(iter(preferred)) if len(preferred) == 1 else None


def _partition_view(w: Walker, op: Operation) -> None:
    c = Cursor(w, op)
    tv = w.get(c.value(), c.peek(-1))
    offsets = c.named_list("offsets")
    sizes = c.named_list("sizes")
    c.skip_attr_dict()
    c.expect(":")
    c.type()
    c.expect("->")
    ty = c.type()
    try:
        _dtype, dims = _element_type(ty)
    except ValueError:
        raise ProgramError(f"expected !pto.partition_tensor_view<...>, got {ty}", "program.type", op.pos) from None
    if not isinstance(tv, TensorView):
        raise ProgramError("partition_view needs a tensor view", "program.type", op.pos)
    w.program_rules(op, "partition_view", {"rank": len(tv.shape), "offsets_count": len(offsets),
                                           "sizes_count": len(sizes)},
                    [{"offset": o, "size": s, "extent": e, "type_size": t, "static_extent": d}
                     for o, s, e, t, d in zip(offsets, sizes, tv.shape, dims, tv.declared or (-1,) * len(dims),
                                              strict=False)])
    w.bind(op, [PartitionView(tv, tuple(offsets), tuple(sizes))])


def _tensor_view_extent(w: Walker, op: Operation, name: str, field: str) -> None:
    """``%v = pto.<name> %tv, %k : ... -> index``: dimension k's size (``shape``) or stride in elements
    (``strides``) of a tensor view."""
    c = Cursor(w, op)
    tv = w.get(c.value(), c.peek(-1))
    c.expect(",")
    k = c.operand()
    if not isinstance(tv, TensorView):
        raise ProgramError(f"{name} needs a tensor view", "program.type", op.pos)
    values = getattr(tv, field)
    w.program_rules(op, name, {"dim": k, "rank": len(values)})
    w.bind(op, [values[k] if known(k) and 0 <= k < len(values) else UNKNOWN])


def _get_tensor_view_dim(w: Walker, op: Operation) -> None:
    _tensor_view_extent(w, op, "get_tensor_view_dim", "shape")


def _get_tensor_view_stride(w: Walker, op: Operation) -> None:
    _tensor_view_extent(w, op, "get_tensor_view_stride", "strides")


def _pointer_result(w: Walker, c: Cursor, op: Operation) -> tuple[str, str]:
    """The ``-> !pto.ptr<T[, space]>`` result type of an address instruction: (dtype, space)."""
    c.skip_attr_dict()
    c.expect(":")
    c.type()
    c.expect("->")
    ty = c.type()
    m = _TYPED_PTR.match(ty)
    if m is None:
        raise ProgramError(f"{op.name[4:]}: the interpreter models the pointer result (!pto.ptr<T, space>), "
                           f"not {ty}", "program.type", op.pos)
    return w.spec.dtype_aliases.get(m.group(1), m.group(1)), m.group(2) or ""


def _tensor_view_addr(w: Walker, op: Operation) -> None:
    """``%p = pto.tensor_view_addr %v : ... -> !pto.ptr<T, gm>``: a pointer to the view's first element."""
    c = Cursor(w, op)
    view = w.get(c.value(), c.peek(-1))
    dtype, space = _pointer_result(w, c, op)
    if isinstance(view, PartitionView):
        tv = view.tensor
        base = tv.ptr.offset
        first = base + sum(o * s for o, s in zip(view.offsets, tv.strides, strict=True)) \
            if known(base, *view.offsets, *tv.strides) else UNKNOWN
        ptr = Pointer(tv.ptr.buffer, first)
    elif isinstance(view, TensorView):
        ptr = view.ptr
    else:
        raise ProgramError("tensor_view_addr needs a tensor view or a partition of one", "program.type", op.pos)
    w.program_rules(op, "tensor_view_addr", {"same_dtype": int(dtype == ptr.dtype),
                                             "global_space": int(space in ("", "gm"))})
    w.bind(op, [ptr])


def _tile_buf_addr(w: Walker, op: Operation) -> None:
    """``%p = pto.tile_buf_addr %t : !pto.tile_buf<...> -> !pto.ptr<T, vec>``: the tile's data address, for
    the vector-scope code around it (only inside pto.vecscope)."""
    c = Cursor(w, op)
    tile = w.get(c.value(), c.peek(-1))
    dtype, space = _pointer_result(w, c, op)
    if not isinstance(tile, TileBuffer):
        raise ProgramError("tile_buf_addr needs a tile buffer", "program.type", op.pos)
    w.program_rules(op, "tile_buf_addr", {"in_vecscope": int(w.vecscope > 0),
                                          "same_dtype": int(dtype == tile.desc.dtype)})
    w.bind(op, [TileAddress(tile, dtype, space)])


def _vecscope(w: Walker, op: Operation) -> None:
    """``pto.vecscope { ... }`` and ``pto.strict_vecscope(%a, ...) { ^bb0(%x: T, ...): ... } : (...) -> ()``:
    a vector interval; its body runs in order, inside it tile instructions are illegal."""
    c = Cursor(w, op)
    args = []
    if c.accept("("):
        while not c.at(")"):
            args.append(w.get(c.value(), c.peek(-1)))
            if not c.accept(","):
                break
        c.expect(")")
    if len(op.regions) != 1 or len(op.regions[0]) != 1:
        raise ProgramError(f"{op.name} needs one body region of one block", "program.syntax", op.pos)
    body = op.regions[0][0]
    inside = list(_nested_ops(body))
    strict = op.name == "pto.strict_vecscope"
    w.program_rules(op, "vecscope", {
        "nested": int(w.vecscope > 0 or any(o.name in ("pto.vecscope", "pto.strict_vecscope") for o in inside)),
        "tile_ops": sum(1 for o in inside if o.name.startswith("pto.") and w.db.by_mnemonic(o.name[4:]) is not None),
        "strict": int(strict), "arguments": len(args), "block_args": len(body.args),
        "captured": len(_captured(body))})
    if not strict and args:
        raise ProgramError("pto.vecscope takes no operands (pto.strict_vecscope does)", "program.syntax", op.pos)
    w.vecscope += 1
    try:
        w.run_block(body, args if body.args else [])
    finally:
        w.vecscope -= 1


def _captured(body) -> set[str]:
    """The values a block uses that neither it (results, block arguments) nor its nested blocks define."""
    defined = {name for name, _ in body.args}
    used: set[str] = set()

    def visit(block):
        defined.update(name for name, _ in block.args)
        for o in block.ops:
            defined.update(r.split("#")[0] for r in o.results)
            used.update(tok.text.split("#")[0] for tok in o.tail if tok.kind == "value")
            for region in o.regions:
                for inner in region:
                    visit(inner)

    visit(body)
    return used - defined


def _nested_ops(block):
    for o in block.ops:
        yield o
        for region in o.regions:
            for inner in region:
                yield from _nested_ops(inner)


def _addptr(w: Walker, op: Operation) -> None:
    c = Cursor(w, op)
    ptr = w.get(c.value(), c.peek(-1))
    c.expect(",")
    off = c.operand()
    if not isinstance(ptr, Pointer):
        raise ProgramError("addptr needs a pointer", "program.type", op.pos)
    new = ptr.offset + off if known(ptr.offset, off) else UNKNOWN
    w.program_rules(op, "addptr", {"offset": new, "length": ptr.buffer.length})
    w.bind(op, [Pointer(ptr.buffer, new)])


def _address_values(w: Walker, desc, addr, nbytes: int, capacity: int) -> dict:
    """The values of tassign's rules for a tile of ``desc`` placed at ``addr``: ``unit`` is the profile constant
    ``address_units`` names for its location (0 where none is named)."""
    constant = w.spec.address_units.get(desc.loc)
    unit = w.db.isa.profiles[w.profile].constants[constant] if constant else 0
    return {"addr": addr, "bytes": nbytes, "capacity": capacity, "align": w.spec.align, "unit": unit}


def _alloc_tile(w: Walker, op: Operation) -> None:
    c = Cursor(w, op)
    given = {}
    while c.peek() is not None and c.peek().text in ("addr", "valid_row", "valid_col"):
        key = c.next("a keyword").text
        c.expect("=")
        given[key] = c.operand()
    c.skip_attr_dict()
    c.expect(":")
    desc = w.tile_type(c.type(), op.pos)
    loc = w.db.isa.tile_types[desc.loc]
    itemsize = w.db.isa.dtypes[desc.dtype].bits // 8 if desc.dtype in w.db.isa.dtypes else 0
    nbytes = desc.rows * desc.cols * max(itemsize, 1)
    capacity = w.db.isa.profiles[w.profile].constants.get(f"{loc}_bytes", 0)
    vr = given.get("valid_row", desc.valid_row) if desc.valid_row is None else desc.valid_row
    vc = given.get("valid_col", desc.valid_col) if desc.valid_col is None else desc.valid_col
    addr = given.get("addr")
    if addr is not None:  # the assembler emits TASSIGN for it: the address rules are tassign's
        w.program_rules(op, "tassign", _address_values(w, desc, addr, nbytes, capacity))
    w.program_rules(op, "alloc_tile", {
        "capacity": capacity,
        "valid_row": vr if vr is not None else 0, "valid_col": vc if vc is not None else 0,
        "rows": desc.rows, "cols": desc.cols,
        "dynamic_row": int(desc.valid_row is None), "dynamic_col": int(desc.valid_col is None),
        "given_row": int("valid_row" in given), "given_col": int("valid_col" in given)})
    tile_form(w, op, desc, "alloc_tile")
    tile = TileBuffer(desc, (UNKNOWN if vr is None else vr, UNKNOWN if vc is None else vc), isa=w.db.isa)
    if addr is not None:
        tile.place = (loc, addr)
    if not w.checking:
        tile.np_dtype = numpy_dtype(w.db, desc.dtype)
        nbytes = max(nbytes, storage_bytes(w.db.isa, desc)) if itemsize else nbytes  # a partial box leaves gaps
        if addr is None:
            tile.storage = np.zeros(nbytes, np.uint8)
        else:
            _place(w, tile, loc, addr, nbytes, capacity)
        if w.tracer is not None:
            w.tracer.alloc(op, tile)
    w.bind(op, [tile])


def tile_form(w: Walker, op: Operation, desc, name: str) -> None:
    """The tile type's well-formedness rules (``tile.capacity``, ...): an ill-formed tile is refused before it
    takes storage."""
    broken = []
    for rule, verdict in tile_verdicts(w.db, desc, w.profile):
        if verdict is not None:  # None: a dynamic valid shape, which the valid operands give
            why = verdict if isinstance(verdict, str) else tile_rule_values(w.db, desc, rule, w.profile)
            broken.append((rule.id, f"{name}: {rule.message['en']} ({why})"))
    w.violations(op.pos, broken)


def _place(w: Walker, tile: TileBuffer, loc: str, addr: int, nbytes: int, capacity: int) -> None:
    """Give ``tile`` the bytes at ``addr`` of its location's buffer (the tassign rules hold: checked)."""
    buf = w.onchip.get(loc)
    if buf is None:
        buf = w.onchip[loc] = np.zeros(capacity, np.uint8)
    tile.storage = buf[addr:addr + nbytes]
    tile.place = (loc, addr)


def _tassign(w: Walker, op: Operation) -> None:
    """``%t2 = pto.tassign %t, %addr : T -> T``: the tile placed at a new address (no data moves; the
    SSA result denotes the new place, the operand keeps its own)."""
    c = Cursor(w, op)
    source = w.get(c.value(), c.peek(-1))
    c.expect(",")
    addr = c.operand()
    c.skip_attr_dict()
    c.expect(":")
    desc = w.tile_type(c.type(), op.pos)
    if not isinstance(source, TileBuffer):
        raise ProgramError("tassign needs a tile buffer", "program.type", op.pos)
    loc = w.db.isa.tile_types[desc.loc]
    nbytes = desc.rows * desc.cols * max(w.db.isa.dtypes[desc.dtype].bits // 8, 1)
    capacity = w.db.isa.profiles[w.profile].constants.get(f"{loc}_bytes", 0)
    w.program_rules(op, "tassign", _address_values(w, desc, addr, nbytes, capacity))
    tile = TileBuffer(source.desc, source.valid, isa=w.db.isa)
    if not w.checking:
        if not known(addr):
            raise ProgramError("tassign: the address is not known", "program.dynamic", op.pos)
        tile.np_dtype = source.np_dtype
        _place(w, tile, loc, addr, max(nbytes, storage_bytes(w.db.isa, desc)), capacity)
        if w.tracer is not None:
            w.tracer.alloc(op, tile)
    w.bind(op, [tile])


def _set_validshape(w: Walker, op: Operation) -> None:
    c = Cursor(w, op)
    tile = w.get(c.value(), c.peek(-1))
    c.expect(",")
    r = c.operand()
    c.expect(",")
    col = c.operand()
    if not isinstance(tile, TileBuffer):
        raise ProgramError("set_validshape needs a tile buffer", "program.type", op.pos)
    d = tile.desc
    w.program_rules(op, "set_validshape", {"valid_row": r, "valid_col": col, "rows": d.rows, "cols": d.cols,
                                           "dynamic": int(d.valid_row is None or d.valid_col is None)})
    tile.valid = (r if d.valid_row is None else d.valid_row, col if d.valid_col is None else d.valid_col)


def _subset(w: Walker, op: Operation) -> None:
    """``%w = pto.subset %t[%row, %col] sizes [R, C] : T``: an R x C tile of ``%t``'s element type and layout
    whose element (i, j) is ``%t``'s element (row + i, col + j) (the parent's strides): reads and writes
    through either tile see the same elements.  Its valid shape follows the assembler's inference: per
    dimension min(size, parent valid - offset mod parent valid), dynamic when the parent's or the offset
    is not known."""
    c = Cursor(w, op)
    parent = w.get(c.value(), c.peek(-1))
    offsets = c.bracket_list()
    c.expect("sizes")
    sizes = c.bracket_list()
    c.skip_attr_dict()
    c.expect(":")
    c.type()
    if not isinstance(parent, TileBuffer):
        raise ProgramError("subset needs a tile buffer", "program.type", op.pos)
    d = parent.desc
    row, col = [*offsets, UNKNOWN, UNKNOWN][:2]
    size_rows, size_cols = [*sizes, UNKNOWN, UNKNOWN][:2]
    w.program_rules(op, "subset", {"row": row, "col": col, "size_rows": size_rows, "size_cols": size_cols,
                                   "rows": d.rows, "cols": d.cols, "offsets_count": len(offsets),
                                   "sizes_count": len(sizes)})
    if not known(size_rows, size_cols):
        raise ProgramError("subset: the sizes must be constants", "program.type", op.pos)

    def valid(size, offset, parent_valid):
        if not known(offset, parent_valid):
            return UNKNOWN
        return min(size, parent_valid - offset % parent_valid) if parent_valid > 0 else size

    vr, vc = valid(size_rows, row, parent.valid[0]), valid(size_cols, col, parent.valid[1])
    desc = d.with_(rows=size_rows, cols=size_cols, valid_row=vr if known(vr) else None,
                   valid_col=vc if known(vc) else None)
    window = TileBuffer(desc, (vr, vc), isa=w.db.isa, np_dtype=parent.np_dtype)
    if not w.checking:
        if not known(row, col):
            raise ProgramError("subset: the window's offsets are not known", "program.type", op.pos)
        window.window = (parent, row, col)
    w.bind(op, [window])


HANDLERS = {
    "pto.make_tensor_view": _make_tensor_view, "pto.partition_view": _partition_view,
    "pto.get_tensor_view_dim": _get_tensor_view_dim, "pto.addptr": _addptr, "pto.alloc_tile": _alloc_tile,
    "pto.set_validshape": _set_validshape, "pto.subset": _subset, "pto.tassign": _tassign,
    "pto.get_tensor_view_stride": _get_tensor_view_stride, "pto.tensor_view_addr": _tensor_view_addr,
    "pto.tile_buf_addr": _tile_buf_addr, "pto.vecscope": _vecscope, "pto.strict_vecscope": _vecscope,
}
