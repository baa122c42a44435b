"""Turn what the compiler and a driver run said into the ``Result`` of one case.

* compiled variant status ``rejected`` (a ``static_assert``)  -> the backend rejects the case;
  ``refused`` (the intrinsic's call does not compile for the operand types) -> the backend rejects
  the case when the same driver code compiles with other operand types, else harness error;
  ``error`` (any other compiler error)                      -> harness error.
* run status ``ok``                        -> the output tiles (plus stray writes the driver noticed);
  ``exit 86`` with ``[PTO][ASSERT]``       -> rejected by a runtime check (PTO_ASSERT under ``_DEBUG``);
  ``signal 6`` with an ``assert()`` message -> rejected by the simulator's own ``assert``;
  other signals, exit codes, time-outs     -> rejected as a crash (the message says which);
  ``error ...``, ``crashed`` or nothing    -> harness error.
"""

from __future__ import annotations

import re
import signal

import numpy as np

from ...conformance.backend import Result
from .build import VariantStatus
from .execute import RunRecord
from .harness import TRAP_EXIT

_PTO_ASSERT = re.compile(r"\[PTO\]\[ASSERT\] (?P<msg>.*)\n\s*Condition: (?P<cond>.*)\n\s*Location: (?P<loc>.*)")
_C_ASSERT = re.compile(r"(?P<where>[^\s:]+:\d+):[^\n]*?Assertion [`'](?P<cond>.*)' failed")


def _short(path: str, root: str) -> str:
    return path[len(root.rstrip("/")) + 1:] if root and path.startswith(root.rstrip("/") + "/") else path


def from_build(status: VariantStatus, template_compiles: bool = False, op_mode: str = "") -> Result | None:
    """The case's result when its variant did not compile, else None.

    ``template_compiles``: another variant of the same driver template (``cppgen.VariantPlan.template``:
    the code of the op mode's driver without its operand types; ``op_mode`` names it in the message)
    compiled.  Such variants differ only in their operand types, so a refusal is then the intrinsic
    refusing these types (a rejection); otherwise the driver itself is not ruled out (harness error)."""
    if status.kind == "rejected":
        return Result.reject(f"compile-time check: {status.message}")
    if status.kind == "refused" and template_compiles:
        return Result.reject(f"compile-time refusal: {status.message} (no static_assert; the same driver "
                             f"compiles for other operand types of {op_mode})")
    if status.kind == "refused":
        return Result.harness_error(f"the driver does not compile: {status.message} (no variant of {op_mode} "
                                    "compiled, so the driver itself is not ruled out)")
    if status.kind == "error":
        return Result.harness_error(f"the driver does not compile: {status.message}")
    return None


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def from_run(record: RunRecord, outputs: dict[str, tuple[np.dtype, tuple[int, ...]]], root: str = "",
             timeout: int = 0) -> Result:
    """The case's result from its run directory; ``outputs`` gives each output tile's dtype and shape."""
    status = record.status
    if status == "ok":
        arrays: dict[str, np.ndarray] = {}
        for name, (dtype, shape) in outputs.items():
            data = record.outputs.get(name)
            expected = int(np.prod(shape)) * dtype.itemsize  # a tile (rows, cols) or a buffer (size,)
            if data is None or len(data) != expected:
                return Result.harness_error(f"the driver returned no complete output {name}")
            arrays[name] = np.frombuffer(data, dtype=dtype).reshape(shape).copy()
        return Result(outputs=arrays, stray=tuple(_note(n) for n in record.notes))
    if status == f"exit {TRAP_EXIT}" and "[PTO][ASSERT]" in record.log:
        m = _PTO_ASSERT.search(record.log)
        if m:
            where = _short(m["loc"].strip(), root)
            return Result.reject(f"runtime check (PTO_ASSERT) failed: {m['msg'].strip()} "
                                 f"[{m['cond'].strip()}] at {where}")
        return Result.reject("runtime check (PTO_ASSERT) failed: " + record.log.strip()[-300:])
    if status.startswith("signal "):
        number = int(status.split()[1])
        if number == signal.SIGABRT:
            m = _C_ASSERT.search(record.log)
            if m:
                return Result.reject(f"simulator assert() failed: {m['cond']} at {_short(m['where'], root)}")
        if number == signal.SIGALRM:
            return Result.reject(f"crash: did not finish within {timeout or '?'} s")
        return Result.reject(f"crash: {signal_name(number)}" + _tail(record.log))
    if status.startswith("exit "):
        return Result.reject(f"crash: exited with status {status.split()[1]}" + _tail(record.log))
    if status.startswith("error "):
        return Result.harness_error(f"driver error: {status[6:]}")
    if status == "crashed":
        return Result.harness_error("the case process ended without a status" + _tail(record.log))
    return Result.harness_error("the case never ran (no status written)")


def kind(result: Result) -> str:
    """A short label of a result, for counting: ran | rejected at compile time | ..."""
    if result.unsupported:
        return "skipped"
    if result.error:
        return "harness error"
    if not result.rejected:
        return "ran"
    if result.message.startswith("compile-time check"):
        return "rejected at compile time"
    if result.message.startswith("compile-time refusal"):
        return "refused at compile time"
    if result.message.startswith("crash"):
        return "crashed"
    return "rejected by a runtime check"


def _tail(log: str) -> str:
    text = " ".join(log.strip().splitlines()[-2:])
    return f" ({text[-300:]})" if text else ""


def _note(line: str) -> str:
    kind, _, rest = line.partition(" ")
    name, _, count = rest.partition(" ")
    if kind == "guard":
        return f"{name}: {count} byte(s) just past the tile's storage changed"
    if kind == "input":
        return f"{name}: {count} element(s) of this input tile changed"
    return line
