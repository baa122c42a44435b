"""Walk a program: check every instruction (``check=True``: without running, values known only at run
time stay unknown, both branches and every loop body are visited once) or run it (the reference
interpreter: NumPy over the database's validator and executor, one instruction after another).

Kept in one walker so the checker and the interpreter read the dialect the same way.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..asm.forms import ParsedLine, parse_line
from ..asm.types import format_type, parse_type
from ..errors import PtospecError
from ..executor import execute, numpy_dtype, register_values
from ..expr.evaluate import Scope, evaluate
from ..model import Database
from ..storage import storage_bytes
from ..tile import AttrDesc, GlobalDesc, ScalarDesc, TileDesc
from ..validator import make_scope, state_reads, validate
from . import arith
from .errors import ProgramError, RuleViolation, SourcePos
from .layouts import consumer_layout, spelled_layout
from .lexer import Token, int_literal
from .limits import MAX_CALL_DEPTH, MAX_STEPS
from .scalar_args import converted_scalar, declared_scalars
from .spec import ProgramSpec, broken_rules, program_spec
from .syntax import Block, Operation, Program
from .values import UNKNOWN, GlobalBuffer, PartitionView, TileBuffer, known

_RESULT = object()  # marks an operand that is a result of the line being walked


def _result_operands(line: ParsedLine, op: Operation) -> list[str]:
    """The operands the line's results name, in the order of the results."""
    by_value = {v: k for k, v in line.values.items()}
    return [by_value.get(r, "") for r in op.results]


def _shares(dst: TileBuffer, src: TileBuffer, at: int | None) -> bool | None:
    """Whether ``dst`` is ``src``'s storage from byte ``at`` on (None: not known before running)."""
    if dst is src:
        return at in (0, None)
    a = dst.home or (dst, 0)
    b = src.home or (src, 0)
    if a[0] is b[0] and at is not None:
        return a[1] == b[1] + at
    if dst.place and src.place:
        if not known(dst.place[1], src.place[1]) or at is None:
            return None
        return dst.place[0] == src.place[0] and dst.place[1] == src.place[1] + at
    return False


CLOCK_EVERY = 64  # statements between two looks at the clock
_PTR = re.compile(r"^!pto\.ptr<\s*([a-z][a-z0-9]*)\s*>$")


@dataclass(frozen=True)
class Finding:
    pos: SourcePos
    rule: str
    message: str
    kind: str  # violation | deferred | finding (allowed, reported: a rule of severity finding)

    def one_line(self) -> str:
        return f"{self.pos}: [{self.rule}] {self.message}"


@dataclass
class Stats:
    statements: int = 0  # executed (run) or visited (check)
    instructions: int = 0  # database instructions among them
    legal: int = 0
    unknown: Counter = field(default_factory=Counter)  # instruction -> statements not in the database
    first_unknown: dict = field(default_factory=dict)  # instruction -> first position


class Return(Exception):
    """A ``return`` leaving the function being called, with its values."""

    def __init__(self, values):
        self.values = values


@dataclass(frozen=True)
class Executed:
    """One database instruction as the interpreter ran it (what a ``Tracer`` is told, after it ran)."""

    op: Operation  # the statement (op.pos: file:line:col)
    name: str  # database instruction
    mode: str
    profile: str
    operands: dict  # operand -> TileDesc (current valid shape) | GlobalDesc | ScalarDesc | AttrDesc
    data: dict  # scalar operand -> number (tiles and buffers are in ``tiles`` and ``buffers``)
    tiles: dict  # operand -> TileBuffer
    buffers: dict  # operand -> GlobalBuffer
    outputs: tuple[str, ...]  # the operands it wrote
    written: dict  # output -> mask of the elements the semantics wrote


@dataclass
class Bound:
    """An instruction's operands bound to the program's values: descriptors for the validator, data for the
    executor, the tile buffers and global buffers they are, and the tiles the line itself makes (SSA results)."""

    operands: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)
    tiles: dict[str, TileBuffer] = field(default_factory=dict)
    buffers: dict[str, GlobalBuffer] = field(default_factory=dict)
    fresh: dict[str, TileBuffer] = field(default_factory=dict)


class Tracer(Protocol):
    """Watches a run: the global buffers before it starts, then each tile allocation and each executed
    database instruction, in program order."""

    def begin(self, buffers: dict[str, GlobalBuffer]) -> None: ...

    def block(self, index: int) -> None: ...  # block ``index`` starts (its walker has fresh on-chip memory)

    def alloc(self, op: Operation, tile: TileBuffer) -> None: ...

    def instruction(self, step: Executed) -> None: ...

    # checked, not executed (no data semantics): ``name`` is the instruction, ``values`` its operand values
    def synchronisation(self, op: Operation, name: str, values: dict) -> None: ...

    # while checking (no run): a legal database instruction, its operands as far as they are known
    def checked(self, op: Operation, line: ParsedLine, operands: dict, tiles: dict, buffers: dict) -> None: ...


# Operations handled outside the walker (structure, views and tile buffers, synchronisation, pipes): each module
# that handles some registers a table of them (``handlers`` does, for the whole dialect), so the walker imports
# none of the modules that build on it.
HandlerTable = Callable[[Database, ProgramSpec], dict[str, Callable[["Walker", Operation], None]]]
_HANDLER_TABLES: list[HandlerTable] = []


def register_handlers(table: HandlerTable) -> None:
    """Every walker made from now on dispatches the operations ``table(db, spec)`` names to their handlers."""
    _HANDLER_TABLES.append(table)


