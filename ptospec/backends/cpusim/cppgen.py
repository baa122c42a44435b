"""C++ generated from the spec alone: tile types, one driver function per static shape group
("variant"), translation units holding many variants behind a dispatch table, per-case parameter
files, and standalone repro programs.

Nothing here knows any op: the call is ``mode.cpp_name`` applied to ``mode.cpp_args``; each operand's
role (``in``/``out``/``tmp``/``scalar``/``attr``) says how it is set up (an ``attr`` is its ISA enum's
enumerator, a compile-time constant of the variant); each tile descriptor becomes a
``pto::Tile<Loc, DType, Rows, Cols, BLayout, DYNAMIC, DYNAMIC, SLayout, Fractal, PadValue>`` (valid
shapes are always dynamic so that one compiled variant serves every valid region).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ... import attrs
from ...conformance.backend import Invocation
from ...cpp_types import conv_tile_type, dynamic_global_type
from ...errors import PtospecError
from ...model import CPP_LITERAL, Database
from ...tile import GLOBAL_RANK, AttrDesc, GlobalDesc, ScalarDesc, TileDesc
from .harness import HEADER_NAME, TRAP_EXIT

ROLES = ("in", "out", "tmp", "scalar", "attr")
FILL_BYTE = 0x5A  # storage outside the logical tile, guard gaps and tmp tiles start with this byte

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CPP_KEYWORDS = frozenset({
    "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const",
    "constexpr", "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "export",
    "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable",
    "namespace", "new", "noexcept", "not", "nullptr", "operator", "or", "private", "protected", "public",
    "register", "return", "short", "signed", "sizeof", "static", "struct", "switch", "template", "this",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void",
    "volatile", "while", "main",
})


class Unplannable(Exception):
    """The case cannot be expressed as a driver (the backend skips it with this reason)."""


@dataclass(frozen=True)
class OperandPlan:
    name: str  # spec operand name (file names, parameters)
    ident: str  # C++ identifier of the variable
    role: str  # in | out | tmp | scalar | attr
    cpp: str  # C++ type: a Tile<...>, the scalar's element type or the attribute's enum type
    dtype: str  # ISA dtype name ("" for an attr)
    value: str = ""  # attr: the enumerator (e.g. GT) or the immediate as C++ text (true, 1)
    kind: str = "tile"  # in/out: "tile" or "global" (a GlobalTensor view of a host buffer)
    scoped: bool = True  # attr: the value is an enumerator of ``cpp`` (written cpp::value)

    @property
    def cpp_value(self) -> str:
        """An attribute's value as a C++ expression."""
        return f"{self.cpp}::{self.value}" if self.scoped else self.value

    @property
    def is_tile(self) -> bool:
        return self.role in ("in", "out", "tmp") and self.kind == "tile"

    @property
    def is_global(self) -> bool:
        return self.kind == "global"


@dataclass(frozen=True)
class ConvPlan:
    """A ``ConvTile`` over a loaded Mat tile's storage, its fields set by setter calls (``cpp.conv_tile``)."""

    ident: str
    cpp: str  # ConvTile<TileType::Loc, T, elements, Layout::NC1HWC0, ConvTileShape<N, C1, H, W, C0>>
    data: str  # identifier of the tile holding the storage
    calls: tuple[tuple[str, tuple[str, ...]], ...]  # (setter, C++ arguments)


