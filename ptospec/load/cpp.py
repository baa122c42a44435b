"""A mode's ``cpp``: the C++ call, its arrays, types and ConvTile argument, each operand passed once."""

from __future__ import annotations

from ..expr.ast import Name, walk
from ..model import CPP_LITERAL, CppArray, CppConvTile, CppType, Operand
from .context import OpContext


def build_cpp(ctx: OpContext, mp: tuple, m: dict, operands: tuple[Operand, ...]) -> dict:
    """The Mode fields of the ``cpp`` section (``cpp_name``, ``cpp_args``, ...), checked."""
    cpp = m["cpp"]
    roles = {o.name: o.role for o in operands}
    kinds = {o.name: o.kind for o in operands}
    arrays = tuple(CppArray(a, v["type"], v["element"], tuple(v["of"])) for a, v in cpp.get("arrays", {}).items())
    for arr in arrays:
        if arr.name in roles or arr.name not in cpp["args"]:
            ctx.add((*mp, "cpp", "arrays", arr.name), f"array {arr.name!r} must be an argument of cpp.args and not "
                    "an operand's name", "op.cpp")
        bad = [n for n in arr.members if roles.get(n) != "scalar"]
        if bad:
            ctx.add((*mp, "cpp", "arrays", arr.name), f"array members must be scalar operands, not {bad}", "op.cpp")
    conv = _conv_tile(ctx, mp, cpp.get("conv_tile"), roles, kinds)
    types = tuple(CppType(a, v["template"], tuple(v["of"])) for a, v in cpp.get("types", {}).items())
    for t in types:
        bad = [n for n in t.members if roles.get(n) != "attr"]
        if bad or t.name in roles:
            ctx.add((*mp, "cpp", "types", t.name), f"a type's arguments must be attribute operands and its name no "
                    f"operand's ({bad or t.name})", "op.cpp")
    members = {a.name: list(a.members) for a in arrays}
    if conv is not None:
        members[conv.name] = list(conv.members)
    named = [n for a in cpp["args"] if not CPP_LITERAL.fullmatch(a)
             for n in members.get(a, [a.removeprefix("&")])]  # &x: the operand x passed by address
    template_attrs = [a for a in cpp.get("template", []) if roles.get(a) == "attr"]
    template_attrs += [n for t in types for n in t.members]
    if sorted(named + template_attrs) != sorted(o.name for o in operands):
        ctx.add((*mp, "cpp", "args"), "cpp.args must list every operand exactly once (other entries must be C++ "
                "literals such as true or 0; an attribute may be a template argument instead)", "op.cpp")
    return dict(cpp_name=cpp["name"], cpp_args=tuple(cpp["args"]), cpp_signature=cpp["signature"],
                cpp_template=tuple(cpp.get("template", ())), cpp_arrays=arrays, cpp_types=types, cpp_conv_tile=conv)


def _conv_tile(ctx: OpContext, mp, d: dict | None, roles: dict[str, str], kinds: dict[str, str]) -> CppConvTile | None:
    """``cpp.conv_tile``: a ConvTile argument built from a Mat tile operand and setter calls."""
    if d is None:
        return None
    where = (*mp, "cpp", "conv_tile")
    if d["name"] in roles:
        ctx.add(where, f"conv_tile {d['name']!r} must not be an operand's name", "op.cpp")
    if roles.get(d["data"]) != "in" or kinds.get(d["data"]) == "global":
        ctx.add(where, f"conv_tile data {d['data']!r} must be an input tile operand", "op.cpp")
    dims = []
    for k, text in enumerate(d["dims"]):
        node = ctx.parse((*where, "dims", k), text)
        if node is not None:
            ctx.check_names((*where, "dims", k), node, set(roles) | ctx.let_names, with_isa=False)
            dims.append(node)
    calls = []
    for k, call in enumerate(d.get("set", ())):
        for arg in call[1:]:
            if isinstance(arg, str) and roles.get(arg) not in ("scalar", "attr"):
                ctx.add((*where, "set", k), f"setter argument {arg!r} is not a scalar or attribute operand", "op.cpp")
        calls.append((call[0], tuple(call[1:])))
    named = [n.id for node in dims for n in walk(node) if isinstance(n, Name) and n.id in roles]
    return CppConvTile(d["name"], d["data"], tuple(dims), tuple(d["dims"]), tuple(calls),
                       tuple(dict.fromkeys(named)))
