"""What the CPU simulator does with a disagreement group's reproducer: the header decides.

For a gap (the spec rejects, ptoas accepts) it says what happens to a program ptoas let through: the simulator
fails to compile it (a static_assert or an overload that does not match), asserts at run time, or runs it
silently.  For a strict group (the spec accepts, ptoas rejects) it says whether the library accepts the case:
if it compiles and runs, the verifier is stricter than the headers; if it does not, the spec's table is the
one to check.  The case runs through the cpusim backend on the simulator profile (the simulator implements
one API for every target), with the case's tiles and data."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...conformance.backend import Invocation, Result
from ...conformance.data import make_inputs
from ...model import Database
from .table import Row


def verdict(result: Result) -> str:
    if result.unsupported:
        return f"not run on the simulator: {result.unsupported}"
    if result.error:
        return f"harness error: {result.error[:200]}"
    if result.rejected:
        m = result.message
        if m.startswith(("compile-time check", "compile-time refusal")):
            return f"fails to compile: {m[:240]}"
        if m.startswith(("runtime check", "simulator assert")):
            return f"asserts: {m[:240]}"
        return f"crashes: {m[:240]}"
    return "compiles and runs silently"


def simulator_outcomes(db: Database, rows: Sequence[Row], root: str, jobs: int | None = None,
                       progress: Callable[[str, int, int], None] | None = None) -> dict[str, str]:
    """Test id -> what the simulator does with that case; ``progress(stage, done, total)`` as the cpusim backend
    compiles and runs them."""
    from ..cpusim.backend import CpuSimBackend

    backend = CpuSimBackend(db, root=root, parallel=jobs)
    profile = backend.profiles[0]
    invocations = {}
    for r in rows:
        op = db.ops[r.case.op]
        mode = op.mode(r.case.mode)
        tiles = r.case.parsed(db)
        inputs = make_inputs(db, op, mode, tiles, r.case.seed, r.case.pattern)
        invocations[r.test_id] = Invocation(r.case.op, r.case.mode, profile, tiles, inputs, dict(r.case.tiles))
    caps = backend.capabilities()
    runnable = {k: v for k, v in invocations.items() if not caps.unsupported(v.op, v.mode, v.profile, v.tiles)}
    backend.prepare(list(runnable.values()), progress)
    out = {}
    for k, inv in invocations.items():
        if k not in runnable:
            out[k] = f"not run on the simulator: {caps.unsupported(inv.op, inv.mode, inv.profile, inv.tiles)}"
        else:
            out[k] = verdict(backend.run(inv))
    return out
