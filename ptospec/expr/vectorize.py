"""Execute semantics statements as vectorised NumPy (no Python loop per element).

Every index variable of a statement (the target's free variables, ``for``
variables and reduction variables) gets one axis of a common grid.  Each
sub-expression evaluates to an array broadcastable to that grid; a reduction
collapses its variable's axis to size 1.  Reads outside a source's valid region
and writes outside the target's valid region are reported as errors: the ISA
says they never happen, so a statement that does it is a spec bug.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import ml_dtypes
import numpy as np

from .. import storage
from ..errors import ExprError
from ..tile import GlobalDesc
from .ast import Attr, Binary, Call, In, Index, Name, Node, Num, Reduce, Statement, Unary, walk
from .evaluate import Scope, evaluate
from .functions import FUNCTIONS, REDUCTIONS, c_div, c_mod, function_impl, reduce_along

MAX_GRID = 1 << 22  # index combinations one statement may visit (the largest tile holds 256 Ki elements)
_FAILURES = (ArithmeticError, TypeError, ValueError, IndexError, KeyError)


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


class _Grid:
    def __init__(self, variables: list[str], extents: dict[str, int], reads_tile: bool = False):
        self.axes = {v: k for k, v in enumerate(variables)}
        self.extents = extents
        self.ndim = len(variables)
        self.guard: np.ndarray | None = None  # a statement's ``where``: only these points read their sources
        self.reads_tile = reads_tile  # the statement may read its sources outside their valid regions
        self.bytes: dict[str, np.ndarray] = {}  # tile -> its storage bytes, once read through .byte

    def arange(self, var: str) -> np.ndarray:
        shape = [1] * self.ndim
        shape[self.axes[var]] = self.extents[var]
        return np.arange(self.extents[var], dtype=np.int64).reshape(shape)


_COMBINE = {"add": np.add, "max": np.maximum, "min": np.minimum}


@cache
def _expanded(stmt: Statement) -> Statement:
    return stmt.expanded()


def _injective(stmt: Statement, grid: _Grid) -> bool:
    """Whether the target's indices are distinct grid variables covering every non-reduction axis (then no
    two points of the grid write the same element)."""
    names = [i.id for i in stmt.target.indices if isinstance(i, Name)]
    if len(names) != len(stmt.target.indices) or len(set(names)) != len(names):
        return False
    parts = (stmt.value, *stmt.target.indices, *([stmt.where] if stmt.where is not None else []))
    reduced = {n.var for part in parts for n in walk(part) if isinstance(n, Reduce)}
    return set(grid.axes) - reduced <= set(names)


def _survivors(flat: np.ndarray, combine: str) -> np.ndarray:
    """Positions (in index order) of the writes that survive: all of them when no two share a target, else
    the first or the last write of each target (``combine: first|last``); a plain statement whose writes
    collide is a spec error (the order would be NumPy's, not the spec's)."""
    if combine not in ("first", "last"):
        return np.arange(flat.size)
    order = flat[::-1] if combine == "last" else flat
    _, first = np.unique(order, return_index=True)
    return np.sort(flat.size - 1 - first if combine == "last" else first)


def execute_statement(
    stmt: Statement,
    scope: Scope,
    data: Mapping[str, np.ndarray],
    out: Mapping[str, np.ndarray],
    written: dict[str, np.ndarray] | None = None,
) -> None:
    """Run ``stmt`` reading ``data`` (all operand arrays) and writing into ``out``; ``written`` (optional)
    collects, per output, a mask of the elements the statement wrote."""
    stmt = _expanded(stmt)
    variables = statement_vars(stmt)
    target = stmt.target
    if target.base not in out:
        raise ExprError(f"statement writes {target.base!r}, which is not an output", rule="exec.target")
    target_desc = scope.tiles[target.base]
    dest = out[target.base]
    is_global = isinstance(target_desc, GlobalDesc)
    if is_global or target.view == "byte":
        bounds = ()
    elif stmt.writes == "tile":
        bounds = _physical_shape(target_desc, target.view, dest)
    else:
        bounds = _valid_shape(target_desc, target.view, dest)
    extents: dict[str, int] = {}
    domain = dict(stmt.domain)
    for pos, idx in enumerate(target.indices):
        if isinstance(idx, Name) and idx.id not in domain and not is_global:
            extents[idx.id] = bounds[pos]
    for var, bound in stmt.domain:
        extents[var] = _extent(bound, scope, var)
    for part in (stmt.value, *target.indices, *([stmt.where] if stmt.where is not None else [])):
        for node in walk(part):
            if isinstance(node, Reduce):
                extent = _extent(node.bound, scope, node.var)
                if extents.setdefault(node.var, extent) != extent:
                    raise ExprError(f"{stmt.text!r}: reductions over {node.var!r} have different ranges "
                                    f"({extents[node.var]} and {extent})", rule="exec.range")
    grid = _Grid(variables, extents, stmt.reads == "tile")
    cells = 1
    for var in variables:
        cells *= extents.get(var, 1)
    if cells > MAX_GRID:
        raise ExprError(f"{stmt.text!r} would visit {cells} index combinations (limit {MAX_GRID})",
                        rule="exec.too-large")
    try:
        _run(stmt, grid, scope, data, dest, bounds, written)
    except _FAILURES as exc:
        raise ExprError(f"{stmt.text!r} cannot be executed on these operands: {exc}", rule="exec.type") from None


def _run(stmt: Statement, grid: _Grid, scope: Scope, data, dest: np.ndarray, bounds: tuple[int, ...],
         written: dict[str, np.ndarray] | None) -> None:
    target = stmt.target
    target_desc = scope.tiles[target.base]
    is_global = isinstance(target_desc, GlobalDesc)
    with np.errstate(all="ignore"):
        keep = np.asarray(_eval(stmt.where, grid, scope, data), dtype=bool) if stmt.where is not None else None
        grid.guard = keep  # the value is read only where the filter holds
        value = np.asarray(_eval(stmt.value, grid, scope, data))
        grid.guard = None
        index_arrays = [np.asarray(_eval(i, grid, scope, data)) for i in target.indices]
    if value.dtype.kind not in "biufV" or any(a.dtype.kind not in "biu" for a in index_arrays):
        raise ExprError(f"{stmt.text!r} computes a {value.dtype} value or a non-integer index", rule="exec.type")
    if keep is not None:  # only the points where the filter holds are written
        *index_arrays, value, keep = np.broadcast_arrays(*index_arrays, value, keep)
        index_arrays, value = [a[keep] for a in index_arrays], value[keep]
    *index_arrays, value = np.broadcast_arrays(*index_arrays, value)
    if index_arrays[0].size == 0:
        return
    if target.view == "byte":
        _write_bytes(stmt, scope, dest, index_arrays[0], value, written)
        return
    if is_global:
        where: tuple[np.ndarray, ...] = (
            global_offsets(scope, target_desc, target.base, target.view, index_arrays, dest, "write"),)
    else:
        rows, cols = index_arrays
        if rows.min() < 0 or cols.min() < 0 or rows.max() >= bounds[0] or cols.max() >= bounds[1]:
            region = "tile" if stmt.writes == "tile" else "valid region"
            raise ExprError(f"{stmt.text!r} writes outside the {region} of {target.base}",
                            rule="exec.write-outside-valid")
        where = (rows, cols)
    if stmt.combine in ("first", "last") or (not stmt.combine and not _injective(stmt, grid)):
        shape = (dest.shape[0], dest.shape[1] * dest.dtype.itemsize * 8) if target.view == "bit" else dest.shape
        flat = where[0].ravel() if is_global else np.ravel_multi_index(tuple(w.ravel() for w in where), shape)
        if not stmt.combine and np.unique(flat).size != flat.size:
            raise ExprError(f"{stmt.text!r} writes some element of {target.base} twice; say which write "
                            "survives (combine: first or last)", rule="exec.duplicate-target")
        keep_at = _survivors(flat, stmt.combine)
        where = tuple(w.ravel()[keep_at] for w in where)
        value = value.ravel()[keep_at]
    if written is not None and target.view != "bit":
        mask = written.setdefault(target.base, np.zeros(dest.shape, dtype=bool))
        mask[where] = True
    if target.view == "bit":
        bits = unpack_bits(dest)
        bits[where] = value.astype(bool)
        dest[...] = pack_bits(bits, dest)
        if written is not None:
            mask = written.setdefault(target.base, np.zeros(dest.shape, dtype=bool))
            mask[where[0], where[1] // (dest.dtype.itemsize * 8)] = True
        return
    with np.errstate(all="ignore"):
        values = value.astype(dest.dtype)
        if stmt.combine in _COMBINE:
            # in index order, so that repeated targets accumulate as the hardware's sequence of writes does
            variant = scope.variants.get(stmt.combine, "ieee")
            if stmt.combine in ("max", "min") and variant != "ieee":  # the profile's max/min (e.g. std::max)
                pick = function_impl(stmt.combine, scope.variants)
                flat_where = tuple(w.ravel() for w in where)
                for k, value in enumerate(values.ravel()):
                    at = tuple(w[k] for w in flat_where)
                    dest[at] = pick(dest[at], value)  # (current, new): the implementations' argument order
            else:
                _COMBINE[stmt.combine].at(dest, tuple(w.ravel() for w in where), values.ravel())
        else:
            dest[where] = values


def _byte_positions(scope: Scope, name: str, k: np.ndarray, whole: bool, what: str) -> np.ndarray:
    """Byte indices ``k`` of tile ``name``'s storage, checked: inside the storage, and inside the bytes of its
    valid elements unless ``whole``."""
    desc = scope.tiles[name]
    k = np.asarray(k, dtype=np.int64)
    size = storage.storage_bytes(scope.isa, desc)
    if k.size and (k.min() < 0 or k.max() >= size):
        bad = int(k.min() if k.min() < 0 else k.max())
        raise ExprError(f"semantics {what} byte {bad} of {name}, outside its {size} bytes of storage",
                        rule="exec.outside-storage")
    if not whole and k.size and not storage.valid_bytes(scope.isa, desc)[k].all():
        rule = "exec.write-outside-valid" if what == "write" else "exec.read-outside-valid"
        raise ExprError(f"semantics {what} bytes of {name} outside its valid region", rule=rule)
    return k


def _write_bytes(stmt: Statement, scope: Scope, dest: np.ndarray, k: np.ndarray, value: np.ndarray,
                 written: dict[str, np.ndarray] | None) -> None:
    """``t.byte[k] = value``: bytes of the target's storage, then its elements read back through the layout."""
    name = stmt.target.base
    desc = scope.tiles[name]
    k = _byte_positions(scope, name, k, stmt.writes == "tile", "write")
    raw = storage.to_bytes(scope.isa, desc, dest)
    raw[k] = np.asarray(value).astype(np.uint8)  # the values are bytes (a byte read, or a number below 256)
    dest[...] = storage.from_bytes(scope.isa, desc, raw, dest.dtype)
    if written is not None:
        touched = np.zeros(raw.size, dtype=bool)
        touched[k] = True
        per_element = touched.reshape(-1, dest.dtype.itemsize).any(axis=1)
        mask = written.setdefault(name, np.zeros(dest.shape, dtype=bool))
        mask |= per_element[storage.element_offsets(scope.isa, desc)]


