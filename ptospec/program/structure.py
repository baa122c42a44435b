"""The structured control flow and calls of a program: ``scf.for``/``if``/``while``, ``func.call`` and
``return``, for the walker (checked once per region, or run)."""

from __future__ import annotations

from .errors import ProgramError
from .lexer import int_literal
from .syntax import Block, Operation
from .values import UNKNOWN, PartitionView, Pointer, TensorView, TileBuffer, known
from .walker import Cursor, Return, Walker, call_function, func_signature


def _return(w: Walker, op: Operation) -> None:
    c = Cursor(w, op)
    values = []
    while c.peek() is not None and c.peek().kind == "value":
        values.append(w.get(c.value(), c.peek(-1)))
        if not c.accept(","):
            break
    if w.checking:
        return
    raise Return(values)


def _call(w: Walker, op: Operation) -> None:
    c = Cursor(w, op)
    sym = c.next("a function name")
    if sym.kind != "symbol":
        raise c.error("expected @function in func.call", sym)
    name = sym.text[1:].strip('"')
    c.expect("(")
    args = []
    while not c.at(")"):
        args.append(w.get(c.value(), c.peek(-1)))
        if not c.accept(","):
            break
    c.expect(")")
    callee = w.funcs.get(name)
    if callee is None:
        raise ProgramError(f"call to unknown function @{name}", "program.call", op.pos)
    if w.checking:  # not entered: its arguments are counted here, as the run would
        params = func_signature(w, callee)
        if len(params) != len(args):
            w.violation(op.pos, "program.call", f"@{name} takes {len(params)} argument(s), got {len(args)}")
        w.bind(op, [UNKNOWN] * len(op.results))
        return
    w.bind(op, call_function(w, callee, args))


def _enter(w: Walker, body: Block, names: list[str], values: list):
    """Run a loop body whose values are named in the loop's header (or by the block's own arguments)."""
    if body.args:
        return w.run_block(body, values)
    for name, v in zip(names, values, strict=True):
        w.env[name] = v
    return w.run_block(body, [])


def _loop_state(values: list) -> list:
    """What the checker assumes iteration arguments hold: objects stay, numbers become unknown."""
    return [v if isinstance(v, TileBuffer | PartitionView | TensorView | Pointer) else UNKNOWN for v in values]


def _for(w: Walker, op: Operation) -> None:
    c = Cursor(w, op)
    iv = c.value()
    c.expect("=")
    lb = w.get(c.value(), c.peek(-1))
    c.expect("to")
    ub = w.get(c.value(), c.peek(-1))
    c.expect("step")
    st = w.get(c.value(), c.peek(-1))
    names, inits = [], []
    if c.accept("iter_args"):
        c.expect("(")
        while not c.at(")"):
            names.append(c.value())
            c.expect("=")
            inits.append(w.get(c.value(), c.peek(-1)))
            if not c.accept(","):
                break
        c.expect(")")
    if len(op.regions) != 1:
        raise ProgramError("scf.for needs one body region", "program.syntax", op.pos)
    body = op.regions[0][0]
    carried = inits
    for what, v in (("lower bound", lb), ("upper bound", ub), ("step", st)):
        if v is not UNKNOWN and (not isinstance(v, int) or isinstance(v, bool)):
            raise ProgramError(f"scf.for {what} is not an integer", "program.type", op.pos)
    if w.checking or not known(lb, ub, st):
        if not w.checking:
            raise ProgramError("scf.for bounds are not known", "program.unknown-value", op.pos)
        _enter(w, body, [iv, *names], [UNKNOWN, *_loop_state(inits)])
        w.bind(op, _loop_state(inits))
        return
    if st <= 0:
        raise ProgramError(f"scf.for step must be positive, got {st}", "program.loop-step", op.pos)
    trips = _trips(lb, ub, st)
    least = trips * (1 + _least_statements(w, body, _defined(w, body)))
    if w.stats.statements + least > w.max_steps:  # refused before it starts: each iteration counts
        raise ProgramError(f"scf.for runs {trips} iterations of at least {least // max(trips, 1)} statement(s); a "
                           f"run executes at most {w.max_steps} statements", "program.step-limit", op.pos)
    for i in range(lb, ub, st):
        w.tick(op)  # an iteration is a statement (its scf.yield), so an empty body cannot spin unbounded
        _, carried, term = _enter(w, body, [iv, *names], [i, *carried])
        if len(carried) != len(names):
            raise ProgramError(f"scf.yield gives {len(carried)} value(s), the loop carries {len(names)}",
                               "program.results", term.pos if term else op.pos)
    w.bind(op, carried)


