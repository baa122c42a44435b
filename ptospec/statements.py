"""Execute semantics statements as vectorised NumPy (no Python loop per element).

Every index variable of a statement (the target's free variables, ``for``
variables and reduction variables) gets one axis of a common grid (``expr.vectorize``).
Each sub-expression evaluates to an array broadcastable to that grid; a reduction
collapses its variable's axis to size 1.  Reads outside a source's valid region
and writes outside the target's valid region are reported as errors: the ISA
says they never happen, so a statement that does it is a spec bug.  Byte views
(``t.byte[k]``) read and write a tile's storage through ``storage``; word views (``t.word[k]``) read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import numpy as np

from . import storage
from .errors import ExprError
from .expr.ast import Name, Reduce, Statement, walk
from .expr.evaluate import Scope
from .expr.functions import function_impl
from .expr.vectorize import (
    FAILURES,
    MAX_GRID,
    Grid,
    evaluate_over,
    global_offsets,
    pack_bits,
    physical_shape,
    range_extent,
    statement_vars,
    unpack_bits,
    valid_shape,
)
from .tile import GlobalDesc


class StatementGrid(Grid):
    """A statement's grid: it may also read its tiles' storage bytes (``t.byte[k]``)."""

    def __init__(self, variables: list[str], extents: dict[str, int], reads_tile: bool = False):
        super().__init__(variables, extents, reads_tile)
        self.bytes: dict[str, np.ndarray] = {}  # tile -> its storage bytes, once read through .byte

    def read_bytes(self, name: str, k, scope: Scope, data: Mapping[str, np.ndarray]) -> np.ndarray:
        k = _byte_positions(scope, name, k, self.reads_tile, "read")
        if name not in self.bytes:
            self.bytes[name] = storage.to_bytes(scope.isa, scope.tiles[name], data[name])
        return self.bytes[name][k]

    def read_words(self, name: str, k, scope: Scope, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """``name.word[k]``: bytes 8k..8k+7 of the storage as a little-endian u64, whatever the valid region
        (the fix-pipe reads its quantisation words from the buffer by address); outside the storage is an
        error."""
        k = np.asarray(k, dtype=np.int64)
        first = _byte_positions(scope, name, 8 * k, True, "read")
        _byte_positions(scope, name, 8 * k + 7, True, "read")
        if name not in self.bytes:
            self.bytes[name] = storage.to_bytes(scope.isa, scope.tiles[name], data[name])
        raw = self.bytes[name]
        words = np.zeros(first.shape, dtype=np.uint64)
        for b in range(8):
            words |= raw[first + b].astype(np.uint64) << np.uint64(8 * b)
        return words


_COMBINE = {"add": np.add, "max": np.maximum, "min": np.minimum}


@cache
def _expanded(stmt: Statement) -> Statement:
    return stmt.expanded()


@cache
def _layout(stmt: Statement) -> tuple[tuple[str, ...], tuple[Reduce, ...]]:
    """An expanded statement's index variables (``statement_vars``) and its reductions, in walk order (a
    statement runs thousands of times: its trees are walked once)."""
    parts = (stmt.value, *stmt.target.indices, *([stmt.where] if stmt.where is not None else []))
    return tuple(statement_vars(stmt)), tuple(n for part in parts for n in walk(part) if isinstance(n, Reduce))


def _injective(stmt: Statement, grid: StatementGrid) -> bool:
    """Whether the target's indices are distinct grid variables covering every non-reduction axis (then no
    two points of the grid write the same element)."""
    names = [i.id for i in stmt.target.indices if isinstance(i, Name)]
    if len(names) != len(stmt.target.indices) or len(set(names)) != len(names):
        return False
    reduced = {n.var for n in _layout(stmt)[1]}
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
    names, reductions = _layout(stmt)
    variables = list(names)
    target = stmt.target
    if target.base not in out:
        raise ExprError(f"statement writes {target.base!r}, which is not an output", rule="exec.target")
    target_desc = scope.tiles[target.base]
    dest = out[target.base]
    is_global = isinstance(target_desc, GlobalDesc)
    if is_global or target.view == "byte":
        bounds = ()
    elif stmt.writes == "tile":
        bounds = physical_shape(target_desc, target.view, dest)
    else:
        bounds = valid_shape(target_desc, target.view, dest)
    extents: dict[str, int] = {}
    domain = dict(stmt.domain)
    for pos, idx in enumerate(target.indices):
        if isinstance(idx, Name) and idx.id not in domain and not is_global:
            extents[idx.id] = bounds[pos]
    for var, bound in stmt.domain:
        extents[var] = range_extent(bound, scope, var)
    for node in reductions:
        extent = range_extent(node.bound, scope, node.var)
        if extents.setdefault(node.var, extent) != extent:
            raise ExprError(f"{stmt.text!r}: reductions over {node.var!r} have different ranges "
                            f"({extents[node.var]} and {extent})", rule="exec.range")
    grid = StatementGrid(variables, extents, stmt.reads == "tile")
    cells = 1
    for var in variables:
        cells *= extents.get(var, 1)
    if cells > MAX_GRID:
        raise ExprError(f"{stmt.text!r} would visit {cells} index combinations (limit {MAX_GRID})",
                        rule="exec.too-large")
    try:
        _run(stmt, grid, scope, data, dest, bounds, written)
    except FAILURES as exc:
        raise ExprError(f"{stmt.text!r} cannot be executed on these operands: {exc}", rule="exec.type") from None


def _run(stmt: Statement, grid: StatementGrid, scope: Scope, data, dest: np.ndarray, bounds: tuple[int, ...],
         written: dict[str, np.ndarray] | None) -> None:
    target = stmt.target
    target_desc = scope.tiles[target.base]
    is_global = isinstance(target_desc, GlobalDesc)
    with np.errstate(all="ignore"):
        keep = np.asarray(evaluate_over(stmt.where, grid, scope, data), dtype=bool) if stmt.where is not None else None
        grid.guard = keep  # the value is read only where the filter holds
        value = np.asarray(evaluate_over(stmt.value, grid, scope, data))
        grid.guard = None
        index_arrays = [np.asarray(evaluate_over(i, grid, scope, data)) for i in target.indices]
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
