"""A module imported at the first use of one of its names (NumPy, for code that needs it only on some paths)."""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for module ``name`` in ``namespace`` (a module's globals) under ``alias``: the first attribute
    looked up imports it, and the module then takes this object's place there, so later uses cost nothing."""

    def __init__(self, name: str, namespace: dict[str, Any], alias: str) -> None:
        self._name, self._namespace, self._alias = name, namespace, alias

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self._name)
        self._namespace[self._alias] = module
        return getattr(module, attr)
