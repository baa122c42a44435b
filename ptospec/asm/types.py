"""The tile type grammar: ``!pto.tile<...>`` / ``!pto.tile_buf<...>`` and CLI tile descriptors.

Canonical form (always printed in full, parameters in this order)::

    !pto.tile_buf<vec, 16x256xf32, valid=16x255, blayout=row_major, slayout=none_box, fractal=512, pad=null>

Accepted aliases (upstream spellings):

* keyword parameters may be omitted (template defaults: valid = full shape,
  row_major, none_box, 512, null) and given in any order;
* ``valid=?x?`` (dynamic valid shape, value unknown), ``layout=nd|dn``;
* enum values in C++ spelling (``RowMajor``, ``Vec``) or lower case;
* ``!pto.tile<f32, 16, 16>`` (dtype, rows, cols; loc defaults to vec);
* ``!pto.tile<16x32xf32>`` (loc defaults to vec);
* ``!pto.tile_buf<loc=mat, bf16, 16, 16, RowMajor, NoneBox, None, Null>``
  (dtype, rows, cols, then blayout, slayout, fractal, pad positionally);
* the assembler's keyword form ``!pto.tile_buf<loc=vec, dtype=f32, rows=32, cols=32, v_row=?, v_col=32,
  blayout=row_major, slayout=none_box, fractal=512, pad=0>`` (see ``keyword_tiles``).

A CLI tile descriptor is the text between the angle brackets, e.g.
``vec,16x16xf32,valid=15x16``.  A bare dtype name (``f32``) is a scalar operand; a descriptor led by
``gm`` is a global-tensor view (``gm,16x16xf32,strides=32x1``; see ``views``).
"""

from __future__ import annotations

import re

from ..attrs import read_value, spell_value
from ..errors import TileError
from ..model import Isa
from ..tile import AttrDesc, GlobalDesc, ScalarDesc, TileDesc
from .keyword_tiles import compact_mode, is_keyword_form, pad_value, parse_keyword_tile
from .views import (
    format_view_descriptor,
    format_view_type,
    is_view_descriptor,
    is_view_type,
    parse_view,
    parse_view_type,
)
from .words import count, enumerator, norm

# ASCII digits only ([0-9], never \d: Python's \d and int() also take digits such as U+0661).
_SHAPE = re.compile(r"([0-9]+)x([0-9]+)x([a-z][a-z0-9]*)")
_VALID = re.compile(r"(\?|[0-9]+)x(\?|[0-9]+)")
_TYPE = re.compile(r"!pto\.(tile|tile_buf)<(.*)>", re.S)
_PRINTABLE = re.compile(r"[\x20-\x7e\t\n\r]*")


def parse_descriptor(text: str, isa: Isa) -> TileDesc | ScalarDesc | AttrDesc | GlobalDesc:
    """Parse the inside of a tile type (or a bare dtype for a scalar operand)."""
    if not isinstance(text, str):
        raise TileError(f"a tile descriptor is text, got {type(text).__name__}", rule="tile.syntax")
    raw = text.strip()
    if not raw:
        raise TileError("empty tile descriptor", rule="tile.syntax")
    if not _PRINTABLE.fullmatch(raw):
        bad = next(c for c in raw if not _PRINTABLE.fullmatch(c))
        raise TileError(f"unexpected character {bad!r} in tile descriptor {raw[:80]!r} (ASCII only)",
                        rule="tile.syntax")
    if raw in isa.dtypes:
        return ScalarDesc(raw)
    if isa.enum_of_value(raw) is not None:
        return AttrDesc(raw)
    immediate = read_value(raw)
    if immediate is not None:
        return AttrDesc(immediate)
    params = [p.strip() for p in raw.split(",")]
    if any(not p for p in params):
        raise TileError(f"empty parameter in tile descriptor {raw!r}", rule="tile.syntax")
    if is_view_descriptor(params):
        return parse_view(params, isa, raw)
    if is_keyword_form(params):
        return parse_keyword_tile(params, isa, raw)
    return _positional_tile(params, isa, raw)


