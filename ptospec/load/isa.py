"""``specs/isa.yaml``: the ISA-wide facts, one builder per section."""

from __future__ import annotations

from pathlib import Path

from ..errors import ExprError, SpecError
from ..expr.ast import Node
from ..expr.functions import VARIANTS
from ..expr.parser import parse_expr
from ..model import (
    DType,
    Enum,
    Family,
    GlobalLayout,
    Isa,
    Layout,
    Profile,
    Rule,
    SeparateIsa,
    StateRegister,
    TileStorage,
    UnimplementedPage,
)
from ..yamlsource import Located, read_yaml
from .names import check_names, check_tile_rule_names, parse
from .pipes import load_pipes
from .problems import DatabaseErrors, Issues
from .schema import schema_errors

_NUMPY_KINDS = {"float": "fV", "signed": "i", "unsigned": "u"}  # ml_dtypes' float types have kind V


def load_isa(path: Path, display: str | None = None) -> Isa:
    """Load and check isa.yaml; raises ``DatabaseErrors`` listing every problem."""
    issues = Issues()
    src = read_yaml(path, display)
    if not isinstance(src.data, dict):
        raise SpecError("isa.yaml must be a mapping", where=src.where(()), rule="schema.type")
    if schema_errors(src, "isa", issues):
        raise DatabaseErrors(issues.items)
    d = src.data
    dtypes = _dtypes(src, d, issues)
    _check_tile_defaults(src, d, issues)
    layouts = _layouts(src, d, issues)
    profiles = _profiles(src, d, issues)
    _check_dtype_profiles(src, dtypes, profiles, issues)
    families = {n: Family(n, v["title"], v["description"]) for n, v in d["families"].items()}
    _check_enum_codes(src, d, issues)
    tile_rules = _well_formedness(src, d, "tile_rules", "t", tuple(profiles), issues)
    global_rules = _well_formedness(src, d, "global_rules", "g", tuple(profiles), issues)
    global_layouts = _global_layouts(src, d, issues)
    pad_fill = _pad_fill(src, d, issues)
    tile_storage = _tile_storage(src, d, issues)
    unimplemented = _unimplemented_pages(src, d.get("unimplemented_pages", []), issues)
    state = _state(src, d, dtypes, issues)
    pipes = load_pipes(src, d, issues)
    compact_modelled = _compact_modes(src, d, issues)
    issues.raise_if_any()
    return Isa(
        compact_modes=dict(d["compact_modes"]["values"]),
        compact_dialect=tuple(d["compact_modes"]["dialect"]),
        compact_modelled=compact_modelled,
        tile_storage=tile_storage,
        upstream=dict(d.get("upstream", {})),
        unimplemented_pages=unimplemented,
        state=state,
        unspecified=tuple((u["page"], u["instruction"], u["reason"]) for u in d.get("unspecified", ())),
        pipes=pipes,
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
        numerics_values=dict(d.get("numerics_values", {})),
        raw=d,
        enums=_enums(d),
    )


def _dtypes(src: Located, d: dict, issues: Issues) -> dict[str, DType]:
    dtypes = {
        name: DType(name, v["cpp"], v["bits"], v["kind"], v["numpy"], tuple(v["profiles"]) if "profiles" in v else None,
                    tuple(v.get("emulated", ())), v.get("per_byte", 1))
        for name, v in d["dtypes"].items()
    }
    for name, dt in dtypes.items():
        problem = _numpy_problem(dt)
        if problem:
            issues.add(src, ("dtypes", name, "numpy"), f"dtype {name}: {problem}", "isa.numpy")
    return dtypes


def _numpy_bits(np_type) -> int:
    """The bits a value of ``np_type`` carries (ml_dtypes' 4-bit floats are stored one per byte)."""
    import ml_dtypes

    try:
        return int(ml_dtypes.finfo(np_type).bits)
    except (TypeError, ValueError):
        return np_type.itemsize * 8


