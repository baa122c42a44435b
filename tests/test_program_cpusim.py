"""Programs on the CPU simulator: the trace of a reference run, the replay program and step table made from
it, the comparison, and (with ``PTO_ISA_ROOT``) the replay built and run for real.

The tests before the live ones need no simulator: they check the emitted C++ and step table, and feed the
comparison results files written from the trace itself (then altered).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest
from cpusim_env import cpusim_unavailable
from test_program_addresses import KERNEL as ADDRESSES_KERNEL
from test_programs import BLOCKS, DYNAMIC, LOOP_KERNEL, SHARED, VIEWS_KERNEL, WHILE, _vec

from ptospec.cli import main
from ptospec.errors import PtospecError
from ptospec.program.api import choose_profile, read_program, run_program
from ptospec.program.compare import compare, report_lines
from ptospec.program.cpusim import MAGIC, SimResult, build_and_run, parse_results, plan_replay
from ptospec.program.trace import Recorder, footprint


def _program(text: str, tmp_path: Path, name: str = "k.pto"):
    path = tmp_path / name
    path.write_text(text)
    return read_program(path)


def _traced(db, program, args, blocks=1):
    rec = Recorder(choose_profile(db, program, None))
    result = run_program(db, program, args, blocks=blocks, tracer=rec)
    return rec.trace, result


@pytest.fixture
def loop_args():
    rng = np.random.default_rng(7)
    return {"arg0": rng.standard_normal((16, 16)).astype(np.float32),
            "arg1": rng.standard_normal((16, 16)).astype(np.float32),
            "arg2": np.zeros((16, 16), np.float32)}


def _operand(step, name):
    return next(o for o in step.operands if o.name == name)


def _line_of(text: str, needle: str, nth: int = 0) -> int:
    return [k for k, line in enumerate(text.splitlines(), 1) if needle in line][nth]


# -- the trace ----------------------------------------------------------------------------------------
def test_trace_records_every_executed_instruction_with_its_position(db, tmp_path, loop_args):
    program = _program(LOOP_KERNEL, tmp_path)
    trace, result = _traced(db, program, {**loop_args, "n": 5})
    names = [s.op for s in trace.instructions]
    assert names == ["tload", "tload", "texpands", *["tadd"] * 5, "tadds", "tstore"]
    assert len(trace.steps) - len(trace.instructions) == 3  # one allocation step per alloc_tile
    odd = trace.instructions[4]  # i = 1: the else branch
    assert odd.pos.line == _line_of(LOOP_KERNEL, "pto.tadd ins(%acc, %b")
    # each output is what the reference left there: the final tadd's acc is the stored arg2 minus the count
    last_tadd = trace.instructions[7].outputs["dst"]
    np.testing.assert_array_equal(last_tadd + np.float32(5), result.outputs["arg2"])
    store = trace.instructions[-1]
    assert store.outputs["dst"].shape == (256,) and store.inside["dst"].all()


def test_tiles_at_one_address_share_a_slot_and_own_tiles_go_above(db, tmp_path):
    text = SHARED.replace("    pto.tstore ins(%x",
                          f"    %z = pto.alloc_tile : {_vec()}\n"
                          f"    pto.tmuls ins(%x, %two : {_vec()}, f32) outs(%z : {_vec()})\n    pto.tstore ins(%x")
    trace, _ = _traced(db, _program(text, tmp_path), {"arg0": np.ones((16, 16), np.float32),
                                                      "arg1": np.zeros((16, 16), np.float32)})
    plan_replay(db, trace)
    load, muls, own = trace.instructions[0], trace.instructions[1], trace.instructions[2]
    assert _operand(load, "dst").slot is _operand(muls, "src0").slot  # %x and %y: alloc_tile addr = 0 both
    placed = {s.addr for s in trace.slots if not s.own}
    assert placed == {0}
    z = [s for s in trace.slots if s.own]
    assert len(z) == 1 and z[0].addr >= 1024 and z[0].addr % 32 == 0  # above the 16x16 f32 tile at 0
    assert _operand(own, "dst").slot is z[0]


def test_footprint_follows_the_view_and_blocks_start_afresh(db, tmp_path):
    trace, _ = _traced(db, _program(BLOCKS, tmp_path), {"arg0": np.zeros((64, 16), np.float32)}, blocks=4)
    assert [s.kind for s in trace.steps].count("block") == 3  # blocks 1, 2, 3 clear on-chip memory
    assert "NPU_MEMORY_CLEAR()" in plan_replay(db, trace).source.text
    stores = [s for s in trace.instructions if s.op == "tstore"]
    assert [int(footprint(_operand(s, "dst").desc)[0]) for s in stores] == [0, 256, 512, 768]


# -- the replay program -------------------------------------------------------------------------------
def test_one_function_per_signature_however_often_it_runs(db, tmp_path, loop_args):
    program = _program(LOOP_KERNEL, tmp_path)
    short, _ = _traced(db, program, {**loop_args, "n": 1})
    long, _ = _traced(db, program, {**loop_args, "n": 40})
    a, b = plan_replay(db, short), plan_replay(db, long)
    assert a.source.text == b.source.text  # the cached binary serves every trip count
    assert b.source.text.count("TADD(") == 1 and b.source.text.count("TLOAD(") == 1
    assert len(a.groups) == 6  # zero a fresh tile, tload, texpands, tadd, tadds, tstore
    assert "NPUArch::A5" in a.source.text  # pto.target_arch = "a5"
    assert len(b.words) > len(a.words)
    assert b.words[0] == MAGIC and b.words[2] == len(long.steps)
    assert str(tmp_path) not in a.source.text  # no source positions: the text depends on signatures only


def test_step_table_carries_valid_shapes_addresses_and_scalar_bits(db, tmp_path, loop_args):
    trace, _ = _traced(db, _program(DYNAMIC, tmp_path), {"arg0": np.zeros((16, 16), np.float32),
                                                        "arg1": np.zeros((16, 16), np.float32), "vr": 5})
    replay = plan_replay(db, trace)
    load = trace.instructions[0]
    k = replay.step_groups[load.index]
    words = replay.words.tolist()
    at = 4 + len(trace.buffers)
    for _ in range(load.index):
        at += 2 + words[at + 1]
    assert words[at] == k
    params = words[at + 2: at + 2 + words[at + 1]]
    assert params[:3] == [5, 16, _operand(load, "dst").slot.addr]  # dst: valid 5x16 at its address
    assert params[3:5] == [0, 0]  # src: buffer 0 at offset 0
    assert params[5:10] == [1, 1, 1, 5, 16]  # the view's five extents
    trace, _ = _traced(db, _program(LOOP_KERNEL, tmp_path), {**loop_args, "n": 0})
    replay = plan_replay(db, trace)
    expands = next(s for s in trace.instructions if s.op == "texpands")
    words = replay.words.tolist()
    at = 4 + len(trace.buffers)
    for _ in range(expands.index):
        at += 2 + words[at + 1]
    scalar = words[at + 2 + 3]  # after dst's three words
    assert scalar == struct.unpack("<I", struct.pack("<f", 0.5))[0]


# -- the comparison, fed from the trace itself ---------------------------------------------------------
def _results(trace, change=None) -> bytes:
    """A results file as the replay program writes it, holding the reference's own outputs."""
    out = bytearray()
    for step in trace.steps:
        out += f"s {step.index}\n".encode()
        for name, arr in step.outputs.items():
            arr = arr.copy()
            if change is not None:
                change(step, name, arr)
            out += arr.tobytes()
    for k, buf in enumerate(trace.buffers):
        out += f"g {k} {buf.array.nbytes}\n".encode() + buf.array.tobytes()
    return bytes(out + b"end\n")


