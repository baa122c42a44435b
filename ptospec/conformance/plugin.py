"""pytest plugin running generated conformance suites against a backend.

    pytest generated_tests --pto-backend=NAME|module:Class|file.py:Class --pto-profile=P --pto-report=out.json
    [--pto-matrix]

After the run it prints one summary line, or with ``--pto-matrix`` the op x dtype x profile
pass/fail/skip matrix; ``--pto-report`` writes the matrix as JSON and names the file.  With pytest-xdist
(``-n N``) the controller counts the reports of every worker, so the line, the matrix and the report
cover the whole run.

Registered as the ``ptospec`` entry point in group ``pytest11``; it only acts on tests that use
the ``pto_runner`` fixture (the generated modules), so it is inert in other projects.

Before the first case runs, every collected fixed case is handed to the backend's ``prepare`` hook
(batch compiles).  Other plugins can follow a run through two hooks: ``pytest_pto_runner(config,
runner)`` (the session's ``Runner``; its ``divergences`` list fills as cases fail) and
``pytest_pto_progress(config, stage, done, total)`` (long preparation steps of the backend).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..errors import PtospecError
from .cases import Case, descriptor_dtype
from .report import Matrix
from .shard import deal, parse_shard

try:  # settings profiles for the property tests: --hypothesis-profile=ci|thorough
    from hypothesis import HealthCheck, Phase, settings

    # ci: a few derandomized examples (every draw is a legal configuration), reported as found: no shrinking
    settings.register_profile("ci", max_examples=4, derandomize=True, deadline=None, database=None,
                              phases=(Phase.explicit, Phase.reuse, Phase.generate),
                              suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
    # thorough: many random examples, failures shrunk to a minimal configuration
    settings.register_profile("thorough", max_examples=500, deadline=None,
                              suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
except ImportError:  # pragma: no cover - hypothesis is only needed for the property tests
    settings = None  # type: ignore[assignment]

_MATRIX = pytest.StashKey[Matrix]()
_KEYS = pytest.StashKey[dict[str, tuple[str, str, str]]]()
_DBS = pytest.StashKey[dict]()


class PtoHooks:
    """Hooks this plugin calls (implement them in another plugin to follow a run)."""

    @pytest.hookspec
    def pytest_pto_runner(self, config: pytest.Config, runner) -> None:
        """The session's ``Runner`` was created (``runner.divergences`` fills as cases fail)."""

    @pytest.hookspec
    def pytest_pto_progress(self, config: pytest.Config, stage: str, done: int, total: int) -> None:
        """The backend's ``prepare`` reports progress of a long step (e.g. ``compile``, ``run``)."""


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(PtoHooks)


def matrix(config: pytest.Config) -> Matrix | None:
    """The op x dtype x profile matrix of this session (None before configuration)."""
    return config.stash.get(_MATRIX, None)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ptospec", "PTO conformance suites")
    group.addoption("--pto-backend", default="reference",
                    help="backend: 'reference' (default), an installed backend name, module:Class or file.py:Class")
    group.addoption("--pto-profile", default=None, help="only run cases of this profile (cpu, a2a3, a5)")
    group.addoption("--pto-report", default=None, metavar="PATH",
                    help="write the pass/fail/skip matrix as JSON (--pto-matrix also prints it)")
    group.addoption("--pto-matrix", action="store_true", default=False,
                    help="print the op x dtype x profile pass/fail/skip matrix (default: one summary line)")
    group.addoption("--pto-specs", default=None, metavar="DIR", help="spec database (default: found from the tests)")
    group.addoption("--pto-shard", default=None, metavar="K/N",
                    help="run only shard K of N: whole test files dealt out by their case counts, the same deal on "
                         "every machine (merge the shard reports with `ptospec merge-reports`)")


