"""Words inside type parameters, shared by the tile and keyword-tile grammars: enumerators and counts."""

from __future__ import annotations

import re

from ..errors import TileError

MAX_DIM = 1 << 20  # rows, cols, valid sizes and fractal: no buffer of any profile holds more


def norm(word: str) -> str:
    return word.replace("_", "").lower()


def enumerator(isa_map: dict[str, str], word: str, what: str, text: str) -> str:
    """Map an asm or C++ spelling to the C++ enumerator name."""
    key = norm(word)
    for cpp_name, asm_name in isa_map.items():
        if key in (norm(cpp_name), norm(asm_name)):
            return cpp_name
    choices = ", ".join(isa_map.values())
    raise TileError(f"unknown {what} {word!r} in {text!r} (expected one of: {choices})", rule="tile.syntax")


def count(word: str, what: str, text: str) -> int:
    """A non-negative integer in ASCII digits, at most ``MAX_DIM``."""
    if not re.fullmatch(r"[0-9]+", word):
        raise TileError(f"{what} must be a non-negative integer, got {word!r} in {text!r}", rule="tile.syntax")
    if len(word.lstrip("0")) > 7 or int(word) > MAX_DIM:
        raise TileError(f"{what} {word} is larger than {MAX_DIM} in {text!r}", rule="tile.syntax")
    return int(word)