def _sim(db, trace, data: bytes, stopped=None) -> SimResult:
    outputs, buffers = parse_results(db, trace, data)
    return SimResult(outputs, buffers, stopped, None, "", True, 0.0, 0.0, 0)


def test_identical_results_compare_same(db, tmp_path, loop_args):
    trace, _ = _traced(db, _program(LOOP_KERNEL, tmp_path), {**loop_args, "n": 3})
    c = compare(db, trace, _sim(db, trace, _results(trace)))
    assert c.same and c.steps == 8 and c.elements == 8 * 256 and c.buffer_elements == 3 * 256


def test_first_difference_names_the_instruction_and_the_elements(db, tmp_path, loop_args):
    trace, _ = _traced(db, _program(LOOP_KERNEL, tmp_path), {**loop_args, "n": 3})
    second_tadd = [s for s in trace.instructions if s.op == "tadd"][1]

    def change(step, name, arr):
        if step.index >= second_tadd.index and name == "dst" and arr.ndim == 2:
            arr[2, 3] += np.float32(1)
        if step.op == "tstore":
            arr[2 * 16 + 3] += np.float32(1)

    data = _results(trace, change)
    final = bytearray(data)  # the final buffer too (as the simulator would have left it)
    c = compare(db, trace, _sim(db, trace, bytes(final)))
    assert not c.same and c.first_step == second_tadd.index
    first = c.step_differences[0]
    assert first.where == second_tadd.where() and first.differing == 1
    assert first.listed[0].startswith("dst[2, 3]: reference ")
    text = "\n".join(report_lines(c))
    assert f"{second_tadd.pos}: pto.tadd" in text and "DIFFERENT" in text


