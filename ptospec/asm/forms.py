"""The three assembly forms of an instruction: print and parse.

Canonical spellings (what ``print_form`` emits)::

    sync: %dst = tcolmin %src : !pto.tile<T_src> -> !pto.tile<T_dst>
    ssa:  %dst = pto.tcolmin %src : (!pto.tile<T_src>) -> !pto.tile<T_dst>
    dps:  pto.tcolmin ins(%src : !pto.tile_buf<T_src>) outs(%dst : !pto.tile_buf<T_dst>)

Several results are comma separated (parenthesised in ``ssa``).  Which operands
appear in each form comes from the spec (``asm.sync|ssa|dps``).  The parser also
accepts the upstream variants: an ``ssa`` input list without parentheses, and a
``sync`` line with a single type shared by every operand (``: !pto.tile<...>``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..attrs import asm_choices, read_asm, spell_asm
from ..errors import AsmError, PtospecError
from ..model import AttrValue, Database, Mode, Operand, OpSpec
from ..textsplit import split_top_level
from ..tile import AttrDesc, GlobalDesc, ScalarDesc, TileDesc
from .types import format_type, parse_type

FORMS = ("sync", "ssa", "dps")
_VALUE = re.compile(r"^%[A-Za-z_0-9][A-Za-z_0-9.$-]*$")


@dataclass(frozen=True)
class ParsedLine:
    op: str
    mode: str
    form: str
    operands: dict[str, TileDesc | ScalarDesc]
    values: dict[str, str]  # operand -> SSA value name used in the line
    implied: tuple[str, ...] = ()  # operands of the mode the form leaves out (tmp, allocated by the implementation)
    alternatives: tuple[str, ...] = ()  # other modes the line also fits (none of them legal either)


def _kind(form: str) -> str:
    return "tile_buf" if form == "dps" else "tile"


def print_form(db: Database, op: OpSpec, mode: Mode, form: str, tiles: dict, names: dict | None = None) -> str:
    """One assembly line for a concrete invocation (``tiles``: operand -> descriptor)."""
    spec = mode.asm[form]
    names = names or {}

    def value(n: str) -> str:
        return names.get(n, f"%{n}")

    def ty(n: str) -> str:
        return mode.operand(n).asm_type or format_type(tiles[n], db.isa, _kind(form))

    ins = ", ".join(value(n) for n in spec.ins) + attr_dict(db, mode, tiles)
    in_types = ", ".join(ty(n) for n in spec.ins)
    outs = ", ".join(value(n) for n in spec.outs)
    out_types = ", ".join(ty(n) for n in spec.outs)
    if form == "dps":
        ins_part = f"ins({ins} : {in_types})" if spec.ins else f"ins({ins.strip()})"  # attributes alone (TFREE)
        return f"pto.{op.mnemonic} {ins_part}" + (f" outs({outs} : {out_types})" if spec.outs else "")
    return _line(op, form, ins, in_types, outs, out_types, len(spec.outs))


def _line(op: OpSpec, form: str, ins: str, in_types: str, outs: str, out_types: str, n_outs: int) -> str:
    """A sync or ssa line; an instruction without results (a store) prints no ``%r =``."""
    if not ins.strip().startswith("%") and not n_outs:  # no operand at all (TFREE): the attributes alone
        return f"{op.mnemonic}{ins}" if form == "sync" else f"pto.{op.mnemonic}{ins} : () -> ()"
    if form == "sync":
        if not n_outs:
            return f"{op.mnemonic} {ins} : {in_types}"
        if not ins.strip().startswith("%"):  # results only (TPOP)
            return f"{outs} = {op.mnemonic}{ins} : -> {out_types}"
        return f"{outs} = {op.mnemonic} {ins} : {in_types} -> {out_types}"
    if not n_outs:
        return f"pto.{op.mnemonic} {ins} : {_functional(in_types)} -> ()"
    results = _functional(out_types)
    if not ins.strip().startswith("%"):  # results only (TPOP)
        return f"{outs} = pto.{op.mnemonic}{ins} : () -> {results}"
    return f"{outs} = pto.{op.mnemonic} {ins} : {_functional(in_types)} -> {results}"


def _functional(types: str) -> str:
    """One side of an SSA functional type as MLIR prints it: a single type bare, none or several in parentheses."""
    return types if types and len(_split_top(types)) == 1 else f"({types})"


def print_template(op: OpSpec, mode: Mode, form: str) -> str:
    """The form with ``...`` for tile types, as upstream pages show it; a scalar shows its type variable."""
    spec = mode.asm[form]
    tile = f"!pto.{_kind(form)}<...>"

    def ty(n: str) -> str:
        o = mode.operand(n)
        if o.is_global:
            return "!pto.partition_tensor_view<...>"
        return (o.asm_type or o.dtype) if o.role == "scalar" else tile

    ins = ", ".join(f"%{n}" for n in spec.ins) + attr_dict(None, mode, None)
    outs = ", ".join(f"%{n}" for n in spec.outs)
    in_types = ", ".join(ty(n) for n in spec.ins)
    out_types = ", ".join(ty(n) for n in spec.outs)
    if form == "dps":
        ins_part = f"ins({ins} : {in_types})" if spec.ins else f"ins({ins.strip()})"
        return f"pto.{op.mnemonic} {ins_part}" + (f" outs({outs} : {out_types})" if spec.outs else "")
    return _line(op, form, ins, in_types, outs, out_types, len(spec.outs))


def attr_dict(db: Database | None, mode: Mode, tiles: dict | None) -> str:
    """`` {key = #pto.x<VALUE>, ...}`` for the mode's attribute operands ('...' for a template), or ''."""
    if not mode.attrs and not mode.asm_tags:
        return ""
    items = [f"{key} = {spelled}" for key, spelled in mode.asm_tags.items()]
    for o in mode.attrs:
        if db is None or tiles is None:
            items.append(f"{o.asm_key} = {o.enum or ('true|false' if o.attr_type == 'bool' else 'N : ' + o.attr_type)}")
        else:
            items.append(f"{o.asm_key} = {spell_asm(db.isa, o, tiles[o.name].value)}")
    return " {" + ", ".join(items) + "}"


_ATTRS = re.compile(r",?\s*\{([^{}]*)\}")  # the assembler also writes ins(%src, {attrs} : ...)


def _take_attrs(text: str, line: str) -> tuple[str, dict[str, str]]:
    """Remove the attribute dictionary from ``text``; return the rest and {key: spelled value}."""
    found = _ATTRS.findall(text)
    if len(found) > 1:
        raise AsmError(f"more than one attribute dictionary in {line!r}", rule="asm.syntax")
    if not found:
        return text, {}
    attrs: dict[str, str] = {}
    for item in _split_top(found[0]):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise AsmError(f"expected 'name = value' in the attribute dictionary of {line!r}", rule="asm.syntax")
        if key.strip() in attrs:
            raise AsmError(f"attribute {key.strip()!r} given twice in {_short(line)!r}", rule="asm.attr")
        attrs[key.strip()] = value.strip()
    return _ATTRS.sub(" ", text, count=1), attrs


def _attr_value(db: Database, o: Operand, spelled: str, line: str) -> AttrValue:
    value = read_asm(db.isa, o, spelled)
    if value is not None:
        return value
    what = o.enum or f"legal {o.asm_key}"
    raise AsmError(f"{spelled!r} is not a {what} (expected {asm_choices(db.isa, o)}) in {line!r}",
                   rule="asm.attr")


def _split_top(text: str) -> list[str]:
    """Split on commas outside <...> and (...); no parts for blank text."""
    parts = split_top_level(text, "<(")
    return [] if parts == [""] else parts


def _values(text: str, line: str) -> list[str]:
    vals = [v.strip() for v in text.split(",")] if text.strip() else []
    for v in vals:
        if not _VALUE.match(v):
            raise AsmError(f"expected an SSA value like %src, got {v!r} in {line!r}", rule="asm.syntax")
    return vals


def _strip_parens(text: str) -> str:
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        return text[1:-1]
    return text


def _find_op(db: Database, mnemonic: str, line: str) -> OpSpec:
    op = db.by_mnemonic(mnemonic.removeprefix("pto."))
    if op is None:
        raise AsmError(f"unknown instruction {mnemonic!r} in {line!r}", rule="asm.op")
    return op


MAX_LINE = 1 << 16  # characters; real lines are a few hundred
_MNEMONIC = re.compile(r"[a-z][a-z0-9_.]*")
_DPS_MNEMONIC = re.compile(r"pto\.[a-z0-9_]+(?:\.[a-z0-9_]+)*")


def parse_line(db: Database, line: str, mode_name: str | None = None, profile: str | None = None,
               signless: bool = False) -> ParsedLine:
    """Parse any of the three forms back to operand descriptors (in time linear in the line's length).

    Without ``mode_name`` the mode is chosen as ``choose_mode`` says; ``profile`` (default: any)
    is where legality decides between modes the line's shape alone cannot tell apart."""
    if not isinstance(line, str):
        raise AsmError(f"an assembly line is text, got {type(line).__name__}", rule="asm.syntax")
    if len(line) > MAX_LINE:
        raise AsmError(f"assembly line longer than {MAX_LINE} characters", rule="asm.too-long")
    text = re.split(r"//|#(?!pto)", line, maxsplit=1)[0].strip()  # comments; #pto... is an attribute value
    if not text:
        raise AsmError("empty assembly line", rule="asm.syntax")
    text, attrs = _take_attrs(text, line)
    dps = _split_dps(text)
    if dps is not None:
        mnemonic, ins_text, outs_text = dps
        op = _find_op(db, mnemonic, line)
        ins = _dps_group(ins_text, line)
        outs = _dps_group(outs_text, line)
        return _bind(db, op, "dps", ins, outs, mode_name, line, attrs, profile, signless)
    parts = _split_assignment(text) or _split_bare(text)  # bare: no results (a store)
    if parts is None:
        raise AsmError(
            f"not an assembly line of any form (expected '%d = op %a : ...' or 'pto.op ins(...) outs(...)'): "
            f"{_short(line)!r}",
            rule="asm.syntax",
        )
    results, mnemonic, operands, types = parts
    form = "ssa" if mnemonic.startswith("pto.") else "sync"
    op = _find_op(db, mnemonic, line)
    out_vals = _values(results, line)
    in_vals = _values(operands, line)
    if "->" in types:
        in_t, _, out_t = types.partition("->")
        in_types = _split_top(_strip_parens(in_t)) if in_t.strip() else []
        out_types = _split_top(_strip_parens(out_t)) if _strip_parens(out_t).strip() else []
    elif not out_vals:
        in_types, out_types = (_split_top(types) if types.strip() else []), []
    else:
        shared = _split_top(types)
        if len(shared) != 1:
            raise AsmError(f"expected 'ins -> outs' types in {_short(line)!r}", rule="asm.syntax")
        in_types = shared * len(in_vals)
        out_types = shared * len(out_vals)
    if len(in_types) != len(in_vals) or len(out_types) != len(out_vals):
        raise AsmError(
            f"{len(in_vals)} operand(s) and {len(out_vals)} result(s) but {len(in_types)} and {len(out_types)} "
            f"type(s) in {_short(line)!r}",
            rule="asm.arity",
        )
    return _bind(db, op, form, list(zip(in_vals, in_types, strict=True)),
                 list(zip(out_vals, out_types, strict=True)), mode_name, line, attrs, profile)


def _short(line: str) -> str:
    return line if len(line) <= 200 else line[:200] + "..."


def _split_dps(text: str) -> tuple[str, str, str] | None:
    """``pto.op ins(A) outs(B)`` -> (mnemonic, A, B), or None (string scanning, no backtracking)."""
    m = _DPS_MNEMONIC.match(text)
    if not m:
        return None
    rest = text[m.end():]
    if not rest[:1].isspace():
        return None
    rest = rest.lstrip()
    if not rest.startswith("ins("):
        return None
    k = rest.rfind("outs(")
    if k < 0:  # an instruction without outputs (TPRINT): ins(...) alone
        ins = rest[4:].rstrip()
        return (m.group(), ins[:-1], "") if ins.endswith(")") else None
    ins, outs = rest[4:k].rstrip(), rest[k + 5:].rstrip()
    if not ins.endswith(")") or not outs.endswith(")"):
        return None
    return m.group(), ins[:-1], outs[:-1]


def _split_assignment(text: str) -> tuple[str, str, str, str] | None:
    """``RESULTS = mnemonic OPERANDS : TYPES`` -> its four parts, or None."""
    results, eq, rest = text.partition("=")
    if not eq or ":" in results:  # an '=' only inside the types: a line without results
        return None
    rest = rest.lstrip()
    m = _MNEMONIC.match(rest)
    if not m:
        return None
    operands, colon, types = rest[m.end():].partition(":")
    if not colon:
        return None
    return results, m.group(), operands.strip(), types.strip()


def _split_bare(text: str) -> tuple[str, str, str, str] | None:
    """``mnemonic OPERANDS : TYPES`` (an instruction without results, a store) -> ('', mnemonic, ...)."""
    m = _MNEMONIC.match(text)
    if not m:
        return None
    if re.sub(r"\s+", "", text[m.end():]) in ("", ":()->()"):  # no operand at all (TFREE; attributes taken)
        return "", m.group(), "", ""
    operands, colon, types = text[m.end():].partition(":")
    if not colon or not operands.strip().startswith("%"):
        return None
    return "", m.group(), operands.strip(), types.strip()


def _dps_group(text: str, line: str) -> list[tuple[str, str]]:
    if not text.strip():
        return []
    items = _split_top(text)
    if len(items) > 1 and all(re.match(r"^\s*%[A-Za-z_0-9.$-]+\s*:", it) for it in items):
        # the assembler's TSTORE and TMOV: each operand with its own type, ins(%src : T, %scale : i64)
        return [(v.strip(), t.strip()) for v, _, t in (it.partition(":") for it in items)]
    vals, sep, types = text.partition(":")
    if not sep:
        raise AsmError(f"expected 'values : types' inside ins(...)/outs(...) in {line!r}", rule="asm.syntax")
    values = _values(vals, line)
    type_list = _split_top(types)
    if len(values) != len(type_list):
        raise AsmError(f"{len(values)} value(s) but {len(type_list)} type(s) in {line!r}", rule="asm.arity")
    return list(zip(values, type_list, strict=True))


def _bind(db, op: OpSpec, form: str, ins, outs, mode_name, line, attrs: dict[str, str],
          profile: str | None, signless: bool = False) -> ParsedLine:
    if mode_name and mode_name not in {m.name for m in op.modes}:
        raise AsmError(f"{op.name} has no mode {mode_name!r} (modes: {', '.join(m.name for m in op.modes)})",
                       rule="invocation.mode")
    candidates = [op.mode(mode_name)] if mode_name else list(op.modes)
    fitting = [m for m in candidates if len(m.asm[form].ins) == len(ins) and len(m.asm[form].outs) == len(outs)]
    tagged = [m for m in fitting if _attrs_fit(op, m, attrs)]
    if fitting and not tagged and len(fitting) > 1:
        marks = "; ".join(f"{m.name}: {attr_dict(None, m, None).strip() or 'no attributes'}" for m in fitting)
        raise AsmError(f"{op.name}: the line's attributes select no mode ({marks}): {_short(line)!r}",
                       rule="asm.attr")
    fitting = tagged or fitting  # one mode of this shape: its own messages say what is wrong
    omitted: tuple[str, ...] = ()
    elsewhere: list[Mode] = []
    if fitting and profile and not any(_available(op, m, profile) for m in fitting):
        elsewhere, fitting = fitting, []  # none of them exists on the profile: a mode that leaves out its tmp may
    if not fitting:  # a line that leaves out what the form allows it to (tmp, allocated by the implementation)
        shorter = [m for m in candidates if m.asm[form].may_omit
                   and len([n for n in m.asm[form].ins if n not in m.asm[form].may_omit]) == len(ins)
                   and len([n for n in m.asm[form].outs if n not in m.asm[form].may_omit]) == len(outs)
                   and _attrs_fit(op, m, attrs)]
        if len(shorter) == 1:
            fitting, omitted = shorter, shorter[0].asm[form].may_omit
    fitting = fitting or elsewhere  # no such mode either: the validator says why the line's mode is missing
    if not fitting:
        shapes = "; ".join(
            f"{m.name}: {len(m.asm[form].ins)} in, {len(m.asm[form].outs)} out" for m in candidates
        )
        raise AsmError(
            f"{op.name} {form} form takes ({shapes}), the line has {len(ins)} in and {len(outs)} out: {line!r}",
            rule="asm.arity",
        )
    words = {o.asm_type for m in fitting for o in m.operands if o.asm_type}
    types = [ScalarDesc(ty.strip()) if ty.strip() in words else _parse_operand_type(db, val, ty)
             for val, ty in [*ins, *outs]]
    if mode_name is None and len(fitting) > 1:
        mode, alternatives = choose_mode(db, op, form, fitting, types, attrs, profile, line)
    else:
        mode, alternatives = fitting[0], ()
    operands, values = {}, {}
    names = [n for n in (*mode.asm[form].ins, *mode.asm[form].outs) if n not in omitted]
    for name, (val, _ty), desc in zip(names, [*ins, *outs], types, strict=True):
        if isinstance(desc, PtospecError):
            raise AsmError(f"{name}: {desc.message}", rule=desc.rule or "asm.type")
        operands[name] = _typed_scalar(op, mode, name, desc, line)
        values[name] = val
    if signless:  # a program of the assembler's dialect
        _signless_scalars(db, op, mode, operands)
    keys = {o.asm_key: o for o in mode.attrs}
    keys.update({o.dialect_key: o for o in mode.attrs if o.dialect_key})
    for key in attrs:
        if key not in keys and key not in mode.asm_tags:
            expected = ", ".join([*keys, *mode.asm_tags]) or "none"
            raise AsmError(f"{op.name} {mode.name} has no attribute {key!r} (its attributes: {expected}) in {line!r}",
                           rule="asm.attr")
    for o in mode.attrs:
        given = [k for k in (o.asm_key, o.dialect_key) if k and k in attrs]
        if len(given) > 1:
            raise AsmError(f"{op.name}: attribute {o.asm_key} given twice (as {' and '.join(given)}) in {line!r}",
                           rule="asm.attr")
        if given:
            operands[o.name] = AttrDesc(_attr_value(db, o, attrs[given[0]], line))
        elif o.dialect_default is not None:
            operands[o.name] = AttrDesc(o.dialect_default)
        else:
            raise AsmError(f"{op.name} {mode.name} needs the attribute {{{o.asm_key} = ...}} in {line!r}",
                           rule="asm.attr")
    return ParsedLine(op.name, mode.name, form, operands, values, (*implied_by(mode, form), *omitted), alternatives)


def _available(op: OpSpec, mode: Mode, profile: str) -> bool:
    """Whether ``mode`` has a dtype row on ``profile``."""
    table = op.dtypes.get(profile)
    return table is not None and any(not row.modes or mode.name in row.modes for row in table.rows)


def _attrs_fit(op: OpSpec, mode: Mode, attrs: dict[str, str]) -> bool:
    """A line fits a mode when it carries the mode's tags and no tag of another mode, when every attribute
    it carries is one of the mode's, and when it gives every attribute the mode has no default for."""
    for key, spelled in mode.asm_tags.items():
        if " ".join(attrs.get(key, "").split()) != " ".join(spelled.split()):
            return False
    known = {*mode.asm_tags, *(o.asm_key for o in mode.attrs), *(o.dialect_key for o in mode.attrs if o.dialect_key)}
    if set(attrs) - known:
        return False
    return all(o.dialect_default is not None or o.asm_key in attrs or (o.dialect_key and o.dialect_key in attrs)
               for o in mode.attrs)


def implied_by(mode: Mode, form: str) -> tuple[str, ...]:
    """The mode's operands the form does not write (the implementation allocates them)."""
    shown = set(mode.asm[form].ins) | set(mode.asm[form].outs)
    return tuple(o.name for o in mode.operands if not o.is_attr and o.name not in shown)


def _signless_scalars(db: Database, op: OpSpec, mode: Mode, operands: dict) -> None:
    """The assembler's scalars are MLIR's signless integers: an ``iN`` scalar stands for ``uN`` where its type
    variable is a tile's of ``uN``, or where the instruction's dtype tables give that variable ``uN`` and never
    ``iN`` in the mode's rows (TSTORE's u64 pre-quantisation scalar)."""
    for o in mode.operands:
        d = operands.get(o.name)
        if o.role != "scalar" or not isinstance(d, ScalarDesc) or not d.dtype.startswith("i") or o.asm_type:
            continue
        unsigned = "u" + d.dtype[1:]
        if unsigned not in db.isa.dtypes:
            continue
        tiles = [t for n, t in operands.items() if isinstance(t, TileDesc | GlobalDesc)
                 and mode.operand(n).dtype == o.dtype]
        if tiles:
            if all(t.dtype == unsigned for t in tiles):
                operands[o.name] = ScalarDesc(unsigned)
            continue
        listed = {dt for table in op.dtypes.values() for row in table.rows
                  if not row.modes or mode.name in row.modes for dt in row.types.get(o.dtype, ())}
        if unsigned in listed and d.dtype not in listed:
            operands[o.name] = ScalarDesc(unsigned)


def _typed_scalar(op: OpSpec, mode: Mode, name: str, desc, line: str):
    """``desc``, with a scalar written in its operand's own assembly type (``index``) given that operand's dtype."""
    if not isinstance(desc, ScalarDesc) or not any(o.asm_type == desc.dtype for o in mode.operands):
        return desc
    operand = mode.operand(name)
    if operand.asm_type != desc.dtype:
        raise AsmError(f"{name}: {desc.dtype} is the assembly type of another operand, in {line!r}", rule="asm.type")
    return ScalarDesc(op.scalar_dtype(mode, operand))


def _parse_operand_type(db: Database, value: str, text: str) -> TileDesc | ScalarDesc | PtospecError:
    try:
        return parse_type(text, db.isa)
    except PtospecError as exc:
        return exc


def choose_mode(db: Database, op: OpSpec, form: str, modes: list[Mode], types: list, attrs: dict[str, str],
                profile: str | None, line: str) -> tuple[Mode, tuple[str, ...]]:
    """Pick the mode of a line several modes fit by arity.

    In order: the attribute keys the line carries; whether each position holds a scalar or a tile;
    legality of the operands in the mode (on ``profile``, or on any profile); and a mode that needs no
    operand the form leaves out over one that implies it (a synchronous TRSQRT is the mode without
    tmp).  Modes still tied are an ``asm.ambiguous-mode`` error that names them (choose with --mode).
    When no mode is legal, the first structural fit is taken and the others are returned as
    alternatives, so the validator reports why."""
    from ..validator import validate

    def shape_fits(m: Mode) -> bool:
        if not _attrs_fit(op, m, attrs):  # the line's attributes are the mode's (those left out have defaults)
            return False
        names = [*m.asm[form].ins, *m.asm[form].outs]
        for name, desc in zip(names, types, strict=True):
            if isinstance(desc, PtospecError):
                continue
            if (m.operand(name).role == "scalar") != isinstance(desc, ScalarDesc):
                return False
            if m.operand(name).is_global != isinstance(desc, GlobalDesc):
                return False
        return True

    fitting = [m for m in modes if shape_fits(m)] or modes
    if len(fitting) == 1 or any(isinstance(t, PtospecError) for t in types):
        return fitting[0], tuple(m.name for m in fitting[1:])
    profiles = [profile] if profile else list(db.isa.profiles)

    def reports(m: Mode, profiles: list[str] = profiles) -> list:
        """The validator's report of the line in mode ``m`` on each profile ([] when the line cannot be one)."""
        names = [*m.asm[form].ins, *m.asm[form].outs]
        try:
            operands = {n: _typed_scalar(op, m, n, t, line) for n, t in zip(names, types, strict=True)}
        except AsmError:
            return []
        for o in m.attrs:
            key = next((k for k in (o.asm_key, o.dialect_key) if k and k in attrs), None)
            if key is None and o.dialect_default is not None:
                operands[o.name] = AttrDesc(o.dialect_default)
                continue
            try:
                operands[o.name] = AttrDesc(_attr_value(db, o, attrs[key], line))
            except (KeyError, AsmError):
                return []
        implied = implied_by(m, form)
        return [validate(db, op.name, m.name, p, operands, implied) for p in profiles if p in op.dtypes]

    found = {m.name: reports(m) for m in fitting}
    legal_modes = [m for m in fitting if any(r.ok for r in found[m.name])]
    if not legal_modes:  # the mode the operands' locations select (its other rules fail), else the first fit
        places = {r.id for r in op.rules if r.kind == "loc"}
        located = [m for m in fitting if any(not (r.rule_ids & places) for r in found[m.name])]
        if not located and profile:  # none here: the mode taking these locations on another profile, whose
            others = [p for p in db.isa.profiles if p != profile]  # location rule for this one says why not
            located = [m for m in fitting if any(not (r.rule_ids & places) for r in reports(m, others))]
        chosen = (located or fitting)[0]
        return chosen, tuple(m.name for m in fitting if m is not chosen)
    fewest = min(len(implied_by(m, form)) for m in legal_modes)
    best = [m for m in legal_modes if len(implied_by(m, form)) == fewest]
    if len(best) > 1:
        where = f"on {profile}" if profile else "on some profile"
        raise AsmError(
            f"{op.name}: the {form} line is legal {where} in several modes ({', '.join(m.name for m in best)}); "
            f"choose one with --mode: {line!r}", rule="asm.ambiguous-mode")
    return best[0], ()
