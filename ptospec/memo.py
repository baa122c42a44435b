"""Values made from the last few databases, for work a process may ask for again (a site generated twice)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


class PerDatabase(Generic[V]):
    """The values made for the last ``kept`` databases, each matched by identity (a database is immutable and
    unhashable) and by an equal ``extra`` key (what else the value was made from)."""

    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._slots: list[tuple[object, object, V]] = []

    def get(self, db: object, extra: object, make: Callable[[], V]) -> V:
        for known, given, value in self._slots:
            if known is db and given == extra:
                return value
        value = make()
        self._slots[:] = [(db, extra, value), *self._slots[:self._kept - 1]]
        return value
