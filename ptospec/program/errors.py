"""Errors of the program layer: every one names its place in the program (file:line:col) and a rule id."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import PtospecError


@dataclass(frozen=True)
class SourcePos:
    path: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


class ProgramError(PtospecError):
    """A program does not parse, names something unknown, or breaks a rule while it is checked or run."""

    def __init__(self, message: str, rule: str, pos: SourcePos | None):
        super().__init__(message, where=str(pos) if pos else None, rule=rule)
        self.pos = pos


class RuleViolation(ProgramError):
    """A statement breaks rules of the database or the program layer (not a defect of the input's form):
    ``findings`` holds every (rule, message) the statement breaks, the first one is the error's own."""

    def __init__(self, findings: list[tuple[str, str]], pos: SourcePos | None):
        rule, message = findings[0]
        super().__init__(message, rule, pos)
        self.findings = list(findings)

    def lines(self) -> list[str]:
        where = f"{self.pos}: " if self.pos else ""
        return [f"{where}[{rule}] {message}" for rule, message in self.findings]
