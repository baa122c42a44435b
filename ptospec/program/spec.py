"""``specs/program.yaml``: the program layer's instructions and rules, loaded and checked like the rest
of the database (schema, expression syntax, names each rule may use)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..dbcache import cached, database_key
from ..errors import PtospecError, SpecError
from ..expr.ast import Name, Node, walk
from ..expr.parser import parse_expr
from ..load.problems import DatabaseErrors, Issues
from ..load.schema import check_schema
from ..located import Located
from ..model import Database, Text

FILE = "program.yaml"


@dataclass(frozen=True)
class ProgramRule:
    id: str
    check: Node
    check_text: str
    when: str | None  # an optional operand that must be present
    per_dim: bool
    message: Text
    evidence: tuple[str, ...]
    profiles: tuple[str, ...] = ()  # the targets it applies on; empty: every one
    severity: str = "violation"  # finding: reported while the program goes on (--strict: a violation)


@dataclass(frozen=True)
class Orders:
    """What a synchronisation instruction orders (``orders``): each of ``src``, ``dst``, ``pipe``, ``event`` is
    an operand name or a literal enumerator; ``via`` says whether pipe operands hold pipes or operation classes."""

    kind: str  # signal | wait | barrier | cross_signal | cross_wait | acquire | release
    src: str = ""
    dst: str = ""
    pipe: str = ""
    event: str = ""
    via: str = "pipes"


@dataclass(frozen=True)
class ProgramInstruction:
    name: str
    summary: Text
    syntax: str
    values: tuple[str, ...]
    dim_values: tuple[str, ...]
    rules: tuple[ProgramRule, ...]
    result: str | None
    operands: tuple[tuple[str, str], ...] = ()  # positional operands: (value name, enum name or "")
    attributes: tuple[str, ...] = ()  # integer attributes of the {...} dictionary
    synchronisation: bool = False  # without data semantics: checked, then nothing is executed
    variadic: str = ""  # the value counting further operands after the positional ones (tsync's events)
    intrinsic: str = ""  # the upstream instruction (PTO_INST function, legacy page) it specifies, if any
    orders: Orders | None = None  # synchronisation: what it orders (the race detector)


@dataclass(frozen=True)
class FrontendPipes:
    """The assembler's frontend spelling of the cross-core FIFO (``frontend_pipes``)."""

    operations: dict[str, tuple[str, str]]  # operation -> (database op, direction: c2v | v2c)
    initialize: tuple[str, ...]  # operations declaring a kernel's pipe {dir_mask, slot_size}
    reserved_buffers: tuple[str, ...]  # operations reserving or importing the pipe's buffer (an address)
    slot_num_one_way: int
    slot_num_both_ways: int
    flag_id: int


@dataclass(frozen=True)
class LoweredPipes:
    """The assembler's lowered spelling of the cross-core FIFO (``lowered_pipes``)."""

    initialize: dict[str, int]  # operation declaring a pipe -> position of its local buffer among the operands
    operations: dict[str, str]  # operation -> database op (tpush, tpop, tfree)
    declare_tile: str
    kernel_kinds: dict[str, str]  # pto.kernel_kind attribute as written -> cube | vector


@dataclass(frozen=True)
class AccToVec:
    """TMOV's accToVecMode attribute (``line_attributes.acc_to_vec``)."""

    attribute: str
    ops: frozenset[str]
    modes: dict[str, tuple[int, int]]  # spelling -> (vector sub-block written, splits the tile between two)
    default: str  # the first spelling: what a line without the attribute does
    values: tuple[tuple[str, Node], ...] = ()  # value of the rules -> condition over the line's tiles and mode


@dataclass(frozen=True)
class GenericForm:
    """The generic MLIR form of one operation (``generic_forms``): its operand segments and its custom form's."""

    segments: tuple[str, ...]
    ins: tuple[str, ...]
    outs: tuple[str, ...]


