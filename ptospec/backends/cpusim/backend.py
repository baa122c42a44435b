"""The ``cpusim`` backend: the upstream CPU simulator, compiled per case batch with clang++.

``prepare`` (called once with every case of the session) plans one driver variant per static shape
group, packs the variants of each op mode into translation units, builds them (``-j`` parallel,
cached by content) and runs each binary over batches of its cases.  Valid shapes are dynamic, so
every valid region and data set of a static shape group runs on the same compiled variant.  ``run``
then only looks the result up; a case that was not prepared (a property-test example) is prepared on
its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...conformance.backend import Backend, Capabilities, Invocation, Result
from ...executor import numpy_dtype
from ...model import Database
from ...private import read_private, write_private
from ...tile import GlobalDesc, TileDesc
from . import cppgen, outcome
from .build import Builder, Built, Stats, VariantStatus, bf16_flags, forced_inline_off
from .execute import BatchCase, run_batch
from .toolchain import cache_dir, find_checkout, find_compiler, jobs, private_cache

MAX_VARIANTS_PER_UNIT = 40  # ~0.4 s + ~55 ms per variant at -O0 with the PCH (measured: 40 in ~2.5 s)
CASE_TIMEOUT = 20  # seconds per case
BATCH_CASES = 400  # cases per driver invocation (smaller batches balance the -j runs better)

Progress = Callable[[str, int, int], None]
_MISSING = VariantStatus("error", "missing from the build manifest")


def static_key(case: Invocation) -> tuple:
    """What the compiled variant depends on: op, mode and every operand but the tiles' valid shapes."""
    parts = []
    for name, t in case.tiles.items():
        if isinstance(t, TileDesc):
            parts.append((name, t.loc, t.dtype, t.rows, t.cols, t.blayout, t.slayout, t.fractal, t.pad, t.compact,
                          t.valid_row is None or t.valid_col is None))
        elif isinstance(t, GlobalDesc):  # extents, strides and place are run-time values of the driver
            parts.append((name, "global", t.dtype, t.layout, t.known))
        else:
            parts.append((name, t))
    return case.op, case.mode, tuple(parts)


