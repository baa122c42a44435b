"""``specs/goldens.yaml``: what upstream's golden test directories exercise, as data.

Facts about pto-isa's ``gen_data.py`` scripts that their file and parameter names do not say reliably:
which mode of which instruction a directory tests (per case word where it has several), which file is
which operand, and which parameters give an operand's valid and tile shapes.
``benchmarks/upstream_goldens.py`` reads them before its name matching; a directory without an entry is
matched by name. Loaded and checked against the database here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import SpecError
from .loader import DatabaseErrors, Issues, check_schema
from .model import Database
from .yamlsource import read_yaml

FILE = "goldens.yaml"
PLATFORMS = ("a2a3", "a5", "cpu")
_TERM = re.compile(r"[a-z_][a-z0-9_]*|\d+")


@dataclass(frozen=True)
class Extent:
    """An extent as the sum of case parameters and integers (``valid_col0 + valid_col1``)."""

    terms: tuple[str, ...]

    def value(self, params: dict[str, object]) -> int | None:
        total = 0
        for t in self.terms:
            v = int(t) if t.isdigit() else params.get(t)
            if not isinstance(v, int) or isinstance(v, bool):
                return None
            total += v
        return total


@dataclass(frozen=True)
class GoldenDir:
    """One upstream test directory (``testcase/<dir>``) on some platforms."""

    dir: str
    op: str
    platforms: tuple[str, ...]
    source: str
    modes: dict[str, str] = field(default_factory=dict)  # case word ("" for every case) -> mode
    files: dict[str, str] = field(default_factory=dict)  # file stem -> operand
    shapes: dict[str, dict[str, tuple[Extent, Extent]]] = field(default_factory=dict)  # operand -> valid|tile

    def mode_for(self, words: list[str]) -> str | None:
        lowered = {w.lower() for w in words}
        return next((m for w, m in self.modes.items() if w and w.lower() in lowered), self.modes.get(""))

    def shapes_for(self, params: dict[str, object], operands: set[str]) -> dict[str, dict[str, tuple[int, int]]] | None:
        """The valid and tile shapes of a case's operands (those of its mode); None when a parameter is missing."""
        out: dict[str, dict[str, tuple[int, int]]] = {}
        for operand, kinds in self.shapes.items():
            if operand not in operands:
                continue
            for kind, (rows, cols) in kinds.items():
                r, c = rows.value(params), cols.value(params)
                if r is None or c is None:
                    return None
                out.setdefault(operand, {})[kind] = (r, c)
        return out


def _extent(text: str | int) -> Extent:
    terms = tuple(t.strip().lower() for t in str(text).split("+"))
    if not all(_TERM.fullmatch(t) for t in terms):
        raise ValueError(text)
    return Extent(terms)


def load_goldens(db: Database, root: Path | None = None) -> dict[tuple[str, str], GoldenDir]:
    """(platform, directory) -> its entry; ``DatabaseErrors`` lists every problem."""
    root = root or Path(db.root)
    path = root / FILE
    if not path.is_file():
        raise SpecError(f"{FILE} is missing from the database", where=str(root), rule="goldens.spec")
    src = read_yaml(path, str(path))
    check_schema(src, "goldens")
    issues = Issues()
    out: dict[tuple[str, str], GoldenDir] = {}
    for i, d in enumerate(src.data["directories"]):
        where = ("directories", i)
        op = db.ops.get(d["op"])
        if op is None:
            issues.add(src, where, f"unknown op {d['op']!r}", "goldens.op")
            continue
        modes = {m.name: m for m in op.modes}
        chosen = {"": d["mode"]} if "mode" in d else dict(d.get("modes", {}))
        for m in chosen.values():
            if m not in modes:
                issues.add(src, where, f"{op.name} has no mode {m!r}", "goldens.mode")
        named = [modes[m] for m in chosen.values() if m in modes] if chosen else list(modes.values())
        operands = {o.name for m in named for o in m.operands}
        for stem, operand in d.get("files", {}).items():
            if operand not in operands:
                issues.add(src, where, f"file {stem!r}: no operand {operand!r} in the mode(s)", "goldens.operand")
        shapes = {}
        for operand, kinds in d.get("shapes", {}).items():
            if operand not in operands:
                issues.add(src, where, f"shapes: no operand {operand!r} in the mode(s)", "goldens.operand")
            try:
                shapes[operand] = {k: (_extent(v[0]), _extent(v[1])) for k, v in kinds.items()}
            except ValueError as exc:
                issues.add(src, where, f"shapes of {operand}: {exc.args[0]!r} is not a sum of parameter names and "
                           "integers", "goldens.extent")
        entry = GoldenDir(d["dir"], op.name, tuple(d.get("platforms", PLATFORMS)), d["source"], chosen,
                          dict(d.get("files", {})), shapes)
        for p in entry.platforms:
            if (p, entry.dir) in out:
                issues.add(src, where, f"directory {entry.dir!r} on {p} has two entries", "goldens.duplicate")
            out[(p, entry.dir)] = entry
    if issues.items:
        raise DatabaseErrors(issues.items)
    return out
