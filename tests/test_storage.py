"""Tile storage (``tile_storage`` in specs/isa.yaml, ptospec/storage.py), the byte view of semantics, reads
outside a valid region, and operands that alias another operand's storage."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cpusim_env import cpusim_unavailable

from ptospec import storage
from ptospec.asm.types import parse_descriptor
from ptospec.errors import ExprError, PtospecError
from ptospec.executor import execute
from ptospec.expr.ast import Statement
from ptospec.expr.evaluate import Scope
from ptospec.expr.parser import parse_statement
from ptospec.statements import execute_statement
from ptospec.tile import TileDesc

LAYOUTS = [("RowMajor", "NoneBox"), ("ColMajor", "NoneBox"), ("ColMajor", "RowMajor"), ("RowMajor", "ColMajor"),
           ("RowMajor", "RowMajor"), ("ColMajor", "ColMajor")]


def tile(db, text: str) -> TileDesc:
    return parse_descriptor(text, db.isa)


def test_hand_derived_offsets(db):
    """A few placements worked out by hand from the Tile template and tile_offsets.hpp."""
    nd = storage.element_offsets(db.isa, tile(db, "vec, 4x8xf32"))
    assert nd[1, 3] == 11 and nd[3, 7] == 31
    dn = storage.element_offsets(db.isa, tile(db, "vec, 8x4xf32, blayout=col_major"))
    assert dn[1, 3] == 25 and dn[7, 0] == 7
    # Nz, f16: boxes of 16 rows x 16 columns (32 bytes), boxes ordered down the columns of boxes
    nz_desc = tile(db, "mat, 32x32xf16, blayout=col_major, slayout=row_major")
    assert storage.box_shape(db.isa, nz_desc) == (16, 16)
    nz = storage.element_offsets(db.isa, nz_desc)
    assert nz[0, 16] == 32 * 16 and nz[16, 0] == 256 and nz[17, 3] == 256 + 16 + 3
    # Zn, f32: boxes of 8 rows (32 bytes) x 16 columns, column-major inside, box rows one after another
    zn_desc = tile(db, "mat, 16x32xf32, blayout=row_major, slayout=col_major")
    assert storage.box_shape(db.isa, zn_desc) == (8, 16)
    zn = storage.element_offsets(db.isa, zn_desc)
    assert zn[1, 0] == 1 and zn[0, 1] == 8 and zn[0, 16] == 128 and zn[8, 0] == 32 * 8
    # 1024-byte boxes are 16 x 16 whatever the element; 32-byte (MX) boxes 16 x 2 or 2 x 16
    assert storage.box_shape(db.isa, tile(db, "mat, 16x16xf32, slayout=row_major, fractal=1024")) == (16, 16)
    assert storage.box_shape(db.isa, tile(db, "mat, 16x16xu8, slayout=row_major, fractal=32")) == (16, 2)
    assert storage.box_shape(db.isa, tile(db, "mat, 16x16xu8, slayout=col_major, fractal=32")) == (2, 16)
    assert storage.storage_order_name(db.isa, nz_desc) == "Nz"


@pytest.mark.parametrize(("blayout", "slayout"), LAYOUTS)
@pytest.mark.parametrize("dtype", ["u8", "f16", "f32", "i64"])
@pytest.mark.parametrize("fractal", [512, 1024, 32])
def test_offsets_are_a_bijection(db, blayout, slayout, dtype, fractal):
    """Whole boxes: every element gets its own offset and together they fill [0, rows x cols)."""
    probe = TileDesc("Mat", dtype, 1, 1, 1, 1, blayout, slayout, fractal)
    br, bc = storage.box_shape(db.isa, probe)
    rows, cols = br * 3, bc * 2
    desc = TileDesc("Mat", dtype, rows, cols, rows, cols, blayout, slayout, fractal)
    offsets = storage.element_offsets(db.isa, desc)
    assert sorted(offsets.ravel().tolist()) == list(range(rows * cols))
    data = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols).astype(np.dtype(
        {"u8": "u1", "f16": "f2", "f32": "f4", "i64": "i8"}[dtype]))
    raw = storage.to_bytes(db.isa, desc, data)
    assert raw.size == rows * cols * data.itemsize
    assert np.array_equal(storage.from_bytes(db.isa, desc, raw, data.dtype), data)


def test_byte_statement_reinterprets_across_layouts(db):
    """TRESHAPE's statement: a 16x1 column-major tile read as a 1x16 row-major tile, f32 read as i32."""
    src = np.arange(16, dtype=np.float32).reshape(16, 1)
    out = execute(db, "treshape", None, "cpu", {"dst": tile(db, "vec, 1x16xf32"),
                                                "src": tile(db, "vec, 16x1xf32, blayout=col_major")}, {"src": src})
    assert out["dst"].tolist() == [list(range(16))]
    src = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32)
    out = execute(db, "treshape", None, "a2a3", {"dst": tile(db, "vec, 16x16xi32"),
                                                 "src": tile(db, "vec, 16x16xf32, valid=3x4")}, {"src": src})
    assert np.array_equal(out["dst"], src.view(np.int32))  # every byte, outside the valid region too


