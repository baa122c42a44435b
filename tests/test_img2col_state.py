"""TIMG2COL and the configuration state it reads: the executor against a NumPy im2col written here, state
registers as explicit inputs of a single-instruction run, what SETFMATRIX / SET_IMG2COL_PADDING / SET_IMG2COL_RPT
write (``configure``), the case generator's state, and the program interpreter keeping the state between
statements."""

from __future__ import annotations

import numpy as np
import pytest
from cpusim_env import cpusim_unavailable

from ptospec.cli import main
from ptospec.conformance import cases as C
from ptospec.conformance.data import make_inputs
from ptospec.errors import InvocationError, PtospecError
from ptospec.executor import configure, execute
from ptospec.program.api import check_program, read_program, run_program
from ptospec.validator import validate

GEOMETRY = dict(fmapN=1, fmapH=3, fmapW=4, filterH=2, filterW=2, strideH=1, strideW=1, dilationH=1, dilationW=1,
                padLeft=1, padRight=0, padTop=1, padBottom=0)


def im2col(fmap: np.ndarray, g: dict, pad, pos_m: int, pos_k: int, rows: int, cols: int) -> np.ndarray:
    """Written from the definition: output pixel m, column k = (c1, window position, c0)."""
    n_img, c1s, h, w, c0s = fmap.shape
    oh = (h + g["padTop"] + g["padBottom"] - g["dilationH"] * (g["filterH"] - 1) - 1) // g["strideH"] + 1
    ow = (w + g["padLeft"] + g["padRight"] - g["dilationW"] * (g["filterW"] - 1) - 1) // g["strideW"] + 1
    out = np.empty((rows, cols), fmap.dtype)
    for r in range(rows):
        m = pos_m + r
        n, rem = divmod(m, oh * ow)
        y, x = divmod(rem, ow)
        for c in range(cols):
            k = pos_k + c
            c1, within = divmod(k, c0s * g["filterH"] * g["filterW"])
            window, c0 = divmod(within, c0s)
            ky, kx = divmod(window, g["filterW"])
            iy = y * g["strideH"] + ky * g["dilationH"] - g["padTop"]
            ix = x * g["strideW"] + kx * g["dilationW"] - g["padLeft"]
            inside = n < n_img and c1 < c1s and 0 <= iy < h and 0 <= ix < w
            out[r, c] = fmap[n, c1, iy, ix, c0] if inside else pad
    return out


def _operands(tiles, dst: str, src: str, dtype: str, **geometry):
    g = {**GEOMETRY, **geometry}
    return tiles(dst=dst, src=src, padValue=dtype, posM="u16", posK="u16", **{k: str(v) for k, v in g.items()}), g


def _registers(db, tiles, g: dict, pad, dtype: str, src: str) -> dict:
    """The state SETFMATRIX and SET_IMG2COL_PADDING write for this ConvTile."""
    keys = ("fmapH", "fmapW", "padLeft", "padRight", "padTop", "padBottom")
    fm = tiles(src=src, **{k: str(g[k]) for k in keys})
    state = configure(db, "setfmatrix", None, "a5", fm, {})
    state.update(configure(db, "set_img2col_padding", None, "a5", tiles(src=src, padValue=dtype), {"padValue": pad}))
    return state


@pytest.mark.parametrize("profile, dst, pos", [
    ("cpu", "left, 16x32xf16, blayout=col_major, slayout=row_major, valid=12x32", (0, 0)),
    ("cpu", "left, 16x32xf16, blayout=col_major, slayout=row_major, valid=9x20", (3, 17)),
    ("a5", "left, 16x32xf16, blayout=col_major, slayout=row_major, valid=12x32", (2, 5)),
    ("a2a3", "left, 16x32xf16, slayout=row_major, valid=16x32", (0, 40)),
])
def test_timg2col_matches_numpy(db, tiles, profile, dst, pos):
    src = "mat, 24x16xf16"  # two channel groups of 3 x 4 pixels, C0 = 16
    ops, g = _operands(tiles, dst, src, "f16")
    fmap = (np.arange(24 * 16) % 251).astype(np.float16).reshape(24, 16)
    data = {"src": fmap, "padValue": -1.0, "posM": pos[0], "posK": pos[1]}
    if profile != "cpu":
        data.update(_registers(db, tiles, g, -1.0, "f16", src))
    out = execute(db, "timg2col", None, profile, ops, data)["dst"]
    vr, vc = ops["dst"].valid_shape
    want = im2col(fmap.reshape(1, 2, 3, 4, 16), g, np.float16(-1), pos[0], pos[1], vr, vc)
    np.testing.assert_array_equal(out[:vr, :vc], want)
    assert not out[vr:, :].any() and not out[:, vc:].any()  # outside the valid region: untouched


