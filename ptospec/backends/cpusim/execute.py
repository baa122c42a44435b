"""Run a driver binary over a batch of cases: one batch file in, one result file out (see ``harness``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ENV_KEEP = "PTOSPEC_CPUSIM_KEEP"  # set to keep the batch directories (for debugging the harness)
ENV_ISOLATE = "PTOSPEC_CPUSIM_FORK_EACH"  # set to run every case in a process of its own


@dataclass(frozen=True)
class BatchCase:
    """One case of a batch: the driver variant, ``key value`` parameters and operand blobs."""

    variant: str
    params: dict[str, str]
    blobs: dict[str, bytes]  # operand -> logical row-major tile bytes, or the scalar's bytes


@dataclass(frozen=True)
class RunRecord:
    """What the driver said about one case."""

    status: str  # ok | error <why> | exit N | signal N | crashed | "" (never ran)
    log: str
    notes: tuple[str, ...]
    outputs: dict[str, bytes]


NEVER_RAN = RunRecord("", "", (), {})


def encode_batch(cases: Sequence[BatchCase]) -> bytes:
    parts = [f"ptocs-batch {len(cases)}\n".encode()]
    for case in cases:
        parts.append(f"case {case.variant} {len(case.params)} {len(case.blobs)}\n".encode())
        parts.append("".join(f"{k} {v}\n" for k, v in case.params.items()).encode())
        for name, data in case.blobs.items():
            parts.append(f"{name} {len(data)}\n".encode())
            parts.append(data)
    return b"".join(parts)


class ProtocolError(ValueError):
    """The result file does not follow the record format."""


class _Reader:
    """Lines and length-prefixed blobs of a result file."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def line(self) -> list[str]:
        end = self.data.find(b"\n", self.at)
        if end < 0:
            raise ProtocolError("truncated record")
        words = self.data[self.at:end].decode(errors="replace").split(" ")
        self.at = end + 1
        return words

    def blob(self, size: str) -> bytes:
        n = int(size)
        if n < 0 or self.at + n > len(self.data):
            raise ProtocolError("truncated blob")
        self.at += n
        return self.data[self.at - n:self.at]

    def record(self) -> tuple[int, RunRecord]:
        head = self.line()
        if head[0] != "result" or len(head) < 3:
            raise ProtocolError(f"expected a result line, got {' '.join(head)[:80]!r}")
        log, notes, outputs = "", (), {}
        while (words := self.line())[0] != "end":
            if words[0] == "log" and len(words) == 2:
                log = self.blob(words[1]).decode(errors="replace")
            elif words[0] == "notes" and len(words) == 2:
                notes = tuple(t for t in self.blob(words[1]).decode(errors="replace").splitlines() if t.strip())
            elif words[0] == "out" and len(words) == 3:
                outputs[words[1]] = self.blob(words[2])
            else:
                raise ProtocolError(f"unknown field {words[0][:40]!r}")
        return int(head[1]), RunRecord(" ".join(head[2:]), log, notes, outputs)


def decode_results(data: bytes, count: int) -> tuple[list[RunRecord], str]:
    """One record per case index (``NEVER_RAN`` for a case the file has nothing about), and what was
    wrong with the file ('' when nothing; the records before a damaged one are kept)."""
    records: list[RunRecord] = [NEVER_RAN] * count
    reader = _Reader(data)
    try:
        while reader.at < len(data):
            index, rec = reader.record()
            if 0 <= index < count:
                records[index] = rec
    except (ProtocolError, ValueError) as exc:
        return records, f"unreadable result file: {exc}"
    return records, ""


def run_batch(binary: Path, cases: Sequence[BatchCase], scratch: Path, per_case_timeout: int = 20,
              fork_each: bool | None = None) -> tuple[list[RunRecord], str]:
    """Run every case in one invocation of ``binary``.

    Returns one record per case, in order, and the binary's own output (empty when it is quiet)."""
    if fork_each is None:
        fork_each = bool(os.environ.get(ENV_ISOLATE))
    scratch.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="run-", dir=scratch))
    try:
        batch, results, log = work / "batch.bin", work / "results.bin", work / "log.txt"
        batch.write_bytes(encode_batch(cases))
        cmd = [str(binary), "--timeout", str(per_case_timeout), *(["--fork-each"] if fork_each else []),
               str(batch), str(results), str(log)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                                  timeout=per_case_timeout * len(cases) + 60)
            own = (proc.stdout + proc.stderr).strip()
            if proc.returncode != 0:
                own = f"driver exited with status {proc.returncode}: {own}"
        except subprocess.TimeoutExpired:
            own = "the driver did not finish in time"
        except OSError as exc:
            own = f"cannot run the driver: {exc}"
        records, problem = decode_results(results.read_bytes() if results.is_file() else b"", len(cases))
        if problem:
            own = f"{own}; {problem}" if own else problem
        return records, own
    finally:
        if not os.environ.get(ENV_KEEP):
            shutil.rmtree(work, ignore_errors=True)