def _physical_shape(tile, view: str, array: np.ndarray) -> tuple[int, int]:
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
    return [np.broadcast_to(np.asarray(_eval(e, _Grid([], {}), inner, {}), dtype=np.int64), rows.shape)
            for e in layout.tile_map]


def evaluate_array(node: Node, scope: Scope):
    """``node`` evaluated element-wise over the arrays among ``scope.values`` (no tiles, no index grid)."""
    try:
        with np.errstate(all="ignore"):
            return _eval(node, _Grid([], {}), scope, {})
    except _FAILURES as exc:
        raise ExprError(f"cannot evaluate {node!r}: {exc}", rule="exec.type") from None


def _in_buffer(flat: np.ndarray, name: str, buffer: np.ndarray) -> np.ndarray:
    if flat.size and (flat.min() < 0 or flat.max() >= buffer.shape[0]):
        bad = int(flat.max() if flat.max() >= buffer.shape[0] else flat.min())
        raise ExprError(f"{name}: element offset {bad} is outside its buffer of {buffer.shape[0]} elements",
                        rule="gm.out-of-bounds")
    return flat


def _valid_shape(tile, view: str, array: np.ndarray) -> tuple[int, int]:
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


def _extent(bound: Node, scope: Scope, var: str) -> int:
    value = evaluate(bound, scope)
    if isinstance(value, np.integer | np.ndarray) and np.ndim(value) == 0 and np.asarray(value).dtype.kind in "iu":
        value = int(value)  # a bound computed from a scalar operand's value
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or value > MAX_GRID:
        raise ExprError(f"range of {var!r} must be an integer from 0 to {MAX_GRID}, got {value!r}",
                        rule="exec.range")
    return value


