"""The cpusim harness without a compiler: driver generation, build cache and isolation loop (with a fake
clang), compiler-output and run-result classification, divergence explanation and the report."""

from __future__ import annotations

import dataclasses
import json
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from ptospec.backends.cpusim import cppgen, diagnostics, outcome
from ptospec.backends.cpusim.build import Builder, Stats, VariantStatus, content_key
from ptospec.backends.cpusim.execute import RunRecord
from ptospec.backends.cpusim.harness import TRAP_EXIT
from ptospec.backends.cpusim.toolchain import Checkout, Compiler, ToolchainError, find_checkout, find_compiler
from ptospec.conformance.backend import Invocation, Result
from ptospec.conformance.data import make_inputs
from ptospec.conformance.divergence import (
    HARNESS,
    KNOWN_BUG,
    RECORDED,
    UNRECORDED,
    ConformanceReport,
    Divergence,
    explain,
    field_refs,
)
from ptospec.expr.parser import parse_expr
from ptospec.model import Difference, Observation, Operand
from ptospec.tile import ScalarDesc, TileDesc

DATA = Path(__file__).resolve().parent / "data" / "cpusim"


def invocation(db, tiles, op: str, mode: str = "default", **descs: str) -> Invocation:
    parsed = tiles(**descs)
    spec = db.op(op)
    data = make_inputs(db, spec, spec.mode(mode), parsed, seed=7, pattern="random")
    return Invocation(op, mode, "cpu", parsed, data)


# ------------------------------------------------------------------ driver generation


def test_tile_types_and_call_come_from_the_spec(db, tiles):
    inv = invocation(db, tiles, "tcolargmax", "value_index",
                     dstVal="vec, 1x32xf16, valid=1x19", dstIdx="vec, 1x32xi32, valid=1x19",
                     src="vec, 32x32xf16, valid=7x19, layout=dn", tmp="vec, 1x32xu8")
    plan = cppgen.plan_variant(db, inv)
    assert plan.call == "TCOLARGMAX"
    assert plan.args == ("dstVal", "dstIdx", "src", "tmp")
    roles = {o.name: o.role for o in plan.operands}
    assert roles == {"dstVal": "out", "dstIdx": "out", "src": "in", "tmp": "tmp"}
    assert plan.operand("src").cpp == ("Tile<TileType::Vec, half, 32, 32, BLayout::ColMajor, DYNAMIC, DYNAMIC, "
                                       "SLayout::NoneBox, 512, PadValue::Null>")
    assert plan.operand("dstIdx").cpp.startswith("Tile<TileType::Vec, int32_t, 1, 32, BLayout::RowMajor,")
    assert plan.operand("tmp").cpp.startswith("Tile<TileType::Vec, uint8_t, 1, 32,")
    body = "\n".join(cppgen.variant_block("v0", plan))
    assert "TCOLARGMAX(dstVal, dstIdx, src, tmp);" in body
    assert 'ptocs_bench.tile(src, "src", ptocs::Role::In);' in body
    assert 'ptocs_bench.tile(tmp, "tmp", ptocs::Role::Tmp);' in body
    assert 'dstVal_t dstVal(ptocs_case.dim("dstVal.vr"), ptocs_case.dim("dstVal.vc"));' in body


@pytest.mark.parametrize("op,mode,descs,call,dtype_cpp", [
    ("tmax", "default", {"dst": "vec, 16x16xf32", "src0": "vec, 16x16xf32", "src1": "vec, 16x16xf32"},
     "TMAX(dst, src0, src1);", "float"),
    ("trowmax", "default", {"dst": "vec, 16x1xi16, layout=dn", "src": "vec, 16x16xi16", "tmp": "vec, 16x16xi16"},
     "TROWMAX(dst, src, tmp);", "int16_t"),
    ("tcolmin", "default", {"dst": "vec, 1x32xu8", "src": "vec, 4x32xu8, valid=3x20"},
     "TCOLMIN(dst, src);", "uint8_t"),
    ("tcolexpandmax", "default", {"dst": "vec, 8x16xi32", "src0": "vec, 8x16xi32", "src1": "vec, 1x16xi32"},
     "TCOLEXPANDMAX(dst, src0, src1);", "int32_t"),
])
def test_every_seed_op_plans_without_op_specific_code(db, tiles, op, mode, descs, call, dtype_cpp):
    plan = cppgen.plan_variant(db, invocation(db, tiles, op, mode, **descs))
    unit = cppgen.render_unit([plan])
    assert call in unit.text
    assert f"Tile<TileType::Vec, {dtype_cpp}," in unit.text
    assert '{"v0", &v0::run},' in unit.text and "PTOCS_MAIN(kVariants)" in unit.text


def test_dn_destination_and_row_major_source_differ_in_the_type(db, tiles):
    inv = invocation(db, tiles, "trowmax", dst="vec, 16x1xf32, layout=dn", src="vec, 16x16xf32",
                     tmp="vec, 16x16xf32")
    plan = cppgen.plan_variant(db, inv)
    assert "BLayout::ColMajor" in plan.operand("dst").cpp
    assert "BLayout::RowMajor" in plan.operand("src").cpp


def _with_scalar(db):
    """tmax with src1 turned into a scalar operand: a stand-in for the tile-scalar family."""
    tmax = db.op("tmax")
    mode = tmax.modes[0]
    operands = tuple(Operand(o.name, "scalar", o.dtype, o.text, o.usage) if o.name == "src1" else o
                     for o in mode.operands)
    fake_mode = dataclasses.replace(mode, operands=operands, cpp_name="TMAXS")
    fake = dataclasses.replace(tmax, name="tmaxs", modes=(fake_mode,))
    return dataclasses.replace(db, ops={**db.ops, "tmaxs": fake})


