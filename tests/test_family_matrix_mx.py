"""Scaled (MX) matrix multiply (TMATMUL_MX, TGEMV_MX and their acc/bias overloads): results against a NumPy
model written from the OCP MX definition (E8M0 scale 2^(e - 127) per 32 values of K), the scale tiles'
layouts and shapes, the emulated MX dtypes of the simulator profile, and the generated cases' scale regions
(``shapes`` ``inner/32``)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ptospec.conformance import cases as C
from ptospec.executor import execute
from ptospec.storage import element_offsets
from ptospec.validator import validate

ACC = "acc, {r}x{c}xf32, valid={vr}x{vc}, blayout=col_major, slayout=row_major, fractal=1024"
LEFT = "left, {r}x{c}x{t}, valid={vr}x{vc}, blayout=col_major, slayout=row_major"
RIGHT = "right, {r}x{c}x{t}, valid={vr}x{vc}, slayout=col_major"
SCALE_LEFT = "scale_left, {r}x{c}xe8m0, valid={vr}x{vc}, slayout=row_major, fractal=32"
SCALE_RIGHT = "scale_right, {r}x{c}xe8m0, valid={vr}x{vc}, blayout=col_major, slayout=col_major, fractal=32"
FP8 = {"f8e4m3": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2}


def _mx_tiles(tiles, m, k, n, a="f8e4m3", b="f8e5m2", rows=32, inner=128, cols=32, **extra):
    groups = -(-k // 32)
    return tiles(dst=ACC.format(r=rows, c=cols, vr=m, vc=n),
                 src0=LEFT.format(r=rows, c=inner, t=a, vr=m, vc=k),
                 scale0=SCALE_LEFT.format(r=rows, c=inner // 32, vr=m, vc=groups),
                 src1=RIGHT.format(r=inner, c=cols, t=b, vr=k, vc=n),
                 scale1=SCALE_RIGHT.format(r=inner // 32, c=cols, vr=groups, vc=n), **extra)


def _inputs(rng, a="f8e4m3", b="f8e5m2", rows=32, inner=128, cols=32):
    x = (rng.integers(-40, 41, size=(rows, inner)) / 4).astype(FP8[a])
    y = (rng.integers(-40, 41, size=(inner, cols)) / 4).astype(FP8[b])
    codes0 = rng.integers(123, 132, size=(rows, inner // 32)).astype(np.uint8)  # 2^-4 .. 2^4
    codes1 = rng.integers(123, 132, size=(inner // 32, cols)).astype(np.uint8)
    return x, y, codes0.view(ml_dtypes.float8_e8m0fnu), codes1.view(ml_dtypes.float8_e8m0fnu), codes0, codes1


def _model(x, y, codes0, codes1, m, k, n):
    """The MX product from the raw E8M0 codes: sum over k of a * b * 2^(e0 - 127) * 2^(e1 - 127)."""
    group = np.arange(k) // 32
    left = x[:m, :k].astype(np.float64) * np.exp2(codes0[:m, group].astype(np.float64) - 127)
    right = y[:k, :n].astype(np.float64) * np.exp2(codes1[group, :n].astype(np.float64) - 127)
    return left @ right


@pytest.mark.parametrize("m, k, n", [(16, 64, 16), (5, 37, 7), (32, 128, 32), (1, 100, 9)])
def test_tmatmul_mx_against_numpy(db, tiles, m, k, n):
    rng = np.random.default_rng(11)
    x, y, s0, s1, c0, c1 = _inputs(rng)
    init = np.full((32, 32), -3, dtype=np.float32)
    out = execute(db, "tmatmul_mx", None, "cpu", _mx_tiles(tiles, m, k, n),
                  {"src0": x, "src1": y, "scale0": s0, "scale1": s1, "dst": init})["dst"]
    np.testing.assert_allclose(out[:m, :n], _model(x, y, c0, c1, m, k, n), rtol=1e-6, atol=0)
    assert (out[m:, :] == -3).all() and (out[:, n:] == -3).all()  # outside M x N: untouched


def test_scale_groups_follow_k(db, tiles):
    """One scale per 32 values of K: doubling the scale of group 1 doubles exactly that group's share."""
    x = np.ones((32, 128), dtype=ml_dtypes.float8_e4m3fn)
    y = np.ones((128, 32), dtype=ml_dtypes.float8_e5m2)
    ones0 = np.full((32, 4), 127, np.uint8)
    ones1 = np.full((4, 32), 127, np.uint8)
    twice = ones0.copy()
    twice[:, 1] = 128
    ops = _mx_tiles(tiles, 4, 70, 4)  # groups 0 and 1 are full, group 2 holds 6 values
    run = lambda s0: execute(db, "tmatmul_mx", None, "a5", ops, {  # noqa: E731
        "src0": x, "src1": y, "scale0": s0.view(ml_dtypes.float8_e8m0fnu),
        "scale1": ones1.view(ml_dtypes.float8_e8m0fnu)})["dst"]
    assert (run(ones0)[:4, :4] == 70).all()
    assert (run(twice)[:4, :4] == 70 + 32).all()


