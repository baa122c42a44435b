"""The frozen in-memory model of the ISA database, built by ``loader`` from YAML."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from .expr.ast import Node, Statement

Text = dict[str, str]  # language code -> text ("en", "zh")
AttrValue = str | int | bool  # an attribute operand's value: an enumerator, or a typed immediate

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
    emulated: tuple[str, ...] = ()  # profiles that have the type only as an emulated storage type (not in `any`)

    def exists_on(self, profile: str) -> bool:
        """Whether an op's dtype table may name this type on ``profile`` (natively or emulated)."""
        return self.profiles is None or profile in self.profiles or profile in self.emulated
    per_byte: int = 1  # values per storage byte: 2 for a packed pair of 4-bit codes (float4_e2m1x2_t)

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
class GlobalLayout:
    """A layout of global tensors (``pto::Layout``); ``order`` is None for a layout named but not modelled."""

    name: str  # C++ enumerator: ND
    asm: str  # assembly spelling: nd
    order: tuple[int, ...] | None  # dimensions from fastest-varying to slowest in a packed view
    text: Text
    tile_map: tuple[Node, ...] = ()  # indices i0..i4 of the element at tile (r, c), over r, c, d0..d4
    profiles: tuple[str, ...] = ()  # profiles whose TLOAD/TSTORE headers have a path for it


@dataclass(frozen=True)
class TileStorage:
    """Where element (r, c) of a tile lives in its storage (``tile_storage`` in specs/isa.yaml): the inner box
    of a boxed tile over ``f``, ``s``, ``w``, and per (blayout, slayout) the element offset over ``r``, ``c``,
    ``rows``, ``cols``, ``br``, ``bc``, ``w``."""

    box_rows: Node
    box_cols: Node
    offsets: dict[tuple[str, str], Node]  # (blayout, slayout) -> offset expression
    names: dict[tuple[str, str], str]  # (blayout, slayout) -> upstream name of the order (ND, Nz, ...)
    texts: dict[tuple[str, str], str] = field(default_factory=dict)  # the offset expressions as written


@dataclass(frozen=True)
class Profile:
    name: str
    title: Text
    description: Text
    constants: dict[str, int]
    basis: str  # "hardware" or "simulator"
    variants: dict[str, str] = field(default_factory=dict)  # function/reduction -> numerics variant
    numerics_text: Text = field(default_factory=dict)


@dataclass(frozen=True)
class Family:
    name: str
    title: Text
    description: Text


@dataclass(frozen=True)
class StateRegister:
    """Configuration state one instruction sets and a later one reads (``state`` in isa.yaml): named integer
    fields, each holding what the setting instruction's ``effect.sets`` computes."""

    name: str
    text: Text
    fields: dict[str, Text]  # field -> what it holds


@dataclass(frozen=True)
class UnimplementedPage:
    """An upstream tile-op page that describes nothing the headers implement (``unimplemented_pages``)."""

    page: str  # docs/isa/tile/ops/<family>/<stem>.md
    name: str  # the instruction the page is about
    page_says: Text
    headers_show: Text
    where: str = field(default="", compare=False)  # file:line of the entry, for messages

    @property
    def family(self) -> str:
        return self.page.split("/")[-2]


@dataclass(frozen=True)
class PipeUnit:
    """One pipe of a core (``pipes.units`` in isa.yaml)."""

    name: str
    enumerator: str  # its name in the synchronisation instructions (PIPE_V)
    ordered_within: tuple[str, ...]  # profiles on which dependent instructions of this pipe need no barrier
    text: Text


@dataclass(frozen=True)
class Pipes:
    units: dict[str, PipeUnit]
    source: str  # event.hpp
    order_source: str
    without_entry: tuple[tuple[tuple[str, ...], Text], ...] = ()  # (upstream names, reason)

    def by_enumerator(self, enumerator: str) -> PipeUnit | None:
        return next((u for u in self.units.values() if u.enumerator == enumerator), None)


