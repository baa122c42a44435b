"""The assembler's lowered form (``memrefs`` in specs/program.yaml): memref arguments as global buffers, on-chip
memrefs as tiles of their address space, pto.bind_tile and memref.reinterpret_cast as views.  The kernels under
tests/programs/ are ptospec's own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ptospec.program.api import buffer_argument, check_program, read_program, run_program
from ptospec.program.memref_types import MemrefError, parse_memref, tile_of
from ptospec.program.spec import program_spec

PROGRAMS = Path(__file__).parent / "programs"


@pytest.mark.parametrize("text, shape, strides, offset, space", [
    ("memref<16x32xf32, #pto.address_space<vec>>", (16, 32), None, 0, "vec"),
    ("memref<1x16xi16, strided<[16, 1], offset: ?>, #pto.address_space<gm>>", (1, 16), (16, 1), None, "gm"),
    ("memref<?x8xui8>", (None, 8), None, 0, ""),
])
def test_memref_types_are_read(db, text, shape, strides, offset, space):
    mt = parse_memref(text, program_spec(db))
    assert (mt.shape, mt.strides, mt.offset, mt.space) == (shape, strides, offset, space)


def test_an_on_chip_memref_is_the_tile_the_emitter_writes(db):
    """Rows and cols are the first two extents; the configuration is the default one."""
    spec = program_spec(db)
    tile = tile_of(spec, db.isa, parse_memref("memref<16x16x16xf16, #pto.address_space<left>>", spec))
    assert (tile.loc, tile.rows, tile.cols, tile.blayout, tile.slayout) == ("Left", 16, 16, "RowMajor", "NoneBox")
    with pytest.raises(MemrefError):
        parse_memref("memref<16x16xf32, affine_map<(d0, d1) -> (d1, d0)>>", spec)


def test_a_global_memref_argument_is_a_buffer(db):
    assert buffer_argument(db, "memref<16x32xf32, #pto.address_space<gm>>") == ("f32", parse_memref(
        "memref<16x32xf32, #pto.address_space<gm>>", program_spec(db)))
    assert buffer_argument(db, "memref<16x32xf32, #pto.address_space<vec>>") is None


def test_a_kernel_in_the_lowered_form_checks_and_runs(db):
    program = read_program(PROGRAMS / "memref_add.pto")
    result = check_program(db, program)
    assert not result.violations and not result.stats.unknown, [f.one_line() for f in result.violations]
    assert result.extents == {"x": 512, "y": 512, "z": 512}
    x = np.arange(512, dtype=np.float32).reshape(16, 32)
    y = np.full((16, 32), 2, np.float32)
    out = run_program(db, program, {"x": x, "y": y, "z": np.zeros(512, np.float32)})
    # bind_tile gives the sum's first 8 rows (valid 8 x 32), stored through the reinterpret_cast view
    assert np.array_equal(out.outputs["z"], np.concatenate([(x + y)[:8].reshape(-1), np.zeros(256, np.float32)]))


def test_lowered_form_mistakes_are_reported(db):
    result = check_program(db, read_program(PROGRAMS / "memref_bugs.pto"))
    assert {f.rule for f in result.violations} == {"memref.alloc-space", "tile.align-row-major", "memref.dealloc"}


def test_each_memref_type_of_a_line_is_its_own_values(db):
    """A scalar's type (an ident, f32) before a memref type does not shift which value the memref types."""
    from ptospec.program.syntax import parse_program
    from ptospec.program.walker import _typed_values

    vec = "memref<16x32xf32, #pto.address_space<vec>>"
    program = parse_program(f"module {{\n  func.func @k() {{\n    pto.texpands ins(%s, %a : f32, {vec}) "
                            f"outs(%b : {vec})\n    return\n  }}\n}}\n", "k.pto")
    op = program.top[0].regions[0][0].ops[0].regions[0][0].ops[0]
    assert [v for _, v in sorted(_typed_values(op).items())] == ["%s", "%a", "%b"]


@pytest.mark.parametrize("compact", ["1", "2"])
def test_a_compact_mode_in_a_tile_configuration_runs_as_without_it_on_a_vec_tile(db, tmp_path, compact):
    """``compact=N : i32`` of ``#pto.tile_buf_config`` names the assembler's compact mode (``compact_modes`` of
    specs/isa.yaml); no header reads it on a row-major Vec tile, so the kernel's result is unchanged."""
    text = (PROGRAMS / "memref_add.pto").read_text().replace("pad=0 : i32>", f"pad=0 : i32, compact={compact} : i32>")
    assert f"compact={compact}" in text
    path = tmp_path / "compact.pto"
    path.write_text(text)
    program = read_program(path)
    assert not check_program(db, program).violations
    x, y = np.arange(512, dtype=np.float32).reshape(16, 32), np.full((16, 32), 2, np.float32)
    out = run_program(db, program, {"x": x, "y": y, "z": np.zeros(512, np.float32)})
    assert np.array_equal(out.outputs["z"][:256], (x + y)[:8].reshape(-1))


def test_a_compact_number_the_assembler_lacks_is_refused_in_a_tile_configuration(db, tmp_path):
    path = tmp_path / "compact.pto"
    path.write_text((PROGRAMS / "memref_add.pto").read_text().replace("pad=0 : i32>", "pad=0 : i32, compact=7 : i32>"))
    [finding] = check_program(db, read_program(path)).violations
    last = len(db.isa.compact_dialect) - 1
    assert finding.rule == "program.type" and f"compact=7 names no compact (0 .. {last})" in finding.message
