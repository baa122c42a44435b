"""The memref types of the assembler's lowered form (``memrefs`` in specs/program.yaml) and what each denotes:
``memref<16x16xf32, #pto.address_space<vec>>`` a tile of an on-chip location, ``memref<16x16xf32,
#pto.address_space<gm>>`` (or ``strided<[32, 1], offset: 8>``) a view of a global buffer."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..textsplit import split_top_level
from ..tile import GlobalDesc, TileDesc
from .spec import ProgramSpec

_MEMREF = re.compile(r"^memref<(.*)>$", re.S)
_SHAPE = re.compile(r"^((?:(?:[0-9]+|\?)x)*)([a-zA-Z][a-zA-Z0-9]*)$")
_STRIDED = re.compile(r"^strided<\s*\[([^\]]*)\]\s*(?:,\s*offset\s*:\s*([0-9]+|\?)\s*)?>$")
_SPACE = re.compile(r"^#pto\.address_space<\s*([a-z_]+)\s*>$")


class MemrefError(ValueError):
    """A memref type the program layer does not read (the message says why)."""


@dataclass(frozen=True)
class MemrefType:
    shape: tuple[int | None, ...]  # None where the type says ?
    dtype: str  # the ISA's spelling (dtype aliases applied)
    strides: tuple[int | None, ...] | None  # None: no strided layout written (packed, row-major)
    offset: int | None  # elements from the buffer's start (None: ?)
    space: str  # the address space as written ("" when none)

    def packed_strides(self) -> tuple[int | None, ...]:
        strides, step = [], 1
        for extent in reversed(self.shape):
            strides.append(step)
            step = None if step is None or extent is None else step * extent
        return tuple(reversed(strides))

    @property
    def view_strides(self) -> tuple[int | None, ...]:
        return self.strides if self.strides is not None else self.packed_strides()


def _number(word: str) -> int | None:
    word = word.strip()
    return None if word == "?" else int(word)


def parse_memref(text: str, spec: ProgramSpec) -> MemrefType | None:
    """The memref type ``text`` spells (None: not a memref type); MemrefError when it is one the program
    layer does not read."""
    m = _MEMREF.match(text.strip())
    if m is None:
        return None
    parts = split_top_level(m.group(1), "<[(")
    shape_m = _SHAPE.match(parts[0].replace(" ", ""))
    if shape_m is None:
        raise MemrefError(f"expected a shape and element type like 16x16xf32 in {text!r}")
    dims = [d for d in shape_m.group(1).split("x") if d]
    dtype = spec.dtype_aliases.get(shape_m.group(2), shape_m.group(2))
    strides, offset, space = None, 0, ""
    for part in parts[1:]:
        if (s := _STRIDED.match(part)) is not None:
            strides = tuple(_number(w) for w in s.group(1).split(",") if w.strip())
            offset = _number(s.group(2)) if s.group(2) is not None else 0
            if len(strides) != len(dims):
                raise MemrefError(f"{len(strides)} stride(s) for {len(dims)} dimension(s) in {text!r}")
        elif (a := _SPACE.match(part)) is not None:
            space = a.group(1)
        else:
            raise MemrefError(f"the program layer reads a memref's strided<...> layout and #pto.address_space<...>, "
                              f"not {part!r}")
    return MemrefType(tuple(_number(d) for d in dims), dtype, strides, offset, space)


def is_global(spec: ProgramSpec, mt: MemrefType) -> bool:
    """Whether the memref is global memory (a global space, or none)."""
    return spec.memrefs is not None and (not mt.space or mt.space in spec.memrefs.global_spaces)


def location(spec: ProgramSpec, mt: MemrefType) -> str:
    """The tile location of an on-chip memref (MemrefError for a space the database does not map)."""
    locations = spec.memrefs.locations if spec.memrefs is not None else {}
    if mt.space not in locations:
        raise MemrefError(f"address space {mt.space!r} is neither global nor one of the on-chip spaces "
                          f"({', '.join(locations)})")
    return locations[mt.space]


def tile_of(spec: ProgramSpec, isa, mt: MemrefType, config: dict[str, str] | None = None,
            valid: tuple[int | None, int | None] | None = None) -> TileDesc:
    """The tile an on-chip memref is: rows and cols its first two extents, the default configuration
    (or ``config``: blayout, slayout, fractal, pad, compact), valid shape the whole tile (or ``valid``)."""
    if len(mt.shape) < 2 or mt.shape[0] is None or mt.shape[1] is None:
        raise MemrefError("an on-chip memref needs two constant extents (rows, cols)")
    if mt.dtype not in isa.dtypes:
        raise MemrefError(f"unknown element type {mt.dtype!r}")
    fields = {**isa.tile_defaults, **(config or {})}
    rows, cols = mt.shape[0], mt.shape[1]
    vr, vc = valid if valid is not None else (rows, cols)
    return TileDesc(loc=location(spec, mt), dtype=mt.dtype, rows=rows, cols=cols, valid_row=vr, valid_col=vc,
                    blayout=fields["blayout"], slayout=fields["slayout"], fractal=int(fields["fractal"]),
                    pad=fields["pad"], compact=fields["compact"])


def view_of(mt: MemrefType, layout: str, size: int | None) -> GlobalDesc:
    """The global view a memref type spells when its value is not known (the layout given)."""
    return GlobalDesc(mt.dtype, mt.shape, mt.view_strides, layout, mt.offset, size, "partition_tensor_view")