@dataclass(frozen=True)
class PipeChoice:
    """A pipe: ``unit``, or the unit ``locations`` gives for the location of tile operand ``operand``."""

    unit: str = ""
    operand: str = ""
    locations: tuple[tuple[str, str], ...] = ()  # (tile location, unit)

    def resolve(self, location: str | None) -> str | None:
        if self.unit:
            return self.unit
        return dict(self.locations).get(location or "")

    @property
    def units(self) -> tuple[str, ...]:
        return (self.unit,) if self.unit else tuple(dict.fromkeys(u for _, u in self.locations))


@dataclass(frozen=True)
class ModePipe:
    """The pipe a mode runs on (``pipe`` of a mode): by default, and on the profiles where it differs."""

    default: PipeChoice
    profiles: tuple[tuple[str, PipeChoice], ...] = ()

    def choice(self, profile: str) -> PipeChoice:
        return dict(self.profiles).get(profile, self.default)

    def unit(self, profile: str, locations: dict[str, str]) -> str | None:
        """The unit on ``profile`` for operands at ``locations`` (operand -> tile location); None when a location
        the choice depends on is not one it names."""
        c = self.choice(profile)
        return c.resolve(locations.get(c.operand))

    @property
    def units(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(u for c in (self.default, *(c for _, c in self.profiles)) for u in c.units))

    def describe(self) -> str:
        def one(c: PipeChoice) -> str:
            return c.unit or ", ".join(f"{u} ({c.operand} in {loc})" for loc, u in c.locations)
        text = one(self.default)
        return text + "".join(f"; {p}: {one(c)}" for p, c in self.profiles)


@dataclass(frozen=True)
class SeparateIsa:
    """An upstream instruction set outside this database's one-core tile model (``separate_isas``): its pages,
    its public header and the simulator's files, recorded with the reason."""

    name: str
    pages: str  # docs/isa/<folder>/: its instruction pages
    header: str  # the header whose PTO_INST functions are its instructions
    simulator: tuple[str, ...]  # the CPU simulator's files implementing it
    reason: Text
    where: str = field(default="", compare=False)


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
    kind: str = "tile"  # in/out operands: "tile" (on-chip) or "global" (a view of global memory)
    dialect_key: str = ""  # attr operands: the PTO assembler's key, where it differs from asm_key
    dialect_default: AttrValue | None = None  # attr operands: the value the assembler assumes when it is absent
    attr_type: str = ""  # typed attr operands: "bool" or an integer dtype ("" for an enum attribute)
    attr_values: tuple[int | bool, ...] = ()  # typed attrs: the legal values, or the sample values of a range
    attr_range: tuple[int, int] | None = None  # typed integer attrs: the legal values are min..max inclusive
    alias_of: str = ""  # out tiles: the in tile whose storage this one is (TSUBVIEW, TRESHAPE, in-place fills)
    alias_at: Node | None = None  # ... from this byte of it on (None: not an alias)
    alias_at_text: str = ""
    alias_in_place: bool = False  # the caller gives this tile on the alias's storage (else the instruction
    # itself re-points it there)
    asm_type: str = ""  # scalar operands: the type assembly spells instead of the dtype (``index`` for an offset)
    sorted_stride: Node | None = None  # in tiles: each valid row holds, every this many elements, a descending run
    sorted_text: str = ""
    cpp_struct: str = ""  # out tiles: the C++ call takes this struct, whose fields are the tile's first elements
    encode: Node | None = None  # in/scalar operands: the stored value for a generated value ``x`` (packed words)
    encode_text: str = ""
    stores: str = ""  # in tiles: the dtype whose values the tile's bytes hold whatever its element type (the
    # fix-pipe's 64-bit words); generated cases size the tile and make its data in it
    sorted_block: Node | None = None  # in tiles: each run of this many elements of a row is sorted on its own
    cpp_enum: str = ""  # typed integer attrs: the C++ enum the value is cast to (static_cast<E>(1))

    @property
    def is_typed_attr(self) -> bool:
        """An attribute holding a bool or an integer (a C++ template flag), not an enumerator."""
        return self.role == "attr" and bool(self.attr_type)

    @property
    def is_attr(self) -> bool:
        return self.role == "attr"

    @property
    def is_global(self) -> bool:
        return self.kind == "global"


@dataclass(frozen=True)
class AsmForm:
    ins: tuple[str, ...]
    outs: tuple[str, ...]
    may_omit: tuple[str, ...] = ()  # operands a line may leave out (the implementation allocates them)