def _trips(lb: int, ub: int, st: int) -> int:
    return max(0, -((lb - ub) // st))  # len(range(lb, ub, st)), which overflows beyond 2**63


def _defined(w: Walker, block: Block) -> frozenset[str]:
    """Every value a loop body (re)defines on each iteration: results, block arguments, loop headers' names."""
    memo = w.loop_defined
    found = memo.get(id(block))
    if found is None or found[0] is not block:
        names: set[str] = {name for name, _ty in block.args}
        for inner in block.ops:
            names.update(inner.results)
            names.update(t.text for k, t in enumerate(inner.tail[:-1]) if t.kind == "value" and
                         inner.tail[k + 1].text == "=")
            for region in inner.regions:
                for b in region:
                    names |= _defined(w, b)
        found = memo[id(block)] = (block, frozenset(names))
    return found[1]


_LEAST_DEPTH = 16


def _least_statements(w: Walker, block: Block, varying: frozenset[str], depth: int = 0) -> int:
    """A lower bound of the statements one run of ``block`` executes: each of its operations once, and a
    nested ``scf.for`` whose bounds are constants of the block or values the enclosing loop does not change
    (not in ``varying``) its trip count times its own body.  0 when the block may return early."""
    constants: dict[str, int] = {}
    total = 0
    for inner in block.ops:
        if inner.name in ("scf.yield", "scf.condition"):
            continue
        if inner.name in ("return", "func.return"):
            return 0
        total += 1
        tail = inner.tail
        if inner.name == "arith.constant" and len(inner.results) == 1 and tail and tail[0].kind == "number":
            value = int_literal(tail[0].text)
            if value is not None:
                constants[inner.results[0]] = value
        elif (inner.name == "scf.for" and len(tail) > 6 and tail[3].text == "to" and tail[5].text == "step"
              and len(inner.regions) == 1 and depth < _LEAST_DEPTH):
            bounds = [constants.get(t.text, w.env.get(t.text) if t.text not in varying else None)
                      for t in (tail[2], tail[4], tail[6])]
            if all(isinstance(v, int) and not isinstance(v, bool) for v in bounds) and bounds[2] > 0:
                nested = _least_statements(w, inner.regions[0][0], varying, depth + 1)
                total += _trips(*bounds) * (1 + nested)
        if total > w.max_steps:
            break
    return total


def _if(w: Walker, op: Operation) -> None:
    c = Cursor(w, op)
    cond = w.get(c.value(), c.peek(-1))
    if cond is not UNKNOWN and (not isinstance(cond, int) or isinstance(cond, bool)):
        raise ProgramError("scf.if condition is not an i1 value", "program.type", op.pos)
    if not op.regions:
        raise ProgramError("scf.if needs a then region", "program.syntax", op.pos)
    then, other = op.regions[0][0], (op.regions[1][0] if len(op.regions) > 1 else None)
    if w.checking:  # both branches are checked; the results are the taken branch's when the condition is known
        from_then = w.run_block(then, [])[1]
        from_else = w.run_block(other, [])[1] if other is not None else []
        if cond is UNKNOWN:
            merged = [a if a is b else UNKNOWN for a, b in zip(from_then, from_else, strict=False)] \
                if other is not None else []
            w.bind(op, merged + [UNKNOWN] * (len(op.results) - len(merged)))
        else:
            w.bind(op, from_then if cond else from_else)
        return
    if cond is UNKNOWN:
        raise ProgramError("scf.if condition is not known", "program.unknown-value", op.pos)
    taken = then if cond else other
    w.bind(op, w.run_block(taken, [])[1] if taken is not None else [])


def _while(w: Walker, op: Operation) -> None:
    c = Cursor(w, op)
    c.expect("(")
    inits = []
    while not c.at(")"):
        c.value()
        c.expect("=")
        inits.append(w.get(c.value(), c.peek(-1)))
        if not c.accept(","):
            break
    c.expect(")")
    if len(op.regions) != 2:
        raise ProgramError("scf.while needs a before and a do region", "program.syntax", op.pos)
    before, after = op.regions[0][0], op.regions[1][0]
    # The before region's arguments are the loop's values (named in the header when the block has none).
    header = [t.text for t in op.tail if t.kind == "value"]
    if w.checking:
        _bind_header(w, before, header, _loop_state(inits))
        _, values, _ = w.run_block(before, _loop_state(inits) if before.args else [])
        w.run_block(after, _loop_state(values[1:]) if after.args else [])
        w.bind(op, [UNKNOWN] * len(op.results))
        return
    args = inits
    while True:
        _bind_header(w, before, header, args)
        _, values, _ = w.run_block(before, args if before.args else [])
        if not values:
            raise ProgramError("scf.while's before region must end in scf.condition", "program.syntax", op.pos)
        if not values[0]:
            w.bind(op, values[1:])
            return
        _, args, _ = w.run_block(after, values[1:] if after.args else [])
        w.tick(op)


def _bind_header(w: Walker, before: Block, header: list[str], args: list) -> None:
    if before.args:
        return
    names = header[0::2]  # (%i = %c0, %alive = %true): every other value is a name
    for name, v in zip(names, args, strict=False):
        w.env[name] = v


def _module(w: Walker, op: Operation) -> None:
    raise ProgramError("a module inside a function", "program.syntax", op.pos)


def _func(w: Walker, op: Operation) -> None:
    raise ProgramError("a function inside a function", "program.syntax", op.pos)


def _yield_outside(w: Walker, op: Operation) -> None:
    raise ProgramError(f"{op.name} outside a region that takes it", "program.syntax", op.pos)


HANDLERS = {
    "module": _module, "func.func": _func, "return": _return, "func.return": _return,
    "func.call": _call, "call": _call, "scf.for": _for, "scf.if": _if, "scf.while": _while,
    "scf.yield": _yield_outside, "scf.condition": _yield_outside,
}
