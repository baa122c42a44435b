"""Global-tensor views: ``!pto.partition_tensor_view<...>`` / ``!pto.tensor_view<...>`` and CLI descriptors.

A view type holds a shape of one to five dimensions and an element type, as the assembler prints it
(``!pto.partition_tensor_view<16x16xf32>``, ``!pto.tensor_view<?x?xf32>``).  Everything else of a
``GlobalTensor`` follows from defaults unless written as a keyword parameter:

    !pto.partition_tensor_view<16x16xf32, strides=32x1, layout=nd, offset=8, size=1024>

* ``strides``: elements between neighbours along each dimension (default: the packed strides of the
  layout, from ``global_layouts.<L>.order`` in specs/isa.yaml); ``?`` for a stride known at run time;
* ``layout``: a global layout, assembly (``nd``) or C++ (``ND``) spelling; default ND;
* ``offset``: the view's first element within its buffer (default 0), ``?`` when dynamic;
* ``size``: the buffer's length in elements (default: just enough for the view), ``?`` when dynamic.

The canonical form prints only what differs from those defaults, so a plain view prints exactly as
the assembler writes it.  ``!pto.memref<...>`` and ``!pto.global<...>`` (the pages' spellings) read as partition views.
A CLI descriptor is the inside of the brackets after a leading ``gm``: ``gm, 16x16xf32, strides=32x1``.
"""

from __future__ import annotations

import re

from ..errors import TileError
from ..model import Isa
from ..tile import DEFAULT_GLOBAL_LAYOUT, GLOBAL_RANK, GlobalDesc

VIEW_TYPES = ("partition_tensor_view", "tensor_view")
VIEW_ALIASES = {"memref": "partition_tensor_view", "global": "partition_tensor_view",
                "gm": "partition_tensor_view"}
_VIEW_TYPE = re.compile(r"^!pto\.(partition_tensor_view|tensor_view|memref|global)<(.*)>$", re.S)
_DIM = r"(?:[0-9]+|\?)"
_SHAPE = re.compile(rf"^((?:{_DIM}x){{1,{GLOBAL_RANK}}})([a-z][a-z0-9]*)$")
_LIST = re.compile(rf"^{_DIM}(?:x{_DIM}){{0,{GLOBAL_RANK - 1}}}$")
MAX_EXTENT = 1 << 40  # elements; anything larger is a typo, not a buffer


def is_view_type(text: str) -> bool:
    return _VIEW_TYPE.match(text.strip()) is not None


def is_view_descriptor(params: list[str]) -> bool:
    return bool(params) and params[0].strip().lower() in (*VIEW_TYPES, *VIEW_ALIASES)


def _number(word: str, what: str, text: str) -> int | None:
    if word == "?":
        return None
    if not re.fullmatch(r"[0-9]+", word):
        raise TileError(f"{what} must be a non-negative integer or ?, got {word!r} in {text!r}", rule="gm.syntax")
    value = int(word)
    if value > MAX_EXTENT:
        raise TileError(f"{what} {value} is unreasonably large in {text!r}", rule="gm.syntax")
    return value


def global_layout(isa: Isa, word: str) -> str | None:
    """The global layout a word names, in its C++ (``ND``) or assembly (``nd``) spelling."""
    return next((n for n, g in isa.global_layouts.items() if word in (n, g.asm)), None)


def packed_strides(isa: Isa, shape: tuple[int | None, ...], layout: str) -> tuple[int | None, ...]:
    """The strides of a packed view of ``shape`` in ``layout`` (None where a dimension is dynamic)."""
    order = isa.global_layouts[layout].order
    if order is None:
        order = tuple(range(GLOBAL_RANK - 1, -1, -1))
    pad = GLOBAL_RANK - len(shape)
    dims5 = (1,) * pad + tuple(shape)
    strides5: list[int | None] = [None] * GLOBAL_RANK
    step: int | None = 1
    for dim in order:
        strides5[dim] = step
        step = None if step is None or dims5[dim] is None else step * dims5[dim]
    return tuple(strides5[pad:])


