"""The cpusim backend against a real pto-isa checkout and clang++.

Skipped (with the reason) unless ``PTO_ISA_ROOT`` names a checkout and clang++ 17 or newer is found
(``PTOSPEC_CXX`` or ``clang++-NN`` on PATH).  Runs a small slice for real: two seed ops, the harness's
own failure detection, a repro program, and the ``ptospec conformance`` command.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cpusim_env import cpusim_unavailable

from ptospec.backends.cpusim import cppgen, outcome
from ptospec.conformance.data import make_inputs
from ptospec.conformance.divergence import HARNESS, UNRECORDED, explain
from ptospec.conformance.runner import ConformanceFailure, Runner, Unsupported

ROOT = Path(__file__).resolve().parent.parent


REASON = cpusim_unavailable("run the cpusim tests")
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cpusim-cache")


@pytest.fixture(scope="module")
def backend(db, cache):
    from ptospec.backends.cpusim import CpuSimBackend

    return CpuSimBackend(db, cache=cache)


def suite_cases(op: str, profile: str = "cpu") -> list:
    spec = importlib.util.spec_from_file_location(f"live_{op}", ROOT / "generated_tests" / f"test_{op}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [p.values[0] for p in module.POSITIVE + module.MUST_REJECT if p.values[0].profile == profile]


def test_capabilities_follow_the_toolchain(db, backend):
    caps = backend.capabilities()
    assert caps.profiles == ("cpu",)
    cpu_dtypes = {d for d, s in db.isa.dtypes.items() if s.profiles is None or "cpu" in s.profiles}
    assert set(caps.dtypes) | set(backend.unsupported_dtypes) == cpu_dtypes
    for dtype, why in backend.unsupported_dtypes.items():
        assert "same type" in why, (dtype, why)


def test_slice_conforms_or_diverges_as_the_spec_records(db, backend, cache):
    from ptospec.backends.cpusim import CpuSimBackend

    cases = suite_cases("tmax") + suite_cases("tcolmin")
    runner = Runner(db, backend, "cpusim")
    runner.prepare(cases)
    stats = backend.stats()
    assert stats["compiles"] >= 1 and stats["cases_run"] > 20
    outcomes = {"passed": 0, "failed": 0, "skipped": 0}
    for case in cases:
        try:
            runner.check(case)
            outcomes["passed"] += 1
        except Unsupported:
            outcomes["skipped"] += 1
        except ConformanceFailure:
            outcomes["failed"] += 1
    assert outcomes["passed"] >= 0.6 * (len(cases) - outcomes["skipped"]) > 0, outcomes
    for d in runner.divergences:
        verdict = explain(db, d).verdict
        assert verdict not in (UNRECORDED, HARNESS), (d.category, d.case, d.problems, d.message)

    again = CpuSimBackend(db, cache=cache)
    Runner(db, again, "cpusim").prepare(cases)
    second = again.stats()
    assert (second["compiles"], second["syntax_checks"], second["pch_builds"]) == (0, 0, 0)
    assert second["cache_hits"] == second["units"] > 0


def _helpers_unit(plans: dict[str, cppgen.VariantPlan]) -> cppgen.UnitSource:
    """The plans' unit with test-only 'instructions' that misbehave on purpose."""
    helpers = """
template <typename D, typename S> void STRAY(D& dst, S& src) { dst.data()[D::Rows * D::Cols] = dst.data()[0]; }
template <typename D, typename S> void POKE_INPUT(D& dst, S& src) { src.data()[0] = src.data()[1] + 1; }
template <typename D, typename S> void CRASH(D& dst, S& src) { volatile int* p = nullptr; *p = 1; }
template <typename D, typename S> void CHECK(D& dst, S& src) { PTO_ASSERT(dst.GetValidRow() == 99, "never"); }
template <typename D, typename S> void FINE(D& dst, S& src) { dst.data()[0] = src.data()[0]; }
template <typename D, typename S> void SETCTRL(D& dst, S& src) { set_ctrl(0x5A5A); }
template <typename D, typename S> void READCTRL(D& dst, S& src) { dst.data()[0] = get_ctrl() == 0 ? 1 : 2; }
"""
    unit = cppgen.render_unit(list(plans.values()), list(plans))
    head, _, rest = unit.text.partition("\n\n")
    extra = helpers.count("\n") + 1
    spans = {n: (a + extra, b + extra) for n, (a, b) in unit.spans.items()}
    calls = {n: (line + extra, callee) for n, (line, callee) in unit.calls.items()}
    return cppgen.UnitSource(f"{head}\n{helpers}\n{rest}", unit.names, spans, calls)


