"""``mlir.dialects.builtin``: the builtin types, as MLIR's module re-exports them."""

from ..ir import *  # noqa: F403
