"""Conformance cases printed as ``.pto`` modules in the PTO assembler's dialect.

Each case becomes one ``func.func``: its global operands are pointer arguments viewed with
``make_tensor_view`` (on ``addptr`` of the view's offset) and ``partition_view``, its tiles ``alloc_tile``
statements, its scalars arguments, and the instruction is its ``dps`` line with the dialect's spellings
(keyword tile types, ``ui8``-style element types, the assembler's attribute keys and enum spellings).

With ``dynamic=True`` every tile's valid shape is ``?`` and given by two ``index`` arguments, so one compiled
function serves every valid region of a case's static configuration (the lowering backend); the verifier
table prints the case's own valid shapes so that the verifier sees them.

A case the dialect cannot write (a location or element type it lacks, an enumerator without a dialect
spelling) raises ``NotExpressible`` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...asm.keyword_tiles import PAD_NUMBERS
from ...model import Database, Mode, Operand, OpSpec
from ...program.spec import program_spec
from ...tile import AttrDesc, GlobalDesc, ScalarDesc, TileDesc
from .spec import PtoasSpec

INDEX = "index"


class NotExpressible(Exception):
    """The case has no spelling in the assembler's dialect (the message says why)."""


@dataclass(frozen=True)
class Argument:
    name: str  # without %
    type: str
    operand: str  # the case operand it carries
    role: str  # pointer | scalar | valid_row | valid_col


@dataclass(frozen=True)
class Function:
    name: str
    text: str
    args: tuple[Argument, ...]
    line: int  # the instruction's line within ``text`` (0-based)
    helper_lines: tuple[int, ...] = ()  # lines of statements written only to express the case (treshape alias)
    pointers: dict[str, GlobalDesc] = field(default_factory=dict)  # operand -> its global view


def dialect_dtype(db: Database, dtype: str) -> str:
    """The element type as the assembler spells it (``ui8`` for u8); NotExpressible when it has none."""
    if dtype in _MLIR_BUILTIN:
        return dtype
    alias = next((a for a, target in program_spec(db).dtype_aliases.items() if target == dtype), None)
    if alias is not None:
        return alias
    raise NotExpressible(f"element type {dtype} has no spelling in the assembler's dialect")


# Element types MLIR spells as ptospec does (the others are read through specs/program.yaml's dtype_aliases).
_MLIR_BUILTIN = frozenset({"f16", "bf16", "f32", "i8", "i16", "i32", "i64"})


def tile_type(db: Database, spec: PtoasSpec, t: TileDesc, dynamic: bool) -> str:
    if t.loc not in spec.locations:
        raise NotExpressible(f"the assembler has no tile location {db.isa.tile_types[t.loc]}")
    vr = "?" if dynamic or t.valid_row is None else t.valid_row
    vc = "?" if dynamic or t.valid_col is None else t.valid_col
    if t.compact not in db.isa.compact_dialect:
        raise NotExpressible(f"the assembler has no compact mode {db.isa.compact_modes[t.compact]}")
    number = db.isa.compact_dialect.index(t.compact)
    compact = f", compact={number}" if number else ""
    return (f"!pto.tile_buf<loc={db.isa.tile_types[t.loc]}, dtype={dialect_dtype(db, t.dtype)}, rows={t.rows}, "
            f"cols={t.cols}, v_row={vr}, v_col={vc}, blayout={db.isa.blayouts[t.blayout]}, "
            f"slayout={db.isa.slayouts[t.slayout]}, fractal={t.fractal}, pad={PAD_NUMBERS.index(t.pad)}{compact}>")


def _attr(db: Database, o: Operand, value) -> str:
    """``key = spelled`` with the assembler's key and spelling."""
    key = o.dialect_key or o.asm_key
    if o.attr_type:
        if o.attr_type == "bool":
            return f"{key} = {'true' if value else 'false'}"
        return f"{key} = {int(value)} : {o.attr_type}"
    enum = db.isa.enums[o.enum]
    if enum.dialect_asm:
        word = next((w for w, v in enum.dialect_values.items() if v == str(value)), None)
        if word is None:
            raise NotExpressible(f"{o.enum} {value} has no spelling in the assembler's dialect")
        return f"{key} = {enum.dialect_asm.format(word)}"
    return f"{key} = {enum.spell(str(value))}"


