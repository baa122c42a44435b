"""The PTO assembler as a backend: the printed modules proven by our own program layer (no ptoas needed),
discovery, the verifier's batching against a stand-in ptoas, shards and merged reports; live tests read
PTOSPEC_PTOAS (the binary) and PTOSPEC_PTO_ISA (a pto-isa checkout) and are skipped without them.

PTOSPEC_PTOAS_SWEEP=1 checks every generated case instead of a sample (minutes)."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from ptospec.backends.ptoas.attribute import LOWERING, SIMULATOR, UNATTRIBUTED, VERIFIER, attribute, verdict
from ptospec.backends.ptoas.discover import find_ptoas
from ptospec.backends.ptoas.exchange import outputs_from, program_args
from ptospec.backends.ptoas.module import NotExpressible, case_function, module_text
from ptospec.backends.ptoas.spec import load_ptoas_spec
from ptospec.backends.ptoas.table import normalised, suite_cases
from ptospec.backends.ptoas.verifier import Job, verify_batch
from ptospec.cli import main
from ptospec.conformance.backend import Result
from ptospec.conformance.data import make_inputs
from ptospec.conformance.divergence import Divergence
from ptospec.conformance.merge import merge
from ptospec.conformance.shard import deal, parse_shard
from ptospec.errors import InvocationError
from ptospec.executor import execute
from ptospec.program.api import check_program, run_program
from ptospec.program.syntax import parse_program
from ptospec.tile import AttrDesc

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "generated_tests"
SWEEP = bool(os.environ.get("PTOSPEC_PTOAS_SWEEP"))
PTOAS = os.environ.get("PTOSPEC_PTOAS")
PTO_ISA = os.environ.get("PTOSPEC_PTO_ISA")
# One op of each shape of operand list: tiles only, a scalar, an attribute, a tmp tile, a global view in and
# out, an in-place alias, a conversion, a matrix multiply (Left/Right/Acc tiles).
SAMPLE = ("tadd", "tadds", "tcmp", "trowmax", "tload", "tstore", "tfillpad_inplace", "tcvt", "tmatmul", "tsel",
          "treshape", "tprint", "textract")


@pytest.fixture(scope="module")
def spec(db):
    return load_ptoas_spec(db)


def _cases(ops, kind, per_unit: int):
    """``per_unit`` cases of each op x mode x profile with an assembler target (every case with SWEEP)."""
    seen: dict[tuple, int] = {}
    out = []
    for tid, case in suite_cases(SUITE, None if SWEEP else ops):
        if case.profile == "cpu" or case.kind != kind:
            continue
        key = (case.op, case.mode, case.profile)
        seen[key] = seen.get(key, 0) + 1
        if SWEEP or seen[key] <= per_unit:
            out.append(pytest.param(case, id=tid.split("[", 1)[1].rstrip("]") + f"-{case.op}"))
    return out


def _mode(db, case):
    op = db.ops[case.op]
    return op, next(m for m in op.modes if m.name == case.mode)


def _function(db, spec, case, **kw):
    op, mode = _mode(db, case)
    try:
        return case_function(db, spec, op, mode, case.parsed(db), "k", **kw)
    except NotExpressible as exc:
        pytest.skip(f"not expressible in the dialect: {exc}")


def test_spec_names_the_uncovered_instructions(db, spec):
    assert len(spec.uncovered) == 22 and set(spec.uncovered) <= {op.mnemonic for op in db.ops.values()}
    assert spec.arch == {"a2a3": "a3", "a5": "a5"}
    assert ("Left", "blayout", "ColMajor") in spec.normalisations("a5")


@pytest.mark.parametrize("case", _cases(SAMPLE, "positive", 2))
def test_printed_positive_case_checks_clean(db, spec, case):
    fn = _function(db, spec, case)
    program = parse_program(module_text([fn], spec.arch[case.profile]), "case.pto")
    result = check_program(db, program)
    # The dps line names no mode: where two modes take the same operands (MGATHER row and elem), a case legal
    # in both reads as ambiguous, as it is in the assembler's dialect (which has no mode attribute either).
    problems = [v for v in result.violations if not (v.rule == "asm.ambiguous-mode" and case.mode in v.message)]
    assert not problems, [str(v) for v in problems]


@pytest.mark.parametrize("case", _cases(SAMPLE, "reject", 2))
def test_printed_must_reject_case_breaks_its_rule(db, spec, case):
    """The printed function breaks the case's rule, or the rule needs what a program does not state (the
    length of a pointer's buffer): then our checker defers it, as ptoas cannot check it either."""
    fn = _function(db, spec, case)
    program = parse_program(module_text([fn], spec.arch[case.profile]), "case.pto")
    result = check_program(db, program)
    rules = {v.rule for v in result.violations}
    if not rules and not result.deferred:
        # legal as another mode taking the same operands (MGATHER elem for a row case): the table counts it as
        # not expressed (``table._stated``)
        pytest.skip(f"the printed function states no violation of {case.reject}: another mode reads it")
    assert case.reject in rules or any(case.reject in str(d) for d in result.deferred), (case.reject, rules)


