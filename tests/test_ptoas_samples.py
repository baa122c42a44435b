"""The assembler's sample harness: the case metadata the board-test tooling derives from a kernel, derived from
the .pto (``ptospec/samples/meta.py``) on a kernel of our own; and, with a PTOAS checkout in
PTOSPEC_PTOAS_ROOT, two small samples run against their goldens with their own arguments."""

from __future__ import annotations

import os
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ptospec.errors import PtospecError
from ptospec.program.api import read_program, run_program
from ptospec.program.syntax import parse_program
from ptospec.samples.facts import load_sample_facts
from ptospec.samples.meta import derive_meta

PROGRAMS = Path(__file__).parent / "programs"
KERNEL = PROGRAMS / "sample_case.pto"


@pytest.fixture(scope="module")
def facts(db):
    return load_sample_facts(db)


def _meta(db, facts, text: str | None = None, overrides=None):
    program = read_program(KERNEL) if text is None else parse_program(text, "sample_case.pto")
    return derive_meta(db, program, "a2a3", facts, overrides)


def test_parameters_are_named_and_typed_as_the_emitted_cpp(db, facts):
    meta = _meta(db, facts)
    assert meta.kernel == "batch_rows"
    assert [(p.name, p.arg, p.ctype, p.role) for p in meta.params] == [
        ("v1", "x", "bfloat16_t", "input"), ("v2", "w", "float", "input"), ("v3", "y", "float", "output"),
        ("v4", "flag", "int32_t", "input"), ("v5", "b", "int32_t", "scalar"), ("v6", "n", "int32_t", "scalar")]
    assert meta.outputs == ("v3",)
    assert meta.scalars == {"v5": 1, "v6": 1}  # the tooling's default for an integer scalar


def test_element_counts_reach_the_last_element_of_every_view(db, facts):
    meta = _meta(db, facts)
    # %x: 16 rows x 64 columns at row %b = 1 (256 elements) and column block 3 (192), row stride 256
    rows, cols, stride = 16, 64, 256
    assert meta.elem_counts["v1"] == 1 + (rows - 1) * stride + (cols - 1) + 1 * stride + 3 * cols
    assert meta.elem_counts["v3"] == 1 + (rows - 1) * stride + (cols - 1) + 3 * cols
    # no view reaches %w and %flag: rows x cols of the first view
    assert meta.elem_counts["v2"] == meta.elem_counts["v4"] == rows * cols


def test_a_per_case_scalar_value_moves_the_batch_offset(db, facts):
    base = _meta(db, facts)
    moved = _meta(db, facts, overrides={"v5": 3})
    assert moved.scalars["v5"] == 3
    assert moved.elem_counts["v1"] == base.elem_counts["v1"] + 2 * 256
    assert moved.elem_counts["v3"] == base.elem_counts["v3"]


def test_a_per_case_zero_is_written_as_the_default_but_sizes_the_buffers(db, facts):
    base = _meta(db, facts)
    zero = _meta(db, facts, overrides={"v5": 0})
    assert zero.scalars["v5"] == 1  # main.cpp's `value or default` (samples.zero_override_written_as_default)
    assert zero.elem_counts["v1"] == base.elem_counts["v1"] - 256


def test_without_a_store_the_last_pointer_is_the_output(db, facts):
    text = KERNEL.read_text().replace("pto.tstore ins(%d : !dst) outs(%yp : !pto.partition_tensor_view<16x64xf32>)",
                                      "")
    meta = _meta(db, facts, text)
    assert meta.outputs == ("v4",)
    assert meta.elem_counts["v3"] == 16 * 64  # no view of %y is used any more


def test_main_cpp_declares_what_the_golden_scripts_read(db, facts):
    text = _meta(db, facts).main_cpp()
    assert "size_t elemCount_v1 = 4352;" in text
    assert "size_t fileSize_v1 = elemCount_v1 * sizeof(uint16_t);" in text  # bfloat16_t's host type
    assert "int32_t v5 = 1;" in text
    assert text.index('ReadFile("./v1.bin"') < text.index('ReadFile("./v4.bin"')


