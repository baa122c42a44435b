"""Render expression-language syntax trees as LaTeX.

The site shows semantics and checks from the very ``Statement``/``Node`` objects
the executor and validator run; function and reduction spellings come from the
templates in ``functions.py`` so a new function needs no change here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import fields, replace

from .ast import Attr, Binary, Call, In, Index, Name, Node, Num, Reduce, Statement, Unary, children
from .functions import FUNCTIONS, REDUCTIONS
from .latex_width import latex_width

# Binding strength of each operator (higher binds tighter), as in the parser.
_PREC = {
    "or": 1, "and": 2,
    "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
    "+": 5, "-": 5,
    "*": 6, "/": 6, "//": 6, "%": 6,
    "**": 8,
}
_UNARY_PREC = {"not": 3, "-": 7}
_ATOM = 10
_SYMBOL = {
    "or": r"\lor", "and": r"\land",
    "==": "=", "!=": r"\ne", "<": "<", "<=": r"\le", ">": ">", ">=": r"\ge",
    "+": "+", "-": "-", "*": r"\cdot", "%": r"\bmod",
}


def identifier(name: str) -> str:
    """A name: single letters stay italic maths variables, longer names are upright words."""
    if len(name) == 1:
        return name
    return r"\mathrm{" + name.replace("_", r"\_") + "}"


def _prec(node: Node) -> float:
    match node:
        case Binary(op="//"):
            return _ATOM  # drawn in floor brackets: it needs no more
        case Binary(op=op):
            return _PREC[op]
        case Unary(op=op):
            return _UNARY_PREC[op]
        case In():
            return 4
        case Call() if _infix(node) is not None:
            return 3.5  # a function written as an operator (a \gg b, a \& b): bracketed even beside a relation
        case Reduce() if counted(node) is not None:
            return _ATOM  # a count is drawn in braces
        case Reduce():
            return 5  # a big operator extends to the right: parenthesise it inside products
        case _:
            return _ATOM


def _wrap(node: Node, min_prec: int) -> str:
    text = to_latex(node)
    return rf"\left({text}\right)" if _prec(node) < min_prec else text


def _select_chain(node: Node) -> str:
    """``select(c1, a, select(c2, b, d))`` as one brace of cases, one row per condition (not nested braces)."""
    rows = []
    while isinstance(node, Call) and node.func == "select" and len(node.args) == 3:
        cond, value, node = node.args
        rows.append(f"{to_latex(value)} & {to_latex(cond)}")
    rows.append(f"{to_latex(node)} & {word('otherwise')}")
    return r"\begin{cases}" + r" \\ ".join(rows) + r"\end{cases}"


def counted(node: Node) -> Node | None:
    """The condition of a count, ``sum(v < n: select(c, 1, 0))``, which is shown as ``#{0 <= v < n | c}``;
    None for any other node."""
    match node:
        case Reduce(func="sum", body=Call(func="select", args=(cond, Num(value=1), Num(value=0)))):
            return cond
    return None


def _count_head(node: Reduce) -> str:
    return rf"\#\{{0 \le {identifier(node.var)} < {to_latex(node.bound)} \mid"


def to_latex(node: Node) -> str:
    """LaTeX for one expression node."""
    if (cond := counted(node)) is not None:
        return rf"{_count_head(node)} {to_latex(cond)}\}}"
    match node:
        case Num(value=v):
            return repr(v) if isinstance(v, float) else str(v)
        case Name(id=name):
            return identifier(name)
        case Attr(obj=obj, name=name):
            return f"{identifier(obj)}.{identifier(name)}"
        case Index(base=base, indices=idx, view=view):
            sup = r"^{\mathrm{" + view + "}}" if view else ""
            return identifier(base) + sup + "_{" + ",".join(to_latex(i) for i in idx) + "}"
        case Call(func="select", args=(_, _, Call(func="select", args=(_, _, _)))):
            return _select_chain(node)
        case Call(func=func, args=args):
            rendered = [to_latex(a) for a in args]
            fn = FUNCTIONS.get(func)
            if fn is not None and len(rendered) == fn.arity:
                if _infix(node) is not None:  # its operands bracketed unless atoms: (M \gg j) \& 1, not M \gg j \& 1
                    rendered = [_wrap(a, _ATOM) for a in args]
                return fn.latex.format(*rendered)
            return r"\operatorname{" + func.replace("_", r"\_") + "}(" + ", ".join(rendered) + ")"
        case Reduce(func=func, var=var, bound=bound, body=body):
            red = REDUCTIONS.get(func)
            op = red.latex if red is not None else r"\operatorname*{" + func.replace("_", r"\_") + "}"
            return f"{op}_{{0 \\le {identifier(var)} < {to_latex(bound)}}} {_wrap(body, 6)}"
        case Unary(op=op, operand=operand):
            inner = _wrap(operand, _UNARY_PREC[op])
            return rf"\neg {inner}" if op == "not" else f"-{inner}"
        case Binary(op=op, left=left, right=right):
            if op == "/":
                return rf"\frac{{{to_latex(left)}}}{{{to_latex(right)}}}"
            if op == "//":
                return rf"\left\lfloor \frac{{{to_latex(left)}}}{{{to_latex(right)}}} \right\rfloor"
            if op == "**":
                return f"{_wrap(left, _ATOM)}^{{{to_latex(right)}}}"
            prec = _PREC[op]
            # Left-associative: the right operand of - * % needs brackets at equal strength.
            right_min = prec + 1 if op in ("-", "*", "%") or prec == 4 else prec
            return f"{_wrap(left, prec)} {_SYMBOL[op]} {_wrap(right, right_min)}"
        case In(value=value, items=items):
            return f"{_wrap(value, 5)} \\in \\{{{', '.join(to_latex(i) for i in items)}\\}}"
    raise TypeError(f"cannot render {node!r}")


# The English words the formulas carry, by key; a site language puts its own in their place
# (``ptospec.docs.mathml.localize``, with the labels ``math_<key>``). ``{}`` stands for a value.
WORDS = {
    "otherwise": "otherwise",
    "if": "if",
    "where": "where",
    "first_wins": "(first write in index order wins)",
    "last_wins": "(last write in index order wins)",
    "combined": "(combined by {}, in index order)",
}
# A condition with at least this many conjuncts is broken after each "and", one per line.
_CONJUNCTS_PER_LINE = 3


def word(key: str, *values: str) -> str:
    return r"\text{" + WORDS[key].format(*values) + "}"


def _conjuncts(node: Node) -> list[Node]:
    if isinstance(node, Binary) and node.op == "and":
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


def _names(node: object) -> set[str]:
    """Every identifier a syntax tree uses (names, index variables, bases)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Name):
            found.add(item.id)
        elif isinstance(item, Index):
            found.add(item.base)
        if isinstance(item, tuple | list):
            stack.extend(item)
        elif hasattr(item, "__dataclass_fields__"):
            stack.extend(getattr(item, f) for f in item.__dataclass_fields__)
    return found