def test_acc_and_bias_overloads(db, tiles):
    rng = np.random.default_rng(5)
    x, y, s0, s1, c0, c1 = _inputs(rng)
    want = _model(x, y, c0, c1, 9, 96, 11)
    acc = rng.integers(-50, 50, size=(32, 32)).astype(np.float32)
    ops = _mx_tiles(tiles, 9, 96, 11, acc=ACC.format(r=32, c=32, vr=9, vc=11))
    out = execute(db, "tmatmul_mx_acc", None, "cpu", ops,
                  {"src0": x, "src1": y, "scale0": s0, "scale1": s1, "acc": acc})["dst"]
    np.testing.assert_allclose(out[:9, :11], acc[:9, :11] + want, rtol=1e-6)
    bias = rng.integers(-50, 50, size=(1, 32)).astype(np.float32)
    ops = _mx_tiles(tiles, 9, 96, 11, bias="bias, 1x32xf32, valid=1x11")
    out = execute(db, "tmatmul_mx_bias", None, "a5", ops,
                  {"src0": x, "src1": y, "scale0": s0, "scale1": s1, "bias": bias})["dst"]
    np.testing.assert_allclose(out[:9, :11], want + bias[:, :11], rtol=1e-6)


def test_tgemv_mx_is_one_row(db, tiles):
    ok = validate(db, "tgemv_mx", None, "a5", _mx_tiles(tiles, 1, 64, 16))
    assert ok.ok, ok.violations
    two = validate(db, "tgemv_mx", None, "a5", _mx_tiles(tiles, 2, 64, 16))
    assert "runtime.one-row" in {v.rule for v in two.violations}


@pytest.mark.parametrize("change, rule", [
    ({"src0": LEFT.format(r=32, c=96, t="f8e4m3", vr=5, vc=37)}, "shape.k64"),
    ({"scale0": SCALE_LEFT.format(r=32, c=2, vr=5, vc=2)}, "shape.scales"),
    ({"scale0": SCALE_LEFT.format(r=32, c=4, vr=5, vc=1)}, "runtime.scale-valid"),
    ({"scale1": "scale_right, 4x32xe8m0, valid=2x7, slayout=col_major, fractal=32"}, "layout.scale-right"),
    ({"scale1": "scaling, 4x32xe8m0, valid=2x7"}, "loc.scale1"),
])
def test_mx_rules(db, tiles, change, rule):
    ops = {**_mx_tiles(tiles, 5, 37, 7), **tiles(**change)}
    report = validate(db, "tmatmul_mx", None, "a5", ops)
    assert rule in {v.rule for v in report.violations}


def test_a2a3_has_no_mx_form(db, tiles):
    report = validate(db, "tmatmul_mx", None, "a2a3", _mx_tiles(tiles, 16, 64, 16))
    assert not report.ok


def test_mx_dtypes_are_emulated_on_the_simulator(db):
    """cpu tables may name the MX types (the simulator emulates them) but `any` on cpu does not include them."""
    for name in ("f8e4m3", "f8e5m2", "e8m0"):
        dt = db.isa.dtypes[name]
        assert dt.exists_on("cpu") and dt.exists_on("a5") and not dt.exists_on("a2a3")
        assert dt.profiles == ("a5",)
    assert "e8m0" in db.op("tmatmul_mx").dtypes["cpu"].rows[0].types["S"]


