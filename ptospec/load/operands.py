"""A mode's ``operands``: each operand built from its entry, then the checks over the list."""

from __future__ import annotations

from .. import attrs
from ..expr.ast import Node
from ..model import Operand
from .context import OpContext


def build_operands(ctx: OpContext, mp: tuple, m: dict) -> tuple[Operand, ...]:
    operands = tuple(_operand(ctx, (*mp, "operands", i), o, m["operands"]) for i, o in enumerate(m["operands"]))
    _check_placement(ctx, mp, operands)
    names = [o.name for o in operands]
    if len(set(names)) != len(names):
        ctx.add((*mp, "operands"), "operand names must be unique", "op.operands")
    if not any(o.role == "out" for o in operands) and "effect" not in m:
        ctx.add((*mp, "operands"), "a mode with semantics needs at least one out operand (an instruction without "
                "data semantics states its effect instead)", "op.operands")
    for o in operands:
        for prof in o.usage:
            if prof not in ctx.isa.profiles:
                ctx.add((*mp, "operands"), f"usage for unknown profile {prof!r}", "op.profile")
    for i, o in enumerate(operands):
        if o.is_attr:
            _check_attr(ctx, (*mp, "operands", i), o)
        if o.asm_type and (o.role != "scalar" or o.asm_type in ctx.isa.dtypes):
            ctx.add((*mp, "operands", i), "asm_type: only a scalar operand has one, and it must not be a dtype name",
                    "op.operands")
        if (o.dialect_key or o.dialect_default is not None) and not o.is_attr:
            ctx.add((*mp, "operands", i), "dialect: only attr operands have a dialect spelling", "op.operands")
    for i, o in enumerate(operands):
        if o.is_global and o.role not in ("in", "out"):
            ctx.add((*mp, "operands", i), "a global operand must be an in or out operand", "op.operands")
    return operands


def _operand(ctx: OpContext, path: tuple, o: dict, siblings: list[dict]) -> Operand:
    others = tuple(x["name"] for x in siblings)
    domain = _domain(ctx, path, o, others)
    alias_of, alias_at, alias_text, in_place = _alias(ctx, path, o, siblings)
    sorted_ = o.get("sorted", {})
    stride = ctx.parse((*path, "sorted"), sorted_["stride"]) if "sorted" in o else None
    encode = _encode(ctx, path, o, siblings)
    block = ctx.parse((*path, "sorted", "block"), sorted_["block"]) if "block" in sorted_ else None
    dialect = o.get("dialect", {})
    return Operand(
        name=o["name"], role=o["role"], dtype=o.get("dtype", ""), text=o["text"], usage=dict(o.get("usage", {})),
        domain=domain, domain_text=o.get("domain", ""), enum=o.get("enum", ""), asm_key=o.get("asm_key", ""),
        kind=o.get("kind", "tile"), dialect_key=dialect.get("key", ""), dialect_default=dialect.get("default"),
        attr_type=o.get("type", ""), attr_values=tuple(o.get("values", ())),
        attr_range=tuple(o["range"]) if "range" in o else None,
        alias_of=alias_of, alias_at=alias_at, alias_at_text=alias_text, alias_in_place=in_place,
        asm_type=o.get("asm_type", ""), sorted_stride=stride, sorted_text=sorted_.get("stride", ""),
        cpp_struct=o.get("cpp_struct", ""), encode=encode, encode_text=o.get("encode", ""), sorted_block=block,
        cpp_enum=o.get("cpp_enum", ""), stores=o.get("stores", ""),
    )


def _check_placement(ctx: OpContext, mp: tuple, operands: tuple[Operand, ...]) -> None:
    """Fields that only some roles of operand may carry."""
    for i, o in enumerate(operands):
        if o.sorted_stride is not None and (o.role != "in" or o.is_global):
            ctx.add((*mp, "operands", i), "sorted: applies to input tiles", "op.operands")
        if o.cpp_struct and (o.role != "out" or o.is_global):
            ctx.add((*mp, "operands", i), "cpp_struct: applies to output tiles", "op.operands")
        if o.stores and (o.role != "in" or o.is_global or o.stores not in ctx.isa.dtypes):
            ctx.add((*mp, "operands", i), "stores: applies to input tiles and names a dtype", "op.operands")
        if o.cpp_enum and (not o.is_typed_attr or o.attr_type == "bool"):
            ctx.add((*mp, "operands", i), "cpp_enum: applies to typed integer attributes", "op.operands")


