from __future__ import annotations

from pathlib import Path

import pytest

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
