"""``ptospec lint [PATHS]``: check spec files (schema, cross-references, examples)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import SpecError


def register(sub) -> None:
    p = sub.add_parser("lint", help="check the spec database (or some files of it)",
                       description="Check spec files: YAML, JSON Schema, cross-references, expressions, and that "
                       "every example invocation is legal. Prints one line per problem (file:line [rule] message).")
    p.add_argument("paths", nargs="*", help="op files or directories to check (default: the whole database)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..lint import lint_paths

    problems, checked = lint_paths(getattr(args, "specs", None), [Path(p) for p in args.paths])
    for err in problems:
        print(f"ptospec: {err.one_line()}", file=sys.stderr)
    if problems:
        print(f"ptospec lint: {len(problems)} problem(s) in {checked} file(s)", file=sys.stderr)
        return 1
    print(f"ptospec lint: {checked} file(s) ok")
    return 0


__all__ = ["SpecError", "register", "run"]