class Cursor:
    """Reads one operation's tokens."""

    def __init__(self, walker: Walker, op: Operation):
        self.w, self.op, self.toks, self.i = walker, op, op.tail, 0

    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def at(self, text: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t is not None and t.text == text and t.kind in ("punct", "ident")

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> Token:
        t = self.peek()
        if not self.at(text):
            raise self.error(f"expected {text!r} in {self.op.name}, got {t.text if t else 'end of statement'!r}", t)
        self.i += 1
        return t

    def next(self, what: str) -> Token:
        t = self.peek()
        if t is None:
            raise self.error(f"expected {what} in {self.op.name}")
        self.i += 1
        return t

    def value(self) -> str:
        t = self.next("a value")
        if t.kind != "value":
            raise self.error(f"expected a %value in {self.op.name}, got {t.text!r}", t)
        return t.text

    def operand(self):
        """A %value or an integer literal (sizes may be written as numbers): an integer, or unknown."""
        t = self.next("a value")
        if t.kind == "value":
            value = self.w.get(t.text, t)
            if value is not UNKNOWN and (not isinstance(value, int) or isinstance(value, bool)):
                what = "a float" if isinstance(value, float) else f"a {type(value).__name__.lower()}"
                raise self.error(f"{t.text} is {what}, not an integer, in {self.op.name}", t, "program.type")
            return value
        if t.kind == "number" and (value := int_literal(t.text)) is not None:
            return value
        raise self.error(f"expected a %value or an integer in {self.op.name}, got {t.text!r}", t)

    def type(self) -> str:
        t = self.next("a type")
        if t.kind not in ("type", "ident"):
            raise self.error(f"expected a type in {self.op.name}, got {t.text!r}", t)
        return self.w.resolve_type(t.text)

    def typed_operands(self) -> tuple[list[str], list[str]]:
        """``(%a, %b, ... : T1, T2, ...)``: the values named and their types (either list may be empty)."""
        self.expect("(")
        names = [] if self.at(":") else [self.value()]
        while names and self.accept(","):
            names.append(self.value())
        self.expect(":")
        types = [] if self.at(")") else [self.type()]
        while types and self.accept(","):
            types.append(self.type())
        self.expect(")")
        return names, types

    def bracket_list(self) -> list:
        self.expect("[")
        items = []
        while not self.at("]"):
            items.append(self.operand())
            if not self.accept(","):
                break
        self.expect("]")
        return items

    def named_list(self, key: str) -> list:
        """``, key = [a, b, ...]``"""
        self.expect(",")
        self.expect(key)
        self.expect("=")
        return self.bracket_list()

    def skip_attr_dict(self) -> dict[str, str]:
        attrs: dict[str, str] = {}
        if not self.accept("{"):
            return attrs
        depth = 1
        key = None
        while depth:
            t = self.next("'}'")
            if t.kind == "punct" and t.text == "{":
                depth += 1
            elif t.kind == "punct" and t.text == "}":
                depth -= 1
            elif depth == 1 and t.kind in ("ident", "string") and self.at("="):
                key = t.text.strip('"')
            elif depth == 1 and key and t.kind in ("attr", "string", "number", "ident") and t.text != "=":
                attrs[key] = t.text
                key = None
        return attrs

    def error(self, message: str, tok: Token | None = None, rule: str = "program.syntax") -> ProgramError:
        pos = tok.pos(self.w.program.path) if tok else self.op.pos
        return ProgramError(message, rule, pos)


@dataclass
class Memo:
    """What a walker learns that holds for every walk of the same program on the same profile (the
    walkers of several blocks share one): parsed lines, tile types, program-layer rule verdicts."""

    parsed: dict[int, ParsedLine | PtospecError] = field(default_factory=dict)
    types: dict[str, TileDesc] = field(default_factory=dict)
    rules: dict[tuple, tuple] = field(default_factory=dict)  # (instruction, values) -> (broken, deferred)
    line_layouts: dict[int, str] = field(default_factory=dict)  # statement -> its layout attribute (as written)
    line_attributes: dict[int, dict[str, str]] = field(default_factory=dict)  # statement -> dialect attributes given
    custom: dict[int, Operation] = field(default_factory=dict)  # a statement in the generic form -> its custom form


class Walker:
    def __init__(self, db: Database, program: Program, profile: str, check: bool, block_idx: int = 0,
                 blocks: int = 1, max_steps: int = MAX_STEPS, memo: Memo | None = None):
        self.db, self.program, self.profile, self.checking = db, program, profile, check
        self.spec: ProgramSpec = program_spec(db)
        self.block_idx, self.blocks, self.max_steps = block_idx, blocks, max_steps
        self.env: dict[str, object] = {}
        self.constants: set[str] = set()  # values of the current function defined by arith.constant
        self.function: Operation | None = None  # the function being walked
        self.stats = Stats()
        self.findings: list[Finding] = []
        self.onchip: dict[str, np.ndarray] = {}
        self.funcs = {self.symbol(f): f for f in functions(program)}
        self.memo = memo if memo is not None else Memo()
        self.deadline: float | None = None  # time.monotonic() when the run must stop (``limit_time``)
        self.max_seconds = 0.0
        self.extents: dict[str, int] = {}  # pointer argument -> elements its tensor views reach (when known)
        self.state: dict[str, dict[str, object]] = {}  # configuration registers the statements have set so far
        self.registers: set[str] = set()  # their names (also while checking, when no value is known)
        self.depth = 0
        self.vecscope = 0  # how many vector scopes (pto.vecscope) the statement being run is inside
        self.loop_defined: dict[int, tuple[Block, frozenset[str]]] = {}  # loop body -> names it (re)defines
        if not _HANDLER_TABLES:
            raise RuntimeError("no operation handlers are registered: import ptospec.program.handlers (the program "
                               "API does) before making a walker")
        self.handlers = {name: handle for table in _HANDLER_TABLES for name, handle in table(db, self.spec).items()}
        self.tracer: Tracer | None = None  # told about every executed instruction and tile allocation (run only)
        self.strict = False  # findings are violations (--strict)
        self.finding_counts: dict[tuple[str, str], int] = {}  # (position, rule) -> times met
        self.side = None  # fifo.Side when kernels run together (--kernels): TPUSH/TPOP/TFREE use its pipes

    # -- values and types ---------------------------------------------------------------------------
    def get(self, name: str, tok: Token | None = None):
        if name in self.env:
            return self.env[name]
        if name.endswith("#0") and name[:-2] in self.env:
            return self.env[name[:-2]]
        pos = tok.pos(self.program.path) if tok else None
        raise ProgramError(f"{name} is used before it is defined", "program.undefined", pos)

    def bind(self, op: Operation, values: list) -> None:
        if len(values) != len(op.results):
            raise ProgramError(f"{op.name} gives {len(values)} result(s) but the statement names "
                               f"{len(op.results)}", "program.results", op.pos)
        for name, v in zip(op.results, values, strict=True):
            self.env[name] = v

    def resolve_type(self, text: str) -> str:
        text = self.program.aliases.get(text, text)
        if text in self.spec.dtype_aliases:  # a scalar's type (ui64)
            return self.spec.dtype_aliases[text]
        for alias, dtype in self.spec.dtype_aliases.items():
            if alias in text:
                text = re.sub(rf"(?<=[=<x,\s]){alias}(?=[>,\s])", dtype, text)
        return text

    def tile_type(self, text: str, pos: SourcePos) -> TileDesc:
        cached = self.memo.types.get(text)
        if cached is not None:
            return cached
        try:
            desc = parse_type(text, self.db.isa)
        except PtospecError as exc:
            raise ProgramError(exc.message, exc.rule or "program.type", pos) from None
        if not isinstance(desc, TileDesc):
            raise ProgramError(f"expected a tile buffer type, got {text!r}", "program.type", pos)
        self.memo.types[text] = desc
        return desc

    @staticmethod
    def symbol(func: Operation) -> str:
        for t in func.tail:
            if t.kind == "symbol":
                return t.text[1:].strip('"')
        raise ProgramError("func.func without a name", "program.syntax", func.pos)

    # -- findings -----------------------------------------------------------------------------------
    def violation(self, pos: SourcePos, rule: str, message: str) -> None:
        self.violations(pos, [(rule, message)])

    def violations(self, pos: SourcePos, broken: list[tuple[str, str]]) -> None:
        """Rules a statement breaks (rule, message): listed while checking; a run stops with all of them."""
        if not broken:
            return
        if not self.checking:
            raise RuleViolation(broken, pos)
        self.findings.extend(Finding(pos, rule, message, "violation") for rule, message in broken)

    def program_rules(self, op: Operation, name: str, values: dict, dims: list[dict] | None = None,
                      table: str = "instructions") -> None:
        """Check the program-layer rules of instruction ``name`` (of ``module_checks`` with ``table="module"``);
        those needing unknown values are deferred."""
        self.violations(op.pos, self.rule_errors(op, name, values, dims, table))

    def rule_errors(self, op: Operation, name: str, values: dict, dims: list[dict] | None = None,
                    table: str = "instructions", label: str | None = None) -> list[tuple[str, str]]:
        """The program-layer rules of ``name`` that ``values`` break, as (rule, message) with ``label`` (the
        instruction's name) before each message; rules of severity finding and deferred rules are reported as
        findings here, the others returned."""
        values = {k: (None if v is UNKNOWN else v) for k, v in values.items()}
        dims = [{k: (None if v is UNKNOWN else v) for k, v in d.items()} for d in dims or []]
        key = (table, name, tuple(values.items()), tuple(tuple(d.items()) for d in dims))
        found = self.memo.rules.get(key)
        if found is None:
            instr = {"module": self.spec.module_checks, "instructions": self.spec.instructions,
                     "memrefs": self.spec.memrefs.operations if self.spec.memrefs else {}}[table][name]
            found = self.memo.rules[key] = broken_rules(self.db, instr, values, dims, self.profile,
                                                        self.spec.enumerators)
        broken, deferred = found
        if deferred:
            self.findings.append(Finding(op.pos, f"{name}.deferred", f"{name}: checked at run time: "
                                         f"{', '.join(deferred)}", "deferred"))
        errors = []
        for rule, seen in broken:
            message = f"{label or name}: {rule.message['en']} ({seen})"
            if rule.severity == "finding" and not self.strict:
                self.finding(op.pos, rule.id, message)
            else:
                errors.append((rule.id, message))
        return errors

    def finding(self, pos: SourcePos, rule: str, message: str) -> None:
        """Something the program does that its target allows but a reader should know (a rule of severity
        finding): reported once per statement and rule (with how often it happened), and the walk or run
        goes on."""
        key = (str(pos), rule)
        if key not in self.finding_counts:
            self.findings.append(Finding(pos, rule, message, "finding"))
        self.finding_counts[key] = self.finding_counts.get(key, 0) + 1

    # -- walking ------------------------------------------------------------------------------------
    def run_block(self, block: Block, args: list) -> tuple[str, list, Operation | None]:
        """Run a block's operations; return its terminator's name and values."""
        if len(args) != len(block.args):
            raise ProgramError(f"block {block.label or ''} takes {len(block.args)} argument(s), got {len(args)}",
                               "program.block-args", None)
        for (name, _ty), v in zip(block.args, args, strict=True):
            self.env[name] = v
        for op in block.ops:
            if op.name in ("scf.yield", "scf.condition"):
                return op.name, self.terminator_values(op), op
            self.step(op)
        return "", [], None

    def terminator_values(self, op: Operation) -> list:
        c = Cursor(self, op)
        values = []
        if op.name == "scf.condition":
            c.expect("(")
            values.append(self.get(c.value(), c.peek(-1)))
            c.expect(")")
        while c.peek() is not None and c.peek().kind == "value":
            values.append(self.get(c.value(), c.peek(-1)))
            if not c.accept(","):
                break
        return values

    def limit_time(self, start: float, seconds: float) -> None:
        """Stop the run with ``program.time-limit`` once ``seconds`` have passed since ``start`` (monotonic)."""
        self.deadline, self.max_seconds = start + seconds, seconds

    def tick(self, op: Operation) -> None:
        """Count one statement (or loop iteration) executed at ``op``; beyond the step or time limit, stop."""
        self.stats.statements += 1
        if self.stats.statements > self.max_steps:
            raise ProgramError(f"more than {self.max_steps} statements executed (a loop that does not end?)",
                               "program.step-limit", op.pos)
        if self.deadline is not None and not self.stats.statements % CLOCK_EVERY and time.monotonic() > self.deadline:
            raise ProgramError(f"the run took more than {self.max_seconds:g} s after {self.stats.statements} "
                               "statements (a loop that does not end, or a long one?)", "program.time-limit", op.pos)

    def step(self, op: Operation) -> None:
        self.tick(op)
        name = op.name
        if name in self.spec.generic_forms and op.tail and op.tail[0].text == "(":
            op = self.custom_form(op)
        handler = self.handlers.get(name)
        if handler is not None:
            handler(self, op)
            return
        short = name[4:] if name.startswith("pto.") else None
        spec_op = self.db.by_mnemonic(short) if short is not None else None
        if spec_op is not None:
            self.database_instruction(op, spec_op)
            return
        instr = self.spec.instructions.get(short) if short is not None else None
        if instr is not None and instr.result is not None:
            self.bind(op, [UNKNOWN if self.checking else self.result_value(instr.result)])
            return
        if name.startswith("arith."):
            self.arith(op, name[6:])
            return
        self.unknown(op)

    def custom_form(self, op: Operation) -> Operation:
        """A statement in the generic MLIR form, as its custom form (``generic_forms``)."""
        from .forms import custom_form

        if id(op) not in self.memo.custom:
            self.memo.custom[id(op)] = custom_form(op, self.spec.generic_forms[op.name], self.spec.segment_sizes)
        return self.memo.custom[id(op)]

    def unmatched_form(self, op: Operation, name: str) -> bool:
        """Whether the line is a form no overload of pto-isa's headers takes (``unmatched_forms``): if so it is
        refused with that form's rule, and nothing else of it is checked or run."""
        from .forms import operand_kinds

        forms = [f for f in self.spec.unmatched_forms if f.op == name]
        if not forms:
            return False
        ins, outs = operand_kinds(op, "ins", self.operand_kind), operand_kinds(op, "outs", self.operand_kind)
        form = next((f for f in forms if list(f.ins) == ins and list(f.outs) == outs), None)
        if form is None:
            return False
        self.stats.instructions += 1
        self.violation(op.pos, form.id,
                       f"{name}: {form.message['en']} (ins: {', '.join(ins)}; outs: {', '.join(outs)})")
        for result in op.results:
            self.env[result] = UNKNOWN
        return True

    def operand_kind(self, text: str) -> str:
        """tile, view or scalar: what an operand of this type is."""
        from ..asm.views import is_view_type
        from .memref_types import MemrefError, is_global, parse_memref

        text = self.resolve_type(text)
        if text.startswith(("!pto.tile_buf", "!pto.tile<")):
            return "tile"
        if is_view_type(text):  # the asm reader's view types and their aliases
            return "view"
        if text.startswith("memref<"):
            try:
                mt = parse_memref(text, self.spec)
            except MemrefError:
                return "scalar"
            return "view" if mt is None or is_global(self.spec, mt) else "tile"
        return "scalar"

    def database_instruction(self, op: Operation, spec_op) -> None:
        """A statement of a database instruction (``spec_op``), as it is written."""
        if self.unmatched_form(op, spec_op.name):
            return
        if all(m.cross_core for m in spec_op.modes) and not self._parses(op):
            # the dialect's lowered FIFO forms pass a !pto.pipe handle (made by initialize_l2g2l_pipe, which
            # the database does not have); the database spells the pipe's parameters as attributes
            self.unknown(op)
            return
        self.instruction(op, spec_op.name)

    def result_value(self, what: str) -> int:
        sub = (self.side.index, self.side.count) if self.side is not None and self.side.kind == "vector" else (0, 1)
        return {"block_idx": self.block_idx, "block_num": self.blocks, "subblock_idx": sub[0],
                "subblock_num": sub[1]}[what]

    def unknown(self, op: Operation) -> None:
        self.stats.unknown[op.name] += 1
        self.stats.first_unknown.setdefault(op.name, op.pos)
        if not self.checking:
            raise ProgramError(f"{op.name} is not an instruction of the database (nor of the program layer); "
                               "the interpreter cannot run it", "program.unknown-instruction", op.pos)
        for name in op.results:
            self.env[name] = UNKNOWN
        for region in op.regions:
            for block in region:
                for name, _ty in block.args:
                    self.env[name] = UNKNOWN
                for inner in block.ops:
                    if inner.name not in ("scf.yield", "scf.condition"):
                        self.step(inner)

    # -- database instructions ----------------------------------------------------------------------
    def line_text(self, op: Operation) -> str:
        parts, prev = [f"{', '.join(op.results)} = {op.name}" if op.results else op.name], None
        typed = _typed_values(op) if any(t.text.startswith("memref<") for t in op.tail) else {}
        dialect = {self.spec.layout_attribute, *self.spec.informational_attributes, *self.spec.ordering,
                   self.spec.acc_to_vec.attribute if self.spec.acc_to_vec else ""} - {""}
        dropped, given = _line_attributes(op, dialect) if any(t.text == "{" for t in op.tail) else (set(), {})
        if self.spec.layout_attribute in given:
            self.memo.line_layouts[id(op)] = given[self.spec.layout_attribute]
        if given:
            self.memo.line_attributes[id(op)] = given
        for k, t in enumerate(op.tail):
            if k in dropped:
                continue
            gap = " " if prev is None or t.start > prev.end else ""
            text = self.resolve_type(t.text) if t.kind in ("type", "ident") else t.text
            if t.kind == "type" and text in self.spec.struct_values:  # a struct passed as a vector (struct_values)
                text = self.spec.struct_values[text][0]
            if k in typed and text.startswith("memref<"):
                text = self.memref_operand_type(op, text, typed[k])
            parts.append(gap + text)
            prev = t
        return "".join(parts)

    def memref_operand_type(self, op: Operation, text: str, name: str) -> str:
        """The tile or view type of a memref operand (the lowered form, ``memrefs``): the type of the tile or the
        view the value is, else the one its memref type spells (an on-chip tile of the default configuration)."""
        from .memref_types import MemrefError, is_global, parse_memref, tile_of, view_of

        value = self.env.get(name)
        if isinstance(value, TileBuffer):
            return format_type(value.desc, self.db.isa)
        if isinstance(value, PartitionView):
            return format_type(value.desc(), self.db.isa)
        try:
            mt = parse_memref(text, self.spec)
            if mt is None:
                return text
            if is_global(self.spec, mt):
                return format_type(view_of(mt, "ND", None), self.db.isa)
            return format_type(tile_of(self.spec, self.db.isa, mt), self.db.isa)
        except MemrefError as exc:
            raise ProgramError(f"{name}: {exc}", "program.type", op.pos) from None

    def _parses(self, op: Operation) -> bool:
        try:
            self.parsed(op)
        except ProgramError:
            return False
        return True

    def parsed(self, op: Operation, text: str | None = None, mode: str | None = None, step: int = -1) -> ParsedLine:
        key = id(op) if step < 0 else (id(op), step)
        if key not in self.memo.parsed:
            try:
                self.memo.parsed[key] = parse_line(self.db, text or self.line_text(op), mode, profile=self.profile,
                                                           signless=True)
            except PtospecError as exc:
                self.memo.parsed[key] = exc
        got = self.memo.parsed[key]
        if isinstance(got, PtospecError):
            raise ProgramError(got.message, got.rule or "asm.syntax", op.pos)
        return got

    def instruction(self, op: Operation, name: str, text: str | None = None, mode: str | None = None,
                    step: int = -1, label: str | None = None) -> None:
        """Validate and run one instruction (``text``: its line in ptospec's spelling when the dialect's differs,
        ``mode`` its mode when the dialect's spelling decides it, ``step`` its place in the steps a statement is
        lowered to; ``label`` names it in messages when it is such a step)."""
        self.stats.instructions += 1
        try:
            line = self.parsed(op, text, mode, step)
        except ProgramError as exc:
            if not self.checking:
                raise
            self.findings.append(Finding(op.pos, exc.rule, exc.message, "violation"))
            return
        bound = self.bind_operands(op, line)
        self.convert_scalars(op, line, bound)
        self.consumer_layouts(line, bound.operands)
        self.line_layout(op, bound.operands)
        report = validate(self.db, line.op, line.mode, self.profile, bound.operands, line.implied, self.state)
        self.violations(op.pos, [(v.rule, f"{label or name} {line.mode}: "
                                 + (f"({', '.join(v.operands)}) " if v.operands else "") + v.message)
                                 for v in report.violations] + self.dialect_attributes(op, line, bound.operands))
        if report.deferred:
            self.findings.append(Finding(op.pos, f"{name}.deferred", f"{name} {line.mode}: checked at run time: "
                                         f"{', '.join(report.deferred)}", "deferred"))
        if not report.violations:
            self.aliases(op, name, line, bound.operands, bound.data, bound.tiles)
        if op.results:
            self.bind(op, [bound.fresh.get(o, UNKNOWN) for o in _result_operands(line, op)])
        if report.violations:
            return
        mode_spec = self.db.op(line.op).mode(line.mode)
        if not self.state_ready(op, name, line, mode_spec, bound.operands):
            return
        self.stats.legal += 1
        if not self.checking:
            self.run_instruction(op, name, line, mode_spec, bound, report, label)
        elif self.tracer is not None:  # the static hazard check: what the line touches, as far as known
            self.tracer.checked(op, line, bound.operands, bound.tiles, bound.buffers)

    def dialect_attributes(self, op: Operation, line: ParsedLine, operands: dict) -> list[tuple[str, str]]:
        """The rules the line's dialect attributes break (``line_attributes``: ordering ones, TMOV's
        accToVecMode); a run stops at an accToVecMode other than the default, which writes a vector buffer the
        interpreter does not model."""
        given = self.memo.line_attributes.get(id(op), {})
        broken = []
        for attr, spelled in given.items():
            if attr in self.spec.ordering:
                ops, values = self.spec.ordering[attr]
                if line.op not in ops or spelled not in values:
                    broken.append(("program.line-attribute", f"{line.op}: {attr} = {spelled} is not read on this "
                                   f"instruction (it takes {attr} on {', '.join(sorted(ops))}: "
                                   f"{', '.join(sorted(values))})"))
        atv = self.spec.acc_to_vec
        spelled = given.get(atv.attribute) if atv else None
        if spelled is None:
            return broken
        if line.op not in atv.ops or spelled not in atv.modes:
            return [*broken, ("program.line-attribute", f"{line.op}: {atv.attribute} = {spelled} is not read on this "
                              f"instruction (it takes {', '.join(atv.modes)} on {', '.join(sorted(atv.ops))})")]
        spec = self.db.op(line.op)
        mode = spec.mode(line.mode)
        tiles = {o.name: operands[o.name] for o in mode.operands if isinstance(operands.get(o.name), TileDesc)}
        modes = {m.name: m.name for m in spec.modes}  # the op's modes stand for themselves
        scope = Scope(isa=self.db.isa, tiles=tiles, values={**modes, "mode": mode.name})
        values = {name: int(bool(evaluate(node, scope))) for name, node in atv.values}
        values["dual"] = atv.modes[spelled][1]
        found = self.rule_errors(op, "acc_to_vec_mode", values, label=f"{line.op} {line.mode}: {atv.attribute} = "
                                 f"{spelled}")
        broken += found
        if not found and not self.checking and spelled != atv.default:
            where = "splits the tile between the buffers of vector sub-blocks 0 and 1" if values["dual"] else \
                f"writes vector sub-block {atv.modes[spelled][0]}'s buffer"
            raise ProgramError(f"{line.op}: {atv.attribute} = {spelled} {where}; the interpreter models sub-block "
                               "0's buffer only", "program.unsupported", op.pos)
        return broken

    def convert_scalars(self, op: Operation, line: ParsedLine, bound: Bound) -> None:
        """A scalar whose C++ parameter is a tile's element type takes that type, its value converted as C++
        converts it (``scalar_args``)."""
        for scalar, tile in declared_scalars(self.db.ops[line.op].mode(line.mode)).items():
            desc, target = bound.operands.get(scalar), bound.operands.get(tile)
            if not isinstance(desc, ScalarDesc) or not isinstance(target, TileDesc) or desc.dtype == target.dtype:
                continue
            bound.operands[scalar] = ScalarDesc(target.dtype)
            if scalar in bound.data:
                try:
                    bound.data[scalar] = converted_scalar(self.db.isa, bound.data[scalar], target.dtype)
                except ValueError as exc:
                    raise ProgramError(f"{scalar}: {exc}", "program.type", op.pos) from None

    def bind_operands(self, op: Operation, line: ParsedLine) -> Bound:
        """The line's operands as the validator and the executor take them, from the values they name."""
        bound = Bound()
        for oname, desc in line.operands.items():
            if isinstance(desc, AttrDesc):
                bound.operands[oname] = desc
                continue
            value = _RESULT if line.values[oname] in op.results else self.get(line.values[oname])
            if isinstance(desc, ScalarDesc):
                bound.operands[oname] = desc
                if isinstance(value, int | float):
                    bound.data[oname] = value
                elif not self.checking:
                    raise ProgramError(f"{oname}: {line.values[oname]} is not a number", "program.type", op.pos)
            elif isinstance(desc, GlobalDesc):
                self._bind_global(op, line, oname, desc, value, bound)
            else:
                self._bind_tile(op, line, oname, desc, value, bound)
        return bound

    def _bind_global(self, op: Operation, line: ParsedLine, oname: str, desc: GlobalDesc, value, bound: Bound) -> None:
        if not isinstance(value, PartitionView):
            if self.checking and value is UNKNOWN:
                bound.operands[oname] = desc.with_(strides=(None,) * desc.rank, offset=None, size=None)
                return
            raise ProgramError(f"{oname}: {line.values[oname]} is not a partition of a tensor view", "program.type",
                               op.pos)
        actual = value.desc()
        if actual.dtype != desc.dtype or len(actual.shape) != len(desc.shape) or any(
                a is not None and d is not None and a != d for a, d in zip(actual.shape, desc.shape, strict=True)):
            raise ProgramError(f"{oname}: the line's type {desc.shape}x{desc.dtype} does not match the view "
                               f"{actual.shape}x{actual.dtype}", "program.type", op.pos)
        bound.operands[oname] = actual
        bound.buffers[oname] = value.tensor.ptr.buffer
        if not self.checking:
            bound.data[oname] = value.tensor.ptr.buffer.array

    def new_tile(self, op: Operation | None, desc: TileDesc, nbytes: int = 0, traced: bool = True) -> TileBuffer:
        """A new tile of type ``desc`` (its valid shape the type's, ``?`` unknown) with zeroed storage of its own
        (at least ``nbytes``) when running, announced to the tracer unless not ``traced`` (``op``: the operation
        making it; None only for an untraced kernel argument)."""
        tile = TileBuffer(desc, (UNKNOWN if desc.valid_row is None else desc.valid_row,
                                 UNKNOWN if desc.valid_col is None else desc.valid_col), isa=self.db.isa)
        if not self.checking:
            tile.np_dtype = numpy_dtype(self.db, desc.dtype)
            tile.storage = np.zeros(max(nbytes, storage_bytes(self.db.isa, desc)), np.uint8)
            if traced and op is not None and self.tracer is not None:
                self.tracer.alloc(op, tile)
        return tile

    def _bind_tile(self, op: Operation, line: ParsedLine, oname: str, desc: TileDesc, value, bound: Bound) -> None:
        if value is _RESULT:  # a result of this line (the SSA forms): a new tile of the line's type
            # a new tile of its own (a view is placed by its base)
            view = bool(self.db.op(line.op).mode(line.mode).operand(oname).alias_of)
            value = self.new_tile(op, desc, traced=not view)
            bound.fresh[oname] = value
        if not isinstance(value, TileBuffer):
            if self.checking and value is UNKNOWN:
                bound.operands[oname] = desc
                return
            raise ProgramError(f"{oname}: {line.values[oname]} is not a tile buffer", "program.type", op.pos)
        static = value.desc
        if (desc.loc, desc.dtype, desc.rows, desc.cols, desc.blayout, desc.slayout) != \
                (static.loc, static.dtype, static.rows, static.cols, static.blayout, static.slayout):
            raise ProgramError(f"{oname}: the line's type does not match {line.values[oname]}'s allocation",
                               "program.type", op.pos)
        bound.operands[oname] = value.current()
        bound.tiles[oname] = value
        if not self.checking and oname not in bound.fresh:
            bound.data[oname] = value.elements()

    def state_ready(self, op: Operation, name: str, line: ParsedLine, mode, operands: dict) -> bool:
        """Whether every configuration register the instruction reads was set by an earlier statement (else a
        violation); a configuration instruction's registers count as set from here on."""
        unset = [r for r in state_reads(self.db, self.db.op(line.op), mode, self.profile, operands)
                 if r not in self.registers]
        if unset:
            setters = sorted({o.name.upper() for o in self.db.ops.values() for m in o.modes
                              if m.effect is not None and set(unset) & set(m.effect.sets)})
            self.violation(op.pos, "program.state-unset", f"{name} {line.mode} reads the {', '.join(unset)} "
                           f"register(s) on {self.profile}, which no earlier statement sets ({', '.join(setters)})")
            return False
        if mode.effect is not None:
            self.registers.update(mode.effect.sets)  # set from here on (values: self.state, when running)
        return True

    def run_instruction(self, op: Operation, name: str, line: ParsedLine, mode, bound: Bound, report,
                        label: str | None = None) -> None:
        """Run a legal instruction on its operands' data and store what it writes (``label``: as ``instruction``)."""
        operands, data, tiles, buffers = bound.operands, bound.data, bound.tiles, bound.buffers
        if mode.cross_core and self.side is not None:  # kernels running together: the FIFO moves the tile
            self.side.transfer(self, op, line, data, tiles)
            return
        if line.implied:
            self.scratch(op, name, line, operands)
        written: dict[str, np.ndarray] | None = {} if self.tracer is not None else None
        data.update({r: self.state[r] for r in mode.reads_state if r in self.state})  # registers set earlier
        # kernels running together share global memory: an instruction reads and writes whole buffers at once
        with self.side.hub.memory if self.side is not None else nullcontext():
            try:
                outputs = execute(self.db, line.op, line.mode, self.profile, operands, data, written, report=report)
                # a configuration instruction's registers stay set for the statements after it
                self.state.update(register_values(self.db, self.db.op(line.op), mode, self.profile, operands, data))
            except PtospecError as exc:
                raise ProgramError(f"{label or name}: {exc.message}", exc.rule or "run", op.pos) from None
            for oname, arr in outputs.items():
                if oname in tiles:
                    tiles[oname].store(arr)
                elif oname in buffers:
                    np.copyto(buffers[oname].array, arr)
        if self.tracer is not None:
            self.tracer.instruction(Executed(op, line.op, line.mode, self.profile, operands, data, tiles, buffers,
                                             tuple(outputs), written or {}))

    def consumer_layouts(self, line: ParsedLine, operands: dict) -> None:
        """A view whose shape fits ND and DN alike takes, in a TLOAD or TSTORE with a Vec tile, the tile's
        layout (``layout_inference``: the assembler repairs each such instruction)."""
        rule = self.spec.layout_inference
        if rule is None or line.op not in rule.consumers:
            return
        views = [o for o in operands if isinstance(operands[o], GlobalDesc)
                 and isinstance(v := self.env.get(line.values[o]), PartitionView) and v.tensor.decides]
        if not views:
            return
        preferred = next((p for d in operands.values() if (p := consumer_layout(rule, d)) is not None), None)
        for o in views:
            if preferred is not None:
                operands[o] = operands[o].with_(layout=preferred)

    def line_layout(self, op: Operation, operands: dict) -> None:
        """A line's layout attribute (``line_attributes``) is the global layout of its view operands."""
        spelled = self.memo.line_layouts.get(id(op))
        if spelled is None:
            return
        layout = spelled_layout(self.db.isa, spelled, op.pos)
        for name, desc in operands.items():
            if isinstance(desc, GlobalDesc):
                operands[name] = desc.with_(layout=layout)

    def aliases(self, op: Operation, name: str, line: ParsedLine, operands: dict, data: dict, tiles: dict) -> None:
        """Out tiles that are another tile's storage (``alias`` in the op file).  An instruction that makes its
        destination a view (TRESHAPE, TSUBVIEW) re-points it at the source's bytes, so later writes through
        either tile are seen by the other; an in-place one needs the program to give both on one storage."""
        spec = self.db.op(line.op)
        mode = spec.mode(line.mode)
        for o in mode.operands:
            if not o.alias_of or o.name not in tiles or o.alias_of not in tiles:
                continue
            dst, src = tiles[o.name], tiles[o.alias_of]
            at = self.alias_offset(spec, o, mode, operands, data)
            if o.alias_in_place:
                shared = _shares(dst, src, at)
                if shared is None:
                    self.findings.append(Finding(op.pos, f"{name}.deferred", f"{name}: whether {o.name} is "
                                                 f"{o.alias_of}'s storage is known at run time", "deferred"))
                elif not shared:
                    self.violation(op.pos, "program.alias", f"{name}: {o.name} must be {o.alias_of}'s storage "
                                   f"(the same tile, or tiles placed at the same address), it is not")
                continue
            if at is None:
                continue
            base, offset = (src.home or (src, 0))
            dst.home = (base, offset + at)  # known when checking too: an in-place instruction may take both
            if self.checking:
                continue
            dst.storage = self.view_bytes(base, offset + at, dst.desc)  # writes through either tile: the same bytes
            if base.place:
                dst.place = (base.place[0], base.place[1] + offset + at)

    def view_bytes(self, base: TileBuffer, at: int, desc: TileDesc):
        """The bytes a view of ``base`` from byte ``at`` on sees: in the location's buffer when ``base`` was
        placed with addr (a window may reach past its base there, as on the chip), else in ``base``'s own
        storage (as far as it goes)."""
        need = storage_bytes(self.db.isa, desc)
        if base.place and known(base.place[1]) and base.place[0] in self.onchip:
            start = base.place[1] + at
            return self.onchip[base.place[0]][start:start + need]
        return base.storage[at:at + need]

    def alias_offset(self, spec, o, mode, operands: dict, data: dict) -> int | None:
        """The byte offset of an alias (None while it depends on a value known only at run time)."""
        scope = make_scope(self.db, spec, mode, self.profile, operands)
        for name, value in data.items():
            if isinstance(operands.get(name), ScalarDesc):
                scope.values[name] = value
        try:
            at = evaluate(o.alias_at, scope)
        except PtospecError:
            return None  # depends on a value known at run time
        return int(at) if isinstance(at, int | np.integer) else None

    def scratch(self, op: Operation, name: str, line: ParsedLine, operands: dict) -> None:
        """Tiles for the operands the line leaves out (tmp, allocated by the implementation): as large as the
        first input tile, with the element type the mode gives them."""
        mode = self.db.op(line.op).mode(line.mode)
        first = next((operands[o.name] for o in mode.operands if o.role == "in"
                      and isinstance(operands.get(o.name), TileDesc)), None)
        for missing in line.implied:
            o = mode.operand(missing)
            if o.role != "tmp" or first is None:
                raise ProgramError(f"{name}: the line leaves out {missing}, which the interpreter cannot supply",
                                   "program.implied-operand", op.pos)
            like = next((operands[p.name] for p in mode.operands if p.dtype == o.dtype
                         and isinstance(operands.get(p.name), TileDesc)), first)
            operands[missing] = first.with_(dtype=like.dtype)

    # -- arith --------------------------------------------------------------------------------------
    def arith(self, op: Operation, name: str) -> None:
        c = Cursor(self, op)
        if name == "constant":
            self.constants.update(op.results)
        try:
            self.bind(op, [self._arith(c, op, name)])
        except _Skip:
            return
        except arith.ArithError as exc:
            raise ProgramError(f"{op.name}: {exc}", "program.arith", op.pos) from None

    def _arith(self, c: Cursor, op: Operation, name: str):
        if name == "constant":
            t = c.next("a constant")
            if t.kind == "ident" and t.text in ("true", "false"):
                return int(t.text == "true")
            if t.kind == "type" and t.text.startswith("dense<") and c.accept(":"):
                ty = c.type()
                if ty not in self.spec.struct_values:
                    raise c.error(f"arith.constant {t.text[:60]!r} : {ty} is not a value the interpreter reads (a "
                                  f"dense constant of {', '.join(self.spec.struct_values)} is)", t,
                                  "program.unsupported")
                from .structs import dense_fields, struct_value

                fields = dense_fields(t.text, ty, self.spec.struct_values[ty][1], t.pos(self.program.path))
                return struct_value(self, op, ty, None if self.checking else fields, op.pos)
            if t.kind != "number":
                raise c.error(f"arith.constant {t.text!r} is not a number the interpreter reads", t,
                              "program.unsupported")
            ty = c.type() if c.accept(":") else "i64"
            value = int_literal(t.text)
            if value is not None and t.text.lower().startswith("0x") and arith.is_float(ty):
                return arith.float_from_bits(value, ty)  # a float's bit pattern, as ptobc prints float constants
            if value is None:
                if len(t.text) > 400:
                    raise c.error(f"arith.constant {t.text[:40]}... is too long", t, "program.syntax")
                value = float(t.text)
            return arith.as_type(value, ty)
        if name in ("cmpi", "cmpf"):
            pred = c.next("a predicate").text
            c.expect(",")
            a = self.get(c.value(), c.peek(-1))
            c.expect(",")
            b = self.get(c.value(), c.peek(-1))
            c.expect(":")
            ty = c.type()
            return arith.compare_int(pred, a, b, ty) if name == "cmpi" else arith.compare_float(pred, a, b)
        if name == "select":
            cond = self.get(c.value(), c.peek(-1))
            c.expect(",")
            a = self.get(c.value(), c.peek(-1))
            c.expect(",")
            b = self.get(c.value(), c.peek(-1))
            if cond is UNKNOWN:
                return a if a is b else UNKNOWN
            return a if cond else b
        if name in arith.CASTS:
            v = self.get(c.value(), c.peek(-1))
            c.expect(":")
            src = c.type()
            c.expect("to")
            return arith.cast(name, v, src, c.type())
        if name == "negf":
            v = self.get(c.value(), c.peek(-1))
            c.expect(":")
            return arith.negf(v, c.type())
        if name in arith.INT_BINARY or name in arith.FLOAT_BINARY:
            a = self.get(c.value(), c.peek(-1))
            c.expect(",")
            b = self.get(c.value(), c.peek(-1))
            c.skip_attr_dict()
            c.expect(":")
            return arith.binary(name, a, b, c.type())
        self.unknown(op)
        raise _Skip


def _line_attributes(op: Operation, keys: set[str]) -> tuple[set[int], dict[str, str]]:
    """The tokens of the items of a statement's attribute dictionary whose key is one of ``keys`` (with the
    comma after or before each) and the values those items give."""
    toks = op.tail
    drop: set[int] = set()
    given: dict[str, str] = {}
    depth = 0
    for k, t in enumerate(toks):
        if t.kind == "punct" and t.text in "([":
            depth += 1
        elif t.kind == "punct" and t.text in ")]":
            depth -= 1
        elif t.kind == "punct" and t.text == "{" and depth == 0:
            end = next((j for j in range(k + 1, len(toks)) if toks[j].text == "}"), len(toks))
            items: list[list[int]] = [[]]
            for j in range(k + 1, end):
                if toks[j].kind == "punct" and toks[j].text == ",":
                    items.append([])
                else:
                    items[-1].append(j)
            kept = [it for it in items if it and toks[it[0]].text.strip('"') not in keys]
            for it in items:
                if it and toks[it[0]].text.strip('"') in keys and len(it) >= 3 and toks[it[1]].text == "=":
                    given[toks[it[0]].text.strip('"')] = "".join(toks[j].text for j in it[2:])
            if len(kept) == len([it for it in items if it]):
                continue
            drop.update(range(k, end + 1))  # rewrite the dictionary with the kept items only
            if kept:  # the kept items, each but the last with the comma after it
                drop.difference_update({k, end} | {j for it in kept for j in it}
                                       | {it[-1] + 1 for it in kept[:-1]})
    return drop, given


def _typed_values(op: Operation) -> dict[int, str]:
    """Which value each type token of a statement types (token index -> value name): in each parenthesised
    list ``(%a, %b : T1, T2)`` and at the top level ``%a, %b : T1, T2 -> R`` the k-th type is the k-th value's,
    and a result type after ``->`` is the k-th result's."""
    typed: dict[int, str] = {}
    groups: list[list] = [[[], False, 0]]  # values, after ':', types seen
    for k, t in enumerate(op.tail):
        group = groups[-1]
        if t.kind == "punct" and t.text == "(":
            groups.append([[], False, 0])
        elif t.kind == "punct" and t.text == ")" and len(groups) > 1:
            groups.pop()
        elif t.kind == "punct" and t.text == ":":
            group[1] = True
        elif t.kind == "punct" and t.text == "->" and len(groups) == 1:
            groups[0] = [list(op.results), True, 0]
        elif t.kind == "value" and not group[1]:
            group[0].append(t.text)
        elif t.kind in ("type", "ident") and group[1]:  # a scalar's type (f32, index) is an ident
            if group[2] < len(group[0]):
                typed[k] = group[0][group[2]]
            group[2] += 1
    return typed


class _Skip(Exception):
    """An operation already recorded as unknown (its results are unknown)."""


def functions(program: Program) -> list[Operation]:
    found = []

    def visit(ops):
        for op in ops:
            if op.name == "func.func":
                found.append(op)
            elif op.name == "module":
                for region in op.regions:
                    for block in region:
                        visit(block.ops)

    visit(program.top)
    return found


# -- functions ------------------------------------------------------------------------------------------
def func_signature(w: Walker, func: Operation) -> list[tuple[str, str]]:
    c = Cursor(w, func)
    while c.peek() is not None and c.peek().kind == "ident":  # private, public, nested
        c.i += 1
    c.next("a name")
    c.expect("(")
    args = []
    while not c.at(")"):
        v = c.value()
        c.expect(":")
        args.append((v, c.type()))
        c.skip_attr_dict()
        if not c.accept(","):
            break
    c.expect(")")
    return args


def call_function(w: Walker, func: Operation, args: list) -> list:
    w.depth += 1
    if w.depth > MAX_CALL_DEPTH:
        raise ProgramError(f"calls nested deeper than {MAX_CALL_DEPTH}", "program.call-depth", func.pos)
    saved = w.env, w.constants, w.function
    w.env, w.constants, w.function = {}, set(), func
    try:
        if not func.regions:
            raise ProgramError(f"function @{w.symbol(func)} has no body", "program.syntax", func.pos)
        block = func.regions[0][0]
        params = func_signature(w, func)
        if len(params) != len(args):
            raise ProgramError(f"@{w.symbol(func)} takes {len(params)} argument(s), got {len(args)}",
                               "program.call", func.pos)
        for (name, _ty), v in zip(params, args, strict=True):
            w.env[name] = v
        try:
            for op in block.ops:
                w.step(op)
        except Return as ret:
            return ret.values
        return []
    finally:
        w.env, w.constants, w.function = saved
        w.depth -= 1


def pointer_type(text: str) -> str | None:
    m = _PTR.match(text.strip())
    return m.group(1) if m else None
