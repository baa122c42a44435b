"""The checks the assembler makes on a whole module (``module_checks`` of specs/program.yaml): entry
functions return nothing, no call is recursive, the build level agrees with how tiles are placed, and the
peer kernels of a pipe agree on its split.  Each computes its entry's values from the module's statements
and reports the rules they break (``Walker.program_rules``)."""

from __future__ import annotations

from .lexer import int_literal
from .syntax import Operation, Program
from .walker import Walker, functions

DIRECTIONS = {"c2v": 1, "v2c": 2}  # the dir_mask bit of each direction


def check_module(w: Walker, program: Program, level: int | None, insert_sync: bool = False) -> None:
    """Report the module-level rules ``program`` breaks (``level``: ptoas --pto-level, None when not given;
    ``insert_sync``: ptoas --enable-insert-sync)."""
    if not w.spec.module_checks:
        return
    funcs = functions(program)
    _entries(w, program, funcs)
    _recursion(w, funcs)
    _level(w, funcs, level, insert_sync)
    _pipes(w, funcs)
    _reserve_buffers(w, funcs, level)
    _pipe_peers(w, funcs)


def _nested(op: Operation):
    for region in op.regions:
        for block in region:
            for inner in block.ops:
                yield inner
                yield from _nested(inner)


def _attributes(op: Operation) -> dict[str, str]:
    """``key = value`` pairs of the statement's tokens (attribute dictionaries, at any depth)."""
    toks = op.tail
    return {toks[k].text.strip('"'): toks[k + 2].text for k in range(len(toks) - 2)
            if toks[k + 1].text == "=" and toks[k].kind in ("ident", "string")}


def _returns_values(func: Operation) -> bool:
    """Whether the signature declares results (``-> T`` after the arguments)."""
    depth, seen_args = 0, False
    toks = func.tail
    for k, t in enumerate(toks):
        if t.kind == "punct" and t.text == "(":
            depth += 1
        elif t.kind == "punct" and t.text == ")":
            depth -= 1
            if depth == 0 and not seen_args:
                seen_args = True
                following = toks[k + 1:k + 3]
                return bool(following) and following[0].text == "->" and not (
                    len(following) > 1 and following[1].text == "(" and toks[k + 3:k + 4]
                    and toks[k + 3].text == ")")
    return False


def _entries(w: Walker, program: Program, funcs: list[Operation]) -> None:
    definitions = [f for f in funcs if f.regions]
    for f in definitions:
        explicit = any(t.text in ("pto.entry", '"pto.entry"') for t in f.tail)
        entry = explicit or len(definitions) == 1
        w.program_rules(f, "entry", {"entry": int(entry), "results": int(_returns_values(f))}, table="module")


def _calls(func: Operation) -> list[tuple[str, Operation]]:
    return [(t.text[1:].strip('"'), op) for op in _nested(func) if op.name in ("func.call", "call")
            for t in op.tail[:1] if t.kind == "symbol"]


def _recursion(w: Walker, funcs: list[Operation]) -> None:
    """Each call that closes a cycle of calls (a back edge of one depth-first walk) is reported where it is made."""
    graph = {w.symbol(f): _calls(f) for f in funcs if f.regions}
    done: set[str] = set()
    for start in graph:
        if start in done:
            continue
        stack = [(start, iter(graph[start]))]
        path = {start}
        while stack:
            name, it = stack[-1]
            step = next(it, None)
            if step is None:
                stack.pop()
                path.discard(name)
                done.add(name)
                continue
            callee, op = step
            if callee in path:
                w.program_rules(op, "calls", {"cycle": 1}, table="module")
            elif callee in graph and callee not in done:
                path.add(callee)
                stack.append((callee, iter(graph[callee])))


def _placed_by_program(funcs: list[Operation]) -> tuple[list[Operation], list[Operation], list[Operation]]:
    """The module's alloc_tile statements, its tassign statements and the alloc_tile statements with addr."""
    allocs = [op for f in funcs for op in _nested(f) if op.name == "pto.alloc_tile"]
    assigns = [op for f in funcs for op in _nested(f) if op.name == "pto.tassign"]
    return allocs, assigns, [op for op in allocs if op.tail and op.tail[0].text == "addr"]


def _level(w: Walker, funcs: list[Operation], level: int | None, insert_sync: bool) -> None:
    allocs, assigns, placed = _placed_by_program(funcs)
    if level is None:  # only level3 accepts tassign or alloc_tile addr: such a module is a level3 one
        level = 3 if assigns or placed else 0
    sync = int(insert_sync)
    for op in allocs:
        w.program_rules(op, "level", {"level": level, "addr": int(op in placed), "tassign": 0, "insert_sync": sync},
                        table="module")
    for op in assigns:
        w.program_rules(op, "level", {"level": level, "addr": 1, "tassign": 1, "insert_sync": sync}, table="module")


