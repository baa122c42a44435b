"""TPUSH, TPOP and TFREE: cross-core FIFO instructions the validator checks and the executor refuses."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from ptospec.asm.forms import parse_line, print_form
from ptospec.conformance.backend import Backend, Capabilities, Invocation, Result
from ptospec.conformance.cases import Case, all_cases
from ptospec.conformance.runner import ConformanceFailure, Runner
from ptospec.docs.examples import cpp_example
from ptospec.errors import InvocationError, PtospecError
from ptospec.executor import execute
from ptospec.tile import AttrDesc
from ptospec.validator import validate

ACC = "acc, 16x16xf32, blayout=col_major, slayout=row_major, fractal=1024"


def _pipe(split=0, dir_mask=1, slot_size=1024, slot_num=2, flag_id=0):
    return {"split": AttrDesc(split), "dir_mask": AttrDesc(dir_mask), "slot_size": AttrDesc(slot_size),
            "slot_num": AttrDesc(slot_num), "flag_id": AttrDesc(flag_id)}


def _rules(report):
    return sorted(v.rule for v in report.violations)


def test_the_validator_checks_the_pipe(db, tiles):
    push = {**tiles(src=ACC), **_pipe()}
    assert validate(db, "tpush", None, "a5", push).ok
    assert _rules(validate(db, "tpush", None, "a5", {**push, **_pipe(flag_id=13, dir_mask=3)})) == ["tpush.flag-id"]
    assert _rules(validate(db, "tpush", None, "a5", {**push, **_pipe(slot_size=512)})) == ["tpush.slot-size"]
    # a split halves what one consumer takes; A5's up-down split wants an even row count
    assert validate(db, "tpush", None, "a5", {**push, **_pipe(split=1, slot_size=512)}).ok
    odd = {**tiles(src="acc, 16x16xf32, valid=15x16, blayout=col_major, slayout=row_major, fractal=1024"),
           **_pipe(split=1)}
    assert _rules(validate(db, "tpush", None, "a5", odd)) == ["tpush.a5-c2v-split"]
    assert validate(db, "tpush", None, "a2a3", odd).ok
    # the direction belongs to the mode: a C2V push does not take dir_mask 2, nor the odd split axes
    assert _rules(validate(db, "tpush", "c2v", "a5", {**push, **_pipe(dir_mask=2)})) == ["invocation.attr"]
    assert _rules(validate(db, "tpush", "c2v", "a5", {**push, **_pipe(split=3)})) == ["invocation.attr"]
    # the tile's location chooses the mode; the consumer's location too
    vec = {**tiles(src="vec, 16x16xf16"), **_pipe(dir_mask=2, slot_size=512)}
    assert validate(db, "tpush", None, "a2a3", vec).mode == "v2c"
    assert validate(db, "tpop", None, "a2a3", {**tiles(dst="mat, 16x16xf16, blayout=col_major, "
                                                           "slayout=row_major, fractal=512"),
                                               **_pipe(dir_mask=2, slot_size=512)}).mode == "v2c"
    assert validate(db, "tfree", None, "a5", _pipe(dir_mask=3, flag_id=12)).ok
    assert _rules(validate(db, "tfree", None, "a5", _pipe(dir_mask=3, flag_id=13))) == ["tfree.flag-id"]


@pytest.mark.parametrize("op, operands", [("tpush", {"src": ACC}), ("tpop", {"dst": "vec, 16x16xf32"}), ("tfree", {})])
def test_the_executor_refuses_one_side_of_a_fifo(db, tiles, op, operands):
    with pytest.raises(InvocationError) as err:
        execute(db, op, None, "a5", {**tiles(**operands), **_pipe()}, {})
    assert err.value.rule == "exec.cross-core"
    with pytest.raises(InvocationError) as err:  # an illegal invocation is rejected before that
        execute(db, op, None, "a5", {**tiles(**operands), **_pipe(flag_id=15)}, {})
    assert err.value.rule != "exec.cross-core"


def test_assembly_and_cpp_carry_the_pipe(db, tiles):
    op = db.op("tpush")
    given = {**tiles(src=ACC), **_pipe(split=2, slot_num=8, flag_id=4)}
    for form in ("sync", "ssa", "dps"):
        line = print_form(db, op, op.mode("c2v"), form, given)
        assert "split = 2 : i8" in line and "slot_num = 8 : i32" in line
        assert parse_line(db, line).operands["split"] == AttrDesc(2)
    text = cpp_example(db, op.mode("c2v"), manual=True)
    assert "using Pipe = pto::TPipe<0, 1, 1024, 2>;" in text
    assert "TPUSH<Pipe, SrcT, static_cast<pto::TileSplitAxis>(0)>(pipe, src);" in text


class _NeverRun(Backend):
    name = "never"

    def capabilities(self) -> Capabilities:
        return Capabilities(profiles=("a2a3", "a5", "cpu"))

    def run(self, case: Invocation) -> Result:
        raise AssertionError(f"a backend was asked to run {case.op} alone")


def test_conformance_counts_cross_core_cases_apart(db):
    runner = Runner(db, _NeverRun(), "never")
    positives, rejects = all_cases(db, db.op("tpop"))
    assert positives and rejects
    for case in positives[:5] + rejects[:5]:
        runner.check(case)
    assert runner.tally["cross_core"] == 10 and runner.tally["passed"] == 0
    # a case the validator would accept cannot pass as a must-reject case
    wrong = Case(positives[0].op, positives[0].mode, positives[0].profile, positives[0].tiles, reject="tpop.flag-id")
    with pytest.raises(ConformanceFailure):
        runner.check(wrong)


ACC_BUF = ("!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, "
           "slayout=row_major, fractal=1024, pad=0>")


def test_programs_read_ptospec_lines_and_the_pipe_handle_form(db, tmp_path):
    from ptospec.program.api import check_program, read_program, run_program

    def program(line: str):
        path = tmp_path / "k.pto"
        path.write_text(f"""module attributes {{pto.target_arch = "a5"}} {{
  func.func @k() {{
    %t = pto.alloc_tile : {ACC_BUF}
    {line}
    return
  }}
}}
""")
        return read_program(path)

    ours = program(f"pto.tpush ins(%t {{split = 0 : i8, dir_mask = 1 : i8, slot_size = 1024 : i32, "
                   f"slot_num = 2 : i32, flag_id = 0 : i8}} : {ACC_BUF})")
    checked = check_program(db, ours)
    assert not checked.violations and checked.stats.legal == 1
    with pytest.raises(PtospecError) as err:  # the interpreter runs no side of a FIFO alone
        run_program(db, ours, {})
    assert err.value.rule == "exec.cross-core"
    lowered = check_program(db, program(
        "%b = arith.constant 0 : i32\n    %pipe = pto.initialize_l2l_pipe {dir_mask = 1, slot_size = 1024, "
        "slot_num = 2, flag_base = 0}(%b : i32) -> !pto.pipe\n"
        f"    pto.tpush(%t, %pipe : {ACC_BUF}, !pto.pipe) {{split = 0}}"))
    assert not lowered.violations and not lowered.stats.unknown and lowered.stats.legal == 1


# -- kernels that run together (run-program --kernels) ------------------------------------------------------
PROGRAMS = Path(__file__).parent / "programs"
VHALF = ("!pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=16, v_row=8, v_col=16, blayout=row_major, "
         "slayout=none_box, fractal=512, pad=0>")


def _inputs(tiles: int = 6):
    x = np.random.default_rng(7).standard_normal((16 * tiles, 16)).astype(np.float32)
    return {"x": x, "y": np.zeros_like(x), "z": np.zeros_like(x), "eye": np.eye(16, dtype=np.float32),
            "tiles": tiles}


def test_a_vector_kernel_and_a_cube_kernel_exchange_tiles_through_both_pipes(db):
    from ptospec.program.api import read_program, run_kernels

    program = read_program(PROGRAMS / "fifo_roundtrip.pto")
    args = _inputs()
    x = args["x"]
    first = run_kernels(db, program, args, ["cube", "vector"], subblocks=2)
    y = (x.reshape(-1, 16, 16) @ np.eye(16, dtype=np.float32)).reshape(x.shape)  # what the cube stored
    np.testing.assert_array_equal(first.outputs["y"], y)
    np.testing.assert_array_equal(first.outputs["z"], x + y)  # each sub-block's half came back to it
    again = run_kernels(db, program, args, ["cube", "vector"], subblocks=2)  # six tiles through four slots
    for name, arr in first.outputs.items():
        np.testing.assert_array_equal(again.outputs[name], arr)


def test_the_cli_runs_kernels_together(db, tmp_path, capsys):
    from ptospec.cli import main

    args = _inputs(tiles=2)
    given = []
    for name, value in args.items():
        if isinstance(value, np.ndarray):
            np.save(tmp_path / f"{name}.npy", value)
            value = tmp_path / f"{name}.npy"
        given += ["--arg", f"{name}={value}"]
    out = tmp_path / "out.npz"
    assert main(["run-program", str(PROGRAMS / "fifo_roundtrip.pto"), "--kernels", "cube,vector",
                 "--subblocks", "2", *given, "-o", str(out)]) == 0
    assert "@cube,vector on a5" in capsys.readouterr().out
    np.testing.assert_array_equal(np.load(out)["z"], 2 * args["x"])


def test_a_split_half_does_not_fit_one_sub_block(db):
    from ptospec.program.api import read_program, run_kernels

    with pytest.raises(PtospecError) as err:  # one sub-block pops the whole 16-row product into an 8-row tile
        run_kernels(db, read_program(PROGRAMS / "fifo_roundtrip.pto"), _inputs(), ["cube", "vector"], subblocks=1)
    assert err.value.rule == "program.pipe-shape"


def _pair(tmp_path, cube_body: str, vector_body: str):
    from ptospec.program.api import read_program

    init = "pto.{side}_initialize_pipe {{dir_mask = 3, slot_size = 1024}} (c2v_consumer_buf = %b : i32, " \
           "v2c_consumer_buf = %b : i32)"
    path = tmp_path / "pair.pto"
    path.write_text(f"""module attributes {{pto.target_arch = "a5"}} {{
  func.func @cube() attributes {{pto.kernel_kind = #pto.kernel_kind<cube>}} {{
    %b = arith.constant 0 : i32
    {init.format(side="aic")}
    {cube_body}
    return
  }}
  func.func @vector() attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %b = arith.constant 0 : i32
    {init.format(side="aiv")}
    %t = pto.alloc_tile : {VHALF}
    {vector_body}
    return
  }}
}}
""")
    return read_program(path)


MAT = ("!pto.tile_buf<loc=mat, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, "
       "slayout=row_major, fractal=512, pad=0>")


def test_kernels_that_wait_for_each_other_end_with_a_deadlock_error(db, tmp_path):
    from ptospec.program.api import run_kernels

    pops_first = _pair(tmp_path, f"%m = pto.tpop_from_aiv {{split = 1}} -> {MAT}",
                       f"%r = pto.tpop_from_aic {{split = 1}} -> {VHALF}")
    with pytest.raises(PtospecError) as err:
        run_kernels(db, pops_first, {}, ["cube", "vector"], subblocks=2)
    assert err.value.rule == "program.pipe-deadlock"
    # five pushes into four slots that nobody frees: the producers wait for ever
    full = _pair(tmp_path, "", "\n    ".join([f"pto.tpush_to_aic(%t : {VHALF}) {{split = 1}}"] * 5))
    with pytest.raises(PtospecError) as err:
        run_kernels(db, full, {}, ["cube", "vector"], subblocks=2)
    assert err.value.rule == "program.pipe-deadlock"


def test_an_error_in_one_kernel_ends_the_run(db, tmp_path):
    from ptospec.program.api import run_kernels

    bad = _pair(tmp_path, f"%m = pto.tpop_from_aiv {{split = 1}} -> {MAT}", "pto.tfree_from_aic {split = 1}")
    with pytest.raises(PtospecError) as err:  # the vector frees a slot it never popped; the cube's pop gives up
        run_kernels(db, bad, {}, ["cube", "vector"], subblocks=2)
    assert err.value.rule == "program.pipe-free"


def test_one_side_alone_is_still_refused(db, tmp_path):
    from ptospec.program.api import run_program

    program = _pair(tmp_path, "", f"pto.tpush_to_aic(%t : {VHALF}) {{split = 1}}")
    with pytest.raises(PtospecError) as err:
        run_program(db, program, {}, func="vector")
    assert err.value.rule == "exec.cross-core"


CORPUS = os.environ.get("PTOSPEC_PTOAS_ROOT")


@pytest.mark.skipif(not CORPUS, reason="set PTOSPEC_PTOAS_ROOT to a checkout of hw-native-sys/PTOAS")
@pytest.mark.parametrize("path, cube, vector", [
    ("test/basic/test_tpush_tpop_roundtrip_nosplit_a5.pto", "test_tpush_tpop_roundtrip_nosplit_a5_cube",
     "test_tpush_tpop_roundtrip_nosplit_a5_vector"),
    ("test/samples/TPushTPop/test3/kernel.pto", "round_trip_tpush_tpop_print_cube",
     "round_trip_tpush_tpop_print_vector"),
])
def test_the_assemblers_round_trip_programs(db, path, cube, vector):
    """The vector kernel pushes a tile, the cube multiplies it by the identity and pushes it back."""
    from ptospec.program.api import read_program, run_kernels

    src = np.random.default_rng(3).standard_normal(256).astype(np.float32)
    args = {"gm_src": src, "gm_identity": np.eye(16, dtype=np.float32).ravel()}
    program = read_program(Path(CORPUS) / path)
    names = {n for f in (cube, vector) for n in _params(db, program, f)}
    if "gm_out" in names:
        args["gm_out"] = np.zeros(256, np.float32)
    result = run_kernels(db, program, {k: v for k, v in args.items() if k in names}, [cube, vector], profile="a5")
    assert result.stats.legal == result.stats.instructions
    if "gm_out" in names:
        np.testing.assert_array_equal(result.outputs["gm_out"], src)


def _params(db, program, func: str) -> list[str]:
    from ptospec.program.walker import Walker, func_signature

    w = Walker(db, program, "a5", check=False)
    return [n[1:] for n, _ in func_signature(w, w.funcs[func])]


def test_the_frontend_pipe_spelling_must_name_cross_core_instructions(tmp_path):
    import shutil

    from ptospec.loader import DatabaseErrors, load_database
    from ptospec.program.spec import load_program_spec

    specs = tmp_path / "specs"
    shutil.copytree(Path(__file__).resolve().parent.parent / "specs", specs)
    db = load_database(specs)
    spelling = load_program_spec(specs, db).frontend_pipes
    assert spelling.operations["pto.tpop_from_aiv"] == ("tpop", "v2c") and spelling.flag_id == 0
    text = (specs / "program.yaml").read_text(encoding="utf-8")
    edited = text.replace("pto.tfree_from_aic: {op: tfree,", "pto.tfree_from_aic: {op: tadd,")
    (specs / "program.yaml").write_text(edited, encoding="utf-8")
    with pytest.raises(DatabaseErrors) as caught:
        load_program_spec(specs, db)
    assert [e.rule for e in caught.value.errors] == ["program.pipe-op"]


def test_the_lowered_pipe_spelling_moves_tiles_between_kernels(db):
    """initialize_l2l_pipe on a reserved buffer, then pto.tpush / pto.tpop into a declare_tile tile / pto.tfree on
    the !pto.pipe: the database's TPUSH, TPOP and TFREE; each sub-block stores its half of the product."""
    from ptospec.program.api import check_program, read_program, run_kernels

    program = read_program(PROGRAMS / "reserved_pipe.pto")
    checked = check_program(db, program)
    assert not checked.violations and not checked.stats.unknown
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    eye = np.eye(16, dtype=np.float32)
    out = run_kernels(db, program, {"x": x, "eye": eye, "y": np.zeros_like(x)}, ["cube", "vector"], subblocks=2)
    np.testing.assert_array_equal(out.outputs["y"], x @ eye)
