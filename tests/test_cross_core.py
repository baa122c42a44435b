"""TPUSH, TPOP and TFREE: cross-core FIFO instructions the validator checks and the executor refuses."""

from __future__ import annotations

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


def test_programs_read_ptospec_lines_and_leave_the_pipe_handle_form_unknown(db, tmp_path):
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
    lowered = check_program(db, program(f"pto.tpush(%t, %pipe : {ACC_BUF}, !pto.pipe) {{split = 0}}"))
    assert not lowered.violations and lowered.stats.unknown["pto.tpush"] == 1
