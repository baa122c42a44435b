"""The methods ``dataclasses`` writes for ptospec's classes, compiled once and kept on disk between processes.

``@dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__`` and
``__delattr__`` as source text and compiles each one at every start: some five hundred compilations, half of
the time ptospec's modules take to import.  ``install`` hands ``dataclasses`` the code compiled from the same
text by an earlier process instead: its ``exec`` of a text written for a class of this package looks the text up
in a table read from the database cache's directory, and compiles it as before when it is not there (the table
is written again at exit).  A text is its own key, so the table is never stale; one file per version of the
code keeps it from growing.  Code objects are code: the file is read under the database cache's rules
(``private``: a file of the user's own that nobody else may write, in a directory only the user may write),
and nothing is read or written anywhere else.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import marshal
import sys
import types
from pathlib import Path

from .cachedir import code_fingerprint, default_dir
from .private import private_dir, read_private, write_private

KEEP = 12  # files kept (the most recent), as for the database
PACKAGE = __name__.rpartition(".")[0]
_codes: dict[str, types.CodeType] = {}  # text -> its code
_compiled: list[str] = []  # texts this process compiled


def install() -> None:
    """Serve ``dataclasses`` from the table kept in the database cache's directory, when there is a trusted one."""
    if dataclasses.__dict__.get("exec") is _exec:
        return
    directory = default_dir()
    if directory is None or private_dir(directory) is not None:
        return
    path = directory / f"classcode-{code_fingerprint()}.marshal"
    _codes.update(read(path))
    dataclasses.exec = _exec  # a global of the module: the name its functions look ``exec`` up by
    atexit.register(_save, path)


def read(path: Path) -> dict[str, types.CodeType]:
    """The table in ``path`` when it is a private file holding one, else nothing."""
    data = read_private(path)
    if data is None:
        return {}
    try:
        found = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {text: code for text, code in found.items() if type(text) is str and type(code) is types.CodeType}


def _exec(source, globals=None, locals=None, /):  # the builtin's signature
    if globals is None:  # as the builtin: the caller's namespaces
        caller = sys._getframe(1)
        globals, locals = caller.f_globals, caller.f_locals if locals is None else locals
    if type(source) is str and isinstance(globals, dict) and str(globals.get("__name__", "")).startswith(
            PACKAGE + "."):
        code = _codes.get(source)
        if code is None:  # compiled as the builtin compiles a text: no future statement of this module inherited
            code = _codes[source] = compile(source, "<string>", "exec", dont_inherit=True)
            _compiled.append(source)
        source = code
    return builtins.exec(source, globals, locals)


def _save(path: Path) -> None:
    if not _compiled:
        return
    with contextlib.suppress(OSError, ValueError):
        write_private(path, marshal.dumps({**read(path), **_codes}))  # what another process added meanwhile too
        olds = sorted(path.parent.glob("classcode-*.marshal"), key=lambda p: p.stat().st_mtime)[:-KEEP]
        for old in olds:
            old.unlink(missing_ok=True)
