"""A spec document's data with the place of every value in its file (``yamlsource`` reads it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PathKey = tuple[str | int, ...]


@dataclass(frozen=True)
class Located:
    data: Any
    file: str
    lines: dict[PathKey, int]
    files: dict[PathKey, str] = field(default_factory=dict)  # values that came from another file (a kind)

    def _nearest(self, path: PathKey) -> PathKey:
        path = tuple(path)
        while path and path not in self.lines:
            path = path[:-1]
        return path

    def line(self, path: PathKey) -> int:
        """Line of ``path``, or of its closest ancestor that has one."""
        return self.lines.get(self._nearest(path), 1)

    def file_of(self, path: PathKey) -> str:
        return self.files.get(self._nearest(path), self.file)

    def where(self, path: PathKey) -> str:
        return f"{self.file_of(path)}:{self.line(path)}"
