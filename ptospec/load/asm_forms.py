"""A mode's ``asm``: the operands each assembly form lists, and ``asm_tags``."""

from __future__ import annotations

from ..model import AsmForm, Operand
from .context import OpContext


def build_asm_forms(ctx: OpContext, mp: tuple, m: dict, operands: tuple[Operand, ...]) -> dict[str, AsmForm]:
    roles = {o.name: o.role for o in operands}
    kinds = {o.name: o.kind for o in operands}
    for form, f in m["asm"].items():
        for omit in f.get("may_omit", ()):
            if (omit not in f["ins"] and omit not in f["outs"]) or roles.get(omit) != "tmp":
                ctx.add((*mp, "asm", form, "may_omit"), f"may_omit: {omit!r} is not a tmp operand the {form} form "
                        "writes", "op.asm")
    for form, f in m["asm"].items():
        _check_form(ctx, (*mp, "asm", form), form, f, operands, roles, kinds)
    dps = m["asm"]["dps"]
    missing = [o.name for o in operands if not o.is_attr and o.name not in dps["ins"] + dps["outs"]]
    if missing:
        ctx.add((*mp, "asm", "dps"), f"the DPS form must name every operand; missing {missing}", "op.asm")
    return {k: AsmForm(tuple(v["ins"]), tuple(v["outs"]), tuple(v.get("may_omit", ()))) for k, v in m["asm"].items()}


def _check_form(ctx: OpContext, path: tuple, form: str, f: dict, operands: tuple[Operand, ...],
                roles: dict[str, str], kinds: dict[str, str]) -> None:
    for n in f["ins"] + f["outs"]:
        if n not in roles:
            ctx.add(path, f"asm form {form} names unknown operand {n!r}", "op.asm")
    for n in f["outs"]:
        if roles.get(n) != "out":
            ctx.add(path, f"{n!r} is listed in outs but is not an out operand", "op.asm")
    for n in f["ins"]:
        if roles.get(n) == "attr":
            ctx.add(path, f"{n!r} is an attribute: it is printed in the attribute dictionary, not listed in ins",
                    "op.asm")
        if roles.get(n) == "out" and kinds.get(n) != "global":
            ctx.add(path, f"{n!r} is an out operand listed in ins (only a global operand, written in place, may be)",
                    "op.asm")
    left_out = [o.name for o in operands if o.role in ("in", "out", "scalar") and o.name not in f["ins"] + f["outs"]]
    if left_out:
        ctx.add(path, f"asm form {form} leaves out {left_out}: a form may imply only tmp operands (the "
                "implementation allocates them)", "op.asm")
