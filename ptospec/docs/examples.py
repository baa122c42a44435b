"""Examples generated from a mode's ``example`` invocation: C++ (auto, manual) and assembly."""

from __future__ import annotations

from .. import attrs
from ..asm.forms import FORMS, print_form
from ..asm.types import parse_descriptor
from ..cpp_types import conv_tile_type, global_pointer, global_type
from ..model import CPP_LITERAL, Database, Mode, OpSpec
from ..tile import AttrDesc, GlobalDesc, ScalarDesc, TileDesc

_ALIGN = 0x1000  # TASSIGN addresses: each tile starts on a 4 KiB boundary after the previous one


def example_tiles(db: Database, mode: Mode) -> dict[str, TileDesc | ScalarDesc]:
    return {name: parse_descriptor(text, db.isa) for name, text in mode.example.tiles.items()}


def _type_name(operand: str) -> str:
    return operand[:1].upper() + operand[1:] + "T"


def _declaration_order(mode: Mode) -> list[str]:
    """Inputs, then outputs, then scratch tiles, then scalars (as upstream examples declare them)."""
    order = {"in": 0, "out": 1, "tmp": 2, "scalar": 3, "attr": 4}
    return [o.name for o in sorted(mode.operands, key=lambda o: order.get(o.role, 4))]


def tile_type(db: Database, tile: TileDesc) -> tuple[str, list[str]]:
    """The ``Tile<...>`` spelling and the constructor arguments (dynamic valid shape)."""
    defaults = db.isa.tile_defaults
    cpp_dtype = db.isa.dtypes[tile.dtype].cpp
    params = [f"TileType::{tile.loc}", cpp_dtype, str(tile.rows), str(tile.cols), f"BLayout::{tile.blayout}"]
    dynamic = (tile.valid_row, tile.valid_col) != (tile.rows, tile.cols)
    tail = (tile.slayout, tile.fractal, tile.pad) != (defaults["slayout"], defaults["fractal"], defaults["pad"])
    args: list[str] = []
    if dynamic:
        params += ["-1", "-1"]
        args = [str(v) if v is not None else "/* set at run time */" for v in (tile.valid_row, tile.valid_col)]
    elif tail:
        params += [str(tile.valid_row), str(tile.valid_col)]
    if tail:
        params += [f"SLayout::{tile.slayout}", str(tile.fractal), f"PadValue::{tile.pad}"]
    return f"Tile<{', '.join(params)}>", args


def _tile_bytes(db: Database, tile: TileDesc) -> int:
    return tile.rows * tile.cols * db.isa.dtypes[tile.dtype].bytes