@dataclass(frozen=True)
class UnmatchedForm:
    """A form of a database instruction no overload of pto-isa's headers takes (``unmatched_forms``)."""

    id: str
    op: str
    ins: tuple[str, ...]  # tile | view | scalar per ins operand
    outs: tuple[str, ...]
    message: Text
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class LayoutInference:
    """``layout_inference``: how the assembler gives a tensor view without a layout attribute its layout."""

    dims: int
    applies: Node
    match: tuple[tuple[str, Node], ...]  # tried in order
    ambiguous: frozenset[str]
    consumer_decides: Node
    consumers: frozenset[str]  # database ops moving data between a partition and a tile
    consumer_location: str
    consumer_layouts: dict[str, str]  # tile blayout -> global layout
    tie: tuple[tuple[str, Node], ...]
    fallback: str


@dataclass(frozen=True)
class Memrefs:
    """``memrefs``: the assembler's lowered form, memref values in global memory or in an on-chip location."""

    summary: Text
    global_spaces: frozenset[str]  # address spaces that are global memory
    locations: dict[str, str]  # on-chip address space -> tile location
    config: dict[str, tuple[str, ...]]  # blayout | slayout | pad -> enumerators by #pto.tile_buf_config number
    operations: dict[str, ProgramInstruction]  # memref.alloc, pto.bind_tile, ...


@dataclass(frozen=True)
class LoweringStep:
    op: str
    mode: str
    operands: tuple[tuple[str, str], ...]  # step operand -> the original line's operand


@dataclass(frozen=True)
class ProgramSpec:
    sources: dict[str, dict[str, str]]
    targets: dict[str, str]
    default_target: str
    dtype_aliases: dict[str, str]
    align: int
    instructions: dict[str, ProgramInstruction]
    sync: tuple[str, ...]  # the synchronisation instructions (also in ``instructions``)
    sync_summary: Text
    file: str
    sim_arch: dict[str, str]  # profile -> the simulator's NPUArch enumerator
    sim_regions: dict[str, str]  # tile location -> the simulator's memory region
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)  # synchronisation enums: name -> enumerators
    frontend_pipes: FrontendPipes | None = None
    layout_inference: LayoutInference | None = None
    lowerings: dict[str, tuple[frozenset[str], tuple[LoweringStep, ...]]] = field(default_factory=dict)
    module_checks: dict[str, ProgramInstruction] = field(default_factory=dict)  # checks of a whole module
    sections: dict[str, str] = field(default_factory=dict)  # region operation -> the cores it runs on
    classes: dict[str, str] = field(default_factory=dict)  # operation class (sync_op_type) -> pipe enumerator
    memrefs: Memrefs | None = None
    layout_attribute: str = ""  # an instruction line's attribute giving its views' global layout (line_attributes)
    informational_attributes: frozenset[str] = frozenset()  # line attributes that mean nothing to the instruction
    mnemonics: dict[str, tuple[str, str]] = field(default_factory=dict)  # dialect operation -> (op, mode)
    lowered_pipes: LoweredPipes | None = None
    ordering: dict[str, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)  # attr -> (ops, values)
    acc_to_vec: AccToVec | None = None
    segment_sizes: str = ""  # the generic form's property giving the operand segment sizes
    generic_forms: dict[str, GenericForm] = field(default_factory=dict)  # operation -> its generic form
    unmatched_forms: tuple[UnmatchedForm, ...] = ()
    struct_values: dict[str, tuple[str, int]] = field(default_factory=dict)  # vector type -> (tile type, fields)
    unimplemented_rule: str = ""  # the rule refusing operations named after an unimplemented page
    device_specs: dict[str, str] = field(default_factory=dict)  # pto.device-spec prefix -> target
    address_units: dict[str, str] = field(default_factory=dict)  # tile location -> profile constant its tiles start on

    @property
    def enumerators(self) -> frozenset[str]:
        return frozenset(e for values in self.enums.values() for e in values)


