"""Executor results against NumPy written here, independently of the engine."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ptospec.errors import InvocationError
from ptospec.executor import execute

NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "i8": np.int8, "u8": np.uint8,
      "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32}


def rand(rng, shape, dtype):
    t = NP[dtype]
    if np.issubdtype(np.dtype(t), np.integer):
        info = np.iinfo(t)
        return rng.integers(info.min, int(info.max) + 1, size=shape, dtype=np.int64).astype(t)
    return rng.standard_normal(shape).astype(np.float32).astype(t)


SENTINEL = 77


def fill(shape, dtype):
    return np.full(shape, SENTINEL, dtype=NP[dtype])


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "i8", "u8", "i16", "u16", "i32", "u32"])
def test_tcolmin(db, tiles, dtype):
    rng = np.random.default_rng(1)
    cols = 64
    src = rand(rng, (16, cols), dtype)
    t = tiles(src=f"vec,16x{cols}x{dtype},valid=11x37", dst=f"vec,1x{cols}x{dtype},valid=1x37")
    out = execute(db, "tcolmin", None, "cpu", t, {"src": src, "dst": fill((1, cols), dtype)})["dst"]
    expected = fill((1, cols), dtype)
    expected[0, :37] = src[:11, :37].min(axis=0)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", ["f16", "f32", "i16", "u16", "i32", "u32"])
def test_tcolargmax_index_first_on_ties(db, tiles, dtype):
    rng = np.random.default_rng(2)
    src = rand(rng, (16, 64), dtype)
    src[3, :] = src[9, :] = src.max()  # a tie for the maximum in every column
    t = tiles(src=f"vec,16x64x{dtype},valid=13x50", dstIdx="vec,1x64xi32,valid=1x50", tmp=f"vec,16x64x{dtype}")
    out = execute(db, "tcolargmax", "index", "a5", t, {"src": src, "dstIdx": fill((1, 64), "i32")})
    expected = fill((1, 64), "i32")
    window = src[:13, :50]
    for j in range(50):  # independent: an explicit scan that keeps the first maximum
        best = 0
        for i in range(1, 13):
            if window[i, j] > window[best, j]:
                best = i
        expected[0, j] = best
    np.testing.assert_array_equal(out["dstIdx"], expected)
    assert (out["dstIdx"][0, :50] == 3).all()


def test_tcolargmax_value_index(db, tiles):
    rng = np.random.default_rng(3)
    src = rand(rng, (16, 64), "f16")
    t = tiles(src="vec,16x64xf16,valid=5x33", dstVal="vec,1x64xf16,valid=1x33", dstIdx="vec,1x64xu16,valid=1x33",
              tmp="vec,1x96xf16")  # the kernel touches 48 + 33 elements
    out = execute(db, "tcolargmax", "value_index", "a2a3", t,
                  {"src": src, "dstVal": fill((1, 64), "f16"), "dstIdx": fill((1, 64), "u16")})
    np.testing.assert_array_equal(out["dstVal"][0, :33], src[:5, :33].max(axis=0))
    np.testing.assert_array_equal(out["dstIdx"][0, :33], np.argmax(src[:5, :33], axis=0).astype(np.uint16))
    assert (out["dstVal"][0, 33:] == SENTINEL).all() and (out["dstIdx"][0, 33:] == SENTINEL).all()


@pytest.mark.parametrize("dtype", ["f16", "f32", "i16", "i32"])
def test_trowmax_nd_and_dn(db, tiles, dtype):
    rng = np.random.default_rng(4)
    src = rand(rng, (16, 64), dtype)
    for dst_desc, shape in ((f"vec,16x1x{dtype},layout=dn,valid=9x1", (16, 1)),
                            (f"vec,16x{32 // np.dtype(NP[dtype]).itemsize}x{dtype},valid=9x1",
                             (16, 32 // np.dtype(NP[dtype]).itemsize))):
        t = tiles(src=f"vec,16x64x{dtype},valid=9x7", dst=dst_desc, tmp=f"vec,16x64x{dtype}")
        out = execute(db, "trowmax", None, "a2a3", t, {"src": src, "dst": fill(shape, dtype)})["dst"]
        expected = fill(shape, dtype)
        expected[:9, 0] = src[:9, :7].max(axis=1)
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_tcolexpandmax(db, tiles, dtype):
    rng = np.random.default_rng(5)
    src0, src1 = rand(rng, (16, 32), dtype), rand(rng, (1, 32), dtype)
    t = tiles(src0=f"vec,16x32x{dtype}", src1=f"vec,1x32x{dtype}", dst=f"vec,16x32x{dtype},valid=6x19")
    out = execute(db, "tcolexpandmax", None, "a5", t, {"src0": src0, "src1": src1, "dst": fill((16, 32), dtype)})
    expected = fill((16, 32), dtype)
    expected[:6, :19] = np.maximum(src0[:6, :19], src1[0, :19])
    np.testing.assert_array_equal(out["dst"], expected)


@pytest.mark.parametrize("dtype", ["f16", "f32", "i8", "u8", "i16", "u16", "i32", "u32"])
def test_tmax(db, tiles, dtype):
    rng = np.random.default_rng(6)
    a, b = rand(rng, (8, 64), dtype), rand(rng, (8, 64), dtype)
    desc = f"vec,8x64x{dtype},valid=1x45"
    out = execute(db, "tmax", None, "a5", tiles(src0=desc, src1=desc, dst=desc),
                  {"src0": a, "src1": b, "dst": fill((8, 64), dtype)})["dst"]
    expected = fill((8, 64), dtype)
    expected[:1, :45] = np.where(a[:1, :45] > b[:1, :45], a[:1, :45], b[:1, :45])
    np.testing.assert_array_equal(out, expected)


def test_tmax_bf16_on_cpu(db, tiles):
    rng = np.random.default_rng(7)
    a, b = rand(rng, (16, 16), "bf16"), rand(rng, (16, 16), "bf16")
    desc = "vec,16x16xbf16,valid=15x16"
    out = execute(db, "tmax", None, "cpu", tiles(src0=desc, src1=desc, dst=desc), {"src0": a, "src1": b})["dst"]
    np.testing.assert_array_equal(out[:15].astype(np.float32),
                                  np.maximum(a[:15].astype(np.float32), b[:15].astype(np.float32)))
    assert (out[15] == 0).all()


def test_refuses_illegal_invocations(db, tiles):
    t = tiles(src="vec,16x32xu8", dst="vec,1x32xu8")
    with pytest.raises(InvocationError, match=r"dtype\.t"):
        execute(db, "tcolmin", None, "a2a3", t, {"src": np.zeros((16, 32), np.uint8)})


def test_rejects_mismatched_arrays(db, tiles):
    from ptospec.errors import TileError

    t = tiles(src="vec,16x16xf32", dst="vec,1x16xf32")
    with pytest.raises(TileError, match="shape"):
        execute(db, "tcolmin", None, "a2a3", t, {"src": np.zeros((8, 16), np.float32)})
    with pytest.raises(InvocationError, match="missing input"):
        execute(db, "tcolmin", None, "a2a3", t, {})


def test_empty_region_writes_nothing(db, tiles):
    t = tiles(src="vec,16x16xf32,valid=0x16", dst="vec,1x16xf32")
    out = execute(db, "tcolmin", None, "cpu", t, {"src": np.ones((16, 16), np.float32),
                                                  "dst": np.full((1, 16), 5, np.float32)})
    assert (out["dst"] == 5).all()