def test_scalar_operands_are_passed_by_value(db, tiles):
    fake_db = _with_scalar(db)
    parsed = {"dst": tiles(dst="vec, 16x16xf16")["dst"], "src0": tiles(src0="vec, 16x16xf16")["src0"],
              "src1": ScalarDesc("f16")}
    inputs = {"dst": np.zeros((16, 16), np.float16), "src0": np.ones((16, 16), np.float16),
              "src1": np.float16(2.5)}
    inv = Invocation("tmaxs", "default", "cpu", parsed, inputs)
    plan = cppgen.plan_variant(fake_db, inv)
    body = "\n".join(cppgen.variant_block("v0", plan))
    assert 'const half src1 = ptocs_bench.scalar<half>("src1");' in body
    assert "TMAXS(dst, src0, src1);" in body
    files = cppgen.operand_bytes(fake_db, plan, inv)
    assert files["src1"] == np.float16(2.5).tobytes()
    assert "src1.vr" not in cppgen.params(plan, inv)


def test_attribute_operands_are_enumerators_of_the_variant(db, tiles):
    enums = getattr(db.isa, "enums", {})
    if not enums:
        pytest.skip("this database has no enums")
    enum = next(iter(enums.values()))
    tmax = db.op("tmax")
    mode = tmax.modes[0]
    attr = Operand("mode", "attr", "", {"en": "x"}, {}, enum=enum.name)
    fake_mode = dataclasses.replace(mode, operands=(*mode.operands, attr), cpp_name="TMAXA",
                                    cpp_args=(*mode.cpp_args, "mode"))
    fake_db = dataclasses.replace(db, ops={**db.ops, "tmaxa": dataclasses.replace(tmax, name="tmaxa",
                                                                                   modes=(fake_mode,))})
    from ptospec.tile import AttrDesc

    base = invocation(db, tiles, "tmax", dst="vec, 8x16xf16", src0="vec, 8x16xf16", src1="vec, 8x16xf16")
    plans = []
    for value in enum.values[:2]:
        inv = Invocation("tmaxa", "default", "cpu", {**base.tiles, "mode": AttrDesc(value)}, base.inputs)
        plans.append(cppgen.plan_variant(fake_db, inv))
        body = "\n".join(cppgen.variant_block("v0", plans[-1]))
        assert f"const {enum.cpp} mode = {enum.cpp}::{value};" in body
        assert "TMAXA(dst, src0, src1, mode);" in body
        assert set(cppgen.operand_bytes(fake_db, plans[-1], inv)) == {"dst", "src0", "src1"}
    assert plans[0].signature != plans[1].signature  # each value is its own compiled variant
    bad = Invocation("tmaxa", "default", "cpu", {**base.tiles, "mode": AttrDesc("NO_SUCH")}, base.inputs)
    with pytest.raises(cppgen.Unplannable, match="no legal value"):
        cppgen.plan_variant(fake_db, bad)


def test_literal_arguments_pass_through_and_unknown_names_are_skipped(db, tiles):
    tcolmin = db.op("tcolmin")
    mode = tcolmin.modes[0]
    inv = invocation(db, tiles, "tcolmin", dst="vec, 1x16xf32", src="vec, 16x16xf32")

    def with_args(*args):
        m = dataclasses.replace(mode, cpp_args=args)
        return dataclasses.replace(db, ops={**db.ops, "tcolmin": dataclasses.replace(tcolmin, modes=(m,))})

    plan = cppgen.plan_variant(with_args("dst", "src", "true", "2"), inv)
    assert plan.args == ("dst", "src", "true", "2")
    assert cppgen.plan_variant(with_args("dst", "src", False), inv).args == ("dst", "src", "false")
    assert "TCOLMIN(dst, src, true, 2);" in cppgen.render_unit([plan]).text
    with pytest.raises(cppgen.Unplannable, match="isBinary"):
        cppgen.plan_variant(with_args("dst", "src", "isBinary"), inv)


def test_an_unknown_operand_role_is_a_skip_reason(db, tiles):
    tmax = db.op("tmax")
    mode = tmax.modes[0]
    operands = tuple(Operand(o.name, "inout" if o.name == "src1" else o.role, o.dtype, o.text, o.usage)
                     for o in mode.operands)
    fake_db = dataclasses.replace(db, ops={**db.ops, "tmax": dataclasses.replace(
        tmax, modes=(dataclasses.replace(mode, operands=operands),))})
    inv = invocation(db, tiles, "tmax", dst="vec, 16x16xf32", src0="vec, 16x16xf32", src1="vec, 16x16xf32")
    with pytest.raises(cppgen.Unplannable, match="role 'inout'"):
        cppgen.plan_variant(fake_db, inv)


def test_unit_spans_cover_each_variant_and_files_are_logical(db, tiles):
    a = invocation(db, tiles, "tcolmin", dst="vec, 1x16xf32", src="vec, 16x16xf32, valid=5x9")
    b = invocation(db, tiles, "tcolmin", dst="vec, 1x32xf16", src="vec, 8x32xf16, layout=dn")
    plans = [cppgen.plan_variant(db, a), cppgen.plan_variant(db, b)]
    unit = cppgen.render_unit(plans, ["v0", "v7"])
    lines = unit.text.splitlines()
    for name, (first, last) in unit.spans.items():
        block = "\n".join(lines[first - 1:last])
        assert block.startswith(f"// {name}:") and f"}} // namespace {name}" in block
        line, callee = unit.calls[name]
        assert first < line < last and lines[line - 1].strip() == "TCOLMIN(dst, src);" and callee == "TCOLMIN"
    assert unit.spans["v0"][1] < unit.spans["v7"][0]
    assert cppgen.render_unit(plans, ["v0", "v7"]).text == unit.text  # deterministic
    params = cppgen.params(plans[0], a)
    assert params["src.vr"] == "5" and params["src.vc"] == "9" and "fill" in params
    files = cppgen.operand_bytes(db, plans[1], b)
    assert files["src"] == np.ascontiguousarray(b.inputs["src"]).tobytes()  # logical row-major, even for DN
    assert set(files) == {"dst", "src"}


