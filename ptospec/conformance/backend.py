"""The interface a backend implements to run the generated conformance suites.

A backend says what it supports (``capabilities``) and runs one case (``run``): it gets the
op, mode, profile, concrete tile descriptors and input arrays (outputs pre-filled with their
initial contents) and returns the whole output tiles, or a rejection when it refuses the
configuration (as a compiler or a runtime check would), or "unsupported".
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..tile import ScalarDesc, TileDesc


@dataclass(frozen=True)
class Capabilities:
    """What a backend implements.  ``None`` means "everything the spec defines"."""

    profiles: tuple[str, ...]
    ops: tuple[str, ...] | None = None
    dtypes: tuple[str, ...] | None = None
    modes: dict[str, tuple[str, ...]] | None = None  # op -> modes, when not every mode is implemented
    # op -> dtypes outside ``dtypes`` the backend runs for that op only: a profile's emulated types (the
    # simulator's MX types) where the op's own table names them
    op_dtypes: dict[str, frozenset[str]] = field(default_factory=dict)

    def unsupported(self, op: str, mode: str, profile: str, tiles: dict) -> str | None:
        """Why a case is outside this manifest, or None."""
        if profile not in self.profiles:
            return f"profile {profile} not supported (backend supports {', '.join(self.profiles)})"
        if self.ops is not None and op not in self.ops:
            return f"op {op} not implemented"
        if self.modes is not None and op in self.modes and mode not in self.modes[op]:
            return f"{op} mode {mode} not implemented"
        if self.dtypes is not None:
            missing = sorted({t.dtype for t in tiles.values() if t.dtype} - set(self.dtypes)
                             - self.op_dtypes.get(op, frozenset()))
            if missing:
                return f"dtype(s) {', '.join(missing)} not implemented"
        return None


@dataclass(frozen=True)
class Invocation:
    """One case as handed to a backend."""

    op: str
    mode: str
    profile: str
    tiles: dict[str, TileDesc | ScalarDesc]  # operand -> descriptor, in the mode's operand order
    inputs: dict[str, object]  # inputs, scalars, and initial contents of outputs (np.ndarray)
    descriptors: dict[str, str] = field(default_factory=dict)  # canonical descriptor text


@dataclass(frozen=True)
class Result:
    outputs: dict[str, np.ndarray] | None = None
    rejected: bool = False
    rules: tuple[str, ...] = ()  # rule ids the backend names for a rejection, if it knows them
    message: str = ""
    unsupported: str | None = None
    error: str | None = None  # the backend itself failed (a harness problem, not a verdict on the case)
    stray: tuple[str, ...] = ()  # writes outside every output tile the backend noticed itself

    @classmethod
    def ok(cls, outputs: dict[str, np.ndarray]) -> Result:
        return cls(outputs=outputs)

    @classmethod
    def harness_error(cls, message: str) -> Result:
        return cls(error=message, message=message)

    @classmethod
    def reject(cls, message: str, rules: tuple[str, ...] = ()) -> Result:
        return cls(rejected=True, rules=rules, message=message)

    @classmethod
    def skip(cls, reason: str) -> Result:
        return cls(unsupported=reason)


class Backend(abc.ABC):
    """Subclass, implement ``capabilities`` and ``run``, then pass ``--pto-backend=module:Class``."""

    name: str = "backend"

    @abc.abstractmethod
    def capabilities(self) -> Capabilities: ...

    @abc.abstractmethod
    def run(self, case: Invocation) -> Result: ...

    # Optional hooks (the defaults do nothing).

    def prepare(self, cases: Sequence[Invocation], progress: Callable[[str, int, int], None] | None = None) -> None:
        """Called once with every case of the session before the first ``run`` (batch compiles here).

        ``progress(stage, done, total)`` may be called to report long preparation steps."""
        return None

    def artifacts(self, case: Invocation) -> dict[str, str]:
        """Backend-specific repro material for a failing case (e.g. ``{"cpp": source}``)."""
        return {}

    def stats(self) -> dict[str, float]:
        """Counters worth reporting (compiles, cache hits, ...)."""
        return {}
