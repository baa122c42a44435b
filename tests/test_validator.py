"""Validator cases written from the seed pages: each rule of the five seed ops is
seen accepted (some legal case passes it) and violated (a case that breaks it alone)."""

from __future__ import annotations

import pytest

from ptospec.errors import InvocationError
from ptospec.validator import judge, validate

SEED_OPS = ("tcolargmax", "tmax", "trowmax", "tcolexpandmax", "tcolmin")

IDX_SRC = "vec, 16x256xf32, valid=16x255"
IDX_DST = "vec, 1x256xu32, valid=1x255"
TMP32 = "vec, 1x128xf32"  # f32, 255 valid columns: two regions of 64 elements

# (op, mode, profile, tiles, expected violated rule ids)
CASES = [
    # ---- tcolargmax, pure index
    ("tcolargmax", "index", "a2a3", dict(src=IDX_SRC, dstIdx=IDX_DST, tmp=TMP32), set()),
    ("tcolargmax", "index", "a5", dict(src="vec,16x32xi8,valid=5x30", dstIdx="vec,1x32xi32,valid=1x30",
                                       tmp="vec,1x32xf16"), set()),
    ("tcolargmax", "index", "a2a3", dict(src="vec,16x32xi8", dstIdx="vec,1x32xi32", tmp="vec,1x64xi8"),
     {"dtype.t"}),
    ("tcolargmax", "index", "a2a3", dict(src=IDX_SRC, dstIdx="vec,1x256xi16,valid=1x255", tmp=TMP32),
     {"dtype.i"}),
    ("tcolargmax", "index", "a2a3", dict(src="mat,16x256xf32,valid=16x255", dstIdx=IDX_DST, tmp=TMP32),
     {"loc.vec"}),
    ("tcolargmax", "index", "a2a3", dict(src="vec,16x256xf32,valid=16x255,layout=dn", dstIdx=IDX_DST,
                                         tmp=TMP32), {"layout.npu-src-row-major"}),
    ("tcolargmax", "index", "cpu", dict(src="vec,16x256xf32,valid=16x255,layout=dn", dstIdx=IDX_DST,
                                        tmp=TMP32), set()),
    ("tcolargmax", "index", "a2a3", dict(src=IDX_SRC, dstIdx="vec,8x256xu32,valid=1x255,layout=dn", tmp=TMP32),
     {"layout.dst-idx"}),
    ("tcolargmax", "index", "a2a3", dict(src="vec,16x256xf32,valid=0x255", dstIdx=IDX_DST, tmp=TMP32),
     {"runtime.src-rows"}),
    ("tcolargmax", "index", "a2a3", dict(src="vec,16x256xf32,valid=16x0", dstIdx="vec,1x256xu32,valid=1x0",
                                         tmp=TMP32), {"runtime.src-cols"}),
    ("tcolargmax", "index", "a2a3", dict(src=IDX_SRC, dstIdx="vec,2x256xu32,valid=2x255", tmp=TMP32),
     {"runtime.dst-idx-one-row"}),
    ("tcolargmax", "index", "a2a3", dict(src=IDX_SRC, dstIdx="vec,1x256xu32,valid=1x254", tmp=TMP32),
     {"runtime.dst-idx-cols"}),
    ("tcolargmax", "index", "a2a3", dict(src=IDX_SRC, dstIdx=IDX_DST, tmp="vec,1x128xu32"), {"tmp.same-dtype"}),
    # tmp sizing on a2a3: f32, 255 valid columns -> the kernel touches 2 x 64 elements (the page's formula: 16)
    ("tcolargmax", "index", "a2a3", dict(src=IDX_SRC, dstIdx=IDX_DST, tmp="vec,1x8xf32"), {"tmp.size"}),
    ("tcolargmax", "index", "a2a3", dict(src=IDX_SRC, dstIdx=IDX_DST, tmp="vec,1x16xf32"), {"tmp.size"}),
    ("tcolargmax", "index", "a2a3", dict(src=IDX_SRC, dstIdx=IDX_DST, tmp="vec,2x64xf32"), set()),
    # ... and any tmp on a5, where it is unused
    ("tcolargmax", "index", "a5", dict(src=IDX_SRC, dstIdx=IDX_DST, tmp="vec,1x8xf32"), set()),
    ("tcolargmax", "index", "a5", dict(src=IDX_SRC, dstIdx=IDX_DST, tmp="vec,16x16xi16"), set()),
    # ---- tcolargmax, value + index: size-conditional index types
    ("tcolargmax", "value_index", "a2a3", dict(src="vec,16x64xf16,valid=16x60", dstVal="vec,1x64xf16,valid=1x60",
                                               dstIdx="vec,1x64xi16,valid=1x60", tmp="vec,1x128xf16"), set()),
    ("tcolargmax", "value_index", "a2a3", dict(src="vec,16x64xf16,valid=16x60", dstVal="vec,1x64xf16,valid=1x60",
                                               dstIdx="vec,1x64xi32,valid=1x60", tmp="vec,1x128xf16"), {"dtype.i"}),
    # f16, 60 valid columns: region 1 starts at 64 and covers 60 elements
    ("tcolargmax", "value_index", "a2a3", dict(src="vec,16x64xf16,valid=16x60", dstVal="vec,1x64xf16,valid=1x60",
                                               dstIdx="vec,1x64xi16,valid=1x60", tmp="vec,1x64xf16"),
     {"tmp.size-value-index"}),
    ("tcolargmax", "value_index", "a5", dict(src="vec,16x64xf32,valid=16x60", dstVal="vec,1x64xf32,valid=1x60",
                                             dstIdx="vec,1x64xu16,valid=1x60", tmp="vec,1x64xf32"), {"dtype.i"}),
    ("tcolargmax", "value_index", "a5", dict(src="vec,16x64xi8", dstVal="vec,1x64xi8", dstIdx="vec,1x64xi32",
                                             tmp="vec,1x64xi8"), {"dtype.t", "value-index.no-8bit"}),
    ("tcolargmax", "value_index", "a5", dict(src="vec,16x64xf32,valid=16x60", dstVal="vec,1x64xf16,valid=1x60",
                                             dstIdx="vec,1x64xi32,valid=1x60", tmp="vec,1x64xf32"),
     {"dtype.same-t"}),
    ("tcolargmax", "value_index", "a5", dict(src="vec,16x64xf32,valid=16x60", dstVal="acc,1x64xf32,valid=1x60",
                                             dstIdx="vec,1x64xi32,valid=1x60", tmp="vec,1x64xf32"),
     {"loc.dst-val-vec"}),
    ("tcolargmax", "value_index", "a5", dict(src="vec,16x64xf32,valid=16x60",
                                             dstVal="vec,8x64xf32,valid=1x60,layout=dn",
                                             dstIdx="vec,1x64xi32,valid=1x60", tmp="vec,1x64xf32"),
     {"layout.dst-val"}),
    ("tcolargmax", "value_index", "a5", dict(src="vec,16x64xf32,valid=16x60", dstVal="vec,2x64xf32,valid=2x60",
                                             dstIdx="vec,1x64xi32,valid=1x60", tmp="vec,1x64xf32"),
     {"runtime.dst-val-one-row", "runtime.dst-val-idx-rows"}),
    ("tcolargmax", "value_index", "a5", dict(src="vec,16x64xf32,valid=16x60", dstVal="vec,1x64xf32,valid=1x0",
                                             dstIdx="vec,1x64xi32,valid=1x60", tmp="vec,1x64xf32"),
     {"runtime.dst-val-cols-nonzero", "runtime.dst-val-cols", "runtime.dst-val-idx-cols"}),
    ("tcolargmax", "value_index", "a5", dict(src="vec,16x64xf32,valid=16x60", dstVal="vec,1x64xf32,valid=1x59",
                                             dstIdx="vec,1x64xi32,valid=1x60", tmp="vec,1x64xf32"),
     {"runtime.dst-val-cols", "runtime.dst-val-idx-cols"}),
    # cpu: the simulator's value+index path needs an ND source and 4-byte indices
    ("tcolargmax", "value_index", "cpu", dict(src="vec,16x64xf32,valid=16x60,layout=dn",
                                              dstVal="vec,1x64xf32,valid=1x60", dstIdx="vec,1x64xi32,valid=1x60",
                                              tmp="vec,1x64xf32"), {"layout.cpu-src-value-index"}),
    ("tcolargmax", "value_index", "cpu", dict(src="vec,16x64xf16,valid=16x60", dstVal="vec,1x64xf16,valid=1x60",
                                              dstIdx="vec,1x64xi16,valid=1x60", tmp="vec,1x64xf16"), {"dtype.i"}),
    ("tcolargmax", "value_index", "cpu", dict(src="vec,16x64xf32,valid=16x60", dstVal="vec,1x64xf32,valid=1x60",
                                              dstIdx="vec,1x64xi32,valid=1x60", tmp="vec,1x32xi8"), set()),
    # ---- tmax
    ("tmax", "default", "a2a3", dict(src0="vec,16x16xf32", src1="vec,16x16xf32", dst="vec,16x16xf32"), set()),
    ("tmax", "default", "a2a3", dict(src0="vec,16x32xu8", src1="vec,16x32xu8", dst="vec,16x32xu8"), {"dtype.t"}),
    ("tmax", "default", "a5", dict(src0="vec,16x32xu8", src1="vec,16x32xu8", dst="vec,16x32xu8"), set()),
    ("tmax", "default", "a5", dict(src0="vec,16x16xbf16", src1="vec,16x16xbf16", dst="vec,16x16xbf16"),
     {"dtype.t"}),
    ("tmax", "default", "a5", dict(src0="left,16x16xf32", src1="vec,16x16xf32", dst="vec,16x16xf32"), {"loc.vec"}),
    ("tmax", "default", "a5", dict(src0="vec,16x16xf32,layout=dn", src1="vec,16x16xf32", dst="vec,16x16xf32"),
     {"layout.row-major"}),
    ("tmax", "default", "a2a3", dict(src0="vec,16x16xf32,valid=15x16", src1="vec,16x16xf32", dst="vec,16x16xf32"),
     {"runtime.src0-valid-shape"}),
    ("tmax", "default", "cpu", dict(src0="vec,16x16xf32", src1="vec,16x16xf32,valid=16x3", dst="vec,16x16xf32"),
     {"runtime.src1-valid-shape"}),
    ("tmax", "default", "cpu", dict(src0="vec,16x16xf32,layout=dn", src1="vec,16x16xf32", dst="vec,16x16xf32"),
     set()),
    # ---- trowmax (the Chinese seed page)
    ("trowmax", "default", "a2a3", dict(src="vec,16x16xf32", dst="vec,16x1xf32,layout=dn", tmp="vec,16x16xf32"),
     set()),
    ("trowmax", "default", "a2a3", dict(src="vec,16x16xf32", dst="vec,16x8xf32,valid=16x1", tmp="vec,16x16xf32"),
     set()),
    ("trowmax", "default", "a2a3", dict(src="vec,16x16xf32", dst="vec,16x8xf32,layout=dn", tmp="vec,16x16xf32"),
     {"layout.dst-dn-one-col"}),
    ("trowmax", "default", "a2a3", dict(src="vec,16x16xf32,layout=dn", dst="vec,16x1xf32,layout=dn",
                                        tmp="vec,16x16xf32"), {"layout.src"}),
    ("trowmax", "default", "a5", dict(src="vec,16x16xf32",
                                      dst="vec,16x16xf32,valid=16x1,blayout=row_major,slayout=col_major",
                                      tmp="vec,16x16xf32"), {"layout.dst"}),
    # a fractal tile that is no whole number of inner boxes does not compile (pto_tile.hpp)
    ("trowmax", "default", "a5", dict(src="vec,16x16xf32", dst="vec,16x1xf32,slayout=row_major,layout=dn",
                                      tmp="vec,16x16xf32"), {"layout.dst", "tile.fractal-box"}),
    ("trowmax", "default", "a2a3", dict(src="vec,16x32xi8", dst="vec,16x32xi8", tmp="vec,16x32xi8"), {"dtype.t"}),
    ("trowmax", "default", "a5", dict(src="vec,16x32xi8", dst="vec,16x32xi8", tmp="vec,16x32xi8"), set()),
    ("trowmax", "default", "a5", dict(src="vec,16x16xf32", dst="mat,16x1xf32,layout=dn", tmp="vec,16x16xf32"),
     {"loc.vec"}),
    ("trowmax", "default", "a2a3", dict(src="vec,16x16xf32,valid=0x16", dst="vec,16x1xf32,layout=dn,valid=0x1",
                                        tmp="vec,16x16xf32"), {"runtime.src-rows"}),
    ("trowmax", "default", "a2a3", dict(src="vec,16x16xf32,valid=16x0", dst="vec,16x1xf32,layout=dn",
                                        tmp="vec,16x16xf32"), {"runtime.src-cols"}),
    ("trowmax", "default", "a2a3", dict(src="vec,16x16xf32,valid=12x16", dst="vec,16x1xf32,layout=dn",
                                        tmp="vec,16x16xf32"), {"runtime.valid-row-match"}),
    ("trowmax", "default", "a2a3", dict(src="vec,16x16xf32", dst="vec,16x1xf16,layout=dn", tmp="vec,16x16xf32"),
     {"dtype.same-t"}),
    # ---- tcolexpandmax
    ("tcolexpandmax", "default", "a5", dict(src0="vec,16x16xf16", src1="vec,1x16xf16", dst="vec,16x16xf16"), set()),
    ("tcolexpandmax", "default", "a5", dict(src0="vec,16x16xi32", src1="vec,1x16xi32", dst="vec,16x16xi32"),
     {"dtype.t"}),
    ("tcolexpandmax", "default", "cpu", dict(src0="vec,16x16xi32", src1="vec,1x16xi32", dst="vec,16x16xi32"), set()),
    ("tcolexpandmax", "default", "a2a3", dict(src0="vec,16x16xf32", src1="vec,1x16xf32",
                                              dst="vec,16x16xf32,layout=dn"), {"layout.dst-row-major"}),
    ("tcolexpandmax", "default", "cpu", dict(src0="vec,16x16xf32,layout=dn", src1="vec,1x16xf32",
                                             dst="vec,16x16xf32"), {"layout.cpu-src-row-major"}),
    ("tcolexpandmax", "default", "a2a3", dict(src0="vec,16x16xf32", src1="vec,1x16xf32,valid=1x8",
                                              dst="vec,16x16xf32"), {"src1.covers-columns"}),
    ("tcolexpandmax", "default", "a2a3", dict(src0="vec,16x16xf32,valid=8x16", src1="vec,1x16xf32",
                                              dst="vec,16x16xf32"), {"src0.covers-region"}),
    # ---- tcolmin (two profile lists, from the seed and the upstream page)
    ("tcolmin", "default", "a2a3", dict(src="vec,16x16xf32,valid=3x16", dst="vec,1x16xf32"), set()),
    ("tcolmin", "default", "a2a3", dict(src="vec,16x32xu8", dst="vec,1x32xu8"), {"dtype.t"}),
    ("tcolmin", "default", "a5", dict(src="vec,16x32xu8", dst="vec,1x32xu8"), set()),
    ("tcolmin", "default", "a5", dict(src="vec,16x16xbf16", dst="vec,1x16xbf16"), set()),
    ("tcolmin", "default", "a2a3", dict(src="vec,16x16xf32", dst="vec,1x16xi32"), {"dtype.same-t"}),
    ("tcolmin", "default", "a2a3", dict(src="bias,16x16xf32", dst="vec,1x16xf32"), {"loc.vec"}),
    ("tcolmin", "default", "a2a3", dict(src="vec,16x16xf32,layout=dn", dst="vec,1x16xf32"), {"layout.nd"}),
    ("tcolmin", "default", "a2a3", dict(src="vec,16x16xf32", dst="vec,1x16xf32,valid=1x12"),
     {"runtime.valid-col-match"}),
    ("tcolmin", "default", "cpu", dict(src="vec,16x16xu64", dst="vec,1x16xu64"), set()),
    # ---- ISA-wide tile rules
    ("tcolmin", "default", "a2a3", dict(src="vec,16x12xf32", dst="vec,1x12xf32"),
     {"tile.align-row-major"}),
    ("tcolmin", "default", "a2a3", dict(src="vec,16x16xf32,valid=17x16", dst="vec,1x16xf32"), {"tile.valid-bounds"}),
    # an empty valid region addresses no element, whatever its other extent (the A5 TPART* tests' empty sources)
    ("tpartmax", "default", "a5", dict(src0="vec,8x16xf32", src1="vec,1x16xf32,valid=8x0", dst="vec,8x16xf32"), set()),
    ("tpartmax", "default", "a5", dict(src0="vec,8x16xf32", src1="vec,1x16xf32,valid=8x1", dst="vec,8x16xf32"),
     {"tile.valid-bounds"}),
]