def test_repro_program_is_self_contained(db, tiles):
    inv = invocation(db, tiles, "tcolmin", dst="vec, 1x8xf32, valid=1x3", src="vec, 2x8xf32, valid=2x3")
    plan = cppgen.plan_variant(db, inv)
    text = cppgen.repro_program(db, plan, inv, "clang++ ... repro.cpp")
    assert "#include <pto/pto-inst.hpp>" in text and "int main()" in text
    assert "TCOLMIN(dst, src);" in text and 'show("dst", dst);' in text
    first = np.asarray(inv.inputs["src"], np.float32).reshape(-1).view(np.uint32)[0]
    assert f"0x{int(first):08x}" in text
    assert "ptocs" not in text  # does not need the harness header
    core = cppgen.repro_core(plan, inv)
    assert "dst_t dst(1, 3);" in core and "src_t src(2, 3);" in core


# ------------------------------------------------------------------ toolchain


def test_missing_checkout_and_compiler_are_one_line_errors(tmp_path, monkeypatch):
    monkeypatch.delenv("PTO_ISA_ROOT", raising=False)
    with pytest.raises(ToolchainError, match="PTO_ISA_ROOT"):
        find_checkout(None)
    with pytest.raises(ToolchainError, match="not a pto-isa checkout"):
        find_checkout(tmp_path)
    with pytest.raises(ToolchainError, match="not a clang"):
        find_compiler(str(tmp_path / "no-such-clang++"))


def test_old_clang_is_refused(tmp_path, monkeypatch):
    fake = _fake_compiler(tmp_path)
    monkeypatch.setenv("FAKE_CLANG_MAJOR", "15")
    from ptospec.backends.cpusim import toolchain

    toolchain._probe.cache_clear()
    try:
        with pytest.raises(ToolchainError, match="clang 15; clang 17 or newer"):
            find_compiler(str(fake))
    finally:
        toolchain._probe.cache_clear()


def test_checkout_fingerprint_follows_header_contents(tmp_path):
    from ptospec.backends.cpusim.toolchain import fingerprint

    inc = tmp_path / "a" / "include" / "pto"
    inc.mkdir(parents=True)
    (inc / "pto-inst.hpp").write_text("// v1\n")
    first = find_checkout(tmp_path / "a").fingerprint
    fingerprint.cache_clear()
    assert find_checkout(tmp_path / "a").fingerprint == first
    (inc / "pto-inst.hpp").write_text("// v2\n")
    fingerprint.cache_clear()
    assert find_checkout(tmp_path / "a").fingerprint != first


# ------------------------------------------------------------------ cache keys and the build loop


def _fake_compiler(tmp_path: Path) -> Path:
    script = tmp_path / "fake-clang++"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {DATA / 'fake_clang.py'} \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def _builder(tmp_path: Path, banner: str = "clang version 19.1.7 (fake)", fingerprint: str = "f" * 64) -> Builder:
    compiler = Compiler(str(_fake_compiler(tmp_path)), 19, banner)
    checkout = Checkout(tmp_path / "checkout", fingerprint)
    return Builder(compiler, checkout, tmp_path / "cache", Stats())


def test_cache_keys_are_stable_and_content_sensitive(tmp_path):
    a, b = _builder(tmp_path), _builder(tmp_path)
    assert a.key("unit", "int x;") == b.key("unit", "int x;")
    assert a.key("unit", "int x;") != a.key("unit", "int y;")
    assert _builder(tmp_path, banner="clang version 20.0.0").key("unit", "int x;") != a.key("unit", "int x;")
    assert _builder(tmp_path, fingerprint="0" * 64).key("unit", "int x;") != a.key("unit", "int x;")
    a.flags = [*a.flags, "-O1"]
    assert a.key("unit", "int x;") != b.key("unit", "int x;")
    assert content_key("ab", "c") != content_key("a", "bc")


def _plans(db, tiles, markers: list[str]) -> dict[str, cppgen.VariantPlan]:
    """One variant per marker; the marker becomes the C++ call (the fake compiler reacts to it)."""
    out = {}
    for i, marker in enumerate(markers):
        inv = invocation(db, tiles, "tcolmin", dst=f"vec, 1x{8 * (i + 1)}xf32", src=f"vec, 4x{8 * (i + 1)}xf32")
        plan = cppgen.plan_variant(db, inv)
        out[f"v{i}"] = dataclasses.replace(plan, call=marker)
    return out


def _build(builder: Builder, plans: dict[str, cppgen.VariantPlan], check_first: bool = False):
    return builder.build(list(plans), lambda names: cppgen.render_unit([plans[n] for n in names], names),
                         check_first)


def test_static_asserts_in_a_batch_reject_only_their_variants(tmp_path, db, tiles, monkeypatch):
    log = tmp_path / "calls.log"
    monkeypatch.setenv("FAKE_CLANG_LOG", str(log))
    plans = _plans(db, tiles, ["TCOLMIN", "STATIC_FAIL", "TCOLMIN", "OTHER_FAIL", "STATIC_FAIL"])
    builder = _builder(tmp_path)
    built = _build(builder, plans)
    kinds = {n: s.kind for n, s in built.variants.items()}
    assert kinds == {"v0": "ok", "v1": "rejected", "v2": "ok", "v3": "error", "v4": "rejected"}
    assert "fake rejection of v1" in built.variants["v1"].message
    assert "OTHER_FAIL" in built.variants["v3"].message
    assert built.binary is not None and built.binary.is_file()
    # full compile fails -> static_asserts removed; the next full compile blames the other error -> full
    # (a failing compile stops in the front end: no syntax check in between)
    assert log.read_text().split() == ["pch", "full", "full", "full"]
    assert builder.stats.compiles == 3 and builder.stats.syntax_checks == 0

    log.write_text("")
    again = _builder(tmp_path)
    rebuilt = _build(again, plans)
    assert log.read_text() == ""  # a second identical run compiles nothing
    assert again.stats.cache_hits == 1 and again.stats.compiles == 0
    assert rebuilt.variants == built.variants and rebuilt.cached

    plans["v2"] = dataclasses.replace(plans["v2"], args=("src", "dst"))
    _build(again, plans)
    assert "full" in log.read_text()  # any change to the unit's text is a new build


