"""Which function handles which operation of the dialect (the database's instructions and arith are
dispatched by the walker itself): the tables of ``structure``, ``layer``, ``sync``, ``fifo`` and
``lowering``, registered with the walker when this module is imported (``api`` imports it)."""

from __future__ import annotations

from . import fifo, layer, lowering, structure
from .spec import ProgramSpec
from .sync import synchronise
from .walker import register_handlers


def dialect_handlers(db, spec: ProgramSpec) -> dict:
    """Every operation handled outside the walker, with its handler."""
    sync = {f"pto.{name}": (lambda w, op, name=name: synchronise(w, op, name)) for name in spec.sync}
    return {**structure.HANDLERS, **layer.HANDLERS, **sync, **fifo.handlers(spec), **lowering.handlers(db, spec)}


register_handlers(dialect_handlers)