def _numpy_problem(dt: DType) -> str:
    """Why ``dt.numpy`` does not name a NumPy (or ml_dtypes) type of the dtype's width and kind ('' if it does)."""
    from ..expr.numpy_types import numpy_dtype_named

    try:
        np_type = numpy_dtype_named(dt.numpy)
    except (TypeError, ValueError, AttributeError):
        return f"{dt.numpy!r} is not a NumPy or ml_dtypes type name"
    if dt.per_byte > 1 and (dt.bits != 8 or _numpy_bits(np_type) * dt.per_byte != 8):
        return (f"a packed type holds {dt.per_byte} values of 8 // {dt.per_byte} bits in one byte (bits: 8, "
                f"{dt.numpy} has {_numpy_bits(np_type)})")
    if np_type.itemsize * 8 != dt.bits or np_type.kind not in _NUMPY_KINDS[dt.kind] or np_type.fields:
        return (f"NumPy type {dt.numpy} ({np_type.itemsize * 8}-bit, kind {np_type.kind!r}) is not a "
                f"{dt.bits}-bit {dt.kind} type")
    return ""


def _check_tile_defaults(src: Located, d: dict, issues: Issues) -> None:
    groups = {"blayout": d["blayouts"], "slayout": d["slayouts"], "pad": d["pad_values"],
              "compact": d["compact_modes"]["values"]}
    for field, group in groups.items():
        if d["tile_defaults"][field] not in group:
            issues.add(src, ("tile_defaults", field), f"default {field} {d['tile_defaults'][field]!r} is not one of "
                       f"{', '.join(group)}", "isa.tile-defaults")


def _compact_modes(src: Located, d: dict, issues: Issues) -> Node | None:
    """``compact_modes``: the assembler's numbering names modes of ``values``; ``modelled`` is a tile rule's
    expression over ``t``."""
    section = d["compact_modes"]
    for k, mode in enumerate(section["dialect"]):
        if mode not in section["values"]:
            issues.add(src, ("compact_modes", "dialect", k), f"{mode!r} is not one of the compact modes "
                       f"({', '.join(section['values'])})", "isa.compact")
    node = parse(src, ("compact_modes", "modelled"), section["modelled"], issues)
    if node is not None:
        check_tile_rule_names(src, ("compact_modes", "modelled"), node, d, issues)
    return node


def _layouts(src: Located, d: dict, issues: Issues) -> dict[str, Layout]:
    layouts = {n: Layout(n, v["blayout"], v["slayout"], v["text"]) for n, v in d["layouts"].items()}
    for n, lay in layouts.items():
        if lay.blayout not in d["blayouts"] or lay.slayout not in d["slayouts"]:
            issues.add(src, ("layouts", n), f"layout {n} names an unknown blayout/slayout", "isa.layout")
    return layouts


def _profiles(src: Located, d: dict, issues: Issues) -> dict[str, Profile]:
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
    return profiles


def _check_dtype_profiles(src: Located, dtypes: dict[str, DType], profiles: dict[str, Profile],
                          issues: Issues) -> None:
    for name, dt in dtypes.items():
        for p in (*(dt.profiles or ()), *dt.emulated):
            if p not in profiles:
                issues.add(src, ("dtypes", name), f"dtype {name} names unknown profile {p!r}", "isa.profile")


def _check_enum_codes(src: Located, d: dict, issues: Issues) -> None:
    for n, v in d.get("enums", {}).items():
        for value in v.get("codes", {}):
            if value not in v["values"]:
                issues.add(src, ("enums", n, "codes", value), f"code for {value!r}, which is not a value of {n}",
                           "isa.enum")


def _enums(d: dict) -> dict[str, Enum]:
    return {n: Enum(n, v["cpp"], v["asm"], tuple(v["values"]), v["text"], dict(v["values"]),
                    v.get("asm_case") == "lower", v.get("dialect", {}).get("asm", ""),
                    dict(v.get("dialect", {}).get("values", {})), dict(v.get("codes", {})))
            for n, v in d.get("enums", {}).items()}


