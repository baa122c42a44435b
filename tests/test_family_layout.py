"""Layout and rearrangement (TMOV, TTRANS, TCONCAT, TEXTRACT, TINSERT): results against NumPy written here,
and the spec-language pieces they brought: run-time offsets typed ``index`` in assembly, windows read
outside a source's valid region (``reads: tile``) or written into part of a destination, the comparison of
unwritten elements, and cases whose valid regions keep their proportions."""

from __future__ import annotations

import numpy as np
import pytest

from ptospec.asm.forms import parse_line, print_form
from ptospec.conformance import cases as C
from ptospec.conformance.compare import compare_output
from ptospec.conformance.data import make_inputs
from ptospec.errors import ExprError, PtospecError
from ptospec.executor import execute
from ptospec.expr.parser import parse_statement
from ptospec.program.api import check_program, read_program, run_program
from ptospec.validator import validate

SENTINEL = np.float32(-7.0)


def _src(shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


@pytest.mark.parametrize("row, col", [(0, 0), (5, 8), (16, 16)])
def test_textract_reads_the_window_even_past_the_valid_region(db, tiles, row, col):
    ops = tiles(src="vec, 32x32xf32, valid=20x20", dst="vec, 16x16xf32, valid=16x8", indexRow="u16", indexCol="u16")
    src = _src((32, 32))
    out = execute(db, "textract", None, "a2a3", ops, {"src": src, "indexRow": row, "indexCol": col})["dst"]
    np.testing.assert_array_equal(out[:16, :8], src[row:row + 16, col:col + 8])
    assert not out[:, 8:].any()  # outside the destination's valid region: untouched (zeros)


def test_textract_window_past_the_tile_is_an_error(db, tiles):
    ops = tiles(src="vec, 32x32xf32", dst="vec, 16x16xf32", indexRow="u16", indexCol="u16")
    with pytest.raises(ExprError) as err:
        execute(db, "textract", None, "cpu", ops, {"src": _src((32, 32)), "indexRow": 17, "indexCol": 0})
    assert err.value.rule == "exec.read-outside-valid"


def test_tinsert_writes_only_its_window(db, tiles):
    ops = tiles(src="vec, 16x16xf32, valid=3x8", dst="vec, 32x32xf32, valid=8x16", indexRow="u16", indexCol="u16")
    src, dst = _src((16, 16)), np.full((32, 32), SENTINEL)
    written: dict = {}
    out = execute(db, "tinsert", None, "a5", ops, {"src": src, "dst": dst, "indexRow": 10, "indexCol": 24},
                  written)["dst"]
    want = dst.copy()
    want[10:13, 24:32] = src[:3, :8]  # the window may lie outside the destination's valid region (writes: tile)
    np.testing.assert_array_equal(out, want)
    assert written["dst"].sum() == 24 and written["dst"][10:13, 24:32].all()


def test_unwritten_elements_inside_the_valid_region_are_compared_bit_exactly(db, tiles):
    ops = tiles(src="vec, 16x16xf32, valid=2x8", dst="vec, 16x16xf32", indexRow="u16", indexCol="u16")
    written: dict = {}
    dst = np.full((16, 16), SENTINEL)
    want = execute(db, "tinsert", None, "cpu", ops, {"src": _src((16, 16)), "dst": dst, "indexRow": 4,
                                                     "indexCol": 8}, written)["dst"]
    numerics = db.op("tinsert").numerics
    assert compare_output("dst", ops["dst"], want, want.copy(), numerics, written["dst"]) == []
    bad = want.copy()
    bad[0, 0] = SENTINEL + 1  # inside the valid region, outside the window: must be kept
    problems = compare_output("dst", ops["dst"], want, bad, numerics, written["dst"])
    assert problems and "not written by the instruction" in problems[0]


def test_ttrans_and_tmov(db, tiles):
    src = _src((16, 32))
    ops = tiles(src="vec, 16x32xf32, valid=16x24", tmp="vec, 32x16xf32", dst="vec, 32x16xf32, valid=24x16")
    out = execute(db, "ttrans", None, "a2a3", ops, {"src": src})["dst"]
    np.testing.assert_array_equal(out[:24, :16], src[:16, :24].T)
    ops = tiles(src="vec, 16x32xf32, valid=5x7", dst="vec, 16x32xf32, valid=5x7")
    out = execute(db, "tmov", None, "a2a3", ops, {"src": src})["dst"]
    np.testing.assert_array_equal(out[:5, :7], src[:5, :7])


def test_tconcat_per_row_counts(db, tiles):
    ops = tiles(src0="vec, 4x16xf32, valid=4x8", src1="vec, 4x16xf32, valid=4x8", dst="vec, 4x32xf32, valid=4x16",
                src0Idx="vec, 4x16xi16, valid=4x1", src1Idx="vec, 4x16xi16, valid=4x1",
                dstIdx="vec, 4x16xi16, valid=4x1")
    n0, n1 = [0, 2, 8, 5], [8, 1, 3, 0]
    i0, i1 = np.zeros((4, 16), np.int16), np.zeros((4, 16), np.int16)
    i0[:, 0], i1[:, 0] = np.array(n0) * 2, np.array(n1) * 2  # counts times sizeof(int16_t)
    s0, s1 = _src((4, 16)), -_src((4, 16)) - 1
    out = execute(db, "tconcat", "index_count", "cpu", ops,
                  {"src0": s0, "src1": s1, "src0Idx": i0, "src1Idx": i1, "dst": np.full((4, 32), SENTINEL)})
    for r in range(4):
        row = np.concatenate([s0[r, :n0[r]], s1[r, :n1[r]]])
        np.testing.assert_array_equal(out["dst"][r, :len(row)], row)
        assert (out["dst"][r, len(row):] == SENTINEL).all()
    assert out["dstIdx"][:, 0].tolist() == [(a + b) * 2 for a, b in zip(n0, n1, strict=True)]


def test_offsets_are_index_values_in_assembly(db, tiles):
    op = db.op("textract")
    mode = op.mode(None)
    ops = tiles(src="vec, 32x32xf32", dst="vec, 16x16xf32", indexRow="u16", indexCol="u16")
    for form in ("sync", "ssa", "dps"):
        line = print_form(db, op, mode, form, ops)
        assert line.count(", index") == 2
        parsed = parse_line(db, line)
        assert parsed.operands["indexRow"].dtype == "u16" and parsed.operands == ops
    spelled = ("pto.textract ins(%s, %r, %c : !pto.tile_buf<loc=vec, dtype=f32, rows=32, cols=32, v_row=32, "
               "v_col=32, blayout=row_major, slayout=none_box, fractal=512, pad=0>, u16, index) outs(%d : "
               "!pto.tile_buf<vec, 16x16xf32>)")
    assert parse_line(db, spelled).operands["indexRow"].dtype == "u16"
    with pytest.raises(PtospecError) as err:  # index is an offset's spelling, not any scalar's
        parse_line(db, "pto.tadds ins(%s, %x : !pto.tile_buf<vec, 16x16xf32>, index) "
                       "outs(%d : !pto.tile_buf<vec, 16x16xf32>)")
    assert err.value.rule == "asm.type"


def test_cube_paths_choose_their_modes_and_unspecified_ones_are_rejected(db, tiles):
    """Mat to Left/Right, Mat to Bias, Mat to Scaling and Acc out are TMOV's mat_to_cube, mat_to_bias,
    mat_to_scaling and acc_to_out modes (tests/test_family_matrix.py); an unboxed Mat source of a Left tile is
    rejected."""
    ops = tiles(src="mat, 16x16xf32", dst="left, 16x16xf32, blayout=row_major, slayout=row_major")
    for profile in ("a2a3", "a5"):
        report = validate(db, "tmov", None, profile, ops)
        assert report.mode == "mat_to_cube" and "layout.cube-copy" in report.rule_ids, report.rule_ids
    assert validate(db, "tmov", None, "a5", tiles(src="mat, 1x32xf16", dst="bias, 1x32xf32")).mode == "mat_to_bias"
    scaling = tiles(src="mat, 1x16xu64", dst="scaling, 1x16xu64")
    for profile in ("cpu", "a2a3", "a5"):
        report = validate(db, "tmov", None, profile, scaling)
        assert report.mode == "mat_to_scaling" and not report.rule_ids, report.rule_ids
    narrow = tiles(src="mat, 1x8xu64", dst="scaling, 1x8xu64")  # 64 bytes: not a 128-byte burst
    two_rows = tiles(src="mat, 2x16xi64", dst="scaling, 2x16xi64")
    for profile in ("a2a3", "a5"):
        assert "shape.scaling-row" in validate(db, "tmov", None, profile, narrow).rule_ids
        assert "shape.scaling-row" in validate(db, "tmov", None, profile, two_rows).rule_ids
    halves = tiles(src="mat, 1x32xf16", dst="scaling, 1x32xf16")
    assert "dtype.t" in validate(db, "tmov", None, "a5", halves).rule_ids


@pytest.mark.parametrize("text, ok", [
    ("dst[indexRow + i, indexCol + j] = src[i, j] for i < 2, j < 2", True),
    ("dst[i, n[i, 0] + j] = src[i, j] for i < 2, j < 2", True),
    ("dst[i + j, j] = src[i, j] for i < 2, j < 2", True),
    ("dst[i + j, 0] = src[i, j] for i < 2, j < 2", False),  # (0, 1) and (1, 0) would write one element
    ("dst[i + i, j] = src[i, j] for i < 2, j < 2", True),  # rows 0 and 2: each element once
    ("dst[i // 2, j] = src[i, j] for i < 2, j < 2", False),
])
def test_target_offsets_keep_every_element_written_once(db, tiles, text, ok):
    """Computed targets parse; a statement without ``combine`` that writes one element twice is refused when
    it runs (``exec.duplicate-target``), so the order of writes is never NumPy's."""
    from ptospec.expr.evaluate import Scope
    from ptospec.statements import execute_statement

    stmt = parse_statement(text)
    t = tiles(dst="vec, 4x8xf32", src="vec, 2x8xf32", n="vec, 2x8xi32")
    scope = Scope(db.isa, tiles=t, values={"indexRow": 1, "indexCol": 2})
    data = {"src": np.arange(16, dtype=np.float32).reshape(2, 8), "n": np.ones((2, 8), np.int32)}
    if ok:
        execute_statement(stmt, scope, data, {"dst": np.zeros((4, 8), np.float32)})
    else:
        with pytest.raises(ExprError) as err:
            execute_statement(stmt, scope, data, {"dst": np.zeros((4, 8), np.float32)})
        assert err.value.rule == "exec.duplicate-target"


def test_offsets_drawn_over_their_domain(db):
    op = db.op("textract")
    mode = op.mode(None)
    tiles = C.with_dtypes(db, mode, C.example_tiles(db, mode), {"T": "f32", "I": "u16"})
    seen = {int(make_inputs(db, op, mode, tiles, seed, "random")["indexRow"]) for seed in range(40)}
    assert len(seen) > 5 and max(seen) <= 16  # src 32 rows, window 16 rows


def test_concatenation_cases_keep_their_proportions(db):
    op = db.op("tconcat")
    for mode in op.modes:
        assert all(C.feasible(db, op, mode, "cpu", b) for b in C.dtype_combos(db, op, mode, "cpu")), mode.name


def test_a_kernel_with_index_offsets(db, tmp_path):
    tile = ("!pto.tile_buf<loc=vec, dtype=f32, rows={r}, cols={c}, v_row={r}, v_col={c}, blayout=row_major, "
            "slayout=none_box, fractal=512, pad=0>")
    big, small = tile.format(r=32, c=32), tile.format(r=8, c=8)
    view = "!pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<32x32xf32>"
    text = f"""module attributes {{pto.target_arch = "a5"}} {{
  func.func @k(%a: !pto.ptr<f32>, %b: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %tv = pto.make_tensor_view %a, shape = [%c32, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
    %pv = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c32, %c32] : {view}
    %ov = pto.make_tensor_view %b, shape = [%c32, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
    %po = pto.partition_view %ov, offsets = [%c0, %c0], sizes = [%c32, %c32] : {view}
    %x = pto.alloc_tile : {big}
    %w = pto.alloc_tile : {small}
    pto.tload ins(%pv : !pto.partition_tensor_view<32x32xf32>) outs(%x : {big})
    pto.textract ins(%x, %c8, %c16 : {big}, index, index) outs(%w : {small})
    pto.tinsert ins(%w, %c16, %c8 : {small}, index, index) outs(%x : {big})
    pto.tstore ins(%x : {big}) outs(%po : !pto.partition_tensor_view<32x32xf32>)
    return
  }}
}}
"""
    path = tmp_path / "k.pto"
    path.write_text(text)
    program = read_program(path)
    assert not check_program(db, program).violations
    a = _src((32, 32))
    got = run_program(db, program, {"a": a, "b": np.zeros((32, 32), np.float32)}).outputs["b"]
    want = a.copy()
    want[16:24, 8:16] = a[8:16, 16:24]
    np.testing.assert_array_equal(got, want)
