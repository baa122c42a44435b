"""Instruction kinds: the shared shape of a group of instructions, written once.

A kind file (``specs/kinds/<name>.yaml``) holds a partial op document (``body``) in which
``{{param}}`` placeholders stand for what differs between its instructions.  An op file
that says ``kind: <name>`` supplies ``params`` and states only what is particular to it; the
loader expands the kind and merges the op file over it:

* mappings merge key by key, recursively;
* lists of mappings with an ``id`` (rules, differences) merge by id, entry by entry as
  mappings (so ``{id: X, sources: [...]}`` changes only X's sources); an entry
  ``{id: X, omit: true}`` in the op file removes the kind's entry X;
* any other value from the op file replaces the kind's.

Every instruction gets the implicit params ``op`` (``tadd``) and ``OP`` (``TADD``).  A param's
value is a text or a text per language (``{en: ..., zh: ...}``, the schema says so).  A string
that is exactly one placeholder takes the param's value as it is (a mapping stays a mapping);
elsewhere the value is substituted as text.  A param declared with ``args: [a, b]`` is
an expression over those names, used as ``{{fn(src0[i, j], src1[i, 0])}}``: each name is
replaced, token by token, by the parenthesised argument.  Nothing is evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .errors import ExprError, SpecError
from .expr.parser import parse_expr
from .located import Located, PathKey
from .model import Text
from .textsplit import split_top_level

SIMPLE_ARG = re.compile(r"[A-Za-z_][\w.]*(\[[^\[\]]*\])?|\d+(\.\d*)?")  # needs no parentheses
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\(([^{}]*?)\))?\s*\}\}")  # [^{}]: linear time


@dataclass(frozen=True)
class Param:
    name: str
    text: Text
    default: Any = None
    required: bool = True
    args: tuple[str, ...] = ()  # an expression param over these names


@dataclass(frozen=True)
class Kind:
    name: str
    title: Text
    description: Text
    params: dict[str, Param]
    body: Located  # the partial op document, positions in the kind file


def expand(op: Located, kinds: dict[str, Kind]) -> Located:
    """The op document with its kind expanded underneath it (unchanged when it names no kind)."""
    d = op.data
    if not isinstance(d, dict) or "kind" not in d:
        return op
    name = d["kind"]
    kind = kinds.get(name) if isinstance(name, str) else None
    if kind is None:
        known = ", ".join(sorted(kinds)) or "none"
        raise SpecError(f"unknown kind {name!r} (known: {known})", where=op.where(("kind",)), rule="op.kind")
    given = d.get("params") or {}
    if not isinstance(given, dict):
        raise SpecError("params must be a mapping", where=op.where(("params",)), rule="op.params")
    for p in given:
        if p not in kind.params:
            raise SpecError(f"kind {name} has no param {p!r} (its params: {', '.join(kind.params) or 'none'})",
                            where=op.where(("params", p)), rule="op.params")
    values: dict[str, Any] = {}
    for p in kind.params.values():
        if p.name in given:
            values[p.name] = given[p.name]
        elif p.required:
            raise SpecError(f"kind {name} needs param {p.name!r}: {p.text['en']}", where=op.where(("kind",)),
                            rule="op.params")
        else:
            values[p.name] = p.default
    if isinstance(d.get("op"), str):
        values.setdefault("op", d["op"])
        values.setdefault("OP", d["op"].upper())
    for p in kind.params.values():
        if p.args and not isinstance(values[p.name], str):
            raise SpecError(f"param {p.name!r} must be an expression over {', '.join(p.args)}",
                            where=op.where(("params", p.name)), rule="op.params")
        if p.args:
            try:
                parse_expr(values[p.name])
            except ExprError as exc:
                raise SpecError(f"param {p.name}: {exc.message}", where=op.where(("params", p.name)),
                                rule=exc.rule) from None
    arg_names = {p.name: p.args for p in kind.params.values()}
    body = _substitute(kind.body, (), kind.body.data, values, arg_names)
    origins: dict[PathKey, tuple[str, int]] = {}
    merged = _merge(body, d, (), (), kind.body, op, origins)
    return Located(merged, op.file, {k: line for k, (_, line) in origins.items()},
                   {k: f for k, (f, _) in origins.items() if f != op.file})


def _substitute(src: Located, path: PathKey, value: Any, values: dict[str, Any],
                arg_names: dict[str, tuple[str, ...]]) -> Any:
    if isinstance(value, dict):
        return {k: _substitute(src, (*path, k), v, values, arg_names) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(src, (*path, i), v, values, arg_names) for i, v in enumerate(value)]
    if not isinstance(value, str):
        return value

    def lookup(m: re.Match) -> Any:
        name, call = m.group(1), m.group(2)
        if name not in values:
            raise SpecError(f"unknown placeholder {{{{{name}}}}}", where=src.where(path), rule="kind.placeholder")
        params = arg_names.get(name, ())
        if (call is None) != (not params):
            usage = f"{name}({', '.join(params)})" if params else name
            raise SpecError(f"placeholder {m.group(0)} must be written {{{{{usage}}}}}", where=src.where(path),
                            rule="kind.placeholder")
        if call is None:
            return values[name]
        args = [a for a in split_top_level(call, "([") if a]
        if len(args) != len(params):
            raise SpecError(f"{m.group(0)} passes {len(args)} argument(s), {name} takes {len(params)}",
                            where=src.where(path), rule="kind.placeholder")
        return _apply(values[name], dict(zip(params, args, strict=True)))

    whole = PLACEHOLDER.fullmatch(value.strip())
    if whole:
        return lookup(whole)
    return PLACEHOLDER.sub(lambda m: str(lookup(m)), value)


def _apply(expression: str, bindings: dict[str, str]) -> str:
    """``expression`` with each free name in ``bindings`` replaced by its argument text."""
    from .expr.parser import tokenize

    out: list[str] = []
    pos = 0
    previous = ""
    for tok in tokenize(expression)[:-1]:
        if tok.kind == "name" and tok.text in bindings and previous != ".":
            start = tok.col - 1
            arg = bindings[tok.text]
            out.append(expression[pos:start])
            out.append(arg if SIMPLE_ARG.fullmatch(arg) else f"({arg})")
            pos = start + len(tok.text)
        previous = tok.text
    out.append(expression[pos:])
    return "".join(out)


def _merge(base: Any, over: Any, bpath: PathKey, opath: PathKey, bsrc: Located, osrc: Located,
           origins: dict[PathKey, tuple[str, int]], out_path: PathKey = ()) -> Any:
    """Merge ``over`` (op file) onto ``base`` (expanded kind body); record where each value came from."""
    if isinstance(base, dict) and isinstance(over, dict):
        origins[out_path] = (osrc.file, osrc.line(opath))
        out: dict[str, Any] = {}
        for k in [*base, *(k for k in over if k not in base)]:
            if k in over and k in base:
                out[k] = _merge(base[k], over[k], (*bpath, k), (*opath, k), bsrc, osrc, origins, (*out_path, k))
            elif k in over:
                out[k] = over[k]
                _record(over[k], (*opath, k), osrc, origins, (*out_path, k))
            else:
                out[k] = base[k]
                _record(base[k], (*bpath, k), bsrc, origins, (*out_path, k))
        return out
    if _by_id(base) and _by_id(over):
        origins[out_path] = (osrc.file, osrc.line(opath))
        over_ids: dict[Any, tuple[int, Any]] = {}
        for i, e in enumerate(over):
            if e["id"] in over_ids:
                raise SpecError(f"id {e['id']!r} appears twice", where=osrc.where((*opath, i)), rule="op.duplicate-id")
            over_ids[e["id"]] = (i, e)
        out_list: list[Any] = []
        for i, e in enumerate(base):
            if e["id"] in over_ids:
                j, o = over_ids[e["id"]]
                if o.get("omit") is True:
                    continue
                out_list.append(_merge(e, o, (*bpath, i), (*opath, j), bsrc, osrc, origins,
                                       (*out_path, len(out_list))))
            else:
                _record(e, (*bpath, i), bsrc, origins, (*out_path, len(out_list)))
                out_list.append(e)
        base_ids = {e["id"] for e in base}
        for j, o in enumerate(over):
            if o["id"] not in base_ids:
                if o.get("omit") is True:
                    raise SpecError(f"omit names {o['id']!r}, which the kind does not define",
                                    where=osrc.where((*opath, j)), rule="op.omit")
                _record(o, (*opath, j), osrc, origins, (*out_path, len(out_list)))
                out_list.append(o)
        return out_list
    _record(over, opath, osrc, origins, out_path)
    return over


def _by_id(value: Any) -> bool:
    """A list merged entry by entry: every entry a mapping with a text ``id`` (anything else is replaced whole,
    and the schema judges it)."""
    return isinstance(value, list) and all(isinstance(e, dict) and isinstance(e.get("id"), str) for e in value)


def _record(value: Any, path: PathKey, src: Located, origins: dict[PathKey, tuple[str, int]],
            out_path: PathKey) -> None:
    origins[out_path] = (src.file, src.line(path))
    if isinstance(value, dict):
        for k, v in value.items():
            _record(v, (*path, k), src, origins, (*out_path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _record(v, (*path, i), src, origins, (*out_path, i))
