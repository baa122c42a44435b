"""TCMP, TCMPS, TSEL, TSELS and TCVT against NumPy written here, independently of the engine."""

from __future__ import annotations

import operator

import numpy as np
import pytest

from ptospec.asm.types import parse_descriptor
from ptospec.executor import execute
from ptospec.validator import validate

RELATIONS = {"EQ": operator.eq, "NE": operator.ne, "LT": operator.lt, "LE": operator.le, "GT": operator.gt,
             "GE": operator.ge}


def tiles(db, **descs):
    return {name: parse_descriptor(text, db.isa) for name, text in descs.items()}


def pack_rows(bits: np.ndarray, word_bits: int, words: int) -> np.ndarray:
    """Pack a boolean (rows, n) array into `words` words per row, least significant bit first."""
    out = np.zeros((bits.shape[0], words), dtype=np.uint64)
    for r in range(bits.shape[0]):
        for c in range(bits.shape[1]):
            if bits[r, c]:
                out[r, c // word_bits] |= np.uint64(1) << np.uint64(c % word_bits)
    return out


@pytest.mark.parametrize("relation", sorted(RELATIONS))
@pytest.mark.parametrize(("mask_type", "word"), [("u8", 8), ("u32", 32)])
def test_tcmp_packs_comparisons(db, relation, mask_type, word):
    rng = np.random.default_rng(7)
    rows, cols, vr, vc = 6, 32, 5, 19
    a = rng.integers(-3, 4, (rows, cols)).astype(np.float16)
    b = rng.integers(-3, 4, (rows, cols)).astype(np.float16)
    words = -(-vc // word)
    mask_cols = 64 if mask_type == "u8" else 8
    t = tiles(db, src0=f"vec, {rows}x{cols}xf16, valid={vr}x{vc}", src1=f"vec, {rows}x{cols}xf16, valid={vr}x{vc}",
              dst=f"vec, {rows}x{mask_cols}x{mask_type}, valid={vr}x{words}", cmpMode=relation)
    initial = np.full((rows, mask_cols), 0x5A, dtype=np.dtype(mask_type.replace("u", "uint")))
    out = execute(db, "tcmp", None, "cpu", t, {"src0": a, "src1": b, "dst": initial})["dst"]
    expected = initial.copy()
    packed = pack_rows(RELATIONS[relation](a[:vr, :vc], b[:vr, :vc]), word, words)
    expected[:vr, :words] = packed.astype(expected.dtype)
    np.testing.assert_array_equal(out, expected)


def test_tcmp_i32_ordered_relation_is_illegal_on_a2a3_only(db):
    t = tiles(db, src0="vec, 8x16xi32", src1="vec, 8x16xi32", dst="vec, 8x32xu8, valid=8x2", cmpMode="LT")
    assert "cmp.i32-eq-ne" in validate(db, "tcmp", None, "a2a3", t).rule_ids
    assert validate(db, "tcmp", None, "cpu", t).ok
    t["cmpMode"] = parse_descriptor("NE", db.isa)
    assert validate(db, "tcmp", None, "a2a3", t).ok


def test_tcmp_mask_too_narrow_is_rejected(db):
    t = tiles(db, src0="vec, 8x64xf32", src1="vec, 8x64xf32", dst="vec, 8x32xu8, valid=8x4", cmpMode="EQ")
    assert "mask.cols" in validate(db, "tcmp", None, "a2a3", t).rule_ids  # 64 columns need 8 bytes


def test_tcmps_scalar_and_tile_forms(db):
    rng = np.random.default_rng(3)
    a = rng.integers(-5, 6, (4, 16)).astype(np.int32)
    t = tiles(db, src0="vec, 4x16xi32, valid=4x13", src1="i32", dst="vec, 4x32xu8, valid=4x2", cmpMode="GE")
    expected = np.zeros((4, 32), np.uint8)
    expected[:, :2] = pack_rows(a[:, :13] >= 1, 8, 2).astype(np.uint8)
    # a u8 mask holds the same bits on a5 (upstream's own A5 test runs it) as on the simulator
    assert validate(db, "tcmps", "scalar", "a5", t).ok
    for profile in ("a5", "cpu"):
        out = execute(db, "tcmps", "scalar", profile, t, {"src0": a, "src1": 1, "dst": np.zeros((4, 32), np.uint8)})
        np.testing.assert_array_equal(out["dst"], expected)
    other = np.full((1, 8), 2, np.int32)
    t_tile = tiles(db, src0="vec, 4x16xi32, valid=4x13", src1="vec, 1x8xi32, valid=1x1", dst="vec, 4x32xu8, valid=4x2",
                   cmpMode="LT")
    out = execute(db, "tcmps", "tile", "cpu", t_tile, {"src0": a, "src1": other, "dst": np.zeros((4, 32), np.uint8)})
    expected[:, :2] = pack_rows(a[:, :13] < 2, 8, 2).astype(np.uint8)
    np.testing.assert_array_equal(out["dst"], expected)


def test_tsel_follows_the_mask_bits(db):
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2, (6, 20)).astype(bool)
    mask = pack_rows(bits, 8, 32).astype(np.uint8)
    a = rng.standard_normal((6, 32)).astype(np.float32)
    b = rng.standard_normal((6, 32)).astype(np.float32)
    t = tiles(db, dst="vec, 6x32xf32, valid=6x20", selMask="vec, 6x32xu8, valid=6x3", src0="vec, 6x32xf32",
              src1="vec, 6x32xf32", tmp="vec, 1x16xu32")
    initial = np.full((6, 32), -7.0, np.float32)
    out = execute(db, "tsel", None, "a2a3", t, {"selMask": mask, "src0": a, "src1": b, "dst": initial})["dst"]
    expected = initial.copy()
    expected[:, :20] = np.where(bits, a[:, :20], b[:, :20])
    np.testing.assert_array_equal(out, expected)


def test_tsels_u16_mask_uses_16_bit_words(db):
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 2, (3, 24)).astype(bool)
    mask = pack_rows(bits, 16, 16).astype(np.uint16)
    src = rng.integers(-100, 100, (3, 32)).astype(np.int16)
    t = tiles(db, dst="vec, 3x32xi16, valid=3x24", mask="vec, 3x16xu16, valid=3x2", src="vec, 3x32xi16, valid=3x24",
              tmp="vec, 1x16xi16", scalar="i16")
    out = execute(db, "tsels", None, "cpu", t, {"mask": mask, "src": src, "scalar": 9,
                                               "dst": np.zeros((3, 32), np.int16)})["dst"]
    expected = np.zeros((3, 32), np.int16)
    expected[:, :24] = np.where(bits, src[:, :24], np.int16(9))
    np.testing.assert_array_equal(out, expected)