def _positional_tile(params: list[str], isa: Isa, raw: str) -> TileDesc:
    """The positional form ``[loc,] RxCxdtype [, blayout, slayout, fractal, pad] [, key=value ...]``."""
    positional = [p for p in params if "=" not in p]
    keywords: dict[str, str] = {}
    for p in params:
        if "=" in p:
            key, _, value = p.partition("=")
            key, value = key.strip().lower(), value.strip()
            if key in keywords:
                raise TileError(f"parameter {key!r} given twice in {raw!r}", rule="tile.syntax")
            keywords[key] = value
    defaults = isa.tile_defaults
    fields: dict = {
        "loc": "Vec",
        "blayout": defaults["blayout"],
        "slayout": defaults["slayout"],
        "fractal": defaults["fractal"],
        "pad": defaults["pad"],
        "compact": defaults["compact"],
    }
    if "loc" in keywords:
        fields["loc"] = enumerator(isa.tile_types, keywords.pop("loc"), "tile type", raw)
    elif positional and norm(positional[0]) in {norm(v) for v in isa.tile_types.values()} | {
        norm(k) for k in isa.tile_types
    }:
        fields["loc"] = enumerator(isa.tile_types, positional.pop(0), "tile type", raw)
    _shape(positional, fields, isa, raw)
    # Remaining positional parameters: blayout, slayout, fractal, pad (upstream type-system spelling).
    if len(positional) > 4:
        raise TileError(f"too many parameters in tile descriptor {raw!r}", rule="tile.syntax")
    for slot, value in zip(("blayout", "slayout", "fractal", "pad"), positional, strict=False):
        if slot in keywords:
            raise TileError(f"{slot} given both by position ({value!r}) and as {slot}= in {raw!r}",
                            rule="tile.syntax")
        keywords[slot] = value
    _keyword_fields(keywords, fields, isa, raw)
    return TileDesc(**fields)


def _shape(positional: list[str], fields: dict, isa: Isa, raw: str) -> None:
    """Rows, columns and dtype: ``16x16xf32``, or ``f32, 16, 16``."""
    if positional and _SHAPE.fullmatch(positional[0]):
        rows, cols, dtype = _SHAPE.fullmatch(positional.pop(0)).groups()  # type: ignore[union-attr]
        fields.update(rows=count(rows, "rows", raw), cols=count(cols, "cols", raw), dtype=dtype)
    elif len(positional) >= 3 and positional[0] in isa.dtypes:
        fields["dtype"] = positional.pop(0)
        fields["rows"] = count(positional.pop(0), "rows", raw)
        fields["cols"] = count(positional.pop(0), "cols", raw)
    else:
        raise TileError(
            f"expected a shape and dtype like 16x16xf32 in tile descriptor {raw!r}", rule="tile.syntax"
        )
    if fields["dtype"] not in isa.dtypes:
        raise TileError(
            f"unknown dtype {fields['dtype']!r} in {raw!r} (known: {', '.join(isa.dtypes)})", rule="tile.dtype"
        )


