"""What commands read from files and their command line: .npy/.npz arrays (never unpickled, sizes checked
before NumPy allocates them) and numbers."""

from __future__ import annotations

import re
import zipfile
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvocationError

if TYPE_CHECKING:
    import numpy as np

MAX_INPUT_BYTES = 64 << 20  # the largest tile of any profile holds 512 KiB


def load_arrays(path: str, where: str, limit: int = MAX_INPUT_BYTES) -> dict[str, np.ndarray] | np.ndarray:
    """One .npy array, or every member of an .npz archive, read eagerly (never unpickled)."""
    import numpy as np

    p = Path(path)
    if not p.is_file():
        what = "not a regular file (a pipe, a device or a folder)" if p.exists() else "no such file"
        raise InvocationError(f"{what}: {path}", rule="run.input", where=where)
    try:
        if zipfile.is_zipfile(p):
            with zipfile.ZipFile(p) as archive:
                size = sum(info.file_size for info in archive.infolist())
        else:
            size = p.stat().st_size
        if size > limit:
            raise InvocationError(f"{path} holds {size} bytes of data; the limit here is {limit} bytes",
                                  rule="run.input", where=where)
        _check_headers(p, limit)
        loaded = np.load(p, allow_pickle=False)
        if isinstance(loaded, np.lib.npyio.NpzFile):
            with loaded:
                members = {name: loaded[name] for name in loaded.files}
            for name, member in members.items():  # np.load gives a member that is not an array as its bytes
                if not isinstance(member, np.ndarray):
                    raise InvocationError(f"{path}: member {name!r} is not a NumPy array (.npy)", rule="run.input",
                                          where=where)
            return members
        return loaded
    except InvocationError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error, KeyError, UnicodeError,
            RuntimeError) as exc:
        reason = str(exc) or type(exc).__name__
        if "object arrays" in reason.lower():
            reason = "it holds Python objects (pickled data), which are never loaded"
        elif "max_header_size" in reason:
            reason = "its array header is too large"
        raise InvocationError(f"cannot read {path}: {reason}", rule="run.input", where=where) from None


def _check_headers(p: Path, limit: int) -> None:
    """Refuse an array whose header promises more data than the limit or than its file holds, or is malformed,
    before NumPy allocates it (``np.load`` trusts the shape and dtype of the header).  Every member of an
    archive that starts like an array is checked, whatever its name (``np.load`` reads them all as arrays)."""
    import numpy as np

    if zipfile.is_zipfile(p):
        with zipfile.ZipFile(p) as archive:
            for info in archive.infolist():
                with archive.open(info) as fh:
                    if fh.read(len(np.lib.format.MAGIC_PREFIX)) != np.lib.format.MAGIC_PREFIX:
                        continue
                with archive.open(info) as fh:
                    _check_header(fh, info.file_size, limit, f"member {info.filename}: ")
        return
    with p.open("rb") as fh:
        _check_header(fh, p.stat().st_size, limit, "")


def _check_header(fh, size: int, limit: int, member: str) -> None:
    import numpy as np

    try:
        version = np.lib.format.read_magic(fh)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _fortran, dtype = read(fh)
    except Exception as exc:  # NumPy's header parser: any failure means a malformed header
        if "max_header_size" in str(exc):
            raise ValueError(f"{member}its array header is too large") from None
        raise ValueError(f"{member}its array header is malformed ({type(exc).__name__})") from None
    if not isinstance(shape, tuple) or not all(type(e) is int and e >= 0 for e in shape):
        raise ValueError(f"{member}its header declares shape {shape!r}: extents must be integers 0 or more")
    count = 1
    for extent in shape:
        count *= extent
    nbytes = count * dtype.itemsize
    if nbytes > limit or nbytes > size:
        raise ValueError(f"{member}its header declares shape {shape} of {dtype} ({nbytes} bytes), more than "
                         f"{'the file holds' if nbytes <= limit else f'the limit of {limit} bytes'}")


INT_TEXT = re.compile(r"[+-]?[0-9]{1,25}")
FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|inf|nan)",
                    re.IGNORECASE)
