"""Synchronisation hazards (``--hazards``): each hazard kind caught, each ordering instruction honoured, the
protocol errors, a correct double-buffered pipeline clean, kernels without synchronisation recognised.

The kernels are written for the purpose: ``tests/programs/hazards/`` and the vector-addition template below,
whose two synchronisation slots each test fills with the instructions it examines."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from ptospec.cli import main
from ptospec.program.api import check_program, run_program
from ptospec.program.hazards.dynamic import HazardDetector
from ptospec.program.hazards.static import check_hazards
from ptospec.program.syntax import parse_program
from ptospec.program.trace import Tee

HERE = Path(__file__).parent / "programs" / "hazards"
T = ("!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=32, v_row=16, v_col=32, blayout=row_major, slayout=none_box, "
     "fractal=512, pad=0>")
VADD = """module attributes {{pto.target_arch = "{arch}"}} {{
  func.func @vadd(%a: !pto.ptr<f32>, %b: !pto.ptr<f32>, %c: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %va = pto.make_tensor_view %a, shape = [%c16, %c32], strides = [%c32, %c1] : {TV}
    %vb = pto.make_tensor_view %b, shape = [%c16, %c32], strides = [%c32, %c1] : {TV}
    %vc = pto.make_tensor_view %c, shape = [%c16, %c32], strides = [%c32, %c1] : {TV}
    %pa = pto.partition_view %va, offsets = [%c0, %c0], sizes = [%c16, %c32] : {TV} -> {PV}
    %pb = pto.partition_view %vb, offsets = [%c0, %c0], sizes = [%c16, %c32] : {TV} -> {PV}
    %pc = pto.partition_view %vc, offsets = [%c0, %c0], sizes = [%c16, %c32] : {TV} -> {PV}
    %ta = pto.alloc_tile : {T}
    %tb = pto.alloc_tile : {T}
    %tc = pto.alloc_tile : {T}
    pto.tload ins(%pa : {PV}) outs(%ta : {T})
    pto.tload ins(%pb : {PV}) outs(%tb : {T})
{load_to_add}
    pto.tadd ins(%ta, %tb : {T}, {T}) outs(%tc : {T})
{add_to_store}
    pto.tstore ins(%tc : {T}) outs(%pc : {PV})
{after}
    return
  }}
}}
"""
FLAG = "    pto.{what}[<PIPE_{src}>, <PIPE_{dst}>, <EVENT_ID{e}>]"


def flags(src: str, dst: str, e: int = 0) -> str:
    return FLAG.format(what="set_flag", src=src, dst=dst, e=e) + "\n" + FLAG.format(what="wait_flag", src=src,
                                                                                     dst=dst, e=e)


CLEAN = {"load_to_add": flags("MTE2", "V"), "add_to_store": flags("V", "MTE3"), "after": ""}


def vadd(arch: str = "a3", **slots) -> str:
    return VADD.format(T=T, TV="!pto.tensor_view<?x?xf32>", PV="!pto.partition_tensor_view<16x32xf32>", arch=arch,
                       **{**CLEAN, **slots})


def inputs():
    rng = np.random.default_rng(3)
    return {n: rng.standard_normal(512).astype(np.float32) for n in "abc"}


def dynamic(db, text: str, profile=None, intra=False, args=None, func=None, blocks=1, name="k.pto"):
    program = parse_program(text, name)
    detector = HazardDetector(db, profile or ("a5" if 'arch = "a5"' in text else "a2a3"), intra)
    run_program(db, program, args or inputs(), profile, func, blocks, tracer=detector)
    return detector.report()


def static(db, text: str, profile=None, intra=False, name="k.pto"):
    return check_hazards(db, parse_program(text, name), profile, intra)


def kinds(report) -> list[tuple[str, str, str]]:
    """Each hazard as (kind, first statement and operand, second statement and operand)."""
    return sorted((h.kind, f"{h.first.statement[4:]} {h.first.operand}", f"{h.second.statement[4:]} "
                   f"{h.second.operand}") for h in report.hazards)


# -- each hazard kind caught, by the run and by the static check --------------------------------------------
def test_clean_kernel_has_no_finding(db):
    for report in (dynamic(db, vadd()), static(db, vadd())):
        assert report.clean and not report.auto_sync, report.lines()


def test_read_after_write_without_wait(db):
    text = vadd(load_to_add="")  # the add reads what the loads (MTE2) write: nothing orders them
    for report in (dynamic(db, text), static(db, text)):
        assert kinds(report) == [("RAW", "tload dst", "tadd src0"), ("RAW", "tload dst", "tadd src1")], \
            report.lines()
        h = report.hazards[0]
        assert (h.first.pipe, h.second.pipe) == ("MTE2", "V")
        assert "pto.set_flag[<PIPE_MTE2>, <PIPE_V>" in h.fix and "wait_flag" in h.fix


def test_write_after_read_store_and_reload(db):
    # after the store (MTE3 reads tc), the add runs again into tc (V writes it) without waiting for the store
    again = f"    pto.tadd ins(%ta, %tb : {T}, {T}) outs(%tc : {T})"
    text = vadd(after=again)
    for report in (dynamic(db, text), static(db, text)):
        assert kinds(report) == [("WAR", "tstore src", "tadd dst")], report.lines()
        assert report.hazards[0].buffer.endswith(", bytes 0..2047")
    assert dynamic(db, text).hazards[0].buffer.startswith("the tile of alloc_tile at k.pto:15:5")
    assert static(db, text).hazards[0].buffer.startswith("tile %tc")


def test_write_after_write_load_then_fill(db):
    fill = "    %z = arith.constant 0.0 : f32\n    pto.texpands ins(%z : f32) outs(%tb : " + T + ")"
    text = vadd(load_to_add=fill + "\n" + flags("MTE2", "V"))
    for report in (dynamic(db, text), static(db, text)):
        assert kinds(report) == [("WAW", "tload dst", "texpands dst")], report.lines()


def test_global_memory_write_after_write_across_blocks(db):
    report = dynamic(db, vadd(), blocks=2)  # both blocks store the same elements of c
    assert [(h.kind, h.first.core, h.second.core) for h in report.hazards] == [("WAW", 0, 1)]
    assert report.hazards[0].buffer == "global %c, elements 0..511" and "syncall" in report.hazards[0].fix


# -- each ordering instruction honoured ---------------------------------------------------------------------
EVENT = "    pto.{w}[#pto.pipe_event_type<{a}>, #pto.pipe_event_type<{b}>, #pto.event<EVENT_ID{e}>]"
ORDERINGS = {
    "set_flag/wait_flag": CLEAN,
    "barrier PIPE_ALL": {"load_to_add": "    pto.barrier <PIPE_ALL>", "add_to_store": "    pto.barrier <PIPE_ALL>"},
    "record_event/wait_event": {
        "load_to_add": EVENT.format(w="record_event", a="TLOAD", b="TVEC", e=1) + "\n"
        + EVENT.format(w="wait_event", a="TLOAD", b="TVEC", e=1),
        "add_to_store": EVENT.format(w="record_event", a="TVEC", b="TSTORE_VEC", e=2) + "\n"
        + EVENT.format(w="wait_event", a="TVEC", b="TSTORE_VEC", e=2)},
    "set_flag_dyn from an event-id array": {
        "load_to_add": "    %arr = pto.declare_eventid_array -> !pto.eventid_array<2>\n"
        "    %c3 = arith.constant 3 : index\n"
        "    pto.eventid_array_set %arr[%c1], %c3 : !pto.eventid_array<2>\n"
        "    %eid = pto.eventid_array_get %arr[%c1] : !pto.eventid_array<2>\n"
        "    pto.set_flag_dyn [#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_V>, %eid]\n"
        "    pto.wait_flag_dyn [#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_V>, %eid]",
        "add_to_store": flags("V", "MTE3", 3)},
    "buffer tokens get_buf/rls_buf": {
        "load_to_add": "    pto.rls_buf[#pto.pipe_event_type<TLOAD>, 5]\n"
        "    pto.get_buf[#pto.pipe_event_type<TVEC>, 5]",
        "add_to_store": "    pto.rls_buf[#pto.pipe_event_type<TVEC>, 5]\n"
        "    pto.get_buf[#pto.pipe_event_type<TSTORE_VEC>, 5]",
        "after": "    pto.rls_buf[#pto.pipe_event_type<TSTORE_VEC>, 5]"},
}


@pytest.mark.parametrize("ordering", sorted(ORDERINGS))
def test_ordering_instruction_honoured(db, ordering):
    slots = ORDERINGS[ordering]
    text = vadd("a5", **slots)
    if "get_buf" in slots["load_to_add"]:  # the load takes the token first
        text = text.replace("    pto.tload ins(%pa", "    pto.get_buf[#pto.pipe_event_type<TLOAD>, 5]\n"
                            "    pto.tload ins(%pa", 1)
    for report in (dynamic(db, text), static(db, text)):
        assert report.clean, (ordering, report.lines())
    broken = text.replace(slots["load_to_add"], "")  # without the first ordering the loads race with the add
    for report in (dynamic(db, broken), static(db, broken)):
        assert ("RAW", "tload dst", "tadd src0") in kinds(report), (ordering, report.lines())


def test_late_set_orders_what_follows_the_wait(db):
    # the wait of V for the store's flag comes first in program order; V holds until the set runs
    text = vadd(add_to_store=flags("V", "MTE3"),
                after=f"    pto.wait_flag[<PIPE_MTE3>, <PIPE_V>, <EVENT_ID0>]\n"
                f"    pto.tadd ins(%ta, %tb : {T}, {T}) outs(%tc : {T})\n"
                "    pto.set_flag[<PIPE_MTE3>, <PIPE_V>, <EVENT_ID0>]")
    for report in (dynamic(db, text), static(db, text)):
        assert report.clean, report.lines()  # the second add waits for the set, which runs after the store


def test_intra_pipe_dependence_needs_a_barrier_on_a2a3_only(db):
    twice = f"    pto.tadd ins(%tc, %tb : {T}, {T}) outs(%tc : {T})"
    text = vadd(add_to_store=twice + "\n" + flags("V", "MTE3"))
    assert dynamic(db, text).clean  # different pipes only (the relation)
    report = dynamic(db, text, intra=True)
    assert kinds(report) == [("RAW", "tadd dst", "tadd src0"), ("WAW", "tadd dst", "tadd dst")], report.lines()
    assert "pto.barrier <PIPE_V>" in report.hazards[0].fix
    assert dynamic(db, text.replace('"a3"', '"a5"'), intra=True).clean  # A5 orders its vector pipe
    barred = vadd(add_to_store="    pto.barrier <PIPE_V>\n" + twice + "\n" + flags("V", "MTE3"))
    assert dynamic(db, barred, intra=True).clean


# -- protocol errors ----------------------------------------------------------------------------------------
def test_set_without_wait_and_wait_without_set(db):
    set_only = vadd(load_to_add=FLAG.format(what="set_flag", src="MTE2", dst="V", e=0) + "\n" + flags("MTE2", "V", 1))
    for report in (dynamic(db, set_only), static(db, set_only)):
        assert [p.rule for p in report.protocol] == ["hazard.unwaited-set"], report.lines()
    wait_only = vadd(load_to_add=flags("MTE2", "V") + "\n" + FLAG.format(what="wait_flag", src="MTE2", dst="V", e=4))
    for report in (dynamic(db, wait_only), static(db, wait_only)):
        assert [p.rule for p in report.protocol] == ["hazard.unset-wait"], report.lines()


def _benchmark_oracle():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "hazards.py"
    spec = importlib.util.spec_from_file_location("hazards_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module.Oracle


def test_work_after_a_wait_that_never_passes_races_with_nothing(db):
    # V hangs at a wait no set satisfies: the add after it never runs; the store (MTE3) still races with the load
    text = (HERE / "unset_wait.pto").read_text()
    detector, oracle = HazardDetector(db, "a2a3"), _benchmark_oracle()(db, "a2a3")
    run_program(db, parse_program(text, "k.pto"), inputs(), None, tracer=Tee(detector, oracle))
    for report in (detector.report(), static(db, text)):
        assert kinds(report) == [("RAW", "tload dst", "tstore src")], report.lines()
        assert [p.rule for p in report.protocol] == ["hazard.unset-wait"], report.lines()
    assert oracle.analyse() == (1, 1)  # the benchmark's ground truth agrees: one race, one hang


def test_event_id_reused_while_in_flight(db):
    twice = FLAG.format(what="set_flag", src="MTE2", dst="V", e=0)
    text = vadd(load_to_add=twice + "\n" + flags("MTE2", "V"))
    for report in (dynamic(db, text), static(db, text)):
        assert "hazard.event-in-flight" in [p.rule for p in report.protocol], report.lines()


def test_barrier_waiting_for_a_blocked_pipe_deadlocks(db):
    text = vadd(load_to_add=FLAG.format(what="wait_flag", src="MTE2", dst="V", e=0) + "\n    pto.barrier <PIPE_ALL>\n"
                + FLAG.format(what="set_flag", src="MTE2", dst="V", e=0))
    report = dynamic(db, text)
    assert "hazard.barrier-deadlock" in [p.rule for p in report.protocol], report.lines()


# -- the double-buffered pipeline ---------------------------------------------------------------------------
def pipeline_args(n=6):
    rng = np.random.default_rng(5)
    return {"x": rng.standard_normal(n * 512).astype(np.float32), "y": np.zeros(n * 512, np.float32), "n": n}


def test_double_buffered_pipeline_is_clean(db):
    text = (HERE / "pipeline.pto").read_text()
    for report in (dynamic(db, text, args=pipeline_args()), static(db, text)):
        assert report.clean, report.lines()


def test_pipeline_missing_buffer_release_is_a_write_after_read(db):
    # the load of the next round into in0 no longer waits for the multiply that reads in0
    text = (HERE / "pipeline.pto").read_text()
    line = "      pto.wait_flag[<PIPE_V>, <PIPE_MTE2>, <EVENT_ID0>]\n"
    broken = text.replace(line, "", 1)
    report = dynamic(db, broken, args=pipeline_args())
    assert [(h.kind, h.first.statement, h.second.statement) for h in report.hazards] == \
        [("WAR", "pto.tmuls", "pto.tload")] and report.hazards[0].count == 2, report.lines()
    assert "hazard.unwaited-set" in [p.rule for p in report.protocol]
    assert any(h.kind == "WAR" for h in static(db, broken).hazards)


# -- kernels written for the assembler's automatic synchronisation -----------------------------------------
def test_kernel_without_synchronisation_is_recognised(db):
    text = vadd(load_to_add="", add_to_store="")
    for report in (dynamic(db, text), static(db, text)):
        assert report.auto_sync and len(report.hazards) == 3
        assert "--enable-insert-sync" in report.summary("x")


def test_cli_run_and_check_program_hazards(capsys, tmp_path):
    path = tmp_path / "k.pto"
    path.write_text(vadd(load_to_add=""))
    args = []
    for n, arr in inputs().items():
        np.save(tmp_path / f"{n}.npy", arr)
        args += ["--arg", f"{n}={tmp_path / f'{n}.npy'}"]
    capsys.readouterr()
    assert main(["run-program", str(path), *args, "-o", str(tmp_path / "o.npz"), "--hazards"]) == 1
    out = capsys.readouterr().out
    assert "[hazard.raw] read after write race" in out and "2 race(s)" in out
    assert main(["check-program", str(path), "--hazards"]) == 1
    assert "[hazard.raw]" in capsys.readouterr().out
    path.write_text(vadd(load_to_add="", add_to_store=""))  # no synchronisation at all: said to be for ptoas's
    assert main(["check-program", str(path), "--hazards"]) == 0
    assert "--enable-insert-sync" in capsys.readouterr().out
    assert main(["check-program", str(path), "--intra-pipe"]) == 2  # goes with --hazards


def test_check_program_without_hazards_is_unchanged(db, tmp_path):
    path = tmp_path / "k.pto"
    path.write_text(vadd(load_to_add=""))
    result = check_program(db, parse_program(path.read_text(), str(path)))
    assert not result.violations
