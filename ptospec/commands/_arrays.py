"""What commands read from files and their command line: .npy/.npz arrays (never unpickled, sizes checked
before NumPy allocates them) and numbers."""

from __future__ import annotations

import re
import zipfile
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
        raise InvocationError(f"no such file: {path}", rule="run.input", where=where)
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
                return {name: loaded[name] for name in loaded.files}
        return loaded
    except InvocationError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError, UnicodeError, RuntimeError) as exc:
        reason = str(exc) or type(exc).__name__
        if "object arrays" in reason.lower():
            reason = "it holds Python objects (pickled data), which are never loaded"
        elif "max_header_size" in reason:
            reason = "its array header is too large"
        raise InvocationError(f"cannot read {path}: {reason}", rule="run.input", where=where) from None


def _check_headers(p: Path, limit: int) -> None:
    """Refuse an array whose header promises more data than the limit or than its file holds, before NumPy
    allocates it (``np.load`` trusts the shape and dtype of the header)."""
    if zipfile.is_zipfile(p):
        with zipfile.ZipFile(p) as archive:
            for info in archive.infolist():
                if info.filename.endswith(".npy"):
                    with archive.open(info) as fh:
                        _check_header(fh, info.file_size, limit, f"member {info.filename}: ")
        return
    with p.open("rb") as fh:
        _check_header(fh, p.stat().st_size, limit, "")


def _check_header(fh, size: int, limit: int, member: str) -> None:
    import numpy as np

    version = np.lib.format.read_magic(fh)
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _fortran, dtype = read(fh)
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
