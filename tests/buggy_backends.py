"""Deliberately wrong backends: the generated suite must catch each of them."""

from __future__ import annotations

import numpy as np

from ptospec.conformance.backend import Invocation, Result
from ptospec.tile import TileDesc
from ptospec.validator import validate

from .example_backend import ExampleBackend


class _Everything(ExampleBackend):
    def capabilities(self):
        from ptospec.conformance.backend import Capabilities

        return Capabilities(profiles=tuple(self.db.isa.profiles))


class ArgmaxOffByOne(_Everything):
    """Returns argmax row index + 1."""

    def run(self, case: Invocation) -> Result:
        result = super().run(case)
        if result.outputs and case.op == "tcolargmax":
            idx = result.outputs["dstIdx"]
            t = case.tiles["dstIdx"]
            idx[: t.valid_row, : t.valid_col] += 1
        return result


class WritesOutsideValid(_Everything):
    """Clears the last element of every output tile when it lies outside the valid region."""

    def run(self, case: Invocation) -> Result:
        result = super().run(case)
        for name, arr in (result.outputs or {}).items():
            t = case.tiles[name]
            if t.valid_row < t.rows or t.valid_col < t.cols:
                arr[-1, -1] = np.zeros((), arr.dtype)
        return result


class AcceptsIllegalDtype(_Everything):
    """Runs configurations whose only problems are dtype-table violations."""

    def run(self, case: Invocation) -> Result:
        report = validate(self.db, case.op, case.mode, case.profile, case.tiles)
        if report.violations and all(v.rule.startswith("dtype.") for v in report.violations):
            return Result.ok({n: np.array(case.inputs[n]) for n, t in case.tiles.items()
                              if isinstance(t, TileDesc) and n in case.inputs
                              and any(o.name == n and o.role == "out"
                                      for o in self.db.op(case.op).mode(case.mode).operands)})
        return super().run(case)


class FlushesSubnormals(_Everything):
    """Flushes subnormal float inputs to zero before running (a common hardware mode)."""

    def run(self, case: Invocation) -> Result:
        inputs = dict(case.inputs)
        for name, value in inputs.items():
            arr = np.asarray(value)
            if arr.dtype.kind == "f" and arr.ndim == 2:
                tiny = np.finfo(arr.dtype).tiny
                inputs[name] = np.where(np.abs(arr) < tiny, np.zeros((), arr.dtype), arr)
        return super().run(Invocation(case.op, case.mode, case.profile, case.tiles, inputs, case.descriptors))
