"""Every upstream page and simulator instruction accounted for: ``ptospec list --upstream PATH``.

A page ``docs/isa/tile/ops/<family>/<stem>.md`` of an upstream checkout (Chinese ``*_zh.md`` copies
aside) is *covered* when an instruction names it as its ``page`` source, or when it documents an
instruction of the program layer (``specs/program.yaml``: the page's stem with ``-`` read as ``_``
names an instruction or a synchronisation instruction there); it is *unimplemented* when
``unimplemented_pages`` in ``specs/isa.yaml`` records it; otherwise it is *missing*.

The same holds for the two lists of upstream instruction names: the legacy pages ``docs/isa/<NAME>.md``
and the simulator's public instructions (the ``PTO_INST`` functions of ``pto_instr.hpp``).  A name is
covered by the instruction whose mode calls it (``cpp.name``) or names it in ``documents``, or by the
program-layer instruction whose ``intrinsic`` it is; it is recorded when ``unspecified`` in
``specs/isa.yaml`` names it (with the reason); otherwise it is missing.  The instruction sets of
``separate_isas`` (communication) are accounted for as a whole.  Entries of the database that name a
page, file or instruction the checkout does not have are *stale*.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InvocationError
from .load.crosschecks import TILE_OPS_DIR, op_page
from .model import Database, SeparateIsa

LEGACY_DIR = "docs/isa/"  # the legacy instruction pages: docs/isa/<NAME>.md
INSTR_HEADER = "include/pto/common/pto_instr.hpp"  # the simulator's public instructions (PTO_INST functions)
_PTO_INST = re.compile(r"^\s*PTO_INST\b[^(;{]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(", re.M)


@dataclass(frozen=True)
class FamilyAccount:
    family: str
    pages: tuple[str, ...]  # stems of the family's English pages, sorted
    ops: dict[str, str] = field(default_factory=dict)  # stem -> the instruction whose page it is
    program: dict[str, str] = field(default_factory=dict)  # stem -> the program-layer instruction
    unimplemented: dict[str, str] = field(default_factory=dict)  # stem -> the name the record gives

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(s for s in self.pages if s not in self.ops and s not in self.program
                     and s not in self.unimplemented)


@dataclass(frozen=True)
class NameAccount:
    """Upstream instruction names of one list (legacy pages, simulator instructions), each accounted for."""

    title: str
    names: tuple[str, ...]  # as upstream spells them, sorted
    covered: dict[str, str] = field(default_factory=dict)  # name -> what specifies it ("tmatmul", "tassign (program)")
    recorded: dict[str, str] = field(default_factory=dict)  # name -> the isa.yaml list recording it

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(n for n in self.names if n not in self.covered and n not in self.recorded)


@dataclass(frozen=True)
class SeparateAccount:
    """An instruction set of ``separate_isas`` as the checkout has it."""

    isa: SeparateIsa
    pages: tuple[str, ...]  # stems of its English pages
    instructions: tuple[str, ...]  # the PTO_INST functions of its header


@dataclass(frozen=True)
class Accounting:
    families: tuple[FamilyAccount, ...]
    stale: tuple[str, ...]  # "<what> names <page>, which the checkout does not have"
    without_page: dict[str, str]  # instruction -> its page source outside docs/isa/tile/ops/ ("" for none)
    lists: tuple[NameAccount, ...] = ()  # the legacy pages, the simulator's instructions
    separate: tuple[SeparateAccount, ...] = ()

    @property
    def pages(self) -> int:
        return sum(len(f.pages) for f in self.families)

    @property
    def missing(self) -> int:
        return sum(len(f.missing) for f in self.families) + sum(len(n.missing) for n in self.lists)


def upstream_pages(root: Path) -> dict[str, tuple[str, ...]]:
    """family -> stems of its English pages in the checkout at ``root``."""
    tree = root / TILE_OPS_DIR
    if not tree.is_dir():
        raise InvocationError(f"{root} has no {TILE_OPS_DIR} (not a pto-isa checkout?)", rule="cli.upstream",
                              where="--upstream")
    return {d.name: tuple(sorted(p.stem for p in d.glob("*.md") if not p.stem.endswith("_zh")))
            for d in sorted(tree.iterdir()) if d.is_dir()}


def legacy_pages(root: Path) -> tuple[str, ...]:
    """Stems of the legacy instruction pages ``docs/isa/<NAME>.md`` (upper-case first letter, no README)."""
    return tuple(sorted(p.stem for p in (root / LEGACY_DIR).glob("*.md")
                        if p.stem[:1].isupper() and not p.stem.endswith("_zh") and p.stem != "README"))


def pto_instructions(header: Path) -> tuple[str, ...]:
    """The names of the ``PTO_INST`` functions a header declares, sorted."""
    return tuple(sorted({m.group(1) for m in _PTO_INST.finditer(header.read_text(errors="replace"))}))


def specifiers(db: Database, intrinsics: dict[str, str]) -> dict[str, str]:
    """Upper-cased upstream instruction name -> what specifies it: an instruction (with its mode when its
    modes call different intrinsics) by ``cpp.name`` or ``documents``, or a program-layer instruction
    (``intrinsics``: program instruction -> the upstream name it specifies)."""
    found: dict[str, str] = {}
    for op in sorted(db.ops.values(), key=lambda o: o.name):
        several = len({m.cpp_name for m in op.modes}) > 1
        for m in op.modes:
            label = f"{op.name}:{m.name}" if several else op.name
            found.setdefault(m.cpp_name.upper(), label)
            for name in m.documents:
                found.setdefault(name.upper(), f"{op.name}:{m.name}" if len(op.modes) > 1 else op.name)
    for name, intrinsic in sorted(intrinsics.items()):
        found.setdefault(intrinsic.upper(), f"{name} (program)")
    return found


def _names_account(title: str, names: tuple[str, ...], by: dict[str, str], recorded: dict[str, str]) -> NameAccount:
    return NameAccount(title, names, {n: by[n.upper()] for n in names if n.upper() in by},
                       {n: recorded[n.upper()] for n in names if n.upper() not in by and n.upper() in recorded})


def account(db: Database, program_names: set[str], root: Path,
            intrinsics: dict[str, str] | None = None) -> Accounting:
    """Relate every page and public instruction of the checkout at ``root`` to the database;
    ``program_names`` are the program layer's instruction names (``alloc_tile``, ``tsync``, ...), and
    ``intrinsics`` maps those that specify an upstream instruction to its name (``tassign``: TASSIGN)."""
    tree = upstream_pages(root)
    page_ops = {page: op.name for op in db.ops.values() if (page := op_page(op)) is not None}
    recorded = {entry.page: entry.name for entry in db.isa.unimplemented_pages}
    families = []
    for family, stems in tree.items():
        def path(stem: str, family: str = family) -> str:
            return f"{TILE_OPS_DIR}{family}/{stem}.md"

        families.append(FamilyAccount(
            family, stems,
            ops={s: page_ops[path(s)] for s in stems if path(s) in page_ops},
            program={s: s.replace("-", "_") for s in stems
                     if path(s) not in page_ops and s.replace("-", "_") in program_names},
            unimplemented={s: recorded[path(s)] for s in stems if path(s) in recorded}))
    present = {f"{TILE_OPS_DIR}{family}/{stem}.md" for family, stems in tree.items() for stem in stems}
    stale = [f"{name} names {page}" for page, name in sorted(page_ops.items()) if page not in present]
    stale += [f"unimplemented_pages records {page}" for page in sorted(recorded) if page not in present]
    without = {op.name: (op.sources["page"].ref if "page" in op.sources else "")
               for op in sorted(db.ops.values(), key=lambda o: o.name) if op_page(op) is None}
    lists, separate = _instruction_lists(db, root, intrinsics or {}, stale)
    return Accounting(tuple(families), tuple(stale), without, lists, separate)


def _instruction_lists(db: Database, root: Path, intrinsics: dict[str, str],
                       stale: list[str]) -> tuple[tuple[NameAccount, ...], tuple[SeparateAccount, ...]]:
    """The legacy pages and the simulator's instructions accounted for, and the separate instruction sets;
    appends to ``stale`` what the database names and the checkout lacks."""
    header = root / INSTR_HEADER
    if not header.is_file():
        raise InvocationError(f"{root} has no {INSTR_HEADER} (not a pto-isa checkout?)", rule="cli.upstream",
                              where="--upstream")
    instructions = pto_instructions(header)
    pages = legacy_pages(root)
    by = specifiers(db, intrinsics)
    recorded = {name.upper(): "unspecified" for _, name, _ in db.isa.unspecified}
    recorded |= {page.removeprefix(LEGACY_DIR).removesuffix(".md").upper(): "unspecified"
                 for page, _, _ in db.isa.unspecified if page.count("/") == 2}
    known = {n.upper() for n in (*instructions, *pages)}
    stale += [f"{label} specifies {name}" for name, label in sorted(by.items()) if name not in known]
    stale += [f"unspecified records {page}" for page, _, _ in db.isa.unspecified if not (root / page).is_file()]
    lists = (_names_account(f"legacy pages under {root / LEGACY_DIR}", pages, by, recorded),
             _names_account(f"simulator instructions (PTO_INST functions of {header})", instructions, by, recorded))
    separate = []
    for isa in db.isa.separate_isas:
        for path in (isa.pages, isa.header, *isa.simulator):
            if not (root / path).exists():
                stale.append(f"separate_isas {isa.name} names {path}")
        folder, head = root / isa.pages, root / isa.header
        separate.append(SeparateAccount(
            isa, tuple(sorted(p.stem for p in folder.glob("*.md") if p.stem[:1].isupper() and not p.stem.endswith("_zh")
                              and p.stem != "README")) if folder.is_dir() else (),
            pto_instructions(head) if head.is_file() else ()))
    return lists, tuple(separate)


def only_family(acc: Accounting, db: Database, family: str) -> Accounting:
    """The part of ``acc`` about one family (an upstream page folder, or the family of an instruction)."""
    return Accounting(tuple(f for f in acc.families if f.family == family),
                      tuple(s for s in acc.stale if f"{TILE_OPS_DIR}{family}/" in s),
                      {n: ref for n, ref in acc.without_page.items() if db.ops[n].family == family})
    # (the legacy pages, the simulator's instructions and the separate sets belong to no family)


def report(acc: Accounting, root: Path) -> list[str]:
    """The accounting as lines of text: a table per family, then what is missing, stale or page-less."""
    width = max((len(f.family) for f in acc.families), default=6)
    lines = [f"upstream pages under {root / TILE_OPS_DIR}: {acc.pages} in {len(acc.families)} families",
             f"{'family':<{width}}  pages  instructions  program  unimplemented  missing"]
    for f in acc.families:
        lines.append(f"{f.family:<{width}}  {len(f.pages):>5}  {len(f.ops):>12}  {len(f.program):>7}  "
                     f"{len(f.unimplemented):>13}  {len(f.missing):>7}")
    totals = [sum(len(getattr(f, k)) for f in acc.families) for k in ("ops", "program", "unimplemented")]
    lines.append(f"{'total':<{width}}  {acc.pages:>5}  {totals[0]:>12}  {totals[1]:>7}  {totals[2]:>13}  "
                 f"{sum(len(f.missing) for f in acc.families):>7}")
    for f in acc.families:
        if f.program:
            lines.append(f"program layer, {f.family}: {', '.join(f.program.values())}")
        if f.unimplemented:
            lines.append(f"without implementation, {f.family}: "
                         + ", ".join(f"{name} ({stem}.md)" for stem, name in f.unimplemented.items()))
    for f in acc.families:
        if f.missing:
            lines.append(f"missing, {f.family} ({len(f.missing)}): {', '.join(f.missing)}")
    if acc.without_page:
        lines.append(f"instructions without a tile page ({len(acc.without_page)}): "
                     + ", ".join(f"{name} ({ref or 'no page'})" for name, ref in acc.without_page.items()))
    for names in acc.lists:
        lines.append(f"{names.title}: {len(names.names)}: {len(names.covered)} specified, "
                     f"{len(names.recorded)} recorded, {len(names.missing)} missing")
        program = [f"{n} by {by}" for n, by in names.covered.items() if by.endswith("(program)")]
        if program:
            lines.append(f"  program layer: {', '.join(program)}")
        if names.recorded:
            lines.append("  recorded in specs/isa.yaml: "
                         + ", ".join(f"{n} ({how})" for n, how in names.recorded.items()))
        if names.missing:
            lines.append(f"  missing ({len(names.missing)}): {', '.join(names.missing)}")
    for sep in acc.separate:
        lines.append(f"separate ISA {sep.isa.name} (recorded in specs/isa.yaml, not specified): "
                     f"{len(sep.instructions)} instructions of {sep.isa.header} ({', '.join(sep.instructions)}), "
                     f"{len(sep.pages)} pages under {sep.isa.pages}, simulator {', '.join(sep.isa.simulator)}")
    lines += [f"stale: {s}, which the checkout does not have" for s in acc.stale]
    return lines