def test_probably_rejected_units_start_with_a_syntax_check(tmp_path, db, tiles, monkeypatch):
    log = tmp_path / "calls.log"
    monkeypatch.setenv("FAKE_CLANG_LOG", str(log))
    built = _build(_builder(tmp_path), _plans(db, tiles, ["STATIC_FAIL", "STATIC_FAIL"]), check_first=True)
    assert {s.kind for s in built.variants.values()} == {"rejected"}
    assert built.binary is None
    assert log.read_text().split() == ["pch", "syntax"]


def test_refusals_at_the_call_are_told_apart_from_other_errors(tmp_path, db, tiles, monkeypatch):
    log = tmp_path / "calls.log"
    monkeypatch.setenv("FAKE_CLANG_LOG", str(log))
    plans = _plans(db, tiles, ["TCOLMIN", "REFUSE", "OVERLOAD_FAIL", "OTHER_FAIL", "STATIC_FAIL"])
    built = _build(_builder(tmp_path), plans)
    kinds = {n: s.kind for n, s in built.variants.items()}
    assert kinds == {"v0": "ok", "v1": "refused", "v2": "refused", "v3": "error", "v4": "rejected"}
    assert "TFake.hpp:20: error: invalid operands" in built.variants["v1"].message
    assert "no matching function for call to 'OVERLOAD_FAIL'" in built.variants["v2"].message
    # the static_assert goes first; the refusals and the error are decided once no static_assert remains
    assert log.read_text().split() == ["pch", "full", "full", "full"]


# ------------------------------------------------------------------ compiler output classification


SPANS = {"v0": (4, 16), "v1": (18, 36), "v2": (38, 50), "v3": (52, 58), "v4": (60, 75)}


def test_recorded_clang_output_blames_each_static_assert_on_its_variant():
    text = (DATA / "batched_static_asserts.txt").read_text()
    verdict = diagnostics.classify(text, "bad.cpp", SPANS, "/tmp/pto-isa")
    assert set(verdict.rejected) == {"v1", "v2", "v4"}
    assert "TRowArgMin(Max): `src` must use standard ND layout" in verdict.rejected["v1"]
    assert verdict.rejected["v1"].startswith("static_assert failed at include/pto/cpu/TReduceIdx.hpp:79")
    assert "Rows must be 32 bytes align" in verdict.rejected["v2"]
    assert "TMAX input and output dtypes must match" in verdict.rejected["v4"]
    # the ordinary error (v3) is not blamed while static_asserts are pending: it may be a consequence
    assert verdict.failed == {} and verdict.unattributed == []


def test_other_errors_are_harness_errors_not_rejections():
    text = "In file included from unit.cpp:1:\nunit.cpp:57:5: error: use of undeclared identifier 'NOSUCH'\n"
    verdict = diagnostics.classify(text, "unit.cpp", SPANS)
    assert verdict.rejected == {} and set(verdict.failed) == {"v3"}
    assert "undeclared identifier 'NOSUCH'" in verdict.failed["v3"]


CALLS = {"v0": (15, "TAND"), "v1": (35, "TAND"), "v2": (49, "TAND"), "v3": (57, "TAND"), "v4": (74, "TAND")}
HEADER_ERROR = ("/r/include/pto/cpu/ElementOp.h:226:82: error: invalid operands to binary expression "
                "('_Float16' and '_Float16')\n"
                "/r/include/pto/common/pto_instr.hpp:500:5: note: in instantiation of function template "
                "specialization 'pto::TAND_IMPL<T>' requested here\n"
                "unit.cpp:{line}:5: note: in instantiation of function template specialization 'pto::TAND<T>' "
                "requested here\n")


def _classify(text: str) -> diagnostics.Verdict:
    return diagnostics.classify(text, "unit.cpp", SPANS, "/r", CALLS, "ptospec_cpusim.hpp")


def test_errors_rooted_at_the_intrinsic_call_are_refusals():
    followed = HEADER_ERROR.format(line=15) + "/r/include/pto/cpu/ElementOp.h:231:82: error: invalid operands\n"
    overload = ("unit.cpp:49:5: error: no matching function for call to 'TAND'\n/r/include/pto/common/"
                "pto_instr.hpp:554:22: note: candidate template ignored: deduced conflicting types for parameter "
                "'TileData' ('Tile<[...], bfloat16_t>' vs. 'Tile<[...], half>')\n")
    verdict = _classify(followed + overload)
    assert verdict.failed == {} and set(verdict.refused) == {"v0", "v2"}
    assert verdict.refused["v0"] == ("include/pto/cpu/ElementOp.h:226: error: invalid operands to binary "
                                     "expression ('_Float16' and '_Float16')")
    assert "no matching function for call to 'TAND'" in verdict.refused["v2"]
    # an error printed without its backtrace inherits the chain of the one before it
    assert _classify(HEADER_ERROR.format(line=20) + "/r/include/pto/cpu/ElementOp.h:231:82: error: x\n"
                     ).refused == {}


