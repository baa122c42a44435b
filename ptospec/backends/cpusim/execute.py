"""Run a driver binary over many cases, exchanging tiles through files (see ``harness``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ENV_KEEP = "PTOSPEC_CPUSIM_KEEP"  # set to keep the case directories (for debugging the harness)


@dataclass(frozen=True)
class CaseFiles:
    """What one case directory gets: ``params.txt`` and ``<operand>.bin`` files."""

    params: str
    files: dict[str, bytes]  # operand -> bytes
    outputs: tuple[str, ...]  # operands whose ``<name>.out.bin`` to read back


@dataclass(frozen=True)
class RunRecord:
    """What one case directory holds after the run."""

    status: str  # ok | error <why> | exit N | signal N | crashed | "" (never ran)
    log: str
    notes: tuple[str, ...]
    outputs: dict[str, bytes]


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def run_cases(binary: Path, cases: Sequence[CaseFiles], scratch: Path, per_case_timeout: int = 20
              ) -> tuple[list[RunRecord], str]:
    """Run every case in one invocation of ``binary`` (which forks per case).

    Returns one record per case, in order, and the binary's own output (empty when it is quiet)."""
    scratch.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="run-", dir=scratch))
    try:
        dirs: list[Path] = []
        for index, case in enumerate(cases):
            d = work / str(index)
            d.mkdir()
            (d / "params.txt").write_text(case.params)
            for name, data in case.files.items():
                (d / f"{name}.bin").write_bytes(data)
            dirs.append(d)
        listing = work / "cases.list"
        listing.write_text("".join(f"{d}\n" for d in dirs))
        try:
            proc = subprocess.run([str(binary), "--timeout", str(per_case_timeout), str(listing)],
                                  capture_output=True, text=True, errors="replace",
                                  timeout=per_case_timeout * len(cases) + 60)
            own = (proc.stdout + proc.stderr).strip()
            if proc.returncode != 0:
                own = f"driver exited with status {proc.returncode}: {own}"
        except subprocess.TimeoutExpired:
            own = "the driver did not finish in time"
        except OSError as exc:
            own = f"cannot run the driver: {exc}"
        records = []
        for case, d in zip(cases, dirs, strict=True):
            outputs = {}
            for name in case.outputs:
                path = d / f"{name}.out.bin"
                if path.is_file():
                    outputs[name] = path.read_bytes()
            notes = tuple(line for line in _read(d / "notes.txt").splitlines() if line.strip())
            records.append(RunRecord(_read(d / "status.txt").strip(), _read(d / "log.txt"), notes, outputs))
        return records, own
    finally:
        if not os.environ.get(ENV_KEEP):
            shutil.rmtree(work, ignore_errors=True)