def _well_formedness(src: Located, d: dict, section: str, var: str, profiles: tuple[str, ...],
                     issues: Issues) -> tuple[Rule, ...]:
    """``tile_rules`` (over a tile ``t``) or ``global_rules`` (over a global view ``g``)."""
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
                check_tile_rule_names(src, (section, i), node, d, issues, var)
        rules.append(
            Rule(
                id=r["id"], kind="check", operands=(var,), allow=(), check=check, check_text=r["check"],
                when=when, when_text=r.get("when", ""), let=(), profiles=profiles, modes=(),
                phase="static", message=r["message"], sources=tuple(r.get("sources", ())), line=src.line((section, i)),
                file=src.file,
            )
        )
    return tuple(rules)


def _global_layouts(src: Located, d: dict, issues: Issues) -> dict[str, GlobalLayout]:
    global_layouts = {}
    for n, v in d["global_layouts"].items():
        tile_map = tuple(parse(src, ("global_layouts", n, "tile_map"), t, issues) for t in v.get("tile_map", ()))
        for node in tile_map:
            if node is not None:
                check_names(src, ("global_layouts", n, "tile_map"), node, {"r", "c", "d0", "d1", "d2", "d3", "d4"},
                            None, issues)
        for k, prof in enumerate(v["profiles"]):
            if prof not in d["profiles"]:
                issues.add(src, ("global_layouts", n, "profiles", k), f"unknown profile {prof!r}", "isa.profile")
        global_layouts[n] = GlobalLayout(n, v["asm"], tuple(v["order"]) if "order" in v else None, v["text"],
                                         tuple(x for x in tile_map if x is not None), tuple(v["profiles"]))
    return global_layouts


def _pad_fill(src: Located, d: dict, issues: Issues) -> dict:
    pad_fill = {}
    for pad, text in d["pad_fill"].items():
        if pad not in d["pad_values"]:
            issues.add(src, ("pad_fill", pad), f"unknown pad value {pad!r}", "isa.pad")
        node = parse(src, ("pad_fill", pad), text, issues)
        if node is not None:
            pad_fill[pad] = node
    return pad_fill


def _tile_storage(src, d: dict, issues: Issues) -> TileStorage | None:
    """``tile_storage`` of isa.yaml: the box expressions read only f, s, w and the slayouts; every (blayout,
    slayout) pair has exactly one offset expression, over r, c, rows, cols, br, bc, w."""
    ts = d["tile_storage"]
    enums = set(d["slayouts"]) | set(d["blayouts"])
    box = {}
    for key in ("box_rows", "box_cols"):
        node = parse(src, ("tile_storage", key), ts[key], issues)
        if node is not None:
            check_names(src, ("tile_storage", key), node, {"f", "s", "w"} | enums, None, issues)
            box[key] = node
    offsets: dict = {}
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
        node = parse(src, (*where, "offset"), entry["offset"], issues)
        if node is not None:
            check_names(src, (*where, "offset"), node, {"r", "c", "rows", "cols", "br", "bc", "w"}, None, issues)
            offsets[pair], names[pair], texts[pair] = node, entry["name"], entry["offset"]
    missing = [(b, s) for b in d["blayouts"] for s in d["slayouts"] if (b, s) not in offsets]
    if missing and not issues.items:
        issues.add(src, ("tile_storage", "offsets"), f"no storage offset for {missing}", "isa.tile-storage")
    if len(box) != 2 or missing:
        return None
    return TileStorage(box["box_rows"], box["box_cols"], offsets, names, texts)


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


def _state(src: Located, d: dict, dtypes: dict, issues: Issues) -> dict[str, StateRegister]:
    state = {n: StateRegister(n, v["text"], dict(v["fields"])) for n, v in d.get("state", {}).items()}
    for n in state:
        if n == "profile" or n in dtypes or n in d.get("enums", {}):
            issues.add(src, ("state", n), f"state register {n!r} would hide another name", "isa.state")
    return state