@pytest.mark.parametrize("text", [
    HEADER_ERROR.format(line=20),  # the chain starts at a tile declaration of v1, not at its call (35)
    "unit.cpp:57:5: error: no matching function for call to 'load'\n",  # overload resolution on another function
    "unit.cpp:57:5: error: use of undeclared identifier 'TAND'\n",  # not overload resolution
    "unit.cpp:56:5: error: no matching function for call to 'TAND'\n",  # not the call line
    HEADER_ERROR.format(line=74).replace(  # the library reached the harness header (cce::printf)
        "/r/include/pto/common/pto_instr.hpp", "/cache/pch/k/ptospec_cpusim.hpp"),
    HEADER_ERROR.format(line=15) + HEADER_ERROR.format(line=10),  # v0 also fails at its declarations
])
def test_other_errors_of_a_variant_are_not_refusals(text):
    verdict = _classify(text)
    assert verdict.refused == {} and len(verdict.failed) == 1


def test_refusals_wait_for_pending_static_asserts():
    static = ("/r/include/pto/cpu/TAdd.hpp:3:1: error: static assertion failed: no\n"
              "unit.cpp:30:5: note: in instantiation of function template specialization 'pto::TADD<T>' requested "
              "here\n")
    verdict = _classify(HEADER_ERROR.format(line=15) + static)
    assert set(verdict.rejected) == {"v1"} and verdict.refused == {} and verdict.failed == {}
    assert diagnostics.classify(HEADER_ERROR.format(line=15), "unit.cpp", SPANS, "/r").refused == {}  # no calls


def test_errors_outside_every_variant_are_unattributed():
    link = ("/usr/bin/ld: /tmp/x.o: in function `g()':\nx.cpp:(.text+0x15): undefined reference to `f()'\n"
            "clang++-19: error: linker command failed with exit code 1 (use -v to see invocation)\n")
    verdict = diagnostics.classify(link, "unit.cpp", SPANS)
    assert verdict.unattributed and "linker command failed" in verdict.unattributed[0]
    fatal = "<built-in>:3:10: fatal error: 'nosuch.h' file not found\n"
    assert diagnostics.classify(fatal, "unit.cpp", SPANS).unattributed
    assert diagnostics.classify("", "unit.cpp", SPANS).clean


def test_static_assert_without_message_is_summarised():
    diag = diagnostics.parse("/r/include/a.hpp:3:1: error: static assertion failed due to requirement 'N > 0'\n")[0]
    assert diag.is_static_assert
    assert diag.summary("/r") == "static_assert failed at include/a.hpp:3: requirement 'N > 0'"


# ------------------------------------------------------------------ run result classification


OUT = {"dst": (np.dtype(np.float32), (1, 4))}


def record(status: str, log: str = "", notes: tuple[str, ...] = (), outputs=None) -> RunRecord:
    return RunRecord(status, log, notes, outputs or {})


def test_ok_run_returns_logical_arrays_and_stray_writes():
    data = np.arange(4, dtype=np.float32).reshape(1, 4)
    result = outcome.from_run(record("ok", outputs={"dst": data.tobytes()}), OUT)
    assert not result.rejected and result.error is None
    np.testing.assert_array_equal(result.outputs["dst"], data)
    noisy = outcome.from_run(record("ok", notes=("guard dst 4", "input src 2"), outputs={"dst": data.tobytes()}), OUT)
    assert noisy.stray == ("dst: 4 byte(s) just past the tile's storage changed",
                           "src: 2 element(s) of this input tile changed")


def test_failed_runtime_check_is_a_rejection_with_its_condition():
    log = ("[PTO][ASSERT] Number of rows of src and dst must be the same.\n"
           "  Condition: dstIdx.GetValidRow() == src.GetValidRow()\n"
           "  Location: /tmp/pto-isa/include/pto/cpu/TReduceIdx.hpp:83\n"
           "  Hint: see docs/coding/debug.md (Fix recipes + assertion index)\n")
    result = outcome.from_run(record(f"exit {TRAP_EXIT}", log), OUT, "/tmp/pto-isa")
    assert result.rejected
    assert result.message == ("runtime check (PTO_ASSERT) failed: Number of rows of src and dst must be the same. "
                              "[dstIdx.GetValidRow() == src.GetValidRow()] at include/pto/cpu/TReduceIdx.hpp:83")
    assert outcome.kind(result) == "rejected by a runtime check"


@pytest.mark.parametrize("status,log,rejected,words", [
    ("signal 6", "drv: /r/include/pto/cpu/NPUMemoryModel.hpp:317: T* f(): Assertion `n <= size' failed.\n", True,
     "simulator assert() failed: n <= size at include/pto/cpu/NPUMemoryModel.hpp:317"),
    ("signal 11", "", True, "crash: SIGSEGV"),
    ("signal 14", "", True, "did not finish within 20 s"),
    ("exit 3", "boom", True, "crash: exited with status 3"),
    ("error missing data for src", "", False, "driver error: missing data for src"),
    ("crashed", "", False, "without a status"),
    ("", "", False, "never ran"),
    ("ok", "", False, "no complete output dst"),
])
def test_run_statuses(status, log, rejected, words):
    result = outcome.from_run(record(status, log), OUT, "/r", timeout=20)
    assert result.rejected is rejected
    assert (result.error is not None) is (not rejected)
    assert words in result.message


def test_compile_statuses():
    assert outcome.from_build(VariantStatus("ok")) is None
    rejected = outcome.from_build(VariantStatus("rejected", "static_assert failed at a.hpp:1: no"))
    assert rejected.rejected and rejected.message.startswith("compile-time check: static_assert failed")
    error = outcome.from_build(VariantStatus("error", "unit.cpp:3: error: oops"))
    assert error.error and not error.rejected and outcome.kind(error) == "harness error"
    refused = VariantStatus("refused", "include/pto/cpu/ElementOp.h:226: error: invalid operands")
    rejected = outcome.from_build(refused, template_compiles=True, op_mode="tand default")
    assert rejected.rejected and outcome.kind(rejected) == "refused at compile time"
    assert rejected.message.startswith("compile-time refusal: include/pto/cpu/ElementOp.h:226")
    assert "other operand types of tand default" in rejected.message
    alone = outcome.from_build(refused, template_compiles=False, op_mode="tand default")
    assert alone.error and not alone.rejected and "no variant of tand default compiled" in alone.message