def test_timg2col_strides_dilation_and_batches_on_the_simulator(db, tiles):
    ops, g = _operands(tiles, "left, 32x32xf32, blayout=col_major, slayout=row_major, valid=30x29",
                       "mat, 64x8xf32", "f32", fmapN=2, fmapH=4, fmapW=4, filterH=3, filterW=2, strideH=2,
                       strideW=1, dilationH=1, dilationW=2, padLeft=1, padRight=1, padTop=0, padBottom=1)
    fmap = np.random.default_rng(3).standard_normal((64, 8)).astype(np.float32)
    out = execute(db, "timg2col", None, "cpu", ops, {"src": fmap, "padValue": 0.5, "posM": 1, "posK": 3})["dst"]
    want = im2col(fmap.reshape(2, 2, 4, 4, 8), g, np.float32(0.5), 1, 3, 30, 29)
    np.testing.assert_array_equal(out[:30, :29], want)


def test_the_npus_read_the_registers_not_the_conv_tile(db, tiles):
    """Registers set from another ConvTile (a feature map of 2 x 8 read as 4 x 4, another pad value) change
    the NPU result; the simulator's does not read them (and needs none)."""
    src = "mat, 16x16xf16"
    ops, g = _operands(tiles, "left, 16x32xf16, blayout=col_major, slayout=row_major, valid=16x32", src, "f16",
                       fmapH=4, fmapW=4, padLeft=0, padTop=0)
    fmap = (np.arange(256) % 97).astype(np.float16).reshape(16, 16)
    data = {"src": fmap, "padValue": 7.0, "posM": 0, "posK": 0}
    other = _registers(db, tiles, {**g, "fmapH": 2, "fmapW": 8}, 3.0, "f16", src)
    npu = execute(db, "timg2col", None, "a5", ops, {**data, **other})["dst"]
    want = im2col(fmap.reshape(1, 1, 2, 8, 16), {**g, "fmapH": 2, "fmapW": 8}, np.float16(3), 0, 0, 16, 32)
    np.testing.assert_array_equal(npu, want)
    sim = execute(db, "timg2col", None, "cpu", ops, data)["dst"]
    np.testing.assert_array_equal(sim, im2col(fmap.reshape(1, 1, 4, 4, 16), g, np.float16(7), 0, 0, 16, 32))


def test_state_is_an_input_with_one_clear_error(db, tiles):
    src = "mat, 24x16xf16"
    ops, _ = _operands(tiles, "left, 16x32xf16, blayout=col_major, slayout=row_major", src, "f16")
    data = {"src": np.zeros((24, 16), np.float16), "padValue": 0.0, "posM": 0, "posK": 0}
    with pytest.raises(PtospecError) as err:
        execute(db, "timg2col", None, "a5", ops, data)  # no registers
    assert err.value.rule == "exec.state-unset" and "fmatrix" in str(err.value)
    with pytest.raises(InvocationError) as err:
        execute(db, "timg2col", None, "a5", ops, {**data, "fmatrix": {"fmap_h": 3}, "img2col_padding": {"value": 0}})
    assert err.value.rule == "run.state"
    with pytest.raises(InvocationError) as err:
        execute(db, "timg2col", None, "cpu", ops, {**data, "img2col_rpt": {}})  # a register it does not read
    assert err.value.rule == "run.unknown-input"


def test_configuration_instructions_write_their_registers(db, tiles):
    src = "mat, 24x16xf16"
    fm = tiles(src=src, fmapH="3", fmapW="4", padLeft="1", padRight="2", padTop="0", padBottom="3")
    assert configure(db, "setfmatrix", None, "a2a3", fm, {}) == {"fmatrix": dict(
        fmap_h=3, fmap_w=4, pad_left=1, pad_right=2, pad_top=0, pad_bottom=3)}
    rpt = tiles(src=src, repeatStride="5", repeatTime="2", repeatMode="1")
    assert configure(db, "set_img2col_rpt", None, "cpu", rpt, {}) == {"img2col_rpt": dict(
        repeat_stride=5, repeat_time=2, repeat_mode=1)}
    out = execute(db, "setfmatrix", None, "a2a3", fm, {"src": np.ones((24, 16), np.float16)})
    assert out == {}  # no tile changes
    assert configure(db, "tadd", None, "cpu", tiles(dst="vec, 16x16xf32", src0="vec, 16x16xf32",
                                                     src1="vec, 16x16xf32"), {}) == {}