@pytest.mark.parametrize("case", _cases(SAMPLE, "positive", 1))
def test_runnable_function_runs_to_the_executors_result(db, spec, case):
    """The function that loads every tile from global memory, runs the instruction on the case's valid shapes
    and stores the outputs back gives, on our program layer, exactly the reference executor's outputs."""
    fn = _function(db, spec, case, io=True)
    op, mode = _mode(db, case)
    tiles = case.parsed(db)
    inputs = make_inputs(db, op, mode, tiles, case.seed, case.pattern)
    want = execute(db, op.name, mode.name, case.profile, tiles, inputs)
    program = parse_program(module_text([fn], spec.arch[case.profile]), "case.pto")
    assert not check_program(db, program).violations
    got = outputs_from(mode, fn, tiles, run_program(db, program, program_args(db, fn, tiles, inputs)).outputs)
    assert set(got) == set(want)
    for name in want:
        assert np.array_equal(np.asarray(want[name]).view(np.uint8), np.asarray(got[name]).view(np.uint8)), name


def test_a_case_outside_the_dialect_says_why(db, spec):
    case = next(c for _, c in suite_cases(SUITE, ["tmatmul_mx"]) if c.profile == "a5")
    op, mode = _mode(db, case)
    with pytest.raises(NotExpressible, match=r"scale_left|element type"):
        case_function(db, spec, op, mode, case.parsed(db), "k")


def test_dialect_forms_of_specs_ptoas(db, spec, tiles):
    """An SSA-only operation prints its result as a value; an attribute the operation lacks is left out at its
    default and makes any other value unwritable; a mode the operation cannot write says why."""
    t = {"src": tiles(a="vec, 16x16xf16, valid=16x16")["a"], "dst": tiles(a="vec, 16x8xf32, valid=16x8")["a"]}
    op = db.ops["treshape"]
    fn = case_function(db, spec, op, op.modes[0], t, "k")
    assert "%dst = pto.treshape %src : !pto.tile_buf" in fn.text and "alloc_tile : !pto.tile_buf<loc=vec, dtype=f32" \
        not in fn.text
    assert not check_program(db, parse_program(module_text([fn], "a3"), "c.pto")).violations
    op = db.ops["tprint"]
    mode = op.mode("tile")
    src = tiles(a="vec, 8x16xf32, valid=5x10")["a"]
    fmt = next(o for o in mode.operands if o.name == "format")
    default = fmt.dialect_default  # the spec's, not typed here
    other = next(v for v in db.isa.enums[fmt.enum].values if v != default)
    fn = case_function(db, spec, op, mode, {"src": src, "format": AttrDesc(default)}, "k")
    assert "format" not in fn.text
    with pytest.raises(NotExpressible, match="only its default"):
        case_function(db, spec, op, mode, {"src": src, "format": AttrDesc(other)}, "k")
    case = next(c for _, c in suite_cases(SUITE, ["tconcat"]) if c.mode == "index" and c.profile == "a5")
    op, mode = _mode(db, case)
    with pytest.raises(NotExpressible, match="no index tiles"):
        case_function(db, spec, op, mode, case.parsed(db), "k")


