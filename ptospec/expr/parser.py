"""Tokenizer and recursive-descent parser of the spec expression language.

The language is deliberately tiny: numbers, names, ``tile.field``, ``tile[r, c]``,
calls to registered functions, reductions ``f(v < bound: body)``, arithmetic,
comparisons, ``and/or/not`` and ``x in [..]``.  Nothing is ever handed to Python's
``eval``; unknown syntax is a parse error with a column number.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from ..errors import ExprError
from .ast import Attr, Binary, Call, In, Index, Name, Node, Num, Reduce, Statement, Unary, children

MAX_LENGTH = 2000
MAX_DEPTH = 60  # nesting of the grammar (brackets, calls, unary signs) while parsing
MAX_TREE_DEPTH = 100  # depth of the finished tree (long operator chains nest too)
MAX_INT = 1 << 64  # integer literals: anything larger is no tile size, index or dtype bound

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<num>(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?)
  | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op>\*\*|//|==|!=|<=|>=|[-+*/%<>()\[\],.:=])
    """,
    re.VERBOSE,
)

KEYWORDS = {"and", "or", "not", "in", "for"}
# ``tile.bit[r, c]``: the tile's elements as packed bits, least significant bit first
# (bit c of a row is bit c % w of element c // w, w = the element width).
# ``g.flat[k]``: element k of a global view's buffer counted from the view's first element, ignoring
# the view's strides (the instructions that index a table directly).
# ``tile.byte[k]``: byte k of the tile's storage, its elements placed by ``tile_storage`` of specs/isa.yaml.
# ``tile.word[k]``: the 64-bit word at bytes 8k..8k+7 of the tile's storage (little-endian), read whatever
# the tile's element type (the fix-pipe's quantisation words).
VIEWS = {"bit", "flat", "byte", "word"}


@dataclass(frozen=True)
class Token:
    kind: str  # num, name, op, kw, end
    text: str
    col: int


def tokenize(text: str) -> list[Token]:
    if len(text) > MAX_LENGTH:
        raise ExprError(f"expression longer than {MAX_LENGTH} characters", rule="expr.too-long")
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ExprError(
                f"unexpected character {text[pos]!r} at column {pos + 1} in {text!r}", rule="expr.syntax"
            )
        kind = m.lastgroup
        assert kind is not None
        if kind != "ws":
            tok = m.group()
            if kind == "name" and tok in KEYWORDS:
                kind = "kw"
            tokens.append(Token(kind, tok, pos + 1))
        pos = m.end()
    tokens.append(Token("end", "", len(text) + 1))
    return tokens


