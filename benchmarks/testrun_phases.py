"""Where the CPU time of a test run goes: per process (each pytest-xdist worker and the controller), the time
spent collecting and the time of each kind of test (the generated suites' positive, must-reject and property
tests, the engine's tests), both the test body and the whole protocol around it (setup, reports to the
controller, teardown).  Process CPU time, so the figures hold under load; subprocesses (site builds, CLI runs)
are not counted (the last line gives the whole run's CPU from the operating system).  The controller collects
nothing (its "collect" is 0): its total is what it spends receiving and printing the workers' reports.

    python benchmarks/testrun_phases.py [PYTEST ARGS]      # default: tests generated_tests
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pytest

ENV_OUT = "PTOSPEC_PHASES_OUT"


def _kind(item: pytest.Item) -> str:
    folder = item.path.parent.name
    return f"{folder}:{getattr(item, 'originalname', item.name)}" if folder == "generated_tests" else folder


class Phases:
    """The pytest plugin: adds up process CPU time per phase and kind of test; writes it at the end."""

    def __init__(self) -> None:
        self.start = time.process_time()
        self.collected = self.start
        self.protocol: dict[str, float] = defaultdict(float)
        self.body: dict[str, float] = defaultdict(float)
        self.count: dict[str, int] = defaultdict(int)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = time.process_time()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem):
        start = time.process_time()
        result = yield
        self.protocol[_kind(item)] += time.process_time() - start
        self.count[_kind(item)] += 1
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        start = time.process_time()
        result = yield
        self.body[_kind(item)] += time.process_time() - start
        return result

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        record = {"process": os.environ.get("PYTEST_XDIST_WORKER", "controller"),
                  "collect": self.collected - self.start, "total": time.process_time() - self.start,
                  "kinds": {k: [self.count[k], self.body[k], self.protocol[k]] for k in self.protocol}}
        with open(os.environ[ENV_OUT], "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(ENV_OUT):
        config.pluginmanager.register(Phases(), "ptospec-phases")


def main(args: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "phases.jsonl"
        env = {**os.environ, ENV_OUT: str(out),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")]))}
        wall = time.monotonic()
        status = subprocess.run([sys.executable, "-m", "pytest", "-p", "testrun_phases", *(args or ["tests",
                                 "generated_tests"])], env=env, check=False).returncode
        wall = time.monotonic() - wall
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []
    print(f"\n{'process':<11} {'collect':>8} {'total':>8}   kind: tests, body s, protocol s, ms per test")
    for rec in sorted(records, key=lambda r: r["process"]):
        print(f"{rec['process']:<11} {rec['collect']:8.1f} {rec['total']:8.1f}")
        for kind, (n, body, protocol) in sorted(rec["kinds"].items()):
            print(f"{'':<30}{kind:<34} {n:6d} {body:8.1f} {protocol:8.1f} {1000 * protocol / max(n, 1):7.2f}")
    print(f"whole run: wall {wall:.1f} s, CPU user {used.ru_utime:.1f} s + sys {used.ru_stime:.1f} s "
          f"(subprocesses included), load {os.getloadavg()[0]:.2f}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
