"""benchmarks/upstream_goldens.py and specs/goldens.yaml: upstream gen_data.py cases configured as their entries say.

The adapter's parts run on synthetic cases (NumPy computes the goldens here); the tests over upstream's own
scripts need the pto-isa checkout and are skipped without it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from ptospec.dbcache import load_database_cached
from ptospec.goldens import entry_for, load_goldens, parse_extent
from ptospec.loader import DatabaseErrors

ROOT = Path(__file__).resolve().parents[1]
PTO_ISA = Path(os.environ.get("PTO_ISA_ROOT", "/tmp/pto-isa"))
NEEDS_CHECKOUT = pytest.mark.skipif(not (PTO_ISA / "tests/npu/a2a3/src/st/testcase").is_dir(),
                                    reason="needs the pto-isa checkout (PTO_ISA_ROOT, default /tmp/pto-isa)")


def _load():
    spec = importlib.util.spec_from_file_location("upstream_goldens", ROOT / "benchmarks" / "upstream_goldens.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


ug = _load()


@pytest.fixture(scope="module")
def db():
    return load_database_cached()


@pytest.fixture(scope="module")
def goldens(db):
    return load_goldens(db)


def _case(name: str, params: dict, **arrays) -> object:
    files = {k: (v if isinstance(v, bytes) else np.ascontiguousarray(v).tobytes()) for k, v in arrays.items()}
    return ug.Case(name, files, {k.lower(): v for k, v in params.items()})


def _compare(db, goldens, platform: str, directory: str, case) -> tuple[str, str]:
    """What the benchmark does with one case of the directory: its entry, then the comparison."""
    entry = entry_for(goldens.entries, platform, directory, case.name, case.words(), case.plain_params())
    assert entry is not None, f"no entry of {platform}/{directory} selects {case.name}"
    script = f"{ug.PLATFORMS[platform]}/{directory}/gen_data.py"
    return ug.compare(db, goldens.type_names, entry, platform, case, script)


class Param:
    def __init__(self, **kw):
        self.__dict__.update(kw)


# reading upstream's scripts


def test_case_params_by_name_by_list_by_generator_by_naming_function_and_by_position():
    a, b = Param(name="T.case1", row=1), Param(name="T.case2", row=2)
    assert ug.case_params({"case_params_list": [a, b]}, ["T.case2", "T.case1"])[0]["row"] == 2
    c, d = Param(row=3), Param(row=4)
    assert [p["row"] for p in ug.case_params({"ps": [c, d], "names": ["T.x", "T.y"]}, ["T.y", "T.x"])] == [4, 3]
    assert [p["row"] for p in ug.case_params({"ps": [c, d]}, ["T.a", "T.b"])] == [3, 4]  # by position

    def gen_scalar(dtype, rows, idx_row):
        return None

    found = {"cases": [("T.s", gen_scalar, np.float32, 16, 5), ("T.o", gen_scalar, np.int8, Param(rows=2), 1)]}
    s, o = ug.case_params(found, ["T.s", "T.o"])
    assert s == {"generator": "gen_scalar", "dtype": np.float32, "rows": 16, "idx_row": 5}
    assert o["rows"] == 2 and o["idx_row"] == 1  # an argument object's attributes merged in

    def generate_case_name(p):
        return f"T.case_{p.rows}"

    assert ug.case_params({"ps": [Param(rows=7), Param(rows=9)], "generate_case_name": generate_case_name},
                          ["T.case_9", "T.case_7", "T.other"]) == [{"rows": 9}, {"rows": 7}, {}]
    pairs = {"saturation_test_cases": [("T.p", Param(m=1, n=32)), ("T.q", Param(m=2, n=64))]}
    assert ug.case_params(pairs, ["T.q", "T.p"]) == [{"m": 2, "n": 64}, {"m": 1, "n": 32}]  # (name, object) pairs


def test_plain_params_and_words():
    case = _case("THISTOGRAMTest.case_u32_6x912_b2_k64", {"dtype": np.float16, "shape": (4, 8), "mode": "CmpMode::GE"})
    params = case.plain_params()
    assert (params["name1"], params["name2"], params["dtype"], params["shape_1"]) == (6, 912, "float16", 8)
    assert "name3" not in params  # b2 and k64 are words, not numbers
    nested = _case("T.case_half", {"wins": [(32, 64, 0, 0), (32, 63, 0, 2, 32, 64)]}).plain_params()
    assert (nested["wins_0_1"], nested["wins_1_3"], nested["wins_1_5"]) == (64, 2, 64)  # a sequence of sequences
    assert {"GE", "U32", "B2"} <= set(case.words())


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
        "        np.arange(p.n, dtype=np.float32).tofile('golden.bin')\n        os.chdir('..')\n"
        "    here = os.getcwd()\n"  # a case directory placed beside the script goes to the scratch directory
        "    beside = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'T.c')\n"
        "    os.makedirs(beside)\n    os.chdir(beside)\n"
        "    np.arange(4, dtype=np.float32).tofile('golden.bin')\n    os.chdir(here)\n")
    cases, found, error = ug.run_script(script)
    assert error is None
    assert [(name, {k: len(v) for k, v in files.items()}) for name, files in cases] == [("T.a", {"golden": 8}),
                                                                                        ("T.b", {"golden": 12}),
                                                                                        ("T.c", {"golden": 16})]
    assert [p.get("n") for p in ug.case_params(found, [n for n, _ in cases])] == [2, 3, None]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen_data.py"]  # nothing written beside the script


def test_scripts_draw_the_same_unseeded_random_data_every_run(tmp_path):
    script = tmp_path / "gen_data.py"
    script.write_text(
        "import os, random\nimport numpy as np\n"
        "if __name__ == '__main__':\n"
        "    os.makedirs('T.a')\n    os.chdir('T.a')\n"
        "    np.array([random.random(), *np.random.uniform(size=3)]).tofile('golden.bin')\n")
    state = np.random.get_state()
    first, second = ug.run_script(script)[0], ug.run_script(script)[0]
    assert first == second and first[0][1]["golden"]  # the A2/A3 tsort32 golden no longer moves between outcomes
    assert np.array_equal(np.random.get_state()[1], state[1])  # the caller's generator is left as it was


def test_run_script_reports_a_failing_script(tmp_path):
    script = tmp_path / "gen_data.py"
    script.write_text("raise RuntimeError('boom')\n")
    cases, _, error = ug.run_script(script)
    assert cases == [] and error == "RuntimeError: boom"


def test_scalar_value_and_judge(db):
    assert ug.scalar_value(np.float16(1.5).tobytes(), np.dtype(np.float16)) == 1.5
    assert ug.scalar_value(struct.pack("f", 7.0), np.dtype(np.int32)) == 7  # an int written as a float32
    with pytest.raises(ValueError):
        ug.scalar_value(b"\x00" * 3, np.dtype(np.float32))
    op = db.ops["tadd"]
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert ug.judge(op, "f32", a, a)[0] == "agree"
    assert ug.judge(op, "f32", a, a + 5)[0] == "value"
    assert ug.judge(op, "f32", a, np.full_like(a, np.nan))[0] == "nan"


# cases configured as their entries say


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


def test_an_entry_gives_the_shapes_the_names_do_not(db, goldens):
    # the name's five shapes are dst, src0, src1 tiles and the two valid regions: only the entry says so
    assert _compare(db, goldens, "a2a3", "tconcat", _concat_case(31)) == ("agree", "default")
    assert _compare(db, goldens, "a2a3", "tconcat", _concat_case(32, golden_shift=1))[0] == "value"


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


def test_an_entry_reads_a_region_of_a_larger_view_through_its_buffer(db, goldens):
    # TSTORE's cases: TLOAD a region (gShape) of input.bin's tensor, TSTORE it into a zeroed one (golden.bin)
    for layout in ("ND", "DN"):
        case = _tstore_case(layout, (1, 2, 1, 3, 20), (2, 2, 2, 5, 24))
        assert _compare(db, goldens, "a2a3", "tstore", case) == ("agree", "default"), layout
    wrong = _tstore_case("ND", (1, 2, 1, 3, 20), (2, 2, 2, 5, 24), shift=1)
    assert _compare(db, goldens, "a2a3", "tstore", wrong)[0] == "value"


def test_scalars_and_attributes_from_parameters(db, goldens):
    # TTRI on A5: the form is the template argument upper_or_lower, the diagonal a run-time int
    for upper, diagonal in ((0, 3), (1, -2)):
        params = {"dtype": np.float32, "valid_rows": 5, "valid_cols": 19, "upper_or_lower": upper, "diagonal": diagonal}
        ones = np.ones((5, 19), np.float32)
        golden = np.triu(ones, diagonal) if upper else np.tril(ones, diagonal)
        case = _case("TTRITest.case_float_5x19", params, golden=golden)
        assert _compare(db, goldens, "a5", "ttri", case) == ("agree", "default")
    wrong = _case("TTRITest.case_float_5x19", {**params, "diagonal": 0}, golden=golden)
    assert _compare(db, goldens, "a5", "ttri", wrong)[0] == "value"


def test_an_initial_file_is_an_outputs_contents_before_the_instruction(db, goldens):
    # TINSERT on A5 (case_nd_vec_*): the destination's initial contents, then the source at (idx_row, idx_col)
    rng = np.random.default_rng(4)
    src = rng.uniform(-9, 9, (4, 8)).astype(np.float32)
    init = rng.uniform(-9, 9, (8, 16)).astype(np.float32)
    golden = init.copy()
    golden[2:6, 3:11] = src
    params = {"generator": "gen_nd_vec", "dtype": np.float32, "src_rows": 4, "src_cols": 8, "dst_rows": 8,
              "dst_cols": 16, "idx_row": 2, "idx_col": 3}
    case = _case("TInsertTest.case_nd_vec_1", params, src_input=src, dst_init=init, golden_output=golden)
    assert _compare(db, goldens, "a5", "tinsert", case) == ("agree", "default")
    shifted = _case("TInsertTest.case_nd_vec_1", {**params, "idx_col": 4}, src_input=src, dst_init=init,
                    golden_output=golden)
    assert _compare(db, goldens, "a5", "tinsert", shifted)[0] == "value"


def test_a_matmul_entry_binds_the_parameters_types_and_aligns_the_tiles(db, goldens):
    rng = np.random.default_rng(5)
    m, k, n = 5, 40, 11
    a = rng.integers(-4, 4, (m, k)).astype(np.float16)
    b = rng.integers(-4, 4, (k, n)).astype(np.float16)
    bias = rng.integers(1, 9, n).astype(np.float32)
    golden = (a.astype(np.float32) @ b.astype(np.float32) + bias).astype(np.float32)
    params = {"atype": np.float16, "btype": np.float16, "ctype": np.float32, "m": m, "k": k, "n": n,
              "is_bias": True, "bias_type": np.float32}
    case = _case("TMATMULBIASTest.case1", params, x1_gm=a, x2_gm=b, bias_gm=bias, golden=golden)
    assert _compare(db, goldens, "a2a3", "tmatmul", case) == ("agree", "default")


def test_mx_scales_are_loaded_from_their_global_layout(db, goldens):
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
    assert _compare(db, goldens, "a5", "tmatmul_mx", case) == ("agree", "default")
    swapped = _case("TMATMULMXTest.case1", params, x1_gm=a, x2_gm=b, x1_mx_gm=nn, x2_mx_gm=zz, golden=golden)
    assert _compare(db, goldens, "a5", "tmatmul_mx", swapped)[0] == "value"


def test_entries_select_cases_and_say_why_a_case_is_not_mapped(db, goldens):
    hif8 = _case("TMATMULTest.case10", {"atype": np.uint8, "btype": np.uint8, "ctype": np.float32, "m": 2, "k": 32,
                                        "n": 16, "is_bias": False}, x1_gm=np.zeros(64, np.uint8))
    outcome, reason = _compare(db, goldens, "a5", "tmatmul", hif8)
    assert outcome == "not-mapped" and "hifloat8" in reason
    assert entry_for(goldens.entries, "a5", "tmatmul", "T.c", ["CASE"], {"is_bias": True, "bias_type": "float32"}
                     ).op == "tmatmul_bias"
    assert entry_for(goldens.entries, "a5", "tmatmul", "T.c", ["CASE"], {"is_bias": False}).op == "tmatmul"
    assert entry_for(goldens.entries, "a2a3", "tcolsum", "TCOLSUMTest.case14", [], {}).modes == {"": "binary"}
    assert entry_for(goldens.entries, "a5", "nosuch", "T.c", [], {}) is None


def _nz(a: np.ndarray) -> np.ndarray:
    """The script's nd_to_nz: 16-row fractals of 32-byte columns, column blocks first."""
    rows, cols = a.shape
    c0 = 32 // a.itemsize
    return a.reshape(rows // 16, 16, cols // c0, c0).transpose(2, 0, 1, 3).copy()


def test_an_output_read_back_through_its_nz_view_and_arguments_by_position(db, goldens):
    # textract_vec on A2/A3: ("case name", (dtype, src_rows, src_cols, dst_rows, dst_cols, idx_row)) in nz_cases
    rng = np.random.default_rng(5)
    src = rng.uniform(-9, 9, (32, 32)).astype(np.float32)
    init = rng.uniform(-9, 9, (16, 32)).astype(np.float32)
    params = {"case_list": "nz_cases", "args": (np.float32, 32, 32, 16, 32, 16)}
    case = _case("TExtractVecTest.case_nz_2", params, src_input=_nz(src), dst_init=_nz(init),
                 golden_output=_nz(src[16:]))
    assert _compare(db, goldens, "a2a3", "textract_vec", case) == ("agree", "default")
    wrong = _case("TExtractVecTest.case_nz_2", params, src_input=_nz(src), dst_init=_nz(init), golden_output=src[16:])
    assert _compare(db, goldens, "a2a3", "textract_vec", wrong)[0] == "value"  # the same values in row order


def test_a_spec_reject_names_the_omission_the_differences_record_or_the_rule(db, goldens):
    # TADD i64 on A5: the header admits it, the table leaves it out, and a5-dtypes records why
    case = _case("TADDTest.case_int64_4x16_4x16_4x16_4x16", {"dtype": np.int64, "dst_tile_row": 4, "dst_tile_col": 16,
                 "src0_tile_row": 4, "src0_tile_col": 16, "src1_tile_row": 4, "src1_tile_col": 16, "valid_row": 4,
                 "valid_col": 16}, input1=np.zeros(64, np.int64), input2=np.zeros(64, np.int64),
                 golden=np.zeros(64, np.int64))
    outcome, detail = _compare(db, goldens, "a5", "tadd", case)
    assert outcome == "spec-rejects" and "[dtype.t]" in detail
    assert detail.endswith("{T=i64: an omission the differences record (a5-dtypes)}")
    mode = db.ops["tscatter"].modes[0]
    from ptospec.validator import Violation
    rule = Violation("dtype.i", ("idx",), "x", "static")
    assert ug.rejection_record(db.ops["tscatter"], mode, "cpu", {"T": "f32", "I": "u16"}, [rule]) == \
        "I=u16: a combination the table does not pair (no omission can record one)"
    other = Violation("runtime.x", (), "x", "runtime")
    assert ug.rejection_record(db.ops["tscatter"], mode, "cpu", {}, [other]) == "rule runtime.x"


def test_a_type_variable_may_share_another_ones_type(db, goldens):
    # targreduceop: the name gives the index and source types; tmp (U) has the source's
    name = "TARGREDUCEOPTest.case_row_max_int32_half_16x256_16x256_16x256"
    entry = entry_for(goldens.entries, "cpu", "targreduceop", name, ["CASE", "ROW", "MAX", "INT32", "HALF"], {})
    mode = next(m for m in db.ops["trowargmax"].modes if m.name == "index")
    case = _case(name, {})
    assert ug.binding(db, goldens.type_names, entry, mode, case, {}) == {"I": "i32", "T": "f16", "U": "f16"}


def test_run_directory_reports_a_directory_without_an_entry(db, goldens, tmp_path):
    rows = ug.run_directory(db, goldens, "cpu", "tnosuchdir", tmp_path / "gen_data.py", "x/gen_data.py")
    assert [(r["outcome"], r["detail"]) for r in rows] == [("no-entry", "no entry of specs/goldens.yaml names "
                                                                         "the directory")]


# the data file


def test_every_entry_is_complete_or_says_why_not(goldens):
    for entries in goldens.entries.values():
        for e in entries:
            assert e.unmapped or (e.files and e.modes and (e.types or e.type_words)), (e.dir, e.platforms)
            assert not e.unmapped or len(e.unmapped) > 40, (e.dir, e.unmapped)  # a reason, not a word
            assert not e.unmapped or "no entry gives the files" not in e.unmapped, (e.dir, e.unmapped)  # not a reason


def test_goldens_yaml_is_checked_against_the_database(tmp_path, db):
    root = tmp_path / "specs"
    shutil.copytree(ROOT / "specs", root)
    text = (root / "goldens.yaml").read_text()
    bad = (text.replace("mode: default", "mode: nosuch", 1).replace("input1: src0", "input1: srcX", 1)
           .replace("valid_col0 + valid_col1", "valid_col0 ^ 2", 1)
           .replace("attrs: {byte: BYTE_3}", "attrs: {byte: BYTE_9}")
           .replace("scalars: {diagonal: diagonal}", "scalars: {nosuch: diagonal}")
           .replace("initial: [dst_init]", "initial: [src_input]", 1)
           .replace("float4_e2m1: f4e2m1x2", "float4_e2m1: f4nosuch"))
    (root / "goldens.yaml").write_text(bad)
    with pytest.raises(DatabaseErrors) as raised:
        load_goldens(db, root)
    found = {(e.rule, e.message) for e in raised.value.errors}
    for rule, message in [("goldens.mode", "has no mode 'nosuch'"),  # each planted error, by its own message
                          ("goldens.operand", "file 'input1': no operand 'srcX'"),
                          ("goldens.extent", "'valid_col0 ^ 2'"),
                          ("goldens.attr", "'BYTE_9' is no enumerator"),
                          ("goldens.operand", "scalars: no scalar operand 'nosuch'"),
                          ("goldens.operand", "initial: file 'src_input' is no output's file"),
                          ("goldens.type", "no dtype 'f4nosuch'")]:
        assert any(r == rule and message in m for r, m in found), (rule, message)
    (root / "goldens.yaml").write_text(text.replace("op: tquant", "op: tnosuch", 1))
    with pytest.raises(DatabaseErrors, match="problem"):
        load_goldens(db, root)
    (root / "goldens.yaml").write_text(text + "  - {dir: tnew, source: x, mode: default}\n")
    with pytest.raises(DatabaseErrors) as raised:  # only an unmapped entry may leave its op out
        load_goldens(db, root)
    assert "op" in str(raised.value.errors[0])


def test_extents_are_integer_expressions_of_parameters():
    assert parse_extent("(k + 63) // 64 * 2").value({"k": 72}) == 4
    assert parse_extent("roundup(n, max(c0_a, 16))").value({"n": 50, "c0_a": 8}) == 64
    assert parse_extent("m").value({}) is None  # a missing parameter
    for bad in ("m ^ 2", "m +", "nosuch(m, 2)", "roundup(m)", "(m"):
        with pytest.raises(ValueError):
            parse_extent(bad)


@NEEDS_CHECKOUT
def test_every_upstream_test_directory_has_an_entry(goldens):
    missing = [(p, d) for p, d, _ in ug.test_dirs(PTO_ISA) if (p, d) not in goldens.entries]
    assert not missing


@NEEDS_CHECKOUT
def test_upstream_tadd_and_ttri_goldens_agree(db, goldens):
    for platform, directory in (("a2a3", "tadd"), ("a5", "ttri")):
        script = PTO_ISA / ug.PLATFORMS[platform] / directory / "gen_data.py"
        rows = ug.run_directory(db, goldens, platform, directory, script, "x")
        assert rows and {r["outcome"] for r in rows} == {"agree"}, (directory, rows[:2])
