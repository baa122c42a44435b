"""Column arg-reductions on the NPUs: the source layout the kernels read and the tmp footprint they touch."""

from __future__ import annotations

import pytest

from ptospec.validator import validate


def check(db, tiles, mode, profile, **descs):
    return validate(db, "tcolargmax", mode, profile, tiles(**descs))


@pytest.mark.parametrize("profile", ["a2a3", "a5"])
def test_dn_source_is_rejected_on_the_npus(db, tiles, profile):
    descs = dict(src="vec,16x16xf32,layout=dn", dstIdx="vec,1x16xu32", tmp="vec,1x32xf32")
    assert check(db, tiles, "index", profile, **descs).rule_ids == {"layout.npu-src-row-major"}
    assert check(db, tiles, "index", "cpu", **descs).ok  # the simulator reads through the tile's layout


@pytest.mark.parametrize("tmp, legal", [
    ("vec,1x16xf32", False),   # the page's formula: 16 columns
    ("vec,1x120xf32", False),
    ("vec,1x128xf32", True),   # two regions of tmpGapEles = 64
    ("vec,2x64xf32", True),    # addressed linearly: rows are used in turn
])
def test_tmp_footprint_f32_255_columns(db, tiles, tmp, legal):
    report = check(db, tiles, "index", "a2a3", src="vec,16x256xf32,valid=16x255",
                   dstIdx="vec,1x256xu32,valid=1x255", tmp=tmp)
    assert report.ok is legal and (legal or report.rule_ids == {"tmp.size"})


def test_tmp_the_size_of_a_small_source(db, tiles):
    # the page's advice: a tmp the size of src, here 16x8 f32 (the kernel touches 16 elements)
    assert check(db, tiles, "index", "a2a3", src="vec,16x8xf32", dstIdx="vec,1x8xu32", tmp="vec,16x8xf32").ok
    # but not for a one-row source: 8 + 8 elements are touched
    report = check(db, tiles, "index", "a2a3", src="vec,1x8xf32", dstIdx="vec,1x8xu32", tmp="vec,1x8xf32")
    assert report.rule_ids == {"tmp.size"}


def test_half_index_mode_uses_three_regions(db, tiles):
    base = dict(src="vec,16x16xf16", dstIdx="vec,1x16xu32")
    assert check(db, tiles, "index", "a2a3", **base, tmp="vec,1x32xf16").rule_ids == {"tmp.size"}
    assert check(db, tiles, "index", "a2a3", **base, tmp="vec,1x48xf16").ok
    value = dict(src="vec,16x16xf16", dstIdx="vec,1x16xu16", dstVal="vec,1x16xf16", tmp="vec,1x32xf16")
    assert check(db, tiles, "value_index", "a2a3", **value).ok
