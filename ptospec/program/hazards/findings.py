"""What the race detector reports: hazards (two unordered conflicting accesses) and protocol errors (flags
and tokens used in a way that cannot work on the chip), each with what would fix it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SourcePos

KINDS = {"RAW": "read after write", "WAR": "write after read", "WAW": "write after write"}


@dataclass(frozen=True)
class Site:
    """One access: where, which instruction, on which pipe, through which operand."""

    pos: SourcePos | None
    statement: str  # pto.tload
    pipe: str  # V, MTE2 ...
    operand: str
    core: int = 0

    def __str__(self) -> str:
        core = f" (block {self.core})" if self.core else ""
        return f"{self.pos}: {self.statement} {self.operand} on {self.pipe}{core}"


@dataclass
class Hazard:
    """Two conflicting accesses on pipes that no synchronisation orders (``may``: found by the static check
    where the program's structure allows it but values known only at run time decide)."""

    kind: str  # RAW | WAR | WAW
    first: Site  # the earlier access in program order
    second: Site
    buffer: str  # the memory and the bytes (or elements) both touch
    fix: str  # the synchronisation that would order them
    count: int = 1  # how many times the run met this pair (loop iterations)
    may: bool = False

    def key(self) -> tuple:
        return (self.kind, self.first.pos, self.second.pos, self.first.operand, self.second.operand,
                self.first.core, self.second.core)

    def lines(self) -> list[str]:
        times = f", {self.count} times" if self.count > 1 else ""
        may = "may be a " if self.may else ""
        head = (f"{self.second.pos}: [hazard.{self.kind.lower()}] {may}{KINDS[self.kind]} race on {self.buffer}"
                f"{times}")
        return [head, f"    first:  {self.first}", f"    second: {self.second}", f"    fix:    {self.fix}"]


@dataclass(frozen=True)
class Protocol:
    """A synchronisation protocol error (hazard.unwaited-set, hazard.unset-wait, hazard.event-in-flight, ...)."""

    rule: str
    pos: SourcePos | None
    message: str

    def one_line(self) -> str:
        return f"{self.pos}: [{self.rule}] {self.message}"


@dataclass
class Report:
    """Everything one detector found."""

    hazards: list[Hazard] = field(default_factory=list)
    protocol: list[Protocol] = field(default_factory=list)
    auto_sync: bool = False  # no explicit synchronisation: written for the assembler's --enable-insert-sync
    synchronisation: int = 0  # synchronisation instructions met
    accesses: int = 0  # instruction operands checked
    notes: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.hazards and not self.protocol

    def lines(self) -> list[str]:
        out = []
        for p in self.protocol:
            out.append(p.one_line())
        for h in self.hazards:
            out += h.lines()
        out += self.notes
        return out

    def summary(self, what: str) -> str:
        if self.auto_sync:
            return (f"hazards ({what}): no explicit synchronisation: the kernel is written for the assembler's "
                    "automatic synchronisation (ptoas --enable-insert-sync), which orders its pipes; "
                    f"{len(self.hazards)} unordered pair(s) it will have to order, not reported as races")
        return (f"hazards ({what}): {len(self.hazards)} race(s), {len(self.protocol)} protocol error(s); "
                f"{self.synchronisation} synchronisation instruction(s), {self.accesses} access(es) checked")


def flag_fix(first: str, second: str, event: int) -> str:
    """The set/wait pair that orders an access on pipe ``first`` before one on pipe ``second`` (enumerators)."""
    return (f"pto.set_flag[<{first}>, <{second}>, <EVENT_ID{event}>] after the first access and "
            f"pto.wait_flag[<{first}>, <{second}>, <EVENT_ID{event}>] before the second")


def barrier_fix(pipe: str) -> str:
    return f"pto.barrier <{pipe}> between them (dependent instructions of one pipe need it on this profile)"


def cross_core_fix() -> str:
    return "pto.syncall (a barrier across the cores) between them, or give the blocks disjoint memory"
