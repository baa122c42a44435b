"""Building or reading a database makes a few hundred thousand objects and no reference cycles to speak of:
the cyclic garbage collector, left on, walks them again and again while they are made (a fifth of a load,
half of reading the database kept on disk).  It is paused for that while."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (as it was after it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
