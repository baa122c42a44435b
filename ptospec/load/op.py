"""``specs/ops/<op>.yaml``: one instruction, its kind expanded, built section by section."""

from __future__ import annotations

from pathlib import Path

from ..errors import SpecError
from ..kinds import Kind, expand
from ..model import Isa, OpSpec, Source
from ..yamlsource import Located, read_yaml
from .context import OpContext
from .differences import build_differences, build_performance, build_usage
from .dtype_tables import build_dtype_tables
from .modes import build_modes
from .names import lets
from .numerics import build_numerics
from .problems import DatabaseErrors, Issues
from .rules import build_rules
from .schema import schema_errors


def load_op(path: Path, isa: Isa, display: str | None = None, kinds: dict[str, Kind] | None = None) -> OpSpec:
    """Load and check one op file (its kind expanded); raises ``DatabaseErrors`` listing every problem."""
    issues = Issues()
    src = read_yaml(path, display)
    if not isinstance(src.data, dict):
        raise SpecError("an op file must be a mapping", where=src.where(()), rule="schema.type")
    src = expand(src, kinds or {})
    if schema_errors(src, "op", issues):
        raise DatabaseErrors(issues.items)
    op = build_op(src, isa, issues, path.stem)
    issues.raise_if_any()
    return op


def build_op(src: Located, isa: Isa, issues: Issues, stem: str) -> OpSpec:
    """The op of a schema-valid document; its problems go to ``issues``."""
    d = src.data
    ctx = OpContext(src, isa, issues)
    if d["op"] != stem:
        ctx.add(("op",), f"op name {d['op']!r} must match the file name {stem!r}", "op.name")
    if d["family"] not in isa.families:
        ctx.add(("family",), f"unknown family {d['family']!r} (known: {', '.join(isa.families)})", "op.family")
    ctx.sources = {k: Source(k, v["kind"], v["ref"]) for k, v in d["sources"].items()}
    ctx.lets = lets(src, ("let",), d.get("let", {}), issues)
    modes = build_modes(ctx)
    tables = build_dtype_tables(ctx, modes)
    rules = build_rules(ctx, modes)
    return OpSpec(
        name=d["op"], file=src.file, family=d["family"], summary=d["summary"], description=d["description"],
        let=ctx.lets, modes=modes, dtypes=tables, rules=rules, numerics=build_numerics(ctx),
        differences=build_differences(ctx, modes, rules, tables), sources=ctx.sources,
        performance=build_performance(ctx), usage=build_usage(ctx),
        raw=d, kind=d.get("kind"), params=dict(d.get("params") or {}), status=d.get("status"),
    )