def _hoisted_indices(stmt: Statement, line: float) -> tuple[Index, list[tuple[str, Node]]]:
    """The target with each index that is a choice (``select``), and each wide index of a target wider than half
    the line, replaced by a fresh name, and those names with their indices: a brace of cases or a long
    expression reads better on a line of its own than inside a subscript."""
    wide_target = latex_width(to_latex(stmt.target)) > line / 2

    def hoisted(index: Node) -> bool:
        if isinstance(index, Call) and index.func == "select":
            return True
        return wide_target and not isinstance(index, Name | Num) and latex_width(to_latex(index)) > line * _WIDE_INDEX

    if not any(hoisted(i) for i in stmt.target.indices):
        return stmt.target, []
    used = _names((stmt.target, stmt.value, stmt.domain, stmt.when, stmt.where))
    free = (n for n in ("k", "l", "m", "n", "p", "q") if n not in used)
    named: list[tuple[str, Node]] = []
    indices = []
    for index in stmt.target.indices:
        if hoisted(index) and (name := next(free, None)):
            named.append((name, index))
            indices.append(Name(name))
        else:
            indices.append(index)
    return Index(stmt.target.base, tuple(indices), stmt.target.view), named


# Names for the parts of a wide value given lines of their own (after the index names above).
_PART_NAMES = ("p", "q", "r", "s", "u", "v", "w", "k", "l", "m", "n", "t")
_WIDE_INDEX = 1 / 3  # an index expression wider than this share of a line gets a name and a line of its own
_MIN_PART_EM = 3.0  # a part narrower than this is not worth a name of its own


