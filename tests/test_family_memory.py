"""Global memory: view descriptors, and TLOAD, TSTORE, MGATHER, MSCATTER against NumPy written here."""

from __future__ import annotations

import numpy as np
import pytest

from ptospec.asm.forms import FORMS, parse_line, print_form
from ptospec.asm.types import format_descriptor, format_type, parse_descriptor, parse_type
from ptospec.errors import InvocationError, TileError
from ptospec.executor import execute, view_elements
from ptospec.validator import validate


def strided_offsets(shape, strides, offset):
    """Buffer offsets of a view, computed here with plain loops."""
    out = np.zeros(shape, dtype=np.int64)
    for index in np.ndindex(*shape):
        out[index] = offset + sum(i * s for i, s in zip(index, strides, strict=True))
    return out


# ------------------------------------------------------------------ descriptors and assembly types
@pytest.mark.parametrize("text", [
    "gm, 16x16xf32",
    "gm, 1x1x1x16x16xf16, strides=1x1x1x32x1",
    "gm, ?x?xf32",
    "tensor_view, 4x8xi8, layout=dn",
    "gm, 16x16xf32, offset=8, size=1024",
    "gm, 2x8x16xi32, strides=168x21x1, offset=3, size=341",
])
def test_view_descriptor_round_trip(db, text):
    desc = parse_descriptor(text, db.isa)
    assert parse_descriptor(format_descriptor(desc, db.isa), db.isa) == desc
    assert parse_type(format_type(desc, db.isa), db.isa) == desc


def test_plain_views_print_as_the_assembler_writes_them(db):
    assert format_type(parse_descriptor("gm, 1x1024xf32", db.isa), db.isa) == "!pto.partition_tensor_view<1x1024xf32>"
    assert parse_type("!pto.tensor_view<?x?xf32>", db.isa).shape == (None, None)
    # the pages' memref spelling reads as a partition view
    assert parse_type("!pto.memref<16x16xf16>", db.isa) == parse_type("!pto.partition_tensor_view<16x16xf16>",
                                                                      db.isa)


def test_packed_strides_follow_the_layout(db):
    nd = parse_descriptor("gm, 2x3x4xf32", db.isa)
    dn = parse_descriptor("gm, 2x3x4xf32, layout=dn", db.isa)
    assert nd.strides == (12, 4, 1)
    assert dn.strides == (12, 1, 3)  # dimension 3 (rows) contiguous, then dimension 4
    assert nd.dims5 == (1, 1, 2, 3, 4)


@pytest.mark.parametrize("bad", ["gm, 16x16", "gm, 16x16xq9", "gm, 16x16xf32, strides=1", "gm, 16x16xf32, bogus=1",
                                 "gm, 1x2x3x4x5x6xf32", "gm, 16x16xf32, layout=zz", "gm, -1x4xf32"])
def test_bad_view_descriptors_are_clear_errors(db, bad):
    with pytest.raises(TileError):
        parse_descriptor(bad, db.isa)


# ------------------------------------------------------------------ legality
def test_view_past_its_buffer_is_illegal(db, tiles):
    t = tiles(dst="vec, 16x16xf32", src="gm, 16x16xf32, offset=4, size=256")
    assert validate(db, "tload", None, "a2a3", t).rule_ids == {"gm.bounds"}


def test_load_shape_must_match_valid_region(db, tiles):
    t = tiles(dst="vec, 16x16xf32, valid=10x16", src="gm, 16x16xf32")
    assert validate(db, "tload", None, "a2a3", t).rule_ids == {"runtime.shape-nd"}
    dynamic = tiles(dst="vec, 16x16xf32, valid=?x?", src="gm, ?x16xf32")
    report = validate(db, "tload", None, "a2a3", dynamic)
    assert report.ok and "runtime.shape-nd" in report.deferred


def test_vec_load_needs_matching_layouts_on_hardware_only(db, tiles):
    t = tiles(dst="vec, 16x16xf32, layout=dn", src="gm, 16x16xf32")
    assert "layout.vec-pair" in validate(db, "tload", None, "a5", t).rule_ids
    assert "layout.vec-pair" not in validate(db, "tload", None, "cpu", t).rule_ids


def test_atomic_store_types_per_profile(db, tiles):
    t = tiles(dst="gm, 16x32xu8", src="vec, 16x32xu8")
    assert validate(db, "tstore", "atomic_add", "a2a3", t).rule_ids == {"dtype.t"}
    assert validate(db, "tstore", "atomic_add", "cpu", t).ok


