from __future__ import annotations

import gc
from pathlib import Path

import pytest
import site_build  # tests/site_build.py (this folder is on sys.path, as for every conftest)

from ptospec.asm.types import parse_descriptor
from ptospec.dbcache import load_database_cached

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def db():
    """The database as the commands read it: from the disk cache that `ptospec lint` / `list` fill (each op
    unpickled when looked up), so a worker does not build it again; the loader's own tests build theirs."""
    return load_database_cached(ROOT / "specs")


@pytest.fixture(scope="session")
def tiles(db):
    def make(**descs):
        return {name: parse_descriptor(text, db.isa) for name, text in descs.items()}

    return make


# The files that run longest (a site build with mkdocs, a browser, many loads of the database, nested test
# runs), first.  pytest-xdist hands whole files to its workers (``--dist loadfile``) in the order of the
# collection, and a long file handed out late keeps one worker busy after the other has run out of files.
LONG_FILES = ("test_site_browser.py", "test_docs.py", "test_case_search.py", "test_loader.py",
              "test_hardening_third.py", "test_cli.py", "test_asm_printed_lines.py", "test_hardening_fuzz.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not hasattr(config, "workerinput"):
        return  # one process (``-n 0``): the browser test comes late, while its site builds (``site_build``)
    rank = {name: k for k, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order


def pytest_collection_finish(session: pytest.Session) -> None:
    site_build.start_if_needed(session)
    # The collected items (ten thousand and more) live until the end: keep them out of every later full
    # garbage collection, which would otherwise walk them all again and again; and collect rarely (the
    # tests make millions of short-lived objects and few reference cycles).
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)


def pytest_sessionfinish(session: pytest.Session) -> None:
    site_build.clean_up(session.config)
