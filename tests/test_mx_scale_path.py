"""The MX scale path end to end: E8M0 scales loaded by TLOAD from global memory in their MX layouts (specs/isa.yaml
``global_layouts``: MX_A_ZZ, MX_B_NN, MX_A_DN, MX_B_DN, MX_A_ND, MX_B_ND), moved to ScaleLeft/ScaleRight by TMOV and
consumed by TMATMUL_MX, in the kernels tests/programs/mx_matmul_*.pto.

The global buffers are laid out here the way upstream's tmatmul_mx test data are (gen_data.py of
tests/cpu/st/testcase/tmatmul_mx: reshape and transpose of the logical scale matrix), independently of the spec's
``tile_map``; the expected product is computed from the logical matrices as the spec defines it (each scaled product
rounded to f32, added in k order).
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from cpusim_env import cpusim_unavailable

from ptospec.errors import PtospecError
from ptospec.program.api import choose_profile, read_program, run_program

PROGRAMS = Path(__file__).parent / "programs"


def _zz(scales: np.ndarray) -> np.ndarray:  # M x k scales -> [M/16, k/2, 16, 2]
    m, k = scales.shape
    return scales.reshape(m // 16, 16, k // 2, 2).transpose(0, 2, 1, 3).reshape(-1)


def _nn(scales: np.ndarray) -> np.ndarray:  # k x N scales -> [N/16, k/2, 16, 2]
    k, n = scales.shape
    return scales.reshape(k // 2, 2, n // 16, 16).transpose(2, 0, 3, 1).reshape(-1)


def _a_dn(scales: np.ndarray) -> np.ndarray:  # M x k scales -> [k/2, M, 2]
    m, k = scales.shape
    return scales.reshape(m, k // 2, 2).transpose(1, 0, 2).reshape(-1)


def _b_dn(scales: np.ndarray) -> np.ndarray:  # k x N scales -> N x k
    return scales.T.reshape(-1)


# kernel -> (M, K, N, left type, right type, left-scale layout, right-scale layout)
KERNELS = {
    "mx_matmul_zz_nn.pto": (16, 64, 32, ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2, _zz, _nn),
    "mx_matmul_dn.pto": (16, 128, 32, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, _a_dn, _b_dn),
}


def _case(kernel: str, seed: int = 0):
    m, k, n, ta, tb, lay_a, lay_b = KERNELS[kernel]
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 8, (m, k)).astype(ta)
    b = rng.integers(-8, 8, (k, n)).astype(tb)
    codes_a = rng.integers(120, 135, (m, k // 32)).astype(np.uint8)  # E8M0 codes: 2^(code - 127)
    codes_b = rng.integers(120, 135, (k // 32, n)).astype(np.uint8)
    args = {"a": a.reshape(-1), "b": b.reshape(-1),
            "a_scale": lay_a(codes_a).view(ml_dtypes.float8_e8m0fnu),
            "b_scale": lay_b(codes_b).view(ml_dtypes.float8_e8m0fnu),
            "c": np.full(m * n, np.nan, np.float32)}
    x1 = a.astype(np.float64) * np.repeat(2.0 ** (codes_a.astype(np.float64) - 127), 32, axis=1)
    x2 = b.astype(np.float64) * np.repeat(2.0 ** (codes_b.astype(np.float64) - 127), 32, axis=0)
    acc = np.zeros((m, n), np.float32)
    for kk in range(k):
        acc = acc + np.outer(x1[:, kk], x2[kk]).astype(np.float32)
    return args, acc


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_scales_loaded_in_their_mx_layout_scale_the_product(db, kernel):
    args, expected = _case(kernel)
    program = read_program(PROGRAMS / kernel)
    assert choose_profile(db, program, None) == "a5"
    result = run_program(db, program, args)
    np.testing.assert_array_equal(result.outputs["c"].reshape(expected.shape), expected)


def test_a_scale_layout_other_than_the_tiles_is_refused(db, tmp_path):
    """TLOAD on A5 loads MX_A_* scales into a zZ tile only (layout.mat-pair-a5), E8M0 only (mx.scale-tile)."""
    text = (PROGRAMS / "mx_matmul_zz_nn.pto").read_text()
    path = tmp_path / "swapped.pto"
    path.write_text(text.replace("#pto.layout<mx_a_zz>", "#pto.layout<mx_b_nn>"))
    args, _ = _case("mx_matmul_zz_nn.pto")
    with pytest.raises(PtospecError, match=r"layout\.mat-pair-a5"):
        run_program(db, read_program(path), args)


WHY_NOT = cpusim_unavailable("run the MX kernels on the simulator")


@pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_the_simulator_agrees_step_by_step(db, tmp_path, kernel):
    from ptospec.program.compare import compare, report_lines
    from ptospec.program.cpusim import build_and_run
    from ptospec.program.trace import Recorder

    args, expected = _case(kernel, seed=1)
    program = read_program(PROGRAMS / kernel)
    rec = Recorder(choose_profile(db, program, None))
    run_program(db, program, args, tracer=rec)
    sim = build_and_run(db, rec.trace, None, str(tmp_path / "cache"))
    assert sim.stopped is None, sim.log
    c = compare(db, rec.trace, sim)
    assert c.same, report_lines(c)
    assert c.steps == 10
    out = next(arr for buf, arr in zip(rec.trace.buffers, sim.buffers, strict=True) if buf.name == "c")
    np.testing.assert_allclose(out.reshape(expected.shape), expected, rtol=1e-5, atol=1e-3)