def load_program_spec(root: Path, db: Database) -> ProgramSpec:
    path = root / FILE
    display = str(path)
    if not path.is_file():
        raise SpecError(f"{FILE} is missing from the database", where=str(root), rule="program.spec")
    from ..yamlsource import read_yaml  # YAML: only when the program layer is read from its file

    src = read_yaml(path, display)
    check_schema(src, "program")
    issues = Issues()
    data = src.data
    _check_aliases(src, data, db, issues)
    enums = {k: tuple(v) for k, v in data["synchronisation"]["enums"].items()}
    enumerators = {e for values in enums.values() for e in values}
    instructions, sync = _instructions(src, data, db, enums, enumerators, issues)
    sim = data["simulator"]
    devices = data.get("device_specs", {})
    _check_simulator_and_devices(src, data, db, issues)
    frontend = _frontend_pipes(src, data, db, issues)
    inference = _layout_inference(src, data, db, issues)
    lowerings = _lowerings(src, data, db, issues)
    module_checks = {name: _instruction(src, name, d, set(data["sources"]), issues, where=("module_checks", name))
                     for name, d in data.get("module_checks", {}).items()}
    classes = _classes(src, data, enums, issues)
    memrefs = _memrefs(src, data, db, issues)
    mnemonics = _mnemonics(src, data, db, issues)
    line = data.get("line_attributes", {})
    if line:
        _known_source(src, data["sources"], ("line_attributes", "source"), line["source"], issues)
    ordering, acc_to_vec = _line_attribute_tables(src, line, db, instructions, issues)
    generic = _generic_forms(src, data, issues)
    unmatched = _unmatched_forms(src, data, db, issues)
    for name in sync:
        if name in instructions:
            _check_orders(src, instructions[name], classes, enumerators, issues)
    if issues.items:
        raise DatabaseErrors(issues.items)
    return ProgramSpec(dict(data["sources"]), dict(data["targets"]), data["default_target"],
                       dict(data["dtype_aliases"]), int(data["address_align_bytes"]), instructions, sync,
                       data["synchronisation"]["summary"], display, dict(sim["arch"]), dict(sim["regions"]), data,
                       enums, frontend, inference, lowerings, module_checks,
                       dict(data.get("sections", {}).get("operations", {})), classes, memrefs,
                       line.get("layout", ""), frozenset(line.get("informational", ())), mnemonics,
                       _lowered_pipes(src, data, db, issues), ordering, acc_to_vec,
                       data.get("generic_forms", {}).get("segment_sizes", ""), generic, unmatched,
                       _struct_values(src, data, issues), data.get("unimplemented_operations", {}).get("rule", ""),
                       dict(devices.get("prefixes", {})), dict(data.get("address_units", {})))


def _check_aliases(src: Located, data: dict, db: Database, issues: Issues) -> None:
    """``targets`` name profiles; ``dtype_aliases`` stand for dtypes and are none themselves."""
    for alias, target in data["targets"].items():
        if target not in db.isa.profiles:
            issues.add(src, ("targets", alias), f"{alias} names unknown profile {target!r}", "program.target")
    for alias, target in data["dtype_aliases"].items():
        if target not in db.isa.dtypes:
            issues.add(src, ("dtype_aliases", alias), f"{alias} stands for unknown dtype {target!r}", "program.dtype")
        if alias in db.isa.dtypes:
            issues.add(src, ("dtype_aliases", alias), f"{alias} is already a dtype of the ISA", "program.dtype")


def _instructions(src: Located, data: dict, db: Database, enums: dict[str, tuple[str, ...]], enumerators: set[str],
                  issues: Issues) -> tuple[dict[str, ProgramInstruction], tuple[str, ...]]:
    """(the instructions, the names of the synchronisation instructions among them): an instruction is
    specified in one place (not also as a synchronisation instruction, nor as an op of the database)."""
    instructions = {}
    for name, d in data["instructions"].items():
        instructions[name] = _instruction(src, name, d, set(data["sources"]), issues)
    sync = tuple(data["synchronisation"]["instructions"])
    for name in sync:
        if name in instructions or name in db.ops:
            issues.add(src, ("synchronisation", "instructions", name), f"{name} is also an instruction with "
                       "semantics (an instruction is specified in one place)", "program.duplicate")
            continue
        instructions[name] = _instruction(src, name, data["synchronisation"]["instructions"][name],
                                          set(data["sources"]), issues, enums, enumerators, set(db.isa.profiles))
    return instructions, sync


