"""The fix-pipe's way out of the accumulator: the quantisation word's decoding, rounding, clamping and ReLU
order (TSTORE acc_quant / acc_fp, TMOV_FP, TEXTRACT_FP, TINSERT_FP), against NumPy written out here."""

from __future__ import annotations

import numpy as np

from ptospec.conformance.data import make_inputs
from ptospec.executor import execute
from ptospec.validator import validate

ACC = "acc, 16x16x{t}, valid=1x8, blayout=col_major, slayout=row_major, fractal=1024"


def word(scale: float, offset: int = 0, signed: bool = True) -> np.uint64:
    """A quantisation word: the f32 scale's bits, the offset at bit 37, the signed flag at bit 46."""
    bits = int(np.float32(scale).view(np.uint32))
    return np.uint64(bits | offset << 37 | int(signed) << 46)


def _acc(values, dtype) -> np.ndarray:
    src = np.zeros((16, 16), dtype)
    src[0, : len(values)] = values
    return src


def test_scalar_word_scales_adds_the_offset_rounds_ties_to_even_and_clamps(db, tiles):
    t = tiles(src=ACC.format(t="f32"), dst="gm, 1x8xi8", preQuantScalar="u64", reluMode="NoRelu",
              atomicType="AtomicNone")
    values = np.array([2, 3, 5, 7, 1000, -1000, -3, -6], np.float32)
    assert validate(db, "tstore", "acc_quant", "a2a3", t).ok
    out = execute(db, "tstore", "acc_quant", "a2a3", t,
                  {"src": _acc(values, np.float32), "preQuantScalar": word(0.5, 1), "dst": np.zeros(8, np.int8)})
    want = np.clip(np.rint(values * np.float32(0.5) + 1), -128, 127).astype(np.int8)  # 2.5 -> 2, 3.5 -> 4
    np.testing.assert_array_equal(out["dst"], want)


def test_an_unsigned_word_clamps_to_0_through_255(db, tiles):
    t = tiles(src=ACC.format(t="i32"), dst="gm, 1x8xu8", preQuantScalar="u64", reluMode="NoRelu",
              atomicType="AtomicNone")
    values = np.array([-40, -1, 0, 1, 100, 255, 600, 9], np.int32)
    out = execute(db, "tstore", "acc_quant", "a2a3", t,
                  {"src": _acc(values, np.int32), "preQuantScalar": word(2.0, 0, signed=False),
                   "dst": np.zeros(8, np.uint8)})
    np.testing.assert_array_equal(out["dst"], np.clip(values * 2, 0, 255).astype(np.uint8))


def test_a_vector_word_keeps_ten_mantissa_bits_and_quantises_its_own_column(db, tiles):
    t = tiles(src=ACC.format(t="i32"), dst="gm, 1x8xf16", fp="scaling, 1x8xu64", reluMode="NoRelu",
              atomicType="AtomicNone")
    scales = np.array([1 + 2.0**-12, 1 + 2.0**-10, 0.25, -3, 1, 1, 1, 100], np.float32)
    fp = np.array([[word(s) for s in scales]], np.uint64)
    values = np.array([4097, 4097, 7, 5, -2, 0, 1, 70000], np.int32)
    out = execute(db, "tstore", "acc_fp", "a5", t,
                  {"src": _acc(values, np.int32), "fp": fp, "dst": np.zeros(8, np.float16)})
    kept = (scales.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)  # 2^-12 is dropped, 2^-10 kept
    assert kept[0] == 1.0 and kept[1] == scales[1]
    want = np.clip(values.astype(np.float32) * kept, -65504, 65504).astype(np.float16)  # 7e6 clamps to 65504
    np.testing.assert_array_equal(out["dst"], want)


def test_relu_comes_before_a_negative_scale(db, tiles):
    t = tiles(src=ACC.format(t="f32"), dst="gm, 1x8xi8", preQuantScalar="u64", reluMode="NormalRelu",
              atomicType="AtomicNone")
    values = np.array([-4, 4, -1, 1, 0, 10, -10, 3], np.float32)
    out = execute(db, "tstore", "acc_quant", "a2a3", t,
                  {"src": _acc(values, np.float32), "preQuantScalar": word(-0.5), "dst": np.zeros(8, np.int8)})
    np.testing.assert_array_equal(out["dst"], np.rint(np.maximum(values, 0) * -0.5).astype(np.int8))


def test_textract_fp_takes_the_words_from_index_col_on(db, tiles):
    t = tiles(src="acc, 32x64xi32, blayout=col_major, slayout=row_major, fractal=1024", fp="scaling, 1x64xu64",
              indexRow="u16", indexCol="u16", dst="mat, 16x32xi8, blayout=col_major, slayout=row_major",
              reluMode="NoRelu")
    src = (np.arange(32 * 64, dtype=np.int32).reshape(32, 64) % 23) - 11
    fp = np.array([[word(1.0 if c < 32 else 2.0) for c in range(64)]], np.uint64)
    out = execute(db, "textract", "acc_fp", "a2a3", t,
                  {"src": src, "fp": fp, "indexRow": 16, "indexCol": 32, "dst": np.zeros((16, 32), np.int8)})
    np.testing.assert_array_equal(out["dst"], (src[16:32, 32:64] * 2).astype(np.int8))


