"""A sample kernel's case metadata, derived from its ``.pto`` as the assembler's board-test tooling derives it
from the kernel's C++.

The assembler's sample harness compiles a kernel, writes a ``main.cpp`` that declares one buffer per pointer
parameter (``size_t elemCount_v1 = N;`` and its element size) and one value per scalar parameter
(``int32_t v4 = 1;``), and an ``outputs.txt`` naming the buffers the host reads back; a sample's golden
script reads both (``validation_runtime.load_case_meta``).  This module computes the same from the program:

* the parameters are the entry function's arguments in order, named ``v1``, ``v2``, ... as the C++ emitter
  names them, with the C types of ``specs/ptoas.yaml`` ``samples.scalar_types`` (pointers: the element type's);
* the outputs are the pointer parameters a TSTORE writes through (in parameter order), or the last pointer
  parameter when none is written;
* a buffer's element count is the largest element a global view of it reaches, ``1 + sum((extent - 1) *
  stride)`` over the view's static extents and strides plus its offset, the offset evaluated with every
  integer at the largest value it takes: scalar parameters at their default (``samples.scalar_defaults``, or
  the value of the tooling's per-case table, whose 0 main.cpp writes as the default: ``samples``
  ``zero_override_written_as_default``), a loop's induction variable at its last iteration, a value the tooling
  cannot evaluate (a comparison, a select, a division) counting 0; a buffer no view reaches gets
  ``samples.default_shape`` elements (rows x cols of the first view's last two extents, when there is one).

Views are followed in the dialect's tensor-view form (``make_tensor_view``, ``partition_view``, ``addptr``); a
kernel written in the lowered memref form gets the default element count for every buffer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import PtospecError
from ..model import Database
from ..program.api import buffer_argument, entry_function
from ..program.lexer import int_literal
from ..program.syntax import Operation, Program
from ..program.walker import Walker, func_signature
from .facts import SampleFacts

_VIEW_TYPE = re.compile(r"^!pto\.(?:partition_)?tensor_view<(.*)>$", re.S)
# arith operations the tooling's evaluator follows (C's + - * % << >> & | ^; casts are stripped)
_BINARY = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
    "arith.remsi": lambda a, b: a % b if b else None, "arith.remui": lambda a, b: a % b if b else None,
    "arith.shli": lambda a, b: a << b if b >= 0 else None, "arith.shrsi": lambda a, b: a >> b if b >= 0 else None,
    "arith.shrui": lambda a, b: a >> b if b >= 0 else None, "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b, "arith.xori": lambda a, b: a ^ b,
}
_CASTS = {"arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci"}


class MetaError(PtospecError):
    """The program has a form the derivation does not follow (the message says which)."""

    def __init__(self, message: str):
        super().__init__(message, rule="samples.meta")


@dataclass(frozen=True)
class Param:
    """One parameter of the kernel's C++ signature."""

    name: str  # v1, v2, ... (the emitter's names)
    arg: str  # the .pto argument without % (arg0)
    ctype: str  # bfloat16_t, float, int32_t
    dtype: str | None  # a pointer's element type (database name); None for a scalar
    role: str  # input | output | scalar

    @property
    def pointer(self) -> bool:
        return self.dtype is not None


