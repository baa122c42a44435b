"""The assembler's lowered form (``memrefs`` in specs/program.yaml): memref values as tiles of on-chip locations
(``memref.alloc``, ``pto.bind_tile``) and as views of global buffers (kernel arguments,
``memref.reinterpret_cast``).  Instruction lines naming memrefs are read by the walker with the tile and view
types these values are (``Walker.line_text``)."""

from __future__ import annotations

import re

from .errors import ProgramError
from .layer import constants, tile_form, view_layout, written_layout
from .layouts import infer
from .memref_types import MemrefError, MemrefType, is_global, parse_memref, tile_of
from .syntax import Operation
from .values import UNKNOWN, GlobalBuffer, PartitionView, Pointer, TensorView, TileBuffer, known
from .walker import Cursor, Walker

_CONFIG = re.compile(r"^#pto\.tile_buf_config<(.*)>$", re.S)
_CONFIG_ITEM = re.compile(r"([a-z_]+)\s*=\s*([0-9]+)(?:\s*:\s*i[0-9]+)?")
_CONFIG_KEYS = {"blayout": "blayout", "slayout": "slayout", "pad": "pad", "s_fractal_size": "fractal",
                "compact": "compact"}


def memref(w: Walker, op: Operation, text: str) -> MemrefType:
    try:
        mt = parse_memref(text, w.spec)
    except MemrefError as exc:
        raise ProgramError(str(exc), "program.type", op.pos) from None
    if mt is None:
        raise ProgramError(f"{op.name}: expected a memref type, got {text!r}", "program.type", op.pos)
    return mt


