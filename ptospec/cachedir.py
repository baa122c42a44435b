"""Where the caches ptospec keeps between processes live, and what says the code that filled them is this one.

Light on purpose: ``ptospec/cli`` reads the class-code cache (``classcode``) through it before any model
class is made."""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path

ENV_DIR = "PTOSPEC_DATABASE_CACHE"  # the directory, or "off" to load the specs every time
PACKAGE = Path(__file__).resolve().parent


def default_dir() -> Path | None:
    """``$PTOSPEC_DATABASE_CACHE``, else ``$XDG_CACHE_HOME/ptospec/database`` or ``~/.cache/ptospec/database``;
    None when the variable says ``off``."""
    given = os.environ.get(ENV_DIR, "")
    if given.lower() in ("off", "0", "no"):
        return None
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ptospec" / "database"


def status(path: str | os.PathLike) -> bytes:
    """A file as its status knows it: size, modification and change times, inode (an edit changes the change time,
    which no program sets back)."""
    info = os.stat(path)
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}".encode()


@cache
def code_fingerprint() -> str:
    """The Python version and the status of every ``.py`` file of the package."""
    import hashlib

    digest = hashlib.blake2b(digest_size=16)
    digest.update(sys.version.encode())
    package = str(PACKAGE)
    found = []
    for folder, subfolders, names in os.walk(package):
        subfolders[:] = [s for s in subfolders if s != "__pycache__"]
        found += [os.path.relpath(os.path.join(folder, n), package) for n in names if n.endswith(".py")]
    for name in sorted(found, key=lambda n: n.split(os.sep)):
        digest.update(name.encode() + b"\0" + status(os.path.join(package, name)) + b"\0")
    return digest.hexdigest()
