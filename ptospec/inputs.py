"""Reading a file the user names: only a regular file is read (a pipe would wait for a writer, ``/dev/zero``
never ends), and the size limit applies before reading."""

from __future__ import annotations

import os
import stat


def read_regular(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of ``path``, at most ``limit``; raises ``OSError`` with a one-line ``strerror`` otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens without waiting for a writer
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(22, "not a regular file (a pipe, a device or a folder)", os.fsdecode(path))
        data = fh.read(limit + 1)
    if max(info.st_size, len(data)) > limit:
        raise OSError(27, f"larger than {limit} bytes", os.fsdecode(path))
    return data
