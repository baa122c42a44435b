"""What no single spec file can tell: checks across the loaded instructions and the ISA."""

from __future__ import annotations

from ..errors import SpecError
from ..model import Isa, OpSpec

TILE_OPS_DIR = "docs/isa/tile/ops/"


def op_page(op: OpSpec) -> str | None:
    """The upstream tile-op page an instruction documents: its source ``page`` when that is one."""
    source = op.sources.get("page")
    if source is not None and source.kind == "doc" and source.ref.startswith(TILE_OPS_DIR):
        return source.ref
    return None


def check_unimplemented(isa: Isa, ops: list[OpSpec]) -> list[SpecError]:
    """A page recorded as describing nothing implemented must not be the page of an instruction."""
    by_page = {op_page(op): op.name for op in ops}
    return [SpecError(f"{entry.page} is recorded as unimplemented, but it is the page of {by_page[entry.page]}",
                      where=entry.where, rule="isa.unimplemented-page")
            for entry in isa.unimplemented_pages if entry.page in by_page]


def check_mnemonics(ops: list[OpSpec]) -> list[SpecError]:
    """Assembly names one instruction per mnemonic: none repeats another op's name or mnemonic."""
    seen: dict[str, str] = {op.name: op.name for op in ops}
    problems = []
    for op in ops:
        if op.mnemonic == op.name:
            continue
        if op.mnemonic in seen:
            problems.append(SpecError(f"mnemonic {op.mnemonic!r} of {op.name} is already {seen[op.mnemonic]}'s",
                                      where=op.file, rule="op.mnemonic"))
        seen[op.mnemonic] = op.name
    return problems


def crosschecks(isa: Isa, ops: list[OpSpec]) -> list[SpecError]:
    """Every check across files."""
    return [*check_unimplemented(isa, ops), *check_mnemonics(ops)]
