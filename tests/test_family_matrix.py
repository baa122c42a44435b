"""Matrix multiply (TMATMUL, TMATMUL_ACC, TMATMUL_BIAS): results against NumPy's own matmul, the cube's
layout and shape rules, the dotted mnemonics of the assembler's dialect, and the generated cases' M x K /
K x N valid regions (``shapes``)."""

from __future__ import annotations

import numpy as np
import pytest
from cpusim_env import cpusim_unavailable

from ptospec.asm.forms import parse_line, print_form
from ptospec.conformance import cases as C
from ptospec.executor import execute
from ptospec.program.api import check_program, choose_profile, read_program, run_program
from ptospec.program.compare import compare, report_lines
from ptospec.program.cpusim import build_and_run
from ptospec.program.trace import Recorder
from ptospec.validator import validate

ACC = "acc, {r}x{c}x{t}, valid={vr}x{vc}, blayout=col_major, slayout=row_major, fractal=1024"
LEFT = "left, {r}x{c}x{t}, valid={vr}x{vc}, blayout=col_major, slayout=row_major"
RIGHT = "right, {r}x{c}x{t}, valid={vr}x{vc}, slayout=col_major"


def _mm_tiles(tiles, m, k, n, a="f16", c="f32", rows=32, inner=32, cols=32, **extra):
    return tiles(dst=ACC.format(r=rows, c=cols, t=c, vr=m, vc=n),
                 src0=LEFT.format(r=rows, c=inner, t=a, vr=m, vc=k),
                 src1=RIGHT.format(r=inner, c=cols, t=a, vr=k, vc=n), **extra)


NP = {"f16": np.float16, "f32": np.float32, "i8": np.int8, "i32": np.int32}