class _Body:
    def __init__(self) -> None:
        self.lines: list[str] = []  # views and tiles
        self.before: list[str] = []  # after the helpers, just before the instruction (valid shapes of io)
        self.after: list[str] = []  # after the instruction (stores of io)
        self.consts: dict[int, str] = {}

    def const(self, value: int) -> str:
        if value not in self.consts:
            self.consts[value] = f"%c{value}"
        return self.consts[value]


def case_function(db: Database, spec: PtoasSpec, op: OpSpec, mode: Mode, tiles: dict, name: str,
                  dynamic: bool = False, io: bool = False) -> Function:
    """One function for one case (``tiles``: operand -> parsed descriptor).

    With ``io`` the function is runnable: each tile's whole storage is loaded from a pointer argument
    ``<operand>_gm`` (rows x cols elements, the tile's layout) with its valid shape set to the full tile, then
    its valid shape is set from ``<operand>_vr``/``_vc``, the instruction runs, and each output tile is stored
    back whole.  Only Vec tiles in row- or column-major without boxes can be exchanged so."""
    form = _dps_form(spec, op, mode, io)
    ssa = op.mnemonic in spec.syntax.ssa_form
    absent = spec.syntax.absent(op.mnemonic)
    body = _Body()
    args: list[Argument] = []
    types: dict[str, str] = {}
    values: dict[str, str] = {}
    pointers: dict[str, GlobalDesc] = {}
    helpers: list[str] = []
    shown = (*form.ins, *form.outs)
    attrs = []
    for o in sorted(mode.operands, key=lambda o: bool(o.alias_of and o.alias_in_place)):  # aliases last
        d = tiles.get(o.name)
        if o.is_attr:
            if isinstance(d, AttrDesc) and o.name in absent:
                if d.value != o.dialect_default:
                    raise NotExpressible(f"{op.mnemonic} has no attribute {o.asm_key}: only its default "
                                         f"{o.dialect_default} can be written")
            elif isinstance(d, AttrDesc):
                attrs.append(_attr(db, o, d.value))
            continue
        if o.name not in shown:
            continue
        if isinstance(d, GlobalDesc):
            types[o.name], values[o.name] = _view(db, body, args, o.name, d)
            pointers[o.name] = d
        elif isinstance(d, TileDesc):
            ty = tile_type(db, spec, d, dynamic or io)
            types[o.name], values[o.name] = ty, f"%{o.name}"
            if o.alias_of and o.alias_in_place and o.alias_of in values:
                src = tiles[o.alias_of]
                same = tile_type(db, spec, src, dynamic) == tile_type(db, spec, d, dynamic)
                if same:
                    values[o.name] = values[o.alias_of]
                elif io:
                    raise NotExpressible(f"{o.name}: an in-place view of another type with a run-time valid shape")
                else:  # a view of the source's storage with this operand's type
                    helpers.append(f"%{o.name} = pto.treshape {values[o.alias_of]} : {types[o.alias_of]} -> {ty}")
                if io:
                    _exchanged(db, body, args, o.name, d, ty, o.role, value=values[o.name], load=False,
                               valid=not same)
                continue
            if io:
                _exchanged(db, body, args, o.name, d, ty, o.role)
            elif ssa and o.name in form.outs:  # the operation's result: no tile of its own
                pass
            elif dynamic:
                vr, vc = f"%{o.name}_vr", f"%{o.name}_vc"
                args += [Argument(vr[1:], INDEX, o.name, "valid_row"), Argument(vc[1:], INDEX, o.name, "valid_col")]
                body.lines.append(f"%{o.name} = pto.alloc_tile valid_row = {vr} valid_col = {vc} : {ty}")
            else:
                body.lines.append(f"%{o.name} = pto.alloc_tile : {ty}")
        elif isinstance(d, ScalarDesc):  # MLIR's scalars are signless integers (asm/forms._signless_scalars)
            ty = o.asm_type or (f"i{d.dtype[1:]}" if d.dtype[:1] == "u" and d.dtype[1:].isdigit()
                                else dialect_dtype(db, d.dtype))
            args.append(Argument(o.name, ty, o.name, "scalar"))
            types[o.name], values[o.name] = ty, f"%{o.name}"
        else:
            raise NotExpressible(f"operand {o.name} has no descriptor")
    attrs = [f"{k} = {v}" for k, v in mode.asm_tags.items()] + attrs
    attr_text = f" {{{', '.join(attrs)}}}" if attrs else ""
    own = next((name.removeprefix("pto.") for name, (o, m) in program_spec(db).mnemonics.items()
                if o == op.name and m == mode.name), op.mnemonic)  # the mode's own operation (pto.textract_fp)
    line = _instruction(spec, op.mnemonic, form, values, types, attr_text, own)
    return _function(name, args, body, helpers, line, pointers)