def _check_simulator_and_devices(src: Located, data: dict, db: Database, issues: Issues) -> None:
    """The simulator's architectures and memory regions, the default target and the device-spec prefixes name
    what the database and ``targets`` know."""
    sim = data["simulator"]
    _known_source(src, data["sources"], ("simulator", "source"), sim["source"], issues)
    for profile in sim["arch"]:
        if profile not in db.isa.profiles:
            issues.add(src, ("simulator", "arch", profile), f"unknown profile {profile!r}", "program.target")
    for loc in db.isa.tile_types:
        if loc not in sim["regions"]:
            issues.add(src, ("simulator", "regions"), f"tile location {loc} has no simulator region",
                       "program.simulator")
    for loc in sim["regions"]:
        if loc not in db.isa.tile_types:
            issues.add(src, ("simulator", "regions", loc), f"{loc} is not a tile location", "program.simulator")
    if data["default_target"] not in data["targets"]:
        issues.add(src, ("default_target",), f"default_target {data['default_target']!r} is not one of targets",
                   "program.target")
    for loc, constant in data.get("address_units", {}).items():
        if loc not in db.isa.tile_types:
            issues.add(src, ("address_units", loc), f"{loc} is not a tile location", "program.simulator")
        for name, profile in db.isa.profiles.items():
            if constant not in profile.constants:
                issues.add(src, ("address_units", loc), f"profile {name} has no constant {constant!r}",
                           "program.simulator")
    devices = data.get("device_specs", {})
    if devices:
        _known_source(src, data["sources"], ("device_specs", "source"), devices["source"], issues)
    for prefix, target in devices.get("prefixes", {}).items():
        if target not in data["targets"]:
            issues.add(src, ("device_specs", "prefixes", prefix), f"{prefix} names {target!r}, not one of targets",
                       "program.target")


def _expression(src: Located, path: tuple, text: str, names: set[str], issues: Issues) -> Node | None:
    try:
        node = parse_expr(text)
    except PtospecError as exc:
        issues.add(src, path, exc.message, exc.rule or "expr.syntax")
        return None
    for n in walk(node):
        if isinstance(n, Name) and n.id not in names:
            issues.add(src, path, f"{n.id!r} is not a value here (values: {', '.join(sorted(names))})",
                       "program.rule-name")
    return node


def _layout_inference(src: Located, data: dict[str, Any], db: Database, issues: Issues) -> LayoutInference | None:
    d = data.get("layout_inference")
    if d is None:
        return None
    where = ("layout_inference",)
    _known_source(src, data["sources"], (*where, "source"), d["source"], issues)
    names = {f"{c}{k}" for c in "ds" for k in range(d["dims"])} | {"elem_bytes"}
    layouts = set(db.isa.global_layouts)
    named = [*d["match"], *d["ambiguous"], *d["consumer_layouts"].values(), *d["tie"], d["fallback"]]
    for name in named:
        if name not in layouts:
            issues.add(src, where, f"{name} is not a global layout of the ISA", "program.layout")
    for name in d["ambiguous"]:
        if name not in d["match"]:
            issues.add(src, (*where, "ambiguous"), f"{name} has no match condition", "program.layout")
    for blayout in d["consumer_layouts"]:
        if blayout not in db.isa.blayouts:
            issues.add(src, (*where, "consumer_layouts"), f"{blayout} is not a tile blayout", "program.layout")
    for op in d["consumers"]:
        if op not in db.ops:
            issues.add(src, (*where, "consumers"), f"{op} is not an instruction of the database", "program.layout")
    if d.get("consumer_location", "Vec") not in db.isa.tile_types:
        issues.add(src, (*where, "consumer_location"), "not a tile location", "program.layout")

    def expr(path: tuple, text: str) -> Node:
        return _expression(src, (*where, *path), text, names, issues) or parse_expr("0")

    return LayoutInference(
        int(d["dims"]), expr(("applies",), d["applies"]),
        tuple((k, expr(("match", k), v)) for k, v in d["match"].items()), frozenset(d["ambiguous"]),
        expr(("consumer_decides",), d["consumer_decides"]), frozenset(d["consumers"]),
        d.get("consumer_location", "Vec"), dict(d["consumer_layouts"]),
        tuple((k, expr(("tie", k), v)) for k, v in d["tie"].items()), d["fallback"])


