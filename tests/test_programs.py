"""Whole programs in the PTO assembler's dialect: the reader, check-program and the reference interpreter.

Hand-written kernels exercise the dialect (loops with carried values, branches, while loops, calls,
tile buffers sharing bytes, dynamic valid shapes, several blocks); a generated kernel per database
instruction runs it inside a loop between loads and stores and compares with the executor.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from ptospec.asm.forms import parse_line, print_form
from ptospec.asm.types import format_type, parse_descriptor
from ptospec.conformance.data import make_inputs
from ptospec.errors import PtospecError
from ptospec.executor import execute, numpy_dtype
from ptospec.program.api import check_program, read_program, run_program
from ptospec.program.spec import program_spec
from ptospec.program.syntax import parse_program
from ptospec.tile import ScalarDesc, TileDesc
from ptospec.validator import validate

VEC = "!pto.tile_buf<loc=vec, dtype={t}, rows={r}, cols={c}, v_row={vr}, v_col={vc}, blayout=row_major, " \
      "slayout=none_box, fractal=512, pad=0>"


def _program(text: str, tmp_path: Path, name: str = "k.pto"):
    path = tmp_path / name
    path.write_text(text)
    return read_program(path)


def _vec(t="f32", r=16, c=16, vr=None, vc=None) -> str:
    return VEC.format(t=t, r=r, c=c, vr=r if vr is None else vr, vc=c if vc is None else vc)


def _views(n: int, rows: int, cols: int, t: str = "f32") -> str:
    lines = []
    for k in range(n):
        lines.append(f"    %tv{k} = pto.make_tensor_view %arg{k}, shape = [%c{rows}, %c{cols}], strides = [%c{cols}, %c1]"
                     f" : !pto.tensor_view<?x?x{t}>")
        lines.append(f"    %pv{k} = pto.partition_view %tv{k}, offsets = [%c0, %c0], sizes = [%c{rows}, %c{cols}]"
                     f" : !pto.tensor_view<?x?x{t}> -> !pto.partition_tensor_view<{rows}x{cols}x{t}>")
    return "\n".join(lines)


LOOP_KERNEL = f"""
!tile = {_vec()}
module attributes {{pto.target_arch = "a5"}} {{
  func.func @accumulate(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>, %n: index) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %half = arith.constant 0.5 : f32
{_views(3, 16, 16)}
    %a = pto.alloc_tile : !tile
    %b = pto.alloc_tile : !tile
    %acc = pto.alloc_tile : !tile
    pto.tload ins(%pv0 : !pto.partition_tensor_view<16x16xf32>) outs(%a : !tile)
    pto.tload ins(%pv1 : !pto.partition_tensor_view<16x16xf32>) outs(%b : !tile)
    pto.texpands ins(%half : f32) outs(%acc : !tile)
    // acc += a on even iterations, acc += b on odd ones; count the iterations
    %count = scf.for %i = %c0 to %n step %c1 iter_args(%k = %c0) -> (index) {{
      %r = arith.remsi %i, %c2 : index
      %even = arith.cmpi eq, %r, %c0 : index
      scf.if %even {{
        pto.tadd ins(%acc, %a : !tile, !tile) outs(%acc : !tile)
      }} else {{
        pto.tadd ins(%acc, %b : !tile, !tile) outs(%acc : !tile)
      }}
      %k1 = arith.addi %k, %c1 : index
      scf.yield %k1 : index
    }}
    %countf = arith.index_cast %count : index to i32
    %cf = arith.sitofp %countf : i32 to f32
    pto.tadds ins(%acc, %cf : !tile, f32) outs(%acc : !tile)
    pto.tstore ins(%acc : !tile) outs(%pv2 : !pto.partition_tensor_view<16x16xf32>)
    return
  }}
}}
"""


@pytest.fixture(scope="module")
def inputs():
    rng = np.random.default_rng(7)
    return {"arg0": rng.standard_normal((16, 16)).astype(np.float32),
            "arg1": rng.standard_normal((16, 16)).astype(np.float32),
            "arg2": np.zeros((16, 16), np.float32)}


@pytest.mark.parametrize("n", [0, 1, 4, 5])
def test_loop_with_branches_and_carried_count(db, tmp_path, inputs, n):
    program = _program(LOOP_KERNEL, tmp_path)
    result = run_program(db, program, {**inputs, "n": n})
    a, b = inputs["arg0"], inputs["arg1"]
    expected = np.float32(0.5) + np.zeros_like(a)
    for i in range(n):
        expected = expected + (a if i % 2 == 0 else b)
    expected = expected + np.float32(n)
    np.testing.assert_array_equal(result.outputs["arg2"], expected)
    assert result.outputs["arg0"] is not None and np.array_equal(result.outputs["arg0"], a)
    assert result.profile == "a5"


def test_check_program_walks_every_branch(db, tmp_path):
    result = check_program(db, _program(LOOP_KERNEL, tmp_path))
    assert not result.violations
    assert result.stats.instructions == 7  # 2 loads, texpands, 2 tadd (both branches), tadds, tstore
    assert result.stats.legal == 7
    assert not result.stats.unknown


def test_violation_has_file_line_col_and_rule(db, tmp_path):
    bad = LOOP_KERNEL.replace("pto.tadd ins(%acc, %b : !tile, !tile) outs(%acc : !tile)",
                              f"pto.tadd ins(%acc, %b : !tile, !tile) outs(%acc : {_vec('f16')})")
    program = _program(bad, tmp_path)
    result = check_program(db, program)
    assert result.violations, "a tadd of f32 into an f16 tile must be refused"
    lines = bad.splitlines()
    line_no = next(k for k, text in enumerate(lines, 1) if "!pto.tile_buf<loc=vec, dtype=f16" in text)
    assert any(f.pos.line == line_no and f.pos.path == str(program.path) for f in result.violations)
    with pytest.raises(PtospecError) as err:
        run_program(db, program, {"arg0": np.zeros((16, 16), np.float32), "arg1": np.zeros((16, 16), np.float32),
                                  "arg2": np.zeros((16, 16), np.float32), "n": 2})
    assert f":{line_no}:" in str(err.value)


def test_syntax_error_position(tmp_path):
    with pytest.raises(PtospecError) as err:
        parse_program("module {\n  func.func @k() {\n    %x = arith.constant 1 : index\n    scf.for %i = \n", "bad.pto")
    assert err.value.rule == "program.syntax"
    assert str(err.value).startswith("bad.pto:")


def test_an_instruction_without_its_name_is_a_syntax_error():
    # "pto." with nothing after the dot is no instruction name: refused where it stands, not counted as
    # an instruction the database lacks
    text = "module {\n  func.func @k() {\n    pto.%t, %x ins(%t : !a) outs(%t : !a)\n    return\n  }\n}\n"
    with pytest.raises(PtospecError) as err:
        parse_program(text, "bad.pto")
    assert err.value.rule == "program.syntax"
    assert str(err.value).startswith("bad.pto:3:8:")


SHARED = f"""
module {{
  func.func @alias(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %base = arith.constant 0 : i64
    %two = arith.constant 2.0 : f32
{_views(2, 16, 16)}
    %x = pto.alloc_tile addr = %base : {_vec()}
    %y = pto.alloc_tile addr = %base : {_vec()}
    pto.tload ins(%pv0 : !pto.partition_tensor_view<16x16xf32>) outs(%x : {_vec()})
    pto.tmuls ins(%y, %two : {_vec()}, f32) outs(%y : {_vec()})
    pto.tstore ins(%x : {_vec()}) outs(%pv1 : !pto.partition_tensor_view<16x16xf32>)
    return
  }}
}}
"""


def test_tiles_at_the_same_address_share_bytes(db, tmp_path, inputs):
    result = run_program(db, _program(SHARED, tmp_path), {"arg0": inputs["arg0"], "arg1": np.zeros((16, 16), np.float32)})
    np.testing.assert_array_equal(result.outputs["arg1"], inputs["arg0"] * np.float32(2))


def test_a_hexadecimal_float_constant_is_its_bit_pattern(db, tmp_path, inputs):
    """MLIR reads ``0x40000000 : f32`` as the float of those bits (2.0), as ptobc prints float constants."""
    text = SHARED.replace("%two = arith.constant 2.0 : f32", "%two = arith.constant 0x40000000 : f32")
    text = text.replace("pto.tmuls ins(%y, %two", "pto.tmuls ins(%x, %two").replace(
        "pto.tstore ins(%x", "pto.tstore ins(%y")
    result = run_program(db, _program(text.replace("addr = %base ", "", 1), tmp_path),
                         {"arg0": inputs["arg0"], "arg1": np.zeros((16, 16), np.float32)})
    np.testing.assert_array_equal(result.outputs["arg1"], inputs["arg0"] * np.float32(2))


@pytest.mark.parametrize("addr, rule", [(16, "tassign.align"), (262144 - 512, "tassign.capacity")])
def test_tile_address_rules(db, tmp_path, addr, rule):
    text = SHARED.replace("%base = arith.constant 0 : i64", f"%base = arith.constant {addr} : i64")
    result = check_program(db, _program(text, tmp_path), profile="a5")
    assert rule in {f.rule for f in result.violations}


DYNAMIC = f"""
module attributes {{pto.target_arch = "a3"}} {{
  func.func @rows(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %vr: index) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %tv0 = pto.make_tensor_view %arg0, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %tv1 = pto.make_tensor_view %arg1, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %src = pto.alloc_tile valid_row = %vr valid_col = %c16 : {_vec(vr='?', vc='?')}
    %pv0 = pto.partition_view %tv0, offsets = [%c0, %c0], sizes = [%vr, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<?x16xf32>
    %pv1 = pto.partition_view %tv1, offsets = [%c0, %c0], sizes = [%vr, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<?x16xf32>
    pto.tload ins(%pv0 : !pto.partition_tensor_view<?x16xf32>) outs(%src : {_vec(vr='?', vc='?')})
    pto.texp ins(%src : {_vec(vr='?', vc='?')}) outs(%src : {_vec(vr='?', vc='?')})
    pto.tstore ins(%src : {_vec(vr='?', vc='?')}) outs(%pv1 : !pto.partition_tensor_view<?x16xf32>)
    return
  }}
}}
"""


def test_dynamic_valid_shape_is_deferred_then_run(db, tmp_path):
    program = _program(DYNAMIC, tmp_path)
    checked = check_program(db, program)
    assert checked.profile == "a2a3" and not checked.violations and checked.deferred
    src = np.linspace(-1, 1, 256, dtype=np.float32).reshape(16, 16)
    out = np.full((16, 16), 7, np.float32)
    result = run_program(db, program, {"arg0": src, "arg1": out, "vr": 5})
    np.testing.assert_allclose(result.outputs["arg1"][:5], np.exp(src[:5]), rtol=1e-6)
    np.testing.assert_array_equal(result.outputs["arg1"][5:], out[5:])  # nothing else of the buffer changes
    with pytest.raises(PtospecError) as err:
        run_program(db, program, {"arg0": src, "arg1": out, "vr": 17})
    assert err.value.rule == "alloc.valid-bounds"


BLOCKS = f"""
module {{
  func.func @per_block(%arg0: !pto.ptr<f32>) attributes {{pto.entry}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %b = pto.get_block_idx
    %row = arith.muli %b, %c16 : index
    %bi = arith.index_cast %b : index to i32
    %bf = arith.sitofp %bi : i32 to f32
    %tv = pto.make_tensor_view %arg0, shape = [%c64, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %pv = pto.partition_view %tv, offsets = [%row, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %t = pto.alloc_tile : {_vec()}
    pto.texpands ins(%bf : f32) outs(%t : {_vec()})
    pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.tstore ins(%t : {_vec()}) outs(%pv : !pto.partition_tensor_view<16x16xf32>)
    func.call @nothing() : () -> ()
    return
  }}
  func.func private @nothing() {{
    return
  }}
}}
"""


def test_blocks_each_write_their_rows(db, tmp_path):
    program = _program(BLOCKS, tmp_path)
    result = run_program(db, program, {"arg0": np.zeros((64, 16), np.float32)}, blocks=4)
    expected = np.repeat(np.arange(4, dtype=np.float32), 16)[:, None] * np.ones((1, 16), np.float32)
    np.testing.assert_array_equal(result.outputs["arg0"], expected)
    with pytest.raises(PtospecError) as err:  # a fifth block writes past the buffer (the view's extents are ?:
        run_program(db, program, {"arg0": np.zeros((64, 16), np.float32)}, blocks=5)  # leaving them is a finding)
    assert err.value.rule == "gm.bounds"


WHILE = f"""
module attributes {{pto.target_arch = "a5"}} {{
  func.func @halve(%arg0: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c16 = arith.constant 16 : index
    %half = arith.constant 0.5 : f32
{_views(1, 16, 16)}
    %t = pto.alloc_tile : {_vec()}
    pto.tload ins(%pv0 : !pto.partition_tensor_view<16x16xf32>) outs(%t : {_vec()})
    %n = scf.while (%i = %c0) : (index) -> index {{
      %go = arith.cmpi slt, %i, %c3 : index
      scf.condition(%go) %i : index
    }} do {{
    ^bb0(%j: index):
      pto.tmuls ins(%t, %half : {_vec()}, f32) outs(%t : {_vec()})
      %next = arith.addi %j, %c1 : index
      scf.yield %next : index
    }}
    pto.tstore ins(%t : {_vec()}) outs(%pv0 : !pto.partition_tensor_view<16x16xf32>)
    return
  }}
}}
"""


def test_while_loop(db, tmp_path, inputs):
    result = run_program(db, _program(WHILE, tmp_path), {"arg0": inputs["arg0"]})
    np.testing.assert_array_equal(result.outputs["arg0"], inputs["arg0"] * np.float32(0.125))


def test_unknown_instruction_listed_then_refused(db, tmp_path):
    text = LOOP_KERNEL.replace("    pto.tstore ins(%acc", "    pto.tnosuchop ins(%a : !tile)\n    pto.tstore ins(%acc")
    program = _program(text, tmp_path)
    checked = check_program(db, program)
    assert checked.stats.unknown == {"pto.tnosuchop": 1}
    with pytest.raises(PtospecError) as err:
        run_program(db, program, {"arg0": np.zeros((16, 16), np.float32), "arg1": np.zeros((16, 16), np.float32),
                                  "arg2": np.zeros((16, 16), np.float32), "n": 1})
    assert err.value.rule == "program.unknown-instruction" and "pto.tnosuchop" in str(err.value)


def test_dialect_spellings(db):
    """The assembler's attribute spellings: rmode defaulted, #pto<round_mode ...>, sat_mode, atomicType."""
    f32, bf16 = _vec("f32", 1, 64), _vec("bf16", 1, 64)
    plain = parse_line(db, f"pto.tcvt ins(%a : {f32}) outs(%b : {bf16})", profile="a5")
    assert plain.operands["rmode"].value == "CAST_RINT"
    spelled = parse_line(db, f"pto.tcvt ins(%a{{rmode = #pto<round_mode ROUND>}} : {f32}) outs(%b : {bf16})",
                         profile="a5")
    assert spelled.operands["rmode"].value == "CAST_ROUND"
    store = f"pto.tstore ins(%t : {_vec()}) outs(%v : !pto.partition_tensor_view<16x16xf32>)"
    assert parse_line(db, store, profile="a2a3").mode == "default"
    assert parse_line(db, store + " {atomicType = #pto<atomic_type atomic_add>}", profile="a2a3").mode == "atomic_add"