def _round(x: float, mode: str) -> float:
    import math

    if mode == "CAST_RINT":
        return float(round(x))  # Python rounds half to even
    if mode == "CAST_ROUND":
        return math.copysign(math.floor(abs(x) + 0.5), x)
    if mode == "CAST_FLOOR":
        return float(math.floor(x))
    if mode == "CAST_CEIL":
        return float(math.ceil(x))
    if mode == "CAST_ODD":
        low = math.floor(x)
        if x - low != 0.5:
            return float(round(x))
        return float(low if low % 2 else low + 1)
    return float(math.trunc(x))


@pytest.mark.parametrize("mode", ["CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC", "CAST_ODD",
                                  "CAST_NONE"])
@pytest.mark.parametrize("sat", ["ON", "OFF"])
def test_tcvt_float_to_int8(db, mode, sat):
    values = np.array([[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6, 300.0, -300.0, 127.6, -128.7, 0.0, 3.5, -3.5,
                        1000.25]], dtype=np.float32)
    t = tiles(db, src="vec, 1x16xf32", dst="vec, 1x32xi8, valid=1x16", rmode=mode, satMode=sat)
    out = execute(db, "tcvt", "round_sat", "cpu", t, {"src": values})["dst"][0, :16]
    for got, x in zip(out, values[0], strict=True):
        r = int(_round(float(x), mode))
        want = max(-128, min(127, r)) if sat == "ON" else ((r + 128) % 256) - 128
        assert got == want, (mode, sat, x, got, want)


def test_tcvt_default_saturation_wraps_only_the_narrowing_pairs(db):
    wide = np.array([[70000, -70000] + [0] * 14], dtype=np.int32)
    narrow = tiles(db, src="vec, 1x16xi32", dst="vec, 1x16xi16", rmode="CAST_NONE")
    out = execute(db, "tcvt", "round", "a2a3", narrow, {"src": wide})["dst"][0, :2]
    assert list(out) == [70000 - 65536, -70000 + 65536]  # i32 -> i16 wraps by default
    floats = np.array([[1e6] + [0.0] * 15], dtype=np.float32)
    to_i32 = tiles(db, src="vec, 1x16xf32", dst="vec, 1x16xi32", rmode="CAST_RINT")
    assert execute(db, "tcvt", "round", "a2a3", to_i32, {"src": floats})["dst"][0, 0] == 1_000_000
    to_i16 = tiles(db, src="vec, 1x16xf32", dst="vec, 1x16xi16", rmode="CAST_RINT")
    wrapped = (1_000_000 + 32768) % 65536 - 32768
    assert execute(db, "tcvt", "round", "a2a3", to_i16, {"src": floats})["dst"][0, 0] == wrapped


def test_tcvt_pairs_and_tmp_modes_per_profile(db):
    pair = tiles(db, src="vec, 16x16xf32", dst="vec, 16x16xu16", rmode="CAST_RINT")
    assert "dtype.u" in validate(db, "tcvt", "round", "a2a3", pair).rule_ids  # f32 -> u16 is not listed
    assert validate(db, "tcvt", "round", "cpu", pair).ok
    with_tmp = tiles(db, src="vec, 16x16xf32", dst="vec, 16x16xf16", tmp="vec, 1x64xi32", rmode="CAST_RINT")
    assert validate(db, "tcvt", "tmp_round", "a2a3", with_tmp).ok
    assert "profile.unsupported-mode" in validate(db, "tcvt", "tmp_round", "cpu", with_tmp).rule_ids


def test_tcvt_tmp_size_for_the_non_saturating_path(db):
    # f32 -> i16 without saturation needs max(256, 32 * ((min(R, 255) - 1) * SS / 8 + ceil((C % 64) / 8))) bytes
    small = tiles(db, src="vec, 16x16xf32", dst="vec, 16x16xi16", tmp="vec, 1x64xi32", rmode="CAST_RINT")
    assert "tmp.size" in validate(db, "tcvt", "tmp_round", "a2a3", small).rule_ids  # 256 bytes < 1024 needed
    enough = tiles(db, src="vec, 16x16xf32", dst="vec, 16x16xi16", tmp="vec, 1x256xi32", rmode="CAST_RINT")
    assert validate(db, "tcvt", "tmp_round", "a2a3", enough).ok