_COMPARE = {"==", "!=", "<", "<=", ">", ">="}


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0
        self.depth = 0

    # -- helpers -----------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def error(self, what: str) -> ExprError:
        tok = self.tok
        found = "end of expression" if tok.kind == "end" else repr(tok.text)
        return ExprError(f"{what}, found {found} at column {tok.col} in {self.text!r}", rule="expr.syntax")

    def accept(self, text: str) -> bool:
        if self.tok.text == text and self.tok.kind in ("op", "kw"):
            self.pos += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            raise self.error(f"expected {text!r}")

    def name(self) -> str:
        if self.tok.kind != "name":
            raise self.error("expected a name")
        text = self.tok.text
        self.pos += 1
        return text

    def number(self, tok: Token) -> int | float:
        if tok.text.isdigit():
            if len(tok.text) > 20 or int(tok.text) > MAX_INT:
                raise self.error(f"integer literal larger than {MAX_INT}")
            return int(tok.text)
        value = float(tok.text)
        if not math.isfinite(value):
            raise self.error("number out of range")
        return value

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExprError(f"expression nested deeper than {MAX_DEPTH} levels", rule="expr.too-deep")

    # -- grammar -----------------------------------------------------------
    def expression(self) -> Node:
        self.enter()
        try:
            return self.or_expr()
        finally:
            self.depth -= 1

    def or_expr(self) -> Node:
        node = self.and_expr()
        while self.accept("or"):
            node = Binary("or", node, self.and_expr())
        return node

    def and_expr(self) -> Node:
        node = self.not_expr()
        while self.accept("and"):
            node = Binary("and", node, self.not_expr())
        return node

    def not_expr(self) -> Node:
        if self.accept("not"):
            self.enter()
            try:
                return Unary("not", self.not_expr())
            finally:
                self.depth -= 1
        return self.comparison()

    def comparison(self) -> Node:
        node = self.additive()
        if self.tok.kind == "op" and self.tok.text in _COMPARE:
            op = self.tok.text
            self.pos += 1
            node = Binary(op, node, self.additive())
            if self.tok.kind == "op" and self.tok.text in _COMPARE:
                raise self.error("chained comparisons are not allowed; combine them with 'and'")
        elif self.accept("in"):
            self.expect("[")
            items = self.arguments("]")
            node = In(node, tuple(items))
        return node

    def additive(self) -> Node:
        node = self.term()
        while self.tok.kind == "op" and self.tok.text in ("+", "-"):
            op = self.tok.text
            self.pos += 1
            node = Binary(op, node, self.term())
        return node

    def term(self) -> Node:
        node = self.unary()
        while self.tok.kind == "op" and self.tok.text in ("*", "/", "//", "%"):
            op = self.tok.text
            self.pos += 1
            node = Binary(op, node, self.unary())
        return node

    def unary(self) -> Node:
        if self.accept("-"):
            self.enter()
            try:
                operand = self.unary()
            finally:
                self.depth -= 1
            if isinstance(operand, Num):
                return Num(-operand.value)
            return Unary("-", operand)
        return self.power()

    def power(self) -> Node:
        node = self.primary()
        if self.accept("**"):
            self.enter()
            try:
                node = Binary("**", node, self.unary())
            finally:
                self.depth -= 1
        return node

    def arguments(self, close: str) -> list[Node]:
        items: list[Node] = []
        if self.accept(close):
            return items
        while True:
            items.append(self.expression())
            if self.accept(close):
                return items
            self.expect(",")

    def primary(self) -> Node:
        self.enter()
        try:
            return self.atom()
        finally:
            self.depth -= 1

    def atom(self) -> Node:
        tok = self.tok
        if tok.kind == "num":
            self.pos += 1
            return Num(self.number(tok))
        if self.accept("("):
            node = self.expression()
            self.expect(")")
            return node
        if tok.kind != "name":
            raise self.error("expected a value")
        name = self.name()
        if self.accept("."):
            field = self.name()
            if field in VIEWS and self.accept("["):
                return Index(name, tuple(self.arguments("]")), field)
            return Attr(name, field)
        if self.accept("["):
            return Index(name, tuple(self.arguments("]")))
        if self.accept("("):
            # Reduction: f(v < bound: body)
            if (
                self.tok.kind == "name"
                and self.tokens[self.pos + 1].text == "<"
                and self._colon_follows()
            ):
                var = self.name()
                self.expect("<")
                bound = self.additive()
                self.expect(":")
                body = self.expression()
                self.expect(")")
                return Reduce(name, var, bound, body)
            return Call(name, tuple(self.arguments(")")))
        return Name(name)

    def _colon_follows(self) -> bool:
        """True when a ':' appears before the call's closing parenthesis."""
        depth = 0
        for tok in self.tokens[self.pos :]:
            if tok.text in ("(", "["):
                depth += 1
            elif tok.text in (")", "]"):
                if depth == 0:
                    return False
                depth -= 1
            elif tok.text == ":" and depth == 0:
                return True
            elif tok.kind == "end":
                return False
        return False

    def finish(self) -> None:
        if self.tok.kind != "end":
            raise self.error("unexpected text after the expression")


def parse_expr(text: str) -> Node:
    """Parse one expression (a runtime check, a ``let`` value, a formula).  Trees are immutable, so an
    expression parsed before (databases repeat the same checks, and are loaded more than once) is
    answered from a memo."""
    if not isinstance(text, str):
        raise ExprError(f"expression must be a string, got {type(text).__name__}", rule="expr.type")
    return _parse_expr(text)


@lru_cache(maxsize=8192)
def _parse_expr(text: str) -> Node:
    parser = _Parser(text)
    node = parser.expression()
    parser.finish()
    _check_depth(node, text)
    return node


def _check_depth(node: Node, text: str) -> None:
    """Left-associative chains (``1+1+...``) nest without recursion in the parser; bound them here
    so every later tree walk (evaluation, LaTeX) stays far from Python's recursion limit."""
    stack = [(node, 1)]
    while stack:
        n, depth = stack.pop()
        if depth > MAX_TREE_DEPTH:
            raise ExprError(f"expression nested deeper than {MAX_TREE_DEPTH} levels in {text[:80]!r}",
                            rule="expr.too-deep")
        stack.extend((child, depth + 1) for child in children(n))


def parse_statement(text: str) -> Statement:
    """Parse one semantics statement ``dst[i, j] = expr [for v < bound, ...]`` (remembered, as expressions)."""
    if not isinstance(text, str):
        raise ExprError(f"statement must be a string, got {type(text).__name__}", rule="expr.type")
    return _parse_statement(text)


@lru_cache(maxsize=4096)
def _parse_statement(text: str) -> Statement:
    parser = _Parser(text)
    target = parser.primary()
    if not isinstance(target, Index) or len(target.indices) not in (1, 2, 5):
        raise ExprError(
            f"a statement must start with an element of a tile, like dst[i, j], or of a global view, in {text!r}",
            rule="expr.statement",
        )
    parser.expect("=")
    value = parser.expression()
    domain: list[tuple[str, Node]] = []
    if parser.accept("for"):
        while True:
            var = parser.name()
            parser.expect("<")
            domain.append((var, parser.additive()))
            if not parser.accept(","):
                break
    parser.finish()
    _check_depth(target, text)
    _check_depth(value, text)
    for _, bound in domain:
        _check_depth(bound, text)
    return Statement(target, value, tuple(domain), text)
