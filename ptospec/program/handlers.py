"""Which function handles which operation of the dialect (the database's instructions, arith and the
synchronisation instructions are dispatched by the walker itself)."""

from __future__ import annotations

from .layer import (
    _addptr,
    _alloc_tile,
    _get_tensor_view_dim,
    _get_tensor_view_stride,
    _make_tensor_view,
    _partition_view,
    _set_validshape,
    _subset,
    _tassign,
    _tensor_view_addr,
    _tile_buf_addr,
    _vecscope,
)
from .spec import program_spec
from .structure import _call, _for, _func, _if, _module, _return, _while, _yield_outside
from .sync import synchronise

HANDLERS = {
    "module": _module, "func.func": _func, "return": _return, "func.return": _return,
    "func.call": _call, "call": _call, "scf.for": _for, "scf.if": _if, "scf.while": _while,
    "scf.yield": _yield_outside, "scf.condition": _yield_outside,
    "pto.make_tensor_view": _make_tensor_view, "pto.partition_view": _partition_view,
    "pto.get_tensor_view_dim": _get_tensor_view_dim, "pto.addptr": _addptr, "pto.alloc_tile": _alloc_tile,
    "pto.set_validshape": _set_validshape, "pto.subset": _subset, "pto.tassign": _tassign,
    "pto.get_tensor_view_stride": _get_tensor_view_stride, "pto.tensor_view_addr": _tensor_view_addr,
    "pto.tile_buf_addr": _tile_buf_addr, "pto.vecscope": _vecscope, "pto.strict_vecscope": _vecscope,
}


def synchronisation_handlers(db) -> dict:
    """A handler per synchronisation instruction of the database's program layer (``pto.<name>``)."""
    return {f"pto.{name}": (lambda w, op, name=name: synchronise(w, op, name)) for name in program_spec(db).sync}