def case_key(case: Invocation) -> tuple:
    """Identity of a case: op, mode, profile, tiles and the exact input bytes."""
    digest = hashlib.sha256()
    for name in sorted(case.inputs):
        value = np.asarray(case.inputs[name])
        digest.update(f"{name}:{value.dtype.str}:{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    return case.op, case.mode, case.profile, tuple(case.tiles.items()), digest.hexdigest()


class SuspectCache:
    """Whether the spec rejects a variant statically, by variant signature, kept in the build cache.

    It only decides how variants are packed into units, never a result, and the packing decides the
    units' cache keys; keeping it makes a warm run ask the validator nothing.  A stale entry (the
    spec changed) only costs a less efficient packing."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._dirty = False
        try:
            self._data: dict[str, bool] = {k: bool(v) for k, v in json.loads(read_private(path) or b"").items()}
        except (OSError, ValueError, AttributeError):
            self._data = {}

    @staticmethod
    def _key(signature: str) -> str:
        return hashlib.sha256(signature.encode()).hexdigest()[:24]

    def get(self, signature: str) -> bool | None:
        return self._data.get(self._key(signature))

    def put(self, signature: str, suspect: bool) -> bool:
        with self._lock:
            self._data[self._key(signature)] = suspect
            self._dirty = True
        return suspect

    def save(self) -> None:
        with self._lock:
            if not self._dirty:
                return
            write_private(self.path, json.dumps(self._data, sort_keys=True).encode())
            self._dirty = False


@dataclass(frozen=True)
class _Planned:
    case: Invocation
    key: tuple
    plan: cppgen.VariantPlan
    suspect: bool  # the spec rejects it statically: it will probably not compile (scheduling only)


@dataclass(frozen=True)
class _BuiltVariant:
    """A variant after its unit's build: the unit's binary, the variant's name in it, and its status."""

    binary: Path | None
    name: str
    plan: cppgen.VariantPlan
    status: VariantStatus


@dataclass(frozen=True)
class Unit:
    """One translation unit: (variant name, plan, cases) triples; ``suspect``: probably rejections."""

    variants: list[tuple[str, cppgen.VariantPlan, list[_Planned]]]
    suspect: bool


class CpuSimBackend(Backend):
    name = "cpusim"
    inline_off = False  # compile without always_inline where the checkout allows it (build.forced_inline_off)

    def __init__(self, db: Database | None = None, root: str | os.PathLike | None = None, cxx: str | None = None,
                 cache: str | os.PathLike | None = None, parallel: int | None = None) -> None:
        if db is None:
            from ...load.database import load_database

            db = load_database()
        self.db = db
        self.checkout = find_checkout(root)
        self.compiler = find_compiler(cxx)
        self.cache = private_cache(cache_dir(cache))
        self.jobs = jobs(parallel)
        self._stats = Stats()
        self.builder = Builder(self.compiler, self.checkout, self.cache, self._stats,
                               [*bf16_flags(self.compiler, self.cache),
                                *(forced_inline_off(self.checkout.include, self.checkout.fingerprint)
                                  if self.inline_off else ())])
        self.profiles = tuple(p for p, spec in db.isa.profiles.items() if spec.basis == "simulator")
        self._results: dict[tuple, Result] = {}
        self._plans: dict[tuple, cppgen.VariantPlan | cppgen.Unplannable] = {}  # by static_key
        self._suspects = SuspectCache(self.cache / "suspects.json")
        self._outcomes: dict[str, int] = {}
        self._compiled: set[str] = set()  # driver templates (VariantPlan.template) with a variant that compiled
        self._built: dict[str, _BuiltVariant] = {}  # by VariantPlan.signature: later batches run on the same binary
        self._lock = threading.Lock()
        self._caps: Capabilities | None = None
        self.unsupported_dtypes: dict[str, str] = {}

    # ------------------------------------------------------------------ manifest
    def capabilities(self) -> Capabilities:
        if self._caps is None:
            names = [d for d, spec in self.db.isa.dtypes.items() if any(spec.exists_on(p) for p in self.profiles)]
            self.unsupported_dtypes = self._aliased(names)
            usable = [d for d in names if d not in self.unsupported_dtypes]
            native = {d for d in usable if any(p not in self.db.isa.dtypes[d].emulated for p in self.profiles
                                               if self.db.isa.dtypes[d].exists_on(p))}
            emulated = set(usable) - native
            op_dtypes = {name: frozenset(emulated & {d for p in self.profiles if p in op.dtypes
                                                     for row in op.dtypes[p].rows for ds in row.types.values()
                                                     for d in ds})
                         for name, op in self.db.ops.items()}
            self._caps = Capabilities(profiles=self.profiles, dtypes=tuple(d for d in usable if d in native),
                                      op_dtypes={n: d for n, d in op_dtypes.items() if d})
        return self._caps

    def _aliased(self, names: list[str]) -> dict[str, str]:
        """dtypes whose C++ type is the same type as an earlier dtype's with this toolchain.

        Such a dtype cannot be run faithfully (e.g. bfloat16_t is _Float16 with clang 19), so its
        cases are skipped with the reason."""
        spec = self.db.isa.dtypes
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:] if spec[a].bits == spec[b].bits]
        lines = [f"#include \"{cppgen.HEADER_NAME}\"", "#include <type_traits>"]
        lines += [f"static_assert(!std::is_same_v<{spec[a].cpp}, {spec[b].cpp}>, \"same-type {a} {b}\");"
                  for a, b in pairs]
        output = self.builder.probe("aliases", "\n".join(lines) + "\n")
        out: dict[str, str] = {}
        for a, b in re.findall(r"same-type (\w+) (\w+)", output):
            out.setdefault(b, f"its C++ type {spec[b].cpp} is the same type as {spec[a].cpp} ({a}) with "
                              f"{self.compiler.banner}, so {b} results would not be {b}")
        return out

    # ------------------------------------------------------------------ batch
    def prepare(self, cases: Sequence[Invocation], progress: Progress | None = None) -> None:
        caps = self.capabilities()
        planned: list[_Planned] = []
        for case in cases:
            key = case_key(case)
            if key in self._results:
                continue
            reason = caps.unsupported(case.op, case.mode, case.profile, case.tiles)
            if reason:
                continue  # the runner skips it before calling run()
            plan = self._plan(case)
            if isinstance(plan, cppgen.Unplannable):
                self._store(key, Result.skip(str(plan)))
                continue
            suspect = self._suspects.get(plan.signature)
            if suspect is None:
                suspect = self._suspects.put(plan.signature, self._suspect(case))
            planned.append(_Planned(case, key, plan, suspect))
        self._suspects.save()
        if not planned:
            return
        # a variant built by an earlier call (the fixed cases, before their derived cases) is not built again
        units = self._units([p for p in planned if p.plan.signature not in self._built])
        if units:
            self._record(units, self._build_all(units, progress))
        self._run_all(planned, progress)

    def _plan(self, case: Invocation) -> cppgen.VariantPlan | cppgen.Unplannable:
        """The case's driver variant (one per static shape group, so planned once per group)."""
        key = static_key(case)
        if key not in self._plans:
            try:
                self._plans[key] = cppgen.plan_variant(self.db, case)
            except cppgen.Unplannable as exc:
                self._plans[key] = exc
        return self._plans[key]

    def _suspect(self, case: Invocation) -> bool:
        """Whether the spec rejects the case statically (so its variant will likely fail to compile).

        Only used to schedule builds: such variants go to their own units, which are checked with
        -fsyntax-only first instead of failing a whole unit's full compile.  Static rules do not
        depend on valid shapes, so one case answers for its whole variant."""
        from ...validator import validate

        try:
            report = validate(self.db, case.op, case.mode, case.profile, case.tiles)
        except Exception:  # scheduling must never fail a case
            return False
        return any(v.phase == "static" for v in report.violations)

    def _units(self, planned: list[_Planned]) -> list[Unit]:
        """Group cases by variant, variants by op mode (likely rejections apart), and cut into units."""
        by_mode: dict[tuple[str, str, bool], dict[str, list[_Planned]]] = defaultdict(dict)
        for p in planned:
            by_mode[(p.plan.op, p.plan.mode, p.suspect)].setdefault(p.plan.signature, []).append(p)
        units = []
        for (_op, _mode, suspect), variants in sorted(by_mode.items()):
            ordered = sorted(variants.items(), key=lambda kv: (kv[1][0].plan.dtypes, kv[0]))
            for start in range(0, len(ordered), MAX_VARIANTS_PER_UNIT):
                chunk = ordered[start:start + MAX_VARIANTS_PER_UNIT]
                units.append(Unit([(cppgen.variant_name(i), ps[0].plan, ps) for i, (_sig, ps) in enumerate(chunk)],
                                  suspect))
        return units

    def _build_all(self, units: list[Unit], progress: Progress | None) -> list[Built]:
        done = 0
        total = len(units)
        lock = threading.Lock()

        def one(unit: Unit) -> Built:
            nonlocal done
            plans = {name: plan for name, plan, _ in unit.variants}
            result = self.builder.build([name for name, _, _ in unit.variants],
                                        lambda names: cppgen.render_unit([plans[n] for n in names], names),
                                        check_first=unit.suspect)
            with lock:
                done += 1
                if progress:
                    progress("compile", done, total)
            return result

        if progress:
            progress("compile", 0, total)
        self.builder.pch()
        order = sorted(range(total), key=lambda i: -len(units[i].variants))  # big units first: better packing on -j
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = {i: pool.submit(one, units[i]) for i in order}
        return [futures[i].result() for i in range(total)]

    def _record(self, units: list[Unit], built: list[Built]) -> None:
        """Keep each variant's binary and status; note the driver templates that compiled (the control of
        refusals, ``outcome.from_build``)."""
        for unit, b in zip(units, built, strict=True):
            for name, plan, _ in unit.variants:
                status = b.variants.get(name, _MISSING)
                self._built[plan.signature] = _BuiltVariant(b.binary, name, plan, status)
                if status.kind == "ok":
                    self._compiled.add(plan.template)

    def _run_all(self, planned: list[_Planned], progress: Progress | None) -> None:
        by_binary: dict[Path, list[tuple[str, cppgen.VariantPlan, _Planned]]] = {}
        for p in planned:
            v = self._built[p.plan.signature]
            early = outcome.from_build(v.status, v.plan.template in self._compiled, f"{v.plan.op} {v.plan.mode}")
            if early is not None:
                self._store(p.key, early)
            elif v.binary is not None:
                by_binary.setdefault(v.binary, []).append((v.name, v.plan, p))
        jobs_list = [(binary, runnable[i:i + BATCH_CASES]) for binary, runnable in by_binary.items()
                     for i in range(0, len(runnable), BATCH_CASES)]
        jobs_list.sort(key=lambda job: -len(job[1]))  # big batches first: better packing on -j
        total = sum(len(r) for _, r in jobs_list)
        done = 0
        lock = threading.Lock()
        if progress:
            progress("run", 0, total)

        def one(binary: Path, runnable) -> None:
            nonlocal done
            batch = [BatchCase(name, cppgen.params(plan, p.case), cppgen.operand_bytes(self.db, plan, p.case))
                     for name, plan, p in runnable]
            start = time.perf_counter()
            records, own = run_batch(binary, batch, self.cache / "tmp", CASE_TIMEOUT)
            self._stats.add(binaries_run=1, cases_run=len(batch), run_seconds=time.perf_counter() - start)
            for (_name, plan, p), record in zip(runnable, records, strict=True):
                result = outcome.from_run(record, self._output_shapes(plan, p.case), str(self.checkout.root),
                                          CASE_TIMEOUT)
                if result.error and own:
                    result = Result.harness_error(f"{result.error}; {own[-300:]}")
                self._store(p.key, result)
            with lock:
                done += len(runnable)
                if progress:
                    progress("run", done, total)

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for future in [pool.submit(one, b, r) for b, r in jobs_list]:
                future.result()

    def _output_shapes(self, plan: cppgen.VariantPlan, case: Invocation) -> dict[str, tuple[np.dtype, tuple[int, int]]]:
        out = {}
        for o in plan.operands:
            desc = case.tiles[o.name]
            if o.role == "out" and isinstance(desc, TileDesc):
                out[o.name] = (numpy_dtype(self.db, desc.dtype), desc.shape)
            elif o.role == "out" and isinstance(desc, GlobalDesc):
                out[o.name] = (numpy_dtype(self.db, desc.dtype), (desc.size,))
        return out

    def _store(self, key: tuple, result: Result) -> None:
        with self._lock:
            self._results[key] = result
            kind = outcome.kind(result)
            self._outcomes[kind] = self._outcomes.get(kind, 0) + 1

    # ------------------------------------------------------------------ one case
    def run(self, case: Invocation) -> Result:
        key = case_key(case)
        if key not in self._results:
            self.prepare([case])
        result = self._results.get(key)
        if result is None:
            reason = self.capabilities().unsupported(case.op, case.mode, case.profile, case.tiles)
            return Result.skip(reason or "the case could not be prepared")
        return result

    def artifacts(self, case: Invocation) -> dict[str, str]:
        try:
            plan = cppgen.plan_variant(self.db, case)
        except cppgen.Unplannable:
            return {}
        return {"cpp_core": cppgen.repro_core(plan, case),
                "cpp": cppgen.repro_program(self.db, plan, case, self.builder.repro_command()),
                "build": self.builder.repro_command()}

    def stats(self) -> dict[str, float]:
        data: dict[str, float] = dict(self._stats.as_dict())
        data.update({f"cases {k}": v for k, v in sorted(self._outcomes.items())})
        return data

    def describe(self) -> dict[str, str]:
        """Where the simulator and compiler came from (for the report)."""
        return {"checkout": str(self.checkout.root), "checkout_fingerprint": self.checkout.fingerprint[:16],
                "compiler": f"{self.compiler.path} ({self.compiler.banner})", "cache": str(self.cache),
                "jobs": str(self.jobs),
                "bf16": ("real bfloat16: bfloat16_t is std::bfloat16_t = clang __bf16 "
                         f"({' '.join(f for f in self.builder.flags if 'BFLOAT16' in f or 'rtlib' in f)})"
                         if "-D__STDCPP_BFLOAT16_T__=1" in self.builder.flags
                         else "bfloat16_t is the header's _Float16 alias: bf16 cases are skipped"),
                **{f"unsupported dtype {d}": why for d, why in self.unsupported_dtypes.items()}}
