"""The case search's shortcuts are exact, property draws are legal, and a run ends with one summary line."""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path

import pytest

from ptospec.conformance import cases
from ptospec.validator import validate

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("op", ["tcolmax", "tadds"])
def test_skipping_checks_finds_the_same_cases(db, op, monkeypatch):
    """Rule field dependencies only skip checks that cannot change the outcome: a search that checks every
    rounding and every mutation finds exactly the same cases."""
    quick = cases.all_cases(db, db.op(op))
    monkeypatch.setattr(cases, "_touches", lambda reads, changed: True)
    monkeypatch.setattr(cases, "_legality_blocked", lambda db, op, mode, report: (False, False, False))
    monkeypatch.setattr(cases, "_fixed_violations", lambda db, op, mode, report: set())
    thorough = cases.all_cases(db, db.op(op))
    assert quick == thorough
    assert [c.tiles for c in quick[0] + quick[1]] == [c.tiles for c in thorough[0] + thorough[1]]


@pytest.mark.parametrize(("op", "mode", "profile"), [("trowexpandadd", "block", "cpu"),
                                                     ("trowexpandadd", "column", "a5"),
                                                     ("tadd", "default", "a2a3")])
def test_property_draws_are_legal_and_keep_what_they_can(db, op, mode, profile):
    spec = db.op(op)
    mode_spec = spec.mode(mode)
    combos = [b for b in cases.dtype_combos(db, spec, mode_spec, profile)
              if cases.feasible(db, spec, mode_spec, profile, b)]
    layouts = len(cases.base_variants(db, mode_spec))
    rng = random.Random(7)
    shapes = set()
    for _ in range(25):
        binding = rng.choice(combos)
        target = (rng.randint(*cases.PROPERTY_ROWS), rng.randint(*cases.PROPERTY_COLS))
        partial, layout = rng.random() < 0.5, rng.randrange(layouts)
        tiles = cases.legal_configuration(db, spec, mode_spec, profile, binding, target, partial, layout)
        assert tiles is not None
        report = validate(db, op, mode, profile, tiles)
        assert report.ok and not report.deferred
        valid = {(t.valid_row, t.valid_col) for t in tiles.values() if hasattr(t, "valid_row")}
        if cases.configurations(db, spec, mode_spec, profile, binding, target, partial, layout) is not None:
            assert any(v == target or v[0] == target[0] for v in valid)  # the drawn region (or its rows) kept
        shapes.add(frozenset(valid))
    assert len(shapes) > 10  # draws spread over many valid regions, not one fallback


def _run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = pytest.main([str(ROOT / "generated_tests" / "test_tabs.py"), "--pto-profile=a5", "-p",
                            "no:cacheprovider", "--capture=sys", "-q", "-o", "addopts=", "-p", "no:benchmark", *args])
    return int(code), out.getvalue()


def test_a_run_ends_with_one_summary_line_unless_the_matrix_is_asked_for(tmp_path):
    code, out = _run("-k", "positive")
    assert code == 0, out
    assert "PTO conformance matrix" not in out
    summary = [line for line in out.splitlines() if line.startswith("PTO conformance (backend: reference):")]
    assert len(summary) == 1 and " passed, 0 failed, " in summary[0] and "--pto-matrix" in summary[0]
    # with pytest-xdist the controller counts the reports its worker(s) send, as a serial run counts its own
    report = tmp_path / "matrix.json"
    code, out = _run("-k", "positive", "--pto-matrix", "-n", "1", f"--pto-report={report}")
    assert code == 0, out
    assert "PTO conformance matrix" in out and "tabs" in out and "total" in out
    cells = json.loads(report.read_text())["matrix"]
    passed = sum(c["passed"] for c in cells)
    assert f"{passed} passed, 0 failed, " in summary[0], (passed, summary[0])
    # --pto-report alone writes the matrix and names the file; the terminal keeps its one summary line
    code, out = _run("-k", "positive", f"--pto-report={report}")
    assert code == 0, out
    assert "PTO conformance matrix" not in out and f"wrote {report}" in out
    assert len([line for line in out.splitlines() if line.startswith("PTO conformance (backend:")]) == 1


def test_divided_shapes_keep_the_destinations_at_half_a_source_row(db):
    """TDEINTERLEAVE's single form shapes its destinations ``[rows, cols/2]``: every generated positive case
    gives them half the source's valid columns, so the form is tested at all."""
    spec = db.op("tdeinterleave")
    positive, _ = cases.all_cases(db, spec)
    single = [c for c in positive if c.mode == "single"]
    assert len(single) >= 20
    for case in single:
        src, dst0, dst1 = (cases.descriptor(db, case.tiles[n]) for n in ("src", "dst0", "dst1"))
        assert 2 * dst0.valid_col == src.valid_col and dst1.valid_col == dst0.valid_col
        assert dst0.valid_row == src.valid_row


def test_a_unit_that_shares_a_search_signature_gets_the_cases_its_own_search_finds(db):
    """gen-tests gives a unit whose search_signature an earlier unit has that unit's cases, renamed (op name and
    seeds): they must be the cases the unit's own search finds.  TMIN and TMAX on cpu share one signature."""
    from ptospec.conformance.cases import renamed, search_signature, unit_search

    tmax, tmin = db.ops["tmax"], db.ops["tmin"]
    assert search_signature(db, tmax, "default", "cpu") == search_signature(db, tmin, "default", "cpu")
    assert search_signature(db, tmax, "default", "cpu") != search_signature(db, tmax, "default", "a2a3")
    shared = renamed("tmin", *unit_search(db, tmax, "default", "cpu"))
    own = unit_search(db, tmin, "default", "cpu")[:2]
    assert shared == own and own[0]