def test_final_buffer_difference_is_attributed_to_its_writer(db, tmp_path, loop_args):
    trace, _ = _traced(db, _program(LOOP_KERNEL, tmp_path), {**loop_args, "n": 2})
    data = _results(trace)
    outputs, buffers = parse_results(db, trace, data)
    buffers[2] = buffers[2].copy()
    buffers[2][17] = np.float32(-100)  # arg2[1, 1], written by the tstore
    buffers[0] = buffers[0].copy()
    buffers[0][0] = np.float32(9)  # arg0[0, 0], an input nothing wrote
    c = compare(db, trace, SimResult(outputs, buffers, None, None, "", True, 0, 0, 0))
    found = {d.output: d for d in c.buffer_differences}
    store = trace.instructions[-1]
    assert found["arg2"].listed[0].startswith("arg2[1, 1]:") and str(store.pos) in found["arg2"].listed[0]
    assert "written by no instruction" in found["arg0"].listed[0]


def test_truncated_results_end_the_comparison_where_the_simulator_stopped(db, tmp_path, loop_args):
    trace, _ = _traced(db, _program(LOOP_KERNEL, tmp_path), {**loop_args, "n": 3})
    data = _results(trace)
    cut = data.index(f"s {trace.instructions[4].index}\n".encode())
    outputs, buffers = parse_results(db, trace, data[:cut + 10])
    assert len(outputs) == trace.instructions[4].index and buffers == []
    c = compare(db, trace, SimResult(outputs, buffers, "stopped", 4, "", True, 0, 0, 0))
    assert not c.same and c.buffers == 0


def test_simulator_options_need_the_cpusim_backend(tmp_path, capsys):
    path = tmp_path / "k.pto"
    path.write_text(WHILE)
    np.save(tmp_path / "a.npy", np.zeros((16, 16), np.float32))
    code = main(["run-program", str(path), "--arg", f"arg0={tmp_path / 'a.npy'}", "--cache-dir", str(tmp_path),
                 "-o", str(tmp_path / "o.npz")])
    assert code == 2 and "--backend cpusim" in capsys.readouterr().err


def test_compare_program_without_a_checkout_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PTO_ISA_ROOT", raising=False)
    path = tmp_path / "k.pto"
    path.write_text(WHILE)
    np.save(tmp_path / "a.npy", np.zeros((16, 16), np.float32))
    code = main(["compare-program", str(path), "--arg", f"arg0={tmp_path / 'a.npy'}"])
    assert code == 2 and "PTO_ISA_ROOT" in capsys.readouterr().err


# -- live: the replay built and run on the simulator ---------------------------------------------------
WHY_NOT = cpusim_unavailable("run programs on the simulator")
live = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("program-cpusim-cache")


