"""Typed attribute operands (bool and integer immediates), the inside() predicate of the partial
operations, and the generator's shared and fixed operands (a mode's ``shapes``)."""

from __future__ import annotations

import numpy as np
import pytest

from ptospec.asm.forms import parse_line, print_form
from ptospec.backends.cpusim import cppgen
from ptospec.conformance.backend import Invocation
from ptospec.conformance.cases import positive_cases
from ptospec.conformance.data import make_inputs
from ptospec.errors import AsmError, ExprError
from ptospec.executor import execute
from ptospec.tile import AttrDesc, TileDesc
from ptospec.validator import validate
from tests.test_loader import break_file, problems, specs  # noqa: F401  (the specs fixture)

TTRI_BUF = "!pto.tile_buf<loc=vec, dtype=i32, rows=32, cols=32, v_row=32, v_col=32, blayout=row_major, " \
           "slayout=none_box, fractal=512, pad=0>"


def test_typed_values_are_validated(db, tiles):
    base = tiles(dst="vec, 16x16xf32", diagonal="i32")
    assert validate(db, "ttri", "default", "a2a3", {**base, "isUpperOrLower": AttrDesc(1)}).ok
    bad = validate(db, "ttri", "default", "a2a3", {**base, "isUpperOrLower": AttrDesc(2)})
    assert [v.rule for v in bad.violations] == ["invocation.attr"]
    assert "i32 in {0, 1}" in bad.violations[0].message
    tci = tiles(dst="vec, 1x16xi32", start="i32")
    assert validate(db, "tci", "default", "a2a3", {**tci, "descending": AttrDesc(True)}).ok
    assert not validate(db, "tci", "default", "a2a3", {**tci, "descending": AttrDesc(1)}).ok  # a bool, not 1


@pytest.mark.parametrize("attr, value", [("", 0), (" {upperOrLower = 1 : i32}", 1), (" {upperOrLower = 1}", 1),
                                         (" {upperOrLower = 0 : i32}", 0)])
def test_assembler_spellings_and_default(db, attr, value):
    parsed = parse_line(db, f"pto.ttri ins(%d{attr} : i32) outs(%m : {TTRI_BUF})")
    assert parsed.operands["isUpperOrLower"] == AttrDesc(value)


@pytest.mark.parametrize("attr", ["{upperOrLower = 2 : i32}", "{upperOrLower = 1 : i16}", "{upperOrLower = true}"])
def test_illegal_spellings_are_one_error(db, attr):
    with pytest.raises(AsmError) as err:
        parse_line(db, f"pto.ttri ins(%d {attr} : i32) outs(%m : {TTRI_BUF})")
    assert err.value.rule == "asm.attr"


def test_printed_forms_round_trip(db, tiles):
    op = db.op("tci")
    mode = op.mode("default")
    given = {**tiles(dst="vec, 1x16xi16", start="i16"), "descending": AttrDesc(True)}
    for form in ("sync", "ssa", "dps"):
        line = print_form(db, op, mode, form, given)
        assert "{descending = true}" in line
        assert parse_line(db, line, "default").operands["descending"] == AttrDesc(True)


def test_driver_places_template_flags(db, tiles):
    inv = Invocation("tci", "default", "cpu", {**tiles(dst="vec, 1x16xi32", start="i32"),
                                                "descending": AttrDesc(True)}, {"start": np.int32(5)})
    plan = cppgen.plan_variant(db, inv)
    assert plan.call == "TCI<dst_t, start_t, true>"
    body = "\n".join(cppgen.variant_block("v0", plan))
    assert "using start_t = int32_t;" in body and "TCI<dst_t, start_t, true>(dst, start);" in body
    ttri = Invocation("ttri", "default", "cpu", {**tiles(dst="vec, 16x16xf32", diagonal="i32"),
                                                  "isUpperOrLower": AttrDesc(1)}, {"diagonal": np.int32(0)})
    assert cppgen.plan_variant(db, ttri).call == "TTRI<dst_t, 1>"


def test_lint_checks_typed_attributes(specs):  # noqa: F811
    ttri = specs / "ops/ttri.yaml"
    break_file(ttri, "values: [0, 1]", "values: [0, 1, 70000]\n        range: [0, 5]")
    break_file(ttri, "dialect: {default: 0}", "dialect: {default: 9}")
    out = problems(specs, "ops/ttri.yaml")
    assert any("ttri.yaml" in p and "op.attr-type" in p and "70000" in p for p in out), out
    assert any("ttri.yaml" in p and "op.attr-type" in p and "dialect default 9" in p for p in out), out
    break_file(specs / "ops/tci.yaml", "type: bool", "type: f32")
    assert any("tci.yaml" in p and "neither bool nor an integer" in p for p in problems(specs, "ops/tci.yaml"))


def _partial_case(db, op_name):
    op = db.op(op_name)
    for case in positive_cases(db, op):
        t = case.parsed(db)
        if case.profile == "cpu" and t["src1"].valid_shape != t["dst"].valid_shape and t["src1"].valid_row > 0:
            return op, case, t
    raise AssertionError("no partial case")


def test_inside_copies_the_one_valid_source(db):
    op, case, t = _partial_case(db, "tpartadd")
    data = make_inputs(db, op, op.mode(case.mode), t, case.seed, "random")
    out = np.asarray(execute(db, "tpartadd", case.mode, "cpu", t, data)["dst"])
    r1, c1 = t["src1"].valid_shape
    rows, cols = t["dst"].valid_shape
    want = np.array(data["src0"][:rows, :cols])
    want[:r1, :c1] = (data["src0"][:r1, :c1] + data["src1"][:r1, :c1]).astype(want.dtype)
    assert np.array_equal(out[:rows, :cols], want)


