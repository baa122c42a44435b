"""Scalars the C++ call converts: a parameter declared ``typename P::DType s`` takes the element type of the tile
argument of type ``P``, and C++ converts an argument of another arithmetic type to it implicitly.  The assembler
passes the SSA scalar as it is typed (an ``i32`` constant to an f32 TADDS or TSELS), so the program layer converts
it the same way before the instruction is checked and run.  What converts is read from the mode's ``cpp``
signature and argument list in the spec."""

from __future__ import annotations

import functools
import math
import re

from ..model import Mode
from .arith import unsigned, wrap

_PARAMS = re.compile(r"\(([^()]*)\)\s*;?\s*$", re.S)
_TILE = re.compile(r"^(?:const\s+)?(\w+)\s*&\s*\w+$")
_DECLARED = re.compile(r"^typename\s+(\w+)::DType\s+\w+$")


def declared_scalars(mode: Mode) -> dict[str, str]:
    """scalar operand -> the tile operand whose element type the C++ parameter declares for it."""
    return _declared(mode.cpp_signature, mode.cpp_args)


@functools.cache
def _declared(signature: str, args: tuple[str, ...]) -> dict[str, str]:
    found = _PARAMS.search(signature.strip())
    if found is None:
        return {}
    params = [p.strip() for p in found.group(1).split(",")]
    params = [p for p in params if "..." not in p]
    if len(params) != len(args):
        return {}
    tiles = {}
    for param, arg in zip(params, args, strict=True):
        m = _TILE.match(param)
        if m:
            tiles[m.group(1)] = arg
    out = {}
    for param, arg in zip(params, args, strict=True):
        m = _DECLARED.match(param)
        if m and m.group(1) in tiles:
            out[arg] = tiles[m.group(1)]
    return out


def converted_scalar(isa, value: int | float, dtype: str) -> int | float:
    """``value`` converted to ``dtype`` as a C++ argument converts: to a float type its nearest value; to an
    integer type a float truncates toward zero and an integer wraps modulo the type's width."""
    spec = isa.dtypes[dtype]
    if spec.kind == "float":
        return float(value)
    if not math.isfinite(value):
        raise ValueError(f"{value} has no {dtype} value (C++ leaves the conversion undefined)")
    return (wrap if spec.kind == "signed" else unsigned)(int(value), spec.bits)  # int() truncates toward zero