def _domain(ctx: OpContext, path, operand: dict, others: tuple[str, ...]):
    """An operand's value domain: an expression over ``x``, its type variable and the other operands' fields
    (an index operand's range is the table's extent)."""
    if "domain" not in operand:
        return None
    node = ctx.parse((*path, "domain"), operand["domain"])
    if node is not None:
        if operand["role"] not in ("in", "scalar"):
            ctx.add((*path, "domain"), "only in and scalar operands have a value domain", "op.domain")
        ctx.check_names((*path, "domain"), node, {"x", operand["dtype"], *others})
    return node


def _encode(ctx: OpContext, path, operand: dict, operands: list[dict]):
    """An input's ``encode``: the value stored for a generated value ``x``, an expression over ``x`` and the
    mode's type variables (a Scaling tile's packed quantisation words built from small random numbers)."""
    if "encode" not in operand:
        return None
    node = ctx.parse((*path, "encode"), operand["encode"])
    if node is not None:
        if operand["role"] not in ("in", "scalar"):
            ctx.add((*path, "encode"), "only in and scalar operands have an encoding", "op.encode")
        type_vars = {o.get("dtype", "") for o in operands} - {""}
        ctx.check_names((*path, "encode"), node, {"x", *type_vars})
    return node


def _alias(ctx: OpContext, path, operand: dict, operands: list[dict]) -> tuple[str, Node | None, str, bool]:
    """An out operand's ``alias``: the in tile whose storage it is, and the byte offset there (an expression
    over the operands' fields, scalar and attribute operands and the op's ``let`` names)."""
    alias = operand.get("alias")
    if alias is None:
        return "", None, "", False
    roles = {o["name"]: (o["role"], o.get("kind", "tile")) for o in operands}
    if operand["role"] != "out" or operand.get("kind", "tile") != "tile":
        ctx.add((*path, "alias"), "only an out tile operand aliases another tile's storage", "op.alias")
    if roles.get(alias["of"]) != ("in", "tile"):
        ctx.add((*path, "alias", "of"), f"{alias['of']!r} is not an in tile operand", "op.alias")
    text = alias.get("at", "0")
    node = ctx.parse((*path, "alias", "at"), text)
    if node is not None:
        types = {o["dtype"] for o in operands if o.get("dtype")}
        ctx.check_names((*path, "alias", "at"), node, set(roles) | ctx.let_names | types)
    return alias["of"], node, text, bool(alias.get("in_place", False))


def _check_attr(ctx: OpContext, path: tuple, o: Operand) -> None:
    """An attribute names a known enum, or has a type whose legal values and default fit it."""
    isa = ctx.isa
    if not o.attr_type:
        if o.enum not in isa.enums:
            ctx.add(path, f"unknown enum {o.enum!r} (known: {', '.join(isa.enums)})", "op.enum")
        elif o.dialect_default is not None and o.dialect_default not in isa.enums[o.enum].values:
            ctx.add(path, f"dialect default {o.dialect_default!r} is not a value of {o.enum}", "op.enum")
        return
    if o.attr_type != "bool":
        dt = isa.dtypes.get(o.attr_type)
        if dt is None or dt.is_float:
            ctx.add(path, f"attribute type {o.attr_type!r} is neither bool nor an integer dtype", "op.attr-type")
            return
        if not o.attr_values:
            ctx.add(path, "an integer attribute lists its legal values, or the samples of its range", "op.attr-type")
        lo, hi = (-(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1) if dt.is_signed else (0, (1 << dt.bits) - 1)
        bounds = o.attr_range or (lo, hi)
        if not lo <= bounds[0] <= bounds[1] <= hi:
            ctx.add(path, f"range {list(bounds)} does not fit {o.attr_type}", "op.attr-type")
        bad = [v for v in o.attr_values if isinstance(v, bool) or not isinstance(v, int)
               or not bounds[0] <= v <= bounds[1]]
    else:
        bad = [v for v in o.attr_values if not isinstance(v, bool)]
        if o.attr_range is not None:
            ctx.add(path, "a bool attribute has no range", "op.attr-type")
    if bad:
        ctx.add(path, f"values {bad} are not legal {o.attr_type} values of this attribute", "op.attr-type")
    if o.dialect_default is not None and not attrs.is_legal(isa, o, o.dialect_default):
        ctx.add(path, f"dialect default {o.dialect_default!r} is not a legal value of this attribute",
                "op.attr-type")
