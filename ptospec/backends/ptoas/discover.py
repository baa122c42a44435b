"""Find the ``ptoas`` binary: ``--ptoas PATH``, else ``$PTOSPEC_PTOAS``, else ``ptoas`` on PATH; check that it
runs and is at least the version ``specs/ptoas.yaml`` names."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ...errors import InvocationError
from .spec import PtoasSpec

ENV = "PTOSPEC_PTOAS"
_VERSION = re.compile(r"ptoas\s+(?:version\s+)?v?([0-9]+(?:\.[0-9]+)*)", re.I)
_HOW = ("build one with `ptospec ptoas build --source PTOAS_CHECKOUT`, then pass --ptoas PATH or set "
        f"{ENV}=PATH")


@dataclass(frozen=True)
class Ptoas:
    path: str
    version: tuple[int, ...]
    found_by: str  # --ptoas | $PTOSPEC_PTOAS | PATH

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version))


def _candidate(explicit: str | None) -> tuple[str, str]:
    if explicit:
        return explicit, "--ptoas"
    env = os.environ.get(ENV)
    if env:
        return env, f"${ENV}"
    found = shutil.which("ptoas")
    if found:
        return found, "PATH"
    raise InvocationError(f"no ptoas found (no --ptoas, ${ENV} unset, no ptoas on PATH): {_HOW}",
                          rule="ptoas.missing")


def version_of(path: str) -> tuple[int, ...]:
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except OSError as exc:
        raise InvocationError(f"{path} does not run: {exc.strerror}", rule="ptoas.missing") from None
    except subprocess.TimeoutExpired:
        raise InvocationError(f"{path} --version did not answer within 30 s", rule="ptoas.missing") from None
    m = _VERSION.search(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not m:
        raise InvocationError(f"{path} is not ptoas: `--version` printed no ptoas version", rule="ptoas.missing")
    return tuple(int(p) for p in m.group(1).split("."))


def find_ptoas(spec: PtoasSpec, explicit: str | None = None) -> Ptoas:
    path, how = _candidate(explicit)
    p = Path(path)
    if not p.exists():
        raise InvocationError(f"ptoas given by {how} does not exist: {path}; {_HOW}", rule="ptoas.missing")
    if not p.is_file() or not os.access(p, os.X_OK):
        raise InvocationError(f"ptoas given by {how} is not an executable file: {path}", rule="ptoas.missing")
    version = version_of(str(p))
    if version < spec.minimum_version:
        want = ".".join(map(str, spec.minimum_version))
        raise InvocationError(f"{path} is ptoas {'.'.join(map(str, version))}, older than {want} (the dialect "
                              f"ptospec was compared with, commit {spec.tested_commit}); {_HOW}",
                              rule="ptoas.too-old")
    return Ptoas(str(p.resolve()), version, how)
