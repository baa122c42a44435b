"""Classify clang's output for a batched translation unit.

A ``static_assert`` that fails is the simulator rejecting a configuration; any other error is a
harness problem.  In a unit holding many variants, each error is attributed to the variant whose
lines contain the last location of its instantiation chain (the error itself or its ``note: in
instantiation of ... requested here`` lines) in the unit's own file; clang prints that backtrace only
with the first error of an instantiation, so a later error without notes inherits the attribution of
the one before it.

A class template is instantiated once per unit, so when two variants use the same ill-formed tile
type only the first gets the ``static_assert``; the second sees follow-on errors (``no member named
'data'``).  ``classify`` therefore blames only ``static_assert`` variants when there are any; the
other failing variants are left for the next round, after the rejected ones are removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LOC = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<sev>fatal error|error|warning|note): (?P<msg>.*)$")
_BARE = re.compile(r"^(?P<file>[^:\s]+): (?P<sev>fatal error|error): (?P<msg>.*)$")
_STATIC = re.compile(r"^static assertion failed(?: due to requirement '(?P<req>.*?)')?(?:: (?P<msg>.*))?$")


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    severity: str  # error | fatal error | warning | note
    message: str
    notes: tuple[Diagnostic, ...] = ()

    @property
    def is_static_assert(self) -> bool:
        return self.message.startswith("static assertion failed")

    def where(self, root: str = "") -> str:
        path = self.file
        if root and path.startswith(root.rstrip("/") + "/"):
            path = path[len(root.rstrip("/")) + 1:]
        return f"{path}:{self.line}" if self.line else path

    def summary(self, root: str = "") -> str:
        """One line: ``static_assert failed at include/...:79: <message>`` or ``<where>: error: ...``."""
        m = _STATIC.match(self.message)
        if m:
            text = m.group("msg") or (f"requirement {m.group('req')!r}" if m.group("req") else "")
            return f"static_assert failed at {self.where(root)}: {' '.join(text.split())}"
        return f"{self.where(root)}: {self.severity}: {self.message}"


def parse(output: str) -> list[Diagnostic]:
    """Errors (with their notes) in clang's output, in order.  Warnings are dropped."""
    out: list[Diagnostic] = []
    current: Diagnostic | None = None
    notes: list[Diagnostic] = []

    def flush() -> None:
        nonlocal current, notes
        if current is not None and current.severity != "warning":
            out.append(Diagnostic(current.file, current.line, current.severity, current.message, tuple(notes)))
        current, notes = None, []

    for raw in output.splitlines():
        m = _LOC.match(raw)
        if m:
            diag = Diagnostic(m["file"], int(m["line"]), m["sev"], m["msg"])
            if diag.severity == "note":
                if current is not None:
                    notes.append(diag)
                continue
            flush()
            current = diag
            continue
        b = _BARE.match(raw)
        if b and not raw.startswith("In file included from"):
            flush()
            current = Diagnostic(b["file"], 0, b["sev"], b["msg"])
    flush()
    return out


def attribute(diag: Diagnostic, unit_file: str, spans: dict[str, tuple[int, int]]) -> str | None:
    """The variant whose lines hold the outermost location of ``diag`` in ``unit_file``, if any."""
    for d in reversed((diag, *diag.notes)):
        if d.file == unit_file or d.file.endswith("/" + unit_file):
            for name, (first, last) in spans.items():
                if first <= d.line <= last:
                    return name
            return None
    return None


@dataclass
class Verdict:
    """What one compile says about the variants of a unit."""

    rejected: dict[str, str] = field(default_factory=dict)  # variant -> static_assert summary
    failed: dict[str, str] = field(default_factory=dict)  # variant -> other error (only when nothing was rejected)
    unattributed: list[str] = field(default_factory=list)  # errors outside every variant

    @property
    def clean(self) -> bool:
        return not (self.rejected or self.failed or self.unattributed)


def classify(output: str, unit_file: str, spans: dict[str, tuple[int, int]], root: str = "") -> Verdict:
    """Rejections (static_assert) and harness errors of one failed compile of a unit."""
    verdict = Verdict()
    other: dict[str, str] = {}
    previous: str | None = None
    for diag in parse(output):
        if diag.severity not in ("error", "fatal error"):
            continue
        name = attribute(diag, unit_file, spans)
        if name is None and not diag.notes and diag.line and previous is not None:
            name = previous  # clang prints an instantiation's backtrace only with its first error
        previous = name
        if name is None:
            verdict.unattributed.append(diag.summary(root))
        elif diag.is_static_assert:
            verdict.rejected.setdefault(name, diag.summary(root))
        else:
            other.setdefault(name, diag.summary(root))
    if not verdict.rejected:
        verdict.failed = other
    return verdict
