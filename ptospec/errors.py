"""The one exception family every user-facing failure goes through.

Each error names *where* (a file:line, a CLI argument, a position in a string) and
*what* (a stable rule id plus a sentence), so the CLI can print it on one line.
"""

from __future__ import annotations


class PtospecError(Exception):
    """Base of every error ptospec reports to a user."""

    def __init__(self, message: str, *, where: str | None = None, rule: str | None = None):
        super().__init__(message)
        self.message = message
        self.where = where
        self.rule = rule

    def one_line(self) -> str:
        parts = []
        if self.where:
            parts.append(f"{self.where}:")
        if self.rule:
            parts.append(f"[{self.rule}]")
        parts.append(self.message)
        return " ".join(parts)

    def __str__(self) -> str:
        return self.one_line()


class SpecError(PtospecError):
    """A spec file is malformed: YAML, schema or cross-reference problem."""


class ExprError(PtospecError):
    """An expression does not parse or does not evaluate."""


class UnknownValue(PtospecError):
    """An expression needs a value only known at run time (e.g. a dynamic valid shape)."""


class TileError(PtospecError):
    """A tile descriptor or tile data is malformed."""


class AsmError(PtospecError):
    """An assembly line does not parse or does not match the op."""


class InvocationError(PtospecError):
    """An invocation is rejected (unknown op/mode/profile, missing operand, illegal configuration)."""
