"""What a program's values are while it is checked or run: numbers, pointers into global buffers,
tensor views and their partitions, and tile buffers placed in on-chip memory.

``UNKNOWN`` stands for a value only known at run time (the checker walks a program without running
it); anything computed from it is unknown too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..storage import from_bytes, storage_bytes, to_bytes
from ..tile import GlobalDesc, TileDesc


class _Unknown:
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "?"


UNKNOWN = _Unknown()


def known(*values) -> bool:
    return all(v is not UNKNOWN for v in values)


@dataclass(eq=False)
class GlobalBuffer:
    """One pointer argument's memory: a flat array of its element type (``None`` while checking)."""

    name: str
    dtype: str
    array: np.ndarray | None
    shape: tuple[int, ...] = ()  # the shape the array was given in (restored on output)

    @property
    def length(self):
        return UNKNOWN if self.array is None else int(self.array.size)


@dataclass(frozen=True, eq=False)
class Pointer:
    buffer: GlobalBuffer
    offset: object  # int or UNKNOWN, in elements

    @property
    def dtype(self) -> str:
        return self.buffer.dtype


@dataclass(frozen=True, eq=False)
class TensorView:
    ptr: Pointer
    shape: tuple  # ints or UNKNOWN
    strides: tuple
    layout: str  # C++ name: ND
    declared: tuple = ()  # the extents of its type (-1 where the type says ?)
    decides: bool = False  # inferred for a shape both ND and DN fit: a consumer's Vec tile decides (layouts.py)


@dataclass(frozen=True, eq=False)
class PartitionView:
    tensor: TensorView
    offsets: tuple
    sizes: tuple

    def desc(self) -> GlobalDesc:
        tv = self.tensor
        base = tv.ptr.offset
        if known(base, *self.offsets, *tv.strides):
            offset = base + sum(o * s for o, s in zip(self.offsets, tv.strides, strict=True))
        else:
            offset = None
        length = tv.ptr.buffer.length
        return GlobalDesc(
            dtype=tv.ptr.dtype,
            shape=tuple(s if known(s) else None for s in self.sizes),
            strides=tuple(s if known(s) else None for s in tv.strides),
            layout=tv.layout,
            offset=offset,
            size=length if known(length) else None,
        )


@dataclass(frozen=True, eq=False)
class TileAddress:
    """The address of a tile's data region (``pto.tile_buf_addr``): a pointer for vector-scope code."""

    tile: TileBuffer
    dtype: str
    space: str  # the pointer type's memory space as written (vec, ub), "" when none


@dataclass(frozen=True)
class PipeHandle:
    """A pipe of the lowered FIFO spelling (``pto.initialize_l2l_pipe ... -> !pto.pipe``)."""

    dir_mask: int
    slot_size: int
    slot_num: int
    flag_id: int


@dataclass(eq=False)
class TileBuffer:
    """A tile: its type, its current valid shape, and its bytes (``None`` while checking)."""

    desc: TileDesc  # the static type; valid_row/valid_col None where the type says ?
    valid: tuple  # the current valid shape (ints or UNKNOWN)
    storage: np.ndarray | None = None  # uint8 bytes of the tile's storage, elements placed by tile_storage
    np_dtype: np.dtype | None = None
    place: tuple = field(default_factory=tuple)  # (location, byte address) when placed with addr
    isa: object = None  # the ISA (its tile_storage places the elements in ``storage``)
    home: object = None  # the tile whose storage this one is a view of, and the byte offset there
    window: object = None  # (parent, row, col): a subset window, its elements the parent's from (row, col) on

    def current(self) -> TileDesc:
        r, c = self.valid
        return self.desc.with_(valid_row=r if known(r) else None, valid_col=c if known(c) else None)

    def elements(self) -> np.ndarray:
        """The tile's rows x cols elements, read out of its bytes through its layout; elements whose bytes lie
        beyond the storage it has (a view near the end of another tile's storage) read as zero."""
        if self.window is not None:
            parent, r, c = self.window
            return parent.elements()[r:r + self.desc.rows, c:c + self.desc.cols].copy()
        need = storage_bytes(self.isa, self.desc)
        raw = self.storage if self.storage.size >= need else np.concatenate(
            [self.storage, np.zeros(need - self.storage.size, np.uint8)])
        return from_bytes(self.isa, self.desc, raw, self.np_dtype)

    def store(self, array: np.ndarray) -> None:
        """Write all rows x cols elements back into the tile's bytes (as far as its storage goes)."""
        if self.window is not None:
            parent, r, c = self.window
            whole = parent.elements()
            whole[r:r + self.desc.rows, c:c + self.desc.cols] = array
            parent.store(whole)
            return
        raw = to_bytes(self.isa, self.desc, np.asarray(array, dtype=self.np_dtype))
        n = min(raw.size, self.storage.size)
        self.storage[:n] = raw[:n]
