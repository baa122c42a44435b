"""Scalar evaluation of expressions: runtime checks, ``let`` values, sizing formulas.

Names resolve, in order, to: ``let`` bindings, operand tiles, type variables (bound
to dtype names), ``profile`` constants, and the ISA's enum constants (tile types,
layouts, dtype names).  Tile fields come from a fixed whitelist; nothing else of
Python is reachable.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ExprError, UnknownValue
from ..lazymodule import LazyModule
from ..tile import GlobalDesc, TileDesc
from .ast import Attr, Binary, Call, In, Index, Name, Node, Num, Reduce, Unary
from .functions import FUNCTIONS, c_div, c_mod

# NumPy at the first call of a function on other values than integers (``ptospec check`` never needs it);
# a NumPy value exists only once something imported it (``_numpy_value``)
np = LazyModule("numpy", globals(), "np")
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
    state: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # configuration registers' fields

    def constants(self) -> dict[str, str]:
        cached = _CONSTANTS.get(id(self.isa))
        if cached is not None and cached[0] is self.isa:
            return cached[1]
        isa = self.isa
        table: dict[str, str] = {}
        for group in (isa.tile_types, isa.blayouts, isa.slayouts, isa.pad_values, isa.compact_modes):
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
        if tile is None and obj in self.isa.state:
            register = self.state.get(obj)
            if register is None:
                raise UnknownValue(f"state register {obj} is not set here (an instruction setting it comes first)",
                                   rule="exec.state-unset")
            return register[name]
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
    """Evaluate ``node`` to a Python value (int, float, bool or str).

    Each tree is turned once into nested Python closures, one per node (no text is compiled or
    executed: the closures are fixed functions of this module), and those are called from then on:
    case searches evaluate the same few hundred checks millions of times."""
    entry = _COMPILED.get(id(node))
    if entry is None or entry[0] is not node:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        entry = _COMPILED[id(node)] = (node, _compile(node))
    return entry[1](scope)


Evaluator = Callable[[Scope], Any]
_COMPILED: dict[int, tuple[Node, Evaluator]] = {}  # id(tree) -> (tree, its closure); the tree is kept alive
_COMPILED_MAX = 50_000


def _fails(error: ExprError) -> Evaluator:
    """A node that cannot be evaluated: the error is raised when (and each time) it is evaluated."""
    def run(scope: Scope) -> Any:
        raise ExprError(error.message, rule=error.rule)
    return run


def _compile(node: Node) -> Evaluator:
    if isinstance(node, Num):
        value = node.value
        return lambda scope: value
    if isinstance(node, Name):
        name = node.id
        return lambda scope: scope.lookup(name)
    if isinstance(node, Attr):
        obj, field_name = node.obj, node.name
        if obj == "profile" or field_name not in TileDesc.FIELDS:
            return lambda scope: scope.tile_field(obj, field_name)

        def tile_field(scope: Scope) -> Any:
            tile = scope.tiles.get(obj)
            if type(tile) is TileDesc:  # the common case of Scope.tile_field, without its checks
                value = getattr(tile, field_name)
                return value if value is not None else tile.field(field_name)  # None: field() says it is unknown
            return scope.tile_field(obj, field_name)
        return tile_field
    if isinstance(node, Unary) and node.op == "-":
        operand = _compile(node.operand)

        def negate(scope: Scope) -> Any:
            value = operand(scope)
            return _checked(lambda: -value, "-")
        return negate
    if isinstance(node, Unary) and node.op == "not":
        operand = _compile(node.operand)
        return lambda scope: not _truth(operand(scope))
    if isinstance(node, Binary) and node.op == "and":
        a, b = _compile(node.left), _compile(node.right)

        def both(scope: Scope) -> Any:
            # A known-false side decides even when the other side is unknown.
            try:
                left = _truth(a(scope))
            except UnknownValue:
                if not _truth(b(scope)):
                    return False
                raise
            return left and _truth(b(scope))
        return both
    if isinstance(node, Binary) and node.op == "or":
        a, b = _compile(node.left), _compile(node.right)

        def either(scope: Scope) -> Any:
            # A known-true side decides even when the other side is unknown.
            try:
                left = _truth(a(scope))
            except UnknownValue:
                if _truth(b(scope)):
                    return True
                raise
            return left or _truth(b(scope))
        return either
    if isinstance(node, Binary):
        return _compile_binary(node.op, _compile(node.left), _compile(node.right))
    if isinstance(node, In):
        value_of = _compile(node.value)
        items = [_compile(i) for i in node.items]

        def member(scope: Scope) -> Any:
            value = value_of(scope)
            return any(value == item(scope) for item in items)
        return member
    if isinstance(node, Call):
        return _compile_call(node)
    if isinstance(node, Index | Reduce):
        return _fails(ExprError("tile elements and reductions are only allowed in semantics", rule="expr.context"))
    return _fails(ExprError(f"cannot evaluate {node!r}", rule="expr.syntax"))


_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _compile_binary(op: str, a: Evaluator, b: Evaluator) -> Evaluator:
    if op == "==":
        def equal(scope: Scope) -> Any:
            left, right = a(scope), b(scope)
            if type(left) is type(right) and type(left) in (int, str):  # _binary's answer, without its dispatch
                return left == right
            return _binary_checked(op, left, right)
        return equal
    if op in _COMPARE:
        compare = _COMPARE[op]

        def ordered(scope: Scope) -> Any:
            left, right = a(scope), b(scope)
            if type(left) is int and type(right) is int:  # what _binary does for two ints, without its dispatch
                return compare(left, right)
            return _binary_checked(op, left, right)
        return ordered

    fast = _INT_ARITHMETIC.get(op)
    if fast is not None:
        def arithmetic(scope: Scope) -> Any:
            left, right = a(scope), b(scope)
            if type(left) is int and type(right) is int and -_INT64 < left < _INT64 and 0 < abs(right) < _INT64:
                result = fast(left, right)  # what _binary gives for two such ints, without its dispatch
                if -MAX_INT <= result <= MAX_INT:
                    return result
            return _binary_checked(op, left, right)
        return arithmetic

    def binary(scope: Scope) -> Any:
        return _binary_checked(op, a(scope), b(scope))
    return binary


_INT64 = 1 << 63


def _c_remainder(a: int, b: int) -> int:
    """C's ``%`` of two ints (the sign of the dividend), as ``c_mod`` computes it."""
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


