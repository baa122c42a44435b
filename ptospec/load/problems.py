"""How a spec problem is collected: every one becomes a ``SpecError`` naming ``file:line`` and a rule id."""

from __future__ import annotations

from ..errors import SpecError
from ..located import Located


class Issues:
    """Collects spec problems; ``raise_if_any`` turns them into one failure."""

    def __init__(self) -> None:
        self.items: list[SpecError] = []

    def add(self, src: Located, path, message: str, rule: str) -> None:
        self.items.append(SpecError(message, where=src.where(tuple(path)), rule=rule))

    def extend(self, errors: list[SpecError]) -> None:
        self.items.extend(errors)

    def raise_if_any(self) -> None:
        if self.items:
            raise DatabaseErrors(self.items)


class DatabaseErrors(SpecError):
    """Several spec problems at once (``errors`` holds each)."""

    def __init__(self, errors: list[SpecError]):
        super().__init__(f"{len(errors)} problem(s) in the spec database", rule="lint")
        self.errors = errors


def load_each(paths: list, load) -> tuple[list, list[SpecError]]:
    """``load(path)`` for every path, collecting every problem instead of stopping at the first."""
    loaded: list = []
    errors: list[SpecError] = []
    for path in paths:
        try:
            loaded.append(load(path))
        except DatabaseErrors as exc:
            errors.extend(exc.errors)
        except SpecError as exc:
            errors.append(exc)
    return loaded, errors
