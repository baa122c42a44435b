"""The MLIR ``arith`` operations kernels use for indices and scalars, on Python numbers.

Integers wrap to their type's width (``index`` is 64 bits); ``i1`` is 0 or 1.  Signed and unsigned
variants read the same bits as their name says.  Floats round to their type after every operation.
"""

from __future__ import annotations

import math
import re

import numpy as np

from .values import UNKNOWN, known

_INT = re.compile(r"^i([0-9]+)$")
FLOAT_TYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


class ArithError(ValueError):
    """An arith operation that has no result (division by zero, unknown type): the message says why."""


def int_width(ty: str) -> int | None:
    if ty == "index":
        return 64
    m = _INT.match(ty)
    return int(m.group(1)) if m and 0 < int(m.group(1)) <= 64 else None


def is_float(ty: str) -> bool:
    return ty in FLOAT_TYPES or ty == "bf16"


def wrap(value: int, bits: int) -> int:
    """Two's-complement signed reading of the low ``bits`` bits (i1 stays 0/1)."""
    value &= (1 << bits) - 1
    if bits > 1 and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def unsigned(value: int, bits: int) -> int:
    return value & ((1 << bits) - 1)


_FLOAT_BITS = {"f16": (np.uint16, np.float16), "f32": (np.uint32, np.float32), "f64": (np.uint64, np.float64)}


def float_from_bits(bits: int, ty: str) -> float:
    """The float of type ``ty`` whose bit pattern is ``bits`` (MLIR's hexadecimal literal: ``0x4048F5C3 : f32``)."""
    width = 16 if ty in ("f16", "bf16") else int(ty[1:])
    if not 0 <= bits < 1 << width:
        raise ArithError(f"0x{bits:X} is not a bit pattern of {ty} ({width} bits)")
    if ty == "bf16":
        return float(np.array(bits << 16, dtype=np.uint32).view(np.float32))
    as_int, as_float = _FLOAT_BITS[ty]
    return float(np.array(bits, dtype=as_int).view(as_float))


def round_float(value: float, ty: str) -> float:
    if ty == "bf16":
        import ml_dtypes

        return float(np.array(value, dtype=np.float32).astype(ml_dtypes.bfloat16))
    with np.errstate(all="ignore"):
        return float(FLOAT_TYPES[ty](value))


def as_type(value, ty: str):
    """``value`` as a value of type ``ty`` (a constant's text already converted to a number)."""
    if value is UNKNOWN:
        return UNKNOWN
    bits = int_width(ty)
    if bits is not None:
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, int):
            raise ArithError(f"{value!r} is not an integer of type {ty}")
        return wrap(value, bits)
    if is_float(ty):
        return round_float(float(value), ty)
    raise ArithError(f"type {ty} is not a scalar type arith knows (index, iN, f16, bf16, f32, f64)")