def test_attribution_compares_the_two_paths():
    """Same outputs or the same failure: the simulator's; other outputs, or only the ptoas C++ failing: the
    assembler's lowering; a function ptoas rejected: its verifier."""
    a, b = {"dst": np.array([1, 2], np.int32)}, {"dst": np.array([1, 3], np.int32)}
    assert verdict(Result.ok(a), False, Result.ok(dict(a)))[0] == SIMULATOR
    assert verdict(Result.ok(a), False, Result.ok(b))[0] == LOWERING
    assert verdict(Result.harness_error("x"), False, Result.ok(b))[0] == LOWERING
    assert verdict(Result.harness_error("x"), False, Result.harness_error("y"))[0] == SIMULATOR
    assert verdict(Result.reject("ptoas"), True, None)[0] == VERIFIER
    assert verdict(Result.ok(a), False, None, "no replay")[0] == UNATTRIBUTED
    t = np.arange(6, dtype=np.float32).reshape(2, 3).T  # a column-major tile's output: a transposed view
    assert verdict(Result.ok({"dst": t}), False, Result.ok({"dst": t.copy()}))[0] == SIMULATOR


def test_attribution_replays_one_case_per_group():
    """The smallest case of each group is replayed once and decides for its group; a must-reject case ptoas let
    through is the verifier's without a replay."""
    def div(case, category, size, op="tadd"):
        return Divergence(category=category, op=op, mode="default", profile="a5", case=case, dtypes={},
                          descriptors={"dst": "x"}, inputs={}, size=size)

    ds = [div("a", "wrong-value", 9), div("b", "wrong-value", 4), div("c", "wrong-value", 4, op="tsub"),
          div("d", "accepts-rejected", 1)]
    replayed = []

    def each(invocations):
        replayed.append(invocations)
        same = {"dst": np.zeros(2)}
        return [(Result.ok(same), False, Result.ok(same if i == "b" else {"dst": np.ones(2)}), "") for i in invocations]

    out = attribute(ds, lambda d: d.case, each, lambda d: (d.category, d.op))
    assert replayed == [["b", "c"]]  # every replay asked for at once (built together)
    assert [d.attribution for d in out] == [SIMULATOR, SIMULATOR, LOWERING, VERIFIER]


def test_left_tiles_are_normalised_per_target(db, spec, tiles):
    t = tiles(a="left, 16x16xf16, valid=16x16, blayout=row_major, slayout=row_major, fractal=512")
    assert normalised(db, spec, "a5", t)["a"].blayout == "ColMajor"
    assert normalised(db, spec, "a2a3", t)["a"].blayout == "RowMajor"


# --------------------------------------------------------------------------- discovery
def _fake(tmp_path: Path, version: str, body: str = "") -> Path:
    exe = tmp_path / "ptoas"
    exe.write_text(f"#!{sys.executable}\nimport sys\nif '--version' in sys.argv:\n    print('ptoas {version}')\n"
                   f"    sys.exit(0)\n{body}")
    exe.chmod(0o755)
    return exe


