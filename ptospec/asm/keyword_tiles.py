"""The PTO assembler's keyword spelling of a tile type.

    !pto.tile_buf<loc=vec, dtype=f32, rows=32, cols=32, v_row=?, v_col=32, blayout=row_major,
                  slayout=none_box, fractal=512, pad=0>

Every key is ``name=value``; ``loc``, ``dtype``, ``rows`` and ``cols`` are required, the others
default as in the ``Tile`` template (``v_row``/``v_col`` to the full shape).  ``pad`` is a PadValue
name or its number in the assembler's enumeration (0 null, 1 zero, 2 max, 3 min).
"""

from __future__ import annotations

import re

from ..errors import TileError
from ..model import Isa
from ..tile import TileDesc

KEYS = ("loc", "dtype", "rows", "cols", "v_row", "v_col", "blayout", "slayout", "fractal", "pad")
PAD_NUMBERS = ("Null", "Zero", "Max", "Min")  # the assembler's PadValue enumeration, in order
MAX_EXTENT = 1 << 20


def is_keyword_form(params: list[str]) -> bool:
    return any(p.strip().lower().startswith(("dtype=", "rows=")) for p in params)


def _norm(word: str) -> str:
    return word.replace("_", "").lower()


def _pick(mapping: dict[str, str], word: str, what: str, text: str) -> str:
    for cpp_name, asm_name in mapping.items():
        if _norm(word) in (_norm(cpp_name), _norm(asm_name)):
            return cpp_name
    raise TileError(f"unknown {what} {word!r} in {text!r} (expected one of: {', '.join(mapping.values())})",
                    rule="tile.syntax")


def _extent(word: str, what: str, text: str, dynamic: bool = False) -> int | None:
    if dynamic and word == "?":
        return None
    if not re.fullmatch(r"[0-9]+", word):
        raise TileError(f"{what} must be a non-negative integer{' or ?' if dynamic else ''}, got {word!r} in {text!r}",
                        rule="tile.syntax")
    value = int(word)
    if value > MAX_EXTENT:
        raise TileError(f"{what} {value} is unreasonably large in {text!r}", rule="tile.syntax")
    return value


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
    rows = _extent(fields["rows"], "rows", text)
    cols = _extent(fields["cols"], "cols", text)
    defaults = isa.tile_defaults
    pad = fields.get("pad", defaults["pad"])
    if re.fullmatch(r"[0-9]+", pad):
        if int(pad) >= len(PAD_NUMBERS):
            raise TileError(f"pad number {pad} is not a PadValue (0 null, 1 zero, 2 max, 3 min) in {text!r}",
                            rule="tile.syntax")
        pad = PAD_NUMBERS[int(pad)]
    return TileDesc(
        loc=_pick(isa.tile_types, fields["loc"], "tile type", text),
        dtype=fields["dtype"],
        rows=rows,  # type: ignore[arg-type]
        cols=cols,  # type: ignore[arg-type]
        valid_row=_extent(fields["v_row"], "v_row", text, True) if "v_row" in fields else rows,
        valid_col=_extent(fields["v_col"], "v_col", text, True) if "v_col" in fields else cols,
        blayout=_pick(isa.blayouts, fields.get("blayout", defaults["blayout"]), "blayout", text),
        slayout=_pick(isa.slayouts, fields.get("slayout", defaults["slayout"]), "slayout", text),
        fractal=_extent(fields.get("fractal", str(defaults["fractal"])), "fractal", text),  # type: ignore[arg-type]
        pad=_pick(isa.pad_values, pad, "pad value", text),
    )
