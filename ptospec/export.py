"""JSON export of the database, and the JSON Schema it validates against."""

from __future__ import annotations

from typing import Any

from . import __version__
from .load.schema import schema
from .model import Database
from .program.spec import program_spec


def export_database(db: Database) -> dict[str, Any]:
    return {
        "format": 1,
        "generator": f"ptospec {__version__}",
        "isa": db.isa.raw,
        "ops": {name: db.ops[name].raw for name in sorted(db.ops)},
        "program": program_spec(db).raw,
    }


def export_schema() -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://ptospec.dev/schema/export.schema.json",
        "title": "ptospec database export",
        "type": "object",
        "additionalProperties": False,
        "required": ["format", "generator", "isa", "ops", "program"],
        "properties": {
            "format": {"const": 1},
            "generator": {"type": "string"},
            "isa": schema("isa"),
            "ops": {"type": "object", "additionalProperties": schema("op")},
            "program": schema("program"),
        },
    }