def _run(db, text, tmp_path, args, cache, blocks=1, name="k.pto"):
    trace, result = _traced(db, _program(text, tmp_path, name), args, blocks)
    sim = build_and_run(db, trace, None, str(cache))
    return trace, result, sim


KERNELS = {
    "loop": (LOOP_KERNEL, lambda a: {**a, "n": 5}, 1),
    "shared": (SHARED, lambda a: {"arg0": a["arg0"], "arg1": a["arg2"]}, 1),
    "dynamic": (DYNAMIC, lambda a: {"arg0": a["arg0"], "arg1": np.full((16, 16), 7, np.float32), "vr": 5}, 1),
    "blocks": (BLOCKS, lambda a: {"arg0": np.zeros((64, 16), np.float32)}, 4),
    "while": (WHILE, lambda a: {"arg0": a["arg0"]}, 1),
    "views": (VIEWS_KERNEL, lambda a: {"arg0": a["arg0"], "arg1": a["arg2"]}, 1),  # treshape and subset alias
    # a window reached through tensor_view_addr and the strides get_tensor_view_stride reads back
    "addresses": (ADDRESSES_KERNEL, lambda a: {"arg0": np.arange(1024, dtype=np.float32),
                                               "arg1": np.zeros(256, np.float32)}, 1),
}


@live
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_hand_written_kernels_agree_with_the_simulator(db, tmp_path, loop_args, cache, kernel):
    text, make, blocks = KERNELS[kernel]
    trace, result, sim = _run(db, text, tmp_path, make(loop_args), cache, blocks)
    assert sim.stopped is None, sim.log
    c = compare(db, trace, sim)
    assert c.same, report_lines(c)
    assert c.steps == len(trace.instructions) and c.buffers == len(trace.buffers)
    for buf, arr in zip(trace.buffers, sim.buffers, strict=True):  # the simulator's buffers, as the reference's
        np.testing.assert_allclose(arr.reshape(buf.shape), result.outputs[buf.name], rtol=1e-5)


_PV = "!pto.partition_tensor_view<16x16xf32>"
LEFTOVER = f"""
module {{
  func.func @leftover(%arg0: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %at = arith.constant 0 : i64
    %five = arith.constant 5.0 : f32
    %b = pto.get_block_idx
    %row = arith.muli %b, %c16 : index
    %tv = pto.make_tensor_view %arg0, shape = [%c32, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %pv = pto.partition_view %tv, offsets = [%row, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> {_PV}
    %t = pto.alloc_tile addr = %at : {_vec()}
    %first = arith.cmpi eq, %b, %c0 : index
    scf.if %first {{
      pto.texpands ins(%five : f32) outs(%t : {_vec()})
    }}
    pto.tstore ins(%t : {_vec()}) outs(%pv : {_PV})
    return
  }}
}}
"""


@live
def test_each_block_starts_with_cleared_on_chip_memory(db, tmp_path, cache):
    """Block 1 stores a tile only block 0 wrote: zeros in the reference (a fresh walker), so on the simulator."""
    trace, _, sim = _run(db, LEFTOVER, tmp_path, {"arg0": np.ones((32, 16), np.float32)}, cache, blocks=2)
    assert compare(db, trace, sim).same
    np.testing.assert_array_equal(sim.buffers[0].reshape(32, 16)[16:], 0)
    np.testing.assert_array_equal(sim.buffers[0].reshape(32, 16)[:16], 5)


@live
def test_a_changed_input_shows_at_the_first_load(db, tmp_path, loop_args, cache):
    trace, _ = _traced(db, _program(LOOP_KERNEL, tmp_path), {**loop_args, "n": 3})
    trace.initial[1] = trace.initial[1].copy()
    trace.initial[1][5] += np.float32(3)  # the simulator reads arg1[0, 5] 3 larger than the reference did
    sim = build_and_run(db, trace, None, str(cache))
    c = compare(db, trace, sim)
    second_load = trace.instructions[1]
    assert c.first_step == second_load.index and c.step_differences[0].listed[0].startswith("dst[0, 5]:")
    assert any(d.output == "arg2" and d.differing == 1 for d in c.buffer_differences)  # one odd iteration adds it