def _lowerings(src: Located, data: dict[str, Any], db: Database, issues: Issues) -> dict:
    """``lowerings``: each step a mode of a database instruction, its operands the original line's."""
    d = data.get("lowerings")
    if d is None:
        return {}
    _known_source(src, data["sources"], ("lowerings", "source"), d["source"], issues)
    out = {}
    for name, e in d["instructions"].items():
        where = ("lowerings", "instructions", name)
        original = db.ops.get(name)
        if original is None:
            issues.add(src, where, f"{name} is not an instruction of the database", "program.lowering")
            continue
        for p in e["profiles"]:
            if p not in db.isa.profiles:
                issues.add(src, (*where, "profiles"), f"unknown profile {p!r}", "program.target")
        have = {o.name for m in original.modes for o in m.operands}
        steps = []
        for k, step in enumerate(e["steps"]):
            op = db.ops.get(step["op"])
            mode = next((m for m in op.modes if m.name == step.get("mode", op.modes[0].name)), None) if op else None
            if mode is None:
                issues.add(src, (*where, "steps", k), f"{step['op']} {step.get('mode', '')} is no instruction mode "
                           "of the database", "program.lowering")
                continue
            wanted = {o.name for o in mode.operands if o.role != "tmp"}
            if set(step["operands"]) != wanted or not set(step["operands"].values()) <= have:
                issues.add(src, (*where, "steps", k), f"the operands must name each operand of {op.name} "
                           f"({', '.join(sorted(wanted))}) by one of {name}'s ({', '.join(sorted(have))})",
                           "program.lowering")
            steps.append(LoweringStep(op.name, mode.name, tuple(step["operands"].items())))
        out[name] = (frozenset(e["profiles"]), tuple(steps))
    return out


def _frontend_pipes(src: Located, data: dict[str, Any], db: Database, issues: Issues) -> FrontendPipes | None:
    """``frontend_pipes``, each operation naming a cross-core instruction of the database."""
    d = data.get("frontend_pipes")
    if d is None:
        return None
    _known_source(src, data["sources"], ("frontend_pipes", "source"), d["source"], issues)
    for name, e in d["operations"].items():
        op = db.ops.get(e["op"])
        if op is None or not all(m.cross_core for m in op.modes):
            issues.add(src, ("frontend_pipes", "operations", name), f"{e['op']} is no cross-core instruction of the "
                       "database", "program.pipe-op")
    return FrontendPipes({n: (e["op"], e["direction"]) for n, e in d["operations"].items()}, tuple(d["initialize"]),
                         tuple(d["reserved_buffers"]), int(d["slot_num"]["one_way"]),
                         int(d["slot_num"]["both_ways"]), int(d["flag_id"]))


def _memrefs(src: Located, data: dict[str, Any], db: Database, issues: Issues) -> Memrefs | None:
    """``memrefs``: locations that are tile locations, configuration numbers that name the ISA's enumerators."""
    d = data.get("memrefs")
    if d is None:
        return None
    where = ("memrefs",)
    _known_source(src, data["sources"], (*where, "source"), d["source"], issues)
    for space, loc in d["locations"].items():
        if loc not in db.isa.tile_types:
            issues.add(src, (*where, "locations", space), f"{loc!r} is not a tile location", "program.memref")
        if space in d["global"]:
            issues.add(src, (*where, "locations", space), f"{space} is also a global space", "program.memref")
    known = {"blayout": db.isa.blayouts, "slayout": db.isa.slayouts, "pad": db.isa.pad_values}
    for key, names in d["config"].items():
        for name in names:
            if name not in known[key]:
                issues.add(src, (*where, "config", key), f"{name!r} is not a {key} of the ISA", "program.memref")
    operations = {name: _instruction(src, name, e, set(data["sources"]), issues, where=(*where, "operations", name))
                  for name, e in d["operations"].items()}
    return Memrefs(d["summary"], frozenset(d["global"]), dict(d["locations"]),
                   {k: tuple(v) for k, v in d["config"].items()}, operations)


