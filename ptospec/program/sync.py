"""The synchronisation instructions of specs/program.yaml (flags, events, barriers, cross-core signals,
buffer tokens, event-id arrays): instructions without data semantics.  Each is read generically from its
positional operands and attribute dictionary, its enumerator operands and rules are checked, and then
nothing is executed: the interpreter runs instructions in program order.  Event-id arrays keep their
values, because a later dynamic flag reads its event id from them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ProgramError
from .lexer import int_literal, integer_attributes
from .syntax import Operation
from .values import UNKNOWN, known
from .walker import Cursor, Walker

_ENUMERATOR = re.compile(r"^#pto\.[a-z_]+<\s*([A-Za-z0-9_]+)\s*>$")
_ARRAY_TYPE = re.compile(r"^!pto\.eventid_array<\s*([0-9]+)\s*>$")


@dataclass(eq=False)
class EventIdArray:
    """A local array of event ids (``declare_eventid_array``); entries are UNKNOWN until set."""

    values: list

    @property
    def length(self) -> int:
        return len(self.values)


def synchronise(w: Walker, op: Operation, name: str) -> None:
    """Check one synchronisation instruction; execute nothing (event-id arrays excepted)."""
    instr = w.spec.instructions[name]
    if name in _ARRAY_HANDLERS:
        _ARRAY_HANDLERS[name](w, op, name)
        return
    values = _read(w, op, [n for n, _ in instr.operands], instr.attributes, instr.variadic)
    for (operand, enum), value in zip(instr.operands, (values[n] for n, _ in instr.operands), strict=True):
        if enum and value is not UNKNOWN and value not in w.spec.enums[enum]:
            w.violation(op.pos, "sync.enum", f"{name}: {operand} = {value} is not an enumerator of {enum} "
                        f"({', '.join(w.spec.enums[enum])})")
    w.program_rules(op, name, values)
    if w.tracer is not None:
        w.tracer.synchronisation(op, name, values)
    for result in op.results:  # event handles: opaque, nothing reads them in program order
        w.env[result] = UNKNOWN


def _read(w: Walker, op: Operation, operands: list[str], attributes: tuple[str, ...], variadic: str = "") -> dict:
    """The positional operands (before a ``{...}`` dictionary or ``:``; ``ins(...)`` lists its values) and
    the integer attributes; with ``variadic``, operands beyond the positional ones are counted."""
    c = Cursor(w, op)
    items: list = []
    attrs: dict[str, str] = {}
    while c.peek() is not None:
        t = c.peek()
        if (t.kind == "punct" and t.text in ("[", "]", ",", "(", ")")) or (t.kind == "ident" and t.text == "ins"
                                                                     and c.at("(", 1)):
            c.i += 1
        elif t.kind == "punct" and t.text == "{":
            attrs = c.skip_attr_dict()
        elif t.kind == "punct" and t.text in (":", "->"):
            break
        elif t.kind == "punct" and t.text == "<":  # <PIPE_V>
            c.i += 1
            items.append(c.next("an enumerator").text)
            c.expect(">")
        elif t.kind == "attr":
            c.i += 1
            m = _ENUMERATOR.match(t.text)
            items.append(m.group(1) if m else t.text)
        elif t.kind == "value":
            c.i += 1
            items.append(w.get(t.text, t))
        elif t.kind == "number":
            value = int_literal(t.text)
            if value is None:
                raise c.error(f"{op.name}: expected an integer, got {t.text!r}", t)
            c.i += 1
            items.append(value)
        elif t.kind == "ident":
            c.i += 1
            items.append(t.text)
        else:
            break
    extra = len(items) - len(operands) if variadic else 0
    if variadic and extra >= 0:
        items = items[:len(operands)]
    if len(items) != len(operands):
        raise ProgramError(f"{op.name} takes {len(operands)} operand(s) ({', '.join(operands) or 'none'}), "
                           f"the statement has {len(items)}", "program.arity", op.pos)
    values: dict = dict(zip(operands, items, strict=True))
    if variadic:
        values[variadic] = extra
    values.update(integer_attributes(attrs, attributes, op.pos))
    return values


def _declare(w: Walker, op: Operation, name: str) -> None:
    c = Cursor(w, op)
    c.skip_attr_dict()
    c.expect("->")
    ty = c.type()
    m = _ARRAY_TYPE.match(ty)
    if not m or len(op.results) != 1:
        raise ProgramError(f"expected %a = {op.name} -> !pto.eventid_array<N>", "program.syntax", op.pos)
    w.env[op.results[0]] = EventIdArray([UNKNOWN] * int(m.group(1)))


def _element(w: Walker, op: Operation, name: str) -> tuple[EventIdArray | None, object, Cursor]:
    c = Cursor(w, op)
    array = w.get(c.value(), c.peek(-1))
    c.expect("[")
    index = c.operand()
    c.expect("]")
    if array is UNKNOWN:
        return None, index, c
    if not isinstance(array, EventIdArray):
        raise ProgramError(f"{op.name} needs an event-id array", "program.type", op.pos)
    w.program_rules(op, name, {"index": index, "length": array.length})
    return array, index, c


def _set(w: Walker, op: Operation, name: str) -> None:
    array, index, c = _element(w, op, name)
    c.expect(",")
    value = c.operand()
    if array is not None and known(index) and 0 <= index < array.length:
        array.values[index] = value


def _get(w: Walker, op: Operation, name: str) -> None:
    array, index, _ = _element(w, op, name)
    inside = array is not None and known(index) and 0 <= index < array.length
    for result in op.results:
        w.env[result] = array.values[index] if inside else UNKNOWN


_ARRAY_HANDLERS = {"declare_eventid_array": _declare, "eventid_array_set": _set, "eventid_array_get": _get}
