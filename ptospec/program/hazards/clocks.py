"""Vector clocks over pipes: how far each pipe's work is known to be done, as seen from one pipe."""

from __future__ import annotations

PipeKey = tuple[int, str]  # (core, pipe unit): blocks run on cores of their own


class Clock(dict):
    """pipe -> the number of that pipe's instructions known to be complete (missing: 0)."""

    def at(self, pipe: PipeKey) -> int:
        return self.get(pipe, 0)

    def join(self, other: dict) -> None:
        for pipe, tick in other.items():
            if tick > self.get(pipe, 0):
                self[pipe] = tick

    def copy(self) -> Clock:
        return Clock(self)