def argument_view(w_db, spec, mt: MemrefType, buffer: GlobalBuffer) -> PartitionView:
    """A global memref argument: its buffer seen as a view of the memref's shape and strides, the layout
    ``layout_inference`` gives (a shape both ND and DN fit: the consumers' Vec tiles decide)."""
    rule = spec.layout_inference
    strides = mt.view_strides
    layout, decides = "ND", False
    if rule is not None:
        bits = w_db.isa.dtypes[mt.dtype].bits if mt.dtype in w_db.isa.dtypes else 0
        got = infer(w_db, rule, list(mt.shape), list(strides), bits // 8)
        layout = got.layout or rule.fallback
        decides = got.ambiguous and got.consumer_decides
    shape = tuple(UNKNOWN if d is None else d for d in mt.shape)
    tv = TensorView(Pointer(buffer, UNKNOWN if mt.offset is None else mt.offset), shape,
                    tuple(UNKNOWN if s is None else s for s in strides), layout,
                    tuple(-1 if d is None else d for d in mt.shape), decides)
    return PartitionView(tv, (0,) * len(shape), shape)


def reach(view: PartitionView) -> int | None:
    """Elements of its buffer a view reaches (None: not known)."""
    tv = view.tensor
    if not known(tv.ptr.offset, *tv.shape, *tv.strides) or not all(e > 0 for e in tv.shape):
        return None
    return tv.ptr.offset + 1 + sum((e - 1) * s for e, s in zip(tv.shape, tv.strides, strict=True))


def _capacity(w: Walker, mt: MemrefType) -> int:
    loc = w.spec.memrefs.locations.get(mt.space)
    if loc is None:
        return 0
    return w.db.isa.profiles[w.profile].constants.get(f"{w.db.isa.tile_types[loc]}_bytes", 0)


def _alloc(w: Walker, op: Operation) -> None:
    """``%b = memref.alloc() : memref<RxCxT, #pto.address_space<vec>>``: a tile with storage of its own."""
    c = Cursor(w, op)
    c.expect("(")
    sizes = 0
    while not c.at(")"):
        c.operand()
        sizes += 1
        if not c.accept(","):
            break
    c.expect(")")
    c.skip_attr_dict()
    c.expect(":")
    mt = memref(w, op, c.type())
    rank = len(mt.shape)
    static = int(rank >= 2 and mt.shape[0] is not None and mt.shape[1] is not None and not sizes)
    glob = is_global(w.spec, mt)
    w.program_rules(op, "memref.alloc", {"rank": rank, "static": static, "capacity": _capacity(w, mt),
                                         "global": int(glob)}, table="memrefs")
    if glob or not static or mt.space not in w.spec.memrefs.locations:
        w.bind(op, [UNKNOWN])  # reported above (a run stops there)
        return
    desc = _tile(w, op, mt)
    tile_form(w, op, desc, "memref.alloc")
    itemsize = max(w.db.isa.dtypes[desc.dtype].bits // 8, 1)
    w.bind(op, [w.new_tile(op, desc, desc.rows * desc.cols * itemsize)])


def _tile(w: Walker, op: Operation, mt: MemrefType, config: dict | None = None, valid=None):
    try:
        return tile_of(w.spec, w.db.isa, mt, config, valid)
    except MemrefError as exc:
        raise ProgramError(f"{op.name}: {exc}", "program.type", op.pos) from None


def _dealloc(w: Walker, op: Operation) -> None:
    """``memref.dealloc %b : memref<...>``: the end of a buffer's life (nothing runs; the assembler's memory
    planning refuses it on an on-chip buffer)."""
    c = Cursor(w, op)
    w.get(c.value(), c.peek(-1))
    c.expect(":")
    mt = memref(w, op, c.type())
    w.program_rules(op, "memref.dealloc", {"onchip": int(not is_global(w.spec, mt))}, table="memrefs")


def _config(w: Walker, op: Operation, text: str | None) -> dict:
    """The tile configuration ``#pto.tile_buf_config<blayout=1 : i32, slayout=1 : i32, s_fractal_size=512,
    pad=0 : i32[, compact=1 : i32]>`` gives (``config`` of ``memrefs``: each enumerator by its number; the compact
    mode by the assembler's numbering, ``compact_modes`` of specs/isa.yaml)."""
    m = _CONFIG.match(text or "")
    if m is None:
        raise ProgramError(f"{op.name}: expected {{config = #pto.tile_buf_config<...>}}", "program.syntax", op.pos)
    numbers = {**w.spec.memrefs.config, "compact": w.db.isa.compact_dialect}
    config: dict = {}
    for key, value in _CONFIG_ITEM.findall(m.group(1)):
        field = _CONFIG_KEYS.get(key)
        if field is None:
            raise ProgramError(f"{op.name}: the program layer does not read {key} of a tile configuration",
                               "program.unsupported", op.pos)
        n = int(value)
        if field == "fractal":
            config[field] = n
        elif n >= len(numbers[field]):
            raise ProgramError(f"{op.name}: {key}={n} names no {field} (0 .. {len(numbers[field]) - 1})",
                               "program.type", op.pos)
        else:
            config[field] = numbers[field][n]
    return config


def _bind_tile(w: Walker, op: Operation) -> None:
    """``%v = pto.bind_tile %b[, %vr, %vc] {config = ...} : T -> T``: ``%b``'s bytes as a tile of that
    configuration and valid shape (a constant valid extent is part of the tile's type, as the emitter writes it)."""
    c = Cursor(w, op)
    source = w.get(c.value(), c.peek(-1))
    valid = None
    statics = [None, None]
    if c.accept(","):
        toks = [c.peek()]
        row = c.operand()
        c.expect(",")
        toks.append(c.peek())
        col = c.operand()
        valid = (row, col)
        statics = [v if t.kind == "number" or t.text in w.constants else None for t, v in zip(toks, valid, strict=True)]
    attrs = c.skip_attr_dict()
    c.expect(":")
    c.type()
    c.expect("->")
    mt = memref(w, op, c.type())
    config = _config(w, op, attrs.get("config"))
    if not isinstance(source, TileBuffer):
        raise ProgramError("pto.bind_tile needs an on-chip buffer", "program.type", op.pos)
    desc = _tile(w, op, mt, config, tuple(statics) if valid else None)
    current = valid if valid else (desc.rows, desc.cols)
    w.program_rules(op, "pto.bind_tile", {"valid_row": current[0], "valid_col": current[1], "rows": desc.rows,
                                          "cols": desc.cols}, table="memrefs")
    tile_form(w, op, desc, "pto.bind_tile")
    tile = TileBuffer(desc, current, isa=w.db.isa, np_dtype=source.np_dtype)
    base, offset = source.home or (source, 0)
    tile.home = (base, offset)
    if not w.checking:
        tile.storage = w.view_bytes(base, offset, desc)
        if base.place:
            tile.place = (base.place[0], base.place[1] + offset)
    w.bind(op, [tile])


def _reinterpret_cast(w: Walker, op: Operation) -> None:
    """``%v = memref.reinterpret_cast %m to offset: [%o], sizes: [...], strides: [...] {layout} : A to B``: a
    tensor view of ``%m``'s buffer from element %o on, whole (a partition of itself)."""
    c = Cursor(w, op)
    source = w.get(c.value(), c.peek(-1))
    c.expect("to")
    lists = {}
    for key in ("offset", "sizes", "strides"):
        if key != "offset":
            c.expect(",")
        c.expect(key)
        c.expect(":")
        start = c.i
        lists[key] = c.bracket_list()
        lists[key + "_static"] = constants(w, c, start, lists[key])
    attrs = c.skip_attr_dict()
    c.expect(":")
    c.type()
    c.expect("to")
    mt = memref(w, op, c.type())
    sizes, strides = lists["sizes"], lists["strides"]
    glob = int(isinstance(source, PartitionView) and is_global(w.spec, mt))
    offset = lists["offset"][0] if len(lists["offset"]) == 1 else UNKNOWN
    w.program_rules(op, "memref.reinterpret_cast", {"rank": len(sizes), "strides_count": len(strides),
                                                    "global": glob, "offset": offset},
                    [{"size": n, "stride": s} for n, s in zip(sizes, strides, strict=False)], table="memrefs")
    if not glob or len(lists["offset"]) != 1:
        w.bind(op, [UNKNOWN])
        return
    written = written_layout(w, attrs, op)
    dims = [-1 if d is None else d for d in mt.shape]
    layout, decides, _inferred, _mismatch = view_layout(w, op, mt.dtype, dims, lists["sizes_static"],
                                                        lists["strides_static"], written)
    tv = TensorView(Pointer(source.tensor.ptr.buffer, lists["offset"][0]), tuple(sizes), tuple(strides), layout,
                    tuple(dims), decides)
    view = PartitionView(tv, (0,) * len(sizes), tuple(sizes))
    if (n := reach(view)) is not None:
        name = tv.ptr.buffer.name
        w.extents[name] = max(w.extents.get(name, 0), n)
    w.bind(op, [view])


def handlers(spec) -> dict:
    if spec.memrefs is None:
        return {}
    table = {"memref.alloc": _alloc, "memref.dealloc": _dealloc, "pto.bind_tile": _bind_tile,
             "memref.reinterpret_cast": _reinterpret_cast}
    return {name: table[name] for name in spec.memrefs.operations if name in table}
