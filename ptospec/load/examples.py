"""A mode's ``example`` and ``bases`` (the invocations generated cases start from), and how a case's tiles
are shaped from them."""

from __future__ import annotations

from .. import attrs
from ..model import Example, Operand
from .context import OpContext


def build_examples(ctx: OpContext, mp: tuple, m: dict, operands: tuple[Operand, ...]) -> dict:
    """The Mode fields ``example`` and ``bases`` and the case-shaping fields, checked."""
    roles = {o.name: o.role for o in operands}
    kinds = {o.name: o.kind for o in operands}
    names = [o.name for o in operands]
    for key in ("scaled_valid", "fixed_shape"):
        for n in m.get(key, ()):
            if roles.get(n) not in ("in", "out", "tmp") or kinds.get(n) == "global":
                ctx.add((*mp, key), f"{key}: {n!r} is not a tile operand", "op.operands")
    examples: list[Example] = []
    for where in [(*mp, "example"), *((*mp, "bases", k) for k in range(len(m.get("bases", ()))))]:
        ex = m["example"] if where[-1] == "example" else m["bases"][where[-1]]
        if ex["profile"] not in ctx.isa.profiles:
            ctx.add(where, f"unknown profile {ex['profile']!r}", "op.profile")
        if sorted(ex["tiles"]) != sorted(names):
            ctx.add((*where, "tiles"), "an example must give a tile for every operand", "op.example")
        tiles = {n: attrs.spell_value(t) for n, t in ex["tiles"].items()}  # a typed attribute: true, 1
        examples.append(Example(ex["profile"], tiles, ctx.src.line(where), ctx.src.file_of(where),
                                ex.get("valid", "target")))
    worked = None
    if "worked" in m:
        where = (*mp, "worked")
        ex = m["worked"]
        if ex["profile"] not in ctx.isa.profiles:
            ctx.add(where, f"unknown profile {ex['profile']!r}", "op.profile")
        if sorted(ex["tiles"]) != sorted(names):
            ctx.add((*where, "tiles"), "a worked example must give a tile for every operand", "op.example")
        worked = Example(ex["profile"], {n: attrs.spell_value(t) for n, t in ex["tiles"].items()},
                         ctx.src.line(where), ctx.src.file_of(where), ex.get("valid", "target"))
    for axed in m.get("valid_axes", {}):
        if axed not in names:
            ctx.add((*mp, "valid_axes", axed), f"{axed!r} is no operand of the mode", "op.operand")
    for divided in m.get("valid_divisors", {}):
        if divided not in names:
            ctx.add((*mp, "valid_divisors", divided), f"{divided!r} is no operand of the mode", "op.operand")
    return dict(
        example=examples[0], bases=tuple(examples[1:]), worked=worked, scaled_valid=tuple(m.get("scaled_valid", ())),
        fixed_shape=tuple(m.get("fixed_shape", ())),
        valid_divisors={k: (v[0], v[1]) for k, v in m.get("valid_divisors", {}).items()},
        case_shapes=m.get("case_shapes", "shared"),
        valid_axes={k: (v[0], v[1]) for k, v in m.get("valid_axes", {}).items()},
    )
