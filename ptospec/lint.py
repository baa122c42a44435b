"""Lint beyond the loader: every mode's example (and worked example) must be a legal invocation."""

from __future__ import annotations

import os
from pathlib import Path

from .asm.types import parse_descriptor
from .backends.ptoas.spec import FILE as PTOAS_FILE
from .backends.ptoas.spec import load_ptoas_spec
from .errors import PtospecError, SpecError
from .goldens import FILE as GOLDENS_FILE
from .goldens import load_goldens
from .load.crosschecks import crosschecks
from .load.files import display_path, find_specs_root, kind_files, op_files
from .load.isa import load_isa
from .load.kinds import load_kinds
from .load.op import load_op
from .load.problems import DatabaseErrors, load_each
from .model import Database, Isa, OpSpec
from .program.spec import FILE as PROGRAM_FILE
from .program.spec import load_program_spec


def check_examples(op: OpSpec, isa: Isa) -> list[SpecError]:
    from .model import Database
    from .validator import validate

    db = Database(isa=isa, ops={op.name: op}, root="")
    problems = []
    for mode in op.modes:
        named = [("example" if k == 0 else f"base {k}", e) for k, e in enumerate(mode.examples)]
        for what, example in named + ([("worked example", mode.worked)] if mode.worked else []):
            where = f"{example.file or op.file}:{example.line}"
            try:
                tiles = {n: parse_descriptor(t, isa) for n, t in example.tiles.items()}
                report = validate(db, op.name, mode.name, example.profile, tiles)
            except PtospecError as exc:
                problems.append(SpecError(f"mode {mode.name} {what}: {exc.message}", where=where, rule="op.example"))
                continue
            for v in report.violations:
                problems.append(SpecError(f"mode {mode.name} {what} is illegal on {example.profile}: "
                                          f"{v.one_line()}", where=where, rule="op.example"))
    return problems


def check_worked_example(op: OpSpec, isa: Isa) -> list[SpecError]:
    """The site's worked example of ``op`` (``docs build`` fails without one): predicted here, so a spec that
    lints clean also builds."""
    from .docs import worked
    from .model import Database

    if not any(m.has_data_semantics for m in op.modes):
        return []
    try:
        worked.compute(Database(isa=isa, ops={op.name: op}, root=""), op)
    except PtospecError as exc:
        return [SpecError(f"the site cannot show a worked example: {exc.message}", where=op.file,
                          rule=exc.rule or "docs.worked-example")]
    return []


def _real(path: Path) -> Path:
    """``path`` with every link followed (a loop of links stays as it is: its read fails with one line)."""
    return Path(os.path.realpath(path))


def lint_paths(specs: str | None, paths: list[Path]) -> tuple[list[SpecError], int]:
    """Return (problems, number of files checked)."""
    root = find_specs_root(specs)
    problems: list[SpecError] = []
    try:
        isa = load_isa(root / "isa.yaml", display_path(root / "isa.yaml"))
    except DatabaseErrors as exc:
        return exc.errors, 1
    except SpecError as exc:
        return [exc], 1
    try:
        kinds = load_kinds(root)
    except DatabaseErrors as exc:
        return exc.errors, 1 + len(kind_files(root))
    kind_paths = {_real(k) for k in kind_files(root)}
    files: list[Path] = []
    if not paths:
        files = op_files(root)
    for p in paths:
        if p.is_dir():  # a spec database (its op files), or a folder of spec files; never a walk of the tree below
            found = op_files(p) if (p / "isa.yaml").is_file() else sorted(p.glob("*.yaml"))
            if not found:  # a mistyped folder is not a clean database
                problems.append(SpecError("no .yaml file in this directory", where=str(p), rule="lint.path"))
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            problems.append(SpecError("not a file or directory", where=str(p), rule="lint.path"))
    program_file = _real(root / PROGRAM_FILE)
    ptoas_file = _real(root / PTOAS_FILE)
    goldens_file = _real(root / GOLDENS_FILE)
    other = {_real(root / "isa.yaml"), program_file, ptoas_file, goldens_file, *kind_paths}
    files = [f for f in files if _real(f) not in other]
    ops, errors = load_each(files, lambda path: load_op(path, isa, display_path(path), kinds))
    problems.extend(errors)
    problems.extend(crosschecks(isa, ops))
    for op in ops:
        problems.extend(check_examples(op, isa))
        problems.extend(check_worked_example(op, isa))
    checked = len(files) + 1 + len(kind_paths)
    if not paths or any(_real(p) in (program_file, _real(root)) for p in paths):
        problems.extend(_side_file(lambda db: load_program_spec(root, db), root, isa, ops))
        checked += 1
    if ptoas_file.is_file() and (not paths or any(_real(p) in (ptoas_file, _real(root)) for p in paths)):
        problems.extend(_side_file(lambda db: load_ptoas_spec(db, root), root, isa, ops))
        checked += 1
    if goldens_file.is_file() and (not paths or any(_real(p) in (goldens_file, _real(root)) for p in paths)):
        problems.extend(_side_file(lambda db: load_goldens(db, root), root, isa, ops))
        checked += 1
    return problems, checked


def _side_file(load, root: Path, isa, ops) -> list[SpecError]:
    """The problems of one database-wide file beside the ops (program.yaml, ptoas.yaml, goldens.yaml):
    ``load(db)`` reads it and checks it against the ISA and the ops it names."""
    try:
        load(Database(isa, {op.name: op for op in ops}, str(root)))
    except DatabaseErrors as exc:
        return list(exc.errors)
    except SpecError as exc:
        return [exc]
    return []