def test_generated_words_are_sixteenths_with_the_destination_s_sign_flag(db, tiles):
    op = db.op("tstore")
    for dtype, signed in (("i8", 1), ("u8", 0)):
        t = tiles(src="acc, 16x16xi32, blayout=col_major, slayout=row_major, fractal=1024", dst=f"gm, 16x16x{dtype}",
                  fp="scaling, 1x16xu64", reluMode="NoRelu", atomicType="AtomicNone")
        words = make_inputs(db, op, op.mode("acc_fp"), t, 3, "random")["fp"][0]
        scale = (words & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
        assert ((words >> np.uint64(46)) & np.uint64(1) == signed).all()
        assert ((words >> np.uint64(37)) & np.uint64(0x1FF) <= 2).all()
        sixteenths = np.abs(scale) * 16
        assert (sixteenths == np.round(sixteenths)).all() and sixteenths.min() >= 1 and sixteenths.max() <= 13


def test_an_fp_tile_of_any_element_type_holds_its_words_in_its_bytes(db, tiles):
    """The fix-pipe reads 64-bit words from the fp tile's bytes: an f16 tile of four times the columns holding
    the same bytes quantises exactly as the u64 tile does (TMOV_FP on A5)."""
    scales = np.array([0.5, 2, -1, 0.25, 3, 1, -2, 4], np.float32)
    words = np.array([[word(s) for s in scales]], np.uint64)
    src = np.zeros((16, 32), np.int32)
    src[:, :8] = np.arange(16 * 8, dtype=np.int32).reshape(16, 8) - 60
    outs = []
    for fp_type, fp in (("u64", words), ("f16", words.view(np.float16).reshape(1, 32))):
        t = tiles(src="acc, 16x32xi32, valid=16x8, blayout=col_major, slayout=row_major, fractal=1024",
                  dst="vec, 16x32xi8, valid=16x8", fp=f"scaling, 1x{fp.shape[1]}x{fp_type}", reluMode="NoRelu")
        assert validate(db, "tmov", "acc_fp", "a5", t).ok
        outs.append(execute(db, "tmov", "acc_fp", "a5", t, {"src": src, "fp": fp, "dst": np.zeros((16, 32), np.int8)}))
    np.testing.assert_array_equal(outs[0]["dst"], outs[1]["dst"])
    np.testing.assert_array_equal(outs[0]["dst"][:, :8], np.clip(np.rint(src[:, :8] * scales), -128, 127))


def test_an_fp_tile_too_small_for_the_words_is_fp_reach_with_the_bytes(db, tiles):
    t = tiles(src="acc, 16x32xf32, blayout=col_major, slayout=row_major, fractal=1024",
              dst="vec, 16x32xi8", fp="scaling, 1x32xf16", reluMode="NoRelu")
    report = validate(db, "tmov", "acc_fp", "a5", t)
    assert set(report.rule_ids) == {"fp.reach"}
    assert "need=256, have=64" in report.violations[0].message


def test_textract_fp_finds_its_words_from_the_128_byte_unit_holding_index_col(db, tiles):
    """SetFPC: FPC holds (fp + indexCol x sizeof(element)) in 128-byte units. With an f16 fp tile, indexCol 16
    is 32 bytes in: the words start at byte 0 on the NPUs (not at word 4)."""
    t = tiles(src="acc, 32x64xi32, blayout=col_major, slayout=row_major, fractal=1024", fp="scaling, 1x256xf16",
              indexRow="u16", indexCol="u16", dst="mat, 16x32xi8, blayout=col_major, slayout=row_major",
              reluMode="NoRelu")
    src = (np.arange(32 * 64, dtype=np.int32).reshape(32, 64) % 23) - 11
    words = np.array([[word(1.0 if c < 16 else 2.0) for c in range(64)]], np.uint64)
    out = execute(db, "textract", "acc_fp", "a2a3", t,
                  {"src": src, "fp": words.view(np.float16).reshape(1, 256), "indexRow": 0, "indexCol": 16,
                   "dst": np.zeros((16, 32), np.int8)})
    window = src[:16, 16:48]
    want = np.concatenate([window[:, :16], window[:, 16:] * 2], axis=1)  # words 0-15 scale 1, 16-31 scale 2
    np.testing.assert_array_equal(out["dst"], want.astype(np.int8))


def test_generated_fp_tiles_of_other_types_hold_the_words_in_their_bytes(db, tiles):
    op = db.op("tstore")
    t = tiles(src="acc, 16x16xi32, blayout=col_major, slayout=row_major, fractal=1024", dst="gm, 16x16xi8",
              fp="scaling, 1x64xf16", reluMode="NoRelu", atomicType="AtomicNone")
    words = make_inputs(db, op, op.mode("acc_fp"), t, 3, "random")["fp"][0].view(np.uint64)
    assert words.size == 16 and ((words >> np.uint64(46)) & np.uint64(1) == 1).all()
