"""A mode's ``semantics`` (its statements, each checked) or its ``effect`` (an instruction without data
semantics), and the state registers the statements read."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..expr.ast import Attr, Call, Index, Name, Node, Num, Reduce, walk
from ..expr.functions import FUNCTIONS, REDUCTIONS
from ..expr.parser import parse_statement
from ..expr.vectorize import statement_vars
from ..model import Effect, Isa, Operand
from ..tile import GLOBAL_RANK
from .context import OpContext


def build_semantics(ctx: OpContext, mp: tuple, m: dict, operands: tuple[Operand, ...]) -> tuple:
    if ("semantics" in m) == ("effect" in m):
        ctx.add(mp, "a mode has either semantics or an effect (an instruction without data semantics)", "op.effect")
    roles = {o.name: o.role for o in operands}
    kinds = {o.name: o.kind for o in operands}
    type_vars = {o.dtype for o in operands if o.dtype}
    semantics = []
    for i, item in enumerate(m.get("semantics", ())):
        path = (*mp, "semantics", i)
        stmt = ctx.parse(path, item if isinstance(item, str) else item["do"], parse_statement)
        if stmt is None:
            continue
        extra = _statement_fields(ctx, path, item, roles) if isinstance(item, dict) else {}
        stmt = replace(stmt, **extra) if extra else stmt
        _check_statement(ctx, path, stmt.expanded(), roles, kinds, ctx.let_names | type_vars)
        semantics.append(stmt)
    return tuple(semantics)


def _statement_fields(ctx: OpContext, path: tuple, item: dict, roles: dict[str, str]) -> dict[str, Any]:
    """A statement written as a mapping: its ``when``, ``where``, ``let`` and its flags."""
    extra: dict[str, Any] = {}
    if "when" in item:
        extra.update(when=ctx.parse(path, item["when"]), when_text=item["when"])
    extra.update({k: item[k] for k in ("writes", "reads", "combine") if k in item})
    if "where" in item:
        extra.update(where=ctx.parse(path, item["where"]), where_text=item["where"])
    stmt_lets = []
    for let_name, let_text in item.get("let", {}).items():
        node = ctx.parse((*path, "let", let_name), let_text)
        if let_name in roles or let_name in ctx.let_names:
            ctx.add((*path, "let", let_name), f"statement name {let_name!r} hides an operand or an op-level let "
                    "name", "op.semantics")
        elif node is not None:
            stmt_lets.append((let_name, node, let_text))
    if stmt_lets:
        extra.update(lets=tuple(stmt_lets))
    return extra


def build_effect(ctx: OpContext, mp: tuple, m: dict) -> Effect | None:
    """A mode's ``effect``; a configuration's ``sets`` name registers and fields of ``state`` in isa.yaml and
    compute each value from the mode's operands and type variables."""
    if "effect" not in m:
        return None
    e = m["effect"]
    isa = ctx.isa
    sets: dict[str, dict[str, tuple[Node, str]]] = {}
    known = {o["name"] for o in m["operands"]} | ({o.get("dtype", "") for o in m["operands"]} - {""})
    for reg, fields in e.get("sets", {}).items():
        where = (*mp, "effect", "sets", reg)
        if e["kind"] != "configuration":
            ctx.add(where, "only a configuration effect sets state", "op.state")
        if reg not in isa.state:
            ctx.add(where, f"unknown state register {reg!r} (isa.yaml state: {', '.join(isa.state) or 'none'})",
                    "op.state")
            continue
        missing = sorted(set(isa.state[reg].fields) - set(fields))
        if missing:
            ctx.add(where, f"sets {reg} without its field(s) {', '.join(missing)}", "op.state")
        sets[reg] = {}
        for fname, value in fields.items():
            text = str(value)  # an integer constant or an expression
            if fname not in isa.state[reg].fields:
                ctx.add((*where, fname), f"state register {reg!r} has no field {fname!r}", "op.state")
                continue
            node = ctx.parse((*where, fname), text)
            if node is not None:
                ctx.check_names((*where, fname), node, known)
                sets[reg][fname] = (node, text)
    return Effect(e["kind"], e["text"], sets)


def reads_state(semantics, isa: Isa, operands: set[str]) -> tuple[str, ...]:
    """The state registers a mode's statements read (``<register>.<field>``), in order of first use."""
    found: list[str] = []
    for stmt in semantics:
        stmt = stmt.expanded()
        parts = (stmt.value, stmt.where, stmt.when, *stmt.target.indices)
        for node in (n for part in parts if part is not None for n in walk(part)):
            if isinstance(node, Attr) and node.obj in isa.state and node.obj not in operands \
                    and node.obj not in found:
                found.append(node.obj)
    return tuple(found)


def _check_statement(ctx: OpContext, path, stmt, roles: dict[str, str], kinds: dict[str, str],
                     let_names: set[str]) -> None:
    """One statement: what it writes, how it indexes each operand, and every name it reads."""
    if roles.get(stmt.target.base) != "out":
        ctx.add(path, f"semantics must write an out operand, not {stmt.target.base!r}", "op.semantics")
    _check_indexing(ctx, path, stmt, roles, kinds)
    _check_reductions(ctx, path, stmt)
    parts = (stmt.value, *stmt.target.indices, *([stmt.where] if stmt.where is not None else []))
    tile_names = _tile_arguments(ctx, path, parts, roles, kinds)
    variables = set(statement_vars(stmt))
    for n in (node for part in parts for node in walk(part)):
        if id(n) not in tile_names:
            _check_read(ctx, path, n, variables, roles, let_names)


