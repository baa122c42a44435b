"""Worker processes for a runner's batch: deriving cases and making their data, then checking them.

Both steps are pure Python over NumPy (the validator, the data generator, the reference executor) and
scale with the number of cores.  Workers are forked from the session's process, so they share its
database, backend results and data without copying; only their answers travel back (pickled).
Checking starts after the backend's ``prepare`` and runs while pytest walks through the tests: a
test takes the verdict of its case from the workers (see ``Runner.check``).
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from ..model import Database
from ..workers import fork_pool
from .cases import Case
from .data import make_inputs
from .derive import Derived
from .failures import ConformanceFailure, Unsupported


class Runner(Protocol):
    """What the workers use of the session's runner (``runner.Runner``)."""

    db: Database
    tally: dict[str, int]
    divergences: list
    parallel_worker: bool

    def derived_of(self, case: Case, tiles: dict) -> list[Derived]: ...

    def check(self, case: Case) -> None: ...

CHUNK = 24  # cases per task

_RUNNER: Runner | None = None  # the forked workers' copy of the session's runner


@dataclass(frozen=True)
class Verdict:
    """How checking one fixed case (and its derived cases) ended in a worker."""

    outcome: str  # passed | failed | skipped | error
    message: str  # failure text, skip reason, or the worker's traceback
    divergences: tuple  # Divergence records, artifacts stripped (the session re-attaches them)
    tally: dict[str, int]


def usable(workers: int) -> bool:
    """Whether worker processes can be used: more than one asked for, and ``fork`` available."""
    return workers > 1 and "fork" in multiprocessing.get_all_start_methods()


def _pool(workers: int):
    return fork_pool(workers)


def _chunks(items: Sequence, size: int = CHUNK) -> list[list]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


# ------------------------------------------------------------------ deriving


def _derive_chunk(chunk: list[tuple[Case, dict]]) -> list[list[tuple[Derived, dict]]]:
    runner = _RUNNER
    assert runner is not None
    out = []
    for case, tiles in chunk:
        spec = runner.db.op(case.op)
        mode = spec.mode(case.mode)
        out.append([(d, make_inputs(runner.db, spec, mode, d.tiles, d.seed, d.pattern))
                    for d in runner.derived_of(case, tiles)])
    return out


def derive_all(runner: Runner, cases: Sequence[tuple[Case, dict]], workers: int
               ) -> list[list[tuple[Derived, dict]]]:
    """For each (fixed positive case, parsed tiles): its derived cases with their data."""
    global _RUNNER
    if not usable(workers) or len(cases) < 2 * CHUNK:
        _RUNNER = runner
        try:
            return _derive_chunk(list(cases))
        finally:
            _RUNNER = None
    _RUNNER = runner
    try:
        with _pool(workers) as pool:
            parts = pool.map(_derive_chunk, _chunks(cases), chunksize=1)
    finally:
        _RUNNER = None
    return [item for part in parts for item in part]


# ------------------------------------------------------------------ checking


def _check_chunk(chunk: list[Case]) -> list[Verdict]:
    runner = _RUNNER
    assert runner is not None
    out = []
    for case in chunk:
        before = dict(runner.tally)
        start = len(runner.divergences)
        try:
            runner.check(case)
            outcome, message = "passed", ""
        except Unsupported as exc:
            outcome, message = "skipped", str(exc)
        except ConformanceFailure as exc:
            outcome, message = "failed", str(exc)
        except Exception:
            outcome, message = "error", traceback.format_exc()
        records = tuple(replace(d, artifacts={}) for d in runner.divergences[start:])
        del runner.divergences[start:]
        out.append(Verdict(outcome, message, records, {k: runner.tally[k] - before[k] for k in before}))
    return out


class Checks:
    """Verdicts of fixed cases, checked by worker processes in the background in the given order."""

    def __init__(self, runner: Runner, cases: Sequence[Case], workers: int) -> None:
        global _RUNNER
        self._verdicts: dict[Case, Verdict] = {}
        self._waiting = {case for case in cases}
        chunks = _chunks(cases)
        _RUNNER = runner
        runner.parallel_worker = True
        try:
            self._pool = _pool(workers)
        finally:
            _RUNNER = None
            runner.parallel_worker = False
        self._results: Iterator[tuple[list[Case], list[Verdict]]] = zip(
            chunks, self._pool.imap(_check_chunk, chunks, chunksize=1), strict=True)

    def take(self, case: Case) -> Verdict | None:
        """The verdict of ``case`` (waiting for the workers if needed); None if they never had it."""
        if case not in self._waiting:
            return None
        while case not in self._verdicts:
            try:
                chunk, verdicts = next(self._results)
            except StopIteration:
                return None
            self._verdicts.update(zip(chunk, verdicts, strict=True))
        self._waiting.discard(case)
        verdict = self._verdicts.pop(case)
        if not self._waiting:
            self.close()
        return verdict

    def close(self) -> None:
        self._pool.terminate()
        self._pool.join()
