"""The view and tile-buffer address instructions of the program layer (get_tensor_view_stride,
tensor_view_addr, tile_buf_addr) and the vector scopes they are legal in: read, checked and run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ptospec.errors import PtospecError
from ptospec.program.api import check_program, read_program, run_program

TILE = "!pto.tile_buf<vec, 16x16xf32>"
VIEW = "!pto.tensor_view<?x?xf32>"
PART = "!pto.partition_tensor_view<16x16xf32>"
ADDR = f"%ub = pto.tile_buf_addr %t : {TILE} -> !pto.ptr<f32, vec>"
SCOPE = f"    pto.vecscope {{\n      {ADDR}\n    }}"

# A 32x32 input: its window at (16, 1) is reached through the partition's address and the strides read
# back from the view, loaded, its tile's address taken in a vector scope, and stored to a 16x16 output.
KERNEL = f"""
module {{
  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %tv = pto.make_tensor_view %arg0, shape = [%c32, %c32], strides = [%c32, %c1] : {VIEW}
    %s0 = pto.get_tensor_view_stride %tv, %c0 : {VIEW} -> index
    %s1 = pto.get_tensor_view_stride %tv, %c1 : {VIEW} -> index
    %pv = pto.partition_view %tv, offsets = [%c16, %c1], sizes = [%c16, %c16] : {VIEW} -> {PART}
    %p = pto.tensor_view_addr %pv : {PART} -> !pto.ptr<f32, gm>
    %tv2 = pto.make_tensor_view %p, shape = [%c16, %c16], strides = [%s0, %s1] : {VIEW}
    %pv2 = pto.partition_view %tv2, offsets = [%c0, %c0], sizes = [%c16, %c16] : {VIEW} -> {PART}
    %t = pto.alloc_tile : {TILE}
    pto.tload ins(%pv2 : {PART}) outs(%t : {TILE})
{SCOPE}
    %ov = pto.make_tensor_view %arg1, shape = [%c16, %c16], strides = [%c16, %c1] : {VIEW}
    %op = pto.partition_view %ov, offsets = [%c0, %c0], sizes = [%c16, %c16] : {VIEW} -> {PART}
    pto.tstore ins(%t : {TILE}) outs(%op : {PART})
    return
  }}
}}
"""


def _program(text: str, tmp_path: Path):
    path = tmp_path / "k.pto"
    path.write_text(text)
    return read_program(path)


def test_strides_and_addresses_run(db, tmp_path):
    src = np.arange(1024, dtype=np.float32)
    result = run_program(db, _program(KERNEL, tmp_path), {"arg0": src, "arg1": np.zeros(256, np.float32)})
    np.testing.assert_array_equal(result.outputs["arg1"].reshape(16, 16), src.reshape(32, 32)[16:, 1:17])
    assert not check_program(db, _program(KERNEL, tmp_path)).violations


@pytest.mark.parametrize("old, new, rule", [
    ("get_tensor_view_stride %tv, %c1", "get_tensor_view_stride %tv, %c16", "view.stride-index"),
    ("-> !pto.ptr<f32, gm>", "-> !pto.ptr<f16, gm>", "view.addr-type"),
    ("-> !pto.ptr<f32, gm>", "-> !pto.ptr<f32, vec>", "view.addr-type"),
    ("-> !pto.ptr<f32, vec>", "-> !pto.ptr<i32, vec>", "tile-addr.type"),
    # outside a vector scope the address may not be taken; inside one no tile instruction may run
    (SCOPE, f"    {ADDR}", "tile-addr.scope"),
    (ADDR, f"pto.tstore ins(%t : {TILE}) outs(%pv2 : {PART})\n      {ADDR}", "vecscope.tile-op"),
    (ADDR, "pto.vecscope {\n      }", "vecscope.nested"),
    ("pto.vecscope {", "pto.strict_vecscope() {", "vecscope.strict-capture"),
])
def test_rules(db, tmp_path, old, new, rule):
    text = KERNEL
    assert old in text
    text = text.replace(old, new, 1)
    assert rule in {f.rule for f in check_program(db, _program(text, tmp_path)).violations}
    with pytest.raises(PtospecError) as err:
        run_program(db, _program(text, tmp_path),
                    {"arg0": np.zeros(1024, np.float32), "arg1": np.zeros(256, np.float32)})
    assert rule in str(err.value)


def test_strict_scope_takes_its_values_as_block_arguments(db, tmp_path):
    text = KERNEL.replace("    pto.vecscope {\n      %ub = pto.tile_buf_addr %t :",
                          f"    pto.strict_vecscope(%t) {{\n    ^bb0(%in: {TILE}):\n"
                          "      %ub = pto.tile_buf_addr %in :")
    text = text.replace("-> !pto.ptr<f32, vec>\n    }", f"-> !pto.ptr<f32, vec>\n    }} : ({TILE}) -> ()")
    assert "strict_vecscope(%t)" in text and "-> ()" in text
    assert not check_program(db, _program(text, tmp_path)).violations


def test_a_memref_result_is_not_modelled(db, tmp_path):
    text = KERNEL.replace("-> !pto.ptr<f32, gm>", "-> memref<16x16xf32>")
    with pytest.raises(PtospecError) as err:
        run_program(db, _program(text, tmp_path),
                    {"arg0": np.zeros(1024, np.float32), "arg1": np.zeros(256, np.float32)})
    assert "program.type" in str(err.value) and "pointer result" in str(err.value)
