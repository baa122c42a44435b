"""The PTO assembler's samples with NumPy goldens, run through ptospec's program layer with their own arguments.

    python benchmarks/ptoas_samples.py --ptoas-root DIR [--only TEXT ...] [--ptoas BIN] [--keep DIR] [--json FILE]
    ptospec ptoas samples --source DIR [the same options]

Visits every ``test/samples/<Dir>/<case>_golden.py`` of a checkout of hw-native-sys/PTOAS (nothing is copied
from it).  A sample with its kernel beside the golden (``<case>.pto``) is run as the assembler's board-test
tooling runs it: the case metadata the tooling derives from the kernel (its parameters ``v1``, ``v2``, ...,
which buffers are outputs, how many elements each holds, the scalar values, ``ptospec/samples/meta.py``),
the golden script run unchanged in a scratch directory, its input buffers fed to ``run_program`` on the
sample's target (the program's ``pto.target_arch`` / ``pto.device-spec``, else its folder's ``--pto-arch`` from
``specs/ptoas.yaml`` ``samples.directories``), and our outputs judged by the sample's own ``<case>_compare.py``
(or the compare.py the tooling writes for a case without one).  A committed board case (``<Dir>/npu_validation/``
with its own main.cpp, golden.py and compare.py) runs the kernels its main.cpp launches, in order, on shared
buffers (``ptospec/samples/boards.py``).  Each sample ends as ``match``, ``mismatch``
(with the compare's message and the largest error), ``refused`` (the rule id that stopped the run), ``error``
(probably ours: the golden failed on our metadata, wrote no file or another size, or the assembler refuses the
module our MLIR stand-in printed) or ``not-runnable`` (why).  It runs the checkout's own Python scripts.

``--ptoas BIN`` also compiles each kernel with the assembler, lets the tooling write its own case, and checks
that the golden script reads the same metadata from it as from ours; and it runs the samples whose kernel only a
``<case>.py`` builder makes: the builder runs on ptospec's pure-Python stand-in of MLIR's Python API with the
dialect's op classes generated from the checkout's ODS (``ptospec/samples/builders.py``), ``ptoas`` judges the
module it prints, and the ``ptobc`` beside it prints the module again in the dialect's custom form.  Exit status:
0 when some sample ran and every one that ran matches, 1 otherwise, 2 for bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptospec.dbcache import load_database_cached  # noqa: E402
from ptospec.errors import PtospecError  # noqa: E402
from ptospec.samples.report import run_samples  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="The same as `ptospec ptoas samples`. See docs/programs.md (The assembler's "
                                 "samples against their goldens).")
    ap.add_argument("--ptoas-root", required=True, type=Path, help="checkout of hw-native-sys/PTOAS")
    ap.add_argument("--only", nargs="+", default=[], help="samples whose Dir/case contains one of these texts")
    ap.add_argument("--ptoas", type=Path, help="a built ptoas: cross-check the metadata with the tooling's own")
    ap.add_argument("--keep", type=Path, help="leave each sample's scratch files under this directory")
    ap.add_argument("--json", type=Path, help="write the outcomes here")
    args = ap.parse_args()
    if args.ptoas is not None and not os.access(args.ptoas, os.X_OK):
        print(f"--ptoas {args.ptoas}: not an executable", file=sys.stderr)
        return 2
    try:
        return run_samples(load_database_cached(None), args.ptoas_root, args.only, args.ptoas, args.keep, args.json)
    except PtospecError as exc:
        print(exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
