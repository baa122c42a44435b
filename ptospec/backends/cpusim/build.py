"""Compile translation units into driver binaries, behind a content-hash cache.

Every build is keyed by a SHA-256 over: the harness protocol version, the compiler (path and
``--version`` banner), the flags, the checkout's header fingerprint, the harness header and the
unit's text.  A cache entry holds the binary and ``manifest.json`` (per variant: ``ok``,
``rejected`` with the ``static_assert`` message, ``refused`` or ``error`` with the compiler's
message), so a second identical run compiles nothing.

A unit is first compiled whole.  When that fails, the diagnostics name the variants whose
``static_assert`` fired (rejected), whose call of the intrinsic does not compile (refused, see
``diagnostics``) or that failed otherwise (harness error); those are dropped and the rest is compiled
whole again until it builds.  (A compile that fails in the front end stops before code generation, so it
costs what a ``-fsyntax-only`` check costs: a check before the compile would only add one.)  The precompiled
header (the harness header with ``<pto/pto-inst.hpp>``) is built once per toolchain/checkout.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ...private import private_file, read_private, untrusted_reason, write_private
from . import diagnostics
from .cppgen import UnitSource
from .harness import HEADER, HEADER_NAME
from .toolchain import Checkout, Compiler, ToolchainError, private_cache

FORMAT = "ptospec-cpusim-3"  # bump when the driver protocol or the manifest's statuses change
UNIT_FILE = "unit.cpp"
BINARY = "driver"
COMPILE_TIMEOUT = 900


def base_flags(checkout: Checkout) -> list[str]:
    """Flags of every compile: the simulator build (as upstream's CPU CMake) plus runtime checks."""
    return [
        "-std=c++20", "-D__CPU_SIM", "-DPTO_CPU_MAX_THREADS=1", "-D_DEBUG",
        "-include", "stdint.h", "-include", "stddef.h", f"-I{checkout.include}",
        "-O0", "-pthread", "-w",
    ]


# A real bfloat16 for the simulator.  Its type.hpp takes std::bfloat16_t from <stdfloat> when C++23 and
# __STDCPP_BFLOAT16_T__ are there, and otherwise makes bfloat16_t an alias of _Float16 (half precision).
# clang's __bf16 is a bfloat16 arithmetic type on x86-64; libstdc++ 12 has no <stdfloat>, so a small
# header supplies std::bfloat16_t = __bf16 with its numeric_limits (which TCVT's saturation reads, as the
# C++23 library would provide them), and the float <-> bf16 conversions link from compiler-rt's
# builtins (libgcc 12 lacks __truncsfbf2).  Used only when a probe program builds and rounds correctly.
BF16_SHIM = """#pragma once
#include <limits>
namespace std {
using bfloat16_t = __bf16;
template <> struct numeric_limits<__bf16> {
    static constexpr bool is_specialized = true;
    static constexpr bool is_signed = true;
    static constexpr bool is_integer = false;
    static constexpr bool is_exact = false;
    static constexpr bool has_infinity = true;
    static constexpr bool has_quiet_NaN = true;
    static constexpr bool has_signaling_NaN = true;
    static constexpr bool is_iec559 = false;
    static constexpr bool is_bounded = true;
    static constexpr bool is_modulo = false;
    static constexpr int radix = 2;
    static constexpr int digits = 8;
    static constexpr int digits10 = 2;
    static constexpr int max_digits10 = 4;
    static constexpr int min_exponent = -125;
    static constexpr int min_exponent10 = -37;
    static constexpr int max_exponent = 128;
    static constexpr int max_exponent10 = 38;
    static constexpr __bf16 min() noexcept { return __builtin_bit_cast(__bf16, (unsigned short)0x0080); }
    static constexpr __bf16 max() noexcept { return __builtin_bit_cast(__bf16, (unsigned short)0x7F7F); }
    static constexpr __bf16 lowest() noexcept { return __builtin_bit_cast(__bf16, (unsigned short)0xFF7F); }
    static constexpr __bf16 epsilon() noexcept { return __builtin_bit_cast(__bf16, (unsigned short)0x3C00); }
    static constexpr __bf16 round_error() noexcept { return __builtin_bit_cast(__bf16, (unsigned short)0x3F00); }
    static constexpr __bf16 infinity() noexcept { return __builtin_bit_cast(__bf16, (unsigned short)0x7F80); }
    static constexpr __bf16 quiet_NaN() noexcept { return __builtin_bit_cast(__bf16, (unsigned short)0x7FC0); }
    static constexpr __bf16 signaling_NaN() noexcept { return __builtin_bit_cast(__bf16, (unsigned short)0x7FA0); }
    static constexpr __bf16 denorm_min() noexcept { return __builtin_bit_cast(__bf16, (unsigned short)0x0001); }
};
}  // namespace std
"""
BF16_FLAGS = ["-std=c++23", "-D__STDCPP_BFLOAT16_T__=1", "--rtlib=compiler-rt"]
BF16_PROBE = """#include <stdfloat>
int main() {
    std::bfloat16_t x = static_cast<std::bfloat16_t>(1.00390625f);  /* 1 + 2^-8 rounds to 1 */
    std::bfloat16_t y = static_cast<std::bfloat16_t>(1.0078125f);  /* 1 + 2^-7 is exact */
    std::bfloat16_t z = x + y;  /* 2 + 2^-7 is a tie: to even, 2 */
    bool limits = static_cast<float>(std::numeric_limits<std::bfloat16_t>::max()) > 3.0e38f;
    return sizeof(x) == 2 && static_cast<float>(x) == 1.0f && static_cast<float>(z) == 2.0f && limits ? 0 : 1;
}
"""
_BF16: dict[tuple[str, str], list[str]] = {}


def bf16_flags(compiler: Compiler, cache: Path) -> list[str]:
    """Flags that give the simulator a real bfloat16_t with this compiler, or [] (bf16 stays aliased)."""
    key = (compiler.path, compiler.banner)
    if key not in _BF16:
        shim = private_cache(cache) / f"bf16-shim-{content_key(BF16_SHIM)[:12]}"
        shim.mkdir(mode=0o700, exist_ok=True)
        if read_private(shim / "stdfloat") != BF16_SHIM.encode():
            write_private(shim / "stdfloat", BF16_SHIM.encode())
        flags = [*BF16_FLAGS, f"-I{shim}"]
        with tempfile.TemporaryDirectory(dir=shim) as work:
            (Path(work) / "probe.cpp").write_text(BF16_PROBE)
            try:
                built = subprocess.run([compiler.path, *flags, "probe.cpp", "-o", "probe"], cwd=work,
                                       capture_output=True, timeout=120).returncode == 0
                works = built and subprocess.run(["./probe"], cwd=work, timeout=30).returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                works = False
        _BF16[key] = flags if works else []
    return _BF16[key]


# The simulator's headers mark every instruction and helper ``always_inline`` (``PTO_INLINE`` of
# ``pto/common/type.hpp``), which -O0 honours: every kernel then holds its own inlined copy of each TLOAD, TSTORE
# and instruction it calls.  Spelling the attribute ``unused`` leaves each instantiation one out-of-line function
# that the kernels of a unit share (the same code, no optimisation either way): a quarter less compile time for
# the ptoas backend's units of 40 kernels.  (System headers spell the attribute ``__always_inline__``.)
NO_FORCED_INLINE = ("-Dalways_inline=unused",)
_INLINE_MACRO = re.compile(r"^\s*#\s*define\s+PTO_INLINE\b.*$", re.M)


@functools.cache
def forced_inline_off(include: Path, fingerprint: str) -> tuple[str, ...]:
    """NO_FORCED_INLINE when the checkout spells ``always_inline`` only in ``PTO_INLINE``'s definition (so the
    define changes where code is placed, never what it computes); no flag for a checkout that uses it otherwise.
    ``fingerprint`` (the header tree's hash) keys the memo."""
    del fingerprint
    for path in include.rglob("*"):
        if path.suffix not in (".h", ".hpp", ".inc", ".inl") or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        if "always_inline" in _INLINE_MACRO.sub("", text).replace("__always_inline__", ""):
            return ()
    return NO_FORCED_INLINE

DIAGNOSTIC_FLAGS = ["-ferror-limit=0", "-ftemplate-backtrace-limit=0", "-fno-color-diagnostics",
                    "-fno-caret-diagnostics"]


@dataclass
class Stats:
    """Counters of one backend instance (exposed in the report and the benchmark)."""

    compiles: int = 0  # full compile + link of a unit
    syntax_checks: int = 0  # -fsyntax-only rounds isolating static_assert rejections
    pch_builds: int = 0
    probes: int = 0
    cache_hits: int = 0  # units found in the cache
    units: int = 0
    variants: int = 0
    compile_seconds: float = 0.0
    binaries_run: int = 0
    cases_run: int = 0
    run_seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **deltas: float) -> None:
        with self._lock:
            for name, value in deltas.items():
                setattr(self, name, getattr(self, name) + value)

    def as_dict(self) -> dict[str, float]:
        with self._lock:
            data = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}
        data["compile_seconds"] = round(self.compile_seconds, 2)
        data["run_seconds"] = round(self.run_seconds, 2)
        return data