def _hoisted_parts(node: Node, free: Iterator[str], named: list[tuple[str, Node]], top: bool = True,
                   bound: frozenset[str] = frozenset(), wide: float = 10.0) -> Node:
    """``node`` with each choice (``select``) inside it and each wide index expression replaced by a fresh
    name, those names and parts appended to ``named``: a long value reads better as a short formula and
    its parts on lines below. A part that uses a reduction's variable stays where it is (it is bound there)."""
    def movable(part: Node) -> bool:
        return not (_names(part) & bound)

    if not top and isinstance(node, Call) and node.func == "select" and movable(node) and (
            name := next(free, None)):
        named.append((name, node))
        return Name(name)
    if isinstance(node, Reduce):
        inner = bound | {node.var}
        if (cond := counted(node)) is not None:  # a count's condition, not its select, is what may have parts
            body = node.body
            return replace(node, body=replace(body, args=(_hoisted_parts(cond, free, named, False, inner, wide),
                                                          *body.args[1:])))
        return replace(node, body=_hoisted_parts(node.body, free, named, False, inner, wide))
    if isinstance(node, Index):
        indices = []
        for index in node.indices:
            if not isinstance(index, Name | Num) and latex_width(to_latex(index)) > wide and movable(
                    index) and (name := next(free, None)):
                named.append((name, index))
                indices.append(Name(name))
            else:
                indices.append(_hoisted_parts(index, free, named, False, bound, wide))
        return replace(node, indices=tuple(indices))
    changes = {}
    for f in fields(node):  # type: ignore[arg-type]
        value = getattr(node, f.name)
        if isinstance(value, tuple) and value and all(hasattr(v, "__dataclass_fields__") for v in value):
            changes[f.name] = tuple(_hoisted_parts(v, free, named, False, bound, wide) for v in value)
        elif hasattr(value, "__dataclass_fields__"):
            changes[f.name] = _hoisted_parts(value, free, named, False, bound, wide)
    return replace(node, **changes) if changes else node


def _children(node: Node) -> Iterator[tuple[Node, frozenset[str]]]:
    """A node's direct sub-expressions (``ast.children``), each with the reduction variables the node binds
    over it."""
    for child in children(node):
        yield child, frozenset({node.var}) if isinstance(node, Reduce) and child is node.body else frozenset()


def _nameable(node: Node, bound: frozenset[str] = frozenset(), top: bool = True) -> Iterator[Node]:
    """The proper sub-expressions of ``node`` that could be given a name of their own: not a bare name or number,
    and using no reduction variable bound above them."""
    if not top and not isinstance(node, Name | Num | Attr) and not (_names(node) & bound):
        yield node
    if (cond := counted(node)) is not None:  # its select is how a count is written, not a part of it
        yield from _nameable(node.bound, bound, False)
        yield from _nameable(cond, bound | {node.var}, False)
        return
    for child, binds in _children(node):
        yield from _nameable(child, bound | binds, False)


def _replaced(node: Node, part: Node, by: Node) -> Node:
    """``node`` with the sub-expression ``part`` (that very object) replaced by ``by``."""
    if node is part:
        return by
    changes = {}
    for f in fields(node):  # type: ignore[arg-type]
        value = getattr(node, f.name)
        if isinstance(value, tuple):
            new = tuple(_replaced(v, part, by) if hasattr(v, "__dataclass_fields__") else v for v in value)
            if any(a is not b for a, b in zip(new, value, strict=True)):
                changes[f.name] = new
        elif hasattr(value, "__dataclass_fields__") and (new_value := _replaced(value, part, by)) is not value:
            changes[f.name] = new_value
    return replace(node, **changes) if changes else node