@dataclass(frozen=True)
class CaseMeta:
    """What the tooling's ``main.cpp`` and ``outputs.txt`` say about a kernel."""

    kernel: str
    params: tuple[Param, ...]
    elem_counts: dict[str, int]  # pointer parameter -> elements of its buffer
    scalars: dict[str, object]  # scalar parameter -> value main.cpp gives it
    outputs: tuple[str, ...]
    host_types: dict[str, str] = field(default_factory=dict)  # pointer parameter -> host type in main.cpp

    @property
    def buffers(self) -> list[Param]:
        return [p for p in self.params if p.pointer]

    def main_cpp(self) -> str:
        """The declarations of the tooling's ``main.cpp`` its golden scripts read, in its order and spelling."""
        lines = [f"// case metadata of {self.kernel}, written by ptospec (the declarations the tooling's main.cpp has)"]
        for p in self.buffers:
            lines.append(f"    size_t elemCount_{p.name} = {self.elem_counts[p.name]};")
            lines.append(f"    size_t fileSize_{p.name} = elemCount_{p.name} * sizeof({self.host_types[p.name]});")
        for name, value in self.scalars.items():
            ctype = next(p.ctype for p in self.params if p.name == name)
            lines.append(f"    {ctype} {name} = {_c_literal(value)};")
        for p in self.buffers:
            lines.append(f'    ReadFile("./{p.name}.bin", fileSize_{p.name}, {p.name}Host, fileSize_{p.name});')
        return "\n".join(lines) + "\n"

    def outputs_txt(self) -> str:
        return "".join(f"{name}\n" for name in self.outputs)


def _c_literal(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value!r}f"
    return str(value)


def derive_meta(db: Database, program: Program, profile: str, facts: SampleFacts,
                overrides: dict[str, int] | None = None) -> CaseMeta:
    """The case metadata of ``program``'s entry function (``overrides``: the tooling's per-case scalar values,
    by C name)."""
    probe = Walker(db, program, profile, check=False)
    entry = entry_function(probe, program, None)
    params: list[Param] = []
    scalars: dict[str, object] = {}
    values: dict[str, object] = {}  # SSA value -> ("ptr", param, offset) | int | None
    for k, (arg, ty) in enumerate(func_signature(probe, entry)):
        name = f"v{k + 1}"
        found = buffer_argument(db, ty)
        if found is not None:
            dtype = found[0]
            if dtype not in db.isa.dtypes:
                raise MetaError(f"{arg}: pointer to {dtype}, which the database does not know")
            params.append(Param(name, arg[1:], db.isa.dtypes[dtype].cpp, dtype, "input"))
            values[arg] = ("ptr", name, 0)
            continue
        ctype = facts.scalar_types.get(ty)
        if ctype is None:
            raise MetaError(f"{arg}: scalar type {ty} has no C type in specs/ptoas.yaml samples.scalar_types")
        default = facts.scalar_default(ctype)
        value = int(overrides[name]) if overrides and name in overrides else default
        params.append(Param(name, arg[1:], ctype, None, "scalar"))
        scalars[name] = default if value == 0 and facts.zero_written_as_default else value
        values[arg] = value if isinstance(value, int) and not isinstance(value, bool) else None
    walk = _Walk(values)
    body = entry.regions[0][0].ops if entry.regions else ()
    walk.block(body)
    pointers = [p for p in params if p.pointer]
    stored = set(walk.stored)
    outputs = [p.name for p in pointers if p.name in stored]  # outputs.txt lists them in parameter order
    if not outputs and pointers:
        outputs = [pointers[-1].name]
    counts = {}
    rows, cols = walk.first_shape or facts.default_shape
    for p in pointers:
        counts[p.name] = walk.reach.get(p.name) or rows * cols
    params = [Param(p.name, p.arg, p.ctype, p.dtype, "output" if p.name in outputs else p.role) for p in params]
    hosts = {p.name: facts.host_types.get(p.ctype, p.ctype) for p in pointers}
    return CaseMeta(probe.symbol(entry), tuple(params), counts, scalars, tuple(outputs), hosts)


