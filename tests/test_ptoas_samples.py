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
    profile, ours, findings, _ = run_board_case(db, case, tmp_path, lambda program: "a2a3", facts.ir_dump_suffix)
    assert profile == "a2a3" and not findings
    np.testing.assert_array_equal(ours["v2"], x)  # copied twice, through a buffer no file initialises
    np.testing.assert_array_equal(np.fromfile(tmp_path / "v2.bin", np.float32), x)


# A fake checkout of our own (tmp_path): the kernel above as Mine/case.pto, with golden and compare scripts that
# follow the assembler's conventions (they read main.cpp, write <param>.bin and golden_<output>.bin).
GOLDEN = """
import re, sys, numpy as np, ml_dtypes
n = {m[0]: int(m[1]) for m in re.findall(r"elemCount_(v\\d+) = (\\d+);", open("main.cpp").read())}
types = {"v1": ml_dtypes.bfloat16, "v2": np.float32, "v3": np.float32, "v4": np.int32}
for k, c in n.items():
    np.zeros(c, types[k]).tofile(f"{k}.bin")
np.zeros(n["v3"] + GOLDEN_EXTRA, np.float32).tofile("golden_v3.bin")
"""
COMPARE = """
import sys, numpy as np
ok = np.array_equal(np.fromfile("v3.bin", np.float32), np.fromfile("golden_v3.bin", np.float32))
print("[INFO] compare passed" if ok else "[ERROR] compare failed")
sys.exit(0 if ok else 2)
"""


def _checkout(root: Path, golden: str = GOLDEN.replace("GOLDEN_EXTRA", "0"), case: str = "case",
              runtime: str = "") -> Path:
    d = root / "test" / "samples" / "Mine"
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{case}.pto").write_text(KERNEL.read_text())
    (d / f"{case}_golden.py").write_text(golden)
    (d / f"{case}_compare.py").write_text(COMPARE)
    (root / "test" / "samples" / "validation_runtime.py").write_text(runtime)
    return root


def _run(args: list[str], capsys) -> tuple[int, str, str]:
    from ptospec.cli import main

    code = main(["ptoas", "samples", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_relative_source_runs_its_samples(tmp_path, monkeypatch, capsys):
    _checkout(tmp_path / "fake")
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(["--source", "fake"], capsys)
    assert "Mine/case" in out and " match " in out and code == 0, out


def test_nothing_runnable_is_a_failure(tmp_path, capsys):
    root = _checkout(tmp_path)
    (root / "test" / "samples" / "Mine" / "case.pto").unlink()  # a golden without its kernel
    code, out, _ = _run(["--source", str(root)], capsys)
    assert "not-runnable" in out and "no sample was runnable" in out and code == 1


def test_a_golden_that_writes_nothing_is_one_samples_error(tmp_path, capsys):
    root = _checkout(tmp_path / "fake")
    _checkout(root, golden="print('wrote nothing')", case="empty")
    report = tmp_path / "out.json"
    code, out, _ = _run(["--source", str(root), "--json", str(report)], capsys)
    import json
    status = {o["sample"]: (o["status"], o["detail"]) for o in json.loads(report.read_text())}
    assert status["Mine/case"][0] == "match"
    assert status["Mine/empty"][0] == "error" and "without writing v1.bin" in status["Mine/empty"][1]
    assert code == 1, out


def test_a_bad_per_case_scalar_table_is_one_line(tmp_path, capsys):
    root = _checkout(tmp_path)
    script = root / "test" / "npu_validation" / "scripts" / "generate_testcase.py"
    script.parent.mkdir(parents=True)
    script.write_text("CASE_INT_SCALAR_DEFAULTS = {'case': {'v5': 'three'}}\n")
    code, _, err = _run(["--source", str(root)], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "[samples.overrides]" in lines[0], err


def test_a_golden_failing_on_our_metadata_and_a_size_disagreement_are_errors(db, facts, tmp_path):
    from ptospec.samples.harness import find_samples, run_sample

    failing = "from validation_runtime import write_buffers\nwrite_buffers(None, {})\n"
    runtime = "def write_buffers(meta, buffers):\n    raise KeyError('missing buffer for v9')\n"
    root = _checkout(tmp_path / "a", golden=failing, runtime=runtime)
    outcome = run_sample(db, root, facts, find_samples(root, facts)[0], {})
    assert outcome.status == "error" and "on our metadata" in outcome.detail, outcome.detail
    root = _checkout(tmp_path / "b", golden=GOLDEN.replace("GOLDEN_EXTRA", "5"))
    outcome = run_sample(db, root, facts, find_samples(root, facts)[0], {})
    assert outcome.status == "error" and "golden_v3.bin holds" in outcome.detail, outcome.detail


def test_the_scripts_get_a_minimal_environment(db, facts, tmp_path, monkeypatch):
    from ptospec.samples.harness import find_samples, run_sample

    monkeypatch.setenv("PTOSPEC_NOT_FOR_SCRIPTS", "1")
    golden = "import os, json\njson.dump(sorted(os.environ), open('env.json', 'w'))\n" + GOLDEN.replace(
        "GOLDEN_EXTRA", "0")
    root = _checkout(tmp_path / "fake", golden=golden)
    outcome = run_sample(db, root, facts, find_samples(root, facts)[0], {}, keep=tmp_path / "keep")
    assert outcome.status == "match", outcome.detail
    import json
    seen = set(json.loads((tmp_path / "keep" / "Mine" / "case" / "env.json").read_text()))
    assert "PTOSPEC_NOT_FOR_SCRIPTS" not in seen and {"PATH", "PYTHONPATH", "SOC_VERSION"} <= seen


def test_the_cross_check_is_contained_and_runs_in_the_scratch_directory(db, facts, tmp_path, monkeypatch):
    import sys

    from ptospec.samples import harness

    root = _checkout(tmp_path / "fake")
    ptoas = tmp_path / "ptoas"
    ptoas.write_text(f"#!{sys.executable}\nimport time\nopen('ptoas-was-here', 'w')\ntime.sleep(30)\n")
    ptoas.chmod(0o755)
    caller = tmp_path / "caller"
    caller.mkdir()
    monkeypatch.chdir(caller)
    monkeypatch.setattr(harness, "SCRIPT_SECONDS", 2)
    sample = harness.find_samples(root, facts)[0]
    outcome = harness.run_sample(db, root, facts, sample, {}, ptoas=ptoas, keep=tmp_path / "keep")
    assert outcome.meta_check == "ptoas failed: ptoas: timed out after 2 s", outcome.meta_check
    assert not list(caller.iterdir()) and (tmp_path / "keep" / "Mine" / "case" / "tooling" / "ptoas-was-here").is_file()


def test_the_largest_error_counts_nan_against_nan_as_equal():
    from ptospec.samples.harness import max_error

    a = np.array([1.0, np.nan, 3.0], np.float32)
    assert max_error(a, np.array([1.5, np.nan, 3.0], np.float32)) == 0.5
    assert np.isnan(max_error(a, np.array([1.0, 2.0, 3.0], np.float32)))