def test_buffers_of_the_derived_sizes_run_and_one_element_less_does_not(db, facts):
    meta = _meta(db, facts)
    rng = np.random.default_rng(0)

    def args(shrink: str | None):
        out = {}
        for p in meta.params:
            if p.pointer:
                n = meta.elem_counts[p.name] - (p.name == shrink)
                dt = {"bf16": ml_dtypes.bfloat16, "f32": np.float32, "i32": np.int32}[p.dtype]
                out[p.arg] = rng.standard_normal(n).astype(dt)
            else:
                out[p.arg] = meta.scalars[p.name]
        return out

    given = args(None)
    result = run_program(db, read_program(KERNEL), given, "a2a3")
    x = given["x"].astype(np.float32)[256:256 + 16 * 256].reshape(16, 256)
    np.testing.assert_array_equal(result.outputs["y"].reshape(-1)[:16 * 256].reshape(16, 256), x)
    with pytest.raises(PtospecError):
        run_program(db, read_program(KERNEL), args("v1"), "a2a3")


def test_the_command_refuses_a_folder_that_is_no_checkout(tmp_path, capsys):
    from ptospec.cli import main

    assert main(["ptoas", "samples", "--source", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "[samples.root]" in err[0] and "not a directory" in err[0]


ROOT = os.environ.get("PTOSPEC_PTOAS_ROOT")


@pytest.mark.skipif(not ROOT, reason="PTOSPEC_PTOAS_ROOT is not set (a checkout of hw-native-sys/PTOAS)")
@pytest.mark.parametrize("name, finding", [
    ("Addc/addc", None),
    # a batch offset of 1 moves the rows past the view's declared 16: the run goes on and reports it
    ("Qwen3DecodeA3/qwen3_decode_incore_10", "view.partition-dynamic-bounds"),
    ("FFN/npu_validation", None),  # a committed case: three kernels launched in order by its main.cpp
])
def test_a_sample_matches_its_golden(db, facts, name, finding):
    from ptospec.samples.harness import find_samples, run_sample, scalar_overrides

    root = Path(ROOT)
    sample = next(s for s in find_samples(root, facts) if s.name == name)
    outcome = run_sample(db, root, facts, sample, scalar_overrides(root, facts))
    assert outcome.status == "match", outcome.detail
    assert outcome.max_error
    assert (finding is None) == (not outcome.findings)
    assert finding is None or all(f"[{finding}]" in line for line in outcome.findings)


MAIN_CPP = """
int main() {
    size_t fileSize = 4 * 8 * sizeof(float);
    int32_t v9 = 0;
    ReadFile("./v1.bin", fileSize, srcHost0, fileSize);
    aclrtMalloc((void **)&srcDevice0, fileSize, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&srcDevice1, fileSize, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&dstDevice0, fileSize, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(srcDevice0, fileSize, srcHost0, fileSize, ACL_MEMCPY_HOST_TO_DEVICE);
    LaunchDynamic(srcDevice0, srcDevice1, v9, stream);
    LaunchDynamic(srcDevice1, dstDevice0, v9, stream);
    aclrtMemcpy(dstHost0, fileSize, dstDevice0, fileSize, ACL_MEMCPY_DEVICE_TO_HOST);
    WriteFile("./v2.bin", dstHost0, fileSize);
}
"""
LAUNCH_CPP = """
void LaunchDynamic(float *v1, float *v2, int32_t v3, void *stream) {
    dynamic<<<1, nullptr, stream>>>(v1, v2, v3);
}
"""


def test_a_committed_case_runs_the_launches_of_its_main_cpp(db, facts, tmp_path):
    from ptospec.samples.boards import read_board_case, run_board_case, sizes_of

    case_dir = tmp_path / "Mine" / "npu_validation"
    case_dir.mkdir(parents=True)
    (case_dir / "main.cpp").write_text(MAIN_CPP)
    (case_dir / "launch.cpp").write_text(LAUNCH_CPP)
    (tmp_path / "Mine" / "copy.pto").write_text((PROGRAMS / "dynamic_partition.pto").read_text())
    case = read_board_case(case_dir, sizes_of(db, facts))
    assert [(launch.kernel, launch.args) for launch in case.launches] == [
        ("dynamic", ("srcDevice0", "srcDevice1", "v9")), ("dynamic", ("srcDevice1", "dstDevice0", "v9"))]
    assert case.inputs == {"srcDevice0": "v1"} and case.outputs == {"dstDevice0": "v2"}
    assert case.sizes == {"srcDevice0": 128, "srcDevice1": 128, "dstDevice0": 128} and case.scalars == {"v9": 0}
    x = np.arange(32, dtype=np.float32)
    x.tofile(tmp_path / "v1.bin")
    profile, ours, findings, _ = run_board_case(db, case, tmp_path, lambda program: "a2a3")
    assert profile == "a2a3" and not findings
    np.testing.assert_array_equal(ours["v2"], x)  # copied twice, through a buffer no file initialises
    np.testing.assert_array_equal(np.fromfile(tmp_path / "v2.bin", np.float32), x)
