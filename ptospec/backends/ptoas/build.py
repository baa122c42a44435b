"""``ptospec ptoas build``: build a PTOAS checkout the user passes in (the steps of its README against Debian's
LLVM/MLIR 19, from ``build`` in specs/ptoas.yaml) into a cache directory and say where the binary is."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ...errors import InvocationError
from ...private import private_dir, untrusted_reason
from .spec import PtoasSpec

CACHE_ENV = "PTOSPEC_PTOAS_CACHE"


def default_cache() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "ptospec" / "ptoas"


def missing_packages(packages: tuple[str, ...]) -> list[str] | None:
    """The Debian packages not installed, or None where there is no dpkg to ask."""
    if not shutil.which("dpkg-query"):
        return None
    missing = []
    for pkg in packages:
        proc = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
        if proc.returncode != 0 or "install ok installed" not in proc.stdout:
            missing.append(pkg)
    return missing


def build_dir_for(source: Path, cache: Path) -> Path:
    return cache / f"build-{hashlib.sha256(str(source.resolve()).encode()).hexdigest()[:12]}"


def _configured_source(build: Path) -> Path | None:
    cache_file = build / "CMakeCache.txt"
    if not cache_file.is_file():
        return None
    for line in cache_file.read_text(errors="replace").splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:INTERNAL="):
            return Path(line.partition("=")[2])
    return None


def build_ptoas(spec: PtoasSpec, source: Path, cache: Path | None = None, build_dir: Path | None = None,
                jobs: int | None = None, log=sys.stderr) -> Path:
    """Configure (unless already configured for ``source``) and build; return the binary's path."""
    if not (source / "CMakeLists.txt").is_file() or not (source / "tools" / "ptoas").is_dir():
        raise InvocationError(f"{source} is not a PTOAS checkout (no CMakeLists.txt and tools/ptoas/)",
                              rule="ptoas.source")
    build = build_dir or build_dir_for(source, _private_cache(cache or default_cache()))
    try:
        build.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise InvocationError(f"cannot create {build}: {exc.strerror or exc}", rule="ptoas.build-dir") from None
    reason = untrusted_reason(build)  # its build.ninja is run: another user's would run their commands as you
    if reason:
        raise InvocationError(f"refusing the build folder {build}: {reason}", rule="ptoas.build-dir")
    b = spec.build
    missing = missing_packages(b.apt)
    if missing:
        raise InvocationError(f"missing Debian packages: {' '.join(missing)}; install them with "
                              f"`apt-get install {' '.join(b.apt)}`", rule="ptoas.packages")
    tools = [t for t in b.tools if not shutil.which(t)]
    if tools:
        raise InvocationError(f"missing tools on PATH: {' '.join(tools)}", rule="ptoas.packages")
    configured = _configured_source(build)
    if configured is not None and configured.resolve() != source.resolve():
        raise InvocationError(f"{build} is configured for another checkout ({configured})", rule="ptoas.build-dir")
    if configured is None:
        print(f"ptospec ptoas build: configuring {source} in {build}", file=log, flush=True)
        _run(["cmake", *b.cmake, "-S", str(source), "-B", str(build)], "configure", build, log)
    else:
        print(f"ptospec ptoas build: {build} is configured for {source}; building what changed", file=log, flush=True)
    _run(["ninja", "-C", str(build), *([f"-j{jobs}"] if jobs else []), b.binary], "build", build, log)
    binary = build / b.binary
    if not binary.is_file():
        raise InvocationError(f"the build finished without {binary}", rule="ptoas.build")
    return binary


def _private_cache(cache: Path) -> Path:
    reason = private_dir(cache)
    if reason:
        raise InvocationError(f"refusing the ptoas build cache {cache}: {reason}; choose a private one with --cache "
                              f"or ${CACHE_ENV}", rule="ptoas.cache")
    return cache


def _run(cmd: list[str], what: str, build: Path, log=sys.stderr) -> None:
    """Run one build step with its whole output in a log beside the build; ninja's ``[n/m]`` steps are echoed to
    ``log`` one short line each, so a build of several minutes shows where it is."""
    log_path = build / f"ptospec-{what}.log"
    print(f"ptospec ptoas build: {what} (whole output in {log_path})", file=log, flush=True)
    with open(log_path, "w") as out, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                      text=True, errors="replace") as proc:
        for line in proc.stdout:
            out.write(line)
            step = _STEP.match(line)
            if step:
                print(f"ptospec ptoas build: [{step['done']}/{step['total']}] {Path(step['target']).name}",
                      file=log, flush=True)
    if proc.returncode != 0:
        tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise InvocationError(f"{what} failed (exit {proc.returncode}): {tail[0][:300]} (whole log: {log_path})",
                              rule="ptoas.build")


_STEP = re.compile(r"\[(?P<done>\d+)/(?P<total>\d+)\] \S+(?: \S+)*? (?P<target>\S+)$")