def _fitted(node: Node, budget: float, free: Iterator[str], named: list[tuple[str, Node]]) -> list[str]:
    """``node`` laid out within ``budget`` em; while a line stays too wide (a deep nest of calls cannot be broken
    at its structure), its widest part that fits a line of its own gets a name, appended to ``named`` (only if
    that makes the widest line narrower: a name that does not help is not given)."""
    lines = layout(node, budget)
    while not all(_fits(x, budget * 1.05) for x in lines):
        parts = [(w, part) for part in _nameable(node) if (w := latex_width(to_latex(part))) >= _MIN_PART_EM]
        if not parts:
            break
        # the widest part that fits a line of its own first, then the others widest first; the first that makes
        # the widest line narrower (tried with a one-letter name)
        order = sorted(parts, key=lambda wp: (wp[0] <= budget - 2.0, wp[0]), reverse=True)
        widest = _widest(lines)
        part = next((part for _, part in order
                     if _widest(layout(_replaced(node, part, Name("x")), budget)) < widest - 0.1), None)
        if part is None or (name := next(free, None)) is None:
            break
        named.append((name, part))
        node = _replaced(node, part, Name(name))
        lines = layout(node, budget)
    return lines


def _widest(lines: list[str]) -> float:
    return max(latex_width(x) for x in lines)


def _disjuncts(node: Node) -> list[Node]:
    if isinstance(node, Binary) and node.op == "or":
        return _disjuncts(node.left) + _disjuncts(node.right)
    return [node]


# ---------------------------------------------------------------------------------------------- line layout
# A formula wider than a page's column breaks into lines at its structure (``and``/``or`` chains, sums and
# products, sets, relations, the cells of a brace of cases, a call's wide argument), judged by ``latex_width``.
# The site's column holds about 36.5 em of display maths at 1280 px, and a rule table's check column about as
# much of its smaller maths; ``latex_width``'s error against the browser is stated in its
# module, and ``_fitted`` accepts 5 % over: LINE_EM leaves room for both.
LINE_EM = 31.0
# The same at a phone's width (375 px): a display formula's box holds about 20.5 em there (the site sets maths a
# little smaller on narrow screens), a stacked rule table's cell about 24 em of its smaller maths.
PHONE_LINE_EM = 17.0
# A rule table's check column at 1280 px, beside the rule ids (its maths smaller than display maths).
CELL_EM = 26.0
PHONE_CELL_EM = 19.0
_INDENT_EM = 1.0  # one \quad


def _fits(latex: str, budget: float) -> bool:
    return latex_width(latex) <= budget


def _chain(node: Node, ops: tuple[str, ...]) -> list[tuple[str, Node]]:
    """A chain of the same-strength operators ``ops`` as (operator, term) pairs, the first operator ``""``;
    the right operand is taken apart only where the operator is associative (``a - (b - c)`` keeps its brackets
    as one term)."""
    if not (isinstance(node, Binary) and node.op in ops):
        return [("", node)]
    right = node.right
    if node.op in ("and", "or", "+", "*") and isinstance(right, Binary) and right.op in ops and (
            node.op != "*" or right.op == "*"):
        tail = _chain(right, ops)
    else:
        tail = [("", right)]
    return [*_chain(node.left, ops), (node.op, tail[0][1]), *tail[1:]]


def _indent(lines: list[str], levels: int = 1) -> list[str]:
    return [r"\quad " * levels + line for line in lines]


def _with_last(lines: list[str], tail: str) -> list[str]:
    """``lines`` with ``tail`` added to the last."""
    return [*lines[:-1], lines[-1] + tail]


def _block(lines: list[str]) -> str:
    """Lines as one piece of maths (an array when there are several)."""
    return lines[0] if len(lines) == 1 else r"\begin{array}{l} " + r" \\ ".join(lines) + r" \end{array}"


def _join(left: list[str], glue: str, right: list[str]) -> list[str]:
    """``left glue right``: the right part starts on the left part's last line, its other lines indented."""
    return [*left[:-1], left[-1] + glue + right[0], *_indent(right[1:])]


def _pack(terms: list[list[str]], budget: float) -> list[str]:
    """Laid-out terms (each its lines, operators attached) set greedily onto lines of ``budget`` em; the
    lines after the first are indented."""
    lines: list[str] = []
    for term in terms:
        if not lines:
            lines = list(term)
            continue
        joined = lines[-1] + " " + term[0]
        if len(term) == 1 and _fits(joined, budget - (_INDENT_EM if len(lines) > 1 else 0.0)):
            lines[-1] = joined
        else:
            lines += _indent(term)
    return lines