def test_generated_cases_carry_the_state(db):
    op = db.op("timg2col")
    positives = C.positive_cases(db, op)
    assert {c.profile for c in positives} == {"cpu", "a2a3", "a5"}
    for case in positives:
        tiles = case.parsed(db)
        mode = op.mode(case.mode)
        data = make_inputs(db, op, mode, tiles, case.seed, case.pattern)
        assert data["fmatrix"]["fmap_h"] == tiles["fmapH"].value
        assert data["fmatrix"]["pad_left"] == tiles["padLeft"].value
        assert data["img2col_padding"]["value"] == data["padValue"]
        execute(db, "timg2col", case.mode, case.profile, tiles, data)


MAT = "!pto.tile_buf<mat, 16x16xf16, valid=16x16>"
LEFT = "!pto.tile_buf<left, 16x32xf16, valid=16x32, blayout=col_major, slayout=row_major>"
CONV = ("fmapN = 1 : u16, fmapH = 4 : u16, fmapW = 4 : u16, filterH = 2 : u16, filterW = 2 : u16, strideH = 1 : u8, "
        "strideW = 1 : u8, dilationH = 1 : u8, dilationW = 1 : u8, padLeft = 1 : u8, padRight = 0 : u8, "
        "padTop = 1 : u8, padBottom = 0 : u8")
VIEW = "!pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<16x16xf16>"
FMATRIX = "fmapH = 4 : u16, fmapW = 4 : u16, padLeft = 1 : u8, padRight = 0 : u8, padTop = 1 : u8, padBottom = 0 : u8"


def _kernel(tmp_path, configure: bool, pad_after: bool = False):
    """Load a 4 x 4 feature map of 16 channels into L1, set the img2col registers, then TIMG2COL into L0A."""
    setters = [f"pto.setfmatrix ins(%fm {{{FMATRIX}}} : {MAT})",
               f"pto.set_img2col_padding ins(%fm, %pad : {MAT}, f16)"] if configure else []
    late = [f"pto.set_img2col_padding ins(%fm, %pad2 : {MAT}, f16)"] if pad_after else []
    body = "\n    ".join([*setters, f"pto.timg2col ins(%fm, %pad, %c0, %c3 {{{CONV}}} : {MAT}, f16, index, index) "
                                   f"outs(%l : {LEFT})", *late])
    text = f"""module attributes {{pto.target_arch = "a5"}} {{
  func.func @k(%a: !pto.ptr<f16>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c16 = arith.constant 16 : index
    %pad = arith.constant -1.0 : f16
    %pad2 = arith.constant 5.0 : f16
    %tv = pto.make_tensor_view %a, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf16>
    %pv = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c16, %c16] : {VIEW}
    %fm = pto.alloc_tile : {MAT}
    %l = pto.alloc_tile : {LEFT}
    pto.tload ins(%pv : !pto.partition_tensor_view<16x16xf16>) outs(%fm : {MAT})
    {body}
    return
  }}
}}
"""
    path = tmp_path / "img2col.pto"
    path.write_text(text)
    return read_program(path)


class _Capture:
    """A tracer keeping TIMG2COL's destination after it ran."""

    def __init__(self):
        self.left = None

    def begin(self, buffers): ...

    def block(self, index): ...

    def alloc(self, op, tile): ...

    def synchronisation(self, op, name="", values=None): ...

    def instruction(self, step):
        if step.name == "timg2col":
            self.left = step.tiles["dst"].elements().copy()


@pytest.mark.parametrize("profile", ["a5", "cpu"])
def test_a_program_keeps_the_registers_between_statements(db, tmp_path, profile):
    program = _kernel(tmp_path, configure=True, pad_after=True)
    assert not check_program(db, program, profile=profile).violations
    fmap = (np.arange(256) % 89).astype(np.float16).reshape(16, 16)
    capture = _Capture()
    run_program(db, program, {"a": fmap.reshape(-1)}, profile=profile, tracer=capture)
    want = im2col(fmap.reshape(1, 1, 4, 4, 16), {**GEOMETRY, "fmapH": 4, "fmapW": 4}, np.float16(-1), 0, 3, 16, 32)
    np.testing.assert_array_equal(capture.left, want)  # the later SET_IMG2COL_PADDING changes nothing before it


def test_a_program_without_setfmatrix_fails_on_the_npu_only(db, tmp_path):
    program = _kernel(tmp_path, configure=False)
    found = check_program(db, program, profile="a5").violations
    assert [f.rule for f in found] == ["program.state-unset"]
    assert "fmatrix, img2col_padding" in found[0].message and "SETFMATRIX" in found[0].message
    fmap = np.ones(256, np.float16)
    with pytest.raises(PtospecError) as err:
        run_program(db, program, {"a": fmap}, profile="a5")
    assert err.value.rule == "program.state-unset"
    assert not check_program(db, program, profile="cpu").violations  # the simulator reads the ConvTile's fields
    run_program(db, program, {"a": fmap}, profile="cpu")


