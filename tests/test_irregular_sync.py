"""TRANDOM's generator, TQUANT's integer, MXFP8 and MXFP4 forms, instructions without data semantics and the
program layer's synchronisation instructions: checks against independent values (published Philox
known-answer vectors, hand-computed quantisation, ml_dtypes) and against the rules' intent."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ptospec.asm.forms import parse_line
from ptospec.asm.types import parse_descriptor
from ptospec.backends.cpusim.cppgen import _variant_body, plan_variant
from ptospec.conformance.backend import Invocation
from ptospec.executor import execute
from ptospec.expr.functions import e4m3_code, mx_exponent, mx_exponent_nv, philox
from ptospec.program.api import check_program, read_program
from ptospec.validator import validate


def tiles(db, **descs):
    return {name: parse_descriptor(text, db.isa) for name, text in descs.items()}


KEYS = ("key0", "key1", "counter0", "counter1", "counter2", "counter3")


def _random_tiles(db, dst: str, key_type: str = "u32"):
    return tiles(db, dst=dst, **{k: key_type for k in KEYS})


@pytest.mark.parametrize("counter, key, want", [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
])
def test_philox_matches_the_published_known_answers(counter, key, want):
    assert tuple(int(philox(10, *key, *counter, 0, w)) for w in range(4)) == want


def test_philox_offset_carries_across_all_128_bits():
    low = philox(10, 1, 2, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0, 1, np.arange(4))
    assert (low == philox(10, 1, 2, 0, 0, 0, 1, 0, np.arange(4))).all()


def test_trandom_places_words_per_profile(db):
    t = _random_tiles(db, "vec, 2x256xu32, valid=2x256")
    data = {"key0": 7, "key1": 9, "counter0": 5, "counter1": 0, "counter2": 0, "counter3": 0}
    cpu = execute(db, "trandom", "rounds10", "cpu", t, data)["dst"]
    a5 = execute(db, "trandom", "rounds10", "a5", t, data)["dst"]
    block = [int(w) for w in philox(10, 7, 9, 5, 0, 0, 0, 3, np.arange(4))]  # counter lane 3
    assert [int(cpu[0, 64 * w + 3]) for w in range(4)] == block  # simulator: word w at column 64w + l
    assert [int(a5[0, 12 + w]) for w in range(4)] == block  # A5: the four words side by side
    # the simulator's second row starts Cols/4 counters further on
    assert int(cpu[1, 0]) == int(philox(10, 7, 9, 5 + 64, 0, 0, 0, 0, 0))


def test_trandom_i32_and_u32_destinations_hold_the_same_bits(db):
    data = {"key0": 1, "key1": 2, "counter0": 3, "counter1": 4, "counter2": 5, "counter3": 6}
    u = execute(db, "trandom", "rounds7", "cpu", _random_tiles(db, "vec, 1x64xu32"), data)["dst"]
    i = execute(db, "trandom", "rounds7", "cpu", _random_tiles(db, "vec, 1x64xi32"), data)["dst"]
    assert (u.view(np.int32) == i).all()


def test_trandom_rejects_column_major_and_a2a3(db):
    assert "layout.dst-row-major" in validate(db, "trandom", "rounds10", "a5",
                                              _random_tiles(db, "vec, 16x8xu32, blayout=col_major")).rule_ids
    assert not validate(db, "trandom", "rounds10", "a2a3", _random_tiles(db, "vec, 4x64xu32")).ok


def test_trandom_cpp_call_gathers_the_key_and_counter_arrays(db):
    t = _random_tiles(db, "vec, 4x64xi32", "i32")
    plan = plan_variant(db, Invocation("trandom", "rounds7", "cpu", t, {}))
    body = "\n".join(_variant_body(plan))
    assert "pto::TRandomKey key = {static_cast<uint32_t>(key0), static_cast<uint32_t>(key1)};" in body
    assert "TRANDOM<7>(dst, key, counter);" in body


def test_rounds_attribute_selects_the_mode(db):
    line = ("pto.trandom ins(%a, %b, %c, %d, %e, %f {rounds = 7 : i32} : i32, i32, i32, i32, i32, i32) "
            "outs(%t : !pto.tile_buf<vec, 4x64xi32>)")
    assert parse_line(db, line, profile="a5").mode == "rounds7"
    assert parse_line(db, line.replace(" {rounds = 7 : i32}", ""), profile="a5").mode == "rounds10"


def test_tquant_int8_rounds_half_to_even_and_saturates(db):
    t = tiles(db, dst="vec, 2x32xi8", src="vec, 2x32xf32", scale="vec, 2x8xf32, valid=2x1")
    src = np.zeros((2, 32), np.float32)
    src[0, :5] = [0.25, 0.75, 1.25, 100.0, -100.0]
    scale = np.zeros((2, 8), np.float32)
    scale[:, 0] = [2.0, 1.0]
    out = execute(db, "tquant", "int8_sym", "cpu", t, {"src": src, "scale": scale})["dst"]
    assert out[0, :5].tolist() == [0, 2, 2, 127, -128]  # 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, clamped


def test_tquant_asym_adds_the_offset_and_clamps_to_u8(db):
    t = tiles(db, dst="vec, 1x32xu8", src="vec, 1x32xf32", scale="vec, 1x8xf32, valid=1x1",
              offset="vec, 1x8xf32, valid=1x1")
    src = np.zeros((1, 32), np.float32)
    src[0, :3] = [-10.0, 1.0, 500.0]
    one = np.zeros((1, 8), np.float32)
    one[0, 0] = 1.0
    zero_point = np.zeros((1, 8), np.float32)
    zero_point[0, 0] = 128.0
    out = execute(db, "tquant", "int8_asym", "cpu", t, {"src": src, "scale": one, "offset": zero_point})["dst"]
    assert out[0, :3].tolist() == [118, 129, 255]


def test_e4m3_code_agrees_with_ml_dtypes_and_drops_the_sign_of_zero():
    values = np.array([1.0, 0.0664, 447.0, -3.5, 1e-3], np.float32)
    want = np.clip(values, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    assert (e4m3_code(values, False) == want).all()
    assert int(e4m3_code(np.float32(-0.0), False)) == 0 and int(e4m3_code(np.float32(-1e-4), True)) == 0x80
    assert int(e4m3_code(np.float32(1e6), False)) == 0x7E  # clamped to 448


def test_mx_exponents():
    assert int(mx_exponent(np.float32(3.0), 8)) == 128 - 8
    assert int(mx_exponent(np.float32(1e-38), 8)) == 0
    assert int(mx_exponent_nv(np.float32(448.0), 448)) == 127  # 448/448 = 1.0: no rounding up
    assert int(mx_exponent_nv(np.float32(449.0), 448)) == 128
    assert int(mx_exponent_nv(np.float32(0.0), 448)) == 0


def test_mxfp8_writes_four_outputs(db):
    t = tiles(db, dst="vec, 2x64xi8", src="vec, 2x64xf32", exp="vec, 2x32xu8, valid=2x2",
              max="vec, 1x8xf32", scaling="vec, 1x8xf32")
    src = np.full((2, 64), 0.5, np.float32)
    src[1, 40] = -6.0
    out = execute(db, "tquant", "mxfp8", "cpu", t, {"src": src})
    assert out["exp"][:, :2].tolist() == [[118, 118], [118, 121]]  # 0.5: field 126; 6.0: field 129
    assert out["max"][0, :4].tolist() == [0.5, 0.5, 0.5, 6.0]
    assert out["scaling"][0, :4].tolist() == [2.0 ** 9, 2.0 ** 9, 2.0 ** 9, 2.0 ** 6]
    assert int(out["dst"][1, 40].view(np.uint8)) == int(e4m3_code(np.float32(-6.0 * 64), False))


def test_effect_modes_change_nothing(db, capsys):
    t = tiles(db, src="vec, 8x16xf32, valid=5x10", format="Width8_Precision4")
    assert db.op("tprint").mode("tile").effect.kind == "debug-output"
    assert execute(db, "tprint", "tile", "a2a3", t, {"src": np.ones((8, 16), np.float32)}) == {}
    scaled = tiles(db, src="vec, 16x32xf16", dst="scaling, 16x32xu8")
    before = np.arange(16 * 32, dtype=np.uint8).reshape(16, 32)
    out = execute(db, "tget_scale_addr", None, "a5", scaled, {"src": np.zeros((16, 32), np.float16), "dst": before})
    assert (out["dst"] == before).all()
    assert "loc.dst-scaling" in validate(db, "tget_scale_addr", None, "a5",
                                         tiles(db, src="vec, 16x32xf16", dst="vec, 16x32xu8")).rule_ids


def _check(tmp_path: Path, db, body: str, arch: str = "a5"):
    path = tmp_path / "k.pto"
    path.write_text(f'module attributes {{pto.target_arch = "{arch}"}} {{\n  func.func @k() {{\n{body}\n'
                    "    return\n  }\n}\n")
    return check_program(db, read_program(path))


@pytest.mark.parametrize("line, rule", [
    ("pto.set_flag[<PIPE_MTE2>, <PIPE_NOPE>, <EVENT_ID0>]", "sync.enum"),
    ("pto.sync.set <PIPE_V>, 0", "sync.set-pipe"),
    ("pto.sync.set <PIPE_FIX>, 0 {ffts_mode = 3 : i32}", "sync.ffts-mode"),
    ("pto.sync.set <PIPE_FIX>, 0 {ffts_mode = 0x3 : i32}", "sync.ffts-mode"),  # as the lexer reads literals
    ("pto.sync.set <PIPE_FIX>, 0 {ffts_mode = 08 : i32}", "sync.ffts-mode"),  # was an internal error
    ('pto.sync.set <PIPE_FIX>, 0 {ffts_mode = "x"}', "program.syntax"),  # was taken as absent
    ("pto.get_buf[#pto.pipe_event_type<TLOAD>, 32]", "sync.buf-id"),
])
def test_synchronisation_rules(tmp_path, db, line, rule):
    found = _check(tmp_path, db, f"    {line}")
    assert [f.rule for f in found.violations] == [rule]


def test_sync_set_pipe_rule_is_a5_only(tmp_path, db):
    assert not _check(tmp_path, db, "    pto.sync.set <PIPE_V>, 0", arch="a3").violations


def test_dynamic_event_ids_come_from_event_id_arrays(tmp_path, db):
    body = """    %c0 = arith.constant 0 : index
    %c9 = arith.constant 9 : index
    %arr = pto.declare_eventid_array -> !pto.eventid_array<2>
    pto.eventid_array_set %arr[%c0], %c9 : !pto.eventid_array<2>
    %e = pto.eventid_array_get %arr[%c0] : !pto.eventid_array<2>
    pto.set_flag_dyn [#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_V>, %e]"""
    assert [f.rule for f in _check(tmp_path, db, body).violations] == ["sync.event-index"]


def test_tassign_checks_capacity_and_alignment(tmp_path, db):
    body = """    %a = arith.constant 16 : i64
    %b = arith.constant 262144 : i64
    %z = arith.constant 0 : i64
    %t = pto.alloc_tile addr = %z : !pto.tile_buf<vec, 16x16xf32>
    %u = pto.tassign %t, %a : !pto.tile_buf<vec, 16x16xf32> -> !pto.tile_buf<vec, 16x16xf32>
    %v = pto.tassign %t, %b : !pto.tile_buf<vec, 16x16xf32> -> !pto.tile_buf<vec, 16x16xf32>"""
    # (tassign is level3 only, where every alloc_tile has addr: program.level3-addr otherwise)
    assert [f.rule for f in _check(tmp_path, db, body).violations] == ["tassign.align", "tassign.capacity"]


def test_unspecified_pages_are_listed(db):
    names = [name for _, name, _ in db.isa.unspecified]
    assert "TALLOC" in names and all(name.lower() not in db.ops for name in names)


def _e2m1_magic(value: float) -> int:
    """The simulator's e2m1 encoder, step by step in float32 (an independent model of EncodeE2M1Magic)."""
    v = np.float32(value)
    sign = (int(v.view(np.uint32)) >> 28) & 0x8
    a = np.float32(abs(v))
    biased = min(max(int(a.view(np.uint32)) >> 23, 127), 129)
    magic = np.uint32((biased + 22) << 23)
    q = int((a + magic.view(np.float32)).view(np.uint32)) - int(magic)
    return sign | min(q + ((biased - 127) << 1), 7)


def test_e2m1_code_is_the_simulators_magic_number_encoder():
    from ptospec.expr.functions import e2m1_code

    grid = np.concatenate([np.arange(-7, 7, 0.125, dtype=np.float32), np.float32([0.0, -0.0, 1e-30, -1e30]),
                           np.random.default_rng(5).standard_normal(2000).astype(np.float32) * 3])
    grid = np.concatenate([grid, np.nextafter(grid, np.float32(np.inf)), np.nextafter(grid, np.float32(-np.inf))])
    assert e2m1_code(grid).tolist() == [_e2m1_magic(x) for x in grid]
    assert int(e2m1_code(np.float32(-0.0))) == 0x8 and int(e2m1_code(np.float32(2.5))) == 4  # ties to even


def test_mxfp4_clears_the_destination_and_packs_codes(db):
    t = tiles(db, dst="vec, 2x64xf4e2m1x2", src="vec, 2x64xbf16", exp="vec, 2x32xu8, valid=2x2",
              max="vec, 1x16xbf16", scaling="vec, 1x16xbf16")
    src = np.full((2, 64), 0.5, ml_dtypes.bfloat16)
    src[1, 40] = -6.0
    out = execute(db, "tquant", "mxfp4", "cpu", t, {"src": src})
    assert out["dst"].dtype == np.dtype(ml_dtypes.float4_e2m1fn)
    assert out["exp"][:, :2].tolist() == [[124, 124], [124, 127]]  # field minus 2
    codes = out["dst"].view(np.uint8)
    assert int(codes[1, 40]) == 0xF and int(codes[1, 41]) == 0x1  # -6 and 0.5 (code 1) in a group at 2^0
    assert int(codes[0, 0]) == 0x6  # 0.5 * 2^3 = 4


def test_mxfp4_ocp_takes_the_group_maximum_in_bfloat16(db):
    t = tiles(db, dst="vec, 1x32xf4e2m1x2", src="vec, 1x32xf32", exp="vec, 1x32xu8, valid=1x1",
              max="vec, 1x8xf32", scaling="vec, 1x8xf32")
    src = np.zeros((1, 32), np.float32)
    src[0, 3] = np.float32(1.99999)  # bfloat16 truncation: 1.9921875, the exponent field stays 127
    ocp = execute(db, "tquant", "mxfp4", "cpu", t, {"src": src})
    nv = execute(db, "tquant", "mxfp4_nv", "cpu", t, {"src": src})
    assert float(ocp["max"][0, 0]) == 1.9921875 and float(nv["max"][0, 0]) == np.float32(1.99999)
    assert int(ocp["exp"][0, 0]) == 125 and int(nv["exp"][0, 0]) == 126  # NV: exponent of m / 6, rounded up


def test_mxfp8_zz_repeats_the_exponents_in_blocks_of_16_rows_by_2_groups(db):
    t = tiles(db, dst="vec, 16x1024xi8", src="vec, 16x1024xf32", exp="vec, 16x32xu8", max="vec, 16x32xf32",
              scaling="vec, 16x32xf32", exp_zz="vec, 16x32xu8")
    src = (np.random.default_rng(2).standard_normal((16, 1024)) * 2.0 ** np.arange(-8, 8).reshape(16, 1)).astype(
        np.float32)
    out = execute(db, "tquant", "mxfp8_zz", "cpu", t, {"src": src})
    exp, zz = out["exp"], out["exp_zz"].reshape(-1)
    want = [exp[r, 2 * gb + g] for gb in range(16) for r in range(16) for g in range(2)]
    assert zz.tolist() == [int(x) for x in want]


def test_packed_outputs_start_with_codes_their_storage_can_hold(db):
    from ptospec.conformance.data import make_inputs

    t = tiles(db, dst="vec, 2x64xf4e2m1x2", src="vec, 2x64xf32", exp="vec, 2x32xu8, valid=2x2",
              max="vec, 1x8xf32", scaling="vec, 1x8xf32")
    data = make_inputs(db, db.op("tquant"), db.op("tquant").mode("mxfp4"), t, 1, "random")
    assert (data["dst"].view(np.uint8) <= 0xF).all()


@pytest.mark.parametrize(("cols", "rules"), [(256, []), (192, ["single.groups"])])
def test_the_assemblers_single_list_tmrgsort_is_read(tmp_path, db, cols, rules):
    tile = (f"!pto.tile_buf<loc=vec, dtype=f32, rows=1, cols={cols}, v_row=1, v_col={cols}, blayout=row_major, "
            "slayout=none_box, fractal=512, pad=0>")
    body = f"""    %c64 = arith.constant 64 : i32
    %src = pto.alloc_tile : {tile}
    %dst = pto.alloc_tile : {tile}
    pto.tmrgsort ins(%src, %c64 : {tile}, i32) outs(%dst : {tile})"""
    report = _check(tmp_path, db, body)
    assert [f.rule for f in report.violations] == rules
    assert report.stats.instructions == 1 and report.stats.legal == (0 if rules else 1)
