"""Compare a backend's outputs with the reference, following the op's numerics."""

from __future__ import annotations

import numpy as np

from ..model import Numerics
from ..tile import TileDesc

MAX_REPORTED = 5


def _as_float(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) if a.dtype.kind not in "iu" else a


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.dtype(f"u{a.dtype.itemsize}"))


def compare_output(name: str, desc: TileDesc, expected: np.ndarray, actual: object, numerics: Numerics) -> list[str]:
    """Problems with one output; empty when it conforms.

    Inside the valid region: within ``numerics.tolerance[dtype]`` when given, exact otherwise; NaN
    equals NaN; -0 equals +0 unless signed zeros are significant.  Outside it: bit-identical to the
    initial contents (the sentinel)."""
    outside, inside = compare_detail(name, desc, expected, actual, numerics)
    return outside + inside


def compare_detail(name: str, desc: TileDesc, expected: np.ndarray, actual: object, numerics: Numerics
                   ) -> tuple[list[str], list[str]]:
    """``compare_output``'s problems split into (writes outside the valid region, wrong values)."""
    arr = np.asarray(actual)
    if arr.shape != expected.shape:
        return [], [f"{name}: shape {arr.shape}, expected {expected.shape}"]
    if arr.dtype != expected.dtype:
        return [], [f"{name}: dtype {arr.dtype}, expected {expected.dtype}"]
    vr, vc = min(desc.valid_row or 0, desc.rows), min(desc.valid_col or 0, desc.cols)
    inside = np.zeros(expected.shape, dtype=bool)
    inside[:vr, :vc] = True
    outside: list[str] = []
    outside_bad = (_bits(arr) != _bits(expected)) & ~inside
    for i, j in list(zip(*np.nonzero(outside_bad), strict=True))[:MAX_REPORTED]:
        outside.append(f"{name}[{i}, {j}] is outside the valid region {vr}x{vc} but changed: "
                       f"{arr[i, j]!r} (initial {expected[i, j]!r})")
    if int(outside_bad.sum()) > MAX_REPORTED:
        outside.append(f"{name}: {int(outside_bad.sum())} changed elements outside the valid region in all")
    problems: list[str] = []
    e, a = _as_float(expected), _as_float(arr)
    if arr.dtype.kind in "iu":
        bad = e != a
    else:
        tol = numerics.tolerance.get(desc.dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            close = (np.isclose(a, e, rtol=tol.rtol, atol=tol.atol) | (a == e)) if tol is not None else a == e
        close |= np.isnan(a) & np.isnan(e)
        if numerics.signed_zero in ("preserved", "exact"):
            close &= ~((a == 0) & (e == 0) & (np.signbit(a) != np.signbit(e)))
        bad = ~close
    bad &= inside
    count = int(bad.sum())
    for i, j in list(zip(*np.nonzero(bad), strict=True))[:MAX_REPORTED]:
        problems.append(f"{name}[{i}, {j}]: expected {expected[i, j]!r}, got {arr[i, j]!r}")
    if count > MAX_REPORTED:
        problems.append(f"{name}: {count} mismatching elements in the valid region in all")
    return outside, problems
