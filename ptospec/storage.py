"""Tile storage: where each element of a tile lives, and a tile's bytes.

The placement is data (``tile_storage`` in specs/isa.yaml, the simulator's ``GetTileElementOffset``); this
module evaluates it for concrete descriptors and converts between a tile's logical ``rows x cols`` array
and its storage bytes.  Byte-level views of semantics (``t.byte[k]``), reinterpreting instructions
(TRESHAPE) and operands that alias another operand's storage (TSUBVIEW) all go through here.
"""

from __future__ import annotations

import numpy as np

from .errors import ExprError
from .expr.evaluate import Scope, evaluate
from .expr.vectorize import evaluate_array
from .model import Isa
from .tile import TileDesc


def box_shape(isa: Isa, desc: TileDesc) -> tuple[int, int]:
    """Rows and columns of the inner box of a boxed tile ((1, 1) for a tile without boxes)."""
    if desc.slayout == "NoneBox":
        return 1, 1
    w = isa.dtypes[desc.dtype].bytes
    key = (id(isa), "box", desc.fractal, desc.slayout, w)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is isa:
        return hit[1]
    ts = _storage(isa)
    scope = Scope(isa, values={"f": desc.fractal, "s": desc.slayout, "w": w})
    shape = int(evaluate(ts.box_rows, scope)), int(evaluate(ts.box_cols, scope))
    _remember(key, isa, shape)
    return shape


def element_offsets(isa: Isa, desc: TileDesc) -> np.ndarray:
    """Storage offset (in elements) of every element of the tile, shaped ``rows x cols`` (read-only)."""
    br, bc = box_shape(isa, desc)
    return _offsets(isa, desc.blayout, desc.slayout, desc.rows, desc.cols, br, bc,
                    isa.dtypes[desc.dtype].bytes)


def storage_order_name(isa: Isa, desc: TileDesc) -> str:
    """Upstream name of the tile's element order (ND, DN, Nz, Zn, Zz, Nn)."""
    return _storage(isa).names[(desc.blayout, desc.slayout)]


def storage_elements(isa: Isa, desc: TileDesc) -> int:
    """Elements of storage the tile spans: rows x cols, or more where a partial box leaves gaps."""
    offsets = element_offsets(isa, desc)
    return max(desc.rows * desc.cols, int(offsets.max()) + 1 if offsets.size else 0)


def storage_bytes(isa: Isa, desc: TileDesc) -> int:
    return storage_elements(isa, desc) * isa.dtypes[desc.dtype].bytes


def to_bytes(isa: Isa, desc: TileDesc, array: np.ndarray) -> np.ndarray:
    """The tile's storage as bytes (uint8), its elements placed by the layout; gaps are zero."""
    flat = np.zeros(storage_elements(isa, desc), dtype=array.dtype)
    flat[element_offsets(isa, desc)] = array
    return flat.view(np.uint8)


def from_bytes(isa: Isa, desc: TileDesc, raw: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The logical ``rows x cols`` array of a tile whose storage bytes are ``raw`` (uint8, long enough)."""
    flat = np.ascontiguousarray(raw[: storage_bytes(isa, desc)]).view(dtype)
    return flat[element_offsets(isa, desc)]


def valid_bytes(isa: Isa, desc: TileDesc) -> np.ndarray:
    """A mask over the tile's storage bytes: True for the bytes of elements inside the valid region."""
    w = isa.dtypes[desc.dtype].bytes
    mask = np.zeros(storage_elements(isa, desc), dtype=bool)
    vr, vc = desc.valid_shape
    mask[element_offsets(isa, desc)[:vr, :vc]] = True
    return np.repeat(mask, w)


def _storage(isa: Isa):
    if isa.tile_storage is None:
        raise ExprError("specs/isa.yaml has no tile_storage", rule="isa.tile-storage")
    return isa.tile_storage


_CACHE: dict[tuple, tuple[Isa, object]] = {}  # offsets and box shapes, per ISA
_CACHE_LIMIT = 512


def _offsets(isa: Isa, blayout: str, slayout: str, rows: int, cols: int, br: int, bc: int, w: int) -> np.ndarray:
    key = (id(isa), blayout, slayout, rows, cols, br, bc, w)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is isa:
        return hit[1]
    out = _compute(isa, blayout, slayout, rows, cols, br, bc, w)
    _remember(key, isa, out)
    return out


def _remember(key: tuple, isa: Isa, value) -> None:
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[key] = (isa, value)


def _compute(isa: Isa, blayout: str, slayout: str, rows: int, cols: int, br: int, bc: int, w: int) -> np.ndarray:
    node = _storage(isa).offsets[(blayout, slayout)]
    r = np.arange(rows, dtype=np.int64).reshape(rows, 1)
    c = np.arange(cols, dtype=np.int64).reshape(1, cols)
    values = {"r": r, "c": c, "rows": rows, "cols": cols, "br": br, "bc": bc, "w": w}
    out = np.broadcast_to(np.asarray(evaluate_array(node, Scope(isa, values=values)), dtype=np.int64),
                          (rows, cols)).copy()
    if out.size and out.min() < 0:
        raise ExprError(f"tile_storage gives a negative offset for {blayout}/{slayout}", rule="isa.tile-storage")
    out.setflags(write=False)
    return out