@dataclass(frozen=True)
class Effect:
    """What an instruction without data semantics does instead (it reads and writes no tile element)."""

    kind: str  # synchronisation | configuration | debug-output | placement | cache-hint | cross-core
    text: Text
    # configuration: state register -> field -> (value expression over the mode's operands, its text)
    sets: dict[str, dict[str, tuple[Node, str]]] = field(default_factory=dict)


@dataclass(frozen=True)
class CppArray:
    """A C++ array argument built from scalar operands (TRANDOM's ``TRandomKey key = {key0, key1}``)."""

    name: str  # the argument's name in cpp.args
    cpp: str  # the array type, e.g. pto::TRandomKey
    element: str  # the element type each member is converted to, e.g. uint32_t
    members: tuple[str, ...]  # scalar operands, in order


@dataclass(frozen=True)
class CppConvTile:
    """A C++ ``ConvTile`` argument (TIMG2COL, SETFMATRIX ...) built from operands: its storage is a Mat tile
    operand's (NC1HWC0: the tile's rows are N * C1 * H * W, its columns C0), its shape ``dims`` (N, C1, H, W,
    expressions over the operands) and the tile's columns, and its fields are set by ``calls`` of its setters
    (``SetFmapH(fmapH)``, ``SetPadList(0, padLeft)``), each argument an operand or an integer."""

    name: str  # the argument's name in cpp.args
    data: str  # the tile operand holding the feature map
    dims: tuple[Node, ...]
    dims_text: tuple[str, ...]
    calls: tuple[tuple[str, tuple[str | int, ...]], ...]
    dim_operands: tuple[str, ...] = ()  # the operands the dims name

    @property
    def members(self) -> tuple[str, ...]:
        """The operands it is built from: the data tile, the operands its shape names, each operand a setter takes."""
        seen = [self.data, *(n for n in self.dim_operands if n != self.data)]
        for _setter, args in self.calls:
            seen.extend(a for a in args if isinstance(a, str) and a not in seen)
        return tuple(seen)


@dataclass(frozen=True)
class CppType:
    """A C++ type the caller declares from attribute values (TPUSH's ``using Pipe = pto::TPipe<0, 1, 1024, 2>``)."""

    name: str  # the alias, used in cpp.template or as a cpp.arrays type
    template: str  # the class template, e.g. pto::TPipe
    members: tuple[str, ...]  # attribute operands: its template arguments, in order


@dataclass(frozen=True)
class Example:
    profile: str
    tiles: dict[str, str]  # operand -> tile descriptor text
    line: int = 0
    file: str = ""  # set when the example comes from a kind file


@dataclass(frozen=True)
class Extent:
    """How one valid extent of an operand follows a generated case's region (a term of a mode's ``shapes``):
    ``rows``/``cols`` the region's, ``inner`` a third extent (a matrix multiply's K), ``one`` exactly 1,
    ``share`` the example's share of the region; ``over`` divides the term's extent (rounded up)."""

    term: str  # rows | cols | inner | one | share
    over: int = 1


