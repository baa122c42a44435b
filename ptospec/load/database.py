"""The whole database: the ISA, the kinds, every op, then the checks across them; built once per process for
the same spec bytes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..errors import SpecError
from ..model import Database
from ..yamlsource import read_spec_bytes
from .crosschecks import crosschecks
from .files import display_path, find_specs_root, kind_files, op_files
from .isa import load_isa
from .kinds import load_kinds
from .op import load_op
from .problems import DatabaseErrors, load_each

_LOADED: dict[tuple, Database] = {}
_LOADED_LIMIT = 4


def _content_key(root_path: Path) -> tuple:
    """What a load depends on: the specs' bytes, where they are, and the working directory (message paths)."""
    digest = hashlib.blake2b(digest_size=20)
    for path in [root_path / "isa.yaml", *kind_files(root_path), *op_files(root_path)]:
        digest.update(path.name.encode() + b"\0")
        try:
            digest.update(read_spec_bytes(path))
        except (OSError, SpecError):
            digest.update(b"\1unreadable")
        digest.update(b"\0")
    return str(root_path.resolve()), os.getcwd(), digest.hexdigest()


def load_database(root: str | os.PathLike | None = None, *, reuse: bool = True) -> Database:
    """Load every spec; raise ``DatabaseErrors`` with every problem found.

    A database is immutable, so a process loads the same bytes once: later calls with unchanged spec files
    (same contents, same place, same working directory) return the database already built, unless
    ``reuse`` is false (a fresh build, e.g. to check that two builds agree).
    """
    root_path = find_specs_root(root)
    key = _content_key(root_path)
    if reuse and key in _LOADED:
        return _LOADED[key]
    database = build_database(root_path)
    if len(_LOADED) >= _LOADED_LIMIT:
        _LOADED.pop(next(iter(_LOADED)))
    _LOADED[key] = database
    return database


def build_database(root_path: Path) -> Database:
    isa = load_isa(root_path / "isa.yaml", display_path(root_path / "isa.yaml"))
    kinds = load_kinds(root_path)
    ops, errors = load_each(op_files(root_path), lambda path: load_op(path, isa, display_path(path), kinds))
    errors = [*errors, *crosschecks(isa, ops)]
    if errors:
        raise DatabaseErrors(errors)
    return Database(isa=isa, ops={op.name: op for op in ops}, root=str(root_path), kinds=kinds)
