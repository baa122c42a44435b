"""Expressions evaluated element-wise as NumPy arrays over an index grid (no Python loop per element).

Every index variable gets one axis of a ``Grid``; each sub-expression evaluates to an array broadcastable
to it, a reduction collapses its variable's axis to size 1.  Reads outside a source's valid region are
errors.  ``ptospec.statements`` runs whole statements on top of this; ``storage`` evaluates tile placements with
``evaluate_array``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import ExprError
from ..tile import GlobalDesc
from .ast import Attr, Binary, Call, In, Index, Name, Node, Num, Reduce, Statement, Unary, walk
from .evaluate import Scope, evaluate
from .functions import FUNCTIONS, REDUCTIONS, c_div, c_mod, function_impl, reduce_along
from .numpy_types import numpy_dtype_of

MAX_GRID = 1 << 22  # index combinations one statement may visit (the largest tile holds 256 Ki elements)
FAILURES = (ArithmeticError, TypeError, ValueError, IndexError, KeyError)


def statement_vars(stmt: Statement) -> list[str]:
    """Index variables of a statement in axis order: target, then ``for``, then reductions."""
    names: list[str] = []
    for idx in stmt.target.indices:
        if isinstance(idx, Name) and idx.id not in names:
            names.append(idx.id)
    for var, _ in stmt.domain:
        if var not in names:
            names.append(var)
    parts = [stmt.value, *stmt.target.indices, *([stmt.where] if stmt.where is not None else [])]
    for part in parts:
        for node in walk(part):
            if isinstance(node, Reduce) and node.var not in names:
                names.append(node.var)
    return names


class Grid:
    def __init__(self, variables: list[str], extents: dict[str, int], reads_tile: bool = False):
        self.axes = {v: k for k, v in enumerate(variables)}
        self.extents = extents
        self.ndim = len(variables)
        self.guard: np.ndarray | None = None  # a statement's ``where``: only these points read their sources
        self.reads_tile = reads_tile  # the statement may read its sources outside their valid regions

    def arange(self, var: str) -> np.ndarray:
        shape = [1] * self.ndim
        shape[self.axes[var]] = self.extents[var]
        return np.arange(self.extents[var], dtype=np.int64).reshape(shape)

    def read_bytes(self, name: str, k, scope: Scope, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """``name.byte[k]``: bytes of a tile's storage, which only a statement's grid can read (``statements``)."""
        raise ExprError(f"{name}.byte[...] is read only in a statement's semantics", rule="exec.unsupported")

    def read_words(self, name: str, k, scope: Scope, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """``name.word[k]``: 64-bit words of a tile's storage, which only a statement's grid can read."""
        raise ExprError(f"{name}.word[...] is read only in a statement's semantics", rule="exec.unsupported")


def physical_shape(tile, view: str, array: np.ndarray) -> tuple[int, int]:
    if view == "bit":
        return tile.rows, tile.cols * array.dtype.itemsize * 8
    return tile.rows, tile.cols


def global_offsets(scope: Scope, desc: GlobalDesc, name: str, view: str, indices: list[np.ndarray],
                   buffer: np.ndarray, what: str) -> np.ndarray:
    """Buffer offsets of the view elements named by ``indices``: five strided indices ``g[i0, .., i4]``, a
    tile position ``g[r, c]`` placed by the layout's ``tile_map``, or ``g.flat[k]``.  An index outside the
    view or an offset outside the buffer is an error, never a wrap."""
    if view == "flat":
        flat = desc.offset + np.asarray(indices[0], dtype=np.int64)
        return _in_buffer(flat, name, buffer)
    if len(indices) == 2:
        indices = _tile_map(scope, desc, name, indices)
    dims, strides = desc.dims5, desc.strides5
    flat = np.full(np.shape(indices[0]), desc.offset, dtype=np.int64)
    for k, (idx, dim, stride) in enumerate(zip(indices, dims, strides, strict=True)):
        idx = np.asarray(idx, dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= dim):
            raise ExprError(f"semantics {what} {name} outside its view: dimension {k} index "
                            f"{int(idx.min() if idx.min() < 0 else idx.max())} not in [0, {dim})",
                            rule="exec.outside-view")
        flat = flat + idx * stride
    return _in_buffer(flat, name, buffer)


def _tile_map(scope: Scope, desc: GlobalDesc, name: str, indices: list[np.ndarray]) -> list[np.ndarray]:
    """The five view indices of tile positions (r, c) under the view's layout (isa ``tile_map``)."""
    layout = scope.isa.global_layouts[desc.layout]
    if not layout.tile_map:
        raise ExprError(f"{name}: global layout {desc.layout} has no tile placement in the ISA file",
                        rule="gm.layout-modelled")
    rows, cols = np.broadcast_arrays(*(np.asarray(i, dtype=np.int64) for i in indices))
    values = {"r": rows, "c": cols, **{f"d{k}": max(d, 1) for k, d in enumerate(desc.dims5)}}
    inner = Scope(scope.isa, values=values)
    return [np.broadcast_to(np.asarray(evaluate_over(e, Grid([], {}), inner, {}), dtype=np.int64), rows.shape)
            for e in layout.tile_map]


