"""Whether the live simulator tests can run here: the reason they are skipped, or None."""

from __future__ import annotations

import os

from ptospec.backends.cpusim.toolchain import ToolchainError, find_checkout, find_compiler


def cpusim_unavailable(purpose: str) -> str | None:
    if not os.environ.get("PTO_ISA_ROOT"):
        return f"PTO_ISA_ROOT is not set: point it at a pto-isa checkout to {purpose}"
    try:
        find_checkout(None)
        find_compiler(None)
    except ToolchainError as exc:
        return f"cpusim prerequisites missing: {exc.message}"
    return None