def test_discovery_order_and_version(spec, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("PTOSPEC_PTOAS", raising=False)
    with pytest.raises(InvocationError, match="no ptoas found"):
        find_ptoas(spec)
    old = _fake(tmp_path, "0.26")
    with pytest.raises(InvocationError, match=r"older than 0\.27"):
        find_ptoas(spec, str(old))
    monkeypatch.setenv("PTOSPEC_PTOAS", str(_fake(tmp_path, "0.27")))
    found = find_ptoas(spec)
    assert found.version == (0, 27) and found.found_by == "$PTOSPEC_PTOAS"
    with pytest.raises(InvocationError, match="does not exist"):
        find_ptoas(spec, str(tmp_path / "missing"))


def test_build_shows_ninjas_steps_and_keeps_the_whole_log(spec, tmp_path, monkeypatch):
    """A cold build takes minutes: each ninja step is echoed as one short line, its full output goes to a log."""
    import io

    from ptospec.backends.ptoas import build

    source = tmp_path / "src"
    (source / "tools" / "ptoas").mkdir(parents=True)
    (source / "CMakeLists.txt").write_text("")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in spec.build.tools:
        (bin_dir / tool).write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "cmake").write_text("#!/bin/sh\necho '-- Configuring done'\n")
    (bin_dir / "ninja").write_text(
        "#!/bin/sh\necho '[1/2] Building CXX object lib/PTO/IR/CMakeFiles/obj.PTOIR.dir/PTO.cpp.o'\n"
        "echo 'warning: noise'\necho '[2/2] Linking CXX executable tools/ptoas/ptoas'\n"
        f"mkdir -p \"$2/tools/ptoas\" && touch \"$2/{spec.build.binary}\"\n")
    for exe in bin_dir.iterdir():
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setattr(build, "missing_packages", lambda apt: [])
    shown = io.StringIO()
    binary = build.build_ptoas(spec, source, build_dir=tmp_path / "build", log=shown)
    assert binary == tmp_path / "build" / spec.build.binary
    steps = [line for line in shown.getvalue().splitlines() if "/2]" in line]
    assert steps == ["ptospec ptoas build: [1/2] PTO.cpp.o", "ptospec ptoas build: [2/2] ptoas"]
    assert "warning: noise" not in shown.getvalue()
    assert "warning: noise" in (tmp_path / "build" / "ptospec-build.log").read_text()


# --------------------------------------------------------------------------- the verifier's batches
REJECTING = """
text = sys.stdin.read()
for n, line in enumerate(text.splitlines(), 1):
    if 'REJECT' in line:
        print(f"<stdin>:{n}:5: error: 'pto.tadd' op rejected here", file=sys.stderr)
        sys.exit(1)
    if 'GARBLED' in line:
        print(f"<stdin>:{n}:5: error: expected ')'", file=sys.stderr)
        sys.exit(1)
"""


def test_batches_set_aside_each_function_the_verifier_stops_at(db, spec, tmp_path):
    from ptospec.backends.ptoas.module import Function

    exe = _fake(tmp_path, "0.27", REJECTING)
    lines = ["ok", "REJECT", "ok", "GARBLED", "ok", "REJECT"]
    jobs = [Job(k, Function(f"f{k}", f"  func.func @f{k}() {{\n    // {w}\n    return\n  }}\n", (), 1))
            for k, w in enumerate(lines)]
    runs: list[int] = []
    verdicts = verify_batch(str(exe), "a3", jobs, runs)
    assert [verdicts[k].status for k in range(len(lines))] == [
        "accepted", "rejected", "accepted", "unreadable", "accepted", "rejected"]
    assert verdicts[1].line == 1 and len(runs) == 4


# --------------------------------------------------------------------------- shards and merged reports
def test_shards_deal_whole_files_deterministically():
    sizes = {"a": 10, "b": 7, "c": 5, "d": 5, "e": 1}
    first = deal(sizes, 2)
    assert first == deal(dict(reversed(sizes.items())), 2)
    assert sorted(set(first.values())) == [1, 2]
    assert parse_shard("2/3") == (2, 3)
    for bad in ("0/2", "3/2", "x", "1/0"):
        with pytest.raises(InvocationError):
            parse_shard(bad)