class _Walk:
    """The tooling's evaluation over the entry function: each integer at the largest value it takes."""

    def __init__(self, values: dict[str, object]):
        self.values = values
        self.reach: dict[str, int] = {}  # pointer parameter -> elements its views reach
        self.stored: list[str] = []  # pointer parameters TSTOREs write
        self.first_shape: tuple[int, int] | None = None
        self.constants: set[str] = set()  # values known when the kernel is compiled

    def int(self, tok) -> int | None:
        if tok.kind == "number":
            return int_literal(tok.text)
        v = self.values.get(tok.text)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    def block(self, ops) -> None:
        for op in ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        vals = [t for t in op.tail if t.kind in ("value", "number")]
        name = op.name
        if name == "arith.constant":
            lit = next((t for t in op.tail if t.kind == "number"), None)
            ident = next((t.text for t in op.tail if t.kind == "ident"), "")
            if ident in ("true", "false"):
                self.bind(op, int(ident == "true"))
            else:
                self.bind(op, int_literal(lit.text) if lit is not None else None)
            self.constants.update(op.results)
        elif name in _BINARY and len(vals) >= 2:
            a, b = self.int(vals[0]), self.int(vals[1])
            self.bind(op, None if a is None or b is None else _BINARY[name](a, b))
            self.fold(op, vals[:2])
        elif name in _CASTS and vals:
            self.bind(op, self.int(vals[0]))
            self.fold(op, vals[:1])
        elif name == "pto.addptr" and len(vals) >= 2:
            base = self.values.get(vals[0].text)
            off = self.int(vals[1])
            self.bind(op, ("ptr", base[1], base[2] + max(off or 0, 0)) if isinstance(base, tuple) else None)
        elif name == "pto.make_tensor_view":
            self.tensor_view(op)
        elif name == "pto.partition_view":
            self.partition_view(op)
        elif name == "scf.for":
            self.loop(op)
        elif name == "scf.if":
            self.branch(op)
        else:
            if name == "pto.tstore":
                self.store(op)
            self.use(op)
            for region in op.regions:
                for blk in region:
                    self.block(blk.ops)
            for r in op.results:
                self.values.setdefault(r, None)

    def fold(self, op: Operation, operands) -> None:
        if all(t.kind == "number" or t.text in self.constants for t in operands):
            self.constants.update(op.results)

    def bind(self, op: Operation, value) -> None:
        for r in op.results:
            self.values[r] = value

    def named(self, op: Operation, key: str) -> list:
        toks = op.tail
        for k, t in enumerate(toks):
            if t.kind == "ident" and t.text == key and k + 2 < len(toks) and toks[k + 2].text == "[":
                out, j = [], k + 3
                while j < len(toks) and toks[j].text != "]":
                    if toks[j].kind in ("value", "number"):
                        out.append(toks[j])
                    j += 1
                return out
        return []

    def static(self, tok) -> int:
        """A value the emitter writes into a template argument: a literal or a constant (-1: dynamic)."""
        v = self.int(tok)
        return v if v is not None and (tok.kind == "number" or tok.text in self.constants) else -1

    def tensor_view(self, op: Operation) -> None:
        base = self.values.get(op.tail[0].text) if op.tail else None
        if not isinstance(base, tuple):
            self.bind(op, None)
            return
        shape = self.named(op, "shape")
        strides = self.named(op, "strides")
        dims = _type_dims(_result_type(op))
        self.bind(op, ("view", base[1], base[2], dims or [self.static(t) for t in shape],
                       [self.static(t) for t in strides], [self.int(t) for t in strides]))

    def partition_view(self, op: Operation) -> None:
        view = self.values.get(op.tail[0].text) if op.tail else None
        if not (isinstance(view, tuple) and view[0] == "view"):
            self.bind(op, None)
            return
        _, param, base, _, static_strides, stride_max = view
        offsets = [self.int(t) for t in self.named(op, "offsets")]
        dims = _type_dims(_result_type(op)) or [self.static(t) for t in self.named(op, "sizes")]
        offset = base + sum(max(o or 0, 0) * max(s or 0, 0) for o, s in zip(offsets, stride_max, strict=False))
        self.bind(op, ("part", param, offset, dims, static_strides))

    def use(self, op: Operation) -> None:
        """A view an operation reads or writes is one GlobalTensor of the emitted C++."""
        for t in op.tail:
            v = self.values.get(t.text) if t.kind == "value" else None
            if isinstance(v, tuple) and v[0] in ("part", "view"):
                dims, strides = (v[3], v[4])
                if self.first_shape is None and dims:  # the emitted Shape<> pads to five dimensions with 1
                    self.first_shape = (dims[-2] if len(dims) >= 2 else 1, dims[-1])
                need = _required(dims, strides)
                if need:
                    self.reach[v[1]] = max(self.reach.get(v[1], 0), need + max(v[2], 0))

    def store(self, op: Operation) -> None:
        toks = op.tail
        for k, t in enumerate(toks):
            if t.kind == "ident" and t.text == "outs":
                dst = next((u for u in toks[k:] if u.kind == "value"), None)
                v = self.values.get(dst.text) if dst is not None else None
                if isinstance(v, tuple):
                    self.stored.append(v[1])
                return

    def loop(self, op: Operation) -> None:
        toks = op.tail
        ind = toks[0].text if toks else None
        bounds = [t for t in toks[2:] if t.kind in ("value", "number")][:3]
        lb, ub, st = (self.int(t) for t in bounds) if len(bounds) == 3 else (None, None, None)
        last = None
        if lb is not None and ub is not None and st:
            last = lb if ub <= lb or st < 0 else lb + ((ub - lb - 1) // st) * st
        self.values[ind] = last
        carried = _iter_args(op)
        for arg, init in carried:
            self.values[arg] = self.values.get(init)
        body = op.regions[0][0] if op.regions else None
        for _ in range(2 if carried else 1):  # the yielded values raise a carried value's maximum
            if body is not None:
                self.block(body.ops)
                yields = _yielded(body, self)
                for (arg, _), y in zip(carried, yields, strict=False):
                    self.values[arg] = _max(self.values.get(arg), y)
        for r, (arg, _) in zip(op.results, carried, strict=False):
            self.values[r] = self.values.get(arg)

    def branch(self, op: Operation) -> None:
        results: list = [None] * len(op.results)
        first = True
        for region in op.regions:
            for blk in region:
                self.block(blk.ops)
                ys = _yielded(blk, self)
                results = [y if first else _max(r, y) for r, y in zip(results, ys + [None] * len(results),
                                                                     strict=False)]
                first = False
        for r, v in zip(op.results, results, strict=False):
            self.values[r] = v


def _max(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _yielded(blk, walk: _Walk) -> list:
    last = blk.ops[-1] if blk.ops else None
    if last is None or last.name != "scf.yield":
        return []
    vals = []
    for t in last.tail:
        if t.kind == "punct" and t.text == ":":
            break
        if t.kind in ("value", "number"):
            vals.append(walk.int(t))
    return vals


def _iter_args(op: Operation) -> list[tuple[str, str]]:
    toks = op.tail
    for k, t in enumerate(toks):
        if t.kind == "ident" and t.text == "iter_args":
            pairs, j = [], k + 2
            while j + 2 < len(toks) and toks[j].text != ")":
                if toks[j].kind == "value" and toks[j + 1].text == "=":
                    pairs.append((toks[j].text, toks[j + 2].text))
                    j += 3
                else:
                    j += 1
            return pairs
    return []


def _result_type(op: Operation) -> str:
    types = [t.text for t in op.tail if t.kind == "type"]
    return types[-1] if types else ""


def _type_dims(ty: str) -> list[int]:
    m = _VIEW_TYPE.match(ty)
    if not m:
        return []
    parts = m.group(1).split(",")[0].split("x")
    dims = []
    for p in parts[:-1]:
        p = p.strip()
        dims.append(-1 if p == "?" else int(p) if p.isdigit() else -1)
    return dims


def _required(dims: list, strides: list) -> int | None:
    """The tooling's ``_required_elements_for_shape_stride``: 1 + sum((dim - 1) * stride) over dims > 0."""
    if not dims or not strides:
        return None
    need = 1
    for d, s in zip(dims[-len(strides):] if len(dims) > len(strides) else dims, strides, strict=False):
        if d is None or s is None:
            return None
        if d <= 0:
            continue
        need += (d - 1) * s
    return max(need, 1)