@dataclass(frozen=True)
class VariantPlan:
    """One static shape group of one op mode: everything a compiled driver function fixes."""

    op: str
    mode: str
    call: str  # C++ function name
    args: tuple[str, ...]  # C++ identifiers, in call order
    operands: tuple[OperandPlan, ...]  # in the mode's operand order
    arrays: tuple[tuple[str, str, str, tuple[str, ...]], ...] = ()  # (ident, array type, element, member idents)
    conv: ConvPlan | None = None  # a ConvTile argument built from operands

    @property
    def signature(self) -> str:
        """Identity of the compiled code (same signature = same driver function)."""
        parts = [f"{o.role}:{o.name}:{o.cpp}{'=' + o.value if o.value else ''}" for o in self.operands]
        arrays = [f"{name}={cpp}{{{','.join(members)}}}" for name, cpp, _, members in self.arrays]
        conv = [f"{self.conv.ident}={self.conv.cpp}{self.conv.calls}"] if self.conv else []
        return f"{self.op}/{self.mode}/{self.call}({','.join(self.args)})|" + "|".join([*parts, *arrays, *conv])

    @property
    def template(self) -> str:
        """The driver's code with the operand types left out: variants of one template differ only in the
        types (tiles, scalars, attribute enumerators), so when one of them compiles the others' call
        errors come from their types (``outcome.from_build``)."""
        parts = [f"{o.role}:{o.name}:{o.kind}" for o in self.operands]
        return f"{self.op}/{self.mode}/{callee(self)}({','.join(self.args)})|" + "|".join(parts)

    @property
    def dtypes(self) -> tuple[str, ...]:
        return tuple(o.dtype or o.value for o in self.operands)

    def operand(self, name: str) -> OperandPlan:
        for o in self.operands:
            if o.name == name:
                return o
        raise KeyError(name)