# ------------------------------------------------------------------ execution
def test_load_reads_through_strides_and_offset(db, tiles):
    rng = np.random.default_rng(3)
    buffer = rng.standard_normal(600).astype(np.float32)
    t = tiles(dst="vec, 16x16xf32, valid=10x12", src="gm, 10x12xf32, strides=40x2, offset=7, size=600")
    out = execute(db, "tload", None, "a5", t, {"src": buffer, "dst": np.full((16, 16), 9, np.float32)})["dst"]
    expected = np.full((16, 16), 9, np.float32)
    expected[:10, :12] = buffer[strided_offsets((10, 12), (40, 2), 7)]
    np.testing.assert_array_equal(out, expected)


def test_load_five_dimensional_nd_view_flattens_outer_dimensions_into_rows(db, tiles):
    table = np.arange(2 * 3 * 4 * 8, dtype=np.int32).reshape(2, 3, 4, 8)
    t = tiles(dst="vec, 24x8xi32", src="gm, 2x3x4x8xi32")
    out = execute(db, "tload", None, "a2a3", t, {"src": table})["dst"]
    np.testing.assert_array_equal(out, table.reshape(24, 8))


def test_load_dn_view(db, tiles):
    data = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)  # 8 rows, 6 columns, stored column by column
    t = tiles(dst="vec, 8x8xf32, layout=dn, valid=8x6", src="gm, 8x6xf32, layout=dn")
    out = execute(db, "tload", None, "a2a3", t, {"src": data.T.reshape(-1)})["dst"]
    np.testing.assert_array_equal(out[:8, :6], data)


def test_load_pad_fill_per_profile(db, tiles):
    src = np.ones((4, 5), np.float16)
    t = tiles(dst="vec, 8x32xf16, valid=4x5, pad=max", src="gm, 4x5xf16")
    start = np.full((8, 32), 7, np.float16)
    cpu = execute(db, "tload", None, "cpu", t, {"src": src, "dst": start})["dst"]
    expected = np.full((8, 32), np.inf, np.float16)
    expected[:4, :5] = 1
    np.testing.assert_array_equal(cpu, expected)  # the simulator fills the whole tile first
    npu = execute(db, "tload", None, "a2a3", t, {"src": src, "dst": start})["dst"]
    expected = start.copy()
    expected[:4, :16] = np.inf  # 16 halves = one 32-byte block: the rest of each row's block is padded
    expected[:4, :5] = 1
    np.testing.assert_array_equal(npu, expected)
    null = tiles(dst="vec, 8x32xf16, valid=4x5", src="gm, 4x5xf16")
    out = execute(db, "tload", None, "a2a3", null, {"src": src, "dst": start})["dst"]
    assert (out[:4, 5:] == 7).all() and (out[4:] == 7).all()  # Null: nothing outside the valid region


def test_load_int_pad_min_is_the_most_negative_value(db, tiles):
    t = tiles(dst="vec, 1x16xi16, valid=1x3, pad=min", src="gm, 1x3xi16")
    out = execute(db, "tload", None, "cpu", t, {"src": np.zeros((1, 3), np.int16)})["dst"]
    assert (out[0, 3:] == np.iinfo(np.int16).min).all()


def test_store_writes_only_the_addressed_elements(db, tiles):
    src = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
    t = tiles(src="vec, 16x16xf32, valid=10x16", dst="gm, 10x16xf32, strides=32x1, offset=3, size=400")
    buffer = np.full(400, -1, np.float32)
    written: dict = {}
    out = execute(db, "tstore", "default", "a2a3", t, {"src": src, "dst": buffer}, written)["dst"]
    where = strided_offsets((10, 16), (32, 1), 3)
    np.testing.assert_array_equal(out[where], src[:10])
    untouched = np.ones(400, bool)
    untouched[where.reshape(-1)] = False
    assert (out[untouched] == -1).all()
    np.testing.assert_array_equal(written["dst"], ~untouched)


def test_atomic_store_accumulates_repeated_targets(db, tiles):
    t = tiles(src="vec, 4x8xf32", dst="gm, 4x8xf32, strides=0x1")  # every row lands on the same 8 elements
    out = execute(db, "tstore", "atomic_add", "cpu", t,
                  {"src": np.full((4, 8), 1.5, np.float32), "dst": np.ones(8, np.float32)})["dst"]
    np.testing.assert_array_equal(out, np.full(8, 7.0, np.float32))