def test_merged_report_sums_and_lists_every_group():
    def report(shard, passed, group):
        return {"backend": "cpusim", "environment": {"shard": shard}, "totals": {"total": passed + 1, "passed": passed,
                "failed": 1}, "stats": {"wall_seconds": 2.0 * passed, "cases_verified": passed},
                "skipped": {"why": 1}, "by_verdict": {"new": 1}, "by_category": {"wrong-value": 1},
                "divergences": [{"category": "wrong-value", "op": group, "mode": "default", "profile": "cpu"}],
                "matrix": [{"op": group, "dtype": "f32", "profile": "cpu", "passed": passed}]}

    merged = merge([report("1/2", 3, "tadd"), report("2/2", 5, "tsub")])
    assert merged["totals"] == {"total": 10, "passed": 8, "failed": 2}
    assert [e["op"] for e in merged["divergences"]] == ["tadd", "tsub"]
    assert merged["stats"]["wall_seconds"] == 10.0 and merged["skipped"] == {"why": 2}
    with pytest.raises(InvocationError, match="given twice"):
        merge([report("1/2", 3, "tadd"), report("1/2", 3, "tadd")])


def test_merge_reports_command(tmp_path):
    for k in (1, 2):
        d = tmp_path / f"s{k}"
        d.mkdir()
        (d / "report.json").write_text(json.dumps({"backend": "reference", "environment": {"shard": f"{k}/2"},
                                                   "totals": {"total": k}, "divergences": []}))
    out = tmp_path / "merged"
    assert main(["merge-reports", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(out)]) == 0
    assert json.loads((out / "report.json").read_text())["totals"]["total"] == 3


# --------------------------------------------------------------------------- live
@pytest.mark.skipif(not PTOAS, reason="set PTOSPEC_PTOAS to a ptoas binary (ptospec ptoas build --source PTOAS)")
def test_live_verifier_table_of_one_instruction(tmp_path):
    out = tmp_path / "table"
    assert main(["--specs", str(ROOT / "specs"), "ptoas", "verify-table", "--ptoas", PTOAS, "--ops", "tadd",
                 "--tests", str(SUITE), "--report-dir", str(out), "-j", "2"]) == 0
    data = json.loads((out / "report.json").read_text())
    assert data["totals"]["both-accept"] > 0 and data["totals"]["both-reject"] > 0
    assert data["totals"]["crashed"] == 0
    assert main(["--specs", str(ROOT / "specs"), "ptoas", "verify-table", "--ptoas", PTOAS, "--ops", "tadd",
                 "--tests", str(SUITE), "--report-dir", str(out), "--cases", "must-reject"]) == 0
    rejects = json.loads((out / "report.json").read_text())
    assert rejects["totals"]["both-accept"] == rejects["totals"]["strict"] == 0
    assert rejects["totals"]["both-reject"] == data["totals"]["both-reject"]


@pytest.mark.skipif(not (PTOAS and PTO_ISA), reason="set PTOSPEC_PTOAS (a ptoas binary) and PTOSPEC_PTO_ISA "
                    "(a pto-isa checkout) to run the lowering backend")
def test_live_lowering_backend_runs_tadd(tmp_path):
    out = tmp_path / "conf"
    code = main(["--specs", str(ROOT / "specs"), "conformance", "--backend", "ptoas", "--ptoas", PTOAS,
                 "--pto-isa-root", PTO_ISA, "--ops", "tadd", "--derived", "2", "--report-dir", str(out)])
    assert code in (0, 1)
    data = json.loads((out / "report.json").read_text())
    assert data["totals"]["passed"] > 0


class _LinkingBuilder:
    """A stand-in for the cpusim builder: a unit holding the kernel ``bad`` fails to link (every variant left
    after the static_asserts gets the one linker message), ``rejected`` fails a static_assert."""

    def __init__(self):
        self.units: list[tuple[str, ...]] = []

    def pch(self):
        return None

    def build(self, names, render):
        from ptospec.backends.cpusim.build import Built, VariantStatus

        self.units.append(tuple(names))
        statuses = {n: VariantStatus("rejected", "static_assert failed") for n in names if n == "rejected"}
        rest = [n for n in names if n not in statuses]
        links = "bad" not in rest
        kind, msg = ("ok", "") if links else ("error", "clang++-19: error: linker command failed with exit code 1")
        statuses.update({n: VariantStatus(kind, msg) for n in rest})
        return Built("key", Path("+".join(rest)) if links else None, statuses, cached=False)