def _reserve_buffers(w: Walker, funcs: list[Operation], level: int | None) -> None:
    """Each function's reserve_buffer statements, where the assembler plans memory (below level3; without
    --pto-level a module that places its own tiles is a level3 one, any other a level2 one, ptoas's default)."""
    if "reserve_buffer" not in w.spec.module_checks:
        return
    if level is None:
        _allocs, assigns, placed = _placed_by_program(funcs)
        level = 3 if assigns or placed else 2
    for f in funcs:
        reserves = [op for op in _nested(f) if op.name == "pto.reserve_buffer"]
        for op in reserves:
            attrs = _attributes(op)
            w.program_rules(op, "reserve_buffer", {
                "planned": int(level != 3), "count": len(reserves), "auto": int(attrs.get("auto") == "true"),
                "base": int("base" in attrs)}, table="module")


def _pipe_peers(w: Walker, funcs: list[Operation]) -> None:
    """Each lowered pipe declaration: where its local buffer comes from, and the declarations of the pipe it
    names (a reserved buffer's owner function, the buffer's name and the direction)."""
    lowered = w.spec.lowered_pipes
    if lowered is None or "pipe_peers" not in w.spec.module_checks:
        return
    groups: dict[tuple, list[tuple[Operation, str]]] = {}
    members: dict[tuple, set[str]] = {}
    found = []  # (init op, its keys, flag_base given)
    for f in funcs:
        name = w.symbol(f)
        ops = list(_nested(f))
        defs = {r: op for op in ops for r in op.results}
        for op in ops:
            if op.name not in lowered.initialize:
                continue
            attrs = _attributes(op)
            values = [t.text for t in op.tail if t.kind == "value"]
            at = lowered.initialize[op.name]
            mask = int_literal(attrs.get("dir_mask", "1")) or 1
            addrs = [(values[at], 1 if mask == 3 else mask)] if at < len(values) else []
            if mask == 3 and at + 1 < len(values):
                addrs.append((values[at + 1], 2))
            keys = []
            for value, direction in addrs:
                source = defs.get(value)
                if source is None or source.name not in w.spec.frontend_pipes.reserved_buffers:
                    continue
                battrs = _attributes(source)
                owner = battrs.get("peer_func", "@" + name)[1:].strip('"')
                key = (owner, battrs.get("name", "").strip('"'), direction)
                groups.setdefault(key, []).append((op, name))
                members.setdefault(key, set()).update({name, owner})
                keys.append(key)
            found.append((op, keys, "flag_base" in attrs))
    for op, keys, flag_base in found:
        if not keys:
            w.program_rules(op, "pipe_peers", {"reserved": 0, "flag_base": int(flag_base), "inits": 0,
                                               "participants": 0, "functions": 0}, table="module")
        for key in keys:
            inits = groups[key]
            w.program_rules(op, "pipe_peers", {"reserved": 1, "flag_base": int(flag_base), "inits": len(inits),
                                               "participants": len(members[key]),
                                               "functions": len({n for _, n in inits})}, table="module")


def _pipes(w: Walker, funcs: list[Operation]) -> None:
    """Each direction's pipe: the kernels declaring it (one logical pipe), the splits their users give."""
    fp = w.spec.frontend_pipes
    if fp is None:
        return
    for direction, bit in DIRECTIONS.items():
        sides = []  # (init op, whole users, half users, explicit nosplit or None)
        for f in funcs:
            ops = list(_nested(f))
            inits = [op for op in ops if op.name in fp.initialize]
            if not inits:
                continue
            attrs = _attributes(inits[0])
            mask = int_literal(attrs.get("dir_mask", "3")) or 3
            if not mask & bit:
                continue
            splits = [int_literal(_attributes(op).get("split", "0")) or 0 for op in ops
                      if fp.operations.get(op.name, ("", ""))[1] == direction]
            explicit = {"true": 1, "false": 0}.get(attrs.get("nosplit", ""))
            sides.append((inits[0], sum(1 for s in splits if s == 0), sum(1 for s in splits if s != 0), explicit))
        if not sides:
            continue
        whole_only = sum(1 for _, whole, half, _ in sides if whole and not half)
        half_only = sum(1 for _, whole, half, _ in sides if half and not whole)
        mixed = any(whole and half for _, whole, half, _ in sides)
        inferred = -1 if mixed or (whole_only and half_only) else (1 if whole_only else 0 if half_only else -1)
        explicit_true = sum(1 for *_, e in sides if e == 1)
        explicit_false = sum(1 for *_, e in sides if e == 0)
        for init, whole, half, _ in sides:
            w.program_rules(init, "pipe_split", {
                "whole_users": whole, "half_users": half, "peers_whole": whole_only, "peers_half": half_only,
                "explicit_true": explicit_true, "explicit_false": explicit_false, "inferred_nosplit": inferred},
                table="module")