def test_harness_notices_stray_writes_crashes_and_failed_checks(db, tiles, backend, cache):
    from ptospec.backends.cpusim.execute import BatchCase, run_batch

    parsed = tiles(dst="vec, 2x8xf32, valid=1x3", src="vec, 4x8xf32, valid=2x3")
    spec = db.op("tcolmin")
    from ptospec.conformance.backend import Invocation

    inv = Invocation("tcolmin", "default", "cpu", parsed, make_inputs(db, spec, spec.modes[0], parsed, 3, "random"))
    base = cppgen.plan_variant(db, inv)
    calls = ["STRAY", "POKE_INPUT", "CRASH", "CHECK", "SETCTRL", "READCTRL", "FINE"]
    plans = {f"v{i}": dataclasses.replace(base, call=c) for i, c in enumerate(calls)}
    built = backend.builder.build(list(plans), lambda names: _helpers_unit({n: plans[n] for n in names}))
    assert built.binary is not None, built.variants
    batch = [BatchCase(n, cppgen.params(plans[n], inv), cppgen.operand_bytes(db, plans[n], inv)) for n in plans]
    records, _ = run_batch(built.binary, batch, cache / "tmp")
    isolated, _ = run_batch(built.binary, batch, cache / "tmp", fork_each=True)
    assert [(r.status, r.notes, r.outputs) for r in records] == [(r.status, r.notes, r.outputs) for r in isolated]
    shapes = {"dst": (np.dtype(np.float32), (2, 8))}
    results = dict(zip(calls, (outcome.from_run(r, shapes, str(backend.checkout.root), 20) for r in records),
                       strict=True))
    assert results["STRAY"].stray and "past the tile's storage" in results["STRAY"].stray[0]
    assert results["POKE_INPUT"].stray == ("src: 1 element(s) of this input tile changed",)
    assert results["CRASH"].rejected and "SIGSEGV" in results["CRASH"].message
    assert results["CHECK"].rejected and "[dst.GetValidRow() == 99]" in results["CHECK"].message
    assert results["READCTRL"].outputs["dst"][0, 0] == 1  # a case starts with the control register reset
    fine = results["FINE"]
    assert not fine.rejected and not fine.stray and fine.error is None
    expected = np.asarray(inv.inputs["dst"]).copy()
    expected[0, 0] = inv.inputs["src"][0, 0]
    np.testing.assert_array_equal(fine.outputs["dst"].view(np.uint32), expected.view(np.uint32))