def cpp_identifier(name: str) -> str:
    """The operand's name when it is a usable C++ identifier, else a sanitised one."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not _IDENT.match(ident):
        ident = f"o_{ident}"
    if ident in _CPP_KEYWORDS:
        ident = f"{ident}_"
    return ident


def tile_type(db: Database, desc: TileDesc) -> str:
    """``Tile<...>`` spelling of a descriptor, with dynamic valid shape."""
    cpp = db.isa.dtypes[desc.dtype].cpp
    compact = "" if desc.compact == db.isa.tile_defaults["compact"] else f", CompactMode::{desc.compact}"
    return (f"Tile<TileType::{desc.loc}, {cpp}, {desc.rows}, {desc.cols}, BLayout::{desc.blayout}, DYNAMIC, DYNAMIC, "
            f"SLayout::{desc.slayout}, {desc.fractal}, PadValue::{desc.pad}{compact}>")


def plan_variant(db: Database, inv: Invocation) -> VariantPlan:
    """The driver variant for one invocation; ``Unplannable`` says why there is none."""
    mode = db.op(inv.op).mode(inv.mode)
    if not mode.cpp_name:
        raise Unplannable(f"{inv.op} mode {inv.mode} has no C++ intrinsic in the spec")
    operands: list[OperandPlan] = []
    idents: dict[str, str] = {}
    for o in mode.operands:
        if o.role not in ROLES:
            raise Unplannable(f"operand {o.name} has role {o.role!r}, which the cpusim driver does not handle")
        desc = inv.tiles.get(o.name)
        if desc is None:
            raise Unplannable(f"operand {o.name} has no descriptor")
        ident = cpp_identifier(o.name)
        if ident in idents.values():
            ident = f"{ident}_{len(idents)}"
        idents[o.name] = ident
        if o.role == "attr":
            if not isinstance(desc, AttrDesc) or not attrs.is_legal(db.isa, o, desc.value):
                raise Unplannable(f"attribute {o.name} has no legal value ({attrs.describe(db.isa, o)})")
            value = str(desc.value) if not o.is_typed_attr else attrs.cpp_value(db.isa, o, desc.value)
            operands.append(OperandPlan(o.name, ident, o.role, attrs.cpp_type(db.isa, o), "", value,
                                        scoped=not o.is_typed_attr))
            continue
        if o.role == "scalar":
            if not isinstance(desc, ScalarDesc):
                raise Unplannable(f"scalar operand {o.name} was given a tile")
            operands.append(OperandPlan(o.name, ident, o.role, db.isa.dtypes[desc.dtype].cpp, desc.dtype))
            continue
        if o.is_global:
            if not isinstance(desc, GlobalDesc):
                raise Unplannable(f"global operand {o.name} was given a tile or scalar")
            if not desc.known:
                raise Unplannable(f"global operand {o.name} has a dynamic shape, stride, offset or size")
            operands.append(OperandPlan(o.name, ident, o.role, dynamic_global_type(db.isa, desc), desc.dtype,
                                        kind="global"))
            continue
        if not isinstance(desc, TileDesc):
            raise Unplannable(f"tile operand {o.name} was given a scalar")
        if desc.valid_row is None or desc.valid_col is None:
            raise Unplannable(f"operand {o.name} has an unknown (dynamic) valid shape")
        operands.append(OperandPlan(o.name, ident, o.role, tile_type(db, desc), desc.dtype))
    written = [str(a).lower() if isinstance(a, bool) else str(a) for a in mode.cpp_args]  # YAML true -> "true"
    arrays = []
    for arr in mode.cpp_arrays:  # an array argument is declared from its scalar members
        ident = cpp_identifier(arr.name)
        if ident in idents.values():
            ident = f"{ident}_{len(idents)}"
        arrays.append((ident, arr.cpp, arr.element, tuple(idents[m] for m in arr.members)))
        idents[arr.name] = ident
    conv = _conv_plan(db, inv, mode, idents)
    missing = [a for a in written if a.removeprefix("&") not in idents and not CPP_LITERAL.fullmatch(a)]
    if missing:
        raise Unplannable(f"cpp.args names {', '.join(missing)}, which are not operands of {inv.op} {inv.mode}")
    structs = {o.name: o.cpp_struct for o in mode.operands if o.cpp_struct}
    # operands by identifier (&x: by address; a struct result as a view of its tile's first elements), literals
    # verbatim
    args = tuple(f"&{idents[a[1:]]}" if a.startswith("&") else
                 f"*reinterpret_cast<{structs[a]}*>({idents[a]}.data())" if a in structs else idents.get(a, a)
                 for a in written)
    call = mode.cpp_name
    if mode.cpp_template:  # explicit template arguments: operand types, attribute enumerators, C++ text
        by_name = {o.name: o for o in operands}

        def argument(a: str) -> str:
            o = by_name.get(a)
            if o is None:
                return a
            return o.cpp_value if o.role == "attr" else f"{o.ident}_t"

        call = f"{call}<{', '.join(argument(a) for a in mode.cpp_template)}>"
    return VariantPlan(inv.op, inv.mode, call, args, tuple(operands), tuple(arrays), conv)


def _conv_plan(db: Database, inv: Invocation, mode, idents: dict[str, str]) -> ConvPlan | None:
    """The ConvTile of ``cpp.conv_tile``: its shape is static, like every tile shape of a variant."""
    spec = mode.cpp_conv_tile
    if spec is None:
        return None
    if not isinstance(inv.tiles[spec.data], TileDesc):
        raise Unplannable(f"the ConvTile's storage {spec.data} was given a scalar")
    try:
        cpp = conv_tile_type(db, db.op(inv.op), mode, inv.profile, inv.tiles)
    except (ValueError, PtospecError) as exc:
        raise Unplannable(str(exc)) from None
    ident = cpp_identifier(spec.name)
    if ident in idents.values():
        ident = f"{ident}_{len(idents)}"
    calls = tuple((setter, tuple(idents[a] if isinstance(a, str) else str(a) for a in args))
                  for setter, args in spec.calls)
    plan = ConvPlan(ident, cpp, idents[spec.data], calls)
    idents[spec.name] = ident
    return plan


# ------------------------------------------------------------------ translation units


def _variant_body(plan: VariantPlan) -> list[str]:
    """Declarations, set-up, the call and the dump: the body of one driver function."""
    lines: list[str] = []
    for o in plan.operands:
        if o.is_tile:
            dims = f"ptocs_case.dim(\"{o.name}.vr\"), ptocs_case.dim(\"{o.name}.vc\")"
            lines.append(f"    {o.ident}_t {o.ident}({dims});")
            role = {"in": "In", "out": "Out", "tmp": "Tmp"}[o.role]
            lines.append(f"    ptocs_bench.tile({o.ident}, \"{o.name}\", ptocs::Role::{role});")
        elif o.is_global:  # a host buffer (its blob is the whole buffer) and the view on it
            role = {"in": "In", "out": "Out"}[o.role]
            shape = ", ".join(f"ptocs_case.dim(\"{o.name}.d{k}\")" for k in range(GLOBAL_RANK))
            stride = ", ".join(f"ptocs_case.dim(\"{o.name}.s{k}\")" for k in range(GLOBAL_RANK))
            lines.append(f"    auto* {o.ident}_buf = static_cast<typename {o.ident}_t::RawDType*>(ptocs_bench.global("
                         f"\"{o.name}\", ptocs::Role::{role}, ptocs_case.dim(\"{o.name}.size\"), "
                         f"sizeof(typename {o.ident}_t::RawDType)));")
            lines.append(f"    {o.ident}_t {o.ident}({o.ident}_buf + ptocs_case.dim(\"{o.name}.offset\"), "
                         f"typename {o.ident}_t::Shape({shape}), typename {o.ident}_t::Stride({stride}));")
        elif o.role == "attr":
            lines.append(f"    const {o.cpp} {o.ident} = {o.cpp_value};")
        else:
            lines.append(f"    const {o.cpp} {o.ident} = ptocs_bench.scalar<{o.cpp}>(\"{o.name}\");")
    return lines + setup_and_call(plan)


def setup_and_call(plan: VariantPlan) -> list[str]:
    """After the operands' declarations: the struct values (arrays), the ConvTile over the loaded tile's storage
    with its fields set one by one, and the call."""
    lines = []
    for ident, cpp, element, members in plan.arrays:
        values = ", ".join(f"static_cast<{element}>({m})" for m in members)
        lines.append(f"    {cpp} {ident} = {{{values}}};")
    if plan.conv is not None:
        c = plan.conv
        lines.append(f"    {c.cpp} {c.ident};")
        lines.append(f"    {c.ident}.data() = {c.data}.data();")
        lines += [f"    {c.ident}.{setter}({', '.join(args)});" for setter, args in c.calls]
    lines.append(call_statement(plan))
    return lines


def call_statement(plan: VariantPlan) -> str:
    """The driver's line calling the intrinsic (diagnostics rooted at it come from the call)."""
    return f"    {plan.call}({', '.join(plan.args)});"


