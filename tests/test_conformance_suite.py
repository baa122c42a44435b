"""The generated suite passes on the reference backend and catches deliberately wrong backends."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from pathlib import Path

import pytest

from ptospec.asm.types import parse_descriptor
from ptospec.conformance.generate import fingerprint, render_module
from ptospec.conformance.sync import seal, sync

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "generated_tests"


def run_suite(tmp_path: Path, backend: str, module: str, profile: str, *extra: str) -> tuple[int, dict, str]:
    """Run one generated module against a backend in this process (as pytest's own pytester does: a
    fresh session, its terminal output captured), returning exit code, JSON report and output."""
    report = tmp_path / "report.json"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = pytest.main([str(SUITE / module), f"--pto-backend={backend}", f"--pto-profile={profile}",
                            f"--pto-report={report}", "-p", "no:cacheprovider", "--capture=sys", "-q", "-o", "addopts=",
                            "-p", "no:benchmark", *extra])
    data = json.loads(report.read_text()) if report.exists() else {}
    return int(code), data, out.getvalue()


def failed_ids(data: dict) -> set[str]:
    return {nodeid.split("::", 1)[1] for nodeid in data["failures"]}


def module_cases(name: str, kind: str, profile: str, db) -> list:
    """(test id, Case) of one list of a generated module, without importing it through pytest."""
    spec = importlib.util.spec_from_file_location(f"generated_{name[:-3]}", SUITE / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [(p.id, p.values[0]) for p in getattr(module, kind) if p.values[0].profile == profile]


def test_suite_is_up_to_date(db):
    result = sync(db, SUITE, check=True)
    assert not result.out_of_date, f"stale: {result.stale + result.missing + result.extra}; run `ptospec gen-tests`"


def test_generation_is_deterministic(db):
    # the fingerprint check above trusts the recorded fingerprint; rendering again must give the same bytes
    for name in ("tmax", "tcmp"):
        assert seal(render_module(db, db.op(name))) == (SUITE / f"test_{name}.py").read_text()


def test_fingerprint_follows_the_spec(db):
    from dataclasses import replace

    op = db.op("tmax")
    changed = replace(op, raw={**op.raw, "summary": {"en": "changed", "zh": "changed"}})
    assert fingerprint(db, changed) != fingerprint(db, op)


def test_reference_backend_passes(tmp_path):
    code, data, out = run_suite(tmp_path, "reference", "test_tcolargmax.py", "a2a3")
    assert code == 0, out
    assert data["failures"] == []
    assert sum(c["passed"] for c in data["matrix"]) > 30
    assert "PTO conformance matrix" not in out, "--pto-report writes the matrix; --pto-matrix prints it"


def test_argmax_off_by_one_is_caught(tmp_path, db):
    code, data, out = run_suite(tmp_path, "tests.buggy_backends:ArgmaxOffByOne", "test_tcolargmax.py", "a2a3")
    assert code == 1
    failed = failed_ids(data)
    positives = {f"test_positive[{i}]" for i, _ in module_cases("test_tcolargmax.py", "POSITIVE", "a2a3", db)}
    assert failed >= positives
    assert not any(f.startswith("test_must_reject") for f in failed)
    assert "repro (Python):" in out and "ptospec check tcolargmax" in out


def test_write_outside_valid_region_is_caught(tmp_path, db):
    code, data, out = run_suite(tmp_path, "tests.buggy_backends:WritesOutsideValid", "test_tcolmin.py", "a5",
                                "-k", "not property")
    assert code == 1
    expected = set()
    for ident, case in module_cases("test_tcolmin.py", "POSITIVE", "a5", db):
        dst = parse_descriptor(case.tiles["dst"], db.isa)
        if dst.valid_row < dst.rows or dst.valid_col < dst.cols:
            expected.add(f"test_positive[{ident}]")
    assert expected, "the generated cases must include destinations larger than their valid region"
    assert failed_ids(data) == expected
    assert "outside the valid region" in out


def test_accepting_an_illegal_dtype_is_caught(tmp_path, db):
    code, data, _out = run_suite(tmp_path, "tests.buggy_backends:AcceptsIllegalDtype", "test_tmax.py", "a2a3")
    assert code == 1
    expected = {f"test_must_reject[{i}]" for i, c in module_cases("test_tmax.py", "MUST_REJECT", "a2a3", db)
                if c.reject.startswith("dtype.")}
    assert expected
    assert failed_ids(data) == expected
    assert all("dtype." in f for f in failed_ids(data))


def test_unsupported_cases_are_skipped(tmp_path):
    code, data, out = run_suite(tmp_path, "tests/example_backend.py:ExampleBackend", "test_tmax.py", "a2a3",
                                "-rs")
    assert code == 0, out
    assert all(c["passed"] == 0 and c["skipped"] > 0 for c in data["matrix"])
    assert "profile a2a3 not supported" in out


@pytest.mark.parametrize(("backend", "spread"),
                         [("reference", True), ("tests/example_backend.py:ExampleBackend", False)])
def test_auto_workers_leave_other_backends_in_one_process(backend, spread, monkeypatch):
    """``-n auto`` (the project's default) spreads the reference backend over workers, but runs any other
    backend in one process: its ``prepare`` batches every collected case, which each worker would repeat."""
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "2")  # xdist's answer for -n auto on any machine

    class Seen:
        numprocesses = None

        @pytest.hookimpl(trylast=True)
        def pytest_configure(self, config):
            Seen.numprocesses = config.option.numprocesses

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        pytest.main([str(SUITE / "test_tmax.py"), f"--pto-backend={backend}", "-n", "auto", "--collect-only",
                     "-p", "no:cacheprovider", "-q", "-o", "addopts=", "-p", "no:benchmark"], plugins=[Seen()])
    assert Seen.numprocesses == (2 if spread else 0)


@pytest.mark.parametrize("backend", ["nope", "no.such.module:X", "tests/example_backend.py:Missing"])
def test_bad_backend_name_is_a_usage_error(tmp_path, backend):
    code, _data, out = run_suite(tmp_path, backend, "test_tcolmin.py", "a5", "-k", "property")
    assert code != 0
    assert "ptospec:" in out and "Traceback" not in out


def test_gen_tests_check_and_foreign_files(tmp_path):
    import shutil

    from ptospec.cli import main

    out = tmp_path / "suite"
    assert main(["--specs", str(ROOT / "specs"), "gen-tests", "--out", str(out), "--check"]) == 1  # all missing
    shutil.copytree(SUITE, out)  # up to date by fingerprint: nothing is rendered again below
    (out / "test_mine.py").write_text("# hand-written\n")
    (out / "test_old.py").write_text("# generated by ptospec — do not edit\n")
    assert main(["--specs", str(ROOT / "specs"), "gen-tests", "--out", str(out)]) == 0
    assert (out / "test_mine.py").read_text() == "# hand-written\n"
    assert not (out / "test_old.py").exists()
    assert main(["--specs", str(ROOT / "specs"), "gen-tests", "--out", str(out), "--check"]) == 0
    (out / "test_tcolmin.py").write_text("# generated by ptospec — do not edit\n")
    assert main(["--specs", str(ROOT / "specs"), "gen-tests", "--out", str(out), "--check"]) == 1
