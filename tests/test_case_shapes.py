"""A mode's ``shapes``: how generated cases shape its tiles from the example (docs/specs.md, Case shapes)."""

from pathlib import Path

import pytest

from ptospec.conformance import cases
from ptospec.conformance.shaping import shaped, share
from ptospec.errors import PtospecError
from ptospec.loader import load_op
from ptospec.model import CaseShape, Extent

ROOT = Path(__file__).resolve().parents[1]


def _shaped(db, op: str, mode: str, target: tuple[int, int], partial: bool = False, kr: int = 0, kc: int = 0):
    m = db.op(op).mode(mode)
    return shaped(db.isa, cases.example_tiles(db, m), target, partial, kr, kc, m.shapes)


@pytest.mark.parametrize("cols", [1, 2, 5, 9, 19, 37, 64, 130])
def test_shares_round_to_the_nearest_so_that_parts_add_up(cols):
    # TCONCAT's sources: two thirds and one third of the destination's width
    assert share(16, 24, cols) + share(8, 24, cols) == max(cols, 2)
    # a half rounds down: a source half its destination's width still fits twice
    assert 2 * share(64, 128, cols) <= max(cols, 2)


def test_share_keeps_the_whole_and_never_reaches_zero():
    assert share(24, 24, 37) == 37 and share(1, 64, 5) == 1 and share(5, 16, 7) == 2


def test_the_loader_reads_each_form(db):
    assert db.op("tdeinterleave").mode("single").shapes == {
        "dst0": CaseShape(Extent("rows"), Extent("cols", 2)), "dst1": CaseShape(Extent("rows"), Extent("cols", 2))}
    assert db.op("tmatmul_mx").mode("default").shapes["scale1"] == CaseShape(Extent("inner", 32), Extent("cols"))
    assert db.op("tci").mode("tmp").fixed_tiles == ("tmp",)
    sort = db.op("tsort32").mode("tail")
    assert set(sort.shapes) == {"dst", "src", "idx", "tmp"} and all(s.shares for s in sort.shapes.values())
    assert db.op("ttrans").mode("default").shapes["src"].transposed


def test_tconcat_sources_keep_adding_up_to_the_destination(db):
    for target in cases.TARGETS:
        t = _shaped(db, "tconcat", "default", target)
        assert t["src0"].valid_col + t["src1"].valid_col == t["dst"].valid_col or target[1] == 1
        assert t["src0"].valid_row == t["src1"].valid_row == t["dst"].valid_row == target[0]


def test_ttrans_source_takes_the_region_transposed(db):
    t = _shaped(db, "ttrans", "default", (7, 19), partial=True)
    assert t["dst"].valid_shape == (7, 19) and t["src"].valid_shape == (19, 7)
    assert (t["src"].rows, t["src"].cols) == (20, 8)  # physical: valid + 1, rounded on the tile's own axes


def test_an_empty_or_one_row_extent_stays(db):
    m = db.op("tci").mode("default")
    empty = cases.base_tiles(db, m)[1]
    assert shaped(db.isa, empty, (5, 37), False, 0, 0, m.shapes)["dst"].valid_shape == (0, 37)
    assert _shaped(db, "tci", "default", (5, 37))["dst"].valid_shape == (1, 37)


def test_inner_is_shared_by_the_tiles_along_k(db):
    t = _shaped(db, "tmatmul_bias", "default", (3, 5), partial=True, kr=2, kc=4)
    assert t["src0"].valid_shape == (3, 7) and t["src1"].valid_shape == (7, 5)
    assert t["src0"].cols == t["src1"].rows == 16  # K rounded to the larger power of two
    assert (t["bias"].rows, t["bias"].valid_row) == (1, 1)  # one: exactly one row


def test_divided_extents_halve_the_region(db):
    t = _shaped(db, "tdeinterleave", "single", (3, 12))
    assert t["src"].valid_shape == (3, 12) and t["dst0"].valid_shape == t["dst1"].valid_shape == (3, 6)


def test_fixed_tiles_stay_as_the_example_gives_them(db):
    t = _shaped(db, "tci", "tmp", (7, 19), partial=True, kr=3, kc=5)
    assert (t["tmp"].rows, t["tmp"].cols, t["tmp"].valid_shape) == (1, 512, (1, 512))


def _op_with(tmp_path: Path, op: str, old: str, new: str) -> Path:
    text = (ROOT / "specs" / "ops" / f"{op}.yaml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / f"{op}.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


SHAPES = "shapes: {dst0: [rows, cols/2], dst1: [rows, cols/2]}"


def test_lint_names_an_operand_the_shapes_do_not_have(tmp_path, db):
    path = _op_with(tmp_path, "tdeinterleave", SHAPES, "shapes: {dst0: [rows, cols/2], nothing: share}")
    assert "'nothing' is no operand of the mode" in _load_errors(db, path)


def test_a_fixed_entry_is_read(tmp_path, db):
    path = _op_with(tmp_path, "tdeinterleave", SHAPES, "shapes: {dst0: [rows, cols/2], src: fixed}")
    assert load_op(path, db.isa, str(path), db.kinds).mode("single").fixed_tiles == ("src",)


def _load_errors(db, path: Path) -> str:
    with pytest.raises(PtospecError) as info:
        load_op(path, db.isa, str(path), db.kinds)
    return "\n".join([str(info.value), *(str(e) for e in getattr(info.value, "errors", ()))])


def test_lint_refuses_a_scalar_in_the_shapes(tmp_path, db):
    path = _op_with(tmp_path, "tci", "shapes: {tmp: fixed}", "shapes: {tmp: fixed, start: share}")
    assert "shapes: 'start' is not a tile operand" in _load_errors(db, path)


@pytest.mark.parametrize("term", ["half", "cols*2", "one/2", "rows/0", "share/2"])
def test_the_schema_refuses_an_unknown_extent(tmp_path, db, term):
    path = _op_with(tmp_path, "tdeinterleave", "dst1: [rows, cols/2]", f"dst1: [rows, {term}]")
    assert "shapes" in _load_errors(db, path)