def _check_indexing(ctx: OpContext, path, stmt, roles: dict[str, str], kinds: dict[str, str]) -> None:
    for n in (stmt.target, *(x for x in walk(stmt.value) if isinstance(x, Index))):
        if n.base not in roles:
            continue
        if kinds.get(n.base) == "global":
            want = {"flat": (1,), "": (2, GLOBAL_RANK)}.get(n.view, ())
            shown = f"{n.base}.{n.view}[...]" if n.view else f"{n.base}[...]"
            if len(n.indices) not in want:
                ctx.add(path, f"{shown} takes {' or '.join(map(str, want)) or 'no'} indices on a global operand",
                        "op.semantics")
        elif n.view in ("byte", "word"):
            if len(n.indices) != 1:
                ctx.add(path, f"{n.base}.{n.view}[...] takes one index (a {n.view} of the tile's storage)",
                        "op.semantics")
        elif n.view == "flat" or len(n.indices) != 2:
            ctx.add(path, f"{n.base}[...] needs two indices (.flat is for global operands)", "op.semantics")
    free = [i.id for i in stmt.target.indices if isinstance(i, Name)]
    bound = {v for v, _ in stmt.domain}
    if stmt.target.view == "word":
        ctx.add(path, "t.word[k] is read only (write bytes with t.byte[k])", "op.semantics")
    if stmt.target.view == "byte" and any(v not in bound for v in free):
        ctx.add(path, "a statement writing t.byte[k] must bound k with 'for k < N'", "op.semantics")
    if kinds.get(stmt.target.base) == "global" and any(v not in bound for v in free):
        ctx.add(path, "a statement writing global memory must bound every index variable with 'for v < N'",
                "op.semantics")
    if stmt.writes == "tile" and kinds.get(stmt.target.base) == "global":
        ctx.add(path, "writes: tile applies to tile targets only", "op.semantics")


def _check_reductions(ctx: OpContext, path, stmt) -> None:
    """Side-by-side reductions may share a variable (one axis, the same range); a nested one may not."""
    reductions = [n for part in (stmt.value, *stmt.target.indices, *([stmt.where] if stmt.where else []))
                  for n in walk(part) if isinstance(n, Reduce)]
    nested = any(inner is not outer and inner.var == outer.var
                 for outer in reductions for inner in walk(outer.body) if isinstance(inner, Reduce))
    if nested or {r.var for r in reductions} & ({i.id for i in stmt.target.indices if isinstance(i, Name)}
                                                | {v for v, _ in stmt.domain}):
        ctx.add(path, "a reduction variable must not reuse another index variable", "op.semantics")


def _tile_arguments(ctx: OpContext, path, parts, roles: dict[str, str], kinds: dict[str, str]) -> set[int]:
    """The Name nodes standing for a tile operand (``inside(src1, i, j)``); an argument that should and does not
    is a problem."""
    tile_names: set[int] = set()
    for n in (node for part in parts for node in walk(part)):
        if isinstance(n, Call) and n.func in FUNCTIONS:
            for k in FUNCTIONS[n.func].tile_args:
                arg = n.args[k] if k < len(n.args) else None
                if isinstance(arg, Name) and roles.get(arg.id) in ("in", "out", "tmp") \
                        and kinds.get(arg.id) != "global":
                    tile_names.add(id(arg))
                else:
                    ctx.add(path, f"argument {k + 1} of {n.func}() must name a tile operand", "op.semantics")
    return tile_names


def _check_read(ctx: OpContext, path, n, variables: set[str], roles: dict[str, str], let_names: set[str]) -> None:
    isa = ctx.isa
    if isinstance(n, Index):
        if n.base not in roles:
            ctx.add(path, f"semantics read unknown operand {n.base!r}", "op.semantics")
    elif isinstance(n, Reduce) and n.func not in REDUCTIONS:
        ctx.add(path, f"unknown reduction {n.func!r} (known: {', '.join(REDUCTIONS)})", "expr.unknown-function")
    elif isinstance(n, Call) and n.func not in FUNCTIONS:
        ctx.add(path, f"unknown element function {n.func!r}", "expr.unknown-function")
    elif isinstance(n, Call) and FUNCTIONS[n.func].literal_args:
        for k, low, high in FUNCTIONS[n.func].literal_args:
            arg = n.args[k] if k < len(n.args) else None
            if not (isinstance(arg, Num) and type(arg.value) is int and low <= arg.value <= high):
                ctx.add(path, f"argument {k + 1} of {n.func}() must be an integer literal from {low} to {high}",
                        "expr.type")
    elif (isinstance(n, Name) and n.id not in variables and n.id not in let_names
          and roles.get(n.id) not in ("scalar", "attr") and isa.enum_of_value(n.id) is None
          and n.id not in isa.dtypes):
        ctx.add(path, f"unknown name {n.id!r} in semantics", "expr.unknown-name")
    elif isinstance(n, Attr) and n.obj in isa.state and n.obj not in roles:
        if n.name not in isa.state[n.obj].fields:
            ctx.add(path, f"state register {n.obj!r} has no field {n.name!r} (fields: "
                    f"{', '.join(isa.state[n.obj].fields)})", "op.state")
    elif isinstance(n, Attr) and n.obj != "profile" and n.obj not in roles:
        ctx.add(path, f"{n.obj!r} is not an operand", "expr.unknown-name")