WHY_NOT = cpusim_unavailable("replay the img2col kernel on the simulator")


@pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")
@pytest.mark.parametrize("profile", ["a5", "cpu"])
def test_the_kernel_agrees_with_the_simulator(tmp_path, capsys, profile):
    """The replay builds TIMG2COL's ConvTile from the statement's operands and runs the set instructions."""
    _kernel(tmp_path, configure=True, pad_after=True)
    np.save(tmp_path / "a.npy", (np.arange(256) % 89).astype(np.float16))
    code = main(["compare-program", str(tmp_path / "img2col.pto"), "--profile", profile,
                 "--arg", f"a={tmp_path / 'a.npy'}", "--cache-dir", str(tmp_path / "cache")])
    out = capsys.readouterr().out
    assert code == 0 and "same: 5 step(s)" in out and "0 differing" in out, out


def test_a_rule_on_the_registers_is_checked_where_they_are_known(db, tiles):
    src = "mat, 16x16xf16"
    ops, g = _operands(tiles, "left, 16x32xf16, blayout=col_major, slayout=row_major", src, "f16",
                       fmapH=4, fmapW=4, padLeft=0, padTop=0)
    lone = validate(db, "timg2col", None, "a5", ops)
    assert lone.ok and "fmatrix.inside" in lone.unchecked
    too_big = _registers(db, tiles, {**g, "fmapH": 4, "fmapW": 8}, 0.0, "f16", "mat, 32x16xf16")
    assert "fmatrix.inside" in validate(db, "timg2col", None, "a5", ops, state=too_big).rule_ids
    data = {"src": np.zeros((16, 16), np.float16), "padValue": 0.0, "posM": 0, "posK": 0, **too_big}
    with pytest.raises(PtospecError) as err:
        execute(db, "timg2col", None, "a5", ops, data)
    assert err.value.rule == "fmatrix.inside"
    assert not validate(db, "timg2col", None, "cpu", ops).unchecked  # an NPU rule only


def test_ptospec_run_takes_and_saves_registers(tmp_path, capsys):
    """A configuration instruction saves what it sets as REGISTER.FIELD keys; TIMG2COL takes them back with
    --inputs, and the other register with --state."""
    fmap = (np.arange(256) % 89).astype(np.float16).reshape(16, 16)
    np.save(tmp_path / "src.npy", fmap)
    geometry = dict(fmapH=4, fmapW=4, padLeft=1, padRight=0, padTop=1, padBottom=0)
    tiles = [a for k, v in geometry.items() for a in ("--tile", f"{k}={v}")]
    assert main(["run", "setfmatrix", "-p", "a5", "--tile", "src=mat,16x16xf16", *tiles,
                 "--input", f"src={tmp_path / 'src.npy'}", "-o", str(tmp_path / "fm.npz")]) == 0
    assert "sets fmatrix: fmap_h=4, fmap_w=4, pad_left=1" in capsys.readouterr().out
    conv = [a for k, v in {**GEOMETRY, **geometry}.items() for a in ("--tile", f"{k}={v}")]
    common = ["run", "timg2col", "-p", "a5", "--tile", "src=mat,16x16xf16", "--tile", "padValue=f16",
              "--tile", "dst=left,16x32xf16,blayout=col_major,slayout=row_major", "--tile", "posM=u16",
              "--tile", "posK=u16", *conv, "--scalar", "padValue=-1", "--scalar", "posM=0", "--scalar", "posK=0"]
    inputs = np.load(tmp_path / "fm.npz")
    np.savez(tmp_path / "in.npz", src=fmap, **{k: inputs[k] for k in inputs.files if k.startswith("fmatrix.")})
    assert main([*common, "--inputs", str(tmp_path / "in.npz"), "--state", "img2col_padding.value=-1",
                 "-o", str(tmp_path / "out.npz")]) == 0
    want = im2col(fmap.reshape(1, 1, 4, 4, 16), {**GEOMETRY, **geometry}, np.float16(-1), 0, 0, 16, 32)
    np.testing.assert_array_equal(np.load(tmp_path / "out.npz")["dst"], want)
    assert main([*common, "--inputs", str(tmp_path / "in.npz"), "-o", str(tmp_path / "out.npz")]) == 2  # bad input
    err = capsys.readouterr().err
    assert "exec.state-unset" in err and "img2col_padding" in err
