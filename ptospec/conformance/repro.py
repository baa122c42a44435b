"""Copy-pasteable reproductions of a conformance failure."""

from __future__ import annotations

import math
import shlex

import numpy as np

from ..executor import numpy_dtype
from ..model import Database
from .cases import descriptor_dtype


def _literal(value: object) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "np.nan"
        if math.isinf(value):
            return "np.inf" if value > 0 else "-np.inf"
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return repr(value)


def array_literal(db: Database, dtype: str, arr: object) -> str:
    """``np.array([[...]], dtype=...)`` text that rebuilds ``arr`` exactly."""
    a = np.asarray(arr)
    name = db.isa.dtypes[dtype].numpy
    dt = f"ml_dtypes.{name}" if hasattr(__import__("ml_dtypes"), name) else f"np.{name}"
    values = a.astype(np.float64).tolist() if a.dtype.kind not in "iu" else a.tolist()
    return f"np.array({_literal(values)}, dtype={dt})"


def render(db: Database, op: str, mode: str, profile: str, descriptors: dict[str, str], inputs: dict[str, object],
           backend: str, problems: list[str]) -> str:
    """The failure, a Python snippet that re-runs it, and equivalent ``ptospec`` command lines."""
    mode_spec = db.op(op).mode(mode)
    lines = [f"conformance failure: {op} mode={mode} profile={profile} backend={backend}"]
    lines += [f"  - {p}" for p in problems]
    lines += ["", "repro (Python):", "  import ml_dtypes", "  import numpy as np",
              "  from ptospec.conformance.repro import replay", "  tiles = {"]
    lines += [f"      {n!r}: {d!r}," for n, d in descriptors.items()]
    lines += ["  }", "  inputs = {"]
    for o in mode_spec.operands:
        if o.name in inputs and o.role in ("in", "out", "scalar"):
            dtype = descriptor_dtype(descriptors[o.name]) if o.role != "scalar" else \
                descriptors[o.name]
            value = inputs[o.name]
            text = array_literal(db, dtype, value) if np.ndim(value) else repr(value.item() if hasattr(value, "item")
                                                                               else value)
            lines.append(f"      {o.name!r}: {text},")
    for register in mode_spec.reads_state:  # configuration registers: a mapping of their fields
        if isinstance(inputs.get(register), dict):
            lines.append(f"      {register!r}: {dict(inputs[register])!r},")
    lines += ["  }", f"  print(replay({op!r}, {mode!r}, {profile!r}, tiles, inputs, backend={backend!r}))", ""]
    tile_args = " ".join(f"--tile {shlex.quote(f'{n}={d}')}" for n, d in descriptors.items())
    mode_arg = f" --mode {mode}" if len(db.op(op).modes) > 1 else ""
    lines += ["command line (legality, then reference outputs after saving the inputs with "
              "np.savez('inputs.npz', **inputs)):",
              f"  ptospec check {op} --profile {profile}{mode_arg} {tile_args}",
              f"  ptospec run {op} --profile {profile}{mode_arg} {tile_args} --inputs inputs.npz --output out.npz"
              + "".join(f" --state {r}.{k}={v}" for r in mode_spec.reads_state if isinstance(inputs.get(r), dict)
                        for k, v in inputs[r].items())]
    return "\n".join(lines)


def replay(op: str, mode: str, profile: str, tiles: dict[str, str], inputs: dict[str, object],
           backend: str = "reference", specs: str | None = None) -> object:
    """Run one case on a backend (by name or ``module:Class``) and return its result."""
    from ..asm.types import parse_descriptor
    from ..load.database import load_database
    from .backend import Invocation
    from .load import load_backend

    db = load_database(specs)
    parsed = {n: parse_descriptor(t, db.isa) for n, t in tiles.items()}
    data = {n: (np.asarray(v).astype(numpy_dtype(db, parsed[n].dtype)) if np.ndim(v) else v)
            for n, v in inputs.items()}
    return load_backend(backend, db).run(Invocation(op, mode, profile, parsed, data, dict(tiles)))