def _id(case):
    op, mode, profile, _, expected = case
    return f"{op}-{mode}-{profile}-{'+'.join(sorted(expected)) or 'legal'}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_case(db, tiles, case):
    op, mode, profile, descs, expected = case
    report = validate(db, op, mode, profile, tiles(**descs))
    assert report.rule_ids == expected, [v.one_line() for v in report.violations]
    for v in report.violations:
        assert v.message and v.rule


def test_judge_reports_what_validate_reports_without_sentences(db, tiles):
    """The search's verdicts (``judge``): validate's rule ids, operands and deferred checks, also when they
    come from its memo of each rule's outcome by the fields the rule reads (the cases again, backwards)."""
    from ptospec import validator

    for k, (op, mode, profile, descs, _expected) in enumerate([*CASES, *reversed(CASES)]):
        if k == len(CASES):
            validator._JUDGED.clear()  # backwards: each verdict from the per-rule outcomes, not the whole judgement
        operands = tiles(**descs)
        full = validate(db, op, mode, profile, operands)
        quick = judge(db, db.ops[op], db.ops[op].mode(mode), profile, operands)
        assert [(v.rule, v.operands) for v in quick.violations] == [(v.rule, v.operands) for v in full.violations]
        assert quick.deferred == full.deferred
    deferred = tiles(src="vec,16x16xf32,valid=?x?", dst="vec,1x16xf32")
    assert "runtime.valid-col-match" in judge(db, db.ops["tcolmin"], db.ops["tcolmin"].modes[0], "a2a3",
                                              deferred).deferred


