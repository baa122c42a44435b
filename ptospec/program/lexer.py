"""Tokens of the PTO assembler's program text (an MLIR dialect), each with its line and column.

Types and attributes with an angle-bracket body (``!pto.tile_buf<...>``, ``#pto.layout<nd>``,
``memref<16x16xf32, #pto.address_space<vec>>``, ``dense<1.0>``) are one token each: their bodies
are read by the type parsers, not here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ProgramError, SourcePos

MAX_PROGRAM = 16 << 20  # characters; real kernels are a few hundred kB at most
MAX_TOKENS = 2_000_000


@dataclass(frozen=True)
class Token:
    kind: str  # value | symbol | type | attr | block | ident | number | string | punct
    text: str
    line: int
    col: int
    start: int  # offset in the source
    end: int
    newline: bool  # first token on its line

    def pos(self, path: str) -> SourcePos:
        return SourcePos(path, self.line, self.col)


_SIMPLE = [
    ("space", r"[ \t\r\f\v]+"),
    ("newline", r"\n"),
    ("comment", r"//[^\n]*"),
    ("string", r'"(?:[^"\\\n]|\\.)*"'),
    ("value", r"%[A-Za-z0-9_.$-]+(?:#[0-9]+)?"),
    ("symbol", r"@[A-Za-z0-9_.$-]+|@\"(?:[^\"\\\n]|\\.)*\""),
    ("block", r"\^[A-Za-z0-9_.$-]+"),
    ("number", r"0x[0-9A-Fa-f]+|[-+]?(?:[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+|[0-9]+)"),
    ("arrow", r"->"),
    ("punct", r"[(){}\[\],:=<>?*+-]"),
]
MAX_LITERAL_DIGITS = 40  # 2^128 has 39 digits: wider literals are refused, not parsed


def int_literal(text: str) -> int | None:
    """The value of a ``number`` token that is an integer (decimal, leading zeros allowed, or 0x hex); None
    for a float literal or one longer than ``MAX_LITERAL_DIGITS`` digits."""
    if len(text.lstrip("+-")) > MAX_LITERAL_DIGITS + 2:
        return None
    if text.lower().startswith("0x"):
        return int(text, 16)
    if "." in text or "e" in text.lower():
        return None
    return int(text, 10)



def integer_attributes(attrs: dict[str, str], keys, pos: SourcePos) -> dict[str, int | None]:
    """The integer attributes ``keys`` of an attribute dictionary, read as integer literals (0x hex too): None
    when absent, a ``program.syntax`` error naming the value when present but not an integer."""
    values: dict[str, int | None] = {}
    for key in keys:
        text = attrs.get(key)
        value = None if text is None else int_literal(text.strip()) if _INTEGER.fullmatch(text.strip()) else None
        if text is not None and value is None:
            raise ProgramError(f"attribute {key} = {text.strip()[:40]} is not an integer", "program.syntax", pos)
        values[key] = value
    return values


_INTEGER = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|[0-9]+)")

_MASTER = re.compile("|".join(f"(?P<{k}>{p})" for k, p in _SIMPLE))
# dotted names (pto.tadd, arith.constant): a dot is always followed by more of the name, so "pto." alone is no word
_WORD = re.compile(r"[!#]?[A-Za-z_][A-Za-z0-9_$]*(?:\.[A-Za-z0-9_$]+)*")
_BODY_WORDS = {"memref", "tensor", "vector", "dense", "complex", "tuple", "affine_map", "strided", "array",
               "dense_resource", "sparse", "opaque", "distinct"}


def tokenize(text: str, path: str) -> list[Token]:
    if len(text) > MAX_PROGRAM:
        raise ProgramError(f"program longer than {MAX_PROGRAM} characters", "program.too-long",
                           SourcePos(path, 1, 1))
    tokens: list[Token] = []
    i, line, line_start, newline = 0, 1, 0, True
    n = len(text)
    while i < n:
        col = i - line_start + 1
        w = _WORD.match(text, i)
        if w:
            word = w.group()
            end = w.end()
            kind = "type" if word[0] == "!" else "attr" if word[0] == "#" else "ident"
            if end < n and text[end] == "<" and (word[0] in "!#" or word in _BODY_WORDS):
                end = _balanced(text, end, path, line, col)
                kind = "attr" if word[0] == "#" else "type"
            body = text[i:end]
            tokens.append(Token(kind, body, line, col, i, end, newline))
            newline = False
            extra = body.count("\n")
            if extra:
                line += extra
                line_start = i + body.rfind("\n") + 1
            i = end
            continue
        m = _MASTER.match(text, i)
        if not m:
            raise ProgramError(f"unexpected character {text[i]!r}", "program.syntax", SourcePos(path, line, col))
        kind = m.lastgroup
        if kind == "newline":
            line += 1
            line_start = m.end()
            newline = True
        elif kind not in ("space", "comment"):
            tokens.append(Token("punct" if kind == "arrow" else kind, m.group(), line, col, i, m.end(), newline))
            newline = False
            if len(tokens) > MAX_TOKENS:
                raise ProgramError(f"more than {MAX_TOKENS} tokens", "program.too-long", SourcePos(path, line, col))
        i = m.end()
    return tokens


def _balanced(text: str, start: int, path: str, line: int, col: int) -> int:
    """End offset of the ``<...>`` body starting at ``start`` (nested brackets and strings; ``->`` inside
    an affine map is not a closing bracket)."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = text.find('"', i + 1)
            while j > 0 and text[j - 1] == "\\":
                j = text.find('"', j + 1)
            if j < 0:
                break
            i = j + 1
            continue
        if c == "-" and text.startswith("->", i):
            i += 2
            continue
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
            if depth == 0:
                return i + 1
            if depth < 0:
                break
        i += 1
    raise ProgramError("unbalanced '<' in a type or attribute", "program.syntax", SourcePos(path, line, col))