def test_driver_template_leaves_out_only_the_operand_types(db, tiles):
    f32 = cppgen.plan_variant(db, invocation(db, tiles, "tcolmin", dst="vec, 1x8xf32", src="vec, 4x8xf32"))
    f16 = cppgen.plan_variant(db, invocation(db, tiles, "tcolmin", dst="vec, 2x16xf16", src="vec, 4x16xf16"))
    assert f32.signature != f16.signature and f32.template == f16.template
    assert dataclasses.replace(f32, args=("src", "dst")).template != f32.template
    assert dataclasses.replace(f32, call="TCOLMAX").template != f32.template


# ------------------------------------------------------------------ divergences: explanation and report


def divergence(category: str, op: str = "tcolmin", **kw) -> Divergence:
    base = {"mode": "default", "profile": "cpu", "case": "c1", "dtypes": {"T": "f32"},
            "descriptors": {"dst": "vec, 1x8xf32, valid=1x3", "src": "vec, 2x8xf32, valid=2x3"},
            "inputs": {"src": np.arange(16, dtype=np.float32).reshape(2, 8)}, "size": 24}
    return Divergence(category=category, op=op, **{**base, **kw})


def _db_with_differences(db, op: str, *diffs: Difference):
    spec = db.op(op)
    return dataclasses.replace(db, ops={**db.ops, op: dataclasses.replace(spec, differences=diffs)})


def _difference(kind: str, says: str, source: str = "cpu", ident: str = "d1") -> Difference:
    claims = ((source, {"en": says, "zh": "说法"}), ("page", {"en": "the documented behaviour", "zh": "文档行为"}))
    return Difference(ident, {"en": "t", "zh": "题"}, claims, {"en": "kept", "zh": "保留"}, kind, 1)


def test_field_refs_read_cpp_accessors():
    assert field_refs("dstIdx.GetValidRow() == src.GetValidRow()") == {"dstIdx.valid_row", "src.valid_row"}
    assert field_refs("src.valid_col == dst.valid_col and R") == {"src.valid_col", "dst.valid_col"}


def test_explanation_comes_from_differences_citing_the_simulator(db):
    rule = next(r for r in db.op("tcolmin").rules if r.check_text and r.id.startswith("runtime"))
    d = divergence("accepts-rejected", rule=rule.id, problems=("accepted",))
    assert explain(_db_with_differences(db, "tcolmin"), d).verdict == UNRECORDED
    by_id = _db_with_differences(db, "tcolmin", _difference("simulator-divergence", f"{rule.id} is not checked"))
    ex = explain(by_id, d)
    assert (ex.verdict, ex.difference) == (RECORDED, "d1")
    refs = " and ".join(sorted(field_refs(rule.check_text)))
    by_fields = _db_with_differences(db, "tcolmin", _difference("simulator-divergence", f"no check of {refs}"))
    assert explain(by_fields, d).verdict == RECORDED
    not_sim = _db_with_differences(db, "tcolmin", _difference("docs-conflict", f"{rule.id}", source="seed"))
    assert explain(not_sim, d).verdict == UNRECORDED  # a difference must cite the profile's own source


def test_value_divergences_are_covered_by_differences_naming_category_and_operand(db):
    d = divergence("write-outside-valid", problems=("dst[0, 5] is outside the valid region 1x3 but changed: 0",))
    tagged = _difference("simulator-divergence", "write-outside-valid: the simulator clears the rest of dst's row")
    assert explain(_db_with_differences(db, "tcolmin", tagged), d).verdict == RECORDED
    other_operand = _difference("simulator-divergence", "write-outside-valid of tmp")
    assert explain(_db_with_differences(db, "tcolmin", other_operand), d).verdict == UNRECORDED
    untagged = _difference("simulator-divergence", "the simulator clears the rest of dst's row")
    assert explain(_db_with_differences(db, "tcolmin", untagged), d).verdict == UNRECORDED


def test_simulator_bug_differences_mark_known_bugs(db):
    d = divergence("rejects-accepted", op="tcolargmax", mode="value_index",
                   message="runtime check (PTO_ASSERT) failed: rows differ [dstIdx.GetValidRow() == "
                           "src.GetValidRow()] at include/pto/cpu/TReduceIdx.hpp:83")
    bug = _difference("simulator-bug", "dstIdx.valid_row must equal src.valid_row")
    assert explain(_db_with_differences(db, "tcolargmax", bug), d).verdict == KNOWN_BUG
    other = _difference("simulator-bug", "dstVal.valid_col must equal src.valid_col")
    assert explain(_db_with_differences(db, "tcolargmax", other), d).verdict == UNRECORDED
    assert explain(db, divergence("harness-error", message="x")).verdict == HARNESS
    illegal = explain(db, divergence("harness-error", message="does not compile", rule="dtype.t"))
    assert illegal.verdict == HARNESS and "spec rejects this configuration (dtype.t)" in illegal.why


def _observed(*entries: Observation, kind: str = "simulator-bug") -> Difference:
    return dataclasses.replace(_difference(kind, "see observed", source="page"), observed=entries)


