"""Deterministic test inputs from a seed and a named value pattern.

Patterns: ``random`` (small values with repeats), ``edge`` (±0, ±inf, extreme finite values,
integer min/max; NaN only when the op's numerics say NaN propagates; half of the elements small
integers), ``special`` (every element a special value: those of ``edge`` plus subnormals, the
smallest normal, rounding ties such as ±0.5 and 2.5, half the largest value, integers next to a power
of two), ``ieee`` (mostly NaN, ±inf and ±0, NaN always: for profiles where the op's numerics define
them, ``numerics.exact_specials``) and ``ties`` (few distinct values, so reductions see many equal
candidates).  Input elements outside a tile's
valid region hold alternating extreme values ("poison") that change any result that reads them;
outputs start filled with a sentinel byte pattern that a correct backend leaves untouched outside
the destination's valid region.  A global operand is its whole buffer: the view's elements hold the
pattern, the rest of the buffer holds poison (inputs) or the sentinel (outputs).
"""

from __future__ import annotations

import functools
import math

import ml_dtypes
import numpy as np

from ..executor import derived_state, numpy_dtype, view_offsets
from ..expr.evaluate import Scope, evaluate
from ..expr.vectorize import element_mask, element_values
from ..model import Database, Mode, OpSpec
from ..tile import AttrDesc, GlobalDesc, ScalarDesc, TileDesc

SENTINEL_BYTE = 0xA5


@functools.lru_cache(maxsize=64)
def _limits(dt: np.dtype) -> tuple[int | float, int | float]:
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return int(info.min), int(info.max)
    info = ml_dtypes.finfo(dt)
    return float(info.min), float(info.max)


def _edge_values(dt: np.dtype, nan: bool) -> np.ndarray:
    lo, hi = _limits(dt)
    if dt.kind in "iu":
        vals = [lo, hi, 0, 1, lo + 1, hi - 1] + ([-1] if lo < 0 else [])
        return np.array(vals, dtype=dt)
    vals = [0.0, -0.0, np.inf, -np.inf, hi, lo, 1.0, -1.0, 0.5]
    if nan:
        vals.append(np.nan)
    return np.array(vals, dtype=np.float64).astype(dt)