class _MatrixCounter:
    """Counts each logged test report of a generated case in the session's matrix.  Reports are counted
    where they are logged, so that with pytest-xdist the controller counts those of every worker (its
    summary line and ``--pto-report`` cover the whole run)."""

    def __init__(self, matrix: Matrix) -> None:
        self.matrix = matrix

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        cell = getattr(report, "pto_cell", None)
        if cell is not None:
            outcome = "passed" if report.passed else "skipped" if report.skipped else "failed"
            self.matrix.add(tuple(cell), outcome, report.nodeid)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (the project's default) runs a backend other than the reference in one process: such a
    backend prepares every collected case in one batch (compiles), which each worker would repeat."""
    return 0 if config.getoption("--pto-backend", "reference") != "reference" else None


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_MATRIX] = Matrix()
    config.pluginmanager.register(_MatrixCounter(config.stash[_MATRIX]), "ptospec-matrix")
    config.stash[_KEYS] = {}
    _check_options(config)


def _check_options(config: pytest.Config) -> None:
    """Refuse a bad --pto-backend, --pto-profile or --pto-report before collection, in one line."""
    from .load import backend_class

    shard = config.getoption("--pto-shard", None)
    if shard is not None:
        try:
            parse_shard(shard, "--pto-shard")
        except PtospecError as exc:
            raise pytest.UsageError(f"ptospec: --pto-shard: {exc.message}") from None
    report = config.getoption("--pto-report", None)
    if report is not None and not report.strip():
        raise pytest.UsageError("ptospec: --pto-report names no file")
    if report:
        path = Path(report)
        try:
            path.exists()
            os.stat(path.parent)
        except OSError as exc:  # a name too long, a loop of links
            raise pytest.UsageError(f"ptospec: --pto-report {report[:80]}: {exc.strerror or exc}") from None
        if path.is_dir():
            raise pytest.UsageError(f"ptospec: --pto-report {report}: is a directory; give a file name")
        if path.exists() and not path.is_file():
            raise pytest.UsageError(f"ptospec: --pto-report {report}: not a regular file (a pipe or a device)")
        if len(path.name.encode()) > 200:  # its temporary file beside it needs a few bytes more
            raise pytest.UsageError(f"ptospec: --pto-report {report[:80]}...: the file name is too long")
        if not path.parent.is_dir():
            raise pytest.UsageError(f"ptospec: --pto-report {report}: folder {path.parent} does not exist")
        if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            raise pytest.UsageError(f"ptospec: --pto-report {report}: not writable")
    backend = config.getoption("--pto-backend", "reference")
    if backend != "reference":
        try:
            backend_class(backend)
        except PtospecError as exc:
            raise pytest.UsageError(f"ptospec: --pto-backend: {exc.one_line()}") from None
    profile = config.getoption("--pto-profile", None)
    given = config.getoption("--pto-specs", None)
    if given is not None and not given.strip():  # '' would silently mean the default database
        raise pytest.UsageError("ptospec: --pto-specs names no directory")
    if profile is not None or config.getoption("--pto-specs", None):
        specs = config.getoption("--pto-specs", None) or _find_specs(Path(str(config.invocation_params.dir))) \
            or _find_specs(Path(str(config.rootpath)))
        try:
            known = _database(config, specs).isa.profiles  # loaded once: collection and the runner use it too
        except PtospecError as exc:
            raise pytest.UsageError(f"ptospec: --pto-specs: {exc.one_line()}") from None
        if profile is not None and profile not in known:
            raise pytest.UsageError(f"ptospec: --pto-profile: unknown profile {profile!r} "
                                    f"(known: {', '.join(known)})")


def _key(item: pytest.Item, sources: dict[tuple[str, str], str]) -> tuple[str, str, str] | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    case = callspec.params.get("case")
    if isinstance(case, Case):
        return case.op, _dtype_of(case, sources.get((case.op, case.mode))), case.profile
    if "pto_property" in callspec.params:
        op, _mode, profile = callspec.params["pto_property"][:3]
        return op, "(property)", profile
    return None


def _dtype_of(case: Case, source: str | None) -> str:
    """The matrix's dtype column: the first input operand's dtype (the source type)."""
    text = case.tiles.get(source or "", next(iter(case.tiles.values()), ""))
    parts = text.split(",")
    return descriptor_dtype(text) if len(parts) > 1 else text or "-"


def _specs_key(specs: str | None) -> str:
    return str(Path(specs).resolve()) if specs else ""


def share_database(config: pytest.Config, specs: str | None, db) -> None:
    """Give the session a database the caller has loaded already from ``specs`` (``--pto-specs``)."""
    config.stash.setdefault(_DBS, {})[_specs_key(specs)] = db


def _database(config: pytest.Config, specs: str | None):
    """The spec database, loaded once per session (collection and the runner fixture both need it)."""
    from ..dbcache import load_database_cached

    loaded = config.stash.setdefault(_DBS, {})
    key = _specs_key(specs)
    if key not in loaded:
        loaded[key] = load_database_cached(specs)
    return loaded[key]


def _sources(config: pytest.Config, items: list[pytest.Item]) -> dict[tuple[str, str], str]:
    """(op, mode) -> first input operand, from the spec database (empty if it cannot be found)."""
    from ..errors import PtospecError

    start = next((Path(str(i.path)) for i in items if isinstance(getattr(i, "callspec", None) and
                                                               i.callspec.params.get("case"), Case)), None)
    if start is None:
        return {}
    try:
        db = _database(config, config.getoption("--pto-specs") or _find_specs(start.resolve()))
    except PtospecError:
        return {}
    return {(op.name, m.name): next((o.name for o in m.operands if o.role == "in"), "")
            for op in db.ops.values() for m in op.modes}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    profile = config.getoption("--pto-profile")
    keys = config.stash[_KEYS]
    keep, drop = [], []
    sources = _sources(config, items)
    for item in items:
        key = _key(item, sources)
        if key is not None:
            keys[item.nodeid] = key
        if profile and key is not None and key[2] != profile:
            drop.append(item)
        else:
            keep.append(item)
    shard = config.getoption("--pto-shard")
    if shard:
        k, n = parse_shard(shard, "--pto-shard")
        sizes: dict[str, int] = {}
        for item in keep:
            sizes[item.nodeid.split("::")[0]] = sizes.get(item.nodeid.split("::")[0], 0) + 1
        dealt = deal(sizes, n)
        drop += [item for item in keep if dealt[item.nodeid.split("::")[0]] != k]
        keep = [item for item in keep if dealt[item.nodeid.split("::")[0]] == k]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    key = item.config.stash[_KEYS].get(item.nodeid) if _KEYS in item.config.stash else None
    if key is not None and (report.when == "call" or (report.when == "setup" and not report.passed)):
        report.pto_cell = list(key)  # travels with the report (pytest-xdist sends it from a worker to the controller)
    return report



_REPORT_ERROR = pytest.StashKey[str]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write --pto-report (before the terminal summary, which names the file or why it could not be written:
    a full disk or a device that refuses data is one line and exit status 4, not a traceback)."""
    config = session.config
    matrix = config.stash.get(_MATRIX, None)
    path = config.getoption("--pto-report", None)
    if not path or matrix is None or not matrix.cells or hasattr(config, "workerinput"):
        return
    try:
        matrix.write(path, config.getoption("--pto-backend"))
    except PtospecError as exc:
        config.stash[_REPORT_ERROR] = f"ptospec: --pto-report {path}: {exc.message}"
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    matrix = config.stash.get(_MATRIX, None)
    if matrix is None or not matrix.cells:
        return
    backend = config.getoption("--pto-backend")
    path = config.getoption("--pto-report")
    if config.getoption("--pto-matrix"):
        terminalreporter.section(f"PTO conformance matrix (backend: {backend})")
        for line in matrix.lines():
            terminalreporter.write_line(line)
    else:
        terminalreporter.write_line(f"PTO conformance (backend: {backend}): {matrix.summary()}; "
                                    "--pto-matrix prints the matrix")
    if path:
        error = config.stash.get(_REPORT_ERROR, None)
        terminalreporter.write_line(error, red=True) if error else terminalreporter.write_line(f"wrote {path}")


def _find_specs(start: Path) -> str | None:
    for parent in [start, *start.parents]:
        if (parent / "specs" / "isa.yaml").is_file():
            return str(parent / "specs")
    return None


@pytest.fixture(scope="session")
def pto_runner(request: pytest.FixtureRequest):
    """The backend under test, wrapped in a ``Runner`` (session-wide)."""
    from ..errors import PtospecError
    from .load import load_backend
    from .runner import Runner

    config = request.config
    specs = config.getoption("--pto-specs") or _find_specs(Path(str(request.node.path)).resolve()) \
        or _find_specs(Path(str(config.rootpath)))
    name = config.getoption("--pto-backend")
    try:
        db = _database(config, specs)
        backend = load_backend(name, db)
        runner = Runner(db, backend, name)
    except PtospecError as exc:
        raise pytest.UsageError(f"ptospec: {exc.one_line()}") from None
    config.hook.pytest_pto_runner(config=config, runner=runner)
    cases = [case for item in request.session.items
             for case in [getattr(item, "callspec", None) and item.callspec.params.get("case")]
             if isinstance(case, Case)]

    def progress(stage: str, done: int, total: int) -> None:
        config.hook.pytest_pto_progress(config=config, stage=stage, done=done, total=total)

    try:
        runner.prepare(cases, progress)
    except PtospecError as exc:
        raise pytest.UsageError(f"ptospec: {exc.one_line()}") from None
    return runner


def _fail(exc: BaseException) -> None:
    """Report a conformance failure by its message (which carries the repro), without a traceback:
    pytest would otherwise parse the large generated module for every failure."""
    notes = "\n".join(getattr(exc, "__notes__", ()))
    pytest.fail(f"{exc}\n{notes}" if notes else str(exc), pytrace=False)


def run_case(runner, case: Case) -> None:
    """Body of every generated fixed-case test."""
    from .failures import ConformanceFailure, Unsupported

    try:
        runner.check(case)
    except Unsupported as exc:
        pytest.skip(str(exc))
    except ConformanceFailure as exc:
        _fail(exc)


def run_property(runner, op: str, mode: str, profile: str, bindings: list[dict] | None = None) -> None:
    """Body of every generated property test (``bindings``: the feasible dtype and attribute bindings the
    generator found; searched again when not given)."""
    from .failures import ConformanceFailure, Unsupported

    try:
        runner.check_property(op, mode, profile, bindings)
    except Unsupported as exc:
        pytest.skip(str(exc))
    except ConformanceFailure as exc:
        _fail(exc)
