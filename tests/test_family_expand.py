"""Row and column expansions (reduce-and-expand): executor results against NumPy written here, and
validator checks taken from the upstream pages and headers."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ptospec.executor import execute
from ptospec.validator import validate

NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "i8": np.int8, "u8": np.uint8,
      "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64}
BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4, "u32": 4, "i64": 8, "u64": 8}
SENTINEL = 77


def is_int(dtype: str) -> bool:
    return np.issubdtype(np.dtype(NP[dtype]), np.integer)


def values(rng, shape, dtype, nonzero=False):
    """Small values (so integer results stay in range), optionally without zeros."""
    v = rng.integers(-9, 10, size=shape)
    if dtype.startswith("u"):
        v = np.abs(v)
    if nonzero:
        v = np.where(v == 0, 3, v)
    if is_int(dtype):
        return v.astype(NP[dtype])
    return (v * 0.25).astype(NP[dtype])


def fill(shape, dtype):
    return np.full(shape, SENTINEL, dtype=NP[dtype])


INT_OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "max": np.maximum, "min": np.minimum,
    "div": lambda a, b: np.where((a < 0) != (b < 0), -(np.abs(a) // np.abs(b)), np.abs(a) // np.abs(b)),
}
FLOAT_OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "max": np.maximum, "min": np.minimum,
}


def reference(name, a, b, dtype):
    """The element result of each binary expansion, computed here in int64 / float64 (integer quotients are
    truncated toward zero, as in C)."""
    if is_int(dtype):
        return INT_OPS[name](a.astype(np.int64), b.astype(np.int64)).astype(NP[dtype])
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if name == "expdif":
        diff = (a64 - b64).astype(NP[dtype]).astype(np.float64)  # the difference is formed in T
        return np.exp(diff).astype(NP[dtype])
    with np.errstate(divide="ignore", invalid="ignore"):
        return FLOAT_OPS[name](a64, b64).astype(NP[dtype])


def check(out, expected, name, dtype):
    if name in ("expdif", "div") and not is_int(dtype):
        rtol = 2e-3 if dtype == "f16" else 1e-6
        np.testing.assert_allclose(out.astype(np.float64), expected.astype(np.float64), rtol=rtol)
    else:
        np.testing.assert_array_equal(out, expected)


def report(db, tiles, op, mode, profile, **descs):
    r = validate(db, op, mode, profile, tiles(**descs))
    assert not r.deferred
    return r.rule_ids


# --------------------------------------------------------------------------- column expansions

COL_OPS = {
    "tcolexpandadd": ("add", ["f16", "f32", "i16", "u16", "i32", "u32"]),
    "tcolexpandsub": ("sub", ["f16", "f32", "i16", "u16", "i32", "u32"]),
    "tcolexpandmul": ("mul", ["f16", "f32", "u8", "i16", "u16", "i32", "u32"]),
    "tcolexpanddiv": ("div", ["f16", "f32", "i16", "u16", "i32", "u32"]),
    "tcolexpandmax": ("max", ["f16", "f32", "i16", "u16", "i32", "u32"]),
    "tcolexpandmin": ("min", ["f16", "f32", "i16", "u16", "i32", "u32"]),
    "tcolexpandexpdif": ("expdif", ["f16", "f32"]),
}


@pytest.mark.parametrize("op,dtype", [(op, dt) for op, (_, dts) in COL_OPS.items() for dt in dts])
def test_col_expansion_partial_region(db, tiles, op, dtype):
    name = COL_OPS[op][0]
    rng = np.random.default_rng(len(op) * 31 + BYTES[dtype])
    cols = 64 // BYTES[dtype] if BYTES[dtype] == 1 else 32
    src0 = values(rng, (16, cols), dtype)
    src1 = values(rng, (2, cols), dtype, nonzero=(name == "div"))  # only row 0 is read
    t = tiles(src0=f"vec,16x{cols}x{dtype},valid=9x{cols}", src1=f"vec,2x{cols}x{dtype},valid=2x21",
              dst=f"vec,16x{cols}x{dtype},valid=6x19")
    out = execute(db, op, None, "cpu", t, {"src0": src0, "src1": src1, "dst": fill((16, cols), dtype)})["dst"]
    expected = fill((16, cols), dtype)
    expected[:6, :19] = reference(name, src0[:6, :19], np.broadcast_to(src1[0, :19], (6, 19)), dtype)
    check(out, expected, name, dtype)
    untouched = np.ones((16, cols), bool)
    untouched[:6, :19] = False
    assert (out[untouched] == SENTINEL).all()


def test_col_expansion_edge_values(db, tiles):
    t = tiles(src0="vec,4x8xf32", src1="vec,1x8xf32", dst="vec,4x8xf32")
    a = np.array([[np.inf, -np.inf, 1.5, -0.0, 3.0, -7.0, 100.0, 0.25]] * 4, np.float32)
    b = np.array([[1.0, 2.0, np.inf, 0.0, -3.0, 2.0, -100.0, 0.25]], np.float32)
    run = lambda op: execute(db, op, None, "a5", t, {"src0": a, "src1": b})["dst"][0]  # noqa: E731
    np.testing.assert_array_equal(run("tcolexpandmax"), [np.inf, 2.0, np.inf, 0.0, 3.0, 2.0, 100.0, 0.25])
    np.testing.assert_array_equal(run("tcolexpandmin"), [1.0, -np.inf, 1.5, -0.0, -3.0, -7.0, -100.0, 0.25])
    np.testing.assert_array_equal(run("tcolexpandsub")[[0, 1, 4, 7]], [np.inf, -np.inf, 6.0, 0.0])
    np.testing.assert_array_equal(run("tcolexpanddiv")[[0, 2, 4, 5]], [np.inf, 0.0, -1.0, -3.5])
    expdif = run("tcolexpandexpdif")
    assert expdif[6] == np.inf  # exp(200) overflows float to +inf
    assert expdif[7] == 1.0 and expdif[2] == 0.0  # exp(0) and exp(-inf)


def test_col_div_integers_truncate_toward_zero(db, tiles):
    t = tiles(src0="vec,2x8xi32", src1="vec,1x8xi32", dst="vec,2x8xi32")
    a = np.array([[7, -7, 7, -7, 1, -1, 100, -100]] * 2, np.int32)
    b = np.array([[2, 2, -2, -2, 3, 3, -7, 7]], np.int32)
    out = execute(db, "tcolexpanddiv", None, "a5", t, {"src0": a, "src1": b})["dst"]
    np.testing.assert_array_equal(out[1], [3, -3, -3, 3, 0, 0, -14, -14])


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"])
def test_tcolexpand(db, tiles, dtype):
    rng = np.random.default_rng(7)
    cols = 64
    src = values(rng, (3, cols), dtype)
    t = tiles(src=f"vec,3x{cols}x{dtype},valid=2x45", dst=f"vec,16x{cols}x{dtype},valid=11x45")
    out = execute(db, "tcolexpand", None, "cpu", t, {"src": src, "dst": fill((16, cols), dtype)})["dst"]
    expected = fill((16, cols), dtype)
    for i in range(11):
        expected[i, :45] = src[0, :45]
    np.testing.assert_array_equal(out, expected)


def test_tcolexpand_copies_nan_and_negative_zero_bits(db, tiles):
    src = np.array([[np.nan, -0.0, np.inf, -1.0, 0.0, 2.0, -np.inf, 5.0]], np.float32)
    t = tiles(src="vec,1x8xf32", dst="vec,4x8xf32")
    out = execute(db, "tcolexpand", None, "a2a3", t, {"src": src})["dst"]
    assert (out.view(np.uint32) == src.view(np.uint32)).all()


COL_CASES = [
    # (op, profile, tiles, expected rule ids)
    ("tcolexpandadd", "a2a3", dict(src0="vec,16x16xi16", src1="vec,1x16xi16", dst="vec,16x16xi16"), set()),
    ("tcolexpandadd", "a2a3", dict(src0="vec,16x16xu16", src1="vec,1x16xu16", dst="vec,16x16xu16"), {"dtype.t"}),
    ("tcolexpandadd", "a5", dict(src0="vec,16x16xu16", src1="vec,1x16xu16", dst="vec,16x16xu16"), set()),
    ("tcolexpandadd", "a5", dict(src0="vec,16x16xf32", src1="vec,1x16xf32", dst="vec,16x16xf32,layout=dn"),
     {"layout.dst-row-major"}),
    ("tcolexpandsub", "a5", dict(src0="vec,16x16xf32", src1="vec,1x16xf32,valid=1x8", dst="vec,16x16xf32"),
     {"src1.covers-columns"}),
    ("tcolexpandsub", "a2a3", dict(src0="vec,1x16xf32", src1="vec,16x16xf32", dst="vec,16x16xf32"),
     {"src0.covers-region"}),
    ("tcolexpandmul", "cpu", dict(src0="vec,16x32xu8", src1="vec,1x32xu8", dst="vec,16x32xu8"), set()),
    ("tcolexpandmul", "a5", dict(src0="vec,16x32xu8", src1="vec,1x32xu8", dst="vec,16x32xu8"), {"dtype.t"}),
    ("tcolexpandmul", "cpu", dict(src0="vec,16x16xf32", src1="vec,8x16xf32,layout=dn,valid=1x16",
                                  dst="vec,16x16xf32"), {"layout.cpu-src-row-major"}),
    ("tcolexpandmul", "a2a3", dict(src0="vec,16x16xf32", src1="vec,8x16xf32,layout=dn,valid=1x16",
                                   dst="vec,16x16xf32"), set()),
    ("tcolexpanddiv", "a2a3", dict(src0="vec,16x16xi32", src1="vec,1x16xi32", dst="vec,16x16xi32"), {"dtype.t"}),
    ("tcolexpanddiv", "a5", dict(src0="vec,16x16xi32", src1="vec,1x16xi32", dst="vec,16x16xi32"), set()),
    ("tcolexpandmin", "a2a3", dict(src0="vec,16x16xf32", src1="vec,1x16xf16", dst="vec,16x16xf32"),
     {"dtype.same-t"}),
    ("tcolexpandexpdif", "cpu", dict(src0="vec,16x16xi32", src1="vec,1x16xi32", dst="vec,16x16xi32"), {"dtype.t"}),
    ("tcolexpandexpdif", "a5", dict(src0="vec,16x16xf16", src1="vec,1x16xf16", dst="vec,16x16xf16"), set()),
    ("tcolexpandmax", "cpu", dict(src0="vec,16x16xu32", src1="vec,1x16xu32", dst="vec,16x16xu32"), set()),
    # tcolexpand: old-page type lists, the A5 column check, Vec/ND on the NPUs
    ("tcolexpand", "a2a3", dict(src="vec,1x8xi64", dst="vec,16x8xi64"), {"dtype.t"}),
    ("tcolexpand", "a5", dict(src="vec,1x8xi64", dst="vec,16x8xi64"), set()),
    ("tcolexpand", "a5", dict(src="vec,1x32xf32", dst="vec,16x16xf32"), {"runtime.a5-src-cols-equal"}),
    ("tcolexpand", "a2a3", dict(src="vec,1x32xf32", dst="vec,16x16xf32"), set()),
    ("tcolexpand", "cpu", dict(src="vec,1x16xf32,valid=1x8", dst="vec,16x16xf32"), {"runtime.src-covers-columns"}),
    ("tcolexpand", "a2a3", dict(src="vec,1x16xf32,valid=0x16", dst="vec,16x16xf32"), {"runtime.src-row"}),
    ("tcolexpand", "a5", dict(src="vec,1x16xf32,valid=0x16", dst="vec,16x16xf32,valid=0x16"),
     {"runtime.a5-src-nonempty"}),
    ("tcolexpand", "a5", dict(src="mat,1x16xf32", dst="vec,16x16xf32"), {"loc.vec"}),
    ("tcolexpand", "a2a3", dict(src="vec,16x16xf32,layout=dn", dst="vec,16x16xf32"), {"layout.nd"}),
    ("tcolexpand", "cpu", dict(src="vec,16x16xf32,layout=dn", dst="vec,16x16xf32"), set()),
]


@pytest.mark.parametrize("op,profile,descs,expected", COL_CASES)
def test_col_validator(db, tiles, op, profile, descs, expected):
    assert report(db, tiles, op, None, profile, **descs) == expected


# --------------------------------------------------------------------------- row expansions

ROW_OPS = {
    "trowexpandadd": ("add", ["f16", "f32", "i16", "u16", "i32", "u32"]),
    "trowexpandsub": ("sub", ["f16", "f32", "i16", "u16", "i32", "u32"]),
    "trowexpandmul": ("mul", ["f16", "f32", "u8", "i16", "u16", "i32", "u32"]),
    "trowexpanddiv": ("div", ["f16", "f32", "i16", "u16", "i32", "u32"]),
    "trowexpandmax": ("max", ["f16", "f32", "i16", "u16", "i32", "u32"]),
    "trowexpandmin": ("min", ["f16", "f32", "i16", "u16", "i32", "u32"]),
    "trowexpandexpdif": ("expdif", ["f16", "f32"]),
}


def row_case(op, dtype, mode, swapped, seed):
    """Descriptors, data and the expected destination for one row-expansion call on the simulator."""
    name = ROW_OPS[op][0]
    rng = np.random.default_rng(seed)
    epb = 32 // BYTES[dtype]
    cols = max(32, 2 * epb)
    rows, vr, vc = max(16, 32 // BYTES[dtype]), 10, 23
    full = values(rng, (rows, cols), dtype, nonzero=(name == "div" and swapped))
    full_desc = f"vec,{rows}x{cols}x{dtype},valid={vr}x{vc}"
    if mode.startswith("column"):
        exp_op = values(rng, (rows, 1), dtype, nonzero=(name == "div" and not swapped))
        exp_desc = f"vec,{rows}x1x{dtype},layout=dn,valid={vr}x1"
        per_elem = np.broadcast_to(exp_op[:vr, :1], (vr, vc))
    else:
        exp_op = values(rng, (rows, epb), dtype, nonzero=(name == "div" and not swapped))
        exp_desc = f"vec,{rows}x{epb}x{dtype},valid={vr}x{epb}"
        per_elem = exp_op[:vr, [j % epb for j in range(vc)]]
    descs = {"dst": f"vec,{rows}x{cols}x{dtype},valid={vr}x{vc}"}
    if swapped:
        descs.update(src0=exp_desc, src1=full_desc)
        data = {"src0": exp_op, "src1": full}
        value = reference(name, per_elem, full[:vr, :vc], dtype)
    else:
        descs.update(src0=full_desc, src1=exp_desc)
        data = {"src0": full, "src1": exp_op}
        value = reference(name, full[:vr, :vc], per_elem, dtype)
    if mode.endswith("_tmp"):
        descs["tmp"] = f"vec,8x{cols}x{dtype}"
    expected = fill((rows, cols), dtype)
    expected[:vr, :vc] = value
    data["dst"] = fill((rows, cols), dtype)
    return descs, data, expected


@pytest.mark.parametrize("mode", ["column", "block", "column_tmp", "block_tmp"])
@pytest.mark.parametrize("swapped", [False, True], ids=["src0-full", "src1-full"])
@pytest.mark.parametrize("op,dtype", [(op, dt) for op, (_, dts) in ROW_OPS.items() for dt in dts])
def test_row_expansion(db, tiles, op, dtype, mode, swapped):
    descs, data, expected = row_case(op, dtype, mode, swapped, seed=len(op) + BYTES[dtype] + len(mode))
    out = execute(db, op, mode, "cpu", tiles(**descs), data)["dst"]
    check(out, expected, ROW_OPS[op][0], dtype)


def test_row_sub_keeps_operand_order_when_src1_is_full(db, tiles):
    # s_i - src1[i, j] (not src1[i, j] - s_i): the headers' second operation keeps the positions
    t = tiles(src0="vec,8x1xf32,layout=dn", src1="vec,8x8xf32", dst="vec,8x8xf32")
    s = np.arange(8, dtype=np.float32).reshape(8, 1) * 10
    full = np.ones((8, 8), np.float32)
    out = execute(db, "trowexpandsub", "column", "a2a3", t, {"src0": s, "src1": full})["dst"]
    np.testing.assert_array_equal(out, s - full)
    out = execute(db, "trowexpanddiv", "column", "a5", t, {"src0": s + 1, "src1": full * 2})["dst"]
    np.testing.assert_array_equal(out, np.broadcast_to((s + 1) / 2, (8, 8)))


def test_row_block_repeats_the_32_byte_block(db, tiles):
    t = tiles(src0="vec,2x48xf16,valid=2x40", src1="vec,2x16xf16", dst="vec,2x48xf16,valid=2x40")
    block = np.arange(32, dtype=np.float16).reshape(2, 16)
    out = execute(db, "trowexpandadd", "block", "a5", t,
                  {"src0": np.zeros((2, 48), np.float16), "src1": block, "dst": fill((2, 48), "f16")})["dst"]
    for j in range(40):
        assert out[1, j] == block[1, j % 16]
    assert (out[:, 40:] == SENTINEL).all()


def test_row_edge_values(db, tiles):
    t = tiles(src0="vec,8x8xf32", src1="vec,8x1xf32,layout=dn", dst="vec,8x8xf32")
    a = np.tile(np.array([np.inf, -np.inf, -0.0, 1.0, 88.0, -3.0, 0.5, 7.0], np.float32), (8, 1))
    s = np.full((8, 1), -2.0, np.float32)
    out = execute(db, "trowexpandexpdif", "column", "a2a3", t, {"src0": a, "src1": s})["dst"][0]
    assert out[0] == np.inf and out[4] == np.inf  # exp(+inf); exp(90) overflows float to +inf
    assert out[1] == 0.0  # exp(-inf)
    np.testing.assert_allclose(out[[2, 3, 5, 6, 7]], np.exp([2.0, 3.0, -1.0, 2.5, 9.0]), rtol=1e-6)
    out = execute(db, "trowexpandmax", "column", "a5", t, {"src0": a, "src1": s})["dst"][0]
    np.testing.assert_array_equal(out, [np.inf, -2.0, -0.0, 1.0, 88.0, -2.0, 0.5, 7.0])


def test_row_div_integers_truncate_toward_zero(db, tiles):
    # Mode 2 with i16: the 16-element block of each row repeats across the 32 columns
    t = tiles(src0="vec,8x32xi16", src1="vec,8x16xi16", dst="vec,8x32xi16")
    a = np.tile(np.array([7, -7, 9, -9, 1, -1, 100, -100] * 4, np.int16), (8, 1))
    block = np.tile(np.array([2, 2, -2, -2, 3, 3, -7, 7] * 2, np.int16), (8, 1))
    out = execute(db, "trowexpanddiv", "block", "cpu", t, {"src0": a, "src1": block})["dst"]
    np.testing.assert_array_equal(out[3], [3, -3, -4, 4, 0, 0, -14, -14] * 4)


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"])
def test_trowexpand(db, tiles, dtype):
    rng = np.random.default_rng(11)
    cols = 64
    src = values(rng, (16, 32 // BYTES[dtype]), dtype)
    t = tiles(src=f"vec,16x{32 // BYTES[dtype]}x{dtype},valid=13x1", dst=f"vec,16x{cols}x{dtype},valid=13x50")
    out = execute(db, "trowexpand", None, "cpu", t, {"src": src, "dst": fill((16, cols), dtype)})["dst"]
    expected = fill((16, cols), dtype)
    for i in range(13):
        expected[i, :50] = src[i, 0]
    np.testing.assert_array_equal(out, expected)


def test_trowexpand_copies_nan_and_negative_zero_bits(db, tiles):
    src = np.array([[np.nan] + [0.0] * 7, [-0.0] + [0.0] * 7], np.float32)
    t = tiles(src="vec,2x8xf32,valid=2x1", dst="vec,2x8xf32")
    out = execute(db, "trowexpand", None, "a5", t, {"src": src})["dst"]
    assert (out[0].view(np.uint32) == src[0, 0].view(np.uint32)).all()
    assert (out[1].view(np.uint32) == np.float32(-0.0).view(np.uint32)).all()


F32 = "vec,16x16xf32"
COLV = "vec,16x1xf32,layout=dn"
ROW_CASES = [
    # (op, mode, profile, tiles, expected rule ids)
    # the op page's example (float, 16 x 1 column-major operand) is legal everywhere
    ("trowexpandadd", "column", "a2a3", dict(src0=F32, src1=COLV, dst=F32), set()),
    ("trowexpandadd", "column", "a5", dict(src0=F32, src1=COLV, dst=F32), set()),
    ("trowexpandadd", "column", "a2a3", dict(src0=COLV, src1=F32, dst=F32), set()),
    # the div/mul/sub pages' example operand Tile<Vec, half, 16, 1, ColMajor, 1, DYNAMIC>(16): valid 1 x 16,
    # wider than the tile itself
    ("trowexpanddiv", "column", "a5", dict(src0="vec,16x16xf16", src1="vec,16x1xf16,layout=dn,valid=1x16",
                                            dst="vec,16x16xf16"),
     {"runtime.expanded-one-per-row", "tile.valid-bounds"}),
    ("trowexpandmul", "column", "cpu", dict(src0="vec,16x16xf16", src1="vec,16x16xf16,layout=dn,valid=1x16",
                                             dst="vec,16x16xf16"), {"runtime.expanded-one-per-row"}),
    ("trowexpanddiv", "column", "a2a3", dict(src0="vec,16x16xi16", src1="vec,16x1xi16,layout=dn",
                                              dst="vec,16x16xi16"), {"dtype.t"}),
    ("trowexpanddiv", "column", "a5", dict(src0="vec,16x16xi16", src1="vec,16x1xi16,layout=dn",
                                            dst="vec,16x16xi16"), set()),
    ("trowexpandsub", "column", "a2a3", dict(src0="vec,16x16xf32,valid=8x16", src1=COLV, dst=F32),
     {"runtime.full-operand"}),
    ("trowexpandsub", "column", "a5", dict(src0="vec,16x16xf32,layout=dn", src1=COLV, dst=F32),
     {"layout.full-row-major"}),
    ("trowexpandsub", "column", "cpu", dict(src0=F32, src1=COLV, dst="vec,16x16xf32,layout=dn"),
     {"layout.dst-row-major"}),
    ("trowexpandmax", "column", "a2a3", dict(src0=F32, src1="vec,16x8xf32,valid=16x1", dst=F32),
     {"layout.expanded-col-major"}),
    ("trowexpandmax", "column", "a5", dict(src0=F32, src1="vec,16x8xf32,layout=dn,valid=16x1", dst=F32),
     {"layout.a5-expanded-one-col"}),
    ("trowexpandmax", "column", "a2a3", dict(src0=F32, src1="vec,16x8xf32,layout=dn,valid=16x1", dst=F32),
     set()),
    # Mode 2: one 32-byte block per row
    ("trowexpandmin", "block", "a2a3", dict(src0=F32, src1="vec,16x8xf32", dst=F32), set()),
    ("trowexpandmin", "block", "a2a3", dict(src0=F32, src1="vec,16x16xf32,valid=16x8", dst=F32),
     {"layout.expanded-block-cols"}),
    ("trowexpandmin", "block", "cpu", dict(src0=F32, src1="vec,16x16xf32,valid=16x8", dst=F32), set()),
    ("trowexpandmin", "block", "a5", dict(src0=F32, src1="vec,16x8xf32,valid=16x4", dst=F32),
     {"runtime.expanded-block-per-row"}),
    ("trowexpandmin", "block", "a5", dict(src0=F32, src1="vec,16x8xf32,layout=dn", dst=F32),
     {"layout.expanded-row-major"}),
    # the scratch-tile overloads
    ("trowexpandmul", "column_tmp", "a2a3", dict(src0=F32, src1=COLV, dst=F32, tmp="vec,2x64xf32"), set()),
    ("trowexpandmul", "column_tmp", "a2a3", dict(src0=F32, src1=COLV, dst=F32, tmp="vec,1x64xf32"), {"tmp.size"}),
    ("trowexpandmul", "column_tmp", "a5", dict(src0=F32, src1=COLV, dst=F32, tmp="vec,1x8xf32"), set()),
    ("trowexpandmul", "block_tmp", "a2a3", dict(src0=F32, src1="vec,16x8xf32", dst=F32, tmp=F32),
     {"profile.unsupported-mode"}),
    ("trowexpandmul", "block_tmp", "cpu", dict(src0=F32, src1="vec,16x8xf32", dst=F32, tmp=F32), set()),
    # expdif: float only; on A2/A3 the TEXP step needs a Vec destination
    ("trowexpandexpdif", "column", "cpu", dict(src0="vec,16x16xi32", src1="vec,16x1xi32,layout=dn",
                                                dst="vec,16x16xi32"), {"dtype.t"}),
    ("trowexpandexpdif", "column", "a2a3", dict(src0=F32, src1=COLV, dst="mat,16x16xf32"), {"loc.a2a3-dst-vec"}),
    ("trowexpandexpdif", "column", "a5", dict(src0=F32, src1=COLV, dst="mat,16x16xf32"), set()),
    # trowexpand: ND on the NPUs, matching rows, one source column on A5
    ("trowexpand", None, "a2a3", dict(src="vec,16x8xf32,valid=16x1", dst=F32), set()),
    ("trowexpand", None, "a2a3", dict(src=F32, dst=F32), set()),
    ("trowexpand", None, "a5", dict(src=F32, dst=F32), {"runtime.a5-src-one-col"}),
    ("trowexpand", None, "a2a3", dict(src=COLV, dst=F32), {"layout.nd"}),
    ("trowexpand", None, "cpu", dict(src=COLV, dst=F32), set()),
    ("trowexpand", None, "a5", dict(src="vec,16x8xf32,valid=12x1", dst=F32), {"runtime.src-valid-row"}),
    ("trowexpand", None, "cpu", dict(src="vec,16x8xf32,valid=12x1", dst=F32), {"runtime.cpu-src-covers"}),
    ("trowexpand", None, "a2a3", dict(src="vec,16x8xf32,valid=16x1", dst="vec,16x16xf32,valid=16x0"),
     {"runtime.a2a3-dst-nonempty"}),
    ("trowexpand", None, "a5", dict(src="vec,16x8xf32,valid=16x0", dst=F32), {"runtime.src-nonempty"}),
    ("trowexpand", None, "a5", dict(src="vec,16x8xi64,valid=16x1", dst="vec,16x16xi64"), {"dtype.t"}),
]


@pytest.mark.parametrize("op,mode,profile,descs,expected", ROW_CASES)
def test_row_validator(db, tiles, op, mode, profile, descs, expected):
    assert report(db, tiles, op, mode, profile, **descs) == expected


def test_row_modes_are_the_cpp_overloads(db):
    for name in ROW_OPS:
        op = db.op(name)
        assert [m.name for m in op.modes] == ["column", "block", "column_tmp", "block_tmp"]
        assert {m.cpp_name for m in op.modes} == {name.upper()}
        assert [len(m.cpp_args) for m in op.modes] == [3, 3, 4, 4]
        assert "column_tmp" in {m for row in op.dtypes["a2a3"].rows for m in row.modes}
        assert "block_tmp" not in {m for row in op.dtypes["a5"].rows for m in row.modes}