# -- every database instruction inside a loop-carrying kernel -----------------------------------------
def _arch(db, profile: str) -> str:
    """A pto.target_arch that names ``profile`` (specs/program.yaml, targets)."""
    return next(arch for arch, prof in program_spec(db).targets.items() if prof == profile)


def _kernel_for(db, op, mode, preset=()):
    """A kernel that loads the example's inputs, runs the instruction in a loop carrying a count, and
    stores its outputs; None when the example's tiles cannot be loaded and stored plainly."""
    ex = mode.example
    tiles = {n: parse_descriptor(d, db.isa) for n, d in ex.tiles.items()}
    args, body, loads, stores, scalars = [], [], [], [], []
    consts = {0, 1, 2}
    # an in-place instruction's destination is its source's storage: both tiles at one address
    shared = {n for o in mode.operands if o.alias_in_place for n in (o.name, o.alias_of)}
    if shared:
        body.append("    %base = arith.constant 0 : i64")
    for o in mode.operands:
        desc = tiles[o.name]
        if isinstance(desc, ScalarDesc):
            if db.isa.dtypes[desc.dtype].kind == "unsigned" and not o.asm_type:
                return None  # arith has signless integers only: an unsigned scalar argument is not in the dialect
            args.append(f"%{o.name}: {o.asm_type or desc.dtype}")  # an offset is an index value
            scalars.append(o.name)
            continue
        if not isinstance(desc, TileDesc):
            if o.is_attr:
                continue
            return None
        if desc.loc != "Vec" or desc.blayout != "RowMajor" or desc.slayout != "NoneBox":
            return None
        ty = format_type(desc, db.isa, "tile_buf")
        if o.role == "tmp":
            body.append(f"    %{o.name} = pto.alloc_tile : {ty}")
            continue
        vr, vc = desc.valid_shape
        consts |= {desc.rows, desc.cols, vr, vc}
        args.append(f"%g_{o.name}: !pto.ptr<{desc.dtype}>")
        body.append(f"    %tv_{o.name} = pto.make_tensor_view %g_{o.name}, shape = [%c{desc.rows}, %c{desc.cols}], "
                    f"strides = [%c{desc.cols}, %c1] : !pto.tensor_view<?x?x{desc.dtype}>")
        body.append(f"    %pv_{o.name} = pto.partition_view %tv_{o.name}, offsets = [%c0, %c0], sizes = [%c{vr}, "
                    f"%c{vc}] : !pto.tensor_view<?x?x{desc.dtype}> -> !pto.partition_tensor_view<{vr}x{vc}x{desc.dtype}>")
        body.append(f"    %{o.name} = pto.alloc_tile {'addr = %base ' if o.name in shared else ''}: {ty}")
        view = f"!pto.partition_tensor_view<{vr}x{vc}x{desc.dtype}>"
        if o.role == "in" or o.name in preset:  # an output the instruction also reads starts from its data
            loads.append(f"      pto.tload ins(%pv_{o.name} : {view}) outs(%{o.name} : {ty})")
        if o.role == "out":
            stores.append(f"      pto.tstore ins(%{o.name} : {ty}) outs(%pv_{o.name} : {view})")
    line = print_form(db, op, mode, "dps", tiles)
    consts_text = "\n".join(f"    %c{c} = arith.constant {c} : index" for c in sorted(consts))
    return f"""module attributes {{pto.target_arch = "{_arch(db, ex.profile)}"}} {{
  func.func @kernel({", ".join(args)}) {{
{consts_text}
{chr(10).join(body)}
    %n = scf.for %i = %c0 to %c2 step %c1 iter_args(%k = %c0) -> (index) {{
{chr(10).join(loads)}
      {line}
      %k1 = arith.addi %k, %c1 : index
      scf.yield %k1 : index
    }}
{chr(10).join(stores)}
    return
  }}
}}
""", tiles


