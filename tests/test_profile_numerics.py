"""Per-profile numerics: the cpu profile computes max/min and their reductions as the simulator's C++ does."""

from __future__ import annotations

import numpy as np
import pytest

from ptospec.conformance.data import make_inputs
from ptospec.executor import execute

NAN, INF = np.nan, np.inf


def run(db, tiles, op, profile, descs, data):
    return execute(db, op, None, profile, tiles(**descs), data)


def test_cpu_max_is_std_max(db, tiles):
    descs = {n: "vec,1x8xf32" for n in ("src0", "src1", "dst")}
    a = np.array([[1, NAN, -0.0, 0.0, INF, NAN, 2, -INF]], np.float32)
    b = np.array([[NAN, 1, 0.0, -0.0, NAN, NAN, 3, NAN]], np.float32)
    got = run(db, tiles, "tmax", "cpu", descs, {"src0": a, "src1": b})["dst"]
    # std::max(a, b) = a < b ? b : a
    want = np.array([[1, NAN, -0.0, 0.0, INF, NAN, 3, -INF]], np.float32)
    assert np.array_equal(got, want, equal_nan=True)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()
    # hardware profiles keep NumPy's NaN propagation (their NaN behaviour is unspecified)
    npu = run(db, tiles, "tmax", "a5", descs, {"src0": a, "src1": b})["dst"]
    assert np.isnan(npu[0, 0]) and np.isnan(npu[0, 1])


def test_cpu_min_is_std_min(db, tiles):
    descs = {n: "vec,1x8xf32" for n in ("src0", "src1", "dst")}
    a = np.array([[1, NAN, -0.0, 0.0, 0, 0, 0, 0]], np.float32)
    b = np.array([[NAN, 1, 0.0, -0.0, 0, 0, 0, 0]], np.float32)
    got = run(db, tiles, "tmin", "cpu", descs, {"src0": a, "src1": b})["dst"]
    assert got[0, 0] == 1 and np.isnan(got[0, 1])  # min(1, NaN) = 1, min(NaN, 1) = NaN
    assert np.signbit(got[0, 2]) and not np.signbit(got[0, 3])  # the first of two equal zeros


@pytest.mark.parametrize("column, index, value", [
    ([NAN, 1, 5, 2], 0, NAN),        # a NaN in row 0 is never replaced
    ([1, NAN, 5, 2], 2, 5.0),        # a later NaN never compares greater
    ([-0.0, 0.0, -1, -2], 0, -0.0),  # equal zeros: the first stays
])
def test_cpu_column_arg_reduction_and_nan_rows(db, tiles, column, index, value):
    src = np.array(column, np.float32).reshape(4, 1)
    descs = dict(src="vec,4x8xf32,valid=4x1", dstVal="vec,1x8xf32,valid=1x1", dstIdx="vec,1x8xi32,valid=1x1",
                 tmp="vec,1x8xf32")
    data = {"src": np.pad(src, ((0, 0), (0, 7)))}
    out = execute(db, "tcolargmax", "value_index", "cpu", tiles(**descs), data)
    assert out["dstIdx"][0, 0] == index
    got = out["dstVal"][0, 0]
    assert (np.isnan(got) and np.isnan(value)) or (got == value and np.signbit(got) == np.signbit(value))


def test_cpu_row_reduction_starts_from_element_0(db, tiles):
    descs = dict(src="vec,2x8xf32,valid=2x4", dst="vec,2x8xf32,valid=2x1", tmp="vec,2x8xf32")
    src = np.zeros((2, 8), np.float32)
    src[0, :4] = [NAN, 3, 1, 2]
    src[1, :4] = [3, NAN, 1, 2]
    got = run(db, tiles, "trowmax", "cpu", descs, {"src": src})["dst"]
    assert np.isnan(got[0, 0]) and got[1, 0] == 3


def test_special_pattern_has_nan_infinities_and_signed_zeros(db, tiles):
    op = db.op("tmax")
    descs = tiles(**{n: "vec,16x16xf32" for n in ("src0", "src1", "dst")})
    data = make_inputs(db, op, op.mode(None), descs, seed=7, pattern="ieee")
    values = np.concatenate([data["src0"].ravel(), data["src1"].ravel()])
    assert np.isnan(values).any() and np.isinf(values).any()
    zeros = values[values == 0]
    assert np.signbit(zeros).any() and (~np.signbit(zeros)).any()


def test_exact_specials_compare_nan_and_sign_of_zero(db):
    numerics = db.op("tmax").numerics
    assert "cpu" in numerics.exact_specials
    assert numerics.on("cpu").signed_zero == "preserved" and numerics.on("a5") == numerics
