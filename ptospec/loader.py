"""Load ``specs/`` into the frozen model, checking schema and cross-references.

Every problem becomes a ``SpecError`` naming ``file:line`` and a rule id.
``load_database`` collects all of them before failing, so ``ptospec lint``
reports every broken file in one run.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema

from . import attrs
from .errors import ExprError, SpecError
from .expr.ast import Attr, Call, Index, Name, Node, Reduce, walk
from .expr.functions import FUNCTIONS, REDUCTIONS, VARIANTS
from .expr.parser import parse_expr, parse_statement
from .expr.vectorize import statement_vars
from .kinds import Kind, expand, load_kind
from .model import (
    CPP_LITERAL,
    AsmForm,
    CppArray,
    CppConvTile,
    CppType,
    Database,
    Difference,
    DType,
    DTypeRow,
    DTypeTable,
    Effect,
    Enum,
    Example,
    Family,
    GlobalLayout,
    Isa,
    Layout,
    Mode,
    Numerics,
    Observation,
    Operand,
    OpSpec,
    PerfTable,
    Profile,
    Rule,
    SeparateIsa,
    Source,
    StateRegister,
    TileStorage,
    Tolerance,
    UnimplementedPage,
)
from .tile import GLOBAL_RANK, GlobalDesc
from .yamlsource import Located, read_yaml

SPEC_ENV = "PTOSPEC_SPECS"


@cache
def schema(name: str) -> dict[str, Any]:
    """The JSON Schema ``isa`` or ``op`` shipped inside the package."""
    text = resources.files("ptospec.schema").joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def find_specs_root(explicit: str | os.PathLike | None = None) -> Path:
    """Where the database lives: ``--specs``, ``$PTOSPEC_SPECS``, ``./specs`` or above, or the source tree."""
    if explicit:
        root = Path(explicit)
        if not (root / "isa.yaml").is_file():
            raise SpecError(f"{root} is not a spec directory (no isa.yaml in it)", rule="specs.root")
        return root
    env = os.environ.get(SPEC_ENV)
    if env:
        return find_specs_root(env)
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / "specs" / "isa.yaml").is_file():
            return folder / "specs"
    bundled = Path(__file__).resolve().parent.parent / "specs"
    if (bundled / "isa.yaml").is_file():
        return bundled
    raise SpecError("cannot find the spec database; pass --specs DIR or set PTOSPEC_SPECS", rule="specs.root")


class Issues:
    """Collects spec problems; ``raise_if_any`` turns them into one failure."""

    def __init__(self) -> None:
        self.items: list[SpecError] = []

    def add(self, src: Located, path, message: str, rule: str) -> None:
        self.items.append(SpecError(message, where=src.where(tuple(path)), rule=rule))

    def extend(self, errors: list[SpecError]) -> None:
        self.items.extend(errors)


class DatabaseErrors(SpecError):
    """Several spec problems at once (``errors`` holds each)."""

    def __init__(self, errors: list[SpecError]):
        super().__init__(f"{len(errors)} problem(s) in the spec database", rule="lint")
        self.errors = errors


@cache
def _fast_validator(name: str):
    """A compiled validator (fastjsonschema) for the common case: files that are valid."""
    compiled = dict(schema(name))
    compiled["$schema"] = "http://json-schema.org/draft-07/schema#"  # the subset our schemas use
    return fastjsonschema.compile(compiled)


def _is_text_schema(sub: object) -> bool:
    """The schemas' bilingual prose shape (``$defs/text``): a mapping with one string per site language."""
    return isinstance(sub, dict) and sub.get("type") == "object" and sub.get("required") == ["en", "zh"]


def _schema_errors(src: Located, schema_name: str, issues: Issues) -> bool:
    try:
        _fast_validator(schema_name)(src.data)
        return False
    except fastjsonschema.JsonSchemaException:
        pass  # collect every problem, with paths, from the reference validator
    validator = jsonschema.Draft202012Validator(schema(schema_name))
    found = False
    for err in sorted(validator.iter_errors(src.data), key=lambda e: list(map(str, e.absolute_path))):
        found = True
        path = tuple(err.absolute_path)
        location = "/".join(str(p) for p in path) or "(top level)"
        message = err.message
        if err.validator == "oneOf":
            message = f"{err.instance!r} does not match any allowed form"
        elif _is_text_schema(err.schema) and err.validator in ("type", "required"):
            langs = err.schema["required"]
            if isinstance(err.instance, str):
                message = (f"English-only text; prose is written in every site language: "
                           f"{{en: <this text>, {', '.join(f'{x}: <translation>' for x in langs if x != 'en')}}}")
            else:
                missing = [x for x in langs if not isinstance(err.instance, dict) or x not in err.instance]
                message = f"prose needs every site language ({', '.join(langs)}); missing: {', '.join(missing)}"
        issues.add(src, path, f"{location}: {message}", f"schema.{err.validator}")
    return found


def check_schema(src: Located, schema_name: str) -> None:
    """Raise ``DatabaseErrors`` listing every schema violation of ``src``."""
    issues = Issues()
    if _schema_errors(src, schema_name, issues):
        raise DatabaseErrors(issues.items)


