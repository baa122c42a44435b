"""Find a backend by name: ``reference``, an entry point in group ``ptospec.backends``,
``module:Class`` or ``path/to/file.py:Class``."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from importlib.metadata import entry_points
from pathlib import Path

from ..errors import InvocationError
from ..model import Database
from .backend import Backend


def backend_class(spec: str) -> type:
    """The backend class ``spec`` names (imported, not instantiated)."""
    if spec == "reference":
        from .reference import ReferenceBackend

        return ReferenceBackend
    for ep in entry_points(group="ptospec.backends"):
        if ep.name == spec:
            return ep.load()
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise InvocationError(f"unknown backend {spec!r}: give 'reference', an installed backend name, "
                              "'module:Class' or 'path/to/file.py:Class'", rule="conformance.backend")
    try:
        if module_name.endswith(".py") or "/" in module_name:
            path = Path(module_name)
            loader_spec = importlib.util.spec_from_file_location(path.stem, path)
            if loader_spec is None or loader_spec.loader is None or not path.is_file():
                raise ImportError(f"no such file: {path}")
            module = importlib.util.module_from_spec(loader_spec)
            loader_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:  # the backend's own module: any failure while importing it
        raise InvocationError(f"cannot import backend {spec!r}: {type(exc).__name__}: {exc}",
                              rule="conformance.backend") from None
    cls = getattr(module, attr, None)
    if cls is None:
        raise InvocationError(f"backend module {module_name!r} has no {attr!r}", rule="conformance.backend")
    if not isinstance(cls, type) or not issubclass(cls, Backend):
        raise InvocationError(f"backend {spec!r} is not a subclass of ptospec.conformance.backend.Backend",
                              rule="conformance.backend")
    return cls


def load_backend(spec: str, db: Database) -> Backend:
    """Instantiate the backend; its constructor gets ``db`` if it takes a ``db`` parameter."""
    cls = backend_class(spec)
    try:  # the backend's own constructor: any failure in it is the backend's, reported as such
        takes_db = "db" in inspect.signature(cls).parameters
        backend = cls(db=db) if takes_db else cls()
    except (Exception, SystemExit) as exc:
        raise InvocationError(f"backend {spec!r} cannot be created: {type(exc).__name__}: {exc}",
                              rule="conformance.backend") from None
    if not isinstance(backend, Backend):
        raise InvocationError(f"backend {spec!r} is not a ptospec.conformance.backend.Backend",
                              rule="conformance.backend")
    return backend
