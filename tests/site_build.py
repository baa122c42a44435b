"""The browser test's site, built in the background from the end of collection on.

When the test run is one process on one core (``-n 0``), the site build (mkdocs over both languages, the
run's largest single step) uses a core that would otherwise sit idle; with pytest-xdist workers (the
default, ``-n auto``) every core has tests to run and the worker that gets the browser test builds it.
``conftest.py`` starts it when the browser test is selected; the test's ``site`` fixture waits for it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SITE_URL = "https://example.org/pto/"  # the browser test serves the site under this sub-path
BROWSER = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
_BUILD = pytest.StashKey[tuple[subprocess.Popen, Path, Path]]()


def start_if_needed(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        return  # a pytest-xdist worker: every core has tests to run, and any worker may get the browser test
    if BROWSER is None or session.config.option.collectonly or not any(
            item.path.name == "test_site_browser.py" for item in session.items):
        return  # no browser test will run
    out = Path(tempfile.mkdtemp(prefix="ptospec-site-"))
    log = out / "build.log"
    with log.open("w") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "ptospec.cli", "--specs", str(ROOT / "specs"), "docs", "build",
                                 "--site", str(out / "site"), "--site-url", SITE_URL],
                                stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    session.config.stash[_BUILD] = (proc, out / "site", log)


def finished(config: pytest.Config) -> tuple[int, Path, str] | None:
    """(exit status, site folder, output) of the build started at collection, once it is done; None if none
    was started."""
    started = config.stash.get(_BUILD, None)
    if started is None:
        return None
    proc, site, log = started
    status = proc.wait()
    return status, site, log.read_text(errors="replace")


def clean_up(config: pytest.Config) -> None:
    started = config.stash.get(_BUILD, None)
    if started is not None:
        proc, site, _log = started
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(site.parent, ignore_errors=True)
