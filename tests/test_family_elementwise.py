"""The elementwise tile-tile family: executor results against NumPy / Python written here, and the validator
against legal and illegal invocations taken from the upstream pages and headers.

Every executor test uses tiles whose valid region is smaller than the tile, fills the destination with a
sentinel first and checks that nothing outside the valid region changes.  Reference values are computed
independently of the engine: Python integers for integer arithmetic, ``math`` in float64 for floats.
"""

from __future__ import annotations

import math
import zlib

import ml_dtypes
import numpy as np
import pytest

from ptospec.asm.types import parse_descriptor
from ptospec.conformance.data import make_inputs
from ptospec.errors import InvocationError
from ptospec.executor import execute
from ptospec.validator import validate

NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "i8": np.int8, "u8": np.uint8,
      "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64}
INTS = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]
FLOATS = ["f16", "bf16", "f32"]
ROWS, VR, VC = 8, 5, 19  # tiles are ROWS x cols with a 5 x 19 valid region
SENTINEL = 77


def cols_for(dtype: str) -> int:
    return max(32, 64 // np.dtype(NP[dtype]).itemsize)  # a multiple of 32 bytes per row, wider than VC


def desc(dtype: str, rows: int | None = None, cols: int | None = None, vr: int = VR, vc: int = VC,
         extra: str = "", loc: str = "vec") -> str:
    rows = ROWS if rows is None else rows
    cols = cols_for(dtype) if cols is None else cols
    return f"{loc},{rows}x{cols}x{dtype},valid={vr}x{vc}{extra}"


def bits(dtype: str) -> int:
    return np.dtype(NP[dtype]).itemsize * 8


def wrap(value: int, dtype: str) -> int:
    """An exact integer reduced to the element type (two's complement)."""
    b = bits(dtype)
    value &= (1 << b) - 1
    if dtype.startswith("i") and value >= 1 << (b - 1):
        value -= 1 << b
    return value


def edge_ints(dtype: str) -> list[int]:
    info = np.iinfo(NP[dtype])
    vals = [int(info.min), int(info.max), 0, 1, int(info.min) + 1, int(info.max) - 1]
    return vals + ([-1, -2, -7] if info.min < 0 else [2, 7])


def make(rng, dtype: str, edges=(), low=-20, high=20, exclude=()) -> np.ndarray:
    """A full tile of random values with ``edges`` placed first in the valid region; the rest of the
    tile (outside the valid region) is random too, so reading it would change the result."""
    shape = (ROWS, cols_for(dtype))
    t = NP[dtype]
    if dtype in INTS:
        info = np.iinfo(t)
        lo, hi = max(low, int(info.min)), min(high, int(info.max))
        arr = rng.integers(lo, hi + 1, size=shape, dtype=np.int64)
        for bad in exclude:
            arr[arr == bad] = 3
        arr = arr.astype(t)
    else:
        arr = (rng.integers(low * 4, high * 4 + 1, size=shape) / 4.0)
        for bad in exclude:
            arr[arr == bad] = 0.75
        arr = arr.astype(np.float32).astype(t)
    flat = arr[:VR, :VC].reshape(-1)
    for k, v in enumerate(edges):
        flat[k] = t(v) if dtype in INTS else np.float32(v).astype(t)
    arr[:VR, :VC] = flat.reshape(VR, VC)
    return arr


def sentinel(dtype: str) -> np.ndarray:
    return np.full((ROWS, cols_for(dtype)), SENTINEL, dtype=NP[dtype])


def run(db, tiles, op: str, profile: str, dtype: str, inputs: dict, mode=None, extra_tiles=None) -> np.ndarray:
    descs = {name: desc(dtype) for name in [*inputs, "dst"]}
    descs.update(extra_tiles or {})
    out = execute(db, op, mode, profile, tiles(**descs), {**inputs, "dst": sentinel(dtype)})["dst"]
    outside = np.ones(out.shape, bool)
    outside[:VR, :VC] = False
    assert (out[outside] == SENTINEL).all(), f"{op} wrote outside the valid region"
    return out[:VR, :VC]


def per_element(fn, *arrays, dtype: str) -> np.ndarray:
    """Apply a Python function to the valid-region elements (as Python numbers) and convert back."""
    window = [a[:VR, :VC] for a in arrays]
    if dtype in INTS:
        vals = [[fn(*(int(w[i, j]) for w in window)) for j in range(VC)] for i in range(VR)]
        return np.array([[wrap(v, dtype) for v in row] for row in vals], dtype=object).astype(NP[dtype])
    vals = [[fn(*(float(w[i, j]) for w in window)) for j in range(VC)] for i in range(VR)]
    with np.errstate(over="ignore"):
        return np.array(vals, dtype=np.float64).astype(NP[dtype])


def same(actual: np.ndarray, expected: np.ndarray) -> None:
    """Bit-for-bit equal up to NaN payloads and the sign of zero."""
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    ok = (a == e) | (np.isnan(a) & np.isnan(e))
    assert ok.all(), f"mismatch at {np.argwhere(~ok)[:5].tolist()}: got {a[~ok][:5]}, expected {e[~ok][:5]}"


def close(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float = 0.0) -> None:
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    with np.errstate(invalid="ignore"):
        ok = (a == e) | (np.isnan(a) & np.isnan(e)) | (np.abs(a - e) <= atol + rtol * np.abs(e))
    assert ok.all(), f"mismatch at {np.argwhere(~ok)[:5].tolist()}: got {a[~ok][:5]}, expected {e[~ok][:5]}"


FLOAT_EDGES = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, 65504.0, -65504.0]


