"""Attribute operands: the values each may take and how they are spelled in assembly and in C++.

An attribute is either an enumerator of an ISA enum (``cmpMode = #pto.cmp<LT>``, ``CmpMode::LT``) or a
typed immediate: a bool (``descending = true``, C++ ``true``) or an integer of a dtype
(``upperOrLower = 1 : i32``, C++ ``1``), usually a C++ template flag.
"""

from __future__ import annotations

import re

from .model import AttrValue, Isa, Operand

_INT = re.compile(r"-?[0-9]+")  # ASCII digits only
_TYPED_INT = re.compile(r"(-?[0-9]+)\s*(?::\s*([a-z][a-z0-9]*))?")


def legal_values(isa: Isa, o: Operand) -> tuple[AttrValue, ...] | None:
    """Every value the attribute may take, or None for an integer range (see ``in_range``)."""
    if not o.attr_type:
        return isa.enums[o.enum].values
    if o.attr_range is not None:
        return None
    if o.attr_type == "bool":
        return o.attr_values or (False, True)
    return o.attr_values


def sample_values(isa: Isa, o: Operand) -> tuple[AttrValue, ...]:
    """The values conformance cases give the attribute: every legal value, or a range's samples."""
    legal = legal_values(isa, o)
    return legal if legal is not None else o.attr_values


def is_legal(isa: Isa, o: Operand, value: object) -> bool:
    if not o.attr_type:
        return isinstance(value, str) and value in isa.enums[o.enum].values
    if o.attr_type == "bool":
        return isinstance(value, bool) and value in (legal_values(isa, o) or ())
    if isinstance(value, bool) or not isinstance(value, int):
        return False
    if o.attr_range is not None:
        return o.attr_range[0] <= value <= o.attr_range[1]
    return value in o.attr_values


def describe(isa: Isa, o: Operand) -> str:
    """The attribute's type and legal values in words: ``CmpMode``, ``bool``, ``i32 in {0, 1}``, ``i32 in -8..8``."""
    if not o.attr_type:
        return o.enum
    if o.attr_range is not None:
        return f"{o.attr_type} in {o.attr_range[0]}..{o.attr_range[1]}"
    values = legal_values(isa, o) or ()
    if o.attr_type == "bool" and set(values) == {False, True}:
        return "bool"
    return f"{o.attr_type} in {{{', '.join(spell_value(v) for v in values)}}}"


def spell_value(value: AttrValue) -> str:
    """A value as written in a descriptor, an error or a test id: ``LT``, ``true``, ``1``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_value(text: str) -> AttrValue | None:
    """A typed immediate from descriptor text (``true``, ``false``, ``-1``), or None."""
    if text in ("true", "false"):
        return text == "true"
    if _INT.fullmatch(text):
        return int(text)
    return None


def spell_asm(isa: Isa, o: Operand, value: AttrValue) -> str:
    """The attribute's value in an assembly attribute dictionary."""
    if not o.attr_type:
        return isa.enums[o.enum].spell(str(value))
    if o.attr_type == "bool":
        return spell_value(value)
    return f"{value} : {o.attr_type}"


def read_asm(isa: Isa, o: Operand, spelled: str) -> AttrValue | None:
    """The value an assembly spelling names (enumerator, ``true``/``false``, ``1`` or ``1 : i32``), or None
    when it names none or an illegal one."""
    if not o.attr_type:
        return isa.enums[o.enum].read_spelled(spelled)
    text = " ".join(spelled.split())
    if o.attr_type == "bool":
        value: AttrValue | None = read_value(text)
        if not isinstance(value, bool):
            return None
    else:
        m = _TYPED_INT.fullmatch(text)
        if not m or (m.group(2) is not None and m.group(2) != o.attr_type):
            return None
        value = int(m.group(1))
    return value if is_legal(isa, o, value) else None


def asm_choices(isa: Isa, o: Operand) -> str:
    """What an assembly line may write for the attribute (for error messages)."""
    if not o.attr_type:
        enum = isa.enums[o.enum]
        return ", ".join(enum.spell(v) for v in enum.values)
    return describe(isa, o)


def cpp_type(isa: Isa, o: Operand) -> str:
    if not o.attr_type:
        return isa.enums[o.enum].cpp
    return "bool" if o.attr_type == "bool" else isa.dtypes[o.attr_type].cpp


def cpp_value(isa: Isa, o: Operand, value: AttrValue) -> str:
    """The value as a C++ expression: ``pto::CmpMode::LT``, ``true``, ``1``."""
    if not o.attr_type:
        return f"{isa.enums[o.enum].cpp}::{value}"
    if o.cpp_enum:  # an integer code of a C++ enum (TPUSH's split: pto::TileSplitAxis)
        return f"static_cast<{o.cpp_enum}>({spell_value(value)})"
    return spell_value(value)