def _special_values(dt: np.dtype, nan: bool) -> np.ndarray:
    if dt.kind in "iu":
        lo, hi = _limits(dt)
        half = 1 << (dt.itemsize * 8 - 2)
        vals = [lo, hi, lo + 1, hi - 1, 0, 1, 2, half, half - 1, hi // 2 + 1]
        vals += [-1, -2, -half, -half - 1] if lo < 0 else [half * 2, half * 2 - 1]
        return np.array([v for v in vals if lo <= v <= hi], dtype=dt)
    info = ml_dtypes.finfo(dt)
    tiny = float(info.tiny)
    sub = float(getattr(info, "smallest_subnormal", tiny))
    vals = [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, tiny, -tiny, sub, -sub, float(info.max) / 2, -float(info.max) / 2,
            1.0 + float(info.eps), -(1.0 + float(info.eps))]
    return np.concatenate([_edge_values(dt, nan), np.array(vals, dtype=np.float64).astype(dt)])


def _random(rng: np.random.Generator, dt: np.dtype, shape: tuple[int, int], pattern: str, nan: bool) -> np.ndarray:
    if pattern == "special":
        choices = _special_values(dt, nan)
        return choices[rng.integers(0, len(choices), size=shape)]
    if pattern in ("edge", "ieee"):
        choices = _edge_values(dt, nan or pattern == "ieee")
        if pattern == "ieee" and dt.kind not in "iu":
            choices = np.concatenate([choices, np.array([np.nan, 0.0, -0.0], dtype=np.float64).astype(dt)])
        mix = rng.integers(-8, 9, size=shape)
        picks = choices[rng.integers(0, len(choices), size=shape)]
        use_edge = rng.random(size=shape) < (0.8 if pattern == "ieee" else 0.5)
        return np.where(use_edge, picks, mix.astype(dt)).astype(dt)
    lo, hi = _limits(dt)
    span = 3 if pattern == "ties" else 100
    low = max(lo, -span)
    raw = rng.integers(int(low), int(min(hi, span)) + 1, size=shape, dtype=np.int64)
    if dt.kind == "f" or dt.kind == "V" or dt.kind not in "iu":
        scale = 1.0 if pattern == "ties" else 0.25
        return (raw.astype(np.float64) * scale).astype(dt)
    return raw.astype(dt)


def poison(dt: np.dtype, shape: tuple[int, int]) -> np.ndarray:
    return _poison(dt, tuple(shape)).copy()


@functools.lru_cache(maxsize=512)
def _poison(dt: np.dtype, shape: tuple[int, int]) -> np.ndarray:
    lo, hi = _limits(dt)
    grid = (np.arange(shape[0])[:, None] + np.arange(shape[1])[None, :]) % 2 == 0
    if dt.kind in "iu":
        out = np.where(grid, np.array(hi, dtype=dt), np.array(lo, dtype=dt)).astype(dt)
    else:
        out = np.where(grid, np.float64(hi), np.float64(lo)).astype(dt)
    out.flags.writeable = False  # cached: callers get copies
    return out


def sentinel(dt: np.dtype, shape: tuple[int, int]) -> np.ndarray:
    return _sentinel(dt, tuple(shape)).copy()


@functools.lru_cache(maxsize=512)
def _sentinel(dt: np.dtype, shape: tuple[int, int]) -> np.ndarray:
    out = np.full(shape[0] * shape[1] * dt.itemsize, SENTINEL_BYTE, dtype=np.uint8).view(dt).reshape(shape)
    out.flags.writeable = False  # cached: callers get copies
    return out


def make_inputs(db: Database, op: OpSpec, mode: Mode, tiles: dict, seed: int, pattern: str) -> dict[str, object]:
    """Arrays for every input (poison outside the valid region), sentinel-filled outputs, scalar values."""
    nan = op.numerics.nan == "propagate"
    data: dict[str, object] = {}
    # scalars first (each operand has its own generator), so that a tile's precondition may read them
    order = sorted(range(len(mode.operands)), key=lambda k: not isinstance(tiles[mode.operands[k].name], ScalarDesc))
    for index in order:
        o = mode.operands[index]
        desc = tiles[o.name]
        if o.is_attr:
            continue
        rng = np.random.default_rng([seed, index])
        dt = numpy_dtype(db, desc.dtype)
        if isinstance(desc, ScalarDesc):
            value = _encoded(db, mode, o, tiles, _random(rng, dt, (1, 1), pattern, nan))
            data[o.name] = _in_domain(db, mode, o, tiles, value, rng)[0, 0]
            continue
        if isinstance(desc, GlobalDesc):  # the whole buffer: poison (inputs) or sentinel (outputs) around the view
            if o.role == "out":
                data[o.name] = sentinel(dt, (1, desc.size)).reshape(desc.size)
            else:
                buffer = poison(dt, (1, desc.size)).reshape(desc.size)
                values = _in_domain(db, mode, o, tiles, _random(rng, dt, (1, math.prod(desc.shape)), pattern, nan))
                where = view_offsets(desc).reshape(-1)
                fits = (where >= 0) & (where < desc.size)  # a must-reject view may reach past its buffer
                buffer[where[fits]] = values.reshape(-1)[fits]
                data[o.name] = buffer
            continue
        assert isinstance(desc, TileDesc)
        if o.role == "out":
            data[o.name] = _packable(db, desc.dtype, sentinel(dt, desc.shape))
        elif o.role == "in" and o.stores:
            data[o.name] = _stored(db, mode, o, tiles, desc, rng, pattern)
        elif o.role == "in":
            arr = poison(dt, desc.shape)
            vr, vc = min(desc.valid_row or 0, desc.rows), min(desc.valid_col or 0, desc.cols)
            values = _encoded(db, mode, o, tiles, _random(rng, dt, (vr, vc), pattern, nan))
            arr[:vr, :vc] = _in_order(db, mode, o, tiles, data, _in_domain(db, mode, o, tiles, values))
            data[o.name] = _packable(db, desc.dtype, arr)
    if mode.reads_state:  # the configuration registers, as the instructions setting them leave them
        data.update(derived_state(db, mode, tiles, data))
    return data


def _stored(db: Database, mode: Mode, operand, tiles: dict, desc: TileDesc, rng: np.random.Generator,
            pattern: str) -> np.ndarray:
    """An input tile whose bytes hold values of ``operand.stores`` whatever its element type: each valid row's
    bytes are generated values of that type through ``encode`` (the last one cut where the row ends)."""
    dt = numpy_dtype(db, desc.dtype)
    stored = numpy_dtype(db, operand.stores)
    arr = poison(dt, desc.shape)
    vr, vc = min(desc.valid_row or 0, desc.rows), min(desc.valid_col or 0, desc.cols)
    row_bytes = vc * dt.itemsize
    count = -(-row_bytes // stored.itemsize)
    if vr and count:
        values = _encoded(db, mode, operand, tiles, _random(rng, stored, (vr, count), pattern, False))
        raw = np.ascontiguousarray(np.asarray(values).astype(stored)).view(np.uint8).reshape(vr, -1)
        arr[:vr, :vc] = np.ascontiguousarray(raw[:, :row_bytes]).view(dt).reshape(vr, vc)
    return arr


def _packable(db: Database, dtype: str, arr: np.ndarray) -> np.ndarray:
    """``arr`` with only the bits a packed type's storage keeps (4 of each byte of a two-per-byte type), so
    that its values survive a trip through the packed storage."""
    per_byte = db.isa.dtypes[dtype].per_byte if dtype in db.isa.dtypes else 1
    if per_byte == 1:
        return arr
    mask = np.uint8((1 << (8 // per_byte)) - 1)
    return (arr.view(np.uint8) & mask).view(arr.dtype)


def _in_order(db: Database, mode: Mode, operand, tiles: dict, scalars: dict, values: np.ndarray) -> np.ndarray:
    """``values`` with the sort keys of each row (every ``sorted.stride``-th element) put in descending order,
    within each run of ``sorted.block`` elements when the operand gives one (scalar values from ``scalars``)."""
    if operand.sorted_stride is None or values.size == 0:
        return values
    type_vars = {o.dtype: tiles[o.name].dtype for o in mode.operands if not o.is_attr}
    scope = Scope(db.isa, tiles={n: t for n, t in tiles.items() if isinstance(t, TileDesc | GlobalDesc)},
                  type_vars=type_vars,
                  values={n: v for n, v in scalars.items() if isinstance(tiles.get(n), ScalarDesc)})
    stride = int(evaluate(operand.sorted_stride, scope))
    block = values.shape[1] if operand.sorted_block is None else int(evaluate(operand.sorted_block, scope))
    out = values.copy()
    for start in range(0, values.shape[1], max(block, 1)):
        run = values[:, start:start + block]
        out[:, start:start + block][:, ::stride] = np.sort(run[:, ::stride], axis=1)[:, ::-1]
    return out


def _scope(db: Database, mode: Mode, tiles: dict) -> Scope:
    type_vars = {o.dtype: tiles[o.name].dtype for o in mode.operands if not o.is_attr}
    return Scope(db.isa, tiles={n: t for n, t in tiles.items() if isinstance(t, TileDesc | GlobalDesc)},
                 type_vars=type_vars, attrs={n: t.value for n, t in tiles.items() if isinstance(t, AttrDesc)})


def _encoded(db: Database, mode: Mode, operand, tiles: dict, values: np.ndarray) -> np.ndarray:
    """``values`` through the operand's ``encode`` (the stored words built from the generated numbers)."""
    if operand.encode is None or values.size == 0:
        return values
    return element_values(operand.encode, values, _scope(db, mode, tiles))


def _in_domain(db: Database, mode: Mode, operand, tiles: dict, values: np.ndarray,
               rng: np.random.Generator | None = None) -> np.ndarray:
    """``values`` with every element outside the operand's value domain replaced by 1 (or 0 where 1 is outside).
    An integer scalar (``rng`` given) outside its domain is replaced by a random value of the domain from 0 to 100
    instead, so that a run-time offset covers its whole range."""
    if operand.domain is None or values.size == 0:
        return values
    type_vars = {o.dtype: tiles[o.name].dtype for o in mode.operands if not o.is_attr}
    scope = Scope(db.isa, tiles={n: t for n, t in tiles.items() if isinstance(t, TileDesc | GlobalDesc)},
                  type_vars=type_vars, attrs={n: t.value for n, t in tiles.items() if isinstance(t, AttrDesc)})
    with np.errstate(all="ignore"):
        ok = element_mask(operand.domain, values, scope)
        if rng is not None and values.size == 1 and values.dtype.kind in "iu" and not ok.all():
            candidates = np.arange(0, 101).astype(values.dtype).reshape(1, -1)
            inside = candidates[element_mask(operand.domain, candidates, scope)]
            if inside.size:
                return np.full_like(values, inside[rng.integers(0, inside.size)])
        # the stand-in: 1 where the domain has it (a divisor), else 0 (an index into a one-row table)
        one = np.ones_like(values)
        stand_in = one if element_mask(operand.domain, one[:1], scope).all() else np.zeros_like(values)
    return np.where(ok, values, stand_in).astype(values.dtype)