def rng_for(*parts) -> np.random.Generator:
    return np.random.default_rng([zlib.crc32(str(p).encode()) for p in parts])


# ------------------------------------------------------------------ binary arithmetic


def c_trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


ARITH = {
    "tadd": (lambda a, b: a + b, "a5", ["f16", "f32", "i8", "i16", "i32"]),
    "tsub": (lambda a, b: a - b, "a5", ["f16", "f32", "i8", "u8", "i16", "u16", "i32", "u32"]),
    "tmul": (lambda a, b: a * b, "a5", ["f16", "bf16", "f32", "i16", "u16", "i32", "u32"]),
}


@pytest.mark.parametrize("op,dtype", [(op, d) for op, (_, _, ds) in ARITH.items() for d in ds])
def test_add_sub_mul(db, tiles, op, dtype):
    fn, profile, _ = ARITH[op]
    rng = rng_for(op, dtype)
    if dtype in INTS:
        a = make(rng, dtype, edges=edge_ints(dtype), low=-1000, high=1000)
        b = make(rng, dtype, edges=list(reversed(edge_ints(dtype))), low=-1000, high=1000)
        expected = per_element(fn, a, b, dtype=dtype)  # exact, then wrapped to the element type
    else:
        a = make(rng, dtype, edges=FLOAT_EDGES)
        b = make(rng, dtype, edges=[1.0, -0.0, -math.inf, -math.inf, 2.0, math.nan, 3.0, 0.0, 65504.0, 1.0])
        # one rounding of the exact float64 result to the element type (exact for these operands)
        expected = per_element(fn, a, b, dtype=dtype)
    same(run(db, tiles, op, profile, dtype, {"src0": a, "src1": b}), expected)


def test_add_integer_overflow_wraps(db, tiles):
    a = np.full((ROWS, 32), 2**31 - 1, np.int32)
    b = np.full((ROWS, 32), 1, np.int32)
    out = run(db, tiles, "tadd", "cpu", "i32", {"src0": a, "src1": b})
    assert (out == -(2**31)).all()


