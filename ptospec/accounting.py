"""Every upstream tile-op page accounted for: ``ptospec list --upstream PATH``.

A page ``docs/isa/tile/ops/<family>/<stem>.md`` of an upstream checkout (Chinese ``*_zh.md`` copies
aside) is *covered* when an instruction names it as its ``page`` source, or when it documents an
instruction of the program layer (``specs/program.yaml``: the page's stem with ``-`` read as ``_``
names an instruction or a synchronisation instruction there); it is *unimplemented* when
``unimplemented_pages`` in ``specs/isa.yaml`` records it; otherwise it is *missing*.  Entries of the
database that name a page the checkout does not have are *stale*.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .errors import InvocationError
from .loader import TILE_OPS_DIR, op_page
from .model import Database


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
class Accounting:
    families: tuple[FamilyAccount, ...]
    stale: tuple[str, ...]  # "<what> names <page>, which the checkout does not have"
    without_page: dict[str, str]  # instruction -> its page source outside docs/isa/tile/ops/ ("" for none)

    @property
    def pages(self) -> int:
        return sum(len(f.pages) for f in self.families)

    @property
    def missing(self) -> int:
        return sum(len(f.missing) for f in self.families)


def upstream_pages(root: Path) -> dict[str, tuple[str, ...]]:
    """family -> stems of its English pages in the checkout at ``root``."""
    tree = root / TILE_OPS_DIR
    if not tree.is_dir():
        raise InvocationError(f"{root} has no {TILE_OPS_DIR} (not a pto-isa checkout?)", rule="cli.upstream",
                              where="--upstream")
    return {d.name: tuple(sorted(p.stem for p in d.glob("*.md") if not p.stem.endswith("_zh")))
            for d in sorted(tree.iterdir()) if d.is_dir()}


def account(db: Database, program_names: set[str], root: Path) -> Accounting:
    """Relate every page of the checkout at ``root`` to the database; ``program_names`` are the program
    layer's instruction names (``alloc_tile``, ``tsync``, ...)."""
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
    return Accounting(tuple(families), tuple(stale), without)


def only_family(acc: Accounting, db: Database, family: str) -> Accounting:
    """The part of ``acc`` about one family (an upstream page folder, or the family of an instruction)."""
    return Accounting(tuple(f for f in acc.families if f.family == family),
                      tuple(s for s in acc.stale if f"{TILE_OPS_DIR}{family}/" in s),
                      {n: ref for n, ref in acc.without_page.items() if db.ops[n].family == family})


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
                 f"{acc.missing:>7}")
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
    lines += [f"stale: {s}, which the checkout does not have" for s in acc.stale]
    return lines
