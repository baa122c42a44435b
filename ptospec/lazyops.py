"""The ops of a database read from the disk cache, each unpickled the first time it is looked up.

A command reads a few instructions of the hundred and fifty the database holds (``show``, ``check``, a
kernel's ``check-program``): reading every one would be most of its start-up.  ``OpsOnDisk`` is a read-only
mapping of op name to ``OpSpec`` over one pickle per op (written by ``dbcache``, read under its rules); it
also knows each op's assembly mnemonic, so ``Database.by_mnemonic`` finds an op without reading the others.
Each op is an object of its own: two ops no longer share equal sub-expressions, which nothing relies on.
"""

from __future__ import annotations

import gc
import pickle
from collections.abc import ItemsView, Iterator, Mapping, ValuesView
from typing import TYPE_CHECKING

from .collector import collector_paused

if TYPE_CHECKING:
    from .model import OpSpec


class OpsOnDisk(Mapping):
    def __init__(self, pickles: dict[str, bytes], mnemonics: dict[str, str]) -> None:
        self._pickles = pickles
        self._read: dict[str, OpSpec] = {}
        self.mnemonics = mnemonics  # assembly mnemonic -> op name (the first op in order that has it)

    @classmethod
    def of(cls, ops: Mapping[str, OpSpec]) -> OpsOnDisk:
        mnemonics: dict[str, str] = {}
        for name, op in ops.items():
            mnemonics.setdefault(op.mnemonic, name)
        return cls({name: pickle.dumps(op, protocol=pickle.HIGHEST_PROTOCOL) for name, op in ops.items()}, mnemonics)

    def __getitem__(self, name: str) -> OpSpec:
        found = self._read.get(name)
        if found is None:
            with collector_paused():
                read = pickle.loads(self._pickles[name])
            found = self._read.setdefault(name, read)  # one object per op, also when two threads ask at once
        return found

    def values(self) -> ValuesView[OpSpec]:
        self._read_all()
        return ValuesView(self)

    def items(self) -> ItemsView[str, OpSpec]:
        self._read_all()
        return ItemsView(self)

    def _read_all(self) -> None:
        """Every op, at once: what reads them all (``list``) reads the whole database, as ``dbcache`` does."""
        if len(self._read) < len(self._pickles):
            with collector_paused():
                for name in self._pickles:
                    self[name]
                gc.freeze()  # the cyclic collector never walks the database again (dbcache)

    def __iter__(self) -> Iterator[str]:
        return iter(self._pickles)

    def __len__(self) -> int:
        return len(self._pickles)

    def __contains__(self, name: object) -> bool:
        return name in self._pickles

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def __reduce__(self):
        return OpsOnDisk, (self._pickles, self.mnemonics)