def test_view_elements_are_the_strided_ones(db, tiles):
    t = tiles(src="vec, 8x16xi32, valid=4x16", dst="gm, 4x16xi32, strides=20x1, offset=2, size=90")
    src = np.arange(128, dtype=np.int32).reshape(8, 16)
    out = execute(db, "tstore", "default", "cpu", t, {"src": src, "dst": np.zeros(90, np.int32)})["dst"]
    np.testing.assert_array_equal(view_elements(t["dst"], out), src[:4])


def test_reading_past_the_buffer_is_a_rule_not_a_crash(db, tiles):
    t = tiles(dst="vec, 16x16xf32", src="gm, 16x16xf32, offset=100, size=200")
    with pytest.raises(InvocationError) as err:
        execute(db, "tload", None, "cpu", t, {"src": np.zeros(200, np.float32)})
    assert err.value.rule == "gm.bounds"


def test_gather_rows_with_each_policy(db, tiles):
    table = np.arange(6 * 16, dtype=np.float32).reshape(6, 16)
    idx = np.array([[5, -1, 9, 0, 0, 0, 0, 0]], dtype=np.int32)
    expected_rows = {"Clamp": [5, 5, 5, 0], "Zero": [5, None, None, 0]}  # row read, or None for zeros
    for oob, rows in expected_rows.items():
        t = tiles(dst="vec, 8x16xf32, valid=4x16", src="gm, 6x16xf32", idx="vec, 1x8xi32, valid=1x4", oob=oob)
        out = execute(db, "mgather", "row", "cpu", t, {"src": table, "idx": idx})["dst"]
        for r, row in enumerate(rows):
            np.testing.assert_array_equal(out[r], table[row] if row is not None else np.zeros(16, np.float32))


def test_gather_elements_wrap(db, tiles):
    table = np.arange(96, dtype=np.float32)
    idx = (np.arange(16, dtype=np.int32) * 7).reshape(2, 8)
    t = tiles(dst="vec, 2x8xf32", src="gm, 6x16xf32", idx="vec, 2x8xi32", oob="Wrap")
    out = execute(db, "mgather", "elem", "a5", t, {"src": table, "idx": idx})["dst"]
    np.testing.assert_array_equal(out, table[idx % 96])


def test_scatter_duplicates_last_wins_and_skip_drops_out_of_range(db, tiles):
    idx = np.array([[0, 0, 1, 1, 40, -1, 31, 31], [0, 2, 2, 2, 2, 2, 2, 2]], dtype=np.int32)
    src = np.arange(16, dtype=np.float32).reshape(2, 8)
    t = tiles(dst="gm, 4x8xf32", src="vec, 2x8xf32", idx="vec, 2x8xi32", atomic="None", oob="Skip")
    out = execute(db, "mscatter", "elem", "cpu", t, {"src": src, "idx": idx, "dst": np.zeros(32, np.float32)})["dst"]
    expected = np.zeros(32, np.float32)
    for (i, j), k in np.ndenumerate(idx):
        if 0 <= k < 32:
            expected[k] = src[i, j]  # row-major order: the later write wins
    np.testing.assert_array_equal(out, expected)
    t = tiles(dst="gm, 4x8xf32", src="vec, 2x8xf32", idx="vec, 2x8xi32", atomic="Add", oob="Clamp")
    out = execute(db, "mscatter", "elem", "cpu", t, {"src": src, "idx": idx, "dst": np.zeros(32, np.float32)})["dst"]
    expected = np.zeros(32, np.float32)
    for (i, j), k in np.ndenumerate(idx):
        expected[min(k, 31) if k >= 0 else 31] += src[i, j]
    np.testing.assert_array_equal(out, expected)


# ------------------------------------------------------------------ assembly forms
@pytest.mark.parametrize("op,mode", [("tload", "default"), ("tstore", "default"), ("tstore", "atomic_add"),
                                     ("mgather", "row"), ("mscatter", "elem"),
                                     ("tprefetch", "default")])
def test_memory_forms_round_trip(db, op, mode):
    spec = db.op(op)
    m = spec.mode(mode)
    example = {n: parse_descriptor(d, db.isa) for n, d in m.example.tiles.items()}
    for form in FORMS:
        line = print_form(db, spec, m, form, example)
        assert parse_line(db, line, mode).operands == example, line