def evaluate_array(node: Node, scope: Scope):
    """``node`` evaluated element-wise over the arrays among ``scope.values`` (no tiles, no index grid)."""
    try:
        with np.errstate(all="ignore"):
            return evaluate_over(node, Grid([], {}), scope, {})
    except FAILURES as exc:
        raise ExprError(f"cannot evaluate {node!r}: {exc}", rule="exec.type") from None


def _in_buffer(flat: np.ndarray, name: str, buffer: np.ndarray) -> np.ndarray:
    if flat.size and (flat.min() < 0 or flat.max() >= buffer.shape[0]):
        bad = int(flat.max() if flat.max() >= buffer.shape[0] else flat.min())
        raise ExprError(f"{name}: element offset {bad} is outside its buffer of {buffer.shape[0]} elements",
                        rule="gm.out-of-bounds")
    return flat


def valid_shape(tile, view: str, array: np.ndarray) -> tuple[int, int]:
    rows, cols = tile.valid_shape
    if view == "bit":
        return rows, cols * array.dtype.itemsize * 8
    return rows, cols


def unpack_bits(array: np.ndarray) -> np.ndarray:
    """A tile's elements as bits, least significant first: shape (rows, cols * element bits)."""
    raw = np.ascontiguousarray(array).view(np.uint8).reshape(array.shape[0], -1)
    return np.unpackbits(raw, axis=1, bitorder="little")


def pack_bits(bits: np.ndarray, like: np.ndarray) -> np.ndarray:
    """The inverse of ``unpack_bits`` for an array shaped and typed like ``like``."""
    raw = np.packbits(bits.astype(np.uint8), axis=1, bitorder="little")
    return raw.view(like.dtype).reshape(like.shape)


def range_extent(bound: Node, scope: Scope, var: str) -> int:
    value = evaluate(bound, scope)
    if isinstance(value, np.integer | np.ndarray) and np.ndim(value) == 0 and np.asarray(value).dtype.kind in "iu":
        value = int(value)  # a bound computed from a scalar operand's value
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or value > MAX_GRID:
        raise ExprError(f"range of {var!r} must be an integer from 0 to {MAX_GRID}, got {value!r}",
                        rule="exec.range")
    return value


def evaluate_over(node: Node, grid: Grid, scope: Scope, data: Mapping[str, np.ndarray]):
    match node:
        case Num(value=v):
            return v
        case Name(id=name) if name in grid.axes:
            return grid.arange(name)
        case Name(id=name) if name in scope.type_vars:
            return numpy_dtype_of(scope.isa, scope.type_vars[name])  # a type variable names a NumPy dtype here
        case Name(id=name) if name in scope.isa.dtypes:
            return numpy_dtype_of(scope.isa, name)  # so does a dtype named outright (a fix-pipe's f32 stage)
        case Name() | Attr():
            return evaluate(node, scope)
        case Index(base=base, indices=indices, view=view):
            if base not in data:
                raise ExprError(f"{base!r} is not an operand tile", rule="exec.unknown-tile")
            desc = scope.tiles[base]
            if isinstance(desc, GlobalDesc):
                parts = np.broadcast_arrays(*(np.asarray(evaluate_over(i, grid, scope, data)) for i in indices))
                return data[base][global_offsets(scope, desc, base, view, list(parts), data[base], "read")]
            if view == "byte":
                return grid.read_bytes(base, evaluate_over(indices[0], grid, scope, data), scope, data)
            if view == "word":
                return grid.read_words(base, evaluate_over(indices[0], grid, scope, data), scope, data)
            rows, cols = (np.asarray(evaluate_over(i, grid, scope, data)) for i in indices)
            rows, cols = np.broadcast_arrays(rows, cols)
            source = unpack_bits(data[base]) if view == "bit" else data[base]
            if grid.guard is not None and rows.size:  # points the statement's filter drops are not read
                guard, rows, cols = _guarded(grid.guard, rows, cols)
                rows, cols = np.where(guard, rows, 0), np.where(guard, cols, 0)
                checked_rows, checked_cols = rows[guard], cols[guard]
            else:
                checked_rows, checked_cols = rows, cols
            if checked_rows.size:
                vr, vc = (physical_shape if grid.reads_tile else valid_shape)(scope.tiles[base], view, data[base])
                if (checked_rows.min() < 0 or checked_cols.min() < 0 or checked_rows.max() >= vr
                        or checked_cols.max() >= vc):
                    region = "tile" if grid.reads_tile else "valid region"
                    raise ExprError(
                        f"semantics read {base} outside its {region} {vr}x{vc}", rule="exec.read-outside-valid"
                    )
            return source[rows, cols]
        case Call(func=func) if func in FUNCTIONS and FUNCTIONS[func].type_level:
            return evaluate(node, scope)
        case Call(func=func, args=args):
            if func not in FUNCTIONS:
                raise ExprError(f"unknown element function {func!r}", rule="expr.unknown-function")
            tiles = FUNCTIONS[func].tile_args
            values = [_tile_arg(a, scope) if k in tiles else evaluate_over(a, grid, scope, data)
                      for k, a in enumerate(args)]
            return function_impl(func, scope.variants)(*values)
        case Reduce(func=func, var=var, body=body):
            if func not in REDUCTIONS:
                raise ExprError(f"unknown reduction {func!r}", rule="expr.unknown-function")
            values = np.asarray(evaluate_over(body, grid, scope, data))
            axis = grid.axes[var]
            shape = list(values.shape) + [1] * (grid.ndim - values.ndim)
            values = values.reshape(shape) if values.ndim < grid.ndim else values
            full = list(values.shape)
            full[axis] = grid.extents[var]
            values = np.broadcast_to(values, full)
            if full[axis] == 0:
                raise ExprError(f"{func} over an empty range of {var!r}", rule="exec.empty-reduction")
            return reduce_along(func, values, axis, scope.variants)
        case Unary(op="-", operand=o):
            return np.negative(evaluate_over(o, grid, scope, data))
        case Unary(op="not", operand=o):
            return np.logical_not(evaluate_over(o, grid, scope, data))
        case Binary(op=op, left=a, right=b):
            return _binary(op, evaluate_over(a, grid, scope, data), evaluate_over(b, grid, scope, data))
        case In(value=v, items=items):
            value = evaluate_over(v, grid, scope, data)
            result = np.zeros(np.shape(value), dtype=bool)
            for item in items:
                result = result | (value == evaluate_over(item, grid, scope, data))
            return result
    raise ExprError(f"cannot execute {node!r}", rule="exec.unsupported")