# Integer operations of operands below 2**63 in magnitude and a non-zero right side, computed directly (a
# result beyond 2**64 goes the checked way, which refuses it).
_INT_ARITHMETIC: dict[str, Callable[[int, int], int]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "%": _c_remainder, "//": operator.floordiv,
    "/": c_div,
}


def _binary_checked(op: str, left: Any, right: Any) -> Any:
    try:
        result = _binary(op, left, right)
    except (ExprError, UnknownValue):
        raise
    except _ARITHMETIC as exc:
        raise ExprError(f"{op} cannot be computed here: {exc}", rule="expr.type") from None
    return _check_value(result, op)


def _compile_call(node: Call) -> Evaluator:
    func, args = node.func, node.args
    fn = FUNCTIONS.get(func)
    if fn is None:
        return _fails(ExprError(f"unknown function {func!r}", rule="expr.unknown-function"))
    if len(args) != fn.arity:
        return _fails(ExprError(f"{func}() takes {fn.arity} argument(s), got {len(args)}", rule="expr.arity"))
    arguments = [_compile(a) for a in args]
    if fn.dtype_field:  # bytes(T), bits(src.dtype), ...: a field of the dtype
        argument, field_name = arguments[0], fn.dtype_field
        return lambda scope: getattr(_dtype(scope, argument(scope), func), field_name)
    fast = fn.on_ints

    def call(scope: Scope) -> Any:
        vals = [a(scope) for a in arguments]
        if func == "pad_value":
            return _pad_value(scope, vals[0], vals[1])
        if func == "code":
            return _code(scope, vals[0])
        if fn.type_level:  # highest, lowest, max_finite (the fields of a dtype are compiled apart)
            dt = _dtype(scope, vals[0], func)
            return _extreme(scope, dt, func != "lowest", finite=func == "max_finite")
        if fast is not None and all(type(v) is int and -_INT64 < v < _INT64 for v in vals) and vals[-1]:
            return fast(*vals)  # the function's own way with such ints: what the NumPy function gives
        _check_arguments(scope, fn, vals)
        for v in vals:
            _check_value(v, func)
        vals = [_numpy_type(scope, v) for v in vals]  # cast(x, T), bitcast(x, e8m0): the dtype's NumPy type
        with np.errstate(all="ignore"):
            result = _checked(lambda: fn.impl(*vals), func)
        if isinstance(result, np.ndarray) and result.ndim != 0:
            raise ExprError(f"{func}() does not give one value here", rule="expr.type")
        return _check_value(result.item() if isinstance(result, np.generic | np.ndarray) else result, func)
    return call




