"""``specs/kinds/<kind>.yaml``: the shared shape of a group of instructions (``ptospec.kinds`` expands it)."""

from __future__ import annotations

from pathlib import Path

from ..errors import SpecError
from ..kinds import Kind, Param
from ..yamlsource import Located, read_yaml
from .files import display_path, kind_files
from .problems import DatabaseErrors, load_each
from .schema import check_schema


def load_kind(path: Path, display: str) -> Kind:
    src = read_yaml(path, display)
    check_schema(src, "kind")
    d = src.data
    if d["kind"] != path.stem:
        raise SpecError(f"kind name {d['kind']!r} must match the file name {path.stem!r}",
                        where=src.where(("kind",)), rule="kind.name")
    params = {
        n: Param(n, p["text"], p.get("default"), "default" not in p, tuple(p.get("args", ())))
        for n, p in d.get("params", {}).items()
    }
    body_lines = {k[1:]: v for k, v in src.lines.items() if k[:1] == ("body",)}
    body = Located(d["body"], src.file, body_lines)
    return Kind(d["kind"], d["title"], d["description"], params, body)


def load_kinds(root: Path) -> dict[str, Kind]:
    """Every kind under ``root/kinds``; raises ``DatabaseErrors`` with every problem."""
    kinds, errors = load_each(kind_files(root), lambda path: load_kind(path, display_path(path)))
    if errors:
        raise DatabaseErrors(errors)
    return {kind.name: kind for kind in kinds}
