"""Keep generated_tests/ in step with the specs: render what is out of date, never touch foreign files."""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..model import Database
from .generate import CONFTEST, FINGERPRINT, HEADER, fingerprint, render_module


def is_generated(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8") as fh:
            return fh.readline().rstrip("\n") == HEADER
    except (OSError, UnicodeDecodeError):
        return False


@dataclass
class SyncResult:
    written: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)  # files in the way that we did not generate

    @property
    def out_of_date(self) -> bool:
        return bool(self.stale or self.missing or self.extra)


def _recorded_fingerprint(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8") as fh:
            if fh.readline().rstrip("\n") != HEADER:
                return None
            line = fh.readline().rstrip("\n")
    except (OSError, UnicodeDecodeError):
        return None
    return line[len(FINGERPRINT):] if line.startswith(FINGERPRINT) else None


_WORKER_DB: Database | None = None


def _init_worker(db: Database) -> None:
    global _WORKER_DB
    _WORKER_DB = db


def _render_in_worker(name: str) -> tuple[str, str]:
    assert _WORKER_DB is not None
    return name, render_module(_WORKER_DB, _WORKER_DB.ops[name])


def render_modules(db: Database, names: list[str], progress: Callable[[str, int, int], None] | None = None,
                   jobs: int | None = None) -> dict[str, str]:
    """Render the modules of ``names`` (in parallel worker processes when there are several)."""
    jobs = min(jobs or os.cpu_count() or 1, len(names))
    out: dict[str, str] = {}
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        for k, name in enumerate(names, 1):
            out[name] = render_module(db, db.ops[name])
            if progress:
                progress(name, k, len(names))
        return out
    with multiprocessing.get_context("fork").Pool(jobs, initializer=_init_worker, initargs=(db,)) as pool:
        for k, (name, text) in enumerate(pool.imap_unordered(_render_in_worker, names), 1):
            out[name] = text
            if progress:
                progress(name, k, len(names))
    return out


def stderr_progress(name: str, done: int, total: int) -> None:
    print(f"\rgenerating cases: {done}/{total} ({name})".ljust(60), end="" if done < total else "\n",
          file=sys.stderr, flush=True)


def sync(db: Database, outdir: Path, check: bool, force: bool = False,
         progress: Callable[[str, int, int], None] | None = None) -> SyncResult:
    """Compare (and unless ``check``, update) ``outdir``; never touch files without our header.

    A module whose recorded fingerprint matches the spec and generator is up to date without being
    rendered again; ``force`` renders every module and compares the text.
    """
    res = SyncResult()
    want: dict[str, str | None] = {"conftest.py": CONFTEST}
    todo: list[str] = []
    outdated: set[str] = set()
    for name in sorted(db.ops):
        matches = _recorded_fingerprint(outdir / f"test_{name}.py") == fingerprint(db, db.ops[name])
        if force or (not matches and not check):
            todo.append(name)
        elif not matches:
            outdated.add(name)  # --check: a wrong fingerprint is enough, nothing to render
    rendered = render_modules(db, todo, progress)
    for name in sorted(db.ops):
        want[f"test_{name}.py"] = None if name in outdated else rendered.get(name, "")
    for name, text in want.items():
        path = outdir / name
        if not path.exists():
            res.missing.append(name)
        elif not is_generated(path):
            res.foreign.append(name)
            continue
        elif text == "" or (text is not None and path.read_text(encoding="utf-8") == text):
            continue  # up to date by fingerprint, or rendered identical
        else:
            res.stale.append(name)
        if text is None:
            continue
        if not check:
            outdir.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            res.written.append(name)
    if outdir.is_dir():
        for path in sorted(outdir.glob("*.py")):
            if path.name not in want and is_generated(path):
                res.extra.append(path.name)
                if not check:
                    path.unlink()
    return res
