"""Tile-scalar family (TADDS ... TXORS, TEXPANDS): executor results against NumPy and Python
arithmetic written here, plus validator checks taken from the upstream pages."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from ptospec.executor import execute
from ptospec.validator import validate

NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "i8": np.int8, "u8": np.uint8,
      "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64}
INTS = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]
SENTINEL = 99
ROWS, COLS, VR, VC = 8, 64, 5, 37  # physical shape and a partial valid region


def is_int(dtype: str) -> bool:
    return dtype in INTS


def wrap(value: int, dtype: str) -> int:
    """An exact integer reduced to the dtype's two's-complement range."""
    bits = np.dtype(NP[dtype]).itemsize * 8
    value %= 1 << bits
    if dtype.startswith("i") and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def values(dtype: str, seed: int, lo: int = -40, hi: int = 40) -> np.ndarray:
    """A full tile: small values in the valid region, extremes as poison outside it."""
    rng = np.random.default_rng(seed)
    t = NP[dtype]
    if is_int(dtype):
        info = np.iinfo(t)
        lo = max(lo, int(info.min))
        arr = np.full((ROWS, COLS), info.max, dtype=t)
        arr[:VR, :VC] = rng.integers(lo, min(hi, int(info.max)) + 1, size=(VR, VC)).astype(t)
    else:
        arr = np.full((ROWS, COLS), 1e4, dtype=np.float32).astype(t)
        arr[:VR, :VC] = (rng.integers(lo, hi + 1, size=(VR, VC)) * 0.25).astype(np.float32).astype(t)
    return arr


def descs(dtype: str, **extra: str) -> dict[str, str]:
    tile = f"vec,{ROWS}x{COLS}x{dtype},valid={VR}x{VC}"
    return {"dst": tile, "src0": tile, "scalar": dtype, **extra}


def run(db, tiles, op, profile, d, data, mode=None):
    out = execute(db, op, mode, profile, tiles(**d), data)
    return out["dst"]


def expect(src: np.ndarray, dtype: str, fn, initial=None) -> np.ndarray:
    """Apply ``fn`` to every valid element (Python ints for integers); elsewhere keep ``initial``."""
    out = np.full((ROWS, COLS), SENTINEL, dtype=NP[dtype]) if initial is None else initial.copy()
    for i in range(VR):
        for j in range(VC):
            a = src[i, j]
            out[i, j] = wrap(fn(int(a)), dtype) if is_int(dtype) else fn(a)
    return out


def sentinel(dtype: str) -> np.ndarray:
    return np.full((ROWS, COLS), SENTINEL, dtype=NP[dtype])


# ----------------------------------------------------------------------------- executor


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", *INTS])
def test_tadds_wraps_and_rounds(db, tiles, dtype):
    src = values(dtype, 1)
    if is_int(dtype):
        src[0, 0] = np.iinfo(NP[dtype]).max  # overflow wraps
    s = NP[dtype](3)
    out = run(db, tiles, "tadds", "cpu", descs(dtype), {"src0": src, "scalar": s, "dst": sentinel(dtype)})
    exp = expect(src, dtype, lambda a: a + 3 if is_int(dtype) else NP[dtype](a + s))
    np.testing.assert_array_equal(out, exp)
    if is_int(dtype):
        assert int(out[0, 0]) == wrap(int(np.iinfo(NP[dtype]).max) + 3, dtype)


def test_tadds_float_specials(db, tiles):
    src = values("f32", 2)
    src[0, :4] = [np.inf, -np.inf, np.nan, -0.0]
    out = run(db, tiles, "tadds", "a5", descs("f32"), {"src0": src, "scalar": np.float32(-0.0),
                                                         "dst": sentinel("f32")})
    assert out[0, 0] == np.inf and out[0, 1] == -np.inf and np.isnan(out[0, 2])
    assert out[0, 3] == 0 and math.copysign(1, out[0, 3]) < 0  # -0 + -0 = -0
    assert (out[VR:, :] == SENTINEL).all() and (out[:, VC:] == SENTINEL).all()


@pytest.mark.parametrize("dtype", ["f16", "f32", "i8", "u16", "i32", "u64"])
def test_tsubs(db, tiles, dtype):
    src = values(dtype, 3, lo=0)
    if is_int(dtype):
        src[1, 1] = np.iinfo(NP[dtype]).min  # underflow wraps
    s = NP[dtype](7)
    out = run(db, tiles, "tsubs", "cpu", descs(dtype), {"src0": src, "scalar": s, "dst": sentinel(dtype)})
    exp = expect(src, dtype, lambda a: a - 7 if is_int(dtype) else NP[dtype](a - s))
    np.testing.assert_array_equal(out, exp)


@pytest.mark.parametrize("dtype", ["f16", "f32", "i16", "u32", "i64"])
def test_tmuls(db, tiles, dtype):
    src = values(dtype, 4)
    if is_int(dtype):
        src[0, 2] = np.iinfo(NP[dtype]).max
    s = NP[dtype](5) if is_int(dtype) else NP[dtype](-1.5)
    out = run(db, tiles, "tmuls", "cpu", descs(dtype), {"src0": src, "scalar": s, "dst": sentinel(dtype)})
    exp = expect(src, dtype, lambda a: a * 5 if is_int(dtype) else NP[dtype](a * s))
    np.testing.assert_array_equal(out, exp)


def c_trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


@pytest.mark.parametrize("dtype", ["f16", "f32", "i8", "u8", "i16", "i32", "u32"])
def test_tdivs_both_forms(db, tiles, dtype):
    # The dividend avoids the type's minimum: see the report (the engine's c_div takes abs() in the
    # element type, which overflows for that one value).
    src = values(dtype, 5, lo=-40, hi=40)
    src[:VR, :VC][src[:VR, :VC] == 0] = NP[dtype](3)  # divisors in the scalar/tile form must be non-zero
    s = NP[dtype](4) if is_int(dtype) else NP[dtype](-2.5)
    # A5's tile/scalar form rejects 8-bit types (its static_assert), the simulator runs them
    tile_scalar_profile = "cpu" if dtype in ("i8", "u8") else "a5"
    out = run(db, tiles, "tdivs", tile_scalar_profile, descs(dtype), {"src0": src, "scalar": s, "dst": sentinel(dtype)},
              mode="default")
    if is_int(dtype):
        exp = expect(src, dtype, lambda a: c_trunc_div(a, 4))
    else:
        exp = expect(src, dtype, lambda a: NP[dtype](np.float64(a) / np.float64(s)))
    np.testing.assert_array_equal(out, exp)
    out2 = run(db, tiles, "tdivs", "a5", descs(dtype), {"src0": src, "scalar": s, "dst": sentinel(dtype)},
               mode="scalar_tile")
    if is_int(dtype):
        exp2 = expect(src, dtype, lambda a: c_trunc_div(4, a))
    else:
        exp2 = expect(src, dtype, lambda a: NP[dtype](np.float64(s) / np.float64(a)))
    np.testing.assert_array_equal(out2, exp2)


def test_tdivs_truncates_toward_zero(db, tiles):
    src = values("i32", 6)
    src[0, :3] = [-7, 7, -1]
    out = run(db, tiles, "tdivs", "cpu", descs("i32"), {"src0": src, "scalar": np.int32(2), "dst": sentinel("i32")},
              mode="default")
    assert list(out[0, :3]) == [-3, 3, 0]


@pytest.mark.parametrize("dtype", ["f16", "f32", "i16", "u16", "i32"])
def test_tmaxs_tmins(db, tiles, dtype):
    src = values(dtype, 7, lo=0 if dtype.startswith("u") else -40)
    s = NP[dtype](10)
    for op, pick in (("tmaxs", max), ("tmins", min)):
        out = run(db, tiles, op, "a5", descs(dtype), {"src0": src, "scalar": s, "dst": sentinel(dtype)})
        np.testing.assert_array_equal(out, expect(src, dtype, lambda a, pick=pick: pick(a, 10) if is_int(dtype)
                                                  else NP[dtype](pick(float(a), 10.0))))


@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_tlrelu(db, tiles, dtype):
    src = values(dtype, 8)
    src[0, :3] = [0.0, -0.0, -4.0]
    s = NP[dtype](0.25)
    out = run(db, tiles, "tlrelu", "a2a3", descs(dtype), {"src0": src, "scalar": s, "dst": sentinel(dtype)})
    exp = expect(src, dtype, lambda a: a if a > 0 else NP[dtype](a * s))
    np.testing.assert_array_equal(out, exp)
    assert out[0, 2] == -1.0


@pytest.mark.parametrize("dtype", INTS)
def test_bitwise(db, tiles, dtype):
    rng = np.random.default_rng(9)
    info = np.iinfo(NP[dtype])
    src = np.full((ROWS, COLS), info.max, dtype=NP[dtype])
    src[:VR, :VC] = rng.integers(int(info.min), int(info.max), size=(VR, VC), dtype=np.int64 if dtype != "u64"
                                 else np.uint64).astype(NP[dtype])
    pattern = wrap(0x5A5A5A5A5A5A5A5A, dtype)
    s = NP[dtype](pattern)
    for op, fn in (("tands", lambda a: a & pattern), ("tors", lambda a: a | pattern),
                   ("txors", lambda a: a ^ pattern)):
        d = descs(dtype, tmp=f"vec,{ROWS}x{COLS}x{dtype},valid={VR}x{VC}") if op == "txors" else descs(dtype)
        out = run(db, tiles, op, "cpu", d, {"src0": src, "scalar": s, "dst": sentinel(dtype)})
        np.testing.assert_array_equal(out, expect(src, dtype, fn), err_msg=op)


@pytest.mark.parametrize("dtype", INTS)
def test_shifts(db, tiles, dtype):
    src = values(dtype, 10, lo=-100, hi=100)
    info = np.iinfo(NP[dtype])
    src[0, :2] = [info.max, info.min]  # bits shifted out are lost; the sign fills on the right shift
    bits = np.dtype(NP[dtype]).itemsize * 8
    for count in (0, 3, bits - 1):
        s = NP[dtype](count)
        left = run(db, tiles, "tshls", "cpu", descs(dtype), {"src0": src, "scalar": s, "dst": sentinel(dtype)})
        np.testing.assert_array_equal(left, expect(src, dtype, lambda a, c=count: a << c))
        right = run(db, tiles, "tshrs", "cpu", descs(dtype), {"src0": src, "scalar": s, "dst": sentinel(dtype)})
        np.testing.assert_array_equal(right, expect(src, dtype, lambda a, c=count: a >> c))  # Python >> floors
    if dtype.startswith("i"):
        data = {"src0": src, "scalar": NP[dtype](1), "dst": sentinel(dtype)}
        out = run(db, tiles, "tshrs", "cpu", descs(dtype), data)
        assert int(out[0, 1]) == int(info.min) // 2  # arithmetic, not logical


@pytest.mark.parametrize("dtype", ["f32", "f16", "i32", "i16", "u16"])
def test_tfmods_and_trems_signs(db, tiles, dtype):
    src = values(dtype, 11, lo=0 if dtype.startswith("u") else -40)
    signed = not dtype.startswith("u")
    if signed:
        src[0, :4] = [-7, 7, -6, 5]
    divisor = 3 if not signed else -3
    s = NP[dtype](divisor)

    def fmod(a):
        if is_int(dtype):
            return a - c_trunc_div(a, divisor) * divisor
        return NP[dtype](math.fmod(float(a), divisor))

    def floor_rem(a):
        if is_int(dtype):
            return a - (a // divisor) * divisor  # Python // floors
        r = math.fmod(float(a), divisor)
        return NP[dtype](r + divisor if r != 0 and (r < 0) != (divisor < 0) else r)

    out = run(db, tiles, "tfmods", "a5", descs(dtype), {"src0": src, "scalar": s, "dst": sentinel(dtype)})
    np.testing.assert_array_equal(out, expect(src, dtype, fmod))
    d = descs(dtype, tmp=f"vec,{ROWS}x{COLS}x{dtype},valid={VR}x{VC}")
    out = run(db, tiles, "trems", "a5", d, {"src0": src, "scalar": s, "dst": sentinel(dtype)})
    np.testing.assert_array_equal(out, expect(src, dtype, floor_rem))
    if signed:  # fmod keeps the dividend's sign, trems the divisor's (-3)
        assert [float(v) for v in out[0, :4]] == [-1.0, -2.0, 0.0, -1.0]


def test_trems_positive_divisor(db, tiles):
    src = values("f32", 12)
    src[0, :2] = [-7.0, 7.0]
    d = descs("f32", tmp=f"vec,{ROWS}x{COLS}xf32,valid=1x{VC}")
    out = run(db, tiles, "trems", "a2a3", d, {"src0": src, "scalar": np.float32(3), "dst": sentinel("f32")})
    assert list(out[0, :2]) == [2.0, 1.0]


@pytest.mark.parametrize("dtype", ["i32", "u8", "i16"])
def test_tpows_integers_wrap(db, tiles, dtype):
    src = values(dtype, 13, lo=-5 if dtype.startswith("i") else 0, hi=12)
    s = NP[dtype](5)
    d = descs(dtype, tmp=f"vec,{ROWS}x{COLS}x{dtype},valid={VR}x{VC}")
    out = run(db, tiles, "tpows", "a5", d, {"src0": src, "scalar": s, "dst": sentinel(dtype)})
    np.testing.assert_array_equal(out, expect(src, dtype, lambda a: a ** 5))


def test_tpows_float_within_tolerance(db, tiles):
    src = values("f32", 14, lo=1, hi=40)
    d = descs("f32", tmp=f"vec,{ROWS}x{COLS}xf32,valid={VR}x{VC}")
    out = run(db, tiles, "tpows", "a2a3", d, {"src0": src, "scalar": np.float32(1.5), "dst": sentinel("f32")})
    exp = sentinel("f32")
    exp[:VR, :VC] = (src[:VR, :VC].astype(np.float64) ** 1.5).astype(np.float32)
    tol = db.op("tpows").numerics.tolerance["f32"]
    np.testing.assert_allclose(out, exp, rtol=tol.rtol, atol=tol.atol)


def test_taxpy_accumulates(db, tiles):
    src = values("f32", 15)
    acc = values("f32", 16)
    out = run(db, tiles, "taxpy", "a2a3", descs("f32"), {"src0": src, "scalar": np.float32(2.0), "dst": acc})
    exp = acc.copy()
    exp[:VR, :VC] = acc[:VR, :VC] + np.float32(2.0) * src[:VR, :VC]
    np.testing.assert_array_equal(out, exp)


def test_taxpy_f16_into_f32_keeps_the_product_exact(db, tiles):
    tile16 = f"vec,{ROWS}x{COLS}xf16,valid={VR}x{VC}"
    tile32 = f"vec,{ROWS}x{COLS}xf32,valid={VR}x{VC}"
    x = np.full((ROWS, COLS), 1 + 2 ** -10, dtype=np.float16)
    acc = np.zeros((ROWS, COLS), dtype=np.float32)
    out = run(db, tiles, "taxpy", "a5", {"dst": tile32, "src0": tile16, "scalar": "f16"},
              {"src0": x, "scalar": np.float16(1 + 2 ** -10), "dst": acc})
    exact = (1 + 2 ** -10) ** 2  # needs 21 bits: exact in f32, rounded in f16
    assert out[0, 0] == np.float32(exact) and out[0, 0] != np.float32(np.float16(exact))
    assert out[VR, 0] == 0 and out[0, VC] == 0


@pytest.mark.parametrize("dtype", ["f32", "i16", "u8", "i32"])
def test_taddsc_tsubsc(db, tiles, dtype):
    a = values(dtype, 17, lo=0)
    b = values(dtype, 18, lo=0)
    if is_int(dtype):
        a[0, 0] = b[0, 0] = np.iinfo(NP[dtype]).max  # no saturation: the sum wraps
    s = NP[dtype](6)
    d = descs(dtype, src1=f"vec,{ROWS}x{COLS}x{dtype},valid={VR}x{VC}")
    for op, sign in (("taddsc", 1), ("tsubsc", -1)):
        out = run(db, tiles, op, "cpu", d, {"src0": a, "scalar": s, "src1": b, "dst": sentinel(dtype)})
        exp = sentinel(dtype)
        for i in range(VR):
            for j in range(VC):
                if is_int(dtype):
                    exp[i, j] = wrap(int(a[i, j]) + sign * 6 + int(b[i, j]), dtype)
                else:
                    exp[i, j] = NP[dtype](NP[dtype](a[i, j] + sign * s) + b[i, j])
        np.testing.assert_array_equal(out, exp, err_msg=op)
    if is_int(dtype):
        assert int(out[0, 0]) != int(np.iinfo(NP[dtype]).max)  # a saturating op would stick at max


@pytest.mark.parametrize("dtype", ["f16", "f32", "i8", "u64"])
def test_texpands_fills_only_the_valid_region(db, tiles, dtype):
    value = NP[dtype](-0.0) if not is_int(dtype) else NP[dtype](wrap(-5, dtype))
    out = execute(db, "texpands", None, "cpu", tiles(dst=f"vec,{ROWS}x{COLS}x{dtype},valid={VR}x{VC}", scalar=dtype),
                  {"scalar": value, "dst": sentinel(dtype)})["dst"]
    exp = sentinel(dtype)
    exp[:VR, :VC] = value
    np.testing.assert_array_equal(out, exp)
    if not is_int(dtype):
        assert np.signbit(out[0, 0])


def test_texpands_nan_and_column_major(db, tiles):
    out = execute(db, "texpands", None, "a2a3", tiles(dst="vec,32x16xf32,valid=3x5,layout=dn", scalar="f32"),
                  {"scalar": np.float32(np.nan), "dst": np.zeros((32, 16), np.float32)})["dst"]
    assert np.isnan(out[:3, :5]).all() and not np.isnan(out[3:, :]).any() and not np.isnan(out[:, 5:]).any()


# ----------------------------------------------------------------------------- validator


def ok(db, tiles, op, profile, mode=None, **d):
    report = validate(db, op, mode, profile, tiles(**d))
    return report.ok, report.rule_ids


def vec(dtype, shape="16x32", valid=None, layout="nd", loc="vec"):
    v = f",valid={valid}" if valid else ""
    return f"{loc},{shape}x{dtype}{v},layout={layout}"


@pytest.mark.parametrize(("op", "profile", "dtype", "legal", "rule"), [
    ("tadds", "a2a3", "f16", True, None),
    ("tadds", "a2a3", "i8", False, "dtype.t"),          # page: A2A3 int32/int16/half/float only
    ("tadds", "a5", "bf16", True, None),
    ("tsubs", "a5", "u8", True, None),                  # the header's list (the page's A5 list is A2A3's, copied)
    ("tsubs", "a2a3", "u8", False, "dtype.t"),
    ("tmuls", "a5", "i8", False, "dtype.t"),
    ("tmuls", "a5", "u16", True, None),
    ("tdivs", "a5", "i8", False, "dtype.t"),            # the A5 tile/scalar static_assert has no 8-bit type
    ("tdivs", "a2a3", "u8", False, "dtype.t"),
    ("tmaxs", "a5", "bf16", True, None),
    ("tmaxs", "a2a3", "u16", False, "dtype.t"),
    ("tlrelu", "a2a3", "i32", False, "dtype.t"),
    ("tlrelu", "a5", "f16", True, None),
    ("tands", "a2a3", "f16", False, "dtype.t"),
    ("tors", "cpu", "i64", True, None),
    ("tshls", "a2a3", "i8", False, "dtype.t"),
    ("tshrs", "a5", "i8", True, None),
    ("tfmods", "a2a3", "f16", False, "dtype.t"),
    ("tfmods", "a5", "f16", True, None),
])
def test_dtype_tables(db, tiles, op, profile, dtype, legal, rule):
    shape = "16x64"
    d = {"dst": vec(dtype, shape), "src0": vec(dtype, shape), "scalar": dtype}
    good, ids = ok(db, tiles, op, profile, "default", **d)
    assert good is legal
    if rule:
        assert rule in ids


@pytest.mark.parametrize(("op", "profile", "legal"), [
    ("tadds", "a5", False), ("tadds", "cpu", False),      # row-major documented / simulator static_assert
    ("tsubs", "a2a3", True), ("tsubs", "cpu", True),      # no layout requirement for TSUBS
    ("tmins", "a5", True), ("tmaxs", "a5", False),
    ("tands", "a5", False), ("tands", "cpu", True),       # NPU headers demand row-major, the simulator does not
    ("tfmods", "a2a3", False), ("tfmods", "a5", True),
])
def test_column_major(db, tiles, op, profile, legal):
    dn = vec("i32" if op in ("tands",) else "f32", "32x16", layout="dn")
    good, ids = ok(db, tiles, op, profile, dst=dn, src0=dn, scalar="i32" if op == "tands" else "f32")
    assert good is legal, ids


def test_valid_shape_and_empty_region(db, tiles):
    good, ids = ok(db, tiles, "tadds", "a5", dst=vec("f32", valid="4x8"), src0=vec("f32", valid="4x9"), scalar="f32")
    assert not good and ids == {"runtime.src0-valid-shape"}
    ids = ok(db, tiles, "tmins", "a2a3", dst=vec("f32", valid="0x8"), src0=vec("f32", valid="0x8"), scalar="f32")[1]
    assert ids == {"runtime.nonempty"}
    assert ok(db, tiles, "tmins", "a5", dst=vec("f32", valid="0x8"), src0=vec("f32", valid="0x8"), scalar="f32")[0]
    # the scalar must be a scalar and carry the tile's type
    good, ids = ok(db, tiles, "tadds", "a5", dst=vec("f32"), src0=vec("f32"), scalar="f16")
    assert not good and "dtype.same-t" in ids


def test_tdivs_modes(db, tiles):
    d = {"dst": vec("f32"), "src0": vec("f32"), "scalar": "f32"}
    assert ok(db, tiles, "tdivs", "a2a3", "scalar_tile", **d)[0]
    assert ok(db, tiles, "tdivs", "a2a3", "default", **d)[0]
    mode = db.op("tdivs").mode("scalar_tile")
    assert [o.name for o in mode.operands] == ["dst", "scalar", "src0"] and mode.cpp_args == ("dst", "scalar", "src0")


def test_tmp_rules(db, tiles):
    base = {"dst": vec("i32", valid="4x20"), "src0": vec("i32", valid="4x20"), "scalar": "i32"}
    assert ok(db, tiles, "txors", "a2a3", tmp=vec("i32", valid="4x20"), **base)[0]
    ids = ok(db, tiles, "txors", "a2a3", tmp=vec("i32", valid="4x16"), **base)[1]
    assert ids == {"runtime.tmp-valid-shape"}
    assert ok(db, tiles, "txors", "a5", tmp=vec("i32", "8x8"), **base)[0]      # A5 ignores tmp
    ids = ok(db, tiles, "txors", "cpu", tmp=vec("i32", "8x8"), **base)[1]  # simulator: tmp is dst's type
    assert ids == {"cpp.tmp-tile-type"}
    f = {"dst": vec("f32", valid="4x20"), "src0": vec("f32", valid="4x20"), "scalar": "f32"}
    assert ok(db, tiles, "trems", "a2a3", tmp=vec("f32", "1x32", valid="1x20"), **f)[0]
    ids = ok(db, tiles, "trems", "a2a3", tmp=vec("f32", "1x32", valid="1x16"), **f)[1]
    assert ids == {"runtime.tmp-cols"}
    assert ok(db, tiles, "trems", "a5", tmp=vec("f32", "1x32", valid="1x16"), **f)[0]
    ids = ok(db, tiles, "tpows", "a2a3", tmp=vec("f32", valid="4x16"), **f)[1]
    assert ids == {"runtime.tmp-valid-shape"}
    assert ok(db, tiles, "tpows", "a2a3", tmp=vec("i32", valid="4x16"), **base)[0]  # integer path: tmp unused


def test_taxpy_pairs(db, tiles):
    assert ok(db, tiles, "taxpy", "a2a3", dst=vec("f32"), src0=vec("f16"), scalar="f16")[0]
    good, ids = ok(db, tiles, "taxpy", "a5", dst=vec("f16"), src0=vec("f32"), scalar="f32")
    assert not good and ids & {"dtype.d", "dtype.s"}
    ids = ok(db, tiles, "taxpy", "a5", dst=vec("f32", loc="mat"), src0=vec("f32"), scalar="f32")[1]
    assert ids == {"loc.vec"}


def test_fused_ops_are_cpu_only(db, tiles):
    d = {"dst": vec("f32"), "src0": vec("f32"), "src1": vec("f32"), "scalar": "f32"}
    for op in ("taddsc", "tsubsc"):
        assert ok(db, tiles, op, "cpu", **d)[0]
        assert ok(db, tiles, op, "a2a3", **d)[1] == {"profile.unsupported"}
        ids = ok(db, tiles, op, "cpu", **{**d, "src1": vec("f32", "16x64", valid="16x32")})[1]
        assert ids == {"cpp.same-tile-type"}


def test_texpands_locations(db, tiles):
    assert ok(db, tiles, "texpands", "a2a3", dst=vec("f32", loc="mat"), scalar="f32")[0]
    assert ok(db, tiles, "texpands", "a2a3", dst=vec("f32", "32x16", layout="dn"), scalar="f32")[0]
    assert ok(db, tiles, "texpands", "a5", dst=vec("f32", "32x16", layout="dn"), scalar="f32")[1] == {
        "layout.a5-vec-row-major"}
    assert ok(db, tiles, "texpands", "a5", dst=vec("f32", loc="left"), scalar="f32")[1] == {"loc.vec-or-mat"}
    assert ok(db, tiles, "texpands", "cpu", dst=vec("f32", loc="left"), scalar="f32")[0]
    assert ok(db, tiles, "texpands", "a5", dst=vec("u8", "1x32", loc="mat"), scalar="u8")[0]
    big = vec("f32", "1024x1024", loc="mat")  # 4 MiB: more than 32767 blocks of 32 bytes
    # ... and more than the 512 KiB Mat buffer (L1) any profile has
    assert ok(db, tiles, "texpands", "a5", dst=big, scalar="f32")[1] == {"mat.fill-size", "tile.capacity"}


def test_shift_and_divisor_domains(db):
    op = db.op("tshls")
    assert op.mode("default").operands[2].domain_text == "x >= 0 and x < bits(T)"
    assert op.numerics.shift_out_of_range == "undefined"
    for name in ("tdivs", "tfmods", "trems"):
        scalar = next(o for o in db.op(name).mode("default").operands if o.role == "scalar")
        assert "x != 0" in scalar.domain_text
