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


def statement_latex(stmt: Statement) -> str:
    """``target = value, \\quad 0 <= v < bound, ...`` (plus the guard and the element filter, if any)."""
    text = f"{to_latex(stmt.target)} = {to_latex(stmt.value)}"
    if stmt.domain:
        ranges = ", ".join(f"0 \\le {identifier(v)} < {to_latex(b)}" for v, b in stmt.domain)
        text += f", \\quad {ranges}"
    if stmt.where is not None:  # element-wise filter: only these points are written
        text += rf" \quad \text{{where }} {to_latex(stmt.where)}"
    if stmt.combine in ("first", "last"):
        text += rf" \quad \text{{({stmt.combine} write in index order wins)}}"
    elif stmt.combine:
        text += rf" \quad \text{{(combined by {stmt.combine}, in index order)}}"
    if stmt.when is not None:
        text += rf" \quad \text{{if }} {to_latex(stmt.when)}"
    if stmt.where is not None:
        text += rf" \quad \text{{where }} {to_latex(stmt.where)}"
    return text


def binding_latex(name: str, node: Node) -> str:
    """A ``let`` binding: ``R = src.valid_row``."""
    return f"{identifier(name)} = {to_latex(node)}"