def _loadable(db, profile, tiles, mode) -> bool:
    """tload/tstore accept the example's tiles on its profile (the kernel moves them plainly)."""
    for o in mode.operands:
        desc = tiles[o.name]
        if not isinstance(desc, TileDesc) or o.role not in ("in", "out"):
            continue
        view = parse_descriptor(f"gm, {desc.valid_row}x{desc.valid_col}x{desc.dtype}", db.isa)
        op_name, names = ("tload", {"src": view, "dst": desc}) if o.role == "in" else ("tstore", {"dst": view, "src": desc})
        if not validate(db, op_name, "default", profile, names).ok:
            return False
    return True


def test_every_instruction_runs_inside_a_loop_kernel(db, tmp_path):
    ran, skipped = [], []
    for op in db.ops.values():
        if op.family == "memory-and-data-movement":
            continue  # their own kernels above load and store
        for mode in op.modes:
            built = None if mode.cross_core else _kernel_for(db, op, mode)  # a FIFO side runs with its peer only
            if built is None or not _loadable(db, mode.example.profile, built[1], mode):
                skipped.append(f"{op.name}.{mode.name}")
                continue
            inputs = make_inputs(db, op, mode, built[1], seed=3, pattern="random")
            preset = {o.name for o in mode.operands if o.role == "out" and o.name in inputs}
            text, tiles = _kernel_for(db, op, mode, preset)
            try:  # modes a dps line cannot tell apart (tpow's precision) are not in the dialect's reach
                same = parse_line(db, print_form(db, op, mode, "dps", tiles), profile=mode.example.profile).mode
            except PtospecError:
                same = None
            if same != mode.name:
                skipped.append(f"{op.name}.{mode.name}")
                continue
            program = _program(text, tmp_path, f"{op.name}-{mode.name}.pto")
            checked = check_program(db, program)
            assert not checked.violations, (op.name, mode.name, [f.one_line() for f in checked.violations])
            args = {}
            for o in mode.operands:
                desc = tiles[o.name]
                if isinstance(desc, ScalarDesc):
                    args[o.name] = inputs[o.name].item() if hasattr(inputs[o.name], "item") else inputs[o.name]
                elif isinstance(desc, TileDesc) and o.role in ("in", "out"):
                    dt = numpy_dtype(db, desc.dtype)
                    args[f"g_{o.name}"] = (np.asarray(inputs[o.name], dt) if o.name in inputs
                                           else np.zeros(desc.shape, dt))
            result = run_program(db, program, args)
            expected = execute(db, op.name, mode.name, mode.example.profile, tiles,
                               {n: v for n, v in inputs.items() if n in {o.name for o in mode.operands}})
            for o in mode.operands:
                if o.role != "out":
                    continue
                vr, vc = tiles[o.name].valid_shape
                got = result.outputs[f"g_{o.name}"][:vr, :vc]
                want = expected[o.name][:vr, :vc]
                np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8),
                                              err_msg=f"{op.name} {mode.name}")
            ran.append(f"{op.name}.{mode.name}")
    covered = {name.split(".")[0] for name in ran}
    print(f"{len(covered)} instructions ({len(ran)} modes) ran inside loop kernels; not run: {skipped}")
    assert len(covered) >= 60, (len(covered), skipped)


