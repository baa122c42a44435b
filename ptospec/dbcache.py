"""A loaded database kept on disk between processes, for commands that start often (``ptospec conformance``).

Loading the specs (YAML, schemas, kinds, cross-references) takes about a second; unpickling the database it
built takes a tenth of that.  The file is keyed by what the load depends on (the specs' bytes, their place,
the working directory: message paths) and by the code that built it (every ``.py`` file of the package, and
the Python version), so an edited spec or engine never reads a stale database.  Anything wrong with the file
(missing, truncated, another version) is a plain load, which then rewrites it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from pathlib import Path

from .load.database import load_database
from .load.files import find_specs_root, kind_files, op_files
from .model import Database

KEEP = 4  # database files kept in the cache directory (the most recent)
PACKAGE = Path(__file__).resolve().parent


ENV_DIR = "PTOSPEC_DATABASE_CACHE"  # the directory, or "off" to load the specs every time


def default_dir() -> Path | None:
    """``$PTOSPEC_DATABASE_CACHE``, else ``$XDG_CACHE_HOME/ptospec/database`` or ``~/.cache/ptospec/database``;
    None when the variable says ``off``."""
    given = os.environ.get(ENV_DIR, "")
    if given.lower() in ("off", "0", "no"):
        return None
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ptospec" / "database"


def _specs_key(root_path: Path) -> str:
    digest = hashlib.blake2b(digest_size=20)
    digest.update(f"{root_path.resolve()}\0{os.getcwd()}\0".encode())
    for path in [root_path / "isa.yaml", *kind_files(root_path), *op_files(root_path)]:
        digest.update(str(path.relative_to(root_path)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _code_fingerprint() -> str:
    digest = hashlib.blake2b(digest_size=16)
    digest.update(sys.version.encode())
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _private(path: Path) -> bool:
    """Whether ``path`` is the user's own and nobody else may write it: only such a file is unpickled (a
    pickle can run code, so one another user could have written is never read)."""
    info = path.stat()
    return info.st_uid == os.getuid() and not info.st_mode & 0o022


def load_database_cached(root: str | os.PathLike | None = None, directory: Path | None = None) -> Database:
    """``load_database(root)``, read from ``directory`` (default ``default_dir()``) when a process with the same
    specs and code has built it before."""
    directory = directory or default_dir()
    if directory is None:
        return load_database(root)
    root_path = find_specs_root(root)
    try:
        key = hashlib.blake2b(f"{_specs_key(root_path)} {_code_fingerprint()}".encode(), digest_size=20).hexdigest()
    except OSError:  # an unreadable spec file: the loader says what is wrong with it
        return load_database(root_path)
    path = directory / f"{key}.pickle"
    try:
        if _private(directory) and _private(path):
            with open(path, "rb") as f:
                db = pickle.load(f)
            if isinstance(db, Database):
                return db
    except Exception:  # any unreadable file is a cache miss
        pass
    db = load_database(root_path)
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
            out.write(pickle.dumps(db, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(tmp, path)
        for old in sorted(directory.glob("*.pickle"), key=lambda p: p.stat().st_mtime)[:-KEEP]:
            old.unlink(missing_ok=True)
    except OSError:  # a read-only cache only costs the next process a load
        pass
    return db
