from __future__ import annotations

import gc
from pathlib import Path

import pytest
import site_build  # tests/site_build.py (this folder is on sys.path, as for every conftest)

from ptospec.asm.types import parse_descriptor
from ptospec.loader import load_database

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def db():
    return load_database(ROOT / "specs")


@pytest.fixture(scope="session")
def tiles(db):
    def make(**descs):
        return {name: parse_descriptor(text, db.isa) for name, text in descs.items()}

    return make


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
