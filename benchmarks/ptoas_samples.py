"""The PTO assembler's samples with NumPy goldens, run through ptospec's program layer with their own arguments.

    python benchmarks/ptoas_samples.py --ptoas-root DIR [--only TEXT ...] [--ptoas BIN] [--keep DIR] [--json FILE]

Visits every ``test/samples/<Dir>/<case>_golden.py`` of a checkout of hw-native-sys/PTOAS (nothing is copied
from it).  A sample with its kernel beside the golden (``<case>.pto``) is run as the assembler's board-test
tooling runs it: the case metadata the tooling derives from the kernel (its parameters ``v1``, ``v2``, ...,
which buffers are outputs, how many elements each holds, the scalar values, ``ptospec/samples/meta.py``),
the golden script run unchanged in a scratch directory, its input buffers fed to ``run_program`` on the
sample's target (the program's ``pto.target_arch`` / ``pto.device-spec``, else its folder's ``--pto-arch`` from
``specs/ptoas.yaml`` ``samples.directories``), and our outputs judged by the sample's own ``<case>_compare.py``
(or the compare.py the tooling writes for a case without one).  Each sample ends as ``match``, ``mismatch``
(with the compare's message and the largest error), ``refused`` (the rule id that stopped the run) or
``not-runnable`` (why: most samples build their .pto through the assembler's Python bindings).

``--ptoas BIN`` also compiles each kernel with the assembler, lets the tooling write its own case, and checks
that the golden script reads the same metadata from it as from ours.  Exit status: 0 when every runnable
sample matches, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptospec.dbcache import load_database_cached  # noqa: E402
from ptospec.errors import PtospecError  # noqa: E402
from ptospec.samples.facts import load_sample_facts  # noqa: E402
from ptospec.samples.harness import find_samples, run_sample, scalar_overrides  # noqa: E402

STATUSES = ("match", "mismatch", "refused", "not-runnable")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def line(outcome) -> str:
    s = outcome.sample
    text = f"{s.name:<42} {outcome.status:<12}"
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="See docs/programs.md (The assembler's samples).")
    ap.add_argument("--ptoas-root", required=True, type=Path, help="checkout of hw-native-sys/PTOAS")
    ap.add_argument("--only", nargs="+", default=[], help="samples whose Dir/case contains one of these texts")
    ap.add_argument("--ptoas", type=Path, help="a built ptoas: cross-check the metadata with the tooling's own")
    ap.add_argument("--keep", type=Path, help="leave each sample's scratch files under this directory")
    ap.add_argument("--json", type=Path, help="write the outcomes here")
    args = ap.parse_args()
    if args.ptoas is not None and not os.access(args.ptoas, os.X_OK):
        print(f"--ptoas {args.ptoas}: not an executable", file=sys.stderr)
        return 2
    db = load_database_cached(None)
    facts = load_sample_facts(db)
    try:
        samples = find_samples(args.ptoas_root, facts)
    except PtospecError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.only:
        samples = [s for s in samples if any(t in s.name for t in args.only)]
    overrides = scalar_overrides(args.ptoas_root, facts)
    runnable = sum(s.pto is not None for s in samples)
    print(f"{len(samples)} samples with a golden under {args.ptoas_root / facts.directory}; "
          f"{runnable} with their kernel (.pto) beside it")
    counts: Counter = Counter()
    outcomes = []
    t0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu()
    for k, sample in enumerate(sorted(samples, key=lambda s: (s.pto is None, s.name)), 1):
        outcome = run_sample(db, args.ptoas_root, facts, sample, overrides, args.ptoas, args.keep)
        counts[outcome.status] += 1
        outcomes.append(outcome)
        print(f"[{k}/{len(samples)}] {line(outcome)}", flush=True)
    wall, cpu, kids = time.perf_counter() - t0, time.process_time() - c0, _children_cpu() - k0
    print("totals: " + ", ".join(f"{st} {counts[st]}" for st in STATUSES))
    checked = [o.meta_check for o in outcomes if o.meta_check is not None]
    if checked:
        print(f"metadata cross-checked with the tooling: {sum(c == 'agrees' for c in checked)} of {len(checked)} "
              "agree")
    print(f"time: {wall:.1f} s wall; CPU (user+sys) {cpu:.1f} s here, {kids:.1f} s in the scripts (golden, compare, "
          f"--ptoas); load average {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps([{"sample": o.sample.name, "status": o.status, "profile": o.profile,
                                          "detail": o.detail, "max_error": o.max_error, "findings": o.findings,
                                          "seconds": round(o.seconds, 3), "metadata": o.meta_check}
                                         for o in outcomes], indent=1), encoding="utf-8")
    return 0 if counts["mismatch"] == counts["refused"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