def variant_block(name: str, plan: VariantPlan) -> list[str]:
    mode_desc = ", ".join(f"{o.name}={o.dtype}" for o in plan.operands)
    out = [f"// {name}: {plan.call} ({plan.op} {plan.mode}; {mode_desc})", f"namespace {name} {{",
           "using namespace pto;"]
    out += [f"using {o.ident}_t = {o.cpp};" for o in plan.operands if o.role != "attr"]
    out += ["void run(ptocs::Case& ptocs_case)", "{", "    ptocs::Bench ptocs_bench(ptocs_case);"]
    out += _variant_body(plan)
    out += ["    ptocs_bench.finish();", "}", f"}} // namespace {name}", ""]
    return out


@dataclass(frozen=True)
class UnitSource:
    text: str
    names: tuple[str, ...]  # variant names, in the order of ``plans``
    spans: dict[str, tuple[int, int]]  # variant name -> first and last line (1-based) of its code
    calls: dict[str, tuple[int, str]] = field(default_factory=dict)  # variant -> line of its call, callee name


def callee(plan: VariantPlan) -> str:
    """The called function's name as clang names it in diagnostics (without explicit template arguments)."""
    return plan.call.split("<", 1)[0]


def variant_name(index: int) -> str:
    return f"v{index}"


def render_unit(plans: Sequence[VariantPlan], names: Sequence[str] | None = None) -> UnitSource:
    """One translation unit: every variant in its own namespace, then the dispatch table and main."""
    names = tuple(names) if names is not None else tuple(variant_name(i) for i in range(len(plans)))
    lines = ["// generated by ptospec cpusim -- do not edit", f"#include \"{HEADER_NAME}\"", ""]
    spans: dict[str, tuple[int, int]] = {}
    calls: dict[str, tuple[int, str]] = {}
    for name, plan in zip(names, plans, strict=True):
        first = len(lines) + 1
        block = variant_block(name, plan)
        calls[name] = (first + block.index(call_statement(plan)), callee(plan))
        lines += block
        spans[name] = (first, len(lines))
    lines.append("static const ptocs::Variant kVariants[] = {")
    lines += [f"    {{\"{n}\", &{n}::run}}," for n in names]
    lines += ["};", "PTOCS_MAIN(kVariants)", ""]
    return UnitSource("\n".join(lines), names, spans, calls)


