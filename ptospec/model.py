"""The frozen in-memory model of the ISA database, built by ``loader`` from YAML."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .expr.ast import Node, Statement

Text = dict[str, str]  # language code -> text ("en", "zh")

# A constant argument written in cpp.args (e.g. isBinary = true): passed to the call as written.
CPP_LITERAL = re.compile(r"true|false|-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?[fFuUlL]*")  # ASCII digits only


@dataclass(frozen=True)
class DType:
    name: str  # assembly name: f32
    cpp: str  # C++ name: float
    bits: int
    kind: str  # float | signed | unsigned
    numpy: str  # numpy / ml_dtypes dtype name
    profiles: tuple[str, ...] | None = None  # None: every profile

    @property
    def bytes(self) -> int:
        return self.bits // 8

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_signed(self) -> bool:
        return self.kind in ("float", "signed")


@dataclass(frozen=True)
class Layout:
    name: str  # ND
    blayout: str
    slayout: str
    text: Text


@dataclass(frozen=True)
class Profile:
    name: str
    title: Text
    description: Text
    constants: dict[str, int]
    basis: str  # "hardware" or "simulator"


@dataclass(frozen=True)
class Family:
    name: str
    title: Text
    description: Text


@dataclass(frozen=True)
class Rule:
    """A legality rule: a check that must hold (in ``profiles``/``modes``) when ``when`` holds."""

    id: str
    kind: str  # loc | layout | check
    operands: tuple[str, ...]
    allow: tuple[str, ...]  # loc / layout rules
    check: Node | None
    check_text: str
    when: Node | None
    when_text: str
    let: tuple[tuple[str, Node, str], ...]
    profiles: tuple[str, ...]
    modes: tuple[str, ...]
    phase: str  # static | runtime
    message: Text
    sources: tuple[str, ...]
    line: int
    file: str = ""


@dataclass(frozen=True)
class DTypeRow:
    """One alternative of a dtype table: each type variable ranges over a set."""

    modes: tuple[str, ...]
    types: dict[str, tuple[str, ...]]
    note: Text
    line: int


@dataclass(frozen=True)
class DTypeTable:
    profile: str
    rows: tuple[DTypeRow, ...]
    basis: str  # documented | implementation | simulator
    sources: tuple[str, ...]
    note: Text


@dataclass(frozen=True)
class Operand:
    name: str
    role: str  # in | out | tmp | scalar | attr
    dtype: str  # type variable ("" for an attr)
    text: Text
    usage: dict[str, Text]  # per-profile usage notes (tmp tiles)
    domain: Node | None = None  # over ``x``: the input values with a defined result
    domain_text: str = ""
    enum: str = ""  # attr operands: the ISA enum whose value they take
    asm_key: str = ""  # attr operands: the attribute's name in assembly ({key = #pto...<VALUE>})

    @property
    def is_attr(self) -> bool:
        return self.role == "attr"


@dataclass(frozen=True)
class AsmForm:
    ins: tuple[str, ...]
    outs: tuple[str, ...]


@dataclass(frozen=True)
class Example:
    profile: str
    tiles: dict[str, str]  # operand -> tile descriptor text
    line: int = 0
    file: str = ""  # set when the example comes from a kind file


@dataclass(frozen=True)
class Mode:
    name: str
    title: Text
    operands: tuple[Operand, ...]
    semantics: tuple[Statement, ...]
    cpp_name: str
    cpp_args: tuple[str, ...]
    cpp_signature: str
    asm: dict[str, AsmForm]  # sync | ssa | dps
    example: Example

    @property
    def attrs(self) -> tuple[Operand, ...]:
        return tuple(o for o in self.operands if o.is_attr)

    def operand(self, name: str) -> Operand:
        for op in self.operands:
            if op.name == name:
                return op
        raise KeyError(name)

    @property
    def type_vars(self) -> tuple[str, ...]:
        seen: list[str] = []
        for op in self.operands:
            if op.dtype and op.dtype not in seen:
                seen.append(op.dtype)
        return tuple(seen)


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


@dataclass(frozen=True)
class Numerics:
    exact: tuple[str, ...]  # dtypes compared bit-exactly (by value)
    tolerance: dict[str, Tolerance]
    nan: str  # propagate | unspecified | ...
    signed_zero: str  # exact | unspecified
    ties: str  # first | unspecified | n/a
    overflow: str
    notes: Text
    division_by_zero: str = "not-applicable"
    shift_out_of_range: str = "not-applicable"


@dataclass(frozen=True)
class Observation:
    """How a difference shows in a conformance run: the divergence category a backend of ``profile``
    produces, in ``modes`` (all when empty), for must-reject cases breaking one of ``rules`` (any when
    empty), where ``when`` holds (always when None)."""

    profile: str
    category: str  # wrong-value | write-outside-valid | accepts-rejected | rejects-accepted | harness-error
    modes: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    when: Node | None = None
    when_text: str = ""


@dataclass(frozen=True)
class Difference:
    id: str
    topic: Text
    claims: tuple[tuple[str, str], ...]  # (source id, what it says)
    resolution: str
    kind: str  # docs-conflict | simulator-divergence | simulator-bug | ...
    line: int
    observed: tuple[Observation, ...] = ()


@dataclass(frozen=True)
class Source:
    id: str
    kind: str  # seed | doc | impl | simulator
    ref: str


@dataclass(frozen=True)
class PerfTable:
    profile: str
    title: Text
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    source: str


@dataclass(frozen=True)
class OpSpec:
    name: str
    file: str
    family: str
    summary: Text
    description: Text
    let: tuple[tuple[str, Node, str], ...]
    modes: tuple[Mode, ...]
    dtypes: dict[str, DTypeTable]
    rules: tuple[Rule, ...]
    numerics: Numerics
    differences: tuple[Difference, ...]
    sources: dict[str, Source]
    performance: tuple[PerfTable, ...]
    raw: dict[str, Any] = field(repr=False, compare=False, hash=False, default_factory=dict)
    kind: str | None = None  # the shared kind it expands (specs/kinds/<kind>.yaml), if any
    params: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def mnemonic(self) -> str:
        return self.name

    def mode(self, name: str | None) -> Mode:
        if name is None:
            return self.modes[0]
        for m in self.modes:
            if m.name == name:
                return m
        raise KeyError(name)


@dataclass(frozen=True)
class Enum:
    """A C++ enumeration passed to intrinsics as a plain argument (a comparison or rounding mode)."""

    name: str
    cpp: str  # qualified C++ type, e.g. pto::CmpMode
    asm: str  # assembly attribute spelling with {} for the value, e.g. #pto.cmp<{}>
    values: tuple[str, ...]
    text: Text
    value_text: dict[str, Text] = field(default_factory=dict)


@dataclass(frozen=True)
class Isa:
    dtypes: dict[str, DType]
    tile_types: dict[str, str]  # C++ name -> assembly name
    blayouts: dict[str, str]
    slayouts: dict[str, str]
    pad_values: dict[str, str]
    layouts: dict[str, Layout]
    profiles: dict[str, Profile]
    families: dict[str, Family]
    tile_rules: tuple[Rule, ...]
    tile_defaults: dict[str, Any]
    raw: dict[str, Any] = field(repr=False, compare=False, hash=False, default_factory=dict)
    enums: dict[str, Enum] = field(default_factory=dict)

    def enum_of_value(self, value: str) -> Enum | None:
        for enum in self.enums.values():
            if value in enum.values:
                return enum
        return None

    def layout_name(self, blayout: str, slayout: str) -> str | None:
        for lay in self.layouts.values():
            if lay.blayout == blayout and lay.slayout == slayout:
                return lay.name
        return None


@dataclass(frozen=True)
class Database:
    isa: Isa
    ops: dict[str, OpSpec]
    root: str
    kinds: dict[str, Any] = field(default_factory=dict)  # name -> kinds.Kind

    def op(self, name: str) -> OpSpec:
        return self.ops[name.lower()]
