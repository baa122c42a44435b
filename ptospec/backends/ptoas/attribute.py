"""Who shows a divergence of the ``ptoas`` backend: the assembler, or the simulator both paths run on.

The ptoas path and the cpusim path differ only in who turns the case into C++ calls: ptoas lowers the printed
function, our program layer replays the same function on the same simulator with the cpusim backend's
toolchain (``program/cpusim.py``: the instruction's own C++ call, as the cpusim backend plans it, in the
memory model of the profile's architecture).  So a divergence is attributed by running that replay:

* ``simulator``: the replay gives exactly the ptoas path's outputs (or fails to build or run as the ptoas
  path did): the cpusim backend shows the same divergence, the simulator's (classified by the spec's
  differences as for cpusim);
* ``assembler lowering``: the replay gives other outputs, or runs where the ptoas path's C++ failed: only the
  assembler's lowering shows it;
* ``assembler verifier``: ptoas itself rejected the function (a positive case: see the verifier table) or
  accepted a must-reject case (a verifier gap);
* ``not attributed``: the replay could not be made (the reason says why).

One replay per divergence group (the report's grouping): the group's smallest case, its reproducer, decides.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from ...conformance.backend import Invocation, Result
from ...conformance.divergence import Divergence
from ...errors import PtospecError
from ...program.api import run_program
from ...program.cpusim import build_and_run_many
from ...program.syntax import parse_program
from ...program.trace import Recorder
from .exchange import outputs_from, program_args
from .module import Function, module_text

SIMULATOR = "simulator"
LOWERING = "assembler lowering"
VERIFIER = "assembler verifier"
UNATTRIBUTED = "not attributed"


def replay_many(db, items: Sequence[tuple[Function, str, Invocation]], pto_isa_root: str, cache: str | None,
                cxx: str | None, jobs: int = 1, progress: Callable[[int, int], None] | None = None) -> list[Result]:
    """Each (function, target, case) run on the simulator by our program layer, without ptoas: outputs by
    operand, or the failure.  The replays of one architecture are built a dozen to a program
    (``program.cpusim.build_and_run_many``), each run with its own step table."""
    results: list[Result | None] = [None] * len(items)
    traces, where = [], []
    for i, (fn, arch, case) in enumerate(items):
        program = parse_program(module_text([fn], arch), f"{fn.name}.pto")
        recorder = Recorder(case.profile)
        try:
            run_program(db, program, program_args(db, fn, case.tiles, case.inputs), case.profile, tracer=recorder)
        except PtospecError as exc:
            results[i] = Result.harness_error(f"replay: {exc}")
            continue
        traces.append(recorder.trace)
        where.append(i)
    sims = build_and_run_many(db, traces, pto_isa_root, cache, cxx, jobs, progress=progress)
    for i, trace, sim in zip(where, traces, sims, strict=True):
        fn, _arch, case = items[i]
        if isinstance(sim, PtospecError):
            results[i] = Result.harness_error(f"replay: {sim}")
        elif sim.stopped:
            results[i] = Result.harness_error(sim.stopped)
        else:
            buffers = {buf.name: arr for buf, arr in zip(trace.buffers, sim.buffers, strict=True)}
            results[i] = Result.ok(outputs_from(db.op(case.op).mode(case.mode), fn, case.tiles, buffers))
    return results  # type: ignore[return-value]


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    def raw(x) -> np.ndarray:  # the bytes in logical order (a column-major tile's output is a transposed view)
        return np.ascontiguousarray(x).view(np.uint8).reshape(-1)

    return set(a) == set(b) and all(np.array_equal(raw(a[n]), raw(b[n])) for n in a)


def verdict(ptoas_result: Result, ptoas_rejected: bool, sim: Result | None, why_not: str = "") -> tuple[str, str]:
    """(attribution, why) of one divergence from the two paths' results."""
    if ptoas_rejected:
        return VERIFIER, "ptoas rejected the function (see the verifier table)"
    if sim is None:
        return UNATTRIBUTED, why_not
    mine_failed = bool(ptoas_result.error or ptoas_result.rejected)
    sim_failure = (sim.error or (sim.message or "rejected" if sim.rejected else ""))[:160]
    if mine_failed and sim_failure:
        return SIMULATOR, f"the replay without ptoas fails too: {sim_failure}"
    if mine_failed:
        return LOWERING, "the replay without ptoas builds and runs; only the assembler's C++ fails"
    if sim_failure:
        return UNATTRIBUTED, f"the replay without ptoas fails where the ptoas path ran: {sim_failure}"
    if _same(ptoas_result.outputs or {}, sim.outputs or {}):
        return SIMULATOR, "the replay without ptoas gives exactly the ptoas path's outputs"
    return LOWERING, "the replay without ptoas gives other outputs than the ptoas path"


def attribute(divergences: Sequence[Divergence], invocation_of: Callable[[Divergence], Invocation],
              each: Callable[[list[Invocation]], list[tuple[Result, bool, Result | None, str]]],
              group_of: Callable[[Divergence], tuple]) -> list[Divergence]:
    """Each divergence with its attribution (``each``: for every case given, the ptoas result, whether ptoas
    rejected it, the replay's result or None, and why there is none; called once with every case to replay, so
    the replays can be built together).  One replay per divergence group (``group_of``, the report's grouping):
    its smallest case decides for the group, as its reproducer stands for it."""
    groups: dict[tuple, list[Divergence]] = {}
    for d in divergences:
        groups.setdefault(group_of(d), []).append(d)
    decided: dict[tuple, tuple[str, str]] = {}
    pending: list[tuple[tuple, Divergence]] = []
    for key, members in groups.items():
        d = min(members, key=lambda m: (m.size, m.case))
        if d.category == "accepts-rejected":
            decided[key] = VERIFIER, "ptoas accepted a case the spec rejects (a verifier gap), and its C++ ran"
        elif not d.descriptors:
            decided[key] = UNATTRIBUTED, "no case to replay"
        else:
            pending.append((key, d))
    answers = each([invocation_of(d) for _key, d in pending]) if pending else []
    for (key, d), answer in zip(pending, answers, strict=True):
        who, why = verdict(*answer)
        if len(groups[key]) > 1:
            why += f" (on the group's smallest case, {d.case})"
        decided[key] = (who, why)
    return [replace(d, attribution=decided[group_of(d)][0], attribution_why=decided[group_of(d)][1])
            for d in divergences]
