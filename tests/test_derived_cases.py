"""Derived cases: other valid regions and data sets of each fixed case's static configuration."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ptospec.conformance.backend import Result
from ptospec.conformance.cases import legal
from ptospec.conformance.derive import derived_cases, patterns_for
from ptospec.conformance.reference import ReferenceBackend
from ptospec.conformance.runner import ConformanceFailure, Runner, Unsupported
from ptospec.tile import TileDesc
from ptospec.validator import validate
from tests.buggy_backends import FlushesSubnormals

SUITE = Path(__file__).resolve().parent.parent / "generated_tests"


def fixed(op: str, kind: str = "POSITIVE", profile: str = "cpu") -> list:
    spec = importlib.util.spec_from_file_location(f"derived_{op}", SUITE / f"test_{op}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [(p.id, p.values[0]) for p in getattr(module, kind) if p.values[0].profile == profile]


def static(tiles: dict) -> dict:
    return {n: t.with_(valid_row=0, valid_col=0) if isinstance(t, TileDesc) else t for n, t in tiles.items()}


@pytest.mark.parametrize("op", ["tadd", "tcolmin", "trowsum", "tcmps", "tcolargmax"])
def test_derived_cases_keep_the_static_configuration_and_are_legal(db, op):
    regions = set()
    for ident, case in fixed(op)[:12]:
        tiles = case.parsed(db)
        derived = derived_cases(db, case, tiles, ident, 8)
        assert 0 < len(derived) <= 8, ident
        assert len({d.label for d in derived}) == len(derived)
        for d in derived:
            assert static(d.tiles) == static(tiles)  # same compiled variant: only valid shapes differ
            assert legal(validate(db, op, case.mode, case.profile, d.tiles)) and legal(d.report)
            assert d.pattern in patterns_for(db, op, case.profile)
            first = next(t for t in d.tiles.values() if isinstance(t, TileDesc))
            regions.add((first.valid_row == first.rows, first.valid_row == 1, first.valid_col == 1))
        assert {d.pattern for d in derived} >= {"special", "edge"} - {case.pattern}
    assert len(regions) >= 3  # full, one-row and one-column regions among them


def test_must_reject_cases_and_a_count_of_zero_derive_nothing(db):
    ident, case = fixed("tadd", "MUST_REJECT")[0]
    assert derived_cases(db, case, case.parsed(db), ident, 8) == []
    ident, case = fixed("tadd")[0]
    assert derived_cases(db, case, case.parsed(db), ident, 0) == []


def test_large_counts_add_data_sets_without_more_validator_calls(db, monkeypatch):
    import ptospec.conformance.derive as derive

    calls = []
    real = derive.validate
    monkeypatch.setattr(derive, "validate", lambda *a: calls.append(a) or real(*a))
    ident, case = fixed("tmax")[0]
    derived = derived_cases(db, case, case.parsed(db), ident, 40)
    assert len(derived) == 40 and len({d.label for d in derived}) == 40
    assert len({d.seed for d in derived}) == 40  # every data set its own
    assert len(calls) <= 1 + derive.MAX_REGION_TRIES
    assert any(d.label.endswith("-2") for d in derived)  # a second round of data over the same regions
    assert "ieee" in {d.pattern for d in derived}  # tmax defines NaN, infinities and signed zeros on cpu


def check_all(runner: Runner, cases) -> list[str]:
    failed = []
    for ident, case in cases:
        try:
            runner.check(case)
        except Unsupported:
            pass
        except ConformanceFailure:
            failed.append(ident)
    return failed


def test_derived_special_values_catch_what_the_fixed_cases_miss(db):
    cases = [c for c in fixed("tadd") if "f32" in c[0] or "f16" in c[0]]
    plain = Runner(db, FlushesSubnormals(db), "ftz")
    assert check_all(plain, cases) == []  # the fixed cases hold no subnormals
    widened = Runner(db, FlushesSubnormals(db), "ftz")
    widened.derive = 8
    failed = check_all(widened, cases)
    assert failed
    labels = {d.case for d in widened.divergences}
    assert all("/" in label and "special" in label.split("/")[1] for label in labels)  # derived ones only
    assert widened.tally["failed"] == len(widened.divergences)
    assert widened.tally["passed"] + widened.tally["failed"] > 5 * len(cases)


def test_reference_backend_passes_every_derived_case(db):
    runner = Runner(db, ReferenceBackend(db), "reference")
    runner.derive = 8
    cases = fixed("tcolmin") + fixed("trowsum")
    assert check_all(runner, cases) == []
    assert runner.tally["failed"] == 0 and runner.tally["passed"] > 6 * len(cases)


class BatchedFtz(FlushesSubnormals):
    """The same bug behind a ``prepare`` hook, so the runner derives and checks in worker processes."""

    def prepare(self, cases, progress=None) -> None:
        self.prepared = len(cases)

    def artifacts(self, case) -> dict[str, str]:
        return {"cpp_core": f"// {case.op} {case.descriptors['dst']}"}


def test_worker_processes_reach_the_same_verdicts(db):
    cases = [c for c in fixed("tadd") if "f32" in c[0] or "f16" in c[0]]
    inline = Runner(db, BatchedFtz(db), "ftz")
    inline.derive = 8
    inline.prepare([c for _, c in cases])
    expected = check_all(inline, cases)
    pooled = Runner(db, BatchedFtz(db), "ftz")
    pooled.derive, pooled.workers = 8, 2
    pooled.prepare([c for _, c in cases])
    assert pooled._checks is not None and pooled.backend.prepared == inline.backend.prepared > 8 * len(cases) // 2
    assert check_all(pooled, cases) == expected and expected
    assert pooled.tally == inline.tally
    assert [d.case for d in pooled.divergences] == [d.case for d in inline.divergences]
    assert all(d.artifacts["cpp_core"].startswith("// tadd vec") for d in pooled.divergences)


class RejectsF16(ReferenceBackend):
    """Prepares in batches (recording their sizes) and rejects every f16 case."""

    def prepare(self, cases, progress=None) -> None:
        self.batches = [*getattr(self, "batches", []), len(cases)]

    def run(self, case) -> Result:
        if case.tiles["dst"].dtype == "f16":
            return Result.reject("no f16 here")
        return super().run(case)


def test_derived_cases_are_made_only_for_fixed_cases_the_backend_ran(db):
    cases = [c for _, c in fixed("tadd")]
    runner = Runner(db, RejectsF16(db), "no-f16")
    runner.derive = 4
    runner.prepare(cases)
    f16 = [c for c in cases if c.parsed(db)["dst"].dtype == "f16"]
    assert f16 and not any(runner._derived.get(c) for c in f16)
    assert len(runner.backend.batches) == 2  # the fixed cases, then the derived cases of those that ran
    assert runner.backend.batches[1] == sum(len(v) for v in runner._derived.values()) > 0
    failed = check_all(runner, [(c.op, c) for c in cases])
    assert len(failed) == len(f16) and runner.tally["skipped"] == 0  # rejected: nothing derived to skip
