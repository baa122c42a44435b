"""Run the samples one by one and print each outcome, the totals and the time taken (``ptospec ptoas samples``,
``benchmarks/ptoas_samples.py``)."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import tempfile
import time
from collections import Counter
from pathlib import Path

from ..model import Database
from .builders import KitUnavailable, prepare_kit, ptobc_of
from .facts import load_sample_facts
from .harness import Kit, Outcome, find_samples, run_sample, scalar_overrides

STATUSES = ("match", "mismatch", "refused", "error", "not-runnable")
FAILING = ("mismatch", "refused", "error")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def outcome_line(outcome: Outcome) -> str:
    text = f"{outcome.sample.name:<42} {outcome.status:<12}"
    if outcome.profile:
        text += f" {outcome.profile:<5}"
    if outcome.max_error:
        text += " max|err| " + ", ".join(f"{k}={v:.3g}" for k, v in outcome.max_error.items())
    if outcome.seconds:
        text += f" ({outcome.seconds:.2f} s)"
    if outcome.detail:
        text += f"\n    {outcome.detail}"
    for f in outcome.findings:
        text += f"\n    finding: {f}"
    if outcome.meta_check is not None:
        text += f"\n    metadata vs the tooling's: {outcome.meta_check}"
    return text


def run_samples(db: Database, root: Path, only: list[str], ptoas: Path | None = None, keep: Path | None = None,
                json_path: Path | None = None) -> int:
    """Every sample of the checkout ``root`` (``only``: those whose Dir/case contains one of these texts).
    Exit status: 0 when some sample ran and none mismatches, is refused or ends in error; 1 otherwise
    (PtospecError: bad input)."""
    root = root.resolve()
    facts = load_sample_facts(db)
    samples = find_samples(root, facts)
    if only:
        samples = [s for s in samples if any(t in s.name for t in only)]
    overrides = scalar_overrides(root, facts)
    if not (root / facts.script).is_file():
        print(f"note: no {facts.script} in the checkout: every scalar takes the default, no per-case value")
    beside = sum(s.pto is not None for s in samples)
    boards = sum(s.board for s in samples)
    print(f"{len(samples)} samples with a golden under {root / facts.directory}: {beside} with their kernel (.pto) "
          f"beside it, {boards} committed board case(s)", flush=True)
    counts: Counter = Counter()
    outcomes = []
    t0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu()
    with contextlib.ExitStack() as stack:
        kit = _kit(root, facts, ptoas, stack) if any(s.pto is None and s.builder for s in samples) else None
        if kit is not None:
            print(f"builder scripts: {'MLIR stand-in assembled' if kit.path else kit.reason}", flush=True)
        _run_all(db, root, facts, samples, overrides, ptoas, keep, kit, counts, outcomes)
    wall, cpu, kids = time.perf_counter() - t0, time.process_time() - c0, _children_cpu() - k0
    print("totals: " + ", ".join(f"{st} {counts[st]}" for st in STATUSES))
    checked = [o.meta_check for o in outcomes if o.meta_check is not None]
    if checked:
        print(f"metadata cross-checked with the tooling: {sum(c == 'agrees' for c in checked)} of {len(checked)} "
              "agree")
    print(f"time: {wall:.1f} s wall, {sum(o.seconds for o in outcomes):.1f} s of it in run_program; CPU (user+sys) "
          f"{cpu:.1f} s here, {kids:.1f} s in the scripts (golden, compare, --ptoas); "
          f"load average {os.getloadavg()[0]:.2f}")
    if json_path is not None:
        json_path.write_text(json.dumps([{"sample": o.sample.name, "status": o.status, "profile": o.profile,
                                          "detail": o.detail, "max_error": o.max_error, "findings": o.findings,
                                          "seconds": round(o.seconds, 3), "metadata": o.meta_check}
                                         for o in outcomes], indent=1), encoding="utf-8")
    if not any(counts[st] for st in STATUSES if st != "not-runnable"):
        print("no sample was runnable")
        return 1
    return 1 if any(counts[st] for st in FAILING) else 0


def _run_all(db, root, facts, samples, overrides, ptoas, keep, kit, counts: Counter, outcomes: list) -> None:
    """Each sample in turn (those with a .pto first), its outcome printed as it ends."""
    for k, sample in enumerate(sorted(samples, key=lambda s: (s.pto is None and not s.board, s.name)), 1):
        try:
            outcome = run_sample(db, root, facts, sample, overrides, ptoas, keep, kit)
        except Exception as exc:  # one sample never loses the others (nor the --json file)
            outcome = Outcome(sample, "error", f"internal error: {type(exc).__name__}: {exc}")
        counts[outcome.status] += 1
        outcomes.append(outcome)
        print(f"[{k}/{len(samples)}] {outcome_line(outcome)}", flush=True)


def _kit(root: Path, facts, ptoas: Path | None, stack: contextlib.ExitStack) -> Kit | None:
    """The MLIR stand-in for the builder scripts, in a scratch directory that lives as long as ``stack``
    (None without --ptoas: the assembler is the judge of the modules it prints)."""
    if ptoas is None:
        return None
    ptobc = ptobc_of(ptoas, facts)
    if not ptobc.is_file():
        return Kit(None, None, f"no ptobc at {ptobc} (the assembler's bytecode tool prints the module again)")
    scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ptospec-mlir-")))
    try:
        return Kit(prepare_kit(root, facts, scratch), ptobc)
    except KitUnavailable as exc:
        return Kit(None, None, f"the MLIR stand-in cannot be assembled: {exc}")
