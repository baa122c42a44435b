"""Values of an MLIR vector type the assembler passes where pto-isa takes a struct (``struct_values`` of
specs/program.yaml: TMRGSORT's executed-number list, ``vector<4xi16>``): a tile of the type the database's operand has,
whose first elements are the fields."""

from __future__ import annotations

import re

import numpy as np

from .errors import ProgramError, SourcePos
from .values import TileBuffer

_DENSE = re.compile(r"^dense<\s*(\[(.*)\]|([^\[\]]*))\s*>$", re.S)
_INT = re.compile(r"^[-+]?[0-9]+$")


def struct_value(w, op, ty: str, fields: list[int] | None, pos: SourcePos | None) -> TileBuffer:
    """A value of struct type ``ty`` holding ``fields`` (None while checking: no storage), made by the walker's
    ``new_tile`` like every tile (not announced to the tracer: a constant or an argument, no buffer of the kernel);
    ``op`` is the operation making it (None for a kernel argument)."""
    tile_text, count = w.spec.struct_values[ty]
    desc = w.tile_type(tile_text, pos)
    if fields is not None and len(fields) != count:
        raise ProgramError(f"a {ty} value holds {count} fields, got {len(fields)}", "program.type", pos)
    tile = w.new_tile(op, desc, traced=False)
    if fields is None or tile.storage is None:
        return tile
    elements = np.zeros((desc.rows, desc.cols), tile.np_dtype)
    info = np.iinfo(tile.np_dtype) if tile.np_dtype.kind in "iu" else None
    bits = info.bits if info else 0
    flat = elements.reshape(-1)
    for k, f in enumerate(fields):  # the field's bits, as the C++ initialiser narrows an integer to the field's type
        flat[k] = (int(f) % (1 << bits)) if bits else f
    tile.store(elements)
    return tile


def dense_fields(text: str, ty: str, count: int, pos: SourcePos | None) -> list[int]:
    """The integers of ``dense<[a, b, ...]>`` (``count`` of them) or of a splat ``dense<a>``."""
    m = _DENSE.match(text)
    if not m:
        raise ProgramError(f"expected dense<[...]> for a {ty} constant, got {text[:60]!r}", "program.syntax", pos)
    items = [s.strip() for s in (m.group(2) if m.group(1).startswith("[") else m.group(3)).split(",") if s.strip()]
    if not all(_INT.match(s) for s in items):
        raise ProgramError(f"a {ty} constant holds integers, got {text[:60]!r}", "program.type", pos)
    values = [int(s) for s in items]
    if len(values) == 1 and not m.group(1).startswith("["):
        values *= count
    if len(values) != count:
        raise ProgramError(f"a {ty} constant holds {count} values, got {len(values)}", "program.type", pos)
    return values
