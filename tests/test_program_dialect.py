"""The assembler's dialect as the assembler reads it: global layouts inferred from shapes and strides, the
instructions it lowers to others on the NPU targets, partitions of dynamic views, its program-level checks,
and the diagnostics of check-program and run-program.  The kernels under tests/programs/ are ptospec's own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ptospec.cli import main
from ptospec.errors import PtospecError
from ptospec.program.api import check_program, read_program, run_program
from ptospec.program.errors import RuleViolation
from ptospec.program.layouts import infer
from ptospec.program.spec import program_spec
from ptospec.program.syntax import parse_program
from ptospec.validator import validate

PROGRAMS = Path(__file__).parent / "programs"


def _rules(result) -> set[str]:
    return {f.rule for f in result.violations}


@pytest.mark.parametrize("shape, strides, bits, layout, ambiguous", [
    ((16, 128), (128, 1), 16, "ND", False),
    ((128, 128), (1, 128), 16, "DN", False),
    ((16, 1), (1, 1), 32, "DN", True),  # a column: both fit; the tie gives DN ...
    ((1, 16), (16, 1), 32, "ND", True),  # ... and a row ND
    ((4, 16, 16, 16), (4096, 256, 16, 1), 16, "NZ", False),  # boxes of 16 rows x 16 x 2 bytes = 512
    ((16, 128), (256, 2), 32, "ND", False),  # nothing fits: the fallback
])
def test_layout_inference_follows_the_assemblers_rule(db, shape, strides, bits, layout, ambiguous):
    got = infer(db, program_spec(db).layout_inference, list(shape), list(strides), bits // 8)
    assert (got.layout, got.ambiguous) == (layout, ambiguous)


def test_views_without_a_layout_take_the_inferred_one(db):
    """A column loaded into a column-major Vec tile (the tile breaks the ND/DN tie) and a DN view loaded
    into a ZN Mat tile are legal, as the assembler accepts them; taken as ND they are not."""
    result = check_program(db, read_program(PROGRAMS / "layout_inference.pto"))
    assert not result.violations, [f.one_line() for f in result.violations]
    src = np.arange(16, dtype=np.float32)
    out = run_program(db, read_program(PROGRAMS / "layout_inference.pto"),
                      {"src": src, "dst": np.zeros(16, np.float32)}, func="column")
    assert np.array_equal(out.outputs["dst"], src)


def test_a_layout_attribute_contradicting_the_strides_is_refused(db):
    result = check_program(db, read_program(PROGRAMS / "layout_mismatch.pto"))
    [finding] = result.violations
    assert finding.rule == "view.layout-mismatch"
    assert "inferred_layout=DN" in finding.message and "written_layout=ND" in finding.message


@pytest.mark.parametrize("profile", ["a5", "a2a3", "cpu"])
def test_taddc_and_tsubsc_run_as_the_assembler_emits_them(db, profile):
    """On the NPU targets each is two database instructions (TADD, TADD; TSUBS, TADD), on the simulator's
    profile the instruction itself; the results are the same."""
    program = read_program(PROGRAMS / "three_sources.pto")
    result = check_program(db, program, profile)
    assert not result.violations, [f.one_line() for f in result.violations]
    lowered = profile != "cpu"
    rng = np.random.default_rng(3)
    x, y, w = (rng.standard_normal(128).astype(np.float32) for _ in range(3))
    out = run_program(db, program, {"x": x, "y": y, "w": w, "z": np.zeros(128, np.float32),
                                    "u": np.zeros(128, np.float32)}, profile)
    np.testing.assert_array_equal(out.outputs["z"], (x + y) + w)
    np.testing.assert_array_equal(out.outputs["u"], (x - np.float32(2.5)) + w)
    assert out.stats.instructions == 5 + (4 if lowered else 2)  # 3 loads, 2 stores, 2 instructions or 4 steps


def test_taddc_alone_stays_unsupported_on_the_npu_targets(db, tiles):
    """The lowering belongs to the program layer (recorded as a difference of the op), not to the
    instruction: validated alone on a2a3 it is still unsupported."""
    t = tiles(t="vec, 8x16xf32")["t"]
    report = validate(db, "taddc", "default", "a2a3", {"dst": t, "src0": t, "src1": t, "src2": t})
    assert "profile.unsupported" in report.rule_ids
    assert any(d.id == "assembler-lowering" for d in db.ops["taddc"].differences)


def test_a_partition_beyond_a_dynamic_view_runs_and_is_reported(db):
    program = read_program(PROGRAMS / "dynamic_partition.pto")
    x = np.arange(40, dtype=np.float32)  # five rows of eight: the view declares four
    out = run_program(db, program, {"x": x, "y": np.zeros(32, np.float32), "r": 1}, func="dynamic")
    np.testing.assert_array_equal(out.outputs["y"], x[8:40])
    [line] = out.finding_lines()
    assert "[view.partition-dynamic-bounds]" in line and "offset=1" in line and "dynamic_partition.pto:13:" in line
    with pytest.raises(RuleViolation) as err:
        run_program(db, program, {"x": x, "y": np.zeros(32, np.float32), "r": 1}, func="dynamic", strict=True)
    assert err.value.rule == "view.partition-dynamic-bounds"


def test_a_partition_beyond_a_static_view_stays_an_error(db):
    with pytest.raises(RuleViolation) as err:
        run_program(db, read_program(PROGRAMS / "dynamic_partition.pto"),
                    {"x": np.zeros(40, np.float32), "r": 1}, func="fixed")
    assert err.value.rule == "view.partition-bounds"


def test_run_program_exits_1_for_a_violation_and_2_for_bad_input(tmp_path, capsys):
    x = tmp_path / "x.npy"
    np.save(x, np.zeros(40, np.float32))
    code = main(["run-program", str(PROGRAMS / "dynamic_partition.pto"), "--func", "fixed", "--arg", f"x={x}",
                 "--arg", "r=1", "-o", str(tmp_path / "o.npz")])
    assert code == 1
    assert "[view.partition-bounds]" in capsys.readouterr().out
    code = main(["run-program", str(PROGRAMS / "dynamic_partition.pto"), "--func", "fixed", "--arg", f"x={x}",
                 "-o", str(tmp_path / "o.npz")])
    assert code == 2  # a missing argument: bad input


def test_check_program_strict_makes_findings_violations(db, tmp_path):
    text = (PROGRAMS / "dynamic_partition.pto").read_text().replace("offsets = [%r, %c0]", "offsets = [%c1, %c0]")
    path = tmp_path / "k.pto"
    path.write_text(text)
    relaxed = check_program(db, read_program(path))
    assert "view.partition-dynamic-bounds" in {f.rule for f in relaxed.reported}
    assert "view.partition-bounds" in _rules(relaxed)  # @fixed's static extents
    strict = check_program(db, read_program(path), strict=True)
    assert "view.partition-dynamic-bounds" in _rules(strict)


@pytest.mark.parametrize("name, level, expected", [
    ("entry_returns", None, {"program.entry-void", "program.recursion"}),
    ("level_mix", None, {"program.level3-addr"}),  # a tile placed with addr: only level3 could take it
    ("level_mix", 2, {"program.level-addr"}),
    ("pipe_split_conflict", None, {"program.pipe-split-conflict", "program.pipe-nosplit"}),
    ("reserved_pipe_bugs", None, {"program.pipe-peer-pair", "program.pipe-reserved", "program.reserve-manual"}),
    ("reserved_pipe_bugs", 3, {"program.pipe-peer-pair", "program.pipe-reserved"}),  # level3 plans no memory
    ("tassign_sync", None, set()),
    ("reserved_pipe", None, set()),
])
def test_the_assemblers_module_checks(db, name, level, expected):
    result = check_program(db, read_program(PROGRAMS / f"{name}.pto"), level=level)
    assert _rules(result) == expected, [f.one_line() for f in result.violations]


def test_tassign_is_refused_with_the_assemblers_sync_insertion(db):
    result = check_program(db, read_program(PROGRAMS / "tassign_sync.pto"), insert_sync=True)
    assert _rules(result) == {"program.tassign-insert-sync"}


def test_a_recursive_cycle_is_reported_once_where_it_closes(db):
    result = check_program(db, read_program(PROGRAMS / "entry_returns.pto"))
    [cycle] = [f for f in result.violations if f.rule == "program.recursion"]
    assert cycle.pos.line == 15


def test_module_checks_pass_legal_kernels(db):
    """The kernels of the other tests are legal modules: no module rule fires on them."""
    for name in ("three_sources", "layout_inference", "fifo_roundtrip"):
        result = check_program(db, read_program(PROGRAMS / f"{name}.pto"))
        assert not {r for r in _rules(result) if r.startswith("program.")}, name


def test_no_legal_mode_names_the_mode_the_locations_select(db):
    """A Mat -> Right move with the wrong valid shape is TMOV's mat_to_cube mode failing on the shape, not
    a location no mode takes."""
    result = check_program(db, read_program(PROGRAMS / "tmov_wrong_k.pto"))
    [finding] = result.violations
    assert finding.rule == "runtime.valid-shape" and "tmov mat_to_cube" in finding.message


def test_tile_rules_at_alloc_tile_print_the_quantities(db, tmp_path):
    path = tmp_path / "big.pto"
    path.write_text("module {\n  func.func @k() {\n    %t = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, "
                    "rows=512, cols=512, v_row=512, v_col=512, blayout=row_major, slayout=none_box, fractal=512, "
                    "pad=0>\n"
                    "    return\n  }\n}\n")
    [finding] = check_program(db, read_program(path)).violations
    assert finding.rule == "tile.capacity"
    assert "t.rows * t.cols * bytes(t.dtype)=1048576" in finding.message
    assert "profile.vec_bytes=196608" in finding.message


def test_a_section_is_part_of_its_kernel(db):
    program = read_program(PROGRAMS / "sections.pto")
    result = check_program(db, program)
    assert not result.violations and not result.stats.unknown
    x = np.arange(64, dtype=np.float32)
    out = run_program(db, program, {"x": x, "y": np.zeros(64, np.float32)})
    np.testing.assert_array_equal(out.outputs["y"], x + x)


def test_a_lines_layout_attribute_is_its_views_layout(db):
    """{layout = #pto.layout<dn>} on a TSTORE makes its view DN (the emitter takes the line's attribute first), so
    a row-major tile no longer fits; pto.inferred_layout means nothing to the instruction."""
    result = check_program(db, read_program(PROGRAMS / "line_layout.pto"))
    [finding] = result.violations
    assert finding.rule == "layout.pair" and finding.pos.line == 14 and "dst.layout=DN" in finding.message


def test_the_dialects_own_mnemonic_of_a_mode_reads_as_that_mode(db, tmp_path):
    """pto.textract_fp is TEXTRACT's acc_fp mode (``mnemonics``): checked with that mode's rules."""
    text = (PROGRAMS / "textract_fp.pto").read_text()
    result = check_program(db, read_program(PROGRAMS / "textract_fp.pto"))
    assert (result.stats.legal, result.stats.instructions, dict(result.stats.unknown)) == (1, 1, {})
    bad = tmp_path / "bad.pto"
    bad.write_text(text.replace("dtype=ui64", "dtype=f32"))  # 32 f32 elements: half the bytes of 32 words
    assert "fp.reach" in _rules(check_program(db, read_program(bad)))


def test_async_transfers_are_checked_and_copy_on_one_rank(db):
    """TPUT_ASYNC / TGET_ASYNC as the assembler writes them: a put into a flat partition and a get back copy the
    elements; a 2 x 32 view, a workspace of i32 and a sync_id of 9 are the assembler's own refusals."""
    program = read_program(PROGRAMS / "async_copy.pto")
    result = check_program(db, program)
    assert sorted((f.rule, f.pos.line) for f in result.violations) == [
        ("async.flat", 25), ("async.sync-id", 24), ("async.workspace", 24)]
    hex_id = (PROGRAMS / "async_copy.pto").read_text().replace("{sync_id = 9 : i32}", "{sync_id = 0x9 : i32}")
    assert "0x9" in hex_id  # an integer literal as the lexer reads it: the same refusal
    assert ("async.sync-id", 24) in {(f.rule, f.pos.line) for f in check_program(
        db, parse_program(hex_id, "async_copy.pto")).violations}
    src = np.arange(64, dtype=np.float32).reshape(1, 64)
    out = run_program(db, program, {"src": src, "dst": np.zeros(128, np.float32), "out": np.zeros((1, 64), np.float32),
                                    "ws": np.zeros(1024, np.int8)}, func="copy")
    np.testing.assert_array_equal(out.outputs["dst"][16:80], src[0])
    assert not out.outputs["dst"][:16].any() and not out.outputs["dst"][80:].any()
    np.testing.assert_array_equal(out.outputs["out"], src)


def test_generic_form_acc_to_vec_mode_and_store_phase_are_read_checked_and_run(db):
    """The generic MLIR form of TMOV, its accToVecMode, TSTORE's stPhase, and TGATHER's scalar-threshold form (no
    overload of pto-isa takes it): each planted break is reported with its rule, as the assembler reports the first
    three; C = relu(A x B) runs through the generic-form move."""
    program = read_program(PROGRAMS / "dialect_forms.pto")
    result = check_program(db, program)
    assert sorted((f.rule, f.pos.line) for f in result.violations) == [
        ("program.line-attribute", 62), ("tgather.scalar-threshold", 67), ("tmov.acc-to-vec-locations", 61),
        ("tmov.acc-to-vec-quant", 60)]
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((16, 16)).astype(np.float16) for _ in range(2))
    out = run_program(db, program, {"a": a, "b": b, "c": np.zeros((16, 16), np.float32)}, func="relu_matmul")
    expected = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0)
    np.testing.assert_allclose(out.outputs["c"], expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(PtospecError) as err:
        run_program(db, program, {}, func="split")
    assert err.value.rule == "program.unsupported" and "dual_mode_split_n" in err.value.message


def test_locations_no_mode_takes_here_name_the_mode_that_takes_them_elsewhere(db, capsys):
    """Acc -> Vec on A2/A3: the message names TMOV's acc_to_out (the mode these locations select, on A5) and the
    rules failing there; run-program prints every one of them and exits 1 (a violation, not bad input)."""
    path = PROGRAMS / "acc_to_vec_a2a3.pto"
    result = check_program(db, read_program(path))
    assert {f.rule for f in result.violations} == {"loc.acc-destination-a2a3", "dtype.d", "layout.acc-destination-a2a3"}
    assert all("tmov acc_to_out" in f.message for f in result.violations)
    assert main(["run-program", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert sorted(line.split("[")[1].split("]")[0] for line in lines) == sorted({f.rule for f in result.violations})
    loc = next(line for line in lines if "loc.acc-destination-a2a3" in line)
    assert loc.count("dst is Vec") == 1


def test_a_location_rule_names_each_operand_once(db):
    """Both operands of TMOV default outside its locations: one violation listing each operand's location."""
    from ptospec.asm.forms import parse_line

    line = parse_line(db, "pto.tmov ins(%s : !pto.tile_buf<left, 16x16xf16>) outs(%d : !pto.tile_buf<left, 16x16xf16>)",
                      profile="a5")
    report = validate(db, "tmov", line.mode, "a5", line.operands)
    [v] = [v for v in report.violations if v.rule.startswith("loc.")]
    assert v.operands == ("dst", "src") and v.message.endswith("(dst is Left, src is Left)")


@pytest.mark.parametrize("func", ["merge", "merge_arg"])
def test_struct_values_written_as_vectors_are_read_and_run(db, func):
    """TMRGSORT's executed-number list as a vector<4xi16> (a dense constant, or a kernel argument given its
    fields): the merge runs, and the stored list holds every pair, by score from largest."""
    program = read_program(PROGRAMS / "merge_sorted.pto")
    assert not check_program(db, program).violations
    rng = np.random.default_rng(5)

    def pairs(n: int) -> np.ndarray:  # (score, index bits) pairs, sorted by score from largest
        scores = np.sort(rng.permutation(100)[:n].astype(np.float32))[::-1]
        out = np.empty(2 * n, np.float32)
        out[0::2], out[1::2] = scores, np.arange(n, dtype=np.uint32).view(np.float32)
        return out

    a, b = pairs(16), pairs(16)
    args = {"a": a, "b": b, "out": np.zeros(64, np.float32)}
    if func == "merge_arg":
        args["ex"] = np.zeros(4, np.int16)
    got = run_program(db, program, args, func=func).outputs["out"]
    scores = got[0::2]
    assert np.all(np.diff(scores) <= 0)
    assert sorted(scores.tolist()) == sorted([*a[0::2].tolist(), *b[0::2].tolist()])


def test_a_struct_constant_of_the_wrong_width_is_refused(db, tmp_path):
    path = tmp_path / "k.pto"
    path.write_text("func.func @k() {\n  %ex = arith.constant dense<[1, 2, 3]> : vector<4xi16>\n  return\n}\n")
    [finding] = check_program(db, read_program(path)).violations
    assert finding.rule == "program.type" and "4 values, got 3" in finding.message


def test_an_operation_pto_isa_does_not_declare_is_refused_with_the_record(db, tmp_path):
    """pto.tpack: the assembler writes a TPACK call; specs/isa.yaml records that no header declares it."""
    tile = "!pto.tile_buf<loc=vec, dtype={}, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, " \
           "slayout=none_box, fractal=512, pad=0>"
    src, dst = tile.format("i32"), tile.format("i16")
    path = tmp_path / "k.pto"
    path.write_text(f'module attributes {{pto.target_arch = "a5"}} {{\n  func.func @k() {{\n'
                    f"    %s = pto.alloc_tile : {src}\n    %d = pto.alloc_tile : {dst}\n"
                    f"    pto.tpack ins(%s : {src}) outs(%d : {dst})\n    return\n  }}\n}}\n")
    [finding] = check_program(db, read_program(path)).violations
    assert finding.rule == "program.no-intrinsic" and "TPACK" in finding.message and finding.pos.line == 5
    with pytest.raises(RuleViolation):
        run_program(db, read_program(path), {})


def test_the_device_spec_names_the_target_when_target_arch_is_absent(db, tmp_path):
    """Ascend950 is an A5 device (specs/program.yaml, device_specs); --profile still wins, and a target_arch
    naming another profile than the device spec is refused."""
    text = (PROGRAMS / "device_spec_a5.pto").read_text()
    assert check_program(db, read_program(PROGRAMS / "device_spec_a5.pto")).profile == "a5"
    assert check_program(db, read_program(PROGRAMS / "device_spec_a5.pto"), "a2a3").profile == "a2a3"
    other = tmp_path / "b1.pto"
    other.write_text(text.replace("Ascend950", "Ascend910B1"))
    assert check_program(db, read_program(other)).profile == program_spec(db).targets[program_spec(db).default_target]
    conflict = tmp_path / "conflict.pto"
    conflict.write_text(text.replace('"Ascend950"', '"Ascend950", "pto.target_arch" = "a3"'))
    with pytest.raises(PtospecError, match=r"conflicts with pto\.device-spec 'Ascend950'"):
        check_program(db, read_program(conflict))
    assert check_program(db, read_program(conflict), "a5").profile == "a5"


def test_compact_tiles_are_read_checked_and_run_where_no_header_reads_the_mode(db):
    """compact=N in both tile spellings: a row-major Vec tile runs as without it; an Acc tile's denser placement is
    checked and refused when run (exec.compact)."""
    program = read_program(PROGRAMS / "compact_tiles.pto")
    assert check_program(db, program).violations == []
    x, y = np.arange(256, dtype=np.float32), np.full(256, 0.5, np.float32)
    out = run_program(db, program, {"x": x, "y": y, "z": np.zeros(256, np.float32)}, func="add")
    np.testing.assert_array_equal(out.outputs["z"].ravel(), x + y)
    with pytest.raises(PtospecError) as err:
        run_program(db, program, {n: np.zeros(256, t) for n, t in (("a", np.float16), ("b", np.float16),
                                                                    ("c", np.float32))}, func="acc")
    assert err.value.rule == "exec.compact" and "dst (Normal)" in err.value.message


@pytest.mark.parametrize("spelled, compact", [("compact=1", "Normal"), ("compact=2", "RowPlusOne"),
                                              ("compact=row_plus_one", "RowPlusOne"), ("pad=0", "Null")])
def test_a_tile_types_compact_mode(db, spelled, compact):
    from ptospec.asm.types import format_type, parse_type
    tile = parse_type(f"!pto.tile_buf<loc=vec, dtype=f16, rows=1, cols=16, {spelled}>", db.isa)
    assert tile.compact == compact
    assert parse_type(format_type(tile, db.isa), db.isa) == tile


def test_a_compact_number_the_assembler_lacks_is_refused(db):
    from ptospec.asm.types import parse_type
    with pytest.raises(PtospecError) as err:
        parse_type("!pto.tile_buf<vec, 1x16xf16, compact=3>", db.isa)
    assert err.value.rule == "tile.syntax" and "0 null, 1 normal, 2 row_plus_one" in err.value.message


def test_an_accumulator_stored_with_atomic_add_adds_its_converted_values(db):
    """TSTORE of an Acc tile with atomicType (pto-isa's Acc overloads take it beside the ReLU mode): the view gets
    its old value plus relu(A x B) converted to f16, added in f16; adding into u8 is refused (atomic.dtype)."""
    program = read_program(PROGRAMS / "acc_atomic_store.pto")
    assert [(f.rule, f.pos.line) for f in check_program(db, program).violations] == [("atomic.dtype", 40)]
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal((16, 16)).astype(np.float16) for _ in range(3))
    out = run_program(db, program, {"a": a, "b": b, "c": c.copy()}, func="accumulate")
    product = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0).astype(np.float16)
    np.testing.assert_array_equal(out.outputs["c"].reshape(16, 16), c + product)


def test_the_atomic_add_mode_stores_vec_and_mat_tiles_and_acc_modes_take_the_atomic_type(db, tiles):
    acc = tiles(dst="gm, 16x16xf32", src="acc, 16x16xf32, blayout=col_major, slayout=row_major, fractal=1024")
    assert "loc.source-a5" in validate(db, "tstore", "atomic_add", "a5", acc).rule_ids
    adding = {**acc, **tiles(reluMode="NoRelu", atomicType="AtomicAdd")}
    assert validate(db, "tstore", "acc", "a5", adding).ok


def test_a_scale_address_of_any_element_type_is_legal(db):
    """TGET_SCALE_ADDR's destination type: the a5 header asserts only that both operands are tiles (a false alarm
    on the assembler's tget_scale_addr_emitc, f16, was removed)."""
    program = read_program(PROGRAMS / "scale_addr.pto")
    assert check_program(db, program).violations == []
    run_program(db, program, {})