# --------------------------------------------------------------------------- ISA
def load_isa(path: Path, display: str | None = None) -> Isa:
    issues = Issues()
    src = read_yaml(path, display)
    if not isinstance(src.data, dict):
        raise SpecError("isa.yaml must be a mapping", where=src.where(()), rule="schema.type")
    if _schema_errors(src, "isa", issues):
        raise DatabaseErrors(issues.items)
    d = src.data
    dtypes = {
        name: DType(name, v["cpp"], v["bits"], v["kind"], v["numpy"], tuple(v["profiles"]) if "profiles" in v else None,
                    tuple(v.get("emulated", ())), v.get("per_byte", 1))
        for name, v in d["dtypes"].items()
    }
    for name, dt in dtypes.items():
        problem = _numpy_problem(dt)
        if problem:
            issues.add(src, ("dtypes", name, "numpy"), f"dtype {name}: {problem}", "isa.numpy")
    for field, group in (("blayout", "blayouts"), ("slayout", "slayouts"), ("pad", "pad_values")):
        if d["tile_defaults"][field] not in d[group]:
            issues.add(src, ("tile_defaults", field), f"default {field} {d['tile_defaults'][field]!r} is not one of "
                       f"the {group} ({', '.join(d[group])})", "isa.tile-defaults")
    layouts = {n: Layout(n, v["blayout"], v["slayout"], v["text"]) for n, v in d["layouts"].items()}
    for n, lay in layouts.items():
        if lay.blayout not in d["blayouts"] or lay.slayout not in d["slayouts"]:
            issues.add(src, ("layouts", n), f"layout {n} names an unknown blayout/slayout", "isa.layout")
    profiles = {
        n: Profile(n, v["title"], v["description"], dict(v["constants"]), v["basis"],
                   dict(v.get("numerics", {}).get("functions", {})), v.get("numerics", {}).get("text", {}))
        for n, v in d["profiles"].items()
    }
    for n, prof in profiles.items():
        for func, variant in prof.variants.items():
            if variant not in VARIANTS.get(func, {}):
                known = ", ".join(f"{f}: {'/'.join(v)}" for f, v in VARIANTS.items())
                issues.add(src, ("profiles", n, "numerics", "functions", func),
                           f"no numerics variant {variant!r} of {func!r} (known: {known})", "isa.numerics")
    for name, dt in dtypes.items():
        for p in (*(dt.profiles or ()), *dt.emulated):
            if p not in profiles:
                issues.add(src, ("dtypes", name), f"dtype {name} names unknown profile {p!r}", "isa.profile")
    families = {n: Family(n, v["title"], v["description"]) for n, v in d["families"].items()}
    for n, v in d.get("enums", {}).items():
        for value in v.get("codes", {}):
            if value not in v["values"]:
                issues.add(src, ("enums", n, "codes", value), f"code for {value!r}, which is not a value of {n}",
                           "isa.enum")

    def well_formedness(section: str, var: str) -> tuple[Rule, ...]:
        rules = []
        for i, r in enumerate(d[section]):
            try:
                check = parse_expr(r["check"])
                when = parse_expr(r["when"]) if "when" in r else None
            except ExprError as exc:
                issues.add(src, (section, i), exc.message, exc.rule or "expr.syntax")
                continue
            for node in (check, when):
                if node is not None:
                    _check_tile_rule_names(src, (section, i), node, d, issues, var)
            rules.append(
                Rule(
                    id=r["id"], kind="check", operands=(var,), allow=(), check=check, check_text=r["check"],
                    when=when, when_text=r.get("when", ""), let=(), profiles=tuple(profiles), modes=(),
                    phase="static", message=r["message"], sources=(), line=src.line((section, i)), file=src.file,
                )
            )
        return tuple(rules)

    tile_rules = well_formedness("tile_rules", "t")
    global_rules = well_formedness("global_rules", "g")
    global_layouts = {}
    for n, v in d["global_layouts"].items():
        tile_map = tuple(_parse(src, ("global_layouts", n, "tile_map"), t, issues) for t in v.get("tile_map", ()))
        for node in tile_map:
            if node is not None:
                _check_names(src, ("global_layouts", n, "tile_map"), node, {"r", "c", "d0", "d1", "d2", "d3", "d4"},
                             None, issues)
        for k, prof in enumerate(v["profiles"]):
            if prof not in d["profiles"]:
                issues.add(src, ("global_layouts", n, "profiles", k), f"unknown profile {prof!r}", "isa.profile")
        global_layouts[n] = GlobalLayout(n, v["asm"], tuple(v["order"]) if "order" in v else None, v["text"],
                                         tuple(x for x in tile_map if x is not None), tuple(v["profiles"]))
    pad_fill = {}
    for pad, text in d["pad_fill"].items():
        if pad not in d["pad_values"]:
            issues.add(src, ("pad_fill", pad), f"unknown pad value {pad!r}", "isa.pad")
        node = _parse(src, ("pad_fill", pad), text, issues)
        if node is not None:
            pad_fill[pad] = node
    tile_storage = _tile_storage(src, d, issues)
    unimplemented = _unimplemented_pages(src, d.get("unimplemented_pages", []), issues)
    state = {n: StateRegister(n, v["text"], dict(v["fields"])) for n, v in d.get("state", {}).items()}
    for n in state:
        if n == "profile" or n in dtypes or n in d.get("enums", {}):
            issues.add(src, ("state", n), f"state register {n!r} would hide another name", "isa.state")
    if issues.items:
        raise DatabaseErrors(issues.items)
    return Isa(
        tile_storage=tile_storage,
        upstream=dict(d.get("upstream", {})),
        unimplemented_pages=unimplemented,
        state=state,
        unspecified=tuple((u["page"], u["instruction"], u["reason"]) for u in d.get("unspecified", ())),
        separate_isas=tuple(SeparateIsa(s["name"], s["pages"], s["header"], tuple(s["simulator"]), s["reason"],
                                        where=src.where(("separate_isas", k)))
                            for k, s in enumerate(d.get("separate_isas", ()))),
        dtypes=dtypes,
        tile_types=dict(d["tile_types"]),
        blayouts=dict(d["blayouts"]),
        slayouts=dict(d["slayouts"]),
        pad_values=dict(d["pad_values"]),
        layouts=layouts,
        profiles=profiles,
        families=families,
        tile_rules=tile_rules,
        tile_defaults=dict(d["tile_defaults"]),
        global_layouts=global_layouts,
        global_rules=global_rules,
        pad_fill=pad_fill,
        raw=d,
        enums={n: Enum(n, v["cpp"], v["asm"], tuple(v["values"]), v["text"], dict(v["values"]),
                       v.get("asm_case") == "lower", v.get("dialect", {}).get("asm", ""),
                       dict(v.get("dialect", {}).get("values", {})), dict(v.get("codes", {})))
               for n, v in d.get("enums", {}).items()},
    )


_NUMPY_KINDS = {"float": "fV", "signed": "i", "unsigned": "u"}  # ml_dtypes' float types have kind V


def _numpy_bits(np_type) -> int:
    """The bits a value of ``np_type`` carries (ml_dtypes' 4-bit floats are stored one per byte)."""
    import ml_dtypes

    try:
        return int(ml_dtypes.finfo(np_type).bits)
    except (TypeError, ValueError):
        return np_type.itemsize * 8


def _numpy_problem(dt: DType) -> str:
    """Why ``dt.numpy`` does not name a NumPy (or ml_dtypes) type of the dtype's width and kind ('' if it does)."""
    from .expr.vectorize import _numpy_dtype

    try:
        np_type = _numpy_dtype(dt.numpy)
    except (TypeError, ValueError, AttributeError):
        return f"{dt.numpy!r} is not a NumPy or ml_dtypes type name"
    if dt.per_byte > 1 and (dt.bits != 8 or _numpy_bits(np_type) * dt.per_byte != 8):
        return (f"a packed type holds {dt.per_byte} values of 8 // {dt.per_byte} bits in one byte (bits: 8, "
                f"{dt.numpy} has {_numpy_bits(np_type)})")
    if np_type.itemsize * 8 != dt.bits or np_type.kind not in _NUMPY_KINDS[dt.kind] or np_type.fields:
        return (f"NumPy type {dt.numpy} ({np_type.itemsize * 8}-bit, kind {np_type.kind!r}) is not a "
                f"{dt.bits}-bit {dt.kind} type")
    return ""


def _check_tile_rule_names(src: Located, path, node, d: dict, issues: Issues, var: str = "t") -> None:
    """A tile rule may read ``t.<field>`` (a global rule ``g.<field>``), ``profile.<constant>``, the ISA's
    constants and its functions."""
    from .expr.evaluate import TILE_FIELDS

    fields = TILE_FIELDS if var == "t" else GlobalDesc.FIELDS
    consts = {*d["tile_types"], *d["blayouts"], *d["slayouts"], *d["pad_values"], *d["layouts"], *d["dtypes"]}
    consts |= {*d.get("global_layouts", {})}
    consts |= {v for e in d.get("enums", {}).values() for v in e["values"]}
    profile_constants = {c for p in d["profiles"].values() for c in p["constants"]}
    for n in walk(node):
        if isinstance(n, Name) and n.id not in consts:
            issues.add(src, path, f"unknown name {n.id!r}", "expr.unknown-name")
        elif isinstance(n, Attr) and not ((n.obj == var and n.name in fields)
                                          or (n.obj == "profile" and n.name in profile_constants)):
            issues.add(src, path, f"{n.obj}.{n.name} is neither a field of the operand {var} nor a profile "
                       "constant", "expr.unknown-name")
        elif isinstance(n, Call) and n.func not in FUNCTIONS:
            issues.add(src, path, f"unknown function {n.func!r}", "expr.unknown-function")
        elif isinstance(n, Reduce | Index):
            issues.add(src, path, "tile elements and reductions have no place in a tile rule", "expr.context")


# --------------------------------------------------------------------------- ops
def _lets(src: Located, path, mapping: dict[str, str], issues: Issues):
    out = []
    for name, text in (mapping or {}).items():
        try:
            out.append((name, parse_expr(text), text))
        except ExprError as exc:
            issues.add(src, (*path, name), f"let {name}: {exc.message}", exc.rule or "expr.syntax")
    return tuple(out)


