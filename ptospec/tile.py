"""Concrete tiles: the descriptor of one operand of one invocation.

Modelled on ``Tile<Loc, DType, Rows, Cols, BLayout, ValidRow, ValidCol, SLayout,
SFractalSize, PadVal, Compact>``.  ``valid_row``/``valid_col`` of ``None`` mean "dynamic,
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
    compact: str = "Null"  # CompactMode (``compact_modes`` of specs/isa.yaml)

    FIELDS = ("loc", "dtype", "rows", "cols", "valid_row", "valid_col", "blayout", "slayout", "fractal", "pad",
              "compact")

    def __hash__(self) -> int:
        """The dataclass hash of the fields, computed once: searches use descriptors as keys millions of times."""
        known = self.__dict__.get("_hash")
        if known is None:
            known = hash((self.loc, self.dtype, self.rows, self.cols, self.valid_row, self.valid_col, self.blayout,
                          self.slayout, self.fractal, self.pad, self.compact))
            object.__setattr__(self, "_hash", known)
        return known

    def __getstate__(self) -> dict:
        """Pickled without what it remembers: string hashes differ from one interpreter to the next."""
        return {k: v for k, v in self.__dict__.items() if k not in _REMEMBERED}

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
        """A copy with ``changes`` (``dataclasses.replace``, without its per-call field introspection: case
        searches make hundreds of thousands of these)."""
        if not changes.keys() <= _TILE_FIELDS:
            return replace(self, **changes)  # raises the usual TypeError for an unknown field
        state = self.__dict__.copy()
        if len(state) > len(_TILE_FIELDS):
            for remembered in _REMEMBERED:
                state.pop(remembered, None)
        state.update(changes)
        new = object.__new__(TileDesc)
        object.__setattr__(new, "__dict__", state)
        return new


_TILE_FIELDS = frozenset(TileDesc.FIELDS)
# What a descriptor remembers about itself besides its fields: its hash, and the well-formedness verdicts of
# the last rules and profile it was judged by (validator.rule_verdicts).
_REMEMBERED = ("_hash", "_verdicts")


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
    """An attribute operand: just its value, an enumerator (``LT``) or a typed immediate (``True``, ``1``)."""

    value: str | int | bool

    FIELDS = ("value",)
    dtype = None  # attributes have no element type

    def __eq__(self, other: object) -> bool:  # True and 1 are different values of different attributes
        return (isinstance(other, AttrDesc) and type(other.value) is type(self.value)
                and other.value == self.value)

    def __hash__(self) -> int:
        return hash((type(self.value).__name__, self.value))

    def field(self, name: str):
        if name != "value":
            raise KeyError(name)
        return self.value


DEFAULT_GLOBAL_LAYOUT = "ND"  # a view without a layout (GlobalTensor's default Layout)
GLOBAL_RANK = 5  # GlobalTensor<T, Shape<N1..N5>, Stride<S1..S5>, Layout>: always five dimensions in C++


@dataclass(frozen=True)
class GlobalDesc:
    """A view of global memory (``GlobalTensor``, ``!pto.partition_tensor_view``): element type, a shape
    and strides of one to five dimensions (in elements), a global layout, the view's origin in its buffer
    and the buffer's length (elements).  ``None`` marks a value only known at run time (``?``).

    Expressions see the C++ five-dimensional form: a shape of rank k is right-aligned, the missing
    outer dimensions have extent 1 (``dim0`` .. ``dim4``, ``stride0`` .. ``stride4``).
    """

    dtype: str
    shape: tuple[int | None, ...]
    strides: tuple[int | None, ...]
    layout: str = DEFAULT_GLOBAL_LAYOUT
    offset: int | None = 0
    size: int | None = None  # None: dynamic
    view: str = "partition_tensor_view"  # the assembly type it is printed as

    FIELDS = ("dtype", "rank", "layout", "offset", "size", "span",
              *(f"dim{k}" for k in range(GLOBAL_RANK)), *(f"stride{k}" for k in range(GLOBAL_RANK)))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def dims5(self) -> tuple[int | None, ...]:
        return (1,) * (GLOBAL_RANK - self.rank) + self.shape

    @property
    def strides5(self) -> tuple[int | None, ...]:
        outer = self.strides[0] * self.shape[0] if self.strides[0] is not None and self.shape[0] is not None else 1
        return (outer,) * (GLOBAL_RANK - self.rank) + self.strides

    @property
    def span(self) -> int | None:
        """Elements from the view's origin to one past its last element (0 for an empty view)."""
        if any(d is None for d in self.shape) or any(s is None for s in self.strides):
            return None
        if any(d == 0 for d in self.shape):
            return 0
        return 1 + sum((d - 1) * s for d, s in zip(self.shape, self.strides, strict=True))

    @property
    def known(self) -> bool:
        return None not in self.shape and None not in self.strides and self.offset is not None \
            and self.size is not None

    def field(self, name: str):
        if name not in self.FIELDS:
            raise KeyError(name)
        if name.startswith("dim"):
            value = self.dims5[int(name[3:])]
        elif name.startswith("stride"):
            value = self.strides5[int(name[6:])]
        else:
            value = getattr(self, name)
        if value is None:
            raise UnknownValue(f"{name} is dynamic and not known here", rule="expr.unknown")
        return value

    def with_(self, **changes) -> GlobalDesc:
        return replace(self, **changes)
