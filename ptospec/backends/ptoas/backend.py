"""The ``ptoas`` backend: each case printed as a runnable ``.pto`` function, assembled by ptoas for the profile's
target, and the C++ it emits compiled and run on the CPU simulator with the cpusim backend's toolchain, build
cache, precompiled header and blame-and-retry.

One function per static configuration (tiles' valid shapes are run-time arguments, so derived cases cost a
run); up to ``MAX_FUNCTIONS`` functions per module.  A function ptoas rejects is a rejection of its cases
("ptoas: ..."), set aside before the others are assembled again.  Each emitted kernel becomes a variant of the
cpusim driver: a wrapper reads its pointer arguments as blobs and its integers and scalars as parameters,
calls the kernel and dumps the output buffers; the driver runs each case in a forked child (crash and
``PTO_ASSERT`` isolation, as cpusim).  Only cases whose tiles can be exchanged with global memory (Vec tiles
without boxes, see ``module.case_function(io=True)``) run; the others are skipped with the reason.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...conformance.backend import Capabilities, Invocation, Result
from ...executor import numpy_dtype
from ...model import Database
from ...program.spec import program_spec
from ..cpusim import outcome
from ..cpusim.backend import CpuSimBackend, case_key, static_key
from ..cpusim.build import Built, VariantStatus
from ..cpusim.cppgen import HEADER_NAME, UnitSource
from ..cpusim.execute import BatchCase, run_batch
from ..cpusim.linkblame import undefined_callers
from .discover import find_ptoas
from .exchange import outputs_from, program_args
from .module import Function, NotExpressible, case_function, module_text
from .spec import load_ptoas_spec
from .verifier import Job, run_ptoas, verify_batch

MAX_FUNCTIONS = 40
CASE_TIMEOUT = 20
BATCH_CASES = 400
_KERNEL = re.compile(r"^(?:__global__\s+)?(?:AICORE\s+)?void\s+(case\d+)\s*\(([^)]*)\)\s*\{\s*$", re.M)
Progress = Callable[[str, int, int], None]


@dataclass
class _Kernel:
    fn: Function
    arch: str
    profile: str
    rejected: str = ""  # ptoas's error
    cpp: str = ""  # the kernel's C++ (from ptoas)
    params: tuple[str, ...] = ()  # its C++ parameter types
    binary: Path | None = None
    status: object = None


class PtoasBackend(CpuSimBackend):
    name = "ptoas"
    inline_off = True

    def __init__(self, db: Database | None = None, root: str | os.PathLike | None = None, cxx: str | None = None,
                 cache: str | os.PathLike | None = None, parallel: int | None = None, ptoas: str | None = None
                 ) -> None:
        super().__init__(db, root, cxx, cache, parallel)
        self.spec = load_ptoas_spec(self.db)
        self.ptoas = find_ptoas(self.spec, ptoas)
        self.profiles = tuple(self.spec.arch)
        self._kernels: dict[tuple, _Kernel | NotExpressible] = {}
        self._klock = threading.Lock()
        self._counter = 0

    def capabilities(self) -> Capabilities:
        caps = super().capabilities()
        ops = tuple(n for n, op in self.db.ops.items() if op.mnemonic not in self.spec.uncovered)
        return Capabilities(profiles=self.profiles, ops=ops, dtypes=caps.dtypes, op_dtypes=caps.op_dtypes)

    # ------------------------------------------------------------------ batch
    def prepare(self, cases: Sequence[Invocation], progress: Progress | None = None) -> None:
        caps = self.capabilities()
        todo: list[tuple[Invocation, tuple, tuple]] = []
        fresh: list[tuple] = []
        for case in cases:
            key = case_key(case)
            if key in self._results or caps.unsupported(case.op, case.mode, case.profile, case.tiles):
                continue
            skey = (static_key(case), case.profile)
            if skey not in self._kernels:
                op = self.db.ops[case.op]
                mode = op.mode(case.mode)
                try:
                    self._counter += 1
                    fn = case_function(self.db, self.spec, op, mode, case.tiles, f"case{self._counter}", io=True)
                    self._kernels[skey] = _Kernel(fn, self.spec.arch[case.profile], case.profile)
                    fresh.append(skey)
                except NotExpressible as exc:
                    self._kernels[skey] = exc
            k = self._kernels[skey]
            if isinstance(k, NotExpressible):
                self._store(key, Result.skip(f"not runnable through ptoas: {k}"))
                continue
            todo.append((case, key, skey))
        if fresh:
            self._assemble([s for s in fresh], progress)
            self._build([s for s in fresh if not self._kernels[s].rejected], progress)
        self._run(todo, progress)

    def _assemble(self, keys: list[tuple], progress: Progress | None) -> None:
        """ptoas over modules of up to MAX_FUNCTIONS functions per target; rejected functions set aside."""
        by_arch: dict[str, list[tuple]] = {}
        for k in keys:
            by_arch.setdefault(self._kernels[k].arch, []).append(k)
        chunks = [(arch, ks[i:i + MAX_FUNCTIONS]) for arch, ks in by_arch.items()
                  for i in range(0, len(ks), MAX_FUNCTIONS)]
        done = 0

        def one(arch: str, ks: list[tuple]) -> None:
            nonlocal done
            kernels = {k: self._kernels[k] for k in ks}
            verdicts = verify_batch(self.ptoas.path, arch, [Job(k, kernels[k].fn) for k in ks])
            for k, v in verdicts.items():
                if v.status != "accepted":
                    kernels[k].rejected = f"ptoas --pto-arch={arch} {v.status}: {v.message}"
            good = [k for k in ks if not kernels[k].rejected]
            if good:
                with tempfile.TemporaryDirectory(dir=self._scratch()) as tmp:
                    out = Path(tmp) / "module.cpp"
                    proc = run_ptoas(self.ptoas.path, module_text([kernels[k].fn for k in good]), arch, str(out))
                    text = out.read_text() if proc.returncode == 0 and out.is_file() else ""
                found = _split_kernels(text)
                for k in good:
                    body = found.get(kernels[k].fn.name)
                    if body is None:
                        kernels[k].rejected = f"ptoas --pto-arch={arch} emitted no kernel {kernels[k].fn.name}"
                    else:
                        kernels[k].cpp, kernels[k].params = body
                self._preamble.setdefault(arch, _preamble(text))
            with self._klock:
                done += len(ks)
                if progress:
                    progress("ptoas", done, len(keys))

        self._preamble: dict[str, str] = getattr(self, "_preamble", {})
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for f in [pool.submit(one, a, ks) for a, ks in chunks]:
                f.result()

    def _scratch(self) -> Path:
        path = self.cache / "tmp"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _build(self, keys: list[tuple], progress: Progress | None) -> None:
        by_arch: dict[tuple[str, str], list[tuple]] = {}
        for k in keys:
            kern = self._kernels[k]
            by_arch.setdefault((kern.arch, kern.profile), []).append(k)
        units = [(arch, profile, ks[i:i + MAX_FUNCTIONS]) for (arch, profile), ks in by_arch.items()
                 for i in range(0, len(ks), MAX_FUNCTIONS)]
        done = 0
        sim_arch = program_spec(self.db).sim_arch

        def one(arch: str, profile: str, ks: list[tuple], count: bool = True) -> None:
            nonlocal done
            names = {self._kernels[k].fn.name: k for k in ks}

            def render(selected: Sequence[str]) -> UnitSource:
                return _unit(self._preamble.get(arch, ""), [self._kernels[names[n]] for n in selected],
                             sim_arch[profile])

            built: Built = self.builder.build(list(names), render)
            alike = failing_alike({n: built.variants.get(n) for n in names})
            # the variants that failed alike (a link error: a kernel calls what the simulator declares but never
            # defines) are followed to the undefined references; those that reach none are built again apart
            # (in halves when the failure cannot be followed), so that only the kernels that fail are blamed
            blamed = undefined_callers(self.builder, render(alike).text, alike) if alike else None
            again = [names[n] for n in alike if not blamed or n not in blamed]
            for n, k in names.items():
                if k not in again:
                    self._kernels[k].binary = built.binary
                    self._kernels[k].status = built.variants.get(n)
            # halved at once when the relocations named no one (rebuilding the same failing set whole would fail
            # as before), or when the set is this very unit again
            halve = not blamed or len(again) == len(ks)
            parts = [again[:len(again) // 2], again[len(again) // 2:]] if halve else [again]
            for part in parts:
                if part:
                    one(arch, profile, part, count=False)
            if not count:
                return
            with self._klock:
                done += 1
                if progress:
                    progress("compile", done, len(units))

        self.builder.pch()
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for f in [pool.submit(one, a, p, ks) for a, p, ks in units]:
                f.result()

    def _run(self, todo: list[tuple[Invocation, tuple, tuple]], progress: Progress | None) -> None:
        by_binary: dict[Path, list[tuple[Invocation, tuple, _Kernel]]] = {}
        for case, key, skey in todo:
            kern = self._kernels[skey]
            if kern.rejected:
                self._store(key, Result.reject(kern.rejected))
                continue
            early = outcome.from_build(kern.status, True, f"{case.op} {case.mode}") if kern.status else None
            if early is not None:
                self._store(key, early)
            elif kern.binary is None:
                self._store(key, Result.harness_error("the assembled kernel did not build"))
            else:
                by_binary.setdefault(kern.binary, []).append((case, key, kern))
        jobs_list = [(b, r[i:i + BATCH_CASES]) for b, r in by_binary.items() for i in range(0, len(r), BATCH_CASES)]
        done = 0

        def one(binary: Path, runnable) -> None:
            nonlocal done
            batch = []
            for case, _key, kern in runnable:
                args = program_args(self.db, kern.fn, case.tiles, case.inputs)
                params, blobs = {}, {}
                for a in kern.fn.args:
                    v = args[a.name]
                    if isinstance(v, np.ndarray):
                        blobs[a.name] = np.ascontiguousarray(v).tobytes()
                    elif a.role == "scalar":
                        d = case.tiles[a.operand]
                        raw = np.asarray(v, numpy_dtype(self.db, d.dtype)).tobytes()
                        params[a.name] = str(int.from_bytes(raw, "little"))
                    else:
                        params[a.name] = str(int(v))
                batch.append(BatchCase(kern.fn.name, params, blobs))
            records, own = run_batch(binary, batch, self.cache / "tmp", CASE_TIMEOUT)
            for (case, key, kern), record in zip(runnable, records, strict=True):
                shapes = {a.name: (numpy_dtype(self.db, case.tiles[a.operand].dtype),
                                   (len(np.asarray(program_args(self.db, kern.fn, case.tiles, case.inputs)[a.name])
                                        .reshape(-1)),))
                          for a in kern.fn.args if a.role == "pointer"}
                result = outcome.from_run(record, shapes, str(self.checkout.root), CASE_TIMEOUT)
                if result.outputs is not None:
                    mode = self.db.ops[case.op].mode(case.mode)
                    result = Result.ok(outputs_from(mode, kern.fn, case.tiles, result.outputs))
                elif result.error and own:
                    result = Result.harness_error(f"{result.error}; {own[-300:]}")
                self._store(key, result)
            with self._klock:
                done += len(runnable)
                if progress:
                    progress("run", done, len(todo))

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for f in [pool.submit(one, b, r) for b, r in jobs_list]:
                f.result()

    def attribute(self, divergences: list, invocation_of: Callable[[object], Invocation],
                  progress: Callable[[int, int], None] | None = None) -> list:
        """Each divergence with whether only the assembler shows it (``attribute.py``); ``progress(done, total)``
        as the replays' programs finish."""
        from ...conformance.divergence import cause, explain
        from .attribute import attribute, replay_many

        def each(cases: list[Invocation]) -> list[tuple[Result, bool, Result | None, str]]:
            answers: list = []
            replays: list[tuple[int, tuple[Function, str, Invocation]]] = []
            for case in cases:
                result = self.run(case)
                k = self._kernels.get((static_key(case), case.profile))
                if not isinstance(k, _Kernel):
                    answers.append((result, False, None, f"not printed as a runnable function: {k}"))
                elif k.rejected:
                    answers.append((result, True, None, ""))
                else:
                    replays.append((len(answers), (k.fn, k.arch, case)))
                    answers.append((result, False, None, ""))
            sims = replay_many(self.db, [item for _i, item in replays], str(self.checkout.root), str(self.cache),
                               self.compiler.path, self.jobs, progress)
            for (i, _item), sim in zip(replays, sims, strict=True):
                answers[i] = (answers[i][0], False, sim, "")
            return answers

        memo: dict = {}

        def group_of(d) -> tuple:
            return d.category, d.op, d.mode, d.profile, cause(self.db, d, explain(self.db, d, memo))

        return attribute(divergences, invocation_of, each, group_of)

    def artifacts(self, case: Invocation) -> dict[str, str]:
        k = self._kernels.get((static_key(case), case.profile))
        if not isinstance(k, _Kernel):
            return {}
        return {"cpp_core": k.cpp, "pto": module_text([k.fn], k.arch)}

    def describe(self) -> dict[str, str]:
        return {**super().describe(), "ptoas": f"{self.ptoas.path} (ptoas {self.ptoas.version_text})"}