@pytest.mark.parametrize("followed", [False, True], ids=["halves", "relocations"])
def test_a_link_error_is_blamed_on_its_own_kernel_only(db, monkeypatch, followed):
    """A unit with a static_assert and one kernel that does not link: the kernels that link are built again
    apart and run; only the kernel calling what is never defined is blamed (the TCVT tmp forms once blamed
    26 innocent round_sat kernels of their unit).  The failure is followed through the object's relocations
    (``linkblame``), or, where that gives no answer, the kernels are built again in halves."""
    from types import SimpleNamespace

    import ptospec.backends.ptoas.backend as ptoas_backend
    from ptospec.backends.ptoas.backend import PtoasBackend, _Kernel

    def callers(builder, source, functions):
        return {"bad": "_Z5neverv"} if followed and "bad" in functions else None

    monkeypatch.setattr(ptoas_backend, "undefined_callers", callers)
    monkeypatch.setattr(ptoas_backend, "_unit", lambda *a: SimpleNamespace(text=""))
    backend = object.__new__(PtoasBackend)
    backend.db, backend.jobs, backend._klock, backend._preamble = db, 1, threading.Lock(), {}
    backend.builder = _LinkingBuilder()
    names = ["good1", "rejected", "good2", "bad", "good3", "good4", "good5"]
    backend._kernels = {(n,): _Kernel(SimpleNamespace(name=n), "a3", "a2a3") for n in names}
    backend._build(list(backend._kernels), None)
    status = {k[0]: (v.status.kind, v.binary) for k, v in backend._kernels.items()}
    assert status["rejected"][0] == "rejected"
    assert status["bad"] == ("error", None)
    for n in names:
        if n.startswith("good"):
            assert status[n][0] == "ok" and n in str(status[n][1]), (n, status[n])
    if followed:  # the unit, then the five that link, together
        assert backend.builder.units[1] == ("good1", "good2", "good3", "good4", "good5")
        assert len(backend.builder.units) == 2
    else:  # the unit, then at once its half holding ``bad`` (not the six that failed alike, rebuilt whole)
        assert backend.builder.units[1] == ("good1", "good2", "bad")


def test_link_blame_follows_calls_to_the_undefined_symbol():
    from ptospec.backends.cpusim.linkblame import reaching

    calls = {"_Z5case1Pf": {"_ZN3pto4TCVTIiEEvv", "memcpy"}, "_ZN3pto4TCVTIiEEvv": {"_ZN3pto9TCVT_IMPLIiEEvv"},
             "_Z5case2Pf": {"_ZN3pto4TADDEv", "memcpy"}, "_ZN3pto4TADDEv": set(),
             "_ZL9run_case1RN5ptocs4CaseE": {"_Z5case1Pf"}, "_Z6case10v": {"_Z5case2Pf"}}
    got = reaching(calls, {"_ZN3pto9TCVT_IMPLIiEEvv"}, {"case1", "case2", "case10"})
    assert got == {"case1": "_ZN3pto9TCVT_IMPLIiEEvv"}


@pytest.mark.skipif(not PTO_ISA, reason="set PTOSPEC_PTO_ISA to a pto-isa checkout (and have clang++)")
def test_live_link_blame_names_the_kernel_that_does_not_link():
    from ptospec.backends.cpusim.backend import CpuSimBackend
    from ptospec.backends.cpusim.linkblame import undefined_callers

    builder = CpuSimBackend(root=PTO_ISA).builder
    source = ("void never_defined(int);\nvoid helper(int x) { never_defined(x); }\n"
              "void case1(int x) { helper(x); }\nvoid case2(int x) { (void)x; }\nint main() { case1(1); case2(2); }\n")
    assert undefined_callers(builder, source, ["case1", "case2"]) == {"case1": "_Z13never_definedi"}