def test_every_rule_of_the_seed_ops_is_both_accepted_and_violated(db, tiles):
    accepted: set[str] = set()
    violated: set[str] = set()
    for op, mode, profile, _descs, expected in CASES:
        violated |= expected
        if not expected:
            accepted |= {r.id for r in db.ops[op].rules if mode in r.modes and profile in r.profiles}
    missing_violated, missing_accepted = [], []
    for name in SEED_OPS:
        for rule in db.ops[name].rules:
            if rule.id not in violated:
                missing_violated.append(f"{name}:{rule.id}")
            if rule.id not in accepted:
                missing_accepted.append(f"{name}:{rule.id}")
    assert not missing_violated, f"rules never violated by a case: {missing_violated}"
    assert not missing_accepted, f"rules never passed by a legal case: {missing_accepted}"


def test_examples_are_legal(db, tiles):
    for op in db.ops.values():
        for mode in op.modes:
            report = validate(db, op.name, mode.name, mode.example.profile, tiles(**mode.example.tiles))
            assert report.ok, (op.name, mode.name, [v.one_line() for v in report.violations])


def test_dynamic_valid_shape_is_deferred(db, tiles):
    report = validate(db, "tcolmin", None, "a2a3", tiles(src="vec,16x16xf32,valid=?x?", dst="vec,1x16xf32"))
    assert report.ok
    assert "runtime.valid-col-match" in report.deferred