def test_store_lines_as_the_pages_write_them(db):
    line = "pto.tstore %src, %mem : (!pto.tile<vec, 16x16xf16>, !pto.partition_tensor_view<16x16xf16>) -> ()"
    parsed = parse_line(db, line, "default")
    assert parsed.operands["dst"].shape == (16, 16)
    dps = ("pto.tstore ins(%tb : !pto.tile_buf<vec, 16x16xf16>) "
           "outs(%pv : !pto.partition_tensor_view<16x16xf16>)")
    assert parse_line(db, dps, "default").form == "dps"
    gather = ("pto.mgather ins(%mem, %idx : !pto.partition_tensor_view<32x16xf32>, !pto.tile_buf<vec, 1x8xi32>) "
              "outs(%dst : !pto.tile_buf<vec, 8x16xf32>) {gatherOob = #pto<gather_oob zero>}")
    assert parse_line(db, gather, "row").operands["oob"].value == "Zero"


def test_assembler_keyword_tile_type(db):
    text = ("!pto.tile_buf<loc=vec, dtype=f32, rows=32, cols=32, v_row=?, v_col=32, blayout=row_major, "
            "slayout=none_box, fractal=512, pad=2>")
    tile = parse_type(text, db.isa)
    assert (tile.loc, tile.dtype, tile.rows, tile.valid_row, tile.valid_col, tile.pad) == ("Vec", "f32", 32, None, 32,
                                                                                        "Max")
    assert parse_type(format_type(tile, db.isa), db.isa) == tile
    for bad in ("loc=vec, dtype=f32, rows=32", "loc=vec, dtype=f32, rows=32, cols=32, pad=9",
                "loc=vec, dtype=f32, rows=32, cols=32, colour=red"):
        with pytest.raises(TileError):
            parse_descriptor(bad, db.isa)


# ------------------------------------------------------------------ TPREFETCH
def test_prefetch_copies_one_slice_into_the_valid_rows(db, tiles):
    buffer = np.arange(1024, dtype=np.float16)
    t = tiles(dst="vec, 16x16xf16, valid=10x16", src="gm, 10x16xf16, strides=16x1, offset=256, size=1024")
    for profile in ("cpu", "a2a3", "a5"):
        start = np.full((16, 16), -1, np.float16)
        out = execute(db, "tprefetch", None, profile, t, {"src": buffer, "dst": start})["dst"]
        np.testing.assert_array_equal(out[:10], buffer[strided_offsets((10, 16), (16, 1), 256)])
        assert (out[10:] == -1).all(), profile  # rows past the slice keep their contents: no pad fill


def test_prefetch_row_pitch_differs_per_profile(db, tiles):
    # 9 halves = 18 bytes: A2/A3 rounds each row up to one 32-byte block (the tile's 16 columns), A5 does not
    t = tiles(dst="vec, 4x16xf16, valid=4x9", src="gm, 4x9xf16, strides=16x1, size=64")
    assert validate(db, "tprefetch", None, "a2a3", t).ok
    assert validate(db, "tprefetch", None, "a5", t).rule_ids == {"prefetch.row-pitch-a5"}
    assert validate(db, "tprefetch", None, "cpu", t).ok  # the simulator reads at the tile's pitch, 16 = stride 3
    packed = tiles(dst="vec, 4x16xf16, valid=4x9", src="gm, 4x9xf16")
    assert validate(db, "tprefetch", None, "cpu", packed).rule_ids == {"prefetch.row-stride-cpu"}


def test_prefetch_content_is_defined_for_one_slice_only(db, tiles):
    t = tiles(dst="vec, 16x16xf32", src="gm, 2x8x16xf32")
    for profile in ("cpu", "a2a3", "a5"):
        assert "prefetch.one-slice" in validate(db, "tprefetch", None, profile, t).rule_ids
    mat = tiles(dst="mat, 16x16xf32", src="gm, 16x16xf32")
    assert validate(db, "tprefetch", None, "a2a3", mat).rule_ids == {"loc.vec"}
    assert validate(db, "tprefetch", None, "cpu", mat).ok


