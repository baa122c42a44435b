"""``rules``: an instruction's location, layout and check rules, each over the operands of its modes."""

from __future__ import annotations

from ..model import Mode, Rule
from .context import OpContext
from .names import lets, phase, referenced_tiles


def build_rules(ctx: OpContext, modes: tuple[Mode, ...]) -> tuple[Rule, ...]:
    by_mode = {m.name: m for m in modes}
    rules: list[Rule] = []
    seen_ids: dict[str, int] = {}
    for i, r in enumerate(ctx.src.data["rules"]):
        rp = ("rules", i)
        if r["id"] in seen_ids:
            ctx.add(rp, f"rule id {r['id']!r} is used twice (first at line {seen_ids[r['id']]})", "op.rule-id")
        seen_ids[r["id"]] = ctx.src.line(rp)
        rules.append(_rule(ctx, rp, r, by_mode))
    return tuple(rules)


def _rule(ctx: OpContext, rp: tuple, r: dict, by_mode: dict[str, Mode]) -> Rule:
    isa = ctx.isa
    ctx.check_sources(rp, r["sources"])
    kind = r.get("kind", "check")
    rprofiles = tuple(r.get("profiles", isa.profiles))
    for p in rprofiles:
        if p not in isa.profiles:
            ctx.add(rp, f"unknown profile {p!r}", "op.profile")
    rmodes = tuple(r.get("modes", list(by_mode)))
    for mn in rmodes:
        if mn not in by_mode:
            ctx.add(rp, f"unknown mode {mn!r}", "op.mode")
    rule_lets = lets(ctx.src, (*rp, "let"), r.get("let", {}), ctx.issues)
    check = ctx.parse((*rp, "check"), r["check"]) if kind == "check" else None
    when = ctx.parse((*rp, "when"), r["when"]) if "when" in r else None
    allow = tuple(r.get("allow", ()))
    _check_allow(ctx, rp, kind, allow)
    operands: tuple[str, ...] = tuple(r.get("operands", ()))
    if kind == "check" and not operands:
        referenced = referenced_tiles([n for n in (check, when) if n] + [n for _, n, _ in rule_lets + ctx.lets])
        operands = tuple(n for n in referenced if any(n in [o.name for o in by_mode[m].operands]
                                                      for m in rmodes if m in by_mode))
    for mn in (mn for mn in rmodes if mn in by_mode):
        mode_ops = {o.name for o in by_mode[mn].operands}
        for n in operands:
            if n not in mode_ops:
                ctx.add(rp, f"operand {n!r} does not exist in mode {mn}", "op.rule")
        names_ok = mode_ops | ctx.let_names | {x for x, _, _ in rule_lets} | set(by_mode[mn].type_vars)
        tiles = {o.name: o.kind for o in by_mode[mn].operands if o.role in ("in", "out", "tmp")}
        for node in (check, when, *(n for _, n, _ in rule_lets)):
            if node is not None:
                ctx.check_names(rp, node, names_ok, tiles=tiles)
    return Rule(
        id=r["id"], kind=kind, operands=operands, allow=allow, check=check, check_text=r.get("check", ""),
        when=when, when_text=r.get("when", ""), let=rule_lets, profiles=rprofiles, modes=rmodes,
        phase=phase([n for n in (check, when) if n is not None], rule_lets + ctx.lets),
        message=r.get("message") or _default_message(kind, operands, allow), sources=tuple(r["sources"]),
        line=ctx.src.line(rp), file=ctx.src.file_of(rp),
    )


def _check_allow(ctx: OpContext, rp: tuple, kind: str, allow: tuple[str, ...]) -> None:
    isa = ctx.isa
    if kind == "loc":
        for a in allow:
            if a not in isa.tile_types:
                ctx.add(rp, f"unknown tile type {a!r}", "op.rule")
    if kind == "layout":
        for a in allow:
            if a not in isa.layouts and a not in isa.global_layouts:
                known = ", ".join((*isa.layouts, *isa.global_layouts))
                ctx.add(rp, f"unknown layout {a!r} (known: {known})", "op.rule")


def _default_message(kind: str, operands, allow) -> dict[str, str]:
    ops = ", ".join(operands)
    if kind == "loc":
        return {"en": f"{ops} must be a {' or '.join(allow)} tile", "zh": f"{ops} 必须为 {' 或 '.join(allow)} Tile"}
    return {"en": f"{ops} must use layout {' or '.join(allow)}", "zh": f"{ops} 必须使用 {' 或 '.join(allow)} 布局"}
