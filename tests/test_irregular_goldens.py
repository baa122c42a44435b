"""Upstream's A5 NumPy goldens for TSORT32, TSCATTER, TMRGSORT, THISTOGRAM and TGATHER's compare form, run on
the shapes their scripts use, spelled out per script (benchmarks/upstream_goldens.py reaches TSORT32's and
TSCATTER's index-form cases through its generic rules; this checks them independently of the adapter).  Needs a
checkout of hw-native-sys/pto-isa in PTO_ISA_ROOT; the scripts run in a scratch directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ptospec.executor import execute

ROOT = os.environ.get("PTO_ISA_ROOT")
pytestmark = pytest.mark.skipif(not ROOT, reason="set PTO_ISA_ROOT to a checkout of hw-native-sys/pto-isa")
NAMES = {np.float32: "f32", np.float16: "f16", np.int32: "i32", np.int16: "i16", np.int8: "i8",
         np.uint16: "u16", np.uint32: "u32"}


def goldens(tmp_path: Path, op: str) -> Path:
    script = Path(ROOT) / "tests/npu/a5/src/st/testcase" / op / "gen_data.py"
    (tmp_path / "gen_data.py").write_bytes(script.read_bytes())
    subprocess.run([sys.executable, "gen_data.py"], cwd=tmp_path, check=True, capture_output=True, timeout=300)
    return tmp_path


def bits(a: np.ndarray) -> np.ndarray:
    return a.view({2: np.uint16, 4: np.uint32, 1: np.uint8}[a.dtype.itemsize])


@pytest.mark.parametrize(("case", "dtype", "rows", "cols"), [
    (1, np.float32, 2, 32), (2, np.float16, 4, 64), (3, np.float32, 1, 8192), (4, np.float32, 2, 13),
    (5, np.float32, 1, 4164), (6, np.float32, 2, 2084), (7, np.float32, 2, 100)])
def test_tsort32(db, tiles, tmp_path, case, dtype, rows, cols):
    d = goldens(tmp_path, "tsort32") / f"TSort32Test.case{case}"
    src = np.fromfile(d / "input_arr.bin", dtype).reshape(rows, cols)
    idx = np.fromfile(d / "input_idx.bin", np.uint32).reshape(rows, cols)
    name, per, padded = NAMES[dtype], 8 // np.dtype(dtype).itemsize, -(-cols // 32) * 32
    t = {"dst": f"vec, {rows}x{per * padded}x{name}, valid={rows}x{per * cols}",
         "src": f"vec, {rows}x{padded}x{name}, valid={rows}x{cols}",
         "idx": f"vec, {rows}x{padded}xu32, valid={rows}x{cols}"}
    mode = "aligned" if cols % 32 == 0 else "tail"
    if mode == "tail":
        t["tmp"] = f"vec, 1x{padded}x{name}"
    pad = ((0, 0), (0, padded - cols))
    out = execute(db, "tsort32", mode, "a5", tiles(**t), {"src": np.pad(src, pad), "idx": np.pad(idx, pad)})["dst"]
    np.testing.assert_array_equal(bits(out[:, :per * cols].ravel()), bits(np.fromfile(d / "golden_output.bin", dtype)))


def test_tscatter(db, tiles, tmp_path):
    base = goldens(tmp_path, "tscatter")
    ran = 0
    for d in sorted(base.glob("TSCATTERTest.case_*_*_*x*_*x*")):
        parts = d.name.split("_")
        if len(parts) != 5:
            continue  # the mask form's cases
        _, data, index, shape, ishape = parts
        types = {"int32": np.int32, "int16": np.int16, "int8": np.int8, "float": np.float32, "half": np.float16,
                 "uint16": np.uint16, "uint32": np.uint32}
        if data not in types or index not in types:
            continue  # 64-bit elements: not in the tables
        dtype, itype = types[data], types[index]
        rows, cols = map(int, shape.split("x"))
        irows, icols = map(int, ishape.split("x"))
        t = tiles(dst=f"vec, {rows}x{cols}x{NAMES[dtype]}", src=f"vec, {rows}x{cols}x{NAMES[dtype]}",
                  idx=f"vec, {irows}x{icols}x{NAMES[itype]}")
        src = np.fromfile(d / "input.bin", dtype).reshape(rows, cols)
        idx = np.fromfile(d / "indexes.bin", itype).reshape(irows, icols)
        out = execute(db, "tscatter", "index", "a5", t, {"src": src, "idx": idx, "dst": np.zeros((rows, cols), dtype)})
        np.testing.assert_array_equal(bits(out["dst"].ravel()), bits(np.fromfile(d / "golden.bin", dtype)))
        ran += 1
    assert ran >= 6


@pytest.mark.parametrize(("case", "dtype", "cols", "topk"), [
    ("multi1", np.float32, [128, 128, 128, 128], 512), ("multi2", np.float16, [128, 128, 128, 128], 512),
    ("multi3", np.float32, [128, 128, 128, 64], 448), ("multi4", np.float32, [128, 128, 64], 128)])
def test_tmrgsort_lists(db, tiles, tmp_path, case, dtype, cols, topk):
    d = goldens(tmp_path, "tmrgsort") / f"TMRGSORTTest.case_{case}"
    name, per = NAMES[dtype], 8 // np.dtype(dtype).itemsize
    t, data = {"executedNumList": "vec, 1x16xu16, valid=1x4"}, {}
    for b, width in enumerate(cols):
        pairs = np.fromfile(d / f"input{b}.bin", dtype)[:width // 2 * per]
        t[f"src{b}"] = f"vec, 1x{pairs.size}x{name}"
        data[f"src{b}"] = pairs[None, :]
    total, kept = sum(cols) // 2, topk // 2
    t["dst"] = f"vec, 1x{total * per}x{name}, valid=1x{kept * per}"
    t["tmp"] = f"vec, 1x{total * per}x{name}"
    mode = {2: "two", 3: "three", 4: "four"}[len(cols)]
    out = execute(db, "tmrgsort", mode, "a5", tiles(**t), data)["dst"]
    golden = np.fromfile(d / "golden.bin", dtype)[:kept * per]
    np.testing.assert_array_equal(bits(out[0, :kept * per]), bits(golden))


def test_thistogram(db, tiles, tmp_path):
    base = goldens(tmp_path, "thistogram")
    ran = 0
    for d in sorted(base.glob("THISTOGRAMTest.case_*")):
        parts = d.name.split("_")[1:]  # [u32,] RxC, bN[, kK]
        wide = parts[0] == "u32"
        rows, cols = map(int, parts[1 if wide else 0].split("x"))
        byte = int(parts[2 if wide else 1][1:])
        dtype, name = (np.uint32, "u32") if wide else (np.uint16, "u16")
        pcols = -(-cols // 32) * 32  # whole 32-byte rows for the source and for a u8 filter tile of its columns
        src = np.pad(np.fromfile(d / "input.bin", dtype).reshape(rows, cols), ((0, 0), (0, pcols - cols)))
        raw = np.fromfile(d / "idx.bin", np.uint8)
        if wide:
            filters = max(3 - byte, 1)
            idx_rows = raw.reshape(filters, -1)[:, :1]
            idx_desc = f"vec, {filters}x{pcols}xu8, valid={filters}x{cols}" if byte < 3 else "vec, 1x32xu8"
            idx = np.zeros((filters, pcols) if byte < 3 else (1, 32), np.uint8)
            idx[:, :1] = idx_rows[:idx.shape[0]]
        else:
            padded = -(-rows // 32) * 32
            idx_desc = f"vec, {padded}x1xu8, blayout=col_major, valid={rows}x1"
            idx = np.zeros((padded, 1), np.uint8)
            idx[:rows, 0] = raw[:rows]
        t = tiles(dst=f"vec, {rows}x256xu32", src=f"vec, {rows}x{pcols}x{name}, valid={rows}x{cols}", idx=idx_desc,
                  byte=f"BYTE_{byte}")
        out = execute(db, "thistogram", None, "a5", t, {"src": src, "idx": idx})["dst"]
        np.testing.assert_array_equal(out, np.fromfile(d / "golden.bin", np.uint32).reshape(rows, 256), d.name)
        ran += 1
    assert ran >= 20


@pytest.mark.parametrize(("case", "dtype", "ktype", "rows", "cols", "k", "relation"), [
    ("case1_float_topk", np.float32, np.uint32, 16, 64, 32, "GT"),
    ("case2_u32_topk", np.uint32, np.uint32, 8, 128, 64, "GT"),
    ("case3_float_topk", np.float32, np.uint32, 4, 256, 64, "EQ"),
    ("case4_s16_topk", np.int16, np.uint16, 16, 128, 32, "GT"),
    ("case5_s16_topk", np.int16, np.uint16, 4, 64, 32, "EQ"),
    ("case6_half_topk", np.float16, np.uint16, 2, 256, 32, "GT"),
    ("case7_half_topk", np.float16, np.uint16, 8, 128, 32, "EQ")])
def test_tgather_compare(db, tiles, tmp_path, case, dtype, ktype, rows, cols, k, relation):
    d = goldens(tmp_path, "tgather") / f"TGATHERTest.{case}"
    src = np.fromfile(d / "src.bin", dtype).reshape(rows, cols)
    kv = np.zeros((1, 32), ktype)
    kv[0, :rows] = np.fromfile(d / "src1.bin", ktype)[:rows]
    golden = np.fromfile(d / "golden.bin", np.uint32).reshape(rows, k)
    t = tiles(dst=f"vec, {rows}x{cols}xu32", src0=f"vec, {rows}x{cols}x{NAMES[dtype]}",
              kValue=f"vec, 1x32x{NAMES[ktype]}, valid=1x{rows}", cdst="vec, 1x32xu32, valid=1x16",
              tmp="vec, 1x32xu8", cmpMode=relation, offset="i32")
    out = execute(db, "tgather", "compare", "a5", t, {"src0": src, "kValue": kv, "offset": 0,
                                                      "dst": np.zeros((rows, cols), np.uint32)})
    for i in range(rows):  # the golden keeps k results per row, zero after the last match
        count = int(out["cdst"][0, i])
        width = min(count, k)
        np.testing.assert_array_equal(out["dst"][i, :width], golden[i, :width])
        assert not golden[i, width:].any()