def _dps_form(spec: PtoasSpec, op: OpSpec, mode: Mode, io: bool):
    """The mode's destination-passing form, or ``NotExpressible`` saying why the assembler cannot take it."""
    if op.mnemonic in spec.uncovered:
        raise NotExpressible(f"the assembler has no operation {op.mnemonic}")
    unwritten = spec.unwritten(op.mnemonic, mode.name)
    if unwritten is not None:
        raise NotExpressible(f"{op.mnemonic} {mode.name}: {unwritten['en']}")
    if io and op.mnemonic in spec.syntax.ssa_form:
        raise NotExpressible(f"{op.mnemonic} is written in SSA form only: its result cannot take a run-time valid "
                             "shape before it exists")
    form = mode.asm.get("dps")
    if form is None:
        raise NotExpressible(f"{op.mnemonic} {mode.name} has no dps form")
    return form


def _function(name: str, args: list[Argument], body: _Body, helpers: list[str], line: str,
              pointers: dict[str, GlobalDesc]) -> Function:
    """The function's text: constants, views and tiles, helpers, valid shapes, the instruction, stores."""
    consts = [f"{c} = arith.constant {v} : index" for v, c in sorted(body.consts.items())]
    statements = [*consts, *body.lines, *helpers, *body.before]
    signature = ", ".join(f"%{a.name}: {a.type}" for a in args)
    text_lines = [f"  func.func @{name}({signature}) {{", *(f"    {s}" for s in statements), f"    {line}",
                  *(f"    {s}" for s in body.after), "    return", "  }"]
    first_helper = 1 + len(consts) + len(body.lines)
    return Function(name, "\n".join(text_lines) + "\n", tuple(args), 1 + len(statements),
                    tuple(range(first_helper, first_helper + len(helpers))), pointers)


def _instruction(spec: PtoasSpec, mnemonic: str, form, values: dict[str, str], types: dict[str, str],
                 attr_text: str, written: str) -> str:
    """The instruction's line in the dialect's syntax for ``mnemonic`` (``syntax`` of specs/ptoas.yaml), written
    as the operation ``written``."""
    syntax = spec.syntax
    ins, outs = form.ins, form.outs
    if mnemonic in syntax.ssa_form:
        return (f"{', '.join(values[n] for n in outs)} = pto.{written} {', '.join(values[n] for n in ins)}"
                f"{attr_text} : {', '.join(types[n] for n in ins)} -> {', '.join(types[n] for n in outs)}")
    inside = mnemonic in syntax.attributes_in_ins
    if mnemonic in syntax.typed_operands:
        ins_part = f"ins({', '.join(f'{values[n]} : {types[n]}' for n in ins)})"
    else:
        listed = ", ".join(values[n] for n in ins)
        if inside and attr_text:
            listed += ("," if mnemonic in syntax.attributes_after_comma else "") + attr_text
        ins_part = f"ins({listed} : {', '.join(types[n] for n in ins)})" if ins else "ins()"
    line = f"pto.{written} {ins_part}"
    if outs:
        line += f" outs({', '.join(values[n] for n in outs)} : {', '.join(types[n] for n in outs)})"
    return line if inside else line + attr_text