def _keyword_fields(keywords: dict[str, str], fields: dict, isa: Isa, raw: str) -> None:
    """``valid=``, ``layout=``, ``blayout=``, ``slayout=``, ``fractal=``, ``pad=``, ``compact=``; any other key is an
    error."""
    defaults = isa.tile_defaults
    valid = keywords.pop("valid", None)
    if valid is None:
        fields["valid_row"], fields["valid_col"] = fields["rows"], fields["cols"]
    else:
        m = _VALID.fullmatch(valid)
        if not m:
            raise TileError(f"valid shape must look like 16x15 or ?x?, got {valid!r} in {raw!r}", rule="tile.syntax")
        vr, vc = m.groups()
        fields["valid_row"] = None if vr == "?" else count(vr, "valid rows", raw)
        fields["valid_col"] = None if vc == "?" else count(vc, "valid cols", raw)
    if "layout" in keywords:
        fields["blayout"], fields["slayout"] = layout_pair(isa, keywords.pop("layout"), raw)
    if "blayout" in keywords:
        fields["blayout"] = enumerator(isa.blayouts, keywords.pop("blayout"), "blayout", raw)
    if "slayout" in keywords:
        fields["slayout"] = enumerator(isa.slayouts, keywords.pop("slayout"), "slayout", raw)
    if "fractal" in keywords:
        value = keywords.pop("fractal")
        fields["fractal"] = defaults["fractal"] if value.lower() == "none" else count(value, "fractal", raw)
    if "pad" in keywords:
        fields["pad"] = pad_value(isa, keywords.pop("pad"), raw)
    if "compact" in keywords:
        fields["compact"] = compact_mode(isa, keywords.pop("compact"), raw)
    if keywords:
        raise TileError(f"unknown parameter(s) {', '.join(sorted(keywords))} in {raw!r}", rule="tile.syntax")


def layout_pair(isa: Isa, spelled: str, raw: str) -> tuple[str, str]:
    """(blayout, slayout) a ``layout=`` word names, in any case: a tile layout of the ISA (ND, DN) or the
    upstream name of a boxed storage order (NZ, ZN, ZZ, NN: ``tile_storage`` in specs/isa.yaml)."""
    pairs = {name.upper(): (lay.blayout, lay.slayout) for name, lay in isa.layouts.items()}
    if isa.tile_storage is not None:
        for pair, name in isa.tile_storage.names.items():
            pairs.setdefault(name.upper(), pair)
    if spelled.upper() not in pairs:
        raise TileError(f"unknown layout {spelled!r} in {raw!r} (known: {', '.join(pairs)})", rule="tile.syntax")
    return pairs[spelled.upper()]


def parse_type(text: str, isa: Isa) -> TileDesc | ScalarDesc:
    """Parse ``!pto.tile<...>``, ``!pto.tile_buf<...>`` or a scalar dtype name."""
    raw = text.strip()
    if raw in isa.dtypes:
        return ScalarDesc(raw)
    if is_view_type(raw):
        return parse_view_type(raw, isa)
    m = _TYPE.fullmatch(raw)
    if not m:
        raise TileError(f"expected !pto.tile<...> or !pto.tile_buf<...>, got {raw!r}", rule="asm.type")
    desc = parse_descriptor(m.group(2), isa)
    if isinstance(desc, ScalarDesc):
        raise TileError(f"a tile type needs a shape, got {raw!r}", rule="asm.type")
    return desc


def format_descriptor(tile: TileDesc | ScalarDesc, isa: Isa) -> str:
    """Canonical descriptor text (the inside of the angle brackets)."""
    if isinstance(tile, ScalarDesc):
        return tile.dtype
    if isinstance(tile, AttrDesc):
        return spell_value(tile.value)
    if isinstance(tile, GlobalDesc):
        return format_view_descriptor(tile, isa)
    vr = "?" if tile.valid_row is None else str(tile.valid_row)
    vc = "?" if tile.valid_col is None else str(tile.valid_col)
    compact = "" if tile.compact == isa.tile_defaults["compact"] else f", compact={isa.compact_modes[tile.compact]}"
    return (
        f"{isa.tile_types[tile.loc]}, {tile.rows}x{tile.cols}x{tile.dtype}, valid={vr}x{vc}, "
        f"blayout={isa.blayouts[tile.blayout]}, slayout={isa.slayouts[tile.slayout]}, "
        f"fractal={tile.fractal}, pad={isa.pad_values[tile.pad]}{compact}"
    )


def format_type(tile: TileDesc | ScalarDesc, isa: Isa, kind: str = "tile_buf") -> str:
    if isinstance(tile, ScalarDesc):
        return tile.dtype
    if isinstance(tile, GlobalDesc):
        return format_view_type(tile, isa)
    return f"!pto.{kind}<{format_descriptor(tile, isa)}>"