def test_observed_entries_predict_divergences_precisely(db):
    mixed = {"dst": "vec, 16x16xf32, valid=4x5, blayout=col_major", "src0": "vec, 16x16xf32, valid=4x5",
             "scalar": "f32"}
    same = {**mixed, "dst": "vec, 16x16xf32, valid=4x5"}
    when = "src0.blayout != dst.blayout"
    layouts = _observed(Observation("cpu", "wrong-value", when=parse_expr(when), when_text=when))
    spec_db = _db_with_differences(db, "tadds", layouts)

    def verdict(category="wrong-value", descriptors=mixed, profile="cpu", the_db=spec_db, **kw):
        d = divergence(category, op="tadds", descriptors=descriptors, profile=profile, problems=("dst[0, 1]: x",),
                       **kw)
        return explain(the_db, d)

    hit = verdict()
    assert (hit.verdict, hit.difference) == (KNOWN_BUG, "d1") and when in hit.why
    assert verdict(descriptors=same).verdict == UNRECORDED  # the condition does not hold
    assert verdict(profile="a5").verdict == UNRECORDED
    assert verdict("write-outside-valid").verdict == UNRECORDED
    property_kind = _db_with_differences(db, "tadds", dataclasses.replace(layouts, kind="simulator-divergence"))
    assert verdict(the_db=property_kind).verdict == RECORDED
    by_rule = _db_with_differences(db, "tadds", _observed(Observation("cpu", "accepts-rejected",
                                                                       rules=("runtime.src0-valid-shape",))))
    assert verdict("accepts-rejected", the_db=by_rule, rule="runtime.src0-valid-shape").verdict == KNOWN_BUG
    assert verdict("accepts-rejected", the_db=by_rule, rule="dtype.same-t").verdict == UNRECORDED
    by_mode = _db_with_differences(db, "tadds", _observed(Observation("cpu", "wrong-value", modes=("other",))))
    assert verdict(the_db=by_mode).verdict == UNRECORDED
    # a must-reject case the simulator refuses with an ordinary compile error, recorded as such
    compile_error = _db_with_differences(db, "tadds", _observed(Observation("cpu", "harness-error",
                                                                            rules=("dtype.same-t",))))
    assert verdict("harness-error", the_db=compile_error, rule="dtype.same-t",
                   message="does not compile").verdict == KNOWN_BUG
    assert verdict("harness-error", the_db=compile_error, rule="dtype.t",
                   message="does not compile").verdict == HARNESS
    # a mode that never compiles: its entry covers must-reject cases too, which then fail the same way
    never = _db_with_differences(db, "tadds", _observed(Observation("cpu", "harness-error", modes=("default",))))
    assert verdict("harness-error", the_db=never, rule="dtype.same-t", message="x").verdict == KNOWN_BUG
    assert verdict("harness-error", the_db=spec_db, rule="dtype.same-t", message="x").verdict == HARNESS


def test_report_groups_by_cause_and_keeps_the_smallest_case(tmp_path, db):
    big = divergence("accepts-rejected", rule="runtime.valid-col-match", case="big", size=500,
                     artifacts={"cpp": "int main() {}\n", "cpp_core": "TCOLMIN(dst, src);", "build": "clang++"})
    small = dataclasses.replace(big, case="small", size=24)
    other_dtype = dataclasses.replace(big, case="f16", dtypes={"T": "f16"}, size=30)
    wrong = divergence("wrong-value", problems=("dst[0, 1]: expected 1.0, got 2.0",), case="w")
    report = ConformanceReport(db, "cpusim", [big, small, other_dtype, wrong], {"total": 4, "failed": 4},
                               stats={"compiles": 3})
    data = report.to_json()
    assert [e["category"] for e in data["divergences"]] == ["wrong-value", "accepts-rejected"]
    acc = data["divergences"][1]
    assert acc["count"] == 3 and acc["smallest"]["case"] == "small"
    assert [b["smallest"]["case"] for b in acc["by_dtypes"]] == ["f16", "small"]
    assert acc["smallest"]["inputs"]["src"][0][:3] == [0.0, 1.0, 2.0]
    json_path, md_path = report.write(tmp_path)
    assert json.loads(json_path.read_text())["stats"] == {"compiles": 3}
    md = md_path.read_text()
    assert "| 2 | accepts-rejected | tcolmin | default | 3 | 2 |" in md
    assert "TCOLMIN(dst, src);" in md and "input `src`, valid region 2x3" in md
    assert (tmp_path / "repros" / f"{acc['smallest']['repro_file'].split('/')[-1]}").is_file()
    assert len(list((tmp_path / "repros").glob("*.npz"))) == 3


# ------------------------------------------------------------------ the runner records divergences


class _Scripted:
    """A backend answering from a function (ok outputs from the reference, then tampered)."""

    def __init__(self, db, tamper):
        from ptospec.conformance.backend import Backend, Capabilities
        from ptospec.conformance.reference import ReferenceBackend

        ref = ReferenceBackend(db)

        class B(Backend):
            name = "scripted"

            def capabilities(self):
                return Capabilities(profiles=("cpu",))

            def run(self, case):
                return tamper(case, ref.run(case))

            def artifacts(self, case):
                return {"cpp_core": f"{case.op}(...)"}

        self.backend = B()


def test_runner_records_each_category(db, tiles):
    from ptospec.conformance.runner import ConformanceFailure, Runner

    parsed = tiles(dst="vec, 2x8xf32, valid=1x3", src="vec, 4x8xf32, valid=2x3")

    def run_with(tamper):
        runner = Runner(db, _Scripted(db, tamper).backend, "scripted")
        with pytest.raises(ConformanceFailure):
            runner.check_positive("tcolmin", "default", "cpu", parsed, 1, "random")
        return runner.divergences

    def wrong_and_outside(case, result):
        dst = result.outputs["dst"]
        dst[0, 0] += 1
        dst[1, 7] = 0
        return result

    found = run_with(wrong_and_outside)
    assert [d.category for d in found] == ["wrong-value", "write-outside-valid"]
    assert found[0].artifacts == {"cpp_core": "tcolmin(...)"} and found[0].size == 16 + 32
    stray = run_with(lambda case, result: dataclasses.replace(result, stray=("dst: 4 byte(s) past",)))
    assert [d.category for d in stray] == ["write-outside-valid"]
    refused = run_with(lambda case, result: Result.reject("runtime check (PTO_ASSERT) failed: x"))
    assert refused[0].category == "rejects-accepted" and "PTO_ASSERT" in refused[0].message
    broken = run_with(lambda case, result: Result.harness_error("driver does not compile"))
    assert broken[0].category == "harness-error"

    runner = Runner(db, _Scripted(db, lambda case, result: Result.ok({"dst": case.inputs["dst"]})).backend, "s")
    bad = tiles(dst="vec, 2x8xf32, valid=1x2", src="vec, 4x8xf32, valid=2x3")
    with pytest.raises(ConformanceFailure):
        runner.check_reject("tcolmin", "default", "cpu", bad, 1, "random", "runtime.valid-col-match")
    assert runner.divergences[0].category == "accepts-rejected"
    assert runner.divergences[0].rule == "runtime.valid-col-match"
    assert "runtime.valid-col-match" in runner.divergences[0].violations


