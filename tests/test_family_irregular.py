"""Irregular-and-complex instructions against independent NumPy models, and the spec-language concepts
they brought: statement lets, write order on repeated targets, bitcast, enum codes, proportional cases."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from ptospec.asm.types import parse_descriptor
from ptospec.conformance.cases import positive_cases
from ptospec.errors import ExprError
from ptospec.executor import execute
from ptospec.expr.ast import Name, Statement
from ptospec.expr.functions import bitcast
from ptospec.expr.parser import parse_statement
from ptospec.lint import lint_paths

ROOT = Path(__file__).resolve().parent.parent


def scatter_model(dst, src, idx):
    flat = dst.copy().ravel()
    for i in range(idx.shape[0]):
        for j in range(idx.shape[1]):
            flat[idx[i, j]] = src[i, j]  # row-major order: the last write survives
    return flat.reshape(dst.shape)


def test_tscatter_duplicates_keep_the_last_write(db, tiles):
    rng = np.random.default_rng(1)
    src = rng.standard_normal((8, 16)).astype(np.float32)
    idx = rng.integers(0, 6, (8, 16)).astype(np.int32)  # six targets for 128 writes
    dst = np.full((16, 16), -7, np.float32)
    t = tiles(dst="vec, 16x16xf32", src="vec, 8x16xf32", idx="vec, 8x16xi32")
    out = execute(db, "tscatter", "index", "a2a3", t, {"src": src, "idx": idx, "dst": dst})["dst"]
    np.testing.assert_array_equal(out, scatter_model(np.zeros_like(dst), src, idx))  # A2/A3 zeroes dst first


def test_tscatter_column_major_destination_counts_storage_order(db, tiles):
    src = np.arange(4, dtype=np.float32).reshape(1, 4) + 1
    idx = np.array([[0, 1, 8, 9]], np.int32)
    t = tiles(dst="vec, 8x8xf32, blayout=col_major", src="vec, 1x8xf32, valid=1x4", idx="vec, 1x8xi32, valid=1x4")
    out = execute(db, "tscatter", "index", "cpu", t, {"src": np.pad(src, ((0, 0), (0, 4))),
                                                        "idx": np.pad(idx, ((0, 0), (0, 4)))})["dst"]
    assert (out[0, 0], out[1, 0], out[0, 1], out[1, 1]) == (1, 2, 3, 4)


@pytest.mark.parametrize(("pattern", "step", "lane"), [("P0101", 2, 0), ("P1010", 2, 1), ("P0001", 4, 0),
                                                        ("P1000", 4, 3)])
def test_tscatter_mask_spreads_into_the_selected_lane(db, tiles, pattern, step, lane):
    src = np.arange(8 * 16, dtype=np.int32).reshape(8, 16)
    t = tiles(dst=f"vec, 8x{16 * step}xi32", src="vec, 8x16xi32", maskPattern=pattern, scatterType="SCATTER_ROW")
    out = execute(db, "tscatter", "mask", "a5", t, {"src": src})["dst"]
    want = np.zeros((8, 16 * step), np.int32)
    want[:, lane::step] = src
    np.testing.assert_array_equal(out, want)


def test_tgather_index_mask_and_compare(db, tiles):
    rng = np.random.default_rng(2)
    src0 = rng.standard_normal((16, 16)).astype(np.float32)
    idx = rng.integers(0, 256, (16, 16)).astype(np.int32)
    t = tiles(dst="vec, 16x16xf32", src0="vec, 16x16xf32", idx="vec, 16x16xi32", tmp="vec, 16x16xi32")
    out = execute(db, "tgather", "index", "a2a3", t, {"src0": src0, "idx": idx})["dst"]
    np.testing.assert_array_equal(out, src0.ravel()[idx])

    src = rng.standard_normal((8, 16)).astype(np.int16)
    t = tiles(dst="vec, 2x16xi16", src="vec, 8x16xi16", maskPattern="P1000", gatherType="GATHER_ROW")
    out = execute(db, "tgather", "mask", "a5", t, {"src": src})["dst"]
    np.testing.assert_array_equal(out.ravel(), src[:, 3::4].ravel())  # one run of storage, row after row

    scores = rng.integers(0, 5, (4, 64)).astype(np.float32)
    k = np.array([[2, 3, 1, 4, 0, 0, 0, 0]], np.uint32)
    t = tiles(dst="vec, 4x64xi32", src0="vec, 4x64xf32", kValue="vec, 1x8xu32, valid=1x4",
              cdst="vec, 1x8xi32, valid=1x4", tmp="vec, 1x32xu8", cmpMode="GT", offset="i32")
    res = execute(db, "tgather", "compare", "a5", t, {"src0": scores, "kValue": k, "offset": 7,
                                                      "dst": np.full((4, 64), -1, np.int32)})
    for i in range(4):
        found = np.flatnonzero(scores[i] > k[0, i]) + 7 + i * 64  # storage positions in src0, plus offset
        assert res["cdst"][0, i] == found.size
        np.testing.assert_array_equal(res["dst"][i, :found.size], found)
        assert (res["dst"][i, found.size:] == -1).all()  # the count decides how much is written


def sort32_model(src, idx, dtype):
    per = 8 // np.dtype(dtype).itemsize
    out = np.zeros((src.shape[0], src.shape[1] * per), dtype)
    for i in range(src.shape[0]):
        for b in range(0, src.shape[1], 32):
            block = sorted(range(b, min(b + 32, src.shape[1])), key=lambda k: (-float(src[i, k]), int(idx[i, k]), k))
            for n, k in enumerate(block):
                pair = np.zeros(per, dtype)
                pair[0] = src[i, k]
                pair[per - (4 // np.dtype(dtype).itemsize):] = np.array([idx[i, k]], np.uint32).view(dtype)
                out[i, (b + n) * per:(b + n + 1) * per] = pair
    return out


@pytest.mark.parametrize(("dtype", "name", "width"), [(np.float32, "f32", 128), (np.float16, "f16", 256)])
def test_tsort32_ties_by_index_then_position(db, tiles, dtype, name, width):
    rng = np.random.default_rng(3)
    src = rng.integers(-2, 2, (2, 64)).astype(dtype)  # few values: many ties
    src[0, :4] = [-0.0, 0.0, -0.0, 0.0]  # -0 equals +0
    idx = rng.integers(0, 4, (2, 64)).astype(np.uint32)  # repeated indices: column order decides
    t = tiles(dst=f"vec, 2x{width}x{name}", src=f"vec, 2x64x{name}", idx="vec, 2x64xu32")
    out = execute(db, "tsort32", "aligned", "a5", t, {"src": src, "idx": idx})["dst"]
    bits = {2: np.uint16, 4: np.uint32}[np.dtype(dtype).itemsize]
    np.testing.assert_array_equal(out.view(bits), sort32_model(src, idx, dtype).view(bits))


def test_thistogram_is_cumulative_and_filtered(db, tiles):
    rng = np.random.default_rng(4)
    src = rng.integers(0, 2**32, (4, 64), dtype=np.uint64).astype(np.uint32)
    src[:, :20] = (src[:, :20] & 0xFFFF) | (0xAB << 24) | (0x12 << 16)
    idx = np.zeros((2, 64), np.uint8)
    idx[0, 0], idx[1, 0] = 0xAB, 0x12
    t = tiles(dst="vec, 4x256xu32", src="vec, 4x64xu32", idx="vec, 2x64xu8", byte="BYTE_1")
    out = execute(db, "thistogram", None, "a5", t, {"src": src, "idx": idx})["dst"]
    keep = ((src >> 24) == 0xAB) & (((src >> 16) & 0xFF) == 0x12)
    want = np.stack([np.cumsum(np.bincount(((row >> 8) & 0xFF)[kept], minlength=256))
                     for row, kept in zip(src, keep, strict=True)])
    np.testing.assert_array_equal(out, want)


def test_tgatherb_copies_32_byte_blocks(db, tiles):
    rng = np.random.default_rng(5)
    src = rng.standard_normal((16, 64)).astype(np.float32)
    offsets = (rng.integers(0, 16 * 8, (4, 8)) * 32).astype(np.uint32)
    t = tiles(dst="vec, 4x64xf32", src="vec, 16x64xf32", offset="vec, 4x8xu32")
    out = execute(db, "tgatherb", None, "a2a3", t, {"src": src, "offset": offsets})["dst"]
    raw = src.view(np.uint8).ravel()
    want = np.stack([np.concatenate([raw[o:o + 32] for o in row]) for row in offsets]).view(np.float32)
    np.testing.assert_array_equal(out, want)


def test_repeated_targets_need_a_write_rule(db, tiles):
    from ptospec.expr.evaluate import Scope
    from ptospec.statements import execute_statement

    t = tiles(dst="vec, 1x8xi32", src="vec, 1x8xi32")
    scope = Scope(db.isa, tiles=t)
    src = np.arange(8, dtype=np.int32).reshape(1, 8) + 10
    plain = parse_statement("dst[0, j // 4] = src[0, j] for j < 8")
    with pytest.raises(ExprError) as err:
        execute_statement(plain, scope, {"src": src}, {"dst": np.zeros((1, 8), np.int32)})
    assert err.value.rule == "exec.duplicate-target"
    for rule, want in (("first", [10, 14]), ("last", [13, 17])):
        out = np.zeros((1, 8), np.int32)
        stmt = Statement(plain.target, plain.value, plain.domain, plain.text, combine=rule)
        execute_statement(stmt, scope, {"src": src}, {"dst": out})
        assert out[0, :2].tolist() == want


def test_statement_lets_substitute_in_order():
    stmt = parse_statement("dst[0, q] = src[0, j] for j < 4")
    base = parse_statement("dst[0, j] = j + 1")
    lets = (("p", base.value, "j + 1"), ("q", Name("p"), "p"))
    expanded = Statement(stmt.target, stmt.value, stmt.domain, stmt.text, lets=lets).expanded()
    assert expanded.target.indices[1] == base.value


def test_bitcast_keeps_low_bits():
    assert bitcast(np.uint32(0x3F800000), np.float32) == np.float32(1.0)
    assert bitcast(np.asarray([0x12345678], np.uint32), np.uint16)[0] == 0x5678
    assert bitcast(np.asarray([-1], np.int64), np.int16)[0] == -1


def test_proportional_cases_keep_the_pair_width(db):
    cases = [c for c in positive_cases(db, db.ops["tsort32"]) if c.mode == "aligned"]
    assert len(cases) >= 4
    exact = 0
    for case in cases:  # each pair takes 64 bits; a base of another type may leave room to spare
        dst, src = (parse_descriptor(case.tiles[n], db.isa) for n in ("dst", "src"))
        assert dst.valid_col * db.isa.dtypes[dst.dtype].bits >= 64 * src.valid_col
        exact += dst.valid_col * db.isa.dtypes[dst.dtype].bits == 64 * src.valid_col
    assert exact


def test_statement_let_may_not_hide_an_operand(tmp_path):
    dest = tmp_path / "specs"
    shutil.copytree(ROOT / "specs", dest)
    path = dest / "ops/tgatherb.yaml"
    text = path.read_text()
    old = 'let: {e: "index(offset[i, j // B]) // bytes(T) + j % B"}'
    assert old in text
    path.write_text(text.replace(old, 'let: {src: "1", e: "index(offset[i, j // B]) // bytes(T) + j % B"}'))
    found, _ = lint_paths(str(dest), [path])
    assert any("hides an operand" in p.one_line() for p in found)


def test_enum_codes_must_name_values(tmp_path):
    dest = tmp_path / "specs"
    shutil.copytree(ROOT / "specs", dest)
    path = dest / "isa.yaml"
    text = path.read_text()
    old = "codes: {BYTE_0: 0, BYTE_1: 1, BYTE_2: 2, BYTE_3: 3}"
    assert old in text
    path.write_text(text.replace(old, "codes: {BYTE_0: 0, BYTE_9: 1}"))
    found, _ = lint_paths(str(dest), [])
    assert any("[isa.enum]" in p.one_line() for p in found)


def merge_model(lists, pairs_out, exhausted):
    """Take the largest head (the lower list on ties) until the destination is full or, when exhausted, a
    list runs out; the pairs taken per list."""
    taken = [0] * len(lists)
    out = []
    while len(out) < pairs_out:
        heads = [a for a in range(len(lists)) if taken[a] < lists[a].shape[1] // 2]
        if not heads:
            break
        pick = max(heads, key=lambda a: (lists[a][0, 2 * taken[a]], -a))
        out.append(lists[pick][0, 2 * taken[pick]:2 * taken[pick] + 2])
        taken[pick] += 1
        if exhausted and any(taken[a] == lists[a].shape[1] // 2 for a in range(len(lists))):
            break
    return np.concatenate(out), taken + [0] * (4 - len(lists))


@pytest.mark.parametrize("exhausted", [False, True])
@pytest.mark.parametrize(("count", "mode"), [(2, "two"), (3, "three"), (4, "four")])
def test_tmrgsort_merges_stably_and_counts(db, tiles, count, mode, exhausted):
    rng = np.random.default_rng(count)
    lengths = [32, 20, 12, 32][:count]
    lists = []
    for n in lengths:
        pairs = np.zeros(2 * n, np.float32)
        pairs[0::2] = np.sort(rng.integers(-3, 3, n).astype(np.float32))[::-1]  # sorted, with ties across lists
        pairs[1::2] = np.arange(n, dtype=np.uint32).view(np.float32)
        lists.append(pairs[None, :])
    total = sum(lengths)
    t = {"dst": f"vec, 1x{2 * total}xf32, valid=1x{2 * (total - 3)}", "executedNumList": "vec, 1x16xu16, valid=1x4",
         "tmp": f"vec, 1x{2 * total}xf32"}
    data = {}
    for b, pairs in enumerate(lists):
        t[f"src{b}"] = f"vec, 1x64xf32, valid=1x{pairs.shape[1]}"
        data[f"src{b}"] = np.pad(pairs, ((0, 0), (0, 64 - pairs.shape[1])))
    out = execute(db, "tmrgsort", mode + ("_exhausted" if exhausted else ""), "cpu", tiles(**t), data)
    want, taken = merge_model(lists, total - 3, exhausted)
    np.testing.assert_array_equal(out["dst"][0, :want.size].view(np.uint32), want.view(np.uint32))
    assert out["executedNumList"][0, :4].tolist() == taken


def block_merge_order(keys, block_pairs):
    """The pair order of merging each group of four blocks of ``block_pairs`` pairs: largest key first, the
    earlier block on ties."""
    order = []
    group = 4 * block_pairs
    for g in range(0, keys.size, group):
        order += sorted(range(g, g + group), key=lambda k: (-float(keys[k]), (k - g) // block_pairs, k))
    return order


@pytest.mark.parametrize(("dtype", "block_len"), [("f32", 64), ("f16", 64), ("f32", 128)])
def test_tmrgsort_single_list_merges_each_group_of_blocks(db, tiles, dtype, block_len):
    np_type, unsigned = (np.float32, np.uint32) if dtype == "f32" else (np.float16, np.uint16)
    per_pair = 8 // np.dtype(np_type).itemsize
    cols = 2 * 4 * block_len
    rng = np.random.default_rng(block_len)
    row = rng.integers(-4, 4, cols).astype(np_type)  # few values: ties within and across blocks
    row[1::per_pair] = np.arange(cols // per_pair).astype(np_type)  # a payload telling the pairs apart
    for start in range(0, cols, block_len):
        keys = row[start:start + block_len:per_pair]
        row[start:start + block_len:per_pair] = np.sort(keys)[::-1]
    t = tiles(dst=f"vec, 1x{cols}x{dtype}", src=f"vec, 1x{cols}x{dtype}", blockLen="u32")
    out = execute(db, "tmrgsort", "single", "cpu", t, {"src": row[None, :], "blockLen": block_len})["dst"]
    pairs = row.view(unsigned).reshape(-1, per_pair)
    want = pairs[block_merge_order(row[::per_pair], block_len // per_pair)]
    np.testing.assert_array_equal(out[0].view(unsigned).reshape(-1, per_pair), want)


def test_generated_single_list_input_is_sorted_per_block(db, tiles):
    from ptospec.conformance.data import make_inputs

    op = db.op("tmrgsort")
    t = tiles(dst="vec, 1x512xf32", src="vec, 1x512xf32", blockLen="u32")
    data = make_inputs(db, op, op.mode("single"), t, 3, "random")
    block = int(data["blockLen"])
    keys = data["src"][0, ::2]
    runs = keys.reshape(-1, block // 2)
    assert (np.diff(runs, axis=1) <= 0).all()
    assert not (np.diff(keys) <= 0).all()  # sorted per block, not over the row


def test_tscatter_64_bit_elements_and_the_hardware_zero_fill(db, tiles):
    src = (np.arange(32, dtype=np.int64).reshape(2, 16) << np.int64(40)) + 7
    idx = np.array([[3] * 16, list(range(16, 32))], np.int32)
    dst = np.full((4, 16), -5, np.int64)
    t = tiles(dst="vec, 4x16xi64", src="vec, 2x16xi64", idx="vec, 2x16xi32")
    for profile, rest in (("cpu", -5), ("a5", 0)):
        out = execute(db, "tscatter", "index", profile, t, {"src": src, "idx": idx, "dst": dst})["dst"]
        want = scatter_model(np.full_like(dst, rest), src, idx)
        np.testing.assert_array_equal(out, want)
