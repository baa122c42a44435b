"""Writing generated files safely: inside their output directory, atomically, never through a symlink.

``gen-tests`` and ``docs build`` write only through these helpers, so a name from a spec can
never put a file outside ``generated_tests/`` or ``site/``, a link planted in those folders is
never followed, and a write cut short (disk full, killed process) leaves the old file or the
new one, never half of one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from .errors import PtospecError


class OutputError(PtospecError):
    """A generated file cannot be written (or removed) where it belongs."""


def target(root: Path, rel: str) -> Path:
    """``root / rel``, refusing a path that leaves ``root`` or passes through a symbolic link."""
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


def write_atomic(root: Path, rel: str, text: str) -> Path:
    """Write ``text`` to ``root/rel`` via a temporary file in the same folder and a rename."""
    path = target(root, rel)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}", where=str(path),
                          rule="output.write") from None
    return path


def remove(root: Path, rel: str) -> None:
    """Remove the generated file ``root/rel`` (never a symbolic link or anything outside ``root``)."""
    path = target(root, rel)
    try:
        path.unlink()
    except OSError as exc:
        raise OutputError(f"cannot remove {path}: {exc.strerror or exc}", where=str(path),
                          rule="output.write") from None