def test_reshape_statement_alone_matches_the_alias(db):
    """The alias initialisation and the byte statement give the same destination (one does not hide the other)."""
    src_d, dst_d = tile(db, "vec, 32x16xf16, blayout=col_major, slayout=row_major"), \
        tile(db, "vec, 16x32xf16, blayout=row_major, slayout=col_major")
    src = np.arange(512, dtype=np.float16).reshape(32, 16)
    via_alias = execute(db, "treshape", None, "cpu", {"dst": dst_d, "src": src_d}, {"src": src})["dst"]
    stmt = db.op("treshape").mode(None).semantics[0]
    scope = Scope(db.isa, tiles={"dst": dst_d, "src": src_d}, type_vars={"T": "f16", "U": "f16"})
    dest = np.zeros((16, 32), np.float16)
    execute_statement(stmt, scope, {"src": src, "dst": dest}, {"dst": dest})
    assert np.array_equal(dest, via_alias)
    assert np.array_equal(storage.to_bytes(db.isa, dst_d, dest), storage.to_bytes(db.isa, src_d, src))


def test_subview_window(db):
    src = np.arange(256, dtype=np.float32).reshape(4, 64)
    operands = {"dst": tile(db, "vec, 4x64xf32, valid=2x32"), "src": tile(db, "vec, 4x64xf32"),
                "rowIdx": parse_descriptor("u16", db.isa), "colIdx": parse_descriptor("u16", db.isa)}
    written: dict = {}
    dst = np.full((4, 64), -1, np.float32)
    out = execute(db, "tsubview", None, "cpu", operands, {"src": src, "dst": dst, "rowIdx": 2, "colIdx": 32},
                  written)
    assert np.array_equal(out["dst"][:2, :32], src[2:4, 32:64])
    # storage beyond the source's keeps the destination's own contents and is not counted as written
    assert (out["dst"][2:, 32:] == -1).all() and not written["dst"][2:, 32:].any()


def test_fill_in_place_keeps_what_the_alias_shows(db):
    """On A5 the in-place fill copies nothing: below the destination's valid rows the source's rows stay."""
    src = np.arange(256, dtype=np.float32).reshape(16, 16) + 1
    operands = {"dst": tile(db, "vec, 16x16xf32, valid=6x16, pad=min"), "src": tile(db, "vec, 16x16xf32, valid=4x5")}
    out = execute(db, "tfillpad_inplace", None, "a5", operands, {"src": src, "dst": np.zeros((16, 16), np.float32)})
    assert np.array_equal(out["dst"][:4, :5], src[:4, :5])
    assert np.isneginf(out["dst"][:4, 5:]).all() and np.isneginf(out["dst"][4:6]).all()
    assert np.array_equal(out["dst"][6:], src[6:])


def _run(db, text: str, tiles: dict, arrays: dict, **flags):
    stmt = parse_statement(text)
    stmt = Statement(**{**stmt.__dict__, **flags})
    scope = Scope(db.isa, tiles=tiles, type_vars={"T": "f32"})
    execute_statement(stmt, scope, arrays, {"dst": arrays["dst"]})