def test_prefetch_lines_as_the_page_and_the_assembler_write_them(db):
    page = "%dst = tprefetch %src : !pto.global<16x16xf32> -> !pto.tile<16x16xf32>"
    assert parse_line(db, page, "default").operands["src"] == parse_descriptor("gm, 16x16xf32", db.isa)
    ptoas = ("pto.tprefetch ins(%part : !pto.partition_tensor_view<16x16xf16>) outs(%tile : !pto.tile_buf<loc=vec, "
             "dtype=f16, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, "
             "pad=0>)")
    assert parse_line(db, ptoas, "default").form == "dps"


# ------------------------------------------------------------------ NZ views and Mat tiles in the generated cases
def test_generated_cases_load_and_store_nz_views_and_mat_tiles(db):
    from ptospec.conformance import cases

    for op, profiles in (("tload", ("cpu", "a2a3", "a5")), ("tstore", ("cpu", "a2a3", "a5"))):
        positives = cases.positive_cases(db, db.op(op))
        for profile in profiles:
            mine = [c.parsed(db) for c in positives if c.profile == profile]
            assert any(t.layout == "NZ" for c in mine for t in c.values() if hasattr(t, "strides")), (op, profile)
            if op == "tload" or profile != "a5":  # A5 stores no Mat tile
                assert any(getattr(t, "loc", None) == "Mat" for c in mine for t in c.values()), (op, profile)
        for c in positives:
            assert validate(db, op, c.mode, c.profile, c.parsed(db)).ok


def test_nz_view_keeps_its_block_bytes_across_types(db):
    from ptospec.conformance.views import retyped, shaped_view

    f32 = parse_descriptor("gm, 1x2x1x16x8xf32, layout=nz", db.isa)
    assert retyped(db.isa, f32, "f16").shape == (1, 1, 1, 16, 16)  # 16 rows of 32 bytes, 16 columns in all
    assert retyped(db.isa, f32, "i8").shape == (1, 2, 1, 16, 8)  # 32 one-byte columns do not fit 16 columns
    assert shaped_view(db.isa, f32, 32, 24, False).shape == (1, 3, 2, 16, 8)
    assert shaped_view(db.isa, f32, 20, 24, False) == f32  # 20 rows are no whole number of blocks


def test_fractal_tiles_are_whole_inner_boxes(db, tiles):
    t = tiles(dst="mat, 5x16xf16, blayout=col_major, slayout=row_major", src="gm, 5x16xf16")
    assert "tile.fractal-box" in validate(db, "tload", None, "cpu", t).rule_ids
    ok = tiles(dst="mat, 16x16xf16, blayout=col_major, slayout=row_major", src="gm, 16x16xf16")
    assert validate(db, "tload", None, "a2a3", ok).ok
    b64 = tiles(dst="mat, 16x16xi64, blayout=col_major, slayout=row_major", src="gm, 16x16xi64")
    assert "mat.to-nz-b64" in validate(db, "tload", None, "a5", b64).rule_ids


def test_global_layouts_name_the_profiles_that_transfer_them(db):
    layouts = db.isa.global_layouts
    assert set(layouts["NZ"].profiles) == {"cpu", "a2a3", "a5"}
    assert layouts["NCHW"].profiles == ("a5",)
    assert layouts["GNCHW"].profiles == ()


def test_only_statements_marked_writes_tile_fill_outside_the_valid_region(db, tiles):
    import dataclasses

    from ptospec.errors import PtospecError
    from ptospec.expr.parser import parse_statement
    from ptospec.model import Database

    spec = db.op("tload")
    fill = parse_statement("dst[i, j] = 0  for i < dst.rows, j < dst.cols")

    def with_semantics(*stmts):
        mode = dataclasses.replace(spec.modes[0], semantics=stmts)
        return Database(isa=db.isa, ops={**db.ops, "tload": dataclasses.replace(spec, modes=(mode,))}, root=db.root)

    t = tiles(dst="vec, 8x16xf16, valid=4x5", src="gm, 4x5xf16")
    data = {"src": np.ones((4, 5), np.float16), "dst": np.full((8, 16), 7, np.float16)}
    with pytest.raises(PtospecError) as err:  # no `writes: tile`: the engine refuses the write
        execute(with_semantics(fill), "tload", None, "cpu", t, data)
    assert err.value.rule == "exec.write-outside-valid"
    out = execute(with_semantics(dataclasses.replace(fill, writes="tile")), "tload", None, "cpu", t, data)["dst"]
    assert (out == 0).all()
