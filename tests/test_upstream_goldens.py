"""benchmarks/upstream_goldens.py: relating upstream gen_data.py cases to configurations of the database.

The adapter's parts run on synthetic cases (NumPy computes the goldens here); the end-to-end test over
upstream's own scripts needs the pto-isa checkout and is skipped without it.
"""

from __future__ import annotations

import importlib.util
import os
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from ptospec.loader import load_database

ROOT = Path(__file__).resolve().parents[1]
PTO_ISA = Path(os.environ.get("PTO_ISA_ROOT", "/tmp/pto-isa"))


def _load():
    spec = importlib.util.spec_from_file_location("upstream_goldens", ROOT / "benchmarks" / "upstream_goldens.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


ug = _load()


@pytest.fixture(scope="module")
def db():
    return load_database()


class Param:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def _case(name: str, params: dict, **arrays) -> object:
    files = {k: (v if isinstance(v, bytes) else np.ascontiguousarray(v).tobytes()) for k, v in arrays.items()}
    return ug.Case(name, files, {k.lower(): v for k, v in params.items()})


def test_case_numbers_types_and_words():
    case = _case("TCMPTest.case_half_32x16_EQ", {"dtype": np.float32, "valid_row": 3, "mode": "CmpMode::GE"})
    assert case.numbers() == [3, 32, 16]
    assert case.type_names() == ["float32", "float16"]
    assert "GE" in case.words() and "EQ" in case.words()


def test_case_params_by_name_by_list_and_by_position():
    a, b = Param(name="T.case1", row=1), Param(name="T.case2", row=2)
    assert ug.case_params({"case_params_list": [a, b]}, ["T.case2", "T.case1"])[0]["row"] == 2
    c, d = Param(row=3), Param(row=4)
    found = {"case_params_list": [c, d], "case_name_list": ["T.x", "T.y"]}
    assert [p["row"] for p in ug.case_params(found, ["T.y", "T.x"])] == [4, 3]
    assert [p["row"] for p in ug.case_params({"cases": [c, d]}, ["u", "v"])] == [3, 4]
    assert ug.case_params({"cases": [c]}, ["u", "v"]) == [{}, {}]


def test_valid_region_prefers_valid_parameters_then_the_name():
    assert ug.valid_region(_case("T.c", {"row": 16, "col": 64, "valid_row": 15, "valid_col": 63})) == (15, 63)
    assert ug.valid_region(_case("T.case_float_8x24", {})) == (8, 24)
    assert ug.valid_region(_case("T.case1", {})) is None


def test_file_matrix_takes_the_widest_column_count_that_holds_the_region():
    values = np.arange(16 * 64)
    assert ug.file_matrix(values, (16, 63), [16, 64, 63]).shape == (16, 64)
    assert ug.file_matrix(values[:16], (16, 1), [16, 64]).shape == (16, 1)  # one value per row
    assert ug.file_matrix(values[:10], (16, 1), [16]) is None


def test_scalar_value_reads_the_type_or_a_float32(db):
    assert ug.scalar_value(np.float16(1.5).tobytes(), np.dtype(np.float16)) == 1.5
    assert ug.scalar_value(struct.pack("f", -3.0), np.dtype(np.float16)) == -3.0
    assert ug.scalar_value(struct.pack("f", 7.0), np.dtype(np.int32)) == 7  # an int written as a float32
    assert ug.scalar_value(np.int32(7).tobytes(), np.dtype(np.int32)) == 7
    with pytest.raises(ValueError):
        ug.scalar_value(b"\x00" * 3, np.dtype(np.float32))


def test_assign_files_goldens_scalars_sources_and_initial_destination(db):
    (tadds,) = ug.assign_files(db.ops["tadds"], {"golden": 256, "input": 256, "divider": 4}, [1, 2, 4, 8])
    assert (tadds.outputs, tadds.sources) == ({"dst": "golden"}, {"src0": "input"})
    assert tadds.scalars == {"scalar": "divider"}
    value_index = [a for a in ug.assign_files(db.ops["trowargmax"], {"golden": 64, "golden_val": 64, "input": 512},
                                              [1, 2, 4, 8])]
    assert [a.mode.name for a in value_index] == ["value_index"]
    assert value_index[0].outputs == {"dstVal": "golden_val", "dstIdx": "golden"}
    (taxpy,) = ug.assign_files(db.ops["taxpy"], {"golden": 64, "input_src": 64, "input_dst": 64, "scalar": 4},
                               [1, 2, 4, 8])
    assert taxpy.sources == {"dst": "input_dst", "src0": "input_src"}
    # a one-element file is a tile when the mode has no scalar operand
    modes = ug.assign_files(db.ops["trowexpandadd"], {"golden": 64, "input1": 64, "input2": 4}, [1, 2, 4, 8])
    assert modes and all(a.sources == {"src0": "input1", "src1": "input2"} for a in modes)


def test_bindings_follow_the_named_types_and_leave_the_rest_to_the_validator(db):
    (a,) = ug.assign_files(db.ops["tadd"], {"golden": 128, "input1": 128, "input2": 128}, [1, 2, 4, 8])
    case = _case("TADDTest.case_int64_4x4", {}, golden=b"\0" * 128, input1=b"\0" * 128, input2=b"\0" * 128)
    assert ug.bindings(db, db.ops["tadd"], a, "a5", case) == [{"T": "i64"}]  # not in the a5 table: judged
    outcome, detail = ug.compare_case(db, db.ops["tadd"], "a5", case)
    assert outcome == "spec-rejects" and "[dtype.t]" in detail


def test_derived_extents_keep_or_scale_a_block_per_row(db):
    op = db.ops["trowexpandadd"]
    mode = next(m for m in op.modes if m.name == "block")
    base = ug.with_dtypes(db, mode, ug.example_tiles(db, mode), {"T": "f32"})
    combos = ug.derived_extents(base, (4, 32))
    assert {c["src1"] for c in combos} == {(4, 8), (4, 16)}
    assert all(c["dst"] == (4, 32) for c in combos)


def test_extents_the_case_names_for_an_operand_are_tried(db):
    # a block of f16 is 16 wide: neither the f32 example's 8 nor its scaling gives it, the parameters do
    op = db.ops["trowexpanddiv"]
    mode = next(m for m in op.modes if m.name == "block")
    case = _case("T.case_fp16_8_128", {"src1_row": 8, "src1_col": 16, "src0eqdst": True, "dst_col": 128})
    named = ug.operand_extents(mode, case)
    assert named == {"src1": {0: 8, 1: 16}, "dst": {1: 128}}
    base = ug.with_dtypes(db, mode, ug.example_tiles(db, mode), {"T": "f16"})
    assert (8, 16) in {c["src1"] for c in ug.derived_extents(base, (8, 128), named=named)}
    assert (8, 16) not in {c["src1"] for c in ug.derived_extents(base, (8, 128))}
    rng = np.random.default_rng(3)
    src0 = rng.uniform(1, 2, (8, 128)).astype(np.float16)
    block = rng.uniform(1, 2, (8, 16)).astype(np.float16)
    golden = src0 / np.tile(block, (1, 8))
    got = ug.compare_case(db, op, "a5", _case("T.case_fp16_8_128", {"dtype": np.float16, "dst_row": 8, "dst_col": 128,
                                                                      "src1_row": 8, "src1_col": 16},
                                                input0=src0, input1=block, golden=golden))
    assert got == ("agree", "block")


def test_a_parameter_ending_in_an_operand_name_types_it(db):
    # dtype_mask names the mask's type: T = u32 and M = u16, not the other way round
    src = np.arange(16, dtype=np.uint32).reshape(2, 8)
    mask = np.array([[0b1010_1010, 0], [0xFF, 0]], dtype=np.uint16)
    golden = np.where(np.unpackbits(mask.view(np.uint8), axis=1, bitorder="little")[:, :8] == 1, src, 7)
    case = _case("TSELSTest.case_uint32_uint16_2x8", {"dtype": np.uint32, "dtype_mask": np.uint16, "valid_row": 2,
                                                      "valid_col": 8},
                 mask=mask, input1=src, input2=np.array([7], np.uint32), golden=golden.astype(np.uint32))
    (a, *_) = ug.assign_files(db.ops["tsels"], {k: len(v) for k, v in case.files.items()}, [1, 2, 4, 8])
    assert ug.bindings(db, db.ops["tsels"], a, "a2a3", case)[0]["M"] == "u16"
    assert ug.compare_case(db, db.ops["tsels"], "a2a3", case)[0] == "agree"


def test_elementwise_case_agrees_and_a_wrong_golden_is_a_value_disagreement(db):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
    params = {"dtype": np.float32, "tile_row": 8, "tile_col": 16, "valid_row": 8, "valid_col": 15}
    good = _case("TADDTest.case1", params, input1=a, input2=b, golden=a + b)
    assert ug.compare_case(db, db.ops["tadd"], "a2a3", good) == ("agree", "default")
    wrong = (a + b).copy()
    wrong[3, 4] += 1
    outcome, detail = ug.compare_case(db, db.ops["tadd"], "a2a3", _case("TADDTest.case1", params, input1=a, input2=b,
                                                                         golden=wrong))
    assert outcome == "value" and "[3, 4]" in detail
    wrong[3, 4] = a[3, 4] + b[3, 4]
    wrong[0, 15] = 99  # outside the valid region: not compared
    assert ug.compare_case(db, db.ops["tadd"], "a2a3", _case("TADDTest.case1", params, input1=a, input2=b,
                                                             golden=wrong))[0] == "agree"


def test_row_reduction_and_block_expansion_cases(db):
    rng = np.random.default_rng(2)
    src = rng.integers(-9, 9, (16, 32)).astype(np.float32)
    golden = np.zeros((16, 32), np.float32)
    golden[:, 0] = src[:, :31].sum(axis=1)
    params = {"dtype": np.float32, "tile_row": 16, "tile_col": 32, "valid_row": 16, "valid_col": 31}
    assert ug.compare_case(db, db.ops["trowsum"], "cpu", _case("T.c", params, input=src, golden=golden))[0] == "agree"
    src0 = rng.standard_normal((4, 32)).astype(np.float32)
    block = rng.standard_normal((4, 8)).astype(np.float32)
    want = src0 + np.tile(block, (1, 4))  # a 32-byte block per row, repeated along the row
    params = {"datatype": np.float32, "valid_row": 4, "valid_col": 32, "row": 4, "col": 32}
    assert ug.compare_case(db, db.ops["trowexpandadd"], "a2a3",
                           _case("T.c", params, input1=src0, input2=block, golden=want)) == ("agree", "block")
    assert ug.compare_case(db, db.ops["trowexpandadd"], "a2a3", _case("T.c", params, input1=src0, input2=block,
                                                                     golden=want + 1))[0] == "value"


def test_a_file_named_after_an_output_is_expected_and_named_shapes_give_a_width(db):
    modes = ug.assign_files(db.ops["tcolargmax"], {"golden": 64, "idx": 64, "input": 512}, [1, 2, 4, 8])
    assert [(a.mode.name, a.outputs) for a in modes] == [("value_index", {"dstVal": "golden", "dstIdx": "idx"})]
    column = np.arange(16)  # a 16x1 tile written whole: rows 0 and 1 are its first two elements
    assert ug.file_matrix(column, (2, 1), [16, 1, 2], ((16, 1), (2, 16)))[:2, 0].tolist() == [0, 1]


def test_parameter_types_rule_out_contradicting_bindings(db):
    src = np.arange(8, dtype=np.int16).reshape(1, 8)
    case = _case("TCVTTest.case_fp16_1x8", {"srctype": np.int16, "dsttype": np.float32, "m": 1, "n": 8},
                 x1_gm=src, golden=src.astype(np.float32))
    (a, *_) = ug.assign_files(db.ops["tcvt"], {k: len(v) for k, v in case.files.items()}, [1, 2, 4, 8])
    assert ug.bindings(db, db.ops["tcvt"], a, "a2a3", case)[0] == {"T": "i16", "U": "f32"}


def test_indistinguishable_modes_are_each_tried(db):
    src = np.arange(1, 33, dtype=np.float32).reshape(2, 16)
    params = {"dtype": np.float32, "valid_row": 2, "valid_col": 16}
    scalar = struct.pack("f", 4.0)
    tile_first = _case("TDIVSTest.case1", params, input=src, divider=scalar, golden=src / 4)
    scalar_first = _case("TDIVSTest.case2", params, input=src, divider=scalar, golden=4 / src)
    assert ug.compare_case(db, db.ops["tdivs"], "a2a3", tile_first) == ("agree", "default")
    assert ug.compare_case(db, db.ops["tdivs"], "a2a3", scalar_first) == ("agree", "scalar_tile")
    wrong = _case("TDIVSTest.case3", params, input=src, divider=scalar, golden=src / 4 + 1)
    assert ug.compare_case(db, db.ops["tdivs"], "a2a3", wrong)[0] == "value"


def test_a_disagreement_a_difference_observes_for_the_script_is_recorded(db):
    src = (np.arange(32, dtype=np.float32) / 3).reshape(1, 32)
    case = _case("TCVTTest.case_fp32_fp32_1x32", {"srctype": np.float32, "dsttype": np.float32, "m": 1, "n": 32,
                                                         "mode": "RoundMode::CAST_RINT"},
                 x1_gm=src, golden=np.rint(src))
    script = "tests/npu/a2a3/src/st/testcase/tcvt/gen_data.py"
    outcome, detail = ug.compare_case(db, db.ops["tcvt"], "a2a3", case, script)
    assert outcome == "recorded" and detail.startswith("float-target-rounding")
    assert ug.compare_case(db, db.ops["tcvt"], "a2a3", case, "elsewhere/gen_data.py")[0] == "value"
    assert ug.compare_case(db, db.ops["tcvt"], "cpu", case, script)[0] == "value"  # not observed on cpu


def test_operands_shapes_from_parameters_and_name(db):
    mode = db.ops["tpartargmax"].modes[0]
    params = _case("T.case_fp32_8x512_3x211_8x512", {"dst_vr": 8, "dst_vc": 512, "src0_vr": 3, "src0_vc": 211,
                                                      "src0_tr": 3, "src0_tc": 512})
    shapes = ug.named_shapes(mode, params)
    assert shapes["src0"] == {"valid": (3, 211), "tile": (3, 512)}
    assert shapes["src0Idx"] == shapes["src0"] and shapes["dstIdx"] == {"valid": (8, 512)}  # companions
    named = ug.named_shapes(mode, _case("T.case_float_64x64_src1_32x32", {}))
    assert named == {"src1": {"valid": (32, 32)}, "src1Idx": {"valid": (32, 32)}}
    # <operand>_row/_col are tile shapes when the case names a valid region apart from them
    ttrans = db.ops["ttrans"].modes[0]
    case = _case("T.c", {"dst_row": 16, "dst_col": 32, "src_row": 32, "src_col": 16, "valid_row": 31, "valid_col": 15})
    assert ug.named_shapes(ttrans, case) == {"dst": {"tile": (16, 32)}, "src": {"tile": (32, 16)}}
    assert ug.named_shapes(ttrans, _case("T.c", {"src_row": 32, "src_col": 16})) == {}


def test_a_smaller_source_the_name_gives_is_configured(db):
    rng = np.random.default_rng(5)
    src0, src1 = rng.standard_normal((16, 16)).astype(np.float32), rng.standard_normal((16, 16)).astype(np.float32)
    golden = src0.copy()
    golden[:8, :8] += src1[:8, :8]  # src1 valid 8x8 in a 16x16 tile; its file holds the whole tile
    case = _case("T.case_float_16x16_src1_8x8", {}, input1=src0, input2=src1, golden=golden)
    assert ug.compare_case(db, db.ops["tpartadd"], "cpu", case) == ("agree", "default")
    # per-operand valid parameters, the smaller source's file holding only its valid region
    small = rng.standard_normal((16, 8)).astype(np.float32)
    golden = src0.copy()
    golden[:, :8] += small
    params = {"dtype": np.float32, "dst_vr": 16, "dst_vc": 16, "src0_vr": 16, "src0_vc": 16, "src1_vr": 16,
              "src1_vc": 8}
    case = _case("T.case_float_16x16_16x16_16x8", params, input1=src0, input2=small, golden=golden)
    assert ug.compare_case(db, db.ops["tpartadd"], "a5", case) == ("agree", "default")


def test_worded_files_pair_with_numbered_operands(db):
    sizes = {"golden_val": 64, "golden_idx": 64, "input0_val": 64, "input1_val": 64, "input0_idx": 64,
             "input1_idx": 64}
    (a,) = ug.assign_files(db.ops["tpartargmax"], sizes, [1, 2, 4, 8])
    assert a.sources == {"src0": "input0_val", "src1": "input1_val", "src0Idx": "input0_idx",
                         "src1Idx": "input1_idx"}
    assert a.outputs == {"dst": "golden_val", "dstIdx": "golden_idx"}


def test_a_tie_keeps_src0_on_hardware_and_src1_on_the_simulator(db):
    src0 = np.array([[1, 5, 3, 3, 0, 0, 0, 0]], np.float32)
    src1 = np.array([[2, 4, 3, 3, 0, 0, 0, 0]], np.float32)
    idx0, idx1 = np.full((1, 8), 10, np.uint32), np.full((1, 8), 20, np.uint32)
    params = {"dst_vr": 1, "dst_vc": 8}
    for profile, tie in (("a5", 10), ("a2a3", 10), ("cpu", 20)):
        want = np.array([[20, 10, tie, tie, tie, tie, tie, tie]], np.uint32)
        case = _case("T.case_fp32_uint32_1x8", params, input0_val=src0, input1_val=src1, input0_idx=idx0,
                     input1_idx=idx1, golden_val=np.maximum(src0, src1), golden_idx=want)
        assert ug.compare_case(db, db.ops["tpartargmax"], profile, case)[0] == "agree", profile


def test_a_transposing_modes_output_reads_the_case_shape_mirrored(db):
    rng = np.random.default_rng(6)
    src = rng.integers(1, 9, (40, 16)).astype(np.float16)  # a 40x16 source tile, valid 16x16
    golden = np.zeros((16, 40), np.float16)
    golden[:, :16] = src[:16].T
    case = _case("T.case9_half_40_16_16_16", {"dtype": np.float16, "tile_row": 40, "tile_col": 16, "valid_row": 16,
                                                "valid_col": 16}, input=src, golden=golden)
    assert ug.compare_case(db, db.ops["ttrans"], "a2a3", case) == ("agree", "default")


def test_ordinals_are_no_extents_and_float_files_are_not_bit_packed():
    case = _case("TDEQUANTTest.case2", {"row": 128, "col": 128, "valid_row": 64, "valid_col": 64})
    assert case.numbers() == [128, 64]
    assert _case("T.test0_int16_8", {}).numbers() == [16, 8]
    per_row = np.zeros(128, np.float32)  # one value per row: not 64 rows of 2 (the bits of a 64x64 mask)
    assert ug.file_matrix(per_row, (64, 1), case.numbers(), case.shapes()).shape == (128, 1)
    mask = np.zeros(128, np.uint32)
    assert ug.file_matrix(mask, (64, 1), case.numbers(), case.shapes()).shape == (64, 2)


def test_operands_as_wide_as_their_files_when_every_configuration_leaves_one_over(db):
    src = np.arange(4 * 32, dtype=np.int32).reshape(4, 32)
    case = _case("TDEINTERLEAVETest.case_5", {"dtype": np.int32, "row": 4, "col": 16, "mode": 1},
                 src=src, dst0=src[:, 0::2].copy(), dst1=src[:, 1::2].copy())
    assert ug.compare_case(db, db.ops["tdeinterleave"], "cpu", case) == ("agree", "single")


def test_an_index_file_named_indexes_goes_to_idx(db):
    # upstream's TSCATTER writes indexes.bin: without the alias, files in order would put it into src
    rng = np.random.default_rng(7)
    src = rng.uniform(0, 100, (4, 16)).astype(np.float32)
    idx = (rng.integers(0, 2, (4, 16)) * 16 + np.arange(16)).astype(np.int32)
    golden = np.zeros(64, np.float32)
    for (i, j), k in np.ndenumerate(idx):
        golden[k] = src[i, j]
    case = _case("TSCATTERTest.case_float_int32_4x16_4x16", {"data_type": np.float32, "idx_type": np.int32,
                                                              "row": 4, "col": 16},
                 input=src, indexes=idx, golden=golden)
    (a, *_) = ug.assign_files(db.ops["tscatter"], {k: len(v) for k, v in case.files.items()}, [1, 2, 4, 8])
    assert a.sources == {"src": "input", "idx": "indexes"}
    assert ug.compare_case(db, db.ops["tscatter"], "a5", case) == ("agree", "index")


def test_an_instruction_without_data_semantics_is_not_compared(db):
    # the simulator's TGET_SCALE_ADDR re-points dst at src: its golden is src, a placement the executor does
    # not model (it returns dst as it was), so no value is compared
    src = np.arange(16 * 32, dtype=np.uint8).reshape(16, 32)
    case = _case("TGET_SCALE_ADDRTest.case_uint8_16x32_16x32", {"dtype": np.uint8, "src_row": 16, "src_col": 32},
                 input=src, golden=src)
    outcome, detail = ug.compare_case(db, db.ops["tget_scale_addr"], "cpu", case)
    assert outcome == "not-mapped" and "no data semantics (effect: placement)" in detail


def test_a_case_naming_one_type_per_variable_is_judged_with_those_types(db):
    # f32 data with u16 indices: no row of the cpu table pairs them, so the case is not run as u16 data
    src = np.arange(64, dtype=np.float32).reshape(2, 32)
    idx = np.arange(32, dtype=np.uint16).reshape(1, 32)
    golden = np.zeros(64, np.float32)
    golden[:32] = src[0]
    case = _case("TSCATTERTest.case_float_uint16_2x32_1x32", {}, input1=src, input2=idx, golden=golden)
    (a, *_) = ug.assign_files(db.ops["tscatter"], {k: len(v) for k, v in case.files.items()}, [1, 2, 4, 8])
    assert ug.bindings(db, db.ops["tscatter"], a, "cpu", case) == [{"T": "f32", "I": "u16"}]
    outcome, detail = ug.compare_case(db, db.ops["tscatter"], "cpu", case)
    assert outcome == "spec-rejects" and "[dtype.i]" in detail
    # a parameter naming an operand keeps its type; the other variable takes the remaining named type
    case = _case("TGATHERTest.case9_int64_u32_4x16_4x16", {"src0type": np.int64, "src1type": np.uint32},
                 src0=np.zeros(64, np.int64), src1=np.zeros(64, np.uint32), golden=np.zeros(64, np.int64))
    index = next(a for a in ug.assign_files(db.ops["tgather"], {k: len(v) for k, v in case.files.items()},
                                            [1, 2, 4, 8]) if a.mode.name == "index")
    assert ug.bindings(db, db.ops["tgather"], index, "a5", case) == [{"T": "i64", "I": "u32"}]
    # a parameter typing another mode's operand (src_type: TGATHER's mask form) leaves the bindings alone
    other = _case("TGATHERTest.case8_i8_topk", {"src_type": np.int8, "dst_type": np.uint32},
                  src0=np.zeros(64, np.int64), src1=np.zeros(64, np.uint32), golden=np.zeros(64, np.int64))
    assert all(b["I"] != "i8" for b in ug.bindings(db, db.ops["tgather"], index, "a5", other))


def _sorted_pairs(src: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Upstream's TSORT32 golden: per block of 32, (value, index) pairs by value, largest first."""
    rows, cols = src.shape
    out = []
    for i in range(rows):
        for b in range(0, cols, 32):
            order = np.argsort(-src[i, b:b + 32], kind="stable")
            out += [(src[i, b + k], idx[i, b + k]) for k in order]
    return np.array([v for pair in out for v in (pair[0], np.uint32(pair[1]).view(np.float32))], np.float32)


def test_a_proportional_modes_sources_take_the_case_region_and_outputs_their_files(db):
    # TSORT32's destination holds 8 bytes per source element: at a case's 2x32 region the source is 2x32
    # and the destination 2x64 (its golden's width), not both mapped onto the region by the example's ratio
    rng = np.random.default_rng(8)
    for cols, mode in ((32, "aligned"), (13, "tail")):
        src = rng.permutation(np.arange(2 * cols)).astype(np.float32).reshape(2, cols)
        idx = np.arange(2 * cols, dtype=np.uint32).reshape(2, cols)
        case = _case("TSort32Test.case1", {"test_type": np.float32, "rows": 2, "cols": cols},
                     input_arr=src, input_idx=idx, golden_output=_sorted_pairs(src, idx))
        a = next(a for a in ug.assign_files(db.ops["tsort32"], {k: len(v) for k, v in case.files.items()},
                                            [1, 2, 4, 8]) if a.mode.name == mode)
        tiles = ug.domain_shaped(db, db.ops["tsort32"], a, "a5", {"T": "f32", "I": "u32"}, {}, case, (2, cols))
        assert (tiles["src"].valid_shape, tiles["dst"].valid_shape) == ((2, cols), (2, 2 * cols))
        assert ug.compare_case(db, db.ops["tsort32"], "a5", case)[0] == "agree"
    # a mode that keeps no proportions is left to the other configurations
    (tadd,) = ug.assign_files(db.ops["tadd"], {"golden": 128, "input1": 128, "input2": 128}, [1, 2, 4, 8])
    assert ug.domain_shaped(db, db.ops["tadd"], tadd, "a5", {"T": "f32"}, {}, case, (2, 16)) is None


def test_a_file_named_after_a_scratch_operand_is_set_aside(db):
    # upstream's A2/A3 TSORT32 writes zeros to input_tmp.bin; tmp's contents change no result
    modes = ug.assign_files(db.ops["tsort32"], {"golden_output": 512, "input_arr": 256, "input_idx": 256,
                                                "input_tmp": 128}, [1, 2, 4, 8])
    tail = next(a for a in modes if a.mode.name == "tail")
    assert tail.sources == {"src": "input_arr", "idx": "input_idx"} and tail.outputs == {"dst": "golden_output"}


def test_run_script_collects_case_directories_in_a_scratch_directory(tmp_path):
    script = tmp_path / "gen_data.py"
    script.write_text(
        "import os\nimport numpy as np\n"
        "class P:\n    def __init__(self, name, n):\n        self.name, self.n = name, n\n"
        "if __name__ == '__main__':\n"
        "    os.makedirs(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'testcases'))\n"
        "    case_params_list = [P('T.a', 2), P('T.b', 3)]\n"
        "    for p in case_params_list:\n"
        "        os.makedirs(p.name)\n        os.chdir(p.name)\n"
        "        np.arange(p.n, dtype=np.float32).tofile('golden.bin')\n        os.chdir('..')\n")
    cases, found, error = ug.run_script(script)
    assert error is None
    assert [(name, {k: len(v) for k, v in files.items()}) for name, files in cases] == [("T.a", {"golden": 8}),
                                                                                        ("T.b", {"golden": 12})]
    assert [p["n"] for p in ug.case_params(found, [n for n, _ in cases])] == [2, 3]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen_data.py"]  # nothing written beside the script


def test_run_script_imports_helpers_from_the_checkout_root(tmp_path):
    helper = tmp_path / "tests" / "cpu" / "st"
    helper.mkdir(parents=True)
    for d in (tmp_path / "tests", tmp_path / "tests" / "cpu", helper):
        (d / "__init__.py").write_text("")
    (helper / "helper_mod.py").write_text("WIDTH = 3\n")
    script = helper / "testcase" / "top" / "gen_data.py"
    script.parent.mkdir(parents=True)
    script.write_text("import numpy as np\nfrom tests.cpu.st.helper_mod import WIDTH\n"
                      "np.arange(WIDTH, dtype=np.float32).tofile('golden.bin')\n")
    cases, _, error = ug.run_script(script)
    assert error is None and [len(f["golden"]) for _, f in cases] == [12]


def test_run_script_reports_a_failing_script(tmp_path):
    script = tmp_path / "gen_data.py"
    script.write_text("raise RuntimeError('boom')\n")
    cases, _, error = ug.run_script(script)
    assert cases == [] and error == "RuntimeError: boom"


@pytest.mark.skipif(not (PTO_ISA / "tests/npu/a2a3/src/st/testcase/tadd/gen_data.py").is_file(),
                    reason="needs the pto-isa checkout (PTO_ISA_ROOT, default /tmp/pto-isa)")
def test_upstream_tadd_and_trowexpandadd_goldens_agree(db):
    def outcomes(op: str, profile: str) -> list[tuple[str, str]]:
        cases, found, error = ug.run_script(PTO_ISA / ug.PLATFORMS[profile] / op / "gen_data.py")
        assert cases, error
        params = ug.case_params(found, [n for n, _ in cases])
        return [ug.compare_case(db, db.ops[op], profile, ug.Case(n, f, p))
                for (n, f), p in zip(cases, params, strict=True)]

    tadd = outcomes("tadd", "a2a3")
    assert [o for o, _ in tadd] == ["agree"] * len(tadd)
    expand = outcomes("trowexpandadd", "a2a3")
    assert {mode for o, mode in expand if o == "agree"} == {"column", "block"}  # both upstream forms mapped
    assert sum(o == "agree" for o, _ in expand) >= 18


def test_scripts_and_variant_directories(db, tmp_path):
    base = tmp_path / ug.PLATFORMS["cpu"]
    for name in ("tadd", "tload_mix", "trowexpandadd", "trowexpand_tdiv", "tnosuchop"):
        (base / name).mkdir(parents=True)
        (base / name / "gen_data.py").write_text("")
    assert [(op, p) for op, p, _ in ug.scripts_of(db, tmp_path)] == [("tadd", "cpu"), ("trowexpandadd", "cpu")]
    assert ug.variant_dirs(db, tmp_path) == [("tload", "cpu", "tload_mix"), ("trowexpand", "cpu", "trowexpand_tdiv")]


def test_a_case_naming_a_variant_of_its_directory_op_runs_as_that_variant(db):
    tmatmul = db.ops["tmatmul"]
    assert ug.variant_op(db, tmatmul, _case("TMATMULBIASTest.case8", {})).name == "tmatmul_bias"
    assert ug.variant_op(db, tmatmul, _case("TMATMULTest.case_bias_gemm", {})).name == "tmatmul_bias"
    assert ug.variant_op(db, tmatmul, _case("TMATMULTest.case_gemm", {})).name == "tmatmul"
    assert ug.variant_op(db, db.ops["tadd"], _case("TADDTest.case_bias", {})).name == "tadd"


def test_a_scalar_without_a_file_takes_the_case_parameter_of_its_name(db):
    files = {"golden": 1024, "input0": 1024}
    assert not [a for a in ug.assign_files(db.ops["tmrgsort"], files, [1, 2, 4, 8]) if a.mode.name == "single"]
    (single,) = [a for a in ug.assign_files(db.ops["tmrgsort"], files, [1, 2, 4, 8], {"block_len": 64, "row": 1})
                 if a.mode.name == "single"]
    assert single.sources == {"src": "input0"} and single.scalar_params == {"blockLen": "block_len"}


# specs/goldens.yaml: a directory's facts as data, read before the name matching

TCONCAT = "tests/npu/a2a3/src/st/testcase/tconcat/gen_data.py"


def _concat_case(valid_col0: int, golden_shift: int = 0):
    params = {"dtype": np.float32, "dst_tile_row": 16, "dst_tile_col": 64, "src0_tile_row": 16, "src0_tile_col": 32,
              "src1_tile_row": 16, "src1_tile_col": 32, "valid_row": 16, "valid_col0": valid_col0, "valid_col1": 32}
    rng = np.random.default_rng(3)
    a = np.zeros((16, 32), np.float32)
    a[:, :valid_col0] = rng.uniform(-9, 9, (16, valid_col0))
    b = rng.uniform(-9, 9, (16, 32)).astype(np.float32)
    golden = np.zeros((16, 64), np.float32)
    golden[:, :valid_col0] = a[:, :valid_col0]
    golden[:, valid_col0:valid_col0 + 32] = b + golden_shift
    return _case(f"TCONCATTest.case_float_16x64_16x32_16x32_16x{valid_col0}_16x32", params,
                 input1=a, input2=b, golden=golden)


def test_a_directory_entry_gives_the_shapes_the_names_do_not(db):
    # the name's five shapes are dst, src0, src1 tiles and the two valid regions: only the entry says so
    assert ug.compare_case(db, db.ops["tconcat"], "a2a3", _concat_case(31), TCONCAT) == ("agree", "default")
    assert ug.compare_case(db, db.ops["tconcat"], "a2a3", _concat_case(32, golden_shift=1), TCONCAT)[0] == "value"
    assert ug.compare_case(db, db.ops["tconcat"], "a2a3", _concat_case(32))[0] != "agree"  # no entry: misread


def test_goldens_yaml_is_checked_against_the_database(tmp_path):
    import shutil

    from ptospec.goldens import load_goldens
    from ptospec.loader import DatabaseErrors

    root = tmp_path / "specs"
    shutil.copytree(ROOT / "specs", root)
    data = load_database()
    text = (root / "goldens.yaml").read_text()
    bad = text.replace("mode: default", "mode: nosuch").replace("input1: src0", "input1: srcX") \
        .replace("valid_col0 + valid_col1", "valid_col0 ^ 2")
    (root / "goldens.yaml").write_text(bad)
    with pytest.raises(DatabaseErrors) as raised:
        load_goldens(data, root)
    rules = {e.rule for e in raised.value.errors}
    assert {"goldens.mode", "goldens.operand", "goldens.extent"} <= rules
    (root / "goldens.yaml").write_text(text.replace("op: tquant", "op: tnosuch"))
    with pytest.raises(DatabaseErrors, match="problem"):
        load_goldens(data, root)


def test_extents_are_integer_expressions_of_parameters():
    from ptospec.goldens import parse_extent

    assert parse_extent("(k + 63) // 64 * 2").value({"k": 72}) == 4
    assert parse_extent("roundup(n, max(c0_a, 16))").value({"n": 50, "c0_a": 8}) == 64
    assert parse_extent("gshape0 * gshape1 + 1").value({"gshape0": 2, "gshape1": 3}) == 7
    assert parse_extent("m").value({}) is None  # a missing parameter
    for bad in ("m ^ 2", "m +", "nosuch(m, 2)", "roundup(m)", "(m"):
        with pytest.raises(ValueError):
            parse_extent(bad)


TSTORE = "tests/npu/a2a3/src/st/testcase/tstore/gen_data.py"


def _tstore_case(layout: str, shape: tuple[int, ...], whole: tuple[int, ...], shift: int = 0):
    rng = np.random.default_rng(3)
    buffer_shape = whole if layout != "DN" else (*whole[:3], whole[4], whole[3])
    region = shape if layout != "DN" else (*shape[:3], shape[4], shape[3])
    src = rng.integers(-5, 5, buffer_shape).astype(np.float32)
    golden = np.zeros(buffer_shape, np.float32)
    index = tuple(slice(0, n) for n in region)
    golden[index] = src[index] + shift
    params = {"datatype": np.float32, "format": layout,
              **{f"gShape{i}": n for i, n in enumerate(shape)}, **{f"gWholeShape{i}": n for i, n in enumerate(whole)}}
    return _case(f"TStoreTest.{layout}_float", params, input=src, golden=golden)


def test_an_entry_reads_a_region_of_a_larger_view_through_its_buffer(db):
    # TSTORE's cases: TLOAD a region (gShape) of input.bin's tensor, TSTORE it into a zeroed one (golden.bin)
    op = db.ops["tstore"]
    for layout in ("ND", "DN"):
        case = _tstore_case(layout, (1, 2, 1, 3, 20), (2, 2, 2, 5, 24))
        assert ug.compare_case(db, op, "a2a3", case, TSTORE) == ("agree", "default"), layout
    wrong = _tstore_case("ND", (1, 2, 1, 3, 20), (2, 2, 2, 5, 24), shift=1)
    assert ug.compare_case(db, op, "a2a3", wrong, TSTORE)[0] == "value"


def test_entries_select_cases_by_parameters_and_say_why_a_case_is_not_mapped(db):
    from ptospec.goldens import entry_for, load_goldens

    entries = load_goldens(db)
    mm = "tests/npu/a5/src/st/testcase/tmatmul/gen_data.py"
    hif8 = _case("TMATMULTest.case10", {"atype": np.uint8, "btype": np.uint8, "ctype": np.float32, "m": 2, "k": 32,
                                        "n": 16, "is_bias": False}, x1_gm=np.zeros(64, np.uint8))
    assert ug.compare_case(db, db.ops["tmatmul"], "a5", hif8, mm)[0] == "not-mapped"
    assert "hifloat8" in ug.compare_case(db, db.ops["tmatmul"], "a5", hif8, mm)[1]
    assert entry_for(entries, "a5", "tmatmul", ["CASE"], {"is_bias": True, "bias_type": "float32"}).op == "tmatmul_bias"
    assert entry_for(entries, "a5", "tmatmul", ["CASE"], {"is_bias": False}).op == "tmatmul"
    assert entry_for(entries, "a5", "nosuch", [], {}) is None


def test_a_matmul_entry_binds_the_parameters_types_and_aligns_the_tiles(db):
    rng = np.random.default_rng(5)
    m, k, n = 5, 40, 11
    a = rng.integers(-4, 4, (m, k)).astype(np.float16)
    b = rng.integers(-4, 4, (k, n)).astype(np.float16)
    bias = rng.integers(1, 9, n).astype(np.float32)
    golden = (a.astype(np.float32) @ b.astype(np.float32) + bias).astype(np.float32)
    params = {"atype": np.float16, "btype": np.float16, "ctype": np.float32, "m": m, "k": k, "n": n,
              "is_bias": True, "bias_type": np.float32}
    case = _case("TMATMULBIASTest.case1", params, x1_gm=a, x2_gm=b, bias_gm=bias, golden=golden)
    script = "tests/npu/a2a3/src/st/testcase/tmatmul/gen_data.py"
    assert ug.compare_case(db, db.ops["tmatmul"], "a2a3", case, script) == ("agree", "default")


def test_mx_scales_are_loaded_from_their_global_layout(db):
    # x1_mx_gm in zZ blocks [1, M/16, kMX/2, 16, 2], x2_mx_gm in nN blocks [1, N/16, kMX/2, 16, 2]: E8M0 codes
    import ml_dtypes

    rng = np.random.default_rng(7)
    m, k, n = 16, 64, 16
    a = rng.integers(-4, 4, (m, k)).astype(ml_dtypes.float8_e5m2)
    b = rng.integers(-4, 4, (k, n)).astype(ml_dtypes.float8_e5m2)
    sa = rng.integers(126, 129, (m, 2)).astype(np.uint8)
    sb = rng.integers(126, 129, (2, n)).astype(np.uint8)
    scale_a, scale_b = 2.0 ** (sa.astype(np.float64) - 127), 2.0 ** (sb.astype(np.float64) - 127)
    wide_a = a.astype(np.float64) * np.repeat(scale_a, 32, axis=1)
    wide_b = b.astype(np.float64) * np.repeat(scale_b, 32, axis=0)
    golden = (wide_a @ wide_b).astype(np.float32)
    zz = sa.reshape(1, 16, 1, 2).transpose(0, 2, 1, 3)  # [M/16, kMX/2, 16, 2]
    nn = sb.reshape(1, 2, 1, 16).transpose(2, 0, 3, 1)  # [N/16, kMX/2, 16, 2]
    params = {"atype": ml_dtypes.float8_e5m2, "btype": ml_dtypes.float8_e5m2, "ctype": np.float32, "m": m, "k": k,
              "n": n, "is_bias": False, "scale_a_format": "zz", "scale_b_format": "nn"}
    case = _case("TMATMULMXTest.case1", params, x1_gm=a, x2_gm=b, x1_mx_gm=zz, x2_mx_gm=nn, golden=golden)
    script = "tests/npu/a5/src/st/testcase/tmatmul_mx/gen_data.py"
    assert ug.compare_case(db, db.ops["tmatmul_mx"], "a5", case, script) == ("agree", "default")
    swapped = _case("TMATMULMXTest.case1", params, x1_gm=a, x2_gm=b, x1_mx_gm=nn, x2_mx_gm=zz, golden=golden)
    assert ug.compare_case(db, db.ops["tmatmul_mx"], "a5", swapped, script)[0] == "value"


def test_entry_attrs_words_and_name_numbers_are_checked_and_read(tmp_path, db):
    import shutil

    from ptospec.goldens import entry_for, load_goldens
    from ptospec.loader import DatabaseErrors

    entries = load_goldens(db)
    u32 = entry_for(entries, "a5", "thistogram", ["CASE", "U32", "1X128", "B3", "K64"], {})
    assert u32 is not None and u32.attrs == {"byte": "BYTE_3"} and u32.word == ("u32", "b3")
    assert entry_for(entries, "a5", "thistogram", ["CASE", "2X100", "B3"], {}) is None  # not a u32 case
    case = _case("THISTOGRAMTest.case_u32_6x912_b2_k64", {})
    # the numbers standing alone between _ and x: b2 and k64 are words
    assert {k: v for k, v in ug.plain_params(case).items() if k.startswith("name")} == {"name1": 6, "name2": 912}
    root = tmp_path / "specs"
    shutil.copytree(ROOT / "specs", root)
    text = (root / "goldens.yaml").read_text()
    (root / "goldens.yaml").write_text(text.replace("attrs: {byte: BYTE_3}", "attrs: {byte: BYTE_9}")
                                       .replace("attrs: {gatherType: GATHER_COL}", "attrs: {nosuch: GATHER_COL}", 1))
    with pytest.raises(DatabaseErrors) as raised:
        load_goldens(db, root)
    assert {e.rule for e in raised.value.errors} == {"goldens.attr"}