@pytest.mark.parametrize("dtype", ["f16", "f32", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"])
def test_tdiv(db, tiles, dtype):
    rng = rng_for("tdiv", dtype)
    if dtype in INTS:
        info = np.iinfo(NP[dtype])
        # the most negative dividend is outside src0's domain (it overflows for a divisor of -1)
        a = make(rng, dtype, edges=[int(info.max), 7, -7 if info.min else 7, 0, 1, -1 if info.min else 1],
                 low=-500, high=500, exclude=(int(info.min),) if info.min else ())
        b = make(rng, dtype, edges=[3, 2, 2, 5, -1 if info.min else 1, 7], low=-9, high=9, exclude=(0,))
        expected = per_element(c_trunc_div, a, b, dtype=dtype)
        same(run(db, tiles, "tdiv", "cpu", dtype, {"src0": a, "src1": b}), expected)
    else:
        a = make(rng, dtype, edges=[1.0, -1.0, 0.0, math.inf, math.nan, 7.0])
        b = make(rng, dtype, edges=[0.0, 0.0, 0.0, 2.0, 1.0, -2.0], exclude=(0.0,))
        with np.errstate(all="ignore"):
            expected = per_element(lambda x, y: x / y if y else (math.nan if x == 0 or x != x else
                                                                  math.copysign(math.inf, x) * math.copysign(1, y)),
                                   a, b, dtype=dtype)
        out = run(db, tiles, "tdiv", "a5" if dtype != "f32" else "a2a3", dtype, {"src0": a, "src1": b})
        assert out[0, 0] == np.inf and out[0, 1] == -np.inf and np.isnan(out[0, 2])
        same(out, expected)


@pytest.mark.parametrize("dividend,divisor", [
    (1, -(2**15)), (-(2**15), 2), (-(2**15) + 1, -(2**15)), (-(2**15), 3), (-(2**15), -(2**15)),
])
def test_tdiv_most_negative_integer(db, tiles, dividend, divisor):
    a = np.full((ROWS, 32), dividend, np.int16)
    b = np.full((ROWS, 32), divisor, np.int16)
    out = run(db, tiles, "tdiv", "cpu", "i16", {"src0": a, "src1": b})
    assert (out == c_trunc_div(dividend, divisor)).all()  # C truncating division, on Python ints


def c_fmod(a, b):
    if isinstance(a, int):
        return a - c_trunc_div(a, b) * b
    return math.fmod(a, b)


def floor_rem(a, b):
    if isinstance(a, int):
        return a % b  # Python's % takes the divisor's sign
    if math.isinf(b) and not math.isinf(a) and a == a:
        return a if a == 0 or (a < 0) == (b < 0) else b
    r = math.fmod(a, b)
    if r != 0 and (r < 0) != (b < 0):
        r += b
    return r


@pytest.mark.parametrize("op,profile,dtype", [
    ("tfmod", "a2a3", "f32"), ("tfmod", "a5", "f16"), ("tfmod", "a5", "i16"), ("tfmod", "a5", "u32"),
    ("tfmod", "cpu", "i64"), ("tfmod", "cpu", "i8"),
    ("trem", "a2a3", "f32"), ("trem", "a2a3", "i32"), ("trem", "a5", "f16"), ("trem", "a5", "u16"),
    ("trem", "cpu", "i8"), ("trem", "cpu", "bf16"),
])
def test_remainders(db, tiles, op, profile, dtype):
    rng = rng_for(op, dtype)
    signed = dtype not in ("u16", "u32")
    if dtype in INTS:
        a = make(rng, dtype, edges=[7, -7, 7, -7, 0, 6] if signed else [7, 0, 6], low=-100 if signed else 0, high=100)
        b = make(rng, dtype, edges=[3, 3, -3, -3, 5, 3] if signed else [3, 5, 3], low=-9 if signed else 1, high=9,
                 exclude=(0,))
    else:
        a = make(rng, dtype, edges=[5.5, -5.5, 5.5, -5.5, -0.0, 0.25, 3.0])
        b = make(rng, dtype, edges=[2.0, 2.0, -2.0, -2.0, 3.0, 0.25, 1.5], exclude=(0.0,))
    extra = {"tmp": desc(dtype, rows=1, cols=64, vr=1, vc=64)} if op == "trem" else None
    ref = c_fmod if op == "tfmod" else floor_rem
    out = run(db, tiles, op, profile, dtype, {"src0": a, "src1": b}, extra_tiles=extra)
    same(out, per_element(ref, a, b, dtype=dtype))
    if dtype not in INTS:
        first = out[0, :4].astype(np.float64).tolist()
        assert first == ([1.5, -1.5, 1.5, -1.5] if op == "tfmod" else [1.5, 0.5, -0.5, -1.5])


@pytest.mark.parametrize("dtype", ["f16", "f32", "i8", "u8", "i16", "i32", "u32"])
def test_tmin(db, tiles, dtype):
    rng = rng_for("tmin", dtype)
    edges = edge_ints(dtype) if dtype in INTS else [math.inf, -math.inf, 65504.0, -1.0]
    a, b = make(rng, dtype, edges=edges), make(rng, dtype, edges=list(reversed(edges)))
    same(run(db, tiles, "tmin", "a5", dtype, {"src0": a, "src1": b}),
         per_element(lambda x, y: y if y < x else x, a, b, dtype=dtype))


@pytest.mark.parametrize("dtype", ["f16", "f32", "i32", "u8"])
def test_tprelu(db, tiles, dtype):
    rng = rng_for("tprelu", dtype)
    if dtype in INTS:
        a = make(rng, dtype, edges=[5, 0] + ([-3, -4] if dtype == "i32" else []))
        b = make(rng, dtype, edges=[2, 9, 3, -2][: 4 if dtype == "i32" else 2])
        profile = "cpu"
    else:
        a = make(rng, dtype, edges=[2.0, -2.0, 0.0, -math.inf, math.nan])
        b = make(rng, dtype, edges=[0.5, 0.25, 3.0, 2.0, 1.0])
        profile = "a5"
    tmp = {"tmp": desc("u8", vr=VR, vc=VC)}
    out = run(db, tiles, "tprelu", profile, dtype, {"src0": a, "src1": b}, extra_tiles=tmp)
    same(out, per_element(lambda x, s: x if x > 0 else x * s, a, b, dtype=dtype))
    if dtype in ("f16", "f32"):
        assert out[0, :4].astype(float).tolist() == [2.0, -0.5, 0.0, -math.inf] and np.isnan(out[0, 4])


# ------------------------------------------------------------------ three sources (simulator only)


@pytest.mark.parametrize("op,dtype", [(op, d) for op in ("taddc", "tsubc") for d in ("f16", "f32", "i8", "u16", "i64")])
def test_three_sources(db, tiles, op, dtype):
    rng = rng_for(op, dtype)
    edges = edge_ints(dtype) if dtype in INTS else [65504.0, 1.0, math.inf, math.nan, 0.5]
    a, b, c = make(rng, dtype, edges=edges), make(rng, dtype, edges=edges[::-1]), make(rng, dtype, edges=edges)
    out = run(db, tiles, op, "cpu", dtype, {"src0": a, "src1": b, "src2": c})
    if dtype in INTS:
        fn = (lambda x, y, z: x + y + z) if op == "taddc" else (lambda x, y, z: x - y + z)
        same(out, per_element(fn, a, b, c, dtype=dtype))
    else:
        t = NP[dtype]
        first = per_element((lambda x, y: x + y) if op == "taddc" else (lambda x, y: x - y), a, b, dtype=dtype)
        full_first = np.zeros_like(a)
        full_first[:VR, :VC] = first
        same(out, per_element(lambda x, z: x + z, full_first, c, dtype=dtype))  # rounded after each step
        assert first.dtype == t


# ------------------------------------------------------------------ bitwise and shifts


BITWISE = {"tand": lambda a, b: a & b, "tor": lambda a, b: a | b, "txor": lambda a, b: a ^ b}


@pytest.mark.parametrize("op,profile,dtype", [(op, p, d) for op in BITWISE for p, d in
                                              (("a2a3", "i16"), ("a2a3", "u8"), ("a5", "u32"), ("cpu", "i64"),
                                               ("cpu", "u64"))])
def test_bitwise(db, tiles, op, profile, dtype):
    if op == "tand" and profile == "a2a3" and dtype == "u8":
        profile = "a5"
    if op == "txor" and profile == "a2a3":
        dtype = "u16" if dtype == "u8" else dtype
    rng = rng_for(op, dtype)
    a = make(rng, dtype, edges=edge_ints(dtype), low=-(2**15), high=2**15)
    b = make(rng, dtype, edges=list(reversed(edge_ints(dtype))), low=-(2**15), high=2**15)
    extra = {"tmp": desc(dtype)} if op == "txor" else None
    out = run(db, tiles, op, profile, dtype, {"src0": a, "src1": b}, extra_tiles=extra)
    same(out, per_element(BITWISE[op], a, b, dtype=dtype))


@pytest.mark.parametrize("op,profile,dtype", [
    ("tshl", "a2a3", "i8"), ("tshl", "a2a3", "u16"), ("tshl", "a5", "i32"), ("tshl", "cpu", "u64"),
    ("tshr", "a2a3", "i8"), ("tshr", "a2a3", "u8"), ("tshr", "a5", "i32"), ("tshr", "a5", "u32"),
    ("tshr", "cpu", "i64"),
])
def test_shifts(db, tiles, op, profile, dtype):
    rng = rng_for(op, dtype)
    b_ = bits(dtype)
    a = make(rng, dtype, edges=edge_ints(dtype), low=-(2**15), high=2**15)
    b = make(rng, dtype, edges=[b_ - 1, b_ - 1, 1, b_ - 1, 3, b_ - 2, 0, 1, b_ - 1], low=0, high=b_ - 1)
    fn = (lambda x, n: x << n) if op == "tshl" else (lambda x, n: x >> n)  # Python: arithmetic for negatives
    out = run(db, tiles, op, profile, dtype, {"src0": a, "src1": b})
    same(out, per_element(fn, a, b, dtype=dtype))
    signed = dtype.startswith("i")
    if op == "tshl":  # min << (bits - 1) loses every bit; 1 << (bits - 1) is the sign bit
        assert int(out[0, 0]) == 0 and int(out[0, 3]) == (int(np.iinfo(NP[dtype]).min) if signed else 1 << (b_ - 1))
    else:  # arithmetic shift for signed types, logical for unsigned ones
        assert int(out[0, 0]) == (-1 if signed else 0) and int(out[0, 1]) == (0 if signed else 1)


# ------------------------------------------------------------------ unary


@pytest.mark.parametrize("profile,dtype", [("a5", "f16"), ("a2a3", "f32"), ("a5", "i8"), ("a5", "i32"),
                                           ("cpu", "i16"), ("cpu", "bf16")])
def test_tabs(db, tiles, profile, dtype):
    rng = rng_for("tabs", dtype)
    edges = edge_ints(dtype) if dtype in INTS else [-0.0, -math.inf, math.nan, -65504.0, -1.5]
    a = make(rng, dtype, edges=edges)
    out = run(db, tiles, "tabs", profile, dtype, {"src": a})
    same(out, per_element(abs, a, dtype=dtype))
    if dtype in INTS:
        assert int(out[0, 0]) == int(np.iinfo(NP[dtype]).min)  # |min| wraps to min


@pytest.mark.parametrize("profile,dtype", [("a5", "f16"), ("a2a3", "f32"), ("a5", "u16"), ("a5", "i32"),
                                           ("cpu", "u8"), ("cpu", "i64")])
def test_tneg(db, tiles, profile, dtype):
    rng = rng_for("tneg", dtype)
    edges = edge_ints(dtype) if dtype in INTS else [0.0, -0.0, math.inf, math.nan, 65504.0]
    a = make(rng, dtype, edges=edges)
    out = run(db, tiles, "tneg", profile, dtype, {"src": a})
    same(out, per_element(lambda x: -x, a, dtype=dtype))
    if dtype in FLOATS:
        assert np.signbit(out[0, 0]) and not np.signbit(out[0, 1])  # the spec preserves the sign of zero


@pytest.mark.parametrize("profile,dtype", [("a2a3", "i16"), ("a2a3", "u16"), ("a5", "i8"), ("a5", "u32"),
                                           ("cpu", "i64")])
def test_tnot(db, tiles, profile, dtype):
    rng = rng_for("tnot", dtype)
    a = make(rng, dtype, edges=edge_ints(dtype), low=-300, high=300)
    same(run(db, tiles, "tnot", profile, dtype, {"src": a}), per_element(lambda x: ~x, a, dtype=dtype))


@pytest.mark.parametrize("profile,dtype", [("a2a3", "f16"), ("a5", "f32"), ("a5", "i32"), ("cpu", "i8"),
                                           ("cpu", "u16")])
def test_trelu(db, tiles, profile, dtype):
    rng = rng_for("trelu", dtype)
    edges = edge_ints(dtype) if dtype in INTS else [-math.inf, math.inf, -0.5, 2.5]
    a = make(rng, dtype, edges=edges)
    same(run(db, tiles, "trelu", profile, dtype, {"src": a}), per_element(lambda x: 0 if x < 0 else x, a, dtype=dtype))


TRANSCENDENTAL = {
    # op: (reference, values the spec leaves undefined are avoided, tolerance per dtype (rtol, atol))
    "texp": (math.exp, {}, {"f16": (2e-3, 6.2e-5), "f32": (2e-6, 0.0), "bf16": (1.6e-2, 0.0)}),
    "tlog": (math.log, {"low": 1}, {"f16": (2e-3, 1e-4), "f32": (2e-6, 1e-7), "bf16": (1.6e-2, 1e-3)}),
    "tsqrt": (math.sqrt, {"low": 0}, {"f16": (1e-3, 6.2e-5), "f32": (2.4e-7, 0.0), "bf16": (8e-3, 0.0)}),
    "trsqrt": (lambda x: 1 / math.sqrt(x), {"low": 1}, {"f16": (2e-3, 6.2e-5), "f32": (2e-6, 0.0)}),
    "trecip": (lambda x: 1 / x, {"exclude": (0.0,)}, {"f16": (1e-3, 6.2e-5), "f32": (2.4e-7, 0.0),
                                                      "bf16": (8e-3, 0.0)}),
}
SPECIAL = {
    "texp": ([-math.inf, math.inf, math.nan, 0.0, 100.0], [0.0, math.inf, math.nan, 1.0, math.inf]),
    "tlog": ([math.inf, math.nan, 1.0], [math.inf, math.nan, 0.0]),
    "tsqrt": ([math.inf, math.nan, 0.0, 4.0], [math.inf, math.nan, 0.0, 2.0]),
    "trsqrt": ([math.inf, math.nan, 4.0], [0.0, math.nan, 0.5]),
    "trecip": ([math.inf, -math.inf, math.nan, -4.0], [0.0, -0.0, math.nan, -0.25]),
}


@pytest.mark.parametrize("op,profile,dtype", [
    (op, p, d) for op in TRANSCENDENTAL for p, d in (("a2a3", "f16"), ("a5", "f32"), ("cpu", "bf16"))
    if not (op == "trsqrt" and d == "bf16")])
def test_transcendental(db, tiles, op, profile, dtype):
    fn, limits, tol = TRANSCENDENTAL[op]
    specials, results = SPECIAL[op]
    rng = rng_for(op, dtype)
    a = make(rng, dtype, edges=specials, low=limits.get("low", -10), high=10, exclude=limits.get("exclude", ()))
    if op in ("tlog", "tsqrt", "trsqrt"):
        with np.errstate(invalid="ignore"):
            a[:VR, :VC] = np.where(a[:VR, :VC] < (0 if op == "tsqrt" else 0.25), NP[dtype](0.75), a[:VR, :VC])
        a[0, : len(specials)] = np.array(specials, np.float32).astype(NP[dtype])
    with np.errstate(all="ignore"):
        expected = per_element(lambda x: x if x != x else (fn(x) if not (op == "texp" and x > 700) else math.inf),
                               a, dtype=dtype)
    expected[0, : len(results)] = np.array(results, np.float32).astype(NP[dtype])
    out = run(db, tiles, op, profile, dtype, {"src": a})
    close(out, expected, *tol[dtype])


def test_trsqrt_tmp_mode(db, tiles):
    rng = rng_for("trsqrt-tmp")
    a = make(rng, "f32", low=1, high=50)
    out = run(db, tiles, "trsqrt", "a2a3", "f32", {"src": a}, mode="tmp", extra_tiles={"tmp": "vec,1x8xf32"})
    close(out, per_element(lambda x: 1 / math.sqrt(x), a, dtype="f32"), 2e-6)


def test_trecip_integers_truncate(db, tiles):
    a = make(rng_for("trecip-int"), "i32", edges=[1, -1, 2, -2, 7], low=-9, high=9, exclude=(0,))
    out = run(db, tiles, "trecip", "cpu", "i32", {"src": a})
    assert out[0, :5].tolist() == [1, -1, 0, 0, 0]
    same(out, per_element(lambda x: c_trunc_div(1, x), a, dtype="i32"))


# ------------------------------------------------------------------ power


def int_pow(base: int, exp: int) -> int:
    return base**exp  # exact; the caller wraps to the element type


@pytest.mark.parametrize("mode,profile,dtype", [
    ("default", "a5", "f32"), ("default", "a2a3", "f32"), ("high_precision", "a5", "f16"),
    ("default", "a5", "i8"), ("default", "a2a3", "u16"), ("default", "cpu", "i64"), ("high_precision", "cpu", "bf16"),
])
def test_tpow(db, tiles, mode, profile, dtype):
    rng = rng_for("tpow", dtype, mode)
    tmp = {"tmp": desc(dtype)}
    if dtype in INTS:
        base = make(rng, dtype, edges=[0, 2, 3, 7, 1], low=-5 if dtype != "u16" else 0, high=5)
        exp = make(rng, dtype, edges=[0, 10, 40, 3, 100], low=0, high=12)
        out = run(db, tiles, "tpow", profile, dtype, {"base": base, "exp": exp}, mode=mode, extra_tiles=tmp)
        same(out, per_element(int_pow, base, exp, dtype=dtype))
        assert int(out[0, 0]) == 1  # 0 ** 0
        return
    base = make(rng, dtype, edges=[0.0, -2.0, -8.0, 2.0, 1.0, math.nan], low=-3, high=3)
    exp = make(rng, dtype, edges=[0.0, 3.0, 1 / 3, -1.0, math.nan, 0.0], low=-3, high=3)
    with np.errstate(all="ignore"):
        expected = per_element(lambda x, y: float(np.power(np.float64(x), np.float64(y))), base, exp, dtype=dtype)
    out = run(db, tiles, "tpow", profile, dtype, {"base": base, "exp": exp}, mode=mode, extra_tiles=tmp)
    tol = {"f32": 1e-4, "f16": 4e-3, "bf16": 3e-2}[dtype]
    close(out, expected, tol)
    head = out[0, :6].astype(np.float64)
    assert head[0] == 1 and head[1] == -8 and np.isnan(head[2]) and head[3] == 0.5 and head[4] == 1 and head[5] == 1


# ------------------------------------------------------------------ domains and refusals


def test_domains_exclude_undefined_inputs(db):
    cases = {
        "tshl": ("default", "src1", "i16", lambda v: (v >= 0) & (v < 16)),
        "tdiv": ("default", "src1", "i32", lambda v: v != 0),
        "tlog": ("default", "src", "f32", lambda v: ~(v <= 0)),
        "trem": ("default", "src0", "i32", lambda v: (v >= -(2**24)) & (v <= 2**24)),
        "tpow": ("default", "exp", "i8", lambda v: v >= 0),
    }
    for op, (mode_name, operand, dtype, ok) in cases.items():
        mode = db.op(op).mode(mode_name)
        tiles = {o.name: parse_descriptor(desc(dtype), db.isa) for o in mode.operands}
        for seed in range(4):
            data = make_inputs(db, db.op(op), mode, tiles, seed, "edge")
            vals = data[operand][:VR, :VC]
            assert ok(vals).all(), (op, vals)


def test_executor_refuses_illegal(db, tiles):
    a = np.zeros((ROWS, 32), np.int32)
    with pytest.raises(InvocationError, match=r"dtype\.t"):
        execute(db, "tdiv", None, "a2a3", tiles(src0=desc("i32"), src1=desc("i32"), dst=desc("i32")),
                {"src0": a, "src1": a})


# ------------------------------------------------------------------ validator


def legal(dtype, **kw):
    return desc(dtype, **kw)


V = [
    # op, mode, profile, operands, expected rule (None = legal)
    ("tabs", None, "a2a3", {"src": legal("f32"), "dst": legal("f32")}, None),
    ("tabs", None, "a2a3", {"src": legal("i32"), "dst": legal("i32")}, "dtype.t"),  # A3: float or half
    ("tabs", None, "a5", {"src": legal("i8"), "dst": legal("i8")}, None),
    ("tabs", None, "cpu", {"src": legal("u8"), "dst": legal("u8")}, "dtype.t"),
    ("tabs", None, "cpu", {"src": legal("f32", rows=16), "dst": legal("f32")}, "type.same-tile"),
    ("tabs", None, "a5", {"src": legal("f32", loc="mat"), "dst": legal("f32")}, "loc.vec"),
    ("tadd", None, "a5", {"src0": legal("i8"), "src1": legal("i8"), "dst": legal("i8")}, None),
    ("tadd", None, "a2a3", {"src0": legal("i8"), "src1": legal("i8"), "dst": legal("i8")}, "dtype.t"),
    ("tadd", None, "a2a3", {"src0": legal("f32", vr=4), "src1": legal("f32"), "dst": legal("f32")},
     "runtime.src0-valid-shape"),
    ("tadd", None, "cpu", {"src0": legal("f32", rows=16), "src1": legal("f32"), "dst": legal("f32")},
     "type.same-tile"),
    ("tadd", None, "a5", {"src0": legal("f32", rows=16, extra=",blayout=col_major"), "src1": legal("f32"),
                          "dst": legal("f32")}, "layout.row-major"),
    ("taddc", None, "cpu", {"src0": legal("i64"), "src1": legal("i64"), "src2": legal("i64"), "dst": legal("i64")},
     None),
    ("taddc", None, "a2a3", {"src0": legal("f32"), "src1": legal("f32"), "src2": legal("f32"), "dst": legal("f32")},
     "profile.unsupported"),
    ("taddc", None, "cpu", {"src0": legal("f32"), "src1": legal("f32"), "src2": legal("f32", vc=3),
                            "dst": legal("f32")}, "runtime.sources-valid-shape"),
    ("tand", None, "a2a3", {"src0": legal("u16"), "src1": legal("u16"), "dst": legal("u16")}, None),
    ("tand", None, "a2a3", {"src0": legal("i32"), "src1": legal("i32"), "dst": legal("i32")}, "dtype.t"),
    ("tand", None, "a5", {"src0": legal("i32"), "src1": legal("i32"), "dst": legal("i32")}, None),
    ("tand", None, "a5", {"src0": legal("f32"), "src1": legal("f32"), "dst": legal("f32")}, "dtype.t"),
    ("tdiv", None, "a2a3", {"src0": legal("f16"), "src1": legal("f16"), "dst": legal("f16")}, None),
    ("tdiv", None, "a5", {"src0": legal("u32"), "src1": legal("u32"), "dst": legal("u32")}, None),
    ("tdiv", None, "a5", {"src0": legal("i64"), "src1": legal("i64"), "dst": legal("i64")}, "dtype.t"),
    ("texp", None, "a5", {"src": legal("f16"), "dst": legal("f16")}, None),
    ("texp", None, "a5", {"src": legal("i32"), "dst": legal("i32")}, "dtype.t"),
    ("texp", None, "a2a3", {"src": legal("f32"), "dst": legal("f32", vc=3)}, "runtime.src-valid-shape"),
    ("tfmod", None, "a2a3", {"src0": legal("f32"), "src1": legal("f32"), "dst": legal("f32")}, None),
    ("tfmod", None, "a2a3", {"src0": legal("f16"), "src1": legal("f16"), "dst": legal("f16")}, "dtype.t"),
    ("tfmod", None, "a5", {"src0": legal("i32"), "src1": legal("i32"), "dst": legal("i32")}, None),
    ("tlog", None, "a2a3", {"src": legal("f32"), "dst": legal("f32")}, None),
    ("tlog", None, "cpu", {"src": legal("i32"), "dst": legal("i32")}, "dtype.t"),
    ("tmin", None, "a5", {"src0": legal("u8"), "src1": legal("u8"), "dst": legal("u8")}, None),
    ("tmin", None, "a2a3", {"src0": legal("u8"), "src1": legal("u8"), "dst": legal("u8")}, "dtype.t"),
    ("tmul", None, "a5", {"src0": legal("bf16"), "src1": legal("bf16"), "dst": legal("bf16")}, None),
    ("tmul", None, "a5", {"src0": legal("i8"), "src1": legal("i8"), "dst": legal("i8")}, "dtype.t"),
    ("tneg", None, "a5", {"src": legal("u16"), "dst": legal("u16")}, None),
    ("tneg", None, "a2a3", {"src": legal("u16"), "dst": legal("u16")}, "dtype.t"),
    ("tneg", None, "a2a3", {"src": legal("f32", vr=0, vc=0), "dst": legal("f32", vr=0, vc=0)}, "runtime.non-empty"),
    ("tneg", None, "a5", {"src": legal("f32", rows=16, extra=",blayout=col_major"),
                          "dst": legal("f32", rows=16, extra=",blayout=col_major")}, None),
    ("tnot", None, "a2a3", {"src": legal("i16"), "dst": legal("i16")}, None),
    ("tnot", None, "a2a3", {"src": legal("i32"), "dst": legal("i32")}, "dtype.t"),
    ("tnot", None, "a5", {"src": legal("i8"), "dst": legal("i8")}, None),
    ("tor", None, "a5", {"src0": legal("u32"), "src1": legal("u32"), "dst": legal("u32")}, None),
    ("tor", None, "a2a3", {"src0": legal("u32"), "src1": legal("u32"), "dst": legal("u32")}, "dtype.t"),
    ("tpow", "default", "a5", {"base": legal("i8"), "exp": legal("i8"), "tmp": legal("i8"), "dst": legal("i8")},
     None),
    ("tpow", "high_precision", "a5", {"base": legal("i8"), "exp": legal("i8"), "tmp": legal("i8"),
                                      "dst": legal("i8")}, "dtype.t"),
    ("tpow", "high_precision", "a5", {"base": legal("bf16"), "exp": legal("bf16"), "tmp": legal("u8"),
                                      "dst": legal("bf16")}, None),
    ("tpow", "high_precision", "a2a3", {"base": legal("f32"), "exp": legal("f32"), "tmp": legal("f32"),
                                        "dst": legal("f32")}, "profile.unsupported-mode"),
    ("tpow", "default", "a2a3", {"base": legal("f32"), "exp": legal("f32"), "tmp": legal("f16"),
                                 "dst": legal("f32")}, "type.tmp-dtype"),
    ("tpow", "default", "a2a3", {"base": legal("i32"), "exp": legal("i32"), "tmp": legal("f16"),
                                 "dst": legal("i32")}, None),
    ("tpow", "default", "cpu", {"base": legal("f32", rows=16), "exp": legal("f32"), "tmp": legal("f32"),
                                "dst": legal("f32")}, "cpu.same-geometry"),
    ("tprelu", None, "a2a3", {"src0": legal("f16"), "src1": legal("f16"), "tmp": legal("u8"), "dst": legal("f16")},
     None),
    ("tprelu", None, "a2a3", {"src0": legal("f16"), "src1": legal("f16"), "tmp": legal("f16"), "dst": legal("f16")},
     "dtype.u"),
    ("tprelu", None, "a5", {"src0": legal("f16"), "src1": legal("f16"), "tmp": legal("f16"), "dst": legal("f16")},
     None),
    ("trecip", None, "a2a3", {"src": legal("f32"), "dst": legal("f32")}, None),
    ("trecip", None, "a2a3", {"src": legal("i32"), "dst": legal("i32")}, "dtype.t"),
    ("trecip", None, "cpu", {"src": legal("f32", rows=16, extra=",blayout=col_major"),
                             "dst": legal("f32", rows=16, extra=",blayout=col_major")}, "layout.row-major"),
    ("trelu", None, "a2a3", {"src": legal("i32"), "dst": legal("i32")}, None),
    ("trelu", None, "a2a3", {"src": legal("i16"), "dst": legal("i16")}, "dtype.t"),
    ("trem", None, "a2a3", {"src0": legal("i32"), "src1": legal("i32"), "tmp": legal("i32"), "dst": legal("i32")},
     None),
    ("trem", None, "a2a3", {"src0": legal("f32"), "src1": legal("f32"), "tmp": legal("i32"), "dst": legal("f32")},
     "type.tmp-dtype"),
    ("trem", None, "a5", {"src0": legal("u16"), "src1": legal("u16"), "tmp": legal("f32"), "dst": legal("u16")},
     None),
    ("trsqrt", "tmp", "a2a3", {"src": legal("f16"), "tmp": legal("u8"), "dst": legal("f16")}, None),
    ("trsqrt", "default", "a5", {"src": legal("f32"), "dst": legal("f32")}, None),
    ("trsqrt", "default", "a5", {"src": legal("i32"), "dst": legal("i32")}, "dtype.t"),
    ("tshl", None, "a2a3", {"src0": legal("u8"), "src1": legal("u8"), "dst": legal("u8")}, None),
    ("tshl", None, "a2a3", {"src0": legal("i64"), "src1": legal("i64"), "dst": legal("i64")}, "dtype.t"),
    ("tshl", None, "cpu", {"src0": legal("i64"), "src1": legal("i64"), "dst": legal("i64")}, None),
    ("tshr", None, "a5", {"src0": legal("i32"), "src1": legal("i32"), "dst": legal("i32")}, None),
    ("tshr", None, "a5", {"src0": legal("f32"), "src1": legal("f32"), "dst": legal("f32")}, "dtype.t"),
    ("tsqrt", None, "cpu", {"src": legal("bf16"), "dst": legal("bf16")}, None),
    ("tsqrt", None, "a2a3", {"src": legal("bf16"), "dst": legal("bf16")}, "dtype.t"),
    ("tsqrt", None, "cpu", {"src": legal("f32", vr=2), "dst": legal("f32")}, "runtime.src-valid-shape"),
    ("tsub", None, "a5", {"src0": legal("u8"), "src1": legal("u8"), "dst": legal("u8")}, None),
    ("tsub", None, "a2a3", {"src0": legal("u8"), "src1": legal("u8"), "dst": legal("u8")}, "dtype.t"),
    ("tsub", None, "a2a3", {"src0": legal("f32"), "src1": legal("f16"), "dst": legal("f32")}, "dtype.same-t"),
    ("tsubc", None, "cpu", {"src0": legal("u64"), "src1": legal("u64"), "src2": legal("u64"), "dst": legal("u64")},
     None),
    ("tsubc", None, "cpu", {"src0": legal("f32", rows=16, extra=",blayout=col_major"), "src1": legal("f32"),
                            "src2": legal("f32"), "dst": legal("f32")}, "type.same-tile"),
    ("txor", None, "a2a3", {"src0": legal("u32"), "src1": legal("u32"), "tmp": legal("u32"), "dst": legal("u32")},
     None),
    ("txor", None, "a2a3", {"src0": legal("u32"), "src1": legal("u32"), "tmp": legal("i32"), "dst": legal("u32")},
     "type.tmp-dtype"),
    ("txor", None, "a2a3", {"src0": legal("u32"), "src1": legal("u32"), "tmp": legal("u32", vr=2),
                            "dst": legal("u32")}, "runtime.tmp-valid-shape"),
    ("txor", None, "a5", {"src0": legal("u32"), "src1": legal("u32"), "tmp": legal("f32", vr=1),
                          "dst": legal("u32")}, None),
]


@pytest.mark.parametrize("op,mode,profile,operands,expected", V, ids=[f"{v[0]}-{v[2]}-{v[4] or 'legal'}-{i}"
                                                                     for i, v in enumerate(V)])
def test_validator(db, tiles, op, mode, profile, operands, expected):
    report = validate(db, op, mode, profile, tiles(**operands))
    if expected is None:
        assert report.ok and not report.deferred, [v.one_line() for v in report.violations]
    else:
        assert expected in report.rule_ids, [v.one_line() for v in report.violations]


def test_every_op_of_the_family_is_covered(db):
    mine = {"tabs", "tadd", "taddc", "tand", "tdiv", "texp", "tfmod", "tlog", "tmin", "tmul", "tneg", "tnot", "tor",
            "tpow", "tprelu", "trecip", "trelu", "trem", "trsqrt", "tshl", "tshr", "tsqrt", "tsub", "tsubc", "txor"}
    assert mine <= set(db.ops)
    assert mine <= {v[0] for v in V}
    for name in mine:
        op = db.op(name)
        assert op.family == "elementwise-tile-tile"
        for d in op.differences:
            assert len(d.claims) >= 2 and all(s in op.sources for s, _ in d.claims), (name, d.id)
