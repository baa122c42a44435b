"""What every builder of one op file shares: the file, the ISA, the problems found, and the op's own names."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..expr.parser import parse_expr
from ..located import Located
from ..model import Isa, Source
from .names import check_names, parse
from .problems import Issues


@dataclass
class OpContext:
    src: Located
    isa: Isa
    issues: Issues
    sources: dict[str, Source] = field(default_factory=dict)  # the op's declared sources, by id
    lets: tuple = ()  # the op-level ``let`` as (name, node, text)

    @property
    def let_names(self) -> set[str]:
        return {n for n, _, _ in self.lets}

    def add(self, path, message: str, rule: str) -> None:
        self.issues.add(self.src, path, message, rule)

    def parse(self, path, text: str, parser=parse_expr):
        return parse(self.src, path, text, self.issues, parser)

    def check_names(self, path, node, known: set[str], with_isa: bool = True,
                    tiles: dict[str, str] | None = None) -> None:
        check_names(self.src, path, node, known, self.isa if with_isa else None, self.issues, tiles)

    def check_sources(self, path, ids) -> None:
        for s in ids:
            if s not in self.sources:
                self.add(path, f"unknown source {s!r} (declared: {', '.join(self.sources)})", "op.source")