def _wrapped_lines(node: Node, min_prec: int, budget: float) -> list[str]:
    r"""``node`` laid out, in brackets when it binds looser than ``min_prec``; brackets around several lines are
    plain ones (a ``\left(`` cannot span lines)."""
    if _prec(node) >= min_prec:
        return layout(node, budget)
    inner = layout(node, budget - 0.8)
    if len(inner) == 1:
        return [rf"\left({inner[0]}\right)"]
    return ["(" + inner[0], *inner[1:-1], inner[-1] + ")"]


_INFIX = re.compile(r"\{(\d+)\} (.+) \{(\d+)\}")  # a function template written as an operator: {0} op {1}


def _infix(node: Node) -> re.Match | None:
    """The operator form of a call whose function is written as an operator, else None."""
    if isinstance(node, Call) and (fn := FUNCTIONS.get(node.func)) is not None and len(node.args) == fn.arity:
        return _INFIX.fullmatch(fn.latex)
    return None
_ARGUMENTS = re.compile(r"\((\{\d+\}[^()]*)\)")  # a function template's bracketed arguments: ({1}, {2};\ {3} + {4})
_SEPARATOR = re.compile(r"(,\s*|;\\ )")


def _argument_list(template: str, args: tuple[Node, ...], budget: float) -> list[list[str]] | None:
    """The items of a function template's bracketed argument list (``name(a, b; c + d)_w``), each laid out as lines
    with its separator, the name and the bracket on the first, the closing bracket and what follows on the last;
    None when the template has no such list of two or more items."""
    found = _ARGUMENTS.search(template)
    if found is None:
        return None
    pieces = _SEPARATOR.split(found.group(1))
    items_text, separators = pieces[0::2], [*pieces[1::2], ""]
    if len(items_text) < 2:
        return None
    rendered = [to_latex(a) for a in args]
    items = []
    for text, separator in zip(items_text, separators, strict=True):
        last = list(re.finditer(r"\{(\d+)\}", text))[-1]  # its last argument laid out, what precedes it kept
        before, after = text[: last.start()].format(*rendered), text[last.end():].format(*rendered)
        lines = _wrapped_lines(args[int(last.group(1))], 0,
                               budget - latex_width(before))
        mark = separator.strip().removesuffix("\\")
        items.append([before + lines[0], *lines[1:-1], *([lines[-1]] if len(lines) > 1 else [])])
        items[-1][-1] += after + mark
    head = template[: found.start()].format(*rendered)
    tail = template[found.end():].format(*rendered)
    items[0] = [f"{head}({items[0][0]}", *items[0][1:]]
    items[-1] = [*items[-1][:-1], f"{items[-1][-1]}){tail}"]
    return items


