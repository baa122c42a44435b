"""How checking a case can end other than passing: the two exceptions the runner raises and its workers report."""

from __future__ import annotations

from .divergence import Divergence


class ConformanceFailure(AssertionError):
    """A backend disagreed with the spec; the message carries a repro, ``divergences`` the records."""

    def __init__(self, message: str, divergences: tuple[Divergence, ...] = ()) -> None:
        super().__init__(message)
        self.divergences = divergences


class Unsupported(Exception):
    """The case is outside the backend's manifest (the plugin turns this into a skip)."""