def _check_arguments(scope: Scope, fn, vals: list) -> None:
    """A tile operand only where the function takes one, a dtype of the database where it takes a type, an
    integer in its bounds where it takes a count: anything else is one ``expr.type`` error."""
    for k, v in enumerate(vals):
        is_tile = isinstance(v, TileDesc | GlobalDesc)
        if k in fn.tile_args and not isinstance(v, TileDesc):
            raise ExprError(f"argument {k + 1} of {fn.name}() must name a tile operand, got {v!r}", rule="expr.type")
        if is_tile and k not in fn.tile_args:
            raise ExprError(f"argument {k + 1} of {fn.name}() is a value, not a tile operand", rule="expr.type")
        if k in fn.dtype_args and not (isinstance(v, str) and v in scope.isa.dtypes):
            raise ExprError(f"argument {k + 1} of {fn.name}() must be a dtype of the database "
                            f"({', '.join(scope.isa.dtypes)}), got {v!r}", rule="expr.type")
    for k, low, high in fn.literal_args:
        v = vals[k]
        if not (isinstance(v, int | np.integer) and not isinstance(v, bool) and low <= v <= high):
            raise ExprError(f"argument {k + 1} of {fn.name}() must be an integer from {low} to {high}, got {v!r}",
                            rule="expr.type")


def _numpy_type(scope: Scope, value: Any) -> Any:
    """A dtype name of the database (``f32``, ``e8m0``, ``i8``) as its NumPy type; any other value as it is.
    (NumPy reads some names otherwise: ``i8`` is its int64.)"""
    if isinstance(value, str) and value in scope.isa.dtypes:
        from .numpy_types import numpy_dtype_of

        return numpy_dtype_of(scope.isa, value)
    return value


def _extreme(scope: Scope, dt, high: bool, finite: bool = False) -> int | float:
    """The largest (``high``) or smallest value of a dtype; infinities where the type has them, unless
    ``finite``."""
    import ml_dtypes

    from .numpy_types import numpy_dtype_of

    npdt = numpy_dtype_of(scope.isa, dt.name)
    if not dt.is_float:
        info = np.iinfo(npdt)
        return int(info.max if high else info.min)
    with np.errstate(all="ignore"):
        has_inf = bool(np.isinf(np.array(np.inf).astype(npdt)))
    if has_inf and not finite:
        return float("inf") if high else float("-inf")
    info = ml_dtypes.finfo(npdt)
    return float(info.max if high else info.min)


def _code(scope: Scope, value: Any) -> int:
    """The integer an enumerator stands for (``codes`` of its enum in isa.yaml)."""
    enum = scope.isa.enum_of_value(value) if isinstance(value, str) else None
    if enum is None or value not in enum.codes:
        raise ExprError(f"code() needs an enumerator of an enum with codes, got {value!r}", rule="expr.type")
    return enum.codes[value]


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
    kind = type(value)
    if kind is bool or kind is str:
        return value
    if kind is int and -MAX_INT <= value <= MAX_INT:
        return value
    if isinstance(value, bool | str | TileDesc) or value is None:
        return value
    if isinstance(value, int) or _numpy_value(value, "integer"):
        if abs(int(value)) > MAX_INT:
            raise ExprError(f"{what}: integer result beyond 2**64", rule="expr.overflow")
        return value
    if isinstance(value, complex):  # a NumPy complex too (a float, NumPy's or not, is a value)
        raise ExprError(f"{what} gives a complex number", rule="expr.type")
    return value


def _truth(value: Any) -> bool:
    if value is True or value is False:
        return value
    if isinstance(value, bool) or _numpy_value(value, "bool_"):
        return bool(value)
    raise ExprError(f"expected a true/false condition, got {value!r}", rule="expr.type")


def _numpy_value(value: Any, kind: str) -> bool:
    """Whether ``value`` is a NumPy scalar of ``kind`` (``integer``, ``bool_``): never, while nothing has imported
    NumPy."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, getattr(numpy, kind))


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