CORPUS = os.environ.get("PTOSPEC_PTOAS_ROOT")


@pytest.mark.skipif(not CORPUS, reason="set PTOSPEC_PTOAS_ROOT to a checkout of hw-native-sys/PTOAS to read its programs")
def test_reads_the_assemblers_programs(db):
    files = sorted(p for sub in ("test", "docs") for p in Path(CORPUS, sub).rglob("*.pto"))
    assert files
    clean = 0
    for path in files:
        program = read_program(path)  # every file is read without error
        result = check_program(db, program)
        clean += not result.violations and not result.stats.unknown
    assert clean, "no program of the assembler's repository checks clean with only database instructions"


ROWMAX = f"""
module attributes {{pto.target_arch = "a5"}} {{
  func.func @rowmax(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
{_views(1, 16, 16)}
    %tv1 = pto.make_tensor_view %arg1, shape = [%c16, %c1], strides = [%c1, %c16] {{layout = #pto.layout<dn>}} : !pto.tensor_view<?x?xf32>
    %pv1 = pto.partition_view %tv1, offsets = [%c0, %c0], sizes = [%c16, %c1] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x1xf32>
    %src = pto.alloc_tile : {_vec()}
    %dst = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=1, v_row=16, v_col=1, blayout=col_major, slayout=none_box, fractal=512, pad=0>
    pto.tload ins(%pv0 : !pto.partition_tensor_view<16x16xf32>) outs(%src : {_vec()})
    pto.trowmax ins(%src : {_vec()}) outs(%dst : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=1, v_row=16, v_col=1, blayout=col_major, slayout=none_box, fractal=512, pad=0>)
    pto.tstore ins(%dst : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=1, v_row=16, v_col=1, blayout=col_major, slayout=none_box, fractal=512, pad=0>) outs(%pv1 : !pto.partition_tensor_view<16x1xf32>)
    return
  }}
}}
"""