def _lowered_pipes(src: Located, data: dict[str, Any], db: Database, issues: Issues) -> LoweredPipes | None:
    d = data.get("lowered_pipes")
    if d is None:
        return None
    _known_source(src, data["sources"], ("lowered_pipes", "source"), d["source"], issues)
    for name, op in d["operations"].items():
        if op not in db.ops or not all(m.cross_core for m in db.ops[op].modes):
            issues.add(src, ("lowered_pipes", "operations", name), f"{op} is no cross-core instruction of the "
                       "database", "program.pipe-op")
    return LoweredPipes(dict(d["initialize"]), dict(d["operations"]), d["declare_tile"], dict(d["kernel_kinds"]))


def _known_ops(src: Located, where: tuple, ops, db: Database, issues: Issues) -> frozenset[str]:
    for op in ops:
        if op not in db.ops:
            issues.add(src, where, f"{op} is not an instruction of the database", "program.op")
    return frozenset(ops)


def _line_attribute_tables(src: Located, line: dict[str, Any], db: Database, instructions: dict,
                           issues: Issues) -> tuple[dict, AccToVec | None]:
    """``line_attributes.ordering`` and ``line_attributes.acc_to_vec``."""
    ordering = {name: (_known_ops(src, ("line_attributes", "ordering", name), e["ops"], db, issues),
                       frozenset(e["values"])) for name, e in line.get("ordering", {}).items()}
    d = line.get("acc_to_vec")
    if d is None:
        return ordering, None
    if "acc_to_vec_mode" not in instructions:
        issues.add(src, ("line_attributes", "acc_to_vec"), "its rules (instruction acc_to_vec_mode) are missing",
                   "program.op")
    modes = {k: (int(v["sub_block"]), int(v["dual"])) for k, v in d["modes"].items()}
    values = []
    for name, text in d["values"].items():
        try:
            values.append((name, parse_expr(text)))
        except PtospecError as exc:
            issues.add(src, ("line_attributes", "acc_to_vec", "values", name), exc.message, exc.rule or "expr.syntax")
    wanted = set(instructions["acc_to_vec_mode"].values if "acc_to_vec_mode" in instructions else ()) - {"dual"}
    if wanted and wanted != {n for n, _ in values}:
        issues.add(src, ("line_attributes", "acc_to_vec", "values"), f"the values must be those of instruction "
                   f"acc_to_vec_mode but dual: {', '.join(sorted(wanted))}", "program.rule-name")
    return ordering, AccToVec(d["attribute"], _known_ops(src, ("line_attributes", "acc_to_vec"), d["ops"], db, issues),
                              modes, next(iter(modes)), tuple(values))


def _generic_forms(src: Located, data: dict[str, Any], issues: Issues) -> dict[str, GenericForm]:
    d = data.get("generic_forms")
    if d is None:
        return {}
    _known_source(src, data["sources"], ("generic_forms", "source"), d["source"], issues)
    out = {}
    for name, e in d["operations"].items():
        if sorted([*e["ins"], *e["outs"]]) != sorted(e["segments"]):
            issues.add(src, ("generic_forms", "operations", name), "ins and outs must name each segment once",
                       "program.generic")
        out[name] = GenericForm(tuple(e["segments"]), tuple(e["ins"]), tuple(e["outs"]))
    return out


def _unmatched_forms(src: Located, data: dict[str, Any], db: Database, issues: Issues) -> tuple[UnmatchedForm, ...]:
    d = data.get("unmatched_forms")
    if d is None:
        return ()
    _known_source(src, data["sources"], ("unmatched_forms", "source"), d["source"], issues)
    out = []
    for k, e in enumerate(d["forms"]):
        _known_ops(src, ("unmatched_forms", "forms", k, "op"), [e["op"]], db, issues)
        for ev in e["evidence"]:
            _known_source(src, data["sources"], ("unmatched_forms", "forms", k, "evidence"), ev, issues)
        out.append(UnmatchedForm(e["id"], e["op"], tuple(e["ins"]), tuple(e["outs"]), e["message"],
                                 tuple(e["evidence"])))
    return tuple(out)


def _struct_values(src: Located, data: dict[str, Any], issues: Issues) -> dict[str, tuple[str, int]]:
    d = data.get("struct_values")
    if d is None:
        return {}
    _known_source(src, data["sources"], ("struct_values", "source"), d["source"], issues)
    return {ty: (e["tile"], int(e["fields"])) for ty, e in d["types"].items()}


