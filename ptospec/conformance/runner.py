"""Run one conformance case against a backend and judge the result (used by the pytest plugin)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial

import numpy as np

from ..asm.types import format_descriptor, parse_descriptor
from ..attrs import spell_value
from ..errors import PtospecError
from ..executor import execute
from ..model import Database
from ..tile import TileDesc
from ..validator import Report, validate
from .backend import Backend, Invocation, Result
from .cases import (
    PATTERNS,
    PROPERTY_COLS,
    PROPERTY_ROWS,
    Case,
    base_variants,
    case_id,
    dtype_combos,
    feasible,
    legal_configuration,
)
from .compare import compare_detail
from .data import make_inputs
from .derive import Derived, derived_cases
from .divergence import Divergence
from .failures import ConformanceFailure, Unsupported
from .parallel import Checks, derive_all, usable
from .repro import render

RAN = ("wrong-value", "write-outside-valid")  # divergence categories of a case the backend ran


class LazyArtifacts(Mapping[str, str]):
    """A backend's repro material for a failing case, made when first read (reports read it only for the
    cases they show, so thousands of similar divergences cost nothing here)."""

    def __init__(self, backend: Backend, invocation: Callable[[], Invocation]) -> None:
        self._backend = backend
        self._invocation = invocation
        self._made: dict[str, str] | None = None

    def _items(self) -> dict[str, str]:
        if self._made is None:
            try:
                self._made = dict(self._backend.artifacts(self._invocation()))
            except Exception as exc:  # a broken hook must not hide the divergence itself
                self._made = {"error": f"artifacts hook failed: {exc}"}
            self._backend = self._invocation = None  # type: ignore[assignment]
        return self._made

    def __getitem__(self, key: str) -> str:
        return self._items()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())


def _copy(data: dict[str, object]) -> dict[str, object]:
    return {n: (v.copy() if isinstance(v, np.ndarray) else v) for n, v in data.items()}


class Runner:
    def __init__(self, db: Database, backend: Backend, backend_name: str) -> None:
        self.db = db
        self.backend = backend
        self.backend_name = backend_name
        self.caps = backend.capabilities()
        self.divergences: list[Divergence] = []  # every disagreement found, in order
        self._label = ""
        self._recording = True
        self.derive = 0  # derived cases checked with each fixed positive case (see derive.py); 0: none
        # every case checked, fixed and derived; "no_data": the positive cases among them of instructions
        # without data semantics (run, and checked to change no operand: nothing else is compared)
        # "cross_core": cases of cross-core FIFO instructions, checked against the validator and the executor's
        # refusal only (no backend runs one side of a FIFO alone); counted apart, not as verified
        self.tally = {"passed": 0, "failed": 0, "skipped": 0, "no_data": 0, "cross_core": 0}
        self._derived: dict[Case, list[Derived]] = {}
        self._brief = False  # fail without rendering the repro text
        self._inputs: dict[tuple[Case, str], dict[str, object]] = {}  # data made by prepare, used once
        self.workers = 0  # worker processes for deriving and checking prepared cases (0 or 1: none)
        self.parallel_worker = False  # this is a worker's copy of the runner
        self._checks: Checks | None = None
        self._fixed_results: dict[Case, Result] = {}  # the backend's results on prepared fixed positive cases

    # -------------------------------------------------------------- batch preparation
    def prepare(self, cases: Sequence[Case], progress: Callable[[str, int, int], None] | None = None) -> None:
        """Hand every runnable case to the backend's ``prepare`` hook (if it has one) at once, then the derived
        cases of the positive ones it ran, at once.  Derived cases of a fixed case the backend rejected or failed
        on would only repeat that, so they are not made.  The data made here is kept for ``check``.  With
        ``workers`` > 1, deriving and then checking the cases run in that many worker processes (see ``parallel``)."""
        if type(self.backend).prepare is Backend.prepare:
            return
        invocations = []
        runnable: list[Case] = []
        positives: list[tuple[Case, dict, Invocation]] = []
        for case in cases:
            tiles = case.parsed(self.db)
            if self.db.op(case.op).mode(case.mode).cross_core:
                continue  # checked without the backend (check_cross_core)
            if self.caps.unsupported(case.op, case.mode, case.profile, tiles):
                continue
            spec = self.db.op(case.op)
            data = make_inputs(self.db, spec, spec.mode(case.mode), tiles, case.seed, case.pattern)
            self._inputs[(case, "")] = data
            invocations.append(self._invocation(case.op, case.mode, case.profile, tiles, data))
            runnable.append(case)
            if self.derive and not case.reject and spec.mode(case.mode).has_data_semantics:
                positives.append((case, tiles, invocations[-1]))
        self.backend.prepare(invocations, progress)
        ran = [(case, tiles) for case, tiles, invocation in positives if self._ran(case, invocation)]
        if ran:
            if progress:
                progress("derive", 0, len(ran))
            derived = []
            for (case, _tiles), items in zip(ran, derive_all(self, ran, self.workers), strict=True):
                self._derived[case] = [d for d, _ in items]
                for d, data in items:
                    self._inputs[(case, d.label)] = data
                    derived.append(self._invocation(case.op, case.mode, case.profile, d.tiles, data))
            if progress:
                progress("derive", len(ran), len(ran))
            self.backend.prepare(derived, progress)
        if usable(self.workers) and len(runnable) > 1:
            self._checks = Checks(self, runnable, self.workers)

    def _ran(self, case: Case, invocation: Invocation) -> bool:
        """Whether the backend ran a prepared fixed case (neither rejected, failed nor skipped it); its result is
        kept for ``check``."""
        result = self.backend.run(invocation)
        self._fixed_results[case] = result
        return not (result.error or result.rejected or result.unsupported)

    def _take(self, case: Case) -> bool:
        """Report the verdict the workers reached on ``case``; False when they have none (check it here)."""
        verdict = self._checks.take(case) if self._checks is not None and not self.parallel_worker else None
        if verdict is None or verdict.outcome == "error":
            return False
        self._drop(case)
        for name, n in verdict.tally.items():
            self.tally[name] += n
        records = [replace(d, artifacts=LazyArtifacts(self.backend, partial(self.rebuild, d)))
                   for d in verdict.divergences]
        self.divergences.extend(records)
        if verdict.outcome == "skipped":
            raise Unsupported(verdict.message)
        if verdict.outcome == "failed":
            raise ConformanceFailure(verdict.message, tuple(records))
        return True

    def rebuild(self, d: Divergence) -> Invocation:
        tiles = {n: parse_descriptor(t, self.db.isa) for n, t in d.descriptors.items()}
        return self._invocation(d.op, d.mode, d.profile, tiles, d.inputs)

    def _drop(self, case: Case) -> None:
        """Forget the data ``prepare`` made for a case and its derived cases."""
        self._inputs.pop((case, ""), None)
        for d in self._derived.get(case, ()):
            self._inputs.pop((case, d.label), None)

    def derived_of(self, case: Case, tiles: dict, label: str | None = None) -> list[Derived]:
        """The derived cases checked with the fixed positive ``case`` (none when ``derive`` is 0)."""
        if not self.derive or case.reject or not self.db.op(case.op).mode(case.mode).has_data_semantics:
            return []  # an instruction without data semantics has no values or regions worth varying
        if case not in self._derived:
            self._derived[case] = derived_cases(self.db, case, tiles, label or case_id(case, self.db), self.derive)
        return self._derived[case]

    # -------------------------------------------------------------- fixed cases
    def check(self, case: Case) -> None:
        """Check a fixed case, then its derived cases; one failure carries every divergence found."""
        if self._take(case):
            return
        tiles = case.parsed(self.db)
        if self.db.op(case.op).mode(case.mode).cross_core:
            self._label = case_id(case, self.db)
            try:
                self.check_cross_core(case.op, case.mode, case.profile, tiles, case.reject)
            except ConformanceFailure:
                self.tally["failed"] += 1
                raise
            self.tally["cross_core"] += 1
            return
        label = self._label = case_id(case, self.db)
        data = self._inputs.pop((case, ""), None)
        first: ConformanceFailure | None = None
        try:
            if case.reject:
                self.check_reject(case.op, case.mode, case.profile, tiles, case.seed, case.pattern, case.reject, data)
            else:
                # derived cases with the fixed case's own region carry the validator's report on it
                report = next((d.report for d in self._derived.get(case, ()) if d.tiles == tiles), None)
                self.check_positive(case.op, case.mode, case.profile, tiles, case.seed, case.pattern, report, data,
                                    self._fixed_results.pop(case, None))
                if not self.db.op(case.op).mode(case.mode).has_data_semantics:
                    self.tally["no_data"] += 1
            self.tally["passed"] += 1
        except Unsupported:
            self.tally["skipped"] += 1
            self._drop(case)
            raise
        except ConformanceFailure as exc:
            self.tally["failed"] += 1
            first = exc
        if first is not None and any(r.category not in RAN for r in first.divergences):
            # the backend did not run the fixed case (rejected it, or failed): its derived cases share the
            # static configuration, so they would only repeat that; they are not counted as verified
            self.tally["skipped"] += len(self._derived.get(case, ()))
            self._drop(case)
            raise first
        derived = self.derived_of(case, tiles, label)
        failures: list[tuple[Derived, ConformanceFailure]] = []
        try:
            for d in derived:
                self._label = f"{label}/{d.label}"
                self._brief = first is not None or bool(failures)
                data = self._inputs.pop((case, d.label), None)
                try:
                    self.check_positive(case.op, case.mode, case.profile, d.tiles, d.seed, d.pattern, d.report, data)
                    self.tally["passed"] += 1
                except Unsupported:
                    self.tally["skipped"] += 1
                except ConformanceFailure as exc:
                    self.tally["failed"] += 1
                    failures.append((d, exc))
        finally:
            self._label, self._brief = label, False
        if first is None and not failures:
            return
        records = tuple(r for exc in ([first] if first else []) + [e for _, e in failures] for r in exc.divergences)
        names = ", ".join(d.label for d, _ in failures[:8]) + (", ..." if len(failures) > 8 else "")
        if first is not None:
            text = str(first)
            if failures:
                text += f"\n\n{len(failures)} of {len(derived)} derived cases diverged too: {names}"
        else:
            d, exc = failures[0]
            text = (f"{len(failures)} of {len(derived)} derived cases (other valid regions and data of this "
                    f"configuration) diverged: {names}; the first, {label}/{d.label}:\n{exc}")
        raise ConformanceFailure(text, records)

    def _invocation(self, op: str, mode: str, profile: str, tiles: dict, data: dict) -> Invocation:
        descriptors = {n: format_descriptor(t, self.db.isa) for n, t in tiles.items()}
        return Invocation(op, mode, profile, dict(tiles), _copy(data), descriptors)

    def _invoke(self, op: str, mode: str, profile: str, tiles: dict, data: dict) -> Result:
        reason = self.caps.unsupported(op, mode, profile, tiles)
        if reason:
            raise Unsupported(f"{self.backend_name}: {reason}")
        result = self.backend.run(self._invocation(op, mode, profile, tiles, data))
        if result.unsupported:
            raise Unsupported(f"{self.backend_name}: {result.unsupported}")
        return result

    def _fail(self, op: str, mode: str, profile: str, tiles: dict, data: dict,
              found: list[tuple[str, list[str]]], message: str = "", rule: str | None = None) -> None:
        """Record one divergence per category in ``found`` ((category, problems) pairs) and fail."""
        descriptors = {n: format_descriptor(t, self.db.isa) for n, t in tiles.items()}
        problems = [p for _, ps in found for p in ps]
        violations: tuple[str, ...] = ()
        if rule or any(cat in ("accepts-rejected", "rejects-accepted") for cat, _ in found):
            violations = tuple(sorted(validate(self.db, op, mode, profile, tiles).rule_ids))
        artifacts = LazyArtifacts(self.backend, partial(self._invocation, op, mode, profile, tiles, data))
        mode_spec = self.db.op(op).mode(mode)
        dtypes: dict[str, str] = {}  # type variables and attribute values of the case
        for o in mode_spec.operands:
            desc = tiles[o.name]
            if desc.dtype:
                dtypes.setdefault(o.dtype, desc.dtype)
            elif hasattr(desc, "value"):
                dtypes[o.name] = spell_value(desc.value)  # an enumerator, true, 1
        records = tuple(
            Divergence(category=cat, op=op, mode=mode, profile=profile, case=self._label or "(property)",
                       dtypes=dtypes, descriptors=descriptors, inputs=_copy(data), problems=tuple(ps),
                       message=message, rule=rule, violations=violations, artifacts=artifacts,
                       size=sum(t.rows * t.cols for t in tiles.values() if isinstance(t, TileDesc)))
            for cat, ps in found)
        if self._recording:
            self.divergences.extend(records)
        if self._brief:  # a derived case after the first failure: its text is not shown
            raise ConformanceFailure("; ".join(problems), records)
        text = render(self.db, op, mode, profile, descriptors, data, self.backend_name, problems)
        raise ConformanceFailure(text, records)

    def check_positive(self, op: str, mode: str, profile: str, tiles: dict, seed: int, pattern: str,
                       report: Report | None = None, data: dict | None = None, result: Result | None = None) -> None:
        """``report``: the validator's report on ``tiles`` if known; ``data``: the inputs if already made;
        ``result``: the backend's result on them if already asked."""
        spec = self.db.op(op)
        mode_spec = spec.mode(mode)
        if data is None:
            data = make_inputs(self.db, spec, mode_spec, tiles, seed, pattern)
        if result is None:
            result = self._invoke(op, mode, profile, tiles, data)
        elif result.unsupported:
            raise Unsupported(f"{self.backend_name}: {result.unsupported}")
        if result.error:
            self._fail(op, mode, profile, tiles, data,
                       [("harness-error", [f"the backend failed: {result.error}"])], result.error)
        if result.rejected:
            self._fail(op, mode, profile, tiles, data,
                       [("rejects-accepted", [f"the backend rejected a legal configuration: "
                                              f"{result.message or result.rules}"])], result.message)
        written: dict[str, np.ndarray] = {}
        expected = execute(self.db, op, mode, profile, tiles, _copy(data), written, report)
        wrong: list[str] = []
        outside: list[str] = list(result.stray)
        outputs = result.outputs or {}
        for name, want in expected.items():
            if name not in outputs:
                wrong.append(f"{name}: missing from the backend's outputs")
                continue
            desc = tiles[name]
            out_problems, in_problems = compare_detail(name, desc, want, outputs[name], spec.numerics.on(profile),
                                                       written.get(name))
            outside += out_problems
            wrong += in_problems
        found = [(cat, ps) for cat, ps in (("wrong-value", wrong), ("write-outside-valid", outside)) if ps]
        if found:
            self._fail(op, mode, profile, tiles, data, found)

    def check_reject(self, op: str, mode: str, profile: str, tiles: dict, seed: int, pattern: str,
                     rule: str, data: dict | None = None) -> None:
        spec = self.db.op(op)
        if data is None:
            data = make_inputs(self.db, spec, spec.mode(mode), tiles, seed, pattern)
        result = self._invoke(op, mode, profile, tiles, data)
        if result.error:
            self._fail(op, mode, profile, tiles, data,
                       [("harness-error", [f"the backend failed: {result.error}"])], result.error, rule)
        if not result.rejected:
            report = validate(self.db, op, mode, profile, tiles)
            why = "; ".join(v.one_line() for v in report.violations)
            self._fail(op, mode, profile, tiles, data,
                       [("accepts-rejected", [f"the backend accepted a configuration that breaks rule {rule}: {why}"])],
                       rule=rule)

    def check_cross_core(self, op: str, mode: str, profile: str, tiles: dict, reject: str | None) -> None:
        """A case of a cross-core FIFO instruction: the validator must accept a positive case (and the executor
        then refuse it with exec.cross-core) and reject a must-reject case by its rule.  No backend is run: one
        side of a FIFO alone would wait for a peer that never comes (the simulator's pop blocks)."""
        report = validate(self.db, op, mode, profile, tiles)
        if reject:
            if reject not in report.rule_ids:
                self._fail(op, mode, profile, tiles, {}, [("accepts-rejected", [
                    f"the validator does not reject this case by rule {reject}"])], rule=reject)
            return
        if not report.ok:
            self._fail(op, mode, profile, tiles, {}, [("rejects-accepted", [
                "the validator rejects a legal case: " + "; ".join(v.one_line() for v in report.violations)])])
        try:
            execute(self.db, op, mode, profile, tiles, {}, report=report)
        except PtospecError as exc:
            if exc.rule == "exec.cross-core":
                return
            raise
        self._fail(op, mode, profile, tiles, {}, [("harness-error", [
            "the executor ran a cross-core instruction instead of refusing it (exec.cross-core)"])])

    # -------------------------------------------------------------- property tests
    def check_property(self, op: str, mode: str, profile: str, bindings: list[dict] | None = None) -> None:
        """Hypothesis draws dtypes, a valid region, a layout variant, a value pattern and a seed; each draw
        is mapped onto the nearest legal configuration (``legal_configuration``), so no draw is wasted.
        ``bindings``: the feasible bindings (``property_bindings``) when the caller has them, else searched."""
        from hypothesis import given, note, reject
        from hypothesis import strategies as st

        spec = self.db.op(op)
        mode_spec = spec.mode(mode)
        reason = self.caps.profiles and profile not in self.caps.profiles
        if reason:
            raise Unsupported(f"{self.backend_name}: profile {profile} not supported")
        known = bindings is not None  # every binding given is feasible
        combos = [b for b in (bindings if known else dtype_combos(self.db, spec, mode_spec, profile))
                  if self.caps.dtypes is None
                  or {b[v] for v in mode_spec.type_vars} <= set(self.caps.dtypes) | self.caps.op_dtypes.get(op, set())]
        if not (combos if known else any(feasible(self.db, spec, mode_spec, profile, b) for b in combos)):
            raise Unsupported(f"{self.backend_name}: no supported dtype for {op} {mode} on {profile}")
        n_layouts = len(base_variants(self.db, mode_spec))
        patterns = [p for p in PATTERNS if p != "ties" or spec.numerics.ties == "first"]
        if profile in spec.numerics.exact_specials:
            patterns.append("ieee")
        run: Callable[..., None] = self.check_positive
        if mode_spec.cross_core:
            def run(op: str, mode: str, profile: str, tiles: dict, _seed: int, _pattern: str) -> None:
                self.check_cross_core(op, mode, profile, tiles, None)

        def binding_at(index: int) -> dict[str, str]:
            """The first feasible binding from ``index`` on (in table order, wrapping around)."""
            return next(b for k in range(len(combos)) for b in [combos[(index + k) % len(combos)]]
                        if known or feasible(self.db, spec, mode_spec, profile, b))

        @given(st.data())
        def prop(data: st.DataObject) -> None:
            binding = binding_at(data.draw(st.integers(0, len(combos) - 1), label="dtypes"))
            target = (data.draw(st.integers(*PROPERTY_ROWS), label="valid_rows"),
                      data.draw(st.integers(*PROPERTY_COLS), label="valid_cols"))
            partial = data.draw(st.booleans(), label="partial")
            layout = data.draw(st.integers(0, n_layouts - 1), label="layout variant")
            pattern = data.draw(st.sampled_from(patterns), label="pattern")
            seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
            tiles = legal_configuration(self.db, spec, mode_spec, profile, binding, target, partial, layout)
            assert tiles is not None  # the binding is feasible
            note(f"tiles: {[format_descriptor(t, self.db.isa) for t in tiles.values()]}")
            try:
                run(op, mode, profile, tiles, seed, pattern)
            except Unsupported:
                reject()  # outside the backend's manifest (the reference backend supports everything)

        # hypothesis calls the test many times while shrinking: record only what it finally raises
        self._label, self._recording = f"{mode}-{profile}-property", False
        try:
            prop()
        except BaseException as exc:
            failures = exc.exceptions if isinstance(exc, BaseExceptionGroup) else (exc,)
            for failure in failures:
                self.divergences.extend(getattr(failure, "divergences", ()))
            raise
        finally:
            self._recording = True