def test_row_reduction_without_tmp_gets_a_scratch_tile(db, tmp_path, inputs):
    """The assembler's samples write trowmax without tmp (recorded in trowmax.yaml); the interpreter supplies it."""
    program = _program(ROWMAX, tmp_path)
    checked = check_program(db, program)
    assert not checked.violations and checked.stats.legal == 3
    result = run_program(db, program, {"arg0": inputs["arg0"], "arg1": np.zeros((16, 1), np.float32)})
    np.testing.assert_array_equal(result.outputs["arg1"][:, 0], inputs["arg0"].max(axis=1))


VIEWS_KERNEL = f"""
!t = {_vec()}
!r = {_vec(r=8, c=32)}
module attributes {{pto.target_arch = "a5"}} {{
  func.func @views(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
{_views(2, 16, 16)}
    %a = pto.alloc_tile : !t
    pto.tload ins(%pv0 : !pto.partition_tensor_view<16x16xf32>) outs(%a : !t)
    %r = pto.treshape %a : !t -> !r
    pto.tadds ins(%r, %one : !r, f32) outs(%r : !r)
    // WINDOW
    pto.tstore ins(%a : !t) outs(%pv1 : !pto.partition_tensor_view<16x16xf32>)
    return
  }}
}}
"""
_W = _vec(c=8)
SUBSET_KERNEL = VIEWS_KERNEL.replace(
    "    // WINDOW",
    f"    %w = pto.subset %a[%c0, %c8] sizes [16, 8] : !t\n"
    f"    pto.tmuls ins(%w, %two : {_W}, f32) outs(%w : {_W})")


