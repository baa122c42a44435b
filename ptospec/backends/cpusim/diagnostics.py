"""Classify clang's output for a batched translation unit.

A ``static_assert`` that fails is the simulator rejecting a configuration.  In a unit holding many
variants, each error is attributed to the variant whose lines contain the last location of its
instantiation chain (the error itself or its ``note: in instantiation of ... requested here`` lines) in
the unit's own file; clang prints that backtrace only with the first error of an instantiation, so a
later error without notes inherits the attribution of the one before it.

Any other error is a *refusal* when it comes from the call of the intrinsic alone, otherwise a harness
error.  A refusal is an error

* whose instantiation chain starts at the variant's call statement (not at a tile declaration or a
  harness helper),
* with no location of the chain in the harness header (the library reaches it only through
  ``cce::printf``), and
* located in a header (the library or the standard library it uses), or, when it is located in the
  unit, at the call itself as overload resolution on the intrinsic (``no matching function for call to
  'TADD'``, ``call to 'TCMPS' is ambiguous``).

A variant is refused when every error blamed on it is a refusal.  Whether a refusal is the
simulator rejecting the operand types is decided by the backend, which also needs the same driver to
compile for other operand types of the op mode (see ``outcome.from_build``).

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


def _in_file(d: Diagnostic, name: str) -> bool:
    return d.file == name or d.file.endswith("/" + name)


def outermost(diag: Diagnostic, unit_file: str) -> int | None:
    """The line of the outermost location of ``diag``'s instantiation chain in ``unit_file``, if any."""
    for d in reversed((diag, *diag.notes)):
        if _in_file(d, unit_file):
            return d.line
    return None


def attribute(diag: Diagnostic, unit_file: str, spans: dict[str, tuple[int, int]]) -> str | None:
    """The variant whose lines hold the outermost location of ``diag`` in ``unit_file``, if any."""
    line = outermost(diag, unit_file)
    if line is None:
        return None
    for name, (first, last) in spans.items():
        if first <= line <= last:
            return name
    return None


_OVERLOAD = re.compile(r"^(?:no matching function for call to '(?P<a>[^']+)'|call to '(?P<b>[^']+)' is ambiguous)$")


def is_refusal(diag: Diagnostic, unit_file: str, root_line: int | None, call: tuple[int, str],
               harness_header: str) -> bool:
    """Whether a non-static_assert error comes from the call of the intrinsic alone (see the module doc).

    ``root_line`` is the outermost unit line of the error's chain (inherited for an error printed without
    its backtrace); ``call`` the variant's call line and callee."""
    line, callee = call
    if diag.is_static_assert or root_line != line:
        return False
    if any(_in_file(d, harness_header) for d in (diag, *diag.notes)):
        return False
    if _in_file(diag, unit_file):
        m = _OVERLOAD.match(diag.message)
        return bool(m) and diag.line == line and (m["a"] or m["b"]) == callee
    return bool(diag.line)


@dataclass
class Verdict:
    """What one compile says about the variants of a unit."""

    rejected: dict[str, str] = field(default_factory=dict)  # variant -> static_assert summary
    # only when nothing was rejected: variant -> first error, when each of its errors is a refusal ...
    refused: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # ... else its first error that is not one
    unattributed: list[str] = field(default_factory=list)  # errors outside every variant

    @property
    def clean(self) -> bool:
        return not (self.rejected or self.refused or self.failed or self.unattributed)


def classify(output: str, unit_file: str, spans: dict[str, tuple[int, int]], root: str = "",
             calls: dict[str, tuple[int, str]] | None = None, harness_header: str = "") -> Verdict:
    """Rejections (static_assert), refusals and harness errors of one failed compile of a unit.

    ``calls`` gives each variant's call line and callee; without it no error is a refusal."""
    verdict = Verdict()
    refusals: dict[str, str] = {}
    other: dict[str, str] = {}
    previous: tuple[str | None, int | None] = (None, None)
    for diag in parse(output):
        if diag.severity not in ("error", "fatal error"):
            continue
        name, line = attribute(diag, unit_file, spans), outermost(diag, unit_file)
        if name is None and not diag.notes and diag.line and previous[0] is not None:
            name, line = previous  # clang prints an instantiation's backtrace only with its first error
        previous = (name, line)
        if name is None:
            verdict.unattributed.append(diag.summary(root))
        elif diag.is_static_assert:
            verdict.rejected.setdefault(name, diag.summary(root))
        elif calls and name in calls and harness_header and is_refusal(diag, unit_file, line, calls[name],
                                                                        harness_header):
            refusals.setdefault(name, diag.summary(root))
        else:
            other.setdefault(name, diag.summary(root))
    if not verdict.rejected:
        verdict.failed = other
        verdict.refused = {n: m for n, m in refusals.items() if n not in other}
    return verdict
