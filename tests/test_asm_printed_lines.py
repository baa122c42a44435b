"""Every assembly line ptospec prints for a legal invocation passes ``check --asm`` (the Python API).

The legal invocations are the committed conformance suite's positive cases (kept in step with the
specs by ``ptospec gen-tests --check``): every op, mode, profile and dtype binding, in every form.
A synchronous line leaves tmp to the implementation; where the forms cannot tell two modes apart
(TPOW's algorithms), the parser says so and ``--mode`` settles it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ptospec.asm.forms import FORMS, parse_line, print_form, print_template
from ptospec.asm.types import parse_descriptor
from ptospec.conformance.cases import Case
from ptospec.errors import AsmError
from ptospec.validator import validate

SUITE = Path(__file__).resolve().parent.parent / "generated_tests"


def suite_cases(db) -> list[Case]:
    """The positive cases of every generated module, one per (op, mode, profile, dtypes), and each mode's
    own example on every profile where it is legal (the suite finds no NPU case for some modes)."""
    cases: dict[tuple, Case] = {}
    for op in db.ops.values():
        for mode in op.modes:
            tiles = mode.example.tiles
            parsed = {n: parse_descriptor(t, db.isa) for n, t in tiles.items()}
            for profile in op.dtypes:
                if validate(db, op.name, mode.name, profile, parsed).ok:
                    cases[(op.name, mode.name, profile, "example")] = Case(op.name, mode.name, profile, dict(tiles))
    for path in sorted(SUITE.glob("test_*.py")):
        spec = importlib.util.spec_from_file_location(f"_printed_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for value in vars(module).values():
            if not isinstance(value, list):
                continue
            for item in value:
                case = item.values[0] if hasattr(item, "values") and item.values else None
                if isinstance(case, Case) and case.reject is None:
                    dtypes = tuple(sorted((n, t.rsplit("x", 1)[-1].split(",")[0]) for n, t in case.tiles.items()))
                    cases.setdefault((case.op, case.mode, case.profile, dtypes), case)
    return list(cases.values())


@pytest.fixture(scope="module")
def cases(db):
    found = suite_cases(db)
    assert found, f"no positive cases found under {SUITE}"
    return found


def test_every_printed_line_passes_check(db, cases):
    covered: set[tuple[str, str, str]] = set()
    failures: list[str] = []
    for case in cases:
        op = db.op(case.op)
        mode = op.mode(case.mode)
        tiles = case.parsed(db)
        for form in FORMS:
            line = print_form(db, op, mode, form, tiles)
            try:
                parsed = parse_line(db, line, profile=case.profile)
            except AsmError as exc:
                # only a true ambiguity is acceptable, and it must name the printed mode
                if exc.rule != "asm.ambiguous-mode" or case.mode not in exc.message:
                    failures.append(f"{case.op} {case.mode} {case.profile} {form}: {exc}")
                    continue
                parsed = parse_line(db, line, case.mode, profile=case.profile)
            for mode_name in {parsed.mode, case.mode}:
                again = parsed if mode_name == parsed.mode else parse_line(db, line, mode_name)
                report = validate(db, again.op, again.mode, case.profile, again.operands, again.implied)
                if not report.ok:
                    failures.append(f"{case.op} {mode_name} {case.profile} {form}: "
                                    + "; ".join(v.one_line() for v in report.violations))
            covered.add((case.op, case.mode, case.profile))
    assert not failures, "\n".join(failures[:20])
    expected = {(op.name, m.name, p) for op in db.ops.values() for m in op.modes for p in op.dtypes
                if any(m.name in r.modes for r in op.dtypes[p].rows)}
    assert not expected - covered, sorted(expected - covered)


def test_sync_line_implies_tmp_and_skips_its_rules(db):
    line = ("%dstIdx = tcolargmax %src : !pto.tile<vec, 16x256xf32, valid=16x255> -> "
            "!pto.tile<vec, 1x256xu32, valid=1x255>")
    parsed = parse_line(db, line)
    assert parsed.implied == ("tmp",)
    report = validate(db, parsed.op, parsed.mode, "a2a3", parsed.operands, parsed.implied)
    assert report.ok and {"tmp.same-dtype", "tmp.size"} <= set(report.implied)
    # without the form's word that tmp is implied, it is missing
    assert "invocation.missing-operand" in validate(db, parsed.op, parsed.mode, "a2a3", parsed.operands).rule_ids
    # rules on the written operands still apply
    bad = line.replace("1x256xu32", "1x256xf32")
    parsed = parse_line(db, bad)
    assert "dtype.i" in validate(db, parsed.op, parsed.mode, "a2a3", parsed.operands, parsed.implied).rule_ids


def test_mode_from_scalar_position(db):
    tile = "!pto.tile<vec, 16x16xf32>"
    assert parse_line(db, f"%dst = tdivs %src0, %scalar : {tile}, f32 -> {tile}").mode == "default"
    assert parse_line(db, f"%dst = tdivs %scalar, %src0 : f32, {tile} -> {tile}").mode == "scalar_tile"


def test_mode_from_shapes_and_layouts(db):
    full = "!pto.tile<vec, 16x16xf32>"
    column = "!pto.tile<vec, 16x1xf32, layout=dn>"
    block = "!pto.tile<vec, 16x8xf32>"
    assert parse_line(db, f"%d = trowexpandmul %a, %b : {full}, {column} -> {full}", profile="a2a3").mode == "column"
    assert parse_line(db, f"%d = trowexpandmul %a, %b : {full}, {block} -> {full}", profile="a2a3").mode == "block"


def test_form_without_tmp_prefers_the_mode_without_tmp(db):
    tile = "!pto.tile<vec, 16x16xf32>"
    assert parse_line(db, f"%d = trsqrt %s : {tile} -> {tile}").mode == "default"
    dps = f"pto.trsqrt ins(%s, %t : {tile}, {tile}) outs(%d : {tile})"
    assert parse_line(db, dps).mode == "tmp"


def test_attribute_keys_choose_the_mode(db):
    tile = "!pto.tile<vec, 16x16xf32>"
    half = "!pto.tile<vec, 16x16xf16>"
    line = f"%d = tcvt %s {{rmode = #pto.round_mode<CAST_RINT>, satMode = #pto.sat_mode<ON>}} : {tile} -> {half}"
    assert parse_line(db, line, profile="a5").mode.endswith("round_sat")
    line = f"%d = tcvt %s {{rmode = #pto.round_mode<CAST_RINT>}} : {tile} -> {half}"
    assert parse_line(db, line, profile="a5").mode.endswith("round")


def test_true_ambiguity_is_one_clear_error(db):
    tile = "!pto.tile<vec, 16x16xf32>"
    with pytest.raises(AsmError, match=r"several modes.*--mode") as info:
        parse_line(db, f"%d = tpow %b, %e : {tile}, {tile} -> {tile}")
    assert info.value.rule == "asm.ambiguous-mode"
    assert parse_line(db, f"%d = tpow %b, %e : {tile}, {tile} -> {tile}", "high_precision").mode == "high_precision"


def test_template_shows_a_scalar_type(db):
    op = db.op("tdivs")
    sync = print_template(op, op.mode("scalar_tile"), "sync")
    assert sync.startswith("%dst = tdivs %scalar, %src0 : T, !pto.tile<...>")
