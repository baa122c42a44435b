"""The generic shape of a program: operations with results, the tokens of their custom syntax, and
regions of blocks.  What an operation's tokens mean is decided later (``dialect``); this layer only
knows where each operation starts and ends.

An operation ends where a new line at bracket depth 0 begins another statement (``%r = ...``, a
dotted operation name, ``return``) or where its region closes; a ``{`` whose next token starts a
new line with a statement opens a region, any other ``{`` an attribute dictionary.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ProgramError, SourcePos
from .lexer import Token, int_literal, tokenize

MAX_DEPTH = 200  # nested regions


@dataclass(frozen=True)
class Block:
    label: str | None
    args: tuple[tuple[str, str], ...]  # (value, type text)
    ops: tuple[Operation, ...]


@dataclass(frozen=True)
class Operation:
    name: str  # pto.tadd, scf.for, func.func, module, return
    results: tuple[str, ...]  # %x, or %x#0 %x#1 for ``%x:2 = ...``
    tail: tuple[Token, ...]  # the custom syntax's tokens (between the name and the end, regions excluded)
    regions: tuple[tuple[Block, ...], ...]
    pos: SourcePos
    start: int  # source offsets of the whole statement
    end: int


@dataclass(frozen=True)
class Program:
    path: str
    text: str
    aliases: dict[str, str]  # !name / #name -> the text it stands for
    top: tuple[Operation, ...]

    def source(self, op: Operation) -> str:
        return self.text[op.start:op.end]


_CONTINUES = {",", "=", ":", "->", "(", "[", "{", "<"}  # a line ending in one of these continues


class _Parser:
    def __init__(self, text: str, path: str):
        self.path = path
        self.toks = tokenize(text, path)
        self.i = 0
        self.aliases: dict[str, str] = {}

    # -- helpers ------------------------------------------------------------------------------------
    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def error(self, message: str, tok: Token | None = None, rule: str = "program.syntax") -> ProgramError:
        tok = tok or self.peek() or (self.toks[-1] if self.toks else None)
        pos = tok.pos(self.path) if tok else SourcePos(self.path, 1, 1)
        return ProgramError(message, rule, pos)

    def is_punct(self, k: int, text: str) -> bool:
        t = self.peek(k)
        return t is not None and t.kind == "punct" and t.text == text

    def starts_statement(self, k: int = 0) -> bool:
        t = self.peek(k)
        if t is None:
            return False
        if t.kind == "value":
            n = self.peek(k + 1)
            if n is None or n.kind != "punct":
                return False
            if n.text in ("=", ","):
                return True
            return n.text == ":" and self.peek(k + 2) is not None and self.peek(k + 2).kind == "number" \
                and self.is_punct(k + 3, "=")
        if t.kind == "ident":
            if self.is_punct(k + 1, "="):
                return False  # a key of an attribute dictionary
            return "." in t.text or t.text in ("return", "module")
        if t.kind in ("type", "attr"):
            return self.is_punct(k + 1, "=") and "<" not in t.text
        if t.kind == "string":
            return self.is_punct(k + 1, "(")
        return False

    # -- grammar ------------------------------------------------------------------------------------
    def program(self) -> tuple[Operation, ...]:
        ops = []
        while self.peek() is not None:
            t = self.peek()
            if t.kind in ("type", "attr") and self.is_punct(1, "="):
                self.alias()
                continue
            ops.append(self.operation(0))
        return tuple(ops)

    def alias(self) -> None:
        name = self.peek()
        self.i += 2
        body = self.peek()
        if body is None or body.kind not in ("type", "attr", "ident"):
            raise self.error(f"expected a type or attribute after '{name.text} ='", body)
        if name.text in self.aliases:
            raise self.error(f"alias {name.text} defined twice", name)
        self.aliases[name.text] = self.aliases.get(body.text, body.text)
        self.i += 1

    def operation(self, depth: int) -> Operation:
        if depth > MAX_DEPTH:
            raise self.error(f"regions nested deeper than {MAX_DEPTH}", rule="program.too-deep")
        first = self.peek()
        results: list[str] = []
        if first.kind == "value":
            while True:
                t = self.peek()
                if t is None or t.kind != "value":
                    raise self.error("expected a result value", t)
                self.i += 1
                if self.is_punct(0, ":") and self.peek(1) is not None and self.peek(1).kind == "number":
                    count = int_literal(self.peek(1).text)
                    if count is None or not 0 < count <= 1024:
                        raise self.error(f"result count {count} out of range", self.peek(1))
                    results.extend(f"{t.text}#{k}" for k in range(count))
                    self.i += 2
                else:
                    results.append(t.text)
                if self.is_punct(0, ","):
                    self.i += 1
                    continue
                break
            if not self.is_punct(0, "="):
                raise self.error("expected '=' after the results", self.peek())
            self.i += 1
        name = self.peek()
        if name is None or name.kind not in ("ident", "string"):
            raise self.error("expected an operation name", name)
        self.i += 1
        tail: list[Token] = []
        regions: list[tuple[Block, ...]] = []
        level = 0
        last = name
        while self.peek() is not None:
            t = self.peek()
            if level == 0:
                if t.kind == "punct" and t.text == "}":
                    break
                if t.newline and self.starts_statement() and not (last.kind == "punct" and last.text in _CONTINUES):
                    break
                if t.kind == "punct" and t.text == "{" and self.opens_region():
                    regions.append(self.region(depth + 1))
                    last = self.toks[self.i - 1]
                    continue
            if t.kind == "punct" and t.text in "([{":
                level += 1
            elif t.kind == "punct" and t.text in ")]}":
                level -= 1
            tail.append(t)
            last = t
            self.i += 1
        if level != 0:
            raise self.error(f"unbalanced brackets in {name.text}", name)
        end = last.end
        return Operation(name.text.strip('"'), tuple(results), tuple(tail), tuple(regions),
                         first.pos(self.path), first.start, end)

    def opens_region(self) -> bool:
        n = self.peek(1)
        if n is None:
            return False
        if n.kind == "punct" and n.text == "}":
            return True
        return n.newline and (n.kind == "block" or self.starts_statement(1))

    def region(self, depth: int) -> tuple[Block, ...]:
        open_tok = self.peek()
        self.i += 1  # '{'
        blocks: list[Block] = []
        label, args = None, ()
        ops: list[Operation] = []
        while True:
            t = self.peek()
            if t is None:
                raise self.error("region not closed: expected '}'", open_tok)
            if t.kind == "punct" and t.text == "}":
                self.i += 1
                break
            if t.kind == "block":
                if ops or label is not None:
                    blocks.append(Block(label, args, tuple(ops)))
                    ops = []
                label, args = t.text, self.block_args()
                continue
            ops.append(self.operation(depth))
        blocks.append(Block(label, args, tuple(ops)))
        return tuple(blocks)

    def block_args(self) -> tuple[tuple[str, str], ...]:
        self.i += 1  # the label
        args: list[tuple[str, str]] = []
        if self.is_punct(0, "("):
            self.i += 1
            while not self.is_punct(0, ")"):
                v = self.peek()
                if v is None or v.kind != "value" or not self.is_punct(1, ":"):
                    raise self.error("expected '%name : type' in the block's arguments", v)
                ty = self.peek(2)
                if ty is None:
                    raise self.error("expected a type", v)
                args.append((v.text, ty.text))
                self.i += 3
                if self.is_punct(0, ","):
                    self.i += 1
            self.i += 1
        if not self.is_punct(0, ":"):
            raise self.error("expected ':' after a block label", self.peek())
        self.i += 1
        return tuple(args)


def parse_program(text: str, path: str) -> Program:
    """Read a ``.pto`` file's text into generic operations (raises ``ProgramError`` with file:line:col)."""
    parser = _Parser(text, path)
    top = parser.program()
    for op in top:
        _single_definitions(op, frozenset())
    return Program(path, text, dict(parser.aliases), top)


def _single_definitions(op: Operation, visible: frozenset[str]) -> None:
    """SSA: a value is defined once where it is visible (its block and the regions nested in it; a function
    starts afresh), as the assembler's parser requires: a second definition is ``program.redefined``."""
    if op.name in ("func.func", "module"):
        visible = frozenset()
    for region in op.regions:
        for block in region:
            local = {name for name, _ty in block.args}
            for inner in block.ops:
                for name in dict.fromkeys(r.split("#")[0] for r in inner.results):
                    if name in local or name in visible:
                        raise ProgramError(f"{name} is defined twice (SSA values are defined once)",
                                           "program.redefined", inner.pos)
                    local.add(name)
                if inner.regions:
                    _single_definitions(inner, visible | local)