def test_unknown_names_are_clear(db, tiles):
    with pytest.raises(InvocationError, match="unknown op"):
        validate(db, "tcolmax_typo", None, "a2a3", {})
    with pytest.raises(InvocationError, match="unknown profile"):
        validate(db, "tcolmin", None, "a9", {})
    with pytest.raises(InvocationError, match="several modes"):
        validate(db, "tcolargmax", None, "a2a3", {})
    # operands that fit no mode exactly: the missing ones are named, per mode
    with pytest.raises(InvocationError, match=r"missing operand\(s\) tmp \(mode index\) or dstVal, tmp"):
        validate(db, "tcolargmax", None, "a2a3", tiles(src="vec,16x16xf32", dstIdx="vec,1x16xi32"))
    with pytest.raises(InvocationError, match="has no operand dst"):
        validate(db, "tcolargmax", None, "a2a3", tiles(src="vec,16x16xf32", dst="vec,1x16xi32"))
    report = validate(db, "tcolmin", None, "a2a3", tiles(src="vec,16x16xf32"))
    assert report.rule_ids == {"invocation.missing-operand"}


def test_mode_is_inferred_from_operands(db, tiles):
    report = validate(db, "tcolargmax", None, "a5", tiles(src=IDX_SRC, dstIdx=IDX_DST, tmp=TMP32))
    assert report.mode == "index" and report.ok