def layout(node: Node, budget: float = LINE_EM) -> list[str]:
    """``node`` as lines of LaTeX, broken at its structure where one line would be wider than ``budget`` em
    (lines after the first indented)."""
    latex = to_latex(node)
    if _fits(latex, budget):
        return [latex]
    inner = budget - _INDENT_EM
    match node:
        case Binary(op="and" | "or" as op):
            parts = [_wrapped_lines(term, _PREC[op] + 1, inner) for _, term in _chain(node, (op,))]
            symbol = _SYMBOL[op]
            return _pack([p if k == len(parts) - 1 else [*p[:-1], f"{p[-1]} {symbol}"]
                          for k, p in enumerate(parts)], budget)
        case Binary(op="+" | "-" | "*" as op):
            ops = ("*",) if op == "*" else ("+", "-")
            terms = []
            for k, (sign, term) in enumerate(_chain(node, ops)):
                lines = _wrapped_lines(term, _PREC[op] + (0 if k == 0 or sign == "+" else 1), inner)
                terms.append(lines if k == 0 else [f"{_SYMBOL[sign]} {lines[0]}", *lines[1:]])
            return _pack(terms, budget)
        case Binary(op=op, left=left, right=right) if _PREC[op] == 4:  # a relation: break after it
            return _relation_lines(op, left, right, budget)
        case Binary(op="%", left=left, right=right):  # a wide divisor (a brace of cases) laid out on its own
            lhs = _wrapped_lines(left, _PREC["%"], inner)
            rhs = _wrapped_lines(right, _PREC["%"] + 1, max(inner - latex_width(lhs[-1]) - 2.3, inner / 2))
            return [*lhs[:-1], rf"{lhs[-1]} \bmod {_block(rhs)}"]
        case In(value=value, items=items) if len(items) > 1:
            last = len(items) - 1
            rendered = [to_latex(item) + ("," if k < last else r"\}") for k, item in enumerate(items)]
            return _pack([[rf"{_wrap(value, 5)} \in \{{{rendered[0]}"], *([r] for r in rendered[1:])], budget)
        case Call(func="select", args=(_, _, _)):
            return _select_lines(node, budget)
        case Call(func=func, args=args) if (fn := FUNCTIONS.get(func)) is not None and len(args) == fn.arity:
            return _call_lines(fn.latex, args, latex, budget)
        case Reduce() if (cond := counted(node)) is not None:
            # #{0 <= v < n | then the condition under it: the terms of an "and" in a column, as in a list
            parts = _conjuncts(cond)
            if len(parts) > 1:
                lines = [x for j, part in enumerate(parts) for x in _with_last(
                    _wrapped_lines(part, _PREC["and"] + 1, inner), r" \land" if j < len(parts) - 1 else "")]
            else:
                lines = condition_lines(cond, inner)
            return [_count_head(node), *_indent(_with_last(lines, r"\}"))]
        case Reduce(body=body):
            head = latex[: len(latex) - len(_wrap(body, 6))]  # the operator and its range
            beside = budget - latex_width(head)
            lines = _wrapped_lines(body, 6, beside) if beside >= budget / 3 else []
            if not lines or max(latex_width(x) for x in lines) > beside * 1.05:
                # the body does not fit beside the operator and its range: under them, as wide as the line allows
                return [head, *_indent(_wrapped_lines(body, 6, inner))]
            return [head + _block(lines)] if lines[0].startswith(r"\begin{cases}") else [head + lines[0], *lines[1:]]
        case Unary(op="not", operand=operand):
            lines = _wrapped_lines(operand, _UNARY_PREC["not"], budget - 0.8)
            return [r"\neg " + lines[0], *lines[1:]]
    return [latex]


def _relation_lines(op: str, left: Node, right: Node, budget: float) -> list[str]:
    """A relation too wide for ``budget``: broken after its symbol, the right side indented (a short right side
    stays on the line)."""
    inner = budget - _INDENT_EM
    lhs, symbol = _wrapped_lines(left, _PREC[op], budget), f" {_SYMBOL[op]}"
    rhs = _wrapped_lines(right, _PREC[op] + 1, inner)
    glued = f"{lhs[-1]}{symbol} {rhs[0]}"
    room = budget - (_INDENT_EM if len(lhs) > 1 else 0.0)
    short = len(rhs) == 1 and latex_width(rhs[0]) < _MIN_PART_EM
    if _fits(glued, room) or (short and (len(lhs) > 1 or _fits(lhs[0], room))):
        return _join(lhs, f"{symbol} ", rhs)  # a short right side stays on the line
    if short:  # ... unless it follows a left side that cannot break and is too wide already: under it
        return [*lhs, *_indent([f"{symbol.strip()} {rhs[0]}"])]
    return [*lhs[:-1], lhs[-1] + symbol, *_indent(rhs)]