@dataclass(frozen=True)
class CaseShape:
    """How generated cases shape one tile operand from the example (``shapes:``): its valid rows and columns
    (``row``, ``col``), or the example's tile kept as it is (``fixed``)."""

    row: Extent = Extent("rows")
    col: Extent = Extent("cols")
    fixed: bool = False
    stores: str = ""  # the operand's ``stores``: its valid columns count values of this dtype, not elements

    @property
    def transposed(self) -> bool:
        """The region's rows and columns exchanged (TTRANS's source)."""
        return (self.row.term, self.col.term) == ("cols", "rows")

    @property
    def shares(self) -> bool:
        return "share" in (self.row.term, self.col.term)


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
    cpp_template: tuple[str, ...] = ()  # explicit template arguments: operand names (their types) or C++ text
    asm_tags: dict[str, str] = field(default_factory=dict)  # attributes that mark this mode's lines: key -> spelled
    bases: tuple[Example, ...] = ()  # further invocations the generated conformance cases start from
    worked: Example | None = None  # the invocation the pages work through, when the spec chooses it
    # tile operand -> how generated cases shape it from the example; an operand not named follows the region
    shapes: dict[str, CaseShape] = field(default_factory=dict)
    cpp_arrays: tuple[CppArray, ...] = ()  # array arguments of the C++ call, each built from scalar operands
    cpp_types: tuple[CppType, ...] = ()  # type aliases the caller declares from attribute values
    effect: Effect | None = None  # set for an instruction without data semantics (then no statements)
    reads_state: tuple[str, ...] = ()  # state registers its semantics read (``<register>.<field>``)
    cpp_conv_tile: CppConvTile | None = None  # a ConvTile argument of the C++ call, built from operands
    # upstream instruction names this mode specifies besides cpp_name (a legacy page docs/isa/<NAME>.md, a
    # PTO_INST function of another name): what `ptospec list --upstream` counts as covered by it
    documents: tuple[str, ...] = ()
    pipe: ModePipe | None = None  # the pipe it runs on (isa.yaml ``pipes``)

    @property
    def has_data_semantics(self) -> bool:
        return self.effect is None

    @property
    def cross_core(self) -> bool:
        """A cross-core FIFO instruction (TPUSH, TPOP, ...): its peer runs on another core, so the
        single-instruction executor refuses it (``exec.cross-core``) and no backend runs it alone."""
        return self.effect is not None and self.effect.kind == "cross-core"

    def cpp_array(self, name: str) -> CppArray | None:
        return next((a for a in self.cpp_arrays if a.name == name), None)

    @cached_property
    def examples(self) -> tuple[Example, ...]:
        """The example, then the further bases of the conformance cases."""
        return (self.example, *self.bases)

    @cached_property
    def fixed_tiles(self) -> tuple[str, ...]:
        """Tile operands generated cases keep exactly as the example gives them (``shapes: {tmp: fixed}``)."""
        return tuple(n for n, s in self.shapes.items() if s.fixed)

    @cached_property
    def attrs(self) -> tuple[Operand, ...]:
        return tuple(o for o in self.operands if o.is_attr)

    def operand(self, name: str) -> Operand:
        for op in self.operands:
            if op.name == name:
                return op
        raise KeyError(name)

    @cached_property  # worked out once: searches ask millions of times (a frozen model never changes)
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
    exact_specials: tuple[str, ...] = ()  # profiles where NaN, infinities and signed zeros are defined and tested

    def on(self, profile: str) -> Numerics:
        """The numerics a conformance run on ``profile`` compares with: where the profile defines special
        values exactly, NaN must match NaN and the sign of zero is significant."""
        if profile not in self.exact_specials:
            return self
        return replace(self, nan="propagate", signed_zero="preserved")


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
class Omission:
    """Element types a profile's header admits for a type variable that the op's table leaves out."""

    profile: str
    var: str
    dtypes: tuple[str, ...]
    modes: tuple[str, ...] = ()  # the modes whose rows leave them out (empty: every mode of the table)


@dataclass(frozen=True)
class Difference:
    id: str
    topic: Text
    claims: tuple[tuple[str, Text], ...]  # (source id, what it says, in every site language)
    resolution: Text
    kind: str  # docs-conflict | simulator-divergence | simulator-bug | ...
    line: int
    observed: tuple[Observation, ...] = ()
    omits: tuple[Omission, ...] = ()  # types the tables leave out although a header admits them


@dataclass(frozen=True)
class Source:
    id: str
    kind: str  # seed | doc | impl | simulator
    ref: str


@dataclass(frozen=True)
class UsageNote:
    """A fact a kernel writer needs beyond the semantics (``usage`` of an op file)."""

    kind: str  # asynchronous | overload | cost
    text: Text
    sources: tuple[str, ...]


