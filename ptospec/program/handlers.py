"""Which function handles which operation of the dialect (the database's instructions and arith are
dispatched by the walker itself): the tables of ``structure``, ``layer``, ``comm``, ``sync``, ``fifo``,
``lowering`` and ``memrefs``, registered with the walker when this module is imported (``api`` imports it)."""

from __future__ import annotations

from . import comm, fifo, layer, lowering, memrefs, structure
from .errors import ProgramError
from .spec import ProgramSpec
from .sync import synchronise
from .values import UNKNOWN
from .walker import register_handlers


def dialect_handlers(db, spec: ProgramSpec) -> dict:
    """Every operation handled outside the walker, with its handler."""
    sync = {f"pto.{name}": (lambda w, op, name=name: synchronise(w, op, name)) for name in spec.sync}
    sections = {name: _section for name in spec.sections}
    return {**structure.HANDLERS, **layer.HANDLERS, **comm.HANDLERS, **sync, **sections, **fifo.handlers(spec),
            **lowering.handlers(db, spec), **memrefs.handlers(spec), **_unimplemented(db, spec)}


def _unimplemented(db, spec: ProgramSpec) -> dict:
    """``unimplemented_operations``: pto.<name> of each unimplemented page, refused with what its record says."""
    if not spec.unimplemented_rule:
        return {}

    def refuse(w, op, page) -> None:
        w.stats.instructions += 1
        w.violation(op.pos, spec.unimplemented_rule,
                    f"{op.name}: pto-isa declares no {page.name} ({page.page}: {page.headers_show['en']})")
        for result in op.results:
            w.env[result] = UNKNOWN
    return {f"pto.{page.name.lower()}": (lambda w, op, page=page: refuse(w, op, page))
            for page in db.isa.unimplemented_pages}


def _section(w, op) -> None:
    """``pto.section.cube { ... }`` / ``pto.section.vector { ... }`` (``sections``): the body runs in order."""
    if len(op.regions) != 1 or len(op.regions[0]) != 1 or op.regions[0][0].args:
        raise ProgramError(f"{op.name} needs one body region of one block without arguments", "program.syntax",
                           op.pos)
    w.run_block(op.regions[0][0], [])


register_handlers(dialect_handlers)
