"""A loaded database kept on disk between processes: every command that reads the database starts from it.

Loading the specs (YAML, schemas, kinds, cross-references) takes about a second; unpickling the database it
built takes a few hundredths of that.  The file is keyed by what the load depends on (the spec files, their
place, the working directory: message paths) and by the code that built it (every ``.py`` file of the
package, and the Python version).  A file is known by its status, not its bytes (size, modification and
change times, inode: an edit changes the change time, which no program sets back), so the key costs one
``stat`` per file and an edited spec or engine never reads a stale database.  Anything wrong with the cache
file (missing, truncated, another version) is a plain load, which then rewrites it.  What is built from a
database (the program layer) is keyed by the database's key, remembered from its read, and its own files.
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from .cachedir import ENV_DIR as ENV_DIR  # the names users of the cache know it by
from .cachedir import code_fingerprint, default_dir, status
from .collector import collector_paused
from .lazyops import OpsOnDisk
from .load.files import find_specs_root, kind_files, op_files
from .model import Database
from .private import private_dir, read_private, write_private

KEEP = 12  # files of each kind kept (the most recent): a few checkouts, each with its own key, share one directory
T = TypeVar("T")
PACKAGE = __name__.rpartition(".")[0] + "."


def spec_files(root_path: Path) -> list[Path]:
    """The files a database is loaded from."""
    return [root_path / "isa.yaml", *kind_files(root_path), *op_files(root_path)]


def _key(what: str, root_path: Path, files: list[Path], base: str = "") -> str:
    """What a build from ``files`` depends on: their status, their place, the working directory (message paths),
    the code (``cachedir.code_fingerprint``) and ``base`` (the key of what it is built from)."""
    root = str(root_path)
    digest = hashlib.blake2b(digest_size=20)
    digest.update(f"{what}\0{root_path.resolve()}\0{os.getcwd()}\0{code_fingerprint()}\0{base}\0".encode())
    for path in map(str, files):
        name = path[len(root) + 1:] if path.startswith(root + os.sep) else os.path.relpath(path, root)
        digest.update(name.encode() + b"\0" + status(path) + b"\0")
    return digest.hexdigest()


def _load(root) -> Database:
    from .load.database import load_database  # the loader (YAML, schemas, NumPy) only when the file cannot serve

    with collector_paused():
        return load_database(root)


def load_database_cached(root: str | os.PathLike | None = None, directory: Path | None = None) -> Database:
    """``load_database(root)``, read from ``directory`` (default ``default_dir()``) when a process with the same
    specs and code has built it before."""
    root_path = find_specs_root(root)
    return cached("database", root_path, spec_files(root_path), lambda: _load(root_path), Database, directory,
                  stored=_database_stored, remember=_remember_database)


def _database_stored(db: Database) -> Database:
    """What the file keeps of ``db``: its strings shared, each op a pickle of its own, read when looked up."""
    kept = share_equal(db)
    return replace(kept, ops=OpsOnDisk.of(kept.ops))


def _remember_database(db: Database, key: str) -> None:
    _LAST[:] = [(db, key)]


def database_key(db: Database) -> str:
    """The key ``db`` was read or built under when it is the last database this process went through the cache
    for, else the key of its specs as they are now: what is built from ``db`` is kept under it (``base``)."""
    if _LAST and _LAST[0][0] is db:
        return _LAST[0][1]
    root_path = Path(db.root)
    try:
        return _key("database", root_path, spec_files(root_path))
    except OSError:
        return ""


_LAST: list[tuple[object, str]] = []  # the last database through ``cached``, with its key (one slot)


def cached(what: str, root_path: Path, files: list[Path], build: Callable[[], T], kind: type[T],
           directory: Path | None = None, base: str = "", stored: Callable[[T], object] | None = None,
           remember: Callable[[T, str], None] | None = None) -> T:
    """``build()``, read from ``directory`` (default ``default_dir()``) when a process with the same ``files``
    (under ``root_path``), ``base`` (the key of what it is built from, if anything) and code has built it before;
    the result must be a ``kind``.  ``stored(result)`` is what the file keeps (default: the result with its
    strings shared); ``remember(result, key)`` is told the key of every result, read or built."""
    directory = directory or default_dir()
    if directory is None:
        return build()
    try:
        key = _key(what, root_path, files, base)
    except OSError:  # an unreadable spec file: the loader says what is wrong with it
        return build()
    path = directory / f"{what}-{key}.pickle"
    # A pickle can run code: only a file of the user's own, in a directory only the user can write, is read;
    # and nothing is written into a directory another user could plant a link in.
    trusted = private_dir(directory) is None
    if trusted:
        try:
            data = read_private(path)
            found = None
            if data is not None:
                with collector_paused():
                    found = pickle.loads(data)
                    # what was read lives as long as the process: the cyclic collector never walks it again
                    gc.freeze()
            if isinstance(found, kind):
                if remember is not None:
                    remember(found, key)
                return found
        except Exception:  # any unreadable file is a cache miss
            pass
    built = build()
    if remember is not None:
        remember(built, key)
    if not trusted:
        return built
    try:
        kept = (stored or share_equal)(built)
        write_private(path, pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL))
        for old in sorted(directory.glob(f"{what}-*.pickle"), key=lambda p: p.stat().st_mtime)[:-KEEP]:
            old.unlink(missing_ok=True)
    except OSError:  # a read-only cache only costs the next process a load
        pass
    return built


def share_equal(root: T) -> T:
    """``root`` with equal strings, and equal tuples of strings, made one object each (in place): the loader
    makes a new string for every occurrence of a YAML scalar, and a pickle keeps every object it is given, so
    reading the file would make them all again (a quarter of its time).  Only the package's own objects and
    the lists, dicts, sets and tuples between them are walked; values stay equal and of the same type."""
    strings: dict[str, str] = {}
    tuples: dict[tuple[str, ...], tuple[str, ...]] = {}
    done: dict[int, object] = {}
    kept: list[object] = []  # every object walked stays alive while ``done`` knows it by its id

    def same(obj):
        kind = type(obj)
        if kind is str:
            return strings.setdefault(obj, obj)
        if kind not in (tuple, list, dict, set) and not kind.__module__.startswith(PACKAGE):
            return obj
        if id(obj) in done:
            return done[id(obj)]
        done[id(obj)] = obj  # a cycle back to it meets it unchanged
        kept.append(obj)
        if kind is tuple:
            new = tuple(same(x) for x in obj)
            if all(type(x) is str for x in new):
                new = tuples.setdefault(new, new)
            done[id(obj)] = new
            return new
        if kind is list:
            obj[:] = [same(x) for x in obj]
        elif kind is dict:
            items = [(same(k), same(v)) for k, v in obj.items()]
            obj.clear()
            obj.update(items)
        elif kind is set:
            items = [same(x) for x in obj]
            obj.clear()
            obj.update(items)
        elif hasattr(obj, "__dict__"):
            for name, value in list(vars(obj).items()):
                object.__setattr__(obj, name, same(value))
        return obj

    return same(root)