def test_scale_tile_storage_is_zz_and_nn(db, tiles):
    """ScaleLeft: 16 x 2 boxes, row-major inside, boxes row by row; ScaleRight: 2 x 16 boxes, column-major
    inside, boxes column by column (TileLeftScale, TileRightScale)."""
    left = tiles(t=SCALE_LEFT.format(r=32, c=4, vr=32, vc=4))["t"]
    offsets = element_offsets(db.isa, left)
    assert offsets[0, 1] == 1 and offsets[1, 0] == 2 and offsets[0, 2] == 32 and offsets[16, 0] == 64
    right = tiles(t=SCALE_RIGHT.format(r=4, c=32, vr=4, vc=32))["t"]
    offsets = element_offsets(db.isa, right)
    assert offsets[1, 0] == 1 and offsets[0, 1] == 2 and offsets[2, 0] == 32 and offsets[0, 16] == 64


def test_generated_scale_regions_follow_k(db):
    """The generator gives the scale tiles ceil(K/32) valid groups and a physical K/32."""
    op = db.op("tmatmul_mx")
    mode = op.mode("default")
    base = C.with_dtypes(db, mode, C.example_tiles(db, mode), {"C": "f32", "A": "f8e4m3", "B": "f8e4m3", "S": "e8m0"})
    shaped = C.reshape(db, op, mode, "cpu", base, (8, 16), True, C.legal, inner=70)
    assert shaped is not None
    assert shaped["src0"].valid_col == 70 and shaped["src0"].cols % 64 == 0
    assert shaped["scale0"].valid_shape == (8, 3) and shaped["scale0"].cols * 32 == shaped["src0"].cols
    assert shaped["scale1"].valid_shape == (3, 16) and shaped["scale1"].rows * 32 == shaped["src1"].rows


def test_emulated_dtypes_run_only_for_ops_that_name_them(tiles):
    """A backend's per-op dtypes (the simulator's emulated MX types) admit a case of that op only."""
    from ptospec.conformance.backend import Capabilities

    caps = Capabilities(profiles=("cpu",), dtypes=("f32", "f16"), op_dtypes={"tmatmul_mx": frozenset({"e8m0"})})
    scale = tiles(s="scale_left, 16x2xe8m0, slayout=row_major, fractal=32")
    assert caps.unsupported("tmatmul_mx", "default", "cpu", scale) is None
    assert "e8m0 not implemented" in caps.unsupported("tmov", "default", "cpu", scale)


@pytest.mark.parametrize("profile", ["cpu", "a5"])
def test_fp4_e2m1_operands_against_numpy(db, tiles, profile):
    """The packed e2m1 pair (f4e2m1x2, two codes per byte) is read value by value: every one of the 16 codes,
    an odd K and a K that is not a multiple of the 64-value box; a mixed fp8/fp4 pair is rejected."""
    rng = np.random.default_rng(5)
    m, k, n = 7, 45, 9
    x = rng.integers(0, 16, size=(32, 128)).astype(np.uint8).view(ml_dtypes.float4_e2m1fn)
    y = rng.integers(0, 16, size=(128, 32)).astype(np.uint8).view(ml_dtypes.float4_e2m1fn)
    _, _, s0, s1, c0, c1 = _inputs(rng)
    t = _mx_tiles(tiles, m, k, n, a="f4e2m1x2", b="f4e2m1x2")
    assert not validate(db, "tmatmul_mx", None, profile, t).rule_ids
    out = execute(db, "tmatmul_mx", None, profile, t, {"src0": x, "src1": y, "scale0": s0, "scale1": s1})["dst"]
    assert len(np.unique(x[:m, :k].astype(np.float32))) > 8  # the inputs use many codes (including -0 and 6)
    np.testing.assert_allclose(out[:m, :n], _model(x, y, c0, c1, m, k, n), rtol=1e-6, atol=0)
    mixed = _mx_tiles(tiles, m, k, n, a="f4e2m1x2", b="f8e4m3")
    assert validate(db, "tmatmul_mx", None, profile, mixed).rule_ids & {"dtype.b", "dtype.a"}
    assert C.descriptor_dtype(LEFT.format(r=32, c=128, t="f4e2m1x2", vr=m, vc=k)) == "f4e2m1x2"  # report label