def test_repro_program_builds_and_reproduces(db, tiles, backend, tmp_path):
    from ptospec.conformance.backend import Invocation

    parsed = tiles(dstVal="vec, 1x16xf32, valid=1x5", dstIdx="vec, 1x16xi32, valid=1x5",
                   src="vec, 4x16xf32, valid=3x5", tmp="vec, 1x16xf32")
    spec = db.op("tcolargmax")
    data = make_inputs(db, spec, spec.mode("value_index"), parsed, 11, "random")
    inv = Invocation("tcolargmax", "value_index", "cpu", parsed, data)
    result = backend.run(inv)
    source = backend.artifacts(inv)["cpp"]
    (tmp_path / "repro.cpp").write_text(source)
    cmd = [backend.compiler.path, *backend.builder.flags, "repro.cpp", "-o", "repro"]
    subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True, timeout=600)
    run = subprocess.run(["./repro"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    if result.rejected:  # the program must fail the same way the driver did
        assert run.returncode != 0 and "[PTO][ASSERT]" in run.stdout
    else:
        assert run.returncode == 0 and "dstVal (valid 1x5)" in run.stdout


def test_conformance_command_end_to_end(cache, tmp_path, capsys):
    from ptospec.cli import main

    args = ["--specs", str(ROOT / "specs"), "conformance", "--backend", "cpusim", "--ops", "tcolmin",
            "--cache-dir", str(cache), "--report-dir", str(tmp_path), "--pto-isa-root", os.environ["PTO_ISA_ROOT"]]
    assert main(args) in (0, 1)
    first = json.loads((tmp_path / "report.json").read_text())
    assert first["totals"]["passed"] > 0 and first["stats"]["cases_run"] > 0
    assert (tmp_path / "report.md").read_text().startswith("# Conformance report")
    assert main(args) in (0, 1)
    second = json.loads((tmp_path / "report.json").read_text())
    assert second["stats"]["compiles"] == 0 and second["stats"]["cache_hits"] == second["stats"]["units"]
    assert second["totals"] == first["totals"]
    assert "cases verified/s" in capsys.readouterr().out


def test_bf16_is_real_bfloat16(db, tiles, backend):
    """bf16 runs as bfloat16 (8-bit significand), not as the half-precision alias."""
    from ptospec.conformance.backend import Invocation

    assert "bf16" in backend.capabilities().dtypes, backend.unsupported_dtypes
    parsed = tiles(src0="vec, 1x16xbf16", src1="vec, 1x16xbf16", dst="vec, 1x16xbf16")
    import ml_dtypes

    a = np.full((1, 16), 1.0, dtype=ml_dtypes.bfloat16)
    b = np.full((1, 16), 2.0 ** -8, dtype=ml_dtypes.bfloat16)  # below half an ulp of 1 in bf16, not in f16
    result = backend.run(Invocation("tadd", "default", "cpu", parsed, {"src0": a, "src1": b, "dst": a.copy()}))
    assert result.outputs is not None
    assert (np.asarray(result.outputs["dst"]).astype(np.float32) == 1.0).all()


def test_a_refused_call_is_a_rejection_only_when_the_same_driver_compiles(db, tiles, cache):
    """TAND on f16 tiles fails in the simulator's ElementOp.h without a static_assert: a rejection when the
    same driver compiles for i32 tiles, a harness error on its own or when the driver's call is broken."""
    from ptospec.backends.cpusim import CpuSimBackend
    from ptospec.conformance.backend import Invocation

    spec = db.op("tand")

    def case(dtype: str, database=db) -> Invocation:
        parsed = tiles(dst=f"vec, 2x16x{dtype}", src0=f"vec, 2x16x{dtype}", src1=f"vec, 2x16x{dtype}")
        return Invocation("tand", "default", "cpu", parsed, make_inputs(database, spec, spec.modes[0], parsed, 5,
                                                                        "random"))

    legal, illegal = case("i16"), case("f16")
    alone = CpuSimBackend(db, cache=cache).run(illegal)
    assert alone.error and "no variant of tand default compiled" in alone.message
    backend = CpuSimBackend(db, cache=cache)
    backend.prepare([legal, illegal])
    assert backend.run(legal).outputs is not None
    refused = backend.run(illegal)
    assert refused.rejected and outcome.kind(refused) == "refused at compile time"
    assert refused.message.startswith("compile-time refusal: include/pto/cpu/ElementOp.h:")
    assert "invalid operands to binary expression" in refused.message

    # a driver bug (the call misses an argument) fails for every dtype: never a rejection
    broken_mode = dataclasses.replace(spec.modes[0], cpp_args=spec.modes[0].cpp_args[:-1])
    broken = dataclasses.replace(db, ops={**db.ops, "tand": dataclasses.replace(spec, modes=(broken_mode,))})
    buggy = CpuSimBackend(broken, cache=cache)
    buggy.prepare([legal, illegal])
    for inv in (legal, illegal):
        result = buggy.run(inv)
        assert result.error and not result.rejected and "no matching function for call to 'TAND'" in result.message
