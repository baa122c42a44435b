"""The NumPy type of an ISA dtype (ml_dtypes for bfloat16, the fp8 and fp4 types)."""

from __future__ import annotations

from functools import cache

import numpy as np


def numpy_dtype_of(isa, dtype: str) -> np.dtype:
    """The NumPy dtype of an ISA dtype name."""
    return numpy_dtype_named(isa.dtypes[dtype].numpy)


@cache
def numpy_dtype_named(name: str) -> np.dtype:
    """The NumPy dtype a dtype's ``numpy`` field names: one of NumPy's own scalar types, else one of
    ml_dtypes' (imported only then: loading its types costs a process a noticeable part of its start)."""
    own = np.sctypeDict.get(name)  # NumPy's own names (no deprecated module attributes read)
    if isinstance(own, type) and issubclass(own, np.generic):
        return np.dtype(own)
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)
