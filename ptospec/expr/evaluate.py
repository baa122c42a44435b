"""Scalar evaluation of expressions: runtime checks, ``let`` values, sizing formulas.

Names resolve, in order, to: ``let`` bindings, operand tiles, type variables (bound
to dtype names), ``profile`` constants, and the ISA's enum constants (tile types,
layouts, dtype names).  Tile fields come from a fixed whitelist; nothing else of
Python is reachable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ExprError, UnknownValue
from ..tile import GlobalDesc, TileDesc
from .ast import Attr, Binary, Call, In, Index, Name, Node, Num, Reduce, Unary
from .functions import FUNCTIONS, c_div, c_mod

TILE_FIELDS = (*TileDesc.FIELDS, "layout")
MAX_INT = 1 << 64  # integers beyond this are no size, index or value any tile has: refuse, never compute them
_ARITHMETIC = (ArithmeticError, TypeError, ValueError, KeyError, IndexError)
_CONSTANTS: dict[int, tuple[Any, dict[str, str]]] = {}  # enum constants per ISA object


@dataclass
class Scope:
    """What names mean while evaluating a check for one invocation."""

    isa: Any  # model.Isa
    tiles: Mapping[str, TileDesc] = field(default_factory=dict)
    type_vars: Mapping[str, str] = field(default_factory=dict)
    profile_constants: Mapping[str, int] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    attrs: Mapping[str, str] = field(default_factory=dict)  # mode attributes (e.g. a comparison mode)
    variants: Mapping[str, str] = field(default_factory=dict)  # the profile's numerics variants (max: ordered)

    def constants(self) -> dict[str, str]:
        cached = _CONSTANTS.get(id(self.isa))
        if cached is not None and cached[0] is self.isa:
            return cached[1]
        isa = self.isa
        table: dict[str, str] = {}
        for group in (isa.tile_types, isa.blayouts, isa.slayouts, isa.pad_values):
            for cpp_name in group:
                table[cpp_name] = cpp_name
        for name in (*isa.layouts, *isa.global_layouts):
            table[name] = name
        for name in isa.dtypes:
            table[name] = name
        for enum in isa.enums.values():
            for value in enum.values:
                table[value] = value
        _CONSTANTS[id(isa)] = (isa, table)
        return table

    def lookup(self, name: str) -> Any:
        if name in self.values:
            value = self.values[name]
            if isinstance(value, _Deferred):
                raise UnknownValue(f"{name} depends on a value not known here", rule="expr.unknown")
            return value
        if name in self.tiles:
            return self.tiles[name]
        if name in self.type_vars:
            return self.type_vars[name]
        if name in self.attrs:
            return self.attrs[name]
        consts = self.constants()
        if name in consts:
            return consts[name]
        raise ExprError(f"unknown name {name!r}", rule="expr.unknown-name")

    def tile_field(self, obj: str, name: str) -> Any:
        if obj == "profile":
            if name not in self.profile_constants:
                raise ExprError(f"profile has no constant {name!r}", rule="expr.unknown-name")
            return self.profile_constants[name]
        tile = self.tiles.get(obj)
        if tile is None:
            raise ExprError(f"{obj!r} is not an operand tile", rule="expr.unknown-name")
        if isinstance(tile, GlobalDesc):
            if name not in GlobalDesc.FIELDS:
                raise ExprError(f"global tensors have no field {name!r} (fields: {', '.join(GlobalDesc.FIELDS)})",
                                rule="expr.unknown-name")
            return tile.field(name)
        if name == "layout":
            return self.isa.layout_name(tile.blayout, tile.slayout) or f"{tile.blayout}+{tile.slayout}"
        if name not in TileDesc.FIELDS:
            raise ExprError(
                f"tiles have no field {name!r} (fields: {', '.join(TILE_FIELDS)})", rule="expr.unknown-name"
            )
        return tile.field(name)


def _dtype(scope: Scope, value: Any, func: str):
    dtypes = scope.isa.dtypes
    if isinstance(value, str) and value in dtypes:
        return dtypes[value]
    raise ExprError(f"{func}() needs a dtype, got {value!r}", rule="expr.type")


def evaluate(node: Node, scope: Scope) -> Any:
    """Evaluate ``node`` to a Python value (int, float, bool or str)."""
    match node:
        case Num(value=v):
            return v
        case Name(id=name):
            return scope.lookup(name)
        case Attr(obj=obj, name=name):
            return scope.tile_field(obj, name)
        case Unary(op="-", operand=o):
            operand = evaluate(o, scope)
            return _checked(lambda: -operand, "-")
        case Unary(op="not", operand=o):
            return not _truth(evaluate(o, scope))
        case Binary(op="and", left=a, right=b):
            return _truth(evaluate(a, scope)) and _truth(evaluate(b, scope))
        case Binary(op="or", left=a, right=b):
            # A known-true side decides even when the other side is unknown.
            try:
                left = _truth(evaluate(a, scope))
            except UnknownValue:
                if _truth(evaluate(b, scope)):
                    return True
                raise
            return left or _truth(evaluate(b, scope))
        case Binary(op=op, left=a, right=b):
            left, right = evaluate(a, scope), evaluate(b, scope)
            return _checked(lambda: _binary(op, left, right), op)
        case In(value=v, items=items):
            value = evaluate(v, scope)
            return any(value == evaluate(i, scope) for i in items)
        case Call(func=func, args=args):
            fn = FUNCTIONS.get(func)
            if fn is None:
                raise ExprError(f"unknown function {func!r}", rule="expr.unknown-function")
            if len(args) != fn.arity:
                raise ExprError(f"{func}() takes {fn.arity} argument(s), got {len(args)}", rule="expr.arity")
            vals = [evaluate(a, scope) for a in args]
            if func == "pad_value":
                return _pad_value(scope, vals[0], vals[1])
            if fn.type_level:
                dt = _dtype(scope, vals[0], func)
                if func in ("highest", "lowest"):
                    return _extreme(scope, dt, func == "highest")
                return {"bytes": dt.bytes, "bits": dt.bits, "is_float": dt.is_float,
                        "is_signed": dt.is_signed}[func]
            for v in vals:
                _check_value(v, func)
            with np.errstate(all="ignore"):
                result = _checked(lambda: fn.impl(*vals), func)
            if isinstance(result, np.ndarray) and result.ndim != 0:
                raise ExprError(f"{func}() does not give one value here", rule="expr.type")
            return _check_value(result.item() if isinstance(result, np.generic | np.ndarray) else result, func)
        case Index() | Reduce():
            raise ExprError("tile elements and reductions are only allowed in semantics", rule="expr.context")
    raise ExprError(f"cannot evaluate {node!r}", rule="expr.syntax")


def _extreme(scope: Scope, dt, high: bool) -> int | float:
    """The largest (``high``) or smallest value of a dtype; infinities where the type has them."""
    import ml_dtypes

    from .vectorize import numpy_dtype_of  # vectorize imports this module

    npdt = numpy_dtype_of(scope.isa, dt.name)
    if not dt.is_float:
        info = np.iinfo(npdt)
        return int(info.max if high else info.min)
    with np.errstate(all="ignore"):
        has_inf = bool(np.isinf(np.array(np.inf).astype(npdt)))
    if has_inf:
        return float("inf") if high else float("-inf")
    info = ml_dtypes.finfo(npdt)
    return float(info.max if high else info.min)


def _pad_value(scope: Scope, pad: Any, dtype: Any) -> int | float:
    """The value PadValue ``pad`` stands for in element type ``dtype`` (isa.yaml ``pad_fill``)."""
    fills = scope.isa.pad_fill
    if pad not in fills:
        known = ", ".join(fills)
        raise ExprError(f"pad value {pad!r} stands for no element value (those that do: {known})",
                        rule="expr.pad-value")
    _dtype(scope, dtype, "pad_value")
    inner = Scope(scope.isa, type_vars={"T": dtype})
    return evaluate(fills[pad], inner)


def _checked(compute, what: str) -> Any:
    """Run one arithmetic step; Python and NumPy failures become ``ExprError``, huge results are refused."""
    try:
        return _check_value(compute(), what)
    except (ExprError, UnknownValue):
        raise
    except _ARITHMETIC as exc:
        raise ExprError(f"{what} cannot be computed here: {exc}", rule="expr.type") from None


def _check_value(value: Any, what: str) -> Any:
    if isinstance(value, bool | str | TileDesc | np.bool_) or value is None:
        return value
    if isinstance(value, int | np.integer):
        if abs(int(value)) > MAX_INT:
            raise ExprError(f"{what}: integer result beyond 2**64", rule="expr.overflow")
        return value
    if isinstance(value, float | np.floating):
        return value
    if isinstance(value, complex):
        raise ExprError(f"{what} gives a complex number", rule="expr.type")
    return value


def _truth(value: Any) -> bool:
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise ExprError(f"expected a true/false condition, got {value!r}", rule="expr.type")


def _binary(op: str, a: Any, b: Any) -> Any:
    if op in ("==", "!="):
        equal = a == b
        return equal if op == "==" else not equal
    if isinstance(a, str) or isinstance(b, str):
        raise ExprError(f"operator {op!r} does not apply to {a!r} and {b!r}", rule="expr.type")
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    if op == ">=":
        return a >= b
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op in ("/", "//", "%") and b == 0:
        raise ExprError(f"division by zero ({a} {op} {b})", rule="expr.div-zero")
    if op == "/":
        if isinstance(a, int) and isinstance(b, int):
            return c_div(a, b)
        return a / b
    if op == "//":
        return a // b
    if op == "%":
        return float(c_mod(a, b)) if isinstance(a, float) or isinstance(b, float) else int(c_mod(a, b))
    if op == "**":
        if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1 and a.bit_length() * b > 66:
            raise ExprError(f"{a} ** {b} is beyond 2**64", rule="expr.overflow")
        return a**b
    raise ExprError(f"unknown operator {op!r}", rule="expr.syntax")


def bind_lets(lets, scope: Scope) -> None:
    """Evaluate ``let`` bindings in order into ``scope.values``; unknown ones stay unbound."""
    for name, node, _text in lets:
        try:
            scope.values[name] = evaluate(node, scope)
        except UnknownValue:
            scope.values[name] = _Deferred(name)


class _Deferred:
    """Placeholder for a ``let`` whose value depends on something unknown."""

    def __init__(self, name: str):
        self.name = name
