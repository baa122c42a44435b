"""Other spellings of an instruction line: the generic MLIR form read as the custom one (``generic_forms`` of
specs/program.yaml), and the kinds of a line's ins and outs, by which ``unmatched_forms`` are recognised."""

from __future__ import annotations

import re
from dataclasses import replace

from .errors import ProgramError
from .lexer import Token
from .spec import GenericForm
from .syntax import Operation

_SIZES = re.compile(r"^array<\s*i32\s*:\s*([0-9,\s]*)>$")


def custom_form(op: Operation, form: GenericForm, segment_sizes: str) -> Operation:
    """``"pto.op"(%a, %b) <{sizes = array<i32: 1, 1>, k = v}> : (A, B) -> ()`` as
    ``pto.op ins(%a : A) outs(%b : B) {k = v}``: the values fill ``form.segments`` by the segment sizes."""
    values, props, types, results = _generic_parts(op)
    if len(types) != len(values) or any(len(v) != 1 or v[0].kind != "value" for v in values):
        raise _generic_error(op, f"{len(values)} operand(s) and {len(types)} type(s)")
    sizes = next((it for it in props if it[0].text.strip('"') == segment_sizes), None)
    m = _SIZES.match(sizes[-1].text) if sizes and len(sizes) >= 3 else None
    counts = [int(x) for x in m.group(1).replace(" ", "").split(",") if x] if m else None
    if counts is None or len(counts) != len(form.segments) or sum(counts) != len(values):
        raise _generic_error(op, f"{segment_sizes} must give one size per operand segment "
                             f"({', '.join(form.segments)}) adding up to the {len(values)} operand(s)")
    filled: dict[str, list[tuple[Token, list[Token]]]] = {}
    k = 0
    for name, n in zip(form.segments, counts, strict=True):
        filled[name] = [(values[j][0], types[j]) for j in range(k, k + n)]
        k += n
    out = _custom_tokens(op.tail[0], form, filled, [it for it in props if it is not sizes])
    if results and not (len(results) == 3 and [t.text for t in results] == ["->", "(", ")"]):
        out.extend(results)
    return replace(op, tail=tuple(_respaced(out)))


def _generic_error(op: Operation, why: str) -> ProgramError:
    return ProgramError(f"{op.name} in the generic form: {why}", "program.syntax", op.pos)


def _generic_parts(op: Operation) -> tuple[list[list[Token]], list[list[Token]], list[list[Token]], tuple[Token, ...]]:
    """A generic line's tail ``(%a, %b) <{p = v, ...}> : (A, B) -> ()`` read as (its values, its properties,
    its operand types: each a list of tokens; the tokens after the types)."""
    toks, i = op.tail, 0

    def group(open_: str, close: str) -> list[list[Token]]:
        nonlocal i
        if i >= len(toks) or toks[i].text != open_:
            raise _generic_error(op, f"expected {open_!r}")
        items: list[list[Token]] = [[]]
        depth, i = 0, i + 1
        while i < len(toks) and not (depth == 0 and toks[i].text == close):
            t = toks[i]
            depth += t.text in "([{" and t.kind == "punct"
            depth -= t.text in ")]}" and t.kind == "punct"
            if depth == 0 and t.kind == "punct" and t.text == ",":
                items.append([])
            else:
                items[-1].append(t)
            i += 1
        if i >= len(toks):
            raise _generic_error(op, f"expected {close!r}")
        i += 1
        return [it for it in items if it]

    values = group("(", ")")
    props: list[list[Token]] = []
    if i < len(toks) and toks[i].text == "<":
        i += 1
        props = group("{", "}")
        if i >= len(toks) or toks[i].text != ">":
            raise _generic_error(op, "expected '>' after the properties")
        i += 1
    if i >= len(toks) or toks[i].text != ":":
        raise _generic_error(op, "expected ':' and the operand types")
    i += 1
    types = group("(", ")")
    return values, props, types, toks[i:]


def _custom_tokens(at: Token, form: GenericForm, filled: dict[str, list[tuple[Token, list[Token]]]],
                   kept: list[list[Token]]) -> list[Token]:
    """The tokens of ``ins(%a : A) outs(%b : B) {k = v}``: the segments' values and types in ``form``'s ins and
    outs, then the properties ``kept``; the punctuation made is placed at ``at``."""
    out: list[Token] = []

    def emit(text: str, kind: str = "punct") -> None:
        out.append(Token(kind, text, at.line, at.col, len(out) * 2, len(out) * 2 + 1, False))

    for word, names in (("ins", form.ins), ("outs", form.outs)):
        pairs = [p for name in names for p in filled[name]]
        emit(word, "ident")
        emit("(")
        for j, (value, _ty) in enumerate(pairs):
            out.append(value)
            if j < len(pairs) - 1:
                emit(",")
        if pairs:
            emit(":")
        for j, (_value, ty) in enumerate(pairs):
            out.extend(ty)
            if j < len(pairs) - 1:
                emit(",")
        emit(")")
    if kept:
        emit("{")
        for j, it in enumerate(kept):
            out.extend(it)
            if j < len(kept) - 1:
                emit(",")
        emit("}")
    return out


def _respaced(toks: list[Token]) -> list[Token]:
    """The tokens with offsets that print them as a custom line: ``ins(%a, %b : A, B) outs(%c : C) {k = v}``."""
    out, at, prev = [], 0, None
    for t in toks:
        tight = prev is not None and (t.text in (",", ")") or prev.text == "("
                                      or (t.text == "(" and prev.kind == "ident"))
        at += 0 if prev is None or tight else 1
        out.append(Token(t.kind, t.text, t.line, t.col, at, at + 1, t.newline))
        at += 1
        prev = t
    return out


def operand_kinds(op: Operation, word: str, kind_of) -> list[str] | None:
    """The kinds (tile, view, scalar) of the operands of the line's ``word(...)`` group, each ``kind_of`` its type
    token's text; None when the line has no such group."""
    toks = op.tail
    start = next((k for k in range(len(toks) - 1) if toks[k].text == word and toks[k + 1].text == "("), None)
    if start is None:
        return None
    kinds, depth, typed = [], 0, False
    for t in toks[start + 2:]:
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif t.kind == "punct" and t.text == ":" and depth == 0:
            typed = True
        elif typed and depth == 0 and t.kind in ("type", "ident"):
            kinds.append(kind_of(t.text))
    return kinds