def test_reshape_and_subset_alias_their_source(db, tmp_path, inputs):
    """Writes through a treshape result and through a subset window are seen in the tile they view."""
    program = _program(SUBSET_KERNEL, tmp_path)
    assert not check_program(db, program).violations
    result = run_program(db, program, {"arg0": inputs["arg0"], "arg1": np.zeros((16, 16), np.float32)})
    want = inputs["arg0"] + np.float32(1)
    want[:, 8:] *= np.float32(2)
    np.testing.assert_array_equal(result.outputs["arg1"], want)


def test_a_static_valid_shape_outside_its_tile_is_reported_once(db, tmp_path):
    """The type's valid shape is tile.valid-bounds' to check; alloc.valid-bounds judges only valid_row/valid_col
    operands (test_dynamic_valid_shape_is_deferred_then_run)."""
    line = f"valid_row = %vr valid_col = %c16 : {_vec(vr='?', vc='?')}"
    assert line in DYNAMIC
    text = DYNAMIC.replace(line, f": {_vec(vc=17)}")
    alloc = 1 + text.splitlines().index(f"    %src = pto.alloc_tile : {_vec(vc=17)}")
    findings = [f for f in check_program(db, _program(text, tmp_path)).violations if f.pos.line == alloc]
    assert [f.rule for f in findings] == ["tile.valid-bounds"], [f.one_line() for f in findings]


