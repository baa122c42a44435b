"""A mode's ``example`` and ``bases`` (the invocations generated cases start from), and how a case's tiles
are shaped from them."""

from __future__ import annotations

import dataclasses

from .. import attrs
from ..model import CaseShape, Example, Extent, Operand
from .context import OpContext


def build_examples(ctx: OpContext, mp: tuple, m: dict, operands: tuple[Operand, ...]) -> dict:
    """The Mode fields ``example`` and ``bases`` and the case-shaping fields, checked."""
    names = [o.name for o in operands]
    examples: list[Example] = []
    for where in [(*mp, "example"), *((*mp, "bases", k) for k in range(len(m.get("bases", ()))))]:
        ex = m["example"] if where[-1] == "example" else m["bases"][where[-1]]
        if ex["profile"] not in ctx.isa.profiles:
            ctx.add(where, f"unknown profile {ex['profile']!r}", "op.profile")
        if sorted(ex["tiles"]) != sorted(names):
            ctx.add((*where, "tiles"), "an example must give a tile for every operand", "op.example")
        tiles = {n: attrs.spell_value(t) for n, t in ex["tiles"].items()}  # a typed attribute: true, 1
        examples.append(Example(ex["profile"], tiles, ctx.src.line(where), ctx.src.file_of(where)))
    worked = None
    if "worked" in m:
        where = (*mp, "worked")
        ex = m["worked"]
        if ex["profile"] not in ctx.isa.profiles:
            ctx.add(where, f"unknown profile {ex['profile']!r}", "op.profile")
        if sorted(ex["tiles"]) != sorted(names):
            ctx.add((*where, "tiles"), "a worked example must give a tile for every operand", "op.example")
        worked = Example(ex["profile"], {n: attrs.spell_value(t) for n, t in ex["tiles"].items()},
                         ctx.src.line(where), ctx.src.file_of(where))
    return dict(example=examples[0], bases=tuple(examples[1:]), worked=worked,
                shapes=build_shapes(ctx, mp, m.get("shapes", {}), operands))


def build_shapes(ctx: OpContext, mp: tuple, given: str | dict, operands: tuple[Operand, ...]) -> dict[str, CaseShape]:
    """The mode's ``shapes``: operand -> how generated cases shape it from the example (``share`` alone: every
    tile operand keeps the example's share of the region). Only tile operands have a shape."""
    tiles = [o.name for o in operands if o.role in ("in", "out", "tmp") and o.kind != "global"]
    if given == "share":
        return {n: CaseShape(Extent("share"), Extent("share")) for n in tiles}
    out: dict[str, CaseShape] = {}
    for name, rule in given.items():
        if name not in tiles:
            what = "no operand of the mode" if all(o.name != name for o in operands) else "not a tile operand"
            ctx.add((*mp, "shapes", name), f"shapes: {name!r} is {what}", "op.operand")
            continue
        if rule == "fixed":
            out[name] = CaseShape(fixed=True)
        elif rule == "share":
            out[name] = CaseShape(Extent("share"), Extent("share"))
        else:
            out[name] = CaseShape(*(_extent(term) for term in rule))
    for o in operands:  # a tile holding values of another type counts its columns in them
        if o.stores and o.name in tiles:
            out[o.name] = dataclasses.replace(out.get(o.name, CaseShape()), stores=o.stores)
    return out


def _extent(term: str) -> Extent:
    """``rows``, ``cols/2``, ``inner/32``, ``one``, ``share`` (the schema checked the spelling)."""
    base, _, over = term.partition("/")
    return Extent(base, int(over) if over else 1)
