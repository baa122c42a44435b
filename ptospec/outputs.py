"""Writing output files safely: atomically, and generated files inside their output directory, never through a symlink.

Every file ptospec writes goes through ``replace_file`` (a temporary file in the same folder, flushed to
disk, then renamed over the old one), so a write cut short (disk full, killed process) leaves the old file
or the new one, never half of one, and an old file is never truncated first.  ``gen-tests`` and ``docs
build`` write through ``write_atomic``, so a name from a spec can never put a file outside
``generated_tests/`` or ``site/``, and neither the output folder itself nor a link planted in it is
ever followed.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import re
import stat
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import PtospecError
from .private import write_private

if TYPE_CHECKING:
    import numpy as np


class OutputError(PtospecError):
    """A generated file cannot be written (or removed) where it belongs."""


def check_root(root: Path) -> None:
    """Refuse an output folder that is a symbolic link (it would put generated files elsewhere)."""
    if Path(root).is_symlink():
        raise OutputError(f"refusing to write into {root}: it is a symbolic link", where=str(root),
                          rule="output.symlink")


def target(root: Path, rel: str) -> Path:
    """``root / rel``, refusing a path that leaves ``root`` or passes through a symbolic link (``root`` too)."""
    check_root(root)
    root_abs = Path(os.path.abspath(root))
    path = Path(os.path.abspath(root_abs / rel))
    if path == root_abs or root_abs not in path.parents:
        raise OutputError(f"refusing to write {rel!r}: it resolves outside {root}", where=str(root),
                          rule="output.outside")
    folder = path.parent
    while folder != root_abs:  # every folder between root and the file, and the file itself, must be real
        if folder.is_symlink():
            raise OutputError(f"refusing to write through the symbolic link {folder}", where=str(path),
                              rule="output.symlink")
        folder = folder.parent
    if path.is_symlink():
        raise OutputError(f"refusing to write {path}: it is a symbolic link", where=str(path), rule="output.symlink")
    return path


def replace_file(path: str | os.PathLike, data: str | bytes, mode: int | None = None, *, rule: str = "output.write",
                 where: str | None = None) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` atomically: a temporary file of unpredictable name in the same
    folder, flushed to disk, renamed over the old file, which is never truncated first.  A link the user named
    is written through to its target (the link stays).  ``mode``: the new file's permissions (default: the
    old file's, else 0o666 less the umask).  Raises ``OutputError`` (one line)."""
    path = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    data = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if path.is_dir():
            raise IsADirectoryError(21, "it is a directory")
        if path.exists() and not path.is_file():
            raise OSError(22, "it is not a regular file")
        if mode is None:
            mode = os.stat(path).st_mode & 0o7777 if path.exists() else 0o666 & ~_umask()
        write_private(path, data, mode)
    except OSError as exc:
        raise OutputError(f"cannot write {os.fsdecode(path)!r}: {exc.strerror or exc}", where=where,
                          rule=rule) from None
    return path


def real_folder(path: str | os.PathLike) -> Path:
    """``path``, a folder of an output ptospec fills with files it names itself (``repros/``): refused when it is
    a symbolic link (removing old files there, or writing new ones, would happen elsewhere)."""
    if os.path.islink(path):
        raise OutputError(f"refusing to write into {os.fsdecode(path)}: it is a symbolic link", where=str(path),
                          rule="output.symlink")
    return Path(path)


def replace_in(folder: str | os.PathLike, rel: str, data: str | bytes) -> Path:
    """Write ``data`` atomically to ``folder/rel`` (a report, or a file beside it), a file the user did not name
    one by one: a symbolic link found there (or between ``folder`` and it) is refused, never written through,
    so a link planted in a shared report folder cannot point the write elsewhere.  ``folder`` itself may be a
    link (the user named it).  Missing folders below ``folder`` are created."""
    return _replace_below(Path(os.path.realpath(folder)), rel, data)


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An ``.npz`` archive holding ``arrays`` under exactly their names (``np.savez(file, **arrays)`` takes names
    as keywords: one named ``file`` or ``allow_pickle`` is lost or an error)."""
    import numpy as np

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
    return buffer.getvalue()


def write_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray], **how) -> Path:
    """``npz_bytes(arrays)`` written atomically at exactly ``path`` (no ``.npz`` appended); ``how``: see
    ``replace_file``."""
    return replace_file(path, npz_bytes(arrays), **how)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(root: Path, rel: str, text: str) -> Path:
    """Write ``text`` to ``root/rel`` via a temporary file in the same folder and a rename."""
    return _replace_below(root, rel, text, 0o644)


def _replace_below(root: Path, rel: str, data: str | bytes, mode: int | None = None) -> Path:
    """``replace_file`` of ``root/rel`` (checked by ``target``), creating the folders between."""
    path = target(root, rel)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}", where=str(path),
                          rule="output.write") from None
    return replace_file(path, data, mode)


def remove(root: Path, rel: str) -> None:
    """Remove the generated file ``root/rel`` (never a symbolic link or anything outside ``root``)."""
    path = target(root, rel)
    try:
        path.unlink()
    except OSError as exc:
        raise OutputError(f"cannot remove {path}: {exc.strerror or exc}", where=str(path),
                          rule="output.write") from None


_TEMPORARY = re.compile(r"\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp")  # replace_file's temporary names (tempfile.mkstemp)


def remove_temporaries(root: Path, rels: Iterable[str]) -> list[str]:
    """Remove the temporary files a killed writer left beside the generated files ``rels`` of ``root`` (only
    ``.<name>.XXXXXXXX.tmp`` for a ``<name>`` of ours, never a link); return them, relative to ``root``."""
    check_root(root)
    names: dict[str, set[str]] = {}
    for rel in rels:
        folder, _, name = rel.rpartition("/")
        names.setdefault(folder, set()).add(name)
    removed = []
    for folder, ours in names.items():
        where = Path(root) / folder
        if where.is_symlink() or not where.is_dir():
            continue
        for entry in os.scandir(where):
            match = _TEMPORARY.fullmatch(entry.name)
            if match and match["name"] in ours and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed.append(f"{folder}/{entry.name}" if folder else entry.name)
    return removed


_HELD: set[str] = set()


@contextlib.contextmanager
def output_lock(root: Path, command: str) -> Iterator[None]:
    """One ``command`` at a time writing into ``root`` (created if missing): an exclusive lock on
    ``root/.ptospec-<command>.lock``, a file of ours opened without following a link; re-entrant in a process."""
    key = f"{os.path.abspath(root)}\0{command}"
    if key in _HELD:
        yield
        return
    check_root(root)
    if os.path.lexists(root) and not Path(root).is_dir():
        raise OutputError(f"refusing to write into {root}: it is not a directory", where=str(root), rule="output.write")
    path = target(root, f".ptospec-{command.replace(' ', '-')}.lock")
    try:
        Path(root).mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise OutputError(f"cannot lock {path}: {exc.strerror or exc}", where=str(path), rule="output.write") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OutputError(f"refusing the lock file {path}: it is not a regular file", where=str(path),
                              rule="output.write")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise OutputError(f"another 'ptospec {command}' is writing into {root}; wait for it to finish",
                              where=str(root), rule="output.busy") from None
        _HELD.add(key)
        try:
            yield
        finally:
            _HELD.discard(key)
    finally:
        os.close(fd)
