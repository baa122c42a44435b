"""Load ``specs/`` into the frozen model, checking schema and cross-references: the public names of
``ptospec.load``, whose modules each build one section of a spec file.

Every problem becomes a ``SpecError`` naming ``file:line`` and a rule id.  ``load_database`` collects all of
them before failing, so ``ptospec lint`` reports every broken file in one run.
"""

from __future__ import annotations

from .load.crosschecks import TILE_OPS_DIR, check_mnemonics, check_unimplemented, op_page
from .load.database import load_database
from .load.files import SPEC_ENV, display_path, find_specs_root, kind_files, op_files
from .load.isa import load_isa
from .load.kinds import load_kind, load_kinds
from .load.op import load_op
from .load.problems import DatabaseErrors, Issues, load_each
from .load.schema import check_schema, schema

__all__ = [
    "SPEC_ENV", "TILE_OPS_DIR", "DatabaseErrors", "Issues", "check_mnemonics", "check_schema",
    "check_unimplemented", "display_path", "find_specs_root", "kind_files", "load_database", "load_each",
    "load_isa", "load_kind", "load_kinds", "load_op", "op_files", "op_page", "schema",
]