@dataclass(frozen=True)
class PerfTable:
    profile: str
    title: Text
    columns: tuple[str | Text, ...]  # a value or identifier as written, or words in every language
    rows: tuple[tuple[str | Text, ...], ...]
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
    usage: tuple[UsageNote, ...] = ()  # asynchronous, overload and cost notes
    raw: dict[str, Any] = field(repr=False, compare=False, hash=False, default_factory=dict)
    kind: str | None = None  # the shared kind it expands (specs/kinds/<kind>.yaml), if any
    params: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    status: dict[str, Any] | None = field(default=None, compare=False, hash=False)  # removed/renamed upstream

    @property
    def mnemonic(self) -> str:
        """The name assembly spells it with: ``mnemonic`` of the op file (tmatmul.acc), else the op name."""
        return str(self.raw.get("mnemonic", self.name))

    def scalar_dtype(self, mode: Mode, operand: Operand) -> str:
        """The one dtype of a scalar operand with an ``asm_type`` (lint makes it unique)."""
        for table in self.dtypes.values():
            for row in table.rows:
                if (not row.modes or mode.name in row.modes) and row.types.get(operand.dtype):
                    return row.types[operand.dtype][0]
        raise KeyError(operand.name)

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
    asm_lower: bool = False  # the assembly spells values in lower case (#pto<gather_oob zero>)
    dialect_asm: str = ""  # the PTO assembler's spelling with {} for its value word (#pto<round_mode {}>)
    dialect_values: dict[str, str] = field(default_factory=dict)  # its value word -> our enumerator
    codes: dict[str, int] = field(default_factory=dict)  # enumerator -> the integer semantics read (code(e))

    def spell(self, value: str) -> str:
        """The assembly attribute for ``value``."""
        return self.asm.format(value.lower() if self.asm_lower else value)

    def read_spelled(self, spelled: str) -> str | None:
        """The enumerator a whole attribute spelling names, in either the ISA's or the assembler's spelling."""
        for pattern, read in ((self.asm, self.read), (self.dialect_asm, self.dialect_values.get)):
            if not pattern:
                continue
            prefix, _, suffix = pattern.partition("{}")
            if spelled.startswith(prefix) and spelled.endswith(suffix) and len(spelled) >= len(prefix) + len(suffix):
                value = read(spelled[len(prefix): len(spelled) - len(suffix)].strip())
                if value is not None:
                    return value
        return None

    def read(self, word: str) -> str | None:
        """The enumerator an assembly value word names (any case when the assembly spells it in lower case)."""
        for value in self.values:
            if word == value or (self.asm_lower and word.lower() == value.lower()):
                return value
        return None


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
    global_layouts: dict[str, GlobalLayout] = field(default_factory=dict)
    global_rules: tuple[Rule, ...] = ()
    pad_fill: dict[str, Node] = field(default_factory=dict)  # PadValue -> value expression over T
    numerics_values: dict[str, Text] = field(default_factory=dict)  # numerics field value -> its name on the pages
    upstream: dict[str, str] = field(default_factory=dict)  # repository, commit the source refs point into
    tile_storage: TileStorage | None = None  # element placement in tile storage
    unimplemented_pages: tuple[UnimplementedPage, ...] = ()
    unspecified: tuple[tuple[str, str, Text], ...] = ()  # upstream pages without a specification: (page, name, why)
    state: dict[str, StateRegister] = field(default_factory=dict)  # configuration registers (``state``)
    separate_isas: tuple[SeparateIsa, ...] = ()
    pipes: Pipes | None = None  # the pipes of a core (``pipes``)
    compact_modes: dict[str, str] = field(default_factory=dict)  # CompactMode -> assembly spelling
    compact_dialect: tuple[str, ...] = ()  # the assembler's CompactMode enumeration, by number
    compact_modelled: Node | None = None  # over a tile t: the executor runs its compact mode as it is

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
    ops: dict[str, OpSpec]  # read from the disk cache: a read-only mapping (lazyops.OpsOnDisk)
    root: str
    kinds: dict[str, Any] = field(default_factory=dict)  # name -> kinds.Kind

    def op(self, name: str) -> OpSpec:
        return self.ops[name.lower()]

    def by_mnemonic(self, mnemonic: str) -> OpSpec | None:
        """The op assembly names ``mnemonic`` (its op name or its file's ``mnemonic``), or None."""
        found = self.ops.get(mnemonic)
        if found is not None and found.mnemonic == mnemonic:
            return found
        mnemonics = getattr(self.ops, "mnemonics", None)  # ops read from the disk cache (lazyops): no scan
        if mnemonics is not None:
            name = mnemonics.get(mnemonic)
            return None if name is None else self.ops[name]
        return next((op for op in self.ops.values() if op.mnemonic == mnemonic), None)
