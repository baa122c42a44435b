"""Run one conformance case against a backend and judge the result (used by the pytest plugin)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..asm.types import format_descriptor
from ..executor import execute
from ..model import Database
from ..tile import TileDesc
from ..validator import validate
from .backend import Backend, Invocation, Result
from .cases import PATTERNS, Case, configurations, dtype_combos, example_tiles, layout_variants
from .compare import compare_output
from .data import make_inputs
from .repro import render


class ConformanceFailure(AssertionError):
    """A backend disagreed with the spec; the message carries a repro."""


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

    # -------------------------------------------------------------- fixed cases
    def check(self, case: Case) -> None:
        tiles = case.parsed(self.db)
        if case.reject:
            self.check_reject(case.op, case.mode, case.profile, tiles, case.seed, case.pattern, case.reject)
        else:
            self.check_positive(case.op, case.mode, case.profile, tiles, case.seed, case.pattern)

    def _invoke(self, op: str, mode: str, profile: str, tiles: dict, data: dict) -> Result:
        reason = self.caps.unsupported(op, mode, profile, tiles)
        if reason:
            raise Unsupported(f"{self.backend_name}: {reason}")
        descriptors = {n: format_descriptor(t, self.db.isa) for n, t in tiles.items()}
        result = self.backend.run(Invocation(op, mode, profile, dict(tiles), _copy(data), descriptors))
        if result.unsupported:
            raise Unsupported(f"{self.backend_name}: {result.unsupported}")
        return result

    def _fail(self, op: str, mode: str, profile: str, tiles: dict, data: dict, problems: list[str]) -> None:
        descriptors = {n: format_descriptor(t, self.db.isa) for n, t in tiles.items()}
        raise ConformanceFailure(render(self.db, op, mode, profile, descriptors, data, self.backend_name, problems))

    def check_positive(self, op: str, mode: str, profile: str, tiles: dict, seed: int, pattern: str) -> None:
        spec = self.db.op(op)
        mode_spec = spec.mode(mode)
        data = make_inputs(self.db, spec, mode_spec, tiles, seed, pattern)
        result = self._invoke(op, mode, profile, tiles, data)
        if result.rejected:
            self._fail(op, mode, profile, tiles, data,
                       [f"the backend rejected a legal configuration: {result.message or result.rules}"])
        expected = execute(self.db, op, mode, profile, tiles, _copy(data))
        problems: list[str] = []
        outputs = result.outputs or {}
        for name, want in expected.items():
            if name not in outputs:
                problems.append(f"{name}: missing from the backend's outputs")
                continue
            desc = tiles[name]
            assert isinstance(desc, TileDesc)
            problems += compare_output(name, desc, want, outputs[name], spec.numerics)
        if problems:
            self._fail(op, mode, profile, tiles, data, problems)

    def check_reject(self, op: str, mode: str, profile: str, tiles: dict, seed: int, pattern: str,
                     rule: str) -> None:
        spec = self.db.op(op)
        data = make_inputs(self.db, spec, spec.mode(mode), tiles, seed, pattern)
        result = self._invoke(op, mode, profile, tiles, data)
        if not result.rejected:
            report = validate(self.db, op, mode, profile, tiles)
            why = "; ".join(v.one_line() for v in report.violations)
            self._fail(op, mode, profile, tiles, data,
                       [f"the backend accepted a configuration that breaks rule {rule}: {why}"])

    # -------------------------------------------------------------- property tests
    def check_property(self, op: str, mode: str, profile: str) -> None:
        from hypothesis import given, note, reject
        from hypothesis import strategies as st

        spec = self.db.op(op)
        mode_spec = spec.mode(mode)
        reason = self.caps.profiles and profile not in self.caps.profiles
        if reason:
            raise Unsupported(f"{self.backend_name}: profile {profile} not supported")
        combos = [b for b in dtype_combos(self.db, spec, mode_spec, profile)
                  if self.caps.dtypes is None or set(b.values()) <= set(self.caps.dtypes)]
        if not combos:
            raise Unsupported(f"{self.backend_name}: no supported dtype for {op} {mode} on {profile}")
        n_layouts = len(list(layout_variants(self.db, example_tiles(self.db, mode_spec))))
        patterns = [p for p in PATTERNS if p != "ties" or spec.numerics.ties == "first"]
        run: Callable[..., None] = self.check_positive

        @given(st.data())
        def prop(data: st.DataObject) -> None:
            binding = data.draw(st.sampled_from(combos), label="dtypes")
            target = (data.draw(st.integers(1, 24), label="valid_rows"),
                      data.draw(st.integers(1, 80), label="valid_cols"))
            partial = data.draw(st.booleans(), label="partial")
            layout = data.draw(st.integers(0, n_layouts - 1), label="layout variant")
            pattern = data.draw(st.sampled_from(patterns), label="pattern")
            seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
            tiles = configurations(self.db, spec, mode_spec, profile, binding, target, partial, layout)
            if tiles is None:
                reject()
            note(f"tiles: {[format_descriptor(t, self.db.isa) for t in tiles.values()]}")
            try:
                run(op, mode, profile, tiles, seed, pattern)
            except Unsupported:
                reject()

        prop()

