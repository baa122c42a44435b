"""C++ spellings of global-tensor descriptors (``GlobalTensor<T, Shape<...>, Stride<...>, Layout>``)."""

from __future__ import annotations

from .model import Isa
from .tile import GlobalDesc

DYNAMIC = "-1"  # pto::DYNAMIC


def global_type(isa: Isa, g: GlobalDesc) -> str:
    """The ``GlobalTensor`` type of a view: its five C++ dimensions and strides, unknown ones dynamic."""
    def spell(values) -> str:
        return ", ".join(DYNAMIC if v is None else str(v) for v in values)

    cpp = isa.dtypes[g.dtype].cpp
    return f"GlobalTensor<{cpp}, Shape<{spell(g.dims5)}>, Stride<{spell(g.strides5)}>, Layout::{g.layout}>"


def global_pointer(isa: Isa, g: GlobalDesc, name: str) -> str:
    """The kernel parameter a view is made from: ``__gm__ T *name``."""
    return f"__gm__ {isa.dtypes[g.dtype].cpp} *{name}"


def dynamic_global_type(isa: Isa, g: GlobalDesc) -> str:
    """The ``GlobalTensor`` type with every extent and stride dynamic: one compiled type serves every view of
    an element type and layout (the values come at run time)."""
    dyn = ", ".join([DYNAMIC] * 5)
    return f"GlobalTensor<{isa.dtypes[g.dtype].cpp}, Shape<{dyn}>, Stride<{dyn}>, Layout::{g.layout}>"


def conv_tile_type(db, op, mode, profile: str, tiles: dict) -> str:
    """The ``ConvTile`` type of a mode's ``cpp.conv_tile`` on these operands: the storage tile's location and
    element type, NC1HWC0, shape (N, C1, H, W) from the spec's expressions and C0 the storage tile's columns.
    Raises ``ValueError`` naming an extent that is not a positive integer here."""
    from .expr.evaluate import evaluate
    from .validator import make_scope

    spec = mode.cpp_conv_tile
    data = tiles[spec.data]
    scope = make_scope(db, op, mode, profile, tiles)
    dims = []
    for node, text in zip(spec.dims, spec.dims_text, strict=True):
        value = evaluate(node, scope)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"the ConvTile's extent {text} is {value!r}, not a positive integer")
        dims.append(value)
    dims.append(data.cols)
    elements = 1
    for d in dims:
        elements *= d
    return (f"ConvTile<TileType::{data.loc}, {db.isa.dtypes[data.dtype].cpp}, {elements}, Layout::NC1HWC0, "
            f"ConvTileShape<{', '.join(map(str, dims))}>>")