# ------------------------------------------------------------------ the command's one-line errors


@pytest.mark.parametrize("args,env,words", [
    (["--ops", "tmax"], {"PTO_ISA_ROOT": ""}, "no pto-isa checkout"),
    (["--ops", "tmax", "--pto-isa-root", "/nonexistent"], {}, "is not a pto-isa checkout"),
    (["--ops", "nosuchop"], {}, "unknown op(s): nosuchop"),
    (["--ops", "tmax", "--derived", "-1"], {}, "--derived must be 0 or more"),
])
def test_conformance_command_errors(args, env, words, capsys, monkeypatch, tmp_path):
    from ptospec.cli import main

    for k, v in env.items():
        monkeypatch.setenv(k, v)
    root = Path(__file__).resolve().parent.parent
    code = main(["--specs", str(root / "specs"), "conformance", "--backend", "cpusim",
                 "--report-dir", str(tmp_path), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_missing_compiler_is_a_usage_error(capsys, monkeypatch, tmp_path):
    from ptospec.cli import main

    checkout = tmp_path / "pto" / "include" / "pto"
    checkout.mkdir(parents=True)
    (checkout / "pto-inst.hpp").write_text("")
    monkeypatch.setenv("PTOSPEC_CXX", str(tmp_path / "no-clang"))
    root = Path(__file__).resolve().parent.parent
    code = main(["--specs", str(root / "specs"), "conformance", "--backend", "cpusim", "--ops", "tmax",
                 "--pto-isa-root", str(tmp_path / "pto"), "--report-dir", str(tmp_path / "r")])
    assert code == 2
    assert "clang 17 or newer" in capsys.readouterr().err


def test_descriptor_defaults_reach_the_tile_type(db):
    desc = TileDesc("Vec", "f32", 16, 16, 16, 16)
    assert cppgen.tile_type(db, desc).endswith("SLayout::NoneBox, 512, PadValue::Null>")
    mat = dataclasses.replace(desc, loc="Mat", slayout="RowMajor", blayout="ColMajor", fractal=1024, pad="Zero")
    assert cppgen.tile_type(db, mat) == ("Tile<TileType::Mat, float, 16, 16, BLayout::ColMajor, DYNAMIC, DYNAMIC, "
                                         "SLayout::RowMajor, 1024, PadValue::Zero>")


# ------------------------------------------------------------------ batch protocol


def test_batch_file_frames_parameters_and_blobs():
    from ptospec.backends.cpusim.execute import BatchCase, encode_batch

    data = encode_batch([BatchCase("v3", {"fill": "90", "dst.vr": "1"}, {"src": b"\n\x00ab", "dst": b""})])
    assert data == b"ptocs-batch 1\ncase v3 2 2\nfill 90\ndst.vr 1\nsrc 4\n\n\x00abdst 0\n"


def test_result_records_are_read_by_index_and_damage_keeps_earlier_records():
    from ptospec.backends.cpusim.execute import NEVER_RAN, decode_results

    ok = b"result 1 ok\nlog 3\nhi\nnotes 10\nguard d 4\nout dst 2\n\x01\x02end\n"
    crash = b"result 0 signal 11\nlog 0\nend\n"
    records, problem = decode_results(ok + crash, 3)
    assert problem == ""
    assert records[1].status == "ok" and records[1].log == "hi\n" and records[1].notes == ("guard d 4",)
    assert records[1].outputs == {"dst": b"\x01\x02"}
    assert records[0].status == "signal 11" and records[2] is NEVER_RAN
    records, problem = decode_results(crash + b"result 1 ok\nlog 99\nabc", 2)
    assert records[0].status == "signal 11" and records[1] is NEVER_RAN and "truncated" in problem


def test_an_upstream_test_record_never_explains_a_backend_divergence(db):
    # TMRGSORT's single-list-goldens records upstream's half set-up for the cpu goldens; a cpusim wrong value
    # on such a case is still a possible simulator bug
    d = divergence("wrong-value", op="tmrgsort", mode="single", dtypes={"T": "f16", "L": "u32"},
                   descriptors={"dst": "vec, 1x256xf16", "src": "vec, 1x256xf16", "blockLen": "u32"},
                   inputs={"src": np.zeros((1, 256), np.float16), "blockLen": np.uint32(64)})
    assert explain(db, d).verdict == UNRECORDED


@pytest.mark.parametrize("extra, off", [
    ("", True),
    ("// attributes of system headers: __attribute__((__always_inline__))\n", True),
    ("inline __attribute__((always_inline)) int helper() { return 1; }\n", False),
])
def test_always_inline_is_turned_off_only_where_pto_inline_is_its_one_use(tmp_path, extra, off):
    """``-Dalways_inline=unused`` (the ptoas backend's units) is safe only while PTO_INLINE is the checkout's one
    spelling of the attribute: a header that forces inlining elsewhere keeps it."""
    from ptospec.backends.cpusim.build import NO_FORCED_INLINE, forced_inline_off

    include = tmp_path / "include" / "pto" / "common"
    include.mkdir(parents=True)
    (include / "type.hpp").write_text("#define PTO_INLINE inline __attribute__((always_inline))\n" + extra)
    assert forced_inline_off(tmp_path / "include", extra) == (NO_FORCED_INLINE if off else ())
