"""Concrete tiles: the descriptor of one operand of one invocation.

Modelled on ``Tile<Loc, DType, Rows, Cols, BLayout, ValidRow, ValidCol, SLayout,
SFractalSize, PadVal>``.  ``valid_row``/``valid_col`` of ``None`` mean "dynamic,
value not known" (``valid=?x?`` in assembly).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .errors import UnknownValue


@dataclass(frozen=True)
class TileDesc:
    loc: str  # C++ TileType name: Vec
    dtype: str  # assembly dtype name: f32
    rows: int
    cols: int
    valid_row: int | None
    valid_col: int | None
    blayout: str = "RowMajor"
    slayout: str = "NoneBox"
    fractal: int = 512
    pad: str = "Null"

    FIELDS = ("loc", "dtype", "rows", "cols", "valid_row", "valid_col", "blayout", "slayout", "fractal", "pad")

    def field(self, name: str):
        """Field access used by the expression evaluator (a fixed whitelist)."""
        if name not in self.FIELDS:
            raise KeyError(name)
        value = getattr(self, name)
        if value is None:
            raise UnknownValue(f"{name} is dynamic and not known here", rule="expr.unknown")
        return value

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def valid_shape(self) -> tuple[int, int]:
        if self.valid_row is None or self.valid_col is None:
            raise UnknownValue("valid shape is dynamic and not known here", rule="expr.unknown")
        return (self.valid_row, self.valid_col)

    def with_(self, **changes) -> TileDesc:
        return replace(self, **changes)


@dataclass(frozen=True)
class ScalarDesc:
    """A scalar operand (tile-scalar instructions): only its dtype matters to legality."""

    dtype: str

    FIELDS = ("dtype",)

    def field(self, name: str):
        if name != "dtype":
            raise KeyError(name)
        return self.dtype



@dataclass(frozen=True)
class AttrDesc:
    """An enumerated attribute operand (a comparison or rounding mode): just its value, e.g. ``LT``."""

    value: str

    FIELDS = ("value",)
    dtype = None  # attributes have no element type

    def field(self, name: str):
        if name != "value":
            raise KeyError(name)
        return self.value
