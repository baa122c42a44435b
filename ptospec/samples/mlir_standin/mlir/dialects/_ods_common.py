"""What MLIR's generated operation classes import (``_ods_common``), for the stand-in's ``mlir.ir``."""

from __future__ import annotations

import types

from .. import ir

_OPERATIONS: dict[str, type] = {}


def register_dialect(cls):
    return cls


def register_operation(dialect, replace: bool = False):
    def register(cls):
        _OPERATIONS[cls.OPERATION_NAME] = cls
        return cls
    return register


_cext = types.SimpleNamespace(ir=ir, register_dialect=register_dialect, register_operation=register_operation)


def get_default_loc_context(location=None):
    if location is not None:
        return location.context
    return ir.Context.current


def get_op_result_or_value(arg):
    if isinstance(arg, ir.Value):
        return arg
    op = getattr(arg, "operation", None)
    if isinstance(op, ir.Operation):
        return op.result
    raise TypeError(f"expected an operation or a value, got {type(arg).__name__}")


def get_op_results_or_values(arg):
    op = getattr(arg, "operation", None)
    if isinstance(op, ir.Operation):
        return list(op.results)
    return [get_op_result_or_value(a) for a in arg]


def get_op_result_or_op_results(op):
    op = op.operation
    if len(op.results) == 1:
        return op.results[0]
    return op if not op.results else list(op.results)


def segmented_accessor(elements, raw_segments, idx: int):
    sizes = list(raw_segments)
    start = sum(sizes[:idx])
    return elements[start:start + sizes[idx]]


def equally_sized_accessor(elements, n_simple: int, n_variadic: int, n_preceding_simple: int,
                           n_preceding_variadic: int):
    total_variadic = len(elements) - n_simple
    group = total_variadic // n_variadic
    start = n_preceding_simple + n_preceding_variadic * group
    return start, group