def _sdiv(a: int, b: int) -> int:
    if b == 0:
        raise ArithError("integer division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _srem(a: int, b: int) -> int:
    return a - _sdiv(a, b) * b


def _floordiv(a: int, b: int) -> int:
    if b == 0:
        raise ArithError("integer division by zero")
    return a // b


def _ceildiv(a: int, b: int) -> int:
    if b == 0:
        raise ArithError("integer division by zero")
    return -((-a) // b)


def _udiv(a: int, b: int) -> int:
    if b == 0:
        raise ArithError("integer division by zero")
    return a // b


def _urem(a: int, b: int) -> int:
    if b == 0:
        raise ArithError("integer division by zero")
    return a % b


def _shl(a: int, b: int, bits: int) -> int:
    return 0 if b >= bits or b < 0 else a << b


def _divf(a: float, b: float) -> float:
    if b != 0:
        return a / b
    if a == 0 or a != a:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


# name -> (signedness of the operands: s | u, function of (a, b, bits))
INT_BINARY = {
    "addi": ("s", lambda a, b, n: a + b),
    "subi": ("s", lambda a, b, n: a - b),
    "muli": ("s", lambda a, b, n: a * b),
    "divsi": ("s", lambda a, b, n: _sdiv(a, b)),
    "divui": ("u", lambda a, b, n: _udiv(a, b)),
    "remsi": ("s", lambda a, b, n: _srem(a, b)),
    "remui": ("u", lambda a, b, n: _urem(a, b)),
    "floordivsi": ("s", lambda a, b, n: _floordiv(a, b)),
    "ceildivsi": ("s", lambda a, b, n: _ceildiv(a, b)),
    "ceildivui": ("u", lambda a, b, n: _ceildiv(a, b)),
    "minsi": ("s", lambda a, b, n: min(a, b)),
    "maxsi": ("s", lambda a, b, n: max(a, b)),
    "minui": ("u", lambda a, b, n: min(a, b)),
    "maxui": ("u", lambda a, b, n: max(a, b)),
    "andi": ("u", lambda a, b, n: a & b),
    "ori": ("u", lambda a, b, n: a | b),
    "xori": ("u", lambda a, b, n: a ^ b),
    "shli": ("u", lambda a, b, n: _shl(a, b, n)),
    "shrui": ("u", lambda a, b, n: 0 if b >= n or b < 0 else a >> b),
    "shrsi": ("s", lambda a, b, n: (-1 if a < 0 else 0) if b >= n or b < 0 else a >> b),
}
def _ieee_extreme(a: float, b: float, pick) -> float:
    """MLIR's ``maximumf``/``minimumf`` (IEEE 754-2019 maximum/minimum): NaN if either is NaN, and -0.0 orders
    below +0.0 (``max``/``min`` alone take whichever zero comes first)."""
    if a != a or b != b:
        return math.nan
    if a == b == 0.0:
        return pick(a, b, key=lambda z: math.copysign(1.0, z))
    return pick(a, b)


FLOAT_BINARY = {
    "addf": lambda a, b: a + b,
    "subf": lambda a, b: a - b,
    "mulf": lambda a, b: a * b,
    "divf": lambda a, b: _divf(a, b),
    "maximumf": lambda a, b: _ieee_extreme(a, b, max),
    "minimumf": lambda a, b: _ieee_extreme(a, b, min),
    "maxnumf": lambda a, b: b if a != a else a if b != b else max(a, b),
    "minnumf": lambda a, b: b if a != a else a if b != b else min(a, b),
}
CMPI = {
    "eq": ("s", lambda a, b: a == b), "ne": ("s", lambda a, b: a != b),
    "slt": ("s", lambda a, b: a < b), "sle": ("s", lambda a, b: a <= b),
    "sgt": ("s", lambda a, b: a > b), "sge": ("s", lambda a, b: a >= b),
    "ult": ("u", lambda a, b: a < b), "ule": ("u", lambda a, b: a <= b),
    "ugt": ("u", lambda a, b: a > b), "uge": ("u", lambda a, b: a >= b),
}
CMPF = {
    "oeq": lambda a, b: a == b, "one": lambda a, b: a == a and b == b and a != b,
    "olt": lambda a, b: a < b, "ole": lambda a, b: a <= b, "ogt": lambda a, b: a > b, "oge": lambda a, b: a >= b,
    "ueq": lambda a, b: a != a or b != b or a == b, "une": lambda a, b: a != b,
    "ult": lambda a, b: not a >= b, "ule": lambda a, b: not a > b, "ugt": lambda a, b: not a <= b,
    "uge": lambda a, b: not a < b, "ord": lambda a, b: a == a and b == b, "uno": lambda a, b: a != a or b != b,
    "true": lambda a, b: True, "false": lambda a, b: False,
}
CASTS = ("index_cast", "index_castui", "extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui",
         "extf", "truncf")


def _numbers(name: str, *values, integer: bool) -> None:
    """The operands of an arith operation are numbers (an integer type's are integers), never a pointer, a
    view or a tile."""
    for v in values:
        if v is UNKNOWN or isinstance(v, int) or (not integer and isinstance(v, float)):
            continue
        what = "a float" if isinstance(v, float) else f"a {type(v).__name__.lower()}"
        raise ArithError(f"an operand of arith.{name} is {what}, not {'an integer' if integer else 'a number'}")


def binary(name: str, a, b, ty: str):
    _numbers(name, a, b, integer=name in INT_BINARY)
    if not known(a, b):
        return UNKNOWN
    if name in INT_BINARY:
        bits = int_width(ty)
        if bits is None:
            raise ArithError(f"arith.{name} needs an integer type, got {ty}")
        sign, fn = INT_BINARY[name]
        if sign == "u":
            a, b = unsigned(a, bits), unsigned(b, bits)
        return wrap(fn(a, b, bits), bits)
    if name in FLOAT_BINARY:
        if not is_float(ty):
            raise ArithError(f"arith.{name} needs a float type, got {ty}")
        return round_float(FLOAT_BINARY[name](float(a), float(b)), ty)
    raise ArithError(f"arith.{name} is not an operation the interpreter knows")


def compare_int(pred: str, a, b, ty: str):
    if pred not in CMPI:
        raise ArithError(f"unknown arith.cmpi predicate {pred!r} (known: {', '.join(CMPI)})")
    _numbers("cmpi", a, b, integer=True)
    if not known(a, b):
        return UNKNOWN
    bits = int_width(ty) or 64
    sign, fn = CMPI[pred]
    if sign == "u":
        a, b = unsigned(a, bits), unsigned(b, bits)
    return int(fn(a, b))


def compare_float(pred: str, a, b):
    if pred not in CMPF:
        raise ArithError(f"unknown arith.cmpf predicate {pred!r} (known: {', '.join(CMPF)})")
    _numbers("cmpf", a, b, integer=False)
    if not known(a, b):
        return UNKNOWN
    return int(CMPF[pred](float(a), float(b)))


def cast(name: str, value, src: str, dst: str):
    src_bits = int_width(src)
    _numbers(name, value, integer=src_bits is not None)
    if value is UNKNOWN:
        return UNKNOWN
    if name in ("index_castui", "extui", "uitofp") and src_bits is not None:
        value = unsigned(value, src_bits)
    if name in ("fptosi", "fptoui"):
        if value != value or math.isinf(value):
            raise ArithError(f"arith.{name} of {value} has no integer result")
        value = math.trunc(value)
    return as_type(value, dst)


def negf(value, ty: str):
    _numbers("negf", value, integer=False)
    return UNKNOWN if value is UNKNOWN else round_float(-float(value), ty)
