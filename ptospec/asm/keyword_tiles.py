"""The PTO assembler's keyword spelling of a tile type.

    !pto.tile_buf<loc=vec, dtype=f32, rows=32, cols=32, v_row=?, v_col=32, blayout=row_major,
                  slayout=none_box, fractal=512, pad=0>

Every key is ``name=value``; ``loc``, ``dtype``, ``rows`` and ``cols`` are required, the others
default as in the ``Tile`` template (``v_row``/``v_col`` to the full shape).  ``pad`` is a PadValue
name or its number in the assembler's enumeration (0 null, 1 zero, 2 max, 3 min); ``compact`` a CompactMode
name or its number in the assembler's enumeration (``compact_modes`` of specs/isa.yaml).
"""

from __future__ import annotations

import re

from ..errors import TileError
from ..model import Isa
from ..tile import TileDesc
from .words import count, enumerator

KEYS = ("loc", "dtype", "rows", "cols", "v_row", "v_col", "blayout", "slayout", "fractal", "pad", "compact")
PAD_NUMBERS = ("Null", "Zero", "Max", "Min")  # the assembler's PadValue enumeration, in order


def is_keyword_form(params: list[str]) -> bool:
    return any(p.strip().lower().startswith(("dtype=", "rows=")) for p in params)


def _extent(word: str, what: str, text: str) -> int | None:
    """A count, or None for ``?`` (a valid size known at run time)."""
    return None if word == "?" else count(word, what, text)


def compact_mode(isa: Isa, word: str, text: str) -> str:
    """The CompactMode ``compact=`` names: the assembler's number (``compact_modes.dialect``) or a name."""
    if re.fullmatch(r"[0-9]+", word):
        numbers = isa.compact_dialect
        if int(word) >= len(numbers):
            spelled = ", ".join(f"{k} {isa.compact_modes[m]}" for k, m in enumerate(numbers))
            raise TileError(f"compact number {word} is not a CompactMode of the assembler ({spelled}) in {text!r}",
                            rule="tile.syntax")
        return numbers[int(word)]
    return enumerator(isa.compact_modes, word, "compact mode", text)


def parse_keyword_tile(params: list[str], isa: Isa, text: str) -> TileDesc:
    fields: dict[str, str] = {}
    for p in params:
        key, sep, value = p.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not sep or key not in KEYS:
            raise TileError(f"expected one of {', '.join(k + '=' for k in KEYS)} in {text!r}, got {p.strip()!r}",
                            rule="tile.syntax")
        if key in fields:
            raise TileError(f"parameter {key!r} given twice in {text!r}", rule="tile.syntax")
        fields[key] = value
    missing = [k for k in ("loc", "dtype", "rows", "cols") if k not in fields]
    if missing:
        raise TileError(f"the keyword tile type needs {', '.join(missing)} in {text!r}", rule="tile.syntax")
    if fields["dtype"] not in isa.dtypes:
        raise TileError(f"unknown dtype {fields['dtype']!r} in {text!r} (known: {', '.join(isa.dtypes)})",
                        rule="tile.dtype")
    rows = count(fields["rows"], "rows", text)
    cols = count(fields["cols"], "cols", text)
    defaults = isa.tile_defaults
    return TileDesc(
        loc=enumerator(isa.tile_types, fields["loc"], "tile type", text),
        dtype=fields["dtype"],
        rows=rows,
        cols=cols,
        valid_row=_extent(fields["v_row"], "v_row", text) if "v_row" in fields else rows,
        valid_col=_extent(fields["v_col"], "v_col", text) if "v_col" in fields else cols,
        blayout=enumerator(isa.blayouts, fields.get("blayout", defaults["blayout"]), "blayout", text),
        slayout=enumerator(isa.slayouts, fields.get("slayout", defaults["slayout"]), "slayout", text),
        fractal=count(fields.get("fractal", str(defaults["fractal"])), "fractal", text),
        pad=pad_value(isa, fields.get("pad", defaults["pad"]), text),
        compact=compact_mode(isa, fields.get("compact", defaults["compact"]), text),
    )


def pad_value(isa: Isa, word: str, text: str) -> str:
    """A pad value by name, or by its number in the assembler's PadValue enumeration (as its printer writes it)."""
    if re.fullmatch(r"[0-9]+", word):
        if int(word) >= len(PAD_NUMBERS):
            raise TileError(f"pad number {word} is not a PadValue (0 null, 1 zero, 2 max, 3 min) in {text!r}",
                            rule="tile.syntax")
        word = PAD_NUMBERS[int(word)]
    return enumerator(isa.pad_values, word, "pad value", text)
