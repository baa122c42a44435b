"""Trust only what the user owns: checks and opens for the caches ptospec keeps between processes.

A cache another user can write into is a way to make the victim overwrite its files (a planted
symbolic link under a predictable name) or run foreign code (a planted binary or pickle).  So a
cache directory is used only when it, and every folder above it, is the user's own (or root's)
and nobody else can write it (a shared folder such as ``/tmp`` is fine above it when sticky);
files are opened without following symbolic links and are trusted only when the user owns them
and nobody else may write them; new files are created under an unpredictable name with
``O_EXCL | O_NOFOLLOW`` and renamed into place.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH


def _own(info: os.stat_result) -> bool:
    return info.st_uid == os.getuid() and not info.st_mode & WRITABLE_BY_OTHERS


def private_file(path: Path) -> bool:
    """Whether ``path`` is a regular file (not a symbolic link) the user owns that nobody else may write."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and _own(info)


def untrusted_reason(directory: Path) -> str | None:
    """Why ``directory`` cannot hold a private cache (None when it can): it must be a real directory the
    user owns that nobody else may write, below folders owned by the user or root that nobody else may
    write unless sticky (another user could otherwise rename it away and put their own in its place)."""
    try:
        info = os.lstat(directory)
    except OSError as exc:
        return f"cannot read {directory}: {exc.strerror or exc}"
    if stat.S_ISLNK(info.st_mode):
        return f"{directory} is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return f"{directory} is not a directory"
    if info.st_uid != os.getuid():
        return f"{directory} belongs to another user (uid {info.st_uid})"
    if info.st_mode & WRITABLE_BY_OTHERS:
        return f"{directory} can be written by other users (mode {stat.S_IMODE(info.st_mode):o})"
    for folder in Path(os.path.realpath(directory)).parents:
        try:
            up = os.stat(folder)
        except OSError as exc:
            return f"cannot read {folder}: {exc.strerror or exc}"
        if up.st_uid not in (0, os.getuid()):
            return f"{folder} (above {directory}) belongs to another user (uid {up.st_uid})"
        if up.st_mode & WRITABLE_BY_OTHERS and not up.st_mode & stat.S_ISVTX:
            return f"{folder} (above {directory}) can be written by other users and is not sticky"
    return None


def private_dir(directory: Path) -> str | None:
    """Create ``directory`` (mode 700) if missing; why it cannot hold a private cache, or None."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create {directory}: {exc.strerror or exc}"
    return untrusted_reason(directory)


def read_private(path: Path) -> bytes | None:
    """The bytes of ``path`` when it is a private file (opened without following a link), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not _own(info):
            return None
        return fh.read()


def write_private(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` via a new file of unpredictable name in the same folder (``O_EXCL |
    O_NOFOLLOW``, so no planted link is followed) and a rename; raises OSError."""
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:200]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
