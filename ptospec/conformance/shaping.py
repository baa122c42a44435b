"""How a generated case shapes a mode's tiles from its example: the mode's ``shapes`` (docs/specs.md, Case shapes).

A case has a valid region R x C, and for a matrix multiply a third extent K (the contraction; R + C - 1
unless given).  Each tile operand's valid rows and columns follow the region as its ``CaseShape`` says (an
operand the mode does not name: ``[rows, cols]``; an operand that ``stores`` values of another type counts its
columns in them); a valid extent of 0 or 1 in the example stays.  Physical
extents are the valid ones (plus 1 for a partial case) rounded up to a power of two the case search varies
per tile axis (2**kr rows, 2**kc columns); K's is rounded to the larger of the two, so that the tiles that
must agree on it (Left's columns, Right's rows) do.
"""

from __future__ import annotations

from collections.abc import Callable

from ..model import CaseShape, Extent
from ..tile import GlobalDesc, ScalarDesc, TileDesc
from . import views

Tiles = dict[str, TileDesc | ScalarDesc]

FOLLOW = CaseShape()  # [rows, cols]
INDEX_PER_ROW = CaseShape(Extent("rows"), Extent("rows"))
INDEX_PER_COL = CaseShape(Extent("cols"), Extent("cols"))


def roundup(value: int, unit: int) -> int:
    return max(unit, -(-value // unit) * unit)


def example_target(tiles: Tiles, fixed: tuple[str, ...] = ()) -> tuple[int, int]:
    """The valid region a configuration spans: the largest of its tiles' (a fixed-shape operand aside)."""
    shaped = [t for n, t in tiles.items() if isinstance(t, TileDesc) and n not in fixed]
    rows = [t.valid_row for t in shaped if t.valid_row]
    cols = [t.valid_col for t in shaped if t.valid_col]
    return (max(rows, default=1), max(cols, default=1))


def share(own: int, example: int, extent: int) -> int:
    """``own``, an extent of the example whose region spans ``example``, as the same share of ``extent``:
    rounded to the nearest whole, at least 1.  A half rounds down, so that a part half the whole still fits
    twice (TSORT32's source, half its destination's width); to the nearest, two parts of a whole still add up
    to it (TCONCAT's sources, two thirds and one third of the destination's width)."""
    if own == example:
        return extent
    return max(1, -(-(2 * own * extent - example) // (2 * example)))


def default_shape(t: TileDesc, region: tuple[int, int]) -> CaseShape:
    """An operand the mode's ``shapes`` does not name follows the region; a one-row operand as long as the
    example's rows is an index per row and follows the rows (and a one-column one the columns)."""
    ex_rows, ex_cols = region
    if t.valid_row == 1 and t.valid_col == ex_rows != ex_cols:
        return INDEX_PER_ROW
    if t.valid_col == 1 and t.valid_row == ex_cols != ex_rows:
        return INDEX_PER_COL
    return FOLLOW


def _valid(extent: Extent, own: int | None, example: int, along: int, rows: int, cols: int, inner: int) -> int:
    """One valid extent of a tile: ``own`` the example's, ``example`` and ``along`` the example's and the case's
    region on the tile axis it stands on."""
    if extent.term == "one":
        return 1
    if own in (0, 1):
        return own
    if extent.term == "share":
        return share(own, example, along) if own is not None else along
    whole = {"rows": rows, "cols": cols, "inner": inner}[extent.term]
    return -(-whole // extent.over)


def _physical(extent: Extent, valid: int, k: int, kr: int, kc: int, inner: int, extra: int) -> int:
    if extent.term == "one":
        return 1
    if extent.term == "inner":  # K's physical extent, shared by every tile along it
        return max(1, roundup(inner + extra, 1 << max(kr, kc)) // extent.over)
    return roundup(max(valid, 1) + extra, 1 << k)


def shaper(isa, base: Tiles, target: tuple[int, int], partial: bool, shapes: dict[str, CaseShape],
           inner: int | None = None) -> Callable[[int, int], Tiles]:
    """``base`` (example-shaped tiles) mapped onto valid region ``target`` as ``shapes`` says, as a function of
    the physical roundings (kr, kc): the valid extents are worked out once, the physical ones per rounding.
    A global view takes the region; scalars, attributes and ``fixed`` tiles stay as they are."""
    rows, cols = target
    fixed = tuple(n for n, s in shapes.items() if s.fixed)
    region = example_target(base, fixed)
    k = inner or rows + cols - 1
    extra = 1 if partial else 0
    kept: Tiles = {}  # operands every rounding leaves as they are (or shapes once: global views)
    sized: list[tuple[str, TileDesc, CaseShape, int, int]] = []  # (name, tile, shape, valid rows, valid cols)
    for name, t in base.items():
        if isinstance(t, GlobalDesc):
            kept[name] = views.shaped_view(isa, t, rows, cols, partial)
        elif not isinstance(t, TileDesc) or name in fixed:
            kept[name] = t
        else:
            shape = shapes.get(name) or default_shape(t, region)
            valid_col = _valid(shape.col, t.valid_col, region[1], cols, rows, cols, k)
            if shape.stores and valid_col:  # columns of stored values, as elements of the tile's own type
                valid_col = -(-valid_col * isa.dtypes[shape.stores].bytes // isa.dtypes[t.dtype].bytes)
            sized.append((name, t, shape, _valid(shape.row, t.valid_row, region[0], rows, rows, cols, k),
                          valid_col))
    order = tuple(base)

    def shaped(kr: int, kc: int) -> Tiles:
        tiles: Tiles = dict(kept)
        for name, t, shape, vr, vc in sized:
            tiles[name] = t.with_(rows=_physical(shape.row, vr, kr, kr, kc, k, extra),
                                  cols=_physical(shape.col, vc, kc, kr, kc, k, extra), valid_row=vr, valid_col=vc)
        return {name: tiles[name] for name in order}
    return shaped


def shaped(isa, base: Tiles, target: tuple[int, int], partial: bool, kr: int, kc: int,
           shapes: dict[str, CaseShape], inner: int | None = None) -> Tiles:
    """``base`` mapped onto ``target`` with physical roundings to multiples of 2**kr rows and 2**kc cols."""
    return shaper(isa, base, target, partial, shapes, inner)(kr, kc)