def test_subset_valid_shape_follows_the_assembler(db, tmp_path):
    """A window at an offset equal to its parent's valid columns gets the parent's valid columns again
    (the assembler's inference); a window typed otherwise is a type error."""
    parent = _vec(r=16, c=64, vr=16, vc=32)
    text = f"""
module {{
  func.func @w() {{
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %z = arith.constant 0.0 : f32
    %a = pto.alloc_tile : {parent}
    %w = pto.subset %a[%c0, %c32] sizes [16, 32] : {parent}
    pto.texpands ins(%z : f32) outs(%w : {_vec(r=16, c=32)})
    return
  }}
}}
"""
    checked = check_program(db, _program(text, tmp_path))
    assert not checked.violations, [f.one_line() for f in checked.violations]
    bad = check_program(db, _program(text.replace(f"outs(%w : {_vec(r=16, c=32)})", f"outs(%w : {parent})"),
                                     tmp_path, "bad.pto"))
    assert [f.rule for f in bad.violations] == ["program.type"]


def test_in_place_fill_needs_one_storage(db, tmp_path):
    tile = _vec(vr=4, vc=5).replace("pad=0", "pad=1")
    one = f"""
module {{
  func.func @fill() {{
    %a = pto.alloc_tile : {tile}
    %b = pto.alloc_tile : {tile}
    pto.tfillpad_inplace ins(%a : {tile}) outs(%X : {tile})
    return
  }}
}}
"""
    same = check_program(db, _program(one.replace("%X", "%a"), tmp_path, "same.pto"))
    assert not same.violations
    other = check_program(db, _program(one.replace("%X", "%b"), tmp_path, "other.pto"))
    assert [f.rule for f in other.violations] == ["program.alias"]