def _split_kernels(text: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Kernel name -> (its C++ from the signature to the closing brace, its parameter types)."""
    out = {}
    matches = list(_KERNEL.finditer(text))
    for m in matches:
        end = text.find("\n}\n", m.end())
        body = text[m.start(): end + 3 if end >= 0 else len(text)]
        params = tuple(_param_type(p) for p in m.group(2).split(",") if p.strip())
        out[m.group(1)] = (body, params)
    return out


def _param_type(param: str) -> str:
    """``__gm__ float* v1`` -> ``__gm__ float*``."""
    return re.sub(r"\s*\b[A-Za-z_]\w*\s*$", "", param.strip())


def _preamble(text: str) -> str:
    """What ptoas emits before its first kernel (includes and using-declarations)."""
    m = _KERNEL.search(text)
    return text[:m.start()] if m else ""


_DRIVER_HELPERS = """
namespace ptoas_driver {
template <typename T>
T word(const ptocs::Case& c, const char* key)
{
    const unsigned long long bits = std::stoull(c.text(key), nullptr, 0);
    if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(static_cast<long long>(bits));
    } else {
        T value;
        std::memcpy(&value, &bits, sizeof(T));
        return value;
    }
}
template <typename T>
T buffer(ptocs::Case& c, const char* key)
{
    auto it = c.blobs.find(key);
    if (it == c.blobs.end()) {
        throw ptocs::HarnessError(std::string("missing data for ") + key);
    }
    return reinterpret_cast<T>(it->second.data());
}
}  // namespace ptoas_driver
"""


def failing_alike(statuses: dict[str, VariantStatus | None]) -> list[str]:
    """The variants of a unit that failed with one and the same error (more than one): the failure is not
    attributed to a kernel (a link error names a symbol, not a line), so they are to be built again apart."""
    errors = [(n, st.message) for n, st in statuses.items() if st is not None and st.kind == "error"]
    if not errors:
        return []
    messages = [m for _n, m in errors]
    common = max(set(messages), key=messages.count)
    alike = [n for n, m in errors if m == common]
    return alike if len(alike) > 1 else []


def _unit(preamble: str, kernels: list[_Kernel], sim_arch: str) -> UnitSource:
    """The translation unit: the harness, ptoas's preamble, each kernel with its wrapper, the table, main."""
    lines = ["// generated by ptospec ptoas -- do not edit", f"#include \"{HEADER_NAME}\"", "#include <cstring>",
             "#include <type_traits>"]
    lines += [s for s in preamble.splitlines() if s.strip().startswith(("#include", "using"))]
    lines += _DRIVER_HELPERS.splitlines()
    spans: dict[str, tuple[int, int]] = {}
    calls: dict[str, tuple[int, str]] = {}
    for k in kernels:
        name = k.fn.name
        first = len(lines) + 1
        lines += k.cpp.splitlines()
        call = next((i for i, s in enumerate(k.cpp.splitlines()) if re.search(r"\bT[A-Z0-9_]+\s*\(", s)
                     and "TASSIGN" not in s and "TLOAD" not in s), None)
        if call is not None:
            m = re.search(r"\b(T[A-Z0-9_]+)\s*\(", k.cpp.splitlines()[call])
            calls[name] = (first + call, m.group(1) if m else "")
        args = []
        for a, ty in zip(k.fn.args, k.params, strict=False):
            helper = "buffer" if "*" in ty else "word"
            args.append(f"ptoas_driver::{helper}<{ty}>(c, \"{a.name}\")")
        outs = [a.name for a in k.fn.args if a.role == "pointer"]
        lines += [f"static void run_{name}(ptocs::Case& c)", "{",
                  f"    pto::NPU_MEMORY_INIT(pto::NPUArch::{sim_arch});",
                  f"    {name}({', '.join(args)});"]
        lines += [f"    c.output(\"{o}\", c.blobs[\"{o}\"].data(), c.blobs[\"{o}\"].size());" for o in outs]
        lines += ["}"]
        spans[name] = (first, len(lines))
    lines.append("static const ptocs::Variant kVariants[] = {")
    lines += [f"    {{\"{k.fn.name}\", &run_{k.fn.name}}}," for k in kernels]
    lines += ["};", "PTOCS_MAIN(kVariants)", ""]
    return UnitSource("\n".join(lines), tuple(k.fn.name for k in kernels), spans, calls)
