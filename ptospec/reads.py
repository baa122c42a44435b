"""Which (operand, field) pairs the verdict of each check of a mode depends on, read from its expressions.

A rule reading only ``src.cols`` gets the same verdict for every invocation with the same ``src.cols``: the
case search skips candidates that change nothing a rule reads, and the validator remembers verdicts by the
values a rule reads (``validator.judge``).
"""

from __future__ import annotations

from .expr.ast import Attr, Index, Name, Node, walk
from .model import Database, Mode, OpSpec

ANY = "*"  # a rule that reads a whole tile (or its elements): any change of that operand may matter
LAYOUT_FIELDS = ("blayout", "slayout")
Read = tuple[str, str]  # (operand, descriptor field); "value" for attributes


def expression_reads(nodes: list[Node], lets: dict[str, list[Node]], tiles: set[str],
                     type_users: dict[str, tuple[str, ...]], attrs: set[str]) -> set[Read]:
    """The (operand, field) pairs the expressions (and the ``let`` values they use) read."""
    out: set[Read] = set()
    todo, seen = list(nodes), set()
    while todo:
        for n in walk(todo.pop()):
            if isinstance(n, Attr) and n.obj != "profile":
                out.update((n.obj, f) for f in (LAYOUT_FIELDS if n.name == "layout" else (n.name,)))
            elif isinstance(n, Index):
                out.add((n.base, ANY))
            elif isinstance(n, Name):
                if n.id in lets and n.id not in seen:
                    seen.add(n.id)
                    todo.extend(lets[n.id])
                if n.id in tiles:
                    out.add((n.id, ANY))
                out.update((u, "dtype") for u in type_users.get(n.id, ()))
                if n.id in attrs:
                    out.add((n.id, "value"))
    return out


_READS: list[tuple[Database, dict[tuple[str, str], dict[str, frozenset[Read]]]]] = []  # the last database's


def rule_reads(db: Database, op: OpSpec, mode: Mode) -> dict[str, frozenset[Read]]:
    """Rule id -> the (operand, field) pairs its verdict depends on, for every rule ``validate`` can report
    on a well-formed invocation of ``mode`` (the op's rules, the tile rules, the dtype checks).  Rules sharing
    an id share the union of their reads."""
    if not _READS or _READS[0][0] is not db:
        _READS[:] = [(db, {})]
    memo = _READS[0][1]
    if (op.name, mode.name) in memo:
        return memo[op.name, mode.name]
    tiles = {o.name for o in mode.operands if not o.is_attr}
    attrs = {o.name for o in mode.attrs}
    type_users = {v: tuple(o.name for o in mode.operands if o.dtype == v) for v in mode.type_vars}
    reads: dict[str, set[Read]] = {}
    for var, users in type_users.items():
        reads[f"dtype.{var.lower()}"] = {(o, "dtype") for o in tiles}  # the table judges the whole binding
        reads[f"dtype.same-{var.lower()}"] = {(u, "dtype") for u in users}
    views_ = {o.name for o in mode.operands if o.is_global}
    for var, group, isa_rules in (("t", tiles - views_, db.isa.tile_rules), ("g", views_, db.isa.global_rules)):
        for rule in isa_rules:
            nodes = [n for n in (rule.check, rule.when) if n is not None]
            fields = {f for _, f in expression_reads(nodes, {}, {var}, {}, set())}
            reads.setdefault(rule.id, set()).update((o, f) for o in group for f in fields)
    op_lets = [(name, node) for name, node, _ in op.let]
    for rule in op.rules:
        if rule.kind == "loc":
            found = {(o, "loc") for o in rule.operands}
        elif rule.kind == "layout":
            found = {(o, f) for o in rule.operands for f in LAYOUT_FIELDS}
        else:
            nodes = [n for n in (rule.check, rule.when) if n is not None] + [node for _, node, _ in rule.let]
            lets: dict[str, list[Node]] = {}
            for name, node in [*op_lets, *((name, node) for name, node, _ in rule.let)]:
                lets.setdefault(name, []).append(node)
            found = expression_reads(nodes, lets, tiles, type_users, attrs)
        reads.setdefault(rule.id, set()).update(found)
    result = {rid: frozenset(r) for rid, r in reads.items()}
    memo[op.name, mode.name] = result
    return result
