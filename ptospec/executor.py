"""The NumPy reference executor: runs an op's semantics on concrete tiles.

Tiles are logical ``rows x cols`` arrays (the memory layout is a backend's
business).  Only the destination's valid region is written; everything else of
an output keeps its initial contents.  Invocations the validator rejects are
refused.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .errors import InvocationError, TileError
from .expr.evaluate import evaluate
from .expr.vectorize import execute_statement, numpy_dtype_of
from .model import Database
from .tile import AttrDesc, ScalarDesc, TileDesc
from .validator import Report, make_scope, require_legal, resolve, validate


def numpy_dtype(db: Database, dtype: str) -> np.dtype:
    """NumPy dtype (ml_dtypes for bfloat16 and fp8) of an ISA dtype name."""
    return numpy_dtype_of(db.isa, dtype)


def coerce_array(db: Database, name: str, desc: TileDesc, array) -> np.ndarray:
    """Check an input array against its tile and return it in the tile's dtype."""
    want = numpy_dtype(db, desc.dtype)
    arr = np.asarray(array)
    if arr.dtype != want:
        if arr.dtype.kind == "V" and arr.dtype.itemsize == want.itemsize:
            arr = arr.view(want)  # raw bytes saved by np.save for ml_dtypes types
        elif arr.dtype.kind in "biuf" and (arr.dtype.kind != "f" or want.kind == "f" or want.kind == "V"):
            arr = arr.astype(want)
        else:
            raise TileError(f"{name}: array dtype {arr.dtype} does not match tile dtype {desc.dtype}",
                            rule="run.dtype")
    if arr.shape != desc.shape:
        raise TileError(f"{name}: array shape {arr.shape} does not match tile shape {desc.shape}",
                        rule="run.shape")
    return arr


def execute(
    db: Database,
    op_name: str,
    mode_name: str | None,
    profile: str,
    operands: Mapping[str, TileDesc | ScalarDesc],
    data: Mapping[str, object],
    report: Report | None = None,
) -> dict[str, np.ndarray]:
    """Run the op; ``data`` holds arrays for tiles (outputs optional: their initial contents)
    and numbers for scalars.  Returns the output tiles, whole.  ``report``: the validator's report on
    exactly these operands, when the caller has it already (it is not computed again)."""
    op, mode = resolve(db, op_name, mode_name, profile, operands)
    if report is None or (report.op, report.mode, report.profile) != (op.name, mode.name, profile):
        report = validate(db, op.name, mode.name, profile, operands)
    require_legal(report)
    if report.deferred:
        raise InvocationError(
            f"cannot execute with unknown valid shapes; give concrete valid=RxC ({', '.join(report.deferred)})",
            rule="run.dynamic",
        )
    arrays: dict[str, np.ndarray] = {}
    outputs: dict[str, np.ndarray] = {}
    scope = make_scope(db, op, mode, profile, operands)
    for o in mode.operands:
        desc = operands[o.name]
        if isinstance(desc, AttrDesc):
            continue  # in scope.attrs
        if isinstance(desc, ScalarDesc):
            if o.name not in data:
                raise InvocationError(f"missing value for scalar operand {o.name}", rule="run.missing-input")
            scope.values[o.name] = numpy_dtype(db, desc.dtype).type(data[o.name])
            continue
        if o.role == "out":
            initial = data.get(o.name)
            arr = (np.zeros(desc.shape, numpy_dtype(db, desc.dtype)) if initial is None
                   else coerce_array(db, o.name, desc, initial).copy())
            outputs[o.name] = arr
            arrays[o.name] = arr
        elif o.role == "tmp":
            arrays[o.name] = np.zeros(desc.shape, numpy_dtype(db, desc.dtype))
        else:
            if o.name not in data:
                raise InvocationError(f"missing input data for {o.name}", rule="run.missing-input")
            arrays[o.name] = coerce_array(db, o.name, desc, data[o.name])
    # Semantics read the inputs as they were before any output is written.
    snapshot = {n: (a.copy() if n in outputs else a) for n, a in arrays.items()}
    for stmt in mode.semantics:
        if stmt.when is not None and not evaluate(stmt.when, scope):
            continue
        execute_statement(stmt, scope, snapshot, outputs)
    return outputs
