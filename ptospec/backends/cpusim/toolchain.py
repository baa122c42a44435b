"""Locate the pto-isa checkout, a usable clang++ and the build cache directory.

* checkout: ``--pto-isa-root`` / the ``root`` argument, else ``$PTO_ISA_ROOT``; it must contain
  ``include/pto/pto-inst.hpp``.
* compiler: ``$PTOSPEC_CXX``, else ``clang++-NN`` on ``PATH`` (highest NN first), else ``clang++``;
  clang 17 or newer is needed (older compilers and g++ reject the simulator's ``static_assert(false)``
  in discarded branches).
* cache: ``$PTOSPEC_CPUSIM_CACHE``, else ``$XDG_CACHE_HOME/ptospec/cpusim``, else
  ``~/.cache/ptospec/cpusim``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ...errors import InvocationError

MIN_CLANG = 17
ENV_ROOT = "PTO_ISA_ROOT"
ENV_CXX = "PTOSPEC_CXX"
ENV_CACHE = "PTOSPEC_CPUSIM_CACHE"
ENV_JOBS = "PTOSPEC_CPUSIM_JOBS"
_VERSION = re.compile(r"clang version (\d+)\.(\d+)\.(\d+)")


class ToolchainError(InvocationError):
    """No checkout, or no suitable compiler (one line, for the CLI)."""


@dataclass(frozen=True)
class Checkout:
    root: Path
    fingerprint: str  # sha256 over the relative paths and contents of include/

    @property
    def include(self) -> Path:
        return self.root / "include"


@dataclass(frozen=True)
class Compiler:
    path: str
    major: int
    banner: str  # first line of --version


def find_checkout(root: str | os.PathLike | None = None) -> Checkout:
    given = root if root is not None else os.environ.get(ENV_ROOT)
    if not given:
        raise ToolchainError(f"no pto-isa checkout: pass --pto-isa-root PATH or set {ENV_ROOT}",
                             rule="cpusim.checkout")
    path = Path(given).expanduser().resolve()
    if not (path / "include" / "pto" / "pto-inst.hpp").is_file():
        raise ToolchainError(f"{path} is not a pto-isa checkout (no include/pto/pto-inst.hpp)",
                             rule="cpusim.checkout")
    return Checkout(path, fingerprint(path / "include"))


@functools.cache
def fingerprint(include: Path) -> str:
    """Content hash of a header tree (a changed header invalidates every cached build)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in include.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(include)).encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def _candidates() -> list[str]:
    found: list[tuple[int, str]] = []
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        try:
            entries = list(Path(directory).iterdir()) if directory else []
        except OSError:
            continue
        for entry in entries:
            m = re.fullmatch(r"clang\+\+-(\d+)", entry.name)
            if m and os.access(entry, os.X_OK):
                found.append((int(m.group(1)), str(entry)))
    ordered = [path for _, path in sorted(found, key=lambda x: -x[0])]
    plain = shutil.which("clang++")
    return ordered + ([plain] if plain else [])


@functools.cache
def _probe(path: str) -> tuple[int, str] | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = _VERSION.search(out)
    return (int(m.group(1)), out.splitlines()[0].strip()) if m else None


def find_compiler(cxx: str | None = None) -> Compiler:
    given = cxx or os.environ.get(ENV_CXX)
    if given:
        path = shutil.which(given) or given
        probe = _probe(path)
        if probe is None:
            raise ToolchainError(f"{given} is not a clang++ compiler (clang {MIN_CLANG} or newer is needed)",
                                 rule="cpusim.compiler")
        if probe[0] < MIN_CLANG:
            raise ToolchainError(f"{given} is clang {probe[0]}; clang {MIN_CLANG} or newer is needed",
                                 rule="cpusim.compiler")
        return Compiler(path, probe[0], probe[1])
    seen: list[str] = []
    for path in _candidates():
        probe = _probe(path)
        if probe is None:
            continue
        if probe[0] >= MIN_CLANG:
            return Compiler(path, probe[0], probe[1])
        seen.append(f"{Path(path).name} (clang {probe[0]})")
    extra = f"; found only {', '.join(seen)}" if seen else ""
    raise ToolchainError(f"no clang++ {MIN_CLANG} or newer on PATH (install clang-19 or set {ENV_CXX}){extra}",
                         rule="cpusim.compiler")


def cache_dir(given: str | os.PathLike | None = None) -> Path:
    if given:
        return Path(given).expanduser()
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ptospec" / "cpusim"


def private_cache(cache: Path) -> Path:
    """``cache``, created if missing, when it can hold binaries this process will run: the user's own and
    writable by nobody else (else another user could plant a driver there and have it run as this user)."""
    from ...private import private_dir

    reason = private_dir(cache)
    if reason:
        raise ToolchainError(f"refusing the cpusim cache {cache}: {reason}; choose a private one with --cache-dir or "
                             f"${ENV_CACHE}", rule="cpusim.cache", where=str(cache))
    return cache


def jobs(given: int | None = None) -> int:
    if given:
        return max(1, given)
    env = os.environ.get(ENV_JOBS, "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
