"""A minimal backend for the conformance suites (see docs/backends.md).

It delegates to the NumPy reference executor; a real backend would compile and run the
instruction on a simulator or device here.  Run it with::

    pytest generated_tests --pto-backend=tests/example_backend.py:ExampleBackend --pto-profile=a5
"""

from __future__ import annotations

from ptospec.conformance.backend import Backend, Capabilities, Invocation, Result
from ptospec.executor import execute
from ptospec.model import Database
from ptospec.validator import validate


class ExampleBackend(Backend):
    name = "example"

    def __init__(self, db: Database) -> None:  # takes ``db``: the plugin passes the spec database
        self.db = db

    def capabilities(self) -> Capabilities:
        # this backend claims the A5 and CPU profiles, all ops, and no 64-bit or fp8 types
        return Capabilities(profiles=("a5", "cpu"),
                            dtypes=("f16", "bf16", "f32", "i8", "u8", "i16", "u16", "i32", "u32"))

    def run(self, case: Invocation) -> Result:
        report = validate(self.db, case.op, case.mode, case.profile, case.tiles)
        if report.violations:  # a compiler error or a failed runtime check
            return Result.reject("; ".join(v.one_line() for v in report.violations),
                                 tuple(v.rule for v in report.violations))
        outputs = execute(self.db, case.op, case.mode, case.profile, case.tiles, case.inputs)
        return Result.ok(outputs)
