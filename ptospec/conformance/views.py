"""Global-tensor operands in generated cases: views shaped after a valid region, and their mutations.

A view follows the case's valid region the way a tile does (an extent of 1 stays 1).  Partial cases
give the view an origin inside its buffer, a row gap and spare buffer elements after it, so that a
backend writing outside the addressed elements is caught; some also split the rows (ND) or columns
(DN) over an outer dimension, so that the five-dimensional placement is exercised.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..asm.views import packed_strides
from ..model import Isa
from ..tile import GlobalDesc

FIELDS = ("shape", "strides", "layout", "offset", "size")  # what a mutation of a view may change
# the expression fields (g.dim3, g.span, ...) that read each view field; a layout change also counts as a
# change of the tile layout fields, which rules reading `x.layout` are filed under
FIELD_READS = {
    "shape": ("rank", "span", *(f"dim{k}" for k in range(5))),
    "strides": ("span", *(f"stride{k}" for k in range(5))),
    "layout": ("layout", "blayout", "slayout"),
    "offset": ("offset", "span"),
    "size": ("size",),
}
ORIGIN = 3  # elements before a partial case's view in its buffer
GAP = 5  # extra elements between neighbouring rows (ND) or columns (DN) of a partial case's view
SPARE = 7  # buffer elements after the view's last element


def shaped_view(isa: Isa, g: GlobalDesc, rows: int, cols: int, partial: bool) -> GlobalDesc:
    """``g`` reshaped to ``rows`` x ``cols`` elements in its layout (2-D, or split over an outer dimension)."""
    rows = 1 if g.shape[-2:-1] == (1,) else rows
    cols = 1 if g.shape[-1] == 1 else cols
    if g.layout == "DN":
        shape: tuple[int, ...] = (2, rows, cols // 2) if partial and cols % 2 == 0 and cols > 2 else (rows, cols)
    elif g.layout == "ND":
        shape = (2, rows // 2, cols) if partial and rows % 2 == 0 and rows > 2 else (rows, cols)
    elif g.layout == "NZ" and g.rank == 5 and g.known:
        # the base's fractal block (dimensions 3 and 4) repeated over row blocks and column blocks
        block_rows, block_cols = g.shape[3], g.shape[4]
        if rows % block_rows or cols % block_cols:
            return g
        shape = (1, cols // block_cols, rows // block_rows, block_rows, block_cols)
        view = GlobalDesc(g.dtype, shape, packed_strides(isa, shape, "NZ"), "NZ", ORIGIN if partial else 0, None,
                          g.view)
        return view.with_(size=view.offset + view.span + (SPARE if partial else 0))
    else:
        return g  # the unmodelled layouts keep the example's shape
    strides = list(packed_strides(isa, shape, g.layout))
    if partial:  # a gap after each row (ND) or column (DN): the view is no longer packed
        inner = -1 if g.layout == "ND" else -2
        strides = _with_gap(shape, strides, inner)
    view = GlobalDesc(g.dtype, shape, tuple(strides), g.layout, ORIGIN if partial else 0, None, g.view)
    return view.with_(size=view.offset + view.span + (SPARE if partial else 0))


def retyped(isa: Isa, g: GlobalDesc, dtype: str) -> GlobalDesc:
    """``g`` with elements of ``dtype``; a known NZ view keeps the byte width of its fractal block's rows
    (dimension 4 scaled by the size ratio of the types), so that the block stays a block."""
    if g.layout != "NZ" or g.rank != 5 or not g.known or dtype == g.dtype:
        return g.with_(dtype=dtype)
    row_bytes = g.shape[4] * isa.dtypes[g.dtype].bytes
    width = isa.dtypes[dtype].bytes
    if row_bytes % width:
        return g.with_(dtype=dtype)
    cols = g.shape[1] * g.shape[4]
    block = row_bytes // width
    if cols % block:
        return g.with_(dtype=dtype)
    shape = (1, cols // block, g.shape[2], g.shape[3], block)
    view = g.with_(dtype=dtype, shape=shape, strides=packed_strides(isa, shape, "NZ"))
    return view.with_(size=view.offset + view.span + (g.size - g.offset - g.span))


def _with_gap(shape: tuple[int, ...], strides: list[int | None], inner: int) -> list[int | None]:
    """Strides with ``GAP`` elements added after each run along dimension ``inner``; outer ones follow."""
    order = sorted(range(len(shape)), key=lambda k: strides[k])  # fastest first
    out = list(strides)
    step = None
    for k in order:
        if step is not None:
            out[k] = step
        step = out[k] * shape[k] + (GAP if k == len(shape) + inner else 0)
    return out


def layout_variants(isa: Isa, g: GlobalDesc) -> Iterator[GlobalDesc]:
    """``g`` in each other modelled two-dimensional layout."""
    for name in ("ND", "DN"):
        if name != g.layout and name in isa.global_layouts:
            yield g.with_(layout=name, strides=packed_strides(isa, g.shape, name))


def mutations(isa: Isa, g: GlobalDesc) -> Iterator[GlobalDesc]:
    """Single changes of a legal view: its layout, one extent, its rank, and a buffer too short."""
    yield from layout_variants(isa, g)
    for k, d in enumerate(g.shape):
        for new in (d - 1, d + 1, 0):
            if new >= 0 and new != d:
                shape = (*g.shape[:k], new, *g.shape[k + 1:])
                view = g.with_(shape=shape, strides=packed_strides(isa, shape, g.layout))
                yield view.with_(size=view.offset + view.span)
    if g.rank < 5:
        shape = (2, *g.shape[:-2], max(1, (g.shape[-2] or 2) // 2), g.shape[-1]) if g.layout == "ND" else \
            (2, *g.shape[:-1], max(1, (g.shape[-1] or 2) // 2))
        view = g.with_(shape=shape, strides=packed_strides(isa, shape, g.layout))
        yield view.with_(size=view.offset + view.span)
    if g.size:
        yield g.with_(size=g.size - 1)


def short_id(g: GlobalDesc) -> str:
    """A view's part of a case id: layout, rank, and 'o' for a view placed inside a larger buffer."""
    placed = "o" if g.offset or g.size != (g.span or 0) else ""
    return f"{g.layout.lower()}{g.rank}{placed}"