def _data(rng, shape, dtype):
    dtype = NP[dtype]
    if np.dtype(dtype).kind == "i":
        return rng.integers(-128, 128, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("a, c, m, k, n", [("f16", "f32", 16, 16, 16), ("f16", "f32", 5, 19, 7),
                                            ("i8", "i32", 13, 30, 3), ("f32", "f32", 1, 9, 32)])
def test_tmatmul_against_numpy(db, tiles, a, c, m, k, n):
    rng = np.random.default_rng(7)
    ops = _mm_tiles(tiles, m, k, n, a=a, c=c)
    x, y = _data(rng, (32, 32), a), _data(rng, (32, 32), a)
    init = np.full((32, 32), -3, dtype=NP[c])
    out = execute(db, "tmatmul", None, "a5", ops,
                  {"src0": x, "src1": y, "dst": init})["dst"]
    want = np.matmul(x[:m, :k].astype(np.float64), y[:k, :n].astype(np.float64))
    if c == "i32":
        np.testing.assert_array_equal(out[:m, :n], want.astype(np.int64).astype(np.int32))
    else:
        np.testing.assert_allclose(out[:m, :n], want, rtol=1e-5, atol=1e-5)
    assert (out[m:, :] == -3).all() and (out[:, n:] == -3).all()  # outside M x N: untouched


def test_tmatmul_acc_adds_the_input_accumulator(db, tiles):
    rng = np.random.default_rng(3)
    ops = _mm_tiles(tiles, 9, 20, 11, acc=ACC.format(r=32, c=32, t="f32", vr=9, vc=11))
    x, y = _data(rng, (32, 32), "f16"), _data(rng, (32, 32), "f16")
    acc = rng.standard_normal((32, 32)).astype(np.float32)
    out = execute(db, "tmatmul_acc", None, "cpu", ops, {"src0": x, "src1": y, "acc": acc})["dst"]
    want = acc[:9, :11] + np.matmul(x[:9, :20].astype(np.float32), y[:20, :11].astype(np.float32))
    np.testing.assert_allclose(out[:9, :11], want, rtol=1e-5, atol=1e-5)


def test_tmatmul_bias_adds_the_bias_row_to_every_row(db, tiles):
    rng = np.random.default_rng(5)
    ops = _mm_tiles(tiles, 16, 16, 16, a="i8", c="i32", bias="bias, 1x32xi32, valid=1x16")
    x, y = _data(rng, (32, 32), "i8"), _data(rng, (32, 32), "i8")
    bias = rng.integers(-1000, 1000, size=(1, 32)).astype(np.int32)
    out = execute(db, "tmatmul_bias", None, "a2a3", {**ops, "src0": ops["src0"].with_(blayout="RowMajor")},
                  {"src0": x, "src1": y, "bias": bias})["dst"]
    want = np.matmul(x[:16, :16].astype(np.int32), y[:16, :16].astype(np.int32)) + bias[:, :16]
    np.testing.assert_array_equal(out[:16, :16], want)


def test_f32_products_accumulate_in_k_order_in_f32(db, tiles):
    """The spec's order: each product rounded to f32, then added in k order with a rounding per step."""
    ops = _mm_tiles(tiles, 1, 3, 1, a="f32", rows=16, inner=16, cols=16)
    x = np.zeros((16, 16), np.float32)
    y = np.zeros((16, 16), np.float32)
    x[0, :3] = [1e8, 1.0, -1e8]
    y[:3, 0] = 1.0
    out = execute(db, "tmatmul", None, "cpu", ops, {"src0": x, "src1": y})["dst"]
    assert out[0, 0] == np.float32(0.0)  # 1e8 + 1 rounds back to 1e8 in f32; a pairwise or exact sum gives 1


@pytest.mark.parametrize("profile, left, rule", [
    ("a5", "left, 16x16xf16, slayout=row_major", "layout.left-a5"),  # ZZ: the A2/A3 layout
    ("a2a3", "left, 16x16xf16, slayout=col_major", "layout.left-a2a3"),
    ("cpu", "left, 16x16xf16, slayout=col_major", "layout.left-cpu"),
])
def test_left_layout_per_profile(db, tiles, profile, left, rule):
    ops = tiles(dst=ACC.format(r=16, c=16, t="f32", vr=16, vc=16), src0=left,
                src1=RIGHT.format(r=16, c=16, t="f16", vr=16, vc=16))
    assert rule in {v.rule for v in validate(db, "tmatmul", None, profile, ops).violations}


def test_shapes_must_chain(db, tiles):
    ops = _mm_tiles(tiles, 16, 16, 16)
    bad = {**ops, "src1": ops["src1"].with_(rows=64, valid_row=16)}
    assert "shape.static" in {v.rule for v in validate(db, "tmatmul", None, "a5", bad).violations}
    bad = {**ops, "src1": ops["src1"].with_(valid_row=15)}
    assert "runtime.mkn" in {v.rule for v in validate(db, "tmatmul", None, "a5", bad).violations}


def test_int8_into_f32_is_rejected(db, tiles):
    ops = _mm_tiles(tiles, 16, 32, 16, a="i8", c="f32")
    assert not validate(db, "tmatmul", None, "a5", ops).ok


@pytest.mark.parametrize("op, mnemonic", [("tmatmul", "tmatmul"), ("tmatmul_acc", "tmatmul.acc"),
                                          ("tmatmul_bias", "tmatmul.bias")])
def test_dotted_mnemonics_round_trip(db, op, mnemonic):
    spec = db.op(op)
    mode = spec.modes[0]
    tiles = C.example_tiles(db, mode)
    for form in ("sync", "ssa", "dps"):
        line = print_form(db, spec, mode, form, tiles)
        assert f"{mnemonic} " in line
        parsed = parse_line(db, line)
        assert parsed.op == op
        assert parsed.operands == tiles


def test_generated_cases_cover_k_apart_from_m_and_n(db):
    cases = C.positive_cases(db, db.op("tmatmul"))
    shapes = {(c.parsed(db)["src0"].valid_row, c.parsed(db)["src0"].valid_col, c.parsed(db)["src1"].valid_col)
              for c in cases}
    assert any(m != k != n for m, k, n in shapes)
    assert any(k % 16 for _m, k, _n in shapes)  # a K that is no multiple of the fractal size
    for c in cases:
        t = c.parsed(db)
        assert t["src0"].valid_col == t["src1"].valid_row and t["src0"].cols == t["src1"].rows


def test_a_mnemonic_names_one_instruction(tmp_path):
    import shutil
    from pathlib import Path

    from ptospec.loader import DatabaseErrors, load_database

    specs = tmp_path / "specs"
    shutil.copytree(Path(__file__).resolve().parents[1] / "specs", specs)
    acc = specs / "ops" / "tmatmul_acc.yaml"
    acc.write_text(acc.read_text().replace("mnemonic: tmatmul.acc", "mnemonic: tmatmul.bias"))
    with pytest.raises(DatabaseErrors) as err:
        load_database(specs)
    assert any(e.rule == "op.mnemonic" for e in err.value.errors)


def _buf(loc, dtype, rows, cols, blayout, slayout, fractal=512, valid=None):
    vr, vc = valid or (rows, cols)
    return (f"!pto.tile_buf<loc={loc}, dtype={dtype}, rows={rows}, cols={cols}, v_row={vr}, v_col={vc}, "
            f"blayout={blayout}, slayout={slayout}, fractal={fractal}, pad=0>")


M, K, N = 16, 32, 16
TV16, TV32 = "!pto.tensor_view<?x?xf16>", "!pto.tensor_view<?x?xf32>"


def matmul_kernel_text(vm: int, vk: int, vn: int) -> str:
    """load -> move -> matmul -> move -> store over M x K and K x N tiles whose valid parts are vm x vk and
    vk x vn, as the assembler's samples write it (B comes column-major, DN)."""
    mat_a = _buf("mat", "f16", M, K, "col_major", "row_major", valid=(vm, vk))
    mat_b = _buf("mat", "f16", K, N, "row_major", "col_major", valid=(vk, vn))
    left = _buf("left", "f16", M, K, "col_major", "row_major", valid=(vm, vk))
    right = _buf("right", "f16", K, N, "row_major", "col_major", valid=(vk, vn))
    acc = _buf("acc", "f32", M, N, "col_major", "row_major", 1024, valid=(vm, vn))
    vec = _buf("vec", "f32", M, N, "row_major", "none_box", valid=(vm, vn))
    pa, pb, pc = (f"!pto.partition_tensor_view<{vm}x{vk}xf16>", f"!pto.partition_tensor_view<{vk}x{vn}xf16>",
                  f"!pto.partition_tensor_view<{vm}x{vn}xf32>")
    return f"""
module attributes {{pto.target_arch = "a5"}} {{
  func.func @matmul(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cm = arith.constant {M} : index
    %ck = arith.constant {K} : index
    %cn = arith.constant {N} : index
    %vm = arith.constant {vm} : index
    %vk = arith.constant {vk} : index
    %vn = arith.constant {vn} : index
    %ta = pto.make_tensor_view %arg0, shape = [%cm, %ck], strides = [%ck, %c1] : {TV16}
    %tb = pto.make_tensor_view %arg1, shape = [%ck, %cn], strides = [%c1, %ck] {{layout = #pto.layout<dn>}} : {TV16}
    %tc = pto.make_tensor_view %arg2, shape = [%cm, %cn], strides = [%cn, %c1] : {TV32}
    %pa = pto.partition_view %ta, offsets = [%c0, %c0], sizes = [%vm, %vk] : {TV16} -> {pa}
    %pb = pto.partition_view %tb, offsets = [%c0, %c0], sizes = [%vk, %vn] : {TV16} -> {pb}
    %pc = pto.partition_view %tc, offsets = [%c0, %c0], sizes = [%vm, %vn] : {TV32} -> {pc}
    %ma = pto.alloc_tile : {mat_a}
    %mb = pto.alloc_tile : {mat_b}
    %l = pto.alloc_tile : {left}
    %r = pto.alloc_tile : {right}
    %acc = pto.alloc_tile : {acc}
    %v = pto.alloc_tile : {vec}
    pto.tload ins(%pa : {pa}) outs(%ma : {mat_a})
    pto.tload ins(%pb : {pb}) outs(%mb : {mat_b})
    pto.tmov ins(%ma : {mat_a}) outs(%l : {left})
    pto.tmov ins(%mb : {mat_b}) outs(%r : {right})
    pto.tmatmul ins(%l, %r : {left}, {right}) outs(%acc : {acc})
    pto.tmov ins(%acc : {acc}) outs(%v : {vec})
    pto.tstore ins(%v : {vec}) outs(%pc : {pc})
    return
  }}
}}
"""


SHAPES = [(M, K, N), (5, 20, 7)]  # whole tiles; valid parts that are no multiple of the box sizes


@pytest.fixture(params=SHAPES, ids=lambda s: "x".join(map(str, s)))
def matmul_kernel(request, tmp_path):
    vm, vk, vn = request.param
    path = tmp_path / "matmul.pto"
    path.write_text(matmul_kernel_text(vm, vk, vn))
    rng = np.random.default_rng(11)
    a = (rng.integers(-8, 9, (M, K)) * 0.25).astype(np.float16)
    b = (rng.integers(-8, 9, (K, N)) * 0.25).astype(np.float16)
    args = {"arg0": a, "arg1": np.ascontiguousarray(b.T), "arg2": np.zeros((M, N), np.float32)}  # DN: B^T's rows
    want = np.zeros((M, N), np.float32)
    want[:vm, :vn] = a[:vm, :vk].astype(np.float32) @ b[:vk, :vn].astype(np.float32)
    return read_program(path), args, want


def test_load_move_matmul_move_store_kernel_by_the_reference(db, matmul_kernel):
    program, args, want = matmul_kernel
    assert not check_program(db, program).violations
    out = run_program(db, program, args).outputs["arg2"]
    np.testing.assert_array_equal(out, want)


WHY_NOT = cpusim_unavailable("run the matmul kernel on the simulator")


@pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")
def test_load_move_matmul_move_store_kernel_on_the_simulator(db, matmul_kernel, tmp_path):
    program, args, want = matmul_kernel
    rec = Recorder(choose_profile(db, program, None))
    result = run_program(db, program, args, tracer=rec)
    sim = build_and_run(db, rec.trace, None, str(tmp_path / "cache"))
    assert sim.stopped is None, sim.log
    c = compare(db, rec.trace, sim)
    assert c.same, report_lines(c)
    np.testing.assert_array_equal(sim.buffers[-1].reshape(M, N), want)
    np.testing.assert_array_equal(result.outputs["arg2"], want)


def acc_store_kernel_text(vm: int, vk: int, vn: int) -> str:
    """load -> move -> matmul -> store straight from the accumulator, converting f32 to f16 through ReLU
    (TSTORE's acc mode: the fix-pipe path, no Vec tile)."""
    text = matmul_kernel_text(vm, vk, vn)
    acc = _buf("acc", "f32", M, N, "col_major", "row_major", 1024, valid=(vm, vn))
    vec = _buf("vec", "f32", M, N, "row_major", "none_box", valid=(vm, vn))
    pc32, pc16 = f"!pto.partition_tensor_view<{vm}x{vn}xf32>", f"!pto.partition_tensor_view<{vm}x{vn}xf16>"
    text = text.replace(f"    %v = pto.alloc_tile : {vec}\n", "")
    text = text.replace(f"    pto.tmov ins(%acc : {acc}) outs(%v : {vec})\n", "")
    relu = "{reluPreMode = #pto.relu_pre_mode<NormalRelu>}"
    text = text.replace(f"    pto.tstore ins(%v : {vec}) outs(%pc : {pc32})",
                        f"    pto.tstore ins(%acc : {acc}) outs(%pc : {pc16}) {relu}")
    return (text.replace("%arg2: !pto.ptr<f32>", "%arg2: !pto.ptr<f16>").replace(f"{TV32}", f"{TV16}")
            .replace(pc32, pc16))


@pytest.fixture(params=SHAPES, ids=lambda s: "x".join(map(str, s)))
def acc_store_kernel(request, tmp_path):
    vm, vk, vn = request.param
    path = tmp_path / "acc_store.pto"
    path.write_text(acc_store_kernel_text(vm, vk, vn))
    rng = np.random.default_rng(12)
    a = (rng.integers(-8, 9, (M, K)) * 0.25).astype(np.float16)
    b = (rng.integers(-8, 9, (K, N)) * 0.25).astype(np.float16)
    args = {"arg0": a, "arg1": np.ascontiguousarray(b.T), "arg2": np.zeros((M, N), np.float16)}
    want = np.zeros((M, N), np.float16)
    want[:vm, :vn] = np.maximum(a[:vm, :vk].astype(np.float32) @ b[:vk, :vn].astype(np.float32), 0)
    return read_program(path), args, want


def test_matmul_kernel_storing_the_accumulator_by_the_reference(db, acc_store_kernel):
    program, args, want = acc_store_kernel
    assert not check_program(db, program).violations
    out = run_program(db, program, args).outputs["arg2"]
    np.testing.assert_array_equal(out, want)


@pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")
def test_matmul_kernel_storing_the_accumulator_on_the_simulator(db, acc_store_kernel, tmp_path):
    program, args, want = acc_store_kernel
    rec = Recorder(choose_profile(db, program, None))
    result = run_program(db, program, args, tracer=rec)
    assert [s.op for s in rec.trace.instructions][-2:] == ["tmatmul", "tstore"]
    sim = build_and_run(db, rec.trace, None, str(tmp_path / "cache"))
    assert sim.stopped is None, sim.log
    c = compare(db, rec.trace, sim)
    assert c.same, report_lines(c)
    np.testing.assert_array_equal(sim.buffers[-1].reshape(M, N), want)
    np.testing.assert_array_equal(result.outputs["arg2"], want)


def test_textract_takes_a_box_aligned_window_of_a_mat_tile(db, tiles):
    ops = tiles(src="mat, 32x64xf16, blayout=col_major, slayout=row_major", indexRow="u16", indexCol="u16",
                dst="left, 16x32xf16, blayout=col_major, slayout=row_major")
    src = np.arange(32 * 64, dtype=np.float32).reshape(32, 64).astype(np.float16)
    report = validate(db, "textract", None, "a5", ops)
    assert report.ok and report.mode == "mat_to_cube"
    out = execute(db, "textract", None, "a5", ops, {"src": src, "indexRow": 16, "indexCol": 32})["dst"]
    np.testing.assert_array_equal(out, src[16:32, 32:64])


def test_tmov_moves_an_accumulator_out_converting_to_the_destination_type(db, tiles):
    ops = tiles(src=ACC.format(r=16, c=16, t="f32", vr=16, vc=16), dst="mat, 16x16xf16, blayout=col_major, "
                "slayout=row_major", reluMode="NoRelu")
    acc = np.linspace(-70000, 70000, 256, dtype=np.float32).reshape(16, 16)
    report = validate(db, "tmov", None, "a2a3", ops)
    assert report.ok and report.mode == "acc_to_out"
    out = execute(db, "tmov", None, "a2a3", ops, {"src": acc})["dst"]
    with np.errstate(over="ignore"):
        want = acc.astype(np.float16)  # to nearest even; beyond 65504: infinity
    np.testing.assert_array_equal(out, want)
    to_vec = {**ops, "dst": tiles(d="vec, 16x16xf32")["d"]}
    assert "loc.acc-destination-a2a3" in validate(db, "tmov", None, "a2a3", to_vec).rule_ids or \
        not validate(db, "tmov", None, "a2a3", to_vec).ok
    assert validate(db, "tmov", None, "a5", to_vec).ok


@pytest.mark.parametrize("op", ["tgemv", "tgemv_acc", "tgemv_bias"])
def test_tgemv_forms_against_numpy(db, tiles, op):
    rng = np.random.default_rng(2)
    extra = {"acc": "acc, 1x32xf32, valid=1x21, blayout=col_major, slayout=row_major, fractal=1024"} \
        if op == "tgemv_acc" else {"bias": "bias, 1x32xf32, valid=1x21"} if op == "tgemv_bias" else {}
    ops = tiles(dst="acc, 1x32xf32, valid=1x21, blayout=col_major, slayout=row_major, fractal=1024",
                src0="left, 1x48xbf16, valid=1x37, blayout=col_major, slayout=row_major",
                src1="right, 48x32xbf16, valid=37x21, slayout=col_major", **extra)
    import ml_dtypes
    x = rng.standard_normal((1, 48)).astype(ml_dtypes.bfloat16)
    y = rng.standard_normal((48, 32)).astype(ml_dtypes.bfloat16)
    add = rng.standard_normal((1, 32)).astype(np.float32)
    data = {"src0": x, "src1": y, **({next(iter(extra)): add} if extra else {})}
    out = execute(db, op, None, "a5", ops, data)["dst"]
    want = x[:, :37].astype(np.float32) @ y[:37, :21].astype(np.float32) + (add[:, :21] if extra else 0)
    np.testing.assert_allclose(out[:, :21], want, rtol=1e-5, atol=1e-5)
    more_rows = {**ops, "src0": ops["src0"].with_(rows=16, valid_row=2), "dst": ops["dst"].with_(rows=16, valid_row=2)}
    if extra:
        more_rows = {**more_rows, **({"acc": ops["acc"].with_(rows=16, valid_row=2)} if op == "tgemv_acc" else {})}
    assert "runtime.one-row" in validate(db, op, None, "a5", more_rows).rule_ids


def test_tmov_relu_on_the_way_out_of_the_accumulator(db, tiles):
    ops = tiles(src=ACC.format(r=16, c=16, t="f32", vr=16, vc=16), dst="vec, 16x16xf32", reluMode="NormalRelu")
    acc = np.linspace(-5, 5, 256, dtype=np.float32).reshape(16, 16)
    out = execute(db, "tmov", None, "a5", ops, {"src": acc})["dst"]
    np.testing.assert_array_equal(out, np.where(acc < 0, np.float32(0), acc))
    line = print_form(db, db.op("tmov"), db.op("tmov").mode("acc_to_out"), "dps", ops)
    assert "relu_pre_mode" in line or "reluPreMode" in line
    assert parse_line(db, line, profile="a5").operands["reluMode"].value == "NormalRelu"
