"""``modes``: each mode of an instruction, built section by section."""

from __future__ import annotations

from ..model import Mode
from .asm_forms import build_asm_forms
from .context import OpContext
from .cpp import build_cpp
from .examples import build_examples
from .operands import build_operands
from .pipes import build_pipe
from .semantics import build_effect, build_semantics, reads_state


def build_modes(ctx: OpContext) -> tuple[Mode, ...]:
    return tuple(build_mode(ctx, name, m) for name, m in ctx.src.data["modes"].items())


def build_mode(ctx: OpContext, name: str, m: dict) -> Mode:
    mp = ("modes", name)
    operands = build_operands(ctx, mp, m)
    asm = build_asm_forms(ctx, mp, m, operands)
    cpp = build_cpp(ctx, mp, m, operands)
    semantics = build_semantics(ctx, mp, m, operands)
    shaping = build_examples(ctx, mp, m, operands)
    return Mode(
        name=name, title=m["title"], operands=operands, semantics=semantics, asm=asm,
        asm_tags=dict(m.get("asm_tags", {})), **cpp, **shaping,
        effect=build_effect(ctx, mp, m),
        reads_state=reads_state(semantics, ctx.isa, {o.name for o in operands}),
        documents=tuple(m.get("documents", ())),
        pipe=build_pipe(ctx, mp, m, operands),
    )
