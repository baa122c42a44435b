"""Compare a program's reference run with its replay on the CPU simulator: step by step (what each
executed instruction wrote), then the final global buffers, each differing element with the instruction
(file:line:col) that wrote it.

Elements count as equal as in the conformance suites (``conformance.compare.mismatches``: exact for
integers, floats exactly or within a tolerance).  A difference an instruction makes within its tolerance
is carried on by the ones after it (a store copies it), so a float output is compared with the loosest
tolerance any instruction run so far gave its dtype (and -0 equals +0 once an instruction that leaves the
sign of a zero unspecified has run); a kernel of exact instructions is compared bit for bit.  Tiles are
compared in their valid region and wherever the semantics wrote (a load's padding); views and buffers
element by element.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..conformance.compare import mismatches
from ..model import Database, Numerics, Tolerance
from ..tile import GlobalDesc
from .cpusim import SimResult
from .trace import Step, Trace, footprint

_SIGNED = ("preserved", "exact")  # signed_zero values under which -0 and +0 differ
MAX_LISTED = 10  # differing elements listed per output


@dataclass(frozen=True)
class Difference:
    """One output of one step (or one final buffer) that differs."""

    where: str  # file:line:col and statement of the instruction
    output: str
    differing: int
    compared: int
    listed: tuple[str, ...]  # the first differing elements: index, reference, simulator (and writer)


@dataclass
class Comparison:
    steps: int = 0  # instruction steps compared
    elements: int = 0  # output elements compared over all steps
    step_differences: list[Difference] = field(default_factory=list)
    first_step: int | None = None  # index of the first step whose output differs
    buffers: int = 0
    buffer_elements: int = 0
    buffer_differences: list[Difference] = field(default_factory=list)
    stopped: str | None = None

    @property
    def same(self) -> bool:
        return not self.step_differences and not self.buffer_differences and self.stopped is None


def _value(arr: np.ndarray, at) -> str:
    v = arr[at]
    return repr(v.item()) if hasattr(v, "item") else repr(v)


class _Tolerances:
    """The loosest tolerance per dtype of the instructions run so far, and whether any of them leaves the
    sign of a zero unspecified."""

    def __init__(self) -> None:
        self.loosest: dict[str, Tolerance] = {}
        self.any_zero = False

    def numerics(self, db: Database, step: Step, profile: str) -> Numerics:
        own = db.op(step.op).numerics.on(profile)
        for dtype, tol in own.tolerance.items():
            was = self.loosest.get(dtype)
            self.loosest[dtype] = tol if was is None else Tolerance(max(was.rtol, tol.rtol), max(was.atol, tol.atol))
        self.any_zero |= own.signed_zero not in _SIGNED
        return replace(own, tolerance=dict(self.loosest),
                       signed_zero="unspecified" if self.any_zero else own.signed_zero)


def compare(db: Database, trace: Trace, sim: SimResult) -> Comparison:
    """Every step the simulator completed, then (when it finished) every global buffer."""
    out = Comparison(stopped=sim.stopped)
    writers = [np.full(b.size, -1, np.int64) for b in trace.initial]
    tolerances = _Tolerances()
    used: dict[int, Numerics] = {}  # step -> the numerics its outputs were compared with
    for step, got in zip(trace.steps, sim.outputs, strict=False):
        if step.kind != "instruction":
            continue
        out.steps += 1
        numerics = used[step.index] = tolerances.numerics(db, step, trace.profile)
        descs = {o.name: o for o in step.operands}
        for name, want in step.outputs.items():
            operand = descs[name]
            inside = step.inside[name]
            bad = mismatches(want, got[name], operand.desc.dtype, numerics) & inside
            out.elements += int(inside.sum())
            if isinstance(operand.desc, GlobalDesc):
                writers[operand.buffer][footprint(operand.desc)] = step.index
            count = int(bad.sum())
            if not count:
                continue
            if out.first_step is None:
                out.first_step = step.index
            listed = []
            for at in list(zip(*np.nonzero(bad), strict=True))[:MAX_LISTED]:
                if isinstance(operand.desc, GlobalDesc):
                    flat = int(footprint(operand.desc)[at[0]])
                    index = f"{trace.buffers[operand.buffer].name} element {flat}"
                else:
                    index = f"{name}[{', '.join(str(int(k)) for k in at)}]"
                listed.append(f"{index}: reference {_value(want, at)}, simulator {_value(got[name], at)}")
            out.step_differences.append(Difference(step.where(), name, count, int(inside.sum()), tuple(listed)))
    if sim.stopped is not None or not sim.buffers:
        return out
    for k, (buf, final) in enumerate(zip(trace.buffers, sim.buffers, strict=True)):
        want = buf.array
        out.buffers += 1
        out.buffer_elements += want.size
        bad = np.zeros(want.size, bool)
        writer = writers[k]
        for w in np.unique(writer):
            sel = writer == w
            if w < 0:  # written by no instruction: must be the input, bit for bit
                bad[sel] = want.view(f"u{want.itemsize}")[sel] != final.view(f"u{final.itemsize}")[sel]
            else:
                bad[sel] = mismatches(want[sel], final[sel], buf.dtype, used[int(w)])
        count = int(bad.sum())
        if not count:
            continue
        listed = []
        shape = buf.shape or (want.size,)
        for flat in np.flatnonzero(bad)[:MAX_LISTED]:
            at = ", ".join(str(int(i)) for i in np.unravel_index(int(flat), shape))
            w = int(writer[flat])
            by = f"written by {trace.steps[w].where()}" if w >= 0 else "written by no instruction of the reference"
            listed.append(f"{buf.name}[{at}]: reference {_value(want, flat)}, simulator {_value(final, flat)} ({by})")
        out.buffer_differences.append(Difference("", buf.name, count, want.size, tuple(listed)))
    return out


def report_lines(c: Comparison, max_steps: int = 5) -> list[str]:
    """The comparison as the CLI prints it."""
    lines = []
    if c.stopped:
        lines.append(c.stopped)
    if c.step_differences:
        first = c.step_differences[0]
        lines.append(f"first difference: step {c.first_step}, {first.where}: {first.output}: {first.differing} of "
                     f"{first.compared} element(s) differ")
        lines += [f"  {item}" for item in first.listed]
        if first.differing > len(first.listed):
            lines.append(f"  ... and {first.differing - len(first.listed)} more")
        rest = c.step_differences[1:]
        if rest:
            lines.append(f"{len(rest)} later output(s) differ too (differences carry over from step to step):")
            for d in rest[:max_steps]:
                lines.append(f"  {d.where}: {d.output}: {d.differing} of {d.compared}")
            if len(rest) > max_steps:
                lines.append(f"  ... and {len(rest) - max_steps} more")
    for d in c.buffer_differences:
        lines.append(f"final {d.output}: {d.differing} of {d.compared} element(s) differ")
        lines += [f"  {item}" for item in d.listed]
        if d.differing > len(d.listed):
            lines.append(f"  ... and {d.differing - len(d.listed)} more")
    verdict = "same" if c.same else "DIFFERENT"
    lines.append(f"{verdict}: {c.steps} step(s), {c.elements} output element(s) compared, "
                 f"{len(c.step_differences)} differing; {c.buffers} final buffer(s), {c.buffer_elements} element(s), "
                 f"{sum(d.differing for d in c.buffer_differences)} differing")
    return lines
