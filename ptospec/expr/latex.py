"""Render expression-language syntax trees as LaTeX.

The site shows semantics and checks from the very ``Statement``/``Node`` objects
the executor and validator run; function and reduction spellings come from the
templates in ``functions.py`` so a new function needs no change here.
"""

from __future__ import annotations

from .ast import Attr, Binary, Call, In, Index, Name, Node, Num, Reduce, Statement, Unary
from .functions import FUNCTIONS, REDUCTIONS

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


def _prec(node: Node) -> int:
    match node:
        case Binary(op=op):
            return _PREC[op]
        case Unary(op=op):
            return _UNARY_PREC[op]
        case In():
            return 4
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


def to_latex(node: Node) -> str:
    """LaTeX for one expression node."""
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


def _condition_lines(key: str, node: Node) -> list[str]:
    """``if c1 and c2 and c3`` as lines: one conjunct each when there are several, else one line."""
    parts = _conjuncts(node)
    if len(parts) < _CONJUNCTS_PER_LINE:
        return [rf"\quad {word(key)}\ {to_latex(node)}"]
    rendered = [_wrap(p, _PREC["and"] + 1) for p in parts]
    first = rf"\quad {word(key)}\ {rendered[0]} \land"
    middle = [rf"\qquad {r} \land" for r in rendered[1:-1]]
    return [first, *middle, rf"\qquad {rendered[-1]}"]


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


def _hoisted_indices(stmt: Statement) -> tuple[Index, list[tuple[str, Node]]]:
    """The target with each index that is a choice (``select``) replaced by a fresh name, and those names
    with their choices: a brace of cases reads better on a line of its own than inside a subscript."""
    if not any(isinstance(i, Call) and i.func == "select" for i in stmt.target.indices):
        return stmt.target, []
    used = _names((stmt.target, stmt.value, stmt.domain, stmt.when, stmt.where))
    free = (n for n in ("k", "l", "m", "n", "p", "q") if n not in used)
    named: list[tuple[str, Node]] = []
    indices = []
    for index in stmt.target.indices:
        if isinstance(index, Call) and index.func == "select" and (name := next(free, None)):
            named.append((name, index))
            indices.append(Name(name))
        else:
            indices.append(index)
    return Index(stmt.target.base, tuple(indices), stmt.target.view), named


def _disjuncts(node: Node) -> list[Node]:
    if isinstance(node, Binary) and node.op == "or":
        return _disjuncts(node.left) + _disjuncts(node.right)
    return [node]


def condition_latex(node: Node) -> str:
    """A condition laid out to stay narrow: one line per alternative of a top-level ``or``, and an ``and`` of
    several conjuncts one conjunct per line; a short condition stays one line."""
    lines: list[str] = []
    alternatives = _disjuncts(node)
    for k, alternative in enumerate(alternatives):
        parts = _conjuncts(alternative)
        tail = r" \lor" if k < len(alternatives) - 1 else ""
        indent = "" if k == 0 else r"\quad "
        if len(parts) < _CONJUNCTS_PER_LINE:
            lines.append(indent + _wrap(alternative, _PREC["or"] + 1) + tail)
            continue
        rendered = [_wrap(p, _PREC["and"] + 1) for p in parts]
        lines += [indent + (r"\quad " if j else "") + r + (r" \land" if j < len(rendered) - 1 else tail)
                  for j, r in enumerate(rendered)]
    if len(lines) == 1:
        return lines[0]
    return r"\begin{array}{l} " + r" \\ ".join(lines) + r" \end{array}"


def statement_latex(stmt: Statement) -> str:
    """``target = value``, then on lines of their own the index ranges, the merge of repeated targets, the
    guard (``if``) and the element filter (``where``), so that a long statement keeps its conditions in view."""
    target, named = _hoisted_indices(stmt)
    lines = [f"{to_latex(target)} = {to_latex(stmt.value)}"]
    lines += [rf"\quad {identifier(name)} = {to_latex(node)}" for name, node in named]
    if stmt.domain:
        lines.append(r"\quad " + ", ".join(f"0 \\le {identifier(v)} < {to_latex(b)}" for v, b in stmt.domain))
    if stmt.combine in ("first", "last"):
        lines.append(rf"\quad {word(stmt.combine + '_wins')}")
    elif stmt.combine:
        lines.append(rf"\quad {word('combined', stmt.combine)}")
    if stmt.when is not None:
        lines += _condition_lines("if", stmt.when)
    if stmt.where is not None:  # element-wise filter: only these points are written
        lines += _condition_lines("where", stmt.where)
    if len(lines) == 1:
        return lines[0]
    return r"\begin{array}{l} " + r" \\ ".join(lines) + r" \end{array}"


def binding_latex(name: str, node: Node) -> str:
    """A ``let`` binding: ``R = src.valid_row``."""
    return f"{identifier(name)} = {to_latex(node)}"