def test_byte_reads_and_writes_respect_valid_regions(db):
    tiles = {"dst": tile(db, "vec, 8x8xf32, valid=2x2"), "src": tile(db, "vec, 8x8xf32, valid=2x2")}
    arrays = {"dst": np.zeros((8, 8), np.float32), "src": np.ones((8, 8), np.float32)}
    with pytest.raises(ExprError) as info:
        _run(db, "dst.byte[k] = src.byte[k] for k < 12", tiles, arrays, writes="tile")
    assert info.value.rule == "exec.read-outside-valid"  # bytes 8 to 11 are element (0, 2)
    _run(db, "dst.byte[k] = src.byte[k] for k < 8", tiles, arrays, writes="tile")  # elements (0, 0), (0, 1)
    assert (arrays["dst"][0, :2] == 1).all() and (arrays["dst"][0, 2:] == 0).all()
    with pytest.raises(ExprError) as info:
        _run(db, "dst.byte[k] = src.byte[k] for k < 256", tiles, arrays, reads="tile")
    assert info.value.rule == "exec.write-outside-valid"
    with pytest.raises(ExprError) as info:
        _run(db, "dst.byte[k] = 0 for k < 257", tiles, arrays, writes="tile")
    assert info.value.rule == "exec.outside-storage"
    with pytest.raises(ExprError) as info:
        _run(db, "dst[i, j] = src[i, j] for i < 8, j < 8", tiles, arrays, writes="tile")
    assert info.value.rule == "exec.read-outside-valid"
    _run(db, "dst[i, j] = src[i, j] for i < 8, j < 8", tiles, arrays, writes="tile", reads="tile")
    assert (arrays["dst"] == 1).all()


def test_lint_catches_bad_aliases_and_byte_targets(tmp_path, db):
    from ptospec.loader import load_op

    text = (Path(db.root) / "ops" / "treshape.yaml").read_text()
    bad = text.replace("alias: {of: src}", "alias: {of: nothing}")
    path = tmp_path / "treshape.yaml"
    path.write_text(bad)
    with pytest.raises(PtospecError) as info:
        load_op(path, db.isa, "treshape.yaml", db.kinds)
    assert "op.alias" in str(info.value) or any(getattr(e, "rule", "") == "op.alias"
                                                for e in getattr(info.value, "errors", ()))
    bad = text.replace("for k < dst.rows * dst.cols * bytes(U)", "")
    path.write_text(bad)
    with pytest.raises(PtospecError) as info:
        load_op(path, db.isa, "treshape.yaml", db.kinds)
    assert "bound k" in str(info.value) or any("bound k" in str(e) for e in getattr(info.value, "errors", ()))


REASON = cpusim_unavailable("compare tile_storage with the simulator's GetTileElementOffset")


@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_matches_the_simulator(db, tmp_path):
    """The simulator's own GetTileElementOffset, compiled, against the engine for every layout pair."""
    from ptospec.backends.cpusim.build import base_flags
    from ptospec.backends.cpusim.toolchain import find_checkout, find_compiler

    cases = []
    for (blayout, slayout), (dtype, cpp), fractal in itertools.product(
            LAYOUTS, [("u8", "uint8_t"), ("f16", "half"), ("f32", "float")], [512, 1024]):
        probe = TileDesc("Mat", dtype, 1, 1, 1, 1, blayout, slayout, fractal)
        br, bc = storage.box_shape(db.isa, probe)
        rows, cols = (32, 64) if slayout == "NoneBox" else (br * 2, bc * 3)  # shapes the Tile template accepts
        cases.append((TileDesc("Mat", dtype, rows, cols, rows, cols, blayout, slayout, fractal), cpp))
    body = []
    for k, (d, cpp) in enumerate(cases):
        body.append(f"using T{k} = pto::Tile<pto::TileType::Mat, {cpp}, {d.rows}, {d.cols}, pto::BLayout::{d.blayout}, "
                    f"{d.rows}, {d.cols}, pto::SLayout::{d.slayout}, {d.fractal}>;")
        body.append(f"for (size_t r = 0; r < {d.rows}; ++r) for (size_t c = 0; c < {d.cols}; ++c) "
                    f"std::printf(\"%zu \", pto::GetTileElementOffset<T{k}>(r, c)); std::printf(\"\\n\");")
    src = tmp_path / "offsets.cpp"
    src.write_text("#include <cstdio>\n#include <pto/pto-inst.hpp>\nint main() {\n" + "\n".join(body) + "\n}\n")
    exe = tmp_path / "offsets"
    flags = [f for f in base_flags(find_checkout(None)) if f != "-D_DEBUG"]  # no PTO_ASSERT hooks here
    subprocess.run([find_compiler(None).path, *flags, str(src), "-o", str(exe)], check=True, capture_output=True)
    lines = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()
    for (d, _), line in zip(cases, lines, strict=True):
        got = np.array([int(x) for x in line.split()]).reshape(d.rows, d.cols)
        assert np.array_equal(got, storage.element_offsets(db.isa, d)), (d.blayout, d.slayout, d.dtype, d.fractal)
