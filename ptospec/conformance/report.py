"""The op x dtype x profile pass/fail/skip matrix of a run: a summary line, the table, JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..outputs import replace_file

OUTCOMES = ("passed", "failed", "skipped")


@dataclass
class Matrix:
    cells: dict[tuple[str, str, str], dict[str, int]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def add(self, key: tuple[str, str, str], outcome: str, nodeid: str = "") -> None:
        cell = self.cells.setdefault(key, dict.fromkeys(OUTCOMES, 0))
        cell[outcome] += 1
        if outcome == "failed" and nodeid:
            self.failures.append(nodeid)

    def lines(self) -> list[str]:
        head = f"{'op':<16} {'dtype':<10} {'profile':<8} {'pass':>6} {'fail':>6} {'skip':>6}"
        out = [head, "-" * len(head)]
        for (op, dtype, profile), c in sorted(self.cells.items()):
            out.append(f"{op:<16} {dtype:<10} {profile:<8} {c['passed']:>6} {c['failed']:>6} {c['skipped']:>6}")
        totals = {o: sum(c[o] for c in self.cells.values()) for o in OUTCOMES}
        out.append(f"{'total':<36} {totals['passed']:>6} {totals['failed']:>6} {totals['skipped']:>6}")
        return out

    def summary(self) -> str:
        """One line: outcome totals, and how many cells (and ops) the run covered or failed."""
        totals = {o: sum(c[o] for c in self.cells.values()) for o in OUTCOMES}
        ops = {op for op, _dtype, _profile in self.cells}
        failing = sum(1 for c in self.cells.values() if c["failed"])
        text = (f"{totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped in "
                f"{len(self.cells)} op x dtype x profile cells of {len(ops)} ops")
        return text + (f", {failing} cells with failures" if failing else "")

    def to_json(self, backend: str) -> dict:
        return {
            "backend": backend,
            "matrix": [{"op": op, "dtype": dtype, "profile": profile, **c}
                       for (op, dtype, profile), c in sorted(self.cells.items())],
            "failures": self.failures,
        }

    def write(self, path: str, backend: str) -> None:
        replace_file(path, json.dumps(self.to_json(backend), indent=2) + "\n")
