"""Run functions through the assembler's verifier (``ptoas`` on a module, per target) and say, for each,
whether it accepted it.

ptoas stops at the first error of a module.  Functions are batched several to a module: the error's line
names the function it belongs to, which is set aside with that verdict, and the rest is run again until a
run is clean.  A case expected to be rejected goes alone into its module (a batch would only cost one run
per case again).  Batches run in parallel (threads, each waiting on one ptoas process).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .module import Function, function_lines, module_text

TIMEOUT = 60  # seconds for one ptoas run
_ERROR = re.compile(r"^(?:loc\(\"[^\"]*\":(\d+):(\d+)\)|(?:<stdin>|[^:\n]*):(\d+):(\d+)): error: (.*)$", re.M)
_OP_ERROR = re.compile(r"^'pto\.[a-z0-9_]+' op ")
# Messages of MLIR's parser (the text is not the dialect's): the module could not be read at all.
_PARSE = re.compile(r"^(expected |custom op '.*' is unknown|unknown |use of undeclared|undefined symbol|"
                    r"invalid |unexpected |redefinition |failed to parse |dialect '.*' not found)")


@dataclass(frozen=True)
class Verdict:
    status: str  # accepted | rejected | unreadable | crashed
    message: str = ""  # the error, first line
    line: int = 0  # the line of the module it points at (0: none)


@dataclass(frozen=True)
class Job:
    key: object  # the caller's name for the function
    function: Function
    alone: bool = False  # expected to be rejected: a module of its own


def run_ptoas(binary: str, text: str, arch: str, output: str = "/dev/null", level: str | None = None
              ) -> subprocess.CompletedProcess:
    cmd = [binary, "-", "-o", output, f"--pto-arch={arch}"]
    if level:
        cmd.append(f"--pto-level={level}")
    return subprocess.run(cmd, input=text, capture_output=True, text=True, timeout=TIMEOUT)


def classify(message: str) -> str:
    """``rejected`` for a verifier's (or a later pass's) error, ``unreadable`` for the parser's."""
    if _OP_ERROR.match(message):
        return "rejected"
    return "unreadable" if _PARSE.match(message) else "rejected"


def _errors(stderr: str) -> list[tuple[int, str]]:
    return [(int(m.group(1) or m.group(3)), m.group(5).strip()) for m in _ERROR.finditer(stderr)]


def _first_line(stderr: str) -> str:
    lines = [s for s in stderr.splitlines() if s.strip().lower().startswith(("error", "ptoas: error"))]
    return (lines or [s for s in stderr.splitlines() if s.strip()][-1:] or ["no message"])[0].strip()


def verify_batch(binary: str, arch: str, jobs: Sequence[Job], runs: list[int] | None = None) -> dict[object, Verdict]:
    """Verdicts of one batch (run again without each function the verifier stopped at); each ptoas run
    appends 1 to ``runs``."""
    runs = [] if runs is None else runs
    left = list(jobs)
    verdicts: dict[object, Verdict] = {}
    while left:
        functions = [j.function for j in left]
        text = module_text(functions)
        runs.append(1)
        try:
            proc = run_ptoas(binary, text, arch)
        except subprocess.TimeoutExpired:
            if len(left) == 1:
                verdicts[left[0].key] = Verdict("crashed", f"ptoas ran over {TIMEOUT} s")
                return verdicts
            half = len(left) // 2
            verdicts.update(verify_batch(binary, arch, left[:half], runs))
            left = left[half:]
            continue
        if proc.returncode == 0:
            verdicts.update({j.key: Verdict("accepted") for j in left})
            return verdicts
        if proc.returncode < 0:  # a signal: the assembler crashed
            if len(left) == 1:
                verdicts[left[0].key] = Verdict("crashed", f"ptoas died of signal {-proc.returncode}: "
                                                + _first_line(proc.stderr))
                return verdicts
            half = len(left) // 2
            verdicts.update(verify_batch(binary, arch, left[:half], runs))
            left = left[half:]
            continue
        spans = function_lines(functions)
        blamed: dict[int, Verdict] = {}
        for line, message in _errors(proc.stderr):
            k = next((i for i, (a, b) in enumerate(spans) if a <= line <= b), None)
            if k is not None and k not in blamed:
                blamed[k] = Verdict(classify(message), message, line - spans[k][0])
        if not blamed:  # an error without a position (a pass's own message)
            if len(left) == 1:
                verdicts[left[0].key] = Verdict("rejected", _first_line(proc.stderr))
                return verdicts
            half = len(left) // 2
            verdicts.update(verify_batch(binary, arch, left[:half], runs))
            left = left[half:]
            continue
        for k, v in blamed.items():
            verdicts[left[k].key] = v
        left = [j for i, j in enumerate(left) if i not in blamed]
    return verdicts


def verify_all(binary: str, arch: str, jobs: Sequence[Job], workers: int, batch: int = 40,
               progress: Callable[[int, int], None] | None = None, runs: list[int] | None = None
               ) -> dict[object, Verdict]:
    """Verdicts of every job for one target, ``workers`` ptoas processes at a time."""
    batches: list[list[Job]] = []
    together = [j for j in jobs if not j.alone]
    for i in range(0, len(together), batch):
        batches.append(together[i:i + batch])
    batches += [[j] for j in jobs if j.alone]
    verdicts: dict[object, Verdict] = {}
    done = 0
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for part in pool.map(lambda b: verify_batch(binary, arch, b, runs), batches):
            verdicts.update(part)
            done += len(part)
            if progress:
                progress(done, len(jobs))
    return verdicts
