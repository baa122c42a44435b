"""Helpers shared by subcommands: loading the database, parsing ``name=descriptor``.

Every command module is imported to build the parser, so this one imports nothing heavy at its top: a command
pays for the model, the database cache and the descriptor parser when it runs."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import InvocationError, PtospecError

if TYPE_CHECKING:
    from ..model import Database


def database(args) -> Database:
    """The database of ``--specs``: the one ``cli.main`` was handed, else read through the cache."""
    loaded = getattr(args, "loaded_database", None)
    if loaded is not None:
        return loaded
    from ..dbcache import load_database_cached

    return load_database_cached(getattr(args, "specs", None))


def parse_tiles(db: Database, items: list[str] | None) -> dict:
    """``["src=vec,16x16xf32", ...]`` -> {operand: descriptor}."""
    from ..asm.types import parse_descriptor

    tiles = {}
    for item in items or []:
        name, sep, desc = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InvocationError(
                f"--tile expects NAME=DESCRIPTOR like src=vec,16x16xf32,valid=15x16; got {item!r}",
                rule="cli.tile", where="--tile",
            )
        if name in tiles:
            raise InvocationError(f"operand {name!r} given twice", rule="cli.tile", where="--tile")
        try:
            tiles[name] = parse_descriptor(desc, db.isa)
        except PtospecError as exc:
            raise InvocationError(f"{name}: {exc.message}", rule=exc.rule, where="--tile") from None
    return tiles


def text(mapping: dict, lang: str) -> str:
    return mapping.get(lang) or mapping.get("en", "")


def stage_counter() -> Callable[[str, int, int], None]:
    """``progress(stage, done, total)``: a ``[done/total] stage`` counter on stderr, redrawn at most twice a second
    on a terminal, else a line every 10 s; the last count always shown."""
    tty = sys.stderr.isatty()
    last = [0.0]

    def progress(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < (0.5 if tty else 10):
            return
        last[0] = now
        start, end = ("\r", "" if done < total else "\n") if tty else ("", "\n")
        print(f"{start}[{done}/{total}] {stage}", end=end, file=sys.stderr, flush=True)

    return progress
