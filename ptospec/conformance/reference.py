"""The built-in backend: the NumPy reference executor, rejecting what the validator rejects."""

from __future__ import annotations

from ..executor import execute
from ..model import Database
from ..validator import validate
from .backend import Backend, Capabilities, Invocation, Result


class ReferenceBackend(Backend):
    name = "reference"

    def __init__(self, db: Database | None = None) -> None:
        if db is None:
            from ..load.database import load_database

            db = load_database()
        self.db = db

    def capabilities(self) -> Capabilities:
        return Capabilities(profiles=tuple(self.db.isa.profiles))

    def run(self, case: Invocation) -> Result:
        report = validate(self.db, case.op, case.mode, case.profile, case.tiles)
        if report.violations:
            return Result.reject("; ".join(v.one_line() for v in report.violations),
                                 tuple(v.rule for v in report.violations))
        return Result.ok(execute(self.db, case.op, case.mode, case.profile, case.tiles, case.inputs))
