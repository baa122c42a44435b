"""Run one conformance case against a backend and judge the result (used by the pytest plugin)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..asm.types import format_descriptor
from ..executor import execute
from ..model import Database
from ..tile import TileDesc
from ..validator import validate
from .backend import Backend, Invocation, Result
from .cases import (
    PATTERNS,
    PROPERTY_COLS,
    PROPERTY_ROWS,
    Case,
    case_id,
    dtype_combos,
    example_tiles,
    feasible,
    layout_variants,
    legal_configuration,
    pad_readers,
)
from .compare import compare_detail
from .data import make_inputs
from .divergence import Divergence
from .repro import render


class ConformanceFailure(AssertionError):
    """A backend disagreed with the spec; the message carries a repro, ``divergences`` the records."""

    def __init__(self, message: str, divergences: tuple[Divergence, ...] = ()) -> None:
        super().__init__(message)
        self.divergences = divergences


class Unsupported(Exception):
    """The case is outside the backend's manifest (the plugin turns this into a skip)."""


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

    # -------------------------------------------------------------- batch preparation
    def prepare(self, cases: Sequence[Case], progress: Callable[[str, int, int], None] | None = None) -> None:
        """Hand every runnable case to the backend's ``prepare`` hook at once (if it has one)."""
        if type(self.backend).prepare is Backend.prepare:
            return
        invocations = []
        for case in cases:
            tiles = case.parsed(self.db)
            if self.caps.unsupported(case.op, case.mode, case.profile, tiles):
                continue
            spec = self.db.op(case.op)
            data = make_inputs(self.db, spec, spec.mode(case.mode), tiles, case.seed, case.pattern)
            invocations.append(self._invocation(case.op, case.mode, case.profile, tiles, data))
        self.backend.prepare(invocations, progress)

    # -------------------------------------------------------------- fixed cases
    def check(self, case: Case) -> None:
        tiles = case.parsed(self.db)
        self._label = case_id(case, self.db)
        if case.reject:
            self.check_reject(case.op, case.mode, case.profile, tiles, case.seed, case.pattern, case.reject)
        else:
            self.check_positive(case.op, case.mode, case.profile, tiles, case.seed, case.pattern)

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
        try:
            artifacts = self.backend.artifacts(self._invocation(op, mode, profile, tiles, data))
        except Exception as exc:  # a broken hook must not hide the divergence itself
            artifacts = {"error": f"artifacts hook failed: {exc}"}
        mode_spec = self.db.op(op).mode(mode)
        dtypes: dict[str, str] = {}  # type variables and attribute values of the case
        for o in mode_spec.operands:
            desc = tiles[o.name]
            if desc.dtype:
                dtypes.setdefault(o.dtype, desc.dtype)
            elif hasattr(desc, "value"):
                dtypes[o.name] = desc.value
        records = tuple(
            Divergence(category=cat, op=op, mode=mode, profile=profile, case=self._label or "(property)",
                       dtypes=dtypes, descriptors=descriptors, inputs=_copy(data), problems=tuple(ps),
                       message=message, rule=rule, violations=violations, artifacts=artifacts,
                       size=sum(t.rows * t.cols for t in tiles.values() if isinstance(t, TileDesc)))
            for cat, ps in found)
        if self._recording:
            self.divergences.extend(records)
        text = render(self.db, op, mode, profile, descriptors, data, self.backend_name, problems)
        raise ConformanceFailure(text, records)

    def check_positive(self, op: str, mode: str, profile: str, tiles: dict, seed: int, pattern: str) -> None:
        spec = self.db.op(op)
        mode_spec = spec.mode(mode)
        data = make_inputs(self.db, spec, mode_spec, tiles, seed, pattern)
        result = self._invoke(op, mode, profile, tiles, data)
        if result.error:
            self._fail(op, mode, profile, tiles, data,
                       [("harness-error", [f"the backend failed: {result.error}"])], result.error)
        if result.rejected:
            self._fail(op, mode, profile, tiles, data,
                       [("rejects-accepted", [f"the backend rejected a legal configuration: "
                                              f"{result.message or result.rules}"])], result.message)
        written: dict[str, np.ndarray] = {}
        expected = execute(self.db, op, mode, profile, tiles, _copy(data), written)
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
                     rule: str) -> None:
        spec = self.db.op(op)
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

    # -------------------------------------------------------------- property tests
    def check_property(self, op: str, mode: str, profile: str) -> None:
        """Hypothesis draws dtypes, a valid region, a layout variant, a value pattern and a seed; each draw
        is mapped onto the nearest legal configuration (``legal_configuration``), so no draw is wasted."""
        from hypothesis import given, note, reject
        from hypothesis import strategies as st

        spec = self.db.op(op)
        mode_spec = spec.mode(mode)
        reason = self.caps.profiles and profile not in self.caps.profiles
        if reason:
            raise Unsupported(f"{self.backend_name}: profile {profile} not supported")
        combos = [b for b in dtype_combos(self.db, spec, mode_spec, profile)
                  if self.caps.dtypes is None or {b[v] for v in mode_spec.type_vars} <= set(self.caps.dtypes)]
        if not any(feasible(self.db, spec, mode_spec, profile, b) for b in combos):
            raise Unsupported(f"{self.backend_name}: no supported dtype for {op} {mode} on {profile}")
        n_layouts = len(list(layout_variants(self.db, example_tiles(self.db, mode_spec), pad_readers(mode_spec))))
        patterns = [p for p in PATTERNS if p != "ties" or spec.numerics.ties == "first"]
        if profile in spec.numerics.exact_specials:
            patterns.append("special")
        run: Callable[..., None] = self.check_positive

        def binding_at(index: int) -> dict[str, str]:
            """The first feasible binding from ``index`` on (in table order, wrapping around)."""
            return next(b for k in range(len(combos)) for b in [combos[(index + k) % len(combos)]]
                        if feasible(self.db, spec, mode_spec, profile, b))

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

