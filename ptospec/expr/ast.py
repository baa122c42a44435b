"""Syntax tree of the spec expression language (frozen, hashable)."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Num:
    value: int | float


@dataclass(frozen=True)
class Name:
    id: str


@dataclass(frozen=True)
class Attr:
    """``obj.name`` — a tile field (``src.valid_row``) or a profile constant."""

    obj: str
    name: str


@dataclass(frozen=True)
class Index:
    """``tile[row, col]``: element access with index expressions."""

    base: str
    indices: tuple[Node, ...]
    view: str = ""  # "bit": the tile's packed bits; "byte": its storage bytes; "word": its 64-bit words;
    # "flat": a global's buffer


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Reduce:
    """``func(var < bound: body)``, e.g. ``argmax(i < R: src[i, j])``."""

    func: str
    var: str
    bound: Node
    body: Node


@dataclass(frozen=True)
class Unary:
    op: str  # "-" or "not"
    operand: Node


@dataclass(frozen=True)
class Binary:
    op: str  # + - * / // % ** == != < <= > >= and or
    left: Node
    right: Node


@dataclass(frozen=True)
class In:
    """``value in [a, b, c]``."""

    value: Node
    items: tuple[Node, ...]


Node = Num | Name | Attr | Index | Call | Reduce | Unary | Binary | In


@dataclass(frozen=True)
class Statement:
    """``target[r, c] = value  for v < bound, ...``.

    Free index variables of the target without a ``for`` clause range over the
    target tile's valid rows (first position) or valid columns (second position).
    """

    target: Index
    value: Node
    domain: tuple[tuple[str, Node], ...]
    text: str
    when: Node | None = None  # the statement only runs when this holds
    when_text: str = ""
    writes: str = "valid"  # "valid": inside the target's valid region only; "tile": anywhere in the tile
    reads: str = "valid"  # "valid": sources only inside their valid regions; "tile": anywhere in their tiles
    combine: str = ""  # "", "add", "max", "min", "first", "last": how repeated targets merge, in index order
    where: Node | None = None  # element-wise: only the points where this holds are written
    where_text: str = ""
    lets: tuple[tuple[str, Node, str], ...] = ()  # element-wise names (name, expression, text), in order

    def expanded(self) -> Statement:
        """The statement with its ``lets`` substituted (later names may use earlier ones)."""
        if not self.lets:
            return self
        bound: dict[str, Node] = {}
        for name, node, _text in self.lets:
            bound[name] = substitute(node, bound)
        target = substitute(self.target, bound)
        assert isinstance(target, Index)
        return replace(self, target=target, value=substitute(self.value, bound),
                       domain=tuple((v, substitute(b, bound)) for v, b in self.domain),
                       where=None if self.where is None else substitute(self.where, bound), lets=())


def children(node: Node) -> tuple[Node, ...]:
    """The nodes directly below ``node``, in source order."""
    match node:
        case Index(indices=idx):
            return idx
        case Call(args=args):
            return args
        case Reduce(bound=b, body=body):
            return (b, body)
        case Unary(operand=o):
            return (o,)
        case Binary(left=a, right=b):
            return (a, b)
        case In(value=v, items=items):
            return (v, *items)
    return ()


def walk(node: Node):
    """Yield ``node`` and every node below it (depth first, in source order; no recursion)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(children(n)))


def substitute(node: Node, bound: dict[str, Node]) -> Node:
    """``node`` with every ``Name`` in ``bound`` replaced by its expression."""
    if not bound:
        return node
    match node:
        case Name(id=name) if name in bound:
            return bound[name]
        case Index(base=base, indices=idx, view=view):
            return Index(base, tuple(substitute(i, bound) for i in idx), view)
        case Call(func=func, args=args):
            return Call(func, tuple(substitute(a, bound) for a in args))
        case Reduce(func=func, var=var, bound=b, body=body):
            inner = {k: v for k, v in bound.items() if k != var}
            return Reduce(func, var, substitute(b, bound), substitute(body, inner))
        case Unary(op=op, operand=o):
            return Unary(op, substitute(o, bound))
        case Binary(op=op, left=a, right=b):
            return Binary(op, substitute(a, bound), substitute(b, bound))
        case In(value=v, items=items):
            return In(substitute(v, bound), tuple(substitute(i, bound) for i in items))
    return node
