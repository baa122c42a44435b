"""Row/column reductions and arg-reductions: executor results against NumPy written here, on partial
valid regions, and validator verdicts taken from the upstream pages (one legal, one illegal per rule)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ptospec.errors import InvocationError
from ptospec.executor import execute
from ptospec.validator import validate

NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "i8": np.int8, "u8": np.uint8,
      "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64}
SENTINEL = 55


def fill(shape, dtype):
    return np.full(shape, SENTINEL, dtype=NP[dtype])


def data(rng, shape, dtype, lo=-20, hi=20):
    """Small values (quarters for floats) so that float sums and products are exact in float64."""
    t = np.dtype(NP[dtype]) if dtype != "bf16" else None
    if t is not None and t.kind == "u":
        lo = 0
    raw = rng.integers(lo, hi + 1, size=shape)
    if dtype in ("f16", "bf16", "f32"):
        return (raw * 0.25).astype(NP[dtype])
    return raw.astype(NP[dtype])


def run(db, tiles, op, mode, profile, descs, inputs):
    return execute(db, op, mode, profile, tiles(**descs), inputs)


def check_outside_untouched(out, valid_rows, valid_cols):
    mask = np.ones(out.shape, dtype=bool)
    mask[:valid_rows, :valid_cols] = False
    assert (out[mask].astype(np.float64) == SENTINEL).all()


# --------------------------------------------------------------------------- row reductions


@pytest.mark.parametrize("profile,dtype", [("a2a3", "f32"), ("a5", "f16"), ("a2a3", "i16"), ("a5", "i64"),
                                           ("cpu", "bf16")])
def test_trowsum_same_type(db, tiles, profile, dtype):
    rng = np.random.default_rng(10)
    src = data(rng, (16, 64), dtype)
    shape = (16, 1) if profile != "a5" else (16, 32 // np.dtype(NP[dtype]).itemsize)
    layout = ",layout=dn" if shape[1] == 1 else ""
    descs = dict(src=f"vec,16x64x{dtype},valid=11x37", dst=f"vec,{shape[0]}x{shape[1]}x{dtype}{layout},valid=11x1",
                 tmp=f"vec,16x64x{dtype}")
    out = run(db, tiles, "trowsum", None, profile, descs, {"src": src, "dst": fill(shape, dtype)})["dst"]
    exact = [sum(float(v) for v in src[i, :37]) for i in range(11)]
    np.testing.assert_array_equal(out[:11, 0].astype(np.float64), np.array(exact))
    check_outside_untouched(out, 11, 1)


def test_trowsum_cpu_widening_has_no_intermediate_overflow(db, tiles):
    src = np.full((8, 32), 30000, dtype=np.int16)
    src[1] = -30000
    descs = dict(src="vec,8x32xi16,valid=3x20", dst="vec,8x8xi32,valid=3x1", tmp="vec,8x32xi16")
    out = run(db, tiles, "trowsum", None, "cpu", descs, {"src": src, "dst": fill((8, 8), "i32")})["dst"]
    assert list(out[:3, 0]) == [600000, -600000, 600000]  # would wrap if added in int16
    check_outside_untouched(out, 3, 1)


def test_trowsum_integer_sum_wraps_in_the_destination_type(db, tiles):
    src = np.full((16, 32), 30000, dtype=np.int16)
    descs = dict(src="vec,16x32xi16,valid=2x3", dst="vec,16x1xi16,layout=dn,valid=2x1", tmp="vec,16x32xi16")
    out = run(db, tiles, "trowsum", None, "a2a3", descs, {"src": src})["dst"]
    assert out[0, 0] == np.int16((90000 + 2**15) % 2**16 - 2**15)


def test_trowsum_f16_to_f32_adds_exactly(db, tiles):
    src = np.zeros((16, 16), dtype=np.float16)
    src[0, 0] = 2048
    src[0, 1:9] = 1  # each 1 would be lost when added to 2048 in half precision
    descs = dict(src="vec,16x16xf16,valid=1x9", dst="vec,16x8xf32,valid=1x1", tmp="vec,16x16xf16")
    out = run(db, tiles, "trowsum", None, "cpu", descs, {"src": src})["dst"]
    assert out[0, 0] == np.float32(2056)


def test_trowsum_validator(db, tiles):
    ok = dict(src="vec,16x16xf32", dst="vec,16x1xf32,layout=dn", tmp="vec,16x16xf32")
    assert validate(db, "trowsum", None, "a2a3", tiles(**ok)).ok
    widen = dict(src="vec,16x16xf16", dst="vec,16x8xf32,valid=16x1", tmp="vec,16x16xf16")
    assert validate(db, "trowsum", None, "cpu", tiles(**widen)).ok
    assert validate(db, "trowsum", None, "a2a3", tiles(**widen)).rule_ids == {"dtype.d"}
    rows = dict(src="vec,16x16xf32", dst="vec,8x8xf32,valid=8x1", tmp="vec,16x16xf32")
    assert "shape.cpu-rows-match" in validate(db, "trowsum", None, "cpu", tiles(**rows)).rule_ids
    bf16 = dict(src="vec,16x16xbf16", dst="vec,16x1xbf16,layout=dn", tmp="vec,16x16xbf16")
    assert validate(db, "trowsum", None, "a5", tiles(**bf16)).rule_ids == {"dtype.t"}
    empty = dict(src="vec,16x16xf32,valid=16x0", dst="vec,16x1xf32,layout=dn", tmp="vec,16x16xf32")
    assert validate(db, "trowsum", None, "a5", tiles(**empty)).rule_ids == {"runtime.src-cols"}


@pytest.mark.parametrize("profile,dtype", [("a2a3", "i32"), ("a5", "f32"), ("cpu", "u8")])
def test_trowprod(db, tiles, profile, dtype):
    rng = np.random.default_rng(11)
    src = data(rng, (8, 64), dtype, -3, 3)
    descs = dict(src=f"vec,8x64x{dtype},valid=5x23", dst=f"vec,8x64x{dtype},valid=5x1", tmp=f"vec,8x64x{dtype}")
    out = run(db, tiles, "trowprod", None, profile, descs, {"src": src, "dst": fill((8, 64), dtype)})["dst"]
    for i in range(5):
        acc = NP[dtype](1)
        with np.errstate(over="ignore"):
            for v in src[i, :23]:  # left to right in the element type, wrapping for integers
                acc = NP[dtype](acc * v)
        assert out[i, 0] == acc
    check_outside_untouched(out, 5, 1)


def test_trowprod_validator(db, tiles):
    ok = dict(src="vec,16x16xi16", dst="vec,16x1xi16,layout=dn", tmp="vec,1x16xi16")
    assert validate(db, "trowprod", None, "a2a3", tiles(**ok)).ok
    other_tmp = dict(ok, tmp="vec,1x8xf32")
    assert validate(db, "trowprod", None, "a2a3", tiles(**other_tmp)).rule_ids == {"dtype.u"}
    assert validate(db, "trowprod", None, "a5", tiles(**other_tmp)).ok
    u8 = dict(src="vec,16x32xu8", dst="vec,16x32xu8,valid=16x1", tmp="vec,16x32xu8")
    assert validate(db, "trowprod", None, "a5", tiles(**u8)).rule_ids == {"dtype.t"}
    assert validate(db, "trowprod", None, "cpu", tiles(**u8)).ok


@pytest.mark.parametrize("profile,dtype", [("a2a3", "f16"), ("a5", "u8"), ("cpu", "i64")])
def test_trowmin(db, tiles, profile, dtype):
    rng = np.random.default_rng(12)
    src = data(rng, (16, 64), dtype, -100, 100)
    width = 32 // np.dtype(NP[dtype]).itemsize
    descs = dict(src=f"vec,16x64x{dtype},valid=13x50", dst=f"vec,16x{width}x{dtype},valid=13x1",
                 tmp=f"vec,16x64x{dtype}")
    out = run(db, tiles, "trowmin", None, profile, descs, {"src": src, "dst": fill((16, width), dtype)})["dst"]
    expected = [min(src[i, :50].tolist()) for i in range(13)]
    assert out[:13, 0].tolist() == expected
    check_outside_untouched(out, 13, 1)


def test_trowmin_validator(db, tiles):
    ok = dict(src="vec,16x16xf32", dst="vec,16x1xf32,layout=dn", tmp="vec,16x16xf32")
    assert validate(db, "trowmin", None, "a5", tiles(**ok)).ok
    wide_dn = dict(ok, dst="vec,16x8xf32,layout=dn")
    assert validate(db, "trowmin", None, "a5", tiles(**wide_dn)).rule_ids == {"layout.dst-dn-one-col"}
    assert validate(db, "trowmin", None, "cpu", tiles(**wide_dn)).ok
    rows = dict(ok, src="vec,16x16xf32,valid=4x16")
    assert validate(db, "trowmin", None, "a2a3", tiles(**rows)).rule_ids == {"runtime.valid-row-match"}


def test_trowmax_a5_int8(db, tiles):
    rng = np.random.default_rng(13)
    src = data(rng, (8, 64), "i8", -128, 127)
    descs = dict(src="vec,8x64xi8,valid=7x64", dst="vec,8x32xi8,valid=7x1", tmp="vec,8x64xi8")
    out = run(db, tiles, "trowmax", None, "a5", descs, {"src": src, "dst": fill((8, 32), "i8")})["dst"]
    assert out[:7, 0].tolist() == [max(r) for r in src[:7].tolist()]
    check_outside_untouched(out, 7, 1)


# --------------------------------------------------------------------------- column reductions


@pytest.mark.parametrize("mode", ["default", "binary"])
@pytest.mark.parametrize("profile,dtype", [("a2a3", "i32"), ("a5", "u8"), ("cpu", "f32")])
def test_tcolsum(db, tiles, mode, profile, dtype):
    rng = np.random.default_rng(14)
    src = data(rng, (16, 64), dtype)
    descs = dict(src=f"vec,16x64x{dtype},valid=9x45", dst=f"vec,2x64x{dtype},valid=1x45")
    if mode == "binary":
        descs["tmp"] = f"vec,8x64x{dtype}"
    out = run(db, tiles, "tcolsum", mode, profile, descs, {"src": src, "dst": fill((2, 64), dtype)})["dst"]
    exact = np.array([sum(int(v) if dtype != "f32" else float(v) for v in src[:9, j]) for j in range(45)])
    if dtype == "u8":
        exact = exact % 256
    np.testing.assert_array_equal(out[0, :45].astype(np.float64), exact.astype(np.float64))
    check_outside_untouched(out, 1, 45)


def test_tcolsum_cpu_bf16_into_f32_and_empty_source(db, tiles):
    rng = np.random.default_rng(15)
    src = data(rng, (8, 32), "bf16")
    descs = dict(src="vec,8x32xbf16,valid=6x17", dst="vec,1x32xf32,valid=1x17")
    out = run(db, tiles, "tcolsum", "default", "cpu", descs, {"src": src, "dst": fill((1, 32), "f32")})["dst"]
    np.testing.assert_array_equal(out[0, :17], src[:6, :17].astype(np.float64).sum(axis=0).astype(np.float32))
    assert (out[0, 17:] == SENTINEL).all()
    empty = dict(src="vec,8x32xf32,valid=0x17", dst="vec,1x32xf32,valid=1x17")
    out = run(db, tiles, "tcolsum", "default", "a2a3", empty, {"src": np.ones((8, 32), np.float32),
                                                                "dst": fill((1, 32), "f32")})["dst"]
    assert (out == SENTINEL).all()


def test_tcolsum_validator(db, tiles):
    ok = dict(src="vec,16x16xf32", dst="vec,1x16xf32", tmp="vec,8x16xf32")
    assert validate(db, "tcolsum", "binary", "a2a3", tiles(**ok)).ok
    assert validate(db, "tcolsum", "binary", "a2a3", tiles(**dict(ok, tmp="vec,7x16xf32"))).rule_ids == {"tmp.rows"}
    short = dict(ok, src="vec,16x32xf32,valid=16x20", dst="vec,1x32xf32,valid=1x20")
    assert validate(db, "tcolsum", "binary", "a5", tiles(**short)).rule_ids == {"runtime.tmp-stride"}
    assert validate(db, "tcolsum", "binary", "a2a3", tiles(**dict(ok, tmp="vec,8x16xi32"))).rule_ids == {"dtype.u"}
    assert validate(db, "tcolsum", "binary", "cpu", tiles(**dict(ok, tmp="vec,8x16xi32"))).ok
    dn_tmp = dict(ok, tmp="vec,8x16xf32,layout=dn")
    assert validate(db, "tcolsum", "binary", "a2a3", tiles(**dn_tmp)).rule_ids == {"layout.tmp-nd"}
    ints = dict(src="vec,16x16xi32", dst="vec,1x16xi32")
    assert validate(db, "tcolsum", "default", "a2a3", tiles(**ints)).ok
    assert validate(db, "tcolsum", "default", "cpu", tiles(**ints)).rule_ids == {"dtype.t"}
    widen = dict(src="vec,16x16xf16", dst="vec,1x16xf32")
    assert validate(db, "tcolsum", "default", "cpu", tiles(**widen)).ok
    assert validate(db, "tcolsum", "default", "a5", tiles(**widen)).rule_ids == {"dtype.d"}


@pytest.mark.parametrize("profile,dtype", [("a2a3", "i16"), ("a5", "u32"), ("cpu", "u8")])
def test_tcolmax(db, tiles, profile, dtype):
    rng = np.random.default_rng(16)
    src = data(rng, (16, 64), dtype, -100, 100)
    descs = dict(src=f"vec,16x64x{dtype},valid=10x33", dst=f"vec,1x64x{dtype},valid=1x33")
    out = run(db, tiles, "tcolmax", None, profile, descs, {"src": src, "dst": fill((1, 64), dtype)})["dst"]
    assert out[0, :33].tolist() == [max(src[:10, j].tolist()) for j in range(33)]
    check_outside_untouched(out, 1, 33)


def test_tcolmax_validator(db, tiles):
    assert validate(db, "tcolmax", None, "cpu", tiles(src="vec,16x16xf16", dst="vec,1x16xf32")).ok
    assert validate(db, "tcolmax", None, "a2a3", tiles(src="vec,16x16xf16", dst="vec,1x16xf32")).rule_ids == {
        "dtype.d"}
    assert validate(db, "tcolmax", None, "cpu", tiles(src="vec,16x16xi32", dst="vec,1x16xi32")).rule_ids == {
        "dtype.t"}
    cols = validate(db, "tcolmax", None, "cpu", tiles(src="vec,16x16xf32", dst="vec,1x32xf32,valid=1x16"))
    assert cols.rule_ids == {"shape.cpu-cols-match"}
    assert validate(db, "tcolmax", None, "a5", tiles(src="vec,16x16xf32", dst="vec,1x16xf32,valid=1x8")).rule_ids \
        == {"runtime.valid-col-match"}


@pytest.mark.parametrize("profile,dtype", [("a2a3", "f32"), ("a5", "u16"), ("cpu", "i8")])
def test_tcolprod(db, tiles, profile, dtype):
    rng = np.random.default_rng(17)
    src = data(rng, (16, 64), dtype, -4, 4)
    descs = dict(src=f"vec,16x64x{dtype},valid=12x40", dst=f"vec,1x64x{dtype},valid=1x40")
    out = run(db, tiles, "tcolprod", None, profile, descs, {"src": src, "dst": fill((1, 64), dtype)})["dst"]
    for j in range(40):
        acc = NP[dtype](1)
        with np.errstate(over="ignore"):
            for i in range(12):
                acc = NP[dtype](acc * src[i, j])
        assert out[0, j] == acc, j
    check_outside_untouched(out, 1, 40)


def test_tcolprod_validator(db, tiles):
    assert validate(db, "tcolprod", None, "a5", tiles(src="vec,16x16xbf16", dst="vec,1x16xbf16")).ok
    assert validate(db, "tcolprod", None, "a2a3", tiles(src="vec,16x16xbf16", dst="vec,1x16xbf16")).rule_ids == {
        "dtype.t"}
    assert validate(db, "tcolprod", None, "a5", tiles(src="vec,16x32xi8", dst="vec,1x32xi8")).rule_ids == {"dtype.t"}
    assert validate(db, "tcolprod", None, "a5", tiles(src="mat,16x16xf32", dst="vec,1x16xf32")).rule_ids == {
        "loc.vec"}


def test_tcolmin_a2a3(db, tiles):
    rng = np.random.default_rng(18)
    src = data(rng, (16, 32), "i16", -300, 300)
    out = run(db, tiles, "tcolmin", None, "a2a3", dict(src="vec,16x32xi16,valid=16x31", dst="vec,1x32xi16,valid=1x31"),
              {"src": src, "dst": fill((1, 32), "i16")})["dst"]
    assert out[0, :31].tolist() == [min(src[:, j].tolist()) for j in range(31)]
    assert out[0, 31] == SENTINEL


# --------------------------------------------------------------------------- arg reductions


def first_extreme(values, op):
    """Index of the first maximum (op='max') or minimum of a Python list."""
    best = 0
    for k in range(1, len(values)):
        if (values[k] > values[best]) if op == "max" else (values[k] < values[best]):
            best = k
    return best


@pytest.mark.parametrize("profile,dtype,idx", [("a2a3", "u16", "u32"), ("a5", "i8", "i32"), ("cpu", "i64", "u32")])
def test_tcolargmin_index(db, tiles, profile, dtype, idx):
    rng = np.random.default_rng(19)
    src = data(rng, (16, 64), dtype, -3, 3)  # few distinct values: many ties
    descs = dict(src=f"vec,16x64x{dtype},valid=14x60", dstIdx=f"vec,1x64x{idx},valid=1x60",
                 tmp=f"vec,16x64x{dtype}")
    out = run(db, tiles, "tcolargmin", "index", profile, descs, {"src": src, "dstIdx": fill((1, 64), idx)})["dstIdx"]
    assert out[0, :60].tolist() == [first_extreme(src[:14, j].tolist(), "min") for j in range(60)]
    check_outside_untouched(out, 1, 60)


def test_tcolargmin_value_index(db, tiles):
    rng = np.random.default_rng(20)
    src = data(rng, (16, 64), "f16", -8, 8)
    descs = dict(src="vec,16x64xf16,valid=9x21", dstVal="vec,1x64xf16,valid=1x21", dstIdx="vec,1x64xi16,valid=1x21",
                 tmp="vec,1x64xf16")
    out = run(db, tiles, "tcolargmin", "value_index", "a2a3", descs,
              {"src": src, "dstVal": fill((1, 64), "f16"), "dstIdx": fill((1, 64), "i16")})
    idx = [first_extreme(src[:9, j].tolist(), "min") for j in range(21)]
    assert out["dstIdx"][0, :21].tolist() == idx
    assert out["dstVal"][0, :21].tolist() == [src[idx[j], j] for j in range(21)]
    check_outside_untouched(out["dstVal"], 1, 21)


def test_tcolargmin_validator(db, tiles):
    base = dict(src="vec,16x64xf16,valid=16x60", dstVal="vec,1x64xf16,valid=1x60", dstIdx="vec,1x64xu16,valid=1x60",
                tmp="vec,1x128xf16")  # the A2/A3 kernel touches 64 + 60 elements of tmp
    assert validate(db, "tcolargmin", "value_index", "a5", tiles(**base)).ok
    assert validate(db, "tcolargmin", "value_index", "cpu", tiles(**base)).rule_ids == {"dtype.i"}
    assert validate(db, "tcolargmin", "value_index", "a2a3", tiles(**dict(base, tmp="vec,1x128xu16"))).rule_ids == {
        "tmp.same-dtype"}
    two_rows = dict(base, dstIdx="vec,2x64xu16,valid=2x60")
    assert "runtime.dst-idx-one-row" in validate(db, "tcolargmin", "value_index", "a5", tiles(**two_rows)).rule_ids


@pytest.mark.parametrize("op", ["trowargmax", "trowargmin"])
@pytest.mark.parametrize("profile,dtype", [("a2a3", "f32"), ("a5", "f16"), ("cpu", "u16")])
def test_trowarg_index(db, tiles, op, profile, dtype):
    rng = np.random.default_rng(21)
    src = data(rng, (16, 64), dtype, -2, 2)  # ties in every row
    descs = dict(src=f"vec,16x64x{dtype},valid=15x41", dstIdx="vec,16x1xi32,layout=dn,valid=15x1",
                 tmp=f"vec,16x64x{dtype}")
    out = run(db, tiles, op, "index", profile, descs, {"src": src, "dstIdx": fill((16, 1), "i32")})["dstIdx"]
    want = "max" if op == "trowargmax" else "min"
    assert out[:15, 0].tolist() == [first_extreme(src[i, :41].tolist(), want) for i in range(15)]
    assert out[15, 0] == SENTINEL


@pytest.mark.parametrize("op", ["trowargmax", "trowargmin"])
def test_trowarg_value_index_nd_outputs(db, tiles, op):
    rng = np.random.default_rng(22)
    src = data(rng, (8, 32), "f32", -50, 50)
    descs = dict(src="vec,8x32xf32,valid=6x29", dstVal="vec,8x8xf32,valid=6x1", dstIdx="vec,8x8xu32,valid=6x1",
                 tmp="vec,8x8xf32")
    out = run(db, tiles, op, "value_index", "a5", descs,
              {"src": src, "dstVal": fill((8, 8), "f32"), "dstIdx": fill((8, 8), "u32")})
    pick = max if op == "trowargmax" else min
    assert out["dstVal"][:6, 0].tolist() == [pick(src[i, :29].tolist()) for i in range(6)]
    want = "max" if op == "trowargmax" else "min"
    assert out["dstIdx"][:6, 0].tolist() == [first_extreme(src[i, :29].tolist(), want) for i in range(6)]
    check_outside_untouched(out["dstIdx"], 6, 1)
    check_outside_untouched(out["dstVal"], 6, 1)


@pytest.mark.parametrize("op", ["trowargmax", "trowargmin"])
def test_trowarg_validator(db, tiles, op):
    ok = dict(src="vec,16x16xf32", dstIdx="vec,16x1xu32,layout=dn", tmp="vec,16x16xf32")
    assert validate(db, op, "index", "a2a3", tiles(**ok)).ok
    nd2 = dict(ok, dstIdx="vec,16x8xu32,valid=16x2")
    assert validate(db, op, "index", "a2a3", tiles(**nd2)).rule_ids == {"runtime.dst-idx-nd-one-col"}
    dn8 = dict(ok, dstIdx="vec,16x8xu32,layout=dn,valid=16x1")
    assert validate(db, op, "index", "a5", tiles(**dn8)).rule_ids == {"layout.dst-idx-dn-one-col"}
    assert validate(db, op, "index", "cpu", tiles(**dn8)).ok
    i16 = dict(ok, dstIdx="vec,16x1xi16,layout=dn")
    assert validate(db, op, "index", "a5", tiles(**i16)).rule_ids == {"dtype.i"}
    assert validate(db, op, "index", "cpu", tiles(**dict(ok, src="vec,16x16xi32"))).ok
    assert validate(db, op, "index", "a2a3", tiles(**dict(ok, src="vec,16x16xi32"))).rule_ids == {"dtype.t"}
    # a2a3 tmp: 130 half columns exceed one 128-element repeat -> stage 1 needs (ceil(4/16) + ceil(2/16)) * 16 = 32
    long = dict(src="vec,16x256xf16,valid=16x130", dstIdx="vec,16x1xu32,layout=dn", tmp="vec,16x16xf16")
    assert validate(db, op, "index", "a2a3", tiles(**long)).rule_ids == {"tmp.stage1-size"}
    assert validate(db, op, "index", "a2a3", tiles(**dict(long, tmp="vec,16x32xf16"))).ok
    assert validate(db, op, "index", "a5", tiles(**long)).ok
    # value + index within one repeat: two elements per row
    vi = dict(src="vec,16x16xf32", dstVal="vec,16x1xf32,layout=dn", dstIdx="vec,16x1xi32,layout=dn",
              tmp="vec,8x1xf32,layout=dn")
    assert validate(db, op, "value_index", "a2a3", tiles(**vi)).rule_ids == {"tmp.one-repeat-pairs"}
    assert validate(db, op, "value_index", "a2a3", tiles(**dict(vi, tmp="vec,32x1xf32,layout=dn"))).ok
    rows = dict(vi, tmp="vec,32x1xf32,layout=dn", dstVal="vec,16x1xf32,layout=dn,valid=15x1")
    assert validate(db, op, "value_index", "cpu", tiles(**rows)).rule_ids == {"runtime.dst-val-rows"}


def test_refuses_illegal_reductions(db, tiles):
    with pytest.raises(InvocationError, match=r"dtype\.t"):
        execute(db, "tcolsum", "default", "cpu", tiles(src="vec,16x16xi16", dst="vec,1x16xi16"),
                {"src": np.zeros((16, 16), np.int16)})