def _select_lines(node: Node, budget: float) -> list[str]:
    """A chain of ``select`` too wide for ``budget`` as a brace of cases: values and conditions side by side,
    else each value with its condition under it."""
    inner = budget - _INDENT_EM
    rows = []
    while isinstance(node, Call) and node.func == "select" and len(node.args) == 3:
        cond, value, node = node.args
        rows.append((value, cond))
    values = [_block(layout(v, inner / 2)) for v, _ in rows]
    room = max(inner - max(latex_width(v) for v in values), inner / 2)
    cells = [f"{v} & {_block(condition_lines(c, room))}" for v, (_, c) in zip(values, rows, strict=True)]
    cells.append(f"{_block(layout(node, inner / 2))} & {word('otherwise')}")
    side_by_side = r"\begin{cases}" + r" \\ ".join(cells) + r"\end{cases}"
    if _fits(side_by_side, budget):
        return [side_by_side]
    # too wide for values and conditions side by side: each value, then its condition under it
    lead = rf"\quad {word('if')}\ "
    stacked = []
    for value, cond in [*rows, (node, None)]:
        shown = _block(layout(value, inner))
        said = rf"\quad {word('otherwise')}" if cond is None else lead + _block(
            condition_lines(cond, inner - _INDENT_EM - latex_width(lead)))
        stacked += [f"{shown} {said}"] if _fits(f"{shown} {said}", inner) else [shown, said]
    return [r"\begin{cases}" + r" \\ ".join(stacked) + r"\end{cases}"]


def _call_lines(template: str, args: tuple[Node, ...], latex: str, budget: float) -> list[str]:
    """A call of a known function (its LaTeX ``template``) too wide for ``budget``, as lines: its arguments
    listed, an operator form broken after its operator, or a too-wide argument set as a block inside the call."""
    inner = budget - _INDENT_EM
    listed = _argument_list(template, args, inner)
    if listed is not None:  # name(a, b; c, ...): the arguments set onto lines like a list
        return _pack(listed, budget)
    if infix := _INFIX.fullmatch(template):  # a cmp_mode b: broken after the operator, like a relation
        left, right = (args[int(infix.group(k))] for k in (1, 3))
        rendered = [to_latex(a) for a in args]
        lhs = _wrapped_lines(left, _ATOM, budget)
        return [*lhs[:-1], f"{lhs[-1]} {infix.group(2).format(*rendered)}",
                *_indent(_wrapped_lines(right, _ATOM, inner))]
    # an argument too wide for its share of the line becomes a block of lines inside the call
    share = max(inner / len(args), min(12.0, 0.6 * inner))
    whole = latex_width(latex)
    rendered = []
    for arg in args:
        text = to_latex(arg)
        room = max(inner - (whole - latex_width(text)), min(10.0, inner / 2))
        rendered.append(text if _fits(text, share) else _block(layout(arg, room)))
    return [template.format(*rendered)]


def condition_lines(node: Node, budget: float = LINE_EM) -> list[str]:
    """A condition as lines: one per alternative of a top-level ``or``; an ``and`` of several conjuncts one
    conjunct per line (a list of requirements reads best as a column); any line still too wide broken at its
    structure. A short condition stays one line."""
    lines: list[str] = []
    alternatives = _disjuncts(node)
    for k, alternative in enumerate(alternatives):
        parts = _conjuncts(alternative)
        tail = r" \lor" if k < len(alternatives) - 1 else ""
        level = 0 if k == 0 else 1
        if len(parts) < _CONJUNCTS_PER_LINE:
            body = _wrapped_lines(alternative, _PREC["or"] + 1, budget - level * _INDENT_EM)
            body[-1] += tail
            lines += _indent(body, level)
            continue
        for j, part in enumerate(parts):
            first = level + (1 if j else 0)
            body = _wrapped_lines(part, _PREC["and"] + 1, budget - first * _INDENT_EM)
            body[-1] += r" \land" if j < len(parts) - 1 else tail
            lines += _indent(body, first)
    return lines


def condition_latex(node: Node, budget: float = LINE_EM) -> str:
    """A condition laid out to stay narrow (``condition_lines``), as one piece of maths."""
    return _block(condition_lines(node, budget))


def _guard_lines(key: str, node: Node, line: float = LINE_EM) -> list[str]:
    """``if c1 and c2 and c3`` under a statement: one conjunct per line when there are several."""
    lead = rf"\quad {word(key)}\ "
    budget = line - 1.0 - latex_width(word(key)) - 0.3
    parts = _conjuncts(node)
    if len(parts) < _CONJUNCTS_PER_LINE:
        body = layout(node, budget)
        return [lead + body[0], *_indent(body[1:], 2)]
    lines = []
    for j, part in enumerate(parts):
        body = _wrapped_lines(part, _PREC["and"] + 1, budget)
        body[-1] += r" \land" if j < len(parts) - 1 else ""
        lines += [(lead if j == 0 else r"\qquad ") + body[0], *_indent(body[1:], 3)]
    return lines