# ------------------------------------------------------------------ per-case files


def params(plan: VariantPlan, inv: Invocation) -> dict[str, str]:
    """The case's ``key value`` parameters: the fill byte and every tile's valid shape."""
    out = {"fill": str(FILL_BYTE)}
    for o in plan.operands:
        desc = inv.tiles[o.name]
        if isinstance(desc, TileDesc):
            out[f"{o.name}.vr"] = str(desc.valid_row)
            out[f"{o.name}.vc"] = str(desc.valid_col)
        elif isinstance(desc, GlobalDesc):  # the view: five extents and strides, its origin, the buffer's length
            for k, (d, st) in enumerate(zip(desc.dims5, desc.strides5, strict=True)):
                out[f"{o.name}.d{k}"] = str(d)
                out[f"{o.name}.s{k}"] = str(st)
            out[f"{o.name}.offset"] = str(desc.offset)
            out[f"{o.name}.size"] = str(desc.size)
    return out


def operand_bytes(db: Database, plan: VariantPlan, inv: Invocation) -> dict[str, bytes]:
    """Operand data: logical row-major tiles for inputs and output pre-fills, raw scalars."""
    from ...executor import numpy_dtype

    files: dict[str, bytes] = {}
    for o in plan.operands:
        if o.role in ("tmp", "attr"):
            continue
        value = inv.inputs.get(o.name)
        if value is None:
            raise Unplannable(f"no data for operand {o.name}")
        dt = numpy_dtype(db, o.dtype)
        arr = np.asarray(value)
        if arr.dtype != dt:
            arr = arr.astype(dt)
        files[o.name] = np.ascontiguousarray(arr).tobytes()
    return files


# ------------------------------------------------------------------ standalone repro program


def _bits_literal(arr: np.ndarray) -> tuple[str, str]:
    """(C++ unsigned type, comma-separated hex literals) of the raw element bits."""
    width = arr.dtype.itemsize
    utype = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}[width]
    raw = np.ascontiguousarray(arr).reshape(-1).view(np.dtype(f"u{width}"))
    digits = width * 2
    items = [f"0x{int(v):0{digits}x}" for v in raw]
    rows = [", ".join(items[i:i + 8]) for i in range(0, len(items), 8)]
    return utype, ",\n        ".join(rows)


REPRO_PRELUDE = f"""#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
// PTO_ASSERT under -D_DEBUG needs these two before the library headers (see docs/cpusim.md).
namespace cce {{
template <typename... Args>
inline int printf(const char* fmt, Args... args);
}}
[[noreturn]] inline void trap()
{{
    std::fflush(stdout);
    std::_Exit({TRAP_EXIT});
}}
#include <pto/pto-inst.hpp>
using namespace pto;

// Logical (row-major) element bits -> the tile's storage, through the simulator's offset function.
template <typename TileT, typename Bits>
void load(TileT& t, const Bits* bits)
{{
    t.SetValidShape(t.GetValidRow(), t.GetValidCol());  // checks valid <= shape under _DEBUG, as the driver does
    for (int r = 0; r < TileT::Rows; ++r)
        for (int c = 0; c < TileT::Cols; ++c)
            std::memcpy(t.data() + GetTileElementOffset<TileT>(r, c), &bits[r * TileT::Cols + c], sizeof(Bits));
}}

template <typename TileT>
void show(const char* name, TileT& t)
{{
    std::printf("%s (valid %dx%d):\\n", name, (int)t.GetValidRow(), (int)t.GetValidCol());
    for (int r = 0; r < TileT::Rows; ++r) {{
        for (int c = 0; c < TileT::Cols; ++c)
            std::printf(" %g", (double)t.data()[GetTileElementOffset<TileT>(r, c)]);
        std::printf("\\n");
    }}
}}
"""