FP_AT = """module attributes {{pto.target_arch = "{arch}"}} {{
  func.func @k() {{
    %c0 = arith.constant 0 : index
    %addr = arith.constant {addr} : index
    %acc = pto.alloc_tile addr = %c0 : {acc}
    %fp = pto.alloc_tile addr = %addr : {fp}
    %dst = pto.alloc_tile addr = %c0 : {dst}
    pto.textract_fp ins(%acc, %fp, %c0, %c0 : {acc}, {fp}, index, index) outs(%dst : {dst})
    return
  }}
}}
"""


@pytest.mark.parametrize("arch, addr, broken", [("a5", 32, True), ("a5", 128, False), ("a3", 96, True),
                                                ("a3", 256, False)])
def test_an_fp_tile_starts_on_the_fix_pipes_unit(db, tmp_path, arch, addr, broken):
    """The fix-pipe takes a Scaling tile's address in 128-byte units (address_units of specs/program.yaml): an fp
    tile at a 32-byte address that is not on a unit would have its words read from the unit below."""
    text = FP_AT.format(
        arch=arch, addr=addr,
        acc="!pto.tile_buf<loc=acc, dtype=f32, rows=32, cols=64, v_row=32, v_col=64, blayout=col_major, "
            "slayout=row_major, fractal=1024, pad=0>",
        fp="!pto.tile_buf<loc=scaling, dtype=ui64, rows=1, cols=32, v_row=1, v_col=32, blayout=row_major, "
           "slayout=none_box, fractal=512, pad=0>",
        dst="!pto.tile_buf<loc=mat, dtype=i8, rows=16, cols=32, v_row=16, v_col=32, blayout=col_major, "
            "slayout=row_major, fractal=512, pad=0>")
    findings = [(f.rule, f.message) for f in check_program(db, _program(text, tmp_path)).violations]
    assert findings == ([("tassign.unit", findings[0][1])] if broken else []), findings
    if broken:
        from ptospec.program.spec import program_spec

        spec = program_spec(db)
        profile = "a5" if arch == "a5" else "a2a3"
        unit = db.isa.profiles[profile].constants[spec.address_units["Scaling"]]
        assert f"addr={addr}, align={spec.align}, unit={unit}" in findings[0][1]


def test_a_scalar_declared_as_the_tiles_element_type_converts_as_in_cpp(db, tmp_path):
    """TADDS' C++ parameter is ``typename TileDataSrc::DType scalar``: the assembler passes an i32 constant as it
    is, C++ converts it to float, so the kernel is legal and adds 64.0 (specs' cpp signature, scalar_args)."""
    from ptospec.program.scalar_args import converted_scalar, declared_scalars

    assert declared_scalars(db.ops["tadds"].mode("default")) == {"scalar": "src0"}
    assert declared_scalars(db.ops["tsels"].mode("default")) == {"scalar": "src"}
    assert converted_scalar(db.isa, -2.7, "i8") == -2 and converted_scalar(db.isa, 300, "u8") == 44
    assert converted_scalar(db.isa, 64, "f32") == 64.0
    with pytest.raises(ValueError, match="no i32 value"):
        converted_scalar(db.isa, float("nan"), "i32")
    vec = "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, " \
          "slayout=none_box, fractal=512, pad=0>"
    text = f"""module attributes {{pto.target_arch = "a5"}} {{
  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %s = arith.constant 64 : i32
    %0 = pto.make_tensor_view %arg0, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<16x16xf32>
    %1 = pto.make_tensor_view %arg1, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<16x16xf32>
    %2 = pto.partition_view %0, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<16x16xf32> -> !pto.partition_tensor_view<16x16xf32>
    %3 = pto.partition_view %1, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<16x16xf32> -> !pto.partition_tensor_view<16x16xf32>
    %a = pto.alloc_tile : {vec}
    %b = pto.alloc_tile : {vec}
    pto.tload ins(%2 : !pto.partition_tensor_view<16x16xf32>) outs(%a : {vec})
    pto.tadds ins(%a, %s : {vec}, i32) outs(%b : {vec})
    pto.tstore ins(%b : {vec}) outs(%3 : !pto.partition_tensor_view<16x16xf32>)
    return
  }}
}}
"""
    program = _program(text, tmp_path)
    assert check_program(db, program).violations == []
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    out = run_program(db, program, {"arg0": x, "arg1": np.zeros((16, 16), np.float32)})
    np.testing.assert_array_equal(out.outputs["arg1"], x + 64)