def _mnemonics(src: Located, data: dict[str, Any], db: Database, issues: Issues) -> dict[str, tuple[str, str]]:
    """``mnemonics``: each a mode of a database instruction, under a name the database does not use."""
    d = data.get("mnemonics")
    if d is None:
        return {}
    _known_source(src, data["sources"], ("mnemonics", "source"), d["source"], issues)
    out = {}
    for name, e in d["operations"].items():
        op = db.ops.get(e["op"])
        if op is None or e["mode"] not in {m.name for m in op.modes}:
            issues.add(src, ("mnemonics", "operations", name), f"{e['op']} {e['mode']} is no instruction mode of the "
                       "database", "program.mnemonic")
            continue
        if db.by_mnemonic(name[4:]) is not None:
            issues.add(src, ("mnemonics", "operations", name), f"{name} is already an instruction's mnemonic",
                       "program.mnemonic")
        out[name] = (e["op"], e["mode"])
    return out


def _classes(src: Located, data: dict[str, Any], enums: dict[str, tuple[str, ...]], issues: Issues) -> dict[str, str]:
    d = data["synchronisation"].get("classes")
    if d is None:
        return {}
    _known_source(src, data["sources"], ("synchronisation", "classes", "source"), d["source"], issues)
    for cls, pipe in d["pipes"].items():
        if pipe not in enums.get("pipe", ()):
            issues.add(src, ("synchronisation", "classes", "pipes", cls), f"{pipe!r} is no enumerator of pipe",
                       "program.orders")
    return dict(d["pipes"])


def _check_orders(src: Located, instr: ProgramInstruction, classes: dict[str, str], enumerators: set[str],
                  issues: Issues) -> None:
    """Every field of ``orders`` names a value of the instruction or an enumerator; a kind has the fields it needs."""
    o = instr.orders
    if o is None:
        return
    where = ("synchronisation", "instructions", instr.name, "orders")
    need = {"signal": ("src", "dst", "event"), "wait": ("src", "dst", "event"), "barrier": ("pipe",),
            "cross_signal": ("pipe", "event"), "cross_wait": ("pipe", "event"), "acquire": ("pipe", "event"),
            "release": ("pipe", "event")}[o.kind]
    for key in need:
        if not getattr(o, key):
            spelled = {"src": "from", "dst": "to"}.get(key, key)
            issues.add(src, where, f"orders of kind {o.kind} needs {spelled}", "program.orders")
    for key in ("src", "dst", "pipe", "event"):
        value = getattr(o, key)
        if value and value not in instr.values and value not in enumerators:
            issues.add(src, where, f"{value!r} is neither a value of {instr.name} nor an enumerator", "program.orders")
    if o.via == "classes" and not classes:
        issues.add(src, where, "via: classes, but synchronisation has no classes", "program.orders")


def _known_source(src: Located, sources: Collection[str], path: tuple, name: str, issues: Issues) -> None:
    """``name`` must be one of ``sources`` (the ``sources`` of specs/program.yaml): else ``program.source``."""
    if name not in sources:
        issues.add(src, path, f"unknown source {name!r}", "program.source")