def _guarded(guard: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The guard and the indices broadcast to one shape (the guard may lack a reduction's axis)."""
    guard = guard.reshape(guard.shape + (1,) * (rows.ndim - guard.ndim)) if guard.ndim < rows.ndim else guard
    return np.broadcast_arrays(guard, rows, cols)


def _tile_arg(node: Node, scope: Scope):
    """A function argument naming a tile operand: its descriptor."""
    if not isinstance(node, Name) or node.id not in scope.tiles:
        raise ExprError(f"{node!r} must name a tile operand", rule="exec.type")
    return scope.tiles[node.id]


_NUMPY_BINARY = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "//": np.floor_divide,
    "**": np.power,
    "==": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "and": np.logical_and,
    "or": np.logical_or,
}


def _binary(op: str, a, b):
    if op == "/":
        return c_div(a, b)
    if op == "%":
        return c_mod(a, b)
    return _NUMPY_BINARY[op](a, b)


def element_mask(node: Node, values: np.ndarray, scope: Scope) -> np.ndarray:
    """Where ``node`` (an operand's value domain, over ``x``) holds for each of ``values`` (integers narrower
    than 64 bits are widened first, so that ``x + n <= m`` cannot wrap)."""
    if values.dtype.kind in "iu" and values.dtype.itemsize < 8:
        values = values.astype(np.int64)
    inner = Scope(scope.isa, scope.tiles, scope.type_vars, scope.profile_constants, {**scope.values, "x": values},
                  scope.attrs)
    try:
        with np.errstate(all="ignore"):
            mask = evaluate_over(node, Grid([], {}), inner, {})
        return np.broadcast_to(np.asarray(mask, dtype=bool), values.shape)
    except FAILURES as exc:
        raise ExprError(f"value domain cannot be evaluated: {exc}", rule="exec.type") from None


def element_values(node: Node, values: np.ndarray, scope: Scope) -> np.ndarray:
    """``node`` (an operand's ``encode``, over ``x``) for each of ``values``, as ``values``' dtype (the bits of
    an integer result kept, a float result converted)."""
    inner = Scope(scope.isa, scope.tiles, scope.type_vars, scope.profile_constants, {**scope.values, "x": values},
                  scope.attrs)
    try:
        with np.errstate(all="ignore"):
            result = np.asarray(evaluate_over(node, Grid([], {}), inner, {}))
    except FAILURES as exc:
        raise ExprError(f"encoding cannot be evaluated: {exc}", rule="exec.type") from None
    if result.dtype.kind in "iu" and values.dtype.kind in "iu":
        result = result.astype(np.dtype(f"u{result.dtype.itemsize}")).astype(np.dtype(f"u{values.dtype.itemsize}"))
    with np.errstate(over="ignore", invalid="ignore"):  # a float result rounds into the narrower type
        return np.broadcast_to(result.astype(values.dtype), values.shape).copy()