@dataclass(frozen=True)
class VariantStatus:
    kind: str  # ok | rejected (static_assert) | refused (the intrinsic's call, see diagnostics) | error
    message: str = ""


@dataclass(frozen=True)
class Built:
    key: str
    binary: Path | None
    variants: dict[str, VariantStatus]
    cached: bool


def content_key(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


class Builder:
    def __init__(self, compiler: Compiler, checkout: Checkout, cache: Path, stats: Stats,
                 extra_flags: Sequence[str] = ()) -> None:
        """``extra_flags`` (e.g. ``bf16_flags``) are added to every compile; a ``-std=`` among them wins."""
        self.compiler = compiler
        self.checkout = checkout
        self.cache = private_cache(cache)
        self.stats = stats
        self.flags = base_flags(checkout)
        if any(f.startswith("-std=") for f in extra_flags):
            self.flags = [f for f in self.flags if not f.startswith("-std=")]
        self.flags += list(extra_flags)
        self._pch_lock = threading.Lock()
        self._pch: Path | None = None
        self._pch_error: str | None = None

    # ------------------------------------------------------------------ keys and commands
    def key(self, *parts: str) -> str:
        return content_key(FORMAT, self.compiler.path, self.compiler.banner, " ".join(self.flags),
                           self.checkout.fingerprint, HEADER, *parts)

    def command(self, source: str, output: str | None, pch: Path | None) -> list[str]:
        cmd = [self.compiler.path, *self.flags, *DIAGNOSTIC_FLAGS]
        if pch is not None:
            cmd += ["-include-pch", str(pch), f"-I{pch.parent}"]
        cmd.append(source)
        cmd += ["-o", output] if output else ["-fsyntax-only"]
        return cmd

    def repro_command(self) -> str:
        """How to build a standalone repro program by hand."""
        flags = [f for f in self.flags if f != "-w"]
        return f"{Path(self.compiler.path).name} {' '.join(flags)} repro.cpp -o repro && ./repro"

    def _run(self, cmd: list[str], cwd: Path, counter: str) -> tuple[bool, str]:
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
            ok, output = proc.returncode == 0, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired:
            ok, output = False, f"error: the compiler did not finish within {COMPILE_TIMEOUT} s"
        except OSError as exc:
            ok, output = False, f"error: cannot run {cmd[0]}: {exc}"
        self.stats.add(**{counter: 1, "compile_seconds": time.perf_counter() - start})
        return ok, output

    def _scratch(self) -> Path:
        (self.cache / "tmp").mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="build-", dir=self.cache / "tmp"))

    # ------------------------------------------------------------------ precompiled header
    def pch(self) -> Path | None:
        """The precompiled harness header (built once, cached); None when it cannot be built.

        A PCH remembers the absolute path of its header, so both live at their final, content-addressed
        place; the PCH is written under a temporary name and renamed."""
        with self._pch_lock:
            if self._pch is not None or self._pch_error is not None:
                return self._pch
            entry = self.cache / "pch" / self.key("pch")
            target = entry / f"{HEADER_NAME}.pch"
            if not target.is_file():
                entry.mkdir(parents=True, exist_ok=True)
                header = entry / HEADER_NAME
                if read_private(header) != HEADER.encode():
                    write_private(header, HEADER.encode(), 0o644)
                fd, name = tempfile.mkstemp(prefix=f".{HEADER_NAME}.", suffix=".pch", dir=entry)
                os.close(fd)
                partial = Path(name)
                cmd = [self.compiler.path, *self.flags, *DIAGNOSTIC_FLAGS, "-x", "c++-header", str(header),
                       "-o", str(partial)]
                ok, output = self._run(cmd, entry, "pch_builds")
                if not ok:
                    self._pch_error = output.strip()[-2000:]
                    partial.unlink(missing_ok=True)
                    return None
                os.replace(partial, target)
            self._pch = target
            return target

    @property
    def pch_error(self) -> str | None:
        return self._pch_error

    # ------------------------------------------------------------------ probes
    def probe(self, name: str, source: str) -> str:
        """Compiler output of a small syntax-only check (cached by content); '' when it compiles.

        Raises ``ToolchainError`` when the harness header itself does not compile."""
        key = self.key("probe", source)
        entry = self.cache / "probe" / key
        result = entry / "output.txt"
        if result.is_file():
            return result.read_text()
        pch = self.pch()
        if pch is None:
            raise ToolchainError(f"the cpusim harness does not compile with this checkout and compiler: "
                                 f"{' '.join((self._pch_error or '').splitlines()[-3:])[-600:]}",
                                 rule="cpusim.harness")
        work = self._scratch()
        (work / f"{name}.cpp").write_text(source)
        ok, output = self._run(self.command(f"{name}.cpp", None, pch), work, "probes")
        (work / "output.txt").write_text("" if ok else output)
        _publish(work, entry)
        return result.read_text()

    # ------------------------------------------------------------------ units
    def build(self, names: Sequence[str], render: Callable[[Sequence[str]], UnitSource], check_first: bool = False
              ) -> Built:
        """Binary and per-variant status of the unit ``render(names)``; from the cache when possible.

        ``check_first``: start with a -fsyntax-only round (for units that probably hold rejections)."""
        full = render(names)
        key = self.key("unit", full.text)
        entry = self.cache / "units" / key[:2] / key
        self.stats.add(units=1, variants=len(names))
        cached = _trusted_entry(entry)
        if cached is not None:
            self.stats.add(cache_hits=1)
            statuses = {n: VariantStatus(**s) for n, s in cached["variants"].items()}
            binary = entry / BINARY if cached["binary"] else None
            return Built(key, binary, statuses, cached=True)
        work = self._scratch()
        statuses, has_binary = self._compile(work, list(names), render, check_first)
        if (work / UNIT_FILE).read_text() != full.text:  # unit.cpp holds the variants compiled last
            (work / "unit.all.cpp").write_text(full.text)
        data = {"variants": {n: asdict(s) for n, s in statuses.items()}, "binary": has_binary}
        (work / "manifest.json").write_text(json.dumps(data, indent=1) + "\n")
        _publish(work, entry)
        if _trusted_entry(entry) is None:  # what is in place now is this user's own (this process's or a twin's)
            raise ToolchainError(f"the cpusim cache entry {entry} cannot be trusted (not this user's own, or writable "
                                 "by others) and cannot be replaced; remove it", rule="cpusim.cache", where=str(entry))
        return Built(key, entry / BINARY if has_binary else None, statuses, cached=False)

    def _compile(self, work: Path, names: list[str], render: Callable[[Sequence[str]], UnitSource],
                 check_first: bool) -> tuple[dict[str, VariantStatus], bool]:
        pch = self.pch()
        statuses: dict[str, VariantStatus] = {}
        if pch is None:
            msg = f"the harness header does not compile: {self._pch_error}"
            return {n: VariantStatus("error", msg) for n in names}, False
        remaining = list(names)
        full = not check_first
        root = str(self.checkout.root)
        while remaining:
            unit = render(remaining)
            (work / UNIT_FILE).write_text(unit.text)
            ok, output = self._run(self.command(UNIT_FILE, BINARY if full else None, pch), work,
                                   "compiles" if full else "syntax_checks")
            if ok and full:
                statuses.update({n: VariantStatus("ok") for n in remaining})
                return statuses, True
            if ok:
                full = True
                continue
            verdict = diagnostics.classify(output, UNIT_FILE, unit.spans, root, unit.calls, HEADER_NAME)
            if verdict.clean:
                tail = " ".join(output.strip().splitlines()[-3:])[-600:]
                statuses.update({n: VariantStatus("error", f"compile failed: {tail}") for n in remaining})
                break
            statuses.update({n: VariantStatus("rejected", m) for n, m in verdict.rejected.items()})
            statuses.update({n: VariantStatus("refused", m) for n, m in verdict.refused.items()})
            statuses.update({n: VariantStatus("error", m) for n, m in verdict.failed.items()})
            if verdict.unattributed and not verdict.rejected:
                msg = verdict.unattributed[0]
                statuses.update({n: VariantStatus("error", msg) for n in remaining if n not in statuses})
                break
            remaining = [n for n in remaining if n not in statuses]
            full = True  # a failing compile costs what a syntax check does (the front end's errors stop it)
        return statuses, False


def _trusted_entry(entry: Path) -> dict | None:
    """The manifest of a finished cache entry this user may run (None when there is none).

    An entry is run only when the entry, its manifest and its driver are the user's own and writable by
    nobody else (the cache directory may have been shared or loosened once); any other entry is removed,
    so the unit is built again."""
    if not os.path.lexists(entry):
        return None
    data = None
    if untrusted_reason(entry) is None and (not os.path.lexists(entry / BINARY) or private_file(entry / BINARY)):
        raw = read_private(entry / "manifest.json")
        try:
            data = json.loads(raw) if raw is not None else None
        except ValueError:
            data = None
    if isinstance(data, dict) and isinstance(data.get("variants"), dict) and (
            not data.get("binary") or private_file(entry / BINARY)):
        return data
    if os.path.islink(entry) or not os.path.isdir(entry):
        with contextlib.suppress(OSError):
            os.unlink(entry)
    else:
        shutil.rmtree(entry, ignore_errors=True)
    return None


def _publish(work: Path, entry: Path) -> None:
    """Move a finished build directory into place (another process may have been faster)."""
    entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.replace(work, entry)
    except OSError:
        shutil.rmtree(work, ignore_errors=True)
