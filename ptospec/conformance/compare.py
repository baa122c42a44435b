"""Compare a backend's outputs with the reference, following the op's numerics."""

from __future__ import annotations

import numpy as np

from ..model import Numerics
from ..tile import GlobalDesc, TileDesc

MAX_REPORTED = 5


def _as_float(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":
        return a
    with np.errstate(invalid="ignore"):  # NaN codes of the narrow float types widen to NaN, as meant
        return a.astype(np.float64)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.dtype(f"u{a.dtype.itemsize}"))


def mismatches(expected: np.ndarray, actual: np.ndarray, dtype: str, numerics: Numerics) -> np.ndarray:
    """Mask of the elements of ``actual`` that do not match ``expected`` (same shape and dtype): integers
    exactly; floats within ``numerics.tolerance[dtype]`` when given, else exactly, NaN equal to NaN, and
    -0 equal to +0 unless signed zeros are significant."""
    e, a = _as_float(expected), _as_float(actual)
    if actual.dtype.kind in "iu":
        return e != a
    tol = numerics.tolerance.get(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        close = (np.isclose(a, e, rtol=tol.rtol, atol=tol.atol) | (a == e)) if tol is not None else a == e
    close |= np.isnan(a) & np.isnan(e)
    if numerics.signed_zero in ("preserved", "exact"):
        close &= ~((a == 0) & (e == 0) & (np.signbit(a) != np.signbit(e)))
    return ~close


def compare_output(name: str, desc: TileDesc | GlobalDesc, expected: np.ndarray, actual: object,
                   numerics: Numerics, written: np.ndarray | None = None) -> list[str]:
    """Problems with one output; empty when it conforms.

    Inside the valid region: within ``numerics.tolerance[dtype]`` when given, exact otherwise; NaN
    equals NaN; -0 equals +0 unless signed zeros are significant.  Outside it, and inside it where the
    reference's ``written`` mask says the semantics write nothing (the part of TINSERT's destination
    around its window): bit-identical to the initial contents (the sentinel)."""
    outside, inside = compare_detail(name, desc, expected, actual, numerics, written)
    return outside + inside


def compare_detail(name: str, desc: TileDesc | GlobalDesc, expected: np.ndarray, actual: object,
                   numerics: Numerics, written: np.ndarray | None = None) -> tuple[list[str], list[str]]:
    """``compare_output``'s problems split into (writes outside the valid region, wrong values).

    ``written`` (the reference's mask of written elements) widens what counts as inside: the elements an
    instruction defines outside the valid region (a load's pad fill), and for a global buffer the
    elements the view addresses."""
    arr = np.asarray(actual)
    if arr.shape != expected.shape:
        return [], [f"{name}: shape {arr.shape}, expected {expected.shape}"]
    if arr.dtype != expected.dtype:
        return [], [f"{name}: dtype {arr.dtype}, expected {expected.dtype}"]
    inside = np.zeros(expected.shape, dtype=bool)
    if isinstance(desc, GlobalDesc):
        region = "the addressed elements of its view"
    else:
        vr, vc = min(desc.valid_row or 0, desc.rows), min(desc.valid_col or 0, desc.cols)
        inside[:vr, :vc] = True
        region = f"the valid region {vr}x{vc}"
    if written is not None:
        inside |= written
    outside: list[str] = []
    outside_bad = (_bits(arr) != _bits(expected)) & ~inside
    for where in list(zip(*np.nonzero(outside_bad), strict=True))[:MAX_REPORTED]:
        at = ", ".join(str(int(k)) for k in where)
        outside.append(f"{name}[{at}] is outside {region} but changed: {arr[where]!r} (initial {expected[where]!r})")
    if int(outside_bad.sum()) > MAX_REPORTED:
        outside.append(f"{name}: {int(outside_bad.sum())} changed elements outside the valid region in all")
    problems: list[str] = []
    kept = inside & ~written if written is not None else np.zeros(expected.shape, dtype=bool)
    kept_bad = (_bits(arr) != _bits(expected)) & kept  # unwritten by the semantics (TINSERT's window): unchanged
    for where in list(zip(*np.nonzero(kept_bad), strict=True))[:MAX_REPORTED]:
        at = ", ".join(str(int(k)) for k in where)
        problems.append(f"{name}[{at}] is not written by the instruction but changed: {arr[where]!r} "
                        f"(initial {expected[where]!r})")
    bad = mismatches(expected, arr, desc.dtype, numerics) & inside & ~kept
    count = int(bad.sum())
    for where in list(zip(*np.nonzero(bad), strict=True))[:MAX_REPORTED]:
        at = ", ".join(str(int(k)) for k in where)
        problems.append(f"{name}[{at}]: expected {expected[where]!r}, got {arr[where]!r}")
    if count > MAX_REPORTED:
        problems.append(f"{name}: {count} mismatching elements in the valid region in all")
    return outside, problems
