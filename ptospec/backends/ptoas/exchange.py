"""The arguments of a runnable case function (``case_function(..., io=True)``) made from a case's inputs, and
the output tiles read back from the pointer arguments after a run (by our program layer or by the compiled
C++ of the assembler)."""

from __future__ import annotations

import numpy as np

from ...executor import numpy_dtype
from ...model import Database, Mode
from ...tile import GlobalDesc, TileDesc
from .module import Function


def _stored(t: TileDesc, arr: np.ndarray) -> np.ndarray:
    """A tile's logical rows x cols array as its ``_gm`` buffer holds it (column-major: the transpose)."""
    return np.ascontiguousarray(arr if t.blayout == "RowMajor" else arr.T)


def program_args(db: Database, fn: Function, tiles: dict, inputs: dict[str, object]) -> dict[str, object]:
    """Argument name -> array or number, for ``run_program`` or a driver."""
    args: dict[str, object] = {}
    for a in fn.args:
        d = tiles[a.operand]
        if a.role == "pointer":
            dt = numpy_dtype(db, d.dtype)
            if isinstance(d, TileDesc):
                given = inputs.get(a.operand)
                arr = np.zeros(d.shape, dt) if given is None else np.asarray(given, dt)  # a tmp tile: any contents
                args[a.name] = _stored(d, arr)
            else:
                args[a.name] = np.asarray(inputs[a.operand], dt).reshape(-1).copy()
        elif a.role == "valid_row":
            args[a.name] = int(d.valid_row)
        elif a.role == "valid_col":
            args[a.name] = int(d.valid_col)
        else:
            args[a.name] = inputs[a.operand]
    return args


def outputs_from(mode: Mode, fn: Function, tiles: dict, buffers: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Operand -> its final contents (a tile as its logical rows x cols array, a view's whole buffer)."""
    outs = {o.name for o in mode.operands if o.role == "out"}
    result: dict[str, np.ndarray] = {}
    for a in fn.args:
        if a.role != "pointer" or a.operand not in outs:
            continue
        d = tiles[a.operand]
        buf = np.asarray(buffers[a.name])
        if isinstance(d, TileDesc):
            stored = buf.reshape((d.rows, d.cols) if d.blayout == "RowMajor" else (d.cols, d.rows))
            result[a.operand] = stored if d.blayout == "RowMajor" else stored.T
        elif isinstance(d, GlobalDesc):
            result[a.operand] = buf.reshape(-1)
    return result