def _defined(name: str, node: Node, indent: int, line: float, free: Iterator[str],
             named: list[tuple[str, Node]]) -> list[str]:
    """``name = node``, the value broken into lines if it is too wide (parts named if need be, see ``_fitted``)."""
    head = identifier(name)
    budget = max(line - indent * _INDENT_EM - latex_width(head) - 1.3, line / 2)
    if not _fits(to_latex(node), budget):
        node = _hoisted_parts(node, free, named, wide=line * _WIDE_INDEX)
    return _join([head], " = ", _fitted(node, budget, free, named))


def _definitions(named: list[tuple[str, Node]], line: float, free: Iterator[str]) -> list[str]:
    """The named parts, each on lines of its own under what uses them (naming parts of their own if need be)."""
    lines: list[str] = []
    k = 0
    while k < len(named):
        lines += _indent(_defined(*named[k], 1, line, free, named))
        k += 1
    return lines


def statement_latex(stmt: Statement, line: float = LINE_EM) -> str:
    """``target = value``, then on lines of their own the index ranges, the merge of repeated targets, the
    guard (``if``) and the element filter (``where``), so that a long statement keeps its conditions in view;
    a value or condition still too wide is broken at its structure."""
    target, named = _hoisted_indices(stmt, line)
    head = to_latex(target)
    budget = max(line - latex_width(head) - 1.3, line / 2)
    shown = stmt.value
    used = _names((stmt.target, stmt.value, stmt.domain, stmt.when, stmt.where)) | {n for n, _ in named}
    free = (n for n in _PART_NAMES if n not in used)
    if not _fits(to_latex(shown), budget):
        shown = _hoisted_parts(shown, free, named, wide=line * _WIDE_INDEX)
    lines = _join([head], " = ", _fitted(shown, budget, free, named))
    lines += _definitions(named, line, free)
    if stmt.domain:
        ranges = [_join([f"0 \\le {identifier(v)}"], " < ",
                        layout(b, max(line - _INDENT_EM - latex_width(f"0 \\le {identifier(v)} < "), line / 2)))
                  for v, b in stmt.domain]
        one = r"\quad " + ", ".join(r[0] for r in ranges)
        if all(len(r) == 1 for r in ranges) and _fits(one, line):
            lines.append(one)
        else:  # one range per line
            lines += [x for r in ranges for x in _indent(r)]
    if stmt.combine in ("first", "last"):
        lines.append(rf"\quad {word(stmt.combine + '_wins')}")
    elif stmt.combine:
        lines.append(rf"\quad {word('combined', stmt.combine)}")
    if stmt.when is not None:
        lines += _guard_lines("if", stmt.when, line)
    if stmt.where is not None:  # element-wise filter: only these points are written
        lines += _guard_lines("where", stmt.where, line)
    return _block(lines)


def bindings_latex(bindings: list[tuple[str, Node]], line: float = LINE_EM, context: tuple = ()) -> list[str]:
    """``let`` bindings (``R = src.valid_row``), each as one piece of maths: a long value broken into lines, its
    choices and parts too wide for a line named on lines below. The names given to parts are used by none of the
    bindings, the syntax trees in ``context`` (the statement or rule they belong to) or the parts a statement
    names itself (``statement_latex``, which takes the first of the same names)."""
    taken = _names((tuple(node for _, node in bindings), context)) | {name for name, _ in bindings}
    free = (n for n in _PART_NAMES[::-1] if n not in taken)
    out = []
    for name, node in bindings:
        named: list[tuple[str, Node]] = []
        out.append(_block(_defined(name, node, 0, line, free, named) + _definitions(named, line, free)))
    return out


def binding_latex(name: str, node: Node, line: float = LINE_EM) -> str:
    """One ``let`` binding (see ``bindings_latex``)."""
    return bindings_latex([(name, node)], line)[0]


def expression_latex(node: Node, budget: float = LINE_EM) -> str:
    """Any expression laid out to stay within ``budget`` em (``layout``), as one piece of maths."""
    return _block(layout(node, budget))