def _eval(node: Node, grid: _Grid, scope: Scope, data: Mapping[str, np.ndarray]):
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
                parts = np.broadcast_arrays(*(np.asarray(_eval(i, grid, scope, data)) for i in indices))
                return data[base][global_offsets(scope, desc, base, view, list(parts), data[base], "read")]
            if view == "byte":
                k = _byte_positions(scope, base, _eval(indices[0], grid, scope, data), grid.reads_tile, "read")
                if base not in grid.bytes:
                    grid.bytes[base] = storage.to_bytes(scope.isa, desc, data[base])
                return grid.bytes[base][k]
            rows, cols = (np.asarray(_eval(i, grid, scope, data)) for i in indices)
            rows, cols = np.broadcast_arrays(rows, cols)
            source = unpack_bits(data[base]) if view == "bit" else data[base]
            if grid.guard is not None and rows.size:  # points the statement's filter drops are not read
                guard, rows, cols = _guarded(grid.guard, rows, cols)
                rows, cols = np.where(guard, rows, 0), np.where(guard, cols, 0)
                checked_rows, checked_cols = rows[guard], cols[guard]
            else:
                checked_rows, checked_cols = rows, cols
            if checked_rows.size:
                vr, vc = (_physical_shape if grid.reads_tile else _valid_shape)(scope.tiles[base], view, data[base])
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
            values = [_tile_arg(a, scope) if k in tiles else _eval(a, grid, scope, data) for k, a in enumerate(args)]
            return function_impl(func, scope.variants)(*values)
        case Reduce(func=func, var=var, body=body):
            if func not in REDUCTIONS:
                raise ExprError(f"unknown reduction {func!r}", rule="expr.unknown-function")
            values = np.asarray(_eval(body, grid, scope, data))
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
            return np.negative(_eval(o, grid, scope, data))
        case Unary(op="not", operand=o):
            return np.logical_not(_eval(o, grid, scope, data))
        case Binary(op=op, left=a, right=b):
            return _binary(op, _eval(a, grid, scope, data), _eval(b, grid, scope, data))
        case In(value=v, items=items):
            value = _eval(v, grid, scope, data)
            result = np.zeros(np.shape(value), dtype=bool)
            for item in items:
                result = result | (value == _eval(item, grid, scope, data))
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
            mask = _eval(node, _Grid([], {}), inner, {})
        return np.broadcast_to(np.asarray(mask, dtype=bool), values.shape)
    except _FAILURES as exc:
        raise ExprError(f"value domain cannot be evaluated: {exc}", rule="exec.type") from None


def element_values(node: Node, values: np.ndarray, scope: Scope) -> np.ndarray:
    """``node`` (an operand's ``encode``, over ``x``) for each of ``values``, as ``values``' dtype (the bits of
    an integer result kept, a float result converted)."""
    inner = Scope(scope.isa, scope.tiles, scope.type_vars, scope.profile_constants, {**scope.values, "x": values},
                  scope.attrs)
    try:
        with np.errstate(all="ignore"):
            result = np.asarray(_eval(node, _Grid([], {}), inner, {}))
    except _FAILURES as exc:
        raise ExprError(f"encoding cannot be evaluated: {exc}", rule="exec.type") from None
    if result.dtype.kind in "iu" and values.dtype.kind in "iu":
        result = result.astype(np.dtype(f"u{result.dtype.itemsize}")).astype(np.dtype(f"u{values.dtype.itemsize}"))
    return np.broadcast_to(result.astype(values.dtype), values.shape).copy()


def numpy_dtype_of(isa, dtype: str) -> np.dtype:
    """The NumPy dtype of an ISA dtype name (ml_dtypes for bfloat16 and the fp8 types)."""
    return numpy_dtype_named(isa.dtypes[dtype].numpy)


@cache
def numpy_dtype_named(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)
