"""The global layout of a tensor view, inferred as the assembler infers it (``layout_inference`` of
specs/program.yaml): from the view's shape and strides, and for a shape both ND and DN fit, from the Vec
tiles that TLOAD and TSTORE move between its partitions and on-chip memory."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..asm.views import global_layout
from ..expr.evaluate import Scope, evaluate
from ..model import Database, Isa
from .errors import ProgramError, SourcePos
from .spec import LayoutInference

_LAYOUT_ATTRIBUTE = re.compile(r"^#pto\.layout<\s*([a-z0-9_]+)\s*>$")


def spelled_layout(isa: Isa, spelled: str, pos: SourcePos) -> str:
    """The global layout a ``#pto.layout<nz>`` attribute names (of a view or of an instruction's line)."""
    m = _LAYOUT_ATTRIBUTE.match(spelled)
    name = global_layout(isa, m.group(1)) if m else None
    if name is None:
        raise ProgramError(f"unknown layout {spelled}", "program.layout", pos)
    return name


@dataclass(frozen=True)
class Inferred:
    layout: str | None  # None: the shape or a stride is not a constant (the fallback holds)
    ambiguous: bool  # every `ambiguous` layout matched
    consumer_decides: bool  # ... and the consumers' tiles decide


def right_aligned(rule: LayoutInference, shape: list[int], strides: list[int]) -> dict[str, int] | None:
    """d0.. and s0..: the shape and strides padded on the left to ``rule.dims`` dimensions (None: too many)."""
    n = rule.dims
    if len(shape) != len(strides) or not 0 < len(shape) <= n:
        return None
    pad = n - len(shape)
    d = [1] * pad + list(shape)
    s = [1] * pad + list(strides)
    for i in range(pad - 1, -1, -1):
        s[i] = d[i + 1] * s[i + 1]
    return {**{f"d{k}": v for k, v in enumerate(d)}, **{f"s{k}": v for k, v in enumerate(s)}}


def infer(db: Database, rule: LayoutInference, shape: list, strides: list, elem_bytes: int) -> Inferred:
    """The layout the shape and strides give (ties not yet broken by consumers)."""
    if not all(isinstance(v, int) for v in (*shape, *strides)):
        return Inferred(None, False, False)
    values = right_aligned(rule, shape, strides)
    if values is None:
        return Inferred(None, False, False)
    values["elem_bytes"] = elem_bytes

    def holds(node) -> bool:
        return bool(evaluate(node, Scope(isa=db.isa, values=dict(values))))

    if not holds(rule.applies):
        return Inferred(rule.fallback, False, False)
    matched = [name for name, node in rule.match if holds(node)]
    if not matched:
        return Inferred(rule.fallback, False, False)
    if matched[0] in rule.ambiguous and rule.ambiguous <= set(matched):
        decides = holds(rule.consumer_decides)
        tie = next((name for name, node in rule.tie if holds(node)), rule.fallback)
        return Inferred(tie, True, decides)
    return Inferred(matched[0], False, False)


def consumer_layout(rule: LayoutInference, tile) -> str | None:
    """The layout a consumer's tile prefers (a Vec tile of a row- or column-major layout), else None."""
    if tile is None or getattr(tile, "loc", None) != rule.consumer_location:
        return None
    return rule.consumer_layouts.get(tile.blayout)