def _instruction(src: Located, name: str, d: dict[str, Any], sources: set[str], issues: Issues,
                 enums: dict[str, tuple[str, ...]] | None = None, enumerators: set[str] | None = None,
                 profiles: set[str] | None = None, where: tuple = ()) -> ProgramInstruction:
    """One instruction; ``enums`` is given for a synchronisation instruction (no data semantics)."""
    operands = tuple((o, "") if isinstance(o, str) else (o["name"], o["enum"]) for o in d.get("operands", ()))
    for k, (_, enum) in enumerate(operands):
        if enum and enum not in (enums or {}):
            issues.add(src, ("synchronisation", "instructions", name, "operands", k), f"unknown enum {enum!r}",
                       "program.enum")
    attributes = tuple(d.get("attributes", ()))
    variadic = d.get("variadic", "")
    values = (*d.get("values", ()), *(n for n, _ in operands), *attributes, *([variadic] if variadic else []))
    dim_values = tuple(d.get("dim_values", ()))
    where = where or (("synchronisation", "instructions", name) if enums is not None else ("instructions", name))
    rules = []
    for k, r in enumerate(d.get("rules", ())):
        path = (*where, "rules", k)
        try:
            node = parse_expr(r["check"])
        except PtospecError as exc:
            issues.add(src, (*path, "check"), exc.message, exc.rule or "expr.syntax")
            continue
        per_dim = r.get("each") == "dim"
        known = set(values) | (set(dim_values) if per_dim else set()) | (enumerators or set())
        for n in walk(node):
            if isinstance(n, Name) and n.id not in known:
                issues.add(src, (*path, "check"), f"{n.id!r} is not a value of {name} "
                           f"(values: {', '.join(sorted(known))})", "program.rule-name")
        if r.get("when") and r["when"] not in values:
            issues.add(src, (*path, "when"), f"when: {r['when']!r} is not a value of {name}", "program.rule-name")
        for ev in r["evidence"]:
            _known_source(src, sources, (*path, "evidence"), ev, issues)
        for p in r.get("profiles", ()):
            if profiles is not None and p not in profiles:
                issues.add(src, (*path, "profiles"), f"unknown profile {p!r}", "program.target")
        rules.append(ProgramRule(r["id"], node, r["check"], r.get("when"), per_dim, r["message"],
                                 tuple(r["evidence"]), tuple(r.get("profiles", ())), r.get("severity", "violation")))
    return ProgramInstruction(name, d["summary"], d["syntax"], tuple(values), dim_values, tuple(rules),
                              d.get("result"), operands, attributes, enums is not None, variadic,
                              d.get("intrinsic", ""), _orders(d.get("orders")))


def _orders(d: dict[str, Any] | None) -> Orders | None:
    if d is None:
        return None
    return Orders(d["kind"], d.get("from", ""), d.get("to", ""), d.get("pipe", ""), d.get("event", ""),
                  d.get("via", "pipes"))


_LOADED: list[tuple[Database, ProgramSpec]] = []  # the last database's program layer (one slot)


def program_spec(db: Database) -> ProgramSpec:
    """The program layer of ``db``'s database (loaded once per database, kept on disk between processes)."""
    if not _LOADED or _LOADED[0][0] is not db:
        root = Path(db.root)  # kept on disk under the database's key and the status of its own file
        _LOADED[:] = [(db, cached("program", root, [root / FILE], lambda: load_program_spec(root, db), ProgramSpec,
                                  base=database_key(db)))]
    return _LOADED[0][1]


def broken_rules(db: Database, instr: ProgramInstruction, values: dict[str, int | str | None],
                 dims: list[dict[str, int | None]] | None = None, profile: str | None = None,
                 enumerators: frozenset[str] = frozenset()) -> tuple[list[tuple[ProgramRule, str]], list[str]]:
    """The rules of ``instr`` that ``values`` (and, per dimension, ``dims``) break, each with the values it
    saw, and the ids of the rules that need a value given as ``None`` (known only at run time).  A rule
    whose ``when`` operand is ``None`` does not apply."""
    from ..expr.evaluate import Scope, evaluate  # NumPy: not needed to read the program layer

    broken: list[tuple[ProgramRule, str]] = []
    deferred: list[str] = []
    named = {e: e for e in enumerators}  # an enumerator stands for itself (pipe_name in [PIPE_FIX, PIPE_MTE3])
    for rule in instr.rules:
        if rule.when and values.get(rule.when) is None:
            continue
        if rule.profiles and profile not in rule.profiles:
            continue
        scopes = [{**named, **values, **d} for d in (dims or [])] if rule.per_dim else [{**named, **values}]
        for k, vals in enumerate(scopes):
            if any(vals.get(n) is None for n in _names(rule.check)):
                deferred.append(rule.id)
                break
            if not evaluate(rule.check, Scope(isa=db.isa, values=dict(vals))):
                shown = ", ".join(f"{n}={vals[n]}" for n in sorted(_names(rule.check)) if n in vals and n not in named)
                where = f"dimension {k}: " if rule.per_dim else ""
                broken.append((rule, where + shown))
                break
    return broken, deferred


def _names(node: Node) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, Name)}