def _parse(src: Located, path, text: str, issues: Issues, parser=parse_expr):
    try:
        return parser(text)
    except ExprError as exc:
        issues.add(src, path, exc.message, exc.rule or "expr.syntax")
        return None


def load_op(path: Path, isa: Isa, display: str | None = None, kinds: dict[str, Kind] | None = None) -> OpSpec:
    """Load and check one op file (its kind expanded); raises ``DatabaseErrors`` listing every problem."""
    issues = Issues()
    src = read_yaml(path, display)
    if not isinstance(src.data, dict):
        raise SpecError("an op file must be a mapping", where=src.where(()), rule="schema.type")
    src = expand(src, kinds or {})
    if _schema_errors(src, "op", issues):
        raise DatabaseErrors(issues.items)
    op = _build_op(src, isa, issues, path.stem)
    if issues.items:
        raise DatabaseErrors(issues.items)
    return op


def _check_attr(src: Located, path: tuple, o: Operand, isa: Isa, issues: Issues) -> None:
    """An attribute names a known enum, or has a type whose legal values and default fit it."""
    if not o.attr_type:
        if o.enum not in isa.enums:
            issues.add(src, path, f"unknown enum {o.enum!r} (known: {', '.join(isa.enums)})", "op.enum")
        elif o.dialect_default is not None and o.dialect_default not in isa.enums[o.enum].values:
            issues.add(src, path, f"dialect default {o.dialect_default!r} is not a value of {o.enum}", "op.enum")
        return
    if o.attr_type != "bool":
        dt = isa.dtypes.get(o.attr_type)
        if dt is None or dt.is_float:
            issues.add(src, path, f"attribute type {o.attr_type!r} is neither bool nor an integer dtype",
                       "op.attr-type")
            return
        if not o.attr_values:
            issues.add(src, path, "an integer attribute lists its legal values, or the samples of its range",
                       "op.attr-type")
        lo, hi = (-(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1) if dt.is_signed else (0, (1 << dt.bits) - 1)
        bounds = o.attr_range or (lo, hi)
        if not lo <= bounds[0] <= bounds[1] <= hi:
            issues.add(src, path, f"range {list(bounds)} does not fit {o.attr_type}", "op.attr-type")
        bad = [v for v in o.attr_values if isinstance(v, bool) or not isinstance(v, int)
               or not bounds[0] <= v <= bounds[1]]
    else:
        bad = [v for v in o.attr_values if not isinstance(v, bool)]
        if o.attr_range is not None:
            issues.add(src, path, "a bool attribute has no range", "op.attr-type")
    if bad:
        issues.add(src, path, f"values {bad} are not legal {o.attr_type} values of this attribute", "op.attr-type")
    if o.dialect_default is not None and not attrs.is_legal(isa, o, o.dialect_default):
        issues.add(src, path, f"dialect default {o.dialect_default!r} is not a legal value of this attribute",
                   "op.attr-type")


def _build_op(src: Located, isa: Isa, issues: Issues, stem: str) -> OpSpec:
    d = src.data
    name = d["op"]
    if name != stem:
        issues.add(src, ("op",), f"op name {name!r} must match the file name {stem!r}", "op.name")
    if d["family"] not in isa.families:
        issues.add(src, ("family",), f"unknown family {d['family']!r} (known: {', '.join(isa.families)})", "op.family")
    sources = {k: Source(k, v["kind"], v["ref"]) for k, v in d["sources"].items()}

    def check_sources(path, ids):
        for s in ids:
            if s not in sources:
                issues.add(src, path, f"unknown source {s!r} (declared: {', '.join(sources)})", "op.source")

    lets = _lets(src, ("let",), d.get("let", {}), issues)
    let_names = {n for n, _, _ in lets}

    modes: list[Mode] = []
    for mname, m in d["modes"].items():
        mp = ("modes", mname)
        operands = tuple(
            Operand(o["name"], o["role"], o.get("dtype", ""), o["text"], dict(o.get("usage", {})),
                    _domain(src, (*mp, "operands", i), o, isa, issues, tuple(x["name"] for x in m["operands"])),
                    o.get("domain", ""),
                    o.get("enum", ""), o.get("asm_key", ""), o.get("kind", "tile"),
                    o.get("dialect", {}).get("key", ""), o.get("dialect", {}).get("default"),
                    o.get("type", ""), tuple(o.get("values", ())),
                    tuple(o["range"]) if "range" in o else None,
                    *_alias(src, (*mp, "operands", i), o, m["operands"], let_names, isa, issues),
                    o.get("asm_type", ""),
                    _parse(src, (*mp, "operands", i, "sorted"), o["sorted"]["stride"], issues) if "sorted" in o
                    else None,
                    o["sorted"]["stride"] if "sorted" in o else "", o.get("cpp_struct", ""),
                    _encode(src, (*mp, "operands", i), o, m["operands"], isa, issues), o.get("encode", ""),
                    _parse(src, (*mp, "operands", i, "sorted", "block"), o["sorted"]["block"], issues)
                    if "block" in o.get("sorted", {}) else None, o.get("cpp_enum", ""))
            for i, o in enumerate(m["operands"])
        )
        for i, o in enumerate(operands):
            if o.sorted_stride is not None and (o.role != "in" or o.is_global):
                issues.add(src, (*mp, "operands", i), "sorted: applies to input tiles", "op.operands")
            if o.cpp_struct and (o.role != "out" or o.is_global):
                issues.add(src, (*mp, "operands", i), "cpp_struct: applies to output tiles", "op.operands")
            if o.cpp_enum and (not o.is_typed_attr or o.attr_type == "bool"):
                issues.add(src, (*mp, "operands", i), "cpp_enum: applies to typed integer attributes", "op.operands")
        names = [o.name for o in operands]
        if len(set(names)) != len(names):
            issues.add(src, (*mp, "operands"), "operand names must be unique", "op.operands")
        if not any(o.role == "out" for o in operands) and "effect" not in m:
            issues.add(src, (*mp, "operands"), "a mode with semantics needs at least one out operand (an "
                       "instruction without data semantics states its effect instead)", "op.operands")
        for o in operands:
            for prof in o.usage:
                if prof not in isa.profiles:
                    issues.add(src, (*mp, "operands"), f"usage for unknown profile {prof!r}", "op.profile")
        for i, o in enumerate(operands):
            if o.is_attr:
                _check_attr(src, (*mp, "operands", i), o, isa, issues)
            if o.asm_type and (o.role != "scalar" or o.asm_type in isa.dtypes):
                issues.add(src, (*mp, "operands", i), "asm_type: only a scalar operand has one, and it must not be "
                           "a dtype name", "op.operands")
            if (o.dialect_key or o.dialect_default is not None) and not o.is_attr:
                issues.add(src, (*mp, "operands", i), "dialect: only attr operands have a dialect spelling",
                           "op.operands")
        roles = {o.name: o.role for o in operands}
        kinds = {o.name: o.kind for o in operands}
        for form, v in m["asm"].items():
            for omit in v.get("may_omit", ()):
                if (omit not in v["ins"] and omit not in v["outs"]) or roles.get(omit) != "tmp":
                    issues.add(src, (*mp, "asm", form, "may_omit"), f"may_omit: {omit!r} is not a tmp operand "
                               f"the {form} form writes", "op.asm")
        for i, o in enumerate(operands):
            if o.is_global and o.role not in ("in", "out"):
                issues.add(src, (*mp, "operands", i), "a global operand must be an in or out operand", "op.operands")
        for form, f in m["asm"].items():
            for n in f["ins"] + f["outs"]:
                if n not in roles:
                    issues.add(src, (*mp, "asm", form), f"asm form {form} names unknown operand {n!r}", "op.asm")
            for n in f["outs"]:
                if roles.get(n) != "out":
                    issues.add(src, (*mp, "asm", form), f"{n!r} is listed in outs but is not an out operand", "op.asm")
            for n in f["ins"]:
                if roles.get(n) == "attr":
                    issues.add(src, (*mp, "asm", form), f"{n!r} is an attribute: it is printed in the attribute "
                               "dictionary, not listed in ins", "op.asm")
                if roles.get(n) == "out" and kinds.get(n) != "global":
                    issues.add(src, (*mp, "asm", form), f"{n!r} is an out operand listed in ins (only a global "
                               "operand, written in place, may be)", "op.asm")
            left_out = [o.name for o in operands if o.role in ("in", "out", "scalar")
                        and o.name not in f["ins"] + f["outs"]]
            if left_out:
                issues.add(src, (*mp, "asm", form), f"asm form {form} leaves out {left_out}: a form may imply only "
                           "tmp operands (the implementation allocates them)", "op.asm")
        dps = m["asm"]["dps"]
        missing = [o.name for o in operands if not o.is_attr and o.name not in dps["ins"] + dps["outs"]]
        if missing:
            issues.add(src, (*mp, "asm", "dps"), f"the DPS form must name every operand; missing {missing}", "op.asm")
        arrays = tuple(CppArray(a, v["type"], v["element"], tuple(v["of"]))
                       for a, v in m["cpp"].get("arrays", {}).items())
        for arr in arrays:
            if arr.name in roles or arr.name not in m["cpp"]["args"]:
                issues.add(src, (*mp, "cpp", "arrays", arr.name), f"array {arr.name!r} must be an argument of "
                           "cpp.args and not an operand's name", "op.cpp")
            bad = [n for n in arr.members if roles.get(n) != "scalar"]
            if bad:
                issues.add(src, (*mp, "cpp", "arrays", arr.name), f"array members must be scalar operands, not "
                           f"{bad}", "op.cpp")
        conv = _conv_tile(src, mp, m["cpp"].get("conv_tile"), roles, kinds, let_names, issues)
        types = tuple(CppType(a, v["template"], tuple(v["of"])) for a, v in m["cpp"].get("types", {}).items())
        for t in types:
            bad = [n for n in t.members if roles.get(n) != "attr"]
            if bad or t.name in roles:
                issues.add(src, (*mp, "cpp", "types", t.name), f"a type's arguments must be attribute operands and its "
                           f"name no operand's ({bad or t.name})", "op.cpp")
        members = {a.name: list(a.members) for a in arrays}
        if conv is not None:
            members[conv.name] = list(conv.members)
        named = [n for a in m["cpp"]["args"] if not CPP_LITERAL.fullmatch(a)
                 for n in members.get(a, [a.removeprefix("&")])]  # &x: the operand x passed by address
        template_attrs = [a for a in m["cpp"].get("template", []) if roles.get(a) == "attr"]
        template_attrs += [n for t in types for n in t.members]
        if sorted(named + template_attrs) != sorted(names):
            issues.add(src, (*mp, "cpp", "args"), "cpp.args must list every operand exactly once (other entries "
                       "must be C++ literals such as true or 0; an attribute may be a template argument instead)",
                       "op.cpp")
        semantics = []
        if ("semantics" in m) == ("effect" in m):
            issues.add(src, mp, "a mode has either semantics or an effect (an instruction without data semantics)",
                       "op.effect")
        for i, item in enumerate(m.get("semantics", ())):
            text = item if isinstance(item, str) else item["do"]
            stmt = _parse(src, (*mp, "semantics", i), text, issues, parse_statement)
            if stmt is None:
                continue
            extra: dict[str, Any] = {}
            if isinstance(item, dict):
                if "when" in item:
                    extra.update(when=_parse(src, (*mp, "semantics", i), item["when"], issues),
                                 when_text=item["when"])
                extra.update({k: item[k] for k in ("writes", "reads", "combine") if k in item})
                if "where" in item:
                    extra.update(where=_parse(src, (*mp, "semantics", i), item["where"], issues),
                                 where_text=item["where"])
                stmt_lets = []
                for let_name, let_text in item.get("let", {}).items():
                    node = _parse(src, (*mp, "semantics", i, "let", let_name), let_text, issues)
                    if let_name in roles or let_name in let_names:
                        issues.add(src, (*mp, "semantics", i, "let", let_name), f"statement name {let_name!r} "
                                   "hides an operand or an op-level let name", "op.semantics")
                    elif node is not None:
                        stmt_lets.append((let_name, node, let_text))
                if stmt_lets:
                    extra.update(lets=tuple(stmt_lets))
            stmt = replace(stmt, **extra) if extra else stmt
            type_vars = {o.dtype for o in operands if o.dtype}
            _check_statement(src, (*mp, "semantics", i), stmt.expanded(), roles, kinds, let_names | type_vars, isa,
                             issues)
            semantics.append(stmt)
        for key in ("scaled_valid", "fixed_shape"):
            for n in m.get(key, ()):
                if roles.get(n) not in ("in", "out", "tmp") or kinds.get(n) == "global":
                    issues.add(src, (*mp, key), f"{key}: {n!r} is not a tile operand", "op.operands")
        examples: list[Example] = []
        for where in [(*mp, "example"), *((*mp, "bases", k) for k in range(len(m.get("bases", ()))))]:
            ex = m["example"] if where[-1] == "example" else m["bases"][where[-1]]
            if ex["profile"] not in isa.profiles:
                issues.add(src, where, f"unknown profile {ex['profile']!r}", "op.profile")
            if sorted(ex["tiles"]) != sorted(names):
                issues.add(src, (*where, "tiles"), "an example must give a tile for every operand", "op.example")
            tiles = {n: attrs.spell_value(t) for n, t in ex["tiles"].items()}  # a typed attribute: true, 1
            examples.append(Example(ex["profile"], tiles, src.line(where), src.file_of(where),
                                    ex.get("valid", "target")))
        for axed in m.get("valid_axes", {}):
            if axed not in names:
                issues.add(src, (*mp, "valid_axes", axed), f"{axed!r} is no operand of the mode", "op.operand")
        for divided in m.get("valid_divisors", {}):
            if divided not in names:
                issues.add(src, (*mp, "valid_divisors", divided), f"{divided!r} is no operand of the mode",
                           "op.operand")
        modes.append(
            Mode(
                name=mname, title=m["title"], operands=operands, semantics=tuple(semantics),
                cpp_name=m["cpp"]["name"], cpp_args=tuple(m["cpp"]["args"]), cpp_signature=m["cpp"]["signature"],
                cpp_template=tuple(m["cpp"].get("template", ())), cpp_arrays=arrays, cpp_types=types,
                effect=_effect(src, mp, m, names, isa, issues) if "effect" in m else None,
                reads_state=_reads_state(semantics, isa, set(names)),
                cpp_conv_tile=conv,
                asm={k: AsmForm(tuple(v["ins"]), tuple(v["outs"]), tuple(v.get("may_omit", ())))
                     for k, v in m["asm"].items()},
                asm_tags=dict(m.get("asm_tags", {})),
                example=examples[0], bases=tuple(examples[1:]), scaled_valid=tuple(m.get("scaled_valid", ())),
                fixed_shape=tuple(m.get("fixed_shape", ())),
                valid_divisors={k: (v[0], v[1]) for k, v in m.get("valid_divisors", {}).items()},
                case_shapes=m.get("case_shapes", "shared"),
                valid_axes={k: (v[0], v[1]) for k, v in m.get("valid_axes", {}).items()},
                documents=tuple(m.get("documents", ())),
            )
        )
    mode_names = [m.name for m in modes]
    by_mode = {m.name: m for m in modes}

    # dtype tables
    tables: dict[str, DTypeTable] = {}
    for prof, t in d["dtypes"].items():
        tp = ("dtypes", prof)
        if prof not in isa.profiles:
            issues.add(src, tp, f"unknown profile {prof!r} (known: {', '.join(isa.profiles)})", "op.profile")
            continue
        check_sources(tp, t["sources"])
        rows = []
        for i, r in enumerate(t["rows"]):
            rp = (*tp, "rows", i)
            rmodes = tuple(r.get("modes", mode_names))
            for mn in rmodes:
                if mn not in by_mode:
                    issues.add(src, rp, f"unknown mode {mn!r}", "op.mode")
            types: dict[str, tuple[str, ...]] = {}
            for var, allowed in r.items():
                if var in ("modes", "note"):
                    continue
                if allowed == "any":  # packed types (two values per byte) only where a table names them
                    allowed = [n for n, dt in isa.dtypes.items()
                               if (dt.profiles is None or prof in dt.profiles) and dt.per_byte == 1]
                for dt_name in allowed:
                    dt = isa.dtypes.get(dt_name)
                    if dt is None:
                        issues.add(src, rp, f"unknown dtype {dt_name!r}", "op.dtype")
                    elif not dt.exists_on(prof):
                        issues.add(src, rp, f"dtype {dt_name} does not exist on profile {prof}", "op.dtype")
                types[var] = tuple(allowed)
            for mn in rmodes:
                if mn in by_mode and set(types) != set(by_mode[mn].type_vars):
                    issues.add(
                        src, rp,
                        f"row must give every type variable of mode {mn} ({', '.join(by_mode[mn].type_vars)}), "
                        f"got {', '.join(types)}",
                        "op.dtype-vars",
                    )
            rows.append(DTypeRow(rmodes, types, r.get("note", {}), src.line(rp)))
        tables[prof] = DTypeTable(prof, tuple(rows), t["basis"], tuple(t["sources"]), t.get("note", {}))
    for m in modes:  # an operand assembly types by a word of its own (index) has one dtype everywhere
        for o in m.operands:
            if o.asm_type and o.role == "scalar":
                found = {dt for tab in tables.values() for r in tab.rows if not r.modes or m.name in r.modes
                         for dt in r.types.get(o.dtype, ())}
                if len(found) != 1:
                    issues.add(src, ("modes", m.name, "operands"), f"{o.name}: asm_type {o.asm_type} needs its type "
                               f"variable {o.dtype} to take one dtype on every profile, got {sorted(found)}",
                               "op.operands")

    # rules
    rules: list[Rule] = []
    seen_ids: dict[str, int] = {}
    for i, r in enumerate(d["rules"]):
        rp = ("rules", i)
        rid = r["id"]
        if rid in seen_ids:
            issues.add(src, rp, f"rule id {rid!r} is used twice (first at line {seen_ids[rid]})", "op.rule-id")
        seen_ids[rid] = src.line(rp)
        check_sources(rp, r["sources"])
        kind = r.get("kind", "check")
        rprofiles = tuple(r.get("profiles", isa.profiles))
        for p in rprofiles:
            if p not in isa.profiles:
                issues.add(src, rp, f"unknown profile {p!r}", "op.profile")
        rmodes = tuple(r.get("modes", mode_names))
        for mn in rmodes:
            if mn not in by_mode:
                issues.add(src, rp, f"unknown mode {mn!r}", "op.mode")
        rule_lets = _lets(src, (*rp, "let"), r.get("let", {}), issues)
        check = when = None
        operands: tuple[str, ...] = tuple(r.get("operands", ()))
        if kind == "check":
            check = _parse(src, (*rp, "check"), r["check"], issues)
        if "when" in r:
            when = _parse(src, (*rp, "when"), r["when"], issues)
        allow = tuple(r.get("allow", ()))
        if kind == "loc":
            for a in allow:
                if a not in isa.tile_types:
                    issues.add(src, rp, f"unknown tile type {a!r}", "op.rule")
        if kind == "layout":
            for a in allow:
                if a not in isa.layouts and a not in isa.global_layouts:
                    known = ", ".join((*isa.layouts, *isa.global_layouts))
                    issues.add(src, rp, f"unknown layout {a!r} (known: {known})", "op.rule")
        referenced = _referenced_tiles([n for n in (check, when) if n] + [n for _, n, _ in rule_lets + lets])
        if kind == "check" and not operands:
            operands = tuple(n for n in referenced if any(n in [o.name for o in by_mode[m].operands]
                                                          for m in rmodes if m in by_mode))
        for mn in rmodes:
            if mn not in by_mode:
                continue
            mode_ops = {o.name for o in by_mode[mn].operands}
            for n in operands:
                if n not in mode_ops:
                    issues.add(src, rp, f"operand {n!r} does not exist in mode {mn}", "op.rule")
            names_ok = mode_ops | let_names | {x for x, _, _ in rule_lets} | set(by_mode[mn].type_vars)
            for node in (check, when, *(n for _, n, _ in rule_lets)):
                if node is not None:
                    _check_names(src, rp, node, names_ok, isa, issues)
        phase = _phase([n for n in (check, when) if n is not None], rule_lets + lets)
        message = r.get("message") or _default_message(kind, operands, allow)
        rules.append(
            Rule(
                id=rid, kind=kind, operands=operands, allow=allow, check=check, check_text=r.get("check", ""),
                when=when, when_text=r.get("when", ""), let=rule_lets, profiles=rprofiles, modes=rmodes,
                phase=phase, message=message, sources=tuple(r["sources"]), line=src.line(rp), file=src.file_of(rp),
            )
        )

    num = d["numerics"]
    tolerance = {}
    for dt_name, tol in num.get("tolerance", {}).items():
        if dt_name not in isa.dtypes:
            issues.add(src, ("numerics", "tolerance", dt_name), f"unknown dtype {dt_name!r}", "op.dtype")
        values = (float(tol["rtol"]), float(tol["atol"]))  # the schema bounds both, so float() cannot overflow
        if not all(math.isfinite(v) for v in values):
            issues.add(src, ("numerics", "tolerance", dt_name), "tolerances must be finite numbers", "op.tolerance")
        tolerance[dt_name] = Tolerance(*values)
    numerics = Numerics(
        exact=tuple(n for n in isa.dtypes if n not in tolerance), tolerance=tolerance, nan=num["nan"],
        signed_zero=num["signed_zero"], ties=num["ties"], overflow=num["overflow"], notes=num["notes"],
        division_by_zero=num.get("division_by_zero", "not-applicable"),
        shift_out_of_range=num.get("shift_out_of_range", "not-applicable"),
        exact_specials=tuple(num.get("exact_specials", ())),
    )
    for p in numerics.exact_specials:
        if p not in isa.profiles:
            issues.add(src, ("numerics", "exact_specials"), f"unknown profile {p!r}", "op.profile")
    differences = []
    rule_ids = {r.id for r in rules} | {r.id for r in (*isa.tile_rules, *isa.global_rules)}
    for i, diff in enumerate(d.get("differences", [])):
        dp = ("differences", i)
        check_sources(dp, [c["source"] for c in diff["claims"]])
        observed = []
        for j, obs in enumerate(diff.get("observed", [])):
            op_path = (*dp, "observed", j)
            if obs["profile"] not in isa.profiles:
                issues.add(src, op_path, f"unknown profile {obs['profile']!r}", "op.profile")
            unknown = [m for m in obs.get("modes", []) if m not in mode_names]
            if unknown:
                issues.add(src, op_path, f"unknown mode(s) {', '.join(unknown)}", "op.mode")
            when = _parse(src, (*op_path, "when"), obs["when"], issues) if "when" in obs else None
            for mn in obs.get("modes") or mode_names:
                if when is not None and mn in by_mode:
                    known = {o.name for o in by_mode[mn].operands} | let_names | set(by_mode[mn].type_vars)
                    _check_names(src, (*op_path, "when"), when, known, isa, issues)
            unknown = [r for r in obs.get("rules", []) if r not in rule_ids and not r.startswith("dtype.")]
            if unknown:
                issues.add(src, op_path, f"unknown rule(s) {', '.join(unknown)}", "op.rule")
            observed.append(Observation(obs["profile"], obs["as"], tuple(obs.get("modes", [])),
                                        tuple(obs.get("rules", [])), when, obs.get("when", "")))
        differences.append(
            Difference(diff["id"], diff["topic"], tuple((c["source"], dict(c["says"])) for c in diff["claims"]),
                       diff["resolution"], diff["kind"], src.line(dp), tuple(observed))
        )
    perf = []
    for i, p in enumerate(d.get("performance", [])):
        pp = ("performance", i)
        if p["profile"] not in isa.profiles:
            issues.add(src, pp, f"unknown profile {p['profile']!r}", "op.profile")
        check_sources(pp, [p["source"]])
        for row in p["rows"]:
            if len(row) != len(p["columns"]):
                issues.add(src, pp, "every performance row needs one cell per column", "op.performance")
        perf.append(PerfTable(p["profile"], p["title"], tuple(p["columns"]),
                              tuple(tuple(c if isinstance(c, dict) else str(c) for c in row) for row in p["rows"]),
                              p["source"]))
    return OpSpec(
        name=name, file=src.file, family=d["family"], summary=d["summary"], description=d["description"],
        let=lets, modes=tuple(modes), dtypes=tables, rules=tuple(rules), numerics=numerics,
        differences=tuple(differences), sources=sources, performance=tuple(perf), raw=d,
        kind=d.get("kind"), params=dict(d.get("params") or {}),
    )


# Operand fields that may be known only at run time: valid shapes, and a global view's shape, strides and place.
RUNTIME_FIELDS = frozenset({"valid_row", "valid_col", "offset", "size", "span",
                            *(f"dim{k}" for k in range(GLOBAL_RANK)), *(f"stride{k}" for k in range(GLOBAL_RANK))})


def _phase(nodes: list, lets) -> str:
    """``runtime`` when the check reads a value known only at run time, directly or through its lets."""
    bound = {name: node for name, node, _ in lets}
    pending, seen = list(nodes), set()
    while pending:
        for n in walk(pending.pop()):
            if isinstance(n, Attr) and n.name in RUNTIME_FIELDS:
                return "runtime"
            if isinstance(n, Name) and n.id in bound and n.id not in seen:
                seen.add(n.id)
                pending.append(bound[n.id])
    return "static"


def _domain(src: Located, path, operand: dict, isa: Isa, issues: Issues, others: tuple[str, ...] = ()):
    """An operand's value domain: an expression over ``x``, its type variable and the other operands' fields
    (an index operand's range is the table's extent)."""
    if "domain" not in operand:
        return None
    node = _parse(src, (*path, "domain"), operand["domain"], issues)
    if node is not None:
        if operand["role"] not in ("in", "scalar"):
            issues.add(src, (*path, "domain"), "only in and scalar operands have a value domain", "op.domain")
        _check_names(src, (*path, "domain"), node, {"x", operand["dtype"], *others}, isa, issues)
    return node


def _encode(src: Located, path, operand: dict, operands: list[dict], isa: Isa, issues: Issues):
    """An input's ``encode``: the value stored for a generated value ``x``, an expression over ``x`` and the
    mode's type variables (a Scaling tile's packed quantisation words built from small random numbers)."""
    if "encode" not in operand:
        return None
    node = _parse(src, (*path, "encode"), operand["encode"], issues)
    if node is not None:
        if operand["role"] not in ("in", "scalar"):
            issues.add(src, (*path, "encode"), "only in and scalar operands have an encoding", "op.encode")
        type_vars = {o.get("dtype", "") for o in operands} - {""}
        _check_names(src, (*path, "encode"), node, {"x", *type_vars}, isa, issues)
    return node


def _alias(src: Located, path, operand: dict, operands: list[dict], let_names: set[str], isa: Isa,
           issues: Issues) -> tuple[str, Node | None, str, bool]:
    """An out operand's ``alias``: the in tile whose storage it is, and the byte offset there (an expression
    over the operands' fields, scalar and attribute operands and the op's ``let`` names)."""
    alias = operand.get("alias")
    if alias is None:
        return "", None, "", False
    roles = {o["name"]: (o["role"], o.get("kind", "tile")) for o in operands}
    if operand["role"] != "out" or operand.get("kind", "tile") != "tile":
        issues.add(src, (*path, "alias"), "only an out tile operand aliases another tile's storage", "op.alias")
    if roles.get(alias["of"]) != ("in", "tile"):
        issues.add(src, (*path, "alias", "of"), f"{alias['of']!r} is not an in tile operand", "op.alias")
    text = alias.get("at", "0")
    node = _parse(src, (*path, "alias", "at"), text, issues)
    if node is not None:
        types = {o["dtype"] for o in operands if o.get("dtype")}
        _check_names(src, (*path, "alias", "at"), node, set(roles) | let_names | types, isa, issues)
    return alias["of"], node, text, bool(alias.get("in_place", False))


def _referenced_tiles(nodes) -> list[str]:
    names: list[str] = []
    for node in nodes:
        for n in walk(node):
            if isinstance(n, Attr) and n.obj != "profile" and n.obj not in names:
                names.append(n.obj)
    return names


def _tile_storage(src, d: dict, issues: Issues) -> TileStorage | None:
    """``tile_storage`` of isa.yaml: the box expressions read only f, s, w and the slayouts; every (blayout,
    slayout) pair has exactly one offset expression, over r, c, rows, cols, br, bc, w."""
    ts = d["tile_storage"]
    enums = set(d["slayouts"]) | set(d["blayouts"])
    box = {}
    for key in ("box_rows", "box_cols"):
        node = _parse(src, ("tile_storage", key), ts[key], issues)
        if node is not None:
            _check_names(src, ("tile_storage", key), node, {"f", "s", "w"} | enums, None, issues)
            box[key] = node
    offsets: dict[tuple[str, str], Node] = {}
    names: dict[tuple[str, str], str] = {}
    texts: dict[tuple[str, str], str] = {}
    for k, entry in enumerate(ts["offsets"]):
        pair = (entry["blayout"], entry["slayout"])
        where = ("tile_storage", "offsets", k)
        if pair[0] not in d["blayouts"] or pair[1] not in d["slayouts"]:
            issues.add(src, where, f"unknown blayout/slayout {pair}", "isa.tile-storage")
            continue
        if pair in offsets:
            issues.add(src, where, f"a second offset for {pair}", "isa.tile-storage")
            continue
        node = _parse(src, (*where, "offset"), entry["offset"], issues)
        if node is not None:
            _check_names(src, (*where, "offset"), node, {"r", "c", "rows", "cols", "br", "bc", "w"}, None, issues)
            offsets[pair], names[pair], texts[pair] = node, entry["name"], entry["offset"]
    missing = [(b, s) for b in d["blayouts"] for s in d["slayouts"] if (b, s) not in offsets]
    if missing and not issues.items:
        issues.add(src, ("tile_storage", "offsets"), f"no storage offset for {missing}", "isa.tile-storage")
    if len(box) != 2 or missing:
        return None
    return TileStorage(box["box_rows"], box["box_cols"], offsets, names, texts)


def _conv_tile(src, mp, d: dict | None, roles: dict[str, str], kinds: dict[str, str], let_names: set[str],
               issues: Issues) -> CppConvTile | None:
    """``cpp.conv_tile``: a ConvTile argument built from a Mat tile operand and setter calls."""
    if d is None:
        return None
    where = (*mp, "cpp", "conv_tile")
    if d["name"] in roles:
        issues.add(src, where, f"conv_tile {d['name']!r} must not be an operand's name", "op.cpp")
    if roles.get(d["data"]) != "in" or kinds.get(d["data"]) == "global":
        issues.add(src, where, f"conv_tile data {d['data']!r} must be an input tile operand", "op.cpp")
    dims = []
    for k, text in enumerate(d["dims"]):
        node = _parse(src, (*where, "dims", k), text, issues)
        if node is not None:
            _check_names(src, (*where, "dims", k), node, set(roles) | let_names, None, issues)
            dims.append(node)
    calls = []
    for k, call in enumerate(d.get("set", ())):
        for arg in call[1:]:
            if isinstance(arg, str) and roles.get(arg) not in ("scalar", "attr"):
                issues.add(src, (*where, "set", k), f"setter argument {arg!r} is not a scalar or attribute operand",
                           "op.cpp")
        calls.append((call[0], tuple(call[1:])))
    named = [n.id for node in dims for n in walk(node) if isinstance(n, Name) and n.id in roles]
    return CppConvTile(d["name"], d["data"], tuple(dims), tuple(d["dims"]), tuple(calls),
                       tuple(dict.fromkeys(named)))


def _effect(src, mp, m: dict, names: list[str], isa: Isa, issues: Issues) -> Effect:
    """A mode's ``effect``; a configuration's ``sets`` name registers and fields of ``state`` in isa.yaml and
    compute each value from the mode's operands and type variables."""
    e = m["effect"]
    sets: dict[str, dict[str, tuple[Node, str]]] = {}
    type_vars = {o.get("dtype", "") for o in m["operands"]} - {""}
    for reg, fields in e.get("sets", {}).items():
        where = (*mp, "effect", "sets", reg)
        if e["kind"] != "configuration":
            issues.add(src, where, "only a configuration effect sets state", "op.state")
        if reg not in isa.state:
            issues.add(src, where, f"unknown state register {reg!r} (isa.yaml state: "
                       f"{', '.join(isa.state) or 'none'})", "op.state")
            continue
        missing = sorted(set(isa.state[reg].fields) - set(fields))
        if missing:
            issues.add(src, where, f"sets {reg} without its field(s) {', '.join(missing)}", "op.state")
        sets[reg] = {}
        for fname, value in fields.items():
            text = str(value)  # an integer constant or an expression
            if fname not in isa.state[reg].fields:
                issues.add(src, (*where, fname), f"state register {reg!r} has no field {fname!r}", "op.state")
                continue
            node = _parse(src, (*where, fname), text, issues)
            if node is not None:
                _check_names(src, (*where, fname), node, set(names) | type_vars, isa, issues)
                sets[reg][fname] = (node, text)
    return Effect(e["kind"], e["text"], sets)


def _reads_state(semantics, isa: Isa, operands: set[str]) -> tuple[str, ...]:
    """The state registers a mode's statements read (``<register>.<field>``), in order of first use."""
    found: list[str] = []
    for stmt in semantics:
        stmt = stmt.expanded()
        parts = (stmt.value, stmt.where, stmt.when, *stmt.target.indices)
        for node in (n for part in parts if part is not None for n in walk(part)):
            if isinstance(node, Attr) and node.obj in isa.state and node.obj not in operands \
                    and node.obj not in found:
                found.append(node.obj)
    return tuple(found)


def _check_names(src, path, node, known: set[str], isa: Isa | None, issues: Issues) -> None:
    consts: set[str] = set()
    if isa is not None:
        consts = set(isa.tile_types) | set(isa.blayouts) | set(isa.slayouts) | set(isa.pad_values)
        consts |= set(isa.layouts) | set(isa.global_layouts) | set(isa.dtypes)
        consts |= {v for e in isa.enums.values() for v in e.values}
    for n in walk(node):
        if isinstance(n, Name) and n.id not in known and n.id not in consts:
            issues.add(src, path, f"unknown name {n.id!r}", "expr.unknown-name")
        elif isinstance(n, Attr) and isa is not None and n.obj in isa.state and n.obj not in known:
            if n.name not in isa.state[n.obj].fields:
                issues.add(src, path, f"state register {n.obj!r} has no field {n.name!r}", "op.state")
        elif isinstance(n, Attr) and n.obj != "profile" and n.obj not in known:
            issues.add(src, path, f"{n.obj!r} is not an operand", "expr.unknown-name")
        elif isinstance(n, Call) and n.func not in FUNCTIONS:
            issues.add(src, path, f"unknown function {n.func!r}", "expr.unknown-function")
        elif isinstance(n, Reduce | Index):
            issues.add(src, path, "tile elements and reductions belong in semantics, not in checks", "expr.context")


def _check_statement(src, path, stmt, roles: dict[str, str], kinds: dict[str, str], let_names: set[str], isa: Isa,
                     issues: Issues):
    if roles.get(stmt.target.base) != "out":
        issues.add(src, path, f"semantics must write an out operand, not {stmt.target.base!r}", "op.semantics")
    variables = set(statement_vars(stmt))
    for n in (stmt.target, *(x for x in walk(stmt.value) if isinstance(x, Index))):
        if n.base not in roles:
            continue
        if kinds.get(n.base) == "global":
            want = {"flat": (1,), "": (2, GLOBAL_RANK)}.get(n.view, ())
            shown = f"{n.base}.{n.view}[...]" if n.view else f"{n.base}[...]"
            if len(n.indices) not in want:
                issues.add(src, path, f"{shown} takes {' or '.join(map(str, want)) or 'no'} indices on a global "
                           "operand", "op.semantics")
        elif n.view == "byte":
            if len(n.indices) != 1:
                issues.add(src, path, f"{n.base}.byte[...] takes one index (a byte of the tile's storage)",
                           "op.semantics")
        elif n.view == "flat" or len(n.indices) != 2:
            issues.add(src, path, f"{n.base}[...] needs two indices (.flat is for global operands)", "op.semantics")
    if stmt.target.view == "byte":
        free = [i.id for i in stmt.target.indices if isinstance(i, Name)]
        if any(v not in {d for d, _ in stmt.domain} for v in free):
            issues.add(src, path, "a statement writing t.byte[k] must bound k with 'for k < N'", "op.semantics")
    if kinds.get(stmt.target.base) == "global":
        free = [i.id for i in stmt.target.indices if isinstance(i, Name)]
        bound = {v for v, _ in stmt.domain}
        if any(v not in bound for v in free):
            issues.add(src, path, "a statement writing global memory must bound every index variable with "
                       "'for v < N'", "op.semantics")
    if stmt.writes == "tile" and kinds.get(stmt.target.base) == "global":
        issues.add(src, path, "writes: tile applies to tile targets only", "op.semantics")
    reductions = [n for part in (stmt.value, *stmt.target.indices, *([stmt.where] if stmt.where else []))
                  for n in walk(part) if isinstance(n, Reduce)]
    nested = any(inner is not outer and inner.var == outer.var
                 for outer in reductions for inner in walk(outer.body) if isinstance(inner, Reduce))
    # side-by-side reductions may share a variable (one axis, the same range); a nested one may not
    if nested or {r.var for r in reductions} & ({i.id for i in stmt.target.indices if isinstance(i, Name)}
                                                | {v for v, _ in stmt.domain}):
        issues.add(src, path, "a reduction variable must not reuse another index variable", "op.semantics")
    parts = (stmt.value, *stmt.target.indices, *([stmt.where] if stmt.where is not None else []))
    tile_names: set[int] = set()  # Name nodes standing for a tile operand (inside(src1, i, j))
    for n in (node for part in parts for node in walk(part)):
        if isinstance(n, Call) and n.func in FUNCTIONS:
            for k in FUNCTIONS[n.func].tile_args:
                arg = n.args[k] if k < len(n.args) else None
                tile = roles.get(arg.id) in ("in", "out", "tmp") and kinds.get(arg.id) != "global" if isinstance(
                    arg, Name) else False
                if tile:
                    tile_names.add(id(arg))
                else:
                    issues.add(src, path, f"argument {k + 1} of {n.func}() must name a tile operand", "op.semantics")
    for n in (node for part in parts for node in walk(part)):
        if id(n) in tile_names:
            continue
        if isinstance(n, Index):
            if n.base not in roles:
                issues.add(src, path, f"semantics read unknown operand {n.base!r}", "op.semantics")
        elif isinstance(n, Reduce) and n.func not in REDUCTIONS:
            known = ", ".join(REDUCTIONS)
            issues.add(src, path, f"unknown reduction {n.func!r} (known: {known})", "expr.unknown-function")
        elif isinstance(n, Call) and n.func not in FUNCTIONS:
            issues.add(src, path, f"unknown element function {n.func!r}", "expr.unknown-function")
        elif (isinstance(n, Name) and n.id not in variables and n.id not in let_names
              and roles.get(n.id) not in ("scalar", "attr") and isa.enum_of_value(n.id) is None
              and n.id not in isa.dtypes):
            issues.add(src, path, f"unknown name {n.id!r} in semantics", "expr.unknown-name")
        elif isinstance(n, Attr) and n.obj in isa.state and n.obj not in roles:
            if n.name not in isa.state[n.obj].fields:
                issues.add(src, path, f"state register {n.obj!r} has no field {n.name!r} (fields: "
                           f"{', '.join(isa.state[n.obj].fields)})", "op.state")
        elif isinstance(n, Attr) and n.obj != "profile" and n.obj not in roles:
            issues.add(src, path, f"{n.obj!r} is not an operand", "expr.unknown-name")


def _default_message(kind: str, operands, allow) -> dict[str, str]:
    ops = ", ".join(operands)
    if kind == "loc":
        return {"en": f"{ops} must be a {' or '.join(allow)} tile", "zh": f"{ops} 必须为 {' 或 '.join(allow)} Tile"}
    return {"en": f"{ops} must use layout {' or '.join(allow)}", "zh": f"{ops} 必须使用 {' 或 '.join(allow)} 布局"}


# --------------------------------------------------------------------------- database
def op_files(root: Path) -> list[Path]:
    return sorted((root / "ops").glob("*.yaml"))


def kind_files(root: Path) -> list[Path]:
    return sorted((root / "kinds").glob("*.yaml"))


def load_each(paths: list[Path], load) -> tuple[list, list[SpecError]]:
    """``load(path)`` for every path, collecting every problem instead of stopping at the first."""
    loaded: list = []
    errors: list[SpecError] = []
    for path in paths:
        try:
            loaded.append(load(path))
        except DatabaseErrors as exc:
            errors.extend(exc.errors)
        except SpecError as exc:
            errors.append(exc)
    return loaded, errors


def load_kinds(root: Path) -> dict[str, Kind]:
    """Every kind under ``root/kinds``; raises ``DatabaseErrors`` with every problem."""
    kinds, errors = load_each(kind_files(root), lambda path: load_kind(path, display_path(path)))
    if errors:
        raise DatabaseErrors(errors)
    return {kind.name: kind for kind in kinds}


def _unimplemented_pages(src: Located, entries: list, issues: Issues) -> tuple[UnimplementedPage, ...]:
    seen: set[str] = set()
    pages = []
    for k, e in enumerate(entries):
        if e["page"] in seen:
            issues.add(src, ("unimplemented_pages", k, "page"), f"page {e['page']} is recorded twice",
                       "isa.duplicate-page")
        seen.add(e["page"])
        pages.append(UnimplementedPage(e["page"], e["name"], e["page_says"], e["headers_show"],
                                       where=src.where(("unimplemented_pages", k))))
    return tuple(pages)


def op_page(op: OpSpec) -> str | None:
    """The upstream tile-op page an instruction documents: its source ``page`` when that is one."""
    source = op.sources.get("page")
    if source is not None and source.kind == "doc" and source.ref.startswith(TILE_OPS_DIR):
        return source.ref
    return None


TILE_OPS_DIR = "docs/isa/tile/ops/"


def check_unimplemented(isa: Isa, ops: list[OpSpec]) -> list[SpecError]:
    """A page recorded as describing nothing implemented must not be the page of an instruction."""
    by_page = {op_page(op): op.name for op in ops}
    return [SpecError(f"{entry.page} is recorded as unimplemented, but it is the page of {by_page[entry.page]}",
                      where=entry.where, rule="isa.unimplemented-page")
            for entry in isa.unimplemented_pages if entry.page in by_page]


def check_mnemonics(ops: list[OpSpec]) -> list[SpecError]:
    """Assembly names one instruction per mnemonic: none repeats another op's name or mnemonic."""
    seen: dict[str, str] = {op.name: op.name for op in ops}
    problems = []
    for op in ops:
        if op.mnemonic == op.name:
            continue
        if op.mnemonic in seen:
            problems.append(SpecError(f"mnemonic {op.mnemonic!r} of {op.name} is already {seen[op.mnemonic]}'s",
                                      where=op.file, rule="op.mnemonic"))
        seen[op.mnemonic] = op.name
    return problems


_LOADED: dict[tuple, Database] = {}
_LOADED_LIMIT = 4


def _content_key(root_path: Path) -> tuple:
    """What a load depends on: the specs' bytes, where they are, and the working directory (message paths)."""
    digest = hashlib.blake2b(digest_size=20)
    for path in [root_path / "isa.yaml", *kind_files(root_path), *op_files(root_path)]:
        digest.update(path.name.encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"\1unreadable")
        digest.update(b"\0")
    return str(root_path.resolve()), os.getcwd(), digest.hexdigest()


def load_database(root: str | os.PathLike | None = None, *, reuse: bool = True) -> Database:
    """Load every spec; raise ``DatabaseErrors`` with every problem found.

    A database is immutable, so a process loads the same bytes once: later calls with unchanged spec files
    (same contents, same place, same working directory) return the database already built, unless
    ``reuse`` is false (a fresh build, e.g. to check that two builds agree).
    """
    root_path = find_specs_root(root)
    key = _content_key(root_path)
    if reuse and key in _LOADED:
        return _LOADED[key]
    database = _load_database(root_path)
    if len(_LOADED) >= _LOADED_LIMIT:
        _LOADED.pop(next(iter(_LOADED)))
    _LOADED[key] = database
    return database


def _load_database(root_path: Path) -> Database:
    isa = load_isa(root_path / "isa.yaml", display_path(root_path / "isa.yaml"))
    kinds = load_kinds(root_path)
    ops, errors = load_each(op_files(root_path), lambda path: load_op(path, isa, display_path(path), kinds))
    errors = [*errors, *check_unimplemented(isa, ops), *check_mnemonics(ops)]
    if errors:
        raise DatabaseErrors(errors)
    return Database(isa=isa, ops={op.name: op for op in ops}, root=str(root_path), kinds=kinds)


def display_path(path: Path) -> str:
    """A path as shown in messages: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
