"""C++ spellings of global-tensor descriptors (``GlobalTensor<T, Shape<...>, Stride<...>, Layout>``)."""

from __future__ import annotations

from .model import Isa
from .tile import GlobalDesc

DYNAMIC = "-1"  # pto::DYNAMIC


def global_type(isa: Isa, g: GlobalDesc) -> str:
    """The ``GlobalTensor`` type of a view: its five C++ dimensions and strides, unknown ones dynamic."""
    def spell(values) -> str:
        return ", ".join(DYNAMIC if v is None else str(v) for v in values)

    cpp = isa.dtypes[g.dtype].cpp
    return f"GlobalTensor<{cpp}, Shape<{spell(g.dims5)}>, Stride<{spell(g.strides5)}>, Layout::{g.layout}>"


def global_pointer(isa: Isa, g: GlobalDesc, name: str) -> str:
    """The kernel parameter a view is made from: ``__gm__ T *name``."""
    return f"__gm__ {isa.dtypes[g.dtype].cpp} *{name}"


def dynamic_global_type(isa: Isa, g: GlobalDesc) -> str:
    """The ``GlobalTensor`` type with every extent and stride dynamic: one compiled type serves every view of
    an element type and layout (the values come at run time)."""
    dyn = ", ".join([DYNAMIC] * 5)
    return f"GlobalTensor<{isa.dtypes[g.dtype].cpp}, Shape<{dyn}>, Stride<{dyn}>, Layout::{g.layout}>"