def _exchanged(db: Database, body: _Body, args: list[Argument], name: str, t: TileDesc, ty: str, role: str,
               value: str = "", load: bool = True, valid: bool = True) -> None:
    """A tile loaded whole from ``<name>_gm`` (and stored back whole after the instruction when it is an output).

    An in-place alias (``load=False``) is the value of its source, or a view of it, and is only stored; it sets
    its own valid shape unless it is the source's value (``valid=False``)."""
    if t.loc != "Vec" or t.slayout != "NoneBox":
        raise NotExpressible(f"{name}: only Vec tiles without boxes are exchanged with global memory")
    layout = "ND" if t.blayout == "RowMajor" else "DN"
    strides = (t.cols, 1) if layout == "ND" else (1, t.rows)
    view = GlobalDesc(t.dtype, (t.rows, t.cols), strides, layout, 0, t.rows * t.cols)
    part, gm = _view(db, body, args, f"{name}_gm", view)
    args[-1] = replace(args[-1], operand=name)
    rows, cols = body.const(t.rows), body.const(t.cols)
    tile = value or f"%{name}"
    if valid:
        vr, vc = f"%{name}_vr", f"%{name}_vc"
        args += [Argument(vr[1:], INDEX, name, "valid_row"), Argument(vc[1:], INDEX, name, "valid_col")]
        body.before.append(f"pto.set_validshape {tile}, {vr}, {vc} : {ty}")
    if load:
        body.lines.append(f"{tile} = pto.alloc_tile valid_row = {rows} valid_col = {cols} : {ty}")
        body.lines.append(f"pto.tload ins({gm} : {part}) outs({tile} : {ty})")
    if role == "out":
        body.after.append(f"pto.set_validshape {tile}, {rows}, {cols} : {ty}")
        body.after.append(f"pto.tstore ins({tile} : {ty}) outs({gm} : {part})")


def _view(db: Database, body: _Body, args: list[Argument], name: str, g: GlobalDesc) -> tuple[str, str]:
    """The statements viewing a global operand; returns (partition type, value)."""
    if None in g.shape or None in g.strides or g.offset is None:
        raise NotExpressible(f"{name}: a view with a dynamic shape, stride or offset")
    el = dialect_dtype(db, g.dtype)
    ptr = f"%{name}_ptr"
    args.append(Argument(ptr[1:], f"!pto.ptr<{el}>", name, "pointer"))
    base = ptr
    if g.offset:
        base = f"%{name}_base"
        body.lines.append(f"{base} = pto.addptr {ptr}, {body.const(g.offset)} : <{el}> -> <{el}>")
    dims = "x".join(str(v) for v in g.shape)
    shape = ", ".join(body.const(v) for v in g.shape)
    strides = ", ".join(body.const(v) for v in g.strides)
    layout = db.isa.global_layouts[g.layout].asm
    tv_type = f"!pto.tensor_view<{dims}x{el}>"
    part_type = f"!pto.partition_tensor_view<{dims}x{el}>"
    zeros = ", ".join(body.const(0) for _ in g.shape)
    body.lines.append(f"%{name}_tv = pto.make_tensor_view {base}, shape = [{shape}], strides = [{strides}] "
                      f"{{layout = #pto.layout<{layout}>}} : {tv_type}")
    body.lines.append(f"%{name} = pto.partition_view %{name}_tv, offsets = [{zeros}], sizes = [{shape}] : "
                      f"{tv_type} -> {part_type}")
    return part_type, f"%{name}"


def module_text(functions: list[Function], arch: str | None = None) -> str:
    """A module holding ``functions``; ``arch`` sets ``pto.target_arch`` (``--pto-arch`` overrides it)."""
    head = f'module attributes {{"pto.target_arch" = "{arch}"}} {{\n' if arch else "module {\n"
    return head + "".join(f.text for f in functions) + "}\n"


def function_lines(functions: list[Function], arch: str | None = None) -> list[tuple[int, int]]:
    """The 1-based (first, last) line of each function in ``module_text(functions, arch)``."""
    spans, line = [], 2
    for f in functions:
        n = f.text.count("\n")
        spans.append((line, line + n - 1))
        line += n
    return spans
