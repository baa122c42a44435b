"""Parsing a spec's expressions, and the names each kind of expression may read."""

from __future__ import annotations

from ..errors import ExprError
from ..expr.ast import Attr, Call, Index, Name, Num, Reduce, walk
from ..expr.functions import FUNCTIONS
from ..expr.parser import parse_expr
from ..located import Located
from ..model import Isa
from ..tile import GLOBAL_RANK, GlobalDesc
from .problems import Issues

# Operand fields that may be known only at run time: valid shapes, and a global view's shape, strides and place.
RUNTIME_FIELDS = frozenset({"valid_row", "valid_col", "offset", "size", "span",
                            *(f"dim{k}" for k in range(GLOBAL_RANK)), *(f"stride{k}" for k in range(GLOBAL_RANK))})


def parse(src: Located, path, text: str, issues: Issues, parser=parse_expr):
    """``parser(text)``, or None with the syntax error added to ``issues``."""
    try:
        return parser(text)
    except ExprError as exc:
        issues.add(src, path, exc.message, exc.rule or "expr.syntax")
        return None


def lets(src: Located, path, mapping: dict[str, str], issues: Issues):
    """A ``let`` mapping as ``(name, node, text)`` triples (the ones that parse)."""
    out = []
    for name, text in (mapping or {}).items():
        try:
            out.append((name, parse_expr(text), text))
        except ExprError as exc:
            issues.add(src, (*path, name), f"let {name}: {exc.message}", exc.rule or "expr.syntax")
    return tuple(out)


def check_names(src, path, node, known: set[str], isa: Isa | None, issues: Issues,
                tiles: dict[str, str] | None = None) -> None:
    """A check or a field expression reads ``known`` names, the ISA's constants and state, and functions;
    ``tiles``: the operands among ``known`` that stand for a tile or a view (name -> kind: tile, global)."""
    consts: set[str] = set()
    if isa is not None:
        consts = set(isa.tile_types) | set(isa.blayouts) | set(isa.slayouts) | set(isa.pad_values)
        consts |= set(isa.compact_modes)
        consts |= set(isa.layouts) | set(isa.global_layouts) | set(isa.dtypes)
        consts |= {v for e in isa.enums.values() for v in e.values}
    for n in walk(node):
        if isinstance(n, Name) and n.id not in known and n.id not in consts:
            issues.add(src, path, f"unknown name {n.id!r}", "expr.unknown-name")
        elif isinstance(n, Attr) and isa is not None and n.obj in isa.state and n.obj not in known:
            if n.name not in isa.state[n.obj].fields:
                issues.add(src, path, f"state register {n.obj!r} has no field {n.name!r}", "op.state")
        elif isinstance(n, Attr) and n.obj != "profile" and n.obj not in known:
            issues.add(src, path, f"{n.obj!r} is not an operand", "expr.unknown-name")
        elif isinstance(n, Call) and n.func not in FUNCTIONS:
            issues.add(src, path, f"unknown function {n.func!r}", "expr.unknown-function")
        elif isinstance(n, Call):
            for message in call_argument_problems(n, known, isa, tiles or {}):
                issues.add(src, path, message, "expr.type")
        elif isinstance(n, Reduce | Index):
            issues.add(src, path, "tile elements and reductions belong in semantics, not in checks", "expr.context")


def call_argument_problems(n: Call, known: set[str], isa: Isa | None, tiles: dict[str, str]) -> list[str]:
    """What is wrong with the arguments of a call in a check, before any evaluation: a type argument that is
    not a dtype of the database (nor a type variable or let), a tile argument that is not a tile operand, a
    tile operand where a value belongs, a count argument that is not an integer literal in its bounds."""
    fn, problems = FUNCTIONS[n.func], []
    for k, arg in enumerate(n.args):
        name = arg.id if isinstance(arg, Name) else None
        if k in fn.tile_args:
            if name is None or (tiles and tiles.get(name) != "tile") or (not tiles and name not in known):
                problems.append(f"argument {k + 1} of {n.func}() must name a tile operand")
        elif name is not None and name in tiles and not fn.type_level:
            problems.append(f"argument {k + 1} of {n.func}() is a value, not the operand {name}")
        if k in fn.dtype_args and not (name is not None and (name in known or isa is None or name in isa.dtypes)):
            dtypes = f" ({', '.join(isa.dtypes)})" if isa is not None else ""
            problems.append(f"argument {k + 1} of {n.func}() must be a dtype of the database{dtypes}")
    for k, low, high in fn.literal_args:
        arg = n.args[k] if k < len(n.args) else None
        if not (isinstance(arg, Num) and type(arg.value) is int and low <= arg.value <= high):
            problems.append(f"argument {k + 1} of {n.func}() must be an integer literal from {low} to {high}")
    return problems


def check_tile_rule_names(src: Located, path, node, d: dict, issues: Issues, var: str = "t") -> None:
    """A tile rule may read ``t.<field>`` (a global rule ``g.<field>``), ``profile.<constant>``, the ISA's
    constants and its functions."""
    from ..expr.evaluate import TILE_FIELDS

    fields = TILE_FIELDS if var == "t" else GlobalDesc.FIELDS
    consts = {*d["tile_types"], *d["blayouts"], *d["slayouts"], *d["pad_values"], *d["layouts"], *d["dtypes"]}
    consts |= {*d["compact_modes"]["values"]}
    consts |= {*d.get("global_layouts", {})}
    consts |= {v for e in d.get("enums", {}).values() for v in e["values"]}
    profile_constants = {c for p in d["profiles"].values() for c in p["constants"]}
    for n in walk(node):
        if isinstance(n, Name) and n.id not in consts:
            issues.add(src, path, f"unknown name {n.id!r}", "expr.unknown-name")
        elif isinstance(n, Attr) and not ((n.obj == var and n.name in fields)
                                          or (n.obj == "profile" and n.name in profile_constants)):
            issues.add(src, path, f"{n.obj}.{n.name} is neither a field of the operand {var} nor a profile "
                       "constant", "expr.unknown-name")
        elif isinstance(n, Call) and n.func not in FUNCTIONS:
            issues.add(src, path, f"unknown function {n.func!r}", "expr.unknown-function")
        elif isinstance(n, Reduce | Index):
            issues.add(src, path, "tile elements and reductions have no place in a tile rule", "expr.context")


def referenced_tiles(nodes) -> list[str]:
    """The operands whose fields the expressions read, in order of first use."""
    names: list[str] = []
    for node in nodes:
        for n in walk(node):
            if isinstance(n, Attr) and n.obj != "profile" and n.obj not in names:
                names.append(n.obj)
    return names


def phase(nodes: list, bound_lets) -> str:
    """``runtime`` when the check reads a value known only at run time, directly or through its lets."""
    bound = {name: node for name, node, _ in bound_lets}
    pending, seen = list(nodes), set()
    while pending:
        for n in walk(pending.pop()):
            if isinstance(n, Attr) and n.name in RUNTIME_FIELDS:
                return "runtime"
            if isinstance(n, Name) and n.id in bound and n.id not in seen:
                seen.add(n.id)
                pending.append(bound[n.id])
    return "static"