def repro_core(plan: VariantPlan, inv: Invocation) -> str:
    """The part of a repro worth reading: tile types, valid shapes and the call."""
    lines = []
    for o in plan.operands:
        desc = inv.tiles[o.name]
        if isinstance(desc, TileDesc):
            lines.append(f"using {o.ident}_t = {o.cpp};")
            lines.append(f"{o.ident}_t {o.ident}({desc.valid_row}, {desc.valid_col});")
        elif o.role == "attr":
            lines.append(f"const {o.cpp} {o.ident} = {o.cpp_value};")
        else:
            lines.append(f"using {o.ident}_t = {o.cpp};")
            lines.append(f"{o.cpp} {o.ident};  // = {inv.inputs.get(o.name)!r}")
    lines.append(f"{plan.call}({', '.join(plan.args)});")
    return "\n".join(lines)


_OWN_REGION = frozenset({"Mat", "Left", "Right", "Acc", "ScaleLeft", "ScaleRight"})


def repro_program(db: Database, plan: VariantPlan, inv: Invocation, compile_hint: str) -> str:
    """A self-contained C++ program that runs one case and prints the output tiles."""
    from ...executor import numpy_dtype

    body: list[str] = []
    offsets: dict[str, int] = {}
    for o in plan.operands:
        desc = inv.tiles[o.name]
        if o.role == "attr":
            body.append(f"    const {o.cpp} {o.ident} = {o.cpp_value};")
            continue
        if isinstance(desc, ScalarDesc):
            dt = numpy_dtype(db, o.dtype)
            utype, bits = _bits_literal(np.asarray([inv.inputs[o.name]], dtype=dt))
            body.append(f"    using {o.ident}_t = {o.cpp};")
            body.append(f"    {o.cpp} {o.ident};")
            body.append(f"    {{ const {utype} bits = {bits}; std::memcpy(&{o.ident}, &bits, sizeof bits); }}")
            continue
        assert isinstance(desc, TileDesc)
        size = desc.rows * desc.cols * db.isa.dtypes[desc.dtype].bytes
        region = desc.loc if desc.loc in _OWN_REGION else "UB"  # the simulator keeps Vec, Bias, Scaling in UB
        at = offsets.get(region, 0)
        offsets[region] = at + -(-2 * size // 512) * 512 + 512
        body.append(f"    using {o.ident}_t = {o.cpp};")
        body.append(f"    {o.ident}_t {o.ident}({desc.valid_row}, {desc.valid_col});")
        body.append(f"    TASSIGN({o.ident}, 0x{at:x});")
        if o.role in ("in", "out"):
            arr = np.asarray(inv.inputs[o.name], dtype=numpy_dtype(db, o.dtype))
            utype, bits = _bits_literal(arr)
            what = "input" if o.role == "in" else "initial contents (sentinel)"
            body.append(f"    static const {utype} {o.ident}_bits[] = {{  // {what}, logical row-major")
            body.append(f"        {bits}}};")
            body.append(f"    load({o.ident}, {o.ident}_bits);")
    body.append(f"    {plan.call}({', '.join(plan.args)});")
    body += [f"    show(\"{o.name}\", {o.ident});" for o in plan.operands if o.role == "out"]
    head = [f"// ptospec cpusim repro: {inv.op} mode={inv.mode} profile={inv.profile}",
            f"// build and run: {compile_hint}"]
    return "\n".join([*head, REPRO_PRELUDE, "int main()", "{", *body, "    return 0;", "}", ""])