def cpp_example(db: Database, mode: Mode, manual: bool) -> str:
    tiles = example_tiles(db, mode)
    suffix = "manual" if manual else "auto"
    order = [n for n in _declaration_order(mode) if n in tiles]
    params = ", ".join(global_pointer(db.isa, tiles[n], f"{n}_gm") for n in order
                       if isinstance(tiles[n], GlobalDesc))
    lines = ["#include <pto/pto-inst.hpp>", "using namespace pto;", f"void example_{suffix}_{mode.name}({params}) {{"]
    body: list[str] = []
    structs = {o.name: o.cpp_struct for o in mode.operands if o.cpp_struct}
    conv = mode.cpp_conv_tile
    if conv is not None:  # the ConvTile stands for its storage tile: declared instead of it, fields set below
        structs[conv.data] = ""
        lines.append(f"    using {_type_name(conv.name)} = "
                     f"{conv_tile_type(db, _op_of(db, mode), mode, mode.example.profile, tiles)};")
    for name in order:
        tile = tiles[name]
        if isinstance(tile, GlobalDesc):
            lines.append(f"    using {_type_name(name)} = {global_type(db.isa, tile)};")
        if isinstance(tile, ScalarDesc) and name in mode.cpp_template:  # a template argument names its type
            lines.append(f"    using {_type_name(name)} = {db.isa.dtypes[tile.dtype].cpp};")
        if not isinstance(tile, TileDesc) or name in structs:
            continue
        spelled, _ = tile_type(db, tile)
        lines.append(f"    using {_type_name(name)} = {spelled};")
    for t in mode.cpp_types:  # a type built from attribute values (TPUSH's pipe type)
        values = ", ".join(attrs.cpp_value(db.isa, mode.operand(n), tiles[n].value) for n in t.members)
        lines.append(f"    using {t.name} = {t.template}<{values}>;")
    for name in order:
        tile = tiles[name]
        if isinstance(tile, AttrDesc):
            continue  # passed as an enumerator in the call
        if isinstance(tile, ScalarDesc):
            body.append(f"    {db.isa.dtypes[tile.dtype].cpp} {name}{{}};")
            continue
        if isinstance(tile, GlobalDesc):
            body.append(f"    {_type_name(name)} {name}({name}_gm);")
            continue
        if conv is not None and name == conv.data:
            continue
        if name in structs:  # a result the call returns in a struct, not a tile
            body.append(f"    {structs[name]} {name}{{}};")
            continue
        _, args = tile_type(db, tile)
        ctor = f"({', '.join(args)})" if args else ""
        body.append(f"    {_type_name(name)} {name}{ctor};")
    for arr in mode.cpp_arrays:
        members = ", ".join(f"static_cast<{arr.element}>({m})" for m in arr.members)
        body.append(f"    {arr.cpp} {arr.name} = {{{members}}};")
    if conv is not None:
        body.append(f"    {_type_name(conv.name)} {conv.name};")
        for setter, args in conv.calls:
            spelled = [_argument(db, mode, tiles, a) if isinstance(a, str) else str(a) for a in args]
            body.append(f"    {conv.name}.{setter}({', '.join(spelled)});")
    lines += body
    if manual:
        address = 0
        for name in order:
            tile = tiles[name]
            if not isinstance(tile, TileDesc) or (name in structs and (conv is None or name != conv.data)):
                continue
            lines.append(f"    TASSIGN({conv.name if conv is not None and name == conv.data else name}, "
                         f"{address:#x});")
            address += -(-_tile_bytes(db, tile) // _ALIGN) * _ALIGN
    template = ""
    if mode.cpp_template:
        template = "<" + ", ".join(_template_argument(db, mode, tiles, a) for a in mode.cpp_template) + ">"
    call_args = ", ".join(_argument(db, mode, tiles, a) for a in mode.cpp_args)
    lines.append(f"    {mode.cpp_name}{template}({call_args});")
    lines.append("}")
    return "\n".join(lines)


def _op_of(db: Database, mode: Mode):
    """The instruction a mode belongs to."""
    return next(op for op in db.ops.values() if any(m is mode for m in op.modes))


def _template_argument(db: Database, mode: Mode, tiles: dict, name: str) -> str:
    """A template argument: an operand's type, an attribute's enumerator, or C++ text as written."""
    if name not in tiles:
        return name
    if isinstance(tiles[name], AttrDesc):
        return attrs.cpp_value(db.isa, mode.operand(name), tiles[name].value)
    return _type_name(name)


def _argument(db: Database, mode: Mode, tiles: dict, name: str) -> str:
    """A call argument: the operand's variable, ``Enum::VALUE`` for an attribute, or a literal as written."""
    if name not in tiles and (CPP_LITERAL.fullmatch(name) or mode.cpp_array(name) or (
            mode.cpp_conv_tile is not None and name == mode.cpp_conv_tile.name)):
        return name
    if name.startswith("&"):  # an operand passed by address
        return name
    tile = tiles[name]
    if isinstance(tile, AttrDesc):
        o = mode.operand(name)
        return attrs.cpp_value(db.isa, o, tile.value) if o.is_typed_attr else f"{o.enum}::{tile.value}"
    return name


def asm_examples(db: Database, op: OpSpec, mode: Mode) -> dict[str, str]:
    tiles = example_tiles(db, mode)
    return {form: print_form(db, op, mode, form, tiles) for form in FORMS}