def test_unguarded_read_outside_a_source_is_an_error(db, tiles):
    import dataclasses

    from ptospec.expr.parser import parse_statement

    op = db.op("tpartadd")
    mode = op.mode("default")
    naive = dataclasses.replace(mode, semantics=(parse_statement("dst[i, j] = src0[i, j] + src1[i, j]"),))
    fake = dataclasses.replace(db, ops={**db.ops, "tpartadd": dataclasses.replace(op, modes=(naive,))})
    t = tiles(dst="vec, 4x8xf32", src0="vec, 4x8xf32", src1="vec, 4x8xf32, valid=2x8")
    data = make_inputs(db, op, mode, t, 1, "random")
    with pytest.raises(ExprError) as err:
        execute(fake, "tpartadd", "default", "cpu", t, data)
    assert err.value.rule == "exec.read-outside-valid"


def test_generated_cases_keep_partial_sources_and_fixed_scratch(db):
    cases = [c.parsed(db) for c in positive_cases(db, db.op("tpartmul"))]
    smaller_rows = [t for t in cases if 0 < t["src1"].valid_row < t["dst"].valid_row]
    smaller_cols = [t for t in cases if 0 < t["src0"].valid_col < t["dst"].valid_col]
    assert smaller_rows and smaller_cols
    tmp = [c.parsed(db)["tmp"] for c in positive_cases(db, db.op("tci")) if c.mode == "tmp"]
    assert tmp and all(isinstance(t, TileDesc) and (t.rows, t.cols) == (1, 512) for t in tmp)


def _buf(t: str, r: int, c: int, vr: int | None = None) -> str:
    return (f"!pto.tile_buf<loc=vec, dtype={t}, rows={r}, cols={c}, v_row={r if vr is None else vr}, v_col={c}, "
            "blayout=row_major, slayout=none_box, fractal=512, pad=0>")


def _view(k: int, t: str, rows: int, cols: int) -> str:
    return (f"    %tv{k} = pto.make_tensor_view %arg{k}, shape = [%c{rows}, %c{cols}], strides = [%c{cols}, %c1]"
            f" : !pto.tensor_view<?x?x{t}>\n"
            f"    %pv{k} = pto.partition_view %tv{k}, offsets = [%c0, %c0], sizes = [%c{rows}, %c{cols}]"
            f" : !pto.tensor_view<?x?x{t}> -> !pto.partition_tensor_view<{rows}x{cols}x{t}>\n")


GENERATORS = f"""
module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @gens(%arg0: !pto.ptr<i32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>, %arg3: !pto.ptr<f32>,
                  %arg4: !pto.ptr<f32>, %start: i32, %diag: i32) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
{_view(0, "i32", 1, 16)}{_view(1, "f32", 16, 16)}{_view(2, "f32", 16, 16)}
{_view(3, "f32", 8, 16)}{_view(4, "f32", 16, 16)}
    %seq = pto.alloc_tile : {_buf("i32", 1, 16)}
    pto.tci ins(%start {{descending = true}} : i32) outs(%seq : {_buf("i32", 1, 16)})
    pto.tstore ins(%seq : {_buf("i32", 1, 16)}) outs(%pv0 : !pto.partition_tensor_view<1x16xi32>)
    %tri = pto.alloc_tile : {_buf("f32", 16, 16)}
    pto.ttri ins(%diag {{upperOrLower = 1 : i32}} : i32) outs(%tri : {_buf("f32", 16, 16)})
    pto.tstore ins(%tri : {_buf("f32", 16, 16)}) outs(%pv1 : !pto.partition_tensor_view<16x16xf32>)
    %a = pto.alloc_tile : {_buf("f32", 16, 16)}
    %b = pto.alloc_tile : {_buf("f32", 16, 16, 8)}
    %sum = pto.alloc_tile : {_buf("f32", 16, 16)}
    pto.tload ins(%pv2 : !pto.partition_tensor_view<16x16xf32>) outs(%a : {_buf("f32", 16, 16)})
    pto.tload ins(%pv3 : !pto.partition_tensor_view<8x16xf32>) outs(%b : {_buf("f32", 16, 16, 8)})
    pto.tpartadd ins(%a, %b : {_buf("f32", 16, 16)}, {_buf("f32", 16, 16, 8)}) outs(%sum : {_buf("f32", 16, 16)})
    pto.tstore ins(%sum : {_buf("f32", 16, 16)}) outs(%pv4 : !pto.partition_tensor_view<16x16xf32>)
    return
  }}
}}
"""


def test_a_program_of_generators_and_a_partial_add(db, tmp_path):
    from ptospec.program.api import read_program, run_program

    path = tmp_path / "gens.pto"
    path.write_text(GENERATORS)
    a = np.arange(256, dtype=np.float32).reshape(16, 16)
    b = np.full((8, 16), 0.5, dtype=np.float32)
    args = {"arg0": np.zeros((1, 16), np.int32), "arg1": np.zeros((16, 16), np.float32), "arg2": a, "arg3": b,
            "arg4": np.zeros((16, 16), np.float32), "start": 7, "diag": -2}
    out = run_program(db, read_program(path), args).outputs
    assert np.array_equal(out["arg0"], (7 - np.arange(16, dtype=np.int32))[None, :])
    i, j = np.indices((16, 16))
    assert np.array_equal(out["arg1"], np.where(j < i - 2, 0, 1).astype(np.float32))
    want = a.copy()
    want[:8] += 0.5
    assert np.array_equal(out["arg4"], want)
