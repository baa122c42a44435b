"""Keep generated_tests/ in step with the specs: render what is out of date, never touch foreign files."""

from __future__ import annotations

import gc
import hashlib
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..model import Database
from ..outputs import OutputError, check_root, output_lock, remove, remove_temporaries, write_atomic
from ..workers import fork_pool
from .cases import Case, case_id, case_units, property_bindings, renamed, search_signature, unit_search
from .generate import CONFTEST, FINGERPRINT, HEADER, fingerprint, render_module


def is_generated(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8") as fh:
            return fh.readline().rstrip("\n") == HEADER
    except (OSError, UnicodeDecodeError):
        return False


SEAL = "# sha256 of the text above: "


def seal(text: str) -> str:
    """``text`` with a last line recording its hash, so a file cut short or edited by hand is recognised."""
    return f"{text}{SEAL}{hashlib.sha256(text.encode()).hexdigest()}\n"


def unseal(content: str) -> tuple[str, bool | None]:
    """(the text above the seal line, whether it matches the recorded hash: None when there is no seal line)."""
    start = content.rfind("\n", 0, len(content) - 1) + 1
    last = content[start:]
    if not last.startswith(SEAL) or not last.endswith("\n"):
        if content.startswith(SEAL) or f"\n{SEAL}" in content:  # text after the seal line: edited by hand
            return content, False
        return content, None
    body = content[:start]
    return body, hashlib.sha256(body.encode()).hexdigest() == last[len(SEAL):-1]


@dataclass
class SyncResult:
    written: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)  # files in the way that we did not generate (or symlinks)
    modified: list[str] = field(default_factory=list)  # generated files edited by hand since: kept unless forced
    removed: list[str] = field(default_factory=list)

    @property
    def out_of_date(self) -> bool:
        return bool(self.stale or self.missing or self.extra or self.modified)


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


# a unit's (positive, must-reject) cases, property bindings, the cases' test ids and the texts of the positive
# cases' seeds (see cases.renamed)
Searched = tuple[tuple[list[Case], list[Case]], list[dict], list[str], list[str]]


def _search_unit(db: Database, unit: tuple[str, str, str]) -> Searched:
    name, mode, profile = unit
    op = db.ops[name]
    positives, rejects, idents = unit_search(db, op, mode, profile)
    ids = [case_id(c, db) for c in (*positives, *rejects)]  # where the case search has their tiles parsed
    bindings = property_bindings(db, op, mode, profile) if profile in op.dtypes else []
    return (positives, rejects), bindings, ids, idents


def _shared(searched: Searched, name: str) -> Searched:
    """A unit's search as the search of the same unit of op ``name`` with the same ``search_signature``."""
    (positives, rejects), bindings, ids, idents = searched
    return renamed(name, positives, rejects, idents), bindings, ids, idents


def _search_in_worker(units: list[tuple[str, str, str]]) -> list[tuple[tuple[str, str, str], Searched]]:
    assert _WORKER_DB is not None
    return [(unit, _search_unit(_WORKER_DB, unit)) for unit in units]


