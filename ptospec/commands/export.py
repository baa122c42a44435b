"""``ptospec export --json`` and ``ptospec schema``: the database for other tools."""

from __future__ import annotations

import json
import sys

from ._common import database


def register(sub) -> None:
    p = sub.add_parser("export", help="export the whole database as JSON",
                       description="Write the whole database (ISA definitions and every op, as validated) as "
                       "JSON; the result validates against 'ptospec schema --which export'.")
    p.add_argument("--json", action="store_true", required=True, help="JSON output (the only format)")
    p.add_argument("--output", "-o", help="file to write (default: standard output)")
    p.set_defaults(func=run_export)
    s = sub.add_parser("schema", help="print a JSON Schema of the spec format",
                       description="Print the JSON Schema of op files (default), of isa.yaml, or of the export.")
    s.add_argument("--which", choices=["op", "isa", "kind", "program", "export"], default="op")
    s.set_defaults(func=run_schema)


def _write(doc, output: str | None) -> None:
    text = json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    if output:
        from ..outputs import replace_file

        replace_file(output, text, rule="export.output", where="--output")
    else:
        sys.stdout.write(text)


def run_export(args) -> int:
    from ..export import export_database

    _write(export_database(database(args)), args.output)
    return 0


def run_schema(args) -> int:
    from ..export import export_schema
    from ..load.schema import schema

    _write(export_schema() if args.which == "export" else schema(args.which), None)
    return 0