def parse_view(params: list[str], isa: Isa, text: str) -> GlobalDesc:
    """Parse the parameters of a view (the first one may name the view type: ``gm``, ``tensor_view``...)."""
    params = [p.strip() for p in params]
    view = "partition_tensor_view"
    if params and params[0].lower() in (*VIEW_TYPES, *VIEW_ALIASES):
        first = params.pop(0).lower()
        view = VIEW_ALIASES.get(first, first)
    if not params or not _SHAPE.match(params[0]):
        raise TileError(f"expected a shape and dtype like 16x16xf32 or ?x?xf32 in {text!r}", rule="gm.syntax")
    dims_text, dtype = _SHAPE.match(params.pop(0)).groups()  # type: ignore[union-attr]
    if dtype not in isa.dtypes:
        raise TileError(f"unknown dtype {dtype!r} in {text!r} (known: {', '.join(isa.dtypes)})", rule="tile.dtype")
    shape = tuple(_number(w, "a dimension", text) for w in dims_text[:-1].split("x"))
    keywords: dict[str, str] = {}
    for p in params:
        key, sep, value = p.partition("=")
        key = key.strip().lower()
        if not sep or not key:
            raise TileError(f"expected name=value, got {p!r} in {text!r}", rule="gm.syntax")
        if key in keywords:
            raise TileError(f"parameter {key!r} given twice in {text!r}", rule="gm.syntax")
        keywords[key] = value.strip()
    layout = DEFAULT_GLOBAL_LAYOUT
    if "layout" in keywords:
        word = keywords.pop("layout")
        found = global_layout(isa, word)
        if found is None:
            known = ", ".join(g.asm for g in isa.global_layouts.values())
            raise TileError(f"unknown global layout {word!r} in {text!r} (known: {known})", rule="gm.syntax")
        layout = found
    if "strides" in keywords:
        words = keywords.pop("strides").strip("[]").replace(",", "x").replace(" ", "")
        if not _LIST.match(words):
            raise TileError(f"strides must look like 32x1 (one per dimension) in {text!r}", rule="gm.syntax")
        strides = tuple(_number(w, "a stride", text) for w in words.split("x"))
        if len(strides) != len(shape):
            raise TileError(f"{len(strides)} stride(s) for {len(shape)} dimension(s) in {text!r}", rule="gm.syntax")
    else:
        strides = packed_strides(isa, shape, layout)
    offset = _number(keywords.pop("offset"), "offset", text) if "offset" in keywords else 0
    desc = GlobalDesc(dtype, shape, strides, layout, offset, None, view)
    if "size" in keywords:
        size = _number(keywords.pop("size"), "size", text)
    else:
        size = None if desc.span is None or offset is None else offset + desc.span
    if keywords:
        raise TileError(f"unknown parameter(s) {', '.join(sorted(keywords))} in {text!r} "
                        "(a view takes strides, layout, offset, size)", rule="gm.syntax")
    return desc.with_(size=size)


def parse_view_type(text: str, isa: Isa) -> GlobalDesc:
    m = _VIEW_TYPE.match(text.strip())
    if not m:
        raise TileError(f"expected !pto.partition_tensor_view<...> or !pto.tensor_view<...>, got {text!r}",
                        rule="asm.type")
    kind = VIEW_ALIASES.get(m.group(1), m.group(1))
    return parse_view([kind, *m.group(2).split(",")], isa, text.strip())


def _dims(values: tuple[int | None, ...]) -> str:
    return "x".join("?" if v is None else str(v) for v in values)


def format_view_params(g: GlobalDesc, isa: Isa) -> str:
    """``16x16xf32`` plus every parameter that differs from its default."""
    parts = [f"{_dims(g.shape)}x{g.dtype}"]
    if g.strides != packed_strides(isa, g.shape, g.layout):
        parts.append(f"strides={_dims(g.strides)}")
    if g.layout != "ND":
        parts.append(f"layout={isa.global_layouts[g.layout].asm}")
    if g.offset != 0:
        parts.append(f"offset={'?' if g.offset is None else g.offset}")
    default_size = None if g.span is None or g.offset is None else g.offset + g.span
    if g.size != default_size:
        parts.append(f"size={'?' if g.size is None else g.size}")
    return ", ".join(parts)


def format_view_descriptor(g: GlobalDesc, isa: Isa) -> str:
    lead = "gm" if g.view == "partition_tensor_view" else g.view
    return f"{lead}, {format_view_params(g, isa)}"


def format_view_type(g: GlobalDesc, isa: Isa) -> str:
    return f"!pto.{g.view}<{format_view_params(g, isa)}>"
