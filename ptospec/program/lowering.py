"""Instructions the assembler emits as a sequence of others on some profiles (``lowerings`` of
specs/program.yaml: TADDC as two TADDs on the NPU targets): each step is checked and run as the database
instruction it is, on the original line's operands."""

from __future__ import annotations

from ..asm.forms import print_form
from ..errors import PtospecError
from .errors import ProgramError
from .spec import LoweringStep
from .syntax import Operation
from .walker import Finding, Walker


def run_lowered(w: Walker, op: Operation, name: str, steps: tuple[LoweringStep, ...]) -> None:
    """Check and run ``op`` (instruction ``name``) as its steps, in order."""
    try:
        line = w.parsed(op)
    except ProgramError as exc:
        if not w.checking:
            raise
        w.stats.instructions += 1
        w.findings.append(Finding(op.pos, exc.rule, exc.message, "violation"))
        return
    if op.results:
        raise ProgramError(f"{name} in its SSA form (a result) is not read on {w.profile}, where the assembler "
                           "lowers it to several instructions: write it with outs(...)", "program.unsupported", op.pos)
    for k, step in enumerate(steps):
        spec = w.db.ops[step.op]
        mode = spec.mode(step.mode)
        tiles = {mine: line.operands[theirs] for mine, theirs in step.operands}
        names = {mine: line.values[theirs] for mine, theirs in step.operands}
        try:
            text = print_form(w.db, spec, mode, "dps", tiles, names)
        except PtospecError as exc:
            raise ProgramError(f"{name}: step {k + 1} ({spec.name}) cannot be formed: {exc.message}",
                               exc.rule or "program.lowering", op.pos) from None
        w.instruction(op, spec.name, text=text, mode=mode.name, step=k,
                      label=f"{name} (step {k + 1} of {len(steps)}: {spec.name}, as the assembler lowers it "
                      f"on {w.profile})")


def handlers(db, spec) -> dict:
    """A handler per instruction some profile lowers (``spec.lowerings``): its steps on those profiles, the
    instruction itself elsewhere; and per dialect mnemonic of one mode (``spec.mnemonics``): that mode."""
    table = {}
    for name, (profiles, steps) in spec.lowerings.items():
        def handle(w: Walker, op: Operation, name: str = name, profiles=profiles, steps=steps) -> None:
            if w.profile in profiles:  # the assembler emits other instructions for it on this profile
                run_lowered(w, op, name, steps)
            else:
                w.database_instruction(op, w.db.ops[name])
        table[f"pto.{db.ops[name].mnemonic}"] = handle
    for alias, (name, mode) in spec.mnemonics.items():
        def read_as(w: Walker, op: Operation, name: str = name, mode: str = mode, alias: str = alias) -> None:
            # the respelled line is needed once: a statement run again (a loop) is parsed already
            text = None if id(op) in w.memo.parsed else \
                w.line_text(op).replace(alias, f"pto.{w.db.ops[name].mnemonic}", 1)
            w.instruction(op, name, text=text, mode=mode)
        table[alias] = read_as
    return table