def _size_estimate(db: Database, name: str, mode: str, profile: str) -> int:
    """How much case search a unit needs, roughly: its bases x the dtype rows of its profile."""
    op = db.ops[name]
    table = op.dtypes.get(profile)
    rows = len(table.rows) if table is not None else 0
    return len(op.mode(mode).examples) * max(rows, 1) * len(op.modes)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector.  A case search makes millions of short-lived objects and keeps
    large memos, but no reference cycles (a full collection after a whole search finds nothing): the
    collector's passes only walk the memos, a pause of a second at a time and about a seventh of the search.
    What exists before is frozen, so forked workers never walk the database either."""
    enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


def render_modules(db: Database, names: list[str], progress: Callable[[str, int, int], None] | None = None,
                   jobs: int | None = None) -> dict[str, str]:
    """Render the modules of ``names``.  The case search of each (op, mode, profile) runs on its own (the
    units of one op in one order or another give the same cases: see ``unit_cases``), the ops in parallel
    worker processes when there are several; each module is rendered once its units are in."""
    with collector_paused():
        return _render_modules(db, names, progress, jobs)


def _render_modules(db: Database, names: list[str], progress: Callable[[str, int, int], None] | None,
                    jobs: int | None) -> dict[str, str]:
    every = [(name, mode, profile) for name in names for mode, profile in case_units(db, db.ops[name])]
    # a unit whose search reads what an earlier one's reads (ops of one kind) takes that one's cases, renamed
    first: dict[str, tuple[str, str, str]] = {}
    followers: dict[tuple[str, str, str], list[tuple[str, str, str]]] = {}
    for unit in every:
        leader = first.setdefault(search_signature(db, db.ops[unit[0]], unit[1], unit[2]), unit)
        if leader != unit:
            followers.setdefault(leader, []).append(unit)
    units = list(first.values())
    jobs = min(jobs or os.cpu_count() or 1, len({name for name, _mode, _profile in units}))  # an op per task
    found: dict[tuple[str, str, str], Searched] = {}
    left = {name: len(case_units(db, db.ops[name])) for name in names}
    out: dict[str, str] = {}

    def collect(unit: tuple[str, str, str], searched: Searched) -> None:
        for follower in followers.get(unit, ()):
            collect(follower, _shared(searched, follower[0]))
        found[unit] = searched
        name = unit[0]
        left[name] -= 1
        if left[name]:
            return
        op = db.ops[name]
        units = case_units(db, op)
        parts = [found.pop((name, mode, profile)) for mode, profile in units]
        positives = [c for (pos, _), _b, _i, _s in parts for c in pos]
        rejects = [c for (_, rej), _b, _i, _s in parts for c in rej]
        ids = [i for _c, _b, unit_ids, _s in parts for i in unit_ids]
        named = dict(zip([c for (pos, rej), _b, _i, _s in parts for c in (*pos, *rej)], ids, strict=True))
        out[name] = render_module(db, op, (positives, rejects),
                                  {u: b for u, (_c, b, _i, _s) in zip(units, parts, strict=True)}, named)
        if progress:
            progress(name, len(out), len(names))

    for name in [n for n, k in left.items() if not k]:  # an op without units (no modes)
        left[name] = 1
        collect((name, "", ""), (([], []), [], [], []))
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        for unit in units:
            collect(unit, _search_unit(db, unit))
        return out
    # A worker searches all the units of an op, and of the ops of its kind (they share operands, so its memos
    # serve them all); the largest groups first, so that no worker is left with a large one at the end.
    by_op: dict[str, list[tuple[str, str, str]]] = {}
    for unit in units:
        by_op.setdefault(db.ops[unit[0]].kind or unit[0], []).append(unit)
    order = sorted(by_op.values(), key=lambda group: -sum(_size_estimate(db, *u) for u in group))
    with fork_pool(jobs, _init_worker, (db,)) as pool:
        for searched in pool.imap_unordered(_search_in_worker, order):
            for unit, found_cases in searched:
                collect(unit, found_cases)
    return out


def stderr_progress(name: str, done: int, total: int) -> None:
    print(f"\rgenerating cases: {done}/{total} ({name})".ljust(60), end="" if done < total else "\n",
          file=sys.stderr, flush=True)


def _state(path: Path) -> tuple[str, str]:
    """(state, text above the seal) of one file of the suite.  States: ``missing``, ``foreign`` (not ours,
    or a symlink), ``intact`` (matches its hash), ``edited`` (does not), ``unsealed`` (no hash line: cut
    short inside it, or written before files carried one)."""
    if path.is_symlink():
        return "foreign", ""
    if not path.exists():
        return "missing", ""
    if not path.is_file() or not is_generated(path):
        return "foreign", ""
    try:
        body, intact = unseal(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return "foreign", ""
    return {True: "intact", False: "edited", None: "unsealed"}[intact], body


def sync(db: Database, outdir: Path, check: bool, force: bool = False,
         progress: Callable[[str, int, int], None] | None = None) -> SyncResult:
    """Compare (and unless ``check``, update) ``outdir``; never touch files without our header.

    Every module ends with a hash of its text.  A module whose hash and recorded fingerprint both
    match is up to date without being rendered again.  A module whose text no longer matches its
    hash was cut short (its text is the start of what it should be: rewritten) or edited by hand
    (kept and reported, unless ``force``).  Writes are atomic and stay inside ``outdir``; one ``gen-tests``
    writes at a time (a lock file), and the temporary files of a writer that was killed are removed.
    """
    if check:
        check_root(outdir)
        if os.path.lexists(outdir) and not outdir.is_dir():
            raise OutputError(f"{outdir} is not a directory", where=str(outdir), rule="output.write")
        return _sync(db, outdir, True, force, progress)
    with output_lock(outdir, "gen-tests"):
        return _sync(db, outdir, False, force, progress)


def _sync(db: Database, outdir: Path, check: bool, force: bool,
          progress: Callable[[str, int, int], None] | None) -> SyncResult:
    res = SyncResult()
    states = {f"test_{name}.py": _state(outdir / f"test_{name}.py") for name in sorted(db.ops)}
    states["conftest.py"] = _state(outdir / "conftest.py")
    todo = []
    for name in sorted(db.ops):
        path = outdir / f"test_{name}.py"
        state, _ = states[path.name]
        current = state == "intact" and _recorded_fingerprint(path) == fingerprint(db, db.ops[name])
        if state != "foreign" and (force or not current):
            todo.append(name)
    rendered = {} if check else render_modules(db, todo, progress)
    want: dict[str, str | None] = {"conftest.py": CONFTEST}
    want.update({f"test_{name}.py": rendered.get(name) if name in todo else "" for name in sorted(db.ops)})
    want = {rel: text + "\n" if text and not text.endswith("\n") else text for rel, text in want.items()}
    if not check:
        remove_temporaries(outdir, want)
    for rel, text in want.items():
        state, body = states[rel]
        if state == "foreign":
            res.foreign.append(rel)
            continue
        if text == "":
            continue  # up to date by hash and fingerprint
        if state == "missing":
            res.missing.append(rel)
        elif state == "edited" and (text is None or not text.startswith(body)):
            res.modified.append(rel)  # edited by hand (its start is not what we generate): kept unless forced
            if not force:
                continue
        elif state == "intact" and body == text:
            continue
        else:
            res.stale.append(rel)  # outdated, cut short, or without a hash line
        if text is not None and not check:
            write_atomic(outdir, rel, seal(text))
            res.written.append(rel)
    if outdir.is_dir():
        for path in sorted(outdir.glob("*.py")):
            if path.name in want:
                continue
            state, _ = _state(path)
            if state in ("intact", "unsealed") or (state == "edited" and force):
                res.extra.append(path.name)
                if not check:
                    remove(outdir, path.name)
                    res.removed.append(path.name)
            elif state == "edited":
                res.modified.append(path.name)
    return res