@live
def test_a_tile_beyond_the_simulated_buffer_stops_the_run_at_its_step(db, tmp_path, cache):
    top = 524288 - 1024  # the last 16x16 f32 tile of the cpu profile's (and the simulator's) 512 KiB buffer
    text = SHARED.replace("module {", 'module attributes {pto.target_arch = "cpu"} {').replace(
        "%base = arith.constant 0 : i64", f"%base = arith.constant {top} : i64").replace(
        "    pto.tstore ins(%x",
        f"    %z = pto.alloc_tile : {_vec()}\n"
        f"    pto.tmuls ins(%x, %two : {_vec()}, f32) outs(%z : {_vec()})\n    pto.tstore ins(%x")
    trace, _, sim = _run(db, text, tmp_path, {"arg0": np.ones((16, 16), np.float32),
                                              "arg1": np.zeros((16, 16), np.float32)}, cache)
    assert sim.stopped is not None and "pto.alloc_tile" in sim.stopped  # zeroing %z's storage, above the top
    c = compare(db, trace, sim)
    assert not c.same and c.stopped


@live
def test_cli_compare_program_and_run_program(tmp_path, capsys, cache, loop_args):
    path = tmp_path / "k.pto"
    path.write_text(LOOP_KERNEL)
    for name, arr in loop_args.items():
        np.save(tmp_path / f"{name}.npy", arr)
    argv = [f"--arg={n}={tmp_path / (n + '.npy')}" for n in loop_args] + ["--arg", "n=3", "--cache-dir", str(cache)]
    assert main(["compare-program", str(path), *argv, "--source", str(tmp_path / "replay.cpp")]) == 0
    out = capsys.readouterr().out
    assert "same: 8 step(s)" in out and "TADD(" in (tmp_path / "replay.cpp").read_text()
    assert main(["run-program", str(path), *argv, "--backend", "cpusim", "-o", str(tmp_path / "o.npz")]) == 0
    ref = run_program_outputs(path, {**loop_args, "n": 3})
    got = np.load(tmp_path / "o.npz")
    np.testing.assert_array_equal(got["arg2"], ref["arg2"])


def run_program_outputs(path, args):
    from ptospec.loader import load_database

    return run_program(load_database(), read_program(path), args).outputs


CORPUS = os.environ.get("PTOSPEC_PTOAS_ROOT")


@live
@pytest.mark.skipif(not CORPUS, reason="set PTOSPEC_PTOAS_ROOT to a checkout of hw-native-sys/PTOAS for its samples")
def test_the_assemblers_vector_addition_sample(db, cache):
    program = read_program(Path(CORPUS) / "test" / "samples" / "VectorAddition" / "vadd.pto")
    rng = np.random.default_rng(1)
    args = {"arg0": rng.standard_normal((32, 32)).astype(np.float32),
            "arg1": rng.standard_normal((32, 32)).astype(np.float32), "arg2": np.zeros((32, 32), np.float32)}
    trace, _ = _traced(db, program, args)
    sim = build_and_run(db, trace, None, str(cache))
    c = compare(db, trace, sim)
    assert c.same, report_lines(c)
    np.testing.assert_array_equal(sim.buffers[2].reshape(32, 32), args["arg0"] + args["arg1"])


def test_unplannable_step_is_one_clear_error(db, tmp_path, loop_args, monkeypatch):
    trace, _ = _traced(db, _program(LOOP_KERNEL, tmp_path), {**loop_args, "n": 1})
    tadd = next(s for s in trace.instructions if s.op == "tadd")
    _operand(tadd, "dst").desc = _operand(tadd, "dst").desc.with_(valid_row=None)  # as if its valid shape were unknown
    with pytest.raises(PtospecError) as err:
        plan_replay(db, trace)
    assert err.value.rule == "cpusim.unplannable" and str(tadd.pos) in str(err.value)
